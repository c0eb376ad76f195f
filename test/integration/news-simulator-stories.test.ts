/**
 * The simulator's stories: syndicated copies and rewrites of a share of its stories (other
 * outlets, new ids and URLs, within minutes, with the variations wire copy has), and articles
 * that come back later with another status, seen over real HTTPS as a client re-reading them
 * would. Everything is seeded: the same options give the same copies and revisions.
 */
import fc from 'fast-check';
import { Agent, request } from 'undici';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { type NewsSimulator, startNewsSimulator } from '#sandbox/news-simulator';
import {
  type GenerateArticlesOptions,
  generateArticles,
  MEDIA,
  mulberry32,
  rewriteForOutlet,
  type SimArticle,
  SYNDICATION_COPIES,
  SYNDICATION_MEDIA,
  SYNDICATION_SPREAD_MS,
} from '#sandbox/news-simulator-data';

const sandboxCa = inject('sandboxCa');
const agent = new Agent({ connect: { ca: sandboxCa.cert } });
afterAll(() => agent.close());

/** 2026-11-22 12:00 in Seoul. */
const NOW = Date.parse('2026-11-22T03:00:00Z');
const HOUR = 60 * 60_000;

const base: GenerateArticlesOptions = { seed: 7, days: 3, perDay: 600, now: NOW, timeZone: 'Asia/Seoul' };

const copiesByOriginal = (articles: readonly SimArticle[]): Map<string, SimArticle[]> => {
  const groups = new Map<string, SimArticle[]>();
  for (const article of articles) {
    if (article.copyOf === undefined) continue;
    groups.set(article.copyOf, [...(groups.get(article.copyOf) ?? []), article]);
  }
  return groups;
};

/** Letters and digits of a text, lower-cased: what a keyword or title rule can see. */
const words = (text: string): string[] => text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];

describe('syndicated copies', () => {
  const articles = generateArticles({ ...base, syndicationRate: 0.2 });
  const byId = new Map(articles.map((article) => [article.articleId, article]));
  const originals = articles.filter((article) => article.copyOf === undefined);
  const groups = copiesByOriginal(articles);

  it('republishes the configured share of stories, 2 to 8 copies each, none after the clock', () => {
    const share = groups.size / originals.length;
    expect(share).toBeGreaterThan(0.17);
    expect(share).toBeLessThan(0.23);
    const counts = [...groups.values()].map((copies) => copies.length);
    // Copies of the newest stories may still be due after the clock: fewer, never more.
    expect(Math.max(...counts)).toBe(SYNDICATION_COPIES.max);
    expect(counts.filter((count) => count >= SYNDICATION_COPIES.min).length / counts.length).toBeGreaterThan(0.95);
    expect(articles.every((article) => article.publishedAt <= NOW)).toBe(true);
  });

  it('gives each copy another outlet, its own id and URL, minutes after the original, and keeps the categories', () => {
    const ids = new Set(articles.map((article) => article.articleId));
    expect(ids.size).toBe(articles.length);
    expect(new Set(articles.map((article) => article.url)).size).toBe(articles.length);
    const outlets = new Set<string>();
    for (const [originalId, copies] of groups) {
      const original = byId.get(originalId);
      expect(original, originalId).toBeDefined();
      for (const copy of copies) {
        expect(copy.media.code).not.toBe(original?.media.code);
        expect(copy.url).toContain(copy.media.code.toLowerCase());
        const delay = copy.publishedAt - (original?.publishedAt ?? 0);
        expect(delay).toBeGreaterThan(0);
        expect(delay).toBeLessThanOrEqual(SYNDICATION_SPREAD_MS + 1000);
        expect(copy.categories).toEqual(original?.categories);
        outlets.add(copy.media.code);
      }
    }
    // Partner outlets that only republish carry copies too.
    expect(SYNDICATION_MEDIA.some((media) => outlets.has(media.code))).toBe(true);
    // Ids follow time, copies included.
    const sorted = [...articles].sort((a, b) => a.publishedAt - b.publishedAt);
    const ids20261121 = sorted.filter((article) => article.articleId.startsWith('20261121'));
    expect(ids20261121.map((article) => article.articleId)).toEqual(
      ids20261121.map((article) => article.articleId).sort(),
    );
  });

  it('rewrites copies the way wire copy varies, in Korean, English and Japanese, never verbatim', () => {
    const copies = articles.filter((article) => article.copyOf !== undefined);
    for (const copy of copies) {
      const original = byId.get(copy.copyOf ?? '') as SimArticle;
      expect(copy.title !== original.title || copy.summary !== original.summary, copy.articleId).toBe(true);
    }
    const titles = copies.map((copy) => copy.title);
    const summaries = copies.map((copy) => copy.summary);
    const has = (list: string[], pattern: RegExp) => list.some((text) => pattern.test(text));
    expect(has(titles, /^\[(속보|단독|1보)\] /)).toBe(true);
    expect(has(titles, /\(종합2?보?\)$/)).toBe(true);
    expect(has(titles, /^【(速報|独自)】/)).toBe(true);
    expect(has(titles, /^UPDATE \d-|^BREAKING: /)).toBe(true);
    expect(has(summaries, /^SEOUL \(.+\) - /)).toBe(true); // outlet credit
    expect(has(summaries, /…$/)).toBe(true); // shortened lead
    expect(has(titles, /^As .+, /)).toBe(true); // clauses reordered
    expect(has(titles, /\d percent/)).toBe(true); // house punctuation
  });

  it('is deterministic per seed, and leaves the original stories as they are at rate 0', () => {
    const again = generateArticles({ ...base, syndicationRate: 0.2 });
    expect(again).toEqual(articles);
    const other = generateArticles({ ...base, seed: 8, syndicationRate: 0.2 });
    expect(other.map((article) => article.title)).not.toEqual(articles.map((article) => article.title));
    const plain = generateArticles(base);
    const content = (list: readonly SimArticle[]) =>
      list.map(({ title, summary, media, publishedAt, status }) => ({ title, summary, media, publishedAt, status }));
    expect(content(originals)).toEqual(content(plain));
  });

  it('makes no copies and no revisions at rate 0 (the default)', () => {
    const plain = generateArticles(base);
    expect(generateArticles({ ...base, syndicationRate: 0, updateRate: 0 })).toEqual(plain);
    expect(plain.some((article) => article.copyOf !== undefined)).toBe(false);
    expect(plain.some((article) => article.status === 'DELETED')).toBe(false);
  });

  it('keeps every word of the headline in a copy, for any headline (rules that match a story match its copies by title)', () => {
    fc.assert(
      fc.property(
        fc.string({ unit: 'grapheme', maxLength: 80 }),
        // An empty lead leaves fewer ways to differ: a copy must still never be verbatim.
        fc.oneof(fc.constant(''), fc.string({ maxLength: 120 })),
        fc.nat(),
        (title, summary, seed) => {
          const original = { title, summary };
          const copy = rewriteForOutlet(mulberry32(seed), original, MEDIA[0]);
          expect(copy.title !== title || copy.summary !== summary).toBe(true);
          const kept = new Set(words(copy.title));
          const withoutEmoji = title.replaceAll(/\p{Extended_Pictographic}/gu, ' ');
          for (const word of words(withoutEmoji.trim() === '' ? title : withoutEmoji)) expect(kept).toContain(word);
        },
      ),
    );
  });
});

describe('updates', () => {
  const articles = generateArticles({ ...base, updateRate: 0.3 });
  const plain = generateArticles(base);

  it('shows revisions due before the clock as the latest status: UPDATED, rarely DELETED, some retitled', () => {
    const changed = articles.filter((article, index) => article.status !== plain[index]?.status);
    expect(changed.length).toBeGreaterThan(0.15 * articles.length);
    const statuses = changed.map((article) => article.status);
    expect(statuses.filter((status) => status === 'DELETED').length).toBeGreaterThan(0);
    expect(statuses.filter((status) => status === 'DELETED').length).toBeLessThan(
      statuses.filter((status) => status === 'UPDATED').length / 3,
    );
    expect(new Set(statuses)).toEqual(new Set(['UPDATED', 'DELETED']));
    const retitled = articles.filter((article, index) => article.title !== plain[index]?.title);
    expect(retitled.length).toBeGreaterThan(0);
    for (const article of retitled) {
      const before = plain.find((other) => other.articleId === article.articleId) as SimArticle;
      // Only a marker is added, so a revision never makes an article match a rule it did not.
      for (const word of words(before.title)) expect(words(article.title)).toContain(word);
      expect(article.status).toBe('UPDATED');
      expect(['PUBLISHED', 'UPDATED', 'CORRECTED']).toContain(before.status);
    }
  });

  describe('over the wire', () => {
    let clock = NOW;
    let sim: NewsSimulator | undefined;
    afterAll(async () => {
      await sim?.stop();
    });

    const read = async (): Promise<Map<string, { status: string; title: string; media: string }>> => {
      const seen = new Map<string, { status: string; title: string; media: string }>();
      for (let page = 1; ; page++) {
        const response = await request(`${sim?.url}/news`, {
          dispatcher: agent,
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-api-key': sim?.liveKey ?? '' },
          body: JSON.stringify({
            paginationMethod: 'PAGE',
            publishedAtStart: '2026-11-22',
            publishedAtEnd: '2026-11-22',
            page,
            size: 100,
          }),
        });
        expect(response.statusCode).toBe(200);
        const body = (await response.body.json()) as {
          articles: { articleId: string; status: string; title: string; media: { code: string } }[];
        };
        for (const article of body.articles) {
          seen.set(article.articleId, { status: article.status, title: article.title, media: article.media.code });
        }
        if (body.articles.length < 100) return seen;
      }
    };

    it('serves copies as the clock reaches them and the same articles again with their new status', async () => {
      sim = await startNewsSimulator({
        ca: sandboxCa,
        now: () => clock,
        seed: 7,
        generate: { days: 1, perDay: 600 },
        syndicationRate: 0.3,
        updateRate: 0.3,
      });
      const before = await read();
      // Partner outlets are in the default live key's scope.
      expect([...before.values()].some((article) => article.media.startsWith('M2'))).toBe(true);
      clock = NOW + 7 * HOUR;
      const after = await read();
      const arrived = [...after.keys()].filter((id) => !before.has(id));
      expect(arrived.length).toBeGreaterThan(0);
      for (const id of arrived) {
        const copy = sim.articles().find((article) => article.articleId === id);
        expect(copy?.copyOf, id).toBeDefined();
        expect(copy?.publishedAt).toBeGreaterThan(NOW);
      }
      const revised = [...before].filter(([id, article]) => after.get(id)?.status !== article.status);
      expect(revised.length).toBeGreaterThan(0);
      for (const [id, article] of revised) {
        const now = after.get(id);
        expect(['UPDATED', 'DELETED'], id).toContain(now?.status);
        expect(['PUBLISHED', 'UPDATED', 'CORRECTED']).toContain(article.status);
      }
      expect(revised.some(([id, article]) => after.get(id)?.title !== article.title)).toBe(true);
    });
  });
});
