/**
 * The Slack relay speaks the subscriber's language (issue 16): the document's `locale` picks the
 * catalogs (functions/core/messages/ for words every channel shares, functions/slack-relay/
 * slack-messages.ts for Slack's own), a document without one or with a tag that is not one reads
 * in English exactly as before, and a Korean or Japanese message carries no English fixed word.
 */
import { describe, expect, it } from 'vitest';
import { planDigest, toHeldNotification } from '#core/digest';
import { SHIPPED_LOCALES } from '#core/locale';
import { messagesFor } from '#core/messages/catalog';
import { AudienceSchema } from '#core/model';
import type { OutboundMessage } from '#core/ports';
import { renderNotification } from '#core/render';
import { type Block, renderSlackMessage, type SlackMessage } from '../../functions/slack-relay/blocks.ts';
import { parseAlertMessage } from '../../functions/slack-relay/message.ts';
import { SLACK_CATALOGS, type SlackMessages } from '../../functions/slack-relay/slack-messages.ts';
import { englishWordsIn, expectWithinSlackLimits, moreCountsIn, slackTexts } from './slack-relay-locale.support.ts';

/** A single-alert document as the alert function publishes it, in `locale` (absent when undefined). */
function alertBody(locale: unknown, overrides: Record<string, unknown> = {}): string {
  return JSON.stringify({
    newsAlerts: {
      schemaVersion: 1,
      deliveryId: '경제팀|기사:42',
      audienceId: '경제팀',
      audienceName: '경제팀',
      ...(locale === undefined ? {} : { locale }),
      urgent: false,
      article: {
        title: '한국은행, 기준금리 동결',
        summary: '금통위는 기준금리를 연 3.50%로 유지했다.',
        url: 'https://news.example.kr/a/42',
        publishedAt: '2025-03-14T00:30:00.000Z',
        categories: ['002000000'],
        categoryNames: ['경제'],
        media: 'yna',
        mediaName: '연합뉴스',
        status: 'PUBLISHED',
      },
      matches: [
        {
          ruleId: '금리',
          description: '금리 결정',
          urgent: false,
          reasons: [
            { kind: 'keyword', term: '기준금리' },
            { kind: 'category', term: '002*' },
          ],
          omittedReasons: 2,
        },
        { ruleId: '아시아-시장', description: null, urgent: true, reasons: [{ kind: 'all', term: '*' }] },
      ],
      omittedMatches: 0,
      ...overrides,
    },
  });
}

const render = (body: string): SlackMessage => renderSlackMessage(parseAlertMessage(body));

describe('locale in the Slack document', () => {
  it('reads a BCP 47 tag in canonical form', () => {
    expect(parseAlertMessage(alertBody('ko-kr')).locale).toBe('ko-KR');
    expect(parseAlertMessage(alertBody('ja')).locale).toBe('ja');
    expect(parseAlertMessage(alertBody(undefined)).locale).toBeUndefined();
  });

  it.each([
    ['a number', 42],
    ['null', null],
    ['an empty string', ''],
    ['not a tag', 'Korean please!'],
    ['an absurdly long tag', `ko-${'x'.repeat(500)}`],
    ['an object', { language: 'ko' }],
  ])('treats %s as no locale: parsed, and rendered in English as before', (_name, locale) => {
    const parsed = parseAlertMessage(alertBody(locale));
    expect(parsed.locale).toBeUndefined();
    expect(renderSlackMessage(parsed)).toEqual(render(alertBody(undefined)));
  });

  it.each(['en', 'en-US', 'en-GB', 'fr-FR', 'zz'])(
    'renders %s (English words: en, or a language with no catalog) byte for byte like no locale',
    (locale) => {
      expect(JSON.stringify(render(alertBody(locale)))).toBe(JSON.stringify(render(alertBody(undefined))));
    },
  );
});

describe('a Korean alert', () => {
  const message = render(alertBody('ko-KR'));
  const [header, section, context, why, footer] = message.blocks;

  it('labels, reasons, status, footer and the date fallback are Korean', () => {
    expect(slackTexts([header as Block])).toEqual(['📰 한국은행, 기준금리 동결']);
    expect(slackTexts([section as Block])[0]).toBe(
      '금통위는 기준금리를 연 3.50%로 유지했다.\n\n*<https://news.example.kr/a/42|연합뉴스에서 기사 읽기>*',
    );
    expect(slackTexts([context as Block])).toEqual([
      '*연합뉴스*',
      '<!date^1741912200^{date_short_pretty} {time}|2025년 3월 14일 금 00:30 UTC>',
      '경제 (002000000)',
      '게시됨',
    ]);
    expect(slackTexts([why as Block])[0]).toBe(
      '*이 알림을 받은 이유*\n• 규칙 금리 — 금리 결정: 키워드 “기준금리”, 분류 002*, 외 2건\n• 규칙 아시아-시장 (긴급): 모든 기사(전체 일치 규칙)',
    );
    expect(slackTexts([footer as Block])).toEqual(['news-alerts · 경제팀 · 알림 경제팀|기사:42']);
    expect(englishWordsIn(message)).toEqual([]);
    expectWithinSlackLimits(message);
  });

  it('says the reasons as the Korean email does, except Slack quotes a keyword typographically', () => {
    const ko = messagesFor('ko', 'ko-KR');
    const text = slackTexts([why as Block])[0] ?? '';
    for (const reason of [ko.reason.category('002*'), ko.reason.all, ko.more(2)]) expect(text).toContain(reason);
  });

  it('counts the rules left out in Korean', () => {
    const many = Array.from({ length: 13 }, (_, index) => ({
      ruleId: `규칙${index}`,
      urgent: false,
      reasons: [{ kind: 'media', term: '연합' }],
    }));
    const long = render(alertBody('ko', { matches: many, omittedMatches: 1 }));
    const text = slackTexts(long.blocks).find((block) => block.startsWith('*이 알림을 받은 이유*')) ?? '';
    expect(text.endsWith('\n…외 규칙 4개')).toBe(true);
    expect(text).toContain('매체 연합');
    expect(englishWordsIn(long)).toEqual([]);
  });

  it('stands in for an empty headline in Korean', () => {
    const untitled = render(alertBody('ko', {}).replace('"한국은행, 기준금리 동결"', '"  "'));
    expect(slackTexts(untitled.blocks)[0]).toBe('📰 (제목 없는 기사)');
  });
});

describe('a Japanese alert', () => {
  it('labels, reasons, status, footer and the date fallback are Japanese', () => {
    const message = render(
      alertBody('ja-JP', {
        audienceName: '経済部',
        deliveryId: '経済部|記事:42',
        article: {
          title: '日銀、追加利上げを決定',
          summary: '',
          url: 'https://news.example.jp/a/42',
          publishedAt: '2025-03-14T00:30:00.000Z',
          categories: ['002000000'],
          categoryNames: ['経済'],
          mediaName: '共同通信',
          status: 'updated',
        },
      }),
    );
    const texts = slackTexts(message.blocks);
    expect(texts).toContain('*<https://news.example.jp/a/42|共同通信で記事を読む>*');
    expect(texts).toContain('<!date^1741912200^{date_short_pretty} {time}|2025年3月14日(金) 00:30 UTC>');
    expect(texts).toContain('更新');
    expect(texts).toContain(
      '*このアラートが届いた理由*\n• ルール 금리 — 금리 결정: キーワード「기준금리」、カテゴリ 002*、ほか2件\n• ルール 아시아-시장 (緊急): すべての記事(全件一致ルール)',
    );
    expect(texts.at(-1)).toBe('news-alerts · 経済部 · アラート 経済部|記事:42');
    expect(englishWordsIn(message)).toEqual([]);
    expectWithinSlackLimits(message);
  });
});

describe('digests in the subscriber language, through the real renderer', () => {
  const releaseAt = Date.parse('2026-11-23T00:00:00Z');

  function digestFor(locale: string, count: number): OutboundMessage[] {
    const audience = AudienceSchema.parse({
      audienceId: 'chips',
      name: locale.startsWith('ja') ? '半導体チーム' : '반도체팀',
      topicArn: 'arn:aws:sns:us-east-1:123456789012:news-alerts-audience-chips',
      timeZone: 'Asia/Seoul',
      deliveryMode: 'digest',
      locale,
    });
    const items = Array.from({ length: count }, (_, index) =>
      toHeldNotification(
        {
          audienceId: 'chips',
          article: {
            key: `id:${index}`,
            title: `${'반도체 투자 확대 '.repeat(12)}${index}`,
            summary: '',
            url: `https://news.example.kr/${index}`,
            publishedAt: releaseAt - index * 60_000,
            categories: [`0${String(index % 70).padStart(2, '0')}000000`],
            categoryNames: [`분류${index % 70}`],
            mediaName: '전자신문',
          },
          rules: [{ ruleId: '칩', urgent: index % 7 === 6, reasons: [{ kind: 'keyword', term: '반도체' }] }],
        },
        'digest',
        releaseAt - 3_600_000,
      ),
    );
    return [...planDigest(items, audience, releaseAt).messages];
  }

  /** What a Lambda subscriber receives: `default`, since a digest has no `lambda` key. */
  const lambdaBody = (message: OutboundMessage) => (JSON.parse(message.body) as Record<string, string>).default ?? '';

  it.each(['ko-KR', 'ja-JP'])(
    '%s: the document names its locale; no English word; every entry accounted for',
    (locale) => {
      const language = locale.slice(0, 2) as 'ko' | 'ja';
      let accounted = 0;
      const messages = digestFor(locale, 600);
      for (const message of messages) {
        const digest = parseAlertMessage(lambdaBody(message));
        expect(digest.locale).toBe(locale);
        if (digest.kind !== 'digest') throw new Error('expected a digest');
        const slack = renderSlackMessage(digest);
        expectWithinSlackLimits(slack);
        expect(englishWordsIn(slack, [digest.deliveryId])).toEqual([]);
        const counted = moreCountsIn(slack, language, locale);
        expect(counted).toBe(digest.digest.count);
        accounted += counted;
      }
      expect(accounted).toBe(600);
    },
  );

  it('ko-KR: heading, counts and the date fallback read as the Korean email does', () => {
    const [message] = digestFor('ko-KR', 3);
    const slack = renderSlackMessage(parseAlertMessage(lambdaBody(message as OutboundMessage)));
    const texts = slackTexts(slack.blocks);
    expect(texts[0]).toBe('📬 반도체팀: 기사 3건');
    expect(texts[1]).toBe('<!date^1795392000^{date_short_pretty} {time}|2026년 11월 23일 월 00:00 UTC> 뉴스 요약');
    expect(texts.find((text) => text.startsWith('*분류0 (000000000)*'))).toMatch(/^\*분류0 \(000000000\)\* · 1건\n/);
    expect(slack.text.startsWith('📬 반도체팀: 기사 3건 — ')).toBe(true);
  });
});

describe('a digest split into parts', () => {
  it.each([
    ['ko-KR', '📬 반도체팀: 기사 2건 (2/3통)'],
    ['ja-JP', '📬 반도체팀: 2件の記事 (2/3通目)'],
    ['en-US', '📬 반도체팀: 2 articles (part 2/3)'],
  ])('%s: the header is the chat title every channel shows', (locale, header) => {
    const entry = (index: number) => ({
      deliveryId: `칩|${index}`,
      article: { title: `제목${index}`, url: `https://news.example.kr/${index}`, publishedAt: '2026-11-23T00:00:00Z' },
    });
    const slack = render(
      JSON.stringify({
        newsAlerts: {
          schemaVersion: 1,
          kind: 'digest',
          locale,
          deliveryId: '칩|요약',
          audienceId: '칩',
          audienceName: '반도체팀',
          digest: {
            releaseAt: '2026-11-23T00:00:00Z',
            part: 2,
            parts: 3,
            total: 7,
            count: 2,
            groups: [{ label: '반도체', count: 2, total: 5, entries: [entry(1), entry(2)] }],
          },
        },
      }),
    );
    const language = locale.slice(0, 2) as 'ko' | 'ja' | 'en';
    expect(slackTexts(slack.blocks)[0]).toBe(header);
    expect(header.slice(3)).toBe(messagesFor(language, locale).digest.chatTitle('반도체팀', 2, 2, 3));
    expect(slack.text.startsWith(`${header} — `)).toBe(true);
    const group = messagesFor(language, locale).digest.groupHeading('*반도체*', 2, 5);
    expect(slackTexts(slack.blocks).some((text) => text.startsWith(`${group}\n• `))).toBe(true);
  });
});

describe('the Slack catalog', () => {
  const args = {
    media: '〔①〕',
    term: '〔②〕',
    ruleId: '〔③〕',
    audience: '〔④〕',
    deliveryId: '〔⑤〕',
    date: '〔⑥〕',
  };
  /** Each entry with arguments it must show (counts 7 and 1234567 formatted for the language). */
  function samples(words: SlackMessages, count: (n: number) => string): [string, string, string[]][] {
    return [
      ['readArticle', words.readArticle, []],
      ['readArticleOn', words.readArticleOn(args.media), [args.media]],
      ['linkTooLong', words.linkTooLong, []],
      ['reasonKeyword', words.reasonKeyword(args.term), [args.term]],
      ['rule', words.rule(args.ruleId, false), [args.ruleId]],
      ['rule (urgent)', words.rule(args.ruleId, true), [args.ruleId]],
      ['moreRulesLine', words.moreRulesLine(1234567), [count(1234567)]],
      ['alertFooter', words.alertFooter(args.audience, args.deliveryId), [args.audience, args.deliveryId]],
      ['digestFooter', words.digestFooter(args.audience, args.deliveryId), [args.audience, args.deliveryId]],
      ['digestOf', words.digestOf(args.date), [args.date]],
      ['moreInCategory', words.moreInCategory(7), [count(7)]],
      ['moreInCategories', words.moreInCategories(1234567, 7), [count(1234567), count(7)]],
    ];
  }

  it('has every entry in every shipped language, each real text that keeps its values', () => {
    const englishKeys = Object.keys(SLACK_CATALOGS.en(String)).sort();
    for (const language of SHIPPED_LOCALES) {
      const count = messagesFor(language).count;
      const words = SLACK_CATALOGS[language](count);
      expect(Object.keys(words).sort()).toEqual(englishKeys);
      const shown = samples(words, count);
      // Every key of the interface is sampled: a new entry must be added here too.
      expect(new Set(shown.map(([name]) => name.split(' ')[0]))).toEqual(new Set(englishKeys));
      for (const [name, text, values] of shown) {
        expect(text.trim(), `${language}.${name}`).not.toBe('');
        expect(text, `${language}.${name}`).not.toMatch(/undefined|NaN|\[object/);
        for (const value of values) expect(text, `${language}.${name}`).toContain(value);
      }
    }
  });

  it('has no English word in Korean or Japanese', () => {
    for (const language of ['ko', 'ja'] as const) {
      const count = messagesFor(language).count;
      for (const [name, text] of samples(SLACK_CATALOGS[language](count), count)) {
        expect(englishWordsIn(text.replace('news-alerts', '')), `${language}.${name}`).toEqual([]);
      }
    }
  });

  it('says English counts in the plural only when they are not one', () => {
    const words = SLACK_CATALOGS.en(messagesFor('en').count);
    expect(words.moreInCategories(1, 1)).toBe('…and 1 more article in 1 more category');
    expect(words.moreInCategories(1234, 2)).toBe('…and 1,234 more articles in 2 more categories');
  });
});

describe('an alert from the real renderer for a ko-KR audience', () => {
  it('names its locale and renders in Korean', () => {
    const audience = AudienceSchema.parse({
      audienceId: 'markets',
      name: '시장팀',
      topicArn: 'arn:aws:sns:us-east-1:123456789012:news-alerts-audience-markets',
      timeZone: 'Asia/Seoul',
      locale: 'ko-KR',
    });
    const outbound = renderNotification(
      {
        audienceId: 'markets',
        article: {
          key: 'id:1',
          id: '1',
          title: '한국은행, 기준금리 동결',
          summary: '',
          url: 'https://news.example.kr/a',
          publishedAt: Date.UTC(2025, 2, 14, 0, 30),
          categories: ['002000000'],
          categoryNames: ['경제'],
          media: 'yna',
          mediaName: '연합뉴스',
          status: 'PUBLISHED',
        },
        rules: [{ ruleId: '금리', urgent: true, reasons: [{ kind: 'keyword', term: '기준금리' }] }],
      },
      audience,
    );
    const document = JSON.parse(outbound.body) as Record<string, string>;
    const parsed = parseAlertMessage(document.lambda ?? document.default ?? '');
    expect(parsed.locale).toBe('ko-KR');
    const slack = renderSlackMessage(parsed);
    expect(slackTexts(slack.blocks)).toContain('*이 알림을 받은 이유*\n• 규칙 금리 (긴급): 키워드 “기준금리”');
    expect(englishWordsIn(slack, [parsed.deliveryId])).toEqual([]);
  });

  it('speaks the language the email speaks when the chain runs through the stack default (fr-FR, default ko-KR)', () => {
    const audience = AudienceSchema.parse({
      audienceId: 'paris',
      topicArn: 'arn:aws:sns:us-east-1:123456789012:news-alerts-audience-paris',
      timeZone: 'Europe/Paris',
      locale: 'fr-FR',
    });
    const outbound = renderNotification(
      {
        audienceId: 'paris',
        article: {
          key: 'id:2',
          id: '2',
          title: '한국은행, 기준금리 동결',
          summary: '',
          url: 'https://news.example.kr/b',
          publishedAt: Date.UTC(2025, 2, 14, 0, 30),
          categories: ['002000000'],
          categoryNames: ['경제'],
          media: 'yna',
          mediaName: '연합뉴스',
          status: 'PUBLISHED',
        },
        rules: [{ ruleId: '금리', urgent: false, reasons: [{ kind: 'keyword', term: '기준금리' }] }],
      },
      audience,
      { defaultLocale: 'ko-KR' },
    );
    const document = JSON.parse(outbound.body) as Record<string, string>;
    // The email is in Korean words (fr → ko-KR → ko on the chain)...
    expect(document.email).toContain(messagesFor('ko').email.whyHeading);
    const parsed = parseAlertMessage(document.default ?? '');
    expect(parsed).toMatchObject({ locale: 'fr-FR', language: 'ko' });
    // ...and so is Slack, although the relay does not know the stack default.
    const slack = renderSlackMessage(parsed);
    expect(slackTexts(slack.blocks)).toContain('*이 알림을 받은 이유*\n• 규칙 금리: 키워드 “기준금리”');
    expect(englishWordsIn(slack, [parsed.deliveryId])).toEqual([]);
  });
});
