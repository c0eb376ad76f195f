/**
 * The relay's configuration, read once at cold start from the environment the stack sets. Every
 * variable, its default and its meaning is listed in `slackRelayEnvironment`.
 */
import * as z from 'zod/mini';
import { ConfigError } from '#core/errors';
import { describeIssues } from '#core/model';
import { integerVariable, requiredVariable } from '#shared/publishing-environment';
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
    name: 'SLACK_WEBHOOK_STORE_PREFIX',
    description:
      'Name prefix of the webhook store (`news-alerts/slack-webhooks/`): secrets `<this>0` … `<this>3`, each a JSON map of audience id → webhook URL, hold the webhook of every audience not listed in SLACK_WEBHOOK_SECRETS. A URL put here is refused at cold start (without repeating it).',
  },
  {
    name: 'SLACK_WEBHOOK_SECRETS',
    default: '{}',
    description:
      'JSON object audience id → ARN of an existing secret holding that audience’s webhook URL. A webhook URL put here instead of an ARN is refused at cold start (without repeating it).',
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

const integer = (min: number, max: number, fallback: number) => z._default(integerVariable(min, max), fallback);

/** A Secrets Manager secret ARN, as the stack writes it (lib/config.ts accepts the same). */
const SECRET_ARN = /^arn:aws[a-z-]*:secretsmanager:[a-z0-9-]+:\d{12}:secret:[A-Za-z0-9/_+=.@-]+$/;
const EXPECTED_ARN = 'a Secrets Manager secret ARN (arn:aws:secretsmanager:<region>:<account>:secret:<name>)';

/**
 * Something a person may have pasted from Slack or a browser: a scheme, or a host with a path.
 * An incoming-webhook URL is itself the credential, so it is never repeated in a message.
 */
const looksLikeUrl = (value: string): boolean =>
  /[a-z][a-z0-9+.-]*:\/\//i.test(value) || /(^|[\s"'])[a-z0-9-]+(\.[a-z0-9-]+)+\/\S/i.test(value);

/** Every URL-looking run in a message (a scheme, or a dotted host with a path), replaced by a mark. */
const hideUrls = (message: string): string =>
  message
    .replace(/[a-z][a-z0-9+.-]*:\/\/[^\s"'<>]*/gi, '<a URL, not shown>')
    .replace(/\b[a-z0-9-]+(\.[a-z0-9-]+)+\/[^\s"'<>]*/gi, '<a URL, not shown>');

/**
 * SLACK_WEBHOOK_SECRETS: audience id → secret ARN. Each problem names the audience, never the
 * value: a webhook URL put here by hand instead of the ARN of the secret holding it is itself the
 * secret, and an error message ends up in the function's logs.
 */
const WebhookSecretsSchema = z.pipe(
  z._default(z.string(), '{}'),
  z.transform((value: string, ctx) => {
    // The issue never carries the value (`input`): it may be a webhook URL, the credential itself.
    const refuse = (message: string) => ctx.issues.push({ code: 'custom', input: undefined, message });
    let parsed: unknown;
    try {
      parsed = JSON.parse(value);
    } catch {
      refuse('must be a JSON object of audience id → secret ARN');
      return z.NEVER;
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
      refuse('must be a JSON object of audience id → secret ARN');
      return z.NEVER;
    }
    const secrets: Record<string, string> = {};
    for (const [audienceId, secretArn] of Object.entries(parsed)) {
      if (looksLikeUrl(audienceId)) {
        refuse(
          `an audience id that looks like a URL (not shown); each key is an audience id and each value ${EXPECTED_ARN}`,
        );
        continue;
      }
      const audience = `audience ${JSON.stringify(audienceId.slice(0, 64))}`;
      if (typeof secretArn === 'string' && SECRET_ARN.test(secretArn.trim())) {
        secrets[audienceId] = secretArn.trim();
      } else if (typeof secretArn === 'string' && looksLikeUrl(secretArn)) {
        refuse(
          `${audience}: holds what looks like a webhook URL (not shown: the URL is the credential); put the URL in a Secrets Manager secret and give ${EXPECTED_ARN} here`,
        );
      } else {
        refuse(`${audience}: is not ${EXPECTED_ARN}`);
      }
    }
    return secrets;
  }),
);

/** A Secrets Manager name prefix (letters, digits, `/_+=.@-`), ending in `/`; never a URL. */
const StorePrefixSchema = requiredVariable.check(
  z.refine((value) => !looksLikeUrl(value), {
    error: `looks like a URL (not shown); give the webhook store's secret name prefix, such as news-alerts/slack-webhooks/`,
  }),
  z.refine((value) => /^[A-Za-z0-9/_+=.@-]+\/$/.test(value), {
    error:
      'must be a secret name prefix ending in "/" (letters, digits and /_+=.@-), such as news-alerts/slack-webhooks/',
  }),
);

const EnvironmentSchema = z.object({
  AUDIENCE_TOPIC_PREFIX: requiredVariable,
  SLACK_WEBHOOK_STORE_PREFIX: StorePrefixSchema,
  SLACK_WEBHOOK_SECRETS: WebhookSecretsSchema,
  SLACK_WEBHOOK_CACHE_SECONDS: integer(0, 86_400, 300),
  SLACK_MAX_ATTEMPTS: integer(1, 10, 4),
  SLACK_BASE_DELAY_MS: integer(0, 60_000, 500),
  SLACK_MAX_DELAY_MS: integer(0, 300_000, 8000),
  SLACK_REQUEST_TIMEOUT_MS: integer(100, 60_000, 5000),
  POSTED_ALERTS_TABLE: z.optional(z.string().check(z.trim())),
  SLACK_REMEMBER_POSTS_HOURS: integer(1, 24 * 90, 168),
});

/** Validated relay settings. */
export interface SlackRelayConfig {
  readonly topicNamePrefix: string;
  /** Name prefix of the webhook store's shards (functions/shared/slack-webhook-store.ts). */
  readonly storePrefix: string;
  /** Audience id → secret ARN, for audiences whose webhook is in an existing secret of their own. */
  readonly webhookSecrets: Readonly<Record<string, string>>;
  readonly webhookCacheSeconds: number;
  readonly retry: RetryPolicy;
  /** Where posted deliveries are remembered; undefined: not remembered. */
  readonly postedAlerts: { readonly tableName: string; readonly rememberSeconds: number } | undefined;
}

/**
 * Validates the environment.
 * @throws ConfigError naming each bad variable; no message repeats a URL-looking value (a webhook
 *   URL is a credential), whichever variable holds it
 */
export function loadSlackRelayConfig(env: Readonly<Record<string, string | undefined>>): SlackRelayConfig {
  const parsed = EnvironmentSchema.safeParse(env);
  if (!parsed.success) {
    throw new ConfigError(hideUrls(`invalid Slack relay configuration: ${describeIssues(parsed.error)}`));
  }
  const e = parsed.data;
  if (e.SLACK_MAX_DELAY_MS < e.SLACK_BASE_DELAY_MS) {
    throw new ConfigError('SLACK_MAX_DELAY_MS must be at least SLACK_BASE_DELAY_MS');
  }
  return {
    topicNamePrefix: e.AUDIENCE_TOPIC_PREFIX,
    storePrefix: e.SLACK_WEBHOOK_STORE_PREFIX,
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
