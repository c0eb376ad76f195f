/**
 * Publishing throughput, single vs sharded (issue 14): the same notifications for the same
 * audiences, published once by the alert run's own publishing step (`single`) and once through
 * SQS work items and the publisher function at several publisher concurrencies (`sharded`), with
 * SNS made to answer PublishBatch in ~40 ms like the real service (bench/latency-proxy.ts; moto
 * answers in a few ms, which would hide exactly the wait sharding is for).
 *
 * What a figure guarantees: it counts only a mode that published every notification exactly
 * once. Each mode starts on a wiped moto server with fresh resources, and at its end the state
 * table's ledger must hold exactly one entry per notification and SNS must have been sent exactly
 * as many entries (counted on the SNS client by bench/request-recorder.ts); a mode that lost or
 * doubled anything is reported as invalid, never as a rate.
 *
 * Method: N notifications = A audiences × (N / A) articles each, the articles seeded from
 * bench/synthetic.ts and each matched by N / A consecutive audiences (as a busy story matches many
 * audiences), handed to a real {@link DeliveryPipeline} in article order a page at a time (every
 * match of 100 articles per call), as the alert run hands over a page's matches. The clock starts
 * when the first page goes in and stops when the last notification is in the ledger (single: the
 * pipeline's flush; sharded: the dispatch head counts every queued item done). The ledger lookup,
 * rendering and (sharded) queueing are inside the time in both modes. DynamoDB and SQS talk to moto directly; only SNS
 * goes through the proxy. moto's own CPU time (its process is a child of this one) is read from
 * /proc around each mode: close to one core for the whole run means moto, not the mode, set the
 * pace.
 */

import { readdirSync, readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { CreateTableCommand, DynamoDBClient, ScanCommand, type ScanCommandOutput } from '@aws-sdk/client-dynamodb';
import { CreateTopicCommand, SNSClient } from '@aws-sdk/client-sns';
import { GetQueueAttributesCommand, SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import pLimit from 'p-limit';
import { DynamoDispatchStore } from '#aws/dynamo-dispatch-store';
import { DynamoStateStore } from '#aws/dynamo-state-store';
import { SnsNotifier } from '#aws/sns-notifier';
import { SqsWorkQueue } from '#aws/sqs-work-queue';
import { stateTableKey } from '#aws/table-layout';
import { DeliveryPipeline, emptyDeliveryCounts } from '#core/delivery-pipeline';
import { waitForDispatch } from '#core/dispatch';
import { type Audience, type AudienceMatch, AudienceSchema, type RuleMatch } from '#core/model';
import { defaultPageSize, dispatchComplete, type Log, type Notifier, silentLog } from '#core/ports';
import { localAwsConfig, type MotoServer } from '#sandbox/moto';
import { type SqsBatchHandler, startLocalEventSource } from '#sandbox/sqs-event-source';
import { createWorkQueues, workMaxReceiveCount, workVisibilityTimeoutSeconds } from '#sandbox/tables';
import { createWorkItemHandler } from '../functions/publisher/process.ts';
import { ShardedPublishing } from '../lib/constructs/sharded-publishing.ts';
import { startLatencyProxy } from './latency-proxy.ts';
import type { FakePublishingResults } from './publishing-fake.ts';
import { recordRequests } from './request-recorder.ts';
import { syntheticArticles } from './synthetic.ts';

/** Size and settings of the benchmark. */
export interface PublishingOptions {
  readonly moto: MotoServer;
  readonly notifications: number;
  readonly audiences: number;
  /** Injected PublishBatch latency (ms). */
  readonly publishLatencyMs: number;
  /** Publisher concurrencies of the sharded runs (the event source's maximum concurrency). */
  readonly publisherConcurrencies: readonly number[];
  /** Records per publisher invocation (the event source's batch size). */
  readonly publisherBatchSize: number;
  /** PublishBatch calls in flight per process (SNS_CONCURRENCY; the stack's default is 8). */
  readonly snsConcurrency: number;
  /** LEDGER_FLUSH_DELAY_MS of the run and the publishers (the stack's default is 100). */
  readonly ledgerFlushDelayMs: number;
  readonly seed: number;
  readonly progress?: (line: string) => void;
}

/** One mode's run. */
export interface PublishingRun {
  readonly mode: 'single' | 'sharded';
  /** Sharded: publisher invocations at once. */
  readonly concurrency?: number;
  readonly notifications: number;
  readonly wallMs: number;
  /** Notifications per second of wall time; NaN when the run was not valid. */
  readonly perSecond: number;
  /** Entries in the ledger at the end (must equal `notifications`). */
  readonly ledgerEntries: number;
  /** PublishBatch entries sent to SNS (must equal `notifications`: more means something went twice). */
  readonly snsEntries: number;
  readonly publishBatchCalls: number;
  /** Mean latency the proxy injected per PublishBatch (ms). */
  readonly injectedMeanMs: number;
  /** CPU time of this process (the run, the publishers, the proxy, the SDK clients) during the run (ms). */
  readonly nodeCpuMs: number;
  /** moto's CPU time during the run (ms); undefined when it could not be read. */
  readonly motoCpuMs: number | undefined;
  /** Sharded: work items queued, and publisher invocations. */
  readonly workItems?: number;
  readonly invocations?: number;
  /** Sharded: the publishers' warnings and errors by message (with the error's name), counted. */
  readonly publisherProblems?: Readonly<Record<string, number>>;
  /** DynamoDB requests of the mode by command: count and summed latency (ms). */
  readonly dynamoRequests?: Readonly<Record<string, { readonly count: number; readonly ms: number }>>;
  /** Sharded: items that ended in the dead-letter queue. */
  readonly deadLettered?: number;
  /** Why the figure is not valid (lost or doubled notifications), if it is not. */
  readonly invalid?: string;
}

/** Everything the benchmark measured. */
export interface PublishingResults {
  readonly options: Omit<PublishingOptions, 'moto' | 'progress'>;
  readonly runs: readonly PublishingRun[];
  /** CPUs of the machine the modes shared (the bench process, every publisher and moto run on them). */
  readonly cores: number;
  /** The same modes against the zero-CPU emulator at fixed latencies (bench/publishing-fake.ts). */
  readonly fake?: FakePublishingResults;
}

const rules: RuleMatch[] = [
  { ruleId: 'bench', description: 'Benchmark rule', urgent: false, reasons: [{ kind: 'keyword', term: 'news' }] },
];

/**
 * The matches of the benchmark, in article order: each article matched by the next
 * min(audiences, notifications / audiences) audiences in turn, so every audience gets
 * notifications / audiences articles (when that divides evenly) and no (audience, article) twice.
 */
export function publishingMatches(
  audienceIds: readonly string[],
  notifications: number,
  seed: number,
): AudienceMatch[] {
  // Consecutive audiences per article: at most every audience once, so no pair repeats.
  const perArticle = Math.max(1, Math.min(audienceIds.length, Math.round(notifications / audienceIds.length)));
  const articleCount = Math.ceil(notifications / perArticle);
  const articles = syntheticArticles(articleCount, seed);
  const matches: AudienceMatch[] = [];
  articles.forEach((article, index) => {
    for (let j = 0; j < perArticle && matches.length < notifications; j++) {
      const audienceId = audienceIds[(index * perArticle + j) % audienceIds.length];
      if (audienceId !== undefined) matches.push({ audienceId, article, rules });
    }
  });
  return matches;
}

/**
 * CPU time (ms) of this process's child processes that are moto (python), from /proc; undefined
 * where /proc cannot be read.
 */
export function motoCpuMs(): number | undefined {
  try {
    let ticks = 0;
    for (const entry of readdirSync('/proc')) {
      if (!/^\d+$/.test(entry)) continue;
      let stat: string;
      try {
        stat = readFileSync(`/proc/${entry}/stat`, 'latin1');
      } catch {
        continue; // exited meanwhile
      }
      // pid (comm) state ppid ... utime(14) stime(15): comm may hold spaces, so split after ')'.
      const close = stat.lastIndexOf(')');
      const name = stat.slice(stat.indexOf('(') + 1, close);
      const fields = stat.slice(close + 2).split(' ');
      if (Number(fields[1]) !== process.pid || !/python|moto/i.test(name)) continue;
      ticks += Number(fields[11]) + Number(fields[12]);
    }
    // USER_HZ is 100 on every Linux this runs on.
    return ticks * 10;
  } catch {
    return undefined;
  }
}

/** Ledger entries in the state table (delivery records, `delivery#` partitions). */
export async function countLedgerEntries(dynamo: DynamoDBClient, tableName: string): Promise<number> {
  let count = 0;
  let start: ScanCommandOutput['LastEvaluatedKey'];
  do {
    const page = await dynamo.send(
      new ScanCommand({
        TableName: tableName,
        Select: 'COUNT',
        FilterExpression: 'begins_with(pk, :ledger)',
        ExpressionAttributeValues: { ':ledger': { S: 'delivery#' } },
        ExclusiveStartKey: start,
      }),
    );
    count += page.Count ?? 0;
    start = page.LastEvaluatedKey;
  } while (start !== undefined);
  return count;
}

/** Fresh resources of one mode: the state table and one topic per audience. */
export interface ModeResources {
  readonly dynamo: DynamoDBClient;
  readonly documents: DynamoDBDocumentClient;
  readonly tableName: string;
  readonly audiences: ReadonlyMap<string, Audience>;
}

/** A table with the state table's key schema. */
async function createStateTable(dynamo: DynamoDBClient, tableName: string): Promise<void> {
  await dynamo.send(
    new CreateTableCommand({
      TableName: tableName,
      BillingMode: 'PAY_PER_REQUEST',
      KeySchema: [
        { AttributeName: stateTableKey.partitionKey, KeyType: 'HASH' },
        { AttributeName: stateTableKey.sortKey, KeyType: 'RANGE' },
      ],
      AttributeDefinitions: [
        { AttributeName: stateTableKey.partitionKey, AttributeType: 'S' },
        { AttributeName: stateTableKey.sortKey, AttributeType: 'S' },
      ],
    }),
  );
}

async function createModeResources(endpoint: string, prefix: string, audienceCount: number): Promise<ModeResources> {
  const dynamo = new DynamoDBClient(localAwsConfig(endpoint));
  const documents = DynamoDBDocumentClient.from(dynamo, { marshallOptions: { removeUndefinedValues: true } });
  const tableName = `${prefix}state`;
  await createStateTable(dynamo, tableName);
  const sns = new SNSClient(localAwsConfig(endpoint));
  const limit = pLimit(16);
  const audiences = await Promise.all(
    Array.from({ length: audienceCount }, (_, i) =>
      limit(async () => {
        const audienceId = `a${String(i).padStart(5, '0')}`;
        const { TopicArn } = await sns.send(new CreateTopicCommand({ Name: `${prefix}${audienceId}` }));
        return AudienceSchema.parse({ audienceId, topicArn: TopicArn });
      }),
    ),
  );
  sns.destroy();
  return { dynamo, documents, tableName, audiences: new Map(audiences.map((a) => [a.audienceId, a])) };
}

/**
 * Hands `matches` to `pipeline` as the alert run does: every match of a page of articles at once
 * (functions/core/alert-run.ts gives `pipeline.add` all matches of each provider page, a page being
 * {@link defaultPageSize} articles unless NEWS_API_PAGE_SIZE says otherwise), then one flush.
 * Matches of one article are consecutive, as `#match` returns them.
 */
export async function feed(pipeline: DeliveryPipeline, matches: readonly AudienceMatch[]): Promise<void> {
  let start = 0;
  let articles = 0;
  for (let i = 0; i < matches.length; i++) {
    if (i > 0 && matches[i]?.article !== matches[i - 1]?.article) articles += 1;
    if (articles === defaultPageSize) {
      await pipeline.add(matches.slice(start, i));
      start = i;
      articles = 0;
    }
  }
  if (start < matches.length) await pipeline.add(matches.slice(start));
  await pipeline.flush();
}

function runFigures(
  base: Pick<PublishingRun, 'mode' | 'concurrency' | 'notifications' | 'wallMs' | 'motoCpuMs' | 'nodeCpuMs'>,
  ledgerEntries: number,
  sns: { entries: number; calls: number; injectedMeanMs: number },
  extra: Partial<PublishingRun> = {},
): PublishingRun {
  const problems: string[] = [];
  if (ledgerEntries !== base.notifications)
    problems.push(`the ledger holds ${ledgerEntries} entries for ${base.notifications} notifications`);
  if (sns.entries !== base.notifications)
    problems.push(`SNS was sent ${sns.entries} entries for ${base.notifications} notifications`);
  return {
    ...base,
    ...extra,
    perSecond: problems.length === 0 ? base.notifications / (base.wallMs / 1000) : Number.NaN,
    ledgerEntries,
    snsEntries: sns.entries,
    publishBatchCalls: sns.calls,
    injectedMeanMs: sns.injectedMeanMs,
    ...(problems.length === 0 ? {} : { invalid: problems.join('; ') }),
  };
}

/** The alert run's own publishing step: DeliveryPipeline → SnsNotifier (PublishBatch) → ledger. */
async function runSingle(options: PublishingOptions, prefix: string): Promise<PublishingRun> {
  const { moto } = options;
  const resources = await createModeResources(moto.endpoint, prefix, options.audiences);
  const proxy = await startLatencyProxy({ target: moto.endpoint, delayMs: options.publishLatencyMs });
  const sns = new SNSClient(localAwsConfig(proxy.endpoint));
  const recorder = recordRequests(sns, 'SNS');
  try {
    const matches = publishingMatches([...resources.audiences.keys()], options.notifications, options.seed);
    const counts = emptyDeliveryCounts();
    const pipeline = new DeliveryPipeline({
      state: new DynamoStateStore({ documents: resources.documents, tableName: resources.tableName, log: silentLog }),
      notifier: new SnsNotifier({ client: sns, concurrency: options.snsConcurrency, log: silentLog }),
      log: silentLog,
      now: Date.now,
      audiences: resources.audiences,
      ledgerFlushDelayMs: options.ledgerFlushDelayMs,
      publishSignal: new AbortController().signal,
      lateBefore: 0,
      counts,
      applyDeliveryPreferences: true,
    });
    const dynamoRecorder = recordRequests(resources.dynamo, 'DynamoDB');
    const cpuBefore = motoCpuMs();
    const nodeBefore = process.cpuUsage();
    const started = performance.now();
    await feed(pipeline, matches);
    const wallMs = performance.now() - started;
    const cpuAfter = motoCpuMs();
    const nodeCpu = process.cpuUsage(nodeBefore);
    return runFigures(
      {
        mode: 'single',
        notifications: matches.length,
        wallMs,
        motoCpuMs: cpuBefore === undefined || cpuAfter === undefined ? undefined : cpuAfter - cpuBefore,
        nodeCpuMs: (nodeCpu.user + nodeCpu.system) / 1000,
      },
      await countLedgerEntries(resources.dynamo, resources.tableName),
      snsFigures(recorder.requests, proxy.requests),
      { dynamoRequests: byCommand(dynamoRecorder.requests.filter((r) => r.end <= started + wallMs)) },
    );
  } finally {
    recorder.uninstall();
    sns.destroy();
    resources.dynamo.destroy();
    await proxy.stop();
  }
}

function snsFigures(
  requests: readonly { command: string; items: number; failed: boolean }[],
  proxied: readonly { action: string | undefined; injectedMs: number }[],
): { entries: number; calls: number; injectedMeanMs: number } {
  const publishes = requests.filter((r) => r.command === 'PublishBatchCommand');
  const held = proxied.filter((r) => r.action === 'PublishBatch');
  return {
    entries: publishes.reduce((sum, r) => sum + r.items, 0),
    calls: publishes.length,
    injectedMeanMs: held.length === 0 ? 0 : held.reduce((sum, r) => sum + r.injectedMs, 0) / held.length,
  };
}

/** In sharded mode the run queues; a publish from it would be a bug the figures must not hide. */
const refusingNotifier: Notifier = {
  publish() {
    throw new Error('the run published in sharded mode: the pipeline ignored its queue');
  },
};

/**
 * One Lambda execution environment of the publisher: its own SNS client, notifier (with its own
 * SNS_CONCURRENCY bound), state store and handler, as each concurrent invocation has in Lambda.
 * One shared notifier would cap every publisher together at one function's SNS_CONCURRENCY.
 */
/** A log that only counts warnings and errors by message and error name (bodies never reach it). */
function countingLog(problems: Record<string, number>): Log {
  const count = (message: string, extra?: Record<string, unknown>) => {
    const name =
      typeof extra?.errorName === 'string' ? extra.errorName : typeof extra?.name === 'string' ? extra.name : '';
    const key = name === '' ? message : `${message} (${name})`;
    problems[key] = (problems[key] ?? 0) + 1;
  };
  return { debug() {}, info() {}, warn: count, error: count };
}

function publisherEnvironment(
  options: PublishingOptions,
  resources: ModeResources,
  dispatchTable: string,
  snsEndpoint: string,
  log: Log,
  onSnsClient: (client: SNSClient) => void,
): SqsBatchHandler {
  const sns = new SNSClient(localAwsConfig(snsEndpoint));
  onSnsClient(sns);
  const handler = createWorkItemHandler({
    state: new DynamoStateStore({ documents: resources.documents, tableName: resources.tableName, log: silentLog }),
    notifier: new SnsNotifier({ client: sns, concurrency: options.snsConcurrency, log: silentLog }),
    dispatches: new DynamoDispatchStore({ documents: resources.documents, tableName: dispatchTable, log: silentLog }),
    log,
    now: Date.now,
    ledgerFlushDelayMs: options.ledgerFlushDelayMs,
    maxReceiveCount: workMaxReceiveCount,
  });
  return handler;
}

/**
 * The run queues (DeliveryPipeline with its queue → SqsWorkQueue) while the emulated event source
 * mapping (sandbox/sqs-event-source.ts) feeds `concurrency` publisher environments; the clock
 * stops when the sealed dispatch counts every item done.
 */
async function runSharded(options: PublishingOptions, prefix: string, concurrency: number): Promise<PublishingRun> {
  const { moto } = options;
  const resources = await createModeResources(moto.endpoint, prefix, options.audiences);
  const sqs = new SQSClient(localAwsConfig(moto.endpoint));
  const queues = await createWorkQueues(sqs, prefix);
  // moto deep-copies every table a transaction names, on every TransactWriteItems: with the ledger
  // in the same table each completion would copy the whole ledger (quadratic, gigabytes at 50,000
  // entries), a cost DynamoDB does not have. The dispatch items and the run lease they are checked
  // against live in a table of their own with the same key schema; the ledger, holds and the
  // publishers' idempotency records stay in the state table.
  const dispatchTable = `${prefix}dispatch`;
  await createStateTable(resources.dynamo, dispatchTable);
  const proxy = await startLatencyProxy({ target: moto.endpoint, delayMs: options.publishLatencyMs });
  const snsClients: SNSClient[] = [];
  const recorders: ReturnType<typeof recordRequests>[] = [];
  const problems: Record<string, number> = {};
  const idle: SqsBatchHandler[] = Array.from({ length: concurrency }, () =>
    publisherEnvironment(options, resources, dispatchTable, proxy.endpoint, countingLog(problems), (client) => {
      snsClients.push(client);
      recorders.push(recordRequests(client, 'SNS'));
    }),
  );
  // The mapping runs at most `concurrency` invocations at once, so an environment is always free.
  const handler: SqsBatchHandler = async (event, context) => {
    const environment = idle.pop();
    if (environment === undefined) throw new Error('more invocations at once than publisher environments');
    try {
      return await environment(event, context);
    } finally {
      idle.push(environment);
    }
  };
  const source = startLocalEventSource({
    client: sqs,
    queueUrl: queues.queueUrl,
    handler,
    concurrency,
    batchSize: options.publisherBatchSize,
    // The stack's batching window: Lambda fills a batch for up to this long before it invokes.
    maxBatchingWindowMs: ShardedPublishing.batchingWindow.toMilliseconds(),
    visibilityTimeoutSeconds: workVisibilityTimeoutSeconds,
    log: silentLog,
  });
  let stopped = false;
  try {
    const state = new DynamoStateStore({
      documents: resources.documents,
      tableName: resources.tableName,
      log: silentLog,
    });
    const dispatches = new DynamoDispatchStore({
      documents: resources.documents,
      tableName: dispatchTable,
      log: silentLog,
    });
    const matches = publishingMatches([...resources.audiences.keys()], options.notifications, options.seed);
    const dispatchId = `bench-sharded-${concurrency}`;
    const lease = await new DynamoStateStore({
      documents: resources.documents,
      tableName: dispatchTable,
      log: silentLog,
    }).acquireLease('bench-publishing', 3_600_000, Date.now());
    const counts = emptyDeliveryCounts();
    const pipeline = new DeliveryPipeline({
      state,
      notifier: refusingNotifier,
      log: silentLog,
      now: Date.now,
      audiences: resources.audiences,
      ledgerFlushDelayMs: options.ledgerFlushDelayMs,
      publishSignal: new AbortController().signal,
      lateBefore: 0,
      counts,
      applyDeliveryPreferences: true,
      queue: {
        queue: new SqsWorkQueue({ client: sqs, queueUrl: queues.queueUrl, dispatches, log: silentLog }),
        dispatchId,
      },
    });
    const dynamoRecorder = recordRequests(resources.dynamo, 'DynamoDB');
    const cpuBefore = motoCpuMs();
    const nodeBefore = process.cpuUsage();
    const started = performance.now();
    await dispatches.open(lease, dispatchId, Date.now());
    await feed(pipeline, matches);
    await dispatches.seal(lease, dispatchId, { expected: counts.workItemsQueued }, Date.now());
    // The run's own wait (functions/core/dispatch.ts): reads of the head, further apart each time.
    const head = await waitForDispatch(dispatches, dispatchId, AbortSignal.timeout(3_600_000));
    if (head === undefined || !dispatchComplete(head)) throw new Error(`dispatch ${dispatchId} did not complete`);
    const wallMs = performance.now() - started;
    const cpuAfter = motoCpuMs();
    const nodeCpu = process.cpuUsage(nodeBefore);
    await dispatches.close(lease, dispatchId, 'completed', Date.now());
    await source.stop();
    stopped = true;
    const requests = recorders.flatMap((r) => r.requests);
    return runFigures(
      {
        mode: 'sharded',
        concurrency,
        notifications: matches.length,
        wallMs,
        motoCpuMs: cpuBefore === undefined || cpuAfter === undefined ? undefined : cpuAfter - cpuBefore,
        nodeCpuMs: (nodeCpu.user + nodeCpu.system) / 1000,
      },
      await countLedgerEntries(resources.dynamo, resources.tableName),
      snsFigures(requests, proxy.requests),
      {
        workItems: counts.workItemsQueued,
        invocations: source.stats().invocations,
        publisherProblems: problems,
        dynamoRequests: byCommand(dynamoRecorder.requests.filter((r) => r.end <= started + wallMs)),
        deadLettered: await queuedMessages(sqs, queues.deadLetterQueueUrl),
      },
    );
  } finally {
    if (!stopped) await source.stop();
    for (const recorder of recorders) recorder.uninstall();
    for (const client of snsClients) client.destroy();
    sqs.destroy();
    resources.dynamo.destroy();
    await proxy.stop();
  }
}

function byCommand(
  requests: readonly { command: string; start: number; end: number }[],
): Record<string, { count: number; ms: number }> {
  const out: Record<string, { count: number; ms: number }> = {};
  for (const r of requests) {
    const name = r.command.replace(/Command$/, '');
    const entry = out[name] ?? { count: 0, ms: 0 };
    entry.count += 1;
    entry.ms += r.end - r.start;
    out[name] = entry;
  }
  return out;
}

async function queuedMessages(sqs: SQSClient, queueUrl: string): Promise<number> {
  const { Attributes } = await sqs.send(
    new GetQueueAttributesCommand({
      QueueUrl: queueUrl,
      AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'],
    }),
  );
  return (
    Number(Attributes?.ApproximateNumberOfMessages ?? 0) +
    Number(Attributes?.ApproximateNumberOfMessagesNotVisible ?? 0)
  );
}

/** Runs every mode once, each on a wiped moto server; see the module comment. */
export async function runPublishing(options: PublishingOptions): Promise<PublishingResults> {
  const progress = options.progress ?? (() => {});
  const runs: PublishingRun[] = [];
  await options.moto.reset();
  progress(
    `publishing: single, ${options.notifications} notifications over ${options.audiences} audiences, PublishBatch +${options.publishLatencyMs} ms`,
  );
  runs.push(await runSingle(options, `bench-pub-single-${process.pid}-`));
  progress(`publishing: single took ${((runs[0]?.wallMs ?? 0) / 1000).toFixed(1)} s`);
  for (const concurrency of options.publisherConcurrencies) {
    // A wiped emulator for each mode: moto keeps what it was sent, and would slow the later modes.
    await options.moto.reset();
    progress(`publishing: sharded, ${concurrency} publisher${concurrency === 1 ? '' : 's'}`);
    const run = await runSharded(options, `bench-pub-sharded${concurrency}-${process.pid}-`, concurrency);
    runs.push(run);
    progress(`publishing: sharded at ${concurrency} took ${(run.wallMs / 1000).toFixed(1)} s`);
  }
  const { moto: _moto, progress: _progress, ...rest } = options;
  return { options: rest, runs, cores: availableParallelism() };
}
