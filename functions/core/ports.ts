/**
 * The small interfaces the pure core talks through. Each has one AWS (or HTTP) adapter under
 * functions/aws or functions/provider; tests and the local sandbox pass the same adapters pointed
 * at moto server and the news API simulator.
 */
import type { Article, RuleSet } from './model.ts';

/** Structured logger; Powertools' Logger satisfies it (extra objects become JSON keys). */
export interface Log {
  debug(message: string, ...extra: Record<string, unknown>[]): void;
  info(message: string, ...extra: Record<string, unknown>[]): void;
  warn(message: string, ...extra: Record<string, unknown>[]): void;
  error(message: string, ...extra: Record<string, unknown>[]): void;
}

/** A Log that drops everything (the default where no logger is injected). */
export const silentLog: Log = { debug() {}, info() {}, warn() {}, error() {} };

// --- Secrets ------------------------------------------------------------------------------------

/** Where the provider API key comes from (Secrets Manager in production). */
export interface SecretSource {
  /**
   * The current API key. Cached by the adapter; `forceRefresh` bypasses the cache (used once after
   * a 401, so a rotated key is picked up without waiting for the cache to expire).
   */
  apiKey(options?: { forceRefresh?: boolean }): Promise<string>;
}

// --- News provider ------------------------------------------------------------------------------

/** An inclusive range of provider-local dates, `YYYY-MM-DD`, as the News Lookup API takes them. */
export interface ProviderDateRange {
  readonly from: string;
  readonly to: string;
}

/** An item of a page that could not be mapped to an article: skipped, logged and counted. */
export interface SkippedItem {
  /** Position on the page (0-based). */
  readonly index: number;
  readonly reason: string;
}

/** One page of the provider's answer, already mapped, validated and de-duplicated within the run. */
export interface ArticlePage {
  /** 1-based page number, or the 1-based position in the cursor chain. */
  readonly pageNumber: number;
  readonly articles: readonly Article[];
  /** Total result count when the provider reports one. */
  readonly totalCount?: number | undefined;
  readonly skipped: readonly SkippedItem[];
}

/** The News Lookup API as the run needs it. */
export interface NewsSource {
  /**
   * Every article published on the provider dates in `range`, page by page. The iterator ends
   * only after the whole range was read (so a completed loop means "nothing left unread");
   * it throws a ProviderError otherwise.
   */
  pages(range: ProviderDateRange, options?: { signal?: AbortSignal }): AsyncIterable<ArticlePage>;
}

// --- Rules and audiences ------------------------------------------------------------------------

/** The ops-edited rules and audiences, validated; bad items come back in `rejected`. */
export interface RuleSource {
  load(): Promise<RuleSet>;
}

// --- State: watermark, lease, delivery ledger ---------------------------------------------------

/** One notification's identity: this article for this audience. */
export interface DeliveryKey {
  readonly articleKey: string;
  readonly audienceId: string;
}

/** The string form of a DeliveryKey (audience ids cannot contain `|`). */
export const deliveryId = (key: DeliveryKey): string => `${key.audienceId}|${key.articleKey}`;

/** What the ledger keeps about a delivered notification. */
export interface DeliveryRecord extends DeliveryKey {
  readonly deliveredAt: number;
  readonly messageId?: string | undefined;
  readonly ruleIds: readonly string[];
}

/** A notification that SNS refused for good (deleted topic, bad ARN, KMS key disabled...). */
export interface UndeliverableRecord extends DeliveryKey {
  readonly topicArn: string;
  readonly failedAt: number;
  readonly code: string;
  readonly reason: string;
  /** The rendered message, kept so `news-alerts replay` can send it once the audience is fixed. */
  readonly subject: string;
  readonly body: string;
}

/** The exclusive right to run, held until `expiresAt` (epoch ms) unless released earlier. */
export interface Lease {
  readonly owner: string;
  readonly expiresAt: number;
}

/**
 * Every article published before `at` (epoch ms) has been handled as far as the provider showed
 * it. `version` is the optimistic-lock counter.
 */
export interface Watermark {
  readonly at: number;
  readonly version: number;
  readonly updatedAt: number;
  readonly runId: string;
}

/** A finished run, kept for `news-alerts runs` and the "no successful run" check. */
export interface RunRecord {
  readonly runId: string;
  readonly status: RunStatus;
  readonly startedAt: number;
  readonly finishedAt: number;
  readonly summary: Record<string, unknown>;
}

export type RunStatus = 'completed' | 'checkpointed' | 'skipped' | 'incomplete' | 'failed';

export interface StateStore {
  /** Takes the run lease, or throws LeaseHeldError while another run holds an unexpired one. */
  acquireLease(owner: string, durationMs: number, now: number): Promise<Lease>;
  /** Gives the lease back; a lease that expired or was taken over is left alone. */
  releaseLease(lease: Lease): Promise<void>;
  readWatermark(): Promise<Watermark | undefined>;
  /**
   * Moves the watermark to `at` if it still equals `expected` (undefined: none yet) and the lease
   * is still this run's. Throws WatermarkConflictError or LeaseLostError otherwise; never moves
   * the watermark backwards (use `setWatermark` for an explicit rewind).
   */
  advanceWatermark(lease: Lease, expected: Watermark | undefined, at: number, now: number): Promise<Watermark>;
  /** Ops rewind or set (CLI): unconditional except for the optimistic lock when `expected` is given. */
  setWatermark(at: number, runId: string, now: number, expected?: Watermark): Promise<Watermark>;
  /** Which of `keys` the ledger already holds, as `deliveryId` strings (BatchGetItem, 100 a call). */
  findDelivered(keys: readonly DeliveryKey[]): Promise<Set<string>>;
  /** Adds ledger entries (BatchWriteItem, 25 a call, unprocessed items retried). */
  recordDelivered(records: readonly DeliveryRecord[]): Promise<void>;
  /** Parks notifications SNS refused for good, for `news-alerts replay`. */
  recordUndeliverable(records: readonly UndeliverableRecord[]): Promise<void>;
  recordRun(record: RunRecord): Promise<void>;
  /** Most recent runs first. */
  recentRuns(limit: number): Promise<RunRecord[]>;
}

// --- Notifications ------------------------------------------------------------------------------

/** One rendered notification ready for SNS (`MessageStructure: json`). */
export interface OutboundMessage {
  readonly key: DeliveryKey;
  readonly topicArn: string;
  /** Email subject: no line breaks, under 100 characters. */
  readonly subject: string;
  /** JSON document with a `default` key and one key per protocol. */
  readonly body: string;
  /** Rules that matched, recorded in the ledger. */
  readonly ruleIds: readonly string[];
}

export interface PublishedMessage {
  readonly message: OutboundMessage;
  readonly messageId?: string | undefined;
}

export interface FailedMessage {
  readonly message: OutboundMessage;
  readonly code: string;
  readonly reason: string;
  /** True when retrying cannot help (topic gone, invalid parameter, access denied). */
  readonly permanent: boolean;
}

export interface PublishOutcome {
  readonly published: readonly PublishedMessage[];
  readonly failed: readonly FailedMessage[];
}

export interface Notifier {
  /**
   * Publishes every message (PublishBatch per topic, retrying throttles and per-entry failures)
   * and calls `onPublished` as each batch is accepted, so the caller can write the ledger right
   * away. If `onPublished` throws, no new batch starts; batches already in flight complete and
   * are passed to `onPublished`, then the first error is rethrown.
   *
   * Failure codes besides SNS's own: `Aborted` (the signal fired before the message was sent;
   * not permanent), `MessageTooLarge` (permanent), `MissingResult` (SNS reported neither success
   * nor failure for the entry; not permanent).
   */
  publish(
    messages: readonly OutboundMessage[],
    options: {
      signal?: AbortSignal;
      onPublished: (batch: readonly PublishedMessage[]) => Promise<void>;
    },
  ): Promise<PublishOutcome>;
}
