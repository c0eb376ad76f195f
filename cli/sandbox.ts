/**
 * `news-alerts sandbox up|down|status`: the local sandbox as a background process owned by the
 * project's `.sandbox/` folder (or the folder of `--sandbox-file`). `up` starts moto server and
 * the news API simulator with the example audiences and rules (cli/sandbox-daemon.ts) and waits
 * until the descriptor is written; every other command then works against it with `--local`.
 */
import { spawn } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { DescribeTableCommand } from '@aws-sdk/client-dynamodb';
import type { Command } from 'commander';
import { localAwsConfig } from '#sandbox/moto';
import { AwsClients } from './aws-clients.ts';
import { action, integerOption } from './command.ts';
import { type CommandContext, projectRoot } from './context.ts';
import { NotFoundError, OperationFailedError } from './errors.ts';
import { formatInstant } from './output.ts';
import { defaultSandboxDir, descriptorFileName, readDescriptor, type SandboxDescriptor } from './sandbox-descriptor.ts';

const daemonScript = fileURLToPath(new URL('./sandbox-daemon.ts', import.meta.url));

/** The descriptor path `sandbox` commands manage. */
const descriptorPathOf = (context: CommandContext): string =>
  resolve(context.options.sandboxFile ?? join(defaultSandboxDir(projectRoot), descriptorFileName));

const isAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
};

function readIfPresent(path: string): SandboxDescriptor | undefined {
  return existsSync(path) ? readDescriptor(path) : undefined;
}

interface SandboxStatus {
  running: boolean;
  descriptor: string;
  pid?: number | undefined;
  startedAt?: string | undefined;
  endpoint?: string | undefined;
  simulator?: string | undefined;
  tablesReachable?: boolean | undefined;
  logPath?: string | undefined;
}

async function statusOf(path: string): Promise<SandboxStatus> {
  const descriptor = readIfPresent(path);
  if (!descriptor) return { running: false, descriptor: path };
  const pid = descriptor.daemon?.pid;
  let tablesReachable = false;
  const clients = new AwsClients({ ...localAwsConfig(descriptor.endpoint), region: descriptor.region });
  try {
    await clients.dynamo.send(new DescribeTableCommand({ TableName: descriptor.names.rulesTable }));
    tablesReachable = true;
  } catch {
    // moto is not answering (or the table is gone): reported below.
  } finally {
    clients.destroy();
  }
  return {
    running: (pid === undefined || isAlive(pid)) && tablesReachable,
    descriptor: path,
    pid,
    startedAt: descriptor.daemon ? new Date(descriptor.daemon.startedAt).toISOString() : undefined,
    endpoint: descriptor.endpoint,
    simulator: descriptor.provider.url,
    tablesReachable,
    logPath: descriptor.daemon?.logPath,
  };
}

function printStatus(context: CommandContext, status: SandboxStatus): void {
  context.output.result(status, () => {
    if (!status.running) {
      context.output.line(`no sandbox is running (${status.descriptor})`);
      return;
    }
    context.output.fields([
      ['descriptor', status.descriptor],
      ['process', status.pid ?? '(in-process)'],
      ['started', status.startedAt ? formatInstant(Date.parse(status.startedAt)) : ''],
      ['moto server', status.endpoint],
      ['news API simulator', status.simulator],
      ['log', status.logPath],
    ]);
    const selector = context.options.sandboxFile === undefined ? '--local' : `--sandbox-file ${status.descriptor}`;
    context.output.line(`Use it with: news-alerts ${selector} <command>   (e.g. news-alerts ${selector} rules list)`);
  });
}

async function sandboxUp(context: CommandContext, _args: readonly unknown[], options: { seed: number }): Promise<void> {
  const path = descriptorPathOf(context);
  const existing = await statusOf(path);
  if (existing.running) {
    context.output.note('the sandbox is already running');
    printStatus(context, existing);
    return;
  }
  // A descriptor left by a sandbox that died (machine restart) points at nothing.
  rmSync(path, { force: true });
  const logPath = join(dirname(path), 'sandbox.log');
  mkdirSync(dirname(path), { recursive: true });
  const log = openSync(logPath, 'a');
  context.output.note(
    'starting moto server and the news API simulator in the background (the first start installs moto) ...',
  );
  const child = spawn(process.execPath, ['--import', 'tsx', daemonScript, path, String(options.seed)], {
    cwd: projectRoot,
    detached: true,
    stdio: ['ignore', log, log],
    env: { ...process.env, AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' },
  });
  closeSync(log);
  let exited: number | null = null;
  child.once('exit', (code) => {
    exited = code ?? 1;
  });
  child.unref();
  const deadline = Date.now() + 180_000;
  while (Date.now() < deadline) {
    if (exited !== null) {
      const tail = readFileSync(logPath, 'utf8').split('\n').slice(-15).join('\n');
      throw new OperationFailedError(`the sandbox process exited (code ${exited}) before it was ready:\n${tail}`);
    }
    const descriptor = readIfPresent(path);
    if (descriptor?.daemon?.pid === child.pid) {
      printStatus(context, await statusOf(path));
      return;
    }
    await sleep(200);
  }
  if (child.pid !== undefined) process.kill(child.pid, 'SIGTERM');
  throw new OperationFailedError(`the sandbox did not come up within 3 minutes; see ${logPath}`);
}

async function sandboxDown(context: CommandContext): Promise<void> {
  const path = descriptorPathOf(context);
  const descriptor = readIfPresent(path);
  const pid = descriptor?.daemon?.pid;
  if (!descriptor || pid === undefined || !isAlive(pid)) {
    rmSync(path, { force: true });
    context.output.result({ stopped: false, descriptor: path }, () => context.output.line('no sandbox is running'));
    return;
  }
  process.kill(pid, 'SIGTERM');
  const deadline = Date.now() + 20_000;
  while (isAlive(pid) && Date.now() < deadline) await sleep(100);
  if (isAlive(pid)) {
    // It did not stop cleanly: end its process group (the daemon and the moto server it started).
    process.kill(-pid, 'SIGKILL');
  }
  rmSync(path, { force: true });
  context.output.result({ stopped: true, descriptor: path, pid }, () =>
    context.output.line(`stopped the sandbox (process ${pid})`),
  );
}

async function sandboxStatus(context: CommandContext): Promise<void> {
  const status = await statusOf(descriptorPathOf(context));
  printStatus(context, status);
  if (!status.running) throw new NotFoundError('no sandbox is running: start it with news-alerts sandbox up');
}

/** Registers `sandbox`. */
export function registerSandbox(program: Command): void {
  const sandbox = program
    .command('sandbox')
    .description('the local sandbox (moto server + news API simulator + example audiences and rules) for --local');

  sandbox
    .command('up')
    .description('start the sandbox in the background and write its descriptor (.sandbox/sandbox.json)')
    .option('--seed <n>', 'seed of the simulator’s articles', integerOption(0), 7)
    .action(action(sandboxUp));

  sandbox.command('down').description('stop the sandbox (all its data is gone)').action(action(sandboxDown));

  sandbox
    .command('status')
    .description('whether the sandbox is running, and where (exit 3 when it is not)')
    .action(action(sandboxStatus));
}
