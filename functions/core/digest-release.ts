/**
 * The release step of every alert run: sends the digests that are due. For each audience with
 * held notifications whose release is due (its next digest time, or the end of quiet hours after
 * the notification was held, at or before now, from the audience's CURRENT settings), one digest
 * message lists them all (numbered parts only when SNS's size limit demands it).
 *
 * Each release goes through the same steps, and a crash at any point is finished by the next run:
 *
 * 1. claim: the release (which held notifications go in which part) is written to the state table
 *    with the audience's `lastReleaseAt`, before anything is published. A later run that finds the
 *    claim sends exactly this release again, never a differently cut one;
 * 2. publish each part; as SNS accepts it, its digest id (audience + release instant + part) goes
 *    into the delivery ledger. A crash between those two is the same single accepted duplicate as
 *    for immediate alerts: the next run sends that part again;
 * 3. once every part is in the ledger (or parked because SNS refused it for good), the held
 *    notifications are deleted, then the claim. A crash before that makes the next run find the
 *    claim, see every part in the ledger and only delete.
 *
 * So nothing held is lost (it is deleted only after its digest is handled) and nothing appears in
 * two digests (a claim fixes the parts; claimed notifications are never claimed again).
 *
 * Entries of a story say where else it ran ("also in N outlets"): the story records come from one
 * `stories.readStories` call per release step. The story index is an extra, never a dependency: no
 * index, or a read that fails, gives digests without those lines (logged as a warning), never a
 * failed release.
 */
import { earliestDueAt, releaseDueAt } from './delivery-plan.ts';
import { type DigestRenderOptions, groupTotals, MAX_RELEASE_ITEMS, planDigest, renderDigestMessage } from './digest.ts';
import type { Audience } from './model.ts';
import {
  type DeliveryPorts,
  type DigestRelease,
  deliveryId,
  digestKey,
  type FailedMessage,
  type HeldNotification,
  type HeldState,
  type HoldingAudience,
  type HoldReason,
  type OutboundMessage,
  ReleaseClaimConflictError,
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
  readonly counts: DigestCounts;
  readonly render?: RenderOptions;
  /** Audiences whose held notifications are read at once. Default 4. */
  readonly concurrency?: number;
  /**
   * Release only for these audiences (a replay of some audiences); the others are left to the
   * next run, without counting them as waiting. Default: every audience.
   */
  readonly onlyAudiences?: ReadonlySet<string>;
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
  /** Whether the claim is in the state table (false when claiming it failed). */
  claimed: boolean;
}

interface AudienceWork {
  readonly entry: HoldingAudience;
  readonly audience: Audience;
  readonly held: HeldState;
}

const byHeldAt = (a: HeldNotification, b: HeldNotification) =>
  a.heldAt - b.heldAt || (a.key.articleKey < b.key.articleKey ? -1 : a.key.articleKey > b.key.articleKey ? 1 : 0);

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
  const candidates: { entry: HoldingAudience; audience: Audience }[] = [];
  const waiting: string[] = [];
  for (const entry of await state.listHoldingAudiences()) {
    if (entry.reasons.length === 0) continue;
    if (options.onlyAudiences !== undefined && !options.onlyAudiences.has(entry.audienceId)) continue;
    const audience = options.audiences.get(entry.audienceId);
    if (audience === undefined || !audience.enabled) {
      waiting.push(entry.audienceId);
      continue;
    }
    if (earliestDueAt(entry, audience) <= now) candidates.push({ entry, audience });
  }
  counts.digestAudiencesWaiting += waiting.length;
  if (waiting.length > 0) {
    log.warn('held notifications wait for audiences that are disabled or not valid; enable or fix them', {
      count: waiting.length,
      audiences: waiting.slice(0, 20),
    });
  }
  if (candidates.length === 0) return;

  const audiences: AudienceWork[] = await mapLimit(candidates, options.concurrency ?? 4, async (candidate) => ({
    ...candidate,
    held: await state.readHeld(candidate.audience.audienceId),
  }));
  const stories = await readStoriesOf(audiences, now, options);
  const render: DigestRenderOptions = { ...options.render, stories };
  const works: ReleaseWork[] = [];
  for (const work of audiences) works.push(...planReleases(work, now, options, render));

  for (const work of works.filter((candidate) => candidate.messages !== undefined)) {
    // A release claimed but not published is finished by a later run; one not claimed is simply
    // planned again. So once the deadline passes, stop claiming.
    if (options.publishSignal.aborted) break;
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
    await state.finishRelease(work.release);
    const keys = finished.get(work.audience.audienceId) ?? new Set<string>();
    for (const part of work.release.parts) for (const key of part) keys.add(key);
    for (const key of work.release.dropped) keys.add(key);
    finished.set(work.audience.audienceId, keys);
    counts.digestItemsReleased += work.release.parts.reduce((sum, part) => sum + part.length, 0);
  }
  // Keep the index true to what is still held, so later runs read only audiences with due items.
  for (const { entry, audience, held } of audiences) {
    const gone = finished.get(audience.audienceId) ?? new Set<string>();
    const holding = holdingOf(held.items.filter((item) => !gone.has(item.key.articleKey)));
    if (!sameHolding(entry, holding)) await state.setHoldingAudience(audience.audienceId, holding);
  }
}

/**
 * The story records of the entries this step may render (due or in a claimed release) that name a
 * story, in one read; empty without a story
 * index or when the read fails (a digest never fails because of the story index).
 */
async function readStoriesOf(
  audiences: readonly AudienceWork[],
  now: number,
  options: DigestReleaseOptions,
): Promise<ReadonlyMap<string, StoryRecord>> {
  const ids = new Set<string>();
  for (const { held, audience } of audiences) {
    // Only what this step can render: items of claimed releases and items due now.
    const claimed = new Set(held.releases.flatMap((release) => release.parts.flat()));
    for (const item of held.items) {
      const { storyId } = item.match;
      if (storyId === undefined || ids.has(storyId)) continue;
      if (claimed.has(item.key.articleKey) || releaseDueAt(item, audience) <= now) ids.add(storyId);
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

/** The releases of one audience this run: unfinished ones first, then one new release of what is due. */
function planReleases(
  work: AudienceWork,
  now: number,
  options: DigestReleaseOptions,
  render: DigestRenderOptions,
): ReleaseWork[] {
  const { audience, held, entry } = work;
  const items = new Map(held.items.map((item) => [item.key.articleKey, item]));
  const claimed = new Set<string>();
  const works: ReleaseWork[] = [];
  let lastReleaseAt = entry.lastReleaseAt ?? Number.NEGATIVE_INFINITY;
  for (const release of [...held.releases].sort((a, b) => a.releaseAt - b.releaseAt)) {
    for (const part of release.parts) for (const key of part) claimed.add(key);
    for (const key of release.dropped) claimed.add(key);
    lastReleaseAt = Math.max(lastReleaseAt, release.releaseAt);
    works.push({
      audience,
      release,
      items,
      open: new Set(release.parts.map((_, index) => index)),
      claimed: true,
    });
  }
  const due = held.items
    .filter((item) => !claimed.has(item.key.articleKey))
    .map((item) => ({ item, dueAt: releaseDueAt(item, audience) }))
    .filter(({ dueAt }) => dueAt <= now)
    .sort((a, b) => byHeldAt(a.item, b.item));
  if (due.length > MAX_RELEASE_ITEMS) {
    options.log.warn('more held notifications are due than one digest takes; the rest follow in the next run', {
      audienceId: audience.audienceId,
      due: due.length,
      released: MAX_RELEASE_ITEMS,
    });
  }
  const taken = due.slice(0, MAX_RELEASE_ITEMS);
  if (taken.length === 0) return works;
  // The latest due instant names the release (the 08:00 digest), but never repeats an earlier id.
  const latestDue = Math.max(...taken.map(({ dueAt }) => dueAt));
  const releaseAt = Math.max(Math.min(now, latestDue), lastReleaseAt + 1);
  const plan = planDigest(
    taken.map(({ item }) => item),
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
  works.push({
    audience,
    release: {
      audienceId: audience.audienceId,
      releaseAt,
      claimedAt: now,
      parts: plan.parts.map((part) => part.map((item) => item.key.articleKey)),
      dropped: plan.dropped.map((item) => item.key.articleKey),
    },
    items,
    messages: plan.messages,
    open: new Set(plan.parts.map((_, index) => index)),
    claimed: false,
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
  const handled = (message: OutboundMessage) => {
    const owner = owners.get(deliveryId(message.key));
    owner?.work.open.delete(owner.index);
  };
  const outcome = await options.notifier.publish(messages, {
    signal: options.publishSignal,
    onPublished: async (batch) => {
      // Written at once, not buffered: this is the one window in which a crash repeats a digest.
      const deliveredAt = options.now();
      await state.recordDelivered(
        batch.map(({ message, messageId }) => ({ ...message.key, deliveredAt, messageId, ruleIds: message.ruleIds })),
      );
      for (const { message } of batch) handled(message);
      counts.digestsSent += batch.length;
    },
  });
  const permanent = outcome.failed.filter((failure) => failure.permanent);
  if (permanent.length > 0) {
    await park(permanent, options);
    for (const { message } of permanent) handled(message);
  }
  const deferred = options.publishSignal.aborted
    ? outcome.failed.filter((failure) => !failure.permanent && failure.code === 'Aborted')
    : [];
  const transient = outcome.failed.filter((failure) => !failure.permanent && !deferred.includes(failure));
  counts.digestsDeferred += deferred.length;
  counts.digestsFailed += transient.length;
  counts.notificationsFailed += transient.length;
  if (transient.length > 0) {
    log.error('digests were not published; the next run sends them', {
      count: transient.length,
      codes: [...new Set(transient.map((failure) => failure.code))],
    });
  }
}

/** Keeps digests SNS refused for good for `news-alerts replay`; their held notifications are done. */
async function park(failures: readonly FailedMessage[], options: DigestReleaseOptions): Promise<void> {
  const failedAt = options.now();
  await options.state.recordUndeliverable(failures.map((failure) => undeliverableRecord(failure, failedAt)));
  options.counts.digestsParked += failures.length;
  options.log.error('SNS refused digests for good; parked them for `news-alerts replay`', {
    count: failures.length,
    audiences: [...new Set(failures.map((failure) => failure.message.key.audienceId))],
    codes: [...new Set(failures.map((failure) => failure.code))],
  });
}
