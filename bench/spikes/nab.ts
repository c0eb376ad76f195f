/**
 * NAB's scoring (Numenta Anomaly Benchmark), written from the method described in
 * ../shared/data/nab-realTweets/README.md and NAB's own scorer's behaviour (nab/sweeper.py at
 * commit ea702d7), so a results file is scored here exactly as NAB would:
 *
 * - a row is a detection when its `anomaly_score` is at or above the threshold;
 * - the first 15% of a file (at most 750 rows) is probationary: neither rewarded nor charged, and
 *   a window that lies wholly inside it does not count;
 * - a window earns tpWeight × σ(y) / σ(-1) for its earliest detection, where y = -(right − i + 1) /
 *   width runs from -1 at the left edge towards 0 at the right, and σ(y) = 2 / (1 + e^(5y)) − 1;
 *   a window without a detection costs −fnWeight;
 * - a detection outside every window costs fpWeight × σ(y) with y = |i − previous right edge| /
 *   (previous width − 1) (σ(y) = −1 from y ≥ 3, and before any window): about −fpWeight, less
 *   just after a window; every such row is charged;
 * - normalized = 100 × (S − S_null) / (S_perfect − S_null) over the files together, where the null
 *   detector gets −fnWeight per window and the perfect one tpWeight per window.
 *
 * The event-level figures follow the same README: a window is hit when any of its rows is a
 * detection; outside the windows each unbroken run of detections is one false alarm; weeks are
 * the scored (non-probationary) rows' span.
 */

/** NAB's application profiles (config/profiles.json). */
export const NAB_PROFILES = {
  standard: { tp: 1, fn: 1, fp: 0.11 },
  reward_low_FP_rate: { tp: 1, fn: 1, fp: 0.22 },
  reward_low_FN_rate: { tp: 1, fn: 2, fp: 0.11 },
} as const;
export type NabProfile = keyof typeof NAB_PROFILES;
export const NAB_PROFILE_NAMES = Object.keys(NAB_PROFILES) as NabProfile[];

/** One labelled file: timestamps (epoch ms) and its windows as [first, last] row indices. */
export interface LabelledFile {
  readonly name: string;
  readonly timestamps: readonly number[];
  readonly windows: readonly (readonly [number, number])[];
}

/** A NAB timestamp (`2015-02-26 21:42:53`, with or without fractional seconds) as epoch ms, UTC. */
export function nabTime(text: string): number {
  const match = /^(\d{4}-\d{2}-\d{2})[ T](\d{2}:\d{2}:\d{2})(\.\d+)?$/.exec(text.trim());
  if (match === null) throw new Error(`not a NAB timestamp (YYYY-MM-DD HH:MM:SS): ${JSON.stringify(text)}`);
  return Date.parse(`${match[1]}T${match[2]}Z`);
}

/**
 * The windows of one file as row indices. Like NAB, a window's edges must be timestamps of the
 * file (they are in combined_windows.json); an edge that is not is an error, not a guess.
 */
export function windowRows(
  timestamps: readonly number[],
  windows: readonly (readonly [string, string])[],
): [number, number][] {
  const index = new Map(timestamps.map((time, row) => [time, row]));
  return windows.map(([from, to]) => {
    const first = index.get(nabTime(from));
    const last = index.get(nabTime(to));
    if (first === undefined || last === undefined)
      throw new Error(`window ${from} .. ${to} does not start and end on rows of the file`);
    return [first, last];
  });
}

/** NAB's probationary period: 15% of the rows, at most 750. */
export const probationRows = (rows: number): number => Math.min(Math.floor(0.15 * rows), 0.15 * 5000);

/** σ of NAB's sweep: 2 / (1 + e^(5y)) − 1, and −1 from y ≥ 3. */
export function scaledSigmoid(y: number): number {
  if (y >= 3) return -1;
  return 2 / (1 + Math.exp(5 * y)) - 1;
}

/** What NAB counts in one file at one threshold. */
export interface FileScore {
  readonly score: number;
  /** Windows that count (not wholly probationary). */
  readonly windows: number;
  readonly windowsDetected: number;
  /** Detected rows outside every window (each charged). */
  readonly falsePositiveRows: number;
}

/** The weighted sweep score of every row (NAB's `S(t)` column) and its window (-1: none, -2: probationary). */
function sweep(file: LabelledFile, profile: NabProfile): { weighted: Float64Array; window: Int32Array } {
  const weights = NAB_PROFILES[profile];
  const rows = file.timestamps.length;
  const probation = probationRows(rows);
  const maxTp = scaledSigmoid(-1);
  const weighted = new Float64Array(rows);
  const window = new Int32Array(rows).fill(-1);
  let previousRight = -1;
  let previousWidth = 0;
  let current = -1;
  for (let i = 0; i < rows; i++) {
    if (current < 0) current = file.windows.findIndex(([first]) => first === i);
    if (current >= 0) {
      const [first, last] = file.windows[current] as readonly [number, number];
      const width = last - first + 1;
      weighted[i] = (scaledSigmoid(-(last - i + 1) / width) * weights.tp) / maxTp;
      window[i] = current;
      if (i === last) {
        previousRight = i;
        previousWidth = width;
        current = -1;
      }
    } else {
      const y = previousRight < 0 ? 3 : Math.abs(previousRight - i) / (previousWidth - 1);
      weighted[i] = scaledSigmoid(y) * weights.fp;
    }
    if (i < probation) window[i] = -2;
  }
  return { weighted, window };
}

/** Scores one file's detections (`scores[i] ≥ threshold`) under a profile, as NAB's sweeper does. */
export function scoreFile(
  file: LabelledFile,
  scores: readonly number[],
  threshold: number,
  profile: NabProfile,
): FileScore {
  if (scores.length !== file.timestamps.length) {
    throw new Error(`${file.name}: ${scores.length} scores for ${file.timestamps.length} rows`);
  }
  const weights = NAB_PROFILES[profile];
  const { weighted, window } = sweep(file, profile);
  const best = new Map<number, number>();
  let falsePositives = 0;
  let fpRows = 0;
  for (let i = 0; i < scores.length; i++) {
    const w = window[i] as number;
    if (w === -2) continue;
    if (w >= 0 && !best.has(w)) best.set(w, -weights.fn);
    if (!((scores[i] as number) >= threshold)) continue;
    if (w >= 0) best.set(w, Math.max(best.get(w) as number, weighted[i] as number));
    else {
      falsePositives += weighted[i] as number;
      fpRows += 1;
    }
  }
  let score = falsePositives;
  let detected = 0;
  for (const value of best.values()) {
    score += value;
    if (value > -weights.fn) detected += 1;
  }
  return { score, windows: best.size, windowsDetected: detected, falsePositiveRows: fpRows };
}

/** NAB's normalized score over several files at one profile: null 0, perfect 100. */
export function normalizedScore(scores: readonly FileScore[], profile: NabProfile): number {
  const weights = NAB_PROFILES[profile];
  const windows = scores.reduce((sum, file) => sum + file.windows, 0);
  const raw = scores.reduce((sum, file) => sum + file.score, 0);
  const nullScore = -weights.fn * windows;
  const perfect = weights.tp * windows;
  return (100 * (raw - nullScore)) / (perfect - nullScore);
}

/** Event-level counts of one file (README "Published detectors"). */
export interface EventCounts {
  readonly windows: number;
  readonly hits: number;
  readonly falseAlarms: number;
  /** Scored (non-probationary) span in weeks. */
  readonly weeks: number;
}

export function eventCounts(file: LabelledFile, scores: readonly number[], threshold: number): EventCounts {
  const rows = file.timestamps.length;
  const probation = probationRows(rows);
  const inWindow = new Int32Array(rows).fill(-1);
  file.windows.forEach(([first, last], w) => {
    for (let i = first; i <= last; i++) inWindow[i] = w;
  });
  const hit = new Set<number>();
  const counted = new Set<number>();
  let falseAlarms = 0;
  let inRun = false;
  for (let i = Math.ceil(probation); i < rows; i++) {
    const w = inWindow[i] as number;
    if (w >= 0) counted.add(w);
    const detected = (scores[i] as number) >= threshold;
    if (w >= 0) {
      if (detected) hit.add(w);
      inRun = false;
    } else if (detected) {
      if (!inRun) falseAlarms += 1;
      inRun = true;
    } else {
      inRun = false;
    }
  }
  const first = file.timestamps[Math.ceil(probation)] ?? 0;
  const last = file.timestamps[rows - 1] ?? first;
  // The span of the scored rows, each row standing for its own interval.
  const step = rows > 1 ? ((file.timestamps[rows - 1] as number) - (file.timestamps[0] as number)) / (rows - 1) : 0;
  return { windows: counted.size, hits: hit.size, falseAlarms, weeks: (last - first + step) / (7 * 24 * 3_600_000) };
}

/** Precision, recall and false alarms per week over several files. */
export function eventSummary(counts: readonly EventCounts[]): {
  hits: number;
  windows: number;
  falseAlarms: number;
  weeks: number;
  precision: number;
  recall: number;
  falseAlarmsPerWeek: number;
} {
  const hits = counts.reduce((sum, c) => sum + c.hits, 0);
  const windows = counts.reduce((sum, c) => sum + c.windows, 0);
  const falseAlarms = counts.reduce((sum, c) => sum + c.falseAlarms, 0);
  const weeks = counts.reduce((sum, c) => sum + c.weeks, 0);
  return {
    hits,
    windows,
    falseAlarms,
    weeks,
    precision: hits + falseAlarms === 0 ? Number.NaN : hits / (hits + falseAlarms),
    recall: windows === 0 ? Number.NaN : hits / windows,
    falseAlarmsPerWeek: weeks === 0 ? Number.NaN : falseAlarms / weeks,
  };
}
