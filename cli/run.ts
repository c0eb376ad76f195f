/**
 * `news-alerts run` (an alert cycle now) and `news-alerts runs list` (the run history).
 *
 * Against the stack, `run` invokes the alert function synchronously, exactly as the schedule
 * would, and prints the summary it returns. With `--local` it runs the cycle in this process,
 * wired by the same composition root as the Lambda handler and the sandbox
 * (`createAlertRunDependencies`), with the sandbox's configuration.
 */
import { randomUUID } from 'node:crypto';
import type { Command } from 'commander';
import { createAlertRunDependencies } from '#alert-run/wiring';
import type { DynamoStateStore } from '#aws/dynamo-state-store';
import { type AlertRunDependencies, type RunSummary, runAlertCycle } from '#core/alert-run';
import { NewsAlertsError } from '#core/errors';
import type { ArticlePage, Lease, NewsSource, Notifier, RunRecord, StateStore } from '#core/ports';
import { auditQueueWarning, ensureAuditQueues } from './audit-queues.ts';
import { action, integerOption } from './command.ts';
import type { CommandContext } from './context.ts';
import {
  CliError,
  type ExitCodeValue,
  failureDocument,
  failureOf,
  OperationFailedError,
  UsageError,
} from './errors.ts';
import { newsAlerts } from './hints.ts';
import { describeLease, RenewedLease } from './lease.ts';
import { stderrLog } from './log.ts';
import { formatDuration, formatInstant } from './output.ts';
import type { LocalTarget, Target } from './target.ts';
import { runRow, runTableHead, runTableRow, stateStoreOf, watermarkAheadWarning } from './watermark.ts';
import { parseInstant } from './window.ts';

/** Local runs have no Lambda time limit; the sandbox gives them the same budget as `npm start`. */
const localRunBudgetMs = 15 * 60_000;

/** Signal numbers for the shell's exit-code convention (128 + n). */
const signalNumbers = { SIGINT: 2, SIGTERM: 15 } as const;
type StopSignal = keyof typeof signalNumbers;

/**
 * The run was stopped by Ctrl-C or SIGTERM. Exit code 128 + the signal's number (130, 143), as a
 * shell reports a process the signal ended: scripts see an interruption, not a failed run.
 */
export class RunInterruptedError extends CliError {
  readonly signal: StopSignal;
  constructor(signal: StopSignal, detail: string, options?: ErrorOptions) {
    super(
      `interrupted (${signal}): ${detail}`,
      // Outside the four documented codes on purpose: it is the signal convention every shell uses.
      (128 + signalNumbers[signal]) as ExitCodeValue,
      options,
    );
    this.name = 'RunInterruptedError';
    this.signal = signal;
  }
}

/** What aborts a run's reads and publishes when the operator stops it. */
class StopRequestedError extends NewsAlertsError {
  constructor(signal: StopSignal) {
    super(`stopped by ${signal}`);
    this.name = 'StopRequestedError';
  }
}

/**
 * SIGINT/SIGTERM while a local run works: the first one stops the run at its next checkpoint
 * (reads and publishes are aborted; what SNS accepted is recorded; the watermark stays where the
 * finished days put it; the lease is released and the run recorded), a second one exits at once.
 */
class StopSignals {
  readonly #controller = new AbortController();
  readonly #onSignal = (signal: StopSignal) => this.#stop(signal);
  readonly #note: (text: string) => void;
  #received: StopSignal | undefined;
  /** What a second signal says before exiting (the lease it leaves behind). */
  lease: (() => string) | undefined;

  constructor(note: (text: string) => void) {
    this.#note = note;
    for (const signal of Object.keys(signalNumbers) as StopSignal[]) process.on(signal, this.#onSignal);
  }

  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  get received(): StopSignal | undefined {
    return this.#received;
  }

  #stop(signal: StopSignal): void {
    if (this.#received !== undefined) {
      this.#note(
        `${signal} again: exiting now. ${this.lease?.() ?? ''}Clear a stuck lease with '${newsAlerts()} lease release'.`,
      );
      process.exit(128 + signalNumbers[signal]);
    }
    this.#received = signal;
    this.#note(
      `${signal}: stopping at the next checkpoint and releasing the run lease (${signal === 'SIGINT' ? 'Ctrl-C' : signal} again exits at once)`,
    );
    this.#controller.abort(new StopRequestedError(signal));
  }

  dispose(): void {
    for (const signal of Object.keys(signalNumbers) as StopSignal[]) process.off(signal, this.#onSignal);
  }
}

/**
 * The news source, stopped between pages (and mid-request) once a stop is requested. Everything
 * else the source offers is passed on as it is: without `page` and `pageSize` the run cannot count
 * (it reads late articles by full sweeps only, hours apart), so `run` would not be wired like the
 * Lambda function.
 */
function stoppableNews(news: NewsSource, stop: AbortSignal): NewsSource {
  const stopping = (signal: AbortSignal | undefined) => (signal ? AbortSignal.any([signal, stop]) : stop);
  const { page } = news;
  return {
    async *pages(range, options = {}): AsyncIterable<ArticlePage> {
      stop.throwIfAborted();
      for await (const found of news.pages(range, { ...options, signal: stopping(options.signal) })) {
        // A page read before the stop is still delivered; nothing after it is read.
        yield found;
        stop.throwIfAborted();
      }
    },
    ...(page === undefined
      ? {}
      : {
          page: (range, request) => {
            stop.throwIfAborted();
            return page.call(news, range, { ...request, signal: stopping(request.signal) });
          },
        }),
    pageSize: news.pageSize,
    ...(news.prepare === undefined ? {} : { prepare: () => news.prepare?.() }),
    ...(news.requestSent === undefined
      ? {}
      : { requestSent: (signal) => news.requestSent?.(signal) ?? Promise.resolve() }),
  };
}

/** The notifier, sending nothing new once a stop is requested (those alerts wait for the next run). */
function stoppableNotifier(notifier: Notifier, stop: AbortSignal): Notifier {
  return {
    publish: (messages, options) =>
      notifier.publish(messages, {
        ...options,
        signal: options.signal ? AbortSignal.any([options.signal, stop]) : stop,
      }),
  };
}

/**
 * The state store of a CLI run: the run's lease is a short one this process renews while it
 * works (RenewedLease) instead of the scheduled run's fixed, Lambda-sized one, and it carries
 * this host and process id, so `lease release` can tell when its holder is gone.
 */
function cliLeaseState(
  state: DynamoStateStore,
  options: {
    now: () => number;
    stop: AbortSignal;
    onLost: (error: unknown) => void;
    onTaken: (lease: Lease) => void;
    onRecorded: (record: RunRecord) => void;
  },
): StateStore {
  let held: RenewedLease | undefined;
  const overrides: Partial<StateStore> = {
    async recordRun(record) {
      // The summary the run keeps in its history, also when it then throws: `run` prints it.
      options.onRecorded(record);
      await state.recordRun(record);
    },
    async acquireLease(owner) {
      // Stopped before the run began: take nothing, so nothing is left behind.
      options.stop.throwIfAborted();
      held = await RenewedLease.take(state, owner, { now: options.now, onLost: options.onLost });
      options.onTaken(held.lease);
      return held.lease;
    },
    async releaseLease(lease) {
      if (held !== undefined && held.lease.owner === lease.owner) await held.release();
      else await state.releaseLease(lease);
    },
  };
  return new Proxy(state, {
    get(target, property, receiver) {
      if (property in overrides) return overrides[property as keyof StateStore];
      const value = Reflect.get(target, property, receiver);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

/**
 * The clock of a local run: the system clock, or with `--now` that instant, running on from it at
 * the system clock's pace (the run measures durations and deadlines with it too).
 */
export function runClock(at: number | undefined, system: () => number = Date.now): () => number {
  if (at === undefined) return system;
  const offset = at - system();
  return () => system() + offset;
}

/**
 * A local run that threw (provider refused the key, state table unreachable, lease lost): the
 * error, with the summary the run recorded in its history before it threw, when it got that far.
 */
class LocalRunFailedError extends Error {
  readonly summary: Record<string, unknown> | undefined;
  constructor(error: unknown, summary: Record<string, unknown> | undefined) {
    super(error instanceof Error ? error.message : String(error), { cause: error });
    this.name = 'LocalRunFailedError';
    this.summary = summary;
  }
}

async function runLocally(
  context: CommandContext,
  target: LocalTarget,
  stop: StopSignals,
  now: () => number,
): Promise<RunSummary> {
  const config = await target.alertRunConfig();
  const { documents, sns, secrets } = target.clients;
  // Every audience topic gets its audit queue before anything is published: `deliveries` shows
  // what a run sent also to audiences created with the CLI.
  await ensureAuditQueues(target, { onFailure: auditQueueWarning((text) => context.output.warn(text)) });
  // A sharded sandbox's runs queue work items (its own publisher sends them): only then is SQS loaded.
  const sqs =
    config.publishMode === 'sharded'
      ? new (await import('@aws-sdk/client-sqs')).SQSClient({ ...target.clients.config })
      : undefined;
  const wiring = createAlertRunDependencies(
    config,
    { documents, sns, secrets, ...(sqs ? { sqs } : {}) },
    stderrLog(context.output),
    { now },
  );
  const lost = new AbortController();
  const halt = AbortSignal.any([stop.signal, lost.signal]);
  const runId = `cli-${randomUUID()}`;
  let recorded: Record<string, unknown> | undefined;
  const dependencies: AlertRunDependencies = {
    ...wiring,
    news: stoppableNews(wiring.news, halt),
    notifier: stoppableNotifier(wiring.notifier, halt),
    state: cliLeaseState(wiring.state, {
      now,
      stop: stop.signal,
      // Someone cleared the lease or took it over: another runner may deliver now, so stop ours.
      onLost: (error) => {
        context.output.warn(`${error instanceof Error ? error.message : String(error)}; stopping the run`);
        lost.abort(error);
      },
      onTaken: (lease) => {
        // Nobody renews it once this process is gone: it expires within one lease length.
        stop.lease = () => `The run lease of ${lease.owner} stays until it expires (within a minute). `;
        context.output.note(`run ${lease.owner} holds the run lease (renewed while it works); Ctrl-C stops it cleanly`);
      },
      onRecorded: (record) => {
        if (record.runId === runId) recorded = { ...record.summary };
      },
    }),
  };
  const deadline = now() + localRunBudgetMs;
  try {
    return await runAlertCycle(dependencies, config.run, {
      runId,
      remainingTimeMs: () => deadline - now(),
    });
  } catch (error) {
    throw new LocalRunFailedError(error, recorded);
  } finally {
    await wiring.news.close();
    sqs?.destroy();
  }
}

const number = (value: unknown): number => (typeof value === 'number' ? value : 0);

/** How the run read the provider (functions/core/reading/), in one line. */
export function describeReading(value: unknown): string {
  if (typeof value !== 'object' || value === null) return '';
  const reading = value as Record<string, unknown>;
  const order = `order ${String(reading.orderBefore ?? 'unknown')}${reading.orderAfter !== reading.orderBefore ? ` → ${String(reading.orderAfter)}` : ''}`;
  const late = describeCounted(reading.counted);
  if (reading.mode === 'sweep') return `full sweep (${String(reading.reason ?? '')}); ${order}${late}`;
  const parts = [
    number(reading.daysStoppedEarly) > 0 ? `${number(reading.daysStoppedEarly)} day(s) stopped early` : '',
    number(reading.daysResumed) > 0 ? `${number(reading.daysResumed)} resumed` : '',
    number(reading.daysReadFully) > 0
      ? `${number(reading.daysReadFully)} read fully: ${String(reading.fullReadReason ?? '')}`
      : '',
  ].filter((part) => part !== '');
  return `incremental; ${order}${parts.length > 0 ? `; ${parts.join(', ')}` : ''}${late}`;
}

/** Counted reading's part of the reading line: rechecks for late articles, or why counting paused. */
function describeCounted(value: unknown): string {
  if (typeof value !== 'object' || value === null) return '';
  const counted = value as Record<string, unknown>;
  if (typeof counted.paused === 'string') return `; counting paused: ${counted.paused}`;
  if (number(counted.rechecks) === 0)
    return `; late articles: ${number(counted.days)} day(s) counted, nothing to recheck`;
  return `; late articles: rechecked ${number(counted.rechecks)} day(s) in ${number(counted.recheckPages)} page(s), ${number(counted.found)} found`;
}

/**
 * Poison pages the run parked (no item on them could be read): where they are, and what
 * docs/operate.md ("pages-parked") says to do: once the provider data or the response mapping is
 * fixed, re-read from the first such day (the ledger keeps what was sent from going out twice).
 */
function describeParkedPages(summary: Record<string, unknown>): string {
  const count = number(summary.pagesParked);
  const listed = (Array.isArray(summary.parkedPages) ? summary.parkedPages : []).filter(
    (page): page is { day: string; page: number } =>
      typeof page === 'object' && page !== null && typeof page.day === 'string' && typeof page.page === 'number',
  );
  const where = listed.map((page) => `${page.day} page ${page.page}`);
  if (count > listed.length) where.push(`${count - listed.length} more`);
  const first = listed.map((page) => page.day).sort()[0] ?? '<day>';
  return `${count} (${where.join(', ')}): not one item could be read there, so those articles were not delivered. Once the provider data or the response mapping is fixed, re-read from ${first}: '${newsAlerts()} watermark set ${first}' (the delivery ledger prevents duplicates; docs/operate.md, pages-parked)`;
}

function printSummary(context: CommandContext, summary: Record<string, unknown>): void {
  const audiences = (
    typeof summary.audiences === 'object' && summary.audiences !== null ? summary.audiences : {}
  ) as Record<string, Record<string, unknown>>;
  const window = summary.window as { from?: string; to?: string } | undefined;
  context.output.fields([
    ['run', String(summary.runId ?? '')],
    ['status', String(summary.status ?? '')],
    ['reason', typeof summary.reason === 'string' ? summary.reason : ''],
    ['window (provider days)', window ? `${window.from} .. ${window.to}` : ''],
    ['reading', describeReading(summary.reading)],
    ['provider pages', number(summary.pages)],
    ...(number(summary.pagesParked) > 0 ? [['provider pages parked', describeParkedPages(summary)] as const] : []),
    [
      'watermark',
      // A skipped run never read the watermark: "(none)" would claim there is none.
      summary.status === 'skipped'
        ? '(not read: the run was skipped)'
        : `${formatInstant(summary.watermarkBefore as number | undefined) || '(none)'} → ${formatInstant(summary.watermarkAfter as number | undefined) || '(unchanged)'}`,
    ],
    ['duration', formatDuration(number(summary.finishedAt) - number(summary.startedAt))],
    [
      // Matched counts every article read within the run's window (re-read ones too) that some rule
      // matches, once however many audiences; new counts only those published after the watermark.
      'articles fetched / new since the watermark / matched (new or re-read)',
      `${number(summary.articlesFetched)} / ${number(summary.articlesNew)} / ${number(summary.articlesMatched)}`,
    ],
    ['alerts sent', number(summary.notificationsPublished)],
    [
      'held (digest / quiet hours / budget)',
      `${number(summary.notificationsHeld)} (${number(summary.heldForDigest)} / ${number(summary.heldForQuietHours)} / ${number(summary.budgetOverflow)})`,
    ],
    ['digests sent (held alerts released)', `${number(summary.digestsSent)} (${number(summary.digestItemsReleased)})`],
    ['already delivered (skipped)', number(summary.notificationsAlreadyDelivered)],
    // One story, one alert: copies of a story the audience already has are recorded, not sent.
    ['copies collapsed into stories (not sent)', number(summary.notificationsCollapsed)],
    [
      'update notices sent / ignored / waiting',
      `${number(summary.updateNotices)} / ${number(summary.updatesIgnored)} / ${number(summary.updatesDeferred)}`,
    ],
    [
      'failed / parked / deferred',
      `${number(summary.notificationsFailed)} / ${number(summary.notificationsParked) + number(summary.digestsParked)} / ${number(summary.notificationsDeferred)}`,
    ],
    ['invalid rules / audiences', `${number(summary.invalidRules)} / ${number(summary.invalidAudiences)}`],
  ]);
  context.output.table(
    ['AUDIENCE', 'MATCHED', 'SENT', 'HELD', 'COLLAPSED', 'ALREADY DELIVERED', 'FAILED', 'PARKED'],
    Object.entries(audiences)
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([audienceId, tally]) => [
        audienceId,
        number(tally.matched),
        number(tally.published),
        number(tally.held),
        number(tally.collapsed),
        number(tally.alreadyDelivered),
        number(tally.failed),
        number(tally.parked),
      ]),
    'no alerts matched',
  );
}

interface RunOptions {
  now?: string;
}

/** The instant `--now` names (sandbox only), or undefined for the system clock. */
async function runInstant(context: CommandContext, text: string | undefined): Promise<number | undefined> {
  if (text === undefined) return undefined;
  const refuse = (label: string) =>
    new UsageError(
      `--now only works in the sandbox (--local): the deployed alert function runs on AWS's clock (${label})`,
    );
  // Refused before any AWS call when the command line already says "stack".
  if (context.options.local !== true && context.options.sandboxFile === undefined) {
    throw refuse(`stack ${context.options.stack}`);
  }
  const target = await context.target();
  if (target.kind !== 'local') throw refuse(target.label);
  const timeZone = (await target.alertRunConfig()).provider.timeZone;
  return parseInstant(text, '--now', 'start', timeZone, Date.now());
}

/**
 * Why a run was skipped, from the lease that is held now: who, until when, whether it looks
 * alive, and how to clear it when its holder is gone.
 */
async function skippedBecause(context: CommandContext, target: Target, reason: string): Promise<string> {
  let lease: Awaited<ReturnType<ReturnType<typeof stateStoreOf>['readLease']>>;
  try {
    lease = await stateStoreOf(context, target).readLease();
  } catch {
    lease = undefined;
  }
  const held = lease === undefined ? reason : `the run lease is ${describeLease(lease, Date.now())}`;
  return `the run was skipped (nothing was read or sent): ${held}. Wait for that run to finish, or if its holder is gone, clear it with '${newsAlerts()} lease release'`;
}

/**
 * The summary a failed invocation of the deployed function left in the run history (its `runId`
 * is the invocation's request id), or undefined when it left none (it failed before taking the
 * lease) or the history cannot be read: the failure is reported either way.
 */
async function recordedRun(
  context: CommandContext,
  target: Target,
  requestId: string | undefined,
): Promise<Record<string, unknown> | undefined> {
  if (requestId === undefined) return undefined;
  try {
    const runs = await stateStoreOf(context, target).recentRuns(recentRunsSearched);
    const run = runs.find((candidate) => candidate.runId === requestId);
    return run === undefined ? undefined : { ...run.summary };
  } catch {
    return undefined;
  }
}

/** How far back the history is searched for a failed invocation's run (newest first). */
const recentRunsSearched = 20;

/**
 * Prints the summary and fails with `error`. Under `--json` that is one document: the failure
 * (`ok: false` and the error, as the program's error handler prints it) with the run's summary,
 * after which the handler prints nothing more.
 */
function failAfter(context: CommandContext, label: string, summary: Record<string, unknown>, error: Error): never {
  context.output.result({ ...failureDocument(failureOf(error)), target: label, summary }, () =>
    printSummary(context, summary),
  );
  throw error;
}

async function runNow(context: CommandContext, _args: readonly unknown[], options: RunOptions): Promise<void> {
  const at = await runInstant(context, options.now);
  const target = await context.target();
  let summary: Record<string, unknown>;
  if (target.kind === 'local') {
    if (at !== undefined) {
      context.output.note(
        `the run's clock starts at ${formatInstant(at)} (--now); the watermark moves with it, '${newsAlerts()} watermark set' moves it back`,
      );
    }
    const stop = new StopSignals((text) => context.output.note(text));
    try {
      summary = { ...(await runLocally(context, target, stop, runClock(at))) };
    } catch (thrown) {
      const error = thrown instanceof LocalRunFailedError ? thrown.cause : thrown;
      const failure =
        stop.received === undefined
          ? error
          : new RunInterruptedError(
              stop.received,
              'the run stopped before it finished; the lease is released, and what was sent is in the ledger, so the next run continues from there',
              { cause: error },
            );
      const recorded = thrown instanceof LocalRunFailedError ? thrown.summary : undefined;
      if (recorded !== undefined && failure instanceof Error) failAfter(context, target.label, recorded, failure);
      throw failure;
    } finally {
      stop.dispose();
    }
    if (stop.received !== undefined) {
      failAfter(
        context,
        target.label,
        summary,
        new RunInterruptedError(stop.received, 'the run stopped at a checkpoint; the lease is released'),
      );
    }
  } else {
    context.output.note(
      `invoking ${target.names.alertFunctionName ?? 'the alert function'} (waits for the run to finish) ...`,
    );
    const outcome = await target.invokeAlertFunction();
    if (!outcome.ok) {
      const error = new OperationFailedError(
        `the alert run failed: ${outcome.errorType}: ${outcome.errorMessage} (see the function's log group)`,
      );
      const recorded = await recordedRun(context, target, outcome.requestId);
      if (recorded !== undefined) failAfter(context, target.label, recorded, error);
      throw error;
    }
    summary = (
      typeof outcome.payload === 'object' && outcome.payload !== null ? outcome.payload : { result: outcome.payload }
    ) as Record<string, unknown>;
  }
  const status = summary.status;
  if (status === 'skipped') {
    const reason = String(summary.reason ?? 'another run holds the lease');
    // A run skips only when another holds the lease (functions/core/alert-run.ts).
    failAfter(
      context,
      target.label,
      summary,
      new OperationFailedError(await skippedBecause(context, target, reason), { code: 'lease_held' }),
    );
  }
  if (status === 'incomplete' || status === 'failed') {
    failAfter(
      context,
      target.label,
      summary,
      new OperationFailedError(
        `the run ${String(summary.runId ?? '')} ended ${status}: ${String(summary.reason ?? '')}`,
      ),
    );
  }
  const refused = await audiencesRefused(context, target, summary);
  if (refused.length > 0) {
    const names = refused.map((entry) => entry.audienceId);
    failAfter(
      context,
      target.label,
      summary,
      new OperationFailedError(
        `SNS refused notifications for good for ${refused
          .map((entry) => `audience ${entry.audienceId} (${entry.parked} parked; ${entry.code}: ${entry.reason})`)
          .join(', ')}: repair with ${names
          .map((id) => `'${newsAlerts()} audiences repair ${id}'`)
          .join(', ')}, then send what was parked with '${newsAlerts()} replay --parked'`,
      ),
    );
  }
  context.output.result({ target: target.label, summary }, () => printSummary(context, summary));
  const watermarkAfter = summary.watermarkAfter;
  if (typeof watermarkAfter === 'number' && watermarkAfter > Date.now()) {
    context.output.warn(watermarkAheadWarning(watermarkAfter, Date.now()));
  }
}

/** Codes of notifications parked because they could not be rendered (nothing to repair in SNS). */
const renderCodes = new Set(['Unrenderable', 'UnpublishableLink']);

/**
 * The audiences SNS refused notifications for good during this run (parked at or after its start,
 * for a reason other than rendering): a deleted topic, a disabled key, a topic of another account.
 * Read only when the run parked something, from the parked items of the state table.
 */
async function audiencesRefused(
  context: CommandContext,
  target: Target,
  summary: Record<string, unknown>,
): Promise<{ audienceId: string; parked: number; code: string; reason: string }[]> {
  const parked = Number(summary.notificationsParked ?? 0) + Number(summary.digestsParked ?? 0);
  const startedAt = Number(summary.startedAt ?? Number.NaN);
  if (!(parked > 0) || !Number.isFinite(startedAt)) return [];
  const { listItems } = await import('./items.ts');
  const { audienceTableOf } = await import('./workbench/tables.ts');
  const state = stateStoreOf(context, target);
  const refused: { audienceId: string; parked: number; code: string; reason: string }[] = [];
  for (const item of await listItems(target.clients.documents, audienceTableOf(target))) {
    const audienceId = String(item.audienceId);
    const records = (await state.listUndeliverable(audienceId)).filter(
      (record) => record.failedAt >= startedAt && !renderCodes.has(record.code),
    );
    const first = records[0];
    if (first !== undefined)
      refused.push({ audienceId, parked: records.length, code: first.code, reason: first.reason });
  }
  return refused;
}

/** What the publishers did with one run's work items (sharded publishing), as a run summary records it. */
interface DispatchState {
  readonly dispatchId: string;
  /** `completed`: every item done; `in-flight`: not yet when the run ended; `abandoned`: given up. */
  readonly state: 'completed' | 'in-flight' | 'abandoned';
  readonly items: number;
  readonly done: number;
  readonly published: number;
  readonly updateNotices: number;
  readonly alreadyDelivered: number;
  readonly parked: number;
  /** The later run that settled it, when this run ended with it in flight. */
  readonly settledBy?: string | undefined;
}

const dispatchStates = new Set(['completed', 'in-flight', 'abandoned']);

/**
 * A run summary's `dispatch`/`settled` (functions/core/alert-run.ts `RunDispatch`), or undefined
 * when absent or not of that shape: the history outlives versions, and a damaged record must not
 * stop the listing.
 */
function dispatchOf(value: unknown): DispatchState | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const record = value as Record<string, unknown>;
  if (typeof record.dispatchId !== 'string' || !dispatchStates.has(String(record.state))) return undefined;
  return {
    dispatchId: record.dispatchId,
    state: record.state as DispatchState['state'],
    items: number(record.items),
    done: number(record.done),
    published: number(record.published),
    updateNotices: number(record.updateNotices),
    alreadyDelivered: number(record.alreadyDelivered),
    parked: number(record.parked),
  };
}

/**
 * A run of the history with what sharded publishing adds: the notifications it queued and what
 * the publishers made of them. A run that ended with its work items in flight is shown with the
 * outcome a later run in the list settled them with (matched by the dispatch's id).
 */
function runListRows(runs: readonly RunRecord[]) {
  const settled = new Map<string, { dispatch: DispatchState; by: string }>();
  for (const run of runs) {
    const dispatch = dispatchOf(run.summary.settled);
    if (dispatch !== undefined && dispatch.state !== 'in-flight') {
      settled.set(dispatch.dispatchId, { dispatch, by: run.runId });
    }
  }
  return runs.map((run) => {
    const own = dispatchOf(run.summary.dispatch);
    const later = own?.state === 'in-flight' ? settled.get(own.dispatchId) : undefined;
    const queued = run.summary.notificationsQueued;
    return {
      ...runRow(run),
      queued: typeof queued === 'number' ? queued : undefined,
      workItemsQueued: typeof run.summary.workItemsQueued === 'number' ? run.summary.workItemsQueued : undefined,
      dispatch: later !== undefined ? { ...later.dispatch, settledBy: later.by } : own,
    };
  });
}

type RunListRow = ReturnType<typeof runListRows>[number];

/** PUBLISHED of a sharded run: what its publishers sent, or why that is not known (yet). */
function publishedCell(row: RunListRow): string | number {
  const dispatch = row.dispatch;
  if (dispatch === undefined) return '-';
  if (dispatch.state === 'completed') return dispatch.published;
  if (dispatch.state === 'abandoned') return `abandoned (${dispatch.done}/${dispatch.items} items done)`;
  return `in flight (${dispatch.done}/${dispatch.items} items done)`;
}

async function listRuns(context: CommandContext, _args: readonly unknown[], options: { limit: number }): Promise<void> {
  const target = await context.target();
  const state = stateStoreOf(context, target);
  const [runs, lease] = await Promise.all([state.recentRuns(options.limit), state.readLease()]);
  const rows = runListRows(runs);
  const now = Date.now();
  // The JSON stays the list of runs (scripts read it); the lease is in `watermark show --json`.
  if (lease !== undefined) context.output.note(`run lease ${describeLease(lease, now)}`);
  // QUEUED and PUBLISHED only when a listed run queued work (publishMode: sharded): a single-mode
  // history reads as it always has.
  // (Every summary counts notificationsQueued, 0 in single mode: only work actually queued counts.)
  const queuedWork = (row: RunListRow) => row.dispatch !== undefined || (row.queued ?? 0) > 0;
  const sharded = rows.some(queuedWork);
  const sent = runTableHead.indexOf('SENT') + 1;
  const head = sharded
    ? [...runTableHead.slice(0, sent), 'QUEUED', 'PUBLISHED', ...runTableHead.slice(sent)]
    : runTableHead;
  const cells = (row: RunListRow) => {
    const base = runTableRow(row);
    return sharded
      ? [...base.slice(0, sent), queuedWork(row) ? (row.queued ?? 0) : '-', publishedCell(row), ...base.slice(sent)]
      : base;
  };
  context.output.result(rows, () => context.output.table(head, rows.map(cells), 'no runs recorded'));
}

/** Registers `run` and `runs`. */
export function registerRun(program: Command): void {
  program
    .command('run')
    .description(
      'run one alert cycle now and show its result (stack: invokes the alert function; --local: runs it here)',
    )
    .addHelpText(
      'after',
      `
The run takes the run lease like a scheduled one: if a run is in progress it is skipped (exit 1).
Its status is completed or checkpointed (exit 0), incomplete or failed (exit 1).
With --local the lease lasts a minute and is renewed while the run works. Ctrl-C (or SIGTERM)
stops the run at its next checkpoint and releases the lease (exit 130, or 143 for SIGTERM); a
second Ctrl-C exits at once and leaves the lease to expire ('news-alerts lease release' clears it).

HELD counts matches kept for a later digest (the audience's digest mode, quiet hours or daily
budget); each goes out in exactly one digest, which a later run sends when it is due.

--now <when> (sandbox only) runs the cycle with the clock at that instant, so digests and quiet
hours can be tried locally: an ISO date-time with a zone, a provider date, a span back (6h) or
"now". The watermark and ledger record that clock; 'watermark set' moves the watermark back.

Examples:
  news-alerts --local run
  news-alerts --local run --now 2026-11-24T08:00:00+09:00   # release the 08:00 digests`,
    )
    .option('--now <when>', 'sandbox only: run with the clock at this instant (ISO date-time, provider date, 6h)')
    .action(action(runNow));

  const runs = program.command('runs').description('the alert run history');
  runs
    .command('list')
    .description('recent runs and replays, newest first')
    .option('--limit <n>', 'how many', integerOption(1, 1000), 20)
    .addHelpText(
      'after',
      `
With publishMode sharded a run queues its alerts for the publisher function instead of sending
them: QUEUED is how many it queued, PUBLISHED how many the publishers sent once all its work items
were done ("in flight" while some are not; "abandoned" when a later run gave up waiting, so the
next runs read those days again and the ledger sends only what is missing). The two columns show
only when a listed run queued work.`,
    )
    .action(action(listRuns));
}
