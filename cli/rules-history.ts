/**
 * `news-alerts rules history <ruleId>` and `rules restore <ruleId> --version N`: who changed a
 * rule, when, and what changed, and putting an earlier version back (shown as a diff, confirmed,
 * written like any change and recorded as `restored`). History: cli/workbench/history.ts.
 */
import type { Command } from 'commander';
import { HISTORY_LIMITS } from '#core/workbench/rule-history';
import { action } from './command.ts';
import type { CommandContext } from './context.ts';
import { describeChange } from './items.ts';
import { formatInstant } from './output.ts';

/** History reads the audience and rule parsing of the workbench: loaded by these two commands only. */
const workbench = () => import('./workbench/history.ts');

async function showHistory(context: CommandContext, args: readonly unknown[]): Promise<void> {
  const [ruleId] = args as [string];
  const target = await context.target();
  const { ruleHistory } = await workbench();
  const view = await ruleHistory(target, ruleId, Date.now());
  if (view.recordedFirst !== undefined) {
    context.output.note(
      `rule ${ruleId} had no history yet (written before history was kept, or not by the CLI or the console): recorded as found, as version ${view.recordedFirst}`,
    );
  }
  if (view.recordedOutsideEdit !== undefined) {
    context.output.warn(
      `rule ${ruleId} was changed outside the CLI and the console (DynamoDB console?): recorded as version ${view.recordedOutsideEdit}`,
    );
  }
  const versions = view.versions.map((version) => ({
    version: version.label,
    at: new Date(version.at).toISOString(),
    actor: version.actor,
    action: version.action,
    ...(version.restoredFrom === undefined ? {} : { restoredFrom: version.restoredFrom }),
    changes: version.changes,
    item: version.item ?? null,
  }));
  context.output.result({ ruleId, deleted: view.current === undefined, versions }, () => {
    context.output.table(
      ['VERSION', 'WHEN', 'WHO', 'ACTION', 'CHANGES'],
      view.versions.map((version) => [
        version.label,
        formatInstant(version.at),
        version.actor,
        version.restoredFrom === undefined ? version.action : `restored ${version.restoredFrom}`,
        version.changes.map((change) => describeChange(change)).join('; '),
      ]),
      `rule ${ruleId} has no recorded history`,
    );
  });
}

async function restoreVersion(
  context: CommandContext,
  args: readonly unknown[],
  options: { version: string; yes?: boolean },
): Promise<void> {
  const [ruleId] = args as [string];
  const target = await context.target();
  const { applyRestore, planRestore } = await workbench();
  const plan = await planRestore(target, ruleId, options.version, Date.now());
  if (plan.current !== undefined && plan.changes.length === 0) {
    context.output.result({ ruleId, action: 'unchanged', restoredFrom: plan.label, changes: [] }, () =>
      context.output.line(`unchanged ${ruleId}: it is version ${plan.label} already`),
    );
    return;
  }
  context.output.note(`restoring ${ruleId} to version ${plan.label} changes:`);
  for (const change of plan.changes) context.output.note(`  ${describeChange(change)}`);
  await context.confirm(
    `Restore rule ${ruleId} to version ${plan.label} (${plan.changes.length} change(s) above)?`,
    options.yes,
  );
  const result = await applyRestore(target, plan, { actor: await context.actor(), now: Date.now() });
  context.output.result(
    {
      ruleId,
      action: 'restored',
      restoredFrom: plan.label,
      version: result.version,
      previousVersion: result.previousVersion,
      changes: plan.changes,
    },
    () => context.output.line(`restored ${ruleId} to version ${plan.label}: now version ${result.version}`),
  );
}

/** Registers `rules history` and `rules restore`. */
export function registerHistory(rules: Command): void {
  rules
    .command('history')
    .description('who changed a rule, when and what changed (newest first); restore with rules restore')
    .argument('<ruleId>')
    .addHelpText(
      'after',
      `
Every write of the CLI and the console records the new version with its actor and time, in the
same transaction as the rule. A rule edited in the DynamoDB console is recorded when the CLI or the
console next reads its history or writes it (as 3.1: an edit on top of version 3). The newest
${HISTORY_LIMITS.versionsPerRule} versions are kept per rule, each for ${HISTORY_LIMITS.retentionDays} days.

Example:
  news-alerts rules history markets-rates --json`,
    )
    .action(action(showHistory));

  rules
    .command('restore')
    .description('put an earlier version of a rule back (shows the changes, asks first)')
    .argument('<ruleId>')
    .requiredOption('--version <n>', "the version to restore, as 'rules history' lists it (3, or 3.1)")
    .option('-y, --yes', 'do not ask for confirmation')
    .addHelpText(
      'after',
      `
Example:
  news-alerts rules restore markets-rates --version 3 --yes`,
    )
    .action(action(restoreVersion));
}
