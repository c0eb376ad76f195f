/**
 * The global options as a command sees them (in this process: the real program with a probe
 * command that records its options): the target from NEWS_ALERTS_TARGET unless a flag chooses,
 * `--json` as `--output json`, conflicts as usage errors; and when output may be coloured.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { colorWanted, jsonRequested, targetVariable } from '../../cli/cli-config.ts';
import type { GlobalOptions } from '../../cli/context.ts';
import { UsageError } from '../../cli/errors.ts';
import { buildProgram } from '../../cli/program.ts';

/** The options a command running with `args` gets. */
async function optionsOf(args: readonly string[], target?: string): Promise<GlobalOptions> {
  if (target === undefined) delete process.env[targetVariable];
  else process.env[targetVariable] = target;
  const program = await buildProgram(['probe']);
  let seen: GlobalOptions | undefined;
  program.command('probe').action((_options, command) => {
    seen = command.optsWithGlobals();
  });
  await program.parseAsync(['node', 'news-alerts', ...args, 'probe']);
  if (!seen) throw new Error('the probe did not run');
  return seen;
}

afterEach(() => {
  delete process.env[targetVariable];
});

describe('the default target', () => {
  it.each([
    // [flags, NEWS_ALERTS_TARGET, local?]
    [[], undefined, undefined],
    [[], 'stack', undefined],
    [[], 'local', true],
    [['--stack', 'Prod'], 'local', undefined],
    [['--local'], 'stack', true],
    [['--sandbox-file', 'x.json'], 'local', undefined],
  ] as const)('%j with %s → local %s', async (flags, target, local) => {
    const options = await optionsOf(flags, target);
    expect(options.local).toBe(local);
  });

  it('an unknown NEWS_ALERTS_TARGET is a usage error naming the values', async () => {
    await expect(optionsOf([], 'prod')).rejects.toThrow(UsageError);
    await expect(optionsOf([], 'prod')).rejects.toThrow(/set it to local or stack/);
  });
});

describe('output format', () => {
  it('--json is --output json; --output json sets json; a different --output with --json is a usage error', async () => {
    expect(await optionsOf(['--json'])).toMatchObject({ json: true, output: 'json' });
    expect(await optionsOf(['--output', 'json'])).toMatchObject({ json: true, output: 'json' });
    expect(await optionsOf(['--output', 'tsv'])).toMatchObject({ output: 'tsv' });
    expect((await optionsOf(['--output', 'tsv'])).json).toBeUndefined();
    expect(await optionsOf(['--json', '--output', 'json'])).toMatchObject({ json: true });
    await expect(optionsOf(['--json', '--output', 'table'])).rejects.toThrow(/--json and --output table/);
  });

  it('--profile reaches the command', async () => {
    expect(await optionsOf(['--profile', 'ops', '--region', 'eu-west-1'])).toMatchObject({
      profile: 'ops',
      region: 'eu-west-1',
    });
  });

  it.each([
    [['--json'], true],
    [['--output', 'json'], true],
    [['--output=json'], true],
    [['--output', 'tsv'], false],
    [['rules', 'show', '--', '--json'], false],
    [[], false],
  ])('JSON asked for by %j: %s', (args, json) => {
    expect(jsonRequested(args)).toBe(json);
  });
});

describe('colour', () => {
  it.each([
    [true, {}, true],
    [false, {}, false],
    [true, { NO_COLOR: '1' }, false],
    [true, { NO_COLOR: '' }, true],
    [true, { TERM: 'dumb' }, false],
    [false, { FORCE_COLOR: '1' }, true],
    [true, { NO_COLOR: '1', FORCE_COLOR: '1' }, true],
    [true, { FORCE_COLOR: '0' }, false],
  ])('a terminal: %s, env %j → %s', (isTTY, env, color) => {
    expect(colorWanted(isTTY, env)).toBe(color);
  });
});
