import fc from 'fast-check';
import { DateTime } from 'luxon';
import { describe, expect, it } from 'vitest';
import { datesBetween, endOfDate, isProviderDate, previousDate, providerDate, startOfDate } from '#core/calendar';

const hour = 3_600_000;

describe('providerDate', () => {
  it('names the date in the provider zone, not in UTC', () => {
    const t = Date.UTC(2026, 10, 21, 16, 0); // 2026-11-22 01:00 in Seoul
    expect(providerDate(t, 'Asia/Seoul')).toBe('2026-11-22');
    expect(providerDate(t, 'UTC')).toBe('2026-11-21');
    expect(providerDate(t, 'America/Los_Angeles')).toBe('2026-11-21');
  });

  it('refuses an unknown zone', () => {
    expect(() => providerDate(0, 'Mars/Olympus')).toThrow(RangeError);
  });
});

describe('startOfDate and endOfDate', () => {
  it('bound a Seoul day at 15:00 UTC', () => {
    expect(startOfDate('2026-11-22', 'Asia/Seoul')).toBe(Date.UTC(2026, 10, 21, 15));
    expect(endOfDate('2026-11-22', 'Asia/Seoul')).toBe(Date.UTC(2026, 10, 22, 15));
  });

  it('give a 23-hour day when New York springs forward', () => {
    const start = startOfDate('2026-03-08', 'America/New_York');
    const end = endOfDate('2026-03-08', 'America/New_York');
    expect(start).toBe(Date.UTC(2026, 2, 8, 5));
    expect(end).toBe(Date.UTC(2026, 2, 9, 4));
    expect(end - start).toBe(23 * hour);
  });

  it('give a 25-hour day when New York falls back', () => {
    const start = startOfDate('2026-11-01', 'America/New_York');
    const end = endOfDate('2026-11-01', 'America/New_York');
    expect(end - start).toBe(25 * hour);
    expect(endOfDate('2026-10-31', 'America/New_York')).toBe(start);
  });

  it('start at the first existing time where midnight is skipped', () => {
    // Chile springs forward at midnight: 2026-09-06 begins at 01:00 local (-03:00).
    expect(startOfDate('2026-09-06', 'America/Santiago')).toBe(Date.UTC(2026, 8, 6, 4));
  });

  it.each(['2026-02-30', '2026-11-22T00:00', '22.11.2026', ''])('refuse %j', (bad) => {
    expect(() => startOfDate(bad, 'UTC')).toThrow(RangeError);
    expect(() => endOfDate(bad, 'UTC')).toThrow(RangeError);
  });

  it('contain exactly the instants of their provider date', () => {
    const zones = fc.constantFrom('UTC', 'Asia/Seoul', 'America/New_York', 'Europe/Berlin', 'Asia/Kathmandu');
    fc.assert(
      fc.property(fc.integer({ min: Date.UTC(1990, 0, 1), max: Date.UTC(2090, 0, 1) }), zones, (t, zone) => {
        const date = providerDate(t, zone);
        expect(startOfDate(date, zone)).toBeLessThanOrEqual(t);
        expect(endOfDate(date, zone)).toBeGreaterThan(t);
        expect(providerDate(endOfDate(date, zone), zone)).not.toBe(date);
      }),
    );
  });
});

describe('previousDate', () => {
  it('steps back over month, leap-day and year ends, and refuses a non-date', () => {
    expect(previousDate('2028-03-01')).toBe('2028-02-29');
    expect(previousDate('2027-01-01')).toBe('2026-12-31');
    expect(() => previousDate('2026-13-01')).toThrow(RangeError);
  });
});

describe('datesBetween', () => {
  it('lists every date, both ends included, across a month end', () => {
    expect(datesBetween('2026-02-27', '2026-03-02')).toEqual(['2026-02-27', '2026-02-28', '2026-03-01', '2026-03-02']);
  });

  it('knows leap years', () => {
    expect(datesBetween('2028-02-28', '2028-03-01')).toEqual(['2028-02-28', '2028-02-29', '2028-03-01']);
  });

  it('is one date for a one-day range and empty when reversed', () => {
    expect(datesBetween('2026-11-22', '2026-11-22')).toEqual(['2026-11-22']);
    expect(datesBetween('2026-11-23', '2026-11-22')).toEqual([]);
  });

  it('crosses DST changes without skipping or repeating a date', () => {
    expect(datesBetween('2026-10-31', '2026-11-02')).toEqual(['2026-10-31', '2026-11-01', '2026-11-02']);
  });

  it('refuses malformed bounds', () => {
    expect(() => datesBetween('2026-11-22', 'tomorrow')).toThrow(RangeError);
  });
});

describe('isProviderDate', () => {
  it('accepts real dates only', () => {
    expect(isProviderDate('2028-02-29')).toBe(true);
    expect(isProviderDate('2026-02-29')).toBe(false);
    expect(isProviderDate('2026-1-2')).toBe(false);
  });
});

describe('the calendar arithmetic without luxon', () => {
  // The reference: what datesBetween and previousDate computed through luxon before.
  const luxonDate = (date: string) => DateTime.fromISO(date, { zone: 'UTC' });
  const luxonBetween = (from: string, to: string): string[] => {
    const dates: string[] = [];
    for (let day = luxonDate(from); day <= luxonDate(to); day = day.plus({ days: 1 }))
      dates.push(day.toFormat('yyyy-MM-dd'));
    return dates;
  };
  const dates = fc
    .date({ min: new Date(Date.UTC(1000, 0, 1)), max: new Date(Date.UTC(9998, 11, 1)), noInvalidDate: true })
    .map((date) => date.toISOString().slice(0, 10));

  it('lists the same dates and steps back to the same date as luxon, across centuries and leap years (property)', () => {
    fc.assert(
      fc.property(dates, fc.integer({ min: -3, max: 70 }), (from, span) => {
        const to = luxonDate(from).plus({ days: span }).toFormat('yyyy-MM-dd');
        expect(datesBetween(from, to)).toEqual(luxonBetween(from, to));
        expect(previousDate(from)).toBe(luxonDate(from).minus({ days: 1 }).toFormat('yyyy-MM-dd'));
      }),
    );
  });

  it('reads years below 100 as written, not as 19xx', () => {
    expect(datesBetween('0099-12-31', '0100-01-01')).toEqual(['0099-12-31', '0100-01-01']);
    expect(previousDate('0050-03-01')).toBe('0050-02-28');
  });

  it('refuses what is no calendar date, as luxon did (property)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1000, max: 9999 }),
        fc.integer({ min: 0, max: 99 }),
        fc.integer({ min: 0, max: 99 }),
        (year, month, day) => {
          const date = `${year}-${String(month).padStart(2, '0')}-${String(day).padStart(2, '0')}`;
          if (luxonDate(date).isValid) expect(datesBetween(date, date)).toEqual([date]);
          else {
            expect(() => datesBetween(date, date)).toThrow(RangeError);
            expect(() => previousDate(date)).toThrow(RangeError);
          }
          expect(isProviderDate(date)).toBe(luxonDate(date).isValid);
        },
      ),
    );
  });
});
