/**
 * A memo of a pure function's answers with a bound on its entries: when full it is emptied, so
 * each entry costs O(1) and a miss costs one more computation. For answers that depend on the key
 * alone (a zone name's validity, a text's cut points, a CA's TLS context) and keys that may come
 * from outside (audience items, provider text), which must not grow it without end. Written here
 * rather than taken from npm: `lru-cache` and its peers keep recency order for every hit, which
 * these hot paths do not need, and the alert function's bundle should not carry them for that.
 */
export class BoundedCache<K, V> {
  readonly #entries = new Map<K, V>();
  readonly #limit: number;

  /** @param limit entries kept before the cache empties itself (at least 1) */
  constructor(limit: number) {
    if (!Number.isInteger(limit) || limit < 1) throw new RangeError(`limit must be a whole number ≥ 1, got ${limit}`);
    this.#limit = limit;
  }

  /** The answer for `key`: remembered, or `compute(key)` remembered now (a throw remembers nothing). */
  get(key: K, compute: (key: K) => V): V {
    const known = this.#entries.get(key);
    // One lookup for a hit; `has` only for an answer that is `undefined` itself.
    if (known !== undefined || this.#entries.has(key)) return known as V;
    const value = compute(key);
    if (this.#entries.size >= this.#limit) this.#entries.clear();
    this.#entries.set(key, value);
    return value;
  }

  /** How many answers it holds. */
  get size(): number {
    return this.#entries.size;
  }

  /** Forgets every answer. */
  clear(): void {
    this.#entries.clear();
  }
}
