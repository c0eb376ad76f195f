/**
 * The stack's `defaultLocale` through the real alert run, moto server and the simulator: with
 * `DEFAULT_LOCALE=ko-KR`, an audience without `locale` gets its alerts and its digest in Korean,
 * and an audience that says `locale: en-US` stays English. The words are the catalogs' own, so
 * the test follows the catalogs rather than pinning their wording.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { messagesFor } from '#core/messages/catalog';
import type { SandboxAudience } from '#sandbox/examples';
import { startTestStack, type TestStack } from '#test/run-harness';

const at = (iso: string) => Date.parse(iso);

describe('defaultLocale in the alert run', () => {
  let stack: TestStack | undefined;
  afterEach(async () => {
    await stack?.stop();
    stack = undefined;
  });

  it('renders audiences without locale in the default locale, alerts and digests, and leaves en-US audiences English', async () => {
    const audiences: SandboxAudience[] = [
      {
        item: { audienceId: 'seoul-desk', name: 'Seoul desk', timeZone: 'Asia/Seoul' },
        subscribers: [{ protocol: 'email', endpoint: 'seoul@example.com' }],
      },
      {
        item: { audienceId: 'london-desk', name: 'London desk', timeZone: 'Europe/London', locale: 'en-US' },
        subscribers: [{ protocol: 'email', endpoint: 'london@example.com' }],
      },
      {
        item: {
          audienceId: 'morning-desk',
          name: 'Morning desk',
          timeZone: 'Asia/Seoul',
          deliveryMode: 'digest',
          digestTimes: ['08:00'],
        },
        subscribers: [{ protocol: 'email', endpoint: 'morning@example.com' }],
      },
    ];
    const rules = ['seoul-desk', 'london-desk', 'morning-desk'].map((audienceId) => ({
      ruleId: `${audienceId}-rates`,
      audienceId,
      keywords: ['rates'],
    }));
    stack = await startTestStack({
      audiences,
      rules,
      simulator: { articles: [] },
      epoch: at('2026-11-23T07:30:00+09:00'),
      environment: { DEFAULT_LOCALE: 'ko-KR' },
    });
    expect(stack.config.run.defaultLocale).toBe('ko-KR');
    stack.simulator?.publish({
      articleId: 'rates-1',
      title: 'Central bank holds rates',
      publishedAt: at('2026-11-23T07:20:00+09:00'),
      categories: ['002000000'],
      media: 'M001',
    });
    expect(await stack.run()).toMatchObject({ status: 'completed', notificationsPublished: 2, heldForDigest: 1 });
    stack.setTime(at('2026-11-23T08:01:00+09:00'));
    expect(await stack.run()).toMatchObject({ status: 'completed', digestsSent: 1 });

    const korean = messagesFor('ko');
    const english = messagesFor('en');
    const inbox = await stack.collectInbox();
    const emailOf = (audienceId: string) =>
      inbox.filter((item) => item.audienceId === audienceId && item.channel === 'email');

    const [seoul] = emailOf('seoul-desk');
    expect(seoul?.text).toContain(korean.email.whyHeading);
    expect(seoul?.text).not.toContain(english.email.whyHeading);

    const [london] = emailOf('london-desk');
    expect(london?.text).toContain(english.email.whyHeading);
    expect(london?.text).not.toContain(korean.email.whyHeading);

    const [digest] = emailOf('morning-desk');
    expect(digest?.text).toContain(korean.digest.title('Morning desk', 1));
    expect(digest?.text).not.toContain(english.digest.title('Morning desk', 1));

    const documents = (await stack.collectDeliveries()).map((delivery) => [
      delivery.audienceId,
      (delivery.body.newsAlerts as { locale?: string }).locale,
    ]);
    expect(documents.sort()).toEqual([
      ['london-desk', 'en-US'],
      ['morning-desk', 'ko-KR'],
      ['seoul-desk', 'ko-KR'],
    ]);
  });
});
