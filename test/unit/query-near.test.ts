/**
 * NEAR's cost and its semantics on generated input (functions/core/query.ts, occursNear).
 *
 * Cost is counted, not timed: the text handed to occursNear is a String object that counts the
 * code units its reader looks at (one per charCodeAt or codePointAt, the units an indexOf scans,
 * the whole text for anything that turns it into a primitive string). The count must stay within
 * a fixed number of reads per character of the text, however many occurrences each side has.
 *
 * Semantics are held to a brute-force reference written from the definition: every pair of
 * separate occurrences, with the words (maximal runs of letters, marks and digits of the whole
 * text) or the code points wholly between them counted afresh.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { evaluateQuery, leafOccurrences, occursNear, parseQuery, type QueryLeaf, type QueryNode } from '#core/query';
import {
  containsTerm,
  forEachOccurrence,
  isWordAt,
  isWordBefore,
  normalizeText,
  startsWithWordCharacter,
  termPeriod,
} from '#core/text';

/**
 * A text that counts the code units read from it (see the module comment). Its methods read the
 * primitive string it holds: String.prototype's own would turn `this` into a string through
 * toString, counted as a whole read, on every call.
 */
class CountingText extends String {
  reads = 0;
  readonly #value: string;

  constructor(value: string) {
    super(value);
    this.#value = value;
  }

  override charCodeAt(index: number): number {
    this.reads++;
    return this.#value.charCodeAt(index);
  }

  override codePointAt(index: number): number | undefined {
    this.reads++;
    return this.#value.codePointAt(index);
  }

  override indexOf(search: string, position = 0): number {
    const from = Math.max(0, Math.min(position, this.#value.length));
    const found = this.#value.indexOf(search, from);
    this.reads += (found === -1 ? this.#value.length : found + search.length) - from;
    return found;
  }

  override startsWith(search: string, position = 0): boolean {
    this.reads += search.length;
    return this.#value.startsWith(search, position);
  }

  override slice(start?: number, end?: number): string {
    const part = this.#value.slice(start, end);
    this.reads += part.length;
    return part;
  }

  override toString(): string {
    this.reads += this.#value.length;
    return this.#value;
  }

  override valueOf(): string {
    this.reads += this.#value.length;
    return this.#value;
  }
}

const leafOf = (query: string): QueryLeaf => {
  const node = parseQuery(query);
  if (node.type !== 'term' && node.type !== 'phrase') throw new Error(`${query} is not a leaf`);
  return node;
};

/** The reads occursNear makes on `text` for `left NEAR/distance right`, and its answer. */
function nearReads(text: string, left: string, right: string, distance: number, characters: boolean) {
  const counting = new CountingText(text);
  const near = occursNear(counting as unknown as string, leafOf(left), leafOf(right), distance, characters);
  return { near, reads: counting.reads, perCharacter: counting.reads / text.length };
}

/** Reads per character of text that NEAR may use, whatever the number of occurrences. */
const READS_PER_CHARACTER = 8;

describe('NEAR work is linear in the text', () => {
  // Issue 30: '半'*470 + '。'*60 + '体'*470 with 半 NEAR/50 体 took 466 ms an article, and 4x
  // that at twice the occurrences: every pair of occurrences was tried.
  const adversarial = (perSide: number) => `${'半'.repeat(perSide)}${'。'.repeat(60)}${'体'.repeat(perSide)}`;
  /** The same shape for NEAR counting words: a word per occurrence, 60 other words between. */
  const adversarialWords = (perSide: number) => `${'a '.repeat(perSide)}${'x '.repeat(60)}${'b '.repeat(perSide)}`;

  it('reads each character of the adversarial Han text a bounded number of times (half NEAR/50 body)', () => {
    const sizes = [120, 250, 470, 970, 2000];
    const runs = sizes.map((perSide) => nearReads(adversarial(perSide), '半', '体', 50, true));
    for (const [index, run] of runs.entries()) {
      expect(run.near, `${sizes[index]} per side`).toBe(false);
      expect(run.perCharacter, `${sizes[index]} per side: ${run.reads} reads`).toBeLessThanOrEqual(READS_PER_CHARACTER);
    }
    // Doubling the text at most doubles the work (and a little for the fixed part).
    for (let i = 1; i < runs.length; i++) {
      const growth = (runs[i]?.reads ?? 0) / (runs[i - 1]?.reads ?? 1);
      const textGrowth = (sizes[i] ?? 0) / (sizes[i - 1] ?? 1);
      expect(growth, `${sizes[i - 1]} -> ${sizes[i]} per side`).toBeLessThanOrEqual(textGrowth * 1.1);
    }
  });

  it('reads each character of adversarial text a bounded number of times when NEAR counts words', () => {
    for (const perSide of [250, 500, 1000, 2000]) {
      const run = nearReads(adversarialWords(perSide), 'a', 'b', 50, false);
      expect(run.near).toBe(false);
      expect(run.perCharacter, `${perSide} per side: ${run.reads} reads`).toBeLessThanOrEqual(READS_PER_CHARACTER);
    }
  });

  it('stays linear with many occurrences of a long periodic phrase or prefix on both sides', () => {
    // A phrase whose occurrences overlap ('a a a' in 'a a a a …'), found again at every word.
    const text = `${'a '.repeat(1500)}${'x '.repeat(60)}${'ab '.repeat(1000)}`;
    for (const [left, right] of [
      ['"a a a a a a a a a a a a a a a a a a a a"', 'ab*'],
      ['a', '"ab ab ab ab ab ab ab ab"'],
      ['"a a"', '"ab ab"'],
    ] as const) {
      const run = nearReads(text, left, right, 50, false);
      expect(run.near, `${left} NEAR/50 ${right}`).toBe(false);
      expect(run.perCharacter, `${left} NEAR/50 ${right}: ${run.reads} reads`).toBeLessThanOrEqual(READS_PER_CHARACTER);
    }
  });

  it('still finds the pair when there is one, in either order and in both counting units', () => {
    expect(nearReads(`${adversarial(470)}半`, '半', '体', 50, true).near).toBe(true);
    expect(nearReads(`${adversarialWords(470)}a`, 'a', 'b', 50, false).near).toBe(true);
    expect(nearReads(`体${'。'.repeat(50)}半`, '半', '体', 50, true).near).toBe(true);
    expect(nearReads(`体${'。'.repeat(51)}半`, '半', '体', 50, true).near).toBe(false);
  });
});

describe('finding the occurrences of a term is linear in the text', () => {
  const reads = (text: string, find: (counting: string) => unknown) => {
    const counting = new CountingText(text);
    find(counting as unknown as string);
    return counting.reads / text.length;
  };

  it('reads each character a bounded number of times for a long periodic term whose edges keep failing', () => {
    // 'a'*500 occurs at each of 1,501 positions of 'a'*2000, inside one word: no edge holds.
    const text = 'a'.repeat(2000);
    const term = 'a'.repeat(500);
    expect(reads(text, (counting) => containsTerm(counting, term))).toBeLessThanOrEqual(READS_PER_CHARACTER);
    expect(reads(text, (counting) => leafOccurrences(counting, leafOf(term)))).toBeLessThanOrEqual(READS_PER_CHARACTER);
    expect(containsTerm(text, term)).toBe(false);
    expect(containsTerm(`${text} ${term}`, term)).toBe(true);
    // A period of two ('abab…' in 'ababab…') and of three.
    for (const [unit, repeats] of [
      ['ab', 200],
      ['abc', 100],
    ] as const) {
      const periodic = unit.repeat(1000);
      const word = unit.repeat(repeats);
      expect(
        reads(periodic, (counting) => containsTerm(counting, word)),
        word,
      ).toBeLessThanOrEqual(READS_PER_CHARACTER);
    }
  });

  it('finds exactly the starts a scan of every position finds, overlapping ones included', () => {
    const small = (maxLength: number) =>
      fc.array(fc.constantFrom('a', 'b', 'c'), { minLength: 1, maxLength }).map((units) => units.join(''));
    fc.assert(
      fc.property(small(60), small(7), (text, term) => {
        const expected: number[] = [];
        for (let at = 0; at + term.length <= text.length; at++) if (text.startsWith(term, at)) expected.push(at);
        const found: number[] = [];
        forEachOccurrence(text, term, (at) => {
          found.push(at);
          return false;
        });
        expect(found).toEqual(expected);
        // The smallest period, from its definition.
        let period = 1;
        while (period < term.length && term.slice(period) !== term.slice(0, term.length - period)) period++;
        expect(termPeriod(term)).toBe(period);
      }),
      { numRuns: 4000 },
    );
  });
});

// --- The reference ------------------------------------------------------------------------------

/** Every start of `leaf` in normalized `text`, from the definition: each position, edges checked. */
function referenceStarts(text: string, leaf: QueryLeaf): number[] {
  const term = leaf.norm;
  const starts: number[] = [];
  if (term.length === 0) return starts;
  const checkStart = startsWithWordCharacter(term);
  const checkEnd = (leaf.type === 'phrase' || !leaf.prefix) && isWordBefore(term, term.length);
  for (let at = 0; at + term.length <= text.length; at++) {
    if (!text.startsWith(term, at)) continue;
    if (checkStart && isWordBefore(text, at)) continue;
    if (checkEnd && isWordAt(text, at + term.length)) continue;
    starts.push(at);
  }
  return starts;
}

/** Words wholly inside [start, end): maximal letter/mark/digit runs of the whole text. */
const referenceWords = (text: string, start: number, end: number): number =>
  [...text.matchAll(/[\p{L}\p{M}\p{N}]+/gu)].filter((run) => run.index >= start && run.index + run[0].length <= end)
    .length;

const referenceCharacters = (text: string, start: number, end: number): number =>
  Array.from(text.slice(start, end)).length;

/** Brute force: every pair of separate occurrences, either order, the gap counted afresh. */
function referenceNear(text: string, left: QueryLeaf, right: QueryLeaf, distance: number, characters: boolean) {
  const count = characters ? referenceCharacters : referenceWords;
  for (const a of referenceStarts(text, left)) {
    for (const b of referenceStarts(text, right)) {
      const aEnd = a + left.norm.length;
      const bEnd = b + right.norm.length;
      if (a < bEnd && b < aEnd) continue;
      const [gapStart, gapEnd] = a < b ? [aEnd, b] : [bEnd, a];
      if (count(text, gapStart, gapEnd) <= distance) return true;
    }
  }
  return false;
}

/** Small pieces that make occurrences dense and overlapping, in several scripts. */
const PIECES = [
  'a',
  'a',
  'b',
  'ab',
  'aa',
  ' ',
  ' ',
  '  ',
  '-',
  '.',
  '半',
  '体',
  '半体',
  '반도체',
  '가',
  'の',
  '😀',
  'é',
  'x',
];
const LEAVES = [
  'a',
  'b',
  'ab',
  'aa',
  'a*',
  'ab*',
  '"a a"',
  '"a b"',
  '"ab a"',
  '"a a a"',
  '半',
  '体',
  '半体',
  '반도체',
  '"반도체 가"',
  'x',
  '😀',
];

const nearText = fc
  .array(fc.constantFrom(...PIECES), { maxLength: 40 })
  .map((pieces) => normalizeText(pieces.join('')));

describe('NEAR agrees with the brute-force reference', () => {
  it('on random texts, leaves, distances and counting units', () => {
    fc.assert(
      fc.property(
        nearText,
        fc.constantFrom(...LEAVES),
        fc.constantFrom(...LEAVES),
        fc.integer({ min: 0, max: 6 }),
        fc.boolean(),
        (text, left, right, distance, characters) => {
          const a = leafOf(left);
          const b = leafOf(right);
          expect(occursNear(text, a, b, distance, characters)).toBe(referenceNear(text, a, b, distance, characters));
        },
      ),
      { numRuns: 4000 },
    );
  });

  it('through evaluateQuery, in the title or the summary, never across the two', () => {
    fc.assert(
      fc.property(
        nearText,
        nearText,
        fc.constantFrom(...LEAVES),
        fc.constantFrom(...LEAVES),
        fc.integer({ min: 1, max: 6 }),
        (title, summary, left, right, distance) => {
          const query = parseQuery(`${left} NEAR/${distance} ${right}`) as QueryNode & { type: 'near' };
          const characters = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}]/u.test(left + right);
          const expected =
            referenceNear(title, query.left as QueryLeaf, query.right as QueryLeaf, distance, characters) ||
            referenceNear(summary, query.left as QueryLeaf, query.right as QueryLeaf, distance, characters);
          expect(evaluateQuery(query, { title, summary }) !== undefined).toBe(expected);
        },
      ),
      { numRuns: 1500 },
    );
  });
});
