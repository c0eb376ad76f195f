/**
 * The spike detector: for one count series (new stories of a rule per hour, mentions per five
 * minutes), it says at each completed bucket what was expected, how surprising the count is, and
 * whether a spike episode opens, goes on, or ends. docs/spikes.md explains the method and why.
 *
 * Guarantees this module owns:
 * - **One alert per episode.** An episode opens on the first significant bucket (the only step
 *   that alerts); later buckets update it. Hysteresis (it stays open while the counts stay above
 *   the lower hold level) and a cool-down after it closes keep one burst from alerting twice.
 * - **A baseline robust to what it detects.** The expected count is a seasonal median (same hour
 *   of the week over the last four weeks once two are counted, else same time of day over the last
 *   seven days counted), scaled by the recent level; buckets of past episodes are left out of both,
 *   so a burst never raises the bar for the next one. An episode still open after
 *   {@link SpikeModel.maxEpisodeBuckets} is a new level, not a spike: it closes as a level shift
 *   and its buckets count as normal from then on, so a shift alerts once, not every day.
 * - **No alert on too little.** A documented warm-up ({@link SpikeModel.warmUpBuckets}) passes
 *   before the first alert can fire; a spike needs at least the preset's number of items and
 *   ratio over the expected count, whatever the p-value says (low-volume series).
 * - **The same answer everywhere.** The run, the CLI's backtest and `spikes evaluate`, and the
 *   bench all step this class; its state ({@link DetectorState}) is plain data the run stores
 *   between runs, and a detector restored from it continues exactly as the original would.
 *
 * Pure: no I/O, no clock. Buckets are numbered (epoch time / bucket length); a series only needs
 * consecutive numbers.
 */
import { log10UpperTail, POISSON_SIZE } from './tail.ts';

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;
const WEEK_MS = 7 * DAY_MS;

/** A sensitivity preset as rules name it. */
export type SpikePreset = 'fewer' | 'balanced' | 'more';
export const SPIKE_PRESETS: readonly SpikePreset[] = ['fewer', 'balanced', 'more'];

/** What a preset sets (docs/spikes.md "Presets"). */
export interface PresetParameters {
  /** −log10 of the tail probability (corrected for the scales tested) at which an episode opens. */
  readonly openAt: number;
  /** Fewest items in the tested span for an episode to open (low-volume floor). */
  readonly minCount: number;
  /** Smallest observed / expected ratio in the tested span for an episode to open. */
  readonly minRatio: number;
  /**
   * Only the largest jump in this many days opens an episode (past episodes included). Absent: any
   * significant jump opens one.
   */
  readonly recordDays?: number | undefined;
  /**
   * How the jumps are compared for `recordDays`:
   * - `significance` (the default): the bucket's significance (its strongest span's −log10 p) must
   *   exceed every bucket's of the record span;
   * - `level`: span by span, the span's count over what the mean count per bucket of the last
   *   three days (the warm-up's length) gives for a span that long; at least one span's level must
   *   exceed every level of that span in the record span. Scale-free and blind to the time of day:
   *   the jump a person sees on a plot of the series, not the surprise at that hour. No preset a
   *   rule can name uses it (its state is larger: one level per span and bucket); the NAB bench's
   *   leave-one-series-out grid chooses between the two (docs/spikes.md "Evaluating on any series").
   */
  readonly recordOf?: 'significance' | 'level' | undefined;
}

/**
 * The presets. `openAt` is a tail probability after the correction for the scales tested:
 * balanced opens at p < 10⁻⁶ per bucket; with 168 hourly buckets a week that is about one chance
 * alert in 6,000 rule-weeks if the counts were exactly negative binomial, and the floors, the
 * hysteresis and the cool-down keep the real rate near what bench/RESULTS.md measures.
 */
export const PRESETS: Readonly<Record<SpikePreset, PresetParameters>> = {
  fewer: { openAt: 5.5, minCount: 5, minRatio: 3, recordDays: 14 },
  balanced: { openAt: 4.5, minCount: 5, minRatio: 3 },
  more: { openAt: 3.5, minCount: 4, minRatio: 2.5 },
};

/** The fixed shape of the method for one bucket length (docs/spikes.md). */
export interface SpikeModel {
  readonly bucketMs: number;
  readonly bucketsPerDay: number;
  readonly bucketsPerWeek: number;
  /** Buckets either side of a seasonal lag whose counts join the median (one hour in all). */
  readonly neighbourhood: number;
  /** Spans tested, in buckets: one bucket, an hour and three hours (deduplicated). */
  readonly scales: readonly number[];
  /** Counted buckets before the first alert can fire (three days). */
  readonly warmUpBuckets: number;
  /** Buckets below the hold level that close an episode (two hours). */
  readonly quietBuckets: number;
  /** Buckets after an episode closes during which no new one opens (six hours). */
  readonly coolDownBuckets: number;
  /** An episode open this long is a new level (24 hours). */
  readonly maxEpisodeBuckets: number;
  /** −log10 p (scale-corrected) under which a bucket no longer holds an episode open. */
  readonly holdAt: number;
  /** History kept: four weeks of counts, plus the neighbourhood. */
  readonly historyBuckets: number;
  /** Pseudo-count of the level factor: how much recent evidence it takes to move the level. */
  readonly levelPrior: number;
}

/** The model for buckets of `bucketMs` (a divisor of an hour or a whole number of hours). */
export function spikeModel(bucketMs: number): SpikeModel {
  if (!Number.isInteger(bucketMs) || bucketMs < 60_000 || bucketMs > DAY_MS) {
    throw new RangeError(`bucketMs must be a whole number of milliseconds from one minute to one day; got ${bucketMs}`);
  }
  const per = (ms: number) => Math.max(1, Math.round(ms / bucketMs));
  const bucketsPerDay = per(DAY_MS);
  const bucketsPerWeek = per(WEEK_MS);
  // One hour either side for hourly buckets, half an hour for finer ones: enough values per slot
  // for sparse counts, without blurring the rhythm.
  const neighbourhood = Math.max(1, Math.floor(per(HOUR_MS) / 2));
  return {
    bucketMs,
    bucketsPerDay,
    bucketsPerWeek,
    neighbourhood,
    scales: [...new Set([1, per(HOUR_MS), per(3 * HOUR_MS)])],
    warmUpBuckets: per(3 * DAY_MS),
    quietBuckets: per(2 * HOUR_MS),
    coolDownBuckets: per(6 * HOUR_MS),
    maxEpisodeBuckets: per(DAY_MS),
    holdAt: 2,
    historyBuckets: 4 * bucketsPerWeek + neighbourhood + 1,
    levelPrior: 5,
  };
}

/** A past episode, kept while its buckets are inside the history (they are left out of the baseline). */
export interface PastEpisode {
  readonly id: string;
  readonly from: number;
  /** Last bucket of the episode (inclusive). */
  readonly to: number;
  /** Closed because it lasted: its buckets are a new level and stay in the baseline. */
  readonly levelShift: boolean;
}

/** The episode in progress. */
export interface OpenEpisode {
  /** Stable id: the bucket it opened on, in base 36 (with the series' own key it is unique). */
  readonly id: string;
  /** The bucket whose count opened it. */
  readonly openedAt: number;
  /** The first bucket of the burst: the start of the span that fired, from its first count above expectation. */
  readonly since: number;
  /** Items and expected items from `since` to the last bucket seen. */
  readonly observed: number;
  readonly expected: number;
  /** The highest single-bucket count, and where. */
  readonly peak: number;
  readonly peakAt: number;
  /** The strongest significance seen (−log10 p, scale-corrected). */
  readonly score: number;
  /** Consecutive buckets below the hold level. */
  readonly quiet: number;
  /** Last bucket seen. */
  readonly lastAt: number;
}

/**
 * Everything a detector remembers, as plain data (the run stores it per rule). Arrays are oldest
 * first; `counts[i]` is bucket `start + i`, -1 where nothing was counted.
 */
export interface DetectorState {
  readonly start: number;
  readonly counts: readonly number[];
  /** The expected count of each bucket as computed when it was evaluated (-1: none); the last week. */
  readonly expected: readonly number[];
  /** The seasonal median of each bucket (-1: none); the last day. */
  readonly seasonal: readonly number[];
  /** Each bucket's significance (the strongest span's −log10 p), for presets with `recordDays`; the last `recordDays` days. */
  readonly scores?: readonly number[] | undefined;
  /**
   * For presets that compare levels (`recordOf: 'level'`): each bucket's level per span, one array
   * per span of {@link SpikeModel.scales} in that order (-1: the span was not all counted); the last
   * `recordDays` days.
   */
  readonly levels?: readonly (readonly number[])[] | undefined;
  /** 1/size of the negative binomial (0: Poisson), re-estimated once a day. */
  readonly dispersion: number;
  /** The bucket the dispersion was last estimated at, or -1. */
  readonly dispersionAt: number;
  /** The first bucket counted: alerts wait for the warm-up after it. */
  readonly countingSince: number;
  readonly episodes: readonly PastEpisode[];
  readonly open?: OpenEpisode | undefined;
  /** The last bucket an episode closed at (cool-down), or -1. */
  readonly closedAt: number;
}

/** What one bucket looked like to the detector. */
export interface BucketVerdict {
  readonly bucket: number;
  readonly count: number;
  /** Expected count (NaN during the first day: no baseline yet). */
  readonly expected: number;
  /** The count at which this bucket alone would open an episode under the preset (NaN without a baseline). */
  readonly upper: number;
  /** Strongest significance over the spans tested (−log10 p, scale-corrected); 0 without a baseline. */
  readonly score: number;
  /** The span (buckets) that gave `score`. */
  readonly scale: number;
  /** `open`: an episode opened (the alert); `update`: it goes on; `close`: it ended with this bucket. */
  readonly event?: 'open' | 'update' | 'close' | undefined;
  /** The episode the event is about. */
  readonly episode?: OpenEpisode | undefined;
  /** Set on `close`: it closed because it lasted (a new level). */
  readonly levelShift?: boolean | undefined;
  /** Why no episode opened although the score reached the preset: warm-up, cool-down, floors. */
  readonly held?: 'warm-up' | 'cool-down' | 'floor' | 'record' | undefined;
}

/** Default dispersion before the first estimate, and its prior: a coefficient of variation of 40% at high counts. */
const DEFAULT_DISPERSION = 0.16;
/** How much the prior weighs in the dispersion estimate, in units of Σμ² (about 80 buckets of one expected item). */
const DISPERSION_PRIOR_WEIGHT = 80;
/** The dispersion is never taken below a 10% coefficient of variation (real counts vary that much). */
const MIN_DISPERSION = 0.01;
const MAX_DISPERSION = 4;
/** Largest level factor either way. */
const MAX_LEVEL = 4;
/** Most days of scores kept for presets that ask for the largest jump in a span. */
const RECORD_DAYS_KEPT = 28;
/** Most past episodes kept. */
const MAX_EPISODES = 64;

/** A detector with nothing counted yet, starting at `bucket`. */
export function emptyDetectorState(bucket: number): DetectorState {
  return {
    start: bucket,
    counts: [],
    expected: [],
    seasonal: [],
    dispersion: DEFAULT_DISPERSION,
    dispersionAt: -1,
    countingSince: bucket,
    episodes: [],
    closedAt: -1,
  };
}

/**
 * `state`, with the history a record preset compares a jump with (the significance scores, or the
 * levels, of the record span) when it holds none: a rule switched to `fewer` from a preset that
 * keeps none. Without it every jump of the next two weeks would count as the largest. It is what
 * this preset would have kept over the same counts: they are stepped through a detector of this
 * preset from the first one held, as `spikes explain` replays them. Everything else (episodes, the
 * open one and its alert, the dispersion) stays as the runs left it.
 */
function withRecordHistory(model: SpikeModel, preset: PresetParameters, state: DetectorState): DetectorState {
  if (preset.recordDays === undefined || state.counts.length === 0) return state;
  const byLevel = preset.recordOf === 'level';
  if (byLevel ? state.levels !== undefined : state.scores !== undefined) return state;
  const replay = new SpikeDetector(model, preset, emptyDetectorState(state.start));
  for (const count of state.counts) replay.step(count);
  const replayed = replay.state();
  return byLevel ? { ...state, levels: replayed.levels ?? [] } : { ...state, scores: replayed.scores ?? [] };
}

/**
 * The mean of `values` after capping each at what a burst would exceed (three times the median,
 * and at least the median plus three Poisson standard deviations plus two): a few unmasked
 * bursts cannot pull it up, and sparse counts (mostly 0 and 1, where a median says 0) keep their
 * rate. NaN when empty. Sorts `values` in place.
 */
function cappedMean(values: number[]): number {
  if (values.length === 0) return Number.NaN;
  const median = medianOf(values);
  const cap = Math.max(3 * median, median + 3 * Math.sqrt(median) + 2);
  let sum = 0;
  for (const value of values) sum += Math.min(value, cap);
  return sum / values.length;
}

/**
 * The lower median of `values` (sorted in place): the middle value, or the lower of the two middle
 * ones, so that more than half of them are at least it. 0 when empty (it only ever raises an
 * estimate).
 */
function lowerMedian(values: number[]): number {
  if (values.length === 0) return 0;
  values.sort((a, b) => a - b);
  return values[(values.length - 1) >> 1] as number;
}

/** The time of day of a bucket: its place in its day (0 … bucketsPerDay − 1), for any bucket number. */
function timeOfDay(bucket: number, bucketsPerDay: number): number {
  return ((bucket % bucketsPerDay) + bucketsPerDay) % bucketsPerDay;
}

/**
 * The past episodes that recur: each that began a day, or a week, after another (give or take the
 * neighbourhood), and that other. A burst that comes back at the same time the next day, or the
 * same time the next week, is a pattern of the series, not news: its buckets stay in the baseline
 * (they are not masked), so the baseline learns it instead of alerting on it every day. A level
 * shift takes no part: it is a new level (in the baseline already), not a time of day, and one
 * lasts a day, so it would take every time of day out of the level. Two unrelated bursts exactly
 * a day or a week apart are taken for a pattern too: the baseline then counts them, as it counts
 * a level shift.
 */
function recurringEpisodes(episodes: readonly PastEpisode[], model: SpikeModel): Set<PastEpisode> {
  const recurring = new Set<PastEpisode>();
  const { bucketsPerDay, bucketsPerWeek, neighbourhood } = model;
  const bursts = episodes.filter((episode) => !episode.levelShift);
  for (const [i, earlier] of bursts.entries()) {
    for (const later of bursts.slice(i + 1)) {
      const apart = Math.abs(later.from - earlier.from);
      if (Math.abs(apart - bucketsPerDay) <= neighbourhood || Math.abs(apart - bucketsPerWeek) <= neighbourhood) {
        recurring.add(earlier);
        recurring.add(later);
      }
    }
  }
  return recurring;
}

/** `value` to three significant digits (0.0123, 1.23, 123, 1230). */
function roundTo3(value: number): number {
  if (value === 0 || !Number.isFinite(value)) return value;
  const scale = 10 ** (2 - Math.floor(Math.log10(Math.abs(value))));
  return Math.round(value * scale) / scale;
}

/** Median of `values` (sorted in place); NaN when empty. */
function medianOf(values: number[]): number {
  if (values.length === 0) return Number.NaN;
  values.sort((a, b) => a - b);
  const mid = values.length >> 1;
  return values.length % 2 === 1
    ? (values[mid] as number)
    : ((values[mid - 1] as number) + (values[mid] as number)) / 2;
}

/** A growable ring of numbers indexed by bucket number. */
class BucketSeries {
  #start: number;
  #values: number[];
  readonly #keep: number;

  constructor(start: number, values: readonly number[], keep: number) {
    this.#start = start;
    this.#values = [...values];
    this.#keep = keep;
  }

  /** The first bucket held. */
  get start(): number {
    return this.#start;
  }

  /** One past the last bucket held. */
  get end(): number {
    return this.#start + this.#values.length;
  }

  /** The value at `bucket`, or -1 when not held. */
  at(bucket: number): number {
    const index = bucket - this.#start;
    return index >= 0 && index < this.#values.length ? (this.#values[index] as number) : -1;
  }

  /** Appends the value of bucket `end`, dropping what is older than `keep` buckets. */
  push(value: number): void {
    this.#values.push(value);
    const excess = this.#values.length - this.#keep;
    if (excess > 64 || (excess > 0 && this.#keep < 64)) {
      this.#values.splice(0, excess);
      this.#start += excess;
    }
  }

  /** The last `count` buckets as a plain array (for the stored state). */
  tail(count: number): { start: number; values: number[] } {
    const from = Math.max(0, this.#values.length - count);
    return { start: this.#start + from, values: this.#values.slice(from) };
  }
}

/**
 * Steps a count series bucket by bucket under one preset. Restore it from a stored
 * {@link DetectorState} to continue a series; {@link state} gives the state to store.
 */
export class SpikeDetector {
  readonly model: SpikeModel;
  readonly preset: PresetParameters;
  readonly #counts: BucketSeries;
  readonly #expected: BucketSeries;
  readonly #seasonal: BucketSeries;
  readonly #scores: BucketSeries;
  /** Per span (in the order of the model's scales), each bucket's level, for `recordOf: 'level'`. */
  readonly #levels: BucketSeries[];
  #dispersion: number;
  #dispersionAt: number;
  readonly #countingSince: number;
  #episodes: PastEpisode[];
  #open: OpenEpisode | undefined;
  #closedAt: number;
  /** Masked buckets (past episodes that were not level shifts nor recurring, and the open one), rebuilt when episodes change. */
  #mask = new Set<number>();
  /** Times of day (bucket mod buckets per day) a recurring past episode covered, with the neighbourhood around them. */
  #recurringTimes = new Set<number>();
  /**
   * Buckets of recurring past episodes: in the seasonal baseline (they are the pattern it learns),
   * but not in the level or the dispersion, which would otherwise rise at every hour of the day
   * after them.
   */
  #recurringBuckets = new Set<number>();
  /** Whether {@link #usableForLevel} leaves {@link #recurringTimes} out (at most three quarters of the day). */
  #levelLeavesOutRecurringTimes = false;

  constructor(model: SpikeModel, preset: PresetParameters, stored: DetectorState) {
    this.model = model;
    this.preset = preset;
    const state = withRecordHistory(model, preset, stored);
    const end = state.start + state.counts.length;
    this.#counts = new BucketSeries(state.start, state.counts, model.historyBuckets);
    this.#expected = new BucketSeries(end - state.expected.length, state.expected, 7 * model.bucketsPerDay);
    this.#seasonal = new BucketSeries(end - state.seasonal.length, state.seasonal, model.bucketsPerDay);
    const scores = state.scores ?? [];
    this.#scores = new BucketSeries(end - scores.length, scores, RECORD_DAYS_KEPT * model.bucketsPerDay);
    this.#levels = model.scales.map((_, i) => {
      const levels = state.levels?.[i] ?? [];
      return new BucketSeries(end - levels.length, levels, RECORD_DAYS_KEPT * model.bucketsPerDay);
    });
    this.#dispersion = state.dispersion;
    this.#dispersionAt = state.dispersionAt;
    this.#countingSince = state.countingSince;
    this.#episodes = state.episodes.filter((episode) => episode.to >= this.#keptFrom());
    this.#open = state.open;
    this.#closedAt = state.closedAt;
    this.#rebuildMask();
  }

  /** The next bucket to step. */
  get next(): number {
    return this.#counts.end;
  }

  /**
   * The first bucket from {@link next} on that the warm-up would not hold an alert in, if every
   * bucket from here is counted: three days since counting began, the dispersion estimated (at the
   * end of a day), and a baseline that rests on three counted days (after a gap, the days counted
   * since, while days counted before it leave the four weeks kept). What `news-alerts spikes
   * explain` says about the warm-up.
   *
   * Found by stepping a copy of this detector on zero counts (a zero never opens an episode, and
   * only which buckets are counted decides the warm-up), so it agrees with {@link step} by
   * construction: working the baseline's days out ahead of time missed days sliding out of the
   * history. After a warm-up's length plus the history kept, every baseline rests on counted days.
   */
  alertsPossibleFrom(): number {
    const probe = new SpikeDetector(this.model, this.preset, this.state());
    const last = probe.next + this.model.historyBuckets + this.model.warmUpBuckets + this.model.bucketsPerDay;
    while (probe.next < last) {
      const bucket = probe.next;
      const { mean, days } = probe.#seasonalAt(bucket);
      if (!Number.isNaN(mean) && !probe.#warmingUp(bucket, days)) return bucket;
      probe.step(0);
    }
    return last;
  }

  /** The episode in progress, if any. */
  get open(): OpenEpisode | undefined {
    return this.#open;
  }

  /** The plain state to store; a detector built from it continues exactly like this one. */
  state(): DetectorState {
    const counts = this.#counts.tail(this.model.historyBuckets);
    const oldest = counts.start;
    return {
      start: counts.start,
      counts: counts.values,
      expected: this.#expected.tail(7 * this.model.bucketsPerDay).values,
      seasonal: this.#seasonal.tail(this.model.bucketsPerDay).values,
      ...(this.preset.recordDays === undefined
        ? {}
        : this.#comparesLevels()
          ? { levels: this.#levels.map((levels) => levels.tail(this.#recordBuckets()).values) }
          : { scores: this.#scores.tail(this.#recordBuckets()).values }),
      dispersion: this.#dispersion,
      dispersionAt: this.#dispersionAt,
      countingSince: this.#countingSince,
      episodes: this.#episodes.filter((episode) => episode.to >= oldest),
      ...(this.#open === undefined ? {} : { open: this.#open }),
      closedAt: this.#closedAt,
    };
  }

  /**
   * Steps the series by one bucket (number {@link next}) with `count` items (-1: not counted, e.g.
   * a gap in the data: it is left out of every estimate and cannot fire).
   */
  step(count: number): BucketVerdict {
    const bucket = this.next;
    const { mean: seasonal, days } = this.#seasonalAt(bucket);
    const expected = Number.isNaN(seasonal) ? Number.NaN : seasonal * this.#levelAt(bucket);
    // Kept (and stored) to three significant digits: the state stays small, and a detector
    // restored from it computes exactly what this one does.
    const rounded = Number.isNaN(expected) ? Number.NaN : roundTo3(expected);
    this.#counts.push(count < 0 ? -1 : count);
    // An episode that ended before the history kept leaves it, as it leaves the stored state.
    const keptFrom = this.#keptFrom();
    if (this.#episodes.length > 0 && this.#episodes.some((episode) => episode.to < keptFrom)) {
      this.#episodes = this.#episodes.filter((episode) => episode.to >= keptFrom);
      this.#rebuildMask();
    }
    this.#seasonal.push(Number.isNaN(seasonal) ? -1 : roundTo3(seasonal));
    this.#expected.push(Number.isNaN(rounded) ? -1 : rounded);
    // Levels are pushed before judging: a record is judged against the buckets before this one.
    const levels = this.#comparesLevels() ? this.#levelsAt(bucket) : undefined;
    const verdict = this.#judge(bucket, count, rounded, levels, days);
    if (levels === undefined) this.#scores.push(Math.round(verdict.score * 100) / 100);
    else for (const [i, level] of levels.entries()) this.#levels[i]?.push(level);
    if ((bucket + 1) % this.model.bucketsPerDay === 0) this.#estimateDispersion(bucket);
    return verdict;
  }

  /** The count that would make one bucket open an episode at `expected` (for bands and charts). */
  upperBand(expected: number): number {
    if (!(expected >= 0) || !Number.isFinite(expected)) return Number.NaN;
    const size = this.#size();
    const limit = -(this.preset.openAt + Math.log10(this.model.scales.length));
    let low = 0;
    let high = Math.max(4, Math.ceil(expected * 4 + 10));
    while (log10UpperTail(high, Math.max(expected, FLOOR_MEAN), size) > limit && high < Number.MAX_SAFE_INTEGER)
      high *= 2;
    while (high - low > 1) {
      // Not `>> 1`: that works in 32 bits, and a count past 2^31 (an expected count of a few
      // hundred million, which evaluate's CSV input allows) would wrap and never end the search.
      const mid = Math.floor((low + high) / 2);
      if (log10UpperTail(mid, Math.max(expected, FLOOR_MEAN), size) > limit) low = mid;
      else high = mid;
    }
    return Math.max(high, this.preset.minCount, Math.ceil(expected * this.preset.minRatio));
  }

  /**
   * Whether the warm-up holds an alert at `bucket`: three days of counts, both since counting began
   * and in the baseline (after a gap that leaves fewer in the history, the baseline starts again
   * from the first days counted), and the dispersion estimated.
   */
  #warmingUp(bucket: number, baselineDays: number): boolean {
    const { warmUpBuckets, bucketsPerDay } = this.model;
    return (
      bucket - this.#countingSince < warmUpBuckets ||
      this.#dispersionAt < 0 ||
      baselineDays < Math.floor(warmUpBuckets / bucketsPerDay)
    );
  }

  #comparesLevels(): boolean {
    return this.preset.recordDays !== undefined && this.preset.recordOf === 'level';
  }

  #recordBuckets(): number {
    return (this.preset.recordDays ?? 0) * this.model.bucketsPerDay;
  }

  /**
   * Each span's level at `bucket` (already counted): the span's count over the mean count per
   * bucket of the last {@link SpikeModel.warmUpBuckets} buckets (this one included) times the
   * span's length, to three significant digits; -1 for a span not all counted.
   */
  #levelsAt(bucket: number): number[] {
    let sum = 0;
    let counted = 0;
    for (let b = bucket - this.model.warmUpBuckets + 1; b <= bucket; b++) {
      const value = this.#counts.at(b);
      if (value < 0) continue;
      sum += value;
      counted += 1;
    }
    const mean = Math.max(FLOOR_MEAN, counted === 0 ? 0 : sum / counted);
    return this.model.scales.map((scale) => {
      let observed = 0;
      for (let b = bucket - scale + 1; b <= bucket; b++) {
        const value = this.#counts.at(b);
        if (value < 0) return -1;
        observed += value;
      }
      return roundTo3(observed / (mean * scale));
    });
  }

  /** Whether this bucket's jump is the largest of the record span (preset with `recordDays`). */
  #isRecord(bucket: number, score: number, levels: readonly number[] | undefined): boolean {
    const from = bucket - this.#recordBuckets();
    if (levels === undefined) {
      for (let b = from; b < bucket; b++) if (this.#scores.at(b) >= score) return false;
      return true;
    }
    return levels.some((level, i) => {
      if (level < 0) return false;
      const series = this.#levels[i] as BucketSeries;
      for (let b = from; b < bucket; b++) if (series.at(b) >= level) return false;
      return true;
    });
  }

  #size(): number {
    return this.#dispersion <= 0 ? POISSON_SIZE : 1 / this.#dispersion;
  }

  #rebuildMask(): void {
    this.#mask = new Set();
    // Only buckets the counts hold are ever looked up (any other reads as not counted), and no
    // episode the detector kept reaches past the bucket being judged: a range is cut to those, so
    // a record edited by hand to an episode of two billion buckets costs no more than a real one.
    const first = this.#counts.start;
    const last = this.#counts.end;
    const mask = (from: number, to: number, into: Set<number>) => {
      for (let bucket = Math.max(from, first); bucket <= Math.min(to, last); bucket++) into.add(bucket);
    };
    const recurring = recurringEpisodes(this.#episodes, this.model);
    this.#recurringBuckets = new Set();
    for (const episode of this.#episodes) {
      if (episode.levelShift) continue;
      mask(episode.from, episode.to, recurring.has(episode) ? this.#recurringBuckets : this.#mask);
    }
    if (this.#open !== undefined) mask(this.#open.since, this.#open.lastAt, this.#mask);
    this.#recurringTimes = new Set();
    const { bucketsPerDay, neighbourhood } = this.model;
    for (const episode of recurring) {
      const from = episode.from - neighbourhood;
      const to = Math.min(episode.to + neighbourhood, from + bucketsPerDay - 1);
      for (let bucket = from; bucket <= to; bucket++) this.#recurringTimes.add(timeOfDay(bucket, bucketsPerDay));
    }
    // The level and the dispersion leave these times of day out only while a quarter of the day
    // or more is left to rest on (long buckets: a day of one bucket has no other time of day).
    this.#levelLeavesOutRecurringTimes =
      this.#recurringTimes.size > 0 && this.#recurringTimes.size * 4 <= bucketsPerDay * 3;
  }

  /** A count usable for the seasonal baseline: counted and not inside a masked episode; else -1. */
  #usable(bucket: number): number {
    if (this.#mask.has(bucket)) return -1;
    return this.#counts.at(bucket);
  }

  /**
   * A count usable for the level and the dispersion: not a recurring episode's, nor any at a time
   * of day where one recurred. There the seasonal mean follows the pattern only as the days turn
   * over (a story that came back daily, then ended, leaves it high for a week), and a level that
   * counted those hours would move the expectation at every other hour of the day.
   */
  #usableForLevel(bucket: number): number {
    if (this.#recurringBuckets.has(bucket)) return -1;
    if (this.#levelLeavesOutRecurringTimes && this.#recurringTimes.has(timeOfDay(bucket, this.model.bucketsPerDay)))
      return -1;
    return this.#usable(bucket);
  }

  /**
   * The first bucket the stored state keeps ({@link state}): episodes that ended before it are
   * dropped, here as in a restored detector, so the two pair the same episodes as recurring.
   */
  #keptFrom(): number {
    return Math.max(this.#counts.start, this.#counts.end - this.model.historyBuckets);
  }

  /**
   * The seasonal median: the same hour of the week over the last four weeks once at least two of
   * them are counted at this hour, else the same time of day on the last seven days counted at it
   * (NaN: nothing yet), and how many days the latter rests on (7 per week for the former).
   *
   * The neighbourhood (the buckets either side) smooths it, and the cap keeps unmasked bursts from
   * pulling it up; both would also flatten an hour that is busier than its neighbours every time
   * (a market close, a daily briefing), which then looked like a spike every day. So the estimate
   * is at least what this very bucket usually held: the lower median of its own values (at the
   * lags used; two weeks out of two, three of four, four days of seven). At a time of day where an
   * episode recurred (a day or a week after another, {@link recurringEpisodes}), the same holds
   * for the last seven days counted, so a daily pattern that began lately is learned in days, not
   * weeks.
   * Weeks and days are counted ones, not elapsed ones: after a gap in the data (buckets stepped as
   * unknown) the lags that fall in it would leave the baseline to one week's few values, or to none
   * for a week after a gap of four weeks, so the baseline skips them and reaches back in the history
   * for counted days instead.
   */
  #seasonalAt(bucket: number): { mean: number; days: number } {
    const { bucketsPerWeek, bucketsPerDay, neighbourhood } = this.model;
    const elapsedWeeks = Math.floor((bucket - this.#countingSince) / bucketsPerWeek);
    // Usable: counted, and not inside a past episode (masked), which gives the baseline nothing.
    const counted = (centre: number) => {
      for (let j = -neighbourhood; j <= neighbourhood; j++) if (this.#usable(centre + j) >= 0) return true;
      return false;
    };
    const values: number[] = [];
    const own: number[] = [];
    const collect = (centre: number, into: number[]) => {
      for (let j = -neighbourhood; j <= neighbourhood; j++) {
        const value = this.#usable(centre + j);
        if (value >= 0) into.push(value);
      }
      const value = this.#usable(centre);
      if (value >= 0) own.push(value);
    };
    // Without a gap these are the last seven days; after one, as far back as the four weeks of
    // history the stored state keeps, so a restored detector reaches exactly as far.
    const lastDays = (into: number[]) => {
      let days = 0;
      for (let k = 1; days < 7 && k * bucketsPerDay <= 4 * bucketsPerWeek; k++) {
        if (!counted(bucket - k * bucketsPerDay)) continue;
        collect(bucket - k * bucketsPerDay, into);
        days += 1;
      }
      return days;
    };
    const weeks: number[] = [];
    for (let k = 1; k <= Math.min(4, elapsedWeeks); k++) if (counted(bucket - k * bucketsPerWeek)) weeks.push(k);
    if (weeks.length >= 2) {
      for (const k of weeks) collect(bucket - k * bucketsPerWeek, values);
      let mean = Math.max(cappedMean(values), lowerMedian(own));
      if (this.#recurringTimes.has(timeOfDay(bucket, bucketsPerDay))) {
        own.length = 0;
        lastDays([]);
        mean = Math.max(mean, lowerMedian(own));
      }
      return { mean, days: 7 * weeks.length };
    }
    const days = lastDays(values);
    return { mean: Math.max(cappedMean(values), lowerMedian(own)), days };
  }

  /**
   * How the last day compares with its seasonal medians: (Σ counts + prior) / (Σ medians + prior)
   * over its usable buckets, at most {@link MAX_LEVEL} either way. A level that moved (drift, a
   * new normal) moves the expectation within a day.
   */
  #levelAt(bucket: number): number {
    let counted = 0;
    let expected = 0;
    for (let b = bucket - this.model.bucketsPerDay; b < bucket; b++) {
      const value = this.#usableForLevel(b);
      const seasonal = this.#seasonal.at(b);
      if (value < 0 || seasonal < 0) continue;
      counted += value;
      expected += seasonal;
    }
    const prior = this.model.levelPrior;
    const level = (counted + prior) / (expected + prior);
    return Math.min(MAX_LEVEL, Math.max(1 / MAX_LEVEL, level));
  }

  /**
   * Re-estimates the dispersion from the last seven days by moments: for a negative binomial,
   * E[(x − μ)² − x] = μ²/size, so 1/size = Σ((x − μ)² − x) / Σμ². Buckets far outside what the
   * current estimate allows (|x − μ| over four standard deviations: a burst the mask missed) are
   * left out, so what it detects never widens the band it is detected by.
   */
  #estimateDispersion(bucket: number): void {
    const pairs: [number, number][] = [];
    for (let b = bucket - 7 * this.model.bucketsPerDay + 1; b <= bucket; b++) {
      const value = this.#usableForLevel(b);
      const expected = this.#expected.at(b);
      if (value < 0 || expected < 0) continue;
      pairs.push([value, Math.max(expected, FLOOR_MEAN)]);
    }
    if (pairs.length < this.model.bucketsPerDay) return;
    let dispersion = this.#dispersionAt < 0 ? DEFAULT_DISPERSION : this.#dispersion;
    for (let round = 0; round < 2; round++) {
      // A prior worth DISPERSION_PRIOR_WEIGHT of Σμ² at DEFAULT_DISPERSION: a sparse week (a rule
      // with a story an hour) cannot swing the estimate far; a busy one is all evidence.
      let excess = DISPERSION_PRIOR_WEIGHT * DEFAULT_DISPERSION;
      let weight = DISPERSION_PRIOR_WEIGHT;
      for (const [value, mean] of pairs) {
        const sd = Math.sqrt(mean + mean * mean * dispersion);
        if (Math.abs(value - mean) > 4 * sd + 1) continue;
        excess += (value - mean) ** 2 - value;
        weight += mean * mean;
      }
      dispersion = Math.min(MAX_DISPERSION, Math.max(MIN_DISPERSION, excess / weight));
    }
    this.#dispersion = roundTo3(dispersion);
    this.#dispersionAt = bucket;
  }

  /** The strongest span ending at `bucket`: significance, span, observed and expected. */
  #strongest(bucket: number): { score: number; scale: number; observed: number; expected: number; floorOk: boolean } {
    const size = this.#size();
    const correction = Math.log10(this.model.scales.length);
    let best = { score: 0, scale: 1, observed: 0, expected: 0, floorOk: false };
    for (const scale of this.model.scales) {
      let observed = 0;
      let expected = 0;
      let squares = 0;
      let complete = true;
      for (let b = bucket - scale + 1; b <= bucket; b++) {
        const value = this.#counts.at(b);
        const mean = this.#expected.at(b);
        if (value < 0 || mean < 0) {
          complete = false;
          break;
        }
        observed += value;
        const floored = Math.max(mean, FLOOR_MEAN);
        expected += floored;
        squares += floored * floored;
      }
      if (!complete) continue;
      // A sum of k negative binomials of one size: the same mean, and the size that keeps the variance.
      const spanSize = size >= POISSON_SIZE ? POISSON_SIZE : (size * expected * expected) / squares;
      const score = -log10UpperTail(observed, expected, spanSize) - correction;
      const floorOk = observed >= this.preset.minCount && observed >= this.preset.minRatio * expected;
      if (score > best.score) best = { score, scale, observed, expected, floorOk };
    }
    return best;
  }

  #judge(
    bucket: number,
    count: number,
    expected: number,
    levels: readonly number[] | undefined,
    baselineDays: number,
  ): BucketVerdict {
    const base = { bucket, count, expected, upper: this.upperBand(expected) };
    if (count < 0 || Number.isNaN(expected)) {
      const closed = this.#open === undefined ? undefined : this.#hold(bucket, false, count < 0 ? 0 : count, 0);
      return { ...base, score: 0, scale: 1, ...closed };
    }
    const strongest = this.#strongest(bucket);
    const verdict = { ...base, score: strongest.score, scale: strongest.scale };
    if (this.#open !== undefined) {
      const elevated = strongest.score >= this.model.holdAt && count > expected;
      return { ...verdict, ...this.#hold(bucket, elevated, count, expected, strongest.score) };
    }
    if (strongest.score < this.preset.openAt) return verdict;
    if (this.#warmingUp(bucket, baselineDays)) return { ...verdict, held: 'warm-up' };
    if (this.#closedAt >= 0 && bucket - this.#closedAt <= this.model.coolDownBuckets) {
      return { ...verdict, held: 'cool-down' };
    }
    if (!strongest.floorOk) return { ...verdict, held: 'floor' };
    if (this.preset.recordDays !== undefined && !this.#isRecord(bucket, strongest.score, levels)) {
      return { ...verdict, held: 'record' };
    }
    const since = this.#onset(bucket, strongest.scale);
    let observed = 0;
    let expectedSum = 0;
    let peak = 0;
    let peakAt = bucket;
    for (let b = since; b <= bucket; b++) {
      const value = Math.max(0, this.#counts.at(b));
      observed += value;
      expectedSum += Math.max(0, this.#expected.at(b));
      if (value > peak) {
        peak = value;
        peakAt = b;
      }
    }
    this.#open = {
      id: bucket.toString(36),
      openedAt: bucket,
      since,
      observed,
      expected: expectedSum,
      peak,
      peakAt,
      score: strongest.score,
      quiet: 0,
      lastAt: bucket,
    };
    this.#rebuildMask();
    return { ...verdict, event: 'open', episode: this.#open };
  }

  /** The first bucket of the span that fired whose count was above its expectation. */
  #onset(bucket: number, scale: number): number {
    for (let b = bucket - scale + 1; b < bucket; b++) {
      if (this.#counts.at(b) > Math.max(0, this.#expected.at(b))) return b;
    }
    return bucket;
  }

  /** Carries the open episode over one more bucket; closes it after enough quiet, or as a level shift. */
  #hold(
    bucket: number,
    elevated: boolean,
    count: number,
    expected: number,
    score = 0,
  ): Pick<BucketVerdict, 'event' | 'episode' | 'levelShift'> {
    const open = this.#open as OpenEpisode;
    const quiet = elevated ? 0 : open.quiet + 1;
    const updated: OpenEpisode = {
      ...open,
      observed: open.observed + count,
      expected: open.expected + expected,
      peak: Math.max(open.peak, count),
      peakAt: count > open.peak ? bucket : open.peakAt,
      score: Math.max(open.score, score),
      quiet,
      lastAt: bucket,
    };
    const levelShift = bucket - open.since + 1 >= this.model.maxEpisodeBuckets;
    if (quiet >= this.model.quietBuckets || levelShift) {
      // The quiet buckets at the end were not part of the burst.
      const to = levelShift && quiet === 0 ? bucket : bucket - quiet;
      this.#episodes.push({ id: open.id, from: open.since, to: Math.max(open.since, to), levelShift });
      if (this.#episodes.length > MAX_EPISODES) this.#episodes.splice(0, this.#episodes.length - MAX_EPISODES);
      this.#open = undefined;
      this.#closedAt = bucket;
      this.#rebuildMask();
      return { event: 'close', episode: updated, levelShift };
    }
    this.#open = updated;
    // The open episode's buckets are masked from its first to its last (as a restored detector
    // rebuilds them from `since` and `lastAt`); quiet ones at its end are unmasked when it closes.
    this.#mask.add(bucket);
    return { event: 'update', episode: updated };
  }
}

/** Expected counts are never taken below this per bucket: a rule that saw nothing for weeks is not certain to see nothing. */
const FLOOR_MEAN = 0.05;
