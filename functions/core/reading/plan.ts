/**
 * Incremental reading: read what is new, not the whole provider day again (DESIGN section 2).
 *
 * The provider only takes whole dates, so a naive run reads the whole day on every run: over a day
 * of N articles and R runs that is about N·R/2 article reads. This module decides, per run, how
 * little it may read without losing an article. The no-loss guarantee is unchanged; what it costs
 * is that an article the provider indexes more than the overlap late waits for the next full sweep.
 *
 * - **The order is learned, never assumed.** A full read of a day that lists at least
 *   {@link minOrderEvidence} steps in one direction and none against it teaches newest-first or
 *   oldest-first; anything else is `unknown`. Every page a run reads is checked again
 *   ({@link OrderCheck}); one article out of order and the day is read to the end, and the
 *   learned order is dropped until a full read teaches it again.
 * - **Newest-first:** a run reads page by page and stops once a verified page ends with an article
 *   older than `watermark - overlap`: every later page only holds older articles, which earlier
 *   runs read. Articles inserted in front while reading only push older ones back (repeats,
 *   dropped by de-duplication), so nothing is skipped.
 * - **Oldest-first:** a run starts at the page (or cursor) where the last run's read of the day
 *   ended and must find one of that page's articles again on its first page. That overlap proves
 *   that everything before the position was read; without it (pages shifted too far, the cursor
 *   expired, the page size changed) the day is read from page 1.
 * - **Full sweeps** read every page of today, and the earlier days of the window back to the
 *   previous sweep's start minus the late-arrival window (a verified newest-first read of such a
 *   day stops there: what is older was read by the sweeps of its own day, and is handled), so an
 *   article indexed up to LATE_ARRIVAL_MINUTES late is still delivered, at the latest by the next
 *   sweep. Without a verified order, a sweep reads every page of every day of its window. A run sweeps when the period is up, on the first run of a
 *   provider day (the day before is then read to its end), after a run that did not complete,
 *   when the watermark was moved by anyone else, and whenever the order is not known.
 */
import { providerDate } from '../calendar.ts';
import { type CountedDay, countedBackstopMs, type ProviderOrder, type ReadingState, type Watermark } from '../ports.ts';

/** Steps in one direction (distinct timestamps) a full read must show before its order is trusted. */
export const minOrderEvidence = 10;

/** What one run reads. */
export type ReadPlan =
  | {
      readonly mode: 'sweep';
      readonly reason: string;
      /** The order the run expects (it is verified on every page either way). */
      readonly order: ProviderOrder;
      /** Articles published before this were handled by earlier runs (the run's cutoff). */
      readonly from: number;
      /**
       * Counted reading (counted-days.ts): the sweep reads page by page in order, so the days it
       * reads newest-first can be counted from here on.
       */
      readonly counted: boolean;
    }
  | {
      readonly mode: 'incremental';
      readonly order: 'newest-first' | 'oldest-first';
      readonly from: number;
      /** The run may stop reading a day once a verified page ends before this instant. */
      readonly stopBefore: number;
      /** Counted reading: late arrivals are found by the provider's totals, not by periodic sweeps. */
      readonly counted: boolean;
    };

/** The settings {@link planRead} needs (a subset of AlertRunSettings). */
export interface ReadSettings {
  readonly providerTimeZone: string;
  readonly lateArrivalMs: number;
  readonly fullSweepMs: number;
  readonly incrementalOverlapMs: number;
  /**
   * Counted reading: how long a watched stretch of a day may go unchecked for late arrivals; 0
   * switches counted reading off (late arrivals then wait for a sweep).
   */
  readonly lateRecheckMs?: number | undefined;
}

/** After the provider's counts disagreed, how long runs read without counting before trying again. */
export const countingPauseMs = 6 * 60 * 60 * 1000;

/** Longest a sweep looks back before the watermark, whatever the last sweep was. */
const maxSweepReachMs = 2 * 24 * 60 * 60 * 1000;

/**
 * Where a full sweep starts reading: back to where the last sweep started, minus the late-arrival
 * window (an article indexed up to that late since then is read now), and at least back to the
 * incremental `cutoff`. Bounded, so a sweep long ago cannot make a run read weeks.
 */
const sweepFrom = (cutoff: number, lastSweepAt: number | undefined, watermarkAt: number, lateArrivalMs: number) =>
  lastSweepAt === undefined
    ? cutoff
    : Math.min(cutoff, Math.max(lastSweepAt, watermarkAt - maxSweepReachMs) - lateArrivalMs);

/**
 * The earliest publication time a scheduled run can still read from where the runs stand now
 * (`watermarkAt`, the reading state): the oldest `from` {@link planRead} can give, a sweep's or an
 * incremental run's, with watched days counted whether or not counting is paused. An article
 * published before it is never read again by a scheduled run (later runs only read later), and
 * only `news-alerts replay` sends it; `news-alerts rules explain` says so.
 */
export function earliestScheduledRead(
  reading: ReadingState | undefined,
  watermarkAt: number,
  settings: Pick<ReadSettings, 'lateArrivalMs'>,
): number {
  const watchedSince = oldestClean(reading?.counted?.days ?? []);
  const cutoff = Math.min(watermarkAt, watchedSince ?? Number.POSITIVE_INFINITY) - settings.lateArrivalMs;
  return sweepFrom(cutoff, reading?.lastSweepAt, watermarkAt, settings.lateArrivalMs);
}

/**
 * Decides how this run reads: a full sweep (and why) or incremental. `watermarkAt` is where the
 * run starts (the watermark, or now minus the initial lookback on the very first run).
 */
export function planRead(input: {
  readonly reading: ReadingState | undefined;
  readonly watermark: Watermark | undefined;
  readonly watermarkAt: number;
  readonly now: number;
  readonly settings: ReadSettings;
  /** The source can serve one page by number and size (NewsSource.page), so counting is possible. */
  readonly countable?: boolean | undefined;
  /**
   * Some audience asks for update notices (`updates: notify`): counted reading finds articles
   * listed late, not articles revised in place, so the periodic sweep stays for those.
   */
  readonly updatesWanted?: boolean | undefined;
}): ReadPlan {
  const { reading, watermark, watermarkAt, now, settings } = input;
  const order = reading?.order ?? 'unknown';
  const paused = reading?.counted?.off;
  const counting =
    input.countable === true &&
    (settings.lateRecheckMs ?? 0) > 0 &&
    (paused === undefined || now - paused.since >= countingPauseMs);
  // What a watched stretch may still hold arrived after it was last clean, at most the late-arrival
  // window late: a counted run matches back to there, not only to watermark - window.
  const watchedSince = counting ? oldestClean(reading?.counted?.days ?? []) : undefined;
  const cutoff = Math.min(watermarkAt, watchedSince ?? Number.POSITIVE_INFINITY) - settings.lateArrivalMs;
  const sweep = (reason: string): ReadPlan => ({
    mode: 'sweep',
    reason,
    order,
    from: sweepFrom(cutoff, reading?.lastSweepAt, watermarkAt, settings.lateArrivalMs),
    counted: counting && order !== 'oldest-first',
  });
  if (settings.fullSweepMs === 0) return sweep('FULL_SWEEP_MINUTES is 0: every run reads every page');
  if (reading === undefined) return sweep('no reading state yet (first run, or the item was lost)');
  if (order === 'unknown') return sweep("the provider's order is not known (yet)");
  if (reading.runStatus !== 'completed') return sweep(`the previous run ended ${reading.runStatus}`);
  if (reading.watermarkVersion !== watermark?.version) {
    return sweep(
      'the watermark was moved since the last run (a run that did not finish, or news-alerts watermark set)',
    );
  }
  const { lastSweepAt } = reading;
  if (lastSweepAt === undefined) return sweep('no full sweep yet');
  const incremental = (counted: boolean): ReadPlan => ({
    mode: 'incremental',
    order: order === 'oldest-first' ? 'oldest-first' : 'newest-first',
    from: cutoff,
    stopBefore: Math.max(cutoff, watermarkAt - settings.incrementalOverlapMs),
    counted,
  });
  if (counting && order === 'newest-first') {
    // Late arrivals are found by the counts of every watched day, so neither the sweep period nor
    // a new provider day calls for a sweep; counting starts with one sweep read in order.
    if (reading.counted === undefined || reading.counted.off !== undefined) {
      return sweep('counted reading starts: every page of the window is read once, in order');
    }
    // Revisions keep an article's place, so counts never see them: audiences that want update
    // notices still get the periodic sweep that re-reads what was revised. And an article that
    // leaves a stretch (removed, or moved by a corrected time) where another arrives late leaves
    // the counts as they were: a provider seen doing the first keeps the sweep for a while.
    const disagreedAt = reading.counted.disagreedAt;
    const backstop =
      input.updatesWanted === true
        ? 'an audience wants update notices'
        : disagreedAt !== undefined && now - disagreedAt < countedBackstopMs
          ? `the provider's counts disagreed ${Math.round((now - disagreedAt) / 3_600_000)} h ago`
          : undefined;
    if (backstop !== undefined && now - lastSweepAt >= settings.fullSweepMs) {
      return sweep(`the last full sweep started ${Math.round((now - lastSweepAt) / 60_000)} min ago (${backstop})`);
    }
    return incremental(true);
  }
  if (now - lastSweepAt >= settings.fullSweepMs) {
    return sweep(`the last full sweep started ${Math.round((now - lastSweepAt) / 60_000)} min ago`);
  }
  const today = providerDate(now, settings.providerTimeZone);
  if (providerDate(lastSweepAt, settings.providerTimeZone) !== today) {
    return sweep(`first run of provider day ${today}: the day before is read to its end`);
  }
  return incremental(false);
}

/** The earliest time a watched stretch of any counted day was last known read. */
function oldestClean(days: readonly CountedDay[]): number | undefined {
  let oldest: number | undefined;
  for (const day of days) {
    for (const anchor of day.anchors) oldest = Math.min(oldest ?? anchor.cleanAt, anchor.cleanAt);
    if (day.bottomCleanAt !== undefined) oldest = Math.min(oldest ?? day.bottomCleanAt, day.bottomCleanAt);
  }
  return oldest;
}

/**
 * Checks the order of the articles of one read as they come (publication times, in response
 * order; ties fit either order) and, after a full read, says which order it showed.
 */
export class OrderCheck {
  #last: number | undefined;
  #ascending = 0;
  #descending = 0;

  add(publishedAt: number): void {
    if (this.#last !== undefined) {
      if (publishedAt > this.#last) this.#ascending += 1;
      else if (publishedAt < this.#last) this.#descending += 1;
    }
    this.#last = publishedAt;
  }

  /** Whether everything added so far fits `order`. */
  holds(order: 'newest-first' | 'oldest-first'): boolean {
    return order === 'newest-first' ? this.#ascending === 0 : this.#descending === 0;
  }

  /** The order a complete read showed, or undefined when it had too few steps to tell. */
  learned(): ProviderOrder | undefined {
    if (this.#ascending > 0 && this.#descending > 0) return 'unknown';
    if (this.#descending >= minOrderEvidence) return 'newest-first';
    if (this.#ascending >= minOrderEvidence) return 'oldest-first';
    return undefined;
  }
}

/** What a run saw of the order on one day it read. */
export interface DayObservation {
  /** Read from its first page to its end (not stopped early, not resumed). */
  readonly full: boolean;
  /** What the day showed: an order, too little to tell (undefined), or `unknown` (both directions). */
  readonly learned: ProviderOrder | undefined;
  /** An article broke the order the run expected. */
  readonly broke: boolean;
}

/** The order to keep for the next run, from what this run saw on each day. */
export function nextOrder(previous: ProviderOrder, days: readonly DayObservation[]): ProviderOrder {
  const learned = new Set(days.filter((day) => day.full && day.learned !== undefined).map((day) => day.learned));
  if (learned.size > 1) return 'unknown';
  const [only] = learned;
  if (only !== undefined) return only;
  return days.some((day) => day.broke) ? 'unknown' : previous;
}
