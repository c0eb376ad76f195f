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
  LATE_INDEXING,
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

  it('indexes a small share late inside the overlap and a few beyond it', () => {
    const delays = arrivals.map((a) => a.appearsAt - a.publishedAt);
    const short = delays.filter((d) => d > 0 && d <= LATE_INDEXING.withinMs).length;
    const beyond = delays.filter((d) => d > LATE_INDEXING.withinMs).length;
    expect(short / arrivals.length).toBeCloseTo(LATE_INDEXING.shortShare, 2);
    expect(beyond).toBeGreaterThan(10);
    expect(beyond).toBeLessThan(80);
    expect(Math.max(...delays)).toBeLessThanOrEqual(LATE_INDEXING.beyondMaxMs);
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
      maxMs: 100,
      n: 10,
    });
  });
});

describe('day targets', () => {
  const scenario = (overrides: Partial<DayScenarioResult>): DayScenarioResult => ({
    schedule: 'every 5 min',
    intervalMinutes: 5,
    mode: 'incremental',
    fullSweepMinutes: 360,
    method: 'run',
    runs: 288,
    pages: 2000,
    floor: 1000,
    ratio: 2,
    articlesRead: 150_000,
    sweeps: 4,
    freshness: { p50Ms: 150_000, p95Ms: 290_000, maxMs: 900_000, n: 1000 },
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
    late: LATE_INDEXING,
    defaultSweepMinutes: 360,
    scenarios: [
      scenario({ mode: 'today', method: 'formula', fullSweepMinutes: 0, pages: 144_000, ratio: 144 }),
      ...scenarios,
    ],
    formulaChecks: [],
    readingImplementation: 'test',
    wallMs: 1,
  });

  it('is met at ≤ 3× the floor with nothing lost, and says which schedules were not run', () => {
    const [five, one] = providerDayTargets(results([scenario({})]), ['every 5 min', 'every 1 min']);
    expect(five).toMatchObject({ met: true, measured: expect.stringContaining('2.00×') });
    expect(five?.measured).toContain('p95 4.8 min');
    expect(one).toMatchObject({ met: undefined, measured: 'not run' });
  });

  it('is MISSED with the reason: over 3×, stopped at the page budget, or a notification lost', () => {
    const check = (overrides: Partial<DayScenarioResult>) =>
      providerDayTargets(results([scenario(overrides)]), ['every 5 min'])[0];
    expect(check({ pages: 3500, ratio: 3.5 })).toMatchObject({
      met: false,
      note: expect.stringMatching(/4 full sweeps/),
    });
    expect(check({ stopped: 'stopped at 09:00', ratio: 6.1 })).toMatchObject({
      met: false,
      note: expect.stringMatching(/page budget/),
    });
    expect(check({ deliveries: { expected: 10, delivered: 9, missing: 1, duplicates: 0 } })).toMatchObject({
      met: false,
      note: expect.stringMatching(/1 notifications missing/),
    });
  });

  it('renders a row per scenario and marks the computed one', () => {
    const section = providerDaySection(results([scenario({})]), '6. A simulated provider day');
    const [table] = section.tables;
    expect(table?.rows).toHaveLength(2);
    expect(table?.rows[0]?.[2]).toBe('144,000 †');
    expect(section.findings?.join(' ')).toContain('exactly once');
  });
});
