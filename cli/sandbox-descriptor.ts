/**
 * The sandbox descriptor: one JSON file that tells `news-alerts --local` where the local sandbox
 * lives (moto server's endpoint, table, topic and secret names, the provider it reads and the
 * alert-function environment the sandbox runs with). `news-alerts sandbox up` writes it to
 * `.sandbox/sandbox.json`; tests write their own for a sandbox they start in-process.
 *
 * The provider is described once, in `provider.*` (URL, CA file, time zone, page size, response
 * mapping): {@link readDescriptor} builds the provider variables of `alertEnvironment` from it,
 * and refuses a descriptor whose `alertEnvironment` says otherwise. So `run`, `preview` and
 * `replay` can never read one provider while trusting another's CA.
 */
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { z } from 'zod';
import { alertRunEnvironment, loadAlertRunConfig } from '#alert-run/config';
import { ConfigError } from '#core/errors';
import { describeIssues } from '#core/model';
import type { LocalStack } from '#sandbox/local-stack';
import { NotFoundError, UsageError } from './errors.ts';
import { newsAlerts } from './hints.ts';

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
    /**
     * Every audience topic has an SQS queue `<prefix><audienceId>` subscribed with raw delivery:
     * what `news-alerts deliveries` reads. Optional: descriptors written before it existed derive
     * it from the Slack stand-in prefix.
     */
    auditQueuePrefix: name.optional(),
    /** Sharded sandboxes only: the publisher's work queue (`WORK_QUEUE_URL` of its runs). */
    workQueueUrl: z.url().optional(),
    /** Sharded sandboxes only: where work items go that the publisher failed on (`replay --parked` reads it). */
    workDeadLetterQueueUrl: z.url().optional(),
  }),
  /** The one description of the provider the sandbox reads (see the module comment). */
  provider: z.strictObject({
    /** The provider's HTTPS base URL (`NEWS_API_BASE_URL`): the simulator's, or a real provider's. */
    url: z.url(),
    /**
     * PEM file of an extra CA to trust for the provider (absolute, or relative to the descriptor's folder), in addition
     * to the system roots: the sandbox CA for the simulator, `--provider-ca` for a real provider.
     */
    caPath: name,
    /** `NEWS_API_TIME_ZONE`: the provider's zone for date-only ranges and zone-less timestamps. */
    timeZone: name.optional(),
    /** `NEWS_API_PAGE_SIZE`. */
    pageSize: z.number().int().min(1).max(1000).optional(),
    /** `NEWS_API_RESPONSE_MAPPING`, as the JSON object itself. */
    responseMapping: z.record(z.string(), z.unknown()).optional(),
    /** True when the provider is the bundled news API simulator. */
    simulator: z.boolean().optional(),
  }),
  /**
   * The alert function's environment variables for this sandbox (the same names the stack sets),
   * so `run`, `preview` and `replay` read the provider exactly as the sandbox's runs do. The
   * provider's variables come from `provider.*`; here they may only repeat the same values.
   */
  alertEnvironment: z.record(z.string(), z.string()),
  /** The SES email channel (sandbox/local-email.ts): the email functions' variables, the queue, where `.eml` files go. */
  email: z
    .strictObject({
      environment: z.record(z.string(), z.string()),
      queueArn: name,
      mailDir: name,
    })
    .optional(),
  /** Set by `sandbox up`: the background process that hosts moto server and the simulator. */
  daemon: z
    .strictObject({
      pid: z.number().int().positive(),
      logPath: name,
      startedAt: z.number(),
      /** Who started it, for `sandbox status` (user@host). */
      startedBy: name.optional(),
    })
    .optional(),
});

export type SandboxDescriptor = z.infer<typeof SandboxDescriptorSchema>;

/** Where `sandbox up` keeps its files, and where `--local` looks without `--sandbox-file`. */
export const defaultSandboxDir = (projectRoot: string): string => join(projectRoot, '.sandbox');
export const descriptorFileName = 'sandbox.json';

/**
 * Reads and validates a descriptor.
 * @throws NotFoundError when the file does not exist (no sandbox is up); UsageError when it is malformed
 */
export function readDescriptor(path: string, given = false): SandboxDescriptor {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
      throw new NotFoundError(
        given
          ? `no sandbox descriptor at ${path} (--sandbox-file): start the local sandbox with '${newsAlerts()} sandbox up', which writes it there, or give the sandbox.json of one that is up`
          : `no sandbox descriptor at ${path}: start the local sandbox with '${newsAlerts()} sandbox up' or pass --sandbox-file`,
        { cause: error },
      );
    }
    if ((error as NodeJS.ErrnoException).code === 'EISDIR') {
      throw new UsageError(
        `${path} is a directory, not a sandbox descriptor: give the sandbox.json file in it (--sandbox-file ${join(path, descriptorFileName)})`,
        [],
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
  const descriptor = parsed.data;
  const alertEnvironment = effectiveEnvironment(descriptor, path);
  try {
    // The run's own validation, here already: a bad URL, zone, page size or mapping is named now,
    // not when a command first reads the provider. The CA is checked when it is read.
    loadAlertRunConfig(alertEnvironment);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    throw new UsageError(
      `the sandbox descriptor ${path} is invalid (provider.* and alertEnvironment are the alert function's variables): ${error.message}`,
      [],
      { cause: error },
    );
  }
  return { ...descriptor, alertEnvironment };
}

/** The provider variables `provider.*` stands for, and the field each comes from. */
const providerVariables = {
  NEWS_API_BASE_URL: 'provider.url',
  NEWS_API_TIME_ZONE: 'provider.timeZone',
  NEWS_API_PAGE_SIZE: 'provider.pageSize',
  NEWS_API_RESPONSE_MAPPING: 'provider.responseMapping',
  NEWS_API_CA_PEM: 'provider.caPath',
} as const;

/** The provider's alert-function variables, from `provider.*` only. */
export function providerEnvironment(provider: SandboxDescriptor['provider']): Record<string, string> {
  return {
    NEWS_API_BASE_URL: provider.url,
    ...(provider.timeZone !== undefined ? { NEWS_API_TIME_ZONE: provider.timeZone } : {}),
    ...(provider.pageSize !== undefined ? { NEWS_API_PAGE_SIZE: String(provider.pageSize) } : {}),
    ...(provider.responseMapping !== undefined
      ? { NEWS_API_RESPONSE_MAPPING: JSON.stringify(provider.responseMapping) }
      : {}),
  };
}

/**
 * `alertEnvironment` with the provider's variables taken from `provider.*`.
 * @throws UsageError when `alertEnvironment` sets a provider variable to anything else
 */
function effectiveEnvironment(descriptor: SandboxDescriptor, path: string): Record<string, string> {
  const fromProvider = providerEnvironment(descriptor.provider);
  const problems: string[] = [];
  for (const [variable, field] of Object.entries(providerVariables)) {
    const stated = descriptor.alertEnvironment[variable];
    if (stated === undefined || sameValue(variable, stated, fromProvider[variable])) continue;
    problems.push(
      variable === 'NEWS_API_CA_PEM'
        ? `alertEnvironment.NEWS_API_CA_PEM: the CA comes from the file ${field} names; remove it from alertEnvironment`
        : `alertEnvironment.${variable} is ${JSON.stringify(stated)} but ${field} is ${
            fromProvider[variable] === undefined ? 'not set' : JSON.stringify(fromProvider[variable])
          }; the provider is described once, in ${field}: remove ${variable} from alertEnvironment`,
    );
  }
  if (problems.length > 0) {
    throw new UsageError(`the sandbox descriptor ${path} describes the provider twice, differently`, problems);
  }
  return { ...descriptor.alertEnvironment, ...fromProvider };
}

/** Equal values of a variable (a mapping compares as JSON, whatever its spacing). */
function sameValue(variable: string, stated: string, expected: string | undefined): boolean {
  if (expected === undefined) return false;
  if (variable !== 'NEWS_API_RESPONSE_MAPPING') return stated.trim() === expected;
  try {
    return JSON.stringify(JSON.parse(stated)) === expected;
  } catch {
    return false;
  }
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
  const file = { ...descriptor, alertEnvironment: withoutRepeatedProvider(descriptor) };
  writeFileSync(temporary, `${JSON.stringify(SandboxDescriptorSchema.parse(file), null, 2)}\n`, {
    mode: 0o600,
  });
  renameSync(temporary, path);
}

/**
 * `alertEnvironment` without the provider variables that only repeat `provider.*`: the file
 * describes the provider once, so editing `provider.url` (docs/sandbox.md) is all it takes, and
 * reading it builds them again. A variable that says something else stays, to be refused on read.
 */
function withoutRepeatedProvider(descriptor: SandboxDescriptor): Record<string, string> {
  const fromProvider = providerEnvironment(descriptor.provider);
  return Object.fromEntries(
    Object.entries(descriptor.alertEnvironment).filter(
      ([variable, value]) => !(variable in providerVariables && sameValue(variable, value, fromProvider[variable])),
    ),
  );
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
  const provider: SandboxDescriptor['provider'] = {
    url: config.provider.baseUrl,
    caPath: options.caPath,
    ...(config.provider.timestampTimeZone ? { timeZone: config.provider.timestampTimeZone } : {}),
    ...(options.environment?.NEWS_API_PAGE_SIZE ? { pageSize: config.provider.pageSize } : {}),
    ...(options.environment?.NEWS_API_RESPONSE_MAPPING
      ? { responseMapping: JSON.parse(options.environment.NEWS_API_RESPONSE_MAPPING) as Record<string, unknown> }
      : {}),
    simulator: stack.simulator !== undefined,
  };
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
      auditQueuePrefix: `${options.prefix}audit-`,
      ...(stack.publishing
        ? {
            workQueueUrl: stack.publishing.queueUrl,
            workDeadLetterQueueUrl: stack.publishing.deadLetterQueueUrl,
          }
        : {}),
    },
    provider,
    alertEnvironment: {
      // A sandbox's provider may be local (the simulator on loopback) by design.
      NEWS_API_ALLOW_INTERNAL_TARGET: 'true',
      NEWS_API_KEY_SECRET_ID: stack.secretId,
      RULES_TABLE_NAME: tables.rules,
      AUDIENCES_TABLE_NAME: tables.audiences,
      STATE_TABLE_NAME: tables.state,
      // As startLocalStack sets them: locally there is no reason to wait long between retries.
      NEWS_API_BASE_DELAY_MS: '20',
      NEWS_API_MAX_DELAY_MS: '500',
      // The locale the sandbox's own runs use (cdk.json's), so CLI runs, previews and replays match.
      ...(config.run.defaultLocale !== undefined ? { DEFAULT_LOCALE: config.run.defaultLocale } : {}),
      ...options.environment,
      // CLI runs of a sharded sandbox queue work items too; the sandbox's publisher sends them.
      ...(stack.publishing ? { PUBLISH_MODE: 'sharded', WORK_QUEUE_URL: stack.publishing.queueUrl } : {}),
      // Last: the provider is what provider.* says (the environment's values went into it above).
      ...providerEnvironment(provider),
    },
    ...(stack.email
      ? {
          email: {
            environment: { ...stack.email.environment },
            queueArn: stack.email.queueArn,
            mailDir: stack.email.mailDir,
          },
        }
      : {}),
  };
}

/** What `sandbox up` (and `npm start`) start the sandbox with, besides the example data. */
export const SandboxStartSchema = z.strictObject({
  /** Seed of the simulator's articles (ignored with `provider`). */
  seed: z.number().int().min(0).default(7),
  /** `INITIAL_LOOKBACK_MINUTES` of the sandbox: where its very first run starts. */
  initialLookbackMinutes: z
    .number()
    .int()
    .min(0)
    .max(31 * 24 * 60),
  /** `NEWS_API_PAGE_SIZE` (simulator or provider). */
  pageSize: z.number().int().min(1).max(1000).optional(),
  /** `sharded`: work queues in moto and the publisher function in the sandbox process (default single). */
  publishMode: z.enum(['single', 'sharded']).optional(),
  /** A real provider instead of the simulator; its API key comes from `NEWS_API_KEY` or `api-key set`. */
  provider: z
    .strictObject({
      url: z.url(),
      /** Absolute path of a PEM file: an extra CA to trust for it. */
      caPath: name.optional(),
      timeZone: name.optional(),
      responseMapping: z.record(z.string(), z.unknown()).optional(),
    })
    .optional(),
});

export type SandboxStart = z.infer<typeof SandboxStartSchema>;

/**
 * How far back a fresh sandbox's first run reads: a day with the simulator (so the first run has
 * something to show; said in the output), the deployed default with a real provider.
 */
export function defaultSandboxLookbackMinutes(withProvider: boolean): number {
  return withProvider ? deployedInitialLookbackMinutes : simulatorInitialLookbackMinutes;
}

/** The first run's lookback with the simulator: a day of seeded articles. */
export const simulatorInitialLookbackMinutes = 1440;

/** The alert function's own default `INITIAL_LOOKBACK_MINUTES` (what a deployed stack uses). */
export const deployedInitialLookbackMinutes = Number(
  alertRunEnvironment.find((variable) => variable.name === 'INITIAL_LOOKBACK_MINUTES')?.default ?? '60',
);

/** The alert-function variables a sandbox started with `start` runs with (besides names and the CA). */
export function startEnvironment(start: SandboxStart): Record<string, string> {
  return {
    INITIAL_LOOKBACK_MINUTES: String(start.initialLookbackMinutes),
    ...(start.pageSize !== undefined ? { NEWS_API_PAGE_SIZE: String(start.pageSize) } : {}),
    ...(start.provider?.timeZone !== undefined ? { NEWS_API_TIME_ZONE: start.provider.timeZone } : {}),
    ...(start.provider?.responseMapping !== undefined
      ? { NEWS_API_RESPONSE_MAPPING: JSON.stringify(start.provider.responseMapping) }
      : {}),
  };
}
