/**
 * The sandbox descriptor: one JSON file that tells `news-alerts --local` where the local sandbox
 * lives (moto server's endpoint, table, topic and secret names, the news API simulator's URL and
 * CA, and the alert-function environment the sandbox runs with). `news-alerts sandbox up` writes
 * it to `.sandbox/sandbox.json`; tests write their own for a sandbox they start in-process.
 */
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { z } from 'zod';
import { describeIssues } from '#core/model';
import type { LocalStack } from '#sandbox/local-stack';
import { NotFoundError, UsageError } from './errors.ts';

const name = z.string().min(1);

/** The descriptor's schema; `version` changes only with an incompatible layout. */
export const SandboxDescriptorSchema = z.strictObject({
  version: z.literal(1),
  /** moto server's base URL (loopback). */
  endpoint: z.url(),
  region: name.default('us-east-1'),
  names: z.strictObject({
    rulesTable: name,
    audiencesTable: name,
    stateTable: name,
    /** Topics are `<audienceTopicPrefix><audienceId>`, like the stack's AudienceTopicPrefix output. */
    audienceTopicPrefix: name,
    /** Secrets Manager secret holding the provider API key (the simulator's live key). */
    apiKeySecretId: name,
    /** Slack webhook secrets are `<prefix><audienceId>`. */
    slackWebhookSecretPrefix: name,
    /**
     * The sandbox has no Lambda relay: Slack subscriptions go to an SQS queue
     * `<prefix><audienceId>` standing in for it, as `npm start` does.
     */
    slackStandInQueuePrefix: name,
  }),
  provider: z.strictObject({
    /** The news API simulator's HTTPS base URL. */
    url: z.url(),
    /** PEM file of the CA that signed the simulator's certificate (relative to the descriptor). */
    caPath: name,
    timeZone: name,
  }),
  /**
   * The alert function's environment variables for this sandbox (the same names the stack sets),
   * so `run`, `preview` and `replay` read the provider exactly as the sandbox's runs do.
   */
  alertEnvironment: z.record(z.string(), z.string()),
  /** Set by `sandbox up`: the background process that hosts moto server and the simulator. */
  daemon: z.strictObject({ pid: z.number().int().positive(), logPath: name, startedAt: z.number() }).optional(),
});

export type SandboxDescriptor = z.infer<typeof SandboxDescriptorSchema>;

/** Where `sandbox up` keeps its files, and where `--local` looks without `--sandbox-file`. */
export const defaultSandboxDir = (projectRoot: string): string => join(projectRoot, '.sandbox');
export const descriptorFileName = 'sandbox.json';

/**
 * Reads and validates a descriptor.
 * @throws NotFoundError when the file does not exist (no sandbox is up); UsageError when it is malformed
 */
export function readDescriptor(path: string): SandboxDescriptor {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
      throw new NotFoundError(
        `no sandbox descriptor at ${path}: start the local sandbox with 'news-alerts sandbox up' or pass --sandbox-file`,
        { cause: error },
      );
    }
    throw error;
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new UsageError(`the sandbox descriptor ${path} is not JSON: ${(error as Error).message}`, [], {
      cause: error,
    });
  }
  const parsed = SandboxDescriptorSchema.safeParse(json);
  if (!parsed.success) {
    throw new UsageError(`the sandbox descriptor ${path} is invalid: ${describeIssues(parsed.error)}`);
  }
  return parsed.data;
}

/** The CA path of a descriptor, resolved against the descriptor's folder when relative. */
export const caPathOf = (descriptor: SandboxDescriptor, descriptorPath: string): string =>
  isAbsolute(descriptor.provider.caPath)
    ? descriptor.provider.caPath
    : resolve(dirname(descriptorPath), descriptor.provider.caPath);

/** Writes a descriptor atomically (a reader never sees half a file). */
export function writeDescriptor(path: string, descriptor: SandboxDescriptor): void {
  mkdirSync(dirname(path), { recursive: true });
  const temporary = `${path}.${process.pid}.tmp`;
  writeFileSync(temporary, `${JSON.stringify(SandboxDescriptorSchema.parse(descriptor), null, 2)}\n`, {
    mode: 0o600,
  });
  renameSync(temporary, path);
}

/** What a descriptor needs besides the running stack. */
export interface DescribeLocalStackOptions {
  /** moto server's endpoint the stack was started with. */
  readonly endpoint: string;
  /** The resource-name prefix the stack was started with (`news-alerts-local-` by default). */
  readonly prefix: string;
  /** Where the simulator's CA certificate is (or will be) written. */
  readonly caPath: string;
  /** The alert-function environment overrides the stack was started with. */
  readonly environment?: Readonly<Record<string, string>>;
}

/**
 * The descriptor of a sandbox started with `startLocalStack`: names follow local-stack.ts
 * (`<prefix>audience-<id>` topics, `<prefix>news-api-key`), and the alert environment is the one
 * startLocalStack builds, so a CLI process configures the run exactly like the sandbox does.
 */
export function describeLocalStack(stack: LocalStack, options: DescribeLocalStackOptions): SandboxDescriptor {
  const { config } = stack;
  const tables = config.tables;
  return {
    version: 1,
    endpoint: options.endpoint,
    region: 'us-east-1',
    names: {
      rulesTable: tables.rules,
      audiencesTable: tables.audiences,
      stateTable: tables.state,
      audienceTopicPrefix: `${options.prefix}audience-`,
      apiKeySecretId: stack.secretId,
      slackWebhookSecretPrefix: `${options.prefix}slack/`,
      slackStandInQueuePrefix: `${options.prefix}slack-`,
    },
    provider: { url: config.provider.baseUrl, caPath: options.caPath, timeZone: config.provider.timeZone },
    alertEnvironment: {
      NEWS_API_BASE_URL: config.provider.baseUrl,
      // A sandbox's provider is local (the simulator on loopback) by design.
      NEWS_API_ALLOW_INTERNAL_TARGET: 'true',
      NEWS_API_KEY_SECRET_ID: stack.secretId,
      ...(config.provider.timestampTimeZone ? { NEWS_API_TIME_ZONE: config.provider.timestampTimeZone } : {}),
      RULES_TABLE_NAME: tables.rules,
      AUDIENCES_TABLE_NAME: tables.audiences,
      STATE_TABLE_NAME: tables.state,
      // As startLocalStack sets them: locally there is no reason to wait long between retries.
      NEWS_API_BASE_DELAY_MS: '20',
      NEWS_API_MAX_DELAY_MS: '500',
      ...options.environment,
    },
  };
}
