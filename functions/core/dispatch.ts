/**
 * Sharded publishing, the alert run's side (`publishMode: sharded`, DESIGN section 10). The run
 * reads, matches and plans as always, but hands what it would publish to the publisher function as
 * SQS work items of its **dispatch**; the publishers publish, write the ledger and count each item
 * done in the dispatch (functions/core/publish-work.ts). The guarantees of DESIGN section 3 hold
 * because:
 *
 * - No alert is lost: the watermark moves to where the run would have moved it (`advanceTo`) only
 *   once the dispatch is sealed and every item it expected is done. Until then the run does not
 *   move it at all; a dispatch the run cannot see finish is settled by the next run before that
 *   one reads anything (`settleOpenDispatch`). A dispatch that never finishes (its items dead in
 *   the dead-letter queue) is given up after `abandonAfterMs` without moving the watermark: the
 *   days are read again, and the ledger keeps what the publishers did send from going out twice.
 * - No alert is sent twice: one dispatch is open at a time, so no run queues a notification that
 *   an earlier run's item may still be publishing; items carry only ledger-checked notifications,
 *   and the publisher checks the ledger again (a redelivered item) under Powertools idempotency
 *   (two deliveries of one item at once).
 * - Nothing waits for nothing: a run that queued nothing never opens a dispatch.
 */

import { setTimeout as sleep } from 'node:timers/promises';
import {
  type DispatchHead,
  type DispatchStore,
  dispatchComplete,
  type EnqueueOutcome,
  type Lease,
  type Log,
  type OutboundMessage,
  type ShardedPublishing,
  type WorkQueue,
} from './ports.ts';

/** What happened to a dispatch, as the run history and `news-alerts runs list` show it. */
export interface RunDispatch {
  dispatchId: string;
  state: 'completed' | 'in-flight' | 'abandoned';
  /** Items the run sealed the dispatch with (or counted as enqueued, if it never sealed it). */
  items: number;
  done: number;
  published: number;
  updateNotices: number;
  alreadyDelivered: number;
  parked: number;
}

/** Default of `AlertRunSettings.dispatchAbandonAfterMs`. */
export const defaultDispatchAbandonAfterMs = 15 * 60_000;

/**
 * When the dispatch's last item was queued at the latest: when it was sealed, or, for a run that
 * died before sealing it, as long after it opened as a run may last (`runLimitMs`). The give-up
 * clock starts there, so an item queued late in a long run gets all its retries too.
 */
function lastQueuedBy(head: DispatchHead, runLimitMs: number): number {
  return head.sealedAt ?? head.openedAt + runLimitMs;
}

/** The first and the longest pause between two reads of a dispatch head while waiting for it. */
const firstPollMs = 50;
const maxPollMs = 2_000;

/** A dispatch head as the run history keeps it. */
export function runDispatchOf(head: DispatchHead, state: RunDispatch['state']): RunDispatch {
  return {
    dispatchId: head.dispatchId,
    state,
    items: head.expected ?? head.enqueued,
    done: head.done,
    published: head.published,
    updateNotices: head.updateNotices,
    alreadyDelivered: head.alreadyDelivered,
    parked: head.parked,
  };
}

/**
 * Reads the dispatch head until it is complete or `signal` fires, pausing a little longer each
 * time (the publishers finish items at their own pace; there is no event to await across
 * functions). Returns the last head read, or undefined when there is none.
 */
export async function waitForDispatch(
  dispatches: DispatchStore,
  dispatchId: string,
  signal: AbortSignal,
): Promise<DispatchHead | undefined> {
  let pause = firstPollMs;
  for (;;) {
    const head = await dispatches.read(dispatchId);
    if (head === undefined || dispatchComplete(head) || signal.aborted) return head;
    try {
      await sleep(pause, undefined, { signal });
    } catch {
      // The deadline: one last read below tells how far the publishers got.
      return await dispatches.read(dispatchId);
    }
    pause = Math.min(pause * 2, maxPollMs);
  }
}

/** How an earlier run's open dispatch stands once this run looked at it. */
export type Settlement =
  | { readonly kind: 'none' }
  | { readonly kind: 'completed' | 'abandoned' | 'waiting'; readonly head: DispatchHead };

/**
 * Looks at the open dispatch an earlier run left (if any), waiting for it until `signal` fires:
 * `completed` (the caller moves the watermark to its `advanceTo` and closes it), `abandoned`
 * (its last item queued longer than `abandonAfterMs` ago: the caller closes it and reads its days
 * again) or
 * `waiting` (still in flight: the caller must not queue anything new).
 */
export async function settleOpenDispatch(
  dispatches: DispatchStore,
  options: { signal: AbortSignal; abandonAfterMs: number; runLimitMs: number; now: () => number },
): Promise<Settlement> {
  const open = await dispatches.readOpen();
  if (open === undefined) return { kind: 'none' };
  if (dispatchComplete(open)) return { kind: 'completed', head: open };
  const tooOld = (head: DispatchHead) =>
    options.now() - lastQueuedBy(head, options.runLimitMs) >= options.abandonAfterMs;
  // Old enough to be given up: waiting would only delay the re-read that recovers its alerts.
  if (tooOld(open)) return { kind: 'abandoned', head: open };
  const head = (await waitForDispatch(dispatches, open.dispatchId, options.signal)) ?? open;
  if (dispatchComplete(head)) return { kind: 'completed', head };
  if (tooOld(head)) return { kind: 'abandoned', head };
  return { kind: 'waiting', head };
}

/**
 * The run's own dispatch: a {@link WorkQueue} that opens the dispatch (under the run lease) the
 * first time something is queued, so a run with nothing to send writes nothing.
 */
export class RunDispatcher implements WorkQueue {
  readonly dispatchId: string;
  readonly #sharded: ShardedPublishing;
  readonly #lease: Lease;
  readonly #now: () => number;
  #opened = false;

  constructor(sharded: ShardedPublishing, lease: Lease, dispatchId: string, now: () => number) {
    this.#sharded = sharded;
    this.#lease = lease;
    this.dispatchId = dispatchId;
    this.#now = now;
  }

  /** True once something was queued: the watermark then waits for the dispatch. */
  get opened(): boolean {
    return this.#opened;
  }

  async enqueue(
    dispatchId: string,
    messages: readonly OutboundMessage[],
    options: { signal?: AbortSignal },
  ): Promise<EnqueueOutcome> {
    if (!this.#opened) {
      await this.#sharded.dispatches.open(this.#lease, this.dispatchId, this.#now());
      this.#opened = true;
    }
    return await this.#sharded.queue.enqueue(dispatchId, messages, options);
  }

  /** No more items: `expected` were accepted; the watermark may move to `advanceTo` once they are done. */
  async seal(expected: number, advanceTo: number | undefined): Promise<void> {
    await this.#sharded.dispatches.seal(this.#lease, this.dispatchId, { expected, advanceTo }, this.#now());
  }

  /** Waits for the publishers until `signal` fires; the last head read. */
  async wait(signal: AbortSignal): Promise<DispatchHead | undefined> {
    return await waitForDispatch(this.#sharded.dispatches, this.dispatchId, signal);
  }

  async close(outcome: 'completed' | 'abandoned'): Promise<void> {
    await this.#sharded.dispatches.close(this.#lease, this.dispatchId, outcome, this.#now());
  }
}

/** Logs a dispatch given up on: its days are read again, and its dead items wait in the DLQ. */
export function logAbandoned(log: Log, head: DispatchHead): void {
  log.error(
    "gave up waiting for an earlier run's work items; reading its days again (the ledger prevents duplicates)",
    {
      dispatchId: head.dispatchId,
      expected: head.expected,
      enqueued: head.enqueued,
      done: head.done,
      replay: 'work items that failed for good are in the work dead-letter queue: news-alerts replay --parked',
    },
  );
}
