/**
 * Counted reading: articles the provider lists late are found from the provider's own totals,
 * within minutes of appearing, without reading the day again (DESIGN section 2, issue 29).
 *
 * An incremental run reads a newest-first day from page 1 down to just below the previous run's
 * articles. An article the provider indexes late is listed by its publication time, below that
 * point, so such a run never sees it; before counted reading only a full sweep (every six hours)
 * found it. Every numbered page also says how many articles the day holds (`totalCount`), and a
 * page's position tells how many of them are listed after each of its articles. So the runs keep,
 * per provider day, a bounded list of remembered articles, the *anchors*, each with the number of
 * articles listed after it that the runs have read (`older`, a lower bound). When the provider now
 * lists more articles after an anchor than that, the difference (its *deficit*) arrived late
 * below it; the deficit at consecutive anchors says which stretch of the listing holds them.
 *
 * - **Every run** reads page 1 down to the newest anchor (as incremental reading did), which tells
 *   the deficit below it for free. A deficit equal to what is known to lie beyond the watched
 *   window means nothing arrived: every watched stretch is clean as of now, without a request.
 * - **A recheck** finds the late arrivals: it bisects the anchors, reading one page around an
 *   anchor to learn its deficit, and reads the stretches whose deficit changed, so a few late
 *   articles among many pages cost a few pages each. A run rechecks when a watched stretch was
 *   last known clean `recheckMs` ago, or at once when one page covers all it watches.
 * - **Bounded:** anchors older than the late-arrival window once rechecked after it are dropped;
 *   a day is dropped once nothing on it can still arrive in time. At most {@link maxDayAnchors}
 *   per day, keys of at most {@link maxAnchorKeyLength} characters.
 * - **Safe by construction:** `older` only ever counts articles a run read, so a deficit is never
 *   smaller than what is unread; a recheck may read a stretch again for nothing, never skip one.
 *   A listing that shrinks (an anchor that vanished, a deficit that went down, pages that do not
 *   add up) is a disagreement: the caller then reads the day the old way, and counting stops for a
 *   while (functions/core/reading/plan.ts). The other reasons for a full sweep stay as they were.
 *
 * Pure: the caller (functions/core/alert-run.ts) reads the pages and delivers every article read;
 * this module only decides where to look and keeps the counts.
 */

import type { Article } from '../model.ts';
import { type CountedDay, type DayAnchor, maxAnchorKeyLength, maxDayAnchors } from '../ports.ts';

/** An article as a counted read saw it: with how many articles the provider listed after it. */
export interface CountedArticle {
  readonly article: Article;
  /** Articles listed after it (newest-first: the older ones) when its page was answered. */
  readonly older: number;
}

/** A read of one day from page 1 down, as {@link foldTopRead} takes it. */
export interface TopRead {
  readonly day: string;
  /** Every article read, key → how many articles were listed after it (the latest answer). */
  readonly seen: ReadonlyMap<string, CountedArticle>;
  /**
   * Where new anchors go: the first article read (the newest, so the next run's read passes it
   * after the new articles alone) and the last article of each page, in reading order.
   */
  readonly pageEnds: readonly CountedArticle[];
  /** The last article read (the deepest). */
  readonly deepest: CountedArticle | undefined;
  /** The read went on to the end of the listing (a short or empty last page). */
  readonly reachedEnd: boolean;
}

/** Unread articles listed after an anchor: `delta` of them after `anchors[index]`. */
export interface Deficit {
  readonly index: number;
  readonly delta: number;
}

/** The outcome of folding a read into a day's counts. */
export type Fold =
  | { readonly kind: 'counted'; readonly day: CountedDay; readonly deficit: Deficit }
  | { readonly kind: 'disagree'; readonly reason: string };

/** A day's counts (the name says that they include what lies beyond the watched window). */
export type CountedDayWithBeyond = CountedDay;

const usableAnchor = (seen: CountedArticle): boolean => seen.article.key.length <= maxAnchorKeyLength;

function anchorOf(seen: CountedArticle, older: number, cleanAt: number): DayAnchor {
  return { key: seen.article.key, at: seen.article.publishedAt, older, cleanAt };
}

/**
 * Folds a read from page 1 down into the day's counts.
 *
 * Without earlier counts the read must have gone to the end of the listing or below everything
 * still watched (`reachedEnd`, or the caller's establishing read): its page ends become the
 * anchors, every stretch clean now. With earlier counts the read must have passed the newest
 * anchor: the anchors it passed are measured, the deepest of them keeps its count and carries the
 * deficit below it, and the stretch above it is rebuilt from this read's page ends.
 */
export function foldTopRead(previous: CountedDayWithBeyond | undefined, read: TopRead, now: number): Fold {
  if (previous === undefined || previous.anchors.length === 0) return { kind: 'counted', ...freshDay(read, now) };
  const anchors = previous.anchors;
  let deepest = -1;
  for (let i = 0; i < anchors.length; i++) {
    if (!read.seen.has((anchors[i] as DayAnchor).key)) break;
    deepest = i;
  }
  if (deepest === -1) {
    return {
      kind: 'disagree',
      reason: `the newest remembered article of ${read.day} was not listed where it should be (removed, or listed out of order)`,
    };
  }
  const passed = anchors[deepest] as DayAnchor;
  const delta = (read.seen.get(passed.key) as CountedArticle).older - passed.older;
  if (delta < 0) {
    return {
      kind: 'disagree',
      reason: `${read.day} lists fewer articles after a remembered one than the runs read there (${-delta} fewer): articles were removed`,
    };
  }
  for (let i = 0; i < deepest; i++) {
    const anchor = anchors[i] as DayAnchor;
    const above = (read.seen.get(anchor.key) as CountedArticle).older - anchor.older;
    if (above < delta) {
      return {
        kind: 'disagree',
        reason: `${read.day} lists fewer articles after one remembered article than after an older one: the counts do not add up`,
      };
    }
  }
  // Above the passed anchor everything was read now: the page ends become the anchors there, with
  // their counts less the deficit still unread below (so `older` never counts what was not read).
  const top = newAnchors(
    read.pageEnds.filter((end) => end.older > (read.seen.get(passed.key) as CountedArticle).older),
    -delta,
    now,
  );
  // The passed anchor carries the deficit: thinning must keep it, and its place is found after.
  const kept = capped([...top, { ...passed, cleanAt: now }, ...anchors.slice(deepest + 1)], passed.key);
  const day: CountedDayWithBeyond = { ...previous, anchors: kept };
  return { kind: 'counted', day, deficit: { index: kept.findIndex((anchor) => anchor.key === passed.key), delta } };
}

/** Counts from a read that saw everything still watched (or the whole day). */
function freshDay(read: TopRead, now: number): { day: CountedDayWithBeyond; deficit: Deficit } {
  const ends = [...read.pageEnds];
  if (read.deepest !== undefined) ends.push(read.deepest);
  const anchors = capped(newAnchors(ends, 0, now));
  const day: CountedDayWithBeyond = read.reachedEnd
    ? { day: read.day, anchors, bottomCleanAt: now }
    : { day: read.day, anchors, beyond: 0 };
  return { day, deficit: { index: Math.max(0, anchors.length - 1), delta: 0 } };
}

/** Anchors from page ends, newest first, one per article, each count shifted by `shift`. */
function newAnchors(ends: readonly CountedArticle[], shift: number, now: number): DayAnchor[] {
  const byKey = new Map<string, CountedArticle>();
  for (const end of ends) if (usableAnchor(end)) byKey.set(end.article.key, end);
  return [...byKey.values()]
    .sort((a, b) => b.older - a.older)
    .filter((end, i, list) => i === 0 || end.older < (list[i - 1] as CountedArticle).older)
    .map((end) => anchorOf(end, Math.max(0, end.older + shift), now));
}

/**
 * At most {@link maxDayAnchors}: a day with more (a read of a very long stretch) keeps every other
 * anchor of its older half until it fits (never the last, nor the one named by `keep`); merged
 * stretches keep the older clean time.
 */
function capped(anchors: DayAnchor[], keep?: string, max = maxDayAnchors): DayAnchor[] {
  let list = anchors;
  while (list.length > max) {
    const half = Math.floor(list.length / 2);
    const thinned: DayAnchor[] = list.slice(0, half);
    for (let i = half; i < list.length; i++) {
      const anchor = list[i] as DayAnchor;
      if ((i - half) % 2 === 1 && i !== list.length - 1 && anchor.key !== keep) {
        // Dropped: the stretch below it merges into the one above it, clean only as of the older time.
        const next = list[i + 1] as DayAnchor;
        list[i + 1] = { ...next, cleanAt: Math.min(next.cleanAt, anchor.cleanAt) };
        continue;
      }
      thinned.push(anchor);
    }
    list = thinned;
  }
  return list;
}

/**
 * The day with at most `max` anchors (thinned as {@link capped} does): coarser stretches cost a
 * recheck more pages, never an article, so this is how the counts are made to fit their item.
 */
export function thinned(day: CountedDayWithBeyond, max: number): CountedDayWithBeyond {
  return day.anchors.length <= max ? day : { ...day, anchors: capped([...day.anchors], undefined, Math.max(2, max)) };
}

// --- What is still watched ----------------------------------------------------------------------

/** The settings counted reading needs. */
export interface CountedSettings {
  /** How late an article may be listed and still be delivered. */
  readonly lateArrivalMs: number;
  /** How long a watched stretch may go unchecked before a run rechecks it. */
  readonly recheckMs: number;
}

/**
 * Whether the stretch just newer than `anchors[index]` (index = anchors.length: the one after the
 * last anchor) can no longer receive an article in time: it was last clean after the newest
 * article it can hold was published plus the late-arrival window. `newest` is when the stretch
 * above the first anchor ends (now for today, the day's end for an earlier day).
 */
function settled(day: CountedDay, index: number, newest: number, lateArrivalMs: number): boolean {
  const { anchors } = day;
  if (index === anchors.length) {
    const last = anchors.at(-1);
    if (day.bottomCleanAt === undefined || last === undefined) return true;
    return day.bottomCleanAt >= last.at + lateArrivalMs;
  }
  const anchor = anchors[index] as DayAnchor;
  const upTo = index === 0 ? newest : (anchors[index - 1] as DayAnchor).at;
  return anchor.cleanAt >= upTo + lateArrivalMs;
}

/**
 * Drops what can no longer receive an article in time: the anchors below the deepest stretch
 * still watched (the first settled one stays, as the floor the counts are measured against).
 * Returns undefined when nothing of the day is watched any more (`dayEnd`: the day's last
 * instant; for today pass now or later and it is never dropped).
 */
export function prune(
  day: CountedDayWithBeyond,
  dayEnd: number,
  settings: Pick<CountedSettings, 'lateArrivalMs'>,
): CountedDayWithBeyond | undefined {
  const { anchors } = day;
  const isSettled = (index: number) => settled(day, index, dayEnd, settings.lateArrivalMs);
  if (anchors.length === 0) return undefined;
  let floor = anchors.length;
  while (floor > 0 && isSettled(floor)) floor -= 1;
  if (floor === anchors.length) return day;
  if (floor === 0 && isSettled(0)) return undefined;
  // The stretch just newer than anchors[floor] is the deepest still watched: it stays, with
  // anchors[floor] as the floor the counts are measured against; what lies below is settled.
  const kept = anchors.slice(0, floor + 1);
  const { bottomCleanAt, ...rest } = day;
  const sameFloor = floor + 1 === anchors.length && bottomCleanAt === undefined;
  return { ...rest, anchors: kept, beyond: sameFloor ? day.beyond : undefined };
}

/** Why a run rechecks a day now, or undefined when it need not. */
export function recheckReason(
  day: CountedDayWithBeyond,
  deficit: Deficit,
  now: number,
  settings: CountedSettings & { readonly dayEnd: number; readonly pageSize: number },
): string | undefined {
  const { anchors } = day;
  const last = anchors.length;
  const watched: number[] = [];
  for (let index = deficit.index + 1; index <= last; index++) {
    if (!settled(day, index, settings.dayEnd, settings.lateArrivalMs)) watched.push(index);
  }
  if (watched.length === 0) return undefined;
  // Scheduled runs start a few seconds early or late: a stretch checked one recheck period ago,
  // give or take that, is due now rather than a whole run later.
  const jitter = Math.min(60_000, settings.recheckMs / 10);
  const stale = watched.find((index) => now - cleanTime(day, index) >= settings.recheckMs - jitter);
  if (stale !== undefined)
    return `a watched stretch was last checked ${Math.round((now - cleanTime(day, stale)) / 60_000)} min ago`;
  const from = anchors[deficit.index] as DayAnchor;
  const floorOlder = day.bottomCleanAt === undefined ? (anchors.at(-1) as DayAnchor).older : -1;
  if (deficit.delta > 0 && from.older + deficit.delta - floorOlder <= settings.pageSize) {
    return 'one page covers everything still watched';
  }
  return undefined;
}

const cleanTime = (day: CountedDay, index: number): number =>
  index === day.anchors.length
    ? (day.bottomCleanAt ?? Number.POSITIVE_INFINITY)
    : (day.anchors[index] as DayAnchor).cleanAt;

/**
 * Marks every watched stretch below the deficit clean when the deficit is exactly what lies beyond
 * the watched window: nothing arrived. Returns the day unchanged otherwise.
 */
export function cleanWhenNothingArrived(
  day: CountedDayWithBeyond,
  deficit: Deficit,
  now: number,
): CountedDayWithBeyond {
  const beyond = day.bottomCleanAt === undefined ? day.beyond : 0;
  if (beyond === undefined || deficit.delta !== beyond) return day;
  return markClean(day, deficit.index + 1, day.anchors.length, now);
}

function markClean(day: CountedDayWithBeyond, from: number, to: number, now: number): CountedDayWithBeyond {
  const anchors = day.anchors.map((anchor, index) =>
    index >= from && index <= to ? { ...anchor, cleanAt: now } : anchor,
  );
  return {
    ...day,
    anchors,
    ...(day.bottomCleanAt !== undefined && to >= day.anchors.length ? { bottomCleanAt: now } : {}),
  };
}

// --- Rechecking ---------------------------------------------------------------------------------

/**
 * The articles listed with `older` counts in [from, to] (both included), at least, in listing
 * order (newest first), delivering every article it reads; the caller turns counts into pages and
 * throws when it cannot cover every count in the range. It may answer from pages read earlier in
 * the same recheck; `fresh` asks the provider again (what it lists may have moved since).
 */
export type CountedProbe = (
  from: number,
  to: number,
  options?: { readonly fresh?: boolean },
) => Promise<readonly CountedArticle[]>;

/** What a recheck did. */
export type Recheck =
  | {
      readonly kind: 'counted';
      readonly day: CountedDayWithBeyond;
      /** Late articles it accounted for (arrived below the read, within the watched window). */
      readonly found: number;
      /** Probe calls (each one page or more). */
      readonly probes: number;
    }
  | { readonly kind: 'disagree'; readonly reason: string };

/** A disagreement found while rechecking: the listing shrank or moved. */
class Disagreement extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'Disagreement';
  }
}

/** How far a probe looks around where an anchor should be for arrivals during the recheck. */
const drift = 8;

/**
 * Finds every late arrival below `deficit` down to the watched floor: bisects the anchors by their
 * deficits (one probe each) and reads the stretches whose deficit changed. Every stretch it covers
 * is clean as of `now` afterwards, and the counts of the anchors above the floor include what was
 * found. Articles arriving while it runs only raise deficits (read again next time, never lost).
 */
export async function recheck(
  day: CountedDayWithBeyond,
  deficit: Deficit,
  probe: CountedProbe,
  now: number,
): Promise<Recheck> {
  const anchors = day.anchors;
  const live = day.bottomCleanAt !== undefined;
  // The floor: the end of the listing (nothing after it) while the bottom is watched, or the last
  // anchor, whose deficit is measured (arrivals after it are too late to matter).
  const floor = live ? anchors.length : anchors.length - 1;
  const deltas = new Map<number, number>([[deficit.index, deficit.delta]]);
  let probes = 0;
  let found = 0;
  const olderOf = (index: number): number => (index === anchors.length ? -1 : (anchors[index] as DayAnchor).older);
  const olderNow = (index: number): number => olderOf(index) + (deltas.get(index) ?? 0);

  const locate = async (index: number, low: number, high: number): Promise<number> => {
    const anchor = anchors[index] as DayAnchor;
    let fewer = false;
    for (const [widen, fresh] of [
      [0, false],
      [0, true],
      [1, true],
      [4, true],
    ] as const) {
      const from = anchor.older + Math.max(0, low - widen * drift);
      const to = anchor.older + high + widen * drift;
      probes += 1;
      const got = await probe(from, to, { fresh });
      const hit = got.find((item) => item.article.key === anchor.key);
      if (hit === undefined) continue;
      const delta = hit.older - anchor.older;
      // Fewer than measured below it a moment ago: a page read before more arrived; ask again.
      if (delta < low) {
        fewer = true;
        continue;
      }
      return delta;
    }
    throw new Disagreement(
      fewer
        ? `${day.day}: fewer articles are listed after a remembered article than were read there`
        : `${day.day}: a remembered article is no longer listed where its counts put it`,
    );
  };

  /**
   * Reads everything listed between two anchors (below: the end of the listing when it is
   * `anchors.length`). Both ends must be seen and the stretch between them must hold as many
   * articles as the counts say (pages read earlier in the recheck may predate an arrival, so a
   * short stretch is read again from the provider): then it was read whole.
   */
  const readStretch = async (above: number, below: number, unread: number): Promise<void> => {
    const upper = anchors[above] as DayAnchor;
    const lower = below === anchors.length ? undefined : (anchors[below] as DayAnchor);
    const expected = olderNow(above) - olderNow(below) - 1;
    let short = false;
    for (const [widen, fresh] of [
      [0, false],
      [0, true],
      [1, true],
      [4, true],
    ] as const) {
      probes += 1;
      const from = lower === undefined ? 0 : Math.max(0, olderNow(below) - widen * drift);
      const got = await probe(from, olderNow(above) + widen * drift, { fresh });
      const top = got.find((item) => item.article.key === upper.key);
      const bottom = lower === undefined ? { older: -1 } : got.find((item) => item.article.key === lower.key);
      if (top === undefined || bottom === undefined || bottom.older >= top.older) continue;
      // More than counted: arrived while rechecking, and read here too (counted next time).
      if (top.older - bottom.older - 1 >= expected) {
        found += unread;
        return;
      }
      short = true;
    }
    throw new Disagreement(
      short
        ? `${day.day}: a stretch holds fewer articles than the runs read there`
        : `${day.day}: a remembered article is no longer listed where its counts put it`,
    );
  };

  const bisect = async (above: number, below: number): Promise<void> => {
    let high = deltas.get(above) as number;
    const low = deltas.get(below) as number;
    if (high < low) {
      // Arrived during the recheck, below both: the upper anchor has it unread too.
      high = low;
      deltas.set(above, low);
    }
    if (high === low) {
      for (let index = above + 1; index <= below; index++) deltas.set(index, low);
      return;
    }
    if (below === above + 1) {
      await readStretch(above, below, high - low);
      return;
    }
    const middle = (above + below) >> 1;
    deltas.set(middle, await locate(middle, low, high));
    await bisect(above, middle);
    await bisect(middle, below);
  };

  if (floor <= deficit.index) return { kind: 'counted', day, found: 0, probes: 0 };
  try {
    deltas.set(floor, live ? 0 : await locate(floor, 0, deficit.delta));
    await bisect(deficit.index, floor);
  } catch (error) {
    if (error instanceof Disagreement) return { kind: 'disagree', reason: error.message };
    throw error;
  }
  const atFloor = deltas.get(floor) as number;
  // What was unread below the deficit's anchor is read now, but for what lies below the floor:
  // every anchor down to the floor counts it (those above the deficit's anchor were counted less
  // that deficit when the read was folded).
  const atDeficit = deltas.get(deficit.index) as number;
  const updated = anchors.map((anchor, index) => {
    if (index > floor) return anchor;
    const delta = index <= deficit.index ? atDeficit : (deltas.get(index) ?? atFloor);
    return { ...anchor, older: anchor.older + delta - atFloor, cleanAt: index > deficit.index ? now : anchor.cleanAt };
  });
  return {
    kind: 'counted',
    day: {
      ...day,
      anchors: updated,
      ...(live ? { bottomCleanAt: now } : { beyond: atFloor }),
    },
    found,
    probes,
  };
}
