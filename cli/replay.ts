/**
 * `news-alerts replay`: gap-safe backfill. It reads a past window from the provider, matches it
 * with the current rules and delivers through the alert run's own DeliveryPipeline, which skips
 * every notification the delivery ledger already holds and records each one right after SNS
 * accepts it. So after an outage, only what was never delivered goes out, and running it twice
 * sends nothing twice. The watermark is not touched.
 *
 * `replay --parked` re-sends notifications SNS refused for good (deleted topic, disabled key),
 * which the run parked, once the audience is fixed: to the audience's current topic, skipping any
 * the ledger shows were delivered since.
 *
 * Replays hold the run lease while they deliver, so a scheduled run and a replay never check
 * the ledger for the same notification at the same time.
 */
import { randomUUID } from 'node:crypto';
import type { Command } from 'commander';
import { DynamoRuleSource } from '#aws/dynamo-rule-source';
import { DynamoStateStore } from '#aws/dynamo-state-store';
import { SecretsManagerApiKey } from '#aws/secret-source';
import { SnsNotifier } from '#aws/sns-notifier';
import { type AudienceTally, DeliveryPipeline, emptyDeliveryCounts } from '#core/delivery-pipeline';
import { LeaseHeldError } from '#core/errors';
import { compileRules } from '#core/matcher';
import type { Audience, RuleSet } from '#core/model';
import type { DeliveryKey, Lease, Log, OutboundMessage, UndeliverableRecord } from '#core/ports';
import { deliveryId } from '#core/ports';
import { NewsLookupClient } from '#provider/news-client';
import { action, collectList } from './command.ts';
import type { CommandContext } from './context.ts';
import { NotFoundError, OperationFailedError, UsageError } from './errors.ts';
import { stderrLog } from './log.ts';
import { formatInstant } from './output.ts';
import { windowJson } from './preview.ts';
import type { Target } from './target.ts';
import { parseWindow } from './window.ts';

interface ReplayOptions {
  from?: string;
  to?: string;
  audience?: string[];
  dryRun?: boolean;
  parked?: boolean;
}

/** One audience's line of the replay report. */
interface ReplayRow {
  audienceId: string;
  matched: number;
  alreadyDelivered: number;
  published: number;
  wouldSend: number;
  failed: number;
  parked: number;
}

function rowOf(audienceId: string, tally: AudienceTally | undefined, wouldSend: number): ReplayRow {
  return {
    audienceId,
    matched: tally?.matched ?? 0,
    alreadyDelivered: tally?.alreadyDelivered ?? 0,
    published: tally?.published ?? 0,
    wouldSend,
    failed: tally?.failed ?? 0,
    parked: tally?.parked ?? 0,
  };
}

/** The run lease, held by this replay and extended as it goes. */
class ReplayLease {
  readonly #state: DynamoStateStore;
  readonly #durationMs: number;
  readonly #owner: string;
  #lease: Lease | undefined;

  constructor(state: DynamoStateStore, durationMs: number, actor: string) {
    this.#state = state;
    this.#durationMs = durationMs;
    this.#owner = `replay:${actor}:${randomUUID().slice(0, 8)}`;
  }

  get owner(): string {
    return this.#owner;
  }

  /** Takes the lease, or extends it (the store lets the same owner take it again). */
  async hold(): Promise<void> {
    try {
      this.#lease = await this.#state.acquireLease(this.#owner, this.#durationMs, Date.now());
    } catch (error) {
      if (error instanceof LeaseHeldError) {
        const progress = this.#lease
          ? 'what this replay sent is in the ledger, so replaying again sends only the rest'
          : 'this replay sent nothing';
        throw new OperationFailedError(
          `${error.message}: an alert run is in progress; replay again when it has finished (${progress})`,
          { cause: error },
        );
      }
      throw error;
    }
  }

  /**
   * Renews the lease every third of its duration while a day is being replayed (one day can take
   * longer than the lease). If renewal fails, `onLost` stops publishing: a scheduled run may have
   * taken over, and two deliverers must never check the ledger for the same alerts at once.
   */
  keepRenewed(onLost: (error: unknown) => void): () => void {
    const timer = setInterval(
      () => {
        this.hold().catch((error: unknown) => {
          clearInterval(timer);
          onLost(error);
        });
      },
      Math.max(1000, Math.floor(this.#durationMs / 3)),
    );
    timer.unref();
    return () => clearInterval(timer);
  }

  async release(): Promise<void> {
    if (this.#lease) await this.#state.releaseLease(this.#lease);
  }
}

interface Wiring {
  readonly target: Target;
  readonly log: Log;
  readonly state: DynamoStateStore;
  readonly notifier: SnsNotifier;
  readonly audiences: Map<string, Audience>;
}

async function wire(
  context: CommandContext,
  options: ReplayOptions,
  log: Log,
): Promise<Wiring & { config: Awaited<ReturnType<Target['alertRunConfig']>>; ruleSet: RuleSet }> {
  const target = await context.target();
  const config = await target.alertRunConfig();
  const { documents, sns } = target.clients;
  const state = new DynamoStateStore({
    documents,
    tableName: target.names.stateTable,
    ledgerRetentionDays: config.ledgerRetentionDays,
    log,
  });
  const notifier = new SnsNotifier({ client: sns, concurrency: config.snsConcurrency, log });
  const ruleSource = new DynamoRuleSource({
    documents,
    rulesTableName: target.names.rulesTable,
    audiencesTableName: target.names.audiencesTable,
    log,
  });
  const ruleSet = await ruleSource.load();
  const all = new Map(ruleSet.audiences.map((audience) => [audience.audienceId, audience]));
  const wanted = options.audience ?? [...all.keys()];
  const missing = wanted.filter((id) => !all.has(id));
  if (missing.length > 0) throw new NotFoundError(`audience ${missing.join(', ')} does not exist (or is invalid)`);
  const audiences = new Map(wanted.map((id) => [id, all.get(id) as Audience]));
  return { target, log, state, notifier, audiences, config, ruleSet };
}

async function replayWindow(context: CommandContext, options: ReplayOptions): Promise<void> {
  if (options.from === undefined) throw new UsageError('give --from (and optionally --to), or --parked');
  const log = stderrLog(context.output);
  const { target, state, notifier, audiences, config, ruleSet } = await wire(context, options, log);
  const window = parseWindow(options.from, options.to, config.provider.timeZone, Date.now());
  const matcher = compileRules(ruleSet.rules.filter((rule) => audiences.has(rule.audienceId)));
  const counts = emptyDeliveryCounts();
  const wouldSend = new Map<string, number>();
  const abort = new AbortController();
  const interrupt = () => abort.abort(new Error('interrupted'));
  process.once('SIGINT', interrupt);
  const pipeline = new DeliveryPipeline({
    state,
    notifier,
    log,
    now: Date.now,
    audiences,
    ledgerFlushDelayMs: config.run.ledgerFlushDelayMs,
    publishSignal: abort.signal,
    lateBefore: window.since,
    counts,
    dryRun: options.dryRun === true,
    onWouldPublish: (message) =>
      wouldSend.set(message.key.audienceId, (wouldSend.get(message.key.audienceId) ?? 0) + 1),
  });
  const news = new NewsLookupClient({
    config: config.provider,
    secrets: new SecretsManagerApiKey({ client: target.clients.secrets, secretId: config.secretId }),
    log,
  });
  const lease = options.dryRun ? undefined : new ReplayLease(state, config.run.leaseDurationMs, await context.actor());
  const startedAt = Date.now();
  let articles = 0;
  let daysDone = 0;
  const progress = context.progress();
  let stopRenewing = () => {};
  try {
    await lease?.hold();
    stopRenewing = lease?.keepRenewed((error) => abort.abort(error)) ?? stopRenewing;
    progress.start(window.days.length, options.dryRun ? 'dry run' : 'replay');
    for (const day of window.days) {
      if (abort.signal.aborted) break;
      await lease?.hold();
      try {
        for await (const page of news.pages({ from: day, to: day }, { signal: abort.signal })) {
          const matches = [];
          for (const article of page.articles) {
            if (article.publishedAt < window.since || article.publishedAt > window.until) continue;
            articles += 1;
            matches.push(...matcher.match(article));
          }
          await pipeline.add(matches);
        }
      } catch (error) {
        // Ctrl-C: deliver (or count as deferred) what was matched, then report below.
        if (!abort.signal.aborted) throw error;
      }
      await pipeline.flush();
      if (abort.signal.aborted) break;
      daysDone += 1;
      const sent = options.dryRun ? counts.notificationsWouldPublish : counts.notificationsPublished;
      progress.advance(
        1,
        `${articles} articles, ${sent} ${options.dryRun ? 'to send' : 'sent'}, ${counts.notificationsAlreadyDelivered} already delivered`,
      );
    }
    await pipeline.flush();
  } finally {
    stopRenewing();
    // On every path, errors included: what SNS accepted reaches the ledger before the lease goes,
    // or the next scheduled run would send it again.
    await pipeline.flush().catch((error: unknown) =>
      log.error('could not deliver or record the last replayed notifications', {
        error: error instanceof Error ? `${error.name}: ${error.message}` : String(error),
      }),
    );
    progress.stop();
    process.off('SIGINT', interrupt);
    await news.close();
    if (!options.dryRun) {
      await recordReplay(state, lease?.owner ?? 'replay', startedAt, counts, window, daysDone, log);
    }
    await lease?.release();
  }

  const rows = [...audiences.keys()]
    .sort()
    .map((audienceId) => rowOf(audienceId, counts.audiences[audienceId], wouldSend.get(audienceId) ?? 0));
  const result = {
    target: target.label,
    dryRun: options.dryRun === true,
    window: windowJson(window),
    daysCompleted: daysDone,
    articles,
    matched: counts.notificationsMatched,
    alreadyDelivered: counts.notificationsAlreadyDelivered,
    published: counts.notificationsPublished,
    wouldPublish: counts.notificationsWouldPublish,
    failed: counts.notificationsFailed,
    parked: counts.notificationsParked,
    deferred: counts.notificationsDeferred,
    unrenderable: counts.notificationsUnrenderable,
    audiences: rows,
  };
  context.output.result(result, () => {
    context.output.line(
      `${options.dryRun ? 'Dry run of a replay' : 'Replayed'} ${formatInstant(window.since)} .. ${formatInstant(window.until)}: ${articles} articles; the watermark was not moved`,
    );
    context.output.table(
      ['AUDIENCE', 'MATCHED', 'ALREADY DELIVERED', options.dryRun ? 'WOULD SEND' : 'SENT', 'FAILED', 'PARKED'],
      rows.map((row) => [
        row.audienceId,
        row.matched,
        row.alreadyDelivered,
        options.dryRun ? row.wouldSend : row.published,
        row.failed,
        row.parked,
      ]),
    );
  });
  if (abort.signal.aborted) {
    const reason = abort.signal.reason instanceof Error ? abort.signal.reason.message : 'interrupted';
    throw new OperationFailedError(
      `${reason === 'interrupted' ? 'interrupted' : `stopped: ${reason}`}; what was sent is in the ledger, so replaying again sends only the rest`,
    );
  }
  if (counts.notificationsFailed > 0) {
    throw new OperationFailedError(
      `${counts.notificationsFailed} alert(s) could not be sent; replay again to retry them`,
    );
  }
  if (counts.notificationsParked > 0) {
    throw new OperationFailedError(
      `${counts.notificationsParked} alert(s) were refused for good and parked; fix the audience, then 'news-alerts replay --parked'`,
    );
  }
}

/** Keeps a replay in the run history, so `runs list` shows who backfilled what. */
async function recordReplay(
  state: DynamoStateStore,
  runId: string,
  startedAt: number,
  counts: ReturnType<typeof emptyDeliveryCounts>,
  window: ReturnType<typeof parseWindow>,
  daysCompleted: number,
  log: Log,
): Promise<void> {
  try {
    await state.recordRun({
      runId,
      status: counts.notificationsFailed > 0 || daysCompleted < window.days.length ? 'incomplete' : 'completed',
      startedAt,
      finishedAt: Date.now(),
      summary: { kind: 'replay', window: windowJson(window), daysCompleted, ...counts },
    });
  } catch (error) {
    log.warn('could not record the replay in the run history', { error: String(error) });
  }
}

/** Rule ids of a parked message, read from its structured body (for the ledger entry). */
function ruleIdsOf(body: string): string[] {
  try {
    const structure = JSON.parse(body) as Record<string, unknown>;
    const structured =
      typeof structure.sqs === 'string'
        ? (JSON.parse(structure.sqs) as { newsAlerts?: { matches?: { ruleId?: unknown }[] } })
        : {};
    return (structured.newsAlerts?.matches ?? []).flatMap((match) =>
      typeof match.ruleId === 'string' ? [match.ruleId] : [],
    );
  } catch {
    return [];
  }
}

async function replayParked(context: CommandContext, options: ReplayOptions): Promise<void> {
  if (options.from !== undefined || options.to !== undefined)
    throw new UsageError('--parked replays parked alerts; it takes no --from/--to');
  const log = stderrLog(context.output);
  const { target, state, notifier, audiences, config } = await wire(context, options, log);
  const lease = options.dryRun ? undefined : new ReplayLease(state, config.run.leaseDurationMs, await context.actor());
  const tallies = new Map<
    string,
    { parked: number; alreadyDelivered: number; sent: number; wouldSend: number; failed: number; stillParked: number }
  >();
  const progress = context.progress();
  try {
    await lease?.hold();
    const parked: UndeliverableRecord[] = [];
    for (const audienceId of audiences.keys()) parked.push(...(await state.listUndeliverable(audienceId)));
    for (const audienceId of audiences.keys()) {
      tallies.set(audienceId, { parked: 0, alreadyDelivered: 0, sent: 0, wouldSend: 0, failed: 0, stillParked: 0 });
    }
    for (const record of parked) {
      const tally = tallies.get(record.audienceId);
      if (tally) tally.parked += 1;
    }
    // Anything a later run or replay delivered since it was parked is done: forget it, send nothing.
    const delivered = await state.findDelivered(parked);
    const done = parked.filter((record) => delivered.has(deliveryId(record)));
    for (const record of done) {
      const tally = tallies.get(record.audienceId);
      if (tally) tally.alreadyDelivered += 1;
    }
    if (!options.dryRun && done.length > 0) await state.forgetUndeliverable(done);
    const messages: OutboundMessage[] = parked
      .filter((record) => !delivered.has(deliveryId(record)))
      .map((record) => ({
        key: { audienceId: record.audienceId, articleKey: record.articleKey },
        topicArn: (audiences.get(record.audienceId) as Audience).topicArn,
        subject: record.subject,
        body: record.body,
        ruleIds: ruleIdsOf(record.body),
      }));
    if (options.dryRun) {
      for (const message of messages) {
        const tally = tallies.get(message.key.audienceId);
        if (tally) tally.wouldSend += 1;
      }
    } else if (messages.length > 0) {
      progress.start(messages.length, 'parked alerts');
      const outcome = await notifier.publish(messages, {
        onPublished: async (batch) => {
          const deliveredAt = Date.now();
          await state.recordDelivered(
            batch.map(({ message, messageId }) => ({
              ...message.key,
              deliveredAt,
              messageId,
              ruleIds: message.ruleIds,
            })),
          );
          const keys: DeliveryKey[] = batch.map(({ message }) => message.key);
          await state.forgetUndeliverable(keys);
          for (const { message } of batch) {
            const tally = tallies.get(message.key.audienceId);
            if (tally) tally.sent += 1;
          }
          progress.advance(batch.length);
        },
      });
      progress.stop();
      const refused = outcome.failed.filter((failure) => failure.permanent);
      // Still refused: park them again with the new reason and topic, so nothing is lost.
      await state.recordUndeliverable(
        refused.map(({ message, code, reason }) => ({
          ...message.key,
          topicArn: message.topicArn,
          failedAt: Date.now(),
          code,
          reason,
          subject: message.subject,
          body: message.body,
        })),
      );
      for (const failure of outcome.failed) {
        const tally = tallies.get(failure.message.key.audienceId);
        if (!tally) continue;
        tally.failed += 1;
        tally.stillParked += 1;
      }
    }
  } finally {
    progress.stop();
    await lease?.release();
  }
  const rows = [...tallies]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([audienceId, tally]) => ({ audienceId, ...tally }));
  const failed = rows.reduce((sum, row) => sum + row.failed, 0);
  context.output.result(
    { target: target.label, dryRun: options.dryRun === true, parked: true, audiences: rows },
    () => {
      context.output.table(
        ['AUDIENCE', 'PARKED', 'DELIVERED SINCE', options.dryRun ? 'WOULD SEND' : 'SENT', 'STILL PARKED'],
        rows.map((row) => [
          row.audienceId,
          row.parked,
          row.alreadyDelivered,
          options.dryRun ? row.wouldSend : row.sent,
          row.stillParked,
        ]),
      );
    },
  );
  if (failed > 0) {
    throw new OperationFailedError(
      `${failed} parked alert(s) could not be sent and stay parked; check the audience's topic (news-alerts audiences show)`,
    );
  }
}

/** Registers `replay`. */
export function registerReplay(program: Command): void {
  program
    .command('replay')
    .description(
      're-deliver a past window through the delivery ledger: only alerts never delivered go out (backfill after an outage)',
    )
    .option('--from <when>', 'start: provider date (2026-11-21), date-time with zone, or span back (6h, 2d)')
    .option('--to <when>', 'end (inclusive), same forms; default now')
    .option('--audience <ids>', 'only these audiences, comma-separated', collectList)
    .option('--dry-run', 'show what would be sent; send and record nothing')
    .option('--parked', 'send the alerts SNS refused for good (parked) once the audience is fixed')
    .addHelpText(
      'after',
      `
Replay holds the run lease while it delivers (a scheduled run waits, and vice versa), checks the
delivery ledger for every alert, and records each one as soon as SNS accepts it: replaying twice,
or a run after it, sends nothing twice. The watermark is not moved.

Examples:
  news-alerts replay --from 2026-11-21T06:00:00Z --to 2026-11-21T18:00:00Z --dry-run
  news-alerts replay --from 12h --audience markets
  news-alerts replay --parked --audience partner-feed`,
    )
    .action(
      action<ReplayOptions>((context, _args, options) =>
        options.parked ? replayParked(context, options) : replayWindow(context, options),
      ),
    );
}
