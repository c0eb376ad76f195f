/**
 * What news-alerts costs to run on AWS per month: a pure function from per-day and per-run counts
 * (what the benchmarks measure, or what the code implies where they measure nothing) and a price
 * table (bench/aws-prices.ts) to one priced row per billed dimension, plus a Markdown renderer.
 *
 * The model owns three rules a reader must be able to rely on:
 *
 * - Every row is priced from exactly one entry of the price table, and every figure that drives
 *   a row carries its basis (measured, from code, assumed): a row is only as firm as its softest
 *   driving input.
 * - The total is the sum of the AWS rows and nothing else. SMS is priced apart (its price depends on
 *   the destination country and, when used, it dwarfs everything else); the always-free tier is a
 *   separate credit line, never folded into the rows.
 * - Quantities are linear in their drivers: twice the notifications is twice every
 *   per-notification row. Nothing is rounded before it is priced, except where AWS rounds (64 KB
 *   chunks per SNS publish request, whole request units per item).
 *
 * What it leaves out (data transfer, the provider's fees, SQS consumers, …) is listed in
 * docs/cost.md, which bench/cost-model-cli.ts writes with {@link renderCostMarkdown}.
 */
import type { AwsPrice, PriceId, PriceTable } from './aws-prices.ts';

/**
 * Where a figure came from: a benchmark run, the code and the stack's defaults (lib/, functions/),
 * or an assumption about the workload or AWS's behaviour. Ordered from firm to soft.
 */
export type Basis = 'measured' | 'code' | 'assumed';

const BASIS_ORDER: readonly Basis[] = ['measured', 'code', 'assumed'];

/** The softest of several bases: a row is only as firm as its softest input. */
export const weakestBasis = (bases: readonly Basis[]): Basis =>
  bases.reduce<Basis>(
    (weakest, basis) => (BASIS_ORDER.indexOf(basis) > BASIS_ORDER.indexOf(weakest) ? basis : weakest),
    'measured',
  );

/** A number with where it came from. */
export interface Sourced {
  readonly value: number;
  readonly basis: Basis;
  /** How it was measured or why it was assumed, short enough for a table cell. */
  readonly note: string;
}

export const measured = (value: number, note: string): Sourced => ({ value, basis: 'measured', note });
export const assumed = (value: number, note: string): Sourced => ({ value, basis: 'assumed', note });
export const fromCode = (value: number, note: string): Sourced => ({ value, basis: 'code', note });

/** How the alert run reads the provider: every run re-reads the whole provider day, or only what is new. */
export type Reading = 'today' | 'incremental';

/** Subscriptions an average audience topic has, by protocol; each receives every notification of the audience. */
export interface SubscribersPerAudience {
  readonly email: Sourced;
  readonly https: Sourced;
  readonly sqs: Sourced;
  /** The Slack relay (SNS → Lambda). */
  readonly lambda: Sourced;
  /** Phone numbers; priced apart (see {@link ScenarioCost.sms}). */
  readonly sms: Sourced;
}

/**
 * One workload on the default schedule: its size, how it reads the provider, and every count the
 * bill depends on. Per-day counts are averages over a whole day (a month is 365/12 of them).
 */
export interface CostScenario {
  readonly articlesPerDay: number;
  readonly audiences: number;
  readonly reading: Reading;
  /** Alert runs a day (288 on `rate(5 minutes)`). */
  readonly runsPerDay: Sourced;
  readonly alertRun: {
    /** Billed duration of an average run, init share included (ms). */
    readonly avgDurationMs: Sourced;
    readonly memoryMb: Sourced;
    /** Bytes the run writes to its log group: platform lines, the run summary, the EMF blob. */
    readonly logBytesPerRun: Sourced;
  };
  /** What the runs of a day read from the provider; informational (the provider's own fees are not priced). */
  readonly provider: {
    readonly pagesPerDay: Sourced;
    readonly articlesReadPerDay: Sourced;
  };
  /** Notifications published a day (article × audience pairs). */
  readonly notificationsPerDay: Sourced;
  readonly ledger: {
    /** BatchGetItem keys per published notification: each run re-matching an article looks it up again. */
    readonly lookupsPerNotification: Sourced;
    /** Ledger items written per published notification. */
    readonly writesPerNotification: Sourced;
    /** Read units one key costs (strongly consistent, under 4 KB: 1). */
    readonly readUnitsPerLookup: Sourced;
    /** Write units one ledger item costs (under 1 KB: 1). */
    readonly writeUnitsPerWrite: Sourced;
    /** Stored size of one ledger item, without DynamoDB's 100-byte per-item overhead (bytes). */
    readonly itemBytes: Sourced;
    readonly retentionDays: Sourced;
  };
  /** DynamoDB units of one run outside the ledger: lease, watermark, rules and audiences scans, run history. */
  readonly dynamoPerRun: {
    readonly readUnits: Sourced;
    readonly writeUnits: Sourced;
  };
  /** Steady-state bytes of the state table besides the ledger (run history, relay memory, holds). */
  readonly otherStateBytes: Sourced;
  readonly sns: {
    /** Average messages per PublishBatch call (at most 10; partial batches per topic lower it). */
    readonly messagesPerPublishCall: Sourced;
    /** Average size of one published message, every protocol's body included (bytes). */
    readonly messageBytes: Sourced;
    readonly subscribersPerAudience: SubscribersPerAudience;
  };
  readonly sms: {
    readonly segmentsPerMessage: Sourced;
  };
  readonly slackRelay: {
    readonly avgDurationMs: Sourced;
    readonly memoryMb: Sourced;
    /** Powertools idempotency: an in-progress put and a completion update per post. */
    readonly dynamoWriteUnitsPerPost: Sourced;
    readonly logBytesPerInvocation: Sourced;
  };
  readonly secrets: {
    /** The provider API key plus the webhook and endpoint stores' shards in use. */
    readonly count: Sourced;
    readonly getSecretValuePerDay: Sourced;
  };
  readonly cloudWatch: {
    /** Distinct metric name × dimension sets the functions emit through EMF. */
    readonly customMetrics: Sourced;
    readonly alarms: Sourced;
    readonly dashboards: Sourced;
    readonly logRetentionDays: Sourced;
    /** Stored (compressed) bytes per ingested byte. */
    readonly logCompressionRatio: Sourced;
  };
  readonly kms: {
    readonly customerManagedKeys: Sourced;
    /** Requests SNS makes on the topic key per PublishBatch call. */
    readonly requestsPerPublishCall: Sourced;
    /** Everything else: DynamoDB and Secrets Manager on their AWS managed keys. */
    readonly otherRequestsPerDay: Sourced;
  };
  readonly xray: {
    readonly tracesPerDay: Sourced;
  };
  /**
   * SES email (`emailDomain`): what the email queue and function cost per notification, for the
   * comparison with SNS email ({@link EmailCost}). Optional: inputs written before SES email price
   * the comparison with {@link DEFAULT_SES_EMAIL}.
   */
  readonly sesEmail?: SesEmailInputs | undefined;
}

/** The email queue and function per notification (lib/constructs/email-channel.ts). */
export interface SesEmailInputs {
  /** SQS requests per notification: SNS's SendMessage, and the event source's batched receive and delete. */
  readonly sqsRequestsPerNotification: Sourced;
  /** The event source's empty long polls while the queue is idle. */
  readonly idleSqsRequestsPerDay: Sourced;
  /** Notifications per email function invocation (the event source's batch size). */
  readonly notificationsPerInvocation: Sourced;
  /** Billed ms per email sent (claim, render, MIME, SendEmail, record). */
  readonly msPerEmail: Sourced;
  readonly memoryMb: Sourced;
}

/** The email queue and function as the stack sets them up, for inputs that do not say. */
export const DEFAULT_SES_EMAIL: SesEmailInputs = {
  sqsRequestsPerNotification: {
    value: 1.2,
    basis: 'code',
    note: "SNS's SendMessage, plus ReceiveMessage and DeleteMessageBatch per batch of 10",
  },
  idleSqsRequestsPerDay: {
    value: 5 * 3 * 60 * 24,
    basis: 'assumed',
    note: "Lambda's 5 pollers, a 20-second long poll each while the queue is empty",
  },
  notificationsPerInvocation: { value: 10, basis: 'code', note: 'SQS event source batch size 10' },
  msPerEmail: { value: 40, basis: 'assumed', note: 'two DynamoDB writes, rendering and one SES call per email' },
  memoryMb: { value: 512, basis: 'code', note: 'email function memorySize' },
};

/**
 * Email to the audiences' email subscribers, priced both ways: SNS email subscriptions (the row of
 * the total) and SES with its queue and function. The total holds SNS email; with `emailDomain`
 * the SES side replaces that row.
 */
export interface EmailCost {
  /** Emails a month: every notification to every email subscriber of its audience. */
  readonly emails: number;
  readonly sns: CostRow;
  readonly ses: readonly CostRow[];
  readonly sesUsd: number;
}

/** What the model prices: where the counts came from, and the workloads. */
export interface CostInputs {
  /** One line: which benchmark run (or fixture) produced these counts. */
  readonly source: string;
  readonly scenarios: readonly CostScenario[];
}

/** One priced line of the bill. */
export interface CostRow {
  readonly service: string;
  readonly item: string;
  /** Per month, in `unit`s of the price. */
  readonly quantity: number;
  readonly priceId: PriceId;
  readonly unit: string;
  readonly units: string;
  readonly usdPerUnit: number;
  readonly usd: number;
  readonly basis: Basis;
  /** True when reading the provider differently changes it (what incremental reading is for). */
  readonly providerBound: boolean;
  /**
   * `fixed`: there whatever is delivered (keys, secrets, alarms, metrics, dashboard, and the runs:
   * reading, matching, per-run state); `delivery`: grows with the notifications and their
   * deliveries (ledger, SNS, the Slack relay).
   */
  readonly part: CostPart;
}

/** Which part of the bill a row is in; see {@link CostRow.part}. */
export type CostPart = 'fixed' | 'delivery';

/** The bill of one scenario. */
export interface ScenarioCost {
  readonly scenario: CostScenario;
  /** AWS rows; SMS is not among them. */
  readonly rows: readonly CostRow[];
  /** The sum of `rows`. */
  readonly totalUsd: number;
  /** The sum of the `fixed` rows: everything but deliveries. */
  readonly fixedUsd: number;
  /** The sum of the `delivery` rows. */
  readonly deliveryUsd: number;
  /** SMS priced for each example destination, as if every phone subscriber were there. */
  readonly sms: readonly CostRow[];
  /** What the always-free tier would take off `totalUsd` if this were the account's only workload (≥ 0). */
  readonly freeTierCreditUsd: number;
  /** Email by SNS and by SES, compared (not part of the total beyond the SNS email row). */
  readonly email: EmailCost;
  readonly provider: { readonly pagesPerMonth: number; readonly articlesReadPerMonth: number };
}

export interface CostTable {
  readonly source: string;
  readonly daysPerMonth: number;
  readonly scenarios: readonly ScenarioCost[];
  readonly prices: PriceTable;
}

/** AWS bills by the month; a month is an average one. */
export const DAYS_PER_MONTH = 365 / 12;
const GIB = 1024 ** 3;
/** SNS and SQS bill each 64 KiB of a request's payload as one request. */
export const PAYLOAD_CHUNK_BYTES = 64 * 1024;

/** Requests SNS or SQS bills for one request of `payloadBytes`: one per 64 KiB begun, at least one. */
export const billedRequests = (payloadBytes: number): number =>
  Math.max(1, Math.ceil(payloadBytes / PAYLOAD_CHUNK_BYTES));
/** DynamoDB adds this to every item's stored size. */
/** What DynamoDB bills per item beside its attributes (index overhead, 100 bytes). */
export const DYNAMO_ITEM_OVERHEAD_BYTES = 100;

/** SMS destinations priced as examples; the price table holds one entry for each. */
export const SMS_EXAMPLES = [
  { priceId: 'smsUnitedStates', destination: 'United States' },
  { priceId: 'smsSouthKorea', destination: 'South Korea' },
] as const satisfies readonly { priceId: PriceId; destination: string }[];

const basisOf = (...inputs: readonly Sourced[]): Basis => weakestBasis(inputs.map((input) => input.basis));

/** Prices every scenario of `inputs` with `prices`. */
export function costModel(inputs: CostInputs, prices: PriceTable): CostTable {
  return {
    source: inputs.source,
    daysPerMonth: DAYS_PER_MONTH,
    scenarios: inputs.scenarios.map((scenario) => priceScenario(scenario, prices)),
    prices,
  };
}

function priceScenario(s: CostScenario, prices: PriceTable): ScenarioCost {
  const month = DAYS_PER_MONTH;
  const rows: CostRow[] = [];
  const row = (
    part: CostPart,
    service: string,
    item: string,
    priceId: PriceId,
    quantity: number,
    drivers: readonly Sourced[],
    providerBound = false,
  ): CostRow => {
    const price: AwsPrice = prices[priceId];
    const priced: CostRow = {
      service,
      item,
      quantity,
      priceId,
      unit: price.unit,
      units: price.units,
      usdPerUnit: price.usdPerUnit,
      usd: quantity * price.usdPerUnit,
      basis: basisOf(...drivers),
      providerBound,
      part,
    };
    return priced;
  };
  const add = (...args: Parameters<typeof row>): void => {
    rows.push(row(...args));
  };

  const runs = s.runsPerDay.value * month;
  const notifications = s.notificationsPerDay.value * month;
  const subs = s.sns.subscribersPerAudience;
  const relayInvocations = notifications * subs.lambda.value;

  // Lambda
  const run = s.alertRun;
  add(
    'fixed',
    'Lambda',
    'alert run: duration',
    'lambdaArmGbSecond',
    runs * (run.avgDurationMs.value / 1000) * (run.memoryMb.value / 1024),
    [s.runsPerDay, run.avgDurationMs, run.memoryMb],
    true,
  );
  add('fixed', 'Lambda', 'alert run: requests', 'lambdaRequest', runs, [s.runsPerDay]);
  const relay = s.slackRelay;
  add(
    'delivery',
    'Lambda',
    'Slack relay: duration',
    'lambdaArmGbSecond',
    relayInvocations * (relay.avgDurationMs.value / 1000) * (relay.memoryMb.value / 1024),
    [s.notificationsPerDay, subs.lambda, relay.avgDurationMs, relay.memoryMb],
  );
  add('delivery', 'Lambda', 'Slack relay: requests', 'lambdaRequest', relayInvocations, [
    s.notificationsPerDay,
    subs.lambda,
  ]);

  // DynamoDB
  const ledger = s.ledger;
  add(
    'delivery',
    'DynamoDB',
    'ledger lookups (BatchGetItem)',
    'dynamoReadRequestUnit',
    notifications * ledger.lookupsPerNotification.value * ledger.readUnitsPerLookup.value,
    [s.notificationsPerDay, ledger.lookupsPerNotification, ledger.readUnitsPerLookup],
    true,
  );
  add(
    'delivery',
    'DynamoDB',
    'ledger writes (BatchWriteItem)',
    'dynamoWriteRequestUnit',
    notifications * ledger.writesPerNotification.value * ledger.writeUnitsPerWrite.value,
    [s.notificationsPerDay, ledger.writesPerNotification, ledger.writeUnitsPerWrite],
  );
  add(
    'fixed',
    'DynamoDB',
    'per-run reads (lease, watermark, rules and audiences scans, holds)',
    'dynamoReadRequestUnit',
    runs * s.dynamoPerRun.readUnits.value,
    [s.runsPerDay, s.dynamoPerRun.readUnits],
  );
  add(
    'fixed',
    'DynamoDB',
    'per-run writes (lease, watermark transaction, run history)',
    'dynamoWriteRequestUnit',
    runs * s.dynamoPerRun.writeUnits.value,
    [s.runsPerDay, s.dynamoPerRun.writeUnits],
  );
  add(
    'delivery',
    'DynamoDB',
    'Slack relay: posted-once records',
    'dynamoWriteRequestUnit',
    relayInvocations * relay.dynamoWriteUnitsPerPost.value,
    [s.notificationsPerDay, subs.lambda, relay.dynamoWriteUnitsPerPost],
  );
  const ledgerBytes =
    s.notificationsPerDay.value *
    ledger.writesPerNotification.value *
    ledger.retentionDays.value *
    (ledger.itemBytes.value + DYNAMO_ITEM_OVERHEAD_BYTES);
  const storageGib = (ledgerBytes + s.otherStateBytes.value) / GIB;
  const storageDrivers = [
    s.notificationsPerDay,
    ledger.writesPerNotification,
    ledger.retentionDays,
    ledger.itemBytes,
    s.otherStateBytes,
  ];
  add(
    'delivery',
    'DynamoDB',
    'storage (ledger with TTL, run history, relay records)',
    'dynamoStorage',
    storageGib,
    storageDrivers,
  );
  add('delivery', 'DynamoDB', 'point-in-time recovery', 'dynamoPitr', storageGib, storageDrivers);

  // SNS
  const publishCalls = notifications / s.sns.messagesPerPublishCall.value;
  const chunksPerCall = billedRequests(s.sns.messagesPerPublishCall.value * s.sns.messageBytes.value);
  add('delivery', 'SNS', 'PublishBatch requests (64 KB chunks)', 'snsPublishRequest', publishCalls * chunksPerCall, [
    s.notificationsPerDay,
    s.sns.messagesPerPublishCall,
    s.sns.messageBytes,
  ]);
  add('delivery', 'SNS', 'email deliveries', 'snsEmailDelivery', notifications * subs.email.value, [
    s.notificationsPerDay,
    subs.email,
  ]);
  add('delivery', 'SNS', 'HTTPS deliveries (webhooks)', 'snsHttpsDelivery', notifications * subs.https.value, [
    s.notificationsPerDay,
    subs.https,
  ]);
  add('delivery', 'SNS', 'SQS deliveries', 'snsSqsDelivery', notifications * subs.sqs.value, [
    s.notificationsPerDay,
    subs.sqs,
  ]);
  add('delivery', 'SNS', 'Lambda deliveries (Slack relay)', 'snsLambdaDelivery', relayInvocations, [
    s.notificationsPerDay,
    subs.lambda,
  ]);

  // Secrets Manager
  add(
    'fixed',
    'Secrets Manager',
    'secrets (API key, Slack webhook and HTTPS endpoint stores)',
    'secretsManagerSecret',
    s.secrets.count.value,
    [s.secrets.count],
  );
  add(
    'fixed',
    'Secrets Manager',
    'GetSecretValue calls (after the caches)',
    'secretsManagerApiCall',
    s.secrets.getSecretValuePerDay.value * month,
    [s.secrets.getSecretValuePerDay],
  );

  // CloudWatch
  const cw = s.cloudWatch;
  // Logs of the runs are fixed; the relay's grow with the posts. Each kind is its own pair of rows.
  const runLogGibPerDay = (s.runsPerDay.value * run.logBytesPerRun.value) / GIB;
  const relayLogGibPerDay = (s.notificationsPerDay.value * subs.lambda.value * relay.logBytesPerInvocation.value) / GIB;
  const runLogDrivers = [s.runsPerDay, run.logBytesPerRun];
  const relayLogDrivers = [s.notificationsPerDay, subs.lambda, relay.logBytesPerInvocation];
  const stored = [cw.logRetentionDays, cw.logCompressionRatio];
  const retained = cw.logRetentionDays.value * cw.logCompressionRatio.value;
  add(
    'fixed',
    'CloudWatch',
    'log ingestion: alert runs (EMF included)',
    'cloudWatchLogIngestion',
    runLogGibPerDay * month,
    runLogDrivers,
  );
  add(
    'delivery',
    'CloudWatch',
    'log ingestion: Slack relay (EMF included)',
    'cloudWatchLogIngestion',
    relayLogGibPerDay * month,
    relayLogDrivers,
  );
  add(
    'fixed',
    'CloudWatch',
    'log storage: alert runs (steady state over the retention)',
    'cloudWatchLogStorage',
    runLogGibPerDay * retained,
    [...runLogDrivers, ...stored],
  );
  add(
    'delivery',
    'CloudWatch',
    'log storage: Slack relay (steady state over the retention)',
    'cloudWatchLogStorage',
    relayLogGibPerDay * retained,
    [...relayLogDrivers, ...stored],
  );
  add('fixed', 'CloudWatch', 'custom metrics (EMF)', 'cloudWatchCustomMetric', cw.customMetrics.value, [
    cw.customMetrics,
  ]);
  add('fixed', 'CloudWatch', 'alarms', 'cloudWatchAlarm', cw.alarms.value, [cw.alarms]);
  add('fixed', 'CloudWatch', 'dashboard', 'cloudWatchDashboard', cw.dashboards.value, [cw.dashboards]);

  // KMS
  add('fixed', 'KMS', 'customer managed keys (topics, ops topic)', 'kmsKey', s.kms.customerManagedKeys.value, [
    s.kms.customerManagedKeys,
  ]);
  add(
    'delivery',
    'KMS',
    'requests: SNS on the topic key',
    'kmsRequest',
    publishCalls * s.kms.requestsPerPublishCall.value,
    [s.notificationsPerDay, s.sns.messagesPerPublishCall, s.kms.requestsPerPublishCall],
  );
  add(
    'fixed',
    'KMS',
    'requests: DynamoDB and Secrets Manager keys',
    'kmsRequest',
    s.kms.otherRequestsPerDay.value * month,
    [s.kms.otherRequestsPerDay],
  );

  // X-Ray: every run is traced (fixed); the relay's traces grow with the posts.
  const runTraces = Math.min(s.runsPerDay.value, s.xray.tracesPerDay.value);
  add('fixed', 'X-Ray', 'traces recorded: alert runs', 'xrayTraceRecorded', runTraces * month, [
    s.runsPerDay,
    s.xray.tracesPerDay,
  ]);
  add(
    'delivery',
    'X-Ray',
    'traces recorded: Slack relay',
    'xrayTraceRecorded',
    (s.xray.tracesPerDay.value - runTraces) * month,
    [s.xray.tracesPerDay],
  );
  add('fixed', 'EventBridge Scheduler', 'scheduled invocations', 'schedulerInvocation', runs, [s.runsPerDay]);

  const smsSegments = notifications * subs.sms.value * s.sms.segmentsPerMessage.value;
  const sms = SMS_EXAMPLES.map(({ priceId, destination }) =>
    row('delivery', 'SMS', `to ${destination}`, priceId, smsSegments, [
      s.notificationsPerDay,
      subs.sms,
      s.sms.segmentsPerMessage,
    ]),
  );

  const e = s.sesEmail ?? DEFAULT_SES_EMAIL;
  const emails = notifications * subs.email.value;
  const invocations = notifications / e.notificationsPerInvocation.value;
  const ses = [
    row('delivery', 'SES', 'emails sent', 'sesOutboundEmail', emails, [s.notificationsPerDay, subs.email]),
    row('delivery', 'SQS', 'email queue requests', 'sqsRequest', notifications * e.sqsRequestsPerNotification.value, [
      s.notificationsPerDay,
      e.sqsRequestsPerNotification,
    ]),
    row('fixed', 'SQS', 'email queue idle polls', 'sqsRequest', e.idleSqsRequestsPerDay.value * month, [
      e.idleSqsRequestsPerDay,
    ]),
    row('delivery', 'Lambda', 'email function requests', 'lambdaRequest', invocations, [
      s.notificationsPerDay,
      e.notificationsPerInvocation,
    ]),
    row(
      'delivery',
      'Lambda',
      'email function duration',
      'lambdaArmGbSecond',
      (emails * e.msPerEmail.value * e.memoryMb.value) / 1024 / 1000,
      [s.notificationsPerDay, subs.email, e.msPerEmail, e.memoryMb],
    ),
  ];
  const snsEmail =
    rows.find((r) => r.priceId === 'snsEmailDelivery') ??
    row('delivery', 'SNS', 'email deliveries', 'snsEmailDelivery', emails, [s.notificationsPerDay, subs.email]);

  return {
    scenario: s,
    rows,
    totalUsd: sum(rows.map((r) => r.usd)),
    fixedUsd: sum(rows.filter((r) => r.part === 'fixed').map((r) => r.usd)),
    deliveryUsd: sum(rows.filter((r) => r.part === 'delivery').map((r) => r.usd)),
    sms,
    freeTierCreditUsd: freeTierCredit(rows, prices),
    email: { emails, sns: snsEmail, ses, sesUsd: sum(ses.map((r) => r.usd)) },
    provider: {
      pagesPerMonth: s.provider.pagesPerDay.value * month,
      articlesReadPerMonth: s.provider.articlesReadPerDay.value * month,
    },
  };
}

/** The always-free allowances, applied per price (Lambda's GB-seconds are one pool for both functions). */
function freeTierCredit(rows: readonly CostRow[], prices: PriceTable): number {
  const byPrice = new Map<PriceId, number>();
  for (const r of rows) byPrice.set(r.priceId, (byPrice.get(r.priceId) ?? 0) + r.quantity);
  let credit = 0;
  for (const [priceId, quantity] of byPrice) {
    const price = prices[priceId];
    credit += Math.min(quantity, price.freePerMonth) * price.usdPerUnit;
  }
  return credit;
}

const sum = (values: readonly number[]): number => values.reduce((total, value) => total + value, 0);

// --- Markdown --------------------------------------------------------------------------------

/**
 * Formats dollars for a table cell: cents, or "< $0.01" for a real but tiny amount (either way: a
 * difference a few hundredths of a cent below zero is "> −$0.01", not "$-0.00").
 */
export function formatUsd(usd: number): string {
  if (usd === 0) return '$0.00';
  if (usd > 0 && usd < 0.005) return '< $0.01';
  if (usd < 0 && usd > -0.005) return '> −$0.01';
  const cents = Math.abs(usd).toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 });
  return usd < 0 ? `−$${cents}` : `$${cents}`;
}

/** Three significant digits with thousands separators; small fractions keep their digits. */
export function formatQuantity(value: number): string {
  if (value === 0) return '0';
  if (Math.abs(value) >= 1000) return Math.round(value).toLocaleString('en-US');
  return value.toLocaleString('en-US', { maximumSignificantDigits: 3 });
}

/** A unit price per million, thousand or one unit, whichever reads best. */
function formatUnitPrice(row: Pick<CostRow, 'usdPerUnit' | 'unit' | 'units'>): string {
  const { usdPerUnit, unit, units } = row;
  if (usdPerUnit === 0) return `free (per ${unit})`;
  if (usdPerUnit < 0.0001) return `$${round(usdPerUnit * 1_000_000)} per million ${units}`;
  if (usdPerUnit < 0.01) return `$${round(usdPerUnit * 1000)} per 1,000 ${units}`;
  return `$${round(usdPerUnit)} per ${unit}`;
}

/** A quantity with its unit, singular only for exactly one. */
const withUnit = (quantity: number, row: Pick<CostRow, 'unit' | 'units'>): string =>
  `${formatQuantity(quantity)} ${quantity === 1 ? row.unit : row.units}`;

const round = (value: number): string =>
  Number(value.toPrecision(6)).toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 6 });

const sizeKey = (s: CostScenario): string => `${s.articlesPerDay}|${s.audiences}`;

const sizeLabel = (s: CostScenario): string =>
  `${s.articlesPerDay.toLocaleString('en-US')} articles a day × ${s.audiences.toLocaleString('en-US')} audiences`;

/** Scenarios of one size, today's reading and incremental reading side by side (either may be missing). */
interface Pair {
  readonly label: string;
  readonly today: ScenarioCost | undefined;
  readonly incremental: ScenarioCost | undefined;
}

function pairBySize(scenarios: readonly ScenarioCost[]): Pair[] {
  const pairs = new Map<string, { label: string; today?: ScenarioCost; incremental?: ScenarioCost }>();
  for (const cost of scenarios) {
    const key = sizeKey(cost.scenario);
    const pair = pairs.get(key) ?? { label: sizeLabel(cost.scenario) };
    pair[cost.scenario.reading] = cost;
    pairs.set(key, pair);
  }
  return [...pairs.values()].map((pair) => ({
    label: pair.label,
    today: pair.today,
    incremental: pair.incremental,
  }));
}

const cell = (cost: ScenarioCost | undefined, pick: (c: ScenarioCost) => string): string =>
  cost === undefined ? '—' : pick(cost);

/** Options of {@link renderCostMarkdown}: the prose around the tables. */
export interface RenderOptions {
  /** Markdown placed after the summary: how to read the tables, what they leave out. */
  readonly explanation: string;
  /** Markdown placed at the end: the assumptions behind the inputs, one bullet each. */
  readonly assumptions: readonly string[];
  /** What SES email adds to the fixed part (its alarms and secrets), placed under the email table. */
  readonly sesFixed?: string | undefined;
  /**
   * Features whose cost depends on how a deployment uses them (story collapse, spike alerts):
   * one paragraph each, under their own heading, outside the totals.
   */
  readonly pricedApart?: readonly string[] | undefined;
}

/** Renders the whole cost document: summary, one breakdown per size, SMS, prices, assumptions. */
export function renderCostMarkdown(table: CostTable, options: RenderOptions): string {
  const pairs = pairBySize(table.scenarios);
  const out: string[] = [];
  out.push('# What it costs to run');
  out.push('');
  out.push(
    '<!-- Written by `npx tsx bench/cost-model-cli.ts` (bench/cost-model.ts); edit the inputs or the prices, not this file. -->',
  );
  out.push('');
  out.push(
    `Monthly AWS cost in us-east-1 on the default schedule, one month = ${table.daysPerMonth.toFixed(2)} days. Inputs: ${table.source}`,
  );
  out.push('');
  out.push('## Summary');
  out.push('');
  out.push(...renderCostSummary(table));
  out.push('');
  out.push(options.explanation.trim());
  out.push('');

  for (const pair of pairs) {
    out.push(`## ${pair.label}`);
    out.push('');
    out.push(...renderPair(pair));
    out.push('');
  }

  out.push('## SMS, priced apart');
  out.push('');
  out.push(
    'Each phone subscriber of an audience gets every notification of that audience as an SMS, billed per segment by destination country. The rows price the same segments as if every phone were in one country.',
  );
  out.push('');
  out.push('| workload | SMS segments a month | destination | price | $/month | × the AWS total (today) |');
  out.push('| :--- | ---: | :--- | ---: | ---: | ---: |');
  for (const pair of pairs) {
    const cost = pair.today ?? pair.incremental;
    if (cost === undefined) continue;
    for (const sms of cost.sms) {
      const ratio = cost.totalUsd > 0 ? `${(sms.usd / cost.totalUsd).toFixed(1)}×` : '—';
      out.push(
        `| ${pair.label} | ${formatQuantity(sms.quantity)} | ${sms.item.replace(/^to /, '')} | ${formatUnitPrice(sms)} | ${formatUsd(sms.usd)} | ${ratio} |`,
      );
    }
  }
  out.push('');

  out.push('## Email: SES or SNS email');
  out.push('');
  out.push(
    'Every notification goes to every email subscriber of its audience. The totals above price them as SNS email subscriptions ($2.00 per 100,000); with `emailDomain` set they go through SES instead ($0.10 per 1,000), with the email queue and function around it ([email](email.md)), and the SNS email row goes away. Per message SES costs five times as much; what it buys is mail from your own domain that inboxes accept, one-click unsubscribe, a preference page, and bounce and complaint handling ([SES email or SNS email](email.md#ses-email-or-sns-email)).',
  );
  out.push('');
  out.push(
    '| workload | emails a month | SNS email $/month | SES $/month | of which SES emails | email queue and function | SES ÷ SNS email |',
  );
  out.push('| :--- | ---: | ---: | ---: | ---: | ---: | ---: |');
  for (const pair of pairs) {
    const cost = pair.today ?? pair.incremental;
    if (cost === undefined) continue;
    const { email } = cost;
    const sending = email.ses.find((r) => r.priceId === 'sesOutboundEmail')?.usd ?? 0;
    const ratio = email.sns.usd > 0 ? `${(email.sesUsd / email.sns.usd).toFixed(2)}×` : '—';
    out.push(
      `| ${pair.label} | ${formatQuantity(email.emails)} | ${formatUsd(email.sns.usd)} | ${formatUsd(email.sesUsd)} | ${formatUsd(sending)} | ${formatUsd(email.sesUsd - sending)} | ${ratio} |`,
    );
  }
  out.push('');
  out.push(
    'The SES side leaves out what is small next to SES itself: the subscribers table (about 9 write units per email for the claim transaction, its completion and the SES events; at $0.625 per million that is about 5% of the SES sending price), the events function (one invocation per SES event), the preference endpoint (API Gateway HTTP API, $1.00 per million requests), and the SES events topic (encrypted SNS: a publish and a KMS request per SES event, under a tenth of the SES sending price). SES bills received mail for `mailto:` unsubscribes at $0.10 per 1,000 too.',
  );
  out.push('');
  if (options.sesFixed !== undefined) {
    out.push(options.sesFixed);
    out.push('');
  }
  if (options.pricedApart !== undefined && options.pricedApart.length > 0) {
    out.push('## Features priced apart');
    out.push('');
    for (const paragraph of options.pricedApart) out.push(paragraph, '');
  }

  out.push('## Prices');
  out.push('');
  out.push('| price | service | what | rate | free a month | status | source | read on | page dated |');
  out.push('| :--- | :--- | :--- | ---: | ---: | :--- | :--- | :--- | :--- |');
  for (const [id, price] of Object.entries(table.prices) as [PriceId, AwsPrice][]) {
    out.push(
      `| \`${id}\` | ${price.service} | ${price.what} | ${formatUnitPrice(price)} | ${price.freePerMonth === 0 ? '—' : withUnit(price.freePerMonth, price)} | ${price.status} | ${price.source} | ${price.readOn} | ${price.pageDate ?? '—'} |`,
    );
  }
  out.push('');
  out.push('Notes on the prices:');
  out.push('');
  for (const [id, price] of Object.entries(table.prices) as [PriceId, AwsPrice][]) {
    out.push(`- \`${id}\`: ${price.note}`);
  }
  out.push('');

  out.push('## Inputs');
  out.push('');
  out.push(...renderInputs(table.scenarios));
  out.push('');
  out.push('## Assumptions behind the inputs');
  out.push('');
  for (const line of options.assumptions) out.push(`- ${line}`);
  out.push('');
  return out.join('\n');
}

const isSourced = (value: unknown): value is Sourced =>
  typeof value === 'object' &&
  value !== null &&
  typeof (value as Sourced).value === 'number' &&
  typeof (value as Sourced).basis === 'string';

/** Every {@link Sourced} figure of a scenario with its dotted path, in declaration order. */
export function sourcedInputs(scenario: CostScenario): { path: string; input: Sourced }[] {
  const found: { path: string; input: Sourced }[] = [];
  const walk = (value: unknown, path: string): void => {
    if (isSourced(value)) {
      found.push({ path, input: value });
      return;
    }
    if (typeof value !== 'object' || value === null) return;
    for (const [key, child] of Object.entries(value)) walk(child, path === '' ? key : `${path}.${key}`);
  };
  walk(scenario, '');
  return found;
}

/** One row per input, one column per scenario; the note is the first scenario's. */
function renderInputs(scenarios: readonly ScenarioCost[]): string[] {
  const first = scenarios[0];
  if (first === undefined) return [];
  const header = scenarios.map(
    (c) =>
      `${formatQuantity(c.scenario.articlesPerDay / 1000)}k × ${formatQuantity(c.scenario.audiences)}, ${c.scenario.reading}`,
  );
  const lines = [
    `| input | ${header.join(' | ')} | basis | how it was obtained (first column) |`,
    `| :--- | ${header.map(() => '---:').join(' | ')} | :--- | :--- |`,
  ];
  const columns = scenarios.map((c) => new Map(sourcedInputs(c.scenario).map((entry) => [entry.path, entry.input])));
  for (const { path, input } of sourcedInputs(first.scenario)) {
    const values = columns.map((column) => {
      const value = column.get(path);
      return value === undefined ? '—' : formatQuantity(value.value);
    });
    const bases = columns.flatMap((column) => {
      const value = column.get(path);
      return value === undefined ? [] : [value.basis];
    });
    lines.push(
      `| \`${path}\` | ${values.join(' | ')} | ${weakestBasis(bases)} | ${input.note.replaceAll('|', '\\|')} |`,
    );
  }
  return lines;
}

/**
 * The summary table alone (one row per workload, today against incremental, SMS apart), for a
 * report that embeds it, such as bench/RESULTS.md.
 */
export function renderCostSummary(table: CostTable): string[] {
  return [...renderTotalsSummary(table), '', ...renderFixedSummary(table)];
}

/**
 * Fixed against per-delivery cost for every size (incremental reading, the default; today's where
 * only it was measured): what a deployment costs before it delivers anything, and what each
 * audience adds to that.
 */
export function renderFixedSummary(table: CostTable): string[] {
  const lines = [
    '| workload | fixed a month (everything but deliveries) | deliveries a month (grows with them) | fixed per audience (average) | fixed per added audience (from the nearest size) |',
    '| :--- | ---: | ---: | ---: | ---: |',
  ];
  const pairs = pairBySize(table.scenarios);
  const shown = (pair: Pair) => pair.incremental ?? pair.today;
  for (const pair of pairs) {
    const cost = shown(pair);
    if (cost === undefined) continue;
    const slope = fixedSlope(
      pairs.map(shown).filter((c): c is ScenarioCost => c !== undefined),
      cost,
    );
    lines.push(
      `| ${pair.label} | ${formatUsd(cost.fixedUsd)} | ${formatUsd(cost.deliveryUsd)} | ${formatFraction(cost.fixedUsd / Math.max(1, cost.scenario.audiences))} | ${slope === undefined ? '—' : formatFraction(slope)} |`,
    );
  }
  return lines;
}

/**
 * What one more audience adds to the fixed part: the slope of the fixed cost between this size and
 * the nearest other size (in audiences; the smaller on a tie) with the same articles a day and
 * reading, so every row is measured the same way (undefined when there is none).
 */
export function fixedSlope(costs: readonly ScenarioCost[], cost: ScenarioCost): number | undefined {
  const others = costs.filter(
    (c) =>
      c.scenario.articlesPerDay === cost.scenario.articlesPerDay &&
      c.scenario.audiences !== cost.scenario.audiences &&
      c.scenario.reading === cost.scenario.reading,
  );
  const distance = (c: ScenarioCost) => Math.abs(c.scenario.audiences - cost.scenario.audiences);
  const other = others.sort((a, b) => distance(a) - distance(b) || a.scenario.audiences - b.scenario.audiences)[0];
  if (other === undefined) return undefined;
  return (cost.fixedUsd - other.fixedUsd) / (cost.scenario.audiences - other.scenario.audiences);
}

/** Dollars with enough digits for a few cents or less ($0.0123). */
function formatFraction(usd: number): string {
  if (Math.abs(usd) >= 1) return formatUsd(usd);
  if (Math.abs(usd) < 0.00005) return '< $0.0001';
  return `$${usd.toFixed(4)}`;
}

function renderTotalsSummary(table: CostTable): string[] {
  const lines = [
    '| workload | today (full re-reads) | incremental reading | saved | free-tier credit (not applied) | SMS extra, US | SMS extra, South Korea | provider pages a month, today → incremental |',
    '| :--- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
  ];
  for (const pair of pairBySize(table.scenarios)) {
    const saved = pair.today && pair.incremental ? formatUsd(pair.today.totalUsd - pair.incremental.totalUsd) : '—';
    const any = pair.today ?? pair.incremental;
    lines.push(
      `| ${pair.label} | ${cell(pair.today, (c) => formatUsd(c.totalUsd))} | ${cell(pair.incremental, (c) => formatUsd(c.totalUsd))} | ${saved} | ${cell(any, (c) => formatUsd(c.freeTierCreditUsd))} | ${cell(any, (c) => formatUsd(c.sms[0]?.usd ?? 0))} | ${cell(any, (c) => formatUsd(c.sms[1]?.usd ?? 0))} | ${cell(pair.today, (c) => formatQuantity(c.provider.pagesPerMonth))} → ${cell(pair.incremental, (c) => formatQuantity(c.provider.pagesPerMonth))} |`,
    );
  }
  return lines;
}

function renderPair(pair: Pair): string[] {
  const reference = pair.today ?? pair.incremental;
  if (reference === undefined) return [];
  const lines: string[] = [];
  const s = reference.scenario;
  lines.push(
    `${formatQuantity(s.runsPerDay.value)} runs a day at ${formatQuantity(s.alertRun.memoryMb.value)} MB; ${formatQuantity(s.notificationsPerDay.value)} notifications a day (${s.notificationsPerDay.basis}).`,
  );
  lines.push('');
  lines.push('| what the runs read | today | incremental |');
  lines.push('| :--- | ---: | ---: |');
  const perDay = (pick: (c: ScenarioCost) => Sourced, unit: string) =>
    `| ${unit} | ${cell(pair.today, (c) => `${formatQuantity(pick(c).value)} (${pick(c).basis})`)} | ${cell(pair.incremental, (c) => `${formatQuantity(pick(c).value)} (${pick(c).basis})`)} |`;
  lines.push(perDay((c) => c.scenario.provider.pagesPerDay, 'provider pages a day'));
  lines.push(perDay((c) => c.scenario.provider.articlesReadPerDay, 'articles read a day'));
  lines.push(perDay((c) => c.scenario.alertRun.avgDurationMs, 'billed ms per run'));
  lines.push(perDay((c) => c.scenario.ledger.lookupsPerNotification, 'ledger lookups per notification'));
  lines.push('');
  lines.push(
    '| part | service | item | unit price | today: quantity a month | today: $/month | incremental: quantity a month | incremental: $/month | basis |',
  );
  lines.push('| :--- | :--- | :--- | ---: | ---: | ---: | ---: | ---: | :--- |');
  reference.rows.forEach((ref, index) => {
    const today = pair.today?.rows[index];
    const incremental = pair.incremental?.rows[index];
    const bound = ref.providerBound ? ' (provider-bound)' : '';
    const basis = weakestBasis([today?.basis, incremental?.basis].filter((b): b is Basis => b !== undefined));
    lines.push(
      `| ${ref.part} | ${ref.service} | ${ref.item}${bound} | ${formatUnitPrice(ref)} | ${today ? withUnit(today.quantity, ref) : '—'} | ${today ? formatUsd(today.usd) : '—'} | ${incremental ? withUnit(incremental.quantity, ref) : '—'} | ${incremental ? formatUsd(incremental.usd) : '—'} | ${basis} |`,
    );
  });
  lines.push(
    `| fixed | | everything but deliveries | | | ${cell(pair.today, (c) => formatUsd(c.fixedUsd))} | | ${cell(pair.incremental, (c) => formatUsd(c.fixedUsd))} | |`,
  );
  lines.push(
    `| delivery | | what grows with the deliveries | | | ${cell(pair.today, (c) => formatUsd(c.deliveryUsd))} | | ${cell(pair.incremental, (c) => formatUsd(c.deliveryUsd))} | |`,
  );
  lines.push(
    `| | **total** | AWS rows above (SMS apart, free tier not applied) | | | **${cell(pair.today, (c) => formatUsd(c.totalUsd))}** | | **${cell(pair.incremental, (c) => formatUsd(c.totalUsd))}** | |`,
  );
  const largest = [...reference.rows].sort((a, b) => b.usd - a.usd).slice(0, 3);
  lines.push('');
  lines.push(
    `Largest rows (${reference.scenario.reading}): ${largest.map((r) => `${r.service} ${r.item} ${formatUsd(r.usd)} (${((100 * r.usd) / reference.totalUsd).toFixed(0)}%)`).join('; ')}.`,
  );
  return lines;
}
