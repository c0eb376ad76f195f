/**
 * The message catalogs (functions/core/messages/): every shipped language has every key English
 * has (deep, functions with the same arity), no empty wording, data shown as given; the locale
 * chain picks the language (`fr-FR` → English words with French dates, `ko-KR` → Korean, a
 * malformed tag → the default); ops templates per locale fall back along the chain and never show
 * a key name.
 */
import { describe, expect, it } from 'vitest';
import { SHIPPED_LOCALES } from '#core/locale';
import { messagesFor, messagesForLocale } from '#core/messages/catalog';
import { type Audience, type AudienceMatch, AudienceSchema } from '#core/model';
import { renderNotification } from '#core/render';
import { englishWords, leaves, PROBES, wordings } from './messages-probes.support.ts';

const en = messagesFor('en');

describe('message catalogs', () => {
  it('probe every function of the English catalog (a new key needs a probe here)', () => {
    for (const [path, value] of leaves(en)) {
      if (typeof value === 'function') expect(PROBES[path], path).toBeDefined();
    }
  });

  it.each(SHIPPED_LOCALES)('%s has every key of English, functions of the same arity, and nothing else', (language) => {
    const catalog = leaves(messagesFor(language));
    const english = leaves(en);
    expect([...catalog.keys()].sort()).toEqual([...english.keys()].sort());
    for (const [path, value] of english) {
      const other = catalog.get(path);
      expect(typeof other, path).toBe(typeof value);
      if (typeof value === 'function') expect((other as () => unknown).length, path).toBe(value.length);
    }
    expect(messagesFor(language).language).toBe(language);
  });

  it('formats counts for the number locale; a malformed one falls back to the language at the first count', () => {
    // The number format is built at the first count a catalog formats (catalog.ts), so the
    // fallback for a tag Intl refuses happens there, not when the catalog is built.
    expect(messagesFor('en', 'de-DE').count(1234567)).toBe('1.234.567');
    expect(messagesFor('en', 'not a tag!').count(1234567)).toBe('1,234,567');
    expect(messagesFor('ko', 'ko-KR').articles(3)).toBe('기사 3건');
  });

  it.each(SHIPPED_LOCALES)('%s never says nothing, and shows data as it was given', (language) => {
    const messages = messagesFor(language);
    for (const [path, texts] of wordings(messages)) {
      for (const text of texts) {
        expect(text.trim(), path).not.toBe('');
        expect(text, path).not.toMatch(/undefined|NaN|\[object|null/);
      }
      if (path === 'status') continue;
      (PROBES[path] ?? []).forEach((args, index) => {
        for (const arg of args.flat()) {
          if (typeof arg === 'string' && arg !== '') expect(texts[index], `${path} keeps ${arg}`).toContain(arg);
        }
      });
    }
  });

  it.each(['ko', 'ja'] as const)('%s has no English word of the English catalog in any of its wording', (language) => {
    const english = englishWords();
    const data = new Set(
      Object.values(PROBES)
        .flat(2)
        .filter((value): value is string => typeof value === 'string' && value !== ''),
    );
    for (const [path, texts] of wordings(messagesFor(language))) {
      for (let text of texts) {
        // Template placeholders are filled before anyone reads them.
        text = text.replace(/\{[^{}]*\}/g, ' ');
        for (const item of [...data].sort((a, b) => b.length - a.length)) text = text.split(item).join(' ');
        const found = (text.match(/[A-Za-z]{2,}/g) ?? []).filter((word) => english.has(word));
        expect(found, `${language} ${path}`).toEqual([]);
      }
    }
  });

  it('says known provider statuses in words in Korean and Japanese, and unknown ones as sent', () => {
    expect(messagesFor('ko').status('published')).toBe('게시됨');
    expect(messagesFor('ja').status('UPDATED')).toBe('更新');
    expect(messagesFor('ko').status('EMBARGOED')).toBe('EMBARGOED');
    // The status news-alerts itself gives a spike alert whose episode doubled is a word of ours.
    expect(messagesFor('ko').status('ESCALATED')).toBe('확대됨');
    expect(messagesFor('ja').status('ESCALATED')).toBe('拡大');
    expect(en.status('published')).toBe('published');
  });

  it('uses English plurals and the subscriber’s number format', () => {
    expect(en.articles(1)).toBe('1 article');
    expect(en.articles(2)).toBe('2 articles');
    expect(en.email.moreRules(1)).toBe('- ...and 1 more rule');
    expect(messagesFor('en', 'en-US').articles(1000)).toBe('1,000 articles');
    expect(messagesFor('en', 'de-DE').articles(1000)).toBe('1.000 articles');
    expect(messagesFor('ko', 'ko-KR').articles(1000)).toBe('기사 1,000건');
    expect(messagesFor('ja', 'ja-JP').articles(3)).toBe('3件の記事');
  });

  it('builds a catalog once per language and number locale', () => {
    expect(messagesFor('ko', 'ko-KR')).toBe(messagesFor('ko', 'ko-KR'));
    expect(messagesForLocale('ko-KR')).toBe(messagesFor('ko', 'ko-KR'));
  });
});

describe('locale chain', () => {
  it('picks the language along the chain: ko-KR → ko, fr-FR → en, a malformed tag → the default', () => {
    expect(messagesForLocale('ko-KR').language).toBe('ko');
    expect(messagesForLocale('ja').language).toBe('ja');
    expect(messagesForLocale('fr-FR').language).toBe('en');
    expect(messagesForLocale('fr-FR', 'ja-JP').language).toBe('ja');
    expect(messagesForLocale('not a tag!', 'ko-KR').language).toBe('ko');
    expect(messagesForLocale(undefined).language).toBe('en');
  });
});

const published = Date.parse('2026-03-14T13:30:00Z');

const audience = (overrides: Record<string, unknown> = {}): Audience =>
  AudienceSchema.parse({
    audienceId: 'desk',
    name: 'Desk',
    topicArn: 'arn:aws:sns:us-east-1:123456789012:desk',
    timeZone: 'Europe/Paris',
    ...overrides,
  });

const matchFor = (target: Audience): AudienceMatch => ({
  audienceId: target.audienceId,
  article: {
    key: 'id:1',
    id: '1',
    title: 'Headline',
    summary: '',
    url: 'https://news.example.com/1',
    publishedAt: published,
    categories: ['002000000'],
    categoryNames: ['Economy'],
    status: 'PUBLISHED',
  },
  rules: [{ ruleId: 'rates', urgent: false, reasons: [{ kind: 'keyword', term: 'rates' }] }],
});

function email(target: Audience, options: { locale?: string; defaultLocale?: string } = {}) {
  const message = renderNotification(matchFor(target), target, options);
  const document = JSON.parse(message.body) as Record<string, string>;
  return {
    subject: message.subject,
    email: document.email ?? '',
    locale: (JSON.parse(document.default ?? '{}') as { newsAlerts: { locale?: string } }).newsAlerts.locale,
  };
}

describe('rendering by locale', () => {
  it('fr-FR: English words with French dates, and the tag in the structured body', () => {
    const rendered = email(audience({ locale: 'fr-FR' }));
    expect(rendered.email).toContain('Published:  sam. 14 mars 2026, 14:30 (Europe/Paris, UTC+01:00)');
    expect(rendered.email).toContain('Why you got this:');
    expect(rendered.locale).toBe('fr-FR');
  });

  it('ko-KR: Korean words and dates', () => {
    const rendered = email(audience({ locale: 'ko-KR' }));
    expect(rendered.email).toContain('발행:       2026년 3월 14일 (토) 14:30');
    expect(rendered.email).toContain('상태:       게시됨');
    expect(rendered.email).not.toContain('Why you got this');
    expect(rendered.locale).toBe('ko-KR');
  });

  it('an audience without locale takes the stack default; a malformed override falls back to it', () => {
    expect(email(audience(), { defaultLocale: 'ja-JP' }).email).toContain('このアラートが届いた理由:');
    expect(email(audience(), { defaultLocale: 'ja-JP' }).locale).toBe('ja-JP');
    const malformed = email(audience(), { locale: 'not a tag!', defaultLocale: 'ko-KR' });
    expect(malformed.email).toContain('이 알림을 받은 이유:');
    expect(malformed.locale).toBe('ko-KR');
    expect(email(audience()).locale).toBe('en-US');
  });

  it('a locale without a catalog falls back to the default language before English', () => {
    const rendered = email(audience({ locale: 'fr-FR' }), { defaultLocale: 'ko-KR' });
    expect(rendered.email).toContain('이 알림을 받은 이유:');
    expect(rendered.email).toContain('14 mars 2026');
  });
});

describe('templates per locale', () => {
  const templated = (locale: string, templates: Record<string, unknown>) => audience({ locale, templates });

  it('use the translation of the subscriber’s language', () => {
    const rendered = email(
      templated('ko-KR', {
        subject: 'News: {headline}',
        footer: 'English footer',
        locales: { ko: { subject: '뉴스: {headline}', footer: '한국어 안내' }, ja: { footer: '日本語' } },
      }),
    );
    expect(rendered.subject).toBe('뉴스: Headline');
    expect(rendered.email).toContain('--\n한국어 안내\n알림 ID: desk|id:1');
  });

  it('fall back to the locale-neutral template, then to the catalog, never to a key name', () => {
    const neutral = email(templated('ko-KR', { footer: 'Ask #ops', locales: { ja: { footer: '日本語' } } }));
    expect(neutral.email).toContain('--\nAsk #ops\n알림 ID: desk|id:1');
    const builtin = email(templated('ko-KR', { locales: { ja: { footer: '日本語', subject: '{headline}' } } }));
    expect(builtin.subject).toBe('[Desk] Headline');
    expect(builtin.email).toContain('"Desk" 수신 그룹(desk)의 구독자이므로 이 알림을 받았습니다.');
    for (const text of [builtin.subject, builtin.email]) {
      expect(text).not.toMatch(/\bfooter\b|\bsubject\b|digestSubject|templates\.|\{/);
    }
  });

  it('follow the chain to the default locale’s translation', () => {
    const rendered = email(templated('fr-FR', { locales: { ja: { footer: '日本語の案内' } } }), {
      defaultLocale: 'ja-JP',
    });
    expect(rendered.email).toContain('--\n日本語の案内\nアラートID: desk|id:1');
  });
});
