/**
 * Date arithmetic in the provider's time zone. The News Lookup API selects articles by
 * `YYYY-MM-DD` dates in its own zone, so the run turns its instant-based windows into provider
 * dates and back. Days are not always 24 hours (DST), so every boundary comes from the zone's
 * calendar, never from adding 86,400,000 ms.
 */
import { DateTime } from 'luxon';

const datePattern = /^\d{4}-\d{2}-\d{2}$/;

function parseDate(date: string, zone: string): DateTime {
  if (!datePattern.test(date)) {
    throw new RangeError(`"${date}" is not a date of the form YYYY-MM-DD`);
  }
  const parsed = DateTime.fromISO(date, { zone });
  if (!parsed.isValid) {
    throw new RangeError(
      `"${date}" is not a valid date in ${zone}: ${parsed.invalidExplanation ?? parsed.invalidReason}`,
    );
  }
  return parsed;
}

/** Whether `value` is a real calendar date written `YYYY-MM-DD`. */
export function isProviderDate(value: string): boolean {
  return datePattern.test(value) && DateTime.fromISO(value, { zone: 'UTC' }).isValid;
}

/**
 * The provider date (`YYYY-MM-DD`) on which the instant `epochMs` falls in `timeZone`.
 * @throws RangeError when the instant or zone is invalid
 */
export function providerDate(epochMs: number, timeZone: string): string {
  const date = DateTime.fromMillis(epochMs, { zone: timeZone }).toISODate();
  if (date === null) throw new RangeError(`cannot place ${epochMs} in time zone ${timeZone}`);
  return date;
}

/**
 * The first instant (epoch ms) of `date` in `timeZone`. Where midnight is skipped by a DST change,
 * that is the first local time that exists.
 * @throws RangeError when `date` is not a valid `YYYY-MM-DD` date
 */
export function startOfDate(date: string, timeZone: string): number {
  return parseDate(date, timeZone).startOf('day').toMillis();
}

/**
 * The exclusive end of `date` in `timeZone`: the first instant of the next day, so
 * `startOfDate(d) <= t < endOfDate(d)` holds exactly for the instants `t` on date `d`.
 * @throws RangeError when `date` is not a valid `YYYY-MM-DD` date
 */
export function endOfDate(date: string, timeZone: string): number {
  return parseDate(date, timeZone).plus({ days: 1 }).startOf('day').toMillis();
}

/**
 * Every date from `from` to `to`, both included, in order; empty when `from` is after `to`.
 * Pure calendar arithmetic: no time zone is involved.
 * @throws RangeError when either bound is not a valid `YYYY-MM-DD` date
 */
export function datesBetween(from: string, to: string): string[] {
  const first = parseDate(from, 'UTC');
  const last = parseDate(to, 'UTC');
  const dates: string[] = [];
  for (let day = first; day <= last; day = day.plus({ days: 1 })) {
    // toISODate() is null only for an invalid DateTime, and parseDate never returns one.
    dates.push(day.toFormat('yyyy-MM-dd'));
  }
  return dates;
}
