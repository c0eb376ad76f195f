import { describe, expect, it } from 'vitest';
import { ProviderError } from '#core/errors';
import { type CountedReading, type NewsSource, silentLog } from '#core/ports';
import { CountedRun, DayTally } from '#core/reading/counted-run';
import { Listing, listedArticle } from '#test/counted-listing';

const minute = 60_000;
const start = Date.parse('2026-11-22T09:00:00Z');
const day = '2026-11-22';
const pageSize = 10;
const settings = { lateArrivalMs: 60 * minute, recheckMs: 15 * minute };

type PagedSource = NewsSource & Required<Pick<NewsSource, 'page'>> & { refuse: boolean };

/** A numbered-page source over `listing`; `refuse` makes it refuse every page number from then on. */
function sourceOver(listing: Listing): PagedSource {
  const source: PagedSource = {
    refuse: false,
    pageSize,
    pages: () => {
      throw new Error('counted runs read pages by number here');
    },
    page: async (_range, request) => {
      if (source.refuse) {
        throw new ProviderError(`HTTP 404 for page ${request.page}`, { status: 404, retryable: false });
      }
      const counted = listing.page(request.page, request.size);
      return {
        pageNumber: request.page,
        articles: counted.map((item) => item.article),
        skipped: [],
        totalCount: listing.total,
        positions: counted.map((_, i) => (request.page - 1) * request.size + i),
      };
    },
  };
  return source;
}

/** A counted run of `day` at `now`, after the runs that left `previous`. */
function countedRunAt(source: PagedSource, previous: CountedReading | undefined, now: number) {
  return new CountedRun({
    source,
    previous,
    settings,
    log: silentLog,
    now: () => now,
    startedAt: now,
    today: day,
    dayEnd: () => Date.parse('2026-11-22T23:59:59.999Z'),
  });
}

/** What a run's read of pages 1..`pages` of `day` saw. */
async function readPages(source: PagedSource, pages: number): Promise<DayTally> {
  const tally = new DayTally(day, true);
  for (let page = 1; page <= pages; page++) {
    tally.observe(await source.page({ from: day, to: day }, { page, size: pageSize }));
  }
  return tally;
}

const finishing = (reachedEnd: boolean) => ({
  deliver: async () => {},
  signal: new AbortController().signal,
  reachedEnd,
});

describe('a counted run (functions/core/reading/counted-run.ts)', () => {
  /**
   * Sixty articles a minute apart counted by a whole read at 09:00; then an article listed 30
   * minutes late deep in the day: the total grows by more than the next top read shows, and 20
   * minutes on, past the recheck period, that run rechecks.
   */
  async function lateArrivalRecheckDue() {
    const listing = new Listing();
    for (let i = 0; i < 60; i++)
      listing.add(listedArticle(`a${String(i).padStart(3, '0')}`, start - (60 - i) * minute));
    const source = sourceOver(listing);
    const first = countedRunAt(source, undefined, start);
    expect((await first.finishDay(await readPages(source, 6), finishing(true))).disagreed).toBeUndefined();
    expect(first.state().days).toHaveLength(1);
    listing.add(listedArticle('late', start - 30 * minute - 30_000));
    const second = countedRunAt(source, first.state(), start + 20 * minute);
    return { source, second, tally: await readPages(source, 1) };
  }

  it('finds the late article by a recheck of a few pages', async () => {
    const { second, tally } = await lateArrivalRecheckDue();
    const delivered: string[] = [];
    const finished = await second.finishDay(tally, {
      ...finishing(false),
      deliver: async (articles) => {
        delivered.push(...articles.map((article) => article.key));
      },
    });
    expect(finished).toEqual({ rechecked: expect.any(String) });
    expect(delivered).toContain('late');
    expect(second.stats).toMatchObject({ rechecks: 1, found: 1 });
  });

  it('takes a page number the provider refuses during a recheck as a disagreement (the day is read whole), not as a failed run', async () => {
    const { source, second, tally } = await lateArrivalRecheckDue();
    // A listing that shrank puts the probe past its end; this provider refuses such page numbers.
    source.refuse = true;
    const finished = await second.finishDay(tally, finishing(false));
    expect(finished.disagreed).toMatch(/the provider refused page \d+ \(HTTP 404\)/);
    expect(second.state()).toMatchObject({ days: [], off: { reason: expect.stringMatching(/refused page/) } });
  });
});
