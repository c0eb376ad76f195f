/**
 * A request that fails below HTTP (a reset connection, a response the HTTP parser refuses) is
 * described by its error's code and message, and by nothing else: undici's HTTPParserError has a
 * `code` of undefined when the parser gave none, which once printed "network error undefined".
 * No error message may carry "undefined", "null", "NaN" or "[object Object]" from a field that
 * was not there.
 */
import type { AddressInfo } from 'node:net';
import { createServer, type Server } from 'node:tls';
import fc from 'fast-check';
import { MockAgent } from 'undici';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ProviderError } from '../../../functions/core/errors.ts';
import { parseProviderConfig } from '../../../functions/provider/config.ts';
import { NewsLookupClient } from '../../../functions/provider/news-client.ts';
import { errorCodeOf } from '../../../functions/shared/error-code.ts';
import { clearRegisteredSecrets } from '../../../functions/shared/secret-redaction.ts';
import { createCertificateAuthority, issueLoopbackCertificate } from '../../../sandbox/tls.ts';

const range = { from: '2026-11-22', to: '2026-11-22' };
const placeholders = /\bundefined\b|\bnull\b|\bNaN\b|\[object Object\]/;

afterEach(() => clearRegisteredSecrets());

/** The error the client ends with, after one attempt. */
async function failureOf(client: NewsLookupClient): Promise<Error> {
  try {
    for await (const _page of client.pages(range)) {
      // reading until it fails
    }
  } catch (error) {
    return error as Error;
  } finally {
    await client.close();
  }
  throw new Error('the read did not fail');
}

describe('a response the HTTP parser refuses (a real TLS server sending a broken header)', () => {
  let server: Server;
  let origin: string;
  let caPem: string;

  beforeAll(async () => {
    const ca = await createCertificateAuthority();
    caPem = ca.cert;
    const certificate = await issueLoopbackCertificate(ca);
    server = createServer({ cert: certificate.cert, key: certificate.key }, (socket) => {
      socket.once('data', () => socket.end('HTTP/1.1 200 OK\r\nContent-Length: not-a-number\r\n\r\n{}'));
      socket.on('error', () => {});
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    origin = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it('names what failed without "undefined"', async () => {
    const client = new NewsLookupClient({
      config: parseProviderConfig({ baseUrl: `${origin}/v1`, caPem, maxAttempts: 1, readTimeoutMs: 2000 }),
      secrets: { apiKey: async () => 'parser-test-key' },
      sleep: async () => {},
    });
    const error = await failureOf(client);
    expect(error).toBeInstanceOf(ProviderError);
    expect(error.message).toMatch(/network error/);
    expect(error.message).not.toMatch(placeholders);
  });
});

describe('any error below HTTP', () => {
  it('is described by its code only when it has one: a string or a number (property)', async () => {
    const code = fc.oneof(
      fc.constant(undefined),
      fc.constant(null),
      fc.constant(''),
      fc.constant(Number.NaN),
      fc.constant({ nested: true }),
      fc.constantFrom('ECONNRESET', 'UND_ERR_SOCKET', 'HPE_INVALID_CONSTANT'),
      fc.integer({ min: -200, max: 200 }),
    );
    const message = fc.stringMatching(/^[a-z ]{0,30}$/);
    await fc.assert(
      fc.asyncProperty(code, message, fc.boolean(), async (value, text, hasCode) => {
        const agent = new MockAgent();
        agent.disableNetConnect();
        const thrown = Object.assign(new Error(text), hasCode ? { code: value } : {});
        agent.get('https://api.test').intercept({ path: '/v1/news', method: 'POST' }).replyWithError(thrown);
        const client = new NewsLookupClient({
          config: parseProviderConfig({ baseUrl: 'https://api.test/v1', maxAttempts: 1 }),
          secrets: { apiKey: async () => 'property-key' },
          dispatcher: agent,
          sleep: async () => {},
        });
        const error = await failureOf(client);
        await agent.close();
        expect(error.message).not.toMatch(placeholders);
        const expected = errorCodeOf(thrown);
        if (expected !== undefined) expect(error.message).toContain(expected);
      }),
      { numRuns: 60 },
    );
  });

  it('errorCodeOf keeps only a non-empty string or a finite number', () => {
    expect(errorCodeOf(Object.assign(new Error('x'), { code: undefined }))).toBeUndefined();
    expect(errorCodeOf(Object.assign(new Error('x'), { code: 'ECONNRESET' }))).toBe('ECONNRESET');
    expect(errorCodeOf({ code: 429 })).toBe('429');
    expect(errorCodeOf({ code: '  ' })).toBeUndefined();
    expect(errorCodeOf({ code: { nested: true } })).toBeUndefined();
    expect(errorCodeOf('ECONNRESET')).toBeUndefined();
    expect(errorCodeOf(undefined)).toBeUndefined();
  });
});
