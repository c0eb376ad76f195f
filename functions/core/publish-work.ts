/**
 * The publisher's step (sharded publishing): one work item from the queue, published once.
 *
 * What it guarantees, whatever SQS does (redeliver an item, deliver it twice at once, retry it
 * after a crash at any point):
 * - nothing the ledger holds is sent again: the ledger is read first, and each batch SNS accepts
 *   is written to it at once (LedgerWriter, flushed before the step ends, also when it fails), so
 *   the only duplicate window is the one of single mode: a crash between SNS's answer and the
 *   ledger write;
 * - nothing is dropped: a message SNS refused for good is parked for `news-alerts replay`, like
 *   the alert run parks it; a message that failed for now makes the step throw
 *   WorkItemRetryError, so SQS delivers the item again, until the last delivery the queue allows
 *   (`lastAttempt`), where it is parked too (code `RetriesExhausted`) instead of leaving the item
 *   to the dead-letter queue;
 * - the item counts in its dispatch exactly once, and only once every message is handled
 *   (published, already delivered, or parked): a retried item is not marked done, and a
 *   redelivered one that was done changes no count (DispatchStore.completeItem).
 *
 * Message bodies are never logged (they hold subscriber-facing links): logs carry ids and counts.
 */
import { LedgerWriter } from './delivery-buffers.ts';
import { describeError, WorkItemRetryError } from './errors.ts';
import {
  type DispatchStore,
  deliveryId,
  type FailedMessage,
  isUpdateNoticeKey,
  type Log,
  type Notifier,
  type OutboundMessage,
  type PublishOutcome,
  type StateStore,
  undeliverableRecord,
  type WorkItem,
  type WorkItemResult,
} from './ports.ts';

/** What {@link publishWorkItem} works with: the same adapters as the alert run, and the dispatches. */
export interface PublishWorkDeps {
  readonly state: StateStore;
  readonly notifier: Notifier;
  readonly dispatches: DispatchStore;
  readonly log: Log;
  readonly now: () => number;
  /** Longest a ledger record waits for a full batch (see LedgerWriter). */
  readonly ledgerFlushDelayMs: number;
}

/** How this delivery of the item is handled. */
export interface PublishWorkOptions {
  /**
   * This is the last delivery the queue allows (ApproximateReceiveCount ≥ maxReceiveCount):
   * messages that fail for now are parked instead of retried, since a retry would not come.
   */
  readonly lastAttempt: boolean;
  /** Stops new PublishBatch calls (the invocation is about to time out). */
  readonly signal?: AbortSignal | undefined;
}

/** The code of a message parked because its transient failure outlasted the queue's deliveries. */
export const retriesExhaustedCode = 'RetriesExhausted';

/**
 * Publishes one work item: skips what the ledger holds, publishes the rest writing the ledger as
 * SNS accepts them, parks what SNS refused for good, and marks the item done in its dispatch.
 *
 * @returns what this delivery did with the item's messages (also when the dispatch already counted
 *   it); they add up to the item's messages. A message an earlier delivery of the same item
 *   published (one that was then retried) counts as `alreadyDelivered`: the ledger cannot tell
 *   which delivery wrote it.
 * @throws WorkItemRetryError when some messages failed for now and this is not the last attempt
 *   (the item is not marked done; SQS delivers it again). Errors of the ledger, the state table
 *   or the dispatch store are rethrown as they are, after what SNS accepted reached the ledger.
 */
export async function publishWorkItem(
  item: WorkItem,
  deps: PublishWorkDeps,
  options: PublishWorkOptions,
): Promise<WorkItemResult> {
  const { log } = deps;
  const context = { dispatchId: item.dispatchId, itemId: item.itemId, audienceId: item.audienceId };
  const delivered = await deps.state.findDelivered(item.messages.map((message) => message.key));
  const fresh = new Map<string, OutboundMessage>();
  for (const message of item.messages) {
    const id = deliveryId(message.key);
    // A key twice in one item is sent once; the second copy is handled by the first.
    if (!delivered.has(id) && !fresh.has(id)) fresh.set(id, message);
  }
  const counts = { published: 0, updateNotices: 0, alreadyDelivered: item.messages.length - fresh.size, parked: 0 };

  const outcome = await publishAndRecord([...fresh.values()], deps, options.signal, (message) => {
    if (isUpdateNoticeKey(message.key.articleKey)) counts.updateNotices += 1;
    else counts.published += 1;
  });

  const permanent = outcome.failed.filter((failure) => failure.permanent);
  const transient = outcome.failed.filter((failure) => !failure.permanent);
  if (permanent.length > 0) {
    await park(deps, permanent, context, 'SNS refused notifications for good; parked them for `news-alerts replay`');
    counts.parked += permanent.length;
  }
  if (transient.length > 0) {
    const codes = [...new Set(transient.map((failure) => failure.code))];
    if (!options.lastAttempt) {
      log.warn('notifications of a work item were not published; the queue delivers it again', {
        ...context,
        count: transient.length,
        codes,
      });
      throw new WorkItemRetryError(transient.length, codes);
    }
    await park(
      deps,
      transient.map((failure) => ({
        ...failure,
        code: retriesExhaustedCode,
        reason: `still failing on the last delivery the queue allows (${failure.code}: ${failure.reason})`,
      })),
      context,
      'notifications kept failing until the last delivery of their work item; parked them for `news-alerts replay`',
    );
    counts.parked += transient.length;
  }

  const result: WorkItemResult = { ...counts };
  const first = await deps.dispatches.completeItem(item.dispatchId, item.itemId, result, deps.now());
  if (first) log.info('published a work item', { ...context, ...result });
  else
    log.info('a work item was delivered again after it was done; its dispatch counts it once', {
      ...context,
      ...result,
    });
  return result;
}

/**
 * Publishes `messages`, writing each batch SNS accepts to the ledger before counting it. The
 * ledger is flushed before this returns, and also before an error leaves it: what SNS accepted
 * and the ledger misses is exactly what the next delivery of the item would send again.
 */
async function publishAndRecord(
  messages: readonly OutboundMessage[],
  deps: PublishWorkDeps,
  signal: AbortSignal | undefined,
  onRecorded: (message: OutboundMessage) => void,
): Promise<PublishOutcome> {
  if (messages.length === 0) return { published: [], failed: [] };
  const ledger = new LedgerWriter(deps.state, { maxDelayMs: deps.ledgerFlushDelayMs, now: deps.now });
  try {
    const outcome = await deps.notifier.publish(messages, {
      ...(signal === undefined ? {} : { signal }),
      onPublished: async (batch) => {
        await ledger.add(batch);
        for (const { message } of batch) onRecorded(message);
      },
    });
    await ledger.flush();
    return outcome;
  } catch (error) {
    await ledger
      .flush()
      .catch((ledgerError: unknown) =>
        deps.log.error('could not record published notifications in the ledger', { error: describeError(ledgerError) }),
      );
    throw error;
  }
}

/** Parks failures as the alert run does (delivery-pipeline.ts), for `news-alerts replay --parked`. */
async function park(
  deps: PublishWorkDeps,
  failures: readonly FailedMessage[],
  context: Record<string, unknown>,
  logMessage: string,
): Promise<void> {
  const failedAt = deps.now();
  await deps.state.recordUndeliverable(failures.map((failure) => undeliverableRecord(failure, failedAt)));
  deps.log.error(logMessage, {
    ...context,
    count: failures.length,
    codes: [...new Set(failures.map((failure) => failure.code))],
  });
}
