/**
 * From matches to delivered notifications: ledger lookup (skip what was already delivered),
 * rendering, SNS publishing and the ledger write right after SNS accepts each batch. The alert
 * run and `news-alerts replay` both deliver through it, so a backfill keeps the same guarantees
 * as a scheduled run: nothing the ledger holds is sent again, nothing SNS refused is dropped.
 *
 * Work is buffered so request counts stay near their floor: ledger lookups go in groups of 100
 * (BatchGetItem), messages in full batches of 10 per topic (PublishBatch), ledger writes in 25s
 * (BatchWriteItem, see LedgerWriter). `flush()` moves everything that is still buffered.
 */
import { LedgerWriter, Outbox } from './delivery-buffers.ts';
import type { Audience, AudienceMatch } from './model.ts';
import {
  type DeliveryKey,
  deliveryId,
  type FailedMessage,
  type Log,
  type Notifier,
  type OutboundMessage,
  type StateStore,
} from './ports.ts';
import { renderNotification } from './render.ts';

/** DynamoDB's BatchGetItem limit. */
const lookupBatchSize = 100;

/** Per-audience delivery counts. */
export interface AudienceTally {
  matched: number;
  alreadyDelivered: number;
  published: number;
  failed: number;
  parked: number;
}

/** What the pipeline counted; the alert run's summary carries these fields. */
export interface DeliveryCounts {
  notificationsMatched: number;
  notificationsAlreadyDelivered: number;
  notificationsPublished: number;
  notificationsFailed: number;
  notificationsParked: number;
  /** Notifications left for the next run because the time budget ran out. */
  notificationsDeferred: number;
  /** Notifications that could not be rendered (logged with the article key). */
  notificationsUnrenderable: number;
  /** Notifications for articles published before `lateBefore` (the provider showed them late). */
  lateDeliveries: number;
  /** Dry runs only: notifications that would have been published. */
  notificationsWouldPublish: number;
  audiences: Record<string, AudienceTally>;
}

export const emptyDeliveryCounts = (): DeliveryCounts => ({
  notificationsMatched: 0,
  notificationsAlreadyDelivered: 0,
  notificationsPublished: 0,
  notificationsFailed: 0,
  notificationsParked: 0,
  notificationsDeferred: 0,
  notificationsUnrenderable: 0,
  lateDeliveries: 0,
  notificationsWouldPublish: 0,
  audiences: {},
});

export interface DeliveryPipelineOptions {
  readonly state: StateStore;
  readonly notifier: Notifier;
  readonly log: Log;
  readonly now: () => number;
  /** Audiences by id (only matches of these are delivered). */
  readonly audiences: ReadonlyMap<string, Audience>;
  readonly ledgerFlushDelayMs: number;
  /** Aborting it stops publishing; what was not sent is counted as deferred. */
  readonly publishSignal: AbortSignal;
  /** Articles published before this instant count as late deliveries. */
  readonly lateBefore: number;
  /** The counts to update (the run's summary, or a fresh object). */
  readonly counts: DeliveryCounts;
  /** Find and render what would be sent, but publish and record nothing. */
  readonly dryRun?: boolean;
  /** Dry runs: receives every message that would have been published. */
  readonly onWouldPublish?: (message: OutboundMessage) => void;
}

export class DeliveryPipeline {
  readonly #options: DeliveryPipelineOptions;
  readonly #outbox = new Outbox();
  readonly #ledger: LedgerWriter;
  /** Matches waiting for their ledger lookup. */
  #pendingMatches: AudienceMatch[] = [];
  /** Delivery ids queued by this pipeline: an article the provider repeats is never queued twice. */
  readonly #queued = new Set<string>();
  #unpublished = 0;

  constructor(options: DeliveryPipelineOptions) {
    this.#options = options;
    this.#ledger = new LedgerWriter(options.state, { maxDelayMs: options.ledgerFlushDelayMs, now: options.now });
  }

  /** Notifications not published (failed or deferred) since the last `resetUnpublished`. */
  get unpublished(): number {
    return this.#unpublished;
  }

  resetUnpublished(): void {
    this.#unpublished = 0;
  }

  /** Queues matches; full batches move on at once. */
  async add(matches: readonly AudienceMatch[]): Promise<void> {
    this.#pendingMatches.push(...matches);
    await this.#deliver(false);
  }

  /** Delivers everything buffered and waits for the ledger. */
  async flush(): Promise<void> {
    await this.#deliver(true);
  }

  async #deliver(flush: boolean): Promise<void> {
    const pending = this.#pendingMatches.length;
    const lookupCount = flush ? pending : pending - (pending % lookupBatchSize);
    if (lookupCount > 0) {
      const matches = this.#pendingMatches.splice(0, lookupCount);
      this.#outbox.add(await this.#freshMessages(matches));
    }
    const messages = flush ? this.#outbox.drain() : this.#outbox.takeFullBatches();
    if (messages.length > 0) {
      if (this.#options.dryRun) this.#pretendToPublish(messages);
      else await this.#publish(messages);
    }
    if (flush) await this.#ledger.flush();
  }

  /** Drops matches the ledger already holds and renders the rest. */
  async #freshMessages(matches: readonly AudienceMatch[]): Promise<OutboundMessage[]> {
    const { counts, log } = this.#options;
    const keys: DeliveryKey[] = matches.map((match) => ({
      articleKey: match.article.key,
      audienceId: match.audienceId,
    }));
    const delivered = await this.#options.state.findDelivered(keys);
    const fresh: OutboundMessage[] = [];
    for (const match of matches) {
      const audience = this.#options.audiences.get(match.audienceId);
      if (!audience) continue;
      const tally = this.#tally(match.audienceId);
      tally.matched += 1;
      counts.notificationsMatched += 1;
      const id = deliveryId({ articleKey: match.article.key, audienceId: match.audienceId });
      if (delivered.has(id) || this.#queued.has(id)) {
        tally.alreadyDelivered += 1;
        counts.notificationsAlreadyDelivered += 1;
        continue;
      }
      let message: OutboundMessage;
      try {
        message = renderNotification(match, audience);
      } catch (error) {
        // One article that cannot be rendered must not stop every other alert (nor block the
        // watermark forever): it is logged with its key and counted, and delivery goes on.
        counts.notificationsUnrenderable += 1;
        log.error('could not render a notification; skipped it', {
          audienceId: match.audienceId,
          articleKey: match.article.key,
          error: describe(error),
        });
        continue;
      }
      this.#queued.add(id);
      if (match.article.publishedAt < this.#options.lateBefore) counts.lateDeliveries += 1;
      fresh.push(message);
    }
    return fresh;
  }

  #pretendToPublish(messages: readonly OutboundMessage[]): void {
    this.#options.counts.notificationsWouldPublish += messages.length;
    for (const message of messages) this.#options.onWouldPublish?.(message);
  }

  async #publish(messages: readonly OutboundMessage[]): Promise<void> {
    const { counts, publishSignal, log } = this.#options;
    const outcome = await this.#options.notifier.publish(messages, {
      signal: publishSignal,
      onPublished: async (batch) => {
        await this.#ledger.add(batch);
        for (const { message } of batch) this.#tally(message.key.audienceId).published += 1;
        counts.notificationsPublished += batch.length;
      },
    });
    const permanent = outcome.failed.filter((failure) => failure.permanent);
    // Messages the deadline kept from being sent are deferred, not failed: the next run sends them.
    const deferred = publishSignal.aborted
      ? outcome.failed.filter((failure) => !failure.permanent && failure.code === 'Aborted')
      : [];
    const transient = outcome.failed.filter((failure) => !failure.permanent && !deferred.includes(failure));
    if (permanent.length > 0) await this.#park(permanent);
    for (const failure of [...transient, ...deferred]) this.#queued.delete(deliveryId(failure.message.key));
    for (const failure of transient) this.#tally(failure.message.key.audienceId).failed += 1;
    counts.notificationsFailed += transient.length;
    counts.notificationsDeferred += deferred.length;
    this.#unpublished += transient.length + deferred.length;
    if (transient.length > 0) {
      log.error('notifications were not published; the watermark stays before them', {
        count: transient.length,
        codes: [...new Set(transient.map((failure) => failure.code))],
      });
    }
  }

  /** Keeps notifications SNS refused for good, so fixing the audience and replaying loses nothing. */
  async #park(failures: readonly FailedMessage[]): Promise<void> {
    const failedAt = this.#options.now();
    await this.#options.state.recordUndeliverable(
      failures.map(({ message, code, reason }) => ({
        ...message.key,
        topicArn: message.topicArn,
        failedAt,
        code,
        reason,
        subject: message.subject,
        body: message.body,
      })),
    );
    for (const failure of failures) this.#tally(failure.message.key.audienceId).parked += 1;
    this.#options.counts.notificationsParked += failures.length;
    this.#options.log.error('SNS refused notifications for good; parked them for `news-alerts replay`', {
      count: failures.length,
      audiences: [...new Set(failures.map((failure) => failure.message.key.audienceId))],
      codes: [...new Set(failures.map((failure) => failure.code))],
    });
  }

  #tally(audienceId: string): AudienceTally {
    const { counts } = this.#options;
    let tally = counts.audiences[audienceId];
    if (!tally) {
      tally = { matched: 0, alreadyDelivered: 0, published: 0, failed: 0, parked: 0 };
      counts.audiences[audienceId] = tally;
    }
    return tally;
  }
}

export const describe = (error: unknown): string =>
  error instanceof Error ? `${error.name}: ${error.message}` : String(error);
