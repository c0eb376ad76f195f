/**
 * `news-alerts replay` and the daily budget: a replayed send that fails gives its slot back for its
 * own retry; the replay's release must not hand that slot to a match the budget held (it did, and
 * recorded the release as "settings changed", which nothing had). The replay's delivery core over
 * the in-memory ports.
 */
import { describe, expect, it } from 'vitest';
import { type Article, buildRuleSet } from '#core/model';
import { article, MemoryNewsSource, MemoryNotifier, memoryLog } from '#test/fake-ports';
import { MemoryHoldingStateStore } from '#test/memory-holds';
import { replayDeliveries } from '../../cli/replay.ts';

const audienceId = 'seoul-chips';
const seoul = (local: string) => Date.parse(`${local}:00+09:00`);

const ruleSet = buildRuleSet(
  [{ ruleId: 'chips', audienceId, keywords: ['interest rate'] }],
  [
    {
      audienceId,
      topicArn: 'arn:aws:sns:us-east-1:123456789012:seoul-chips',
      timeZone: 'Asia/Seoul',
      dailyBudget: 1,
      digestTimes: ['18:00'],
    },
  ],
);
const now = seoul('2026-11-23T10:00');

/** `news-alerts replay` from 08:00 to 10:00 Seoul over `days`, through the CLI's delivery core. */
async function replay(
  byDate: ReadonlyMap<string, Article[]>,
  state: MemoryHoldingStateStore,
  notifier: MemoryNotifier,
  days: string[],
) {
  return await replayDeliveries(
    { news: new MemoryNewsSource(new Map(byDate)), state, notifier, log: memoryLog(), now: () => now },
    {
      window: { since: seoul('2026-11-23T08:00'), until: now, days },
      ruleSet,
      audiences: new Map(ruleSet.audiences.map((audience) => [audience.audienceId, audience])),
      ledgerFlushDelayMs: 0,
      signal: new AbortController().signal,
    },
  );
}

describe('replay and the daily budget', () => {
  it('keeps the slot a failed send gave back for its retry, not for a budget-held match', async () => {
    const state = new MemoryHoldingStateStore();
    const notifier = new MemoryNotifier((message) =>
      message.key.articleKey === 'id:x2'
        ? { code: 'Throttling', reason: 'rate exceeded (test)', permanent: false }
        : undefined,
    );
    const articles: Article[] = [
      article('x2', { publishedAt: seoul('2026-11-23T09:00') }),
      article('x3', { publishedAt: seoul('2026-11-23T09:01') }),
    ];
    const outcome = await replay(new Map([['2026-11-23', articles]]), state, notifier, ['2026-11-23']);
    expect(outcome.counts.notificationsFailed).toBe(1);
    expect(notifier.published).toEqual([]);
    expect([...state.held.values()].map((item) => item.key.articleKey)).toEqual(['id:x3']);
    expect(state.ledger.get(`${audienceId}|id:x3`)).not.toHaveProperty('releaseCause');
  });

  it('lets a failed send planned again in the same replay take back its own kept slot', async () => {
    // The article is listed on two provider days of one replay; its first publish is throttled.
    const state = new MemoryHoldingStateStore();
    let attempts = 0;
    const notifier = new MemoryNotifier((message) =>
      message.key.articleKey === 'id:x2' && ++attempts === 1
        ? { code: 'Throttling', reason: 'rate exceeded (test)', permanent: false }
        : undefined,
    );
    const x2 = article('x2', { publishedAt: seoul('2026-11-23T08:30') });
    await replay(
      new Map([
        ['2026-11-22', [x2]],
        ['2026-11-23', [x2]],
      ]),
      state,
      notifier,
      ['2026-11-22', '2026-11-23'],
    );
    expect(notifier.published.map((message) => message.key.articleKey)).toEqual(['id:x2']);
    expect([...state.held.values()]).toEqual([]);
  });
});
