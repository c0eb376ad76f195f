/**
 * The publisher's step (sharded publishing): a batch of work items from the queue, each published
 * once.
 *
 * What it guarantees, whatever SQS does (redeliver an item, deliver it twice at once, retry it
 * after a crash at any point):
 * - nothing the ledger holds is sent again: the ledger is read first, and each batch SNS accepts
 *   is written to it at once (LedgerWriter, flushed before the step ends, also when it fails), so
 *   the only duplicate window is the one of single mode: a crash between SNS's answer and the
 *   ledger write;
 * - two deliveries of one item at the same time never both publish: with a claim (the publisher
 *   function always passes one), the items are claimed in the dispatch store first; an item another
 *   delivery holds fails with WorkItemBusyError and comes back later, an item already done answers
 *   with the result it was counted with and publishes nothing;
 * - nothing is dropped: a message SNS refused for good is parked for `news-alerts replay`, like
 *   the alert run parks it; a message that failed for now makes its item fail with
 *   WorkItemRetryError, so SQS delivers the item again, until the last delivery the queue allows
 *   (`lastAttempt`), where it is parked too (code `RetriesExhausted`) instead of leaving the item
 *   to the dead-letter queue;
 * - each item counts in its dispatch exactly once, and only once every message is handled
 *   (published, already delivered, or parked): a retried item is not marked done, and a
 *   redelivered one that was done changes no count.
 *
 * The items of a batch share their requests, so a batch costs about what single mode's run costs
 * for the same notifications: a read of the dispatch's head and one claim transaction, ledger
 * lookups of up to 100 keys, PublishBatch
 * per topic, ledger writes of 25, one parking write, and one settling transaction per dispatch.
 *
 * Message bodies are never logged (they hold subscriber-facing links): logs carry ids and counts.
 */
import { LedgerWriter } from './delivery-buffers.ts';
import { describeError, WorkItemBusyError, WorkItemRetryError } from './errors.ts';
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
  type WorkItemRef,
  type WorkItemResult,
} from './ports.ts';

/** What {@link publishWorkItems} works with: the same adapters as the alert run, and the dispatches. */
export interface PublishWorkDeps {
  readonly state: StateStore;
  readonly notifier: Notifier;
  readonly dispatches: DispatchStore;
  readonly log: Log;
  readonly now: () => number;
  /** Longest a ledger record waits for a full batch (see LedgerWriter). */
  readonly ledgerFlushDelayMs: number;
}

/** How one delivery of an item is handled. */
export interface PublishWorkOptions {
  /**
   * This is the last delivery the queue allows (ApproximateReceiveCount ≥ maxReceiveCount):
   * messages that fail for now are parked instead of retried, since a retry would not come.
   */
  readonly lastAttempt: boolean;
  /** Stops new PublishBatch calls (the invocation is about to time out). */
  readonly signal?: AbortSignal | undefined;
}

/** One item of a batch, with whether this is its last delivery. */
export interface WorkItemDelivery {
  readonly item: WorkItem;
  readonly lastAttempt: boolean;
}

/** What became of one item of a batch. */
export type WorkItemOutcome =
  /**
   * Handled: every message published, already delivered or parked. `counted` is false when the
   * dispatch had counted it already (a redelivery), and then `result` is the count it kept.
   */
  | { readonly kind: 'done'; readonly result: WorkItemResult; readonly counted: boolean }
  /** Not done: WorkItemRetryError, WorkItemBusyError, or what stopped the batch; SQS brings it back. */
  | { readonly kind: 'failed'; readonly error: unknown };

/** Options of {@link publishWorkItems}. */
export interface PublishBatchOptions {
  /** Stops new PublishBatch calls (the invocation is about to time out). */
  readonly signal?: AbortSignal | undefined;
  /**
   * Claims the items for this delivery first (DispatchStore.claimItems) and settles them at the
   * end in one request per dispatch. Without it each item is completed on its own
   * (DispatchStore.completeItem) and nothing stops a concurrent delivery.
   */
  readonly claim?: { readonly owner: string; readonly until: number } | undefined;
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
  const [outcome] = await publishWorkItems([{ item, lastAttempt: options.lastAttempt }], deps, {
    signal: options.signal,
  });
  if (outcome === undefined) throw new Error('publishWorkItems answered no outcome for the item');
  if (outcome.kind === 'failed') throw outcome.error;
  return outcome.result;
}

/** A thrown value as an Error, to report as an item's failure. */
const asError = (error: unknown): Error => (error instanceof Error ? error : new Error(String(error)));

/** The result of an item that sent nothing. */
const noResult: WorkItemResult = { published: 0, updateNotices: 0, alreadyDelivered: 0, parked: 0 };

/** One claimed item while its batch is worked on. */
interface Working {
  readonly index: number;
  readonly delivery: WorkItemDelivery;
  readonly context: Record<string, unknown>;
  /** Its messages the ledger does not hold, first copy of each delivery id (across the batch). */
  readonly fresh: OutboundMessage[];
  readonly counts: { published: number; updateNotices: number; alreadyDelivered: number; parked: number };
  readonly permanent: FailedMessage[];
  readonly transient: FailedMessage[];
}

/**
 * Publishes a batch of work items together (see the module comment): one outcome per delivery, in
 * order. Throws only when the batch as a whole could not be worked on (the claims, the ledger,
 * the state table or SNS failed as a whole), after what SNS accepted reached the ledger and the
 * claims were released; then none of its items is done. A dispatch that cannot count its items
 * (no head) fails only those.
 */
export async function publishWorkItems(
  deliveries: readonly WorkItemDelivery[],
  deps: PublishWorkDeps,
  options: PublishBatchOptions = {},
): Promise<WorkItemOutcome[]> {
  const { log } = deps;
  const outcomes: (WorkItemOutcome | undefined)[] = deliveries.map(() => undefined);
  const refs = deliveries.map(({ item }) => ({ dispatchId: item.dispatchId, itemId: item.itemId }));
  const claim = options.claim;
  const claims =
    claim === undefined
      ? undefined
      : await deps.dispatches.claimItems(refs, { owner: claim.owner, until: claim.until, now: deps.now() });

  // Two deliveries of the same item in one batch (SQS sent it twice): the first does the work, the
  // second shares its outcome.
  const firstOf = new Map<string, number>();
  const working: Working[] = [];
  deliveries.forEach((delivery, index) => {
    const { item } = delivery;
    const context = { dispatchId: item.dispatchId, itemId: item.itemId, audienceId: item.audienceId };
    const answer = claims?.[index];
    if (answer?.state === 'done') {
      outcomes[index] = { kind: 'done', result: answer.result, counted: false };
      log.info('a work item was delivered again after it was done; its dispatch counts it once', {
        ...context,
        ...answer.result,
      });
      return;
    }
    if (answer?.state === 'busy') {
      outcomes[index] = { kind: 'failed', error: new WorkItemBusyError() };
      return;
    }
    if (answer?.state === 'closed') {
      // Given up by a run, which reads its days again: what the ledger misses is queued anew.
      outcomes[index] = { kind: 'done', result: { ...noResult }, counted: false };
      log.info(
        'a work item of a closed dispatch was delivered; its run reads its days again, so it sends nothing',
        context,
      );
      return;
    }
    const key = `${item.dispatchId}\u0000${item.itemId}`;
    if (firstOf.has(key)) return;
    firstOf.set(key, index);
    working.push({
      index,
      delivery,
      context,
      fresh: [],
      counts: { published: 0, updateNotices: 0, alreadyDelivered: 0, parked: 0 },
      permanent: [],
      transient: [],
    });
  });

  // When the batch fails as a whole, its items come back: the next delivery must not wait for
  // claims nobody works on any more.
  const releaseAll = async (): Promise<void> => {
    if (claim === undefined || working.length === 0) return;
    await deps.dispatches
      .settleItems(claim.owner, { done: [], released: working.map((w) => refs[w.index] as WorkItemRef) }, deps.now())
      .catch((releaseError: unknown) =>
        log.error('could not release the claims of a failed batch; its items wait until the claims lapse', {
          items: working.length,
          error: describeError(releaseError),
        }),
      );
  };
  try {
    if (working.length > 0) await work(working, deps, options.signal);
  } catch (error) {
    await releaseAll();
    throw error;
  }

  // Each item: done (its messages all handled), or retried (some failed for now, not on its last delivery).
  const done: Working[] = [];
  const retried: Working[] = [];
  for (const w of working) {
    if (w.transient.length > 0 && !w.delivery.lastAttempt) {
      const codes = [...new Set(w.transient.map((failure) => failure.code))];
      log.warn('notifications of a work item were not published; the queue delivers it again', {
        ...w.context,
        count: w.transient.length,
        codes,
      });
      outcomes[w.index] = { kind: 'failed', error: new WorkItemRetryError(w.transient.length, codes) };
      retried.push(w);
    } else {
      done.push(w);
    }
  }
  const completed = await complete(done, retried, deps, claim?.owner);
  done.forEach((w, position) => {
    const result: WorkItemResult = { ...w.counts };
    const counted = completed[position] ?? false;
    if (counted instanceof Error) {
      // Its messages are handled (the ledger has them); only its dispatch could not count it.
      log.error('a work item was handled but its dispatch could not count it; the queue delivers it again', {
        ...w.context,
        ...result,
        error: describeError(counted),
      });
      outcomes[w.index] = { kind: 'failed', error: counted };
      return;
    }
    if (counted) log.info('published a work item', { ...w.context, ...result });
    else
      log.info('a work item was delivered again after it was done; its dispatch counts it once', {
        ...w.context,
        ...result,
      });
    outcomes[w.index] = { kind: 'done', result, counted };
  });
  // A second delivery of an item in the same batch shares the first one's outcome.
  deliveries.forEach(({ item }, index) => {
    if (outcomes[index] !== undefined) return;
    const first = firstOf.get(`${item.dispatchId}\u0000${item.itemId}`);
    const shared = first === undefined ? undefined : outcomes[first];
    outcomes[index] =
      shared?.kind === 'done'
        ? { ...shared, counted: false }
        : (shared ?? { kind: 'failed', error: new WorkItemBusyError() });
  });
  return outcomes as WorkItemOutcome[];
}

/**
 * The shared part of a batch: one ledger lookup, one publish of every fresh message, and the
 * parking of what failed for good (or for now on an item's last delivery). Fills each item's
 * counts and failures.
 */
async function work(working: readonly Working[], deps: PublishWorkDeps, signal: AbortSignal | undefined) {
  const delivered = await deps.state.findDelivered(
    working.flatMap((w) => w.delivery.item.messages.map((message) => message.key)),
  );
  const owner = new Map<string, Working>();
  for (const w of working) {
    for (const message of w.delivery.item.messages) {
      const id = deliveryId(message.key);
      // A key twice in one item (or in two items of the batch) is sent once; the other copies are
      // handled by the first.
      if (delivered.has(id) || owner.has(id)) {
        w.counts.alreadyDelivered += 1;
        continue;
      }
      owner.set(id, w);
      w.fresh.push(message);
    }
  }
  const outcome = await publishAndRecord(
    working.flatMap((w) => w.fresh),
    deps,
    signal,
    (message) => {
      const w = owner.get(deliveryId(message.key));
      if (w === undefined) return;
      if (isUpdateNoticeKey(message.key.articleKey)) w.counts.updateNotices += 1;
      else w.counts.published += 1;
    },
  );
  for (const failure of outcome.failed) {
    const w = owner.get(deliveryId(failure.message.key));
    if (w === undefined) continue;
    (failure.permanent ? w.permanent : w.transient).push(failure);
  }

  // Parked together: what SNS refused for good, and what failed for now on an item's last delivery.
  const parked: FailedMessage[] = [];
  for (const w of working) {
    parked.push(...w.permanent);
    if (w.delivery.lastAttempt) {
      parked.push(
        ...w.transient.map((failure) => ({
          ...failure,
          code: retriesExhaustedCode,
          reason: `still failing on the last delivery the queue allows (${failure.code}: ${failure.reason})`,
        })),
      );
    }
  }
  if (parked.length === 0) return;
  const failedAt = deps.now();
  await deps.state.recordUndeliverable(parked.map((failure) => undeliverableRecord(failure, failedAt)));
  for (const w of working) {
    if (w.permanent.length > 0) {
      deps.log.error('SNS refused notifications for good; parked them for `news-alerts replay --parked`', {
        ...w.context,
        count: w.permanent.length,
        codes: [...new Set(w.permanent.map((failure) => failure.code))],
      });
      w.counts.parked += w.permanent.length;
    }
    if (w.delivery.lastAttempt && w.transient.length > 0) {
      deps.log.error(
        'notifications kept failing until the last delivery of their work item; parked them for `news-alerts replay --parked`',
        { ...w.context, count: w.transient.length, codes: [retriesExhaustedCode] },
      );
      w.counts.parked += w.transient.length;
    }
  }
}

/**
 * Marks the done items in their dispatches, and releases the claims of the retried ones: one
 * settling request per dispatch with a claim, one completion per item without. Per done item:
 * whether it was counted here, or why its dispatch could not count it (no head: deleted by hand,
 * expired, or an item naming a dispatch that never was). One dispatch failing fails only its own
 * items: the others of the batch are done, and poison never holds back the rest.
 */
async function complete(
  done: readonly Working[],
  retried: readonly Working[],
  deps: PublishWorkDeps,
  owner: string | undefined,
): Promise<(boolean | Error)[]> {
  const ref = (w: Working) => ({ dispatchId: w.delivery.item.dispatchId, itemId: w.delivery.item.itemId });
  const answers = new Map<Working, boolean | Error>();
  if (owner !== undefined) {
    // The store settles one dispatch per request anyway: asking per dispatch costs nothing more.
    for (const dispatchId of new Set([...done, ...retried].map((w) => w.delivery.item.dispatchId))) {
      const doneHere = done.filter((w) => w.delivery.item.dispatchId === dispatchId);
      const retriedHere = retried.filter((w) => w.delivery.item.dispatchId === dispatchId);
      try {
        const counted = await deps.dispatches.settleItems(
          owner,
          { done: doneHere.map((w) => ({ ...ref(w), result: { ...w.counts } })), released: retriedHere.map(ref) },
          deps.now(),
        );
        for (const [position, w] of doneHere.entries()) answers.set(w, counted[position] ?? false);
      } catch (error) {
        for (const w of doneHere) answers.set(w, asError(error));
        // Nothing of this dispatch was written: its claims go, so the next delivery need not wait.
        await deps.dispatches
          .settleItems(owner, { done: [], released: [...doneHere, ...retriedHere].map(ref) }, deps.now())
          .catch((releaseError: unknown) =>
            deps.log.error('could not release the claims of work items; they wait until the claims lapse', {
              dispatchId,
              items: doneHere.length + retriedHere.length,
              error: describeError(releaseError),
            }),
          );
      }
    }
  } else {
    for (const w of done) {
      const { dispatchId, itemId } = ref(w);
      answers.set(
        w,
        await deps.dispatches
          .completeItem(dispatchId, itemId, { ...w.counts }, deps.now())
          .catch((error: unknown) => asError(error)),
      );
    }
  }
  return done.map((w) => answers.get(w) ?? false);
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
