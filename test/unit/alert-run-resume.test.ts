/**
 * Resume points come from provider bytes (its cursor, its article keys) and are stored in the
 * reading state item: whatever the provider sends, what is stored stays bounded. A resumed read
 * that meets the provider in another order than the last run saw loses nothing.
 */
import { describe, expect, it } from 'vitest';
import { runAlertCycle } from '#core/alert-run';
import type { Article } from '#core/model';
import { buildRuleSet } from '#core/model';
import {
  type ArticlePage,
  maxResumeValueLength,
  type NewsSource,
  type PagesOptions,
  type ProviderDateRange,
} from '#core/ports';
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

/**
 * Today's articles in pages of ten, in whatever order `listing` gives them, from page 1 or from
 * the page a resumed read asks for; every read's start is kept in `starts`.
 */
class PagedNewsSource implements NewsSource {
  listing: readonly Article[] = [];
  readonly starts: (number | string)[] = [];

  async *pages(range: ProviderDateRange, options?: PagesOptions): AsyncIterable<ArticlePage> {
    if (range.from !== '2026-11-22') return;
    const resume = options?.resumeFrom;
    const first = resume !== undefined && 'page' in resume ? resume.page : 1;
    this.starts.push(resume !== undefined && 'cursor' in resume ? resume.cursor : first);
    for (let page = first; (page - 1) * 10 < this.listing.length; page += 1) {
      yield { pageNumber: page, articles: this.listing.slice((page - 1) * 10, page * 10), skipped: [] };
    }
  }
}

describe('a resumed read that meets the provider out of oldest-first order', () => {
  it('reads the day again from page 1 in the same run: articles before the stored position are not left for a sweep', async () => {
    const minutes = (n: number) => now + n * 60_000;
    const seen = Array.from({ length: 12 }, (_, i) => article(`seen-${i}`, { publishedAt: minutes(-50 + i) }));
    const news = new PagedNewsSource();
    const state = new MemoryStateStore();
    const notifier = new MemoryNotifier();
    const deps = { news, rules: memoryRules(ruleSet), state, notifier, log: memoryLog() };

    // Run 1 reads two pages oldest first and leaves its position: page 2.
    news.listing = seen;
    await runAlertCycle({ ...deps, now: () => now }, settings, { runId: 'run-1', remainingTimeMs: () => 10 * 60_000 });
    expect(state.readingState?.resume).toMatchObject([{ day: '2026-11-22', position: { page: 2 } }]);
    expect(notifier.published).toHaveLength(12);

    // By run 2 the provider lists newest first: the ten new articles fill page 1, and page 2 (the
    // stored position) starts with articles run 1 read, out of oldest-first order.
    const fresh = Array.from({ length: 10 }, (_, i) => article(`fresh-${i}`, { publishedAt: minutes(1 + i / 10) }));
    news.listing = [...seen, ...fresh].sort((a, b) => b.publishedAt - a.publishedAt);
    const second = await runAlertCycle({ ...deps, now: () => minutes(5) }, settings, {
      runId: 'run-2',
      remainingTimeMs: () => 10 * 60_000,
    });

    // The scenario: an incremental run that started at the stored position.
    expect(second.reading?.mode).toBe('incremental');
    expect(news.starts[1]).toBe(2);
    expect(second.status).toBe('completed');
    const delivered = notifier.published.map((message) => message.key.articleKey);
    expect(delivered.filter((key) => key.startsWith('id:fresh-')).sort()).toEqual(fresh.map((item) => item.key).sort());
    expect(new Set(delivered).size).toBe(delivered.length);
  });
});
