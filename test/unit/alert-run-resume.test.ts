/**
 * Resume points come from provider bytes (its cursor, its article keys) and are stored in the
 * reading state item: whatever the provider sends, what is stored stays bounded.
 */
import { describe, expect, it } from 'vitest';
import { runAlertCycle } from '#core/alert-run';
import { buildRuleSet } from '#core/model';
import { type ArticlePage, maxResumeValueLength, type NewsSource, type ProviderDateRange } from '#core/ports';
import { article, MemoryNotifier, MemoryStateStore, memoryLog, memoryRules, memoryRunSettings } from '#test/fake-ports';

const now = Date.UTC(2026, 10, 22, 12, 0);
const settings = memoryRunSettings({ fullSweepMs: 360 * 60_000, initialLookbackMs: 60 * 60_000 });
const ruleSet = buildRuleSet(
  [{ ruleId: 'rates', audienceId: 'desk', keywords: ['interest rate'] }],
  [{ audienceId: 'desk', topicArn: 'arn:aws:sns:us-east-1:123456789012:desk' }],
);

/** Today's articles oldest first on two pages, the second fetched with `cursor`. */
function twoPages(cursor: string, lastKey: string): NewsSource {
  const at = (i: number) => now - 50 * 60_000 + i * 60_000;
  const first = Array.from({ length: 10 }, (_, i) => article(`a${i}`, { publishedAt: at(i) }));
  const second = [article('b0', { publishedAt: at(10) }), article(lastKey, { publishedAt: at(11) })];
  return {
    async *pages(range: ProviderDateRange): AsyncIterable<ArticlePage> {
      if (range.from !== '2026-11-22') return;
      yield { pageNumber: 1, articles: first, skipped: [] };
      yield { pageNumber: 2, articles: second, skipped: [], cursor };
    },
  };
}

async function resumeAfterRun(news: NewsSource) {
  const state = new MemoryStateStore();
  await runAlertCycle(
    { news, rules: memoryRules(ruleSet), state, notifier: new MemoryNotifier(), log: memoryLog(), now: () => now },
    settings,
    { runId: 'run-1', remainingTimeMs: () => 10 * 60_000 },
  );
  expect(state.readingState?.order).toBe('oldest-first');
  return state.readingState?.resume ?? [];
}

describe('resume points from provider bytes', () => {
  it('keeps the cursor and keys of the last page read', async () => {
    const resume = await resumeAfterRun(twoPages('cursor-2', 'b1'));
    expect(resume).toEqual([{ day: '2026-11-22', position: { cursor: 'cursor-2' }, keys: ['id:b0', 'id:b1'] }]);
  });

  it('stores no position for a cursor too long to keep, and leaves out keys too long to keep', async () => {
    const huge = 'c'.repeat(maxResumeValueLength + 1);
    expect(await resumeAfterRun(twoPages(huge, 'b1'))).toEqual([]);
    const [entry] = await resumeAfterRun(twoPages('cursor-2', 'k'.repeat(maxResumeValueLength + 1)));
    expect(entry?.keys).toEqual(['id:b0']);
  });
});
