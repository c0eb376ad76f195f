/**
 * A provider day's listing in memory, newest first (by publication time, ties by key), for the
 * tests of counted reading (functions/core/reading/counted-days.ts): articles appear (also late,
 * with old publication times), can be removed, and are served by page number and size with their
 * positions, as the simulator serves them.
 */
import type { Article } from '#core/model';
import {
  type CountedArticle,
  type CountedDayWithBeyond,
  cleanWhenNothingArrived,
  foldTopRead,
  prune,
  recheck,
  recheckReason,
} from '#core/reading/counted-days';

export function listedArticle(key: string, publishedAt: number): Article {
  return {
    key,
    title: key,
    summary: '',
    url: `https://news.example.com/${key}`,
    publishedAt,
    categories: [],
    categoryNames: [],
  };
}

export class Listing {
  #items: Article[] = [];
  /** Requests served (page reads). */
  requests = 0;

  get total(): number {
    return this.#items.length;
  }

  add(article: Article): void {
    const at = this.#items.findIndex(
      (item) =>
        item.publishedAt < article.publishedAt || (item.publishedAt === article.publishedAt && item.key < article.key),
    );
    if (at === -1) this.#items.push(article);
    else this.#items.splice(at, 0, article);
  }

  remove(key: string): void {
    this.#items = this.#items.filter((item) => item.key !== key);
  }

  keys(): string[] {
    return this.#items.map((item) => item.key);
  }

  /** Page `page` (1-based) of `size`: the articles with how many are listed after each. */
  page(page: number, size: number): CountedArticle[] {
    this.requests += 1;
    const total = this.#items.length;
    return this.#items.slice((page - 1) * size, page * size).map((article, i) => ({
      article,
      older: total - 1 - ((page - 1) * size + i),
    }));
  }
}

/** What one counted run over a listing did (as functions/core/alert-run.ts drives the module). */
export interface CountedRunResult {
  readonly day: CountedDayWithBeyond | undefined;
  readonly read: Set<string>;
  readonly disagreed?: string;
  readonly rechecked: boolean;
}

/**
 * One run over `listing`: reads page 1 down until a page ends before `stopBefore` and the newest
 * anchor was passed, folds the read, rechecks when due, prunes. On a disagreement it reads the
 * listing to its end and starts the counts afresh.
 */
export async function countedRun(
  listing: Listing,
  previous: CountedDayWithBeyond | undefined,
  options: {
    readonly now: number;
    readonly stopBefore: number;
    readonly pageSize: number;
    readonly lateArrivalMs: number;
    readonly recheckMs: number;
    readonly dayEnd?: number;
  },
): Promise<CountedRunResult> {
  const { now, pageSize } = options;
  const read = new Set<string>();
  const topRead = (untilEnd: boolean) => {
    const seen = new Map<string, CountedArticle>();
    const pageEnds: CountedArticle[] = [];
    let deepest: CountedArticle | undefined;
    let reachedEnd = false;
    const newest = untilEnd ? undefined : previous?.anchors[0];
    for (let page = 1; ; page++) {
      const got = listing.page(page, pageSize);
      for (const item of got) {
        seen.set(item.article.key, item);
        read.add(item.article.key);
      }
      const last = got.at(-1);
      if (page === 1 && got[0] !== undefined) pageEnds.push(got[0]);
      if (last === undefined || got.length < pageSize) {
        reachedEnd = true;
        if (last) deepest = last;
        break;
      }
      pageEnds.push(last);
      deepest = last;
      if (untilEnd) continue;
      const passedNewest = newest === undefined || last.article.publishedAt < newest.at;
      if (last.article.publishedAt < options.stopBefore && passedNewest) break;
    }
    return { day: 'd', seen, pageEnds, deepest, reachedEnd };
  };
  const probe = async (from: number, to: number): Promise<CountedArticle[]> => {
    const total = listing.total;
    const first = Math.max(0, total - 1 - to);
    const last = Math.min(total - 1, total - 1 - from);
    const out: CountedArticle[] = [];
    for (let page = Math.floor(first / pageSize) + 1; page <= Math.floor(last / pageSize) + 1; page++) {
      for (const item of listing.page(page, pageSize)) {
        read.add(item.article.key);
        out.push(item);
      }
    }
    return out;
  };
  let fold = foldTopRead(previous, topRead(previous === undefined), now);
  let disagreed: string | undefined;
  if (fold.kind === 'disagree') {
    disagreed = fold.reason;
    fold = foldTopRead(undefined, topRead(true), now);
  }
  if (fold.kind === 'disagree') throw new Error(`a fresh fold disagreed: ${fold.reason}`);
  let day = cleanWhenNothingArrived(fold.day, fold.deficit, now);
  let rechecked = false;
  const settings = {
    lateArrivalMs: options.lateArrivalMs,
    recheckMs: options.recheckMs,
    dayEnd: options.dayEnd ?? Number.POSITIVE_INFINITY,
    pageSize,
  };
  if (recheckReason(day, fold.deficit, now, settings) !== undefined) {
    rechecked = true;
    const outcome = await recheck(day, fold.deficit, probe, now);
    if (outcome.kind === 'disagree') {
      disagreed = outcome.reason;
      const again = foldTopRead(undefined, topRead(true), now);
      if (again.kind === 'disagree') throw new Error(again.reason);
      day = again.day;
    } else day = outcome.day;
  }
  const pruned = prune(day, options.dayEnd ?? Number.POSITIVE_INFINITY, settings);
  return { day: pruned, read, rechecked, ...(disagreed === undefined ? {} : { disagreed }) };
}
