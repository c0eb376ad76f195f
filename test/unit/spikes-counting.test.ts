/**
 * Counting new stories per hour (functions/core/spikes/record.ts): whatever order and however
 * often runs see the same stories, an hour counts each story once; a closed hour takes nothing
 * more; catch-up reads of old articles are not counted; hours no run watched are unknown.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  bucketOf,
  countStories,
  evaluateCompleted,
  evaluatedThrough,
  newSpikeRecord,
  type SpikeRecord,
  type StorySighting,
} from '#core/spikes/record';

const HOUR = 3_600_000;
const start = Date.UTC(2026, 2, 2, 10, 0);
const sighting = (storyId: string, at: number, publishedAt = at): StorySighting => ({
  storyId,
  firstSeenAt: at,
  publishedAt,
  title: `Story ${storyId}`,
  url: `https://news.example.com/${storyId}`,
  outlet: 'Example Wire',
});

describe('counting stories per hour', () => {
  it('counts each story once, however the runs split and repeat what they read', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: 40 }), { minLength: 1, maxLength: 120 }),
        fc.array(fc.integer({ min: 1, max: 5 }), { minLength: 1, maxLength: 10 }),
        (storyNumbers, runSizes) => {
          // Every story was first seen in the hour starting at `start` (the index fixed it).
          let record = newSpikeRecord('r', 'a', 'balanced', start - HOUR);
          let index = 0;
          let run = 0;
          while (index < storyNumbers.length) {
            const size = runSizes[run % runSizes.length] as number;
            // A run reads its share and, overlapping, some of what the last run read.
            const from = Math.max(0, index - 2);
            const batch = storyNumbers.slice(from, index + size).map((n) => sighting(`s${n}`, start + n * 1000));
            record = countStories(record, batch, start + 30 * 60_000 + run * 60_000).record;
            index += size;
            run += 1;
          }
          const open = record.open.find((entry) => entry.bucket === bucketOf(start));
          expect(open?.stories.length).toBe(new Set(storyNumbers).size);
        },
      ),
    );
  });

  it('a run that reads the same articles again changes nothing: stories, headlines, outlets', () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ story: fc.integer({ min: 0, max: 60 }), outlet: fc.integer({ min: 0, max: 9 }) }), {
          minLength: 1,
          maxLength: 150,
        }),
        (reads) => {
          // Copies of a story: the same story id from several outlets, each an article of its own.
          const batch = reads.map(({ story, outlet }, i) => ({
            ...sighting(`s${story}`, start + (i % 50) * 1000),
            url: `https://news.example.com/${story}/${outlet}`,
            outlet: `Outlet ${outlet}`,
          }));
          const first = countStories(newSpikeRecord('r', 'a', 'balanced', start - HOUR), batch, start + 50 * 60_000);
          const again = countStories(first.record, batch, start + 55 * 60_000);
          expect(again.counted).toBe(0);
          expect(again.record).toEqual(first.record);
        },
      ),
    );
  });

  it('evaluates an hour with its distinct stories, and a re-read after that changes nothing', () => {
    let record = newSpikeRecord('r', 'a', 'balanced', start - 2 * HOUR);
    const stories = ['a', 'b', 'c', 'a', 'b'].map((id, i) => sighting(id, start + i * 60_000));
    record = countStories(record, stories, start + 10 * 60_000).record;
    record = evaluateCompleted(record, start + HOUR + 60_000).record;
    const hourCount = () => record.detector.counts[bucketOf(start) - record.detector.start];
    expect(evaluatedThrough(record)).toBe(bucketOf(start));
    expect(hourCount()).toBe(3);
    // The next run reads the same articles again (overlap): the evaluated hour is still open for
    // late copies, and its count does not move.
    const again = countStories(record, stories, start + HOUR + 5 * 60_000);
    expect(again.counted).toBe(0);
    record = again.record;
    expect(hourCount()).toBe(3);
    // A story the index first saw in that hour but that this rule only read now is amended in.
    record = countStories(
      record,
      [sighting('d', start + 50 * 60_000, start + 50 * 60_000)],
      start + HOUR + 6 * 60_000,
    ).record;
    expect(hourCount()).toBe(4);
    // Two hours on, the hour is closed: a sweep reading it again adds nothing.
    const late = countStories(record, [sighting('e', start + 55 * 60_000)], start + 2 * HOUR + 60_000);
    expect(late.counted).toBe(0);
    expect(late.late).toBe(1);
  });

  it('does not count a catch-up read: articles published before the previous hour', () => {
    const record = newSpikeRecord('r', 'a', 'balanced', start);
    const now = start + 5 * HOUR;
    // The first run after an outage: the index sees these stories now, but they are hours old.
    const old = Array.from({ length: 50 }, (_, i) => sighting(`old${i}`, now, start + i * 60_000));
    const outcome = countStories(record, old, now);
    expect(outcome.counted).toBe(0);
    expect(outcome.late).toBe(50);
  });

  it('marks hours no run watched as unknown, not zero', () => {
    let record: SpikeRecord = newSpikeRecord('r', 'a', 'balanced', start - 3 * HOUR);
    record = countStories(record, [sighting('x', start - 2 * HOUR + 60_000)], start - 2 * HOUR + 60_000).record;
    // The last run was at start - 2h; the next one comes four hours later.
    const outcome = evaluateCompleted(record, start + 2 * HOUR + 60_000, { lastRunAt: start - 2 * HOUR + 60_000 });
    const counts = outcome.record.detector.counts.slice(-4);
    expect(counts).toEqual([1, -1, -1, -1]);
  });

  it("takes a left-behind record's quiet buckets as unknown whatever their length: the full passes count in hours", () => {
    const quarter = HOUR / 4;
    // A record of quarter-hour buckets that last counted at start - 2h, and a heartbeat whose full
    // passes went on through the hour before start: the rule was off meanwhile.
    let record: SpikeRecord = newSpikeRecord('r', 'a', 'balanced', start - 3 * HOUR, quarter);
    record = countStories(record, [sighting('x', start - 2 * HOUR + 60_000)], start - 2 * HOUR + 60_000).record;
    record = evaluateCompleted(record, start - 2 * HOUR + quarter + 60_000).record;
    const left = evaluateCompleted(record, start + 60_000, { lastRunAt: start - 60_000, evaluatedForAllUntil: start });
    // The quarter it last ran in was watched (zero); the six after it were not.
    expect(left.record.detector.counts.slice(-8)).toEqual([1, 0, ...Array(6).fill(-1)]);
    // Not left behind (the passes ended where it did): the same quiet buckets were watched, zero.
    const kept = evaluateCompleted(record, start + 60_000, {
      lastRunAt: start - 60_000,
      evaluatedForAllUntil: start - 2 * HOUR + quarter,
    });
    expect(kept.record.detector.counts.slice(-7)).toEqual(Array(7).fill(0));
  });

  it('ends an episode still open when the rule was idle for weeks, so its alert is offered no more', () => {
    const idle: SpikeRecord = {
      ...newSpikeRecord('r', 'a', 'balanced', start),
      alert: {
        episodeId: 'e1',
        openedAt: bucketOf(start),
        since: bucketOf(start),
        preset: 'balanced',
        bucketMs: HOUR,
        observed: 9,
        expected: 1,
        bucketCount: 9,
        bucketExpected: 1,
        outletCount: 3,
        topStories: [],
        topOutlets: [],
        stage: 'spike',
        storiesSoFar: 9,
      },
    };
    const weeks = evaluateCompleted(idle, start + 6 * 7 * 24 * HOUR).record;
    expect(weeks.alert).toMatchObject({ episodeId: 'e1', settled: true, closedAt: bucketOf(start) });
    // A day idle is no reason: the episode stays as it was.
    expect(evaluateCompleted(idle, start + 24 * HOUR).record.alert?.settled).toBeUndefined();
  });
});
