/**
 * DESIGN section 3, "Poison data never stops all alerting" (issue 10, item 5d), with the real
 * run against the simulator and moto: a page on which every item is malformed is parked (logged,
 * listed in the run record, counted for the `pages-parked` alarm) and the run completes and moves
 * on, on every run while the provider keeps serving it; once the data is fixed, re-reading the
 * day delivers what the page held, exactly once. A mapping that reads nothing anywhere still fails.
 */
import type { Metrics } from '@aws-lambda-powertools/metrics';
import { afterEach, describe, expect, it } from 'vitest';
import { addRunMetrics, metricNames } from '#alert-run/metrics';
import { ProviderResponseError } from '#core/errors';
import { firstWindowStart, startTestStack, type TestStack, testEpoch } from '#test/run-harness';

describe('a poison page', () => {
  let stack: TestStack | undefined;
  afterEach(async () => {
    await stack?.stop();
    stack = undefined;
  });

  it('is parked with a metric on every run while served, never blocks the rest, and is delivered once re-read', async () => {
    // Every run reads every page, so each meets the poison page again (incremental runs stop before it).
    stack = await startTestStack({ environment: { FULL_SWEEP_MINUTES: '0' } });
    const simulator = stack.simulator!;
    simulator.faults.inject({ kind: 'poison', page: 2, times: 1000 });

    const first = await stack.run();
    expect(first.status).toBe('completed');
    expect(first.pagesParked).toBeGreaterThan(0);
    expect(first.parkedPages[0]).toMatchObject({ page: 2, items: 10 });
    expect(first.parkedPages[0]?.reason).toContain('title missing');
    expect((await stack.dependencies.state.readWatermark())?.at).toBe(testEpoch);
    expect(stack.log.lines.some((line) => line.includes('parked a provider page'))).toBe(true);
    const check = await stack.verifyExactlyOnce(firstWindowStart(stack));
    expect(check.unexpected).toEqual([]);
    expect(check.duplicates).toEqual([]);
    // Everything but the poison page was delivered.
    expect((await stack.deliveredSoFar()).length).toBeGreaterThan(0);

    const published: Record<string, number> = {};
    const metrics = {
      addMetric: (name: string, _unit: string, value: number) => {
        published[name] = value;
      },
    } as unknown as Metrics;
    addRunMetrics(metrics, first, testEpoch);
    expect(published[metricNames.pagesParked]).toBe(first.pagesParked);
    expect(published[metricNames.runSucceeded]).toBe(1);

    // The provider keeps serving it: the next run is not stuck on it either.
    stack.setTime(testEpoch + 5 * 60_000);
    const second = await stack.run();
    expect(second.status).toBe('completed');
    expect(second.pagesParked).toBeGreaterThan(0);

    // Replay: once the data is fixed, re-reading the window delivers the parked page's matches.
    simulator.faults.clear();
    const watermark = await stack.dependencies.state.readWatermark();
    await stack.dependencies.state.setWatermark(testEpoch - 24 * 60 * 60_000, 'replay', stack.time(), watermark);
    const replay = await stack.run();
    expect(replay.status).toBe('completed');
    expect(replay.pagesParked).toBe(0);
    expect(await stack.verifyExactlyOnce(firstWindowStart(stack))).toEqual({
      missing: [],
      unexpected: [],
      duplicates: [],
    });
  });

  it('a mapping that reads no item on any page still fails the run loudly and moves nothing', async () => {
    stack = await startTestStack({ environment: { NEWS_API_RESPONSE_MAPPING: '{"title":["headline_text"]}' } });
    const failure = await stack.run().catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(ProviderResponseError);
    expect((failure as Error).message).toContain('the response mapping does not fit this provider');
    expect((failure as Error).message).toContain('headline_text');
    expect(await stack.dependencies.state.readWatermark()).toBeUndefined();
  });
});
