/**
 * DESIGN section 3, "No alert is sent twice" and "No alert is lost" on the delivery side: SNS
 * fails part of a batch, a topic is gone, the run crashes after publishing. The one accepted
 * duplicate (a crash between SNS accepting a message and its ledger write) is stated exactly.
 */
import { DeleteTopicCommand } from '@aws-sdk/client-sns';
import { afterEach, describe, expect, it } from 'vitest';
import type { DeliveryRecord } from '#core/ports';
import {
  firstWindowStart,
  quietAudiences,
  startTestStack,
  stateWith,
  type TestStack,
  testEpoch,
} from '#test/run-harness';
import { installSnsFaults } from '#test/sns-faults';

const exact = { missing: [], unexpected: [], duplicates: [] };

describe('no alert is lost or sent twice on the delivery side', () => {
  let stack: TestStack | undefined;
  afterEach(async () => {
    await stack?.stop();
    stack = undefined;
  });

  it('retries entries SNS fails once within the run, and delivers them once', async () => {
    stack = await startTestStack();
    const failedOnce = new Set<string>();
    const faults = installSnsFaults(stack.clients.sns, {
      entryFault: ({ deliveryId }) => {
        if (!deliveryId?.startsWith('chips-team|') || failedOnce.has(deliveryId)) return undefined;
        failedOnce.add(deliveryId);
        return { code: 'InternalError', senderFault: false };
      },
    });
    const summary = await stack.run();
    faults.uninstall();
    expect(failedOnce.size).toBeGreaterThan(0);
    expect(summary.status).toBe('completed');
    expect(await stack.verifyExactlyOnce(firstWindowStart(stack))).toEqual(exact);
  });

  it('SNS partial batch failure that outlasts the retries holds the watermark; the next run sends exactly the rest', async () => {
    stack = await startTestStack();
    const faults = installSnsFaults(stack.clients.sns, {
      entryFault: ({ deliveryId }) =>
        deliveryId?.startsWith('quake-oncall|') ? { code: 'InternalError', senderFault: false } : undefined,
    });
    const first = await stack.run();
    faults.uninstall();
    expect(first.status).toBe('incomplete');
    expect(first.notificationsFailed).toBe(first.audiences['quake-oncall']?.matched);
    expect(first.notificationsFailed).toBeGreaterThan(0);
    expect(await stack.dependencies.state.readWatermark()).toBeUndefined();
    const partial = await stack.verifyExactlyOnce(firstWindowStart(stack));
    expect(partial.missing.length).toBe(first.notificationsFailed);
    expect(partial.missing.every((id) => id.startsWith('quake-oncall|'))).toBe(true);

    const second = await stack.run();
    expect(second.status).toBe('completed');
    expect(second.notificationsPublished).toBe(first.notificationsFailed);
    expect(await stack.verifyExactlyOnce(firstWindowStart(stack))).toEqual(exact);
  });

  it('parks notifications for a deleted topic for replay, and every other audience still gets its alerts', async () => {
    stack = await startTestStack();
    await stack.clients.sns.send(new DeleteTopicCommand({ TopicArn: stack.topics.get('partner-feed') }));

    const summary = await stack.run();
    expect(summary.status).toBe('completed');
    expect(summary.notificationsParked).toBeGreaterThan(0);
    expect((await stack.dependencies.state.readWatermark())?.at).toBe(testEpoch);
    const parked = await stack.dependencies.state.listUndeliverable('partner-feed');
    expect(parked).toHaveLength(summary.notificationsParked);
    expect(parked.every((record) => record.code.includes('NotFound') && record.body.includes('"default"'))).toBe(true);

    const outcome = await stack.verifyExactlyOnce(firstWindowStart(stack));
    expect(outcome.unexpected).toEqual([]);
    expect(outcome.duplicates).toEqual([]);
    expect(outcome.missing.sort()).toEqual(parked.map((record) => `partner-feed|${record.articleKey}`).sort());
  });

  it('a crash after publishing but before the watermark write: the next run sends nothing twice', async () => {
    stack = await startTestStack();
    const real = stack.dependencies.state;
    const crashing = stateWith(real, {
      advanceWatermark: async () => {
        throw new Error('simulated crash before the watermark write');
      },
    });
    await expect(stack.run({ dependencies: { state: crashing } })).rejects.toThrow(/simulated crash/);
    const afterCrash = await stack.deliveredSoFar();
    expect(afterCrash.length).toBeGreaterThan(0);
    expect(await real.readWatermark()).toBeUndefined();

    const summary = await stack.run();
    expect(summary.status).toBe('completed');
    // Everything the crashed run published is recognised; only the day it never reached is new.
    expect(summary.notificationsAlreadyDelivered).toBe(afterCrash.length);
    expect(await stack.verifyExactlyOnce(firstWindowStart(stack))).toEqual(exact);
  });

  it('the one accepted duplicate: only notifications SNS accepted whose ledger write never happened are sent again', async () => {
    stack = await startTestStack();
    const real = stack.dependencies.state;
    let crashed = false;
    const crashing = stateWith(real, {
      recordDelivered: async (records: readonly DeliveryRecord[]) => {
        if (!crashed) {
          crashed = true;
          throw new Error('simulated crash between SNS and the ledger write');
        }
        await real.recordDelivered(records);
      },
    });
    await expect(stack.run({ dependencies: { state: crashing } })).rejects.toThrow(/simulated crash/);
    const published = await stack.deliveredSoFar();
    // The window: what SNS accepted but the ledger does not hold.
    const recorded = await real.findDelivered(
      published.map((id) => {
        const [audienceId = '', ...rest] = id.split('|');
        return { audienceId, articleKey: rest.join('|') };
      }),
    );
    const unrecorded = published.filter((id) => !recorded.has(id));
    expect(unrecorded.length).toBeGreaterThan(0);

    await stack.run();
    const outcome = await stack.verifyExactlyOnce(firstWindowStart(stack));
    expect(outcome.missing).toEqual([]);
    expect(outcome.unexpected).toEqual([]);
    expect(outcome.duplicates.sort()).toEqual(unrecorded.sort());
  });

  it('an article the provider re-sends with a new status is not alerted again', async () => {
    stack = await startTestStack();
    await stack.run();
    const simulator = stack.simulator!;
    const delivered = await stack.deliveredSoFar();
    const quake = simulator
      .articles()
      .find(
        (article) =>
          delivered.includes(`quake-oncall|id:${article.articleId}`) && article.publishedAt > testEpoch - 30 * 60_000,
      );
    const target =
      quake ?? simulator.articles().find((article) => delivered.includes(`quake-oncall|id:${article.articleId}`));
    expect(target).toBeDefined();
    simulator.publish({
      articleId: target!.articleId,
      title: `${target!.title} (updated)`,
      url: target!.url,
      publishedAt: target!.publishedAt,
      categories: target!.categories.map((category) => category.code),
      media: target!.media.code,
      status: 'UPDATED',
    });
    stack.setTime(testEpoch + 60_000);
    await stack.run();
    expect((await stack.verifyExactlyOnce(firstWindowStart(stack))).duplicates).toEqual([]);
  });

  it('a failed hold write still records every alert SNS accepted: the next run sends none of them again', async () => {
    // partner-feed is in quiet hours (00:00 UTC), so its matches are held; the others go at once.
    const audiences = quietAudiences.map((audience) =>
      audience.item.audienceId === 'partner-feed'
        ? { ...audience, item: { ...audience.item, quietHours: { start: '23:00', end: '06:00' } } }
        : audience,
    );
    // A long flush delay: only an explicit flush can write the ledger before the check below,
    // as in Lambda, where a frozen environment runs no timers.
    stack = await startTestStack({ audiences, environment: { LEDGER_FLUSH_DELAY_MS: '10000' } });
    const real = stack.dependencies.state;
    const failingHolds = stateWith(real, {
      holdNotifications: async () => {
        throw new Error('simulated DynamoDB failure while holding notifications');
      },
    });
    await expect(stack.run({ dependencies: { state: failingHolds } })).rejects.toThrow(/holding notifications/);
    const published = await stack.deliveredSoFar();
    expect(published.length).toBeGreaterThan(0);
    const recorded = await real.findDelivered(
      published.map((id) => {
        const [audienceId = '', ...rest] = id.split('|');
        return { audienceId, articleKey: rest.join('|') };
      }),
    );
    expect(published.filter((id) => !recorded.has(id))).toEqual([]);

    await stack.run();
    const outcome = await stack.verifyExactlyOnce(firstWindowStart(stack));
    expect(outcome.duplicates).toEqual([]);
    expect(outcome.unexpected).toEqual([]);
    // Only the audience in quiet hours is still waiting: its alerts are held for the digest.
    expect(outcome.missing.every((id) => id.startsWith('partner-feed|'))).toBe(true);
  });
});
