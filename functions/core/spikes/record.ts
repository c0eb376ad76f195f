/**
 * What the state table keeps per rule with spike alerts ({@link SpikeRecord}), and the pure steps
 * the run applies to it: count the new stories a run saw, evaluate the buckets that completed,
 * and turn an episode into the facts of its alert.
 *
 * Guarantees this module owns:
 * - **A story counts once, in one bucket.** A story counts for a rule in the bucket in which the
 *   story index first saw it (`firstSeenAt`, fixed when the story is filed), and only while that
 *   bucket is still open (the current bucket or the one before). Open buckets keep the story ids
 *   they counted, so reading an article again (an overlapping window, a sweep, a run after a
 *   crash) adds nothing; a closed bucket takes nothing more. Copies of a story are the same story,
 *   so 200 copies of one wire story count one.
 * - **Catch-up reads are not bursts.** An article published before the previous bucket (the first
 *   run after an outage reads hours at once) is not counted; buckets no run saw are unknown (-1),
 *   not zero, so they neither fire nor drag the baseline down.
 * - **Deterministic episodes.** A bucket is evaluated by the first run after it ends; a run that
 *   crashed before storing the record leaves the bucket to the next run, which reaches the same
 *   episode id (the bucket it opened on), so the alert's ledger key is the same.
 *
 * Pure: no I/O, no clock (times are passed in).
 */
import {
  type BucketVerdict,
  type DetectorState,
  emptyDetectorState,
  type OpenEpisode,
  PRESETS,
  SpikeDetector,
  type SpikePreset,
  spikeModel,
} from './detector.ts';

/** Buckets of spike alerts: one hour. */
export const SPIKE_BUCKET_MS = 3_600_000;

/** Story ids an open bucket keeps per rule (beyond it the bucket's count stops growing; logged). */
export const MAX_BUCKET_STORIES = 4000;
/** Stories per bucket kept with their headline and link, for the alert's top stories. */
export const MAX_BUCKET_SAMPLES = 40;
/** Distinct outlets per bucket kept. */
export const MAX_BUCKET_OUTLETS = 200;
/** Longest headline (characters) and link kept in a sample. */
export const MAX_SAMPLE_TITLE = 160;
export const MAX_SAMPLE_URL = 1000;
/** Past episodes listed per rule (the CLI's backtest and `spikes list`). */
export const MAX_RECENT_EPISODES = 20;

/** One story as an alert names it. */
export interface StorySample {
  readonly storyId: string;
  readonly title: string;
  readonly url: string;
  /** Outlet name of the first copy the rule saw. */
  readonly outlet?: string | undefined;
}

/** A bucket that can still change: its stories so far, some of them with headline and link. */
export interface OpenBucket {
  readonly bucket: number;
  /** Story ids counted (a set, in the order first counted). */
  readonly stories: readonly string[];
  readonly samples: readonly StorySample[];
  readonly outlets: readonly string[];
}

/** The facts of one episode's alert, fixed when it opened (every retry renders the same message). */
export interface EpisodeAlert {
  readonly episodeId: string;
  /** The bucket the episode opened on, and its first bucket. */
  readonly openedAt: number;
  readonly since: number;
  readonly preset: SpikePreset;
  readonly bucketMs: number;
  readonly observed: number;
  readonly expected: number;
  /** New stories in the bucket that opened it, and what was expected there. */
  readonly bucketCount: number;
  readonly bucketExpected: number;
  /** Distinct outlets of the episode's stories so far. */
  readonly outletCount: number;
  readonly topStories: readonly (StorySample & { readonly outlets: number })[];
  readonly topOutlets: readonly { readonly name: string; readonly stories: number }[];
  /**
   * `spike` when it opened; `escalated` once the episode reached twice the stories it was
   * announced with (an update notice for audiences with `updates: notify`, at most once).
   */
  readonly stage: 'spike' | 'escalated';
  /** The episode's stories so far (grows while it is open). */
  readonly storiesSoFar: number;
  /**
   * Stories expected over the same span as {@link storiesSoFar} (grows with it), so an update
   * compares like with like; absent in records written before it was kept (then `expected`).
   */
  readonly expectedSoFar?: number | undefined;
  /** Set once the ledger holds the alert (or the episode closed long ago): no more offers. */
  readonly settled?: boolean | undefined;
  /** Set when the episode closed. */
  readonly closedAt?: number | undefined;
}

/** An episode as the CLI lists it. */
export interface EpisodeSummary {
  readonly episodeId: string;
  readonly since: number;
  readonly openedAt: number;
  readonly to?: number | undefined;
  readonly observed: number;
  readonly expected: number;
  readonly peak: number;
  readonly levelShift?: boolean | undefined;
}

/** Everything the state table keeps about one rule's spike alerts. */
export interface SpikeRecord {
  readonly ruleId: string;
  readonly audienceId: string;
  readonly preset: SpikePreset;
  readonly bucketMs: number;
  /** Optimistic-lock counter: every write expects the version it read. */
  readonly version: number;
  /** The detector, through `detector.start + counts.length - 1` (the last evaluated bucket). */
  readonly detector: DetectorState;
  /** Distinct outlets of each evaluated bucket, parallel to the last week of `detector.counts`. */
  readonly outletCounts: readonly number[];
  /** Buckets not evaluated yet, and the last evaluated one (it may still grow), oldest first. */
  readonly open: readonly OpenBucket[];
  /** The alert of the current (or last) episode; undefined before the first. */
  readonly alert?: EpisodeAlert | undefined;
  readonly recent: readonly EpisodeSummary[];
  readonly updatedAt: number;
}

/** The latest time a Date can hold (ECMAScript: 8.64e15 ms either side of the epoch). */
const MAX_TIME_MS = 8.64e15;

/**
 * How far after the run's clock a stored record may reach and still be continued: the runs it
 * lacks are counted when the clock gets there, as before. Further is a hand edit, or a clock moved
 * days: the rule counts again rather than wait that long in silence.
 */
const FUTURE_TOLERANCE_MS = 2 * 86_400_000;

/**
 * Why a stored record cannot be continued, or undefined. The state table's schema check sees
 * types; this sees what a hand edit can still break: a bucket length the model refuses, a
 * negative dispersion, a bucket number no time has, which would fail a run (or the CLI) that
 * turned it into a date, or (given `now`) one more than {@link FUTURE_TOLERANCE_MS} after it:
 * counts of hours to come make every story until then read as late, so the rule silently stopped
 * counting and alerting until that day (a reviewer typed epoch seconds into `detector.start`). A
 * record a little ahead is kept: a sandbox `run --now` a few hours back or ahead of the last run
 * must not cost the rule its learned counts (a reviewer of the first version of this check).
 * The store treats such a record as damaged: the rule counts again.
 */
export function spikeRecordProblem(record: SpikeRecord, now?: number): string | undefined {
  try {
    spikeModel(record.bucketMs);
    if (record.alert !== undefined) spikeModel(record.alert.bucketMs);
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
  const { detector } = record;
  if (!(detector.dispersion >= 0)) return `detector.dispersion must not be negative; got ${detector.dispersion}`;
  if (detector.counts.some((count) => count < -1)) return 'detector.counts: a count below -1 (-1 is "not counted")';
  const lastBucket = Math.floor(MAX_TIME_MS / record.bucketMs);
  const buckets: [string, number | undefined][] = [
    ['detector.start', detector.start],
    ['the last of detector.counts', detector.start + detector.counts.length - 1],
    ['detector.countingSince', detector.countingSince],
    ['detector.dispersionAt', detector.dispersionAt],
    ['detector.closedAt', detector.closedAt],
    ...detector.episodes.flatMap((episode): [string, number][] => [
      ['detector.episodes.from', episode.from],
      ['detector.episodes.to', episode.to],
    ]),
    ...(detector.open === undefined
      ? []
      : ([
          ['detector.open.openedAt', detector.open.openedAt],
          ['detector.open.since', detector.open.since],
          ['detector.open.peakAt', detector.open.peakAt],
          ['detector.open.lastAt', detector.open.lastAt],
        ] as [string, number][])),
    ...record.open.map((open): [string, number] => ['open.bucket', open.bucket]),
    ...(record.alert === undefined
      ? []
      : ([
          ['alert.openedAt', record.alert.openedAt],
          ['alert.since', record.alert.since],
          ['alert.closedAt', record.alert.closedAt],
        ] as [string, number | undefined][])),
    ...record.recent.flatMap((episode): [string, number | undefined][] => [
      ['recent.since', episode.since],
      ['recent.openedAt', episode.openedAt],
      ['recent.to', episode.to],
    ]),
  ];
  for (const [name, bucket] of buckets) {
    // -1 stands for "not yet" (dispersionAt, closedAt).
    if (bucket !== undefined && (bucket < -1 || bucket > lastBucket)) {
      return `${name}: ${bucket} is the bucket of no valid time`;
    }
    // The alert's buckets have their own length; the record's are the rest.
    const bucketMs = name.startsWith('alert.') && record.alert !== undefined ? record.alert.bucketMs : record.bucketMs;
    if (now !== undefined && bucket !== undefined && bucket * bucketMs > now + FUTURE_TOLERANCE_MS) {
      return `${name}: bucket ${bucket} (${new Date(bucket * bucketMs).toISOString()}) is more than two days after the current one (${new Date(bucketOf(now, bucketMs) * bucketMs).toISOString()}): edited by hand, or written by a run whose clock was moved that far ahead (a sandbox run --now)`;
    }
  }
  return undefined;
}

export const bucketOf = (epochMs: number, bucketMs: number = SPIKE_BUCKET_MS): number => Math.floor(epochMs / bucketMs);

/** A new record for a rule that starts counting at `now`: its first (partial) bucket counts as unknown. */
export function newSpikeRecord(
  ruleId: string,
  audienceId: string,
  preset: SpikePreset,
  now: number,
  bucketMs: number = SPIKE_BUCKET_MS,
): SpikeRecord {
  const current = bucketOf(now, bucketMs);
  return {
    ruleId,
    audienceId,
    preset,
    bucketMs,
    version: 0,
    // The partial first bucket is stepped as unknown when it completes: counting starts after it.
    detector: emptyDetectorState(current),
    outletCounts: [],
    open: [],
    recent: [],
    updatedAt: now,
  };
}

/** The last bucket the detector evaluated, or start - 1. */
export const evaluatedThrough = (record: SpikeRecord): number =>
  record.detector.start + record.detector.counts.length - 1;

/** A story one run saw for a rule: which story, when the index first saw it, and the article. */
export interface StorySighting {
  readonly storyId: string;
  readonly firstSeenAt: number;
  readonly publishedAt: number;
  readonly title: string;
  readonly url: string;
  readonly outlet?: string | undefined;
}

/** What counting did to a record. */
export interface CountOutcome {
  readonly record: SpikeRecord;
  /** New story ids counted (0: nothing changed). */
  readonly counted: number;
  /** Sightings left out: their bucket had closed, or the article was old news (catch-up read). */
  readonly late: number;
  /** Stories left out because a bucket reached {@link MAX_BUCKET_STORIES}. */
  readonly saturated: number;
}

/**
 * Adds what a run saw to the open buckets. `now` decides which buckets are open: the current one
 * and the one before (which the detector evaluated already or soon will; its count is amended).
 */
export function countStories(record: SpikeRecord, sightings: readonly StorySighting[], now: number): CountOutcome {
  const current = bucketOf(now, record.bucketMs);
  const oldestOpen = current - 1;
  // Anything the detector is past, except the last evaluated bucket, is closed.
  const firstCountable = Math.max(oldestOpen, evaluatedThrough(record));
  const buckets = new Map(record.open.map((open) => [open.bucket, open]));
  const sets = new Map<number, Set<string>>();
  let counted = 0;
  let late = 0;
  let saturated = 0;
  const changed = new Set<number>();
  const freshFrom = oldestOpen * record.bucketMs;
  for (const sighting of sightings) {
    const bucket = bucketOf(sighting.firstSeenAt, record.bucketMs);
    if (bucket < firstCountable || bucket > current || sighting.publishedAt < freshFrom) {
      late += 1;
      continue;
    }
    let open = buckets.get(bucket) ?? { bucket, stories: [], samples: [], outlets: [] };
    let set = sets.get(bucket);
    if (set === undefined) {
      set = new Set(open.stories);
      sets.set(bucket, set);
    }
    const outlet = sighting.outlet?.trim() || undefined;
    const outlets =
      outlet !== undefined && !open.outlets.includes(outlet) && open.outlets.length < MAX_BUCKET_OUTLETS
        ? [...open.outlets, outlet]
        : open.outlets;
    if (set.has(sighting.storyId)) {
      if (outlets !== open.outlets) {
        open = { ...open, outlets };
        buckets.set(bucket, open);
        changed.add(bucket);
      }
      continue;
    }
    if (set.size >= MAX_BUCKET_STORIES) {
      saturated += 1;
      continue;
    }
    set.add(sighting.storyId);
    counted += 1;
    const samples =
      open.samples.length < MAX_BUCKET_SAMPLES && sighting.url.length <= MAX_SAMPLE_URL
        ? [...open.samples, sampleOf(sighting, outlet)]
        : open.samples;
    open = { ...open, stories: [...open.stories, sighting.storyId], samples, outlets };
    buckets.set(bucket, open);
    changed.add(bucket);
  }
  if (changed.size === 0) return { record, counted, late, saturated };
  const open = [...buckets.values()].sort((a, b) => a.bucket - b.bucket);
  const detector = amendLastEvaluated(record, open);
  return { record: { ...record, open, detector, outletCounts: amendOutlets(record, open) }, counted, late, saturated };
}

function sampleOf(sighting: StorySighting, outlet: string | undefined): StorySample {
  return {
    storyId: sighting.storyId,
    title: sighting.title.slice(0, MAX_SAMPLE_TITLE),
    url: sighting.url,
    ...(outlet === undefined ? {} : { outlet: outlet.slice(0, 100) }),
  };
}

/** The detector with its last evaluated bucket's count brought up to what its open bucket now holds. */
function amendLastEvaluated(record: SpikeRecord, open: readonly OpenBucket[]): DetectorState {
  const last = evaluatedThrough(record);
  const bucket = open.find((entry) => entry.bucket === last);
  const { detector } = record;
  if (bucket === undefined || detector.counts.length === 0) return detector;
  const previous = detector.counts[detector.counts.length - 1] as number;
  if (previous < 0 || bucket.stories.length <= previous) return detector;
  return { ...detector, counts: [...detector.counts.slice(0, -1), bucket.stories.length] };
}

function amendOutlets(record: SpikeRecord, open: readonly OpenBucket[]): number[] {
  const last = evaluatedThrough(record);
  const bucket = open.find((entry) => entry.bucket === last);
  if (bucket === undefined || record.outletCounts.length === 0) return [...record.outletCounts];
  return [...record.outletCounts.slice(0, -1), bucket.outlets.length];
}

/** One bucket the run evaluated, with what the detector said. */
export interface EvaluatedBucket extends BucketVerdict {
  readonly outlets: number;
}

/** What evaluating the completed buckets did. */
export interface EvaluationOutcome {
  readonly record: SpikeRecord;
  readonly buckets: readonly EvaluatedBucket[];
  /** An episode opened in these buckets: its alert facts are in `record.alert`. */
  readonly opened: boolean;
  /** The open episode reached twice the stories it was announced with. */
  readonly escalated: boolean;
  /**
   * When an episode opened: the stories of its buckets (at most {@link MAX_RANKED_STORIES}), whose
   * outlets the alert's top outlets tally ({@link rankAlert}). Not kept in the record.
   */
  readonly episodeStories?: readonly string[] | undefined;
}

/** Most buckets evaluated in one go; a rule idle longer than this restarts its history gap as unknown. */
const MAX_CATCH_UP_BUCKETS = 24 * 7 * 5;

/**
 * Steps the detector over every bucket that completed before `now` and was not evaluated yet.
 * Buckets after the one of `lastRunAt` (the run before this one) that hold nothing are unknown: no
 * run watched them (an outage). So are those of a rule the full passes left behind
 * (`evaluatedForAllUntil`): it was turned off while runs went on. The bucket that was current when the
 * rule started counting is unknown too (partial).
 */
export function evaluateCompleted(
  record: SpikeRecord,
  now: number,
  options: {
    readonly lastRunAt?: number | undefined;
    /**
     * When the buckets the last full pass evaluated for every rule that asked for spikes end (epoch
     * ms): an instant, as the heartbeat's hours and a record's buckets need not be the same length.
     */
    readonly evaluatedForAllUntil?: number | undefined;
    readonly preset?: SpikePreset | undefined;
  } = {},
): EvaluationOutcome {
  const preset = options.preset ?? record.preset;
  const model = spikeModel(record.bucketMs);
  const current = bucketOf(now, record.bucketMs);
  let detectorState = record.detector;
  const firstToEvaluate = evaluatedThrough(record) + 1;
  let alert = record.alert;
  if (current - firstToEvaluate > MAX_CATCH_UP_BUCKETS) {
    // Idle for weeks (spikes turned off, say): what is left is too old to be a baseline. An
    // episode still open then ends, offered no more: its detector is gone, so nothing else would
    // close it, and a ledger entry expired since would let it go out again.
    detectorState = { ...emptyDetectorState(current - 1), countingSince: current };
    if (alert !== undefined && (alert.closedAt === undefined || alert.settled !== true)) {
      alert = { ...alert, closedAt: alert.closedAt ?? firstToEvaluate, settled: true };
    }
  }
  const detector = new SpikeDetector(model, PRESETS[preset], detectorState);
  const openByBucket = new Map(record.open.map((open) => [open.bucket, open]));
  // No run between the last one and this one: the hours in between were not watched.
  const lastRunBucket = options.lastRunAt === undefined ? undefined : bucketOf(options.lastRunAt, record.bucketMs);
  // A record the last full passes left behind was not among their rules: the rule was off (its
  // spikes, itself or its audience) while runs went on. After the hour of its last pass, only the
  // hours it counted something in were watched; the others are unknown, not zero, or the first
  // ordinary hours after it is turned on again would look like a spike.
  // Left behind: a bucket of its own had completed by then, and the passes did not evaluate it.
  const leftBehind =
    options.evaluatedForAllUntil !== undefined &&
    firstToEvaluate < Math.floor(options.evaluatedForAllUntil / record.bucketMs);
  const buckets: EvaluatedBucket[] = [];
  let outletCounts = [...record.outletCounts];
  let opened = false;
  let episodeStories: string[] | undefined;
  let recent = [...record.recent];
  while (detector.next < current) {
    const bucket = detector.next;
    const open = openByBucket.get(bucket);
    const unseen =
      bucket <= record.detector.countingSince ||
      (open === undefined &&
        ((lastRunBucket !== undefined && bucket > lastRunBucket) || (leftBehind && bucket > firstToEvaluate)));
    const count = unseen ? -1 : (open?.stories.length ?? 0);
    const verdict = detector.step(count);
    const outlets = open?.outlets.length ?? 0;
    outletCounts.push(outlets);
    buckets.push({ ...verdict, outlets });
    if (verdict.event === 'open' && verdict.episode !== undefined) {
      opened = true;
      alert = alertFacts(verdict.episode, preset, record, verdict);
      episodeStories = storiesOf(record, verdict.episode);
    } else if (verdict.episode !== undefined && alert !== undefined && alert.episodeId === verdict.episode.id) {
      alert = {
        ...alert,
        storiesSoFar: verdict.episode.observed,
        expectedSoFar: Math.round(verdict.episode.expected * 100) / 100,
      };
      if (verdict.event === 'close') alert = { ...alert, closedAt: bucket };
    }
    if (verdict.event === 'close' && verdict.episode !== undefined) {
      recent = upsertRecent(recent, summaryOf(verdict.episode, bucket, verdict.levelShift));
    } else if (verdict.episode !== undefined) {
      recent = upsertRecent(recent, summaryOf(verdict.episode));
    }
  }
  outletCounts = outletCounts.slice(-7 * model.bucketsPerDay);
  let escalated = false;
  if (
    alert !== undefined &&
    alert.stage === 'spike' &&
    alert.closedAt === undefined &&
    alert.storiesSoFar >= 2 * alert.observed
  ) {
    alert = { ...alert, stage: 'escalated' };
    escalated = true;
  }
  // The last evaluated bucket and newer stay open (counting); the three before keep their
  // headlines and outlets only, for the explanation of an episode that opens over several hours.
  const countFrom = detector.next - 1;
  const explainFrom = countFrom - Math.max(...model.scales);
  const open = record.open
    .filter((entry) => entry.bucket >= explainFrom)
    .map((entry) => (entry.bucket >= countFrom ? entry : { ...entry, stories: [] }));
  return {
    record: { ...record, preset, detector: detector.state(), outletCounts, open, alert, recent },
    buckets,
    opened,
    escalated,
    ...(episodeStories === undefined ? {} : { episodeStories }),
  };
}

/** Most stories of an episode whose outlets an alert tallies (ten story index reads of 100). */
export const MAX_RANKED_STORIES = 1000;

/**
 * The stories of an episode's buckets: every story id an open bucket still holds, and the sampled
 * ones of the older buckets that keep their headlines only; at most {@link MAX_RANKED_STORIES}.
 */
function storiesOf(record: SpikeRecord, episode: OpenEpisode): string[] {
  const ids = new Set<string>();
  // Newest first: when the cap cuts, it cuts the hours before the one the episode opened on.
  for (const open of [...record.open].sort((a, b) => b.bucket - a.bucket)) {
    if (open.bucket < episode.since || open.bucket > episode.openedAt) continue;
    for (const sample of open.samples) ids.add(sample.storyId);
    for (const storyId of open.stories) ids.add(storyId);
  }
  return [...ids].slice(0, MAX_RANKED_STORIES);
}

function upsertRecent(recent: EpisodeSummary[], summary: EpisodeSummary): EpisodeSummary[] {
  const others = recent.filter((entry) => entry.episodeId !== summary.episodeId);
  return [...others, summary].sort((a, b) => a.openedAt - b.openedAt).slice(-MAX_RECENT_EPISODES);
}

function summaryOf(episode: OpenEpisode, closedAt?: number, levelShift?: boolean): EpisodeSummary {
  return {
    episodeId: episode.id,
    since: episode.since,
    openedAt: episode.openedAt,
    ...(closedAt === undefined ? {} : { to: closedAt }),
    observed: episode.observed,
    expected: Math.round(episode.expected * 100) / 100,
    peak: episode.peak,
    ...(levelShift ? { levelShift: true } : {}),
  };
}

/** The alert facts of an episode that just opened, from the open buckets' samples. */
function alertFacts(
  episode: OpenEpisode,
  preset: SpikePreset,
  record: SpikeRecord,
  verdict: BucketVerdict,
): EpisodeAlert {
  const samples: StorySample[] = [];
  const outlets = new Set<string>();
  // Newest first: the hour the episode opened on leads, then the hours of its span before it.
  for (const open of [...record.open].sort((a, b) => b.bucket - a.bucket)) {
    if (open.bucket < episode.since || open.bucket > episode.openedAt) continue;
    samples.push(...open.samples);
    for (const outlet of open.outlets) outlets.add(outlet);
  }
  return {
    episodeId: episode.id,
    openedAt: episode.openedAt,
    since: episode.since,
    preset,
    bucketMs: record.bucketMs,
    observed: episode.observed,
    expected: Math.round(episode.expected * 100) / 100,
    bucketCount: verdict.count,
    bucketExpected: Math.round(verdict.expected * 100) / 100,
    outletCount: outlets.size,
    // Every sampled story is a candidate (the opening bucket's first); ranked by outlets once the
    // story index is asked (spike step), and cut to MAX_TOP_STORIES there.
    topStories: samples.slice(0, MAX_RANKED_SAMPLES).map((sample) => ({ ...sample, outlets: 1 })),
    topOutlets: [],
    stage: 'spike',
    storiesSoFar: episode.observed,
    expectedSoFar: Math.round(episode.expected * 100) / 100,
  };
}

/** Stories and outlets an alert names. */
export const MAX_TOP_STORIES = 5;
export const MAX_TOP_OUTLETS = 5;
/** Sampled stories an alert ranks for its top stories (one story index read). */
export const MAX_RANKED_SAMPLES = 100;

/**
 * The alert's top stories and outlets once the story index told how many outlets each story has
 * (`outletsOf`: story id → outlet count and names; missing: the rule's own copies only). The top
 * outlets tally `storyIds`, every story of the episode ({@link EvaluationOutcome.episodeStories}),
 * not only those with a headline: an outlet that carried many stories is named although none of
 * them made the top five. A story the index does not know counts for its sample's outlet only.
 */
export function rankAlert(
  alert: EpisodeAlert,
  outletsOf: ReadonlyMap<string, { readonly outletCount: number; readonly outlets: readonly string[] }>,
  storyIds: readonly string[] = alert.topStories.map((story) => story.storyId),
): EpisodeAlert {
  const stories = alert.topStories.map((story) => {
    const known = outletsOf.get(story.storyId);
    return { ...story, outlets: Math.max(1, known?.outletCount ?? story.outlets) };
  });
  // Stable: equal outlet counts keep the candidates' order (the opening hour's first).
  stories.sort((a, b) => b.outlets - a.outlets);
  const sampled = new Map(alert.topStories.map((story) => [story.storyId, story.outlet]));
  const tally = new Map<string, number>();
  for (const storyId of new Set([...storyIds, ...sampled.keys()])) {
    const outlet = sampled.get(storyId);
    const names = outletsOf.get(storyId)?.outlets ?? (outlet === undefined ? [] : [outlet]);
    for (const name of new Set(names)) tally.set(name, (tally.get(name) ?? 0) + 1);
  }
  const topOutlets = [...tally]
    .map(([name, count]) => ({ name, stories: count }))
    .sort((a, b) => b.stories - a.stories || a.name.localeCompare(b.name))
    .slice(0, MAX_TOP_OUTLETS);
  return { ...alert, topStories: stories.slice(0, MAX_TOP_STORIES), topOutlets };
}
