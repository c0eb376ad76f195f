/**
 * Memory (DESIGN section 9): peak RSS of one alert run over a 100,000-article window, measured in a
 * process that does nothing else. The child is the real Lambda bundle (the same esbuild bundle the
 * cold-start benchmark builds) run by plain `node --enable-source-maps`, invoked once with a
 * Lambda-like context; its AWS clients reach moto through `AWS_ENDPOINT_URL`, its provider is the
 * simulator process. Peak RSS is the kernel's high-water mark (`VmHWM`) and Node's
 * `resourceUsage().maxRSS`; the child also samples its heap every 20 ms.
 *
 * Separately, in this process, the benchmark weighs what a run keeps for its whole length (the
 * client's de-dup set of article keys per provider day, the pipeline's set of delivery ids) and the
 * compiled matcher for 20,000 rules, by heap size before and after building each.
 */
import v8 from 'node:v8';
import vm from 'node:vm';
import { compileRules, type RuleMatcher } from '#core/matcher';
import type { PemPair } from '#sandbox/tls';
import type { Bundle } from './cold-start.ts';
import { bundleEnvironment, runBundleDriver, startBenchStack, startSimulatorProcess } from './local-run.ts';
import { scenarioAudiences, scenarioRules } from './scenario.ts';
import { syntheticRules } from './synthetic.ts';

/** Size of the memory run. */
export interface MemoryOptions {
  readonly motoEndpoint: string;
  readonly ca: PemPair;
  /** The alert handler bundle (from the cold-start benchmark). */
  readonly handlerBundle: Bundle;
  readonly articles: number;
  readonly audiences: number;
  readonly rulesPerAudience: number;
  readonly seed: number;
  /** Extra flags for the child's `node` (e.g. a heap limit). */
  readonly nodeFlags?: readonly string[];
}

/** What the child measured. */
export interface MemoryRun {
  readonly articles: number;
  readonly articlesFetched: number;
  readonly pages: number;
  readonly notificationsPublished: number;
  readonly status: string;
  readonly rules: number;
  readonly audiences: number;
  readonly wallMs: number;
  /** VmHWM of the child (MiB): its peak resident set. */
  readonly peakRssMiB: number;
  /** process.resourceUsage().maxRSS (MiB), the same figure from libuv. */
  readonly maxRssMiB: number;
  /** RSS right after importing the bundle, before the run (MiB). */
  readonly afterImportRssMiB: number;
  readonly peakHeapUsedMiB: number;
  readonly peakExternalMiB: number;
  readonly simulatorRssMiB: number;
}

/** Heap cost of one structure the run keeps. */
export interface RetainedCost {
  readonly what: string;
  readonly count: number;
  readonly heapMiB: number;
  readonly bytesEach: number;
}

const MARKER = 'NEWS_ALERTS_BENCH_MEMORY=';

/**
 * The heap flags Lambda's Node.js bootstrap passes for a function of `memoryMb`: a tenth of the
 * memory for the young generation (half of it per semi-space), the rest for the old generation.
 */
export function lambdaHeapFlags(memoryMb: number): string[] {
  const newSpace = Math.floor(memoryMb / 10);
  return [`--max-semi-space-size=${Math.floor(newSpace / 2)}`, `--max-old-space-size=${memoryMb - newSpace}`];
}

/** Plain JavaScript run by the child: import the bundle, invoke the handler once, report memory. */
const driver = `
import { readFileSync } from 'node:fs';
const status = () => {
  const text = readFileSync('/proc/self/status', 'utf8');
  const kib = (name) => Number(new RegExp(name + ':\\\\s+(\\\\d+) kB').exec(text)?.[1] ?? NaN);
  return { hwm: kib('VmHWM'), rss: kib('VmRSS') };
};
let peakHeap = 0;
let peakExternal = 0;
const sample = () => {
  const usage = process.memoryUsage();
  peakHeap = Math.max(peakHeap, usage.heapUsed);
  peakExternal = Math.max(peakExternal, usage.external);
};
const timer = setInterval(sample, 20);
const { handler } = await import(process.argv[1]);
const afterImport = status();
const started = performance.now();
const context = {
  awsRequestId: 'bench-memory-run',
  functionName: 'news-alerts-bench',
  functionVersion: '$LATEST',
  invokedFunctionArn: 'arn:aws:lambda:us-east-1:123456789012:function:news-alerts-bench',
  memoryLimitInMB: '512',
  getRemainingTimeInMillis: () => 3_600_000 - (performance.now() - started),
};
const summary = await handler({}, context);
const wallMs = performance.now() - started;
clearInterval(timer);
sample();
const end = status();
process.stdout.write('\\n${MARKER}' + JSON.stringify({
  wallMs,
  status: summary.status,
  articlesFetched: summary.articlesFetched,
  pages: summary.pages,
  notificationsPublished: summary.notificationsPublished,
  peakRssKiB: end.hwm,
  maxRssKiB: process.resourceUsage().maxRSS,
  afterImportRssKiB: afterImport.rss,
  peakHeapUsed: peakHeap,
  peakExternal,
}) + '\\n');
`;

const mib = (bytes: number) => bytes / 2 ** 20;

/** Runs the alert handler bundle over a window of `options.articles` articles in a child process. */
export async function runMemory(options: MemoryOptions): Promise<MemoryRun> {
  // Real clock: the handler uses Date.now. The seeded 24 hours end now; the first run looks back
  // 24 hours, so its window holds every seeded article (across two provider dates).
  const simulator = await startSimulatorProcess({
    ca: options.ca,
    seed: options.seed,
    days: 1,
    perDay: options.articles,
  });
  const audiences = scenarioAudiences(options.audiences);
  const rules = scenarioRules(audiences, options.rulesPerAudience, options.seed);
  let stack: Awaited<ReturnType<typeof startBenchStack>> | undefined;
  try {
    stack = await startBenchStack({
      motoEndpoint: options.motoEndpoint,
      ca: options.ca,
      prefix: 'bench-mem-',
      simulator,
      audiences,
      rules,
      environment: {},
    });
    const result = (await runBundleDriver({
      driver,
      marker: MARKER,
      file: options.handlerBundle.file,
      environment: bundleEnvironment(options.motoEndpoint, stack, simulator, {
        NEWS_API_CA_PEM: options.ca.cert,
        NEWS_API_BASE_DELAY_MS: '20',
        NEWS_API_MAX_DELAY_MS: '500',
        INITIAL_LOOKBACK_MINUTES: '1440',
      }),
      nodeFlags: options.nodeFlags ?? [],
      what: 'the memory run',
    })) as Record<string, number | string>;
    const number = (key: string) => Number(result[key]);
    return {
      articles: Object.values(simulator.articlesByDate).reduce((sum, n) => sum + n, 0),
      articlesFetched: number('articlesFetched'),
      pages: number('pages'),
      notificationsPublished: number('notificationsPublished'),
      status: String(result.status),
      rules: rules.length,
      audiences: audiences.length,
      wallMs: number('wallMs'),
      peakRssMiB: number('peakRssKiB') / 1024,
      maxRssMiB: number('maxRssKiB') / 1024,
      afterImportRssMiB: number('afterImportRssKiB') / 1024,
      peakHeapUsedMiB: mib(number('peakHeapUsed')),
      peakExternalMiB: mib(number('peakExternal')),
      simulatorRssMiB: simulator.rssMiB,
    };
  } finally {
    await stack?.stop();
    await simulator.stop();
  }
}

let gc: (() => void) | undefined;

function collectGarbage(): void {
  if (gc === undefined) {
    v8.setFlagsFromString('--expose-gc');
    const exposed: unknown = vm.runInNewContext('gc');
    gc = typeof exposed === 'function' ? () => void exposed() : () => undefined;
  }
  gc();
  gc();
}

/** Heap growth while `build` runs and its result is still reachable. */
function heapCost<T>(build: () => T): { value: T; bytes: number } {
  collectGarbage();
  const before = process.memoryUsage().heapUsed;
  const value = build();
  collectGarbage();
  return { value, bytes: process.memoryUsage().heapUsed - before };
}

/**
 * What a run keeps for its whole length, weighed on this process's heap: the provider client's
 * set of article keys (one per article of the provider day being read: `id:` + the provider's
 * article id) and the pipeline's set of delivery ids (`audienceId|articleKey`, one per
 * notification of the run), with the shapes the run really builds; and the compiled matcher for
 * 20,000 synthetic rules (the rule objects included).
 */
export function retainedCosts(articles: number, notifications: number, seed: number): RetainedCost[] {
  const keys = heapCost(() => {
    const seen = new Set<string>();
    for (let i = 0; i < articles; i++) seen.add(`id:20261122-${String(i).padStart(6, '0')}`);
    return seen;
  });
  const ids = heapCost(() => {
    const queued = new Set<string>();
    for (let i = 0; i < notifications; i++) {
      queued.add(`bench-${String(i % 997).padStart(4, '0')}|id:20261122-${String(i).padStart(6, '0')}`);
    }
    return queued;
  });
  const matcher = heapCost((): { rules: unknown; matcher: RuleMatcher } => {
    const rules = syntheticRules(20_000, seed);
    return { rules, matcher: compileRules(rules) };
  });
  const cost = (what: string, count: number, bytes: number): RetainedCost => ({
    what,
    count,
    heapMiB: mib(bytes),
    bytesEach: count > 0 ? bytes / count : 0,
  });
  const result = [
    cost('client de-dup set of article keys (per provider day)', articles, keys.bytes),
    cost('pipeline set of delivery ids (per run)', notifications, ids.bytes),
    cost('compiled matcher with its rule objects', 20_000, matcher.bytes),
  ];
  // Keep the structures reachable until both were weighed.
  if (keys.value.size + ids.value.size + matcher.value.matcher.ruleCount < 0) throw new Error('unreachable');
  return result;
}
