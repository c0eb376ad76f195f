/**
 * Incremental reading keeps the no-loss and exactly-once guarantees (functions/core/reading/plan.ts):
 * the real alert run against moto and the news simulator over HTTPS, with articles arriving
 * between and during runs. Every test here fails when the early stop is made unconditional
 * (stopping on a page that ends before watermark - overlap whatever the order and the plan).
 *
 * These runs read without counted reading (LATE_RECHECK_MINUTES=0), as they do for a provider that
 * reports no totals or pages by cursor: late articles wait for full sweeps. Counted reading has
 * its own tests (guarantee-late-arrivals.test.ts).
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { RunSummary } from '#core/alert-run';
import { providerDate } from '#core/calendar';
import type { SimArticleInput } from '#sandbox/news-simulator';
import { OUT_OF_SCOPE_MEDIA } from '#sandbox/news-simulator-data';
import { startTestStack as startStack, stateWith, type TestStack, testEpoch } from '#test/run-harness';

/** A test stack that reads without counted reading. */
const startTestStack = (options: Parameters<typeof startStack>[0] = {}) =>
  startStack({ ...options, environment: { LATE_RECHECK_MINUTES: '0', ...options.environment } });

const minute = 60_000;
const exact = { missing: [], unexpected: [], duplicates: [] };

/** Articles every example audience rule can match, in turn (quakes, chips, rates). */
const templates: readonly Omit<SimArticleInput, 'publishedAt'>[] = [
  { title: 'Earthquake felt along the coast', categories: ['003002000'], media: 'M004' },
  { title: 'Semiconductor exports rise again', categories: ['008001000'], media: 'M002' },
  { title: 'Central bank holds the interest rate', categories: ['002001000'], media: 'M001' },
];

let serial = 0;
/** Publishes one matching article per publication time, in the given order. */
function arrive(stack: TestStack, ...times: number[]) {
  const articles = times.map((publishedAt) => {
    serial += 1;
    const template = templates[serial % templates.length];
    return { ...template, title: `${template?.title} (${serial})`, publishedAt };
  });
  return stack.simulator!.publish(...articles);
}

/** Runs at `at` and expects it to complete. */
async function runAt(stack: TestStack, at: number): Promise<RunSummary> {
  stack.setTime(at);
  const summary = await stack.run();
  expect(summary.status, summary.reason).toBe('completed');
  return summary;
}

/** The whole window since the first run's start: yesterday 09:00 minus the late-arrival window. */
const windowStart = (stack: TestStack) =>
  testEpoch - stack.config.run.initialLookbackMs - stack.config.run.lateArrivalMs;

/** How many articles the live key is served on the provider dates of `window`. */
function served(stack: TestStack, window: RunSummary['window']): number {
  return stack.simulator!.articles().filter((article) => {
    const day = providerDate(article.publishedAt, stack.simulator!.timeZone);
    return article.media.code !== OUT_OF_SCOPE_MEDIA && day >= (window?.from ?? '') && day <= (window?.to ?? '');
  }).length;
}

describe('incremental reading', () => {
  let stack: TestStack | undefined;
  afterEach(async () => {
    await stack?.stop();
    stack = undefined;
  });

  it('newest-first: after a sweep teaches the order, runs read only the first pages and deliver each new article once', async () => {
    // Two days of articles: yesterday also holds articles older than the first run's window.
    stack = await startTestStack({ simulator: { seed: 11, generate: { days: 2, perDay: 80 } } });
    const first = await runAt(stack, testEpoch);
    expect(first.reading).toMatchObject({ mode: 'sweep', orderAfter: 'newest-first' });
    // A sweep reads every article of its window, however old.
    expect(first.articlesFetched).toBe(served(stack, first.window));

    for (let k = 1; k <= 4; k += 1) {
      const at = testEpoch + k * 5 * minute;
      // Arrivals since the last run, one of them inside the overlap; a busy interval at k = 3.
      const count = k === 3 ? 14 : 4;
      arrive(stack, ...Array.from({ length: count }, (_, i) => at - 6 * minute + i * 20_000));
      const summary = await runAt(stack, at);
      expect(summary.reading).toMatchObject({ mode: 'incremental', daysStoppedEarly: 1, daysReadFully: 0 });
      // Today holds ~40 articles (4+ pages of 10); the run reads the pages with new articles.
      expect(summary.pages).toBe(k === 3 ? 2 : 1);
    }
    expect(await stack.verifyExactlyOnce(windowStart(stack))).toEqual(exact);
  });

  it('ties: many articles on the same second at the stop point and across page boundaries are each delivered once', async () => {
    stack = await startTestStack();
    await runAt(stack, testEpoch);
    const at = testEpoch + 5 * minute;
    const stopPoint = testEpoch - stack.config.run.incrementalOverlapMs;
    // 25 articles on the stop point itself and 12 on the second after it: they straddle pages, and
    // the stop point is inclusive (a run stops only on a page that ends strictly before it).
    arrive(
      stack,
      ...Array.from({ length: 25 }, () => stopPoint),
      ...Array.from({ length: 12 }, () => stopPoint + 1000),
    );
    arrive(stack, at - minute);
    const summary = await runAt(stack, at);
    expect(summary.reading?.daysStoppedEarly).toBe(1);
    expect(summary.pages).toBeGreaterThanOrEqual(4);
    // The next run's stop point is this run's start: ties on it, around a page boundary again.
    arrive(stack, ...Array.from({ length: 9 }, () => at), at + 4 * minute);
    await runAt(stack, at + 5 * minute);
    expect(await stack.verifyExactlyOnce(windowStart(stack))).toEqual(exact);
    // Late ties behind the stop point, two pages of them on one second 40 minutes back: the next
    // full sweep reads them all.
    arrive(stack, ...Array.from({ length: 20 }, () => at - 40 * minute), at + 9 * minute);
    const sweep = await runAt(stack, at + 6 * 60 * minute);
    expect(sweep.reading?.mode).toBe('sweep');
    expect(await stack.verifyExactlyOnce(windowStart(stack))).toEqual(exact);
  });

  it('articles inserted in front while a run reads are delivered by it or the next one, once', async () => {
    stack = await startTestStack();
    await runAt(stack, testEpoch);
    let at = testEpoch;
    for (let k = 1; k <= 3; k += 1) {
      at += 5 * minute;
      // 30 new articles: 3+ pages; while page 2 is read, 4 more arrive in front (pages shift).
      arrive(stack, ...Array.from({ length: 30 }, (_, i) => at - 4 * minute + i * 1000));
      stack.simulator!.faults.inject({ kind: 'shift', insert: 4, page: 2 });
      const summary = await runAt(stack, at);
      expect(summary.reading?.mode).toBe('incremental');
      expect(stack.simulator!.faults.pending()).toEqual([]);
    }
    // And behind: articles older than the stop point indexed since, caught by the next sweep.
    arrive(stack, at - 30 * minute, at - 31 * minute, at - 45 * minute);
    await runAt(stack, at + 5 * minute);
    const sweep = await runAt(stack, testEpoch + 6 * 60 * minute);
    expect(sweep.reading?.mode).toBe('sweep');
    expect(await stack.verifyExactlyOnce(windowStart(stack))).toEqual(exact);
  });

  it('an order that changes mid-day is noticed on the page that breaks it: that day is read to its end', async () => {
    stack = await startTestStack();
    await runAt(stack, testEpoch);
    const at = testEpoch + 5 * minute;
    arrive(stack, at - 3 * minute, at - minute);
    stack.simulator!.setOrder('oldest-first');
    const summary = await runAt(stack, at);
    expect(summary.reading).toMatchObject({ mode: 'incremental', daysStoppedEarly: 0, daysReadFully: 1 });
    expect(summary.reading?.orderAfter).toBe('oldest-first');
    expect(await stack.verifyExactlyOnce(windowStart(stack))).toEqual(exact);

    // And back again, mid-read this time: page 1 newest-first, the rest oldest-first.
    stack.simulator!.setOrder('newest-first');
    arrive(stack, at + 3 * minute, at + 4 * minute);
    const next = await runAt(stack, at + 5 * minute);
    expect(next.reading?.mode).toBe('incremental');
    expect(await stack.verifyExactlyOnce(windowStart(stack))).toEqual(exact);
  });

  it('pages in no order: every run reads every page and delivers exactly what reading every page always does', async () => {
    const deliveries: string[][] = [];
    const pages: number[][] = [];
    for (const sweepMinutes of ['360', '0']) {
      serial = 0;
      stack = await startTestStack({
        simulator: { seed: 11, generate: { days: 1, perDay: 80 }, order: 'unordered' },
        environment: { FULL_SWEEP_MINUTES: sweepMinutes },
      });
      const runPages: number[] = [];
      for (let k = 0; k <= 3; k += 1) {
        const at = testEpoch + k * 5 * minute;
        if (k > 0) arrive(stack, at - 4 * minute, at - minute, at - 30 * minute);
        const summary = await runAt(stack, at);
        expect(summary.reading).toMatchObject({ mode: 'sweep', orderAfter: 'unknown' });
        runPages.push(summary.pages);
      }
      expect(await stack.verifyExactlyOnce(windowStart(stack))).toEqual(exact);
      deliveries.push((await stack.deliveredSoFar()).sort());
      pages.push(runPages);
      await stack.stop();
      stack = undefined;
    }
    expect(deliveries[0]).toEqual(deliveries[1]);
    expect(pages[0]).toEqual(pages[1]);
  });

  it('a late article older than the overlap waits for the next sweep, which delivers it once', async () => {
    // Late arrivals up to 10 hours; the default example day has ~3 articles an hour, so an article
    // published 5 hours ago sits pages behind the first one.
    stack = await startTestStack({ environment: { FULL_SWEEP_MINUTES: '30', LATE_ARRIVAL_MINUTES: '600' } });
    await runAt(stack, testEpoch);
    // Published 5 hours before the watermark, indexed only now: older than watermark - overlap.
    const [late] = arrive(stack, testEpoch - 5 * 60 * minute);
    arrive(stack, testEpoch + 4 * minute);
    const incremental = await runAt(stack, testEpoch + 5 * minute);
    expect(incremental.reading?.mode).toBe('incremental');
    expect(await stack.deliveredSoFar()).not.toContainEqual(expect.stringContaining(`id:${late?.articleId}`));

    const sweep = await runAt(stack, testEpoch + 30 * minute);
    expect(sweep.reading).toMatchObject({ mode: 'sweep' });
    expect(sweep.reading?.reason).toContain('last full sweep started 30 min ago');
    expect(await stack.deliveredSoFar()).toContainEqual(expect.stringContaining(`id:${late?.articleId}`));
    expect(await stack.verifyExactlyOnce(windowStart(stack))).toEqual(exact);
  });

  it('a sweep does not alert a rule saved since about a late article older than the late-arrival window before it', async () => {
    stack = await startTestStack();
    await runAt(stack, testEpoch);
    await runAt(stack, testEpoch + 5 * minute);
    // Saved at 09:10 for the chips team: earthquakes, too.
    await stack.putRules([
      {
        ruleId: 'chips-quakes',
        audienceId: 'chips-team',
        keywords: ['earthquake'],
        updatedAt: new Date(testEpoch + 10 * minute).toISOString(),
      },
    ]);
    // Published at 08:02, indexed only now: older than the watermark minus the late-arrival window,
    // so only the next sweep (back to the last sweep at 09:00 minus 60 minutes) reads it.
    const quake = (publishedAt: number) => ({ ...templates[0], title: 'Earthquake felt inland', publishedAt });
    const [late, fresh] = stack.simulator!.publish(quake(testEpoch - 58 * minute), quake(testEpoch + 359 * minute));
    const before = (await stack.deliveredSoFar()).length;
    const sweep = await runAt(stack, testEpoch + 6 * 60 * minute);
    expect(sweep.reading?.mode).toBe('sweep');
    const delivered = (await stack.deliveredSoFar()).slice(before);
    // The quake desk's rule is older: it hears of the late article. The new rule only of what is new.
    expect(delivered).toContain(`quake-oncall|id:${late?.articleId}`);
    expect(delivered).not.toContain(`chips-team|id:${late?.articleId}`);
    expect(delivered).toContain(`chips-team|id:${fresh?.articleId}`);
  });

  it('the first run of a provider day sweeps: an article of the day before indexed after midnight is delivered once', async () => {
    // 23:50 in Seoul: the next run is the first of a new provider day.
    const evening = Date.parse('2026-11-22T23:50:00+09:00');
    stack = await startTestStack({ epoch: evening });
    // A busy last half hour: the day's first page holds only these.
    arrive(stack, ...Array.from({ length: 12 }, (_, i) => evening - 30 * minute + i * minute));
    await runAt(stack, evening);
    // Published at 23:00, indexed after midnight: on the day's second page.
    const [, late] = arrive(stack, evening + 2 * minute, Date.parse('2026-11-22T23:00:00+09:00'));
    arrive(stack, evening + 14 * minute);
    const summary = await runAt(stack, evening + 15 * minute);
    expect(summary.reading?.reason).toContain('first run of provider day 2026-11-23');
    expect(summary.window).toEqual({ from: '2026-11-22', to: '2026-11-23' });
    expect(await stack.deliveredSoFar()).toContainEqual(expect.stringContaining(`id:${late?.articleId}`));
    expect(
      await stack.verifyExactlyOnce(evening - stack.config.run.initialLookbackMs - stack.config.run.lateArrivalMs),
    ).toEqual(exact);
  });

  it('a crash between runs (reading state not stored) makes the next run sweep, so an order change in between loses nothing', async () => {
    stack = await startTestStack();
    await runAt(stack, testEpoch);
    const at = testEpoch + 5 * minute;
    arrive(stack, at - 2 * minute);
    stack.simulator!.setOrder('unordered');
    // The run learns the order is gone, then dies before it can store that.
    const crashing = stateWith(stack.dependencies.state, {
      writeReadingState: async () => {
        throw new Error('the Lambda was stopped here');
      },
    });
    stack.setTime(at);
    const crashed = await stack.run({ dependencies: { state: crashing } });
    expect(crashed.reading?.orderAfter).toBe('unknown');

    // Still unordered: the stored state says newest-first, but the watermark moved without it.
    arrive(stack, at + 4 * minute, at + 2 * minute, at + 3 * minute);
    const next = await runAt(stack, at + 5 * minute);
    expect(next.reading).toMatchObject({ mode: 'sweep' });
    expect(next.reading?.reason).toContain('watermark was moved');
    expect(await stack.verifyExactlyOnce(windowStart(stack))).toEqual(exact);
  });

  for (const cursorMode of [false, true]) {
    it(`oldest-first${cursorMode ? ' with cursors' : ''}: runs resume where the last one ended, and read from page 1 when the overlap does not hold`, async () => {
      stack = await startTestStack({
        simulator: { seed: 11, generate: { days: 1, perDay: 80 }, order: 'oldest-first', cursorMode },
        environment: cursorMode ? { NEWS_API_PAGINATION: 'CURSOR' } : {},
      });
      const first = await runAt(stack, testEpoch);
      expect(first.reading?.orderAfter).toBe('oldest-first');
      let at = testEpoch;
      for (let k = 1; k <= 2; k += 1) {
        at += 5 * minute;
        arrive(stack, at - 4 * minute, at - 2 * minute);
        const summary = await runAt(stack, at);
        expect(summary.reading).toMatchObject({ mode: 'incremental', daysResumed: 1, daysReadFully: 0 });
        // The last page again (the overlap that proves the boundary), the new one, the empty end.
        expect(summary.pages).toBeLessThanOrEqual(3);
      }
      at += 5 * minute;
      if (cursorMode) {
        // A keyset cursor does not move when articles are inserted behind it; what breaks it is a
        // cursor the provider no longer accepts (expired, or issued by a provider since redeployed).
        const state = stack.dependencies.state;
        const stored = await state.readReadingState();
        const lease = await state.acquireLease('test-expire-cursor', 60_000, stack.time());
        await state.writeReadingState(
          lease,
          { ...stored!, resume: stored!.resume.map((entry) => ({ ...entry, position: { cursor: 'expired' } })) },
          stack.time(),
        );
        await state.releaseLease(lease);
      }
      // 15 late articles inserted behind the boundary (older, within the late-arrival window) push
      // the last page's articles past the stored page: the run cannot prove it and reads all.
      arrive(stack, ...Array.from({ length: 15 }, (_, i) => at - 50 * minute - i * 1000), at - minute);
      const fallback = await runAt(stack, at);
      expect(fallback.reading?.daysReadFully).toBe(1);
      expect(fallback.reading?.fullReadReason).toContain(
        cursorMode ? 'the provider refused the stored position' : 'repeats none of the articles',
      );
      expect(await stack.verifyExactlyOnce(windowStart(stack))).toEqual(exact);
    });
  }
});
