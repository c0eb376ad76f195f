/**
 * Backtest and explain one rule's spike alerts from the counts the runs recorded (up to four weeks
 * of hourly new-story counts in its {@link SpikeRecord}): the series, the expected band, and the
 * episodes each preset would have opened, as rows and as a small text chart (`news-alerts spikes
 * explain`). Every preset replays the same recorded counts through the same detector the run
 * uses, from the first recorded hour, so what it shows is what that preset would have sent.
 *
 * Pure: no I/O, no clock.
 */
import {
  type BucketVerdict,
  emptyDetectorState,
  PRESETS,
  SPIKE_PRESETS,
  SpikeDetector,
  type SpikePreset,
  spikeModel,
} from './detector.ts';
import type { SpikeRecord } from './record.ts';

/** One hour of the backtest. */
export interface BacktestRow {
  /** Start of the bucket, epoch ms. */
  readonly at: number;
  /** New stories (-1: not counted). */
  readonly count: number;
  /** Distinct outlets, where recorded. */
  readonly outlets?: number | undefined;
  /** Expected new stories (NaN while there is no baseline). */
  readonly expected: number;
  /** The count at which this hour alone would open an episode, per preset. */
  readonly band: Readonly<Record<SpikePreset, number>>;
  /** Significance at the rule's preset (−log10 p). */
  readonly score: number;
  /** What each preset did in this hour. */
  readonly events: Readonly<Partial<Record<SpikePreset, NonNullable<BucketVerdict['event']>>>>;
}

/** An episode a preset would have opened. */
export interface BacktestEpisode {
  readonly openedAt: number;
  readonly since: number;
  /** Last hour (inclusive), or undefined while still open. */
  readonly to?: number | undefined;
  readonly observed: number;
  readonly expected: number;
  readonly peak: number;
  readonly levelShift?: boolean | undefined;
}

export interface Backtest {
  readonly ruleId: string;
  readonly preset: SpikePreset;
  readonly bucketMs: number;
  readonly rows: readonly BacktestRow[];
  readonly episodes: Readonly<Record<SpikePreset, readonly BacktestEpisode[]>>;
}

/** Replays the recorded counts at every preset and keeps the last `days` days. */
export function backtestRecord(record: SpikeRecord, options: { readonly days: number }): Backtest {
  const model = spikeModel(record.bucketMs);
  const { start, counts } = record.detector;
  const keepFrom = start + counts.length - Math.round(options.days * model.bucketsPerDay);
  const runs = new Map<SpikePreset, BucketVerdict[]>();
  const detectors = new Map<SpikePreset, SpikeDetector>();
  for (const preset of SPIKE_PRESETS) {
    const state = { ...emptyDetectorState(start), countingSince: Math.max(start, record.detector.countingSince) };
    const detector = new SpikeDetector(model, PRESETS[preset], state);
    detectors.set(preset, detector);
    runs.set(
      preset,
      counts.map((count) => detector.step(count)),
    );
  }
  const outletsFrom = start + counts.length - record.outletCounts.length;
  const rows: BacktestRow[] = [];
  for (let i = 0; i < counts.length; i++) {
    const bucket = start + i;
    if (bucket < keepFrom) continue;
    const own = (runs.get(record.preset) as BucketVerdict[])[i] as BucketVerdict;
    const band = {} as Record<SpikePreset, number>;
    const events: Partial<Record<SpikePreset, NonNullable<BucketVerdict['event']>>> = {};
    for (const preset of SPIKE_PRESETS) {
      const verdict = (runs.get(preset) as BucketVerdict[])[i] as BucketVerdict;
      band[preset] = verdict.upper;
      if (verdict.event !== undefined) events[preset] = verdict.event;
    }
    rows.push({
      at: bucket * record.bucketMs,
      count: own.count,
      ...(bucket >= outletsFrom ? { outlets: record.outletCounts[bucket - outletsFrom] } : {}),
      expected: own.expected,
      band,
      score: own.score,
      events,
    });
  }
  const episodes = {} as Record<SpikePreset, BacktestEpisode[]>;
  for (const preset of SPIKE_PRESETS) {
    // Each verdict about an episode replaces the one before: the last says how it ended.
    const byOpening = new Map<number, BacktestEpisode>();
    for (const verdict of runs.get(preset) as BucketVerdict[]) {
      const episode = verdict.episode;
      if (episode === undefined) continue;
      byOpening.set(episode.openedAt, {
        openedAt: episode.openedAt * record.bucketMs,
        since: episode.since * record.bucketMs,
        observed: episode.observed,
        expected: Math.round(episode.expected * 10) / 10,
        peak: episode.peak,
        ...(verdict.event === 'close' ? { to: verdict.bucket * record.bucketMs } : {}),
        ...(verdict.levelShift ? { levelShift: true } : {}),
      });
    }
    episodes[preset] = [...byOpening.values()].filter(
      (episode) => (episode.to ?? Number.POSITIVE_INFINITY) >= keepFrom * record.bucketMs,
    );
  }
  return { ruleId: record.ruleId, preset: record.preset, bucketMs: record.bucketMs, rows, episodes };
}

/** A count's height: `_` for none (a blank is an hour not shown), then eighths of the largest. */
const BLOCKS = '_▁▂▃▄▅▆▇█';

/**
 * A small text chart: one line per day, one block per hour (its height the count against the
 * largest count shown, `_` for 0, `·` for an hour not counted, blank for none there: outside the
 * days shown, or skipped by the clock), `!` under an hour where the rule's preset opened an episode, then the day's
 * largest count and the lowest band it would have needed. `dayLabel` names a day from its start;
 * `minuteOfDay` places each bucket at its local time of day, so on the day clocks go forward an
 * hour stays blank, and on the day they go back the repeated hour shows the larger of its two
 * counts (and `!` if either opened an episode): every count is in the day's largest, none is lost.
 */
export function textChart(
  backtest: Backtest,
  dayLabel: (epochMs: number) => string,
  minuteOfDay: (epochMs: number) => number,
): string[] {
  const perDay = Math.round(86_400_000 / backtest.bucketMs);
  const slotOf = (at: number) =>
    Math.min(perDay - 1, Math.max(0, Math.floor((minuteOfDay(at) * 60_000) / backtest.bucketMs)));
  const max = Math.max(1, ...backtest.rows.map((row) => row.count));
  const lines: string[] = [];
  let day: BacktestRow[] = [];
  const flush = () => {
    if (day.length === 0) return;
    const first = day[0] as BacktestRow;
    // Per slot: the largest count of its buckets (-1: only unknown ones), undefined for none.
    const counts: (number | undefined)[] = Array.from({ length: perDay }, () => undefined);
    const marks = Array.from({ length: perDay }, () => ' ');
    let dayMax = 0;
    let band = Number.POSITIVE_INFINITY;
    for (const row of day) {
      const at = slotOf(row.at);
      counts[at] = Math.max(counts[at] ?? -1, row.count);
      if (row.events[backtest.preset] === 'open') marks[at] = '!';
      dayMax = Math.max(dayMax, row.count);
      const own = row.band[backtest.preset];
      if (Number.isFinite(own)) band = Math.min(band, own);
    }
    const cells = counts.map((count) =>
      count === undefined ? ' ' : count < 0 ? '·' : (BLOCKS[Math.min(8, Math.ceil((count / max) * 8))] as string),
    );
    const bandText = Number.isFinite(band) ? `, band from ${band}` : '';
    lines.push(`${dayLabel(first.at).padEnd(10)} ${cells.join('')}  max ${dayMax}${bandText}`);
    if (marks.some((mark) => mark !== ' ')) lines.push(`${''.padEnd(10)} ${marks.join('').trimEnd()}`);
    day = [];
  };
  let currentDay: string | undefined;
  for (const row of backtest.rows) {
    const label = dayLabel(row.at);
    if (label !== currentDay) {
      flush();
      currentDay = label;
    }
    day.push(row);
  }
  flush();
  return lines;
}
