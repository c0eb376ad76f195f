import { describe, expect, it } from 'vitest';
import type { Article } from '#core/model';
import {
  BANDS,
  bandKeys,
  fingerprint,
  MAX_TITLE_CHARS,
  MIN_SHARED_BANDS,
  marksConflict,
  SIGNATURE_SIZE,
  STORY_SIMILARITY,
  STORY_WINDOW_MS,
  StoryResolver,
  similarity,
  storyIdOf,
  storyLead,
  storyMarks,
  storyTerms,
  storyTitle,
  termsConflict,
} from '#core/story';
import { MemoryStoryStore } from '../support/memory-story-store.ts';

const T0 = Date.UTC(2026, 2, 2, 9);

let serial = 0;
function article(title: string, summary: string, media = 'Outlet', key = `id:a${++serial}`): Article {
  return {
    key,
    title,
    summary,
    url: `https://news.example.com/${key}`,
    publishedAt: T0,
    categories: [],
    categoryNames: [],
    media,
    mediaName: media,
  };
}

function setup(now = T0) {
  let clock = now;
  const store = new MemoryStoryStore({ now: () => clock });
  return { store, resolver: new StoryResolver(store), setNow: (value: number) => (clock = value) };
}

/** Files `first`, then assigns `second` a minute later: whether they share a story. */
async function sameStory(first: Article, second: Article): Promise<boolean> {
  const { resolver, setNow } = setup();
  const a = await resolver.assign([first], { now: T0 });
  setNow(T0 + 60_000);
  const b = await resolver.assign([second], { now: T0 + 60_000 });
  return a.get(first.key)?.storyId === b.get(second.key)?.storyId;
}

const KO = {
  title: '삼성전자, 3분기 영업이익 9조1천억원…전년 대비 277% 증가',
  summary:
    '삼성전자가 3분기 연결 기준 영업이익이 9조1천억원으로 잠정 집계됐다고 8일 공시했다. 메모리 반도체 가격 반등과 고대역폭메모리(HBM) 판매 확대가 실적을 끌어올렸다.',
};
const EN = {
  title: 'Fed cuts rates by quarter point, signals slower pace of easing',
  summary:
    'The Federal Reserve lowered its benchmark interest rate by a quarter of a percentage point to a range of 4.25% to 4.5% on Wednesday and signaled it would cut more slowly next year.',
};
const JA = {
  title: '日銀、政策金利を0.25%に引き上げ　国債買い入れ減額も決定',
  summary:
    '日本銀行は31日の金融政策決定会合で、政策金利を0～0.1%から0.25%程度に引き上げることを決めた。長期国債の買い入れを段階的に減らす計画も決定した。',
};

describe('story titles and leads', () => {
  it.each([
    ['[속보] 삼성전자 실적 발표', '삼성전자 실적 발표'],
    ['[단독]삼성전자 실적 발표(종합2보)', '삼성전자 실적 발표'],
    ['【速報】日銀が利上げ', '日銀が利上げ'],
    ['UPDATE 2-Fed cuts rates', 'fed cuts rates'],
    ['BREAKING: Fed cuts rates', 'fed cuts rates'],
    ['EXCLUSIVE-Fed cuts rates - Reuters', 'fed cuts rates'],
    ['Fed cuts rates | Associated Press', 'fed cuts rates'],
    ['ＵＰＤＡＴＥ　１－Fed cuts rates', 'fed cuts rates'],
  ])('strips wire tags and credits: %s', (title, expected) => {
    expect(storyTitle(title)).toBe(expected);
  });

  it('keeps a dash that is most of the headline', () => {
    expect(storyTitle('Samsung - the comeback')).toBe('samsung - the comeback');
  });

  it.each([
    ['(서울=연합뉴스) 김민수 기자 = 삼성전자가 공시했다.', '삼성전자가 공시했다.'],
    ['[이데일리 이준호 기자] 삼성전자가 공시했다.', '삼성전자가 공시했다.'],
    ['SEOUL, Oct 8 (Reuters) - Samsung said.', 'samsung said.'],
    ['WASHINGTON (Associated Press) — The Fed said.', 'the fed said.'],
    ['【ワシントン=共同】日銀は決めた。', '日銀は決めた。'],
  ])('strips datelines and bylines from the lead: %s', (summary, expected) => {
    expect(storyLead(summary)).toBe(expected);
  });
});

describe('same story across variations', () => {
  const variations: [string, { title: string; summary: string }, { title: string; summary: string }][] = [
    ['ko syndicated with a byline', KO, { ...KO, summary: `(세종=뉴시스) 박지현 기자 = ${KO.summary}` }],
    ['ko prefixed', KO, { ...KO, title: `[속보] ${KO.title}(종합)` }],
    ['ko reordered', KO, { ...KO, title: '전년 대비 277% 증가…삼성전자, 3분기 영업이익 9조1천억원' }],
    ['ko truncated lead', KO, { ...KO, summary: KO.summary.slice(0, KO.summary.indexOf('. ') + 1) }],
    ['ko width and spacing', KO, { ...KO, title: '삼성전자 ３분기 영업이익 ９조１천억원 ... 전년대비 ２７７％ 증가' }],
    ['en syndicated', EN, { ...EN, summary: `WASHINGTON (AP) — ${EN.summary}` }],
    ['en prefixed and credited', EN, { ...EN, title: `UPDATE 2-${EN.title} - Reuters` }],
    ['en reordered', EN, { ...EN, title: 'Signals slower pace of easing: Fed cuts rates by quarter point' }],
    [
      'en truncated lead',
      EN,
      { ...EN, summary: 'The Federal Reserve lowered its benchmark interest rate by a quarter…' },
    ],
    ['ja prefixed', JA, { ...JA, title: `【速報】${JA.title}` }],
    ['ja reordered', JA, { ...JA, title: '国債買い入れ減額も決定、日銀、政策金利を0.25%に引き上げ' }],
    ['ja truncated lead', JA, { ...JA, summary: JA.summary.slice(0, JA.summary.indexOf('。') + 1) }],
    ['ja half-width digits', JA, { ...JA, title: JA.title.replace('　', '  ').replace('0.25%', '０．２５％') }],
  ];
  it.each(variations)('%s', async (_name, first, second) => {
    expect(await sameStory(article(first.title, first.summary), article(second.title, second.summary))).toBe(true);
  });
});

describe('hard negatives stay apart', () => {
  const negatives: [string, { title: string; summary: string }, { title: string; summary: string }][] = [
    [
      'ko: the other chipmaker, same quarter',
      KO,
      {
        title: 'SK하이닉스, 3분기 영업이익 7조300억원…분기 사상 최대',
        summary:
          'SK하이닉스가 3분기 영업이익 7조300억원을 기록해 분기 기준 사상 최대 실적을 냈다고 24일 밝혔다. 고대역폭메모리(HBM) 판매가 전 분기보다 70% 이상 늘었다.',
      },
    ],
    [
      'en: the Fed holding at the same range',
      EN,
      {
        title: 'Fed holds rates steady, sees two cuts later this year',
        summary:
          'The Federal Reserve kept its benchmark interest rate in a range of 4.25% to 4.5% on Wednesday and policymakers still projected two quarter-point cuts by the end of the year.',
      },
    ],
    [
      'ja: the Bank of Japan holding at 0.25%',
      JA,
      {
        title: '日銀、政策金利0.25%を維持　追加利上げは見送り',
        summary:
          '日本銀行は20日の金融政策決定会合で、政策金利を0.25%程度に据え置くことを決めた。米国経済の先行きなど不確実性が高いとして、追加利上げを見送った。',
      },
    ],
    [
      'en: two semiconductor-export stories on the same day',
      {
        title: 'US tightens curbs on AI chip exports to China, adding 140 companies to entity list',
        summary:
          'The Biden administration on Monday expanded restrictions on exports of advanced AI chips and chipmaking tools to China, adding 140 companies to its entity list.',
      },
      {
        title: 'China bans exports of gallium and germanium to US in chip dispute',
        summary:
          'China on Tuesday banned exports of gallium, germanium and antimony to the United States, a day after Washington tightened curbs on AI chips and added 140 companies to its entity list.',
      },
    ],
  ];
  it.each(negatives)('%s', async (_name, first, second) => {
    expect(await sameStory(article(first.title, first.summary), article(second.title, second.summary))).toBe(false);
  });

  it('articles without text are their own stories', async () => {
    expect(await sameStory(article('', ''), article('', ''))).toBe(false);
    expect(await sameStory(article('!!! ...', '— —'), article('!!! ...', '— —'))).toBe(false);
  });
});

describe('fingerprints', () => {
  it('are the same in every process and Node version (golden band keys)', () => {
    const print = fingerprint(KO.title, KO.summary);
    expect(print.signature).toHaveLength(SIGNATURE_SIZE);
    expect(print.bands).toHaveLength(BANDS);
    expect(print.bands.slice(0, 4)).toEqual(GOLDEN_KO_BANDS);
    expect(bandKeys(print.signature)).toEqual(print.bands);
  });

  it('spell terms as six URL-safe characters, the same in every process (golden terms)', () => {
    // Changed on purpose from base 36 (toString(36) per unit was a fifth of the fingerprint's
    // cost); nothing was stored in production yet. A change means stored stories' terms stop agreeing.
    expect(storyTerms('samsung chip exports')).toEqual(['BQvRT1', 'toS-U0', '7BHpc2']);
    expect(storyTerms('반도체 수출')).toEqual(['om90t3', '0KiCp2', 'TD8ok1', 'z1-8s2', 'OF45V0']);
    for (const term of storyTerms(Array.from({ length: 100 }, (_, index) => `w${index} 한${index}`).join(' ')))
      expect(term).toMatch(/^[0-9A-Za-z_-]{6}$/);
  });

  it('keep their signature whatever is fingerprinted after them (signatures share buffers)', () => {
    const texts = Array.from(
      { length: 300 },
      (_, index) => [`headline ${index} of the day`, `lead ${index * 7}`] as const,
    );
    const kept = texts.map(([title, summary]) => fingerprint(title, summary).signature);
    const values = kept.map((signature) => [...signature]);
    for (let index = 0; index < 300; index++) fingerprint(`other ${index}`, 'text');
    texts.forEach(([title, summary], index) => {
      expect(values[index]).toEqual([...fingerprint(title, summary).signature]);
      expect([...(kept[index] as Uint32Array)]).toEqual(values[index]);
    });
  });

  it('read at most MAX_TITLE_CHARS of a title', () => {
    const head = 'word '.repeat(MAX_TITLE_CHARS / 5);
    const a = fingerprint(`${head}tail one`, '');
    const b = fingerprint(`${head}${'other '.repeat(200_000)}`, '');
    expect(similarity(a.signature, b.signature)).toBe(1);
  });
});

describe('story ids', () => {
  it('are 16 hex digits of a 64-bit hash of the lead key, the same in every process (golden ids)', () => {
    // Changed on purpose from the first 16 hex digits of SHA-256 (two to three times the cost
    // per new story); nothing was stored in production yet. A change means a re-read lead starts
    // a second story.
    expect(storyIdOf('id:1')).toBe('2426b7b5ad4bdf6c');
    expect(storyIdOf('id:12345678901234567890')).toBe('79d8357155d31835');
    expect(storyIdOf('')).toMatch(/^[0-9a-f]{16}$/);
  });

  it('differ for 200,000 provider-like keys, in both halves', () => {
    const ids = new Set<string>();
    const highHalves = new Set<string>();
    for (let index = 0; index < 200_000; index++) {
      const id = storyIdOf(`id:2026${String(index).padStart(16, '0')}`);
      ids.add(id);
      highHalves.add(id.slice(0, 8));
    }
    expect(ids.size).toBe(200_000);
    // 32 random bits over 200,000 keys collide about 5 times; a weak high half would collide far more.
    expect(highHalves.size).toBeGreaterThan(200_000 - 50);
  });
});

/** Band keys of KO's fingerprint as first computed; a change means stored stories stop matching. */
const GOLDEN_KO_BANDS = ['0u6UEQ0', '18C36h2', '2KJQUw0', '3Y9VOh3'];

describe('StoryResolver', () => {
  it('leaves the band lists a store read returns as they were (frozen), while a started story joins their bands', async () => {
    class FrozenReads extends MemoryStoryStore {
      override async readBands(bandKeys: readonly string[]) {
        const found = await super.readBands(bandKeys);
        for (const ids of found.values()) Object.freeze(ids);
        return found;
      }
    }
    const store = new FrozenReads({ now: () => T0 });
    const resolver = new StoryResolver(store);
    const january = article('Korea exports hit record high in January on chip demand', '');
    await resolver.assign([january], { now: T0 });
    // Same words, another month: a new story under bands January's story is filed under, and a
    // copy in the same call, so the new story joins those bands' lists within the call.
    const july = article('Korea exports hit record high in July on chip demand', '');
    const copy = article('Korea exports hit record high in July on chip demand', '', 'Other');
    const result = await resolver.assign([july, copy], { now: T0 + 60_000 });
    expect(result.get(july.key)?.storyId).toBe(storyIdOf(july.key));
    expect(result.get(copy.key)?.storyId).toBe(storyIdOf(july.key));
    expect(fingerprint(july.title, '').bands.some((band) => fingerprint(january.title, '').bands.includes(band))).toBe(
      true,
    );
  });

  it('files copies within one call under the earlier article, with one read of each kind and one write', async () => {
    const { store, resolver } = setup();
    const lead = article(KO.title, KO.summary, '연합뉴스');
    const copy = article(`[속보] ${KO.title}`, KO.summary, '뉴시스');
    const other = article(EN.title, EN.summary, 'Reuters');
    const result = await resolver.assign([lead, copy, other], { now: T0 });
    // firstSeenAt: the story's first sighting, the hour spike alerts count it in.
    expect(result.get(lead.key)).toEqual({
      articleKey: lead.key,
      storyId: storyIdOf(lead.key),
      leadArticleKey: lead.key,
      firstSeenAt: T0,
    });
    expect(result.get(copy.key)).toEqual({
      articleKey: copy.key,
      storyId: storyIdOf(lead.key),
      leadArticleKey: lead.key,
      firstSeenAt: T0,
    });
    expect(result.get(other.key)?.storyId).toBe(storyIdOf(other.key));
    expect(store.calls).toEqual({ readFilings: 1, readBands: 1, readStories: 0, write: 1 });
    const stories = await resolver.readStories([storyIdOf(lead.key)]);
    expect(stories.get(storyIdOf(lead.key))).toMatchObject({
      leadArticleKey: lead.key,
      articleCount: 2,
      outletCount: 2,
      outlets: ['연합뉴스', '뉴시스'],
      firstSeenAt: T0,
    });
  });

  it('is idempotent: assigning again gives the same stories and writes nothing', async () => {
    const { store, resolver } = setup();
    const batch = [article(KO.title, KO.summary), article(`UPDATE 1-${KO.title}`, KO.summary), article(JA.title, '')];
    const first = await resolver.assign(batch, { now: T0 });
    const counts = store.counts();
    const writes = store.calls.write;
    expect(await resolver.assign(batch, { now: T0 + 1000 })).toEqual(first);
    // A fresh resolver (another run) reads the filings and still writes nothing.
    const again = await new StoryResolver(store).assign([...batch].reverse(), { now: T0 + 2000 });
    expect(new Map([...again].sort())).toEqual(new Map([...first].sort()));
    expect(store.counts()).toEqual(counts);
    expect(store.calls.write).toBe(writes);
  });

  it('remembers filings: a re-read page does not read the store again', async () => {
    const { store, resolver } = setup();
    const batch = [article(EN.title, EN.summary)];
    await resolver.assign(batch, { now: T0 });
    const reads = store.calls.readFilings;
    await resolver.assign(batch, { now: T0 });
    expect(store.calls.readFilings).toBe(reads);
  });

  it('is deterministic: the same input over the same store state gives the same stories', async () => {
    const inputs = [
      article(KO.title, KO.summary, 'A', 'id:k1'),
      article(`[단독] ${KO.title}`, KO.summary, 'B', 'id:k2'),
      article(EN.title, EN.summary, 'C', 'id:e1'),
      article(`BREAKING: ${EN.title}`, '', 'D', 'id:e2'),
    ];
    const runs = await Promise.all([0, 1].map(() => setup().resolver.assign(inputs, { now: T0 })));
    expect(runs[0]).toEqual(runs[1]);
  });

  it('an already filed article keeps its story even when it changed since', async () => {
    const { resolver } = setup();
    const lead = article(KO.title, KO.summary, 'A', 'id:lead');
    const copy = article(`[속보] ${KO.title}`, KO.summary, 'B', 'id:copy');
    await resolver.assign([lead, copy], { now: T0 });
    const rewritten = { ...copy, title: EN.title, summary: EN.summary };
    const result = await new StoryResolver(setup().store).assign([rewritten], { now: T0 });
    expect(result.get(copy.key)?.storyId).toBe(storyIdOf(copy.key));
    const sameStore = await resolver.assign([rewritten], { now: T0 + 60_000 });
    expect(sameStore.get(copy.key)).toEqual({
      articleKey: copy.key,
      storyId: storyIdOf(lead.key),
      leadArticleKey: lead.key,
      firstSeenAt: T0,
    });
  });

  it('a story takes copies only within its window', async () => {
    const { resolver, setNow } = setup();
    const lead = article(JA.title, JA.summary);
    await resolver.assign([lead], { now: T0 });
    const inside = article(`【速報】${JA.title}`, JA.summary);
    setNow(T0 + STORY_WINDOW_MS);
    expect((await resolver.assign([inside], { now: T0 + STORY_WINDOW_MS })).get(inside.key)?.storyId).toBe(
      storyIdOf(lead.key),
    );
    const late = article(`${JA.title}（共同）`, JA.summary);
    setNow(T0 + STORY_WINDOW_MS + 1);
    expect((await resolver.assign([late], { now: T0 + STORY_WINDOW_MS + 1 })).get(late.key)?.storyId).toBe(
      storyIdOf(late.key),
    );
  });

  it('a shorter window set on the resolver is honoured even when the store still returns the story', async () => {
    const store = new MemoryStoryStore({ now: () => T0 + 120_000 });
    const resolver = new StoryResolver(store, { windowMs: 60_000 });
    const lead = article(EN.title, EN.summary);
    await resolver.assign([lead], { now: T0 });
    const copy = article(`UPDATE 1-${EN.title}`, EN.summary);
    expect((await resolver.assign([copy], { now: T0 + 120_000 })).get(copy.key)?.storyId).toBe(storyIdOf(copy.key));
  });

  it('a dry run decides the same and writes nothing', async () => {
    const batch = [article(KO.title, KO.summary), article(`[속보] ${KO.title}`, KO.summary), article(EN.title, '')];
    const dry = setup();
    const dryResult = await dry.resolver.assign(batch, { now: T0, dryRun: true });
    expect(dry.store.calls.write).toBe(0);
    expect(dry.store.counts()).toEqual({ stories: 0, bands: 0, filings: 0, articles: 0 });
    // Not remembered either: the real run after it still files them.
    const real = await dry.resolver.assign(batch, { now: T0 });
    expect(real).toEqual(dryResult);
    expect(dry.store.counts().filings).toBe(3);
  });

  it('dry runs remember what they would have filed for later dry runs of the same resolver (a preview reads page by page)', async () => {
    const { resolver, store } = setup();
    const lead = article(KO.title, KO.summary);
    const copy = article(`[속보] ${KO.title}`, KO.summary);
    await resolver.assign([lead], { now: T0, dryRun: true });
    const later = await resolver.assign([copy, lead], { now: T0 + 1000, dryRun: true });
    expect(later.get(copy.key)?.storyId).toBe(storyIdOf(lead.key));
    expect(later.get(lead.key)?.storyId).toBe(storyIdOf(lead.key));
    expect(store.calls.write).toBe(0);
    expect(store.counts()).toEqual({ stories: 0, bands: 0, filings: 0, articles: 0 });
    // A real call is not misled by what dry runs pretended: the copy, read alone, starts its own story.
    const real = await resolver.assign([copy], { now: T0 + 2000 });
    expect(real.get(copy.key)?.storyId).toBe(storyIdOf(copy.key));
  });

  it('keeps headlines apart that differ only in a number, a month or a weekday; a copy that drops one still joins', async () => {
    const { resolver } = setup();
    const pairs: [string, string][] = [
      ['Semiconductor exports hit record high in January', 'Semiconductor exports hit record high in July'],
      ['KOSPI closes up 1.2% as chipmakers rally', 'KOSPI closes up 0.5% as chipmakers rally'],
      ['日本代表、W杯予選で7－0の大勝', '日本代表、W杯予選で5－0の大勝'],
      ['반도체 수출 1월 역대 최대', '반도체 수출 7월 역대 최대'],
      ['Markets slump on Monday as rates rise', 'Markets slump on Tuesday as rates rise'],
    ];
    for (const [first, second] of pairs) {
      const a = article(first, '');
      const b = article(second, '');
      const result = await resolver.assign([a, b], { now: T0 });
      expect(result.get(b.key)?.storyId, `${first} / ${second}`).not.toBe(result.get(a.key)?.storyId);
    }
    const lead = article('Samsung Q3 operating profit up 10% on chip demand', '');
    const copy = article('[속보] Samsung Q3 operating profit up on chip demand', '');
    const same = article('UPDATE 2-Samsung Q3 operating profit up 10% on chip demand - Reuters', '');
    const result = await resolver.assign([lead, copy, same], { now: T0 });
    expect(result.get(copy.key)?.storyId).toBe(result.get(lead.key)?.storyId);
    expect(result.get(same.key)?.storyId).toBe(result.get(lead.key)?.storyId);
  });

  it("keeps the same headline apart when the leads' figures differ (the same template two days running)", async () => {
    const { resolver } = setup();
    const a = article('Markets cheer as inflation eases', 'The main index closed at its highest level in 40 months.');
    const b = article('Markets cheer as inflation eases', 'The main index closed at its highest level in 2 months.');
    const cut = article('UPDATE 1-Markets cheer as inflation eases', 'The main index closed at its highest level in');
    const result = await resolver.assign([a, b, cut], { now: T0 });
    expect(result.get(b.key)?.storyId).not.toBe(result.get(a.key)?.storyId);
    // A copy whose lead was cut before the figure still joins one of them (it cannot tell which).
    expect([result.get(a.key)?.storyId, result.get(b.key)?.storyId]).toContain(result.get(cut.key)?.storyId);
  });

  it('keeps headlines apart that swap the subject of one template, even with no lead (entity swaps)', async () => {
    const { resolver } = setup();
    const pairs: [string, string][] = [
      ['Incheon Waves clinch pennant with walk-off home run', 'Seoul Tigers clinch pennant with walk-off home run'],
      [
        'Bluewave Telecom to invest 10 trillion won in new battery plant in Ulsan',
        'Ganada Bio to invest 10 trillion won in new battery plant in Ulsan',
      ],
      [
        'President to visit Germany for summit on supply chains',
        'President to visit Brazil for summit on supply chains',
      ],
      [
        'Exports rise for the fourth month on strong semiconductor demand',
        'Exports rise for the fifth month on strong semiconductor demand',
      ],
      ['인천 웨이브스, 끝내기 홈런으로 우승 확정', '서울 타이거즈, 끝내기 홈런으로 우승 확정'],
      ['トヨタ、新工場に1兆円投資へ', 'ホンダ、新工場に1兆円投資へ'],
    ];
    for (const [first, second] of pairs) {
      const a = article(first, '');
      const b = article(second, '');
      const result = await resolver.assign([a, b], { now: T0 });
      expect(result.get(b.key)?.storyId, `${first} / ${second}`).not.toBe(result.get(a.key)?.storyId);
    }
  });

  it('terms are words and single CJK characters, bounded; a conflict needs a term on each side', () => {
    expect(storyTerms('samsung chip exports')).toHaveLength(3);
    expect(storyTerms('반도체 수출')).toHaveLength(5);
    expect(storyTerms(Array.from({ length: 100 }, (_, index) => `w${index}`).join(' '))).toHaveLength(64);
    const lead = storyTerms('samsung q3 profit up 10 on chip demand');
    expect(termsConflict(storyTerms('samsung profit up 10 on chip demand'), lead)).toBe(false);
    expect(termsConflict(storyTerms('chip demand samsung q3 profit up 10 on'), lead)).toBe(false);
    expect(termsConflict(storyTerms('hynix q3 profit up 10 on chip demand'), lead)).toBe(true);
    expect(termsConflict(lead, undefined)).toBe(false);
  });

  /** Whether each pair, with one shared lead (or none), is filed as two stories. */
  async function storiesOf(pairs: readonly (readonly [string, string])[], summary: string): Promise<boolean[]> {
    const apart: boolean[] = [];
    for (const [first, second] of pairs) {
      const { resolver } = setup();
      const a = article(first, summary);
      const b = article(second, summary);
      const result = await resolver.assign([a, b], { now: T0 });
      apart.push(result.get(b.key)?.storyId !== result.get(a.key)?.storyId);
    }
    return apart;
  }
  const LEADS = ['', 'Residents were evacuated after the fire broke out on Tuesday night, officials said.'];

  it.each(LEADS)(
    'keeps apart headlines that differ only in a subject tag or a clause after a dash (lead %j)',
    async (lead) => {
      const apart: [string, string][] = [
        ['[부산] 아파트 화재로 주민 대피', '[인천] 아파트 화재로 주민 대피'],
        ['【大阪】マンション火災で住民が避難', '【東京】マンション火災で住民が避難'],
        ['[Ohio] Apartment fire forces residents to evacuate', '[Texas] Apartment fire forces residents to evacuate'],
        [
          'Samsung third-quarter results - profit beats estimates',
          'Samsung third-quarter results - profit misses estimates',
        ],
        [
          'Samsung third-quarter results [profit beats estimates]',
          'Samsung third-quarter results [profit misses estimates]',
        ],
      ];
      expect(await storiesOf(apart, lead)).toEqual(apart.map(() => true));
    },
  );

  it.each(LEADS)('joins copies that add, drop or swap a format tag or an outlet credit (lead %j)', async (lead) => {
    const together: [string, string][] = [
      ['[속보] 아파트 화재로 주민 대피', '[포토] 아파트 화재로 주민 대피(종합)'],
      ['[부산] 아파트 화재로 주민 대피', '아파트 화재로 주민 대피'],
      ['[単独]マンション火災で住民が避難', '【速報】マンション火災で住民が避難'],
      [
        'Apartment fire forces residents to evacuate - Reuters',
        'Apartment fire forces residents to evacuate - The Associated Press',
      ],
      ['[Video] Apartment fire forces residents to evacuate', 'Apartment fire forces residents to evacuate | Yonhap'],
      ['아파트 화재로 주민 대피 [연합뉴스]', '아파트 화재로 주민 대피 [뉴시스]'],
    ];
    expect(await storiesOf(together, lead)).toEqual(together.map(() => false));
  });

  it.each(LEADS)('keeps a headline apart from its denial (lead %j)', async (lead) => {
    const apart: [string, string][] = [
      ['김철수 의원, 부산시장 출마 선언', '김철수 의원, 부산시장 불출마 선언'],
      ['山田知事、次期衆院選に出馬表明', '山田知事、次期衆院選に不出馬表明'],
      ['Apple in talks to buy Peloton', 'Apple not in talks to buy Peloton'],
      ['Ministry says it will raise the fuel tax', "Ministry says it won't raise the fuel tax"],
      ['삼성전자, 인텔 파운드리 인수 추진', '삼성전자, 인텔 파운드리 인수 추진 사실무근'],
    ];
    expect(await storiesOf(apart, lead)).toEqual(apart.map(() => true));
    // Copies that both deny are one story.
    const together: [string, string][] = [
      ['김철수 의원, 부산시장 불출마 선언', '[속보] 김철수 의원 부산시장 불출마 선언'],
      ['Apple not in talks to buy Peloton', 'UPDATE 1-Apple not in talks to buy Peloton - Reuters'],
    ];
    expect(await storiesOf(together, lead)).toEqual(together.map(() => false));
  });

  it('keeps apart subject tags the headline spells too, beside a format word, and after a long headline (found by review)', async () => {
    const long = Array.from({ length: 70 }, (_, index) => String.fromCharCode(0xac00 + index * 29)).join('');
    const apart: [string, string][] = [
      ['[부산] 정부 예산 삭감에 지역 반발', '[인천] 정부 예산 삭감에 지역 반발'],
      ['【大阪】大雨で阪急線が運転見合わせ', '【福岡】大雨で阪急線が運転見合わせ'],
      ['[Ohio] Ohio-style abortion bill advances', '[Texas] Ohio-style abortion bill advances'],
      ['[부산 현장] 아파트 화재로 주민 30명 대피', '[인천 현장] 아파트 화재로 주민 30명 대피'],
      [`[울릉] ${long}`, `[청주] ${long}`],
    ];
    expect(await storiesOf(apart, '')).toEqual(apart.map(() => true));
  });

  it('keeps apart denials and refusals in the forms headlines use, also in a trailing clause (found by review)', async () => {
    const apart: [string, string][] = [
      ['삼성전자, 인텔 파운드리 인수 추진', '삼성전자, 인텔 파운드리 인수 추진 부인'],
      ['김 의원, 부산시장 출마한다', '김 의원, 부산시장 출마 안 한다'],
      ['김 의원, 부산시장 출마', '김 의원, 부산시장 출마 포기'],
      ['정부, 연금 개혁안 추진', '정부, 연금 개혁안 추진 철회'],
      ['노조, 임금 협상안 수용', '노조, 임금 협상안 수용 거부'],
      ['山田知事、衆院選に出馬', '山田知事、衆院選に出馬見送り'],
      ['山田知事、衆院選に出馬', '山田知事、衆院選に出馬を断念'],
      ['決算を発表', '決算を発表できず＝関係者'],
      ['总统将出席峰会', '总统拒绝出席峰会'],
      ['Senator to run for governor', 'Senator refuses to run for governor'],
      ['Supreme Court to hear abortion pill case', 'Supreme Court declines to hear abortion pill case'],
      ['Apple in talks to buy Peloton - sources', 'Apple in talks to buy Peloton - Apple denies'],
      ['Samsung shares close - up 10%', 'Samsung shares close - down 5%'],
      ['한국은행 기준금리 결정 - 3.5% 동결', '한국은행 기준금리 결정 - 0.25%p 인하'],
      ['Tech stocks rally - shares up today', 'Tech stocks rally - shares down today'],
    ];
    expect(await storiesOf(apart, '')).toEqual(apart.map(() => true));
  });

  it('joins copies whose only difference is a word that looks like a negation, a branded format tag or a local station (found by review)', async () => {
    const together: [string, string][] = [
      [
        "Asiana, South Korea's No. 2 carrier, approves merger with Korean Air",
        'Asiana approves merger with Korean Air',
      ],
      ['Italian government collapses after no-confidence vote', 'Italian government collapses after vote'],
      ['警視庁、未明に都内で一斉捜索', '警視庁、都内で一斉捜索'],
      ['政府、認証不正で調査', '政府、認証で調査'],
      ['정부, 잘못된 통계 바로잡는다', '정부, 통계 바로잡는다'],
      ['Apple recalls chargers - FOX 13 Tampa Bay', 'Apple recalls chargers - FOX 35 Orlando'],
      ['[MT리포트] 반도체 수출 회복세', '[이슈분석] 반도체 수출 회복세'],
      ['【中継】大雨で住民が避難', '【映像】大雨で住民が避難'],
      ['[LIVE UPDATES] Storm hits coast as thousands flee', '[DEVELOPING] Storm hits coast as thousands flee'],
      // Found by a second review: outlets' names as tags at the end, stations of one city, and
      // words that look like a negation (the president's wife, 불안 해소, 법안 하원).
      ['코스피, 외국인 매수에 2600선 회복 [머니투데이]', '코스피, 외국인 매수에 2600선 회복 [아시아경제]'],
      [
        'Oil prices jump after OPEC+ agrees deeper output cuts [Reuters]',
        'Oil prices jump after OPEC+ agrees deeper output cuts [Bloomberg]',
      ],
      [
        'Subway service suspended after track fire - NBC New York',
        'Subway service suspended after track fire - CBS New York',
      ],
      [
        'Subway service suspended after track fire - ABC7 New York',
        'Subway service suspended after track fire - FOX 5 New York',
      ],
      ['Bridge closed after crash - NBC Bay Area', 'Bridge closed after crash - CBS News Bay Area'],
      ['颱風襲港 天文台發八號風球 - 無綫新聞', '颱風襲港 天文台發八號風球 - 香港01'],
      ['Netflix buys animation studio - No Film School', 'Netflix buys animation studio - Reuters'],
      ['윤석열 대통령 부인 김건희 여사, 캄보디아 순방 동행', '김건희 여사, 윤석열 대통령 캄보디아 순방 동행'],
      ['외환시장 불안 해소 위해 당국 개입', '외환시장 불안 해소 위한 당국 개입'],
      ['美 국방수권법안 하원 통과', '美 하원, 국방수권법안 통과'],
      ['Tencent to buy gaming startup, company declines to comment', 'Tencent to buy gaming startup'],
    ];
    // The copies share their wire lead, as copies do (their headlines alone differ too much).
    const lead =
      'The board said on Monday it had approved the plan, which officials cleared last week after a long review.';
    expect(await storiesOf(together, lead)).toEqual(together.map(() => false));
  });

  it('keeps apart long headlines that differ only after their 32nd distinct character', async () => {
    const head = '가나다라마바사아자차카타파하거너더러머버서어저처커터퍼허고노도로모보소오조초코토포호';
    expect(new Set(head).size).toBeGreaterThan(40);
    expect(await storiesOf([[`${head} 구`, `${head} 누`]], '')).toEqual([true]);
  });

  it('marks are numbers (1,000 = 1000) and month and weekday names, bounded; a conflict needs a mark on each side', () => {
    expect(storyMarks('exports of 1,000 units in january, up 2.5')).toEqual(['1000', 'january', '2.5']);
    expect(storyMarks('fed may cut rates')).toEqual([]);
    expect(storyMarks(Array.from({ length: 40 }, (_, index) => `${index}${'9'.repeat(30)}`).join(' '))).toHaveLength(
      16,
    );
    expect(marksConflict(['10'], ['10', 'q3'])).toBe(false);
    expect(marksConflict(['10', 'july'], ['10', 'june'])).toBe(true);
    expect(marksConflict(['10'], undefined)).toBe(false);
    expect(marksConflict([], ['10'])).toBe(false);
  });

  it('joins exactly when the signatures agree on STORY_SIMILARITY of their positions (the early exit drops no passing candidate)', async () => {
    // One headline, leads cut to every length: similarities from 11 positions below the
    // threshold to far above it.
    const title = 'samsung electronics posts record chip profit as ai memory demand surges';
    const leadA = 'the company said sales of high bandwidth memory doubled while smartphone shipments slowed in europe';
    const leadB = 'investors in seoul cheered the results and analysts raised their targets';
    const cut = (lead: string, words: number) => lead.split(' ').slice(0, words).join(' ');
    let nearThreshold = 0;
    for (let m = 0; m <= 15; m += 1) {
      for (let k = 0; k <= 11; k += 1) {
        const a = article(title, cut(leadA, m));
        const b = article(title, cut(leadB, k));
        const printA = fingerprint(a.title, a.summary);
        const printB = fingerprint(b.title, b.summary);
        const score = similarity(printA.signature, printB.signature);
        if (Math.abs(score - STORY_SIMILARITY) * SIGNATURE_SIZE <= 3) nearThreshold++;
        const bandsShared = printB.bands.filter((band) => printA.bands.includes(band)).length;
        expect(await sameStory(a, b), `${m} and ${k} words, similarity ${score}`).toBe(
          bandsShared >= MIN_SHARED_BANDS && score >= STORY_SIMILARITY,
        );
      }
    }
    // The pairs straddle the threshold, or this test would check nothing.
    expect(nearThreshold).toBeGreaterThanOrEqual(10);
  });

  it('compares a story only when it shares MIN_SHARED_BANDS band keys with the article, and reads no other', async () => {
    const print = fingerprint(EN.title, EN.summary);
    // The article's own signature: any story compared would join.
    const stored = (storyId: string, sharedBands: number) => ({
      storyId,
      leadArticleKey: `id:${storyId}`,
      firstSeenAt: T0,
      outlets: [],
      outletCount: 0,
      articleCount: 0,
      signature: print.signature,
      bands: print.bands.map((band, index) => (index < sharedBands ? band : `x${storyId}${index}`)),
    });
    const { store, resolver } = setup();
    // The story with too few keys would win the tie (smaller id) if it were compared.
    await store.write({
      stories: [stored('a-too-few', MIN_SHARED_BANDS - 1), stored('b-enough', MIN_SHARED_BANDS)],
      filings: [],
    });
    const readIds: string[] = [];
    const readStories = store.readStories.bind(store);
    store.readStories = async (ids) => {
      readIds.push(...ids);
      return readStories(ids);
    };
    const copy = article(EN.title, EN.summary);
    expect((await resolver.assign([copy], { now: T0 })).get(copy.key)?.storyId).toBe('b-enough');
    expect(readIds).toEqual(['b-enough']);
  });

  it("decides the same when calls overlap or reuse an earlier call's working arrays", async () => {
    const pages = [
      [article(KO.title, KO.summary), article(`[속보] ${KO.title}`, KO.summary)],
      [article(EN.title, EN.summary), article(`UPDATE 2-${EN.title}`, EN.summary), article(JA.title, JA.summary)],
      [article(`${JA.title}（共同）`, JA.summary)],
    ];
    const expected = new Map<string, string>();
    const { resolver: oneByOne } = setup();
    for (const page of pages) {
      for (const [key, assignment] of await oneByOne.assign(page, { now: T0 })) expected.set(key, assignment.storyId);
    }
    // Small call, then a larger one (arrays grow), then a smaller one (arrays reused).
    const { resolver: reused } = setup();
    await reused.assign([article('warm-up headline about something else', '')], { now: T0 });
    const sequential = new Map<string, string>();
    for (const page of pages) {
      for (const [key, assignment] of await reused.assign(page, { now: T0 })) sequential.set(key, assignment.storyId);
    }
    expect(sequential).toEqual(expected);
    // Two calls at once over one resolver (pages without copies of each other): each has its own arrays.
    const { resolver: overlapping } = setup();
    const [first, second] = await Promise.all([
      overlapping.assign(pages[0] as Article[], { now: T0 }),
      overlapping.assign(pages[1] as Article[], { now: T0 }),
    ]);
    for (const [key, assignment] of [...first, ...second]) expect(assignment.storyId).toBe(expected.get(key));
  });

  it('ignores band keys a store answers that the call did not ask for', async () => {
    class ExtraKeys extends MemoryStoryStore {
      override async readBands(bandKeys: readonly string[]) {
        const found = new Map(await super.readBands(bandKeys));
        // Not spelled like a band key, and a key of the last band the call does not have.
        found.set('not a band key', ['ghost']);
        found.set(`v${(bandKeys[0] ?? '0000000').slice(1)}`, ['ghost']);
        return found;
      }
    }
    const store = new ExtraKeys({ now: () => T0 });
    const resolver = new StoryResolver(store);
    const lead = article(EN.title, EN.summary);
    const copy = article(`UPDATE 1-${EN.title}`, EN.summary);
    await resolver.assign([lead], { now: T0 });
    const result = await resolver.assign([copy], { now: T0 });
    expect(result.get(copy.key)?.storyId).toBe(storyIdOf(lead.key));
  });

  it('breaks ties by earliest firstSeenAt, then smallest id', async () => {
    const print = fingerprint(EN.title, EN.summary);
    const stored = (storyId: string, firstSeenAt: number) => ({
      storyId,
      leadArticleKey: `id:${storyId}`,
      firstSeenAt,
      outlets: [],
      outletCount: 0,
      articleCount: 0,
      signature: print.signature,
      bands: print.bands,
    });
    const { store, resolver } = setup();
    await store.write({
      stories: [stored('b2', T0 - 2000), stored('a1', T0 - 1000), stored('a0', T0 - 2000)],
      filings: [],
    });
    const copy = article(EN.title, EN.summary);
    expect((await resolver.assign([copy], { now: T0 })).get(copy.key)?.storyId).toBe('a0');
  });

  it('counts each outlet once and lists at most ten', async () => {
    const { resolver } = setup();
    const lead = article(EN.title, EN.summary, 'Outlet 0');
    const copies = Array.from({ length: 12 }, (_, i) =>
      article(`UPDATE ${i}-${EN.title}`, EN.summary, `Outlet ${i % 11}`),
    );
    await resolver.assign([lead, ...copies], { now: T0 });
    const story = (await resolver.readStories([storyIdOf(lead.key)])).get(storyIdOf(lead.key));
    expect(story).toMatchObject({ articleCount: 13, outletCount: 11 });
    expect(story?.outlets).toHaveLength(10);
    expect(story?.outlets[0]).toBe('Outlet 0');
  });
});
