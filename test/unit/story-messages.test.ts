/**
 * What subscribers read about stories (issue 13): update notices (audience setting `updates:
 * notify`) marked as updates on every channel in en, ko and ja, and digests that list a story once
 * with "also in N outlets: A, B, C and N more", from the story records the release step reads once
 * per step (no index, or a failed read: the digest goes out without the line).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { alsoInOf, planDigest, toHeldNotification } from '#core/digest';
import { releaseDueDigests } from '#core/digest-release';
import type { ArticleChange } from '#core/ledger-facts';
import { type Article, type Audience, type AudienceMatch, AudienceSchema } from '#core/model';
import {
  type DeliveryKey,
  maxStoryOutlets,
  type OutboundMessage,
  type StoryIndex,
  type StoryRecord,
  updateNoticeKey,
} from '#core/ports';
import { AlertDocumentSchema } from '#core/published-document';
import { renderNotification, renderUpdateNotice, SUBJECT_MAX_LENGTH } from '#core/render';
import { fitsSms } from '#core/sms';
import { StoryResolver } from '#core/story';
import { renderSlackMessage } from '../../functions/slack-relay/blocks.ts';
import { parseAlertMessage } from '../../functions/slack-relay/message.ts';
import { HoldingMemoryStateStore, MemoryNotifier, memoryLog } from '../support/fake-ports.ts';
import { MemoryStoryStore } from '../support/memory-story-store.ts';

const published = Date.parse('2026-03-14T13:30:00Z');

const audienceIn = (locale: string | undefined, overrides: Record<string, unknown> = {}): Audience =>
  AudienceSchema.parse({
    audienceId: 'desk',
    name: 'Desk',
    topicArn: 'arn:aws:sns:us-east-1:123456789012:desk',
    timeZone: 'Asia/Seoul',
    locale,
    ...overrides,
  });

const article = (overrides: Partial<Article> = {}): Article => ({
  key: 'id:1',
  id: '1',
  title: 'Chip exports rise for a third month',
  summary: 'Semiconductor exports rose again.',
  url: 'https://news.example.com/a/1',
  publishedAt: published,
  categories: ['002000000'],
  categoryNames: ['Economy'],
  media: 'M001',
  mediaName: 'Daily Example',
  status: 'UPDATED',
  ...overrides,
});

const matchFor = (audience: Audience, item = article(), storyId?: string): AudienceMatch => ({
  audienceId: audience.audienceId,
  article: item,
  rules: [{ ruleId: 'chips', urgent: false, reasons: [{ kind: 'keyword', term: 'chip' }] }],
  ...(storyId === undefined ? {} : { storyId }),
});

/** Every channel of a message as subscribers read it. */
function channels(message: OutboundMessage) {
  const document = JSON.parse(message.body) as Record<string, string>;
  const structured = document.default ?? '';
  return {
    subject: message.subject,
    email: document.email ?? '',
    sms: document.sms ?? '',
    structured: JSON.parse(structured) as Record<string, unknown> & {
      content: { title: string; description: string };
      newsAlerts: Record<string, unknown>;
    },
    slack: renderSlackMessage(parseAlertMessage(structured)),
  };
}

const statusChange: ArticleChange = { kind: 'status', status: 'UPDATED', previousStatus: 'PUBLISHED' };
const keyOf = (change: string): DeliveryKey => updateNoticeKey('desk', 'id:1', change);

describe('update notices', () => {
  it.each([
    [undefined, 'Updated: ', 'Update: the status changed from PUBLISHED to UPDATED'],
    ['ko-KR', '[업데이트] ', '업데이트: 상태가 게시됨에서 수정됨으로 바뀌었습니다'],
    ['ja-JP', '【更新】', '更新: 状態が公開から更新に変わりました'],
  ])('%s: marked on every channel, the change said first, the notice under its own id', (locale, prefix, line) => {
    const audience = audienceIn(locale);
    const key = keyOf('status=UPDATED');
    const message = renderUpdateNotice(matchFor(audience), audience, statusChange, key);
    const read = channels(message);
    expect(message.key).toEqual(key);
    expect(read.subject).toBe(`${prefix}[Desk] Chip exports rise for a third month`);
    expect(read.email.split('\n')[0]).toBe(line);
    expect(read.email).toContain('Chip exports rise for a third month');
    expect(read.sms.startsWith(prefix)).toBe(true);
    expect(read.sms).toContain('https://news.example.com/a/1');
    const document = AlertDocumentSchema.parse(read.structured);
    expect(document.newsAlerts.update).toEqual({ change: 'status', status: 'UPDATED', previousStatus: 'PUBLISHED' });
    expect(document.newsAlerts.deliveryId).toBe('desk|update:id:1#status=UPDATED');
    expect(document.content.title).toContain(prefix);
    expect(document.content.description.split('\n')[0]).toBe(`*${line}*`);
    expect(read.slack.blocks[0]).toMatchObject({ type: 'header', text: { text: `📰 ${prefix}${article().title}` } });
    expect(read.slack.blocks[1]).toEqual({ type: 'section', text: { type: 'mrkdwn', text: `*${line}*` } });
    expect(read.slack.text).toContain(prefix);
  });

  it('says a deleted article was withdrawn, and a changed headline as such, in each language', () => {
    const deleted: ArticleChange = { kind: 'status', status: 'DELETED', previousStatus: 'PUBLISHED' };
    const firstLine = (locale: string | undefined, change: ArticleChange) => {
      const audience = audienceIn(locale);
      return channels(renderUpdateNotice(matchFor(audience), audience, change, keyOf('x'))).email.split('\n')[0];
    };
    expect(firstLine(undefined, deleted)).toBe('Update: the publisher withdrew this article');
    expect(firstLine('ko-KR', deleted)).toBe('업데이트: 언론사가 이 기사를 삭제했습니다');
    expect(firstLine('ja-JP', deleted)).toBe('更新: 配信元がこの記事を取り消しました');
    expect(firstLine(undefined, { kind: 'title', titleHash: 'h1' })).toBe('Update: the headline changed');
    expect(firstLine('ko-KR', { kind: 'title', titleHash: 'h1' })).toBe('업데이트: 제목이 바뀌었습니다');
    expect(firstLine(undefined, { kind: 'status', status: 'UPDATED', previousStatus: '' })).toBe(
      'Update: the status changed from none to UPDATED',
    );
    const title = AlertDocumentSchema.parse(
      channels(
        renderUpdateNotice(
          matchFor(audienceIn(undefined)),
          audienceIn(undefined),
          { kind: 'title', titleHash: 'h1' },
          keyOf('t'),
        ),
      ).structured,
    );
    expect(title.newsAlerts.update).toEqual({ change: 'title', status: null, previousStatus: null });
  });

  it('shows a hostile status on one line, cut, and escaped in Slack', () => {
    const audience = audienceIn(undefined);
    const status = `<!channel>\n\u202Eevil ${'x'.repeat(500)}`;
    const change: ArticleChange = { kind: 'status', status, previousStatus: 'PUBLISHED' };
    const read = channels(renderUpdateNotice(matchFor(audience), audience, change, keyOf('h')));
    const [line, blank] = read.email.split('\n');
    expect(blank).toBe('');
    expect(line).not.toMatch(/[\u202E\n]/u);
    expect(line?.length).toBeLessThan(200);
    expect(AlertDocumentSchema.parse(read.structured).newsAlerts.update?.status?.length).toBeLessThanOrEqual(100);
    expect(JSON.stringify(read.slack)).not.toContain('<!channel>');
  });

  it('keeps the subject under 100 characters with the mark first, however long the headline', () => {
    const audience = audienceIn('ko-KR');
    const long = article({ title: '반도체 수출 '.repeat(40) });
    const { subject } = renderUpdateNotice(matchFor(audience, long), audience, statusChange, keyOf('s'));
    expect(subject.startsWith('[업데이트] [Desk] 반도체')).toBe(true);
    expect(subject.length).toBeLessThanOrEqual(SUBJECT_MAX_LENGTH);
  });

  it('leaves alerts as they were: no update field, the alert id', () => {
    const audience = audienceIn(undefined);
    const document = AlertDocumentSchema.parse(channels(renderNotification(matchFor(audience), audience)).structured);
    expect(document.newsAlerts.update).toBeUndefined();
    expect(document.newsAlerts.deliveryId).toBe('desk|id:1');
  });

  it('fits the SMS budget in every language, the mark kept when the headline keeps room', () => {
    const settings = fc.record({
      locale: fc.constantFrom(undefined, 'ko-KR', 'ja-JP', 'fr-FR'),
      smsMaxSegments: fc.integer({ min: 1, max: 4 }),
      title: fc.oneof(
        fc.string({ unit: 'grapheme', minLength: 1, maxLength: 300 }),
        fc.lorem({ maxCount: 50 }),
        fc.constantFrom('반도체 수출 '.repeat(30), '半導体の輸出が増加'.repeat(10)),
      ),
      path: fc.oneof(fc.stringMatching(/^[a-z0-9]{0,30}$/), fc.stringMatching(/^[a-z0-9]{300,700}$/)),
      change: fc.constantFrom<ArticleChange>(
        statusChange,
        { kind: 'title', titleHash: 'h1' },
        { kind: 'status', status: 'DELETED', previousStatus: '' },
      ),
    });
    fc.assert(
      fc.property(settings, (generated) => {
        const audience = audienceIn(generated.locale, { smsMaxSegments: generated.smsMaxSegments });
        const url = `https://news.example.com/${generated.path}`;
        const item = article({ title: generated.title, url });
        const { sms } = channels(renderUpdateNotice(matchFor(audience, item), audience, generated.change, keyOf('p')));
        if (!fitsSms(url, generated.smsMaxSegments)) expect(sms).toBe(url);
        else expect(fitsSms(sms, generated.smsMaxSegments), sms).toBe(true);
      }),
      { numRuns: 150 },
    );
  });
});

// --- Also in N outlets -------------------------------------------------------------------------

const story = (outlets: readonly string[], outletCount = outlets.length): StoryRecord => ({
  storyId: 's-1',
  leadArticleKey: 'id:1',
  firstSeenAt: published,
  outlets,
  outletCount,
  articleCount: outletCount + 2,
});

const releaseAt = published + 3_600_000;

/** A two-entry digest: the story's lead (with `storyId`) and an article of no story. */
function digestWith(audience: Audience, record: StoryRecord | undefined) {
  const items = [
    toHeldNotification(matchFor(audience, article(), 's-1'), 'quiet-hours', published),
    toHeldNotification(
      matchFor(
        audience,
        article({ key: 'id:2', id: '2', title: 'Another story', url: 'https://news.example.com/a/2' }),
      ),
      'quiet-hours',
      published,
    ),
  ];
  const stories = new Map(record === undefined ? [] : [['s-1', record]]);
  const [message] = planDigest(items, audience, releaseAt, { stories }).messages;
  return channels(message as OutboundMessage);
}

describe('digests: a story once, with where else it ran', () => {
  const outlets = ['Daily Example', 'Example Wire', '연합뉴스', 'Morning Post', 'Evening Star'];

  it.each([
    [undefined, 'also in 4 outlets: Example Wire, 연합뉴스, Morning Post and 1 more'],
    ['ko-KR', '다른 매체 4곳에도 보도: Example Wire, 연합뉴스, Morning Post 외 1곳'],
    ['ja-JP', 'ほか4媒体でも報道: Example Wire、연합뉴스、Morning Postほか1媒体'],
  ])('%s: names up to three outlets other than its own, then how many more', (locale, line) => {
    const read = digestWith(audienceIn(locale), story(outlets));
    expect(read.email).toContain(`   ${line}\n`);
    expect(read.email.split(line)).toHaveLength(2);
    expect(read.structured.content.description).toContain(line);
    const groups = (read.structured.newsAlerts.digest as { groups: { entries: Record<string, unknown>[] }[] }).groups;
    const entries = groups.flatMap((group) => group.entries);
    expect(entries.find((entry) => entry.deliveryId === 'desk|id:1')?.alsoIn).toEqual({
      count: 4,
      outlets: ['Example Wire', '연합뉴스', 'Morning Post'],
    });
    expect(entries.find((entry) => entry.deliveryId === 'desk|id:2')).not.toHaveProperty('alsoIn');
    const slack = read.slack.blocks.map((block) => JSON.stringify(block)).join('\n');
    expect(slack).toContain(line);
  });

  it('uses the plural rules of the language, and the count alone when no name is known', () => {
    expect(digestWith(audienceIn(undefined), story(['Daily Example', 'Example Wire'])).email).toContain(
      'also in 1 outlet: Example Wire\n',
    );
    expect(digestWith(audienceIn(undefined), story(['Daily Example'], 3)).email).toContain('also in 2 outlets\n');
    expect(digestWith(audienceIn('ko-KR'), story(['Daily Example', 'Example Wire'])).email).toContain(
      '다른 매체 1곳에도 보도: Example Wire\n',
    );
  });

  it('says nothing for a story that ran only in the entry’s own outlet, or without a record', () => {
    for (const read of [
      digestWith(audienceIn(undefined), story(['Daily Example'])),
      digestWith(audienceIn(undefined), undefined),
    ]) {
      expect(read.email).not.toContain('also in');
      expect(JSON.stringify(read.structured)).not.toContain('alsoIn');
    }
  });

  it('counts its own outlet out when the names were capped before it', () => {
    const names = Array.from({ length: maxStoryOutlets }, (_, index) => `Outlet ${index}`);
    expect(alsoInOf({ mediaName: 'Daily Example', media: 'M001' }, story(names, 25))).toEqual({
      count: 24,
      outlets: ['Outlet 0', 'Outlet 1', 'Outlet 2'],
    });
    expect(alsoInOf({ mediaName: undefined, media: undefined }, story(['A', 'B'], 2))).toEqual({
      count: 2,
      outlets: ['A', 'B'],
    });
  });

  it('keeps the story id of a held match, so a digest can say where else it ran', () => {
    const audience = audienceIn(undefined);
    expect(toHeldNotification(matchFor(audience, article(), 's-1'), 'budget', published).match.storyId).toBe('s-1');
    expect(toHeldNotification(matchFor(audience), 'budget', published).match).not.toHaveProperty('storyId');
  });

  it('in an SMS, drops the names before the count and the line before the budget', () => {
    const audience = audienceIn(undefined, { smsMaxSegments: 1 });
    const single = (title: string, record: StoryRecord) => {
      const held = toHeldNotification(matchFor(audience, article({ title }), 's-1'), 'quiet-hours', published);
      const [message] = planDigest([held], audience, releaseAt, { stories: new Map([['s-1', record]]) }).messages;
      return channels(message as OutboundMessage).sms;
    };
    const names = story(['Daily Example', 'Example Wire', 'Morning Post']);
    expect(single('Chips up', names)).toBe(
      'Chips up (also in 2 outlets: Example Wire, Morning Post) https://news.example.com/a/1',
    );
    const mid = 'Chip exports rise for a third month as demand for memory recovers in Asia and beyond';
    expect(single(mid, names)).toBe(`${mid} (also in 2 outlets) https://news.example.com/a/1`);
    const long = `${mid}, with makers adding shifts at plants in three countries`;
    const sms = single(long, names);
    expect(sms).not.toContain('also in');
    expect(fitsSms(sms, 1)).toBe(true);
  });

  it('keeps every digest SMS within the budget, whatever the story records say', () => {
    const name = fc.oneof(fc.string({ minLength: 1, maxLength: 60 }), fc.constantFrom('연합뉴스', '共同通信'));
    const settings = fc.record({
      locale: fc.constantFrom(undefined, 'ko-KR', 'ja-JP'),
      smsMaxSegments: fc.integer({ min: 1, max: 3 }),
      titles: fc.array(fc.oneof(fc.lorem({ maxCount: 20 }), fc.constantFrom('반도체 수출 증가', '半導体')), {
        minLength: 1,
        maxLength: 4,
      }),
      outlets: fc.array(name, { minLength: 0, maxLength: maxStoryOutlets }),
      extra: fc.integer({ min: 0, max: 100_000 }),
    });
    fc.assert(
      fc.property(settings, (generated) => {
        const audience = audienceIn(generated.locale, { smsMaxSegments: generated.smsMaxSegments });
        const items = generated.titles.map((title, index) =>
          toHeldNotification(
            matchFor(
              audience,
              article({ key: `id:${index}`, title, url: `https://news.example.com/a/${index}` }),
              `s-${index}`,
            ),
            'quiet-hours',
            published,
          ),
        );
        const record = story(generated.outlets, generated.outlets.length + generated.extra);
        const stories = new Map(
          generated.titles.map((_, index) => [`s-${index}`, { ...record, storyId: `s-${index}` }]),
        );
        for (const message of planDigest(items, audience, releaseAt, { stories }).messages) {
          const { sms } = channels(message);
          expect(fitsSms(sms, generated.smsMaxSegments), sms).toBe(true);
        }
      }),
      { numRuns: 120 },
    );
  });
});

// --- The release step reads the stories -------------------------------------------------------

/** A story index over the in-memory store, with one story of three outlets written to it. */
async function storyIndex(): Promise<{ index: StoryResolver; store: MemoryStoryStore }> {
  const store = new MemoryStoryStore({ now: () => published });
  await store.write({
    stories: [
      {
        storyId: 's-1',
        leadArticleKey: 'id:1',
        firstSeenAt: published,
        outlets: ['Daily Example'],
        outletCount: 1,
        articleCount: 1,
        signature: new Uint32Array(128),
        bands: [],
      },
    ],
    filings: [
      { articleKey: 'id:1', storyId: 's-1', outlet: 'Daily Example', at: published },
      { articleKey: 'id:7', storyId: 's-1', outlet: 'Example Wire', at: published + 1 },
      { articleKey: 'id:8', storyId: 's-1', outlet: 'Morning Post', at: published + 2 },
    ],
  });
  return { index: new StoryResolver(store), store };
}

async function release(stories: StoryIndex | undefined) {
  const audience = audienceIn(undefined, {
    quietHours: { start: '22:00', end: '07:00' },
    digestTimes: ['08:00'],
    dailyBudget: 5,
  });
  const state = new HoldingMemoryStateStore();
  await state.holdNotifications([
    // Over yesterday's budget, held for the next 08:00 digest: not released, so its story is not read.
    toHeldNotification(
      matchFor(audience, article({ key: 'id:3', id: '3', url: 'https://news.example.com/a/3' }), 's-3'),
      'budget',
      published - 60_000,
    ),
    toHeldNotification(matchFor(audience, article(), 's-1'), 'quiet-hours', published - 86_400_000),
    toHeldNotification(
      matchFor(audience, article({ key: 'id:2', id: '2', url: 'https://news.example.com/a/2' }), 's-2'),
      'quiet-hours',
      published - 86_400_000,
    ),
  ]);
  const notifier = new MemoryNotifier();
  const log = memoryLog();
  const counts = {
    digestsSent: 0,
    digestItemsReleased: 0,
    digestsFailed: 0,
    digestsDeferred: 0,
    digestsParked: 0,
    digestAudiencesWaiting: 0,
    notificationsFailed: 0,
    notificationsUnrenderable: 0,
  };
  await releaseDueDigests({
    state,
    notifier,
    log,
    stories,
    // 07:30 in Seoul: the quiet hours are over (nothing is released inside them), the digest not due.
    now: () => published + 9 * 3_600_000,
    audiences: new Map([[audience.audienceId, audience]]),
    publishSignal: new AbortController().signal,
    counts,
  });
  expect(counts.digestsSent).toBe(1);
  return { read: channels(notifier.published[0] as OutboundMessage), log };
}

describe('the release step and the story index', () => {
  it('reads the stories of the entries it releases in one call and lists the outlets', async () => {
    const { index, store } = await storyIndex();
    const asked: string[][] = [];
    const recording: StoryIndex = {
      assign: (articles, options) => index.assign(articles, options),
      readStories: (ids) => {
        asked.push([...ids]);
        return index.readStories(ids);
      },
    };
    const before = store.calls.readStories;
    const { read } = await release(recording);
    expect(store.calls.readStories - before).toBe(1);
    expect(asked).toEqual([['s-1', 's-2']]);
    expect(read.email).toContain('also in 2 outlets: Example Wire, Morning Post\n');
    expect(read.email).not.toContain('id:3');
  });

  it('sends the digest without the line when there is no index, or the read fails (a warning)', async () => {
    const none = await release(undefined);
    expect(none.read.email).not.toContain('also in');
    const failing: StoryIndex = {
      assign: async () => new Map(),
      readStories: async () => {
        throw new Error('ProvisionedThroughputExceededException');
      },
    };
    const failed = await release(failing);
    expect(failed.read.email).not.toContain('also in');
    expect(failed.log.lines.filter((line) => line.level === 'warn').map((line) => line.message)).toContain(
      'could not read the story index; digests go out without "also in" lines',
    );
  });
});
