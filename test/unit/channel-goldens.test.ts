/**
 * Golden files of every channel's rendering, for immediate alerts and digests, with ASCII, Korean,
 * Japanese and emoji headlines and a very long headline and URL, and (English, Korean, Japanese)
 * for update notices and digests whose entries are stories ("also in N outlets"), and spike alerts (the
 * alert, its update notice, and a digest that holds one): the email (subject and body),
 * the SMS, the Slack Block Kit message (through the relay's own parser and renderer) and the
 * structured JSON. The files under `__golden__/` are whole rendered texts; a change to any
 * renderer shows up here as a diff to review (`--update` accepts it).
 *
 * A missing golden fails the test on every machine: vitest would otherwise write it silently
 * (outside CI) and compare the renderer with itself. Only an explicit `--update` creates one.
 */
import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { planDigest, toHeldNotification } from '#core/digest';
import {
  type Article,
  type Audience,
  type AudienceMatch,
  AudienceSchema,
  type RuleMatch,
  RuleSchema,
} from '#core/model';
import { type OutboundMessage, type StoryRecord, updateNoticeKey } from '#core/ports';
import { DigestDocumentSchema } from '#core/published-document';
import { renderNotification, renderUpdateNotice } from '#core/render';
import { describeSms } from '#core/sms';
import { spikeAlertMatch } from '#core/spikes/alert';
import { renderSpikeAlert, renderSpikeUpdate, spikeDigestHeadline } from '#core/spikes/render';
import { renderSlackMessage } from '../../functions/slack-relay/blocks.ts';
import { parseAlertMessage } from '../../functions/slack-relay/message.ts';
import { spikeEpisode } from '../support/spike-world.ts';

const published = Date.parse('2026-03-14T13:30:00Z');

const audience = (overrides: Record<string, unknown>): Audience =>
  AudienceSchema.parse({
    audienceId: 'desk',
    name: 'News desk',
    topicArn: 'arn:aws:sns:us-east-1:123456789012:desk',
    timeZone: 'America/New_York',
    quietHours: { start: '22:00', end: '07:00' },
    dailyBudget: 10,
    ...overrides,
  });

const rules: RuleMatch[] = [
  {
    ruleId: 'rates',
    description: 'Interest rate decisions',
    urgent: false,
    reasons: [
      { kind: 'keyword', term: 'interest rate' },
      { kind: 'category', term: '002*' },
    ],
  },
  { ruleId: 'asia-markets', urgent: true, reasons: [{ kind: 'keyword', term: '금리' }] },
];

interface Case {
  readonly name: string;
  readonly audience: Audience;
  readonly article: Article;
}

const cases: readonly Case[] = [
  {
    name: 'ascii',
    audience: audience({}),
    article: {
      key: 'id:101',
      id: '101',
      title: 'Fed raises rates by 25 basis points as inflation cools',
      summary: 'The Federal Reserve raised its benchmark interest rate on Friday.',
      url: 'https://news.example.com/markets/fed-raises-rates?id=101',
      publishedAt: published,
      categories: ['002000000', '002004000'],
      categoryNames: ['Economy', 'Finance'],
      media: 'reuters',
      mediaName: 'Reuters',
      status: 'published',
    },
  },
  {
    name: 'korean',
    audience: audience({ audienceId: 'kr-desk', name: '경제팀', timeZone: 'Asia/Seoul', locale: 'ko-KR' }),
    article: {
      key: 'id:102',
      id: '102',
      title: '한국은행, 기준금리 0.25%p 인상… “물가 잡기 총력” 이창용 총재 기자회견에서 추가 인상 가능성 시사',
      summary: '한국은행 금융통화위원회가 기준금리를 0.25%포인트 올렸다.',
      url: 'https://news.example.kr/a/102',
      publishedAt: published + 60_000,
      categories: ['002000000'],
      categoryNames: ['경제'],
      media: 'yna',
      mediaName: '연합뉴스',
      status: 'published',
    },
  },
  {
    name: 'japanese',
    audience: audience({ audienceId: 'jp-desk', name: undefined, timeZone: 'Asia/Tokyo', locale: 'ja-JP' }),
    article: {
      key: 'id:103',
      id: '103',
      title: '日本銀行が追加利上げを決定政策金利は０．７５％に円相場は一時１ドル１４０円台まで急伸し市場に動揺が広がる',
      summary: '日本銀行は金融政策決定会合で追加利上げを決めた。',
      url: 'https://news.example.jp/a/103',
      publishedAt: published + 120_000,
      categories: ['002000000'],
      categoryNames: ['経済'],
      media: 'kyodo',
      mediaName: '共同通信',
      status: 'updated',
    },
  },
  {
    name: 'emoji',
    audience: audience({ smsMaxSegments: 2 }),
    article: {
      key: 'id:104',
      id: '104',
      title:
        'Launch day 🚀👩🏽‍🚀 crew of four 👨‍👩‍👧‍👦 lifts off from 🇺🇸 Florida as crowds cheer along the coast and the countdown ends 🎉🎉🎉',
      summary: 'All four astronauts 🧑‍🚀 are on their way.',
      url: 'https://news.example.com/science/launch',
      publishedAt: published + 180_000,
      categories: ['008000000'],
      categoryNames: ['IT & Science'],
      media: 'wire',
      mediaName: 'Example Wire',
      status: 'published',
    },
  },
  {
    name: 'long',
    audience: audience({ smsMaxSegments: 3 }),
    article: {
      key: 'id:105',
      id: '105',
      title: `${'Chipmakers announce a coordinated expansion of fabrication capacity across three continents; '.repeat(4)}regulators promise faster permits`,
      summary: 'lorem ipsum dolor '.repeat(300),
      url: `https://news.example.com/tech/expansion?campaign=${'c'.repeat(200)}&ref=${'r1'.repeat(100)}`,
      publishedAt: published + 240_000,
      categories: ['008001000'],
      categoryNames: ['Semiconductors'],
      media: 'wire',
      mediaName: 'Example Wire',
      status: 'published',
    },
  },
];

/** A second, older article in every digest, so each digest has two categories to group. */
const companion: Article = {
  key: 'id:100',
  id: '100',
  title: 'M6.8 earthquake strikes off the coast; tsunami advisory issued',
  summary: '',
  url: 'https://news.example.com/society/quake',
  publishedAt: published - 600_000,
  categories: ['003002000'],
  categoryNames: ['Disasters'],
  media: 'wire',
  mediaName: 'Example Wire',
  status: 'published',
};

const matchOf = (entry: Case, article = entry.article, matched = rules): AudienceMatch => ({
  audienceId: entry.audience.audienceId,
  article,
  rules: matched,
});

/** Held matches are not urgent (urgent ones bypass quiet hours and budgets). */
const heldRules = rules.filter((rule) => !rule.urgent);

/** Every channel of one SNS message, as subscribers see it. */
function channels(message: OutboundMessage): Record<'email' | 'sms' | 'slack' | 'structured', string> {
  const document = JSON.parse(message.body) as Record<string, string>;
  const structured = document.lambda ?? document.default ?? '';
  return {
    email: `Subject: ${message.subject}\n\n${document.email}\n`,
    sms: `${document.sms}\n-- ${describeSms(document.sms ?? '')}\n`,
    slack: `${JSON.stringify(renderSlackMessage(parseAlertMessage(structured)), null, 2)}\n`,
    structured: `${JSON.stringify(JSON.parse(structured), null, 2)}\n`,
  };
}

describe.each(cases)('golden renderings: $name headline', (entry) => {
  const alert = channels(renderNotification(matchOf(entry), entry.audience));
  const releaseAt = published + 3_600_000;
  const digest = planDigest(
    [
      toHeldNotification(matchOf(entry, entry.article, heldRules), 'quiet-hours', published),
      toHeldNotification(matchOf(entry, companion, heldRules), 'budget', published - 60_000),
    ],
    entry.audience,
    releaseAt,
  );
  expect(digest.messages).toHaveLength(1);
  const digestChannels = channels(digest.messages[0] as OutboundMessage);

  for (const channel of ['email', 'sms', 'slack', 'structured'] as const) {
    const extension = channel === 'slack' || channel === 'structured' ? 'json' : 'txt';
    it(`alert ${channel}`, async () => {
      await matchesGolden(alert[channel], `__golden__/alert-${entry.name}.${channel}.${extension}`);
    });
    it(`digest ${channel}`, async () => {
      await matchesGolden(digestChannels[channel], `__golden__/digest-${entry.name}.${channel}.${extension}`);
    });
  }
});

/** The story of each case's article, as the index reports it at release time. */
const storyOf = (entry: Case): StoryRecord => ({
  storyId: `story-${entry.name}`,
  leadArticleKey: entry.article.key,
  firstSeenAt: published,
  outlets: [entry.article.mediaName ?? 'Example Wire', 'Example Wire', '연합뉴스', '共同通信', 'Morning Post'],
  outletCount: 9,
  articleCount: 14,
});

describe.each(cases.filter((entry) => ['ascii', 'korean', 'japanese'].includes(entry.name)))(
  'golden renderings of stories: $name headline',
  (entry) => {
    const story = storyOf(entry);
    const update = channels(
      renderUpdateNotice(
        { ...matchOf(entry), storyId: story.storyId },
        entry.audience,
        { kind: 'status', status: 'UPDATED', previousStatus: 'PUBLISHED' },
        updateNoticeKey(entry.audience.audienceId, story.storyId, 'status=UPDATED'),
      ),
    );
    const digest = planDigest(
      [
        toHeldNotification(
          { ...matchOf(entry, entry.article, heldRules), storyId: story.storyId },
          'quiet-hours',
          published,
        ),
        toHeldNotification(matchOf(entry, companion, heldRules), 'budget', published - 60_000),
      ],
      entry.audience,
      published + 3_600_000,
      { stories: new Map([[story.storyId, story]]) },
    );
    expect(digest.messages).toHaveLength(1);
    const digestChannels = channels(digest.messages[0] as OutboundMessage);

    for (const channel of ['email', 'sms', 'slack', 'structured'] as const) {
      const extension = channel === 'slack' || channel === 'structured' ? 'json' : 'txt';
      it(`update notice ${channel}`, async () => {
        await matchesGolden(update[channel], `__golden__/update-${entry.name}.${channel}.${extension}`);
      });
      it(`story digest ${channel}`, async () => {
        await matchesGolden(digestChannels[channel], `__golden__/digest-story-${entry.name}.${channel}.${extension}`);
      });
    }
  },
);

/** A spike episode as the run fixes it when it opens. */
const episode = spikeEpisode(published, {
  episodeId: 'golden',
  topStories: [
    {
      storyId: 's1',
      title: 'Central bank signals rate cut as inflation eases',
      url: 'https://news.example.com/a/1',
      outlets: 14,
    },
    { storyId: 's2', title: '기준금리 인하 신호에 은행주 약세', url: 'https://news.example.kr/b/2', outlets: 6 },
    { storyId: 's3', title: '利下げ観測で円相場が急伸', url: 'https://news.example.jp/c/3', outlets: 3 },
  ],
  topOutlets: [
    { name: 'Example Wire', stories: 12 },
    { name: '연합뉴스', stories: 5 },
  ],
});
const spikeRule = RuleSchema.parse({
  ruleId: 'rates',
  audienceId: 'desk',
  description: 'Interest rate decisions',
  keywords: ['interest rate'],
  spikes: 'balanced',
});

describe.each(cases.filter((entry) => ['ascii', 'korean', 'japanese'].includes(entry.name)))(
  'golden renderings of spike alerts: $name audience',
  (entry) => {
    const key = 'spike:rates:golden';
    const alert = channels(
      renderSpikeAlert(
        spikeAlertMatch({ rule: spikeRule, audience: entry.audience, alert: episode, key }),
        entry.audience,
      ),
    );
    const escalated = spikeAlertMatch({
      rule: spikeRule,
      audience: entry.audience,
      alert: { ...episode, stage: 'escalated', storiesSoFar: 130, expectedSoFar: 2.4 },
      key,
    });
    const change = { kind: 'status', status: 'ESCALATED', previousStatus: '' } as const;
    const update = channels(
      renderSpikeUpdate(escalated, entry.audience, change, updateNoticeKey('desk', key, 'status=ESCALATED')),
    );
    // Held during quiet hours (as the delivery pipeline holds it: its headline with the figures),
    // the digest lists it first, in a group of its own, with the top story's link.
    const held = spikeAlertMatch({ rule: spikeRule, audience: entry.audience, alert: episode, key });
    const digest = planDigest(
      [
        toHeldNotification(held, 'quiet-hours', published, spikeDigestHeadline(held, entry.audience, {})),
        toHeldNotification(matchOf(entry, companion, heldRules), 'budget', published - 60_000),
      ],
      entry.audience,
      published + 3_600_000,
    );
    const digestChannels = channels(digest.messages[0] as OutboundMessage);
    for (const channel of ['email', 'sms', 'slack', 'structured'] as const) {
      const extension = channel === 'slack' || channel === 'structured' ? 'json' : 'txt';
      it(`spike alert ${channel}`, async () => {
        await matchesGolden(alert[channel], `__golden__/spike-${entry.name}.${channel}.${extension}`);
      });
      it(`spike update notice ${channel}`, async () => {
        await matchesGolden(update[channel], `__golden__/spike-update-${entry.name}.${channel}.${extension}`);
      });
      it(`digest with a held spike alert ${channel}`, async () => {
        await matchesGolden(digestChannels[channel], `__golden__/spike-digest-${entry.name}.${channel}.${extension}`);
      });
    }

    it('a held spike alert none of whose stories has a link that may be published is in the digest, shown without a link', () => {
      // Sent at once such an alert goes out without a link (spikes/render.ts); held, it was dropped.
      const linkless = spikeAlertMatch({
        rule: spikeRule,
        audience: entry.audience,
        alert: { ...episode, topStories: episode.topStories.map((story) => ({ ...story, url: 'http://intranet/x' })) },
        key,
      });
      expect(linkless.article.url).toBe('');
      const plan = planDigest(
        [toHeldNotification(linkless, 'quiet-hours', published, spikeDigestHeadline(linkless, entry.audience, {}))],
        entry.audience,
        published + 3_600_000,
      );
      expect(plan.dropped).toEqual([]);
      expect(plan.messages).toHaveLength(1);
      const rendered = channels(plan.messages[0] as OutboundMessage);
      const headline = spikeDigestHeadline(linkless, entry.audience, {});
      expect(rendered.email).toContain(headline);
      // No line that is only an indent where the link would be, and no trailing space in the SMS.
      expect(rendered.email).not.toMatch(/^ +$/m);
      const sms = (JSON.parse(plan.messages[0]?.body ?? '{}') as { sms: string }).sms;
      expect(sms).toBe(sms.trim());
      const document = DigestDocumentSchema.parse(JSON.parse(rendered.structured));
      expect(document.newsAlerts.digest.groups[0]?.entries[0]?.article.url).toBe('');
      expect(document.content.description).not.toMatch(/ $/m);
      expect(rendered.slack).toContain(headline.slice(0, 20));
    });
  },
);

/** `toMatchFileSnapshot`, except that a missing golden fails unless the run was started with `--update`. */
async function matchesGolden(rendered: string, relativePath: string): Promise<void> {
  const updating = expect.getState().snapshotState.snapshotUpdateState === 'all';
  if (!updating) {
    expect(
      existsSync(new URL(relativePath, import.meta.url)),
      `${relativePath} is missing: run \`npx vitest run test/unit/channel-goldens.test.ts --update\` and review the new file`,
    ).toBe(true);
  }
  await expect(rendered).toMatchFileSnapshot(relativePath);
}
