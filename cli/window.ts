/**
 * Time windows for preview, backtest and replay, and instants for the watermark. A bound is a
 * provider date (`2026-11-21`, the whole day in the provider's zone, as the News Lookup API
 * takes dates), an ISO 8601 date-time with a zone (`2026-11-21T09:00:00+09:00`), a span back
 * from now (`90m`, `6h`, `2d`, `1w`), or `now`.
 */
import {
  datesBetween,
  endOfDate,
  isProviderDate,
  isWorkableInstant,
  providerDate,
  startOfDate,
  workableInstants,
  workableRange,
} from '#core/calendar';
import { UsageError } from './errors.ts';

/** A window of publication instants and the provider dates that cover it. */
export interface TimeWindow {
  /** Articles published in [since, until] (epoch ms, both included) are in the window. */
  readonly since: number;
  readonly until: number;
  /** The provider dates to ask for, in order. */
  readonly days: readonly string[];
}

const spanUnits: Record<string, number> = { m: 60_000, h: 3_600_000, d: 86_400_000, w: 7 * 86_400_000 };

/** `90m`, `6h`, `2d`, `1w` in milliseconds, or undefined when `text` is not a span. */
export function parseSpan(text: string): number | undefined {
  const match = /^(\d+)\s*([mhdw])$/i.exec(text.trim());
  if (!match?.[1] || !match[2]) return undefined;
  return Number(match[1]) * (spanUnits[match[2].toLowerCase()] ?? 0);
}

/** A date-time with an explicit zone (a bare `2026-11-21T09:00` would depend on this machine's zone). */
const zonedDateTime = /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})$/i;

/**
 * One bound as an instant. A provider date is its first instant for `start` and its last
 * millisecond for `end`, so `--from 2026-11-21 --to 2026-11-21` is that whole day.
 * @throws UsageError naming the option and the accepted forms
 */
export function parseInstant(
  text: string,
  option: string,
  edge: 'start' | 'end',
  timeZone: string,
  now: number,
): number {
  const value = text.trim();
  if (value.toLowerCase() === 'now') return now;
  const span = parseSpan(value);
  if (span !== undefined) return workable(now - span, option, text);
  if (isProviderDate(value)) {
    return workable(edge === 'start' ? startOfDate(value, timeZone) : endOfDate(value, timeZone) - 1, option, text);
  }
  const at = parseDateTime(value, option, text);
  if (at !== undefined) return at;
  throw new UsageError(
    `${option} "${text}": give a provider date (2026-11-21), a date-time with a zone (2026-11-21T09:00:00+09:00 or …Z), a span back from now (90m, 6h, 2d, 1w) or "now"`,
  );
}

/**
 * An ISO 8601 date-time with a zone (`2026-11-21T09:00:00+09:00`, `…Z`) as an instant; undefined
 * when `value` is not one. A date that is not on the calendar (2026-11-31, 2026-02-29) is said so:
 * checked first, as Date.parse rolls 2026-11-31T09:00Z over to 1 December without a word.
 * @throws UsageError for a date not on the calendar, or an instant outside {@link workableInstants}
 */
export function parseDateTime(value: string, option: string, text = value): number | undefined {
  const dated = /^(\d{4})-(\d{2})-(\d{2})(?:$|[T ])/i.exec(value);
  if (dated !== null && !isProviderDate(`${dated[1]}-${dated[2]}-${dated[3]}`)) {
    throw new UsageError(
      `${option} "${text}": ${dated[1]}-${dated[2]}-${dated[3]} is no date on the calendar (month 01-12, and a day the month has)`,
    );
  }
  if (!zonedDateTime.test(value)) return undefined;
  const parsed = Date.parse(value);
  return Number.isNaN(parsed) ? undefined : workable(parsed, option, text);
}

/**
 * `at`, when it is an instant the product works with ({@link workableInstants}).
 * @throws UsageError naming the option, what it gave, and the range
 */
export function workable(at: number, option: string, text: string): number {
  if (isWorkableInstant(at)) return at;
  // NaN (a span past what a number holds) counts as before: spans count back.
  const bound = at > workableInstants.latest ? 'after 9999' : 'before 1970';
  throw new UsageError(
    `${option} "${text}" falls ${bound}: give an instant from ${workableRange} (a span counts back from now: 90m, 6h, 2d, 1w)`,
  );
}

/** The window `[from, to]` in the provider's zone; `options` names the two options in messages. */
export function parseWindow(
  from: string,
  to: string | undefined,
  timeZone: string,
  now: number,
  options: { readonly from: string; readonly to: string } = { from: '--from', to: '--to' },
): TimeWindow {
  const since = parseInstant(from, options.from, 'start', timeZone, now);
  const until = parseInstant(to ?? 'now', options.to, 'end', timeZone, now);
  if (since > until) {
    throw new UsageError(
      `${options.from} (${new Date(since).toISOString()}) is after ${options.to} (${new Date(until).toISOString()})`,
    );
  }
  return { since, until, days: datesBetween(providerDate(since, timeZone), providerDate(until, timeZone)) };
}
