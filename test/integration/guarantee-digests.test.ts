/**
 * DESIGN section 3 for held alerts and digests: the world breaks at every step of a hold and of a
 * release (crash before or after the hold write, after the claim, between SNS accepting a digest
 * and its ledger write, before the held items are deleted; SNS failing a digest for a while or
 * refusing it for good), and each test checks that every held article reaches its audience,
 * in exactly one digest, except for the one accepted duplicate, which is stated exactly.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { DeliveryRecord, Notifier } from '#core/ports';
import type { SandboxAudience } from '#sandbox/examples';
import { collectAlertsAndDigests, startTestStack, stateWith, type TestStack } from '#test/run-harness';
import { installSnsFaults } from '#test/sns-faults';

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
const at = (iso: string) => Date.parse(iso);
const releaseId = 'digest-desk|digest:2026-11-22T08:00:00.000Z';

const delivered = collectAlertsAndDigests;

const heldKeys = ['id:g-1', 'id:g-2', 'id:g-3'];

/** Three articles held for the 08:00 digest by a run at 07:00; the clock then moves to 08:00. */
async function heldForDigest(): Promise<TestStack> {
  const stack = await startTestStack({ audiences, rules, simulator: { articles: [] } });
  stack.setTime(at('2026-11-22T07:00:00Z'));
  stack.simulator?.publish(
    ...[1, 2, 3].map((index) => ({
      articleId: `g-${index}`,
      title: `Markets story ${index}`,
      publishedAt: at(`2026-11-22T06:${10 * index}:00Z`),
    })),
  );
  const summary = await stack.run();
  expect(summary).toMatchObject({ status: 'completed', heldForDigest: 3, notificationsPublished: 3 });
  stack.setTime(at('2026-11-22T08:00:00Z'));
  return stack;
}

describe('held alerts and digests survive every failure', () => {
  let stack: TestStack | undefined;
  afterEach(async () => {
    await stack?.stop();
    stack = undefined;
  });

  it('a crash before the hold is written leaves the watermark; the next run holds the articles, once', async () => {
    stack = await startTestStack({ audiences, rules, simulator: { articles: [] } });
    const s = stack;
    s.setTime(at('2026-11-22T07:00:00Z'));
    s.simulator?.publish({ articleId: 'g-1', title: 'Markets story', publishedAt: at('2026-11-22T06:30:00Z') });
    const crashing = stateWith(s.dependencies.state, {
      holdNotifications: async () => {
        throw new Error('simulated crash before the hold write');
      },
    });
    await expect(s.run({ dependencies: { state: crashing } })).rejects.toThrow(/simulated crash/);
    // The watermark may pass the empty day before, never the day of the article.
    expect((await s.dependencies.state.readWatermark())?.at ?? 0).toBeLessThan(at('2026-11-22T06:30:00Z'));
    expect((await s.dependencies.state.readHeld('digest-desk')).items).toEqual([]);

    s.setTime(at('2026-11-22T07:30:00Z'));
    expect(await s.run()).toMatchObject({ status: 'completed', heldForDigest: 1 });
    s.setTime(at('2026-11-22T08:00:00Z'));
    expect(await s.run()).toMatchObject({ digestsSent: 1, digestItemsReleased: 1 });
    const received = await delivered(s, { alerts: [], digests: [] });
    expect(received.digests).toEqual([{ id: releaseId, keys: ['id:g-1'] }]);
    // The alert audience got its alert once, although the crashed run had published it already.
    expect(received.alerts).toEqual(['alerts-desk|id:g-1']);
  });

  it('a crash after the hold is written: the re-read finds the ledger entries and holds nothing twice', async () => {
    stack = await startTestStack({ audiences, rules, simulator: { articles: [] } });
    const s = stack;
    const real = s.dependencies.state;
    s.setTime(at('2026-11-22T07:00:00Z'));
    s.simulator?.publish({ articleId: 'g-1', title: 'Markets story', publishedAt: at('2026-11-22T06:30:00Z') });
    const crashing = stateWith(real, {
      advanceWatermark: async (lease, expected, watermarkAt, now) => {
        if (watermarkAt > at('2026-11-22T06:30:00Z')) throw new Error('simulated crash after the hold write');
        return await real.advanceWatermark(lease, expected, watermarkAt, now);
      },
    });
    await expect(s.run({ dependencies: { state: crashing } })).rejects.toThrow(/simulated crash/);
    expect((await real.readHeld('digest-desk')).items).toHaveLength(1);

    s.setTime(at('2026-11-22T07:30:00Z'));
    expect(await s.run()).toMatchObject({
      status: 'completed',
      notificationsHeld: 0,
      notificationsAlreadyDelivered: 2,
    });
    s.setTime(at('2026-11-22T08:00:00Z'));
    await s.run();
    expect((await delivered(s, { alerts: [], digests: [] })).digests).toEqual([{ id: releaseId, keys: ['id:g-1'] }]);
  });

  it('a crash after the release was claimed, before publishing: the next run sends that digest, once', async () => {
    stack = await heldForDigest();
    const s = stack;
    const real = s.dependencies.notifier;
    const crashing: Notifier = {
      publish: async (messages, options) => {
        if (messages.some((message) => message.key.articleKey.startsWith('digest:'))) {
          throw new Error('simulated crash before publishing the digest');
        }
        return await real.publish(messages, options);
      },
    };
    await expect(s.run({ dependencies: { notifier: crashing } })).rejects.toThrow(/simulated crash/);
    expect((await s.dependencies.state.readHeld('digest-desk')).releases).toHaveLength(1);
    expect((await delivered(s, { alerts: [], digests: [] })).digests).toEqual([]);

    s.setTime(at('2026-11-22T08:05:00Z'));
    expect(await s.run()).toMatchObject({ status: 'completed', digestsSent: 1, digestItemsReleased: 3 });
    s.setTime(at('2026-11-22T08:10:00Z'));
    expect(await s.run()).toMatchObject({ digestsSent: 0 });
    const received = await delivered(s, { alerts: [], digests: [] });
    expect(received.digests).toEqual([{ id: releaseId, keys: heldKeys }]);
    expect(await s.dependencies.state.readHeld('digest-desk')).toEqual({ items: [], releases: [] });
  });

  it('the one accepted duplicate: a crash between SNS accepting a digest and its ledger write repeats only that digest, same id', async () => {
    stack = await heldForDigest();
    const s = stack;
    const real = s.dependencies.state;
    let crashed = false;
    const crashing = stateWith(real, {
      recordDelivered: async (records: readonly DeliveryRecord[]) => {
        if (!crashed && records.some((record) => record.articleKey.startsWith('digest:'))) {
          crashed = true;
          throw new Error('simulated crash between SNS and the digest ledger write');
        }
        await real.recordDelivered(records);
      },
    });
    await expect(s.run({ dependencies: { state: crashing } })).rejects.toThrow(/simulated crash/);
    const first = await delivered(s, { alerts: [], digests: [] });
    expect(first.digests).toEqual([{ id: releaseId, keys: heldKeys }]);

    // A new article arrives before the next run: the claimed digest is sent again as it was.
    s.simulator?.publish({ articleId: 'g-4', title: 'Markets after eight', publishedAt: at('2026-11-22T08:03:00Z') });
    s.setTime(at('2026-11-22T08:05:00Z'));
    expect(await s.run()).toMatchObject({ status: 'completed', digestsSent: 1, digestItemsReleased: 3 });
    s.setTime(at('2026-11-22T08:10:00Z'));
    expect(await s.run()).toMatchObject({ digestsSent: 0, notificationsHeld: 0, notificationsPublished: 0 });
    const all = await delivered(s, first);
    // Exactly that digest twice (consumers drop the repeat by its deliveryId), nothing else.
    expect(all.digests).toEqual([
      { id: releaseId, keys: heldKeys },
      { id: releaseId, keys: heldKeys },
    ]);
    expect(all.alerts.sort()).toEqual([
      'alerts-desk|id:g-1',
      'alerts-desk|id:g-2',
      'alerts-desk|id:g-3',
      'alerts-desk|id:g-4',
    ]);
    // The article published at 08:03 is held for tomorrow's digest, not lost and not squeezed in.
    expect((await real.readHeld('digest-desk')).items.map((item) => item.key.articleKey)).toEqual(['id:g-4']);
  });

  it('a crash after the digest ledger write, before the held items are deleted: the next run only deletes', async () => {
    stack = await heldForDigest();
    const s = stack;
    const crashing = stateWith(s.dependencies.state, {
      finishRelease: async () => {
        throw new Error('simulated crash before deleting the released items');
      },
    });
    await expect(s.run({ dependencies: { state: crashing } })).rejects.toThrow(/simulated crash/);
    s.setTime(at('2026-11-22T08:05:00Z'));
    expect(await s.run()).toMatchObject({ status: 'completed', digestsSent: 0, digestItemsReleased: 3 });
    expect(await s.dependencies.state.readHeld('digest-desk')).toEqual({ items: [], releases: [] });
    expect((await delivered(s, { alerts: [], digests: [] })).digests).toEqual([{ id: releaseId, keys: heldKeys }]);
  });

  it('a second release at the same instant gets its own digest id, so the ledger never takes it for the first', async () => {
    stack = await heldForDigest();
    const s = stack;
    expect(await s.run()).toMatchObject({ digestsSent: 1, digestItemsReleased: 3 });
    // Same clock (a retried invocation, a pinned test clock): an article held now is due now too.
    s.simulator?.publish({ articleId: 'g-4', title: 'Markets at eight', publishedAt: at('2026-11-22T07:59:00Z') });
    expect(await s.run()).toMatchObject({ heldForDigest: 1, digestsSent: 1, digestItemsReleased: 1 });
    expect((await delivered(s, { alerts: [], digests: [] })).digests).toEqual([
      { id: releaseId, keys: heldKeys },
      { id: 'digest-desk|digest:2026-11-22T08:00:00.001Z', keys: ['id:g-4'] },
    ]);
  });

  it('SNS failing a digest past the retries leaves it held and the run incomplete; the next run sends it once', async () => {
    stack = await heldForDigest();
    const s = stack;
    const topic = s.topics.get('digest-desk');
    const faults = installSnsFaults(s.clients.sns, {
      entryFault: (_entry, call) =>
        call.topicArn === topic ? { code: 'InternalError', senderFault: false } : undefined,
    });
    const failed = await s.run();
    faults.uninstall();
    expect(failed).toMatchObject({ status: 'incomplete', digestsFailed: 1, notificationsFailed: 1, digestsSent: 0 });
    // Counted for its audience as in the totals (the run's per-audience table showed 0 failed).
    expect(failed.audiences['digest-desk']).toMatchObject({ failed: 1 });
    expect(failed.reason).toMatch(/1 digest\(s\) could not be published; they stay held/);
    expect((await s.dependencies.state.readHeld('digest-desk')).items).toHaveLength(3);

    s.setTime(at('2026-11-22T08:05:00Z'));
    expect(await s.run()).toMatchObject({ status: 'completed', digestsSent: 1, digestItemsReleased: 3 });
    expect((await delivered(s, { alerts: [], digests: [] })).digests).toEqual([{ id: releaseId, keys: heldKeys }]);
  });

  it('SNS refusing a digest for good parks it for replay; the articles are handled, not held forever', async () => {
    stack = await heldForDigest();
    const s = stack;
    const topic = s.topics.get('digest-desk');
    const faults = installSnsFaults(s.clients.sns, {
      entryFault: (_entry, call) => (call.topicArn === topic ? { code: 'KMSDisabled', senderFault: true } : undefined),
    });
    const summary = await s.run();
    faults.uninstall();
    expect(summary).toMatchObject({ status: 'completed', digestsParked: 1, digestItemsReleased: 3 });
    // Counted for its audience as in the totals (the run's per-audience PARKED column showed 0).
    expect(summary.audiences['digest-desk']).toMatchObject({ parked: 1 });
    const parked = await s.dependencies.state.listUndeliverable('digest-desk');
    expect(parked.map((record) => record.articleKey)).toEqual(['digest:2026-11-22T08:00:00.000Z']);
    expect(parked[0]?.body).toContain('"default"');
    expect(await s.dependencies.state.readHeld('digest-desk')).toEqual({ items: [], releases: [] });
  });

  it('a run past its hard deadline claims no digest; the next run sends it once', async () => {
    stack = await heldForDigest();
    const holdsBefore = await stack.dependencies.state.readHeld('digest-desk');
    // Less time left than the hard margin: the deadline has passed as the run starts.
    const late = await stack.run({ remainingTimeMs: () => 1000 });
    expect(late.digestsSent).toBe(0);
    expect(await stack.dependencies.state.readHeld('digest-desk')).toEqual(holdsBefore);
    expect((await delivered(stack, { alerts: [], digests: [] })).digests).toEqual([]);

    const next = await stack.run();
    expect(next.digestsSent).toBe(1);
    expect((await delivered(stack, { alerts: [], digests: [] })).digests).toEqual([{ id: releaseId, keys: heldKeys }]);
  });
});
