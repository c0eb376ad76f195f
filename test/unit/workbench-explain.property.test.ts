/**
 * Explain names each term that hit once: a rule that lists a term twice (`keywords: [rate, rate]`)
 * is explained exactly as the same rule listing it once, for any article (functions/core/workbench/
 * explain.ts).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Article, Rule } from '#core/model';
import { parseRule } from '#core/model';
import { explainRule } from '#core/workbench/explain';

const WORDS = ['rate', 'rates', 'inflation', 'bank', 'rumor'];
const CATEGORIES = ['002*', '002001000', '008*'];
const terms = (pool: readonly string[]) => fc.array(fc.constantFrom(...pool), { maxLength: 5 });

function ruleOf(item: Record<string, unknown>): Rule {
  const parsed = parseRule({ ruleId: 'r', audienceId: 'desk', matchAll: true, ...item });
  if (!parsed.ok) throw new Error(parsed.rejected.reason);
  return parsed.value;
}

/** The item with each list holding every term once, in order. */
const listedOnce = (item: Record<string, unknown>) =>
  Object.fromEntries(
    Object.entries(item).map(([key, value]) => [key, Array.isArray(value) ? [...new Set(value)] : value]),
  );

describe('explain with repeated terms', () => {
  it('names each term that hit once, and says what it says of the rule listing each term once', () => {
    const item = fc.record(
      {
        categories: terms(CATEGORIES),
        keywords: terms(WORDS),
        excludeKeywords: terms(WORDS),
        excludeCategories: terms(CATEGORIES),
        query: fc.constantFrom('rate OR rate', 'rate rate', 'bank OR rate'),
      },
      { requiredKeys: [] },
    );
    const article = fc.record({
      title: fc.array(fc.constantFrom(...WORDS), { maxLength: 4 }).map((words) => words.join(' ')),
      categories: fc.subarray(['002001000', '008001000']),
    });
    fc.assert(
      fc.property(item, article, (written, { title, categories }) => {
        const described: Article = {
          key: 'k',
          title,
          summary: '',
          url: 'https://news.example.com/a',
          publishedAt: 0,
          categories,
          categoryNames: [],
        };
        const explanation = explainRule(ruleOf(written), described);
        for (const criterion of explanation.criteria) {
          expect(criterion.hits, criterion.criterion).toEqual([...new Set(criterion.hits)]);
        }
        expect(explanation).toEqual(explainRule(ruleOf(listedOnce(written)), described));
      }),
    );
  });
});

describe('explain of a query that is false', () => {
  it('says which parts of the query failed, each term once', () => {
    const article: Article = {
      key: 'k',
      title: 'Bank rate rumor',
      summary: '',
      url: 'https://news.example.com/a',
      publishedAt: 0,
      categories: [],
      categoryNames: [],
    };
    const why = (query: string) =>
      explainRule(ruleOf({ query }), article).criteria.find((criterion) => criterion.criterion === 'query');
    expect(why('rate AND inflation NOT rumor')).toMatchObject({
      verdict: 'fail',
      why: 'false ("inflation" is not in the title or summary; NOT rumor excludes it: "rumor" is there)',
      because: ['"inflation" is not in the title or summary', 'NOT rumor excludes it: "rumor" is there'],
    });
    expect(why('inflation OR inflation OR rates')?.why).toBe(
      'false (none of "inflation", "rates" is in the title or summary)',
    );
    // Past five reasons the line says how many more; the JSON's list has them all.
    const many = why('a1 AND a2 AND a3 AND a4 AND a5 AND a6 AND a7 AND rate');
    expect(many?.why).toMatch(/; and 2 more\)$/);
    expect(many?.because).toHaveLength(7);
    expect(why('rate rate')).toMatchObject({ verdict: 'pass' });
  });
});
