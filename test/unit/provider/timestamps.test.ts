import fc from 'fast-check';
import { DateTime } from 'luxon';
import { describe, expect, it } from 'vitest';
import { parseTimestamp, ZonelessTimestampError } from '#provider/timestamps';

/** 2026-11-22 09:15:00 in Seoul, 00:15:00 UTC. */
const instant = Date.UTC(2026, 10, 22, 0, 15, 0);
const hours = (n: number) => n * 3_600_000;

describe('parseTimestamp', () => {
  it.each([
    ['ISO 8601 with offset', '2026-11-22T09:15:00+09:00', 'UTC', instant],
    ['ISO 8601 with Z', '2026-11-22T00:15:00Z', 'Asia/Seoul', instant],
    ['ISO 8601 with fraction', '2026-11-22T00:15:00.250Z', 'UTC', instant + 250],
    ['ISO 8601 with +0900 offset', '2026-11-22T09:15:00+0900', 'UTC', instant],
    ['zone-less ISO in Seoul', '2026-11-22T09:15:00', 'Asia/Seoul', instant],
    ['zone-less ISO in UTC', '2026-11-22T09:15:00', 'UTC', instant + hours(9)],
    ['SQL-style in Seoul', '2026-11-22 09:15:00', 'Asia/Seoul', instant],
    ['SQL-style in UTC', '2026-11-22 09:15:00', 'UTC', instant + hours(9)],
    ['SQL-style with offset', '2026-11-22 09:15:00+09:00', 'UTC', instant],
    ['RFC 2822 with offset', 'Sun, 22 Nov 2026 09:15:00 +0900', 'UTC', instant],
    ['RFC 1123 GMT', 'Sun, 22 Nov 2026 00:15:00 GMT', 'Asia/Seoul', instant],
    ['RFC 822 without weekday', '22 Nov 2026 09:15:00 +0900', 'UTC', instant],
    ['RFC 2822 with a wrong weekday', 'Mon, 22 Nov 2026 00:15:00 GMT', 'UTC', instant],
    ['RFC 850', 'Sunday, 22-Nov-26 00:15:00 GMT', 'UTC', instant],
    ['compact ISO with Z (GDELT)', '20261122T001500Z', 'Asia/Seoul', instant],
    ['compact ISO zone-less', '20261122T091500', 'Asia/Seoul', instant],
    ['14 digits in Seoul', '20261122091500', 'Asia/Seoul', instant],
    ['14 digits in UTC', '20261122091500', 'UTC', instant + hours(9)],
    ['14 digits as a number', 20261122091500, 'Asia/Seoul', instant],
    ['8 digits is a date', '20261122', 'Asia/Seoul', instant - hours(9) - 15 * 60_000],
    ['slashes', '2026/11/22 09:15', 'Asia/Seoul', instant],
    ['dots', '2026.11.22 09:15:00', 'Asia/Seoul', instant],
    ['date only', '2026-11-22', 'UTC', instant - 15 * 60_000],
    ['epoch seconds', instant / 1000, 'Asia/Seoul', instant],
    ['epoch seconds string', String(instant / 1000), 'Asia/Seoul', instant],
    ['epoch seconds with fraction', instant / 1000 + 0.5, 'UTC', instant + 500],
    ['epoch milliseconds', instant, 'Asia/Seoul', instant],
    ['epoch milliseconds string', ` ${instant} `, 'UTC', instant],
    ['epoch microseconds (16 digits; they were read as milliseconds, the year 57,000)', instant * 1000, 'UTC', instant],
    ['epoch microseconds string', `${instant}123`, 'UTC', instant],
    ['epoch nanoseconds string (19 digits)', `${instant}000000`, 'UTC', instant],
    ['summer in New York', '2026-07-01T12:00:00', 'America/New_York', Date.UTC(2026, 6, 1, 16)],
    ['winter in New York', '2026-01-15T12:00:00', 'America/New_York', Date.UTC(2026, 0, 15, 17)],
    ['summer in Berlin', '2026-07-01 12:00:00', 'Europe/Berlin', Date.UTC(2026, 6, 1, 10)],
    ['winter in Berlin', '2026-01-15 12:00:00', 'Europe/Berlin', Date.UTC(2026, 0, 15, 11)],
    ['the hour after the spring-forward gap', '2026-03-08T03:30:00', 'America/New_York', Date.UTC(2026, 2, 8, 7, 30)],
  ])('reads %s', (_label, value, zone, expected) => {
    expect(parseTimestamp(value, zone)).toBe(expected);
  });

  it.each([
    ['free text', 'yesterday'],
    ['an empty string', ''],
    ['a bare time (luxon would read it as today)', '12'],
    ['a bare year', '2026'],
    ['an impossible date', '2026-13-45T00:00:00Z'],
    ['a tiny epoch value', 42],
    ['a negative epoch value', -1_000_000_000],
    ['NaN', Number.NaN],
    ['Infinity', Number.POSITIVE_INFINITY],
    ['a boolean', true],
    ['null', null],
    ['an object', { date: '2026-11-22' }],
    ['an over-long string', `2026-11-22T00:15:00Z${' '.repeat(10)}${'x'.repeat(60)}`],
  ])('refuses %s', (_label, value) => {
    expect(parseTimestamp(value, 'UTC')).toBeUndefined();
  });

  const instants = fc
    .integer({ min: Date.UTC(1980, 0, 1) / 1000, max: Date.UTC(2100, 0, 1) / 1000 })
    .map((seconds) => seconds * 1000);
  const zones = fc.constantFrom('UTC', 'Asia/Seoul', 'America/New_York', 'Europe/Berlin', 'Australia/Lord_Howe');

  it('round-trips every format that carries its own zone or is absolute', () => {
    fc.assert(
      fc.property(instants, zones, zones, (ms, writerZone, providerZone) => {
        const local = DateTime.fromMillis(ms, { zone: writerZone });
        const utc = DateTime.fromMillis(ms, { zone: 'UTC' });
        const forms: unknown[] = [
          local.toISO(),
          local.toISO({ suppressMilliseconds: true, includeOffset: true }),
          utc.toISO(),
          local.toRFC2822(),
          utc.toHTTP(),
          utc.toFormat("yyyyMMdd'T'HHmmss'Z'"),
          ms / 1000,
          String(ms / 1000),
          ms,
          String(ms),
        ];
        for (const form of forms) expect(parseTimestamp(form, providerZone), String(form)).toBe(ms);
      }),
    );
  });

  it('round-trips zone-less formats in zones without DST', () => {
    fc.assert(
      fc.property(instants, fc.constantFrom('UTC', 'Asia/Seoul', 'Asia/Kolkata'), (ms, zone) => {
        const local = DateTime.fromMillis(ms, { zone });
        const forms = [
          local.toFormat("yyyy-MM-dd'T'HH:mm:ss"),
          local.toFormat('yyyy-MM-dd HH:mm:ss'),
          local.toFormat('yyyyMMddHHmmss'),
          local.toFormat("yyyyMMdd'T'HHmmss"),
          local.toFormat('yyyy/MM/dd HH:mm:ss'),
        ];
        for (const form of forms) expect(parseTimestamp(form, zone), form).toBe(ms);
      }),
    );
  });

  it('reads zone-less times in DST zones as that local wall-clock time', () => {
    // In the repeated hour of autumn a wall-clock time names two instants; either is right.
    fc.assert(
      fc.property(instants, fc.constantFrom('America/New_York', 'Europe/Berlin'), (ms, zone) => {
        const wallClock = DateTime.fromMillis(ms, { zone }).toFormat('yyyy-MM-dd HH:mm:ss');
        const parsed = parseTimestamp(wallClock, zone);
        expect(parsed).toBeDefined();
        expect(DateTime.fromMillis(parsed ?? 0, { zone }).toFormat('yyyy-MM-dd HH:mm:ss')).toBe(wallClock);
      }),
    );
  });
});

describe('parseTimestamp without a configured provider time zone (issue 10, item 13)', () => {
  it.each(['2026-11-22 13:32:57', '2026-11-22T13:32:57', '20261122133257', '2026/11/22 13:32', '20261122'])(
    'refuses the zone-less %s instead of guessing UTC',
    (value) => {
      expect(() => parseTimestamp(value, undefined)).toThrow(ZonelessTimestampError);
    },
  );

  it.each([
    ['2026-11-22T13:32:57+09:00', Date.parse('2026-11-22T04:32:57Z')],
    ['2026-11-22T04:32:57Z', Date.parse('2026-11-22T04:32:57Z')],
    ['Sun, 22 Nov 2026 13:32:57 +0900', Date.parse('2026-11-22T04:32:57Z')],
    [1_795_321_977, 1_795_321_977_000],
  ])('reads %s, which carries its own offset', (value, expected) => {
    expect(parseTimestamp(value, undefined)).toBe(expected);
  });
});
