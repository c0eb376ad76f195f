/**
 * Delivery preferences through the real alert run, moto server and the simulator, with a pinned
 * clock: quiet hours (urgent matches bypass them; what they held comes in one digest when they
 * end), daily budgets (the overflow arrives in the next digest as "+N more"), digest mode (one
 * message per digest time), a time-zone change between hold and release, quiet hours changed while
 * alerts are held (the next run plans them again, and the ledger says what became of them), and a
 * daylight-saving transition. Every test checks that each matching article reached its audience exactly once,
 * by alert or digest entry, across all the runs.
 */
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { SandboxAudience } from '#sandbox/examples';
import { compareDeliveries, expectedDeliveries } from '#sandbox/expectations';
import type { SimArticleInput } from '#sandbox/news-simulator';
import { startTestStack, type TestStack } from '#test/run-harness';
import { readLedgerStates } from '../../cli/workbench/ledger-state.ts';

/** What the audit queues received: alerts and digests, in arrival order. */
interface Received {
  readonly alerts: string[];
  readonly digests: { audienceId: string; id: string; keys: string[]; holds: string[] }[];
}

interface DigestPart {
  kind?: string;
  deliveryId: string;
  digest: { holds: string[]; groups: { entries: { article: { key: string } }[] }[] };
}

async function collect(stack: TestStack, into: Received): Promise<Received> {
  for (const notification of await stack.collectDeliveries()) {
    const part = notification.body.newsAlerts as DigestPart;
    if (part.kind === 'digest') {
      into.digests.push({
        audienceId: notification.audienceId,
        id: part.deliveryId,
        keys: part.digest.groups.flatMap((group) => group.entries.map((entry) => entry.article.key)),
        holds: part.digest.holds,
      });
    } else {
      into.alerts.push(`${notification.audienceId}|${notification.articleKey}`);
    }
  }
  return into;
}

/** Every article each audience heard about, by alert or digest entry (repeats kept). */
const heard = (received: Received): string[] => [
  ...received.alerts,
  ...received.digests.flatMap((digest) => digest.keys.map((key) => `${digest.audienceId}|${key}`)),
];

/** Compares what was heard with what the rules match among every article the simulator published. */
function exactlyOnce(stack: TestStack, received: Received, audiences: readonly SandboxAudience[], rules: unknown[]) {
  const expected = expectedDeliveries({
    articles: stack.simulator?.articles() ?? [],
    ruleItems: rules,
    audienceItems: audiences.map((audience) => ({
      ...audience.item,
      topicArn: stack.topics.get(audience.item.audienceId),
    })),
    from: 0,
    to: Number.MAX_SAFE_INTEGER,
    inScope: () => true,
  });
  const byAudience = new Map<string, string[]>();
  for (const entry of heard(received)) {
    const [audienceId = '', ...rest] = entry.split('|');
    byAudience.set(audienceId, [...(byAudience.get(audienceId) ?? []), rest.join('|')]);
  }
  const problems: string[] = [];
  let total = 0;
  for (const [audienceId, check] of compareDeliveries(expected, byAudience)) {
    total += check.expected;
    for (const key of check.missing) problems.push(`missing ${audienceId}|${key}`);
    for (const key of check.unexpected) problems.push(`unexpected ${audienceId}|${key}`);
    for (const key of check.duplicates) problems.push(`twice ${audienceId}|${key}`);
  }
  return { problems, total };
}

const at = (iso: string) => Date.parse(iso);
let counter = 0;
/** Publishes articles on the simulator with the given titles at the given instants. */
function publish(stack: TestStack, ...articles: [title: string, publishedAt: string][]) {
  stack.simulator?.publish(
    ...articles.map(
      ([title, publishedAt]): SimArticleInput => ({
        articleId: `it-${++counter}`,
        title,
        publishedAt: at(publishedAt),
        categories: ['002000000'],
        media: 'M001',
      }),
    ),
  );
}

describe('delivery preferences through the alert run', () => {
  let stack: TestStack | undefined;
  // Article ids restart for every test (each has a stack of its own), so the ids a test expects
  // do not depend on which tests ran before it (--sequence.shuffle).
  beforeEach(() => {
    counter = 0;
  });
  afterEach(async () => {
    await stack?.stop();
    stack = undefined;
  });

  async function start(audiences: SandboxAudience[], rules: Record<string, unknown>[]): Promise<TestStack> {
    stack = await startTestStack({ audiences, rules, simulator: { articles: [] } });
    return stack;
  }

  it('quiet hours: urgent alerts go at once, the rest comes in one digest when they end, exactly once', async () => {
    const audiences: SandboxAudience[] = [
      {
        item: {
          audienceId: 'night-desk',
          name: 'Night desk',
          timeZone: 'Asia/Seoul',
          quietHours: { start: '22:00', end: '07:00' },
        },
        subscribers: [{ protocol: 'email', endpoint: 'night-desk@example.com' }],
      },
    ];
    const rules = [
      { ruleId: 'markets', audienceId: 'night-desk', keywords: ['markets'] },
      { ruleId: 'quakes', audienceId: 'night-desk', keywords: ['quake'], urgent: true },
    ];
    const s = await start(audiences, rules);
    const received: Received = { alerts: [], digests: [] };

    s.setTime(at('2026-11-22T23:30:00+09:00'));
    publish(
      s,
      ['Asian markets slide late', '2026-11-22T23:00:00+09:00'],
      ['Bond markets price in a cut', '2026-11-22T23:10:00+09:00'],
      ['Currency markets calm', '2026-11-22T23:20:00+09:00'],
      ['Quake rattles markets in Tokyo', '2026-11-22T23:25:00+09:00'],
    );
    const evening = await s.run();
    expect(evening).toMatchObject({
      status: 'completed',
      notificationsPublished: 1,
      notificationsHeld: 3,
      heldForQuietHours: 3,
      digestsSent: 0,
    });
    expect((await collect(s, received)).alerts).toEqual(['night-desk|id:it-4']);

    s.setTime(at('2026-11-23T03:00:00+09:00'));
    publish(s, ['Futures markets at night', '2026-11-23T02:50:00+09:00']);
    const night = await s.run();
    // The re-read of the previous day finds the held articles in the ledger: nothing is held twice.
    expect(night).toMatchObject({ notificationsHeld: 1, notificationsPublished: 0, digestsSent: 0 });
    expect(night.notificationsAlreadyDelivered).toBeGreaterThanOrEqual(3);

    s.setTime(at('2026-11-23T06:59:00+09:00'));
    expect(await s.run()).toMatchObject({ digestsSent: 0, notificationsPublished: 0 });

    s.setTime(at('2026-11-23T07:00:00+09:00'));
    expect(await s.run()).toMatchObject({ status: 'completed', digestsSent: 1, digestItemsReleased: 4 });
    await collect(s, received);
    expect(received.digests).toHaveLength(1);
    expect(received.digests[0]).toMatchObject({
      id: 'night-desk|digest:2026-11-22T22:00:00.000Z',
      holds: ['4 held during your quiet hours (22:00–07:00)'],
    });
    expect(received.digests[0]?.keys.sort()).toEqual(['id:it-1', 'id:it-2', 'id:it-3', 'id:it-5']);

    s.setTime(at('2026-11-23T07:05:00+09:00'));
    publish(s, ['Morning markets open higher', '2026-11-23T07:03:00+09:00']);
    expect(await s.run()).toMatchObject({ notificationsPublished: 1, notificationsHeld: 0, digestsSent: 0 });
    await collect(s, received);
    expect(received.alerts).toEqual(['night-desk|id:it-4', 'night-desk|id:it-6']);
    expect(exactlyOnce(s, received, audiences, rules)).toEqual({ problems: [], total: 6 });

    // The email subscriber got the digest as one readable email naming the rule and the term.
    const emails = (await s.collectInbox()).filter((item) => item.channel === 'email');
    const digestEmail = emails.find((item) => item.text.includes('news digest'));
    expect(digestEmail?.subject).toBe('[Night desk] 4 articles: Futures markets at night');
    expect(digestEmail?.text).toContain('- 4 held during your quiet hours (22:00–07:00)');
    expect(digestEmail?.text.match(/Why: rule markets: keyword "markets"/g)).toHaveLength(4);
    expect(emails).toHaveLength(3);
  });

  it('daily budget: the overflow of a local day arrives in the next digest as "+N more", with the articles', async () => {
    const audiences: SandboxAudience[] = [
      {
        item: { audienceId: 'budget-desk', timeZone: 'UTC', dailyBudget: 3, digestTimes: ['08:00'] },
        subscribers: [],
      },
    ];
    const rules = [{ ruleId: 'chips', audienceId: 'budget-desk', keywords: ['chips'] }];
    const s = await start(audiences, rules);
    const received: Received = { alerts: [], digests: [] };

    s.setTime(at('2026-11-22T12:00:00Z'));
    publish(
      s,
      ...Array.from({ length: 7 }, (_, index): [string, string] => [
        `Chips story ${index}`,
        `2026-11-22T10:${String(index * 5).padStart(2, '0')}:00Z`,
      ]),
    );
    expect(await s.run()).toMatchObject({ notificationsPublished: 3, budgetOverflow: 4, notificationsHeld: 4 });
    const counts = await s.dependencies.state.readDailyCounts([{ audienceId: 'budget-desk', date: '2026-11-22' }]);
    expect(counts.get('budget-desk|2026-11-22')).toBe(3);

    s.setTime(at('2026-11-22T14:00:00Z'));
    publish(s, ['More chips news', '2026-11-22T13:00:00Z'], ['Even more chips news', '2026-11-22T13:30:00Z']);
    expect(await s.run()).toMatchObject({ notificationsPublished: 0, budgetOverflow: 2, digestsSent: 0 });

    // A new local day: a fresh budget, while yesterday's overflow waits for the 08:00 digest.
    s.setTime(at('2026-11-23T07:59:00Z'));
    publish(s, ['Chips at dawn', '2026-11-23T07:55:00Z']);
    expect(await s.run()).toMatchObject({ notificationsPublished: 1, notificationsHeld: 0, digestsSent: 0 });

    s.setTime(at('2026-11-23T08:00:00Z'));
    expect(await s.run()).toMatchObject({ digestsSent: 1, digestItemsReleased: 6 });
    await collect(s, received);
    expect(received.alerts).toHaveLength(4);
    expect(received.digests).toHaveLength(1);
    expect(received.digests[0]?.holds).toEqual(['+6 more over the daily limit of 3 immediate alerts']);
    expect(received.digests[0]?.keys).toHaveLength(6);
    expect(exactlyOnce(s, received, audiences, rules)).toEqual({ problems: [], total: 10 });
  });

  it('digest mode: one message per digest time, each article in exactly one of them', async () => {
    const audiences: SandboxAudience[] = [
      {
        item: {
          audienceId: 'digest-desk',
          timeZone: 'Europe/London',
          deliveryMode: 'digest',
          digestTimes: ['08:00', '18:00'],
        },
        subscribers: [],
      },
    ];
    const rules = [{ ruleId: 'all-economy', audienceId: 'digest-desk', categories: ['002*'] }];
    const s = await start(audiences, rules);
    const received: Received = { alerts: [], digests: [] };

    s.setTime(at('2026-11-22T07:00:00Z'));
    publish(
      s,
      ['Early one', '2026-11-22T06:00:00Z'],
      ['Early two', '2026-11-22T06:20:00Z'],
      ['Early three', '2026-11-22T06:50:00Z'],
    );
    expect(await s.run()).toMatchObject({ heldForDigest: 3, digestsSent: 0 });
    s.setTime(at('2026-11-22T08:00:00Z'));
    expect(await s.run()).toMatchObject({ digestsSent: 1, digestItemsReleased: 3 });
    for (const [clock, title] of [
      ['09:05', 'Midmorning'],
      ['12:05', 'Noon'],
    ] as const) {
      s.setTime(at(`2026-11-22T${clock}:00Z`));
      publish(s, [title, `2026-11-22T${clock.slice(0, 2)}:00:00Z`]);
      expect(await s.run()).toMatchObject({ heldForDigest: 1, digestsSent: 0, notificationsPublished: 0 });
    }
    s.setTime(at('2026-11-22T17:59:00Z'));
    expect(await s.run()).toMatchObject({ digestsSent: 0 });
    s.setTime(at('2026-11-22T18:00:00Z'));
    expect(await s.run()).toMatchObject({ digestsSent: 1, digestItemsReleased: 2 });
    s.setTime(at('2026-11-22T18:30:00Z'));
    expect(await s.run()).toMatchObject({ digestsSent: 0 });

    await collect(s, received);
    expect(received.alerts).toEqual([]);
    expect(received.digests.map((digest) => [digest.id, digest.keys.length])).toEqual([
      ['digest-desk|digest:2026-11-22T08:00:00.000Z', 3],
      ['digest-desk|digest:2026-11-22T18:00:00.000Z', 2],
    ]);
    expect(exactlyOnce(s, received, audiences, rules)).toEqual({ problems: [], total: 5 });
  });

  it('a time-zone change between hold and release applies the new zone’s quiet hours, once', async () => {
    const item = { audienceId: 'tz-desk', timeZone: 'Asia/Seoul', quietHours: { start: '22:00', end: '07:00' } };
    const audiences: SandboxAudience[] = [{ item, subscribers: [] }];
    const rules = [{ ruleId: 'markets', audienceId: 'tz-desk', keywords: ['markets'] }];
    const s = await start(audiences, rules);
    const received: Received = { alerts: [], digests: [] };

    s.setTime(at('2026-11-22T14:30:00Z')); // 23:30 in Seoul: quiet
    publish(s, ['Markets one', '2026-11-22T14:00:00Z'], ['Markets two', '2026-11-22T14:10:00Z']);
    expect(await s.run()).toMatchObject({ heldForQuietHours: 2 });

    // Ops move the audience to London: its quiet hours now end at 07:00 London time.
    await s.clients.documents.send(
      new PutCommand({
        TableName: s.config.tables.audiences,
        Item: { ...item, timeZone: 'Europe/London', topicArn: s.topics.get('tz-desk') },
      }),
    );
    // 06:55 in Seoul (still quiet there), 21:55 in London (not quiet): a new match is sent at once,
    // and what Seoul's night held goes out with the same run (London's quiet hours do not hold it).
    s.setTime(at('2026-11-22T21:55:00Z'));
    publish(s, ['Markets in the London evening', '2026-11-22T21:50:00Z']);
    expect(await s.run()).toMatchObject({
      notificationsPublished: 1,
      notificationsHeld: 0,
      digestsSent: 1,
      digestItemsReleased: 2,
    });
    // 22:00 in London: its quiet hours hold a new match until 07:00 there.
    s.setTime(at('2026-11-22T22:30:00Z'));
    publish(s, ['Markets at the London close', '2026-11-22T22:20:00Z']);
    expect(await s.run()).toMatchObject({ heldForQuietHours: 1, digestsSent: 0 });
    s.setTime(at('2026-11-23T06:59:00Z'));
    expect(await s.run()).toMatchObject({ digestsSent: 0 });
    s.setTime(at('2026-11-23T07:00:00Z'));
    expect(await s.run()).toMatchObject({ digestsSent: 1, digestItemsReleased: 1 });
    s.setTime(at('2026-11-23T07:30:00Z'));
    expect(await s.run()).toMatchObject({ digestsSent: 0 });

    await collect(s, received);
    expect(received.digests.map((digest) => digest.id)).toEqual([
      'tz-desk|digest:2026-11-22T21:55:00.000Z',
      'tz-desk|digest:2026-11-23T07:00:00.000Z',
    ]);
    expect(exactlyOnce(s, received, audiences, rules)).toEqual({ problems: [], total: 4 });
  });

  it('quiet hours changed while alerts are held: the next run releases them once, and the ledger says so', async () => {
    const item = { audienceId: 'seoul-chips', timeZone: 'Asia/Seoul', quietHours: { start: '22:00', end: '07:00' } };
    const audiences: SandboxAudience[] = [{ item, subscribers: [] }];
    const rules = [{ ruleId: 'chips', audienceId: 'seoul-chips', keywords: ['chips'] }];
    const s = await start(audiences, rules);
    const received: Received = { alerts: [], digests: [] };
    const explain = async () =>
      (await readLedgerStates(s.dependencies.state, 'seoul-chips', ['id:it-1', 'id:it-2'])).map(
        (state) => state.status,
      );

    s.setTime(at('2026-11-22T23:50:00+09:00'));
    publish(s, ['Chips exports at night', '2026-11-22T23:45:00+09:00']);
    expect(await s.run()).toMatchObject({ heldForQuietHours: 1 });
    s.setTime(at('2026-11-23T00:10:00+09:00'));
    publish(s, ['Chips after midnight', '2026-11-23T00:05:00+09:00']);
    expect(await s.run()).toMatchObject({ heldForQuietHours: 1, digestsSent: 0 });
    expect(await explain()).toEqual([
      'held for the end of its quiet hours since 2026-11-22T14:50:00Z',
      'held for the end of its quiet hours since 2026-11-22T15:10:00Z',
    ]);

    // At 00:23 the quiet hours become 23:00-00:00 (as `audiences update --quiet-hours` writes it).
    await s.clients.documents.send(
      new PutCommand({
        TableName: s.config.tables.audiences,
        Item: { ...item, quietHours: { start: '23:00', end: '00:00' }, topicArn: s.topics.get('seoul-chips') },
      }),
    );
    s.setTime(at('2026-11-23T00:25:00+09:00'));
    expect(await s.run()).toMatchObject({ status: 'completed', digestsSent: 1, digestItemsReleased: 2 });
    s.setTime(at('2026-11-23T00:40:00+09:00'));
    expect(await s.run()).toMatchObject({ digestsSent: 0, notificationsPublished: 0 });

    await collect(s, received);
    expect(received.digests.map((digest) => digest.id)).toEqual(['seoul-chips|digest:2026-11-22T15:25:00.000Z']);
    expect(exactlyOnce(s, received, audiences, rules)).toEqual({ problems: [], total: 2 });
    expect(await explain()).toEqual([
      'sent 2026-11-22T15:25:00Z in digest digest:2026-11-22T15:25:00.000Z (held for the end of its quiet hours from 2026-11-22T14:50:00Z)',
      "sent 2026-11-22T15:25:00Z in digest digest:2026-11-22T15:25:00.000Z (held for the end of its quiet hours from 2026-11-22T15:10:00Z; released then because the audience's settings changed)",
    ]);
  });

  it('daylight saving: the New York 08:00 digest on the fall-back day goes out at 13:00Z, once', async () => {
    const audiences: SandboxAudience[] = [
      {
        item: { audienceId: 'ny-desk', timeZone: 'America/New_York', deliveryMode: 'digest', digestTimes: ['08:00'] },
        subscribers: [],
      },
    ];
    const rules = [{ ruleId: 'markets', audienceId: 'ny-desk', keywords: ['markets'] }];
    const s = await start(audiences, rules);
    const received: Received = { alerts: [], digests: [] };

    s.setTime(at('2026-11-01T00:00:00Z')); // Oct 31, 20:00 EDT
    publish(s, ['Markets close the month', '2026-10-31T23:00:00Z'], ['Markets after hours', '2026-10-31T23:30:00Z']);
    expect(await s.run()).toMatchObject({ heldForDigest: 2 });
    s.setTime(at('2026-11-01T06:30:00Z')); // 01:30 EST, the second time round
    publish(s, ['Markets in the repeated hour', '2026-11-01T06:15:00Z']);
    expect(await s.run()).toMatchObject({ heldForDigest: 1, digestsSent: 0 });
    s.setTime(at('2026-11-01T12:00:00Z')); // 07:00 EST: 08:00 by yesterday's offset, not a digest time
    expect(await s.run()).toMatchObject({ digestsSent: 0 });
    s.setTime(at('2026-11-01T13:00:00Z')); // 08:00 EST
    expect(await s.run()).toMatchObject({ digestsSent: 1, digestItemsReleased: 3 });
    s.setTime(at('2026-11-01T13:10:00Z'));
    expect(await s.run()).toMatchObject({ digestsSent: 0 });

    await collect(s, received);
    expect(received.digests.map((digest) => digest.id)).toEqual(['ny-desk|digest:2026-11-01T13:00:00.000Z']);
    expect(exactlyOnce(s, received, audiences, rules)).toEqual({ problems: [], total: 3 });
  });
});
