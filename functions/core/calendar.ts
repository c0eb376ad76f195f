/**
 * Date arithmetic in the provider's time zone. The News Lookup API selects articles by
 * `YYYY-MM-DD` dates in its own zone, so the run turns its instant-based windows into provider
 * dates and back. Days are not always 24 hours (DST), so every boundary comes from the zone's
 * calendar, never from adding 86,400,000 ms.
 */
import { DateTime } from 'luxon';
import { BoundedCache } from './bounded-cache.ts';

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

const dayMs = 86_400_000;

/**
 * The day number (days since 1970-01-01) of a `YYYY-MM-DD` date, for the calendar arithmetic
 * below. Written with `Date` rather than luxon: this runs before every run's first provider
 * request, and luxon's first `toFormat` alone cost about 13 ms of a cold start.
 * @throws RangeError when `date` is not a valid `YYYY-MM-DD` date
 */
function dayNumber(date: string): number {
  if (!datePattern.test(date)) {
    throw new RangeError(`"${date}" is not a date of the form YYYY-MM-DD`);
  }
  const found = dayNumberOf(date);
  if (found === undefined) throw new RangeError(`"${date}" is not a valid date: no such day in that month and year`);
  return found;
}

/** {@link dayNumber} of a date already of the form `YYYY-MM-DD`; undefined when no such day exists. */
function dayNumberOf(date: string): number | undefined {
  const year = Number(date.slice(0, 4));
  const month = Number(date.slice(5, 7)) - 1;
  const day = Number(date.slice(8, 10));
  // setUTCFullYear, unlike Date.UTC, does not read years 0-99 as 1900-1999.
  const parsed = new Date(0);
  parsed.setUTCFullYear(year, month, day);
  if (parsed.getUTCFullYear() !== year || parsed.getUTCMonth() !== month || parsed.getUTCDate() !== day)
    return undefined;
  return Math.round(parsed.getTime() / dayMs);
}

/** The `YYYY-MM-DD` date of a day number (years 0 to 9999). */
function dateOfDay(dayNumberValue: number): string {
  return new Date(dayNumberValue * dayMs).toISOString().slice(0, 10);
}

/**
 * The instants the product works with: from 1969-12-31T10:00Z, when 1970 begins in the zone
 * farthest ahead (UTC+14; no news provider holds articles from before 1970), to
 * 9999-12-31T09:59:59.999Z, the last instant still in 9999 there, so that in every zone the
 * provider date is a four-digit `YYYY-MM-DD`, and `1970-01-01` read in any zone is accepted. An
 * instant outside (a span typed for a date, `20261121d`, is 55,000 years) has no provider date:
 * the run would fail on it at every start.
 */
export const workableInstants = {
  earliest: Date.UTC(1970, 0, 1) - 14 * 3_600_000,
  latest: Date.UTC(9999, 11, 31, 10) - 1,
} as const;

/** {@link workableInstants} as people read them, for messages (to the minute). */
export const workableRange = `${new Date(workableInstants.earliest).toISOString().slice(0, 16)}Z to ${new Date(workableInstants.latest).toISOString().slice(0, 16)}Z (1970 to 9999 in any time zone)`;

/** Whether `epochMs` is a finite instant within {@link workableInstants}. */
export const isWorkableInstant = (epochMs: number): boolean =>
  Number.isFinite(epochMs) && epochMs >= workableInstants.earliest && epochMs <= workableInstants.latest;

/** Whether `value` is a real calendar date written `YYYY-MM-DD`. */
export function isProviderDate(value: string): boolean {
  return datePattern.test(value) && dayNumberOf(value) !== undefined;
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
  const first = dayNumber(from);
  const last = dayNumber(to);
  const dates: string[] = [];
  for (let day = first; day <= last; day++) dates.push(dateOfDay(day));
  return dates;
}

/**
 * The date before `date` (`YYYY-MM-DD`). Pure calendar arithmetic, like {@link datesBetween}.
 * @throws RangeError when `date` is not a valid `YYYY-MM-DD` date
 */
export function previousDate(date: string): string {
  return dateOfDay(dayNumber(date) - 1);
}

// --- Zone offsets without luxon ------------------------------------------------------------------
//
// Reading a timestamp per article and formatting one per notification through luxon cost about a
// tenth of a run's CPU: every `DateTime` asks Intl for its zone's offset (formatToParts) and
// allocates several objects. The readers below give luxon's answers from a cached Intl formatter
// and a per-zone table of offsets, so the hot paths never build a `DateTime`. They answer only
// for zones they can read exactly as luxon does (IANA names Intl knows, `UTC`, `UTC+9:30`);
// for anything else they return `undefined` and the caller asks luxon.

/** A zone as luxon's `normalizeZone` reads a string, for the zones this module handles itself. */
export type ZoneReader =
  | { readonly kind: 'fixed'; readonly name: string; readonly offset: number }
  | { readonly kind: 'iana'; readonly name: string; readonly offsets: IanaOffsets };

/** Six hours: no zone moves its offset twice that close together (checked, see `#measure`). */
const spanMs = 6 * 3_600_000;
/** Spans kept per zone before the table starts over (a run reads a few days). */
const maxSpans = 4096;

/** The two offsets of a span in which the zone changes its offset once, and the first second of the new one. */
interface Transition {
  readonly before: number;
  readonly after: number;
  readonly at: number;
}

/**
 * Offsets of one IANA zone, in minutes east of UTC, exactly as luxon's `IANAZone.offset` computes
 * them (the same Intl options, the instant truncated to the second), cached per six-hour span of
 * UTC: a span holds one offset, or two and the second at which the zone switched.
 */
export class IanaOffsets {
  readonly #format: Intl.DateTimeFormat;
  readonly #spans = new Map<number, number | Transition | null>();

  /** @throws RangeError when Intl does not know the zone */
  constructor(name: string) {
    this.#format = new Intl.DateTimeFormat('en-US', {
      hour12: false,
      timeZone: name,
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
      era: 'short',
    });
  }

  /** The offset at `epochMs` (a finite instant a Date can hold). */
  at(epochMs: number): number {
    const index = Math.floor(epochMs / spanMs);
    let span = this.#spans.get(index);
    if (span === undefined) {
      span = this.#measure(index);
      if (this.#spans.size >= maxSpans) this.#spans.clear();
      this.#spans.set(index, span);
    }
    if (span === null) return this.#read(epochMs);
    if (typeof span === 'number') return span;
    return epochMs - mod(epochMs, 1000) < span.at ? span.before : span.after;
  }

  #measure(index: number): number | Transition | null {
    const start = index * spanMs;
    const last = start + spanMs - 1000;
    const before = this.#read(start);
    const after = this.#read(last);
    if (before === after) return before;
    // Bisect to the second: tzdata switches on whole seconds, and luxon truncates to the second.
    let low = start;
    let high = last;
    while (high - low > 1000) {
      const middle = low + Math.floor((high - low) / 2000) * 1000;
      if (this.#read(middle) === before) low = middle;
      else high = middle;
    }
    // Two switches in one span would make the table wrong for part of it: read those spans directly.
    if (this.#read(high) !== after) return null;
    return { before, after, at: high };
  }

  /** luxon's `IANAZone.offset`, step for step. */
  #read(epochMs: number): number {
    let year = 0;
    let month = 0;
    let day = 0;
    let hour = 0;
    let minute = 0;
    let second = 0;
    let bc = false;
    for (const { type, value } of this.#format.formatToParts(epochMs)) {
      if (type === 'year') year = Number.parseInt(value, 10);
      else if (type === 'month') month = Number.parseInt(value, 10);
      else if (type === 'day') day = Number.parseInt(value, 10);
      else if (type === 'hour') hour = Number.parseInt(value, 10);
      else if (type === 'minute') minute = Number.parseInt(value, 10);
      else if (type === 'second') second = Number.parseInt(value, 10);
      else if (type === 'era') bc = value === 'BC';
    }
    if (bc) year = -Math.abs(year) + 1;
    const asUtc = civilToEpoch(year, month, day, hour === 24 ? 0 : hour, minute, second, 0);
    return (asUtc - (epochMs - mod(epochMs, 1000))) / 60_000;
  }
}

const mod = (value: number, divisor: number): number => ((value % divisor) + divisor) % divisor;

/**
 * Epoch milliseconds of a UTC calendar date and time (luxon's `objToLocalTS`: `Date.UTC`, with
 * the years 0 to 99 kept as they are rather than read as 19xx).
 */
export function civilToEpoch(
  year: number,
  month: number,
  day: number,
  hour: number,
  minute: number,
  second: number,
  millisecond: number,
): number {
  const epoch = Date.UTC(year, month - 1, day, hour, minute, second, millisecond);
  if (year >= 100 || year < 0) return epoch;
  const date = new Date(epoch);
  date.setUTCFullYear(year, month - 1, day);
  return date.getTime();
}

const fixedSpecifier = /^utc(?:([+-]\d{1,2})(?::(\d{2}))?)?$/i;
const zoneReaders = new BoundedCache<string, ZoneReader | undefined>(256);

/** luxon's `signedOffset`: `-00:30` is 30 minutes west. */
export function signedOffset(hours: string | undefined, minutes: string | undefined): number {
  let whole = Number.parseInt(hours ?? '', 10);
  if (Number.isNaN(whole)) whole = 0;
  const part = Number.parseInt(minutes ?? '', 10) || 0;
  return whole * 60 + (whole < 0 || Object.is(whole, -0) ? -part : part);
}

/**
 * The reader for a zone name as luxon would read it, or `undefined` for names this module leaves
 * to luxon (`local`, `system`, `default`, zones Intl does not know: luxon calls those invalid).
 */
export const zoneReader = (timeZone: string): ZoneReader | undefined => zoneReaders.get(timeZone, readerOf);

function readerOf(timeZone: string): ZoneReader | undefined {
  const lowered = timeZone.toLowerCase();
  const fixed = fixedSpecifier.exec(lowered);
  if (lowered === 'utc' || lowered === 'gmt') return { kind: 'fixed', name: 'UTC', offset: 0 };
  if (fixed) {
    const offset = signedOffset(fixed[1], fixed[2]);
    // Fixed zones other than UTC are only read (the zone-less probe), never shown: no luxon name needed.
    return { kind: 'fixed', name: offset === 0 ? 'UTC' : timeZone, offset };
  }
  if (lowered === 'local' || lowered === 'system' || lowered === 'default' || timeZone === '') return undefined;
  try {
    return { kind: 'iana', name: timeZone, offsets: new IanaOffsets(timeZone) };
  } catch {
    return undefined;
  }
}

/** The zone's offset from UTC at `epochMs`, in minutes (luxon's `DateTime#offset`). */
export const offsetAt = (zone: ZoneReader, epochMs: number): number =>
  zone.kind === 'fixed' ? zone.offset : zone.offsets.at(epochMs);

/**
 * The instant of a wall-clock time in `zone`, by luxon's rule (`fixOffset`): the offset in effect
 * at `now` is tried first, then the offset at that guess. So a time that a DST change skips is
 * read with the offset before the change (02:30 on a spring-forward night in New York is 03:30
 * EDT), and a time that occurs twice is read with whichever of its two offsets is in effect at
 * `now`: luxon's answer depends on the season of the reading, and this one matches it.
 *
 * @param localEpoch - the wall-clock time written as if it were UTC ({@link civilToEpoch})
 */
export function wallClockToEpoch(localEpoch: number, zone: ZoneReader, now: number): number {
  if (zone.kind === 'fixed') return localEpoch - zone.offset * 60_000;
  const guess = zone.offsets.at(now);
  let utc = localEpoch - guess * 60_000;
  const second = zone.offsets.at(utc);
  if (second === guess) return utc;
  utc -= (second - guess) * 60_000;
  const third = zone.offsets.at(utc);
  if (second === third) return utc;
  return localEpoch - Math.min(second, third) * 60_000;
}

/** Local calendar fields of an instant in a zone (luxon's `tsToObj` at the zone's offset). */
export interface LocalFields {
  readonly year: number;
  readonly month: number;
  readonly day: number;
  readonly hour: number;
  readonly minute: number;
  /** Minutes east of UTC. */
  readonly offset: number;
}

/** The wall-clock fields of `epochMs` in `zone`. */
export function localFields(epochMs: number, zone: ZoneReader): LocalFields {
  const offset = offsetAt(zone, epochMs);
  const local = new Date(epochMs + offset * 60_000);
  return {
    year: local.getUTCFullYear(),
    month: local.getUTCMonth() + 1,
    day: local.getUTCDate(),
    hour: local.getUTCHours(),
    minute: local.getUTCMinutes(),
    offset,
  };
}

/** `2026-11-22`: luxon's `yyyy-MM-dd` for years 0 to 9999. */
export const isoDateOf = (fields: LocalFields): string =>
  `${String(fields.year).padStart(4, '0')}-${String(fields.month).padStart(2, '0')}-${String(fields.day).padStart(2, '0')}`;
