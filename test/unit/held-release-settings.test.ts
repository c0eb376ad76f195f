/**
 * Held alerts follow their audience's settings (issue 30, item 8): what is held is planned again
 * at every run from the CURRENT quiet hours, delivery mode, urgent categories and daily budget, and
 * the ledger entry of a released alert says what became of it. Whole alert runs over the in-memory
 * ports, with a holding store that behaves as DynamoStateStore does (test/support/memory-holds.ts).
 */
import { describe, expect, it } from 'vitest';
import { runAlertCycle } from '#core/alert-run';
import { type Article, buildRuleSet, type RuleSet } from '#core/model';
import { dailyCountId, type OutboundMessage, type RuleSource } from '#core/ports';
import { article, MemoryNewsSource, MemoryNotifier, memoryLog, memoryRunSettings } from '#test/fake-ports';
import { MemoryHoldingStateStore } from '#test/memory-holds';

const topicArn = 'arn:aws:sns:us-east-1:123456789012:seoul-chips';
const audienceId = 'seoul-chips';

/** A local Seoul wall time (UTC+9, no DST) as epoch ms. */
const seoul = (local: string): number => Date.parse(`${local}:00+09:00`);

/** Articles by the provider date (UTC) they are published on. */
function newsOf(articles: readonly Article[]): MemoryNewsSource {
  const byDate = new Map<string, Article[]>();
  for (const item of articles) {
    const date = new Date(item.publishedAt).toISOString().slice(0, 10);
    byDate.set(date, [...(byDate.get(date) ?? []), item]);
  }
  return new MemoryNewsSource(byDate);
}

/** The article keys a digest message lists (from its structured body). */
function digestKeys(message: OutboundMessage): string[] {
  const structured = JSON.parse((JSON.parse(message.body) as { default: string }).default) as {
    newsAlerts: { kind?: string; digest?: { groups: { entries: { article: { key: string } }[] }[] } };
  };
  if (structured.newsAlerts.kind !== 'digest') return [];
  return (structured.newsAlerts.digest?.groups ?? []).flatMap((group) =>
    group.entries.map((entry) => entry.article.key),
  );
}

/**
 * One audience of the desk, whose settings a test changes between runs, the world's articles, and
 * what every run published (alerts by article key, digests by the keys they list).
 */
class Desk {
  readonly state = new MemoryHoldingStateStore();
  readonly notifier: MemoryNotifier;
  readonly articles: Article[] = [];
  #ruleSet: RuleSet;
  #runs = 0;

  constructor(settings: Record<string, unknown>, failure?: ConstructorParameters<typeof MemoryNotifier>[0]) {
    this.#ruleSet = this.#rules(settings);
    this.notifier = new MemoryNotifier(failure);
  }

  #rules(settings: Record<string, unknown>): RuleSet {
    return buildRuleSet(
      [{ ruleId: 'chips', audienceId, keywords: ['interest rate'] }],
      [{ audienceId, topicArn, timeZone: 'Asia/Seoul', ...settings }],
    );
  }

  /** Ops change the audience item (as `audiences update` does): the next run reads it. */
  change(settings: Record<string, unknown>): void {
    this.#ruleSet = this.#rules(settings);
    expect(this.#ruleSet.rejected).toEqual([]);
  }

  publish(id: string, at: number, overrides: Partial<Article> = {}): void {
    this.articles.push(article(id, { publishedAt: at, ...overrides }));
  }

  async run(at: number) {
    const rules: RuleSource = { load: async () => this.#ruleSet };
    return await runAlertCycle(
      {
        news: newsOf(this.articles),
        rules,
        state: this.state,
        notifier: this.notifier,
        log: memoryLog(),
        now: () => at,
      },
      memoryRunSettings(),
      { runId: `run-${++this.#runs}`, remainingTimeMs: () => 10 * 60_000 },
    );
  }

  /** Every article key the audience heard about, by alert or digest entry (repeats kept). */
  heard(): string[] {
    return this.notifier.published.flatMap((message) =>
      message.key.articleKey.startsWith('digest:') ? digestKeys(message) : [message.key.articleKey],
    );
  }

  digests(): OutboundMessage[] {
    return this.notifier.published.filter((message) => message.key.articleKey.startsWith('digest:'));
  }

  held(): string[] {
    return [...this.state.held.values()].map((item) => item.key.articleKey).sort();
  }

  ledger(articleKey: string) {
    return this.state.ledger.get(`${audienceId}|${articleKey}`);
  }
}

describe('quiet hours changed while alerts are held (the seen case)', () => {
  it('22:00-07:00 changed to 23:00-00:00 at 00:23 Seoul: the next run releases what they held, once', async () => {
    const desk = new Desk({ quietHours: { start: '22:00', end: '07:00' } });
    desk.publish('quiet-0001', seoul('2026-11-22T23:45'));
    expect(await desk.run(seoul('2026-11-22T23:50'))).toMatchObject({ heldForQuietHours: 1, digestsSent: 0 });
    // Held after midnight, still inside 22:00-07:00: the alert the issue saw stay held.
    desk.publish('quiet-0002', seoul('2026-11-23T00:05'));
    expect(await desk.run(seoul('2026-11-23T00:10'))).toMatchObject({ heldForQuietHours: 1, digestsSent: 0 });
    expect(desk.held()).toEqual(['id:quiet-0001', 'id:quiet-0002']);

    desk.change({ quietHours: { start: '23:00', end: '00:00' } });
    // 00:25 is outside 23:00-00:00: nothing may stay held for quiet hours.
    const after = await desk.run(seoul('2026-11-23T00:25'));
    expect(after).toMatchObject({ status: 'completed', digestsSent: 1, digestItemsReleased: 2 });
    expect(desk.held()).toEqual([]);
    expect(desk.digests()).toHaveLength(1);
    expect(desk.heard().sort()).toEqual(['id:quiet-0001', 'id:quiet-0002']);

    // The ledger says what happened: sent in that digest, and why it went then.
    const digest = desk.digests()[0]?.key.articleKey;
    expect(desk.ledger('id:quiet-0002')).toMatchObject({
      heldFor: 'quiet-hours',
      releaseOutcome: 'sent',
      releasedIn: digest,
      releasedAt: seoul('2026-11-23T00:25'),
      releaseCause: 'settings-changed',
    });
    // Held at 23:50, inside the new window too: those quiet hours ended at 00:00.
    expect(desk.ledger('id:quiet-0001')).toMatchObject({ releaseOutcome: 'sent', releaseCause: 'due' });
    expect(digest).toBe('digest:2026-11-22T15:25:00.000Z');

    // Later runs send nothing again; a match inside the new window is held until 00:00.
    expect(await desk.run(seoul('2026-11-23T00:40'))).toMatchObject({ digestsSent: 0, notificationsPublished: 0 });
    desk.publish('quiet-0003', seoul('2026-11-23T23:10'));
    expect(await desk.run(seoul('2026-11-23T23:15'))).toMatchObject({ heldForQuietHours: 1, digestsSent: 0 });
    expect(await desk.run(seoul('2026-11-23T23:59'))).toMatchObject({ digestsSent: 0 });
    expect(await desk.run(seoul('2026-11-24T00:00'))).toMatchObject({ digestsSent: 1, digestItemsReleased: 1 });
    expect(desk.ledger('id:quiet-0003')).toMatchObject({ releaseOutcome: 'sent', releaseCause: 'due' });
    expect(desk.heard().sort()).toEqual(['id:quiet-0001', 'id:quiet-0002', 'id:quiet-0003']);
  });

  it('a change that still covers the run keeps them held until the new window ends', async () => {
    const desk = new Desk({ quietHours: { start: '22:00', end: '07:00' } });
    desk.publish('late', seoul('2026-11-22T22:30'));
    expect(await desk.run(seoul('2026-11-22T22:35'))).toMatchObject({ heldForQuietHours: 1 });
    // 22:00-07:00 → 23:00-05:00 at 23:30: still quiet, held until 05:00 instead of 07:00.
    desk.change({ quietHours: { start: '23:00', end: '05:00' } });
    expect(await desk.run(seoul('2026-11-22T23:30'))).toMatchObject({ digestsSent: 0 });
    expect(await desk.run(seoul('2026-11-23T04:59'))).toMatchObject({ digestsSent: 0 });
    expect(await desk.run(seoul('2026-11-23T05:00'))).toMatchObject({ digestsSent: 1 });
    expect(desk.heard()).toEqual(['id:late']);
  });

  it('clearing quiet hours releases at the next run; so does making the category urgent', async () => {
    const desk = new Desk({ quietHours: { start: '22:00', end: '07:00' } });
    desk.publish('a', seoul('2026-11-22T23:00'));
    desk.publish('b', seoul('2026-11-22T23:05'), { categories: ['003002000'], categoryNames: ['Disasters'] });
    expect(await desk.run(seoul('2026-11-22T23:10'))).toMatchObject({ heldForQuietHours: 2 });
    // An urgent category goes out inside quiet hours; the other stays held.
    desk.change({ quietHours: { start: '22:00', end: '07:00' }, urgentCategories: ['003*'] });
    expect(await desk.run(seoul('2026-11-22T23:20'))).toMatchObject({ digestsSent: 1, digestItemsReleased: 1 });
    expect(desk.heard()).toEqual(['id:b']);
    expect(desk.ledger('id:b')).toMatchObject({ releaseCause: 'settings-changed' });
    desk.change({});
    expect(await desk.run(seoul('2026-11-22T23:30'))).toMatchObject({ digestsSent: 1, digestItemsReleased: 1 });
    expect(desk.heard()).toEqual(['id:b', 'id:a']);
    expect(desk.held()).toEqual([]);
  });
});

describe('digest mode switched to immediate', () => {
  it('releases what the digest held at the next run, and new matches go out at once', async () => {
    const desk = new Desk({ deliveryMode: 'digest', digestTimes: ['08:00', '18:00'] });
    desk.publish('d1', seoul('2026-11-22T09:00'));
    desk.publish('d2', seoul('2026-11-22T09:30'));
    expect(await desk.run(seoul('2026-11-22T10:00'))).toMatchObject({ heldForDigest: 2, digestsSent: 0 });
    expect(await desk.run(seoul('2026-11-22T11:00'))).toMatchObject({ digestsSent: 0 });

    desk.change({ deliveryMode: 'immediate', digestTimes: ['08:00', '18:00'] });
    desk.publish('d3', seoul('2026-11-22T11:50'));
    const after = await desk.run(seoul('2026-11-22T12:00'));
    expect(after).toMatchObject({
      notificationsPublished: 1,
      notificationsHeld: 0,
      digestsSent: 1,
      digestItemsReleased: 2,
    });
    expect(desk.held()).toEqual([]);
    expect(desk.ledger('id:d1')).toMatchObject({
      heldFor: 'digest',
      releaseOutcome: 'sent',
      releaseCause: 'settings-changed',
    });
    expect(await desk.run(seoul('2026-11-22T18:00'))).toMatchObject({ digestsSent: 0 });
    expect(desk.heard().sort()).toEqual(['id:d1', 'id:d2', 'id:d3']);
  });

  it('inside quiet hours the switch waits for their end', async () => {
    const desk = new Desk({ deliveryMode: 'digest', quietHours: { start: '22:00', end: '07:00' } });
    desk.publish('night', seoul('2026-11-22T21:00'));
    expect(await desk.run(seoul('2026-11-22T21:30'))).toMatchObject({ heldForDigest: 1 });
    desk.change({ deliveryMode: 'immediate', quietHours: { start: '22:00', end: '07:00' } });
    expect(await desk.run(seoul('2026-11-22T23:00'))).toMatchObject({ digestsSent: 0 });
    expect(await desk.run(seoul('2026-11-23T07:00'))).toMatchObject({ digestsSent: 1, digestItemsReleased: 1 });
    expect(desk.heard()).toEqual(['id:night']);
  });

  it('switched the other way, what quiet hours held waits for the next digest', async () => {
    const desk = new Desk({ quietHours: { start: '22:00', end: '07:00' } });
    desk.publish('q', seoul('2026-11-22T23:00'));
    expect(await desk.run(seoul('2026-11-22T23:10'))).toMatchObject({ heldForQuietHours: 1 });
    desk.change({ deliveryMode: 'digest', digestTimes: ['09:00'], quietHours: { start: '22:00', end: '07:00' } });
    expect(await desk.run(seoul('2026-11-23T07:00'))).toMatchObject({ digestsSent: 0 });
    expect(await desk.run(seoul('2026-11-23T09:00'))).toMatchObject({ digestsSent: 1 });
    expect(desk.ledger('id:q')).toMatchObject({ releaseCause: 'settings-changed' });
  });
});

describe('daily budget raised', () => {
  it('releases the budget-held alerts of today that now fit, oldest first, counting them against today', async () => {
    const desk = new Desk({ dailyBudget: 2, digestTimes: ['08:00'] });
    for (const [index, clock] of ['09:00', '09:10', '09:20', '09:30', '09:40'].entries()) {
      desk.publish(`b${index + 1}`, seoul(`2026-11-22T${clock}`));
    }
    expect(await desk.run(seoul('2026-11-22T10:00'))).toMatchObject({ notificationsPublished: 2, budgetOverflow: 3 });
    const today = dailyCountId({ audienceId, date: '2026-11-22' });
    expect(desk.state.dailyCounts.get(today)).toBe(2);
    // Nothing changes while the budget stays: they wait for tomorrow's 08:00 digest.
    expect(await desk.run(seoul('2026-11-22T11:00'))).toMatchObject({ digestsSent: 0 });

    desk.change({ dailyBudget: 4, digestTimes: ['08:00'] });
    const raised = await desk.run(seoul('2026-11-22T12:00'));
    expect(raised).toMatchObject({ digestsSent: 1, digestItemsReleased: 2 });
    expect(desk.state.dailyCounts.get(today)).toBe(4);
    expect(desk.held()).toEqual(['id:b5']);
    expect(desk.ledger('id:b3')).toMatchObject({
      heldFor: 'budget',
      releaseOutcome: 'sent',
      releaseCause: 'settings-changed',
    });
    // The budget is used up again: a new match today is held, the rest waits for the digest.
    desk.publish('b6', seoul('2026-11-22T12:30'));
    expect(await desk.run(seoul('2026-11-22T13:00'))).toMatchObject({ budgetOverflow: 1, digestsSent: 0 });
    expect(await desk.run(seoul('2026-11-23T08:00'))).toMatchObject({ digestsSent: 1, digestItemsReleased: 2 });
    expect(desk.ledger('id:b5')).toMatchObject({ releaseOutcome: 'sent', releaseCause: 'due' });
    expect(desk.heard().sort()).toEqual(['id:b1', 'id:b2', 'id:b3', 'id:b4', 'id:b5', 'id:b6']);
  });

  it('a removed budget releases them all at the next run; yesterday’s overflow does not use today’s room', async () => {
    const desk = new Desk({ dailyBudget: 1, digestTimes: ['20:00'] });
    desk.publish('y1', seoul('2026-11-22T21:00'));
    desk.publish('y2', seoul('2026-11-22T21:10'));
    expect(await desk.run(seoul('2026-11-22T21:30'))).toMatchObject({ notificationsPublished: 1, budgetOverflow: 1 });
    // A new local day has a fresh budget, but yesterday's overflow waits for its digest (20:00).
    expect(await desk.run(seoul('2026-11-23T09:00'))).toMatchObject({ digestsSent: 0 });
    expect(desk.held()).toEqual(['id:y2']);
    desk.change({ digestTimes: ['20:00'] });
    expect(await desk.run(seoul('2026-11-23T09:05'))).toMatchObject({ digestsSent: 1, digestItemsReleased: 1 });
    expect(desk.ledger('id:y2')).toMatchObject({ releaseCause: 'settings-changed' });
    expect(desk.heard().sort()).toEqual(['id:y1', 'id:y2']);
  });
});

describe('daily budget raised, and something goes wrong', () => {
  async function overBudget() {
    const desk = new Desk({ dailyBudget: 1, digestTimes: ['08:00'] });
    desk.publish('o1', seoul('2026-11-22T09:00'));
    desk.publish('o2', seoul('2026-11-22T09:10'));
    desk.publish('o3', seoul('2026-11-22T09:20'));
    expect(await desk.run(seoul('2026-11-22T10:00'))).toMatchObject({ notificationsPublished: 1, budgetOverflow: 2 });
    desk.change({ dailyBudget: 3, digestTimes: ['08:00'] });
    return desk;
  }
  const today = dailyCountId({ audienceId, date: '2026-11-22' });

  it('a crash after the reservation, before the claim: the budget is only stricter today, nothing is lost', async () => {
    const desk = await overBudget();
    desk.state.crashAt = 'claim';
    await expect(desk.run(seoul('2026-11-22T11:00'))).rejects.toThrow('crash at claim');
    expect(desk.state.dailyCounts.get(today)).toBe(3);
    expect(await desk.run(seoul('2026-11-22T11:05'))).toMatchObject({ digestsSent: 0 });
    expect(desk.held()).toEqual(['id:o2', 'id:o3']);
    expect(await desk.run(seoul('2026-11-23T08:00'))).toMatchObject({ digestsSent: 1, digestItemsReleased: 2 });
    expect(desk.heard().sort()).toEqual(['id:o1', 'id:o2', 'id:o3']);
  });

  it('a count changed by another writer: the release waits and is planned again against the new count', async () => {
    const desk = await overBudget();
    let raced = false;
    desk.state.beforeDailyCountUpdate = (key) => {
      if (raced) return;
      raced = true;
      desk.state.dailyCounts.set(dailyCountId(key), 2);
    };
    expect(await desk.run(seoul('2026-11-22T11:00'))).toMatchObject({ status: 'completed', digestsSent: 0 });
    expect(desk.held()).toEqual(['id:o2', 'id:o3']);
    // One left today: the oldest goes, the other waits for the digest.
    expect(await desk.run(seoul('2026-11-22T11:05'))).toMatchObject({ digestsSent: 1, digestItemsReleased: 1 });
    expect(desk.state.dailyCounts.get(today)).toBe(3);
    expect(desk.held()).toEqual(['id:o3']);
  });
});

describe('a crash between release steps after a settings change', () => {
  for (const crashAt of ['claim', 'finish', 'finish-after-items'] as const) {
    it(`at ${crashAt}: the next run finishes, the alert is sent once and its ledger entry says so`, async () => {
      const desk = new Desk({ quietHours: { start: '22:00', end: '07:00' } });
      desk.publish('c', seoul('2026-11-23T00:05'));
      expect(await desk.run(seoul('2026-11-23T00:10'))).toMatchObject({ heldForQuietHours: 1 });
      desk.change({ quietHours: { start: '23:00', end: '00:00' } });
      desk.state.crashAt = crashAt;
      await expect(desk.run(seoul('2026-11-23T00:25'))).rejects.toThrow(`crash at ${crashAt}`);
      expect(await desk.run(seoul('2026-11-23T00:30'))).toMatchObject({ status: 'completed' });
      expect(desk.held()).toEqual([]);
      expect(desk.state.releases.size).toBe(0);
      expect(desk.heard()).toEqual(['id:c']);
      expect(desk.ledger('id:c')).toMatchObject({ releaseOutcome: 'sent', releaseCause: 'settings-changed' });
      expect(await desk.run(seoul('2026-11-23T00:40'))).toMatchObject({ digestsSent: 0 });
      expect(desk.heard()).toEqual(['id:c']);
    });
  }
});

/** A desk with a daily budget of 2 whose sends of `articleKey` are throttled until `stopFailing`. */
function budgetDeskFailing(articleKey: string): { desk: Desk; stopFailing: () => void } {
  let failing = true;
  const desk = new Desk({ dailyBudget: 2, digestTimes: ['18:00'] }, (message) =>
    failing && message.key.articleKey === articleKey
      ? { code: 'Throttling', reason: 'rate exceeded (test)', permanent: false }
      : undefined,
  );
  return { desk, stopFailing: () => (failing = false) };
}

describe('a send that fails and gives its daily budget slot back', () => {
  it('keeps the slot for its own retry in the next run: a later match held for the budget waits for the digest', async () => {
    // Before: the same run's release handed the slot to the later match ("settings changed", which
    // they had not), and the earlier one, retried, found the budget full and went to the digest.
    const { desk, stopFailing } = budgetDeskFailing('id:x2');
    desk.publish('x1', seoul('2026-11-23T09:00'));
    await desk.run(seoul('2026-11-23T09:05'));
    desk.publish('x2', seoul('2026-11-23T10:00'));
    desk.publish('x3', seoul('2026-11-23T10:01'));
    expect(await desk.run(seoul('2026-11-23T10:05'))).toMatchObject({ notificationsFailed: 1, digestsSent: 0 });
    expect(desk.heard()).toEqual(['id:x1']);
    expect(desk.held()).toEqual(['id:x3']);
    stopFailing();
    await desk.run(seoul('2026-11-23T10:10'));
    expect(desk.heard()).toEqual(['id:x1', 'id:x2']);
    expect(desk.held()).toEqual(['id:x3']);
    expect(desk.ledger('id:x3')).not.toHaveProperty('releaseCause');
    expect(desk.state.dailyCounts.get(dailyCountId({ audienceId, date: '2026-11-23' }))).toBe(2);
    await desk.run(seoul('2026-11-23T18:00'));
    expect(desk.heard()).toEqual(['id:x1', 'id:x2', 'id:x3']);
  });

  it('keeps the slot from a later match the same run plans too (the next provider day of the run)', async () => {
    const { desk, stopFailing } = budgetDeskFailing('id:x2');
    desk.publish('x1', seoul('2026-11-23T08:00'));
    await desk.run(seoul('2026-11-23T08:05'));
    desk.publish('x2', seoul('2026-11-23T08:50')); // provider (UTC) date 2026-11-22
    desk.publish('x3', seoul('2026-11-23T09:10')); // 2026-11-23: read after x2's day in the same run
    expect(await desk.run(seoul('2026-11-23T09:15'))).toMatchObject({ notificationsFailed: 1 });
    expect(desk.heard()).toEqual(['id:x1']);
    expect(desk.held()).toEqual(['id:x3']);
    stopFailing();
    await desk.run(seoul('2026-11-23T09:20'));
    expect(desk.heard()).toEqual(['id:x1', 'id:x2']);
    expect(desk.held()).toEqual(['id:x3']);
  });
});
