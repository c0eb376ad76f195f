/**
 * functions/shared/http-pool.ts gives the provider client and the Slack relay undici's Agent and
 * request without undici's package entry, which loads fetch, WebSocket, the mock agents and Node's
 * own bundled undici at every cold start. These tests hold both halves of that: the alert and Slack
 * relay bundles carry none of the entry, and what they carry works on its own, in a process where
 * the entry never ran (in this one it has: the tests import it, and it adds `request` to every
 * dispatcher's prototype, which would hide a missing piece).
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { build } from 'esbuild';
import { Agent as PackageAgent } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Agent, request } from '#shared/http-pool';

const bundleOptions = {
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node22',
  logLevel: 'silent',
  absWorkingDir: process.cwd(),
} as const;

describe.each([
  ['alert function', 'functions/alert-run/handler.ts'],
  ['Slack relay', 'functions/slack-relay/handler.ts'],
])('the %s bundle', (_label, entry) => {
  it("loads undici's Agent and request, not its package entry (fetch, WebSocket, mocks)", async () => {
    const result = await build({
      ...bundleOptions,
      entryPoints: [entry],
      write: false,
      metafile: true,
      outfile: 'alert.mjs',
    });
    const undici = Object.keys(result.metafile.inputs).filter((path) => path.startsWith('node_modules/undici/'));
    expect(undici).toContain('node_modules/undici/lib/dispatcher/agent.js');
    expect(undici).toContain('node_modules/undici/lib/api/api-request.js');
    expect(undici).not.toContain('node_modules/undici/index.js');
    // The request body's readers (lib/web/fetch/body.js and what it needs) are part of request.
    expect(
      undici.filter((path) =>
        /\/lib\/(web\/(websocket|eventsource|cookies|cache)|mock|cache|interceptor)\//.test(path),
      ),
    ).toEqual([]);
  });
});

describe('http-pool', () => {
  const seen: { method: string | undefined; url: string | undefined; body: string }[] = [];
  const server = createServer((incoming: IncomingMessage, response) => {
    let body = '';
    incoming.setEncoding('utf8');
    incoming.on('data', (chunk: string) => {
      body += chunk;
    });
    incoming.on('end', () => {
      seen.push({ method: incoming.method, url: incoming.url, body });
      response.writeHead(201, { 'content-type': 'application/json', 'x-echo': incoming.headers['x-api-key'] ?? '' });
      response.end(JSON.stringify({ got: body }));
    });
  });
  let origin = '';

  beforeAll(async () => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it("is undici's own Agent class, not a copy (extended only to check where it connects)", () => {
    expect(Object.getPrototypeOf(Agent)).toBe(PackageAgent);
    expect(new Agent()).toBeInstanceOf(PackageAgent);
  });

  it('sends to the URL’s origin and path with its query, and defaults the method as undici’s request does', async () => {
    const dispatcher = new Agent({ connections: 1 });
    try {
      const posted = await request(`${origin}/v1/news?x=1`, {
        dispatcher,
        method: 'POST',
        headers: { 'X-API-KEY': 'k1' },
        body: '{"a":1}',
      });
      expect(posted.statusCode).toBe(201);
      expect(posted.headers['x-echo']).toBe('k1');
      expect(await posted.body.json()).toEqual({ got: '{"a":1}' });
      await (await request(new URL(`${origin}/put`), { dispatcher, body: 'b' })).body.text();
      await (await request(`${origin}/get`, { dispatcher })).body.text();
      expect(seen.slice(-3)).toEqual([
        { method: 'POST', url: '/v1/news?x=1', body: '{"a":1}' },
        { method: 'PUT', url: '/put', body: 'b' },
        { method: 'GET', url: '/get', body: '' },
      ]);
    } finally {
      await dispatcher.close();
    }
  });

  it("makes a request in a process where undici's package entry never ran", async () => {
    const directory = mkdtempSync(join(tmpdir(), 'news-alerts-http-pool-'));
    try {
      const file = join(directory, 'probe.mjs');
      await build({
        ...bundleOptions,
        stdin: {
          contents: `
            import { Agent, request } from '#shared/http-pool';
            // The package entry adds request() to every dispatcher; it must not have run here.
            if (typeof Agent.prototype.request === 'function') throw new Error('the undici package entry was loaded');
            const dispatcher = new Agent({ connections: 1 });
            const response = await request(process.argv[2], { dispatcher, method: 'POST', body: 'ping' });
            process.stdout.write(JSON.stringify({ status: response.statusCode, body: await response.body.text() }));
            await dispatcher.close();
          `,
          resolveDir: process.cwd(),
          sourcefile: 'probe.ts',
          loader: 'ts',
        },
        outfile: file,
        banner: { js: "import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);" },
      });
      // Asynchronously: the child's request is served by this process's server.
      const child = await promisify(execFile)(process.execPath, [file, `${origin}/probe`], { encoding: 'utf8' });
      expect(child.stderr).toBe('');
      expect(JSON.parse(child.stdout)).toEqual({ status: 201, body: JSON.stringify({ got: 'ping' }) });
    } finally {
      rmSync(directory, { recursive: true, force: true });
    }
  });
});
