/**
 * Small in-memory fakes of the core's ports (StateStore, Notifier, NewsSource, RuleSource) for
 * unit tests of the delivery pipeline and the alert run: no network, no clock, and hooks to make
 * the world misbehave at one chosen point (a transient publish failure, a concurrent budget
 * change, a deadline). They keep the contracts the real adapters document in ports.ts, and no
 * more: the integration tests check the real adapters against moto.
 */
import type { AlertRunSettings } from '#core/alert-run';
import { ledgerFacts, storedStatus } from '#core/ledger-facts';
import type { Article, AudienceMatch, RuleSet } from '#core/model';
import {
  type ArticlePage,
  DailyCountConflictError,
  type DailyCountKey,
  type DeliveryKey,
  type DeliveryRecord,
  type DigestRelease,
  dailyCountId,
  deliveryId,
  type FailedMessage,
  type HeldNotification,
  type HeldState,
  type HoldingAudience,
  type HoldReason,
  type Lease,
  type LedgerFactsUpdate,
  type Log,
  type NewsSource,
  type Notifier,
  type OutboundMessage,
  type PagesOptions,
  type ProviderDateRange,
  type PublishedMessage,
  type PublishOutcome,
  type ReadingState,
  type ReleasedNotification,
  type RuleSource,
  type RunRecord,
  type StateStore,
  type UndeliverableRecord,
  type Watermark,
} from '#core/ports';

/**
 * Run settings for alert runs over these fakes: UTC provider dates, a one-day first window, no
 * late-arrival window, overlap, margins or flush delay; every run a full sweep unless overridden.
 */
export function memoryRunSettings(overrides: Partial<AlertRunSettings> = {}): AlertRunSettings {
  return {
    providerTimeZone: 'UTC',
    lateArrivalMs: 0,
    fullSweepMs: 0,
    incrementalOverlapMs: 0,
    initialLookbackMs: 24 * 60 * 60 * 1000,
    leaseDurationMs: 60_000,
    softMarginMs: 0,
    hardMarginMs: 0,
    ledgerFlushDelayMs: 0,
    ...overrides,
  };
}

/** A StateStore in memory; `beforeDailyCountUpdate` lets a test play a concurrent writer. */
export class MemoryStateStore implements StateStore {
  watermark: Watermark | undefined;
  readonly ledger = new Map<string, DeliveryRecord>();
  readonly undeliverable = new Map<string, UndeliverableRecord>();
  readonly held = new Map<string, HeldNotification>();
  readonly dailyCounts = new Map<string, number>();
  readonly runs: RunRecord[] = [];
  /** Called before each conditional daily-count write (a concurrent run may change the count). */
  beforeDailyCountUpdate: ((key: DailyCountKey) => void) | undefined;

  async acquireLease(owner: string, durationMs: number, now: number): Promise<Lease> {
    return { owner, expiresAt: now + durationMs };
  }
  async releaseLease(): Promise<void> {}
  async readWatermark(): Promise<Watermark | undefined> {
    return this.watermark;
  }
  async advanceWatermark(lease: Lease, expected: Watermark | undefined, at: number, now: number): Promise<Watermark> {
    if (this.watermark?.version !== expected?.version) throw new Error('watermark conflict (fake)');
    this.watermark = { at, version: (expected?.version ?? 0) + 1, updatedAt: now, runId: lease.owner };
    return this.watermark;
  }
  async setWatermark(at: number, runId: string, now: number): Promise<Watermark> {
    this.watermark = { at, version: (this.watermark?.version ?? 0) + 1, updatedAt: now, runId };
    return this.watermark;
  }
  async findDelivered(keys: readonly DeliveryKey[]): Promise<Set<string>> {
    return new Set(keys.map(deliveryId).filter((id) => this.ledger.has(id)));
  }
  async readDeliveries(keys: readonly DeliveryKey[]): Promise<Map<string, DeliveryRecord>> {
    const found = new Map<string, DeliveryRecord>();
    for (const key of keys) {
      const record = this.ledger.get(deliveryId(key));
      if (record !== undefined) found.set(deliveryId(key), record);
    }
    return found;
  }
  async recordDelivered(records: readonly DeliveryRecord[]): Promise<void> {
    for (const record of records) this.ledger.set(deliveryId(record), record);
  }
  async forgetCollapsed(keys: readonly DeliveryKey[]): Promise<void> {
    for (const key of keys) {
      if (this.ledger.get(deliveryId(key))?.collapsedInto !== undefined) this.ledger.delete(deliveryId(key));
    }
  }
  async refreshLedgerFacts(entries: readonly LedgerFactsUpdate[]): Promise<void> {
    for (const entry of entries) {
      const record = this.ledger.get(deliveryId(entry));
      if (record === undefined) continue;
      this.ledger.set(deliveryId(entry), {
        ...record,
        status: storedStatus(entry.status),
        titleHash: entry.titleHash,
      });
    }
  }
  async recordUndeliverable(records: readonly UndeliverableRecord[]): Promise<void> {
    for (const record of records) this.undeliverable.set(deliveryId(record), record);
  }
  async recordRun(record: RunRecord): Promise<void> {
    this.runs.push(record);
  }
  async recentRuns(limit: number): Promise<RunRecord[]> {
    return this.runs.slice(-limit).reverse();
  }
  readingState: ReadingState | undefined;
  async readReadingState(): Promise<ReadingState | undefined> {
    return this.readingState;
  }
  async writeReadingState(_lease: Lease, state: ReadingState): Promise<void> {
    this.readingState = state;
  }
  async holdNotifications(records: readonly HeldNotification[]): Promise<void> {
    for (const record of records) {
      this.held.set(deliveryId(record.key), record);
      this.ledger.set(deliveryId(record.key), {
        ...record.key,
        deliveredAt: record.heldAt,
        ruleIds: record.ruleIds,
        heldFor: record.reason,
        // As DynamoStateStore records them: a re-read of a held article can tell it changed.
        ...(record.facts ?? ledgerFacts(record.match.article, record.match.storyId)),
      });
    }
  }
  async listHoldingAudiences(): Promise<HoldingAudience[]> {
    return [];
  }
  async readHeld(audienceId: string): Promise<HeldState> {
    return { items: [...this.held.values()].filter((item) => item.key.audienceId === audienceId), releases: [] };
  }
  async claimRelease(_release: DigestRelease): Promise<void> {}
  async finishRelease(_release: DigestRelease, _released: readonly ReleasedNotification[]): Promise<void> {}
  async setHoldingAudience(
    _audienceId: string,
    _holding: Pick<HoldingAudience, 'oldestHeldAt' | 'reasons'> | undefined,
  ): Promise<void> {}
  async readDailyCounts(keys: readonly DailyCountKey[]): Promise<Map<string, number>> {
    const counts = new Map<string, number>();
    for (const key of keys) {
      const count = this.dailyCounts.get(dailyCountId(key));
      if (count !== undefined) counts.set(dailyCountId(key), count);
    }
    return counts;
  }
  async updateDailyCount(key: DailyCountKey, expected: number, next: number): Promise<void> {
    this.beforeDailyCountUpdate?.(key);
    const current = this.dailyCounts.get(dailyCountId(key)) ?? 0;
    if (current !== expected) throw new DailyCountConflictError(key, expected, current);
    this.dailyCounts.set(dailyCountId(key), next);
  }
}

/**
 * The in-memory state store with the holding index the release step reads first
 * (`listHoldingAudiences`): every audience with held notifications, its oldest, and their reasons.
 */
export class HoldingMemoryStateStore extends MemoryStateStore {
  /** As DynamoStateStore does: marks the released entries in the ledger and deletes what the release held. */
  override async finishRelease(release: DigestRelease, released: readonly ReleasedNotification[]): Promise<void> {
    for (const entry of released) {
      const recorded = this.ledger.get(deliveryId(entry));
      if (recorded === undefined || recorded.releasedAt !== undefined) continue;
      const { releasedAt, releasedIn, releaseOutcome, releaseCause } = entry;
      this.ledger.set(deliveryId(entry), { ...recorded, releasedAt, releasedIn, releaseOutcome, releaseCause });
    }
    for (const articleKey of [...release.parts.flat(), ...release.dropped]) {
      this.held.delete(deliveryId({ audienceId: release.audienceId, articleKey }));
    }
  }

  override async listHoldingAudiences(): Promise<HoldingAudience[]> {
    const byAudience = new Map<string, { oldestHeldAt: number; reasons: Set<HoldReason> }>();
    for (const item of this.held.values()) {
      const entry = byAudience.get(item.key.audienceId) ?? { oldestHeldAt: item.heldAt, reasons: new Set() };
      entry.oldestHeldAt = Math.min(entry.oldestHeldAt, item.heldAt);
      entry.reasons.add(item.reason);
      byAudience.set(item.key.audienceId, entry);
    }
    return [...byAudience].map(([audienceId, { oldestHeldAt, reasons }]) => ({
      audienceId,
      oldestHeldAt,
      reasons: [...reasons],
    }));
  }
}

/**
 * A Notifier that accepts every message unless `failure` says otherwise, honours the abort signal
 * as SnsNotifier does (`Aborted`, not permanent) and passes what it accepted to `onPublished`.
 */
export class MemoryNotifier implements Notifier {
  readonly published: OutboundMessage[] = [];
  constructor(
    readonly failure: (message: OutboundMessage) => Omit<FailedMessage, 'message'> | undefined = () => undefined,
  ) {}

  async publish(
    messages: readonly OutboundMessage[],
    options: { signal?: AbortSignal; onPublished: (batch: readonly PublishedMessage[]) => Promise<void> },
  ): Promise<PublishOutcome> {
    const published: PublishedMessage[] = [];
    const failed: FailedMessage[] = [];
    for (const message of messages) {
      if (options.signal?.aborted) {
        failed.push({ message, code: 'Aborted', reason: 'the signal fired', permanent: false });
        continue;
      }
      const failure = this.failure(message);
      if (failure) failed.push({ message, ...failure });
      else published.push({ message, messageId: `m-${this.published.length + published.length}` });
    }
    if (published.length > 0) {
      this.published.push(...published.map((entry) => entry.message));
      await options.onPublished(published);
    }
    return { published, failed };
  }
}

/** A provider that serves fixed articles per provider date, one page per date. */
export class MemoryNewsSource implements NewsSource {
  constructor(readonly byDate: ReadonlyMap<string, readonly Article[]>) {}

  async *pages(range: ProviderDateRange, _options?: PagesOptions): AsyncIterable<ArticlePage> {
    for (const [date, articles] of [...this.byDate].sort(([a], [b]) => (a < b ? -1 : 1))) {
      if (date < range.from || date > range.to) continue;
      yield { pageNumber: 1, articles, skipped: [] };
    }
  }
}

/** A RuleSource over a fixed rule set. */
export const memoryRules = (ruleSet: RuleSet): RuleSource => ({ load: async () => ruleSet });

/** A Log that keeps every message with its level, so tests can look for one. */
export function memoryLog(): Log & { readonly lines: { level: string; message: string; extra: unknown[] }[] } {
  const lines: { level: string; message: string; extra: unknown[] }[] = [];
  const write =
    (level: string) =>
    (message: string, ...extra: Record<string, unknown>[]) => {
      lines.push({ level, message, extra });
    };
  return { lines, debug: write('debug'), info: write('info'), warn: write('warn'), error: write('error') };
}

/** An article with sensible defaults; `key` is `id:<id>`. */
export function article(id: string, overrides: Partial<Article> = {}): Article {
  return {
    key: `id:${id}`,
    id,
    title: `Central bank moves on interest rate ${id}`,
    summary: 'The central bank changed its interest rate.',
    url: `https://news.example.com/markets/${id}`,
    publishedAt: Date.UTC(2026, 10, 22, 0, 0),
    categories: ['002000000'],
    categoryNames: ['Economy'],
    media: 'M001',
    mediaName: 'Example Daily',
    status: 'PUBLISHED',
    ...overrides,
  };
}

/** The match of `article` for `audienceId` by one keyword rule. */
export const matchOf = (audienceId: string, item: Article, urgent = false): AudienceMatch => ({
  audienceId,
  article: item,
  rules: [{ ruleId: `${audienceId}-rule`, urgent, reasons: [{ kind: 'keyword', term: 'interest rate' }] }],
});
