/**
 * The bundled news API simulator: an HTTPS implementation of the News Lookup API
 * (news-lookup-api.md) with the gaps filled the way a realistic provider would fill them, seeded
 * articles, live and test keys with media scopes, and switchable faults. Tests, `npm start`, the
 * benchmarks and `npm run simulator` all use it.
 *
 * Wire contract (what the provider's document leaves open is our choice, written down here):
 * - `POST /news`, `Content-Type: application/json`, `X-API-KEY`. Other paths 404, other methods
 *   405, other content types 415. Missing, unknown or revoked key 401; a key with no media 403.
 * - Body: `paginationMethod` `PAGE` (or `CURSOR` in cursor mode), `publishedAtStart` and
 *   `publishedAtEnd` as `YYYY-MM-DD` in the provider's zone (inclusive), `page` >= 1,
 *   `size` 1..maxPageSize. Cursor mode: `cursor` (from `nextCursor`) instead of `page`.
 * - Errors: `{"status":"ERROR","error":{"code","message","field"?}}`.
 * - Pages: `{"status":"OK","totalCount","page","size","articles"}`; cursor pages:
 *   `{"status":"OK","articles","nextCursor"}`.
 * - Order ({@link SimOrder}, switchable while running with `setOrder`): newest first, oldest
 *   first, or unordered. Sorted orders break ties on `publishedAt` by `articleId` (ascending
 *   oldest-first, descending newest-first, the exact reverse), so articles with identical
 *   timestamps have one fixed place and keyset cursors over them neither skip nor repeat.
 *   Unordered is a seeded pseudo-random permutation keyed by article id: the same article set
 *   always comes in the same order (a page read twice gives the same items), and an arrival lands
 *   wherever its id falls, shifting the pages after it.
 * - Cursors are opaque; inside they are keyset cursors (the last article returned) when issued by
 *   a sorted order and position cursors (the offset of the next article) when issued while
 *   unordered. A keyset cursor continues after its article in the order current when it is
 *   redeemed (after `setOrder` flips the direction, the rest of the chain runs the other way; a
 *   client must notice the change and read again); redeemed while unordered, any cursor is taken
 *   as its position, like a page number, so arrivals before it shift what follows.
 *
 * Faults strike only requests the simulator would otherwise answer with 200, so a fault never
 * hides a contract error. They queue in injection order; each request takes the first pending
 * fault that matches it and uses up one of its `times`.
 */
import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { DateTime } from 'luxon';
import { z } from 'zod';
import { describeIssues } from '#core/model';
import { createCertificateAuthority, issueLoopbackCertificate, type PemPair } from '#sandbox/tls';
import {
  ArticleFactory,
  applyRevision,
  burstArticles,
  MEDIA,
  mediaOf,
  OUT_OF_SCOPE_MEDIA,
  type SimArticle,
  type SimArticleInput,
  SimArticleInputSchema,
  type SimBurst,
  SYNDICATION_MEDIA,
  seedArticles,
  ZoneCalendar,
} from './news-simulator-data.ts';

export type {
  SimArticle,
  SimArticleInput,
  SimBurst,
  SimCategory,
  SimMedia,
  SimRevision,
  StoryOptions,
} from './news-simulator-data.ts';

/** What a key may see: `live` keys see the archive, `test` keys a small fixed sample of it. */
export interface SimKeySpec {
  /** Shown in recorded requests and logs instead of the key itself. */
  readonly name: string;
  readonly kind: 'live' | 'test';
  /** Contracted media codes, or `*` for every outlet. An empty list gets 403 FORBIDDEN_SCOPE. */
  readonly media: readonly string[] | '*';
}

const faultTarget = {
  /** How many matching requests the fault strikes (default 1). */
  times: z.number().int().positive().default(1),
  /** Only requests for this page (PAGE) or this position in the cursor chain (CURSOR, from 1). */
  page: z.number().int().positive().optional(),
};

/** A fault to inject; the admin API (`POST /_sim/faults`) takes the same JSON. */
export const SimFaultSchema = z.discriminatedUnion('kind', [
  /** An error status; 502 and 504 come as a gateway's HTML page, the others as the API's error JSON. */
  z.strictObject({
    kind: z.literal('status'),
    status: z.literal([408, 429, 500, 502, 503, 504]),
    /** Sent verbatim as `Retry-After` (seconds or an HTTP date); omitted when absent. */
    retryAfter: z.string().min(1).optional(),
    ...faultTarget,
  }),
  /** Waits before sending headers, then answers normally (a client with a shorter timeout gives up). */
  z.strictObject({ kind: z.literal('delay'), ms: z.number().int().min(0).max(600_000), ...faultTarget }),
  /** HTTP 200 whose JSON body is cut in half. */
  z.strictObject({ kind: z.literal('malformed'), ...faultTarget }),
  /** HTTP 200 with `{"status":"ERROR","error":{...}}`. */
  z.strictObject({
    kind: z.literal('error-body'),
    code: z.string().min(1).optional(),
    message: z.string().min(1).optional(),
    ...faultTarget,
  }),
  /**
   * `insert` new seeded articles are published just before the request is answered, placed so
   * they come first in the response order (newest-first: now, clamped to the range; oldest-first:
   * a late arrival at the start of the range; unordered: now, wherever their ids fall). Offset
   * pages and position cursors shift; keyset cursors do not.
   */
  z.strictObject({ kind: z.literal('shift'), insert: z.number().int().min(1).max(10_000), ...faultTarget }),
  /** The page starts with the previous page's last item (page 1: its own first item, twice). */
  z.strictObject({ kind: z.literal('duplicate'), ...faultTarget }),
  /** The socket is destroyed without a response. */
  z.strictObject({ kind: z.literal('drop'), ...faultTarget }),
  /** HTTP 200 with the page's envelope intact but every item malformed (no title, url or time): a poison page. */
  z.strictObject({ kind: z.literal('poison'), ...faultTarget }),
]);

/** A fault to inject; see {@link SimFaultSchema}. */
export type SimFault = z.input<typeof SimFaultSchema>;
type ActiveFault = z.output<typeof SimFaultSchema>;

/** One request the API saw (admin requests are not recorded). The key itself is never kept. */
export interface SimRequestRecord {
  /** Sequence number, from 1. */
  readonly id: number;
  /** Arrival time on the simulator's clock (epoch ms). */
  readonly time: number;
  readonly method: string;
  readonly path: string;
  /** Status sent (or being sent after a delay); null when the socket was dropped. */
  readonly status: number | null;
  /** Name of the presented key when the simulator knows it (also when revoked). */
  readonly keyName?: string;
  /** Page number (PAGE) or position in the cursor chain (CURSOR), when the body names one. */
  readonly page?: number;
  /** The request body as parsed JSON (the raw text when it is not JSON). */
  readonly body?: unknown;
  readonly fault?: SimFault['kind'];
  /** Articles in a successful answer. */
  readonly articleCount?: number;
}

/**
 * The order of a response: `newest-first` and `oldest-first` by (publishedAt, articleId);
 * `unordered` a stable seeded permutation keyed by article id (see the module header).
 */
export type SimOrder = 'newest-first' | 'oldest-first' | 'unordered';

/** Options of {@link startNewsSimulator}; every one is optional. */
export interface NewsSimulatorOptions {
  /** CA that signs the server certificate; a new one is created when absent. */
  readonly ca?: PemPair;
  /** Port on 127.0.0.1; 0 or absent picks a free one. */
  readonly port?: number;
  /** The provider's time zone, used for date filtering and timestamps. Default `Asia/Seoul`. */
  readonly timeZone?: string;
  /** The simulator's clock (epoch ms). Default `Date.now`. */
  readonly now?: () => number;
  /** Seed of the article content. Default 1. */
  readonly seed?: number;
  /**
   * Seeded articles: `perDay` in each of the last `days` 24-hour slices up to `now()` (default
   * 3 × 200). With `live`, new seeded articles keep arriving at the same rate as the clock moves.
   */
  readonly generate?: { readonly days?: number; readonly perDay?: number; readonly live?: boolean };
  /** The exact article set; nothing is generated then (only `generate.live` arrivals, if asked for). */
  readonly articles?: readonly SimArticleInput[];
  /**
   * Keys by key string. Default: a live key for every outlet but {@link OUT_OF_SCOPE_MEDIA} and a
   * test key for M001 and M002.
   */
  readonly keys?: Readonly<Record<string, SimKeySpec>>;
  /** Largest accepted `size`. Default 100. */
  readonly maxPageSize?: number;
  /** Longest accepted range in days, both ends included. Default 31. */
  readonly maxRangeDays?: number;
  /**
   * Response order. Default `newest-first`, the order in which new arrivals shift offset pages.
   * `unordered` is seeded by `seed`; change the order while running with {@link NewsSimulator.setOrder}.
   */
  readonly order?: SimOrder;
  /**
   * `publishedAt` on the wire: `iso` (`2026-11-22T09:15:00+09:00`, the default), `rfc822`
   * (`Sun, 22 Nov 2026 09:15:00 +0900`), `compact` (`20261122091500`, provider-local wall time
   * without offset) or `mixed` (per article: iso with offset, iso in UTC, rfc822, compact).
   */
  readonly timestampFormat?: 'iso' | 'rfc822' | 'compact' | 'mixed';
  /** Also accept `paginationMethod: "CURSOR"`. Default false. */
  readonly cursorMode?: boolean;
  /**
   * How a numbered page past the end of the listing (page 2 or later, no article left for it) is
   * answered: `empty` (the default, an empty page) or `refuse` (HTTP 400 `INVALID_PAGE`, as many
   * providers answer; the interface does not say which this provider does).
   */
  readonly pastEndPages?: 'empty' | 'refuse';
  /** Called for every recorded request, e.g. to log it. */
  readonly onRequest?: (record: SimRequestRecord) => void;
  /**
   * Share of generated stories (0 to 1) that other outlets republish within minutes as syndicated
   * copies and rewrites (2 to 8 each, new ids, URLs and outlets; each copy's `copyOf` names the
   * original). Default 0. Copies due after the clock appear as it reaches them.
   */
  readonly syndicationRate?: number;
  /**
   * Share of generated articles (0 to 1) that come back later (10 minutes to 6 hours) with status
   * UPDATED, or rarely DELETED, sometimes with a revised title: the same `articleId` with its new
   * latest status from then on. Default 0. Revisions due before the simulator starts are already
   * applied; later ones appear as the clock reaches them.
   */
  readonly updateRate?: number;
}

/** A running simulator. */
export interface NewsSimulator {
  /** `https://127.0.0.1:PORT`; the API lives at `${url}/news`. */
  readonly url: string;
  /** PEM of the CA that signed the server certificate; clients trust it explicitly. */
  readonly caCert: string;
  /** The first live key (throws when the simulator has none). */
  readonly liveKey: string;
  /** The first test key (throws when the simulator has none). */
  readonly testKey: string;
  readonly timeZone: string;
  /** Every article, oldest first (ties by id). */
  articles(): SimArticle[];
  /** The response order now. */
  readonly order: SimOrder;
  /**
   * Changes the response order from the next request on, also in the middle of a read: the next
   * page or cursor of a chain already started is answered in the new order (see the module header).
   */
  setOrder(order: SimOrder): void;
  /**
   * Adds articles now: new arrivals, or late arrivals with old timestamps. An existing
   * `articleId` is replaced (a status change such as WITHDRAWN). Test keys only ever see ids
   * that existed at startup.
   */
  publish(...articles: SimArticleInput[]): SimArticle[];
  /**
   * Schedules a burst of coverage on a topic (news-simulator-data.ts {@link burstArticles}): each
   * article appears when the clock reaches its publication time, as the provider would list it.
   * Spike alerts' sandbox demo (`npm start -- --spike-demo`) uses it. Returns how many articles it
   * scheduled.
   */
  scheduleBurst(burst: SimBurst): number;
  readonly faults: {
    inject(fault: SimFault): void;
    clear(): void;
    /** Pending faults with the `times` they have left. */
    pending(): SimFault[];
  };
  /** Recorded API requests, oldest first (the newest 10,000). */
  readonly requests: readonly SimRequestRecord[];
  /** Adds or replaces a key (rotation); a revoked key becomes valid again. */
  setKey(key: string, spec: SimKeySpec): void;
  /** Revokes a key: it gets 401 from now on. */
  revokeKey(key: string): void;
  stop(): Promise<void>;
}

/** How many articles a test key can ever see for one range. */
export const TEST_KEY_SAMPLE_SIZE = 10;

const DAY_MS = 24 * 60 * 60 * 1000;
const MAX_NEWS_BODY_BYTES = 64 * 1024;
const MAX_ADMIN_BODY_BYTES = 32 * 1024 * 1024;
const MAX_RECORDED_REQUESTS = 10_000;

// ---------------------------------------------------------------------------------------------
// Articles

const compareAscending = (a: SimArticle, b: SimArticle): number =>
  a.publishedAt - b.publishedAt || (a.articleId < b.articleId ? -1 : a.articleId > b.articleId ? 1 : 0);

/** First index in `sorted` (ascending) whose article is not before `at`. */
function lowerBound(sorted: readonly SimArticle[], at: number): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((sorted[mid]?.publishedAt ?? Number.POSITIVE_INFINITY) < at) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** FNV-1a of the article id mixed with the seed: where an article falls in the unordered order. */
function shuffleKey(articleId: string, seed: number): number {
  let hash = (0x811c9dc5 ^ Math.imul(seed | 0, 0x9e3779b1)) >>> 0;
  for (let i = 0; i < articleId.length; i++) hash = Math.imul(hash ^ articleId.charCodeAt(i), 0x01000193) >>> 0;
  // A final avalanche, so ids that differ only in their last digit land far apart.
  hash ^= hash >>> 16;
  hash = Math.imul(hash, 0x85ebca6b) >>> 0;
  return (hash ^ (hash >>> 13)) >>> 0;
}

/**
 * The unordered response order: by each article's seeded key (ties by id), so the permutation
 * depends only on the set of articles, never on when or in which order they were published.
 */
function shuffledByKey(list: readonly SimArticle[], seed: number): SimArticle[] {
  return list
    .map((article) => ({ article, key: shuffleKey(article.articleId, seed) }))
    .sort(
      (a, b) =>
        a.key - b.key ||
        (a.article.articleId < b.article.articleId ? -1 : a.article.articleId > b.article.articleId ? 1 : 0),
    )
    .map(({ article }) => article);
}

/** Which articles a key sees. */
interface Scope {
  /** Cache key of the scope. */
  readonly signature: string;
  includes(mediaCode: string): boolean;
  /** Test keys: only the startup sample, at most TEST_KEY_SAMPLE_SIZE per range. */
  readonly sampleOnly: boolean;
}

/**
 * The archive, kept sorted by (publishedAt, articleId). Views per (scope, range) are cached until
 * the next publish, so paging through 100,000 articles costs a slice per page, not a sort.
 */
class ArticleStore {
  #sorted: SimArticle[] = [];
  readonly #byId = new Map<string, SimArticle>();
  readonly #sample = new Set<string>();
  readonly #views = new Map<string, readonly SimArticle[]>();
  readonly #calendar: ZoneCalendar;
  readonly #seed: number;
  #order: SimOrder;

  constructor(calendar: ZoneCalendar, order: SimOrder, seed: number) {
    this.#calendar = calendar;
    this.#order = order;
    this.#seed = seed;
  }

  get order(): SimOrder {
    return this.#order;
  }

  set order(order: SimOrder) {
    if (order === this.#order) return;
    this.#order = order;
    this.#views.clear();
  }

  all(): SimArticle[] {
    return [...this.#sorted];
  }

  get(articleId: string): SimArticle | undefined {
    return this.#byId.get(articleId);
  }

  /** Freezes the current articles as the sample test keys see. */
  markSample(): void {
    for (const article of this.#sorted) this.#sample.add(article.articleId);
  }

  /** Adds articles; one with a known `articleId` replaces the stored one (the last of a batch wins). */
  upsert(batch: readonly SimArticle[]): void {
    const articles = [...new Map(batch.map((article) => [article.articleId, article])).values()];
    if (articles.length === 0) return;
    this.#views.clear();
    const replacing = articles.some((article) => this.#byId.has(article.articleId));
    for (const article of articles) this.#byId.set(article.articleId, article);
    if (replacing) {
      // Replacements: one filter and sort beat finding and moving each one.
      const fresh = new Set(articles.map((article) => article.articleId));
      this.#sorted = this.#sorted.filter((article) => !fresh.has(article.articleId));
      this.#sorted.push(...articles);
      this.#sorted.sort(compareAscending);
      return;
    }
    // New articles are merged into the part of the archive they reach, usually a short tail of
    // recent ones: a live day (the provider-day bench publishes before every run) then costs its
    // arrivals, not a sort of the whole archive per publish.
    articles.sort(compareAscending);
    const [first] = articles;
    if (!first) return;
    let lo = 0;
    let hi = this.#sorted.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const other = this.#sorted[mid];
      if (other && compareAscending(other, first) < 0) lo = mid + 1;
      else hi = mid;
    }
    const tail = this.#sorted.splice(lo);
    let t = 0;
    let a = 0;
    while (t < tail.length || a < articles.length) {
      const fromTail = tail[t];
      const fromBatch = articles[a];
      if (fromTail && (!fromBatch || compareAscending(fromTail, fromBatch) <= 0)) {
        this.#sorted.push(fromTail);
        t += 1;
      } else if (fromBatch) {
        this.#sorted.push(fromBatch);
        a += 1;
      }
    }
  }

  /** The articles `scope` sees on the provider dates `start`..`end`, in response order. */
  view(scope: Scope, start: string, end: string): readonly SimArticle[] {
    const cacheKey = `${scope.signature}|${start}|${end}`;
    const cached = this.#views.get(cacheKey);
    if (cached) return cached;
    const from = lowerBound(this.#sorted, this.#calendar.startOf(start));
    const to = lowerBound(this.#sorted, this.#calendar.endOf(end));
    let list = this.#sorted.slice(from, to).filter((article) => scope.includes(article.media.code));
    if (scope.sampleOnly) {
      list = list.filter((article) => this.#sample.has(article.articleId)).slice(0, TEST_KEY_SAMPLE_SIZE);
    }
    if (this.#order === 'newest-first') list.reverse();
    else if (this.#order === 'unordered') list = shuffledByKey(list, this.#seed);
    if (this.#views.size > 256) this.#views.clear();
    this.#views.set(cacheKey, list);
    return list;
  }

  /**
   * Where a keyset cursor continues in `view` (a sorted order): the first article after
   * (publishedAt, articleId) in the current direction.
   */
  positionAfter(view: readonly SimArticle[], publishedAt: number, articleId: string): number {
    const probe = { publishedAt, articleId } as SimArticle;
    const sign = this.#order === 'newest-first' ? -1 : 1;
    let lo = 0;
    let hi = view.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const other = view[mid];
      if (other && sign * compareAscending(other, probe) <= 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}

// ---------------------------------------------------------------------------------------------
// Wire format

type TimestampFormat = NonNullable<NewsSimulatorOptions['timestampFormat']>;

function formatTimestamp(epochMs: number, format: TimestampFormat, timeZone: string, articleId: string): string {
  const local = DateTime.fromMillis(epochMs, { zone: timeZone });
  switch (format) {
    case 'iso':
      return local.toISO({ suppressMilliseconds: true }) ?? '';
    case 'rfc822':
      return local.toRFC2822() ?? '';
    case 'compact':
      return local.toFormat('yyyyMMddHHmmss');
    case 'mixed': {
      // Chosen by id, so an article keeps its shape from one request to the next.
      let hash = 0x811c9dc5; // FNV-1a: low bits spread well even for ids that differ in one digit
      for (const char of articleId) hash = Math.imul(hash ^ (char.codePointAt(0) ?? 0), 0x01000193) >>> 0;
      const shape = (['iso', 'utc', 'rfc822', 'compact'] as const)[((hash ^ (hash >>> 16)) >>> 0) % 4];
      if (shape === 'utc') return local.toUTC().toISO({ suppressMilliseconds: true }) ?? '';
      return formatTimestamp(epochMs, shape ?? 'iso', timeZone, articleId);
    }
  }
}

/**
 * An article as the simulator sends it in a response's `articles` list (bench/synthetic.ts
 * `delivered` writes the benches' articles with it, so they read what the client reads).
 */
export function wireArticle(article: SimArticle, timestampFormat: TimestampFormat, timeZone: string): object {
  return {
    articleId: article.articleId,
    title: article.title,
    summary: article.summary,
    url: article.url,
    publishedAt: formatTimestamp(article.publishedAt, timestampFormat, timeZone, article.articleId),
    categories: article.categories.map(({ code, name }) => ({ code, name })),
    media: { code: article.media.code, name: article.media.name },
    status: article.status,
  };
}

const errorBody = (code: string, message: string, field?: string): string =>
  JSON.stringify({ status: 'ERROR', error: field ? { code, message, field } : { code, message } });

const statusFaultCodes: Record<number, [string, string]> = {
  408: ['REQUEST_TIMEOUT', 'the request took too long to complete'],
  429: ['RATE_LIMITED', 'rate limit exceeded; slow down'],
  500: ['INTERNAL_ERROR', 'an unexpected error occurred'],
  502: ['BAD_GATEWAY', 'Bad Gateway'],
  503: ['SERVICE_UNAVAILABLE', 'the service is temporarily unavailable'],
  504: ['GATEWAY_TIMEOUT', 'Gateway Time-out'],
};

/** The HTML page a load balancer in front of the API sends for 502 and 504. */
const gatewayPage = (status: number, text: string) =>
  `<html>\r\n<head><title>${status} ${text}</title></head>\r\n<body>\r\n<center><h1>${status} ${text}</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n`;

// ---------------------------------------------------------------------------------------------
// Request validation

interface Invalid {
  readonly field: string;
  readonly message: string;
}

interface NewsQuery {
  readonly method: 'PAGE' | 'CURSOR';
  readonly start: string;
  readonly end: string;
  readonly size: number;
  /** PAGE: the page; CURSOR: the position in the cursor chain. */
  readonly page: number;
  /** CURSOR: the last article of the previous page (a keyset cursor). */
  readonly after?: { readonly publishedAt: number; readonly articleId: string };
  /** CURSOR: the offset of the next article in the view that issued the cursor. */
  readonly position?: number;
}

/** Inside a cursor: the range, the position in the chain, and a keyset (t, i), an offset (p) or both. */
const CursorSchema = z
  .strictObject({
    v: z.literal(1),
    s: z.string(),
    e: z.string(),
    t: z.number().int().optional(),
    i: z.string().optional(),
    p: z.number().int().nonnegative().optional(),
    n: z.number().int().positive(),
  })
  .refine((cursor) => (cursor.t !== undefined && cursor.i !== undefined) || cursor.p !== undefined);

const encodeCursor = (cursor: z.infer<typeof CursorSchema>): string =>
  Buffer.from(JSON.stringify(cursor)).toString('base64url');

function decodeCursor(value: string): z.infer<typeof CursorSchema> | undefined {
  try {
    const parsed = CursorSchema.safeParse(JSON.parse(Buffer.from(value, 'base64url').toString('utf8')));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

const isInteger = (value: unknown): value is number => typeof value === 'number' && Number.isInteger(value);

interface Limits {
  readonly maxPageSize: number;
  readonly maxRangeDays: number;
  readonly cursorMode: boolean;
}

function parseNewsBody(body: unknown, limits: Limits): NewsQuery | Invalid {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    return { field: 'body', message: 'the request body must be a JSON object' };
  }
  const fields = body as Record<string, unknown>;
  const methods = limits.cursorMode ? 'PAGE or CURSOR' : 'PAGE';
  const method = fields.paginationMethod;
  if (method === undefined) return { field: 'paginationMethod', message: `paginationMethod is required (${methods})` };
  if (method !== 'PAGE' && !(method === 'CURSOR' && limits.cursorMode)) {
    return { field: 'paginationMethod', message: `paginationMethod must be ${methods}` };
  }
  const size = fields.size;
  const sizeProblem = {
    field: 'size',
    message: `size must be an integer from 1 to ${limits.maxPageSize}`,
  };

  const cursorValue = fields.cursor;
  if (method === 'CURSOR' && cursorValue !== undefined && cursorValue !== null) {
    const cursor = typeof cursorValue === 'string' ? decodeCursor(cursorValue) : undefined;
    if (!cursor) return { field: 'cursor', message: 'cursor is not a cursor this API issued' };
    const start = fields.publishedAtStart ?? cursor.s;
    const end = fields.publishedAtEnd ?? cursor.e;
    if (start !== cursor.s || end !== cursor.e) {
      return { field: 'cursor', message: 'cursor belongs to a different publishedAtStart/publishedAtEnd range' };
    }
    if (!isInteger(size) || size < 1 || size > limits.maxPageSize) return sizeProblem;
    return {
      method,
      start: cursor.s,
      end: cursor.e,
      size,
      page: cursor.n,
      ...(cursor.t !== undefined && cursor.i !== undefined
        ? { after: { publishedAt: cursor.t, articleId: cursor.i } }
        : {}),
      ...(cursor.p === undefined ? {} : { position: cursor.p }),
    };
  }

  const dates: string[] = [];
  for (const field of ['publishedAtStart', 'publishedAtEnd'] as const) {
    const value = fields[field];
    if (value === undefined) return { field, message: `${field} is required (YYYY-MM-DD)` };
    if (typeof value !== 'string' || !ZoneCalendar.isDate(value)) {
      return { field, message: `${field} must be a calendar date written YYYY-MM-DD` };
    }
    dates.push(value);
  }
  const [start = '', end = ''] = dates;
  const days = ZoneCalendar.daysBetween(start, end) + 1;
  if (days < 1) return { field: 'publishedAtStart', message: 'publishedAtStart must not be after publishedAtEnd' };
  if (days > limits.maxRangeDays) {
    return {
      field: 'publishedAtEnd',
      message: `publishedAtStart..publishedAtEnd covers ${days} days; at most ${limits.maxRangeDays} (both ends included) are allowed`,
    };
  }
  let page = 1;
  if (method === 'PAGE') {
    if (fields.page === undefined) return { field: 'page', message: 'page is required (1 is the first page)' };
    if (!isInteger(fields.page) || fields.page < 1) return { field: 'page', message: 'page must be an integer >= 1' };
    page = fields.page;
  }
  if (size === undefined) return { field: 'size', message: 'size is required' };
  if (!isInteger(size) || size < 1 || size > limits.maxPageSize) return sizeProblem;
  return { method, start, end, size, page };
}

const isJsonContentType = (value: string | undefined): boolean =>
  value !== undefined && value.split(';')[0]?.trim().toLowerCase() === 'application/json';

const isLoopback = (address: string | undefined): boolean =>
  address === '127.0.0.1' || address === '::1' || address === '::ffff:127.0.0.1';

async function readBody(req: IncomingMessage, limit: number): Promise<string | undefined> {
  const chunks: Buffer[] = [];
  let length = 0;
  for await (const chunk of req) {
    const buffer = chunk as Buffer;
    length += buffer.length;
    // Keep draining past the limit so the connection stays usable for the 413 answer.
    if (length <= limit) chunks.push(buffer);
  }
  return length > limit ? undefined : Buffer.concat(chunks).toString('utf8');
}

type ParsedBody = { ok: true; value: unknown } | { ok: false } | undefined;

function parseJson(text: string): NonNullable<ParsedBody> {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    return { ok: false };
  }
}

// ---------------------------------------------------------------------------------------------
// The server

interface KeyState {
  readonly spec: SimKeySpec;
  revoked: boolean;
}

/** How the simulator answers one API request. */
interface Decision {
  readonly status: number;
  readonly body: string;
  readonly contentType?: string;
  readonly headers?: Readonly<Record<string, string>>;
  readonly keyName?: string;
  readonly page?: number;
  readonly fault?: ActiveFault;
  readonly articleCount?: number;
}

function checkOptions(options: NewsSimulatorOptions): void {
  const integer = (name: string, value: number | undefined, min: number, max = Number.MAX_SAFE_INTEGER) => {
    if (value !== undefined && (!Number.isInteger(value) || value < min || value > max)) {
      throw new RangeError(`${name} must be an integer from ${min} to ${max}, got ${value}`);
    }
  };
  integer('port', options.port, 0, 65_535);
  integer('seed', options.seed, Number.MIN_SAFE_INTEGER);
  integer('generate.days', options.generate?.days, 0, 3660);
  integer('generate.perDay', options.generate?.perDay, 0, 10_000_000);
  integer('maxPageSize', options.maxPageSize, 1);
  integer('maxRangeDays', options.maxRangeDays, 1);
  for (const name of ['syndicationRate', 'updateRate'] as const) {
    const rate = options[name];
    if (rate !== undefined && !(Number.isFinite(rate) && rate >= 0 && rate <= 1)) {
      throw new RangeError(`${name} must be a number from 0 to 1, got ${rate}`);
    }
  }
  if (options.order !== undefined && !['newest-first', 'oldest-first', 'unordered'].includes(options.order)) {
    throw new RangeError(`order must be newest-first, oldest-first or unordered, got ${String(options.order)}`);
  }
}

const defaultKeys = (): Record<string, SimKeySpec> => ({
  [`sim-live-${randomBytes(16).toString('hex')}`]: {
    name: 'sandbox-live',
    kind: 'live',
    media: [...MEDIA, ...SYNDICATION_MEDIA].map((media) => media.code).filter((code) => code !== OUT_OF_SCOPE_MEDIA),
  },
  [`sim-test-${randomBytes(16).toString('hex')}`]: { name: 'sandbox-test', kind: 'test', media: ['M001', 'M002'] },
});

/**
 * Starts the simulator on 127.0.0.1 over HTTPS. Resolves once it is listening.
 *
 * @example
 * const sim = await startNewsSimulator({ ca, now: () => Date.parse('2026-11-22T03:00:00Z'), seed: 7 });
 * sim.faults.inject({ kind: 'status', status: 429, retryAfter: '1' });
 */
export async function startNewsSimulator(options: NewsSimulatorOptions = {}): Promise<NewsSimulator> {
  checkOptions(options);
  const now = options.now ?? Date.now;
  const timeZone = options.timeZone ?? 'Asia/Seoul';
  const calendar = new ZoneCalendar(timeZone);
  const initialOrder = options.order ?? 'newest-first';
  const timestampFormat = options.timestampFormat ?? 'iso';
  const limits: Limits = {
    maxPageSize: options.maxPageSize ?? 100,
    maxRangeDays: options.maxRangeDays ?? 31,
    cursorMode: options.cursorMode ?? false,
  };
  const seed = options.seed ?? 1;
  const perDay = options.generate?.perDay ?? 200;

  const factory = new ArticleFactory(seed, calendar, {
    ...(options.syndicationRate === undefined ? {} : { syndicationRate: options.syndicationRate }),
    ...(options.updateRate === undefined ? {} : { updateRate: options.updateRate }),
  });
  const store = new ArticleStore(calendar, initialOrder, seed);
  const startedAt = now();
  store.upsert(
    options.articles
      ? options.articles.map((input) => factory.fromInput(input, startedAt))
      : seedArticles(factory, { days: options.generate?.days ?? 3, perDay, now: startedAt }),
  );
  store.markSample();

  // Live feed: seeded arrivals at `perDay` per 24 hours of the simulator's clock. Copies and
  // revisions of generated articles appear as the clock reaches them, live or not: the provider's
  // world moves on whether or not new stories are being written.
  let fedUntil = startedAt;
  /** Scheduled bursts' articles not published yet, oldest first. */
  const scheduled: SimArticle[] = [];
  let feedCarry = 0;
  const advanceFeed = () => {
    const at = now();
    if (at <= fedUntil) return;
    if (options.generate?.live) {
      const expected = ((at - fedUntil) * perDay) / DAY_MS + feedCarry;
      const count = Math.floor(expected);
      feedCarry = expected - count;
      if (count > 0) store.upsert(factory.generate(factory.instants(fedUntil + 1, at + 1, count), MEDIA, at));
    }
    const due = factory.releaseDue(at);
    store.upsert(due.articles);
    const split = scheduled.findIndex((article) => article.publishedAt > at);
    const ready = scheduled.splice(0, split === -1 ? scheduled.length : split);
    if (ready.length > 0) store.upsert(ready);
    const revised = due.revisions.flatMap((revision) => {
      const current = store.get(revision.articleId);
      return current ? [applyRevision(current, revision)] : [];
    });
    store.upsert(revised);
    fedUntil = at;
  };

  const keys = new Map<string, KeyState>(
    Object.entries(options.keys ?? defaultKeys()).map(([key, spec]) => [key, { spec, revoked: false }]),
  );
  const firstKey = (kind: SimKeySpec['kind']) => [...keys].find(([, state]) => state.spec.kind === kind)?.[0];
  const liveKey = firstKey('live');
  const testKey = firstKey('test');

  const scopeOf = (spec: SimKeySpec): Scope => {
    const media = spec.media === '*' ? undefined : new Set(spec.media);
    return {
      signature: `${spec.kind}:${media ? [...media].sort().join(',') : '*'}`,
      includes: (code) => media === undefined || media.has(code),
      sampleOnly: spec.kind === 'test',
    };
  };

  const pending: ActiveFault[] = [];
  const takeFault = (page: number): ActiveFault | undefined => {
    const index = pending.findIndex((fault) => fault.page === undefined || fault.page === page);
    const fault = pending[index];
    if (!fault) return undefined;
    if (fault.times <= 1) pending.splice(index, 1);
    else pending[index] = { ...fault, times: fault.times - 1 };
    return fault;
  };

  const records: SimRequestRecord[] = [];
  let requestSeq = 0;
  const record = (entry: SimRequestRecord) => {
    records.push(entry);
    if (records.length > MAX_RECORDED_REQUESTS) records.splice(0, records.length - MAX_RECORDED_REQUESTS);
    options.onRequest?.(entry);
  };

  const wireCache = new WeakMap<SimArticle, object>();
  const toWire = (article: SimArticle): object => {
    let wire = wireCache.get(article);
    if (!wire) {
      wire = wireArticle(article, timestampFormat, timeZone);
      wireCache.set(article, wire);
    }
    return wire;
  };

  /** Publishes a shift fault's articles so they come first in the response order. */
  const shiftPages = (spec: SimKeySpec, query: NewsQuery, insert: number) => {
    const rangeStart = calendar.startOf(query.start);
    const rangeEnd = calendar.endOf(query.end) - 1;
    let at = rangeStart;
    if (store.order !== 'oldest-first') {
      // A new arrival: now, but never older than what the range already holds and never outside it.
      const newest = store.view(scopeOf(spec), query.start, query.end)[0]?.publishedAt ?? rangeStart;
      at = Math.min(Math.max(now(), newest, rangeStart), rangeEnd);
    }
    const media = spec.media === '*' ? MEDIA : spec.media.map((code) => mediaOf(code));
    store.upsert(factory.generate(new Array<number>(insert).fill(at), media));
  };

  const answer = (spec: SimKeySpec, query: NewsQuery, fault: ActiveFault | undefined) => {
    if (fault?.kind === 'shift') shiftPages(spec, query, fault.insert);
    const view = store.view(scopeOf(spec), query.start, query.end);
    const sorted = store.order !== 'unordered';
    const from =
      query.method === 'PAGE'
        ? (query.page - 1) * query.size
        : query.after && sorted
          ? store.positionAfter(view, query.after.publishedAt, query.after.articleId)
          : (query.position ?? 0);
    let items = view.slice(from, from + query.size);
    if (fault?.kind === 'duplicate') {
      const repeated = from > 0 ? view[from - 1] : items[0];
      if (repeated) items = [repeated, ...items];
    }
    const articles =
      fault?.kind === 'poison'
        ? items.map((item) => ({ articleId: item.articleId, headline_broken: true, publishedAt: 'not a time' }))
        : items.map(toWire);
    if (query.method === 'PAGE') {
      return {
        count: articles.length,
        payload: { status: 'OK', totalCount: view.length, page: query.page, size: query.size, articles },
      };
    }
    const last = view[from + query.size - 1];
    const nextCursor =
      last && from + query.size < view.length
        ? encodeCursor({
            v: 1,
            s: query.start,
            e: query.end,
            ...(sorted ? { t: last.publishedAt, i: last.articleId } : {}),
            p: from + query.size,
            n: query.page + 1,
          })
        : null;
    return { count: articles.length, payload: { status: 'OK', articles, nextCursor } };
  };

  /** `raw` is undefined when the body was too large; `parsed` when it was empty or too large. */
  const decide = (req: IncomingMessage, path: string, raw: string | undefined, parsed: ParsedBody): Decision => {
    const fail = (status: number, code: string, message: string, extra: Partial<Decision> = {}, field?: string) => ({
      ...extra,
      status,
      body: errorBody(code, message, field),
    });
    if (path !== '/news') return fail(404, 'NOT_FOUND', `there is no ${path}; the API has POST /news`);
    if (req.method !== 'POST') {
      return fail(405, 'METHOD_NOT_ALLOWED', `${req.method} is not allowed on /news; use POST`, {
        headers: { allow: 'POST' },
      });
    }
    if (!isJsonContentType(req.headers['content-type'])) {
      return fail(415, 'UNSUPPORTED_MEDIA_TYPE', 'Content-Type must be application/json');
    }
    const presented = req.headers['x-api-key'];
    const key = typeof presented === 'string' ? keys.get(presented) : undefined;
    const requestedPage = parsed?.ok ? (parsed.value as { page?: unknown } | null)?.page : undefined;
    const context: Partial<Decision> = {
      ...(key ? { keyName: key.spec.name } : {}),
      ...(isInteger(requestedPage) ? { page: requestedPage } : {}),
    };
    if (presented === undefined || presented === '') {
      return fail(401, 'UNAUTHORIZED', 'the X-API-KEY header is required', context);
    }
    if (!key) return fail(401, 'UNAUTHORIZED', 'the API key is not valid', context);
    if (key.revoked) return fail(401, 'UNAUTHORIZED', 'the API key has been revoked', context);
    if (key.spec.media !== '*' && key.spec.media.length === 0) {
      return fail(403, 'FORBIDDEN_SCOPE', 'the request is outside the contracted media scope of this API key', context);
    }
    if (raw === undefined) {
      return fail(413, 'PAYLOAD_TOO_LARGE', `the request body exceeds ${MAX_NEWS_BODY_BYTES} bytes`, context);
    }
    if (!parsed?.ok) return fail(400, 'INVALID_PARAMETER', 'the request body must be valid JSON', context, 'body');
    const query = parseNewsBody(parsed.value, limits);
    if ('field' in query) return fail(400, 'INVALID_PARAMETER', query.message, context, query.field);

    const fault = takeFault(query.page);
    const ok = { ...context, page: query.page, ...(fault ? { fault } : {}) };
    switch (fault?.kind) {
      case 'status': {
        const [code, message] = statusFaultCodes[fault.status] ?? ['ERROR', 'error'];
        const headers: Record<string, string> = {};
        if (fault.retryAfter !== undefined) headers['retry-after'] = fault.retryAfter;
        if (fault.status === 408) headers.connection = 'close';
        if (fault.status === 502 || fault.status === 504) {
          return {
            ...ok,
            status: fault.status,
            body: gatewayPage(fault.status, message),
            contentType: 'text/html',
            headers,
          };
        }
        return { ...ok, status: fault.status, body: errorBody(code, message), headers };
      }
      case 'error-body':
        return {
          ...ok,
          status: 200,
          body: errorBody(
            fault.code ?? 'INTERNAL_ERROR',
            fault.message ?? 'a temporary error occurred while searching; try again later',
          ),
        };
      default: {
        if (options.pastEndPages === 'refuse' && query.method === 'PAGE' && query.page > 1) {
          const listed = store.view(scopeOf(key.spec), query.start, query.end).length;
          if ((query.page - 1) * query.size >= listed) {
            return fail(400, 'INVALID_PAGE', `page ${query.page} is past the last page of the results`, ok, 'page');
          }
        }
        const { payload, count } = answer(key.spec, query, fault);
        const json = JSON.stringify(payload);
        // Half the text can never be valid JSON: the closing brace of the envelope is gone.
        const text = fault?.kind === 'malformed' ? json.slice(0, Math.floor(json.length / 2)) : json;
        return { ...ok, status: 200, body: text, articleCount: count };
      }
    }
  };

  const shutdown = new AbortController();

  const send = (res: ServerResponse, decision: Pick<Decision, 'status' | 'body' | 'contentType' | 'headers'>) => {
    if (res.destroyed || res.writableEnded) return;
    res.writeHead(decision.status, {
      'content-type': `${decision.contentType ?? 'application/json'}; charset=utf-8`,
      'content-length': Buffer.byteLength(decision.body),
      ...decision.headers,
    });
    res.end(decision.body);
  };

  const handleApi = async (req: IncomingMessage, res: ServerResponse, path: string) => {
    const time = now();
    advanceFeed();
    const raw = await readBody(req, MAX_NEWS_BODY_BYTES);
    const parsed = raw ? parseJson(raw) : undefined;
    const decision = decide(req, path, raw, parsed);
    const dropped = decision.fault?.kind === 'drop';
    record({
      id: ++requestSeq,
      time,
      method: req.method ?? '',
      path,
      status: dropped ? null : decision.status,
      ...(decision.keyName === undefined ? {} : { keyName: decision.keyName }),
      ...(decision.page === undefined ? {} : { page: decision.page }),
      ...(parsed === undefined ? {} : { body: parsed.ok ? parsed.value : raw }),
      ...(decision.fault ? { fault: decision.fault.kind } : {}),
      ...(decision.articleCount === undefined ? {} : { articleCount: decision.articleCount }),
    });
    if (dropped) {
      req.socket.destroy();
      return;
    }
    if (decision.fault?.kind === 'delay') {
      const clientGone = new AbortController();
      res.once('close', () => clientGone.abort());
      try {
        await sleep(decision.fault.ms, undefined, { signal: AbortSignal.any([shutdown.signal, clientGone.signal]) });
      } catch {
        return; // the client gave up or the simulator is stopping: nobody is left to answer
      }
    }
    send(res, decision);
  };

  const handleAdmin = async (req: IncomingMessage, res: ServerResponse, path: string, search: URLSearchParams) => {
    const reply = (status: number, payload: unknown) => send(res, { status, body: JSON.stringify(payload) });
    const invalid = (message: string) =>
      send(res, { status: 400, body: errorBody('INVALID_PARAMETER', message, 'body') });
    if (!isLoopback(req.socket.remoteAddress)) {
      send(res, { status: 403, body: errorBody('FORBIDDEN', 'the admin API only answers loopback clients') });
      return;
    }
    const raw = await readBody(req, MAX_ADMIN_BODY_BYTES);
    if (raw === undefined) {
      send(res, { status: 413, body: errorBody('PAYLOAD_TOO_LARGE', 'the request body is too large') });
      return;
    }
    const jsonList = (): unknown[] | undefined => {
      const parsed = parseJson(raw);
      if (!parsed.ok) return undefined;
      return Array.isArray(parsed.value) ? parsed.value : [parsed.value];
    };
    const route = `${req.method} ${path}`;
    switch (route) {
      case 'POST /_sim/faults': {
        const list = jsonList();
        if (!list) return invalid('the body must be a fault or a list of faults as JSON');
        const checked = z.array(SimFaultSchema).safeParse(list);
        if (!checked.success) return invalid(describeIssues(checked.error));
        pending.push(...checked.data);
        return reply(201, { status: 'OK', pending: pending.length });
      }
      case 'GET /_sim/faults':
        return reply(200, { status: 'OK', faults: pending });
      case 'DELETE /_sim/faults': {
        const cleared = pending.splice(0).length;
        return reply(200, { status: 'OK', cleared });
      }
      case 'POST /_sim/articles': {
        const list = jsonList();
        if (!list) return invalid('the body must be an article or a list of articles as JSON');
        const checked = z.array(SimArticleInputSchema).safeParse(list);
        if (!checked.success) return invalid(describeIssues(checked.error));
        const published = simulator.publish(...checked.data);
        return reply(201, { status: 'OK', articleIds: published.map((article) => article.articleId) });
      }
      case 'GET /_sim/requests': {
        const since = Number(search.get('since') ?? 0);
        return reply(200, { status: 'OK', requests: records.filter((entry) => entry.id > since) });
      }
      default: {
        const known = ['/_sim/faults', '/_sim/articles', '/_sim/requests'].includes(path);
        return known
          ? send(res, {
              status: 405,
              body: errorBody('METHOD_NOT_ALLOWED', `${req.method} is not allowed on ${path}`),
            })
          : send(res, { status: 404, body: errorBody('NOT_FOUND', `there is no ${path}`) });
      }
    }
  };

  const ca = options.ca ?? (await createCertificateAuthority());
  const certificate = await issueLoopbackCertificate(ca);
  const server = createServer({ key: certificate.key, cert: certificate.cert }, (req, res) => {
    const url = new URL(req.url ?? '/', 'https://127.0.0.1');
    const handled =
      url.pathname === '/_sim' || url.pathname.startsWith('/_sim/')
        ? handleAdmin(req, res, url.pathname, url.searchParams)
        : handleApi(req, res, url.pathname);
    handled.catch((error: unknown) => {
      // A bug in the simulator must show up as a 500 in the test that hit it, not kill the server.
      const message = error instanceof Error ? error.message : String(error);
      send(res, { status: 500, body: errorBody('SIMULATOR_ERROR', message) });
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;

  let stopping: Promise<void> | undefined;
  const simulator: NewsSimulator = {
    url: `https://127.0.0.1:${port}`,
    caCert: ca.cert,
    get liveKey() {
      if (liveKey === undefined) throw new Error('the simulator was started without a live key');
      return liveKey;
    },
    get testKey() {
      if (testKey === undefined) throw new Error('the simulator was started without a test key');
      return testKey;
    },
    timeZone,
    articles() {
      advanceFeed();
      return store.all();
    },
    get order() {
      return store.order;
    },
    setOrder(order) {
      if (order !== 'newest-first' && order !== 'oldest-first' && order !== 'unordered') {
        throw new RangeError(`order must be newest-first, oldest-first or unordered, got ${String(order)}`);
      }
      store.order = order;
    },
    scheduleBurst(burst) {
      const articles = burstArticles(burst).map((input) => factory.fromInput(input, now()));
      scheduled.push(...articles);
      scheduled.sort(compareAscending);
      return articles.length;
    },
    publish(...inputs) {
      const at = now();
      const articles = inputs.map((input) => factory.fromInput(input, at));
      store.upsert(articles);
      return articles;
    },
    faults: {
      inject(fault) {
        pending.push(SimFaultSchema.parse(fault));
      },
      clear() {
        pending.splice(0);
      },
      pending() {
        return pending.map((fault) => ({ ...fault }));
      },
    },
    get requests() {
      return [...records];
    },
    setKey(key, spec) {
      keys.set(key, { spec, revoked: false });
    },
    revokeKey(key) {
      const state = keys.get(key);
      if (state) state.revoked = true;
    },
    stop() {
      stopping ??= new Promise<void>((resolve) => {
        shutdown.abort();
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return stopping;
    },
  };
  return simulator;
}
