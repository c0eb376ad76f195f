/**
 * The stack's configuration: read from CDK context (`cdk.json`, or `-c key=value` on the command
 * line), validated with zod, and turned into typed props. A bad value fails `cdk synth` with a
 * message that names the context key and says what to fix, so a wrong setting never reaches an
 * account. Every option, its default and its meaning is listed in `stackOptions`; docs/configuration.md
 * documents the same list and a test keeps the two in step.
 */
import { z } from 'zod';
import { alertRunEnvironment, checkDefaultLocale } from '#alert-run/config';
import { InvalidAddressError, normalizeAddress } from '#core/email/subscriber';
import { FALLBACK_LOCALE } from '#core/locale';
import { describeIssues, editDistance } from '#core/model';
import { defaultPageSize, publisherBatchMax } from '#core/ports';
import { PaginationSchema } from '#provider/config';
import { ResponseMappingOverrideSchema } from '#provider/response-mapping';
import { checkTargetUrl, quotableOrigin } from '#shared/network-targets';
import { cronFields, rateMinutes, scheduleGaps } from './schedule-gap.ts';

/** A configuration value is invalid; the message names the context key. */
export class StackConfigError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'StackConfigError';
  }
}

/** The base URL shipped in cdk.json: synth works with it, a deploy with it warns. */
export const PLACEHOLDER_BASE_URL = 'https://news-api.example.com';

/** Retention periods CloudWatch Logs accepts, in days. */
export const LOG_RETENTION_DAYS = [
  1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653,
] as const;

/**
 * Environment variables of the alert function the stack sets itself; `alertEnvironmentOverrides`
 * may not touch them because the stack derives them from other options or from resources.
 */
export const STACK_MANAGED_VARIABLES = [
  'NEWS_API_BASE_URL',
  'NEWS_API_ALLOW_INTERNAL_TARGET',
  'NEWS_API_KEY_SECRET_ID',
  'NEWS_API_PAGE_SIZE',
  'NEWS_API_TIME_ZONE',
  'NEWS_API_PAGINATION',
  'NEWS_API_CURSOR_METHOD_VALUE',
  'NEWS_API_CURSOR_FIELD',
  'NEWS_API_RESPONSE_MAPPING',
  'RULES_TABLE_NAME',
  'AUDIENCES_TABLE_NAME',
  'STATE_TABLE_NAME',
  'LATE_ARRIVAL_MINUTES',
  'FULL_SWEEP_MINUTES',
  'INCREMENTAL_OVERLAP_MINUTES',
  'LATE_RECHECK_MINUTES',
  'LEDGER_RETENTION_DAYS',
  'LEASE_SECONDS',
  'DEFAULT_LOCALE',
  'PUBLISH_MODE',
  'WORK_QUEUE_URL',
  'DISPATCH_ABANDON_AFTER_MS',
] as const;

// --- Building blocks ------------------------------------------------------------------------------

const show = (value: unknown): string => {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 80 ? `${text.slice(0, 79)}…` : text;
};

/** `-c key=value` always yields strings: numbers, booleans and JSON are accepted in string form too. */
const fromJsonString = (value: unknown): unknown => {
  if (typeof value !== 'string') return value;
  const trimmed = value.trim();
  if (trimmed === '' || trimmed === 'null') return null;
  if (/^[[{]/.test(trimmed)) {
    try {
      return JSON.parse(trimmed);
    } catch {
      return value;
    }
  }
  return value;
};

const wholeNumber = (min: number, max: number, fallback: number) =>
  z.preprocess(
    (value) => (typeof value === 'string' && /^\s*-?\d+\s*$/.test(value) ? Number(value) : value),
    z
      .number({ error: (issue) => `must be a whole number from ${min} to ${max}; got ${show(issue.input)}` })
      .int(`must be a whole number from ${min} to ${max}`)
      .min(min, `must be at least ${min}`)
      .max(max, `must be at most ${max}`)
      .default(fallback),
  );

const nullable = <T extends z.ZodType>(schema: T) =>
  z.preprocess((value) => (value === '' || value === 'null' ? null : value), schema.nullable().default(null));

const zoneName = z
  .string({ error: 'must be an IANA time zone such as "UTC" or "Asia/Seoul"' })
  .trim()
  .refine(
    (value) => {
      try {
        new Intl.DateTimeFormat('en-US', { timeZone: value });
        return true;
      } catch {
        return false;
      }
    },
    { error: (issue) => `must be an IANA time zone such as "UTC" or "Asia/Seoul"; got ${show(issue.input)}` },
  );

const timeZone = (fallback: string) => zoneName.default(fallback);

/**
 * An https:// URL without credentials. Whether its host may be internal (loopback, private,
 * metadata…) depends on `allowInternalTargets`, a sibling option: the schema's final check
 * applies the target-address policy to every URL once that option is known.
 */
const httpsUrl = (what: string) =>
  z
    .string({ error: `must be an https:// URL (${what})` })
    .trim()
    .superRefine((value, ctx) => {
      const check = checkTargetUrl(value, { allowInternal: true });
      if (check.ok) return;
      const message =
        check.reason === 'is not a URL'
          ? `is not a URL; got ${show(quotableOrigin(value))}`
          : check.reason.startsWith('must be an')
            ? `must use https:// (${what}); got ${show(quotableOrigin(value))}`
            : check.reason;
      ctx.addIssue({ code: 'custom', message });
    });

/** `true`/`false`, also as the strings `-c key=value` gives. */
const flag = (fallback: boolean) =>
  z.preprocess(
    (value) => (value === 'true' ? true : value === 'false' ? false : value),
    z.boolean({ error: 'must be true or false' }).default(fallback),
  );

const secretArn = z
  .string()
  .trim()
  .regex(
    /^arn:aws[a-z-]*:secretsmanager:[a-z0-9-]+:\d{12}:secret:[A-Za-z0-9/_+=.@-]+$/,
    'must be a Secrets Manager secret ARN (arn:aws:secretsmanager:<region>:<account>:secret:<name>-<6 chars>)',
  );

const kmsKeyArn = z
  .string()
  .trim()
  .regex(/^arn:aws[a-z-]*:kms:[a-z0-9-]+:\d{12}:key\/[A-Za-z0-9-]+$/, 'must be a KMS key ARN (arn:aws:kms:…:key/…)');

/** Audience ids become part of an SNS topic name, which allows only letters, digits, `-` and `_`. */
const audienceId = z
  .string({ error: 'audienceId is required' })
  .regex(
    /^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$/,
    'must be 1-128 letters, digits, "-" or "_" (it becomes part of the SNS topic name)',
  );

/**
 * An address SNS emails: as strict as SES email and `subscriptions add --email` (normalizeAddress:
 * plain ASCII, no quote, display name, control character or second recipient).
 */
const email = z
  .string()
  .trim()
  .superRefine((value, context) => {
    try {
      normalizeAddress(value);
    } catch (error) {
      if (!(error instanceof InvalidAddressError)) throw error;
      context.addIssue({ code: 'custom', message: `must be an email address (${error.message})` });
    }
  });

/** E.164, which is what SNS SMS subscriptions take. */
const phoneNumber = z
  .string()
  .trim()
  .regex(/^\+[1-9]\d{6,14}$/, 'must be a phone number in E.164 form, e.g. +821012345678');

/**
 * Query parameters that carry a credential. The template holds what cdk.json says in clear, and a
 * secret never belongs in a template: such an endpoint is added with `subscriptions add --https`,
 * whose endpoint store keeps the URL out of it.
 */
const credentialParameter =
  /^(?:(?:.*[-_])?(?:token|secret|password|passwd|apikey|signature|credential)s?|(?:.*[-_])?(?:api|access|secret|private|auth|subscription|signing)[-_]?key|key|sig|code|auth|pass|x-amz-(?:signature|credential))$/i;

/**
 * Services whose endpoint URLs carry their secret in the path, not the query: anyone holding the
 * URL can post to the channel. Matched by host and the (decoded) path's start; the rest is the
 * secret. Most take their own JSON and cannot confirm an SNS subscription; PagerDuty's SNS
 * endpoint can, so it goes through the endpoint store like any credential-bearing endpoint.
 */
const pathCredentialServices: readonly {
  readonly name: string;
  readonly host: RegExp;
  readonly path: RegExp;
  readonly takesSns?: true;
}[] = [
  {
    name: 'a Discord webhook URL',
    host: /^(?:(?:ptb|canary)\.)?discord(?:app)?\.com$/,
    path: /^\/api\/(?:v\d+\/)?webhooks\//,
  },
  {
    name: 'a Microsoft Teams incoming-webhook URL',
    host: /(?:^|\.)webhook\.office\.com$|^outlook\.office(?:365)?\.com$/,
    path: /^\/webhook/,
  },
  { name: 'a Zapier webhook URL', host: /^hooks\.zapier\.com$/, path: /^\/hooks\// },
  { name: 'an IFTTT Webhooks URL', host: /^maker\.ifttt\.com$/, path: /\/with\/key\// },
  { name: 'a Telegram bot API URL', host: /^api\.telegram\.org$/, path: /^\/bot/ },
  {
    name: 'a PagerDuty integration URL',
    host: /^events\.(?:eu\.)?pagerduty\.com$/,
    path: /^\/integration\/[^/]+\/enqueue/,
    takesSns: true,
  },
  // On-call and log services that confirm SNS subscriptions themselves, with the key in the path.
  {
    name: 'a Splunk On-Call (VictorOps) URL',
    host: /^alert\.victorops\.com$/,
    path: /^\/integrations\//,
    takesSns: true,
  },
  {
    name: 'a Sumo Logic HTTP source URL',
    host: /(?:^|\.)sumologic\.(?:com|net)$/,
    path: /^\/receiver\/v1\//,
    takesSns: true,
  },
  {
    name: 'a Grafana OnCall integration URL',
    host: /(?:^|\.)grafana\.net$/,
    path: /^\/(?:oncall\/)?integrations\//,
    takesSns: true,
  },
  {
    name: 'a Zenduty integration URL',
    host: /^(?:www\.)?zenduty\.com$/,
    path: /^\/api\/integration\//,
    takesSns: true,
  },
];

/**
 * Path segments after which a webhook's secret usually follows (Mattermost's and Rocket.Chat's
 * `/hooks/<token>`, many services' `/webhook/<token>`, `/incoming-webhook/<token>`).
 */
const hookSegment = /^(?:web[-_]?)?hooks?$|^incoming(?:[-_]?web[-_]?hooks?)?$/i;

/** A canonical UUID: after a hook segment, the secret of many services. */
const uuidSegment = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Whether a path segment looks like a generated secret. After a hook segment: a UUID, or a run of
 * 16 or more letters and digits (with both) that no `-` or `_` breaks, as generated tokens are and
 * slugs (`news-alerts-prod-01`) are not. Anywhere: 32 or more characters mixing upper case, lower
 * case and digits (random base62, base64url, or base64 with its padding). Identifiers people put in ordinary
 * endpoints are neither: words and slugs, dates, hex ids (a MongoDB ObjectId, a SHA), UUIDs and
 * ULIDs outside a hook's path have one letter case only.
 */
function secretLike(segment: string, afterHook: boolean): boolean {
  if (afterHook) {
    if (uuidSegment.test(segment)) return true;
    return segment
      .split(/[-_]/)
      .some((run) => run.length >= 16 && /^[A-Za-z0-9]+$/.test(run) && /\d/.test(run) && /[A-Za-z]/.test(run));
  }
  return (
    segment.length >= 32 &&
    // base64url, or base64 with its `+` and `=` padding (Sumo Logic's tokens end in `==`)
    /^[A-Za-z0-9_+-]+={0,2}$/.test(segment) &&
    /\d/.test(segment) &&
    /[a-z]/.test(segment) &&
    /[A-Z]/.test(segment)
  );
}

/** How a refused endpoint can still reach SNS subscribers: through the endpoint store. */
const useEndpointStore =
  "add this endpoint with 'news-alerts subscriptions add <audienceId> --https -' instead (its URL is kept in the endpoint store)";

/** A path segment as the service reads it (percent-decoded); as written when it does not decode. */
function decodedSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/**
 * Why `url` must not be written into the template, or undefined. Never quotes the secret: not the
 * path of a service whose path is one, not a segment, not a query value.
 */
function secretInUrl(url: string): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return undefined;
  }
  // `hooks.slack.com.` is the same host as `hooks.slack.com`.
  const host = parsed.hostname.toLowerCase().replace(/\.$/, '');
  if (host === 'hooks.slack.com') {
    return 'is a Slack incoming-webhook URL: it is a credential (it would be in the template) and cannot confirm an SNS subscription; give the audience "slack": {} and give the URL on stdin to \'news-alerts subscriptions add <audienceId> --slack-webhook\'';
  }
  const segments = parsed.pathname.split('/').map(decodedSegment);
  const path = segments.join('/');
  const service = pathCredentialServices.find((known) => known.host.test(host) && known.path.test(path));
  if (service?.takesSns) {
    return `is ${service.name}: its path is a credential, which would be in the template in clear; ${useEndpointStore}`;
  }
  if (service !== undefined) {
    // These services take their own JSON, not SNS's: they would neither confirm the subscription
    // (SNS first posts a SubscriptionConfirmation to be fetched) nor read the alerts.
    return `is ${service.name}: its path is a credential, which would be in the template in clear, and the service cannot confirm an SNS subscription or read SNS's messages; put a relay that does in front of it (as the stack's Slack relay does for Slack)`;
  }
  const token = segments.findIndex((segment, index) =>
    secretLike(segment, hookSegment.test(segments[index - 1] ?? '')),
  );
  if (token >= 0) {
    return `carries what looks like a credential in its path (segment ${token} is ${segments[token]?.length} random-looking characters), which would be in the template in clear; ${useEndpointStore}`;
  }
  const named = [...parsed.searchParams.keys()].find((name) => credentialParameter.test(name));
  if (named !== undefined) {
    return `carries a credential in its query (${named}=…), which would be in the template in clear; ${useEndpointStore}`;
  }
  return undefined;
}

const httpsEndpoint = z.preprocess(
  (value) => (typeof value === 'string' ? { url: value } : value),
  z.strictObject({
    url: httpsUrl('SNS posts alerts to it; plain http would send them in clear text').check(
      z.superRefine((url, ctx) => {
        const problem = secretInUrl(url);
        if (problem !== undefined) ctx.addIssue({ code: 'custom', message: problem });
      }),
    ),
    /** Deliver the structured JSON body itself instead of the SNS envelope around it. */
    rawMessageDelivery: z.boolean().default(false),
  }),
);

/** An audience declared in configuration: the stack creates its topic and subscriptions. */
const AudienceConfigSchema = z
  .strictObject({
    audienceId,
    emails: z.array(email).max(100).default([]),
    phoneNumbers: z.array(phoneNumber).max(100).default([]),
    httpsEndpoints: z.array(httpsEndpoint).max(100).default([]),
    /**
     * Slack through the relay function. `{}` creates an empty secret `<prefix>/slack/<audienceId>`
     * for the incoming-webhook URL; `{"webhookSecretArn": "…"}` uses an existing secret, and
     * `webhookSecretKmsKeyArn` names its customer-managed key when it has one (the relay then
     * gets kms:Decrypt on that key through Secrets Manager only).
     */
    slack: z
      .strictObject({ webhookSecretArn: secretArn.optional(), webhookSecretKmsKeyArn: kmsKeyArn.optional() })
      .check(
        z.superRefine((slack, ctx) => {
          if (slack.webhookSecretKmsKeyArn !== undefined && slack.webhookSecretArn === undefined) {
            ctx.addIssue({
              code: 'custom',
              path: ['webhookSecretKmsKeyArn'],
              message:
                'is the key of an existing webhook secret: give webhookSecretArn too, or leave it out (the secret the stack creates uses the AWS managed key)',
            });
          }
        }),
      )
      .optional(),
  })
  .check(
    z.superRefine((audience, ctx) => {
      // The same subscriber twice would get every alert twice (SNS keeps one subscription per
      // endpoint, and synth stopped with a construct error); addresses compare without case.
      const lists: [string, string[]][] = [
        ['emails', audience.emails.map((address) => address.toLowerCase())],
        ['phoneNumbers', audience.phoneNumbers],
        ['httpsEndpoints', audience.httpsEndpoints.map((endpoint) => endpoint.url)],
      ];
      for (const [name, values] of lists) {
        values.forEach((value, index) => {
          const first = values.indexOf(value);
          if (first < index) {
            ctx.addIssue({
              code: 'custom',
              path: [name, index],
              message: `is listed twice (as ${name}[${first}] too); list each subscriber once`,
            });
          }
        });
      }
    }),
  );

const overridableVariables = new Set(
  alertRunEnvironment
    .map((variable) => variable.name)
    .filter((name) => !(STACK_MANAGED_VARIABLES as readonly string[]).includes(name)),
);

// --- The schema -----------------------------------------------------------------------------------

/**
 * Every context key the stack reads. Keys are top level so that `-c key=value` can override any
 * of them for one deploy.
 */
export const StackConfigSchema = z
  .object({
    /** CloudFormation stack name. */
    stackName: z
      .string()
      .regex(/^[A-Za-z][A-Za-z0-9-]{0,127}$/, 'must be a CloudFormation stack name (letters, digits, "-")')
      .default('NewsAlerts'),
    /** Prefix of the names other tools must predict: audience topics and Slack secrets. */
    resourcePrefix: z
      .string()
      .regex(/^[a-z][a-z0-9-]{0,31}$/, 'must be 1-32 lower-case letters, digits or "-", starting with a letter')
      .default('news-alerts'),
    newsApiBaseUrl: httpsUrl('the provider only allows HTTPS')
      .check(
        // Refused here under this key (the function's own check names its variable): a query is
        // where an API key is put by mistake, and it would be in the template.
        z.refine((value) => !/[?#]/.test(value), {
          message:
            'must not have a query or fragment (the API key comes from Secrets Manager: `news-alerts api-key set`)',
        }),
      )
      .default(PLACEHOLDER_BASE_URL),
    /**
     * Accept loopback, private, link-local and other internal hosts in newsApiBaseUrl and
     * httpsEndpoints. Off: a deployed stack only talks to the public internet. For test stacks
     * whose targets are deliberately internal.
     */
    allowInternalTargets: flag(false),
    /** Existing secret with the API key; null creates an empty one. */
    apiKeySecretArn: nullable(secretArn),
    /** Customer key the existing secret is encrypted with (only with apiKeySecretArn). */
    apiKeySecretKmsKeyArn: nullable(kmsKeyArn),
    scheduleExpression: z
      .string()
      .trim()
      .regex(
        /^(rate\(\d+ (minute|minutes|hour|hours|day|days)\)|cron\(\S+ \S+ \S+ \S+ \S+ \S+\))$/,
        'must be an EventBridge Scheduler expression such as "rate(5 minutes)" or "cron(0/10 * * * ? *)"',
      )
      .check(
        z.superRefine((expression, ctx) => {
          const problem = scheduleProblem(expression);
          if (problem !== undefined) ctx.addIssue({ code: 'custom', message: problem });
        }),
      )
      .default('rate(5 minutes)'),
    scheduleTimeZone: timeZone('UTC'),
    /** Required for cron expressions: how often the schedule fires, for the "no successful run" alarm. */
    scheduleIntervalMinutes: nullable(wholeNumber(1, 1440, 5)),
    /** 0 turns the flexible window off. */
    flexibleWindowMinutes: wholeNumber(0, 1440, 1),
    schedulerRetryAttempts: wholeNumber(0, 185, 3),
    newsApiPageSize: wholeNumber(1, 1000, defaultPageSize),
    /**
     * No default: a provider whose timestamps carry no offset must have its zone named, or the run
     * refuses them (guessing UTC put Seoul alerts nine hours off). Date-only ranges use UTC then.
     */
    newsApiTimeZone: nullable(zoneName),
    newsApiPagination: z.preprocess(fromJsonString, PaginationSchema),
    // The function form: the provider's schemas are zod/mini, whose schemas have no `.default()`.
    newsApiResponseMapping: z.preprocess(fromJsonString, z._default(ResponseMappingOverrideSchema, {})),
    memorySize: wholeNumber(128, 10_240, 512),
    timeoutSeconds: wholeNumber(30, 900, 300),
    lateArrivalMinutes: wholeNumber(0, 7 * 24 * 60, 60),
    fullSweepMinutes: wholeNumber(0, 24 * 60, 360),
    incrementalOverlapMinutes: wholeNumber(0, 24 * 60, 2),
    /** Counted reading's recheck period; null: the larger of 10 and three schedule intervals. */
    lateRecheckMinutes: nullable(wholeNumber(0, 24 * 60, 15)),
    ledgerRetentionDays: wholeNumber(2, 365, 14),
    logRetentionDays: z.preprocess(
      (value) => (typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : value),
      z
        .number()
        .refine((value) => (LOG_RETENTION_DAYS as readonly number[]).includes(value), {
          error: `must be one of the retention periods CloudWatch Logs accepts: ${LOG_RETENTION_DAYS.join(', ')}`,
        })
        .default(90),
    ),
    removalPolicy: z.enum(['retain', 'destroy'], { error: 'must be "retain" or "destroy"' }).default('retain'),
    tableEncryption: z
      .enum(['aws-managed', 'customer-managed'], { error: 'must be "aws-managed" or "customer-managed"' })
      .default('aws-managed'),
    alarmEmail: nullable(email),
    noSuccessfulRunIntervals: wholeNumber(1, 288, 3),
    watermarkLagAlarmMinutes: wholeNumber(5, 7 * 24 * 60, 60),
    /** Reserved concurrency of the Slack relay; 0 leaves it unreserved. */
    slackRelayConcurrency: wholeNumber(0, 100, 2),
    /**
     * Locale of audiences without `locale` (and the fallback before English for the others):
     * a BCP 47 tag whose language has shipped messages. `en-US` keeps today's alerts.
     */
    defaultLocale: z
      .string({ error: 'must be a BCP 47 locale such as "en-US", "ko-KR" or "ja-JP"' })
      .transform((value, ctx) => {
        const check = checkDefaultLocale(value);
        if (check.ok) return check.locale;
        ctx.addIssue({ code: 'custom', message: check.message });
        return z.NEVER;
      })
      .default(FALLBACK_LOCALE),
    /**
     * `single`: the alert run publishes to SNS itself. `sharded`: it queues work items on SQS and a
     * publisher function publishes them, many invocations at once (for bursts past one run's limits).
     */
    publishMode: z.enum(['single', 'sharded'], { error: 'must be "single" or "sharded"' }).default('single'),
    /** Sharded only: the most publisher invocations at once (the SQS event source's maximum concurrency). */
    publisherConcurrency: wholeNumber(2, 1000, 4),
    /**
     * Sharded only: work items per publisher invocation. Lambda takes more than 10 only with a
     * batching window (the stack sets 1 s) and caps an event at 6 MB whatever this says. At most 99
     * keeps a batch's claim and its settlement one DynamoDB transaction each (100 actions: the
     * settlement's items and the dispatch's head). An invocation waits in turn for its claim, ledger
     * lookup, publishing, ledger write and settlement, and its claim and settlement are one request
     * each however many items it holds: larger batches publish faster and make fewer requests per
     * notification (bench section 9).
     */
    publisherBatchSize: wholeNumber(1, publisherBatchMax, publisherBatchMax),
    audiences: z.preprocess(fromJsonString, z.array(AudienceConfigSchema).max(100).default([])),
    /**
     * The domain SES email is sent from (docs/email.md). Null (the default) keeps SES email off:
     * the template then has nothing that sends email, and email stays SNS email subscriptions.
     */
    emailDomain: nullable(
      z
        .string()
        .trim()
        .toLowerCase()
        .regex(
          /^(?=.{4,253}$)([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/,
          'must be a domain name you control, such as alerts.example.com',
        ),
    ),
    /** From address of SES email; null: `alerts@<emailDomain>`. Must be at emailDomain (DMARC alignment). */
    emailFromAddress: nullable(email),
    /** From display name of SES email. */
    emailFromName: z
      .string()
      .trim()
      .min(1, 'must not be empty')
      .max(60, 'must be at most 60 characters')
      .regex(/^[^\r\n"<>]*$/, 'must not contain line breaks, quotes or angle brackets')
      .default('News alerts'),
    /** Reply-To of SES email; null: none. */
    emailReplyTo: nullable(email),
    /**
     * Public URL of the preference endpoint (a custom domain mapped to its API); null: the API's
     * own `execute-api` URL. Links in every email point here.
     */
    emailPreferencesUrl: nullable(
      httpsUrl('links in every email point at it').check(
        // Links are made as `<base>/p/<token>`: after a query or fragment every link would be broken.
        z.refine((value) => !/[?#]/.test(value), {
          message: 'must not have a query or fragment: email links are made by adding /p/<token> to its path',
        }),
      ),
    ),
    /**
     * Also offer `mailto:unsubscribe@<emailDomain>` in List-Unsubscribe and receive those mails
     * with an SES receipt rule (needs an MX record and SES receiving in the region, docs/deploy.md).
     */
    emailMailtoUnsubscribe: flag(true),
    /** Most email delivery invocations at once (the SQS event source's maximum concurrency). */
    emailConcurrency: wholeNumber(2, 100, 2),
    alertEnvironmentOverrides: z.preprocess(
      fromJsonString,
      z
        .record(z.string(), z.union([z.string(), z.number()]).transform(String))
        .superRefine((overrides, ctx) => {
          for (const name of Object.keys(overrides)) {
            if (!overridableVariables.has(name)) {
              ctx.addIssue({
                code: 'custom',
                path: [name],
                message: (STACK_MANAGED_VARIABLES as readonly string[]).includes(name)
                  ? 'is set by the stack from its own option; change that option instead'
                  : `is not a variable of the alert function; known: ${[...overridableVariables].join(', ')}`,
              });
            }
          }
        })
        .default({}),
    ),
  })
  .superRefine((config, ctx) => {
    // The run stops fetching SOFT_MARGIN_SECONDS before its time limit: a margin as long as the
    // timeout leaves every run nothing to fetch in (it would end at once, every time).
    // Named on the key the user set: the margin when overridden, else the timeout (a reviewer's
    // timeoutSeconds 29 was also told about a SOFT_MARGIN_SECONDS it never set).
    const explicitMargin = config.alertEnvironmentOverrides.SOFT_MARGIN_SECONDS;
    const softMargin = Number(explicitMargin ?? 30);
    if (Number.isFinite(softMargin) && softMargin >= config.timeoutSeconds) {
      if (explicitMargin !== undefined) {
        ctx.addIssue({
          code: 'custom',
          path: ['alertEnvironmentOverrides', 'SOFT_MARGIN_SECONDS'],
          message: `is ${softMargin} s, not less than timeoutSeconds (${config.timeoutSeconds}): the run stops fetching that long before its time limit, so it would never read anything; lower it or raise timeoutSeconds`,
        });
      } else if (config.timeoutSeconds >= 30) {
        ctx.addIssue({
          code: 'custom',
          path: ['timeoutSeconds'],
          message: `is ${config.timeoutSeconds}, not more than the run's fetch margin (SOFT_MARGIN_SECONDS, ${softMargin} s by default): the run stops fetching that long before its time limit, so it would never read anything; raise it, or lower alertEnvironmentOverrides.SOFT_MARGIN_SECONDS`,
        });
      }
    }
    if (!config.allowInternalTargets) {
      const internal = (value: string, path: (string | number)[]) => {
        const check = checkTargetUrl(value);
        if (!check.ok && check.internal) {
          ctx.addIssue({
            code: 'custom',
            path,
            message: `${check.reason}. Set allowInternalTargets to true only for a test stack whose targets are internal on purpose`,
          });
        }
      };
      internal(config.newsApiBaseUrl, ['newsApiBaseUrl']);
      for (const [index, audience] of config.audiences.entries()) {
        for (const [at, endpoint] of audience.httpsEndpoints.entries()) {
          internal(endpoint.url, ['audiences', index, 'httpsEndpoints', at, 'url']);
        }
      }
    }
    const seen = new Set<string>();
    for (const [index, audience] of config.audiences.entries()) {
      if (seen.has(audience.audienceId)) {
        ctx.addIssue({ code: 'custom', path: ['audiences', index, 'audienceId'], message: 'is declared twice' });
      }
      seen.add(audience.audienceId);
      const topicName = audienceTopicName(config.resourcePrefix, audience.audienceId);
      if (topicName.length > 256) {
        ctx.addIssue({
          code: 'custom',
          path: ['audiences', index, 'audienceId'],
          message: `makes the topic name "${topicName.slice(0, 40)}…" longer than SNS allows (256)`,
        });
      }
    }
    const emailOnly = ['emailFromAddress', 'emailReplyTo', 'emailPreferencesUrl'] as const;
    if (config.emailDomain === null) {
      for (const key of emailOnly) {
        if (config[key] !== null) {
          ctx.addIssue({
            code: 'custom',
            path: [key],
            message: 'only applies to SES email; set emailDomain too, or remove it',
          });
        }
      }
    } else if (
      config.emailFromAddress !== null &&
      !config.emailFromAddress.toLowerCase().endsWith(`@${config.emailDomain}`)
    ) {
      ctx.addIssue({
        code: 'custom',
        path: ['emailFromAddress'],
        message: `must be an address at emailDomain (${config.emailDomain}), or DMARC alignment fails`,
      });
    }
    if (config.apiKeySecretKmsKeyArn !== null && config.apiKeySecretArn === null) {
      ctx.addIssue({
        code: 'custom',
        path: ['apiKeySecretKmsKeyArn'],
        message: 'only applies to an existing secret; set apiKeySecretArn too, or remove it',
      });
    }
    if (config.ledgerRetentionDays * 24 * 60 <= config.lateArrivalMinutes + config.fullSweepMinutes + 2 * 24 * 60) {
      ctx.addIssue({
        code: 'custom',
        path: ['ledgerRetentionDays'],
        message:
          'must cover the re-read overlap (lateArrivalMinutes plus fullSweepMinutes plus two provider days), or alerts are sent twice',
      });
    }
    const rate = rateMinutes(config.scheduleExpression);
    const gaps = scheduleGaps(config.scheduleExpression);
    const stated = config.scheduleIntervalMinutes;
    if (gaps !== undefined && stated !== null && (stated < gaps.shortest || stated > gaps.longest)) {
      // The alarms and the recheck period follow the interval: one the schedule never has would
      // size them for runs that never come (the no-run alarm fires between every two runs) or far
      // more often (it notices a stop late). A reviewer's hourly cron was stated as 10 minutes.
      const apart =
        gaps.longest === Number.POSITIVE_INFINITY
          ? 'at most once a year'
          : gaps.shortest === gaps.longest
            ? `every ${gaps.longest} minute(s)`
            : `${gaps.shortest} to ${gaps.longest} minutes apart`;
      ctx.addIssue({
        code: 'custom',
        path: ['scheduleIntervalMinutes'],
        message:
          rate !== undefined
            ? `is ${stated}, but ${config.scheduleExpression} runs every ${rate} minute(s): leave it null (it is derived from rate()) or make them agree`
            : `is ${stated}, but ${config.scheduleExpression} runs ${apart}: leave it null (it is derived from the cron's fields) or give a value from its shortest gap to its longest`,
      });
      return;
    }
    const interval = stated ?? gaps?.shortest;
    if (interval === undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['scheduleIntervalMinutes'],
        message:
          'is required with a cron() schedule synth cannot read (L, W or #, a range that wraps such as 22-2, or a year field that leaves out a year from 2028 to 2030): how many minutes apart its runs usually are',
      });
      return;
    }
    // The no-run alarm watches the longest gap: a cron that pauses at night must not page nightly.
    const longest = Math.max(gaps?.longest ?? interval, interval);
    const watched = longest + daylightSavingSlack(config.scheduleExpression, config.scheduleTimeZone);
    // The no-run alarm's window must hold more than the longest gap (a healthy one is that plus
    // flexibleWindowMinutes) and CloudWatch allows at most a day: so runs at most 12 hours apart,
    // and a longer schedule could never be given a window.
    if (longest > 720) {
      ctx.addIssue({
        code: 'custom',
        path: ['scheduleExpression'],
        message: `runs ${longest === Number.POSITIVE_INFINITY ? 'at most once a year' : `${longest} min apart${longest > interval ? ' at the most' : ''}`}; it must fire at least every 12 hours (720 min): the no-run alarm watches at most one day, which must hold two intervals`,
      });
      return;
    }
    const window = noRunWindowMinutes(interval, watched, config.noSuccessfulRunIntervals);
    // Runs drift by up to the flexible window, so the alarm window must hold a whole gap between runs.
    if (window < watched + config.flexibleWindowMinutes + 1) {
      ctx.addIssue({
        code: 'custom',
        path: ['noSuccessfulRunIntervals'],
        message: `${config.noSuccessfulRunIntervals} interval(s) of ${interval} min is shorter than the longest healthy gap between runs (${longest > interval ? `the longest gap, ${longest} min,` : 'interval'} + flexibleWindowMinutes); raise it`,
      });
    }
    if (window > 1440) {
      ctx.addIssue({
        code: 'custom',
        path: ['noSuccessfulRunIntervals'],
        message:
          longest > interval
            ? `the longest gap (${watched} min) and ${config.noSuccessfulRunIntervals - 1} more interval(s) of ${interval} min exceed the one-day limit of a CloudWatch alarm window`
            : `${config.noSuccessfulRunIntervals} x ${interval} min exceeds the one-day limit of a CloudWatch alarm window`,
      });
    }
    // Against the shortest gap the runs really have, whatever interval is stated.
    const shortest = Math.min(interval, gaps?.shortest ?? interval);
    if (config.flexibleWindowMinutes >= shortest) {
      ctx.addIssue({
        code: 'custom',
        path: ['flexibleWindowMinutes'],
        message: `must be shorter than the schedule interval (${shortest} min${shortest < interval ? ', its shortest gap' : ''}), or runs can bunch up`,
      });
    }
  });

/** The options as written in cdk.json (defaults not yet applied). */
export type StackConfigInput = z.input<typeof StackConfigSchema>;
type ParsedConfig = z.output<typeof StackConfigSchema>;

/** One audience declared in configuration. */
export type AudienceConfig = z.output<typeof AudienceConfigSchema>;

/** Validated stack configuration, with values derived from the options. */
export interface StackConfig extends ParsedConfig {
  /**
   * Minutes between scheduled runs: `scheduleIntervalMinutes`, else the schedule's shortest gap.
   * Sizes the recheck period, the error alarms' periods and how long an invocation may wait.
   */
  readonly intervalMinutes: number;
  /** The no-run alarm's window: the longest gap between runs, and `noSuccessfulRunIntervals` - 1 intervals more. */
  readonly noRunWindowMinutes: number;
  /** Counted reading's recheck period: `lateRecheckMinutes`, or derived from the schedule. */
  readonly recheckMinutes: number;
  /** Run lease: longer than the function timeout, so a timed-out run's lease expires on its own. */
  readonly leaseSeconds: number;
  /** True while newsApiBaseUrl is the shipped placeholder. */
  readonly usesPlaceholderBaseUrl: boolean;
  /** SES email, when `emailDomain` is set: the From address resolved. */
  readonly email: { readonly domain: string; readonly fromAddress: string } | undefined;
}

/** The topic of an audience: `<prefix>-audience-<audienceId>` (the CLI names its topics the same way). */
export function audienceTopicName(prefix: string, id: string): string {
  return `${prefix}-audience-${id}`;
}

/**
 * What EventBridge Scheduler would refuse in a `cron(…)` expression, found at synth instead of at
 * deploy: one of day-of-month and day-of-week must be `?`, and the numbers of the minutes, hours,
 * day-of-month, month and year fields must be in their ranges. Names (JAN, MON), `L`, `W` and `#`
 * are left to Scheduler; a `rate(…)` takes the singular unit for 1 only. Undefined for an
 * expression that passes.
 */
export function scheduleProblem(expression: string): string | undefined {
  const rate = /^rate\((\d+) (minute|hour|day)(s?)\)$/.exec(expression);
  if (rate !== null && (rate[1] === '1') !== (rate[3] === '')) {
    // Scheduler takes the singular unit for 1 only: rate(1 minute), rate(5 minutes).
    return `"${expression}": write ${rate[1] === '1' ? `rate(1 ${rate[2]})` : `rate(${rate[1]} ${rate[2]}s)`}`;
  }
  const fields = cronFields(expression);
  if (fields === undefined) return undefined;
  const [minutes, hours, dayOfMonth, month, dayOfWeek, year] = fields;
  if ((dayOfMonth === '?') === (dayOfWeek === '?')) {
    return `"${expression}": exactly one of day-of-month (3rd field) and day-of-week (5th) must be "?", as in "cron(0/10 * * * ? *)"`;
  }
  const ranges: [string, string, number, number][] = [
    ['minutes (1st field)', minutes, 0, 59],
    ['hours (2nd field)', hours, 0, 23],
    ['day-of-month (3rd field)', dayOfMonth, 1, 31],
    ['month (4th field)', month, 1, 12],
    ['year (6th field)', year, 1970, 2199],
  ];
  for (const [name, field, low, high] of ranges) {
    // Numbers of values and ranges (`5`, `1-5`, `0/10`: a step is a count, not a value).
    for (const part of field.split(',')) {
      const [values = '', step] = part.split('/');
      const numbers = values
        .split('-')
        .filter((value) => /^\d+$/.test(value))
        .map(Number);
      if (numbers.some((value) => value < low || value > high)) {
        return `"${expression}": ${name} must be from ${low} to ${high}`;
      }
      if (step !== undefined && !(/^\d+$/.test(step) && Number(step) >= 1)) {
        return `"${expression}": ${name} has a step "/${step}" that is not a whole number of at least 1`;
      }
    }
  }
  return undefined;
}

/**
 * Minutes a `cron(…)` gap can grow by once a year in a zone with daylight saving: on the night the
 * clocks go back a local hour repeats, and Scheduler fires its times once (a reviewer's Berlin
 * schedule went 495 minutes without a run against a 465-minute window). `rate(…)` counts real
 * time: none.
 */
function daylightSavingSlack(expression: string, timeZone: string): number {
  if (rateMinutes(expression) !== undefined) return 0;
  const offset = (at: number) =>
    new Intl.DateTimeFormat('en-US', { timeZone, timeZoneName: 'longOffset' })
      .formatToParts(at)
      .find((part) => part.type === 'timeZoneName')?.value;
  return offset(Date.UTC(2028, 0, 15)) === offset(Date.UTC(2028, 6, 15)) ? 0 : 60;
}

/**
 * The no-run alarm's window: a whole longest gap between runs (a cron that pauses at night must
 * not page nightly), and `intervals` - 1 intervals more for a run that is missed; for an even
 * schedule that is `intervals` intervals, as before.
 */
export function noRunWindowMinutes(interval: number, longest: number, intervals: number): number {
  return longest + (intervals - 1) * interval;
}

/**
 * Counted reading's default recheck period: three schedule intervals, and at least 10 minutes.
 * Rechecking re-reads the pages where the freshest late articles land; doing it on every run or
 * every other run reads them two or three times as often for little gain (bench/RESULTS.md,
 * section 6), and a recheck every 10 minutes or more keeps late articles within 10–15 minutes.
 */
export function defaultRecheckMinutes(intervalMinutes: number): number {
  return Math.max(10, 3 * intervalMinutes);
}

/** Every option the stack reads, in documentation order. */
export const stackOptions: readonly string[] = Object.keys(StackConfigSchema.shape);

/**
 * Validates the context values (only the keys in `stackOptions` are read; CDK's own keys are
 * ignored) and derives the rest.
 *
 * @throws StackConfigError naming every bad context key and what to fix
 */
export function parseStackConfig(context: Readonly<Record<string, unknown>>): StackConfig {
  const input: Record<string, unknown> = {};
  for (const key of stackOptions) {
    if (context[key] !== undefined) input[key] = context[key];
  }
  const result = StackConfigSchema.safeParse(input);
  if (!result.success) {
    throw new StackConfigError(
      `invalid news-alerts configuration (cdk.json "context", or -c key=value): ${describeIssues(result.error)}`,
      { cause: result.error },
    );
  }
  const config = result.data;
  const gaps = scheduleGaps(config.scheduleExpression);
  const intervalMinutes = config.scheduleIntervalMinutes ?? gaps?.shortest ?? 5;
  const longestGapMinutes =
    Math.max(gaps?.longest ?? intervalMinutes, intervalMinutes) +
    daylightSavingSlack(config.scheduleExpression, config.scheduleTimeZone);
  return {
    ...config,
    intervalMinutes,
    noRunWindowMinutes: noRunWindowMinutes(intervalMinutes, longestGapMinutes, config.noSuccessfulRunIntervals),
    recheckMinutes: config.lateRecheckMinutes ?? defaultRecheckMinutes(intervalMinutes),
    leaseSeconds: config.timeoutSeconds + 60,
    usesPlaceholderBaseUrl: config.newsApiBaseUrl === PLACEHOLDER_BASE_URL,
    email:
      config.emailDomain === null
        ? undefined
        : {
            domain: config.emailDomain,
            // The domain in lower case, as the delivery function sends it (normalizeAddress): the
            // send permission's ses:FromAddress condition compares case by case.
            fromAddress:
              config.emailFromAddress === null
                ? `alerts@${config.emailDomain}`
                : config.emailFromAddress.replace(/@[^@]*$/, (domain) => domain.toLowerCase()),
          },
  };
}

/**
 * Context keys that look like a misspelt option (`publishmode`, `emailDomian`), each with the
 * option it is close to. Such a key would be ignored without a word, and the stack deployed
 * without the setting (no sharded publishing, no SES email). Keys far from every option (CDK's
 * own, another tool's) are not this stack's to judge.
 */
export function misspeltOptions(keys: Iterable<string>): { readonly key: string; readonly meant: string }[] {
  const found: { key: string; meant: string }[] = [];
  for (const key of keys) {
    if (stackOptions.includes(key) || key.startsWith('@') || key.includes(':')) continue;
    const folded = key.toLowerCase();
    // One edit per three characters, at most two, as for ids (cli/unknown-ids.ts).
    const allowed = Math.min(2, Math.floor(key.length / 3));
    let best: { option: string; distance: number } | undefined;
    for (const option of stackOptions) {
      const distance = editDistance(option.toLowerCase(), folded);
      if (distance <= allowed && (best === undefined || distance < best.distance)) best = { option, distance };
    }
    if (best !== undefined) found.push({ key, meant: best.option });
  }
  return found;
}

/**
 * Reads the stack configuration from a construct's context (the app's, in practice); `keys`, all
 * the context's keys, are checked for misspelt options ({@link misspeltOptions}).
 * @throws StackConfigError for a misspelt option or a bad value
 */
export function stackConfigFromContext(
  tryGetContext: (key: string) => unknown,
  keys: Iterable<string> = [],
): StackConfig {
  const misspelt = misspeltOptions(keys);
  if (misspelt.length > 0) {
    throw new StackConfigError(
      `invalid news-alerts configuration (cdk.json "context", or -c key=value): ${misspelt
        .map(({ key, meant }) => `"${key}" is not a setting: did you mean "${meant}"? (it would be ignored)`)
        .join('; ')}`,
    );
  }
  const context: Record<string, unknown> = {};
  for (const key of stackOptions) context[key] = tryGetContext(key);
  return parseStackConfig(context);
}
