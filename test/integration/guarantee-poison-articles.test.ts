/**
 * DESIGN section 3, "Poison data never stops all alerting", for articles (issue 10, item 12): an
 * article whose alert can never be published as it is (a 300 KB link, a link to the metadata
 * service, credentials in the link) is parked for review and `news-alerts replay --parked` with
 * an alarmed metric, never silently dropped, and never blocks the rest: every other alert goes out
 * once and the watermark moves on. What is parked is a complete alert without the link, which SNS
 * accepts as it is.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { firstWindowStart, startTestStack, type TestStack, testEpoch } from '#test/run-harness';

const HOUR_MS = 60 * 60 * 1000;

const poison = [
  { articleId: 'poison-long', url: `https://news.example.com/quakes/${'a'.repeat(300 * 1024)}` },
  { articleId: 'poison-imds', url: 'http://169.254.169.254/latest/meta-data/iam/security-credentials/' },
  { articleId: 'poison-creds', url: 'https://reader:secret@news.example.com/quakes/1' },
  { articleId: 'poison-local', url: 'http://localhost:8080/admin' },
];

describe('poison articles', () => {
  let stack: TestStack | undefined;
  afterEach(async () => {
    await stack?.stop();
    stack = undefined;
  });

  it('are parked with an alarmed count, while every other alert goes out once and the watermark moves on', async () => {
    stack = await startTestStack();
    stack.simulator!.publish(
      ...poison.map(({ articleId, url }, index) => ({
        articleId,
        title: `Earthquake report ${index + 1}`,
        url,
        publishedAt: testEpoch - HOUR_MS,
      })),
    );

    const summary = await stack.run();
    expect(summary.status).toBe('completed');
    // NotificationsParked is the metric the notifications-parked alarm watches.
    expect(summary.notificationsParked).toBe(poison.length);
    expect(summary.notificationsUnrenderable).toBe(poison.length);
    expect(summary.audiences['quake-oncall']?.parked).toBe(poison.length);
    expect((await stack.dependencies.state.readWatermark())?.at).toBe(testEpoch);

    // Everything but the poison was delivered exactly once; the poison was not delivered at all.
    const check = await stack.verifyExactlyOnce(firstWindowStart(stack));
    expect(check.unexpected).toEqual([]);
    expect(check.duplicates).toEqual([]);
    expect(check.missing.sort()).toEqual(poison.map(({ articleId }) => `quake-oncall|id:${articleId}`).sort());

    const parked = await stack.dependencies.state.listUndeliverable('quake-oncall');
    expect(parked.map((record) => record.articleKey).sort()).toEqual(
      poison.map(({ articleId }) => `id:${articleId}`).sort(),
    );
    for (const record of parked) {
      expect(record.code).toBe('UnpublishableLink');
      const url = poison.find(({ articleId }) => `id:${articleId}` === record.articleKey)?.url ?? '';
      expect(record.body).not.toContain(url.slice(0, 40));
      expect(record.reason).not.toContain(url);
    }
    expect(
      stack.log.lines.filter((line) => line.includes('"ERROR"') && line.includes('could not render a notification')),
    ).toHaveLength(poison.length);

    // What `news-alerts replay --parked` would send: SNS takes it, subscribers get the alert without the link.
    const topicArn = stack.topics.get('quake-oncall') ?? '';
    const outcome = await stack.dependencies.notifier.publish(
      parked.map((record) => ({
        key: { audienceId: record.audienceId, articleKey: record.articleKey },
        topicArn,
        subject: record.subject,
        body: record.body,
        ruleIds: ['quakes'],
      })),
      { onPublished: async () => {} },
    );
    expect(outcome.failed).toEqual([]);
    const replayed = (await stack.collectDeliveries()).filter((delivery) =>
      delivery.articleKey.startsWith('id:poison'),
    );
    expect(replayed.map((delivery) => delivery.articleKey).sort()).toEqual(
      poison.map(({ articleId }) => `id:${articleId}`).sort(),
    );
  });

  it('are parked again, not sent, when a later run reads them again', async () => {
    stack = await startTestStack();
    stack.simulator!.publish({ ...poison[1], title: 'Earthquake report', publishedAt: testEpoch - HOUR_MS });
    expect((await stack.run()).notificationsParked).toBe(1);

    stack.setTime(testEpoch + HOUR_MS);
    const again = await stack.run();
    expect(again.status).toBe('completed');
    expect(again.notificationsPublished).toBe(0);
    expect(again.notificationsParked).toBe(1);
    expect(await stack.dependencies.state.listUndeliverable('quake-oncall')).toHaveLength(1);
    expect((await stack.deliveredSoFar()).filter((entry) => entry.includes('poison'))).toEqual([]);
  });
});
