/**
 * Publication timestamps as news APIs send them. The provider's format is not documented, and
 * comparable APIs use ISO 8601 (NewsAPI), RFC 822 (Naver), compact ISO (GDELT), SQL-style
 * date-times and epoch numbers, so the parser accepts all of them. Values without a zone are read
 * in the provider's time zone, never the Lambda's (which is UTC and would shift Seoul articles by
 * nine hours).
 */
import { DateTime } from 'luxon';

/** Below this an epoch number is seconds (until year 5138); at or above it, milliseconds (from 1973-03). */
const epochSecondsLimit = 1e11;
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

const valid = (dt: DateTime): number | undefined => (dt.isValid ? dt.toMillis() : undefined);

function fromEpoch(value: number): number | undefined {
  if (!Number.isFinite(value) || value < epochSecondsFloor) return undefined;
  const ms = value < epochSecondsLimit ? value * 1000 : value;
  return ms <= maxEpochMs ? Math.round(ms) : undefined;
}

function fromCompact(text: string, zone: string): number | undefined {
  const match = compactDateTime.exec(text);
  if (match) {
    const [, year, month, day, hour, minute, second] = match.map(Number);
    return valid(DateTime.fromObject({ year, month, day, hour, minute, second }, { zone }));
  }
  if (compactDate.test(text)) return valid(DateTime.fromFormat(text, 'yyyyMMdd', { zone }));
  return undefined;
}

function fromDigits(text: string, zone: string): number | undefined {
  // 14 and 8 digits are compact calendar forms (`20261122091500`, `20261122`); as epoch values
  // they would be the years 2612 and 1970, which no provider sends.
  const compact = fromCompact(text.replace(/^\+/, ''), zone);
  if (compact !== undefined) return compact;
  return fromEpoch(Number(text));
}

function fromText(text: string, zone: string): number | undefined {
  if (digits.test(text)) return fromDigits(text, zone);
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
 * `20261122` (a date: its first instant), and epoch seconds or milliseconds as numbers or digit
 * strings, told apart by magnitude; epoch values before 1973-03-03 are refused as implausible.
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

function parseIn(value: unknown, timeZone: string): number | undefined {
  if (typeof value === 'number') {
    // Whole numbers follow the digit-string rules, so `20261122091500` means the same either way.
    return Number.isSafeInteger(value) ? fromDigits(String(value), timeZone) : fromEpoch(value);
  }
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? undefined : value.getTime();
  if (typeof value !== 'string') return undefined;
  const text = value.trim();
  if (text.length === 0 || text.length > 64) return undefined;
  return fromText(text, timeZone);
}
