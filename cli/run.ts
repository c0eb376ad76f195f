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
import { type RunSummary, runAlertCycle } from '#core/alert-run';
import { action, integerOption } from './command.ts';
import type { CommandContext } from './context.ts';
import { OperationFailedError } from './errors.ts';
import { stderrLog } from './log.ts';
import { formatDuration, formatInstant } from './output.ts';
import type { LocalTarget } from './target.ts';
import { runRow, runTableHead, runTableRow, stateStoreOf } from './watermark.ts';

/** Local runs have no Lambda time limit; the sandbox gives them the same budget as `npm start`. */
const localRunBudgetMs = 15 * 60_000;

async function runLocally(context: CommandContext, target: LocalTarget): Promise<RunSummary> {
  const config = await target.alertRunConfig();
  const { documents, sns, secrets } = target.clients;
  const dependencies = createAlertRunDependencies(config, { documents, sns, secrets }, stderrLog(context.output));
  const deadline = Date.now() + localRunBudgetMs;
  try {
    return await runAlertCycle(dependencies, config.run, {
      runId: `cli-${randomUUID()}`,
      remainingTimeMs: () => deadline - Date.now(),
    });
  } finally {
    await dependencies.news.close();
  }
}

const number = (value: unknown): number => (typeof value === 'number' ? value : 0);

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
    [
      'watermark',
      `${formatInstant(summary.watermarkBefore as number | undefined) || '(none)'} → ${formatInstant(summary.watermarkAfter as number | undefined) || '(unchanged)'}`,
    ],
    ['duration', formatDuration(number(summary.finishedAt) - number(summary.startedAt))],
    [
      'articles fetched / new / matched',
      `${number(summary.articlesFetched)} / ${number(summary.articlesNew)} / ${number(summary.articlesMatched)}`,
    ],
    ['alerts sent', number(summary.notificationsPublished)],
    ['already delivered (skipped)', number(summary.notificationsAlreadyDelivered)],
    [
      'failed / parked / deferred',
      `${number(summary.notificationsFailed)} / ${number(summary.notificationsParked)} / ${number(summary.notificationsDeferred)}`,
    ],
    ['invalid rules / audiences', `${number(summary.invalidRules)} / ${number(summary.invalidAudiences)}`],
  ]);
  context.output.table(
    ['AUDIENCE', 'MATCHED', 'SENT', 'ALREADY DELIVERED', 'FAILED', 'PARKED'],
    Object.entries(audiences)
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([audienceId, tally]) => [
        audienceId,
        number(tally.matched),
        number(tally.published),
        number(tally.alreadyDelivered),
        number(tally.failed),
        number(tally.parked),
      ]),
    'no alerts matched',
  );
}

async function runNow(context: CommandContext): Promise<void> {
  const target = await context.target();
  let summary: Record<string, unknown>;
  if (target.kind === 'local') {
    summary = { ...(await runLocally(context, target)) };
  } else {
    context.output.note(
      `invoking ${target.names.alertFunctionName ?? 'the alert function'} (waits for the run to finish) ...`,
    );
    const outcome = await target.invokeAlertFunction();
    if (!outcome.ok) {
      throw new OperationFailedError(
        `the alert run failed: ${outcome.errorType}: ${outcome.errorMessage} (see the function's log group)`,
      );
    }
    summary = (
      typeof outcome.payload === 'object' && outcome.payload !== null ? outcome.payload : { result: outcome.payload }
    ) as Record<string, unknown>;
  }
  context.output.result({ target: target.label, summary }, () => printSummary(context, summary));
  const status = summary.status;
  if (status === 'skipped')
    throw new OperationFailedError(`the run was skipped: ${String(summary.reason ?? 'another run holds the lease')}`);
  if (status === 'incomplete' || status === 'failed') {
    throw new OperationFailedError(`the run ended ${status}: ${String(summary.reason ?? '')}`);
  }
}

async function listRuns(context: CommandContext, _args: readonly unknown[], options: { limit: number }): Promise<void> {
  const target = await context.target();
  const rows = (await stateStoreOf(context, target).recentRuns(options.limit)).map(runRow);
  context.output.result(rows, () => context.output.table(runTableHead, rows.map(runTableRow), 'no runs recorded'));
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
Its status is completed or checkpointed (exit 0), incomplete or failed (exit 1).`,
    )
    .action(action(runNow));

  const runs = program.command('runs').description('the alert run history');
  runs
    .command('list')
    .description('recent runs and replays, newest first')
    .option('--limit <n>', 'how many', integerOption(1, 1000), 20)
    .action(action(listRuns));
}
