/**
 * The pure parts of the simulated provider day (bench/provider-day.ts): the daily curve, the
 * arrivals, the floor and today's page formula, freshness percentiles, and the target verdicts.
 * The day itself runs in `npm run bench`; nothing here reads the clock.
 */
import { describe, expect, it } from 'vitest';
import {
  DAILY_CURVE,
  type DayScenarioResult,
  dayArrivals,
  floorPages,
  freshnessOf,
  hourlyCounts,
  LATE_AFTER_MS,
  LATENESS,
  type ProviderDayResults,
  ProviderDays,
  todayPagesPerRun,
  wholeDayPages,
} from '../../bench/provider-day.ts';
import { providerDaySection, providerDayTargets } from '../../bench/sections.ts';
import { ZoneCalendar } from '../../sandbox/news-simulator-data.ts';

const seoul = new ZoneCalendar('Asia/Seoul');
const dayStart = seoul.startOf('2026-11-23');
const MINUTE = 60_000;

describe('daily curve', () => {
  it.each([1, 23, 10_000, 100_000, 99_999])('gives hours that add up to exactly %i articles', (total) => {
    const hours = hourlyCounts(total);
    expect(hours).toHaveLength(24);
    expect(hours.reduce((sum, n) => sum + n, 0)).toBe(total);
    expect(hours.every((n) => Number.isInteger(n) && n >= 0)).toBe(true);
  });

  it('is low at night and peaks mid-morning and in the early evening', () => {
    const hours = hourlyCounts(100_000);
    const at = (hour: number) => hours[hour] ?? 0;
    const peak = Math.max(...hours);
    expect(at(9)).toBe(peak);
    expect(at(18)).toBeGreaterThan(at(13));
    expect(at(18)).toBeGreaterThan(at(22));
    expect(at(3)).toBeLessThan(peak / 8);
    expect(Math.max(...DAILY_CURVE) / Math.min(...DAILY_CURVE)).toBe(8.5);
  });
});

describe('arrivals', () => {
  const arrivals = dayArrivals({ total: 20_000, dayStart, seed: 3 });

  it('puts every article on the day, sorted, never listed before its publication time', () => {
    expect(arrivals).toHaveLength(20_000);
    expect(arrivals.every((a) => a.publishedAt >= dayStart && a.publishedAt < dayStart + 24 * 60 * MINUTE)).toBe(true);
    expect(arrivals.every((a, i) => i === 0 || (arrivals[i - 1]?.publishedAt ?? 0) <= a.publishedAt)).toBe(true);
    expect(arrivals.every((a) => a.appearsAt >= a.publishedAt)).toBe(true);
  });

  it.each(['typical', 'heavy'] as const)('lists articles late by the %s distribution, bucket by bucket', (name) => {
    const late = LATENESS[name];
    const day = dayArrivals({ total: 100_000, dayStart, seed: 3, late });
    const delays = day.map((a) => a.appearsAt - a.publishedAt);
    for (const bucket of late.buckets) {
      const inBucket = delays.filter((d) => d >= bucket.minMs && d < bucket.maxMs).length;
      // 100,000 draws: within a few standard deviations of the share.
      expect(Math.abs(inBucket / day.length - bucket.share)).toBeLessThan(
        4 * Math.sqrt(bucket.share / day.length) + 0.001,
      );
    }
    expect(Math.max(...delays)).toBeLessThan(60 * MINUTE);
    // "Late" is listed beyond the 2-minute overlap: the two upper buckets.
    const lateShare = delays.filter((d) => d > LATE_AFTER_MS).length / day.length;
    expect(lateShare).toBeCloseTo((late.buckets[1]?.share ?? 0) + (late.buckets[2]?.share ?? 0), 2);
  });

  it('lists every article on time with no lateness', () => {
    const day = dayArrivals({ total: 1_000, dayStart, seed: 3, late: LATENESS.none });
    expect(day.every((a) => a.appearsAt === a.publishedAt)).toBe(true);
  });

  it('is the same day for the same seed', () => {
    expect(dayArrivals({ total: 500, dayStart, seed: 3 })).toEqual(dayArrivals({ total: 500, dayStart, seed: 3 }));
    expect(dayArrivals({ total: 500, dayStart, seed: 4 })).not.toEqual(dayArrivals({ total: 500, dayStart, seed: 3 }));
  });
});

describe('page arithmetic', () => {
  it('floor: Σ over runs of ceil(new / size) + 1', () => {
    expect(floorPages([], 100)).toBe(0);
    expect(floorPages([0, 1, 100, 101, 250], 100)).toBe(1 + 2 + 2 + 3 + 4);
  });

  it("a whole day's pages: one for an empty day, one more when the last page is full", () => {
    expect(wholeDayPages(0, 100)).toBe(1);
    expect(wholeDayPages(1, 100)).toBe(1);
    expect(wholeDayPages(99, 100)).toBe(1);
    expect(wholeDayPages(100, 100)).toBe(2);
    expect(wholeDayPages(101, 100)).toBe(2);
    expect(wholeDayPages(100_000, 100)).toBe(1001);
  });

  it("today's reading pays for every date of each run's window, the day before during the first hour", () => {
    const yesterday = dayStart - 24 * 60 * MINUTE;
    const arrivals = [
      ...Array.from({ length: 250 }, (_, i) => ({
        publishedAt: yesterday + i * MINUTE,
        appearsAt: yesterday + i * MINUTE,
      })),
      { publishedAt: dayStart + 1 * MINUTE, appearsAt: dayStart + 1 * MINUTE },
      { publishedAt: dayStart + 2 * MINUTE, appearsAt: dayStart + 70 * MINUTE },
    ];
    const days = new ProviderDays(arrivals, seoul);
    const runTimes = [dayStart, dayStart + 5 * MINUTE, dayStart + 65 * MINUTE, dayStart + 70 * MINUTE];
    const pages = todayPagesPerRun({
      runTimes,
      previousRun: dayStart - 5 * MINUTE,
      lateArrivalMs: 60 * MINUTE,
      pageSize: 100,
      days,
    });
    // Yesterday (250 articles: 3 pages) is in the window of every run whose previous run was less
    // than an hour after midnight (00:00, 00:05, and 01:05 after 00:05); today holds 0, 1 or 2
    // articles (1 page). The late article is listed from 01:10 on.
    expect(pages).toEqual([4, 4, 4, 1]);
    expect(days.appearedBetween(dayStart, dayStart + 65 * MINUTE)).toBe(1);
    expect(days.listedOn('2026-11-23', dayStart + 70 * MINUTE)).toBe(2);
  });

  it('freshness percentiles interpolate and report how many were measured', () => {
    expect(freshnessOf([])).toBeUndefined();
    expect(freshnessOf([10, 20, 30, 40, 50, 60, 70, 80, 90, 100])).toEqual({
      p50Ms: 55,
      p95Ms: expect.closeTo(95.5, 6),
      p99Ms: expect.closeTo(99.1, 6),
      maxMs: 100,
      n: 10,
    });
  });
});

describe('day targets', () => {
  const fresh = (p99Minutes: number, maxMinutes: number) => ({
    p50Ms: 60_000,
    p95Ms: 120_000,
    p99Ms: p99Minutes * MINUTE,
    maxMs: maxMinutes * MINUTE,
    n: 1000,
  });
  const scenario = (overrides: Partial<DayScenarioResult>): DayScenarioResult => ({
    schedule: 'every 5 min',
    intervalMinutes: 5,
    lateness: 'typical',
    reading: 'counted',
    fullSweepMinutes: 360,
    recheckMinutes: 15,
    method: 'run',
    runs: 288,
    pages: 2000,
    floor: 1000,
    ratio: 2,
    articlesRead: 150_000,
    sweeps: 0,
    rechecks: 96,
    recheckPages: 700,
    lateFound: 4000,
    freshness: { p50Ms: 150_000, p95Ms: 290_000, p99Ms: 400_000, maxMs: 900_000, n: 1000 },
    lateFreshness: fresh(14, 16),
    deliveries: { expected: 10, delivered: 10, missing: 0, duplicates: 0 },
    wallMs: 1,
    ...overrides,
  });
  const results = (scenarios: DayScenarioResult[]): ProviderDayResults => ({
    articlesPerDay: 100_000,
    pageSize: 100,
    rules: 300,
    audiences: 75,
    timeZone: 'Asia/Seoul',
    day: '2026-11-23',
    lateness: [LATENESS.typical],
    formulaLateness: 'typical',
    defaultSweepMinutes: 360,
    scenarios: [
      scenario({ reading: 'today', method: 'formula', fullSweepMinutes: 0, pages: 144_000, ratio: 144 }),
      ...scenarios,
    ],
    formulaChecks: [],
    readingImplementation: 'test',
    wallMs: 1,
  });

  it('is met at ≤ 3× the floor, late p99 within the bound and max ≤ 30 min, and says which schedules were not run', () => {
    const targets = providerDayTargets(results([scenario({})]), ['every 5 min', 'every 1 min']);
    expect(targets[0]).toMatchObject({ met: true, measured: expect.stringContaining('2.00×') });
    expect(targets[1]).toMatchObject({ met: true, measured: expect.stringContaining('14.0 min') });
    expect(targets[2]).toMatchObject({ met: undefined, measured: 'not run' });
    expect(targets[3]).toMatchObject({ met: undefined, measured: 'not run' });
    expect(targets[4]).toMatchObject({ met: undefined, measured: 'not run' });
    const both = providerDayTargets(
      results([scenario({}), scenario({ schedule: 'every 1 min', intervalMinutes: 1, lateFreshness: fresh(9, 12) })]),
      ['every 5 min', 'every 1 min'],
    );
    expect(both.map((t) => t.met)).toEqual([true, true, true, true, true]);
  });

  it('is MISSED with the reason: over 3×, stopped at the page budget, a notification lost, or late articles too slow', () => {
    const check = (overrides: Partial<DayScenarioResult>) =>
      providerDayTargets(results([scenario(overrides)]), ['every 5 min']);
    expect(check({ pages: 3500, ratio: 3.5 })[0]).toMatchObject({
      met: false,
      note: expect.stringMatching(/rechecks read/),
    });
    expect(check({ stopped: 'stopped at 09:00', ratio: 6.1 })[0]).toMatchObject({
      met: false,
      note: expect.stringMatching(/page budget/),
    });
    expect(check({ deliveries: { expected: 10, delivered: 9, missing: 1, duplicates: 0 } })[0]).toMatchObject({
      met: false,
      note: expect.stringMatching(/missing or sent twice/),
    });
    expect(check({ lateFreshness: fresh(15.5, 20) })[1]).toMatchObject({
      met: false,
      note: expect.stringMatching(/LATE_RECHECK_MINUTES/),
    });
  });

  it('renders the pages and the freshness of every scenario, and marks the computed one', () => {
    const section = providerDaySection(results([scenario({})]), '6. A simulated provider day');
    const [pages, freshness] = section.tables;
    expect(pages?.rows).toHaveLength(2);
    expect(pages?.rows[0]?.[3]).toBe('144,000 †');
    expect(freshness?.rows[1]?.slice(-4)).toEqual(['1.0 min', '2.0 min', '14.0 min', '16.0 min']);
    expect(section.findings?.join(' ')).toContain('exactly once');
  });
});
