/**
 * No single page holds a run past its deadline (issue 30, item 1): a page of long crafted articles
 * matched against a NEAR rule is bounded per article (functions/core/query.ts), and the run asks
 * for the time left between articles, not only between pages. In-memory ports; the platform's
 * remaining time is a countdown the test controls, so nothing here depends on the machine's speed.
 */
import { describe, expect, it } from 'vitest';
import { runAlertCycle } from '#core/alert-run';
import { buildRuleSet } from '#core/model';
import {
  article,
  MemoryNewsSource,
  MemoryNotifier,
  MemoryStateStore,
  memoryLog,
  memoryRules,
  memoryRunSettings,
} from '#test/fake-ports';

const now = Date.UTC(2026, 10, 22, 12, 0);
const settings = memoryRunSettings();

const ruleSet = buildRuleSet(
  [
    { ruleId: 'zz-near', audienceId: 'chips', query: '半 NEAR/50 体' },
    { ruleId: 'rates', audienceId: 'desk', keywords: ['interest rate'] },
  ],
  [
    { audienceId: 'chips', topicArn: 'arn:aws:sns:us-east-1:123456789012:chips' },
    { audienceId: 'desk', topicArn: 'arn:aws:sns:us-east-1:123456789012:desk' },
  ],
);

/** The crafted page of the issue: 100 titles of '半'*470 + '。'*60 + '体'*470, summaries twice that. */
const crafted = Array.from({ length: 100 }, (_, i) => {
  const title = `${'半'.repeat(470)}${'。'.repeat(60)}${'体'.repeat(470)}`;
  return article(`crafted-${String(i).padStart(3, '0')}`, {
    title,
    summary: `${'半'.repeat(940)}${'。'.repeat(120)}${'体'.repeat(940)}`,
    publishedAt: now - 60_000 - i * 1000,
  });
});
const ordinary = article('rates-1', { title: 'Central bank holds the interest rate', publishedAt: now - 200_000 });
const day = new Map([['2026-11-22', [...crafted, ordinary]]]);

describe('a page of crafted articles and a NEAR rule', () => {
  it('completes inside its deadline with every alert delivered, the NEAR rule matching none of them', async () => {
    const state = new MemoryStateStore();
    const notifier = new MemoryNotifier();
    const summary = await runAlertCycle(
      {
        news: new MemoryNewsSource(day),
        rules: memoryRules(ruleSet),
        state,
        notifier,
        log: memoryLog(),
        now: () => now,
      },
      settings,
      { runId: 'run-1', remainingTimeMs: () => 10 * 60_000 },
    );
    expect(summary.status).toBe('completed');
    // '半' and '体' are 60 characters apart at their closest: never within NEAR/50.
    expect(notifier.published.map((message) => message.key.articleKey)).toEqual([ordinary.key]);
  });

  it('checkpoints in the middle of a page once the time is up, and the next run delivers the rest, once', async () => {
    const state = new MemoryStateStore();
    const notifier = new MemoryNotifier();
    const news = new MemoryNewsSource(day);
    const deps = { news, rules: memoryRules(ruleSet), state, notifier, log: memoryLog(), now: () => now };
    // The platform's clock: plenty of time until the run has asked 40 times, then past the soft
    // margin (as a page of slow articles would leave it), but not past the hard one.
    let asked = 0;
    const remainingTimeMs = () => {
      asked += 1;
      return asked <= 40 ? 10 * 60_000 : settings.softMarginMs - 1;
    };
    const first = await runAlertCycle(deps, settings, { runId: 'run-1', remainingTimeMs });
    expect(first.status, JSON.stringify({ ...first, audiences: undefined })).toBe('checkpointed');
    expect(first.reason).toMatch(/time budget|soft deadline/);
    // It stopped inside the page: the rates article at its end was not reached.
    expect(notifier.published).toEqual([]);
    // The day before (empty) is done; the watermark stays before the page that was cut.
    expect((await state.readWatermark())?.at ?? 0).toBeLessThan(ordinary.publishedAt);

    const second = await runAlertCycle(deps, settings, { runId: 'run-2', remainingTimeMs: () => 10 * 60_000 });
    expect(second.status).toBe('completed');
    expect(notifier.published.map((message) => message.key.articleKey)).toEqual([ordinary.key]);
  });
});
