/**
 * How far apart the runs of a schedule expression are: the shortest gap sizes the recheck period
 * and the error alarms, the longest the no-run alarm. `rate(…)` says it; for `cron(…)` the gaps
 * are found by walking two calendar years of its fields. Written here, not taken from a cron
 * library: EventBridge's cron has six fields (a year), `?`, and days of the week numbered 1-7 from
 * Sunday, which the common parsers (cron-parser, croner) read differently. Numbers, ranges, steps,
 * lists and the names of months (JAN) and days (MON) are read; `L`, `W`, `#`, a range that wraps
 * (`22-2`) and a year field that leaves out 2028 or 2029 give undefined: the stated
 * `scheduleIntervalMinutes` is then taken as given.
 */

/** The six fields of a `cron(…)` expression (minutes, hours, day of month, month, day of week, year); undefined for anything else. */
export function cronFields(expression: string): [string, string, string, string, string, string] | undefined {
  const fields = /^cron\((.*)\)$/.exec(expression)?.[1]?.split(' ');
  return fields?.length === 6 ? (fields as [string, string, string, string, string, string]) : undefined;
}

/** Minutes between runs of a `rate()` expression; undefined for anything else. */
export function rateMinutes(expression: string): number | undefined {
  const match = /^rate\((\d+) (minute|minutes|hour|hours|day|days)\)$/.exec(expression);
  if (!match) return undefined;
  const amount = Number(match[1]);
  const unit = match[2] ?? 'minutes';
  return unit.startsWith('minute') ? amount : unit.startsWith('hour') ? amount * 60 : amount * 1440;
}

/**
 * The values a numeric cron field takes within [low, high]: `*`, `?`, `5`, `1-5`, `0/10`, `*\/10`,
 * `10-50/5` and lists of them. Undefined for anything else (names, `L`, `W`, `#`, a range that
 * wraps), which Scheduler reads its own way.
 */
function fieldValues(field: string, low: number, high: number, names: readonly string[] = []): Set<number> | undefined {
  const values = new Set<number>();
  // Names stand for their numbers (JAN is 1, SUN is 1), as Scheduler reads them.
  const numbered = field.toUpperCase().replace(/[A-Z]{3}/g, (name) => {
    const index = names.indexOf(name);
    return index < 0 ? name : String(low + index);
  });
  for (const part of numbered === '?' ? ['*'] : numbered.split(',')) {
    const match = /^(\*|\d+)(?:-(\d+))?(?:\/(\d+))?$/.exec(part);
    if (match === null) return undefined;
    const start = match[1] === '*' ? low : Number(match[1]);
    const end = match[2] !== undefined ? Number(match[2]) : match[1] === '*' || match[3] !== undefined ? high : start;
    const step = match[3] === undefined ? 1 : Number(match[3]);
    if (step < 1 || start > end || start < low || end > high) return undefined;
    for (let value = start; value <= end; value += step) values.add(value);
  }
  return values;
}

const monthNames = ['JAN', 'FEB', 'MAR', 'APR', 'MAY', 'JUN', 'JUL', 'AUG', 'SEP', 'OCT', 'NOV', 'DEC'];
const dayNames = ['SUN', 'MON', 'TUE', 'WED', 'THU', 'FRI', 'SAT'];
const minutesPerDay = 1440;
const dayMs = 86_400_000;
/** Two years from a Sunday: every weekday, every month length and a leap day are walked. */
const walkFrom = Date.UTC(2028, 0, 2);
const walkDays = 731;
const walkYears = [2028, 2029, 2030];

/** The shortest and the longest gap between two runs of a schedule, in minutes. */
export interface ScheduleGaps {
  readonly shortest: number;
  /** `Infinity` when it runs at most once in two years. */
  readonly longest: number;
}

/** The gaps of a `rate(…)` or a `cron(…)` this module reads; undefined otherwise. */
export function scheduleGaps(expression: string): ScheduleGaps | undefined {
  const rate = rateMinutes(expression);
  return rate === undefined ? cronGaps(expression) : { shortest: rate, longest: rate };
}

/**
 * The shortest and longest gaps in minutes between consecutive firings of a `cron(…)` expression
 * (on its own wall clock: a daylight-saving change moves them by an hour, which the alarm's slack
 * covers); the longest is `Infinity` when it fires at most once in two years. Undefined for
 * `rate(…)` and for a cron this module does not read (see the module comment); an expression
 * Scheduler refuses is `scheduleProblem`'s to report.
 */
export function cronGaps(expression: string): ScheduleGaps | undefined {
  const fields = cronFields(expression);
  if (fields === undefined) return undefined;
  const [minuteField, hourField, dayOfMonthField, monthField, dayOfWeekField, yearField] = fields;
  // A year field matters to the gaps only where the schedule starts or ends: one that runs
  // through the years walked is read as running on.
  const years = fieldValues(yearField, 1970, 2199);
  if (years === undefined || walkYears.some((year) => !years.has(year))) return undefined;
  const minutes = fieldValues(minuteField, 0, 59);
  const hours = fieldValues(hourField, 0, 23);
  const daysOfMonth = fieldValues(dayOfMonthField, 1, 31);
  const months = fieldValues(monthField, 1, 12, monthNames);
  const daysOfWeek = fieldValues(dayOfWeekField, 1, 7, dayNames);
  if (!minutes || !hours || !daysOfMonth || !months || !daysOfWeek) return undefined;
  const minutesOfDay = [...hours].flatMap((hour) => [...minutes].map((minute) => hour * 60 + minute));
  minutesOfDay.sort((a, b) => a - b);
  let previous: number | undefined;
  let longest = 0;
  let shortest = Number.POSITIVE_INFINITY;
  for (let day = 0; day < walkDays; day += 1) {
    const date = new Date(walkFrom + day * dayMs);
    const fires =
      months.has(date.getUTCMonth() + 1) &&
      (dayOfMonthField === '?' ? daysOfWeek.has(date.getUTCDay() + 1) : daysOfMonth.has(date.getUTCDate()));
    if (!fires) continue;
    for (const minuteOfDay of minutesOfDay) {
      const at = day * minutesPerDay + minuteOfDay;
      if (previous !== undefined) {
        longest = Math.max(longest, at - previous);
        shortest = Math.min(shortest, at - previous);
      }
      previous = at;
    }
  }
  return previous === undefined || longest === 0
    ? { shortest: Number.POSITIVE_INFINITY, longest: Number.POSITIVE_INFINITY }
    : { shortest, longest };
}
