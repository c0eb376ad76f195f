/**
 * The fast timestamp path (timestamps.ts) must give luxon's answer for everything it reads and
 * hand everything else to luxon. The reference is `parseTimestampWithLuxon`, the parser as it was
 * before the fast path. luxon reads a wall-clock time that occurs twice (autumn) with the offset
 * in effect at `Settings.now()`, so every property pins that clock to a winter, a summer and a
 * transition-day instant: the tests never depend on today's date.
 */
import fc from 'fast-check';
import { DateTime, Settings } from 'luxon';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { parseTimestamp, parseTimestampWithLuxon } from '#provider/timestamps';

const realNow = Settings.now;
afterEach(() => {
  Settings.now = realNow;
  vi.restoreAllMocks();
});

/** Pins luxon's clock (and so the fast path's) for one reading. */
const at = (now: number) => {
  Settings.now = () => now;
};

const hour = 3_600_000;
const zones = [
  'UTC',
  'Asia/Seoul',
  'America/New_York',
  'Europe/Berlin',
  'Europe/London',
  'Australia/Lord_Howe',
  'America/St_Johns',
  'Pacific/Chatham',
  'Asia/Kolkata',
] as const;
const dstZones = ['America/New_York', 'Europe/Berlin', 'Australia/Lord_Howe', 'America/St_Johns', 'Pacific/Chatham'];
const clocks = fc.constantFrom(
  Date.UTC(2026, 0, 15, 12),
  Date.UTC(2026, 6, 15, 12),
  Date.UTC(2026, 10, 1, 6, 30),
  Date.UTC(2031, 2, 30, 1, 30),
);

/** Instants at which `zone` changes its offset between 2000 and 2040, found with luxon. */
function transitions(zone: string): number[] {
  const offset = (t: number) => DateTime.fromMillis(t, { zone }).offset;
  const found: number[] = [];
  for (let day = Date.UTC(2000, 0, 1); day < Date.UTC(2040, 0, 1); day += 7 * 24 * hour) {
    if (offset(day) === offset(day + 7 * 24 * hour)) continue;
    let low = day;
    let high = day + 7 * 24 * hour;
    while (high - low > 60_000) {
      const middle = low + Math.floor((high - low) / 120_000) * 60_000;
      if (offset(middle) === offset(low)) low = middle;
      else high = middle;
    }
    found.push(high);
  }
  return found;
}
const transitionsByZone = new Map(dstZones.map((zone) => [zone, transitions(zone)]));

/** A wall-clock time within three hours of one of the zone's DST changes: gaps and repeats. */
const nearTransition = fc.constantFrom(...dstZones).chain((zone) =>
  fc
    .record({
      at: fc.constantFrom(...(transitionsByZone.get(zone) ?? [])),
      minutes: fc.integer({ min: -180, max: 180 }),
      second: fc.integer({ min: 0, max: 59 }),
    })
    .map(({ at: instant, minutes, second }) => {
      const before = DateTime.fromMillis(instant - 1, { zone }).offset;
      const wallClock = DateTime.fromMillis(instant + before * 60_000 + minutes * 60_000, { zone: 'UTC' }).set({
        second,
      });
      return { zone, wallClock };
    }),
);

const instants = fc.integer({ min: Date.UTC(1980, 0, 1), max: Date.UTC(2100, 0, 1) });

/** The forms the fast path reads, written from an instant in a writer's zone. */
const commonForms = (ms: number, writerZone: string, fractionDigits: number): string[] => {
  const local = DateTime.fromMillis(ms, { zone: writerZone });
  const fraction = String(ms % 1000)
    .padStart(3, '0')
    .padEnd(fractionDigits, '7')
    .slice(0, fractionDigits);
  const wall = local.toFormat("yyyy-MM-dd'T'HH:mm:ss");
  return [
    local.toISO() ?? '',
    local.toISO({ suppressMilliseconds: true }) ?? '',
    local.toISO({ format: 'basic' }) ?? '',
    `${wall}.${fraction}${local.toFormat('ZZ')}`,
    `${wall},${fraction}${local.toFormat('ZZZ')}`,
    `${wall}${local.toFormat('ZZ').slice(0, 3)}`,
    `${local.toFormat("yyyy-MM-dd'T'HH:mm")}${local.toFormat('ZZ')}`,
    `${local.toFormat('yyyy-MM-dd HH:mm:ss')}${local.toFormat('ZZ')}`,
    `${local.toFormat('yyyy-MM-dd HH:mm:ss')}Z`,
    `${DateTime.fromMillis(ms, { zone: 'UTC' }).toFormat("yyyy-MM-dd't'HH:mm:ss.SSS")}z`,
    wall,
    `${wall}.${fraction}`,
    local.toFormat('yyyy-MM-dd HH:mm:ss'),
    local.toFormat('yyyy-MM-dd HH:mm'),
    local.toFormat('yyyy-MM-dd'),
    local.toFormat('yyyyMMddHHmmss'),
    local.toFormat('yyyyMMdd'),
  ];
};

describe('the fast timestamp path', () => {
  it('equals luxon on every common form of arbitrary instants, zones and clocks', () => {
    fc.assert(
      fc.property(
        instants,
        fc.constantFrom(...zones),
        fc.constantFrom(...zones),
        fc.integer({ min: 1, max: 12 }),
        clocks,
        (ms, writerZone, providerZone, fractionDigits, now) => {
          at(now);
          for (const form of commonForms(ms, writerZone, fractionDigits)) {
            expect(parseTimestamp(form, providerZone), `${form} in ${providerZone}`).toBe(
              parseTimestampWithLuxon(form, providerZone),
            );
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it('equals luxon for wall-clock times around DST changes, skipped and repeated hours included', () => {
    fc.assert(
      fc.property(nearTransition, clocks, ({ zone, wallClock }, now) => {
        at(now);
        for (const form of [
          wallClock.toFormat("yyyy-MM-dd'T'HH:mm:ss"),
          wallClock.toFormat('yyyy-MM-dd HH:mm'),
          wallClock.toFormat('yyyyMMddHHmmss'),
        ]) {
          expect(parseTimestamp(form, zone), `${form} in ${zone}`).toBe(parseTimestampWithLuxon(form, zone));
        }
      }),
      { numRuns: 500 },
    );
  });

  it('equals luxon on arbitrary fields and offsets, out-of-range ones included', () => {
    const two = (max: number) => fc.integer({ min: 0, max }).map((n) => String(n).padStart(2, '0'));
    const text = fc
      .record({
        year: fc.integer({ min: 0, max: 9999 }).map((n) => String(n).padStart(4, '0')),
        month: two(13),
        day: two(32),
        hour: two(25),
        minute: two(61),
        second: fc.option(two(61), { nil: undefined }),
        fraction: fc.option(fc.stringMatching(/^\d{1,12}$/), { nil: undefined }),
        separator: fc.constantFrom('T', 't', ' '),
        zone: fc.oneof(
          fc.constant(''),
          fc.constantFrom('Z', 'z'),
          fc
            .tuple(fc.constantFrom('+', '-'), two(99), fc.constantFrom('', ':'), fc.option(two(99), { nil: '' }))
            .map(([sign, hours, colon, minutes]) => `${sign}${hours}${minutes === '' ? '' : colon}${minutes}`),
        ),
      })
      .map(
        (f) =>
          `${f.year}-${f.month}-${f.day}${f.separator}${f.hour}:${f.minute}${f.second === undefined ? '' : `:${f.second}`}${
            f.second !== undefined && f.fraction !== undefined ? `.${f.fraction}` : ''
          }${f.zone}`,
      );
    fc.assert(
      fc.property(text, fc.constantFrom(...zones), clocks, (value, zone, now) => {
        at(now);
        expect(parseTimestamp(value, zone), `${value} in ${zone}`).toBe(parseTimestampWithLuxon(value, zone));
      }),
      { numRuns: 1000 },
    );
  });

  it('reads the repeated autumn hour with the offset in effect at the clock, as luxon does', () => {
    at(Date.UTC(2026, 0, 15));
    expect(parseTimestamp('2026-11-01T01:30:00', 'America/New_York')).toBe(Date.UTC(2026, 10, 1, 6, 30));
    expect(parseTimestamp('2026-10-25 02:30:00', 'Europe/Berlin')).toBe(Date.UTC(2026, 9, 25, 1, 30));
    at(Date.UTC(2026, 6, 15));
    expect(parseTimestamp('2026-11-01T01:30:00', 'America/New_York')).toBe(Date.UTC(2026, 10, 1, 5, 30));
    expect(parseTimestamp('2026-10-25 02:30:00', 'Europe/Berlin')).toBe(Date.UTC(2026, 9, 25, 0, 30));
    for (const value of ['2026-11-01T01:30:00', '20261101013000']) {
      expect(parseTimestamp(value, 'America/New_York')).toBe(parseTimestampWithLuxon(value, 'America/New_York'));
    }
  });

  it('reads a time skipped by spring-forward with the offset before the change, whatever the clock', () => {
    for (const now of [Date.UTC(2026, 0, 15), Date.UTC(2026, 6, 15)]) {
      at(now);
      // 02:30 does not exist in New York on 2026-03-08 nor in Berlin on 2026-03-29: 03:30 local.
      expect(parseTimestamp('2026-03-08T02:30:00', 'America/New_York')).toBe(Date.UTC(2026, 2, 8, 7, 30));
      expect(parseTimestamp('20260329023000', 'Europe/Berlin')).toBe(Date.UTC(2026, 2, 29, 1, 30));
    }
  });

  it('does not call luxon for the common forms', () => {
    const spies = (['fromISO', 'fromSQL', 'fromObject', 'fromFormat', 'fromRFC2822'] as const).map((name) =>
      vi.spyOn(DateTime, name),
    );
    for (const value of [
      '2026-11-22T09:15:00+09:00',
      '2026-11-22T00:15:00.250Z',
      '2026-11-22T09:15:00',
      '2026-11-22 09:15:00',
      '20261122091500',
      '20261122',
    ]) {
      expect(parseTimestamp(value, 'Europe/Berlin')).toBeDefined();
    }
    for (const spy of spies) expect(spy).not.toHaveBeenCalled();
  });

  it.each([
    ['RFC 2822', 'Sun, 22 Nov 2026 09:15:00 +0900', 'fromRFC2822'],
    ['slashes', '2026/11/22 09:15', 'fromFormat'],
    ['a space before the offset (SQL)', '2026-11-22 09:15:00 +09:00', 'fromSQL'],
    ['a zone name (SQL)', '2026-11-22 09:15:00 Asia/Seoul', 'fromSQL'],
    ['a bracketed zone (ISO)', '2026-11-22T09:15:00+09:00[Asia/Seoul]', 'fromISO'],
    ['an ISO week date', '2026-W47-7T09:15:00Z', 'fromRFC2822'],
    ['a six-digit year', '+002026-11-22T09:15:00Z', 'fromRFC2822'],
    ['hours only', '2026-11-22T09Z', 'fromISO'],
    ['24:00', '2026-11-22T24:00:00Z', 'fromISO'],
    ['an impossible date', '2026-02-30T09:15:00Z', 'fromISO'],
    ['an early year', '0999-11-22T09:15:00Z', 'fromISO'],
    ['an invalid compact time', '20261122246000', 'fromObject'],
  ] as const)('hands %s to luxon, with luxon’s answer', (_label, value, method) => {
    at(Date.UTC(2026, 0, 15));
    const expected = parseTimestampWithLuxon(value, 'Asia/Seoul');
    const spy = vi.spyOn(DateTime, method);
    expect(parseTimestamp(value, 'Asia/Seoul')).toBe(expected);
    expect(spy).toHaveBeenCalled();
  });

  it('reads nothing as a date in a zone luxon does not know, offsets included', () => {
    for (const value of ['2026-11-22T09:15:00+09:00', '2026-11-22T09:15:00', '2026-11-22 09:15']) {
      expect(parseTimestamp(value, 'Mars/Olympus_Mons')).toBeUndefined();
      expect(parseTimestampWithLuxon(value, 'Mars/Olympus_Mons')).toBeUndefined();
    }
    // Fourteen digits that are no date there are an epoch value, as before.
    expect(parseTimestamp('20261122091500', 'Mars/Olympus_Mons')).toBe(
      parseTimestampWithLuxon('20261122091500', 'Mars/Olympus_Mons'),
    );
  });
});
