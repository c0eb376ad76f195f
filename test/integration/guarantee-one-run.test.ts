/**
 * DESIGN section 3, "One run at a time" and "Stay inside the Lambda time limit": concurrent runs,
 * a stuck run, a run whose lease is taken over, and a run that reaches its time budget.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { RunSummary } from '#core/alert-run';
import { LeaseLostError } from '#core/errors';
import { firstWindowStart, startTestStack, stateWith, type TestStack, testEpoch } from '#test/run-harness';

const exact = { missing: [], unexpected: [], duplicates: [] };

describe('one run at a time', () => {
  let stack: TestStack | undefined;
  afterEach(async () => {
    await stack?.stop();
    stack = undefined;
  });

  it('two runs started together: one works, the other skips, nothing is sent twice', async () => {
    stack = await startTestStack();
    const results = await Promise.all([stack.run({ runId: 'run-a' }), stack.run({ runId: 'run-b' })]);
    expect(results.map((summary) => summary.status).sort()).toEqual(['completed', 'skipped']);
    expect(await stack.verifyExactlyOnce(firstWindowStart(stack))).toEqual(exact);
  });

  it('a stuck run cannot block forever: its lease is taken over once it expires', async () => {
    stack = await startTestStack();
    const { state } = stack.dependencies;
    await state.acquireLease('stuck-run', 60_000, stack.time());

    const blocked = await stack.run();
    expect(blocked.status).toBe('skipped');
    expect(blocked.reason).toContain('stuck-run');
    expect(await stack.deliveredSoFar()).toEqual([]);

    stack.setTime(testEpoch + 61_000);
    expect((await stack.run()).status).toBe('completed');
    expect(await stack.verifyExactlyOnce(firstWindowStart(stack), testEpoch)).toEqual(exact);
  });

  it('a run whose lease was taken over cannot move the watermark past the run that took it', async () => {
    stack = await startTestStack();
    const local = stack;
    const real = local.dependencies.state;
    let takeover: RunSummary | undefined;
    const slowRun = stateWith(real, {
      advanceWatermark: async (lease, expected, at, now) => {
        if (!takeover) {
          // Run A stalls past its lease; run B takes over and finishes the window.
          local.setTime(local.time() + local.config.run.leaseDurationMs + 1000);
          takeover = await local.run({ runId: 'run-b' });
        }
        return await real.advanceWatermark(lease, expected, at, now);
      },
    });

    await expect(local.run({ runId: 'run-a', dependencies: { state: slowRun } })).rejects.toBeInstanceOf(
      LeaseLostError,
    );
    expect(takeover?.status).toBe('completed');
    const watermark = await real.readWatermark();
    expect(watermark?.runId).toBe('run-b');
    expect(await local.verifyExactlyOnce(firstWindowStart(local), testEpoch)).toEqual(exact);
  });
});

describe('stay inside the time limit', () => {
  let stack: TestStack | undefined;
  afterEach(async () => {
    await stack?.stop();
    stack = undefined;
  });

  it('a run that reaches its time budget checkpoints cleanly; the next run finishes the job', async () => {
    stack = await startTestStack({ environment: { SOFT_MARGIN_SECONDS: '2', HARD_MARGIN_SECONDS: '1' } });
    const simulator = stack.simulator!;
    simulator.faults.inject({ kind: 'delay', ms: 300, times: 1000 });

    // 2.6 s left: fetching must stop after about 0.6 s, well before the provider is done.
    const started = Date.now();
    const first = await stack.run({ remainingTimeMs: () => 2600 - (Date.now() - started) });
    expect(first.status).toBe('checkpointed');
    expect(first.reason).toMatch(/time budget/);
    expect(await stack.dependencies.state.readWatermark()).toBeUndefined();
    const partial = await stack.verifyExactlyOnce(firstWindowStart(stack));
    expect(partial.duplicates).toEqual([]);
    expect(partial.unexpected).toEqual([]);
    expect(partial.missing.length).toBeGreaterThan(0);

    simulator.faults.clear();
    const second = await stack.run();
    expect(second.status).toBe('completed');
    expect(await stack.verifyExactlyOnce(firstWindowStart(stack))).toEqual(exact);
  });
});
