/**
 * `news-alerts replay`: gap-safe backfill. It reads a past window from the provider, matches it
 * with the current rules and delivers through the alert run's own DeliveryPipeline, which skips
 * every notification the delivery ledger already holds and records each one right after SNS
 * accepts it. So after an outage, only what was never delivered goes out, and running it twice
 * sends nothing twice. The watermark is not touched.
 *
 * `replay --parked` re-sends parked notifications: those SNS refused for good (deleted topic,
 * disabled key) and those that could not be published as rendered (unpublishable link),
 * which the run parked, once the audience is fixed: to the audience's current topic, skipping any
 * the ledger shows were delivered since. With sharded publishing it first parks the notifications
 * of the work items in the work dead-letter queue (cli/work-dead-letters.ts), so they replay the
 * same way; the publisher parks what it gave up on itself.
 *
 * A replayed match is delivered exactly as the scheduled run would deliver it at that moment:
 * through the same delivery-preference planning (digest mode holds it for the audience's next
 * digest; quiet hours hold it until they end unless it is urgent; the daily budget of immediate
 * alerts overflows into the next digest). A held match is written with its ledger entry in one
 * transaction, as the run does, so it is neither sent at once nor lost; and, like the run, the
 * replay then sends the digests of the replayed audiences that are due, so nothing it holds (or
 * found held) waits on a ledger that has moved on.
 *
 * Replays hold the run lease while they deliver (a short one, renewed while they work), so a
 * scheduled run and a replay never check the ledger for the same notification at the same time.
 */
import { randomUUID } from 'node:crypto';
import type { SQSClient } from '@aws-sdk/client-sqs';
import type { Command } from 'commander';
import pLimit from 'p-limit';
import { DynamoDispatchStore } from '#aws/dynamo-dispatch-store';
import { DynamoRuleSource } from '#aws/dynamo-rule-source';
import { DynamoStateStore } from '#aws/dynamo-state-store';
import { DynamoStoryStore } from '#aws/dynamo-story-index';
import { SecretsManagerApiKey } from '#aws/secret-source';
import { SnsNotifier } from '#aws/sns-notifier';
import {
  type AudienceTally,
  type DeliveryCounts,
  DeliveryPipeline,
  emptyDeliveryCounts,
} from '#core/delivery-pipeline';
import { type DigestCounts, emptyDigestCounts, releaseDueDigests } from '#core/digest-release';
import { LeaseHeldError } from '#core/errors';
import { compileRules } from '#core/matcher';
import type { Audience, RuleSet } from '#core/model';
import type {
  DeliveryKey,
  DeliveryPorts,
  DispatchStore,
  HeldNotification,
  HoldReason,
  Log,
  NewsSource,
  OutboundMessage,
  UndeliverableRecord,
} from '#core/ports';
import { deliveryId, dispatchComplete, readUpdateNoticeKey } from '#core/ports';
import type { RenderOptions } from '#core/render';
import { isSpikeAlertKey } from '#core/spikes/alert';
import { StoryResolver } from '#core/story';
import { NewsLookupClient } from '#provider/news-client';
import { auditQueueWarning, ensureAuditQueues } from './audit-queues.ts';
import { action, collectList } from './command.ts';
import type { CommandContext } from './context.ts';
import { failureDocument, failureOf, NotFoundError, OperationFailedError, UsageError } from './errors.ts';
import { newsAlerts } from './hints.ts';
import { describeLease, RenewedLease } from './lease.ts';
import { stderrLog } from './log.ts';
import { formatInstant } from './output.ts';
import { windowJson } from './preview.ts';
import type { Target } from './target.ts';
import { hinted, hintFrom } from './unknown-ids.ts';
import { parseWindow, type TimeWindow } from './window.ts';
import { type TakenDeadLetters, takeWorkDeadLetters, workItemDeadLetteredCode } from './work-dead-letters.ts';

interface ReplayOptions {
  from?: string;
  to?: string;
  audience?: string[];
  dryRun?: boolean;
  parked?: boolean;
  /** With --parked: send to a topic without a subscriber too (they count as delivered). */
  toTopicWithoutSubscribers?: boolean;
  /** Replay a window that starts before the delivery ledger's memory (alerts may go out again). */
  force?: boolean;
}

/** One audience's line of the replay report. */
interface ReplayRow {
  audienceId: string;
  matched: number;
  /** Delivered before (the ledger has them); held matches waiting for a digest are not counted here. */
  alreadyDelivered: number;
  /** Held earlier for a digest and still waiting (the ledger counts them handled), by reason. */
  alreadyHeld: number;
  alreadyHeldBy: Record<HoldReason, number>;
  published: number;
  wouldSend: number;
  /** Held for the audience's next digest (digest mode, quiet hours, daily budget). */
  held: number;
  wouldHold: number;
  /** Copies of a story the audience already has: recorded as collapsed, not sent (real replays). */
  collapsed: number;
  /** Dry runs: copies that would collapse. */
  wouldCollapse: number;
  failed: number;
  parked: number;
}

function rowOf(
  audienceId: string,
  tally: AudienceTally | undefined,
  would: { send: number; hold: number; collapse: number },
  held: Record<HoldReason, number> = { digest: 0, 'quiet-hours': 0, budget: 0 },
): ReplayRow {
  const alreadyHeld = held.digest + held['quiet-hours'] + held.budget;
  return {
    audienceId,
    matched: tally?.matched ?? 0,
    alreadyDelivered: (tally?.alreadyDelivered ?? 0) - alreadyHeld,
    alreadyHeld,
    alreadyHeldBy: held,
    published: tally?.published ?? 0,
    wouldSend: would.send,
    held: tally?.held ?? 0,
    wouldHold: would.hold,
    collapsed: tally?.collapsed ?? 0,
    wouldCollapse: would.collapse,
    failed: tally?.failed ?? 0,
    parked: tally?.parked ?? 0,
  };
}

/**
 * Takes the run lease for a replay (renewed while it works; `onLost` stops it when the lease is
 * cleared or taken over), or explains that a run is in progress.
 */
async function takeReplayLease(
  state: DynamoStateStore,
  actor: string,
  onLost: (error: unknown) => void,
  dispatches?: DispatchStore,
): Promise<RenewedLease> {
  let lease: RenewedLease;
  try {
    lease = await RenewedLease.take(state, `replay:${actor}:${randomUUID().slice(0, 8)}`, { onLost });
  } catch (error) {
    if (error instanceof LeaseHeldError) {
      let holder = `${error.holder}, until ${formatInstant(error.expiresAt)}`;
      try {
        const lease = await state.readLease();
        if (lease !== undefined) holder = describeLease(lease, Date.now());
      } catch {
        // The error's own holder and expiry are shown.
      }
      throw new OperationFailedError(
        `replay refused: another run holds the run lease (${holder}), so an alert run is in progress. This replay sent nothing; replay again when it has finished, or if its holder is gone, clear the lease with '${newsAlerts()} lease release'`,
        { cause: error, code: 'lease_held' },
      );
    }
    throw error;
  }
  // Sharded publishing: publishers check the ledger outside the lease, so a replay that sent while
  // an earlier run's work items are still being published could send the same alert twice.
  const open = await dispatches?.readOpen();
  if (open !== undefined && !dispatchComplete(open)) {
    await lease.release();
    const items = open.expected ?? open.enqueued;
    throw new OperationFailedError(
      `replay refused: ${items - open.done} of ${items} work item(s) of dispatch ${open.dispatchId} are still with the publishers (${newsAlerts()} runs list). This replay sent nothing; replay again once the next alert run has settled them`,
    );
  }
  return lease;
}

/** The dispatches of a target's state table (sharded publishing), for the check above. */
function dispatchesOf(target: Target, log: Log): DispatchStore {
  return new DynamoDispatchStore({ documents: target.clients.documents, tableName: target.names.stateTable, log });
}

/** What a replay delivers with: the run's adapters and a clock. */
export interface ReplayDependencies extends DeliveryPorts {
  readonly news: NewsSource;
  readonly now: () => number;
}

/** What to replay and how. */
export interface ReplaySettings {
  readonly window: TimeWindow;
  /** The current rule set; only rules of `audiences` are replayed. */
  readonly ruleSet: RuleSet;
  /** The replayed audiences by id. */
  readonly audiences: ReadonlyMap<string, Audience>;
  readonly ledgerFlushDelayMs: number;
  /** Aborting it stops reading and publishing (Ctrl-C, a lost lease); what was sent is recorded. */
  readonly signal: AbortSignal;
  /** Plan and render, but publish, hold and record nothing. */
  readonly dryRun?: boolean;
  readonly onWouldPublish?: (message: OutboundMessage) => void;
  readonly onWouldHold?: (held: HeldNotification) => void;
  readonly onWouldCollapse?: (audienceId: string) => void;
  /** Called after each completed day. */
  readonly onDay?: (progress: { articles: number; daysCompleted: number; counts: ReplayCounts }) => void;
  /** The counts to update, so a caller sees them also when the replay fails (fresh when absent). */
  readonly counts?: ReplayCounts;
  /** How alerts and digests are rendered: the target's default locale, as its scheduled run does. */
  readonly render?: RenderOptions;
}

/** What a replay counted: deliveries and holds, and the digests it released. */
export type ReplayCounts = DeliveryCounts & DigestCounts;

export interface ReplayOutcome {
  readonly counts: ReplayCounts;
  readonly articles: number;
  readonly daysCompleted: number;
}

/**
 * Reads the window day by day, matches it with the current rules and delivers through the alert
 * run's pipeline with the audiences' delivery preferences, then sends the replayed audiences'
 * due digests (see the module comment). Holds no lease itself: the caller does.
 */
export async function replayDeliveries(deps: ReplayDependencies, settings: ReplaySettings): Promise<ReplayOutcome> {
  const { window, audiences, signal } = settings;
  const dryRun = settings.dryRun === true;
  const matcher = compileRules(settings.ruleSet.rules.filter((rule) => audiences.has(rule.audienceId)));
  const counts: ReplayCounts = settings.counts ?? { ...emptyDeliveryCounts(), ...emptyDigestCounts() };
  const pipeline = new DeliveryPipeline({
    state: deps.state,
    notifier: deps.notifier,
    log: deps.log,
    // Copies of a story an audience already has collapse as in the scheduled run (none without).
    stories: deps.stories,
    now: deps.now,
    audiences,
    ledgerFlushDelayMs: settings.ledgerFlushDelayMs,
    publishSignal: signal,
    lateBefore: window.since,
    counts,
    dryRun,
    // A replayed match goes out exactly as the scheduled run would send it now: a digest-only
    // audience gets it in its digest, an audience in its quiet hours when they end.
    applyDeliveryPreferences: true,
    ...(settings.render ? { render: settings.render } : {}),
    ...(settings.onWouldPublish ? { onWouldPublish: settings.onWouldPublish } : {}),
    ...(settings.onWouldHold ? { onWouldHold: settings.onWouldHold } : {}),
    ...(settings.onWouldCollapse ? { onWouldCollapse: settings.onWouldCollapse } : {}),
  });
  let articles = 0;
  let daysCompleted = 0;
  try {
    for (const day of window.days) {
      if (signal.aborted) break;
      try {
        for await (const page of deps.news.pages({ from: day, to: day }, { signal })) {
          const matches = [];
          for (const article of page.articles) {
            if (article.publishedAt < window.since || article.publishedAt > window.until) continue;
            articles += 1;
            matches.push(...matcher.match(article));
          }
          await pipeline.add(matches);
        }
      } catch (error) {
        // Ctrl-C or a lost lease: deliver (or count as deferred) what was matched, then stop.
        if (!signal.aborted) throw error;
      }
      await pipeline.flush();
      if (signal.aborted) break;
      daysCompleted += 1;
      settings.onDay?.({ articles, daysCompleted, counts });
    }
    await pipeline.flush();
  } finally {
    // On every path, errors included: what SNS accepted reaches the ledger before the lease goes,
    // or the next scheduled run would send it again.
    await pipeline.flush().catch((error: unknown) =>
      deps.log.error('could not deliver or record the last replayed notifications', {
        error: error instanceof Error ? `${error.name}: ${error.message}` : String(error),
      }),
    );
  }
  if (!dryRun && !signal.aborted) {
    // As after every run: what is due now goes out, including what this replay just held.
    const all = new Map(settings.ruleSet.audiences.map((audience) => [audience.audienceId, audience]));
    await releaseDueDigests({
      state: deps.state,
      notifier: deps.notifier,
      log: deps.log,
      stories: deps.stories,
      now: deps.now,
      audiences: all,
      onlyAudiences: new Set(audiences.keys()),
      publishSignal: signal,
      counts,
      ...(settings.render ? { render: settings.render } : {}),
      // A slot a failed send gave back is its retry's, not a held match's.
      budgetKeptForRetries: pipeline.budgetGivenBack,
    });
  }
  return { counts, articles, daysCompleted };
}

interface Wiring {
  readonly target: Target;
  readonly log: Log;
  readonly state: DynamoStateStore;
  readonly notifier: SnsNotifier;
  readonly audiences: Map<string, Audience>;
  /** The target's story index (its state table), as the scheduled run reads it. */
  readonly stories: StoryResolver;
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
  // The same index the alert function builds (functions/alert-run/wiring.ts): a replayed copy
  // meets the story a scheduled run filed, and the other way round.
  const stories = new StoryResolver(
    new DynamoStoryStore({
      documents,
      tableName: target.names.stateTable,
      filingRetentionDays: config.ledgerRetentionDays,
      log,
    }),
    {
      log,
    },
  );
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
  if (missing.length > 0) {
    throw new NotFoundError(
      `audience ${missing.join(', ')} does not exist (or is invalid)${hinted(hintFrom(missing, [...all.keys()]))}`,
    );
  }
  const audiences = new Map(wanted.map((id) => [id, all.get(id) as Audience]));
  return { target, log, state, notifier, audiences, stories, config, ruleSet };
}

const heldText = (count: number, by: Record<HoldReason, number>): string => {
  if (count === 0) return '0';
  const reasons = (['digest', 'quiet-hours', 'budget'] as const)
    .filter((reason) => by[reason] > 0)
    .map((reason) => `${reason} ${by[reason]}`);
  return `${count} (${reasons.join(', ')})`;
};

/**
 * The matches of `audienceIds` held for a digest when the replay starts, and a state store that
 * counts, per audience and reason, which of them the ledger check finds: the pipeline counts
 * those as "already delivered" (a hold is recorded in the ledger), but nobody received them yet.
 */
async function heldEarlier(state: DynamoStateStore, audienceIds: readonly string[]) {
  const reasons = new Map<string, HoldReason>();
  for (const audienceId of audienceIds) {
    for (const item of (await state.readHeld(audienceId)).items) reasons.set(deliveryId(item.key), item.reason);
  }
  const counts = new Map<string, Record<HoldReason, number>>();
  // Each once: the pipeline reads a story lead's entry again when a copy's marker names it.
  const counted = new Set<string>();
  return {
    counts,
    watching(inner: DynamoStateStore): DynamoStateStore {
      if (reasons.size === 0) return inner;
      const count = (keys: readonly DeliveryKey[], found: { has(id: string): boolean }) => {
        for (const key of keys) {
          const id = deliveryId(key);
          const reason = reasons.get(id);
          if (reason === undefined || !found.has(id) || counted.has(id)) continue;
          counted.add(id);
          const entry = counts.get(key.audienceId) ?? { digest: 0, 'quiet-hours': 0, budget: 0 };
          entry[reason] += 1;
          counts.set(key.audienceId, entry);
        }
      };
      return new Proxy(inner, {
        get(target, property, receiver) {
          // The pipeline asks with either read: readDeliveries when stories or updates need what
          // the ledger recorded, findDelivered otherwise.
          if (property === 'findDelivered') {
            return async (keys: readonly DeliveryKey[]) => {
              const found = await target.findDelivered(keys);
              count(keys, found);
              return found;
            };
          }
          if (property === 'readDeliveries') {
            return async (keys: readonly DeliveryKey[]) => {
              const found = await target.readDeliveries(keys);
              count(keys, found);
              return found;
            };
          }
          const value = Reflect.get(target, property, receiver);
          return typeof value === 'function' ? value.bind(target) : value;
        },
      });
    },
  };
}

/**
 * Alerts parked for an audience whose topic has no confirmed subscriber (after `audiences repair`,
 * before its subscribers are back): a window replay would send them to nobody and record them
 * delivered, and `replay --parked` would then never send them. Only the parked alerts the window
 * can send count: of an enabled audience (a replay sends a disabled one nothing), not a digest, and
 * of an article published inside the window (as its body says; one whose body does not say counts,
 * to be safe). Only audiences with such alerts are checked (one subscription listing each). A dry
 * run warns; a replay is refused before anything is sent, unless --to-topic-without-subscribers
 * says to send them anyway.
 * @throws UsageError naming each such audience and what to do
 */
async function parkedWithoutSubscribers(
  context: CommandContext,
  target: Target,
  state: Pick<DynamoStateStore, 'listUndeliverable'>,
  audiences: ReadonlyMap<string, Audience>,
  window: TimeWindow,
  options: ReplayOptions,
): Promise<void> {
  const parked = new Map<string, number>();
  // One query per audience, eight at a time: a replay of a thousand audiences waits for about a
  // hundred and twenty-five round trips, not a thousand.
  const limit = pLimit(8);
  const enabled = [...audiences.values()].filter((audience) => audience.enabled);
  const lists = await Promise.all(
    enabled.map((audience) =>
      limit(async () => [audience.audienceId, await state.listUndeliverable(audience.audienceId)] as const),
    ),
  );
  for (const [audienceId, list] of lists) {
    const records = list.filter((record) => {
      if (!windowCanSend(record.articleKey)) return false;
      const at = publishedAtOfParked(record.body);
      return at === undefined || (at >= window.since && at <= window.until);
    });
    if (records.length > 0) parked.set(audienceId, records.length);
  }
  if (parked.size === 0) return;
  const unknown = new Map<string, string>();
  const { withoutSubscribers } = await checkTopics(target, new Set(parked.keys()), audiences, unknown, {
    subscribers: true,
  });
  if (withoutSubscribers.size === 0) return;
  const lines = [...withoutSubscribers].map((audienceId) => {
    const cannotTell = unknown.get(audienceId);
    return cannotTell === undefined
      ? `${audienceId}: ${parked.get(audienceId)} parked alert(s), and its topic has no confirmed subscriber (${newsAlerts()} subscriptions list ${audienceId})`
      : `${audienceId}: ${parked.get(audienceId)} parked alert(s), and its topic's subscriptions could not be listed (${cannotTell})`;
  });
  const risk =
    'sent by this replay, parked alerts of these audiences would reach nobody and be recorded delivered, so replay --parked would never send them';
  if (options.toTopicWithoutSubscribers === true || options.dryRun === true) {
    for (const line of lines) context.output.warn(`${line}: ${risk}`);
    return;
  }
  throw new UsageError(
    `${risk}. Subscribe them again first (or confirm a pending subscription), leave them out with --audience, or add --to-topic-without-subscribers to send anyway; nothing was sent`,
    lines,
  );
}

/**
 * Whether a window replay can send an alert of this key: it matches articles, so neither a digest
 * nor a spike alert (or a spike alert's update notice), which only runs make.
 */
export function windowCanSend(articleKey: string): boolean {
  if (articleKey.startsWith('digest:') || isSpikeAlertKey(articleKey)) return false;
  return !isSpikeAlertKey(readUpdateNoticeKey(articleKey)?.subject ?? '');
}

/** The publication instant of a parked alert's article, from its structured body, if it says. */
export function publishedAtOfParked(body: string): number | undefined {
  try {
    const message = JSON.parse(body) as { default?: unknown };
    if (typeof message.default !== 'string') return undefined;
    const document = JSON.parse(message.default) as { newsAlerts?: { article?: { publishedAt?: unknown } } };
    const at = document.newsAlerts?.article?.publishedAt;
    const parsed = typeof at === 'string' ? Date.parse(at) : Number.NaN;
    return Number.isNaN(parsed) ? undefined : parsed;
  } catch {
    return undefined;
  }
}

/**
 * A ledger entry lives `ledgerRetentionDays` after its alert was delivered, and no alert is
 * delivered before its article is published: the ledger remembers every alert of an article
 * published since `now - ledgerRetentionDays`. A window reaching further back may send alerts
 * again, so it needs --force (a dry run only warns), as `watermark set` does.
 * @throws UsageError when the window starts before the ledger's memory and neither --force nor --dry-run is given
 */
function beyondLedger(
  context: CommandContext,
  window: TimeWindow,
  ledgerRetentionDays: number,
  now: number,
  options: ReplayOptions,
): void {
  const remembersFrom = now - ledgerRetentionDays * 86_400_000;
  if (window.since >= remembersFrom) return;
  const risk = `--from ${formatInstant(window.since)} is more than the delivery ledger's ${ledgerRetentionDays} days back: it has forgotten alerts delivered for articles published before ${formatInstant(remembersFrom)}, and those would be sent again`;
  if (options.force === true || options.dryRun === true) {
    context.output.warn(`${risk}${options.force === true ? '' : ' (ALREADY DELIVERED does not count them)'}`);
    return;
  }
  throw new UsageError(
    `${risk}. Replay from ${formatInstant(remembersFrom)} or later, or add --force if sending them again is what you want.`,
  );
}

async function replayWindow(context: CommandContext, options: ReplayOptions): Promise<void> {
  if (options.from === undefined) throw new UsageError('give --from (and optionally --to), or --parked');
  const log = stderrLog(context.output);
  const { target, state, notifier, audiences, stories, config, ruleSet } = await wire(context, options, log);
  const now = Date.now;
  // One instant for the window and its check: `--from 14d` is judged against the same now it means.
  const at = now();
  const window = parseWindow(options.from, options.to, config.provider.timeZone, at);
  beyondLedger(context, window, config.ledgerRetentionDays, at, options);
  await parkedWithoutSubscribers(context, target, state, audiences, window, options);
  // A disabled audience matches nothing, as in a run: said, so its MATCHED 0 is not read as "no news".
  for (const audience of audiences.values()) {
    if (!audience.enabled && options.audience !== undefined) {
      context.output.warn(
        `audience ${audience.audienceId} is disabled: the replay matches nothing for it (enable it first with '${newsAlerts()} audiences update ${audience.audienceId} --enable')`,
      );
    }
  }
  const dryRun = options.dryRun === true;
  const would = new Map<string, { send: number; hold: number; collapse: number }>();
  const wouldFor = (audienceId: string) => {
    const entry = would.get(audienceId) ?? { send: 0, hold: 0, collapse: 0 };
    would.set(audienceId, entry);
    return entry;
  };
  const abort = new AbortController();
  const interrupt = () => abort.abort(new Error('interrupted'));
  process.once('SIGINT', interrupt);
  process.once('SIGTERM', interrupt);
  const news = new NewsLookupClient({
    config: config.provider,
    secrets: new SecretsManagerApiKey({ client: target.clients.secrets, secretId: config.secretId }),
    log,
  });
  const startedAt = now();
  const progress = context.progress();
  let lease: RenewedLease | undefined;
  // Filled as the replay goes, so a failed one is recorded with what it did.
  let outcome: ReplayOutcome = {
    counts: { ...emptyDeliveryCounts(), ...emptyDigestCounts() },
    articles: 0,
    daysCompleted: 0,
  };
  // Matches held earlier for a digest have ledger entries too: told apart from delivered ones.
  const held = await heldEarlier(state, [...audiences.keys()]);
  let failure: string | undefined;
  try {
    if (!dryRun) {
      lease = await takeReplayLease(
        state,
        await context.actor(),
        (error) => abort.abort(error),
        dispatchesOf(target, log),
      );
    }
    // In the sandbox every audience topic gets its audit queue first (`news-alerts deliveries`).
    if (!dryRun && target.kind === 'local') {
      await ensureAuditQueues(target, {
        only: [...audiences.keys()],
        onFailure: auditQueueWarning((text) => context.output.warn(text)),
      });
    }
    progress.start(window.days.length, dryRun ? 'dry run' : 'replay');
    outcome = await replayDeliveries(
      { state: held.watching(state), notifier, log, news, now, stories },
      {
        window,
        ruleSet,
        audiences,
        ledgerFlushDelayMs: config.run.ledgerFlushDelayMs,
        render: { defaultLocale: config.run.defaultLocale },
        signal: abort.signal,
        dryRun,
        counts: outcome.counts,
        onWouldPublish: (message) => {
          wouldFor(message.key.audienceId).send += 1;
        },
        onWouldHold: (held) => {
          wouldFor(held.key.audienceId).hold += 1;
        },
        onWouldCollapse: (audienceId) => {
          wouldFor(audienceId).collapse += 1;
        },
        onDay: ({ articles, daysCompleted, counts }) => {
          outcome = { counts, articles, daysCompleted };
          const sent = dryRun ? counts.notificationsWouldPublish : counts.notificationsPublished;
          const held = dryRun ? counts.notificationsWouldHold : counts.notificationsHeld;
          progress.advance(
            1,
            `${articles} articles, ${sent} ${dryRun ? 'to send' : 'sent'}, ${held} ${dryRun ? 'to hold' : 'held'}, ${counts.notificationsAlreadyDelivered} already delivered`,
          );
        },
      },
    );
  } catch (error) {
    failure = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
    throw error;
  } finally {
    progress.stop();
    process.off('SIGINT', interrupt);
    process.off('SIGTERM', interrupt);
    await news.close();
    if (lease !== undefined) {
      const reason =
        failure ??
        (abort.signal.aborted
          ? abort.signal.reason instanceof Error
            ? `stopped: ${abort.signal.reason.message}`
            : 'interrupted'
          : undefined);
      await recordReplay(state, lease.lease.owner, startedAt, now(), outcome, window, log, reason);
      await lease.release();
    }
  }

  const { counts, articles, daysCompleted } = outcome;
  const rows = [...audiences.keys()]
    .sort()
    .map((audienceId) =>
      rowOf(
        audienceId,
        counts.audiences[audienceId],
        would.get(audienceId) ?? { send: 0, hold: 0, collapse: 0 },
        held.counts.get(audienceId),
      ),
    );
  const alreadyHeld = rows.reduce((sum, row) => sum + row.alreadyHeld, 0);
  const result = {
    target: target.label,
    dryRun,
    window: windowJson(window),
    daysCompleted,
    articles,
    matched: counts.notificationsMatched,
    alreadyDelivered: counts.notificationsAlreadyDelivered - alreadyHeld,
    alreadyHeld,
    published: counts.notificationsPublished,
    wouldPublish: counts.notificationsWouldPublish,
    held: counts.notificationsHeld,
    heldForDigest: counts.heldForDigest,
    heldForQuietHours: counts.heldForQuietHours,
    budgetOverflow: counts.budgetOverflow,
    wouldHold: counts.notificationsWouldHold,
    collapsed: counts.notificationsCollapsed,
    wouldCollapse: counts.notificationsWouldCollapse,
    digestsSent: counts.digestsSent,
    digestItemsReleased: counts.digestItemsReleased,
    failed: counts.notificationsFailed,
    parked: counts.notificationsParked + counts.digestsParked,
    deferred: counts.notificationsDeferred + counts.digestsDeferred,
    unrenderable: counts.notificationsUnrenderable,
    audiences: rows,
  };
  const failed = replayFailure(abort.signal, counts);
  // Under --json a failure is one document: ok: false and the error (as the program's error
  // handler prints it, which then prints nothing more), with what the replay did.
  context.output.result(failed === undefined ? result : { ...failureDocument(failureOf(failed)), ...result }, () => {
    context.output.caption(
      `${dryRun ? 'Dry run of a replay' : 'Replayed'} ${formatInstant(window.since)} .. ${formatInstant(window.until)}: ${articles} articles; the watermark was not moved`,
    );
    context.output.table(
      [
        'AUDIENCE',
        'MATCHED',
        'ALREADY DELIVERED',
        'ALREADY HELD',
        dryRun ? 'WOULD SEND' : 'SENT',
        dryRun ? 'WOULD HOLD' : 'HELD',
        dryRun ? 'WOULD COLLAPSE' : 'COLLAPSED',
        'FAILED',
        'PARKED',
      ],
      rows.map((row) => [
        row.audienceId,
        row.matched,
        row.alreadyDelivered,
        heldText(row.alreadyHeld, row.alreadyHeldBy),
        dryRun ? row.wouldSend : row.published,
        dryRun ? row.wouldHold : row.held,
        dryRun ? row.wouldCollapse : row.collapsed,
        row.failed,
        row.parked,
      ]),
    );
    if (alreadyHeld > 0) {
      context.output.caption(
        `ALREADY HELD: matched earlier and waiting for the audience's next digest (not delivered yet); the digest sends them once.`,
      );
    }
    const collapsed = dryRun ? counts.notificationsWouldCollapse : counts.notificationsCollapsed;
    if (collapsed > 0) {
      context.output.caption(
        `${collapsed} cop${collapsed === 1 ? 'y' : 'ies'} ${dryRun ? 'would collapse' : 'collapsed'} into stories the audience already has (recorded, not sent); '${newsAlerts()} deliveries <audienceId> --article <articleKey>' shows the story and its lead.`,
      );
    }
    if (counts.notificationsHeld > 0 || counts.notificationsWouldHold > 0) {
      context.output.caption(
        `Held alerts (digest mode, quiet hours, daily budget) go out in each audience's next digest, as the scheduled run would send them.${counts.digestsSent > 0 ? ` ${counts.digestsSent} due digest(s) were sent.` : ''}`,
      );
    }
  });
  if (failed !== undefined) throw failed;
}

/** Why a finished replay did not do everything it was asked, or undefined when it did. */
function replayFailure(signal: AbortSignal, counts: ReplayCounts): OperationFailedError | undefined {
  if (signal.aborted) {
    const reason = signal.reason instanceof Error ? signal.reason.message : 'interrupted';
    return new OperationFailedError(
      `${reason === 'interrupted' ? 'interrupted' : `stopped: ${reason}`}; what was sent or held is in the ledger, so replaying again sends only the rest`,
    );
  }
  if (counts.notificationsFailed > 0) {
    return new OperationFailedError(
      `${counts.notificationsFailed} alert(s) could not be sent; replay again to retry them`,
    );
  }
  if (counts.notificationsParked + counts.digestsParked > 0) {
    return new OperationFailedError(
      `${counts.notificationsParked + counts.digestsParked} alert(s) were parked (refused for good by SNS, or not publishable as rendered); review them with '${newsAlerts()} replay --parked --dry-run', fix the audience if SNS refused them, then '${newsAlerts()} replay --parked'`,
    );
  }
  return undefined;
}

/** Keeps a replay in the run history, so `runs list` shows who backfilled what. */
async function recordReplay(
  state: DynamoStateStore,
  runId: string,
  startedAt: number,
  finishedAt: number,
  outcome: ReplayOutcome,
  window: TimeWindow,
  log: Log,
  failure?: string,
): Promise<void> {
  const { counts, daysCompleted } = outcome;
  const incomplete = counts.notificationsFailed > 0 || daysCompleted < window.days.length;
  // `runs list` shows why a replay is incomplete, as it does for runs.
  const reason = incomplete
    ? (failure ??
      (counts.notificationsFailed > 0
        ? `${counts.notificationsFailed} alert(s) could not be sent; replay again to retry them`
        : `${daysCompleted} of ${window.days.length} provider day(s) replayed`))
    : undefined;
  try {
    await state.recordRun({
      runId,
      status: incomplete ? 'incomplete' : 'completed',
      startedAt,
      finishedAt,
      summary: {
        kind: 'replay',
        window: windowJson(window),
        daysCompleted,
        articles: outcome.articles,
        ...counts,
        ...(reason !== undefined ? { reason } : {}),
      },
    });
  } catch (error) {
    log.warn('could not record the replay in the run history', { error: String(error) });
  }
}

/** What `replay --parked` did for one audience. */
interface ParkedTally {
  parked: number;
  alreadyDelivered: number;
  sent: number;
  wouldSend: number;
  failed: number;
  stillParked: number;
  /** Kept parked: the audience's topic has no confirmed subscriber to deliver them to. */
  noSubscriber: number;
  /** Kept parked: the audience's topic does not exist (`audiences repair` makes it again). */
  topicMissing: number;
  /** Kept parked: the audience is disabled (a run sends it nothing; neither does a replay). */
  audienceDisabled: number;
}

/**
 * Keeps a `replay --parked` in the run history like any replay (`kind: replay`, `source:
 * parked`), so `runs list` shows who re-sent parked alerts, how many went out and how many stay
 * parked. A dry run sends nothing and is not recorded.
 */
async function recordParkedReplay(
  state: DynamoStateStore,
  runId: string,
  startedAt: number,
  finishedAt: number,
  tallies: readonly ParkedTally[],
  log: Log,
  failure: string | undefined,
): Promise<void> {
  const total = (field: keyof ParkedTally) => tallies.reduce((sum, tally) => sum + tally[field], 0);
  const failed = total('failed');
  const unsubscribed = total('noSubscriber');
  const topicless = total('topicMissing');
  const disabled = total('audienceDisabled');
  const reasons = [
    failed > 0 ? `${failed} parked alert(s) could not be sent and stay parked` : '',
    unsubscribed > 0 ? `${unsubscribed} parked alert(s) stay parked: their audience's topic has no subscriber` : '',
    topicless > 0 ? `${topicless} parked alert(s) stay parked: their audience's topic does not exist` : '',
    disabled > 0 ? `${disabled} parked alert(s) stay parked: their audience is disabled` : '',
  ].filter((text) => text !== '');
  const reason = failure ?? (reasons.length > 0 ? reasons.join('; ') : undefined);
  try {
    await state.recordRun({
      runId,
      status:
        failure !== undefined || failed > 0 || unsubscribed > 0 || topicless > 0 || disabled > 0
          ? 'incomplete'
          : 'completed',
      startedAt,
      finishedAt,
      summary: {
        kind: 'replay',
        source: 'parked',
        parkedFound: total('parked'),
        notificationsPublished: total('sent'),
        notificationsAlreadyDelivered: total('alreadyDelivered'),
        notificationsFailed: failed,
        notificationsParked: total('stillParked'),
        ...(reason !== undefined ? { reason } : {}),
      },
    });
  } catch (error) {
    log.warn('could not record the replay in the run history', { error: String(error) });
  }
}

/** The structured part of a rendered body (`newsAlerts`), or undefined when it cannot be read. */
function structuredOf(body: string): Record<string, unknown> | undefined {
  try {
    const structure = JSON.parse(body) as Record<string, unknown>;
    // The structured body is `default` (messages parked before it moved there carry it as `sqs`).
    const text = typeof structure.sqs === 'string' ? structure.sqs : structure.default;
    if (typeof text !== 'string') return undefined;
    const { newsAlerts } = JSON.parse(text) as { newsAlerts?: unknown };
    return typeof newsAlerts === 'object' && newsAlerts !== null ? (newsAlerts as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** Rule ids of a parked message, read from its structured body (for the ledger entry). */
function ruleIdsOf(body: string): string[] {
  const matches = structuredOf(body)?.matches;
  return (Array.isArray(matches) ? (matches as { ruleId?: unknown }[]) : []).flatMap((match) =>
    typeof match?.ruleId === 'string' ? [match.ruleId] : [],
  );
}

/** The article keys a digest's body lists (none for anything else). */
function digestArticleKeysOf(body: string): string[] {
  const structured = structuredOf(body);
  if (structured?.kind !== 'digest') return [];
  const groups = (structured.digest as { groups?: unknown } | undefined)?.groups;
  return (Array.isArray(groups) ? groups : []).flatMap((group: { entries?: unknown }) =>
    (Array.isArray(group?.entries) ? group.entries : []).flatMap((entry: { article?: { key?: unknown } }) =>
      typeof entry?.article?.key === 'string' ? [entry.article.key] : [],
    ),
  );
}

async function replayParked(context: CommandContext, options: ReplayOptions): Promise<void> {
  if (options.from !== undefined || options.to !== undefined)
    throw new UsageError('--parked replays parked alerts; it takes no --from/--to');
  if (options.force) throw new UsageError('--force goes with --from (a window older than the ledger remembers)');
  const log = stderrLog(context.output);
  const { target, state, notifier, audiences } = await wire(context, options, log);
  const deadLetterQueueUrl = workDeadLetterQueueOf(target);
  const abort = new AbortController();
  const lease = options.dryRun
    ? undefined
    : await takeReplayLease(state, await context.actor(), (error) => abort.abort(error), dispatchesOf(target, log));
  const tallies = new Map<string, ParkedTally>();
  /** Audiences whose topic's subscriptions could not be listed, with the error's name. */
  const uncheckable = new Map<string, string>();
  /** A dry run's list of the parked notifications it found, for a person to review one by one. */
  const review: { audienceId: string; articleKey: string; parkedAt: string; code: string; subject: string }[] = [];
  const progress = context.progress();
  let deadLetters: TakenDeadLetters | undefined;
  const startedAt = Date.now();
  let thrown: string | undefined;
  try {
    if (deadLetterQueueUrl !== undefined) {
      const sqs = await sqsClientOf(target);
      try {
        deadLetters = await takeWorkDeadLetters(sqs, deadLetterQueueUrl, {
          state,
          now: Date.now,
          dryRun: options.dryRun === true,
          audiences: options.audience === undefined ? undefined : new Set(audiences.keys()),
        });
      } finally {
        sqs.destroy();
      }
    }
    const parked: UndeliverableRecord[] = [];
    for (const audienceId of audiences.keys()) parked.push(...(await state.listUndeliverable(audienceId)));
    if (options.dryRun && deadLetters !== undefined) {
      // Not written in a dry run: counted as the parked alerts they would be (once per alert).
      const listed = new Set(parked.map((record) => deliveryId(record)));
      for (const record of deadLetters.records) {
        if (!audiences.has(record.audienceId) || listed.has(deliveryId(record))) continue;
        listed.add(deliveryId(record));
        parked.push(record);
      }
    }
    for (const audienceId of audiences.keys()) {
      tallies.set(audienceId, {
        parked: 0,
        alreadyDelivered: 0,
        sent: 0,
        wouldSend: 0,
        failed: 0,
        stillParked: 0,
        noSubscriber: 0,
        topicMissing: 0,
        audienceDisabled: 0,
      });
    }
    for (const record of parked) {
      const tally = tallies.get(record.audienceId);
      if (tally) tally.parked += 1;
    }
    // Anything a later run or replay delivered since it was parked is done: forget it, send nothing.
    const delivered = await state.findDelivered(parked);
    if (options.dryRun) {
      for (const record of parked) {
        if (delivered.has(deliveryId(record))) continue;
        review.push({
          audienceId: record.audienceId,
          articleKey: record.articleKey,
          parkedAt: new Date(record.failedAt).toISOString(),
          code: record.code,
          subject: record.subject,
        });
      }
    }
    const done = parked.filter((record) => delivered.has(deliveryId(record)));
    for (const record of done) {
      const tally = tallies.get(record.audienceId);
      if (tally) tally.alreadyDelivered += 1;
    }
    if (!options.dryRun && done.length > 0) await state.forgetUndeliverable(done);
    // A topic nobody is subscribed to (a deleted topic recreated by audiences repair, whose
    // subscriptions made outside the CLI could not be restored) would take the alerts, and the
    // ledger would count them delivered: they stay parked until someone subscribes again.
    // A topic that does not exist would refuse them again: they stay parked until it is repaired,
    // and a dry run says so instead of counting them as sent.
    const topics = await checkTopics(
      target,
      new Set(parked.filter((record) => !delivered.has(deliveryId(record))).map((record) => record.audienceId)),
      audiences,
      uncheckable,
      { subscribers: !options.toTopicWithoutSubscribers },
    );
    const messages: OutboundMessage[] = parked
      .filter((record) => !delivered.has(deliveryId(record)))
      .filter((record) => {
        // A disabled audience is sent nothing by a run or a window replay: its parked alerts wait too.
        const disabled = audiences.get(record.audienceId)?.enabled === false;
        const missing = topics.missing.has(record.audienceId);
        if (!disabled && !missing && !topics.withoutSubscribers.has(record.audienceId)) return true;
        const tally = tallies.get(record.audienceId);
        if (tally) {
          if (disabled) tally.audienceDisabled += 1;
          else if (missing) tally.topicMissing += 1;
          else tally.noSubscriber += 1;
          tally.stillParked += 1;
        }
        return false;
      })
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
        // A lost lease stops sending: another runner may be delivering now.
        signal: abort.signal,
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
          // A digest's notifications were marked parked in it when it was released: they are sent now.
          for (const { message } of batch) {
            const carried = digestArticleKeysOf(message.body);
            if (carried.length > 0) {
              await state.markDigestReplayed(message.key.audienceId, message.key.articleKey, carried, deliveredAt);
            }
          }
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
  } catch (error) {
    thrown = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
    throw error;
  } finally {
    progress.stop();
    if (lease !== undefined) {
      await recordParkedReplay(state, lease.lease.owner, startedAt, Date.now(), [...tallies.values()], log, thrown);
      await lease.release();
    }
  }
  const rows = [...tallies]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([audienceId, tally]) => ({ audienceId, ...tally }));
  const failed = rows.reduce((sum, row) => sum + row.failed, 0);
  const unsubscribed = rows.filter((row) => row.noSubscriber > 0);
  for (const row of unsubscribed) {
    const cannotTell = uncheckable.get(row.audienceId);
    context.output.warn(
      cannotTell === undefined
        ? `${row.audienceId}: its topic has no confirmed subscriber, so its ${row.noSubscriber} parked alert(s) stay parked (sent now they would reach nobody and count as delivered); subscribe the audience again, or confirm a pending subscription (${newsAlerts()} subscriptions list ${row.audienceId}), then replay --parked again, or add --to-topic-without-subscribers to send them anyway`
        : `${row.audienceId}: its topic's subscriptions could not be listed (${cannotTell}), so whether anyone would receive its ${row.noSubscriber} parked alert(s) is not known and they stay parked; allow sns:ListSubscriptionsByTopic, or add --to-topic-without-subscribers to send them anyway`,
    );
  }
  const disabled = rows.filter((row) => row.audienceDisabled > 0);
  for (const row of disabled) {
    context.output.warn(
      `${row.audienceId}: the audience is disabled, so its ${row.audienceDisabled} parked alert(s) stay parked; enable it with '${newsAlerts()} audiences update ${row.audienceId} --enable', then replay --parked again`,
    );
  }
  const topicless = rows.filter((row) => row.topicMissing > 0);
  for (const row of topicless) {
    context.output.warn(
      `${row.audienceId}: its topic does not exist, so its ${row.topicMissing} parked alert(s) stay parked; make it again with '${newsAlerts()} audiences repair ${row.audienceId}', then replay --parked again`,
    );
  }
  const problems = [
    failed > 0
      ? `${failed} parked alert(s) could not be sent and stay parked; check the topic of ${rows
          .filter((row) => row.failed > 0)
          .map((row) => `${row.audienceId} (${newsAlerts()} audiences show ${row.audienceId})`)
          .join(', ')}`
      : '',
    topicless.length > 0 && !options.dryRun
      ? `${topicless.reduce((sum, row) => sum + row.topicMissing, 0)} parked alert(s) stay parked: the topic of ${topicless.map((row) => row.audienceId).join(', ')} does not exist (audiences repair)`
      : '',
    unsubscribed.length > 0 && !options.dryRun
      ? `${unsubscribed.reduce((sum, row) => sum + row.noSubscriber, 0)} parked alert(s) stay parked: no known subscriber on the topic of ${unsubscribed.map((row) => row.audienceId).join(', ')}`
      : '',
    disabled.length > 0 && !options.dryRun
      ? `${disabled.reduce((sum, row) => sum + row.audienceDisabled, 0)} parked alert(s) stay parked: ${disabled.map((row) => row.audienceId).join(', ')} ${disabled.length === 1 ? 'is' : 'are'} disabled`
      : '',
  ].filter((text) => text !== '');
  const failure = problems.length > 0 ? new OperationFailedError(problems.join('; ')) : undefined;
  const fromDeadLetters =
    deadLetters === undefined
      ? undefined
      : {
          items: deadLetters.items,
          alerts: deadLetters.records.length,
          leftForOtherAudiences: deadLetters.leftForOtherAudiences,
          unreadable: deadLetters.unreadable,
          notDeleted: deadLetters.notDeleted,
        };
  if ((deadLetters?.notDeleted ?? 0) > 0) {
    context.output.warn(
      `work dead-letter queue: ${deadLetters?.notDeleted} item(s) were parked but SQS did not delete them; they come back and the next 'replay --parked' parks them again (it sends nothing twice)`,
    );
  }
  for (const unreadable of deadLetters?.unreadable ?? []) {
    context.output.warn(
      `work dead-letter queue: message ${unreadable.messageId} is not a work item and stays in the queue (${unreadable.reason}); inspect it in the SQS console and delete it once handled`,
    );
  }
  const document = {
    target: target.label,
    dryRun: options.dryRun === true,
    parked: true,
    ...(fromDeadLetters ? { workDeadLetters: fromDeadLetters } : {}),
    audiences: rows,
    ...(options.dryRun ? { alerts: review } : {}),
  };
  // Under --json a failure is one document: ok: false and the error, with what was sent.
  context.output.result(
    failure === undefined ? document : { ...failureDocument(failureOf(failure)), ...document },
    () => {
      if (fromDeadLetters !== undefined && fromDeadLetters.items > 0) {
        context.output.caption(
          `${options.dryRun ? 'Would take' : 'Took'} ${fromDeadLetters.items} work item(s) with ${fromDeadLetters.alerts} alert(s) from the work dead-letter queue ${options.dryRun ? 'and park them' : 'and parked them'} (code ${workItemDeadLetteredCode}); they are counted below.`,
        );
      }
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
      if (options.dryRun && review.length > 0) {
        // What the run's "review them" points to: each parked notification, oldest first.
        context.output.table(
          ['AUDIENCE', 'ARTICLE', 'PARKED AT', 'CODE', 'SUBJECT'],
          review.map((entry) => [entry.audienceId, entry.articleKey, entry.parkedAt, entry.code, entry.subject]),
        );
      }
    },
  );
  if (failure !== undefined) throw failure;
}

/**
 * The work dead-letter queue of a sharded deployment, when the target has one: the sandbox
 * descriptor's `workDeadLetterQueueUrl` (a sharded sandbox).
 */
function workDeadLetterQueueOf(target: Target): string | undefined {
  return target.kind === 'local' ? target.descriptor.names.workDeadLetterQueueUrl : target.names.workDeadLetterQueueUrl;
}

/**
 * The audiences among `audienceIds` whose topic does not exist (`missing`), and, with
 * `subscribers`, those whose topic has no confirmed subscription (the sandbox's audit queue does
 * not count: it is no subscriber) or whose subscriptions cannot be listed (the error's name goes
 * in `unknown`).
 */
async function checkTopics(
  target: Target,
  audienceIds: ReadonlySet<string>,
  audiences: ReadonlyMap<string, Audience>,
  unknown: Map<string, string>,
  options: { readonly subscribers: boolean },
): Promise<{ withoutSubscribers: Set<string>; missing: Set<string> }> {
  const { topicSubscriptions } = await import('./audience-topics.ts');
  const { deliveringSubscriptions } = await import('./audit-queues.ts');
  const withoutSubscribers = new Set<string>();
  const missing = new Set<string>();
  for (const audienceId of audienceIds) {
    const topicArn = audiences.get(audienceId)?.topicArn;
    if (topicArn === undefined) continue;
    let subscriptions: Awaited<ReturnType<typeof topicSubscriptions>>;
    try {
      subscriptions = await topicSubscriptions(target.clients.sns, topicArn);
    } catch (error) {
      const name = error instanceof Error ? error.name : 'Error';
      if (name === 'NotFoundException' || name === 'NotFound') {
        missing.add(audienceId);
        continue;
      }
      // Otherwise (no permission to list, throttling) nobody knows: keep them parked and say so.
      if (options.subscribers) {
        unknown.set(audienceId, name);
        withoutSubscribers.add(audienceId);
      }
      continue;
    }
    const delivering = deliveringSubscriptions(target, audienceId, subscriptions);
    if (options.subscribers && delivering.length === 0) withoutSubscribers.add(audienceId);
  }
  return { withoutSubscribers, missing };
}

async function sqsClientOf(target: Target): Promise<SQSClient> {
  // Loaded only when there is a dead-letter queue to read: replay's other paths never need SQS.
  const { SQSClient } = await import('@aws-sdk/client-sqs');
  return new SQSClient({ ...target.clients.config });
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
    .option(
      '--force',
      'with --from: replay a window that starts further back than the delivery ledger remembers (alerts delivered then go out again)',
    )
    .option(
      '--parked',
      'send the parked alerts (refused for good by SNS, held back for an unpublishable link, given up by the sharded publisher, or in its work dead-letter queue) once reviewed',
    )
    .option(
      '--to-topic-without-subscribers',
      'send parked alerts to an audience whose topic has no confirmed subscriber anyway (they would reach nobody and count as delivered): with --parked, kept parked otherwise; with --from, the replay is refused otherwise',
    )
    .addHelpText(
      'after',
      `
Replay holds the run lease while it delivers (a scheduled run waits, and vice versa), checks the
delivery ledger for every alert, and records each one as soon as SNS accepts it: replaying twice,
or a run after it, sends nothing twice. The watermark is not moved. The ledger remembers an
alert for LEDGER_RETENTION_DAYS (14 by default) after it was delivered: a window that starts
further back is refused unless you add --force, since alerts delivered then would go out again.

Each alert goes out as the scheduled run would send it now: audiences in digest mode, inside
their quiet hours (urgent matches excepted) or over their daily budget get it in their next
digest (HELD), recorded in the ledger like a sent alert; digests of the replayed audiences that
are due are sent at the end. Ctrl-C (or SIGTERM) stops it; what was sent or held is recorded.

Examples:
  news-alerts replay --from 2026-11-21T06:00:00Z --to 2026-11-21T18:00:00Z --dry-run
  news-alerts replay --from 12h --audience markets
  news-alerts replay --parked --audience partner-feed

With publishMode sharded, --parked first takes the work items in the work dead-letter queue
(ones the publisher failed on until SQS gave up) and parks their alerts (code
WorkItemDeadLettered), deleting each item only once that is recorded; a message there that is
not a work item is named by its id and left in the queue. --dry-run reads the queue and changes
nothing.`,
    )
    .action(
      // `--audience ''` (an unset shell variable) names no audience: collectList refuses it.
      action<ReplayOptions>((context, _args, options) =>
        options.parked ? replayParked(context, options) : replayWindow(context, options),
      ),
    );
}
