/**
 * When an audience hears about a match: now, or later in one digest. Pure functions of the match,
 * the audience's current settings and the clock, so the alert run, the CLI's preview and the
 * tests all decide the same way.
 *
 * The planner, per match at `now` ({@link planDelivery}), first rule that applies:
 *
 * 1. the audience is in digest mode → hold for its next digest (`digest`);
 * 2. it is inside the audience's quiet hours and the match is not urgent → hold until they end
 *    (`quiet-hours`);
 * 3. the audience has a daily budget, the match is not urgent, and the budget of immediate alerts
 *    for today (the local date in the audience's zone) is used up → hold for the next digest
 *    (`budget`, shown there as "+N more");
 * 4. otherwise send now. Urgent matches count against the budget but are never held by it.
 *
 * A match is urgent when any rule that matched it is `urgent`, or one of its categories is in the
 * audience's `urgentCategories` (same forms as rule categories: exact, case-insensitive, on codes
 * and names, or a prefix ending in `*`).
 *
 * What is held is planned again at every run ({@link planHeldRelease}) from the audience's CURRENT
 * settings, the instant each match was held and the run's clock, so a changed delivery mode,
 * time zone, digest time, quiet-hours window, urgent category or daily budget applies to what is
 * already held without rewriting it: a held match goes out at the first run at which those
 * settings would not hold it (see planHeldRelease for the rules). All local-time
 * arithmetic follows luxon in the audience's IANA zone (the per-match checks read the same
 * offsets from calendar.ts's cache): a local time that a daylight-saving change skips is taken as
 * the first instant after the gap (02:30 on a spring-forward night in New York is 03:30 EDT), and
 * one that occurs twice is taken at its later occurrence.
 */
import { DateTime } from 'luxon';
import { civilToEpoch, isoDateOf, localFields, offsetAt, zoneReader } from './calendar.ts';
import type { Audience, AudienceMatch } from './model.ts';
import type { HoldingAudience, HoldReason, ReleaseCause } from './ports.ts';
import { normalizeText } from './text.ts';

/** What to do with one match now. */
export type DeliveryDecision =
  | {
      readonly action: 'send';
      readonly urgent: boolean;
      /** The local date whose daily budget this alert uses, when the audience has a budget. */
      readonly budgetDate?: string | undefined;
    }
  | { readonly action: 'hold'; readonly reason: HoldReason; readonly urgent: boolean };

/** The audience's zone as luxon reads it; the schema validated it, UTC is only a last resort. */
function zoned(at: number, timeZone: string): DateTime {
  const local = DateTime.fromMillis(at, { zone: timeZone });
  return local.isValid ? local : DateTime.fromMillis(at, { zone: 'UTC' });
}

/**
 * The local date and time of `at` for the per-match checks (quiet hours, the daily budget's
 * date): from the zone's cached offsets rather than a luxon DateTime per match. luxon answers
 * where the fast reader does not (zones it leaves to luxon, instants outside years 0 to 9999).
 */
function localClock(
  at: number,
  timeZone: string,
): { readonly date: string; readonly minute: number; readonly offset: number } {
  const zone = zoneReader(timeZone);
  if (zone !== undefined && at >= MIN_FAST_MS && at < MAX_FAST_MS) {
    const fields = localFields(at, zone);
    return { date: isoDateOf(fields), minute: fields.hour * 60 + fields.minute, offset: fields.offset };
  }
  const local = zoned(at, timeZone);
  return { date: local.toFormat('yyyy-MM-dd'), minute: local.hour * 60 + local.minute, offset: local.offset };
}

/** The zone's offset at `at` (minutes east of UTC), from the cached offsets where they answer. */
function zoneOffset(at: number, timeZone: string): number {
  const zone = zoneReader(timeZone);
  return zone !== undefined && at >= MIN_FAST_MS && at < MAX_FAST_MS ? offsetAt(zone, at) : zoned(at, timeZone).offset;
}

/** 0000-01-02 to 9999-12-30 UTC: a day inside years 0 to 9999 whatever the offset, where `yyyy` is four digits. */
const MIN_FAST_MS = -62_167_219_200_000 + 86_400_000;
const MAX_FAST_MS = Date.UTC(9999, 11, 30);

/** Minutes after local midnight of an `HH:MM` time. */
function minutesOf(clock: string): number {
  const [hours = '0', minutes = '0'] = clock.split(':');
  return Number(hours) * 60 + Number(minutes);
}

/**
 * The order in which a run releases an audience's held matches, and so hands out the room of a
 * raised budget: oldest first, then by article key in code units (matches held in one run share
 * their instant). `holds` and the console list them in this order too.
 */
export const byHeldAt = (
  a: { readonly heldAt: number; readonly key: { readonly articleKey: string } },
  b: { readonly heldAt: number; readonly key: { readonly articleKey: string } },
): number =>
  a.heldAt - b.heldAt || (a.key.articleKey < b.key.articleKey ? -1 : a.key.articleKey > b.key.articleKey ? 1 : 0);

/** The local date (`YYYY-MM-DD`) of `at` in the audience's zone: the day a daily budget counts. */
export function localDate(at: number, timeZone: string): string {
  return localClock(at, timeZone).date;
}

/** The urgent-category terms of an audience, normalized like rule terms. */
function urgentTerms(audience: Audience): string[] {
  return (audience.urgentCategories ?? []).map(normalizeText).filter((term) => term !== '');
}

/**
 * Why the match is urgent, for logs and previews: `rule quakes` or `category 003002000`;
 * undefined when it is not.
 */
export function urgencyOf(match: AudienceMatch, audience: Audience): string | undefined {
  const rule = match.rules.find((candidate) => candidate.urgent);
  if (rule !== undefined) return `rule ${rule.ruleId}`;
  const terms = urgentTerms(audience);
  if (terms.length === 0) return undefined;
  const values = [...match.article.categories, ...match.article.categoryNames];
  for (const value of values) {
    const normalized = normalizeText(value);
    const hit = terms.some((term) =>
      term.endsWith('*') ? normalized.startsWith(term.slice(0, -1)) : normalized === term,
    );
    if (hit) return `category ${value}`;
  }
  return undefined;
}

/** True when quiet hours must not hold the match (see the module comment). */
export const isUrgent = (match: AudienceMatch, audience: Audience): boolean => urgencyOf(match, audience) !== undefined;

/** The quiet-hours window in minutes of the local day, or undefined when there is none. */
function quietWindow(audience: Audience): { start: number; end: number } | undefined {
  if (audience.quietHours === undefined) return undefined;
  const start = minutesOf(audience.quietHours.start);
  const end = minutesOf(audience.quietHours.end);
  return start === end ? undefined : { start, end };
}

/**
 * Whether `at` falls inside the audience's quiet hours: local wall-clock time in `[start, end)`,
 * and, once they have begun, until they end. The second part matters only on the night the clock
 * goes back: quiet hours 01:30-06:00 in New York begin at 01:30 EDT, and the clock then reads
 * 01:00 EST, before their start by the wall clock, yet they last until 06:00 EST.
 */
export function isQuietAt(at: number, audience: Audience): boolean {
  const window = quietWindow(audience);
  if (window === undefined) return false;
  const { minute, offset } = localClock(at, audience.timeZone);
  const byClock =
    window.start < window.end
      ? minute >= window.start && minute < window.end
      : minute >= window.start || minute < window.end;
  if (byClock) return true;
  // Only a clock set back within the last day can have left quiet hours that have begun, and only
  // while it reads less than that step before their start (01:00-01:29 EST for a 01:30 start in
  // New York): anything else is decided by the wall clock alone, without luxon.
  const back = zoneOffset(at - DAY_MS, audience.timeZone) - offset;
  if (back <= 0) return false;
  const beforeStart = (window.start - minute + 1440) % 1440;
  if (beforeStart === 0 || beforeStart > back) return false;
  return begunAndNotEnded(at, audience, window.start);
}

/**
 * Whether the latest start of quiet hours at or before `at` is followed by their end only after
 * `at`. The start is looked for on the local dates around `at`: the day after too, since a clock
 * set back across midnight reads the day before the start it already passed (Antarctica/Casey on
 * 5 March 2010: 00:00 +11 began quiet hours 00:00-06:00, then the clock read 23:00 +08 on the 4th).
 */
function begunAndNotEnded(at: number, audience: Audience, startMinutes: number): boolean {
  const day = zoned(at, audience.timeZone).startOf('day');
  const begun = [day.minus({ days: 1 }), day, day.plus({ days: 1 })]
    .flatMap((date) => wallClockStarts(date, startMinutes))
    .filter((instant) => instant <= at);
  if (begun.length === 0) return false;
  const latest = Math.max(...begun);
  return at < (quietHoursEndAfter(latest, audience) ?? latest);
}

/**
 * The instants on `date`'s day whose local time is `minutes` past midnight: one on most days, both
 * (earlier first) when a DST change repeats it, none when a change skips it. Found from the zone's
 * offsets on either side, not with luxon's `fromObject`, which settles a repeated time with the
 * offset in effect on the machine's clock, not the run's: a digest at 01:30 in New York then went
 * out at both 01:30 EDT and 01:30 EST on the night clocks go back, and the same held alert had a
 * different release under a simulated clock depending on the real date.
 */
function wallClockOccurrences(date: DateTime, minutes: number): number[] {
  const local = civilToEpoch(date.year, date.month, date.day, Math.floor(minutes / 60), minutes % 60, 0, 0);
  const offsetAt = (instant: number) => DateTime.fromMillis(instant, { zone: date.zone }).offset;
  // Zones change offset at most a few times a year: a day either side holds both offsets.
  const offsets = new Set([offsetAt(local - DAY_MS), offsetAt(local), offsetAt(local + DAY_MS)]);
  return [...offsets]
    .map((offset) => ({ offset, instant: local - offset * 60_000 }))
    .filter(({ offset, instant }) => offsetAt(instant) === offset)
    .map(({ instant }) => instant)
    .sort((a, b) => a - b);
}

const DAY_MS = 86_400_000;

/**
 * The first instant at or after `at` whose local time in `timeZone` is `clock` (`HH:MM`). Local
 * dates are walked in the zone's calendar, never by adding 24 hours, so DST days are right: a time
 * that occurs twice is taken at its later occurrence only, and one that is skipped as luxon reads
 * it (02:30 on a spring-forward night in New York is 03:30 EDT).
 */
export function nextLocalTime(at: number, clock: string, timeZone: string): number {
  const minutes = minutesOf(clock);
  const day = zoned(at, timeZone).startOf('day');
  for (let offset = 0; offset <= 3; offset += 1) {
    const date = day.plus({ days: offset });
    const candidate =
      wallClockOccurrences(date, minutes).at(-1) ??
      DateTime.fromObject(
        { year: date.year, month: date.month, day: date.day, hour: Math.floor(minutes / 60), minute: minutes % 60 },
        { zone: date.zone },
      ).toMillis();
    if (candidate >= at) return candidate;
  }
  // Unreachable for real zones: a local time recurs at least every 25 hours.
  return at;
}

/**
 * The instants at which the local time `clock` begins on `date`'s day: one on most days; none
 * but the end of the gap when a DST change skips it (quiet hours ending at 01:30 on a night that
 * jumps from 01:00 to 02:00 end at 02:00); both occurrences, earlier first, when it happens twice.
 */
function wallClockStarts(date: DateTime, minutes: number): number[] {
  const occurrences = wallClockOccurrences(date, minutes);
  if (occurrences.length > 0) return occurrences;
  // Skipped: the first instant with the offset after the gap is the gap's end.
  const local = civilToEpoch(date.year, date.month, date.day, Math.floor(minutes / 60), minutes % 60, 0, 0);
  const offsetAt = (instant: number) => DateTime.fromMillis(instant, { zone: date.zone }).offset;
  const later = offsetAt(local + DAY_MS);
  let before = local - offsetAt(local + DAY_MS) * 60_000 - 3 * 3_600_000;
  let after = local - offsetAt(local - DAY_MS) * 60_000 + 3 * 3_600_000;
  while (after - before > 1) {
    const middle = Math.floor((before + after) / 2);
    if (offsetAt(middle) === later) after = middle;
    else before = middle;
  }
  return [after];
}

/**
 * When the quiet hours that `at` falls into end: the first instant at or after `at` at which the
 * local time reaches their end, DST gaps and repeated hours included (see wallClockStarts).
 */
export function quietHoursEndAfter(at: number, audience: Audience): number | undefined {
  if (quietWindow(audience) === undefined || audience.quietHours === undefined) return undefined;
  const minutes = minutesOf(audience.quietHours.end);
  const day = zoned(at, audience.timeZone).startOf('day');
  // From the day before: a clock set back across midnight reads the end on the date before `at`'s.
  for (let offset = -1; offset <= 3; offset += 1) {
    const start = wallClockStarts(day.plus({ days: offset }), minutes).find((instant) => instant >= at);
    if (start !== undefined) return start;
  }
  // Unreachable for real zones: a local time recurs at least every 25 hours.
  return at;
}

/**
 * The audience's next digest at or after `at`: the earliest of its digest times, moved to the end
 * of quiet hours when it falls inside them (a digest is not an excuse for a 3 a.m. message).
 */
export function nextDigestAt(at: number, audience: Audience): number {
  let next = Number.POSITIVE_INFINITY;
  for (const clock of audience.digestTimes) next = Math.min(next, nextLocalTime(at, clock, audience.timeZone));
  if (!Number.isFinite(next)) next = at;
  return isQuietAt(next, audience) ? (quietHoursEndAfter(next, audience) ?? next) : next;
}

/**
 * The first instant at or after `at` that is outside the audience's CURRENT quiet hours: `at`
 * itself when it is not inside them (or there are none), else the end of the stretch it is in.
 * A match held for quiet hours is due then, whatever window held it: quiet hours changed from
 * 22:00-07:00 to 23:00-00:00 make a match held at 00:10 due at 00:10, not at the next midnight.
 */
export function quietFreeFrom(at: number, audience: Audience): number {
  if (!isQuietAt(at, audience)) return at;
  return quietHoursEndAfter(at, audience) ?? at;
}

/**
 * When a held match is due by the clock alone, from the audience's current settings:
 *
 * - digest mode: the next digest after it was held (whatever held it: a digest audience gets
 *   everything in its digests);
 * - otherwise, held by the daily budget while the audience still has one: the next digest;
 * - otherwise (held for quiet hours, or for a digest of a mode the audience left, or by a budget
 *   it no longer has): once it is outside the current quiet hours ({@link quietFreeFrom}), or at
 *   once when `urgent` (an urgent match is held by neither quiet hours nor the budget).
 *
 * Non-decreasing in `heldAt`, and never later with `urgent` than without, which makes
 * {@link earliestDueAt} a lower bound. The run also needs the clock and the budget left
 * ({@link planHeldRelease}): nothing goes out inside the current quiet hours.
 */
export function releaseDueAt(
  held: { readonly heldAt: number; readonly reason: HoldReason; readonly urgent?: boolean | undefined },
  audience: Audience,
): number {
  if (audience.deliveryMode === 'digest') return nextDigestAt(held.heldAt, audience);
  if (held.urgent === true) return held.heldAt;
  if (held.reason === 'budget' && audience.dailyBudget !== undefined) return nextDigestAt(held.heldAt, audience);
  return quietFreeFrom(held.heldAt, audience);
}

/** A held match that goes out at this run ({@link planHeldRelease}). */
export interface HeldRelease {
  /** When it became due (at most `now`): the latest of a release names it. */
  readonly dueAt: number;
  /** `due`: the rule that held it ran its course; `settings-changed`: the settings no longer hold it. */
  readonly cause: ReleaseCause;
  /** Set when it goes out on room left in today's daily budget: it counts against that date. */
  readonly budgetDate?: string | undefined;
}

/**
 * Whether a held match goes out at `now`, planned again from the audience's CURRENT settings
 * (the first rule that applies):
 *
 * 1. inside the current quiet hours nothing goes out, except a match that is urgent now for an
 *    audience not in digest mode (a digest is not an excuse for a 3 a.m. message either);
 * 2. due by the clock ({@link releaseDueAt}) → out;
 * 3. held by the daily budget on today's local date, audience not in digest mode, and today's
 *    budget as set now has room (`budgetLeft` > 0: it was raised) → out, counting against today;
 * 4. otherwise it stays held.
 *
 * The cause is `due` when the rule that held it still applies and its time came (its quiet hours
 * ended, its digest time came), `settings-changed` when it goes out because the settings changed
 * (quiet hours that no longer cover when it was held, another delivery mode, a raised or removed
 * budget, a category made urgent); such a release is named by `now`.
 *
 * @param budgetLeft immediate alerts today's budget still allows (`localDate(now)`); Infinity
 *                   when the audience has no budget. Callers take one off for each `budgetDate`.
 */
export function planHeldRelease(
  held: { readonly heldAt: number; readonly reason: HoldReason; readonly match: AudienceMatch },
  audience: Audience,
  now: number,
  budgetLeft: number,
): HeldRelease | undefined {
  const digestMode = audience.deliveryMode === 'digest';
  const urgent = !digestMode && isUrgent(held.match, audience);
  const dueAt = releaseDueAt({ heldAt: held.heldAt, reason: held.reason, urgent }, audience);
  const sameRule = heldByTheSameRule(held, audience, urgent);
  if (!urgent && isQuietAt(now, audience)) {
    // Inside quiet hours nothing goes out, but what fell due in a free stretch shorter than a run
    // may leave between two runs, held by the settings it is still held by. Quiet hours of
    // 00:00-23:59 leave one free minute that runs every five minutes never see, and their holds
    // and digests would otherwise wait until their retention deleted them. A longer free stretch
    // had runs that saw the match; if they kept it (other settings then, the audience disabled, a
    // deadline), it waits for the next free time as before.
    if (!(sameRule && dueAt <= now && inShortFreeStretch(dueAt, audience))) return undefined;
    return { dueAt, cause: 'due' };
  }
  if (dueAt <= now) {
    const cause = sameRule ? 'due' : 'settings-changed';
    return { dueAt: cause === 'due' ? dueAt : now, cause };
  }
  const today = localDate(now, audience.timeZone);
  if (
    held.reason === 'budget' &&
    !digestMode &&
    budgetLeft > 0 &&
    localDate(held.heldAt, audience.timeZone) === today
  ) {
    return { dueAt: now, cause: 'settings-changed', budgetDate: today };
  }
  return undefined;
}

/** Whether the current settings still hold a due match by the rule that held it (cause `due`). */
/** A free stretch between quiet hours shorter than this may pass between two runs unseen. */
export const missableFreeStretchMs = 60 * 60_000;

/**
 * Whether `at` is outside quiet hours in a free stretch shorter than {@link missableFreeStretchMs}
 * (quiet hours are set in whole minutes, so minute steps find its ends).
 */
function inShortFreeStretch(at: number, audience: Audience): boolean {
  if (isQuietAt(at, audience)) return false;
  const minute = 60_000;
  const start = at - (at % minute);
  let free = 1;
  let back = true;
  let ahead = true;
  for (let step = 1; back || ahead; step += 1) {
    if (back && isQuietAt(start - step * minute, audience)) back = false;
    else if (back) free += 1;
    if (ahead && isQuietAt(start + step * minute, audience)) ahead = false;
    else if (ahead) free += 1;
    if (free * minute >= missableFreeStretchMs) return false;
  }
  return true;
}

function heldByTheSameRule(
  held: { readonly heldAt: number; readonly reason: HoldReason },
  audience: Audience,
  urgent: boolean,
): boolean {
  const digestMode = audience.deliveryMode === 'digest';
  if (held.reason === 'digest') return digestMode;
  if (held.reason === 'budget') return !urgent && (digestMode || audience.dailyBudget !== undefined);
  // Quiet hours: the current window must be the one it was held in (covering its hold instant).
  return !digestMode && !urgent && isQuietAt(held.heldAt, audience);
}

/**
 * The earliest instant any of an audience's held matches can be due by the clock, from its index
 * entry: the release step skips reading an audience's items before then. A match held for a
 * digest may be urgent (its rules say so), and any match may be when the audience has
 * `urgentCategories`, so those count as urgent here. Budget room is not a clock: the release step
 * looks at the daily count for that.
 */
export function earliestDueAt(entry: HoldingAudience, audience: Audience): number {
  const urgentCategories = (audience.urgentCategories ?? []).length > 0;
  let earliest = Number.POSITIVE_INFINITY;
  for (const reason of entry.reasons) {
    const urgent = reason === 'digest' || urgentCategories;
    earliest = Math.min(earliest, releaseDueAt({ heldAt: entry.oldestHeldAt, reason, urgent }, audience));
  }
  return Number.isFinite(earliest) ? earliest : entry.oldestHeldAt;
}

/**
 * Decides what happens to one match at `now` (rules in the module comment).
 *
 * @param usedToday immediate alerts already counted (or planned) for the audience on
 *                  `localDate(now, audience.timeZone)`; ignored when it has no daily budget.
 */
export function planDelivery(
  match: AudienceMatch,
  audience: Audience,
  now: number,
  usedToday: number,
): DeliveryDecision {
  const urgent = isUrgent(match, audience);
  if (audience.deliveryMode === 'digest') return { action: 'hold', reason: 'digest', urgent };
  if (!urgent && isQuietAt(now, audience)) return { action: 'hold', reason: 'quiet-hours', urgent };
  if (audience.dailyBudget === undefined) return { action: 'send', urgent };
  if (!urgent && usedToday >= audience.dailyBudget) return { action: 'hold', reason: 'budget', urgent };
  return { action: 'send', urgent, budgetDate: localDate(now, audience.timeZone) };
}
