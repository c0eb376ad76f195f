/**
 * Generates `docs/samples/`: what subscribers receive on every channel (email, SMS, Slack Block
 * Kit, webhook JSON) for immediate alerts, update notices and digests (one with "also in N
 * outlets" lines), for example articles in English, Korean,
 * Japanese and with emoji, a very long headline and URL, and an urgent alert. Everything comes
 * from the real renderers: `renderNotification` and `planDigest` build the SNS documents, and the
 * Slack relay's own `parseAlertMessage` + `renderSlackMessage` turn them into Block Kit.
 *
 *   npx tsx scripts/render-samples.ts           # writes docs/samples/
 *   npx tsx scripts/render-samples.ts --check   # exits 1 when the committed samples are stale
 *
 * test/unit/render-samples.test.ts runs the same comparison, so stale samples fail the tests.
 */
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { planDigest, toHeldNotification } from '#core/digest';
import { type ArticleChange, changeLabel } from '#core/ledger-facts';
import {
  type Article,
  type Audience,
  type AudienceMatch,
  AudienceSchema,
  type RuleMatch,
  RuleSchema,
} from '#core/model';
import { type HoldReason, type OutboundMessage, type StoryRecord, updateNoticeKey } from '#core/ports';
import { renderNotification, renderUpdateNotice } from '#core/render';
import { describeSms, smsSegments } from '#core/sms';
import { spikeAlertMatch } from '#core/spikes/alert';
import type { EpisodeAlert } from '#core/spikes/record';
import { renderSpikeAlert, renderSpikeUpdate } from '#core/spikes/render';
import { renderSlackMessage } from '../functions/slack-relay/blocks.ts';
import { parseAlertMessage } from '../functions/slack-relay/message.ts';

/** Where the samples live, relative to the repository root. */
export const SAMPLES_DIR = 'docs/samples';

const topic = (name: string) => `arn:aws:sns:eu-west-1:123456789012:news-alerts-audience-${name}`;

const audiences = {
  markets: AudienceSchema.parse({
    audienceId: 'markets-desk',
    name: 'Markets desk',
    topicArn: topic('markets-desk'),
    timeZone: 'Europe/London',
    quietHours: { start: '22:00', end: '07:00' },
    dailyBudget: 20,
    digestTimes: ['08:00', '18:00'],
    smsMaxSegments: 2,
  }),
  seoul: AudienceSchema.parse({
    audienceId: 'chips-team',
    name: '반도체팀',
    topicArn: topic('chips-team'),
    timeZone: 'Asia/Seoul',
    locale: 'ko-KR',
    deliveryMode: 'digest',
    digestTimes: ['09:00'],
    smsMaxSegments: 2,
  }),
  tokyo: AudienceSchema.parse({
    audienceId: 'quake-oncall',
    name: 'Quake on-call',
    topicArn: topic('quake-oncall'),
    timeZone: 'Asia/Tokyo',
    locale: 'ja-JP',
    quietHours: { start: '23:00', end: '06:00' },
    urgentCategories: ['003002*'],
  }),
  templated: AudienceSchema.parse({
    audienceId: 'exec-briefing',
    name: 'Executive briefing',
    topicArn: topic('exec-briefing'),
    timeZone: 'America/New_York',
    deliveryMode: 'digest',
    digestTimes: ['07:30'],
    templates: {
      subject: 'News alert · {headline} ({media})',
      digestSubject: 'Morning briefing {date}: {articles}',
      footer: 'Sent to the executive briefing list ({audienceId}).\nQuestions or changes: #news-alerts-ops on Slack.',
    },
  }),
} satisfies Record<string, Audience>;

const base = Date.parse('2026-11-23T06:10:00Z');
const minutes = (count: number) => count * 60_000;

const article = (fields: Partial<Article> & Pick<Article, 'key' | 'title' | 'url'>): Article => ({
  summary: '',
  publishedAt: base,
  categories: [],
  categoryNames: [],
  ...fields,
});

const articles = {
  ascii: article({
    key: 'id:sample-ascii',
    id: 'sample-ascii',
    title: 'Fed raises rates by 25 basis points as inflation cools',
    summary:
      'The Federal Reserve raised its benchmark interest rate by a quarter point on Wednesday and signalled that further increases are unlikely this year.',
    url: 'https://news.example.com/markets/fed-raises-rates?id=1001',
    publishedAt: base - minutes(25),
    categories: ['002000000', '002001000'],
    categoryNames: ['Economy', 'Economy > Finance'],
    media: 'M001',
    mediaName: 'Daily Example',
    status: 'PUBLISHED',
  }),
  korean: article({
    key: 'id:sample-korean',
    id: 'sample-korean',
    title: '한국은행, 기준금리 0.25%p 인상… “물가 잡기 총력” 이창용 총재 기자회견에서 추가 인상 가능성 시사',
    summary:
      '한국은행 금융통화위원회가 기준금리를 0.25%포인트 올렸다. 반도체 수출 회복에도 물가 압력이 이어지고 있다는 판단이다.',
    url: 'https://news.example.kr/economy/2026/11/23/기준금리-인상',
    publishedAt: base - minutes(70),
    categories: ['002000000'],
    categoryNames: ['경제'],
    media: 'M003',
    mediaName: '서울 이그잼플 헤럴드',
    status: 'PUBLISHED',
  }),
  japanese: article({
    key: 'id:sample-japanese',
    id: 'sample-japanese',
    title: '日本銀行が追加利上げを決定政策金利は０．７５％に円相場は一時１ドル１４０円台まで急伸',
    summary: '日本銀行は金融政策決定会合で追加利上げを決めた。半導体関連株には売りが広がった。',
    url: 'https://news.example.jp/articles/2026/11/23/boj-rate',
    publishedAt: base - minutes(95),
    categories: ['002000000', '008001000'],
    categoryNames: ['経済', 'IT・科学 > 半導体'],
    media: 'M009',
    mediaName: '共同エグザンプル通信',
    status: 'UPDATED',
  }),
  emoji: article({
    key: 'id:sample-emoji',
    id: 'sample-emoji',
    title: 'Launch day 🚀👩🏽‍🚀 crew of four 👨‍👩‍👧‍👦 lifts off from 🇺🇸 Florida as crowds cheer along the coast 🎉🎉',
    summary: 'The crew of four is on its way to the station 🛰️ after a flawless launch.',
    url: 'https://news.example.com/science/launch-day',
    publishedAt: base - minutes(140),
    categories: ['008000000'],
    categoryNames: ['IT & Science'],
    media: 'M006',
    mediaName: 'Example Tech Review',
    status: 'PUBLISHED',
  }),
  long: article({
    key: 'id:sample-long',
    id: 'sample-long',
    title: `${'Semiconductor makers announce a coordinated expansion of fabrication capacity across three continents, '.repeat(3)}with regulators promising faster permits`,
    summary: 'word '.repeat(400).trim(),
    url: `https://news.example.com/tech/2026/11/23/semiconductor-expansion?utm_source=newsletter&utm_medium=email&utm_campaign=${'x'.repeat(180)}&ref=${'abc123'.repeat(20)}`,
    publishedAt: base - minutes(180),
    categories: ['008001000'],
    categoryNames: ['IT & Science > Semiconductors'],
    media: 'M006',
    mediaName: 'Example Tech Review',
    status: 'PUBLISHED',
  }),
  quake: article({
    key: 'id:sample-quake',
    id: 'sample-quake',
    title: 'M6.8 earthquake strikes off Fukushima; tsunami advisory issued for the Pacific coast',
    summary: 'The Japan Meteorological Agency issued a tsunami advisory after a magnitude 6.8 earthquake.',
    url: 'https://news.example.jp/en/quake/2026-11-23',
    publishedAt: base - minutes(5),
    categories: ['003000000', '003002000'],
    categoryNames: ['Society', 'Society > Disasters'],
    media: 'M004',
    mediaName: 'Example Broadcasting Network',
    status: 'PUBLISHED',
  }),
} satisfies Record<string, Article>;

const rule = (ruleId: string, description: string, reasons: RuleMatch['reasons'], urgent = false): RuleMatch => ({
  ruleId,
  description,
  urgent,
  reasons,
});

const rules = {
  rates: rule('markets-rates', 'Economy stories about interest rates or inflation', [
    { kind: 'category', term: '002*' },
    { kind: 'keyword', term: 'interest rate' },
  ]),
  koreanRates: rule('markets-rates', 'Economy stories about interest rates or inflation', [
    { kind: 'category', term: '002*' },
    { kind: 'keyword', term: '금리' },
  ]),
  chips: rule('chips-keywords', 'Semiconductor keywords anywhere but sports', [
    { kind: 'keyword', term: 'semiconductor' },
    { kind: 'keyword', term: '半導体' },
  ]),
  science: rule('science-all', 'Everything in IT & Science', [{ kind: 'category', term: '008*' }]),
  quakes: rule(
    'quakes',
    'Earthquakes, in English, Japanese and Korean',
    [{ kind: 'keyword', term: 'earthquake' }],
    true,
  ),
};

const match = (audience: Audience, item: Article, matched: readonly RuleMatch[], storyId?: string): AudienceMatch => ({
  audienceId: audience.audienceId,
  article: item,
  rules: matched,
  ...(storyId === undefined ? {} : { storyId }),
});

/** Stories as the story index reports them at release time: the digests' "also in N outlets". */
const stories: ReadonlyMap<string, StoryRecord> = new Map(
  (
    [
      [
        'story-rates',
        'id:sample-ascii',
        ['Daily Example', 'Example Wire', 'Morning Ledger', 'City Post', 'The Examiner'],
        7,
      ],
      ['story-bok', 'id:sample-korean', ['서울 이그잼플 헤럴드', '연합 이그잼플', 'Example Wire'], 3],
      ['story-launch', 'id:sample-emoji', ['Example Tech Review', 'Example Wire'], 2],
    ] as const
  ).map(([storyId, leadArticleKey, outlets, outletCount]) => [
    storyId,
    { storyId, leadArticleKey, firstSeenAt: base, outlets, outletCount, articleCount: outletCount + 4 },
  ]),
);

/** A spike episode as the run fixes it when it opens (functions/core/spikes/record.ts). */
const hour = 3_600_000;
const spikeEpisode: EpisodeAlert = {
  episodeId: 'sample',
  openedAt: Math.floor(base / hour) - 1,
  since: Math.floor(base / hour) - 2,
  preset: 'balanced',
  bucketMs: hour,
  observed: 42,
  expected: 5.6,
  bucketCount: 30,
  bucketExpected: 2.4,
  outletCount: 18,
  topStories: [
    {
      storyId: 'story-plant',
      title: 'Hanbit Semiconductor to build $12 billion memory chip plant in Yongin, creating 3,000 jobs',
      url: 'https://news.example.com/tech/hanbit-plant',
      outlet: 'Example Wire',
      outlets: 12,
    },
    {
      storyId: 'story-shares',
      title: '한빛반도체 주가 8% 급등… 용인 공장 투자 발표에 외국인 순매수',
      url: 'https://news.example.kr/economy/hanbit-shares',
      outlet: '서울 이그잼플 헤럴드',
      outlets: 7,
    },
    {
      storyId: 'story-suppliers',
      title: '半導体装置メーカー各社、ハンビット新工場の受注に期待',
      url: 'https://news.example.jp/articles/hanbit-suppliers',
      outlet: '共同エグザンプル通信',
      outlets: 4,
    },
  ],
  topOutlets: [
    { name: 'Example Wire', stories: 9 },
    { name: 'Daily Example', stories: 6 },
    { name: '서울 이그잼플 헤럴드', stories: 4 },
  ],
  stage: 'spike',
  storiesSoFar: 42,
  expectedSoFar: 6,
};
const spikeRule = RuleSchema.parse({
  ruleId: 'chips-coverage',
  audienceId: 'markets-desk',
  description: 'Hanbit Semiconductor coverage',
  keywords: ['Hanbit', '한빛반도체'],
  spikes: 'balanced',
});
const spikeKey = 'spike:chips-coverage:sample';
const spikeMatch = (audience: Audience, alert: EpisodeAlert = spikeEpisode): AudienceMatch =>
  spikeAlertMatch({ rule: { ...spikeRule, audienceId: audience.audienceId }, audience, alert, key: spikeKey });

interface AlertSample {
  readonly name: string;
  readonly description: string;
  readonly audience: Audience;
  readonly match: AudienceMatch;
  /** Rendered as an update notice of this change (audience setting `updates: notify`). */
  readonly update?: ArticleChange;
}

const alertSamples: readonly AlertSample[] = [
  {
    name: 'alert-ascii',
    description: 'English headline, two categories, London time, two SMS segments allowed',
    audience: audiences.markets,
    match: match(audiences.markets, articles.ascii, [rules.rates]),
  },
  {
    name: 'alert-korean',
    description:
      'A Korean audience (locale ko-KR): Korean words, dates and statuses around the data, UCS-2 SMS cut at a word',
    audience: { ...audiences.seoul, deliveryMode: 'immediate' },
    match: match(audiences.seoul, articles.korean, [rules.koreanRates]),
  },
  {
    name: 'alert-japanese',
    description:
      'A Japanese audience (locale ja-JP): Japanese words and dates, a headline without spaces, SMS cut at a word boundary',
    audience: audiences.tokyo,
    match: match(audiences.tokyo, articles.japanese, [rules.chips]),
  },
  {
    name: 'alert-emoji',
    description: 'Emoji with skin tones, ZWJ sequences and a flag: never split in subject, SMS or Slack',
    audience: audiences.markets,
    match: match(audiences.markets, articles.emoji, [rules.science]),
  },
  {
    name: 'alert-long',
    description: 'A 330-character headline and a 400-character URL: subject and SMS cut at a word, the URL never',
    audience: audiences.markets,
    match: match(audiences.markets, articles.long, [rules.chips, rules.science]),
  },
  {
    name: 'alert-urgent',
    description: 'An urgent rule: sent even during quiet hours, marked urgent on every channel',
    audience: audiences.tokyo,
    match: match(audiences.tokyo, articles.quake, [rules.quakes]),
  },
  {
    name: 'alert-templates',
    description: 'An audience with `templates`: its own subject and footer wording',
    audience: { ...audiences.templated, deliveryMode: 'immediate' },
    match: match(audiences.templated, articles.ascii, [rules.rates]),
  },
  {
    name: 'update-notice',
    description:
      'An update notice (`updates: notify`): the article came back with status UPDATED; marked on every channel, the change said first',
    audience: audiences.markets,
    match: match(audiences.markets, { ...articles.ascii, status: 'UPDATED' }, [rules.rates], 'story-rates'),
    update: { kind: 'status', status: 'UPDATED', previousStatus: 'PUBLISHED' },
  },
  {
    name: 'spike-alert',
    description:
      'A spike alert (rule `spikes: balanced`): observed against expected since when, the hour that fired, top stories with their outlets, top outlets, why',
    audience: audiences.markets,
    match: spikeMatch(audiences.markets),
  },
  {
    name: 'spike-alert-korean',
    description: 'The same spike alert for a Korean audience (locale ko-KR): Korean words and times around the data',
    audience: { ...audiences.seoul, deliveryMode: 'immediate' },
    match: spikeMatch({ ...audiences.seoul, deliveryMode: 'immediate' }),
  },
  {
    name: 'spike-alert-japanese',
    description: 'The same spike alert for a Japanese audience (locale ja-JP), one SMS segment',
    audience: audiences.tokyo,
    match: spikeMatch(audiences.tokyo),
  },
  {
    name: 'spike-update',
    description:
      'The update notice of a spike alert (`updates: notify`): the episode doubled since the alert; sent once, never a second alert',
    audience: audiences.markets,
    match: spikeMatch(audiences.markets, { ...spikeEpisode, stage: 'escalated', storiesSoFar: 95, expectedSoFar: 13 }),
    update: { kind: 'status', status: 'ESCALATED', previousStatus: '' },
  },
  {
    name: 'update-notice-korean',
    description: 'An update notice for a Korean audience (locale ko-KR): the provider withdrew the article (DELETED)',
    audience: { ...audiences.seoul, deliveryMode: 'immediate' },
    match: match(audiences.seoul, { ...articles.korean, status: 'DELETED' }, [rules.koreanRates], 'story-bok'),
    update: { kind: 'status', status: 'DELETED', previousStatus: 'PUBLISHED' },
  },
];

interface DigestSample {
  readonly name: string;
  readonly description: string;
  readonly audience: Audience;
  readonly releaseAt: number;
  readonly held: readonly { match: AudienceMatch; reason: HoldReason; heldAt: number }[];
}

const digestSamples: readonly DigestSample[] = [
  {
    name: 'digest-stories',
    description:
      'A digest whose entries are stories (`collapse: story`): each listed once with "also in N outlets", names up to three, then "and N more"',
    audience: audiences.markets,
    releaseAt: Date.parse('2026-11-23T07:00:00Z'),
    held: [
      {
        match: match(audiences.markets, articles.ascii, [rules.rates], 'story-rates'),
        reason: 'quiet-hours',
        heldAt: base - minutes(25),
      },
      {
        match: match(audiences.markets, articles.korean, [rules.koreanRates], 'story-bok'),
        reason: 'quiet-hours',
        heldAt: base - minutes(70),
      },
      {
        match: match(audiences.markets, articles.emoji, [rules.science], 'story-launch'),
        reason: 'quiet-hours',
        heldAt: base - minutes(140),
      },
      {
        match: match(audiences.markets, articles.quake, [rules.quakes]),
        reason: 'quiet-hours',
        heldAt: base - minutes(5),
      },
    ],
  },
  {
    name: 'digest-morning',
    description:
      'The 07:00 release at the end of quiet hours: held overnight, plus "+N more" over the daily budget; English, Korean, Japanese and emoji entries grouped by category',
    audience: audiences.markets,
    releaseAt: Date.parse('2026-11-23T07:00:00Z'),
    held: [
      {
        match: match(audiences.markets, articles.ascii, [rules.rates]),
        reason: 'quiet-hours',
        heldAt: base - minutes(25),
      },
      {
        match: match(audiences.markets, articles.korean, [rules.koreanRates]),
        reason: 'quiet-hours',
        heldAt: base - minutes(70),
      },
      {
        match: match(audiences.markets, articles.japanese, [rules.rates, rules.chips]),
        reason: 'quiet-hours',
        heldAt: base - minutes(95),
      },
      {
        match: match(audiences.markets, articles.emoji, [rules.science]),
        reason: 'budget',
        heldAt: base - minutes(600),
      },
      {
        match: match(audiences.markets, articles.long, [rules.chips, rules.science]),
        reason: 'budget',
        heldAt: base - minutes(590),
      },
    ],
  },
  {
    name: 'digest-korean',
    description:
      'A digest-mode audience in Seoul (locale ko-KR): Korean words and counts, one message per digest time, UCS-2 SMS with the count',
    audience: audiences.seoul,
    releaseAt: Date.parse('2026-11-23T00:00:00Z'),
    held: [
      {
        match: match(audiences.seoul, articles.korean, [rules.koreanRates]),
        reason: 'digest',
        heldAt: base - minutes(400),
      },
      {
        match: match(audiences.seoul, articles.japanese, [rules.chips]),
        reason: 'digest',
        heldAt: base - minutes(420),
      },
      { match: match(audiences.seoul, articles.long, [rules.chips]), reason: 'digest', heldAt: base - minutes(430) },
    ],
  },
  {
    name: 'digest-japanese',
    description:
      'The 06:00 release in Tokyo (locale ja-JP) at the end of quiet hours: Japanese words, counts and hold notes around English, Japanese and Korean entries',
    audience: audiences.tokyo,
    releaseAt: Date.parse('2026-11-23T21:00:00Z'),
    held: [
      {
        match: match(audiences.tokyo, articles.japanese, [rules.chips]),
        reason: 'quiet-hours',
        heldAt: base - minutes(95),
      },
      {
        match: match(audiences.tokyo, articles.korean, [rules.koreanRates]),
        reason: 'quiet-hours',
        heldAt: base - minutes(70),
      },
      {
        match: match(audiences.tokyo, articles.emoji, [rules.science]),
        reason: 'quiet-hours',
        heldAt: base - minutes(140),
      },
    ],
  },
  {
    name: 'digest-templates',
    description: 'A digest-mode audience with `templates.digestSubject` and `templates.footer`',
    audience: audiences.templated,
    releaseAt: Date.parse('2026-11-23T12:30:00Z'),
    held: [
      {
        match: match(audiences.templated, articles.ascii, [rules.rates]),
        reason: 'digest',
        heldAt: base - minutes(30),
      },
      {
        match: match(audiences.templated, articles.quake, [rules.quakes]),
        reason: 'digest',
        heldAt: base - minutes(5),
      },
    ],
  },
];

/** The SNS document of a message, by protocol key. */
const documentOf = (message: OutboundMessage) => JSON.parse(message.body) as Record<string, string>;

const json = (value: unknown) => `${JSON.stringify(value, null, 2)}\n`;

/** Every channel of one message as files under `<name>/`. */
function channelFiles(name: string, message: OutboundMessage): Map<string, string> {
  const document = documentOf(message);
  // Lambda and HTTPS subscribers get their own key for alerts and `default` for digests.
  const structured = document.lambda ?? document.default ?? '';
  const sms = document.sms ?? '';
  return new Map([
    [`${name}/email.txt`, `Subject: ${message.subject}\n\n${document.email ?? ''}\n`],
    [`${name}/sms.txt`, `${sms}\n\n-- ${describeSms(sms)}\n`],
    [`${name}/slack.json`, json(renderSlackMessage(parseAlertMessage(structured)))],
    [`${name}/webhook.json`, json(JSON.parse(structured))],
  ]);
}

/** Every sample file, by path relative to {@link SAMPLES_DIR}, rendered now. */
export function renderSamples(): Map<string, string> {
  const files = new Map<string, string>();
  const rows: string[] = [];
  for (const sample of alertSamples) {
    const spike = sample.match.spike !== undefined;
    const message =
      sample.update === undefined
        ? (spike ? renderSpikeAlert : renderNotification)(sample.match, sample.audience)
        : (spike ? renderSpikeUpdate : renderUpdateNotice)(
            sample.match,
            sample.audience,
            sample.update,
            updateNoticeKey(
              sample.audience.audienceId,
              sample.match.storyId ?? sample.match.article.key,
              changeLabel(sample.update),
            ),
          );
    for (const [path, text] of channelFiles(sample.name, message)) files.set(path, text);
    rows.push(row(sample.name, sample.description, [message]));
  }
  for (const sample of digestSamples) {
    const items = sample.held.map(({ match: held, reason, heldAt }) => toHeldNotification(held, reason, heldAt));
    const { messages } = planDigest(items, sample.audience, sample.releaseAt, { stories });
    messages.forEach((message, index) => {
      const name = messages.length > 1 ? `${sample.name}-part${index + 1}` : sample.name;
      for (const [path, text] of channelFiles(name, message)) files.set(path, text);
    });
    rows.push(row(sample.name, sample.description, messages));
  }
  files.set(
    'README.md',
    [
      '# Rendered samples',
      '',
      'What subscribers receive, generated from the real renderers by `npx tsx scripts/render-samples.ts`',
      '(do not edit by hand: `test/unit/render-samples.test.ts` fails when these files are stale).',
      'Each sample has one file per channel: `email.txt` (subject and plain-text body), `sms.txt` (with',
      'its encoding and segment count), `slack.json` (the Block Kit message the Slack relay posts) and',
      '`webhook.json` (the structured JSON that HTTPS, SQS and Lambda subscribers receive; also an',
      'Amazon Q Developer custom notification). See [Delivery](../delivery.md) for what they mean.',
      '',
      "The fixed words come from the message catalog of the audience's `locale`: the `*-korean` samples",
      'are a `ko-KR` audience, `alert-japanese`, `alert-urgent` and `digest-japanese` a `ja-JP` one, the',
      'others English (no `locale`, stack default `en-US`). Headlines, names and rule texts are data and',
      'are shown as the provider and the rules spell them.',
      '',
      '| sample | what it shows | SMS |',
      '| --- | --- | --- |',
      ...rows,
      '',
    ].join('\n'),
  );
  return files;
}

function row(name: string, description: string, messages: readonly OutboundMessage[]): string {
  const sms = messages
    .map((message) => {
      const count = smsSegments(documentOf(message).sms ?? '');
      return `${count.encoding}, ${count.segments} segment${count.segments === 1 ? '' : 's'}`;
    })
    .join(' / ');
  const links =
    messages.length > 1 ? messages.map((_, index) => `[part ${index + 1}](${name}-part${index + 1}/)`).join(', ') : '';
  const target = messages.length > 1 ? `${name}-part1` : name;
  return `| [${name}](${target}/)${links === '' ? '' : ` ${links}`} | ${description} | ${sms} |`;
}

/** The repository root (this file is in `scripts/`). */
export const repositoryRoot = (): string => join(dirname(fileURLToPath(import.meta.url)), '..');

/** Files under `dir`, relative to it. */
function listFiles(dir: string): string[] {
  let entries: string[];
  try {
    entries = readdirSync(dir, { recursive: true, encoding: 'utf8' });
  } catch {
    return [];
  }
  return entries.filter((entry) => {
    try {
      readFileSync(join(dir, entry));
      return true;
    } catch {
      return false;
    }
  });
}

/** Stale, missing and unexpected sample files compared with a fresh rendering. */
export function compareSamples(root = repositoryRoot()): { stale: string[]; missing: string[]; extra: string[] } {
  const dir = join(root, SAMPLES_DIR);
  const expected = renderSamples();
  const present = new Set(listFiles(dir).map((path) => relative(dir, join(dir, path)).split('\\').join('/')));
  const stale: string[] = [];
  const missing: string[] = [];
  for (const [path, text] of expected) {
    if (!present.has(path)) missing.push(path);
    else if (readFileSync(join(dir, path), 'utf8') !== text) stale.push(path);
  }
  const extra = [...present].filter((path) => !expected.has(path));
  return { stale, missing, extra };
}

function writeSamples(root = repositoryRoot()): number {
  const dir = join(root, SAMPLES_DIR);
  rmSync(dir, { recursive: true, force: true });
  const files = renderSamples();
  for (const [path, text] of files) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  return files.size;
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  if (process.argv.includes('--check')) {
    const { stale, missing, extra } = compareSamples();
    const problems = [
      ...stale.map((p) => `stale: ${p}`),
      ...missing.map((p) => `missing: ${p}`),
      ...extra.map((p) => `unexpected: ${p}`),
    ];
    if (problems.length > 0) {
      console.error(`${SAMPLES_DIR} is out of date (run npx tsx scripts/render-samples.ts):\n${problems.join('\n')}`);
      process.exitCode = 1;
    } else {
      console.log(`${SAMPLES_DIR} is up to date`);
    }
  } else {
    console.log(`wrote ${writeSamples()} files to ${SAMPLES_DIR}`);
  }
}
