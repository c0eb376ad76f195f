/**
 * What normalizeText (functions/core/text.ts) makes of text no reader can tell apart (issue 30,
 * item 3): invisible default-ignorable code points are dropped, case is folded fully (İ, ß, final
 * sigma), and control characters read as the space a subscriber sees in their place. Articles and
 * terms go through the same function, so an article that only differs by invisible characters
 * matches exactly the rules the visible text matches, in the indexed matcher, the naive one and
 * the query evaluator alike.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { titleHash } from '#core/ledger-facts';
import { compileRules, naiveMatch } from '#core/matcher';
import type { Article, AudienceMatch, Rule } from '#core/model';
import { evaluateQuery, parseQuery } from '#core/query';
import { fingerprint } from '#core/story';
import { normalizeText } from '#core/text';

function rule(fields: Partial<Rule> & Pick<Rule, 'ruleId'>): Rule {
  return { audienceId: `audience-${fields.ruleId}`, enabled: true, urgent: false, matchAll: false, ...fields };
}

function article(title: string, summary = ''): Article {
  return {
    key: 'id:1',
    title,
    summary,
    url: 'https://news.example.com/a',
    publishedAt: 0,
    categories: [],
    categoryNames: [],
  };
}

/** The ids of the rules that match, after checking that the indexed and naive matchers agree. */
function matchedRules(rules: readonly Rule[], subject: Article): string[] {
  const indexed = compileRules(rules).match(subject);
  expect(indexed).toEqual(naiveMatch(rules, subject));
  return indexed.flatMap((audience) => audience.rules.map((match) => match.ruleId));
}

/**
 * Default-ignorable code points (Unicode's Default_Ignorable_Code_Point): soft hyphen, combining
 * grapheme joiner, Arabic letter mark, Hangul fillers, Khmer inherent vowels, Mongolian
 * selectors, zero-width space, joiners, LRM/RLM, bidi embeddings, word joiner and invisible
 * operators, BOM, variation selectors, shorthand format controls, musical formatting, tags.
 */
const IGNORABLES = [
  '\u00AD',
  '\u034F',
  '\u061C',
  '\u115F',
  '\u1160',
  '\u17B4',
  '\u180B',
  '\u180E',
  '\u200B',
  '\u200C',
  '\u200D',
  '\u200E',
  '\u202A',
  '\u202E',
  '\u2060',
  '\u2063',
  '\u2066',
  '\u3164',
  '\uFE0F',
  '\uFEFF',
  '\uFFA0',
  '\u{1BCA0}',
  '\u{1D173}',
  '\u{E0001}',
  '\u{E0041}',
  '\u{E0100}',
];

describe('normalizeText drops what no reader sees', () => {
  it('drops default-ignorable code points inside and around words', () => {
    for (const ignorable of IGNORABLES) {
      const name = `U+${(ignorable.codePointAt(0) ?? 0).toString(16).toUpperCase()}`;
      expect(normalizeText(`Sam${ignorable}sung`), name).toBe('samsung');
      expect(normalizeText(`${ignorable}반도체${ignorable} 수출${ignorable}`), name).toBe('반도체 수출');
    }
    // Dropped before NFKC: a base and its combining mark compose across what stood between them.
    expect(normalizeText('Caf\u00ADe\u200B\u0301')).toBe('café');
    expect(normalizeText('e\u034F\u0301')).toBe('é');
  });

  it('folds case fully: dotted capital I, sharp s, final sigma', () => {
    expect(normalizeText('İstanbul')).toBe('istanbul');
    expect(normalizeText('I\u0307stanbul')).toBe('istanbul');
    expect(normalizeText('Straße')).toBe('strasse');
    expect(normalizeText('STRASSE')).toBe('strasse');
    expect(normalizeText('\u1E9E')).toBe('ss');
    expect(normalizeText('ΟΔΟΣ')).toBe('οδοσ');
    expect(normalizeText('οδος')).toBe('οδοσ');
    // A mark that followed İ's dot composes with the i it now follows.
    expect(normalizeText('İ\u0301')).toBe('í');
  });

  it('reads control characters as the space a reader sees in their place', () => {
    expect(normalizeText('Sam\u0000sung')).toBe('sam sung');
    expect(normalizeText('Sam\u001Bsung')).toBe('sam sung');
    expect(normalizeText('\u0007interest \u0000\u0085 rate\u007F')).toBe('interest rate');
  });

  it('gives the same text again when applied twice', () => {
    const odd = fc.constantFrom(...IGNORABLES, 'İ', 'ß', 'ẞ', 'Σ', 'ς', '\u0307', '\u0301', 'i', 'e', ' ', '\u0000');
    fc.assert(
      fc.property(fc.array(fc.oneof(odd, fc.string({ unit: 'binary', maxLength: 2 })), { maxLength: 12 }), (parts) => {
        const once = normalizeText(parts.join(''));
        expect(normalizeText(once)).toBe(once);
      }),
      { numRuns: 3000 },
    );
  });
});

describe('invisible characters and case do not change what matches', () => {
  it('matches a keyword and a query across soft hyphens, zero-width spaces and a dotted capital I', () => {
    const rules = [
      rule({ ruleId: 'keyword', keywords: ['samsung'] }),
      rule({ ruleId: 'query', query: 'samsung NEAR/2 istanbul' }),
      rule({ ruleId: 'phrase', query: '"samsung istanbul"' }),
      rule({ ruleId: 'sharp-s', keywords: ['strasse'] }),
    ];
    expect(matchedRules(rules, article('Sam\u00ADsung opens in İstanbul'))).toEqual(['keyword', 'query']);
    expect(matchedRules(rules, article('Sam\u200Bsung\u2060 İSTANBUL'))).toEqual(['keyword', 'phrase', 'query']);
    expect(matchedRules(rules, article('Neue Straße'))).toEqual(['sharp-s']);
    // The rule side is normalized the same way.
    expect(matchedRules([rule({ ruleId: 'k', keywords: ['Sam\u00ADsung'] })], article('SAMSUNG'))).toEqual(['k']);
  });

  /** Visible words of several scripts, and the separators between them. */
  const WORDS = [
    'samsung',
    'Samsung',
    'İstanbul',
    'istanbul',
    'Straße',
    'rate',
    'AI',
    '반도체',
    '半導体',
    'café',
    'e\u0301',
    'ΟΔΟΣ',
    'οδος',
  ];
  const SEPARATORS = [' ', ' ', '', '-', ', ', '가'];
  const visibleText = fc
    .array(fc.tuple(fc.constantFrom(...WORDS), fc.constantFrom(...SEPARATORS)), { maxLength: 6 })
    .map((parts) => parts.map(([word, separator]) => word + separator).join(''));

  /** `text` with default-ignorables inserted between code points (never inside a surrogate pair). */
  const withIgnorables = (text: string) =>
    fc.array(fc.tuple(fc.nat(), fc.constantFrom(...IGNORABLES)), { maxLength: 6 }).map((insertions) => {
      const chars = Array.from(text);
      for (const [at, ignorable] of insertions) chars.splice(at % (chars.length + 1), 0, ignorable);
      return chars.join('');
    });

  const RULES = [
    rule({ ruleId: 'samsung', keywords: ['samsung'] }),
    rule({ ruleId: 'istanbul', keywords: ['Istanbul'] }),
    rule({ ruleId: 'strasse', keywords: ['STRASSE'] }),
    rule({ ruleId: 'rate', keywords: ['rate'] }),
    rule({ ruleId: 'cafe', keywords: ['café'] }),
    rule({ ruleId: 'odos', keywords: ['ΟΔΟΣ'] }),
    rule({ ruleId: 'korean', keywords: ['반도체'] }),
    rule({ ruleId: 'phrase', query: '"samsung istanbul" OR "rate ai"' }),
    rule({ ruleId: 'near', query: 'samsung NEAR/2 rate' }),
    rule({ ruleId: 'han-near', query: '半導体 NEAR/3 samsung' }),
    rule({ ruleId: 'prefix', query: 'stra* -samsung' }),
  ];
  /** The audiences, rules and reasons (the article itself differs by the inserted characters). */
  const signature = (matches: readonly AudienceMatch[]) =>
    JSON.stringify(matches, (key, value) => (key === 'article' ? undefined : value));

  it('for any text and any insertion of default-ignorables into it, the same rules match for the same reasons', () => {
    const matcher = compileRules(RULES);
    fc.assert(
      fc.property(
        visibleText.chain((title) => fc.tuple(fc.constant(title), withIgnorables(title))),
        visibleText.chain((summary) => fc.tuple(fc.constant(summary), withIgnorables(summary))),
        ([title, hiddenTitle], [summary, hiddenSummary]) => {
          const plain = matcher.match(article(title, summary));
          const hidden = matcher.match(article(hiddenTitle, hiddenSummary));
          expect(signature(hidden)).toBe(signature(plain));
          expect(signature(naiveMatch(RULES, article(hiddenTitle, hiddenSummary)))).toBe(signature(plain));
          const query = parseQuery('samsung NEAR/2 rate OR "samsung istanbul" OR 半導体 NEAR/3 samsung');
          const evaluate = (t: string, s: string) =>
            evaluateQuery(query, { title: normalizeText(t), summary: normalizeText(s) });
          expect(evaluate(hiddenTitle, hiddenSummary)).toEqual(evaluate(title, summary));
        },
      ),
      { numRuns: 1000 },
    );
  });
});

describe('an apostrophe is an apostrophe however it is typed', () => {
  // A rule typed on a keyboard (`O'Brien`) missed the wire headline `O’Brien wins the runoff`.
  const APOSTROPHES = ["'", '’', '‘', '‛', '＇'];

  it('matches keywords, phrases and NEAR across straight and typographic apostrophes', () => {
    for (const typed of APOSTROPHES) {
      for (const printed of APOSTROPHES) {
        const rules = [
          rule({ ruleId: 'keyword', keywords: [`O${typed}Brien`] }),
          rule({ ruleId: 'phrase', query: `"Macy${typed}s sales"` }),
          rule({ ruleId: 'near', query: `O${typed}Brien NEAR/3 runoff` }),
          rule({ ruleId: 'ukrainian', keywords: [`м${typed}ясо`] }),
        ];
        const headline = article(`O${printed}Brien wins the runoff`, `Macy${printed}s sales slump; м${printed}ясо`);
        expect(matchedRules(rules, headline), `${typed} typed, ${printed} printed`).toEqual([
          'keyword',
          'near',
          'phrase',
          'ukrainian',
        ]);
      }
    }
  });

  it('leaves the modifier letter ʼ a letter: NEAR counts words as it did (found by review)', () => {
    const near = [rule({ ruleId: 'near', query: 'київ NEAR/1 вибух' })];
    expect(matchedRules(near, article('Київ обʼєкт вибух'))).toEqual(['near']);
    expect(normalizeText('обʼєкт')).toBe('обʼєкт');
  });

  it('leaves the title hashes and story fingerprints stored before the fold as they were', () => {
    // Hashed by the release before apostrophes were folded: the same titles must hash the same, or
    // a re-read after the upgrade would send a "headline changed" notice for every `’`.
    expect(titleHash('O’Brien wins the runoff')).toBe('xvn3g1');
    expect(titleHash("O'Brien wins the runoff")).toBe('1nzjpwn');
    expect(titleHash('Мʼясо дорожчає')).toBe('1comsjs');
    expect(fingerprint('Мʼясо дорожчає на 10%', 'Ціни на мʼясо зросли').bands.slice(0, 3)).toEqual([
      '0ZKo0U0',
      '12b2SS1',
      '2m_GEU0',
    ]);
  });
});
