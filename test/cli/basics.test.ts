/**
 * The command line itself: `--help` everywhere (with the exit codes), and the exit codes scripts
 * rely on for usage errors and a missing or broken sandbox descriptor. The help of every command
 * is read in this process (commander renders it without AWS); the exit codes come from real processes.
 */
import { type Command, CommanderError } from 'commander';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isProviderDate, providerDate } from '#core/calendar';
import { UsageError } from '../../cli/errors.ts';
import { fitColumns, maskUrl } from '../../cli/output.ts';
import { buildProgram } from '../../cli/program.ts';
import { parseInstant, parseWindow } from '../../cli/window.ts';
import { runCli } from './support.ts';

/** Every command path, e.g. ['rules', 'put']. */
function commandPaths(command: Command, prefix: string[] = []): string[][] {
  return command.commands.flatMap((child) => {
    const path = [...prefix, child.name()];
    return [path, ...commandPaths(child, path)];
  });
}

/** The full `--help` output of a command, as a user sees it. */
async function helpOf(path: readonly string[]): Promise<string> {
  const program = await buildProgram();
  let text = '';
  const capture = (command: Command) => {
    const write = (chunk: string) => {
      text += chunk;
    };
    command.configureOutput({ writeOut: write, writeErr: write });
    for (const child of command.commands) capture(child);
  };
  capture(program);
  await expect(program.parseAsync(['node', 'news-alerts', ...path, '--help'])).rejects.toSatisfy(
    (error: unknown) => error instanceof CommanderError && error.code === 'commander.helpDisplayed',
  );
  return text;
}

describe('help', () => {
  it('news-alerts --help (a real process) lists every command and the exit codes', async () => {
    const { code, stdout } = await runCli(['--help']);
    expect(code).toBe(0);
    for (const command of [
      'rules',
      'audiences',
      'subscriptions',
      'preview|backtest',
      'replay',
      'watermark',
      'run',
      'runs',
      'sandbox',
    ]) {
      expect(stdout).toContain(`  ${command}`);
    }
    expect(stdout).toContain('Exit codes:');
    expect(stdout).toMatch(/3 {2}not found/);
    expect(stdout).toContain('--local');
  });

  it('every command has --help with a description and the exit codes', async () => {
    const paths = commandPaths(await buildProgram());
    expect(paths.map((path) => path.join(' '))).toEqual(
      expect.arrayContaining([
        'rules validate',
        'rules put',
        'audiences create',
        'subscriptions add',
        'subscriptions pending',
        'preview',
        'replay',
        'watermark rewind',
        'runs list',
        'run',
        'sandbox up',
      ]),
    );
    for (const path of paths) {
      const help = await helpOf(path);
      expect(help, path.join(' ')).toContain(`Usage: news-alerts ${path.join(' ')}`);
      expect(help, path.join(' ')).toContain('Exit codes:');
    }
  });
});

describe('exit codes', () => {
  it('2 for usage errors, 3 for a missing sandbox, 2 for a broken descriptor', async () => {
    // Independent processes: run side by side.
    const [unknownCommand, unknownOption, missingArgument, noSandbox, broken] = await Promise.all([
      runCli(['frobnicate']),
      runCli(['rules', 'list', '--bogus']),
      runCli(['rules', 'show']),
      runCli(['--sandbox-file', '/nonexistent/sandbox.json', 'rules', 'list']),
      runCli(['--sandbox-file', new URL('./support.ts', import.meta.url).pathname, 'rules', 'list']),
    ]);
    expect(unknownCommand.code).toBe(2);
    expect(unknownCommand.stderr).toContain("unknown command 'frobnicate'");
    expect(unknownOption.code).toBe(2);
    expect(missingArgument.code).toBe(2);
    expect(noSandbox.code).toBe(3);
    expect(noSandbox.stderr).toContain(
      "start the local sandbox with 'news-alerts --sandbox-file /nonexistent/sandbox.json sandbox up'",
    );
    expect(broken.code).toBe(2);
    expect(broken.stderr).toContain('is not JSON');
  });
});

describe('small helpers', () => {
  it('windows accept provider dates, zoned date-times, spans and now; anything else is a usage error', () => {
    const now = Date.parse('2026-11-22T03:00:00Z');
    const window = parseWindow('2026-11-21', '2026-11-21', 'Asia/Seoul', now);
    expect(new Date(window.since).toISOString()).toBe('2026-11-20T15:00:00.000Z');
    expect(new Date(window.until).toISOString()).toBe('2026-11-21T14:59:59.999Z');
    expect(window.days).toEqual(['2026-11-21']);
    expect(parseWindow('6h', undefined, 'UTC', now)).toMatchObject({ since: now - 6 * 3_600_000, until: now });
    expect(parseInstant('2026-11-21T09:00:00+09:00', '--from', 'start', 'UTC', now)).toBe(
      Date.parse('2026-11-21T00:00:00Z'),
    );
    expect(() => parseInstant('2026-11-21T09:00', '--from', 'start', 'UTC', now)).toThrow(/date-time with a zone/);
    expect(() => parseWindow('now', '1d', 'UTC', now)).toThrow(/is after --to/);
    // In the right form but not on the calendar: says so, instead of listing the forms again.
    for (const text of [
      '2026-11-31',
      '2026-02-29',
      '2026-13-01T09:00:00Z',
      '2026-11-31T09:00:00Z',
      '2026-04-31T00:00+09:00',
    ]) {
      expect(() => parseInstant(text, '--from', 'start', 'UTC', now)).toThrow(/is no date on the calendar/);
    }
    expect(() => parseInstant('2026-11-21T25:00Z', '--from', 'start', 'UTC', now)).toThrow(/date-time with a zone/);
  });

  it('refuses a bound no provider date can be written for (a span typed for a date: 20261121d) with a usage error, never a RangeError', () => {
    const now = Date.parse('2026-11-22T03:00:00Z');
    expect(() => parseInstant('20261121d', 'watermark', 'start', 'UTC', now)).toThrow(
      /watermark "20261121d" falls before 1970: give an instant from 1969-12-31T10:00Z to 9999-12-31T09:59Z/,
    );
    expect(() => parseWindow('1969-12-31', undefined, 'UTC', now)).toThrow(UsageError);
    // 1970-01-01 in the zones farthest from UTC either way, and the end of 9999 in the one ahead.
    for (const zone of ['Pacific/Kiritimati', 'Etc/GMT+12']) {
      expect(parseWindow('1970-01-01', '1970-01-01', zone, now).days).toEqual(['1970-01-01']);
    }
    expect(parseWindow('9999-12-31', '9999-12-31', 'Pacific/Kiritimati', now).days).toEqual(['9999-12-31']);
    // Refused with the side it falls on, whatever the zone.
    expect(() => parseInstant('1969-12-31T09:00:00Z', '--now', 'start', 'America/New_York', now)).toThrow(
      /--now "1969-12-31T09:00:00Z" falls before 1970/,
    );
    expect(() => parseInstant('9999-12-31T23:00:00Z', '--now', 'start', 'UTC', now)).toThrow(/falls after 9999/);
    // RFC 3339's space for the T reads the same (npm start --now took it before it shared this parser).
    expect(parseInstant('2026-11-22 09:00:00+09:00', '--now', 'start', 'UTC', now)).toBe(
      Date.parse('2026-11-22T09:00:00+09:00'),
    );
    expect(() => parseInstant('2026-11-31 09:00:00+09:00', '--now', 'start', 'UTC', now)).toThrow(
      /2026-11-31 is no date on the calendar/,
    );
    expect(() => parseInstant(`${'9'.repeat(400)}w`, '--since', 'start', 'UTC', now)).toThrow(UsageError);
    const bound = fc.oneof(
      fc
        .tuple(fc.bigInt({ min: 0n, max: 10n ** 25n }), fc.constantFrom('m', 'h', 'd', 'w'))
        .map(([n, unit]) => `${n}${unit}`),
      fc
        .date({ min: new Date('0000-01-01T00:00:00Z'), max: new Date('9999-12-31T23:59:59Z'), noInvalidDate: true })
        .map((date) => date.toISOString().slice(0, 10)),
      fc
        .date({ min: new Date('0000-01-01T00:00:00Z'), max: new Date('9999-12-31T23:59:59Z'), noInvalidDate: true })
        .map((date) => date.toISOString()),
      fc.constant('now'),
    );
    fc.assert(
      fc.property(
        bound,
        fc.constantFrom('start' as const, 'end' as const),
        fc.constantFrom('UTC', 'Asia/Seoul', 'Pacific/Kiritimati', 'Pacific/Pago_Pago'),
        (text, edge, zone) => {
          try {
            // Whatever it accepts, the run can write as a provider date.
            expect(isProviderDate(providerDate(parseInstant(text, '--from', edge, zone, now), zone))).toBe(true);
          } catch (error) {
            expect(error).toBeInstanceOf(UsageError);
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it('masks webhook URLs down to scheme and host, and fits tables to the width', () => {
    expect(maskUrl('https://hooks.slack.com/services/T1/B2/secret')).toBe('https://hooks.slack.com/…');
    expect(maskUrl('https://example.com')).toBe('https://example.com');
    expect(maskUrl('not a url')).toBe('(hidden)');
    const widths = fitColumns([['id', 'a very long reason '.repeat(10)]], 60);
    expect(widths.reduce((sum, width) => sum + width, 3)).toBeLessThanOrEqual(60);
    expect(widths[0]).toBe(4);
  });
});
