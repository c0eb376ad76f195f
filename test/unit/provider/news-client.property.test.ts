/**
 * Property tests of the provider response path (issue 10, fuzz): whatever bytes, nesting, sizes,
 * encodings and statuses the provider sends, the client (a) ends every read, (b) never throws
 * anything but a ProviderError, and (c) never lets the API key — whole or any fragment of eight
 * or more characters, in any case, raw, JSON-escaped, URL-encoded or base64 — into an error chain,
 * a log line, a skip reason or a parked page's description. Runs against undici's MockAgent, so
 * no network and no clock are involved; runs are few enough to stay fast on a busy machine.
 */
import { inspect } from 'node:util';
import fc from 'fast-check';
import { MockAgent } from 'undici';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { ProviderError } from '#core/errors';
import type { ArticlePage, Log } from '#core/ports';
import { parseProviderConfig } from '#provider/config';
import { NewsLookupClient } from '#provider/news-client';
import { clearRegisteredSecrets } from '#shared/secret-redaction';
import { leaksOf } from '#test/secret-leaks';

// --- One mock provider whose next answer each run sets -----------------------------------------------

interface Answer {
  readonly status: number;
  readonly body: Buffer;
  readonly headers: Record<string, string>;
}

let answer: Answer = { status: 200, body: Buffer.from('{}'), headers: {} };
const agent = new MockAgent();
agent.disableNetConnect();
agent
  .get('https://fuzz.test')
  .intercept({ path: '/v1/news', method: 'POST' })
  .reply(() => ({ statusCode: answer.status, data: answer.body, responseOptions: { headers: answer.headers } }))
  .persist();

afterAll(async () => {
  await agent.close();
});

beforeEach(() => clearRegisteredSecrets());

const config = parseProviderConfig({
  baseUrl: 'https://fuzz.test/v1',
  pageSize: 10,
  maxPages: 4,
  maxAttempts: 2,
  timeZone: 'Asia/Seoul',
  maxResponseBytes: 256 * 1024,
});

/** Everything the read showed to the outside: error chain, log lines, skip reasons, parked pages. */
async function read(key: string): Promise<{ error: unknown; visible: string }> {
  const lines: string[] = [];
  const record = (message: string, extra?: Record<string, unknown>) =>
    lines.push(`${message} ${inspect(extra, { depth: Number.POSITIVE_INFINITY })}`);
  const log: Log = { debug: record, info: record, warn: record, error: record };
  const client = new NewsLookupClient({
    config,
    secrets: { apiKey: async () => key },
    dispatcher: agent,
    log,
    sleep: async () => {},
    random: () => 0.5,
    now: () => 0,
  });
  const pages: ArticlePage[] = [];
  let error: unknown;
  try {
    for await (const page of client.pages({ from: '2026-11-22', to: '2026-11-22' })) pages.push(page);
  } catch (caught) {
    error = caught;
  }
  const reported = pages.map((page) => JSON.stringify({ skipped: page.skipped, unreadable: page.unreadable }));
  const chain =
    error === undefined
      ? ''
      : `${inspect(error, { depth: Number.POSITIVE_INFINITY, showHidden: true })} ${String(error)}`;
  return { error, visible: [chain, ...lines, ...reported].join('\n') };
}

// --- Generators ---------------------------------------------------------------------------------------

/** Keys as providers issue them: 10 to 40 characters, with the punctuation that encodings change. */
const keyArb = fc.string({
  unit: fc.constantFrom(...'ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789-_+/=.~'.split('')),
  minLength: 10,
  maxLength: 40,
});

/** The key (or a fragment of 8+ characters of it) the way a provider might echo it. */
const echoArb = (key: string) =>
  fc
    .record({
      start: fc.nat({ max: key.length - 8 }),
      length: fc.integer({ min: 8, max: key.length }),
      encoding: fc.constantFrom('raw', 'upper', 'json', 'url', 'base64', 'base64url'),
    })
    .map(({ start, length, encoding }) => {
      const part = key.slice(start, start + length);
      switch (encoding) {
        case 'upper':
          return part.toUpperCase();
        case 'json':
          return JSON.stringify(part).slice(1, -1);
        case 'url':
          return encodeURIComponent(part);
        case 'base64':
          return Buffer.from(part).toString('base64');
        case 'base64url':
          return Buffer.from(part).toString('base64url');
        default:
          return part;
      }
    });

const statusArb = fc.constantFrom(200, 200, 200, 204, 301, 400, 401, 403, 404, 408, 422, 429, 500, 502, 503);

const headersArb = (echo: string) =>
  fc.record(
    {
      'retry-after': fc.oneof(fc.constant('0'), fc.constant(echo), fc.string({ maxLength: 20 })),
      location: fc.oneof(fc.constant(`https://moved.test/${echo}`), fc.webUrl()),
      'content-type': fc.constantFrom(
        'application/json',
        'text/html; charset=utf-8',
        'application/json; charset=utf-16le',
      ),
    },
    { requiredKeys: [] },
  );

/** Arbitrary bytes with the echo spliced in somewhere. */
const bytesArb = (echo: string) =>
  fc.tuple(fc.uint8Array({ maxLength: 2048 }), fc.nat()).map(([bytes, at]) => {
    const cut = bytes.length === 0 ? 0 : at % bytes.length;
    return Buffer.concat([bytes.subarray(0, cut), Buffer.from(echo), bytes.subarray(cut)]);
  });

/** Brackets and objects nested up to 20,000 deep around the echo, sometimes cut off. */
const nestingArb = (echo: string) =>
  fc
    .record({
      depth: fc.integer({ min: 1, max: 20_000 }),
      shape: fc.constantFrom('array', 'object', 'articles'),
      truncate: fc.boolean(),
    })
    .map(({ depth, shape, truncate }) => {
      const open = shape === 'object' ? '{"a":' : '[';
      const close = shape === 'object' ? '}' : ']';
      const core = `${open.repeat(depth)}${JSON.stringify(echo)}${close.repeat(depth)}`;
      const text = shape === 'articles' ? `{"status":"OK","articles":${core},"echo":${JSON.stringify(echo)}}` : core;
      return Buffer.from(truncate ? text.slice(0, Math.floor(text.length / 2)) : text);
    });

const itemArb = (echo: string) =>
  fc.oneof(
    // Readable articles (the key never in their content: that is the provider's data, not a leak path).
    fc.record({
      articleId: fc.uuid(),
      title: fc.string({ minLength: 1, maxLength: 40 }),
      url: fc.webUrl(),
      publishedAt: fc.constantFrom('2026-11-22T09:15:00+09:00', '2026-11-22 09:15:00', 1_795_300_000),
    }),
    // Broken items carrying the echo where a parser quotes it back.
    fc.record({
      articleId: fc.constant(echo),
      title: fc.oneof(fc.constant(''), fc.constant(echo)),
      url: fc.constant(echo),
      publishedAt: fc.oneof(fc.constant(echo), fc.constant(`2026-13-45 ${echo}`)),
    }),
    fc.anything({ maxDepth: 3 }),
    fc.constant(echo),
  );

/** JSON envelopes in the shapes providers use, with the echo in error, status and echo fields. */
const envelopeArb = (echo: string) =>
  fc
    .record(
      {
        status: fc.constantFrom('OK', 'ERROR', 'fail', echo),
        totalCount: fc.oneof(fc.nat({ max: 100 }), fc.constant(1e12), fc.constant(-1), fc.constant(echo)),
        articles: fc.array(itemArb(echo), { maxLength: 12 }),
        error: fc.oneof(fc.constant({ code: 'E', message: `bad key ${echo}` }), fc.constant(echo), fc.constant(null)),
        request: fc.constant({ apiKey: echo }),
        nextCursor: fc.constant(echo),
      },
      { requiredKeys: [] },
    )
    .chain((envelope) =>
      fc.constantFrom('utf8', 'utf16le', 'latin1', 'bom').map((encoding) => {
        const text = JSON.stringify(envelope);
        if (encoding === 'bom') return Buffer.from(`\ufeff${text}`);
        return Buffer.from(text, encoding as BufferEncoding);
      }),
    );

const scenarioArb = keyArb.chain((key) =>
  echoArb(key).chain((echo) =>
    fc.record({
      key: fc.constant(key),
      status: statusArb,
      headers: headersArb(echo),
      body: fc.oneof(bytesArb(echo), nestingArb(echo), envelopeArb(echo)),
    }),
  ),
);

// --- Properties ---------------------------------------------------------------------------------------

describe('the provider response path under arbitrary input', () => {
  it('ends every read with pages or a ProviderError, and never shows the key in any encoding', async () => {
    await fc.assert(
      fc.asyncProperty(scenarioArb, async ({ key, status, headers, body }) => {
        clearRegisteredSecrets();
        answer = { status, body, headers };
        const { error, visible } = await read(key);
        if (error !== undefined) expect(error).toBeInstanceOf(ProviderError);
        expect(leaksOf(visible, key)).toEqual([]);
      }),
      { numRuns: 150 },
    );
  });

  it('keeps a huge body (up to 1 MB, over the size cap) to a typed error without a leak', async () => {
    await fc.assert(
      fc.asyncProperty(keyArb, fc.integer({ min: 200_000, max: 1_000_000 }), async (key, size) => {
        clearRegisteredSecrets();
        const filler = 'x'.repeat(size);
        answer = {
          status: 200,
          body: Buffer.from(`{"articles":[{"title":"${filler}","echo":"${key}"}]}`),
          headers: {},
        };
        const { error, visible } = await read(key);
        if (error !== undefined) expect(error).toBeInstanceOf(ProviderError);
        expect(leaksOf(visible, key)).toEqual([]);
      }),
      { numRuns: 10 },
    );
  });
});
