/**
 * The provider client against a real HTTPS server on loopback, with a certificate from the test
 * run's throw-away CA. Each test scripts the server's answers; `sleep` is injected so backoff is
 * observed without waiting.
 */
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import tls from 'node:tls';
import { inspect } from 'node:util';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, inject, it, onTestFinished } from 'vitest';
import {
  PageCapError,
  ProviderAuthError,
  ProviderError,
  ProviderResponseError,
  ProviderStalledError,
} from '#core/errors';
import type { ArticlePage, Log, SecretSource } from '#core/ports';
import { type ProviderConfigInput, parseProviderConfig } from '#provider/config';
import { NewsLookupClient, trustingAlso } from '#provider/news-client';
import { issueLoopbackCertificate } from '#sandbox/tls';
import { collect, failure } from '#test/pages';

// --- Scripted HTTPS server ------------------------------------------------------------------------

interface Received {
  readonly method: string | undefined;
  readonly url: string | undefined;
  readonly headers: IncomingHttpHeaders;
  readonly rawBody: string;
  readonly body: Record<string, unknown>;
  /** Resolves when the client's connection for this request closes (abort, timeout). */
  readonly closed: Promise<void>;
}

type Reply =
  | {
      readonly status: number;
      readonly json?: unknown;
      readonly text?: string;
      readonly headers?: Record<string, string>;
    }
  | { readonly hang: true };

type Script = (request: Received, index: number) => Reply | Promise<Reply>;

let server: Server;
let origin: string;
let caPem: string;
let script: Script;
let received: Received[];

function handle(req: IncomingMessage, res: ServerResponse): void {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    const rawBody = Buffer.concat(chunks).toString('utf8');
    let body: Record<string, unknown> = {};
    try {
      body = JSON.parse(rawBody) as Record<string, unknown>;
    } catch {
      // recorded as received; the test asserts on rawBody
    }
    const closed = new Promise<void>((resolve) => res.on('close', () => resolve()));
    const request: Received = { method: req.method, url: req.url, headers: req.headers, rawBody, body, closed };
    received.push(request);
    void Promise.resolve(script(request, received.length - 1)).then((reply) => {
      if ('hang' in reply) return;
      const text = reply.text ?? JSON.stringify(reply.json ?? {});
      res.writeHead(reply.status, { 'content-type': 'application/json', ...reply.headers });
      res.end(text);
    });
  });
}

beforeAll(async () => {
  const ca = inject('sandboxCa');
  caPem = ca.cert;
  const certificate = await issueLoopbackCertificate(ca);
  server = createServer({ cert: certificate.cert, key: certificate.key }, handle);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

// --- Client fixtures ------------------------------------------------------------------------------

class RecordingLog implements Log {
  readonly lines: { level: string; message: string; extra?: Record<string, unknown> | undefined }[] = [];
  debug(message: string, extra?: Record<string, unknown>) {
    this.lines.push({ level: 'debug', message, extra });
  }
  info(message: string, extra?: Record<string, unknown>) {
    this.lines.push({ level: 'info', message, extra });
  }
  warn(message: string, extra?: Record<string, unknown>) {
    this.lines.push({ level: 'warn', message, extra });
  }
  error(message: string, extra?: Record<string, unknown>) {
    this.lines.push({ level: 'error', message, extra });
  }
  text(): string {
    return this.lines.map((line) => `${line.message} ${JSON.stringify(line.extra ?? {})}`).join('\n');
  }
}

/** A key source whose key rotates to `next` when forced to refresh. */
class RotatingSecret implements SecretSource {
  readonly calls: { forceRefresh?: boolean }[] = [];
  constructor(
    private current: string,
    private readonly next?: string,
  ) {}
  async apiKey(options?: { forceRefresh?: boolean }): Promise<string> {
    this.calls.push({ ...options });
    if (options?.forceRefresh && this.next !== undefined) this.current = this.next;
    return this.current;
  }
}

const clients: NewsLookupClient[] = [];

interface Harness {
  readonly client: NewsLookupClient;
  readonly sleeps: number[];
  readonly log: RecordingLog;
  readonly secret: RotatingSecret;
}

function harness(
  overrides: Partial<ProviderConfigInput> = {},
  options: {
    secret?: RotatingSecret;
    withCa?: boolean;
    sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  } = {},
): Harness {
  const sleeps: number[] = [];
  const log = new RecordingLog();
  const secret = options.secret ?? new RotatingSecret('test-key-1');
  const config = parseProviderConfig({
    baseUrl: `${origin}/api/v2/`,
    pageSize: 100,
    maxAttempts: 4,
    readTimeoutMs: 2000,
    connectTimeoutMs: 2000,
    ...(options.withCa === false ? {} : { caPem }),
    ...overrides,
  });
  const client = new NewsLookupClient({
    config,
    secrets: secret,
    log,
    random: () => 0.5,
    sleep:
      options.sleep ??
      (async (ms) => {
        sleeps.push(ms);
      }),
  });
  clients.push(client);
  return { client, sleeps, log, secret };
}

beforeEach(() => {
  received = [];
  script = () => ({ status: 500, json: { status: 'ERROR', error: { code: 'UNSCRIPTED', message: 'no script' } } });
});

afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.close()));
});

const range = { from: '2026-11-21', to: '2026-11-22' };

const article = (id: string) => ({
  articleId: id,
  title: `Headline ${id}`,
  summary: `Summary ${id}`,
  url: `https://news.example.com/${id}`,
  publishedAt: '2026-11-22T09:15:00+09:00',
  categories: [{ code: '002001000', name: 'Economy > Finance' }],
  media: { code: 'M001', name: 'Daily Example' },
  status: 'PUBLISHED',
});

const articles = (n: number, prefix = 'a') => Array.from({ length: n }, (_, i) => article(`${prefix}${i}`));

/** The simulator's PAGE response for `all`, read at the request's page and size. */
function pageOf(all: readonly unknown[], request: Received): Reply {
  const page = Number(request.body.page);
  const size = Number(request.body.size);
  return {
    status: 200,
    json: { status: 'OK', totalCount: all.length, page, size, articles: all.slice((page - 1) * size, page * size) },
  };
}

const okEmpty: Reply = { status: 200, json: { status: 'OK', totalCount: 0, page: 1, size: 100, articles: [] } };
const errorBody = (code: string, message: string) => ({ status: 'ERROR', error: { code, message } });

const ids = (pages: readonly ArticlePage[]) => pages.flatMap((page) => page.articles.map((a) => a.id));

// --- Tests ----------------------------------------------------------------------------------------

describe('NewsLookupClient over HTTPS', () => {
  it('sends exactly the documented request', async () => {
    script = () => okEmpty;
    const { client } = harness({ pageSize: 50 });
    await collect(client.pages(range));
    expect(received).toHaveLength(1);
    const [request] = received;
    expect(request?.method).toBe('POST');
    expect(request?.url).toBe('/api/v2/news');
    expect(request?.headers['content-type']).toBe('application/json');
    expect(request?.headers.accept).toBe('application/json');
    expect(request?.headers['x-api-key']).toBe('test-key-1');
    expect(request?.rawBody).toBe(
      '{"paginationMethod":"PAGE","publishedAtStart":"2026-11-21","publishedAtEnd":"2026-11-22","page":1,"size":50}',
    );
  });

  it('requestSent: resolves once the request is on its way, before its answer, and not before it is sent', async () => {
    // The server holds the answer until the test lets it go: what happens between the two is seen.
    let answer: (reply: Reply) => void = () => undefined;
    let arrived: () => void = () => undefined;
    const requestArrived = new Promise<void>((resolve) => (arrived = resolve));
    script = () => {
      arrived();
      return new Promise<Reply>((resolve) => (answer = resolve));
    };
    const { client } = harness();
    const events: string[] = [];
    // The client's TLS connection is made before anything can be sent on it: a promise that
    // resolved when the request was created (undici:request:create) would come before it.
    const connected = () => events.push('connected');
    subscribe('undici:client:connected', connected);
    onTestFinished(() => {
      unsubscribe('undici:client:connected', connected);
    });
    const sent = client.requestSent(new AbortController().signal).then(() => events.push('sent'));
    // Turns of the event loop in which nothing is sent: nothing is announced either.
    for (let turn = 0; turn < 3; turn++) await new Promise((resolve) => setImmediate(resolve));
    expect(events).toEqual([]);

    const read = collect(client.pages(range)).then(() => events.push('answered'));
    await sent;
    expect(events).toEqual(['connected', 'sent']);
    // The request the promise announced reached the server.
    await requestArrived;
    expect(received).toHaveLength(1);
    answer(okEmpty);
    await read;
    expect(events).toEqual(['connected', 'sent', 'answered']);
  });

  it('requestSent: ends with the signal’s reason when it aborts first, and a request to another origin does not count', async () => {
    const { client } = harness();
    const other = harness({ baseUrl: `${origin.replace('127.0.0.1', 'localhost')}/api/v2/` });
    script = () => okEmpty;
    const stop = new AbortController();
    let settled = false;
    const waiting = client.requestSent(stop.signal).finally(() => {
      settled = true;
    });
    await collect(other.client.pages(range));
    expect(received).toHaveLength(1);
    expect(settled).toBe(false);
    stop.abort(new Error('the run ended'));
    await expect(waiting).rejects.toThrow('the run ended');
    await expect(client.requestSent(stop.signal)).rejects.toThrow('the run ended');
  });

  it('maps the simulator response into articles', async () => {
    script = (request) => pageOf(articles(3), request);
    const { client } = harness();
    const [page] = await collect(client.pages(range));
    expect(page).toMatchObject({ pageNumber: 1, totalCount: 3, skipped: [] });
    expect(page?.articles[0]).toMatchObject({
      key: 'id:a0',
      title: 'Headline a0',
      publishedAt: Date.UTC(2026, 10, 22, 0, 15),
      categories: ['002001000'],
      media: 'M001',
      status: 'PUBLISHED',
    });
  });

  it('waits for Retry-After on 429, then succeeds', async () => {
    script = (_r, i) =>
      i === 0
        ? { status: 429, headers: { 'retry-after': '3' }, json: errorBody('RATE_LIMITED', 'slow down') }
        : okEmpty;
    const { client, sleeps, log } = harness();
    await collect(client.pages(range));
    expect(received).toHaveLength(2);
    expect(sleeps).toEqual([3000]);
    const warning = log.lines.find((line) => line.level === 'warn');
    expect(warning?.extra).toMatchObject({ status: 429, attempt: 1, delayMs: 3000 });
  });

  it('backs off with jitter on 429 without Retry-After', async () => {
    script = (_r, i) => (i < 2 ? { status: 429, json: errorBody('RATE_LIMITED', 'slow down') } : okEmpty);
    const { client, sleeps } = harness({ baseDelayMs: 1000, maxDelayMs: 60_000 });
    await collect(client.pages(range));
    // random() = 0.5 of 1000 and 2000 ms.
    expect(sleeps).toEqual([500, 1000]);
  });

  it('rides out a 503 storm', async () => {
    script = (request, i) => (i < 3 ? { status: 503, text: 'upstream unavailable' } : pageOf(articles(2), request));
    const { client, sleeps } = harness();
    const pages = await collect(client.pages(range));
    expect(ids(pages)).toEqual(['a0', 'a1']);
    expect(received).toHaveLength(4);
    expect(sleeps).toHaveLength(3);
  });

  it('gives up after maxAttempts of 5xx with a retryable ProviderError', async () => {
    script = () => ({ status: 502, json: errorBody('BAD_GATEWAY', 'proxy error') });
    const { client } = harness({ maxAttempts: 3 });
    const error = await failure(client.pages(range));
    expect(error).toBeInstanceOf(ProviderError);
    expect(error).not.toBeInstanceOf(ProviderAuthError);
    expect((error as ProviderError).retryable).toBe(true);
    expect((error as ProviderError).status).toBe(502);
    expect(error.message).toContain('failed after 3 attempt(s): HTTP 502: error: BAD_GATEWAY: proxy error');
    expect(received).toHaveLength(3);
  });

  it.each([
    [400, 'INVALID_PARAMETER'],
    [422, 'UNPROCESSABLE'],
  ])('does not retry HTTP %i', async (status, code) => {
    script = () => ({ status, json: errorBody(code, 'size must be <= 50') });
    const { client, sleeps } = harness();
    const error = await failure(client.pages(range));
    expect(error).toBeInstanceOf(ProviderError);
    expect((error as ProviderError).retryable).toBe(false);
    expect(error.message).toContain(`HTTP ${status}: error: ${code}: size must be <= 50`);
    expect(received).toHaveLength(1);
    expect(sleeps).toEqual([]);
  });

  it('does not retry 403 and says the key may be outside its media scope', async () => {
    script = () => ({ status: 403, json: errorBody('FORBIDDEN', 'media not in contract') });
    const { client, secret } = harness();
    const error = await failure(client.pages(range));
    expect(error).toBeInstanceOf(ProviderAuthError);
    expect((error as ProviderAuthError).status).toBe(403);
    expect(error.message).toContain('the API key lacks access');
    expect(error.message).toContain('outside the media scope contracted for this key');
    expect(received).toHaveLength(1);
    expect(secret.calls.some((call) => call.forceRefresh)).toBe(false);
  });

  it('re-reads a rotated key once after 401 and succeeds with it', async () => {
    script = (request) =>
      request.headers['x-api-key'] === 'rotated-key'
        ? okEmpty
        : { status: 401, json: errorBody('UNAUTHORIZED', 'invalid key') };
    const secret = new RotatingSecret('stale-key', 'rotated-key');
    const { client, sleeps } = harness({}, { secret });
    await collect(client.pages(range));
    expect(received.map((r) => r.headers['x-api-key'])).toEqual(['stale-key', 'rotated-key']);
    expect(secret.calls.filter((call) => call.forceRefresh)).toHaveLength(1);
    expect(sleeps).toEqual([]);
  });

  it('fails with ProviderAuthError when the refreshed key is refused too', async () => {
    script = () => ({ status: 401, json: errorBody('UNAUTHORIZED', 'invalid key') });
    const secret = new RotatingSecret('bad-key', 'still-bad-key');
    const { client } = harness({}, { secret });
    const error = await failure(client.pages(range));
    expect(error).toBeInstanceOf(ProviderAuthError);
    expect((error as ProviderAuthError).status).toBe(401);
    expect(error.message).toContain('also after re-reading it from Secrets Manager');
    expect(received).toHaveLength(2);
    expect(secret.calls.filter((call) => call.forceRefresh)).toHaveLength(1);
  });

  it('retries an error reported in a 200 body, then succeeds', async () => {
    script = (request, i) =>
      i === 0 ? { status: 200, json: errorBody('INTERNAL', 'search backend timeout') } : pageOf(articles(1), request);
    const { client, sleeps, log } = harness();
    const pages = await collect(client.pages(range));
    expect(ids(pages)).toEqual(['a0']);
    expect(sleeps).toHaveLength(1);
    expect(log.text()).toContain('search backend timeout');
  });

  it('fails retryably when every 200 carries a body error', async () => {
    script = () => ({ status: 200, json: errorBody('INTERNAL', 'search backend timeout') });
    const { client } = harness({ maxAttempts: 2 });
    const error = await failure(client.pages(range));
    expect(error).toBeInstanceOf(ProviderError);
    expect((error as ProviderError).retryable).toBe(true);
    expect(error.message).toContain('reporting an error in the body: error: INTERNAL: search backend timeout');
    expect(received).toHaveLength(2);
  });

  it('retries malformed (truncated) JSON, then succeeds', async () => {
    script = (request, i) =>
      i === 0 ? { status: 200, text: '{"status":"OK","articles":[{"arti' } : pageOf(articles(1), request);
    const { client } = harness();
    expect(ids(await collect(client.pages(range)))).toEqual(['a0']);
    expect(received).toHaveLength(2);
  });

  it('does not retry a 200 that does not fit the mapping', async () => {
    script = () => ({ status: 200, json: { status: 'OK', payload: [] } });
    const { client } = harness();
    const error = await failure(client.pages(range));
    expect(error).toBeInstanceOf(ProviderResponseError);
    expect(received).toHaveLength(1);
  });

  it('times out a hanging server, retries, then fails', async () => {
    script = () => ({ hang: true });
    const { client, sleeps } = harness({ readTimeoutMs: 150, maxAttempts: 2 });
    const error = await failure(client.pages(range));
    expect(error).toBeInstanceOf(ProviderError);
    expect((error as ProviderError).retryable).toBe(true);
    expect(error.message).toContain('no response within 150 ms (NEWS_API_READ_TIMEOUT_MS)');
    expect(received).toHaveLength(2);
    expect(sleeps).toHaveLength(1);
    await Promise.all(received.map((r) => r.closed));
  });

  it('enforces the page cap with the total known, naming the range and the fix', async () => {
    script = (request) => pageOf(articles(501), request);
    const { client } = harness({ maxPages: 5 });
    const pages: ArticlePage[] = [];
    let error: unknown;
    try {
      for await (const page of client.pages(range)) pages.push(page);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(PageCapError);
    expect((error as Error).message).toContain('2026-11-21..2026-11-22 needs more than 5 pages');
    expect((error as Error).message).toContain('the provider reports 501 articles');
    expect((error as Error).message).toContain('raise NEWS_API_MAX_PAGES or shorten the schedule interval');
    // A total beyond the cap is not trusted: the pages up to the cap are read (and delivered).
    expect(received).toHaveLength(5);
    expect(pages).toHaveLength(5);
  });

  it('fetches pages concurrently once the total is known, in exactly ceil(N/size) requests, yielded in order', async () => {
    const all = articles(950);
    let inFlight = 0;
    let maxInFlight = 0;
    // Hold pages 2-5 until all four arrived: a client that fetched one page at a time would hang here.
    const gate: (() => void)[] = [];
    script = async (request) => {
      inFlight += 1;
      maxInFlight = Math.max(maxInFlight, inFlight);
      const page = Number(request.body.page);
      if (page >= 2 && page <= 5) {
        await new Promise<void>((resolve) => {
          gate.push(resolve);
          if (gate.length === 4) for (const open of gate) open();
        });
      }
      inFlight -= 1;
      return pageOf(all, request);
    };
    const { client } = harness({ pageConcurrency: 4 });
    const pages = await collect(client.pages(range));
    expect(received).toHaveLength(Math.ceil(950 / 100));
    expect(pages.map((p) => p.pageNumber)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(ids(pages)).toEqual(all.map((a) => a.articleId));
    expect(maxInFlight).toBe(4);
  });

  it('misses nothing and yields no duplicate when new articles push the pages while they are read', async () => {
    let all = articles(250, 'old');
    script = (request) => {
      const reply = pageOf(all, request);
      // Sixty articles arrive right after page 1 was served; everything older moves back 60 places.
      if (request.body.page === 1) all = [...articles(60, 'new'), ...all];
      return reply;
    };
    const { client } = harness();
    const pages = await collect(client.pages(range));
    const yielded = ids(pages);
    expect(new Set(yielded).size).toBe(yielded.length);
    const old = yielded.filter((id) => id?.startsWith('old'));
    expect(new Set(old)).toEqual(new Set(articles(250, 'old').map((a) => a.articleId)));
    // Pages 2 and 3 from the known total, then page 4 because page 3 came back full.
    expect(received.map((r) => r.body.page)).toEqual([1, 2, 3, 4]);
  });

  it("builds the extra CA's TLS context once, not per connection, and still verifies", async () => {
    const all = articles(500);
    // Every answer closes its connection, so each of the five pages needs a new TLS connection.
    script = (request) => {
      const reply = pageOf(all, request);
      return { ...reply, headers: { connection: 'close' } };
    };
    const { client } = harness({ pageConcurrency: 2 });
    // tls.connect builds a context through the module's own createSecureContext when given `ca`.
    const built: unknown[] = [];
    const create = tls.createSecureContext;
    tls.createSecureContext = (options) => {
      built.push(options);
      return create(options);
    };
    try {
      const pages = await collect(client.pages(range));
      expect(ids(pages)).toEqual(all.map((a) => a.articleId));
    } finally {
      tls.createSecureContext = create;
    }
    expect(received.length).toBeGreaterThanOrEqual(5);
    expect(built).toEqual([]);
    expect(trustingAlso(caPem)).toBe(trustingAlso(caPem));
    // Verification stays on: without the CA the same server is refused.
    const { client: untrusting } = harness({ maxAttempts: 1 }, { withCa: false });
    const error = await failure(untrusting.pages(range));
    expect(inspect(error, { depth: Number.POSITIVE_INFINITY })).toMatch(/certificate/i);
  });

  it('follows cursors with the configured method value and field', async () => {
    const chain: Record<string, { next: string | null; items: unknown[] }> = {
      '': { next: 'c-1', items: articles(2, 'p1-') },
      'c-1': { next: 'c-2', items: articles(2, 'p2-') },
      'c-2': { next: null, items: articles(1, 'p3-') },
    };
    script = (request) => {
      const link = chain[String(request.body.scrollId ?? '')];
      return link
        ? { status: 200, json: { status: 'OK', articles: link.items, nextCursor: link.next } }
        : { status: 400, json: errorBody('BAD_CURSOR', 'unknown cursor') };
    };
    const { client } = harness({
      pageSize: 2,
      pagination: { method: 'CURSOR', methodValue: 'SCROLL', cursorField: 'scrollId' },
    });
    const pages = await collect(client.pages(range));
    expect(ids(pages)).toEqual(['p1-0', 'p1-1', 'p2-0', 'p2-1', 'p3-0']);
    expect(pages.map((p) => p.pageNumber)).toEqual([1, 2, 3]);
    expect(received.map((r) => r.rawBody)).toEqual([
      '{"paginationMethod":"SCROLL","publishedAtStart":"2026-11-21","publishedAtEnd":"2026-11-22","size":2}',
      '{"paginationMethod":"SCROLL","publishedAtStart":"2026-11-21","publishedAtEnd":"2026-11-22","size":2,"scrollId":"c-1"}',
      '{"paginationMethod":"SCROLL","publishedAtStart":"2026-11-21","publishedAtEnd":"2026-11-22","size":2,"scrollId":"c-2"}',
    ]);
  });

  it('stops cursor paging on an empty page even if a cursor is offered', async () => {
    script = () => ({ status: 200, json: { status: 'OK', articles: [], nextCursor: 'again' } });
    const { client } = harness({ pagination: { method: 'CURSOR' } });
    await collect(client.pages(range));
    expect(received).toHaveLength(1);
  });

  it('aborts the in-flight request and stops when the signal fires', async () => {
    script = (request) => (request.body.page === 1 ? pageOf(articles(300), request) : { hang: true });
    const { client } = harness({ pageConcurrency: 1 });
    const controller = new AbortController();
    const reason = new Error('time budget reached');
    const pages: ArticlePage[] = [];
    let error: unknown;
    try {
      for await (const page of client.pages(range, { signal: controller.signal })) {
        pages.push(page);
        // Abort once page 2 is on the wire.
        while (received.length < 2) await new Promise((resolve) => setImmediate(resolve));
        controller.abort(reason);
      }
    } catch (caught) {
      error = caught;
    }
    expect(error).toBe(reason);
    expect(pages).toHaveLength(1);
    await received[1]?.closed;
    expect(received).toHaveLength(2);
  });

  it('reports a provider that was failing when the deadline cut its backoff as stalled, not as a clean stop', async () => {
    script = () => ({ status: 503, json: errorBody('UNAVAILABLE', 'later') });
    const controller = new AbortController();
    const { client } = harness(
      {},
      {
        sleep: (_ms, signal) =>
          new Promise((_resolve, reject) => {
            signal?.addEventListener('abort', () => reject(signal.reason));
            controller.abort(new Error('deadline'));
          }),
      },
    );
    const error = await failure(client.pages(range, { signal: controller.signal }));
    expect(error).toBeInstanceOf(ProviderStalledError);
    expect(error.message).toContain('was failing for 2026-11-21..2026-11-22 page 1 (last failure: HTTP 503');
    expect(received).toHaveLength(1);
  });

  it('closes the remaining requests when the consumer stops early', async () => {
    script = (request) => (request.body.page === 1 ? pageOf(articles(500), request) : { hang: true });
    const { client } = harness();
    for await (const page of client.pages(range)) {
      expect(page.pageNumber).toBe(1);
      while (received.length < 5) await new Promise((resolve) => setImmediate(resolve));
      break;
    }
    // Every hanging page request is cancelled rather than left to run into its timeout.
    await Promise.all(received.slice(1).map((r) => r.closed));
    expect(received).toHaveLength(5);
  });

  it('refuses the server when the client does not trust its CA', async () => {
    script = () => okEmpty;
    const { client, sleeps } = harness({}, { withCa: false });
    const error = await failure(client.pages(range));
    expect(error).toBeInstanceOf(ProviderError);
    expect((error as ProviderError).retryable).toBe(false);
    expect(error.message).toContain('TLS verification');
    expect(received).toHaveLength(0);
    expect(sleeps).toEqual([]);
  });
});

describe('the API key stays secret', () => {
  const key = 'CANARY-KEY-8d41f0c2e7';
  const echo = (message: string) => ({ status: 'ERROR', error: { code: 'E', message: `${message} for key ${key}` } });
  /** Label, server script, config overrides, and whether the client logs (retries) before failing. */
  const cases: [string, Script, Partial<ProviderConfigInput>, boolean][] = [
    ['400', () => ({ status: 400, json: echo('bad request') }), {}, false],
    ['401 twice', () => ({ status: 401, json: echo('unknown') }), {}, true],
    ['403', () => ({ status: 403, json: echo('out of scope') }), {}, false],
    ['404 with a text body', () => ({ status: 404, text: `no route, key=${key}` }), {}, false],
    ['5xx exhausted', () => ({ status: 503, json: echo('overloaded') }), {}, true],
    [
      '429 with a long Retry-After',
      () => ({ status: 429, headers: { 'retry-after': '3600' }, json: echo('quota') }),
      {},
      false,
    ],
    ['body error on 200', () => ({ status: 200, json: echo('backend') }), {}, true],
    ['malformed JSON', () => ({ status: 200, text: `{"echo":"${key}","articles":[` }), {}, true],
    ['no article list', () => ({ status: 200, json: { status: 'OK', request: { apiKey: key } } }), {}, false],
    [
      'every item unreadable',
      () => ({ status: 200, json: { status: 'OK', articles: [{ headline: 'x', publishedAt: key, link: key }] } }),
      {},
      true,
    ],
    ['hanging server', () => ({ hang: true }), { readTimeoutMs: 100 }, true],
  ];

  it.each(cases)('appears in no error or log line: %s', async (_label, caseScript, overrides, logs) => {
    script = caseScript;
    const { client, log } = harness({ maxAttempts: 2, ...overrides }, { secret: new RotatingSecret(key, key) });
    const error = await failure(client.pages(range));
    expect(error).toBeInstanceOf(ProviderError);
    expect(received.length).toBeGreaterThan(0);
    expect(received[0]?.headers['x-api-key']).toBe(key);
    // inspect() renders the message, stack, own properties and the whole cause chain.
    expect(inspect(error, { depth: Number.POSITIVE_INFINITY })).not.toContain(key);
    for (let cause: unknown = error; cause instanceof Error; cause = cause.cause) {
      expect(String(cause.message)).not.toContain(key);
    }
    expect(log.lines.length > 0).toBe(logs);
    expect(log.text()).not.toContain(key);
  });
});
