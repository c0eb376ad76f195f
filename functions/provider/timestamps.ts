/**
 * Publication timestamps as news APIs send them. The provider's format is not documented, and
 * comparable APIs use ISO 8601 (NewsAPI), RFC 822 (Naver), compact ISO (GDELT), SQL-style
 * date-times and epoch numbers, so the parser accepts all of them. Values without a zone are read
 * in the provider's time zone, never the Lambda's (which is UTC and would shift Seoul articles by
 * nine hours).
 *
 * The forms providers actually send (ISO 8601 with an offset, `Z` or no zone, SQL style, compact
 * `20261122091500`) are read by a fast path with exactly luxon's results: luxon cost about a tenth
 * of a run's CPU when every article went through it. Everything else (RFC 822/2822, HTTP dates,
 * slashes and dots, six-digit years, week dates, out-of-range fields) still goes to luxon: those
 * forms are rare, and their grammars (weekday checks, obsolete zone names, two-digit years) are
 * where a rewrite would drift from what this parser has always accepted.
 */
import { DateTime, Settings } from 'luxon';
import { civilToEpoch, signedOffset, wallClockToEpoch, type ZoneReader, zoneReader } from '#core/calendar';

/**
 * Epoch units by magnitude, each from 1973-03 to the year 5138: below 1e11 seconds, below 1e14
 * milliseconds, below 1e17 microseconds, above nanoseconds (the 16 and 19 digits of logging and
 * database exports). Read as milliseconds, microseconds would be the year 57,000 and pass as a time.
 */
const epochUnits: readonly { readonly below: number; readonly toMs: number }[] = [
  { below: 1e11, toMs: 1000 },
  { below: 1e14, toMs: 1 },
  { below: 1e17, toMs: 1e-3 },
  { below: Number.POSITIVE_INFINITY, toMs: 1e-6 },
];
/** Epoch seconds below this (1973-03-03) are not publication times but counters, years or ids. */
const epochSecondsFloor = 1e8;
/** The largest instant a JavaScript Date can hold. */
const maxEpochMs = 8.64e15;

/** Calendar-date ISO 8601 only: luxon also accepts bare times (`12` = today at noon) and years, which are never publication instants. */
const isoCalendarDate = /^[+-]?\d{4}(-\d{2}-\d{2}|\d{4})([T\s].*)?$/i;

const compactDateTime = /^(\d{4})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})$/;
const compactDate = /^\d{8}$/;
const digits = /^\+?\d+(\.\d+)?$/;

/** Formats with a date and a time that neither ISO nor SQL parsing covers, seen on Asian and European sites. */
const extraFormats = [
  'yyyy/MM/dd HH:mm:ss',
  'yyyy/MM/dd HH:mm',
  'yyyy.MM.dd HH:mm:ss',
  'yyyy.MM.dd HH:mm',
  'yyyy.MM.dd. HH:mm:ss',
  'yyyy.MM.dd. HH:mm',
  'yyyy/MM/dd',
  'yyyy.MM.dd',
];

/**
 * What the fast path reads: a calendar date, optionally a time with minutes (seconds and a
 * fraction optional) after `T` or a space, optionally `Z` or an offset right after it. luxon's ISO
 * and SQL grammars read all of these the same way; anything else falls through to them.
 */
const commonDateTime =
  /^(\d{4})-(\d{2})-(\d{2})(?:[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,30}))?)?(?:([Zz])|([+-]\d{2})(?::?(\d{2}))?)?)?$/;

/** Days in a month of a year from 1000 on (Date.UTC reads years below 100 as 19xx). */
const daysIn = (year: number, month: number): number => new Date(Date.UTC(year, month, 0)).getUTCDate();

/**
 * Epoch ms of a wall-clock time read in `zone`, or `undefined` when a field is out of range (luxon
 * is asked then, and refuses it or, for `24:00`, reads it as the next midnight). Years before
 * 1000 are left to luxon too: no provider sends them, so exactness there is not worth a test.
 */
function fromFields(
  zone: ZoneReader,
  year: number,
  month: number,
  day: number,
  hour: number,
  minute: number,
  second: number,
  millisecond: number,
  offset: number | undefined,
): number | undefined {
  if (year < 1000 || month < 1 || month > 12 || day < 1 || day > daysIn(year, month)) return undefined;
  if (hour > 23 || minute > 59 || second > 59) return undefined;
  const local = civilToEpoch(year, month, day, hour, minute, second, millisecond);
  return offset === undefined ? wallClockToEpoch(local, zone, Settings.now()) : local - offset * 60_000;
}

/** The fast path for {@link commonDateTime}; `undefined` when luxon must decide. */
function fromCommon(text: string, timeZone: string): number | undefined {
  const match = commonDateTime.exec(text);
  if (match === null) return undefined;
  // luxon refuses every reading in a zone it does not know, offsets included: so does this path.
  const zone = zoneReader(timeZone);
  if (zone === undefined) return undefined;
  const [, year, month, day, hour, minute, second, fraction, utc, offsetHours, offsetMinutes] = match;
  const hasOffset = utc !== undefined || offsetHours !== undefined;
  return fromFields(
    zone,
    Number(year),
    Number(month),
    Number(day),
    Number(hour ?? 0),
    Number(minute ?? 0),
    Number(second ?? 0),
    // luxon's parseMillis: the fraction is truncated to milliseconds, through a float.
    fraction === undefined ? 0 : Math.floor(Number.parseFloat(`0.${fraction}`) * 1000),
    hasOffset ? (utc !== undefined ? 0 : signedOffset(offsetHours, offsetMinutes)) : undefined,
  );
}

const valid = (dt: DateTime): number | undefined => (dt.isValid ? dt.toMillis() : undefined);

function fromEpoch(value: number): number | undefined {
  if (!Number.isFinite(value) || value < epochSecondsFloor) return undefined;
  const unit = epochUnits.find((candidate) => value < candidate.below) ?? { toMs: 1 };
  const ms = value * unit.toMs;
  return ms <= maxEpochMs ? Math.round(ms) : undefined;
}

function fromCompact(text: string, zone: string, fast: boolean): number | undefined {
  const match = compactDateTime.exec(text);
  if (match === null && !compactDate.test(text)) return undefined;
  const fields = match === null ? [text.slice(0, 4), text.slice(4, 6), text.slice(6, 8)] : match.slice(1);
  const [year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0] = fields.map(Number);
  const reader = fast ? zoneReader(zone) : undefined;
  const quick = reader && fromFields(reader, year, month, day, hour, minute, second, 0, undefined);
  if (quick !== undefined) return quick;
  if (match === null) return valid(DateTime.fromFormat(text, 'yyyyMMdd', { zone }));
  return valid(DateTime.fromObject({ year, month, day, hour, minute, second }, { zone }));
}

function fromDigits(text: string, zone: string, fast: boolean): number | undefined {
  // 14 and 8 digits are compact calendar forms (`20261122091500`, `20261122`); as epoch values
  // they would be the years 2612 and 1970, which no provider sends.
  const compact = fromCompact(text.replace(/^\+/, ''), zone, fast);
  if (compact !== undefined) return compact;
  return fromEpoch(Number(text));
}

function fromText(text: string, zone: string, fast: boolean): number | undefined {
  if (digits.test(text)) return fromDigits(text, zone, fast);
  const common = fast ? fromCommon(text, zone) : undefined;
  if (common !== undefined) return common;
  if (isoCalendarDate.test(text)) {
    const iso = valid(DateTime.fromISO(text, { zone }));
    if (iso !== undefined) return iso;
    // `2026-11-22 09:15:00` (with optional fraction and offset) is SQL-shaped rather than ISO.
    const sql = valid(DateTime.fromSQL(text, { zone }));
    if (sql !== undefined) return sql;
  }
  const rfc = valid(DateTime.fromRFC2822(text, { zone })) ?? valid(DateTime.fromHTTP(text, { zone }));
  if (rfc !== undefined) return rfc;
  // Feeds get the weekday wrong more often than the date; luxon rejects the mismatch, the date wins.
  const withoutWeekday = text.replace(/^[A-Za-z]{3,9},?\s+/, '');
  if (withoutWeekday !== text) {
    const retried = valid(DateTime.fromRFC2822(withoutWeekday, { zone }));
    if (retried !== undefined) return retried;
  }
  for (const format of extraFormats) {
    const parsed = valid(DateTime.fromFormat(text, format, { zone }));
    if (parsed !== undefined) return parsed;
  }
  return undefined;
}

/**
 * A timestamp without a zone or offset met while no provider time zone is configured: reading it
 * as UTC would be a guess that shifts every alert by the provider's offset.
 */
export class ZonelessTimestampError extends Error {
  readonly value: string;
  constructor(value: string) {
    super(`the timestamp "${value}" carries no time zone or offset`);
    this.name = 'ZonelessTimestampError';
    this.value = value;
  }
}

/** Two zones nine and a half hours apart: a value read the same in both carries its own offset. */
const probeZones = ['UTC', 'UTC+9:30'] as const;

/**
 * Reads a publication timestamp and returns it as epoch milliseconds, or `undefined` when the
 * value is not a timestamp this parser recognises.
 *
 * Accepted: ISO 8601 with an offset, `Z` or no zone (`2026-11-22T09:15:00+09:00`), RFC 822/2822/
 * 1123 and the other HTTP date forms (`Sun, 22 Nov 2026 09:15:00 +0900`, `… GMT`), compact ISO
 * (`20261122T091500Z`), `20261122091500`, SQL-style `2026-11-22 09:15:00`, `2026/11/22 09:15`,
 * `20261122` (a date: its first instant), and epoch seconds, milliseconds, microseconds or
 * nanoseconds as numbers or digit strings, told apart by magnitude; epoch values before 1973-03-03 are refused as implausible.
 *
 * @param value - the raw JSON value from the provider
 * @param timeZone - IANA zone for values that carry no zone or offset (the provider's zone);
 *   `undefined` when none is configured: then such values are refused, never guessed
 * @throws ZonelessTimestampError when `timeZone` is undefined and the value has no zone or offset
 */
export function parseTimestamp(value: unknown, timeZone: string | undefined): number | undefined {
  if (timeZone !== undefined) return parseIn(value, timeZone);
  const [first, second] = probeZones.map((zone) => parseIn(value, zone));
  if (first !== second) throw new ZonelessTimestampError(String(value).trim().slice(0, 64));
  return first;
}

/** Whether `value` names its instant on its own (offset, `Z`, epoch number): it reads the same in any zone. */
export function carriesOffset(value: unknown): boolean {
  const [first, second] = probeZones.map((zone) => parseIn(value, zone));
  return first === second;
}

function parseIn(value: unknown, timeZone: string, fast = true): number | undefined {
  if (typeof value === 'number') {
    // Whole numbers follow the digit-string rules, so `20261122091500` means the same either way.
    return Number.isSafeInteger(value) ? fromDigits(String(value), timeZone, fast) : fromEpoch(value);
  }
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? undefined : value.getTime();
  if (typeof value !== 'string') return undefined;
  const text = value.trim();
  if (text.length === 0 || text.length > 64) return undefined;
  return fromText(text, timeZone, fast);
}

/**
 * {@link parseTimestamp} in a configured zone with luxon alone, the way every value was read before
 * the fast path: the reference the fast path is tested against, kept beside it so the two cannot
 * drift apart unnoticed.
 */
export const parseTimestampWithLuxon = (value: unknown, timeZone: string): number | undefined =>
  parseIn(value, timeZone, false);
