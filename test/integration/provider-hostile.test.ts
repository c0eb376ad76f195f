/**
 * The provider client against a hostile provider: a raw TLS server on loopback (certificate from
 * the test run's throw-away CA) that answers with bytes no HTTP library would produce — malformed
 * status lines and headers carrying the API key, bodies that echo it, replies that drip one byte
 * at a time. Guarantees checked (DESIGN section 3): the key never reaches an error chain or a log
 * line in any encoding, and every failure is a typed ProviderError in bounded time.
 */
import type { AddressInfo } from 'node:net';
import { createServer, type Server, type TLSSocket } from 'node:tls';
import { inspect } from 'node:util';
import { Agent, request } from 'undici';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { ProviderError, ProviderResponseError, ProviderStalledError } from '#core/errors';
import type { Log, SecretSource } from '#core/ports';
import { type ProviderConfigInput, parseProviderConfig } from '#provider/config';
import { NewsLookupClient } from '#provider/news-client';
import { issueLoopbackCertificate } from '#sandbox/tls';
import { createLogger } from '#shared/powertools';
import { registerSecret } from '#shared/secret-redaction';
import { failure } from '#test/pages';
import { leaksOf } from '#test/secret-leaks';

// --- Raw TLS server -------------------------------------------------------------------------------

/** Writes whatever it likes on the socket once a whole request (headers and body) arrived. */
type Responder = (socket: TLSSocket) => void;

let server: Server;
let origin: string;
let caPem: string;
let respond: Responder;
const sockets = new Set<TLSSocket>();
const timers = new Set<NodeJS.Timeout>();

beforeAll(async () => {
  const ca = inject('sandboxCa');
  caPem = ca.cert;
  const certificate = await issueLoopbackCertificate(ca);
  server = createServer({ cert: certificate.cert, key: certificate.key }, (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => {});
    let received = '';
    socket.on('data', (chunk: Buffer) => {
      received += chunk.toString('latin1');
      const end = received.indexOf('\r\n\r\n');
      if (end === -1) return;
      const length = Number(/content-length:\s*(\d+)/i.exec(received.slice(0, end))?.[1] ?? 0);
      if (received.length - end - 4 < length) return;
      received = '';
      respond(socket);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterEach(async () => {
  for (const timer of timers) clearInterval(timer);
  timers.clear();
  await Promise.all(clients.splice(0).map((client) => client.close()));
  for (const socket of sockets) socket.destroy();
});

afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

/** A complete, well-formed HTTP response with `body`. */
const httpResponse = (status: string, body: string, headers: Record<string, string> = {}) =>
  `HTTP/1.1 ${status}\r\n${Object.entries({
    'content-type': 'application/json',
    ...headers,
    'content-length': String(Buffer.byteLength(body)),
  })
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('')}\r\n${body}`;

// --- Client fixtures ------------------------------------------------------------------------------

class RecordingLog implements Log {
  readonly lines: string[] = [];
  debug = (message: string, extra?: Record<string, unknown>) => this.#push(message, extra);
  info = (message: string, extra?: Record<string, unknown>) => this.#push(message, extra);
  warn = (message: string, extra?: Record<string, unknown>) => this.#push(message, extra);
  error = (message: string, extra?: Record<string, unknown>) => this.#push(message, extra);
  #push(message: string, extra?: Record<string, unknown>) {
    this.lines.push(`${message} ${inspect(extra, { depth: Number.POSITIVE_INFINITY })}`);
  }
}

const clients: NewsLookupClient[] = [];

function client(key: string, overrides: Partial<ProviderConfigInput> = {}) {
  const log = new RecordingLog();
  const secrets: SecretSource = { apiKey: async () => key };
  const instance = new NewsLookupClient({
    config: parseProviderConfig({
      baseUrl: origin,
      caPem,
      maxAttempts: 2,
      readTimeoutMs: 2000,
      connectTimeoutMs: 2000,
      ...overrides,
    }),
    secrets,
    log,
    sleep: async () => {},
    random: () => 0.5,
  });
  clients.push(instance);
  return { instance, log };
}

const range = { from: '2026-11-22', to: '2026-11-22' };

/** Everything an error chain can show: message, stack, own fields and causes, at any depth. */
const rendered = (error: unknown) =>
  `${inspect(error, { depth: Number.POSITIVE_INFINITY, showHidden: true })}\n${JSON.stringify(error, Object.getOwnPropertyNames(error as object))}`;

/** What the shared Powertools logger writes for `write()`, as text. */
function loggerOutput(write: (logger: ReturnType<typeof createLogger>) => void): string {
  const chunks: string[] = [];
  const logger = createLogger({ serviceName: 'provider-hostile-test' });
  logger.setLogLevel('DEBUG');
  const capture = (...parts: unknown[]) => {
    chunks.push(parts.map(String).join(' '));
  };
  // Powertools prints through its own Console on stdout/stderr; capture it at that seam.
  (logger as unknown as { console: Record<string, unknown> }).console = {
    log: capture,
    info: capture,
    warn: capture,
    error: capture,
    debug: capture,
    trace: capture,
  };
  write(logger);
  return chunks.join('\n');
}

// --- Tests ----------------------------------------------------------------------------------------

describe('a provider answering malformed HTTP that carries the key (issue 10, item 3)', () => {
  const key = 'Zq7-LIVE-KEY-4f9c2a81be';
  const base64 = Buffer.from(key).toString('base64');
  const cases: [string, string][] = [
    ['a Content-Length holding the key', `HTTP/1.1 200 OK\r\nContent-Length: nope-${key}\r\n\r\n{}`],
    ['a header with a control character after the key', `HTTP/1.1 200 OK\r\nX-Echo: ${key}\u0001\r\n\r\n{}`],
    ['a status line that is the key', `HTTP/1.1 ${key}\r\n\r\n`],
    [
      'the key upper-cased and base64-encoded',
      `HTTP/1.1 200 OK\r\nContent-Length: ${key.toUpperCase()}${base64}\r\n\r\n`,
    ],
    ['a ten-character prefix of the key', `HTTP/1.1 200 OK\r\nContent-Length: x${key.slice(0, 10)}\r\n\r\n`],
  ];

  it.each(cases)('neither the error chain nor any log line shows it: %s', async (_label, reply) => {
    respond = (socket) => socket.end(reply);
    const { instance, log } = client(key);
    const error = await failure(instance.pages(range));
    expect(error).toBeInstanceOf(ProviderError);
    // The cause is a sanitized copy, not undici's object with the raw bytes.
    expect(error.cause).toBeInstanceOf(Error);
    expect((error.cause as Error).name).toBe('HTTPParserError');
    expect(leaksOf(rendered(error), key)).toEqual([]);
    expect(leaksOf(log.lines.join('\n'), key)).toEqual([]);
    const output = loggerOutput((logger) => logger.error('alert run failed', error as Error));
    expect(output).toContain('HTTPParserError');
    expect(leaksOf(output, key)).toEqual([]);
  });

  it('the shared logger scrubs the raw undici error too (defense in depth)', async () => {
    respond = (socket) => socket.end(`HTTP/1.1 200 OK\r\nContent-Length: nope-${key}\r\n\r\n{}`);
    const dispatcher = new Agent({ connect: { ca: caPem } });
    let raw: unknown;
    try {
      await request(`${origin}/news`, { dispatcher, method: 'POST', body: '{}' });
    } catch (error) {
      raw = error;
    } finally {
      await dispatcher.close();
    }
    // The unsanitized error really carries the key: the test would prove nothing otherwise.
    expect(inspect(raw, { showHidden: true })).toContain(key);
    registerSecret(key);
    const output = loggerOutput((logger) => {
      logger.error('raw', raw as Error);
      logger.error('wrapped', new ProviderError('wrapped', { retryable: true }, { cause: raw }));
      logger.info('fields', { body: `echo ${key}`, encoded: encodeURIComponent(key), nested: { deeper: [base64] } });
    });
    expect(output).toContain('HTTPParserError');
    expect(leaksOf(output, key)).toEqual([]);
  });
});

describe('a key echoed in a body that is not JSON (issue 10, item 14b)', () => {
  // Node's JSON.parse error quotes the first ten characters of the input: the whole of a
  // ten-character key, a prefix of a longer one.
  it.each([
    ['a ten-character key', 'K3y9x7Q2pZ'],
    ['a longer key', 'CANARY-KEY-8d41f0c2e7'],
  ])('keeps %s out of the SyntaxError cause, the message and the log', async (_label, key) => {
    respond = (socket) => socket.end(httpResponse('200 OK', `${key}<html>maintenance</html>`));
    const { instance, log } = client(key);
    const error = await failure(instance.pages(range));
    expect(error).toBeInstanceOf(ProviderError);
    expect((error.cause as Error).name).toBe('SyntaxError');
    expect(leaksOf(rendered(error), key)).toEqual([]);
    expect(leaksOf(log.lines.join('\n'), key)).toEqual([]);
  });
});

describe('a provider that drips its reply (issue 10, item 5b)', () => {
  /** Sends the headers, then one byte of a never-ending body every `everyMs`. */
  const drip =
    (everyMs: number, onByte?: (sent: number) => void): Responder =>
    (socket) => {
      socket.write('HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 1000000\r\n\r\n{');
      let sent = 0;
      const timer = setInterval(() => {
        if (socket.destroyed) {
          clearInterval(timer);
          return;
        }
        socket.write(' ');
        onByte?.(++sent);
      }, everyMs);
      timers.add(timer);
    };

  it('cuts a response that never completes at the whole-response deadline and retries', async () => {
    respond = drip(10);
    const { instance, log } = client('drip-key-0001', { readTimeoutMs: 100, responseTimeoutMs: 150 });
    const error = await failure(instance.pages(range));
    expect(error).toBeInstanceOf(ProviderError);
    expect(error).not.toBeInstanceOf(ProviderResponseError);
    expect((error as ProviderError).retryable).toBe(true);
    expect(error.message).toContain('took longer than 150 ms in total (NEWS_API_RESPONSE_TIMEOUT_MS)');
    expect(log.lines.some((line) => line.startsWith('news API request failed; retrying'))).toBe(true);
  });

  it('reports a drip cut by the run deadline as a stalled provider, not as a clean stop', async () => {
    const deadline = new AbortController();
    // The run's soft deadline fires while the drip is going on, well past the read timeout.
    respond = drip(10, (sent) => {
      if (sent === 30) deadline.abort(new Error('soft deadline'));
    });
    const { instance } = client('drip-key-0002', { readTimeoutMs: 100, responseTimeoutMs: 600_000 });
    const error = await failure(instance.pages(range, { signal: deadline.signal }));
    expect(error).toBeInstanceOf(ProviderStalledError);
    expect(error.message).toContain('still answering 2026-11-22..2026-11-22 page 1');
  });
});
