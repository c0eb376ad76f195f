/**
 * Deterministic content for the news API simulator: the category taxonomy, the media list, a
 * calendar in the provider's time zone, and seeded article generation. The same seed and clock
 * always give the same articles, so tests, the sandbox and benchmarks can name what they expect.
 *
 * Stories, on request ({@link StoryOptions}): a share of generated stories is republished by other
 * outlets within minutes as syndicated copies and rewrites (prefixes such as `[속보]` or
 * `UPDATE 2-`, outlet credits, other punctuation, a shortened lead, headline clauses reordered),
 * and a share of articles later comes back revised (status UPDATED, rarely DELETED, sometimes
 * with a revised title). Both are drawn from a random stream of their own, so the original
 * articles have the same content at every rate; at rate 0 nothing changes at all.
 */
import { DateTime } from 'luxon';
import { z } from 'zod';

/** A category as the provider sends it: a 9-digit hierarchical code (KPF/BigKinds style) and a name. */
export interface SimCategory {
  readonly code: string;
  readonly name: string;
}

/** A media outlet as the provider sends it. */
export interface SimMedia {
  readonly code: string;
  readonly name: string;
}

/** An article as the simulator stores it: `publishedAt` is epoch milliseconds UTC. */
export interface SimArticle {
  /** `YYYYMMDD-NNNNNN`: provider-local publication date and a per-date sequence. */
  readonly articleId: string;
  readonly title: string;
  readonly summary: string;
  readonly url: string;
  readonly publishedAt: number;
  readonly categories: readonly SimCategory[];
  readonly media: SimMedia;
  /** Latest status: PUBLISHED, UPDATED, CORRECTED, WITHDRAWN, or anything else (an open set). */
  readonly status: string;
  /**
   * Generated copies only: the `articleId` of the original story this copy republishes. The truth
   * label tests and `npm start` compare story collapsing with; never sent on the wire.
   */
  readonly copyOf?: string;
}

/**
 * The taxonomy: top-level codes end in `000000`, second-level codes in `000`. Like the KPF
 * taxonomy it has gaps (there is no 006), so clients must not assume a dense code space.
 */
export const CATEGORIES: readonly SimCategory[] = [
  { code: '001000000', name: 'Politics' },
  { code: '001001000', name: 'Politics > Presidential Office' },
  { code: '001002000', name: 'Politics > National Assembly' },
  { code: '001005000', name: 'Politics > Defense' },
  { code: '001006000', name: 'Politics > Diplomacy' },
  { code: '002000000', name: 'Economy' },
  { code: '002001000', name: 'Economy > Finance' },
  { code: '002004000', name: 'Economy > Industry' },
  { code: '002006000', name: 'Economy > Real Estate' },
  { code: '003000000', name: 'Society' },
  { code: '003001000', name: 'Society > Incidents' },
  { code: '003002000', name: 'Society > Disasters' },
  { code: '004000000', name: 'Culture' },
  { code: '005000000', name: 'International' },
  { code: '007000000', name: 'Sports' },
  { code: '007001000', name: 'Sports > Baseball' },
  { code: '007002000', name: 'Sports > Football' },
  { code: '008000000', name: 'IT & Science' },
  { code: '008001000', name: 'IT & Science > Semiconductors' },
  { code: '008002000', name: 'IT & Science > Artificial Intelligence' },
];

/** Media outlets; the last one is outside the default live key's contracted scope. */
export const MEDIA: readonly [SimMedia, ...SimMedia[]] = [
  { code: 'M001', name: 'Daily Example' },
  { code: 'M002', name: 'Example Business Times' },
  { code: 'M003', name: 'Seoul Example Herald' },
  { code: 'M004', name: 'Example Broadcasting Network' },
  { code: 'M005', name: 'Korea Example Economic Daily' },
  { code: 'M006', name: 'Example Tech Review' },
  { code: 'M007', name: 'Example Sports Today' },
  { code: 'M008', name: 'Example Regional Gazette' },
];

/**
 * Outlets that only republish: syndicated copies come from them as well as from {@link MEDIA}
 * (the provider aggregates thousands of partners; a story's copies often outnumber the outlets
 * that write their own). In the default live key's scope.
 */
export const SYNDICATION_MEDIA: readonly [SimMedia, ...SimMedia[]] = [
  { code: 'M201', name: 'Example Wire Service' },
  { code: 'M202', name: 'Example Metro Daily' },
  { code: 'M203', name: 'Example Online News' },
  { code: 'M204', name: 'Example Weekly Journal' },
];

/** The media code the default live key is not contracted for. */
export const OUT_OF_SCOPE_MEDIA = 'M008';

/** Statuses a well-behaved client knows; generated articles also carry a rare unknown one. */
export const KNOWN_STATUSES = ['PUBLISHED', 'UPDATED', 'CORRECTED', 'WITHDRAWN'] as const;

/** The status outside the known set that generated articles occasionally carry. */
export const UNKNOWN_STATUS = 'UNDER_REVIEW';

const categoryByCode = new Map(CATEGORIES.map((category) => [category.code, category]));
const mediaByCode = new Map([...MEDIA, ...SYNDICATION_MEDIA].map((media) => [media.code, media]));

// ---------------------------------------------------------------------------------------------
// Randomness

/**
 * mulberry32, a 32-bit seeded PRNG. Written out rather than taken from a library: it is five
 * lines, and the article set for a seed must stay the same across dependency upgrades because
 * tests and benchmarks compare runs by seed.
 */
export function mulberry32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = Math.imul(state ^ (state >>> 15), state | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

type Rng = () => number;
type NonEmpty<T> = readonly [T, ...T[]];

const pick = <T>(rng: Rng, items: NonEmpty<T>): T => items[Math.floor(rng() * items.length)] ?? items[0];

/** Picks by weight; weights need not sum to 1. */
function pickWeighted<T>(rng: Rng, items: NonEmpty<readonly [T, number]>): T {
  const total = items.reduce((sum, [, weight]) => sum + weight, 0);
  let roll = rng() * total;
  for (const [item, weight] of items) {
    roll -= weight;
    if (roll < 0) return item;
  }
  return items[0][0];
}

// ---------------------------------------------------------------------------------------------
// Calendar in the provider's time zone

const DAY_MS = 24 * 60 * 60 * 1000;
const datePattern = /^\d{4}-\d{2}-\d{2}$/;

/**
 * Provider-local calendar dates. The API filters by dates in the provider's zone, so an article
 * at 23:30 UTC belongs to the next day in Asia/Seoul. The last day looked up is cached because
 * articles are mostly handled in time order.
 */
export class ZoneCalendar {
  readonly timeZone: string;
  #day = { start: 0, end: 0, date: '' };

  constructor(timeZone: string) {
    if (!DateTime.now().setZone(timeZone).isValid) {
      throw new RangeError(`timeZone "${timeZone}" is not an IANA time zone such as "Asia/Seoul"`);
    }
    this.timeZone = timeZone;
  }

  /** The provider-local date (`YYYY-MM-DD`) of an instant. */
  dateOf(epochMs: number): string {
    if (epochMs < this.#day.start || epochMs >= this.#day.end) {
      const start = DateTime.fromMillis(epochMs, { zone: this.timeZone }).startOf('day');
      this.#day = { start: start.toMillis(), end: start.plus({ days: 1 }).toMillis(), date: start.toISODate() ?? '' };
    }
    return this.#day.date;
  }

  /** First instant of a provider-local date. */
  startOf(date: string): number {
    return DateTime.fromISO(date, { zone: this.timeZone }).startOf('day').toMillis();
  }

  /** First instant after a provider-local date (the exclusive end of that day). */
  endOf(date: string): number {
    return DateTime.fromISO(date, { zone: this.timeZone }).startOf('day').plus({ days: 1 }).toMillis();
  }

  /** Whether `value` is a real calendar date written `YYYY-MM-DD`. */
  static isDate(value: string): boolean {
    return datePattern.test(value) && DateTime.fromISO(value, { zone: 'UTC' }).toISODate() === value;
  }

  /** Calendar days from `from` to `to` (0 for the same date). */
  static daysBetween(from: string, to: string): number {
    return Math.round(DateTime.fromISO(to, { zone: 'UTC' }).diff(DateTime.fromISO(from, { zone: 'UTC' }), 'days').days);
  }
}

// ---------------------------------------------------------------------------------------------
// Article input (TS API and the admin HTTP API share this schema)

const categoryInput = z.union([
  z.string().min(1),
  z.strictObject({ code: z.string().min(1), name: z.string().min(1) }),
]);

/**
 * An article to publish. Everything but the title has a default: id from the per-date sequence,
 * no summary, the outlet's URL, `publishedAt` now, no categories, media M001, status PUBLISHED.
 * Categories and media may be given as codes (names come from the taxonomy) or as `{code, name}`.
 */
export const SimArticleInputSchema = z.strictObject({
  articleId: z.string().min(1).max(200).optional(),
  title: z.string().min(1),
  summary: z.string().optional(),
  url: z.url().optional(),
  /** Epoch milliseconds, or ISO 8601 with an offset (`2026-11-22T09:15:00+09:00`, `...Z`). */
  publishedAt: z.union([z.number().int().nonnegative(), z.iso.datetime({ offset: true })]).optional(),
  categories: z.array(categoryInput).optional(),
  media: categoryInput.optional(),
  status: z.string().min(1).optional(),
});

/** An article to publish; see {@link SimArticleInputSchema} for the defaults. */
export type SimArticleInput = z.input<typeof SimArticleInputSchema>;

const toCategory = (value: string | SimCategory): SimCategory =>
  typeof value === 'string' ? (categoryByCode.get(value) ?? { code: value, name: value }) : value;

/** The outlet for a media code; a code outside {@link MEDIA} is its own name. */
export const mediaOf = (value: string | SimMedia): SimMedia =>
  typeof value === 'string' ? (mediaByCode.get(value) ?? { code: value, name: value }) : value;

const articleUrl = (media: SimMedia, articleId: string) =>
  `https://news.example.com/${media.code.toLowerCase()}/${articleId}`;

// ---------------------------------------------------------------------------------------------
// Content templates. Vocabulary is chosen for the sandbox rules: "interest rate", "inflation",
// "semiconductor", "earthquake", "election", 반도체, 금리, 地震, 半導体.

interface Template {
  readonly categories: NonEmpty<string>;
  readonly title: string;
  readonly summary: string;
}

const slots: Readonly<Record<string, NonEmpty<string>>> = {
  pct: ['1.75', '2.0', '2.25', '2.5', '2.75', '3.0', '3.25', '3.5'],
  turnout: ['26.7', '29.4', '31.3', '34.7'],
  mag: ['3.1', '4.2', '4.8', '5.4', '5.9', '6.3', '7.1'],
  shindo: ['3', '4', '5弱', '5強'],
  n: ['2', '3', '5', '7', '12', '15', '24', '40'],
  big: ['1.2', '2.5', '3.8', '5', '10', '20'],
  fx: ['1,380', '1,395', '1,410', '1,425'],
  ord: ['third', 'fourth', 'fifth', 'sixth'],
  month: ['January', 'March', 'May', 'July', 'September', 'November'],
  company: [
    'Hanbit Semiconductor',
    'Daeil Motors',
    'Seorin Electronics',
    'Nara Bank',
    'Mirae Shipbuilding',
    'Bluewave Telecom',
    'Ganada Bio',
    'Orion Battery',
  ],
  country: ['Japan', 'Vietnam', 'Indonesia', 'Germany', 'Brazil', 'Canada', 'Turkey', 'Chile'],
  city: ['Seoul', 'Busan', 'Incheon', 'Daegu', 'Gwangju', 'Daejeon', 'Ulsan', 'Jeju'],
  place: ['the east coast', 'Jeju Island', 'the southern coast', 'Pohang', 'Gyeongju'],
  team: ['Seoul Tigers', 'Busan Gulls', 'Incheon Waves', 'Daegu Lions'],
  koCity: ['서울', '부산', '포항', '경주', '제주'],
  jaCity: ['東京', '大阪', '福岡', '仙台'],
};

const english: NonEmpty<Template> = [
  {
    categories: ['002001000'],
    title: 'Central bank holds interest rate at {pct}% as inflation cools',
    summary:
      'The monetary policy committee kept the benchmark interest rate at {pct}%, citing slowing inflation and weak household spending.',
  },
  {
    categories: ['002001000'],
    title: 'Bond yields climb as traders bet on another interest rate hike',
    summary: 'Three-year treasury yields rose for a {ord} session after stronger-than-expected inflation data.',
  },
  {
    categories: ['002001000'],
    title: 'Won weakens past {fx} per dollar on interest rate worries',
    summary:
      'Currency traders said expectations of a wider interest rate gap with the United States weighed on the won.',
  },
  {
    categories: ['002001000'],
    title: 'Household debt rises for the {ord} straight quarter',
    summary: 'Mortgage lending drove the increase, the central bank said, despite tighter loan rules.',
  },
  {
    categories: ['002000000'],
    title: 'Inflation eases to {pct}% in {month}, lowest in two years',
    summary: 'Lower fuel prices offset higher food costs, the statistics agency said.',
  },
  {
    categories: ['002000000'],
    title: 'Consumer prices up {pct}% as food inflation persists',
    summary: 'Vegetable and fruit prices jumped after a summer of heavy rain.',
  },
  {
    categories: ['002004000'],
    title: '{company} to invest {big} trillion won in new battery plant in {city}',
    summary: 'The plant is expected to create about {n},000 jobs when it opens in three years.',
  },
  {
    categories: ['002004000'],
    title: '{company} recalls {n},000 vehicles over brake defect',
    summary: 'The transport ministry said owners will be notified by mail starting next week.',
  },
  {
    categories: ['002004000'],
    title: 'Shipbuilders land record orders for LNG carriers',
    summary: 'Orders in the first ten months already exceed last year, industry data showed.',
  },
  {
    categories: ['002006000'],
    title: 'Apartment prices in {city} rise for the {ord} week',
    summary: 'Buyers returned to the market as lenders eased mortgage terms.',
  },
  {
    categories: ['002000000', '008001000'],
    title: 'Exports rise for the {ord} month on strong semiconductor demand',
    summary: 'Shipments of memory chips led the gains, offsetting weaker car exports.',
  },
  {
    categories: ['008001000', '002004000'],
    title: '{company} unveils 2-nanometer semiconductor process',
    summary: 'The company said mass production would begin next year at its {city} fab.',
  },
  {
    categories: ['008001000', '002000000'],
    title: 'Semiconductor exports hit record high in {month}',
    summary: 'Demand for high-bandwidth memory from AI data centres drove the increase.',
  },
  {
    categories: ['008001000'],
    title: 'Chipmakers expand memory output as AI demand soars',
    summary: 'Analysts expect the semiconductor cycle to stay strong through next year.',
  },
  {
    categories: ['008000000'],
    title: 'Researchers develop battery that charges in {n} minutes',
    summary: 'The team said the design could reach electric cars within five years.',
  },
  {
    categories: ['008002000'],
    title: '{company} launches AI assistant for small businesses',
    summary: 'The service answers customer questions and drafts invoices in Korean and English.',
  },
  {
    categories: ['008000000'],
    title: 'Lunar orbiter sends new images of the far side of the moon',
    summary: 'The space agency said the orbiter has fuel for another {n} months.',
  },
  {
    categories: ['001002000'],
    title: 'Parties clash over budget bill ahead of general election',
    summary: 'The ruling party accused the opposition of delaying the vote for election gains.',
  },
  {
    categories: ['001000000'],
    title: 'Election commission reports early voting turnout of {turnout}%',
    summary: 'Turnout was highest in {city}, the commission said.',
  },
  {
    categories: ['001006000', '005000000'],
    title: 'President to visit {country} for summit on supply chains',
    summary: 'The leaders are expected to sign agreements on critical minerals and energy.',
  },
  {
    categories: ['001002000'],
    title: 'National Assembly passes bill to tighten data privacy rules',
    summary: 'Companies will have to report breaches within 72 hours under the revised law.',
  },
  {
    categories: ['001005000'],
    title: 'Defense ministry to expand reserve forces training',
    summary: 'Training days for reservists will rise from three to {n} next year.',
  },
  {
    categories: ['001001000'],
    title: 'Presidential office names new chief of staff',
    summary: 'The appointment follows a cabinet reshuffle last month.',
  },
  {
    categories: ['003002000'],
    title: 'Magnitude {mag} earthquake strikes near {place}; no tsunami warning',
    summary: 'The weather agency said no damage had been reported an hour after the earthquake.',
  },
  {
    categories: ['003002000'],
    title: 'Heavy rain warning issued for {city} as typhoon approaches',
    summary: 'Authorities closed riverside parks and asked residents to avoid travel.',
  },
  {
    categories: ['003000000', '003002000'],
    title: 'Schools hold nationwide earthquake drill',
    summary: 'About {n} million students took part in the annual exercise.',
  },
  {
    categories: ['003000000'],
    title: 'Subway fares in {city} to rise by 150 won next month',
    summary: 'The city said the increase is the first in eight years.',
  },
  {
    categories: ['003001000'],
    title: 'Police investigate data breach at {company}',
    summary: 'The personal details of about {n}0,000 customers may have been exposed.',
  },
  {
    categories: ['004000000'],
    title: 'Film festival opens in {city} with {n} world premieres',
    summary: 'Organisers expect a record number of visitors this year.',
  },
  {
    categories: ['004000000'],
    title: 'Palace night tours return for the autumn season',
    summary: 'Tickets sold out within minutes, the heritage administration said.',
  },
  {
    categories: ['005000000'],
    title: '{country} calls snap election after coalition collapses',
    summary: 'The vote will be held in six weeks, the government said.',
  },
  {
    categories: ['005000000', '003002000'],
    title: 'Earthquake of magnitude {mag} hits {country}, damage reported',
    summary: 'Rescue teams were searching collapsed buildings, local media reported.',
  },
  {
    categories: ['005000000', '002001000'],
    title: 'G20 finance ministers discuss inflation and interest rate outlook',
    summary: 'Ministers warned that high interest rates strain emerging economies.',
  },
  {
    categories: ['007001000'],
    title: '{team} clinch pennant with walk-off home run',
    summary: 'The win sends the club to the championship series for the first time in {n} years.',
  },
  {
    categories: ['007002000'],
    title: 'National football team names squad for World Cup qualifiers',
    summary: 'The coach called up {n} players from European clubs.',
  },
  {
    categories: ['007000000'],
    title: 'Marathon in {city} draws record {n},000 runners',
    summary: 'Roads in the city centre will be closed until early afternoon.',
  },
];

const korean: NonEmpty<Template> = [
  {
    categories: ['002001000'],
    title: '한국은행, 기준금리 {pct}% 동결…물가 둔화세 확인',
    summary: '금융통화위원회는 기준금리를 {pct}%로 유지했다. 금리 인하 시점은 물가 흐름에 달렸다는 분석이다.',
  },
  {
    categories: ['008001000', '002000000'],
    title: '반도체 수출 {n}개월 연속 증가…역대 최대',
    summary: '메모리 반도체 가격 회복에 힘입어 수출이 크게 늘었다.',
  },
  {
    categories: ['002001000'],
    title: '금리 인상 우려에 코스피 하락 마감',
    summary: '외국인 투자자들이 대형주를 중심으로 매도에 나섰다.',
  },
  {
    categories: ['003002000'],
    title: '{koCity} 인근서 규모 {mag} 지진 발생…피해 신고 없어',
    summary: '기상청은 이번 지진으로 인한 해일 가능성은 없다고 밝혔다.',
  },
  {
    categories: ['001002000'],
    title: '총선 앞두고 여야 공방 격화',
    summary: '선거를 앞두고 예산안을 둘러싼 대립이 이어지고 있다.',
  },
  {
    categories: ['008001000'],
    title: '국내 연구진, 차세대 반도체 소재 개발',
    summary: '연구진은 전력 소모를 절반으로 줄인 소재를 개발했다고 밝혔다.',
  },
];

const japanese: NonEmpty<Template> = [
  {
    categories: ['005000000', '003002000'],
    title: '{jaCity}で震度{shindo}の地震 津波の心配なし',
    summary: '気象庁によると、この地震による津波の心配はない。',
  },
  {
    categories: ['008001000', '005000000'],
    title: '半導体市場、AI需要で回復へ',
    summary: '半導体メーカー各社は設備投資を拡大する方針だ。',
  },
  {
    categories: ['005000000', '002001000'],
    title: '日銀、金利据え置きを決定',
    summary: '日本銀行は政策金利を据え置いた。',
  },
  {
    categories: ['005000000'],
    title: '円相場、一時1ドル=150円台に',
    summary: '日米の金利差が意識された。',
  },
];

const emoji: NonEmpty<Template> = [
  {
    categories: ['008001000'],
    title: '🚀 Chip stocks rally as semiconductor demand surges',
    summary: 'Investors piled into chipmakers after strong export data.',
  },
  {
    categories: ['003002000'],
    title: '⚡ Breaking: magnitude {mag} earthquake felt across {city}',
    summary: 'Residents reported shaking for several seconds.',
  },
  {
    categories: ['002000000'],
    title: '📈 Markets cheer as inflation eases 🎉',
    summary: 'The main index closed at its highest level in {n} months.',
  },
  {
    categories: ['007002000'],
    title: '⚽ National team books World Cup spot 🏆',
    summary: 'A late goal sealed qualification with one match to spare.',
  },
  {
    categories: ['001000000'],
    title: '🗳️ Election night: exit polls point to a tight race',
    summary: 'Final results are expected after midnight.',
  },
];

const longTail = [
  'officials said on Tuesday',
  'as analysts weigh the impact on exports, household debt and the interest rate outlook for the rest of the year',
  'in a move that could reshape the industry for a decade',
  'according to people familiar with the matter who asked not to be named because the talks are private',
  'while the opposition demanded a full parliamentary inquiry',
] as const;

const statusWeights: NonEmpty<readonly [string, number]> = [
  ['PUBLISHED', 80],
  ['UPDATED', 9],
  ['CORRECTED', 5],
  ['WITHDRAWN', 4],
  [UNKNOWN_STATUS, 2],
];

/** Specialist outlets only carry their own beat, so media rules and category rules agree. */
const beats: Readonly<Record<string, string>> = { M006: '008', M007: '007' };

function outletsFor(categories: readonly string[], pool: NonEmpty<SimMedia>): NonEmpty<SimMedia> {
  const [first, ...rest] = pool.filter((media) => {
    const beat = beats[media.code];
    return beat === undefined || categories.some((code) => code.startsWith(beat));
  });
  return first ? [first, ...rest] : pool;
}

function fillTemplate(rng: Rng, template: Template): { title: string; summary: string } {
  // Title and summary share slot values, so "{pct}%" says the same number in both.
  const bound = new Map<string, string>();
  const fill = (text: string) =>
    text.replace(/\{(\w+)\}/g, (_, name: string) => {
      let value = bound.get(name);
      if (value === undefined) {
        const choices = slots[name];
        value = choices ? pick(rng, choices) : name;
        bound.set(name, value);
      }
      return value;
    });
  return { title: fill(template.title), summary: fill(template.summary) };
}

function hex(rng: Rng, length: number): string {
  let out = '';
  while (out.length < length) out += Math.floor(rng() * 16).toString(16);
  return out;
}

// ---------------------------------------------------------------------------------------------
// Stories: syndicated copies and revisions

/** How much republishing and revising the generated feed carries; every rate defaults to 0. */
export interface StoryOptions {
  /**
   * Share of generated stories (0 to 1) that other outlets republish as syndicated copies and
   * rewrites, {@link SYNDICATION_COPIES} copies each, within {@link SYNDICATION_SPREAD_MS} of the
   * original.
   */
  readonly syndicationRate?: number;
  /**
   * Share of generated articles (0 to 1) that come back revised 10 minutes to 6 hours after
   * publication: status UPDATED (one in eight DELETED instead), sometimes with a revised title.
   * Only PUBLISHED, UPDATED and CORRECTED articles are revised, and a revised title only adds a
   * marker, so a revision never makes an article match a rule it did not match before.
   */
  readonly updateRate?: number;
}

/** How many copies a syndicated story gets, both ends included. */
export const SYNDICATION_COPIES = { min: 2, max: 8 } as const;
/** Copies appear within this time after the original (the wire is fast). */
export const SYNDICATION_SPREAD_MS = 40 * 60_000;
const REVISION_DELAY_MS = { min: 10 * 60_000, max: 6 * 60 * 60_000 } as const;

/** A later change to a generated article, applied by {@link applyRevision} when it is due. */
export interface SimRevision {
  readonly articleId: string;
  /** Epoch ms at which the provider starts showing the revision. */
  readonly at: number;
  readonly status: 'UPDATED' | 'DELETED';
  /** Whether the headline is revised too (a marker such as `UPDATE 1-` or `(종합)`). */
  readonly retitle: boolean;
}

type Language = 'ko' | 'ja' | 'en';

const languageOf = (text: string): Language =>
  /\p{Script=Hangul}/u.test(text)
    ? 'ko'
    : /[\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Han}]/u.test(text)
      ? 'ja'
      : 'en';

const copyPrefixes: Readonly<Record<Language, NonEmpty<string>>> = {
  ko: ['[속보] ', '[단독] ', '[1보] '],
  ja: ['【速報】', '【独自】'],
  en: ['UPDATE 2-', 'BREAKING: ', 'UPDATE 1-'],
};
const copySuffixes: Readonly<Record<Language, NonEmpty<string>>> = {
  ko: ['(종합)', '(종합2보)'],
  ja: ['（更新）', '＝速報'],
  en: [' - report', ' -sources'],
};
const revisedTitleMarkers: Readonly<Record<Language, (title: string) => string>> = {
  ko: (title) => (title.endsWith('(종합)') ? title.replace(/\(종합\)$/, '(종합2보)') : `${title}(종합)`),
  ja: (title) => (title.endsWith('（更新）') ? title : `${title}（更新）`),
  en: (title) =>
    /^UPDATE \d+-/.test(title)
      ? title.replace(/^UPDATE (\d+)-/, (_, n) => `UPDATE ${Number(n) + 1}-`)
      : `UPDATE 1-${title}`,
};

/** A headline's two clauses the other way round, or undefined when it has no clause break. */
function reorderClauses(title: string, language: Language): string | undefined {
  if (language === 'en') {
    const as = /^(.+?) as (.+)$/.exec(title);
    if (as?.[1] && as[2]) return `As ${as[2]}, ${as[1].charAt(0).toLowerCase()}${as[1].slice(1)}`;
    const parts = title.split(/; | - |, /);
    return parts.length === 2 ? `${parts[1]}; ${parts[0]}` : undefined;
  }
  const parts = title.split(language === 'ko' ? /…|, / : /[ 　、]/);
  if (parts.length !== 2 || !parts[0] || !parts[1]) return undefined;
  return language === 'ko' ? `${parts[1]}…${parts[0]}` : `${parts[1]}　${parts[0]}`;
}

/** Another outlet's house punctuation. */
function repunctuate(text: string, language: Language): string {
  switch (language) {
    case 'ko':
      return text.replaceAll('…', '...').replaceAll('%', '％');
    case 'ja':
      return text.replaceAll('　', ' ').replaceAll('、', '，').replaceAll('=', '＝');
    case 'en':
      return text.replaceAll('; ', ' - ').replaceAll(/(\d)%/g, '$1 percent').replaceAll(/\.$/g, '');
  }
}

/** The lead cut to its first sentence, or to about two thirds with an ellipsis. */
function shortenLead(summary: string, language: Language): string {
  const sentence = (language === 'ja' ? /^(.+?。)./u : language === 'ko' ? /^(.+?다\.) / : /^(.+?\.) /).exec(summary);
  if (sentence?.[1]) return sentence[1];
  const chars = [...summary];
  if (chars.length <= 24) return summary;
  let cut = chars.slice(0, Math.ceil((chars.length * 2) / 3)).join('');
  // Latin leads are cut between words; Korean and Japanese ones anywhere, as their outlets do.
  if (language === 'en' && cut.includes(' ')) cut = cut.slice(0, cut.lastIndexOf(' ')).replace(/[,;:]$/, '');
  return `${cut}…`;
}

/** A credit line as the outlet puts it at the start of the lead. */
function credit(summary: string, outlet: SimMedia, language: Language): string {
  switch (language) {
    case 'ko':
      return `(서울=${outlet.name}) = ${summary}`;
    case 'ja':
      return `【${outlet.name}】${summary}`;
    case 'en':
      return `SEOUL (${outlet.name}) - ${summary}`;
  }
}

const withoutEmoji = (text: string): string =>
  text
    .replaceAll(/\p{Extended_Pictographic}\uFE0F?/gu, ' ')
    .replaceAll(/ {2,}/g, ' ')
    .trim();

/**
 * A copy of a headline and lead as another outlet republishes it: one to three of the changes a
 * wire copy really has, drawn from `rng`; never identical to the original.
 */
export function rewriteForOutlet(
  rng: () => number,
  original: { readonly title: string; readonly summary: string },
  outlet: SimMedia,
): { title: string; summary: string } {
  const language = languageOf(original.title);
  let title = withoutEmoji(original.title) || original.title;
  let summary = original.summary;
  const changes = 1 + Math.floor(rng() * 3);
  const kinds = ['prefix', 'credit', 'punctuation', 'lead', 'reorder', 'suffix'] as const;
  for (let i = 0; i < changes; i++) {
    switch (pick(rng, kinds)) {
      case 'prefix':
        if (!copyPrefixes[language].some((prefix) => title.startsWith(prefix))) {
          title = `${pick(rng, copyPrefixes[language])}${title}`;
        }
        break;
      case 'suffix':
        if (!copySuffixes[language].some((suffix) => title.endsWith(suffix))) {
          title = `${title}${pick(rng, copySuffixes[language])}`;
        }
        break;
      case 'credit':
        if (summary !== '' && !summary.includes(outlet.name)) summary = credit(summary, outlet, language);
        break;
      case 'punctuation':
        title = repunctuate(title, language);
        summary = repunctuate(summary, language);
        break;
      case 'lead':
        summary = shortenLead(summary, language);
        break;
      case 'reorder':
        title = reorderClauses(title, language) ?? title;
        break;
    }
  }
  if (title === original.title && summary === original.summary) title = `${copyPrefixes[language][0]}${title}`;
  return { title, summary };
}

/** An article with a revision applied: the latest status the provider then shows. */
export function applyRevision(article: SimArticle, revision: Pick<SimRevision, 'status' | 'retitle'>): SimArticle {
  const title = revision.retitle ? revisedTitleMarkers[languageOf(article.title)](article.title) : article.title;
  return { ...article, status: revision.status, title };
}

const revisable = new Set(['PUBLISHED', 'UPDATED', 'CORRECTED']);

// ---------------------------------------------------------------------------------------------
// Generation

/** Hands out `YYYYMMDD-NNNNNN` ids: a sequence per provider-local date, continuing across publishes. */
class ArticleIdAllocator {
  readonly #lastByDate = new Map<string, number>();
  readonly #calendar: ZoneCalendar;

  constructor(calendar: ZoneCalendar) {
    this.#calendar = calendar;
  }

  next(publishedAt: number): string {
    const day = this.#calendar.dateOf(publishedAt).replaceAll('-', '');
    const sequence = (this.#lastByDate.get(day) ?? 0) + 1;
    this.#lastByDate.set(day, sequence);
    return `${day}-${String(sequence).padStart(6, '0')}`;
  }

  /** Keeps the sequence ahead of an id chosen by the caller, so generated ids never collide with it. */
  reserve(articleId: string): void {
    const match = /^(\d{8})-(\d+)$/.exec(articleId);
    if (!match?.[1] || !match[2]) return;
    const sequence = Number(match[2]);
    if (sequence > (this.#lastByDate.get(match[1]) ?? 0)) this.#lastByDate.set(match[1], sequence);
  }
}

/** An article before its id is known (ids follow time, and copies interleave with originals). */
interface Draft {
  readonly publishedAt: number;
  readonly title: string;
  readonly summary: string;
  readonly categories: readonly string[];
  readonly media: SimMedia;
  readonly status: string;
  /** The tracking query string's random part, when the link carries one. */
  readonly tracking?: string | undefined;
  /** Copies: the original they republish (its id is known by the time theirs is). */
  readonly original?: Draft | undefined;
  /** A later revision, decided when the draft is made so it does not depend on when it is read. */
  readonly revision?: { readonly at: number; readonly status: SimRevision['status']; readonly retitle: boolean };
  articleId?: string;
}

const byTime = (a: Draft, b: Draft): number => a.publishedAt - b.publishedAt;

/**
 * Makes articles: seeded ones (the same seed gives the same sequence of articles) and ones built
 * from caller input. One factory per simulator, so ids and content continue across publishes.
 * Copies and revisions due after the instant an article set is generated for wait here until
 * {@link ArticleFactory.releaseDue} hands them out.
 */
export class ArticleFactory {
  readonly #rng: Rng;
  /** Copies and revisions only, so the originals are the same at every rate. */
  readonly #storyRng: Rng;
  readonly #ids: ArticleIdAllocator;
  readonly #syndicationRate: number;
  readonly #updateRate: number;
  /** Copies not yet published, by time. */
  #pendingCopies: Draft[] = [];
  #copiesUnsorted = false;
  /** Revisions not yet due, by time. */
  #pendingRevisions: SimRevision[] = [];

  constructor(seed: number, calendar: ZoneCalendar, stories: StoryOptions = {}) {
    for (const [name, rate] of Object.entries(stories)) {
      if (rate !== undefined && !(typeof rate === 'number' && rate >= 0 && rate <= 1)) {
        throw new RangeError(`${name} must be a number from 0 to 1, got ${String(rate)}`);
      }
    }
    this.#rng = mulberry32(seed);
    this.#storyRng = mulberry32((seed ^ 0x5bd1e995) >>> 0);
    this.#ids = new ArticleIdAllocator(calendar);
    this.#syndicationRate = stories.syndicationRate ?? 0;
    this.#updateRate = stories.updateRate ?? 0;
  }

  /** `count` instants in `[from, to)`, on whole seconds where that stays in range, ascending. */
  instants(from: number, to: number, count: number): number[] {
    const out: number[] = [];
    for (let i = 0; i < count; i++) {
      const instant = Math.floor((from + this.#rng() * (to - from)) / 1000) * 1000;
      out.push(Math.max(from, Math.min(instant, to - 1)));
    }
    return out.sort((a, b) => a - b);
  }

  /**
   * One seeded article per instant (in the given order, so ids follow time when instants do),
   * from outlets in `media` (all of {@link MEDIA} when empty), with the copies due by `until`
   * (default: the last instant) merged in by time, and revisions due by then already applied.
   */
  generate(instants: readonly number[], media: readonly SimMedia[] = MEDIA, until?: number): SimArticle[] {
    const [first, ...rest] = media;
    const pool: NonEmpty<SimMedia> = first ? [first, ...rest] : MEDIA;
    const drafts: Draft[] = [];
    for (const publishedAt of instants) {
      const original = this.#draft(publishedAt, pool);
      drafts.push(original);
      this.#schedule(this.#copiesOf(original, pool));
    }
    const dueBy = until ?? instants.reduce((latest, at) => Math.max(latest, at), Number.NEGATIVE_INFINITY);
    const copies = this.#takeCopies(dueBy);
    // Without copies the batch keeps the caller's order exactly, as before stories existed.
    return this.#finalize(copies.length === 0 ? drafts : [...drafts, ...copies].sort(byTime), dueBy);
  }

  /**
   * What became due by `at` since the last call: copies to publish (new articles, ids in time
   * order) and revisions of articles published earlier (apply each with {@link applyRevision}).
   */
  releaseDue(at: number): { articles: SimArticle[]; revisions: SimRevision[] } {
    const articles = this.#finalize(this.#takeCopies(at), at);
    const split = this.#pendingRevisions.findIndex((revision) => revision.at > at);
    const revisions = this.#pendingRevisions.splice(0, split === -1 ? this.#pendingRevisions.length : split);
    return { articles, revisions };
  }

  #draft(publishedAt: number, mediaPool: NonEmpty<SimMedia>): Draft {
    const rng = this.#rng;
    const pool = pickWeighted<NonEmpty<Template>>(rng, [
      [english, 82],
      [korean, 9],
      [japanese, 5],
      [emoji, 4],
    ]);
    const template = pick(rng, pool);
    let { title, summary } = fillTemplate(rng, template);
    if (rng() < 0.01) {
      // Very long headlines exist (wire copy pasted as a title); SMS and email rendering must cope.
      const start = Math.floor(rng() * longTail.length);
      const tail = [...longTail.slice(start), ...longTail.slice(0, start)].join(', ');
      title = `${title}, ${tail}`;
    }
    const media = pick(rng, outletsFor(template.categories, mediaPool));
    const status = pickWeighted(rng, statusWeights);
    // Tracking-laden links, so nothing downstream cuts or re-encodes a URL with a query string.
    const tracking = rng() < 0.02 ? hex(rng, 32) : undefined;
    const draft = { publishedAt, title, summary, categories: template.categories, media, status, tracking };
    return { ...draft, revision: this.#revisionOf(draft) };
  }

  /** The syndicated copies of an original: none for most, 2 to 8 for a `syndicationRate` share. */
  #copiesOf(original: Draft, pool: NonEmpty<SimMedia>): Draft[] {
    const rng = this.#storyRng;
    if (this.#syndicationRate === 0 || rng() >= this.#syndicationRate) return [];
    const others = outletsFor(original.categories, [...pool, ...SYNDICATION_MEDIA]).filter(
      (outlet) => outlet.code !== original.media.code,
    );
    const [firstOutlet, ...moreOutlets] = others;
    if (!firstOutlet) return [];
    const outlets: NonEmpty<SimMedia> = [firstOutlet, ...moreOutlets];
    const count = SYNDICATION_COPIES.min + Math.floor(rng() * (SYNDICATION_COPIES.max - SYNDICATION_COPIES.min + 1));
    const copies: Draft[] = [];
    for (let i = 0; i < count; i++) {
      const publishedAt = original.publishedAt + 1000 * (1 + Math.floor((rng() * SYNDICATION_SPREAD_MS) / 1000));
      // Outlets repeat: an agency sends a first take and a fuller one ("(종합)") of one story.
      const media = pick(rng, outlets);
      const text = rewriteForOutlet(rng, original, media);
      const copy = { publishedAt, ...text, categories: original.categories, media, status: 'PUBLISHED', original };
      copies.push({ ...copy, revision: this.#revisionOf(copy) });
    }
    return copies;
  }

  #revisionOf(draft: Pick<Draft, 'publishedAt' | 'status'>): Draft['revision'] {
    if (this.#updateRate === 0 || !revisable.has(draft.status)) return undefined;
    const rng = this.#storyRng;
    if (rng() >= this.#updateRate) return undefined;
    const delay = REVISION_DELAY_MS.min + Math.floor(rng() * (REVISION_DELAY_MS.max - REVISION_DELAY_MS.min));
    const status = rng() < 0.875 ? 'UPDATED' : 'DELETED';
    return { at: draft.publishedAt + delay, status, retitle: status === 'UPDATED' && rng() < 0.4 };
  }

  /** Copies are appended as they are made and sorted once when taken (sorting on every append made a big day quadratic). */
  #schedule(copies: readonly Draft[]): void {
    if (copies.length === 0) return;
    this.#pendingCopies.push(...copies);
    this.#copiesUnsorted = true;
  }

  #takeCopies(until: number): Draft[] {
    // Stable: copies due at the same instant keep the order they were made in, as before.
    if (this.#copiesUnsorted) this.#pendingCopies.sort(byTime);
    this.#copiesUnsorted = false;
    const split = this.#pendingCopies.findIndex((copy) => copy.publishedAt > until);
    return this.#pendingCopies.splice(0, split === -1 ? this.#pendingCopies.length : split);
  }

  /** Ids in the drafts' order; revisions due by `until` applied, later ones kept for releaseDue. */
  #finalize(drafts: readonly Draft[], until: number): SimArticle[] {
    const articles: SimArticle[] = [];
    for (const draft of drafts) {
      const articleId = this.#ids.next(draft.publishedAt);
      draft.articleId = articleId;
      let url = articleUrl(draft.media, articleId);
      if (draft.tracking !== undefined) {
        url +=
          `?utm_source=newsletter&utm_medium=email&utm_campaign=morning-briefing-${articleId.slice(0, 8)}` +
          `&ref=homepage_top_stories&section=${draft.categories[0]}&sid=${draft.tracking}&lang=ko-KR`;
      }
      let article: SimArticle = {
        articleId,
        title: draft.title,
        summary: draft.summary,
        url,
        publishedAt: draft.publishedAt,
        categories: draft.categories.map((code) => toCategory(code)),
        media: draft.media,
        status: draft.status,
        ...(draft.original?.articleId === undefined ? {} : { copyOf: draft.original.articleId }),
      };
      const revision = draft.revision;
      if (revision && revision.at <= until) article = applyRevision(article, revision);
      else if (revision) this.#pendingRevisions.push({ articleId, ...revision });
      articles.push(article);
    }
    this.#pendingRevisions.sort((a, b) => a.at - b.at);
    return articles;
  }

  /** Validates caller input and fills the defaults (see {@link SimArticleInputSchema}). */
  fromInput(input: SimArticleInput, now: number): SimArticle {
    const parsed = SimArticleInputSchema.parse(input);
    const publishedAt =
      parsed.publishedAt === undefined
        ? now
        : typeof parsed.publishedAt === 'number'
          ? parsed.publishedAt
          : Date.parse(parsed.publishedAt);
    const media = mediaOf(parsed.media ?? 'M001');
    let articleId = parsed.articleId;
    if (articleId === undefined) articleId = this.#ids.next(publishedAt);
    else this.#ids.reserve(articleId);
    return {
      articleId,
      title: parsed.title,
      summary: parsed.summary ?? '',
      url: parsed.url ?? articleUrl(media, articleId),
      publishedAt,
      categories: (parsed.categories ?? []).map(toCategory),
      media,
      status: parsed.status ?? 'PUBLISHED',
    };
  }
}

/** Options of {@link generateArticles}. */
export interface GenerateArticlesOptions extends StoryOptions {
  readonly seed: number;
  /** How many 24-hour slices back from `now` to fill. */
  readonly days: number;
  /** Articles per 24-hour slice. */
  readonly perDay: number;
  /** Epoch ms; no article is later than this. */
  readonly now: number;
  readonly timeZone: string;
}

/**
 * The seeded article set: `perDay` articles in each of the `days` 24-hour slices that end at
 * `now`, plus their syndicated copies published by `now`, oldest first, ids in time order, each
 * with its latest status at `now`. The same options always give the same articles: the set a
 * simulator started at `now` with the same options holds.
 */
export function generateArticles(options: GenerateArticlesOptions): SimArticle[] {
  const { syndicationRate, updateRate } = options;
  const factory = new ArticleFactory(options.seed, new ZoneCalendar(options.timeZone), {
    ...(syndicationRate === undefined ? {} : { syndicationRate }),
    ...(updateRate === undefined ? {} : { updateRate }),
  });
  return seedArticles(factory, options);
}

/** {@link generateArticles} with a caller's factory, so later publishes continue its ids and content. */
export function seedArticles(
  factory: ArticleFactory,
  options: Pick<GenerateArticlesOptions, 'days' | 'perDay' | 'now'>,
): SimArticle[] {
  const instants: number[] = [];
  for (let slice = options.days - 1; slice >= 0; slice--) {
    const end = options.now - slice * DAY_MS;
    instants.push(...factory.instants(end - DAY_MS + 1, end + 1, options.perDay));
  }
  return factory.generate(instants, MEDIA, options.now);
}

// ---------------------------------------------------------------------------------------------
// Bursts of coverage (spike alerts)

/**
 * A burst of coverage on a topic, as {@link burstArticles} makes it: `storiesPerHour` new stories
 * an hour for `hours` hours from `from`, each headline naming `topic`, each story republished by
 * `copies` other outlets within {@link SYNDICATION_SPREAD_MS} (rewritten as wire copies are).
 */
export interface SimBurst {
  readonly topic: string;
  /** Epoch ms of the first story. */
  readonly from: number;
  readonly hours: number;
  readonly storiesPerHour: number;
  /** Copies of each story (default 0). */
  readonly copies?: number;
  /** Category code of the articles (default Economy > Industry). */
  readonly category?: string;
  /** Seed of the headlines (default 1). */
  readonly seed?: number;
}

const burstSubjects = [
  'suppliers',
  'regulators',
  'investors',
  'local council',
  'union leaders',
  'analysts',
  'exporters',
  'customers',
  'lawmakers',
  'engineers',
  'shareholders',
  'rivals',
] as const;
const burstVerbs = [
  'weigh',
  'question',
  'welcome',
  'scramble over',
  'push back on',
  'brace for',
  'probe',
  'cheer',
  'warn over',
  'race to respond to',
] as const;
const burstObjects = [
  'plant expansion',
  'recall notice',
  'merger talks',
  'price cuts',
  'factory fire',
  'export ban',
  'chief executive exit',
  'record order',
  'data breach',
  'strike threat',
  'earnings surprise',
  'court ruling',
] as const;
const burstPlaces = [
  'Busan',
  'Incheon',
  'Daejeon',
  'Gwangju',
  'Ulsan',
  'Suwon',
  'Changwon',
  'Pohang',
  'Jeonju',
  'Cheongju',
] as const;

/**
 * The articles of a burst, oldest first: distinct stories about one topic (different actors,
 * events and places, so the story index keeps them apart), and the copies of each.
 */
export function burstArticles(burst: SimBurst): SimArticleInput[] {
  return burstStories(burst)
    .flatMap((story) => [story.original, ...story.copies])
    .sort((a, b) => Number(a.publishedAt) - Number(b.publishedAt));
}

/** The stories of a burst in publishing order, each its original and its copies (published after it). */
export function burstStories(burst: SimBurst): { original: SimArticleInput; copies: SimArticleInput[] }[] {
  const rng = mulberry32(burst.seed ?? 1);
  const category = burst.category ?? '002004000';
  const stories = Math.max(0, Math.round(burst.storiesPerHour * burst.hours));
  const spacing = (burst.hours * 60 * 60_000) / Math.max(1, stories);
  const outlets = [...MEDIA.slice(0, 7), ...SYNDICATION_MEDIA];
  const result: { original: SimArticleInput; copies: SimArticleInput[] }[] = [];
  for (let s = 0; s < stories; s++) {
    const publishedAt = Math.floor(burst.from + s * spacing + rng() * spacing * 0.8);
    const media = pick(rng, [MEDIA[0], ...MEDIA.slice(1, 7)] as NonEmpty<SimMedia>);
    const title = `${burst.topic} ${pick(rng, burstObjects)}: ${pick(rng, burstSubjects)} in ${pick(rng, burstPlaces)} ${pick(rng, burstVerbs)} it`;
    const summary = `${title}. ${burst.topic} said on ${pick(rng, ['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday'])} that it was reviewing the ${pick(rng, burstObjects)} after ${pick(rng, burstSubjects)} raised concerns (${hex(rng, 6)}).`;
    const copies: SimArticleInput[] = [];
    for (let c = 0; c < (burst.copies ?? 0); c++) {
      const outlet = pick(rng, outlets.filter((o) => o.code !== media.code) as unknown as NonEmpty<SimMedia>);
      const copy = rewriteForOutlet(rng, { title, summary }, outlet);
      copies.push({
        ...copy,
        publishedAt: publishedAt + 1000 * (1 + Math.floor((rng() * SYNDICATION_SPREAD_MS) / 1000)),
        media: outlet.code,
        categories: [category],
        status: 'PUBLISHED',
      });
    }
    result.push({
      original: { title, summary, publishedAt, media: media.code, categories: [category], status: 'PUBLISHED' },
      copies,
    });
  }
  return result;
}
