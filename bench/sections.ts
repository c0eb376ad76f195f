/**
 * Turns what each benchmark measured into report sections, target verdicts and the "single-run
 * limits" paragraph. Formatting and arithmetic only; the measuring is in the other modules.
 */

import { defaultPageSize } from '#core/ports';
import type { ImportTimes } from './cold-start.ts';
import type { EndToEndResult, FloorComparison } from './end-to-end.ts';
import type { FirstRequestResults, FirstRequestTimes } from './first-request.ts';
import {
  ADVERSARIAL_NEAR_QUERY,
  type AdversarialNearRow,
  adversarialNearTable,
  growsLinearly,
  LINEAR_GROWTH_LIMIT,
  type MatchingBenchmark,
  type MatchingFloor,
  MIX_CHUNK,
  type QueryMixBenchmark,
} from './matching.ts';
import type { MemoryRun, RetainedCost } from './memory.ts';
import type { ProfileEntry } from './profile.ts';
import type { DayScenarioResult, ProviderDayResults } from './provider-day.ts';
import type { PublishingResults, PublishingRun } from './publishing.ts';
import { type FakePublishingResults, type FakeRun, type ModelPoint, modelThroughput } from './publishing-fake.ts';
import type { Section, Table, TargetCheck } from './report.ts';
import { formatBytes, formatMs, formatNumber, formatRatio, formatShare, median } from './stats.ts';

/** One cell of the matching grid. */
export interface MatchingCell {
  readonly articles: number;
  readonly rules: number;
  readonly result: MatchingBenchmark;
}

/** Everything the matching benchmark produced. */
export interface MatchingResults {
  readonly cells: readonly MatchingCell[];
  /** Extra indexed passes over the largest cell (for the spread). */
  readonly repeatsMs: readonly number[];
  /** The same passes' CPU time (user + system), ms. */
  readonly repeatsCpuMs: readonly number[];
  /** CPU profile of the indexed matcher on the largest cell, per function. */
  readonly profile?: readonly ProfileEntry[];
  /**
   * The largest cell again with a share of the rules as boolean queries (issue 12), its passes
   * interleaved with keyword-only passes of the same rules otherwise (bench/matching.ts
   * benchQueryMix).
   */
  readonly queryMix?: QueryMixBenchmark;
  /** The worst case of one rule (issue 30): adversarial NEAR at growing text lengths. */
  readonly adversarialNear?: readonly AdversarialNearRow[];
  /** The largest cell against one Aho-Corasick pass of its text with all keywords (issue 33). */
  readonly floor?: MatchingFloor;
}

/** Issue 12's bar: the query mix takes at most this many times the keyword-only figure of the same run. */
const QUERY_MIX_TARGET_RATIO = 1.5;

/** The query mix's and the interleaved keyword-only passes' medians, and their ratio. */
export function queryMixFigures(mix: QueryMixBenchmark): { queryMs: number; keywordMs: number; ratio: number } {
  const queryMs = median(mix.queryMs);
  const keywordMs = median(mix.keywordMs);
  return { queryMs, keywordMs, ratio: queryMs / keywordMs };
}

/** The DESIGN section 9 matching target applies to this cell. */
export const TARGET_ARTICLES = 100_000;
export const TARGET_RULES = 20_000;

const count = (n: number) => formatNumber(n);
const ratioCell = (c: FloorComparison) => formatRatio(c.ratio);

function largestCell(results: MatchingResults): MatchingCell | undefined {
  return [...results.cells].sort((a, b) => b.articles * b.rules - a.articles * a.rules)[0];
}

/** The headline indexed time of the largest cell: the median of the grid pass and the repeats. */
export function headlineIndexedMs(results: MatchingResults): { median: number; min: number; max: number } {
  const cell = largestCell(results);
  const samples = [...(cell ? [cell.result.indexedMs] : []), ...results.repeatsMs];
  return { median: median(samples), min: Math.min(...samples), max: Math.max(...samples) };
}

function profileTable(title: string, entries: readonly ProfileEntry[], limit: number): Table {
  return {
    title,
    header: ['where', 'self time', 'share'],
    rows: entries.slice(0, limit).map((e) => [e.name, formatMs(e.ms), formatShare(e.share)]),
  };
}

/** Section 1: indexed vs naive matching. */
export function matchingSection(results: MatchingResults, imagePath: string | undefined): Section {
  const worst = results.adversarialNear === undefined ? [] : [adversarialNearTable(results.adversarialNear)];
  const rows = results.cells.map(({ articles, rules, result }) => [
    count(articles),
    count(rules),
    formatMs(result.compileMs),
    formatMs(result.indexedMs),
    formatMs(result.indexedCpuMs),
    formatNumber((result.indexedMs * 1000) / articles, 1),
    `${formatMs(result.naiveMs)}${result.naiveArticles < articles ? ' *' : ''}`,
    formatRatio(result.ratio, 0),
    formatNumber(result.matches / articles, 1),
  ]);
  const cell = (a: number, r: number) => results.cells.find((c) => c.articles === a && c.rules === r)?.result;
  const articleCounts = [...new Set(results.cells.map((c) => c.articles))].sort((a, b) => a - b);
  const ruleCounts = [...new Set(results.cells.map((c) => c.rules))].sort((a, b) => a - b);
  const growth: string[][] = [];
  for (const r of ruleCounts) {
    for (let i = 1; i < articleCounts.length; i++) {
      const from = cell(articleCounts[i - 1] ?? 0, r);
      const to = cell(articleCounts[i] ?? 0, r);
      if (!from || !to) continue;
      growth.push([
        `articles ${count(articleCounts[i - 1] ?? 0)} → ${count(articleCounts[i] ?? 0)} (×${formatNumber((articleCounts[i] ?? 0) / (articleCounts[i - 1] ?? 1))}) at ${count(r)} rules`,
        formatRatio(to.indexedMs / from.indexedMs, 1),
        formatRatio(to.naiveMs / from.naiveMs, 1),
      ]);
    }
  }
  for (const a of articleCounts) {
    for (let i = 1; i < ruleCounts.length; i++) {
      const from = cell(a, ruleCounts[i - 1] ?? 0);
      const to = cell(a, ruleCounts[i] ?? 0);
      if (!from || !to) continue;
      growth.push([
        `rules ${count(ruleCounts[i - 1] ?? 0)} → ${count(ruleCounts[i] ?? 0)} (×${formatNumber((ruleCounts[i] ?? 0) / (ruleCounts[i - 1] ?? 1))}) at ${count(a)} articles`,
        formatRatio(to.indexedMs / from.indexedMs, 1),
        formatRatio(to.naiveMs / from.naiveMs, 1),
      ]);
    }
  }
  const largest = largestCell(results);
  const headline = headlineIndexedMs(results);
  const findings: string[] = [];
  if (largest) {
    findings.push(
      `At ${count(largest.articles)} articles × ${count(largest.rules)} rules the indexed matcher took ${formatMs(headline.median)} (median of ${1 + results.repeatsMs.length} passes, ${formatMs(headline.min)} to ${formatMs(headline.max)}), plus ${formatMs(largest.result.compileMs)} to compile the rules once per run; the naive scan would take ${formatMs(largest.result.naiveMs)} (extrapolated from ${count(largest.result.naiveArticles)} evenly spaced articles): ${formatRatio(largest.result.naiveMs / headline.median, 0)} faster.`,
    );
    findings.push(
      `Each article matches ${formatNumber(largest.result.matches / largest.articles, 1)} audiences (${formatNumber(largest.result.ruleMatches / largest.articles, 1)} rules) at ${count(largest.rules)} rules: the index cost per article grows with the matches it must build, not with the rule count (see the growth table).`,
    );
  }
  const mix = results.queryMix;
  if (largest && mix) {
    const figures = queryMixFigures(mix);
    findings.push(
      `With ${formatShare(mix.queryShare)} of the ${count(largest.rules)} rules as boolean queries (phrases, AND, OR, NOT, NEAR, prefix terms, field scopes; bench/synthetic.ts), matching ${count(largest.articles)} articles took ${formatMs(figures.queryMs)} against ${formatMs(figures.keywordMs)} keyword-only in passes in which the two matchers take turns every ${count(MIX_CHUNK)} articles (bench/matching.ts MIX_CHUNK; medians of ${mix.queryMs.length} each): ${formatRatio(figures.ratio, 2)}. The naive reference (evaluateQuery for every query rule) agreed on all ${count(mix.result.naiveArticles)} sampled articles; ${formatNumber(mix.result.matches / largest.articles, 1)} audiences (${formatNumber(mix.result.ruleMatches / largest.articles, 1)} rules) per article.`,
    );
  }
  const tables: Table[] = [
    {
      header: [
        'articles',
        'rules',
        'compile',
        'indexed',
        'indexed CPU',
        'µs/article',
        'naive',
        'naive/indexed',
        'audiences/article',
      ],
      numericFrom: 2,
      rows,
      notes: [
        '* naive time extrapolated linearly from an evenly spaced sample of articles (the naive scan is linear in articles); both matchers must agree on every sampled article or the benchmark stops.',
        'indexed CPU is the process CPU over the same span (all threads, GC included); on a shared machine it shows how much of the wall time was this work.',
      ],
    },
    {
      title: 'Growth: time factor when one dimension grows',
      header: ['step', 'indexed', 'naive'],
      rows: growth,
    },
  ];
  if (results.profile !== undefined) {
    tables.push(
      profileTable(
        `CPU profile of the indexed matcher at ${count(largest?.articles ?? 0)} × ${count(largest?.rules ?? 0)} (inspector, 0.2 ms sampling, self time per function)`,
        results.profile,
        10,
      ),
    );
  }
  tables.push(...worst);
  return {
    title: '1. Matching: indexed vs naive',
    intro: [
      "Synthetic articles and rules from bench/synthetic.ts (seeded: English, Korean and Japanese text, Zipf-distributed categories, outlets and keywords, exclusions, prefix and name categories, a few matchAll rules), the articles read back through the provider client's mapping from the simulator's JSON, as production hands them to the matcher. The indexed matcher (functions/core/matcher.ts) and the naive all-rules scan (`naiveMatch`) run on the same input in the same process, after a warm-up and a full GC.",
    ],
    ...(imagePath === undefined
      ? {}
      : { image: { path: imagePath, alt: 'Matching time vs articles, indexed and naive, at 1,000 and 20,000 rules' } }),
    tables,
    findings,
  };
}

/** Why the time target was missed, from this run's own figures: output volume, profile, spread. */
function matchingMissNote(results: MatchingResults): string {
  const largest = largestCell(results);
  const headline = headlineIndexedMs(results);
  const parts = [
    `why: each article matches ${formatNumber((largest?.result.matches ?? 0) / (largest?.articles ?? 1), 1)} audiences, so a pass builds ${count(largest?.result.matches ?? 0)} AudienceMatch results (the work grows with the matches, not the rules: see the growth table)`,
  ];
  // Which functions V8 inlines changes from run to run, so shares are summed per file.
  const shareOf = (test: (name: string) => boolean) =>
    (results.profile ?? []).filter((entry) => test(entry.name)).reduce((sum, entry) => sum + entry.share, 0);
  const normalization = shareOf((name) => name.startsWith('normalizeText '));
  const shares = [
    ['the matcher (matcher.ts)', shareOf((name) => name.endsWith('(functions/core/matcher.ts)'))],
    ['the keyword automaton (text.ts)', shareOf((name) => name.endsWith('(functions/core/text.ts)')) - normalization],
    ['normalization', normalization],
  ] as const;
  if ((results.profile ?? []).length > 0) {
    parts.push(
      `the profile in section 1 puts ${shares.map(([what, value]) => `${formatShare(value)} in ${what}`).join(', ')}`,
    );
  }
  parts.push(
    `passes on this shared machine ranged ${formatMs(headline.min)}–${formatMs(headline.max)} (${formatRatio(headline.max / headline.min, 2)}), so the figure moves with other work on the host`,
  );
  return `${parts.join('; ')}.`;
}

/** Matching targets: < 2 s and ≥ 20× naive at 100k × 20k. */
/** Issue 15's bar for the headline matching pass (DESIGN section 9 asks for < 2 s). */
const MATCHING_TARGET_MS = 1000;

/** Issue 15's bar for the run's in-process CPU per notification. */
const CPU_PER_NOTIFICATION_TARGET_MS = 0.6;

export function matchingTargets(results: MatchingResults): TargetCheck[] {
  const largest = largestCell(results);
  const atTarget = largest?.articles === TARGET_ARTICLES && largest.rules === TARGET_RULES;
  const headline = headlineIndexedMs(results);
  const scope = largest ? `${count(largest.articles)} × ${count(largest.rules)}` : 'n/a';
  return [
    ...(results.floor === undefined ? [] : [matchingFloorTarget(results.floor, scope, atTarget)]),
    {
      target: 'Matching 100,000 articles × 20,000 rules in ≤ 1.0 s median (issue 15; DESIGN section 9 asks < 2 s)',
      measured: `${formatMs(headline.median)} at ${scope} (range ${formatMs(headline.min)}–${formatMs(headline.max)}; compile ${formatMs(largest?.result.compileMs ?? Number.NaN)})`,
      // The host decides it (the same code measured 925 to 1,221 ms): the ratio row above is the target.
      met: undefined,
      information: true,
      ...(atTarget && headline.median > MATCHING_TARGET_MS ? { note: matchingMissNote(results) } : {}),
    },
    {
      target: 'Matching ≥ 20× faster than the naive scan (same run)',
      measured: `${formatRatio((largest?.result.naiveMs ?? Number.NaN) / headline.median, 0)} at ${scope}`,
      met: atTarget ? (largest?.result.naiveMs ?? 0) / headline.median >= 20 : undefined,
    },
    ...(results.queryMix === undefined ? [] : [queryMixTarget(results, results.queryMix, scope, atTarget)]),
    ...(results.adversarialNear === undefined ? [] : [adversarialNearTarget(results.adversarialNear)]),
  ];
}

/**
 * Issue 33: the most matching may take over its floor, one Aho-Corasick pass of the same text with
 * all keywords (normalization included), measured in the same passes. Measured 1.96–2.23× on
 * this machine under load; the matcher adds categories, exclusions, queries and ~24
 * AudienceMatch results per article on top of the floor's scan, which is what limits the ratio.
 */
export const MATCHING_FLOOR_RATIO = 2.5;

function matchingFloorTarget(floor: MatchingFloor, scope: string, atTarget: boolean): TargetCheck {
  const matchingMs = median(floor.matchingMs);
  const floorMs = median(floor.floorMs);
  const ratios = floor.matchingMs.map((ms, index) => ms / (floor.floorMs[index] ?? Number.NaN));
  const ratio = matchingMs / floorMs;
  const met = ratio <= MATCHING_FLOOR_RATIO;
  return {
    target: `Matching ${scope} ≤ ${formatNumber(MATCHING_FLOOR_RATIO, 1)}× one Aho-Corasick pass of all article text with all ${count(floor.terms)} keywords (the floor: reading the text once; same run, interleaved)`,
    measured: `${formatRatio(ratio, 2)} (passes ${ratios.map((r) => formatRatio(r, 2)).join(', ')}); for information: matching ${formatMs(matchingMs)}, floor ${formatMs(floorMs)} over ${count(floor.characters)} characters`,
    met: atTarget ? met : undefined,
    ...(met
      ? {}
      : {
          note: 'why: the matcher spent more than its floor allows over the same text: look at the profile of section 1 (categories, exclusions, query programs, building each AudienceMatch).',
        }),
    ...(atTarget ? {} : { note: 'quick runs stop at 10,000 articles; run the full benchmark for this target' }),
  };
}

/** The worst case of one rule grows at most linearly with the article's length (issue 30, item 1). */
function adversarialNearTarget(rows: readonly AdversarialNearRow[]): TargetCheck {
  const first = rows[0];
  const last = rows.at(-1);
  const growth = Math.max(...rows.map((row) => row.perCharacterGrowth));
  const met = growsLinearly(rows);
  return {
    target: `Matching's worst case per article (${ADVERSARIAL_NEAR_QUERY} on text of its two terms) grows at most linearly with the text: cost per character within ${formatNumber(LINEAR_GROWTH_LIMIT, 1)}× of the shortest length's (same run)`,
    measured: `${formatRatio(growth, 2)} at most, from ${count(first?.characters ?? 0)} to ${count(last?.characters ?? 0)} characters (${formatNumber(first?.microsPerArticle ?? Number.NaN, 0)} to ${formatNumber(last?.microsPerArticle ?? Number.NaN, 0)} µs an article; quadratic work would show about ${formatRatio((last?.perSide ?? 1) / (first?.perSide ?? 1), 0)})`,
    met,
    ...(met
      ? {}
      : {
          note: 'why: the cost per character grew with the length: a super-linear path in matching (functions/core/query.ts, text.ts).',
        }),
  };
}

/** The query mix row: at most 1.5× the keyword-only figure of the same run (issue 12). */
function queryMixTarget(
  results: MatchingResults,
  mix: QueryMixBenchmark,
  scope: string,
  atTarget: boolean,
): TargetCheck {
  const figures = queryMixFigures(mix);
  const met = figures.ratio <= QUERY_MIX_TARGET_RATIO;
  const largest = largestCell(results);
  const perArticle = (matches: number) => formatNumber(matches / (largest?.articles ?? 1), 1);
  const why = `why: the mix matched ${perArticle(mix.result.ruleMatches)} rules per article (keyword-only ${perArticle(largest?.result.ruleMatches ?? Number.NaN)}), and every query candidate runs its compiled program (a NEAR whose two terms occur also reads the normalized text); passes ranged ${formatMs(Math.min(...mix.queryMs))}–${formatMs(Math.max(...mix.queryMs))} for the mix and ${formatMs(Math.min(...mix.keywordMs))}–${formatMs(Math.max(...mix.keywordMs))} keyword-only.`;
  const check: TargetCheck = {
    target: `Matching with ${formatShare(mix.queryShare)} query rules ≤ 1.5× keyword-only (issue 12; same run, interleaved passes)`,
    measured: `${formatRatio(figures.ratio, 2)} (${formatMs(figures.queryMs)} vs ${formatMs(figures.keywordMs)} at ${scope}, medians of ${mix.queryMs.length}; naive agreed on ${count(mix.result.naiveArticles)} articles)`,
    met: atTarget ? met : undefined,
  };
  if (!atTarget)
    return { ...check, note: 'quick runs stop at 10,000 articles; run the full benchmark for this target' };
  return met ? check : { ...check, note: why };
}

/** Everything the end-to-end runs produced. */
export interface EndToEndResults {
  readonly main: EndToEndResult;
  /** The same scenario, smaller, with a longer ledger flush delay (the batching trade-off). */
  readonly ledgerVariant?: EndToEndResult;
}

function floorRow(what: string, c: FloorComparison, floorText: string, target: string, met: boolean): string[] {
  return [
    what,
    count(c.requests),
    count(c.items),
    `${count(c.floor)} (${floorText})`,
    ratioCell(c),
    target,
    met ? 'met' : 'MISSED',
  ];
}

/** Section 2: requests vs the floor. */
export function requestsSection(results: EndToEndResults): Section {
  const { main, ledgerVariant } = results;
  const size = main.options.pageSize;
  const rows: string[][] = [];
  for (const range of main.provider.ranges) {
    rows.push(
      floorRow(
        `news API pages, ${range.range}`,
        range,
        `ceil(${count(range.items)} / ${size}) + 1`,
        '≤ 1.00',
        range.requests <= range.floor,
      ),
    );
  }
  rows.push(
    floorRow(
      'SNS PublishBatch, all topics',
      main.sns.total,
      `Σ ceil(messages / 10) over ${count(main.sns.topics)} topics`,
      '≤ 1.10',
      main.sns.total.ratio <= 1.1,
    ),
    floorRow(
      'SNS PublishBatch, worst topic',
      main.sns.worstTopic,
      'ceil(messages / 10)',
      '≤ 1.10',
      main.sns.worstTopic.ratio <= 1.1,
    ),
    floorRow(
      'DynamoDB BatchGetItem (ledger lookups)',
      main.batchGet,
      'ceil(lookups / 100)',
      '≤ 1.10',
      main.batchGet.ratio <= 1.1,
    ),
    floorRow(
      `DynamoDB BatchWriteItem (ledger writes), LEDGER_FLUSH_DELAY_MS default`,
      main.batchWrite,
      'ceil(writes / 25)',
      '≤ 1.10',
      main.batchWrite.ratio <= 1.1,
    ),
  );
  if (ledgerVariant !== undefined) {
    const delay = ledgerVariant.options.environment?.LEDGER_FLUSH_DELAY_MS ?? '?';
    rows.push(
      floorRow(
        `DynamoDB BatchWriteItem, LEDGER_FLUSH_DELAY_MS=${delay} (${count(ledgerVariant.articlesFetched)}-article day)`,
        ledgerVariant.batchWrite,
        'ceil(writes / 25)',
        '≤ 1.10',
        ledgerVariant.batchWrite.ratio <= 1.1,
      ),
    );
  }
  const other = Object.entries(main.otherDynamo)
    .map(([name, n]) => `${name} ${n}`)
    .join(', ');
  const findings = [
    `Delivered ${count(main.notificationsPublished)} notifications; the rules match ${count(main.notificationsExpected)} among the day's articles (worked out independently with the compiled rules): ${main.notificationsPublished === main.notificationsExpected ? 'equal' : 'DIFFERENT'}. Run status: ${main.status}.`,
    `Other DynamoDB requests of the run (lease, rules and audiences, watermark, run history): ${other || 'none'}.`,
    `The empty day before the window is read because the first run looks back 24 hours from the last millisecond of the day: one request, the floor for an empty range.`,
  ];
  if (main.batchWrite.ratio > 1.1) {
    findings.push(
      `BatchWriteItem misses the floor because LedgerWriter (functions/core/delivery-buffers.ts) writes a partial batch whenever a published notification has waited LEDGER_FLUSH_DELAY_MS (default 100 ms) for its ledger write. Full batches of 25 are written at once, so at most 24 records ever wait: the delay bounds how long those ≤ 24 notifications are exposed to a crash, not how many. With a page's worth of publishing taking longer than 100 ms, almost every page ends with one partial write${ledgerVariant ? `; at ${ledgerVariant.options.environment?.LEDGER_FLUSH_DELAY_MS ?? '?'} ms the same scenario needs ${formatRatio(ledgerVariant.batchWrite.ratio)} the floor` : ''}.`,
    );
  }
  return {
    title: '2. Requests vs the floor',
    intro: [
      `One full alert run against the local stack: moto server (one process for the whole benchmark) for DynamoDB, SNS, SQS and Secrets Manager, and the news API simulator over HTTPS in a process of its own, seeded with ${count(main.articlesFetched)} articles on one provider day (Asia/Seoul), ${count(main.options.audiences)} audiences (one SNS topic each, with the sandbox's SQS audit queue subscribed) and ${count(main.rules)} rules drawn from the simulator's vocabulary (bench/scenario.ts). Page size ${size}.`,
      'Counted with a middleware in the deserialize step of the stack’s real SDK clients (every HTTP attempt, retries included) and with the simulator’s own request log. Floors: provider pages ceil(N / size) + 1 per requested day (the target is the bound itself, so the ratio must not exceed 1); SNS ceil(messages / 10) per topic; BatchGetItem ceil(lookups / 100); BatchWriteItem ceil(writes / 25).',
    ],
    tables: [
      {
        header: ['requests', 'sent', 'items', 'floor', 'ratio', 'target', 'verdict'],
        numericFrom: 1,
        rows,
      },
    ],
    findings,
  };
}

/** Request targets. */
export function requestTargets(results: EndToEndResults): TargetCheck[] {
  const { main } = results;
  const pagesMet = main.provider.ranges.every((r) => r.requests <= r.floor);
  return [
    {
      target: 'News API pages ≤ ceil(N / size) + 1',
      measured: main.provider.ranges.map((r) => `${r.requests} for N = ${count(r.items)}`).join('; '),
      met: pagesMet,
    },
    {
      target: 'SNS requests ≤ 1.1 × ceil(messages / 10) per topic',
      measured: `worst topic ${formatRatio(main.sns.worstTopic.ratio)}, all topics ${formatRatio(main.sns.total.ratio)}`,
      met: main.sns.worstTopic.ratio <= 1.1,
    },
    {
      target: 'DynamoDB BatchGetItem ≤ 1.1 × ceil(lookups / 100)',
      measured: formatRatio(main.batchGet.ratio),
      met: main.batchGet.ratio <= 1.1,
    },
    {
      target: 'DynamoDB BatchWriteItem ≤ 1.1 × ceil(writes / 25)',
      measured: `${formatRatio(main.batchWrite.ratio)} (LEDGER_FLUSH_DELAY_MS=100)${results.ledgerVariant ? `; ${formatRatio(results.ledgerVariant.batchWrite.ratio)} at ${results.ledgerVariant.options.environment?.LEDGER_FLUSH_DELAY_MS ?? '?'} ms` : ''}`,
      met: main.batchWrite.ratio <= 1.1,
      ...(main.batchWrite.ratio <= 1.1
        ? {}
        : {
            note: `why: a deliberate trade-off. Full batches of 25 are written at once, but the remainder of each page is written after at most LEDGER_FLUSH_DELAY_MS, because a notification SNS accepted and the ledger does not hold yet is exactly the one a crash would send twice (DESIGN section 3: keep that window as small as possible). Moto answered PublishBatch in ${formatMs(main.time.snsRequestMs / Math.max(1, main.sns.total.requests))} per call in this run, so pages arrive slower than the 100 ms delay and most pages end with a partial write; with real SNS latency (tens of milliseconds) far fewer do. ${results.ledgerVariant ? `Raising the delay to ${results.ledgerVariant.options.environment?.LEDGER_FLUSH_DELAY_MS ?? '?'} ms gave ${formatRatio(results.ledgerVariant.batchWrite.ratio)} of the floor (above), at the cost of a longer duplicate window.` : 'The ledger-flush variant (full run only) shows the ratio with a longer delay.'}`,
          }),
    },
    cpuPerNotificationTarget(main),
  ];
}

/** The run's in-process CPU per notification (the end-to-end profile's busy samples / notifications). */
function cpuPerNotificationTarget(main: EndToEndResult): TargetCheck {
  const busyCpuMs = main.profile.filter((entry) => entry.name !== IDLE).reduce((sum, entry) => sum + entry.ms, 0);
  const perNotification = main.notificationsPublished > 0 ? busyCpuMs / main.notificationsPublished : Number.NaN;
  const met = perNotification <= CPU_PER_NOTIFICATION_TARGET_MS;
  const shares = [...main.profile]
    .filter((entry) => entry.name !== IDLE)
    .sort((a, b) => b.ms - a.ms)
    .slice(0, 4)
    .map((entry) => `${entry.name} ${formatNumber((100 * entry.ms) / Math.max(1, busyCpuMs), 0)}%`)
    .join(', ');
  return {
    target: `In-process CPU per notification ≤ ${CPU_PER_NOTIFICATION_TARGET_MS} ms (issue 15; for information: an absolute time the host decides, the per-notification rows of section 9 are the ratios)`,
    measured: `${formatNumber(perNotification, 2)} ms (${count(main.articlesFetched)} articles, ${count(main.notificationsPublished)} notifications)`,
    met: undefined,
    information: true,
    ...(met
      ? {}
      : {
          note: `why: sampled busy CPU of the benchmark process over the whole run, so it also holds what waiting on moto costs in-process (${formatMs(main.time.snsRequestMs / Math.max(1, main.sns.total.requests))} per PublishBatch here) and it grows with the host's load; largest shares: ${shares} (the throughput section has the whole profile).`,
        }),
  };
}

/** Everything the memory benchmark produced. */
export interface MemoryResults {
  readonly run: MemoryRun;
  readonly nodeFlags: readonly string[];
  readonly retained: readonly RetainedCost[];
}

/** Section 3: memory. */
export function memorySection(results: MemoryResults): Section {
  const { run } = results;
  const mb = (n: number) => `${formatNumber(n, 1)} MiB`;
  return {
    title: '3. Memory',
    intro: [
      `The real Lambda bundle (the same esbuild output as in section 4) in a child process of its own, run by \`node --enable-source-maps ${results.nodeFlags.join(' ')}\` (the heap sizing Lambda's Node.js bootstrap derives from the function memory: new space = memory / 10, old space = memory − new space, for the stack's default 512 MB), invoked once with a Lambda-like context. Its SDK clients reach moto through AWS_ENDPOINT_URL; the simulator (another process) serves ${count(run.articles)} articles published in the last 24 hours, and the first run's 24-hour look-back reads all of them, over two provider dates. ${count(run.audiences)} audiences, ${count(run.rules)} rules.`,
    ],
    tables: [
      {
        header: [
          'window',
          'pages',
          'notifications',
          'peak RSS (VmHWM)',
          'maxRSS (libuv)',
          'RSS after import',
          'peak heap used',
          'peak external',
          'run time',
        ],
        rows: [
          [
            `${count(run.articlesFetched)} articles`,
            count(run.pages),
            count(run.notificationsPublished),
            mb(run.peakRssMiB),
            mb(run.maxRssMiB),
            mb(run.afterImportRssMiB),
            mb(run.peakHeapUsedMiB),
            mb(run.peakExternalMiB),
            formatMs(run.wallMs),
          ],
        ],
        notes: ['peak heap used is sampled every 20 ms, so it may miss short peaks; VmHWM is exact.'],
      },
      {
        title: 'What a run keeps for its whole length (heap growth measured in the benchmark process after a full GC)',
        header: ['structure', 'count', 'heap', 'bytes each'],
        rows: results.retained.map((c) => [c.what, count(c.count), mb(c.heapMiB), formatNumber(c.bytesEach, 0)]),
      },
    ],
    findings: [
      'Pages are streamed: the alert run (functions/core/alert-run.ts, #processDay) handles each page as the provider client yields it and keeps only that page’s matches until they are handed to the delivery pipeline; the client (functions/provider/news-client.ts) holds at most NEWS_API_PAGE_CONCURRENCY pages in flight (#pageWindow) and never the raw body beyond the parse. What grows with the window is the client’s de-dup set of article keys (per provider day, cleared when the day’s iteration ends) and the pipeline’s set of delivery ids (per run). The outbox (functions/core/delivery-buffers.ts) holds up to 9 rendered notifications per topic until the provider day ends, so it grows with audiences, not with articles.',
      `RSS after importing the bundle is ${mb(run.afterImportRssMiB)} of the peak: code, the SDK clients and Node itself.`,
    ],
  };
}

/** Memory target. */
export function memoryTargets(results: MemoryResults | undefined): TargetCheck[] {
  if (results === undefined)
    return [{ target: 'Peak RSS < 300 MB for a 100,000-article window', measured: 'n/a', met: undefined }];
  const { run } = results;
  const atTarget = run.articlesFetched >= 100_000;
  return [
    {
      target: 'Peak RSS < 300 MB for a 100,000-article window',
      measured: `${formatNumber(run.peakRssMiB * 1.048576, 0)} MB (${formatNumber(run.peakRssMiB, 1)} MiB) for ${count(run.articlesFetched)} articles`,
      met: atTarget ? run.peakRssMiB * 1.048576 < 300 : undefined,
      ...(atTarget ? {} : { note: 'quick runs read a smaller window; run the full benchmark for this target' }),
    },
  ];
}

/** Everything the cold-start benchmark produced. */
export interface ColdStartResults {
  readonly handler: ImportTimes;
  readonly bare: ImportTimes;
  readonly repetitions: number;
  /** Bare bundle plus one dependency of the handler: what each costs to import. */
  readonly attribution?: readonly ImportTimes[];
  readonly profile: readonly ProfileEntry[];
  /** Import plus the first invocation up to the first provider request (needs moto: the end-to-end part). */
  readonly firstRequest?: FirstRequestResults;
}

/** Section 4: cold start. */
export function coldStartSection(results: ColdStartResults): Section {
  const { handler, bare } = results;
  const ratio = handler.medianMs / bare.medianMs;
  const importRow = (t: ImportTimes) => [
    t.bundle.name,
    formatBytes(t.bundle.bytes),
    formatBytes(t.bundle.mapBytes),
    formatMs(t.medianMs),
    formatMs(t.p90Ms),
    formatMs(t.medianCpuMs),
    formatMs(t.medianProcessMs),
  ];
  const tables: Table[] = [
    {
      header: [
        'bundle',
        'size',
        'source map',
        'import, median',
        'import, p90',
        'import CPU, median',
        'whole process, median',
      ],
      rows: [importRow(handler), importRow(bare)],
      notes: [
        `ratio handler / bare (median import): ${formatRatio(ratio)}; at p90: ${formatRatio(handler.p90Ms / bare.p90Ms)}; in CPU time: ${formatRatio(handler.medianCpuMs / bare.medianCpuMs)} (CPU time moves less with other work on a shared machine).`,
        `${results.repetitions} fresh \`node --enable-source-maps\` processes per bundle, interleaved, after one untimed import each; Node ${process.version} here, Node 22 in Lambda.`,
      ],
    },
    {
      title: 'What the handler bundle holds beyond the bare one (esbuild metafile, largest first)',
      header: ['package or directory', 'in handler', 'in bare', 'added', 'share of handler'],
      rows: handler.bundle.composition
        .map((part) => {
          const inBare = bare.bundle.composition.find((b) => b.name === part.name)?.bytes ?? 0;
          return { ...part, inBare, added: part.bytes - inBare };
        })
        .sort((a, b) => b.added - a.added)
        .slice(0, 12)
        .map((part) => [
          part.name,
          formatBytes(part.bytes),
          formatBytes(part.inBare),
          formatBytes(part.added),
          formatShare(part.bytes / handler.bundle.bytes),
        ]),
    },
  ];
  if (results.attribution !== undefined && results.attribution.length > 0) {
    const base = results.attribution.find((t) => t.bundle.name === bare.bundle.name) ?? bare;
    tables.push({
      title:
        'What each dependency adds to the bare bundle’s import on its own, and the handler (same options, measured together, interleaved)',
      header: ['bundle', 'size', 'import, median', 'added to bare', 'import CPU, median', 'CPU added to bare'],
      rows: results.attribution.map((t) => [
        t.bundle.name,
        formatBytes(t.bundle.bytes),
        formatMs(t.medianMs),
        t === base ? '—' : formatDifferenceMs(t.medianMs - base.medianMs),
        formatMs(t.medianCpuMs),
        t === base ? '—' : formatDifferenceMs(t.medianCpuMs - base.medianCpuMs),
      ]),
    });
  }
  tables.push(
    profileTable(
      'Profile of the handler import (node --cpu-prof, 0.1 ms sampling, mapped through the source map; mean of several imports, the whole process including Node start-up)',
      results.profile,
      12,
    ),
  );
  const first = results.firstRequest;
  if (first !== undefined) {
    const firstRow = (t: FirstRequestTimes, does: string) => [
      t.name,
      does,
      formatMs(t.medianImportMs),
      formatMs(t.medianImportCpuMs),
      formatMs(t.medianMs),
      formatMs(t.medianCpuMs),
    ];
    tables.push({
      title:
        'Up to the first provider request (bench/first-request.ts): each bundle started in a fresh process against moto and the simulator, invoked once; times and CPU from the start of the import, medians',
      header: ['bundle', 'its first invocation', 'import done', 'CPU by then', 'first provider request', 'CPU by then'],
      rows: [
        firstRow(
          first.handler,
          `an alert run (${first.rules} rules, ${first.audiences} audiences): lease, rules and audiences, watermark, reading state, API key, then the first page`,
        ),
        firstRow(first.bare, 'reads the API key secret, asks for the first page'),
      ],
      notes: [
        `${first.repetitions} starts of each, alternating, after one untimed start of each. The moment is undici's \`undici:client:sendHeaders\` event for the provider's origin (the request written to the socket); CPU is the process's (every thread). Both trust the simulator's certificate through NODE_EXTRA_CA_CERTS, as a deployed function trusts a public provider's roots; Node reads it at start-up, before the measured span, which leaves out Node's start-up (the same for both).`,
      ],
    });
  }
  return {
    title: '4. Cold start',
    intro: [
      'The alert handler (functions/alert-run/handler.ts) bundled with `FUNCTION_BUNDLING` from lib/constructs/news-alerts-function.ts, translated to esbuild options the way aws-cdk-lib’s NodejsFunction does (bench/cold-start.ts), and a bare bundle with the same options that creates only what the design calls for: the same three SDK clients and undici’s keep-alive pool for the provider (bench/cold-start-bare.ts). Each is imported in fresh Node processes with the environment the stack sets; the handler validates it and builds its adapters at import, as in Lambda.',
    ],
    tables,
  };
}

/**
 * Names of the attribution bundles (bench/cold-start.ts `buildAttributionBundles` builds them;
 * the miss note reads them back). undici has none: it is part of the bare bundle.
 */
export const ATTRIBUTION_BUNDLES = {
  zod: 'bare + zod',
  zodMini: 'bare + zod/mini (the functions the schemas use)',
  luxon: 'bare + luxon',
  powertools: 'bare + Powertools logger',
  intl: 'bare + Intl start-up (a locale and a zone checked, two text segmenters)',
} as const;

/** `+12.1 ms`, or `−3.0 ms` when noise puts a variant below the bare bundle. */
const formatDifferenceMs = (ms: number): string => `${ms < 0 ? '−' : '+'}${formatMs(Math.abs(ms))}`;

/** The ratio the cold-start target allows. */
export const COLD_START_TARGET_RATIO = 1.25;

/** Why the cold-start target was missed, from this run's bundle composition and attribution. */
function coldStartMissNote(results: ColdStartResults): string {
  const base = results.attribution?.find((t) => t.bundle.name === results.bare.bundle.name);
  const timeOf = (name: string) => results.attribution?.find((t) => t.bundle.name === name)?.medianMs;
  const inHandler = (name: string) => results.handler.bundle.composition.find((part) => part.name === name)?.bytes ?? 0;
  const ownCode = results.handler.bundle.composition
    .filter((part) => part.name.startsWith('functions/'))
    .reduce((sum, part) => sum + part.bytes, 0);
  const lazyImports =
    'Deferring this work would only move it into the first invocation, which every cold start of this scheduled function runs right after the import: every run needs Intl (the provider day is a date in the provider’s zone), luxon, the schemas and the clients.';
  const loads = `the handler loads zod (${formatBytes(inHandler('zod'))} of the bundle), luxon (${formatBytes(inHandler('luxon'))}), Powertools and its own code (${formatBytes(ownCode)}) on top of the SDK clients and undici`;
  if (base === undefined) {
    return `why: ${loads}; run the full benchmark for the breakdown. ${lazyImports}`;
  }
  const added = (name: string, label: string) => {
    const ms = timeOf(name);
    return ms === undefined ? [] : [`${label} ${formatDifferenceMs(ms - base.medianMs)}`];
  };
  const costs = [
    ...added(ATTRIBUTION_BUNDLES.zod, 'zod'),
    ...added(ATTRIBUTION_BUNDLES.zodMini, 'zod/mini'),
    ...added(ATTRIBUTION_BUNDLES.luxon, 'luxon'),
    ...added(ATTRIBUTION_BUNDLES.powertools, 'Powertools logger'),
    ...added(ATTRIBUTION_BUNDLES.intl, 'Intl start-up'),
  ];
  return [
    `why: ${loads}; on its own each adds to the bare import: ${costs.join(', ')} (section 4 breaks the import down).`,
    lazyImports,
  ].join(' ');
}

/** The first-request target's row name. */
const FIRST_REQUEST_TARGET = `Cold start to the first provider request: import plus the first invocation, CPU time ≤ ${formatRatio(COLD_START_TARGET_RATIO)} the bare bundle reading the same secret and making the same request (issue 33; the floor: what every run must do before that request; same run, alternating fresh processes)`;

/** Why the first-request target was missed: where the handler's CPU before its first request went. */
function firstRequestMissNote(first: FirstRequestResults): string {
  const { handler, bare } = first;
  const handlerSetup = handler.medianCpuMs - handler.medianImportCpuMs;
  const bareSetup = bare.medianCpuMs - bare.medianImportCpuMs;
  return [
    `why: of the handler's ${formatMs(handler.medianCpuMs)} of CPU before its first request, ${formatMs(handler.medianImportCpuMs)} is the import (bare ${formatMs(bare.medianImportCpuMs)}) and ${formatMs(handlerSetup)} the first invocation (bare ${formatMs(bareSetup)}: the secret read and the request).`,
    `The invocation's part is the first call of the DynamoDB client (the lease, then the rules and audiences, the watermark and the reading state, which the run reads at once), validating ${first.rules} rules of ${first.audiences} audiences, and setting up the run (the rules are compiled once the request is sent); the import's part is the next row's.`,
  ].join(' ');
}

/**
 * Cold-start targets: up to the first provider request (issue 33), and the import alone (DESIGN
 * section 9 and issue 15), each against the bare bundle in the same run.
 */
export function coldStartTargets(results: ColdStartResults): TargetCheck[] {
  const ratio = results.handler.medianMs / results.bare.medianMs;
  const importMet = ratio <= COLD_START_TARGET_RATIO;
  const importRow: TargetCheck = {
    target: `Cold start, the import alone: handler import ≤ ${formatRatio(COLD_START_TARGET_RATIO)} a bare bundle of the same three SDK clients and undici (issue 15; DESIGN section 9 asks 1.3×)`,
    measured: `${formatRatio(ratio)} (${formatMs(results.handler.medianMs)} vs ${formatMs(results.bare.medianMs)}; CPU ${formatRatio(results.handler.medianCpuMs / results.bare.medianCpuMs)}; bundles ${formatBytes(results.handler.bundle.bytes)} vs ${formatBytes(results.bare.bundle.bytes)})`,
    met: importMet,
    ...(importMet ? {} : { note: coldStartMissNote(results) }),
  };
  const first = results.firstRequest;
  if (first === undefined) {
    return [
      { target: FIRST_REQUEST_TARGET, measured: 'not measured (the end-to-end part measures it)', met: undefined },
      importRow,
    ];
  }
  const cpuRatio = first.handler.medianCpuMs / first.bare.medianCpuMs;
  const met = cpuRatio <= COLD_START_TARGET_RATIO;
  return [
    {
      target: FIRST_REQUEST_TARGET,
      measured: `${formatRatio(cpuRatio)} (${formatMs(first.handler.medianCpuMs)} vs ${formatMs(first.bare.medianCpuMs)}, medians of ${first.repetitions}); for information, wall time: ${formatMs(first.handler.medianMs)} vs ${formatMs(first.bare.medianMs)} (${formatRatio(first.handler.medianMs / first.bare.medianMs)}; the handler's reads wait for moto, not DynamoDB)`,
      met,
      ...(met ? {} : { note: firstRequestMissNote(first) }),
    },
    importRow,
  ];
}

/** Profile category names used in the time-share table. */
const MATCHING = 'matching';
const RENDERING = 'rendering';
const IDLE = 'idle (waiting for I/O)';

/** Section 5: throughput and where the time goes. */
export function throughputSection(result: EndToEndResult): Section {
  const wall = result.wallMs;
  const profileMs = (name: string) => result.profile.find((e) => e.name === name)?.ms ?? 0;
  const busyCpuMs = result.profile.filter((e) => e.name !== IDLE).reduce((sum, e) => sum + e.ms, 0);
  const share = (ms: number) => formatShare(ms / wall);
  const seconds = wall / 1000;
  return {
    title: '5. Throughput and where the time goes',
    intro: [
      'The run of section 2. Time shares are of the run’s wall time and overlap (SNS calls and ledger writes run concurrently, and the next provider pages download while the current one is matched and delivered), so they do not add up to 100%. Provider: the time the run waited for its next page (a wrapper around the NewsSource; only waits the prefetch did not hide). SNS and DynamoDB: the union of their requests’ in-flight intervals (middleware timing; concurrent requests count once). Matching and rendering: CPU self time from an inspector profile of the process (1 ms sampling); the event loop is single-threaded, so CPU time there is wall time nothing else in the run could use.',
    ],
    tables: [
      {
        header: [
          'articles',
          'notifications',
          'wall time',
          'articles/s',
          'notifications/s',
          'process CPU',
          'CPU per notification',
        ],
        rows: [
          [
            count(result.articlesFetched),
            count(result.notificationsPublished),
            formatMs(wall),
            formatNumber(result.articlesFetched / seconds, 0),
            formatNumber(result.notificationsPublished / seconds, 0),
            formatMs(result.cpuMs),
            formatMs(result.notificationsPublished > 0 ? busyCpuMs / result.notificationsPublished : Number.NaN),
          ],
        ],
        notes: [
          'process CPU: user + system of the benchmark process (the simulator and moto run elsewhere); CPU per notification: sampled non-idle CPU / notifications.',
        ],
      },
      {
        title: 'Share of the run’s wall time',
        header: ['activity', 'time', 'share', 'measured by'],
        rows: [
          [
            'provider: waiting for the next page',
            formatMs(result.time.providerWaitMs),
            share(result.time.providerWaitMs),
            'NewsSource wrapper',
          ],
          ['matching (CPU)', formatMs(profileMs(MATCHING)), share(profileMs(MATCHING)), 'CPU profile'],
          ['rendering (CPU)', formatMs(profileMs(RENDERING)), share(profileMs(RENDERING)), 'CPU profile'],
          [
            'SNS PublishBatch in flight',
            formatMs(result.time.snsBusyMs),
            share(result.time.snsBusyMs),
            'SDK middleware (union)',
          ],
          [
            'DynamoDB ledger in flight (BatchGet + BatchWrite)',
            formatMs(result.time.ledgerBusyMs),
            share(result.time.ledgerBusyMs),
            'SDK middleware (union)',
          ],
          [
            '  of which BatchGetItem (on the run’s path)',
            formatMs(result.time.batchGetBusyMs),
            share(result.time.batchGetBusyMs),
            'SDK middleware (union)',
          ],
          [
            '  of which BatchWriteItem',
            formatMs(result.time.batchWriteBusyMs),
            share(result.time.batchWriteBusyMs),
            'SDK middleware (union)',
          ],
          [
            'other DynamoDB (lease, rules, watermark)',
            formatMs(result.time.otherDynamoBusyMs),
            share(result.time.otherDynamoBusyMs),
            'SDK middleware (union)',
          ],
          ['all in-process CPU', formatMs(busyCpuMs), share(busyCpuMs), 'CPU profile (non-idle)'],
        ],
        notes: [
          `SNS: ${count(result.sns.total.requests)} PublishBatch calls took ${formatMs(result.time.snsRequestMs / Math.max(1, result.sns.total.requests))} each on average against moto (${formatNumber(result.time.snsRequestMs / Math.max(1, result.time.snsBusyMs), 1)} in flight on average).`,
        ],
      },
      profileTable('CPU profile of the run by category (self time)', result.profile, 14),
      profileTable(
        'Date/time (luxon) and validation (zod) CPU by the project function that called it',
        result.libraryCallers,
        8,
      ),
    ],
    findings: [
      `The run is bound by the emulator: SNS calls are in flight ${share(result.time.snsBusyMs)} of the time and ledger writes ${share(result.time.batchWriteBusyMs)}, while matching uses ${share(profileMs(MATCHING))} and all in-process CPU ${share(busyCpuMs)}. moto serves every service from one Python process on the same two cores, so these rates are a floor for AWS, not an estimate of it.`,
    ],
  };
}

/** The inputs of the single-run limits paragraph. */
export interface LimitInputs {
  readonly date: string;
  readonly cpu: string;
  readonly matching: MatchingResults;
  readonly endToEnd: EndToEndResult;
  readonly memory: MemoryResults | undefined;
  readonly lambdaMemoryMb: number;
  readonly lambdaTimeoutSeconds: number;
  readonly softMarginSeconds: number;
  readonly maxPages: number;
  readonly pageSize: number;
  readonly snsConcurrency: number;
}

/** Lambda's CPU share grows with memory: one full vCPU at 1,769 MB (Lambda documentation). */
const FULL_VCPU_MB = 1769;

/** The README paragraph on where one run's limits are, from the measurements (DESIGN section 10). */
export function singleRunLimits(inputs: LimitInputs): string[] {
  const largest = largestCell(inputs.matching);
  const matchUs = largest ? (headlineIndexedMs(inputs.matching).median * 1000) / largest.articles : Number.NaN;
  const e2e = inputs.endToEnd;
  const busyCpuMs = e2e.profile.filter((e) => e.name !== IDLE).reduce((sum, e) => sum + e.ms, 0);
  const cpuPerNotificationMs = e2e.notificationsPublished > 0 ? busyCpuMs / e2e.notificationsPublished : Number.NaN;
  const cpuFactor = Math.max(1, FULL_VCPU_MB / inputs.lambdaMemoryMb);
  const usableSeconds = inputs.lambdaTimeoutSeconds - inputs.softMarginSeconds;
  const cpuCeiling = (factor: number) => 1000 / (cpuPerNotificationMs * factor);
  const snsCeiling = (latencyMs: number) => (inputs.snsConcurrency * 10 * 1000) / latencyMs;
  const perRun = (factor: number, latencyMs: number, seconds: number) =>
    Math.round((Math.min(cpuCeiling(factor), snsCeiling(latencyMs)) * seconds) / 1000) * 1000;
  const retained = inputs.memory?.retained ?? [];
  const keyBytes = retained[0]?.bytesEach ?? Number.NaN;
  const idBytes = retained[1]?.bytesEach ?? Number.NaN;
  const matcherMiB = retained[2]?.heapMiB ?? Number.NaN;
  const outboxBytesPerAudience = 9 * e2e.sns.meanMessageBytes;
  const memory = inputs.memory?.run;
  const headroomMiB = memory ? inputs.lambdaMemoryMb * 0.953674 - memory.peakRssMiB : Number.NaN;
  const articlesPerDay = inputs.maxPages * inputs.pageSize;
  const lambdaCpu = `at the stack's default ${inputs.lambdaMemoryMb} MB Lambda has about ${formatNumber(1 / cpuFactor, 2)} of a vCPU (one vCPU at ${count(FULL_VCPU_MB)} MB), so CPU-bound steps take about ${formatNumber(cpuFactor, 1)}× the times measured here`;
  return [
    `Measured by \`npm run bench\` on ${inputs.date.slice(0, 10)} (${inputs.cpu}; figures below, method in the sections). ` +
      `**Articles per interval:** the provider client reads at most NEWS_API_MAX_PAGES × NEWS_API_PAGE_SIZE = ${count(inputs.maxPages)} × ${count(inputs.pageSize)} = ${count(articlesPerDay)} articles per provider day and fails loudly past that (raise the cap or shorten the interval). ` +
      (memory
        ? `A ${count(memory.articlesFetched)}-article window peaked at ${formatNumber(memory.peakRssMiB, 0)} MiB RSS with the heap sized as Lambda sizes it for ${inputs.lambdaMemoryMb} MB; per article of the day being read the run keeps ~${formatNumber(keyBytes, 0)} bytes (de-dup keys), per notification of the run ~${formatNumber(idBytes, 0)} bytes (delivery ids), and 20,000 compiled rules take ~${formatNumber(matcherMiB, 0)} MiB. `
        : '') +
      `Matching costs ~${formatNumber(matchUs, 1)} µs per article at 20,000 rules here; ${lambdaCpu}: ~${formatNumber((matchUs * cpuFactor * 100_000) / 1e6, 1)} s for 100,000 articles, small next to publishing.`,
    `**Notifications per run:** publishing is the limit. The run's in-process work (response mapping, matching, rendering, SDK serialization and signing, ledger) cost ~${formatNumber(cpuPerNotificationMs, 2)} ms of CPU per notification here (${count(e2e.articlesFetched)} articles giving ${count(e2e.notificationsPublished)} notifications, so the article work is included), a ceiling of ~${formatNumber(cpuCeiling(cpuFactor), 0)} notifications/s at ${inputs.lambdaMemoryMb} MB and ~${formatNumber(cpuCeiling(1), 0)}/s at ${count(FULL_VCPU_MB)} MB or more. SNS allows SNS_CONCURRENCY × 10 / latency = ${formatNumber(snsCeiling(40), 0)}/s at an assumed 40 ms PublishBatch latency (not measurable here: moto took ${formatMs(e2e.time.snsRequestMs / Math.max(1, e2e.sns.total.requests))} per call and held the measured run to ${formatNumber(e2e.notificationsPublished / (e2e.wallMs / 1000), 0)}/s). ` +
      `Within the default ${inputs.lambdaTimeoutSeconds} s timeout (${usableSeconds} s before the soft margin) one run therefore publishes up to about ${count(perRun(cpuFactor, 40, usableSeconds))} notifications at ${inputs.lambdaMemoryMb} MB, ${count(perRun(1, 40, usableSeconds))} at ${count(FULL_VCPU_MB)} MB, and three times that with the 900 s maximum timeout. A run that reaches its deadline checkpoints and the next run continues, so a burst beyond this is delayed, not lost.`,
    `**Audiences:** each audience's topic holds up to 9 rendered notifications (${formatBytes(e2e.sns.meanMessageBytes)} each on average here: every channel's body is in one message) until its provider day is done, ~${formatBytes(outboxBytesPerAudience)} per busy audience in the worst case` +
      (memory
        ? `; with ~${formatNumber(headroomMiB, 0)} MiB left at ${inputs.lambdaMemoryMb} MB after the 100,000-article window, that is ~${count(Math.floor((headroomMiB * 2 ** 20) / outboxBytesPerAudience / 100) * 100)} audiences receiving alerts the same day`
        : '') +
      `. Every audience with alerts also costs one PublishBatch per provider day for its remainder. Thousands of audiences fit one run; past that, or past the notification ceiling above, switch on the sharded mode of DESIGN section 10 (publishing handed to SQS work items per audience shard).`,
  ];
}

// --- Simulated provider day (bench/provider-day.ts) ---------------------------------------------

const minutesText = (ms: number) =>
  ms < 60_000 ? `${formatNumber(ms / 1000, 0)} s` : `${formatNumber(ms / 60_000, 1)} min`;

function readingText(scenario: DayScenarioResult): string {
  if (scenario.reading === 'today') return 'today: every run reads its whole window';
  if (scenario.reading === 'counted') return `counted, recheck every ${scenario.recheckMinutes} min`;
  const period = scenario.fullSweepMinutes;
  return `full sweeps only, every ${period % 60 === 0 ? `${period / 60} h` : `${period} min`}`;
}

/** The scenario a day target is judged on: counted reading (the default) at a lateness, per schedule. */
function targetScenario(
  results: ProviderDayResults,
  schedule: string,
  lateness = 'typical',
): DayScenarioResult | undefined {
  return results.scenarios.find((s) => s.schedule === schedule && s.reading === 'counted' && s.lateness === lateness);
}

const freshnessCells = (freshness: DayScenarioResult['freshness'], mark: string): string[] =>
  freshness === undefined
    ? ['n/a', 'n/a', 'n/a', 'n/a']
    : [freshness.p50Ms, freshness.p95Ms, freshness.p99Ms, freshness.maxMs].map((ms) => `${minutesText(ms)}${mark}`);

const deliveredText = (s: DayScenarioResult): string =>
  s.deliveries
    ? `${count(s.deliveries.delivered - s.deliveries.duplicates)} / ${count(s.deliveries.expected)}${s.deliveries.missing > 0 ? `, ${count(s.deliveries.missing)} missing` : ''}${s.deliveries.duplicates > 0 ? `, ${count(s.deliveries.duplicates)} twice` : ''}`
    : 'n/a';

/** Section: the simulated provider day. */
export function providerDaySection(results: ProviderDayResults, title: string): Section {
  const latenessOrder = results.lateness.map((late) => late.name as string);
  const readingOrder = ['today', 'counted', 'sweeps'];
  // Longest interval first; per lateness, today's reading, counted, then sweeps only.
  const ordered = [...results.scenarios].sort(
    (a, b) =>
      b.intervalMinutes - a.intervalMinutes ||
      latenessOrder.indexOf(a.lateness) - latenessOrder.indexOf(b.lateness) ||
      readingOrder.indexOf(a.reading) - readingOrder.indexOf(b.reading),
  );
  const costRows = ordered.map((s) => [
    s.schedule,
    s.lateness,
    readingText(s),
    `${count(s.pages)}${s.method === 'formula' ? ' †' : ''}${s.stopped ? ' ‡' : ''}`,
    count(s.floor),
    formatRatio(s.ratio, s.ratio >= 10 ? 0 : 2),
    s.articlesRead === undefined ? 'n/a' : count(s.articlesRead),
    s.sweeps === undefined
      ? 'n/a'
      : `${count(s.sweeps)}${s.sweepPages === undefined ? '' : ` (${count(s.sweepPages)} pages)`}`,
    s.rechecks === undefined
      ? 'n/a'
      : `${count(s.rechecks)} (${count(s.recheckPages ?? 0)} pages, ${count(s.lateFound ?? 0)} found)`,
    deliveredText(s),
    count(s.runs),
  ]);
  const freshRows = ordered.map((s) => {
    const mark = s.freshnessFrom ? ' §' : '';
    return [
      s.schedule,
      s.lateness,
      readingText(s),
      ...freshnessCells(s.freshness, mark),
      s.lateFreshness ? count(s.lateFreshness.n) : '0',
      ...freshnessCells(s.lateFreshness, mark),
    ];
  });
  const notes = [
    '† computed, not run: Σ over runs of Σ over the provider dates of its window of wholeDayPages(n) = ceil(n / size), plus one empty page when the last page is full (n = the articles of that date listed at the run); checked against real runs in the last table.',
    `floor: Σ over the day's runs of ceil(new / size) + 1, where new = the articles that appeared at the provider since the previous run (late ones when they appear); it counts no sweeps, rechecks or re-reads.`,
    'sweeps: runs that read a full sweep, and their pages (with counted reading: the first run of the warm-up only, which starts the counts). rechecks: runs that rechecked the watched stretches for late articles, the pages those rechecks read, and the late articles they accounted for.',
    'delivered: (audience, article) notifications of the day’s articles accepted by SNS by the time all of them are due (full sweeps only: the next day’s first run, a sweep; counted: the next day’s runs up to one recheck period after midnight), against what the compiled rules match among the articles listed during the day; “twice” counts any accepted more than once.',
  ];
  for (const s of results.scenarios.filter((x) => x.stopped))
    notes.push(
      `‡ ${s.schedule}, ${s.lateness}, ${readingText(s)}: ${s.stopped}; the pages column shows the pages up to there, so the day cost more.`,
    );
  const freshNotes = [
    'freshness: from the moment the provider lists an article to SNS accepting its notification, on the simulated clock, over every notification of an article that appeared during the day (a late article counts from its late listing). late: articles listed more than 2 minutes (INCREMENTAL_OVERLAP_MINUTES) after their publication time, what an incremental read below the previous run cannot see; "late n" counts their notifications.',
  ];
  if (results.scenarios.some((s) => s.freshnessFrom))
    freshNotes.push(
      '§ today’s reading was not run for the whole day: its freshness comes from the real runs of the check below.',
    );
  const checks = results.formulaChecks.map((c) => [
    c.schedule,
    `${c.from}–${c.to}`,
    count(c.runs),
    count(c.measuredPages),
    count(c.formulaPages),
    c.mismatchedRuns === 0 ? 'every run equal' : `${count(c.mismatchedRuns)} runs differ`,
  ]);
  const findings: string[] = [];
  for (const schedule of [...new Set(results.scenarios.map((s) => s.schedule))]) {
    for (const late of results.lateness) {
      const counted = targetScenario(results, schedule, late.name);
      const sweeps = results.scenarios.find(
        (s) => s.schedule === schedule && s.reading === 'sweeps' && s.lateness === late.name,
      );
      if (!counted || !sweeps || counted.stopped || sweeps.stopped) continue;
      const lateText = (s: DayScenarioResult) =>
        s.lateFreshness
          ? `late p99 ${minutesText(s.lateFreshness.p99Ms)}, max ${minutesText(s.lateFreshness.maxMs)}`
          : 'no late articles';
      findings.push(
        `${schedule}, ${late.name} lateness: counted reading read ${count(counted.pages)} pages (${formatRatio(counted.ratio)} the floor; ${lateText(counted)}) where full sweeps only read ${count(sweeps.pages)} (${formatRatio(sweeps.ratio)}; ${lateText(sweeps)}).`,
      );
    }
  }
  const lost = results.scenarios.filter(
    (s) => s.deliveries && (s.deliveries.missing > 0 || s.deliveries.duplicates > 0),
  );
  findings.push(
    lost.length === 0
      ? 'Every scenario run delivered every notification the rules produce for the day exactly once (late-listed articles included).'
      : `NOT every notification was delivered exactly once: ${lost.map((s) => `${s.schedule}, ${s.lateness}, ${readingText(s)}: ${count(s.deliveries?.missing ?? 0)} missing, ${count(s.deliveries?.duplicates ?? 0)} twice`).join('; ')}.`,
  );
  findings.push(`Reading in the code measured: ${results.readingImplementation}.`);
  return {
    title,
    intro: [
      `${count(results.articlesPerDay)} articles on the provider day ${results.day} (${results.timeZone}), arriving on a daily curve (bench/provider-day.ts \`DAILY_CURVE\`): quiet 01:00–05:00 at a tenth of the peak, the mid-morning peak 09:00–11:00, a lunch dip, a second peak 17:00–19:00, then a slow decline. The provider lists them late by one of these distributions (bench/provider-day.ts \`LATENESS\`, uniform within each range): ${results.lateness.map((late) => `**${late.name}**: ${late.description}`).join('; ')}. The day before holds as many articles, so the first hour pays for reading yesterday as in production.`,
      `The real alert run (\`runAlertCycle\`) and provider client (\`NewsLookupClient\`, page size ${results.pageSize}) over HTTPS against the news simulator (newest first), in accelerated time: run k starts at its scheduled instant and the clock moves with real time inside it; before each run every article whose listing time has come is published into the simulator. The state table and SNS are the in-memory ports of test/support/fake-ports.ts (MemoryStateStore, MemoryNotifier): moto would take hours for the thousands of runs, and the sections above measure the AWS side. ${count(results.rules)} synthetic rules (bench/synthetic.ts) for ${count(results.audiences)} audiences, so matching is not what is measured. Warm-up runs from 18:00 the evening before bring ledger, watermark and reading state to a steady state (the six-hourly sweep falls at 18:00, so the first run after midnight reads the evening since then, as in production); the day's runs are counted; the next day's first runs (one with full sweeps, its first-of-day sweep; with counted reading up to one recheck period's worth) deliver what is still due. Provider pages are counted by the simulator, never taken from the run summary. Each day is read with counted reading (the default: late articles found from the provider's totals, functions/core/reading/counted-days.ts, recheck every LATE_RECHECK_MINUTES = the larger of 10 and three schedule intervals) and with full sweeps only (LATE_RECHECK_MINUTES=0: the reading before it, still used for providers without totals). Defaults: LATE_ARRIVAL_MINUTES=60, INCREMENTAL_OVERLAP_MINUTES=2, FULL_SWEEP_MINUTES=${results.defaultSweepMinutes}.`,
    ],
    tables: [
      {
        title: 'Provider pages',
        header: [
          'schedule',
          'lateness',
          'reading',
          'pages/day',
          'floor',
          'ratio',
          'articles read',
          'sweeps',
          'rechecks',
          'delivered',
          'runs',
        ],
        numericFrom: 3,
        rows: costRows,
        notes,
      },
      {
        title: 'Freshness (listing → SNS), all articles and late articles alone',
        header: [
          'schedule',
          'lateness',
          'reading',
          'p50',
          'p95',
          'p99',
          'max',
          'late n',
          'late p50',
          'late p95',
          'late p99',
          'late max',
        ],
        numericFrom: 3,
        rows: freshRows,
        notes: freshNotes,
      },
      {
        title: `Today's page formula against real runs of today's reading (FULL_SWEEP_MINUTES=0) over a slice of the day (${results.formulaLateness} lateness)`,
        header: ['schedule', 'slice', 'runs', 'pages measured', 'pages computed', 'per run'],
        numericFrom: 2,
        rows: checks,
      },
    ],
    findings,
  };
}

/** The day targets of issue 29 for one schedule: its freshness bound for late articles. */
const LATE_P99_TARGETS: Readonly<Record<string, { readonly ms: number; readonly text: string }>> = {
  'every 5 min': { ms: 15 * 60_000, text: '≤ 3 run intervals (15 min)' },
  'every 1 min': { ms: 10 * 60_000, text: '≤ 10 min' },
};
const LATE_MAX_MS = 30 * 60_000;

/**
 * Day targets (issue 29), at the typical lateness with counted reading (the default): pages ≤ 3×
 * the floor, late articles' freshness p99 within the schedule's bound, and at most 30 minutes for
 * any article listed up to 60 minutes late; every one with every notification delivered once.
 */
export function providerDayTargets(results: ProviderDayResults, schedules: readonly string[]): TargetCheck[] {
  const targets: TargetCheck[] = [];
  const notRun = (target: string): TargetCheck => ({
    target,
    measured: 'not run',
    met: undefined,
    note: 'quick runs simulate the 5-minute schedule only; run the full benchmark',
  });
  const lostText = (s: DayScenarioResult) => {
    const failures = s.deliveries ? s.deliveries.missing + s.deliveries.duplicates : 0;
    return failures > 0 ? `; ${count(failures)} notifications missing or twice` : '';
  };
  const exact = (s: DayScenarioResult) => (s.deliveries ? s.deliveries.missing + s.deliveries.duplicates === 0 : true);
  for (const schedule of schedules) {
    const short = schedule.replace('every ', '');
    const chosen = targetScenario(results, schedule);
    const pagesTarget = `Simulated day, ${short} schedule, typical lateness: pages ≤ 3× floor (counted reading, the default)`;
    const bound = LATE_P99_TARGETS[schedule];
    const p99Target = `Simulated day, ${short} schedule, typical lateness: late articles' freshness p99 ${bound?.text ?? '(no bound for this schedule)'}`;
    if (!chosen) {
      targets.push(notRun(pagesTarget), notRun(p99Target));
      continue;
    }
    const sweeps = results.scenarios.find(
      (s) => s.schedule === schedule && s.reading === 'sweeps' && s.lateness === 'typical',
    );
    const pagesMet = !chosen.stopped && chosen.ratio <= 3 && exact(chosen);
    targets.push({
      target: pagesTarget,
      measured: `${formatRatio(chosen.ratio)} (${count(chosen.pages)} pages, floor ${count(chosen.floor)}; rechecks ${count(chosen.recheckPages ?? 0)} pages${sweeps ? `; full sweeps only ${formatRatio(sweeps.ratio)}` : ''})${lostText(chosen)}`,
      met: pagesMet,
      ...(pagesMet
        ? {}
        : {
            note: chosen.stopped
              ? `why: the scenario passed its page budget (${chosen.stopped}).`
              : !exact(chosen)
                ? 'why: notifications missing or sent twice: the no-loss guarantee comes before the page count.'
                : `why: ${count(chosen.pages)} pages against a floor of ${count(chosen.floor)}: the rechecks read ${count(chosen.recheckPages ?? 0)} of them (${formatRatio((chosen.recheckPages ?? 0) / chosen.floor)} the floor).`,
          }),
    });
    const late = chosen.lateFreshness;
    const p99Met = bound !== undefined && late !== undefined && late.p99Ms <= bound.ms && exact(chosen);
    targets.push({
      target: p99Target,
      measured: late
        ? `${minutesText(late.p99Ms)} (p95 ${minutesText(late.p95Ms)}, p50 ${minutesText(late.p50Ms)}, ${count(late.n)} notifications of late articles${sweeps?.lateFreshness ? `; full sweeps only: p99 ${minutesText(sweeps.lateFreshness.p99Ms)}` : ''})${lostText(chosen)}`
        : 'no late articles measured',
      met: p99Met,
      ...(p99Met
        ? {}
        : {
            note: `why: a late article waits for the recheck of the stretch it is listed in, up to LATE_RECHECK_MINUTES (${chosen.recheckMinutes}) after it appears; the p99 came out above the bound.`,
          }),
    });
  }
  const maxTarget =
    'Simulated day, typical lateness, both schedules: freshness ≤ 30 min for every article listed up to 60 min late';
  const chosen = schedules.map((schedule) => targetScenario(results, schedule));
  if (chosen.some((s) => s === undefined)) targets.push(notRun(maxTarget));
  else {
    const runs = chosen as DayScenarioResult[];
    const worst = Math.max(...runs.map((s) => s.lateFreshness?.maxMs ?? 0));
    const met = worst <= LATE_MAX_MS && runs.every(exact);
    targets.push({
      target: maxTarget,
      measured: runs
        .map(
          (s) =>
            `${s.schedule.replace('every ', '')}: max ${s.lateFreshness ? minutesText(s.lateFreshness.maxMs) : 'n/a'}`,
        )
        .join('; '),
      met,
      ...(met ? {} : { note: `why: the slowest late article took ${minutesText(worst)} from listing to SNS.` }),
    });
  }
  return targets;
}

// --- Publishing: single vs sharded (bench/publishing.ts, issue 14) -------------------------------

/** Issue 14's bar: sharded at this many publishers publishes at least this many times single's rate. */
export const SHARDED_TARGET = { publishers: 4, ratio: 3 } as const;

/** moto busy this share of a run's wall time (one core: it runs on one Python thread) sets the pace. */
const MOTO_BOUND_SHARE = 0.8;

const runLabel = (run: PublishingRun): string =>
  run.mode === 'single'
    ? 'single (the run publishes)'
    : `sharded, ${run.concurrency} publisher${run.concurrency === 1 ? '' : 's'}`;

function dynamoTotals(run: PublishingRun): { count: number; ms: number } {
  return Object.values(run.dynamoRequests ?? {}).reduce(
    (sum, r) => ({ count: sum.count + r.count, ms: sum.ms + r.ms }),
    {
      count: 0,
      ms: 0,
    },
  );
}

function dynamoCell(run: PublishingRun): string {
  const { count: requests, ms } = dynamoTotals(run);
  return requests === 0 ? 'n/a' : `${count(requests)} (${formatMs(ms / requests)})`;
}

const motoShare = (run: PublishingRun): number =>
  run.motoCpuMs === undefined ? Number.NaN : run.motoCpuMs / run.wallMs;

/** The single run and the sharded run at `publishers`, if both were measured. */
function publishingPair(results: PublishingResults, publishers: number) {
  const single = results.runs.find((r) => r.mode === 'single');
  const sharded = results.runs.find((r) => r.mode === 'sharded' && r.concurrency === publishers);
  return { single, sharded };
}

/**
 * What the target would cost this machine: every "Lambda" of the bench (the run, each publisher)
 * and moto share its cores, where on AWS each publisher brings its own. Cores needed = the target
 * rate (ratio × the single run's rate) × the sharded run's CPU per notification; `benchOnly` counts
 * the bench process alone, as if the emulator cost nothing.
 */
export function shardedCapacity(
  results: PublishingResults,
): { readonly needed: number; readonly benchOnly: number; readonly singleUsed: number } | undefined {
  const { single, sharded } = publishingPair(results, SHARDED_TARGET.publishers);
  if (!single || !sharded || single.invalid !== undefined || sharded.invalid !== undefined) return undefined;
  if (sharded.motoCpuMs === undefined || single.motoCpuMs === undefined) return undefined;
  const targetRate = SHARDED_TARGET.ratio * single.perSecond;
  const benchMsPerNotification = sharded.nodeCpuMs / sharded.notifications;
  const allMsPerNotification = (sharded.nodeCpuMs + sharded.motoCpuMs) / sharded.notifications;
  return {
    needed: (targetRate * allMsPerNotification) / 1000,
    benchOnly: (targetRate * benchMsPerNotification) / 1000,
    singleUsed: (single.nodeCpuMs + single.motoCpuMs) / single.wallMs,
  };
}

/** The capacity finding: why the target cannot be shown on this machine, when it cannot. */
function capacityFinding(results: PublishingResults): string | undefined {
  const capacity = shardedCapacity(results);
  if (!capacity) return undefined;
  const cores = (n: number) => formatNumber(n, 1);
  return `Capacity: the single run already kept ${cores(capacity.singleUsed)} cores busy (bench process and moto). ${SHARDED_TARGET.ratio}× its rate at the sharded run's measured CPU per notification needs ${cores(capacity.needed)} cores (${cores(capacity.benchOnly)} for the bench process alone, as if the emulator cost nothing); this machine has ${count(results.cores)}. On AWS each publisher is its own execution environment with its own CPU and the services scale apart, so there the ratio follows the publishers; here every publisher, the run and the emulator share ${count(results.cores)} cores${capacity.needed > results.cores ? ', so the target cannot be shown on this machine whatever the code does' : ''}.`;
}

/** Section: notifications per second of single vs sharded publishing with SNS at ~40 ms per PublishBatch. */
export function publishingSection(results: PublishingResults, title: string): Section {
  const { options } = results;
  const single = results.runs.find((r) => r.mode === 'single');
  const rows = results.runs.map((run) => [
    runLabel(run),
    formatMs(run.wallMs),
    run.invalid === undefined ? formatNumber(run.perSecond) : 'invalid',
    single && run.invalid === undefined && single.invalid === undefined
      ? formatRatio(run.perSecond / single.perSecond)
      : 'n/a',
    run.workItems === undefined ? '-' : count(run.workItems),
    count(run.publishBatchCalls),
    formatMs(run.injectedMeanMs),
    `${count(run.ledgerEntries)} / ${count(run.snsEntries)}`,
    dynamoCell(run),
    formatShare(run.nodeCpuMs / run.wallMs),
    Number.isNaN(motoShare(run)) ? 'n/a' : formatShare(motoShare(run)),
  ]);
  const findings: string[] = [];
  for (const run of results.runs.filter((r) => r.invalid !== undefined)) {
    findings.push(`${runLabel(run)} is NOT a valid figure: ${run.invalid}.`);
  }
  for (const run of results.runs) {
    const problems = Object.entries(run.publisherProblems ?? {});
    if (problems.length > 0 || (run.deadLettered ?? 0) > 0) {
      findings.push(
        `${runLabel(run)}: the publishers logged ${problems.map(([message, n]) => `${count(n)}× “${message}”`).join(', ') || 'nothing'}; ${count(run.deadLettered ?? 0)} work items ended in the dead-letter queue.`,
      );
    }
  }
  const bound = results.runs.filter((r) => motoShare(r) >= MOTO_BOUND_SHARE);
  findings.push(
    bound.length > 0
      ? `moto was the bottleneck in ${bound.map(runLabel).join(', ')}: it was busy ${bound.map((r) => formatShare(motoShare(r))).join(', ')} of the wall time on its single Python thread, so those figures measure the emulator's DynamoDB, SQS and SNS handling rather than the mode; on AWS each service scales on its own and the sharded rates would be higher.`
      : `moto stayed below ${formatShare(MOTO_BOUND_SHARE)} of one core in every mode (busiest: ${formatShare(Math.max(...results.runs.map(motoShare).filter((x) => !Number.isNaN(x)), 0))}), so the modes, not the emulator, set the pace; the machine's other load still slows both alike.`,
  );
  const { single: base, sharded } = publishingPair(results, SHARDED_TARGET.publishers);
  if (base && sharded) {
    const perNotification = (run: PublishingRun) => dynamoTotals(run).count / run.notifications;
    findings.push(
      `DynamoDB requests per notification: ${formatNumber(perNotification(base), 2)} in single mode (BatchGetItem of 100 keys, BatchWriteItem of 25) against ${formatNumber(perNotification(sharded), 2)} sharded at ${SHARDED_TARGET.publishers} publishers (${sharded.workItems ? formatNumber(sharded.notifications / sharded.workItems, 1) : 'n/a'} notifications per work item on average here; per publisher invocation of up to ${options.publisherBatchSize} items: the claim transaction, the ledger lookup, the ledger write and the settling transaction, plus the run's queue counts and its waits on the dispatch head), at a mean moto latency of ${formatMs(dynamoTotals(base).ms / Math.max(1, dynamoTotals(base).count))} vs ${formatMs(dynamoTotals(sharded).ms / Math.max(1, dynamoTotals(sharded).count))}. Each publisher waits for these one after another per invocation, so where moto answers slowly the publishers spend their time waiting on it, not on SNS.`,
    );
  }
  const capacity = capacityFinding(results);
  if (capacity) findings.push(capacity);
  if (base && sharded && base.invalid === undefined && sharded.invalid === undefined) {
    const ratio = sharded.perSecond / base.perSecond;
    findings.push(
      `At ${SHARDED_TARGET.publishers} publishers sharded publishing ran ${formatRatio(ratio)} the single run's rate (${formatNumber(sharded.perSecond)} vs ${formatNumber(base.perSecond)} notifications/s)${ratio < 1 ? ': slower, for the reason above' : ''}. The single run keeps at most SNS_CONCURRENCY = ${options.snsConcurrency} PublishBatch calls in flight and waits for each group's ledger lookup and rendering before publishing the next; each publisher invocation brings its own ${options.snsConcurrency}, so the PublishBatch calls in flight can grow with the publishers; the rate follows only while the rest of each item's requests answer quickly.`,
    );
  }
  return {
    title,
    intro: [
      `${count(options.notifications)} notifications for ${count(options.audiences)} audiences (one SNS topic each in moto, no subscribers), ${formatNumber(options.notifications / options.audiences)} per audience: seeded articles (bench/synthetic.ts), each matched by ${formatNumber(options.notifications / options.audiences)} consecutive audiences, handed to the real DeliveryPipeline a page at a time as the alert run hands them over (every match of ${defaultPageSize} articles per call). **single**: the pipeline publishes through SnsNotifier (PublishBatch, SNS_CONCURRENCY=${options.snsConcurrency}) and writes the ledger, as the run does. **sharded**: the same pipeline queues work items through SqsWorkQueue into an SQS queue in moto (redrive to a DLQ after 3 receives); sandbox/sqs-event-source.ts emulates Lambda's event source mapping (batch size ${options.publisherBatchSize}, maximum concurrency 1, 4 or 16, partial batch responses) and invokes functions/publisher/process.ts createWorkItemHandler (the batch's items claimed in one transaction, one ledger check, PublishBatch, one ledger write, settled in one transaction, partial batch response), one execution environment per concurrent invocation with its own SNS client and SNS_CONCURRENCY=${options.snsConcurrency}, as on Lambda. LEDGER_FLUSH_DELAY_MS=${options.ledgerFlushDelayMs}.`,
      `SNS is made slow: every SNS client talks to bench/latency-proxy.ts, a loopback HTTP proxy that reads each request's action (the query protocol's \`Action\` form parameter, a JSON \`X-Amz-Target\` header or a Smithy RPC v2 CBOR path), holds PublishBatch for at least ${formatNumber(options.publishLatencyMs)} ms (measured per request; the mean is in the table) before forwarding it, and streams everything else to moto at once. DynamoDB and SQS talk to moto directly. The clock runs from the first match handed to the pipeline to the last notification in the ledger (single: the pipeline's flush; sharded: the sealed dispatch counting every item done), so ledger lookup, rendering and queueing are inside it. Each mode starts on a wiped moto with fresh resources; a figure counts only when the ledger holds exactly one entry per notification and SNS was sent exactly that many entries (ledger / SNS column). moto's CPU is its process's user + system time during the mode, from /proc; the bench process's CPU (the run, every publisher, the proxy and the SDK clients share it) from process.cpuUsage. One departure from the stack: the dispatch items and the run lease live in a second table with the state table's key schema, because moto deep-copies every table a TransactWriteItems names on every call (a completion would copy the whole ledger: quadratic, gigabytes of memory at 50,000 entries), a cost DynamoDB does not have.`,
    ],
    tables: [
      {
        header: [
          'mode',
          'wall',
          'notifications/s',
          'vs single',
          'work items',
          'PublishBatch calls',
          'injected (mean)',
          'ledger / SNS entries',
          'DynamoDB requests (mean latency)',
          'bench process CPU / wall',
          'moto CPU / wall',
        ],
        rows,
      },
      ...(results.fake ? [fakeTable(results.fake)] : []),
    ],
    findings: [...findings, ...(results.fake ? fakeFindings(results.fake) : [])],
  };
}

/** The zero-CPU emulator's runs (bench/publishing-fake.ts): medians of interleaved rounds. */
function fakeTable(fake: FakePublishingResults): Table {
  const cpu = (run: FakeRun) => run.cpuMs / run.notifications;
  return {
    title: `The same modes against the zero-CPU emulator (SNS ${formatNumber(fake.options.latencies.snsMs)} ms, DynamoDB ${formatNumber(fake.options.latencies.dynamoMs)} ms, SQS ${formatNumber(fake.options.latencies.sqsMs)} ms; medians of ${fake.rounds} interleaved rounds)`,
    header: [
      'mode',
      'notifications/s (sharded: the publishers draining the queued backlog)',
      'CPU per notification (functions + SDK)',
      'vs single',
      'DynamoDB requests per notification',
      'PublishBatch calls',
      'SendMessageBatch calls (requests billed, one per 64 KiB)',
      'SQS bytes per notification',
      'run queued everything after',
    ],
    rows: [fake.single, ...fake.sharded].map((run) => [
      fakeLabel(run),
      run.invalid === undefined ? formatNumber(run.perSecond) : `invalid: ${run.invalid}`,
      formatMs(cpu(run)),
      formatRatio(cpu(run) / cpu(fake.single), 2),
      formatNumber(run.storeCalls / run.notifications, 3),
      count(run.publishCalls),
      run.sendCalls === undefined
        ? '-'
        : `${count(run.sendCalls)}${run.billedSends === undefined ? '' : ` (${count(run.billedSends)})`}`,
      run.sentBytes === undefined ? '-' : formatNumber(run.sentBytes / run.notifications),
      run.queuedMs === undefined ? '-' : formatMs(run.queuedMs),
    ]),
  };
}

function fakeFindings(fake: FakePublishingResults): string[] {
  const points = [4, 16, 64]
    .map((p) => modelThroughput(fake, p))
    .filter((point): point is ModelPoint => point !== undefined);
  return [
    `The zero-CPU emulator (bench/publishing-fake.ts) runs the same pipeline, packing and publisher loop with the real SnsNotifier and SqsWorkQueue and their AWS SDK clients; each client's request handler answers in-process after a fixed latency, and the CPU of that answering (parsing the request, building the reply, SQS's MD5s) is measured and taken out, so the CPU column is the functions' and the SDK's. DynamoDB is the test suite's in-memory stores, each call waiting ${formatNumber(fake.options.latencies.dynamoMs)} ms and counted: its requests are counted, not serialized, in both modes. The event source serializes each invocation's event (the poller's work, not counted); the function's runtime parses it (counted). Each run starts after a full garbage collection and ends with one, so it pays for collecting its own garbage and nobody else's. A sharded run queues everything before its publishers start (in Lambda each has its own CPU; here they would share one thread), so its notifications/s are the publishers' while they drain that backlog (from the seal until the invocation that completed the dispatch returned; the run's own wait notices later, its reads of the dispatch growing up to 2 s apart), and 'run queued everything after' is the run's own time.`,
    `The throughput model (for the issue-14 row): each publisher is a Lambda environment with its own CPU, so P publishers drain P × one publisher's measured rate until the run feeding them is the limit (the rate at which it queued everything on its own, before the publishers started): ${points.map((point) => `${point.publishers} publishers ${formatNumber(point.perSecond)}/s (${point.bound})`).join(', ')}. It assumes the services keep their latencies at any load and leaves out AWS's account quotas (SNS publish rate, Lambda concurrency) and the stack's publisherConcurrency (default 4). The 2-publisher row checks it against a measurement.`,
  ];
}

/**
 * Issue 33's bars: sharded publishing costs what single mode costs. Every sharded run of the bench
 * (each publisher count) sends at most this many DynamoDB requests per notification, and its bench
 * process spends at most this many times single mode's CPU per notification, both from the same run.
 */
export const SHARDED_COST_TARGET = { dynamoRequestsPerNotification: 0.1, cpuRatio: 1.3 } as const;

const dynamoPerNotification = (run: PublishingRun): number => dynamoTotals(run).count / run.notifications;
const cpuPerNotificationMs = (run: PublishingRun): number => run.nodeCpuMs / run.notifications;

/**
 * Issue 33's two rows, judged on every sharded run of the zero-CPU emulator (bench/publishing-fake.ts:
 * the functions and the AWS SDK clients as in production, the services answering in-process at
 * fixed latencies, the emulator's own CPU taken out): DynamoDB requests per notification (every
 * request of the mode: the run's queue counts, open, seal and waits, the publishers' claims, ledger
 * reads and writes and settlements), and CPU per notification against the single run's, medians of
 * interleaved rounds. The moto runs' figures are shown beside them for information: there moto's
 * latency grows with its load and the bench process also runs the event source and a latency proxy.
 * A run that lost or doubled anything measures nothing, so it misses.
 */
function shardedCostTargets(results: PublishingResults): TargetCheck[] {
  const { dynamoRequestsPerNotification: requestBar, cpuRatio: cpuBar } = SHARDED_COST_TARGET;
  const fake = results.fake;
  const latencies = fake
    ? `DynamoDB ${formatNumber(fake.options.latencies.dynamoMs)} ms, SQS ${formatNumber(fake.options.latencies.sqsMs)} ms, PublishBatch ${formatNumber(fake.options.latencies.snsMs)} ms`
    : 'fixed latencies';
  const requestsTarget = `Sharded publishing ≤ ${formatNumber(requestBar, 1)} DynamoDB requests per notification at every publisher count (issue 33; zero-CPU emulator at ${latencies}; single mode's figure beside it)`;
  const cpuTarget = `Sharded publishing CPU per notification ≤ ${formatNumber(cpuBar, 1)}× single mode's at every publisher count (issue 33; the floor: single mode in the same run; the functions and their AWS SDK clients against the zero-CPU emulator, its own CPU taken out${fake ? `, medians of ${fake.rounds} interleaved rounds` : ''})`;
  if (!fake) {
    return [
      { target: requestsTarget, measured: 'not run', met: undefined },
      { target: cpuTarget, measured: 'not run', met: undefined },
    ];
  }
  const invalid = [fake.single, ...fake.sharded].filter((run) => run.invalid !== undefined);
  if (invalid.length > 0) {
    const note = `why: ${invalid.map((run) => `${fakeLabel(run)}: ${run.invalid}`).join('; ')}`;
    return [
      { target: requestsTarget, measured: 'invalid run', met: false, note },
      { target: cpuTarget, measured: 'invalid run', met: false, note },
    ];
  }
  const requests = (run: FakeRun) => run.storeCalls / run.notifications;
  const cpu = (run: FakeRun) => run.cpuMs / run.notifications;
  const ratio = (run: FakeRun) => cpu(run) / cpu(fake.single);
  const requestsMet = fake.sharded.every((run) => requests(run) <= requestBar);
  const cpuMet = fake.sharded.every((run) => ratio(run) <= cpuBar);
  const motoSharded = results.runs.filter((r) => r.mode === 'sharded' && r.invalid === undefined);
  const motoSingle = results.runs.find((r) => r.mode === 'single' && r.invalid === undefined);
  const motoRequests =
    motoSharded.length > 0 && motoSingle
      ? `; for information, the moto runs: ${motoSharded.map((run) => `${formatNumber(dynamoPerNotification(run), 3)} at ${run.concurrency}`).join(', ')} (single ${formatNumber(dynamoPerNotification(motoSingle), 3)})`
      : '';
  const motoCpu =
    motoSharded.length > 0 && motoSingle
      ? `; the moto runs' bench process (event source and latency proxy in it): ${motoSharded.map((run) => formatRatio(cpuPerNotificationMs(run) / cpuPerNotificationMs(motoSingle), 2)).join(', ')}`
      : '';
  const extraPublishes = Math.max(...fake.sharded.map((run) => run.publishCalls)) - fake.single.publishCalls;
  return [
    {
      target: requestsTarget,
      measured: `${fake.sharded.map((run) => `${formatNumber(requests(run), 3)} at ${fakePublishers(run)}`).join(', ')} (single: ${formatNumber(requests(fake.single), 3)})${motoRequests}`,
      met: requestsMet,
      ...(requestsMet
        ? {}
        : {
            note: 'why: per publisher invocation the claim, ledger lookup, ledger write and settlement are four requests whatever the items hold; fewer, fuller items need fewer.',
          }),
    },
    {
      target: cpuTarget,
      measured: `${fake.sharded.map((run) => `${formatRatio(ratio(run), 2)} at ${fakePublishers(run)}`).join(', ')}; for information: ${fake.sharded.map((run) => formatMs(cpu(run))).join(', ')} per notification against ${formatMs(cpu(fake.single))}; round by round (each against its round's single run): ${fake.sharded.map((run, index) => `${(fake.cpuRatioByRound[index] ?? []).map((value) => formatRatio(value, 2)).join(', ')} at ${fakePublishers(run)}`).join('; ')}${motoCpu}`,
      met: cpuMet,
      ...(cpuMet
        ? {}
        : {
            note: `why: sharded mode does all of single mode's work (rendering, the ledger, SNS through the SDK) and on top of it carries every rendered notification through SQS: the work item packing, the SQS client's JSON serialization of each item and its MD5 check, the Lambda runtime's parse of each invocation's event, reading the items${extraPublishes > 0 ? `, and ${formatNumber(extraPublishes)} more PublishBatch calls (an item holds one audience's notifications of one flush, so its last batch is part full)` : ''}. Carrying rendered text is the cost; a publisher that rendered from the articles itself would carry a fraction of the bytes, and is the change that would meet this row.`,
          }),
    },
  ];
}

const fakePublishers = (run: FakeRun): string => `${run.publishers ?? 0} publisher${run.publishers === 1 ? '' : 's'}`;
const fakeLabel = (run: FakeRun): string => (run.mode === 'single' ? 'single' : `sharded, ${fakePublishers(run)}`);

/** Issue 14's target by the throughput model, and the model checked against the 2-publisher run; then issue 33's cost rows. */
export function publishingTargets(results: PublishingResults): TargetCheck[] {
  return [...shardedThroughputTargets(results), ...shardedCostTargets(results)];
}

/** The measured 2-publisher rate must be at least this share of what the model predicts for it. */
export const MODEL_CHECK_SHARE = 0.85;

function shardedThroughputTargets(results: PublishingResults): TargetCheck[] {
  const fake = results.fake;
  const target = `Sharded publishing ≥ ${SHARDED_TARGET.ratio}× single at ${SHARDED_TARGET.publishers} publishers (issue 14; by the throughput model from this run's zero-CPU emulator runs: ${SHARDED_TARGET.publishers} × one publisher's measured rate, or the run's queueing rate if lower, against single's measured rate${fake ? `; PublishBatch ${formatNumber(fake.options.latencies.snsMs)} ms, ${count(fake.options.notifications)} notifications` : ''})`;
  const check = `Sharded publishing, the model checked: 2 publishers draining measured ≥ ${formatNumber(MODEL_CHECK_SHARE * 100)}% of 2 × one publisher's rate, the model's publisher part (same run; each Lambda environment has its own CPU, here one process shares one)`;
  if (!fake) {
    return [
      { target, measured: 'not run', met: undefined },
      { target: check, measured: 'not run', met: undefined },
    ];
  }
  const at = (publishers: number) => modelThroughput(fake, publishers);
  const four = at(SHARDED_TARGET.publishers);
  const measuredTwo = fake.sharded.find((run) => run.publishers === 2);
  const one = fake.sharded.find((run) => run.publishers === 1);
  if (four === undefined || fake.single.invalid !== undefined || one === undefined) {
    return [
      { target, measured: 'invalid run', met: false },
      { target: check, measured: 'invalid run', met: false },
    ];
  }
  const ratio = four.perSecond / fake.single.perSecond;
  const met = ratio >= SHARDED_TARGET.ratio;
  const wider = [16, 64]
    .map((p) => at(p))
    .filter((point): point is ModelPoint => point !== undefined)
    .map(
      (point) =>
        `${point.publishers} publishers ${formatRatio(point.perSecond / fake.single.perSecond)} (bound by ${point.bound})`,
    )
    .join(', ');
  // Publishers against publishers: the run's bound would make the check pass whatever they did.
  const twoDrain = 2 * one.perSecond;
  const checkShare = measuredTwo && measuredTwo.invalid === undefined ? measuredTwo.perSecond / twoDrain : Number.NaN;
  return [
    {
      target,
      measured: `${formatRatio(ratio)} (model ${formatNumber(four.perSecond)} notifications/s, bound by ${four.bound}; single measured ${formatNumber(fake.single.perSecond)}/s); ${wider}`,
      met,
      ...(met
        ? {}
        : {
            note:
              four.bound === 'the run'
                ? `why: the run that feeds the publishers queued ${formatNumber(four.perSecond)} notifications/s on its own (${formatRatio(four.perSecond / fake.single.perSecond)} single mode's rate): it renders every notification, packs the work items and has the SQS client serialize each (its CPU, with its lookups and sends waiting in turn), so more publishers cannot drain faster than it queues; one publisher drains ${formatNumber(one.perSecond)}/s (${formatShare(one.perSecond / fake.single.perSecond)} of single's rate).`
                : `why: one publisher drains ${formatNumber(one.perSecond)} notifications/s, ${formatShare(one.perSecond / fake.single.perSecond)} of single mode's rate: per invocation of up to ${fake.options.publisherBatchSize} items it waits in turn for the claim, the ledger lookup, its PublishBatch calls (${fake.options.snsConcurrency} at a time), the ledger write and the settlement, where the single run overlaps its ledger and SNS waits across the whole run. ${SHARDED_TARGET.ratio}× at ${SHARDED_TARGET.publishers} publishers needs one publisher at ${formatShare(SHARDED_TARGET.ratio / SHARDED_TARGET.publishers)} of single's rate.`,
          }),
    },
    {
      target: check,
      measured: Number.isNaN(checkShare)
        ? 'not run'
        : `${formatShare(checkShare)} (measured ${formatNumber(measuredTwo?.perSecond ?? 0)}/s, 2 × one publisher ${formatNumber(twoDrain)}/s)`,
      met: Number.isNaN(checkShare) ? undefined : checkShare >= MODEL_CHECK_SHARE,
    },
  ];
}

/**
 * The "when to switch" paragraph of the single-run limits, from the measured single rate: what one
 * run publishes within its time budget at that rate, and what sharding measured against it.
 */
export function publishingLimits(
  results: PublishingResults,
  inputs: { readonly lambdaTimeoutSeconds: number; readonly softMarginSeconds: number },
): string {
  const usableSeconds = inputs.lambdaTimeoutSeconds - inputs.softMarginSeconds;
  const single = results.runs.find((r) => r.mode === 'single' && r.invalid === undefined);
  const sharded = results.runs.filter((r) => r.mode === 'sharded' && r.invalid === undefined);
  if (!single) return '**When to switch to sharded publishing:** not measured (the single run was not valid).';
  const perRun = Math.floor((single.perSecond * usableSeconds) / 1000) * 1000;
  const best = sharded.reduce<PublishingRun | undefined>(
    (a, b) => (a && a.perSecond >= b.perSecond ? a : b),
    undefined,
  );
  return (
    `**When to switch to sharded publishing (\`publishMode: sharded\`):** with PublishBatch made to take ${formatNumber(results.options.publishLatencyMs)} ms, the run's own publishing step measured ${formatNumber(single.perSecond)} notifications/s (${count(results.options.notifications)} over ${count(results.options.audiences)} audiences, ledger lookup and rendering included, against moto on this machine), i.e. about ${count(perRun)} notifications in the ${usableSeconds} s one run has by default (${inputs.lambdaTimeoutSeconds} s timeout, ${inputs.softMarginSeconds} s soft margin). ` +
    `When a provider interval (a busy day, the first run after an outage, a backfill) can produce more than that, switch to sharded: ${sharded.map((r) => `${r.concurrency} publisher${r.concurrency === 1 ? '' : 's'} measured ${formatNumber(r.perSecond)}/s (${formatRatio(r.perSecond / single.perSecond)})`).join(', ')}${best ? `, and the run itself only queues, so its own limit becomes reading and matching` : ''}. Below it, single mode is simpler and cheaper (no queue, no publisher invocations).`
  );
}
