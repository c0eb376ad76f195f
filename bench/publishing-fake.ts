/**
 * Publishing against an emulator whose answers cost no CPU (issue 33): the same DeliveryPipeline,
 * SqsWorkQueue packing, work item bodies and publisher batch loop as bench/publishing.ts, with
 * SNS, DynamoDB and SQS replaced by in-process fakes at the ports (functions/core/ports.ts) that
 * answer after a fixed latency and do next to nothing else: Map reads and writes. The in-process
 * fakes of the test suite (test/support/fake-ports.ts, memory-dispatch.ts) keep the state; every
 * call to a store or to SNS waits its latency first. SQS is a list the event source takes batches
 * from (as JSON bodies, parsed by the publisher as it parses an SQS record).
 *
 * What it measures that moto cannot: the process's CPU is then the code's own (the run, the
 * packing, the publishers), with no emulator or SDK in it, so single and sharded compare on what
 * they cost per notification; and the publishers' rate is set by the latencies and that CPU
 * alone, so 1 → 2 publishers shows how the mode scales where each service answers at its own
 * speed. Every run must end with the ledger holding each notification once and SNS having been
 * sent each once, or it is reported invalid.
 *
 *   npx tsx bench/publishing-fake.ts    # single, sharded at 1 and 2 publishers, twice, interleaved
 *
 * Not yet part of `npm run bench`: bench/RESULTS.md's Targets rows for sharded publishing come from
 * the moto runs of bench/publishing.ts (SDK serialization and signing included, as on Lambda).
 * What this adds is the code's own CPU (no SDK, no emulator) and the 1 → 2 publisher scaling.
 */
import './env.ts';
import { resolve } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import type { Context, SQSEvent, SQSRecord } from 'aws-lambda';
import pLimit from 'p-limit';
import { DeliveryPipeline, emptyDeliveryCounts } from '#core/delivery-pipeline';
import { waitForDispatch } from '#core/dispatch';
import { type Audience, AudienceSchema } from '#core/model';
import {
  deliveryId,
  dispatchComplete,
  type EnqueueOutcome,
  type Lease,
  type Notifier,
  type OutboundMessage,
  type PublishedMessage,
  type PublishOutcome,
  silentLog,
  type WorkItem,
} from '#core/ports';
import { packWorkItems, workItemBody } from '#core/work-items';
import { MemoryStateStore } from '#test/fake-ports';
import { MemoryDispatchStore } from '#test/memory-dispatch';
import { createWorkItemHandler } from '../functions/publisher/process.ts';
import { publishingMatches } from './publishing.ts';

/** Fixed latencies of the fakes (ms). */
export interface FakeLatencies {
  /** One PublishBatch. */
  readonly snsMs: number;
  /** One DynamoDB request (a store call: a lookup, a batch write, a transaction). */
  readonly dynamoMs: number;
  /** One SQS send or receive. */
  readonly sqsMs: number;
}

/** One mode against the fakes. */
export interface FakeRun {
  readonly mode: 'single' | 'sharded';
  readonly publishers?: number;
  readonly notifications: number;
  readonly wallMs: number;
  readonly perSecond: number;
  /** This process's CPU over the run (ms): the code's own, the fakes being Map operations. */
  readonly cpuMs: number;
  /** Store calls (each a DynamoDB request in production) and PublishBatch calls. */
  readonly storeCalls: number;
  readonly publishCalls: number;
  readonly invocations?: number;
  readonly invalid?: string;
}

/** Every call of `target`'s methods waits `ms` first, and is counted. */
function withLatency<T extends object>(target: T, ms: number, counter: { calls: number }): T {
  return new Proxy(target, {
    get(object, property, receiver) {
      const value = Reflect.get(object, property, receiver);
      if (typeof value !== 'function') return value;
      return async (...args: unknown[]) => {
        counter.calls += 1;
        await delay(ms);
        return (value as (...a: unknown[]) => unknown).apply(object, args);
      };
    },
  });
}

/** SNS at a fixed latency: PublishBatch of 10 per topic, `concurrency` in flight, as SnsNotifier sends them. */
class FakeSns implements Notifier {
  readonly sent = new Map<string, number>();
  calls = 0;
  readonly #limit;
  readonly #ms: number;
  constructor(concurrency: number, ms: number, sent: Map<string, number>) {
    this.#limit = pLimit(concurrency);
    this.#ms = ms;
    this.sent = sent;
  }

  async publish(
    messages: readonly OutboundMessage[],
    options: { signal?: AbortSignal; onPublished: (batch: readonly PublishedMessage[]) => Promise<void> },
  ): Promise<PublishOutcome> {
    const byTopic = new Map<string, OutboundMessage[]>();
    for (const message of messages) byTopic.set(message.topicArn, [...(byTopic.get(message.topicArn) ?? []), message]);
    const batches: OutboundMessage[][] = [];
    for (const topic of byTopic.values())
      for (let i = 0; i < topic.length; i += 10) batches.push(topic.slice(i, i + 10));
    const published: PublishedMessage[] = [];
    await Promise.all(
      batches.map((batch) =>
        this.#limit(async () => {
          this.calls += 1;
          await delay(this.#ms);
          const accepted = batch.map((message, index) => {
            const id = deliveryId(message.key);
            this.sent.set(id, (this.sent.get(id) ?? 0) + 1);
            return { message, messageId: `fake-${this.calls}-${index}` };
          });
          published.push(...accepted);
          await options.onPublished(accepted);
        }),
      ),
    );
    return { published, failed: [] };
  }
}

/** SQS at a fixed latency: items kept in order, sent and received in batches of 10. */
class FakeWorkQueue {
  readonly bodies: { id: string; body: string }[] = [];
  #waiting: (() => void)[] = [];
  constructor(
    readonly dispatches: MemoryDispatchStore,
    readonly ms: number,
    readonly counter: { calls: number },
  ) {}

  async enqueue(dispatchId: string, messages: readonly OutboundMessage[]): Promise<EnqueueOutcome> {
    const { items } = packWorkItems(dispatchId, messages, { now: Date.now() });
    this.counter.calls += 1;
    await delay(this.ms);
    await this.dispatches.countEnqueued(dispatchId, items.length);
    for (let i = 0; i < items.length; i += 10) {
      await delay(this.ms);
      for (const item of items.slice(i, i + 10)) this.bodies.push({ id: item.itemId, body: workItemBody(item) });
    }
    for (const wake of this.#waiting.splice(0)) wake();
    return { items: items.length, queued: items.flatMap((item: WorkItem) => item.messages), failed: [] };
  }

  /** Up to `size` bodies, waiting (fixed latency, then for more) while the queue is empty. */
  async receive(size: number, stopped: () => boolean): Promise<{ id: string; body: string }[]> {
    for (;;) {
      await delay(this.ms);
      if (this.bodies.length > 0) return this.bodies.splice(0, size);
      if (stopped()) return [];
      await new Promise<void>((resolve) => {
        this.#waiting.push(resolve);
        setTimeout(resolve, 50);
      });
    }
  }
}

const record = (id: string, body: string): SQSRecord => ({
  messageId: id,
  receiptHandle: id,
  body,
  attributes: {
    ApproximateReceiveCount: '1',
    SentTimestamp: '0',
    SenderId: 'fake',
    ApproximateFirstReceiveTimestamp: '0',
  },
  messageAttributes: {},
  md5OfBody: '',
  eventSource: 'aws:sqs',
  eventSourceARN: 'arn:aws:sqs:us-east-1:123456789012:fake-work',
  awsRegion: 'us-east-1',
});

const context = (): Context =>
  ({ awsRequestId: `fake-${Math.random()}`, getRemainingTimeInMillis: () => 60_000 }) as Context;

function audiencesOf(count: number): Map<string, Audience> {
  return new Map(
    Array.from({ length: count }, (_, i) => {
      const audienceId = `a${String(i).padStart(5, '0')}`;
      return [
        audienceId,
        AudienceSchema.parse({ audienceId, topicArn: `arn:aws:sns:us-east-1:123456789012:fake-${audienceId}` }),
      ];
    }),
  );
}

function check(notifications: number, ledger: MemoryStateStore, sent: ReadonlyMap<string, number>): string | undefined {
  const problems: string[] = [];
  if (ledger.ledger.size !== notifications) problems.push(`the ledger holds ${ledger.ledger.size} of ${notifications}`);
  const total = [...sent.values()].reduce((sum, n) => sum + n, 0);
  if (sent.size !== notifications || total !== notifications)
    problems.push(`SNS was sent ${total} for ${notifications}`);
  return problems.length > 0 ? problems.join('; ') : undefined;
}

/** The options the fake runs share with the moto ones. */
export interface FakeOptions {
  readonly notifications: number;
  readonly audiences: number;
  readonly seed: number;
  readonly snsConcurrency: number;
  readonly ledgerFlushDelayMs: number;
  readonly publisherBatchSize: number;
  readonly latencies: FakeLatencies;
}

async function feed(pipeline: DeliveryPipeline, matches: ReturnType<typeof publishingMatches>): Promise<void> {
  for (let i = 0; i < matches.length; i += 100) await pipeline.add(matches.slice(i, i + 100));
  await pipeline.flush();
}

/** The run publishes, against the fakes. */
export async function fakeSingle(options: FakeOptions): Promise<FakeRun> {
  const audiences = audiencesOf(options.audiences);
  const matches = publishingMatches([...audiences.keys()], options.notifications, options.seed);
  const store = { calls: 0 };
  const ledger = new MemoryStateStore();
  const sent = new Map<string, number>();
  const sns = new FakeSns(options.snsConcurrency, options.latencies.snsMs, sent);
  const pipeline = new DeliveryPipeline({
    state: withLatency(ledger, options.latencies.dynamoMs, store),
    notifier: sns,
    log: silentLog,
    now: Date.now,
    audiences,
    ledgerFlushDelayMs: options.ledgerFlushDelayMs,
    publishSignal: new AbortController().signal,
    lateBefore: 0,
    counts: emptyDeliveryCounts(),
    applyDeliveryPreferences: true,
  });
  const cpu = process.cpuUsage();
  const started = performance.now();
  await feed(pipeline, matches);
  const wallMs = performance.now() - started;
  const used = process.cpuUsage(cpu);
  const invalid = check(matches.length, ledger, sent);
  return {
    mode: 'single',
    notifications: matches.length,
    wallMs,
    perSecond: invalid === undefined ? matches.length / (wallMs / 1000) : Number.NaN,
    cpuMs: (used.user + used.system) / 1000,
    storeCalls: store.calls,
    publishCalls: sns.calls,
    ...(invalid === undefined ? {} : { invalid }),
  };
}

/** The run queues, `publishers` publisher environments publish, against the fakes. */
export async function fakeSharded(options: FakeOptions, publishers: number): Promise<FakeRun> {
  const audiences = audiencesOf(options.audiences);
  const matches = publishingMatches([...audiences.keys()], options.notifications, options.seed);
  const store = { calls: 0 };
  const ledger = new MemoryStateStore();
  const dispatchStore = new MemoryDispatchStore();
  const dispatches = withLatency(dispatchStore, options.latencies.dynamoMs, store);
  const state = withLatency(ledger, options.latencies.dynamoMs, store);
  const queue = new FakeWorkQueue(dispatchStore, options.latencies.sqsMs, { calls: 0 });
  const sent = new Map<string, number>();
  const snsClients: FakeSns[] = [];
  const handlers = Array.from({ length: publishers }, () => {
    const sns = new FakeSns(options.snsConcurrency, options.latencies.snsMs, sent);
    snsClients.push(sns);
    return createWorkItemHandler({
      state,
      notifier: sns,
      dispatches,
      log: silentLog,
      now: Date.now,
      ledgerFlushDelayMs: options.ledgerFlushDelayMs,
      maxReceiveCount: 3,
    });
  });
  const dispatchId = `fake-sharded-${publishers}`;
  const lease: Lease = { owner: 'fake-run', expiresAt: Number.MAX_SAFE_INTEGER } as Lease;
  const counts = emptyDeliveryCounts();
  const pipeline = new DeliveryPipeline({
    state,
    notifier: {
      publish() {
        throw new Error('the run published in sharded mode');
      },
    },
    log: silentLog,
    now: Date.now,
    audiences,
    ledgerFlushDelayMs: options.ledgerFlushDelayMs,
    publishSignal: new AbortController().signal,
    lateBefore: 0,
    counts,
    applyDeliveryPreferences: true,
    queue: { queue, dispatchId },
  });
  let stopped = false;
  let invocations = 0;
  // The event source: each publisher takes up to a batch, invokes, and takes the next.
  const publishersDone = handlers.map(async (handler) => {
    for (;;) {
      const batch = await queue.receive(options.publisherBatchSize, () => stopped);
      if (batch.length === 0) return;
      invocations += 1;
      const event: SQSEvent = { Records: batch.map(({ id, body }) => record(id, body)) };
      const response = await handler(event, context());
      if (response.batchItemFailures.length > 0) throw new Error('a fake publisher reported failures');
    }
  });
  const cpu = process.cpuUsage();
  const started = performance.now();
  await dispatches.open(lease, dispatchId, Date.now());
  await feed(pipeline, matches);
  await dispatches.seal(lease, dispatchId, { expected: counts.workItemsQueued }, Date.now());
  const head = await waitForDispatch(dispatches, dispatchId, AbortSignal.timeout(3_600_000));
  const wallMs = performance.now() - started;
  const used = process.cpuUsage(cpu);
  stopped = true;
  await Promise.all(publishersDone);
  const invalid =
    head === undefined || !dispatchComplete(head)
      ? 'the dispatch did not complete'
      : check(matches.length, ledger, sent);
  return {
    mode: 'sharded',
    publishers,
    notifications: matches.length,
    wallMs,
    perSecond: invalid === undefined ? matches.length / (wallMs / 1000) : Number.NaN,
    cpuMs: (used.user + used.system) / 1000,
    storeCalls: store.calls,
    publishCalls: snsClients.reduce((sum, sns) => sum + sns.calls, 0),
    invocations,
    ...(invalid === undefined ? {} : { invalid }),
  };
}

/** The publishing part's full size and the stack's defaults, with about AWS's latencies. */
const DEFAULT_OPTIONS: FakeOptions = {
  notifications: 10_000,
  audiences: 400,
  seed: 20_250_101,
  snsConcurrency: 8,
  ledgerFlushDelayMs: 100,
  publisherBatchSize: 10,
  latencies: { snsMs: 40, dynamoMs: 10, sqsMs: 10 },
};

function describeRun(run: FakeRun, single: FakeRun | undefined): string {
  const cpu = run.cpuMs / run.notifications;
  const label =
    run.mode === 'single' ? 'single' : `sharded, ${run.publishers} publisher${run.publishers === 1 ? '' : 's'}`;
  const ratio =
    single === undefined || run === single
      ? ''
      : ` (${(cpu / (single.cpuMs / single.notifications)).toFixed(2)}× single)`;
  return `${label}: ${run.perSecond.toFixed(0)} notifications/s, CPU ${cpu.toFixed(3)} ms per notification${ratio}, ${(run.storeCalls / run.notifications).toFixed(3)} DynamoDB requests per notification, ${run.publishCalls} PublishBatch${run.invocations === undefined ? '' : `, ${run.invocations} invocations`}${run.invalid === undefined ? '' : `; INVALID: ${run.invalid}`}`;
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  for (let round = 1; round <= 2; round++) {
    const single = await fakeSingle(DEFAULT_OPTIONS);
    const runs = [single, await fakeSharded(DEFAULT_OPTIONS, 1), await fakeSharded(DEFAULT_OPTIONS, 2)];
    for (const run of runs) process.stdout.write(`round ${round}, ${describeRun(run, single)}\n`);
  }
}
