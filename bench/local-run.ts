/**
 * The local stack of the end-to-end benchmarks: moto server (shared by the whole benchmark), the
 * news API simulator in a child process (bench/simulator-host.ts), and startLocalStack's tables,
 * topics, audit queues, secret, audiences and rules, pointed at that simulator as an external
 * provider.
 */
import { type ChildProcess, fork, spawn } from 'node:child_process';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { SandboxAudience } from '#sandbox/examples';
import { type LocalStack, startLocalStack } from '#sandbox/local-stack';
import type { PemPair } from '#sandbox/tls';
import type { RuleItem } from './scenario.ts';
import type { HostedRequestRecord, SimulatorHostReply, SimulatorHostRequest } from './simulator-host.ts';

/** A simulator running in its own process. */
export interface SimulatorProcess {
  readonly url: string;
  readonly liveKey: string;
  readonly timeZone: string;
  /** Articles per provider date (the benchmark's key sees every outlet). */
  readonly articlesByDate: Readonly<Record<string, number>>;
  /** RSS of the simulator process after generating its articles (MiB). */
  readonly rssMiB: number;
  /** The API requests it recorded (the newest 10,000). */
  requests(): Promise<HostedRequestRecord[]>;
  stop(): Promise<void>;
}

/** Options of the simulator child. */
export interface SimulatorProcessOptions {
  readonly ca: PemPair;
  readonly seed: number;
  readonly days: number;
  readonly perDay: number;
  /** A pinned clock; the real clock when absent. */
  readonly now?: number;
  readonly timeZone?: string;
}

const hostEntry = fileURLToPath(new URL('./simulator-host.ts', import.meta.url));
const projectRoot = fileURLToPath(new URL('../', import.meta.url));

function nextReply(child: ChildProcess, type: SimulatorHostReply['type']): Promise<SimulatorHostReply> {
  return new Promise((resolve, reject) => {
    const onMessage = (message: SimulatorHostReply) => {
      if (message.type !== type && message.type !== 'error') return;
      cleanup();
      if (message.type === 'error') reject(new Error(`news simulator process: ${message.message}`));
      else resolve(message);
    };
    const onExit = (code: number | null) => {
      cleanup();
      reject(new Error(`news simulator process exited (${code}) before answering ${type}`));
    };
    const cleanup = () => {
      child.off('message', onMessage);
      child.off('exit', onExit);
    };
    child.on('message', onMessage);
    child.once('exit', onExit);
  });
}

/** Starts the simulator in a child process (through tsx, like the benchmark itself). */
export async function startSimulatorProcess(options: SimulatorProcessOptions): Promise<SimulatorProcess> {
  const child = fork(hostEntry, [], {
    execArgv: ['--import', 'tsx'],
    cwd: projectRoot,
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    env: { ...process.env, NODE_OPTIONS: '' },
  });
  const send = (message: SimulatorHostRequest) => child.send(message);
  const ready = nextReply(child, 'ready');
  send({
    type: 'start',
    ca: options.ca,
    seed: options.seed,
    days: options.days,
    perDay: options.perDay,
    timeZone: options.timeZone ?? 'Asia/Seoul',
    ...(options.now === undefined ? {} : { now: options.now }),
  });
  const started = await ready;
  if (started.type !== 'ready') throw new Error('unexpected answer from the simulator process');
  return {
    url: started.url,
    liveKey: started.liveKey,
    timeZone: started.timeZone,
    articlesByDate: started.articlesByDate,
    rssMiB: started.rssMiB,
    async requests() {
      const answer = nextReply(child, 'requests');
      send({ type: 'requests' });
      const message = await answer;
      return message.type === 'requests' ? [...message.requests] : [];
    },
    async stop() {
      if (child.exitCode !== null) return;
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      send({ type: 'stop' });
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** Options of {@link startBenchStack}. */
export interface BenchStackOptions {
  readonly motoEndpoint: string;
  readonly ca: PemPair;
  /** Start of every resource name; the process id and a counter are appended, so stacks never collide. */
  readonly prefix: string;
  readonly simulator: SimulatorProcess;
  readonly audiences: readonly SandboxAudience[];
  readonly rules: readonly RuleItem[];
  readonly environment: Readonly<Record<string, string>>;
  /** The run's clock (pinned in the request benchmark). */
  readonly now?: () => number;
}

let stacks = 0;

/** startLocalStack against the simulator process. */
export async function startBenchStack(options: BenchStackOptions): Promise<LocalStack> {
  stacks += 1;
  return await startLocalStack({
    motoEndpoint: options.motoEndpoint,
    ca: options.ca,
    prefix: `${options.prefix}${process.pid}-${stacks}-`,
    provider: { url: options.simulator.url, apiKey: options.simulator.liveKey, caPem: options.ca.cert },
    audiences: options.audiences,
    rules: options.rules,
    environment: { NEWS_API_TIME_ZONE: options.simulator.timeZone, ...options.environment },
    ...(options.now === undefined ? {} : { now: options.now }),
  });
}

/** What {@link runBundleDriver} runs. */
export interface BundleDriverOptions {
  /** Plain JavaScript run with `node -e`; the bundle's file URL is its `process.argv[1]`. */
  readonly driver: string;
  /** What the driver prints, on a line of its own, before the JSON it reports. */
  readonly marker: string;
  readonly file: string;
  readonly environment: Record<string, string>;
  readonly nodeFlags?: readonly string[];
  /** Names the run in an error: "the memory run". */
  readonly what: string;
}

/**
 * Runs a bundle's driver in a fresh `node --enable-source-maps` process, as Lambda would start it,
 * and returns the JSON the driver printed after its marker.
 */
export function runBundleDriver(options: BundleDriverOptions): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [
        '--enable-source-maps',
        ...(options.nodeFlags ?? []),
        '--input-type=module',
        '-e',
        options.driver,
        pathToFileURL(options.file).href,
      ],
      { env: options.environment, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr = (stderr + chunk.toString()).slice(-4000);
    });
    child.on('error', reject);
    child.on('exit', (code) => {
      const line = stdout.split('\n').find((l) => l.startsWith(options.marker));
      if (code !== 0 || line === undefined) {
        reject(new Error(`${options.what} failed (exit ${code}): ${stderr || stdout.slice(-2000)}`));
        return;
      }
      resolve(JSON.parse(line.slice(options.marker.length)));
    });
  });
}

/**
 * The environment the stack gives the alert function, for a bundle run against `stack` on moto and
 * the simulator process; `extra` adds to it or overrides it.
 */
export function bundleEnvironment(
  motoEndpoint: string,
  stack: LocalStack,
  simulator: SimulatorProcess,
  extra: Readonly<Record<string, string>>,
): Record<string, string> {
  const { tables } = stack.config;
  return {
    PATH: process.env.PATH ?? '',
    AWS_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: 'test',
    AWS_SECRET_ACCESS_KEY: 'test',
    AWS_ENDPOINT_URL: motoEndpoint,
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
    POWERTOOLS_SERVICE_NAME: 'news-alerts',
    POWERTOOLS_LOG_LEVEL: 'ERROR',
    POWERTOOLS_METRICS_DISABLED: 'true',
    NEWS_API_BASE_URL: simulator.url,
    NEWS_API_ALLOW_INTERNAL_TARGET: 'true',
    NEWS_API_KEY_SECRET_ID: stack.secretId,
    NEWS_API_TIME_ZONE: simulator.timeZone,
    NEWS_API_PAGE_SIZE: '100',
    LATE_ARRIVAL_MINUTES: '0',
    RULES_TABLE_NAME: tables.rules,
    AUDIENCES_TABLE_NAME: tables.audiences,
    STATE_TABLE_NAME: tables.state,
    ...extra,
  };
}
