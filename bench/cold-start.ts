/**
 * Cold start (DESIGN section 9): the alert handler bundled exactly as the stack bundles it
 * (`FUNCTION_BUNDLING` of lib/constructs/news-alerts-function.ts, translated to esbuild options the
 * way aws-cdk-lib's NodejsFunction translates them), and a bare bundle with the same options that
 * imports only the same three SDK clients (bench/cold-start-bare.ts). Each is imported in fresh
 * `node` processes, interleaved, with the environment the stack sets and the same
 * `--enable-source-maps` flag Lambda runs them with (NODE_OPTIONS in the stack).
 *
 * A fresh process per sample is what a cold start is: nothing of the previous import is cached
 * (Node's compile cache is off unless NODE_COMPILE_CACHE is set, and it is not here).
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { type BuildOptions, build } from 'esbuild';
import { FUNCTION_BUNDLING } from '../lib/constructs/news-alerts-function.ts';
import { type ProfileEntry, packageOf, projectPath, readCpuProfile, summarizeProfile } from './profile.ts';
import { median, percentile } from './stats.ts';

/** The bundling props of the stack, as far as the benchmark reads them. */
export interface FunctionBundling {
  readonly format: string;
  readonly target: string;
  readonly minify: boolean;
  readonly keepNames: boolean;
  readonly sourceMap: boolean;
  readonly sourcesContent: boolean;
  readonly mainFields: readonly string[];
  readonly banner: string;
  readonly bundleAwsSDK: boolean;
}

/**
 * The esbuild options NodejsFunction derives from `bundling` (aws-lambda-nodejs/lib/bundling.js:
 * `--bundle --platform=node --target --format --minify --sourcemap --sources-content=false
 * --keep-names --banner:js --main-fields`, and `--external:@aws-sdk/*` unless bundleAwsSDK).
 */
export function esbuildOptionsFor(bundling: FunctionBundling): BuildOptions {
  return {
    bundle: true,
    platform: 'node',
    target: bundling.target,
    format: bundling.format === 'esm' ? 'esm' : 'cjs',
    minify: bundling.minify,
    sourcemap: bundling.sourceMap,
    sourcesContent: bundling.sourcesContent,
    keepNames: bundling.keepNames,
    banner: { js: bundling.banner },
    mainFields: [...bundling.mainFields],
    external: bundling.bundleAwsSDK ? [] : ['@aws-sdk/*'],
    logLevel: 'warning',
  };
}

/** The stack's own options. */
export const stackEsbuildOptions = (): BuildOptions => esbuildOptionsFor(FUNCTION_BUNDLING);

/** A bundle on disk. */
export interface Bundle {
  readonly name: string;
  readonly file: string;
  readonly bytes: number;
  readonly mapBytes: number;
  /** Bytes of the bundle per npm package (or project directory), from esbuild's metafile. */
  readonly composition: readonly { readonly name: string; readonly bytes: number }[];
}

/** What to bundle: a file, or source text resolved from the project root. */
export type BundleEntry = { readonly file: string } | { readonly contents: string };

/** Bundles `entry` with the stack's options into `directory/<name>/index.mjs`. */
export async function bundle(
  name: string,
  entry: BundleEntry,
  directory: string,
  projectRoot: string,
): Promise<Bundle> {
  const outdir = join(directory, name.replace(/[^A-Za-z0-9]+/g, '-'));
  mkdirSync(outdir, { recursive: true });
  const file = join(outdir, 'index.mjs');
  const result = await build({
    ...stackEsbuildOptions(),
    ...('file' in entry
      ? { entryPoints: [entry.file] }
      : { stdin: { contents: entry.contents, resolveDir: projectRoot, sourcefile: `${name}.ts`, loader: 'ts' } }),
    outfile: file,
    absWorkingDir: projectRoot,
    metafile: true,
  });
  const composition = new Map<string, number>();
  for (const output of Object.values(result.metafile.outputs)) {
    for (const [input, { bytesInOutput }] of Object.entries(output.inputs)) {
      const key = packageOf(input) ?? projectPath(input, projectRoot).split('/').slice(0, 2).join('/');
      composition.set(key, (composition.get(key) ?? 0) + bytesInOutput);
    }
  }
  return {
    name,
    file,
    bytes: statSync(file).size,
    mapBytes: statSync(`${file}.map`).size,
    composition: [...composition].map(([key, bytes]) => ({ name: key, bytes })).sort((a, b) => b.bytes - a.bytes),
  };
}

/** A source entry that re-exports the bare handler and keeps `code`'s imports alive. */
const bareWith = (code: string): BundleEntry => ({
  contents: `export { handler } from './bench/cold-start-bare.ts';\n${code}`,
});

/**
 * The cold-start target's two bundles: the alert handler, and the bare bundle it is compared with
 * (bench/cold-start-bare.ts: the three SDK clients and undici).
 */
export async function targetBundles(
  directory: string,
  projectRoot: string,
): Promise<{ readonly handler: Bundle; readonly bare: Bundle }> {
  return {
    handler: await bundle('alert-handler', { file: 'functions/alert-run/handler.ts' }, directory, projectRoot),
    bare: await bundle('bare-sdk-clients', { file: 'bench/cold-start-bare.ts' }, directory, projectRoot),
  };
}

/**
 * The attribution bundles of section 4: the bare bundle plus one dependency of the handler each,
 * imported the way the handler's modules import it, so `bundle - bare` is what that dependency
 * costs on its own. Names are those of `ATTRIBUTION_BUNDLES` (bench/sections.ts).
 */
export async function buildAttributionBundles(
  names: {
    readonly zod: string;
    readonly zodMini: string;
    readonly luxon: string;
    readonly powertools: string;
    readonly intl: string;
  },
  directory: string,
  projectRoot: string,
): Promise<Bundle[]> {
  const keep = (expression: string) => `(globalThis as Record<string, unknown>).__benchKeep = ${expression};\n`;
  return [
    // Classic zod's `z` is one namespace object: all of it (and every locale) stays in the bundle.
    await bundle(names.zod, bareWith(`import { z } from 'zod';\n${keep('z')}`), directory, projectRoot),
    await bundle(
      names.zodMini,
      bareWith(
        `import * as z from 'zod/mini';\nimport { en } from 'zod/locales';\nz.config(en());\n${keep(
          '[z.array, z.boolean, z.enum, z.literal, z.number, z.object, z.optional, z._default, z.pipe, z.record, z.string, z.strictObject, z.transform, z.union, z.unknown, z.superRefine, z.refine, z.regex, z.trim, z.minLength, z.maxLength, z.int, z.gte, z.lte]',
        )}`,
      ),
      directory,
      projectRoot,
    ),
    await bundle(
      names.luxon,
      bareWith(`import { DateTime } from 'luxon';\n${keep('DateTime')}`),
      directory,
      projectRoot,
    ),
    await bundle(
      names.powertools,
      bareWith(
        `import { Logger } from '@aws-lambda-powertools/logger';\nimport { Metrics } from '@aws-lambda-powertools/metrics';\n${keep(
          '[new Logger({ serviceName: "bench" }), new Metrics({ namespace: "bench", serviceName: "bench" })]',
        )}`,
      ),
      directory,
      projectRoot,
    ),
    // What the handler asks of Intl at import, with the environment's values: the default locale
    // and the provider's zone checked (alert-run/config.ts, core/model.ts), and the text
    // segmenters render.ts builds. The first of them starts ICU; every run needs it anyway, since
    // the provider day is a date in the provider's zone.
    await bundle(
      names.intl,
      bareWith(
        keep(
          `[Intl.DateTimeFormat.supportedLocalesOf([${JSON.stringify(handlerEnvironment.DEFAULT_LOCALE)}]), new Intl.DateTimeFormat('en-US', { timeZone: ${JSON.stringify(handlerEnvironment.NEWS_API_TIME_ZONE)} }), new Intl.Segmenter(undefined, { granularity: 'grapheme' }), new Intl.Segmenter(undefined, { granularity: 'word' })]`,
        ),
      ),
      directory,
      projectRoot,
    ),
  ];
}

/**
 * The environment the stack gives the alert function (tokens replaced by plausible values); the
 * handler validates it at import, so it must be complete.
 */
export const handlerEnvironment: Readonly<Record<string, string>> = {
  PATH: process.env.PATH ?? '',
  AWS_REGION: 'us-east-1',
  AWS_ACCESS_KEY_ID: 'test',
  AWS_SECRET_ACCESS_KEY: 'test',
  AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
  POWERTOOLS_SERVICE_NAME: 'news-alerts',
  POWERTOOLS_METRICS_NAMESPACE: 'NewsAlerts',
  POWERTOOLS_LOG_LEVEL: 'INFO',
  NEWS_API_BASE_URL: 'https://news-api.example.com/v1',
  NEWS_API_KEY_SECRET_ID: 'arn:aws:secretsmanager:us-east-1:123456789012:secret:news-alerts-api-key-AbCdEf',
  NEWS_API_PAGE_SIZE: '100',
  NEWS_API_TIME_ZONE: 'Asia/Seoul',
  NEWS_API_PAGINATION: 'PAGE',
  LATE_ARRIVAL_MINUTES: '60',
  FULL_SWEEP_MINUTES: '360',
  INCREMENTAL_OVERLAP_MINUTES: '2',
  LATE_RECHECK_MINUTES: '15',
  LEDGER_RETENTION_DAYS: '14',
  LEASE_SECONDS: '360',
  DEFAULT_LOCALE: 'en-US',
  RULES_TABLE_NAME: 'news-alerts-rules',
  AUDIENCES_TABLE_NAME: 'news-alerts-audiences',
  STATE_TABLE_NAME: 'news-alerts-state',
};

/**
 * Imports the bundle and prints how long `import()` took, the CPU time it used and how long the
 * process had been running by then. Plain JavaScript for `node --input-type=module -e`.
 */
const importProbe = `
const cpu = process.cpuUsage();
const started = performance.now();
const module = await import(process.argv[1]);
const importMs = performance.now() - started;
const used = process.cpuUsage(cpu);
if (typeof module.handler !== 'function') { console.error('no handler export'); process.exit(3); }
process.stdout.write(JSON.stringify({ importMs, importCpuMs: (used.user + used.system) / 1000, sinceStartMs: performance.now() }));
`;

/** One fresh-process import. */
export interface ImportSample {
  /** Time of `await import(bundle)`. */
  readonly importMs: number;
  /**
   * CPU time (user + system, all threads) of the import: far less sensitive than `importMs` to
   * other work on a shared machine, which stretches wall time but not the work itself.
   */
  readonly importCpuMs: number;
  /** From process start to the import's end (Node's own start-up included). */
  readonly sinceStartMs: number;
  /** spawn to exit, as seen from the parent. */
  readonly processMs: number;
}

/** Imports `file` once in a fresh `node` process with `environment` and the given Node flags. */
export function importOnce(
  file: string,
  environment: Readonly<Record<string, string>>,
  nodeFlags: readonly string[] = ['--enable-source-maps'],
): ImportSample {
  const started = performance.now();
  const result = spawnSync(
    process.execPath,
    [...nodeFlags, '--input-type=module', '-e', importProbe, pathToFileURL(file).href],
    { encoding: 'utf8', env: { ...environment } },
  );
  const processMs = performance.now() - started;
  if (result.status !== 0) {
    throw new Error(`importing ${file} failed (exit ${result.status}): ${result.stderr.slice(0, 2000)}`);
  }
  const parsed = JSON.parse(result.stdout) as { importMs: number; importCpuMs: number; sinceStartMs: number };
  return { ...parsed, processMs };
}

/** Import times of one bundle over repeated fresh processes. */
export interface ImportTimes {
  readonly bundle: Bundle;
  readonly samples: readonly ImportSample[];
  readonly medianMs: number;
  readonly p90Ms: number;
  readonly medianProcessMs: number;
  /** Median CPU time of the import (see {@link ImportSample.importCpuMs}). */
  readonly medianCpuMs: number;
}

/**
 * Imports each bundle `repetitions` times, interleaved (A B C A B C ...) so that a burst of load
 * on the shared machine hits every bundle alike, after one untimed warm-up import each (the OS
 * file cache).
 */
export function timeImports(
  bundles: readonly Bundle[],
  repetitions: number,
  environment: Readonly<Record<string, string>> = handlerEnvironment,
  nodeFlags?: readonly string[],
): ImportTimes[] {
  const samples = bundles.map(() => [] as ImportSample[]);
  for (const b of bundles) importOnce(b.file, environment, nodeFlags);
  for (let round = 0; round < repetitions; round++) {
    bundles.forEach((b, i) => {
      samples[i]?.push(importOnce(b.file, environment, nodeFlags));
    });
  }
  return bundles.map((b, i) => {
    const list = samples[i] ?? [];
    return {
      bundle: b,
      samples: list,
      medianMs: median(list.map((s) => s.importMs)),
      p90Ms: percentile(
        list.map((s) => s.importMs),
        90,
      ),
      medianProcessMs: median(list.map((s) => s.processMs)),
      medianCpuMs: median(list.map((s) => s.importCpuMs)),
    };
  });
}

/** Buckets of an import profile: npm packages, Node's own phases, the bundle's top level. */
function importCategory(source: string, functionName: string, projectRoot: string): string {
  if (source === '') return functionName;
  if (source.startsWith('node:internal/modules/esm')) return 'module compile and link (V8 parse)';
  if (source.startsWith('node:internal/source_map')) return 'source maps (--enable-source-maps)';
  if (source.startsWith('node:internal/deps/undici')) return "Node's built-in undici (loaded by a global)";
  if (source.startsWith('node:')) return 'Node.js start-up and loaders';
  const pkg = packageOf(source);
  if (pkg !== undefined) return pkg;
  const path = projectPath(source, projectRoot);
  if (path.startsWith('file://') || path.endsWith('index.mjs')) return 'bundle top level (ESM code, lazy compile)';
  return path.split('/').slice(0, 2).join('/');
}

/**
 * `runs` imports of `file` under `node --cpu-prof`, summarized per npm package through the
 * bundle's source map and averaged over the runs: where the import time goes.
 */
export function profileImport(
  file: string,
  environment: Readonly<Record<string, string>>,
  projectRoot: string,
  runs = 3,
): ProfileEntry[] {
  const totals = new Map<string, number>();
  let all = 0;
  for (let run = 0; run < runs; run++) {
    const directory = mkdtempSync(join(tmpdir(), 'news-alerts-import-profile-'));
    try {
      importOnce(file, environment, [
        '--enable-source-maps',
        '--cpu-prof',
        `--cpu-prof-dir=${directory}`,
        '--cpu-prof-interval=100',
      ]);
      const [profileFile] = readdirSync(directory).filter((name) => name.endsWith('.cpuprofile'));
      if (profileFile === undefined) throw new Error('node --cpu-prof wrote no profile');
      const entries = summarizeProfile(readCpuProfile(join(directory, profileFile)), ({ source, functionName }) =>
        importCategory(source, functionName, projectRoot),
      );
      for (const entry of entries) {
        totals.set(entry.name, (totals.get(entry.name) ?? 0) + entry.ms);
        all += entry.ms;
      }
    } finally {
      rmSync(directory, { recursive: true, force: true });
    }
  }
  return [...totals]
    .map(([name, ms]) => ({ name, ms: ms / runs, share: all > 0 ? ms / all : 0 }))
    .sort((a, b) => b.ms - a.ms);
}
