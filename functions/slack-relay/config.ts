/**
 * The relay's configuration, read once at cold start from the environment the stack sets. Every
 * variable, its default and its meaning is listed in `slackRelayEnvironment`.
 */
import { z } from 'zod';
import { ConfigError } from '#core/errors';
import { describeIssues } from '#core/model';
import type { RetryPolicy } from './retry.ts';

/** One documented environment variable. */
export interface RelayVariable {
  readonly name: string;
  readonly default?: string;
  readonly description: string;
}

/** Every variable the relay reads. */
export const slackRelayEnvironment: readonly RelayVariable[] = [
  {
    name: 'AUDIENCE_TOPIC_PREFIX',
    description:
      'Name prefix of the audience topics (`<prefix>-audience-`); the rest of a topic name is its audience id.',
  },
  {
    name: 'SLACK_SECRET_NAME_PREFIX',
    description:
      'Secrets named `<this><audienceId>` hold the webhook URL of audiences not listed in SLACK_WEBHOOK_SECRETS.',
  },
  {
    name: 'SLACK_WEBHOOK_SECRETS',
    default: '{}',
    description: 'JSON object audience id → ARN of an existing secret holding that audience’s webhook URL.',
  },
  { name: 'SLACK_WEBHOOK_CACHE_SECONDS', default: '300', description: 'How long a webhook URL is cached.' },
  { name: 'SLACK_MAX_ATTEMPTS', default: '4', description: 'Posts per message in one invocation (429/5xx/network).' },
  { name: 'SLACK_BASE_DELAY_MS', default: '500', description: 'First backoff delay; doubles per retry.' },
  { name: 'SLACK_MAX_DELAY_MS', default: '8000', description: 'Longest backoff delay.' },
  { name: 'SLACK_REQUEST_TIMEOUT_MS', default: '5000', description: 'Connect + response timeout of one post.' },
  {
    name: 'POSTED_ALERTS_TABLE',
    description:
      'Table that remembers which deliveries were posted (the state table, partition `slack#posted`), so a repeated delivery is not posted twice. Unset: every repeat is posted again.',
  },
  {
    name: 'SLACK_REMEMBER_POSTS_HOURS',
    default: '168',
    description: 'How long a posted delivery is remembered; repeats later than this are posted again.',
  },
];

const integer = (min: number, max: number, fallback: number) =>
  z.coerce.number().int().min(min).max(max).default(fallback);

const EnvironmentSchema = z.object({
  AUDIENCE_TOPIC_PREFIX: z.string().trim().min(1, 'is required'),
  SLACK_SECRET_NAME_PREFIX: z.string().trim().min(1, 'is required'),
  SLACK_WEBHOOK_SECRETS: z
    .string()
    .default('{}')
    .transform((value, ctx) => {
      try {
        return JSON.parse(value) as unknown;
      } catch {
        ctx.addIssue({ code: 'custom', message: 'must be a JSON object of audience id → secret ARN' });
        return z.NEVER;
      }
    })
    .pipe(z.record(z.string(), z.string().min(1), { error: 'must be a JSON object of audience id → secret ARN' })),
  SLACK_WEBHOOK_CACHE_SECONDS: integer(0, 86_400, 300),
  SLACK_MAX_ATTEMPTS: integer(1, 10, 4),
  SLACK_BASE_DELAY_MS: integer(0, 60_000, 500),
  SLACK_MAX_DELAY_MS: integer(0, 300_000, 8000),
  SLACK_REQUEST_TIMEOUT_MS: integer(100, 60_000, 5000),
  POSTED_ALERTS_TABLE: z.string().trim().optional(),
  SLACK_REMEMBER_POSTS_HOURS: integer(1, 24 * 90, 168),
});

/** Validated relay settings. */
export interface SlackRelayConfig {
  readonly topicNamePrefix: string;
  readonly secretNamePrefix: string;
  /** Audience id → secret id, for secrets that do not follow the naming convention. */
  readonly webhookSecrets: Readonly<Record<string, string>>;
  readonly webhookCacheSeconds: number;
  readonly retry: RetryPolicy;
  /** Where posted deliveries are remembered; undefined: not remembered. */
  readonly postedAlerts: { readonly tableName: string; readonly rememberSeconds: number } | undefined;
}

/**
 * Validates the environment.
 * @throws ConfigError naming each bad variable
 */
export function loadSlackRelayConfig(env: Readonly<Record<string, string | undefined>>): SlackRelayConfig {
  const parsed = EnvironmentSchema.safeParse(env);
  if (!parsed.success) throw new ConfigError(`invalid Slack relay configuration: ${describeIssues(parsed.error)}`);
  const e = parsed.data;
  if (e.SLACK_MAX_DELAY_MS < e.SLACK_BASE_DELAY_MS) {
    throw new ConfigError('SLACK_MAX_DELAY_MS must be at least SLACK_BASE_DELAY_MS');
  }
  return {
    topicNamePrefix: e.AUDIENCE_TOPIC_PREFIX,
    secretNamePrefix: e.SLACK_SECRET_NAME_PREFIX,
    webhookSecrets: e.SLACK_WEBHOOK_SECRETS,
    webhookCacheSeconds: e.SLACK_WEBHOOK_CACHE_SECONDS,
    retry: {
      maxAttempts: e.SLACK_MAX_ATTEMPTS,
      baseDelayMs: e.SLACK_BASE_DELAY_MS,
      maxDelayMs: e.SLACK_MAX_DELAY_MS,
      requestTimeoutMs: e.SLACK_REQUEST_TIMEOUT_MS,
    },
    postedAlerts:
      e.POSTED_ALERTS_TABLE === undefined || e.POSTED_ALERTS_TABLE === ''
        ? undefined
        : { tableName: e.POSTED_ALERTS_TABLE, rememberSeconds: e.SLACK_REMEMBER_POSTS_HOURS * 3600 },
  };
}
