/**
 * One alert run: lease → rules → plan the read → for each provider day in the window: fetch pages,
 * match, skip what the ledger already holds, publish, record, advance the watermark → store the
 * reading state → release.
 *
 * How much of each day is read is planned by reading.ts: a full sweep of every page, or an
 * incremental read that stops a verified newest-first day at watermark - overlap or resumes an
 * oldest-first day where the last run ended. Both keep the guarantees below; an article indexed
 * later than the overlap waits for the next sweep.
 *
 * The guarantees of DESIGN section 3 live here:
 *
 * - No alert is lost: the watermark only moves past a provider day once every page of that day
 *   was read and every notification it produced was published (or parked as undeliverable for
 *   `news-alerts replay` when SNS refused it for good). Anything else leaves the watermark where it
 *   was, and the next run reads the day again.
 * - No alert is sent twice: every (article, audience) pair is checked against the delivery ledger
 *   before publishing and recorded right after SNS accepts it. The only duplicate left is a crash
 *   between those two steps; `LedgerWriter` keeps that window to one short flush delay.
 * - One run at a time: a lease item with an expiry, and the watermark write is a transaction that
 *   checks the lease and the watermark version together.
 * - Bad rules never stop good ones: the RuleSource validates every item and reports the rest.
 * - Stay inside the time limit: fetching stops at the soft deadline, publishing at the hard one,
 *   and the run then records what it did, so the next run continues from there. A provider that
 *   was failing or dripping when the deadline cut it is a failure (ProviderStalledError), not a
 *   clean checkpoint, so it is counted and alarmed as an upstream error.
 * - Poison data never stops all alerting: an item the mapping cannot read is skipped and counted;
 *   a page on which no item can be read (while other pages read fine) is parked — logged with its
 *   day, page and reasons, kept in the run record (`parkedPages`) for replay, counted in
 *   `PagesParked` (alarm `pages-parked`) — and the run goes on and advances past it. A mapping
 *   that reads nothing anywhere still fails the run (the client throws).
 *
 * One story, one alert: with a story index (`deps.stories`), copies of a story an audience already
 * has are recorded in the ledger as collapsed instead of sent (delivery-pipeline.ts); the story
 * marker is written before the lead goes out, so a crash between copies never sends a second one.
 *
 * Delivery preferences (digest mode, quiet hours, daily budgets) keep these guarantees: a match
 * that should wait is held in the state table together with its ledger entry, which counts as
 * handled for the watermark. After its deliveries, and also when it found nothing new or could not
 * read the provider, every run sends the digests that are due (digest-release.ts).
 */

import { redactSecrets } from '../shared/secret-redaction.ts';
import { datesBetween, endOfDate, previousDate, providerDate } from './calendar.ts';
import { type DeliveryCounts, DeliveryPipeline, describe, emptyDeliveryCounts } from './delivery-pipeline.ts';
import { type DigestCounts, emptyDigestCounts, releaseDueDigests } from './digest-release.ts';
import {
  defaultDispatchAbandonAfterMs,
  logAbandoned,
  type RunDispatch,
  RunDispatcher,
  runDispatchOf,
  settleOpenDispatch,
} from './dispatch.ts';
import {
  LeaseHeldError,
  LeaseLostError,
  NewsAlertsError,
  ProviderAuthError,
  ProviderError,
  WatermarkConflictError,
} from './errors.ts';
import { FALLBACK_LOCALE } from './locale.ts';
import { compileRules, type RuleMatcher } from './matcher.ts';
import type { Article, AudienceMatch, Rule, RuleSet } from './model.ts';
import {
  type ArticlePage,
  type DayResume,
  type DeliveryPorts,
  defaultPageSize,
  dispatchComplete,
  type Lease,
  maxResumeKeys,
  maxResumeValueLength,
  type NewsSource,
  type PagePosition,
  type ProviderOrder,
  type ReadingState,
  type RuleSource,
  type RunStatus,
  type ShardedPublishing,
  type Watermark,
} from './ports.ts';
import { CountedRun, type CountedStats, DayTally } from './reading/counted-run.ts';
import {
  countingPauseMs,
  type DayObservation,
  nextOrder,
  OrderCheck,
  planRead,
  type ReadPlan,
} from './reading/plan.ts';
import type { RenderOptions } from './render.ts';
import { savedTimes, withoutLaterRules } from './rule-reach.ts';
import type { SpikeStore } from './spikes/ports.ts';
import { type SpikeRunStats, type SpikeStep, spikeStepFor } from './spikes/step.ts';

/** The adapters one run talks to. */
export interface AlertRunDependencies extends DeliveryPorts {
  readonly news: NewsSource;
  readonly rules: RuleSource;
  /** Epoch ms; injectable so tests control time. */
  readonly now?: () => number;
  /**
   * `publishMode: sharded`: notifications go to the publisher's queue as work items instead of
   * to SNS, and the watermark moves once the publishers finished them. Absent: `single`.
   */
  readonly sharded?: ShardedPublishing | undefined;
  /** Spike alerts' records (functions/core/spikes/); absent: no spike alerts. */
  readonly spikes?: SpikeStore | undefined;
}

/** Tuning of the run, validated by the handler's config. */
export interface AlertRunSettings {
  /** The provider's time zone: date-only ranges are provider-local dates. */
  readonly providerTimeZone: string;
  /**
   * How far behind the watermark each run looks again, for articles the provider indexes late.
   * Articles published earlier than `watermark - lateArrivalMs` count as handled.
   */
  readonly lateArrivalMs: number;
  /** Where the very first run starts: this long before now. */
  readonly initialLookbackMs: number;
  /** Lease length: longer than the function timeout, so a live run never loses it. */
  readonly leaseDurationMs: number;
  /** Stop fetching this long before the time limit (publishing, ledger and watermark follow). */
  readonly softMarginMs: number;
  /** Stop publishing this long before the time limit (ledger, watermark and lease follow). */
  readonly hardMarginMs: number;
  /** Longest a published notification waits for its ledger write. */
  readonly ledgerFlushDelayMs: number;
  /**
   * Incremental reading (functions/core/reading.ts): how often a run reads every page of its window
   * again (a full sweep, for late-indexed or reordered articles); 0 makes every run a full sweep.
   */
  readonly fullSweepMs: number;
  /** Between sweeps, how far behind the watermark a run reads before it may stop early. */
  readonly incrementalOverlapMs: number;
  /**
   * Counted reading (functions/core/reading/counted-days.ts): how long a watched stretch of a day
   * may go unchecked for articles the provider lists late. 0 or absent: off (they wait for a sweep).
   */
  readonly lateRecheckMs?: number | undefined;
  /**
   * Locale of audiences without `locale`, and the fallback before English for the others
   * (the stack's `defaultLocale`, validated at cold start). Default `en-US`.
   */
  readonly defaultLocale?: string | undefined;
  /**
   * Sharded publishing: a dispatch still open this long after it was opened is given up (its
   * items are presumed dead in the dead-letter queue); the days it covered are read again and
   * the ledger keeps what was sent from being sent twice. Default 15 minutes.
   */
  readonly dispatchAbandonAfterMs?: number | undefined;
}

export interface AlertRunOptions {
  readonly runId: string;
  /** Milliseconds left before the platform stops the run (Lambda's getRemainingTimeInMillis). */
  readonly remainingTimeMs: () => number;
}

/**
 * What one run did: returned, logged, turned into metrics and kept in the run history. Failed
 * digest messages count in `notificationsFailed` too, so a run that could not send a due digest
 * is `incomplete` and retried like one that could not send an alert.
 */
export interface RunSummary extends DeliveryCounts, DigestCounts {
  runId: string;
  status: RunStatus;
  startedAt: number;
  finishedAt: number;
  /** Why the run stopped early or failed, if it did. */
  reason?: string;
  window?: { from: string; to: string };
  watermarkBefore?: number;
  watermarkAfter?: number;
  daysCompleted: number;
  pages: number;
  articlesFetched: number;
  /** Articles published after the previous watermark: first seen by this run. */
  articlesNew: number;
  articlesMatched: number;
  articlesSkippedMalformed: number;
  /** Provider pages on which no item could be read (poison pages), parked for replay. */
  pagesParked: number;
  /**
   * The first {@link maxParkedPagesListed} parked pages: where they are and why, kept in the run
   * history so ops can replay the day (rewind the watermark to it) once provider or mapping is fixed.
   */
  parkedPages: ParkedPage[];
  invalidRules: number;
  invalidAudiences: number;
  /** How this run read the provider (functions/core/reading.ts). */
  reading?: RunReading;
  /** Sharded publishing: this run's dispatch, when it queued anything (functions/core/dispatch.ts). */
  dispatch?: RunDispatch;
  /** Sharded publishing: an earlier run's dispatch this run found open and settled (or waited for). */
  settled?: RunDispatch;
  /** Spike alerts: what the spike step counted, evaluated and offered (functions/core/spikes/step.ts). */
  spikes?: SpikeRunStats;
}

/** How a run read the provider: a full sweep (and why) or incremental, and what it learned. */
export interface RunReading {
  mode: 'sweep' | 'incremental';
  /** Why the run swept. */
  reason?: string;
  /** The order the run expected, and the order it leaves for the next run. */
  orderBefore: ProviderOrder;
  orderAfter: ProviderOrder;
  /** Days whose read stopped early (newest-first) or started at the last run's position (oldest-first). */
  daysStoppedEarly: number;
  daysResumed: number;
  /** Days read in full although the plan was incremental, and why (the first reason). */
  daysReadFully: number;
  fullReadReason?: string;
  /** Counted reading: days counted, rechecks and their pages, late articles found; why it paused. */
  counted?: CountedStats & { paused?: string };
}

/** A poison page: the provider day and page, and why none of its items could be read. */
export interface ParkedPage {
  readonly day: string;
  readonly page: number;
  readonly items: number;
  readonly reason: string;
}

/** Parked pages listed per run record; the count in `pagesParked` is always complete. */
export const maxParkedPagesListed = 20;

/** The summary of a run that has done nothing yet: every count zero, finished when it started. */
export function emptyRunSummary(runId: string, startedAt: number): RunSummary {
  return {
    runId,
    status: 'completed',
    startedAt,
    finishedAt: startedAt,
    daysCompleted: 0,
    pages: 0,
    articlesFetched: 0,
    articlesNew: 0,
    articlesMatched: 0,
    articlesSkippedMalformed: 0,
    pagesParked: 0,
    parkedPages: [],
    invalidRules: 0,
    invalidAudiences: 0,
    ...emptyDeliveryCounts(),
    ...emptyDigestCounts(),
  };
}

/**
 * Runs one alert cycle. Throws when the run could not go on (provider down after retries, state
 * table unreachable, lease lost); returns status `incomplete` when some notifications could not be
 * published, which the caller must still report as a failure (see the handler).
 */
export async function runAlertCycle(
  deps: AlertRunDependencies,
  settings: AlertRunSettings,
  options: AlertRunOptions,
): Promise<RunSummary> {
  const now = deps.now ?? Date.now;
  const startedAt = now();
  const summary = emptyRunSummary(options.runId, startedAt);

  let lease: Lease;
  try {
    lease = await deps.state.acquireLease(options.runId, settings.leaseDurationMs, startedAt);
  } catch (error) {
    if (!(error instanceof LeaseHeldError)) throw error;
    deps.log.info('another run holds the lease; skipping this run', { holder: error.holder });
    return { ...summary, status: 'skipped', reason: error.message, finishedAt: now() };
  }

  const deadlines = new Deadlines(options.remainingTimeMs, settings);
  const run = new AlertRun(deps, settings, summary, lease, deadlines, now);
  try {
    await run.run();
  } catch (error) {
    summary.status = 'failed';
    // Kept in the run history and returned: scrubbed of registered secrets like every log line.
    summary.reason = redactSecrets(error instanceof Error ? `${error.name}: ${error.message}` : String(error));
    throw error;
  } finally {
    deadlines.dispose();
    summary.finishedAt = now();
    await finish(deps, lease, summary, run.readingState());
  }
  return summary;
}

/** Releases the lease and records the run; failures here are logged, never hide the run's own. */
async function finish(
  deps: AlertRunDependencies,
  lease: Lease,
  summary: RunSummary,
  reading: ReadingState | undefined,
): Promise<void> {
  if (reading !== undefined) {
    try {
      await deps.state.writeReadingState(lease, { ...reading, runStatus: summary.status }, summary.finishedAt);
    } catch (error) {
      // Losing it only costs the next run a full sweep (it sees the previous run's state, or none).
      deps.log.warn('could not store the reading state; the next run reads every page', { error: describe(error) });
    }
  }
  try {
    await deps.state.recordRun({
      runId: summary.runId,
      status: summary.status,
      startedAt: summary.startedAt,
      finishedAt: summary.finishedAt,
      summary: { ...summary },
    });
  } catch (error) {
    deps.log.error('could not record the run history', { error: describe(error) });
  }
  try {
    await deps.state.releaseLease(lease);
  } catch (error) {
    // The lease expires on its own; the next run only waits for it.
    deps.log.error('could not release the run lease', { error: describe(error) });
  }
}

/** Soft (stop fetching) and hard (stop publishing) deadlines as abort signals. */
class Deadlines {
  readonly fetch = new AbortController();
  readonly publish = new AbortController();
  readonly #timers: (NodeJS.Timeout | undefined)[];
  readonly #remainingTimeMs: () => number;
  readonly #softMarginMs: number;

  constructor(remainingTimeMs: () => number, settings: AlertRunSettings) {
    this.#remainingTimeMs = remainingTimeMs;
    this.#softMarginMs = settings.softMarginMs;
    const remaining = remainingTimeMs();
    this.#timers = [
      schedule(
        this.fetch,
        remaining - settings.softMarginMs,
        'soft deadline: stopped fetching to stay inside the time limit',
      ),
      schedule(
        this.publish,
        remaining - settings.hardMarginMs,
        'hard deadline: stopped publishing to stay inside the time limit',
      ),
    ];
  }

  get softReached(): boolean {
    return this.fetch.signal.aborted;
  }

  /**
   * Asks the platform for the time left, between the timers: work that never yields to the event
   * loop (matching a page of long articles) cannot hold a run past its soft deadline. Throws the
   * deadline (the abort reason) once it is reached.
   */
  throwIfSoftReached(): void {
    if (!this.fetch.signal.aborted && this.#remainingTimeMs() <= this.#softMarginMs) {
      this.fetch.abort(new DeadlineError('soft deadline: stopped fetching to stay inside the time limit'));
    }
    this.fetch.signal.throwIfAborted();
  }

  dispose(): void {
    for (const timer of this.#timers) clearTimeout(timer);
  }
}

/** Longest delay setTimeout accepts; longer ones would fire at once. */
const maxTimerMs = 2 ** 31 - 1;

/**
 * The longest a publisher's claim on a work item can last: its invocation's deadline, and no Lambda
 * invocation runs longer than 15 minutes. A claim that ends later was edited by hand, and waiting
 * for it would hold every run back.
 */
const maxClaimMs = 15 * 60_000;

/** How far a publisher's clock may run behind the run's when it wrote a claim's end. */
const claimClockSkewMs = 30_000;

function schedule(controller: AbortController, inMs: number, reason: string): NodeJS.Timeout | undefined {
  const abort = () => controller.abort(new DeadlineError(reason));
  if (inMs <= 0) {
    abort();
    return undefined;
  }
  if (inMs > maxTimerMs) return undefined; // no practical limit (local runs)
  const timer = setTimeout(abort, inMs);
  timer.unref();
  return timer;
}

/** The run reached its time budget; not a failure: progress is checkpointed. */
class DeadlineError extends NewsAlertsError {
  constructor(message: string) {
    super(message);
    this.name = 'DeadlineError';
  }
}

/** The mutable state of one run; `run()` is the algorithm described at the top of the file. */
class AlertRun {
  #watermark: Watermark | undefined;
  /** The delivery pipeline's budget slots given back by failed sends (kept for their retries). */
  #budgetGivenBack: () => ReadonlyMap<string, number> = () => new Map();
  /** The reading state the previous run left, and this run's plan (functions/core/reading.ts). */
  #readingBefore: ReadingState | undefined;
  #plan: ReadPlan | undefined;
  /** What each day read showed of the provider's order. */
  readonly #observations: DayObservation[] = [];
  /** Where this run's complete reads of each day ended. */
  readonly #resume = new Map<string, DayResume>();
  /** A sweep that read every day of its window. */
  #sweptAll = false;
  /** Articles published before this are only read by sweeps (watermark - late-arrival window). */
  #sweepOnlyBefore = Number.NEGATIVE_INFINITY;
  /** When each rule was saved (its `updatedAt`), where it says. */
  #ruleSavedAt = new Map<string, number>();
  /** Sharded publishing: this run's dispatch, and where the watermark may move once it is done. */
  #dispatcher: RunDispatcher | undefined;
  #advanceTo: number | undefined;
  /** Why the run stopped without finishing its window, when it is not the time budget. */
  #stoppedBecause: string | undefined;
  /** Counted reading in this run (the plan counts, and the source serves pages by number). */
  #counted: CountedRun | undefined;
  /** Spike alerts in this run: undefined when no rule asks for them. */
  #spikes: SpikeStep | undefined;

  constructor(
    readonly deps: AlertRunDependencies,
    readonly settings: AlertRunSettings,
    readonly summary: RunSummary,
    readonly lease: Lease,
    readonly deadlines: Deadlines,
    readonly now: () => number,
  ) {
    this.render = { defaultLocale: settings.defaultLocale ?? FALLBACK_LOCALE };
  }

  /** How this run renders: every audience without `locale` reads the stack's default locale. */
  readonly render: RenderOptions;

  async run(): Promise<void> {
    const { deps, summary } = this;
    // The first provider request waits for the slowest of these reads, not for their sum: the API
    // key (started here, read by the first page), the rules and audiences, the watermark and the
    // reading state. All are reads under the lease. In sharded mode the reading state is read after
    // an earlier dispatch is settled, as it always was.
    deps.news.prepare?.();
    const [ruleSet, watermark, reading] = await Promise.all([
      deps.rules.load(),
      deps.state.readWatermark(),
      deps.sharded === undefined ? deps.state.readReadingState() : undefined,
    ]);
    this.#watermark = watermark;
    this.#readingBefore = reading;
    summary.invalidRules = ruleSet.rejected.filter((item) => item.table === 'rules').length;
    summary.invalidAudiences = ruleSet.rejected.filter((item) => item.table === 'audiences').length;
    const audiences = new Map(ruleSet.audiences.map((audience) => [audience.audienceId, audience]));

    let failure: { error: unknown } | undefined;
    let complete = false;
    try {
      complete = await this.#deliverNew(ruleSet, audiences);
    } catch (error) {
      failure = { error };
    }
    // Due digests go out even when the provider failed: held alerts must not wait for it. Not when
    // the lease or the watermark was lost: another run is in charge then.
    const lost = failure?.error instanceof LeaseLostError || failure?.error instanceof WatermarkConflictError;
    if (!lost) {
      try {
        await releaseDueDigests({
          state: deps.state,
          notifier: deps.notifier,
          log: deps.log,
          stories: deps.stories,
          now: this.now,
          audiences,
          publishSignal: this.deadlines.publish.signal,
          counts: summary,
          render: this.render,
          budgetKeptForRetries: this.#budgetGivenBack(),
        });
      } catch (error) {
        if (failure === undefined) failure = { error };
        else deps.log.error('could not send the due digests', { error: describe(error) });
      }
    }
    if (failure === undefined) {
      try {
        if (!(await this.#finishDispatch())) complete = false;
      } catch (error) {
        failure = { error };
      }
    }
    if (failure !== undefined) throw failure.error;

    if (summary.notificationsFailed > 0) {
      summary.status = 'incomplete';
      const alerts = summary.notificationsFailed - summary.digestsFailed;
      summary.reason = [
        alerts > 0 ? `${alerts} notification(s) could not be published; the watermark stayed before them` : '',
        summary.digestsFailed > 0 ? `${summary.digestsFailed} digest(s) could not be published; they stay held` : '',
      ]
        .filter((part) => part !== '')
        .join('; ');
    } else if (!complete) {
      summary.status = 'checkpointed';
      summary.reason = this.#stoppedBecause ?? 'time budget reached; the next run continues from the checkpoint';
    }
    summary.watermarkAfter = this.#watermark?.at;
  }

  /**
   * Reads, matches and delivers every provider day of the window; true when every day was
   * completed (false: the time budget ran out first). How much of each day is read is planned
   * by functions/core/reading.ts.
   */
  async #deliverNew(ruleSet: RuleSet, audiences: ReadonlyMap<string, RuleSet['audiences'][number]>): Promise<boolean> {
    const { deps, settings, summary } = this;
    // Compiled once the first provider request is sent (see the day loop below): nothing needs the
    // matcher before that request's page is back.
    const matcher = new MatcherOnDemand(ruleSet.rules);

    if (deps.sharded !== undefined) {
      if (!(await this.#settleEarlierDispatch())) return false;
      this.#readingBefore = await deps.state.readReadingState();
    }
    const watermarkAt = this.#watermark?.at ?? summary.startedAt - settings.initialLookbackMs;
    summary.watermarkBefore = this.#watermark?.at;
    const plan = planRead({
      reading: this.#readingBefore,
      watermark: this.#watermark,
      watermarkAt,
      now: summary.startedAt,
      settings,
      countable: deps.news.page !== undefined,
      updatesWanted: ruleSet.audiences.some((audience) => audience.updates === 'notify'),
    });
    this.#plan = plan;
    const today = providerDate(summary.startedAt, settings.providerTimeZone);
    if (plan.counted && deps.news.page !== undefined) {
      this.#counted = new CountedRun({
        source: deps.news as typeof deps.news & Required<Pick<typeof deps.news, 'page'>>,
        previous: this.#readingBefore?.counted,
        settings: { lateArrivalMs: settings.lateArrivalMs, recheckMs: settings.lateRecheckMs ?? 0 },
        log: deps.log,
        now: this.now,
        startedAt: summary.startedAt,
        today,
        dayEnd: (day) => endOfDate(day, settings.providerTimeZone),
      });
    }
    summary.reading = {
      mode: plan.mode,
      ...(plan.mode === 'sweep' ? { reason: plan.reason } : {}),
      orderBefore: plan.order,
      orderAfter: plan.order,
      daysStoppedEarly: 0,
      daysResumed: 0,
      daysReadFully: 0,
    };
    if (plan.mode === 'sweep') {
      deps.log.info('full sweep: reading every page of the window', {
        reason: plan.reason,
        from: new Date(plan.from).toISOString(),
      });
    }
    // Articles before the cutoff were handled by earlier runs; re-reading them would alert a rule
    // added since then about old news. An incremental run does not even read the days before its
    // stop point: they only hold articles older than it, which earlier runs read.
    const cutoff = plan.from;
    // A sweep reaches further back than the late-arrival window; what it finds there is old news
    // for a rule saved since (see #match).
    this.#sweepOnlyBefore = watermarkAt - settings.lateArrivalMs;
    this.#ruleSavedAt = savedTimes(ruleSet.rules);
    const planned = datesBetween(
      providerDate(plan.mode === 'incremental' ? plan.stopBefore : cutoff, settings.providerTimeZone),
      today,
    );
    // Earlier days still watched for late arrivals are read too (a counted read of such a day is
    // usually its first page).
    const days = [...new Set([...(this.#counted?.watchedDays() ?? []), ...planned])].sort();
    summary.window = { from: days[0] ?? '', to: days.at(-1) ?? '' };
    if (deps.sharded !== undefined) {
      // A retried invocation keeps its request id: the start time keeps its dispatch apart.
      const dispatchId = `${summary.runId}@${summary.startedAt.toString(36)}`;
      this.#dispatcher = new RunDispatcher(deps.sharded, this.lease, dispatchId, this.now);
    }
    const pipeline = new DeliveryPipeline({
      state: deps.state,
      notifier: deps.notifier,
      log: deps.log,
      stories: deps.stories,
      now: this.now,
      audiences,
      ledgerFlushDelayMs: settings.ledgerFlushDelayMs,
      publishSignal: this.deadlines.publish.signal,
      lateBefore: watermarkAt,
      counts: summary,
      applyDeliveryPreferences: true,
      render: this.render,
      queue:
        this.#dispatcher === undefined
          ? undefined
          : { queue: this.#dispatcher, dispatchId: this.#dispatcher.dispatchId },
    });
    this.#budgetGivenBack = () => pipeline.budgetGivenBack;
    this.#spikes = spikeStepFor({
      ...deps,
      store: deps.spikes,
      now: this.now,
      rules: ruleSet.rules,
      audiences,
      render: this.render,
    });

    let watermarkMayAdvance = true;
    // Compiling the rules (about half a second at 20,000 rules here) waits until the first provider
    // request is sent, so it overlaps the provider's answer instead of delaying the request. A
    // source that cannot tell leaves it to the first match.
    const overlap = new AbortController();
    deps.news.requestSent?.(overlap.signal).then(
      () => matcher.prepare(),
      () => undefined,
    );
    try {
      for (const day of days) {
        if (this.deadlines.softReached) break;
        const fetchStartedAt = this.now();
        const complete = await this.#processDay(day, { cutoff, newSince: watermarkAt, matcher, pipeline });
        if (!complete) {
          watermarkMayAdvance = false;
          if (this.deadlines.softReached) break;
          continue;
        }
        summary.daysCompleted += 1;
        // Rules that cannot be compiled fail the run before the watermark moves past news they never
        // saw, even when no article of the day reached the matcher.
        matcher.compile();
        // Spike counts are stored before the watermark moves past the day (a crash re-reads it).
        await this.#spikes?.flush();
        if (watermarkMayAdvance) {
          const dayEnd = endOfDate(day, settings.providerTimeZone);
          await this.#advanceWatermark(Math.min(dayEnd, fetchStartedAt));
        }
      }
      if (this.#spikes !== undefined && !this.deadlines.softReached) {
        await this.#spikes.deliver(pipeline);
        summary.spikes = this.#spikes.stats;
      }
    } catch (error) {
      // Sealed with what was queued and completed so far, the next run can settle the dispatch
      // as soon as its items are done instead of waiting to give it up.
      await this.#sealDispatch().catch((sealError: unknown) =>
        deps.log.warn('could not seal the dispatch of a failed run; the next run gives it up once it is old', {
          error: describe(sealError),
        }),
      );
      throw error;
    } finally {
      overlap.abort();
    }
    // Sealed now, waited for once the due digests went out (run()): slow publishers must not
    // keep held digests waiting.
    await this.#sealDispatch();

    this.#sweptAll = plan.mode === 'sweep' && summary.daysCompleted >= days.length;
    if (this.#counted !== undefined) {
      const counted = this.#counted.state();
      summary.reading.counted = {
        ...this.#counted.stats,
        ...(counted.off === undefined ? {} : { paused: counted.off.reason }),
      };
    }
    summary.reading.orderAfter = nextOrder(plan.order, this.#observations);
    if (summary.reading.orderAfter !== plan.order) {
      deps.log.info("the provider's order changed as far as this run could see", {
        before: plan.order,
        after: summary.reading.orderAfter,
      });
    }
    summary.watermarkAfter = this.#watermark?.at;
    return summary.daysCompleted >= days.length;
  }

  /**
   * Sharded publishing, before reading: an earlier run's open dispatch is settled first (its
   * watermark moved once complete, or given up once too old). False when it is still in flight:
   * this run then queues nothing, so nothing an earlier item may still be publishing goes twice.
   */
  async #settleEarlierDispatch(): Promise<boolean> {
    const { deps, settings, summary } = this;
    const dispatches = deps.sharded?.dispatches;
    if (dispatches === undefined) return true;
    const settlement = await settleOpenDispatch(dispatches, {
      signal: this.deadlines.fetch.signal,
      abandonAfterMs: settings.dispatchAbandonAfterMs ?? defaultDispatchAbandonAfterMs,
      // The lease outlasts any run: a run that died before sealing queued nothing after that.
      runLimitMs: settings.leaseDurationMs,
      now: this.now,
    });
    if (settlement.kind === 'none') return true;
    const { head } = settlement;
    if (settlement.kind === 'waiting') {
      summary.settled = runDispatchOf(head, 'in-flight');
      const left = (head.expected ?? head.enqueued) - head.done;
      this.#stoppedBecause = `waiting for ${left} work item(s) of dispatch ${head.dispatchId}; the next run moves the watermark once the publishers are done`;
      deps.log.info("an earlier run's work items are still with the publishers; this run queues nothing new", {
        dispatchId: head.dispatchId,
        left,
      });
      return false;
    }
    if (settlement.kind === 'abandoned') {
      logAbandoned(deps.log, head);
      // From here on no item of it is claimed. One a publisher claimed before may still be
      // publishing: its notifications are read again only once that claim ended, or both copies
      // could publish at once (each finding the ledger without the other).
      await dispatches.stopClaims(this.lease, head.dispatchId, this.now());
      const now = this.now();
      // Claims ended by this run's clock up to a margin ago count too: the publisher that wrote
      // the claim's end may have a clock that runs behind this one.
      const liveUntil = await dispatches.liveClaimsUntil(head.dispatchId, now - claimClockSkewMs, now + maxClaimMs);
      if (liveUntil !== undefined) {
        summary.settled = runDispatchOf(head, 'in-flight');
        this.#stoppedBecause = `gave up dispatch ${head.dispatchId}; a publisher may still be publishing one of its items (its claim ends ${new Date(liveUntil).toISOString()}), so its days are read again by the next run`;
        deps.log.info('a publisher still holds an item of the dispatch given up; this run queues nothing new', {
          dispatchId: head.dispatchId,
          liveUntil,
        });
        return false;
      }
    } else if (head.advanceTo !== undefined) {
      await this.#moveWatermark(head.advanceTo);
    }
    await dispatches.close(this.lease, head.dispatchId, settlement.kind, this.now());
    summary.settled = runDispatchOf(head, settlement.kind);
    return true;
  }

  /** Seals this run's dispatch (if it queued anything): its items and where the watermark may go. */
  async #sealDispatch(): Promise<void> {
    const dispatcher = this.#dispatcher;
    if (dispatcher === undefined || !dispatcher.opened) return;
    await dispatcher.seal(this.summary.workItemsQueued, this.#advanceTo);
  }

  /**
   * Sharded publishing, after the due digests went out: waits for the publishers of the sealed
   * dispatch until the hard deadline. Complete: the watermark moves and the run keeps the dispatch's counts. False
   * when items are still in flight (the next run settles them).
   */
  async #finishDispatch(): Promise<boolean> {
    const { summary } = this;
    const dispatcher = this.#dispatcher;
    if (dispatcher === undefined || !dispatcher.opened) return true;
    const head = await dispatcher.wait(this.deadlines.publish.signal);
    if (head === undefined || !dispatchComplete(head)) {
      const left = head === undefined ? summary.workItemsQueued : (head.expected ?? head.enqueued) - head.done;
      summary.dispatch = head === undefined ? undefined : runDispatchOf(head, 'in-flight');
      this.#stoppedBecause = `${left} work item(s) still with the publishers; the next run moves the watermark once they are done`;
      return false;
    }
    if (this.#advanceTo !== undefined) await this.#moveWatermark(this.#advanceTo);
    await dispatcher.close('completed');
    // The publishers' counts stay in `dispatch`: the run's own counts (and metrics) are what the
    // run did itself, so nothing is counted twice (the publisher reports its own metrics).
    summary.dispatch = runDispatchOf(head, 'completed');
    return true;
  }

  /**
   * The reading state to leave for the next run (its `runStatus` is set when the run ends), or
   * undefined when the run never got to plan its reading.
   */
  readingState(): ReadingState | undefined {
    const plan = this.#plan;
    if (plan === undefined) return undefined;
    const previous = this.#readingBefore;
    const order = nextOrder(plan.order, this.#observations);
    const yesterday = previousDate(providerDate(this.summary.startedAt, this.settings.providerTimeZone));
    // Only the last two provider days can be resumed; older positions are never used again.
    const resume = new Map((previous?.resume ?? []).map((entry) => [entry.day, entry]));
    for (const [day, entry] of this.#resume) resume.set(day, entry);
    const lastSweepAt = this.#sweptAll ? this.summary.startedAt : previous?.lastSweepAt;
    // Counted reading's state: this run's, or, when it did not count, what the last one left
    // (a run that reads without counting keeps neither the counts nor a pause that ended). A pause
    // that has not ended is kept, without the counts: dropped, the next run would see no counts
    // and start counting again at once with a full read, every other run.
    const off = previous?.counted?.off;
    const counted =
      this.#counted?.state() ??
      (plan.counted
        ? previous?.counted
        : off !== undefined && this.summary.startedAt - off.since < countingPauseMs
          ? { days: [], off }
          : undefined);
    return {
      ...(counted === undefined ? {} : { counted }),
      order,
      ...(lastSweepAt === undefined ? {} : { lastSweepAt }),
      runId: this.summary.runId,
      runStatus: this.summary.status,
      ...(this.#watermark === undefined ? {} : { watermarkVersion: this.#watermark.version }),
      resume: [...resume.values()].filter((entry) => entry.day >= yesterday).sort(byDay),
      updatedAt: this.now(),
    };
  }

  /** How to read `day` under this run's plan. */
  #howToRead(day: string): DayRead {
    const plan = this.#plan;
    if (plan === undefined) return { kind: 'full' };
    const counted = this.#counted;
    if (counted !== undefined) {
      const today = providerDate(this.summary.startedAt, this.settings.providerTimeZone);
      if (plan.mode === 'incremental') {
        const how = counted.howToRead(day);
        // Without counts for the day (a new provider day): read it whole, in order, and count it.
        return how.kind === 'establish'
          ? { kind: 'full', sequential: true }
          : { kind: 'newest-first', stopBefore: plan.stopBefore, pastAnchorAt: how.newestAnchorAt };
      }
      // A counting sweep reads in order, so what it reads can be counted.
      return plan.order === 'newest-first' && day < today
        ? { kind: 'newest-first', stopBefore: plan.from }
        : { kind: 'full', sequential: true };
    }
    if (plan.mode === 'sweep') {
      // A sweep reads every page of today. An earlier day of its window only matters back to the
      // sweep's own start (older articles are handled, and the sweeps of that day read them), so
      // a verified newest-first read of it stops there: the first run after midnight reads the
      // evening it missed, not the whole day again.
      const today = providerDate(this.summary.startedAt, this.settings.providerTimeZone);
      return plan.order === 'newest-first' && day < today
        ? { kind: 'newest-first', stopBefore: plan.from }
        : { kind: 'full' };
    }
    if (plan.order === 'newest-first') return { kind: 'newest-first', stopBefore: plan.stopBefore };
    const resume = this.#readingBefore?.resume.find((entry) => entry.day === day);
    return resume === undefined ? { kind: 'full' } : { kind: 'resume', resume };
  }

  /** Reads, matches and delivers one provider day; true when nothing of it is left undone. */
  async #processDay(day: string, context: DayContext): Promise<boolean> {
    const reading = this.summary.reading;
    context.pipeline.resetUnpublished();
    const how = this.#howToRead(day);
    // Articles handled by a read that is then restarted from page 1, or read again by a counted
    // recheck: not matched twice in one run.
    const handled = how.kind === 'resume' || this.#counted !== undefined ? new Set<string>() : undefined;
    const tally =
      this.#counted === undefined
        ? undefined
        : new DayTally(
            day,
            how.kind !== 'full' || how.sequential === true,
            Math.max(1, Math.floor((this.deps.news.pageSize ?? defaultPageSize) / 4)),
          );
    let outcome = await this.#readDay(day, how, context, handled, tally);
    if (outcome.restart !== undefined) {
      this.deps.log.info('resuming where the last run ended did not hold; reading the day from page 1', {
        day,
        reason: outcome.restart,
      });
      if (reading) {
        reading.daysReadFully += 1;
        reading.fullReadReason ??= `${day}: ${outcome.restart}`;
      }
      outcome = await this.#readDay(day, { kind: 'full' }, context, handled);
    } else if (reading) {
      if (outcome.stoppedEarly) reading.daysStoppedEarly += 1;
      if (how.kind === 'resume') reading.daysResumed += 1;
      if (how.kind === 'newest-first' && outcome.broke) {
        reading.daysReadFully += 1;
        reading.fullReadReason ??= `${day}: an article out of newest-first order`;
      }
    }
    if (tally !== undefined && outcome.fullyRead) {
      const counted = await this.#finishCounted(day, tally, outcome, context, handled);
      if (counted === 'unfinished') outcome = { ...outcome, fullyRead: false };
      else if (counted !== undefined) {
        // The counts cannot be followed on this day: read it whole, as a sweep would.
        if (reading) {
          reading.daysReadFully += 1;
          reading.fullReadReason ??= `${day}: ${counted}`;
        }
        outcome = await this.#readDay(day, { kind: 'full' }, context, handled);
      }
    }
    await context.pipeline.flush();
    return outcome.fullyRead && context.pipeline.unpublished === 0;
  }

  /**
   * Counted reading after a completed read of `day`: folds what the read saw into the day's counts
   * and rechecks for late arrivals when due, delivering what the recheck reads. Returns why the
   * counts disagree with the provider (the caller reads the day whole), 'unfinished' when the time
   * budget cut the recheck, or undefined.
   */
  async #finishCounted(
    day: string,
    tally: DayTally,
    outcome: DayOutcome,
    context: DayContext,
    handled: Set<string> | undefined,
  ): Promise<string | 'unfinished' | undefined> {
    const counted = this.#counted as CountedRun;
    const { deps, summary } = this;
    const signal = this.deadlines.fetch.signal;
    if (outcome.broke || !outcome.newestFirst) {
      tally.uncountable ??= `${day} was not listed newest first, so late arrivals cannot be counted`;
    }
    const pagesBefore = counted.stats.recheckPages;
    try {
      const finished = await counted.finishDay(tally, {
        signal,
        reachedEnd: !outcome.stoppedEarly,
        deliver: async (articles) => {
          summary.articlesFetched += articles.length;
          await context.pipeline.add(this.#match(articles, { ...context, handled }));
        },
      });
      return finished.disagreed;
    } catch (error) {
      if (!(signal.aborted && isAbort(error, signal))) {
        await context.pipeline.flush().catch((deliveryError: unknown) =>
          deps.log.error('could not deliver matched alerts after a provider failure', {
            error: describe(deliveryError),
          }),
        );
        throw error;
      }
      deps.log.warn('time budget reached while rechecking for late articles; checkpointing', { day });
      return 'unfinished';
    } finally {
      summary.pages += counted.stats.recheckPages - pagesBefore;
    }
  }

  /**
   * One read of `day` as `how` says. Returns `restart` (before matching anything of the page that
   * showed it) when a resumed read cannot prove its boundary or breaks the order.
   */
  async #readDay(
    day: string,
    how: DayRead,
    context: DayContext,
    handled: Set<string> | undefined,
    tally?: DayTally,
  ): Promise<DayOutcome> {
    const { deps, summary } = this;
    const { cutoff, newSince, matcher, pipeline } = context;
    const check = new OrderCheck();
    const expected = how.kind === 'full' ? undefined : how.kind === 'resume' ? 'oldest-first' : 'newest-first';
    const signal = this.deadlines.fetch.signal;
    const options =
      how.kind === 'newest-first' || (how.kind === 'full' && how.sequential === true)
        ? { signal, sequential: true }
        : how.kind === 'resume'
          ? { signal, resumeFrom: how.resume.position }
          : { signal };
    let broke = false;
    let stoppedEarly = false;
    let firstPage = true;
    let last: { position: PagePosition; keys: string[] } | undefined;
    let fullyRead = false;
    try {
      for await (const page of deps.news.pages({ from: day, to: day }, options)) {
        summary.pages += 1;
        summary.articlesFetched += page.articles.length;
        summary.articlesSkippedMalformed += page.skipped.length;
        if (how.kind === 'resume' && firstPage) {
          firstPage = false;
          const known = new Set(how.resume.keys);
          if (!page.articles.some((article) => known.has(article.key))) {
            return restart('its first page repeats none of the articles the last run read there');
          }
        }
        tally?.observe(page);
        if (page.unreadable !== undefined) {
          this.#park(day, page.pageNumber, page.skipped.length, page.unreadable);
          continue;
        }
        for (const item of page.skipped) {
          deps.log.warn('skipped an article the response mapping could not read', {
            day,
            page: page.pageNumber,
            index: item.index,
            reason: item.reason,
          });
        }
        for (const article of page.articles) check.add(article.publishedAt);
        if (expected !== undefined && !broke && !check.holds(expected)) {
          broke = true;
          if (how.kind === 'resume') return restart('an article out of oldest-first order');
          deps.log.warn('an article broke the newest-first order; reading the whole day', {
            day,
            page: page.pageNumber,
          });
        }
        await pipeline.add(this.#match(page.articles, { cutoff, newSince, matcher, handled }));
        if (page.articles.length > 0) last = resumePoint(page);
        const oldest = page.articles.at(-1);
        if (
          how.kind === 'newest-first' &&
          !broke &&
          oldest !== undefined &&
          oldest.publishedAt < how.stopBefore &&
          // Counted: past the newest remembered article too, so the read tells its count.
          (how.pastAnchorAt === undefined || oldest.publishedAt < how.pastAnchorAt)
        ) {
          // Verified newest-first up to here: every later page only holds older articles.
          stoppedEarly = true;
          break;
        }
      }
      fullyRead = true;
    } catch (error) {
      if (how.kind === 'resume' && firstPage && isRefusedPosition(error)) {
        return restart(`the provider refused the stored position (${describe(error)})`);
      }
      if (!(signal.aborted && isAbort(error, signal))) {
        // Deliver what was already matched before failing: those alerts are valid.
        await pipeline.flush().catch((deliveryError: unknown) =>
          deps.log.error('could not deliver matched alerts after a provider failure', {
            error: describe(deliveryError),
          }),
        );
        throw error;
      }
      deps.log.warn('time budget reached while reading the provider; checkpointing', { day });
    }
    const full = fullyRead && !stoppedEarly && how.kind !== 'resume';
    if (fullyRead) {
      this.#observations.push({ full, learned: full ? check.learned() : undefined, broke });
      // A position to start from next time; page 1 is where a read starts anyway.
      if (last?.keys.length && !('page' in last.position && last.position.page === 1) && !stoppedEarly) {
        this.#resume.set(day, { day, position: last.position, keys: last.keys });
      }
    }
    return { fullyRead, stoppedEarly, broke, newestFirst: check.holds('newest-first') };
  }

  /** The matches of a page's articles that this run has to handle. */
  #match(
    articles: readonly Article[],
    context: Pick<DayContext, 'cutoff' | 'newSince' | 'matcher'> & { handled: Set<string> | undefined },
  ): ReturnType<RuleMatcher['match']> {
    const { summary } = this;
    const { cutoff, newSince, matcher, handled } = context;
    const matches = [];
    for (const article of articles) {
      // Matching is bounded per article, but a page of long ones is still a lot of CPU between two
      // awaits; the run checks its time between articles, not only between pages.
      this.deadlines.throwIfSoftReached();
      if (article.publishedAt < cutoff) continue;
      if (handled !== undefined) {
        if (handled.has(article.key)) continue;
        handled.add(article.key);
      }
      if (article.publishedAt >= newSince) summary.articlesNew += 1;
      let articleMatches = matcher.match(article);
      if (article.publishedAt < this.#sweepOnlyBefore) {
        // Only a sweep reads this far back: a late article. A rule saved more than the late-arrival
        // window after it was published would not have heard of it on time either, so it is old
        // news for that rule (reading every page on every run never reached it).
        articleMatches = withoutLaterRules(
          articleMatches,
          article.publishedAt + this.settings.lateArrivalMs,
          this.#ruleSavedAt,
        );
      }
      if (articleMatches.length === 0) continue;
      summary.articlesMatched += 1;
      matches.push(...articleMatches);
    }
    this.#spikes?.observe(matches);
    return matches;
  }

  /**
   * Parks a poison page: it cannot stop the day (and so all alerting) from completing, and it is
   * never dropped silently: logged as an error, listed in the run record, counted for the alarm.
   */
  #park(day: string, page: number, items: number, reason: string): void {
    const { summary } = this;
    summary.pagesParked += 1;
    if (summary.parkedPages.length < maxParkedPagesListed) summary.parkedPages.push({ day, page, items, reason });
    this.deps.log.error('parked a provider page on which no item could be read; the run goes on without it', {
      day,
      page,
      items,
      reason,
      replay: `fix the provider data or the response mapping, then re-read ${day}: news-alerts watermark set ${day} (the delivery ledger prevents duplicates)`,
    });
  }

  /**
   * Moves the watermark to `at` once a day is done; with a dispatch open (sharded publishing),
   * only remembers it: the dispatch's items must be published first.
   */
  async #advanceWatermark(at: number): Promise<void> {
    if (this.#dispatcher?.opened) {
      this.#advanceTo = Math.max(this.#advanceTo ?? at, at);
      return;
    }
    await this.#moveWatermark(at);
  }

  async #moveWatermark(at: number): Promise<void> {
    if (this.#watermark && at <= this.#watermark.at) return;
    this.#watermark = await this.deps.state.advanceWatermark(this.lease, this.#watermark, at, this.now());
  }
}

/** How one day is read: every page, newest-first with an early stop, or resumed (oldest-first). */
type DayRead =
  /** Every page; `sequential`: one after another in order (counted reading counts what it reads). */
  | { readonly kind: 'full'; readonly sequential?: boolean }
  /**
   * Page by page until a verified page ends before `stopBefore` and, with counts
   * (`pastAnchorAt`), also before the newest remembered article of the day.
   */
  | { readonly kind: 'newest-first'; readonly stopBefore: number; readonly pastAnchorAt?: number }
  | { readonly kind: 'resume'; readonly resume: DayResume };

interface DayContext {
  readonly cutoff: number;
  readonly newSince: number;
  readonly matcher: RuleMatcher;
  readonly pipeline: DeliveryPipeline;
}

interface DayOutcome {
  readonly fullyRead: boolean;
  readonly stoppedEarly: boolean;
  readonly broke: boolean;
  /** Every article read came in newest-first order (ties fit either order). */
  readonly newestFirst?: boolean;
  /** Why a resumed read has to start again from page 1. */
  readonly restart?: string;
}

const restart = (reason: string): DayOutcome => ({
  fullyRead: false,
  stoppedEarly: false,
  broke: false,
  restart: reason,
});

/** A provider refusing a stored page or cursor (expired, unknown): not an outage, read from page 1. */
function isRefusedPosition(error: unknown): boolean {
  return (
    error instanceof ProviderError &&
    !(error instanceof ProviderAuthError) &&
    !error.retryable &&
    error.status !== undefined &&
    error.status >= 400 &&
    error.status < 500
  );
}

/**
 * Where a read could resume after `page`, from what the provider sent: undefined when its cursor
 * is too long to store; keys too long to store are left out (the others still prove the page).
 */
function resumePoint(page: ArticlePage): { position: PagePosition; keys: string[] } | undefined {
  if (page.cursor !== undefined && page.cursor.length > maxResumeValueLength) return undefined;
  return {
    position: page.cursor === undefined ? { page: page.pageNumber } : { cursor: page.cursor },
    keys: page.articles
      .slice(-maxResumeKeys)
      .map((article) => article.key)
      .filter((key) => key.length <= maxResumeValueLength),
  };
}

const byDay = (a: DayResume, b: DayResume): number => (a.day < b.day ? -1 : a.day > b.day ? 1 : 0);

function isAbort(error: unknown, signal: AbortSignal): boolean {
  // A provider error is never the deadline itself, even when the deadline ended it (stalled).
  if (error instanceof ProviderError) return false;
  if (error === signal.reason) return true;
  if (error instanceof Error && (error.name === 'AbortError' || error.cause === signal.reason)) return true;
  return false;
}

/**
 * The run's rules, compiled when first needed: by {@link MatcherOnDemand.prepare} once the first
 * provider request is sent, or else by the first match. A compile that fails in `prepare` is not
 * kept: the first match (or {@link MatcherOnDemand.compile} before the watermark moves) compiles
 * again and throws where the run can handle it.
 */
class MatcherOnDemand implements RuleMatcher {
  readonly #rules: readonly Rule[];
  #compiled: RuleMatcher | undefined;

  constructor(rules: readonly Rule[]) {
    this.#rules = rules;
  }

  get ruleCount(): number {
    return this.#matcher().ruleCount;
  }

  match(article: Article): AudienceMatch[] {
    return this.#matcher().match(article);
  }

  /** Compiles now if not yet; never throws (see the class). */
  prepare(): void {
    try {
      this.#matcher();
    } catch {
      // Thrown again by the first match, in the run's own error handling.
    }
  }

  /** Compiles now if not yet. @throws what compiling throws */
  compile(): void {
    this.#matcher();
  }

  #matcher(): RuleMatcher {
    this.#compiled ??= compileRules(this.#rules);
    return this.#compiled;
  }
}
