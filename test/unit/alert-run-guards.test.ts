/**
 * Guards of the watermark in the alert run, with in-memory ports (issue 10, item 14): the
 * watermark never moves past an alert that was not sent.
 *
 * - (d) a run whose window spans two provider days, the first incomplete (a transient publish
 *   failure) and the second complete: the watermark must not move past the first day's alert;
 * - (a) the hard deadline stops publishing: the alerts it held back keep the watermark where it was.
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

/** 2026-11-22 12:00 UTC; with a one-day lookback the window is 2026-11-21 and 2026-11-22. */
const now = Date.UTC(2026, 10, 22, 12, 0);

const settings = memoryRunSettings();

const ruleSet = buildRuleSet(
  [{ ruleId: 'rates', audienceId: 'desk', keywords: ['interest rate'] }],
  [{ audienceId: 'desk', topicArn: 'arn:aws:sns:us-east-1:123456789012:desk' }],
);

const earlier = article('day-1', { publishedAt: Date.UTC(2026, 10, 21, 15, 0) });
const later = article('day-2', { publishedAt: Date.UTC(2026, 10, 22, 9, 0) });
const news = new MemoryNewsSource(
  new Map([
    ['2026-11-21', [earlier]],
    ['2026-11-22', [later]],
  ]),
);

describe('the watermark after an incomplete day (14d)', () => {
  it('stays before an earlier day whose alert failed, even when a later day completes', async () => {
    const state = new MemoryStateStore();
    // SNS throttles the first day's alert every time; the second day's goes out.
    const notifier = new MemoryNotifier((message) =>
      message.key.articleKey === earlier.key
        ? { code: 'Throttled', reason: 'rate exceeded', permanent: false }
        : undefined,
    );
    const summary = await runAlertCycle(
      { news, rules: memoryRules(ruleSet), state, notifier, log: memoryLog(), now: () => now },
      settings,
      { runId: 'run-1', remainingTimeMs: () => 10 * 60_000 },
    );

    expect(summary.window).toEqual({ from: '2026-11-21', to: '2026-11-22' });
    expect(notifier.published.map((message) => message.key.articleKey)).toEqual([later.key]);
    expect(summary.daysCompleted).toBe(1);
    expect(summary.status).toBe('incomplete');
    // The next run reads 2026-11-21 again and sends the throttled alert.
    expect(await state.readWatermark()).toBeUndefined();
    expect(summary.watermarkAfter).toBeUndefined();
  });
});

describe('the watermark at the hard deadline (14a)', () => {
  it('does not move past alerts the hard deadline kept from being sent', async () => {
    const state = new MemoryStateStore();
    const notifier = new MemoryNotifier();
    // Fetching has all the time it wants; publishing is already past its deadline.
    const summary = await runAlertCycle(
      { news, rules: memoryRules(ruleSet), state, notifier, log: memoryLog(), now: () => now },
      { ...settings, softMarginMs: 0, hardMarginMs: 10 ** 12 },
      { runId: 'run-1', remainingTimeMs: () => 10 ** 12 },
    );

    expect(notifier.published).toEqual([]);
    expect(summary.notificationsDeferred).toBe(2);
    expect(summary.status).toBe('checkpointed');
    expect(await state.readWatermark()).toBeUndefined();
    expect(state.ledger.size).toBe(0);
  });
});
