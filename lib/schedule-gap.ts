/**
 * How far apart the runs of a schedule expression can be: what the no-run alarm and the recheck
 * period are sized from. `rate(…)` says it; for `cron(…)` the longest gap between two firings is
 * found by walking two calendar years of its numeric fields. Written here, not taken from a cron
 * library: EventBridge's cron has six fields (a year), `?`, and days of the week numbered 1-7 from
 * Sunday, which the common parsers (cron-parser, croner) read differently; and only the numeric
 * subset is needed. Names (MON, JAN), `L`, `W` and `#` give undefined: the stated
 * `scheduleIntervalMinutes` is then taken as given.
 */

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
function fieldValues(field: string, low: number, high: number): Set<number> | undefined {
  const values = new Set<number>();
  for (const part of field === '?' ? ['*'] : field.split(',')) {
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

const minutesPerDay = 1440;
const dayMs = 86_400_000;
/** Two years from a Sunday: every weekday, every month length and a leap day are walked. */
const walkFrom = Date.UTC(2028, 0, 2);
const walkDays = 731;

/**
 * The longest gap in minutes between two consecutive firings of a `cron(…)` expression (on its
 * own wall clock: a daylight-saving change moves it by an hour, which the alarm's slack covers), or
 * `Infinity` when it fires at most once in two years. Undefined for `rate(…)` and for a cron this
 * module does not read (see the module comment); an expression Scheduler refuses is
 * `scheduleProblem`'s to report.
 */
export function cronGapMinutes(expression: string): number | undefined {
  const fields = /^cron\((.*)\)$/.exec(expression)?.[1]?.split(' ');
  if (fields === undefined || fields.length !== 6) return undefined;
  const [minuteField, hourField, dayOfMonthField, monthField, dayOfWeekField, yearField] = fields as [
    string,
    string,
    string,
    string,
    string,
    string,
  ];
  if (yearField !== '*') return undefined;
  const minutes = fieldValues(minuteField, 0, 59);
  const hours = fieldValues(hourField, 0, 23);
  const daysOfMonth = fieldValues(dayOfMonthField, 1, 31);
  const months = fieldValues(monthField, 1, 12);
  const daysOfWeek = fieldValues(dayOfWeekField, 1, 7);
  if (!minutes || !hours || !daysOfMonth || !months || !daysOfWeek) return undefined;
  const minutesOfDay = [...hours].flatMap((hour) => [...minutes].map((minute) => hour * 60 + minute));
  minutesOfDay.sort((a, b) => a - b);
  let previous: number | undefined;
  let longest = 0;
  for (let day = 0; day < walkDays; day += 1) {
    const date = new Date(walkFrom + day * dayMs);
    const fires =
      months.has(date.getUTCMonth() + 1) &&
      (dayOfMonthField === '?' ? daysOfWeek.has(date.getUTCDay() + 1) : daysOfMonth.has(date.getUTCDate()));
    if (!fires) continue;
    for (const minuteOfDay of minutesOfDay) {
      const at = day * minutesPerDay + minuteOfDay;
      if (previous !== undefined) longest = Math.max(longest, at - previous);
      previous = at;
    }
  }
  return previous === undefined || longest === 0 ? Number.POSITIVE_INFINITY : longest;
}
