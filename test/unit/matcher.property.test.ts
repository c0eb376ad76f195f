/**
 * The indexed matcher must give exactly what the naive scan gives, for any rules and articles:
 * overlapping and nested keywords, Latin, Hangul, kana and CJK text with every kind of edge,
 * full-width and compatibility forms, irregular whitespace, surrogate pairs and lone surrogates,
 * prefix and name categories, exclusions, disabled and matchAll rules, empty summaries. Each run
 * compiles once and matches several articles, so state kept between articles is exercised too.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compileRules, naiveMatch } from '#core/matcher';
import type { Article, AudienceMatch, Rule } from '#core/model';
import { containsTerm, IdSet, normalizeText, TermAutomaton } from '#core/text';
import { referenceNormalize } from '#test/normalize-reference';

/** Word pieces chosen to overlap, nest and straddle edges: `rate` in `corporate`, `ai` in `said`. */
const PIECES = [
  'ai',
  'AI',
  'ＡＩ',
  'said',
  'rate',
  'rates',
  'corporate',
  'interest',
  'interest rate',
  '5g',
  '25g',
  'c++',
  'x-ray',
  '-driven',
  'ﬁ',
  'ß',
  'İ',
  'é',
  'e\u0301',
  '반도체',
  '반도체가',
  '도체',
  '금리',
  '半導体',
  '導体',
  'トヨタ',
  'ﾄﾖﾀ',
  '𝐀𝐈',
  '😀',
  '\ud800',
  // Scripts written with spaces besides Latin (word edges) and Thai (none).
  'рост',
  'прирост',
  'νέα',
  'ανανέα',
  'سلام',
  'ข่าว',
  'ab',
  'b',
  'a',
];
const SEPARATORS = ['', '', ' ', '  ', '\n', '\t', '-', '.', ',', '\u3000', '가', '의'];

const piece = fc.constantFrom(...PIECES);
/** Short strings of arbitrary UTF-16 (lone surrogates included), for what the pieces miss. */
const noise = fc.string({ unit: 'binary', maxLength: 3 });
const fragment = fc.oneof({ weight: 4, arbitrary: piece }, { weight: 1, arbitrary: noise });
const text = fc
  .array(fc.tuple(fragment, fc.constantFrom(...SEPARATORS)), { maxLength: 8 })
  .map((parts) => parts.map(([part, separator]) => part + separator).join(''));
/** Keyword terms: pieces, pairs of pieces, or bits of text. */
const keyword = fc.oneof(
  { weight: 3, arbitrary: piece },
  { weight: 1, arbitrary: fc.tuple(piece, fc.constantFrom(' ', '', '-'), piece).map(([a, s, b]) => a + s + b) },
  { weight: 1, arbitrary: text.filter((value) => value.length > 0 && value.length < 12) },
);

const CODES = ['002000000', '002001000', '002001003', '002010000', '003001000', '0020', '*'];
const NAMES = ['Economy', 'Economy > Finance', 'economy > finance > banks', 'ECONOMY>FINANCE', 'Society'];
const category = fc.constantFrom(...CODES, ...NAMES);
const categoryTerm = fc.oneof(
  category,
  category.map((value) => `${value.slice(0, Math.max(0, value.length - 3))}*`),
  fc.constantFrom('*', '002*', '00*', 'economy >*', 'ECONOMY*', 'economy > finance*', ' society '),
);
const MEDIA = ['01100101', '01100102', 'Seoul Daily', 'seoul  daily', 'ＳＥＯＵＬ DAILY'];
const STATUSES = ['published', 'Published', 'corrected', 'WITHDRAWN'];

const terms = <T>(arbitrary: fc.Arbitrary<T>) => fc.option(fc.array(arbitrary, { maxLength: 3 }), { nil: undefined });

const rule = (ruleId: string): fc.Arbitrary<Rule> =>
  fc.record(
    {
      ruleId: fc.constant(ruleId),
      audienceId: fc.constantFrom('a', 'b', 'c'),
      enabled: fc.constantFrom(true, true, true, false),
      description: fc.option(fc.constantFrom('desk', 'alerts'), { nil: undefined }),
      categories: terms(categoryTerm),
      excludeCategories: terms(categoryTerm),
      keywords: terms(keyword),
      excludeKeywords: terms(keyword),
      media: terms(fc.constantFrom(...MEDIA)),
      statuses: terms(fc.constantFrom(...STATUSES)),
      urgent: fc.boolean(),
      matchAll: fc.boolean(),
    },
    { requiredKeys: ['ruleId', 'audienceId', 'enabled', 'urgent', 'matchAll'] },
  );

const rules = fc
  .uniqueArray(fc.constantFrom('r1', 'r2', 'r3', 'r4', 'r5', 'r6', 'r7', 'r8', 'r9', 'r10', 'R1', 'r1a'), {
    maxLength: 10,
  })
  .chain((ids) => fc.tuple(...ids.map(rule)));

const article: fc.Arbitrary<Article> = fc.record({
  key: fc.constant('id:1'),
  title: text,
  summary: fc.oneof(fc.constant(''), text),
  url: fc.constant('https://news.example.com/1'),
  publishedAt: fc.constant(0),
  categories: fc.array(category, { maxLength: 3 }),
  categoryNames: fc.array(category, { maxLength: 2 }),
  media: fc.option(fc.constantFrom(...MEDIA), { nil: undefined }),
  mediaName: fc.option(fc.constantFrom(...MEDIA), { nil: undefined }),
  status: fc.option(fc.constantFrom(...STATUSES), { nil: undefined }),
});

function checkShape(result: readonly AudienceMatch[]): void {
  const audiences = result.map((match) => match.audienceId);
  expect(new Set(audiences).size).toBe(audiences.length);
  expect([...audiences].sort()).toEqual(audiences);
  for (const match of result) {
    expect(match.rules.length).toBeGreaterThanOrEqual(1);
    for (const ruleMatch of match.rules) expect(ruleMatch.reasons.length).toBeGreaterThanOrEqual(1);
    const ruleIds = match.rules.map((ruleMatch) => ruleMatch.ruleId);
    expect([...ruleIds].sort()).toEqual(ruleIds);
  }
}

describe('compileRules(rules).match', () => {
  it('equals naiveMatch for any rules and articles, and keeps the result well-formed', () => {
    fc.assert(
      fc.property(rules, fc.array(article, { minLength: 1, maxLength: 4 }), (ruleSet, articles) => {
        const matcher = compileRules(ruleSet);
        for (const subject of articles) {
          const result = matcher.match(subject);
          expect(result).toEqual(naiveMatch(ruleSet, subject));
          checkShape(result);
        }
      }),
      { numRuns: 2500 },
    );
  });

  it('equals naiveMatch when the keywords are cut from the article itself, so most of them hit', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fragment, fc.constantFrom(' ', '. ', '\n')), { minLength: 1, maxLength: 6 }),
        (parts) => {
          const title = parts.map(([part, separator]) => part + separator).join('');
          const keywords = parts.map(([part]) => part.trim()).filter((part) => part.length > 0);
          const ruleSet = keywords.map((term, i) => ({
            ruleId: `r${i}`,
            audienceId: 'a',
            enabled: true,
            urgent: false,
            matchAll: false,
            keywords: [term],
          }));
          const subject: Article = {
            key: 'id:1',
            title,
            summary: '',
            url: 'u',
            publishedAt: 0,
            categories: [],
            categoryNames: [],
          };
          const result = compileRules(ruleSet).match(subject);
          expect(result).toEqual(naiveMatch(ruleSet, subject));
          checkShape(result);
        },
      ),
      { numRuns: 1000 },
    );
  });
});

describe('TermAutomaton', () => {
  // Thousands of short terms over a small alphabet make a dense trie: many shared prefixes and
  // suffixes, failure chains and nested outputs, and a crowded double-array layout.
  const letter = fc.constantFrom('a', 'b', 'c', '1', ' ', '-', '반', '도', '체', '가', 'ト', 'ヨ', '𝐚');
  const shortTerm = fc.array(letter, { minLength: 1, maxLength: 5 }).map((letters) => normalizeText(letters.join('')));

  it('finds exactly the terms containsTerm finds, in large term sets', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(shortTerm, { minLength: 50, maxLength: 3000, size: 'max' }),
        fc.array(fc.array(letter, { maxLength: 60 }), { minLength: 1, maxLength: 5 }),
        (terms, texts) => {
          const usable = [...new Set(terms)].filter((term) => term.length > 0);
          const automaton = new TermAutomaton(usable.map((text, id) => ({ text, id })));
          const found = new IdSet(usable.length);
          for (const letters of texts) {
            const text = normalizeText(letters.join(''));
            found.reset();
            automaton.scan(text, found);
            const expected = usable.flatMap((term, id) => (containsTerm(text, term) ? [id] : []));
            expect([...found.members.subarray(0, found.size)].sort((a, b) => a - b)).toEqual(expected);
          }
        },
      ),
      { numRuns: 150 },
    );
  });

  it('finds exactly the prefix terms containsTerm finds with prefix, next to the same texts as exact terms', () => {
    // Every text is an exact term, and often a prefix term too: the two share a trie state or a
    // word, and must still be told apart (only the prefix form may run on into a longer word).
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.tuple(shortTerm, fc.constantFrom('exact', 'prefix', 'both')), {
          minLength: 1,
          maxLength: 400,
          selector: ([term]) => term,
        }),
        fc.array(fc.array(letter, { maxLength: 60 }), { minLength: 1, maxLength: 5 }),
        (entries, texts) => {
          const terms = entries
            .filter(([term]) => term.length > 0)
            .flatMap(([term, form]) => [
              ...(form === 'prefix' ? [] : [{ text: term, prefix: false }]),
              ...(form === 'exact' ? [] : [{ text: term, prefix: true }]),
            ]);
          fc.pre(terms.length > 0);
          const automaton = new TermAutomaton(terms.map((term, id) => ({ ...term, id })));
          const found = new IdSet(terms.length);
          for (const letters of texts) {
            for (const text of [normalizeText(letters.join('')), letters.join('').toUpperCase()]) {
              found.reset();
              automaton.findIn(text, found);
              const normalized = normalizeText(text);
              const expected = terms.flatMap((term, id) =>
                containsTerm(normalized, term.text, term.prefix) ? [id] : [],
              );
              expect([...found.members.subarray(0, found.size)].sort((a, b) => a - b)).toEqual(expected);
            }
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it('finds a one-word prefix term only where a word starts with it', () => {
    const automaton = new TermAutomaton([
      { text: 'semicond', id: 0, prefix: true },
      { text: 'semicond', id: 1 },
      { text: 'interest ra', id: 2, prefix: true },
    ]);
    const found = new IdSet(3);
    const hitsIn = (text: string) => {
      found.reset();
      automaton.findIn(text, found);
      return [...found.members.subarray(0, found.size)].sort();
    };
    expect(hitsIn('Semiconductors rally')).toEqual([0]);
    expect(hitsIn('semicond')).toEqual([0, 1]);
    expect(hitsIn('nonsemiconductor')).toEqual([]);
    expect(hitsIn('반도체semiconductor 수출')).toEqual([0]);
    expect(hitsIn('Interest  rates rise')).toEqual([2]);
    expect(hitsIn('interest hike')).toEqual([]);
  });
});

describe('TermAutomaton.findIn', () => {
  // ASCII text takes a path that never builds the normalized copy: capitals, every kind of ASCII
  // whitespace run and punctuation next to multi-word terms must read as normalizeText spells them.
  const asciiPiece = fc.constantFrom('AI', 'ai', 'Said', 'RATE', 'rates', 'Interest', 'c++', 'X-Ray', '5G', 'b', 'é');
  const asciiSeparator = fc.constantFrom('', ' ', '  ', '\n', '\t', '\r\n', '\v', '\f', ' \t ', '-', '.', '+');
  const mixedText = fc
    .array(fc.tuple(asciiPiece, asciiSeparator), { maxLength: 10 })
    .map((parts) => parts.map(([part, separator]) => part + separator).join(''));
  const termOf = fc.oneof(
    asciiPiece.map(normalizeText),
    fc.tuple(asciiPiece, asciiSeparator, asciiPiece).map(([a, s, b]) => normalizeText(a + s + b)),
    fc.constantFrom('interest rate', 'rate  cut', 'ai 반도체', '-driven', 'x-ray', 'c++'),
  );

  it('finds what scan finds in the normalized text, for ASCII and non-ASCII text alike', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(termOf, { minLength: 1, maxLength: 40 }),
        fc.array(mixedText, { minLength: 1, maxLength: 4 }),
        (terms, texts) => {
          const usable = [...new Set(terms.map(normalizeText))].filter((term) => term.length > 0);
          fc.pre(usable.length > 0);
          const automaton = new TermAutomaton(usable.map((text, id) => ({ text, id })));
          const expected = new IdSet(usable.length);
          const actual = new IdSet(usable.length);
          for (const text of texts) {
            expected.reset();
            actual.reset();
            automaton.scan(normalizeText(text), expected);
            automaton.findIn(text, actual);
            const sorted = (set: IdSet) => [...set.members.subarray(0, set.size)].sort((a, b) => a - b);
            expect(sorted(actual)).toEqual(sorted(expected));
          }
        },
      ),
      { numRuns: 1500 },
    );
  });
});

describe('normalizeText', () => {
  /** The plain pipeline, without the shortcuts: what normalizeText must equal on any input. */
  const fullPipeline = referenceNormalize;

  it('equals the plain pipeline on any text: ASCII, Latin-1, any code point, lone surrogates, graphemes', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string({ unit: 'binary-ascii' }),
          // Latin-1 and Latin Extended: no-break space, superscripts, ordinals, dotted capital I.
          fc.string({ unit: fc.nat({ max: 0x24f }).map((code) => String.fromCharCode(code)) }),
          fc.string({ unit: 'binary' }),
          fc.string({ unit: 'grapheme' }),
        ),
        (value) => {
          expect(normalizeText(value)).toBe(fullPipeline(value));
        },
      ),
      { numRuns: 2000 },
    );
  });
});
