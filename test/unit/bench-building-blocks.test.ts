/**
 * The building blocks of `npm run bench` (bench/): report formatting, statistics, request
 * counting, the esbuild options derived from the stack's bundling, the SVG plot and the profile
 * summaries. Benchmarks themselves are not tests: nothing here measures or asserts a time.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { article } from '#test/fake-ports';
import {
  type BundleMetafile,
  type CliStartupResults,
  cliStartupTargets,
  type StartupTimes,
  staticLoad,
  timeStartup,
} from '../../bench/cli-startup.ts';
import { esbuildOptionsFor } from '../../bench/cold-start.ts';
import { timedNewsSource } from '../../bench/end-to-end.ts';
import { benchQueryMix, QUERY_SHARE } from '../../bench/matching.ts';
import { lambdaHeapFlags } from '../../bench/memory.ts';
import { logLogPlotSvg } from '../../bench/plot.ts';
import { type CpuProfile, packageOf, summarizeByCaller, summarizeProfile } from '../../bench/profile.ts';
import { type BenchReport, renderMarkdown, renderMarkdownTable, renderTextTable } from '../../bench/report.ts';
import { itemsOf, messageBytesOf } from '../../bench/request-recorder.ts';
import { scenarioAudiences, scenarioRules } from '../../bench/scenario.ts';
import {
  ATTRIBUTION_BUNDLES,
  type ColdStartResults,
  coldStartTargets,
  type MatchingResults,
  matchingTargets,
} from '../../bench/sections.ts';
import { formatRatio, median, percentile, unionLength } from '../../bench/stats.ts';
import { delivered, syntheticArticles, syntheticRules } from '../../bench/synthetic.ts';
import { parseRule } from '../../functions/core/model.ts';
import type { ArticlePage, NewsSource } from '../../functions/core/ports.ts';
import { parseQuery } from '../../functions/core/query.ts';
import { ESM_REQUIRE_BANNER, FUNCTION_BUNDLING } from '../../lib/constructs/news-alerts-function.ts';

describe('bench statistics', () => {
  it('interpolates percentiles and medians', () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([1, 2, 3, 4])).toBe(2.5);
    expect(percentile([10, 20, 30, 40, 50, 60, 70, 80, 90, 100], 90)).toBeCloseTo(91);
    expect(Number.isNaN(median([]))).toBe(true);
  });

  it('counts overlapping intervals once', () => {
    expect(
      unionLength([
        { start: 0, end: 10 },
        { start: 5, end: 15 },
        { start: 20, end: 25 },
        { start: 21, end: 22 },
      ]),
    ).toBe(20);
    expect(unionLength([])).toBe(0);
  });
});

describe('bench report', () => {
  const table = {
    header: ['kind', 'count'],
    rows: [
      ['a|b', '1,000'],
      ['c', '2'],
    ],
    notes: ['a note'],
  };

  it('renders Markdown tables with right-aligned numbers and escaped pipes', () => {
    expect(renderMarkdownTable(table)).toBe(
      ['| kind | count |', '| :--- | ---: |', '| a\\|b | 1,000 |', '| c | 2 |', '', '- a note'].join('\n'),
    );
  });

  it('renders aligned text tables for the terminal', () => {
    expect(renderTextTable(table).split('\n')).toEqual([
      'kind  count',
      '----  -----',
      'a|b   1,000',
      'c         2',
      '  a note',
    ]);
  });

  it('writes every part of RESULTS.md: limits, machine, targets with verdicts, sections', () => {
    const report: BenchReport = {
      mode: 'full',
      machine: {
        cpuModel: 'Test CPU',
        cores: 2,
        memoryGiB: 4,
        node: 'v20.0.0',
        platform: 'Linux',
        date: '2026-11-22T00:00:00.000Z',
        commit: 'abc123',
        loadStart: [0.1, 0.2, 0.3],
      },
      loadEnd: [0.4, 0.5, 0.6],
      durationMs: 61_000,
      limits: ['**Single-run limits** here.'],
      targets: [
        { target: 'fast', measured: '1 s', met: true },
        { target: 'small', measured: '400 MB', met: false, note: 'why' },
        { target: 'later', measured: 'n/a', met: undefined },
      ],
      noise: ['quiet machine'],
      sections: [
        { title: '1. Part', tables: [table], findings: ['found'], image: { path: 'plot.svg', alt: 'a plot' } },
      ],
    };
    const markdown = renderMarkdown(report);
    expect(markdown).toContain(
      '## Single-run limits\n\n_For docs/performance.md (DESIGN section 10)._\n\n**Single-run limits** here.',
    );
    expect(markdown).toContain('- Load average (1/5/15 min): 0.10 0.20 0.30 at the start, 0.40 0.50 0.60 at the end');
    expect(markdown).toContain('| fast | 1 s | met |');
    expect(markdown).toContain('| small | 400 MB | MISSED |');
    expect(markdown).toContain('| later | n/a | not measured |');
    expect(markdown).toContain('![a plot](plot.svg)');
    expect(markdown).toContain('- found');
    expect(markdown.endsWith('\n')).toBe(true);
  });

  it('formats ratios', () => {
    expect(formatRatio(1.234)).toBe('1.23×');
    expect(formatRatio(Number.POSITIVE_INFINITY)).toBe('∞×');
  });
});

describe('bench matching targets', () => {
  const results = (indexedMs: number, repeatsMs: number[]): MatchingResults => ({
    cells: [
      {
        articles: 100_000,
        rules: 20_000,
        result: {
          compileMs: 450,
          indexedMs,
          indexedCpuMs: indexedMs,
          naiveMs: 1_000_000,
          naiveArticles: 500,
          ratio: 1_000_000 / indexedMs,
          matches: 2_410_000,
          ruleMatches: 2_600_000,
        },
      },
    ],
    repeatsMs,
    repeatsCpuMs: repeatsMs,
    profile: [
      { name: 'match (functions/core/matcher.ts)', ms: 900, share: 0.363 },
      { name: 'scan (functions/core/text.ts)', ms: 820, share: 0.335 },
      { name: 'normalizeText (functions/core/text.ts)', ms: 270, share: 0.111 },
      { name: '#sameWord (functions/core/text.ts)', ms: 100, share: 0.04 },
      { name: '#ruleMatchList (functions/core/matcher.ts)', ms: 50, share: 0.02 },
      { name: '(garbage collector)', ms: 50, share: 0.02 },
    ],
  });

  it('explains a missed time target with the figures of the same run, not fixed text', () => {
    // The 1.0 s row is information (the host decides it); the floor ratio is the target.
    const [time, ratio] = matchingTargets(results(2300, [2100, 2500, 1900]));
    expect(time?.met).toBeUndefined();
    expect(time?.information).toBe(true);
    expect(time?.note).toContain('24.1 audiences');
    expect(time?.note).toContain('2,410,000 AudienceMatch results');
    expect(time?.note).toMatch(
      /38\.3% in the matcher \(matcher\.ts\), 37\.5% in the keyword automaton \(text\.ts\), 11\.1% in normalization/,
    );
    expect(time?.note).toContain('1,900 ms–2,500 ms');
    expect(ratio?.met).toBe(true);
  });

  it('adds no note when the time is within the 1.0 s it is shown against', () => {
    const [time] = matchingTargets(results(900, [850, 950]));
    expect(time?.information).toBe(true);
    expect(time?.note).toBeUndefined();
  });

  const withQueryMix = (queryMs: number[], keywordMs: number[]): MatchingResults => {
    const base = results(900, [850, 950]);
    const cell = base.cells[0]?.result;
    if (cell === undefined) throw new Error('no cell');
    return { ...base, queryMix: { queryShare: 0.3, result: { ...cell, ruleMatches: 2_100_000 }, keywordMs, queryMs } };
  };

  it('judges the worst case of one rule by how its cost per character grows with the text (issue 30: linear)', () => {
    const rows = (growth: readonly number[]) =>
      growth.map((perCharacterGrowth, i) => ({
        perSide: 250 * 2 ** i,
        characters: 3 * (250 * 2 ** i) * 2 + 180,
        articles: 100,
        microsPerArticle: 100 * 2 ** i * perCharacterGrowth,
        nanosPerCharacter: 60 * perCharacterGrowth,
        perCharacterGrowth,
      }));
    const base = results(900, [850, 950]);
    const linear = matchingTargets({ ...base, adversarialNear: rows([1, 0.8, 0.7, 0.7]) }).at(-1);
    expect(linear).toMatchObject({ met: true, measured: expect.stringMatching(/^1\.00× at most/) });
    const quadratic = matchingTargets({ ...base, adversarialNear: rows([1, 2, 4, 8]) }).at(-1);
    expect(quadratic).toMatchObject({ met: false, note: expect.stringMatching(/super-linear/) });
  });

  it('judges the query mix against the keyword-only passes of the same run (issue 12: at most 1.5×)', () => {
    const met = matchingTargets(withQueryMix([1300, 1200, 1250], [1000, 900, 950]));
    expect(met).toHaveLength(3);
    expect(met[2]?.target).toContain('30.0% query rules ≤ 1.5× keyword-only');
    expect(met[2]?.measured).toMatch(
      /^1\.32× \(1,250 ms vs 950 ms at 100,000 × 20,000, medians of 3; naive agreed on 500 articles\)/,
    );
    expect(met[2]?.met).toBe(true);
    expect(met[2]?.note).toBeUndefined();

    const missed = matchingTargets(withQueryMix([1600, 1500], [1000, 900]))[2];
    expect(missed?.met).toBe(false);
    expect(missed?.note).toContain('the mix matched 21.0 rules per article (keyword-only 26.0)');
    expect(missed?.note).toContain('1,500 ms–1,600 ms for the mix');
  });

  it('has no query mix row when the run did not measure one', () => {
    expect(matchingTargets(results(900, [850, 950]))).toHaveLength(2);
  });
});

describe('bench query mix', () => {
  it('turns the query share of the rules into queries that parse and validate, leaving the others as they were', () => {
    const keywordOnly = syntheticRules(3000, 7);
    const mixed = syntheticRules(3000, 7, { queryShare: QUERY_SHARE });
    const queries = mixed.filter((rule) => rule.query !== undefined);
    expect(queries.length / mixed.length).toBeGreaterThan(0.27);
    expect(queries.length / mixed.length).toBeLessThan(0.33);
    for (const rule of queries) {
      expect(() => parseQuery(rule.query ?? '')).not.toThrow();
      expect(parseRule(rule).ok).toBe(true);
    }
    const forms = queries.map((rule) => rule.query ?? '');
    for (const form of [/"/, / OR /, /NOT |-/, /NEAR\/\d+/, /\*/, /title:/, /summary:/]) {
      expect(forms.some((query) => form.test(query))).toBe(true);
    }
    mixed.forEach((rule, i) => {
      if (rule.query === undefined) expect(rule).toEqual(keywordOnly[i]);
      else expect([rule.ruleId, rule.audienceId]).toEqual([keywordOnly[i]?.ruleId, keywordOnly[i]?.audienceId]);
    });
  });

  it('checks the query mix against the naive reference and times both mixes in alternating passes', () => {
    const articles = syntheticArticles(300, 7);
    const mix = benchQueryMix({
      articles,
      keywordRules: syntheticRules(1000, 7),
      queryRules: syntheticRules(1000, 7, { queryShare: QUERY_SHARE }),
      queryShare: QUERY_SHARE,
      passes: 2,
      naiveSample: 300,
    });
    expect(mix.result.naiveArticles).toBe(300);
    expect(mix.result.matches).toBeGreaterThan(0);
    expect(mix.keywordMs).toHaveLength(2);
    expect(mix.queryMs).toHaveLength(2);
  });
});

describe('bench articles', () => {
  const raw = article('a-1', {
    title: '  Chip exports\t &amp; <b>earnings</b>\n rise ',
    summary: 'Seoul  (Reuters) - Exports\u3000rose',
    categories: ['001002000', '001003000'],
    categoryNames: ['Economy', 'Trade'],
    status: 'updated',
  });

  it('hands the benches each article as the provider client reads it from the simulator wire form', () => {
    const [second] = delivered([raw, { ...raw, key: 'id:a-2', id: 'a-2', categoryNames: [], summary: '' }]).slice(1);
    expect(delivered([raw])).toEqual([
      { ...raw, title: 'Chip exports & earnings rise', summary: 'Seoul (Reuters) - Exports rose' },
    ]);
    expect(second).toEqual({
      ...raw,
      key: 'id:a-2',
      id: 'a-2',
      title: 'Chip exports & earnings rise',
      summary: '',
      categoryNames: [],
    });
  });

  it('reads every page back in order, and generates articles that are delivered already', () => {
    // Two whole pages and a part: every one is read back and cleaned.
    const many = Array.from({ length: 250 }, (_, i) => ({ ...raw, key: `id:a-${i}`, id: `a-${i}` }));
    const read = delivered(many);
    expect(read.map((article) => article.key)).toEqual(many.map((article) => article.key));
    expect(new Set(read.map((article) => article.title))).toEqual(new Set(['Chip exports & earnings rise']));
    const articles = syntheticArticles(2_000, 11);
    // The generator writes irregular whitespace; what the benches get has been through the client's mapping.
    expect(delivered(articles)).toEqual(articles);
    expect(articles.some((article) => /\s{2}|[\t\n]/.test(`${article.title} ${article.summary}`))).toBe(false);
  });

  it('refuses an article the client would skip rather than bench fewer than asked', () => {
    expect(() => delivered([{ ...raw, url: 'ftp://news.example.com/a-1' }])).toThrow(/would skip/);
  });
});

describe('bench cold-start target', () => {
  const times = (name: string, medianMs: number) => ({
    bundle: { name, file: `${name}.mjs`, bytes: 1000, mapBytes: 2000, composition: [] },
    samples: [],
    medianMs,
    p90Ms: medianMs,
    medianProcessMs: medianMs,
    medianCpuMs: medianMs,
  });

  /** A first-request measure: import done and first request, CPU and wall alike. */
  const firstTimes = (name: string, importMs: number, firstMs: number) => ({
    name,
    samples: [],
    medianMs: firstMs,
    medianCpuMs: firstMs,
    medianImportMs: importMs,
    medianImportCpuMs: importMs,
  });

  function missedResults(): ColdStartResults {
    const handler = {
      ...times('alert-handler', 240),
      bundle: {
        ...times('alert-handler', 240).bundle,
        composition: [
          { name: 'zod', bytes: 44 * 1024 },
          { name: 'luxon', bytes: 74 * 1024 },
          { name: 'functions/core', bytes: 80 * 1024 },
          { name: 'functions/aws', bytes: 20 * 1024 },
        ],
      },
    };
    return {
      handler,
      bare: times('bare-sdk-clients', 80),
      repetitions: 15,
      profile: [],
      attribution: [
        times('bare-sdk-clients', 70),
        times('alert-handler', 200),
        times(ATTRIBUTION_BUNDLES.zod, 100),
        times(ATTRIBUTION_BUNDLES.zodMini, 75),
        times(ATTRIBUTION_BUNDLES.luxon, 76.5),
        times(ATTRIBUTION_BUNDLES.intl, 82),
      ],
      firstRequest: {
        handler: firstTimes('alert-handler', 200, 270),
        bare: firstTimes('bare-sdk-clients', 160, 180),
        repetitions: 15,
        rules: 100,
        audiences: 20,
      },
    };
  }

  it('judges the first provider request by CPU against the bare bundle, and explains a miss with where the CPU went', () => {
    const [first, imported] = coldStartTargets(missedResults());
    expect(first?.target).toMatch(
      /^Cold start to the first provider request: import plus the first invocation, CPU time ≤ 1\.25×/,
    );
    expect(first?.met).toBe(false);
    expect(first?.measured).toMatch(/^1\.50× \(270 ms vs 180 ms, medians of 15\)/);
    expect(first?.note).toContain(
      "of the handler's 270 ms of CPU before its first request, 200 ms is the import (bare 160 ms) and 70.0 ms the first invocation (bare 20.0 ms",
    );
    expect(first?.note).toContain('validating 100 rules of 20 audiences');
    // The import alone keeps its own target (DESIGN section 9, issue 15), with the bundle's causes.
    expect(imported?.information).toBeUndefined();
    expect(imported?.target).toBe(
      'Cold start, the import alone: handler import ≤ 1.25× a bare bundle of the same three SDK clients and undici (issue 15; DESIGN section 9 asks 1.3×)',
    );
    expect(imported?.met).toBe(false);
    expect(imported?.measured).toMatch(/^3\.00× \(240 ms vs 80\.0 ms/);
    expect(imported?.note).toContain('zod (44 KiB of the bundle), luxon (74 KiB)');
    expect(imported?.note).toContain('its own code (100 KiB)');
    expect(imported?.note).toContain('zod +30.0 ms, zod/mini +5.0 ms, luxon +6.5 ms, Intl start-up +12.0 ms');
  });

  it('meets the targets at 1.25× (the first request in CPU, whatever the wall times), and says so when the run did not measure the first request', () => {
    const results = missedResults();
    const atBar = {
      ...results,
      firstRequest: {
        ...(results.firstRequest as NonNullable<ColdStartResults['firstRequest']>),
        handler: { ...firstTimes('alert-handler', 200, 225), medianMs: 900 },
      },
    };
    const [first] = coldStartTargets(atBar);
    expect(first?.met).toBe(true);
    expect(first?.note).toBeUndefined();
    const { firstRequest: _, ...withoutFirst } = results;
    const [unmeasured, imported] = coldStartTargets(withoutFirst);
    expect(unmeasured?.met).toBeUndefined();
    expect(unmeasured?.measured).toMatch(/not measured/);
    expect(imported?.met).toBe(false);
    // The import's own target is met at 1.25×, and then says nothing more.
    const [, importAtBar] = coldStartTargets({ ...withoutFirst, handler: times('alert-handler', 100) });
    expect(importAtBar?.met).toBe(true);
    expect(importAtBar?.note).toBeUndefined();
  });
});

describe('bench request recorder', () => {
  it('counts the items a batch request carries', () => {
    expect(itemsOf('BatchGetItemCommand', { RequestItems: { t: { Keys: [{}, {}, {}] } } })).toBe(3);
    expect(itemsOf('BatchWriteItemCommand', { RequestItems: { t: [{}, {}], u: [{}] } })).toBe(3);
    expect(itemsOf('PublishBatchCommand', { PublishBatchRequestEntries: [{}, {}] })).toBe(2);
    expect(itemsOf('GetItemCommand', {})).toBe(1);
  });

  it('measures PublishBatch messages in UTF-8 bytes', () => {
    expect(
      messageBytesOf('PublishBatchCommand', { PublishBatchRequestEntries: [{ Message: 'é', Subject: 'ab' }] }),
    ).toBe(4);
    expect(messageBytesOf('BatchGetItemCommand', {})).toBe(0);
  });
});

describe('bench cold start', () => {
  it('bundles with the options NodejsFunction derives from the stack bundling', () => {
    const options = esbuildOptionsFor(FUNCTION_BUNDLING);
    expect(options).toMatchObject({
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: 'node22',
      minify: true,
      keepNames: true,
      sourcemap: true,
      sourcesContent: false,
      mainFields: ['module', 'main'],
      banner: { js: ESM_REQUIRE_BANNER },
      external: [],
    });
    expect(esbuildOptionsFor({ ...FUNCTION_BUNDLING, bundleAwsSDK: false }).external).toEqual(['@aws-sdk/*']);
  });
});

describe('bench memory', () => {
  it('sizes the heap as Lambda does for the function memory', () => {
    expect(lambdaHeapFlags(512)).toEqual(['--max-semi-space-size=25', '--max-old-space-size=461']);
  });
});

describe('bench plot', () => {
  it('draws every series, the reference line and the legend as SVG', () => {
    const svg = logLogPlotSvg({
      title: 'T & <t>',
      xLabel: 'articles',
      yLabel: 'time',
      series: [
        {
          name: 'indexed',
          color: '#000',
          points: [
            [1_000, 10],
            [100_000, 900],
          ],
        },
        {
          name: 'naive',
          color: '#f00',
          dashed: true,
          points: [
            [1_000, 100],
            [100_000, 90_000],
          ],
        },
      ],
      references: [{ y: 2000, label: '2 s' }],
    });
    expect(svg.startsWith('<svg')).toBe(true);
    expect(svg).toContain('T &amp; &lt;t&gt;');
    expect(svg.match(/<path /g)).toHaveLength(2);
    expect(svg).toContain('stroke-dasharray="7 5"');
    expect(svg).toContain('>2 s</text>');
    expect(svg).toContain('>100k</text>');
  });
});

describe('bench profile summaries', () => {
  // root → run (project) → format (luxon); root → (idle)
  const profile: CpuProfile = {
    nodes: [
      { id: 1, children: [2, 4], callFrame: { functionName: '(root)', url: '', lineNumber: -1, columnNumber: -1 } },
      {
        id: 2,
        children: [3],
        callFrame: {
          functionName: 'render',
          url: 'file:///repo/functions/core/render.ts',
          lineNumber: 1,
          columnNumber: 1,
        },
      },
      {
        id: 3,
        callFrame: {
          functionName: 'toFormat',
          url: 'file:///repo/node_modules/luxon/src/datetime.js',
          lineNumber: 1,
          columnNumber: 1,
        },
      },
      { id: 4, callFrame: { functionName: '(idle)', url: '', lineNumber: -1, columnNumber: -1 } },
    ],
    samples: [3, 3, 2, 4],
    timeDeltas: [0, 1000, 1000, 1000, 1000],
    startTime: 0,
    endTime: 4000,
  };

  it('sums self time per bucket', () => {
    const summary = summarizeProfile(
      profile,
      ({ source, functionName }) => packageOf(source) ?? (functionName || source),
    );
    expect(summary).toEqual([
      { name: 'luxon', ms: 2, share: 0.5 },
      { name: 'render', ms: 1, share: 0.25 },
      { name: '(idle)', ms: 1, share: 0.25 },
    ]);
  });

  it('attributes library time to the nearest project caller', () => {
    const callers = summarizeByCaller(
      profile,
      ({ source }) => packageOf(source) === 'luxon',
      ({ source, functionName }) => (source.includes('/functions/') ? functionName : undefined),
    );
    expect(callers).toEqual([{ name: 'render', ms: 2, share: 0.5 }]);
  });
});

describe('bench scenario', () => {
  it('draws the same valid rule items for a seed, several per audience', () => {
    const audiences = scenarioAudiences(60);
    const rules = scenarioRules(audiences, 3, 7);
    expect(rules).toHaveLength(180);
    expect(scenarioRules(audiences, 3, 7)).toEqual(rules);
    expect(new Set(rules.map((rule) => rule.ruleId)).size).toBe(180);
    expect(new Set(rules.map((rule) => rule.audienceId))).toEqual(new Set(audiences.map((a) => a.item.audienceId)));
  });

  it('times the waits for provider pages and passes the pages through', async () => {
    const page = (pageNumber: number): ArticlePage => ({ pageNumber, articles: [], skipped: [], totalCount: 2 });
    const news: NewsSource = {
      async *pages() {
        await new Promise((resolve) => setTimeout(resolve, 5));
        yield page(1);
        yield page(2);
      },
    };
    const waits = { ms: 0 };
    const seen: number[] = [];
    for await (const p of timedNewsSource(news, waits).pages({ from: '2026-11-22', to: '2026-11-22' })) {
      seen.push(p.pageNumber);
    }
    expect(seen).toEqual([1, 2]);
    expect(waits.ms).toBeGreaterThan(0);
  });
});

describe('bench CLI start-up', () => {
  const metafile: BundleMetafile = {
    outputs: {
      'dist/news-alerts.js': {
        bytes: 1000,
        entryPoint: 'bin/news-alerts.ts',
        imports: [
          { path: 'dist/chunk-A.js', kind: 'import-statement' },
          { path: 'commander', kind: 'import-statement', external: true },
          { path: 'node:fs', kind: 'import-statement', external: true },
          { path: 'dist/rules-X.js', kind: 'dynamic-import' },
        ],
      },
      'dist/chunk-A.js': {
        bytes: 500,
        imports: [{ path: '@aws-sdk/client-sts/dist', kind: 'dynamic-import', external: true }],
      },
      'dist/rules-X.js': {
        bytes: 300,
        entryPoint: 'cli/rules.ts',
        imports: [
          { path: 'dist/chunk-A.js', kind: 'import-statement' },
          { path: 'dist/chunk-B.js', kind: 'import-statement' },
        ],
      },
      'dist/chunk-B.js': {
        bytes: 200,
        imports: [
          { path: '@aws-sdk/lib-dynamodb', kind: 'import-statement', external: true },
          { path: 'zod/mini', kind: 'import-statement', external: true },
        ],
      },
      'dist/news-alerts.js.map': { bytes: 9999, imports: [] },
    },
  };

  it('counts what loads before a command runs: static imports, transitively, not dynamic ones', () => {
    expect(staticLoad(metafile, ['bin/news-alerts.ts'])).toEqual({ files: 2, bytes: 1500, packages: ['commander'] });
    // A chunk shared by the entry and the group counts once.
    expect(staticLoad(metafile, ['bin/news-alerts.ts', 'cli/rules.ts'])).toEqual({
      files: 4,
      bytes: 2000,
      packages: ['@aws-sdk/lib-dynamodb', 'commander', 'zod'],
    });
  });

  const times = (name: string, medianMs: number): StartupTimes => ({
    name,
    shown: name,
    samplesMs: [medianMs],
    medianMs,
    p90Ms: medianMs * 1.2,
  });
  const results = (helpMs: number, localMs: number): CliStartupResults => ({
    repetitions: 15,
    baseline: times('node -e 0', 50),
    help: times('--help', helpMs),
    version: times('--version', helpMs - 10),
    groupHelp: times('rules --help', helpMs + 300),
    localCommand: times('--local rules list', localMs),
    entryLoad: staticLoad(metafile, ['bin/news-alerts.ts']),
    localCommandLoad: staticLoad(metafile, ['bin/news-alerts.ts', 'cli/rules.ts']),
  });

  it('meets the targets at 4× node -e 0 for --help and 6× for a local command, with no note', () => {
    const [help, local] = cliStartupTargets(results(200, 300));
    expect(help?.target).toBe('CLI start-up: news-alerts --help ≤ 4× node -e 0');
    expect(help?.met).toBe(true);
    expect(help?.measured).toBe('4.00× (200 ms vs 50.0 ms, median of 15; --version 3.80×)');
    expect(help?.note).toBeUndefined();
    expect(local?.target).toBe(
      'CLI start-up: a local command (--local rules list) ≤ 6× node -e 0 (the floor: starting Node; same run, interleaved)',
    );
    expect(local?.met).toBe(true);
    expect(local?.note).toBeUndefined();
  });

  it('explains a miss with the figures of the same run and what loads at start', () => {
    const [help, local] = cliStartupTargets(results(201, 1001));
    expect(help?.met).toBe(false);
    expect(help?.note).toContain('151 ms more than Node alone');
    expect(help?.note).toContain('2 files (1 KiB) of the bundle; packages: commander');
    expect(local?.met).toBe(false);
    expect(local?.note).toContain('the CLI up to argument parsing (--help) 201 ms');
    expect(local?.note).toContain('loading the rules group and its clients (rules --help) +300 ms');
    expect(local?.note).toContain('packages: @aws-sdk/lib-dynamodb, commander, zod');
    expect(local?.note).toContain('reading the rules from the sandbox’s moto server and printing them +500 ms');
  });

  it('times every command in fresh processes: an untimed warm-up round, then the rounds asked for', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'bench-startup-'));
    const counter = join(dir, 'runs');
    const append = `require('node:fs').appendFileSync(${JSON.stringify(counter)}, 'x')`;
    const measured = await timeStartup(
      [
        { name: 'a', shown: 'a', args: ['-e', append] },
        { name: 'b', shown: 'b', args: ['-e', append] },
      ],
      3,
      tmpdir(),
    );
    expect(measured.map((t) => [t.name, t.samplesMs.length])).toEqual([
      ['a', 3],
      ['b', 3],
    ]);
    expect(readFileSync(counter, 'utf8')).toHaveLength(8);
    rmSync(dir, { recursive: true, force: true });
    await expect(
      timeStartup([{ name: 'fails', shown: 'fails', args: ['-e', 'process.exit(3)'] }], 1, tmpdir()),
    ).rejects.toThrow(/exited with 3/);
  });
});
