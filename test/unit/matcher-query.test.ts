/**
 * Rules with a `query` in the indexed matcher: the query is one more criterion ANDed with the
 * others, its reasons follow the keyword reasons, and it is checked only on candidate articles.
 * The property tests (matcher-query.property.test.ts) hold the matcher to naiveMatch; these pin
 * down the documented behaviour with readable examples.
 */
import { describe, expect, it } from 'vitest';
import { compileRules, naiveMatch } from '#core/matcher';
import type { Article, AudienceMatch, Rule } from '#core/model';

const article = (title: string, summary = '', extra: Partial<Article> = {}): Article => ({
  key: 'id:1',
  title,
  summary,
  url: 'https://news.example.com/1',
  publishedAt: 0,
  categories: [],
  categoryNames: [],
  ...extra,
});

const rule = (ruleId: string, fields: Partial<Rule>): Rule => ({
  ruleId,
  audienceId: 'desk',
  enabled: true,
  urgent: false,
  matchAll: false,
  ...fields,
});

/** Both matchers' result for one article; they must agree. */
function matchBoth(rules: readonly Rule[], subject: Article): AudienceMatch[] {
  const indexed = compileRules(rules).match(subject);
  expect(indexed).toEqual(naiveMatch(rules, subject));
  return indexed;
}

const reasonsOf = (result: readonly AudienceMatch[], ruleId: string) =>
  result.flatMap((match) => match.rules).find((match) => match.ruleId === ruleId)?.reasons;

describe('queries', () => {
  it('match boolean combinations of terms and phrases, in English and Korean', () => {
    const rules = [
      rule('both', { query: 'samsung semiconductor' }),
      rule('phrase', { query: '"interest rate hike"' }),
      rule('korean', { query: '(반도체 OR 메모리) AND 수출 NOT 삼성' }),
    ];
    expect(
      matchBoth(rules, article('Samsung semiconductor sales')).flatMap((m) => m.rules.map((r) => r.ruleId)),
    ).toEqual(['both']);
    expect(matchBoth(rules, article('Samsung sales', 'semiconductor glut'))).toHaveLength(1);
    expect(matchBoth(rules, article('An interest  rate hike looms'))[0]?.rules[0]?.ruleId).toBe('phrase');
    expect(matchBoth(rules, article('Rate hike on interest'))).toEqual([]);
    expect(reasonsOf(matchBoth(rules, article('메모리 반도체가 수출을 이끌었다')), 'korean')).toEqual([
      { kind: 'keyword', term: '반도체' },
      { kind: 'keyword', term: '메모리' },
      { kind: 'keyword', term: '수출' },
    ]);
    expect(matchBoth(rules, article('삼성 메모리 수출'))).toEqual([]);
  });

  it('match a prefix term at the start of a word only, and a field scope in that field only', () => {
    const rules = [
      rule('prefix', { query: 'semicond*' }),
      rule('title', { query: 'title:반도체 AND summary:export*' }),
    ];
    expect(reasonsOf(matchBoth(rules, article('Semiconductors rally')), 'prefix')).toEqual([
      { kind: 'keyword', term: 'semicond*' },
    ]);
    expect(matchBoth(rules, article('Nonsemiconductor stocks'))).toEqual([]);
    expect(reasonsOf(matchBoth(rules, article('반도체가 강세', 'Exporters gain')), 'title')).toEqual([
      { kind: 'keyword', term: 'title:반도체' },
      { kind: 'keyword', term: 'summary:export*' },
    ]);
    expect(matchBoth(rules, article('Exporters gain', '반도체가 강세'))).toEqual([]);
  });

  it('match NEAR/n within n words in Latin text and n characters in Japanese', () => {
    const rules = [rule('words', { query: 'tariff NEAR/2 steel' }), rule('chars', { query: '半導体 NEAR/3 輸出' })];
    expect(matchBoth(rules, article('Steel faces new tariff'))).toHaveLength(1);
    expect(matchBoth(rules, article('Steel output grew while the tariff debate went on'))).toEqual([]);
    expect(reasonsOf(matchBoth(rules, article('半導体の対中輸出が増加')), 'chars')).toEqual([
      { kind: 'keyword', term: '半導体' },
      { kind: 'keyword', term: '輸出' },
    ]);
    expect(matchBoth(rules, article('半導体の生産と中国への輸出'))).toEqual([]);
  });

  it('AND with the other criteria, and give the query reasons after the keyword reasons', () => {
    const rules = [
      rule('mixed', {
        categories: ['002*'],
        keywords: ['chip'],
        query: '"export controls" OR tariff*',
        media: ['01100101'],
      }),
    ];
    const subject = article('Chip export controls and tariffs', '', { categories: ['002001000'], media: '01100101' });
    expect(reasonsOf(matchBoth(rules, subject), 'mixed')).toEqual([
      { kind: 'category', term: '002*' },
      { kind: 'keyword', term: 'chip' },
      { kind: 'keyword', term: 'export controls' },
      { kind: 'keyword', term: 'tariff*' },
      { kind: 'media', term: '01100101' },
    ]);
    expect(matchBoth(rules, { ...subject, media: '01100102' })).toEqual([]);
    expect(matchBoth(rules, { ...subject, title: 'Chip output' })).toEqual([]);
  });

  it('need matchAll when the query only excludes, and then report "all" unless a term hit', () => {
    const rules = [
      rule('bare', { query: 'NOT sports' }),
      rule('all', { query: 'NOT sports', matchAll: true }),
      rule('either', { query: 'chip OR NOT sports', matchAll: true }),
    ];
    const plain = matchBoth(rules, article('Markets calm'));
    expect(plain[0]?.rules.map((match) => [match.ruleId, match.reasons])).toEqual([
      ['all', [{ kind: 'all', term: '*' }]],
      ['either', [{ kind: 'all', term: '*' }]],
    ]);
    expect(reasonsOf(matchBoth(rules, article('Chip sports league')), 'either')).toEqual([
      { kind: 'keyword', term: 'chip' },
    ]);
    expect(matchBoth(rules, article('Sports results'))).toEqual([]);
  });

  it('make a rule whose query does not parse match nothing, without throwing', () => {
    const rules = [rule('broken', { query: '(chip OR', matchAll: true }), rule('fine', { keywords: ['chip'] })];
    const result = matchBoth(rules, article('Chip news'));
    expect(result[0]?.rules.map((match) => match.ruleId)).toEqual(['fine']);
  });

  it('read the article text for a query only when a NEAR has both its terms in the article', () => {
    // Terms and field scopes are settled by the automaton's hits; only a NEAR measures the text.
    const rules = Array.from({ length: 500 }, (_, i) =>
      rule(`r${i}`, { query: `title:chip${i} OR (semiconductor${i} NEAR/3 exports)` }),
    );
    const matcher = compileRules(rules);
    let reads = 0;
    const counted = (title: string, summary: string): Article => {
      const base = article(title, summary);
      return Object.defineProperty({ ...base }, 'title', {
        get: () => {
          reads++;
          return title;
        },
      });
    };
    expect(matcher.match(counted('Semiconductors and exports', 'chip7 exports rise'))).toEqual([]);
    expect(reads).toBe(1);
    reads = 0;
    expect(matcher.match(counted('chip7 news', 'exports rise'))[0]?.rules[0]?.ruleId).toBe('r7');
    expect(reads).toBe(1);
    reads = 0;
    expect(matcher.match(counted('semiconductor7 orders and exports', ''))[0]?.rules[0]?.ruleId).toBe('r7');
    expect(reads).toBe(2);
  });
});
