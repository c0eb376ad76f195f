/**
 * What the run reads before its first provider request (issue 33, cold start up to the first
 * request): the API key, the rules and audiences, the watermark and the reading state are read at
 * the same time under the lease, so the first page waits for the slowest of them, not their sum.
 * The rules are compiled once that request is under way: nothing needs them before its page.
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { runAlertCycle } from '#core/alert-run';
import type { Rule, RuleSet } from '#core/model';
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
function recordingPorts(rulesToLoad: RuleSet = ruleSet) {
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
      return rulesToLoad;
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

  /**
   * The rule set with its rule's keywords read through `onCompile` (compiling the rules is what
   * reads them; nothing else before the first page does).
   */
  const compileNoted = (onCompile: () => void): RuleSet => {
    const [rule] = ruleSet.rules as [Rule];
    const noted = new Proxy(rule, {
      get(target, property, receiver) {
        if (property === 'keywords') onCompile();
        return Reflect.get(target, property, receiver);
      },
    });
    return { ...ruleSet, rules: [noted] };
  };

  it('compiles the rules after the first page is asked for, and still matches with them', async () => {
    const started: string[] = [];
    const ports = recordingPorts(compileNoted(() => started.push('compile')));
    const news: NewsSource = {
      pages(range, options) {
        started.push('first page');
        return ports.news.pages(range, options);
      },
    };
    const notifier = new MemoryNotifier();
    const summary = await runAlertCycle(
      { ...ports, news, notifier, log: memoryLog(), now: () => now },
      memoryRunSettings(),
      { runId: 'run-1', remainingTimeMs: () => 600_000 },
    );

    expect(summary.status).toBe('completed');
    expect(notifier.published.map((message) => message.key.articleKey)).toHaveLength(1);
    expect(started[0]).toBe('first page');
    expect(started).toContain('compile');
  });

  /**
   * A source that says when its request is sent (as the provider client does when undici writes
   * it) and answers a turn of the event loop later, as a provider over the network does.
   */
  const networkLike = (inner: NewsSource, events: string[]): NewsSource => {
    let sent: () => void = () => undefined;
    const wasSent = new Promise<void>((resolve) => (sent = resolve));
    return {
      requestSent: (signal) =>
        Promise.race([
          wasSent,
          new Promise<never>((_, reject) => signal.addEventListener('abort', () => reject(signal.reason))),
        ]),
      async *pages(range, options) {
        events.push('request sent');
        sent();
        await nextTurn();
        events.push('page back');
        yield* inner.pages(range, options);
      },
    };
  };

  it('compiles the rules while the first page is on its way, when the source says it was sent', async () => {
    const events: string[] = [];
    const ports = recordingPorts(compileNoted(() => events.push('compile')));
    const notifier = new MemoryNotifier();
    const summary = await runAlertCycle(
      { ...ports, news: networkLike(ports.news, events), notifier, log: memoryLog(), now: () => now },
      memoryRunSettings(),
      { runId: 'run-1', remainingTimeMs: () => 600_000 },
    );

    expect(summary.status).toBe('completed');
    expect(notifier.published).toHaveLength(1);
    expect(events.slice(0, 3)).toEqual(['request sent', 'compile', 'page back']);
  });

  it('fails the run with the error of rules that cannot be compiled, where the run reports it', async () => {
    const ports = recordingPorts(
      compileNoted(() => {
        throw new Error('the rules cannot be compiled');
      }),
    );
    const notifier = new MemoryNotifier();
    // The compile tried while the page is on its way fails too: not as an unhandled rejection.
    await expect(
      runAlertCycle(
        { ...ports, news: networkLike(ports.news, []), notifier, log: memoryLog(), now: () => now },
        memoryRunSettings(),
        { runId: 'run-1', remainingTimeMs: () => 600_000 },
      ),
    ).rejects.toThrow('the rules cannot be compiled');
    expect(notifier.published).toEqual([]);
  });

  it('fails the run with rules that cannot be compiled even when no article reached the matcher', async () => {
    const ports = recordingPorts(
      compileNoted(() => {
        throw new Error('the rules cannot be compiled');
      }),
    );
    const empty = new MemoryNewsSource(new Map());
    const state = ports.state;
    await expect(
      runAlertCycle(
        { ...ports, news: empty, notifier: new MemoryNotifier(), log: memoryLog(), now: () => now },
        memoryRunSettings(),
        { runId: 'run-1', remainingTimeMs: () => 600_000 },
      ),
    ).rejects.toThrow('the rules cannot be compiled');
    // The watermark did not move past news the rules never saw.
    expect(await state.readWatermark()).toBeUndefined();
  });
});
