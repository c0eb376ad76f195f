/**
 * Stories: which articles are copies of the same story (syndicated wire copies, prefixed or
 * rewritten headlines, shortened leads) across outlets and runs.
 *
 * Guarantees this module owns:
 * - **Determinism.** An article's fingerprint depends only on its title and summary: hashing is
 *   32-bit integer arithmetic (`Math.imul`) over UTF-16 code units of NFKC text, with fixed
 *   seeds, so every process and Node version computes the same signature and band keys (no
 *   `Math.random`, no object-key order, no locale-dependent step).
 * - **Idempotence.** {@link StoryResolver.assign} reads an article's filing before deciding: an
 *   article filed once keeps its story on every re-read, in any run, and assigning the same
 *   articles twice writes nothing the second time.
 * - **Precision before recall.** Two articles are the same story only when their signatures
 *   agree on at least {@link STORY_SIMILARITY} of their positions and the story is still inside
 *   its window; a wrongly collapsed story is a lost alert, a missed copy is one extra alert.
 * - **Bounded cost.** At most {@link MAX_TITLE_CHARS} of a title and {@link MAX_LEAD_CHARS} of a
 *   lead are read, so hostile text costs the same as a long headline; each call makes at most
 *   one round of each store read and one write.
 *
 * How a story is recognised. Title and lead are normalized (NFKC, lower case, wire prefixes such
 * as `[속보]`, `(종합)`, `【速報】`, `UPDATE 2-`, `BREAKING:` and trailing credits such as
 * ` - Reuters` removed, datelines and bylines removed from the lead, punctuation dropped). The
 * text becomes a sequence of units: each Hangul syllable, kana or Han character is a unit (these
 * scripts do not separate words reliably, and Korean spacing differs between outlets, so spaces
 * between them are ignored), and each run of other letters or digits is a unit (a word). The
 * shingles are the unit bigrams (a CJK character bigram, a Latin word bigram) plus, for Latin
 * words, the words themselves; title shingles count twice (a shortened lead must still match).
 * The set is summarised by one-permutation MinHash with optimal densification
 * ({@link SIGNATURE_SIZE} 32-bit values), and the signature is cut into {@link BANDS} LSH bands;
 * a story is a candidate when it shares {@link MIN_SHARED_BANDS} band keys, and a candidate is
 * confirmed by signature agreement. bench/story.ts measures precision and recall on bench/story-pairs.json.
 *
 * Why written here rather than taken from npm (checked November 2026): `minhash` (0.0.9) and
 * `minhashjs` hash whole caller-made tokens with k permutations (k hash evaluations per token,
 * several times slower than one-permutation hashing), do no CJK shingling, and are not
 * maintained; `minhash-node-rs` is a native addon, which the alert function's bundle must not
 * carry. The hashing has to be stable across releases anyway (signatures and band keys are
 * stored), which a dependency's upgrade could break silently.
 */
import type { Article } from './model.ts';
import {
  type Log,
  type StoredStory,
  type StoryAssignment,
  type StoryFiling,
  type StoryIndex,
  type StoryRecord,
  type StoryStore,
  silentLog,
} from './ports.ts';
import { normalizeTextKeepingApostrophes } from './text.ts';

/** How long a story accepts copies after the index first saw it (48 hours). */
export const STORY_WINDOW_MS = 48 * 60 * 60 * 1000;

/**
 * The id of the story an article starts: a 64-bit hash of its key as 16 hex digits, so the same
 * lead always makes the same story (a collision between two leads is a 1-in-10^19 event per pair;
 * at 10^6 stories a window, about 1 in 10^7). Not a cryptographic hash: article keys come from the
 * provider, not from anyone who could profit from two of them colliding, and SHA-256 cost two to
 * three times as much per new story (about 0.5 µs against 0.2).
 */
export function storyIdOf(leadArticleKey: string): string {
  // Two murmur3-style lanes with different seeds, each finalized with the other's state mixed
  // in, so the 64 bits do not split into two independent 32-bit hashes of the same input.
  let high = 0x9747b28c ^ leadArticleKey.length;
  let low = 0x3c6ef372 ^ Math.imul(leadArticleKey.length, 0x85ebca6b);
  for (let i = 0; i < leadArticleKey.length; i++) {
    const code = leadArticleKey.charCodeAt(i);
    high = Math.imul(rotate(high ^ Math.imul(code, 0xcc9e2d51), 13), 5) + 0xe6546b64;
    low = Math.imul(rotate(low ^ Math.imul(code, 0x1b873593), 15), 0x27d4eb2f) + 0x165667b1;
  }
  const a = mix(high ^ Math.imul(low, 0x9e3779b1));
  const b = mix(low ^ a);
  // One call spells all 16 digits: joining two 8-digit halves made a cons string (two objects,
  // flattened again by every Map and Set that hashes or compares the id).
  spellHex(a, 0);
  spellHex(b, 8);
  return String.fromCharCode.apply(null, idDigits);
}

/** The 16 character codes of the story id being spelled (reused: ids are spelled one at a time). */
const idDigits: number[] = new Array(16).fill(0);

/** Writes `value`'s 8 hex digits, most significant first, into {@link idDigits} from `at`. */
function spellHex(value: number, at: number): void {
  for (let i = 0; i < 8; i++) idDigits[at + i] = HEX[(value >>> (28 - 4 * i)) & 15] as number;
}

const rotate = (value: number, bits: number): number => (value << bits) | (value >>> (32 - bits));
const HEX = [...'0123456789abcdef'].map((char) => char.charCodeAt(0));

// --- Fingerprints -------------------------------------------------------------------------------

/** LSH bands a signature is cut into (each a band key the store files the story under). */
export const BANDS = 32;
/** Signature positions per band. */
export const ROWS_PER_BAND = 4;
/** MinHash signature length (32-bit values). */
export const SIGNATURE_SIZE = BANDS * ROWS_PER_BAND;
/**
 * Share of signature positions two articles must agree on to be the same story (an estimate of
 * the Jaccard similarity of their weighted shingle sets): the lowest threshold at which the
 * tuning half of bench/story-pairs.json reaches precision 0.98 (0.50 joined 7 hard negatives
 * there); bench/story.ts reports the held-out half, which played no part in the choice.
 */
export const STORY_SIMILARITY = 0.55;
/** Characters of a title read (raw, before normalization). */
export const MAX_TITLE_CHARS = 400;
/** Characters of a lead used for the fingerprint (after normalization and byline removal). */
export const MAX_LEAD_CHARS = 120;
/** Raw characters of a summary read before normalization (bylines come first). */
const MAX_RAW_SUMMARY_CHARS = 200;

/** An article's fingerprint: its signature and band keys ({@link fingerprint}). */
export interface StoryFingerprint {
  /** The headline's polarity ({@link POSITIVE} or {@link NEGATIVE}), then its and the lead's marks ({@link storyMarks}). */
  readonly marks: readonly string[];
  /** The headline's terms, with its subject tags' and credit's ({@link storyTerms}). */
  readonly terms: readonly string[];
  /** One-permutation MinHash, {@link SIGNATURE_SIZE} values; all 0xFFFFFFFF when the text has no shingle. */
  readonly signature: Uint32Array;
  /** {@link BANDS} short band keys (empty when the text has no shingle: it matches nothing). */
  readonly bands: readonly string[];
}

const EMPTY = 0xffffffff;

/** Wire tags at the start of a headline: `[속보]`, `<단독>`, `【速報】`, `(종합2보)`, `■`. */
const LEADING_TAGS =
  /^(?:\s*(?:\[[^\]]{0,20}\]|<[^>]{0,20}>|【[^】]{0,20}】|〈[^〉]{0,20}〉|\((?:종합|속보|단독|상보|\d+보|종합\d+보|update|corrected|refile)[^)]{0,10}\)|[■▶◆●★☆◇△▲※]))+/u;
/** Wire slugs at the start of a headline: `UPDATE 2-`, `BREAKING:`, `EXCLUSIVE-`, `速報:`. */
const LEADING_SLUGS =
  /^(?:\s*(?:update\s*\d*|breaking(?:\s+news)?|exclusive|urgent|flash|corrected|refile|analysis|factbox|explainer|速報|独自|속보|단독)\s*[-:–—|]\s*)+/u;
/** Tags at the end of a headline: `(종합)`, `[속보]`, `(2보)`, `(UPDATE)`. */
const TRAILING_TAGS =
  /(?:\s*(?:\((?:종합|속보|단독|상보|\d+보|종합\d+보|update|corrected)[^)]{0,10}\)|\[[^\]]{0,20}\]|【[^】]{0,20}】))+$/u;
/** A trailing credit: ` - Reuters`, ` | 연합뉴스`, ` – 日本経済新聞` (at most four words). */
const TRAILING_CREDIT = /\s+[-|–—]\s*[^\s\-|–—]+(?:\s[^\s\-|–—]+){0,3}$/u;
/**
 * Datelines and bylines at the start of a lead: `(서울=연합뉴스) 홍길동 기자 =`,
 * `SEOUL, Nov 23 (Reuters) -`, `【ワシントン=共同】`, `[이데일리 김철수 기자]`.
 */
const LEAD_BYLINES = [
  /^\s*\([^)]{0,40}\)\s*(?:[^\s=]{1,10}\s){0,3}[^\s=]{0,10}(?:기자|특파원)\s*=\s*/u,
  /^\s*\([^)]{0,40}=[^)]{0,40}\)\s*/u,
  /^\s*\[[^\]]{0,40}(?:기자|特派員|記者)\]\s*/u,
  /^\s*【[^】]{0,30}】\s*/u,
  /^[^()\n]{0,40}\([^()]{1,30}\)\s*[-–—:]\s*/u,
  /^\s*(?:[^\s=]{1,10}\s){0,3}[^\s=]{0,10}(?:기자|특파원)\s*=\s*/u,
];

/**
 * The wire-tag and byline patterns, exported for the tests only: they check that the cheap
 * prechecks of {@link storyTitle} and {@link storyLead} never skip a pattern that would match.
 * @internal
 */
export const WIRE_PATTERNS = {
  leadingTags: LEADING_TAGS,
  leadingSlugs: LEADING_SLUGS,
  trailingTags: TRAILING_TAGS,
  trailingCredit: TRAILING_CREDIT,
  leadBylines: LEAD_BYLINES,
} as const;

/**
 * Whether a regex can match, tested first: most headlines carry no wire tag and most leads no
 * byline, and these checks (a character or two, or one native `includes`) cost a fraction of a
 * regex run. Each is a necessary condition of its regex on {@link normalizeTextKeepingApostrophes}
 * output, where the only whitespace left is a plain space.
 */
const startsAfterSpaces = (text: string, chars: string): boolean => {
  let i = 0;
  while (text.charCodeAt(i) === 0x20) i++;
  return i < text.length && chars.includes(text.charAt(i));
};
const TAG_OPENERS = '[<【〈(■▶◆●★☆◇△▲※';
/** First letters of the slugs of {@link LEADING_SLUGS}. */
const SLUG_INITIALS = 'uberfca速独속단';
const endsWithTag = (text: string): boolean => {
  let i = text.length - 1;
  while (i >= 0 && text.charCodeAt(i) === 0x20) i--;
  const last = text.charCodeAt(i);
  return last === 0x29 || last === 0x5d || last === 0x3011; // ) ] 】
};
const hasSpacedDash = (text: string): boolean =>
  text.includes(' -') || text.includes(' |') || text.includes(' –') || text.includes(' —');
/** {@link LEAD_BYLINES}, each with its necessary condition. */
const LEAD_BYLINE_CHECKS: readonly ((text: string) => boolean)[] = [
  (text) => startsAfterSpaces(text, '('),
  (text) => startsAfterSpaces(text, '('),
  (text) => startsAfterSpaces(text, '['),
  (text) => startsAfterSpaces(text, '【'),
  (text) => {
    // {0,40} counts code points: 40 of them can be 80 UTF-16 units.
    const paren = text.indexOf('(');
    return paren >= 0 && paren <= 80;
  },
  (text) => text.includes('기자') || text.includes('특파원'),
];

/**
 * Bracketed tags that say nothing about which story it is (outlets add, drop and swap them):
 * edition marks, formats and newspaper sections, `[속보]`, `[포토]`, `[경제]`, `【速報】`,
 * `[UPDATE 2]`. Any other tag (`[부산]`, `【大阪】`, `[Ohio]`) names what the story is about: it is
 * left out of the shingles like these (a copy may drop it) but kept in the terms, so
 * `[부산] 아파트 화재` and `[인천] 아파트 화재` stay two stories ({@link splitHeadline}).
 */
const GENERIC_TAG = new RegExp(
  `^(?:${[
    // Korean: edition, format, section.
    '속보|단독|종합|상보|\\d*보|종합\\d*보?|긴급|특보|업데이트|정정|수정|포토|사진|영상|동영상|그래픽|인포그래픽',
    '카드뉴스|인터뷰|사설|칼럼|시론|기고|오피니언|만평|특징주|마감시황|시황|공시|르포|분석|해설|현장|전문|팩트체크',
    '이슈|뉴스|브리핑|리포트|라이브|기자수첩|부고|인사|알림|게시판|날씨|경제|정치|사회|국제|산업|금융|증권',
    '부동산|it|스포츠|연예|문화|생활|과학|건강|여행',
    // Japanese and Chinese.
    '速報|独自|号外|写真|動画|社説|解説|詳報|更新|続報|特報|緊急|訂正|追記|図解|寄稿|視点|経済|政治|国際|社会',
    '快讯|快訊|独家|獨家|视频|視頻|组图|組圖|图集|突发|突發|最新|滚动|直播|评论|社论|新闻',
    // English.
    'update\\s*\\d*|updated|breaking(?:\\s+news)?|exclusive|urgent|flash|corrected|correction|refile|analysis',
    'factbox|explainer|live|video|photos?|watch|listen|podcast|opinion|editorial|column|comment|review',
    'interview|sponsored|advertorial|news|brief|graphics?|gallery|poll|premium|paid|world|business|markets',
    'tech|sports|politics|\\d*',
  ].join('|')})$`,
  'u',
);
/**
 * Format words inside a longer tag (`[MT리포트]`, `[이슈분석]`, `[자막뉴스]`, `[뉴스UP]`, `[종합 2보]`,
 * `[속보2]`, `[LIVE UPDATES]`, `【中継】`, `【映像】`): such a tag is an outlet's branded format, as
 * generic as {@link GENERIC_TAG}.
 */
const FORMAT_WORDS =
  /속보|단독|종합|\d\s*보|리포트|분석|뉴스|포토|사진|영상|자막|인터뷰|칼럼|브리핑|이슈|르포|현장|중계|速報|独自|中継|映像|動画|写真|解説|快讯|独家|视频|直播|\b(?:live|update[sd]?|developing|breaking|video|photos?|watch|exclusive|analysis|opinion)\b/gu;
/** What is left of a tag without its format words, digits, spaces and punctuation. */
const NOT_CONTENT = /[\s\d\p{P}\p{S}]/gu;
/**
 * Whether a tag's text says nothing about which story it is: a generic tag, or format words with
 * at most a short Latin brand left (`[MT리포트]`, `[뉴스UP]`); a place or a subject beside a format
 * word (`[부산 현장]`) names the story.
 */
function isGenericTag(text: string): boolean {
  if (GENERIC_TAG.test(text)) return true;
  const rest = text.replace(FORMAT_WORDS, '').replace(NOT_CONTENT, '');
  return rest !== text.replace(NOT_CONTENT, '') && /^[a-z]{0,3}$/u.test(rest);
}

/** One bracketed tag of a run {@link LEADING_TAGS} or {@link TRAILING_TAGS} removed (its text in a group). */
const ONE_TAG = /\[([^\]]{0,20})\]|<([^>]{0,20})>|【([^】]{0,20})】|〈([^〉]{0,20})〉/gu;

/** The text of the tags in `removed` that are not generic ({@link isGenericTag}), space-separated. */
function subjectTags(removed: string): string {
  let kept = '';
  for (const match of removed.matchAll(ONE_TAG)) {
    const text = (match[1] ?? match[2] ?? match[3] ?? match[4] ?? '').trim();
    if (text !== '' && !isGenericTag(text)) kept = `${kept} ${text}`;
  }
  return kept;
}

/** Words outlets' names share ("The Korea Times", "Korea Herald", "연합뉴스", "毎日新聞"). */
const OUTLET_WORDS =
  /(?:^|\s)(?:the|a|an|of|and|&|news|times|post|daily|journal|herald|press|tribune|online|tv|media|network|wire|agency)(?=\s|$)|뉴스|일보|신문|방송|新聞|通信|新闻|日报|日報/gu;

/**
 * What a trailing credit or tag says about the story: nothing when it reads as an outlet's name
 * (at most two words once the words outlets' names share are dropped: "Reuters", "The Associated
 * Press", "연합뉴스", "The New York Times"), else its text ("profit beats estimates"). The text
 * alone cannot tell a two-word clause from a name: " - profit beats" and " - profit misses"
 * are taken for two outlets' credits.
 */
function creditClause(credit: string): string {
  // A TV network's station ("NBC New York", "FOX 5 New York", "ABC7 Los Angeles") is a name.
  if (NETWORK_STATION.test(credit)) return '';
  const words = credit.replace(OUTLET_WORDS, ' ').trim();
  let spaces = 0;
  for (let i = 0; i < words.length; i++) if (words.charCodeAt(i) === 0x20 && words.charCodeAt(i - 1) !== 0x20) spaces++;
  return spaces < 2 ? '' : words;
}

/** A credit that starts with a TV network's name, a station of it. */
const NETWORK_STATION =
  /^\s*(?:nbc|cbs|abc|fox|cnn|pbs|npr|cw|wgn|telemundo|univision|kbs|mbc|sbs|jtbc|ytn|nhk|tbs)\d*\b/u;

/** A figure in a credit: a percentage or a decimal (` - up 10%`, ` - 3.5% 동결`), never an outlet's number. */
const CREDIT_FIGURE = /\d+(?:[.,]\d+)*(?=\s*[%％])|\d+\.\d+/gu;

/**
 * A headline cut into what the shingles read and what only the conflict checks read
 * ({@link fingerprint}).
 */
interface HeadlineParts {
  /** The cleaned title ({@link storyTitle}): what is shingled. */
  readonly text: string;
  /** Leading tags that name the subject (`[부산]`), space-separated; '' when none. */
  readonly tags: string;
  /**
   * What a trailing credit or trailing tag removed when it reads as the end of the headline
   * rather than an outlet's name (` - profit beats estimates`, not ` - Reuters` or `[머니투데이]`:
   * {@link creditClause}); '' otherwise.
   */
  readonly credit: string;
  /** The whole trailing credit as removed, for its polarity and figures; '' when none. */
  readonly rawCredit: string;
}

/** The cleaned title of an article: normalized, wire tags, slugs and trailing credits removed. */
export function storyTitle(title: string): string {
  return splitHeadline(title).text;
}

/** {@link storyTitle}, keeping what it removed that may tell two stories apart. */
function splitHeadline(title: string): HeadlineParts {
  let text = normalizeTextKeepingApostrophes(title.slice(0, MAX_TITLE_CHARS));
  let tags = '';
  let credit = '';
  let rawCredit = '';
  for (let pass = 0; pass < 2; pass++) {
    const before = text;
    if (startsAfterSpaces(text, TAG_OPENERS)) {
      const removed = LEADING_TAGS.exec(text)?.[0] ?? '';
      if (removed !== '') {
        tags += subjectTags(removed);
        text = text.slice(removed.length);
      }
    }
    if (startsAfterSpaces(text, SLUG_INITIALS)) text = text.replace(LEADING_SLUGS, '');
    if (endsWithTag(text)) {
      const withoutTags = text.replace(TRAILING_TAGS, '');
      // At the end, a tag is as often an outlet's name as a place: read like a credit.
      if (withoutTags !== text)
        credit = `${credit} ${creditClause(subjectTags(text.slice(withoutTags.length)))}`.trim();
      text = withoutTags;
    }
    // Nothing removed: the second pass would remove nothing either.
    if (text === before) break;
    text = text.trim();
  }
  if (hasSpacedDash(text)) {
    const withoutCredit = text.replace(TRAILING_CREDIT, '');
    // A "credit" that leaves little of the headline is part of it ("Samsung - the comeback").
    if (withoutCredit.length >= 10) {
      // The dash is punctuation: the walk reads it as a separator.
      rawCredit = text.slice(withoutCredit.length).replace(/^\s*[-|–—]/u, '');
      credit = `${creditClause(rawCredit)} ${credit}`.trim();
      text = withoutCredit;
    }
  }
  return { text, tags, credit, rawCredit };
}

/** The cleaned lead of an article: normalized, datelines and bylines removed, cut to {@link MAX_LEAD_CHARS}. */
export function storyLead(summary: string): string {
  let text = normalizeTextKeepingApostrophes(summary.slice(0, MAX_RAW_SUMMARY_CHARS));
  for (let i = 0; i < LEAD_BYLINES.length; i++) {
    if ((LEAD_BYLINE_CHECKS[i] as (text: string) => boolean)(text)) text = text.replace(LEAD_BYLINES[i] as RegExp, '');
  }
  return text.slice(0, MAX_LEAD_CHARS);
}

/** 0: unknown, 1: separator, 2: word character (Latin, digits, other alphabets), 3: CJK unit. */
const unitClass = new Uint8Array(0x10000);
for (let code = 0; code < 0x80; code++) {
  const word = (code >= 0x30 && code <= 0x39) || (code >= 0x61 && code <= 0x7a) || (code >= 0x41 && code <= 0x5a);
  unitClass[code] = word ? 2 : 1;
}
const LETTER_OR_NUMBER = /^[\p{L}\p{N}]$/u;
const CJK = /^[\p{Script=Hangul}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Han}]$/u;

function classOf(code: number): number {
  let found = unitClass[code] ?? 1;
  if (found === 0) {
    const char = String.fromCharCode(code);
    // Surrogates (emoji, rare Han) are separators: a unit must be one code unit to stay cheap.
    found = code >= 0xd800 && code <= 0xdfff ? 1 : CJK.test(char) ? 3 : LETTER_OR_NUMBER.test(char) ? 2 : 1;
    unitClass[code] = found;
  }
  return found;
}

/** The murmur3 finalizer: spreads a 32-bit value over all bits. */
function mix(value: number): number {
  let h = value;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;
/** Salts of the shingle kinds, so a word and a bigram (or a title and a lead shingle) differ. */
const SALT_WORD = 0x2c1b3c6d;
const SALT_PAIR = 0x297a2d39;
const SALT_TITLE_COPY = 0x68e31da4;

// One-permutation hashing picks a bin from a hash's top bits, so the signature size must be a
// power of two; a retune of BANDS x ROWS_PER_BAND that breaks this would silently drop bins.
if (!Number.isInteger(Math.log2(SIGNATURE_SIZE)))
  throw new RangeError(`SIGNATURE_SIZE ${SIGNATURE_SIZE} is not a power of two`);
const BIN_SHIFT = 32 - Math.log2(SIGNATURE_SIZE);
/**
 * Scratch state of the fingerprint being computed, reused by every fingerprint (the module is
 * single-threaded and {@link fingerprint} never yields): each bin's smallest value, and a bit per
 * bin set when it has one (bin b is bit b & 31 of word b >>> 5), so densification finds the
 * empty bins a word at a time. Shingles go straight into their bins as they are hashed, so no
 * shingle list is built (a minimum does not depend on the order).
 */
const scratchLow = new Uint32Array(SIGNATURE_SIZE);
const scratchFilled = new Int32Array(SIGNATURE_SIZE >>> 5);

/** One-permutation hashing: the top bits choose a bin, each bin keeps its smallest hash. */
function addShingle(hash: number): void {
  const bin = hash >>> BIN_SHIFT;
  const value = mix(hash ^ 0x1b873593);
  const word = bin >>> 5;
  const filled = scratchFilled[word] as number;
  const bit = 1 << bin;
  if ((filled & bit) === 0 || value < (scratchLow[bin] as number)) {
    scratchLow[bin] = value;
    scratchFilled[word] = filled | bit;
  }
}

/**
 * Adds the shingles a unit makes: the word itself (words only) and the bigram with the unit
 * before (when there is one); headline units count twice. Returns how many it added.
 */
function addUnit(unit: number, isWord: boolean, title: boolean, previous: number, hasPrevious: boolean): number {
  let added = 0;
  if (isWord) {
    addShingle(mix(unit ^ SALT_WORD));
    if (title) addShingle(mix(unit ^ SALT_WORD ^ SALT_TITLE_COPY));
    added += title ? 2 : 1;
  }
  if (hasPrevious) {
    const pair = mix(Math.imul(previous, 0x9e3779b1) ^ unit ^ SALT_PAIR);
    addShingle(pair);
    if (title) addShingle(mix(pair ^ SALT_TITLE_COPY));
    added += title ? 2 : 1;
  }
  return added;
}

/** The headline's units, in order, for its terms ({@link storyTerms}); bounded like the headline. */
const MAX_TITLE_UNITS = MAX_TITLE_CHARS;
const titleUnits = new Uint32Array(MAX_TITLE_UNITS);
/** How many of {@link titleUnits} the last headline (and its tags and credit) filled. */
let titleUnitCount = 0;

/** What {@link shingle} does with a text: shingles of a lead, shingles and units of a headline, units only. */
const LEAD = 0;
const TITLE = 1;
const UNITS_ONLY = 2;

/**
 * Adds the shingles of one cleaned text to the scratch bins and returns how many it added; a
 * headline's (`TITLE`) count twice and its units are kept in {@link titleUnits} from the start;
 * `UNITS_ONLY` (a headline's subject tags and credit) appends its units after those and adds no
 * shingle. The walk keeps its state in locals and its helpers take numbers only, so the compiler
 * inlines them: with the previous unit and the count in module variables, and a unit list in a
 * plain array, this loop was a fifth of the fingerprint.
 */
function shingle(text: string, mode: number): number {
  const title = mode === TITLE;
  const keepUnits = mode !== LEAD;
  const addShingles = mode !== UNITS_ONLY;
  let added = 0;
  let units = mode === UNITS_ONLY ? titleUnitCount : 0;
  let previous = 0;
  let hasPrevious = false;
  let word = FNV_OFFSET;
  let inWord = false;
  const length = text.length;
  // One step past the end, read as a space, closes a last word.
  for (let i = 0; i <= length; i++) {
    const code = i < length ? text.charCodeAt(i) : 0x20;
    const kind = classOf(code);
    if (kind === 2) {
      word = Math.imul(word ^ code, FNV_PRIME);
      inWord = true;
      continue;
    }
    if (inWord) {
      const unit = mix(word);
      if (addShingles) added += addUnit(unit, true, title, previous, hasPrevious);
      if (keepUnits && units < MAX_TITLE_UNITS) titleUnits[units++] = unit;
      previous = unit;
      hasPrevious = true;
      word = FNV_OFFSET;
      inWord = false;
    }
    // CJK characters are units of their own; spaces between them are ignored.
    if (kind === 3) {
      const unit = mix(code ^ 0x5bd1e995);
      if (addShingles) added += addUnit(unit, false, title, previous, hasPrevious);
      if (keepUnits && units < MAX_TITLE_UNITS) titleUnits[units++] = unit;
      previous = unit;
      hasPrevious = true;
    }
  }
  if (keepUnits) titleUnitCount = units;
  return added;
}

/**
 * The fingerprint of a title and lead (an article's `title` and `summary`): see the module
 * header. Never throws; costs at most {@link MAX_TITLE_CHARS} + a few hundred characters of work.
 */
export function fingerprint(title: string, summary: string): StoryFingerprint {
  return fingerprintInto(title, summary, scratchBandHashes, 0);
}

/**
 * {@link fingerprint}, also writing its {@link BANDS} band hashes to `bandHashes` from `offset`
 * (left as they were when the text has no shingle).
 */
function fingerprintInto(title: string, summary: string, bandHashes: Int32Array, offset: number): StoryFingerprint {
  scratchFilled.fill(0);
  const headline = splitHeadline(title);
  const cleaned = headline.text;
  const lead = storyLead(summary);
  const shingles = shingle(cleaned, TITLE) + shingle(lead, LEAD);
  // Subject tags' and a credit's terms are kept apart from the headline's ({@link termsConflict});
  // the tags' first, so that a long headline cannot crowd them out.
  const headlineUnits = titleUnitCount;
  const terms: string[] = [];
  if (headline.tags !== '') {
    shingle(headline.tags, UNITS_ONLY);
    for (const term of termsOf(titleUnits, headlineUnits, titleUnitCount, MAX_TAG_TERMS, TAG_TERM)) terms.push(term);
  }
  for (const term of termsOf(titleUnits, 0, headlineUnits, MAX_TERMS, '')) terms.push(term);
  if (headline.credit !== '') {
    titleUnitCount = headlineUnits;
    shingle(headline.credit, UNITS_ONLY);
    for (const term of termsOf(titleUnits, headlineUnits, titleUnitCount, MAX_CREDIT_TERMS, CREDIT_TERM))
      terms.push(term);
  }
  // The headline's polarity first (a credit's denial counts: " - Apple denies", " - not in
  // talks", not an outlet's name that holds 無 or No), then its figures
  // (a credit's percentages and decimals too: " - up 10%") and the lead's: the same headline two
  // days running ("Markets cheer as inflation eases") is two stories when one says "highest in 40
  // months" and the other "in 2 months".
  const polarity = negated(cleaned) || negated(headline.tags) || CREDIT_DENIAL.test(headline.rawCredit);
  const marks: string[] = [polarity ? NEGATIVE : POSITIVE];
  addMarks(cleaned, marks);
  addMarks(headline.tags, marks);
  if (headline.rawCredit !== '') addMarks(headline.rawCredit, marks, CREDIT_FIGURE);
  addMarks(lead, marks);
  const signature = signatureOfScratch(shingles);
  if (shingles === 0) return { marks, terms, signature, bands: [] };
  hashBands(signature, bandHashes, offset);
  return { marks, terms, signature, bands: spellBands(bandHashes, offset) };
}

/**
 * Terms a fingerprint keeps of a headline and its subject tags: bounded whatever the headline,
 * and enough for a long one (a Korean or Japanese headline of 60 characters has about 50
 * distinct ones; two that differ only after the 64th are taken for one story).
 */
const MAX_TERMS = 64;
/** Terms a fingerprint keeps of a headline's trailing credit (at most four words). */
const MAX_CREDIT_TERMS = 8;
/** Terms a fingerprint keeps of a headline's subject tags (`[부산]`, `【大阪】`). */
const MAX_TAG_TERMS = 8;
/** The prefixes of a credit's and a tag's terms: characters term spellings never hold ({@link KEY_CHARS}). */
const CREDIT_TERM = '~';
const TAG_TERM = '^';
/** Terms the store keeps of a story: what a fingerprint holds. */
export const MAX_STORED_TERMS = MAX_TAG_TERMS + MAX_TERMS + MAX_CREDIT_TERMS;

/**
 * The terms of a headline: each word of a script with word boundaries, and each Korean, Japanese
 * or Chinese character (spacing and particles differ between outlets; names do not), as the
 * shingling walks them ({@link fingerprint} keeps them; this is its `terms`). A subject tag's
 * (`[부산]`) are spelled with {@link TAG_TERM} first, a trailing credit's with {@link CREDIT_TERM}.
 */
export const storyTerms = (title: string): readonly string[] => fingerprint(title, '').terms;

/** The distinct units of a headline, at most {@link MAX_TERMS} (scratch, reused by every fingerprint). */
const termUnits = new Uint32Array(MAX_TERMS);

/**
 * Distinct unit hashes of `units[from..to)`, at most `max`, each spelled as `prefix` and six
 * URL-safe characters (36 bits, so distinct units stay distinct): deterministic like the
 * signature. Duplicates are found on the numbers, and `String.fromCharCode` spells them, because
 * `toString(36)` per unit was a fifth of the fingerprint's cost.
 */
function termsOf(units: Uint32Array, from: number, to: number, max: number, prefix: string): string[] {
  let count = 0;
  for (let i = from; i < to && count < max; i++) {
    const unit = units[i] as number;
    let seen = false;
    for (let j = 0; j < count; j++) {
      if (termUnits[j] === unit) {
        seen = true;
        break;
      }
    }
    if (!seen) termUnits[count++] = unit;
  }
  const terms: string[] = new Array(count);
  const chars = KEY_CHARS;
  for (let i = 0; i < count; i++) {
    const unit = termUnits[i] as number;
    const spelled = String.fromCharCode(
      chars[unit & 63] as number,
      chars[(unit >>> 6) & 63] as number,
      chars[(unit >>> 12) & 63] as number,
      chars[(unit >>> 18) & 63] as number,
      chars[(unit >>> 24) & 63] as number,
      chars[unit >>> 30] as number,
    );
    terms[i] = prefix === '' ? spelled : `${prefix}${spelled}`;
  }
  return terms;
}

/**
 * Whether an article and a story disagree on what happened though their text is alike: a figure
 * or date ({@link marksConflict}) or the subject ({@link termsConflict}). The resolver checks it on
 * every candidate above the similarity threshold; the bench's threshold sweep uses it too.
 */
export const disagree = (
  print: Pick<StoryFingerprint, 'marks' | 'terms'>,
  story: Pick<StoredStory, 'marks' | 'terms'>,
): boolean => marksConflict(print.marks, story.marks) || termsConflict(print.terms, story.terms);

/**
 * Whether two headlines' terms say "different stories": each has a term the other lacks. A copy
 * adds or drops words on one side only (a prefix left in, "Q3" left out, a subject tag) and
 * reorders freely; a different subject in the same template ("Incheon Waves clinch pennant" and
 * "Seoul Tigers clinch pennant", "[부산] 아파트 화재" and "[인천] 아파트 화재", "visit Germany" and
 * "visit Brazil") swaps words on both sides. Shingle similarity alone cannot tell these apart when
 * the lead is empty or templated. A rewrite that changes words on both sides is kept apart too:
 * precision before recall (one extra alert, never a lost one); bench/story.ts measures the recall
 * this costs on the evaluation set.
 *
 * Subject tags ({@link TAG_TERM} terms) are compared apart: `[부산]` and `[인천]` differ even
 * when the headline holds 부 and 산 (정부 예산), and a copy without a tag never conflicts.
 * Trailing credits ({@link CREDIT_TERM} terms) are compared apart too, and only when they share
 * two terms: local stations of one network (" - FOX 13 Tampa Bay", " - FOX 35 Orlando") share one
 * and say nothing, while the end of a headline that looked like a credit (" - profit beats
 * estimates", " - profit misses estimates") shares words and swaps others. No terms stored
 * (stories from before they existed): no conflict.
 */
export function termsConflict(a: readonly string[], b: readonly string[] | undefined): boolean {
  if (b === undefined || a.length === 0 || b.length === 0) return false;
  return (
    swapsTerms(a, b, HEADLINE_KIND) ||
    swapsTerms(a, b, TAG_KIND) ||
    (sharedTerms(a, b, CREDIT_KIND) >= 2 && swapsTerms(a, b, CREDIT_KIND))
  );
}

const HEADLINE_KIND = 0;
const TAG_KIND = 1;
const CREDIT_KIND = 2;
/** Which part of a headline a term comes from, by its prefix. */
function kindOf(term: string): number {
  const first = term.charCodeAt(0);
  return first === 0x5e ? TAG_KIND : first === 0x7e ? CREDIT_KIND : HEADLINE_KIND; // ^ ~
}

/** Whether each of `a` and `b` has a term of the kind the other lacks. */
function swapsTerms(a: readonly string[], b: readonly string[], kind: number): boolean {
  const lacks = (from: readonly string[], other: readonly string[]) =>
    from.some((term) => kindOf(term) === kind && !other.includes(term));
  return lacks(a, b) && lacks(b, a);
}

/** How many terms of the kind `a` and `b` share. */
const sharedTerms = (a: readonly string[], b: readonly string[], kind: number): number =>
  a.filter((term) => kindOf(term) === kind && b.includes(term)).length;

/**
 * The polarity marks, one of which leads every fingerprint's marks: "Apple in talks to buy X"
 * and "Apple not in talks to buy X", "출마 선언" and "불출마 선언" differ in one word, which the
 * terms cannot see (one side adds it, the other drops nothing), so {@link marksConflict} keeps
 * apart a positive and a negative headline.
 */
const POSITIVE = '+';
const NEGATIVE = '¬';
/**
 * Words and characters that turn a headline into its denial: English negations, denials and
 * refusals; Korean negative prefixes and endings (불출마, 안 한다, 않다, 없다, 못, 아니다), denial
 * and refusal words (부인, 사실무근, 일축, 무산, 포기, 철회, 거부); Japanese and Chinese negation
 * characters and endings (不, 未, 無, 非, 否, 没, ない, ません, ず), refusals (見送り, 断念, 拒绝,
 * 放弃). Left out where they negate nothing: common compounds (不動産, 不明, 不正, 不足, 未来, 未明,
 * 未成年, 非常, 無人, 無料, 淹没, 没收, 잘못, 연못, 없이, 없애, 아니라, 불가피, 불가리아) and
 * "No. 2", "no-confidence". A headline with one of these that its copy lacks costs one extra
 * alert, at worst.
 */
const NEGATION = new RegExp(
  [
    String.raw`\b(?:not|never|nor|neither|none|nobody|nothing|deny|denies|denied|denial|refutes?|refuted|refuses?|refused|declines? to(?! comment)|declined to(?! comment)|unlikely|unfounded|false|cannot|rejects?|rejected|rules? out|ruled out|fails? to|failed to)\b`,
    String.raw`\bno\b(?!\.?\s*\d|-)`,
    String.raw`n['’]t\b`,
    '불(?:출마|참|허|발|인정|가(?!피|리아)|복|승인|기소|합격|수용|응)',
    // Not 부인 alone: "대통령 부인" is the president's wife.
    '부인(?:했|하|해|…|$)',
    '사실무근|일축|무산|포기|철회|거부|않|없(?!이|애)|(?<![잘연])못|아니(?!라)|아냐',
    '(?<![가-힣])안 (?:한|해|할|하|돼|된|됐)',
    '不(?!動産|动产|明|正|足)|未(?!来|來|明|成年)|非(?!常)|無(?!人|料)|无(?!人)|否|(?<!淹)没(?!收)|沒(?!收)|勿',
    String.raw`ない|ません|せず|ず(?=$|\s|\p{P}|[=＝])|見送|断念|拒绝|拒絕|放弃|放棄`,
  ].join('|'),
  'u',
);

/**
 * A denial in a trailing credit (" - Apple denies", " - not in talks"): only whole denial words,
 * as outlets' names hold negation characters and words (無綫新聞, 非凡新聞, No Film School).
 */
const CREDIT_DENIAL =
  /\b(?:denies|denied|deny|not|never|refutes?|refuted|rejects?|rejected|refuses?|refused|false|unfounded)\b|n['’]t\b|부인|사실무근|일축|否定|否認|否认/u;

/** Whether normalized text negates or denies ({@link NEGATION}). */
const negated = (text: string): boolean => text !== '' && NEGATION.test(text);

/** Marks a fingerprint keeps, and their length: bounded, whatever the headline. */
const MAX_MARKS = 16;
const MAX_MARK_CHARS = 16;
/**
 * Numbers (thousands separators dropped: `1,000` = `1000`) and English month and weekday names
 * (`may` left out: it is mostly the verb). Korean, Japanese and Chinese dates are digits already.
 */
const MARK_PATTERN =
  /\d+(?:[.,]\d+)*|\b(?:january|february|march|april|june|july|august|september|october|november|december|monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b/gu;

/**
 * The marks of cleaned text ({@link fingerprint} passes the headline and the lead): the tokens
 * that tell two otherwise identical stories apart as different events — "exports hit record high
 * in January" and "…in July", "KOSPI closes up 1.2%" and "…down 0.5%", "日本代表 7-0" and "5-0".
 * Shingle similarity
 * cannot see them (one token among many), so {@link marksConflict} is checked on top of it.
 */
export function storyMarks(cleanedText: string): string[] {
  const marks: string[] = [];
  addMarks(cleanedText, marks);
  return marks;
}

/** Thousands separators inside a number (`1,000`). */
const THOUSANDS_SEPARATOR = /,(?=\d{3}\b)/gu;

/**
 * Adds the marks of `text` to `marks`, up to {@link MAX_MARKS}. The fingerprint calls it on the
 * headline, then the lead: what `storyMarks` of the two joined by a space gives (no mark spans
 * the space), without the joined string. An `exec` loop rather than `matchAll`, and the
 * separator `replace` only on a mark with a comma: together about 0.4 µs of 1.1 per article.
 * The marks are a plain array searched with `includes` (at most {@link MAX_MARKS}, usually one
 * or two), in first-met order as a `Set` would keep them, without the `Set` and its copy.
 */
function addMarks(text: string, marks: string[], pattern: RegExp = MARK_PATTERN): void {
  pattern.lastIndex = 0;
  for (let match = pattern.exec(text); match !== null && marks.length < MAX_MARKS; match = pattern.exec(text)) {
    const found = match[0];
    const mark = (found.includes(',') ? found.replace(THOUSANDS_SEPARATOR, '') : found).slice(0, MAX_MARK_CHARS);
    if (!marks.includes(mark)) marks.push(mark);
  }
  pattern.lastIndex = 0;
}

/**
 * Whether two headlines' marks say "different events": each has a mark the other lacks. A copy
 * that drops a number ("Samsung profit up" for "Samsung Q3 profit up 10%") does not conflict; an
 * updated figure ("kills 12" → "kills 15") does, and costs one extra alert rather than a lost one.
 * Opposite polarity marks ({@link POSITIVE}, {@link NEGATIVE}) conflict on their own. No marks
 * stored (stories from before marks existed): no conflict.
 */
export function marksConflict(a: readonly string[], b: readonly string[] | undefined): boolean {
  if (b === undefined || a.length === 0 || b.length === 0) return false;
  const polarity = a[0];
  const otherPolarity = b[0];
  if (isPolarity(polarity) && isPolarity(otherPolarity) && polarity !== otherPolarity) return true;
  const lacks = (from: readonly string[], other: readonly string[]) =>
    from.some((mark) => !isPolarity(mark) && !other.includes(mark));
  return lacks(a, b) && lacks(b, a);
}

const isPolarity = (mark: string | undefined): boolean => mark === POSITIVE || mark === NEGATIVE;

/** URL-safe characters band keys are spelled with, six bits each. */
const KEY_CHARS = [...'0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ-_'].map((char) =>
  char.charCodeAt(0),
);

/**
 * Densification donors: the bin an empty bin tries at each attempt depends only on (bin,
 * attempt), so the first {@link DONOR_ATTEMPTS} tries of every bin are computed once here rather
 * than hashed per article (an article of 40 shingles leaves about 90 of 128 bins empty, each
 * trying about four donors).
 */
const DONOR_ATTEMPTS = 32;
const donorOf = (bin: number, attempt: number): number => mix(Math.imul(bin + 1, 0x9e3779b1) ^ attempt) >>> BIN_SHIFT;
const DONORS = new Uint8Array(SIGNATURE_SIZE * DONOR_ATTEMPTS);
for (let bin = 0; bin < SIGNATURE_SIZE; bin++)
  for (let attempt = 1; attempt <= DONOR_ATTEMPTS; attempt++)
    DONORS[bin * DONOR_ATTEMPTS + attempt - 1] = donorOf(bin, attempt);

/**
 * Signatures are cut from shared 32 KiB buffers: a 512-byte typed array of its own is a separate
 * allocation outside the heap (and work for the collector's array-buffer sweep), which cost about
 * a microsecond per fingerprint; a view of a shared buffer costs a fifth of that. A kept signature
 * keeps its buffer alive, at most 32 KiB, and the stores copy what they keep.
 */
const SIGNATURES_PER_SLAB = 64;
let signatureSlab = new ArrayBuffer(0);
let signaturesCut = SIGNATURES_PER_SLAB;

function newSignature(): Uint32Array {
  if (signaturesCut === SIGNATURES_PER_SLAB) {
    signatureSlab = new ArrayBuffer(SIGNATURES_PER_SLAB * SIGNATURE_SIZE * 4);
    signaturesCut = 0;
  }
  return new Uint32Array(signatureSlab, signaturesCut++ * SIGNATURE_SIZE * 4, SIGNATURE_SIZE);
}

/** The signature of the scratch bins: each filled bin's value, empty bins densified. */
function signatureOfScratch(shingles: number): Uint32Array {
  const signature = newSignature();
  if (shingles === 0) return signature.fill(EMPTY);
  const low = scratchLow;
  const filled = scratchFilled;
  // Every bin's value first (an empty bin's is stale, and overwritten below).
  signature.set(low);
  // Optimal densification (Shrivastava 2017): an empty bin borrows the value of a filled bin
  // chosen by a hash of (bin, attempt), so two similar sets borrow alike. The empty bins are
  // taken from the filled bits' complement, lowest first.
  for (let word = 0; word < filled.length; word++) {
    for (let empty = ~(filled[word] as number); empty !== 0; empty &= empty - 1) {
      const bin = (word << 5) | (31 - Math.clz32(empty & -empty));
      const tried = bin * DONOR_ATTEMPTS - 1;
      for (let attempt = 1; ; attempt++) {
        const donor = attempt <= DONOR_ATTEMPTS ? (DONORS[tried + attempt] as number) : donorOf(bin, attempt);
        if (((filled[donor >>> 5] as number) & (1 << donor)) !== 0) {
          signature[bin] = mix((low[donor] as number) ^ Math.imul(attempt, 0x27d4eb2f));
          break;
        }
      }
    }
  }
  return signature;
}

/**
 * The 32-bit hash of each band's rows, written to `out` from `offset`: what a band key spells
 * ({@link bandKeys}). The resolver compares and deduplicates band keys as these numbers (with
 * their band's number) and uses the strings only at the store boundary.
 */
function hashBands(signature: Uint32Array, out: Int32Array, offset: number): void {
  for (let band = 0; band < BANDS; band++) {
    let hash = Math.imul(band + 1, 0x9e3779b1);
    const from = band * ROWS_PER_BAND;
    for (let row = 0; row < ROWS_PER_BAND; row++)
      hash = Math.imul(hash ^ (signature[from + row] as number), 0x01000193);
    out[offset + band] = mix(hash);
  }
}

/**
 * A band key: 7 URL-safe characters, the band's number then its hash six bits at a time
 * (`String.fromCharCode` is about ten times cheaper than `toString(36)`, which at 32 keys per
 * article was half the fingerprint's cost). {@link bandOfKey} reads one back.
 */
function spellBand(band: number, hash: number): string {
  const chars = KEY_CHARS;
  return String.fromCharCode(
    chars[band] as number,
    chars[hash & 63] as number,
    chars[(hash >>> 6) & 63] as number,
    chars[(hash >>> 12) & 63] as number,
    chars[(hash >>> 18) & 63] as number,
    chars[(hash >>> 24) & 63] as number,
    chars[hash >>> 30] as number,
  );
}

/** Each {@link KEY_CHARS} character's six-bit value by char code, -1 for any other. */
const KEY_VALUES = new Int8Array(128).fill(-1);
KEY_CHARS.forEach((code, value) => {
  KEY_VALUES[code] = value;
});

/** The hash a band key spells (set by {@link bandOfKey}). */
let keyHash = 0;

/**
 * The band number a key made by {@link spellBand} spells, its hash left in {@link keyHash}; -1
 * for a string no band key spells.
 */
function bandOfKey(key: string): number {
  if (key.length !== 7) return -1;
  const band = KEY_VALUES[key.charCodeAt(0)] ?? -1;
  let hash = 0;
  for (let i = 6; i >= 1; i--) {
    const value = KEY_VALUES[key.charCodeAt(i)] ?? -1;
    if (value < 0) return -1;
    hash = (hash << 6) | value;
  }
  // The seventh character holds the hash's top two bits: a larger value spells no hash.
  if (band < 0 || band >= BANDS || (KEY_VALUES[key.charCodeAt(6)] as number) > 3) return -1;
  keyHash = hash;
  return band;
}

/** Band hashes of {@link bandKeys} (scratch: it never yields). */
const scratchBandHashes = new Int32Array(BANDS);

/** Band keys of a signature ({@link spellBand}). */
export function bandKeys(signature: Uint32Array): string[] {
  hashBands(signature, scratchBandHashes, 0);
  return spellBands(scratchBandHashes, 0);
}

function spellBands(hashes: Int32Array, offset: number): string[] {
  const keys: string[] = new Array(BANDS);
  for (let band = 0; band < BANDS; band++) keys[band] = spellBand(band, hashes[offset + band] as number);
  return keys;
}

/** Share of positions on which two signatures agree (0 when either has no shingle). */
export function similarity(a: Uint32Array, b: Uint32Array): number {
  if (a.length !== b.length || a.length === 0) return 0;
  if (
    (a[0] === EMPTY && a.every((value) => value === EMPTY)) ||
    (b[0] === EMPTY && b.every((value) => value === EMPTY))
  ) {
    return 0;
  }
  let same = 0;
  for (let i = 0; i < a.length; i++) if (a[i] === b[i]) same++;
  return same / a.length;
}

/**
 * Band keys an article must share with a story for the story to be a candidate. Two, not one:
 * on the benchmark's stream nearly every story sharing a single key with an article is another
 * story (common words make single bands collide; 83,091 of 83,152 candidates at 30,000 articles,
 * none of them confirmed), while every confirmed copy shared four or more, and in
 * bench/story-pairs.json every pair that reaches {@link STORY_SIMILARITY} shares at least two. A
 * single-key candidate costs a story read (a DynamoDB item in production) and a signature
 * comparison and almost never joins. What it gives up: a copy right at the threshold (0.55:
 * each band agrees with probability 0.55^4) shares exactly one key 15% of the time, so at
 * similarity 0.55 candidates are found 80% of the time rather than 95%; at 0.7, 99.8% rather
 * than 99.98%. Such a copy is one extra alert, never a lost one (module header).
 */
export const MIN_SHARED_BANDS = 2;

/** Signature positions two articles must agree on: the fewest that reach {@link STORY_SIMILARITY}. */
const MIN_SAME_POSITIONS = (() => {
  let same = 0;
  while (same / SIGNATURE_SIZE < STORY_SIMILARITY) same++;
  return same;
})();

/**
 * {@link similarity}, or -1 as soon as fewer than `minSame` positions can still agree: most
 * band candidates of a new story are other stories, and they fail after a few dozen positions.
 */
function similarityAtLeast(a: Uint32Array, b: Uint32Array, minSame: number): number {
  const size = a.length;
  if (b.length !== size || size === 0) return 0;
  // An article without shingles has no band keys, so it is nobody's candidate; a stored story
  // without shingles is checked the way `similarity` does, for stores that return one anyway.
  if (a[0] === EMPTY || b[0] === EMPTY) return similarity(a, b);
  const mostMisses = size - minSame;
  let misses = 0;
  for (let i = 0; i < size; i++) if (a[i] !== b[i] && ++misses > mostMisses) return -1;
  return (size - misses) / size;
}

// --- The resolver -------------------------------------------------------------------------------

export interface StoryResolverOptions {
  /** How long a story accepts copies (default {@link STORY_WINDOW_MS}). */
  readonly windowMs?: number;
  readonly log?: Log;
}

/** Filings remembered per resolver (a run re-reading a page does not read the store again). */
const FILING_CACHE_SIZE = 20_000;

/**
 * The distinct band keys of one {@link StoryResolver.assign} call, numbered in the order first
 * met, with the stories listed under each. Keys are found by their numbers (band, hash) in an
 * open-addressing table rather than as strings in a `Set` and a `Map` (about 3,200 keys a page of
 * 100): the strings go to the store's read and nowhere else. A resolver keeps one between calls
 * ({@link CallBands.reset}): fresh typed arrays were about 90 KB of zeroed memory a call.
 */
class CallBands {
  /** The keys, spelled, by number: what the store's read is asked for (a new array each call: the store may keep it). */
  keys: string[] = [];
  /** Article i's band hashes, then its band keys' numbers, from i * BANDS. */
  hashes = new Int32Array(0);
  numbers = new Int32Array(0);
  /** Whether more than one article of the call has the key (only there can a started story be a candidate). */
  shared = new Uint8Array(0);
  anyShared = false;
  /** Per key, where its stories start in {@link members} and how many there are. */
  from = new Int32Array(0);
  count = new Int32Array(0);
  /** Candidate numbers ({@link CallStories}) of the stories the store lists, key after key. */
  readonly members: number[] = [];
  /** Stories a key gains in the call (earlier dry runs', started ones): a list per key through `extraNext`. */
  extraHead = new Int32Array(0);
  readonly extraNext: number[] = [];
  readonly extraMember: number[] = [];
  #band = new Uint8Array(0);
  #hash = new Int32Array(0);
  /** Key number + 1 by slot, 0 when free; at most half full. */
  #slots = new Int32Array(0);

  /** Empties it for a call of `articles` articles, growing the arrays when they are too short. */
  reset(articles: number): void {
    const mostKeys = articles * BANDS;
    if (this.#hash.length < mostKeys) {
      let size = 16;
      while (size < mostKeys * 2) size *= 2;
      this.#slots = new Int32Array(size);
      this.hashes = new Int32Array(mostKeys);
      this.numbers = new Int32Array(mostKeys);
      this.#band = new Uint8Array(mostKeys);
      this.#hash = new Int32Array(mostKeys);
      this.shared = new Uint8Array(mostKeys);
      this.from = new Int32Array(mostKeys);
      this.count = new Int32Array(mostKeys);
      this.extraHead = new Int32Array(mostKeys);
    } else {
      // The other per-key arrays are set as each key is added.
      this.#slots.fill(0);
    }
    this.keys = [];
    this.anyShared = false;
    this.members.length = 0;
    this.extraNext.length = 0;
    this.extraMember.length = 0;
  }

  /** The number of a key, added when new; a key met again is marked shared. */
  add(band: number, hash: number, key: string): number {
    const slots = this.#slots;
    const mask = slots.length - 1;
    // The hash is a finalized 32-bit hash already: its low bits choose the slot.
    for (let slot = hash & mask; ; slot = (slot + 1) & mask) {
      const found = (slots[slot] as number) - 1;
      if (found < 0) {
        const number = this.keys.length;
        slots[slot] = number + 1;
        this.#band[number] = band;
        this.#hash[number] = hash;
        this.shared[number] = 0;
        this.from[number] = 0;
        this.count[number] = 0;
        this.extraHead[number] = -1;
        this.keys.push(key);
        return number;
      }
      if (this.#hash[found] === hash && this.#band[found] === band) {
        this.shared[found] = 1;
        this.anyShared = true;
        return found;
      }
    }
  }

  /** The number of a key the call has, or -1. */
  numberOf(key: string): number {
    const band = bandOfKey(key);
    if (band < 0) return -1;
    const hash = keyHash;
    const slots = this.#slots;
    const mask = slots.length - 1;
    for (let slot = hash & mask; ; slot = (slot + 1) & mask) {
      const found = (slots[slot] as number) - 1;
      if (found < 0) return -1;
      if (this.#hash[found] === hash && this.#band[found] === band) return found;
    }
  }

  /** Lists the stories the store files under a key (once per key), numbered by `stories`. */
  list(number: number, storyIds: readonly string[], stories: CallStories): void {
    this.from[number] = this.members.length;
    this.count[number] = storyIds.length;
    for (const storyId of storyIds) this.members.push(stories.numberOf(storyId));
  }

  /** Adds a story to a key's list for the rest of the call. */
  join(number: number, member: number): void {
    this.extraMember.push(member);
    this.extraNext.push(this.extraHead[number] as number);
    this.extraHead[number] = this.extraNext.length - 1;
  }
}

/**
 * The stories one call may compare articles with, numbered: the stories the store files under
 * the call's band keys, filed articles' stories, then the stories the call starts. An article
 * counts its band keys per story in `hits`, stamped with the article (`hitsBy`), instead of
 * collecting its candidates in a set.
 */
class CallStories {
  /** Story ids by number. */
  readonly ids: string[] = [];
  /** The story by number once read or started; undefined when unread, unknown or out of the window. */
  readonly stories: (StoredStory | undefined)[] = [];
  readonly #numbers = new Map<string, number>();
  hits = new Int32Array(0);
  hitsBy = new Int32Array(0);

  numberOf(storyId: string): number {
    let number = this.#numbers.get(storyId);
    if (number === undefined) {
      number = this.ids.length;
      this.#numbers.set(storyId, number);
      this.ids.push(storyId);
      this.stories.push(undefined);
    }
    return number;
  }

  /**
   * Room for `more` stories beyond those numbered so far (the ones the call may start), the
   * counts cleared; `spare` is an earlier call's, whose arrays are reused when long enough.
   */
  makeRoom(more: number, spare: CallStories | undefined): void {
    const size = this.ids.length + more;
    if (spare !== undefined && spare.hits.length >= size) {
      this.hits = spare.hits;
      this.hitsBy = spare.hitsBy.fill(0, 0, size);
    } else {
      this.hits = new Int32Array(size);
      this.hitsBy = new Int32Array(size);
    }
  }

  /**
   * Counts one more band key the article (its stamp) shares with a story: true exactly when the
   * count reaches {@link MIN_SHARED_BANDS}, so each candidate is taken once per article.
   */
  hit(number: number, stamp: number): boolean {
    if (this.hitsBy[number] !== stamp) {
      this.hitsBy[number] = stamp;
      this.hits[number] = 1;
      return MIN_SHARED_BANDS <= 1;
    }
    return ++(this.hits[number] as number) === MIN_SHARED_BANDS;
  }
}

/**
 * Calls {@link visit} with each story that shares at least {@link MIN_SHARED_BANDS} band keys with
 * article `index` of the call, once.
 */
function forEachCandidate(
  index: number,
  bandCount: number,
  bandNumbers: Int32Array,
  bands: CallBands,
  stories: CallStories,
  stamp: number,
  visit: (number: number) => void,
): void {
  const { from, count, members, extraHead, extraNext, extraMember } = bands;
  for (let band = 0; band < bandCount; band++) {
    const key = bandNumbers[index * BANDS + band] as number;
    const end = (from[key] as number) + (count[key] as number);
    for (let at = from[key] as number; at < end; at++) {
      const number = members[at] as number;
      if (stories.hit(number, stamp)) visit(number);
    }
    for (let extra = extraHead[key] as number; extra >= 0; extra = extraNext[extra] as number) {
      const number = extraMember[extra] as number;
      if (stories.hit(number, stamp)) visit(number);
    }
  }
}

/**
 * The story index over a {@link StoryStore}: deterministic, idempotent assignments (module
 * header). Per call: one `readFilings`, one `readBands`, one `readStories` and one `write`.
 */
export class StoryResolver implements StoryIndex {
  readonly #store: StoryStore;
  readonly #windowMs: number;
  readonly #log: Log;
  /** Assignments known to be stored, by article key. */
  readonly #filed = new Map<string, StoryAssignment>();
  /** The last call's working arrays, for the next (a call running meanwhile makes its own). */
  #spare: { readonly bands: CallBands; readonly stories: CallStories } | undefined;
  /**
   * What dry runs would have written, consulted by later dry-run calls of this resolver only: a
   * preview reads page after page, and a copy on page 3 must meet the story page 1 would have
   * started, as the real run's would. Unbounded, like the preview that owns the resolver.
   */
  readonly #pretend = {
    filed: new Map<string, StoryAssignment>(),
    stories: new Map<string, StoredStory>(),
    bands: new Map<string, string[]>(),
  };

  constructor(store: StoryStore, options: StoryResolverOptions = {}) {
    this.#store = store;
    this.#windowMs = options.windowMs ?? STORY_WINDOW_MS;
    this.#log = options.log ?? silentLog;
  }

  async assign(
    articles: readonly Article[],
    options: { readonly now: number; readonly dryRun?: boolean | undefined },
  ): Promise<Map<string, StoryAssignment>> {
    const { now } = options;
    const dryRun = options.dryRun === true;
    const result = new Map<string, StoryAssignment>();
    const unique: Article[] = [];
    const seen = new Set<string>();
    for (const article of articles) {
      if (seen.has(article.key)) continue;
      seen.add(article.key);
      const cached = this.#filed.get(article.key) ?? (dryRun ? this.#pretend.filed.get(article.key) : undefined);
      if (cached) result.set(article.key, cached);
      else unique.push(article);
    }
    if (unique.length === 0) return result;

    const filings = await this.#store.readFilings(unique.map((article) => article.key));
    const fresh: Article[] = [];
    const prints: StoryFingerprint[] = [];
    const spare = this.#spare;
    this.#spare = undefined;
    const bands = spare?.bands ?? new CallBands();
    bands.reset(unique.length);
    const { hashes: bandHashes, numbers: bandNumbers } = bands;
    for (const article of unique) {
      if (filings.has(article.key)) continue;
      prints.push(fingerprintInto(article.title, article.summary, bandHashes, fresh.length * BANDS));
      fresh.push(article);
    }
    for (let index = 0; index < fresh.length; index++) {
      const keys = (prints[index] as StoryFingerprint).bands;
      for (let band = 0; band < keys.length; band++) {
        const at = index * BANDS + band;
        bandNumbers[at] = bands.add(band, bandHashes[at] as number, keys[band] as string);
      }
    }

    // Story ids by band key: the store's, then the ones earlier dry runs would have started (dry
    // runs only). Only keys with a story come back, a few per article, so the keys are found
    // from the returned map (read back into numbers) rather than the map asked for every key.
    const found: ReadonlyMap<string, readonly string[]> =
      bands.keys.length > 0 ? await this.#store.readBands(bands.keys) : new Map();
    const stories = new CallStories();
    for (const storyId of filings.values()) stories.numberOf(storyId);
    const filed = stories.ids.length;
    found.forEach((ids, key) => {
      const number = bands.numberOf(key);
      if (number >= 0) bands.list(number, ids, stories);
    });
    if (dryRun) {
      for (let number = 0; number < bands.keys.length; number++) {
        const pretended = this.#pretend.bands.get(bands.keys[number] as string);
        if (pretended !== undefined) for (const id of pretended) bands.join(number, stories.numberOf(id));
      }
    }
    // Read only the stories some article may compare with (and filed articles' stories): most
    // stories a band key lists share no other key with the article, and are never compared.
    stories.makeRoom(fresh.length, spare?.stories);
    const wanted = new Uint8Array(stories.ids.length);
    wanted.fill(1, 0, filed);
    const want = (number: number): void => {
      wanted[number] = 1;
    };
    for (let index = 0; index < fresh.length; index++) {
      const bandCount = (prints[index] as StoryFingerprint).bands.length;
      // Negative stamps: the comparing loop below counts again, stamped index + 1.
      forEachCandidate(index, bandCount, bandNumbers, bands, stories, -(index + 1), want);
    }
    const toRead = stories.ids.filter((_, number) => wanted[number] === 1);
    const stored = toRead.length > 0 ? await this.#store.readStories(toRead) : new Map<string, StoredStory>();
    const oldest = now - this.#windowMs;
    for (let number = 0; number < wanted.length; number++) {
      if (wanted[number] === 0) continue;
      const id = stories.ids[number] as string;
      const story = stored.get(id) ?? (dryRun ? this.#pretend.stories.get(id) : undefined);
      if (story !== undefined && story.firstSeenAt >= oldest) stories.stories[number] = story;
    }

    // Filed articles keep their story.
    for (const article of unique) {
      const storyId = filings.get(article.key);
      if (storyId === undefined) continue;
      // A story forgotten before its filings: the lead is known only when it is the article itself.
      const known = stored.get(storyId);
      const leadArticleKey = known?.leadArticleKey ?? article.key;
      const assignment: StoryAssignment = {
        articleKey: article.key,
        storyId,
        leadArticleKey,
        ...(known === undefined ? {} : { firstSeenAt: known.firstSeenAt }),
      };
      result.set(article.key, assignment);
      this.#remember(assignment);
    }

    // New articles in input order: a story started earlier in the call is a candidate for later ones.
    const started = new Map<string, StoredStory>();
    const newFilings: StoryFiling[] = [];
    for (let index = 0; index < fresh.length; index++) {
      const article = fresh[index] as Article;
      const print = prints[index] as StoryFingerprint;
      const best = bestCandidate(print, index, bandNumbers, bands, stories);
      const outlet = outletOf(article);
      let story = best;
      if (story === undefined) {
        const storyId = storyIdOf(article.key);
        story = started.get(storyId);
        if (story === undefined) {
          story = {
            storyId,
            leadArticleKey: article.key,
            firstSeenAt: now,
            outlets: [],
            outletCount: 0,
            articleCount: 0,
            signature: print.signature,
            bands: print.bands,
            marks: print.marks,
            terms: print.terms,
          };
          started.set(storyId, story);
          // Numbered like a read story (a read one of the same id gives way to it, as the write
          // keeps the stored one but this call files under the one it started).
          const number = stories.numberOf(storyId);
          stories.stories[number] = story;
          // Usually no band is shared within a call (no copy in the same page).
          if (bands.anyShared) {
            for (let band = 0; band < print.bands.length; band++) {
              const key = bandNumbers[index * BANDS + band] as number;
              if (bands.shared[key] === 1) bands.join(key, number);
            }
          }
        }
      }
      newFilings.push({ articleKey: article.key, storyId: story.storyId, outlet, at: now });
      result.set(article.key, {
        articleKey: article.key,
        storyId: story.storyId,
        leadArticleKey: story.leadArticleKey,
        firstSeenAt: story.firstSeenAt,
      });
    }
    this.#spare = { bands, stories };

    if (dryRun) {
      for (const story of started.values()) {
        this.#pretend.stories.set(story.storyId, story);
        for (const band of story.bands) {
          const ids = this.#pretend.bands.get(band);
          if (ids === undefined) this.#pretend.bands.set(band, [story.storyId]);
          else ids.push(story.storyId);
        }
      }
      for (const filing of newFilings) {
        const assignment = result.get(filing.articleKey);
        if (assignment) this.#pretend.filed.set(filing.articleKey, assignment);
      }
      return result;
    }
    if (newFilings.length === 0) return result;
    await this.#store.write({ stories: [...started.values()], filings: newFilings });
    for (const filing of newFilings) {
      const assignment = result.get(filing.articleKey);
      if (assignment) this.#remember(assignment);
    }
    this.#log.debug('stories assigned', {
      articles: unique.length,
      alreadyFiled: unique.length - fresh.length,
      newStories: started.size,
      copies: fresh.length - started.size,
    });
    return result;
  }

  async readStories(storyIds: readonly string[]): Promise<Map<string, StoryRecord>> {
    return this.#store.readStories(storyIds);
  }

  #remember(assignment: StoryAssignment): void {
    // Dropping everything at the bound keeps the cache O(1) per entry; a re-read costs one store read.
    if (this.#filed.size >= FILING_CACHE_SIZE) this.#filed.clear();
    this.#filed.set(assignment.articleKey, assignment);
  }
}

/**
 * The story an article joins among its candidates ({@link forEachCandidate}): the best
 * ({@link isBetter}) that agrees on at least {@link STORY_SIMILARITY} of the signature and does
 * not {@link disagree}; undefined when none does.
 */
function bestCandidate(
  print: StoryFingerprint,
  index: number,
  bandNumbers: Int32Array,
  bands: CallBands,
  stories: CallStories,
): StoredStory | undefined {
  let best: StoredStory | undefined;
  let bestScore = -1;
  forEachCandidate(index, print.bands.length, bandNumbers, bands, stories, index + 1, (number) => {
    const story = stories.stories[number];
    if (story === undefined) return;
    const score = similarityAtLeast(print.signature, story.signature, MIN_SAME_POSITIONS);
    if (score < STORY_SIMILARITY || disagree(print, story)) return;
    if (best === undefined || isBetter(score, story, bestScore, best)) {
      best = story;
      bestScore = score;
    }
  });
  return best;
}

/** Higher similarity first, then the story seen first, then the smallest id. */
function isBetter(score: number, story: StoryRecord, bestScore: number, best: StoryRecord): boolean {
  if (score !== bestScore) return score > bestScore;
  if (story.firstSeenAt !== best.firstSeenAt) return story.firstSeenAt < best.firstSeenAt;
  return story.storyId < best.storyId;
}

/** The outlet name a story lists for an article: media name, else media code. */
function outletOf(article: Article): string | undefined {
  const name = article.mediaName?.trim() || article.media?.trim();
  return name === '' ? undefined : name;
}
