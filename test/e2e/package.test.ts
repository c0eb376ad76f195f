/**
 * The CLI as people install it, not as the other tests run it (from source through tsx):
 * - the esbuild bundle (scripts/build-cli.mjs) runs as plain JavaScript from any directory, and
 *   every npm package it imports is a runtime dependency of package.json;
 * - the launcher bin/news-alerts.js says how to build when dist/ is missing;
 * - `npm pack` → `npm install --global --omit=dev` of the tarball into an empty prefix gives a
 *   working `news-alerts` with no devDependency (tsx, vitest, esbuild, typescript ...) present;
 * - `npm link` from this clone puts `news-alerts` on the PATH of a prefix.
 * Installs use npm's cache first (--prefer-offline); the registry is only asked for what it lacks.
 */
import { type SpawnOptions, spawn } from 'node:child_process';
import {
  copyFileSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { builtinModules } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCliSandbox } from '../cli/support.ts';

const projectRoot = fileURLToPath(new URL('../../', import.meta.url));
const manifest = JSON.parse(readFileSync(join(projectRoot, 'package.json'), 'utf8')) as {
  version: string;
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
};

/** The command groups a newcomer looks for in `news-alerts --help`. */
const commandGroups = [
  'rules',
  'audiences',
  'subscriptions',
  'preview',
  'replay',
  'watermark',
  'lease',
  'run',
  'sandbox',
  'deliveries',
  'articles',
  'api-key',
];

interface Finished {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * The environment of every process started here: npm settings inherited from `npm test` (prefix,
 * global, omit ...) and Node options (a TypeScript loader) must not leak into what is proven.
 */
function cleanEnvironment(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of Object.keys(env)) {
    if (
      /^npm_(lifecycle_|package_|config_(prefix|global|location|omit|include|production|dry_run|ignore_scripts))/i.test(
        name,
      )
    ) {
      delete env[name];
    }
  }
  delete env.NODE_OPTIONS;
  delete env.NODE_PATH;
  return { ...env, ...extra };
}

function run(command: string, args: readonly string[], options: SpawnOptions = {}): Promise<Finished> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { env: cleanEnvironment(), ...options, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    child.stderr?.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';

/** A PATH with this Node (the bin's `#!/usr/bin/env node`) and the system, nothing of the project. */
const pathWithNode = (...first: string[]) => [...first, dirname(process.execPath), '/usr/bin', '/bin'].join(':');

/** The npm package an import specifier names, or undefined for a Node built-in. */
function packageOf(specifier: string): string | undefined {
  if (specifier.startsWith('node:') || builtinModules.includes(specifier.split('/')[0] ?? '')) return undefined;
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
}

/** The help lists a group as a command (at the start of a line, after the indent). */
function expectGroupsListed(help: string) {
  const listed = help.split('\n').map((line) => /^ {2}([a-z][\w-]*)/.exec(line)?.[1]);
  expect(listed).toEqual(expect.arrayContaining(commandGroups));
}

const scratch: string[] = [];
const scratchDir = (name: string) => {
  const dir = mkdtempSync(join(tmpdir(), `news-alerts-${name}-`));
  scratch.push(dir);
  return dir;
};
afterAll(() => {
  for (const dir of scratch) rmSync(dir, { recursive: true, force: true });
});

describe('the built CLI bundle (scripts/build-cli.mjs)', () => {
  let outdir: string;
  let metafile: {
    outputs: Record<string, { imports: { path: string; external?: boolean }[]; inputs: Record<string, unknown> }>;
  };

  beforeAll(async () => {
    const root = scratchDir('build');
    outdir = join(root, 'dist');
    const metafilePath = join(root, 'meta.json');
    const build = await run(
      process.execPath,
      ['scripts/build-cli.mjs', '--outdir', outdir, '--metafile', metafilePath],
      {
        cwd: projectRoot,
      },
    );
    expect(build.code, build.stderr).toBe(0);
    metafile = JSON.parse(readFileSync(metafilePath, 'utf8'));
    // npm packages stay external: they resolve from a node_modules beside dist/, as in an install.
    symlinkSync(join(projectRoot, 'node_modules'), join(root, 'node_modules'), 'dir');
  });

  it('writes flat entries (news-alerts.js, sandbox-daemon.js) and chunks directly in the output folder', () => {
    const outputs = Object.keys(metafile.outputs).filter((file) => file.endsWith('.js'));
    expect(outputs.length).toBeGreaterThan(2);
    for (const file of outputs) expect(dirname(join(projectRoot, file))).toBe(realpathSync(outdir));
    expect(existsSync(join(outdir, 'news-alerts.js'))).toBe(true);
    expect(existsSync(join(outdir, 'sandbox-daemon.js'))).toBe(true);
  });

  it('runs --help and --version as plain JavaScript from another directory', async () => {
    const cwd = scratchDir('cwd');
    const env = cleanEnvironment({ PATH: pathWithNode() });
    const help = await run(process.execPath, [join(outdir, 'news-alerts.js'), '--help'], { cwd, env });
    expect(help.code, help.stderr).toBe(0);
    expectGroupsListed(help.stdout);
    const version = await run(process.execPath, [join(outdir, 'news-alerts.js'), '--version'], { cwd, env });
    expect(version.code, version.stderr).toBe(0);
    expect(version.stdout.trim()).toBe(manifest.version);
  });

  it('rebuilds in place: files of an earlier build that the new one lacks are removed, the rest replaced', async () => {
    const stale = join(outdir, 'chunk-FROMANOLDBUILD.js');
    writeFileSync(stale, 'export {};\n');
    writeFileSync(join(outdir, 'news-alerts.js'), 'process.exit(9);\n');
    const build = await run(process.execPath, ['scripts/build-cli.mjs', '--outdir', outdir], { cwd: projectRoot });
    expect(build.code, build.stderr).toBe(0);
    expect(existsSync(stale)).toBe(false);
    expect(readdirSync(outdir).filter((name) => name.endsWith('.tmp'))).toEqual([]);
    const help = await run(process.execPath, [join(outdir, 'news-alerts.js'), '--help'], { cwd: scratchDir('cwd') });
    expect(help.code, help.stderr).toBe(0);
  });

  it('imports only npm packages that package.json lists in dependencies (none from devDependencies)', () => {
    const external = new Set<string>();
    for (const output of Object.values(metafile.outputs)) {
      for (const { path, external: isExternal } of output.imports) {
        const name = isExternal ? packageOf(path) : undefined;
        if (name !== undefined) external.add(name);
      }
    }
    // The bundle certainly needs these; an empty set would mean the metafile was misread.
    expect(external).toContain('commander');
    const missing = [...external].filter((name) => !(name in manifest.dependencies)).sort();
    expect(missing, 'imported by the CLI bundle but not in dependencies').toEqual([]);
  });

  it('bundles the AWS SDK with what it imports (loading its modules one by one from node_modules was most of a local command start-up), and no other dependency', () => {
    const external = new Set<string>();
    const bundled = new Set<string>();
    for (const output of Object.values(metafile.outputs)) {
      for (const { path, external: isExternal } of output.imports) {
        const name = isExternal ? packageOf(path) : undefined;
        if (name !== undefined) external.add(name);
      }
      for (const input of Object.keys(output.inputs)) {
        const name = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(input)?.[1];
        if (name !== undefined) bundled.add(name);
      }
    }
    expect([...external].filter((name) => /^@(aws-sdk|smithy)\//.test(name))).toEqual([]);
    expect(bundled).toContain('@aws-sdk/client-dynamodb');
    expect(bundled).toContain('@smithy/core');
    // The other dependencies stay external: they resolve from node_modules at run time.
    expect([...bundled].filter((name) => name in manifest.dependencies && !name.startsWith('@aws-sdk/'))).toEqual([]);
  });
});

describe('the launcher bin/news-alerts.js', () => {
  it('says to run npm run build when dist/ is missing, with exit 1 and no stack trace', async () => {
    // A copy of the package root without dist/ (a clone where someone deleted it).
    const root = scratchDir('unbuilt');
    mkdirSync(join(root, 'bin'));
    copyFileSync(join(projectRoot, 'bin', 'news-alerts.js'), join(root, 'bin', 'news-alerts.js'));
    copyFileSync(join(projectRoot, 'package.json'), join(root, 'package.json'));
    const result = await run(process.execPath, [join(root, 'bin', 'news-alerts.js'), '--help'], { cwd: root });
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr.trim().split('\n')).toEqual([
      `news-alerts: the CLI is not built (dist/news-alerts.js is missing): run \`npm run build\` in ${root}`,
    ]);
  });
});

describe('npm start, npm test and npm run bench (scripts/bootstrap.mjs)', () => {
  it('build the CLI first when node modules are installed but dist/ is missing', async () => {
    // A clone whose node_modules and moto virtualenv are in place (links to this project's) and
    // whose dist/ is gone (installed with --ignore-scripts, or deleted).
    const root = scratchDir('clone');
    for (const dir of ['bin', 'cli', 'functions', 'sandbox', 'scripts']) {
      cpSync(join(projectRoot, dir), join(root, dir), { recursive: true });
    }
    for (const file of ['package.json', 'package-lock.json', 'tsconfig.json']) {
      copyFileSync(join(projectRoot, file), join(root, file));
    }
    symlinkSync(join(projectRoot, 'node_modules'), join(root, 'node_modules'), 'dir');
    symlinkSync(join(projectRoot, '.venv'), join(root, '.venv'), 'dir');
    // `npm test -- --passWithNoTests`: the copy has no tests, so vitest only starts and exits.
    const bootstrap = await run(process.execPath, ['scripts/bootstrap.mjs', 'test', '--passWithNoTests'], {
      cwd: root,
    });
    expect(bootstrap.code, bootstrap.stderr).toBe(0);
    expect(bootstrap.stderr).toContain('news-alerts: building the CLI (npm run build)');
    const version = await run(process.execPath, [join(root, 'bin', 'news-alerts.js'), '--version'], {
      cwd: scratchDir('cwd'),
    });
    expect(version.code, version.stderr).toBe(0);
    expect(version.stdout.trim()).toBe(manifest.version);
  });
});

describe('the packed package (npm pack)', () => {
  let packed: { filename: string; files: { path: string }[] };
  let tarball: string;

  beforeAll(async () => {
    const destination = scratchDir('pack');
    // `prepare` builds dist/ first, as it does before `npm publish`.
    const pack = await run(npm, ['pack', '--json', '--pack-destination', destination], { cwd: projectRoot });
    expect(pack.code, pack.stderr).toBe(0);
    // npm prints the prepare script's output before the JSON document.
    const json = JSON.parse(pack.stdout.slice(pack.stdout.indexOf('[\n'))) as (typeof packed)[];
    packed = json[0] as typeof packed;
    tarball = join(destination, packed.filename);
  });

  it('holds only what the installed CLI needs: the launcher, dist/, the sandbox requirements and moto launcher, schemas, README', () => {
    const paths = packed.files.map((file) => file.path);
    expect(paths).toEqual(
      expect.arrayContaining([
        'bin/news-alerts.js',
        'dist/news-alerts.js',
        'dist/sandbox-daemon.js',
        // The installed CLI's sandbox starts moto through it (sandbox/moto.ts).
        'sandbox/moto-server.py',
        'package.json',
      ]),
    );
    const allowed =
      /^(package\.json|README\.md|LICENSE|bin\/news-alerts\.js|dist\/[^/]+\.js(\.map)?|sandbox\/requirements\.txt|sandbox\/moto-server\.py|docs\/schemas\/[^/]+\.json)$/;
    expect(paths.filter((path) => !allowed.test(path))).toEqual([]);
  });

  it('installs into an empty prefix with --omit=dev and runs --version, --help and a --sandbox-file command from any directory, with no devDependency present', async () => {
    const prefix = scratchDir('prefix');
    const install = await run(
      npm,
      ['install', '--global', '--prefix', prefix, '--omit=dev', '--prefer-offline', '--no-audit', '--no-fund', tarball],
      { cwd: scratchDir('install-cwd') },
    );
    expect(install.code, install.stderr).toBe(0);

    const bin = join(prefix, 'bin', 'news-alerts');
    const cwd = scratchDir('cwd');
    const env = cleanEnvironment({ PATH: pathWithNode(join(prefix, 'bin')) });
    const version = await run(bin, ['--version'], { cwd, env });
    expect(version.code, version.stderr).toBe(0);
    expect(version.stdout.trim()).toBe(manifest.version);
    const help = await run('news-alerts', ['--help'], { cwd, env });
    expect(help.code, help.stderr).toBe(0);
    expectGroupsListed(help.stdout);
    // A command that loads a group and its AWS clients, against a sandbox started by this test.
    const sandbox = await startCliSandbox();
    try {
      const rules = await run('news-alerts', ['--sandbox-file', sandbox.descriptorPath, '--json', 'rules', 'list'], {
        cwd,
        env,
      });
      expect(rules.code, rules.stderr).toBe(0);
      expect(JSON.stringify(JSON.parse(rules.stdout))).toContain('"ruleId"');
    } finally {
      await sandbox.stop();
    }

    const installed = join(prefix, 'lib', 'node_modules');
    const present = Object.keys(manifest.devDependencies).filter(
      (name) => existsSync(join(installed, name)) || existsSync(join(installed, 'news-alerts', 'node_modules', name)),
    );
    expect(present).toEqual([]);
  });
});

describe('npm link from this clone', () => {
  it('puts news-alerts on the PATH of the global prefix: --version, then sandbox up, a --local command and sandbox down from another directory', async () => {
    const prefix = scratchDir('link-prefix');
    // NPM_CONFIG_PREFIX moves only the global prefix (a --prefix flag would also move the project).
    const link = await run(npm, ['link', '--no-audit', '--no-fund'], {
      cwd: projectRoot,
      env: cleanEnvironment({ NPM_CONFIG_PREFIX: prefix }),
    });
    expect(link.code, link.stderr).toBe(0);
    expect(realpathSync(join(prefix, 'lib', 'node_modules', 'news-alerts'))).toBe(realpathSync(projectRoot));
    const env = cleanEnvironment({ PATH: pathWithNode(join(prefix, 'bin')) });
    const cwd = scratchDir('cwd');
    const version = await run('news-alerts', ['--version'], { cwd, env });
    expect(version.code, version.stderr).toBe(0);
    expect(version.stdout.trim()).toBe(manifest.version);

    // The sandbox daemon runs from the bundle too (dist/sandbox-daemon.js, no tsx).
    const descriptor = join(scratchDir('sandbox'), 'sandbox.json');
    const local = (...args: string[]) => run('news-alerts', ['--sandbox-file', descriptor, ...args], { cwd, env });
    try {
      const up = await local('sandbox', 'up');
      expect(up.code, up.stderr).toBe(0);
      const rules = await local('--json', 'rules', 'list');
      expect(rules.code, rules.stderr).toBe(0);
      expect(JSON.stringify(JSON.parse(rules.stdout))).toContain('"ruleId"');
    } finally {
      const down = await local('sandbox', 'down');
      expect(down.code, down.stderr).toBe(0);
    }
  });
});
