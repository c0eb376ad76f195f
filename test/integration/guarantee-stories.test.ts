/**
 * Issue 13, "one story, one alert", against moto and the news API simulator with the real alert
 * run, story index and ledger: 8 copies of one story from 5 media over two runs reach a
 * `collapse: story` audience as exactly one alert and a `collapse: none` audience as 8; a run that
 * crashes between copies loses nothing and lets no second copy through; an article that returns
 * `UPDATED` gives one update notice under `updates: notify` (also after more re-reads) and none
 * under `ignore`. What each audience received is read from its SQS subscriber (the audit queue).
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { AlertRunDependencies } from '#core/alert-run';
import { type DeliveryKey, type DeliveryRecord, deliveryId, type Notifier, storyMarkerKey } from '#core/ports';
import type { SandboxAudience } from '#sandbox/examples';
import type { DeliveredNotification } from '#sandbox/local-stack';
import type { SimArticleInput } from '#sandbox/news-simulator-data';
import { startTestStack, stateWith, type TestStack, testEpoch } from '#test/run-harness';

const audiences: SandboxAudience[] = [
  { item: { audienceId: 'story-desk', timeZone: 'UTC', collapse: 'story' }, subscribers: [] },
  { item: { audienceId: 'every-copy', timeZone: 'UTC', collapse: 'none' }, subscribers: [] },
  {
    item: { audienceId: 'updates-notify', timeZone: 'UTC', collapse: 'story', updates: 'notify' },
    subscribers: [],
  },
  {
    item: { audienceId: 'updates-ignore', timeZone: 'UTC', collapse: 'story', updates: 'ignore' },
    subscribers: [],
  },
];
const ruleFor = (audienceId: string) => ({
  ruleId: `${audienceId}-chips`,
  audienceId,
  keywords: ['Hanbit Semiconductor'],
});
const rules = audiences.map((audience) => ruleFor(audience.item.audienceId));

const minute = 60_000;
const headline = 'Hanbit Semiconductor to build $12 billion memory chip plant in Yongin, creating 3,000 jobs';
const lead =
  'Hanbit Semiconductor said on Monday it will invest $12 billion in a new memory chip plant in Yongin, ' +
  'south of Seoul, with production of high-bandwidth memory starting in 2029 and about 3,000 new jobs.';
const more = ' The company said the plant would double its output of chips used in artificial intelligence servers.';

/** Eight copies of one wire story from five media: prefixes, credits, punctuation, shortened leads. */
const copies: SimArticleInput[] = [
  { articleId: 'story-1', media: 'M001', title: headline, summary: lead + more },
  { articleId: 'story-2', media: 'M002', title: `[속보] ${headline}`, summary: lead + more },
  { articleId: 'story-3', media: 'M003', title: `UPDATE 2-${headline}`, summary: lead },
  { articleId: 'story-4', media: 'M201', title: `${headline} - Example Wire Service`, summary: lead + more },
  { articleId: 'story-5', media: 'M202', title: `BREAKING: ${headline}`, summary: lead },
  { articleId: 'story-6', media: 'M001', title: `${headline}.`, summary: lead + more },
  { articleId: 'story-7', media: 'M002', title: `(종합) ${headline}`, summary: lead },
  { articleId: 'story-8', media: 'M003', title: headline.replace(', creating', ' - creating'), summary: lead + more },
];
/** Same company, same day, another story: must stay its own alert. */
const otherStory: SimArticleInput = {
  articleId: 'other-1',
  media: 'M002',
  title: 'Hanbit Semiconductor shares fall 6% after first quarterly loss in a decade',
  summary:
    'Shares of Hanbit Semiconductor fell 6% on Monday after the chipmaker reported its first quarterly loss ' +
    'in ten years, hit by weak smartphone demand and falling prices of commodity DRAM.',
};

const keyOf = (input: SimArticleInput) => `id:${input.articleId}`;

/** Publishes articles at the stack's clock, `at` minutes before it (newest last). */
function publish(stack: TestStack, articles: readonly SimArticleInput[]): void {
  stack.simulator?.publish(
    ...articles.map((article, index) => ({
      categories: ['002000000'],
      status: 'PUBLISHED',
      ...article,
      publishedAt: stack.time() - (articles.length - index) * minute,
    })),
  );
}

/** Every notification each audience received so far, in arrival order (repeats kept). */
async function receivedBy(stack: TestStack, into: Map<string, DeliveredNotification[]>) {
  for (const notification of await stack.collectDeliveries()) {
    const list = into.get(notification.audienceId) ?? [];
    list.push(notification);
    into.set(notification.audienceId, list);
  }
  return into;
}

const articleKeys = (list: readonly DeliveredNotification[] | undefined) =>
  (list ?? []).map((notification) => notification.articleKey);
const isUpdate = (notification: DeliveredNotification) => notification.kind === 'update';

async function ledgerOf(stack: TestStack, audienceId: string, keys: readonly string[]) {
  const wanted: DeliveryKey[] = keys.map((articleKey) => ({ audienceId, articleKey }));
  const entries = await stack.dependencies.state.readDeliveries(wanted);
  return wanted.map((key) => entries.get(deliveryId(key)));
}

/** Asserts every copy is handled in `audienceId`'s ledger: one lead sent, the others collapsed into its story. */
async function expectOneLeadRestCollapsed(stack: TestStack, audienceId: string, keys: readonly string[]) {
  const entries = await ledgerOf(stack, audienceId, keys);
  expect(entries.every((entry) => entry !== undefined)).toBe(true);
  const leads = entries.filter((entry) => entry?.collapsedInto === undefined) as DeliveryRecord[];
  expect(leads).toHaveLength(1);
  const storyId = leads[0]?.storyId;
  expect(storyId).toBeDefined();
  for (const entry of entries) {
    if (entry === leads[0]) continue;
    expect(entry).toMatchObject({ collapsedInto: storyId, storyId });
  }
  const marker = await stack.dependencies.state.readDeliveries([storyMarkerKey(audienceId, storyId ?? '')]);
  expect([...marker.values()][0]?.leadArticleKey).toBe(leads[0]?.articleKey);
  return { lead: leads[0] as DeliveryRecord, storyId: storyId as string };
}

describe('one story, one alert', () => {
  let stack: TestStack | undefined;
  afterEach(async () => {
    await stack?.stop();
    stack = undefined;
  });

  const start = async (environment: Record<string, string> = {}, extra: readonly SandboxAudience[] = []) =>
    await startTestStack({
      audiences: [...audiences, ...extra],
      rules: [...rules, ...extra.map((audience) => ruleFor(audience.item.audienceId))],
      simulator: { articles: [] },
      epoch: testEpoch,
      environment,
    });

  it('8 copies from 5 media over two runs: one alert for a `story` audience, 8 for a `none` audience', async () => {
    stack = await start();
    const s = stack;
    const received = new Map<string, DeliveredNotification[]>();
    publish(s, [...copies.slice(0, 4), otherStory]);
    const first = await s.run();
    expect(first.status).toBe('completed');

    s.setTime(testEpoch + 10 * minute);
    publish(s, copies.slice(4));
    const second = await s.run();
    expect(second.status).toBe('completed');
    await receivedBy(s, received);

    const story = articleKeys(received.get('story-desk')).filter((key) => key !== keyOf(otherStory));
    expect(story).toHaveLength(1);
    expect(articleKeys(received.get('story-desk'))).toContain(keyOf(otherStory));
    expect(articleKeys(received.get('every-copy')).sort()).toEqual([...copies, otherStory].map(keyOf).sort());
    // Seven copies collapsed in each of the three audiences that collapse stories.
    expect(first.notificationsCollapsed + second.notificationsCollapsed).toBe(21);
    expect(second.audiences['story-desk']).toMatchObject({ collapsed: 4, published: 0 });

    const { lead } = await expectOneLeadRestCollapsed(s, 'story-desk', copies.map(keyOf));
    expect(story).toEqual([lead.articleKey]);
  });

  it('a run that crashes right after the lead was accepted, then a normal run: one alert, every copy handled', async () => {
    stack = await start();
    const s = stack;
    const received = new Map<string, DeliveredNotification[]>();
    publish(s, copies.slice(0, 4));
    // The notifier fails the run as soon as SNS has accepted story-desk's lead.
    const real = s.dependencies.notifier;
    const crashing: Notifier = {
      publish: (messages, options) =>
        real.publish(messages, {
          ...options,
          onPublished: async (batch) => {
            await options.onPublished(batch);
            if (batch.some(({ message }) => message.key.audienceId === 'story-desk')) {
              throw new Error('simulated crash after the lead was accepted');
            }
          },
        }),
    };
    await expect(s.run({ dependencies: { notifier: crashing } })).rejects.toThrow(/simulated crash/);

    s.setTime(testEpoch + 10 * minute);
    publish(s, copies.slice(4));
    const after = await s.run();
    expect(after.status).toBe('completed');
    await receivedBy(s, received);
    expect(articleKeys(received.get('story-desk'))).toHaveLength(1);
    expect(articleKeys(received.get('every-copy')).sort()).toEqual(copies.map(keyOf).sort());
    await expectOneLeadRestCollapsed(s, 'story-desk', copies.map(keyOf));
  });

  it('a process that dies after SNS took the lead and before any ledger write: later copies read first still collapse', async () => {
    // A long flush delay: only writes the pipeline awaits reach the table before the process
    // dies, as in Lambda, where a frozen or killed environment runs no timers.
    stack = await start({ LEDGER_FLUSH_DELAY_MS: '10000' });
    const s = stack;
    const received = new Map<string, DeliveredNotification[]>();
    publish(s, copies.slice(0, 4));
    // After SNS accepts story-desk's lead the process is gone: nothing it would write afterwards
    // (the lead's ledger entry, the watermark, the run record, the lease release) is written.
    const realState = s.dependencies.state;
    const realNotifier = s.dependencies.notifier;
    let dead = false;
    const whileAlive =
      <A extends unknown[], R>(write: (...args: A) => Promise<R>) =>
      async (...args: A): Promise<R> => {
        if (dead) throw new Error('the process is gone');
        return await write(...args);
      };
    const state = stateWith(realState, {
      recordDelivered: whileAlive(realState.recordDelivered.bind(realState)),
      holdNotifications: whileAlive(realState.holdNotifications.bind(realState)),
      advanceWatermark: whileAlive(realState.advanceWatermark.bind(realState)),
      writeReadingState: whileAlive(realState.writeReadingState.bind(realState)),
      recordRun: whileAlive(realState.recordRun.bind(realState)),
      releaseLease: whileAlive(realState.releaseLease.bind(realState)),
    });
    const notifier: Notifier = {
      publish: (messages, options) =>
        realNotifier.publish(messages, {
          ...options,
          onPublished: async (batch) => {
            if (batch.some(({ message }) => message.key.audienceId === 'story-desk')) {
              dead = true;
              throw new Error('the process died after SNS accepted the lead');
            }
            await options.onPublished(batch);
          },
        }),
    };
    const dependencies: Partial<AlertRunDependencies> = { state, notifier };
    await expect(s.run({ dependencies })).rejects.toThrow();
    await receivedBy(s, received);
    const sentLead = articleKeys(received.get('story-desk'));
    expect(sentLead).toHaveLength(1);

    // The next run starts once the dead run's lease has expired; newer copies come first in its
    // read (the provider lists newest first), before the lead that was sent but never recorded.
    s.setTime(testEpoch + s.config.run.leaseDurationMs + 10 * minute);
    publish(s, copies.slice(4));
    const after = await s.run();
    expect(after.status).toBe('completed');
    await receivedBy(s, received);
    // The one accepted duplicate (DESIGN section 3): the lead SNS took but the ledger never
    // recorded goes again. No other copy of the story ever reaches the audience.
    expect(new Set(articleKeys(received.get('story-desk')))).toEqual(new Set(sentLead));
    expect(articleKeys(received.get('story-desk'))).toHaveLength(2);
    const { lead } = await expectOneLeadRestCollapsed(s, 'story-desk', copies.map(keyOf));
    expect([lead.articleKey]).toEqual(sentLead);
  });

  it('an article that returns UPDATED: one update notice under `notify`, also after more re-reads; none under `ignore`', async () => {
    stack = await start();
    const s = stack;
    const received = new Map<string, DeliveredNotification[]>();
    const story = copies.slice(0, 4);
    publish(s, story);
    await s.run();
    await receivedBy(s, received);
    expect(articleKeys(received.get('updates-notify'))).toHaveLength(1);
    expect(articleKeys(received.get('updates-ignore'))).toHaveLength(1);
    const sentAt = new Map(
      (s.simulator?.articles() ?? []).map((article) => [`id:${article.articleId}`, article.publishedAt]),
    );
    const republish = (input: SimArticleInput, changes: Partial<SimArticleInput>) =>
      s.simulator?.publish({
        categories: ['002000000'],
        ...input,
        publishedAt: sentAt.get(keyOf(input)) ?? 0,
        ...changes,
      });

    // The story's lead (the copy the audiences received) comes back UPDATED, and so does a copy
    // they never received: one notice, about the lead.
    const [leadKey] = articleKeys(received.get('updates-notify'));
    const lead = story.find((input) => keyOf(input) === leadKey)!;
    const others = story.filter((input) => input !== lead);
    s.setTime(testEpoch + 5 * minute);
    republish(lead, { status: 'UPDATED' });
    republish(others[0]!, { status: 'UPDATED' });
    const second = await s.run();
    expect(second.status).toBe('completed');
    await receivedBy(s, received);
    const notices = (received.get('updates-notify') ?? []).filter(isUpdate);
    expect(notices).toHaveLength(1);
    expect(notices[0]?.articleKey).toBe(leadKey);
    expect(second.updateNotices).toBe(1);
    // The lead in story-desk and updates-ignore, the lead and the copy in every-copy.
    expect(second.updatesIgnored).toBe(4);
    expect((received.get('updates-ignore') ?? []).filter(isUpdate)).toEqual([]);
    expect(articleKeys(received.get('updates-ignore'))).toHaveLength(1);

    // Re-read again, one more copy UPDATED meanwhile: still the one notice, and the changes seen
    // before are not counted again (the entries took the new status).
    s.setTime(testEpoch + 10 * minute);
    republish(others[1]!, { status: 'UPDATED' });
    const third = await s.run();
    expect(third.status).toBe('completed');
    expect(third.updateNotices).toBe(0);
    expect(third.updatesIgnored).toBe(1);
    await receivedBy(s, received);
    expect((received.get('updates-notify') ?? []).filter(isUpdate)).toHaveLength(1);
    expect(received.get('updates-notify')).toHaveLength(2);
    expect(received.get('updates-ignore')).toHaveLength(1);
    expect(received.get('story-desk')).toHaveLength(1);
  });

  it('a digest lists a held story once, with the other outlets its copies ran in', async () => {
    // testEpoch is 00:00 UTC: the story is held at once and released by the 01:00 digest.
    const digestDesk: SandboxAudience = {
      item: {
        audienceId: 'digest-desk',
        timeZone: 'UTC',
        collapse: 'story',
        deliveryMode: 'digest',
        digestTimes: ['01:00'],
      },
      subscribers: [],
    };
    stack = await start({}, [digestDesk]);
    const s = stack;
    publish(s, copies.slice(0, 4));
    const first = await s.run();
    expect(first.audiences['digest-desk']).toMatchObject({ held: 1, collapsed: 3 });

    s.setTime(testEpoch + 65 * minute);
    publish(s, copies.slice(4));
    const second = await s.run();
    expect(second.status).toBe('completed');
    expect(second.audiences['digest-desk']).toMatchObject({ held: 0, collapsed: 4 });
    expect(second.digestsSent).toBe(1);
    const digests = (await s.collectDeliveries()).filter((notification) => notification.audienceId === 'digest-desk');
    expect(digests).toHaveLength(1);
    const [digest] = digests;
    if (digest === undefined) throw new Error('no digest arrived');
    expect(digest.kind).toBe('digest');
    const entries = (
      digest.body.newsAlerts as {
        digest: {
          groups: { entries: { article: { key: string }; alsoIn?: { count: number; outlets: string[] } }[] }[];
        };
      }
    ).digest.groups.flatMap((group) => group.entries);
    expect(entries).toHaveLength(1);
    // The story ran in five outlets: the digest names the others.
    expect(entries[0]?.alsoIn?.count).toBe(4);
    expect(entries[0]?.alsoIn?.outlets.length).toBeGreaterThan(0);
  });
});
