/**
 * Notifications for the email tests, rendered by the real renderers (render.ts, digest.ts) and
 * wrapped the way SNS hands them to the email queue (the envelope of an SQS subscription without
 * raw delivery, carrying the `default` document and the subject).
 */
import { randomUUID } from 'node:crypto';
import { planDigest, toHeldNotification } from '#core/digest';
import { type Article, type Audience, type AudienceMatch, AudienceSchema, type RuleMatch } from '#core/model';
import type { OutboundMessage } from '#core/ports';
import { updateNoticeKey } from '#core/ports';
import { renderNotification, renderUpdateNotice } from '#core/render';

export const PUBLISHED = Date.parse('2026-03-14T13:30:00Z');

export const testAudience = (overrides: Record<string, unknown> = {}): Audience =>
  AudienceSchema.parse({
    audienceId: 'desk',
    name: 'News desk',
    topicArn: 'arn:aws:sns:us-east-1:123456789012:news-alerts-audience-desk',
    timeZone: 'America/New_York',
    ...overrides,
  });

export const testRules: RuleMatch[] = [
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

export const testArticle = (overrides: Partial<Article> = {}): Article => ({
  key: 'id:101',
  id: '101',
  title: 'Fed raises rates by 25 basis points as inflation cools',
  summary: 'The Federal Reserve raised its benchmark interest rate on Friday.',
  url: 'https://news.example.com/markets/fed-raises-rates?id=101',
  publishedAt: PUBLISHED,
  categories: ['002000000'],
  categoryNames: ['Economy'],
  media: 'reuters',
  mediaName: 'Reuters',
  status: 'published',
  ...overrides,
});

/** The articles of the three languages the product ships. */
export const articlesByLanguage = {
  en: testArticle(),
  ko: testArticle({
    key: 'id:102',
    id: '102',
    title: '한국은행, 기준금리 0.25%p 인상… “물가 잡기 총력”',
    summary: '한국은행 금융통화위원회가 기준금리를 0.25%포인트 올렸다.',
    url: 'https://news.example.kr/a/102',
    categoryNames: ['경제'],
    media: 'yonhap',
    mediaName: '연합뉴스',
  }),
  ja: testArticle({
    key: 'id:103',
    id: '103',
    title: '日銀、政策金利を0.25%引き上げ　物価上昇に対応',
    summary: '日本銀行は金融政策決定会合で政策金利の引き上げを決めた。',
    url: 'https://news.example.jp/a/103',
    categoryNames: ['経済'],
    media: 'nhk',
    mediaName: 'NHK',
  }),
} as const;

export const audiencesByLanguage = {
  en: testAudience(),
  ko: testAudience({
    audienceId: 'kr-desk',
    name: '경제팀',
    timeZone: 'Asia/Seoul',
    locale: 'ko-KR',
    topicArn: 'arn:aws:sns:us-east-1:123456789012:news-alerts-audience-kr-desk',
  }),
  ja: testAudience({
    audienceId: 'jp-desk',
    name: '経済部',
    timeZone: 'Asia/Tokyo',
    locale: 'ja-JP',
    topicArn: 'arn:aws:sns:us-east-1:123456789012:news-alerts-audience-jp-desk',
  }),
} as const;

/** The SNS envelope an SQS subscriber (without raw delivery) receives for `message`. */
export function snsEnvelope(message: OutboundMessage, topicArn: string = message.topicArn): string {
  const structure = JSON.parse(message.body) as Record<string, string>;
  return JSON.stringify({
    Type: 'Notification',
    MessageId: randomUUID(),
    TopicArn: topicArn,
    Subject: message.subject,
    Message: structure.sqs ?? structure.default,
    Timestamp: new Date(PUBLISHED).toISOString(),
    SignatureVersion: '1',
  });
}

export const matchOf = (
  audience: Audience,
  article: Article,
  rules: readonly RuleMatch[] = testRules,
): AudienceMatch => ({
  audienceId: audience.audienceId,
  article,
  rules,
});

/** An alert notification of `article` for `audience`, as the email queue receives it. */
export const alertEnvelope = (audience: Audience, article: Article = testArticle()): string =>
  snsEnvelope(renderNotification(matchOf(audience, article), audience));

/** An update notice (status changed), as the email queue receives it. */
export const updateEnvelope = (audience: Audience, article: Article = testArticle({ status: 'CORRECTED' })): string =>
  snsEnvelope(
    renderUpdateNotice(
      matchOf(audience, article),
      audience,
      { kind: 'status', status: 'CORRECTED', previousStatus: 'published' },
      updateNoticeKey(audience.audienceId, article.key, 'status'),
    ),
  );

/** A digest of `articles` held for `audience`, as the email queue receives it. */
export function digestEnvelope(audience: Audience, articles: readonly Article[]): string {
  const held = articles.map((article) => toHeldNotification(matchOf(audience, article), 'digest', PUBLISHED));
  const [message] = planDigest(held, audience, PUBLISHED + 3_600_000).messages;
  if (message === undefined) throw new Error('no digest message');
  return snsEnvelope(message);
}
