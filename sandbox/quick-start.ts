/**
 * The alert cycles of `npm start` and the check of what every audience received, on a started
 * local stack (scripts/start.ts prints them; test/e2e/quick-start-hours.test.ts runs them at every
 * hour of a day in-process).
 *
 * The check tells the truth about what the documented guarantees promise within the cycles run
 * (docs/incremental-reading.md): an article the runs were due to deliver by the last cycle and did
 * not is missing; one the provider listed late, whose delivery is due only at a later recheck, is
 * reported by name as not yet due, with when it will be. The window is the provider days the runs
 * read (a future-dated article on today's provider date is read and delivered, rightly).
 */
import type { RunSummary } from '#core/alert-run';
import { endOfDate, providerDate } from '#core/calendar';
import type { Article, RuleSet } from '#core/model';
import type { NewsSource } from '#core/ports';
import type { SandboxAudience } from './examples.ts';
import {
  type AudienceCheck,
  type CollapsedCopies,
  type CollapseReport,
  checkUpdateNotices,
  collapseReport,
  collapsingAudiences,
  compareDeliveries,
  expectedDeliveries,
  expectedFromArticles,
  isExact,
  type ReceivedUpdateNotice,
  readCollapsedCopies,
  simulatorSameStory,
} from './expectations.ts';
import type { DeliveredNotification, LocalStack, SubscriberDelivery } from './local-stack.ts';
import { OUT_OF_SCOPE_MEDIA, type SimArticle } from './news-simulator-data.ts';

/** One cycle: what its run did and what every audience and subscriber received. */
export interface CycleReport {
  readonly cycle: number;
  readonly at: string;
  readonly summary: RunSummary | undefined;
  readonly failure: string | undefined;
  readonly deliveries: DeliveredNotification[];
  readonly inbox: SubscriberDelivery[];
}

/** What the cycles did and how every audience fared. */
export interface QuickStartOutcome {
  readonly ruleSet: RuleSet;
  readonly cycles: readonly CycleReport[];
  readonly checks: Map<string, AudienceCheck>;
  readonly unchecked: Map<string, string>;
  readonly stories: Map<string, CollapseReport>;
  readonly updateProblems: Map<string, string[]>;
  /** What the expectations were worked out from, in words. */
  readonly checkedAgainst: string;
  /** Every run completed and every check holds. */
  readonly ok: boolean;
}

/** What the cycles and the check need of a stack: a local stack, or an in-memory one for tests. */
export type QuickStartStack = Pick<
  LocalStack,
  'config' | 'dependencies' | 'simulator' | 'topics' | 'run' | 'collectDeliveries' | 'collectInbox'
>;

/** The clock the cycles run on: pinned (a simulated step apart) or the real one. */
export interface CycleClock {
  readonly now: () => number;
  /** Moves to the next cycle: a pinned clock steps, a real one waits. */
  next(): Promise<void>;
  readonly pinned: boolean;
}

/**
 * Runs `cycles` alert cycles on `stack` and checks what every audience received. With the
 * simulator, breaking news arrives between cycle 1 and 2 (a late article among it).
 */
export async function runQuickStart(input: {
  readonly stack: QuickStartStack;
  readonly audiences: readonly SandboxAudience[];
  readonly ruleItems: readonly Readonly<Record<string, unknown>>[];
  readonly cycles: number;
  readonly clock: CycleClock;
  /** Called after each cycle (npm start prints it). */
  readonly onCycle?: (report: CycleReport) => void;
}): Promise<QuickStartOutcome> {
  const { stack, clock, ruleItems } = input;
  const run = stack.config.run;
  const ruleSet = await stack.dependencies.rules.load();
  const firstCutoff = clock.now() - run.initialLookbackMs - run.lateArrivalMs;
  // With a real provider nothing else knows what it holds: the check uses what the runs fetched.
  const fetched = new Map<string, Article>();
  const recordingNews = recordFetched(stack.dependencies.news, fetched);

  const reports: CycleReport[] = [];
  const receivedByAudience = new Map<string, string[]>();
  const updateNoticesByAudience = new Map<string, ReceivedUpdateNotice[]>();
  // Each article as the runs could first read it (what decides whether it was delivered), and by
  // which cycle's run: when its delivery is due.
  const firstSeen = new Map<string, { article: SimArticle; cycleAt: number; previousAt: number | undefined }>();
  let previousAt: number | undefined;
  for (let cycle = 1; cycle <= input.cycles; cycle++) {
    if (cycle > 1) {
      await clock.next();
      if (cycle === 2 && clock.pinned && stack.simulator) publishBreakingNews(stack, clock.now());
    }
    const at = clock.now();
    for (const article of stack.simulator?.articles() ?? []) {
      if (!firstSeen.has(article.articleId)) firstSeen.set(article.articleId, { article, cycleAt: at, previousAt });
    }
    let summary: RunSummary | undefined;
    let failure: string | undefined;
    try {
      summary = await stack.run({ runId: `local-cycle-${cycle}`, dependencies: { news: recordingNews } });
    } catch (error) {
      failure = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
    }
    const deliveries = await stack.collectDeliveries();
    const inbox = await stack.collectInbox();
    for (const delivered of deliveries) {
      // An update notice is about an article the audience already has, not another alert.
      if (delivered.kind === 'update') {
        const notices = updateNoticesByAudience.get(delivered.audienceId) ?? [];
        notices.push({ deliveryId: delivered.deliveryId, articleKey: delivered.articleKey });
        updateNoticesByAudience.set(delivered.audienceId, notices);
        continue;
      }
      const list = receivedByAudience.get(delivered.audienceId) ?? [];
      list.push(delivered.articleKey);
      receivedByAudience.set(delivered.audienceId, list);
    }
    const report: CycleReport = { cycle, at: new Date(at).toISOString(), summary, failure, deliveries, inbox };
    reports.push(report);
    input.onCycle?.(report);
    previousAt = at;
  }

  const lastAt = clock.now();
  const audienceItems = input.audiences.map((audience) => ({
    ...audience.item,
    topicArn: stack.topics.get(audience.item.audienceId),
  }));
  // The runs read whole provider days up to today's: an article dated later today (an embargo)
  // is read and delivered as rightly as one already past.
  const window = { from: firstCutoff, to: endOfDate(providerDate(lastAt, run.providerTimeZone), run.providerTimeZone) };
  const fromSimulator = (articles: readonly SimArticle[]) =>
    expectedDeliveries({
      articles,
      ruleItems,
      audienceItems,
      ...window,
      inScope: (media) => media !== OUT_OF_SCOPE_MEDIA,
    });
  const simulator = stack.simulator;
  const expected = simulator
    ? fromSimulator([...firstSeen.values()].map((seen) => seen.article))
    : expectedFromArticles({ articles: [...fetched.values()], ruleItems, audienceItems, ...window });
  // A later version that matches (the provider's newest status or title) may have gone out too.
  const allowed = simulator ? fromSimulator(simulator.articles()) : undefined;
  const collapsing = collapsingAudiences(audienceItems);
  const collapsed = await readCollapsedCopies(
    stack.dependencies.state,
    expected,
    receivedByAudience,
    collapsing,
    // The simulator knows which article copies which: a collapse it disagrees with is a lost alert.
    simulator ? simulatorSameStory(simulator.articles()) : undefined,
  );
  const due = simulator === undefined ? undefined : dueTimes(firstSeen, run);
  const { checks, unchecked } = checkAudiences(expected, receivedByAudience, input.audiences, {
    collapsed,
    ...(allowed ? { allowed } : {}),
    ...(due ? { due: { at: due, now: lastAt } } : {}),
  });
  const failedCycles = reports.filter((report) => report.failure !== undefined).map((report) => report.cycle);
  if (!simulator && failedCycles.length > 0) {
    // Against a real provider the check only knows what the runs fetched: after a failed run that
    // may be nothing, and "received 0 of 0 expected" would read as a pass.
    for (const audienceId of checks.keys()) {
      unchecked.set(
        audienceId,
        `run ${failedCycles.join(', ')} failed, so what the provider holds is not known (see that run's failure)`,
      );
    }
    checks.clear();
  }
  const stories = storyReports(checks, collapsing, collapsed, updateNoticesByAudience);
  const had = new Map(
    [...checks].map(([audienceId, check]) => [
      audienceId,
      new Set([...(receivedByAudience.get(audienceId) ?? []), ...check.collapsed]),
    ]),
  );
  const updateProblems = checkUpdateNotices(updateNoticesByAudience, audienceItems, had);
  for (const audienceId of unchecked.keys()) updateProblems.delete(audienceId);
  const ok = failedCycles.length === 0 && [...checks.values()].every(isExact) && updateProblems.size === 0;
  return {
    ruleSet,
    cycles: reports,
    checks,
    unchecked,
    stories,
    updateProblems,
    checkedAgainst: simulator
      ? 'every article the simulator holds in the window'
      : `the ${fetched.size} articles the runs fetched from the provider (what it holds beyond them is not known here)`,
    ok,
  };
}

/**
 * When each article's delivery is due, by the documented promise: by the run that first could
 * read it when it was listed in time (published no earlier than the previous run's start minus
 * INCREMENTAL_OVERLAP_MINUTES, or at the first run), otherwise (listed late) by the first run
 * LATE_RECHECK_MINUTES after it was listed, or, without counted reading, the next full sweep.
 */
function dueTimes(
  firstSeen: ReadonlyMap<string, { article: SimArticle; cycleAt: number; previousAt: number | undefined }>,
  run: LocalStack['config']['run'],
): Map<string, { at: number; late?: { listedAt: number; minutesLate: number } }> {
  const due = new Map<string, { at: number; late?: { listedAt: number; minutesLate: number } }>();
  const recheckMs = run.lateRecheckMs && run.lateRecheckMs > 0 ? run.lateRecheckMs : run.fullSweepMs;
  for (const { article, cycleAt, previousAt } of firstSeen.values()) {
    const inTime = previousAt === undefined || article.publishedAt >= previousAt - run.incrementalOverlapMs;
    due.set(
      `id:${article.articleId}`,
      inTime
        ? { at: cycleAt }
        : {
            at: cycleAt + recheckMs,
            late: { listedAt: cycleAt, minutesLate: Math.round((cycleAt - article.publishedAt) / 60_000) },
          },
    );
  }
  return due;
}

/**
 * Compares what each audience received with what it should have. Audiences that hold alerts
 * (digests, quiet hours, a daily budget) are left out of the check, with the reason: what they
 * receive depends on the clock and their preferences, not only on the rules.
 */
function checkAudiences(
  expected: ReadonlyMap<string, ReadonlySet<string>>,
  received: ReadonlyMap<string, readonly string[]>,
  audiences: readonly SandboxAudience[],
  compareOptions: Parameters<typeof compareDeliveries>[2],
): { checks: Map<string, AudienceCheck>; unchecked: Map<string, string> } {
  const unchecked = new Map<string, string>();
  for (const { item } of audiences) {
    const holds = (['digestTimes', 'quietHours', 'dailyBudget'] as const).filter((field) => {
      const value = item[field];
      return value !== undefined && !(Array.isArray(value) && value.length === 0);
    });
    if (holds.length > 0) {
      unchecked.set(
        item.audienceId,
        `it holds alerts (${holds.join(', ')}), so what it receives depends on the clock and its preferences`,
      );
    }
  }
  const checks = compareDeliveries(expected, received, compareOptions);
  for (const audienceId of unchecked.keys()) checks.delete(audienceId);
  return { checks, unchecked };
}

/** Per checked audience: its alerts, the copies collapsed into them and its update notices. */
function storyReports(
  checks: ReadonlyMap<string, AudienceCheck>,
  collapsing: ReadonlySet<string>,
  collapsed: CollapsedCopies,
  updateNotices: ReadonlyMap<string, readonly ReceivedUpdateNotice[]>,
): Map<string, CollapseReport> {
  const reports = new Map<string, CollapseReport>();
  for (const [audienceId, check] of checks) {
    reports.set(
      audienceId,
      collapseReport({
        collapse: collapsing.has(audienceId) ? 'story' : 'none',
        alerts: check.received,
        updateNotices: updateNotices.get(audienceId)?.length ?? 0,
        copies: collapsed.get(audienceId),
      }),
    );
  }
  return reports;
}

/** The news source, recording every article it returns (by key) into `into`. */
export function recordFetched(news: NewsSource, into: Map<string, Article>): NewsSource {
  const page = news.page?.bind(news);
  return {
    async *pages(range, pageOptions) {
      for await (const read of news.pages(range, pageOptions)) {
        for (const article of read.articles) into.set(article.key, article);
        yield read;
      }
    },
    // Counted reading reads single pages too: recorded the same way, and offered only when the
    // source itself can serve them.
    ...(page === undefined
      ? {}
      : {
          async page(range, request) {
            const read = await page(range, request);
            for (const article of read.articles) into.set(article.key, article);
            return read;
          },
          pageSize: news.pageSize,
        }),
  };
}

/** New arrivals between cycle 1 and 2: breaking news, a late article and an update of an old one. */
export function publishBreakingNews(local: Pick<LocalStack, 'simulator'>, at: number): void {
  const simulator = local.simulator;
  if (!simulator) return;
  const minutes = (n: number) => n * 60_000;
  const alreadyDelivered = simulator
    .articles()
    .find((article) => article.title.toLowerCase().includes('interest rate'));
  simulator.publish(
    {
      title: 'Magnitude 6.1 earthquake strikes off the coast of Hokkaido; no tsunami warning issued',
      summary: 'The quake struck at a depth of 40 km. Rail operators paused services for safety checks.',
      categories: ['003002000', '005000000'],
      media: 'M004',
      publishedAt: at - minutes(2),
    },
    {
      title: '東京で震度4の地震　交通機関に一部影響',
      summary: '気象庁によると、津波の心配はない。',
      categories: ['003002000'],
      media: 'M003',
      publishedAt: at - minutes(3),
    },
    {
      title: 'Chipmaker lifts semiconductor capex as AI server demand grows 🚀',
      summary: 'The company will add two fabs; analysts expect memory prices to firm.',
      categories: ['008001000', '002004000'],
      media: 'M006',
      publishedAt: at - minutes(1),
    },
    {
      title: 'Bank of Korea holds benchmark interest rate at 3.00%, signals patience',
      summary: 'The governor said inflation is easing but household debt remains a concern.',
      categories: ['002001000'],
      media: 'M005',
      publishedAt: at - minutes(4),
    },
    {
      title: 'Local election turnout hits a record high in the capital',
      summary: 'Officials extended polling hours at several stations.',
      categories: ['001000000'],
      media: 'M001',
      publishedAt: at - minutes(1),
    },
    {
      // Indexed late by the provider: published before the previous run's watermark.
      title: 'Inflation slows for a third month as energy prices ease',
      summary: 'Core inflation was unchanged.',
      categories: ['002000000'],
      media: 'M002',
      publishedAt: at - minutes(20),
    },
    {
      // Outside the API key's contracted media scope: the provider never returns it.
      title: 'Regional election results certified',
      categories: ['001000000'],
      media: OUT_OF_SCOPE_MEDIA,
      publishedAt: at - minutes(1),
    },
  );
  if (alreadyDelivered) {
    // The same article again with a new status: the ledger keeps it from being sent twice.
    simulator.publish({
      articleId: alreadyDelivered.articleId,
      title: alreadyDelivered.title,
      summary: alreadyDelivered.summary,
      url: alreadyDelivered.url,
      publishedAt: alreadyDelivered.publishedAt,
      categories: alreadyDelivered.categories.map((category) => category.code),
      media: alreadyDelivered.media.code,
      status: 'UPDATED',
    });
  }
}

/** Whether a check holds, and the articles behind it by name (for people, not only --json). */
export function describeCheckProblems(check: AudienceCheck, limit = 5): string[] {
  const lines: string[] = [];
  const list = (label: string, keys: readonly string[]) => {
    if (keys.length === 0) return;
    const shown = keys.slice(0, limit).join(', ');
    lines.push(`${label}: ${shown}${keys.length > limit ? ` and ${keys.length - limit} more (--json lists all)` : ''}`);
  };
  list('missing', check.missing);
  list('unexpected', check.unexpected);
  list('twice', check.duplicates);
  return lines;
}

export { isExact };
