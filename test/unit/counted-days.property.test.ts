import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { maxDayAnchors } from '#core/ports';
import { type CountedDayWithBeyond, foldTopRead, prune, recheck, recheckReason } from '#core/reading/counted-days';
import { fitted } from '#core/reading/counted-run';
import { countedRun, Listing, listedArticle } from '#test/counted-listing';

const minute = 60_000;
const start = Date.parse('2026-11-22T09:00:00+09:00');
const base = { pageSize: 10, lateArrivalMs: 60 * minute, recheckMs: 15 * minute };

/** A listing with `n` articles published one a minute up to `start`. */
function dayOf(n: number): Listing {
  const listing = new Listing();
  for (let i = 0; i < n; i++) listing.add(listedArticle(`a${String(i).padStart(5, '0')}`, start - (n - i) * minute));
  return listing;
}

describe('counted reading over a listing (functions/core/reading/counted-days.ts)', () => {
  it('finds an article listed 40 minutes late at the next recheck, reading a few pages instead of the day', async () => {
    const listing = dayOf(600);
    let run = await countedRun(listing, undefined, { ...base, now: start, stopBefore: start - 2 * minute });
    // Runs every 5 minutes with new articles on top; one arrives 40 minutes late at 09:06.
    const late = listedArticle('late-40', start - 34 * minute);
    const readAt = new Map<string, number>();
    let fresh = 0;
    for (let k = 1; k <= 6; k++) {
      const now = start + k * 5 * minute;
      for (let m = 0; m < 5; m++) listing.add(listedArticle(`new${fresh++}`, now - m * minute));
      if (k === 2) listing.add(late);
      const before = listing.requests;
      run = await countedRun(listing, run.day, { ...base, now, stopBefore: now - 7 * minute });
      for (const key of run.read) if (!readAt.has(key)) readAt.set(key, now);
      expect(run.disagreed).toBeUndefined();
      // A run that does not recheck reads a couple of pages, never the 60 pages of the day.
      if (!run.rechecked) expect(listing.requests - before).toBeLessThanOrEqual(3);
    }
    const foundAt = readAt.get(late.key);
    expect(foundAt).toBeDefined();
    // It appeared at 09:10 (run 2); the stretch it landed in was last clean at 09:00, so the
    // recheck at 09:15 at the latest finds it: within the recheck period of its appearance.
    expect((foundAt as number) - (start + 10 * minute)).toBeLessThanOrEqual(base.recheckMs);
  });

  it('delivers every article listed up to the late-arrival window late within recheck period + interval of its appearance, never disagreeing while the listing only grows (property)', async () => {
    const arrival = fc.record({
      /** Minutes before the run it appears at that it was published. */
      lateBy: fc.oneof(fc.integer({ min: 0, max: 2 }), fc.integer({ min: 3, max: 60 })),
      tie: fc.boolean(),
    });
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 0, max: 120 }),
        fc.array(fc.array(arrival, { maxLength: 12 }), { minLength: 4, maxLength: 24 }),
        fc.integer({ min: 3, max: 12 }),
        fc.constantFrom(1, 5),
        async (initial, runs, pageSize, intervalMinutes) => {
          const listing = dayOf(initial);
          const interval = intervalMinutes * minute;
          const settings = { ...base, pageSize, recheckMs: Math.max(10 * minute, 3 * interval) };
          let run = await countedRun(listing, undefined, { ...settings, now: start, stopBefore: start });
          const appeared = new Map<string, { at: number; late: number }>();
          const readAt = new Map<string, number>();
          /** The safety invariant: an anchor never counts an article after it that no run read. */
          const countsOnlyWhatWasRead = () => {
            const keys = listing.keys();
            const anchors = run.day?.anchors ?? [];
            anchors.forEach((anchor, i) => {
              if (i > 0) expect(anchor.older).toBeLessThan((anchors[i - 1] as { older: number }).older);
              const at = keys.indexOf(anchor.key);
              expect(at).toBeGreaterThanOrEqual(0);
              const readAfter = keys.slice(at + 1).filter((key) => readAt.has(key)).length;
              expect(anchor.older).toBeLessThanOrEqual(readAfter);
            });
          };
          for (const key of run.read) readAt.set(key, start);
          let serial = 0;
          for (const [k, arrivals] of runs.entries()) {
            const now = start + (k + 1) * interval;
            for (const { lateBy, tie } of arrivals) {
              // Published `lateBy` minutes before it appears, somewhere in the last interval.
              const appears = now - Math.floor(interval / 2);
              const publishedAt = appears - lateBy * minute - (tie ? 0 : (serial % 7) * 1000);
              const article = listedArticle(`x${String(serial++).padStart(5, '0')}`, publishedAt);
              listing.add(article);
              appeared.set(article.key, { at: appears, late: appears - publishedAt });
            }
            run = await countedRun(listing, run.day, { ...settings, now, stopBefore: now - interval - 2 * minute });
            expect(run.disagreed).toBeUndefined();
            for (const key of run.read) if (!readAt.has(key)) readAt.set(key, now);
            expect(run.day?.anchors.length ?? 0).toBeLessThanOrEqual(maxDayAnchors);
            countsOnlyWhatWasRead();
          }
          const end = start + runs.length * interval;
          for (const [key, { at, late }] of appeared) {
            if (late > base.lateArrivalMs) continue;
            const due = at + settings.recheckMs + interval;
            if (due > end) continue;
            const got = readAt.get(key);
            expect(got, `${key} appeared at +${(at - start) / minute} min, ${late / minute} min late`).toBeDefined();
            expect((got as number) - at).toBeLessThanOrEqual(settings.recheckMs + interval);
          }
        },
      ),
      { numRuns: 200 },
    );
  });

  it('notices an article removed from the listing instead of trusting counts that no longer add up', async () => {
    const listing = dayOf(100);
    let run = await countedRun(listing, undefined, { ...base, now: start, stopBefore: start });
    // An article deep in the watched stretch disappears while another arrives late next to it:
    // the counts alone would balance; the removal of the anchor itself cannot hide.
    const anchor = run.day?.anchors[2];
    expect(anchor).toBeDefined();
    listing.remove(anchor?.key as string);
    const now = start + 20 * minute;
    run = await countedRun(listing, run.day, { ...base, now, stopBefore: now - 7 * minute });
    expect(run.disagreed).toMatch(/no longer listed|not listed|fewer/);
  });

  it('reports fewer articles after a remembered one as a disagreement, not a negative deficit', () => {
    const day: CountedDayWithBeyond = {
      day: 'd',
      anchors: [{ key: 'a', at: start, older: 50, cleanAt: start }],
      bottomCleanAt: start,
    };
    const seen = new Map([['a', { article: listedArticle('a', start), older: 49 }]]);
    const fold = foldTopRead(day, { day: 'd', seen, pageEnds: [], deepest: undefined, reachedEnd: false }, start);
    expect(fold).toMatchObject({ kind: 'disagree', reason: expect.stringMatching(/removed/) });
  });

  it('drops a day once nothing on it can still arrive in time, and keeps one floor below what is watched', () => {
    const dayEnd = start;
    const anchors = [0, 1, 2, 3].map((i) => ({
      key: `k${i}`,
      at: start - i * 30 * minute,
      older: 300 - i * 100,
      cleanAt: start + 70 * minute,
    }));
    // Every stretch was checked 70 minutes after the day's end: all settled.
    expect(prune({ day: 'd', anchors }, dayEnd, base)).toBeUndefined();
    // The stretches above k0 and between k0 and k1 were last checked too early: they stay
    // watched, and k1, below them, is the floor; the settled stretch below k1 goes.
    const watched = anchors.map((anchor, i) => (i < 2 ? { ...anchor, cleanAt: start - 10 * minute } : anchor));
    expect(
      prune({ day: 'd', anchors: watched, bottomCleanAt: start + 70 * minute }, dayEnd, base)?.anchors.map(
        (a) => a.key,
      ),
    ).toEqual(['k0', 'k1']);
  });

  it('a recheck that meets a vanished anchor disagrees instead of reading past it', async () => {
    const day: CountedDayWithBeyond = {
      day: 'd',
      anchors: [
        { key: 'a', at: start, older: 20, cleanAt: start },
        { key: 'b', at: start - 10 * minute, older: 10, cleanAt: start },
        { key: 'c', at: start - 20 * minute, older: 0, cleanAt: start },
      ],
      bottomCleanAt: start,
    };
    const outcome = await recheck(day, { index: 0, delta: 2 }, async () => [], start + 20 * minute);
    expect(outcome.kind).toBe('disagree');
  });
});

describe('when a recheck is due', () => {
  const day: CountedDayWithBeyond = {
    day: 'd',
    anchors: [
      { key: 'a', at: start, older: 20, cleanAt: start },
      { key: 'b', at: start - 10 * minute, older: 10, cleanAt: start - 15 * minute + 5 },
    ],
    bottomCleanAt: start,
  };
  const settings = { ...base, dayEnd: Number.POSITIVE_INFINITY };

  it('is due one recheck period after a stretch was checked, even when this run started a few milliseconds early', () => {
    // Runs are scheduled 5 minutes apart, but each starts a little early or late.
    expect(recheckReason(day, { index: 0, delta: 1 }, start, settings)).toMatch(/last checked 15 min ago/);
    expect(recheckReason(day, { index: 0, delta: 1 }, start - 2 * minute, settings)).toBeUndefined();
  });
});

describe('a day with more anchors than it may keep', () => {
  it('thins the older half, never the anchor that carries the deficit, and points the deficit at it', () => {
    // 3,000 articles read from page 1, one page end every 2 articles, below the remembered one.
    const seen = new Map<string, { article: ReturnType<typeof listedArticle>; older: number }>();
    const ends: { article: ReturnType<typeof listedArticle>; older: number }[] = [];
    for (let i = 0; i < 3000; i++) {
      const item = { article: listedArticle(`k${String(i).padStart(5, '0')}`, start - i * 1000), older: 5000 - i };
      seen.set(item.article.key, item);
      if (i % 2 === 1) ends.push(item);
    }
    // The remembered anchor is the article read last; 7 articles arrived late below it.
    const passed = { key: 'k02999', at: start - 2999 * 1000, older: 5000 - 2999 - 7, cleanAt: start - 60 * minute };
    const floorAnchor = { key: 'old', at: start - 4000 * 1000, older: 10, cleanAt: start - 60 * minute };
    const fold = foldTopRead(
      { day: 'd', anchors: [passed, floorAnchor], beyond: 0 },
      { day: 'd', seen, pageEnds: ends, deepest: ends.at(-1), reachedEnd: false },
      start,
    );
    expect(fold.kind).toBe('counted');
    if (fold.kind !== 'counted') return;
    expect(fold.day.anchors.length).toBeLessThanOrEqual(maxDayAnchors);
    expect(fold.day.anchors[fold.deficit.index]?.key).toBe('k02999');
    expect(fold.deficit.delta).toBe(7);
    // Still newest first, counts strictly falling.
    fold.day.anchors.forEach((anchor, i) => {
      if (i > 0) expect(anchor.older).toBeLessThan((fold.day.anchors[i - 1] as { older: number }).older);
    });
  });
});

describe('the counts in their state item', () => {
  it('are thinned, never dropped, until several days of long keys fit the item', () => {
    const longKey = (day: number, i: number) => `id:${'x'.repeat(100)}-${day}-${String(i).padStart(4, '0')}`;
    const days = [0, 1, 2, 3].map((d) => ({
      day: `2026-11-2${d}`,
      anchors: Array.from({ length: maxDayAnchors }, (_, i) => ({
        key: longKey(d, i),
        at: start - i * 1000,
        older: 10 * (maxDayAnchors - i),
        cleanAt: start,
      })),
    }));
    expect(JSON.stringify(days).length).toBeGreaterThan(250_000);
    const fit = fitted(days);
    expect(JSON.stringify(fit).length).toBeLessThanOrEqual(250_000);
    expect(fit.map((day) => day.day)).toEqual(days.map((day) => day.day));
    for (const [i, day] of fit.entries()) {
      // The newest and the last anchor of every day stay: the watched window keeps its ends.
      expect(day.anchors[0]?.key).toBe(days[i]?.anchors[0]?.key);
      expect(day.anchors.at(-1)?.key).toBe(days[i]?.anchors.at(-1)?.key);
    }
  });
});
