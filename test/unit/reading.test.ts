import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ReadingState, Watermark } from '#core/ports';
import {
  type DayObservation,
  earliestScheduledRead,
  minOrderEvidence,
  nextOrder,
  OrderCheck,
  planRead,
  type ReadSettings,
} from '#core/reading/plan';

const minute = 60_000;
/** 2026-11-22 09:00 in Seoul. */
const now = Date.parse('2026-11-22T09:00:00+09:00');
const settings: ReadSettings = {
  providerTimeZone: 'Asia/Seoul',
  lateArrivalMs: 60 * minute,
  fullSweepMs: 360 * minute,
  incrementalOverlapMs: 2 * minute,
};
const watermark: Watermark = { at: now - 5 * minute, version: 7, updatedAt: now - 4 * minute, runId: 'run-6' };
const reading: ReadingState = {
  order: 'newest-first',
  lastSweepAt: now - 60 * minute,
  runId: 'run-6',
  runStatus: 'completed',
  watermarkVersion: 7,
  resume: [],
  updatedAt: now - 4 * minute,
};
const plan = (overrides: { reading?: ReadingState | undefined; watermark?: Watermark; settings?: ReadSettings } = {}) =>
  planRead({
    reading: 'reading' in overrides ? overrides.reading : reading,
    watermark: overrides.watermark ?? watermark,
    watermarkAt: (overrides.watermark ?? watermark).at,
    now,
    settings: overrides.settings ?? settings,
  });

describe('planRead', () => {
  it('reads incrementally after a completed run that left a known order, stopping at watermark - overlap', () => {
    expect(plan()).toEqual({
      mode: 'incremental',
      order: 'newest-first',
      from: watermark.at - settings.lateArrivalMs,
      stopBefore: watermark.at - settings.incrementalOverlapMs,
      counted: false,
    });
  });

  describe('with counted reading (a source that serves pages by number, LATE_RECHECK_MINUTES > 0)', () => {
    const countedSettings: ReadSettings = { ...settings, lateRecheckMs: 15 * minute };
    const counts = {
      days: [
        {
          day: '2026-11-22',
          anchors: [{ key: 'id:1', at: now - 30 * minute, older: 10, cleanAt: now - 12 * minute }],
          bottomCleanAt: now - 20 * minute,
        },
      ],
    };
    const countedPlan = (state: ReadingState | undefined, at = now) =>
      planRead({
        reading: state,
        watermark,
        watermarkAt: watermark.at,
        now: at,
        settings: countedSettings,
        countable: true,
      });

    it('reads incrementally when the sweep period is up or a new provider day began: the counts find late articles', () => {
      const periodUp = { ...reading, lastSweepAt: now - 400 * minute, counted: counts };
      expect(countedPlan(periodUp)).toMatchObject({ mode: 'incremental', counted: true });
      const yesterday = { ...reading, lastSweepAt: now - 10 * 60 * minute, counted: counts };
      expect(countedPlan(yesterday)).toMatchObject({ mode: 'incremental', counted: true });
    });

    it('still sweeps on the period for a week after the counts last disagreed: a removal made up for by an arrival shows in no count', () => {
      const periodUp = (disagreedAgo: number) => ({
        ...reading,
        lastSweepAt: now - 400 * minute,
        counted: { ...counts, disagreedAt: now - disagreedAgo },
      });
      expect(countedPlan(periodUp(3 * 24 * 60 * minute))).toMatchObject({
        mode: 'sweep',
        counted: true,
        reason: expect.stringMatching(/the provider's counts disagreed 72 h ago/),
      });
      // Within the sweep period: incremental, counted; a week on: the counts alone again.
      expect(countedPlan({ ...periodUp(60 * minute), lastSweepAt: now - 300 * minute })).toMatchObject({
        mode: 'incremental',
        counted: true,
      });
      expect(countedPlan(periodUp(7 * 24 * 60 * minute))).toMatchObject({ mode: 'incremental', counted: true });
    });

    it('still sweeps on the period while an audience wants update notices: counts never see an article revised in place', () => {
      const periodUp = { ...reading, lastSweepAt: now - 400 * minute, counted: counts };
      const withUpdates = planRead({
        reading: periodUp,
        watermark,
        watermarkAt: watermark.at,
        now,
        settings: countedSettings,
        countable: true,
        updatesWanted: true,
      });
      expect(withUpdates).toMatchObject({
        mode: 'sweep',
        counted: true,
        reason: expect.stringMatching(/update notices/),
      });
      // Within the period: incremental, counted.
      const yesterday = { ...reading, lastSweepAt: now - 300 * minute, counted: counts };
      expect(
        planRead({
          reading: yesterday,
          watermark,
          watermarkAt: watermark.at,
          now,
          settings: countedSettings,
          countable: true,
          updatesWanted: true,
        }),
      ).toMatchObject({ mode: 'incremental', counted: true });
    });

    it('matches back to the oldest watched stretch minus the late-arrival window, not only to the watermark', () => {
      const plan = countedPlan({ ...reading, counted: counts });
      // The bottom stretch was last clean 20 minutes ago: a late article there can be that much
      // older than one the watermark alone would reach.
      expect(plan.from).toBe(now - 20 * minute - settings.lateArrivalMs);
    });

    it('starts counting with one sweep read in order, and still sweeps after a failed run', () => {
      expect(countedPlan(reading)).toMatchObject({
        mode: 'sweep',
        counted: true,
        reason: expect.stringMatching(/counted reading starts/),
      });
      expect(countedPlan({ ...reading, counted: counts, runStatus: 'failed' })).toMatchObject({
        mode: 'sweep',
        counted: true,
      });
    });

    it('reads without counting while paused after a disagreement, and starts again with a sweep once the pause is over', () => {
      const paused = {
        ...reading,
        counted: { days: [], off: { reason: 'articles were removed', since: now - 60 * minute } },
      };
      expect(countedPlan(paused)).toMatchObject({ mode: 'incremental', counted: false });
      expect(countedPlan(paused, now + 6 * 60 * minute)).toMatchObject({ mode: 'sweep', counted: true });
    });

    it('does not count without a source that serves pages by number, or with LATE_RECHECK_MINUTES=0', () => {
      const state = { ...reading, counted: counts };
      expect(
        planRead({
          reading: state,
          watermark,
          watermarkAt: watermark.at,
          now,
          settings: countedSettings,
          countable: false,
        }),
      ).toMatchObject({ counted: false });
      expect(
        planRead({
          reading: state,
          watermark,
          watermarkAt: watermark.at,
          now,
          settings: { ...countedSettings, lateRecheckMs: 0 },
          countable: true,
        }),
      ).toMatchObject({ counted: false });
    });
  });

  it.each([
    ['no reading state', { reading: undefined }, 'no reading state'],
    ['an unknown order', { reading: { ...reading, order: 'unknown' as const } }, 'order is not known'],
    ['a failed run', { reading: { ...reading, runStatus: 'failed' as const } }, 'previous run ended failed'],
    ['a checkpointed run', { reading: { ...reading, runStatus: 'checkpointed' as const } }, 'ended checkpointed'],
    ['a watermark moved by others', { watermark: { ...watermark, version: 9 } }, 'watermark was moved'],
    ['no sweep yet', { reading: { ...reading, lastSweepAt: undefined } }, 'no full sweep yet'],
    ['the period up', { reading: { ...reading, lastSweepAt: now - 360 * minute } }, 'started 360 min ago'],
    ['sweeps switched off', { settings: { ...settings, fullSweepMs: 0 } }, 'FULL_SWEEP_MINUTES is 0'],
  ])('sweeps after %s', (_name, overrides, reason) => {
    const result = plan(overrides);
    expect(result.mode).toBe('sweep');
    expect(result.mode === 'sweep' && result.reason).toContain(reason);
  });

  it('sweeps on the first run of a provider day, back to the last sweep minus the late-arrival window', () => {
    // The last sweep started at 23:50 the day before (Seoul), within the period.
    const lastSweepAt = Date.parse('2026-11-21T23:50:00+09:00');
    const early = Date.parse('2026-11-22T00:05:00+09:00');
    const result = planRead({
      reading: { ...reading, lastSweepAt },
      watermark: { ...watermark, at: early - 5 * minute },
      watermarkAt: early - 5 * minute,
      now: early,
      settings,
    });
    expect(result).toMatchObject({ mode: 'sweep', from: lastSweepAt - settings.lateArrivalMs });
    expect(result.mode === 'sweep' && result.reason).toContain('first run of provider day 2026-11-22');
  });

  it('never lets a sweep reach further back than two days before the watermark', () => {
    const result = plan({ reading: { ...reading, lastSweepAt: now - 30 * 24 * 60 * minute } });
    expect(result.from).toBe(watermark.at - 2 * 24 * 60 * minute - settings.lateArrivalMs);
  });

  it('reads nothing published before earliestScheduledRead, whatever the state, settings and clock (explain relies on it)', () => {
    const at = fc.integer({ min: now - 10 * 24 * 60 * minute, max: now });
    const counted = fc.record({
      days: fc.array(
        fc.record({
          day: fc.constant('2026-11-21'),
          anchors: fc.array(fc.record({ key: fc.constant('id:1'), at, older: fc.nat(50), cleanAt: at }), {
            maxLength: 3,
          }),
          bottomCleanAt: fc.option(at, { nil: undefined }),
        }),
        { maxLength: 3 },
      ),
    });
    const state = fc.record({
      order: fc.constantFrom('newest-first' as const, 'oldest-first' as const, 'unknown' as const),
      lastSweepAt: fc.option(at, { nil: undefined }),
      runId: fc.constant('run-6'),
      runStatus: fc.constantFrom('completed' as const, 'incomplete' as const),
      watermarkVersion: fc.constantFrom(7, 8),
      resume: fc.constant([]),
      updatedAt: at,
      counted: fc.option(counted, { nil: undefined }),
    });
    fc.assert(
      fc.property(
        fc.option(state, { nil: undefined }),
        at,
        fc.integer({ min: 0, max: 48 * 60 }),
        fc.constantFrom(0, 15, 360),
        fc.constantFrom(0, 15),
        fc.boolean(),
        (readingState, watermarkAt, lateMinutes, sweepMinutes, recheckMinutes, countable) => {
          const chosen: ReadSettings = {
            ...settings,
            lateArrivalMs: lateMinutes * minute,
            fullSweepMs: sweepMinutes * minute,
            lateRecheckMs: recheckMinutes * minute,
          };
          const result = planRead({
            reading: readingState as ReadingState | undefined,
            watermark: { ...watermark, at: watermarkAt },
            watermarkAt,
            now,
            settings: chosen,
            countable,
          });
          expect(result.from).toBeGreaterThanOrEqual(
            earliestScheduledRead(readingState as ReadingState | undefined, watermarkAt, chosen),
          );
        },
      ),
    );
  });

  it('stops no earlier than the cutoff when the overlap is longer than the late-arrival window', () => {
    const result = plan({ settings: { ...settings, incrementalOverlapMs: 600 * minute } });
    expect(result).toMatchObject({ mode: 'incremental', stopBefore: watermark.at - settings.lateArrivalMs });
  });
});

describe('OrderCheck', () => {
  it('holds an order exactly while the times fit it (ties fit both)', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 20 }), { maxLength: 40 }), (times) => {
        const check = new OrderCheck();
        for (const time of times) check.add(time);
        const descending = times.every((time, i) => i === 0 || time <= (times[i - 1] ?? time));
        const ascending = times.every((time, i) => i === 0 || time >= (times[i - 1] ?? time));
        expect(check.holds('newest-first')).toBe(descending);
        expect(check.holds('oldest-first')).toBe(ascending);
      }),
    );
  });

  it(`learns an order only from ${minOrderEvidence} steps in one direction and none against it`, () => {
    const learn = (times: number[]) => {
      const check = new OrderCheck();
      for (const time of times) check.add(time);
      return check.learned();
    };
    const steps = Array.from({ length: minOrderEvidence + 1 }, (_, i) => i);
    expect(learn(steps)).toBe('oldest-first');
    expect(learn([...steps].reverse())).toBe('newest-first');
    expect(learn(steps.slice(0, minOrderEvidence))).toBeUndefined();
    expect(learn([5, 5, 5, 5])).toBeUndefined();
    expect(learn([...steps, 0])).toBe('unknown');
  });
});

describe('nextOrder', () => {
  const day = (overrides: Partial<DayObservation>): DayObservation => ({
    full: true,
    learned: undefined,
    broke: false,
    ...overrides,
  });

  it('keeps the order when nothing new was learned, and learns from full reads', () => {
    expect(nextOrder('newest-first', [day({ full: false })])).toBe('newest-first');
    expect(nextOrder('unknown', [day({ learned: 'oldest-first' })])).toBe('oldest-first');
    expect(nextOrder('newest-first', [day({ learned: 'oldest-first', broke: true })])).toBe('oldest-first');
  });

  it('forgets the order when a read broke it without a full read to learn from, or full reads disagree', () => {
    expect(nextOrder('newest-first', [day({ full: false, broke: true })])).toBe('unknown');
    expect(nextOrder('newest-first', [day({ learned: 'unknown' })])).toBe('unknown');
    expect(nextOrder('unknown', [day({ learned: 'newest-first' }), day({ learned: 'oldest-first' })])).toBe('unknown');
  });
});
