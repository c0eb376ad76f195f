#!/usr/bin/env node
/**
 * `npm run build` (and `prepare`, so `npm ci`, `npm link` and `npm pack` build too): bundles the
 * `news-alerts` CLI into plain JavaScript in dist/, so the installed CLI runs with its
 * `dependencies` only (no tsx, no TypeScript at run time).
 *
 * - Entries: bin/news-alerts.ts → dist/news-alerts.js, and cli/sandbox-daemon.ts →
 *   dist/sandbox-daemon.js (the background process `sandbox up` spawns).
 * - Code splitting: every `await import()` of a command group stays a chunk of its own, loaded only
 *   when that group runs, which keeps `--help` and `--version` fast.
 * - Flat output: entries and chunks all sit directly in dist/, one level below the package root,
 *   because the code finds the root with `new URL('../', import.meta.url)`.
 * - npm packages stay external, coming from `dependencies` at run time, except the AWS SDK, which
 *   is bundled with what it imports ({@link bundleOnlyTheAwsSdk}: loading its hundreds of modules
 *   one by one was most of a local command's start-up); the package.json `imports` aliases
 *   (#core/*, #aws/* ...) are project code and are bundled.
 *   test/e2e/package.test.ts checks with the metafile that every external import is a dependency.
 *
 * Usage: node scripts/build-cli.mjs [--outdir <dir>] [--metafile <file>]
 * Plain JavaScript: it runs from `prepare`, before anything can load TypeScript.
 */
import { mkdirSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const projectRoot = join(dirname(fileURLToPath(import.meta.url)), '..');

/** The bundles, by output name (dist/<name>.js). */
export const cliEntryPoints = {
  'news-alerts': 'bin/news-alerts.ts',
  'sandbox-daemon': 'cli/sandbox-daemon.ts',
};

/** The packages bundled into the CLI: the AWS SDK and what it imports; see {@link bundleOnlyTheAwsSdk}. */
const bundledPackage = /^@(aws-sdk|smithy|aws-crypto|aws)\//;

/**
 * Keeps every npm package external (it comes from `dependencies` at run time) except the AWS SDK:
 * a command group's SDK clients are hundreds of small ES modules in node_modules, and resolving
 * and loading them one by one was most of a local command's start-up (issue 33). Bundled, they
 * load as a few chunks. Whatever the SDK imports (mnemonist, tslib ...) is bundled along with it.
 */
const bundleOnlyTheAwsSdk = {
  name: 'bundle-only-the-aws-sdk',
  setup(build) {
    build.onResolve({ filter: /^[^./#]/ }, (args) => {
      if (args.path.startsWith('node:')) return { path: args.path, external: true };
      // An importer in node_modules is a bundled package (external ones are never read): its
      // imports are bundled with it.
      const fromBundledPackage = /[\\/]node_modules[\\/]/.test(args.importer);
      if (fromBundledPackage || bundledPackage.test(args.path)) return undefined;
      return { path: args.path, external: true };
    });
  },
};

/**
 * Builds the CLI into `outdir` and returns esbuild's metafile.
 *
 * The folder is updated in place, never emptied first: a `news-alerts` started meanwhile (a test,
 * the sandbox daemon, an ops person's linked CLI) always finds a complete build. Each file is
 * written to a temporary name and renamed (atomic), chunks before the entries that import them;
 * files of the earlier build that the new one does not have are removed last.
 */
export async function buildCli({ outdir = join(projectRoot, 'dist') } = {}) {
  let esbuild;
  try {
    esbuild = await import('esbuild');
  } catch (error) {
    throw new Error(
      'esbuild is missing: the CLI is built from a clone with its devDependencies (npm ci, not npm ci --omit=dev)',
      { cause: error },
    );
  }
  const result = await esbuild.build({
    absWorkingDir: projectRoot,
    entryPoints: Object.fromEntries(
      Object.entries(cliEntryPoints).map(([name, source]) => [name, join(projectRoot, source)]),
    ),
    outdir,
    entryNames: '[name]',
    chunkNames: '[name]-[hash]',
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    mainFields: ['module', 'main'],
    plugins: [bundleOnlyTheAwsSdk],
    sourcemap: 'linked',
    metafile: true,
    write: false,
    logLevel: 'warning',
  });
  mkdirSync(outdir, { recursive: true });
  const entries = new Set(Object.keys(cliEntryPoints).flatMap((name) => [`${name}.js`, `${name}.js.map`]));
  const isEntry = (file) => entries.has(basename(file.path));
  const ordered = [...result.outputFiles.filter((file) => !isEntry(file)), ...result.outputFiles.filter(isEntry)];
  for (const file of ordered) {
    const temporary = `${file.path}.${process.pid}.tmp`;
    writeFileSync(temporary, file.contents);
    renameSync(temporary, file.path);
  }
  const written = new Set(result.outputFiles.map((file) => basename(file.path)));
  for (const name of readdirSync(outdir)) {
    if (!written.has(name)) rmSync(join(outdir, name), { recursive: true, force: true });
  }
  return result.metafile;
}

const isMain = process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url);
if (isMain) {
  const { values } = parseArgs({ options: { outdir: { type: 'string' }, metafile: { type: 'string' } } });
  try {
    const outdir = values.outdir === undefined ? undefined : resolve(values.outdir);
    const metafile = await buildCli(outdir === undefined ? {} : { outdir });
    if (values.metafile !== undefined) {
      mkdirSync(dirname(resolve(values.metafile)), { recursive: true });
      writeFileSync(values.metafile, JSON.stringify(metafile));
    }
    const outputs = Object.keys(metafile.outputs).filter((file) => file.endsWith('.js'));
    const where = relative(process.cwd(), outdir ?? join(projectRoot, 'dist')) || '.';
    process.stderr.write(`news-alerts: built the CLI into ${where} (${outputs.length} files)\n`);
  } catch (error) {
    // esbuild has already printed the errors it found in the sources.
    process.stderr.write(`news-alerts: the CLI build failed: ${error.message}\n`);
    process.exit(1);
  }
}
