/**
 * `npm start` passes at every hour of the day (issue 29): the quick start's cycles and check
 * (sandbox/quick-start.ts, what scripts/start.ts runs) on the embedded defaults with the clock
 * pinned to every hour of a day and to every other minute around the provider's midnight (15:00–
 * 15:10 UTC for Asia/Seoul), in this process. The AWS side is in memory
 * (test/support/memory-quick-stack.ts: the same alert run, configuration and provider client over
 * HTTPS against the simulator): thirty quick starts on moto would take minutes, and
 * test/e2e/npm-start.test.ts runs it there. A failure names the hour, the audience and the
 * articles. Articles listed late whose recheck falls after the last cycle are allowed, by name, as
 * the printed summary reports them ("not due yet").
 */
import { describe, expect, inject, it } from 'vitest';
import { simulatorInitialLookbackMinutes } from '../../cli/sandbox-descriptor.ts';
import { exampleAudiences, exampleRules, exampleSimulator } from '../../sandbox/examples.ts';
import { describeCheckProblems, type QuickStartStack, runQuickStart } from '../../sandbox/quick-start.ts';
import { startMemoryQuickStack } from '../support/memory-quick-stack.ts';

const minute = 60_000;
const day = Date.parse('2026-11-28T00:00:00Z');
/** Every hour of the day, and every other minute of the ten after the provider's midnight. */
const instants = [
  ...Array.from({ length: 24 }, (_, hour) => day + hour * 60 * minute),
  ...Array.from({ length: 5 }, (_, i) => day + 15 * 60 * minute + (2 * i + 1) * minute),
].map((at) => at + 42_415);

/**
 * The example audiences as they are, without their extra subscribers (email, SMS, Slack): what
 * each audience received is read from its audit queue either way, and subscribing them is most of
 * a quick start's set-up time.
 */
const audiences = exampleAudiences.map((audience) => ({ item: audience.item, subscribers: [] }));

async function quickStartAt(at: number, before?: (stack: QuickStartStack) => void): Promise<string[]> {
  let clock = at;
  const stack = await startMemoryQuickStack({
    ca: inject('sandboxCa'),
    now: () => clock,
    environment: { INITIAL_LOOKBACK_MINUTES: String(simulatorInitialLookbackMinutes) },
    audiences,
    rules: exampleRules,
    simulator: { seed: 7, ...exampleSimulator },
  });
  try {
    before?.(stack);
    const outcome = await runQuickStart({
      stack,
      audiences,
      ruleItems: exampleRules,
      cycles: 3,
      clock: {
        now: () => clock,
        pinned: true,
        next: async () => {
          clock += 5 * minute;
        },
      },
    });
    const problems: string[] = [];
    for (const report of outcome.cycles) {
      if (report.failure) problems.push(`cycle ${report.cycle} failed: ${report.failure}`);
    }
    for (const [audienceId, check] of outcome.checks) {
      for (const line of describeCheckProblems(check, 20)) problems.push(`${audienceId}: ${line}`);
    }
    for (const [audienceId, list] of outcome.updateProblems) problems.push(`${audienceId}: ${list.join('; ')}`);
    expect(outcome.ok).toBe(problems.length === 0);
    return problems;
  } finally {
    await stack.stop();
  }
}

describe('npm start at every hour of the day', () => {
  it.each(instants.map((at) => [new Date(at).toISOString(), at]))(
    'at %s: delivers what is due and nothing twice',
    async (_when, at) => {
      expect(await quickStartAt(at as number)).toEqual([]);
    },
  );
});

describe('npm start checks against what the runs read', () => {
  it('an article dated later today (an embargo) is read and delivered, and the check expects it', async () => {
    const at = Date.parse('2026-11-28T01:00:00Z');
    expect(
      await quickStartAt(at, (stack) => {
        stack.simulator?.publish({
          title: 'Magnitude 5.2 earthquake expected in the drill scenario published tonight',
          categories: ['003002000'],
          media: 'M004',
          publishedAt: at + 6 * 60 * minute,
        });
      }),
    ).toEqual([]);
  });
});
