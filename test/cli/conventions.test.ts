/**
 * The conventions of CLIs people like, on the real process: --version, --output table|json|tsv
 * (--json its shorthand), colour only when asked for or on a terminal, a quiet exit when the
 * reader of stdout goes away (EPIPE), and shell completion generated from the command tree.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pkg from '../../package.json' with { type: 'json' };
import { type CliSandbox, runCli, startCliSandbox } from './support.ts';

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
    expect(json.json<unknown[]>()).toHaveLength(7);
    expect(tsv.code, tsv.stderr).toBe(0);
    const lines = tsv.stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(8);
    for (const line of lines) expect(line).toContain('\t');
    expect(coloured.code, coloured.stderr).toBe(0);
    expect(coloured.stdout).toContain(`${esc}[`);
    expect(plain.code, plain.stderr).toBe(0);
    expect(plain.stdout).not.toContain(esc);
    expect(plain.stdout).not.toContain('\t');
  });
});
