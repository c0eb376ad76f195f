/**
 * Seeded generators of realistic rules and articles for the matching benchmark (and for anyone who
 * needs a believable rule set): hierarchical 9-digit category codes with names, Zipf-like
 * category, media and keyword popularity, English, Korean (particles attached to words) and
 * Japanese (no spaces) text with full-width forms and irregular whitespace, multi-word keywords,
 * prefix and name categories, exclusions, media and status filters, and a few `matchAll` rules
 * with exclusions; optionally a share of rules with boolean queries (phrases, AND, OR, NOT, NEAR,
 * prefix terms, field scopes) drawn from the same vocabulary. The same seed always gives the same
 * output. Articles come out as the provider client delivers them ({@link delivered}).
 */
import type { Article, Rule } from '#core/model';
import { defaultPageSize } from '#core/ports';
import { defaultResponseMapping, mapPage } from '#provider/response-mapping';
import { wireArticle } from '#sandbox/news-simulator';
import type { SimArticle } from '#sandbox/news-simulator-data';

// --- Randomness -------------------------------------------------------------------------------

/** mulberry32: small, fast, good enough for test data, and identical on every platform. */
class Random {
  #state: number;

  constructor(seed: number) {
    this.#state = seed >>> 0;
  }

  /** Uniform in [0, 1). */
  next(): number {
    this.#state = (this.#state + 0x6d2b79f5) >>> 0;
    let t = this.#state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** Uniform integer in [min, max]. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  chance(probability: number): boolean {
    return this.next() < probability;
  }

  pick<T>(items: readonly T[]): T {
    const item = items[Math.floor(this.next() * items.length)];
    if (item === undefined) throw new RangeError('pick from an empty list');
    return item;
  }

  /**
   * An item drawn with probability proportional to 1 / (rank + offset)^exponent (rank 1 = first
   * item): Zipf-Mandelbrot, whose offset flattens the head the way real term frequencies do.
   */
  zipf<T>(items: readonly T[], exponent: number, offset = 0): T {
    const cumulative = zipfTable(items.length, exponent, offset);
    const target = this.next() * (cumulative[cumulative.length - 1] ?? 0);
    let low = 0;
    let high = cumulative.length - 1;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if ((cumulative[middle] ?? 0) < target) low = middle + 1;
      else high = middle;
    }
    return items[low] ?? this.pick(items);
  }

  /** An item drawn with the probability paired with it (the probabilities add up to 1). */
  weighted<T>(items: readonly (readonly [T, number])[]): T {
    let roll = this.next();
    for (const [item, probability] of items) {
      roll -= probability;
      if (roll < 0) return item;
    }
    const last = items[items.length - 1];
    if (last === undefined) throw new RangeError('weighted pick from an empty list');
    return last[0];
  }

  /** `count` distinct items drawn with `draw` (fewer if draws keep repeating). */
  distinct<T>(count: number, draw: () => T): T[] {
    const chosen = new Set<T>();
    for (let attempt = 0; chosen.size < count && attempt < count * 10; attempt++) chosen.add(draw());
    return [...chosen];
  }
}

const zipfTables = new Map<string, Float64Array>();
function zipfTable(size: number, exponent: number, offset: number): Float64Array {
  const key = `${size}:${exponent}:${offset}`;
  let table = zipfTables.get(key);
  if (table === undefined) {
    table = new Float64Array(size);
    let sum = 0;
    for (let rank = 1; rank <= size; rank++) {
      sum += 1 / (rank + offset) ** exponent;
      table[rank - 1] = sum;
    }
    zipfTables.set(key, table);
  }
  return table;
}

/** Fisher-Yates, so popularity ranks are not tied to generation order (or to one section). */
function shuffled<T>(items: readonly T[], random: Random): T[] {
  const copy = [...items];
  for (let i = copy.length - 1; i > 0; i--) {
    const j = Math.floor(random.next() * (i + 1));
    const a = copy[i];
    const b = copy[j];
    if (a !== undefined && b !== undefined) {
      copy[i] = b;
      copy[j] = a;
    }
  }
  return copy;
}

// --- Vocabularies (fixed: the seed varies draws, not the world) --------------------------------

const world = new Random(0x5eed);

interface Category {
  readonly code: string;
  /** `economy > finance > markets`, as providers that send names spell them. */
  readonly name: string;
}

const SECTIONS: readonly [string, readonly string[]][] = [
  ['politics', ['president', 'parliament', 'administration', 'defense', 'north korea', 'elections']],
  ['economy', ['finance', 'industry', 'real estate', 'stocks', 'trade', 'jobs', 'consumer', 'energy']],
  ['society', ['crime', 'education', 'labor', 'environment', 'health', 'media', 'welfare']],
  ['culture', ['books', 'music', 'film', 'travel', 'food', 'fashion', 'religion']],
  ['international', ['asia', 'europe', 'americas', 'middle east', 'africa', 'diplomacy']],
  ['regions', ['seoul', 'busan', 'gyeonggi', 'gangwon', 'jeju', 'daegu']],
  ['sports', ['baseball', 'soccer', 'golf', 'basketball', 'olympics', 'esports']],
  ['it science', ['mobile', 'internet', 'semiconductors', 'ai', 'science', 'games', 'security']],
];
const SUBTOPICS = ['policy', 'markets', 'companies', 'people', 'analysis', 'regulation'];

/** Level-1 sections (`002000000`), level-2 (`002001000`) and level-3 (`002001003`) categories. */
const sectionCategories: Category[] = [];
const topicCategories: Category[] = [];
const code = (...parts: number[]) => parts.map((part) => String(part).padStart(3, '0')).join('');
SECTIONS.forEach(([section, topics], s) => {
  sectionCategories.push({ code: code(s + 1, 0, 0), name: section });
  topics.forEach((topic, t) => {
    topicCategories.push({ code: code(s + 1, t + 1, 0), name: `${section} > ${topic}` });
    const depth = world.int(0, 4);
    for (let d = 0; d < depth; d++) {
      topicCategories.push({ code: code(s + 1, t + 1, d + 1), name: `${section} > ${topic} > ${SUBTOPICS[d]}` });
    }
  });
});
/** Categories articles carry, most popular first. */
const articleCategories = shuffled(topicCategories, world);

/** 300 Hangul syllables: enough that invented words do not occur inside each other by chance. */
const HANGUL_SYLLABLES = [
  ...new Set(Array.from({ length: 400 }, () => String.fromCharCode(0xac00 + world.int(0, 11_171)))),
].slice(0, 300);
const KATAKANA = [
  ...'アイウエオカキクケコサシスセソタチツテトナニヌネノハヒフヘホマミムメモヤユヨラリルレロワンガギグゲゴザジズゼゾダデドバビブベボパピプペポ',
];
const ENGLISH_SYLLABLES = [
  'ra',
  'vo',
  'lin',
  'ter',
  'mo',
  'ka',
  'zen',
  'dor',
  'pi',
  'sel',
  'tra',
  'nex',
  'gal',
  'um',
  'bri',
  'sto',
];

interface Media {
  readonly code: string;
  readonly name: string;
}
const MEDIA_WORDS = [
  'Daily',
  'Morning',
  'Herald',
  'Times',
  'Post',
  'Journal',
  'Economic',
  'Business',
  'Tech',
  'Sports',
];
const KOREAN_MEDIA_SUFFIXES = ['신문', '일보', '경제', '뉴스', '방송'];
const media: Media[] = Array.from({ length: 400 }, (_, i) => ({
  code: String(1_100_000 + i * 37).padStart(8, '0'),
  name: world.chance(0.25)
    ? `${world.pick(HANGUL_SYLLABLES)}${world.pick(HANGUL_SYLLABLES)}${world.pick(KOREAN_MEDIA_SUFFIXES)} ${i}`
    : `${world.pick(MEDIA_WORDS)} ${world.pick(MEDIA_WORDS)} ${i}`,
}));

const STATUSES: readonly [string, number][] = [
  ['published', 0.86],
  ['updated', 0.09],
  ['corrected', 0.03],
  ['embargoed', 0.01],
  ['withdrawn', 0.01],
];

const REAL_ENGLISH_TERMS = [
  'inflation',
  'semiconductor',
  'tariff',
  'election',
  'earnings',
  'merger',
  'AI',
  'EV',
  '5G',
  'chip',
  'battery',
  'oil',
  'rate',
  'bank',
  'CEO',
  'bond',
  'export',
  'recession',
  'startup',
  'lawsuit',
  'strike',
  'typhoon',
  'vaccine',
  'crypto',
  'bitcoin',
  'housing',
  'subsidy',
  'sanctions',
  'summit',
  'drone',
  'satellite',
  'nuclear',
  'pension',
  'IPO',
  'dividend',
  'layoffs',
  'smartphone',
  'cloud',
  'robotics',
  'biotech',
];
const STOP_WORDS = [
  'the',
  'a',
  'of',
  'to',
  'in',
  'and',
  'for',
  'on',
  'with',
  'as',
  'at',
  'by',
  'from',
  'said',
  'says',
  'is',
  'are',
  'was',
  'will',
  'has',
  'after',
  'over',
  'new',
  'more',
  'than',
  'its',
  'this',
  'that',
  'amid',
  'while',
  'into',
  'report',
  'year',
  'week',
  'percent',
  'million',
  'billion',
  'first',
  'announced',
  'plans',
  'expected',
  'officials',
  'according',
  'corporate',
  'rates',
  'again',
];

const pseudoWord = (syllables: readonly string[], min: number, max: number) => {
  let word = '';
  for (let n = world.int(min, max); n > 0; n--) word += world.pick(syllables);
  return word;
};

/** English topic terms, most popular first: real news words, then invented names. */
const englishTerms = [
  ...new Set([...REAL_ENGLISH_TERMS, ...Array.from({ length: 40_000 }, () => pseudoWord(ENGLISH_SYLLABLES, 2, 5))]),
];
const REAL_KOREAN_TERMS = [
  '반도체',
  '금리',
  '부동산',
  '대통령',
  '국회',
  '수출',
  '주가',
  '환율',
  '삼성전자',
  '인공지능',
];
const koreanTerms = [
  ...new Set([...REAL_KOREAN_TERMS, ...Array.from({ length: 10_000 }, () => pseudoWord(HANGUL_SYLLABLES, 2, 4))]),
];
const KOREAN_PARTICLES = ['가', '이', '는', '은', '를', '을', '의', '에', '에서', '로', '와', '도'];
const KOREAN_FILLER = ['관련', '이번', '지난', '올해', '따르면', '밝혔다', '했다', '있다', '위해', '대한', '등', '및'];
const REAL_JAPANESE_TERMS = [
  '半導体',
  '金利',
  '円安',
  '日銀',
  '株価',
  '人工知能',
  '電気自動車',
  '選挙',
  '首相',
  '輸出',
];
const japaneseTerms = [
  ...new Set([...REAL_JAPANESE_TERMS, ...Array.from({ length: 3_000 }, () => pseudoWord(KATAKANA, 4, 6))]),
];
const JAPANESE_FILLER = ['は', 'が', 'を', 'に', 'の', 'と', 'で', 'した', 'する', 'について', '発表', '今年', '政府'];
/** Multi-word terms articles use as a unit. */
const phrases = [
  'interest rate',
  'central bank',
  'supply chain',
  'electric vehicle',
  'real estate',
  'trade war',
  ...Array.from({ length: 400 }, () =>
    `${world.zipf(englishTerms, 1, 30)} ${world.zipf(englishTerms, 1, 30)}`.toLowerCase(),
  ),
];

// --- Articles ---------------------------------------------------------------------------------

/**
 * Term popularity in articles: Zipf-Mandelbrot with exponent 1 and offset 30, so the most common
 * topic word is in a few percent of articles, as in real news, not in most of them.
 */
const ARTICLE_TERM_EXPONENT = 1;
const ARTICLE_TERM_OFFSET = 30;

function englishToken(random: Random, inTitle: boolean): string {
  const roll = random.next();
  let token: string;
  if (roll < 0.22) {
    token = random.zipf(englishTerms, ARTICLE_TERM_EXPONENT, ARTICLE_TERM_OFFSET);
    if (random.chance(0.03)) token += random.pick(['-driven', '-based', '-led']);
  } else if (roll < 0.25) {
    token = random.zipf(phrases, 1, 10);
  } else {
    token = random.pick(STOP_WORDS);
  }
  if (inTitle && random.chance(0.5)) token = token.charAt(0).toUpperCase() + token.slice(1);
  if (random.chance(0.08)) token += random.pick([',', '.', ':', "'s"]);
  return token;
}

function koreanToken(random: Random): string {
  const roll = random.next();
  if (roll < 0.35) {
    const term = random.zipf(koreanTerms, ARTICLE_TERM_EXPONENT, ARTICLE_TERM_OFFSET);
    return random.chance(0.6) ? term + random.pick(KOREAN_PARTICLES) : term;
  }
  if (roll < 0.4) {
    const term = random.zipf(englishTerms, ARTICLE_TERM_EXPONENT, ARTICLE_TERM_OFFSET);
    // "AI반도체": Latin terms glued to Hangul, as Korean headlines write them.
    return random.chance(0.3) ? term + random.zipf(koreanTerms, ARTICLE_TERM_EXPONENT, ARTICLE_TERM_OFFSET) : term;
  }
  return random.pick(KOREAN_FILLER);
}

function japaneseToken(random: Random): string {
  const roll = random.next();
  if (roll < 0.35) return random.zipf(japaneseTerms, ARTICLE_TERM_EXPONENT, ARTICLE_TERM_OFFSET);
  // Full-width Latin, which NFKC folds: ＡＩ, ５Ｇ.
  if (roll < 0.38) return random.pick(['ＡＩ', '５Ｇ', 'ＥＶ', 'AI']);
  return random.pick(JAPANESE_FILLER);
}

function sentence(random: Random, language: 'en' | 'ko' | 'ja', words: number, inTitle: boolean): string {
  const tokens = Array.from({ length: words }, () =>
    language === 'en' ? englishToken(random, inTitle) : language === 'ko' ? koreanToken(random) : japaneseToken(random),
  );
  if (language === 'ja') return tokens.join('');
  // Irregular whitespace, as feeds send it; the client's mapping collapses it ({@link delivered}).
  return tokens
    .map((token, i) => (i > 0 && random.chance(0.02) ? random.pick(['  ', '\n', '\t']) : ' ') + token)
    .join('')
    .trim();
}

/**
 * `count` articles drawn with `seed`: 72% English, 20% Korean, 8% Japanese; titles of 6-12 and
 * summaries of 20-45 tokens (8% empty), about 235 characters in all; one to three Zipf-popular
 * level-2 or level-3 categories, with names (missing for 10%; no category at all for 3%);
 * Zipf-popular media out of 400; status `published` 86%, `updated` 9%, `corrected` 3%,
 * `embargoed` and `withdrawn` 1% each.
 */
export function syntheticArticles(count: number, seed: number): Article[] {
  const random = new Random(seed ^ 0xa271c1e5);
  const start = Date.UTC(2025, 0, 1);
  const generated = Array.from({ length: count }, (_, i): Article => {
    const roll = random.next();
    const language = roll < 0.72 ? 'en' : roll < 0.92 ? 'ko' : 'ja';
    const categories = random.chance(0.03)
      ? []
      : random.distinct(random.chance(0.7) ? 1 : random.chance(0.8) ? 2 : 3, () =>
          random.zipf(articleCategories, 1, 1),
        );
    const outlet = random.zipf(media, 0.9);
    const status = random.weighted(STATUSES);
    const id = `syn-${seed}-${i}`;
    return {
      key: `id:${id}`,
      id,
      title: sentence(random, language, random.int(6, 12), true),
      summary: random.chance(0.08) ? '' : sentence(random, language, random.int(20, 45), false),
      url: `https://news.example.com/${seed}/${i}`,
      publishedAt: start + i * 7_000,
      categories: categories.map((category) => category.code),
      categoryNames: random.chance(0.1) ? [] : categories.map((category) => category.name),
      media: outlet.code,
      mediaName: outlet.name,
      status,
    };
  });
  return delivered(generated);
}

/** Articles per page when {@link delivered} reads them back: the client's default page size. */
const DELIVERY_PAGE_SIZE = defaultPageSize;

/** The provider zone {@link delivered} writes times in: the simulator's default, as `npm start` runs it. */
const DELIVERY_TIME_ZONE = 'Asia/Seoul';

/**
 * `articles` as the provider client hands them to the matcher and the story index: each page of
 * {@link DELIVERY_PAGE_SIZE} is written as the simulator writes a response (`wireArticle`, ISO
 * times in {@link DELIVERY_TIME_ZONE}), serialized, parsed back and read through `mapPage`, as
 * functions/provider/news-client.ts reads a response. So the benches get what production gets:
 * text as the mapping cleans it (of what it removes, markup, entities and runs of whitespace, the
 * generator writes only the last), and strings as `JSON.parse` makes them. The generated ones are
 * not: `trim` leaves a sliced string and a template a cons string, which stay indirect after V8
 * flattens them. Measured in alternating runs of bench/story.ts, delivered articles cost 1.2–2.4 µs
 * less per article (same decisions); which of these differences accounts for it was not isolated.
 * Missing category names, media or status go on the wire as empty text, which the client reads
 * as absent; an article without an id comes back keyed by its url, as the client keys it.
 */
export function delivered(articles: readonly Article[]): Article[] {
  const out: Article[] = [];
  for (let from = 0; from < articles.length; from += DELIVERY_PAGE_SIZE) {
    const page = articles.slice(from, from + DELIVERY_PAGE_SIZE).map(
      (article): SimArticle => ({
        articleId: article.id ?? '',
        title: article.title,
        summary: article.summary,
        url: article.url,
        publishedAt: article.publishedAt,
        categories: article.categories.map((code, i) => ({ code, name: article.categoryNames[i] ?? '' })),
        media: { code: article.media ?? '', name: article.mediaName ?? '' },
        status: article.status ?? '',
      }),
    );
    const body = JSON.stringify({
      status: 'OK',
      totalCount: articles.length,
      articles: page.map((article) => wireArticle(article, 'iso', DELIVERY_TIME_ZONE)),
    });
    const mapped = mapPage(JSON.parse(body), defaultResponseMapping, DELIVERY_TIME_ZONE, { unreadablePage: 'report' });
    if (mapped.skipped.length > 0) {
      throw new Error(`synthetic articles the client would skip: ${JSON.stringify(mapped.skipped.slice(0, 3))}`);
    }
    out.push(...mapped.articles);
  }
  return out;
}

// --- Rules ------------------------------------------------------------------------------------

/**
 * Rule keywords are spread wider than article terms: people subscribe to specific names and
 * topics, not only to the most frequent words.
 */
const RULE_TERM_EXPONENT = 0.3;

function ruleKeyword(random: Random): string {
  const roll = random.next();
  if (roll < 0.72) {
    const term = random.zipf(englishTerms, RULE_TERM_EXPONENT, ARTICLE_TERM_OFFSET);
    return random.chance(0.2) ? term.toUpperCase() : term;
  }
  if (roll < 0.87) return random.zipf(koreanTerms, RULE_TERM_EXPONENT, ARTICLE_TERM_OFFSET);
  if (roll < 0.94) return random.zipf(japaneseTerms, RULE_TERM_EXPONENT, ARTICLE_TERM_OFFSET);
  return random.zipf(phrases, RULE_TERM_EXPONENT, 10);
}

const keywords = (random: Random, min: number, max: number) =>
  random.distinct(random.int(min, max), () => ruleKeyword(random));

const exactCategory = (random: Random) => random.zipf(articleCategories, 0.3).code;

function prefixCategory(random: Random): string {
  if (random.chance(0.2)) return `${random.pick(sectionCategories).code.slice(0, 3)}*`;
  return `${random.zipf(articleCategories, 0.6).code.slice(0, 6)}*`;
}

function nameCategory(random: Random): string {
  const category = random.zipf(articleCategories, 0.6);
  if (random.chance(0.5))
    return category.name.replace(/(^|> )(\w)/g, (_, edge: string, letter: string) => edge + letter.toUpperCase());
  const parts = category.name.split(' > ');
  return `${parts[0]} >*`;
}

const mediaTerms = (random: Random, max: number) =>
  random.distinct(random.int(1, max), () => {
    const outlet = random.zipf(media, 0.6);
    return random.chance(0.8) ? outlet.code : outlet.name;
  });

// --- Queries ----------------------------------------------------------------------------------

/** A query term: a rule keyword in small letters, so an `OR` or `NOT` never reads as an operator. */
function queryTerm(random: Random): string {
  const roll = random.next();
  if (roll < 0.7) return random.zipf(englishTerms, RULE_TERM_EXPONENT, ARTICLE_TERM_OFFSET).toLowerCase();
  if (roll < 0.88) return random.zipf(koreanTerms, RULE_TERM_EXPONENT, ARTICLE_TERM_OFFSET);
  return random.zipf(japaneseTerms, RULE_TERM_EXPONENT, ARTICLE_TERM_OFFSET);
}

const queryPhrase = (random: Random) => `"${random.zipf(phrases, RULE_TERM_EXPONENT, 10)}"`;

/** `semicond*`: an English term cut to at least five letters (shorter terms whole), then `*`. */
function queryPrefix(random: Random): string {
  const term = random.zipf(englishTerms, RULE_TERM_EXPONENT, ARTICLE_TERM_OFFSET).toLowerCase();
  return `${term.length <= 5 ? term : term.slice(0, Math.max(5, term.length - random.int(1, 3)))}*`;
}

const koreanTerm = (random: Random) => random.zipf(koreanTerms, RULE_TERM_EXPONENT, ARTICLE_TERM_OFFSET);

/**
 * A query as subscribers write them (the shares of the query rules):
 *
 * | share | form |
 * | --- | --- |
 * | 20% | two terms, `a b` or `a AND b` |
 * | 15% | a phrase, half of them excluding a term (`"interest rate" -mortgage`) |
 * | 15% | `(a OR b OR c) d` |
 * | 10% | `a -b` or `a NOT (b OR c)` |
 * | 12% | `a NEAR/n b`, n from 3 to 10 (characters for Japanese terms) |
 * | 10% | prefix terms: `pref*`, `pref* b`, `(pref* OR b) c` |
 * | 10% | field scopes: `title:a`, `title:"a b" OR summary:c`, `title:(a OR b) c` |
 * | 8% | Korean: `(가 OR 나) AND 다 -라` |
 */
function syntheticQuery(random: Random): string {
  const roll = random.next();
  const term = () => queryTerm(random);
  if (roll < 0.2) return `${term()}${random.chance(0.5) ? ' ' : ' AND '}${term()}`;
  if (roll < 0.35) return random.chance(0.5) ? queryPhrase(random) : `${queryPhrase(random)} -${term()}`;
  if (roll < 0.5) return `(${Array.from({ length: random.int(2, 3) }, term).join(' OR ')}) ${term()}`;
  if (roll < 0.6) return random.chance(0.5) ? `${term()} -${term()}` : `${term()} NOT (${term()} OR ${term()})`;
  if (roll < 0.72) return `${term()} NEAR/${random.int(3, 10)} ${term()}`;
  if (roll < 0.82) {
    const form = random.next();
    if (form < 0.3) return queryPrefix(random);
    if (form < 0.65) return `${queryPrefix(random)} ${term()}`;
    return `(${queryPrefix(random)} OR ${term()}) ${term()}`;
  }
  if (roll < 0.92) {
    const form = random.next();
    if (form < 0.35) return `title:${term()}`;
    if (form < 0.7) return `title:${queryPhrase(random)} OR summary:${term()}`;
    return `title:(${term()} OR ${term()}) ${term()}`;
  }
  return `(${koreanTerm(random)} OR ${koreanTerm(random)}) AND ${koreanTerm(random)} -${koreanTerm(random)}`;
}

/** Options of {@link syntheticRules}. */
export interface SyntheticRuleOptions {
  /**
   * Share of rules (0 to 1) that are query rules instead: a {@link syntheticQuery}, a quarter of
   * them also with an exact category or media. The other rules are exactly those drawn without
   * the option (the query draws use their own random stream), so a run can compare the two mixes
   * on the same keyword rules. Default 0.
   */
  readonly queryShare?: number;
}

/**
 * `count` enabled rules drawn with `seed`, for about `count / 4` audiences (Zipf-sized, so some
 * audiences have many overlapping rules; 5% urgent, half with a description). The mix:
 *
 * | share | criteria |
 * | --- | --- |
 * | 30% | 1-4 keywords (a quarter also exclude 1-2 keywords) |
 * | 22% | 1-2 exact category codes and 1-3 keywords |
 * | 3% | 1-2 exact category codes only (70% limited to media, 20% excluding keywords) |
 * | 7% | a category prefix (`002*` section or `002001*` topic) and keywords or media |
 * | 4% | a category name (`Economy > Finance`) or name prefix (`economy >*`) and keywords |
 * | 12% | 1-3 media (codes or names) and keywords or a category |
 * | 7% | statuses (`Corrected`/`withdrawn` or `UPDATED`) and a category or prefix |
 * | 7% | keywords, excluded categories, half limited to status `published` |
 * | 8% | 2-5 keywords, excluded keywords and a category prefix |
 * | 0.02%, at least one | `matchAll` excluding a category prefix (half also excluding keywords) |
 *
 * Keywords are 72% English (a fifth in capitals), 15% Korean, 7% Japanese, 6% two-word phrases,
 * spread flatter than in articles. With `options.queryShare`, that share of the rules (never the
 * matchAll ones) is query rules instead (see {@link SyntheticRuleOptions}).
 */
export function syntheticRules(count: number, seed: number, options: SyntheticRuleOptions = {}): Rule[] {
  const random = new Random(seed ^ 0x52a1e5);
  const queryRandom = new Random(seed ^ 0x9e3779b9);
  const queryShare = options.queryShare ?? 0;
  const audiences = Array.from(
    { length: Math.max(1, Math.ceil(count / 4)) },
    (_, i) => `aud-${String(i).padStart(5, '0')}`,
  );
  const audienceOrder = shuffled(audiences, random);
  return Array.from({ length: count }, (_, i): Rule => {
    const rule: Rule = {
      ruleId: `rule-${String(i).padStart(6, '0')}`,
      audienceId: random.zipf(audienceOrder, 0.8),
      enabled: true,
      urgent: random.chance(0.05),
      matchAll: false,
    };
    const roll = random.next();
    if (roll >= 0.9998 || i === count >> 1) {
      rule.matchAll = true;
      rule.excludeCategories = [prefixCategory(random)];
      if (random.chance(0.5)) rule.excludeKeywords = keywords(random, 1, 3);
    } else if (roll < 0.3) {
      rule.keywords = keywords(random, 1, 4);
      if (random.chance(0.25)) rule.excludeKeywords = keywords(random, 1, 2);
    } else if (roll < 0.52) {
      rule.categories = random.distinct(random.int(1, 2), () => exactCategory(random));
      rule.keywords = keywords(random, 1, 3);
    } else if (roll < 0.55) {
      rule.categories = random.distinct(random.int(1, 2), () => exactCategory(random));
      if (random.chance(0.7)) rule.media = mediaTerms(random, 3);
      if (random.chance(0.2)) rule.excludeKeywords = keywords(random, 1, 2);
    } else if (roll < 0.62) {
      rule.categories = [prefixCategory(random)];
      if (random.chance(0.7)) rule.keywords = keywords(random, 1, 3);
      else rule.media = mediaTerms(random, 2);
    } else if (roll < 0.66) {
      rule.categories = [nameCategory(random)];
      rule.keywords = keywords(random, 1, 3);
    } else if (roll < 0.78) {
      rule.media = mediaTerms(random, 3);
      if (random.chance(0.7)) rule.keywords = keywords(random, 1, 2);
      else rule.categories = [exactCategory(random)];
    } else if (roll < 0.85) {
      rule.statuses = random.chance(0.8) ? ['Corrected', 'withdrawn'] : ['UPDATED'];
      rule.categories = [random.chance(0.5) ? prefixCategory(random) : exactCategory(random)];
    } else if (roll < 0.92) {
      rule.keywords = keywords(random, 1, 3);
      rule.excludeCategories = random.distinct(random.int(1, 2), () =>
        random.chance(0.5) ? prefixCategory(random) : exactCategory(random),
      );
      if (random.chance(0.5)) rule.statuses = ['published'];
    } else {
      rule.keywords = keywords(random, 2, 5);
      rule.excludeKeywords = keywords(random, 1, 3);
      rule.categories = [prefixCategory(random)];
    }
    if (random.chance(0.5)) rule.description = `synthetic rule ${i} for ${rule.audienceId}`;
    if (queryShare > 0 && !rule.matchAll && queryRandom.chance(queryShare)) return queryRule(rule, queryRandom);
    return rule;
  });
}

/** `rule` with its criteria replaced by a query (and, for a quarter, an exact category or media). */
function queryRule(rule: Rule, random: Random): Rule {
  const { ruleId, audienceId, enabled, urgent, matchAll, description } = rule;
  const query: Rule = { ruleId, audienceId, enabled, urgent, matchAll, query: syntheticQuery(random) };
  if (description !== undefined) query.description = description;
  const extra = random.next();
  if (extra < 0.15) query.categories = [exactCategory(random)];
  else if (extra < 0.25) query.media = mediaTerms(random, 2);
  return query;
}
