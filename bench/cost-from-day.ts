/**
 * Turns the simulated provider day (bench/provider-day.ts: one size, 100,000 articles a day for
 * the bench's audiences) into the day counts the cost model prices (bench/cost-model-cli.ts) at
 * the sizes of docs/cost.md: 1,000 articles a day × 5 audiences, 10,000 × 20, and 10,000 and
 * 100,000 articles a day × 100 and 1,000 audiences,
 * reading every page ("today") and incrementally with counted reading (the default), for the
 * typical lateness, on the default 5-minute schedule.
 *
 * Scaling, stated so the table can be read: provider pages and articles read grow with the day's
 * articles beyond one request per run (both modes read about N/size pages per sweep or per run
 * plus a fixed request each run); notifications grow with articles × audiences; Lambda time per
 * run follows CPU per article read, measured on the incremental day, plus the provider's page
 * latency (bench/cost-fixture.ts lambdaMsFromBench).
 */
import type { DayBenchCounts, StackFacts } from './cost-fixture.ts';
import { lambdaMsFromBench } from './cost-fixture.ts';
import type { DayScenarioResult, ProviderDayResults } from './provider-day.ts';

/** The sizes of docs/cost.md. */
export const COST_SIZES: readonly { readonly articlesPerDay: number; readonly audiences: number }[] = [
  // The smallest real deployment (a desk with five audiences), and a small newsroom.
  { articlesPerDay: 1_000, audiences: 5 },
  { articlesPerDay: 10_000, audiences: 20 },
  { articlesPerDay: 10_000, audiences: 100 },
  { articlesPerDay: 10_000, audiences: 1_000 },
  { articlesPerDay: 100_000, audiences: 100 },
  { articlesPerDay: 100_000, audiences: 1_000 },
];

/**
 * The 5-minute scenarios the cost is computed from (the typical lateness; incremental: counted
 * reading, the default), or undefined when the day did not measure them.
 */
export function costScenarios(
  day: ProviderDayResults,
): { today: DayScenarioResult; incremental: DayScenarioResult } | undefined {
  const fiveMinutes = day.scenarios.filter((scenario) => scenario.intervalMinutes === 5);
  const today = fiveMinutes.find((scenario) => scenario.reading === 'today');
  const incremental = fiveMinutes.find(
    (scenario) => scenario.reading === 'counted' && scenario.lateness === 'typical' && scenario.stopped === undefined,
  );
  return today && incremental ? { today, incremental } : undefined;
}

/** Day counts for every size and both readings, scaled from the measured day. */
export function costDaysFromProviderDay(day: ProviderDayResults, facts: StackFacts): DayBenchCounts[] {
  const measured = costScenarios(day);
  if (measured === undefined) return [];
  const notificationsMeasured = measured.incremental.deliveries?.expected ?? 0;
  const articlesReadMeasured = measured.incremental.articlesRead ?? 0;
  const cpuPerArticleRead = articlesReadMeasured > 0 ? (measured.incremental.cpuMs ?? 0) / articlesReadMeasured : 0;
  const days: DayBenchCounts[] = [];
  for (const size of COST_SIZES) {
    const articleScale = size.articlesPerDay / day.articlesPerDay;
    const audienceScale = size.audiences / Math.max(1, day.audiences);
    for (const [reading, scenario] of [
      ['today', measured.today],
      ['incremental', measured.incremental],
    ] as const) {
      const runs = scenario.runs;
      const pages = runs + Math.max(0, scenario.pages - runs) * articleScale;
      const articlesRead = (scenario.articlesRead ?? 0) * articleScale;
      const pagesPerRun = pages / runs;
      days.push({
        articlesPerDay: size.articlesPerDay,
        audiences: size.audiences,
        reading,
        runsPerDay: runs,
        providerPagesPerDay: Math.round(pages),
        articlesReadPerDay: Math.round(articlesRead),
        notificationsPerDay: Math.round(notificationsMeasured * articleScale * audienceScale),
        lambdaMsPerRun: lambdaMsFromBench(
          {
            cpuMs: (cpuPerArticleRead * articlesRead) / runs,
            // Reading every page fetches a window of pages at once; incremental reads go one by one.
            concurrentPages: reading === 'today' ? pagesPerRun : 0,
            sequentialPages: reading === 'today' ? 0 : pagesPerRun,
          },
          facts,
        ),
      });
    }
  }
  return days;
}
