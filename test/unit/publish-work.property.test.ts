/**
 * The publisher's step (functions/core/publish-work.ts) over whole delivery histories: an item
 * (repeated keys, update notices, entries the ledger already holds) is delivered by SQS up to
 * maxReceiveCount times while each message succeeds, fails for good, or fails for now a number of
 * times. Whatever the mix:
 * - no notification is sent twice, and none is lost: each is published, was already in the ledger,
 *   or is parked (code `RetriesExhausted` when its transient failure outlasted the deliveries);
 * - the item is retried exactly while something failed for now, and counted in its dispatch once,
 *   on the delivery that handled everything, with counts that add up to its messages.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { WorkItemRetryError } from '#core/errors';
import {
  type DispatchHead,
  type DispatchStore,
  deliveryId,
  type FailedMessage,
  type OutboundMessage,
  silentLog,
  updateNoticeKey,
  type WorkItem,
  type WorkItemResult,
} from '#core/ports';
import { publishWorkItem, retriesExhaustedCode } from '#core/publish-work';
import { MemoryNotifier, MemoryStateStore } from '#test/fake-ports';

const t0 = Date.UTC(2025, 2, 14, 9, 0);
const maxReceiveCount = 3;

/** Completion records only (the step uses nothing else of the store). */
class Completions implements DispatchStore {
  readonly calls: { result: WorkItemResult; first: boolean }[] = [];
  readonly #done = new Set<string>();
  async completeItem(dispatchId: string, itemId: string, result: WorkItemResult): Promise<boolean> {
    const first = !this.#done.has(`${dispatchId}#${itemId}`);
    this.#done.add(`${dispatchId}#${itemId}`);
    this.calls.push({ result, first });
    return first;
  }
  async claimItems(): Promise<never> {
    throw new Error('publishWorkItem claims nothing');
  }
  async settleItems(): Promise<never> {
    throw new Error('publishWorkItem settles nothing: it completes each item');
  }
  async read(): Promise<DispatchHead | undefined> {
    return undefined;
  }
  async readOpen(): Promise<DispatchHead | undefined> {
    return undefined;
  }
  async open(): Promise<void> {}
  async countEnqueued(): Promise<void> {}
  async seal(): Promise<void> {}
  async close(): Promise<void> {}
  async stopClaims(): Promise<void> {}
  async liveClaimsUntil(): Promise<undefined> {
    return undefined;
  }
}

/** How SNS treats a message: accepts it, refuses it for good, or fails it the first `times` sends. */
type Fate = { kind: 'ok' } | { kind: 'permanent' } | { kind: 'transient'; times: number };

const fate: fc.Arbitrary<Fate> = fc.oneof(
  fc.constant({ kind: 'ok' as const }),
  fc.constant({ kind: 'permanent' as const }),
  fc.integer({ min: 1, max: 4 }).map((times) => ({ kind: 'transient' as const, times })),
);

const scenario = fc.record({
  /** Message slots: which of 8 keys (repeats allowed), and whether the key is an update notice. */
  slots: fc.array(fc.record({ n: fc.integer({ min: 0, max: 7 }), notice: fc.boolean() }), {
    minLength: 1,
    maxLength: 20,
  }),
  fates: fc.array(fate, { minLength: 16, maxLength: 16 }),
  inLedger: fc.uniqueArray(fc.integer({ min: 0, max: 15 }), { maxLength: 6 }),
});

/** The index of a key (0-15: 8 articles, each as an alert or as an update notice). */
const slotIndex = (slot: { n: number; notice: boolean }) => slot.n + (slot.notice ? 8 : 0);

const messageFor = (index: number): OutboundMessage => ({
  key:
    index < 8
      ? { audienceId: 'markets', articleKey: `id:${index}` }
      : updateNoticeKey('markets', `id:${index - 8}`, 'title'),
  topicArn: 'arn:aws:sns:us-east-1:123456789012:markets',
  subject: `Message ${index}`,
  body: JSON.stringify({ default: `message ${index}` }),
  ruleIds: ['rates'],
  facts: { status: '', titleHash: `h${index}` },
});

describe('publishWorkItem over a delivery history (property)', () => {
  it('sends nothing twice, loses nothing, retries exactly while needed and completes once', async () => {
    await fc.assert(
      fc.asyncProperty(scenario, async ({ slots, fates, inLedger }) => {
        const indexes = slots.map(slotIndex);
        const fateOf = (index: number) => fates[index] as Fate;
        const state = new MemoryStateStore();
        for (const index of inLedger) {
          await state.recordDelivered([{ ...messageFor(index).key, deliveredAt: t0 - 1, ruleIds: [] }]);
        }
        const sends = new Map<string, number>();
        const notifier = new MemoryNotifier((message): Omit<FailedMessage, 'message'> | undefined => {
          const id = deliveryId(message.key);
          const sent = sends.get(id) ?? 0;
          sends.set(id, sent + 1);
          const index = indexes.find((candidate) => deliveryId(messageFor(candidate).key) === id) as number;
          const f = fateOf(index);
          if (f.kind === 'permanent') return { code: 'InvalidParameter', reason: 'refused', permanent: true };
          if (f.kind === 'transient' && sent < f.times)
            return { code: 'Throttled', reason: 'slow down', permanent: false };
          return undefined;
        });
        const dispatches = new Completions();
        const deps = { state, notifier, dispatches, log: silentLog, now: () => t0, ledgerFlushDelayMs: 0 };
        const item: WorkItem = {
          v: 1,
          dispatchId: 'run-1',
          itemId: 'item-1',
          audienceId: 'markets',
          queuedAt: t0,
          messages: indexes.map(messageFor),
        };

        let result: WorkItemResult | undefined;
        let sentBeforeFinal = 0;
        const distinct = [...new Set(indexes)];
        const fresh = distinct.filter((index) => !inLedger.includes(index));
        for (let receive = 1; receive <= maxReceiveCount && result === undefined; receive++) {
          const lastAttempt = receive === maxReceiveCount;
          // Something fails for now on this delivery: a transient message sent fewer times than it fails.
          const retryExpected =
            !lastAttempt &&
            fresh.some((index) => {
              const f = fateOf(index);
              return f.kind === 'transient' && f.times >= receive;
            });
          sentBeforeFinal = notifier.published.length;
          try {
            result = await publishWorkItem(item, deps, { lastAttempt });
            expect(retryExpected).toBe(false);
          } catch (error) {
            expect(error).toBeInstanceOf(WorkItemRetryError);
            expect(retryExpected).toBe(true);
            expect(dispatches.calls).toEqual([]);
          }
        }
        if (result === undefined) throw new Error('the last delivery did not complete the item');

        const published = notifier.published.map((message) => deliveryId(message.key));
        expect(new Set(published).size).toBe(published.length);
        const exhausted = (index: number) => {
          const f = fateOf(index);
          return f.kind === 'transient' && f.times >= maxReceiveCount;
        };
        const expectPublished = fresh.filter((index) => fateOf(index).kind !== 'permanent' && !exhausted(index));
        expect(published.sort()).toEqual(expectPublished.map((index) => deliveryId(messageFor(index).key)).sort());
        for (const index of fresh) {
          const id = deliveryId(messageFor(index).key);
          const parked = state.undeliverable.get(id);
          if (expectPublished.includes(index)) {
            expect(state.ledger.get(id)).toMatchObject({ titleHash: `h${index}` });
            expect(parked).toBeUndefined();
          } else {
            expect(state.ledger.has(id)).toBe(false);
            expect(parked?.code).toBe(exhausted(index) ? retriesExhaustedCode : 'InvalidParameter');
          }
        }

        expect(dispatches.calls).toEqual([{ result, first: true }]);
        expect(result.published + result.updateNotices + result.alreadyDelivered + result.parked).toBe(
          item.messages.length,
        );
        expect(result.parked).toBe(fresh.length - expectPublished.length);
        // Counts are of the delivery that completed: what an earlier delivery of the item published
        // is already in the ledger by then.
        const final = notifier.published.slice(sentBeforeFinal).map((message) => message.key.articleKey);
        expect(result.updateNotices).toBe(final.filter((key) => key.startsWith('update:')).length);
        expect(result.published).toBe(final.length - result.updateNotices);
      }),
      { numRuns: 300 },
    );
  });
});
