/**
 * A what-if for the cold-start benchmark (bench/run.ts): the alert handler bundled with `undici`
 * replaced by this stub, to measure how much of the handler's import time undici accounts for,
 * i.e. what replacing it with `node:https` (already loaded by the AWS SDK) would save. The stub
 * only has to survive the import: nothing calls it.
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
