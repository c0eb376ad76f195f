/**
 * Rendering one match into the SNS `MessageStructure: json` document: golden bodies for ASCII,
 * Korean, Japanese and emoji headlines, the subject and SMS limits (never a cut URL, never a split
 * grapheme), the Amazon Q Developer custom-notification shape, and the SNS size limit.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseDocument } from '#core/email/notification';
import { type Article, type Audience, type AudienceMatch, AudienceSchema, type RuleMatch } from '#core/model';
import { AlertDocumentSchema } from '#core/published-document';
import {
  buildAlertDocument,
  buildAlertView,
  encodeMessageStructure,
  hasContentChar,
  KEYED_STRUCTURED_PROTOCOLS,
  MESSAGE_PROTOCOL_KEYS,
  MessageTooLargeError,
  messageBytes,
  NotificationRenderError,
  outboundBytes,
  renderChannelBodies,
  renderNotification,
  renderParkedNotification,
  SNS_MAX_MESSAGE_BYTES,
  STRUCTURED_PROTOCOLS,
  singleLine,
  truncateText,
  UnpublishableLinkError,
} from '#core/render';
import { fitsSms, smsSegments, toGsmFriendly } from '#core/sms';
import { parseAlertMessage } from '../../functions/slack-relay/message.ts';

const audienceFor = (overrides: Record<string, unknown> = {}): Audience =>
  AudienceSchema.parse({
    audienceId: 'markets',
    name: 'Markets desk',
    topicArn: 'arn:aws:sns:us-east-1:123456789012:markets',
    timeZone: 'America/New_York',
    ...overrides,
  });

const baseArticle: Article = {
  key: 'id:42',
  id: '42',
  title: 'Fed raises rates by 25 basis points as inflation cools',
  summary: 'The Federal Reserve raised its benchmark interest rate on Friday.',
  url: 'https://news.example.com/markets/fed-raises-rates?id=42',
  // 09:30 in New York (daylight saving time began on March 9, 2025).
  publishedAt: Date.UTC(2025, 2, 14, 13, 30),
  categories: ['002000000', '002004000'],
  categoryNames: ['Economy', 'Finance'],
  media: 'reuters',
  mediaName: 'Reuters',
  status: 'published',
};

const baseRules: RuleMatch[] = [
  {
    ruleId: 'rates',
    description: 'Interest rate decisions',
    urgent: false,
    reasons: [
      { kind: 'keyword', term: 'interest rate' },
      { kind: 'category', term: '002*' },
    ],
  },
  { ruleId: 'fed-watch', urgent: true, reasons: [{ kind: 'media', term: 'reuters' }] },
];

const matchFor = (article: Partial<Article> = {}, rules: RuleMatch[] = baseRules, audienceId = 'markets') =>
  ({ audienceId, article: { ...baseArticle, ...article }, rules }) satisfies AudienceMatch;

/** The SNS document of a rendered message, protocol by protocol. */
const documentOf = (body: string) => JSON.parse(body) as Record<string, string>;

/** What SNS delivers to a subscriber of `protocol`: its own key, or `default` when it has none. */
const deliveredTo = (body: string, protocol: string) => {
  const document = documentOf(body);
  return document[protocol] ?? document.default ?? '';
};

const graphemes = (text: string) => [...new Intl.Segmenter(undefined, { granularity: 'grapheme' }).segment(text)];
const hasLoneSurrogate = (text: string) =>
  /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(text);

describe('golden bodies: ASCII headline', () => {
  const message = renderNotification(matchFor(), audienceFor());
  const document = documentOf(message.body);

  it('addresses the message to the audience topic, keyed by article and audience', () => {
    expect(message.topicArn).toBe('arn:aws:sns:us-east-1:123456789012:markets');
    expect(message.key).toEqual({ audienceId: 'markets', articleKey: 'id:42' });
    expect(message.ruleIds).toEqual(['rates', 'fed-watch']);
  });

  it('renders subject, email and sms exactly', () => {
    expect(message.subject).toBe('[Markets desk] Fed raises rates by 25 basis points as inflation cools');
    expect(document.email).toBe(
      [
        'Fed raises rates by 25 basis points as inflation cools',
        '',
        'The Federal Reserve raised its benchmark interest rate on Friday.',
        '',
        'Source:     Reuters (reuters)',
        'Published:  Fri, Mar 14, 2025, 09:30 (America/New_York, UTC-04:00)',
        'Categories: Economy (002000000), Finance (002004000)',
        'Status:     published',
        'Link:       https://news.example.com/markets/fed-raises-rates?id=42',
        '',
        'Why you got this:',
        '- Rule rates: Interest rate decisions',
        '  Matched keyword "interest rate", category 002*',
        '- Rule fed-watch (urgent)',
        '  Matched media reuters',
        '',
        '--',
        'You receive this alert as a subscriber of "Markets desk" (audience markets).',
        'To change which articles you get, ask your news-alerts administrators to update the rules of audience markets (rule ids above), or to remove this address from the audience.',
        'Alert id: markets|id:42',
      ].join('\n'),
    );
    expect(document.sms).toBe(
      'Fed raises rates by 25 basis points as inflation cools https://news.example.com/markets/fed-raises-rates?id=42',
    );
    expect(smsSegments(document.sms ?? '')).toMatchObject({ encoding: 'GSM-7', segments: 1 });
  });

  it('puts a string under every protocol key and delivers the same structured body to each structured protocol', () => {
    expect(Object.keys(document).sort()).toEqual([...MESSAGE_PROTOCOL_KEYS].sort());
    for (const key of MESSAGE_PROTOCOL_KEYS) expect(typeof document[key], key).toBe('string');
    for (const protocol of STRUCTURED_PROTOCOLS) {
      expect(deliveredTo(message.body, protocol), protocol).toBe(document.default);
    }
  });

  it('carries each distinct body once; only the keys readers still pick by name repeat the structured one', () => {
    const keysByBody = new Map<string, string[]>();
    for (const [key, body] of Object.entries(document)) keysByBody.set(body, [...(keysByBody.get(body) ?? []), key]);
    expect(keysByBody.get(document.default ?? '')?.sort()).toEqual(['default', ...KEYED_STRUCTURED_PROTOCOLS].sort());
    for (const [body, keys] of keysByBody) if (body !== document.default) expect(keys).toHaveLength(1);
    expect(keysByBody.size).toBe(3);
  });

  it('delivers every protocol exactly what its own key carried before (the structured body, email, sms)', () => {
    // Before, the document was default (headline and link), email, sms and the structured body
    // under all six structured protocols; only protocols without a key (none the stack
    // subscribes) received the old default.
    const view = buildAlertView(matchFor(), audienceFor());
    const bodies = renderChannelBodies(view);
    const before: Record<string, string> = { email: bodies.email, sms: bodies.sms };
    for (const protocol of STRUCTURED_PROTOCOLS) before[protocol] = JSON.stringify(buildAlertDocument(view));
    for (const [protocol, text] of Object.entries(before))
      expect(deliveredTo(message.body, protocol), protocol).toBe(text);
    expect(message.body).toBe(
      JSON.stringify({
        default: bodies.structured,
        email: bodies.email,
        sms: bodies.sms,
        ...Object.fromEntries(KEYED_STRUCTURED_PROTOCOLS.map((protocol) => [protocol, bodies.structured])),
      }),
    );
  });

  it('remembers the UTF-8 size SNS counts, so the notifier packs batches by the bytes actually sent', () => {
    for (const title of [
      'Fed raises rates',
      '한국은행 기준금리 인상… 물가 잡기 총력',
      '株価 📈 \u{1F469}\u200D\u{1F4BB}',
    ]) {
      const rendered = renderNotification(matchFor({ title, summary: `${title} `.repeat(40) }), audienceFor());
      expect(outboundBytes(rendered), title).toBe(messageBytes(rendered.body, rendered.subject));
    }
  });

  it('makes the structured body an Amazon Q Developer custom notification with a versioned payload', () => {
    const structured = JSON.parse(deliveredTo(message.body, 'sqs')) as Record<string, unknown>;
    const parsed = AlertDocumentSchema.parse(structured);
    expect(parsed.version).toBe('1.0');
    expect(parsed.source).toBe('custom');
    expect(parsed.id).toBe('markets|id:42');
    expect(parsed.content).toEqual({
      textType: 'client-markdown',
      title: '\u{1F6A8} Fed raises rates by 25 basis points as inflation cools',
      description: [
        '*Reuters* · Fri, Mar 14, 2025, 09:30 (America/New_York, UTC-04:00)',
        'The Federal Reserve raised its benchmark interest rate on Friday.',
        'https://news.example.com/markets/fed-raises-rates?id=42',
        '*Why:* `rates` (keyword "interest rate", category 002*); `fed-watch` (media reuters)',
      ].join('\n'),
      keywords: ['Economy', 'Finance'],
    });
    expect(parsed.metadata.eventType).toBe('news-alerts.article-matched');
    expect(parsed.metadata.summary).toBe('[Markets desk] Fed raises rates by 25 basis points as inflation cools');
    for (const value of Object.values(parsed.metadata.additionalContext)) expect(typeof value).toBe('string');
    expect(parsed.metadata.additionalContext).toMatchObject({ ruleIds: 'rates,fed-watch', audienceId: 'markets' });
    expect(parsed.newsAlerts).toEqual({
      schemaVersion: 1,
      deliveryId: 'markets|id:42',
      audienceId: 'markets',
      audienceName: 'Markets desk',
      locale: 'en-US',
      language: 'en',
      urgent: true,
      article: {
        key: 'id:42',
        id: '42',
        title: 'Fed raises rates by 25 basis points as inflation cools',
        summary: 'The Federal Reserve raised its benchmark interest rate on Friday.',
        url: 'https://news.example.com/markets/fed-raises-rates?id=42',
        publishedAt: '2025-03-14T13:30:00.000Z',
        categories: ['002000000', '002004000'],
        categoryNames: ['Economy', 'Finance'],
        media: 'reuters',
        mediaName: 'Reuters',
        status: 'published',
      },
      matches: [
        {
          ruleId: 'rates',
          description: 'Interest rate decisions',
          urgent: false,
          reasons: [
            { kind: 'keyword', term: 'interest rate' },
            { kind: 'category', term: '002*' },
          ],
          omittedReasons: 0,
        },
        {
          ruleId: 'fed-watch',
          description: null,
          urgent: true,
          reasons: [{ kind: 'media', term: 'reuters' }],
          omittedReasons: 0,
        },
      ],
      omittedMatches: 0,
    });
    // Absent optional fields are explicit nulls, so consumers can tell "none" from "old schema".
    const sparse = AlertDocumentSchema.parse(
      JSON.parse(
        deliveredTo(
          renderNotification(
            matchFor({ id: undefined, media: undefined, mediaName: undefined, status: undefined }),
            audienceFor({ name: undefined }),
          ).body,
          'sqs',
        ),
      ),
    );
    expect(sparse.newsAlerts.article).toMatchObject({ id: null, media: null, mediaName: null, status: null });
    expect(sparse.newsAlerts.audienceName).toBeNull();
  });
});

describe('golden bodies: Korean, Japanese and emoji headlines', () => {
  it('Korean: subject whole, SMS cut at a space in one UCS-2 segment, time in Seoul', () => {
    const seoul = audienceFor({ audienceId: 'kr-econ', name: '경제팀', timeZone: 'Asia/Seoul' });
    const title = '한국은행, 기준금리 0.25%p 인상… “물가 잡기 총력” 이창용 총재 기자회견에서 추가 인상 가능성 시사';
    const message = renderNotification(
      matchFor({ title, url: 'https://news.example.kr/a/123', categoryNames: ['경제', '금융'] }, baseRules, 'kr-econ'),
      seoul,
      { locale: 'ko-KR' },
    );
    const document = documentOf(message.body);
    expect(message.subject).toBe(`[경제팀] ${title}`);
    expect(document.sms).toBe(
      '한국은행, 기준금리 0.25%p 인상… “물가 잡기 총력” 이창용 총재… https://news.example.kr/a/123',
    );
    expect(smsSegments(document.sms ?? '')).toEqual({ encoding: 'UCS-2', segments: 1, units: 70 });
    // Korean labels, padded to the same columns as the English ones (a Hangul syllable is two wide).
    expect(document.email).toContain('발행:       2025년 3월 14일 (금) 22:30 (Asia/Seoul, UTC+09:00)');
    expect(document.email).toContain('분류:       경제 (002000000), 금융 (002004000)');
  });

  it('Japanese: SMS cut at a word boundary although the headline has no spaces', () => {
    const tokyo = audienceFor({ audienceId: 'tokyo', name: undefined, timeZone: 'Asia/Tokyo' });
    const title =
      '日本銀行が追加利上げを決定政策金利は０．７５％に円相場は一時１ドル１４０円台まで急伸し市場に動揺が広がる';
    const message = renderNotification(
      matchFor({ title, url: 'https://news.example.jp/a/123' }, baseRules, 'tokyo'),
      tokyo,
    );
    const document = documentOf(message.body);
    expect(message.subject).toBe(`[tokyo] ${title}`);
    expect(document.sms).toBe(
      '日本銀行が追加利上げを決定政策金利は０．７５％に円相場は一時１ドル１４０円台… https://news.example.jp/a/123',
    );
    expect(smsSegments(document.sms ?? '').segments).toBe(1);
    expect(document.email).toContain('Published:  Fri, Mar 14, 2025, 22:30 (Asia/Tokyo, UTC+09:00)');
  });

  it('emoji: subject under 100 UTF-16 units without splitting a ZWJ sequence, flag or skin tone', () => {
    const title =
      'Launch day 🚀👩🏽‍🚀 crew of four 👨‍👩‍👧‍👦 lifts off from 🇺🇸 Florida as crowds cheer along the coast and the countdown ends 🎉🎉🎉';
    const message = renderNotification(matchFor({ title, url: 'https://news.example.com/a' }), audienceFor());
    expect(message.subject).toBe(
      '[Markets desk] Launch day 🚀👩🏽‍🚀 crew of four 👨‍👩‍👧‍👦 lifts off from 🇺🇸 Florida as crowds…',
    );
    expect(message.subject.length).toBeLessThan(100);
    const sms = documentOf(message.body).sms ?? '';
    expect(sms).toBe('Launch day 🚀👩🏽‍🚀 crew of four… https://news.example.com/a');
    expect(smsSegments(sms)).toMatchObject({ encoding: 'UCS-2', segments: 1 });
  });
});

describe('subject', () => {
  it('is one line without control characters, whatever the headline holds', () => {
    const message = renderNotification(
      matchFor({ title: 'Breaking:\r\nmarkets\tfall\u2028sharply\u0007 today\u0000' }),
      audienceFor({ name: 'Desk\nName' }),
    );
    expect(message.subject).toBe('[Desk Name] Breaking: markets fall sharply today');
  });

  it('uses the audience id when the audience has no name', () => {
    const message = renderNotification(matchFor(), audienceFor({ name: undefined }));
    expect(message.subject).toBe('[markets] Fed raises rates by 25 basis points as inflation cools');
  });

  it('cuts a very long headline at a word, with an ellipsis, under 100 characters', () => {
    const words = Array.from({ length: 400 }, (_, index) => `word${index}`);
    const message = renderNotification(matchFor({ title: words.join(' ') }), audienceFor());
    expect(message.subject.length).toBeLessThan(100);
    expect(message.subject.endsWith('…')).toBe(true);
    const kept = message.subject.slice('[Markets desk] '.length, -1);
    expect(words.join(' ').startsWith(`${kept} `)).toBe(true);
  });

  it('holds for any headline: short enough, one line, whole graphemes, a prefix of the headline', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', minLength: 1, maxLength: 300, size: 'max' }), (title) => {
        const view = buildAlertView(matchFor({ title }), audienceFor());
        const { subject } = renderChannelBodies(view);
        // SNS: "less than 100 characters"; UTF-16 units bound code points and graphemes from above.
        if (subject.length >= 100) return false;
        if (/[\p{Cc}\p{Zl}\p{Zp}]/u.test(subject) || hasLoneSurrogate(subject)) return false;
        const headline = subject.slice('[Markets desk] '.length);
        if (headline === view.article.title) return true;
        const kept = headline.slice(0, -1);
        // The cut sits on a grapheme boundary of the headline: no half emoji, no split jamo.
        const onBoundary = graphemes(view.article.title).some(({ index }) => index === kept.length);
        return headline.endsWith('…') && view.article.title.startsWith(kept) && onBoundary;
      }),
      { numRuns: 300 },
    );
  });
});

describe('sms', () => {
  const url = 'https://news.example.com/markets/fed-raises-rates?id=42';

  it('fills one GSM-7 segment, cutting at a word with "..." (the GSM-7 ellipsis)', () => {
    const title =
      'Stocks slide as investors weigh the outlook for interest rates, inflation and corporate earnings ahead of a busy week';
    const sms = documentOf(renderNotification(matchFor({ title }), audienceFor()).body).sms ?? '';
    expect(sms).toBe(
      `Stocks slide as investors weigh the outlook for interest rates, inflation and corporate earnings... ${url}`,
    );
    expect(smsSegments(sms)).toMatchObject({ encoding: 'GSM-7', segments: 1 });
  });

  it('keeps a Latin headline in GSM-7 by replacing typographic quotes and dashes', () => {
    const title = '“Fed’s decision” – markets react';
    const sms = documentOf(renderNotification(matchFor({ title }), audienceFor()).body).sms ?? '';
    expect(sms).toBe(`"Fed's decision" - markets react ${url}`);
    expect(smsSegments(sms).encoding).toBe('GSM-7');
  });

  it('uses up to smsMaxSegments segments', () => {
    const title = 'word '.repeat(100).trim();
    const one = documentOf(renderNotification(matchFor({ title }), audienceFor()).body).sms ?? '';
    const three =
      documentOf(renderNotification(matchFor({ title }), audienceFor({ smsMaxSegments: 3 })).body).sms ?? '';
    expect(smsSegments(one).segments).toBe(1);
    expect(smsSegments(three).segments).toBe(3);
    expect(three.length).toBeGreaterThan(one.length * 2);
  });

  it('sends the URL alone when even the URL does not fit, and never cuts it', () => {
    const longUrl = `https://news.example.com/${'a'.repeat(300)}`;
    const alone = documentOf(renderNotification(matchFor({ url: longUrl }), audienceFor()).body).sms;
    expect(alone).toBe(longUrl);
    const withHeadline =
      documentOf(renderNotification(matchFor({ url: longUrl }), audienceFor({ smsMaxSegments: 3 })).body).sms ?? '';
    expect(withHeadline.endsWith(` ${longUrl}`)).toBe(true);
    expect(smsSegments(withHeadline).segments).toBeLessThanOrEqual(3);
  });

  it('sends the URL alone rather than a headline cut to punctuation ("|..." for "|¨" when "¨" does not fit)', () => {
    // Found by the property below (seed 1051166892): `|` is a symbol to Unicode, punctuation to trimToFit.
    const longUrl = `https://x.example/${'p'.repeat(200)}`;
    const sms = documentOf(
      renderNotification(matchFor({ title: '|\u00a8', url: longUrl }), audienceFor({ smsMaxSegments: 2 })).body,
    ).sms;
    expect(sms).toBe(longUrl);
    expect(fitsSms(`|... ${longUrl}`, 2)).toBe(true);
    expect(hasContentChar('|')).toBe(false);
    expect(hasContentChar('\u00a8')).toBe(true);
  });

  it('holds for any headline and budget: URL intact at the end, within budget unless the URL alone is over', () => {
    fc.assert(
      fc.property(
        fc.string({ unit: 'grapheme', minLength: 1, maxLength: 400, size: 'max' }),
        fc.integer({ min: 1, max: 4 }),
        fc.constantFrom(url, 'https://news.example.kr/%EA%B8%B0%EC%82%AC/1', `https://x.example/${'p'.repeat(200)}`),
        (title, smsMaxSegments, articleUrl) => {
          const sms =
            documentOf(renderNotification(matchFor({ title, url: articleUrl }), audienceFor({ smsMaxSegments })).body)
              .sms ?? '';
          if (sms === articleUrl) {
            // The URL alone is only right when not even the first character of the headline fits
            // (a letter, number or symbol that is not punctuation trimToFit drops, such as `|`).
            const head = toGsmFriendly(singleLine(title));
            const first = graphemes(head).find(
              ({ segment }) => /[\p{L}\p{N}\p{S}]/u.test(segment) && hasContentChar(segment),
            );
            if (first === undefined) return true;
            const prefix = head.slice(0, first.index + first.segment.length);
            return [`${prefix}... ${articleUrl}`, `${prefix}\u2026 ${articleUrl}`, `${head} ${articleUrl}`].every(
              (candidate) => !fitsSms(candidate, smsMaxSegments),
            );
          }
          return (
            sms.endsWith(` ${articleUrl}`) &&
            smsSegments(sms).segments <= smsMaxSegments &&
            !hasLoneSurrogate(sms) &&
            !/[\p{Cc}]/u.test(sms)
          );
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe('structured body', () => {
  it('keeps Slack mentions and links out of the chat fields but not out of the data', () => {
    const message = renderNotification(matchFor({ title: '<!channel> Rates <b>up</b>' }), audienceFor());
    const parsed = AlertDocumentSchema.parse(JSON.parse(deliveredTo(message.body, 'sqs')));
    expect(parsed.content.title).not.toMatch(/[<>]/);
    expect(parsed.metadata.summary).not.toMatch(/[<>]/);
    expect(parsed.newsAlerts.article.title).toBe('<!channel> Rates <b>up</b>');
  });

  it('marks non-urgent alerts with the newspaper icon and lists category codes when names are missing', () => {
    const message = renderNotification(
      matchFor({ categoryNames: [] }, [{ ruleId: 'all', urgent: false, reasons: [{ kind: 'all', term: '*' }] }]),
      audienceFor(),
    );
    const parsed = AlertDocumentSchema.parse(JSON.parse(deliveredTo(message.body, 'sqs')));
    expect(parsed.content.title.startsWith('\u{1F4F0} ')).toBe(true);
    expect(parsed.content.keywords).toEqual(['002000000', '002004000']);
    expect(parsed.newsAlerts.urgent).toBe(false);
    expect(documentOf(message.body).email).toContain('  Matched every article (match-all rule)');
  });

  it('percent-encodes a non-ASCII URL so every client links it', () => {
    const message = renderNotification(matchFor({ url: ' https://news.example.kr/기사/1 ' }), audienceFor());
    const parsed = AlertDocumentSchema.parse(JSON.parse(deliveredTo(message.body, 'sqs')));
    expect(parsed.newsAlerts.article.url).toBe('https://news.example.kr/%EA%B8%B0%EC%82%AC/1');
  });
});

describe('email', () => {
  it('lists every matching rule with its description and the terms that hit', () => {
    const rules: RuleMatch[] = Array.from({ length: 12 }, (_, index) => ({
      ruleId: `rule-${index}`,
      description: `Description ${index}`,
      urgent: index === 3,
      reasons: [{ kind: 'keyword', term: `term ${index}` }],
    }));
    const email = documentOf(renderNotification(matchFor({}, rules), audienceFor()).body).email ?? '';
    for (const [index, rule] of rules.entries()) {
      expect(email).toContain(`- Rule ${rule.ruleId}: Description ${index}${index === 3 ? ' (urgent)' : ''}\n`);
      expect(email).toContain(`  Matched keyword "term ${index}"\n`);
    }
  });

  it('shows UTC times as UTC and falls back to en-US for an unknown locale', () => {
    const email =
      documentOf(renderNotification(matchFor(), audienceFor({ timeZone: 'UTC' }), { locale: 'not a locale!' }).body)
        .email ?? '';
    expect(email).toContain('Published:  Fri, Mar 14, 2025, 13:30 (UTC)\n');
  });

  it('shows names only when the provider sent names and codes that do not pair up', () => {
    const email =
      documentOf(renderNotification(matchFor({ categoryNames: ['Economy'] }), audienceFor()).body).email ?? '';
    expect(email).toContain('Category:   Economy\n');
  });
});

describe('size limits', () => {
  it('trims a huge summary at a word before building the bodies', () => {
    const summary = 'lorem ipsum dolor '.repeat(10_000);
    const message = renderNotification(matchFor({ summary }), audienceFor());
    const parsed = AlertDocumentSchema.parse(JSON.parse(deliveredTo(message.body, 'sqs')));
    expect(parsed.newsAlerts.article.summary.length).toBeLessThanOrEqual(1000);
    expect(parsed.newsAlerts.article.summary.endsWith('…')).toBe(true);
    expect(messageBytes(message.body, message.subject)).toBeLessThan(64 * 1024);
  });

  it('falls back to a compact rendering instead of failing when the rules list is enormous', () => {
    const rules: RuleMatch[] = Array.from({ length: 500 }, (_, index) => ({
      ruleId: `rule-${index}`,
      description: '설명 '.repeat(160),
      urgent: false,
      reasons: Array.from({ length: 20 }, (_, term) => ({
        kind: 'keyword' as const,
        term: `키워드${term} `.repeat(25),
      })),
    }));
    const message = renderNotification(matchFor({ summary: '요약 '.repeat(2000) }, rules), audienceFor());
    expect(messageBytes(message.body, message.subject)).toBeLessThanOrEqual(SNS_MAX_MESSAGE_BYTES);
    expect(message.ruleIds).toHaveLength(500);
    const parsed = AlertDocumentSchema.parse(JSON.parse(deliveredTo(message.body, 'sqs')));
    expect(parsed.newsAlerts.omittedMatches).toBeGreaterThan(0);
    expect(parsed.newsAlerts.matches.length + parsed.newsAlerts.omittedMatches).toBe(500);
    expect(documentOf(message.body).email).toContain(`more rules`);
  });

  it('refuses an absurd link before it could make a message too large, and checks the size limit', () => {
    // A link is never cut (an SMS carries it whole), so one over MAX_LINK_LENGTH is not published:
    // the pipeline parks the alert instead (delivery-pipeline-guards.test.ts).
    const url = `https://news.example.com/${'x'.repeat(40_000)}`;
    expect(() => renderNotification(matchFor({ url }), audienceFor())).toThrow(UnpublishableLinkError);
    const bodies = renderChannelBodies(buildAlertView(matchFor(), audienceFor()));
    expect(() => encodeMessageStructure({ ...bodies, email: '한'.repeat(90_000) })).toThrow(
      /over the SNS limit of 262144 bytes/,
    );
    expect(() => encodeMessageStructure({ ...bodies, email: '한'.repeat(90_000) })).toThrow(MessageTooLargeError);
  });
});

describe('render errors', () => {
  it('refuses a match of another audience', () => {
    expect(() => renderNotification(matchFor({}, baseRules, 'other'), audienceFor())).toThrow(NotificationRenderError);
  });

  it('refuses an article without a usable publication time or URL', () => {
    expect(() => renderNotification(matchFor({ publishedAt: Number.NaN }), audienceFor())).toThrow(
      /no valid publication time/,
    );
    expect(() => renderNotification(matchFor({ url: '  ' }), audienceFor())).toThrow(/has no link/);
    expect(() => renderNotification(matchFor({ url: '  ' }), audienceFor())).toThrow(UnpublishableLinkError);
  });
});

describe('truncateText', () => {
  it('never splits a grapheme, even inside one long token', () => {
    const text = '👩🏽‍🚀'.repeat(40);
    const cut = truncateText(text, 30);
    expect(cut.length).toBeLessThanOrEqual(30);
    expect(cut.endsWith('…')).toBe(true);
    expect(graphemes(cut.slice(0, -1)).every(({ segment }) => segment === '👩🏽‍🚀')).toBe(true);
  });

  it('prefers a hard cut when the only word cut would keep almost nothing', () => {
    const cut = truncateText(`A ${'x'.repeat(200)}`, 50);
    expect(cut).toBe(`A ${'x'.repeat(47)}…`);
  });

  it('marks the cut even when the text behind the limit is one huge grapheme', () => {
    const zalgo = `e${'\u0301'.repeat(40)}`;
    expect(truncateText(`abc ${zalgo}`, 10)).toBe('abc…');
  });

  it('drops dangling punctuation before the ellipsis', () => {
    expect(truncateText('Rates rise, stocks fall, bonds rally', 21)).toBe('Rates rise, stocks…');
  });
});

describe('parked and link-less alerts in the audience’s language', () => {
  const korean = () => audienceFor({ locale: 'ko-KR', timeZone: 'Asia/Seoul' });

  it('says the link was withheld, in Korean', () => {
    const message = renderParkedNotification(matchFor({ url: 'http://169.254.169.254/latest' }), korean());
    expect(documentOf(message.body).email).toContain(
      '링크:       포함하지 않음: 뉴스 제공처가 안전하게 공개할 수 없는 링크를 보냈습니다',
    );
  });

  it('writes the plain notice of an unrenderable alert in Korean, untitled included', () => {
    const message = renderParkedNotification(matchFor({ title: ' ', publishedAt: Number.NaN }), korean());
    expect(documentOf(message.body).email).toBe('(제목 없는 기사)\n\n알림 ID: markets|id:42');
  });

  it('writes the plain notice within the audience’s SMS segments, with a structured body its readers parse', () => {
    // Before: an SMS of 150 characters whatever the budget (3 UCS-2 segments), a plain-text
    // `default` that the Slack relay and the SES email function refused.
    fc.assert(
      fc.property(
        fc.oneof(fc.string({ unit: 'grapheme', maxLength: 400 }), fc.constant('가'.repeat(300))),
        fc.integer({ min: 1, max: 3 }),
        fc.constantFrom('ko-KR', 'en-US', 'ja-JP'),
        (title, smsMaxSegments, locale) => {
          const audience = audienceFor({ locale, smsMaxSegments });
          const parkedAt = Date.UTC(2026, 10, 23, 9);
          const message = renderParkedNotification(
            matchFor({ title, publishedAt: Number.NaN }),
            audience,
            {},
            parkedAt,
          );
          const document = documentOf(message.body);
          expect(smsSegments(document.sms ?? '').segments).toBeLessThanOrEqual(smsMaxSegments);
          const structured = AlertDocumentSchema.parse(JSON.parse(document.default ?? ''));
          expect(structured.newsAlerts.article).toMatchObject({
            url: '',
            publishedAt: new Date(parkedAt).toISOString(),
          });
          expect(structured.newsAlerts.deliveryId).toBe('markets|id:42');
          expect(() => parseAlertMessage(document.default ?? '')).not.toThrow();
          expect(() => parseDocument(document.default ?? '')).not.toThrow();
        },
      ),
      { numRuns: 150 },
    );
  });

  it('names an untitled article in the audience’s words, per language of the same article', () => {
    // One article object for both: its per-article cache must keep the languages apart.
    const match = matchFor({ title: '\u200B' });
    const ja = renderNotification(match, audienceFor({ locale: 'ja-JP' }));
    const en = renderNotification(match, audienceFor());
    expect(ja.subject).toBe('[Markets desk] (無題の記事)');
    expect(en.subject).toBe('[Markets desk] (untitled article)');
  });
});
