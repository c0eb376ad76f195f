/**
 * The preference endpoint on loopback HTTPS, for the sandbox and the browser test: the same core
 * (functions/core/email/preferences.ts) the Lambda handler runs behind API Gateway, with a
 * certificate signed by the sandbox CA. A request is turned into the same plain request the
 * handler builds from an API Gateway event, and the response written back as it is. Bodies over
 * the core's limit are cut off (as API Gateway limits them); nothing is logged.
 */
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import {
  type EndpointRequest,
  handlePreferenceRequest,
  MAX_BODY_BYTES,
  type PreferenceDeps,
} from '#core/email/preferences';
import { issueLoopbackCertificate, type PemPair } from './tls.ts';

export interface PreferenceServer {
  /** `https://127.0.0.1:PORT`: the PREFERENCES_URL of the sandbox. */
  readonly url: string;
  /** Requests answered so far (method and route kind only; never the token). */
  readonly requests: readonly { readonly method: string; readonly route: string; readonly status: number }[];
  stop(): Promise<void>;
}

/** Starts the endpoint; `deps` is built lazily (its links need the URL this returns). */
export async function startPreferenceServer(
  ca: PemPair,
  deps: () => PreferenceDeps,
  port = 0,
): Promise<PreferenceServer> {
  const certificate = await issueLoopbackCertificate(ca);
  const requests: { method: string; route: string; status: number }[] = [];
  const server: Server = createServer({ cert: certificate.cert, key: certificate.key }, (incoming, outgoing) => {
    // Keeps at most one byte more than the endpoint takes: enough for it to answer 413 to a body
    // that is too large, as it does behind API Gateway, which passes the whole body (dropping the
    // chunk that went over would hand it a shorter body, or an empty one, to act on).
    const chunks: Buffer[] = [];
    let kept = 0;
    incoming.on('data', (chunk: Buffer) => {
      const room = MAX_BODY_BYTES + 1 - kept;
      if (room <= 0) return;
      const part = chunk.length <= room ? chunk : chunk.subarray(0, room);
      chunks.push(part);
      kept += part.length;
    });
    incoming.on('end', () => {
      const url = new URL(incoming.url ?? '/', 'https://127.0.0.1');
      const request: EndpointRequest = {
        method: incoming.method ?? 'GET',
        path: url.pathname,
        query: Object.fromEntries(url.searchParams),
        body: Buffer.concat(chunks).toString('utf8'),
        contentType: incoming.headers['content-type'],
        acceptLanguage: incoming.headers['accept-language'],
      };
      handlePreferenceRequest(request, deps()).then(
        (response) => {
          requests.push({
            method: request.method,
            route: url.pathname.split('/').at(-2) ?? '',
            status: response.status,
          });
          outgoing.writeHead(response.status, response.headers);
          outgoing.end(request.method === 'HEAD' ? undefined : response.body);
        },
        (error: unknown) => {
          requests.push({ method: request.method, route: url.pathname.split('/').at(-2) ?? '', status: 500 });
          outgoing.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' });
          outgoing.end(`internal error: ${error instanceof Error ? error.name : 'unknown'}\n`);
        },
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const { port: bound } = server.address() as AddressInfo;
  return {
    url: `https://127.0.0.1:${bound}`,
    requests,
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
