/**
 * A what-if for the cold-start benchmark: a bundle with undici replaced by this stub, to measure
 * how much of an import undici accounts for. The alert function reaches undici only through
 * functions/shared/http-pool.ts (undici's Agent and request without the package entry), so that is
 * the module to alias to this file (`{ '#shared/http-pool': './bench/cold-start-undici-stub.ts' }`);
 * aliasing `undici` itself no longer resolves, since esbuild maps `undici/lib/...` onto this file's
 * path too. Since undici is part of the baseline (bench/cold-start-bare.ts), stubbing it in the
 * handler alone would flatter the ratio; it is for attribution only. The stub only has to survive
 * the import: nothing calls it.
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
