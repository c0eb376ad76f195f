/**
 * Matching benchmark (DESIGN section 9): the indexed matcher against the naive scan over all
 * rules, measured in the same run on the same synthetic articles and rules.
 *
 * Run with `npx tsx bench/matching.ts`. It prints one row per articles × rules combination and a
 * comparison of the keyword automaton with `modern-ahocorasick` on the same texts.
 * `npx tsx bench/matching.ts --headline` measures only the targets (100,000 articles × 20,000
 * rules: five passes and the naive ratio, then the same rules with 30% of them boolean queries,
 * its passes interleaved with keyword-only passes (turns of MIX_CHUNK articles) for the ratio of
 * the two), in a few minutes
 * rather than many. `npx tsx bench/matching.ts --adversarial` measures only the worst case of one
 * rule (issue 30: `半 NEAR/50 体` on text made of nothing but its two terms) at growing lengths.
 * Not a test: nothing here asserts a time.
 */
import os from 'node:os';
import { pathToFileURL } from 'node:url';
import v8 from 'node:v8';
import vm from 'node:vm';
import AhoCorasick from 'modern-ahocorasick';
import { compileRules, naiveMatch, type RuleMatcher } from '#core/matcher';
import type { Article, AudienceMatch, Rule } from '#core/model';
import { IdSet, normalizeText, TermAutomaton } from '#core/text';
import type { Table } from './report.ts';
import { syntheticArticles, syntheticRules } from './synthetic.ts';

/** What one benchmark run measured. */
export interface MatchingBenchmark {
  /** Time to compile the rules into the indexed matcher. */
  readonly compileMs: number;
  /** Time for the indexed matcher to match every article. */
  readonly indexedMs: number;
  /**
   * CPU time of the process over the same span (all threads, GC included). On a shared machine it
   * shows how much of `indexedMs` was this work rather than waiting for a core.
   */
  readonly indexedCpuMs: number;
  /** Time for `naiveMatch` over every article; extrapolated from `naiveArticles` when sampled. */
  readonly naiveMs: number;
  /** How many articles `naiveMatch` actually ran on. */
  readonly naiveArticles: number;
  /** `naiveMs / indexedMs`. */
  readonly ratio: number;
  /** AudienceMatch objects produced over all articles (one per notification). */
  readonly matches: number;
  /** RuleMatch objects over all articles. */
  readonly ruleMatches: number;
}

/** The share of query rules in the query mix (issue 12: 30% of 20,000 rules). */
export const QUERY_SHARE = 0.3;

/** What the query mix measured: its own benchmark, and passes interleaved with keyword-only ones. */
export interface QueryMixBenchmark {
  /** Share of the rules that are query rules. */
  readonly queryShare: number;
  /** benchMatching on the query mix: compile time, matches, and the naive agreement check. */
  readonly result: MatchingBenchmark;
  /** Indexed passes over all articles, keyword-only rules (each the sum of turns that alternate with `queryMs`'s). */
  readonly keywordMs: readonly number[];
  /** Indexed passes over all articles, the query mix. */
  readonly queryMs: readonly number[];
}

/** Thrown when the two matchers disagree on the sampled articles: the timings would be meaningless. */
export class MatcherDisagreementError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'MatcherDisagreementError';
  }
}

let gc: (() => void) | undefined;

/**
 * A full garbage collection, so one measurement does not pay for the garbage of the previous one
 * or for the collector still marking a freshly generated data set. Uses V8's `gc`, exposed on
 * first use because the benchmark is started without `--expose-gc`.
 */
function collectGarbage(): void {
  if (gc === undefined) {
    v8.setFlagsFromString('--expose-gc');
    const exposed: unknown = vm.runInNewContext('gc');
    gc = typeof exposed === 'function' ? () => void exposed() : () => undefined;
  }
  gc();
}

const signature = (matches: readonly AudienceMatch[]) =>
  JSON.stringify(matches, (key, value) => (key === 'article' ? undefined : value));

/** Evenly spaced articles, so a sample sees the same mix as the whole window. */
function sampleOf(articles: readonly Article[], size: number): Article[] {
  if (size >= articles.length) return [...articles];
  const step = articles.length / size;
  return Array.from({ length: size }, (_, i) => articles[Math.floor(i * step)]).filter(
    (article): article is Article => article !== undefined,
  );
}

/**
 * Compiles `rules`, matches every article with the index, then runs `naiveMatch` on
 * `naiveSample` evenly spaced articles (all by default) and extrapolates its time linearly to all
 * articles. Both matchers are warmed up first, and their outputs on the sample must be equal.
 *
 * @throws MatcherDisagreementError when the indexed and naive outputs differ on the sample.
 */
export function benchMatching(options: {
  articles: readonly Article[];
  rules: readonly Rule[];
  naiveSample?: number;
}): MatchingBenchmark {
  const { articles, rules } = options;
  const sample = sampleOf(articles, Math.max(1, Math.min(articles.length, options.naiveSample ?? articles.length)));

  collectGarbage();
  const compileStart = performance.now();
  const matcher = compileRules(rules);
  const compileMs = performance.now() - compileStart;

  // Warm-up: let the JIT compile both paths before anything is timed.
  for (const article of articles.slice(0, 500)) matcher.match(article);
  for (const article of sample.slice(0, 10)) naiveMatch(rules, article);

  let matches = 0;
  let ruleMatches = 0;
  collectGarbage();
  const cpuStart = process.cpuUsage();
  const indexedStart = performance.now();
  for (const article of articles) {
    const result = matcher.match(article);
    matches += result.length;
    for (const audience of result) ruleMatches += audience.rules.length;
  }
  const indexedMs = performance.now() - indexedStart;
  const cpu = process.cpuUsage(cpuStart);
  const indexedCpuMs = (cpu.user + cpu.system) / 1000;

  const naiveResults: AudienceMatch[][] = [];
  collectGarbage();
  const naiveStart = performance.now();
  for (const article of sample) naiveResults.push(naiveMatch(rules, article));
  const naiveSampleMs = performance.now() - naiveStart;
  const naiveMs = articles.length === 0 ? 0 : (naiveSampleMs * articles.length) / sample.length;

  sample.forEach((article, i) => {
    const expected = signature(naiveResults[i] ?? []);
    const actual = signature(matcher.match(article));
    if (actual !== expected) {
      throw new MatcherDisagreementError(
        `indexed and naive matchers disagree on article ${article.key}: ${actual.slice(0, 300)} vs ${expected.slice(0, 300)}`,
      );
    }
  });

  return {
    compileMs,
    indexedMs,
    indexedCpuMs,
    naiveMs,
    naiveArticles: sample.length,
    ratio: indexedMs > 0 ? naiveMs / indexedMs : Number.POSITIVE_INFINITY,
    matches,
    ruleMatches,
  };
}

/** One timed pass of the indexed matcher: wall time, and the process's CPU time (user + system). */
export interface MatchingPass {
  readonly ms: number;
  readonly cpuMs: number;
}

/**
 * Times `repetitions` more passes of the indexed matcher over the same articles (compiled once,
 * warmed up), for the spread of the headline figure on a shared machine, and their CPU time (what
 * the story row of issue 13 compares its own CPU time with: like with like).
 */
export function repeatIndexed(options: {
  articles: readonly Article[];
  rules: readonly Rule[];
  repetitions: number;
}): MatchingPass[] {
  const matcher = compileRules(options.rules);
  for (const article of options.articles.slice(0, 500)) matcher.match(article);
  const passes: MatchingPass[] = [];
  for (let i = 0; i < options.repetitions; i++) {
    collectGarbage();
    const cpuStart = process.cpuUsage();
    const started = performance.now();
    for (const article of options.articles) matcher.match(article);
    const ms = performance.now() - started;
    const cpu = process.cpuUsage(cpuStart);
    passes.push({ ms, cpuMs: (cpu.user + cpu.system) / 1000 });
  }
  return passes;
}

/** Articles per turn when the query mix and keyword-only matchers take turns (see benchQueryMix). */
export const MIX_CHUNK = 2_000;

/**
 * The query mix against keyword-only rules on the same articles: benchMatching on `queryRules`
 * (so the naive reference, with evaluateQuery for every rule, must agree on `naiveSample`
 * articles), then `passes` timed passes of each compiled matcher. Within a pass the two take
 * turns every MIX_CHUNK articles (alternating which goes first), and a pass's time is the sum of
 * its turns: on a shared machine the load changes within seconds, and whole passes one after the
 * other (1 to 3 s each) gave ratios from 1.2 to 1.6 for the same code, while turns this short see
 * the same load for both.
 *
 * @throws MatcherDisagreementError when the indexed and naive outputs differ on the sample.
 */
export function benchQueryMix(options: {
  articles: readonly Article[];
  keywordRules: readonly Rule[];
  queryRules: readonly Rule[];
  queryShare: number;
  passes: number;
  naiveSample?: number;
}): QueryMixBenchmark {
  const { articles } = options;
  const result = benchMatching({
    articles,
    rules: options.queryRules,
    naiveSample: options.naiveSample ?? 500,
  });
  const keyword = compileRules(options.keywordRules);
  const query = compileRules(options.queryRules);
  for (const article of articles.slice(0, 500)) {
    keyword.match(article);
    query.match(article);
  }
  const keywordMs: number[] = [];
  const queryMs: number[] = [];
  const timeTurn = (matcher: RuleMatcher, from: number) => {
    const started = performance.now();
    const end = Math.min(articles.length, from + MIX_CHUNK);
    for (let i = from; i < end; i++) {
      const article = articles[i];
      if (article !== undefined) matcher.match(article);
    }
    return performance.now() - started;
  };
  for (let pass = 0; pass < options.passes; pass++) {
    collectGarbage();
    let keywordPass = 0;
    let queryPass = 0;
    for (let from = 0, turn = pass; from < articles.length; from += MIX_CHUNK, turn++) {
      if (turn % 2 === 0) {
        keywordPass += timeTurn(keyword, from);
        queryPass += timeTurn(query, from);
      } else {
        queryPass += timeTurn(query, from);
        keywordPass += timeTurn(keyword, from);
      }
    }
    keywordMs.push(keywordPass);
    queryMs.push(queryPass);
  }
  return { queryShare: options.queryShare, result, keywordMs, queryMs };
}

/**
 * Scans the same normalized texts for the same keyword terms with the project's automaton and with
 * `modern-ahocorasick` (its fastest call, `count`, which does less: no word edges, no ids).
 */
export function benchAutomaton(options: { articles: readonly Article[]; rules: readonly Rule[] }): {
  terms: number;
  characters: number;
  automatonMs: number;
  modernAhoCorasickMs: number;
} {
  const terms = [
    ...new Set(
      options.rules.flatMap((rule) => [...(rule.keywords ?? []), ...(rule.excludeKeywords ?? [])].map(normalizeText)),
    ),
  ].filter((term) => term.length > 0);
  const texts = options.articles.flatMap((article) => [normalizeText(article.title), normalizeText(article.summary)]);
  const characters = texts.reduce((sum, text) => sum + text.length, 0);
  const automaton = new TermAutomaton(terms.map((text, id) => ({ text, id })));
  const found = new IdSet(terms.length);
  const library = new AhoCorasick(terms);
  const time = (run: (text: string) => void) => {
    for (const text of texts.slice(0, 200)) run(text);
    collectGarbage();
    const start = performance.now();
    for (const text of texts) run(text);
    return performance.now() - start;
  };
  const automatonMs = time((text) => {
    found.reset();
    automaton.scan(text, found);
  });
  const modernAhoCorasickMs = time((text) => library.count(text));
  return { terms: terms.length, characters, automatonMs, modernAhoCorasickMs };
}

/** Matching against its floor (see {@link benchMatchingFloor}). */
export interface MatchingFloor {
  /** Distinct keywords and exclusions of the rules (the automaton's terms). */
  readonly terms: number;
  readonly articles: number;
  /** Characters of the articles' titles and summaries. */
  readonly characters: number;
  /** Per pass: the indexed matcher over every article, and the floor over the same articles (ms). */
  readonly matchingMs: readonly number[];
  readonly floorMs: readonly number[];
}

/**
 * Matching against the least any matcher of these rules must do: read every article's title and
 * summary once, normalized, with one Aho-Corasick automaton of all the rules' keywords (the
 * project's TermAutomaton, the keyword index the matcher itself uses), finding every keyword in
 * them. The two take turns every MIX_CHUNK articles within a pass, as benchQueryMix does, so a
 * noisy host slows both alike and their ratio keeps what the matcher adds: categories, exclusions,
 * queries, and building an AudienceMatch per matched audience.
 */
export function benchMatchingFloor(options: {
  articles: readonly Article[];
  rules: readonly Rule[];
  passes: number;
}): MatchingFloor {
  const matcher = compileRules(options.rules);
  const terms = [
    ...new Set(
      options.rules.flatMap((rule) => [...(rule.keywords ?? []), ...(rule.excludeKeywords ?? [])].map(normalizeText)),
    ),
  ].filter((term) => term.length > 0);
  const automaton = new TermAutomaton(terms.map((text, id) => ({ text, id })));
  const found = new IdSet(terms.length);
  let sink = 0;
  const floor = (article: Article) => {
    found.reset();
    automaton.scan(normalizeText(article.title), found);
    automaton.scan(normalizeText(article.summary), found);
    sink += found.size;
  };
  const match = (article: Article) => {
    sink += matcher.match(article).length;
  };
  for (const article of options.articles.slice(0, 500)) {
    match(article);
    floor(article);
  }
  const matchingMs: number[] = [];
  const floorMs: number[] = [];
  for (let pass = 0; pass < options.passes; pass++) {
    collectGarbage();
    let matchingPass = 0;
    let floorPass = 0;
    for (let start = 0; start < options.articles.length; start += MIX_CHUNK) {
      const chunk = options.articles.slice(start, start + MIX_CHUNK);
      const turn = (work: (article: Article) => void) => {
        const began = performance.now();
        for (const article of chunk) work(article);
        return performance.now() - began;
      };
      // Alternate which goes first, so neither always meets the other's garbage.
      if ((start / MIX_CHUNK + pass) % 2 === 0) {
        matchingPass += turn(match);
        floorPass += turn(floor);
      } else {
        floorPass += turn(floor);
        matchingPass += turn(match);
      }
    }
    matchingMs.push(matchingPass);
    floorMs.push(floorPass);
  }
  if (sink < 0) throw new Error('unreachable');
  const characters = options.articles.reduce((sum, a) => sum + a.title.length + a.summary.length, 0);
  return { terms: terms.length, articles: options.articles.length, characters, matchingMs, floorMs };
}

/** One length of the adversarial NEAR measurement (see benchAdversarialNear). */
export interface AdversarialNearRow {
  /** Occurrences of each side in the title; the summary has twice as many. */
  readonly perSide: number;
  /** Characters of title and summary together. */
  readonly characters: number;
  /** Matches timed at this length. */
  readonly articles: number;
  /** Median time to match one article, of the timed rounds. */
  readonly microsPerArticle: number;
  /** `microsPerArticle` per character of the article. */
  readonly nanosPerCharacter: number;
  /** `nanosPerCharacter` over the shortest length's: about 1 when the cost grows linearly, 2 per doubling when quadratically. */
  readonly perCharacterGrowth: number;
}

/** The rule of the adversarial measurement: both sides Han, so NEAR counts characters. */
export const ADVERSARIAL_NEAR_QUERY = '半 NEAR/50 体';

/** Occurrences per side of the adversarial lengths (the provider's limits allow 470 in a title, 970 in a summary). */
export const ADVERSARIAL_NEAR_LENGTHS = [250, 500, 1_000, 2_000] as const;

/**
 * Growth of the cost per character, longest over shortest length, within which the worst case
 * counts as linear. The lengths span 8×, so quadratic work would show about 8×; timing on a shared
 * machine moves a few tens of percent.
 */
export const LINEAR_GROWTH_LIMIT = 1.5;

/**
 * The worst case of one rule (issue 30): {@link ADVERSARIAL_NEAR_QUERY} on articles whose title is
 * `'半'*n + '。'*60 + '体'*n` and whose summary is the same with 2n, so the two sides are never
 * within 50 characters and every occurrence is in play. Each length is matched through the
 * compiled matcher, as a run does, in `rounds` timed rounds of enough matches to take about
 * `roundMs`; the row gives the median round's time per article and per character, and how the
 * cost per character grew against the shortest length. Before issue 30 it was quadratic: 74, 159,
 * 466 and 1,600 ms an article at 120, 240, 470 and 970 per side.
 */
export function benchAdversarialNear(
  options: { perSide?: readonly number[]; rounds?: number; roundMs?: number } = {},
): AdversarialNearRow[] {
  const lengths = options.perSide ?? ADVERSARIAL_NEAR_LENGTHS;
  const rounds = options.rounds ?? 5;
  const roundMs = options.roundMs ?? 200;
  const rule: Rule = {
    ruleId: 'adversarial-near',
    audienceId: 'chips-team',
    enabled: true,
    urgent: false,
    matchAll: false,
    query: ADVERSARIAL_NEAR_QUERY,
  };
  const matcher = compileRules([rule]);
  const side = (perSide: number) => `${'半'.repeat(perSide)}${'。'.repeat(60)}${'体'.repeat(perSide)}`;
  const measured = lengths.map((perSide) => {
    const article: Article = {
      key: `id:adversarial-${perSide}`,
      title: side(perSide),
      summary: side(2 * perSide),
      url: 'https://news.example.com/adversarial',
      publishedAt: 0,
      categories: [],
      categoryNames: [],
    };
    if (matcher.match(article).length !== 0) throw new MatcherDisagreementError(`${ADVERSARIAL_NEAR_QUERY} matched`);
    // Calibrate: matches per round so that a round takes about roundMs.
    let perRound = 1;
    for (;;) {
      const started = performance.now();
      for (let i = 0; i < perRound; i++) matcher.match(article);
      if (performance.now() - started >= roundMs / 4 || perRound >= 1 << 20) break;
      perRound *= 2;
    }
    perRound *= 4;
    const times: number[] = [];
    for (let round = 0; round < rounds; round++) {
      collectGarbage();
      const started = performance.now();
      for (let i = 0; i < perRound; i++) matcher.match(article);
      times.push((performance.now() - started) / perRound);
    }
    const characters = article.title.length + article.summary.length;
    const microsPerArticle = medianOf(times) * 1000;
    return { perSide, characters, articles: perRound * rounds, microsPerArticle };
  });
  const first = measured[0];
  const baseline = first === undefined ? 1 : (first.microsPerArticle * 1000) / first.characters;
  return measured.map((row) => {
    const nanosPerCharacter = (row.microsPerArticle * 1000) / row.characters;
    return { ...row, nanosPerCharacter, perCharacterGrowth: nanosPerCharacter / baseline };
  });
}

/** Whether the adversarial cost per character stayed within LINEAR_GROWTH_LIMIT of the shortest length's. */
export const growsLinearly = (rows: readonly AdversarialNearRow[]): boolean =>
  rows.every((row) => row.perCharacterGrowth <= LINEAR_GROWTH_LIMIT);

/** The adversarial NEAR rows as a report table (bench/report.ts). */
export function adversarialNearTable(rows: readonly AdversarialNearRow[]): Table {
  return {
    title: `Worst case of one rule: ${ADVERSARIAL_NEAR_QUERY} on text made of its two terms (issue 30)`,
    header: [
      '半 and 体 per side (title)',
      'characters',
      'µs/article',
      'ns/character',
      'per-character cost vs shortest',
    ],
    rows: rows.map((row) => [
      format(row.perSide),
      format(row.characters),
      format(row.microsPerArticle, 1),
      format(row.nanosPerCharacter, 1),
      `${format(row.perCharacterGrowth, 2)}×`,
    ]),
    notes: [
      `Title '半'*n + '。'*60 + '体'*n, summary the same with 2n; the rule never matches, so every occurrence is in play. Median of timed rounds through the compiled matcher. Linear growth keeps the last column near 1 (at most ${format(LINEAR_GROWTH_LIMIT, 1)}× counts as linear: ${growsLinearly(rows) ? 'it did' : 'it did NOT'}); quadratic growth would reach about ${format((rows.at(-1)?.perSide ?? 1) / (rows[0]?.perSide ?? 1))}×.`,
    ],
  };
}

/** Prints the adversarial NEAR table. */
export function adversarial(): void {
  const table = adversarialNearTable(benchAdversarialNear());
  console.log(table.title);
  printTable(table.header, table.rows);
  for (const note of table.notes ?? []) console.log(note);
}

const format = (value: number, digits = 0) =>
  value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });

function printTable(header: readonly string[], rows: readonly (readonly string[])[]): void {
  const widths = header.map((title, column) =>
    Math.max(title.length, ...rows.map((row) => (row[column] ?? '').length)),
  );
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, column) => (column < 2 ? cell.padEnd(widths[column] ?? 0) : cell.padStart(widths[column] ?? 0)))
      .join('  ');
  console.log(line(header));
  console.log(widths.map((width) => '-'.repeat(width)).join('  '));
  for (const row of rows) console.log(line(row));
}

/** Prints the articles × rules table and the automaton comparison. */
export function main(): void {
  const seed = 20_250_101;
  const cpu = os.cpus()[0]?.model ?? 'unknown CPU';
  const load = os
    .loadavg()
    .map((value) => value.toFixed(1))
    .join(' ');
  console.log(`Matching benchmark: Node ${process.version}, ${os.cpus().length} × ${cpu}, load ${load}, seed ${seed}`);
  const articleCounts = [1_000, 10_000, 100_000];
  const ruleCounts = [1_000, 20_000];
  const allArticles = syntheticArticles(Math.max(...articleCounts), seed);
  const rows: string[][] = [];
  for (const ruleCount of ruleCounts) {
    const rules = syntheticRules(ruleCount, seed);
    for (const articleCount of articleCounts) {
      const articles = allArticles.slice(0, articleCount);
      const naiveSample = Math.min(articleCount, ruleCount >= 10_000 ? 500 : 2_000);
      const result = benchMatching({ articles, rules, naiveSample });
      rows.push([
        format(articleCount),
        format(ruleCount),
        format(result.compileMs),
        format(result.indexedMs),
        format(result.indexedCpuMs),
        format((result.indexedMs * 1000) / articleCount, 1),
        `${format(result.naiveMs)}${result.naiveArticles < articleCount ? '*' : ''}`,
        `${format(result.ratio, 0)}×`,
        format(result.matches / articleCount, 1),
        format(result.ruleMatches / articleCount, 1),
      ]);
    }
  }
  printTable(
    [
      'articles',
      'rules',
      'compile ms',
      'indexed ms',
      'indexed cpu ms',
      'µs/article',
      'naive ms',
      'naive/indexed',
      'audiences/article',
      'rules/article',
    ],
    rows,
  );
  console.log(
    '* naive time extrapolated linearly from an evenly spaced sample (500 articles at 20,000 rules, 2,000 at 1,000).',
  );

  const comparison = benchAutomaton({ articles: allArticles.slice(0, 10_000), rules: syntheticRules(20_000, seed) });
  console.log(
    `\nKeyword scan, ${format(comparison.terms)} terms over ${format(comparison.characters)} characters (10,000 articles): ` +
      `TermAutomaton ${format(comparison.automatonMs)} ms (${format((comparison.automatonMs * 1e6) / comparison.characters, 1)} ns/char), ` +
      `modern-ahocorasick count() ${format(comparison.modernAhoCorasickMs)} ms (${format((comparison.modernAhoCorasickMs * 1e6) / comparison.characters, 1)} ns/char)`,
  );
  console.log('');
  adversarial();
}

const medianOf = (values: readonly number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;

/**
 * Prints the headline figures only: 100,000 articles × 20,000 rules, the median and range of
 * `passes` timed passes, and the naive ratio of the same run (naive sampled on 500 articles); then
 * the query mix (QUERY_SHARE of the rules as queries) with `passes` passes interleaved with as many
 * keyword-only ones, and the ratio of the two medians.
 */
export function headline(passes = 5): void {
  const seed = 20_250_101;
  const load = os
    .loadavg()
    .map((value) => value.toFixed(1))
    .join(' ');
  const articles = syntheticArticles(100_000, seed);
  const rules = syntheticRules(20_000, seed);
  const result = benchMatching({ articles, rules, naiveSample: 500 });
  const times = [
    result.indexedMs,
    ...repeatIndexed({ articles, rules, repetitions: passes - 1 }).map((pass) => pass.ms),
  ];
  const sorted = [...times].sort((a, b) => a - b);
  const median = sorted[Math.floor(sorted.length / 2)] ?? 0;
  console.log(
    `100,000 × 20,000 (load ${load}): median ${format(median)} ms over ${times.length} passes ` +
      `(${times.map((time) => format(time)).join(', ')}; first pass CPU ${format(result.indexedCpuMs)} ms), ` +
      `compile ${format(result.compileMs)} ms, naive ${format(result.naiveMs)} ms* = ${format(result.naiveMs / median)}× the median ` +
      `(${format(result.ratio)}× the first pass), ${format(result.matches / articles.length, 1)} audiences/article`,
  );
  const mix = benchQueryMix({
    articles,
    keywordRules: rules,
    queryRules: syntheticRules(20_000, seed, { queryShare: QUERY_SHARE }),
    queryShare: QUERY_SHARE,
    passes,
  });
  const keywordMedian = medianOf(mix.keywordMs);
  const queryMedian = medianOf(mix.queryMs);
  console.log(
    `query mix (${format(QUERY_SHARE * 100)}% of 20,000 rules are queries; naive agreed on ${format(mix.result.naiveArticles)} articles): ` +
      `median ${format(queryMedian)} ms (${mix.queryMs.map((time) => format(time)).join(', ')}), ` +
      `keyword-only interleaved median ${format(keywordMedian)} ms (${mix.keywordMs.map((time) => format(time)).join(', ')}): ` +
      `${format(queryMedian / keywordMedian, 2)}× keyword-only (target ≤ 1.5×); compile ${format(mix.result.compileMs)} ms, ` +
      `naive ${format(mix.result.naiveMs)} ms* = ${format(mix.result.naiveMs / queryMedian)}× the median, ` +
      `${format(mix.result.matches / articles.length, 1)} audiences/article (${format(mix.result.ruleMatches / articles.length, 1)} rules)`,
  );
}

const entry = process.argv[1];
if (entry !== undefined && import.meta.url === pathToFileURL(entry).href) {
  if (process.argv.includes('--headline')) headline();
  else if (process.argv.includes('--adversarial')) adversarial();
  else main();
}
