/**
 * An update notice corrects an alert the audience has (docs/delivery.md, "Update notices"). An
 * article held for a digest whose release did not reach the audience (SNS refused the digest for
 * good, so it was parked) is not one it has: a later re-read that finds the article changed sends
 * no "Updated:" notice. Before, the notice went out at once, about an article the audience never got.
 */
import { describe, expect, it } from 'vitest';
import { DeliveryPipeline, emptyDeliveryCounts } from '#core/delivery-pipeline';
import { emptyDigestCounts, releaseDueDigests } from '#core/digest-release';
import { type Article, AudienceSchema } from '#core/model';
import { deliveryId } from '#core/ports';
import { article, MemoryNotifier, matchOf, memoryLog } from '#test/fake-ports';
import { MemoryHoldingStateStore } from '#test/memory-holds';

const audience = AudienceSchema.parse({
  audienceId: 'desk',
  topicArn: 'arn:aws:sns:us-east-1:123456789012:desk',
  timeZone: 'UTC',
  deliveryMode: 'digest',
  digestTimes: ['08:00'],
  updates: 'notify',
});
const audiences = new Map([['desk', audience]]);

describe('an update notice for an article whose digest never reached the audience', () => {
  it('is not sent when the digest was parked; an article whose digest went out gets its notice', async () => {
    const state = new MemoryHoldingStateStore();
    let refuseDigests = true;
    const notifier = new MemoryNotifier((message) =>
      refuseDigests && message.key.articleKey.startsWith('digest:')
        ? { code: 'KMS.DisabledException', reason: 'refused for good (test)', permanent: true }
        : undefined,
    );
    const log = memoryLog();
    let clock = Date.UTC(2026, 10, 22, 6, 0);
    const deliver = async (articles: readonly Article[]) => {
      const pipeline = new DeliveryPipeline({
        state,
        notifier,
        log,
        now: () => clock,
        audiences,
        ledgerFlushDelayMs: 0,
        publishSignal: new AbortController().signal,
        lateBefore: 0,
        counts: emptyDeliveryCounts(),
        applyDeliveryPreferences: true,
      });
      await pipeline.add(articles.map((item) => matchOf('desk', item)));
      await pipeline.flush();
    };
    const release = () =>
      releaseDueDigests({
        state,
        notifier,
        log,
        now: () => clock,
        audiences,
        publishSignal: new AbortController().signal,
        counts: { ...emptyDigestCounts(), notificationsFailed: 0, notificationsUnrenderable: 0 },
      });

    // 06:00 held; the 08:00 digest is refused for good and parked.
    await deliver([article('1')]);
    clock = Date.UTC(2026, 10, 22, 8, 5);
    await release();
    expect(state.ledger.get(deliveryId({ audienceId: 'desk', articleKey: 'id:1' }))?.releaseOutcome).toBe('parked');
    // 09:00 another is held; the next digest (08:00 tomorrow) goes out.
    refuseDigests = false;
    clock = Date.UTC(2026, 10, 22, 9, 0);
    await deliver([article('2')]);
    clock = Date.UTC(2026, 10, 23, 8, 5);
    await release();
    expect(state.ledger.get(deliveryId({ audienceId: 'desk', articleKey: 'id:2' }))?.releaseOutcome).toBe('sent');
    const before = notifier.published.length;

    // Both come back updated.
    clock = Date.UTC(2026, 10, 23, 9, 0);
    await deliver([article('1', { status: 'UPDATED' }), article('2', { status: 'UPDATED' })]);
    const notices = notifier.published.slice(before).map((message) => message.key.articleKey);
    expect(notices).toEqual(['update:id:2#status=UPDATED']);
  });
});
