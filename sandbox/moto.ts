import { type ChildProcess, spawn } from 'node:child_process';
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
  /**
   * Fixed port (failing when it is in use). When omitted, moto binds port 0 and reports the port
   * the system gave it.
   */
  readonly port?: number;
  /** PEM bundle moto trusts for HTTPS subscriptions (the local webhook receivers' CA). */
  readonly caBundlePath?: string;
  /**
   * Gets what moto writes on stderr (its warnings and errors: an http(s) subscriber it could not
   * reach, and why), for the sandbox's log; otherwise only a failed start shows it.
   */
  readonly onStderr?: (text: string) => void;
}

/** Dummy credentials: moto reads the service from the SigV4 scope and ignores the keys. */
export const localAwsConfig = (endpoint: string) =>
  ({
    endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
  }) as const;

/** How long moto may take to start (Python imports on a loaded machine take seconds). */
const startLimitMs = 60_000;

/**
 * Waits for moto-server.py's first line on stdout, `listening on http://HOST:PORT` (printed once
 * it has bound and listens), and returns that URL. Fails, with what moto wrote on stderr, when it
 * exits first (a fixed port in use, say) or says nothing within {@link startLimitMs}.
 */
async function listeningOn(child: ChildProcess, output: () => string): Promise<string> {
  const stdout = child.stdout;
  if (stdout === null) throw new Error('moto server was started without a stdout pipe');
  return await new Promise((resolve, reject) => {
    let text = '';
    const done = (error?: Error, endpoint?: string) => {
      clearTimeout(timer);
      stdout.off('data', onData);
      child.off('close', onExit);
      child.off('error', onError);
      // The rest of its stdout is not needed, but must not fill the pipe.
      stdout.resume();
      if (error) reject(error);
      else resolve(endpoint ?? '');
    };
    const onData = (chunk: Buffer) => {
      text += chunk.toString();
      const match = /^listening on (http:\/\/\S+:\d+)$/m.exec(text);
      if (match?.[1]) done(undefined, match[1]);
    };
    // 'close', not 'exit': by then stderr is read to its end.
    const onExit = (code: number | null, signal: NodeJS.Signals | null) =>
      done(new Error(`moto server exited with ${signal ?? `code ${code}`} before it was ready:\n${output()}`));
    const onError = (error: Error) => done(new Error(`moto server could not be started: ${error.message}`));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      done(new Error(`moto server did not start listening within ${startLimitMs / 1000} s:\n${output()}`));
    }, startLimitMs);
    stdout.on('data', onData);
    child.once('close', onExit);
    child.once('error', onError);
  });
}

/** moto server with fixes to its DynamoDB and SQS backends (see the file). */
const motoServerScript = join(projectRoot, 'sandbox', 'moto-server.py');

/**
/**
 * Installs (first time only, with progress on stderr, for as long as pip works) and starts moto
 * server on 127.0.0.1. Without a fixed port, moto binds port 0 and reports the port the system
 * gave it: no port is chosen first and closed again, so no other process can take it in between
 * (and a server someone else runs on a port is never mistaken for this one).
 */
/**
 * moto's dump of every backend (`/moto-api/data.json`), the only place it shows what SNS sent to
 * email and SMS. moto builds it by walking its backends while other requests change them, and a
 * change mid-walk answers 500 with an HTML page; that is retried a few times, then named.
 */
export async function motoState(endpoint: string): Promise<unknown> {
  const url = new URL('/moto-api/data.json', endpoint);
  let last = '';
  for (let attempt = 0; attempt < 5; attempt++) {
    const response = await fetch(url);
    if (response.ok) return await response.json();
    last = `HTTP ${response.status}`;
    await response.body?.cancel();
    await sleep(50 * 2 ** attempt);
  }
  throw new Error(`moto's state dump (${url.pathname}) failed 5 times, last with ${last}`);
}

export async function startMoto(options: StartMotoOptions = {}): Promise<MotoServer> {
  await ensurePythonEnv();
  const env: NodeJS.ProcessEnv = { ...process.env, PYTHONUNBUFFERED: '1' };
  if (options.caBundlePath) env.REQUESTS_CA_BUNDLE = options.caBundlePath;
  // moto server with its DynamoDB requests serialized (moto-server.py says why): concurrent
  // publishers would otherwise lose counts that DynamoDB itself never loses.
  const child = spawn(venvBin('python'), [motoServerScript, '-H', '127.0.0.1', '-p', String(options.port ?? 0)], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    options.onStderr?.(chunk.toString());
    stderr = (stderr + chunk.toString()).slice(-4000);
  });
  const endpoint = await listeningOn(child, () => stderr);
  return {
    endpoint,
    async reset() {
      await fetch(`${endpoint}/moto-api/reset`, { method: 'POST' });
    },
    async dump() {
      return await motoState(endpoint);
    },
    async stop() {
      if (child.exitCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await Promise.race([exited, sleep(3000).then(() => child.kill('SIGKILL'))]);
    },
  };
}
