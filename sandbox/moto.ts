import { type ChildProcess, spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { ensurePythonEnv, projectRoot, venvBin } from './python-env.mjs';

/** A running moto server (the local AWS emulator) bound to loopback. */
export interface MotoServer {
  /** Base URL to pass as `endpoint` to every AWS SDK client. */
  readonly endpoint: string;
  /** Wipes every resource in the emulator. */
  reset(): Promise<void>;
  /** The emulator's full state dump (the only way to read SMS and email deliveries). */
  dump(): Promise<unknown>;
  stop(): Promise<void>;
}

export interface StartMotoOptions {
  /** Fixed port; a free one is chosen when omitted. */
  readonly port?: number;
  /** PEM bundle moto trusts for HTTPS subscriptions (the local webhook receivers' CA). */
  readonly caBundlePath?: string;
}

/** Dummy credentials: moto reads the service from the SigV4 scope and ignores the keys. */
export const localAwsConfig = (endpoint: string) =>
  ({
    endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
  }) as const;

export async function freePort(): Promise<number> {
  return await new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => {
        if (address && typeof address === 'object') resolve(address.port);
        else reject(new Error('could not allocate a loopback port'));
      });
    });
  });
}

async function waitUntilReady(endpoint: string, child: ChildProcess, output: () => string): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) {
      throw new Error(`moto server exited with code ${child.exitCode} before it was ready:\n${output()}`);
    }
    try {
      const response = await fetch(`${endpoint}/moto-api/data.json`);
      if (response.ok) return;
    } catch {
      // not listening yet
    }
    await sleep(100);
  }
  throw new Error(`moto server did not answer on ${endpoint} within 30 s:\n${output()}`);
}

/** moto server with fixes to its DynamoDB and SQS backends (see the file). */
const motoServerScript = join(projectRoot, 'sandbox', 'moto-server.py');

/**
 * Installs (first time only, with progress on stderr, for as long as pip works) and starts moto
 * server on 127.0.0.1.
 */
export async function startMoto(options: StartMotoOptions = {}): Promise<MotoServer> {
  await ensurePythonEnv();
  const port = options.port ?? (await freePort());
  const endpoint = `http://127.0.0.1:${port}`;
  const env: NodeJS.ProcessEnv = { ...process.env, PYTHONUNBUFFERED: '1' };
  if (options.caBundlePath) env.REQUESTS_CA_BUNDLE = options.caBundlePath;
  // moto server with its DynamoDB requests serialized (moto-server.py says why): concurrent
  // publishers would otherwise lose counts that DynamoDB itself never loses.
  const child = spawn(venvBin('python'), [motoServerScript, '-H', '127.0.0.1', '-p', String(port)], {
    env,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-4000);
  });
  await waitUntilReady(endpoint, child, () => stderr);
  return {
    endpoint,
    async reset() {
      await fetch(`${endpoint}/moto-api/reset`, { method: 'POST' });
    },
    async dump() {
      return await (await fetch(`${endpoint}/moto-api/data.json`)).json();
    },
    async stop() {
      if (child.exitCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await Promise.race([exited, sleep(3000).then(() => child.kill('SIGKILL'))]);
    },
  };
}
