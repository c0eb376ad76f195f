/**
 * Types for the two files inside undici that functions/shared/http-pool.ts imports instead of the
 * package entry. undici ships no declarations beside them; these borrow the package's own public
 * types for the same objects, so a caller is checked against undici's documented API.
 */
declare module 'undici/lib/dispatcher/agent.js' {
  import type { Agent } from 'undici';

  const AgentClass: typeof Agent;
  export default AgentClass;
}

declare module 'undici/lib/api/api-request.js' {
  import type { Dispatcher } from 'undici';

  /** Dispatcher.prototype.request as the package entry installs it: `this` is the dispatcher. */
  function request(this: Dispatcher, options: Dispatcher.RequestOptions): Promise<Dispatcher.ResponseData>;
  export default request;
}
