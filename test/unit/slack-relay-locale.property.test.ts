/**
 * Properties of Slack messages in Korean and Japanese, over hostile documents: long Hangul, kana
 * and kanji, emoji sequences, markup characters, dozens of rules and categories. Whatever the
 * document holds, the message keeps Slack's limits (header 150, section 3,000, 50 blocks), carries
 * no English fixed word, and a digest accounts for every entry; an `en` document renders exactly
 * like one without a locale.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { renderSlackMessage } from '../../functions/slack-relay/blocks.ts';
import { parseAlertMessage } from '../../functions/slack-relay/message.ts';
import { englishWordsIn, expectWithinSlackLimits, moreCountsIn } from './slack-relay-locale.support.ts';

type Language = 'ko' | 'ja';

const hangul = fc.integer({ min: 0xac00, max: 0xd7a3 }).map((code) => String.fromCharCode(code));
const japanese = fc.oneof(
  fc.integer({ min: 0x3041, max: 0x3096 }).map((code) => String.fromCharCode(code)),
  fc.integer({ min: 0x30a1, max: 0x30fa }).map((code) => String.fromCharCode(code)),
  fc.integer({ min: 0x4e00, max: 0x9fff }).map((code) => String.fromCharCode(code)),
);
/** What provider text throws at a renderer besides letters: markup, controls, emoji, digits. */
const hostile = fc.constantFrom(
  '<',
  '>',
  '&',
  '|',
  '*',
  '_',
  '`',
  ' ',
  '\n',
  '\u200f',
  '\u2028',
  '👨‍👩‍👧‍👦',
  '🇰🇷',
  '👍🏽',
  '…',
  '0',
  '7',
  ',',
  ':',
);

/** Text of the language with no ASCII letter in it, so any English word found is a fixed word. */
const text = (language: Language, maxLength: number, minLength = 0) =>
  fc.string({
    unit: fc.oneof({ weight: 6, arbitrary: language === 'ko' ? hangul : japanese }, { weight: 1, arbitrary: hostile }),
    minLength,
    maxLength,
  });

const locales: Record<Language, fc.Arbitrary<string>> = {
  ko: fc.constantFrom('ko', 'ko-KR', 'ko-kr', 'ko-Kore-KR'),
  ja: fc.constantFrom('ja', 'ja-JP', 'ja-jp'),
};

const instant = fc
  .integer({ min: Date.UTC(2000, 0, 1), max: Date.UTC(2099, 11, 31) })
  .map((epochMs) => new Date(epochMs).toISOString());

const match = (language: Language) =>
  fc.record({
    ruleId: text(language, 40, 1),
    description: fc.option(text(language, 1200), { nil: null }),
    urgent: fc.boolean(),
    reasons: fc.array(
      fc.record({
        kind: fc.constantFrom('keyword', 'category', 'media', 'status', 'all'),
        term: text(language, 80, 1),
      }),
      { maxLength: 6 },
    ),
    omittedReasons: fc.nat({ max: 2000 }),
  });

const status = (language: Language) =>
  fc.option(fc.oneof(fc.constantFrom('PUBLISHED', 'updated', 'Deleted'), text(language, 40)), { nil: null });

const alertDocument = (language: Language) =>
  fc.record({
    schemaVersion: fc.constant(1),
    locale: locales[language],
    deliveryId: text(language, 80, 1),
    audienceId: text(language, 40, 1),
    audienceName: fc.option(text(language, 300), { nil: null }),
    urgent: fc.boolean(),
    article: fc.record({
      title: text(language, 600),
      summary: text(language, 5000),
      url: fc.nat().map((n) => `https://news.example.kr/a/${n}`),
      publishedAt: instant,
      categories: fc.array(fc.stringMatching(/^\d{9}$/), { maxLength: 8 }),
      categoryNames: fc.array(text(language, 60), { maxLength: 8 }),
      media: fc.option(text(language, 40), { nil: null }),
      mediaName: fc.option(text(language, 300), { nil: null }),
      status: status(language),
    }),
    matches: fc.array(match(language), { maxLength: 30 }),
    omittedMatches: fc.nat({ max: 100_000 }),
  });

const digestEntry = (language: Language) =>
  fc.record({
    deliveryId: text(language, 60),
    urgent: fc.boolean(),
    article: fc.record({
      // Long headlines too, so categories overflow their section and the "more" lines show.
      title: fc.oneof(text(language, 80), text(language, 900, 300)),
      url: fc.nat().map((n) => `https://news.example.kr/d/${n}`),
      publishedAt: instant,
      mediaName: fc.option(text(language, 200), { nil: null }),
      status: status(language),
    }),
    matches: fc.array(match(language), { maxLength: 3 }),
    omittedMatches: fc.nat({ max: 50 }),
  });

const group = (language: Language, maxEntries: number) =>
  fc.record({
    label: text(language, 300, 1),
    entries: fc.array(digestEntry(language), { maxLength: maxEntries }),
    extra: fc.option(fc.nat({ max: 500 }), { nil: undefined }),
  });

const digestDocument = (language: Language) =>
  fc
    .record({
      locale: locales[language],
      deliveryId: text(language, 80, 1),
      audienceId: text(language, 40, 1),
      audienceName: fc.option(text(language, 300), { nil: null }),
      urgent: fc.boolean(),
      releaseAt: instant,
      parts: fc.integer({ min: 1, max: 9 }),
      holds: fc.array(text(language, 400, 1), { maxLength: 12 }),
      // A few categories, or more than the 46 sections a message has room for.
      groups: fc.oneof(
        fc.array(group(language, 8), { minLength: 1, maxLength: 8 }),
        fc.array(group(language, 2), { minLength: 44, maxLength: 60 }),
      ),
    })
    .chain((fields) =>
      fc.integer({ min: 1, max: fields.parts }).map((part) => {
        const count = fields.groups.reduce((sum, group) => sum + group.entries.length, 0);
        return {
          schemaVersion: 1,
          kind: 'digest',
          locale: fields.locale,
          deliveryId: fields.deliveryId,
          audienceId: fields.audienceId,
          audienceName: fields.audienceName,
          urgent: fields.urgent,
          digest: {
            releaseAt: fields.releaseAt,
            part,
            parts: fields.parts,
            total: count + (fields.parts - 1) * 3,
            count,
            holds: fields.holds,
            groups: fields.groups.map((group) => ({
              label: group.label,
              count: group.entries.length,
              ...(group.extra === undefined ? {} : { total: group.entries.length + group.extra }),
              entries: group.entries,
            })),
          },
        };
      }),
    );

const body = (newsAlerts: unknown) => JSON.stringify({ newsAlerts });

/**
 * A failure found is always reported, but shrinking a digest of hundreds of entries can take
 * minutes: past this limit fast-check reports the counterexample shrunk so far. A slow machine
 * that hits it while passing only runs fewer cases (not marked as a failure).
 */
const settings = (numRuns: number) => ({ numRuns, interruptAfterTimeLimit: 60_000 });

describe.each(['ko', 'ja'] as const)('Slack messages in %s', (language) => {
  it('an alert keeps Slack limits and has no English fixed word', () => {
    fc.assert(
      fc.property(alertDocument(language), (document) => {
        const message = renderSlackMessage(parseAlertMessage(body(document)));
        expectWithinSlackLimits(message);
        expect(englishWordsIn(message)).toEqual([]);
      }),
      settings(60),
    );
  });

  it('a digest keeps Slack limits, has no English fixed word and accounts for every entry', () => {
    fc.assert(
      fc.property(digestDocument(language), (document) => {
        const message = renderSlackMessage(parseAlertMessage(body(document)));
        expectWithinSlackLimits(message);
        expect(englishWordsIn(message)).toEqual([]);
        expect(moreCountsIn(message, language, document.locale)).toBe(document.digest.count);
      }),
      settings(25),
    );
  });

  it('the same document with an English locale renders exactly as without one', () => {
    fc.assert(
      fc.property(
        fc.oneof(alertDocument(language), digestDocument(language)),
        fc.constantFrom('en', 'en-US', 'en-GB'),
        (document, english) => {
          const { locale: _locale, ...without } = document;
          const plain = renderSlackMessage(parseAlertMessage(body(without)));
          expect(renderSlackMessage(parseAlertMessage(body({ ...without, locale: english })))).toEqual(plain);
        },
      ),
      settings(30),
    );
  });
});
