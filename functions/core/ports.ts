/**
 * The small interfaces the pure core talks through. Each has one AWS (or HTTP) adapter under
 * functions/aws or functions/provider; tests and the local sandbox pass the same adapters pointed
 * at moto server and the news API simulator.
 */
import { NewsAlertsError } from './errors.ts';
import type { Article, AudienceMatch, RuleSet } from './model.ts';

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
  /**
   * Set when no item of the page could be read although the response mapping fits this provider
   * (other pages read fine): a poison page. Its items are in `skipped`; the value says why, with
   * a redacted sample. The run parks it (records it for replay, counts it, alarms) and goes on.
   */
  readonly unreadable?: string | undefined;
  /**
   * The cursor that requested this page (cursor paging; undefined for the first page of a chain),
   * so a later run can resume there ({@link PagesOptions.resumeFrom}).
   */
  readonly cursor?: string | undefined;
  /**
   * Numbered paging: where each of `articles` stands in the provider's listing of the range when
   * this page was answered (0-based; `positions[i]` belongs to `articles[i]`). With `totalCount`
   * it tells how many articles are listed after each one (counted reading).
   */
  readonly positions?: readonly number[] | undefined;
}

/** One page asked for by number and size ({@link NewsSource.page}). */
export interface PageRequest {
  /** 1-based. */
  readonly page: number;
  /** Articles per page: at most the configured page size. */
  readonly size: number;
  readonly signal?: AbortSignal | undefined;
}

/** Where a read of a provider date starts when it does not start at page 1. */
export type PagePosition = { readonly page: number } | { readonly cursor: string };

/** How to read a provider date range; the default is every page, fetched concurrently. */
export interface PagesOptions {
  readonly signal?: AbortSignal | undefined;
  /**
   * Fetch one page at a time instead of a window of concurrent requests: the caller expects to
   * stop early (incremental reading), so pages fetched ahead would be wasted requests.
   */
  readonly sequential?: boolean | undefined;
  /**
   * Start at this page or cursor (the position of the last page an earlier run read) and read
   * one page at a time from there to the end. Only the caller can tell whether the boundary holds
   * (the first page must repeat articles it has already seen); the source does not check it.
   */
  readonly resumeFrom?: PagePosition | undefined;
}

/** The News Lookup API as the run needs it. */
export interface NewsSource {
  /**
   * Every article published on the provider dates in `range`, page by page. The iterator ends
   * only after the whole range was read (so a completed loop means "nothing left unread");
   * it throws a ProviderError otherwise.
   */
  pages(range: ProviderDateRange, options?: PagesOptions): AsyncIterable<ArticlePage>;
  /**
   * One page of `range` by number and size, not de-duplicated, with `positions` and `totalCount`
   * (numbered paging only; absent when the source pages by cursor). Counted reading uses it to
   * look at one place of a day's listing. Throws a ProviderError like `pages`; a page on which no
   * item can be read comes back with `unreadable` set.
   */
  page?(range: ProviderDateRange, request: PageRequest): Promise<ArticlePage>;
  /** Articles per page the source asks for (numbered paging); the largest `size` for `page`. */
  readonly pageSize?: number | undefined;
  /**
   * Starts what the first request needs (the API key) while the run reads its own state. Never
   * throws and reports nothing: a failure shows where the first page needs what it started.
   */
  prepare?(): void;
  /**
   * Resolves once this source has sent a request to the provider (its bytes are on their way), so
   * work the run needs only when the answer is back can overlap waiting for it. Rejects with
   * `signal`'s reason if it aborts first; a source without it lets the run do that work when needed.
   */
  requestSent?(signal: AbortSignal): Promise<void>;
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
  /**
   * Set when the notification was not published but held for a digest: the ledger entry then
   * means "handled" (a re-read must not alert again), and the digest carries the article.
   */
  readonly heldFor?: HoldReason | undefined;
  /** The article's story, for audiences that collapse stories (functions/core/story.ts). */
  readonly storyId?: string | undefined;
  /**
   * Set on a copy that was NOT sent because the audience already has its story (the value is the
   * story id): handled like a publish, so a re-read never sends it.
   */
  readonly collapsedInto?: string | undefined;
  /**
   * On a collapsed copy (`collapsedInto`): the article it collapsed into, the story's lead then.
   * The story marker may name another lead later (an urgent copy takes over from a held one), so a
   * copy is judged by this lead's own entry. Entries written before it existed have none.
   */
  readonly collapsedLead?: string | undefined;
  /**
   * The article's status (`''` when the provider sent none) and title hash when it was handled
   * ({@link LedgerFacts}): a re-read with other values is an update (audience setting `updates`).
   * Entries written before these existed have neither, and never count as updated.
   */
  readonly status?: string | undefined;
  readonly titleHash?: string | undefined;
  /**
   * On a story marker ({@link storyMarkerKey}): the article that carries the story for this
   * audience. Written before that article is published, so every later copy collapses into it.
   */
  readonly leadArticleKey?: string | undefined;
  /**
   * Set on a held notification's entry (`heldFor`) once its release finished
   * ({@link ReleasedNotification}): when it left the hold, in which digest, what became of it and
   * why it went then. Absent while it is still held, and on entries released before these existed.
   */
  readonly releasedAt?: number | undefined;
  readonly releasedIn?: string | undefined;
  readonly releaseOutcome?: ReleaseOutcome | undefined;
  readonly releaseCause?: ReleaseCause | undefined;
  /**
   * Set by readers on an entry edited by hand: the names of its fields that were damaged and read
   * as absent, so what they said (held? released? sent?) is unknown. The entry still means
   * "handled".
   */
  readonly malformed?: readonly string[] | undefined;
}

/** What the ledger keeps about an article to recognise it coming back changed (functions/core/ledger-facts.ts). */
export type LedgerFacts = Pick<DeliveryRecord, 'storyId' | 'status' | 'titleHash'>;

/** New facts for an existing ledger entry ({@link StateStore.refreshLedgerFacts}). */
export interface LedgerFactsUpdate extends DeliveryKey {
  readonly status: string;
  readonly titleHash: string;
}

/**
 * The ledger key that says "this audience has story `storyId`" (the story marker). Article keys
 * start with `id:` or `url:`, digests with `digest:`, so the kinds never collide.
 */
export const storyMarkerKey = (audienceId: string, storyId: string): DeliveryKey => ({
  audienceId,
  articleKey: `${STORY_MARKER}${storyId}`,
});

const STORY_MARKER = 'story:';
const UPDATE_NOTICE = 'update:';

/** The story of a story marker's article key ({@link storyMarkerKey}); undefined for any other key. */
export const storyOfMarker = (articleKey: string): string | undefined =>
  articleKey.startsWith(STORY_MARKER) ? articleKey.slice(STORY_MARKER.length) : undefined;

/** Whether an article key is an update notice's ({@link updateNoticeKey}). */
export const isUpdateNoticeKey = (articleKey: string): boolean => articleKey.startsWith(UPDATE_NOTICE);

/**
 * The story or article and the change an update notice's key names. The change is cut at the last
 * `#` (a provider id with `#` stays whole in the subject; a status with `#` would not: display only).
 */
export function readUpdateNoticeKey(articleKey: string): { subject: string; change: string } | undefined {
  if (!isUpdateNoticeKey(articleKey)) return undefined;
  const rest = articleKey.slice(UPDATE_NOTICE.length);
  const cut = rest.lastIndexOf('#');
  return cut < 0 ? { subject: rest, change: '' } : { subject: rest.slice(0, cut), change: rest.slice(cut + 1) };
}

/**
 * The ledger key of an update notice: at most one per audience, story (or article, for
 * audiences that do not collapse stories) and change (`status=UPDATED`, `title`).
 */
export const updateNoticeKey = (audienceId: string, subject: string, change: string): DeliveryKey => ({
  audienceId,
  articleKey: `${UPDATE_NOTICE}${subject}#${change}`,
});

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
 * Who holds the lease, as the holder describes itself when it takes it. A CLI run or replay says
 * where it runs and how often it renews, so ops can tell a live holder from a dead one
 * (`news-alerts lease release`); a scheduled run says nothing and is trusted until its lease expires.
 */
export interface LeaseHolder {
  /** Host name of the holding process. */
  readonly host?: string | undefined;
  /** Process id of the holder on `host`. */
  readonly pid?: number | undefined;
  /** How often the holder renews the lease (ms), when it does. */
  readonly renewEveryMs?: number | undefined;
}

/** The lease item as a reader sees it (`watermark show`, `runs list`, `lease release`). */
export interface LeaseRecord extends Lease, LeaseHolder {
  /** When the holder took it (epoch ms). */
  readonly acquiredAt?: number | undefined;
  /** When the holder last renewed it (epoch ms), if it ever did. */
  readonly renewedAt?: number | undefined;
}

/** The lease changed (renewed, released or taken by another owner) since it was read. */
export class LeaseChangedError extends NewsAlertsError {
  constructor(expected: Pick<Lease, 'owner'>, options?: ErrorOptions) {
    super(`the run lease of ${expected.owner} changed since it was read (renewed, released or taken over)`, options);
    this.name = 'LeaseChangedError';
  }
}

/** Reading, renewing and clearing the lease, beside taking and giving it back ({@link StateStore}). */
export interface LeaseAdmin {
  /** The lease item, expired or not; undefined when nobody holds one (strongly consistent). */
  readLease(): Promise<LeaseRecord | undefined>;
  /**
   * Extends a lease this owner still holds to `now + durationMs`; throws LeaseLostError when the
   * lease is gone or has another owner (cleared by ops, or taken over after it expired).
   */
  renewLease(lease: Lease, durationMs: number, now: number): Promise<Lease>;
  /**
   * Deletes the lease if it is still exactly the one read (same owner token, same expiry: not
   * renewed since); throws LeaseChangedError otherwise, so it never removes a lease taken meanwhile.
   */
  clearLease(expected: Pick<Lease, 'owner' | 'expiresAt'>): Promise<void>;
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

// --- Incremental reading ------------------------------------------------------------------------

/**
 * The order in which the provider lists a day's articles, as learned from a whole day read
 * without a single article out of that order; `unknown` until then, or after any page broke it.
 */
export type ProviderOrder = 'newest-first' | 'oldest-first' | 'unknown';

/** Where an oldest-first read of one provider date ended, so the next run can start there. */
export interface DayResume {
  readonly day: string;
  /** The position that fetched the last page read. */
  readonly position: PagePosition;
  /**
   * Keys of the articles on that page (at most {@link maxResumeKeys}): the next read must find one
   * of them on its first page, which proves that nothing new sits before the position (whatever the
   * page size is by then: a position that no longer fits simply fails the check).
   */
  readonly keys: readonly string[];
}

/** Keys kept per resume point: enough to recognise the page, small enough for one state item. */
export const maxResumeKeys = 100;

/**
 * Longest cursor or article key a resume point keeps (characters). Both come from the provider:
 * a longer one is not stored (the next run reads that day from page 1), so provider bytes can
 * never grow the reading state item past DynamoDB's 400 KB.
 */
export const maxResumeValueLength = 1024;

/**
 * An article a run remembers on a provider day it counts (functions/core/reading/counted-days.ts),
 * with how many of the day's articles listed after it (older ones, newest-first) the runs have
 * accounted for. The provider's total then tells how many articles arrived late below it.
 */
export interface DayAnchor {
  readonly key: string;
  /** Its publication time (epoch ms). */
  readonly at: number;
  /** Articles listed after it that the runs have read (a lower bound: never more than were read). */
  readonly older: number;
  /** When every article between this anchor and the one above it was last known read (epoch ms). */
  readonly cleanAt: number;
}

/** What the runs know of one provider day they count; see functions/core/reading/counted-days.ts. */
export interface CountedDay {
  readonly day: string;
  /** Newest first; the last one is the deepest the runs still watch. */
  readonly anchors: readonly DayAnchor[];
  /**
   * Set while the articles listed after the last anchor may still receive late arrivals (it is the
   * day's oldest article): when they were last known read. Absent: nothing below the last anchor
   * is watched any more (older than the late-arrival window).
   */
  readonly bottomCleanAt?: number | undefined;
  /**
   * Without `bottomCleanAt`: unread articles listed after the last anchor, which arrived too late
   * to matter, as last measured; undefined when not measured since the last anchor changed.
   */
  readonly beyond?: number | undefined;
}

/** Counted reading's part of the reading state. */
export interface CountedReading {
  readonly days: readonly CountedDay[];
  /** The last run that checked every watched day for late arrivals (epoch ms). */
  readonly lastRecheckAt?: number | undefined;
  /**
   * Set when the provider's counts could not be used (no totals, pages that do not add up, articles
   * that vanished): why, and since when. Runs then read as without counting until it expires.
   */
  readonly off?: { readonly reason: string; readonly since: number } | undefined;
  /**
   * When the counts last disagreed (epoch ms), kept after the pause ends: a provider that removes
   * or moves articles can also do it where an arrival makes up for it, which no count shows, so
   * for {@link countedBackstopMs} after a disagreement the periodic full sweep stays on.
   */
  readonly disagreedAt?: number | undefined;
}

/** How long after the counts last disagreed counted runs still sweep every `FULL_SWEEP_MINUTES`. */
export const countedBackstopMs = 7 * 24 * 60 * 60 * 1000;

/**
 * Anchors a counted day keeps at most: enough for a busy day's late-arrival window (an anchor every
 * quarter page: ~380 at 127 articles a minute over 75 minutes), bounded for the state item (with
 * keys of at most {@link maxAnchorKeyLength} characters, two days stay under 200 KB).
 */
export const maxDayAnchors = 512;

/** Longest article key an anchor keeps (characters): a longer key is never an anchor. */
export const maxAnchorKeyLength = 128;

/**
 * What the runs learned about reading the provider, kept between runs (functions/core/reading/).
 * Losing it is always safe: a run without it reads every page of the window (a full sweep).
 */
export interface ReadingState {
  /** Counted reading (late arrivals found by the provider's totals); absent: not in use yet. */
  readonly counted?: CountedReading | undefined;
  readonly order: ProviderOrder;
  /** When the last completed full sweep started (epoch ms). */
  readonly lastSweepAt?: number | undefined;
  /** The run that wrote this state and how it ended. */
  readonly runId: string;
  readonly runStatus: RunStatus;
  /**
   * The watermark version when it was written: a different version at the next run means the
   * watermark was moved by a run that did not finish or by ops (`watermark set`), so that run sweeps.
   */
  readonly watermarkVersion?: number | undefined;
  readonly resume: readonly DayResume[];
  readonly updatedAt: number;
}

// --- Held notifications, digests and daily budgets ----------------------------------------------

/**
 * Why a match was held for a digest instead of being sent at once (see delivery-plan.ts):
 * the audience is in digest mode, it was inside the audience's quiet hours, or the audience's
 * daily budget of immediate alerts was used up.
 */
export type HoldReason = 'digest' | 'quiet-hours' | 'budget';

/** Every hold reason, in the order digests explain them. */
export const HOLD_REASONS: readonly HoldReason[] = ['quiet-hours', 'budget', 'digest'];

/**
 * Why a held notification went out when it did: `due` when the rule that held it ran its course
 * (its quiet hours ended, its digest time came), `settings-changed` when the audience's settings
 * stopped holding it (other quiet hours, another delivery mode, a raised or removed daily budget,
 * a category made urgent). See delivery-plan.ts `planHeldRelease`.
 */
export type ReleaseCause = 'due' | 'settings-changed';

/**
 * What became of a released notification: `sent` in a digest SNS accepted, in a digest SNS
 * refused for good and `parked` for `news-alerts replay --parked`, or `dropped` because it could
 * not be rendered into a digest at all (logged and counted as unrenderable).
 */
export type ReleaseOutcome = 'sent' | 'parked' | 'dropped';

/** What a finished release writes on the ledger entry of each notification it released. */
export interface ReleasedNotification extends DeliveryKey {
  /** When its digest part was accepted (or parked, or the release finished: an earlier run sent it). */
  readonly releasedAt: number;
  /** The ledger article key of the digest (part) that carried it ({@link digestKey}); absent when dropped. */
  readonly releasedIn?: string | undefined;
  readonly releaseOutcome: ReleaseOutcome;
  readonly releaseCause: ReleaseCause;
}

/**
 * A match kept in the state table until its audience's next release. Its identity is the
 * notification's (audience × article), so holding the same match again overwrites, never adds.
 * When it goes out is planned again at every run from the audience's current settings
 * (delivery-plan.ts `planHeldRelease`), so changed quiet hours, delivery mode, digest times, time
 * zone or daily budget apply to what is already held.
 */
export interface HeldNotification {
  readonly key: DeliveryKey;
  /** Epoch ms. */
  readonly heldAt: number;
  readonly reason: HoldReason;
  /** The match as the digest shows it (article and rules, bounded in size). */
  readonly match: AudienceMatch;
  /** Every matching rule's id, also those the bounded match leaves out. */
  readonly ruleIds: readonly string[];
  /**
   * The ledger facts of the FULL article (the bounded match cuts title and status, which would
   * make a re-read look changed). Absent on items held before facts existed: the store then
   * works them out from the bounded match.
   */
  readonly facts?: LedgerFacts | undefined;
}

/**
 * An audience that has held notifications: the index the release step reads instead of every
 * audience's items. `oldestHeldAt` and `reasons` give a lower bound of when the first one is due.
 */
export interface HoldingAudience {
  readonly audienceId: string;
  /** Epoch ms; meaningless when `reasons` is empty (nothing held). */
  readonly oldestHeldAt: number;
  /** Empty when the audience holds nothing at the moment. */
  readonly reasons: readonly HoldReason[];
  /**
   * The latest release instant claimed for the audience: the next one is later, so no two digests
   * of an audience ever share an id (and the ledger never mistakes a new digest for an old one).
   */
  readonly lastReleaseAt?: number | undefined;
}

/**
 * A digest release, written before anything is published (the "claim"): which held notifications
 * go out in which numbered part. A crash at any point leaves it behind, and the next run finishes
 * exactly this release: parts the ledger holds are not sent again, and the held items are deleted
 * only once every part is handled.
 */
export interface DigestRelease {
  readonly audienceId: string;
  /** The release instant (epoch ms): with the audience it makes the digest id. */
  readonly releaseAt: number;
  readonly claimedAt: number;
  /** Article keys of the held notifications in each part, in the order they are shown. */
  readonly parts: readonly (readonly string[])[];
  /** Held notifications that could not be rendered at all (logged and counted); deleted with the release. */
  readonly dropped: readonly string[];
  /**
   * Those of its notifications that go out because the audience's settings changed (cause
   * `settings-changed`), fixed with the claim so a run that finishes it says the same. Absent on
   * releases claimed before it existed: all `due`.
   */
  readonly settingsChanged?: readonly string[] | undefined;
}

/** An audience's held notifications and the releases not finished yet. */
export interface HeldState {
  readonly items: readonly HeldNotification[];
  readonly releases: readonly DigestRelease[];
}

/**
 * The ledger key of one digest message: `digest:<release instant>`, with `#<part>/<parts>` when
 * the release was split. Article keys start with `id:` or `url:`, so the two never collide.
 */
export const digestKey = (
  release: Pick<DigestRelease, 'audienceId' | 'releaseAt'>,
  part: number,
  parts: number,
): DeliveryKey => ({
  audienceId: release.audienceId,
  articleKey: `digest:${new Date(release.releaseAt).toISOString()}${parts > 1 ? `#${part}/${parts}` : ''}`,
});

/** One audience's count of immediate alerts on one local date (`YYYY-MM-DD` in its time zone). */
export interface DailyCountKey {
  readonly audienceId: string;
  readonly date: string;
}

/** The string form of a DailyCountKey. */
export const dailyCountId = (key: DailyCountKey): string => `${key.audienceId}|${key.date}`;

/** A daily count changed since it was read (optimistic lock lost); `current` is what it is now. */
export class DailyCountConflictError extends NewsAlertsError {
  readonly current: number;
  constructor(key: DailyCountKey, expected: number, current: number, options?: ErrorOptions) {
    super(
      `the daily alert count of audience "${key.audienceId}" on ${key.date} is ${current}, not ${expected} as read`,
      options,
    );
    this.name = 'DailyCountConflictError';
    this.current = current;
  }
}

/** A release with this audience and instant was claimed already. */
export class ReleaseClaimConflictError extends NewsAlertsError {
  constructor(release: Pick<DigestRelease, 'audienceId' | 'releaseAt'>, options?: ErrorOptions) {
    super(
      `a digest release of audience "${release.audienceId}" at ${new Date(release.releaseAt).toISOString()} exists already`,
      options,
    );
    this.name = 'ReleaseClaimConflictError';
  }
}

export interface StateStore {
  /**
   * Takes the run lease, or throws LeaseHeldError while another run holds an unexpired one.
   * `holder` is stored with it for readers (see {@link LeaseHolder}).
   */
  acquireLease(owner: string, durationMs: number, now: number, holder?: LeaseHolder): Promise<Lease>;
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
  /**
   * The ledger entries of `keys` that exist, by `deliveryId`, with what they recorded (story,
   * collapse, status, title hash, lead of a story marker). Strongly consistent, like findDelivered.
   */
  readDeliveries(keys: readonly DeliveryKey[]): Promise<Map<string, DeliveryRecord>>;
  /** Adds ledger entries (BatchWriteItem, 25 a call, unprocessed items retried). */
  recordDelivered(records: readonly DeliveryRecord[]): Promise<void>;
  /**
   * Deletes the ledger entries of `keys` that are still recorded as collapsed copies
   * (`collapsedInto` set; any other entry is left as it is): copies whose story never reached the
   * audience, planned again so that one of them carries it (delivery-pipeline.ts). Rare: one
   * conditional delete each.
   */
  forgetCollapsed(keys: readonly DeliveryKey[]): Promise<void>;
  /**
   * Sets the status and title hash of existing ledger entries (an article seen changed and
   * handled: announced or ignored), so the next re-read compares with what it is now. Nothing
   * else of the entry changes, its retention included; an entry that is gone stays gone.
   */
  refreshLedgerFacts(entries: readonly LedgerFactsUpdate[]): Promise<void>;
  /** Parks notifications SNS refused for good, for `news-alerts replay`. */
  recordUndeliverable(records: readonly UndeliverableRecord[]): Promise<void>;
  recordRun(record: RunRecord): Promise<void>;
  /** Most recent runs first. */
  recentRuns(limit: number): Promise<RunRecord[]>;
  /**
   * The reading state the last run left, or undefined when there is none or it cannot be read
   * (an item damaged by hand): both make the next run read every page, which is always safe.
   */
  readReadingState(): Promise<ReadingState | undefined>;
  /** Stores the reading state if the lease is still this run's; throws LeaseLostError otherwise. */
  writeReadingState(lease: Lease, state: ReadingState, now: number): Promise<void>;

  /**
   * Holds notifications for a later digest. Each held item is written in the same transaction as
   * its ledger entry (`heldFor` set) and its audience's index entry, so there is no moment at
   * which a held match is neither held nor recorded: a re-read can neither lose it nor plan it
   * again (e.g. send it at once because quiet hours ended meanwhile).
   */
  holdNotifications(records: readonly HeldNotification[]): Promise<void>;
  /**
   * The index of audiences that hold (or held) notifications, kept by holdNotifications,
   * claimRelease and setHoldingAudience; strongly consistent.
   */
  listHoldingAudiences(): Promise<HoldingAudience[]>;
  /** One audience's held notifications and unfinished releases (strongly consistent). */
  readHeld(audienceId: string): Promise<HeldState>;
  /**
   * Writes a release before it is published, together with the audience's `lastReleaseAt`, in
   * one transaction; throws ReleaseClaimConflictError if a release with this instant exists.
   */
  claimRelease(release: DigestRelease): Promise<void>;
  /**
   * Finishes a fully handled release: first writes on the ledger entry of each released
   * notification what became of it (`released`; an entry that is gone stays gone, one marked by an
   * earlier attempt keeps its marks), then deletes the held notifications, then the release
   * itself. Every step may be repeated: a run that crashed in between is finished by the next.
   */
  finishRelease(release: DigestRelease, released: readonly ReleasedNotification[]): Promise<void>;
  /**
   * Sets what an audience holds now (oldest `heldAt` and reasons; undefined: nothing), keeping
   * its `lastReleaseAt`.
   */
  setHoldingAudience(
    audienceId: string,
    holding: Pick<HoldingAudience, 'oldestHeldAt' | 'reasons'> | undefined,
  ): Promise<void>;
  /** Immediate alerts counted so far, by `dailyCountId` (absent: none yet). */
  readDailyCounts(keys: readonly DailyCountKey[]): Promise<Map<string, number>>;
  /**
   * Sets a daily count to `next` if it is still `expected` (0 also when the item does not exist);
   * throws DailyCountConflictError otherwise.
   */
  updateDailyCount(key: DailyCountKey, expected: number, next: number): Promise<void>;
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
  /** Recorded with the ledger entry once SNS accepts the message (see {@link DeliveryRecord}). */
  readonly facts?: LedgerFacts | undefined;
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

/** What is kept of a message SNS (or the work queue) refused for good, for `news-alerts replay --parked`. */
export const undeliverableRecord = (
  { message, code, reason }: FailedMessage,
  failedAt: number,
): UndeliverableRecord => ({
  ...message.key,
  topicArn: message.topicArn,
  failedAt,
  code,
  reason,
  subject: message.subject,
  body: message.body,
});

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

/** The adapters every delivery step (the run, the pipeline, digest releases) works with. */
export interface DeliveryPorts {
  readonly state: StateStore;
  readonly notifier: Notifier;
  readonly log: Log;
  /** The story index; without it no audience collapses stories (every copy is its own alert). */
  readonly stories?: StoryIndex | undefined;
}

// --- Sharded publishing (publishMode: sharded) --------------------------------------------------

/**
 * What one publisher invocation sends for one audience (the shard): notifications the alert run
 * already looked up in the ledger, collapsed, planned and rendered, ready for PublishBatch. The
 * run queues items on SQS instead of publishing; the publisher function checks the ledger again,
 * publishes, writes the ledger and marks the item done in its dispatch. A JSON head and the bodies
 * (functions/core/work-items.ts), compressed on the queue when that makes it smaller, at most
 * {@link workItemMaxBytes} as SQS counts the body.
 */
export interface WorkItem {
  /** Format version; a publisher refuses (as poison) a version it does not know. */
  readonly v: 1 | 2;
  /** The dispatch (the id of the run that queued it) whose completion count it belongs to. */
  readonly dispatchId: string;
  /** Unique within its dispatch (a random UUID): the idempotency key of the item. */
  readonly itemId: string;
  /** Every message of the item is for this audience. */
  readonly audienceId: string;
  /** When the run queued it (epoch ms). */
  readonly queuedAt: number;
  /** Rendered notifications with their ledger facts, in the order the run planned them. */
  readonly messages: readonly OutboundMessage[];
}

/** SQS's limit on one message body, and on the bodies of one SendMessageBatch together. */
export const workItemMaxBytes = 256 * 1024;

/** Articles per provider page when NEWS_API_PAGE_SIZE (the stack's `newsApiPageSize`) is not set. */
export const defaultPageSize = 100;

/** DynamoDB TransactWriteItems: at most this many actions in one transaction. */
export const transactionMaxActions = 100;

/**
 * The most work items one publisher invocation takes (`publisherBatchSize`): its settlement is then
 * one transaction, the items and their dispatch's head.
 */
export const publisherBatchMax = transactionMaxActions - 1;

/** What {@link WorkQueue.enqueue} did. */
export interface EnqueueOutcome {
  /** Work items SQS accepted. */
  readonly items: number;
  /** The messages inside those items. */
  readonly queued: readonly OutboundMessage[];
  /**
   * Messages not queued, with the notifier's failure shape: `MessageTooLarge` (permanent: one
   * message alone does not fit an item), `Aborted` (the signal fired first; not permanent), or
   * SQS's own code after retries (not permanent).
   */
  readonly failed: readonly FailedMessage[];
}

/** The publisher's queue (SQS): the alert run's side. */
export interface WorkQueue {
  /**
   * Packs `messages` into work items (one audience per item, each at most
   * {@link workItemMaxBytes}), counts them in the dispatch with
   * {@link DispatchStore.countEnqueued} BEFORE sending them, and sends them (SendMessageBatch, at
   * most 10 entries and 256 KB per request), retrying throttles and failed entries.
   */
  enqueue(
    dispatchId: string,
    messages: readonly OutboundMessage[],
    options: { signal?: AbortSignal },
  ): Promise<EnqueueOutcome>;
}

/** What the publisher did with one work item; summed into its dispatch. */
export interface WorkItemResult {
  /** Alerts SNS accepted (update notices not included). */
  readonly published: number;
  /** Update notices SNS accepted. */
  readonly updateNotices: number;
  /** Messages the ledger already held (a redelivered item, or a crash after SNS accepted). */
  readonly alreadyDelivered: number;
  /** Messages parked for `news-alerts replay --parked` (SNS refused for good, or retries ran out). */
  readonly parked: number;
}

/**
 * One run's work items in the state table: how many were queued, how many are done, and where
 * the watermark may move once all are. At most one dispatch is open at a time (a pointer item
 * written under the run lease); the next run settles an open dispatch before it reads anything.
 */
export interface DispatchHead extends WorkItemResult {
  readonly dispatchId: string;
  readonly openedAt: number;
  /** Items counted before they were sent (an item SQS then refused still counts here). */
  readonly enqueued: number;
  /** Items done, each counted once ({@link DispatchStore.completeItem}). */
  readonly done: number;
  /** Set when the run sealed the dispatch: the number of items SQS accepted. */
  readonly expected?: number | undefined;
  /** Set when sealed: where the watermark may move once every item is done (absent: nowhere). */
  readonly advanceTo?: number | undefined;
  readonly sealedAt?: number | undefined;
}

/** A dispatch is complete when it was sealed and every item it expected is done. */
export const dispatchComplete = (head: DispatchHead): boolean =>
  head.expected !== undefined && head.done >= head.expected;

/** Completion counts of sharded publishing, in the state table (functions/aws/dynamo-dispatch-store.ts). */
export interface DispatchStore {
  /**
   * Makes `dispatchId` THE open dispatch: writes its head and the open pointer, conditional on the
   * run lease and on no other dispatch being open. Throws {@link LeaseLostError} or
   * `DispatchOpenError` (errors.ts) otherwise.
   */
  open(lease: Lease, dispatchId: string, now: number): Promise<void>;
  /** Adds `items` to the head's `enqueued` count (ADD; before they are sent). */
  countEnqueued(dispatchId: string, items: number): Promise<void>;
  /** Seals the dispatch (under the lease): no more items; `expected` of them were accepted. */
  seal(
    lease: Lease,
    dispatchId: string,
    seal: { expected: number; advanceTo?: number | undefined },
    now: number,
  ): Promise<void>;
  /** The open dispatch's head, read strongly consistent, or undefined when none is open. */
  readOpen(): Promise<DispatchHead | undefined>;
  /** One dispatch's head (strongly consistent). */
  read(dispatchId: string): Promise<DispatchHead | undefined>;
  /**
   * Records one item as done with its result, once: a completion record (conditional put) and the
   * head's counts in one transaction. Returns false, changing nothing, when the item was already
   * done (a redelivered item).
   */
  completeItem(dispatchId: string, itemId: string, result: WorkItemResult, now: number): Promise<boolean>;
  /**
   * Claims work items for one delivery of them, all in one request where the store can: an item
   * nobody holds (or whose holder's claim lapsed before `now`) is `claimed` by `owner` until
   * `until`; an item already done is `done` with the result it was counted with; an item another
   * delivery holds is `busy`; any other item of a closed dispatch is `closed`. Answers in
   * the order of `items`; an item named twice gets the same answer twice. This is the publisher's
   * guard against two deliveries of one item at once, and against an item outliving its dispatch.
   */
  claimItems(items: readonly WorkItemRef[], claim: WorkItemClaim): Promise<ClaimOutcome[]>;
  /**
   * Settles what `owner` claimed: each `done` item is recorded with its result and counted in its
   * dispatch once (the answer is false for one that another delivery took over or finished), and
   * each `released` claim is dropped so the item's next delivery can claim it at once. As few
   * requests as the store can (one per dispatch). Throws like {@link completeItem} when a
   * dispatch has no head.
   */
  settleItems(
    owner: string,
    settlement: {
      readonly done: readonly (WorkItemRef & { readonly result: WorkItemResult })[];
      readonly released: readonly WorkItemRef[];
    },
    now: number,
  ): Promise<boolean[]>;
  /** Clears the open pointer (under the lease); the head stays (TTL) for the run history. */
  close(lease: Lease, dispatchId: string, outcome: 'completed' | 'abandoned', now: number): Promise<void>;
  /**
   * Gives the dispatch up while it stays THE open one (under the lease): its head says `closed`
   * (abandoned), so no item of it can be claimed from now on ({@link claimItems} answers `closed`).
   * A head that is gone is written anew for it.
   */
  stopClaims(lease: Lease, dispatchId: string, now: number): Promise<void>;
  /**
   * The latest end of a claim on an item of the dispatch that is neither done nor lapsed at `now`,
   * or undefined when there is none: until then a publisher may still be publishing that item.
   * A claim that ends after `latest` is none an invocation made (edited by hand) and is not counted.
   */
  liveClaimsUntil(dispatchId: string, now: number, latest: number): Promise<number | undefined>;
}

/** A work item as its dispatch knows it. */
export interface WorkItemRef {
  readonly dispatchId: string;
  readonly itemId: string;
}

/** Who claims work items and for how long (epoch ms). */
export interface WorkItemClaim {
  /** Unique per delivery (one publisher invocation). */
  readonly owner: string;
  /** The claim lapses then: the invocation cannot outlive it. */
  readonly until: number;
  readonly now: number;
}

/** What {@link DispatchStore.claimItems} found for one item. */
export type ClaimOutcome =
  | { readonly state: 'claimed' }
  | { readonly state: 'done'; readonly result: WorkItemResult }
  | { readonly state: 'busy' }
  /**
   * Its dispatch is closed: given up by a run, which reads its days again and queues what the
   * ledger misses anew, so this copy must publish nothing (or it would race the new one).
   */
  | { readonly state: 'closed' };

/** The alert run's side of sharded publishing: where it queues, and where it counts. */
export interface ShardedPublishing {
  readonly queue: WorkQueue;
  readonly dispatches: DispatchStore;
}

// --- Stories ------------------------------------------------------------------------------------

/** Which story an article belongs to, as the story index decided (the same on every re-read). */
export interface StoryAssignment {
  readonly articleKey: string;
  readonly storyId: string;
  /** The first article the index filed under the story. */
  readonly leadArticleKey: string;
  /**
   * When the index first saw the story (epoch ms): fixed once filed, so spike alerts
   * (functions/core/spikes/) count a story in the same hour on every re-read. Absent when the
   * story was forgotten before its filings.
   */
  readonly firstSeenAt?: number | undefined;
}

/** A story as digests and the CLI show it. */
export interface StoryRecord {
  readonly storyId: string;
  readonly leadArticleKey: string;
  /** When the index first saw the story (epoch ms). */
  readonly firstSeenAt: number;
  /** Outlet names (media name, else media code) of its articles, first seen first, at most {@link maxStoryOutlets}. */
  readonly outlets: readonly string[];
  /** Distinct outlets seen so far (may exceed `outlets.length`). */
  readonly outletCount: number;
  /** Articles filed under the story so far, the lead included. */
  readonly articleCount: number;
}

/** Outlet names a story record keeps (digests name "up to a few"). */
export const maxStoryOutlets = 10;
/**
 * Story ids a band key lists (the newest): a band that common words make hot cannot grow without
 * bound, in storage or in what each lookup reads and compares. A story dropped from one band
 * still shares its other bands with a copy; a copy that finds no candidate starts a story of its
 * own (one extra alert, never a lost one).
 */
export const maxBandStories = 8;

/**
 * The story index as the delivery steps use it (functions/core/story.ts `StoryResolver` over a
 * {@link StoryStore}). Decisions are deterministic and idempotent: an article assigned once keeps
 * its story for as long as the index remembers it, whichever run reads it again.
 */
export interface StoryIndex {
  /**
   * The story of each article (by article key), filing new ones. `dryRun` decides the same way
   * but writes nothing.
   */
  assign(
    articles: readonly Article[],
    options: { readonly now: number; readonly dryRun?: boolean | undefined },
  ): Promise<Map<string, StoryAssignment>>;
  /** The stories that exist (unknown or expired ids are left out). */
  readStories(storyIds: readonly string[]): Promise<Map<string, StoryRecord>>;
}

/** A story as the store keeps it: the record, plus its lead's fingerprint for comparing candidates. */
export interface StoredStory extends StoryRecord {
  /** The lead's MinHash signature (story.ts), compared with a candidate's to confirm a match. */
  readonly signature: Uint32Array;
  /** The LSH band keys the story is filed under (story.ts), at most 32, each under 64 characters. */
  readonly bands: readonly string[];
  /**
   * The marks of the lead article's headline and first lines (story.ts: the headline's polarity,
   * `+` or `¬`, first, then `storyMarks`: numbers, month and weekday names), at most 16 of at most
   * 16 characters: a candidate of the other polarity ("in talks" vs "not in talks"), or with a mark
   * the lead lacks while the lead has one it lacks, is another story ("record high in January" vs
   * "in July", "highest in 40 months" vs "in 2 months"). Absent on stories stored before marks
   * existed: no check.
   */
  readonly marks?: readonly string[] | undefined;
  /**
   * The lead headline's terms (story.ts `storyTerms`: words, and single characters of Korean,
   * Japanese and Chinese, with its subject tags' and a long trailing credit's), at most
   * `MAX_STORED_TERMS` short hashes: a candidate whose headline and the lead's each have a term the
   * other lacks is another story ("Incheon Waves clinch pennant" vs "Seoul Tigers clinch
   * pennant"). Absent on stories stored before terms existed: no check.
   */
  readonly terms?: readonly string[] | undefined;
}

/** One article filed under a story (new or existing). */
export interface StoryFiling {
  readonly articleKey: string;
  readonly storyId: string;
  /** Outlet name of the article (media name, else media code), when it has one. */
  readonly outlet?: string | undefined;
  /** When it was filed (epoch ms). */
  readonly at: number;
}

/**
 * Persistence of the story index (functions/aws/dynamo-story-index.ts in production). Every read
 * is strongly consistent. Writes are idempotent: writing the same filing twice (a run that
 * crashed and re-read) changes no count.
 */
export interface StoryStore {
  /** The story id of each article key already filed (absent: never filed, or forgotten). */
  readFilings(articleKeys: readonly string[]): Promise<Map<string, string>>;
  /**
   * Story ids filed under each band key (absent: none): the newest {@link maxBandStories}, oldest
   * first.
   */
  readBands(bandKeys: readonly string[]): Promise<Map<string, readonly string[]>>;
  /** Stories by id; expired ones (older than the store's window) are left out. */
  readStories(storyIds: readonly string[]): Promise<Map<string, StoredStory>>;
  /**
   * Writes new stories (with their band entries) first, then the filings, adding each filing's
   * outlet and article to its story's counts once.
   */
  write(changes: { readonly stories: readonly StoredStory[]; readonly filings: readonly StoryFiling[] }): Promise<void>;
}
