/**
 * Publishing against an emulator whose answers cost no CPU (issue 33): the same DeliveryPipeline,
 * work item packing, publisher batch loop, and the real SnsNotifier and SqsWorkQueue with the real
 * AWS SDK v3 clients (serialization, signing, parsing, SQS's MD5 checks), as bench/publishing.ts
 * runs them against moto. What differs is below the SDK: each client's request handler is an
 * in-process fake that reads the request, answers after a fixed latency, and keeps the state, and
 * the CPU of its own work (parsing the request, building the answer, the MD5s SQS would compute)
 * is measured and taken out of the process's. DynamoDB stays at the ports (the test suite's
 * in-memory stores, each call waiting its latency and counted): its requests are counted, not
 * serialized, in both modes.
 *
 * What it measures that moto cannot: the functions' CPU (the run, the packing, the publishers,
 * the SDK) with no emulator in it, so single and sharded compare on what they cost per
 * notification; and the publishers' rate is set by the latencies and that CPU alone, so 1 → 2
 * publishers shows how the mode scales where each service answers at its own speed. The event
 * source is Lambda's: it takes batches from the queue, and each invocation's event is serialized
 * (the poller's work, not counted) and parsed (the function's runtime does that, counted). Every
 * run must end with the ledger holding each notification once and SNS having been sent each once,
 * or it is reported invalid.
 *
 *   npx tsx bench/publishing-fake.ts    # single, sharded at 1 and 2 publishers, twice, interleaved
 */
import './env.ts';
import { Buffer } from 'node:buffer';
import { createHash } from 'node:crypto';
import { resolve } from 'node:path';
import { Readable } from 'node:stream';
import { setTimeout as delay } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { SNSClient } from '@aws-sdk/client-sns';
import { type MessageAttributeValue, SQSClient } from '@aws-sdk/client-sqs';
import type { Context, SQSEvent, SQSRecord } from 'aws-lambda';
import { DeliveryPipeline, emptyDeliveryCounts } from '#core/delivery-pipeline';
import { waitForDispatch } from '#core/dispatch';
import { type Audience, AudienceSchema } from '#core/model';
import {
  dispatchComplete,
  type Lease,
  publisherBatchMax,
  silentLog,
  transactionMaxActions,
  type WorkItemRef,
} from '#core/ports';
import { MemoryStateStore } from '#test/fake-ports';
import { MemoryDispatchStore } from '#test/memory-dispatch';
import { batchGetLimit, batchWriteLimit } from '../functions/aws/dynamo-batch.ts';
import { SnsNotifier } from '../functions/aws/sns-notifier.ts';
import { messageAttributeBytes, SqsWorkQueue } from '../functions/aws/sqs-work-queue.ts';
import { createWorkItemHandler } from '../functions/publisher/process.ts';
import { billedRequests } from './cost-model.ts';
import { feed, publishingMatches } from './publishing.ts';
import { median } from './stats.ts';

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
  /**
   * Notifications per second: single, over the run; sharded, the publishers' over their draining
   * (from the run's seal until the invocation that completed the dispatch returned, not until the
   * run's polling wait noticed), the run having queued everything first.
   */
  readonly perSecond: number;
  /** This process's CPU over the run less the emulator's (ms): the functions' and the SDK's. */
  readonly cpuMs: number;
  /** Store calls (each a DynamoDB request in production) and PublishBatch calls. */
  readonly storeCalls: number;
  readonly publishCalls: number;
  /** SendMessageBatch calls (sharded). */
  readonly sendCalls?: number;
  /**
   * Sharded: the work items' message bodies sent, in UTF-8 bytes as SQS counts them, and the
   * SendMessageBatch requests SQS bills for them (each 64 KiB of a request's payload is one).
   */
  readonly sentBytes?: number;
  readonly billedSends?: number;
  /** Sharded: from the start until the run had queued everything and sealed its dispatch (ms), alone. */
  readonly queuedMs?: number;
  /**
   * Sharded: from the start until the run's wait for its dispatch saw it complete (ms): later than
   * `wallMs` by the wait's polling (functions/core/dispatch.ts), which is the run's, not the publishers'.
   */
  readonly noticedMs?: number;
  readonly invocations?: number;
  readonly invalid?: string;
}

/**
 * DynamoDB requests the adapters (functions/aws/dynamo-*.ts) make for one store call: the ledger's
 * reads in BatchGetItem of 100 keys and its writes in BatchWriteItem of 25, claims in a read of
 * each dispatch's head and transactions of 100 items, settlements in transactions of 99 items and
 * the dispatch's head;
 * every other call one request.
 */
function dynamoRequests(method: string, args: readonly unknown[]): number {
  const many = (items: unknown, per: number) => Math.max(1, Math.ceil((items as readonly unknown[]).length / per));
  switch (method) {
    case 'findDelivered':
    case 'readDeliveries':
      return many(args[0], batchGetLimit);
    case 'recordDelivered':
    case 'recordUndeliverable':
      return many(args[0], batchWriteLimit);
    case 'claimItems':
      // A read of each dispatch's head (is it closed?), then the claim transactions.
      return (
        new Set((args[0] as readonly WorkItemRef[]).map((ref) => ref.dispatchId)).size +
        many(args[0], transactionMaxActions)
      );
    case 'settleItems': {
      const { done, released } = args[1] as { done: readonly WorkItemRef[]; released: readonly WorkItemRef[] };
      const byDispatch = new Map<string, number>();
      for (const ref of [...done, ...released])
        byDispatch.set(ref.dispatchId, (byDispatch.get(ref.dispatchId) ?? 0) + 1);
      return [...byDispatch.values()].reduce((sum, items) => sum + Math.ceil(items / publisherBatchMax), 0) || 1;
    }
    default:
      return 1;
  }
}

/** Every call of `target`'s methods waits `ms` first, and is counted as the requests it makes. */
function withLatency<T extends object>(target: T, ms: number, counter: { calls: number }): T {
  return new Proxy(target, {
    get(object, property, receiver) {
      const value = Reflect.get(object, property, receiver);
      if (typeof value !== 'function') return value;
      return async (...args: unknown[]) => {
        counter.calls += dynamoRequests(String(property), args);
        // A claim waits for its head read before its transaction: two round trips.
        await delay(property === 'claimItems' ? 2 * ms : ms);
        return (value as (...a: unknown[]) => unknown).apply(object, args);
      };
    },
  });
}

/** CPU (µs) the emulator spent: taken out of the process's, which is then the functions' own. */
interface EmulatorCpu {
  micros: number;
}

/** Runs `work`, adding its CPU to `cpu`. */
function apart<T>(cpu: EmulatorCpu, work: () => T): T {
  const started = process.cpuUsage();
  try {
    return work();
  } finally {
    const used = process.cpuUsage(started);
    cpu.micros += used.user + used.system;
  }
}

interface Answer {
  readonly contentType: string;
  readonly body: string;
}

/** The parts of a request the fakes read (the SDK's HttpRequest). */
interface FakeRequest {
  readonly headers: Record<string, string>;
  readonly body?: unknown;
}

/**
 * An SDK request handler in place of the network: builds the answer in-process (its CPU counted
 * in `cpu`), and returns it after `ms`, as a service at a fixed latency would.
 */
function fakeHandler(
  ms: number,
  cpu: EmulatorCpu,
  counter: { calls: number },
  answer: (request: FakeRequest) => Answer,
) {
  return {
    metadata: { handlerProtocol: 'in-process' },
    async handle(request: FakeRequest) {
      counter.calls += 1;
      const reply = apart(cpu, () => answer(request));
      await delay(ms);
      return {
        response: apart(cpu, () => ({
          statusCode: 200,
          reason: 'OK',
          headers: { 'content-type': reply.contentType, 'x-amzn-requestid': 'fake' },
          body: Readable.from([Buffer.from(reply.body)]),
        })),
      };
    },
    updateHttpClientConfig() {},
    httpHandlerConfigs: () => ({}),
    destroy() {},
  };
}

/**
 * A request body as text (the SDK hands some as bytes). Read through a view of the bytes: the JSON
 * protocols' bodies are a Uint8Array subclass whose valueOf() converts them to a string with a
 * deprecation warning, and Buffer.from(value) calls valueOf().
 */
const text = (body: unknown): string =>
  body instanceof Uint8Array
    ? Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8')
    : String(body);

const md5 = (...parts: string[]): string => {
  const hash = createHash('md5');
  for (const part of parts) hash.update(part);
  return hash.digest('hex');
};

/** SNS PublishBatch (query protocol): every entry accepted, each (topic, message) counted in `sent`. */
function snsAnswer(sent: Map<string, number>): (request: FakeRequest) => Answer {
  let next = 0;
  return (request) => {
    const form = new URLSearchParams(text(request.body));
    if (form.get('Action') !== 'PublishBatch')
      throw new Error(`the fake SNS answers PublishBatch, not ${form.get('Action')}`);
    const topic = form.get('TopicArn') ?? '';
    const members: string[] = [];
    for (let i = 1; ; i++) {
      const id = form.get(`PublishBatchRequestEntries.member.${i}.Id`);
      if (id === null) break;
      const key = md5(topic, '\n', form.get(`PublishBatchRequestEntries.member.${i}.Message`) ?? '');
      sent.set(key, (sent.get(key) ?? 0) + 1);
      members.push(`<member><Id>${id}</Id><MessageId>fake-${++next}</MessageId></member>`);
    }
    return {
      contentType: 'text/xml',
      body: `<PublishBatchResponse xmlns="http://sns.amazonaws.com/doc/2010-03-31/"><PublishBatchResult><Successful>${members.join('')}</Successful><Failed/></PublishBatchResult><ResponseMetadata><RequestId>fake</RequestId></ResponseMetadata></PublishBatchResponse>`,
    };
  };
}

/**
 * The work queue's messages, taken in batches by the event source (the Lambda poller's side).
 * Bodies are kept as bytes, outside the JavaScript heap, as SQS keeps them outside the function:
 * held as strings, the items waiting for a publisher made the process's garbage collector scan
 * tens of megabytes the functions never hold.
 */
class FakeQueue {
  readonly bodies: { id: string; body: Buffer }[] = [];
  /**
   * UTF-8 bytes of every body sent, and the sends as SQS bills them: a request per 64 KiB of its
   * payload, which is the bodies and the attributes (name, data type and value of each).
   */
  sentBytes = 0;
  billedSends = 0;
  #waiting: (() => void)[] = [];
  #next = 0;
  constructor(readonly ms: number) {}

  /** SQS SendMessageBatch (JSON protocol): every entry accepted, with the MD5 the SDK checks. */
  readonly answer = (request: FakeRequest): Answer => {
    const target = Object.entries(request.headers).find(([name]) => name.toLowerCase() === 'x-amz-target')?.[1];
    if (target !== 'AmazonSQS.SendMessageBatch')
      throw new Error(`the fake SQS answers SendMessageBatch, not ${target}`);
    const input = JSON.parse(text(request.body)) as {
      Entries: { Id: string; MessageBody: string; MessageAttributes?: Record<string, MessageAttributeValue> }[];
    };
    let payload = 0;
    const successful = input.Entries.map((entry) => {
      const id = `fake-${++this.#next}`;
      const body = Buffer.from(entry.MessageBody, 'utf8');
      this.sentBytes += body.length;
      payload += body.length + messageAttributeBytes(entry.MessageAttributes);
      this.bodies.push({ id, body });
      return { Id: entry.Id, MessageId: id, MD5OfMessageBody: md5(entry.MessageBody) };
    });
    this.billedSends += billedRequests(payload);
    for (const wake of this.#waiting.splice(0)) wake();
    return { contentType: 'application/x-amz-json-1.0', body: JSON.stringify({ Successful: successful, Failed: [] }) };
  };

  /** Up to `size` messages, waiting (fixed latency, then for more) while the queue is empty. */
  async receive(size: number, stopped: () => boolean): Promise<{ id: string; body: Buffer }[]> {
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

const credentials = { accessKeyId: 'in-process', secretAccessKey: 'in-process' };

const snsClient = (options: FakeOptions, cpu: EmulatorCpu, calls: { calls: number }, sent: Map<string, number>) =>
  new SNSClient({
    region: 'us-east-1',
    credentials,
    endpoint: 'https://sns.in-process',
    maxAttempts: 1,
    requestHandler: fakeHandler(options.latencies.snsMs, cpu, calls, snsAnswer(sent)) as never,
  });

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
    problems.push(`SNS was sent ${total} (${sent.size} distinct) for ${notifications}`);
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

/**
 * A full garbage collection, so a run is charged for collecting its own garbage and for nobody
 * else's: runs follow each other in one process, and without it whichever run came next paid for
 * the collection of the previous one's (single mode, measured after the sharded runs of the round
 * before, came out anywhere between 0.17 and 0.28 ms per notification).
 */
const collectGarbage: () => void = (() => {
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as () => void;
})();

/** Starts a measured span: the garbage from before it is collected first, outside it. */
const startCpu = (): NodeJS.CpuUsage => {
  collectGarbage();
  return process.cpuUsage();
};

/** The process's CPU since `started`, less the emulator's (ms), its garbage collected first. */
const functionsCpuMs = (started: NodeJS.CpuUsage, emulator: EmulatorCpu): number => {
  collectGarbage();
  const used = process.cpuUsage(started);
  return (used.user + used.system - emulator.micros) / 1000;
};

/** The run publishes, against the fakes. */
export async function fakeSingle(options: FakeOptions): Promise<FakeRun> {
  const audiences = audiencesOf(options.audiences);
  const matches = publishingMatches([...audiences.keys()], options.notifications, options.seed);
  const store = { calls: 0 };
  const publishCalls = { calls: 0 };
  const emulator: EmulatorCpu = { micros: 0 };
  const ledger = new MemoryStateStore();
  const sent = new Map<string, number>();
  const pipeline = new DeliveryPipeline({
    state: withLatency(ledger, options.latencies.dynamoMs, store),
    notifier: new SnsNotifier({
      client: snsClient(options, emulator, publishCalls, sent),
      concurrency: options.snsConcurrency,
      log: silentLog,
    }),
    log: silentLog,
    now: Date.now,
    audiences,
    ledgerFlushDelayMs: options.ledgerFlushDelayMs,
    publishSignal: new AbortController().signal,
    lateBefore: 0,
    counts: emptyDeliveryCounts(),
    applyDeliveryPreferences: true,
  });
  const cpu = startCpu();
  emulator.micros = 0;
  const started = performance.now();
  await feed(pipeline, matches);
  const wallMs = performance.now() - started;
  const cpuMs = functionsCpuMs(cpu, emulator);
  const invalid = check(matches.length, ledger, sent);
  return {
    mode: 'single',
    notifications: matches.length,
    wallMs,
    perSecond: invalid === undefined ? matches.length / (wallMs / 1000) : Number.NaN,
    cpuMs,
    storeCalls: store.calls,
    publishCalls: publishCalls.calls,
    ...(invalid === undefined ? {} : { invalid }),
  };
}

/** The run queues, `publishers` publisher environments publish, against the fakes. */
export async function fakeSharded(options: FakeOptions, publishers: number): Promise<FakeRun> {
  const audiences = audiencesOf(options.audiences);
  const matches = publishingMatches([...audiences.keys()], options.notifications, options.seed);
  const store = { calls: 0 };
  const publishCalls = { calls: 0 };
  const sendCalls = { calls: 0 };
  const emulator: EmulatorCpu = { micros: 0 };
  const ledger = new MemoryStateStore();
  const dispatches = withLatency(new MemoryDispatchStore(), options.latencies.dynamoMs, store);
  const state = withLatency(ledger, options.latencies.dynamoMs, store);
  const fakeQueue = new FakeQueue(options.latencies.sqsMs);
  const queue = new SqsWorkQueue({
    client: new SQSClient({
      region: 'us-east-1',
      credentials,
      endpoint: 'https://sqs.in-process',
      maxAttempts: 1,
      requestHandler: fakeHandler(options.latencies.sqsMs, emulator, sendCalls, fakeQueue.answer) as never,
    }),
    queueUrl: 'https://sqs.in-process/123456789012/news-alerts-work',
    dispatches,
    log: silentLog,
  });
  const sent = new Map<string, number>();
  // Each publisher is an environment of its own, with its own clients, as Lambda runs them.
  const handlers = Array.from({ length: publishers }, () =>
    createWorkItemHandler({
      state,
      notifier: new SnsNotifier({
        client: snsClient(options, emulator, publishCalls, sent),
        concurrency: options.snsConcurrency,
        log: silentLog,
      }),
      dispatches,
      log: silentLog,
      now: Date.now,
      ledgerFlushDelayMs: options.ledgerFlushDelayMs,
      maxReceiveCount: 3,
    }),
  );
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
  // When the last invocation returned: the publishers' drain ends there, not when the run's wait
  // for its dispatch (functions/core/dispatch.ts, reads further apart each time, up to 2 s) notices.
  let lastReturned = 0;
  let inFlight = 0;
  let settled: (() => void) | undefined;
  // The event source: each publisher takes up to a batch, invokes, and takes the next. The poller
  // serializes the event (not the function's CPU); the function's runtime parses it (counted).
  const publish = () =>
    handlers.map(async (handler) => {
      for (;;) {
        const batch = await fakeQueue.receive(options.publisherBatchSize, () => stopped);
        if (batch.length === 0) return;
        invocations += 1;
        const payload = apart(emulator, () =>
          JSON.stringify({
            Records: batch.map(({ id, body }) => record(id, body.toString('utf8'))),
          } satisfies SQSEvent),
        );
        inFlight += 1;
        let response: Awaited<ReturnType<typeof handler>>;
        try {
          response = await handler(JSON.parse(payload) as SQSEvent, context());
        } finally {
          inFlight -= 1;
          lastReturned = performance.now();
          if (inFlight === 0) settled?.();
        }
        if (response.batchItemFailures.length > 0) throw new Error('a fake publisher reported failures');
      }
    });
  const cpu = startCpu();
  emulator.micros = 0;
  const started = performance.now();
  // The run queues everything first and the publishers drain after: in Lambda each is an
  // environment with its own CPU, and here they would share one thread. So the run's queueing
  // rate is its own, and the publishers' rate is that of draining a backlog (what the mode is for:
  // more than one run can publish), neither slowed by the other's CPU.
  await dispatches.open(lease, dispatchId, Date.now());
  await feed(pipeline, matches);
  await dispatches.seal(lease, dispatchId, { expected: counts.workItemsQueued }, Date.now());
  const queuedMs = performance.now() - started;
  // Observed at once, so a publisher that fails cannot crash the process before it is awaited.
  const publishing = Promise.all(publish());
  publishing.catch(() => undefined);
  // The publishers' loops end only once stopped: before that, `publishing` can only fail, and then
  // the run fails at once instead of waiting an hour for a dispatch that cannot complete.
  const head = await Promise.race([
    waitForDispatch(dispatches, dispatchId, AbortSignal.timeout(3_600_000)),
    publishing.then(() => undefined),
  ]);
  const noticedMs = performance.now() - started;
  // The dispatch completes when the last item's invocation settles it, its last step: once that
  // invocation has returned, no publisher has work left.
  if (inFlight > 0) await Promise.race([new Promise<void>((resolve) => (settled = resolve)), publishing]);
  // No invocation at all (nothing was queued): the drain took no time past the queueing.
  const wallMs = Math.max(lastReturned - started, queuedMs);
  const cpuMs = functionsCpuMs(cpu, emulator);
  stopped = true;
  await publishing;
  const invalid =
    head === undefined || !dispatchComplete(head)
      ? 'the dispatch did not complete'
      : check(matches.length, ledger, sent);
  return {
    mode: 'sharded',
    publishers,
    notifications: matches.length,
    wallMs,
    perSecond: invalid === undefined ? matches.length / ((wallMs - queuedMs) / 1000) : Number.NaN,
    cpuMs,
    storeCalls: store.calls,
    publishCalls: publishCalls.calls,
    sendCalls: sendCalls.calls,
    sentBytes: fakeQueue.sentBytes,
    billedSends: fakeQueue.billedSends,
    queuedMs,
    noticedMs,
    invocations,
    ...(invalid === undefined ? {} : { invalid }),
  };
}

/** The publishing part's full size and the stack's defaults, with about AWS's latencies. */
export const DEFAULT_FAKE_OPTIONS: FakeOptions = {
  notifications: 10_000,
  audiences: 400,
  seed: 20_250_101,
  snsConcurrency: 8,
  ledgerFlushDelayMs: 100,
  publisherBatchSize: publisherBatchMax,
  latencies: { snsMs: 40, dynamoMs: 10, sqsMs: 10 },
};

/** The fake runs of one bench run: each configuration's median over interleaved rounds. */
export interface FakePublishingResults {
  readonly options: FakeOptions;
  readonly rounds: number;
  readonly single: FakeRun;
  /** By publisher count, ascending. */
  readonly sharded: readonly FakeRun[];
  /**
   * By publisher count (as `sharded`), each round's CPU per notification against the same round's
   * single run: how far the ratio moves from round to round on this host.
   */
  readonly cpuRatioByRound: readonly (readonly number[])[];
}

/** One configuration's runs as one: medians of rate, wall and CPU; invalid if any run was. */
function medianRun(runs: readonly FakeRun[]): FakeRun {
  const first = runs[0] as FakeRun;
  const invalid = runs.find((run) => run.invalid !== undefined)?.invalid;
  return {
    ...first,
    wallMs: median(runs.map((run) => run.wallMs)),
    perSecond: invalid === undefined ? median(runs.map((run) => run.perSecond)) : Number.NaN,
    cpuMs: median(runs.map((run) => run.cpuMs)),
    ...(first.queuedMs === undefined ? {} : { queuedMs: median(runs.map((run) => run.queuedMs ?? Number.NaN)) }),
    storeCalls: Math.max(...runs.map((run) => run.storeCalls)),
    publishCalls: Math.max(...runs.map((run) => run.publishCalls)),
    // The same in every round but for a few bytes (item ids are random UUIDs of one length).
    ...(first.sendCalls === undefined ? {} : { sendCalls: Math.max(...runs.map((run) => run.sendCalls ?? 0)) }),
    ...(first.sentBytes === undefined ? {} : { sentBytes: Math.max(...runs.map((run) => run.sentBytes ?? 0)) }),
    ...(first.billedSends === undefined ? {} : { billedSends: Math.max(...runs.map((run) => run.billedSends ?? 0)) }),
    ...(invalid === undefined ? {} : { invalid }),
  };
}

/**
 * Single and sharded at each of `publisherCounts`, `rounds` times interleaved (a burst of load on
 * the shared machine hits every configuration alike), after one unmeasured warm-up of each mode.
 */
export async function runFakePublishing(
  options: FakeOptions,
  publisherCounts: readonly number[],
  rounds: number,
  progress?: (line: string) => void,
): Promise<FakePublishingResults> {
  const warmUp = { ...options, notifications: Math.min(options.notifications, 2_000) };
  await fakeSingle(warmUp);
  await fakeSharded(warmUp, 1);
  const singles: FakeRun[] = [];
  const sharded = publisherCounts.map(() => [] as FakeRun[]);
  for (let round = 1; round <= rounds; round++) {
    singles.push(await fakeSingle(options));
    for (const [index, publishers] of publisherCounts.entries())
      sharded[index]?.push(await fakeSharded(options, publishers));
    progress?.(`publishing (zero-CPU emulator): round ${round} of ${rounds}`);
  }
  const perNotification = (run: FakeRun) => run.cpuMs / run.notifications;
  const cpuRatioByRound = sharded.map((runs) =>
    runs.map((run, round) => perNotification(run) / perNotification(singles[round] as FakeRun)),
  );
  return { options, rounds, single: medianRun(singles), sharded: sharded.map(medianRun), cpuRatioByRound };
}

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
    const single = await fakeSingle(DEFAULT_FAKE_OPTIONS);
    const runs = [single, await fakeSharded(DEFAULT_FAKE_OPTIONS, 1), await fakeSharded(DEFAULT_FAKE_OPTIONS, 2)];
    for (const run of runs) process.stdout.write(`round ${round}, ${describeRun(run, single)}\n`);
  }
}

/** What the throughput model predicts at one publisher count. */
export interface ModelPoint {
  readonly publishers: number;
  readonly perSecond: number;
  readonly bound: 'publishers' | 'the run';
}

/**
 * Sharded throughput at `publishers`, from the fake runs: each publisher is a Lambda environment
 * of its own (its own CPU), so P publishers drain P × one publisher's measured rate, until the run
 * that feeds them is the limit (notifications it queued per second, alone).
 * Assumes the services answer at the fixed latencies whatever the load, and leaves out AWS's
 * quotas (SNS publish and Lambda concurrency per account) and the publisherConcurrency setting.
 */
export function modelThroughput(results: FakePublishingResults, publishers: number): ModelPoint | undefined {
  const one = results.sharded.find((run) => run.publishers === 1);
  if (one === undefined || one.invalid !== undefined || one.queuedMs === undefined) return undefined;
  const drain = publishers * one.perSecond;
  const feed = one.notifications / (one.queuedMs / 1000);
  return drain <= feed
    ? { publishers, perSecond: drain, bound: 'publishers' }
    : { publishers, perSecond: feed, bound: 'the run' };
}
