/**
 * Cold start up to the first provider request (issue 33): a fresh `node` process imports a bundle
 * and invokes its handler once, and the process notes the moment the first request to the provider
 * is sent (undici's `undici:client:sendHeaders` diagnostics channel, which the bundled undici
 * publishes to as it writes the request to the socket; not `undici:request:create`, which comes
 * before the connection and the write, so work done in between would not count): the time and
 * the process's CPU time from the start of the import until then.
 * Node's own start-up is left out: it is the same for both bundles, and here it includes reading
 * NODE_EXTRA_CA_CERTS (about 45 ms), which a deployed function does not do.
 *
 * - The alert handler bundle (bench/cold-start.ts builds it as the stack does) runs its first
 *   invocation against moto and the simulator: the lease, the rules and audiences, the watermark,
 *   the reading state and the API key, then the first page.
 * - The floor: the bare bundle (bench/cold-start-bare.ts: the same SDK clients and undici pool)
 *   reads the same secret and makes the same first request, nothing else.
 *
 * Both trust the simulator's certificate as an extra root (NODE_EXTRA_CA_CERTS), as Node trusts
 * the public roots a deployed function's provider uses. Both are started alternately, after one
 * untimed start of each. The alert runs finish (the
 * simulator's day is small), so each starts from the state the previous one left: the same fixed
 * setup every time.
 */
import type { PemPair } from '#sandbox/tls';
import type { Bundle } from './cold-start.ts';
import { bundleEnvironment, runBundleDriver, startBenchStack, startSimulatorProcess } from './local-run.ts';
import { scenarioAudiences, scenarioRules } from './scenario.ts';
import { median } from './stats.ts';

const MARKER = 'NEWS_ALERTS_BENCH_FIRST_REQUEST=';

/** Plain JavaScript run by the child: note the first provider request, import, invoke once. */
const driver = `
import { subscribe } from 'node:diagnostics_channel';
const startedAt = performance.now();
const cpuAtStart = process.cpuUsage();
const moment = () => {
  const cpu = process.cpuUsage(cpuAtStart);
  return { wallMs: performance.now() - startedAt, cpuMs: (cpu.user + cpu.system) / 1000 };
};
const origin = new URL(process.env.NEWS_API_BASE_URL).origin;
let first;
subscribe('undici:client:sendHeaders', ({ request }) => {
  if (first === undefined && String(request.origin) === origin) first = moment();
});
const { handler } = await import(process.argv[1]);
const imported = moment();
const started = performance.now();
const context = {
  awsRequestId: 'bench-first-request-' + process.pid,
  functionName: 'news-alerts-bench',
  functionVersion: '$LATEST',
  invokedFunctionArn: 'arn:aws:lambda:us-east-1:123456789012:function:news-alerts-bench',
  memoryLimitInMB: '512',
  getRemainingTimeInMillis: () => 300_000 - (performance.now() - started),
};
const result = await handler({ date: process.env.BENCH_PROVIDER_DATE }, context);
const outcome = typeof result === 'number' ? 'HTTP ' + result : String(result?.status);
process.stdout.write('\\n${MARKER}' + JSON.stringify({ first, imported, outcome }) + '\\n');
process.exit(0);
`;

/** One start: the import's end and the first provider request, from the start of the import. */
export interface FirstRequestSample {
  readonly importMs: number;
  readonly importCpuMs: number;
  readonly firstRequestMs: number;
  readonly firstRequestCpuMs: number;
  /** `completed` for the alert run, `HTTP 200` for the bare bundle's request. */
  readonly outcome: string;
}

/** Medians of one bundle's starts. */
export interface FirstRequestTimes {
  readonly name: string;
  readonly samples: readonly FirstRequestSample[];
  readonly medianMs: number;
  readonly medianCpuMs: number;
  readonly medianImportMs: number;
  readonly medianImportCpuMs: number;
}

/** The part's results. */
export interface FirstRequestResults {
  readonly handler: FirstRequestTimes;
  readonly bare: FirstRequestTimes;
  readonly repetitions: number;
  readonly rules: number;
  readonly audiences: number;
}

async function startOnce(file: string, environment: Record<string, string>): Promise<FirstRequestSample> {
  const report = (await runBundleDriver({
    driver,
    marker: MARKER,
    file,
    environment,
    what: 'a first-request start',
  })) as {
    first?: { wallMs: number; cpuMs: number };
    imported: { wallMs: number; cpuMs: number };
    outcome: string;
  };
  if (report.first === undefined) throw new Error(`${file} made no provider request (outcome ${report.outcome})`);
  return {
    importMs: report.imported.wallMs,
    importCpuMs: report.imported.cpuMs,
    firstRequestMs: report.first.wallMs,
    firstRequestCpuMs: report.first.cpuMs,
    outcome: report.outcome,
  };
}

function timesOf(name: string, samples: readonly FirstRequestSample[]): FirstRequestTimes {
  return {
    name,
    samples,
    medianMs: median(samples.map((s) => s.firstRequestMs)),
    medianCpuMs: median(samples.map((s) => s.firstRequestCpuMs)),
    medianImportMs: median(samples.map((s) => s.importMs)),
    medianImportCpuMs: median(samples.map((s) => s.importCpuMs)),
  };
}

/** Options of {@link runFirstRequest}. */
export interface FirstRequestOptions {
  readonly motoEndpoint: string;
  readonly ca: PemPair;
  /** The simulator's CA certificate as a file: the children trust it through NODE_EXTRA_CA_CERTS. */
  readonly caBundlePath: string;
  readonly handlerBundle: Bundle;
  readonly bareBundle: Bundle;
  readonly repetitions: number;
  readonly audiences: number;
  readonly rulesPerAudience: number;
  readonly seed: number;
}

/** Starts each bundle `repetitions` times, alternating, against one stack and one simulator. */
export async function runFirstRequest(options: FirstRequestOptions): Promise<FirstRequestResults> {
  const simulator = await startSimulatorProcess({ ca: options.ca, seed: options.seed, days: 1, perDay: 20 });
  const audiences = scenarioAudiences(options.audiences);
  const rules = scenarioRules(audiences, options.rulesPerAudience, options.seed);
  let stack: Awaited<ReturnType<typeof startBenchStack>> | undefined;
  try {
    stack = await startBenchStack({
      motoEndpoint: options.motoEndpoint,
      ca: options.ca,
      prefix: 'bench-first-',
      simulator,
      audiences,
      rules,
      environment: {},
    });
    const environment = bundleEnvironment(options.motoEndpoint, stack, simulator, {
      // Trusted the way Node trusts an extra root, not through NEWS_API_CA_PEM: that builds a TLS
      // context of ~140 roots at import (tens of milliseconds), which a deployed function talking
      // to a public provider never does, and which would add the same cost to both bundles.
      NODE_EXTRA_CA_CERTS: options.caBundlePath,
      INITIAL_LOOKBACK_MINUTES: '60',
      BENCH_PROVIDER_DATE: Object.keys(simulator.articlesByDate).sort().at(-1) ?? '',
    });
    const handlerSamples: FirstRequestSample[] = [];
    const bareSamples: FirstRequestSample[] = [];
    await startOnce(options.handlerBundle.file, environment);
    await startOnce(options.bareBundle.file, environment);
    for (let i = 0; i < options.repetitions; i++) {
      handlerSamples.push(await startOnce(options.handlerBundle.file, environment));
      bareSamples.push(await startOnce(options.bareBundle.file, environment));
    }
    for (const sample of [...handlerSamples, ...bareSamples]) {
      if (sample.outcome !== 'completed' && sample.outcome !== 'HTTP 200') {
        throw new Error(`a first-request start did not do its work: ${sample.outcome}`);
      }
    }
    return {
      handler: timesOf(options.handlerBundle.name, handlerSamples),
      bare: timesOf(options.bareBundle.name, bareSamples),
      repetitions: options.repetitions,
      rules: rules.length,
      audiences: audiences.length,
    };
  } finally {
    await stack?.stop();
    await simulator.stop();
  }
}
