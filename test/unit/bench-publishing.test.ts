/**
 * The publishing benchmark's building blocks (bench/publishing.ts, bench/sections.ts): the matches
 * it feeds (every audience gets its share, no (audience, article) twice), and the verdicts drawn
 * from its runs (a run that lost or doubled anything is never a rate; the 3× target at 4
 * publishers). Nothing here measures or asserts a time.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type PublishingResults, type PublishingRun, publishingMatches } from '../../bench/publishing.ts';
import { publishingLimits, publishingSection, publishingTargets, shardedCapacity } from '../../bench/sections.ts';

const options: PublishingResults['options'] = {
  notifications: 50_000,
  audiences: 2_000,
  publishLatencyMs: 40,
  publisherConcurrencies: [1, 4, 16],
  publisherBatchSize: 10,
  snsConcurrency: 8,
  ledgerFlushDelayMs: 100,
  seed: 1,
};

const run = (overrides: Partial<PublishingRun> & Pick<PublishingRun, 'mode' | 'perSecond'>): PublishingRun => ({
  notifications: 50_000,
  wallMs: 50_000_000 / overrides.perSecond,
  ledgerEntries: 50_000,
  snsEntries: 50_000,
  publishBatchCalls: 6_000,
  injectedMeanMs: 41,
  motoCpuMs: 10_000,
  nodeCpuMs: 10_000,
  ...overrides,
});

describe('publishingMatches', () => {
  it('gives every audience the same share and never one (audience, article) twice', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 40 }), fc.integer({ min: 1, max: 30 }), (audienceCount, perAudience) => {
        const ids = Array.from({ length: audienceCount }, (_, i) => `a${i}`);
        const matches = publishingMatches(ids, audienceCount * perAudience, 7);
        expect(matches).toHaveLength(audienceCount * perAudience);
        const pairs = new Set(matches.map((m) => `${m.audienceId}|${m.article.key}`));
        expect(pairs.size).toBe(matches.length);
        const perId = new Map<string, number>();
        for (const match of matches) perId.set(match.audienceId, (perId.get(match.audienceId) ?? 0) + 1);
        expect([...perId.values()].every((n) => n === perAudience)).toBe(true);
      }),
      { numRuns: 50 },
    );
  });
});

describe('publishing verdicts', () => {
  it('meets the target at 3× single with 4 publishers, and misses it below, naming what the publishers waited on', () => {
    const single = run({ mode: 'single', perSecond: 1_000 });
    const met: PublishingResults = {
      options,
      cores: 2,
      runs: [single, run({ mode: 'sharded', concurrency: 4, perSecond: 3_000 })],
    };
    expect(publishingTargets(met)[0]?.met).toBe(true);

    const slow = run({
      mode: 'sharded',
      concurrency: 4,
      perSecond: 2_000,
      motoCpuMs: 24_000,
      dynamoRequests: { TransactWriteItems: { count: 5_000, ms: 900_000 }, PutItem: { count: 10_000, ms: 1_800_000 } },
    });
    const [missed] = publishingTargets({ options, cores: 2, runs: [single, slow] });
    expect(missed?.met).toBe(false);
    // 24 s of moto CPU in a 25 s run, 15,000 requests at 180 ms: the note names the emulator's answers as the cause.
    expect(missed?.note).toMatch(
      /0\.30 DynamoDB requests per notification .* in 180 ms .* busy 96\.0% .*\(saturated\)/,
    );
  });

  it('never reports a rate for a run that lost or doubled notifications', () => {
    const single = run({ mode: 'single', perSecond: 1_000 });
    const doubled = run({
      mode: 'sharded',
      concurrency: 4,
      perSecond: Number.NaN,
      snsEntries: 50_010,
      invalid: 'SNS was sent 50010 entries for 50000 notifications',
    });
    const results: PublishingResults = { options, cores: 2, runs: [single, doubled] };
    const [verdict] = publishingTargets(results);
    expect(verdict).toMatchObject({ measured: 'invalid run', met: false });
    const section = publishingSection(results, 'publishing');
    expect(section.tables[0]?.rows[1]?.[2]).toBe('invalid');
    expect(section.findings?.join('\n')).toMatch(/NOT a valid figure: SNS was sent 50010 entries/);
  });

  it('judges issue 33 on every sharded run: DynamoDB requests per notification ≤ 0.1 and CPU per notification ≤ 1.3× single', () => {
    // single: 50,000 notifications, 10 s of bench CPU (0.2 ms each), 2,500 DynamoDB requests (0.05 each).
    const single = run({
      mode: 'single',
      perSecond: 1_000,
      dynamoRequests: { BatchWriteItem: { count: 2_500, ms: 1 } },
    });
    const sharded = (concurrency: number, requests: number, nodeCpuMs: number) =>
      run({
        mode: 'sharded',
        concurrency,
        perSecond: 800,
        nodeCpuMs,
        dynamoRequests: { TransactWriteItems: { count: requests, ms: 1 } },
      });
    const rows = (runs: PublishingRun[]) => {
      const all = publishingTargets({ options, cores: 2, runs: [single, ...runs] });
      const requests = all.find((t) => t.target.includes('DynamoDB requests per notification'));
      const cpu = all.find((t) => t.target.includes('CPU per notification'));
      return { requests, cpu };
    };
    // 5,000 requests = 0.1 per notification and 13 s of CPU = 1.3× at both counts: met exactly at the bar.
    const atBar = rows([sharded(1, 5_000, 13_000), sharded(4, 5_000, 13_000)]);
    expect(atBar.requests).toMatchObject({ met: true });
    expect(atBar.requests?.measured).toBe('0.100 at 1 publisher, 0.100 at 4 publishers (single: 0.050)');
    expect(atBar.cpu).toMatchObject({ met: true });
    expect(atBar.cpu?.measured).toMatch(
      /^1\.30× at 1 publisher, 1\.30× at 4 publishers; for information: 0\.26 ms, 0\.26 ms per notification against 0\.20 ms/,
    );
    // One publisher count over either bar misses the row, whatever the others measured.
    const over = rows([sharded(1, 5_000, 13_000), sharded(4, 5_050, 13_100)]);
    expect(over.requests).toMatchObject({ met: false });
    expect(over.requests?.note).toMatch(/TransactWriteItems 5,050/);
    expect(over.cpu).toMatchObject({ met: false });
    // A run that lost or doubled anything measures neither.
    const lost = rows([{ ...sharded(4, 100, 100), invalid: 'the ledger holds 49,990 entries' }]);
    expect(lost.requests).toMatchObject({ measured: 'invalid run', met: false });
    expect(lost.cpu).toMatchObject({ measured: 'invalid run', met: false });
    // Without a sharded run nothing is claimed.
    expect(rows([]).requests?.met).toBeUndefined();
  });

  it('derives how many notifications one run publishes in its time budget from the single rate', () => {
    const results: PublishingResults = {
      options,
      cores: 2,
      runs: [run({ mode: 'single', perSecond: 1_234 }), run({ mode: 'sharded', concurrency: 4, perSecond: 4_000 })],
    };
    // 1,234/s × (300 s − 30 s) = 333,180, rounded down to the thousand.
    expect(publishingLimits(results, { lambdaTimeoutSeconds: 300, softMarginSeconds: 30 })).toContain(
      'about 333,000 notifications in the 270 s',
    );
  });

  it('says how many cores the target needs at the measured CPU per notification, against the cores the machine has', () => {
    // single: 1,000/s; sharded at 4: 50,000 notifications with 40 s of bench CPU and 60 s of moto CPU = 2 ms each.
    const single = run({ mode: 'single', perSecond: 1_000, nodeCpuMs: 30_000, motoCpuMs: 20_000 });
    const sharded = run({ mode: 'sharded', concurrency: 4, perSecond: 800, nodeCpuMs: 40_000, motoCpuMs: 60_000 });
    const results: PublishingResults = { options, cores: 2, runs: [single, sharded] };
    const capacity = shardedCapacity(results);
    // 3 × 1,000/s × 2 ms = 6 cores; the bench process alone 3 × 1,000 × 0.8 ms = 2.4; single used 50 s in 50 s.
    expect(capacity?.needed).toBeCloseTo(6, 6);
    expect(capacity?.benchOnly).toBeCloseTo(2.4, 6);
    expect(capacity?.singleUsed).toBeCloseTo(1, 6);
    expect(publishingSection(results, 'publishing').findings?.join('\n')).toMatch(
      /needs 6\.0 cores \(2\.4 for the bench process alone.*this machine has 2\..*cannot be shown on this machine/,
    );
    expect(publishingTargets(results)[0]?.note).toMatch(
      /needs 6\.0 cores \(2\.4 without the emulator\); this machine has 2\./,
    );
    // Without moto's CPU time (unreadable /proc) nothing is claimed.
    expect(shardedCapacity({ ...results, runs: [single, { ...sharded, motoCpuMs: undefined }] })).toBeUndefined();
  });
});
