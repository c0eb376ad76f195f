/**
 * `news-alerts replay` keeps the audiences' delivery preferences (issue 10, item 6): a replayed
 * match is delivered exactly as the scheduled run would deliver it at that moment. A digest-only
 * audience gets it in its digest, never as an immediate alert; inside quiet hours it is held until
 * they end (urgent matches still go at once); and what a replay holds is written with its ledger
 * entry and released by the next due digest, from a later replay or run, exactly once. The
 * replay's delivery core runs here against moto and the simulator with a pinned clock.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { SandboxAudience } from '#sandbox/examples';
import { type AlertsAndDigests, collectAlertsAndDigests, startTestStack, type TestStack } from '#test/run-harness';
import { type ReplayOutcome, replayDeliveries } from '../../cli/replay.ts';
import { parseWindow } from '../../cli/window.ts';

const at = (iso: string) => Date.parse(iso);

type Received = AlertsAndDigests;
const collect = collectAlertsAndDigests;

/** `news-alerts replay --from <from> --to <to>` at the stack's clock, through the CLI's own delivery core. */
async function replay(stack: TestStack, from: string, to: string, dryRun = false): Promise<ReplayOutcome> {
  const ruleSet = await stack.dependencies.rules.load();
  const { state, notifier, news } = stack.dependencies;
  return await replayDeliveries(
    { state, notifier, news, log: stack.log, now: () => stack.time() },
    {
      window: parseWindow(from, to, stack.config.provider.timeZone, stack.time()),
      ruleSet,
      audiences: new Map(ruleSet.audiences.map((audience) => [audience.audienceId, audience])),
      ledgerFlushDelayMs: stack.config.run.ledgerFlushDelayMs,
      signal: new AbortController().signal,
      dryRun,
    },
  );
}

describe('replay keeps delivery preferences', () => {
  let stack: TestStack | undefined;
  afterEach(async () => {
    await stack?.stop();
    stack = undefined;
  });

  it('a digest-only audience gets replayed matches in its digest, never as immediate alerts, exactly once', async () => {
    const audiences: SandboxAudience[] = [
      {
        item: { audienceId: 'digest-desk', timeZone: 'UTC', deliveryMode: 'digest', digestTimes: ['08:00'] },
        subscribers: [],
      },
      { item: { audienceId: 'alerts-desk', timeZone: 'UTC' }, subscribers: [] },
    ];
    const rules = [
      { ruleId: 'digest-markets', audienceId: 'digest-desk', keywords: ['markets'] },
      { ruleId: 'alert-markets', audienceId: 'alerts-desk', keywords: ['markets'] },
    ];
    stack = await startTestStack({ audiences, rules, simulator: { articles: [] } });
    const s = stack;
    const received: Received = { alerts: [], digests: [] };
    s.setTime(at('2026-11-22T07:00:00Z'));
    s.simulator?.publish(
      { articleId: 'g-1', title: 'Markets open lower', publishedAt: at('2026-11-22T06:10:00Z') },
      { articleId: 'g-2', title: 'Bond markets rally', publishedAt: at('2026-11-22T06:20:00Z') },
    );

    // A dry run says what would be held, and holds nothing.
    const planned = await replay(s, '2026-11-22T06:00:00Z', '2026-11-22T07:00:00Z', true);
    expect(planned.counts).toMatchObject({
      notificationsWouldPublish: 2,
      notificationsWouldHold: 2,
      notificationsHeld: 0,
    });
    expect((await s.dependencies.state.readHeld('digest-desk')).items).toEqual([]);
    expect(await s.collectDeliveries()).toEqual([]);

    // A backfill after an outage: no scheduled run saw these articles.
    const first = await replay(s, '2026-11-22T06:00:00Z', '2026-11-22T07:00:00Z');
    expect(first.counts).toMatchObject({ notificationsPublished: 2, heldForDigest: 2, digestsSent: 0 });
    expect(first.counts.audiences['digest-desk']).toMatchObject({ matched: 2, held: 2, published: 0 });
    expect((await collect(s, received)).alerts.sort()).toEqual(['alerts-desk|id:g-1', 'alerts-desk|id:g-2']);
    // Held and recorded together: a re-read sees them as handled, and they wait for the digest.
    expect((await s.dependencies.state.readHeld('digest-desk')).items).toHaveLength(2);

    // At the digest time a replay of the same window sends nothing again and releases the digest.
    s.setTime(at('2026-11-22T08:00:00Z'));
    const again = await replay(s, '2026-11-22T06:00:00Z', '2026-11-22T07:00:00Z');
    expect(again.counts).toMatchObject({
      notificationsAlreadyDelivered: 4,
      notificationsPublished: 0,
      notificationsHeld: 0,
      digestsSent: 1,
      digestItemsReleased: 2,
    });
    // The scheduled run after it: nothing held is left, nothing goes out twice.
    expect(await s.run()).toMatchObject({ notificationsPublished: 0, notificationsHeld: 0, digestsSent: 0 });
    await collect(s, received);
    expect(received.digests).toEqual([
      { id: 'digest-desk|digest:2026-11-22T08:00:00.000Z', keys: ['id:g-1', 'id:g-2'] },
    ]);
    expect(received.alerts.sort()).toEqual(['alerts-desk|id:g-1', 'alerts-desk|id:g-2']);
    expect((await s.dependencies.state.readHeld('digest-desk')).items).toEqual([]);
  });

  it('inside quiet hours a replay holds what is not urgent until they end; the run then sends one digest', async () => {
    const audiences: SandboxAudience[] = [
      {
        item: { audienceId: 'on-call', timeZone: 'UTC', quietHours: { start: '22:00', end: '07:00' } },
        subscribers: [{ protocol: 'sms', endpoint: '+15550100' }],
      },
    ];
    const rules = [
      { ruleId: 'markets', audienceId: 'on-call', keywords: ['markets'] },
      { ruleId: 'quakes', audienceId: 'on-call', keywords: ['quake'], urgent: true },
    ];
    stack = await startTestStack({ audiences, rules, simulator: { articles: [] } });
    const s = stack;
    const received: Received = { alerts: [], digests: [] };
    s.setTime(at('2026-11-22T23:30:00Z'));
    s.simulator?.publish(
      { articleId: 'q-1', title: 'Asian markets slide late', publishedAt: at('2026-11-22T23:00:00Z') },
      { articleId: 'q-2', title: 'Currency markets calm', publishedAt: at('2026-11-22T23:10:00Z') },
      { articleId: 'q-3', title: 'Quake rattles markets', publishedAt: at('2026-11-22T23:20:00Z') },
    );

    const replayed = await replay(s, '2026-11-22T22:00:00Z', '2026-11-22T23:30:00Z');
    expect(replayed.counts).toMatchObject({ notificationsPublished: 1, heldForQuietHours: 2, digestsSent: 0 });
    expect((await collect(s, received)).alerts).toEqual(['on-call|id:q-3']);
    expect((await s.collectInbox()).filter((item) => item.channel === 'sms')).toHaveLength(1);

    s.setTime(at('2026-11-23T06:59:00Z'));
    expect(await s.run()).toMatchObject({ notificationsPublished: 0, digestsSent: 0 });
    s.setTime(at('2026-11-23T07:00:00Z'));
    expect(await s.run()).toMatchObject({ notificationsPublished: 0, digestsSent: 1, digestItemsReleased: 2 });
    await collect(s, received);
    expect(received.digests).toEqual([{ id: 'on-call|digest:2026-11-23T07:00:00.000Z', keys: ['id:q-1', 'id:q-2'] }]);
    expect(received.alerts).toEqual(['on-call|id:q-3']);
  });

  it("over an audience's daily budget a replay holds the overflow for the next digest, as the run would", async () => {
    const audiences: SandboxAudience[] = [
      {
        item: { audienceId: 'budget-desk', timeZone: 'UTC', dailyBudget: 1, digestTimes: ['08:00'] },
        subscribers: [],
      },
    ];
    const rules = [{ ruleId: 'chips', audienceId: 'budget-desk', keywords: ['chips'] }];
    stack = await startTestStack({ audiences, rules, simulator: { articles: [] } });
    const s = stack;
    const received: Received = { alerts: [], digests: [] };
    s.setTime(at('2026-11-22T07:00:00Z'));
    s.simulator?.publish(
      { articleId: 'b-1', title: 'Chips demand grows', publishedAt: at('2026-11-22T06:10:00Z') },
      { articleId: 'b-2', title: 'Chips prices rise', publishedAt: at('2026-11-22T06:20:00Z') },
      { articleId: 'b-3', title: 'Chips exports up', publishedAt: at('2026-11-22T06:30:00Z') },
    );
    const replayed = await replay(s, '2026-11-22T06:00:00Z', '2026-11-22T07:00:00Z');
    expect(replayed.counts).toMatchObject({ notificationsPublished: 1, budgetOverflow: 2 });
    expect((await collect(s, received)).alerts).toHaveLength(1);

    s.setTime(at('2026-11-22T08:00:00Z'));
    expect(await s.run()).toMatchObject({ notificationsPublished: 0, digestsSent: 1, digestItemsReleased: 2 });
    await collect(s, received);
    const sent = [
      ...received.alerts.map((id) => id.split('|')[1]),
      ...received.digests.flatMap((digest) => digest.keys),
    ];
    expect(sent.sort()).toEqual(['id:b-1', 'id:b-2', 'id:b-3']);
  });
});
