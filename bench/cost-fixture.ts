/**
 * Inputs for the cost model (bench/cost-model.ts): what the code and the stack imply, the figures
 * bench/RESULTS.md measured, and the assumptions that fill the rest, each labelled so.
 *
 * Two ways in:
 *
 * - {@link scenarioFromDayBench}: the simulated-day bench (bench/provider-day.ts) measured a day of
 *   runs; its counts are taken as measured and everything it does not measure is filled in here.
 * - {@link placeholderInputs}: no day bench yet; the same counts are estimated from the single-run
 *   figures of bench/RESULTS.md (2026-11-22, commit c699ec9) and the reading pattern the code
 *   implies, and labelled assumed. This is what `npx tsx bench/cost-model-cli.ts` prices when it
 *   is given no inputs file.
 *
 * {@link stackFactsFromCode} synthesizes the real stack (lib/, bundling skipped) so alarm, key,
 * secret and dashboard counts, memory sizes and log retention cannot drift from what is deployed.
 */
import { readFileSync } from 'node:fs';
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { alertRunEnvironment } from '../functions/alert-run/config.ts';
import { activityMetrics, everyRunMetrics, metricNames } from '../functions/alert-run/metrics.ts';
import { WEBHOOK_SHARDS } from '../functions/shared/slack-webhook-store.ts';
import { parseStackConfig } from '../lib/config.ts';
import { NewsAlertsStack } from '../lib/news-alerts-stack.ts';
import {
  assumed,
  type CostInputs,
  type CostScenario,
  DAYS_PER_MONTH,
  DEFAULT_SES_EMAIL,
  fromCode,
  measured,
  type Reading,
  type Sourced,
} from './cost-model.ts';

/** What the deployed stack and the functions' defaults fix, read from the code. */
export interface StackFacts {
  readonly intervalMinutes: number;
  readonly alertMemoryMb: number;
  readonly relayMemoryMb: number;
  readonly relayReservedConcurrency: number;
  readonly logRetentionDays: number;
  readonly ledgerRetentionDays: number;
  readonly lateArrivalMinutes: number;
  readonly fullSweepMinutes: number;
  readonly incrementalOverlapMinutes: number;
  readonly pageSize: number;
  readonly pageConcurrency: number;
  readonly secretCacheSeconds: number;
  /** Alarms whatever the audiences are. */
  readonly fixedAlarms: number;
  /** Alarms per audience declared in cdk.json (`delivery-failures-<audienceId>`). */
  readonly alarmsPerDeclaredAudience: number;
  readonly dashboards: number;
  readonly customerManagedKeys: number;
  /** Secrets whatever the audiences are (the provider API key). */
  readonly fixedSecrets: number;
  /** Secrets the Slack webhook store spreads the webhook URLs over, at most (functions/shared/slack-webhook-store.ts). */
  readonly webhookStoreShards: number;
  /** What SES email (`emailDomain`) adds to the fixed part: its alarms and secrets (the link key). */
  readonly sesFixed?:
    | { readonly alarms: number; readonly secrets: number; readonly keys: number; readonly schedules: number }
    | undefined;
  /**
   * Distinct EMF metric names of both functions (one `service` dimension each), by how often they
   * are sent: CloudWatch bills a custom metric for each hour it receives a value. `everyHour`:
   * sent by every run (functions/alert-run/metrics.ts everyRunMetrics) or counting normal use
   * (activityMetrics, the relay's SlackMessagesPosted), priced as sent every hour; `whenTrouble`:
   * sent only when something went wrong (zero is not sent).
   */
  readonly customMetrics: { readonly everyHour: number; readonly whenTrouble: number };
  /** Where these came from, for the document. */
  readonly note: string;
}

const envDefault = (name: string): number => {
  const variable = alertRunEnvironment.find((entry) => entry.name === name);
  const value = Number(variable?.default);
  if (variable === undefined || !Number.isFinite(value)) {
    throw new Error(`functions/alert-run/config.ts has no numeric default for ${name}; the cost fixture reads it`);
  }
  return value;
};

/** The Slack relay's metric names: the handler adds them by literal name. */
function relayMetricNames(): string[] {
  const handler = readFileSync(new URL('../functions/slack-relay/handler.ts', import.meta.url), 'utf8');
  return [...new Set([...handler.matchAll(/addMetric\('([A-Za-z]+)'/g)].map((match) => match[1] ?? ''))];
}

/** The relay's metric counting normal use; its others (retries, failures, duplicates) count trouble. */
const RELAY_ACTIVITY_METRIC = 'SlackMessagesPosted';

function metricsBySending(): StackFacts['customMetrics'] {
  const relay = relayMetricNames();
  const alertRun = Object.values(metricNames);
  const everyHour =
    alertRun.filter((name) => everyRunMetrics.has(name) || activityMetrics.has(name)).length +
    relay.filter((name) => name === RELAY_ACTIVITY_METRIC).length;
  return { everyHour, whenTrouble: alertRun.length + relay.length - everyHour };
}

/**
 * Hours a month each trouble metric is assumed sent: three days of incidents a month, every
 * trouble count at once (a healthy month sends none of them).
 */
export const TROUBLE_HOURS_PER_MONTH = 72;

/** The cost model's month, in hours. */
const HOURS_PER_MONTH = DAYS_PER_MONTH * 24;

/**
 * Synthesizes the stack with the shipped defaults and two declared audiences (one with Slack), and
 * counts what it deploys. Takes several seconds (aws-cdk-lib); the CLI calls it once.
 */
export function stackFactsFromCode(): StackFacts {
  const audiences = [
    { audienceId: 'cost-probe-email', emails: ['probe@example.com'] },
    { audienceId: 'cost-probe-slack', slack: {} },
  ];
  const config = parseStackConfig({ audiences });
  const synth = (stackConfig: typeof config) =>
    Template.fromStack(
      new NewsAlertsStack(new App({ context: { 'aws:cdk:bundling-stacks': [] } }), 'CostProbe', {
        config: stackConfig,
      }),
    );
  const template = synth(config);
  // The same stack with SES email on: what it adds to the fixed part.
  const withEmail = synth(parseStackConfig({ audiences, emailDomain: 'alerts.example.com' }));
  const count = (of: Template, type: string) => Object.keys(of.findResources(type)).length;
  const resources = (type: string) =>
    Object.values(template.findResources(type)) as { Properties?: Record<string, unknown> }[];
  const alarmNames = resources('AWS::CloudWatch::Alarm').map((alarm) => String(alarm.Properties?.AlarmName ?? ''));
  const perAudienceAlarms = alarmNames.filter((name) => name.includes('-delivery-failures-')).length;
  const secretNames = resources('AWS::SecretsManager::Secret').map((secret) =>
    JSON.stringify(secret.Properties?.Name ?? null),
  );
  const functions = resources('AWS::Lambda::Function').map((fn) => ({
    memory: Number(fn.Properties?.MemorySize),
    reserved: fn.Properties?.ReservedConcurrentExecutions,
    description: String(fn.Properties?.Description ?? ''),
  }));
  const alert = functions.find((fn) => fn.description.includes('scheduled alert run'));
  const relay = functions.find((fn) => fn.description.includes('Slack'));
  if (alert === undefined || relay === undefined) {
    throw new Error('the synthesized stack has no alert or Slack relay function; update stackFactsFromCode');
  }
  const retention = resources('AWS::Logs::LogGroup').map((group) => Number(group.Properties?.RetentionInDays));
  return {
    intervalMinutes: config.intervalMinutes,
    alertMemoryMb: alert.memory,
    relayMemoryMb: relay.memory,
    relayReservedConcurrency: typeof relay.reserved === 'number' ? relay.reserved : config.slackRelayConcurrency,
    logRetentionDays: Math.max(...retention),
    ledgerRetentionDays: config.ledgerRetentionDays,
    lateArrivalMinutes: config.lateArrivalMinutes,
    fullSweepMinutes: envDefault('FULL_SWEEP_MINUTES'),
    incrementalOverlapMinutes: envDefault('INCREMENTAL_OVERLAP_MINUTES'),
    pageSize: config.newsApiPageSize,
    pageConcurrency: envDefault('NEWS_API_PAGE_CONCURRENCY'),
    secretCacheSeconds: envDefault('SECRET_CACHE_SECONDS'),
    fixedAlarms: alarmNames.length - perAudienceAlarms,
    alarmsPerDeclaredAudience: perAudienceAlarms / audiences.length,
    dashboards: resources('AWS::CloudWatch::Dashboard').length,
    customerManagedKeys: resources('AWS::KMS::Key').length,
    fixedSecrets: secretNames.length,
    webhookStoreShards: WEBHOOK_SHARDS,
    sesFixed: {
      alarms: count(withEmail, 'AWS::CloudWatch::Alarm') - count(template, 'AWS::CloudWatch::Alarm'),
      secrets: count(withEmail, 'AWS::SecretsManager::Secret') - count(template, 'AWS::SecretsManager::Secret'),
      keys: count(withEmail, 'AWS::KMS::Key') - count(template, 'AWS::KMS::Key'),
      schedules: count(withEmail, 'AWS::Scheduler::Schedule') - count(template, 'AWS::Scheduler::Schedule'),
    },
    customMetrics: metricsBySending(),
    note: `synthesized NewsAlertsStack with the lib/config.ts defaults (${config.scheduleExpression}, tableEncryption ${config.tableEncryption}) and functions/alert-run/config.ts defaults`,
  };
}

/**
 * Figures of bench/RESULTS.md (the 2026-11-22 run, commit c699ec9) the placeholder is built from.
 * Each is a measurement of one run on the 2-core development machine against moto and the
 * simulator, not of a day on AWS.
 */
export const RESULTS_MD = {
  /** Section 2: 10,954 notifications from 20,000 articles × 200 audiences (600 synthetic rules). */
  notificationsPerArticleAudience: 10_954 / (20_000 * 200),
  /** Section 2: 600 rules for 200 audiences. */
  rulesPerAudience: 600 / 200,
  /** Section 2: 1,186 PublishBatch calls for 10,954 messages. */
  messagesPerPublishCall: 10_954 / 1_186,
  /**
   * Single-run limits of the 2026-11-29 run (commit 01fb62e): 3 KiB per rendered message on average
   * (every channel's body in one message). The 2026-11-22 run this table was first built from said
   * 13 KiB; the sharded bench's work items agree with 3 KiB (35 MB for 10,000 notifications).
   */
  messageBytes: 3 * 1024,
  /** Section 2: one ledger item written per notification delivered. */
  ledgerWritesPerNotification: 10_954 / 10_954,
  /** Single-run limits: ~247 notifications/s of in-process work at 512 MB, i.e. this many ms each. */
  msPerNotificationAt512: 1000 / 247,
  /** Section 5: provider client 225 ms + fromText 442 ms + matching 142 ms + zod 11.7 ms over 20,000 articles, one full core. */
  cpuMsPerArticleFullCore: (225 + 442 + 142 + 11.7) / 20_000,
  /** Single-run limits: one vCPU at 1,769 MB, so 512 MB runs CPU-bound work this much slower. */
  cpuSlowdownAt512: 1769 / 512,
  /** Section 4: median import of the handler bundle (its init), one full core. */
  initMsFullCore: 206,
  /** Section 1: compiling 1,000 rules took up to 56.9 ms (the largest per-rule cost measured). */
  compileMsPerRuleFullCore: 56.9 / 1000,
  /**
   * Section 10 (c), spike alerts of 2,000 opted-in rules (the 2026-11-30 run): a run inside an hour
   * touched 740 records (BatchGetItem, one read unit each under 4 KB, and a PutItem each: 3,048
   * write units), the first run after the hour all 2,000 (8,254 write units).
   */
  spikeStep: {
    rules: 2_000,
    /** Articles a run read in that step (section 10 (c), "inside an hour"). */
    articlesPerRun: 1_397,
    insideHour: { records: 740, writeUnits: 3_048 },
    afterHour: { records: 2_000, writeUnits: 8_254 },
  },
  /**
   * Section 8 (the 2026-12-02 run), the story index (story collapse) per article filed: request
   * units of the DynamoDB adapter over 20,000 articles of the cost stream (30% reworded copies, one
   * window, so 77.7% of
   * them start a story: each start writes its story item and 32 band items), and the index's
   * storage per article (story and band items, kept the window plus a day; the filing, kept 14 days).
   */
  storyIndex: {
    articles: 20_000,
    readUnitsPerArticle: 33.1,
    writeUnitsPerArticle: 27.8,
    newStoryShare: 0.777,
    /** Story and band bytes per article (storage, 100 bytes of overhead per item included). */
    storyBytesPerArticle: 5_133 - 184,
    /** Filing bytes per article (the same). */
    filingBytesPerArticle: 184,
  },
} as const;

const RESULTS = 'bench/RESULTS.md 2026-11-22';

/**
 * What cannot be measured on this machine or is a property of a deployment, not of the code.
 * Each is a knob: a deployment that knows better passes its own to {@link placeholderInputs}.
 */
export interface WorkloadAssumptions {
  /** Subscriptions of an average audience by protocol. */
  readonly subscribersPerAudience: {
    readonly email: number;
    readonly https: number;
    readonly sqs: number;
    readonly lambda: number;
    readonly sms: number;
  };
  /** Real provider latency per page (ms); the simulator answers in ~2 ms. */
  readonly providerPageLatencyMs: number;
  /** Share of runs that start cold (a 5-minute schedule keeps most environments warm). */
  readonly coldStartShare: number;
  /** Per-run work besides pages and notifications: DynamoDB round trips, digests, run record (ms at 512 MB). */
  readonly fixedRunMs: number;
  readonly relayDurationMs: number;
  readonly ruleItemBytes: number;
  readonly audienceItemBytes: number;
  readonly ledgerItemBytes: number;
}

export const defaultAssumptions: WorkloadAssumptions = {
  subscribersPerAudience: { email: 3, https: 0.2, sqs: 0.1, lambda: 0.5, sms: 0.2 },
  providerPageLatencyMs: 300,
  coldStartShare: 0.2,
  fixedRunMs: 300,
  relayDurationMs: 300,
  ruleItemBytes: 400,
  audienceItemBytes: 600,
  ledgerItemBytes: 300,
};

/** The bench-measurable core of a scenario: what bench/provider-day.ts counts over a simulated day. */
export interface DayCounts {
  readonly articlesPerDay: number;
  readonly audiences: number;
  readonly reading: Reading;
  readonly runsPerDay: Sourced;
  /** Billed duration of an average run at the stack's memory (ms). */
  readonly avgRunMs: Sourced;
  readonly providerPagesPerDay: Sourced;
  readonly articlesReadPerDay: Sourced;
  readonly notificationsPerDay: Sourced;
  readonly ledgerLookupsPerNotification: Sourced;
  readonly ledgerWritesPerNotification: Sourced;
  readonly messagesPerPublishCall: Sourced;
}

/**
 * The counts bench/provider-day.ts produces for one simulated day, as plain numbers. Optional
 * fields fall back to the RESULTS.md figures.
 */
export interface DayBenchCounts {
  readonly articlesPerDay: number;
  readonly audiences: number;
  readonly reading: Reading;
  readonly runsPerDay: number;
  readonly providerPagesPerDay: number;
  readonly articlesReadPerDay: number;
  readonly notificationsPerDay: number;
  /** Average run duration, already scaled to what Lambda bills at the stack's memory (ms). */
  readonly lambdaMsPerRun: number;
  /** Ledger BatchGetItem keys over the day (default: notifications, i.e. one lookup each). */
  readonly ledgerLookupsPerDay?: number;
  readonly ledgerWritesPerDay?: number;
  readonly publishBatchCallsPerDay?: number;
}

/**
 * What a run measured on the development machine costs in Lambda's billed milliseconds at the
 * stack's memory: its CPU time slowed to the memory's share of a vCPU, plus the provider waits the
 * simulator does not have (it answers in ~2 ms). CPU and waits are added, not overlapped: an upper
 * bound, like Lambda's own billing of a run that waits.
 */
export function lambdaMsFromBench(
  run: { readonly cpuMs: number; readonly concurrentPages: number; readonly sequentialPages: number },
  facts: StackFacts,
  a: WorkloadAssumptions = defaultAssumptions,
): number {
  const slowdown = 1769 / facts.alertMemoryMb;
  return (
    run.cpuMs * Math.max(1, slowdown) +
    (run.concurrentPages * a.providerPageLatencyMs) / facts.pageConcurrency +
    run.sequentialPages * a.providerPageLatencyMs
  );
}

/** Turns the day bench's counts into a full scenario; what it measured is labelled measured. */
export function scenarioFromDayBench(
  counts: DayBenchCounts,
  facts: StackFacts,
  options: { readonly source: string; readonly assumptions?: WorkloadAssumptions },
): CostScenario {
  const m = (value: number, what: string) => measured(value, `${what} (${options.source})`);
  const notifications = counts.notificationsPerDay;
  return completeScenario(
    {
      articlesPerDay: counts.articlesPerDay,
      audiences: counts.audiences,
      reading: counts.reading,
      runsPerDay: m(counts.runsPerDay, 'runs'),
      avgRunMs: m(counts.lambdaMsPerRun, 'run duration'),
      providerPagesPerDay: m(counts.providerPagesPerDay, 'provider pages'),
      articlesReadPerDay: m(counts.articlesReadPerDay, 'articles read'),
      notificationsPerDay: m(notifications, 'notifications'),
      // The simulated day counts no ledger lookups: the reading pattern's estimate, labelled so
      // (one per notification, as one run measures it, left out every later run's re-match).
      ledgerLookupsPerNotification:
        counts.ledgerLookupsPerDay === undefined || notifications === 0
          ? estimateDayCounts(counts, counts.reading, facts, options.assumptions).ledgerLookupsPerNotification
          : m(counts.ledgerLookupsPerDay / notifications, 'BatchGetItem keys / notifications'),
      ledgerWritesPerNotification:
        counts.ledgerWritesPerDay === undefined || notifications === 0
          ? measured(RESULTS_MD.ledgerWritesPerNotification, RESULTS)
          : m(counts.ledgerWritesPerDay / notifications, 'ledger items written / notifications'),
      messagesPerPublishCall:
        counts.publishBatchCallsPerDay === undefined || counts.publishBatchCallsPerDay === 0
          ? measured(RESULTS_MD.messagesPerPublishCall, `10,954 messages in 1,186 PublishBatch calls (${RESULTS})`)
          : m(notifications / counts.publishBatchCallsPerDay, 'messages / PublishBatch calls'),
    },
    facts,
    options.assumptions ?? defaultAssumptions,
  );
}

/**
 * Estimates a day's counts from RESULTS.md and the reading pattern of the code, for when no day
 * bench has run. Every figure is labelled assumed, because it is arithmetic about a day nobody ran.
 */
export function estimateDayCounts(
  size: { readonly articlesPerDay: number; readonly audiences: number },
  reading: Reading,
  facts: StackFacts,
  a: WorkloadAssumptions = defaultAssumptions,
): DayCounts {
  const { articlesPerDay: n, audiences } = size;
  const runsPerDay = (24 * 60) / facts.intervalMinutes;
  const newPerRun = n / runsPerDay;
  // The date-only API: a run reads its whole provider day. Articles arrive evenly, so a run at
  // fraction f of the day reads f·n of them; the runs whose look-back (interval + late arrival)
  // still reaches into yesterday read all of yesterday as well.
  const runsReadingYesterday = Math.ceil((facts.lateArrivalMinutes + facts.intervalMinutes) / facts.intervalMinutes);
  const fullDayPages = (articles: number) => Math.ceil(articles / facts.pageSize) + 1;
  // A run matches what was published since its cutoff (watermark − late arrival), so each
  // notification is looked up again by every run whose window still holds its article.
  const matchWindowRuns = (facts.lateArrivalMinutes + facts.intervalMinutes) / facts.intervalMinutes;
  let pagesPerDay: number;
  let articlesReadPerDay: number;
  let lookupsPerNotification: number;
  let readingMsPerDay: number;
  const concurrentPageMs = Math.max(
    a.providerPageLatencyMs / facts.pageConcurrency,
    facts.pageSize * RESULTS_MD.cpuMsPerArticleFullCore * RESULTS_MD.cpuSlowdownAt512,
  );
  let readingNote: string;
  if (reading === 'today') {
    let pages = 0;
    let articles = 0;
    for (let run = 1; run <= runsPerDay; run += 1) {
      const inDay = (n * run) / runsPerDay;
      pages += fullDayPages(inDay);
      articles += inDay;
    }
    pages += runsReadingYesterday * fullDayPages(n);
    articles += runsReadingYesterday * n;
    pagesPerDay = pages;
    articlesReadPerDay = articles;
    lookupsPerNotification = matchWindowRuns;
    readingMsPerDay = pages * concurrentPageMs;
    readingNote = `every run reads its whole provider day (${facts.pageConcurrency} pages at a time), ${runsReadingYesterday} runs also all of yesterday`;
  } else {
    // Between full sweeps a run reads newest first, one page at a time, until it passes the
    // watermark minus the overlap; a full sweep reads the whole day like today's runs.
    const sweepsPerDay = facts.fullSweepMinutes > 0 ? (24 * 60) / facts.fullSweepMinutes : runsPerDay;
    const overlapArticles = (n * facts.incrementalOverlapMinutes) / (24 * 60);
    const pagesPerIncrementalRun = Math.max(1, Math.ceil((newPerRun + overlapArticles) / facts.pageSize));
    const articlesPerIncrementalRun = Math.min(pagesPerIncrementalRun * facts.pageSize, n);
    const incrementalRuns = runsPerDay - sweepsPerDay;
    const sweepPages = sweepsPerDay * fullDayPages(n / 2);
    // Yesterday is done once its sweep ran: the runs whose window still reaches it stop after a page.
    pagesPerDay = incrementalRuns * pagesPerIncrementalRun + sweepPages + runsReadingYesterday;
    articlesReadPerDay =
      incrementalRuns * articlesPerIncrementalRun + sweepsPerDay * (n / 2) + runsReadingYesterday * facts.pageSize;
    // Incremental runs match every article they read that is newer than their cutoff (the watermark
    // less the late-arrival window): at a few articles a run, a page reaches back past it. A sweep
    // matches the late-arrival window again.
    const matchedPerIncrementalRun = Math.min(articlesPerIncrementalRun, newPerRun * matchWindowRuns);
    const matchedPerDay =
      incrementalRuns * matchedPerIncrementalRun + (sweepsPerDay * (n * matchWindowRuns)) / runsPerDay;
    lookupsPerNotification = matchedPerDay / Math.max(n, 1);
    readingMsPerDay =
      incrementalRuns * pagesPerIncrementalRun * a.providerPageLatencyMs +
      (sweepPages + runsReadingYesterday) * concurrentPageMs;
    readingNote = `newest first until the watermark − ${facts.incrementalOverlapMinutes} min, a full sweep every ${facts.fullSweepMinutes} min (an estimate without a measured day; npm run bench measures counted reading)`;
  }
  const notificationsPerDay = n * audiences * RESULTS_MD.notificationsPerArticleAudience;
  const rules = audiences * RESULTS_MD.rulesPerAudience;
  const perRunMs =
    a.fixedRunMs +
    rules * RESULTS_MD.compileMsPerRuleFullCore * RESULTS_MD.cpuSlowdownAt512 +
    a.coldStartShare * RESULTS_MD.initMsFullCore * RESULTS_MD.cpuSlowdownAt512;
  const articleCpuMsPerDay = articlesReadPerDay * RESULTS_MD.cpuMsPerArticleFullCore * RESULTS_MD.cpuSlowdownAt512;
  const dayMs =
    runsPerDay * perRunMs +
    Math.max(readingMsPerDay, articleCpuMsPerDay) +
    notificationsPerDay * RESULTS_MD.msPerNotificationAt512;
  const est = (value: number, note: string) => assumed(value, `estimated: ${note}`);
  return {
    articlesPerDay: n,
    audiences,
    reading,
    runsPerDay: fromCode(runsPerDay, `one run every ${facts.intervalMinutes} min`),
    avgRunMs: est(
      dayMs / runsPerDay,
      `pages × ${a.providerPageLatencyMs} ms provider latency (÷ concurrency when concurrent) + ${RESULTS_MD.msPerNotificationAt512.toFixed(2)} ms per notification + init, rules compile, ${a.fixedRunMs} ms fixed`,
    ),
    providerPagesPerDay: est(pagesPerDay, readingNote),
    articlesReadPerDay: est(articlesReadPerDay, readingNote),
    notificationsPerDay: est(
      notificationsPerDay,
      `${(RESULTS_MD.notificationsPerArticleAudience * 100).toFixed(3)}% of article × audience pairs match (${RESULTS} section 2 rules)`,
    ),
    ledgerLookupsPerNotification: est(
      lookupsPerNotification,
      reading === 'today'
        ? `each run re-matches the last ${facts.lateArrivalMinutes + facts.intervalMinutes} min of articles`
        : 'whole pages of new + overlap articles, plus the sweeps re-matching the late-arrival window',
    ),
    ledgerWritesPerNotification: measured(RESULTS_MD.ledgerWritesPerNotification, RESULTS),
    messagesPerPublishCall: measured(
      RESULTS_MD.messagesPerPublishCall,
      `10,954 messages in 1,186 PublishBatch calls (${RESULTS})`,
    ),
  };
}

/** Fills in everything the day counts do not cover, from the stack facts and the assumptions. */
export function completeScenario(
  c: DayCounts,
  facts: StackFacts,
  a: WorkloadAssumptions = defaultAssumptions,
): CostScenario {
  const runs = c.runsPerDay.value;
  const notifications = c.notificationsPerDay.value;
  const subs = a.subscribersPerAudience;
  const relayPerDay = notifications * subs.lambda;
  const slackAudiences = Math.ceil(c.audiences * Math.min(1, subs.lambda));
  // Audiences with at least one match in a run each add a tally to the run record and its log line.
  const matchesPerAudiencePerRun =
    (notifications * c.ledgerLookupsPerNotification.value) / Math.max(runs, 1) / Math.max(c.audiences, 1);
  const activeAudiences = c.audiences * (1 - Math.exp(-matchesPerAudiencePerRun));
  const runRecordBytes = 2000 + 110 * activeAudiences;
  const rulesBytes = c.audiences * RESULTS_MD.rulesPerAudience * a.ruleItemBytes;
  const audiencesBytes = c.audiences * a.audienceItemBytes;
  const incremental = c.reading === 'incremental';
  const relaySharePerSecond = (facts.relayReservedConcurrency * 1000) / a.relayDurationMs;
  // X-Ray's default rule: one trace a second, then 5% of the rest; a busy relay runs this fast.
  const relayTracedShare = relaySharePerSecond <= 1 ? 1 : (1 + 0.05 * (relaySharePerSecond - 1)) / relaySharePerSecond;
  const secretCallsPerRun =
    facts.secretCacheSeconds <= facts.intervalMinutes * 60
      ? 1
      : (facts.intervalMinutes * 60) / facts.secretCacheSeconds;
  // The webhook store: an audience's shard is a hash of its id, so n Slack audiences fill on average
  // shards × (1 − (1 − 1/shards)^n) of them; the relay caches a shard, not a webhook.
  const shardsFilled = (entries: number) =>
    entries === 0 ? 0 : facts.webhookStoreShards * (1 - (1 - 1 / facts.webhookStoreShards) ** entries);
  const storeSecrets = shardsFilled(slackAudiences);
  // The endpoint store (cli/endpoint-store.ts): the same layout, keyed by endpoint, for the HTTPS
  // URLs the CLI keeps for `audiences repair`. Nothing deployed reads it: no calls to price.
  const httpsEndpoints = Math.ceil(c.audiences * subs.https);
  const endpointSecrets = shardsFilled(httpsEndpoints);
  const relaySecretCalls = Math.min(relayPerDay, storeSecrets * facts.relayReservedConcurrency * runs);
  const subscriber = (value: number, protocol: string) =>
    assumed(value, `${protocol} subscriptions per audience (deployment choice)`);
  return {
    articlesPerDay: c.articlesPerDay,
    audiences: c.audiences,
    reading: c.reading,
    runsPerDay: c.runsPerDay,
    alertRun: {
      avgDurationMs: c.avgRunMs,
      memoryMb: fromCode(facts.alertMemoryMb, 'alert function memorySize (lib/config.ts default)'),
      logBytesPerRun: assumed(
        700 + runRecordBytes + 300 + 60 * Object.keys(metricNames).length,
        'START/END/REPORT lines, the "alert run finished" summary (2 KB + 110 B per active audience), one EMF blob',
      ),
    },
    provider: { pagesPerDay: c.providerPagesPerDay, articlesReadPerDay: c.articlesReadPerDay },
    notificationsPerDay: c.notificationsPerDay,
    ledger: {
      lookupsPerNotification: c.ledgerLookupsPerNotification,
      writesPerNotification: c.ledgerWritesPerNotification,
      readUnitsPerLookup: fromCode(1, 'BatchGetItem with ConsistentRead, items under 4 KB (dynamo-state-store.ts)'),
      writeUnitsPerWrite: assumed(Math.ceil(a.ledgerItemBytes / 1024), `ledger item of ~${a.ledgerItemBytes} B`),
      itemBytes: assumed(
        a.ledgerItemBytes,
        'keys, audience and article ids, deliveredAt, messageId, ruleIds, expiresAt',
      ),
      retentionDays: fromCode(facts.ledgerRetentionDays, 'LEDGER_RETENTION_DAYS default (TTL)'),
    },
    dynamoPerRun: {
      readUnits: assumed(
        1 + 1 + Math.ceil(rulesBytes / 4096) + Math.ceil(audiencesBytes / 4096) + (incremental ? 1 : 0),
        `watermark GetItem, holding-index Query, consistent Scans of ${c.audiences * RESULTS_MD.rulesPerAudience} rules (~${a.ruleItemBytes} B) and ${c.audiences} audiences (~${a.audienceItemBytes} B)${incremental ? ', reading-state GetItem' : ''}`,
      ),
      writeUnits: assumed(
        1 + 1 + 4 * (1 + 1 / runs) + Math.ceil(runRecordBytes / 1024) + (incremental ? 2 : 0),
        `lease Put and Delete, watermark TransactWriteItems (2 items × 2 units), run record of ~${Math.round(runRecordBytes)} B${incremental ? ', reading-state write' : ''}`,
      ),
    },
    otherStateBytes: assumed(
      runs * 30 * (runRecordBytes + 100) + relayPerDay * 7 * 400,
      'run history kept 30 days; Slack posted-once records kept 168 h (SLACK_REMEMBER_POSTS_HOURS)',
    ),
    sns: {
      messagesPerPublishCall: c.messagesPerPublishCall,
      messageBytes: measured(
        RESULTS_MD.messageBytes,
        '3 KiB per message (bench/RESULTS.md 2026-11-29, single-run limits)',
      ),
      subscribersPerAudience: {
        email: subscriber(subs.email, 'email'),
        https: subscriber(subs.https, 'HTTPS webhook'),
        sqs: subscriber(subs.sqs, 'SQS'),
        lambda: subscriber(subs.lambda, 'Slack relay (share of audiences with Slack)'),
        sms: subscriber(subs.sms, 'SMS phone'),
      },
    },
    sms: { segmentsPerMessage: fromCode(1, 'smsMaxSegments default: one segment per alert') },
    slackRelay: {
      avgDurationMs: assumed(a.relayDurationMs, 'one Slack webhook POST plus two DynamoDB calls'),
      memoryMb: fromCode(facts.relayMemoryMb, 'Slack relay memorySize (lib/constructs/slack-relay.ts)'),
      dynamoWriteUnitsPerPost: fromCode(2, 'Powertools idempotency: in-progress PutItem, then UpdateItem'),
      logBytesPerInvocation: assumed(1100, 'START/END/REPORT lines, "alert posted to Slack", one EMF blob'),
    },
    secrets: {
      count: fromCode(
        facts.fixedSecrets + storeSecrets + endpointSecrets,
        `API key + the webhook store's secrets the ${slackAudiences} Slack audiences fill + the endpoint store's the ${httpsEndpoints} HTTPS endpoints fill (at most ${facts.webhookStoreShards} each, whatever the audiences)`,
      ),
      getSecretValuePerDay: assumed(
        runs * secretCallsPerRun + relaySecretCalls,
        `API key: cache ${facts.secretCacheSeconds} s vs a ${facts.intervalMinutes}-min schedule; relay: each of ${facts.relayReservedConcurrency} environments re-reads a store secret every 5 min it is used`,
      ),
    },
    cloudWatch: {
      customMetrics: assumed(
        facts.customMetrics.everyHour + (facts.customMetrics.whenTrouble * TROUBLE_HOURS_PER_MONTH) / HOURS_PER_MONTH,
        `${facts.customMetrics.everyHour} sent every hour (every run's, normal use's) + ${facts.customMetrics.whenTrouble} sent only when not zero (trouble counts), assumed ${TROUBLE_HOURS_PER_MONTH} h of ${HOURS_PER_MONTH.toFixed(0)} a month`,
      ),
      alarms: fromCode(
        facts.fixedAlarms + facts.alarmsPerDeclaredAudience * c.audiences,
        facts.alarmsPerDeclaredAudience === 0
          ? `${facts.fixedAlarms}, whatever the audiences (failures of every audience alarm through the delivery dead-letter queue)`
          : `${facts.fixedAlarms} fixed + ${facts.alarmsPerDeclaredAudience} per audience, all audiences declared in cdk.json (upper bound)`,
      ),
      dashboards: fromCode(facts.dashboards, 'the operations dashboard'),
      logRetentionDays: fromCode(facts.logRetentionDays, 'logRetentionDays default'),
      logCompressionRatio: assumed(0.15, 'JSON log lines compress to ~15%'),
    },
    kms: {
      customerManagedKeys: fromCode(facts.customerManagedKeys, 'audience topics key, ops topic key'),
      requestsPerPublishCall: assumed(1, 'SNS GenerateDataKey per publish request; SNS data-key reuse not documented'),
      otherRequestsPerDay: assumed(
        3 * 12 * 24 + runs * secretCallsPerRun + relaySecretCalls,
        'DynamoDB re-fetches each table key about every 5 min; one Decrypt per GetSecretValue',
      ),
    },
    sesEmail: DEFAULT_SES_EMAIL,
    xray: {
      tracesPerDay: assumed(
        runs + relayPerDay * relayTracedShare,
        `every run; relay at up to ${relaySharePerSecond.toFixed(1)}/s under the 1/s + 5% default sampling rule`,
      ),
    },
  };
}

/** The workload sizes the issue asks about. */
export const SIZES = [
  { articlesPerDay: 1_000, audiences: 5 },
  { articlesPerDay: 10_000, audiences: 20 },
  { articlesPerDay: 10_000, audiences: 100 },
  { articlesPerDay: 10_000, audiences: 1_000 },
  { articlesPerDay: 100_000, audiences: 100 },
  { articlesPerDay: 100_000, audiences: 1_000 },
] as const;

/** Placeholder inputs: every size, read today and incrementally, estimated from RESULTS.md. */
export function placeholderInputs(facts: StackFacts, a: WorkloadAssumptions = defaultAssumptions): CostInputs {
  return {
    source: `placeholder estimates from ${RESULTS} (single-run figures) and the reading pattern of the code; no simulated day has been measured yet. Stack facts: ${facts.note}.`,
    scenarios: SIZES.flatMap((size) =>
      (['today', 'incremental'] as const).map((reading) =>
        completeScenario(estimateDayCounts(size, reading, facts, a), facts, a),
      ),
    ),
  };
}
