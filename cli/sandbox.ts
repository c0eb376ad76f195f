/**
 * `news-alerts sandbox up|down|status`: the local sandbox as a background process owned by the
 * project's `.sandbox/` folder (or the folder of `--sandbox-file`). `up` starts moto server and
 * the news API simulator (or, with `--provider-url`, a real provider) with the example audiences
 * and rules (cli/sandbox-daemon.ts) and waits until the descriptor is written; every other command
 * then works against it with `--local`.
 *
 * The provider options are checked here, with the alert function's own validation, before
 * anything starts: a bad URL, CA file, zone or mapping is a usage error (exit 2), not a daemon
 * that dies in the background.
 */
import { spawn } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { DescribeTableCommand } from '@aws-sdk/client-dynamodb';
import { DescribeSecretCommand } from '@aws-sdk/client-secrets-manager';
import { type Command, Option } from 'commander';
import { ConfigError } from '#core/errors';
import { localAwsConfig } from '#sandbox/moto';
import { checkProviderSettings } from '#sandbox/provider-check';
import { ensurePythonEnv } from '../sandbox/python-env.mjs';
import { AwsClients } from './aws-clients.ts';
import { action, integerOption } from './command.ts';
import { type CommandContext, projectRoot } from './context.ts';
import { NotFoundError, OperationFailedError, UsageError } from './errors.ts';
import { targetSelector } from './hints.ts';
import { formatInstant } from './output.ts';
import {
  caPathOf,
  defaultSandboxDir,
  defaultSandboxLookbackMinutes,
  deployedInitialLookbackMinutes,
  descriptorFileName,
  readDescriptor,
  type SandboxDescriptor,
  type SandboxStart,
  SandboxStartSchema,
  startEnvironment,
} from './sandbox-descriptor.ts';
import { inputName, readUtf8File } from './utf8.ts';

/**
 * How to start the daemon from the module at `moduleUrl`: from source, `sandbox-daemon.ts` beside
 * it through tsx; from the bundle (`dist/*.js`), the bundled `sandbox-daemon.js` beside it.
 */
export function daemonCommand(moduleUrl: string): string[] {
  const bundled = moduleUrl.endsWith('.js');
  const script = fileURLToPath(new URL(bundled ? './sandbox-daemon.js' : './sandbox-daemon.ts', moduleUrl));
  return bundled ? [script] : ['--import', 'tsx', script];
}

/** The descriptor path `sandbox` commands manage. */
const descriptorPathOf = (context: CommandContext): string =>
  resolve(context.options.sandboxFile ?? join(defaultSandboxDir(projectRoot), descriptorFileName));

/** `--local`, or `--sandbox-file <path>` (quoted when the shell would split it): for hints. */
function selectorOf(context: CommandContext, path: string): string {
  // A sandbox command needs no --local itself, but the commands it suggests do.
  return targetSelector({
    local: true,
    sandboxFile: context.options.sandboxFile === undefined ? undefined : path,
  }).trimEnd();
}

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

/** One SQS queue of the sandbox and what it holds. */
interface SandboxQueue {
  readonly name: string;
  readonly audienceId: string;
  readonly kind: 'audit' | 'slack';
  readonly holds: string;
  readonly messages: number | undefined;
}

interface SandboxStatus {
  running: boolean;
  descriptor: string;
  pid?: number | undefined;
  startedAt?: string | undefined;
  startedBy?: string | undefined;
  endpoint?: string | undefined;
  /** The simulator's URL (only when the provider is the simulator). */
  simulator?: string | undefined;
  provider?:
    | {
        url: string;
        simulator: boolean;
        caPath: string;
        timeZone: string | undefined;
        pageSize: number | undefined;
        responseMapping: boolean;
      }
    | undefined;
  initialLookbackMinutes?: number | undefined;
  apiKey?: { secretId: string; set: boolean | undefined } | undefined;
  queues?: SandboxQueue[] | undefined;
  tablesReachable?: boolean | undefined;
  logPath?: string | undefined;
  /** SES email, when the sandbox has it: where its emails are written and its preference endpoint. */
  email?: { mailDir: string; preferencesUrl: string | undefined } | undefined;
}

/** `<prefix>audit-`: the audit queues' prefix, beside the Slack stand-in queues' `<prefix>slack-`. */
function auditQueuePrefixOf(descriptor: SandboxDescriptor): string {
  const slack = descriptor.names.slackStandInQueuePrefix;
  return slack.endsWith('slack-') ? `${slack.slice(0, -'slack-'.length)}audit-` : `${slack}audit-`;
}

/** The sandbox's audit and Slack stand-in queues, with their message counts. */
async function sandboxQueues(clients: AwsClients, descriptor: SandboxDescriptor): Promise<SandboxQueue[]> {
  const { SQSClient, ListQueuesCommand, GetQueueAttributesCommand } = await import('@aws-sdk/client-sqs');
  const sqs = new SQSClient({ ...clients.config });
  try {
    const kinds = [
      {
        kind: 'audit' as const,
        prefix: auditQueuePrefixOf(descriptor),
        holds: (id: string) =>
          `every notification audience ${id} was sent (raw JSON body); 'deliveries ${id}' shows them per channel`,
      },
      {
        kind: 'slack' as const,
        prefix: descriptor.names.slackStandInQueuePrefix,
        holds: (id: string) =>
          `what the Slack relay would post for ${id} (stands in for the relay Lambda's subscription)`,
      },
    ];
    const queues: SandboxQueue[] = [];
    for (const { kind, prefix, holds } of kinds) {
      let token: string | undefined;
      do {
        const page = await sqs.send(new ListQueuesCommand({ QueueNamePrefix: prefix, NextToken: token }));
        for (const url of page.QueueUrls ?? []) {
          const name = url.slice(url.lastIndexOf('/') + 1);
          const audienceId = name.slice(prefix.length);
          const { Attributes } = await sqs.send(
            new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['ApproximateNumberOfMessages'] }),
          );
          const count = Number(Attributes?.ApproximateNumberOfMessages);
          queues.push({
            name,
            audienceId,
            kind,
            holds: holds(audienceId),
            messages: Number.isFinite(count) ? count : undefined,
          });
        }
        token = page.NextToken;
      } while (token);
    }
    return queues.sort((a, b) => a.audienceId.localeCompare(b.audienceId) || a.kind.localeCompare(b.kind));
  } finally {
    sqs.destroy();
  }
}

/** Whether the secret has a current value (undefined: it could not be read). */
async function apiKeyIsSet(clients: AwsClients, secretId: string): Promise<boolean | undefined> {
  try {
    const secret = await clients.secrets.send(new DescribeSecretCommand({ SecretId: secretId }));
    return Object.values(secret.VersionIdsToStages ?? {}).some((stages) => stages.includes('AWSCURRENT'));
  } catch {
    return undefined;
  }
}

async function statusOf(path: string): Promise<SandboxStatus> {
  const descriptor = readIfPresent(path);
  if (!descriptor) return { running: false, descriptor: path };
  const pid = descriptor.daemon?.pid;
  let tablesReachable = false;
  const clients = new AwsClients({ ...localAwsConfig(descriptor.endpoint), region: descriptor.region });
  let queues: SandboxQueue[] | undefined;
  let apiKeySet: boolean | undefined;
  try {
    await clients.dynamo.send(new DescribeTableCommand({ TableName: descriptor.names.rulesTable }));
    tablesReachable = true;
    [queues, apiKeySet] = await Promise.all([
      sandboxQueues(clients, descriptor),
      apiKeyIsSet(clients, descriptor.names.apiKeySecretId),
    ]);
  } catch {
    // moto is not answering (or the table is gone): reported below.
  } finally {
    clients.destroy();
  }
  const { provider } = descriptor;
  const lookback = Number(descriptor.alertEnvironment.INITIAL_LOOKBACK_MINUTES ?? deployedInitialLookbackMinutes);
  return {
    running: (pid === undefined || isAlive(pid)) && tablesReachable,
    descriptor: path,
    pid,
    startedAt: descriptor.daemon ? new Date(descriptor.daemon.startedAt).toISOString() : undefined,
    startedBy: descriptor.daemon?.startedBy,
    endpoint: descriptor.endpoint,
    simulator: provider.simulator === false ? undefined : provider.url,
    provider: {
      url: provider.url,
      simulator: provider.simulator !== false,
      caPath: caPathOf(descriptor, path),
      timeZone: provider.timeZone,
      pageSize: provider.pageSize,
      responseMapping: provider.responseMapping !== undefined,
    },
    initialLookbackMinutes: lookback,
    apiKey: { secretId: descriptor.names.apiKeySecretId, set: apiKeySet },
    queues,
    tablesReachable,
    logPath: descriptor.daemon?.logPath,
    email:
      descriptor.email === undefined
        ? undefined
        : { mailDir: descriptor.email.mailDir, preferencesUrl: descriptor.email.environment.PREFERENCES_URL },
  };
}

const minutesText = (minutes: number): string => `${minutes.toLocaleString('en-US')} minutes`;

function printStatus(context: CommandContext, status: SandboxStatus): void {
  context.output.result(status, () => {
    if (!status.running) {
      context.output.line(`no sandbox is running (${status.descriptor})`);
      return;
    }
    const selector = selectorOf(context, status.descriptor);
    const provider = status.provider;
    const lookback = status.initialLookbackMinutes ?? deployedInitialLookbackMinutes;
    context.output.fields([
      ['descriptor', status.descriptor],
      ['process', status.pid ?? '(in-process)'],
      ['started', status.startedAt ? formatInstant(Date.parse(status.startedAt)) : ''],
      ['started by', status.startedBy ?? ''],
      ['moto server', status.endpoint],
      ['provider', provider ? `${provider.url}${provider.simulator ? ' (news API simulator)' : ''}` : ''],
      ['provider CA', provider?.caPath ?? ''],
      ['provider time zone', provider?.timeZone ?? '(not set)'],
      ['page size', provider?.pageSize ?? '(default)'],
      ['response mapping', provider?.responseMapping ? 'custom' : '(built-in)'],
      [
        'first run looks back',
        `${minutesText(lookback)}${
          lookback === deployedInitialLookbackMinutes
            ? ' (the deployed default)'
            : ` (sandbox up --initial-lookback; a deployed stack's default is ${deployedInitialLookbackMinutes})`
        }`,
      ],
      [
        'API key',
        status.apiKey?.set === undefined
          ? '(unknown)'
          : status.apiKey.set
            ? `set (${status.apiKey.secretId})`
            : `NOT SET: news-alerts ${selector} api-key set`,
      ],
      ['log', status.logPath],
      ...(status.email === undefined
        ? []
        : ([
            ['SES email', `every email is written to ${status.email.mailDir} as a .eml file`],
            [
              'preference page',
              `${status.email.preferencesUrl ?? '(not set)'} (each email's "Email preferences" link opens it for its subscriber)`,
            ],
          ] as const)),
    ]);
    if (status.queues !== undefined && status.queues.length > 0) {
      context.output.caption('');
      context.output.caption('Queues (SQS, in moto; only in the sandbox):');
      context.output.table(
        [{ head: 'QUEUE', id: true }, 'MESSAGES', { head: 'HOLDS', wrap: true }],
        status.queues.map((queue) => [queue.name, queue.messages ?? '?', queue.holds]),
      );
    }
    context.output.caption('');
    context.output.caption(`Use it with: news-alerts ${selector} rules list`);
    context.output.caption(`  then:      news-alerts ${selector} run`);
    const firstAudience = status.queues?.find((queue) => queue.kind === 'audit')?.audienceId;
    if (firstAudience !== undefined)
      context.output.caption(`  and:       news-alerts ${selector} deliveries ${firstAudience}`);
  });
}

/** The simulator's seed when `--seed` is not given. */
const defaultSeed = 7;

/** The options of `sandbox up` as commander parses them. */
interface UpOptions {
  /** Unset: the default seed (a real provider has no seed). */
  seed?: number;
  providerUrl?: string;
  providerCa?: string;
  responseMapping?: string;
  providerTimeZone?: string;
  pageSize?: number;
  initialLookback?: number;
  publishMode?: 'single' | 'sharded';
}

/** Which option sets which variable, to name the option in a validation message. */
const optionOfVariable: Readonly<Record<string, string>> = {
  NEWS_API_BASE_URL: '--provider-url',
  NEWS_API_TIME_ZONE: '--provider-time-zone',
  NEWS_API_PAGE_SIZE: '--page-size',
  NEWS_API_RESPONSE_MAPPING: '--response-mapping',
  NEWS_API_CA_PEM: '--provider-ca',
  INITIAL_LOOKBACK_MINUTES: '--initial-lookback',
};

/** Reads a JSON object file (a response mapping). */
function readJsonObject(path: string, option: string): Record<string, unknown> {
  // A field name in another encoding would never be found in the provider's (UTF-8) JSON.
  const text = readUtf8File(path, option);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new UsageError(`${option}: ${inputName(path)} is not JSON: ${(error as Error).message}`, [], {
      cause: error,
    });
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new UsageError(
      `${option}: ${inputName(path)} must hold a JSON object (field → where it lives in the response)`,
    );
  }
  return value as Record<string, unknown>;
}

/** Reads a PEM certificate file. */
function readCertificate(path: string, option: string): string {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new UsageError(`${option}: cannot read ${path}: ${(error as Error).message}`, [], { cause: error });
  }
  if (!text.includes('-----BEGIN CERTIFICATE-----')) {
    throw new UsageError(`${option}: ${path} holds no PEM certificate (-----BEGIN CERTIFICATE-----)`);
  }
  return text;
}

/**
 * The sandbox's start options from the command line, checked as the alert function checks its
 * configuration.
 * @throws UsageError naming the option at fault
 */
export function startOptionsOf(options: UpOptions): SandboxStart {
  const withProvider = options.providerUrl !== undefined;
  if (!withProvider) {
    for (const [flag, value] of [
      ['--provider-ca', options.providerCa],
      ['--response-mapping', options.responseMapping],
      ['--provider-time-zone', options.providerTimeZone],
    ] as const) {
      if (value !== undefined) {
        throw new UsageError(`${flag} applies to a real provider: give --provider-url too (the simulator needs none)`);
      }
    }
  } else if (options.seed !== undefined) {
    throw new UsageError('--seed chooses the simulator’s articles: a real provider (--provider-url) has none to seed');
  }
  const caPath = options.providerCa === undefined ? undefined : resolve(options.providerCa);
  const caPem = caPath === undefined ? undefined : readCertificate(caPath, '--provider-ca');
  const responseMapping =
    options.responseMapping === undefined ? undefined : readJsonObject(options.responseMapping, '--response-mapping');
  const start = SandboxStartSchema.parse({
    seed: options.seed ?? defaultSeed,
    initialLookbackMinutes: options.initialLookback ?? defaultSandboxLookbackMinutes(withProvider),
    ...(options.pageSize !== undefined ? { pageSize: options.pageSize } : {}),
    ...(options.publishMode === 'sharded' ? { publishMode: options.publishMode } : {}),
    ...(withProvider
      ? {
          provider: {
            url: options.providerUrl,
            ...(caPath !== undefined ? { caPath } : {}),
            ...(options.providerTimeZone !== undefined ? { timeZone: options.providerTimeZone } : {}),
            ...(responseMapping !== undefined ? { responseMapping } : {}),
          },
        }
      : {}),
  });
  try {
    checkProviderSettings(startEnvironment(start), { url: start.provider?.url, caPem });
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    const flags = Object.entries(optionOfVariable)
      .filter(([variable]) => error.message.includes(variable))
      .map(([variable, flag]) => `${flag} sets ${variable}`);
    throw new UsageError(`the sandbox's provider options are invalid: ${error.message}`, flags, { cause: error });
  }
  return start;
}

async function sandboxUp(context: CommandContext, _args: readonly unknown[], options: UpOptions): Promise<void> {
  const path = descriptorPathOf(context);
  const start = startOptionsOf(options);
  const existing = await statusOf(path);
  if (existing.running) {
    context.output.note(
      "the sandbox is already running (its provider options stay as they are: 'sandbox down' first to change them)",
    );
    printStatus(context, existing);
    return;
  }
  // A descriptor left by a sandbox that died (machine restart) points at nothing.
  rmSync(path, { force: true });
  // The first start installs moto here, in the foreground: pip's progress is shown and awaited for
  // as long as it works, and Ctrl-C stops it (the background process only starts what is there).
  await ensurePythonEnv({ log: process.stderr });
  const logPath = join(dirname(path), 'sandbox.log');
  mkdirSync(dirname(path), { recursive: true });
  const log = openSync(logPath, 'a');
  context.output.note(
    `starting moto server and ${start.provider ? `the provider at ${start.provider.url}` : 'the news API simulator'} in the background ...`,
  );
  const child = spawn(process.execPath, [...daemonCommand(import.meta.url), path, JSON.stringify(start)], {
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
  // Until it is up, the sandbox is this command's: Ctrl-C (or SIGTERM) ends it and what it started
  // (its process group: moto server, receivers), instead of leaving a half-started sandbox behind.
  const stopStarting = (signal: NodeJS.Signals) => {
    endProcessGroup(child.pid);
    rmSync(path, { force: true });
    context.output.note(`${signal}: the sandbox was not started`);
    process.exit(128 + (signal === 'SIGINT' ? 2 : 15));
  };
  process.once('SIGINT', stopStarting);
  process.once('SIGTERM', stopStarting);
  try {
    await waitUntilUp(context, { child, path, logPath, start, exited: () => exited });
  } finally {
    process.off('SIGINT', stopStarting);
    process.off('SIGTERM', stopStarting);
  }
}

/** Ends a detached process and its process group (the daemon and what it started), if it runs. */
function endProcessGroup(pid: number | undefined): void {
  if (pid === undefined) return;
  try {
    process.kill(-pid, 'SIGTERM');
  } catch {
    // Already gone.
  }
}

/** Seconds `sandbox up` waits for moto and the simulator to come up (moto is installed by then). */
const startSeconds = 180;

/** Waits until the daemon wrote its descriptor; ends it (and what it started) if it never does. */
async function waitUntilUp(
  context: CommandContext,
  {
    child,
    path,
    logPath,
    start,
    exited,
  }: {
    child: ReturnType<typeof spawn>;
    path: string;
    logPath: string;
    start: SandboxStart;
    exited: () => number | null;
  },
): Promise<void> {
  const deadline = Date.now() + startSeconds * 1000;
  while (Date.now() < deadline) {
    const code = exited();
    if (code !== null) {
      const tail = readFileSync(logPath, 'utf8').trimEnd().split('\n').slice(-15);
      // The log's last lines as the error's own lines: a message is one line (cli/program.ts).
      throw new OperationFailedError(
        `the sandbox process exited (code ${code}) before it was ready; the end of its log (${logPath}):`,
        { problems: tail },
      );
    }
    const descriptor = readIfPresent(path);
    if (descriptor?.daemon?.pid === child.pid) {
      const status = await statusOf(path);
      if (start.initialLookbackMinutes !== deployedInitialLookbackMinutes) {
        context.output.note(
          `the first run looks back ${minutesText(start.initialLookbackMinutes)} (--initial-lookback; a deployed stack looks back ${deployedInitialLookbackMinutes})`,
        );
      }
      if (status.apiKey?.set === false) {
        context.output.note(
          `the provider's API key is not set yet: news-alerts ${selectorOf(context, path)} api-key set (reads it from stdin)`,
        );
      }
      printStatus(context, status);
      return;
    }
    await sleep(200);
  }
  // Its process group too: nothing it started is left running.
  endProcessGroup(child.pid);
  rmSync(path, { force: true });
  throw new OperationFailedError(
    `the sandbox did not come up within ${startSeconds / 60} minutes (moto server and the simulator, already installed); it was stopped. See ${logPath}`,
  );
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
  if (!status.running) {
    // Under --json the failure document is the one document; people also see where it looked.
    if (!context.output.json) printStatus(context, status);
    const start = context.options.sandboxFile === undefined ? '' : ` ${selectorOf(context, status.descriptor)}`;
    throw new NotFoundError(
      `no sandbox is running (${status.descriptor}): start it with news-alerts${start} sandbox up`,
    );
  }
  printStatus(context, status);
}

const upHelp = `
Provider:
  Without --provider-url the sandbox reads the bundled news API simulator (seeded articles,
  new ones arriving live). With it, a real News Lookup provider (https:// only): its API key
  comes from $NEWS_API_KEY when set, else put it in with 'news-alerts --local api-key set'.

First run:
  A fresh sandbox has no watermark. Its first run looks back --initial-lookback minutes:
  1,440 (a day) with the simulator, so there is something to see; ${deployedInitialLookbackMinutes} (the deployed
  default, INITIAL_LOOKBACK_MINUTES) with --provider-url.

Queues:
  Every audience topic has an SQS queue news-alerts-local-audit-<audienceId> holding every
  notification it was sent, and Slack audiences a queue news-alerts-local-slack-<audienceId>
  standing in for the relay Lambda. 'sandbox status' lists them with their message counts.`;

/** Registers `sandbox`. */
export function registerSandbox(program: Command): void {
  const sandbox = program
    .command('sandbox')
    .description('the local sandbox (moto server + news API simulator + example audiences and rules) for --local');

  sandbox
    .command('up')
    .description('start the sandbox in the background and write its descriptor (.sandbox/sandbox.json)')
    .option('--seed <n>', `seed of the simulator’s articles (default: ${defaultSeed})`, integerOption(0))
    .option('--provider-url <url>', 'read this News Lookup provider instead of the simulator (https:// only)')
    .option('--provider-ca <pem file>', 'PEM file of an extra CA to trust for the provider (with --provider-url)')
    .option(
      '--response-mapping <file>',
      'JSON file: where fields live in the provider’s response (NEWS_API_RESPONSE_MAPPING; with --provider-url)',
    )
    .option(
      '--provider-time-zone <zone>',
      'the provider’s IANA time zone for date-only ranges and zone-less timestamps (with --provider-url)',
    )
    .option('--page-size <n>', 'articles per provider page (NEWS_API_PAGE_SIZE)', integerOption(1, 1000))
    .addOption(
      new Option(
        '--publish-mode <mode>',
        'sharded: runs queue work items for the publisher function, which the sandbox runs (cdk.json publishMode)',
      )
        .choices(['single', 'sharded'])
        .default('single'),
    )
    .addOption(
      new Option(
        '--initial-lookback <minutes>',
        `where the first run starts (default 1440 with the simulator, ${deployedInitialLookbackMinutes} with --provider-url)`,
      ).argParser(integerOption(0, 31 * 24 * 60)),
    )
    .addHelpText('after', upHelp)
    .action(action(sandboxUp));

  sandbox.command('down').description('stop the sandbox (all its data is gone)').action(action(sandboxDown));

  sandbox
    .command('status')
    .description('whether the sandbox is running, where, its provider, API key and queues (exit 3 when it is not)')
    .action(action(sandboxStatus));
}
