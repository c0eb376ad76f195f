/**
 * End-to-end support for the CLI tests: a local sandbox started in this test process (shared moto
 * server, the news API simulator on the real clock, the example audiences and rules under a
 * unique prefix), its descriptor in a temp file, and the real `news-alerts` process run against
 * it with `--sandbox-file`, as an ops person would run it: real stdout, stderr and exit codes.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DeleteMessageBatchCommand, ReceiveMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient, PutCommand, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { inject, vi } from 'vitest';
import { exampleAudiences, exampleRules } from '#sandbox/examples';
import { type LocalStack, type LocalStackOptions, startLocalStack } from '#sandbox/local-stack';
import { startMoto } from '#sandbox/moto';
import { uniquePrefix } from '#test/aws';
import { getItem } from '../../cli/items.ts';
import { describeLocalStack, type SandboxDescriptor, writeDescriptor } from '../../cli/sandbox-descriptor.ts';

export const projectRoot = fileURLToPath(new URL('../../', import.meta.url));
/**
 * The `news-alerts` an ops person runs: the launcher and the bundle in dist/. The test run's
 * global set-up builds dist/ from the sources before any test (test/support/global-setup.ts, and
 * test/cli/built-cli.test.ts checks it is current), so tests see every source edit, and a process
 * starts in half the time tsx needs to load the sources. The installed package has tests of its
 * own (test/e2e/package.test.ts).
 */
export const cliEntry = join(projectRoot, 'bin', 'news-alerts.js');

/** What one CLI process did. */
export interface CliResult {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
  /** stdout parsed as JSON (for `--json` runs). */
  json<T = Record<string, unknown>>(): T;
}

/**
 * Runs `news-alerts <args>` (the built CLI, {@link cliEntry}) in a real process; `input` is piped
 * to stdin (closed otherwise).
 */
export function runCli(
  args: readonly string[],
  options: { input?: string | Buffer; env?: Record<string, string | undefined> } = {},
): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const env: NodeJS.ProcessEnv = { ...process.env, NEWS_ALERTS_ACTOR: undefined, ...options.env };
    for (const [name, value] of Object.entries(env)) if (value === undefined) delete env[name];
    const child = spawn(process.execPath, [cliEntry, ...args], {
      cwd: projectRoot,
      env,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    child.on('error', reject);
    child.on('close', (code) =>
      resolve({
        code,
        stdout,
        stderr,
        json<T>() {
          try {
            return JSON.parse(stdout) as T;
          } catch (error) {
            throw new Error(`stdout is not JSON (exit ${code}):\n${stdout}\nstderr:\n${stderr}`, { cause: error });
          }
        },
      }),
    );
    child.stdin.end(options.input ?? '');
  });
}

/** A sandbox for one test file, with its descriptor and a `cli` bound to it. */
export interface CliSandbox {
  readonly stack: LocalStack;
  readonly prefix: string;
  readonly descriptorPath: string;
  readonly descriptor: SandboxDescriptor;
  /** A scratch folder for files the test writes (rules files...). */
  readonly dir: string;
  /** `news-alerts --sandbox-file <descriptor> <args>` */
  cli(
    args: readonly string[],
    options?: { input?: string | Buffer; env?: Record<string, string | undefined> },
  ): Promise<CliResult>;
  /** Writes a file into the scratch folder and returns its path. */
  file(name: string, content: string | Buffer): string;
  /** The audience item as the table holds it (read straight from moto, not through the CLI). */
  audience(audienceId: string): Promise<Record<string, unknown> | undefined>;
  stop(): Promise<void>;
}

/**
 * The last local midnight of a zone at a fixed offset from UTC (`offsetMs`, east positive) that is
 * at least two hours before the real clock: tests that give their runs `--now` times after it
 * stay in the past, whatever the date.
 */
export function lastMidnight(offsetMs = 0): number {
  const day = 86_400_000;
  const midnight = Math.floor((Date.now() + offsetMs) / day) * day - offsetMs;
  return Date.now() - midnight < 2 * 3_600_000 ? midnight - day : midnight;
}

/** Alert-function settings of the test sandboxes: the first run looks back a day. */
export const testEnvironment = {
  INITIAL_LOOKBACK_MINUTES: '1440',
  NEWS_API_PAGE_SIZE: '25',
  NEWS_API_BASE_DELAY_MS: '1',
  NEWS_API_MAX_DELAY_MS: '5',
  LEDGER_FLUSH_DELAY_MS: '5',
} as const;

/**
 * Starts a sandbox (real clock, seeded articles of the last day) on the shared moto server, or with
 * `ownMoto` on a moto server of its own, stopped with it.
 *
 * Its own server for tests that read moto's state dump (`/moto-api/data.json`, the only place
 * SNS email and SMS texts can be seen: `news-alerts deliveries` reads it): on the shared server the
 * dump holds everything every test file of the run created so far, written to by other files at
 * the same moment, and a test reading it depends on all of them. Tests that create resources moto
 * cannot dump (CloudFormation stacks, Lambda functions) take their own too, so others can still
 * read it.
 */
export async function startCliSandbox(
  options: Partial<Omit<LocalStackOptions, 'ca'>> & { readonly ownMoto?: boolean } = {},
): Promise<CliSandbox> {
  const { ownMoto = false, ...stackOptions } = options;
  const prefix = uniquePrefix();
  const ca = inject('sandboxCa');
  const dir = mkdtempSync(join(tmpdir(), 'news-alerts-cli-'));
  const caPath = join(dir, 'ca.pem');
  writeFileSync(caPath, ca.cert);
  // It trusts the sandbox CA, as the shared one does, for HTTPS subscriptions to local receivers.
  const moto = ownMoto ? await startMoto({ caBundlePath: caPath }) : undefined;
  const motoEndpoint = moto?.endpoint ?? stackOptions.motoEndpoint ?? inject('motoEndpoint');
  const environment = { ...testEnvironment, ...stackOptions.environment };
  let stack: LocalStack;
  try {
    stack = await startLocalStack({
      ca,
      prefix,
      audiences: exampleAudiences.map((audience) => ({ item: audience.item, subscribers: [] })),
      rules: exampleRules,
      ...stackOptions,
      motoEndpoint,
      simulator: { seed: 11, generate: { days: 1, perDay: 80 }, ...stackOptions.simulator },
      environment,
    });
  } catch (error) {
    await moto?.stop();
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  const descriptorPath = join(dir, 'sandbox.json');
  const descriptor = describeLocalStack(stack, { endpoint: motoEndpoint, prefix, caPath, environment });
  writeDescriptor(descriptorPath, descriptor);
  return {
    stack,
    prefix,
    descriptorPath,
    descriptor,
    dir,
    cli: (args, cliOptions) => runCli(['--sandbox-file', descriptorPath, ...args], cliOptions),
    file(name, content) {
      const path = join(dir, name);
      writeFileSync(path, content);
      return path;
    },
    audience: (audienceId) =>
      getItem(
        stack.clients.documents,
        { tableName: descriptor.names.audiencesTable, keyName: 'audienceId', noun: 'audience' },
        audienceId,
      ),
    async stop() {
      await stack.stop();
      await moto?.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Receives and deletes every message of a queue (raw bodies). */
export async function drainQueue(sqs: SQSClient, queueUrl: string): Promise<string[]> {
  const bodies: string[] = [];
  for (;;) {
    const { Messages = [] } = await sqs.send(
      new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10, VisibilityTimeout: 600 }),
    );
    if (Messages.length === 0) return bodies;
    bodies.push(...Messages.map((message) => message.Body ?? ''));
    await sqs.send(
      new DeleteMessageBatchCommand({
        QueueUrl: queueUrl,
        Entries: Messages.map((message, index) => ({ Id: String(index), ReceiptHandle: message.ReceiptHandle })),
      }),
    );
  }
}

/** `audienceId|articleKey` of a structured alert body (what audit queues and webhooks receive). */
export function deliveryIdOfBody(body: string): string {
  const parsed = JSON.parse(body) as { newsAlerts?: { deliveryId?: string } };
  return parsed.newsAlerts?.deliveryId ?? '';
}

/** How many of each value. */
export function countBy<T>(values: readonly T[], key: (value: T) => string): Map<string, number> {
  const counts = new Map<string, number>();
  for (const value of values) counts.set(key(value), (counts.get(key(value)) ?? 0) + 1);
  return counts;
}

/**
 * Sets one attribute of a stored rule or audience of `sandbox` as the DynamoDB console would: the
 * item's `version` and audit attributes stay as they were.
 */
export async function setByHand(
  sandbox: CliSandbox,
  table: 'rules' | 'audiences',
  id: string,
  name: string,
  value: unknown,
): Promise<void> {
  await sandbox.stack.clients.documents.send(
    new UpdateCommand({
      TableName: sandbox.stack.config.tables[table],
      Key: table === 'rules' ? { ruleId: id } : { audienceId: id },
      UpdateExpression: 'SET #name = :value',
      ExpressionAttributeNames: { '#name': name },
      ExpressionAttributeValues: { ':value': value },
    }),
  );
}

/**
 * The CLI run in this test process (as `news-alerts` runs it) against `sandbox`, so a fault or a
 * concurrent change can be put into one of its AWS calls: its exit code and everything it wrote.
 * `beforeDocumentSend` runs before each DynamoDB document-client command is sent (the test's
 * own included), and may throw to fail that command.
 */
export async function cliInProcess(
  sandbox: CliSandbox,
  args: readonly string[],
  beforeDocumentSend?: (command: unknown) => void | Promise<void>,
): Promise<{ code: number; output: string }> {
  // Loaded on first use: most CLI tests run the built CLI in a process of its own.
  const { main } = await import('../../cli/program.ts');
  let output = '';
  const capture = (chunk: unknown) => {
    output += String(chunk);
    return true;
  };
  const send = DynamoDBDocumentClient.prototype.send;
  const sends =
    beforeDocumentSend === undefined
      ? undefined
      : vi.spyOn(DynamoDBDocumentClient.prototype, 'send').mockImplementation(async function (
          this: DynamoDBDocumentClient,
          ...forwarded: unknown[]
        ) {
          await beforeDocumentSend(forwarded[0]);
          return await (send as (...all: unknown[]) => Promise<unknown>).apply(this, forwarded);
        } as DynamoDBDocumentClient['send']);
  const out = vi.spyOn(process.stdout, 'write').mockImplementation(capture);
  const err = vi.spyOn(process.stderr, 'write').mockImplementation(capture);
  try {
    const code = await main(['node', 'news-alerts', '--sandbox-file', sandbox.descriptorPath, ...args]);
    return { code, output };
  } finally {
    out.mockRestore();
    err.mockRestore();
    sends?.mockRestore();
  }
}

/**
 * Runs `args` with the CLI in this process ({@link cliInProcess}) and, at the moment it is about to
 * write `table`, sets one attribute of a stored item by hand ({@link setByHand}): the edit lands
 * between the command's read and its write. `edited` says whether it happened.
 */
export async function cliWithEditBeforeWrite(
  sandbox: CliSandbox,
  edit: { table: 'rules' | 'audiences'; id: string; name: string; value: unknown },
  args: readonly string[],
): Promise<{ code: number; output: string; edited: boolean }> {
  const tableName = sandbox.stack.config.tables[edit.table];
  let edited = false;
  const result = await cliInProcess(sandbox, args, async (command) => {
    const writes =
      ((command instanceof PutCommand || command instanceof UpdateCommand) && command.input.TableName === tableName) ||
      (command instanceof TransactWriteCommand &&
        (command.input.TransactItems ?? []).some(
          (entry) => entry.Put?.TableName === tableName || entry.Update?.TableName === tableName,
        ));
    if (writes && !edited) {
      edited = true;
      await setByHand(sandbox, edit.table, edit.id, edit.name, edit.value);
    }
  });
  return { ...result, edited };
}
