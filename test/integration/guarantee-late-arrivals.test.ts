/**
 * Articles the provider lists late arrive fresh (counted reading, functions/core/reading/): the
 * real alert run against moto and the news simulator over HTTPS, runs every 5 minutes over a day
 * of many pages, articles indexed 1, 10, 59 and 61 minutes late, a provider midnight between two
 * runs, lateness that changes mid-day, and the reading state lost. docs/incremental-reading.md
 * promises: an article listed up to LATE_ARRIVAL_MINUTES late is delivered within
 * LATE_RECHECK_MINUTES of appearing plus one run interval (sooner when one page covers everything
 * watched), once. Each test fails when the early stop ignores what the counts say (a run that
 * stops at watermark - overlap and never rechecks leaves these articles to the six-hourly sweep).
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { RunSummary } from '#core/alert-run';
import type { SimArticle, SimArticleInput } from '#sandbox/news-simulator';
import { quietAudiences, startTestStack, type TestStack, testEpoch } from '#test/run-harness';

const minute = 60_000;
const interval = 5 * minute;
const exact = { missing: [], unexpected: [], duplicates: [] };

/** Articles every example audience rule can match, in turn (quakes, chips, rates). */
const templates: readonly Omit<SimArticleInput, 'publishedAt'>[] = [
  { title: 'Earthquake felt along the coast', categories: ['003002000'], media: 'M004' },
  { title: 'Semiconductor exports rise again', categories: ['008001000'], media: 'M002' },
  { title: 'Central bank holds the interest rate', categories: ['002001000'], media: 'M001' },
];

let serial = 0;
function arrive(stack: TestStack, ...times: number[]): SimArticle[] {
  return stack.simulator!.publish(
    ...times.map((publishedAt) => {
      serial += 1;
      const template = templates[serial % templates.length];
      return { ...template, title: `${template?.title} (${serial})`, publishedAt };
    }),
  );
}

async function runAt(stack: TestStack, at: number): Promise<RunSummary> {
  stack.setTime(at);
  const summary = await stack.run();
  expect(summary.status, summary.reason).toBe('completed');
  return summary;
}

/** A busy morning: 240 articles over the four hours before `at` (24 pages of 10). */
async function busyStack(at = testEpoch): Promise<TestStack> {
  const stack = await startTestStack({ epoch: at, simulator: { seed: 5, articles: [] } });
  arrive(stack, ...Array.from({ length: 240 }, (_, i) => at - 4 * 60 * minute + i * minute));
  return stack;
}

/** When each of `articles` was first delivered (to any audience), by the run times given. */
async function deliveredBy(stack: TestStack, articles: readonly SimArticle[]): Promise<Set<string>> {
  const delivered = await stack.deliveredSoFar();
  return new Set(
    articles.filter((a) => delivered.some((d) => d.endsWith(`|id:${a.articleId}`))).map((a) => a.articleId),
  );
}

const windowStart = (stack: TestStack, epoch = testEpoch) =>
  epoch - stack.config.run.initialLookbackMs - stack.config.run.lateArrivalMs;

describe('late arrivals (counted reading)', () => {
  let stack: TestStack | undefined;
  afterEach(async () => {
    await stack?.stop();
    stack = undefined;
  });

  it('articles listed 1, 10 and 59 minutes late are delivered within the recheck period of appearing, once; 61 minutes late is past the promise and breaks nothing', async () => {
    stack = await busyStack();
    const recheck = stack.config.run.lateRecheckMs ?? 0;
    expect(recheck).toBe(15 * minute);
    await runAt(stack, testEpoch);
    const due = new Map<string, number>();
    let at = testEpoch;
    let beyond: SimArticle | undefined;
    for (let k = 1; k <= 8; k += 1) {
      at += interval;
      // New articles on top every interval, so the late ones land pages below the first.
      arrive(stack, ...Array.from({ length: 6 }, (_, i) => at - i * 40_000));
      if (k === 2) {
        const appearsAt = at - interval / 2;
        for (const late of [1, 10, 59]) {
          const [article] = arrive(stack, appearsAt - late * minute);
          due.set(article?.articleId as string, appearsAt + recheck + interval);
        }
        [beyond] = arrive(stack, appearsAt - 61 * minute);
      }
      const summary = await runAt(stack, at);
      expect(summary.reading).toMatchObject({ mode: 'incremental' });
      expect(summary.reading?.counted?.paused).toBeUndefined();
      const delivered = await deliveredBy(stack, stack.simulator!.articles());
      for (const [id, by] of due)
        if (at >= by) expect(delivered, `id:${id} due by +${(by - testEpoch) / minute} min`).toContain(id);
    }
    expect([...(await deliveredBy(stack, stack.simulator!.articles()))]).toEqual(
      expect.arrayContaining([...due.keys()]),
    );
    // Past the promise: may or may not be delivered, never twice (verifyExactlyOnce counts it).
    expect(beyond).toBeDefined();
    expect(await stack.verifyExactlyOnce(windowStart(stack))).toMatchObject({ duplicates: [] });
    const check = await stack.verifyExactlyOnce(windowStart(stack));
    expect(check.unexpected).toEqual([]);
    expect(check.missing.filter((key) => !key.includes(beyond?.articleId as string))).toEqual([]);
  });

  it('a provider seen removing articles keeps the periodic sweep: a late article listed where another left is delivered by it, once', async () => {
    // No audience wants update notices, so only the provider's removals can keep the sweep on.
    const audiences = quietAudiences.map((audience) => ({
      ...audience,
      item: { ...audience.item, updates: 'ignore' },
    }));
    stack = await startTestStack({ epoch: testEpoch, audiences, simulator: { seed: 5, articles: [] } });
    arrive(stack, ...Array.from({ length: 240 }, (_, i) => testEpoch - 4 * 60 * minute + i * minute));
    await runAt(stack, testEpoch);
    // Leaves the key's media scope: a removal the counts notice (nothing makes up for it).
    const simulator = stack.simulator!;
    const leave = (article: SimArticle | undefined) => {
      expect(article).toBeDefined();
      const { articleId, title, url, categories, publishedAt } = article as SimArticle;
      const codes = categories.map((category) => category.code);
      simulator.publish({ articleId, title, url, categories: codes, media: 'M008', publishedAt } as SimArticleInput);
    };
    const articleAt = (at: number) => simulator.articles().find((article) => article.publishedAt === at);
    leave(articleAt(testEpoch - 20 * minute));
    const paused = await runAt(stack, testEpoch + interval);
    expect(paused.reading?.counted?.paused).toBeDefined();
    // Six hours on, counting starts again with a sweep (an hour of articles, one a minute).
    let at = testEpoch + 6 * 60 * minute + interval;
    arrive(stack, ...Array.from({ length: 60 }, (_, i) => at - (i + 1) * minute));
    expect((await runAt(stack, at)).reading).toMatchObject({ mode: 'sweep' });
    // An article listed 30 s after one that leaves, with nothing remembered between them: the
    // counts stay as they were. (Leaving a remembered article is noticed: that is the pause above.)
    const reading = await stack.dependencies.state.readReadingState();
    const anchored = new Set(reading?.counted?.days.flatMap((day) => day.anchors.map((anchor) => anchor.key)));
    const victim = simulator
      .articles()
      .find(
        (article) =>
          article.publishedAt >= at - 45 * minute &&
          article.publishedAt <= at - 15 * minute &&
          article.media.code !== 'M008' &&
          !anchored.has(`id:${article.articleId}`),
      );
    at += interval;
    const [late] = arrive(stack, (victim?.publishedAt ?? 0) + 30_000);
    leave(victim);
    for (let k = 0; k < 4; k += 1) {
      at += interval;
      arrive(stack, ...Array.from({ length: 6 }, (_, i) => at - i * 40_000));
      expect((await runAt(stack, at)).reading).toMatchObject({ mode: 'incremental' });
    }
    expect(await deliveredBy(stack, [late as SimArticle])).toEqual(new Set());
    // The next periodic sweep (FULL_SWEEP_MINUTES after the last) reads it.
    at = testEpoch + 12 * 60 * minute + 2 * interval;
    const swept = await runAt(stack, at);
    expect(swept.reading).toMatchObject({ mode: 'sweep', reason: expect.stringMatching(/counts disagreed/) });
    expect(await deliveredBy(stack, [late as SimArticle])).toEqual(new Set([late?.articleId]));
    // Nothing twice; what the two that left had been sent before they left is all the check does not expect.
    const check = await stack.verifyExactlyOnce(windowStart(stack));
    expect(check.duplicates).toEqual([]);
    const left = simulator.articles().filter((article) => article.media.code === 'M008');
    expect(check.unexpected.filter((key) => !left.some((article) => key.endsWith(`|id:${article.articleId}`)))).toEqual(
      [],
    );
  });

  it('reads a few pages per run, not the day: a late article costs a recheck, not a sweep', async () => {
    stack = await busyStack();
    await runAt(stack, testEpoch);
    let at = testEpoch;
    const pages: number[] = [];
    for (let k = 1; k <= 6; k += 1) {
      at += interval;
      arrive(stack, ...Array.from({ length: 6 }, (_, i) => at - i * 40_000));
      if (k === 1) arrive(stack, at - 35 * minute);
      const summary = await runAt(stack, at);
      pages.push(summary.pages);
    }
    // The day holds 250+ articles (26+ pages); no run reads more than a handful of them.
    expect(Math.max(...pages)).toBeLessThanOrEqual(8);
    expect(await stack.verifyExactlyOnce(windowStart(stack))).toEqual(exact);
  });

  it('a provider midnight between two runs: an article of the day before listed after midnight is delivered by the next runs, once', async () => {
    const evening = Date.parse('2026-11-22T23:55:00+09:00');
    stack = await busyStack(evening);
    await runAt(stack, evening);
    // Published at 23:57 and 23:20, listed only after midnight; and the new day's first articles.
    const late = arrive(stack, evening + 2 * minute, Date.parse('2026-11-22T23:20:00+09:00'));
    arrive(stack, evening + 6 * minute, evening + 8 * minute);
    const first = await runAt(stack, evening + interval * 2);
    expect(first.window).toEqual({ from: '2026-11-22', to: '2026-11-23' });
    expect(first.reading).toMatchObject({ mode: 'incremental' });
    let at = evening + interval * 2;
    while ((await deliveredBy(stack, late)).size < late.length && at < evening + 20 * minute + interval) {
      at += interval;
      await runAt(stack, at);
    }
    expect((await deliveredBy(stack, late)).size).toBe(2);
    expect(at - (evening + 5 * minute)).toBeLessThanOrEqual((stack.config.run.lateRecheckMs ?? 0) + interval);
    expect(await stack.verifyExactlyOnce(windowStart(stack, evening))).toEqual(exact);
  });

  it('lateness that changes mid-day (minutes, then most of an hour) is followed without a sweep', async () => {
    stack = await busyStack();
    await runAt(stack, testEpoch);
    let at = testEpoch;
    const due = new Map<string, number>();
    const recheck = stack.config.run.lateRecheckMs ?? 0;
    for (let k = 1; k <= 12; k += 1) {
      at += interval;
      arrive(stack, ...Array.from({ length: 4 }, (_, i) => at - i * minute));
      const lateBy = k <= 6 ? 3 + k : 30 + 3 * k;
      const [article] = arrive(stack, at - interval / 2 - lateBy * minute);
      due.set(article?.articleId as string, at - interval / 2 + recheck + interval);
      const summary = await runAt(stack, at);
      expect(summary.reading?.mode).toBe('incremental');
      const delivered = await deliveredBy(stack, stack.simulator!.articles());
      for (const [id, by] of due) if (at >= by) expect(delivered).toContain(id);
    }
    expect(await stack.verifyExactlyOnce(windowStart(stack))).toEqual(exact);
  });

  it('the reading state lost between runs: the next run sweeps, late articles still arrive once, and counting resumes', async () => {
    stack = await busyStack();
    await runAt(stack, testEpoch);
    await runAt(stack, testEpoch + interval);
    const [late] = arrive(stack, testEpoch + interval - 40 * minute);
    // The item is gone (deleted by hand, or the table restored without it).
    const state = stack.dependencies.state;
    const lease = await state.acquireLease('test-lose-reading', 60_000, stack.time());
    await state.writeReadingState(
      lease,
      { order: 'unknown', runId: 'x', runStatus: 'failed', resume: [], updatedAt: 0 },
      stack.time(),
    );
    await state.releaseLease(lease);
    const sweep = await runAt(stack, testEpoch + 2 * interval);
    expect(sweep.reading?.mode).toBe('sweep');
    expect(await deliveredBy(stack, [late as SimArticle])).toContain(late?.articleId);
    const next = await runAt(stack, testEpoch + 3 * interval);
    expect(next.reading).toMatchObject({
      mode: 'incremental',
      counted: expect.objectContaining({ days: expect.any(Number) }),
    });
    // Counting resumed: the next late article arrives within the recheck period, not at a sweep.
    const [again] = arrive(stack, testEpoch + 3 * interval - 30 * minute);
    for (
      let at = testEpoch + 4 * interval;
      at <= testEpoch + 3 * interval + (stack.config.run.lateRecheckMs ?? 0) + interval;
      at += interval
    ) {
      await runAt(stack, at);
    }
    expect(await deliveredBy(stack, [again as SimArticle])).toContain(again?.articleId);
    expect(await stack.verifyExactlyOnce(windowStart(stack))).toEqual(exact);
  });

  it('an article removed from the listing pauses counting with the reason, and the day is read whole: nothing is lost', async () => {
    stack = await busyStack();
    await runAt(stack, testEpoch);
    // A remembered article in the watched stretch moves to another day (the provider re-dated
    // it): the day lists one article fewer than the runs read, so the counts cannot be followed
    // and a run reads the day whole. (A removal that a late article in the same stretch exactly
    // makes up for cannot be seen by counting; docs/incremental-reading.md says so.)
    const reading = await stack.dependencies.state.readReadingState();
    const anchors = reading?.counted?.days.at(-1)?.anchors ?? [];
    const anchor = anchors[Math.floor(anchors.length / 2)];
    const gone = stack.simulator!.articles().find((article) => `id:${article.articleId}` === anchor?.key);
    expect(gone).toBeDefined();
    const { categories, media, ...rest } = gone as SimArticle;
    stack.simulator!.publish({
      ...rest,
      categories: categories.map((category) => category.code),
      media: media.code,
      publishedAt: rest.publishedAt - 24 * 60 * minute,
    });
    const [late] = arrive(stack, testEpoch + 2 * minute);
    let paused: RunSummary | undefined;
    for (let at = testEpoch + interval; paused === undefined && at <= testEpoch + 4 * interval; at += interval) {
      const summary = await runAt(stack, at);
      if (summary.reading?.counted?.paused !== undefined) paused = summary;
    }
    expect(paused?.reading?.counted?.paused).toMatch(/no longer listed|not listed|fewer/);
    expect(paused?.reading?.daysReadFully).toBeGreaterThanOrEqual(1);
    expect(await deliveredBy(stack, [late as SimArticle])).toContain(late?.articleId);
    // Paused: the next runs read without counting (sweeps as before) until the pause is over; the
    // pause is kept, so no run in between starts counting again with a read of the whole window.
    for (const _ of [1, 2, 3]) {
      const next = await runAt(stack, stack.time() + interval);
      expect(next.reading?.counted).toBeUndefined();
      expect(next.reading?.reason ?? '').not.toContain('counted reading starts');
      expect((await stack.dependencies.state.readReadingState())?.counted?.off?.reason).toBe(
        paused?.reading?.counted?.paused,
      );
    }
  });
});
