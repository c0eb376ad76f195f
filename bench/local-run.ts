/**
 * The local stack of the end-to-end benchmarks: moto server (shared by the whole benchmark), the
 * news API simulator in a child process (bench/simulator-host.ts), and startLocalStack's tables,
 * topics, audit queues, secret, audiences and rules, pointed at that simulator as an external
 * provider.
 */
import { type ChildProcess, fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
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
