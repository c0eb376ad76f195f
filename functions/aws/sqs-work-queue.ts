/**
 * The {@link WorkQueue} on Amazon SQS: the alert run's side of sharded publishing. Rendered
 * notifications are packed into work items (functions/core/work-items.ts, one audience per item)
 * and sent, compressed (`workItemMessageBody`), with SendMessageBatch.
 *
 * What it guarantees to the alert run:
 * - every message ends up in exactly one of `queued` or `failed`;
 * - an item is counted in its dispatch (`countEnqueued`) BEFORE the request that sends it, so the
 *   head never knows fewer items than the queue may hold: a crash between the two leaves the
 *   dispatch waiting for an item that never comes (the next run abandons it and reads those days
 *   again), never complete while an item is still in flight. The items of one `enqueue` call are
 *   counted in one request before any of them is sent (one DynamoDB request per call, not per
 *   SendMessageBatch); a count that fails sends none of them;
 * - each SendMessageBatch holds at most 10 entries and 256 KiB (bodies and attributes, as SQS
 *   counts them); throttles, server errors and entries SQS did not take are retried with
 *   exponential backoff and jitter; what still fails is reported with SQS's code, not permanent
 *   (the watermark stays, the next run tries again); a message that cannot travel in an item is
 *   `MessageTooLarge`, permanent; once `signal` aborts no request starts, and what was not sent is
 *   `Aborted`;
 * - an entry SQS neither accepted nor refused is sent again: a work item twice on the queue is
 *   harmless (the publisher is idempotent per item, and a dispatch counts an item once);
 * - an item SQS may hold without having said so (no answer, a server error) counts in `items`
 *   even when its messages are reported failed, so the dispatch waits for it instead of letting
 *   it stand in for an accepted item still in flight (see {@link SqsWorkQueue.enqueue}).
 *
 * Bodies are never logged: they hold subscriber-facing links. Logs carry counts and codes.
 */
import { Buffer } from 'node:buffer';
import type {
  MessageAttributeValue,
  SendMessageBatchCommandOutput,
  SendMessageBatchRequestEntry,
  SQSClient,
} from '@aws-sdk/client-sqs';
import type {
  DispatchStore,
  EnqueueOutcome,
  FailedMessage,
  Log,
  OutboundMessage,
  WorkItem,
  WorkQueue,
} from '#core/ports';
import { workItemMaxBytes } from '#core/ports';
import { packWorkItems, workItemMessageBody } from '#core/work-items';
import { logger } from '#shared/powertools';
import { BatchRetry, type BatchRetryOptions } from './batch-retry.ts';

/** SendMessageBatch takes at most this many entries. */
export const SQS_MAX_BATCH_ENTRIES = 10;

/**
 * Room kept in each message for its attributes, which SQS counts in the 256 KiB: `audienceId`
 * (10 bytes), `String` (6) and an audience id of at most 128 characters, rounded up.
 */
const attributeReserveBytes = 256;

/** Options of {@link SqsWorkQueue}. */
export interface SqsWorkQueueOptions extends BatchRetryOptions {
  /**
   * Best with `maxAttempts: 1` (the alert function's is): this queue retries, and tells for each
   * attempt whether SQS may have queued its items; after the SDK's own retries it cannot, and a
   * refusal then counts its items as maybe queued (the dispatch waits for them, or is abandoned).
   */
  readonly client: SQSClient;
  readonly queueUrl: string;
  /** Where items are counted before they are sent. */
  readonly dispatches: DispatchStore;
  readonly log?: Log;
  /** `queuedAt` of the items. Default `Date.now`. */
  readonly now?: () => number;
  /** SendMessageBatch calls in flight at once. Default 4. */
  readonly concurrency?: number;
  /** Work item ids; a random UUID by default. */
  readonly newItemId?: () => string;
}

/**
 * Codes of a whole SendMessageBatch call that another attempt cannot fix (the queue, its key or
 * the caller's permissions must be fixed first): reported at once instead of retried.
 */
const UNRETRYABLE_CODES = new Set([
  'QueueDoesNotExist',
  'AWS.SimpleQueueService.NonExistentQueue',
  'AccessDenied',
  'InvalidAddress',
  'InvalidSecurity',
  'KmsAccessDenied',
  'KmsDisabled',
  'KmsInvalidKeyUsage',
  'KmsInvalidState',
  'KmsNotFound',
  'KmsOptInRequired',
  'UnsupportedOperation',
  'BatchEntryIdsNotDistinct',
  'BatchRequestTooLong',
  'EmptyBatchRequest',
  'InvalidBatchEntryId',
  'TooManyEntriesInBatchRequest',
  'InvalidParameterValue',
]);

/** The code of an SQS error: the wire code when the SDK kept it, else the name without `Exception`. */
function errorCode(error: unknown): string {
  if (!(error instanceof Error)) return 'Unknown';
  const wire = (error as { Code?: unknown }).Code;
  if (typeof wire === 'string' && wire !== '') return wire;
  return error.name.endsWith('Exception') ? error.name.slice(0, -'Exception'.length) : error.name;
}

/**
 * SQS answered and refused the request (a 4xx: throttled, access denied, queue gone) on the SDK's
 * only attempt: nothing of it was queued. Anything else (no answer, a 5xx) may have been, and so
 * may a refusal after the SDK's own retries: an earlier attempt of the same request may have timed
 * out or met a 5xx after SQS queued it.
 */
function refused(error: unknown): boolean {
  const metadata = (error as { $metadata?: { httpStatusCode?: number; attempts?: number } } | undefined)?.$metadata;
  const status = metadata?.httpStatusCode;
  return status !== undefined && status >= 400 && status < 500 && (metadata?.attempts ?? 1) <= 1;
}

interface Entry {
  /** Unique within its request; retries reuse it. */
  readonly id: string;
  readonly item: WorkItem;
  readonly body: string;
  /** Body and attributes, as SQS counts a message. */
  readonly bytes: number;
}

/** Greedy in item order: at most 10 entries and 256 KiB a request. */
function packBatches(entries: readonly Omit<Entry, 'id'>[]): Entry[][] {
  const batches: Entry[][] = [];
  let batch: Entry[] = [];
  let bytes = 0;
  for (const entry of entries) {
    if (batch.length === SQS_MAX_BATCH_ENTRIES || (batch.length > 0 && bytes + entry.bytes > workItemMaxBytes)) {
      batches.push(batch);
      batch = [];
      bytes = 0;
    }
    batch.push({ ...entry, id: `i${batch.length}` });
    bytes += entry.bytes;
  }
  if (batch.length > 0) batches.push(batch);
  return batches;
}

/** The attributes of an item's message: ops can see which audience (shard) it is for without reading its body. */
const messageAttributes = (item: WorkItem): Record<string, MessageAttributeValue> => ({
  audienceId: { DataType: 'String', StringValue: item.audienceId },
});

/**
 * The bytes SQS counts for a message's attributes, in its 256 KiB and in what it bills: each
 * attribute's name, data type and value.
 */
export const messageAttributeBytes = (attributes: Record<string, MessageAttributeValue> | undefined): number =>
  Object.entries(attributes ?? {}).reduce(
    (sum, [name, value]) =>
      sum +
      Buffer.byteLength(name, 'utf8') +
      Buffer.byteLength(value.DataType ?? '', 'utf8') +
      Buffer.byteLength(value.StringValue ?? '', 'utf8'),
    0,
  );

const attributeBytes = (item: WorkItem): number => messageAttributeBytes(messageAttributes(item));

/** What one `enqueue` call has done so far, shared by its batches. */
class EnqueueRun {
  readonly accepted: WorkItem[] = [];
  readonly failed: FailedMessage[] = [];
  /** Entries an attempt may have queued although SQS gave no answer saying so. */
  readonly uncertain = new Set<Entry>();
  /** Failed items that SQS may hold all the same (see {@link SqsWorkQueue.enqueue}). */
  possiblyQueued = 0;
  calls = 0;

  constructor(readonly signal: AbortSignal | undefined) {}

  get aborted(): boolean {
    return this.signal?.aborted ?? false;
  }

  fail(entries: readonly Entry[], code: string, reason: string): void {
    for (const entry of entries) {
      if (this.uncertain.has(entry)) this.possiblyQueued += 1;
    }
    for (const { item } of entries) {
      for (const message of item.messages) this.failed.push({ message, code, reason, permanent: false });
    }
  }

  abort(entries: readonly Entry[]): void {
    this.fail(entries, 'Aborted', 'queueing was aborted before this work item was sent');
  }
}

/**
 * The SQS client's commands, loaded on first use: the alert function's wiring imports this module
 * in every mode, and a single-mode cold start should not evaluate the SQS client it never uses.
 */
let sqsModule: Promise<typeof import('@aws-sdk/client-sqs')> | undefined;
const sqsCommands = (): Promise<typeof import('@aws-sdk/client-sqs')> => {
  sqsModule ??= import('@aws-sdk/client-sqs');
  return sqsModule;
};

/** Queues work items for the publisher function on SQS. */
export class SqsWorkQueue implements WorkQueue {
  readonly #client: SQSClient;
  readonly #retry: BatchRetry;
  readonly #queueUrl: string;
  readonly #dispatches: DispatchStore;
  readonly #log: Log;
  readonly #now: () => number;
  readonly #newItemId: (() => string) | undefined;

  constructor(options: SqsWorkQueueOptions) {
    this.#retry = new BatchRetry('SQS send', options, 4);
    this.#client = options.client;
    this.#queueUrl = options.queueUrl;
    this.#dispatches = options.dispatches;
    this.#log = options.log ?? logger;
    this.#now = options.now ?? Date.now;
    this.#newItemId = options.newItemId;
  }

  /**
   * Packs, counts and sends; see the module comment for the guarantees.
   *
   * `items` counts the items SQS accepted plus those whose messages are reported failed although
   * SQS may hold them (an attempt got no answer or a server error, and no later attempt settled
   * it). The run seals its dispatch with `items` as `expected`, so an item that does arrive is
   * waited for rather than completing the dispatch in place of an accepted one still in flight;
   * one that never arrives leaves the dispatch incomplete until the next run abandons it and
   * reads those days again (the ledger dedupes). Their messages are in `failed`, so the
   * watermark stays before them either way.
   */
  async enqueue(
    dispatchId: string,
    messages: readonly OutboundMessage[],
    options: { signal?: AbortSignal },
  ): Promise<EnqueueOutcome> {
    const run = new EnqueueRun(options.signal);
    const packed = packWorkItems(dispatchId, messages, {
      now: this.#now(),
      maxBytes: workItemMaxBytes - attributeReserveBytes,
      ...(this.#newItemId === undefined ? {} : { newItemId: this.#newItemId }),
    });
    for (const message of packed.tooLarge) {
      run.failed.push({
        message,
        code: 'MessageTooLarge',
        reason: `the message does not fit a work item of ${workItemMaxBytes} bytes, or breaks the work item format`,
        permanent: true,
      });
    }
    const batches = packBatches(
      packed.items.map((item) => {
        const body = workItemMessageBody(item);
        return { item, body, bytes: Buffer.byteLength(body, 'utf8') + attributeBytes(item) };
      }),
    );
    // Counted first, all at once: an item the head does not know about could be done after the
    // dispatch looked complete, and the watermark would move past it. A count that fails sends
    // nothing, and every message is accounted for in the outcome (failed), never sent behind the
    // run's back.
    let counted = batches.length === 0;
    if (!counted && run.aborted) {
      for (const batch of batches) run.abort(batch);
    } else if (!counted) {
      try {
        await this.#dispatches.countEnqueued(dispatchId, packed.items.length);
        counted = true;
      } catch (error) {
        this.#log.error('could not count work items in their dispatch; they were not sent', {
          dispatchId,
          items: packed.items.length,
          error: error instanceof Error ? error.name : 'unknown',
        });
        for (const batch of batches) {
          run.fail(
            batch,
            'DispatchCountFailed',
            'the work item could not be counted in its dispatch, so it was not sent',
          );
        }
      }
    }
    if (counted) {
      await Promise.all(batches.map((batch) => this.#retry.limit(() => this.#sendBatch(run, dispatchId, batch))));
    }
    const queued = run.accepted.flatMap((item) => item.messages);
    this.#log.info('work items queued', {
      dispatchId,
      messages: messages.length,
      items: packed.items.length,
      accepted: run.accepted.length,
      queued: queued.length,
      failed: run.failed.length,
      tooLarge: packed.tooLarge.length,
      calls: run.calls,
      possiblyQueued: run.possiblyQueued,
      aborted: run.aborted,
    });
    return { items: run.accepted.length + run.possiblyQueued, queued, failed: run.failed };
  }

  async #sendBatch(run: EnqueueRun, dispatchId: string, batch: readonly Entry[]): Promise<void> {
    if (run.aborted) {
      run.abort(batch);
      return;
    }
    let pending: readonly Entry[] = batch;
    let last = { code: 'Unknown', reason: 'not attempted' };
    for (let attempt = 1; attempt <= this.#retry.maxAttempts; attempt++) {
      if (attempt > 1) {
        await this.#retry.before(attempt, run.signal);
      }
      if (run.aborted) {
        run.abort(pending);
        return;
      }
      run.calls += 1;
      let output: SendMessageBatchCommandOutput;
      try {
        const { SendMessageBatchCommand } = await sqsCommands();
        output = await this.#client.send(
          new SendMessageBatchCommand({
            QueueUrl: this.#queueUrl,
            Entries: pending.map(
              ({ id, item, body }): SendMessageBatchRequestEntry => ({
                Id: id,
                MessageBody: body,
                MessageAttributes: messageAttributes(item),
              }),
            ),
          }),
          // No abortSignal: a request in flight finishes, so its answer says which items SQS took.
        );
      } catch (error) {
        if (!refused(error)) {
          // No answer (network, timeout) or a server error: SQS may have kept these items.
          for (const entry of pending) run.uncertain.add(entry);
        }
        last = { code: errorCode(error), reason: error instanceof Error ? error.message : String(error) };
        if (UNRETRYABLE_CODES.has(last.code)) {
          this.#log.error('SQS refused a batch of work items', { dispatchId, code: last.code, items: pending.length });
          run.fail(pending, last.code, last.reason);
          return;
        }
        this.#log.warn('SQS send batch failed', {
          dispatchId,
          code: last.code,
          items: pending.length,
          attempt,
          maxAttempts: this.#retry.maxAttempts,
        });
        continue;
      }
      const byId = new Map(pending.map((entry) => [entry.id, entry]));
      for (const success of output.Successful ?? []) {
        const entry = success.Id === undefined ? undefined : byId.get(success.Id);
        if (entry === undefined) continue;
        byId.delete(entry.id);
        run.accepted.push(entry.item);
      }
      const retry: Entry[] = [];
      for (const failure of output.Failed ?? []) {
        const entry = failure.Id === undefined ? undefined : byId.get(failure.Id);
        if (entry === undefined) continue;
        byId.delete(entry.id);
        const code = failure.Code ?? 'Unknown';
        const reason = failure.Message ?? 'SQS did not take the work item';
        if (failure.SenderFault === true) {
          // The same entry would be refused again; the next run re-reads its articles.
          this.#log.error('SQS refused a work item', { dispatchId, code });
          run.fail([entry], code, reason);
        } else {
          retry.push(entry);
          last = { code, reason };
        }
      }
      if (byId.size > 0) {
        retry.push(...byId.values());
        last = { code: 'MissingResult', reason: 'SQS returned no result for the work item' };
      }
      if (retry.length === 0) return;
      this.#log.warn('SQS did not take some work items', {
        dispatchId,
        code: last.code,
        items: retry.length,
        attempt,
        maxAttempts: this.#retry.maxAttempts,
      });
      pending = retry;
    }
    this.#log.error('SQS send gave up after retries', {
      dispatchId,
      code: last.code,
      items: pending.length,
      attempts: this.#retry.maxAttempts,
    });
    run.fail(pending, last.code, `${last.reason} (after ${this.#retry.maxAttempts} attempts)`);
  }
}
