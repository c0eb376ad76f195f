/**
 * A simulated provider day (issue 15, item 3; issue 29): a whole day of articles arriving at the
 * news API simulator on a daily curve, some of them listed late (several lateness distributions),
 * read by the real alert run on a schedule in accelerated time, so the provider pages a day costs
 * can be compared with the floor, and freshness (listing → SNS) measured for all articles and for
 * the late ones alone: today's reading (every run reads every page of its window), incremental
 * reading with full sweeps only (before counted reading) and counted reading (the default).
 *
 * What is real: `runAlertCycle` (functions/core/alert-run.ts) and `NewsLookupClient` over HTTPS
 * against the simulator. What is not: the state table and SNS are the in-memory ports of
 * test/support/fake-ports.ts (MemoryStateStore, MemoryNotifier); moto would take hours for the
 * ~1,700 runs per schedule, and the end-to-end sections already measure the AWS side.
 *
 * Accelerated time: run k starts at its scheduled instant t_k; inside the run the clock moves with
 * real time (t_k + elapsed), so a long read costs simulated time too. Before each run, every
 * article whose appearance time is at or before t_k is published into the simulator. Provider
 * requests are counted from the simulator's own request callback, never from the run summary.
 *
 * The day (provider-local, Asia/Seoul): the previous day is already there with its own articles
 * (a steady state, so the first hour's runs pay for reading yesterday as they would in
 * production); warm-up runs from 18:00 the evening before bring the ledger, watermark and reading
 * state to where a long-running deployment has them (the six-hourly sweep of 18:00 included, so
 * the first run after midnight reads the evening since then, as it does in production); the
 * counted runs are 00:00 to 23:55 (or 23:59); the next day's first runs (its first-of-day sweep,
 * or with counted reading one recheck period's worth) deliver what is still due, so "lost" is only
 * what no run would ever deliver.
 */
import { performance } from 'node:perf_hooks';
import { DateTime } from 'luxon';
import { type AlertRunSettings, type RunSummary, runAlertCycle } from '#core/alert-run';
import { compileRules } from '#core/matcher';
import { AudienceSchema, type Rule, type RuleSet } from '#core/model';
import type { Notifier, OutboundMessage, PublishedMessage, PublishOutcome } from '#core/ports';
import { defaultPageSize, silentLog } from '#core/ports';
import { parseProviderConfig } from '#provider/config';
import { NewsLookupClient } from '#provider/news-client';
import { MemoryNotifier, MemoryStateStore, memoryRules } from '#test/fake-ports';
import { defaultRecheckMinutes } from '../lib/config.ts';
import { articleOf } from '../sandbox/expectations.ts';
import { type NewsSimulator, type SimArticleInput, startNewsSimulator } from '../sandbox/news-simulator.ts';
import { ArticleFactory, mulberry32, type SimArticle, ZoneCalendar } from '../sandbox/news-simulator-data.ts';
import type { PemPair } from '../sandbox/tls.ts';
import { percentile } from './stats.ts';
import { syntheticRules } from './synthetic.ts';

const MINUTE_MS = 60_000;
const HOUR_MS = 60 * MINUTE_MS;
const DAY_MS = 24 * HOUR_MS;

// --- The day's articles (pure) ------------------------------------------------------------------

/**
 * Relative article volume per provider-local hour (00–01 first): a news wire's day. Quiet from
 * 01:00 to 05:00 (a tenth of the peak), rising with the morning editions to the mid-morning peak
 * (09:00–11:00), a dip over lunch, a second, slightly lower peak in the early evening
 * (17:00–19:00) and a slow decline to midnight. Peak to trough is 8.5 to 1.
 */
export const DAILY_CURVE: readonly number[] = [
  2.0, 1.4, 1.0, 0.8, 0.8, 1.2, 2.4, 4.0, 5.6, 6.8, 6.6, 5.8, 4.8, 4.6, 4.8, 5.0, 5.4, 6.0, 6.2, 5.4, 4.4, 3.6, 3.0,
  2.4,
];

/**
 * Articles per hour for a day of `total` articles along `curve`: proportional shares rounded by
 * largest remainder, so the hours always add up to exactly `total`.
 */
export function hourlyCounts(total: number, curve: readonly number[] = DAILY_CURVE): number[] {
  const weight = curve.reduce((sum, w) => sum + w, 0);
  const exact = curve.map((w) => (total * w) / weight);
  const counts = exact.map(Math.floor);
  let missing = total - counts.reduce((sum, n) => sum + n, 0);
  const byRemainder = exact.map((value, hour) => ({ hour, remainder: value - Math.floor(value) }));
  byRemainder.sort((a, b) => b.remainder - a.remainder || a.hour - b.hour);
  for (const { hour } of byRemainder) {
    if (missing <= 0) break;
    counts[hour] = (counts[hour] ?? 0) + 1;
    missing -= 1;
  }
  return counts;
}

/** A share of articles the provider lists between `minMs` and `maxMs` after their publication time. */
export interface LatenessBucket {
  readonly share: number;
  readonly minMs: number;
  readonly maxMs: number;
}

/** How late the provider lists articles: buckets of delays (the rest are listed on time). */
export interface Lateness {
  readonly name: LatenessName;
  readonly description: string;
  readonly buckets: readonly LatenessBucket[];
}

export type LatenessName = 'none' | 'typical' | 'heavy';

/**
 * The distributions of issue 29: none; typical (about 95% within 2 minutes, 4.5% within 15, 0.5%
 * within 60); heavy (80% / 15% / 5%). Uniform within each bucket.
 */
export const LATENESS: Readonly<Record<LatenessName, Lateness>> = {
  none: { name: 'none', description: 'every article listed at its publication time', buckets: [] },
  typical: {
    name: 'typical',
    description: '95% listed within 2 min of publication, 4.5% within 2–15 min, 0.5% within 15–60 min',
    buckets: [
      { share: 0.95, minMs: 0, maxMs: 2 * MINUTE_MS },
      { share: 0.045, minMs: 2 * MINUTE_MS, maxMs: 15 * MINUTE_MS },
      { share: 0.005, minMs: 15 * MINUTE_MS, maxMs: 60 * MINUTE_MS },
    ],
  },
  heavy: {
    name: 'heavy',
    description: '80% within 2 min, 15% within 2–15 min, 5% within 15–60 min',
    buckets: [
      { share: 0.8, minMs: 0, maxMs: 2 * MINUTE_MS },
      { share: 0.15, minMs: 2 * MINUTE_MS, maxMs: 15 * MINUTE_MS },
      { share: 0.05, minMs: 15 * MINUTE_MS, maxMs: 60 * MINUTE_MS },
    ],
  },
};

/**
 * A late article: listed more than INCREMENTAL_OVERLAP_MINUTES (2) after its publication time,
 * beyond what the read below the previous run's articles covers (what waited for a sweep before
 * counted reading).
 */
export const LATE_AFTER_MS = 2 * MINUTE_MS;

/** One article of the day: when it says it was published and when the provider starts listing it. */
export interface Arrival {
  readonly publishedAt: number;
  readonly appearsAt: number;
}

/**
 * The arrivals of one day starting at `dayStart`: {@link hourlyCounts} articles per hour, spread
 * uniformly within the hour on whole seconds, each indexed on time or late per `late`. Sorted by
 * `publishedAt`; the same seed always gives the same day.
 */
export function dayArrivals(options: {
  readonly total: number;
  readonly dayStart: number;
  readonly seed: number;
  readonly curve?: readonly number[];
  readonly late?: Lateness;
}): Arrival[] {
  const next = mulberry32(options.seed);
  const late = options.late ?? LATENESS.typical;
  const arrivals: Arrival[] = [];
  hourlyCounts(options.total, options.curve).forEach((count, hour) => {
    const hourStart = options.dayStart + hour * HOUR_MS;
    for (let i = 0; i < count; i++) {
      const publishedAt = hourStart + Math.floor((next() * HOUR_MS) / 1000) * 1000;
      let roll = next();
      let delay = 0;
      for (const bucket of late.buckets) {
        if (roll < bucket.share) {
          // Whole seconds, uniform in the bucket.
          delay = bucket.minMs + Math.floor((next() * (bucket.maxMs - bucket.minMs)) / 1000) * 1000;
          break;
        }
        roll -= bucket.share;
      }
      arrivals.push({ publishedAt, appearsAt: publishedAt + delay });
    }
  });
  return arrivals.sort((a, b) => a.publishedAt - b.publishedAt);
}

// --- Page arithmetic (pure) ---------------------------------------------------------------------

/**
 * Pages the floor allows one run: the new articles once, in full pages, plus one request (the
 * run must ask at least once, and a full last page needs one more to see the end).
 */
export const floorPagesOfRun = (newArticles: number, pageSize: number): number => Math.ceil(newArticles / pageSize) + 1;

/** The floor of a day: Σ over runs of ceil(new / size) + 1, with no sweeps. */
export const floorPages = (newPerRun: readonly number[], pageSize: number): number =>
  newPerRun.reduce((sum, n) => sum + floorPagesOfRun(n, pageSize), 0);

/**
 * Pages the provider client spends reading a whole provider day of `articles` (the PAGE method
 * with a total, as the simulator answers): one page for an empty day, otherwise ceil(n / size),
 * plus one empty page when the last page is full. The request target's bound, ceil(n / size) + 1,
 * is this or one more.
 */
export const wholeDayPages = (articles: number, pageSize: number): number =>
  articles === 0 ? 1 : Math.ceil(articles / pageSize) + (articles % pageSize === 0 ? 1 : 0);

/** Articles with `appearsAt` in (from, to] in a list sorted by `appearsAt`. */
function countAppearedBetween(sortedAppearances: readonly number[], from: number, to: number): number {
  return upperBound(sortedAppearances, to) - upperBound(sortedAppearances, from);
}

/** Index of the first value > `value` in an ascending list. */
function upperBound(sorted: readonly number[], value: number): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((sorted[mid] ?? Number.POSITIVE_INFINITY) <= value) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** The provider's view of the arrivals: appearance times per provider date, ascending. */
export class ProviderDays {
  readonly #byDate = new Map<string, number[]>();
  readonly #all: number[];

  constructor(
    arrivals: readonly Arrival[],
    readonly calendar: ZoneCalendar,
  ) {
    for (const arrival of arrivals) {
      const date = calendar.dateOf(arrival.publishedAt);
      let list = this.#byDate.get(date);
      if (!list) {
        list = [];
        this.#byDate.set(date, list);
      }
      list.push(arrival.appearsAt);
    }
    for (const list of this.#byDate.values()) list.sort((a, b) => a - b);
    this.#all = arrivals.map((arrival) => arrival.appearsAt).sort((a, b) => a - b);
  }

  /** Articles of provider `date` listed at instant `at`. */
  listedOn(date: string, at: number): number {
    return upperBound(this.#byDate.get(date) ?? [], at);
  }

  /** Articles that appeared in (from, to]: what a run at `to` finds new after a run at `from`. */
  appearedBetween(from: number, to: number): number {
    return countAppearedBetween(this.#all, from, to);
  }
}

/** Provider dates from the one holding `from` to the one holding `to`, both included. */
export function datesCovering(from: number, to: number, calendar: ZoneCalendar): string[] {
  const dates: string[] = [];
  for (let day = calendar.dateOf(from); ; ) {
    dates.push(day);
    if (day >= calendar.dateOf(to)) return dates;
    day = calendar.dateOf(calendar.endOf(day));
  }
}

/**
 * Today's pages for runs at `runTimes` (each run reads, whole, every provider date from
 * `previous run − lateArrivalMs` to its own start, as functions/core/alert-run.ts did before
 * incremental reading), computed with {@link wholeDayPages} per requested date. `previousRun` is
 * the run before the first (where the watermark stands).
 */
export function todayPagesPerRun(options: {
  readonly runTimes: readonly number[];
  readonly previousRun: number;
  readonly lateArrivalMs: number;
  readonly pageSize: number;
  readonly days: ProviderDays;
}): number[] {
  const { days } = options;
  let watermark = options.previousRun;
  return options.runTimes.map((at) => {
    let pages = 0;
    for (const date of datesCovering(watermark - options.lateArrivalMs, at, days.calendar)) {
      pages += wholeDayPages(days.listedOn(date, at), options.pageSize);
    }
    watermark = at;
    return pages;
  });
}

// --- Running a scenario -------------------------------------------------------------------------

const cpuMillis = (usage: NodeJS.CpuUsage): number => (usage.user + usage.system) / 1000;

/** The schedules of the bench. */
export type Schedule = { readonly label: string; readonly intervalMs: number };

export const SCHEDULES = {
  every5: { label: 'every 5 min', intervalMs: 5 * MINUTE_MS },
  every1: { label: 'every 1 min', intervalMs: MINUTE_MS },
} as const satisfies Record<string, Schedule>;

/** The defaults of functions/alert-run/config.ts (and lib/config.ts) the bench runs with. */
export const READING_DEFAULTS = {
  fullSweepMinutes: 360,
  incrementalOverlapMinutes: 2,
  lateArrivalMinutes: 60,
} as const;

/** Time from an article's appearance at the provider to SNS accepting its notification. */
export interface Freshness {
  readonly p50Ms: number;
  readonly p95Ms: number;
  readonly p99Ms: number;
  readonly maxMs: number;
  /** Notifications measured. */
  readonly n: number;
}

/** Percentiles of freshness samples; undefined for none. */
export function freshnessOf(samples: readonly number[]): Freshness | undefined {
  if (samples.length === 0) return undefined;
  return {
    p50Ms: percentile(samples, 50),
    p95Ms: percentile(samples, 95),
    p99Ms: percentile(samples, 99),
    maxMs: samples.reduce((max, value) => Math.max(max, value), Number.NEGATIVE_INFINITY),
    n: samples.length,
  };
}

/** How a scenario reads: counted reading (the default) or full sweeps only (before it, and its fallback). */
export type DayReading = 'today' | 'sweeps' | 'counted';

/** What one scenario measured or computed. */
export interface DayScenarioResult {
  readonly schedule: string;
  readonly intervalMinutes: number;
  /** The lateness distribution of the day's articles. */
  readonly lateness: LatenessName;
  /**
   * `today`: every run reads its whole window; `sweeps`: incremental with full sweeps every
   * `fullSweepMinutes` (LATE_RECHECK_MINUTES=0); `counted`: counted reading, rechecks every
   * `recheckMinutes`.
   */
  readonly reading: DayReading;
  readonly fullSweepMinutes: number;
  readonly recheckMinutes: number;
  /** `run`: measured by running it; `formula`: computed from the per-run day sizes (today). */
  readonly method: 'run' | 'formula';
  /** Counted runs (the day's schedule); runs skipped because the previous one overran are counted too. */
  readonly runs: number;
  readonly pages: number;
  readonly floor: number;
  readonly ratio: number;
  /** Articles in the pages read (provider items, repeats included). */
  readonly articlesRead?: number;
  /** Runs that read a full sweep (from the run summary), and the pages those runs read. */
  readonly sweeps?: number;
  readonly sweepPages?: number;
  /** Counted reading: rechecks run, the pages they read, and the late articles they found. */
  readonly rechecks?: number;
  readonly recheckPages?: number;
  readonly lateFound?: number;
  /** Over every notification of an article that appeared during the day. */
  readonly freshness?: Freshness;
  /** Over the notifications of late articles alone (listed more than {@link LATE_AFTER_MS} late). */
  readonly lateFreshness?: Freshness;
  /** Where the freshness figures come from when not from the whole day (today: the checked slices). */
  readonly freshnessFrom?: string;
  /** Notifications the rules produce for the day's articles, delivered, missing, and sent twice. */
  readonly deliveries?: {
    readonly expected: number;
    readonly delivered: number;
    readonly missing: number;
    readonly duplicates: number;
  };
  /** Set when the scenario was stopped early (page budget), with why. */
  readonly stopped?: string;
  /** Real time the scenario took, and the CPU time of the process over it (run and simulator). */
  readonly wallMs: number;
  readonly cpuMs?: number;
}

/** The check of the today formula against real runs over a slice of the day. */
export interface FormulaCheck {
  readonly schedule: string;
  readonly from: string;
  readonly to: string;
  readonly runs: number;
  readonly measuredPages: number;
  readonly formulaPages: number;
  /** Runs whose measured pages differ from the formula. */
  readonly mismatchedRuns: number;
  /** Freshness of today's reading over the slice (articles that appeared after the slice began). */
  readonly freshness?: Freshness;
  readonly lateFreshness?: Freshness;
  readonly wallMs: number;
}

/** Everything the provider-day bench produced. */
export interface ProviderDayResults {
  readonly articlesPerDay: number;
  readonly pageSize: number;
  readonly rules: number;
  readonly audiences: number;
  readonly timeZone: string;
  readonly day: string;
  /** The lateness distributions the scenarios ran with. */
  readonly lateness: readonly Lateness[];
  /** The lateness the today formula and its check were worked out for. */
  readonly formulaLateness: LatenessName;
  readonly defaultSweepMinutes: number;
  readonly scenarios: readonly DayScenarioResult[];
  readonly formulaChecks: readonly FormulaCheck[];
  /** A note on the state of incremental reading in the code measured (lead's commit or not). */
  readonly readingImplementation: string;
  readonly wallMs: number;
}

/** One scenario to run: a day of this lateness, read this way. */
export interface DayVariant {
  readonly lateness: LatenessName;
  readonly reading: Exclude<DayReading, 'today'>;
}

/** Options of {@link runProviderDay}. */
export interface ProviderDayOptions {
  readonly ca: PemPair;
  readonly articlesPerDay: number;
  readonly seed: number;
  /** Scenarios per schedule. */
  readonly schedules: readonly { readonly schedule: Schedule; readonly variants: readonly DayVariant[] }[];
  /** The provider day (YYYY-MM-DD, provider-local). */
  readonly day?: string;
  readonly timeZone?: string;
  readonly pageSize?: number;
  readonly rules?: number;
  /** Slices of the day (offsets from the day start) on which today's formula is checked by real runs. */
  readonly formulaSlices: readonly { readonly schedule: Schedule; readonly fromMs: number; readonly toMs: number }[];
  /** The lateness of the day today's formula is worked out and checked for (default typical). */
  readonly formulaLateness?: LatenessName;
  /** A scenario stops once its counted pages pass this multiple of the day's floor (it has missed anyway). */
  readonly pageBudgetFactor?: number;
  readonly readingImplementation: string;
  readonly progress?: (line: string) => void;
}

/** The day bench's audiences: one per audience id the rules use, immediate delivery, no preferences. */
function ruleSetOf(rules: readonly Rule[]): RuleSet {
  const ids = [...new Set(rules.map((rule) => rule.audienceId))].sort();
  return {
    rules,
    audiences: ids.map((audienceId, i) =>
      AudienceSchema.parse({ audienceId, topicArn: `arn:aws:sns:ap-northeast-2:123456789012:bench-day-${i}` }),
    ),
    rejected: [],
  };
}

/** A MemoryNotifier that notes when (on the simulated clock) each message was accepted. */
class TimedNotifier extends MemoryNotifier implements Notifier {
  constructor(readonly onAccepted: (message: OutboundMessage) => void) {
    super();
  }

  override async publish(
    messages: readonly OutboundMessage[],
    options: { signal?: AbortSignal; onPublished: (batch: readonly PublishedMessage[]) => Promise<void> },
  ): Promise<PublishOutcome> {
    const outcome = await super.publish(messages, {
      ...options,
      onPublished: async (batch) => {
        for (const { message } of batch) this.onAccepted(message);
        await options.onPublished(batch);
      },
    });
    // Only the timing is needed; keeping 100,000 rendered messages would only cost memory.
    this.published.length = 0;
    return outcome;
  }
}

/** The day's articles as simulator input, with their appearance times. */
interface DayContent {
  /** Sorted by appearance. */
  readonly items: readonly { readonly appearsAt: number; readonly input: SimArticleInput }[];
  readonly appearsAtById: ReadonlyMap<string, number>;
  /** Article id → how long after its publication time the provider lists it. */
  readonly delayById: ReadonlyMap<string, number>;
  readonly days: ProviderDays;
  /** Article id → provider date. */
  readonly dateById: ReadonlyMap<string, string>;
  readonly articles: readonly SimArticle[];
}

function dayContent(options: {
  readonly articlesPerDay: number;
  readonly seed: number;
  readonly previousDayStart: number;
  readonly dayStart: number;
  readonly calendar: ZoneCalendar;
  readonly late: Lateness;
}): DayContent {
  const arrivals = [
    ...dayArrivals({
      total: options.articlesPerDay,
      dayStart: options.previousDayStart,
      seed: options.seed + 1,
      late: options.late,
    }),
    ...dayArrivals({
      total: options.articlesPerDay,
      dayStart: options.dayStart,
      seed: options.seed,
      late: options.late,
    }),
  ];
  const factory = new ArticleFactory(options.seed, options.calendar);
  const articles = factory.generate(arrivals.map((arrival) => arrival.publishedAt));
  const appearsAtById = new Map<string, number>();
  const delayById = new Map<string, number>();
  const dateById = new Map<string, string>();
  const items = articles.map((article, i) => {
    const appearsAt = arrivals[i]?.appearsAt ?? article.publishedAt;
    appearsAtById.set(article.articleId, appearsAt);
    delayById.set(article.articleId, appearsAt - article.publishedAt);
    dateById.set(article.articleId, options.calendar.dateOf(article.publishedAt));
    const { articleId, title, summary, url, publishedAt, categories, media, status } = article;
    return {
      appearsAt,
      input: { articleId, title, summary, url, publishedAt, categories: [...categories], media, status },
    };
  });
  items.sort((a, b) => a.appearsAt - b.appearsAt);
  return {
    items,
    appearsAtById,
    delayById,
    days: new ProviderDays(arrivals, options.calendar),
    dateById,
    articles,
  };
}

/** One scenario's counters, by phase of the simulated day. */
interface Tally {
  pages: number;
  articlesRead: number;
}

interface ScenarioRun {
  readonly schedule: Schedule;
  readonly fullSweepMs: number;
  /** Counted reading's recheck period; 0: off (full sweeps only). */
  readonly lateRecheckMs: number;
  /** Counted runs: their scheduled instants. */
  readonly runTimes: readonly number[];
  /**
   * Runs before the counted ones (not counted), and the ones after (the drain: the next day's
   * first runs, until everything listed during the day is due by the documented promise).
   */
  readonly warmUpTimes: readonly number[];
  readonly drainTimes?: readonly number[];
  /** Where the watermark stands before the first run. */
  readonly watermarkAt: number;
  readonly pageBudget: number;
  /** Per counted run: pages as measured (for the formula check). */
  readonly perRunPages?: number[];
  /** Freshness counts articles that appear from here on (earlier ones were the warm-up's). */
  readonly freshnessFrom: number;
}

/**
 * Runs the schedule against a fresh simulator: warm-up runs, counted runs, then the drain run.
 * Returns what the counted runs cost and what every run delivered.
 */
async function runSchedule(
  context: {
    readonly ca: PemPair;
    readonly content: DayContent;
    readonly ruleSet: RuleSet;
    readonly timeZone: string;
    readonly pageSize: number;
    readonly seed: number;
  },
  scenario: ScenarioRun,
): Promise<{
  counted: Tally;
  runs: number;
  sweeps: number;
  sweepPages: number;
  rechecks: number;
  recheckPages: number;
  lateFound: number;
  stopped?: string;
  freshnessMs: number[];
  lateFreshnessMs: number[];
  accepted: Map<string, number>;
  lastClock: number;
}> {
  const { content } = context;
  let base = scenario.warmUpTimes[0] ?? scenario.runTimes[0] ?? 0;
  let realStart = performance.now();
  const now = () => base + (performance.now() - realStart);
  let phase: 'warm-up' | 'counted' | 'drain' = 'warm-up';
  const counted: Tally = { pages: 0, articlesRead: 0 };
  let runPages = 0;
  const simulator: NewsSimulator = await startNewsSimulator({
    ca: context.ca,
    now,
    seed: context.seed,
    timeZone: context.timeZone,
    articles: [],
    maxPageSize: context.pageSize,
    keys: { 'bench-day-key': { name: 'bench-day', kind: 'live', media: '*' } },
    onRequest: (record) => {
      if (record.path !== '/news') return;
      runPages += 1;
      if (phase !== 'counted') return;
      counted.pages += 1;
      counted.articlesRead += record.articleCount ?? 0;
    },
  });
  const client = new NewsLookupClient({
    config: parseProviderConfig({
      baseUrl: simulator.url,
      pageSize: context.pageSize,
      timeZone: context.timeZone,
      caPem: context.ca.cert,
      // A 100,000-article day is exactly NEWS_API_MAX_PAGES (1000) full pages of 100, and the
      // client needs one request more to see the end: the default cap would fail the day.
      maxPages: 2000,
      baseDelayMs: 1,
      maxDelayMs: 5,
    }),
    secrets: { apiKey: async () => 'bench-day-key' },
    log: silentLog,
    now,
  });
  const accepted = new Map<string, number>();
  const freshnessMs: number[] = [];
  const lateFreshnessMs: number[] = [];
  const notifier = new TimedNotifier((message) => {
    const id = message.key.articleKey.slice('id:'.length);
    const key = `${message.key.audienceId}|${id}`;
    const at = now();
    // A second acceptance is a duplicate; the first one is what the audience saw.
    const first = !accepted.has(key);
    accepted.set(key, first ? at : -1);
    const appearsAt = content.appearsAtById.get(id);
    if (first && appearsAt !== undefined && appearsAt >= scenario.freshnessFrom) {
      freshnessMs.push(at - appearsAt);
      if ((content.delayById.get(id) ?? 0) > LATE_AFTER_MS) lateFreshnessMs.push(at - appearsAt);
    }
  });
  const state = new MemoryStateStore();
  await state.setWatermark(scenario.watermarkAt, 'bench-day-setup', scenario.watermarkAt);
  const settings: AlertRunSettings = {
    providerTimeZone: context.timeZone,
    lateArrivalMs: READING_DEFAULTS.lateArrivalMinutes * MINUTE_MS,
    initialLookbackMs: HOUR_MS,
    leaseDurationMs: 15 * MINUTE_MS,
    softMarginMs: 30_000,
    hardMarginMs: 10_000,
    ledgerFlushDelayMs: 5,
    fullSweepMs: scenario.fullSweepMs,
    incrementalOverlapMs: READING_DEFAULTS.incrementalOverlapMinutes * MINUTE_MS,
    lateRecheckMs: scenario.lateRecheckMs,
  };
  const deps = { news: client, rules: memoryRules(context.ruleSet), state, notifier, log: silentLog, now };

  let published = 0;
  let busyUntil = Number.NEGATIVE_INFINITY;
  let runs = 0;
  let sweeps = 0;
  let sweepPages = 0;
  let rechecks = 0;
  let recheckPages = 0;
  let lateFound = 0;
  let stopped: string | undefined;
  const runAt = async (at: number, runId: string): Promise<RunSummary | undefined> => {
    if (at < busyUntil) return undefined; // the previous run still holds the lease: this one is skipped
    const batch: SimArticleInput[] = [];
    for (; published < content.items.length; published++) {
      const item = content.items[published];
      if (!item || item.appearsAt > at) break;
      batch.push(item.input);
    }
    for (let i = 0; i < batch.length; i += 5000) simulator.publish(...batch.slice(i, i + 5000));
    base = at;
    realStart = performance.now();
    runPages = 0;
    const summary = await runAlertCycle(deps, settings, { runId, remainingTimeMs: () => 5 * MINUTE_MS });
    busyUntil = now();
    if (summary.status !== 'completed') throw new Error(`run ${runId} ended ${summary.status}: ${summary.reason}`);
    return summary;
  };

  try {
    for (const [i, at] of scenario.warmUpTimes.entries()) await runAt(at, `warm-up-${i}`);
    phase = 'counted';
    for (const [i, at] of scenario.runTimes.entries()) {
      runs += 1;
      const summary = await runAt(at, `run-${i}`);
      scenario.perRunPages?.push(summary ? runPages : 0);
      if (summary?.reading?.mode === 'sweep') {
        sweeps += 1;
        sweepPages += runPages;
      }
      const late = summary?.reading?.counted;
      if (late) {
        rechecks += late.rechecks;
        recheckPages += late.recheckPages;
        lateFound += late.found;
      }
      if (counted.pages > scenario.pageBudget) {
        const clock = DateTime.fromMillis(at, { zone: context.timeZone }).toFormat('HH:mm');
        stopped = `stopped at ${clock} (run ${i + 1} of ${scenario.runTimes.length}) after ${counted.pages} pages, past the budget of ${scenario.pageBudget}`;
        break;
      }
    }
    phase = 'drain';
    if (stopped === undefined) {
      for (const [i, at] of (scenario.drainTimes ?? []).entries()) await runAt(at, `drain-${i}`);
    }
  } finally {
    await client.close();
    await simulator.stop();
  }
  return {
    counted,
    runs,
    sweeps,
    sweepPages,
    rechecks,
    recheckPages,
    lateFound,
    ...(stopped === undefined ? {} : { stopped }),
    freshnessMs,
    lateFreshnessMs,
    accepted,
    lastClock: busyUntil,
  };
}

/** Every (audience, article id) the rules match among articles of `dates` listed by `until`. */
function expectedNotifications(
  content: DayContent,
  ruleSet: RuleSet,
  dates: ReadonlySet<string>,
  until: number,
): Set<string> {
  const matcher = compileRules(ruleSet.rules);
  const expected = new Set<string>();
  for (const article of content.articles) {
    if (!dates.has(content.dateById.get(article.articleId) ?? '')) continue;
    if ((content.appearsAtById.get(article.articleId) ?? Number.POSITIVE_INFINITY) > until) continue;
    for (const match of matcher.match(articleOf(article))) expected.add(`${match.audienceId}|${article.articleId}`);
  }
  return expected;
}

/** Counted reading's recheck period on a schedule: the stack's default (lib/config.ts). */
export const recheckMinutesFor = (schedule: Schedule): number => defaultRecheckMinutes(schedule.intervalMs / MINUTE_MS);

/**
 * Runs the simulated provider day: per schedule, today's pages (computed, and checked against real
 * runs over a slice) and each variant (lateness × reading) run for real.
 */
export async function runProviderDay(options: ProviderDayOptions): Promise<ProviderDayResults> {
  const started = performance.now();
  const timeZone = options.timeZone ?? 'Asia/Seoul';
  const calendar = new ZoneCalendar(timeZone);
  const day = options.day ?? '2026-11-23';
  const pageSize = options.pageSize ?? defaultPageSize;
  const dayStart = calendar.startOf(day);
  const previousDayStart = dayStart - DAY_MS;
  const progress = options.progress ?? (() => {});
  const contents = new Map<LatenessName, DayContent>();
  const contentOf = (lateness: LatenessName): DayContent => {
    let content = contents.get(lateness);
    if (content === undefined) {
      content = dayContent({
        articlesPerDay: options.articlesPerDay,
        seed: options.seed,
        previousDayStart,
        dayStart,
        calendar,
        late: LATENESS[lateness],
      });
      contents.set(lateness, content);
    }
    return content;
  };
  const formulaLateness = options.formulaLateness ?? 'typical';
  const rules = syntheticRules(options.rules ?? 300, options.seed);
  const ruleSet = ruleSetOf(rules);
  const lateArrivalMs = READING_DEFAULTS.lateArrivalMinutes * MINUTE_MS;
  const contextOf = (lateness: LatenessName) => ({
    ca: options.ca,
    content: contentOf(lateness),
    ruleSet,
    timeZone,
    pageSize,
    seed: options.seed,
  });
  const scenarios: DayScenarioResult[] = [];
  const formulaChecks: FormulaCheck[] = [];
  const clockText = (at: number) => DateTime.fromMillis(at, { zone: timeZone }).toFormat('HH:mm');

  for (const slice of options.formulaSlices) {
    const sliceStarted = performance.now();
    const { intervalMs } = slice.schedule;
    const runTimes: number[] = [];
    for (let at = dayStart + slice.fromMs; at < dayStart + slice.toMs; at += intervalMs) runTimes.push(at);
    const perRunPages: number[] = [];
    const outcome = await runSchedule(contextOf(formulaLateness), {
      schedule: slice.schedule,
      fullSweepMs: 0,
      lateRecheckMs: 0,
      runTimes,
      warmUpTimes: [],
      watermarkAt: dayStart + slice.fromMs - intervalMs,
      pageBudget: Number.POSITIVE_INFINITY,
      perRunPages,
      freshnessFrom: dayStart + slice.fromMs - intervalMs,
    });
    const freshness = freshnessOf(outcome.freshnessMs);
    const lateFreshness = freshnessOf(outcome.lateFreshnessMs);
    const formula = todayPagesPerRun({
      runTimes,
      previousRun: dayStart + slice.fromMs - intervalMs,
      lateArrivalMs,
      pageSize,
      days: contentOf(formulaLateness).days,
    });
    formulaChecks.push({
      schedule: slice.schedule.label,
      from: clockText(dayStart + slice.fromMs),
      to: clockText(dayStart + slice.toMs),
      runs: runTimes.length,
      measuredPages: perRunPages.reduce((sum, n) => sum + n, 0),
      formulaPages: formula.reduce((sum, n) => sum + n, 0),
      mismatchedRuns: perRunPages.filter((pages, i) => pages !== formula[i]).length,
      ...(freshness === undefined ? {} : { freshness }),
      ...(lateFreshness === undefined ? {} : { lateFreshness }),
      wallMs: performance.now() - sliceStarted,
    });
    progress(
      `provider day: today's formula over ${clockText(dayStart + slice.fromMs)}–${clockText(dayStart + slice.toMs)} ${slice.schedule.label}: ${formulaChecks.at(-1)?.measuredPages} measured, ${formulaChecks.at(-1)?.formulaPages} computed`,
    );
  }

  for (const { schedule, variants } of options.schedules) {
    const { intervalMs } = schedule;
    const runTimes: number[] = [];
    for (let at = dayStart; at < dayStart + DAY_MS; at += intervalMs) runTimes.push(at);
    // From 18:00 the evening before: the six-hourly sweep of a long-running deployment falls then.
    const warmUpTimes: number[] = [];
    for (let at = dayStart - 6 * HOUR_MS; at < dayStart; at += intervalMs) warmUpTimes.push(at);
    const previousRun = dayStart - intervalMs;
    const floorOf = (lateness: LatenessName) =>
      floorPages(
        runTimes.map((at, i) => contentOf(lateness).days.appearedBetween(runTimes[i - 1] ?? previousRun, at)),
        pageSize,
      );

    const todayStarted = performance.now();
    const todayDays = contentOf(formulaLateness).days;
    const today = todayPagesPerRun({ runTimes, previousRun, lateArrivalMs, pageSize, days: todayDays });
    const todayPages = today.reduce((sum, n) => sum + n, 0);
    const slice = formulaChecks.find((check) => check.schedule === schedule.label && check.freshness);
    const todayFloor = floorOf(formulaLateness);
    scenarios.push({
      schedule: schedule.label,
      intervalMinutes: intervalMs / MINUTE_MS,
      lateness: formulaLateness,
      reading: 'today',
      fullSweepMinutes: 0,
      recheckMinutes: 0,
      method: 'formula',
      runs: runTimes.length,
      pages: todayPages,
      floor: todayFloor,
      ratio: todayPages / todayFloor,
      articlesRead: runTimes.reduce(
        (sum, at, i) =>
          sum +
          datesCovering((runTimes[i - 1] ?? previousRun) - lateArrivalMs, at, calendar).reduce(
            (inner, date) => inner + todayDays.listedOn(date, at),
            0,
          ),
        0,
      ),
      ...(slice?.freshness === undefined
        ? {}
        : {
            freshness: slice.freshness,
            ...(slice.lateFreshness === undefined ? {} : { lateFreshness: slice.lateFreshness }),
            freshnessFrom: `measured over ${slice.from}–${slice.to}`,
          }),
      wallMs: performance.now() - todayStarted,
    });

    for (const variant of variants) {
      const scenarioStarted = performance.now();
      const cpuBefore = process.cpuUsage();
      const floor = floorOf(variant.lateness);
      // Far above any reading's cost (1-hour sweeps read about 7× the floor at 100,000 a day),
      // far below a day read whole on every run (about 100×): only that is cut short.
      const budget = Math.ceil(floor * (options.pageBudgetFactor ?? 20));
      const recheckMinutes = variant.reading === 'counted' ? recheckMinutesFor(schedule) : 0;
      // The next day's first run sweeps without counting; with it, an article listed late in the
      // day's last minutes is due up to one recheck period (and a run) later.
      const drainTimes: number[] = [];
      for (let at = dayStart + DAY_MS; at <= dayStart + DAY_MS + recheckMinutes * MINUTE_MS; at += intervalMs) {
        drainTimes.push(at);
      }
      const outcome = await runSchedule(contextOf(variant.lateness), {
        schedule,
        fullSweepMs: READING_DEFAULTS.fullSweepMinutes * MINUTE_MS,
        lateRecheckMs: recheckMinutes * MINUTE_MS,
        runTimes,
        warmUpTimes,
        drainTimes,
        watermarkAt: warmUpTimes[0] ?? dayStart - intervalMs,
        pageBudget: budget,
        freshnessFrom: dayStart,
      });
      const content = contentOf(variant.lateness);
      const expected = outcome.stopped
        ? undefined
        : expectedNotifications(content, ruleSet, new Set([day]), dayStart + DAY_MS);
      let delivered = 0;
      let duplicates = 0;
      let missing = 0;
      for (const [key, at] of outcome.accepted) {
        // The day's articles listed during the day (not those of the next day's first minutes).
        if (expected !== undefined && !expected.has(key)) continue;
        if (!key.includes(`|${day.replaceAll('-', '')}-`)) continue;
        delivered += 1;
        if (at < 0) duplicates += 1;
      }
      if (expected) for (const key of expected) if (!outcome.accepted.has(key)) missing += 1;
      const freshness = freshnessOf(outcome.freshnessMs);
      const lateFreshness = freshnessOf(outcome.lateFreshnessMs);
      scenarios.push({
        schedule: schedule.label,
        intervalMinutes: intervalMs / MINUTE_MS,
        lateness: variant.lateness,
        reading: variant.reading,
        fullSweepMinutes: READING_DEFAULTS.fullSweepMinutes,
        recheckMinutes,
        method: 'run',
        runs: outcome.runs,
        pages: outcome.counted.pages,
        floor,
        ratio: outcome.counted.pages / floor,
        articlesRead: outcome.counted.articlesRead,
        sweeps: outcome.sweeps,
        sweepPages: outcome.sweepPages,
        ...(variant.reading === 'counted'
          ? { rechecks: outcome.rechecks, recheckPages: outcome.recheckPages, lateFound: outcome.lateFound }
          : {}),
        ...(freshness === undefined ? {} : { freshness }),
        ...(lateFreshness === undefined ? {} : { lateFreshness }),
        ...(expected ? { deliveries: { expected: expected.size, delivered, missing, duplicates } } : {}),
        ...(outcome.stopped === undefined ? {} : { stopped: outcome.stopped }),
        wallMs: performance.now() - scenarioStarted,
        cpuMs: cpuMillis(process.cpuUsage(cpuBefore)),
      });
      const last = scenarios.at(-1);
      progress(
        `provider day: ${schedule.label}, ${variant.lateness} lateness, ${variant.reading}: ${last?.pages} pages (floor ${floor}, ${last?.ratio.toFixed(2)}×), late p99 ${last?.lateFreshness ? (last.lateFreshness.p99Ms / MINUTE_MS).toFixed(1) : '-'} min, ${((last?.wallMs ?? 0) / 1000).toFixed(1)} s (CPU ${((last?.cpuMs ?? 0) / 1000).toFixed(1)} s)${outcome.stopped ? `; ${outcome.stopped}` : ''}`,
      );
    }
  }
  return {
    articlesPerDay: options.articlesPerDay,
    pageSize,
    rules: rules.length,
    audiences: ruleSet.audiences.length,
    timeZone,
    day,
    lateness: [...new Set(options.schedules.flatMap((s) => s.variants.map((v) => v.lateness)))].map(
      (name) => LATENESS[name],
    ),
    formulaLateness,
    defaultSweepMinutes: READING_DEFAULTS.fullSweepMinutes,
    scenarios,
    formulaChecks,
    readingImplementation: options.readingImplementation,
    wallMs: performance.now() - started,
  };
}
