/**
 * Issue 11, item 6: the help listed `rules add`, a verb that never existed. Every verb the rules
 * and audiences commands name (in their descriptions, their help texts and the hints in their
 * messages) must be a command that exists, and both nouns share the verbs people reach for.
 * The real commander program is built in process (no sandbox needed) with the real groups.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { registerAudiences } from '../../cli/audiences.ts';
import { registerRules } from '../../cli/rules.ts';
import { registerSubscriptions } from '../../cli/subscriptions.ts';
import { projectRoot } from './support.ts';

const nouns = ['rules', 'audiences', 'subscriptions'] as const;

function program(): { program: Command; help: (command: Command) => string } {
  let text = '';
  const root = new Command('news-alerts').exitOverride().configureOutput({
    writeOut: (chunk) => {
      text += chunk;
    },
    writeErr: (chunk) => {
      text += chunk;
    },
  });
  registerRules(root);
  registerAudiences(root);
  registerSubscriptions(root);
  return {
    program: root,
    help(command) {
      text = '';
      // outputHelp, not helpInformation: the texts added with addHelpText are part of it.
      command.outputHelp();
      return text;
    },
  };
}

/** `news-alerts rules export`, `'rules put …'`, `(rules show, rules put)`: a noun and its verb. */
function verbsNamed(text: string): { noun: string; verb: string }[] {
  const found: { noun: string; verb: string }[] = [];
  for (const match of text.matchAll(/(?:news-alerts |['"(`])(rules|audiences|subscriptions) ([a-z][a-z-]*)/g)) {
    found.push({ noun: match[1] as string, verb: match[2] as string });
  }
  return found;
}

describe('verbs the rules and audiences commands name', () => {
  const { program: root, help } = program();
  const resolves = ({ noun, verb }: { noun: string; verb: string }): boolean => {
    const group = root.commands.find((command) => command.name() === noun);
    return group?.commands.some((command) => command.name() === verb || command.aliases().includes(verb)) === true;
  };

  it('every verb in the help of rules and audiences, and in the hints of their messages, exists', () => {
    const texts: string[] = [];
    for (const noun of ['rules', 'audiences']) {
      const group = root.commands.find((command) => command.name() === noun) as Command;
      texts.push(help(group));
      for (const command of group.commands) texts.push(help(command));
      // "list, show, export, create, … and delete audiences": each word of the summary is a verb.
      const summary = group.description().replace(/ (subscriber rules|audiences).*$/, '');
      for (const verb of summary.split(/, | and /)) texts.push(`news-alerts ${noun} ${verb}`);
    }
    const sources = ['cli/rules.ts', 'cli/audiences.ts', 'cli/audience-topics.ts'].map((path) =>
      readFileSync(join(projectRoot, path), 'utf8'),
    );
    const named = verbsNamed([...texts, ...sources].join('\n'));
    // The scan sees the hints it must (a sanity check of the pattern itself).
    expect(named).toEqual(
      expect.arrayContaining([
        { noun: 'rules', verb: 'export' },
        { noun: 'rules', verb: 'put' },
        { noun: 'audiences', verb: 'update' },
        { noun: 'subscriptions', verb: 'add' },
      ]),
    );
    const unknown = [...new Set(named.filter((entry) => !resolves(entry)).map(({ noun, verb }) => `${noun} ${verb}`))];
    expect(unknown).toEqual([]);
  });

  it('rules and audiences share list, show, export, create, update, put, validate and delete', () => {
    for (const noun of ['rules', 'audiences']) {
      for (const verb of ['list', 'show', 'export', 'create', 'update', 'put', 'validate', 'delete']) {
        expect(resolves({ noun, verb }), `${noun} ${verb}`).toBe(true);
      }
    }
    expect(nouns).toContain('subscriptions');
  });
});
