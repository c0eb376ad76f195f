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
 * audiences), handed to a real {@link DeliveryPipeline} in article order in groups of 100 matches,
 * as the alert run hands over a page's matches. The clock starts when the first group goes in and
 * stops when the last notification is in the ledger (single: the pipeline's flush; sharded: the
 * dispatch head counts every queued item done). The ledger lookup, rendering and (sharded)
 * queueing are inside the time in both modes. DynamoDB and SQS talk to moto directly; only SNS
 * goes through the proxy. moto's own CPU time (its process is a child of this one) is read from
 * /proc around each mode: close to one core for the whole run means moto, not the mode, set the
 * pace.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { CreateTableCommand, DynamoDBClient, ScanCommand, type ScanCommandOutput } from '@aws-sdk/client-dynamodb';
import { CreateTopicCommand, SNSClient } from '@aws-sdk/client-sns';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import pLimit from 'p-limit';
import { DynamoStateStore } from '#aws/dynamo-state-store';
import { SnsNotifier } from '#aws/sns-notifier';
import { stateTableKey } from '#aws/table-layout';
import { DeliveryPipeline, emptyDeliveryCounts } from '#core/delivery-pipeline';
import { type Audience, type AudienceMatch, AudienceSchema, type RuleMatch } from '#core/model';
import { silentLog } from '#core/ports';
import { localAwsConfig, type MotoServer } from '#sandbox/moto';
import { startLatencyProxy } from './latency-proxy.ts';
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
  /** moto's CPU time during the run (ms); undefined when it could not be read. */
  readonly motoCpuMs: number | undefined;
  /** Sharded: work items queued, and publisher invocations. */
  readonly workItems?: number;
  readonly invocations?: number;
  /** Why the figure is not valid (lost or doubled notifications), if it is not. */
  readonly invalid?: string;
}

/** Everything the benchmark measured. */
export interface PublishingResults {
  readonly options: Omit<PublishingOptions, 'moto' | 'progress'>;
  readonly runs: readonly PublishingRun[];
}

const rules: RuleMatch[] = [
  { ruleId: 'bench', description: 'Benchmark rule', urgent: false, reasons: [{ kind: 'keyword', term: 'news' }] },
];

/** The matches of the benchmark: `perAudience` articles for each audience, in article order. */
export function publishingMatches(
  audienceIds: readonly string[],
  notifications: number,
  seed: number,
): AudienceMatch[] {
  const perArticle = Math.max(1, Math.round(notifications / audienceIds.length));
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

async function createModeResources(endpoint: string, prefix: string, audienceCount: number): Promise<ModeResources> {
  const dynamo = new DynamoDBClient(localAwsConfig(endpoint));
  const documents = DynamoDBDocumentClient.from(dynamo, { marshallOptions: { removeUndefinedValues: true } });
  const tableName = `${prefix}state`;
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

/** Hands `matches` to `pipeline` as the alert run does: page-sized groups, then one flush. */
async function feed(pipeline: DeliveryPipeline, matches: readonly AudienceMatch[]): Promise<void> {
  for (let i = 0; i < matches.length; i += 100) await pipeline.add(matches.slice(i, i + 100));
  await pipeline.flush();
}

function runFigures(
  base: Pick<PublishingRun, 'mode' | 'concurrency' | 'notifications' | 'wallMs' | 'motoCpuMs'>,
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
    const cpuBefore = motoCpuMs();
    const started = performance.now();
    await feed(pipeline, matches);
    const wallMs = performance.now() - started;
    const cpuAfter = motoCpuMs();
    return runFigures(
      {
        mode: 'single',
        notifications: matches.length,
        wallMs,
        motoCpuMs: cpuBefore === undefined || cpuAfter === undefined ? undefined : cpuAfter - cpuBefore,
      },
      await countLedgerEntries(resources.dynamo, resources.tableName),
      snsFigures(recorder.requests, proxy.requests),
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
  const { moto: _moto, progress: _progress, ...rest } = options;
  return { options: rest, runs };
}
