/**
 * The planner's per-match local-time checks (the daily budget's date, quiet hours) read the
 * zone's offsets from calendar.ts's cache instead of building a luxon DateTime per match; they
 * must agree with luxon everywhere, in the minutes around DST changes too. Quiet hours that have
 * begun last until they end even when the clock is set back before their start.
 */
import fc from 'fast-check';
import { DateTime } from 'luxon';
import { describe, expect, it } from 'vitest';
import { isQuietAt, localDate, quietHoursEndAfter } from '#core/delivery-plan';
import { AudienceSchema } from '#core/model';

const zones = [
  'UTC',
  'Asia/Seoul',
  'America/New_York',
  'Europe/Berlin',
  'Europe/London',
  'Australia/Lord_Howe',
  'America/St_Johns',
  'Asia/Kolkata',
  // Set back three hours across midnight on 5 March 2010 (02:00 +11 to 23:00 +08 the day before).
  'Antarctica/Casey',
];
const instants = fc.oneof(
  fc.integer({ min: Date.UTC(1970, 0, 1), max: Date.UTC(2100, 0, 1) }),
  // Within two hours of a DST change in New York, Berlin, Lord Howe or Casey.
  fc
    .tuple(
      fc.constantFrom(
        Date.UTC(2026, 2, 8, 7),
        Date.UTC(2026, 10, 1, 6),
        Date.UTC(2026, 2, 29, 1),
        Date.UTC(2026, 3, 4, 15),
        Date.UTC(2010, 2, 4, 15),
      ),
      fc.integer({ min: -7200, max: 7200 }),
    )
    .map(([change, seconds]) => change + seconds * 1000),
);
const clock = fc
  .tuple(fc.integer({ min: 0, max: 23 }), fc.constantFrom(0, 1, 29, 30, 59))
  .map(([hour, minute]) => `${String(hour).padStart(2, '0')}:${String(minute).padStart(2, '0')}`);

/** Starts in the hours New York, Lord Howe and Casey repeat when their clocks go back, often. */
const repeatedOften = fc.oneof(
  { weight: 3, arbitrary: clock },
  { weight: 1, arbitrary: fc.constantFrom('00:00', '00:30', '01:00', '01:15', '01:30', '01:45') },
);

describe('the planner’s local clock', () => {
  it('names the local date as luxon does', () => {
    fc.assert(
      fc.property(instants, fc.constantFrom(...zones), (at, zone) => {
        expect(localDate(at, zone)).toBe(DateTime.fromMillis(at, { zone }).toFormat('yyyy-MM-dd'));
      }),
      { numRuns: 2000 },
    );
  });

  it('puts an instant inside or outside quiet hours as luxon’s wall-clock time does, and keeps them from their start to their end when the clock goes back', () => {
    fc.assert(
      fc.property(instants, fc.constantFrom(...zones), repeatedOften, clock, (at, timeZone, start, end) => {
        const audience = AudienceSchema.parse({
          audienceId: 'desk',
          topicArn: 'arn:aws:sns:us-east-1:123456789012:desk',
          timeZone,
          quietHours: { start, end },
        });
        const [from, to] = [start, end].map((text) => Number(text.slice(0, 2)) * 60 + Number(text.slice(3)));
        const minuteAt = (instant: number) => {
          const local = DateTime.fromMillis(instant, { zone: timeZone });
          return local.hour * 60 + local.minute;
        };
        const byClock = (instant: number) => {
          const minute = minuteAt(instant);
          return from === to || from === undefined || to === undefined
            ? false
            : from < to
              ? minute >= from && minute < to
              : minute >= from || minute < to;
        };
        // Begun and not ended: going back a minute at a time, a quiet minute comes before a
        // minute at which the clock read their end (the clock set back out of them, say).
        const begun = () => {
          for (let instant = at - 60_000; instant > at - 26 * 3_600_000; instant -= 60_000) {
            if (minuteAt(instant + 60_000) === to) return false;
            if (byClock(instant)) return true;
          }
          return false;
        };
        const wentBack =
          DateTime.fromMillis(at - 86_400_000, { zone: timeZone }).offset >
          DateTime.fromMillis(at, { zone: timeZone }).offset;
        expect(isQuietAt(at, audience)).toBe(byClock(at) || (wentBack && begun()));
      }),
      { numRuns: 2000 },
    );
  });

  it('ends quiet hours when the clock, set back across midnight, reads their end on the date before', () => {
    // Antarctica/Casey, 5 March 2010: 02:00 +11 became 23:00 +08 on the 4th. Quiet hours
    // 00:00-23:00 began at 00:00 +11 and end when the clock reads 23:00, right after the change.
    const audience = AudienceSchema.parse({
      audienceId: 'desk',
      topicArn: 'arn:aws:sns:us-east-1:123456789012:desk',
      timeZone: 'Antarctica/Casey',
      quietHours: { start: '00:00', end: '23:00' },
    });
    const change = Date.UTC(2010, 2, 4, 15);
    expect(isQuietAt(change - 60_000, audience)).toBe(true);
    expect(isQuietAt(change + 30 * 60_000, audience)).toBe(false);
    expect(quietHoursEndAfter(change - 60 * 60_000, audience)).toBe(change);
  });
});
