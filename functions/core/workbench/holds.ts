/**
 * "What is held for this audience, and when will it go out?": each held notification with its
 * reason and release time, planned from the audience's CURRENT settings by the run's own
 * `planHeldRelease` and `releaseDueAt` (delivery-plan.ts). Changing quiet hours, delivery mode,
 * digest times or the daily budget therefore shows at once here, and the next run releases what
 * the new settings no longer hold.
 */
import {
  byHeldAt,
  isQuietAt,
  isUrgent,
  localDate,
  planHeldRelease,
  quietFreeFrom,
  releaseDueAt,
} from '../delivery-plan.ts';
import type { Audience } from '../model.ts';
import type { DigestRelease, HeldNotification, HeldState, HoldReason, ReleaseCause } from '../ports.ts';

/** One held notification as ops read it. */
export interface HeldView {
  readonly articleKey: string;
  readonly title: string;
  readonly ruleIds: readonly string[];
  readonly reason: HoldReason;
  readonly heldAt: number;
  /**
   * When it goes out (epoch ms): `now` when the next run releases it, else the first instant the
   * current settings release it at (the first run after it sends it). Absent when `blocked`.
   */
  readonly releaseAt?: number | undefined;
  /**
   * `next-run` when the next run releases it; `scheduled` when it waits for `releaseAt`;
   * `blocked` when no run releases it until its audience is restored or fixed.
   */
  readonly when: 'next-run' | 'scheduled' | 'blocked';
  /** Why it goes out then: its hold ran its course (`due`), or the settings changed. */
  readonly cause?: ReleaseCause | undefined;
  readonly urgent: boolean;
}

/** An audience's holds and the digest releases a crash left unfinished. */
export interface AudienceHolds {
  readonly audienceId: string;
  /**
   * Set when no run releases these holds: the audience was deleted (`deleted`), is invalid
   * (`invalid`, the run skips it) or disabled (`disabled`, the run keeps its holds until it is
   * enabled), with the sentence that says why and what to do.
   */
  readonly blocked?: { readonly kind: 'deleted' | 'invalid' | 'disabled'; readonly reason: string } | undefined;
  readonly held: readonly HeldView[];
  /** Releases claimed but not finished: the next run finishes exactly these. */
  readonly unfinishedReleases: readonly { readonly releaseAt: number; readonly articles: number }[];
}

/**
 * The holds of one audience at `now`, oldest first. `usedToday` is the audience's immediate
 * alerts counted on its local date of `now` (for budget room; 0 when it has no budget).
 */
export function describeHolds(
  audience: Audience,
  items: readonly HeldNotification[],
  releases: readonly DigestRelease[],
  now: number,
  usedToday: number,
): AudienceHolds {
  let budgetLeft =
    audience.dailyBudget === undefined ? Number.POSITIVE_INFINITY : Math.max(0, audience.dailyBudget - usedToday);
  const today = localDate(now, audience.timeZone);
  const sorted = oldestFirst(items);
  const held = sorted.map((item): HeldView => {
    const urgent = audience.deliveryMode !== 'digest' && isUrgent(item.match, audience);
    const common = {
      articleKey: item.key.articleKey,
      title: item.match.article.title,
      ruleIds: item.ruleIds,
      reason: item.reason,
      heldAt: item.heldAt,
      urgent,
    };
    const release = heldReleaseOf(item, audience, now, budgetLeft);
    if (release.budgetDate === today) budgetLeft -= 1;
    return { ...common, releaseAt: release.releaseAt, when: release.when, cause: release.cause };
  });
  return {
    audienceId: audience.audienceId,
    held,
    unfinishedReleases: unfinished(releases),
  };
}

/**
 * When one held notification goes out, planned as the run plans it: at the next run (`now`) when
 * {@link planHeldRelease} releases it now, else at the first instant the current settings release
 * it, out of quiet hours unless it is urgent. `budgetDate` is set when it goes out on room left in
 * today's budget (the caller takes one off `budgetLeft`).
 */
export function heldReleaseOf(
  held: Pick<HeldNotification, 'heldAt' | 'reason' | 'match'>,
  audience: Audience,
  now: number,
  budgetLeft: number,
): {
  readonly releaseAt: number;
  readonly when: 'next-run' | 'scheduled';
  readonly cause?: ReleaseCause;
  readonly budgetDate?: string;
} {
  const release = planHeldRelease(held, audience, now, budgetLeft);
  if (release !== undefined) {
    return {
      releaseAt: now,
      when: 'next-run',
      cause: release.cause,
      ...(release.budgetDate === undefined ? {} : { budgetDate: release.budgetDate }),
    };
  }
  const urgent = audience.deliveryMode !== 'digest' && isUrgent(held.match, audience);
  let releaseAt = releaseDueAt({ heldAt: held.heldAt, reason: held.reason, urgent }, audience);
  if (releaseAt <= now) releaseAt = now;
  // Nothing goes out inside quiet hours (a due match waits for their end).
  if (!urgent && isQuietAt(releaseAt, audience)) releaseAt = quietFreeFrom(releaseAt, audience);
  return { releaseAt, when: 'scheduled' };
}

/** Held notifications oldest first, in the order the run releases them (delivery-plan.ts `byHeldAt`). */
const oldestFirst = (items: readonly HeldNotification[]): HeldNotification[] => [...items].sort(byHeldAt);

/** Digest releases a crash left unfinished, with how many articles each holds. */
const unfinished = (releases: readonly DigestRelease[]): AudienceHolds['unfinishedReleases'] =>
  releases.map((release) => ({
    releaseAt: release.releaseAt,
    articles: release.parts.reduce((total, part) => total + part.length, 0),
  }));

/**
 * The holds of an audience no run can plan for (deleted, or invalid): listed all the same, oldest
 * first, so they are never invisible while the ledger reports them held.
 */
export function describeBlockedHolds(
  audienceId: string,
  items: readonly HeldNotification[],
  releases: readonly DigestRelease[],
  blocked: NonNullable<AudienceHolds['blocked']>,
): AudienceHolds {
  const sorted = oldestFirst(items);
  return {
    audienceId,
    blocked,
    held: sorted.map((item) => ({
      articleKey: item.key.articleKey,
      title: item.match.article.title,
      ruleIds: item.ruleIds,
      reason: item.reason,
      heldAt: item.heldAt,
      when: 'blocked',
      // Urgency is the audience's to say (its urgent categories); without it, none is claimed.
      urgent: false,
    })),
    unfinishedReleases: unfinished(releases),
  };
}

/**
 * The article keys an audience still holds: its held items, and the articles of release claims not
 * finished yet. A ledger entry that says held for a key outside them was released by a release
 * from before the ledger recorded what became of released alerts (deploy.md, Upgrade).
 */
export function stillHeld(held: HeldState): Set<string> {
  return new Set([
    ...held.items.map((item) => item.key.articleKey),
    ...held.releases.flatMap((release) => release.parts.flat()),
  ]);
}
