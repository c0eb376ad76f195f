import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Article } from '#core/model';
import {
  BANDS,
  fingerprint,
  MAX_LEAD_CHARS,
  MAX_TITLE_CHARS,
  SIGNATURE_SIZE,
  StoryResolver,
  storyLead,
  storyTitle,
  WIRE_PATTERNS,
} from '#core/story';
import { normalizeTextKeepingApostrophes } from '#core/text';
import { MemoryStoryStore } from '../support/memory-story-store.ts';

const T0 = Date.UTC(2026, 2, 2, 9);

const article = (key: string, title: string, summary: string, media: string): Article => ({
  key,
  title,
  summary,
  url: `https://news.example.com/${encodeURIComponent(key)}`,
  publishedAt: T0,
  categories: [],
  categoryNames: [],
  media,
  mediaName: media,
});

/** Text an attacker or a broken feed sends: controls, bidi marks, emoji, lone surrogates, huge runs. */
const hostileText = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 400 }),
  fc.string({ unit: 'grapheme', maxLength: 200 }),
  fc
    .array(
      fc.constantFrom(
        '\u202e',
        '\u200b',
        '\u0000',
        '\u001b[31m',
        '\ud800',
        '👩🏽‍💻',
        '[속보]',
        '【速報】',
        ' - Reuters',
        '(',
        ')',
        '=',
        '기자 =',
      ),
      { maxLength: 60 },
    )
    .map((parts) => parts.join('')),
  fc
    .tuple(fc.constantFrom('a', '가', '日', ' ', '(', '['), fc.integer({ min: 1_000, max: 300_000 }))
    .map(([char, n]) => char.repeat(n)),
);

describe('fingerprint on hostile text', () => {
  it('never throws, keeps its shape and is a function of the text', () => {
    fc.assert(
      fc.property(hostileText, hostileText, (title, summary) => {
        const first = fingerprint(title, summary);
        expect(first.signature).toHaveLength(SIGNATURE_SIZE);
        expect([0, BANDS]).toContain(first.bands.length);
        for (const band of first.bands) expect(band).toMatch(/^[0-9A-Za-z_-]{7}$/);
        expect(fingerprint(title, summary)).toEqual(first);
      }),
      { numRuns: 200 },
    );
  });
});

const STORIES = [
  [
    '삼성전자, 3분기 영업이익 9조1천억원…전년 대비 277% 증가',
    '삼성전자가 3분기 연결 기준 영업이익이 9조1천억원으로 잠정 집계됐다고 8일 공시했다.',
  ],
  [
    'SK하이닉스, 3분기 영업이익 7조300억원…분기 사상 최대',
    'SK하이닉스가 3분기 영업이익 7조300억원을 기록해 분기 기준 사상 최대 실적을 냈다.',
  ],
  [
    'Fed cuts rates by quarter point, signals slower pace of easing',
    'The Federal Reserve lowered its benchmark interest rate by a quarter of a percentage point.',
  ],
  [
    'Fed holds rates steady, sees two cuts later this year',
    'The Federal Reserve kept its benchmark interest rate in a range of 4.25% to 4.5% on Wednesday.',
  ],
  [
    '日銀、政策金利を0.25%に引き上げ　国債買い入れ減額も決定',
    '日本銀行は31日の金融政策決定会合で、政策金利を0.25%程度に引き上げることを決めた。',
  ],
  [
    '能登半島で震度7　石川県に大津波警報',
    '1日午後4時10分ごろ、石川県能登地方を震源とする地震があり、同県志賀町で震度7を観測した。',
  ],
] as const;
const PREFIXES = ['', '[속보] ', '[단독]', 'UPDATE 2-', 'BREAKING: ', '【速報】', '＜速報＞'] as const;
const SUFFIXES = ['', '(종합)', '(종합2보)', ' - Reuters', ' | 연합뉴스', '（共同）'] as const;
const BYLINES = ['', '(서울=연합뉴스) 김민수 기자 = ', 'SEOUL, Oct 8 (Reuters) - ', '【東京=共同】'] as const;

/** One copy of one story: which story, and how the outlet dressed it. */
const copy = fc.record({
  story: fc.integer({ min: 0, max: STORIES.length - 1 }),
  prefix: fc.constantFrom(...PREFIXES),
  suffix: fc.constantFrom(...SUFFIXES),
  byline: fc.constantFrom(...BYLINES),
  outlet: fc.constantFrom('A', 'B', 'C', 'D'),
});

describe('StoryResolver over copies', () => {
  it('files every wire-dressed copy under its own story, never another', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(copy, { minLength: 1, maxLength: 25 }), async (copies) => {
        const store = new MemoryStoryStore({ now: () => T0 });
        const resolver = new StoryResolver(store);
        const articles = copies.map((c, i) => {
          const [title, summary] = STORIES[c.story] ?? ['', ''];
          return article(`id:${i}`, `${c.prefix}${title}${c.suffix}`, `${c.byline}${summary}`, c.outlet);
        });
        const result = await resolver.assign(articles, { now: T0 });
        // The first copy of each story leads it; every later copy joins it.
        const leads = new Map<number, string>();
        copies.forEach((c, i) => {
          if (!leads.has(c.story)) leads.set(c.story, `id:${i}`);
          expect(result.get(`id:${i}`)?.leadArticleKey).toBe(leads.get(c.story));
        });
      }),
      { numRuns: 60 },
    );
  });

  it('is idempotent under any batching and order: re-assigning changes no story and no count', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(copy, { minLength: 1, maxLength: 20 }),
        fc.integer({ min: 1, max: 7 }),
        fc.integer({ min: 1, max: 7 }),
        async (copies, firstBatch, secondBatch) => {
          const store = new MemoryStoryStore({ now: () => T0 });
          const articles = copies.map((c, i) => {
            const [title, summary] = STORIES[c.story] ?? ['', ''];
            return article(`id:${i}`, `${c.prefix}${title}${c.suffix}`, `${c.byline}${summary}`, c.outlet);
          });
          const first = new Map();
          const resolver = new StoryResolver(store);
          for (let from = 0; from < articles.length; from += firstBatch) {
            for (const [key, value] of await resolver.assign(articles.slice(from, from + firstBatch), { now: T0 })) {
              first.set(key, value);
            }
          }
          const counts = store.counts();
          const writes = store.calls.write;
          const again = new StoryResolver(store);
          const reversed = [...articles].reverse();
          for (let from = 0; from < reversed.length; from += secondBatch) {
            const batch = reversed.slice(from, from + secondBatch);
            const result = await again.assign(batch, { now: T0 + 1000 });
            expect([...result.keys()].sort()).toEqual(batch.map((a) => a.key).sort());
            for (const [key, value] of result) expect(value).toEqual(first.get(key));
          }
          expect(store.counts()).toEqual(counts);
          expect(store.calls.write).toBe(writes);
        },
      ),
      { numRuns: 60 },
    );
  });
});

/** The cleaning as written before the prechecks: every pattern run unconditionally. */
function referenceTitle(title: string): string {
  let text = normalizeTextKeepingApostrophes(title.slice(0, MAX_TITLE_CHARS));
  for (let pass = 0; pass < 2; pass++) {
    text = text
      .replace(WIRE_PATTERNS.leadingTags, '')
      .replace(WIRE_PATTERNS.leadingSlugs, '')
      .replace(WIRE_PATTERNS.trailingTags, '')
      .trim();
  }
  const withoutCredit = text.replace(WIRE_PATTERNS.trailingCredit, '');
  return withoutCredit.length >= 10 ? withoutCredit : text;
}
function referenceLead(summary: string): string {
  let text = normalizeTextKeepingApostrophes(summary.slice(0, 200));
  for (const byline of WIRE_PATTERNS.leadBylines) text = text.replace(byline, '');
  return text.slice(0, MAX_LEAD_CHARS);
}

/** Wire tags, slugs, credits and bylines in pieces, mixed with hostile text and wide characters. */
const wireText = fc
  .array(
    fc.oneof(
      fc.constantFrom(
        '[속보] ',
        '<단독>',
        '(종합2보) ',
        '■',
        'UPDATE 2- ',
        'breaking: ',
        'corrected-',
        'exclusive | ',
        'refile: ',
        'analysis-',
        'factbox – ',
        'urgent:',
        'flash-',
        'explainer - ',
        '독자 ',
        '단독-',
        '独自:',
        '速報:',
        ' (2보)',
        ' [사진]',
        ' - Reuters',
        ' | 연합뉴스',
        ' — 日本経済新聞',
        '(서울=연합뉴스) 홍길동 기자 = ',
        '[이데일리 김철수 기자] ',
        '【ワシントン=共同】',
        'SEOUL, Nov 23 (Reuters) - ',
        '김철수 특파원 = ',
        '반도체',
        'chips ',
        ' ',
        '\u3000',
        '𐀀',
        'ﯪ',
        '(',
        ')',
        '=',
        '-',
      ),
      fc.string({ maxLength: 6 }),
      fc.string({ unit: 'binary', maxLength: 4 }),
    ),
    { maxLength: 24 },
  )
  .map((parts) => parts.join(''));

describe('title and lead cleaning', () => {
  it('skips a pattern only when it cannot match (the prechecks change no result)', () => {
    // Found by this property: 40 code points of a lead can be 80 UTF-16 units before the "(".
    const wide = 'ﯪ * * ! [속보] January𐀀ﯪ𐀀SEOUL, Nov 23 (Reuters) - ';
    expect(storyLead(wide)).toBe(referenceLead(wide));
    fc.assert(
      fc.property(wireText, (text) => {
        expect(storyTitle(text)).toBe(referenceTitle(text));
        expect(storyLead(text)).toBe(referenceLead(text));
      }),
      { numRuns: 3000 },
    );
  });
});
