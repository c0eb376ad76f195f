/**
 * Rules with queries (issue 12): the indexed matcher must give exactly what naiveMatch gives, and
 * naiveMatch runs evaluateQuery (functions/core/query.ts, the reference semantics) for every rule.
 * Queries are generated as text, so the parser reads them as people write them: terms, prefix
 * terms, phrases, AND (explicit and implicit), OR, NOT and `-`, parentheses, NEAR/n, and
 * `title:` / `summary:` scopes, in Latin, Korean and Japanese, mixed with keyword, category and
 * media criteria, exclusions and matchAll. Articles are built from the same vocabulary plus noise,
 * so most queries are true on some of them and false on others, and terms sit right at word
 * edges (`rate` in `rates`, `반도체` in `반도체가`, `semicond*` in `semiconductors`).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compileRules, naiveMatch } from '#core/matcher';
import type { Article, Rule } from '#core/model';
import { parseQuery } from '#core/query';

const LATIN = [
  'rate',
  'rates',
  'corporate',
  'interest',
  'hike',
  'semiconductor',
  'chip',
  'chips',
  'AI',
  'ai',
  '5g',
  'and',
];
const KOREAN = ['반도체', '반도체가', '메모리', '수출', '삼성', '도체'];
const JAPANESE = ['半導体', '輸出', 'トヨタ', '導体'];
const PREFIXES = ['semicond*', 'rat*', 'chip*', 'inter*', 'ai*', '5*', 'Corp*'];
const PHRASES = ['"interest rate"', '"rate hike"', '"반도체 수출"', '"半導体 輸出"', '"AI  chip"', '"rates"'];

const bareLeaf = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...LATIN) },
  { weight: 3, arbitrary: fc.constantFrom(...KOREAN, ...JAPANESE) },
  { weight: 2, arbitrary: fc.constantFrom(...PREFIXES) },
  { weight: 2, arbitrary: fc.constantFrom(...PHRASES) },
);
const field = fc.constantFrom('', '', '', 'title:', 'summary:');
const leaf = fc.tuple(field, bareLeaf).map(([scope, text]) => scope + text);

/** Query text: a tree of the forms above, each compound child in parentheses. */
const { query } = fc.letrec<{ query: string }>((tie) => ({
  query: fc.oneof(
    { depthSize: 'small', maxDepth: 3 },
    { weight: 3, arbitrary: leaf },
    {
      weight: 1,
      arbitrary: fc
        .tuple(field, bareLeaf, fc.integer({ min: 0, max: 4 }), bareLeaf, fc.boolean())
        // NEAR/0 is refused by the parser: those queries exercise "does not parse, matches nothing".
        .map(
          ([scope, left, distance, right, scopeBoth]) =>
            `${scope}${left} NEAR/${distance} ${scopeBoth ? scope : ''}${right}`,
        ),
    },
    {
      weight: 2,
      arbitrary: fc
        .tuple(fc.array(tie('query'), { minLength: 2, maxLength: 3 }), fc.constantFrom(' AND ', ' '))
        .map(([children, operator]) => children.map((child) => `(${child})`).join(operator)),
    },
    {
      weight: 2,
      arbitrary: fc
        .array(tie('query'), { minLength: 2, maxLength: 3 })
        .map((children) => children.map((child) => `(${child})`).join(' OR ')),
    },
    {
      weight: 1,
      arbitrary: fc
        .tuple(tie('query'), fc.constantFrom('NOT ', '-'))
        .map(([child, operator]) => `${operator}(${child})`),
    },
    { weight: 1, arbitrary: fc.tuple(tie('query'), leaf).map(([child, term]) => `${term} -(${child})`) },
    {
      weight: 1,
      arbitrary: fc
        .tuple(fc.constantFrom('title:', 'summary:'), tie('query'))
        .map(([scope, child]) => `${scope}(${child})`),
    },
  ),
}));

/** Article text: the query vocabulary (as it appears in text) and noise, with every kind of edge. */
const WORDS = [
  ...LATIN,
  'Rate',
  'RATES',
  'semiconductors',
  'Semiconductor',
  'nonsemiconductor',
  'chipmaker',
  'interest',
  'interesting',
  'said',
  'AI-driven',
  'ＡＩ',
  '5G',
  'corp',
  'Corporate',
  ...KOREAN,
  '반도체의',
  'AI반도체',
  '메모리를',
  '수출이',
  '삼성전자',
  ...JAPANESE,
  '半導体の',
  '次世代半導体',
  'トヨタが',
  'the',
  'of',
  'and',
  'x',
];
const SEPARATORS = [' ', ' ', ' ', '  ', '\n', '', '-', ', ', '. ', '의 ', 'は', '\u3000'];
const text = fc
  .array(fc.tuple(fc.constantFrom(...WORDS), fc.constantFrom(...SEPARATORS)), { maxLength: 14 })
  .map((parts) => parts.map(([word, separator]) => word + separator).join(''));

const CATEGORIES = ['002001000', '002002000', '003001000'];
const MEDIA = ['01100101', '01100102'];
const optional = <T>(arbitrary: fc.Arbitrary<T>) => fc.option(arbitrary, { nil: undefined, freq: 2 });

const rule = (ruleId: string): fc.Arbitrary<Rule> =>
  fc
    .record(
      {
        ruleId: fc.constant(ruleId),
        audienceId: fc.constantFrom('a', 'b', 'c'),
        enabled: fc.constantFrom(true, true, true, false),
        description: fc.option(fc.constantFrom('desk'), { nil: undefined }),
        query: fc.oneof({ weight: 4, arbitrary: query }, { weight: 1, arbitrary: fc.constant(undefined) }),
        keywords: optional(
          fc.array(fc.constantFrom(...LATIN, ...KOREAN, ...JAPANESE, 'interest rate'), { maxLength: 2 }),
        ),
        excludeKeywords: optional(fc.array(fc.constantFrom(...LATIN, ...KOREAN), { maxLength: 2 })),
        categories: optional(fc.array(fc.constantFrom(...CATEGORIES, '002*'), { maxLength: 2 })),
        media: optional(fc.array(fc.constantFrom(...MEDIA), { maxLength: 1 })),
        urgent: fc.boolean(),
        matchAll: fc.boolean(),
      },
      { requiredKeys: ['ruleId', 'audienceId', 'enabled', 'urgent', 'matchAll'] },
    )
    .map((value) => {
      // fc.record keeps a key whose arbitrary gave undefined; a rule without a query has no key.
      const { query: text, ...rest } = value;
      return text === undefined ? rest : { ...rest, query: text };
    });

const rules = fc
  .uniqueArray(fc.constantFrom('r1', 'r2', 'r3', 'r4', 'r5', 'r6', 'r7', 'r8', 'R1'), { minLength: 1, maxLength: 8 })
  .chain((ids) => fc.tuple(...ids.map(rule)));

const article: fc.Arbitrary<Article> = fc.record({
  key: fc.constant('id:1'),
  title: text,
  summary: fc.oneof(fc.constant(''), text),
  url: fc.constant('https://news.example.com/1'),
  publishedAt: fc.constant(0),
  categories: fc.array(fc.constantFrom(...CATEGORIES), { maxLength: 2 }),
  categoryNames: fc.constant([]),
  media: fc.option(fc.constantFrom(...MEDIA), { nil: undefined }),
});

const parses = (text: string) => {
  try {
    parseQuery(text);
    return true;
  } catch {
    return false;
  }
};

describe('compileRules(rules).match with queries', () => {
  it('equals naiveMatch (evaluateQuery for every rule) on any rules with queries and any articles', () => {
    let matched = 0;
    let queryReasons = 0;
    fc.assert(
      fc.property(rules, fc.array(article, { minLength: 1, maxLength: 4 }), (ruleSet, articles) => {
        const matcher = compileRules(ruleSet);
        for (const subject of articles) {
          const expected = naiveMatch(ruleSet, subject);
          expect(matcher.match(subject)).toEqual(expected);
          for (const audience of expected) {
            for (const match of audience.rules) {
              const source = ruleSet.find((candidate) => candidate.ruleId === match.ruleId);
              if (source?.query === undefined) continue;
              matched++;
              if (match.reasons.some((reason) => reason.kind === 'keyword')) queryReasons++;
            }
          }
        }
      }),
      { numRuns: 3000 },
    );
    // The generators must reach the interesting cases: query rules that match, with reasons.
    expect(matched).toBeGreaterThan(1000);
    expect(queryReasons).toBeGreaterThan(700);
  });

  it('generates queries that mostly parse, so the comparison is about matching', () => {
    const samples = fc.sample(query, { numRuns: 2000, seed: 12 });
    const parsed = samples.filter(parses).length;
    expect(parsed / samples.length).toBeGreaterThan(0.8);
    expect(samples.some((text) => text.includes('NEAR/'))).toBe(true);
  });

  it('equals naiveMatch when every rule is only a query and the article is cut from its terms', () => {
    fc.assert(
      fc.property(fc.array(query, { minLength: 1, maxLength: 6 }), text, (queries, noise) => {
        const ruleSet: Rule[] = queries.map((text, i) => ({
          ruleId: `q${i}`,
          audienceId: `a${i % 2}`,
          enabled: true,
          urgent: false,
          matchAll: i % 3 === 0,
          query: text,
        }));
        // The article quotes the queries' own words, so their terms hit (and NEARs are near).
        const words = queries.join(' ').replace(/[()"*]|\b(?:AND|OR|NOT|NEAR\/\d+)\b|title:|summary:/g, ' ');
        const subject: Article = {
          key: 'id:1',
          title: words.slice(0, 60),
          summary: `${noise} ${words.slice(60)}`,
          url: 'u',
          publishedAt: 0,
          categories: [],
          categoryNames: [],
        };
        expect(compileRules(ruleSet).match(subject)).toEqual(naiveMatch(ruleSet, subject));
      }),
      { numRuns: 1500 },
    );
  });
});
