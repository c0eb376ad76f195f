/**
 * Lambda's SQS event source mapping, emulated in-process against moto server so the sandbox, the
 * bench and the fault tests run the sharded publisher the way Lambda would: long-poll
 * ReceiveMessage (with `ApproximateReceiveCount`), one `SQSEvent` of at most `batchSize` records
 * per invocation, at most `concurrency` invocations at once (the mapping's maximum concurrency),
 * and the partial batch response honoured: records the handler returns in `batchItemFailures`
 * are made visible again, the others deleted. What it guarantees, as Lambda does: a record is
 * deleted only after an invocation that did not report it as failed; everything else comes back.
 *
 * With `maxBatchingWindowMs` (the stack's batching window) a poller that received fewer records
 * than `batchSize` keeps receiving until the batch is full or the window has passed, as Lambda
 * fills a batch within MaximumBatchingWindowInSeconds. A batch larger than ten (which Lambda
 * allows only with a batching window) takes several ReceiveMessage calls of at most ten, as SQS
 * returns, and its acknowledgements several batch calls of at most ten entries. Like Lambda, it
 * keeps an event within 6 MiB as the function receives it (records serialized, envelopes
 * included): it stops filling once the records reach that, and records past it wait, still
 * hidden, for the poller's next batch.
 *
 * ReceiveMessage calls on the queue go one at a time, though the pollers run at once: moto's
 * receive_message checks that a message is visible and then marks it received without a lock
 * (moto/sqs/models.py, threaded server), so two receives at once on a busy machine can both take
 * the same message. SQS standard queues may also deliver a message twice, but rarely; the
 * publisher is tested against that on purpose (test/integration/publisher.test.ts), and this
 * race made the mapping's own "each record handled once" tests fail at random. Invocations still
 * overlap: only the receive is serialized, which takes about a millisecond on loopback.
 *
 * Where it departs from Lambda, on purpose:
 * - Failed records are made visible again at once (ChangeMessageVisibility 0) instead of after
 *   the visibility timeout, so retries in tests take milliseconds, not minutes.
 * - A handler that throws fails the whole batch the same way (Lambda leaves the records to time
 *   out); a `batchItemFailures` entry naming no record of the batch also fails the whole batch,
 *   as Lambda documents.
 *
 * Dead-letter queues need no emulation: moto applies the queue's redrive policy on receive, as
 * SQS does. A message received `maxReceiveCount` times is moved to the DLQ by the next
 * ReceiveMessage instead of being returned (checked against moto 5: with maxReceiveCount 3 the
 * fourth receive returns nothing and the DLQ holds the message).
 */
import { Buffer } from 'node:buffer';
import { setTimeout as delay } from 'node:timers/promises';
import {
  ChangeMessageVisibilityBatchCommand,
  DeleteMessageBatchCommand,
  GetQueueAttributesCommand,
  type Message,
  ReceiveMessageCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import pLimit from 'p-limit';
import { type Log, silentLog } from '#core/ports';

/** The Lambda function the mapping invokes. */
export type SqsBatchHandler = (event: SQSEvent, context: Context) => Promise<SQSBatchResponse | undefined>;

export interface LocalEventSourceOptions {
  readonly client: SQSClient;
  readonly queueUrl: string;
  readonly handler: SqsBatchHandler;
  /** Invocations at once (the mapping's `maximumConcurrency`). */
  readonly concurrency: number;
  /** Records per invocation, 1..10, or up to {@link maxBatchSize} with `maxBatchingWindowMs`. */
  readonly batchSize: number;
  /** How long a received message stays hidden while its invocation runs. */
  readonly visibilityTimeoutSeconds: number;
  /** The emulated function's timeout, for `context.getRemainingTimeInMillis()` (default 60 s). */
  readonly functionTimeoutSeconds?: number;
  /**
   * Long-poll wait of each ReceiveMessage. Default 0 (short polls, with a backoff from 10 to
   * 200 ms while the queue is empty): moto's long poll never returns when the process runs under
   * libfaketime, as CI runs the tests with the clock moved ahead. Receives go one at a time (see
   * the module comment), so with a long poll the pollers wait behind each other's polls on an
   * empty queue, and `stop()` may wait for each in turn.
   */
  readonly waitTimeSeconds?: number;
  /**
   * The mapping's MaximumBatchingWindowInSeconds, in ms: a poller that received fewer than
   * `batchSize` records keeps receiving for up to this long to fill the batch before it invokes,
   * as Lambda does with a batching window. Default 0 (invoke with what the first receive returned).
   */
  readonly maxBatchingWindowMs?: number;
  readonly log?: Log;
}

/** What the mapping has done so far. */
export interface LocalEventSourceStats {
  /** Handler invocations. */
  readonly invocations: number;
  /** Records handed to the handler (a redelivered message counts each time). */
  readonly records: number;
  /** Records deleted after an invocation that did not report them as failed. */
  readonly deleted: number;
  /** Records made visible again (reported as failed, or their invocation threw). */
  readonly failed: number;
  /** Most invocations that ran at the same time. */
  readonly maxConcurrent: number;
}

export interface LocalEventSource {
  stats(): LocalEventSourceStats;
  /** Stops polling and resolves once every invocation in flight has finished and been acknowledged. */
  stop(): Promise<void>;
}

/** SQS ReceiveMessage, DeleteMessageBatch and ChangeMessageVisibilityBatch: at most ten each. */
const sqsBatchLimit = 10;
/** Lambda's SQS event source: batch sizes above ten need a batching window (the stack's limit is 99). */
export const maxBatchSize = 10_000;
/** Lambda's synchronous invocation payload limit, which caps an SQS batch. */
const maxEventBytes = 6 * 1024 * 1024;
/** `{"Records":[]}` around the records. */
const eventEnvelopeBytes = 14;
/** The longest an SQS queue ARN can be (an 80-character name), for a record's size before it is known. */
const longestArn = 'x'.repeat(256);

/** Sizes already taken: filling a batch and then splitting it at the limit both ask for them. */
const recordSizes = new WeakMap<Message, number>();

/** A record's bytes in the event, with the comma that separates it (its ARN at its longest). */
function recordBytes(message: Message): number {
  let bytes = recordSizes.get(message);
  if (bytes === undefined) {
    bytes = Buffer.byteLength(JSON.stringify(toRecord(message, longestArn)), 'utf8') + 1;
    recordSizes.set(message, bytes);
  }
  return bytes;
}

/** The longest first part of `messages` whose event fits 6 MiB (at least one), and the rest. */
function splitAtEventLimit(messages: readonly Message[]): [Message[], Message[]] {
  let bytes = eventEnvelopeBytes;
  let count = 0;
  for (const message of messages) {
    bytes += recordBytes(message);
    if (bytes > maxEventBytes && count > 0) break;
    count += 1;
  }
  return [messages.slice(0, count), messages.slice(count)];
}

/** Starts `concurrency` pollers on the queue; call `stop()` when done. */
export function startLocalEventSource(options: LocalEventSourceOptions): LocalEventSource {
  if (!Number.isInteger(options.concurrency) || options.concurrency < 1) {
    throw new RangeError(`concurrency must be a positive integer, got ${options.concurrency}`);
  }
  const windowed = (options.maxBatchingWindowMs ?? 0) > 0;
  const largest = windowed ? maxBatchSize : sqsBatchLimit;
  if (!Number.isInteger(options.batchSize) || options.batchSize < 1 || options.batchSize > largest) {
    throw new RangeError(
      `batchSize must be an integer from 1 to ${largest}${windowed ? '' : ' (more needs maxBatchingWindowMs)'}, got ${options.batchSize}`,
    );
  }
  const log = options.log ?? silentLog;
  const timeoutMs = (options.functionTimeoutSeconds ?? 60) * 1000;
  const stats = { invocations: 0, records: 0, deleted: 0, failed: 0, maxConcurrent: 0 };
  let running = 0;
  let stopped = false;
  let queueArn: Promise<string> | undefined;
  // One ReceiveMessage at a time (see the header: moto's receive is not atomic).
  const oneReceiveAtATime = pLimit(1);
  // The ARN goes into every record's eventSourceARN, as Lambda sets it; asked for once.
  const arn = (): Promise<string> => {
    queueArn ??= options.client
      .send(new GetQueueAttributesCommand({ QueueUrl: options.queueUrl, AttributeNames: ['QueueArn'] }))
      .then(({ Attributes }) => Attributes?.QueueArn ?? '');
    return queueArn;
  };

  async function invoke(messages: readonly Message[]): Promise<void> {
    // An ARN that could not be read is left empty (and asked for again next time): the records
    // still go to the handler, which does not need it.
    const eventSourceARN = await arn().catch(() => {
      queueArn = undefined;
      return '';
    });
    const event: SQSEvent = { Records: messages.map((message) => toRecord(message, eventSourceARN)) };
    stats.invocations += 1;
    stats.records += messages.length;
    running += 1;
    stats.maxConcurrent = Math.max(stats.maxConcurrent, running);
    let failedIds: Set<string>;
    try {
      const response = await options.handler(event, lambdaContext(stats.invocations, timeoutMs));
      failedIds = failedRecords(event, response, log);
    } catch (error) {
      log.warn('publisher invocation failed; its records are retried', {
        errorName: (error as Error)?.name,
        records: messages.length,
      });
      failedIds = new Set(event.Records.map((record) => record.messageId));
    } finally {
      running -= 1;
    }
    const done = messages.filter((message) => !failedIds.has(message.MessageId ?? ''));
    const failed = messages.filter((message) => failedIds.has(message.MessageId ?? ''));
    await acknowledge(options, done, failed, log);
    stats.deleted += done.length;
    stats.failed += failed.length;
  }

  /** One ReceiveMessage of at most `max` records. */
  async function receive(max: number, waitTimeSeconds = 0): Promise<Message[]> {
    const { Messages = [] } = await oneReceiveAtATime(() =>
      options.client.send(
        new ReceiveMessageCommand({
          QueueUrl: options.queueUrl,
          MaxNumberOfMessages: max,
          VisibilityTimeout: options.visibilityTimeoutSeconds,
          WaitTimeSeconds: waitTimeSeconds,
          MessageSystemAttributeNames: ['ApproximateReceiveCount', 'SentTimestamp', 'ApproximateFirstReceiveTimestamp'],
          MessageAttributeNames: ['All'],
        }),
      ),
    );
    return Messages;
  }

  /**
   * Within the batching window, tops a batch up to `batchSize` (short polls, 20 ms apart) until
   * its records reach the event's 6 MiB.
   */
  async function fill(messages: Message[]): Promise<Message[]> {
    const windowMs = options.maxBatchingWindowMs ?? 0;
    const until = performance.now() + windowMs;
    let bytes = messages.reduce((sum, message) => sum + recordBytes(message), eventEnvelopeBytes);
    for (;;) {
      const room = Math.min(sqsBatchLimit, options.batchSize - messages.length);
      if (room <= 0 || bytes >= maxEventBytes || stopped || performance.now() >= until) return messages;
      const more = await receive(room).catch(() => [] as Message[]);
      messages.push(...more);
      for (const message of more) bytes += recordBytes(message);
      if (more.length === 0) await delay(Math.min(20, Math.max(0, until - performance.now())));
    }
  }

  async function poll(): Promise<void> {
    let backoffMs = 50;
    let idleMs = 10;
    // Records a full event left over: received (still hidden), they start the next batch.
    let carried: Message[] = [];
    while (!stopped) {
      let messages: Message[] = carried;
      carried = [];
      if (messages.length === 0) {
        try {
          messages = await receive(Math.min(sqsBatchLimit, options.batchSize), options.waitTimeSeconds ?? 0);
          backoffMs = 50;
        } catch (error) {
          // Lambda's poller keeps polling through SQS errors; so does this one, a little slower each time.
          log.warn('receiving work items failed; polling again', { errorName: (error as Error)?.name, backoffMs });
          await delay(backoffMs);
          backoffMs = Math.min(backoffMs * 2, 2000);
          continue;
        }
        if (messages.length === 0) {
          if ((options.waitTimeSeconds ?? 0) === 0) {
            await delay(idleMs);
            idleMs = Math.min(idleMs * 2, 200);
          }
          continue;
        }
        idleMs = 10;
      }
      if ((options.maxBatchingWindowMs ?? 0) > 0) messages = await fill(messages);
      if (stopped) {
        // Received while stopping: hand them back rather than hide them for the visibility timeout.
        await acknowledge(options, [], messages, log);
        return;
      }
      const [batch, rest] = splitAtEventLimit(messages);
      carried = rest;
      await invoke(batch);
    }
    if (carried.length > 0) await acknowledge(options, [], carried, log);
  }

  const pollers = Array.from({ length: options.concurrency }, () => poll());
  return {
    stats: () => ({ ...stats }),
    async stop() {
      stopped = true;
      await Promise.all(pollers);
    },
  };
}

/** Message ids the response reports as failed; an answer Lambda cannot read fails the whole batch. */
function failedRecords(event: SQSEvent, response: SQSBatchResponse | undefined, log: Log): Set<string> {
  const all = new Set(event.Records.map((record) => record.messageId));
  const failures = response?.batchItemFailures ?? [];
  const named = new Set<string>();
  for (const failure of failures) {
    if (!all.has(failure.itemIdentifier)) {
      log.warn('batchItemFailures names no record of the batch; the whole batch is retried', {
        records: all.size,
      });
      return all;
    }
    named.add(failure.itemIdentifier);
  }
  return named;
}

async function acknowledge(
  options: LocalEventSourceOptions,
  done: readonly Message[],
  failed: readonly Message[],
  log: Log,
): Promise<void> {
  const entries = (messages: readonly Message[]) =>
    messages.map((message, index) => ({ Id: String(index), ReceiptHandle: message.ReceiptHandle }));
  // Each call takes at most ten entries; a chunk that fails leaves only its own messages behind.
  const chunks = (messages: readonly Message[]) =>
    Array.from({ length: Math.ceil(messages.length / sqsBatchLimit) }, (_, i) =>
      messages.slice(i * sqsBatchLimit, (i + 1) * sqsBatchLimit),
    );
  const calls = [
    ...chunks(done).map(
      (chunk) => () =>
        options.client.send(new DeleteMessageBatchCommand({ QueueUrl: options.queueUrl, Entries: entries(chunk) })),
    ),
    ...chunks(failed).map(
      (chunk) => () =>
        options.client.send(
          new ChangeMessageVisibilityBatchCommand({
            QueueUrl: options.queueUrl,
            Entries: entries(chunk).map((entry) => ({ ...entry, VisibilityTimeout: 0 })),
          }),
        ),
    ),
  ];
  for (const call of calls) {
    try {
      await call();
    } catch (error) {
      // Not deleted: the messages come back after the visibility timeout, as they would in Lambda.
      log.warn('acknowledging work items failed; they come back after the visibility timeout', {
        errorName: (error as Error)?.name,
      });
    }
  }
}

function toRecord(message: Message, eventSourceARN: string): SQSRecord {
  const attributes = message.Attributes ?? {};
  return {
    messageId: message.MessageId ?? '',
    receiptHandle: message.ReceiptHandle ?? '',
    body: message.Body ?? '',
    attributes: {
      ApproximateReceiveCount: attributes.ApproximateReceiveCount ?? '1',
      SentTimestamp: attributes.SentTimestamp ?? '0',
      SenderId: attributes.SenderId ?? 'local',
      ApproximateFirstReceiveTimestamp: attributes.ApproximateFirstReceiveTimestamp ?? '0',
    },
    messageAttributes: {},
    md5OfBody: message.MD5OfBody ?? '',
    eventSource: 'aws:sqs',
    eventSourceARN,
    awsRegion: 'us-east-1',
  };
}

/** A Lambda context whose remaining time counts down from the function timeout (monotonic clock). */
function lambdaContext(invocation: number, timeoutMs: number): Context {
  const deadline = performance.now() + timeoutMs;
  return {
    awsRequestId: `local-${invocation}`,
    functionName: 'news-alerts-publisher',
    functionVersion: '$LATEST',
    invokedFunctionArn: 'arn:aws:lambda:us-east-1:000000000000:function:news-alerts-publisher',
    memoryLimitInMB: '512',
    logGroupName: '/aws/lambda/news-alerts-publisher',
    logStreamName: 'local',
    callbackWaitsForEmptyEventLoop: false,
    getRemainingTimeInMillis: () => Math.max(0, Math.round(deadline - performance.now())),
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}
