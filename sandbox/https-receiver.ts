/**
 * A local HTTPS endpoint that records what it receives: the sandbox's stand-in for a subscriber's
 * webhook and for a Slack incoming webhook. Its certificate is signed by the sandbox CA, which
 * moto server and the Slack relay trust explicitly.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { issueLoopbackCertificate, type PemPair } from './tls.ts';

export interface ReceivedRequest {
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}

export interface HttpsReceiver {
  /** Base URL, `https://127.0.0.1:PORT`. */
  readonly url: string;
  /** Everything received so far, oldest first. */
  readonly received: readonly ReceivedRequest[];
  /** Removes and returns what was received since the last call. */
  take(): ReceivedRequest[];
  /** Answers the next `times` requests with `status` (and optional headers) instead of 200. */
  failNext(status: number, times?: number, headers?: Record<string, string>): void;
  stop(): Promise<void>;
}

export async function startHttpsReceiver(ca: PemPair): Promise<HttpsReceiver> {
  const certificate = await issueLoopbackCertificate(ca);
  const received: ReceivedRequest[] = [];
  let taken = 0;
  const failures: { status: number; headers: Record<string, string> }[] = [];
  const server = createServer({ cert: certificate.cert, key: certificate.key }, (request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const failure = failures.shift();
      if (failure) {
        response.writeHead(failure.status, failure.headers).end('failure injected by the sandbox');
        return;
      }
      received.push({
        path: request.url ?? '/',
        headers: request.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      });
      response.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `https://127.0.0.1:${port}`,
    received,
    take() {
      const fresh = received.slice(taken);
      taken = received.length;
      return fresh;
    },
    failNext(status, times = 1, headers = {}) {
      for (let i = 0; i < times; i++) failures.push({ status, headers });
    },
    async stop() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
