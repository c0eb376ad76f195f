/**
 * A loopback HTTP proxy in front of moto server that makes chosen AWS actions slow, so the
 * publishing benchmark (bench/publishing.ts) sees SNS answer PublishBatch in ~40 ms as the real
 * service does, while moto answers in a few. Everything else passes straight through.
 *
 * What it guarantees:
 * - bodies stream through unchanged in both directions: only the start of a form-encoded body is
 *   held back while its `Action` parameter is read, then that start and the rest go on as they
 *   arrive (a 256 KB PublishBatch is never copied whole);
 * - a request whose action is in `delayedActions` waits at least `delayMs` before it is forwarded,
 *   measured with the monotonic clock and recorded per request ({@link ProxiedRequest.injectedMs});
 *   every other request is forwarded at once and records 0;
 * - the action is read the way each AWS wire protocol carries it: the `Action` form parameter of
 *   the query protocol (SNS today), the `X-Amz-Target` header of the JSON protocols (DynamoDB,
 *   SQS, and SNS should it move), and the `/service/<name>/operation/<action>` path of Smithy
 *   RPC v2 CBOR.
 *
 * Assertions belong on the per-request records, never on wall-clock time: the records say what
 * the proxy injected whatever the machine's load.
 */
import {
  Agent,
  createServer,
  type IncomingHttpHeaders,
  type IncomingMessage,
  request,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { setTimeout as delay } from 'node:timers/promises';

/** How a request named its action. */
export type WireProtocol = 'query' | 'json' | 'cbor' | 'unknown';

/** One request the proxy forwarded. */
export interface ProxiedRequest {
  /** The AWS action (`PublishBatch`, `GetItem`, ...), undefined when none could be read. */
  readonly action: string | undefined;
  readonly protocol: WireProtocol;
  /** Time the proxy held the request before forwarding it (ms, monotonic clock); 0 when not delayed. */
  readonly injectedMs: number;
  /** moto's HTTP status; 502 when moto could not be reached. */
  readonly status: number;
}

/** Options of {@link startLatencyProxy}. */
export interface LatencyProxyOptions {
  /** Where requests go (moto server's endpoint, `http://127.0.0.1:<port>`). */
  readonly target: string;
  /** Injected latency per delayed request (ms). */
  readonly delayMs: number;
  /** Actions that wait. Default: PublishBatch. */
  readonly delayedActions?: readonly string[];
}

/** A running proxy. */
export interface LatencyProxy {
  /** Base URL to give a client as `endpoint`. */
  readonly endpoint: string;
  /** Every request forwarded since the start (or the last {@link clear}), in completion order. */
  readonly requests: readonly ProxiedRequest[];
  /** Forgets the records (between benchmark runs). */
  clear(): void;
  stop(): Promise<void>;
}

/** A form body's start that names no action within this many bytes is forwarded undelayed. */
const maxPeekBytes = 16 * 1024;

/** The action named by headers or path alone (JSON and CBOR protocols), if any. */
export function actionFromRequestLine(
  url: string,
  headers: IncomingHttpHeaders,
): { action: string; protocol: WireProtocol } | undefined {
  const target = headers['x-amz-target'];
  if (typeof target === 'string' && target !== '') {
    // `DynamoDB_20120810.GetItem`, `AmazonSQS.SendMessageBatch`: the action follows the last dot.
    return { action: target.slice(target.lastIndexOf('.') + 1), protocol: 'json' };
  }
  const cbor = /\/service\/[^/?]+\/operation\/([^/?]+)/.exec(url);
  if (cbor?.[1] !== undefined) return { action: decodeURIComponent(cbor[1]), protocol: 'cbor' };
  return undefined;
}

/**
 * The `Action` parameter of a form-encoded body's start: the action when a complete `Action=`
 * parameter is there, `null` when the body (complete, or as far as `maxPeekBytes`) names none,
 * undefined when more of the body is needed to tell.
 */
export function queryActionOf(start: string, complete: boolean): string | null | undefined {
  const parameters = start.split('&');
  // The last parameter may be cut by the chunk boundary unless the body ended there.
  const whole = complete ? parameters : parameters.slice(0, -1);
  for (const parameter of whole) {
    const equals = parameter.indexOf('=');
    const name = equals < 0 ? parameter : parameter.slice(0, equals);
    if (name === 'Action') return decodeFormValue(equals < 0 ? '' : parameter.slice(equals + 1));
  }
  return complete ? null : undefined;
}

function decodeFormValue(value: string): string {
  try {
    return decodeURIComponent(value.replaceAll('+', ' '));
  } catch {
    // A malformed escape is not an action name the proxy delays.
    return value;
  }
}

const isForm = (headers: IncomingHttpHeaders): boolean =>
  (headers['content-type'] ?? '').toLowerCase().startsWith('application/x-www-form-urlencoded');

/**
 * Reads the body just far enough to find its query-protocol action; returns it with the chunks
 * read and an iterator over the rest.
 */
async function peekQueryAction(
  body: AsyncIterator<Buffer>,
): Promise<{ action: string | undefined; head: Buffer[]; ended: boolean }> {
  const head: Buffer[] = [];
  let bytes = 0;
  for (;;) {
    const next = await body.next();
    if (!next.done) {
      head.push(next.value);
      bytes += next.value.length;
    }
    const ended = next.done === true;
    const start = Buffer.concat(head).toString('latin1');
    const action = queryActionOf(start, ended || bytes >= maxPeekBytes);
    if (action !== undefined) return { action: action ?? undefined, head, ended };
  }
}

/** Starts the proxy on a free loopback port. */
export async function startLatencyProxy(options: LatencyProxyOptions): Promise<LatencyProxy> {
  const target = new URL(options.target);
  const delayed = new Set(options.delayedActions ?? ['PublishBatch']);
  // Keep-alive to moto: the proxy must not add a TCP handshake to every request it forwards.
  const agent = new Agent({ keepAlive: true });
  let records: ProxiedRequest[] = [];

  async function hold(): Promise<number> {
    const started = performance.now();
    // Timers may fire a fraction of a millisecond early against performance.now(): wait out the rest.
    for (let waited = 0; waited < options.delayMs; waited = performance.now() - started) {
      await delay(Math.max(1, Math.ceil(options.delayMs - waited)));
    }
    return performance.now() - started;
  }

  async function forward(incoming: IncomingMessage, response: ServerResponse): Promise<void> {
    const url = incoming.url ?? '/';
    let named = actionFromRequestLine(url, incoming.headers);
    const body = incoming[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
    let head: Buffer[] = [];
    let ended = false;
    if (named === undefined && isForm(incoming.headers)) {
      const peeked = await peekQueryAction(body);
      head = peeked.head;
      ended = peeked.ended;
      if (peeked.action !== undefined) named = { action: peeked.action, protocol: 'query' };
    }
    const action = named?.action;
    const injectedMs = action !== undefined && delayed.has(action) ? await hold() : 0;
    const record = (status: number) =>
      records.push({ action, protocol: named?.protocol ?? 'unknown', injectedMs, status });

    const upstream = request({
      protocol: target.protocol,
      hostname: target.hostname,
      port: target.port,
      method: incoming.method,
      path: url,
      headers: incoming.headers,
      agent,
    });
    const answered = new Promise<IncomingMessage>((resolve, reject) => {
      upstream.once('response', resolve);
      upstream.once('error', reject);
    });
    const rest = Readable.from(
      (async function* () {
        yield* head;
        if (ended) return;
        for (;;) {
          const next = await body.next();
          if (next.done) return;
          yield next.value;
        }
      })(),
    );
    try {
      const [reply] = await Promise.all([answered, pipeline(rest, upstream)]);
      response.writeHead(reply.statusCode ?? 502, reply.headers);
      await pipeline(reply, response);
      record(reply.statusCode ?? 502);
    } catch (error) {
      record(502);
      if (!response.headersSent) {
        response.writeHead(502, { 'content-type': 'text/plain' });
        response.end(`latency proxy: ${error instanceof Error ? error.message : String(error)}`);
      } else {
        response.destroy(error instanceof Error ? error : undefined);
      }
    }
  }

  const server = createServer({ keepAlive: true }, (incoming, response) => {
    void forward(incoming, response);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    get requests() {
      return records;
    },
    clear() {
      records = [];
    },
    async stop() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      agent.destroy();
    },
  };
}
