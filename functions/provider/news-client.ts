/**
 * The News Lookup API client (DESIGN section 2): `POST {baseUrl}/news` over HTTPS with
 * `X-API-KEY`, paged by page number or cursor, read through the response mapping.
 *
 * What the provider does not document is handled defensively: transient failures (408, 429, 5xx,
 * network errors, timeouts, truncated JSON, an error reported in a 200 body) are retried with
 * exponential backoff and full jitter, honouring Retry-After; client faults (400, 403, other 4xx)
 * are not. A 401 re-reads the key once, since Secrets Manager rotation can leave a warm Lambda
 * with a stale cached key. The API key never reaches an error message or a log line, even when
 * the provider echoes it back: every text taken from a response is redacted, and every error the
 * client attaches as a `cause` is a sanitized copy (functions/shared/secret-redaction.ts), never
 * the HTTP library's own object (undici's HTTPParserError keeps the raw bytes in `data`).
 *
 * Hostile or broken replies end in a typed ProviderError, never in a crash or a stall: bodies are
 * read with a size cap and a whole-response deadline besides the per-chunk read timeout; samples
 * are rendered with bounded depth; an absurd total is read page by page instead of trusted; and a
 * page on which no item can be read is reported as `unreadable` (a poison page the run parks)
 * once another page shows the mapping fits, and fails the read loudly when none does.
 */

import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { setTimeout as delay } from 'node:timers/promises';
import { createSecureContext, rootCertificates, type SecureContext } from 'node:tls';
import type { Dispatcher } from 'undici';
import { BoundedCache } from '#core/bounded-cache';
import { isProviderDate, previousDate, providerDate } from '#core/calendar';
import {
  ConfigError,
  isRefusedPageNumber,
  PageCapError,
  ProviderAuthError,
  ProviderError,
  ProviderResponseError,
  ProviderStalledError,
} from '#core/errors';
import {
  type ArticlePage,
  type Log,
  type NewsSource,
  type PagePosition,
  type PageRequest,
  type PagesOptions,
  type ProviderDateRange,
  type SecretSource,
  silentLog,
} from '#core/ports';
import { errorCodeOf } from '#shared/error-code';
import { Agent, request } from '#shared/http-pool';
import { exponentialBackoff, parseRetryAfter } from '#shared/retry';
import { registerSecret, sanitizeError } from '#shared/secret-redaction';
import { type ProviderConfig, providerEnvironment } from './config.ts';
import { findBodyError, type MappedPage, mapPage, redactSecrets, sampleOf } from './response-mapping.ts';

/** Dependencies of the client; everything but `config` and `secrets` has a production default. */
export interface NewsLookupClientOptions {
  readonly config: ProviderConfig;
  readonly secrets: SecretSource;
  readonly log?: Log;
  /**
   * HTTP dispatcher to use instead of the client's own keep-alive Agent. The caller then owns its
   * TLS settings (`caPem` and the connect timeout are not applied to it) and its lifetime.
   */
  readonly dispatcher?: Dispatcher;
  /** Waits between attempts; rejects when `signal` aborts. Injected by tests to observe backoff. */
  readonly sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** Uniform in [0, 1), for jitter. */
  readonly random?: () => number;
  /** Current time in epoch ms, for Retry-After given as an HTTP date. */
  readonly now?: () => number;
}

const defaultSleep = async (ms: number, signal?: AbortSignal): Promise<void> => {
  await delay(ms, undefined, signal ? { signal } : undefined);
};

/** Certificate verification failures: retrying cannot help, and the fix is configuration. */
const tlsErrorCodes = new Set([
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'CERT_UNTRUSTED',
  'CERT_REVOKED',
  'CERT_SIGNATURE_FAILURE',
  'ERR_TLS_CERT_ALTNAME_INVALID',
  'HOSTNAME_MISMATCH',
]);

/** Unreadable pages read before any readable article after which the mapping is taken to be wrong. */
const maxUnprovenUnreadablePages = 3;

/** Unreadable pages in a row that read alike and end a read without a total (see #pagesUntilExhausted). */
const maxAlikeUnreadablePages = 10;

/** How many of the newest days a read of nothing but unreadable pages looks at for a readable article. */
const mappingProbeDays = 3;

const retryableStatus = (status: number): boolean => status === 408 || status === 429 || status >= 500;

/** Where in a run a request belongs, for messages and logs. */
interface RequestContext {
  readonly range: string;
  readonly page: number;
}

/** A failed attempt that a later attempt may fix. */
interface RetryableFailure {
  readonly kind: 'retry';
  readonly description: string;
  readonly status?: number | undefined;
  readonly retryAfterMs?: number | undefined;
  readonly cause?: unknown;
}

/** The response body was larger than `maxResponseBytes`. */
class ResponseTooLarge extends Error {
  constructor(readonly limit: number) {
    super(`response body over ${limit} bytes`);
    this.name = 'ResponseTooLarge';
  }
}

type AttemptOutcome =
  | { readonly kind: 'ok'; readonly body: unknown }
  | { readonly kind: 'unauthorized'; readonly description: string }
  | RetryableFailure;

interface FetchedPage {
  readonly pageNumber: number;
  readonly mapped: MappedPage;
  /** Numbered paging: the page size the request asked for. */
  readonly size?: number;
}

const itemCount = (page: FetchedPage): number => page.mapped.articles.length + page.mapped.skipped.length;

/** Secure contexts by extra CA (a process has one or two: the local simulator's). */
const secureContexts = new BoundedCache<string, SecureContext>(8);

/**
 * A TLS context that trusts the system roots and `caPem` (`ca` replaces the default trust store, so
 * the roots are passed along; verification always stays on). One per CA for the process, handed
 * to every connection: given as `ca`, each new connection built its own context from the ~140
 * roots, about 20 ms of CPU each. Exported for its test.
 * @internal
 */
export const trustingAlso = (caPem: string): SecureContext =>
  secureContexts.get(caPem, (pem) => createSecureContext({ ca: [...rootCertificates, pem] }));

/**
 * The provider client behind `NewsSource`. One instance holds one keep-alive connection pool;
 * create it once per execution environment and reuse it across invocations.
 */
export class NewsLookupClient implements NewsSource {
  readonly #config: ProviderConfig;
  readonly #secrets: SecretSource;
  readonly #log: Log;
  readonly #dispatcher: Dispatcher;
  readonly #ownsDispatcher: boolean;
  readonly #sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  readonly #random: () => number;
  readonly #now: () => number;
  readonly #endpoint: string;
  /** Every key this client has used, so a provider echoing an old key is redacted too. */
  readonly #knownKeys = new Set<string>();
  /**
   * Whether the response mapping has read at least one article in this execution environment:
   * then a page on which nothing can be read is poison data, not a wrong mapping.
   */
  #mappingFits = false;
  /** Whether the warning about timestamps without an offset was logged (once per environment). */
  #warnedZoneless = false;
  /** The key read {@link prepare} started; the next request takes it (undefined: it failed). */
  #prepared: Promise<string | undefined> | undefined;

  constructor(options: NewsLookupClientOptions) {
    const { config } = options;
    this.#config = config;
    this.#secrets = options.secrets;
    this.#log = options.log ?? silentLog;
    this.#sleep = options.sleep ?? defaultSleep;
    this.#random = options.random ?? Math.random;
    this.#now = options.now ?? Date.now;
    this.#endpoint = `${config.baseUrl.replace(/\/+$/, '')}/news`;
    this.#ownsDispatcher = options.dispatcher === undefined;
    this.#dispatcher =
      options.dispatcher ??
      new Agent({
        connect: {
          timeout: config.connectTimeoutMs,
          ...(config.caPem ? { secureContext: trustingAlso(config.caPem) } : {}),
        },
        headersTimeout: config.readTimeoutMs,
        bodyTimeout: config.readTimeoutMs,
        connections: config.pageConcurrency,
      });
  }

  /** Closes the client's own connection pool (not an injected dispatcher). */
  async close(): Promise<void> {
    if (this.#ownsDispatcher) await this.#dispatcher.close();
  }

  /**
   * Starts reading the API key, so the run's first request does not wait for Secrets Manager after
   * the run's own reads. That request takes the key; a failed read is made again there, where its
   * error is reported. Each call replaces the last, so a run never takes an earlier run's read.
   */
  prepare(): void {
    this.#prepared = this.#secrets.apiKey().then(
      (key) => key,
      () => undefined,
    );
  }

  /**
   * Resolves when undici next writes a request to this client's provider: its
   * `undici:client:sendHeaders` diagnostics message, published just before the request's headers
   * and body are written to the socket in the same synchronous step, so what runs on the resolved
   * promise runs after they are written. An injected dispatcher that sends nothing (MockAgent)
   * never resolves it; `signal` ends the wait.
   */
  requestSent(signal: AbortSignal): Promise<void> {
    const origin = new URL(this.#endpoint).origin;
    return new Promise((resolve, reject) => {
      if (signal.aborted) {
        reject(signal.reason);
        return;
      }
      const onSent = (message: unknown) => {
        if (String((message as { request?: { origin?: unknown } }).request?.origin) !== origin) return;
        stop();
        resolve();
      };
      const onAbort = () => {
        stop();
        reject(signal.reason);
      };
      const stop = () => {
        unsubscribe('undici:client:sendHeaders', onSent);
        signal.removeEventListener('abort', onAbort);
      };
      subscribe('undici:client:sendHeaders', onSent);
      signal.addEventListener('abort', onAbort, { once: true });
    });
  }

  /**
   * Every article published on the provider dates `range.from`..`range.to`, page by page, in
   * order and without duplicates (by article key) within this call.
   *
   * Pages on which no item can be read come with `unreadable` set once the mapping has read an
   * article; if no page of the range (and no earlier read) has a readable article, the read
   * fails with ProviderResponseError instead.
   *
   * With `options.sequential` pages are fetched one at a time (the caller may stop early); with
   * `options.resumeFrom` the read starts at that page or cursor and goes on one page at a time
   * until the provider has nothing more (an empty page, or one with no article not seen already).
   *
   * @throws ProviderError (or a subclass) when the range cannot be read completely;
   *   ProviderStalledError when `options.signal` aborts while the provider was failing or still
   *   dripping a response; otherwise the signal's reason when it aborts; RangeError for a
   *   malformed range
   */
  async *pages(range: ProviderDateRange, options: PagesOptions = {}): AsyncGenerator<ArticlePage> {
    if (!isProviderDate(range.from) || !isProviderDate(range.to) || range.from > range.to) {
      throw new RangeError(`invalid provider date range ${range.from}..${range.to} (YYYY-MM-DD, from <= to)`);
    }
    const external = options.signal;
    external?.throwIfAborted();
    // Aborted when the caller stops early or a page fails, so no request outlives the iteration.
    const stop = new AbortController();
    const signal = external ? AbortSignal.any([external, stop.signal]) : stop.signal;
    const seen = new Set<string>();
    const pagination = this.#config.pagination;
    try {
      const resume = options.resumeFrom;
      const pages =
        pagination.method === 'CURSOR'
          ? this.#cursorPages(range, pagination, seen, signal, resume)
          : resume !== undefined
            ? this.#resumedPages(range, resume, seen, signal)
            : this.#numberedPages(range, seen, signal, options.sequential === true);
      yield* this.#withUnreadablePages(pages, range, signal);
    } catch (error) {
      // A stalled provider is a failure even though the deadline cut it; anything else that ends
      // an aborted read is the abort.
      if (external?.aborted && !(error instanceof ProviderStalledError)) throw external.reason;
      throw error;
    } finally {
      stop.abort();
    }
  }

  // --- Paging -------------------------------------------------------------------------------------

  /**
   * Passes pages through, deciding what an unreadable page is. Once the mapping has read an
   * article (on any page, in this read or an earlier one), an unreadable page is poison data:
   * it is handed on with `unreadable` set and the read goes on. Until then it is held back while
   * the rest of the range is read; if the range ends without a single readable article, and the
   * newest days ({@link proveMapping}) have none either, the mapping is what is wrong and the read
   * fails loudly with the first such page's reasons.
   */
  async *#withUnreadablePages(
    pages: AsyncGenerator<ArticlePage>,
    range: ProviderDateRange,
    signal: AbortSignal,
  ): AsyncGenerator<ArticlePage> {
    const held: ArticlePage[] = [];
    const mappingDoesNotFit = () => {
      const [first] = held;
      const where =
        held.length === 1 ? `page ${first?.pageNumber}` : `pages ${held.map((p) => p.pageNumber).join(', ')}`;
      return new ProviderResponseError(
        `no item on ${where} of ${range.from}..${range.to} could be read and no page had a readable article, so the response mapping does not fit this provider (set ${providerEnvironment.mapping}): page ${first?.pageNumber}: ${first?.unreadable}`,
      );
    };
    // A re-read in order (pages shifted) meets the same unreadable page again: report it once.
    const reported = new Set<string>();
    for await (const page of pages) {
      if (page.unreadable !== undefined) {
        const id = `${page.pageNumber}\n${page.unreadable}`;
        if (reported.has(id)) continue;
        reported.add(id);
      }
      if (page.unreadable !== undefined && !this.#mappingFits) {
        held.push(page);
        // Several pages in a row and not one readable item: no need to read to the cap to know.
        if (held.length < maxUnprovenUnreadablePages) continue;
        if (!(await this.#proveMapping(range, signal))) throw mappingDoesNotFit();
        // Proven by a newer day: the held pages (this one among them) are poison, handed on once.
        yield* held.splice(0);
        continue;
      }
      // Only a readable article proves the mapping; an empty page proves nothing.
      if (held.length > 0 && this.#mappingFits) yield* held.splice(0);
      yield page;
    }
    if (held.length === 0) return;
    if (!this.#mappingFits && !(await this.#proveMapping(range, signal))) throw mappingDoesNotFit();
    yield* held;
  }

  /**
   * Whether the mapping reads the provider's newest days: the first page of each day after `range`,
   * today first (the provider's date now), at most {@link mappingProbeDays} of them. Asked only when
   * nothing of `range` could be read and nothing read before proved the mapping: a cold execution
   * environment whose window starts on a day of poison only (yesterday) would otherwise fail every
   * run, and never read today, which proves the mapping. Their articles are left to the reads of
   * their own days; a failed request proves nothing.
   */
  async #proveMapping(range: ProviderDateRange, signal: AbortSignal): Promise<boolean> {
    let day = providerDate(this.#now(), this.#config.timeZone);
    for (let tries = 0; tries < mappingProbeDays && day > range.to && !this.#mappingFits; tries++) {
      const days = { from: day, to: day };
      const pagination = this.#config.pagination;
      try {
        if (pagination.method === 'CURSOR') await this.#cursorPage(days, pagination, undefined, 1, signal);
        else await this.#numberedPage(days, 1, signal);
      } catch (error) {
        signal.throwIfAborted();
        this.#log.warn('could not read a newer day to check the response mapping', {
          day,
          error: this.#sanitize(error)?.message,
        });
        return false;
      }
      day = previousDate(day);
    }
    return this.#mappingFits;
  }

  /** A resumed numbered read: from the given page on, until the provider has nothing more. */
  async *#resumedPages(
    range: ProviderDateRange,
    resume: PagePosition,
    seen: Set<string>,
    signal: AbortSignal,
  ): AsyncGenerator<ArticlePage> {
    if (!('page' in resume) || !Number.isSafeInteger(resume.page) || resume.page < 1) {
      throw new RangeError('a numbered read resumes from a page number (>= 1), not a cursor');
    }
    // Page by page until an empty page or one with nothing new: a short page proves nothing here,
    // since the first page (which detects a provider capping `size`) is not read.
    // The stored page must still be there: a refusal of it is the caller's to handle (it reads the
    // day from page 1 then, functions/core/alert-run.ts), never the end of the day.
    yield* this.#pagesUntilExhausted(range, resume.page, seen, signal, { firstMayBePastEnd: false });
  }

  async *#numberedPages(
    range: ProviderDateRange,
    seen: Set<string>,
    signal: AbortSignal,
    sequential: boolean,
  ): AsyncGenerator<ArticlePage> {
    const size = this.#config.pageSize;
    const first = await this.#numberedPage(range, 1, signal);
    const firstCount = itemCount(first);
    const total = first.mapped.totalCount;

    let pageSize = size;
    if (total !== undefined && firstCount > 0 && firstCount < size && total > firstCount) {
      // The provider documents no maximum page size; one that silently caps it would otherwise
      // look like a short last page and end the read after page 1.
      pageSize = firstCount;
      this.#log.warn('news API returned fewer articles than requested although more exist; using that as page size', {
        requestedSize: size,
        returned: firstCount,
        totalCount: total,
        fix: `set ${providerEnvironment.pageSize}=${firstCount}`,
      });
    }
    if (total === undefined) {
      yield this.#emit(first, seen);
      if (firstCount === 0) return;
      // Without a total, a short page proves nothing: a provider may cap `size` silently. Read on
      // until a page is empty or brings no article not seen already (one request more than the
      // pages themselves, and safe against a provider that repeats its last page).
      yield* this.#pagesUntilExhausted(range, 2, seen, signal, { firstMayBePastEnd: true });
      return;
    }
    if (firstCount < pageSize) {
      yield this.#emit(first, seen);
      return;
    }
    if (sequential) {
      // The caller expects to stop early: a window of requests ahead would mostly be wasted.
      yield this.#emit(first, seen);
      yield* this.#sequentialPages(range, 2, pageSize, seen, signal, total);
      return;
    }
    // At least 1: a total smaller than a full first page is the provider's inconsistency, not an end.
    const lastPage = Math.max(1, Math.ceil(total / pageSize));
    if (lastPage > this.#config.maxPages) {
      // A total beyond the page cap is more often a provider's placeholder (10^12, "unlimited")
      // than a real day: trusting it would fail every run forever. Read page by page as if no
      // total were given; a day that really is that long still ends at the cap with PageCapError.
      this.#log.warn('news API reported a total beyond the page cap; ignoring it and reading page by page', {
        range: `${range.from}..${range.to}`,
        totalCount: total,
        maxPages: this.#config.maxPages,
      });
      yield this.#emit(first, seen);
      yield* this.#pagesUntilExhausted(range, 2, seen, signal, { firstMayBePastEnd: true, reportedTotal: total });
      return;
    }
    // Started before page 1 is handed over, so the next pages download while the caller works.
    const window = this.#pageWindow(range, 2, lastPage, signal);
    yield this.#emit(first, seen);
    let shifted = false;
    let outOfOrder = false;
    let previousTotal = total;
    let lastCount = firstCount;
    for (let page = await window.take(); page !== undefined; page = await window.take()) {
      const pageTotal = page.mapped.totalCount;
      if (pageTotal !== total) shifted = true;
      // Totals only grow as articles arrive. A page showing a smaller total than the page before
      // it was fetched earlier, at an older state: the two were read out of order.
      if (pageTotal !== undefined && previousTotal !== undefined && pageTotal < previousTotal) outOfOrder = true;
      previousTotal = pageTotal ?? previousTotal;
      lastCount = itemCount(page);
      yield this.#emit(page, seen);
    }
    if (outOfOrder) {
      // A page fetched before the result set changed next to a page fetched after it can leave a
      // gap between them. Reading in ascending order is immune to articles arriving in front (they
      // only repeat items, which de-duplication drops), so one sequential pass closes any gap.
      this.#log.warn('the result set changed while pages were fetched concurrently; reading it again in order', {
        range: `${range.from}..${range.to}`,
      });
      yield* this.#sequentialPages(range, 1, pageSize, seen, signal, previousTotal ?? total);
      return;
    }
    // A full last page or a grown total means articles were pushed to later pages while they were
    // read in order; read on until a short page so nothing is missed.
    if (shifted || lastCount >= pageSize) {
      yield* this.#sequentialPages(range, lastPage + 1, pageSize, seen, signal, previousTotal ?? total);
    }
  }

  /** Pages from `from` on until one is empty or holds only articles already seen. */
  async *#pagesUntilExhausted(
    range: ProviderDateRange,
    from: number,
    seen: Set<string>,
    signal: AbortSignal,
    options: { readonly firstMayBePastEnd: boolean; readonly reportedTotal?: number },
  ): AsyncGenerator<ArticlePage> {
    const { reportedTotal } = options;
    let previousUnreadable: string | undefined;
    let repeats = 0;
    for (let pageNumber = from; ; pageNumber++) {
      if (pageNumber > this.#config.maxPages) throw this.#pageCapError(range, this.#config.pageSize, reportedTotal);
      // Without a count to trust, any page after page 1 may lie past the end, but for the page a
      // resumed read starts at.
      const page =
        pageNumber === from && !options.firstMayBePastEnd
          ? await this.#numberedPage(range, pageNumber, signal)
          : await this.#pageOrEnd(range, pageNumber, signal, 'no count');
      if (page === undefined) return;
      const emitted = this.#emit(page, seen);
      yield emitted;
      if (itemCount(page) === 0) return;
      // A page with no article not seen already ends the read, even if some of its items were
      // unreadable. Unreadable pages have no articles to tell apart: a run of them that read alike
      // ends it only when long (a provider that ignores `page` would otherwise be read to the page
      // cap), since a few alike are as likely withheld items ahead of readable pages.
      if (emitted.unreadable === undefined) {
        if (emitted.articles.length === 0) return;
        repeats = 0;
      } else {
        repeats = emitted.unreadable === previousUnreadable ? repeats + 1 : 0;
        if (repeats >= maxAlikeUnreadablePages - 1) return;
      }
      previousUnreadable = emitted.unreadable;
    }
  }

  /**
   * Pages from `from` on, one at a time, until the listing ends:
   * - an empty page;
   * - a short page, unless the count (the page's own, else the read's first) says more follow:
   *   the provider left items out of it, and the rest of the listing still follows;
   * - a page with nothing new (no article not seen already, or only unreadable items) that begins
   *   past the end of the listing by its own count: the provider answers pages past the end with
   *   its last one;
   * - without a count of its own, such a page only when it repeats the page before it exactly
   *   (the same articles in the same order, or the same unreadable items) and begins past the end
   *   by the read's first count; with no count at all, when it repeats the page before it exactly.
   * Anywhere else a page with nothing new is articles that arrived in front pushing seen ones
   * down, or an in-order re-read of pages already read, and the read goes on: a count that is
   * stale or too small cannot end it before the page it counts to, and a provider that fits none
   * of this ends at the page cap, loudly, rather than with articles left unread. A count beyond
   * the page cap counts as none (a placeholder, see #numberedPages).
   */
  async *#sequentialPages(
    range: ProviderDateRange,
    from: number,
    pageSize: number,
    seen: Set<string>,
    signal: AbortSignal,
    total: number | undefined,
  ): AsyncGenerator<ArticlePage> {
    const usable = (count: number | undefined) =>
      count === undefined || count > this.#config.maxPages * pageSize ? undefined : count;
    const first = usable(total);
    let previous: { keys: string; unreadable: string | undefined } | undefined;
    // The listing's latest count (the last page's own, else the read's first).
    let latest = first;
    for (let pageNumber = from; ; pageNumber++) {
      if (pageNumber > this.#config.maxPages) throw this.#pageCapError(range, pageSize, total);
      const pastEnd =
        latest === undefined
          ? pageNumber > 1 && 'no count'
          : (pageNumber - 1) * pageSize >= latest && `past the ${latest} articles the provider counted`;
      const page =
        pastEnd === false
          ? await this.#numberedPage(range, pageNumber, signal)
          : await this.#pageOrEnd(range, pageNumber, signal, pastEnd);
      if (page === undefined) return;
      const emitted = this.#emit(page, seen);
      yield emitted;
      const items = itemCount(page);
      if (items === 0) return;
      const own = usable(page.mapped.totalCount);
      const count = own ?? first;
      latest = count;
      if (items < pageSize && (count === undefined || pageNumber * pageSize >= count)) return;
      const beyond = (end: number | undefined) => end !== undefined && (pageNumber - 1) * pageSize >= end;
      const current = {
        keys: page.mapped.articles.map((article) => article.key).join('\n'),
        unreadable: emitted.unreadable,
      };
      const repeat =
        previous !== undefined &&
        (current.unreadable === undefined
          ? current.keys !== '' && current.keys === previous.keys
          : current.unreadable === previous.unreadable && first !== undefined);
      previous = current;
      if (emitted.articles.length > 0) continue;
      if (beyond(own)) return;
      if (own === undefined && repeat && (first === undefined || beyond(first))) return;
    }
  }

  /**
   * Starts fetching pages `from`..`to` with at most `pageConcurrency` requests in flight; `take`
   * hands them over in page order. A new request starts only when a page is taken, so memory stays
   * bounded by the window as well.
   */
  #pageWindow(
    range: ProviderDateRange,
    from: number,
    to: number,
    signal: AbortSignal,
  ): { take(): Promise<FetchedPage | undefined> } {
    const inFlight: Promise<FetchedPage>[] = [];
    let next = from;
    const fill = () => {
      while (next <= to && inFlight.length < this.#config.pageConcurrency) {
        const pending = this.#numberedPage(range, next++, signal);
        // Awaited later, in order; until then a rejection must not count as unhandled.
        pending.catch(() => {});
        inFlight.push(pending);
      }
    };
    fill();
    return {
      take: async () => {
        const pending = inFlight.shift();
        if (pending === undefined) return undefined;
        const page = await pending;
        fill();
        return page;
      },
    };
  }

  /** One cursor-paged page of `range`: the first without `cursor`. `pageNumber` only names it in errors. */
  #cursorPage(
    range: ProviderDateRange,
    pagination: Extract<ProviderConfig['pagination'], { method: 'CURSOR' }>,
    cursor: string | undefined,
    pageNumber: number,
    signal: AbortSignal,
  ): Promise<FetchedPage> {
    const body: Record<string, unknown> = {
      paginationMethod: pagination.methodValue,
      publishedAtStart: range.from,
      publishedAtEnd: range.to,
      size: this.#config.pageSize,
    };
    if (cursor !== undefined) body[pagination.cursorField] = cursor;
    return this.#fetchPage(body, { range: `${range.from}..${range.to}`, page: pageNumber }, signal);
  }

  async *#cursorPages(
    range: ProviderDateRange,
    pagination: Extract<ProviderConfig['pagination'], { method: 'CURSOR' }>,
    seen: Set<string>,
    signal: AbortSignal,
    resume: PagePosition | undefined,
  ): AsyncGenerator<ArticlePage> {
    if (resume !== undefined && !('cursor' in resume)) {
      throw new RangeError('a cursor read resumes from a cursor, not a page number');
    }
    const usedCursors = new Set<string>();
    let cursor: string | undefined = resume?.cursor;
    for (let pageNumber = 1; ; pageNumber++) {
      if (pageNumber > this.#config.maxPages) throw this.#pageCapError(range, this.#config.pageSize);
      const page = await this.#cursorPage(range, pagination, cursor, pageNumber, signal);
      yield this.#emit(page, seen, cursor);
      const nextCursor = page.mapped.nextCursor;
      if (itemCount(page) === 0 || nextCursor === undefined) return;
      if (usedCursors.has(nextCursor)) {
        // A provider that hands out a cursor again would keep this loop going until the page cap.
        throw new ProviderResponseError(
          `the provider returned a cursor that was already used (page ${pageNumber} of ${range.from}..${range.to}); the cursor mapping ("nextCursor") may point at the wrong field`,
        );
      }
      if (cursor !== undefined) usedCursors.add(cursor);
      usedCursors.add(nextCursor);
      cursor = nextCursor;
    }
  }

  async #numberedPage(
    range: ProviderDateRange,
    pageNumber: number,
    signal: AbortSignal,
    size = this.#config.pageSize,
  ): Promise<FetchedPage> {
    const body = {
      paginationMethod: 'PAGE',
      publishedAtStart: range.from,
      publishedAtEnd: range.to,
      page: pageNumber,
      size,
    };
    const page = await this.#fetchPage(body, { range: `${range.from}..${range.to}`, page: pageNumber }, signal);
    return { ...page, size };
  }

  /**
   * A page that may lie past the end of the listing (`why`: what says so), or undefined when the
   * provider refuses it as one (HTTP 400, 404, 416 or 422). The interface does not say what a page
   * past the end gets: many providers answer an empty page, many refuse the page number. The read
   * asks for one when a full last page could be followed by more (the day grew while it was read)
   * and, without a count, to find the end at all; a refusal there ending the day's read instead of
   * failing it means a day whose articles fill their last page exactly no longer stops the run.
   * A refusal of a page the count says exists is still an error (see #numberedPages).
   */
  async #pageOrEnd(
    range: ProviderDateRange,
    pageNumber: number,
    signal: AbortSignal,
    why: string,
  ): Promise<FetchedPage | undefined> {
    try {
      return await this.#numberedPage(range, pageNumber, signal);
    } catch (error) {
      if (!isRefusedPageNumber(error)) throw error;
      // Without a count, a refusal after a full page may also be a limit on how deep a read may go:
      // said loudly, since the articles past such a limit would go unread.
      const level = why === 'no count' ? 'warn' : 'info';
      this.#log[level]('the provider refused a page that may lie past the end of the listing: taken as its end', {
        range: `${range.from}..${range.to}`,
        page: pageNumber,
        status: error.status,
        why,
      });
      return undefined;
    }
  }

  /** Articles per page this client asks for (numbered paging). */
  get pageSize(): number {
    return this.#config.pageSize;
  }

  /**
   * One numbered page by number and size, not de-duplicated, with the positions of its articles
   * (counted reading, functions/core/reading/counted-run.ts). A page on which nothing can be read
   * comes back with `unreadable` once the mapping has read an article anywhere; before that it
   * fails the read, as `pages` does when no page of a range is readable.
   *
   * @throws RangeError when the client pages by cursor, or `size` is not 1..pageSize
   */
  async page(range: ProviderDateRange, request: PageRequest): Promise<ArticlePage> {
    if (!isProviderDate(range.from) || !isProviderDate(range.to) || range.from > range.to) {
      throw new RangeError(`invalid provider date range ${range.from}..${range.to} (YYYY-MM-DD, from <= to)`);
    }
    if (this.#config.pagination.method === 'CURSOR')
      throw new RangeError('a cursor-paged provider has no page numbers');
    const { page: pageNumber, size } = request;
    if (!Number.isSafeInteger(pageNumber) || pageNumber < 1 || pageNumber > this.#config.maxPages) {
      throw new RangeError(`page must be 1..${this.#config.maxPages}, not ${pageNumber}`);
    }
    if (!Number.isSafeInteger(size) || size < 1 || size > this.#config.pageSize) {
      throw new RangeError(`size must be 1..${this.#config.pageSize}, not ${size}`);
    }
    const signal = request.signal ?? new AbortController().signal;
    signal.throwIfAborted();
    const page = await this.#numberedPage(range, pageNumber, signal, size);
    if (page.mapped.unreadable !== undefined && !this.#mappingFits && !(await this.#proveMapping(range, signal))) {
      throw new ProviderResponseError(
        `no item on page ${pageNumber} of ${range.from}..${range.to} could be read and no page had a readable article, so the response mapping does not fit this provider (set ${providerEnvironment.mapping}): ${page.mapped.unreadable}`,
      );
    }
    return this.#emit(page, new Set<string>());
  }

  #emit(page: FetchedPage, seen: Set<string>, cursor?: string): ArticlePage {
    const all = page.mapped.articles;
    const kept = all.map((article) => {
      if (seen.has(article.key)) return false;
      seen.add(article.key);
      return true;
    });
    const positions = this.#positions(page);
    return {
      pageNumber: page.pageNumber,
      articles: all.filter((_, i) => kept[i]),
      totalCount: page.mapped.totalCount,
      skipped: page.mapped.skipped,
      ...(page.mapped.unreadable === undefined ? {} : { unreadable: page.mapped.unreadable }),
      ...(cursor === undefined ? {} : { cursor }),
      ...(positions === undefined ? {} : { positions: positions.filter((_, i) => kept[i]) }),
    };
  }

  /**
   * Where each article of a numbered page stands in the listing (its page's offset plus its index
   * among the page's items, unreadable ones included), when that can be trusted: the provider
   * reported a total, and the page holds exactly as many items as that total and the requested
   * size leave for it (a provider that caps `size` silently would put them elsewhere).
   */
  #positions(page: FetchedPage): number[] | undefined {
    const { size } = page;
    const total = page.mapped.totalCount;
    if (size === undefined || total === undefined) return undefined;
    const items = page.mapped.articles.length + page.mapped.skipped.length;
    const offset = (page.pageNumber - 1) * size;
    if (items !== Math.max(0, Math.min(size, total - offset))) return undefined;
    const skipped = new Set(page.mapped.skipped.map((item) => item.index));
    const positions: number[] = [];
    for (let index = 0; index < items; index++) if (!skipped.has(index)) positions.push(offset + index);
    return positions;
  }

  #pageCapError(range: ProviderDateRange, pageSize: number, total?: number): PageCapError {
    const { maxPages } = this.#config;
    const need =
      total === undefined
        ? `more than ${maxPages} pages`
        : `more than ${maxPages} pages (the provider reports ${total} articles)`;
    return new PageCapError(
      `the range ${range.from}..${range.to} needs ${need} of ${pageSize} articles, over the cap of ${maxPages}; raise ${providerEnvironment.maxPages} or shorten the schedule interval`,
    );
  }

  // --- One page, with retries ---------------------------------------------------------------------

  async #fetchPage(body: Record<string, unknown>, context: RequestContext, signal: AbortSignal): Promise<FetchedPage> {
    const json = await this.#post(JSON.stringify(body), context, signal);
    let mapped: MappedPage;
    try {
      mapped = mapPage(json, this.#config.mapping, this.#config.timestampTimeZone, {
        secrets: this.#knownKeys,
        unreadablePage: 'report',
      });
    } catch (error) {
      if (error instanceof ProviderError) throw error;
      // Whatever the body does to the mapping code (it should throw nothing else), the run must
      // see a provider error, counted and alarmed as one.
      throw new ProviderResponseError(
        `the response for ${this.#where(context)} could not be read: ${this.#redact(error instanceof Error ? `${error.name}: ${error.message}` : String(error))}`,
        { cause: this.#sanitize(error) },
      );
    }
    if (mapped.articles.length > 0) this.#mappingFits = true;
    if (mapped.zonelessTimestamp !== undefined && !this.#warnedZoneless) {
      this.#warnedZoneless = true;
      this.#log.warn('news API timestamps carry no time zone or offset; reading them in the configured provider zone', {
        example: mapped.zonelessTimestamp,
        timeZone: this.#config.timestampTimeZone,
        check: `alert times and the window are only right if ${providerEnvironment.timeZone} (cdk.json "newsApiTimeZone") is the provider's zone`,
      });
    }
    this.#log.debug('news API page read', {
      range: context.range,
      page: context.page,
      articles: mapped.articles.length,
      skipped: mapped.skipped.length,
      totalCount: mapped.totalCount,
    });
    return { pageNumber: context.page, mapped };
  }

  async #apiKey(forceRefresh: boolean): Promise<string> {
    const prepared = this.#prepared;
    this.#prepared = undefined;
    const early = forceRefresh || prepared === undefined ? undefined : await prepared;
    const raw = early ?? (await this.#secrets.apiKey(forceRefresh ? { forceRefresh: true } : undefined));
    // A key pasted with a trailing newline is the usual reason for a 401 that "cannot be".
    const key = raw.trim();
    if (key.length === 0) {
      throw new ConfigError(
        'the news API key read from Secrets Manager is empty; store the provider key in the API-key secret',
      );
    }
    // An HTTP header carries printable ASCII; a key with anything else (most often U+FFFD, what
    // bytes that are not UTF-8 decode to) could never be accepted, and undici refuses to send it.
    const odd = key.search(/[^\x20-\x7e]/);
    if (odd !== -1) {
      throw new ConfigError(
        `the news API key read from Secrets Manager has a control or non-ASCII character (character ${odd + 1}), which an HTTP header cannot carry; store the key exactly as the provider issued it ('news-alerts api-key set' reads it from standard input)`,
      );
    }
    this.#knownKeys.add(raw);
    this.#knownKeys.add(key);
    // The shared logger scrubs registered secrets from every log line, whoever logs them.
    registerSecret(key);
    return key;
  }

  async #post(payload: string, context: RequestContext, signal: AbortSignal): Promise<unknown> {
    const { maxAttempts, baseDelayMs, maxDelayMs, maxRetryAfterMs } = this.#config;
    let refreshedKey = false;
    let forceRefresh = false;
    let lastFailure: RetryableFailure | undefined;
    for (let attempt = 1; ; attempt++) {
      signal.throwIfAborted();
      const key = await this.#apiKey(forceRefresh);
      forceRefresh = false;
      const startedAt = this.#now();
      let outcome: AttemptOutcome;
      try {
        outcome = await this.#attempt(payload, key, context, signal);
      } catch (error) {
        throw this.#stalled(error, signal, context, lastFailure, startedAt);
      }
      if (outcome.kind === 'ok') return outcome.body;
      if (outcome.kind === 'unauthorized') {
        if (refreshedKey) {
          throw new ProviderAuthError(
            `the provider rejected the API key (HTTP 401: ${outcome.description}) for ${this.#where(context)}, also after re-reading it from Secrets Manager; check the key stored in the API-key secret (if it is a key from the provider portal's test tool, it may not be valid for API calls)`,
            401,
          );
        }
        // Secrets Manager may have rotated the key after this warm Lambda cached it: re-read it
        // once, and do not count the extra request as an attempt.
        refreshedKey = true;
        forceRefresh = true;
        attempt--;
        this.#log.warn('news API rejected the API key; re-reading it from Secrets Manager and retrying once', {
          status: 401,
          range: context.range,
          page: context.page,
        });
        continue;
      }
      lastFailure = outcome;
      const reason = this.#redact(outcome.description);
      if (outcome.retryAfterMs !== undefined && outcome.retryAfterMs > maxRetryAfterMs) {
        throw new ProviderError(
          `the provider asked to wait ${Math.ceil(outcome.retryAfterMs / 1000)} s (Retry-After) for ${this.#where(context)}, longer than ${providerEnvironment.maxRetryAfterMs}=${maxRetryAfterMs} ms; giving up so the next run retries (last failure: ${reason})`,
          { status: outcome.status, retryable: true },
          { cause: this.#sanitize(outcome.cause) },
        );
      }
      if (attempt >= maxAttempts) {
        throw new ProviderError(
          `the news API request for ${this.#where(context)} failed after ${attempt} attempt(s): ${reason}`,
          { status: outcome.status, retryable: true },
          { cause: this.#sanitize(outcome.cause) },
        );
      }
      const backoff = Math.floor(
        exponentialBackoff(attempt, { baseMs: baseDelayMs, maxMs: maxDelayMs, jitter: 'full', random: this.#random }),
      );
      const delayMs = Math.max(backoff, outcome.retryAfterMs ?? 0);
      this.#log.warn('news API request failed; retrying', {
        status: outcome.status,
        attempt,
        maxAttempts,
        delayMs,
        retryAfterMs: outcome.retryAfterMs,
        reason,
        range: context.range,
        page: context.page,
      });
      try {
        await this.#sleep(delayMs, signal);
      } catch (error) {
        throw this.#stalled(error, signal, context, lastFailure, undefined);
      }
    }
  }

  /**
   * What to throw when an attempt or a backoff ends with `error`. When the caller's deadline cut
   * a request that was already failing (an earlier attempt failed) or that had been running for
   * longer than the read timeout (a provider dripping its answer), the run must see a provider
   * failure, not a clean stop at its time budget: ProviderStalledError. Otherwise `error`.
   */
  #stalled(
    error: unknown,
    signal: AbortSignal,
    context: RequestContext,
    lastFailure: RetryableFailure | undefined,
    attemptStartedAt: number | undefined,
  ): unknown {
    if (!signal.aborted || error instanceof ProviderError) return error;
    const elapsed = attemptStartedAt === undefined ? 0 : this.#now() - attemptStartedAt;
    const slow = elapsed > this.#config.readTimeoutMs;
    if (lastFailure === undefined && !slow) return error;
    const what = slow
      ? `the provider was still answering ${this.#where(context)} after ${elapsed} ms`
      : `the provider was failing for ${this.#where(context)} (last failure: ${this.#redact(lastFailure?.description ?? '')})`;
    return new ProviderStalledError(
      `the run's time budget ran out while ${what}; the run stops here and the next run retries`,
      lastFailure?.cause === undefined ? undefined : { cause: this.#sanitize(lastFailure.cause) },
    );
  }

  async #attempt(payload: string, key: string, context: RequestContext, signal: AbortSignal): Promise<AttemptOutcome> {
    let status: number;
    let headers: Record<string, string | string[] | undefined>;
    let text: string;
    // The read timeout bounds each wait; this bounds the whole response, so a provider sending
    // one byte at a time cannot hold the request (and the run) for longer.
    const responseDeadline = new AbortController();
    const timer = setTimeout(() => responseDeadline.abort(), this.#config.responseTimeoutMs);
    timer.unref();
    try {
      const response = await request(this.#endpoint, {
        dispatcher: this.#dispatcher,
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Accept: 'application/json', 'X-API-KEY': key },
        body: payload,
        signal: AbortSignal.any([signal, responseDeadline.signal]),
        headersTimeout: this.#config.readTimeoutMs,
        bodyTimeout: this.#config.readTimeoutMs,
      });
      status = response.statusCode;
      headers = response.headers;
      text = await this.#readBody(response.body);
    } catch (error) {
      if (error instanceof ResponseTooLarge) {
        throw new ProviderResponseError(
          `the response for ${this.#where(context)} is larger than ${providerEnvironment.maxResponseBytes}=${error.limit} bytes; lower ${providerEnvironment.pageSize} (${this.#config.pageSize}) or raise the limit`,
        );
      }
      if (responseDeadline.signal.aborted && !signal.aborted) {
        return {
          kind: 'retry',
          description: `the response took longer than ${this.#config.responseTimeoutMs} ms in total (${providerEnvironment.responseTimeoutMs})`,
          cause: error,
        };
      }
      return this.#networkFailure(error, context, signal);
    } finally {
      clearTimeout(timer);
    }

    if (status >= 200 && status < 300) {
      let body: unknown;
      try {
        body = JSON.parse(text);
      } catch (error) {
        // A 200 that is not JSON is most often a body cut off mid-transfer.
        return {
          kind: 'retry',
          status,
          description: `HTTP ${status} with a body that is not valid JSON (${text.length} characters, possibly truncated): ${this.#sample(text)}`,
          // SyntaxError messages quote the input, which may contain an echoed key.
          cause: new SyntaxError(this.#redact(error instanceof Error ? error.message : String(error))),
        };
      }
      const bodyError = findBodyError(body, this.#config.mapping, this.#knownKeys);
      if (bodyError !== undefined) {
        return { kind: 'retry', status, description: `HTTP ${status} reporting an error in the body: ${bodyError}` };
      }
      return { kind: 'ok', body };
    }

    const detail = this.#errorDetail(text);
    if (status === 401) return { kind: 'unauthorized', description: detail };
    if (status === 403) {
      throw new ProviderAuthError(
        `the API key lacks access to ${this.#where(context)} (HTTP 403: ${detail}); the request may be outside the media scope contracted for this key, or the contract may not cover this date range`,
        403,
      );
    }
    if (retryableStatus(status)) {
      return {
        kind: 'retry',
        status,
        retryAfterMs: parseRetryAfter(headers['retry-after'], this.#now()),
        description: `HTTP ${status}: ${detail}`,
      };
    }
    const location = headers.location;
    const hint =
      status === 404
        ? `; check ${providerEnvironment.baseUrl}: the client posts to ${this.#endpoint}`
        : status >= 300 && status < 400
          ? `; the provider redirects${typeof location === 'string' ? ` to ${this.#sample(location)}` : ''} (a POST is not followed): update ${providerEnvironment.baseUrl}`
          : status === 400 || status === 422
            ? `; check ${providerEnvironment.pageSize} (${this.#config.pageSize}) and the date range`
            : '';
    throw new ProviderError(
      `the provider refused the request for ${this.#where(context)} (HTTP ${status}: ${detail})${hint}`,
      { status, retryable: false },
    );
  }

  /** The body as text, refusing more than `maxResponseBytes` (odd bytes decode to U+FFFD). */
  async #readBody(body: Dispatcher.ResponseData['body']): Promise<string> {
    const limit = this.#config.maxResponseBytes;
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of body) {
      const bytes = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as Uint8Array);
      size += bytes.length;
      if (size > limit) {
        body.destroy();
        throw new ResponseTooLarge(limit);
      }
      chunks.push(bytes);
    }
    return Buffer.concat(chunks).toString('utf8');
  }

  #networkFailure(error: unknown, context: RequestContext, signal: AbortSignal): RetryableFailure {
    if (signal.aborted) throw signal.reason;
    const code = errorCodeOf(error);
    const message = this.#redact(error instanceof Error ? error.message : String(error));
    if (code === 'UND_ERR_INVALID_ARG') {
      // undici refused to build the request: the same request fails the same way every time, and
      // with a connection limit each refused attempt also leaks one of the pool's slots (undici
      // 7.30), so a retry could wait for a connection forever.
      throw new ProviderError(
        `the request for ${this.#where(context)} could not be sent (${code}: ${message}); retrying cannot help, check the provider settings`,
        { retryable: false },
        { cause: this.#sanitize(error) },
      );
    }
    if (code === 'ERR_TARGET_ADDRESS') {
      // The provider's host name resolved to an internal address (functions/shared/http-pool.ts):
      // the answer will not change by asking again, and it is a setting to check, not an outage.
      throw new ProviderError(
        `the provider's address is refused for ${this.#where(context)}: ${message}`,
        { retryable: false },
        { cause: this.#sanitize(error) },
      );
    }
    if (code !== undefined && tlsErrorCodes.has(code)) {
      throw new ProviderError(
        `TLS verification of ${this.#endpoint} failed for ${this.#where(context)} (${code}: ${message}); the client trusts the system CAs plus ${providerEnvironment.caPem} when set, and never skips verification`,
        { retryable: false },
        { cause: this.#sanitize(error) },
      );
    }
    const description =
      code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT'
        ? `no response within ${this.#config.readTimeoutMs} ms (${providerEnvironment.readTimeoutMs})`
        : code === 'UND_ERR_CONNECT_TIMEOUT'
          ? `could not connect within ${this.#config.connectTimeoutMs} ms (${providerEnvironment.connectTimeoutMs})`
          : `network error${code ? ` ${code}` : ''}: ${message}`;
    return { kind: 'retry', description, cause: error };
  }

  #errorDetail(text: string): string {
    if (text.trim().length === 0) return 'empty body';
    try {
      const body: unknown = JSON.parse(text);
      return findBodyError(body, this.#config.mapping, this.#knownKeys) ?? this.#sample(text);
    } catch {
      return this.#sample(text);
    }
  }

  #where(context: RequestContext): string {
    return `${context.range} page ${context.page}`;
  }

  #sample(text: string): string {
    return sampleOf(text, this.#knownKeys, 200);
  }

  #redact(text: string): string {
    return redactSecrets(text, this.#knownKeys);
  }

  /**
   * A copy of `error` safe to attach as a cause: every string in it, at any depth, went through
   * `#redact` (undici's HTTPParserError keeps the raw response bytes, key included, in `data`).
   */
  #sanitize(error: unknown): Error | undefined {
    if (error === undefined) return undefined;
    return sanitizeError(error, (text) => this.#redact(text));
  }
}
