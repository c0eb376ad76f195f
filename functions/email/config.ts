/**
 * Configuration of the three email functions (delivery, SES events, preference endpoint), read
 * once at cold start from the variables the stack sets (lib/constructs/email-channel.ts) and the
 * sandbox sets the same way. Every variable, its default and its meaning is listed in
 * {@link emailEnvironment} (docs/configuration.md shows the same list). A missing or bad value
 * fails the cold start with a ConfigError that names it.
 */
import * as z from 'zod/mini';
import { normalizeAddress } from '#core/email/subscriber';
import { DEFAULT_LINK_DAYS, MIN_LINK_DAYS } from '#core/email/tokens';
import { ConfigError } from '#core/errors';
import { describeIssues } from '#core/model';
import { checkTargetUrl } from '#shared/network-targets';
import { type EnvironmentVariable, integerVariable, requiredVariable } from '#shared/publishing-environment';

/** Every variable the email functions read (each function reads the ones it needs). */
export const emailEnvironment: readonly EnvironmentVariable[] = [
  {
    name: 'SUBSCRIBERS_TABLE_NAME',
    description: 'DynamoDB table of email subscribers, their memberships, history and daily digests.',
  },
  { name: 'AUDIENCES_TABLE_NAME', description: 'The audiences table (names, locales, time zones, templates).' },
  {
    name: 'AUDIENCE_TOPIC_PREFIX',
    description:
      'Name prefix of the audience topics (`<prefix>-audience-`); a notification must come from its audience’s topic.',
  },
  { name: 'EMAIL_DOMAIN', description: 'The verified SES domain: right side of Message-IDs and List-Id.' },
  { name: 'EMAIL_FROM_ADDRESS', description: 'From address (at EMAIL_DOMAIN).' },
  { name: 'EMAIL_FROM_NAME', default: 'News alerts', description: 'From display name.' },
  { name: 'EMAIL_REPLY_TO', default: '(none)', description: 'Reply-To address.' },
  {
    name: 'EMAIL_UNSUBSCRIBE_MAILBOX',
    default: '(none)',
    description: 'Address of the `mailto:` List-Unsubscribe target; unset: HTTPS only.',
  },
  {
    name: 'EMAIL_CONFIGURATION_SET',
    default: '(none)',
    description: 'SES configuration set every message is sent with (its events feed the history).',
  },
  {
    name: 'PREFERENCES_URL',
    description: 'Public https:// URL of the preference endpoint; links are `<url>/p/<token>`.',
  },
  { name: 'LINK_KEY_SECRET_ID', description: 'Secret with the link keys: `{"current": "1", "key1": "…"}`.' },
  {
    name: 'EMAIL_LINK_DAYS',
    default: String(DEFAULT_LINK_DAYS),
    description: `Days a link works after its message (at least ${MIN_LINK_DAYS}).`,
  },
  { name: 'EMAIL_SEND_CONCURRENCY', default: '4', description: 'SES sends at once within one invocation.' },
  {
    name: 'EMAIL_CLAIM_LEASE_SECONDS',
    default: '120',
    description: 'How long a claimed send waits before another invocation may take over a crashed one.',
  },
  { name: 'EMAIL_HISTORY_DAYS', default: '90', description: 'How long the history of each message is kept (TTL).' },
  { name: 'DEFAULT_LOCALE', default: 'en-US', description: 'The stack’s defaultLocale (audiences without `locale`).' },
  { name: 'LINK_KEY_CACHE_SECONDS', default: '300', description: 'How long the link keys are cached.' },
];

const address = z.pipe(
  requiredVariable,
  z.transform((value, ctx) => {
    try {
      return normalizeAddress(value);
    } catch (error) {
      ctx.issues.push({ code: 'custom', input: value, message: (error as Error).message });
      return z.NEVER;
    }
  }),
);
const optional = <T extends z.ZodMiniType>(schema: T) =>
  z.optional(
    z.pipe(
      z.transform((value: unknown) => (value === '' ? undefined : value)),
      z.optional(schema),
    ),
  );

const httpsUrl = z.pipe(
  requiredVariable,
  z.transform((value, ctx) => {
    const check = checkTargetUrl(value, { allowInternal: true });
    if (!check.ok || !value.startsWith('https://')) {
      ctx.issues.push({ code: 'custom', input: value, message: 'must be an https:// URL' });
      return z.NEVER;
    }
    // Links are made as `<base>/p/<token>`: after a query or fragment the route and token would be
    // part of it, and every link of every email would be broken (found by a reviewer).
    if (/[?#]/.test(value)) {
      ctx.issues.push({
        code: 'custom',
        input: value,
        message: 'must not have a query or fragment: links are made by adding /p/<token> to its path',
      });
      return z.NEVER;
    }
    return value.replace(/\/+$/, '');
  }),
);

const EnvironmentSchema = z.object({
  SUBSCRIBERS_TABLE_NAME: requiredVariable,
  AUDIENCES_TABLE_NAME: z.optional(requiredVariable),
  AUDIENCE_TOPIC_PREFIX: z.optional(requiredVariable),
  EMAIL_DOMAIN: z.optional(requiredVariable),
  EMAIL_FROM_ADDRESS: z.optional(address),
  EMAIL_FROM_NAME: z._default(requiredVariable, 'News alerts'),
  EMAIL_REPLY_TO: optional(address),
  EMAIL_UNSUBSCRIBE_MAILBOX: optional(address),
  EMAIL_CONFIGURATION_SET: optional(requiredVariable),
  PREFERENCES_URL: z.optional(httpsUrl),
  LINK_KEY_SECRET_ID: z.optional(requiredVariable),
  EMAIL_LINK_DAYS: z._default(integerVariable(MIN_LINK_DAYS, 3650), DEFAULT_LINK_DAYS),
  EMAIL_SEND_CONCURRENCY: z._default(integerVariable(1, 50), 4),
  EMAIL_CLAIM_LEASE_SECONDS: z._default(integerVariable(10, 3600), 120),
  EMAIL_HISTORY_DAYS: z._default(integerVariable(1, 3650), 90),
  DEFAULT_LOCALE: z._default(requiredVariable, 'en-US'),
  LINK_KEY_CACHE_SECONDS: z._default(integerVariable(0, 3600), 300),
});

/** The email functions' settings. Which ones are required depends on the function ({@link loadEmailConfig}). */
export interface EmailConfig {
  readonly subscribersTable: string;
  readonly audiencesTable: string | undefined;
  readonly topicNamePrefix: string | undefined;
  readonly sender:
    | {
        readonly domain: string;
        readonly fromAddress: string;
        readonly fromName: string;
        readonly replyTo: string | undefined;
        readonly unsubscribeMailbox: string | undefined;
      }
    | undefined;
  readonly configurationSet: string | undefined;
  readonly preferencesUrl: string | undefined;
  readonly linkKeySecretId: string | undefined;
  readonly linkDays: number;
  readonly sendConcurrency: number;
  readonly claimLeaseMs: number;
  readonly historyDays: number;
  readonly defaultLocale: string;
  readonly linkKeyCacheSeconds: number;
}

/** What each function needs besides the subscribers table. */
const NEEDS = {
  delivery: [
    'AUDIENCES_TABLE_NAME',
    'AUDIENCE_TOPIC_PREFIX',
    'EMAIL_DOMAIN',
    'EMAIL_FROM_ADDRESS',
    'PREFERENCES_URL',
    'LINK_KEY_SECRET_ID',
  ],
  preferences: ['AUDIENCES_TABLE_NAME', 'PREFERENCES_URL', 'LINK_KEY_SECRET_ID'],
  events: [],
} as const satisfies Record<string, readonly (keyof z.output<typeof EnvironmentSchema>)[]>;

/** Which email function is loading its configuration. */
export type EmailFunction = keyof typeof NEEDS;

/** Validates the environment; throws ConfigError naming each missing or bad variable. */
export function loadEmailConfig(env: Readonly<Record<string, string | undefined>>, role: EmailFunction): EmailConfig {
  const parsed = EnvironmentSchema.safeParse(env);
  if (!parsed.success) throw new ConfigError(`invalid email function configuration: ${describeIssues(parsed.error)}`);
  const e = parsed.data;
  const missing = NEEDS[role].filter((name) => e[name] === undefined);
  if (missing.length > 0) {
    throw new ConfigError(
      `invalid email function configuration: ${missing.map((name) => `${name} is required`).join('; ')}`,
    );
  }
  if (
    e.EMAIL_FROM_ADDRESS !== undefined &&
    e.EMAIL_DOMAIN !== undefined &&
    !e.EMAIL_FROM_ADDRESS.endsWith(`@${e.EMAIL_DOMAIN.toLowerCase()}`)
  ) {
    throw new ConfigError(
      `invalid email function configuration: EMAIL_FROM_ADDRESS must be an address at EMAIL_DOMAIN (${e.EMAIL_DOMAIN}), or DMARC fails`,
    );
  }
  return {
    subscribersTable: e.SUBSCRIBERS_TABLE_NAME,
    audiencesTable: e.AUDIENCES_TABLE_NAME,
    topicNamePrefix: e.AUDIENCE_TOPIC_PREFIX,
    sender:
      e.EMAIL_DOMAIN === undefined || e.EMAIL_FROM_ADDRESS === undefined
        ? undefined
        : {
            domain: e.EMAIL_DOMAIN.toLowerCase(),
            fromAddress: e.EMAIL_FROM_ADDRESS,
            fromName: e.EMAIL_FROM_NAME,
            replyTo: e.EMAIL_REPLY_TO,
            unsubscribeMailbox: e.EMAIL_UNSUBSCRIBE_MAILBOX,
          },
    configurationSet: e.EMAIL_CONFIGURATION_SET,
    preferencesUrl: e.PREFERENCES_URL,
    linkKeySecretId: e.LINK_KEY_SECRET_ID,
    linkDays: e.EMAIL_LINK_DAYS,
    sendConcurrency: e.EMAIL_SEND_CONCURRENCY,
    claimLeaseMs: e.EMAIL_CLAIM_LEASE_SECONDS * 1000,
    historyDays: e.EMAIL_HISTORY_DAYS,
    defaultLocale: e.DEFAULT_LOCALE,
    linkKeyCacheSeconds: e.LINK_KEY_CACHE_SECONDS,
  };
}
