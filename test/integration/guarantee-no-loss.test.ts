/**
 * DESIGN section 3, "No alert is lost": the provider fails in every way the simulator can, and
 * each test checks that the watermark never moved past undelivered work and that, once the
 * world recovers, every audience has received exactly what its rules match.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ProviderError, ProviderResponseError } from '#core/errors';
import { firstWindowStart, startTestStack, type TestStack, testEpoch } from '#test/run-harness';

const exact = { missing: [], unexpected: [], duplicates: [] };

describe('no alert is lost when the provider misbehaves', () => {
  let stack: TestStack | undefined;
  afterEach(async () => {
    await stack?.stop();
    stack = undefined;
  });

  it('a 5xx storm fails the run without moving the watermark; the next run delivers the rest, nothing twice', async () => {
    stack = await startTestStack();
    const simulator = stack.simulator!;
    simulator.faults.inject({ kind: 'status', status: 503, times: 50, page: 3 });

    const failure = await stack.run().catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(ProviderError);
    expect((failure as ProviderError).retryable).toBe(true);
    expect(await stack.dependencies.state.readWatermark()).toBeUndefined();
    // Matches from the pages read before the storm were still delivered.
    expect((await stack.deliveredSoFar()).length).toBeGreaterThan(0);

    simulator.faults.clear();
    const summary = await stack.run();
    expect(summary.status).toBe('completed');
    expect(summary.notificationsAlreadyDelivered).toBeGreaterThan(0);
    expect(await stack.verifyExactlyOnce(firstWindowStart(stack))).toEqual(exact);
    expect((await stack.dependencies.state.readWatermark())?.at).toBe(testEpoch);
  });

  it('rides out 429 storms with and without Retry-After', async () => {
    stack = await startTestStack();
    const simulator = stack.simulator!;
    // Four in a row on one request: one short of NEWS_API_MAX_ATTEMPTS (5).
    simulator.faults.inject({ kind: 'status', status: 429, retryAfter: '0', times: 2 });
    simulator.faults.inject({ kind: 'status', status: 429, times: 2 });

    const summary = await stack.run();
    expect(summary.status).toBe('completed');
    expect(simulator.requests.filter((request) => request.status === 429)).toHaveLength(4);
    expect(await stack.verifyExactlyOnce(firstWindowStart(stack))).toEqual(exact);
  });

  it('retries a provider that answers too slowly (read timeout) and still delivers everything once', async () => {
    stack = await startTestStack({ environment: { NEWS_API_READ_TIMEOUT_MS: '250' } });
    stack.simulator!.faults.inject({ kind: 'delay', ms: 1500, times: 2 });

    const summary = await stack.run();
    expect(summary.status).toBe('completed');
    expect(
      stack.log.lines.filter((line) => line.includes('"WARN"') && /timeout|timed out/i.test(line)),
    ).not.toHaveLength(0);
    expect(await stack.verifyExactlyOnce(firstWindowStart(stack))).toEqual(exact);
  });

  it('retries malformed pages; a provider that keeps sending them fails the run and moves nothing', async () => {
    stack = await startTestStack();
    const simulator = stack.simulator!;
    simulator.faults.inject({ kind: 'malformed', times: 50, page: 1 });
    await expect(stack.run()).rejects.toBeInstanceOf(ProviderError);
    expect(await stack.dependencies.state.readWatermark()).toBeUndefined();
    expect(await stack.deliveredSoFar()).toEqual([]);

    simulator.faults.clear();
    simulator.faults.inject({ kind: 'malformed', times: 2 });
    expect((await stack.run()).status).toBe('completed');
    expect(await stack.verifyExactlyOnce(firstWindowStart(stack))).toEqual(exact);
  });

  it('never takes an error body on HTTP 200 for an empty result', async () => {
    stack = await startTestStack();
    const simulator = stack.simulator!;
    simulator.faults.inject({ kind: 'error-body', times: 50, page: 1 });
    await expect(stack.run()).rejects.toBeInstanceOf(ProviderError);
    // Had the run read "no articles", it would have moved the watermark past a whole day.
    expect(await stack.dependencies.state.readWatermark()).toBeUndefined();

    simulator.faults.clear();
    expect((await stack.run()).status).toBe('completed');
    expect(await stack.verifyExactlyOnce(firstWindowStart(stack))).toEqual(exact);
  });

  it('fails with the missing field named when the response does not fit the mapping, and moves nothing', async () => {
    stack = await startTestStack({ environment: { NEWS_API_RESPONSE_MAPPING: '{"articles":["data.items"]}' } });
    const failure = await stack.run().catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(ProviderResponseError);
    expect((failure as Error).message).toContain('data.items');
    expect((failure as Error).message).not.toContain(stack.simulator!.liveKey);
    expect(await stack.dependencies.state.readWatermark()).toBeUndefined();
  });

  it('delivers articles published while pages are being read (pages shift), each exactly once', async () => {
    // A sweep that reads its pages concurrently: without counted reading (with it, a sweep reads
    // in order, so that what it reads can be counted, and nothing can shift between its pages).
    stack = await startTestStack({ environment: { LATE_RECHECK_MINUTES: '0' } });
    // Articles arrive in front while pages 2.. are fetched concurrently, so pages fetched before
    // and after the arrival disagree: the client must notice and read the day again in order.
    stack.simulator!.faults.inject({ kind: 'shift', insert: 4, page: 2, times: 1 });

    const summary = await stack.run();
    expect(summary.status).toBe('completed');
    expect(stack.log.lines.some((line) => line.includes('reading it again in order'))).toBe(true);
    expect(await stack.verifyExactlyOnce(firstWindowStart(stack))).toEqual(exact);
  });

  it('articles that keep arriving on today while it is read are delivered by the next run, once', async () => {
    // A window of today only (09:00 in Seoul, starting 07:00). Every run reads every page, so each
    // meets a shift on page 2 (incremental runs are in guarantee-incremental.test.ts).
    stack = await startTestStack({ environment: { INITIAL_LOOKBACK_MINUTES: '60', FULL_SWEEP_MINUTES: '0' } });
    stack.simulator!.faults.inject({ kind: 'shift', insert: 3, page: 2, times: 3 });

    // Each run misses what arrives in front of pages it already read; the run after it reads them.
    for (const minutes of [0, 5, 10]) {
      stack.setTime(testEpoch + minutes * 60_000);
      expect((await stack.run()).status).toBe('completed');
    }
    expect(stack.simulator!.faults.pending()).toEqual([]);
    stack.setTime(testEpoch + 15 * 60_000);
    expect((await stack.run()).status).toBe('completed');
    expect(await stack.verifyExactlyOnce(firstWindowStart(stack))).toEqual(exact);
  });

  it.each(['a sweep', 'incremental runs'])(
    'a provider that refuses pages past the end (HTTP 400): a day that fills its last page exactly does not stop the runs (%s)',
    async (how) => {
      // The window's first provider day (yesterday in Seoul) holds exactly 20 full pages of 10.
      stack = await startTestStack({
        simulator: { seed: 3, articles: [], pastEndPages: 'refuse' },
        ...(how === 'a sweep' ? { environment: { FULL_SWEEP_MINUTES: '0' } } : {}),
      });
      const simulator = stack.simulator!;
      simulator.publish(
        ...Array.from({ length: 200 }, (_, i) => ({
          title: `Central bank holds the interest rate (${i})`,
          categories: ['002001000'],
          media: 'M001',
          publishedAt: testEpoch - 10 * 60 * 60_000 - i * 60_000,
        })),
      );
      for (const minutes of [0, 5, 10]) {
        const at = testEpoch + minutes * 60_000;
        stack.setTime(at);
        simulator.publish({
          title: `Earthquake felt along the coast (${minutes})`,
          categories: ['003002000'],
          media: 'M004',
          publishedAt: at - 60_000,
        });
        const summary = await stack.run();
        expect(summary.status, summary.reason).toBe('completed');
        expect((await stack.dependencies.state.readWatermark())?.at).toBe(at);
      }
      // The provider was asked for a page past the end, and refused it.
      expect(simulator.requests.some((request) => request.status === 400)).toBe(true);
      expect(await stack.verifyExactlyOnce(firstWindowStart(stack))).toEqual(exact);
    },
  );

  it('delivers an article repeated across pages once', async () => {
    stack = await startTestStack();
    stack.simulator!.faults.inject({ kind: 'duplicate', times: 5 });
    expect((await stack.run()).status).toBe('completed');
    expect(await stack.verifyExactlyOnce(firstWindowStart(stack))).toEqual(exact);
  });

  it('delivers a late article within the late-arrival window once, and leaves old news alone', async () => {
    stack = await startTestStack();
    await stack.run();
    const watermark = await stack.dependencies.state.readWatermark();
    expect(watermark?.at).toBe(testEpoch);

    stack.setTime(testEpoch + 5 * 60_000);
    const [late, tooLate] = stack.simulator!.publish(
      {
        title: 'Earthquake felt in the capital region, indexed late',
        categories: ['003002000'],
        media: 'M004',
        publishedAt: testEpoch - 10 * 60_000,
      },
      {
        title: 'Earthquake report from three hours ago, indexed very late',
        categories: ['003002000'],
        media: 'M004',
        publishedAt: testEpoch - 3 * 60 * 60_000,
      },
    );
    const before = (await stack.deliveredSoFar()).length;
    const summary = await stack.run();
    const fresh = (await stack.deliveredSoFar()).slice(before);

    expect(fresh).toEqual([`quake-oncall|id:${late?.articleId}`]);
    expect(fresh).not.toContain(`quake-oncall|id:${tooLate?.articleId}`);
    expect(summary.lateDeliveries).toBe(1);
  });
});
