/**
 * Deterministic content for the news API simulator: the category taxonomy, the media list, a
 * calendar in the provider's time zone, and seeded article generation. The same seed and clock
 * always give the same articles, so tests, the sandbox and benchmarks can name what they expect.
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

/** The media code the default live key is not contracted for. */
export const OUT_OF_SCOPE_MEDIA = 'M008';

/** Statuses a well-behaved client knows; generated articles also carry a rare unknown one. */
export const KNOWN_STATUSES = ['PUBLISHED', 'UPDATED', 'CORRECTED', 'WITHDRAWN'] as const;

/** The status outside the known set that generated articles occasionally carry. */
export const UNKNOWN_STATUS = 'UNDER_REVIEW';

const categoryByCode = new Map(CATEGORIES.map((category) => [category.code, category]));
const mediaByCode = new Map(MEDIA.map((media) => [media.code, media]));

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

function outletsFor(template: Template, pool: NonEmpty<SimMedia>): NonEmpty<SimMedia> {
  const [first, ...rest] = pool.filter((media) => {
    const beat = beats[media.code];
    return beat === undefined || template.categories.some((code) => code.startsWith(beat));
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

/**
 * Makes articles: seeded ones (the same seed gives the same sequence of articles) and ones built
 * from caller input. One factory per simulator, so ids and content continue across publishes.
 */
export class ArticleFactory {
  readonly #rng: Rng;
  readonly #ids: ArticleIdAllocator;

  constructor(seed: number, calendar: ZoneCalendar) {
    this.#rng = mulberry32(seed);
    this.#ids = new ArticleIdAllocator(calendar);
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
   * from outlets in `media` (all of {@link MEDIA} when empty).
   */
  generate(instants: readonly number[], media: readonly SimMedia[] = MEDIA): SimArticle[] {
    const [first, ...rest] = media;
    const pool: NonEmpty<SimMedia> = first ? [first, ...rest] : MEDIA;
    return instants.map((publishedAt) => this.#generateOne(publishedAt, pool));
  }

  #generateOne(publishedAt: number, mediaPool: NonEmpty<SimMedia>): SimArticle {
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
    const media = pick(rng, outletsFor(template, mediaPool));
    const status = pickWeighted(rng, statusWeights);
    const articleId = this.#ids.next(publishedAt);
    let url = articleUrl(media, articleId);
    if (rng() < 0.02) {
      // Tracking-laden links, so nothing downstream cuts or re-encodes a URL with a query string.
      url +=
        `?utm_source=newsletter&utm_medium=email&utm_campaign=morning-briefing-${articleId.slice(0, 8)}` +
        `&ref=homepage_top_stories&section=${template.categories[0]}&sid=${hex(rng, 32)}&lang=ko-KR`;
    }
    return {
      articleId,
      title,
      summary,
      url,
      publishedAt,
      categories: template.categories.map((code) => toCategory(code)),
      media,
      status,
    };
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
export interface GenerateArticlesOptions {
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
 * `now`, oldest first, ids in time order. The same options always give the same articles.
 */
export function generateArticles(options: GenerateArticlesOptions): SimArticle[] {
  return seedArticles(new ArticleFactory(options.seed, new ZoneCalendar(options.timeZone)), options);
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
  return factory.generate(instants);
}
