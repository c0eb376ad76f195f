/**
 * The shortcuts the matcher takes on its hot path must give exactly what the plain path gives:
 * normalizeText returning text that is normalized already as it is, the keyword scan reading ASCII
 * text as bytes without normalizing it, and a matching rule's shared RuleMatch list found straight
 * from its mask.
 */
import { describe, expect, it } from 'vitest';
import { compileRules } from '#core/matcher';
import type { Article, Rule } from '#core/model';
import { IdSet, normalizeText, normalizeTextKeepingApostrophes, TermAutomaton } from '#core/text';
import { referenceNormalize, referenceNormalizeKeepingApostrophes } from '#test/normalize-reference';

/** normalizeText without any shortcut: what it must equal on any input. */
const fullPipeline = referenceNormalize;

describe('normalizeText on text that is normalized already', () => {
  // Neighbours that NFKC composes with what follows them (e + U+0301 is é, 가 + U+11A8 is 각,
  // か + U+3099 is が, < + U+0338 is ≮), scripts whose vowel signs compose, letters that lowercase,
  // and spaces.
  const neighbours = ['a', 'e', 'E', '<', ' ', 'ᄀ', '가', 'か', 'ｱ', '\u0915', '\u0b47', '\u0dd9', '\u1025', 'Σ'];

  it('equals the full pipeline for every BMP code unit, alone and next to each neighbour', () => {
    const wrong: string[] = [];
    for (let unit = 0; unit < 0x10000; unit++) {
      const char = String.fromCharCode(unit);
      const texts = [char, `x${char}x`, ...neighbours.flatMap((other) => [other + char, char + other])];
      for (const text of texts) {
        if (normalizeText(text) !== fullPipeline(text)) wrong.push(JSON.stringify(text));
        // The variant the stored hashes use shares the shortcut, so it is held to its pipeline too.
        if (normalizeTextKeepingApostrophes(text) !== referenceNormalizeKeepingApostrophes(text)) {
          wrong.push(`keeping apostrophes: ${JSON.stringify(text)}`);
        }
      }
    }
    expect(wrong.slice(0, 10)).toEqual([]);
  });

  it('returns the same string for normalized text and still collapses and trims spaces', () => {
    const korean = '반도체 수출이 늘었다 ai반도체';
    expect(normalizeText(korean)).toBe(korean);
    expect(normalizeText(' 반도체  수출 ')).toBe('반도체 수출');
    expect(normalizeText('반도체\u3000수출')).toBe('반도체 수출');
    expect(normalizeText('')).toBe('');
    expect(normalizeText(' ')).toBe('');
  });
});

describe('TermAutomaton.findIn reading ASCII text as bytes', () => {
  const terms = ['ai', 'interest rate', 'rate', 'x-ray', 'ai 반도체', '반도체', 'c++'];
  const automaton = new TermAutomaton(terms.map((text, id) => ({ text, id })));
  const sorted = (set: IdSet) => [...set.members.subarray(0, set.size)].sort((a, b) => a - b);
  const expectSameAsScan = (text: string) => {
    const expected = new IdSet(terms.length);
    const actual = new IdSet(terms.length);
    automaton.scan(normalizeText(text), expected);
    automaton.findIn(text, actual);
    expect(sorted(actual), JSON.stringify(text.slice(0, 80))).toEqual(sorted(expected));
  };

  it('finds what scan finds in the normalized text when the text is not all ASCII', () => {
    // ASCII first and something else later: a combining mark makes `rate` `raté`, a lone
    // surrogate is three bytes, a full-width letter folds to ASCII.
    for (const text of [
      'Interest rate\u0301',
      'AI \uD800 rate',
      'interest ｒate',
      'AI 반도체 rally',
      '반도체 AI',
      '',
      'X-RAY\tand C++',
    ]) {
      expectSameAsScan(text);
    }
  });

  it('reads texts longer than its buffer and shorter ones after them', () => {
    const long = `${'Interest  Rate '.repeat(300)}AI`;
    expectSameAsScan(long);
    expectSameAsScan(`${'x'.repeat(5000)} rate`);
    expectSameAsScan('rate');
    expectSameAsScan(' AI');
  });
});

describe('shared RuleMatch lists', () => {
  const article = (title: string, index: number): Article => ({
    key: `id:${index}`,
    id: `${index}`,
    title,
    summary: '',
    url: `https://news.example.com/${index}`,
    publishedAt: 0,
    categories: [],
    categoryNames: [],
  });
  const rule = (ruleId: string, audienceId: string, keywords: string[]): Rule => ({
    ruleId,
    audienceId,
    enabled: true,
    urgent: false,
    matchAll: false,
    keywords,
  });
  const rules = [
    rule('chips', 'a', ['chip', 'memory']),
    rule('rates', 'b', ['rate']),
    rule('rates-2', 'b', ['rate', 'bank']),
  ];

  it('gives each mask of reasons its own list, and the same list whenever that mask repeats', () => {
    const matcher = compileRules(rules);
    const chip = matcher.match(article('chip output', 1))[0]?.rules;
    const memory = matcher.match(article('memory output', 2))[0]?.rules;
    const chipAgain = matcher.match(article('chip demand', 3))[0]?.rules;
    expect(chip?.[0]?.reasons).toEqual([{ kind: 'keyword', term: 'chip' }]);
    expect(memory?.[0]?.reasons).toEqual([{ kind: 'keyword', term: 'memory' }]);
    expect(chipAgain).toBe(chip);
    expect(Object.isFrozen(chipAgain)).toBe(true);
  });

  it('builds an audience of several rules from the same shared RuleMatches, reasons per mask', () => {
    const matcher = compileRules(rules);
    const first = matcher.match(article('rate rise', 1));
    const second = matcher.match(article('bank rate', 2));
    const third = matcher.match(article('rate cut', 3));
    expect(first.map((match) => match.rules.map((rule) => rule.reasons))).toEqual([
      [[{ kind: 'keyword', term: 'rate' }], [{ kind: 'keyword', term: 'rate' }]],
    ]);
    expect(second[0]?.rules[1]?.reasons).toEqual([
      { kind: 'keyword', term: 'rate' },
      { kind: 'keyword', term: 'bank' },
    ]);
    expect(third[0]?.rules[0]).toBe(first[0]?.rules[0]);
    expect(third[0]?.rules[1]).toBe(first[0]?.rules[1]);
    expect(third[0]?.rules[1]).not.toBe(second[0]?.rules[1]);
  });
});
