/**
 * What a Korean or Japanese subscriber reads, from varied (generated) articles, rules, audience
 * settings and stories: no English word of the English catalog anywhere outside the data (headline,
 * summary, link, ids, media, outlet and category names, rule ids and descriptions), in the email,
 * SMS, subject and structured JSON of alerts, update notices and digests (with "also in N outlets"), whose
 * structured bodies are exactly what the published schema describes. And SMS budgeting in every shipped language: every SMS
 * body fits the audience's `smsMaxSegments`, or is the URL alone when the URL alone does not.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { planDigest, toHeldNotification } from '#core/digest';
import type { ArticleChange } from '#core/ledger-facts';
import type { Article, Audience, AudienceMatch, MatchReason, RuleMatch } from '#core/model';
import { AudienceSchema } from '#core/model';
import { type HoldReason, type OutboundMessage, type StoryRecord, updateNoticeKey } from '#core/ports';
import { PublishedDocumentSchema } from '#core/published-document';
import { renderNotification, renderUpdateNotice } from '#core/render';
import { fitsSms } from '#core/sms';
import { publishableLink } from '#core/text';
import { englishWords } from './messages-probes.support.ts';

const ENGLISH = englishWords();

/** Text in a script without ASCII letters: data the check can tell from labels even when cut. */
const scriptText = (from: number, to: number, maxLength: number) =>
  fc
    .array(
      fc.oneof(
        { weight: 8, arbitrary: fc.integer({ min: from, max: to }).map((code) => String.fromCharCode(code)) },
        { weight: 2, arbitrary: fc.constantFrom(' ', ' ', '0', '7', '%', '…', '“', '”', ',', '.') },
      ),
      { minLength: 1, maxLength },
    )
    .map((chars) => chars.join(''))
    .filter((text) => text.trim() !== '');

const LANGUAGES = {
  ko: { locale: 'ko-KR', timeZone: 'Asia/Seoul', text: (max: number) => scriptText(0xac00, 0xd7a3, max) },
  ja: { locale: 'ja-JP', timeZone: 'Asia/Tokyo', text: (max: number) => scriptText(0x3041, 0x3093, max) },
} as const;

type Language = keyof typeof LANGUAGES;

const asciiId = fc.stringMatching(/^[a-z]{2,8}-[0-9]{1,3}$/);

function scenario(language: Language) {
  const { text } = LANGUAGES[language];
  const reason: fc.Arbitrary<MatchReason> = fc.oneof(
    text(20).map((term) => ({ kind: 'keyword' as const, term })),
    fc.stringMatching(/^[0-9]{3}\*$/).map((term) => ({ kind: 'category' as const, term })),
    fc.stringMatching(/^M[0-9]{3}$/).map((term) => ({ kind: 'media' as const, term })),
    fc.constantFrom('PUBLISHED', 'UPDATED').map((term) => ({ kind: 'status' as const, term })),
    fc.constant({ kind: 'all' as const, term: '*' }),
  );
  const rule: fc.Arbitrary<RuleMatch> = fc.record({
    ruleId: asciiId,
    description: fc.option(text(60), { nil: undefined }),
    urgent: fc.boolean(),
    reasons: fc.array(reason, { minLength: 0, maxLength: 24 }),
  });
  const article = (index: number): fc.Arbitrary<Article> =>
    fc.record({
      key: fc.constant(`id:${index}`),
      id: fc.constant(String(index)),
      title: text(120),
      summary: fc.option(text(200), { nil: '' }),
      url: fc.stringMatching(/^[0-9]{1,6}$/).map((path) => `https://news.example.kr/a/${index}/${path}`),
      publishedAt: fc.integer({ min: Date.parse('2020-01-01T00:00:00Z'), max: Date.parse('2030-01-01T00:00:00Z') }),
      categories: fc.oneof(fc.constant([] as string[]), fc.constant(['002000000']), fc.constant(['008001000'])),
      categoryNames: fc.constant([] as string[]),
      media: fc.option(fc.stringMatching(/^M[0-9]{3}$/), { nil: undefined }),
      mediaName: fc.option(text(20), { nil: undefined }),
      status: fc.option(fc.oneof(fc.constantFrom('PUBLISHED', 'UPDATED', 'DELETED', 'published'), text(8)), {
        nil: undefined,
      }),
    });
  return fc.record({
    name: fc.option(text(50), { nil: undefined }),
    smsMaxSegments: fc.integer({ min: 1, max: 10 }),
    quietHours: fc.option(fc.constant({ start: '22:00', end: '07:00' }), { nil: undefined }),
    dailyBudget: fc.option(fc.integer({ min: 1, max: 5000 }), { nil: undefined }),
    digestTimes: fc.subarray(['06:30', '08:00', '12:00', '18:00'], { minLength: 1 }),
    articles: fc.tuple(article(1), article(2), article(3), article(4)),
    categoryNames: fc.tuple(text(15), text(15)),
    rules: fc.array(rule, { minLength: 1, maxLength: 12 }),
    reasons: fc.tuple(
      fc.constantFrom<HoldReason>('quiet-hours', 'budget', 'digest'),
      fc.constantFrom<HoldReason>('quiet-hours', 'budget', 'digest'),
    ),
    /** Other outlets of each article's story (names are data), and how many more were counted. */
    outlets: fc.array(text(15), { minLength: 0, maxLength: 10 }),
    moreOutlets: fc.integer({ min: 0, max: 5000 }),
    change: fc.oneof(
      fc.constant<ArticleChange>({ kind: 'title', titleHash: 'h1' }),
      fc
        .tuple(
          fc.constantFrom('PUBLISHED', 'UPDATED', 'DELETED', 'deleted', ''),
          fc.constantFrom('PUBLISHED', 'UPDATED', ''),
        )
        .map(([status, previousStatus]): ArticleChange => ({ kind: 'status', status, previousStatus })),
    ),
  });
}

type Scenario = ReturnType<typeof scenario> extends fc.Arbitrary<infer T> ? T : never;

function audienceOf(language: Language, generated: Scenario): Audience {
  return AudienceSchema.parse({
    audienceId: 'desk-1',
    name: generated.name,
    topicArn: 'arn:aws:sns:us-east-1:123456789012:desk-1',
    timeZone: LANGUAGES[language].timeZone,
    locale: LANGUAGES[language].locale,
    smsMaxSegments: generated.smsMaxSegments,
    quietHours: generated.quietHours,
    dailyBudget: generated.dailyBudget,
    digestTimes: generated.digestTimes,
  });
}

/** Articles with category names where the codes have them (names are data in the audience's script). */
function articlesOf(generated: Scenario): Article[] {
  return generated.articles.map((item) => ({
    ...item,
    categoryNames: item.categories.map((code) =>
      code === '002000000' ? generated.categoryNames[0] : generated.categoryNames[1],
    ),
  }));
}

/** Every data string a rendering may show as is (ids in every form the renderers print them). */
function dataOf(
  audience: Audience,
  articles: readonly Article[],
  rules: readonly RuleMatch[],
  extra: readonly string[] = [],
): string[] {
  const values = [audience.audienceId, audience.name ?? '', ...extra];
  for (const item of articles) {
    const link = publishableLink(item.url);
    values.push(`${audience.audienceId}|${item.key}`, item.key, item.url, link.ok ? link.url : '');
    values.push(item.media ?? '', ...item.categories);
  }
  for (const rule of rules) values.push(rule.ruleId, ...rule.reasons.map((reason) => reason.term));
  return values.filter((value) => value !== '').sort((a, b) => b.length - a.length);
}

/** The texts of a message people read: subject, email, SMS and the structured document's words. */
function readTexts(message: OutboundMessage): Record<string, string> {
  const document = JSON.parse(message.body) as Record<string, string>;
  const structured = JSON.parse(document.default ?? '{}') as {
    content: { title: string; description: string };
    metadata: { summary: string };
    newsAlerts: { digest?: { holds: string[]; groups: { label: string }[] } };
  };
  return {
    subject: message.subject,
    email: document.email ?? '',
    sms: document.sms ?? '',
    title: structured.content.title,
    description: structured.content.description,
    summary: structured.metadata.summary,
    holds: (structured.newsAlerts.digest?.holds ?? []).join('\n'),
    groups: (structured.newsAlerts.digest?.groups ?? []).map((group) => group.label).join('\n'),
  };
}

/** English words of the English catalog left in `text` once the data is taken out. */
function englishIn(text: string, data: readonly string[]): string[] {
  let rest = text;
  for (const value of data) rest = rest.split(value).join(' ');
  // A digest id (`<audienceId>|digest:<instant>`) is an identifier, not a word.
  rest = rest.replace(/\S*\|digest:\S+/g, ' ');
  // The zone label names the IANA zone (data of the platform, not a word of ours).
  rest = rest.replace(/\((?:Asia\/Seoul|Asia\/Tokyo), UTC[+-]\d\d:\d\d\)/g, ' ');
  return (rest.match(/[A-Za-z]{2,}/g) ?? []).filter((word) => ENGLISH.has(word));
}

function renderAll(language: Language, generated: Scenario) {
  const audience = audienceOf(language, generated);
  const articles = articlesOf(generated);
  const match = (item: Article, rules = generated.rules): AudienceMatch => ({
    audienceId: audience.audienceId,
    article: item,
    rules,
    storyId: `story-${item.key}`,
  });
  const stories = new Map(
    articles.map((item): [string, StoryRecord] => [
      `story-${item.key}`,
      {
        storyId: `story-${item.key}`,
        leadArticleKey: item.key,
        firstSeenAt: item.publishedAt,
        outlets: generated.outlets,
        outletCount: generated.outlets.length + generated.moreOutlets,
        articleCount: generated.outlets.length + generated.moreOutlets + 1,
      },
    ]),
  );
  const alert = renderNotification(match(articles[0] as Article), audience);
  const noticeKey = updateNoticeKey(audience.audienceId, `story-${articles[0]?.key}`, 'change');
  const update = renderUpdateNotice(match(articles[0] as Article), audience, generated.change, noticeKey);
  const releaseAt = Date.parse('2030-06-01T00:00:00Z');
  const items = articles.map((item, index) =>
    toHeldNotification(match(item), generated.reasons[index % 2] as HoldReason, releaseAt - 60_000 * (index + 1)),
  );
  const single = planDigest(items.slice(0, 1), audience, releaseAt, { stories }).messages;
  const many = planDigest(items, audience, releaseAt, { stories }).messages;
  const data = [`${noticeKey.audienceId}|${noticeKey.articleKey}`, ...generated.outlets];
  return { audience, articles, data, messages: [alert, update, ...single, ...many] };
}

describe.each(['ko', 'ja'] as const)('a %s rendering', (language) => {
  it('has no English word of the catalog outside the data, on any channel of alerts, update notices and digests', () => {
    fc.assert(
      fc.property(scenario(language), (generated) => {
        const { audience, articles, data: extra, messages } = renderAll(language, generated);
        const data = dataOf(audience, articles, generated.rules, extra);
        for (const message of messages) {
          for (const [channel, text] of Object.entries(readTexts(message))) {
            expect(englishIn(text, data), `${channel}: ${text}`).toEqual([]);
          }
        }
      }),
      { numRuns: 60 },
    );
  });

  it('publishes structured bodies that are exactly what docs/schemas/structured-body.schema.json describes', () => {
    fc.assert(
      fc.property(scenario(language), (generated) => {
        for (const message of renderAll(language, generated).messages) {
          const document = JSON.parse(JSON.parse(message.body).default) as unknown;
          const result = PublishedDocumentSchema.safeParse(document);
          expect(result.success ? [] : result.error.issues).toEqual([]);
        }
      }),
      { numRuns: 30 },
    );
  });

  it('says "…and N more rules" in its own words when an alert lists only the first 50 rules', () => {
    const audience = AudienceSchema.parse({
      audienceId: 'desk-1',
      topicArn: 'arn:aws:sns:us-east-1:123456789012:desk-1',
      locale: LANGUAGES[language].locale,
    });
    const rules: RuleMatch[] = Array.from({ length: 55 }, (_, index) => ({
      ruleId: `rule-${index}`,
      urgent: false,
      reasons: Array.from({ length: 22 }, () => ({ kind: 'keyword' as const, term: '금리' })),
    }));
    const item: Article = {
      key: 'id:1',
      title: '제목',
      summary: '',
      url: 'https://news.example.kr/a/1',
      publishedAt: Date.parse('2026-03-14T13:30:00Z'),
      categories: [],
      categoryNames: [],
    };
    const message = renderNotification({ audienceId: 'desk-1', article: item, rules }, audience);
    const data = dataOf(audience, [item], rules);
    const texts = readTexts(message);
    expect(texts.email).toContain(language === 'ko' ? '- …외 규칙 5개' : '- …ほかルール5件');
    for (const [channel, text] of Object.entries(texts)) expect(englishIn(text, data), channel).toEqual([]);
  });
});

describe('SMS budgeting in every shipped language', () => {
  const headline = fc.oneof(
    fc.string({ unit: 'grapheme', minLength: 1, maxLength: 300 }),
    LANGUAGES.ko.text(300),
    LANGUAGES.ja.text(300),
    fc.lorem({ maxCount: 60 }),
  );
  const url = fc.oneof(
    fc.stringMatching(/^[a-z0-9]{0,40}$/).map((path) => `https://news.example.com/${path}`),
    fc.stringMatching(/^[a-z0-9]{200,1200}$/).map((path) => `https://news.example.com/${path}`),
  );
  const settings = fc.record({
    locale: fc.constantFrom('en-US', 'ko-KR', 'ja-JP', 'fr-FR'),
    name: fc.option(fc.oneof(fc.string({ minLength: 1, maxLength: 100 }), LANGUAGES.ko.text(100)), {
      nil: undefined,
    }),
    smsMaxSegments: fc.integer({ min: 1, max: 10 }),
    headlines: fc.array(headline, { minLength: 1, maxLength: 6 }),
    urls: fc.array(url, { minLength: 6, maxLength: 6 }),
  });

  it('every alert and digest SMS fits smsMaxSegments, or is the URL alone when the URL alone does not', () => {
    fc.assert(
      fc.property(settings, (generated) => {
        const audience = AudienceSchema.parse({
          audienceId: 'desk-1',
          name: generated.name?.trim() === '' ? undefined : generated.name,
          topicArn: 'arn:aws:sns:us-east-1:123456789012:desk-1',
          locale: generated.locale,
          smsMaxSegments: generated.smsMaxSegments,
          quietHours: { start: '22:00', end: '07:00' },
        });
        const releaseAt = Date.parse('2030-06-01T00:00:00Z');
        const articles: Article[] = generated.headlines.map((title, index) => ({
          key: `id:${index}`,
          title,
          summary: '',
          url: generated.urls[index] ?? 'https://news.example.com/',
          publishedAt: releaseAt - 3_600_000 * (index + 1),
          categories: [],
          categoryNames: [],
        }));
        const rules: RuleMatch[] = [{ ruleId: 'r-1', urgent: false, reasons: [] }];
        const matchOf = (item: Article): AudienceMatch => ({ audienceId: 'desk-1', article: item, rules });
        const held = articles.map((item) => toHeldNotification(matchOf(item), 'quiet-hours', releaseAt - 1000));
        /** `link`: the article's link when the SMS is a single article's (which may be the URL alone). */
        const check = (message: OutboundMessage, link: string | undefined) => {
          const sms = (JSON.parse(message.body) as { sms: string }).sms;
          if (link !== undefined && !fitsSms(link, generated.smsMaxSegments)) expect(sms).toBe(link);
          else expect(fitsSms(sms, generated.smsMaxSegments), sms).toBe(true);
        };
        const first = articles[0] as Article;
        const link = publishableLink(first.url);
        const url = link.ok ? link.url : first.url;
        check(renderNotification(matchOf(first), audience), url);
        for (const message of planDigest(held.slice(0, 1), audience, releaseAt).messages) check(message, url);
        if (held.length > 1) {
          for (const message of planDigest(held, audience, releaseAt).messages) check(message, undefined);
        }
      }),
      { numRuns: 150 },
    );
  });
});
