/**
 * `news-alerts console`: the ops console, a local web page for what ops ask in a day (rules with
 * explain and history, audiences with holds, test send and repair, runs and replay, articles,
 * deliveries), against the same target as every other command (--local, --stack, --profile...).
 * It listens on 127.0.0.1 only, on a random port, behind a one-time token in the URL it prints
 * (docs/console.md). The server and its pages (cli/console/) are loaded only by this command.
 */
import type { Command } from 'commander';
import { action, integerOption } from './command.ts';
import type { CommandContext } from './context.ts';
import { stderrLog } from './log.ts';

interface ConsoleOptions {
  port: number;
}

/** The CLI as this process was started, with the target options, for commands the console runs. */
function cliInvocation(context: CommandContext): { command: string; args: string[] } {
  const options = context.options;
  const target: string[] = [];
  if (options.sandboxFile !== undefined) target.push('--sandbox-file', options.sandboxFile);
  else if (options.local) target.push('--local');
  else {
    target.push('--stack', options.stack);
    if (options.region) target.push('--region', options.region);
    if (options.profile) target.push('--profile', options.profile);
  }
  return { command: process.execPath, args: [process.argv[1] ?? '', ...target] };
}

async function runConsole(context: CommandContext, _args: readonly unknown[], options: ConsoleOptions): Promise<void> {
  const [{ startConsole }, { newKeys }] = await Promise.all([
    import('./console/server.ts'),
    import('./console/security.ts'),
  ]);
  const target = await context.target();
  const running = await startConsole(
    {
      target,
      actor: await context.actor(),
      keys: newKeys(),
      log: stderrLog(context.output),
      cli: cliInvocation(context),
      now: () => Date.now(),
    },
    options.port,
  );
  context.output.result({ url: running.url, port: running.port, target: target.label }, () => {
    context.output.line(`news-alerts console on ${target.label}`);
    context.output.line(`open: ${running.url}`);
    context.output.note('Only this machine can connect; the token in the URL is new each start. Ctrl-C stops it.');
  });
  await new Promise<void>((resolve) => {
    const stop = () => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      void running.close().then(resolve);
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
}

/** Registers `console`. */
export function registerConsole(program: Command): void {
  program
    .command('console')
    .description(
      'the ops console: a local web page (loopback, one-time token) for rules, audiences, runs, articles, deliveries',
    )
    .option('--port <n>', 'port on 127.0.0.1 (default: one the system picks)', integerOption(0, 65_535), 0)
    .addHelpText(
      'after',
      `
Prints a URL such as http://127.0.0.1:41234/?token=… and serves until Ctrl-C. Open it in a browser
on this machine: the token sets a cookie, and every page's address can then be shared with people
on the same machine (an SSH tunnel must use the console's own port on both ends: give it --port).
Rule edits, restore, repair and replay show what changes and need a confirmation; a test send goes
at once. Same target options as every command:
  news-alerts --local console
  news-alerts --stack NewsAlerts --profile ops console
Pages and security: docs/console.md`,
    )
    .action(action(runConsole));
}
