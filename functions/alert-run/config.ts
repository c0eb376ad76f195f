/**
 * The alert function's configuration, read once at cold start from environment variables the
 * stack sets (and the local sandbox sets the same way). Every variable, its default and its
 * meaning is listed in `alertRunEnvironment`; the configuration table in docs/configuration.md is generated from
 * the same list, so docs and code cannot drift.
 */
import * as z from 'zod/mini';
import type { TableNames } from '#aws/table-layout';
import type { AlertRunSettings } from '#core/alert-run';
import { ConfigError } from '#core/errors';
import { checkShippedLocale, FALLBACK_LOCALE } from '#core/locale';
import { describeIssues } from '#core/model';
import { defaultPageSize } from '#core/ports';
import { type ProviderConfig, parseProviderConfig } from '#provider/config';
import { checkTargetUrl } from '#shared/network-targets';
import {
  type EnvironmentVariable,
  integerVariable as integer,
  requiredVariable as required,
  sharedVariableSchema,
  sharedVariables,
} from '#shared/publishing-environment';

export type { EnvironmentVariable } from '#shared/publishing-environment';

/** Every variable the alert function reads. */
export const alertRunEnvironment: readonly EnvironmentVariable[] = [
  { name: 'NEWS_API_BASE_URL', description: 'Provider base URL; must be https://. Requests go to POST {base}/news.' },
  { name: 'NEWS_API_KEY_SECRET_ID', description: 'Name or ARN of the Secrets Manager secret holding the API key.' },
  {
    name: 'NEWS_API_ALLOW_INTERNAL_TARGET',
    default: 'false',
    description:
      '`true` lets NEWS_API_BASE_URL be an internal address (loopback, private, link-local); only for the local sandbox and test stacks (cdk.json `allowInternalTargets`).',
  },
  { name: 'NEWS_API_PAGE_SIZE', default: String(defaultPageSize), description: 'Articles per page (`size`).' },
  {
    name: 'NEWS_API_TIME_ZONE',
    default: '(none)',
    description:
      "Provider's IANA time zone: date-only ranges and zone-less timestamps are read in it. Unset, ranges are UTC dates and a timestamp without an offset fails the run instead of being guessed.",
  },
  { name: 'NEWS_API_PAGINATION', default: 'PAGE', description: '`PAGE` or `CURSOR`.' },
  {
    name: 'NEWS_API_CURSOR_METHOD_VALUE',
    default: 'CURSOR',
    description: '`paginationMethod` value that selects cursor paging.',
  },
  { name: 'NEWS_API_CURSOR_FIELD', default: 'cursor', description: 'Request field that carries the cursor.' },
  {
    name: 'NEWS_API_MAX_PAGES',
    default: '2000',
    description: 'Page cap per provider day; a day needing more fails loudly.',
  },
  { name: 'NEWS_API_CONNECT_TIMEOUT_MS', default: '5000', description: 'TCP+TLS connect timeout.' },
  {
    name: 'NEWS_API_READ_TIMEOUT_MS',
    default: '15000',
    description: 'Longest wait for response headers and between body chunks.',
  },
  {
    name: 'NEWS_API_RESPONSE_TIMEOUT_MS',
    default: '30000',
    description: 'Longest a whole response may take, headers to last byte (a dripping provider is cut and retried).',
  },
  {
    name: 'NEWS_API_MAX_RESPONSE_BYTES',
    default: '33554432',
    description: 'Largest response body read; a bigger one fails the run with a provider error.',
  },
  { name: 'NEWS_API_MAX_ATTEMPTS', default: '5', description: 'Attempts per request for 408/429/5xx/network errors.' },
  { name: 'NEWS_API_PAGE_CONCURRENCY', default: '4', description: 'Pages fetched at once once the total is known.' },
  { name: 'NEWS_API_BASE_DELAY_MS', default: '250', description: 'First retry backoff (exponential, full jitter).' },
  { name: 'NEWS_API_MAX_DELAY_MS', default: '20000', description: 'Longest backoff between retries.' },
  {
    name: 'NEWS_API_MAX_RETRY_AFTER_MS',
    default: '60000',
    description: 'Longest `Retry-After` honoured; a longer one fails the run (retryable) instead of sleeping.',
  },
  {
    name: 'NEWS_API_CA_PEM',
    default: '(none)',
    description:
      'Extra CA certificate (PEM) to trust in addition to the system roots, for a provider with a private CA.',
  },
  {
    name: 'NEWS_API_RESPONSE_MAPPING',
    default: '(built-in)',
    description: 'JSON object overriding where fields live in the response (see "Response mapping").',
  },
  { name: 'RULES_TABLE_NAME', description: 'DynamoDB table of rules (partition key `ruleId`).' },
  { name: 'AUDIENCES_TABLE_NAME', description: 'DynamoDB table of audiences (partition key `audienceId`).' },
  sharedVariables.STATE_TABLE_NAME,
  {
    name: 'LATE_ARRIVAL_MINUTES',
    default: '60',
    description:
      'Articles the provider indexes up to this late are still delivered: full sweeps read back to the previous sweep minus this, and every run handles what it reads back to the watermark minus this.',
  },
  { name: 'INITIAL_LOOKBACK_MINUTES', default: '60', description: 'Where the very first run starts.' },
  {
    name: 'FULL_SWEEP_MINUTES',
    default: '360',
    description:
      'How often a run reads every page of its window again (a full sweep, for late-indexed or reordered articles); 0 reads every page on every run.',
  },
  {
    name: 'INCREMENTAL_OVERLAP_MINUTES',
    default: '2',
    description: 'Between full sweeps, how far behind the watermark a run reads before it may stop early.',
  },
  {
    name: 'LATE_RECHECK_MINUTES',
    default: '15',
    description:
      "Counted reading: a day's watched stretches are checked for articles the provider listed late at least this often (the stack sets the larger of 10 and three schedule intervals); 0 leaves late articles to full sweeps.",
  },
  sharedVariables.LEDGER_RETENTION_DAYS,
  { name: 'LEASE_SECONDS', default: '960', description: 'Run lease length; set it above the function timeout.' },
  { name: 'SOFT_MARGIN_SECONDS', default: '30', description: 'Stop fetching this long before the time limit.' },
  { name: 'HARD_MARGIN_SECONDS', default: '10', description: 'Stop publishing this long before the time limit.' },
  sharedVariables.LEDGER_FLUSH_DELAY_MS,
  { name: 'SECRET_CACHE_SECONDS', default: '300', description: 'How long the API key is cached in a warm function.' },
  sharedVariables.SNS_CONCURRENCY,
  {
    name: 'PUBLISH_MODE',
    default: 'single',
    description:
      '`single`: the run publishes to SNS itself. `sharded`: it queues work items on WORK_QUEUE_URL for the publisher function (cdk.json `publishMode`).',
  },
  {
    name: 'WORK_QUEUE_URL',
    default: '(none)',
    description: 'URL of the SQS work queue; required when PUBLISH_MODE is `sharded`.',
  },
  {
    name: 'DISPATCH_ABANDON_AFTER_MS',
    default: '900000',
    description:
      'Sharded: an earlier run’s work items still not all done after this long are given up on (its days are read again; the ledger keeps them from being sent twice). The stack sets it from the queue: visibility timeout × maxReceiveCount + 5 min.',
  },
  {
    name: 'DEFAULT_LOCALE',
    default: FALLBACK_LOCALE,
    description:
      'Locale (BCP 47) of audiences without `locale`, and the fallback before English for the others (cdk.json `defaultLocale`); its language must have shipped messages (en, ko, ja).',
  },
];

/**
 * The default locale in canonical form, or why it cannot be one ({@link checkShippedLocale}): the
 * stack (`defaultLocale`) and the cold start (`DEFAULT_LOCALE`) check with this one function.
 */
export const checkDefaultLocale = checkShippedLocale;

/** How long an earlier run's unfinished work items are waited for when the stack does not say. */
export const defaultDispatchAbandonAfterMs = 15 * 60_000;

const EnvironmentSchema = z.object({
  NEWS_API_BASE_URL: required,
  NEWS_API_KEY_SECRET_ID: required,
  NEWS_API_ALLOW_INTERNAL_TARGET: z.pipe(
    z._default(z.enum(['true', 'false'], { error: 'must be "true" or "false"' }), 'false'),
    z.transform((value) => value === 'true'),
  ),
  NEWS_API_PAGE_SIZE: z._default(integer(1, 1000), defaultPageSize),
  NEWS_API_TIME_ZONE: z.optional(z.string()),
  NEWS_API_PAGINATION: z._default(z.enum(['PAGE', 'CURSOR']), 'PAGE'),
  NEWS_API_CURSOR_METHOD_VALUE: z._default(z.string().check(z.minLength(1)), 'CURSOR'),
  NEWS_API_CURSOR_FIELD: z._default(z.string().check(z.minLength(1)), 'cursor'),
  NEWS_API_MAX_PAGES: z._default(integer(1, 100_000), 2000),
  NEWS_API_CONNECT_TIMEOUT_MS: z._default(integer(100, 120_000), 5000),
  NEWS_API_READ_TIMEOUT_MS: z._default(integer(100, 600_000), 15_000),
  NEWS_API_RESPONSE_TIMEOUT_MS: z._default(integer(100, 600_000), 30_000),
  NEWS_API_MAX_RESPONSE_BYTES: z._default(integer(1024, 512 * 1024 * 1024), 32 * 1024 * 1024),
  NEWS_API_MAX_ATTEMPTS: z._default(integer(1, 20), 5),
  NEWS_API_PAGE_CONCURRENCY: z._default(integer(1, 32), 4),
  NEWS_API_BASE_DELAY_MS: z._default(integer(1, 60_000), 250),
  NEWS_API_MAX_DELAY_MS: z._default(integer(1, 600_000), 20_000),
  NEWS_API_MAX_RETRY_AFTER_MS: z._default(integer(0, 3_600_000), 60_000),
  NEWS_API_CA_PEM: z.optional(z.string()),
  NEWS_API_RESPONSE_MAPPING: z.optional(z.string()),
  RULES_TABLE_NAME: required,
  AUDIENCES_TABLE_NAME: required,
  STATE_TABLE_NAME: sharedVariableSchema.STATE_TABLE_NAME,
  LATE_ARRIVAL_MINUTES: z._default(integer(0, 7 * 24 * 60), 60),
  INITIAL_LOOKBACK_MINUTES: z._default(integer(0, 31 * 24 * 60), 60),
  FULL_SWEEP_MINUTES: z._default(integer(0, 24 * 60), 360),
  INCREMENTAL_OVERLAP_MINUTES: z._default(integer(0, 24 * 60), 2),
  LATE_RECHECK_MINUTES: z._default(integer(0, 24 * 60), 15),
  LEDGER_RETENTION_DAYS: sharedVariableSchema.LEDGER_RETENTION_DAYS,
  LEASE_SECONDS: z._default(integer(60, 24 * 3600), 960),
  SOFT_MARGIN_SECONDS: z._default(integer(1, 600), 30),
  HARD_MARGIN_SECONDS: z._default(integer(1, 600), 10),
  LEDGER_FLUSH_DELAY_MS: sharedVariableSchema.LEDGER_FLUSH_DELAY_MS,
  SECRET_CACHE_SECONDS: z._default(integer(0, 86_400), 300),
  SNS_CONCURRENCY: sharedVariableSchema.SNS_CONCURRENCY,
  DEFAULT_LOCALE: z._default(z.string(), FALLBACK_LOCALE),
  PUBLISH_MODE: z._default(z.enum(['single', 'sharded'], { error: 'must be "single" or "sharded"' }), 'single'),
  WORK_QUEUE_URL: z.optional(z.string().check(z.trim())),
  // At least a minute: shorter would abandon dispatches whose items are merely waiting for a publisher.
  DISPATCH_ABANDON_AFTER_MS: z._default(integer(60_000, 7 * 24 * 3_600_000), defaultDispatchAbandonAfterMs),
});

/** Everything the alert run needs besides its AWS clients. */
export interface AlertRunConfig {
  readonly provider: ProviderConfig;
  readonly secretId: string;
  readonly secretCacheSeconds: number;
  readonly tables: TableNames;
  readonly ledgerRetentionDays: number;
  readonly snsConcurrency: number;
  /** `single`: the run publishes; `sharded`: it queues work items for the publisher function. */
  readonly publishMode: 'single' | 'sharded';
  /** The publisher's SQS queue; set exactly when `publishMode` is `sharded`. */
  readonly workQueueUrl?: string | undefined;
  readonly run: AlertRunSettings;
}

/**
 * Validates the environment; a missing or bad value throws ConfigError naming the variable and
 * what to fix, so a misconfigured deployment fails at cold start, not halfway through a run.
 */
export function loadAlertRunConfig(env: Readonly<Record<string, string | undefined>>): AlertRunConfig {
  const parsed = EnvironmentSchema.safeParse(env);
  if (!parsed.success) {
    throw new ConfigError(`invalid alert function configuration: ${describeIssues(parsed.error)}`);
  }
  const e = parsed.data;
  if (e.SOFT_MARGIN_SECONDS <= e.HARD_MARGIN_SECONDS) {
    throw new ConfigError(
      'SOFT_MARGIN_SECONDS must be larger than HARD_MARGIN_SECONDS (fetching stops before publishing)',
    );
  }
  if (e.LEDGER_RETENTION_DAYS * 24 * 60 <= e.LATE_ARRIVAL_MINUTES + e.FULL_SWEEP_MINUTES + 2 * 24 * 60) {
    throw new ConfigError(
      'LEDGER_RETENTION_DAYS must cover the re-read overlap (LATE_ARRIVAL_MINUTES plus FULL_SWEEP_MINUTES plus two provider days); raise it',
    );
  }
  const workQueueUrl = e.WORK_QUEUE_URL === '' ? undefined : e.WORK_QUEUE_URL;
  if (e.PUBLISH_MODE === 'sharded') {
    if (workQueueUrl === undefined) {
      throw new ConfigError(
        'invalid alert function configuration: WORK_QUEUE_URL is required when PUBLISH_MODE is "sharded" (the URL of the publisher\'s SQS queue; the stack sets both)',
      );
    }
    if (!URL.canParse(workQueueUrl) || !/^https?:$/.test(new URL(workQueueUrl).protocol)) {
      throw new ConfigError(
        'invalid alert function configuration: WORK_QUEUE_URL must be an SQS queue URL such as https://sqs.us-east-1.amazonaws.com/123456789012/work',
      );
    }
  }
  const defaultLocale = checkDefaultLocale(e.DEFAULT_LOCALE);
  if (!defaultLocale.ok) {
    throw new ConfigError(`invalid alert function configuration: DEFAULT_LOCALE: ${defaultLocale.message}`);
  }
  const provider = parseProviderConfig({
    baseUrl: e.NEWS_API_BASE_URL,
    pageSize: e.NEWS_API_PAGE_SIZE,
    ...(e.NEWS_API_TIME_ZONE?.trim() ? { timeZone: e.NEWS_API_TIME_ZONE } : {}),
    pagination:
      e.NEWS_API_PAGINATION === 'PAGE'
        ? { method: 'PAGE' }
        : { method: 'CURSOR', methodValue: e.NEWS_API_CURSOR_METHOD_VALUE, cursorField: e.NEWS_API_CURSOR_FIELD },
    maxPages: e.NEWS_API_MAX_PAGES,
    connectTimeoutMs: e.NEWS_API_CONNECT_TIMEOUT_MS,
    readTimeoutMs: e.NEWS_API_READ_TIMEOUT_MS,
    responseTimeoutMs: Math.max(e.NEWS_API_RESPONSE_TIMEOUT_MS, e.NEWS_API_READ_TIMEOUT_MS),
    maxResponseBytes: e.NEWS_API_MAX_RESPONSE_BYTES,
    maxAttempts: e.NEWS_API_MAX_ATTEMPTS,
    pageConcurrency: e.NEWS_API_PAGE_CONCURRENCY,
    baseDelayMs: e.NEWS_API_BASE_DELAY_MS,
    maxDelayMs: e.NEWS_API_MAX_DELAY_MS,
    maxRetryAfterMs: e.NEWS_API_MAX_RETRY_AFTER_MS,
    ...(e.NEWS_API_CA_PEM?.trim() ? { caPem: e.NEWS_API_CA_PEM } : {}),
    mapping: parseMapping(e.NEWS_API_RESPONSE_MAPPING),
  });
  // The target-address policy at cold start too, not only at synth: a variable edited in the
  // console must not point the function (and its API key) at the metadata service or a private host.
  const target = checkTargetUrl(provider.baseUrl, { allowInternal: e.NEWS_API_ALLOW_INTERNAL_TARGET });
  if (!target.ok) {
    throw new ConfigError(
      `invalid alert function configuration: NEWS_API_BASE_URL: ${target.reason}; set NEWS_API_ALLOW_INTERNAL_TARGET=true only for a local or test provider`,
    );
  }
  return {
    provider,
    secretId: e.NEWS_API_KEY_SECRET_ID,
    secretCacheSeconds: e.SECRET_CACHE_SECONDS,
    tables: { rules: e.RULES_TABLE_NAME, audiences: e.AUDIENCES_TABLE_NAME, state: e.STATE_TABLE_NAME },
    ledgerRetentionDays: e.LEDGER_RETENTION_DAYS,
    snsConcurrency: e.SNS_CONCURRENCY,
    publishMode: e.PUBLISH_MODE,
    // A queue URL left over in single mode is ignored rather than half-used.
    ...(e.PUBLISH_MODE === 'sharded' ? { workQueueUrl } : {}),
    run: {
      providerTimeZone: provider.timeZone,
      lateArrivalMs: e.LATE_ARRIVAL_MINUTES * 60_000,
      initialLookbackMs: e.INITIAL_LOOKBACK_MINUTES * 60_000,
      leaseDurationMs: e.LEASE_SECONDS * 1000,
      softMarginMs: e.SOFT_MARGIN_SECONDS * 1000,
      hardMarginMs: e.HARD_MARGIN_SECONDS * 1000,
      ledgerFlushDelayMs: e.LEDGER_FLUSH_DELAY_MS,
      fullSweepMs: e.FULL_SWEEP_MINUTES * 60_000,
      incrementalOverlapMs: e.INCREMENTAL_OVERLAP_MINUTES * 60_000,
      lateRecheckMs: e.LATE_RECHECK_MINUTES * 60_000,
      defaultLocale: defaultLocale.locale,
      dispatchAbandonAfterMs: e.DISPATCH_ABANDON_AFTER_MS,
    },
  };
}

function parseMapping(json: string | undefined): unknown {
  if (json === undefined || json.trim() === '') return undefined;
  try {
    return JSON.parse(json);
  } catch (error) {
    throw new ConfigError(
      `NEWS_API_RESPONSE_MAPPING must be a JSON object such as {"articles":["data.items"]}: ${(error as Error).message}`,
      { cause: error },
    );
  }
}
