/**
 * The story evaluation set: labelled article pairs built from the hand-written seeds of
 * bench/story-seeds.ts by variation operators (a syndicated copy with another outlet's byline, a
 * wire prefix or credit, a reordered headline, a lead cut to its first sentence, punctuation and
 * width changes, another outlet's rewritten headline) and by pairing each story with its topic
 * partner (hard negatives) and with a story of another topic (unrelated).
 *
 * Deterministic: `npx tsx bench/story-pairs.ts` rewrites bench/story-pairs.json byte for byte
 * from the seeds. Pairs from even topic pairs form the tuning half, odd ones the held-out half,
 * so no story appears in both.
 */
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { type Language, OUTLETS, SEEDS, type StorySeed } from './story-seeds.ts';

/** One side of a pair. */
export interface PairArticle {
  readonly title: string;
  readonly summary: string;
  readonly media: string;
  readonly language: Language;
}

export type PairKind =
  | 'syndicated'
  | 'prefixed'
  | 'reordered'
  | 'truncated-lead'
  | 'punctuation'
  | 'combined'
  | 'rewritten'
  | 'hard-negative'
  | 'unrelated';

/** One labelled pair. */
export interface StoryPair {
  readonly id: string;
  readonly language: Language;
  readonly kind: PairKind;
  readonly same: boolean;
  readonly split: 'tune' | 'holdout';
  readonly a: PairArticle;
  readonly b: PairArticle;
}

const BYLINES: Record<Language, readonly ((outlet: string) => string)[]> = {
  ko: [
    (outlet) => `(서울=${outlet}) 김민수 기자 = `,
    (outlet) => `(세종=${outlet}) 박지현 기자 = `,
    (outlet) => `[${outlet} 이준호 기자] `,
  ],
  en: [(outlet) => `SEOUL, Oct 8 (${outlet}) - `, (outlet) => `WASHINGTON (${outlet}) — `, () => ''],
  ja: [(outlet) => `【東京=${outlet}】`, () => '', (outlet) => `【ワシントン=${outlet}】`],
};

const PREFIXES: Record<Language, readonly ((title: string, outlet: string) => string)[]> = {
  ko: [
    (title) => `[속보] ${title}`,
    (title) => `[단독]${title}`,
    (title) => `${title}(종합)`,
    (title) => `${title}(종합2보)`,
    (title, outlet) => `${title} - ${outlet}`,
  ],
  en: [
    (title) => `UPDATE 2-${title}`,
    (title) => `BREAKING: ${title}`,
    (title) => `EXCLUSIVE-${title}`,
    (title, outlet) => `${title} - ${outlet}`,
    (title, outlet) => `${title} | ${outlet}`,
  ],
  ja: [
    (title) => `【速報】${title}`,
    (title) => `【独自】${title}`,
    (title) => `${title}（共同）`,
    (title, outlet) => `${title} - ${outlet}`,
    (title) => `＜速報＞${title}`,
  ],
};

/** The headline with its two halves swapped, or undefined when it has no clause to move. */
function reorder(title: string, language: Language): string | undefined {
  if (language === 'ko') {
    const [left, right] = title.split('…');
    return right === undefined ? undefined : `${right.trim()}…${left?.trim()}`;
  }
  if (language === 'ja') {
    const [left, right] = title.split('　');
    return right === undefined ? undefined : `${right}、${left}`;
  }
  const comma = title.indexOf(', ');
  if (comma > 0) return `${title.slice(comma + 2)}: ${title.slice(0, comma)}`;
  for (const word of [' after ', ' as ', ' on ', ' over ', ' to ']) {
    const at = title.indexOf(word);
    if (at > 0) {
      const clause = title.slice(at + 1);
      return `${clause.charAt(0).toUpperCase()}${clause.slice(1)}, ${title.charAt(0).toLowerCase()}${title.slice(1, at)}`;
    }
  }
  return undefined;
}

/**
 * The lead cut short: after its first sentence when that drops at least a quarter of it,
 * otherwise at a word (or for Japanese, a comma) about 60% in, as outlets trim a long wire lead.
 */
function shortLead(summary: string, language: Language): string {
  const sentenceEnd = (language === 'ja' ? summary.indexOf('。') : summary.indexOf('. ')) + 1;
  if (sentenceEnd > 0 && sentenceEnd <= summary.length * 0.75) return summary.slice(0, sentenceEnd);
  const at = Math.floor(summary.length * 0.6);
  const cut = language === 'ja' ? summary.lastIndexOf('、', at) : summary.lastIndexOf(' ', at);
  return `${summary.slice(0, cut > 0 ? cut : at)}…`;
}

const FULL_WIDTH_DIGITS = (text: string) =>
  text.replace(/[0-9%]/g, (char) => String.fromCharCode(char.charCodeAt(0) + 0xfee0));
const HALF_WIDTH_DIGITS = (text: string) =>
  text.replace(/[０-９％]/g, (char) => String.fromCharCode(char.charCodeAt(0) - 0xfee0));

/** Punctuation, quotes, width and spacing changes, as outlets' style guides make them. */
function restyle(seed: StorySeed, language: Language): StorySeed {
  if (language === 'ko') {
    return {
      title: FULL_WIDTH_DIGITS(seed.title.replace('…', ' ... ').replace(/, /g, ' ')),
      summary: seed.summary
        .replace(/(\d),(\d)/g, '$1$2')
        .replace(/\(/g, ' (')
        .replace(/ {2}/g, ' '),
    };
  }
  if (language === 'ja') {
    return {
      title: HALF_WIDTH_DIGITS(FULL_WIDTH_DIGITS(seed.title)).replace('　', '  ').replace(/～/g, '~'),
      summary: seed.summary.replace(/（/g, '(').replace(/）/g, ')').replace(/「/g, '『').replace(/」/g, '』'),
    };
  }
  return {
    title: seed.title.replace(/\b([a-z])/g, (letter) => letter.toUpperCase()).replace(/, /g, ' -- '),
    summary: seed.summary.replace(/'/g, '’').replace(/%/g, ' percent'),
  };
}

/** Generates the whole set from the seeds. */
export function generatePairs(): StoryPair[] {
  const pairs: StoryPair[] = [];
  for (const language of ['ko', 'en', 'ja'] as const) {
    const outlets = OUTLETS[language];
    const topics = SEEDS[language];
    const article = (seed: StorySeed, outletIndex: number, bylineIndex = outletIndex): PairArticle => {
      const media = outlets[outletIndex % outlets.length] ?? 'outlet';
      const byline = BYLINES[language][bylineIndex % BYLINES[language].length] ?? (() => '');
      return { title: seed.title, summary: `${byline(media)}${seed.summary}`, media, language };
    };
    topics.forEach((topic, topicIndex) => {
      const split = topicIndex % 2 === 0 ? 'tune' : 'holdout';
      const add = (kind: PairKind, same: boolean, a: PairArticle, b: PairArticle) =>
        pairs.push({ id: `${language}-${topicIndex}-${pairs.length}`, language, kind, same, split, a, b });
      topic.forEach((seed, side) => {
        const other = topic[1 - side] as StorySeed;
        const n = topicIndex * 2 + side;
        const original = article(seed, n, n);
        const prefix = PREFIXES[language][n % PREFIXES[language].length] ?? ((title: string) => title);
        const copyOutlet = n + 1;
        add('syndicated', true, original, article(seed, copyOutlet, n + 1));
        const prefixed = { ...seed, title: prefix(seed.title, outlets[(n + 2) % outlets.length] ?? '') };
        add('prefixed', true, original, article(prefixed, n + 2, n + 2));
        const reordered = reorder(seed.title, language);
        if (reordered !== undefined) add('reordered', true, original, article({ ...seed, title: reordered }, n + 3));
        const truncated = { ...seed, summary: shortLead(seed.summary, language) };
        add('truncated-lead', true, original, article(truncated, n + 4));
        add('punctuation', true, original, article(restyle(seed, language), n + 5));
        const combined = { title: prefix(reordered ?? seed.title, ''), summary: truncated.summary };
        add('combined', true, original, article(combined, n + 6));
        if (seed.rewrite !== undefined)
          add('rewritten', true, original, article({ ...seed, title: seed.rewrite }, n + 7));

        // Hard negatives: the topic partner, as published, prefixed, cut short and syndicated.
        const otherPrefix = PREFIXES[language][(n + 1) % PREFIXES[language].length] ?? ((title: string) => title);
        if (side === 0) add('hard-negative', false, original, article(other, n + 1));
        add('hard-negative', false, original, article({ ...other, title: otherPrefix(other.title, '') }, n + 2));
        add(
          'hard-negative',
          false,
          article(truncated, n),
          article({ ...other, summary: shortLead(other.summary, language) }, n + 3),
        );
        if (side === 1) add('hard-negative', false, article(other, n + 4), original);
        const unrelated = topics[(topicIndex + 1 + side) % topics.length]?.[side] as StorySeed;
        add('unrelated', false, original, article(unrelated, n + 5));
      });
    });
  }
  return pairs;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const pairs = generatePairs();
  const path = fileURLToPath(new URL('./story-pairs.json', import.meta.url));
  writeFileSync(
    path,
    `${JSON.stringify({ generatedBy: 'npx tsx bench/story-pairs.ts (from bench/story-seeds.ts)', pairs }, null, 2)}\n`,
  );
  const count = (test: (pair: StoryPair) => boolean) => pairs.filter(test).length;
  process.stdout.write(
    `wrote ${pairs.length} pairs to ${path}: ${count((p) => p.same)} same, ${count((p) => !p.same)} different; ` +
      `ko ${count((p) => p.language === 'ko')}, en ${count((p) => p.language === 'en')}, ja ${count((p) => p.language === 'ja')}\n`,
  );
}
