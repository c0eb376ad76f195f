/**
 * One full alert run against the local stack (moto server + the news simulator in its own
 * process), measured three ways at once:
 *
 * - **Requests vs the floor.** Recorders on the stack's real SDK clients (bench/request-recorder.ts)
 *   count every DynamoDB and SNS request with the items it carried; the simulator's own request
 *   log counts provider pages. Each count is compared with the least the work could cost:
 *   ceil(N / size) + 1 pages per provider day, ceil(messages / 10) PublishBatch calls per topic,
 *   ceil(lookups / 100) BatchGetItem and ceil(writes / 25) BatchWriteItem calls.
 * - **Throughput.** Articles and notifications per second of the run's wall time.
 * - **Where the time goes.** The run's wait for the next provider page (a wrapper around the
 *   NewsSource, so only waits the page prefetch did not hide count), the union of in-flight
 *   intervals of SNS and DynamoDB requests (middleware timing; concurrent requests count once),
 *   and a CPU profile of the process (inspector, 1 ms sampling) for matching, rendering and the
 *   rest of the in-process work.
 *
 * The run's clock is pinned to the last millisecond of a provider day and the simulator is seeded
 * with exactly that day, so the window is one full day (plus the empty day before it, which the
 * first run's look-back reaches).
 */
import { compileRules } from '#core/matcher';
import { buildRuleSet } from '#core/model';
import type { ArticlePage, NewsSource, ProviderDateRange } from '#core/ports';
import { articleOf } from '#sandbox/expectations';
import { generateArticles } from '#sandbox/news-simulator-data';
import type { PemPair } from '#sandbox/tls';
import { startBenchStack, startSimulatorProcess } from './local-run.ts';
import {
  type ProfileEntry,
  packageOf,
  projectPath,
  runCategoryOf,
  startCpuProfile,
  summarizeByCaller,
  summarizeProfile,
} from './profile.ts';
import { type RecordedRequest, recordRequests } from './request-recorder.ts';
import { scenarioAudiences, scenarioRules } from './scenario.ts';
import { unionLength } from './stats.ts';

/** Size of the run. */
export interface EndToEndOptions {
  readonly motoEndpoint: string;
  readonly ca: PemPair;
  readonly projectRoot: string;
  readonly articlesPerDay: number;
  readonly audiences: number;
  readonly rulesPerAudience: number;
  readonly seed: number;
  readonly pageSize: number;
  /** Extra alert-function environment (e.g. LEDGER_FLUSH_DELAY_MS for the trade-off runs). */
  readonly environment?: Readonly<Record<string, string>>;
}

/** A request count next to its floor. */
export interface FloorComparison {
  readonly requests: number;
  /** What the requests carried (articles, lookups, writes, messages). */
  readonly items: number;
  readonly floor: number;
  /** requests / floor (1 when both are 0). */
  readonly ratio: number;
}

/** Provider pages of one requested date range. */
export interface ProviderRange extends FloorComparison {
  readonly range: string;
}

/** Everything the run measured. */
export interface EndToEndResult {
  readonly options: EndToEndOptions;
  readonly rules: number;
  readonly setupMs: number;
  readonly wallMs: number;
  /** User + system CPU of the benchmark process during the run (the simulator and moto excluded). */
  readonly cpuMs: number;
  readonly articlesFetched: number;
  readonly articlesMatched: number;
  readonly notificationsPublished: number;
  /** What the rules match among the day's articles, worked out independently of the run. */
  readonly notificationsExpected: number;
  readonly status: string;
  readonly provider: { readonly ranges: readonly ProviderRange[]; readonly total: FloorComparison };
  readonly sns: {
    readonly topics: number;
    readonly total: FloorComparison;
    /** Largest per-topic requests / floor, and the topic it was seen on. */
    readonly worstTopic: FloorComparison & { readonly topicArn: string };
    /** Mean UTF-8 size of one notification (all channel bodies of its JSON message, and subject). */
    readonly meanMessageBytes: number;
    /** Most notifications one topic received. */
    readonly busiestTopicMessages: number;
  };
  readonly batchGet: FloorComparison;
  readonly batchWrite: FloorComparison;
  /** Other DynamoDB commands (lease, watermark, rules, run history) by name. */
  readonly otherDynamo: Readonly<Record<string, number>>;
  readonly time: {
    readonly providerWaitMs: number;
    readonly snsBusyMs: number;
    readonly snsRequestMs: number;
    readonly batchGetBusyMs: number;
    readonly batchWriteBusyMs: number;
    readonly ledgerBusyMs: number;
    readonly otherDynamoBusyMs: number;
  };
  readonly profile: readonly ProfileEntry[];
  /** CPU in date/time (luxon) and validation (zod) code, by the project function that called it. */
  readonly libraryCallers: readonly ProfileEntry[];
}

const ratioOf = (requests: number, floor: number): number =>
  floor === 0 ? (requests === 0 ? 1 : Number.POSITIVE_INFINITY) : requests / floor;

/** Wraps a NewsSource so the time the run spends waiting for its next page is added to `waits.ms`. */
export function timedNewsSource(news: NewsSource, waits: { ms: number }): NewsSource {
  return {
    pages(range: ProviderDateRange, options?: { signal?: AbortSignal }): AsyncIterable<ArticlePage> {
      return (async function* () {
        const iterator = news.pages(range, options)[Symbol.asyncIterator]();
        try {
          for (;;) {
            const started = performance.now();
            const next = await iterator.next();
            waits.ms += performance.now() - started;
            if (next.done) return;
            yield next.value;
          }
        } finally {
          await iterator.return?.();
        }
      })();
    },
  };
}

function batchComparison(requests: readonly RecordedRequest[], command: string, perRequest: number): FloorComparison {
  const matching = requests.filter((r) => r.command === command);
  const items = matching.reduce((sum, r) => sum + r.items, 0);
  const floor = Math.ceil(items / perRequest);
  return { requests: matching.length, items, floor, ratio: ratioOf(matching.length, floor) };
}

/** Runs the scenario and measures it; see the module comment. */
export async function runEndToEnd(options: EndToEndOptions): Promise<EndToEndResult> {
  const setupStarted = performance.now();
  const timeZone = 'Asia/Seoul';
  // The last millisecond of 2026-11-22 in Seoul: the seeded 24 hours are exactly that date.
  const now = Date.parse('2026-11-22T23:59:59.999+09:00');
  const simulator = await startSimulatorProcess({
    ca: options.ca,
    seed: options.seed,
    days: 1,
    perDay: options.articlesPerDay,
    now,
    timeZone,
  });
  const audiences = scenarioAudiences(options.audiences);
  const rules = scenarioRules(audiences, options.rulesPerAudience, options.seed);
  let stack: Awaited<ReturnType<typeof startBenchStack>> | undefined;
  try {
    stack = await startBenchStack({
      motoEndpoint: options.motoEndpoint,
      ca: options.ca,
      prefix: 'bench-e2e-',
      simulator,
      audiences,
      rules,
      now: () => now,
      environment: {
        NEWS_API_PAGE_SIZE: String(options.pageSize),
        INITIAL_LOOKBACK_MINUTES: '1440',
        LATE_ARRIVAL_MINUTES: '0',
        ...options.environment,
      },
    });

    // Independent expectation: the same seeded articles, matched by the compiled rules.
    const topics = stack.topics;
    const ruleSet = buildRuleSet(
      rules,
      audiences.map((a) => ({ ...a.item, topicArn: topics.get(a.item.audienceId) })),
    );
    const matcher = compileRules(ruleSet.rules);
    let notificationsExpected = 0;
    for (const article of generateArticles({
      seed: options.seed,
      days: 1,
      perDay: options.articlesPerDay,
      now,
      timeZone,
    })) {
      notificationsExpected += matcher.match(articleOf(article)).length;
    }

    const dynamo = recordRequests(stack.clients.dynamo, 'DynamoDB');
    const sns = recordRequests(stack.clients.sns, 'SNS');
    const providerWait = { ms: 0 };
    const setupMs = performance.now() - setupStarted;

    const profiler = await startCpuProfile(1000);
    const cpuBefore = process.cpuUsage();
    const started = performance.now();
    const summary = await stack.run({
      runId: 'bench-run',
      dependencies: { news: timedNewsSource(stack.dependencies.news, providerWait) },
    });
    const wallMs = performance.now() - started;
    const cpu = process.cpuUsage(cpuBefore);
    const profile = await profiler.stop();
    dynamo.uninstall();
    sns.uninstall();

    // Provider pages per requested range, against ceil(N / size) + 1.
    const providerRequests = (await simulator.requests()).filter((r) => r.path === '/news');
    const byRange = new Map<string, { requests: number; start: string }>();
    for (const request of providerRequests) {
      const range = `${request.publishedAtStart ?? '?'}..${request.publishedAtEnd ?? '?'}`;
      const entry = byRange.get(range) ?? { requests: 0, start: request.publishedAtStart ?? '' };
      entry.requests += 1;
      byRange.set(range, entry);
    }
    const ranges: ProviderRange[] = [...byRange].map(([range, { requests, start }]) => {
      const items = simulator.articlesByDate[start] ?? 0;
      const floor = Math.ceil(items / options.pageSize) + 1;
      return { range, requests, items, floor, ratio: ratioOf(requests, floor) };
    });
    const providerTotal = ranges.reduce(
      (sum, r) => ({ requests: sum.requests + r.requests, items: sum.items + r.items, floor: sum.floor + r.floor }),
      { requests: 0, items: 0, floor: 0 },
    );

    // SNS PublishBatch per topic, against ceil(messages / 10).
    const publishes = sns.requests.filter((r) => r.command === 'PublishBatchCommand');
    const perTopic = new Map<string, { requests: number; items: number }>();
    for (const request of publishes) {
      const entry = perTopic.get(request.topicArn ?? '') ?? { requests: 0, items: 0 };
      entry.requests += 1;
      entry.items += request.items;
      perTopic.set(request.topicArn ?? '', entry);
    }
    let worstTopic: FloorComparison & { topicArn: string } = {
      topicArn: '-',
      requests: 0,
      items: 0,
      floor: 0,
      ratio: 1,
    };
    let snsFloor = 0;
    let snsItems = 0;
    for (const [topicArn, { requests, items }] of perTopic) {
      const floor = Math.ceil(items / 10);
      snsFloor += floor;
      snsItems += items;
      const ratio = ratioOf(requests, floor);
      if (ratio > worstTopic.ratio || (ratio === worstTopic.ratio && requests > worstTopic.requests)) {
        worstTopic = { topicArn, requests, items, floor, ratio };
      }
    }

    const ledgerCommands = new Set(['BatchGetItemCommand', 'BatchWriteItemCommand']);
    const otherDynamo: Record<string, number> = {};
    for (const request of dynamo.requests) {
      if (!ledgerCommands.has(request.command)) {
        const name = request.command.replace(/Command$/, '');
        otherDynamo[name] = (otherDynamo[name] ?? 0) + 1;
      }
    }
    const busy = (filter: (r: RecordedRequest) => boolean, list: readonly RecordedRequest[]) =>
      unionLength(list.filter(filter));

    return {
      options,
      rules: rules.length,
      setupMs,
      wallMs,
      cpuMs: (cpu.user + cpu.system) / 1000,
      articlesFetched: summary.articlesFetched,
      articlesMatched: summary.articlesMatched,
      notificationsPublished: summary.notificationsPublished,
      notificationsExpected,
      status: summary.status,
      provider: { ranges, total: { ...providerTotal, ratio: ratioOf(providerTotal.requests, providerTotal.floor) } },
      sns: {
        topics: perTopic.size,
        total: {
          requests: publishes.length,
          items: snsItems,
          floor: snsFloor,
          ratio: ratioOf(publishes.length, snsFloor),
        },
        worstTopic,
        meanMessageBytes: snsItems > 0 ? publishes.reduce((sum, r) => sum + r.bytes, 0) / snsItems : 0,
        busiestTopicMessages: Math.max(0, ...[...perTopic.values()].map((t) => t.items)),
      },
      batchGet: batchComparison(dynamo.requests, 'BatchGetItemCommand', 100),
      batchWrite: batchComparison(dynamo.requests, 'BatchWriteItemCommand', 25),
      otherDynamo,
      time: {
        providerWaitMs: providerWait.ms,
        snsBusyMs: busy(() => true, publishes),
        snsRequestMs: publishes.reduce((sum, r) => sum + (r.end - r.start), 0),
        batchGetBusyMs: busy((r) => r.command === 'BatchGetItemCommand', dynamo.requests),
        batchWriteBusyMs: busy((r) => r.command === 'BatchWriteItemCommand', dynamo.requests),
        ledgerBusyMs: busy((r) => ledgerCommands.has(r.command), dynamo.requests),
        otherDynamoBusyMs: busy((r) => !ledgerCommands.has(r.command), dynamo.requests),
      },
      profile: summarizeProfile(profile, (frame) => runCategoryOf(frame, options.projectRoot)),
      libraryCallers: summarizeByCaller(
        profile,
        ({ source }) => ['luxon', 'zod'].includes(packageOf(source) ?? ''),
        ({ source, functionName }, leaf) => {
          const path = projectPath(source, options.projectRoot);
          if (!path.startsWith('functions/')) return undefined;
          return `${packageOf(leaf.source) ?? '?'} for ${functionName || '(anonymous)'} (${path})`;
        },
      ),
    };
  } finally {
    await stack?.stop();
    await simulator.stop();
  }
}
