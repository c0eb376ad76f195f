/**
 * What each audience should have received, worked out independently of the run: the simulator's
 * articles in the run's window, matched by the naive reference matcher. `npm start` prints the
 * comparison and the end-to-end tests assert it, so "every audience received exactly what its
 * rules match" is checked, not assumed.
 */

import { naiveMatch } from '#core/matcher';
import type { Article } from '#core/model';
import { buildRuleSet } from '#core/model';
import type { SimArticle } from './news-simulator.ts';

/** The article the provider client makes of a simulator article (default response mapping). */
export function articleOf(article: SimArticle): Article {
  return {
    key: `id:${article.articleId}`,
    id: article.articleId,
    title: article.title,
    summary: article.summary,
    url: article.url,
    publishedAt: article.publishedAt,
    categories: article.categories.map((category) => category.code),
    categoryNames: article.categories.map((category) => category.name),
    media: article.media.code,
    mediaName: article.media.name,
    status: article.status,
  };
}

export interface ExpectationInput {
  readonly articles: readonly SimArticle[];
  readonly ruleItems: readonly unknown[];
  readonly audienceItems: readonly unknown[];
  /** Articles published in [from, to] (epoch ms) are in the window. */
  readonly from: number;
  readonly to: number;
  /** Media codes the API key may see (the simulator's key scope). */
  readonly inScope: (mediaCode: string) => boolean;
}

/** audienceId → the article keys it should have received. */
export function expectedDeliveries(input: ExpectationInput): Map<string, Set<string>> {
  return expectedFromArticles({
    ...input,
    articles: input.articles.filter((article) => input.inScope(article.media.code)).map(articleOf),
  });
}

/** The articles, rules and audiences of {@link expectedFromArticles}. */
export interface ArticleExpectationInput {
  /** Articles as the provider client read them (duplicates are fine: keys are compared). */
  readonly articles: readonly Article[];
  readonly ruleItems: readonly unknown[];
  readonly audienceItems: readonly unknown[];
  /** Articles published in [from, to] (epoch ms) are in the window. */
  readonly from: number;
  readonly to: number;
}

/**
 * audienceId → the article keys it should have received, from articles already read (a real
 * provider's: the ones the runs fetched, since nothing else knows what it holds).
 */
export function expectedFromArticles(input: ArticleExpectationInput): Map<string, Set<string>> {
  const { rules, audiences } = buildRuleSet(input.ruleItems, input.audienceItems);
  const expected = new Map<string, Set<string>>(audiences.map((audience) => [audience.audienceId, new Set()]));
  for (const article of input.articles) {
    if (article.publishedAt < input.from || article.publishedAt > input.to) continue;
    for (const match of naiveMatch(rules, article)) {
      expected.get(match.audienceId)?.add(match.article.key);
    }
  }
  return expected;
}

/** How one audience's deliveries compare with what it should have received. */
export interface AudienceCheck {
  readonly expected: number;
  readonly received: number;
  readonly missing: string[];
  readonly unexpected: string[];
  readonly duplicates: string[];
}

export function compareDeliveries(
  expected: ReadonlyMap<string, ReadonlySet<string>>,
  received: ReadonlyMap<string, readonly string[]>,
): Map<string, AudienceCheck> {
  const checks = new Map<string, AudienceCheck>();
  for (const audienceId of new Set([...expected.keys(), ...received.keys()])) {
    const want = expected.get(audienceId) ?? new Set<string>();
    const got = received.get(audienceId) ?? [];
    const counts = new Map<string, number>();
    for (const key of got) counts.set(key, (counts.get(key) ?? 0) + 1);
    checks.set(audienceId, {
      expected: want.size,
      received: got.length,
      missing: [...want].filter((key) => !counts.has(key)).sort(),
      unexpected: [...counts.keys()].filter((key) => !want.has(key)).sort(),
      duplicates: [...counts.entries()]
        .filter(([, count]) => count > 1)
        .map(([key]) => key)
        .sort(),
    });
  }
  return checks;
}

export const isExact = (check: AudienceCheck): boolean =>
  check.missing.length === 0 && check.unexpected.length === 0 && check.duplicates.length === 0;
