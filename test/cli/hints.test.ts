/**
 * The commands the CLI suggests act on the target the suggesting command acted on: run against a
 * sandbox, every "Next:" and "fix it with …" names that sandbox, so copying it never reaches the
 * deployed stack instead.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CliSandbox, startCliSandbox } from './support.ts';

let sandbox: CliSandbox;

beforeAll(async () => {
  sandbox = await startCliSandbox();
});

afterAll(async () => {
  await sandbox?.stop();
});

describe('hints', () => {
  it('name the sandbox the command ran against: Next after audiences create, and the fixes errors suggest', async () => {
    const target = `news-alerts --sandbox-file ${sandbox.descriptorPath}`;
    const created = await sandbox.cli([
      'audiences',
      'create',
      'hint-desk',
      '--name',
      'Hint desk',
      '--time-zone',
      'UTC',
    ]);
    expect(created.code, created.stderr).toBe(0);
    expect(created.stdout + created.stderr).toContain(
      `Next: subscribe people, e.g. ${target} subscriptions add hint-desk`,
    );

    const [subscribed, missingRule, noQuery] = await Promise.all([
      sandbox.cli(['subscriptions', 'add', 'hint-desk', '--email', 'desk@example.com']),
      sandbox.cli(['rules', 'update', 'no-such-rule', '--keywords', 'x']),
      sandbox.cli(['rules', 'explain', 'quakes']),
    ]);
    expect(subscribed.code, subscribed.stderr).toBe(0);
    expect(subscribed.stdout + subscribed.stderr).toContain(
      `${target} subscriptions confirm hint-desk --token <Token>`,
    );
    expect(missingRule.code).toBe(3);
    expect(missingRule.stderr).toContain(`create it with '${target} rules create no-such-rule'`);
    expect(noQuery.stderr).toContain(`'${target} rules show quakes' shows its criteria`);
    // No hint of these names a bare `news-alerts <command>`, which would act on the deployed stack.
    for (const result of [created, subscribed, missingRule, noQuery]) {
      expect(result.stdout + result.stderr).not.toMatch(/news-alerts (?!--sandbox-file)[a-z]/);
    }
  });
});
