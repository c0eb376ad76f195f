/**
 * Counted reading within one alert run: which days it counts, what each day's read tells the
 * counts, and the rechecks that find late arrivals (the algorithm is counted-days.ts; the run
 * itself, functions/core/alert-run.ts, reads, matches and delivers).
 *
 * The run hands every page it reads of a counted day to a {@link DayTally}; once the day's read is
 * done, {@link CountedRun.finishDay} folds it into the counts, rechecks when due (reading pages
 * through `NewsSource.page` and delivering every article they hold through the run's callback)
 * and keeps the result for the next run. A day whose counts disagree with what the provider lists
 * comes back as `disagreed`: the run then reads that day whole, and counting pauses
 * ({@link countingPauseMs}) with the reason in the reading state.
 */

import { isRefusedPageNumber } from '../errors.ts';
import type { Article } from '../model.ts';
import {
  type ArticlePage,
  type CountedDay,
  type CountedReading,
  defaultPageSize,
  type Log,
  type NewsSource,
} from '../ports.ts';
import {
  type CountedArticle,
  type CountedDayWithBeyond,
  type CountedSettings,
  cleanWhenNothingArrived,
  foldTopRead,
  prune,
  recheck,
  recheckReason,
  thinned,
} from './counted-days.ts';

/** What one read of a counted day saw, page by page (in reading order). */
export class DayTally {
  readonly seen = new Map<string, CountedArticle>();
  readonly pageEnds: CountedArticle[] = [];
  deepest: CountedArticle | undefined;
  /** Why this read cannot be counted (pages without totals or positions), if it cannot. */
  uncountable: string | undefined;
  /** The provider's last reported total for the day. */
  total: number | undefined;
  /** Whether every page showed the same total (a read of one unchanging listing). */
  #totals = new Set<number>();

  constructor(
    readonly day: string,
    /** Pages were read one after another in listing order (not a concurrent window). */
    readonly inOrder: boolean,
    /**
     * An anchor every this many places of the listing (and at each page's end): a recheck's probe
     * page then holds several anchors, so one request measures several deficits (four a page
     * measured 2.95× the floor on the simulated day, one a page 3.07×).
     */
    readonly anchorEvery = 25,
  ) {}

  /** Notes a page of the read (call it for every page, readable or not, in order): anchors go at its places. */
  observe(page: ArticlePage): void {
    if (this.uncountable !== undefined) return;
    const { positions, totalCount } = page;
    if (totalCount === undefined || positions === undefined || positions.length !== page.articles.length) {
      this.uncountable =
        'the provider reports no total (or the source pages by cursor), so late arrivals cannot be counted';
      return;
    }
    this.total = totalCount;
    this.#totals.add(totalCount);
    let last: CountedArticle | undefined;
    page.articles.forEach((article, i) => {
      const position = positions[i] as number;
      const counted = { article, older: totalCount - 1 - position };
      this.seen.set(article.key, counted);
      // The newest article read is an anchor too: the next run passes it after the new ones alone.
      if ((this.pageEnds.length === 0 && last === undefined) || position % this.anchorEvery === this.anchorEvery - 1) {
        this.pageEnds.push(counted);
      }
      last = counted;
    });
    if (last !== undefined) {
      if (this.pageEnds.at(-1) !== last) this.pageEnds.push(last);
      this.deepest = last;
    }
  }

  /** Whether the read saw one consistent listing it can count from. */
  get countable(): boolean {
    return this.uncountable === undefined && (this.inOrder || this.#totals.size <= 1);
  }
}

/** How a counted run reads one day. */
export type CountedDayRead =
  /** Counts exist: read from page 1 until below `stopBefore` and past the newest anchor. */
  | { readonly kind: 'counted'; readonly newestAnchorAt: number }
  /** No counts for the day yet: read it whole, in order, and count it from there. */
  | { readonly kind: 'establish' };

/**
 * What finishing a day's read did. A recheck cut by the time budget or a provider failure throws
 * (the day is then not done, and its counts stay as the run found them).
 */
export interface FinishedDay {
  /** The counts disagreed with the provider: the caller reads the day whole. */
  readonly disagreed?: string | undefined;
  /** Why a recheck ran, when one did. */
  readonly rechecked?: string | undefined;
}

/** Delivers articles read by a recheck (matches them and hands them to the pipeline). */
export type Deliver = (articles: readonly Article[]) => Promise<void>;

/** Counted reading's figures for one run (in the run record's `reading.late`). */
export interface CountedStats {
  /** Days counted (read with counts this run). */
  days: number;
  /** Rechecks run and the pages they read. */
  rechecks: number;
  recheckPages: number;
  /** Late articles the rechecks accounted for. */
  found: number;
}

/** One run's counted reading. */
export class CountedRun {
  readonly #source: NewsSource & Required<Pick<NewsSource, 'page'>>;
  readonly #settings: CountedSettings;
  readonly #log: Log;
  readonly #now: () => number;
  readonly #startedAt: number;
  readonly #dayEnd: (day: string) => number;
  readonly #today: string;
  /** Counts by day as the run found them, and as it leaves them. */
  readonly #before = new Map<string, CountedDayWithBeyond>();
  readonly #after = new Map<string, CountedDayWithBeyond | undefined>();
  #lastRecheckAt: number | undefined;
  #off: CountedReading['off'];
  #disagreedAt: number | undefined;
  readonly stats: CountedStats = { days: 0, rechecks: 0, recheckPages: 0, found: 0 };

  constructor(options: {
    readonly source: NewsSource & Required<Pick<NewsSource, 'page'>>;
    readonly previous: CountedReading | undefined;
    readonly settings: CountedSettings;
    readonly log: Log;
    readonly now: () => number;
    /**
     * When the run started: what a read finds is stamped as clean as of then (everything listed
     * by the run's start is read by it), so a recheck period is counted in whole runs, not in the
     * seconds a run takes.
     */
    readonly startedAt: number;
    /** The provider date that is today, and the last instant of a provider date. */
    readonly today: string;
    readonly dayEnd: (day: string) => number;
  }) {
    this.#source = options.source;
    this.#settings = options.settings;
    this.#log = options.log;
    this.#now = options.now;
    this.#startedAt = options.startedAt;
    this.#today = options.today;
    this.#dayEnd = options.dayEnd;
    for (const day of options.previous?.off === undefined ? (options.previous?.days ?? []) : []) {
      this.#before.set(day.day, day);
    }
    this.#lastRecheckAt = options.previous?.lastRecheckAt;
    // The pause ends; that the provider disagreed is remembered (functions/core/reading/plan.ts).
    this.#disagreedAt = options.previous?.off?.since ?? options.previous?.disagreedAt;
  }

  /** Earlier days still watched for late arrivals: the run reads them too. */
  watchedDays(): string[] {
    return [...this.#before.keys()].filter((day) => day < this.#today).sort();
  }

  /** How to read `day`. */
  howToRead(day: string): CountedDayRead {
    const anchors = this.#before.get(day)?.anchors;
    const newest = anchors?.[0];
    return newest === undefined ? { kind: 'establish' } : { kind: 'counted', newestAnchorAt: newest.at };
  }

  /**
   * Folds a completed read of `day` into its counts and rechecks when due. `establishing`: the read
   * went to the end of the day (or below everything still watched), so it starts the counts afresh.
   */
  async finishDay(
    tally: DayTally,
    options: { readonly deliver: Deliver; readonly signal: AbortSignal; readonly reachedEnd: boolean },
  ): Promise<FinishedDay> {
    const { day } = tally;
    if (!tally.countable) {
      this.#stop(tally.uncountable ?? `the total of ${day} changed while its pages were read out of order`);
      this.#after.set(day, undefined);
      return {};
    }
    this.stats.days += 1;
    const now = this.#startedAt;
    const previous = options.reachedEnd ? undefined : this.#before.get(day);
    const fold = foldTopRead(
      previous,
      { day, seen: tally.seen, pageEnds: tally.pageEnds, deepest: tally.deepest, reachedEnd: options.reachedEnd },
      now,
    );
    if (fold.kind === 'disagree') return this.#disagree(day, fold.reason);
    let counts = cleanWhenNothingArrived(fold.day, fold.deficit, now);
    const dayEnd = this.#dayEnd(day);
    const settings = {
      ...this.#settings,
      dayEnd: day === this.#today ? Number.POSITIVE_INFINITY : dayEnd,
      pageSize: this.#source.pageSize ?? defaultPageSize,
    };
    const reason = recheckReason(counts, fold.deficit, now, settings);
    if (reason !== undefined) {
      this.stats.rechecks += 1;
      const probe = this.#probe(day, tally.total ?? 0, options);
      let outcome: Awaited<ReturnType<typeof recheck>>;
      try {
        outcome = await recheck(counts, fold.deficit, probe.read, now);
      } catch (error) {
        if (!(error instanceof ProbeProblem)) throw error;
        return this.#disagree(day, error.message);
      } finally {
        this.stats.recheckPages += probe.pages();
      }
      if (outcome.kind === 'disagree') return this.#disagree(day, outcome.reason);
      counts = outcome.day;
      this.stats.found += outcome.found;
      this.#lastRecheckAt = now;
      if (outcome.found > 0) {
        this.#log.info('found articles the provider listed late', { day, found: outcome.found, reason });
      }
    }
    this.#after.set(day, prune(counts, settings.dayEnd, this.#settings));
    return reason === undefined ? {} : { rechecked: reason };
  }

  /** The counts to keep for the next run. */
  state(): CountedReading {
    const days = new Map(this.#before);
    for (const [day, counts] of this.#after) {
      if (counts === undefined) days.delete(day);
      else days.set(day, counts);
    }
    // A day not read this run keeps its counts; one that nothing watches any more is dropped.
    const kept: CountedDay[] = [];
    for (const counts of [...days.values()].sort((a, b) => (a.day < b.day ? -1 : 1))) {
      const pruned = prune(
        counts,
        counts.day === this.#today ? Number.POSITIVE_INFINITY : this.#dayEnd(counts.day),
        this.#settings,
      );
      if (pruned !== undefined) kept.push(pruned);
    }
    return {
      days: this.#off === undefined ? fitted(kept) : [],
      ...(this.#lastRecheckAt === undefined ? {} : { lastRecheckAt: this.#lastRecheckAt }),
      ...(this.#off === undefined ? {} : { off: this.#off }),
      ...(this.#disagreedAt === undefined ? {} : { disagreedAt: this.#disagreedAt }),
    };
  }

  #disagree(day: string, reason: string): FinishedDay {
    this.#after.set(day, undefined);
    this.#stop(reason);
    return { disagreed: reason };
  }

  /** Pauses counting (functions/core/reading/plan.ts reads without it until the pause ends). */
  #stop(reason: string): void {
    if (this.#off !== undefined) return;
    this.#off = { reason: reason.length > 500 ? `${reason.slice(0, 499)}…` : reason, since: this.#now() };
    this.#disagreedAt = this.#off.since;
    this.#log.warn(
      "counted reading paused: the provider's counts cannot be followed; late articles wait for full sweeps until it resumes",
      {
        reason,
      },
    );
  }

  /**
   * The recheck's window onto the day: one page (or a few) that holds the articles listed with
   * `older` counts in [from, to], found from the latest total. Arrivals on top between requests
   * shift positions, so a page that missed part of the range is followed by one more request.
   */
  #probe(
    day: string,
    total: number,
    options: { readonly deliver: Deliver; readonly signal: AbortSignal },
  ): {
    read: (from: number, to: number, read?: { readonly fresh?: boolean }) => Promise<CountedArticle[]>;
    pages: () => number;
  } {
    const size = this.#source.pageSize ?? defaultPageSize;
    let latestTotal = total;
    let pages = 0;
    const range = { from: day, to: day };
    // Everything this recheck has read, by count: a stretch the bisection already saw on a probe
    // page is not asked for again (the caller checks that the counts still agree, and asks for
    // `fresh` pages when they do not).
    const byOlder = new Map<number, CountedArticle>();
    const covered = new Set<number>();
    const fetch = async (first: number, last: number): Promise<void> => {
      for (const request of pageRequests(first, last, size)) {
        pages += 1;
        let page: ArticlePage;
        try {
          page = await this.#source.page(range, { ...request, signal: options.signal });
        } catch (error) {
          // A listing that shrank puts a probe past its end, and a provider may refuse such a page
          // number: a disagreement (the day is read whole, which tells an outage from an end).
          if (!isRefusedPageNumber(error)) throw error;
          throw new ProbeProblem(`${day}: the provider refused page ${request.page} (HTTP ${error.status})`);
        }
        if (page.unreadable !== undefined)
          throw new ProbeProblem(`${day}: a page could not be read (${page.unreadable})`);
        const { totalCount, positions } = page;
        if (totalCount === undefined || positions === undefined) {
          throw new ProbeProblem(`${day}: a page came without its total or positions`);
        }
        const expected = Math.max(0, Math.min(request.size, totalCount - (request.page - 1) * request.size));
        if (page.articles.length + page.skipped.length !== expected) {
          throw new ProbeProblem(
            `${day}: asked for ${request.size} articles from page ${request.page}, the provider listed ${page.articles.length + page.skipped.length} of ${totalCount} (it does not page as asked)`,
          );
        }
        latestTotal = totalCount;
        await options.deliver(page.articles);
        page.articles.forEach((article, i) => {
          const older = totalCount - 1 - (positions[i] as number);
          byOlder.set(older, { article, older });
          covered.add(older);
        });
        for (const item of page.skipped) covered.add(totalCount - 1 - ((request.page - 1) * request.size + item.index));
      }
    };
    const read = async (
      from: number,
      to: number,
      how: { readonly fresh?: boolean } = {},
    ): Promise<CountedArticle[]> => {
      if (how.fresh === true) {
        // Counts run from 0 (the day's oldest article) to total - 1 (its newest).
        const top = Math.min(to, latestTotal - 1);
        if (top >= Math.max(0, from)) {
          for (let older = Math.max(0, from); older <= top; older++) covered.delete(older);
        }
      }
      for (let round = 0; ; round++) {
        const newest = newestMissing(covered, Math.max(0, from), Math.min(to, latestTotal - 1));
        if (newest === undefined) break;
        if (round === 4) {
          throw new ProbeProblem(`${day}: the listing kept moving while a stretch of it was read (${from}..${to})`);
        }
        const oldest = oldestMissing(covered, Math.max(0, from), newest) as number;
        await fetch(latestTotal - 1 - newest, latestTotal - 1 - oldest);
      }
      const out: CountedArticle[] = [];
      for (let older = Math.min(to, latestTotal - 1); older >= Math.max(0, from); older--) {
        const item = byOlder.get(older);
        if (item !== undefined) out.push(item);
      }
      return out;
    };
    return { read, pages: () => pages };
  }
}

/**
 * Characters the counted days may take in the reading state item (DynamoDB items hold 400 KB;
 * the rest of the item is small): a few days of long keys at the anchor cap could pass it.
 */
const maxCountedChars = 250_000;

/** The days, their anchors thinned evenly until their JSON fits {@link maxCountedChars}. */
export function fitted(days: readonly CountedDay[]): CountedDay[] {
  let fit = [...days];
  let max = Math.max(...fit.map((day) => day.anchors.length), 0);
  while (max > 2 && JSON.stringify(fit).length > maxCountedChars) {
    max = Math.floor(max / 2);
    fit = fit.map((day) => thinned(day, max));
  }
  return fit;
}

/** A probe page that cannot be counted: the day is read the old way. */
class ProbeProblem extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ProbeProblem';
  }
}

/** The highest count in [from, to] not read yet (the newest article still missing). */
function newestMissing(have: ReadonlySet<number>, from: number, to: number): number | undefined {
  for (let older = to; older >= from; older--) if (!have.has(older)) return older;
  return undefined;
}

/** The lowest count in [from, to] not read yet. */
function oldestMissing(have: ReadonlySet<number>, from: number, to: number): number | undefined {
  for (let older = from; older <= to; older++) if (!have.has(older)) return older;
  return undefined;
}

/**
 * The requests that cover positions first..last (0-based, both included) with pages of at most
 * `size`: one page when a page size fits the span without crossing a page boundary, else pages of
 * `size` in order.
 */
export function pageRequests(first: number, last: number, size: number): { page: number; size: number }[] {
  const span = last - first + 1;
  if (span <= size) {
    for (let candidate = size; candidate >= span; candidate--) {
      if (Math.floor(first / candidate) === Math.floor(last / candidate)) {
        return [{ page: Math.floor(first / candidate) + 1, size: candidate }];
      }
    }
  }
  const requests: { page: number; size: number }[] = [];
  for (let page = Math.floor(first / size) + 1; page <= Math.floor(last / size) + 1; page++)
    requests.push({ page, size });
  return requests;
}
