/**
 * The release step of every alert run: sends the digests that are due. What an audience holds is
 * planned again at every run from its CURRENT settings (delivery-plan.ts `planHeldRelease`): a
 * held notification goes out at the first run those settings would not hold it (its digest time
 * came, it is outside the current quiet hours, the audience left digest mode, today's raised budget
 * has room for it). For each audience, one digest message lists everything that goes out
 * (numbered parts only when SNS's size limit demands it).
 *
 * Each release goes through the same steps, and a crash at any point is finished by the next run:
 *
 * 1. claim: the release (which held notifications go in which part) is written to the state table
 *    with the audience's `lastReleaseAt`, before anything is published. A later run that finds the
 *    claim sends exactly this release again, never a differently cut one;
 * 2. publish each part; as SNS accepts it, its digest id (audience + release instant + part) goes
 *    into the delivery ledger. A crash between those two is the same single accepted duplicate as
 *    for immediate alerts: the next run sends that part again;
 * 3. once every part is in the ledger (or parked because SNS refused it for good), the ledger
 *    entry of each released notification is marked with what became of it (sent in which digest
 *    and when, parked or dropped, and whether the settings changed), so the ledger stops saying
 *    "held"; then the held notifications are deleted, then the claim. A crash before that makes
 *    the next run find the claim, see every part in the ledger and only mark and delete.
 *
 * So nothing held is lost (it is deleted only after its digest is handled) and nothing appears in
 * two digests (a claim fixes the parts; claimed notifications are never claimed again).
 *
 * Held by the daily budget and released because today's budget was raised: each such
 * notification counts against today's budget, reserved with a conditional write just before the
 * claim. A crash between the two keeps the reservation without the release: the budget is only
 * stricter today (those notifications come with their digest), never a lost or repeated alert.
 *
 * Entries of a story say where else it ran ("also in N outlets"): the story records come from one
 * `stories.readStories` call per release step. The story index is an extra, never a dependency: no
 * index, or a read that fails, gives digests without those lines (logged as a warning), never a
 * failed release.
 */

import { type AudienceTally, audienceTally } from './delivery-pipeline.ts';
import { byHeldAt, earliestDueAt, type HeldRelease, isQuietAt, localDate, planHeldRelease } from './delivery-plan.ts';
import { type DigestRenderOptions, groupTotals, MAX_RELEASE_ITEMS, planDigest, renderDigestMessage } from './digest.ts';
import type { Audience } from './model.ts';
import {
  DailyCountConflictError,
  type DailyCountKey,
  type DeliveryPorts,
  type DigestRelease,
  dailyCountId,
  deliveryId,
  digestKey,
  type FailedMessage,
  type HeldNotification,
  type HeldState,
  type HoldingAudience,
  type HoldReason,
  type OutboundMessage,
  ReleaseClaimConflictError,
  type ReleasedNotification,
  type ReleaseOutcome,
  type StoryRecord,
  undeliverableRecord,
} from './ports.ts';
import type { RenderOptions } from './render.ts';

/** What the release step counted; the alert run's summary carries these fields. */
export interface DigestCounts {
  /** Digest messages SNS accepted (each part counts). */
  digestsSent: number;
  /** Held notifications whose release finished: each was in exactly one digest. */
  digestItemsReleased: number;
  /** Digest messages not published after retries; the next run sends them (also in notificationsFailed). */
  digestsFailed: number;
  /** Digest messages the deadline kept from being sent; the next run sends them. */
  digestsDeferred: number;
  /** Digest messages SNS refused for good, parked for `news-alerts replay`. */
  digestsParked: number;
  /** Audiences whose held notifications wait because the audience is disabled or invalid. */
  digestAudiencesWaiting: number;
  notificationsFailed: number;
  notificationsUnrenderable: number;
}

/** Zeroed digest counts (the two shared with DeliveryCounts come from emptyDeliveryCounts). */
export const emptyDigestCounts = (): Omit<DigestCounts, 'notificationsFailed' | 'notificationsUnrenderable'> => ({
  digestsSent: 0,
  digestItemsReleased: 0,
  digestsFailed: 0,
  digestsDeferred: 0,
  digestsParked: 0,
  digestAudiencesWaiting: 0,
});

/** What the release step works with: the run's adapters, clock, audiences, deadline and counts. */
export interface DigestReleaseOptions extends DeliveryPorts {
  readonly now: () => number;
  /** Every valid audience by id (disabled ones too: their held notifications wait). */
  readonly audiences: ReadonlyMap<string, Audience>;
  /** Aborting it stops publishing; what was not sent is deferred to the next run. */
  readonly publishSignal: AbortSignal;
  /**
   * With the run's per-audience counts (DeliveryCounts.audiences) when the release shares them: a
   * digest failed or parked counts for its audience too, as the totals count it.
   */
  readonly counts: DigestCounts & { audiences?: Record<string, AudienceTally> };
  readonly render?: RenderOptions;
  /** Audiences whose held notifications are read at once. Default 4. */
  readonly concurrency?: number;
  /**
   * Release only for these audiences (a replay of some audiences); the others are left to the
   * next run, without counting them as waiting. Default: every audience.
   */
  readonly onlyAudiences?: ReadonlySet<string>;
  /**
   * Daily budget slots this run's sends gave back when they failed, by daily count id
   * (delivery-pipeline.ts `budgetGivenBack`). Their retries in the next run use them, so they are
   * no room for held matches now: handing them out would send a later match first and leave the
   * earlier one to a digest.
   */
  readonly budgetKeptForRetries?: ReadonlyMap<string, number>;
}

/** One release this run works on: a new one, or one a previous run claimed and did not finish. */
interface ReleaseWork {
  readonly audience: Audience;
  readonly release: DigestRelease;
  readonly items: ReadonlyMap<string, HeldNotification>;
  /** Rendered parts of a new release (a resumed one is rendered again from its items). */
  readonly messages?: readonly OutboundMessage[];
  /** Parts (0-based) not handled yet. */
  readonly open: Set<number>;
  /** What this run did with each handled part (absent: found in the ledger, or nothing left to show). */
  readonly outcomes: Map<number, { readonly outcome: ReleaseOutcome; readonly at: number }>;
  /** Whether the claim is in the state table (false when claiming it failed). */
  claimed: boolean;
  /** A new release's daily budget reservation, made just before its claim (budget room releases). */
  readonly budget?: { readonly state: BudgetLeft; readonly count: number } | undefined;
}

interface AudienceWork {
  readonly entry: HoldingAudience;
  readonly audience: Audience;
  readonly held: HeldState;
}

/** What one audience releases this run: its unfinished releases, and what is due now. */
interface AudienceSelection extends AudienceWork {
  readonly unfinished: readonly DigestRelease[];
  readonly due: readonly { readonly item: HeldNotification; readonly release: HeldRelease }[];
}

/** An audience's daily budget today as this step read it: the count stored and the limit. */
interface BudgetLeft {
  readonly key: DailyCountKey;
  readonly limit: number;
  stored: number;
}

/** Oldest heldAt and the reasons of what an audience still holds; undefined when nothing. */
function holdingOf(items: readonly HeldNotification[]): Pick<HoldingAudience, 'oldestHeldAt' | 'reasons'> | undefined {
  if (items.length === 0) return undefined;
  const reasons = new Set<HoldReason>(items.map((item) => item.reason));
  return { oldestHeldAt: Math.min(...items.map((item) => item.heldAt)), reasons: [...reasons].sort() };
}

const sameHolding = (
  entry: HoldingAudience,
  holding: Pick<HoldingAudience, 'oldestHeldAt' | 'reasons'> | undefined,
): boolean =>
  holding === undefined
    ? entry.reasons.length === 0
    : entry.oldestHeldAt === holding.oldestHeldAt && [...entry.reasons].sort().join() === holding.reasons.join();

/** Runs `task` over `items` with at most `limit` in flight, keeping the order of results. */
async function mapLimit<T, R>(items: readonly T[], limit: number, task: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await task(items[index] as T);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}

/**
 * Sends every digest that is due at `now` (see the module comment). Throws when the state table
 * or the ledger cannot be read or written; a release left half done is finished by the next run.
 */
export async function releaseDueDigests(options: DigestReleaseOptions): Promise<void> {
  const { state, log, counts } = options;
  // Past the hard deadline nothing could be published anyway, and every read or claim would only
  // eat the margin the run needs to record itself and release the lease: the next run sends them.
  if (options.publishSignal.aborted) {
    log.info('time budget reached; due digests wait for the next run');
    return;
  }
  const now = options.now();
  const holding: { entry: HoldingAudience; audience: Audience }[] = [];
  const waiting: string[] = [];
  for (const entry of await state.listHoldingAudiences()) {
    if (entry.reasons.length === 0) continue;
    if (options.onlyAudiences !== undefined && !options.onlyAudiences.has(entry.audienceId)) continue;
    const audience = options.audiences.get(entry.audienceId);
    if (audience === undefined || !audience.enabled) {
      waiting.push(entry.audienceId);
      continue;
    }
    holding.push({ entry, audience });
  }
  counts.digestAudiencesWaiting += waiting.length;
  if (waiting.length > 0) {
    log.warn('held notifications wait for audiences that are disabled or not valid; enable or fix them', {
      count: waiting.length,
      audiences: waiting.slice(0, 20),
    });
  }
  // Budget room is not a clock: what a raised budget lets out is known from today's count.
  const budgets = await readBudgetsLeft(holding, now, options);
  const candidates = holding.filter(
    ({ entry, audience }) => earliestDueAt(entry, audience) <= now || budgetRoom(budgets.get(audience.audienceId)) > 0,
  );
  if (candidates.length === 0) return;

  const audiences: AudienceWork[] = await mapLimit(candidates, options.concurrency ?? 4, async (candidate) => ({
    ...candidate,
    held: await state.readHeld(candidate.audience.audienceId),
  }));
  const selections = audiences.map((work) => selectDue(work, now, budgets.get(work.audience.audienceId), options));
  const stories = await readStoriesOf(selections, options);
  const render: DigestRenderOptions = { ...options.render, stories };
  const works: ReleaseWork[] = [];
  for (const selection of selections) {
    works.push(...planReleases(selection, now, options, render, budgets.get(selection.audience.audienceId)));
  }

  for (const work of works.filter((candidate) => candidate.messages !== undefined)) {
    // A release claimed but not published is finished by a later run; one not claimed is simply
    // planned again. So once the deadline passes, stop claiming.
    if (options.publishSignal.aborted) break;
    if (!(await reserveBudget(work, options))) continue;
    try {
      await state.claimRelease(work.release);
      work.claimed = true;
    } catch (error) {
      if (!(error instanceof ReleaseClaimConflictError)) throw error;
      // Only a second writer (no lease) gets here; its claim is finished by a later run.
      log.warn('a digest release was claimed by someone else; leaving it to them', {
        audienceId: work.release.audienceId,
        releaseAt: new Date(work.release.releaseAt).toISOString(),
      });
    }
  }
  const active = works.filter((work) => work.claimed);
  await publishReleases(active, options, render);

  const finished = new Map<string, Set<string>>();
  for (const work of active) {
    if (work.open.size > 0) continue;
    await state.finishRelease(work.release, releasedNotifications(work, options.now()));
    const keys = finished.get(work.audience.audienceId) ?? new Set<string>();
    for (const part of work.release.parts) for (const key of part) keys.add(key);
    for (const key of work.release.dropped) keys.add(key);
    finished.set(work.audience.audienceId, keys);
    counts.digestItemsReleased += work.release.parts.reduce((sum, part) => sum + part.length, 0);
    const changed = work.release.settingsChanged?.length ?? 0;
    if (changed > 0) {
      log.info('released held notifications because the audience settings no longer hold them', {
        audienceId: work.release.audienceId,
        releaseAt: new Date(work.release.releaseAt).toISOString(),
        count: changed,
      });
    }
  }
  // Keep the index true to what is still held, so later runs read only audiences with due items.
  for (const { entry, audience, held } of audiences) {
    const gone = finished.get(audience.audienceId) ?? new Set<string>();
    const holding = holdingOf(held.items.filter((item) => !gone.has(item.key.articleKey)));
    if (!sameHolding(entry, holding)) await state.setHoldingAudience(audience.audienceId, holding);
  }
}

/** Notifications today's budget still allows (0 without a reading: nothing goes out on budget room). */
const budgetRoom = (budget: BudgetLeft | undefined): number =>
  budget === undefined ? 0 : Math.max(0, budget.limit - budget.stored);

/**
 * Today's daily count of every audience that could let budget-held notifications out on room
 * (holds some, not in digest mode, has a budget, not inside its quiet hours now), in one read.
 */
async function readBudgetsLeft(
  holding: readonly { entry: HoldingAudience; audience: Audience }[],
  now: number,
  options: DigestReleaseOptions,
): Promise<Map<string, BudgetLeft>> {
  const wanted = new Map<string, { key: DailyCountKey; limit: number }>();
  for (const { entry, audience } of holding) {
    if (!entry.reasons.includes('budget') || audience.deliveryMode === 'digest') continue;
    if (audience.dailyBudget === undefined || isQuietAt(now, audience)) continue;
    const key = { audienceId: audience.audienceId, date: localDate(now, audience.timeZone) };
    wanted.set(audience.audienceId, { key, limit: audience.dailyBudget });
  }
  const budgets = new Map<string, BudgetLeft>();
  if (wanted.size === 0) return budgets;
  const stored = await options.state.readDailyCounts([...wanted.values()].map(({ key }) => key));
  for (const [audienceId, { key, limit }] of wanted) {
    const kept = options.budgetKeptForRetries?.get(dailyCountId(key)) ?? 0;
    budgets.set(audienceId, { key, limit: Math.max(0, limit - kept), stored: stored.get(dailyCountId(key)) ?? 0 });
  }
  return budgets;
}

/**
 * Reserves the daily budget a new release's budget-room notifications use, with a conditional
 * write before the claim. False when the count changed since it was read (only possible without
 * the run lease): the release is left to the next run, which plans it against the new count.
 */
async function reserveBudget(work: ReleaseWork, options: DigestReleaseOptions): Promise<boolean> {
  if (work.budget === undefined) return true;
  const { state: budget, count } = work.budget;
  try {
    await options.state.updateDailyCount(budget.key, budget.stored, budget.stored + count);
    budget.stored += count;
    return true;
  } catch (error) {
    if (!(error instanceof DailyCountConflictError)) throw error;
    options.log.warn('the daily alert count changed while a release reserved it; the next run plans it again', {
      audienceId: budget.key.audienceId,
      date: budget.key.date,
      current: error.current,
    });
    budget.stored = error.current;
    return false;
  }
}

/** What the ledger entries of a finished release's notifications say happened to them. */
function releasedNotifications(work: ReleaseWork, now: number): ReleasedNotification[] {
  const { release } = work;
  const changed = new Set(release.settingsChanged ?? []);
  const cause = (articleKey: string) => (changed.has(articleKey) ? 'settings-changed' : 'due');
  const released: ReleasedNotification[] = [];
  release.parts.forEach((part, index) => {
    const outcome = work.outcomes.get(index);
    const releasedIn = digestKey(release, index + 1, release.parts.length).articleKey;
    for (const articleKey of part) {
      released.push({
        audienceId: release.audienceId,
        articleKey,
        releasedAt: outcome?.at ?? now,
        releasedIn,
        releaseOutcome: outcome?.outcome ?? 'sent',
        releaseCause: cause(articleKey),
      });
    }
  });
  for (const articleKey of release.dropped) {
    released.push({
      audienceId: release.audienceId,
      articleKey,
      releasedAt: now,
      releaseOutcome: 'dropped',
      releaseCause: cause(articleKey),
    });
  }
  return released;
}

/**
 * The story records of the entries this step may render (due now or in an unfinished release) that
 * name a story, in one read; empty without a story index or when the read fails (a digest never
 * fails because of the story index).
 */
async function readStoriesOf(
  selections: readonly AudienceSelection[],
  options: DigestReleaseOptions,
): Promise<ReadonlyMap<string, StoryRecord>> {
  const ids = new Set<string>();
  for (const { held, unfinished, due } of selections) {
    const claimed = new Set(unfinished.flatMap((release) => release.parts.flat()));
    const renderable = [
      ...held.items.filter((item) => claimed.has(item.key.articleKey)),
      ...due.map(({ item }) => item),
    ];
    for (const item of renderable) {
      if (item.match.storyId !== undefined) ids.add(item.match.storyId);
    }
  }
  if (ids.size === 0 || options.stories === undefined) return new Map();
  try {
    return await options.stories.readStories([...ids]);
  } catch (error) {
    options.log.warn('could not read the story index; digests go out without "also in" lines', {
      stories: ids.size,
      error: error instanceof Error ? `${error.name}: ${error.message}` : String(error),
    });
    return new Map();
  }
}

/**
 * What one audience sends this run: its unfinished releases, and the held notifications not in
 * one that its current settings let out now ({@link planHeldRelease}), oldest first (so today's
 * budget room goes to the oldest), at most {@link MAX_RELEASE_ITEMS}.
 */
function selectDue(
  work: AudienceWork,
  now: number,
  budget: BudgetLeft | undefined,
  options: DigestReleaseOptions,
): AudienceSelection {
  const { audience, held } = work;
  const claimed = new Set<string>();
  for (const release of held.releases) {
    for (const part of release.parts) for (const key of part) claimed.add(key);
    for (const key of release.dropped) claimed.add(key);
  }
  let room = audience.dailyBudget === undefined ? Number.POSITIVE_INFINITY : budgetRoom(budget);
  const due: { item: HeldNotification; release: HeldRelease }[] = [];
  let more = 0;
  for (const item of [...held.items].sort(byHeldAt)) {
    if (claimed.has(item.key.articleKey)) continue;
    const release = planHeldRelease(item, audience, now, room);
    if (release === undefined) continue;
    if (due.length >= MAX_RELEASE_ITEMS) {
      more += 1;
      continue;
    }
    if (release.budgetDate !== undefined) room -= 1;
    due.push({ item, release });
  }
  if (more > 0) {
    options.log.warn('more held notifications are due than one digest takes; the rest follow in the next run', {
      audienceId: audience.audienceId,
      due: due.length + more,
      released: MAX_RELEASE_ITEMS,
    });
  }
  return { ...work, unfinished: held.releases, due };
}

/** The releases of one audience this run: unfinished ones first, then one new release of what is due. */
function planReleases(
  selection: AudienceSelection,
  now: number,
  options: DigestReleaseOptions,
  render: DigestRenderOptions,
  budget: BudgetLeft | undefined,
): ReleaseWork[] {
  const { audience, held, entry, due } = selection;
  const items = new Map(held.items.map((item) => [item.key.articleKey, item]));
  const works: ReleaseWork[] = [];
  let lastReleaseAt = entry.lastReleaseAt ?? Number.NEGATIVE_INFINITY;
  for (const release of [...selection.unfinished].sort((a, b) => a.releaseAt - b.releaseAt)) {
    lastReleaseAt = Math.max(lastReleaseAt, release.releaseAt);
    works.push({
      audience,
      release,
      items,
      open: new Set(release.parts.map((_, index) => index)),
      outcomes: new Map(),
      claimed: true,
    });
  }
  if (due.length === 0) return works;
  // The latest due instant names the release (the 08:00 digest, or now when settings changed),
  // but never repeats an earlier id.
  const latestDue = Math.max(...due.map(({ release }) => release.dueAt));
  const releaseAt = Math.max(Math.min(now, latestDue), lastReleaseAt + 1);
  const plan = planDigest(
    due.map(({ item }) => item),
    audience,
    releaseAt,
    render,
  );
  if (plan.dropped.length > 0) {
    options.counts.notificationsUnrenderable += plan.dropped.length;
    options.log.error('held notifications could not be rendered into a digest; dropped them', {
      audienceId: audience.audienceId,
      articleKeys: plan.dropped.slice(0, 20).map((item) => item.key.articleKey),
    });
  }
  const settingsChanged = due
    .filter(({ release }) => release.cause === 'settings-changed')
    .map(({ item }) => item.key.articleKey);
  const onBudget = due.filter(({ release }) => release.budgetDate !== undefined).length;
  works.push({
    audience,
    release: {
      audienceId: audience.audienceId,
      releaseAt,
      claimedAt: now,
      parts: plan.parts.map((part) => part.map((item) => item.key.articleKey)),
      dropped: plan.dropped.map((item) => item.key.articleKey),
      ...(settingsChanged.length === 0 ? {} : { settingsChanged }),
    },
    items,
    messages: plan.messages,
    open: new Set(plan.parts.map((_, index) => index)),
    outcomes: new Map(),
    claimed: false,
    ...(budget === undefined || onBudget === 0 ? {} : { budget: { state: budget, count: onBudget } }),
  });
  return works;
}

/** Renders part `index` of a release again from the held notifications that still exist. */
function renderPart(work: ReleaseWork, index: number, render: DigestRenderOptions): OutboundMessage | undefined {
  const { release, items, audience } = work;
  const present = (keys: readonly string[]) =>
    keys.map((key) => items.get(key)).filter((item): item is HeldNotification => item !== undefined);
  const part = present(release.parts[index] ?? []);
  if (part.length === 0) return undefined;
  const all = release.parts.flatMap((keys) => present(keys));
  const firstIndex = 1 + release.parts.slice(0, index).reduce((sum, keys) => sum + present(keys).length, 0);
  return renderDigestMessage(
    part,
    audience,
    {
      release,
      part: index + 1,
      parts: release.parts.length,
      total: all.length,
      firstIndex,
      groupTotals: groupTotals(all, audience, render),
    },
    render,
  );
}

/**
 * Publishes every part that is not in the ledger yet, writes each accepted one to the ledger at
 * once, parks what SNS refuses for good, and marks the handled parts of each release.
 */
async function publishReleases(
  works: readonly ReleaseWork[],
  options: DigestReleaseOptions,
  render: DigestRenderOptions,
): Promise<void> {
  const { state, counts, log } = options;
  const keys = works.flatMap((work) =>
    work.release.parts.map((_, index) => digestKey(work.release, index + 1, work.release.parts.length)),
  );
  const delivered = keys.length === 0 ? new Set<string>() : await state.findDelivered(keys);
  const owners = new Map<string, { work: ReleaseWork; index: number }>();
  const messages: OutboundMessage[] = [];
  for (const work of works) {
    for (const index of [...work.open]) {
      const key = digestKey(work.release, index + 1, work.release.parts.length);
      const message = delivered.has(deliveryId(key))
        ? undefined
        : (work.messages?.[index] ?? renderPart(work, index, render));
      if (message === undefined) {
        // In the ledger already (a run that crashed after publishing it), or nothing left to show.
        work.open.delete(index);
        continue;
      }
      owners.set(deliveryId(message.key), { work, index });
      messages.push(message);
    }
  }
  if (messages.length === 0) return;
  const handled = (message: OutboundMessage, outcome: ReleaseOutcome, at: number) => {
    const owner = owners.get(deliveryId(message.key));
    owner?.work.open.delete(owner.index);
    owner?.work.outcomes.set(owner.index, { outcome, at });
  };
  const outcome = await options.notifier.publish(messages, {
    signal: options.publishSignal,
    onPublished: async (batch) => {
      // Written at once, not buffered: this is the one window in which a crash repeats a digest.
      const deliveredAt = options.now();
      await state.recordDelivered(
        batch.map(({ message, messageId }) => ({ ...message.key, deliveredAt, messageId, ruleIds: message.ruleIds })),
      );
      for (const { message } of batch) handled(message, 'sent', deliveredAt);
      counts.digestsSent += batch.length;
    },
  });
  const permanent = outcome.failed.filter((failure) => failure.permanent);
  if (permanent.length > 0) {
    const parkedAt = await park(permanent, options);
    for (const { message } of permanent) handled(message, 'parked', parkedAt);
  }
  const deferred = options.publishSignal.aborted
    ? outcome.failed.filter((failure) => !failure.permanent && failure.code === 'Aborted')
    : [];
  const transient = outcome.failed.filter((failure) => !failure.permanent && !deferred.includes(failure));
  counts.digestsDeferred += deferred.length;
  counts.digestsFailed += transient.length;
  counts.notificationsFailed += transient.length;
  if (counts.audiences !== undefined) {
    for (const { message } of transient) audienceTally(counts.audiences, message.key.audienceId).failed += 1;
  }
  if (transient.length > 0) {
    log.error('digests were not published; the next run sends them', {
      count: transient.length,
      codes: [...new Set(transient.map((failure) => failure.code))],
    });
  }
}

/**
 * Keeps digests SNS refused for good for `news-alerts replay`; their held notifications are done.
 * Returns when they were parked.
 */
async function park(failures: readonly FailedMessage[], options: DigestReleaseOptions): Promise<number> {
  const failedAt = options.now();
  await options.state.recordUndeliverable(failures.map((failure) => undeliverableRecord(failure, failedAt)));
  options.counts.digestsParked += failures.length;
  const { audiences } = options.counts;
  if (audiences !== undefined) {
    for (const { message } of failures) audienceTally(audiences, message.key.audienceId).parked += 1;
  }
  options.log.error('SNS refused digests for good; parked them for `news-alerts replay --parked`', {
    count: failures.length,
    audiences: [...new Set(failures.map((failure) => failure.message.key.audienceId))],
    codes: [...new Set(failures.map((failure) => failure.code))],
  });
  return failedAt;
}
