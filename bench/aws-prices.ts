/**
 * Public on-demand prices the cost model (bench/cost-model.ts) multiplies by, for us-east-1 (US
 * East, N. Virginia). Every entry names the page it came from, the day it was read, the date the
 * page itself states (when it states one) and whether the figure was actually seen there.
 *
 * How these were read: this machine has no internet. Each price was looked up on 2026-11-23 in
 * stored copies of public pages (AWS's own pricing pages where the store had them, otherwise
 * dated third-party write-ups of those pages). `status` says which:
 *
 * - `verified`: the figure appears on an AWS page.
 * - `third-party`: the figure appears on a dated third-party page that quotes the AWS page.
 * - `assumed`: no stored page showed the figure; it is the last published price known to the
 *   author, with the reason in `note`. Check these first when the bill matters.
 *
 * Region variance: most of these prices are the same in the other large US regions and 5–25%
 * higher elsewhere (one third-party CloudWatch write-up puts other regions 10–25% higher); SMS is
 * priced by destination country, not by the sending region. Prices change: re-read the pages
 * before quoting a figure to anyone.
 */

/** How far a price can be trusted; see the module header. */
export type PriceStatus = 'verified' | 'third-party' | 'assumed';

/** One public price. */
export interface AwsPrice {
  readonly service: string;
  /** What is billed. */
  readonly what: string;
  /** US dollars per one `unit`. */
  readonly usdPerUnit: number;
  /** The billing unit, singular: `GB-second`, `request`, `write request unit`, … */
  readonly unit: string;
  /** The same, plural, for quantities other than one. */
  readonly units: string;
  /** The always-free allowance per month in `unit`s (0: none). Applied only on the free-tier line. */
  readonly freePerMonth: number;
  /** Where the figure was looked up. */
  readonly source: string;
  /** The day it was looked up (ISO date). */
  readonly readOn: string;
  /** The date the page states for itself, if it states one. */
  readonly pageDate?: string;
  readonly status: PriceStatus;
  readonly note: string;
}

/** The day every price below was looked up. */
export const PRICES_READ_ON = '2026-11-23';

const read = PRICES_READ_ON;

/**
 * The price table. Keys are what the cost model refers to; a price the model uses is always here,
 * so a row can never be priced from nowhere.
 */
export const awsPrices = {
  lambdaArmGbSecond: {
    service: 'Lambda',
    what: 'duration, Arm (Graviton), first 7.5 billion GB-seconds a month',
    usdPerUnit: 0.0000133334,
    unit: 'GB-second',
    units: 'GB-seconds',
    freePerMonth: 400_000,
    source: 'https://cloudchipr.com/blog/aws-lambda-pricing (quotes https://aws.amazon.com/lambda/pricing/)',
    readOn: read,
    status: 'third-party',
    note: 'The AWS page in the store confirms the model (memory × duration, 1 ms rounding, init code billed, US East examples) but its price table is script-rendered; the Arm figure is the third-party copy. Free tier (400,000 GB-s, shared by x86 and Arm) from the same pages.',
  },
  lambdaRequest: {
    service: 'Lambda',
    what: 'invocation requests',
    usdPerUnit: 0.2 / 1_000_000,
    unit: 'request',
    units: 'requests',
    freePerMonth: 1_000_000,
    source: 'https://aws.amazon.com/lambda/pricing/',
    readOn: read,
    status: 'assumed',
    note: '$0.20 per million requests has been the published rate since launch; the stored copies show the free 1 million requests a month (kodekloud, cloudchipr) but not the paid rate itself.',
  },
  dynamoWriteRequestUnit: {
    service: 'DynamoDB',
    what: 'on-demand write request unit (1 KB written; 2 per KB inside a transaction)',
    usdPerUnit: 0.625 / 1_000_000,
    unit: 'write request unit',
    units: 'write request units',
    freePerMonth: 0,
    source: 'https://airbyte.com/data-engineering-resources/dynamodb-pricing',
    readOn: read,
    pageDate: '2025-07-21',
    status: 'third-party',
    note: 'After the 50% cut to on-demand throughput effective 2024-11-01 (also https://www.jusdb.com/blog/dynamodb-cost-optimization-a-comprehensive-guide-by-jusdb, 2025-08-19). Pages written before that date quote $1.25: do not mix them.',
  },
  dynamoReadRequestUnit: {
    service: 'DynamoDB',
    what: 'on-demand read request unit (4 KB strongly consistent, or 8 KB eventually consistent)',
    usdPerUnit: 0.125 / 1_000_000,
    unit: 'read request unit',
    units: 'read request units',
    freePerMonth: 0,
    source: 'https://airbyte.com/data-engineering-resources/dynamodb-pricing',
    readOn: read,
    pageDate: '2025-07-21',
    status: 'third-party',
    note: 'After the 2024-11-01 on-demand cut (was $0.25).',
  },
  dynamoStorage: {
    service: 'DynamoDB',
    what: 'table storage (Standard table class), items plus 100 bytes of overhead each',
    usdPerUnit: 0.25,
    unit: 'GB-month',
    units: 'GB-months',
    freePerMonth: 25,
    source: 'https://aws.amazon.com/dynamodb/pricing/on-demand/',
    readOn: read,
    status: 'assumed',
    note: 'Not in the stored copies; $0.25/GB-month with the first 25 GB free is the long-standing us-east-1 rate.',
  },
  dynamoPitr: {
    service: 'DynamoDB',
    what: 'point-in-time recovery (continuous backups), by table size',
    usdPerUnit: 0.2,
    unit: 'GB-month',
    units: 'GB-months',
    freePerMonth: 0,
    source: 'https://aws.amazon.com/dynamodb/pricing/on-demand/',
    readOn: read,
    status: 'assumed',
    note: 'All three tables have PITR on (lib/constructs/state-tables.ts). Not in the stored copies; $0.20/GB-month is the long-standing us-east-1 rate.',
  },
  snsPublishRequest: {
    service: 'SNS',
    what: 'standard-topic publish request, per 64 KB chunk of payload',
    usdPerUnit: 0.5 / 1_000_000,
    unit: 'request (64 KB chunk)',
    units: 'requests (64 KB chunks)',
    freePerMonth: 1_000_000,
    source: 'https://www.factualminds.com/blog/amazon-sns-pricing-publishes-fanout-protocols/',
    readOn: read,
    pageDate: '2026-06-13',
    status: 'third-party',
    note: 'The 64 KB chunk rule and the free million are from the AWS pricing page as commonly quoted (assumed: not in the stored excerpts). How a PublishBatch call is billed is inferred from https://docs.aws.amazon.com/sns/latest/dg/sns-batch-api-actions.html, which says batching cuts cost "by a factor of up to 10": a batch is billed by its aggregate payload in 64 KB chunks, not one request per message.',
  },
  snsEmailDelivery: {
    service: 'SNS',
    what: 'email / email-json notification delivered',
    usdPerUnit: 2 / 100_000,
    unit: 'email',
    units: 'emails',
    freePerMonth: 1_000,
    source: 'https://www.factualminds.com/blog/amazon-sns-pricing-publishes-fanout-protocols/',
    readOn: read,
    pageDate: '2026-06-13',
    status: 'third-party',
    note: '$2.00 per 100,000. Free 1,000 a month (assumed, AWS free-tier page not in the store).',
  },
  sesOutboundEmail: {
    service: 'SES',
    what: 'outbound email (per message to one recipient)',
    usdPerUnit: 0.1 / 1_000,
    unit: 'email',
    units: 'emails',
    freePerMonth: 0,
    source: 'https://aws.amazon.com/ses/pricing/',
    readOn: read,
    status: 'assumed',
    note: '$0.10 per 1,000 emails, as /work/shared/aws-and-api-facts.md records from https://docs.aws.amazon.com/ses/latest/dg/request-production-access.html; the pricing page was not in the store. The free tier (3,000 a month for 12 months) is left out: it is not always-free.',
  },
  sqsRequest: {
    service: 'SQS',
    what: 'standard queue request (per 64 KB chunk)',
    usdPerUnit: 0.4 / 1_000_000,
    unit: 'request',
    units: 'requests',
    freePerMonth: 1_000_000,
    source: 'https://aws.amazon.com/sqs/pricing/',
    readOn: read,
    status: 'assumed',
    note: '$0.40 per million standard requests after the free million a month, the published rate known; the page was not in the store. Only the SES email comparison uses it (the queues the stack has otherwise are dead-letter queues that stay empty).',
  },
  snsHttpsDelivery: {
    service: 'SNS',
    what: 'HTTP/S notification delivered',
    usdPerUnit: 0.6 / 1_000_000,
    unit: 'delivery',
    units: 'deliveries',
    freePerMonth: 100_000,
    source: 'https://www.factualminds.com/blog/amazon-sns-pricing-publishes-fanout-protocols/',
    readOn: read,
    pageDate: '2026-06-13',
    status: 'third-party',
    note: 'Free 100,000 a month (assumed, AWS free-tier page not in the store).',
  },
  snsSqsDelivery: {
    service: 'SNS',
    what: 'notification delivered to an SQS queue',
    usdPerUnit: 0,
    unit: 'delivery',
    units: 'deliveries',
    freePerMonth: 0,
    source: 'https://aws.amazon.com/sns/pricing/',
    readOn: read,
    status: 'assumed',
    note: 'SNS does not charge for deliveries to SQS (the AWS page was not in the store). The subscriber pays for its own SQS requests, outside this stack.',
  },
  snsLambdaDelivery: {
    service: 'SNS',
    what: 'notification delivered to a Lambda function (the Slack relay)',
    usdPerUnit: 0,
    unit: 'delivery',
    units: 'deliveries',
    freePerMonth: 0,
    source: 'https://aws.amazon.com/sns/pricing/',
    readOn: read,
    status: 'assumed',
    note: 'SNS does not charge for deliveries to Lambda (the AWS page was not in the store); the relay invocations themselves are priced as Lambda.',
  },
  smsUnitedStates: {
    service: 'SMS (End User Messaging)',
    what: 'outbound SMS segment to the US, 10DLC or toll-free: base price plus carrier fee',
    usdPerUnit: 0.00581 + 0.0025,
    unit: 'SMS segment',
    units: 'SMS segments',
    freePerMonth: 0,
    source: 'https://aws.amazon.com/end-user-messaging/pricing/',
    readOn: read,
    status: 'assumed',
    note: 'Per-country prices were not in the store. Structure verified at https://www.repost.aws/knowledge-center/sns-pinpoint-high-sms-charges: price = (carrier fee + message price) × message parts. $0.00581 base plus ~$0.0025 average carrier pass-through (carriers differ) is the last published US rate known; 10DLC and toll-free numbers also carry registration and monthly fees not counted here.',
  },
  smsSouthKorea: {
    service: 'SMS (End User Messaging)',
    what: 'outbound SMS segment to South Korea (the provider is a Korean news service)',
    usdPerUnit: 0.0279,
    unit: 'SMS segment',
    units: 'SMS segments',
    freePerMonth: 0,
    source: 'https://aws.amazon.com/end-user-messaging/pricing/',
    readOn: read,
    status: 'assumed',
    note: 'Not in the store. ~$0.028 per message is the order of magnitude of the older SNS per-country table for KR, about 3× the US rate; treat it as an example of a non-US destination, not a quote.',
  },
  secretsManagerSecret: {
    service: 'Secrets Manager',
    what: 'secret stored',
    usdPerUnit: 0.4,
    unit: 'secret-month',
    units: 'secret-months',
    freePerMonth: 0,
    source: 'https://hivebook.wiki/wiki/aws-secrets-manager-rotated-secrets-dynamic-db-credentials-kms',
    readOn: read,
    status: 'third-party',
    note: 'Only a 30-day trial is free, so no always-free allowance.',
  },
  secretsManagerApiCall: {
    service: 'Secrets Manager',
    what: 'API call (GetSecretValue)',
    usdPerUnit: 0.05 / 10_000,
    unit: 'API call',
    units: 'API calls',
    freePerMonth: 0,
    source: 'https://hivebook.wiki/wiki/aws-secrets-manager-rotated-secrets-dynamic-db-credentials-kms',
    readOn: read,
    status: 'third-party',
    note: '$0.05 per 10,000 calls.',
  },
  cloudWatchLogIngestion: {
    service: 'CloudWatch',
    what: 'Logs ingestion, Standard log class (EMF metrics arrive this way too)',
    usdPerUnit: 0.5,
    unit: 'GB',
    units: 'GB',
    freePerMonth: 5,
    source: 'https://www.factualminds.com/blog/amazon-cloudwatch-pricing-metrics-logs-alarms-dashboards/',
    readOn: read,
    pageDate: '2026-06-13',
    status: 'third-party',
    note: 'Free 5 GB (ingestion, storage and Insights scans together) verified at https://aws.amazon.com/cloudwatch/pricing/; applied to ingestion only here.',
  },
  cloudWatchLogStorage: {
    service: 'CloudWatch',
    what: 'Logs storage (archived, compressed)',
    usdPerUnit: 0.03,
    unit: 'GB-month',
    units: 'GB-months',
    freePerMonth: 0,
    source: 'https://aws.amazon.com/cloudwatch/pricing/',
    readOn: read,
    status: 'assumed',
    note: 'The rate is script-rendered on the stored AWS page; $0.03 per GB-month of compressed data is the long-standing us-east-1 rate.',
  },
  cloudWatchCustomMetric: {
    service: 'CloudWatch',
    what: 'custom metric (name × dimension set), first 10,000',
    usdPerUnit: 0.3,
    unit: 'metric-month',
    units: 'metric-months',
    freePerMonth: 10,
    source: 'https://signoz.io/guides/cloudwatch-pricing',
    readOn: read,
    pageDate: '2026-02-15',
    status: 'third-party',
    note: 'Prorated by the hour a metric is sent; the model bills every metric for the whole month (upper bound). Free 10 metrics verified at https://aws.amazon.com/cloudwatch/pricing/.',
  },
  cloudWatchAlarm: {
    service: 'CloudWatch',
    what: 'standard-resolution alarm metric',
    usdPerUnit: 0.1,
    unit: 'alarm-month',
    units: 'alarm-months',
    freePerMonth: 10,
    source: 'https://002-workshop-application-performance-monitoring.huyanh.click/5-optimization',
    readOn: read,
    status: 'third-party',
    note: 'A workshop page quoting $0.10 per alarm-month; the AWS page (stored) shows the free 10 alarm metrics but not the rate. Treat as assumed-but-corroborated.',
  },
  cloudWatchDashboard: {
    service: 'CloudWatch',
    what: 'custom dashboard',
    usdPerUnit: 3,
    unit: 'dashboard-month',
    units: 'dashboard-months',
    freePerMonth: 3,
    source: 'https://www.factualminds.com/blog/amazon-cloudwatch-pricing-metrics-logs-alarms-dashboards/',
    readOn: read,
    pageDate: '2026-06-13',
    status: 'third-party',
    note: 'Free 3 dashboards of up to 50 metrics each (https://aws.amazon.com/cloudwatch/pricing/); the stack dashboard shows 2 metrics per declared audience, so past ~20 audiences it is billed.',
  },
  kmsKey: {
    service: 'KMS',
    what: 'customer managed key, first year (each yearly rotation adds $1 for the first two rotations)',
    usdPerUnit: 1,
    unit: 'key-month',
    units: 'key-months',
    freePerMonth: 0,
    source: 'https://aws.amazon.com/kms/pricing/',
    readOn: read,
    status: 'verified',
    note: 'Both stack keys rotate yearly: $2/key-month in year two, $3 from year three (cap from the May 2024 rotation pricing change, https://cloudburn.io/blog/aws-kms-pricing). AWS managed keys (aws/dynamodb, aws/secretsmanager) cost nothing to keep.',
  },
  kmsRequest: {
    service: 'KMS',
    what: 'symmetric key API request (also to AWS managed keys)',
    usdPerUnit: 0.03 / 10_000,
    unit: 'request',
    units: 'requests',
    freePerMonth: 20_000,
    source: 'https://www.wring.co/blog/aws-kms-pricing-guide',
    readOn: read,
    pageDate: '2026-03-15',
    status: 'third-party',
    note: 'That requests to AWS managed keys are charged and the free 20,000 a month are verified at https://aws.amazon.com/kms/pricing/ (fr).',
  },
  xrayTraceRecorded: {
    service: 'X-Ray',
    what: 'trace recorded (both functions use active tracing)',
    usdPerUnit: 5 / 1_000_000,
    unit: 'trace',
    units: 'traces',
    freePerMonth: 100_000,
    source: 'https://aws.amazon.com/de/xray/pricing/',
    readOn: read,
    status: 'verified',
    note: '$5.00 per million after the free 100,000 a month.',
  },
  schedulerInvocation: {
    service: 'EventBridge Scheduler',
    what: 'scheduled invocation',
    usdPerUnit: 1 / 1_000_000,
    unit: 'invocation',
    units: 'invocations',
    freePerMonth: 14_000_000,
    source: 'https://aws.amazon.com/eventbridge/pricing/',
    readOn: read,
    status: 'assumed',
    note: 'Not in the stored copies; $1.00 per million after 14 million free a month is the published rate known.',
  },
} as const satisfies Record<string, AwsPrice>;

/** The name of a price in {@link awsPrices}. */
export type PriceId = keyof typeof awsPrices;

/** A price table with the same entries as {@link awsPrices} (tests and what-ifs pass their own). */
export type PriceTable = Readonly<Record<PriceId, AwsPrice>>;
