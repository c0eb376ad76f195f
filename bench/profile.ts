/**
 * CPU profiles for the report: taken in-process with the inspector (the run benchmark) or read
 * from `node --cpu-prof` output (the cold-start import), and summarized as self time per category
 * or per function. Positions inside an esbuild bundle are mapped back to their source file through
 * the bundle's source map, so a bundle's profile says `undici` or `zod`, not `index.mjs:1:4711`.
 */
import { readFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { SourceMap } from 'node:module';
import { fileURLToPath } from 'node:url';

/** The subset of V8's `Profiler.Profile` the summaries read. */
export interface CpuProfile {
  readonly nodes: readonly {
    readonly id: number;
    readonly children?: readonly number[];
    readonly callFrame: {
      readonly functionName: string;
      readonly url: string;
      readonly lineNumber: number;
      readonly columnNumber: number;
    };
  }[];
  readonly samples?: readonly number[];
  readonly timeDeltas?: readonly number[];
  readonly startTime: number;
  readonly endTime: number;
}

/** Self time of one entry of a summary. */
export interface ProfileEntry {
  readonly name: string;
  readonly ms: number;
  /** Share of all sampled time (idle included). */
  readonly share: number;
}

/** Where a sampled frame comes from, after source-map resolution. */
export interface FrameSource {
  readonly functionName: string;
  /** A file path or URL (`/work/main/functions/core/matcher.ts`, `node:internal/...`), or '' for V8's own frames. */
  readonly source: string;
}

/** Starts sampling this process's main thread; `stop()` returns the profile. */
export async function startCpuProfile(intervalMicros = 1000): Promise<{ stop(): Promise<CpuProfile> }> {
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: intervalMicros });
  await session.post('Profiler.start');
  return {
    async stop() {
      const { profile } = await session.post('Profiler.stop');
      await session.post('Profiler.disable');
      session.disconnect();
      return profile as CpuProfile;
    },
  };
}

/** Reads a `.cpuprofile` file written by `node --cpu-prof`. */
export function readCpuProfile(path: string): CpuProfile {
  return JSON.parse(readFileSync(path, 'utf8')) as CpuProfile;
}

const sourceMaps = new Map<string, SourceMap | undefined>();

function sourceMapOf(url: string): SourceMap | undefined {
  if (!url.startsWith('file://') || !/\.m?js$/.test(url)) return undefined;
  if (!sourceMaps.has(url)) {
    try {
      const payload: unknown = JSON.parse(readFileSync(`${fileURLToPath(url)}.map`, 'utf8'));
      sourceMaps.set(url, new SourceMap(payload as ConstructorParameters<typeof SourceMap>[0]));
    } catch {
      sourceMaps.set(url, undefined);
    }
  }
  return sourceMaps.get(url);
}

function frameSource(frame: CpuProfile['nodes'][number]['callFrame']): FrameSource {
  const map = sourceMapOf(frame.url);
  if (map !== undefined) {
    const entry = map.findEntry(frame.lineNumber, frame.columnNumber) as { originalSource?: string };
    if (entry.originalSource !== undefined) {
      // esbuild writes sources relative to the bundle; resolve them to absolute paths.
      const resolved = new URL(entry.originalSource, frame.url);
      const source = resolved.protocol === 'file:' ? fileURLToPath(resolved) : entry.originalSource;
      return { functionName: frame.functionName, source };
    }
  }
  const source = frame.url.startsWith('file://') ? fileURLToPath(frame.url) : frame.url;
  return { functionName: frame.functionName, source };
}

/**
 * Self time per key: `keyOf` names the bucket of each sampled frame (V8's own frames such as
 * `(garbage collector)` and `(idle)` come with an empty source). Sorted by time, largest first.
 */
export function summarizeProfile(profile: CpuProfile, keyOf: (frame: FrameSource) => string): ProfileEntry[] {
  const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
  const selfMicros = new Map<number, number>();
  const samples = profile.samples ?? [];
  const deltas = profile.timeDeltas ?? [];
  // timeDeltas[i] is the time since the previous sample, so it belongs to sample i - 1.
  for (let i = 0; i < samples.length; i++) {
    const id = samples[i] ?? 0;
    selfMicros.set(id, (selfMicros.get(id) ?? 0) + (deltas[i + 1] ?? 0));
  }
  const buckets = new Map<string, number>();
  let total = 0;
  for (const [id, micros] of selfMicros) {
    const node = nodes.get(id);
    if (node === undefined) continue;
    const key = keyOf(frameSource(node.callFrame));
    buckets.set(key, (buckets.get(key) ?? 0) + micros);
    total += micros;
  }
  return [...buckets]
    .map(([name, micros]) => ({ name, ms: micros / 1000, share: total > 0 ? micros / total : 0 }))
    .sort((a, b) => b.ms - a.ms);
}

/**
 * Self time of the samples whose frame `isTarget` accepts, attributed to their nearest caller that
 * `callerOf` names (walking up the stack): which of our functions a library's time is spent for.
 * Samples with no such caller are counted under `(no caller)`.
 */
export function summarizeByCaller(
  profile: CpuProfile,
  isTarget: (frame: FrameSource) => boolean,
  callerOf: (frame: FrameSource, leaf: FrameSource) => string | undefined,
): ProfileEntry[] {
  const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
  const parents = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parents.set(child, node.id);
  const samples = profile.samples ?? [];
  const deltas = profile.timeDeltas ?? [];
  const sources = new Map<number, FrameSource>();
  const sourceOf = (id: number): FrameSource | undefined => {
    let source = sources.get(id);
    const node = nodes.get(id);
    if (source === undefined && node !== undefined) {
      source = frameSource(node.callFrame);
      sources.set(id, source);
    }
    return source;
  };
  const buckets = new Map<string, number>();
  let total = 0;
  for (let i = 0; i < samples.length; i++) {
    const micros = deltas[i + 1] ?? 0;
    total += micros;
    const leaf = samples[i] ?? 0;
    const leafSource = sourceOf(leaf);
    if (leafSource === undefined || !isTarget(leafSource)) continue;
    let caller: string | undefined;
    for (let id = parents.get(leaf); id !== undefined && caller === undefined; id = parents.get(id)) {
      const source = sourceOf(id);
      if (source !== undefined) caller = callerOf(source, leafSource);
    }
    const key = caller ?? '(no caller)';
    buckets.set(key, (buckets.get(key) ?? 0) + micros);
  }
  return [...buckets]
    .map(([name, micros]) => ({ name, ms: micros / 1000, share: total > 0 ? micros / total : 0 }))
    .sort((a, b) => b.ms - a.ms);
}

/** The npm package a source path belongs to (`@smithy/core`, `zod`), or undefined outside node_modules. */
export function packageOf(source: string): string | undefined {
  const at = source.lastIndexOf('node_modules/');
  if (at === -1) return undefined;
  const parts = source.slice(at + 'node_modules/'.length).split('/');
  return parts[0]?.startsWith('@') ? `${parts[0]}/${parts[1] ?? ''}` : parts[0];
}

/** A repository path relative to the project root (`functions/core/matcher.ts`), or the source unchanged. */
export function projectPath(source: string, projectRoot: string): string {
  return source.startsWith(projectRoot) ? source.slice(projectRoot.length).replace(/^\/+/, '') : source;
}

/**
 * Buckets for a profile of one alert run: what the run spends CPU on, and `idle` for the time the
 * thread waited for the network.
 */
export function runCategoryOf(frame: FrameSource, projectRoot: string): string {
  const { source, functionName } = frame;
  if (source === '') {
    if (functionName === '(idle)') return 'idle (waiting for I/O)';
    if (functionName === '(garbage collector)') return 'garbage collection';
    return 'V8 and native (program)';
  }
  const path = projectPath(source, projectRoot);
  if (path.startsWith('functions/core/matcher.ts') || path.startsWith('functions/core/text.ts')) return 'matching';
  if (path.startsWith('functions/core/render.ts') || path.startsWith('functions/core/sms.ts')) return 'rendering';
  if (path.startsWith('functions/provider/')) return 'provider client (mapping, paging)';
  if (path.startsWith('functions/aws/')) return 'AWS adapters';
  if (path.startsWith('functions/')) return 'run and delivery pipeline';
  if (path.startsWith('bench/')) return 'benchmark harness';
  if (path.startsWith('scripts/')) return 'sandbox';
  const pkg = packageOf(path);
  if (pkg !== undefined) {
    if (pkg.startsWith('@aws-sdk/') || pkg.startsWith('@smithy/') || pkg.startsWith('@aws-crypto/')) {
      return 'AWS SDK (serialize, sign, parse)';
    }
    if (pkg === 'fast-xml-parser' || pkg === 'strnum') return 'AWS SDK (serialize, sign, parse)';
    if (pkg === 'undici') return 'HTTP client (undici)';
    if (pkg === 'zod') return 'validation (zod)';
    return `other packages (${pkg})`;
  }
  if (path.startsWith('node:')) {
    if (/tls|crypto|net|stream|http|socket|buffer|url/.test(path)) return 'Node.js networking, TLS and streams';
    return 'Node.js (other)';
  }
  return 'other';
}
