/**
 * `news-alerts watermark show|set|rewind`: where the alert run will continue from, how far behind
 * now that is, and the last runs; and moving it by hand. Moving it uses the state store's
 * `setWatermark` with the optimistic lock, so a run that advanced it in the meantime makes the
 * change fail instead of being overwritten.
 */
import type { Command } from 'commander';
import { MalformedWatermarkError } from '#aws/dynamo-state-store';
import type { RunRecord, Watermark } from '#core/ports';
import { action, integerOption } from './command.ts';
import type { CommandContext } from './context.ts';
import { UsageError } from './errors.ts';
import { newsAlerts } from './hints.ts';
import { describeLease, leaseJson } from './lease.ts';
import { type Column, formatDuration, formatInstant } from './output.ts';
import { stateStoreOf } from './state-store.ts';
import type { Target } from './target.ts';
import { parseInstant, parseSpan, workable } from './window.ts';

export { stateStoreOf };

/** The sum of counts a summary has; undefined when it has none of them (an older or failed run). */
const sumOf = (...counts: readonly (number | undefined)[]): number | undefined =>
  counts.every((count) => count === undefined)
    ? undefined
    : counts.reduce<number>((sum, count) => sum + (count ?? 0), 0);

/** One run-history entry for tables and JSON. */
export function runRow(run: RunRecord) {
  const summary = run.summary;
  const number = (name: string): number | undefined =>
    typeof summary[name] === 'number' ? (summary[name] as number) : undefined;
  return {
    runId: run.runId,
    // `replay --parked` is a replay too (cli/replay.ts), of parked alerts instead of a window.
    kind: summary.kind === 'replay' ? (summary.source === 'parked' ? 'replay --parked' : 'replay') : 'run',
    status: run.status,
    startedAt: new Date(run.startedAt).toISOString(),
    durationMs: run.finishedAt - run.startedAt,
    articlesNew: number('articlesNew'),
    published: number('notificationsPublished'),
    /** Matches kept for a later digest (digest mode, quiet hours, daily budget), and why. */
    held: number('notificationsHeld'),
    heldForDigest: number('heldForDigest'),
    heldForQuietHours: number('heldForQuietHours'),
    budgetOverflow: number('budgetOverflow'),
    digestsSent: number('digestsSent'),
    alreadyDelivered: number('notificationsAlreadyDelivered'),
    failed: number('notificationsFailed'),
    // Alerts and digest messages alike: SNS refused them for good and `replay --parked` sends them.
    parked: sumOf(number('notificationsParked'), number('digestsParked')),
    /** Provider pages on which no item could be read (poison pages): their articles were not delivered. */
    pagesParked: number('pagesParked'),
    watermarkAfter: number('watermarkAfter'),
    reason: typeof summary.reason === 'string' ? summary.reason : undefined,
  };
}

/**
 * The run history's columns. On a narrow terminal the counts a failure is not read from give way
 * first (leaving the table a table, with a note of what was left out); REASON wraps.
 */
export const runTableHead: readonly (string | Column)[] = [
  { head: 'STARTED', id: true },
  'KIND',
  'STATUS',
  { head: 'DURATION', optional: true },
  'NEW',
  'SENT',
  { head: 'HELD', optional: true },
  { head: 'DIGESTS', optional: true },
  { head: 'DUPES SKIPPED', optional: true },
  'FAILED',
  'PARKED',
  { head: 'REASON', wrap: true },
];

/** PARKED: parked notifications, and the provider pages parked (`2 + 1 page(s)`) when there are any. */
export const parkedCell = (row: ReturnType<typeof runRow>): number | string | undefined =>
  (row.pagesParked ?? 0) > 0 ? `${row.parked ?? 0} + ${row.pagesParked} page(s)` : row.parked;

export const runTableRow = (row: ReturnType<typeof runRow>) => [
  row.startedAt.replace('.000Z', 'Z'),
  row.kind,
  row.status,
  formatDuration(row.durationMs),
  row.articlesNew,
  row.published,
  row.held,
  row.digestsSent,
  row.alreadyDelivered,
  row.failed,
  parkedCell(row),
  row.reason,
];

const watermarkJson = (watermark: Watermark | undefined, now: number) =>
  watermark === undefined
    ? null
    : {
        ...watermark,
        atIso: new Date(watermark.at).toISOString(),
        lagMs: now - watermark.at,
        aheadOfClock: watermark.at > now,
      };

/** How long ago `at` was, for people: `3h 05m ago`, or `in 16h 05m` for an instant still to come. */
export const sinceText = (at: number, now: number): string =>
  at <= now ? `${formatDuration(now - at)} ago` : `in ${formatDuration(at - now)}, ahead of the clock`;

/**
 * The warning for a watermark later than now: a sandbox run with `--now` in the future (or a clock
 * that was ahead) put it there, and until it is moved back runs take every article before it as
 * read, so alerts for what is published until then would never be sent.
 */
export const watermarkAheadWarning = (at: number, now: number): string =>
  `the watermark ${formatInstant(at)} is ${formatDuration(at - now)} ahead of this machine's clock (a run with --now in the future, or a clock that was ahead, moved it there). Runs take every article published before it as already read, so alerts for articles published until then would never be sent: move it back with '${newsAlerts()} watermark set <when>' (e.g. 1h)`;

async function showWatermark(
  context: CommandContext,
  _args: readonly unknown[],
  options: { runs: number },
): Promise<void> {
  const target = await context.target();
  const state = stateStoreOf(context, target);
  const [watermark, runs, lease] = await Promise.all([
    state.readWatermark(),
    state.recentRuns(options.runs),
    state.readLease(),
  ]);
  const now = Date.now();
  const rows = runs.map(runRow);
  const lastCompleted = runs.find((run) => run.status === 'completed' && run.summary.kind !== 'replay');
  // On stderr, also under --json: a watermark ahead of the clock silently skips what comes before it.
  if (watermark !== undefined && watermark.at > now) context.output.warn(watermarkAheadWarning(watermark.at, now));
  context.output.result(
    {
      target: target.label,
      watermark: watermarkJson(watermark, now),
      // A held lease is why a run is skipped: show it where people look when runs stop.
      lease: leaseJson(lease, now),
      lastCompletedRun: lastCompleted ? runRow(lastCompleted) : null,
      runs: rows,
    },
    () => {
      const leaseField = ['run lease', lease === undefined ? 'free' : describeLease(lease, now)] as const;
      const ahead = watermark !== undefined && watermark.at > now;
      if (watermark === undefined) {
        context.output.caption('No watermark yet: the first run starts INITIAL_LOOKBACK_MINUTES back from now.');
        context.output.fields([['watermark', '(none)'], leaseField]);
      } else {
        context.output.fields([
          ['watermark', formatInstant(watermark.at)],
          [
            'lag',
            ahead
              ? `none: ${formatDuration(watermark.at - now)} AHEAD of the clock`
              : formatDuration(now - watermark.at),
          ],
          ['version', watermark.version],
          ['set by', watermark.runId],
          ['set at', formatInstant(watermark.updatedAt)],
          [
            'last completed run',
            lastCompleted
              ? `${formatInstant(lastCompleted.finishedAt)} (${sinceText(lastCompleted.finishedAt, now)})`
              : '(none in history)',
          ],
          leaseField,
        ]);
      }
      context.output.caption('Recent runs:');
      context.output.table(runTableHead, rows.map(runTableRow), 'no runs recorded');
    },
  );
}

interface MoveOptions {
  yes?: boolean;
  force?: boolean;
}

/** Moves the watermark to `at` after confirmation, with the optimistic lock. */
async function moveWatermark(
  context: CommandContext,
  target: Target,
  at: number,
  current: Watermark | undefined,
  options: MoveOptions,
  /** The stored item is malformed (`current` is undefined): replaced whole. */
  malformed = false,
): Promise<void> {
  const now = Date.now();
  if (at > now) throw new UsageError(`${formatInstant(at)} is in the future; the watermark must not pass now`);
  // Alerts older than the ledger's memory would be sent again if their articles were re-read.
  let ledgerDays: number | undefined;
  try {
    ledgerDays = (await target.alertRunConfig()).ledgerRetentionDays;
  } catch (error) {
    context.output.warn(
      `could not read the run's configuration (${String(error)}); the ledger retention was not checked`,
    );
  }
  if (ledgerDays !== undefined && at < now - ledgerDays * 86_400_000 && !options.force) {
    throw new UsageError(
      `${formatInstant(at)} is more than the delivery ledger's ${ledgerDays} days back: alerts delivered before then are no longer in the ledger and would be sent again. Add --force if that is what you want ('${newsAlerts()} replay --from … --force' does the same for one window, without moving the watermark).`,
    );
  }
  const forward = current !== undefined && at > current.at;
  const consequence = forward
    ? `Articles published before ${formatInstant(at)} that were not handled yet will NOT be alerted by the run (replay can send them later).`
    : `The next run reads again from ${formatInstant(at)} (minus the late-arrival overlap); the delivery ledger keeps alerts already sent from going out twice.`;
  await context.confirm(
    `Move the watermark of ${target.label} from ${current ? formatInstant(current.at) : '(none)'} to ${formatInstant(at)}? ${consequence}`,
    options.yes,
  );
  const actor = await context.actor();
  const state = stateStoreOf(context, target);
  const updated = malformed
    ? await state.replaceMalformedWatermark(at, `cli:${actor}`, Date.now())
    : await state.setWatermark(at, `cli:${actor}`, Date.now(), current);
  context.output.result(
    {
      target: target.label,
      previous: watermarkJson(current, now),
      // `previous` is null for a damaged item as for none: this says which.
      ...(malformed ? { replacedMalformed: true } : {}),
      watermark: watermarkJson(updated, now),
    },
    () => {
      context.output.line(
        `watermark moved from ${current ? `${formatInstant(current.at)} (version ${current.version})` : malformed ? '(a malformed item, replaced)' : '(none)'} to ${formatInstant(updated.at)} (version ${updated.version})`,
      );
    },
  );
}

async function setWatermark(context: CommandContext, args: readonly unknown[], options: MoveOptions): Promise<void> {
  const [when] = args as [string];
  const target = await context.target();
  const timeZone = (await target.alertRunConfig()).provider.timeZone;
  const at = parseInstant(when, 'watermark', 'start', timeZone, Date.now());
  let current: Watermark | undefined;
  let malformed = false;
  try {
    current = await stateStoreOf(context, target).readWatermark();
  } catch (error) {
    // What the run's error tells ops to do: a damaged item is replaced, as if there were none.
    if (!(error instanceof MalformedWatermarkError)) throw error;
    context.output.warn(`${error.message}; setting it replaces the damaged item`);
    malformed = true;
  }
  await moveWatermark(context, target, at, current, options, malformed);
}

async function rewindWatermark(context: CommandContext, args: readonly unknown[], options: MoveOptions): Promise<void> {
  const [by] = args as [string];
  const span = parseSpan(by);
  if (span === undefined || span <= 0) throw new UsageError(`rewind "${by}": give a span such as 90m, 6h, 2d or 1w`);
  const target = await context.target();
  const current = await stateStoreOf(context, target).readWatermark();
  if (current === undefined) throw new UsageError('there is no watermark to rewind yet; use watermark set <when>');
  await moveWatermark(context, target, workable(current.at - span, 'rewind', by), current, options);
}

/** Registers `watermark`. */
export function registerWatermark(program: Command): void {
  const watermark = program
    .command('watermark')
    .description('show the watermark, its lag and the last runs; set or rewind it');

  watermark
    .command('show')
    .description('the watermark, how far it lags behind now, and the most recent runs')
    .option('--runs <n>', 'how many recent runs to show', integerOption(1, 100), 5)
    .action(action(showWatermark));

  watermark
    .command('set')
    .description('move the watermark to an instant (asks first)')
    .argument('<when>', 'date-time with zone (2026-11-21T09:00:00Z), provider date (its start), or span back (6h)')
    .option('-y, --yes', 'do not ask for confirmation')
    .option('--force', 'allow moving it back further than the delivery ledger remembers')
    .action(action(setWatermark));

  watermark
    .command('rewind')
    .description('move the watermark back by a span (asks first); the next run re-reads that span')
    .argument('<span>', 'how far back: 90m, 6h, 2d, 1w')
    .option('-y, --yes', 'do not ask for confirmation')
    .option('--force', 'allow moving it back further than the delivery ledger remembers')
    .action(action(rewindWatermark));
}
