/**
 * A what-if for the cold-start benchmark: a bundle with `undici` replaced by this stub, to measure
 * how much of an import undici accounts for. Since undici is part of the baseline
 * (bench/cold-start-bare.ts), stubbing it in the handler alone would flatter the ratio; it is
 * for attribution only. The stub only has to survive the import: nothing calls it.
 */

/** Stands in for undici's connection pool; the provider client creates one at import. */
export class Agent {
  /** Nothing to close. */
  async close(): Promise<void> {}
}

/** Stands in for undici's `request`; never called in the benchmark. */
export function request(): never {
  throw new Error('undici stub: not for real requests');
}
