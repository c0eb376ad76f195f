/**
 * From matches to delivered notifications: ledger lookup (skip what was already delivered),
 * rendering, SNS publishing and the ledger write right after SNS accepts each batch. The alert
 * run and `news-alerts replay` both deliver through it, so a backfill keeps the same guarantees
 * as a scheduled run: nothing the ledger holds is sent again, nothing SNS refused is dropped.
 *
 * Work is buffered so request counts stay near their floor: ledger lookups go in groups of 100
 * (BatchGetItem), messages in full batches of 10 per topic (PublishBatch), ledger writes in 25s
 * (BatchWriteItem, see LedgerWriter). `flush()` moves everything that is still buffered.
 *
 * With `applyDeliveryPreferences` (the alert run sets it), each fresh match first goes through the
 * planner (delivery-plan.ts): what should not go out now (digest mode, quiet hours, daily budget
 * used up) is held in the state table for the audience's next digest instead. A hold is "handled"
 * like a publish: the held item and its ledger entry are written in one transaction, so the
 * watermark may move past it. Sends that count against a daily budget reserve it with a
 * conditional write before they are published; sends that then fail give their reservation back.
 *
 * One story, one alert (`collapse: 'story'` audiences, with a story index in `stories`): each
 * batch asks the index for its articles' stories (one `assign`) and reads the ledger once for
 * the matches' own entries and their audiences' story markers (`story:<id>`), and once more for
 * the entries of the leads that earlier runs' markers name (only when there are such). The first
 * copy of a story an audience meets is its lead: the marker naming it is written and awaited
 * BEFORE the lead is published or held, so a crash at any later point can never let a second copy
 * through, and a re-read of the lead itself (the marker names it) still sends it. Every other copy
 * is recorded in the ledger as collapsed into the story (not sent) once its lead has reached the
 * audience (published, queued for the publishers or held; a lead of an earlier run: its ledger
 * entry): handled, like a publish, so the watermark moves past it and "why didn't I get this" has
 * an answer. A copy whose lead did not get there (not sent, parked) is not recorded and keeps
 * the watermark before it; the next copy carries the story. A copy recorded as collapsed into a
 * lead that never reached the audience (its `collapsedLead` has no entry, or a release dropped
 * it; sharded: the lead's work item never published, and the lead did not match again on the
 * re-read) is planned again when it is read again, also once its audience stopped collapsing:
 * its entry is deleted and it carries the story. Without an index, and for `collapse: 'none'`
 * audiences, every copy is its own alert.
 *
 * Updates (`updates: 'notify'`): ledger entries carry the article's status and title hash
 * (ledger-facts.ts). A match already in the ledger that came back changed gets one update notice
 * per audience, story (or article) and change, keyed in the ledger so a re-read never repeats
 * it. Notices go out at once: they correct an alert the audience already has, so holding them
 * for a digest or charging them to the daily budget would leave a wrong alert standing longer.
 *
 * Poison data never stops the others: a match that cannot be rendered (an unpublishable link,
 * no valid time, any renderer failure) is parked like a notification SNS refused for good, with
 * the best rendering there is (render.ts `renderParkedNotification`), counted (`parked` and
 * `unrenderable`, alarm `notifications-parked`) and logged with its key; every other match goes
 * on, and the watermark may move past it: parking is handled, like publishing.
 */
import { LedgerWriter, Outbox } from './delivery-buffers.ts';
import { isUrgent, localDate, planDelivery } from './delivery-plan.ts';
import { toHeldNotification } from './digest.ts';
import { describeError } from './errors.ts';
import {
  type ArticleChange,
  changeLabel,
  changeSince,
  copyLeadEntryLost,
  leadOfCollapsedCopy,
  ledgerFacts,
} from './ledger-facts.ts';
import type { Article, Audience, AudienceMatch } from './model.ts';
import {
  DailyCountConflictError,
  type DailyCountKey,
  type DeliveryKey,
  type DeliveryPorts,
  type DeliveryRecord,
  dailyCountId,
  deliveryId,
  type FailedMessage,
  type HeldNotification,
  isUpdateNoticeKey,
  type LedgerFacts,
  type LedgerFactsUpdate,
  type OutboundMessage,
  type StoryAssignment,
  storyMarkerKey,
  undeliverableRecord,
  updateNoticeKey,
  type WorkQueue,
} from './ports.ts';
import {
  type RenderOptions,
  renderNotification,
  renderParkedNotification,
  renderUpdateNotice,
  UnpublishableLinkError,
} from './render.ts';
import { renderSpikeAlert, renderSpikeUpdate, spikeDigestHeadline } from './spikes/render.ts';

/** DynamoDB's BatchGetItem limit. */
const lookupBatchSize = 100;
/** Held notifications written at once (the store packs them into transactions of 100 writes). */
const holdBatchSize = 100;
/** Sharded publishing: messages per audience worth one work item (~5 KB each of its 256 KB). */
const workItemMessages = 50;
/** Sharded publishing: messages waiting for their audience's item before all of them are queued. */
const maxHeldForItems = 5_000;
/** Attempts of a budget reservation that keeps meeting a concurrent change. */
const maxBudgetAttempts = 5;

/** Per-audience delivery counts. */
export interface AudienceTally {
  matched: number;
  alreadyDelivered: number;
  published: number;
  failed: number;
  parked: number;
  /** Held for a later digest (digest mode, quiet hours, daily budget). */
  held: number;
  /** Copies of a story the audience already has: recorded in the ledger as collapsed, not sent. */
  collapsed: number;
  /** Sharded publishing: handed to the publishers as work items (published once they are done). */
  queued: number;
}

/** What the pipeline counted; the alert run's summary carries these fields. */
export interface DeliveryCounts {
  notificationsMatched: number;
  notificationsAlreadyDelivered: number;
  notificationsPublished: number;
  notificationsFailed: number;
  notificationsParked: number;
  /**
   * Notifications left for the next run: the time budget ran out, or they are copies of a story
   * whose lead was not sent (SNS failed it for now, or the deadline came), which wait with it.
   */
  notificationsDeferred: number;
  /**
   * Notifications that could not be rendered (unpublishable link, no valid time...): parked for
   * review and `news-alerts replay --parked` (also counted in `notificationsParked`), logged with
   * the article key.
   */
  notificationsUnrenderable: number;
  /** Notifications for articles published before `lateBefore` (the provider showed them late). */
  lateDeliveries: number;
  /** Dry runs only: notifications that would have been published. */
  notificationsWouldPublish: number;
  /** Matches held for a later digest (all reasons); each is in exactly one later digest. */
  notificationsHeld: number;
  /** Of those: held because the audience is in digest mode. */
  heldForDigest: number;
  /** Of those: held during the audience's quiet hours. */
  heldForQuietHours: number;
  /** Of those: over the audience's daily budget of immediate alerts ("+N more" in the next digest). */
  budgetOverflow: number;
  /** Dry runs only: matches that would have been held. */
  notificationsWouldHold: number;
  /**
   * Copies of a story their audience already has (`collapse: 'story'`): recorded in the ledger
   * as collapsed into the story (`collapsedInto`), not sent. Counted in `notificationsMatched`.
   */
  notificationsCollapsed: number;
  /** Dry runs only: copies that would have been collapsed. */
  notificationsWouldCollapse: number;
  /**
   * Spike escalations not announced on this run: the audience does not have the spike alert yet
   * (held), or would not be sent an alert now (digest mode, quiet hours). A later run sends them.
   */
  updatesDeferred: number;
  /** Update notices SNS accepted (`updates: 'notify'`); not in `notificationsPublished`. */
  updateNotices: number;
  /** Articles already delivered that came back changed, for audiences with `updates: 'ignore'`. */
  updatesIgnored: number;
  /**
   * Sharded publishing: notifications (update notices included) handed to the publisher function
   * as work items instead of being published by the run; their publishing is counted when the
   * run's dispatch completes.
   */
  notificationsQueued: number;
  /** Sharded publishing: the work items SQS accepted. */
  workItemsQueued: number;
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
  notificationsHeld: 0,
  heldForDigest: 0,
  heldForQuietHours: 0,
  budgetOverflow: 0,
  notificationsWouldHold: 0,
  notificationsCollapsed: 0,
  notificationsWouldCollapse: 0,
  updatesDeferred: 0,
  updateNotices: 0,
  updatesIgnored: 0,
  notificationsQueued: 0,
  workItemsQueued: 0,
  audiences: {},
});

export interface DeliveryPipelineOptions extends DeliveryPorts {
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
  /**
   * Apply each audience's delivery preferences (digest mode, quiet hours, daily budget): hold
   * what should not go out now for the audience's next digest. Off by default, so a replay or a
   * backfill sends what it is asked to send; the alert run turns it on.
   */
  readonly applyDeliveryPreferences?: boolean;
  /** Dry runs: receives every match that would have been held. */
  readonly onWouldHold?: (held: HeldNotification) => void;
  /** Dry runs: receives the audience of every copy that would have collapsed into its story. */
  readonly onWouldCollapse?: (audienceId: string) => void;
  /** How alerts are rendered (the stack's default locale); the same for every audience of the run. */
  readonly render?: RenderOptions;
  /**
   * Sharded publishing: what would be published goes to the publishers' queue as work items of
   * this dispatch instead (the publisher function publishes it and writes the ledger). Everything
   * before it (ledger lookup, story markers, collapse, holds, budget reservations, rendering) is
   * the same as when the pipeline publishes itself.
   */
  readonly queue?: { readonly queue: WorkQueue; readonly dispatchId: string } | undefined;
}

/** A match that passed the ledger lookup and rendered. */
interface FreshMatch {
  readonly match: AudienceMatch;
  readonly audience: Audience;
  readonly message: OutboundMessage;
}

/** A match already in the ledger that came back changed, for an audience that wants to hear it. */
interface UpdateCandidate {
  readonly match: AudienceMatch;
  readonly audience: Audience;
  readonly change: ArticleChange;
  readonly key: DeliveryKey;
  /**
   * The entry's new facts, written once the notice is published (single mode), or on a re-read
   * that finds the notice in the ledger (sharded mode, and a crash in between).
   */
  readonly refresh: LedgerFactsUpdate;
}

/** What one batch's ledger lookup left to send: fresh matches, and update notices to send at once. */
interface BatchOutcome {
  readonly fresh: FreshMatch[];
  readonly notices: OutboundMessage[];
}

/** One audience's daily budget on one local date, as this pipeline knows it. */
interface BudgetState {
  readonly key: DailyCountKey;
  readonly limit: number;
  /** The count the store holds (as far as this pipeline wrote or read it). */
  stored: number;
  /** Sends planned in the current batch, not reserved yet, in order. */
  pending: { fresh: FreshMatch; urgent: boolean }[];
  /**
   * Delivery ids whose failed sends gave their slots back: no longer counted in the store (the
   * next run retries those sends on them), but not room for this run's other matches either. A
   * send planned again in this run takes its own slot back (it is reserved anew).
   */
  readonly kept: Set<string>;
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
  /** Held notifications waiting for their write. */
  #holds: HeldNotification[] = [];
  /** Daily budgets by `dailyCountId`. */
  readonly #budgets = new Map<string, BudgetState>();
  /** Which daily budget each reserved, not yet published send used (by delivery id). */
  readonly #reserved = new Map<string, string>();
  /**
   * The lead article of each story per audience (`audienceId|storyId`), as this run chose or read
   * it: a later copy in the same run collapses without reading the marker again.
   */
  readonly #leads = new Map<string, string>();
  /** Stories (`audienceId|storyId`) whose marker this run wrote (or, in a dry run, would write). */
  readonly #markedStories = new Set<string>();
  /**
   * Delivery ids this run held, and story leads an earlier run held that are not released yet:
   * an urgent copy of such a lead's story is not collapsed into it ({@link #renderFresh}).
   */
  readonly #heldLeads = new Set<string>();
  /**
   * This run's story leads that have not reached their audience yet (rendered, not yet published,
   * queued or held), by delivery id, with the copies collapsed into them: the copies' ledger
   * entries are written once the lead gets there ({@link #settleLead}), and dropped if it does not
   * ({@link #failLead}), so a copy is never recorded as collapsed into an alert nobody received.
   */
  readonly #leadsInFlight = new Map<string, { readonly story: string; readonly copies: CollapsedCopy[] }>();
  /**
   * The ledger entries (undefined: none) of story leads earlier batches of this run read, as read
   * then: a later batch of copies of the same story asks the ledger nothing more. A lead this run
   * sends after that read is queued or in flight, which #copyLeadFate checks first.
   */
  readonly #leadEntriesRead = new Map<string, DeliveryRecord | undefined>();
  /**
   * Delivery ids this run planned that did not reach their audience: story leads not sent (failed
   * for now, or parked), and every message refused for good or unrenderable. A copy recorded as
   * collapsed into one of them carries its story ({@link #copyLeadFate}).
   */
  readonly #failedLeads = new Set<string>();
  /**
   * Copies an earlier run recorded as collapsed into a lead this run is sending now (in flight, or
   * read again in the same batch with no ledger entry), by the lead's delivery id: the lead's
   * fate decides theirs. Refused for good (or unrenderable, so parked), the lead never carries
   * the story, and the copies are matched again ({@link #replanAwaiting}); sent, queued or held,
   * or failed for now (the next run sends it), they stay collapsed.
   */
  readonly #copiesAwaiting = new Map<string, AudienceMatch[]>();
  /**
   * The ledger entries each update notice of this run announces a change of (by the notice's
   * delivery id): they take the new facts once the notice is published, so the next change is
   * compared with what the audience was last told (the previous status of the next notice, a
   * headline changed back), not with what it first received.
   */
  readonly #announces = new Map<string, LedgerFactsUpdate[]>();

  constructor(options: DeliveryPipelineOptions) {
    this.#options = options;
    this.#ledger = new LedgerWriter(options.state, { maxDelayMs: options.ledgerFlushDelayMs, now: options.now });
  }

  /** Notifications not published (failed or deferred) since the last `resetUnpublished`. */
  get unpublished(): number {
    return this.#unpublished;
  }

  /**
   * Budget slots this run gave back because their sends failed, by daily count id (`audience|date`):
   * the next run retries those sends on them, so a digest release in this run must not hand them
   * to held matches (digest-release.ts `budgetKeptForRetries`).
   */
  get budgetGivenBack(): ReadonlyMap<string, number> {
    return new Map(
      [...this.#budgets].filter(([, budget]) => budget.kept.size > 0).map(([id, budget]) => [id, budget.kept.size]),
    );
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
    try {
      const pending = this.#pendingMatches.length;
      const lookupCount = flush ? pending : pending - (pending % lookupBatchSize);
      if (lookupCount > 0) {
        const matches = this.#pendingMatches.splice(0, lookupCount);
        this.#outbox.add(await this.#freshMessages(matches));
      }
      // Sharded, a work item costs the publisher the same few requests whatever it holds: items
      // go out once an audience has a full item's worth, not every 10 messages (one PublishBatch).
      const messages = flush
        ? this.#outbox.drain()
        : this.#options.queue !== undefined
          ? this.#outbox.takeTopicsWith(workItemMessages, maxHeldForItems)
          : this.#outbox.takeFullBatches();
      if (messages.length > 0) {
        if (this.#options.dryRun) this.#pretendToPublish(messages);
        else if (this.#options.queue !== undefined) await this.#enqueue(messages, this.#options.queue);
        else await this.#publish(messages);
      }
      if (flush || this.#holds.length >= holdBatchSize) await this.#writeHolds();
      // Copies of a lead parked for good are matched again (#replan): a flush delivers them too.
      if (flush && this.#pendingMatches.length > 0) {
        await this.#deliver(true);
        return;
      }
    } catch (error) {
      // Whatever failed (a hold or park write, a lookup), notifications SNS already accepted must
      // reach the ledger before the error ends the run, or the next run sends them again.
      await this.#ledger.flush().catch((ledgerError: unknown) =>
        this.#options.log.error('could not record published notifications in the ledger', {
          error: describe(ledgerError),
        }),
      );
      throw error;
    }
    if (flush) await this.#ledger.flush();
  }

  /** Drops matches the ledger already holds, renders the rest, and holds what should wait. */
  async #freshMessages(matches: readonly AudienceMatch[]): Promise<OutboundMessage[]> {
    // Rendered before planning, also what is then held: a match that cannot be rendered is
    // reported now, with its article, instead of surfacing in a digest hours later.
    const { fresh, notices } = await this.#renderFresh(matches);
    const sends = this.#options.applyDeliveryPreferences ? await this.#plan(fresh) : fresh;
    for (const { match } of sends) {
      if (match.article.publishedAt < this.#options.lateBefore) this.#options.counts.lateDeliveries += 1;
    }
    return [...sends.map((entry) => entry.message), ...notices];
  }

  /**
   * The story of each article that needs one (matched by an audience that collapses stories):
   * one `assign` for the batch, none when no audience of the batch collapses.
   */
  async #assignStories(matches: readonly AudienceMatch[]): Promise<Map<string, StoryAssignment>> {
    const { stories, audiences } = this.#options;
    if (stories === undefined) return new Map();
    const articles = new Map<string, Article>();
    for (const match of matches) {
      // A spike alert is about many stories, not one: never filed in the index.
      if (match.spike === undefined && audiences.get(match.audienceId)?.collapse === 'story') {
        articles.set(match.article.key, match.article);
      }
    }
    if (articles.size === 0) return new Map();
    return stories.assign([...articles.values()], { now: this.#options.now(), dryRun: this.#options.dryRun === true });
  }

  /**
   * Drops matches the ledger already holds (finding the changed ones for update notices),
   * collapses copies of stories their audience already has, and renders the rest.
   */
  async #renderFresh(batch: readonly AudienceMatch[]): Promise<BatchOutcome> {
    const { counts, audiences } = this.#options;
    const assignments = await this.#assignStories(batch);
    const storyOf = (match: AudienceMatch): string | undefined =>
      audiences.get(match.audienceId)?.collapse === 'story' ? assignments.get(match.article.key)?.storyId : undefined;
    // A story's urgent copy first, so that it leads: a copy that quiet hours or the budget would
    // hold must not carry the story for a copy that goes out now.
    const matches = urgentCopiesFirst(batch, (match) => {
      const audience = audiences.get(match.audienceId);
      return audience !== undefined && storyOf(match) !== undefined && sendsDespiteHolds(match, audience);
    });
    const keys: DeliveryKey[] = [];
    const markerIds = new Set<string>();
    for (const match of matches) {
      keys.push({ articleKey: match.article.key, audienceId: match.audienceId });
      const storyId = storyOf(match);
      if (storyId === undefined || this.#leads.has(leadId(match.audienceId, storyId))) continue;
      const marker = storyMarkerKey(match.audienceId, storyId);
      if (markerIds.has(deliveryId(marker))) continue;
      markerIds.add(deliveryId(marker));
      keys.push(marker);
    }
    // What the ledger recorded, not only which keys it holds, whatever the audiences' settings
    // now: a copy recorded as collapsed while its audience collapsed stories is judged by its lead
    // also once the audience stopped (the same requests: DynamoDB bills whole items either way).
    const entries = await this.#options.state.readDeliveries(keys);
    await this.#readLegacyMarkers(entries, markerIds);
    const delivered = new Set(entries.keys());
    const leadEntries = await this.#readLeadEntries(entries, markerIds, keys);

    const now = this.#options.now();
    const facts = new Map<string, LedgerFacts>();
    const factsOf = (article: Article, storyId: string | undefined): LedgerFacts => {
      const id = `${storyId ?? ''}|${article.key}`;
      let value = facts.get(id);
      if (value === undefined) {
        value = ledgerFacts(article, storyId);
        facts.set(id, value);
      }
      return value;
    };
    const fresh: FreshMatch[] = [];
    const unrenderable: FailedMessage[] = [];
    const markers: DeliveryRecord[] = [];
    const collapsed: CollapsedCopy[] = [];
    const updates: UpdateCandidate[] = [];
    const refreshed: LedgerFactsUpdate[] = [];
    const forgotten: DeliveryKey[] = [];
    // Built on first use: only a collapsed copy read again asks whether its lead is in the batch.
    let batchIds: ReadonlySet<string> | undefined;
    const inBatch = (id: string): boolean => {
      batchIds ??= new Set(
        batch.map((other) => deliveryId({ articleKey: other.article.key, audienceId: other.audienceId })),
      );
      return batchIds.has(id);
    };
    for (const original of matches) {
      const audience = audiences.get(original.audienceId);
      if (!audience) continue;
      const storyId = storyOf(original);
      const match = storyId === undefined ? original : { ...original, storyId };
      const { article } = match;
      const tally = this.#tally(match.audienceId);
      tally.matched += 1;
      counts.notificationsMatched += 1;
      const id = deliveryId({ articleKey: article.key, audienceId: match.audienceId });
      const recorded = entries.get(id);
      // A copy recorded as collapsed whose story never reached the audience is not delivered: it
      // is planned again below, and carries the story.
      const copyLead = recorded === undefined ? undefined : this.#leadOfCopy(recorded, entries);
      const fate =
        copyLead === undefined || this.#queued.has(id)
          ? 'reached'
          : this.#copyLeadFate(match.audienceId, copyLead, article.key, leadEntries, inBatch);
      if (fate === 'pending' && copyLead !== undefined)
        this.#awaitLead(deliveryId({ articleKey: copyLead, audienceId: match.audienceId }), original);
      const lostStory = fate === 'lost';
      if (lostStory) forgotten.push({ articleKey: article.key, audienceId: match.audienceId });
      if ((delivered.has(id) && !lostStory) || this.#queued.has(id)) {
        tally.alreadyDelivered += 1;
        counts.notificationsAlreadyDelivered += 1;
        // A collapsed copy never reached the audience: its outlet's changes are not its news (the
        // lead's entry carries the story's), and must not use up the story's notice key.
        if (recorded === undefined || recorded.collapsedInto !== undefined) continue;
        const change = changeSince(recorded, article);
        if (change === undefined) continue;
        const { status = '', titleHash = '' } = factsOf(article, recorded.storyId);
        const refresh = { audienceId: match.audienceId, articleKey: article.key, status, titleHash };
        if (audience.updates !== 'notify') {
          // Seen once: the entry takes the new facts, so later re-reads neither count it again nor
          // read the ledger for it.
          counts.updatesIgnored += 1;
          refreshed.push(refresh);
          continue;
        }
        // A spike's escalation is news, not a correction: it waits, unrecorded, until the audience
        // has the spike alert and would be sent an alert now. The episode's alert is offered on
        // every run while it lasts, so a later run sends it; one that ends first is not announced.
        if (match.spike !== undefined && !spikeUpdateDue(match, audience, recorded, this.#options.now())) {
          counts.updatesDeferred += 1;
          continue;
        }
        // From what the entry recorded only: an audience that switched `collapse` since keeps the
        // key its earlier notices used, so a change is never announced twice.
        const subject = recorded.storyId ?? article.key;
        updates.push({
          match,
          audience,
          change,
          key: updateNoticeKey(match.audienceId, subject, changeLabel(change)),
          refresh,
        });
        continue;
      }
      let newLead = false;
      if (storyId !== undefined) {
        const story = leadId(match.audienceId, storyId);
        let lead = this.#leads.get(story);
        if (lead === undefined) {
          const marker = entries.get(deliveryId(storyMarkerKey(match.audienceId, storyId)));
          if (marker !== undefined && marker.leadArticleKey === undefined) {
            // Damaged by hand: nothing says the story reached the audience. Collapsing into it could
            // lose the story; this copy leads instead (its marker is written anew), at worst one
            // extra alert.
            this.#options.log.warn('a story marker without its lead article; this copy carries the story', {
              audienceId: match.audienceId,
              storyId,
            });
          } else if (marker?.leadArticleKey !== undefined) {
            lead = this.#leadOfMarker(match, audience, storyId, marker.leadArticleKey, leadEntries, batch);
          }
          if (lead !== undefined) this.#leads.set(story, lead);
        }
        if (
          lead !== undefined &&
          lead !== article.key &&
          this.#heldLeads.has(deliveryId({ articleKey: lead, audienceId: match.audienceId })) &&
          sendsDespiteHolds(match, audience)
        ) {
          // The lead waits for quiet hours or the budget, and this copy would go out now: it
          // carries the story from here (the held lead still goes out with the digest).
          lead = undefined;
        }
        if (lead !== undefined && lead !== article.key) {
          this.#queued.add(id);
          collapsed.push({
            lead: deliveryId({ articleKey: lead, audienceId: match.audienceId }),
            match: original,
            record: {
              audienceId: match.audienceId,
              articleKey: article.key,
              deliveredAt: now,
              ruleIds: match.rules.map((rule) => rule.ruleId),
              collapsedInto: storyId,
              collapsedLead: lead,
              ...factsOf(article, storyId),
            },
          });
          continue;
        }
        newLead = lead === undefined;
      }
      let message: OutboundMessage;
      try {
        message =
          match.spike === undefined
            ? renderNotification(match, audience, this.#options.render)
            : renderSpikeAlert(match, audience, this.#options.render);
      } catch (error) {
        // One article that cannot be rendered must not stop every other alert, nor block the
        // watermark forever, nor vanish: it is parked (below) with the best rendering there is,
        // and delivery goes on. Queued, so an article the provider repeats is parked once. It
        // does not become its story's lead: the next copy can still reach the audience.
        this.#queued.add(id);
        const failure = this.#unrenderable(match, audience, error, undefined);
        if (failure !== undefined) unrenderable.push(failure);
        // The lead a marker named: parked, it carries nothing; the next copy leads.
        if (storyId !== undefined && this.#leads.get(leadId(match.audienceId, storyId)) === article.key) {
          this.#leads.delete(leadId(match.audienceId, storyId));
        }
        // Whether a marker named it or not: old copies recorded as collapsed into it, read before
        // or after it, carry the story.
        this.#replanAwaiting(id);
        continue;
      }
      if (storyId !== undefined && !this.#options.dryRun) {
        const story = leadId(match.audienceId, storyId);
        if (newLead || this.#leads.get(story) === article.key) {
          this.#leadsInFlight.set(id, { story, copies: [] });
          // Read again and leading again in this run (a failure earlier in the run was for now).
          this.#failedLeads.delete(id);
        }
      }
      if (storyId !== undefined && newLead) {
        this.#leads.set(leadId(match.audienceId, storyId), article.key);
        this.#markedStories.add(leadId(match.audienceId, storyId));
        markers.push({
          ...storyMarkerKey(match.audienceId, storyId),
          deliveredAt: now,
          ruleIds: [],
          storyId,
          leadArticleKey: article.key,
        });
      }
      this.#queued.add(id);
      // Set on the message just rendered rather than on a copy: render.ts remembers each
      // message's size by identity, and a copy would make the notifier measure 13 KiB again.
      (message as { facts?: LedgerFacts }).facts = factsOf(article, storyId);
      fresh.push({ match, audience, message });
    }
    if (unrenderable.length > 0) {
      await this.#park(
        unrenderable,
        'parked notifications that could not be rendered; review them (see `news-alerts replay --parked --dry-run`)',
      );
    }
    // Before anything of this batch is published or queued: a publisher skips a key the ledger holds.
    if (forgotten.length > 0 && !this.#options.dryRun) await this.#options.state.forgetCollapsed(forgotten);
    await this.#recordCollapse(markers, collapsed);
    const notices = await this.#updateNotices(updates, refreshed);
    if (refreshed.length > 0 && !this.#options.dryRun) await this.#options.state.refreshLedgerFacts(refreshed);
    return { fresh, notices };
  }

  /**
   * Adds to `entries` the story markers of collapsed copies written before `collapsedLead` existed
   * that the batch's read did not ask for because their audience does not collapse stories now:
   * without its marker, such a copy's lead is unknown ({@link leadOfCollapsedCopy}). One more
   * read, only when the batch holds such a copy. Not for a story whose marker this run wrote (or,
   * in a dry run, would write): that marker is younger than any copy recorded before, so the
   * copy's lead is unknown whatever the ledger says now, and reading the older one would judge a
   * dry run otherwise than the run. A story this run leads from the marker the ledger holds has
   * no new marker: that one is read, and names the copy's lead.
   */
  async #readLegacyMarkers(entries: Map<string, DeliveryRecord>, markerIds: ReadonlySet<string>): Promise<void> {
    const missing = new Map<string, DeliveryKey>();
    for (const entry of entries.values()) {
      if (entry.collapsedInto === undefined || entry.collapsedLead !== undefined) continue;
      if (this.#markedStories.has(leadId(entry.audienceId, entry.collapsedInto))) continue;
      const marker = storyMarkerKey(entry.audienceId, entry.collapsedInto);
      const id = deliveryId(marker);
      if (!markerIds.has(id) && !entries.has(id)) missing.set(id, marker);
    }
    if (missing.size === 0) return;
    for (const [id, marker] of await this.#options.state.readDeliveries([...missing.values()])) entries.set(id, marker);
  }

  /**
   * The ledger entries of the leads the markers of this batch name, and of the leads its collapsed
   * copies went with, where the batch's own read did not cover them (one more read, only when an
   * earlier run started one of the batch's stories).
   */
  async #readLeadEntries(
    entries: ReadonlyMap<string, DeliveryRecord>,
    markerIds: ReadonlySet<string>,
    read: readonly DeliveryKey[],
  ): Promise<ReadonlyMap<string, DeliveryRecord>> {
    const asked = new Set(read.map(deliveryId));
    const leads: DeliveryKey[] = [];
    const ask = (key: DeliveryKey) => {
      const id = deliveryId(key);
      if (asked.has(id) || this.#queued.has(id)) return;
      asked.add(id);
      leads.push(key);
    };
    for (const markerId of markerIds) {
      const marker = entries.get(markerId);
      if (marker?.leadArticleKey !== undefined)
        ask({ articleKey: marker.leadArticleKey, audienceId: marker.audienceId });
    }
    // The lead each collapsed copy of the batch went with: did it reach the audience (#copyLeadFate)?
    const copyLeads = new Set<string>();
    for (const key of read) {
      const entry = entries.get(deliveryId(key));
      const lead = entry === undefined ? undefined : this.#leadOfCopy(entry, entries);
      if (lead === undefined) continue;
      const leadKey = { articleKey: lead, audienceId: key.audienceId };
      copyLeads.add(deliveryId(leadKey));
      if (!this.#leadEntriesRead.has(deliveryId(leadKey))) ask(leadKey);
    }
    const found =
      leads.length === 0 ? new Map<string, DeliveryRecord>() : await this.#options.state.readDeliveries(leads);
    for (const id of copyLeads) {
      if (!this.#leadEntriesRead.has(id) && asked.has(id))
        this.#leadEntriesRead.set(id, found.get(id) ?? entries.get(id));
    }
    const cached = [...copyLeads].flatMap((id) => {
      const entry = this.#leadEntriesRead.get(id);
      return entry === undefined ? [] : [[id, entry] as const];
    });
    return new Map([...cached, ...entries, ...found]);
  }

  /** The lead a collapsed copy's entry went with ({@link leadOfCollapsedCopy}), its marker read in `entries`. */
  #leadOfCopy(entry: DeliveryRecord, entries: ReadonlyMap<string, DeliveryRecord>): string | undefined {
    if (entry.collapsedInto === undefined) return undefined;
    return leadOfCollapsedCopy(entry, entries.get(deliveryId(storyMarkerKey(entry.audienceId, entry.collapsedInto))));
  }

  /**
   * What became of the lead a copy was recorded as collapsed into ({@link #leadOfCopy}):
   * - `lost`: it never reached the audience: its own entry is missing, or a digest release dropped
   *   it (a parked digest still owes it to the audience), or it was itself recorded as a collapsed
   *   copy, or this run led it again and did not send it; the copy is planned again and carries
   *   the story. Sharded publishing records copies once their lead is queued; when the lead's
   *   work item never publishes (dead-lettered, or given back with its dispatch) and the lead
   *   does not match again on the re-read (withdrawn by the provider, a rule edited), nothing else
   *   would ever send the story.
   * - `pending`: this run is sending it (in flight), or reads it again in this batch with no entry
   *   and will plan it: the copy stays collapsed, and is matched again if the lead is refused for
   *   good ({@link #copiesAwaiting}).
   * - `reached`: sent, queued in this run, or held.
   * Judged by the copy's own lead, not the one the story marker names now: an urgent copy that
   * took over from a held lead rewrote the marker, and the held lead still goes out with the digest.
   */
  #copyLeadFate(
    audienceId: string,
    lead: string,
    articleKey: string,
    leadEntries: ReadonlyMap<string, DeliveryRecord>,
    inBatch: (id: string) => boolean,
  ): 'reached' | 'pending' | 'lost' {
    if (lead === articleKey) return 'reached';
    const id = deliveryId({ articleKey: lead, audienceId });
    if (this.#leadsInFlight.has(id)) return 'pending';
    // Led again in this run and not sent (unrenderable, parked, or failed for now): the copy carries
    // the story now (its marker is written anew), and the lead, when a later run reads it again,
    // collapses into the copy.
    if (this.#failedLeads.has(id)) return 'lost';
    // Planned in this run (sent, held, collapsed itself, or rendered and not published yet, which
    // SNS may still refuse for good even when it does not lead a story now): its fate decides.
    if (this.#queued.has(id)) return 'pending';
    const entry = leadEntries.get(id);
    // A lead with an entry is not planned again when the batch reads it (it is delivered): the
    // entry decides. A lead recorded as a collapsed copy itself never carried the story: the copy
    // goes through the story's marker again, and collapses into the lead that did, if one did.
    if (entry !== undefined) return copyLeadEntryLost(entry) ? 'lost' : 'reached';
    return inBatch(id) ? 'pending' : 'lost';
  }

  /** `copy`, recorded as collapsed into the lead `id`, goes with that lead's fate ({@link #copiesAwaiting}). */
  #awaitLead(id: string, copy: AudienceMatch): void {
    const copies = this.#copiesAwaiting.get(id);
    if (copies === undefined) this.#copiesAwaiting.set(id, [copy]);
    else copies.push(copy);
  }

  /**
   * The lead `id` will never carry its story (refused for good, or unrenderable): it counts as a
   * lead that did not reach the audience for the rest of the run, and the old copies waiting on it
   * are matched again, judged lost on that read. Their first read counted them matched and
   * already delivered: taken back, so the re-read counts each once.
   */
  #replanAwaiting(id: string): void {
    this.#failedLeads.add(id);
    const copies = this.#copiesAwaiting.get(id);
    if (copies === undefined) return;
    this.#copiesAwaiting.delete(id);
    const { counts } = this.#options;
    for (const copy of copies) {
      const tally = this.#tally(copy.audienceId);
      tally.matched -= 1;
      tally.alreadyDelivered -= 1;
    }
    counts.notificationsMatched -= copies.length;
    counts.notificationsAlreadyDelivered -= copies.length;
    this.#pendingMatches.push(...copies);
  }

  /**
   * The lead an earlier run's story marker names, if the story reached the audience through it:
   * its ledger entry exists (sent, or held for a digest), or it is in this run. A marker is written
   * before its lead goes out, so a lead whose publish failed, and which no longer matches when the
   * next run reads it again (a rule edited meanwhile), has a marker and no entry: a copy collapsed
   * into it would be lost. Undefined then: the copy carries the story (its marker is written anew).
   */
  #leadOfMarker(
    match: AudienceMatch,
    audience: Audience,
    storyId: string,
    leadArticleKey: string,
    leadEntries: ReadonlyMap<string, DeliveryRecord>,
    batch: readonly AudienceMatch[],
  ): string | undefined {
    const id = deliveryId({ articleKey: leadArticleKey, audienceId: match.audienceId });
    const entry = leadEntries.get(id);
    if (entry !== undefined) this.#leadEntriesRead.set(id, entry);
    if (entry !== undefined && leadReached(entry)) {
      if (entry.heldFor !== undefined && entry.releasedAt === undefined) this.#heldLeads.add(id);
      return leadArticleKey;
    }
    if (!this.#failedLeads.has(id) && entry === undefined) {
      if (this.#queued.has(id)) return leadArticleKey;
      if (batch.some((other) => other.audienceId === match.audienceId && other.article.key === leadArticleKey)) {
        // The lead is read again in this batch and not planned yet: it may be held for quiet
        // hours or the budget, so an urgent copy carries the story rather than wait for it.
        return sendsDespiteHolds(match, audience) ? undefined : leadArticleKey;
      }
    }
    this.#options.log.warn("a story's lead never reached the audience; this copy carries the story", {
      audienceId: match.audienceId,
      storyId,
    });
    return undefined;
  }

  /**
   * Writes new story markers and waits for them, BEFORE their leads are published or held (a
   * crash after this can only collapse copies into a lead the next run still sends), then queues
   * the collapsed copies' ledger entries. A dry run writes nothing and counts what it would do.
   */
  async #recordCollapse(markers: readonly DeliveryRecord[], collapsed: readonly CollapsedCopy[]): Promise<void> {
    const { counts } = this.#options;
    if (this.#options.dryRun) {
      counts.notificationsWouldCollapse += collapsed.length;
      for (const { record } of collapsed) this.#options.onWouldCollapse?.(record.audienceId);
      return;
    }
    if (markers.length > 0) await this.#options.state.recordDelivered(markers);
    const now: DeliveryRecord[] = [];
    const dropped: CollapsedCopy[] = [];
    for (const copy of collapsed) {
      if (this.#failedLeads.has(copy.lead)) dropped.push(copy);
      else if (this.#leadsInFlight.has(copy.lead)) this.#leadsInFlight.get(copy.lead)?.copies.push(copy);
      else now.push(copy.record);
    }
    this.#replan(dropped);
    await this.#recordCollapsed(now);
  }

  /** Writes copies' ledger entries as collapsed, and counts them. */
  async #recordCollapsed(copies: readonly DeliveryRecord[]): Promise<void> {
    if (copies.length === 0) return;
    await this.#ledger.record(copies);
    for (const record of copies) this.#tally(record.audienceId).collapsed += 1;
    this.#options.counts.notificationsCollapsed += copies.length;
  }

  /** The lead `id` reached its audience (published, queued or held): its copies are collapsed. */
  async #settleLead(id: string): Promise<void> {
    this.#copiesAwaiting.delete(id);
    const flight = this.#leadsInFlight.get(id);
    if (flight === undefined) return;
    this.#leadsInFlight.delete(id);
    await this.#recordCollapsed(flight.copies.map((copy) => copy.record));
  }

  /**
   * The lead `id` did not reach its audience: copies collapsed into it are not recorded, and the
   * story has no lead in this run any more. Parked for good (`permanent`), the lead will not be
   * sent by a later run either, so its copies are planned again now and the first one carries the
   * story; a lead that failed for now waits for the next run, and its copies wait with it.
   */
  #failLead(id: string, permanent: boolean): void {
    if (permanent) this.#replanAwaiting(id);
    else this.#copiesAwaiting.delete(id);
    const flight = this.#leadsInFlight.get(id);
    if (flight === undefined) return;
    this.#leadsInFlight.delete(id);
    this.#failedLeads.add(id);
    this.#leads.delete(flight.story);
    if (permanent) this.#replan(flight.copies);
    else this.#defer(flight.copies);
  }

  /**
   * Copies whose lead will never be sent: matched again in this run, so that one of them leads.
   * Their first read counted them matched: taken back, so the re-read counts each once.
   */
  #replan(copies: readonly CollapsedCopy[]): void {
    for (const { record, match } of copies) {
      this.#queued.delete(deliveryId(record));
      this.#tally(record.audienceId).matched -= 1;
      this.#options.counts.notificationsMatched -= 1;
      this.#pendingMatches.push(match);
    }
  }

  /**
   * Copies of a story whose lead failed for now: left for the next run (unqueued, counted as
   * deferred, and the watermark stays before them), which reads them again with their lead.
   */
  #defer(copies: readonly CollapsedCopy[]): void {
    if (copies.length === 0) return;
    for (const { record } of copies) this.#queued.delete(deliveryId(record));
    this.#unpublished += copies.length;
    this.#options.counts.notificationsDeferred += copies.length;
    this.#options.log.warn('copies of a story whose lead was not sent wait for the next run', {
      count: copies.length,
      audiences: [...new Set(copies.map(({ record }) => record.audienceId))],
    });
  }

  /**
   * Renders the update notices the ledger does not hold yet (one read of their keys), at most one
   * per key even when several copies of a story changed in the same batch.
   */
  async #updateNotices(
    candidates: readonly UpdateCandidate[],
    refreshed: LedgerFactsUpdate[],
  ): Promise<OutboundMessage[]> {
    const wanted = new Map<string, UpdateCandidate>();
    for (const candidate of candidates) {
      const id = deliveryId(candidate.key);
      if (!this.#queued.has(id) && !wanted.has(id)) wanted.set(id, candidate);
    }
    if (wanted.size === 0) return [];
    const sent = await this.#options.state.findDelivered([...wanted.values()].map((candidate) => candidate.key));
    // Announced already (by an earlier run): the entries take the new facts, so the change is not
    // looked up again on every re-read, and a later change gets a notice of its own.
    for (const candidate of candidates) {
      if (sent.has(deliveryId(candidate.key))) refreshed.push(candidate.refresh);
    }
    const notices: OutboundMessage[] = [];
    const unrenderable: FailedMessage[] = [];
    for (const candidate of candidates) {
      const id = deliveryId(candidate.key);
      if (!sent.has(id) && wanted.has(id))
        this.#announces.set(id, [...(this.#announces.get(id) ?? []), candidate.refresh]);
    }
    for (const [id, { match, audience, change, key }] of wanted) {
      if (sent.has(id)) continue;
      this.#queued.add(id);
      try {
        notices.push(
          match.spike === undefined
            ? renderUpdateNotice(match, audience, change, key, this.#options.render)
            : renderSpikeUpdate(match, audience, change, key, this.#options.render),
        );
      } catch (error) {
        const failure = this.#unrenderable(match, audience, error, key);
        if (failure !== undefined) unrenderable.push(failure);
      }
    }
    if (unrenderable.length > 0) {
      await this.#park(unrenderable, 'parked update notices that could not be rendered; review them');
    }
    return notices;
  }

  /**
   * Counts and logs a match that could not be rendered, and returns it ready to park with the
   * best rendering there is (under `key` when given: an update notice), or undefined in a dry run.
   */
  #unrenderable(
    match: AudienceMatch,
    audience: Audience,
    error: unknown,
    key: DeliveryKey | undefined,
  ): FailedMessage | undefined {
    this.#options.counts.notificationsUnrenderable += 1;
    const reason = describe(error).slice(0, 1000);
    this.#options.log.error(
      'could not render a notification; parking it for review and `news-alerts replay --parked`',
      {
        audienceId: match.audienceId,
        articleKey: key?.articleKey ?? match.article.key,
        error: reason,
      },
    );
    if (this.#options.dryRun) return undefined;
    const parked = renderParkedNotification(match, audience, this.#options.render, this.#options.now());
    const code = error instanceof UnpublishableLinkError ? 'UnpublishableLink' : 'Unrenderable';
    return { message: key === undefined ? parked : { ...parked, key }, code, reason, permanent: true };
  }

  /**
   * Runs the planner over fresh matches at the current instant: returns what goes out now and
   * queues the rest as held notifications. Budgeted sends are reserved before they are returned.
   */
  async #plan(fresh: readonly FreshMatch[]): Promise<FreshMatch[]> {
    const now = this.#options.now();
    await this.#loadBudgets(fresh, now);
    const sends: FreshMatch[] = [];
    const budgeted: BudgetState[] = [];
    for (const entry of fresh) {
      const budget = this.#budgetFor(entry.audience, now);
      // A send that failed earlier in this run is planned again: the slot it kept is its own.
      budget?.kept.delete(deliveryId(entry.message.key));
      const used = budget === undefined ? 0 : budget.stored + budget.kept.size + budget.pending.length;
      const decision = planDelivery(entry.match, entry.audience, now, used);
      if (decision.action === 'hold') {
        this.#hold(entry, decision.reason, now);
      } else if (budget !== undefined && decision.budgetDate !== undefined) {
        if (budget.pending.length === 0) budgeted.push(budget);
        budget.pending.push({ fresh: entry, urgent: decision.urgent });
      } else {
        sends.push(entry);
      }
    }
    for (const budget of budgeted) {
      for (const entry of await this.#reserve(budget, now)) {
        this.#reserved.set(deliveryId(entry.message.key), dailyCountId(budget.key));
        sends.push(entry);
      }
    }
    return sends;
  }

  /** Reads the daily counts this batch needs and does not know yet (one BatchGetItem). */
  async #loadBudgets(fresh: readonly FreshMatch[], now: number): Promise<void> {
    const missing = new Map<string, { key: DailyCountKey; limit: number }>();
    for (const { audience } of fresh) {
      if (audience.dailyBudget === undefined) continue;
      const key = { audienceId: audience.audienceId, date: localDate(now, audience.timeZone) };
      const id = dailyCountId(key);
      if (!this.#budgets.has(id)) missing.set(id, { key, limit: audience.dailyBudget });
    }
    if (missing.size === 0) return;
    const counts = await this.#options.state.readDailyCounts([...missing.values()].map((entry) => entry.key));
    for (const [id, { key, limit }] of missing) {
      this.#budgets.set(id, { key, limit, stored: counts.get(id) ?? 0, pending: [], kept: new Set() });
    }
  }

  #budgetFor(audience: Audience, now: number): BudgetState | undefined {
    if (audience.dailyBudget === undefined) return undefined;
    return this.#budgets.get(
      dailyCountId({ audienceId: audience.audienceId, date: localDate(now, audience.timeZone) }),
    );
  }

  /**
   * Reserves a budget for the planned sends with a conditional write. If the count changed since
   * it was read (only possible without the run lease), the sends are planned again against the
   * current count: urgent ones still go, the others only while the budget lasts, the rest is held.
   */
  async #reserve(budget: BudgetState, now: number): Promise<FreshMatch[]> {
    for (let attempt = 1; ; attempt += 1) {
      const next = budget.stored + budget.pending.length;
      try {
        if (!this.#options.dryRun) await this.#options.state.updateDailyCount(budget.key, budget.stored, next);
        budget.stored = next;
        const reserved = budget.pending.map((entry) => entry.fresh);
        budget.pending = [];
        return reserved;
      } catch (error) {
        if (!(error instanceof DailyCountConflictError) || attempt >= maxBudgetAttempts) throw error;
        this.#options.log.warn('the daily alert count changed while it was reserved; planning again', {
          audienceId: budget.key.audienceId,
          date: budget.key.date,
          current: error.current,
        });
        budget.stored = error.current;
        const keep: BudgetState['pending'] = [];
        for (const entry of budget.pending) {
          if (entry.urgent || budget.stored + budget.kept.size + keep.length < budget.limit) keep.push(entry);
          else this.#hold(entry.fresh, 'budget', now);
        }
        budget.pending = keep;
      }
    }
  }

  /** Queues one match to be held (or reports it, in a dry run). */
  #hold(entry: FreshMatch, reason: HeldNotification['reason'], now: number): void {
    const { match, audience } = entry;
    // A digest entry shows its headline only: a spike's carries the figures.
    const held = toHeldNotification(
      match,
      reason,
      now,
      match.spike === undefined ? undefined : spikeDigestHeadline(match, audience, this.#options.render ?? {}),
    );
    this.#heldLeads.add(deliveryId(held.key));
    if (this.#options.dryRun) {
      this.#options.counts.notificationsWouldHold += 1;
      this.#options.onWouldHold?.(held);
      return;
    }
    this.#holds.push(held);
  }

  /** Writes the queued held notifications (with their ledger entries) and counts them. */
  async #writeHolds(): Promise<void> {
    if (this.#holds.length === 0) return;
    const holds = this.#holds;
    this.#holds = [];
    await this.#options.state.holdNotifications(holds);
    const { counts } = this.#options;
    for (const held of holds) {
      await this.#settleLead(deliveryId(held.key));
      this.#tally(held.key.audienceId).held += 1;
      counts.notificationsHeld += 1;
      if (held.reason === 'budget') counts.budgetOverflow += 1;
      else if (held.reason === 'quiet-hours') counts.heldForQuietHours += 1;
      else counts.heldForDigest += 1;
    }
  }

  /** Gives the budget of sends that did not go out back, so the next run can still send them now. */
  async #releaseReservations(failures: readonly FailedMessage[]): Promise<void> {
    const byBudget = new Map<string, string[]>();
    for (const { message } of failures) {
      const id = deliveryId(message.key);
      const budgetId = this.#reserved.get(id);
      if (budgetId === undefined) continue;
      this.#reserved.delete(id);
      byBudget.set(budgetId, [...(byBudget.get(budgetId) ?? []), id]);
    }
    for (const [budgetId, ids] of byBudget) {
      const count = ids.length;
      const budget = this.#budgets.get(budgetId);
      if (budget === undefined) continue;
      for (let attempt = 1; attempt <= maxBudgetAttempts; attempt += 1) {
        const next = Math.max(0, budget.stored - count);
        try {
          await this.#options.state.updateDailyCount(budget.key, budget.stored, next);
          for (const id of ids.slice(0, budget.stored - next)) budget.kept.add(id);
          budget.stored = next;
          break;
        } catch (error) {
          if (!(error instanceof DailyCountConflictError)) {
            // Keeping the reservation only makes the budget stricter today; never a lost alert.
            this.#options.log.warn('could not give back a daily budget reservation', {
              audienceId: budget.key.audienceId,
              date: budget.key.date,
              error: describe(error),
            });
            break;
          }
          budget.stored = error.current;
        }
      }
    }
  }

  #pretendToPublish(messages: readonly OutboundMessage[]): void {
    this.#options.counts.notificationsWouldPublish += messages.length;
    for (const message of messages) this.#options.onWouldPublish?.(message);
  }

  async #publish(messages: readonly OutboundMessage[]): Promise<void> {
    const { counts, publishSignal } = this.#options;
    const outcome = await this.#options.notifier.publish(messages, {
      signal: publishSignal,
      onPublished: async (batch) => {
        await this.#ledger.add(batch);
        for (const { message } of batch) await this.#settleLead(deliveryId(message.key));
        await this.#announced(batch.map(({ message }) => message));
        for (const { message } of batch) {
          if (isUpdateNotice(message)) {
            counts.updateNotices += 1;
            continue;
          }
          this.#tally(message.key.audienceId).published += 1;
          this.#reserved.delete(deliveryId(message.key));
          counts.notificationsPublished += 1;
        }
      },
    });
    await this.#notSent(
      outcome.failed,
      'SNS refused notifications for good; parked them for `news-alerts replay --parked`',
    );
  }

  /**
   * Sharded publishing: hands the messages to the publishers as work items. What SQS accepted is
   * handled for this pipeline (kept queued, so a repeated article is not queued twice); what it
   * did not is failed, deferred or parked exactly like a message SNS did not accept.
   */
  async #enqueue(
    messages: readonly OutboundMessage[],
    target: { readonly queue: WorkQueue; readonly dispatchId: string },
  ): Promise<void> {
    const { counts, publishSignal } = this.#options;
    const outcome = await target.queue.enqueue(target.dispatchId, messages, { signal: publishSignal });
    counts.workItemsQueued += outcome.items;
    counts.notificationsQueued += outcome.queued.length;
    // Not #announced here: the publisher may still park a notice (refused for good, retries
    // exhausted), and an entry moved on would keep the next run from offering it again. The next
    // re-read moves the entry on once the publisher's ledger entry of the notice is there.
    for (const message of outcome.queued) {
      await this.#settleLead(deliveryId(message.key));
      if (!isUpdateNotice(message)) this.#tally(message.key.audienceId).queued += 1;
      // The publisher's ledger entry settles the reservation; a message it parks keeps it (stricter, never lost).
      this.#reserved.delete(deliveryId(message.key));
    }
    await this.#notSent(
      outcome.failed,
      'notifications could not be queued for good; parked them for `news-alerts replay --parked`',
    );
  }

  /**
   * Gives the entries whose change an update notice among `messages` announced their new facts,
   * once the notice is published (a notice that fails leaves them, so it is tried again). Single
   * mode only: see #enqueue.
   */
  async #announced(messages: readonly OutboundMessage[]): Promise<void> {
    const refreshes: LedgerFactsUpdate[] = [];
    for (const message of messages) {
      if (!isUpdateNotice(message)) continue;
      const id = deliveryId(message.key);
      refreshes.push(...(this.#announces.get(id) ?? []));
      this.#announces.delete(id);
    }
    if (refreshes.length > 0) await this.#options.state.refreshLedgerFacts(refreshes);
  }

  /** Parks what can never be sent, and leaves the rest (failed, or deferred by the deadline) for the next run. */
  async #notSent(failed: readonly FailedMessage[], parkMessage: string): Promise<void> {
    const { counts, publishSignal, log } = this.#options;
    const permanent = failed.filter((failure) => failure.permanent);
    // Messages the deadline kept from being sent are deferred, not failed: the next run sends them.
    const deferred = publishSignal.aborted
      ? failed.filter((failure) => !failure.permanent && failure.code === 'Aborted')
      : [];
    const transient = failed.filter((failure) => !failure.permanent && !deferred.includes(failure));
    if (permanent.length > 0) await this.#park(permanent, parkMessage);
    for (const failure of failed) this.#failLead(deliveryId(failure.message.key), failure.permanent);
    for (const failure of [...transient, ...deferred]) this.#queued.delete(deliveryId(failure.message.key));
    if (this.#reserved.size > 0) await this.#releaseReservations([...transient, ...deferred]);
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

  /**
   * Keeps notifications SNS refused for good, or that could not be rendered, so fixing the
   * audience (or reviewing the article) and replaying loses nothing.
   */
  async #park(failures: readonly FailedMessage[], logMessage: string): Promise<void> {
    const failedAt = this.#options.now();
    await this.#options.state.recordUndeliverable(failures.map((failure) => undeliverableRecord(failure, failedAt)));
    for (const failure of failures) this.#tally(failure.message.key.audienceId).parked += 1;
    this.#options.counts.notificationsParked += failures.length;
    this.#options.log.error(logMessage, {
      count: failures.length,
      audiences: [...new Set(failures.map((failure) => failure.message.key.audienceId))],
      codes: [...new Set(failures.map((failure) => failure.code))],
    });
  }

  #tally(audienceId: string): AudienceTally {
    return audienceTally(this.#options.counts.audiences, audienceId);
  }
}

/** The tally of `audienceId` in a run's per-audience counts, made (all zero) on first use. */
export function audienceTally(audiences: Record<string, AudienceTally>, audienceId: string): AudienceTally {
  let tally = audiences[audienceId];
  if (!tally) {
    tally = { matched: 0, alreadyDelivered: 0, published: 0, failed: 0, parked: 0, held: 0, collapsed: 0, queued: 0 };
    audiences[audienceId] = tally;
  }
  return tally;
}

/** The key under which this run remembers an audience's lead of a story. */
const leadId = (audienceId: string, storyId: string): string => `${audienceId}|${storyId}`;

/**
 * Whether a spike alert's escalation can be announced now: the audience has the alert (published,
 * or held and since sent in a digest), and an alert for it would be sent at once now (not its
 * digest mode, nor its quiet hours unless the rule is urgent; notices use no daily budget).
 */
function spikeUpdateDue(match: AudienceMatch, audience: Audience, recorded: DeliveryRecord, now: number): boolean {
  const received = recorded.heldFor === undefined || recorded.releaseOutcome === 'sent';
  return received && planDelivery(match, audience, now, 0).action === 'send';
}

/** Update notices are keyed `update:…` (ports.ts `updateNoticeKey`); alerts by their article. */
const isUpdateNotice = (message: OutboundMessage): boolean => isUpdateNoticeKey(message.key.articleKey);

/** Kept under this name for the run's other modules; errors.ts owns it. */
export const describe = describeError;

/**
 * Whether a match goes out now whatever holds its audience's other alerts: urgent (past quiet
 * hours and the daily budget), and the audience not one that only gets digests.
 */
const sendsDespiteHolds = (match: AudienceMatch, audience: Audience): boolean =>
  audience.deliveryMode !== 'digest' && isUrgent(match, audience);

/**
 * Whether the lead an earlier run's story marker names reached the audience, from the lead's
 * ledger entry: it exists (sent, or held for a digest), and no release dropped or parked it.
 */
export const leadReached = (entry: DeliveryRecord | undefined): boolean =>
  entry !== undefined && entry.releaseOutcome !== 'dropped' && entry.releaseOutcome !== 'parked';

/**
 * Whether `match`, a copy of a story whose marker (written by an earlier run) names another lead,
 * collapses into it, as the run decides (`#leadOfMarker`): the lead reached the audience, and the
 * copy does not go out now past a lead still held for quiet hours or the budget. For what reads
 * the ledger without running the pipeline: `preview` and `rules explain`.
 */
export function collapsesIntoMarkedLead(
  match: AudienceMatch,
  audience: Audience,
  leadEntry: DeliveryRecord | undefined,
): boolean {
  if (!leadReached(leadEntry)) return false;
  const heldStill = leadEntry?.heldFor !== undefined && leadEntry.releasedAt === undefined;
  return !(heldStill && sendsDespiteHolds(match, audience));
}

/** `matches` with those `urgent` says first, each group in its order (stable). */
function urgentCopiesFirst(
  matches: readonly AudienceMatch[],
  urgent: (match: AudienceMatch) => boolean,
): readonly AudienceMatch[] {
  const first = matches.filter(urgent);
  if (first.length === 0 || first.length === matches.length) return matches;
  const firstSet = new Set(first);
  return [...first, ...matches.filter((match) => !firstSet.has(match))];
}

/** A copy collapsed into its story's lead (`lead`: the lead's delivery id), with its match. */
interface CollapsedCopy {
  readonly lead: string;
  readonly match: AudienceMatch;
  readonly record: DeliveryRecord;
}
