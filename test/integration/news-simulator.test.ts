/**
 * The news API simulator over real HTTPS: the contract it enforces, key scopes, date filtering in
 * the provider's zone, paging, seeded content, every fault, late publishes, cursor mode, response
 * orders (newest first, oldest first, unordered, switched mid-read, ties on identical timestamps),
 * request recording and TLS. Clients trust the test run's CA explicitly; verification is never disabled.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DateTime } from 'luxon';
import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import {
  type NewsSimulator,
  type NewsSimulatorOptions,
  type SimArticle,
  SimFaultSchema,
  startNewsSimulator,
  TEST_KEY_SAMPLE_SIZE,
} from '#sandbox/news-simulator';
import { generateArticles, KNOWN_STATUSES, OUT_OF_SCOPE_MEDIA, UNKNOWN_STATUS } from '#sandbox/news-simulator-data';

const sandboxCa = inject('sandboxCa');
const agent = new Agent({ connect: { ca: sandboxCa.cert } });

/** 2026-11-22 12:00 in Seoul. */
const NOW = Date.parse('2026-11-22T03:00:00Z');
const clock = () => NOW;

interface WireArticle {
  articleId: string;
  title: string;
  summary: string;
  url: string;
  publishedAt: string;
  categories: { code: string; name: string }[];
  media: { code: string; name: string };
  status: string;
}
interface WirePage {
  status: 'OK';
  totalCount: number;
  page: number;
  size: number;
  articles: WireArticle[];
}
interface WireCursorPage {
  status: 'OK';
  articles: WireArticle[];
  nextCursor: string | null;
}
interface WireError {
  status: 'ERROR';
  error: { code: string; message: string; field?: string };
}

interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

interface CallOptions {
  path?: string;
  method?: 'GET' | 'POST' | 'PUT' | 'DELETE';
  /** Sent as X-API-KEY; null sends none. */
  key?: string | null;
  contentType?: string | null;
  /** Serialized as JSON unless it is a string. */
  body?: unknown;
  dispatcher?: Agent;
}

async function call(sim: NewsSimulator, options: CallOptions = {}): Promise<Reply> {
  const headers: Record<string, string> = {};
  const contentType = options.contentType === undefined ? 'application/json' : options.contentType;
  if (contentType !== null) headers['content-type'] = contentType;
  const key = options.key === undefined ? sim.liveKey : options.key;
  if (key !== null) headers['x-api-key'] = key;
  const body =
    options.body === undefined
      ? undefined
      : typeof options.body === 'string'
        ? options.body
        : JSON.stringify(options.body);
  const response = await request(`${sim.url}${options.path ?? '/news'}`, {
    dispatcher: options.dispatcher ?? agent,
    method: options.method ?? 'POST',
    headers,
    ...(body === undefined ? {} : { body }),
  });
  return { status: response.statusCode, headers: response.headers, text: await response.body.text() };
}

const pageBody = (start: string, end: string, page: number, size: number) => ({
  paginationMethod: 'PAGE',
  publishedAtStart: start,
  publishedAtEnd: end,
  page,
  size,
});

async function lookup(sim: NewsSimulator, body: unknown, key?: string): Promise<WirePage> {
  const reply = await call(sim, { body, ...(key === undefined ? {} : { key }) });
  expect(reply.status, reply.text).toBe(200);
  return JSON.parse(reply.text) as WirePage;
}

async function readAll(sim: NewsSimulator, start: string, end: string, size: number, key?: string) {
  const articles: WireArticle[] = [];
  const pages: WirePage[] = [];
  for (let page = 1; ; page++) {
    const reply = await lookup(sim, pageBody(start, end, page, size), key);
    pages.push(reply);
    articles.push(...reply.articles);
    if (reply.articles.length < size) return { articles, pages };
  }
}

async function expectError(reply: Reply, status: number, code: string): Promise<WireError> {
  expect(reply.status, reply.text).toBe(status);
  const body = JSON.parse(reply.text) as WireError;
  expect(body).toMatchObject({ status: 'ERROR', error: { code, message: expect.any(String) } });
  return body;
}

const providerDate = (epochMs: number, zone = 'Asia/Seoul') => DateTime.fromMillis(epochMs, { zone }).toISODate();

const newestFirst = (a: SimArticle, b: SimArticle) =>
  b.publishedAt - a.publishedAt || (a.articleId < b.articleId ? 1 : a.articleId > b.articleId ? -1 : 0);

/** A simulator for one describe block. */
function simulatorFor(options: NewsSimulatorOptions = {}): () => NewsSimulator {
  let sim: NewsSimulator | undefined;
  beforeAll(async () => {
    sim = await startNewsSimulator({ ca: sandboxCa, now: clock, seed: 7, ...options });
  });
  afterAll(async () => {
    await sim?.stop();
  });
  return () => {
    if (!sim) throw new Error('simulator not started');
    return sim;
  };
}

describe('contract', () => {
  const sim = simulatorFor();
  const valid = pageBody('2026-11-22', '2026-11-22', 1, 10);

  it('answers a valid lookup with the page envelope and the documented article shape', async () => {
    const page = await lookup(sim(), valid);
    expect(page).toMatchObject({ status: 'OK', page: 1, size: 10, totalCount: expect.any(Number) });
    expect(page.articles).toHaveLength(10);
    for (const article of page.articles) {
      expect(article).toEqual({
        articleId: expect.stringMatching(/^20261122-\d{6}$/),
        title: expect.any(String),
        summary: expect.any(String),
        url: expect.stringMatching(/^https:\/\/news\.example\.com\/m00\d\/20261122-\d{6}/),
        publishedAt: expect.stringMatching(/^2026-11-22T\d{2}:\d{2}:\d{2}\+09:00$/),
        categories: expect.arrayContaining([{ code: expect.stringMatching(/^\d{9}$/), name: expect.any(String) }]),
        media: { code: expect.stringMatching(/^M00\d$/), name: expect.any(String) },
        status: expect.any(String),
      });
    }
  });

  it('answers 404 for other paths, with or without a key', async () => {
    await expectError(await call(sim(), { path: '/articles', body: valid }), 404, 'NOT_FOUND');
    await expectError(await call(sim(), { path: '/', key: null, body: valid }), 404, 'NOT_FOUND');
  });

  it('answers 405 with Allow: POST for other methods on /news', async () => {
    const reply = await call(sim(), { method: 'GET' });
    await expectError(reply, 405, 'METHOD_NOT_ALLOWED');
    expect(reply.headers.allow).toBe('POST');
    await expectError(await call(sim(), { method: 'PUT', body: valid }), 405, 'METHOD_NOT_ALLOWED');
  });

  it('answers 415 unless the body is declared as JSON', async () => {
    await expectError(await call(sim(), { contentType: 'text/plain', body: valid }), 415, 'UNSUPPORTED_MEDIA_TYPE');
    await expectError(await call(sim(), { contentType: null, body: valid }), 415, 'UNSUPPORTED_MEDIA_TYPE');
    expect((await call(sim(), { contentType: 'Application/JSON; charset=utf-8', body: valid })).status).toBe(200);
  });

  it('answers 401 for a missing, unknown or revoked key', async () => {
    await expectError(await call(sim(), { key: null, body: valid }), 401, 'UNAUTHORIZED');
    await expectError(await call(sim(), { key: '', body: valid }), 401, 'UNAUTHORIZED');
    await expectError(await call(sim(), { key: 'sim-live-not-a-key', body: valid }), 401, 'UNAUTHORIZED');
    sim().setKey('rotated-out', { name: 'old-live', kind: 'live', media: '*' });
    expect((await call(sim(), { key: 'rotated-out', body: valid })).status).toBe(200);
    sim().revokeKey('rotated-out');
    const revoked = await expectError(await call(sim(), { key: 'rotated-out', body: valid }), 401, 'UNAUTHORIZED');
    expect(revoked.error.message).toMatch(/revoked/);
  });

  it('answers 403 FORBIDDEN_SCOPE for a key without media in its scope', async () => {
    sim().setKey('no-media', { name: 'no-media', kind: 'live', media: [] });
    const body = await expectError(await call(sim(), { key: 'no-media', body: valid }), 403, 'FORBIDDEN_SCOPE');
    expect(body.error.message).toMatch(/outside the contracted media scope/);
  });

  const invalid: [string, unknown, string][] = [
    ['a body that is not JSON', '{"paginationMethod":', 'body'],
    ['a JSON array', [valid], 'body'],
    ['no paginationMethod', { ...valid, paginationMethod: undefined }, 'paginationMethod'],
    ['an unknown paginationMethod', { ...valid, paginationMethod: 'OFFSET' }, 'paginationMethod'],
    ['CURSOR without cursor mode', { ...valid, paginationMethod: 'CURSOR' }, 'paginationMethod'],
    ['no publishedAtStart', { ...valid, publishedAtStart: undefined }, 'publishedAtStart'],
    ['a publishedAtStart with slashes', { ...valid, publishedAtStart: '2026/11/22' }, 'publishedAtStart'],
    ['a publishedAtStart with a time', { ...valid, publishedAtStart: '2026-11-22T00:00:00' }, 'publishedAtStart'],
    ['no publishedAtEnd', { ...valid, publishedAtEnd: undefined }, 'publishedAtEnd'],
    ['a publishedAtEnd that is no calendar date', { ...valid, publishedAtEnd: '2026-02-30' }, 'publishedAtEnd'],
    ['a start after the end', { ...valid, publishedAtStart: '2026-11-23' }, 'publishedAtStart'],
    ['a range of 32 days', { ...valid, publishedAtStart: '2026-10-22' }, 'publishedAtEnd'],
    ['no page', { ...valid, page: undefined }, 'page'],
    ['page 0', { ...valid, page: 0 }, 'page'],
    ['a fractional page', { ...valid, page: 1.5 }, 'page'],
    ['a page given as a string', { ...valid, page: '1' }, 'page'],
    ['no size', { ...valid, size: undefined }, 'size'],
    ['size 0', { ...valid, size: 0 }, 'size'],
    ['a size above the maximum', { ...valid, size: 101 }, 'size'],
  ];
  it.each(invalid)('answers 400 INVALID_PARAMETER naming the field for %s', async (_, body, field) => {
    const reply = await expectError(await call(sim(), { body }), 400, 'INVALID_PARAMETER');
    expect(reply.error.field).toBe(field);
    expect(reply.error.message).toContain(field);
  });

  it('accepts the longest allowed range, both ends included', async () => {
    const page = await lookup(sim(), { ...valid, publishedAtStart: '2026-10-23' });
    expect(page.totalCount).toBe(
      sim()
        .articles()
        .filter((article) => article.media.code !== OUT_OF_SCOPE_MEDIA).length,
    );
  });

  it('answers 413 for an oversized body', async () => {
    await expectError(
      await call(sim(), { body: { ...valid, padding: 'x'.repeat(100_000) } }),
      413,
      'PAYLOAD_TOO_LARGE',
    );
  });
});

describe('key scopes', () => {
  const sim = simulatorFor();

  it('gives the live key every contracted outlet and never the out-of-scope one', async () => {
    const { articles, pages } = await readAll(sim(), '2026-11-19', '2026-11-22', 100);
    const expected = sim()
      .articles()
      .filter((article) => article.media.code !== OUT_OF_SCOPE_MEDIA);
    expect(
      sim()
        .articles()
        .some((article) => article.media.code === OUT_OF_SCOPE_MEDIA),
    ).toBe(true);
    expect(pages[0]?.totalCount).toBe(expected.length);
    expect(articles.map((article) => article.articleId)).toEqual(expected.sort(newestFirst).map((a) => a.articleId));
    expect(new Set(articles.map((article) => article.media.code))).toEqual(
      new Set(['M001', 'M002', 'M003', 'M004', 'M005', 'M006', 'M007']),
    );
  });

  it('gives the test key only a small fixed sample of its two outlets', async () => {
    const before = await readAll(sim(), '2026-11-19', '2026-11-22', 100, sim().testKey);
    expect(before.pages[0]?.totalCount).toBe(TEST_KEY_SAMPLE_SIZE);
    expect(new Set(before.articles.map((article) => article.media.code))).toEqual(new Set(['M001', 'M002']));

    const [fresh] = sim().publish({ title: 'Inflation data surprise', media: 'M001', publishedAt: NOW });
    const after = await readAll(sim(), '2026-11-19', '2026-11-22', 100, sim().testKey);
    expect(after.articles).toEqual(before.articles);
    const live = await lookup(sim(), pageBody('2026-11-22', '2026-11-22', 1, 1));
    expect(live.articles[0]?.articleId).toBe(fresh?.articleId);
  });

  it('gives a key with scope * every outlet, including the one outside the live key', async () => {
    sim().setKey('all-media', { name: 'all-media', kind: 'live', media: '*' });
    const { articles } = await readAll(sim(), '2026-11-19', '2026-11-22', 100, 'all-media');
    expect(articles).toHaveLength(sim().articles().length);
    expect(articles.some((article) => article.media.code === OUT_OF_SCOPE_MEDIA)).toBe(true);
  });
});

describe('date filtering in the provider time zone', () => {
  const articles = [
    { articleId: 'late-utc', title: 'Late evening in UTC', publishedAt: '2026-11-21T23:30:00Z' },
    { articleId: 'first-second', title: 'Midnight in Seoul', publishedAt: '2026-11-22T00:00:00+09:00' },
    { articleId: 'last-second', title: 'Just before midnight', publishedAt: '2026-11-22T23:59:59+09:00' },
    { articleId: 'next-day', title: 'Next day in Seoul', publishedAt: '2026-11-23T00:00:00+09:00' },
  ];
  const seoul = simulatorFor({ articles });
  const utc = simulatorFor({ articles, timeZone: 'UTC' });

  const ids = async (sim: NewsSimulator, start: string, end: string) =>
    (await lookup(sim, pageBody(start, end, 1, 100))).articles.map((article) => article.articleId);

  it('puts an article at 23:30 UTC on the next day in Asia/Seoul, with the zone offset on the wire', async () => {
    expect(await ids(seoul(), '2026-11-21', '2026-11-21')).toEqual([]);
    expect(await ids(seoul(), '2026-11-22', '2026-11-22')).toEqual(['last-second', 'late-utc', 'first-second']);
    const page = await lookup(seoul(), pageBody('2026-11-22', '2026-11-22', 1, 100));
    expect(page.articles.find((article) => article.articleId === 'late-utc')?.publishedAt).toBe(
      '2026-11-22T08:30:00+09:00',
    );
  });

  it('includes both ends of the range and nothing after it', async () => {
    expect(await ids(seoul(), '2026-11-22', '2026-11-23')).toEqual([
      'next-day',
      'last-second',
      'late-utc',
      'first-second',
    ]);
    expect(await ids(seoul(), '2026-11-23', '2026-11-23')).toEqual(['next-day']);
  });

  it('follows the configured zone', async () => {
    expect(await ids(utc(), '2026-11-21', '2026-11-21')).toEqual(['late-utc', 'first-second']);
    expect(await ids(utc(), '2026-11-22', '2026-11-22')).toEqual(['next-day', 'last-second']);
    const page = await lookup(utc(), pageBody('2026-11-21', '2026-11-21', 1, 100));
    expect(page.articles.find((article) => article.articleId === 'late-utc')?.publishedAt).toBe('2026-11-21T23:30:00Z');
  });
});

describe('paging', () => {
  const sim = simulatorFor({ generate: { days: 1, perDay: 53 } });
  const oldest = simulatorFor({ generate: { days: 1, perDay: 53 }, order: 'oldest-first', maxPageSize: 20 });

  it('reports the total, fills every page but the last, and answers past the end with an empty list', async () => {
    const expected = sim()
      .articles()
      .filter(
        (article) => article.media.code !== OUT_OF_SCOPE_MEDIA && providerDate(article.publishedAt) === '2026-11-22',
      )
      .sort(newestFirst);
    const { articles, pages } = await readAll(sim(), '2026-11-22', '2026-11-22', 7);
    expect(pages.every((page) => page.totalCount === expected.length)).toBe(true);
    expect(pages.map((page) => page.articles.length)).toEqual(
      pages.map((_, index) => Math.min(7, expected.length - index * 7)),
    );
    expect(articles.map((article) => article.articleId)).toEqual(expected.map((article) => article.articleId));
    const past = await lookup(sim(), pageBody('2026-11-22', '2026-11-22', 1000, 7));
    expect(past).toMatchObject({ status: 'OK', page: 1000, size: 7, totalCount: expected.length, articles: [] });
  });

  it('serves oldest first when configured, and honours a smaller maximum page size', async () => {
    const { articles } = await readAll(oldest(), '2026-11-21', '2026-11-22', 20);
    const times = articles.map((article) => Date.parse(article.publishedAt));
    expect(times).toEqual([...times].sort((a, b) => a - b));
    const reply = await expectError(
      await call(oldest(), { body: pageBody('2026-11-22', '2026-11-22', 1, 21) }),
      400,
      'INVALID_PARAMETER',
    );
    expect(reply.error.message).toContain('from 1 to 20');
  });
});

describe('seeded content', () => {
  it('is the same for the same seed and clock, and different for another seed', async () => {
    const a = await startNewsSimulator({ ca: sandboxCa, now: clock, seed: 42 });
    const b = await startNewsSimulator({ ca: sandboxCa, now: clock, seed: 42 });
    const c = await startNewsSimulator({ ca: sandboxCa, now: clock, seed: 43 });
    try {
      expect(a.articles()).toHaveLength(600);
      expect(b.articles()).toEqual(a.articles());
      expect(c.articles()).not.toEqual(a.articles());
      const body = pageBody('2026-11-21', '2026-11-22', 2, 50);
      expect((await call(b, { body, key: b.liveKey })).text).toBe((await call(a, { body, key: a.liveKey })).text);
    } finally {
      await Promise.all([a.stop(), b.stop(), c.stop()]);
    }
  });

  it('looks like a real feed: taxonomy codes, several outlets, open statuses, scripts and the rules vocabulary', () => {
    const articles = generateArticles({ seed: 1, days: 3, perDay: 2000, now: NOW, timeZone: 'Asia/Seoul' });
    expect(articles).toHaveLength(6000);
    expect(articles.every((article) => article.publishedAt <= NOW && article.publishedAt > NOW - 3 * 86_400_000)).toBe(
      true,
    );
    for (const article of articles) {
      expect(article.articleId.slice(0, 8)).toBe(providerDate(article.publishedAt)?.replaceAll('-', ''));
      for (const category of article.categories) expect(category.code).toMatch(/^\d{9}$/);
    }
    expect(new Set(articles.map((article) => article.articleId)).size).toBe(articles.length);
    expect(articles.some((article) => article.categories.length === 2)).toBe(true);
    expect(new Set(articles.map((article) => article.media.code)).size).toBe(8);
    expect(new Set(articles.map((article) => article.status))).toEqual(new Set([...KNOWN_STATUSES, UNKNOWN_STATUS]));
    const text = articles.map((article) => `${article.title}\n${article.summary}`).join('\n');
    for (const word of ['interest rate', 'inflation', 'semiconductor', 'earthquake', 'election']) {
      expect(text).toContain(word);
    }
    for (const word of ['반도체', '금리', '地震', '半導体']) expect(text).toContain(word);
    expect(articles.some((article) => /\p{Extended_Pictographic}/u.test(article.title))).toBe(true);
    expect(articles.some((article) => article.title.length > 200)).toBe(true);
    expect(articles.some((article) => article.url.length > 200 && article.url.includes('?'))).toBe(true);
    const codes = new Set(articles.flatMap((article) => article.categories.map((category) => category.code)));
    for (const code of ['001000000', '002000000', '002001000', '002004000', '003000000', '004000000', '005000000']) {
      expect(codes).toContain(code);
    }
    for (const code of ['007000000', '008000000', '008001000']) expect(codes).toContain(code);
  });

  it('writes publishedAt in the configured format', async () => {
    const articles = [
      { articleId: 'a1', title: 'One', publishedAt: '2026-11-22T09:15:00+09:00' },
      { articleId: 'b2', title: 'Two', publishedAt: '2026-11-22T09:16:00+09:00' },
      { articleId: 'c3', title: 'Three', publishedAt: '2026-11-22T09:17:00+09:00' },
      { articleId: 'd4', title: 'Four', publishedAt: '2026-11-22T09:18:00+09:00' },
    ];
    const formats = ['rfc822', 'compact', 'mixed'] as const;
    const sims = await Promise.all(
      formats.map((timestampFormat) => startNewsSimulator({ ca: sandboxCa, now: clock, articles, timestampFormat })),
    );
    try {
      const stamps = await Promise.all(
        sims.map(async (sim) =>
          (await lookup(sim, pageBody('2026-11-22', '2026-11-22', 1, 10))).articles.map((a) => a.publishedAt),
        ),
      );
      expect(stamps[0]?.at(-1)).toBe('Sun, 22 Nov 2026 09:15:00 +0900');
      expect(stamps[1]?.at(-1)).toBe('20261122091500');
      const shapes = (stamps[2] ?? []).map((stamp) =>
        /\+09:00$/.test(stamp) ? 'iso' : /Z$/.test(stamp) ? 'utc' : /^\d{14}$/.test(stamp) ? 'compact' : 'rfc822',
      );
      expect(new Set(shapes).size).toBeGreaterThan(1);
    } finally {
      await Promise.all(sims.map((sim) => sim.stop()));
    }
  });
});

describe('faults', () => {
  const sim = simulatorFor();
  const first = pageBody('2026-11-22', '2026-11-22', 1, 10);
  const second = pageBody('2026-11-22', '2026-11-22', 2, 10);

  it('answers 429 with Retry-After, then recovers', async () => {
    sim().faults.inject({ kind: 'status', status: 429, retryAfter: '2' });
    const reply = await call(sim(), { body: first });
    await expectError(reply, 429, 'RATE_LIMITED');
    expect(reply.headers['retry-after']).toBe('2');
    expect((await call(sim(), { body: first })).status).toBe(200);
  });

  it('answers 429 without Retry-After and strikes as many times as asked', async () => {
    sim().faults.inject({ kind: 'status', status: 429, times: 2 });
    for (let attempt = 0; attempt < 2; attempt++) {
      const reply = await call(sim(), { body: first });
      await expectError(reply, 429, 'RATE_LIMITED');
      expect(reply.headers['retry-after']).toBeUndefined();
    }
    expect((await call(sim(), { body: first })).status).toBe(200);
  });

  it.each([408, 500, 503] as const)('answers %i with the error envelope', async (status) => {
    sim().faults.inject({ kind: 'status', status });
    const reply = await call(sim(), { body: first });
    expect(reply.status).toBe(status);
    expect((JSON.parse(reply.text) as WireError).status).toBe('ERROR');
  });

  it.each([502, 504] as const)('answers %i with a gateway HTML page', async (status) => {
    sim().faults.inject({ kind: 'status', status, retryAfter: '30' });
    const reply = await call(sim(), { body: first });
    expect(reply.status).toBe(status);
    expect(reply.headers['content-type']).toMatch(/^text\/html/);
    expect(reply.headers['retry-after']).toBe('30');
    expect(reply.text).toContain(`<h1>${status}`);
  });

  it('strikes only the page it names', async () => {
    sim().faults.inject({ kind: 'status', status: 500, page: 2 });
    expect((await call(sim(), { body: first })).status).toBe(200);
    expect((await call(sim(), { body: second })).status).toBe(500);
    expect((await call(sim(), { body: second })).status).toBe(200);
  });

  it('never hides a contract error: a bad request gets its 400 and the fault waits for a valid one', async () => {
    sim().faults.inject({ kind: 'status', status: 503 });
    await expectError(await call(sim(), { body: { ...first, size: 0 } }), 400, 'INVALID_PARAMETER');
    await expectError(await call(sim(), { key: null, body: first }), 401, 'UNAUTHORIZED');
    expect((await call(sim(), { body: first })).status).toBe(503);
  });

  it('delays the response so a client with a shorter timeout times out', async () => {
    const impatient = new Agent({ connect: { ca: sandboxCa.cert }, headersTimeout: 200 });
    try {
      sim().faults.inject({ kind: 'delay', ms: 10_000 });
      await expect(call(sim(), { body: first, dispatcher: impatient })).rejects.toMatchObject({
        code: 'UND_ERR_HEADERS_TIMEOUT',
      });
      expect((await call(sim(), { body: first, dispatcher: impatient })).status).toBe(200);
    } finally {
      await impatient.close();
    }
  });

  it('answers a delayed request normally to a patient client', async () => {
    sim().faults.inject({ kind: 'delay', ms: 50 });
    expect((await lookup(sim(), first)).articles).toHaveLength(10);
  });

  it('sends truncated JSON with status 200', async () => {
    sim().faults.inject({ kind: 'malformed' });
    const reply = await call(sim(), { body: first });
    expect(reply.status).toBe(200);
    expect(reply.headers['content-type']).toMatch(/^application\/json/);
    expect(reply.text.startsWith('{"status":"OK"')).toBe(true);
    expect(() => JSON.parse(reply.text)).toThrow(SyntaxError);
  });

  it('sends an error body with status 200', async () => {
    sim().faults.inject({ kind: 'error-body' });
    sim().faults.inject({ kind: 'error-body', code: 'QUOTA_EXCEEDED', message: 'daily quota used up' });
    const reply = await call(sim(), { body: first });
    expect(reply.status).toBe(200);
    expect(JSON.parse(reply.text)).toEqual({
      status: 'ERROR',
      error: { code: 'INTERNAL_ERROR', message: expect.any(String) },
    });
    expect(JSON.parse((await call(sim(), { body: first })).text)).toEqual({
      status: 'ERROR',
      error: { code: 'QUOTA_EXCEEDED', message: 'daily quota used up' },
    });
  });

  it('shifts pages by publishing new articles while they are being read', async () => {
    const page1 = await lookup(sim(), first);
    sim().faults.inject({ kind: 'shift', insert: 3 });
    const page2 = await lookup(sim(), second);
    expect(page2.totalCount).toBe(page1.totalCount + 3);
    expect(page2.articles.slice(0, 3)).toEqual(page1.articles.slice(-3));
    const again = await lookup(sim(), first);
    expect(again.articles.slice(3)).toEqual(page1.articles.slice(0, 7));
    expect(again.articles.slice(0, 3).every((article) => article.publishedAt === '2026-11-22T12:00:00+09:00')).toBe(
      true,
    );
  });

  it('repeats the previous page’s last item at the start of a page', async () => {
    const page1 = await lookup(sim(), first);
    sim().faults.inject({ kind: 'duplicate', page: 2 });
    const page2 = await lookup(sim(), second);
    expect(page2.articles).toHaveLength(11);
    expect(page2.articles[0]).toEqual(page1.articles.at(-1));
    expect(page2.articles.slice(1)).toEqual((await lookup(sim(), second)).articles);
  });

  it('drops the connection without a response', async () => {
    sim().faults.inject({ kind: 'drop' });
    await expect(call(sim(), { body: first })).rejects.toMatchObject({ code: 'UND_ERR_SOCKET' });
    expect(sim().requests.at(-1)).toMatchObject({ status: null, fault: 'drop' });
    expect((await call(sim(), { body: first })).status).toBe(200);
  });

  it('lists, clears and rejects faults', () => {
    sim().faults.inject({ kind: 'drop', times: 3 });
    sim().faults.inject({ kind: 'shift', insert: 1, page: 4 });
    expect(sim().faults.pending()).toEqual([
      { kind: 'drop', times: 3 },
      { kind: 'shift', insert: 1, page: 4, times: 1 },
    ]);
    sim().faults.clear();
    expect(sim().faults.pending()).toEqual([]);
    expect(SimFaultSchema.safeParse({ kind: 'status', status: 404 }).success).toBe(false);
    expect(SimFaultSchema.safeParse({ kind: 'shift', insert: 0 }).success).toBe(false);
  });
});

describe('admin API', () => {
  const sim = simulatorFor();
  const first = pageBody('2026-11-22', '2026-11-22', 1, 5);
  const admin = (path: string, method: CallOptions['method'], body?: unknown) =>
    call(sim(), { path, method, key: null, body });

  it('injects, lists and clears faults over HTTP', async () => {
    const injected = await admin('/_sim/faults', 'POST', [{ kind: 'status', status: 503, times: 2 }, { kind: 'drop' }]);
    expect(injected.status).toBe(201);
    expect(JSON.parse((await admin('/_sim/faults', 'GET')).text)).toMatchObject({ faults: [{ status: 503 }, {}] });
    expect((await call(sim(), { body: first })).status).toBe(503);
    expect(JSON.parse((await admin('/_sim/faults', 'DELETE')).text)).toMatchObject({ cleared: 2 });
    expect((await call(sim(), { body: first })).status).toBe(200);
  });

  it('rejects an invalid fault, naming the problem', async () => {
    const reply = await expectError(
      await admin('/_sim/faults', 'POST', { kind: 'delay', ms: -1 }),
      400,
      'INVALID_PARAMETER',
    );
    expect(reply.error.message).toContain('ms');
  });

  it('publishes articles and shows recorded requests', async () => {
    const reply = await admin('/_sim/articles', 'POST', {
      title: 'Magnitude 5.1 earthquake strikes near Pohang',
      categories: ['003002000'],
      media: 'M003',
      publishedAt: '2026-11-22T12:00:00+09:00',
    });
    expect(reply.status).toBe(201);
    const { articleIds } = JSON.parse(reply.text) as { articleIds: string[] };
    const page = await lookup(sim(), first);
    expect(page.articles[0]).toMatchObject({
      articleId: articleIds[0],
      categories: [{ code: '003002000', name: 'Society > Disasters' }],
      media: { code: 'M003', name: 'Seoul Example Herald' },
      status: 'PUBLISHED',
    });
    const recorded = JSON.parse((await admin('/_sim/requests', 'GET')).text) as { requests: { path: string }[] };
    expect(recorded.requests.at(-1)).toMatchObject({ path: '/news', status: 200, keyName: 'sandbox-live' });
    expect(recorded.requests.some((entry) => entry.path.startsWith('/_sim'))).toBe(false);
  });

  it('answers 404 and 405 on the admin paths', async () => {
    expect((await admin('/_sim/nothing', 'GET')).status).toBe(404);
    expect((await admin('/_sim/requests', 'DELETE')).status).toBe(405);
  });
});

describe('publish', () => {
  let now = NOW;
  const sim = simulatorFor({ now: () => now, generate: { days: 2, perDay: 240, live: true } });
  const yesterday = pageBody('2026-11-21', '2026-11-21', 1, 100);

  it('lets a late article with an old timestamp appear on a re-read', async () => {
    const before = await readAll(sim(), '2026-11-21', '2026-11-21', 100);
    const [late] = sim().publish({
      title: 'Semiconductor plant fire reported late',
      publishedAt: '2026-11-21T10:00:00+09:00',
      media: 'M002',
      categories: ['008001000', '003001000'],
    });
    expect(late?.articleId).toMatch(/^20261121-\d{6}$/);
    const after = await readAll(sim(), '2026-11-21', '2026-11-21', 100);
    expect(after.pages[0]?.totalCount).toBe((before.pages[0]?.totalCount ?? 0) + 1);
    expect(after.articles.map((article) => article.articleId)).toContain(late?.articleId);
    expect(sim().articles()).toContainEqual(late);
  });

  it('replaces an article published again under the same id (a status change)', async () => {
    const original = (await lookup(sim(), yesterday)).articles[0];
    const total = (await lookup(sim(), yesterday)).totalCount;
    sim().publish({
      articleId: original?.articleId,
      title: original?.title ?? '',
      media: original?.media.code,
      publishedAt: original ? Date.parse(original.publishedAt) : 0,
      status: 'WITHDRAWN',
    });
    const page = await lookup(sim(), yesterday);
    expect(page.totalCount).toBe(total);
    expect(page.articles[0]).toMatchObject({ articleId: original?.articleId, status: 'WITHDRAWN' });
  });

  it('keeps publishing seeded arrivals as the clock moves when live', async () => {
    const count = sim().articles().length;
    now += 6 * 60 * 60 * 1000;
    expect(sim().articles()).toHaveLength(count + 60);
    expect(
      sim()
        .articles()
        .every((article) => article.publishedAt <= now),
    ).toBe(true);
  });
});

describe('cursor mode', () => {
  const sim = simulatorFor({ cursorMode: true });
  const start = { paginationMethod: 'CURSOR', publishedAtStart: '2026-11-21', publishedAtEnd: '2026-11-22', size: 25 };

  const cursorPage = async (body: unknown): Promise<WireCursorPage> => {
    const reply = await call(sim(), { body });
    expect(reply.status, reply.text).toBe(200);
    return JSON.parse(reply.text) as WireCursorPage;
  };

  it('walks the same articles as PAGE through opaque cursors until nextCursor is null', async () => {
    const pages: WireCursorPage[] = [await cursorPage(start)];
    for (let page = pages[0]; page?.nextCursor; page = pages.at(-1)) {
      pages.push(await cursorPage({ paginationMethod: 'CURSOR', cursor: page.nextCursor, size: 25 }));
    }
    expect(pages.at(-1)?.nextCursor).toBeNull();
    expect(Object.keys(pages[0] ?? {}).sort()).toEqual(['articles', 'nextCursor', 'status']);
    const viaPages = await readAll(sim(), '2026-11-21', '2026-11-22', 100);
    expect(pages.flatMap((page) => page.articles)).toEqual(viaPages.articles);
    expect(sim().requests.at(-1 - viaPages.pages.length)).toMatchObject({ page: pages.length });
  });

  it('keeps a cursor chain stable while new articles arrive', async () => {
    const page1 = await cursorPage(start);
    sim().faults.inject({ kind: 'shift', insert: 5 });
    const page2 = await cursorPage({ ...start, cursor: page1.nextCursor });
    const ids = new Set(page1.articles.map((article) => article.articleId));
    expect(page2.articles.some((article) => ids.has(article.articleId))).toBe(false);
    expect(Date.parse(page2.articles[0]?.publishedAt ?? '')).toBeLessThanOrEqual(
      Date.parse(page1.articles.at(-1)?.publishedAt ?? ''),
    );
  });

  it('rejects a cursor it did not issue, or one from another range', async () => {
    const page1 = await cursorPage(start);
    const tampered = await expectError(
      await call(sim(), { body: { ...start, cursor: 'bm90LWEtY3Vyc29y' } }),
      400,
      'INVALID_PARAMETER',
    );
    expect(tampered.error.field).toBe('cursor');
    const otherRange = await expectError(
      await call(sim(), { body: { ...start, publishedAtStart: '2026-11-20', cursor: page1.nextCursor } }),
      400,
      'INVALID_PARAMETER',
    );
    expect(otherRange.error.field).toBe('cursor');
  });

  it('still serves PAGE requests', async () => {
    expect((await lookup(sim(), pageBody('2026-11-22', '2026-11-22', 1, 5))).articles).toHaveLength(5);
  });
});

describe('response order', () => {
  const day = '2026-11-22';
  const ids = (articles: readonly { articleId: string }[]) => articles.map((article) => article.articleId);
  const inScope = (sim: NewsSimulator) =>
    sim
      .articles()
      .filter((article) => article.media.code !== OUT_OF_SCOPE_MEDIA && providerDate(article.publishedAt) === day);
  const oldestFirst = (a: SimArticle, b: SimArticle) => -newestFirst(a, b);

  /** Every page of a cursor chain over `day`, from `cursor` (the first page when absent). */
  const cursorChain = async (sim: NewsSimulator, size: number, cursor?: string | null) => {
    const pages: WireCursorPage[] = [];
    let next = cursor;
    do {
      const body = { paginationMethod: 'CURSOR', publishedAtStart: day, publishedAtEnd: day, size };
      const reply = await call(sim, { body: next ? { ...body, cursor: next } : body });
      expect(reply.status, reply.text).toBe(200);
      const page = JSON.parse(reply.text) as WireCursorPage;
      pages.push(page);
      next = page.nextCursor;
    } while (next);
    return pages;
  };

  describe('unordered', () => {
    const sim = simulatorFor({ order: 'unordered', cursorMode: true, generate: { days: 1, perDay: 60 } });

    it('serves every article once in a seeded order that is neither newest nor oldest first', async () => {
      const { articles } = await readAll(sim(), day, day, 7);
      const expected = inScope(sim());
      expect([...ids(articles)].sort()).toEqual(ids(expected).sort());
      expect(ids(articles)).not.toEqual(ids([...expected].sort(newestFirst)));
      expect(ids(articles)).not.toEqual(ids([...expected].sort(oldestFirst)));
    });

    it('repeats a page exactly while the set is unchanged, and the same seed gives the same order', async () => {
      const first = await readAll(sim(), day, day, 7);
      expect((await readAll(sim(), day, day, 7)).articles).toEqual(first.articles);
      const inputs = sim()
        .articles()
        .map(({ articleId, title, publishedAt, media }) => ({ articleId, title, publishedAt, media: media.code }));
      const same = await startNewsSimulator({
        ca: sandboxCa,
        now: clock,
        seed: 7,
        order: 'unordered',
        articles: inputs,
      });
      const other = await startNewsSimulator({
        ca: sandboxCa,
        now: clock,
        seed: 8,
        order: 'unordered',
        articles: inputs,
      });
      try {
        expect(ids((await readAll(same, day, day, 100)).articles)).toEqual(ids(first.articles));
        expect(ids((await readAll(other, day, day, 100)).articles)).not.toEqual(ids(first.articles));
      } finally {
        await Promise.all([same.stop(), other.stop()]);
      }
    });

    it('keeps the relative order of known articles when one arrives (keyed by id, not by arrival)', async () => {
      const before = ids((await readAll(sim(), day, day, 100)).articles);
      const [fresh] = sim().publish({ title: 'Inflation data surprise', media: 'M001', publishedAt: NOW });
      const after = ids((await readAll(sim(), day, day, 100)).articles);
      expect(after).toHaveLength(before.length + 1);
      expect(after.filter((id) => id !== fresh?.articleId)).toEqual(before);
    });

    it('walks a cursor chain as position cursors: the same articles as PAGE, shifted by arrivals like pages', async () => {
      const chain = await cursorChain(sim(), 7);
      expect(chain.flatMap((page) => ids(page.articles))).toEqual(ids((await readAll(sim(), day, day, 7)).articles));

      const [page1] = await cursorChain(sim(), 7).then((pages) => pages.slice(0, 1));
      sim().faults.inject({ kind: 'shift', insert: 3 });
      const body = { paginationMethod: 'CURSOR', publishedAtStart: day, publishedAtEnd: day, size: 7 };
      const page2 = JSON.parse(
        (await call(sim(), { body: { ...body, cursor: page1?.nextCursor } })).text,
      ) as WireCursorPage;
      // A position cursor is a page number in disguise: page 2 of the cursor chain is page 2 now.
      expect(page2.articles).toEqual((await lookup(sim(), pageBody(day, day, 2, 7))).articles);
    });
  });

  describe('setOrder', () => {
    const sim = simulatorFor({ cursorMode: true, generate: { days: 1, perDay: 60 } });
    const sorted = (compare: (a: SimArticle, b: SimArticle) => number) => ids([...inScope(sim())].sort(compare));

    it('changes the order between reads and reports it', async () => {
      expect(sim().order).toBe('newest-first');
      expect(ids((await readAll(sim(), day, day, 10)).articles)).toEqual(sorted(newestFirst));
      sim().setOrder('oldest-first');
      expect(sim().order).toBe('oldest-first');
      expect(ids((await readAll(sim(), day, day, 10)).articles)).toEqual(sorted(oldestFirst));
      sim().setOrder('unordered');
      const shuffled = ids((await readAll(sim(), day, day, 10)).articles);
      expect([...shuffled].sort()).toEqual(sorted(oldestFirst).sort());
      expect(shuffled).not.toEqual(sorted(oldestFirst));
      sim().setOrder('newest-first');
      expect(ids((await readAll(sim(), day, day, 10)).articles)).toEqual(sorted(newestFirst));
      expect(() => sim().setOrder('sideways' as 'unordered')).toThrow(RangeError);
    });

    it('changes the order in the middle of a PAGE read: the next page comes from the new order', async () => {
      const page1 = await lookup(sim(), pageBody(day, day, 1, 10));
      expect(ids(page1.articles)).toEqual(sorted(newestFirst).slice(0, 10));
      sim().setOrder('oldest-first');
      try {
        const page2 = await lookup(sim(), pageBody(day, day, 2, 10));
        expect(ids(page2.articles)).toEqual(sorted(oldestFirst).slice(10, 20));
      } finally {
        sim().setOrder('newest-first');
      }
    });

    it('continues a keyset cursor after its article in the order current when it is redeemed', async () => {
      const body = { paginationMethod: 'CURSOR', publishedAtStart: day, publishedAtEnd: day, size: 10 };
      const page1 = JSON.parse((await call(sim(), { body })).text) as WireCursorPage;
      const boundary = page1.articles.at(-1)?.articleId;
      sim().setOrder('oldest-first');
      try {
        const rest = await cursorChain(sim(), 10, page1.nextCursor);
        const ascending = sorted(oldestFirst);
        expect(rest.flatMap((page) => ids(page.articles))).toEqual(
          ascending.slice(ascending.indexOf(boundary ?? '') + 1),
        );
      } finally {
        sim().setOrder('newest-first');
      }
    });
  });

  describe('identical timestamps', () => {
    const at = Date.parse('2026-11-22T09:00:00+09:00');
    const tied = ['t-05', 't-01', 't-04', 't-02', 't-03', 't-06', 't-07'].map((articleId) => ({
      articleId,
      title: `Tie ${articleId}`,
      publishedAt: at,
    }));
    const articles = [
      { articleId: 'a-before', title: 'Before', publishedAt: at - 1000 },
      ...tied,
      { articleId: 'z-after', title: 'After', publishedAt: at + 1000 },
    ];
    const newest = simulatorFor({ articles, cursorMode: true });
    const oldest = simulatorFor({ articles, cursorMode: true, order: 'oldest-first' });
    const ascending = ['a-before', 't-01', 't-02', 't-03', 't-04', 't-05', 't-06', 't-07', 'z-after'];

    it.each([
      ['newest-first', newest, [...ascending].reverse(), 't-08'],
      ['oldest-first', oldest, ascending, 't-00'],
    ] as const)(
      '%s: ties come in id order, and pages of 2 and cursors of 2 neither skip nor repeat',
      async (_, sim, expected, behind) => {
        expect(ids((await readAll(sim(), day, day, 2)).articles)).toEqual(expected);
        expect((await cursorChain(sim(), 2)).flatMap((page) => ids(page.articles))).toEqual(expected);
        // A tie that sorts before the cursor's article arrives between two pages: the keyset chain
        // goes on exactly where it was (an offset would repeat an article).
        const body = { paginationMethod: 'CURSOR', publishedAtStart: day, publishedAtEnd: day, size: 2 };
        const page1 = JSON.parse((await call(sim(), { body })).text) as WireCursorPage;
        sim().publish({ articleId: behind, title: `Tie ${behind}`, publishedAt: at });
        const rest = await cursorChain(sim(), 2, page1.nextCursor);
        expect(rest.flatMap((page) => ids(page.articles))).toEqual(expected.slice(2));
      },
    );
  });

  describe('cursor mode in every order', () => {
    it.each(['newest-first', 'oldest-first', 'unordered'] as const)(
      '%s: the cursor chain returns exactly the PAGE read',
      async (order) => {
        const sim = await startNewsSimulator({
          ca: sandboxCa,
          now: clock,
          seed: 7,
          order,
          cursorMode: true,
          generate: { days: 1, perDay: 45 },
        });
        try {
          const viaPages = ids((await readAll(sim, day, day, 6)).articles);
          const viaCursor = (await cursorChain(sim, 6)).flatMap((page) => ids(page.articles));
          expect(viaCursor).toEqual(viaPages);
          expect(new Set(viaCursor).size).toBe(inScope(sim).length);
        } finally {
          await sim.stop();
        }
      },
    );
  });
});

describe('request recording', () => {
  const sim = simulatorFor();

  it('records time, path, status, body, page and the key name, never the key', async () => {
    const body = pageBody('2026-11-22', '2026-11-22', 3, 4);
    await lookup(sim(), body);
    await call(sim(), { key: sim().testKey, body: { ...body, page: 1 } });
    await call(sim(), { key: 'sim-live-guessed', body });
    await call(sim(), { path: '/nowhere', method: 'GET' });
    expect(sim().requests).toEqual([
      {
        id: 1,
        time: NOW,
        method: 'POST',
        path: '/news',
        status: 200,
        keyName: 'sandbox-live',
        page: 3,
        body,
        articleCount: 4,
      },
      expect.objectContaining({ status: 200, keyName: 'sandbox-test', page: 1 }),
      expect.not.objectContaining({ keyName: expect.anything() }),
      expect.objectContaining({ method: 'GET', path: '/nowhere', status: 404 }),
    ]);
    const recorded = JSON.stringify(sim().requests);
    for (const secret of [sim().liveKey, sim().testKey, 'sim-live-guessed']) expect(recorded).not.toContain(secret);
  });
});

describe('TLS', () => {
  it('is refused by a client that does not trust the CA', async () => {
    const sim = await startNewsSimulator({ ca: sandboxCa, now: clock, generate: { days: 1, perDay: 5 } });
    const untrusting = new Agent();
    try {
      await expect(call(sim, { body: {}, dispatcher: untrusting })).rejects.toMatchObject({
        code: expect.stringMatching(/UNABLE_TO_VERIFY_LEAF_SIGNATURE|SELF_SIGNED_CERT_IN_CHAIN|CERT/),
      });
    } finally {
      await untrusting.close();
      await sim.stop();
    }
  });

  it('creates its own CA when given none, and a client trusting it gets through', async () => {
    const sim = await startNewsSimulator({ now: clock, generate: { days: 1, perDay: 5 } });
    const trusting = new Agent({ connect: { ca: sim.caCert } });
    try {
      expect(sim.caCert).not.toBe(sandboxCa.cert);
      const reply = await call(sim, { body: pageBody('2026-11-22', '2026-11-22', 1, 5), dispatcher: trusting });
      expect(reply.status).toBe(200);
      await expect(call(sim, { body: {} })).rejects.toThrow();
    } finally {
      await trusting.close();
      await sim.stop();
    }
  });
});

describe('command line', () => {
  const projectRoot = fileURLToPath(new URL('../../', import.meta.url));
  const tsx = join(projectRoot, 'node_modules', '.bin', 'tsx');
  const cli = join(projectRoot, 'sandbox', 'news-simulator-cli.ts');
  let dir: string;
  let child: ChildProcess | undefined;

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'news-simulator-cli-'));
  });
  afterAll(async () => {
    if (child && child.exitCode === null) {
      const exited = new Promise((resolve) => child?.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    }
    rmSync(dir, { recursive: true, force: true });
  });

  it('serves on its own, prints where the CA and the keys are, and keeps the keys out of its output', async () => {
    child = spawn(tsx, [cli, '--port', '0', '--seed', '7', '--state-dir', dir, '--quiet'], {
      cwd: projectRoot,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stderr?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    const url = await new Promise<string>((resolve, reject) => {
      child?.stdout?.on('data', (chunk: Buffer) => {
        output += chunk.toString();
        const match = /listening on (https:\/\/127\.0\.0\.1:\d+)/.exec(output);
        if (match?.[1] && output.includes('Admin API')) resolve(match[1]);
      });
      child?.once('exit', (code) => reject(new Error(`the CLI exited with ${code}:\n${output}`)));
    });
    const keysPath = join(dir, 'keys.json');
    expect(output).toContain(keysPath);
    expect(output).toContain(join(dir, 'ca.pem'));
    expect(statSync(keysPath).mode & 0o777).toBe(0o600);
    const keys = JSON.parse(readFileSync(keysPath, 'utf8')) as Record<'live' | 'test', { name: string; key: string }>;
    expect(output).not.toContain(keys.live.key);
    expect(output).not.toContain(keys.test.key);

    const trusting = new Agent({ connect: { ca: readFileSync(join(dir, 'ca.pem'), 'utf8') } });
    try {
      const today = DateTime.now().setZone('Asia/Seoul');
      const [from, to] = [today.minus({ days: 1 }).toISODate() ?? '', today.toISODate() ?? ''];
      const response = await request(`${url}/news`, {
        dispatcher: trusting,
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': keys.live.key },
        body: JSON.stringify(pageBody(from, to, 1, 5)),
      });
      expect(response.statusCode).toBe(200);
      expect(((await response.body.json()) as WirePage).articles.length).toBeGreaterThan(0);
    } finally {
      await trusting.close();
    }
  });

  it('documents the flags and the admin API in --help', async () => {
    const help = await new Promise<string>((resolve, reject) => {
      const run = spawn(tsx, [cli, '--help'], { cwd: projectRoot, stdio: ['ignore', 'pipe', 'pipe'] });
      let text = '';
      run.stdout.on('data', (chunk: Buffer) => {
        text += chunk.toString();
      });
      run.once('exit', (code) => (code === 0 ? resolve(text) : reject(new Error(`--help exited with ${code}`))));
    });
    for (const flag of [
      '--port',
      '--seed',
      '--time-zone',
      '--order',
      '--timestamp-format',
      '--cursor',
      '--syndication-rate',
      '--update-rate',
      '/_sim/faults',
    ]) {
      expect(help).toContain(flag);
    }
  });

  it('takes whole numbers in decimal digits only: 0x10, 1e1 and an empty value are refused', async () => {
    for (const args of [
      ['--port', '0x10'],
      ['--days', '1e1'],
      ['--seed', ''],
    ]) {
      const { code, stderr } = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
        const run = spawn(tsx, [cli, ...args, '--state-dir', dir], {
          cwd: projectRoot,
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        let text = '';
        run.stderr.on('data', (chunk: Buffer) => {
          text += chunk.toString();
        });
        run.once('exit', (exitCode) => resolve({ code: exitCode, stderr: text }));
      });
      expect(code, args.join(' ')).not.toBe(0);
      expect(stderr, args.join(' ')).toContain('in decimal digits');
    }
    // A negative seed is still a seed.
    const seed = await new Promise<string>((resolve) => {
      const run = spawn(tsx, [cli, '--seed', '-5', '--port', 'x'], {
        cwd: projectRoot,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let text = '';
      run.stderr.on('data', (chunk: Buffer) => {
        text += chunk.toString();
      });
      run.once('exit', () => resolve(text));
    });
    expect(seed).toContain("'--port <port>' argument 'x'");
  });
});
