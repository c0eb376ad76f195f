import { PublishBatchCommand, type PublishBatchRequestEntry, type SNSClient } from '@aws-sdk/client-sns';
import type { FailedMessage, Log, Notifier, OutboundMessage, PublishedMessage, PublishOutcome } from '#core/ports';
import { outboundBytes, SNS_MAX_MESSAGE_BYTES } from '#core/render';
import { BatchRetry, type BatchRetryOptions } from './batch-retry.ts';

/** PublishBatch takes at most this many entries. */
export const SNS_MAX_BATCH_ENTRIES = 10;

/** Options of {@link SnsNotifier}. */
export interface SnsNotifierOptions extends BatchRetryOptions {
  readonly client: SNSClient;
  /** PublishBatch calls in flight at once, across topics. Default 8. */
  readonly concurrency?: number;
  readonly log?: Log;
}

/** How one SNS error should be handled. */
export interface PublishErrorClass {
  /** SNS's error code without the SDK's `Exception` suffix (`NotFound`, `Throttled`, `KMSDisabled`). */
  readonly code: string;
  readonly reason: string;
  /** Retrying cannot help: the topic, its key or the caller's permissions must be fixed first. */
  readonly permanent: boolean;
}

// Codes a retry cannot fix. KMS access-denied and opt-in are included with the brief's disabled,
// invalid-state and not-found: all four mean the topic's key must be fixed by a person. The batch
// validation codes would be a bug here, and re-sending the same batch would fail the same way.
const PERMANENT_CODES = new Set([
  'NotFound',
  'InvalidParameter',
  'InvalidParameterValue',
  'ParameterValueInvalid',
  'ResourceNotFound',
  'AuthorizationError',
  'AccessDenied',
  'InvalidSecurity',
  'Validation',
  'EndpointDisabled',
  'KMSDisabled',
  'KMSInvalidState',
  'KMSNotFound',
  'KMSAccessDenied',
  'KMSOptInRequired',
  'BatchEntryIdsNotDistinct',
  'BatchRequestTooLong',
  'EmptyBatchRequest',
  'InvalidBatchEntryId',
  'TooManyEntriesInBatchRequest',
]);

const stripSuffix = (name: string): string => (name.endsWith('Exception') ? name.slice(0, -'Exception'.length) : name);

/**
 * Classifies a PublishBatch call that threw. Throttling, 5xx, timeouts, network errors and
 * anything unknown are retryable (an unknown error reported as permanent would park alerts that a
 * later run could have delivered); only the codes above are permanent.
 */
export function classifyPublishError(error: unknown): PublishErrorClass {
  if (!(error instanceof Error)) return { code: 'Unknown', reason: String(error), permanent: false };
  const wireCode = (error as { Code?: unknown }).Code;
  const code = typeof wireCode === 'string' && wireCode !== '' ? wireCode : stripSuffix(error.name);
  return { code, reason: error.message, permanent: PERMANENT_CODES.has(stripSuffix(code)) };
}

interface Entry {
  readonly id: string;
  readonly message: OutboundMessage;
}

interface Batch {
  readonly entries: readonly Entry[];
  readonly bytes: number;
}

/** Greedy packing in input order: at most 10 entries and 256 KiB (Message + Subject, UTF-8) a call. */
function packBatches(messages: readonly { message: OutboundMessage; bytes: number }[]): Batch[] {
  const batches: Batch[] = [];
  let entries: Entry[] = [];
  let bytes = 0;
  for (const { message, bytes: size } of messages) {
    if (entries.length === SNS_MAX_BATCH_ENTRIES || bytes + size > SNS_MAX_MESSAGE_BYTES) {
      batches.push({ entries, bytes });
      entries = [];
      bytes = 0;
    }
    // Ids only need to be unique within one request; retries reuse them.
    entries.push({ id: `m${entries.length}`, message });
    bytes += size;
  }
  if (entries.length > 0) batches.push({ entries, bytes });
  return batches;
}

/** The state one `publish` call shares between its topic chains. */
class PublishRun {
  readonly published: PublishedMessage[] = [];
  readonly failed: FailedMessage[] = [];
  calls = 0;
  /** The first error `onPublished` threw; once set, no new batch or retry starts. */
  stopError: { error: unknown } | undefined;

  constructor(
    readonly signal: AbortSignal | undefined,
    readonly onPublished: (batch: readonly PublishedMessage[]) => Promise<void>,
  ) {}

  get aborted(): boolean {
    return this.signal?.aborted ?? false;
  }

  /** No new PublishBatch call may start. */
  get halted(): boolean {
    return this.aborted || this.stopError !== undefined;
  }

  fail(entries: readonly Entry[], code: string, reason: string, permanent: boolean): void {
    for (const { message } of entries) this.failed.push({ message, code, reason, permanent });
  }

  /** Entries that will not be attempted because the run was aborted or stopped. */
  halt(entries: readonly Entry[]): void {
    // After an onPublished failure the whole call throws, so only an abort needs reporting.
    if (this.stopError === undefined) {
      this.fail(entries, 'Aborted', 'publishing was aborted before this message was sent', false);
    }
  }
}

/** Publishes rendered notifications to their audience topics with SNS PublishBatch. */
export class SnsNotifier implements Notifier {
  readonly #client: SNSClient;
  readonly #retry: BatchRetry;
  readonly #log: Log | undefined;

  constructor(options: SnsNotifierOptions) {
    this.#retry = new BatchRetry('SNS publish', options, 8);
    this.#client = options.client;
    this.#log = options.log;
  }

  /**
   * Publishes every message; see the module comment for the guarantees. Batches that were already
   * in flight when `onPublished` threw still finish, and their accepted messages are still passed
   * to `onPublished` (so fewer alerts are sent twice by the next run) before the first error is
   * rethrown. Once `signal` aborts no new call starts; what was not sent comes back as failed with
   * code `Aborted`, `permanent: false`.
   */
  async publish(
    messages: readonly OutboundMessage[],
    options: { signal?: AbortSignal; onPublished: (batch: readonly PublishedMessage[]) => Promise<void> },
  ): Promise<PublishOutcome> {
    const run = new PublishRun(options.signal, options.onPublished);
    const byTopic = new Map<string, { message: OutboundMessage; bytes: number }[]>();
    for (const message of messages) {
      const bytes = outboundBytes(message);
      if (bytes > SNS_MAX_MESSAGE_BYTES) {
        run.fail(
          [{ id: '', message }],
          'MessageTooLarge',
          `message and subject are ${bytes} bytes in UTF-8, over the SNS limit of ${SNS_MAX_MESSAGE_BYTES}`,
          true,
        );
        continue;
      }
      const group = byTopic.get(message.topicArn);
      if (group) group.push({ message, bytes });
      else byTopic.set(message.topicArn, [{ message, bytes }]);
    }
    await Promise.all([...byTopic].map(([topicArn, group]) => this.#publishTopic(run, topicArn, packBatches(group))));
    const permanent = run.failed.filter((failure) => failure.permanent).length;
    this.#log?.info('SNS publish finished', {
      messages: messages.length,
      topics: byTopic.size,
      calls: run.calls,
      published: run.published.length,
      failedPermanent: permanent,
      failedRetryable: run.failed.length - permanent,
      aborted: run.aborted,
      stoppedByCallback: run.stopError !== undefined,
    });
    if (run.stopError !== undefined) throw run.stopError.error;
    return { published: run.published, failed: run.failed };
  }

  /** One topic's batches, strictly one after another, each confirmed through `onPublished`. */
  async #publishTopic(run: PublishRun, topicArn: string, batches: readonly Batch[]): Promise<void> {
    for (const [index, batch] of batches.entries()) {
      if (run.halted) {
        for (const rest of batches.slice(index)) run.halt(rest.entries);
        return;
      }
      await this.#publishBatch(run, topicArn, batch);
    }
  }

  async #publishBatch(run: PublishRun, topicArn: string, batch: Batch): Promise<void> {
    let pending: readonly Entry[] = batch.entries;
    let last: PublishErrorClass = { code: 'Unknown', reason: 'not attempted', permanent: false };
    for (let attempt = 1; attempt <= this.#retry.maxAttempts; attempt++) {
      if (attempt > 1) {
        if (run.halted) {
          run.halt(pending);
          return;
        }
        await this.#retry.before(attempt, run.signal);
      }
      const result = await this.#retry.limit(async () => {
        // Checked inside the limiter: a batch may have queued for a slot while the run was halted.
        if (run.halted) return undefined;
        run.calls += 1;
        try {
          const output = await this.#client.send(
            new PublishBatchCommand({
              TopicArn: topicArn,
              PublishBatchRequestEntries: pending.map(
                ({ id, message }): PublishBatchRequestEntry => ({
                  Id: id,
                  Message: message.body,
                  // SNS rejects an empty Subject; without one, email subscribers get SNS's default.
                  ...(message.subject === '' ? {} : { Subject: message.subject }),
                  MessageStructure: 'json',
                }),
              ),
            }),
          );
          return { output } as const;
        } catch (error) {
          return { error } as const;
        }
      });
      if (result === undefined) {
        run.halt(pending);
        return;
      }
      if ('error' in result) {
        last = classifyPublishError(result.error);
        if (last.permanent) {
          this.#log?.error('SNS refused a batch for good', { topicArn, code: last.code, entries: pending.length });
          run.fail(pending, last.code, last.reason, true);
          return;
        }
        this.#log?.warn('SNS publish batch failed', {
          topicArn,
          code: last.code,
          entries: pending.length,
          attempt,
          maxAttempts: this.#retry.maxAttempts,
        });
        continue;
      }
      const byId = new Map(pending.map((entry) => [entry.id, entry]));
      const accepted: PublishedMessage[] = [];
      for (const success of result.output.Successful ?? []) {
        const entry = success.Id === undefined ? undefined : byId.get(success.Id);
        if (entry === undefined) continue;
        byId.delete(entry.id);
        accepted.push({ message: entry.message, messageId: success.MessageId });
      }
      const retry: Entry[] = [];
      const permanentCodes = new Set<string>();
      for (const failure of result.output.Failed ?? []) {
        const entry = failure.Id === undefined ? undefined : byId.get(failure.Id);
        if (entry === undefined) continue;
        byId.delete(entry.id);
        const code = failure.Code ?? 'Unknown';
        if (failure.SenderFault === true) {
          permanentCodes.add(code);
          run.fail([entry], code, failure.Message ?? 'SNS rejected the entry (sender fault)', true);
        } else {
          retry.push(entry);
          last = { code, reason: failure.Message ?? 'SNS could not publish the entry', permanent: false };
        }
      }
      if (byId.size > 0) {
        // Neither accepted nor rejected: whether SNS kept it is unknown, and an alert must not be
        // lost, so it is sent again (at worst one duplicate, which consumers drop by deliveryId).
        retry.push(...byId.values());
        last = { code: 'MissingResult', reason: 'SNS returned no result for the entry', permanent: false };
      }
      if (permanentCodes.size > 0) {
        this.#log?.error('SNS rejected entries for good', {
          topicArn,
          codes: [...permanentCodes],
          entries: pending.length - accepted.length - retry.length,
        });
      }
      if (accepted.length > 0) await this.#confirm(run, topicArn, accepted);
      if (retry.length === 0) return;
      this.#log?.warn('SNS did not accept some entries', {
        topicArn,
        code: last.code,
        entries: retry.length,
        attempt,
        maxAttempts: this.#retry.maxAttempts,
      });
      pending = retry;
    }
    this.#log?.error('SNS publish gave up after retries', {
      topicArn,
      code: last.code,
      entries: pending.length,
      attempts: this.#retry.maxAttempts,
    });
    run.fail(pending, last.code, `${last.reason} (after ${this.#retry.maxAttempts} attempts)`, false);
  }

  /** Records accepted messages and hands them to the caller; remembers the first callback failure. */
  async #confirm(run: PublishRun, topicArn: string, accepted: readonly PublishedMessage[]): Promise<void> {
    run.published.push(...accepted);
    try {
      await run.onPublished(accepted);
    } catch (error) {
      if (run.stopError === undefined) {
        run.stopError = { error };
        this.#log?.error('onPublished failed; no further batches will be sent', {
          topicArn,
          entries: accepted.length,
          error: error instanceof Error ? error.name : 'Unknown',
        });
      } else {
        this.#log?.error('onPublished failed again for a batch that was already in flight', {
          topicArn,
          entries: accepted.length,
          error: error instanceof Error ? error.name : 'Unknown',
        });
      }
    }
  }
}
