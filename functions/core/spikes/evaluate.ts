/**
 * The detector on any count series (docs/spikes.md "Evaluating on any series"): reads a CSV of
 * `timestamp,value` (NAB's data format), steps the same {@link SpikeDetector} the run uses, bucket
 * by bucket, and writes what it would have done at every step in NAB's results format
 * (`timestamp,value,anomaly_score,label`): `anomaly_score` is 1 on the step where an episode opens
 * (the alert) and 0 everywhere else, so any threshold in (0, 1] scores the preset's alerts; `label`
 * is NAB's ground truth column, 1 inside the given windows (0 without windows).
 *
 * Bad input gets an error that names the line and what to fix; nothing is guessed.
 *
 * Pure: no I/O (the CLI reads and writes the files).
 */
import { NewsAlertsError } from '../errors.ts';
import {
  type BucketVerdict,
  emptyDetectorState,
  PRESETS,
  type PresetParameters,
  SpikeDetector,
  type SpikePreset,
  spikeModel,
} from './detector.ts';

/** A count series that cannot be read: what and where. */
export class SeriesFormatError extends NewsAlertsError {
  constructor(message: string) {
    super(message);
    this.name = 'SeriesFormatError';
  }
}

/** A count series as read: one row per line of the file, in time order. */
export interface CountSeries {
  /** The timestamps as written (kept for the results file). */
  readonly texts: readonly string[];
  /** Epoch ms, UTC. */
  readonly times: readonly number[];
  /** Whole counts the detector steps. */
  readonly values: readonly number[];
  /** The values as written (kept for the results file). */
  readonly valueTexts: readonly string[];
}

/** Most rows a series may have (NAB's longest file has about 22,700). */
export const MAX_SERIES_ROWS = 2_000_000;

/**
 * Most bytes a series file may have: {@link MAX_SERIES_ROWS} rows of 50 bytes (a NAB row is about
 * 22, an ISO 8601 one with milliseconds and a zone about 35). The reader stops there, so an
 * endless input (`yes … |`) is refused instead of filling the memory.
 */
export const MAX_SERIES_BYTES = 100_000_000;

/** What to do with a series over {@link MAX_SERIES_ROWS} or {@link MAX_SERIES_BYTES}. */
export const SPLIT_ADVICE = `split it into files of at most ${MAX_SERIES_ROWS.toLocaleString('en-US')} rows, each starting with the header line, and evaluate each`;

/**
 * The lines of `text`, one at a time (a text of millions of lines is never split at once). A line
 * ends in LF, CRLF or a lone CR (old Mac and Excel's "CSV (Macintosh)"), which otherwise reads as
 * one line holding the whole file.
 */
function* linesOf(text: string): Generator<string, void> {
  const lineBreak = /\r\n|\r|\n/g;
  let start = 0;
  for (let found = lineBreak.exec(text); found !== null; found = lineBreak.exec(text)) {
    yield text.slice(start, found.index);
    start = found.index + found[0].length;
  }
  yield text.slice(start);
}

/**
 * A timestamp: `YYYY-MM-DD HH:MM:SS` (NAB; UTC), optionally with fractional seconds, or ISO 8601
 * with `T` and an offset or `Z`. NaN when it is neither, or names no real instant (February 30,
 * hour 24: Date.parse would roll them over into another day, and NAB's scorer refuses them).
 */
export function parseTimestamp(text: string): number {
  const trimmed = text.trim();
  const nab = /^(\d{4}-\d{2}-\d{2})[ T](\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?)$/.exec(trimmed);
  if (nab !== null) return onCalendar(trimmed) ? Date.parse(`${nab[1]}T${nab[2]}Z`) : Number.NaN;
  if (/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/.test(trimmed)) {
    return onCalendar(trimmed) ? Date.parse(trimmed) : Number.NaN;
  }
  return Number.NaN;
}

/** Whether the date and clock time a timestamp starts with exist (its own zone aside). */
function onCalendar(text: string): boolean {
  // The date and clock fields only: an offset (`+09:00`) is not a field of the clock time.
  const fields = /^(\d{4})-(\d{2})-(\d{2})[ T](\d{2}):(\d{2})(?::(\d{2}))?/.exec(text);
  if (fields === null) return false;
  const [year, month, day, hour, minute, second] = fields.slice(1, 7).map((field) => Number(field ?? 0));
  const at = new Date(Date.UTC(year ?? 0, (month ?? 0) - 1, day, hour, minute, second));
  return (
    at.getUTCFullYear() === year &&
    at.getUTCMonth() === (month ?? 0) - 1 &&
    at.getUTCDate() === day &&
    at.getUTCHours() === hour &&
    at.getUTCMinutes() === minute &&
    at.getUTCSeconds() === second
  );
}

/** The whole years pandas timestamps (nanoseconds since 1970 in 64 bits) hold: 1677-09-21 to 2262-04-11. */
const NAB_YEARS = { from: 1678, to: 2261 } as const;

/** The largest count a bucket may hold: far above any news or social series, far below float trouble. */
export const MAX_COUNT = 1e12;

/** Most characters of the input an error quotes: a line can be a whole file's worth. */
const QUOTED_CHARACTERS = 80;

/** `text` quoted for an error message, cut to {@link QUOTED_CHARACTERS} with an ellipsis. */
function quoted(text: string): string {
  const characters = [...text.slice(0, QUOTED_CHARACTERS * 2)];
  return characters.length > QUOTED_CHARACTERS || text.length > QUOTED_CHARACTERS * 2
    ? `${JSON.stringify(characters.slice(0, QUOTED_CHARACTERS).join(''))}…`
    : JSON.stringify(text);
}

/** A count as NAB files write it: decimal digits, no sign, hex, Infinity or fraction. */
const countText = /^(?:\d+(?:\.0*)?|\.0+)$/;

/**
 * A cell as written, without the spaces around it and without the double quotes a spreadsheet or
 * pandas (`quoting=csv.QUOTE_ALL`) may put around every cell (RFC 4180): `"2015-02-26 21:42:53"`
 * is that timestamp. A quoted cell holding a quote or a comma is not a timestamp or a count, and
 * reads as the text it is.
 */
function cellText(cell: string): string {
  const trimmed = cell.trim();
  return /^"[^",]*"$/.test(trimmed) ? trimmed.slice(1, -1).trim() : trimmed;
}

/**
 * Reads `timestamp,value` rows (a header line first); `source` names the file in errors. More
 * than `maxRows` rows are refused as soon as the row after the last allowed one is reached.
 */
export function readCountSeries(text: string, source: string, maxRows = MAX_SERIES_ROWS): CountSeries {
  // Trailing blank lines are no rows; trimEnd is linear, where a regular expression could not be.
  const lines = linesOf(text.replace(/^\uFEFF/, '').trimEnd());
  const head = lines.next();
  const first = head.done ? '' : head.value;
  const header = first.split(',').map((cell) => cellText(cell).toLowerCase());
  const timeColumn = header.indexOf('timestamp');
  const valueColumn = header.indexOf('value');
  if (timeColumn < 0 || valueColumn < 0) {
    throw new SeriesFormatError(
      `${source}:1: the first line must name the columns "timestamp" and "value" (NAB's format: timestamp,value); found ${quoted(first)}`,
    );
  }
  const texts: string[] = [];
  const times: number[] = [];
  const values: number[] = [];
  const valueTexts: string[] = [];
  let index = 0;
  for (const line of lines) {
    index += 1;
    const where = `${source}:${index + 1}`;
    if (index > maxRows) {
      throw new SeriesFormatError(
        `${where}: more than ${maxRows.toLocaleString('en-US')} rows, the most evaluated at once; ${SPLIT_ADVICE}`,
      );
    }
    if (line.trim() === '') throw new SeriesFormatError(`${where}: an empty line inside the data; remove it`);
    const cells = line.split(',');
    if (cells.length !== header.length) {
      throw new SeriesFormatError(
        cells.length > header.length
          ? `${where}: ${cells.length} cells, but the header names ${header.length} columns; a value must not hold a comma (no thousands separators)`
          : `${where}: ${cells.length} cell${cells.length === 1 ? '' : 's'}, but the header names ${header.length} columns; give every row a cell for each column`,
      );
    }
    const timeText = cellText(cells[timeColumn] ?? '');
    const valueText = cellText(cells[valueColumn] ?? '');
    // NAB's scorer reads timestamps as pandas datetimes, which hold these years only; and JavaScript
    // dates put years 0-99 in the 1900s, so such a date read as "not a timestamp" (found by a reviewer).
    const year = Number(/^(\d{4})-\d{2}-\d{2}[ T]/.exec(timeText)?.[1] ?? Number.NaN);
    if (year < NAB_YEARS.from || year > NAB_YEARS.to) {
      throw new SeriesFormatError(
        `${where}: timestamp ${quoted(timeText)}: the year must be from ${NAB_YEARS.from} to ${NAB_YEARS.to}, the years NAB's scorer can read (as pandas timestamps)`,
      );
    }
    const time = parseTimestamp(timeText);
    if (!Number.isFinite(time)) {
      throw new SeriesFormatError(
        `${where}: timestamp ${quoted(timeText)} is not "YYYY-MM-DD HH:MM:SS" (UTC) or ISO 8601 with a zone`,
      );
    }
    const value = Number(valueText);
    if (!countText.test(valueText)) {
      const shown = quoted(valueText);
      throw new SeriesFormatError(
        /^\d*\.\d+$/.test(valueText)
          ? `${where}: value ${shown} is not a whole count; the detector models counts per bucket (stories, mentions), so scale a measurement to whole units first (rounding would make it ${Math.round(value)})`
          : /^\d+(\.\d*)?e[+-]?\d+$/i.test(valueText)
            ? `${where}: value ${shown} is in exponent form; write counts as decimal digits (1000, not 1e3)`
            : `${where}: value ${shown} is not a count (decimal digits, ≥ 0)`,
      );
    }
    if (value > MAX_COUNT) {
      throw new SeriesFormatError(`${where}: value ${quoted(valueText)} is larger than a count can be (at most 1e12)`);
    }
    const previous = times.at(-1);
    if (previous !== undefined && time === previous) {
      throw new SeriesFormatError(
        `${where}: timestamp ${timeText} repeats the row before it; keep one row per timestamp`,
      );
    }
    if (previous !== undefined && time < previous) {
      throw new SeriesFormatError(`${where}: timestamp ${timeText} is before the row before it; sort the file by time`);
    }
    texts.push(timeText);
    times.push(time);
    values.push(value);
    valueTexts.push(valueText);
  }
  if (times.length === 0) throw new SeriesFormatError(`${source}: no rows after the header line; nothing to evaluate`);
  return { texts, times, values, valueTexts };
}

/** Why evaluate refuses rows finer than its bucket instead of adding them up. */
const NOT_SUMMED =
  "evaluate does not add rows up, since its results are row for row with the data as NAB's scorer needs";

/**
 * The bucket length of a series: the most common step between rows, which must be a whole number
 * of minutes from one minute to one day.
 */
export function bucketLengthOf(series: CountSeries, source: string): number {
  if (series.times.length < 2) {
    throw new SeriesFormatError(
      `${source}: one row cannot tell the bucket length; give --bucket-minutes, or more rows`,
    );
  }
  const step = commonStep(series) ?? 0;
  if (step > 86_400_000) {
    throw new SeriesFormatError(
      `${source}: rows are mostly ${step / 3_600_000} hours apart; the detector takes buckets of at most 1 day: give --bucket-minutes 1440 (the days between rows are stepped as unknown)`,
    );
  }
  if (step % 60_000 !== 0 || step < 60_000) {
    // Rows a logger or a cron wrote a few seconds early or late have no common step, but their
    // median step is near whole minutes. What to do then is tried, not guessed: buckets of that
    // length may already hold one row each, or rounding every timestamp to the clock's marks may
    // (rows a steady 57 s apart drift, and two would share a minute either way).
    const near = nearWholeMinutes(medianStep(series));
    const minutes = (n: number) => (n === 1 ? 'a minute' : `${n} minutes`);
    if (near !== undefined && oneRowEach(series, near * 60_000, 'as-is')) {
      throw new SeriesFormatError(
        `${source}: rows are about ${minutes(near)} apart, but their timestamps are seconds off that step (the most common step is ${step / 1000} s): give --bucket-minutes ${near}, which puts each row in a bucket of its own`,
      );
    }
    if (near !== undefined && oneRowEach(series, near * 60_000, 'rounded')) {
      throw new SeriesFormatError(
        `${source}: rows are about ${minutes(near)} apart, but their timestamps are a few seconds off that grid (the most common step is ${step / 1000} s): round each timestamp to the nearest ${near === 1 ? 'minute' : `${near} minutes`} of the clock first, as the detector takes buckets of whole minutes, one row each`,
      );
    }
    throw new SeriesFormatError(
      `${source}: rows are mostly ${step / 1000} s apart; the detector takes buckets of whole minutes (1 to 1440), one row each: ${NOT_SUMMED}: sum the rows into buckets of whole minutes first`,
    );
  }
  return step;
}

/**
 * The whole number of minutes (1 to 1440) that `ms` is within a tenth of (295 s: 5 min), or
 * undefined: the step of rows a logger or a cron wrote a few seconds early or late.
 */
function nearWholeMinutes(ms: number): number | undefined {
  const minutes = Math.round(ms / 60_000);
  return minutes >= 1 && minutes <= 1440 && Math.abs(ms - minutes * 60_000) <= minutes * 6_000 ? minutes : undefined;
}

/**
 * Whether every row gets a bucket of its own with buckets of `bucketMs`: `as-is`, the buckets
 * evaluate makes (from the first row's time); `rounded`, after rounding each timestamp to the
 * nearest mark of the clock's `bucketMs` grid (what a user who rounds the file would give it).
 */
function oneRowEach(series: CountSeries, bucketMs: number, how: 'as-is' | 'rounded'): boolean {
  const origin = series.times[0] as number;
  let previous = Number.NEGATIVE_INFINITY;
  for (const time of series.times) {
    const bucket = how === 'as-is' ? Math.floor((time - origin) / bucketMs) : Math.round(time / bucketMs);
    if (bucket <= previous) return false;
    previous = bucket;
  }
  return true;
}

/** The median step between rows (ms); 0 for a single row. */
function medianStep(series: CountSeries): number {
  const steps: number[] = [];
  for (let i = 1; i < series.times.length; i++)
    steps.push((series.times[i] as number) - (series.times[i - 1] as number));
  steps.sort((a, b) => a - b);
  return steps[steps.length >> 1] ?? 0;
}

/** The most common step between rows (ms), or undefined for a single row. */
function commonStep(series: CountSeries): number | undefined {
  const steps = new Map<number, number>();
  for (let i = 1; i < series.times.length; i++) {
    const step = (series.times[i] as number) - (series.times[i - 1] as number);
    steps.set(step, (steps.get(step) ?? 0) + 1);
  }
  return [...steps].sort((a, b) => b[1] - a[1] || a[0] - b[0])[0]?.[0];
}

/**
 * A warning when most buckets between the first row and the last hold no row: the detector steps
 * each of those as unknown and learns from the rest only, so a bucket shorter than the rows' step
 * (`--bucket-minutes 1` on 5-minute rows) leaves it blind. Undefined when at least half are filled.
 */
export function sparseBuckets(series: CountSeries, bucketMs: number): string | undefined {
  const first = series.times[0] as number;
  const last = series.times.at(-1) as number;
  const buckets = Math.floor((last - first) / bucketMs) + 1;
  const rows = series.times.length;
  if (rows * 2 >= buckets) return undefined;
  const step = commonStep(series);
  const minutes = bucketMs / 60_000;
  const advice =
    step !== undefined && step > bucketMs && step % 60_000 === 0
      ? `; rows are mostly ${step / 60_000} min apart: try --bucket-minutes ${step / 60_000}`
      : '';
  return `only ${rows} of the ${buckets} ${minutes}-minute buckets from the first row to the last have a row; the detector steps the other ${buckets - rows} as unknown (no count) and cannot alert on them${advice}`;
}

/**
 * Most buckets a series may span from its first row to its last: as many as it may have rows
 * ({@link MAX_SERIES_ROWS}), so a gap costs no more than rows would. The detector steps every
 * bucket of a gap as unknown, one by one (tens of microseconds each at one-minute buckets), so
 * a single far-off timestamp (`9999-12-31`) would otherwise keep it busy for hours. About 3.8
 * years of 1-minute buckets, 19 years of 5-minute ones, 228 years of hourly ones.
 */
export const MAX_SERIES_BUCKETS = MAX_SERIES_ROWS;

/** A gap as a person reads it: years past two, days past two, else hours or minutes. */
function spanText(ms: number): string {
  const days = ms / 86_400_000;
  if (days >= 730) return `${Math.round(days / 365.25).toLocaleString('en-US')} years`;
  if (days >= 2) return `${Math.round(days).toLocaleString('en-US')} days`;
  return ms >= 7_200_000 ? `${Math.round(ms / 3_600_000)} hours` : `${Math.round(ms / 60_000)} minutes`;
}

/**
 * Refuses a bucket length given for the series (`--bucket-minutes`) that neither is the rows' step
 * nor divides it (7 on hourly rows): rows would fall at uneven places of the buckets, most
 * buckets between them would be stepped as unknown, and the hours of the week would not line up,
 * so what the detector did would say nothing about the series. A shorter bucket that divides the
 * step is allowed (warned about as sparse); a longer one is refused row by row (two rows in one
 * bucket). Rows with no step in whole minutes are left to those checks.
 * @throws SeriesFormatError naming the step and the bucket lengths that fit
 */
export function checkBucketFitsRows(series: CountSeries, bucketMs: number, source = 'the series'): void {
  const step = commonStep(series);
  if (step === undefined || step % 60_000 !== 0 || step <= bucketMs || step % bucketMs === 0) return;
  const minutes = step / 60_000;
  const fitting: number[] = [];
  for (let divisor = minutes; divisor >= 1 && fitting.length < 6; divisor--) {
    if (minutes % divisor === 0) fitting.push(divisor);
  }
  throw new SeriesFormatError(
    `${source}: --bucket-minutes ${bucketMs / 60_000} does not divide the rows' ${minutes}-minute step, so the rows would fall at uneven places of the buckets; the bucket must be the rows' step or divide it: give --bucket-minutes ${fitting.join(', ')}${fitting.at(-1) === 1 ? '' : ', …'}`,
  );
}

/**
 * Refuses, before any bucket is stepped, a series that spans more than
 * {@link MAX_SERIES_BUCKETS} buckets, naming the line after its longest gap (most often one
 * mistyped timestamp).
 * @throws SeriesFormatError naming the line, the gap and what to do
 */
export function checkSeriesSpan(series: CountSeries, bucketMs: number, source = 'the series'): void {
  const first = series.times[0] as number;
  const last = series.times.at(-1) as number;
  const buckets = Math.floor((last - first) / bucketMs) + 1;
  if (buckets <= MAX_SERIES_BUCKETS) return;
  let widest = 1;
  for (let row = 2; row < series.times.length; row++) {
    const gap = (series.times[row] as number) - (series.times[row - 1] as number);
    if (gap > (series.times[widest] as number) - (series.times[widest - 1] as number)) widest = row;
  }
  const gap = (series.times[widest] as number) - (series.times[widest - 1] as number);
  const minutes = bucketMs / 60_000;
  const most = `at most ${MAX_SERIES_BUCKETS.toLocaleString('en-US')} can be evaluated (${spanText(MAX_SERIES_BUCKETS * bucketMs)})`;
  if (gap * 2 < last - first) {
    throw new SeriesFormatError(
      `${source}: from its first row to its last (line ${series.times.length + 1}) the series spans ${buckets.toLocaleString('en-US')} ${minutes}-minute buckets, and ${most}: give a longer --bucket-minutes, or split the file and evaluate each part`,
    );
  }
  throw new SeriesFormatError(
    `${source}:${widest + 2}: timestamp ${series.texts[widest]} is ${spanText(gap)} after the row before it, so the series spans ${buckets.toLocaleString('en-US')} ${minutes}-minute buckets from its first row to its last, and ${most}: fix that timestamp if it is a typo, or split the file there and evaluate each part`,
  );
}

/** What the detector said at every row of a series. */
export interface SeriesEvaluation {
  readonly bucketMs: number;
  /** Per row (same order as the series). */
  readonly verdicts: readonly BucketVerdict[];
  /** Rows where an episode opened. */
  readonly alerts: readonly number[];
}

/**
 * Steps the detector over the series at `preset`. Buckets run from the first row's on; a bucket
 * without a row (a gap) is stepped as unknown. Two rows in one bucket are an error, and so is a
 * series spanning more than {@link MAX_SERIES_BUCKETS} buckets ({@link checkSeriesSpan}).
 */
export function evaluateSeries(
  series: CountSeries,
  preset: SpikePreset,
  options: { readonly bucketMs: number; readonly source?: string },
): SeriesEvaluation & { readonly preset: SpikePreset } {
  return { ...evaluateSeriesWith(series, PRESETS[preset], options), preset };
}

/** {@link evaluateSeries} with preset parameters of the caller's (the bench's leave-one-out grid). */
export function evaluateSeriesWith(
  series: CountSeries,
  preset: PresetParameters,
  options: { readonly bucketMs: number; readonly source?: string },
): SeriesEvaluation {
  const { bucketMs } = options;
  checkSeriesSpan(series, bucketMs, options.source);
  const model = spikeModel(bucketMs);
  const origin = series.times[0] as number;
  const bucketOfRow = (row: number) => Math.floor(((series.times[row] as number) - origin) / bucketMs);
  const detector = new SpikeDetector(model, preset, emptyDetectorState(0));
  const verdicts: BucketVerdict[] = [];
  const alerts: number[] = [];
  for (let row = 0; row < series.values.length; row++) {
    const bucket = bucketOfRow(row);
    if (bucket < detector.next) throw twoRowsInABucket(series, row, bucketMs, options.source);
    while (detector.next < bucket) detector.step(-1);
    const verdict = detector.step(series.values[row] as number);
    verdicts.push(verdict);
    if (verdict.event === 'open') alerts.push(row);
  }
  return { bucketMs, verdicts, alerts };
}

/**
 * The error for a row in the same bucket as the row before it (closer than a bucket): the fix is
 * a bucket that is the rows' step or divides it (`--bucket-minutes 5`, or 1, for 5-minute rows;
 * 7 fits neither), or rows summed into buckets first.
 */
function twoRowsInABucket(
  series: CountSeries,
  row: number,
  bucketMs: number,
  source = 'the series',
): SeriesFormatError {
  const gap = (series.times[row] as number) - (series.times[row - 1] as number);
  const minutes = bucketMs / 60_000;
  const what = `${source}:${row + 2}: a second row in the same ${minutes}-minute bucket as the row before it`;
  if (gap % 60_000 !== 0 && gap >= bucketMs * 0.8 && oneRowEach(series, bucketMs, 'rounded')) {
    // Nearly a bucket apart, yet in one bucket: timestamps a few seconds off the bucket grid,
    // which rounding to the clock's marks puts one in each (tried, not guessed).
    return new SeriesFormatError(
      `${what} (${gap / 1000} s apart, nearly ${minutes} min): the timestamps are a few seconds off the ${minutes}-minute grid; round each to the nearest ${minutes} minutes of the clock first, one row each`,
    );
  }
  if (gap % 60_000 !== 0) {
    return new SeriesFormatError(
      `${what} (${gap / 1000} s apart); ${NOT_SUMMED}: sum the rows into ${minutes}-minute buckets first, one row each`,
    );
  }
  return new SeriesFormatError(
    `${what} (${gap / 60_000} min apart); the bucket must be the rows' step or divide it: give --bucket-minutes ${gap / 60_000}, or sum the rows into ${minutes}-minute buckets first (${NOT_SUMMED})`,
  );
}

/** Which rows lie inside `windows` (pairs of timestamps, both ends included, as NAB's combined_windows.json). */
export function labelsOf(
  series: CountSeries,
  windows: readonly (readonly [string, string])[],
  source: string,
): number[] {
  const ranges = windows.map(([from, to], index) => {
    const start = parseTimestamp(from);
    const end = parseTimestamp(to);
    if (!Number.isFinite(start) || !Number.isFinite(end) || end < start) {
      throw new SeriesFormatError(`${source}: window ${index + 1} (${from} .. ${to}) is not two timestamps in order`);
    }
    return [start, end] as const;
  });
  return series.times.map((time) => (ranges.some(([start, end]) => time >= start && time <= end) ? 1 : 0));
}

/** NAB's results file: `timestamp,value,anomaly_score,label`, one line per row of the series. */
export function nabResults(series: CountSeries, evaluation: SeriesEvaluation, labels?: readonly number[]): string {
  const alerts = new Set(evaluation.alerts);
  const lines = ['timestamp,value,anomaly_score,label'];
  for (let row = 0; row < series.values.length; row++) {
    lines.push(`${series.texts[row]},${series.valueTexts[row]},${alerts.has(row) ? 1 : 0},${labels?.[row] ?? 0}`);
  }
  return `${lines.join('\n')}\n`;
}
