/**
 * `news-alerts holds [audienceId]`: what is held for an audience (quiet hours, digest, daily
 * budget) and when each goes out, planned from the audience's CURRENT settings, as the next run
 * plans it. After `audiences update` changes quiet hours, mode, digest times or budget, this shows
 * the new release times at once, and the next run sends what the settings no longer hold.
 */
import type { Command } from 'commander';
import { action } from './command.ts';
import type { CommandContext } from './context.ts';
import { stderrLog } from './log.ts';
import { formatInstant } from './output.ts';
import { goesOut, listHolds } from './workbench/holds.ts';

async function showHolds(context: CommandContext, args: readonly unknown[]): Promise<void> {
  const [audienceId] = args as [string | undefined];
  const target = await context.target();
  const now = Date.now();
  const { holds, invalid } = await listHolds(target, audienceId, now, stderrLog(context.output));
  for (const problem of invalid) context.output.warn(problem);
  const document = holds.map((audience) => ({
    audienceId: audience.audienceId,
    ...(audience.blocked === undefined ? {} : { blocked: audience.blocked }),
    held: audience.held.map((held) => ({
      articleKey: held.articleKey,
      title: held.title,
      rules: held.ruleIds,
      reason: held.reason,
      heldAt: new Date(held.heldAt).toISOString(),
      ...(held.releaseAt === undefined ? {} : { releaseAt: new Date(held.releaseAt).toISOString() }),
      when: held.when,
      ...(held.cause === undefined ? {} : { cause: held.cause }),
      urgent: held.urgent,
    })),
    unfinishedReleases: audience.unfinishedReleases.map((release) => ({
      releaseAt: new Date(release.releaseAt).toISOString(),
      articles: release.articles,
    })),
  }));
  context.output.result({ target: target.label, at: new Date(now).toISOString(), audiences: document }, () => {
    const rows = holds.flatMap((audience) =>
      audience.held.map((held) => [
        audience.audienceId,
        held.reason,
        formatInstant(held.heldAt),
        goesOut(held, audience, formatInstant),
        held.articleKey,
        held.title,
      ]),
    );
    context.output.table(
      ['AUDIENCE', 'REASON', 'HELD', 'GOES OUT', 'ARTICLE', 'TITLE'],
      rows,
      audienceId === undefined ? 'nothing is held' : `nothing is held for ${audienceId}`,
    );
    for (const audience of holds) {
      for (const release of audience.unfinishedReleases) {
        context.output.note(
          `${audience.audienceId}: a digest release of ${formatInstant(release.releaseAt)} (${release.articles} article(s)) was interrupted; the next run finishes it`,
        );
      }
    }
  });
}

/** Registers `holds`. */
export function registerHolds(program: Command): void {
  program
    .command('holds')
    .description('held alerts (quiet hours, digest, daily budget) per audience, with when each goes out')
    .argument('[audienceId]', 'one audience (default: every audience that holds something)')
    .addHelpText(
      'after',
      `
GOES OUT is planned from the audience's current settings, exactly as the next run plans it: change
quiet hours, delivery mode, digest times or the daily budget with 'audiences update' and it changes
here at once; "next run (settings changed)" means the next run sends it because of that change.
'deliveries <audienceId> --article <key>' tells afterwards what became of it.

Examples:
  news-alerts holds
  news-alerts holds seoul-chips --json`,
    )
    .action(action(showHolds));
}
