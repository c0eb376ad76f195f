/**
 * undici's keep-alive connection pool (`Agent`) and its `request`, loaded without undici's package
 * entry, with the target-address policy checked at connect time. Owns two guarantees:
 *
 * - what a caller gets here is undici's own `Agent` class (a subclass that only sets how host
 *   names are resolved) and undici's own request code (the same files, so the same timeouts,
 *   errors and body handling), nothing re-implemented;
 * - a host name that looks public and resolves to an internal address (loopback, link-local with
 *   the cloud metadata service, private…) is refused before anything is sent to it, on the very
 *   answer the connection would use (functions/shared/network-targets.ts `publicAddressLookup`).
 *   Every pool made here checks; `allowInternalTargets: true` turns the check off for one pool, for
 *   local receivers and tests. The provider client and the Slack relay both build their pool here,
 *   and neither handler sets that option.
 *
 * Why not `import { Agent, request } from 'undici'`: the package entry (undici/index.js) loads all
 * of undici at import, whatever the caller uses: fetch, WebSocket, EventSource, the cache and
 * cookie APIs (which read `globalThis.Headers`, and so also load the copy of undici that Node
 * bundles), the mock agents, the cache stores and every interceptor. In a Lambda bundle that is
 * about 550 KiB to compile and run at every cold start, against the ~300 KiB an Agent and request
 * need: the alert function's bundle imported in about 35 ms less (of ~200 ms) without it, in fresh
 * processes interleaved with the old bundle (bench/cold-start-only.ts measures the same way). The
 * price is two paths inside the package, which has no `exports` map to close them: a release that
 * moves them fails the build and test/unit/cold-start-http-pool.test.ts loudly, not a run.
 */
import type { LookupFunction } from 'node:net';
import type { Dispatcher, Agent as PackageAgent } from 'undici';
import dispatchRequest from 'undici/lib/api/api-request.js';
import UndiciAgent from 'undici/lib/dispatcher/agent.js';
import { publicAddressLookup } from './network-targets.ts';

/** undici's Agent options, and whether this pool may connect to internal addresses. */
export type PoolOptions = PackageAgent.Options & {
  /**
   * Lets a public-looking host name resolve to an internal address (the local sandbox's
   * receivers, tests). Never set in a Lambda function.
   */
  readonly allowInternalTargets?: boolean;
};

/**
 * undici's Agent whose connections resolve host names through the target-address check. A
 * `connect.lookup` given here is the resolver the check wraps (tests answer names with it).
 */
export class Agent extends UndiciAgent {
  constructor(options: PoolOptions = {}) {
    const { allowInternalTargets, connect, ...rest } = options;
    if (typeof connect === 'function') {
      throw new TypeError(
        'http-pool Agent: pass connect options, not a connector (the address check needs its lookup)',
      );
    }
    const lookup = publicAddressLookup({
      allowInternal: allowInternalTargets,
      lookup: (connect as { lookup?: LookupFunction } | undefined)?.lookup,
    });
    super({ ...rest, connect: { ...connect, lookup } });
  }
}

/** undici's request options, with the dispatcher every call must name (there is no global one here). */
export type PoolRequestOptions = Omit<Dispatcher.RequestOptions, 'origin' | 'path' | 'method'> &
  Partial<Pick<Dispatcher.RequestOptions, 'method'>> & { readonly dispatcher: Dispatcher };

/**
 * undici's `request(url, options)` with the dispatcher in `options`, as the package entry's
 * `request` calls it: the URL's origin and path (with its query) become the request's, the method
 * defaults as there (`PUT` with a body, `GET` without).
 */
export function request(url: string | URL, options: PoolRequestOptions): Promise<Dispatcher.ResponseData> {
  const { dispatcher, ...rest } = options;
  const target = new URL(url);
  return dispatchRequest.call(dispatcher, {
    ...rest,
    origin: target.origin,
    path: target.search ? `${target.pathname}${target.search}` : target.pathname,
    method: rest.method || (rest.body ? 'PUT' : 'GET'),
  });
}
