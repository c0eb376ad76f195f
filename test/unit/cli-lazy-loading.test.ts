/**
 * Start-up stays short because only the command group the command line names is loaded: the real
 * CLI process (from source) is run with a module hook that records every module it resolves, and
 * `--help` must load no group module and nothing heavy (AWS SDK, zod, yaml, tables, progress bars);
 * `rules --help` loads the rules group and no other.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Command } from 'commander';
import { afterAll, describe, expect, it } from 'vitest';
import { commandNameOf } from '../../cli/program.ts';

const projectRoot = fileURLToPath(new URL('../../', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'news-alerts-lazy-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// A resolve hook (runs on Node's loader thread) appending every resolved URL to $RECORD_IMPORTS.
const hook = join(dir, 'hook.mjs');
writeFileSync(
  hook,
  `import { appendFileSync } from 'node:fs';
export async function resolve(specifier, context, next) {
  const result = await next(specifier, context);
  appendFileSync(process.env.RECORD_IMPORTS, result.url + '\\n');
  return result;
}`,
);
const register = join(dir, 'register.mjs');
writeFileSync(
  register,
  `import { register } from 'node:module';\nregister(${JSON.stringify(pathToFileURL(hook).href)});`,
);

/** Runs the CLI from source and returns the modules it resolved. */
function modulesLoadedBy(args: readonly string[]): Promise<{ code: number | null; modules: string[] }> {
  const record = join(dir, `${args.join('_').replace(/\W/g, '')}.txt`);
  writeFileSync(record, '');
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ['--import', register, '--import', 'tsx', join(projectRoot, 'bin', 'news-alerts.ts'), ...args],
      { cwd: projectRoot, env: { ...process.env, RECORD_IMPORTS: record }, stdio: ['ignore', 'ignore', 'pipe'] },
    );
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, modules: readFileSync(record, 'utf8').split('\n').filter(Boolean) }));
  });
}

const heavy = [
  /@aws-sdk/,
  /node_modules\/zod\//,
  /node_modules\/yaml\//,
  /cli-table3/,
  /cli-progress/,
  /functions\/core\/model/,
];
const groupModule =
  /\/cli\/(rules|audiences|subscriptions|preview|replay|watermark|lease|run|sandbox|deliveries|articles|api-key)\.ts$/;

describe('lazy loading', () => {
  it('--help loads no command group and nothing heavy; rules --help loads only the rules group', async () => {
    const [help, rulesHelp] = await Promise.all([modulesLoadedBy(['--help']), modulesLoadedBy(['rules', '--help'])]);
    expect(help.code).toBe(0);
    expect(help.modules.some((url) => url.endsWith('/cli/program.ts'))).toBe(true);
    for (const url of help.modules) {
      expect(url).not.toMatch(groupModule);
      for (const pattern of heavy) expect(url).not.toMatch(pattern);
    }
    expect(rulesHelp.code).toBe(0);
    const groups = rulesHelp.modules.filter((url) => groupModule.test(url)).map((url) => url.replace(/.*\/cli\//, ''));
    expect([...new Set(groups)]).toEqual(['rules.ts']);
    // What only judging a stored rule (rules explain) or its history needs stays out of the group's
    // start: Powertools, the provider client, the ledger and story index (bench: CLI start-up).
    for (const url of rulesHelp.modules) {
      expect(url).not.toMatch(
        /@aws-lambda-powertools|\/provider\/news-client|\/cli\/workbench\/(articles|explain|history)\.ts$/,
      );
    }
  });
});

describe('the command a command line names', () => {
  const program = new Command()
    .option('--stack <name>')
    .option('--region <region>')
    .option('--local')
    .option('--json')
    .option('--output <format>');
  it.each([
    [['rules', 'list'], 'rules'],
    [['--stack', 'rules', 'watermark', 'show'], 'watermark'],
    [['--stack=X', '--local', 'runs', 'list'], 'runs'],
    [['--region', 'eu-west-1', '--json', 'preview'], 'preview'],
    [['help', 'audiences'], 'audiences'],
    [['help'], 'help'],
    [['--json'], undefined],
    [['--', 'rules'], undefined],
    [[], undefined],
  ])('%j names %s', (args, name) => {
    expect(commandNameOf(program, args)).toBe(name);
  });
});
