/**
 * Issue 30, item 6: a provider that answers 403 with the API key in its body, written in an
 * encoding the redaction did not know (hex, `\uXXXX` escapes, every byte percent-encoded, HTML
 * references, escapes of escapes). The client runs against a real HTTPS server on loopback; the
 * key must reach neither the error chain (what Lambda records as the invocation's error, and the
 * run record's reason) nor any log line of the shared logger.
 */
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { inspect } from 'node:util';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { ProviderAuthError } from '#core/errors';
import type { Log } from '#core/ports';
import { parseProviderConfig } from '#provider/config';
import { NewsLookupClient } from '#provider/news-client';
import { issueLoopbackCertificate } from '#sandbox/tls';
import { createLogger } from '#shared/powertools';
import { redactSecrets } from '#shared/secret-redaction';
import { failure } from '#test/pages';
import { decodeEscapes, escapeEvery, leaksOf } from '#test/secret-leaks';

const key = 'KEY-7f3a9c2e51d84b06';

let server: Server;
let origin: string;
let caPem: string;
let body = '';

beforeAll(async () => {
  const ca = inject('sandboxCa');
  caPem = ca.cert;
  const certificate = await issueLoopbackCertificate(ca);
  server = createServer({ cert: certificate.cert, key: certificate.key }, (request, response) => {
    request.resume();
    request.on('end', () => {
      response.writeHead(403, { 'content-type': 'application/json' });
      response.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

const clients: NewsLookupClient[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.close()));
});
afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

/** Every line the client logs, and every line the shared logger writes for them. */
class SharedLoggerLog implements Log {
  readonly lines: string[] = [];
  readonly #logger = createLogger({ serviceName: 'provider-secret-encodings-test' });
  constructor() {
    this.#logger.setLogLevel('DEBUG');
    const capture = (...parts: unknown[]) => {
      this.lines.push(parts.map(String).join(' '));
    };
    // Powertools prints through its own Console; capture it at that seam.
    (this.#logger as unknown as { console: Record<string, unknown> }).console = {
      log: capture,
      info: capture,
      warn: capture,
      error: capture,
      debug: capture,
      trace: capture,
    };
  }
  debug = (message: string, extra?: Record<string, unknown>) => this.#logger.debug(message, extra ?? {});
  info = (message: string, extra?: Record<string, unknown>) => this.#logger.info(message, extra ?? {});
  warn = (message: string, extra?: Record<string, unknown>) => this.#logger.warn(message, extra ?? {});
  error = (message: string, extra?: Record<string, unknown>) => this.#logger.error(message, extra ?? {});
}

const rendered = (error: unknown) =>
  `${inspect(error, { depth: Number.POSITIVE_INFINITY, showHidden: true })}\n${JSON.stringify(error, Object.getOwnPropertyNames(error as object))}`;

const hex = Buffer.from(key, 'utf8').toString('hex');

describe('a 403 body that carries the API key in an encoding (issue 30, item 6)', () => {
  it.each([
    ['hex', `{"error":{"code":"FORBIDDEN","message":"key rejected (hex=${hex})"}}`],
    ['upper-case hex', `{"error":{"code":"FORBIDDEN","message":"key rejected: ${hex.toUpperCase()}"}}`],
    ['literal \\uXXXX escapes in a text body', `key ${escapeEvery(key, 'u')} rejected`],
    [
      'percent-encoded bytes',
      `{"error":{"code":"FORBIDDEN","message":"GET /news?key=${escapeEvery(key, 'percent')}"}}`,
    ],
    ['HTML references', `<html><body>key ${escapeEvery(key, 'decimal')} is not allowed</body></html>`],
    ['escaped escapes', JSON.stringify({ error: { message: JSON.stringify({ key: escapeEvery(key, 'u') }) } })],
  ])('keeps the key in %s out of the error, its causes and the log', async (_form, answer) => {
    body = answer;
    const log = new SharedLoggerLog();
    const client = new NewsLookupClient({
      config: parseProviderConfig({ baseUrl: origin, caPem, maxAttempts: 1, readTimeoutMs: 5000 }),
      secrets: { apiKey: async () => key },
      log,
      sleep: async () => {},
      random: () => 0.5,
    });
    clients.push(client);
    const error = await failure(client.pages({ from: '2026-11-22', to: '2026-11-22' }));
    expect(error).toBeInstanceOf(ProviderAuthError);
    const text = rendered(error);
    expect(text).toContain('HTTP 403');
    for (const seen of [text, log.lines.join('\n'), redactSecrets(`${error.name}: ${error.message}`)]) {
      expect(leaksOf(seen, key)).toEqual([]);
      expect(leaksOf(decodeEscapes(seen), key)).toEqual([]);
    }
  });
});
