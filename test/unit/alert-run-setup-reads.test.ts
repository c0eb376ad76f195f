/**
 * What the run reads before its first provider request (issue 33, cold start up to the first
 * request): the API key, the rules and audiences, the watermark and the reading state are read at
 * the same time under the lease, so the first page waits for the slowest of them, not their sum.
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { runAlertCycle } from '#core/alert-run';
import { buildRuleSet } from '#core/model';
import type { NewsSource, RuleSource } from '#core/ports';
import {
  article,
  MemoryNewsSource,
  MemoryNotifier,
  MemoryStateStore,
  memoryLog,
  memoryRunSettings,
} from '#test/fake-ports';

const now = Date.UTC(2026, 10, 22, 12, 0);

const ruleSet = buildRuleSet(
  [{ ruleId: 'rates', audienceId: 'desk', keywords: ['interest rate'] }],
  [{ audienceId: 'desk', topicArn: 'arn:aws:sns:us-east-1:123456789012:desk' }],
);

/** Ports that note when each setup read starts; the rule source looks once the others had a turn. */
function recordingPorts() {
  const started: string[] = [];
  const seenByRules: string[][] = [];
  const state = new MemoryStateStore();
  const readWatermark = state.readWatermark.bind(state);
  const readReadingState = state.readReadingState.bind(state);
  state.readWatermark = async () => {
    started.push('watermark');
    return await readWatermark();
  };
  state.readReadingState = async () => {
    started.push('reading state');
    return await readReadingState();
  };
  const rules: RuleSource = {
    async load() {
      started.push('rules');
      // One turn of the event loop: reads started alongside this one have started by now; reads
      // started after it answers have not.
      await nextTurn();
      seenByRules.push([...started]);
      return ruleSet;
    },
  };
  const memory = new MemoryNewsSource(new Map([['2026-11-22', [article('a1', { publishedAt: now - 60_000 })]]]));
  const news: NewsSource = {
    prepare() {
      started.push('api key');
    },
    pages(range, options) {
      started.push('first page');
      return memory.pages(range, options);
    },
  };
  return { started, seenByRules, state, rules, news };
}

describe('the reads before the first provider request', () => {
  it('starts the API key, the rules, the watermark and the reading state together, and reads pages after them', async () => {
    const { started, seenByRules, state, rules, news } = recordingPorts();
    const notifier = new MemoryNotifier();
    const summary = await runAlertCycle(
      { news, rules, state, notifier, log: memoryLog(), now: () => now },
      memoryRunSettings(),
      { runId: 'run-1', remainingTimeMs: () => 10 * 60_000 },
    );

    expect(summary.status).toBe('completed');
    expect(notifier.published).toHaveLength(1);
    // While the rules were being read, every other setup read was already under way.
    expect(seenByRules).toEqual([['api key', 'rules', 'watermark', 'reading state']]);
    expect(started.indexOf('first page')).toBeGreaterThan(started.indexOf('reading state'));
  });

  it('reads the same watermark and reading state it read one after the other: a second run continues the first', async () => {
    const { state, rules, news } = recordingPorts();
    const notifier = new MemoryNotifier();
    const deps = { news, rules, state, notifier, log: memoryLog(), now: () => now };
    const first = await runAlertCycle(deps, memoryRunSettings(), { runId: 'run-1', remainingTimeMs: () => 600_000 });
    const second = await runAlertCycle(deps, memoryRunSettings(), { runId: 'run-2', remainingTimeMs: () => 600_000 });

    expect(second.watermarkBefore).toBe(first.watermarkAfter);
    expect(notifier.published).toHaveLength(1);
  });
});
