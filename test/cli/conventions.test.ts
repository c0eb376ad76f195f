/**
 * The conventions of CLIs people like, on the real process: --version, --output table|json|tsv
 * (--json its shorthand), colour only when asked for or on a terminal, a quiet exit when the
 * reader of stdout goes away (EPIPE), and shell completion generated from the command tree.
 */
import { execFile, spawn } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exampleRules } from '#sandbox/examples';
import { syntheticSeries } from '#test/spike-world';
import { commandGroups } from '../../cli/commands.ts';
import pkg from '../../package.json' with { type: 'json' };
import { type CliSandbox, cliEntry, projectRoot, runCli, startCliSandbox } from './support.ts';

let sandbox: CliSandbox;

beforeAll(async () => {
  sandbox = await startCliSandbox();
});

afterAll(async () => {
  await sandbox?.stop();
});

// ESC, as colour sequences start.
const esc = String.fromCharCode(0x1b);

describe('version and output formats', () => {
  it('--version and -V print the package version; --output chooses json, tsv or a (coloured) table', async () => {
    const [version, short, json, tsv, coloured, plain] = await Promise.all([
      runCli(['--version']),
      runCli(['-V']),
      sandbox.cli(['--output', 'json', 'rules', 'list']),
      sandbox.cli(['--output', 'tsv', 'rules', 'list']),
      sandbox.cli(['--output', 'table', 'rules', 'list'], { env: { FORCE_COLOR: '1', NO_COLOR: undefined } }),
      sandbox.cli(['--output', 'table', 'rules', 'list'], { env: { FORCE_COLOR: undefined, NO_COLOR: '1' } }),
    ]);
    expect(version.code).toBe(0);
    expect(version.stdout).toBe(`${pkg.version}\n`);
    expect(short.stdout).toBe(`${pkg.version}\n`);

    expect(json.code, json.stderr).toBe(0);
    expect(json.json<unknown[]>()).toHaveLength(exampleRules.length);
    expect(tsv.code, tsv.stderr).toBe(0);
    const lines = tsv.stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(exampleRules.length + 1); // a header line, then one per rule
    for (const line of lines) expect(line).toContain('\t');
    expect(coloured.code, coloured.stderr).toBe(0);
    expect(coloured.stdout).toContain(`${esc}[`);
    expect(plain.code, plain.stderr).toBe(0);
    expect(plain.stdout).not.toContain(esc);
    expect(plain.stdout).not.toContain('\t');
  });
});

/**
 * Runs the built CLI with stdout `closed` (a pipe whose reader is gone before anything is written,
 * as `| head -0`: every write gets EPIPE) or `full` (/dev/full, as `> file` on a full disk).
 */
function runWithStdout(
  stdout: 'closed' | 'full',
  args: readonly string[],
): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const full = stdout === 'full' ? openSync('/dev/full', 'w') : undefined;
    const child = spawn(process.execPath, [cliEntry, ...args], {
      cwd: projectRoot,
      stdio: ['ignore', full ?? 'pipe', 'pipe'],
    });
    if (full === undefined) child.stdout?.destroy();
    else closeSync(full);
    let stderr = '';
    child.stderr?.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stderr }));
  });
}

describe('a reader that goes away', () => {
  it('is no failure: no stack trace, the exit code of the command', async () => {
    const [help, watermark] = await Promise.all([
      runWithStdout('closed', ['--help']),
      runWithStdout('closed', ['--sandbox-file', sandbox.descriptorPath, 'watermark', 'show']),
    ]);
    expect(help).toEqual({ code: 0, stderr: '' });
    expect(watermark.stderr).not.toContain('EPIPE');
    expect(watermark.code, watermark.stderr).toBe(0);
  });
});

describe('a full disk under stdout', () => {
  it('is one line on stderr and exit 1, not a stack trace', async () => {
    const [help, watermark] = await Promise.all([
      runWithStdout('full', ['--help']),
      runWithStdout('full', ['--sandbox-file', sandbox.descriptorPath, 'watermark', 'show']),
    ]);
    for (const run of [help, watermark]) {
      expect(run.stderr).toMatch(
        /(^|\n)news-alerts: writing to stdout failed \(ENOSPC\): what it printed is incomplete\n$/,
      );
      expect(run.stderr.match(/writing to stdout failed/g)).toHaveLength(1);
      expect(run.stderr).not.toMatch(/^\s+at /m);
      expect(run.code).toBe(1);
    }
  });

  it('under stderr is no failure: stderr only carries messages, and stdout is whole', async () => {
    // 5-minute rows in 1-minute buckets: a warning on stderr, the results on stdout.
    const csv = join(mkdtempSync(join(tmpdir(), 'news-alerts-stderr-')), 'series.csv');
    writeFileSync(csv, syntheticSeries(300, 3, 250));
    const args = ['spikes', 'evaluate', '--csv', csv, '--bucket-minutes', '1'];
    const expected = await runCli(args);
    expect(expected.code).toBe(0);
    expect(expected.stderr).toContain('buckets');
    const full = openSync('/dev/full', 'w');
    const child = spawn(process.execPath, [cliEntry, ...args], { cwd: projectRoot, stdio: ['ignore', 'pipe', full] });
    closeSync(full);
    let stdout = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    const code = await new Promise<number | null>((resolve, reject) => {
      child.on('error', reject);
      child.on('close', resolve);
    });
    expect(code).toBe(0);
    expect(stdout).toBe(expected.stdout);
  });
});

describe('shell completion', () => {
  it('bash and zsh scripts name every group and their subcommands, and bash completes with them', async () => {
    const [bash, zsh] = await Promise.all([runCli(['completion', 'bash']), runCli(['completion', 'zsh'])]);
    expect(bash.code, bash.stderr).toBe(0);
    expect(zsh.code, zsh.stderr).toBe(0);
    const topLevel = /^ {4}""\) echo "([^"]*)"/m.exec(bash.stdout)?.[1]?.split(' ');
    expect(topLevel).toEqual(expect.arrayContaining([...commandGroups.map((group) => group.name), 'completion']));
    expect(bash.stdout).toContain('"rules") echo "list show');
    expect(bash.stdout).toMatch(/"watermark"\) echo "[^"]*rewind/);
    expect(bash.stdout).toContain('complete -o default -F _news_alerts news-alerts');
    expect(zsh.stdout).toMatch(/^#compdef news-alerts\n/);
    expect(zsh.stdout).toContain('bashcompinit');
    // bash parses it, and completing asks the generated functions.
    const complete = (words: string) =>
      promisify(execFile)('bash', [
        '-c',
        `${bash.stdout}\nCOMP_WORDS=(${words}); COMP_CWORD=$((\${#COMP_WORDS[@]} - 1)); _news_alerts; echo "\${COMPREPLY[*]}"`,
      ]);
    await expect(promisify(execFile)('bash', ['-n', '-c', bash.stdout])).resolves.toBeDefined();
    expect((await complete('news-alerts --stack X ru')).stdout).toBe('rules run runs\n');
    expect((await complete("news-alerts --local watermark ''")).stdout).toMatch(/\bshow\b.*\brewind\b/);
    expect((await complete("news-alerts --output ''")).stdout).toBe('table json tsv\n');
  });
});
