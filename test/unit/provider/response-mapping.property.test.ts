import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ProviderResponseError } from '#core/errors';
import type { Article } from '#core/model';
import { defaultResponseMapping, type MappedPage, mapPage, resolveMapping } from '#provider/response-mapping';

const secret = 'PROPERTY-KEY-5b1e';

function expectInvariants(page: MappedPage, itemCount: number | undefined): void {
  for (const article of page.articles) expectArticle(article);
  if (itemCount !== undefined) expect(page.articles.length + page.skipped.length).toBe(itemCount);
  for (const skipped of page.skipped) {
    expect(skipped.reason.length).toBeGreaterThan(0);
    expect(skipped.reason).not.toContain(secret);
  }
  if (page.totalCount !== undefined) expect(Number.isSafeInteger(page.totalCount) && page.totalCount >= 0).toBe(true);
}

function expectArticle(article: Article): void {
  expect(article.key.length).toBeGreaterThan(3);
  expect(article.key.startsWith('id:') || article.key.startsWith('url:')).toBe(true);
  expect(article.title.trim().length).toBeGreaterThan(0);
  expect(article.url.length).toBeGreaterThan(0);
  expect(() => new URL(article.url)).not.toThrow();
  expect(Number.isFinite(article.publishedAt)).toBe(true);
  expect(typeof article.summary).toBe('string');
  for (const code of [...article.categories, ...article.categoryNames]) expect(code.length).toBeGreaterThan(0);
}

let mappedArticles = 0;

/** Runs mapPage and checks it either returns a page that keeps every invariant or throws ProviderResponseError. */
function check(body: unknown, mapping = defaultResponseMapping, itemCount?: number): void {
  let page: MappedPage;
  try {
    page = mapPage(body, mapping, 'Asia/Seoul', { secrets: [secret] });
  } catch (error) {
    expect(error).toBeInstanceOf(ProviderResponseError);
    expect((error as Error).message).not.toContain(secret);
    return;
  }
  expectInvariants(page, itemCount);
  mappedArticles += page.articles.length;
}

const timestampLike = fc.oneof(
  fc
    .date({ min: new Date('1990-01-01'), max: new Date('2090-01-01'), noInvalidDate: true })
    .map((d) => d.toISOString()),
  fc
    .date({ min: new Date('1990-01-01'), max: new Date('2090-01-01'), noInvalidDate: true })
    .map((d) => d.toUTCString()),
  fc.integer({ min: 0, max: 4_000_000_000 }),
  fc.integer({ min: 0, max: 4_000_000_000_000 }),
  fc.string(),
  fc.constant(null),
);

const articleLike = fc.record(
  {
    articleId: fc.oneof(fc.string(), fc.integer(), fc.constant(null)),
    title: fc.oneof(fc.string(), fc.constantFrom('<b></b>', ' &amp; ', `key ${secret}`), fc.integer()),
    summary: fc.oneof(fc.string(), fc.constant(null), fc.jsonValue()),
    url: fc.oneof(fc.webUrl({ withFragments: true, withQueryParameters: true }), fc.string(), fc.constant(secret)),
    link: fc.webUrl(),
    publishedAt: timestampLike,
    pubDate: timestampLike,
    categories: fc.oneof(
      fc.array(fc.record({ code: fc.oneof(fc.string(), fc.integer()), name: fc.string() }, { requiredKeys: [] })),
      fc.array(fc.jsonValue()),
      fc.string(),
    ),
    media: fc.oneof(fc.record({ code: fc.string(), name: fc.string() }, { requiredKeys: [] }), fc.string()),
    status: fc.jsonValue(),
  },
  { requiredKeys: [] },
);

describe('mapPage on arbitrary input', () => {
  it('returns a valid page or throws ProviderResponseError for any JSON value', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (body) => check(body)),
      { numRuns: 500 },
    );
  });

  it('does the same for any JSON under each envelope the defaults know', () => {
    const envelope = fc.constantFrom('articles', 'data', 'results', 'items', 'docs', 'errors', 'status', 'totalCount');
    fc.assert(
      fc.property(envelope, fc.jsonValue(), (key, value) => check({ [key]: value })),
      { numRuns: 300 },
    );
  });

  it('keeps the invariants for article-like items and accounts for every item', () => {
    mappedArticles = 0;
    const body = fc.record({
      status: fc.constantFrom('OK', 'ok', undefined),
      totalCount: fc.oneof(fc.nat(), fc.string(), fc.constant(-1)),
      articles: fc.array(fc.oneof(articleLike, fc.jsonValue()), { maxLength: 20 }),
    });
    fc.assert(
      fc.property(body, (b) => check(b, defaultResponseMapping, b.articles.length)),
      { numRuns: 500 },
    );
    // The generators must produce readable articles too, or the invariants above were never exercised.
    expect(mappedArticles).toBeGreaterThan(100);
  });

  it('keeps the invariants under an overridden mapping with projections', () => {
    const mapping = resolveMapping({
      articles: ['payload.items', '$'],
      title: ['headline.main', 'title'],
      categories: ['tags[].id', 'tags'],
    });
    fc.assert(
      fc.property(fc.oneof(fc.jsonValue(), fc.array(articleLike)), (body) => check(body, mapping)),
      { numRuns: 300 },
    );
  });
});
