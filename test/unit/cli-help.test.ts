/**
 * What `--help` shows is what people may type: an operand a command takes only to refuse it (a
 * Slack webhook URL or an API key pasted onto the command line) is refused by the command with
 * where the secret must come from, and is never listed as an argument.
 */
import type { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { UsageError } from '../../cli/errors.ts';
import { buildProgram } from '../../cli/program.ts';

/** Every command of the tree with its full name (`subscriptions add`). */
function commandsOf(command: Command, prefix = ''): { name: string; command: Command }[] {
  return command.commands.flatMap((child) => {
    const name = `${prefix}${child.name()}`;
    return [{ name, command: child }, ...commandsOf(child, `${name} `)];
  });
}

/** Runs the program in this process; resolves to what the action threw (or undefined). */
async function thrownBy(args: readonly string[]): Promise<unknown> {
  const program = await buildProgram(args);
  try {
    await program.parseAsync(['node', 'news-alerts', ...args]);
    return undefined;
  } catch (error) {
    return error;
  }
}

describe('--help', () => {
  it('lists no argument a command only takes to refuse it', async () => {
    const program = await buildProgram();
    const commands = commandsOf(program);
    expect(commands.length).toBeGreaterThan(40);
    const listed = commands.flatMap(({ name, command }) =>
      command.registeredArguments
        .filter((argument) => /refuse/i.test(`${argument.name()} ${argument.description}`))
        .map((argument) => `${name} <${argument.name()}>: ${argument.description}`),
    );
    expect(listed).toEqual([]);
    const help = (name: string) => commands.find((entry) => entry.name === name)?.command.helpInformation() ?? '';
    expect(help('subscriptions add')).toMatch(/^Usage: news-alerts subscriptions add \[options\] <audienceId>$/m);
    expect(help('subscriptions add')).not.toContain('refused');
    expect(help('api-key set')).toMatch(/^Usage: news-alerts api-key set \[options\]$/m);
  });

  it('still refuses a webhook URL or an API key given as an operand, naming where it must come from, never echoing it', async () => {
    const url = 'https://hooks.slack.com/services/T000/B000/argv5ecret';
    const cases = [
      { args: ['subscriptions', 'add', 'chips', url, '--slack-webhook'], says: 'read from stdin or a hidden prompt' },
      { args: ['subscriptions', 'add', 'chips', 'extra', '--email', 'desk@example.com'], says: 'too many arguments' },
      { args: ['api-key', 'set', 'argv5ecret-key'], says: 'never from the command line' },
    ];
    for (const { args, says } of cases) {
      const error = await thrownBy(['--local', ...args]);
      expect(error, args.join(' ')).toBeInstanceOf(UsageError);
      expect((error as Error).message).toContain(says);
      expect((error as Error).message).not.toContain('argv5ecret');
    }
  });
});
