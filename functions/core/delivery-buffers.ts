/**
 * The two buffers between matching and SNS that keep request counts near their floor without
 * widening the one accepted duplicate window:
 *
 * - `LedgerWriter` collects records of published notifications (and of story copies that were
 *   collapsed instead of sent) and writes them in full BatchWriteItem calls (25), but never lets a
 *   record wait longer than `maxDelayMs`: a record that SNS accepted but the ledger does not yet
 *   hold is exactly what a crash would send twice.
 * - `Outbox` collects rendered messages per topic and releases only full PublishBatch batches (10)
 *   until the caller flushes, so a topic that receives a few messages per page still costs
 *   ceil(messages / 10) requests per day window.
 */
import type { DeliveryRecord, OutboundMessage, PublishedMessage, StateStore } from './ports.ts';

/** DynamoDB's BatchWriteItem limit. */
export const ledgerBatchSize = 25;
/** SNS PublishBatch's entry limit. */
export const snsBatchSize = 10;

/** Buffers ledger records and writes them in full batches, flushing early after `maxDelayMs`. */
export class LedgerWriter {
  readonly #state: Pick<StateStore, 'recordDelivered'>;
  readonly #maxDelayMs: number;
  readonly #now: () => number;
  #pending: DeliveryRecord[] = [];
  #timer: NodeJS.Timeout | undefined;
  #writes: Promise<void> = Promise.resolve();
  #failure: unknown;
  #written = 0;

  constructor(state: Pick<StateStore, 'recordDelivered'>, options: { maxDelayMs: number; now: () => number }) {
    this.#state = state;
    this.#maxDelayMs = options.maxDelayMs;
    this.#now = options.now;
  }

  /**
   * Records that SNS accepted these messages, with the facts each carries (story, status, title
   * hash). Throws if an earlier ledger write failed.
   */
  async add(batch: readonly PublishedMessage[]): Promise<void> {
    const deliveredAt = this.#now();
    await this.record(
      batch.map(({ message, messageId }) => ({
        ...message.facts,
        ...message.key,
        deliveredAt,
        messageId,
        ruleIds: message.ruleIds,
      })),
    );
  }

  /**
   * Buffers ready-made ledger records (story copies collapsed instead of sent) with the same
   * batching and delay as published ones. Throws if an earlier ledger write failed.
   */
  async record(records: readonly DeliveryRecord[]): Promise<void> {
    this.#throwIfFailed();
    this.#pending.push(...records);
    const full = this.#pending.length - (this.#pending.length % ledgerBatchSize);
    if (full > 0) {
      this.#write(this.#pending.splice(0, full));
    }
    if (this.#pending.length > 0 && this.#timer === undefined) {
      this.#timer = setTimeout(() => {
        this.#timer = undefined;
        this.#write(this.#pending.splice(0));
      }, this.#maxDelayMs);
    } else if (this.#pending.length === 0) {
      this.#clearTimer();
    }
    // Back-pressure: wait for the ledger when it falls behind SNS, so the set of published but
    // unrecorded notifications stays small.
    await this.#writes;
    this.#throwIfFailed();
  }

  /** Writes everything still pending and waits for all writes; rethrows a failed write. */
  async flush(): Promise<void> {
    this.#clearTimer();
    if (this.#pending.length > 0) this.#write(this.#pending.splice(0));
    await this.#writes;
    this.#throwIfFailed();
  }

  /** Ledger records written so far. */
  get written(): number {
    return this.#written;
  }

  #write(records: DeliveryRecord[]): void {
    if (records.length === 0) return;
    // Every write is attempted even after one failed: each holds notifications SNS already
    // accepted, and each one the ledger misses is sent again by the next run. The first error is
    // kept and stops new publishing (see add).
    this.#writes = this.#writes.then(async () => {
      try {
        await this.#state.recordDelivered(records);
        this.#written += records.length;
      } catch (error) {
        this.#failure ??= error;
      }
    });
  }

  #clearTimer(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  #throwIfFailed(): void {
    if (this.#failure !== undefined) throw this.#failure;
  }
}

/** Per-topic queues that release full SNS batches first and the remainders on `drain`. */
export class Outbox {
  readonly #byTopic = new Map<string, OutboundMessage[]>();

  add(messages: readonly OutboundMessage[]): void {
    for (const message of messages) {
      const queue = this.#byTopic.get(message.topicArn);
      if (queue) queue.push(message);
      else this.#byTopic.set(message.topicArn, [message]);
    }
  }

  /** Removes and returns whole batches of `snsBatchSize` per topic; remainders stay queued. */
  takeFullBatches(): OutboundMessage[] {
    const ready: OutboundMessage[] = [];
    for (const queue of this.#byTopic.values()) {
      const full = queue.length - (queue.length % snsBatchSize);
      if (full > 0) ready.push(...queue.splice(0, full));
    }
    return ready;
  }

  /**
   * Sharded publishing: what goes into work items now. A topic's messages go once it holds at
   * least `minPerTopic` (one work item's worth for its audience); past `maxHeld` waiting, every
   * topic's go (so many audiences with a few messages each do not pile up in memory). Either way a
   * topic gives whole batches of `snsBatchSize` and keeps its remainder for later, as
   * {@link takeFullBatches} does: the publisher sends an item's messages in PublishBatch calls of
   * ten, so a remainder sent now would make a part-full call now and another later, where single
   * mode makes one (issue 33: 1,600 calls against single's 1,200 for the same 10,000
   * notifications). Only when the remainders alone still fill more than half of `maxHeld` do they
   * go too, which keeps memory bounded.
   */
  takeTopicsWith(minPerTopic: number, maxHeld: number): OutboundMessage[] {
    const overflowing = this.size > maxHeld;
    const ready: OutboundMessage[] = [];
    for (const [topic, queue] of this.#byTopic) {
      if (!overflowing && queue.length < minPerTopic) continue;
      const full = queue.length - (queue.length % snsBatchSize);
      if (full > 0) ready.push(...queue.splice(0, full));
      if (queue.length === 0) this.#byTopic.delete(topic);
    }
    if (overflowing && this.size > maxHeld / 2) ready.push(...this.drain());
    return ready;
  }

  /** Removes and returns everything queued. */
  drain(): OutboundMessage[] {
    const all = [...this.#byTopic.values()].flat();
    this.#byTopic.clear();
    return all;
  }

  get size(): number {
    let total = 0;
    for (const queue of this.#byTopic.values()) total += queue.length;
    return total;
  }
}
