/**
 * Text helpers for rule matching: the one normalization every comparison goes through, what each
 * script means for words ({@link WordKind}: word edges for scripts written with spaces, none for
 * Korean, Chinese, Japanese, Thai...), and the keyword automaton that finds every rule keyword in a
 * text in one pass (a second one for terms that start with Hangul, kana, CJK or Thai).
 *
 * Everything works on UTF-16 code units of normalized text, so "term occurs in text" means plain
 * substring containment after {@link normalizeText}, checked at word edges by
 * {@link isWordCodePoint}.
 *
 * It also holds the two policies every rendering of provider text goes through: {@link displayText}
 * (the one sanitizer of what subscribers see) and {@link publishableLink} (which article links are
 * published).
 */
import { checkTargetUrl } from '../shared/network-targets.ts';

/**
 * Default-ignorable code points (Unicode's Default_Ignorable_Code_Point): soft hyphen, zero-width
 * space, zero-width (non-)joiners, word joiner, BOM, bidi marks and embeddings, variation
 * selectors, Hangul fillers, tags. Renderers show nothing for them (displayText removes them), so a
 * subscriber reading "Sam\u00ADsung" sees "Samsung" and must find it matched as one.
 */
const IGNORABLE = /\p{Default_Ignorable_Code_Point}/u;
const IGNORABLES = /\p{Default_Ignorable_Code_Point}+/gu;

/**
 * What full case folding changes after NFKC and `toLowerCase`: `ß` (from `ß` or `ẞ`) folds to
 * `ss`, final `ς` to `σ` (toLowerCase picks the form by position in the word, case folding does
 * not), and the dot that lowercasing `İ` leaves on `i` goes (with any more of it), as Turkish
 * folding does, so `İstanbul` is `istanbul`.
 */
const UNFOLDED = /[ßς]|i\u0307/;
const UNFOLDED_ALL = /[ßς]|i\u0307+/g;
const foldOne = (unfolded: string): string => (unfolded === 'ß' ? 'ss' : unfolded === 'ς' ? 'σ' : 'i');

/**
 * Runs of whitespace and control characters other than one plain space: the only spots the
 * collapse has to touch. A control character (NUL, ESC, DEL, C1) reads as a space, the one
 * displayText shows in its place.
 */
const WHITESPACE_TO_COLLAPSE = /(?:[^\S ]|\p{Cc})[\s\p{Cc}]*| [\s\p{Cc}]+/gu;

/**
 * Apostrophes written as something other than U+0027: the typographic ones (`’`, `‘`, `‛`), which
 * wire headlines and phone keyboards write. A rule for `O'Brien` typed on a keyboard must match
 * the headline `O’Brien wins`, and the other way round. All are punctuation, as `'` is, so words
 * and NEAR distances stay as they were. The modifier letter `ʼ` (Ukrainian) is not folded: it is a
 * letter, and `обʼєкт` is one word to NEAR where `об'єкт` is two. (The full-width `＇` is folded
 * already: NFKC makes it U+0027.)
 */
const APOSTROPHE = /[\u2018\u2019\u201b]/;
const APOSTROPHES = /[\u2018\u2019\u201b]/g;

/**
 * The normalization applied to article text and values and to rule terms alike: lone surrogates
 * replaced by U+FFFD, default-ignorable code points dropped, Unicode NFKC (full-width forms,
 * ligatures and compatibility characters fold to their plain form), full case folding
 * (`toLowerCase`, then `ß` as `ss`, `ς` as `σ`, `İ` as `i`), every run of whitespace and control
 * characters collapsed to one space, ends trimmed, and every apostrophe written as `'`. This is
 * Unicode's NFKC_Casefold, except that `İ` folds to `i` (NFKC_Casefold keeps its dot: `i\u0307`),
 * and the apostrophes.
 */
export function normalizeText(value: string): string {
  // Text that every step would leave as it is (lowercase prose in most scripts, Korean headlines
  // without capitals or stray whitespace) is returned without the ICU round trips.
  if (isNormalized(value)) return value;
  return normalizeSlowly(value);
}

/**
 * {@link normalizeText} as it was before apostrophes were folded, for what is stored from it and
 * must compare with what was stored before: the delivery ledger's title hashes
 * (functions/core/ledger-facts.ts; hashing `O’Brien` as `O'Brien` would make every title with `’`
 * read as changed on its first re-read after an upgrade) and the story signatures
 * (functions/core/story.ts; its shingles drop punctuation, so they keep it for safety only).
 */
export function normalizeTextKeepingApostrophes(value: string): string {
  // Normalized text has no apostrophe to keep (they do not stay as they are), so the shortcut holds.
  if (isNormalized(value)) return value;
  return normalizeExceptApostrophes(value);
}

/** normalizeText without the shortcut for text that is normalized already. */
function normalizeSlowly(value: string): string {
  const text = normalizeExceptApostrophes(value);
  return APOSTROPHE.test(text) ? text.replace(APOSTROPHES, "'") : text;
}

function normalizeExceptApostrophes(value: string): string {
  let text = (value as string & WellFormed).toWellFormed();
  // Dropped before NFKC, so a mark composes with the letter an invisible character kept it from.
  if (IGNORABLE.test(text)) text = text.replace(IGNORABLES, '');
  text = text.normalize('NFKC').toLowerCase();
  // Rare, so tested first; NFKC again, as a mark that followed İ's dot now follows a plain i.
  if (UNFOLDED.test(text)) text = text.replace(UNFOLDED_ALL, foldOne).normalize('NFKC');
  // Replacing only irregular whitespace (not every single space) keeps the common case, ordinary
  // prose, a scan without allocations: about 3x faster than `/\s+/g` on 100,000 summaries.
  return text.replace(WHITESPACE_TO_COLLAPSE, ' ').trim();
}

/**
 * Per BMP code unit, what {@link normalizeText} does to it on its own: 0 not classified yet, 1 it
 * may change (or change its neighbour), 2 it stays, 3 the plain space (stays unless it is doubled
 * or at an end).
 */
const normalizedClass = new Uint8Array(0x10000);
normalizedClass[0x20] = 3;

/** Whitespace to `\s`, which the collapse and the trim of normalizeText act on. */
const WHITESPACE = /\s/;
/**
 * Characters that NFKC may compose with the character before them: combining marks (every
 * character with a non-zero combining class is one, and so are the other "maybe" characters of
 * the NFC quick check but Hangul jamo) and the conjoining Hangul jamo, which compose with the
 * syllable or jamo before them.
 */
const COMPOSES_BACKWARD = /[\p{M}\u1100-\u11ff\ua960-\ua97f\ud7b0-\ud7ff]/u;

/**
 * Whether a code unit comes out of every step of normalizeText as it went in, whatever surrounds
 * it: not a surrogate (toWellFormed), normalized on its own (not ignorable, its own NFKC form, its
 * own case fold, not a control character), not one that composes with the character before it (so
 * a string of such characters is NFKC already: the quick check of Unicode's UAX #15; the dot of
 * `i\u0307` is such a mark), and not whitespace.
 */
function classifyNormalized(unit: number): number {
  if (unit >= 0xd800 && unit <= 0xdfff) return 1;
  const char = String.fromCharCode(unit);
  const stays = normalizeSlowly(char) === char && !WHITESPACE.test(char) && !COMPOSES_BACKWARD.test(char);
  return stays ? 2 : 1;
}

/**
 * Whether `normalizeText(value)` is `value`: every code unit stays on its own (see
 * classifyNormalized) and every space is single and inside the text. Classes are worked out on
 * first sight of a code unit, as a full table would cost an ICU call per BMP code point at cold
 * start.
 */
function isNormalized(value: string): boolean {
  const classes = normalizedClass;
  // A space may not come first, follow another, or come last.
  let afterSpace = true;
  for (let i = 0; i < value.length; i++) {
    const unit = value.charCodeAt(i);
    let unitClass = classes[unit] ?? 0;
    if (unitClass === 0) {
      unitClass = classifyNormalized(unit);
      classes[unit] = unitClass;
    }
    if (unitClass === 3) {
      if (afterSpace) return false;
      afterSpace = true;
    } else if (unitClass === 2) {
      afterSpace = false;
    } else {
      return false;
    }
  }
  return !afterSpace || value.length === 0;
}

/**
 * ES2024 `String.prototype.toWellFormed` (Node 20+; the project's TypeScript lib is ES2023). It
 * replaces lone surrogates with U+FFFD, so every later step can rely on surrogates coming in
 * pairs; it costs nothing on one-byte strings.
 */
interface WellFormed {
  toWellFormed(): string;
}

/** Letters, marks and digits: what words are made of, in every script. */
const WORD_PART = /^[\p{L}\p{M}\p{N}]$/u;
/**
 * Scripts written without spaces between words: Chinese, Japanese, Thai, Lao, Khmer, Myanmar,
 * Tibetan. Script_Extensions, so the marks and signs they share (`ー`, `々`, the kana voicing
 * marks) count with them.
 */
const UNSPACED_SCRIPT =
  /^[\p{scx=Hani}\p{scx=Hira}\p{scx=Kana}\p{scx=Bopo}\p{scx=Thai}\p{scx=Laoo}\p{scx=Khmr}\p{scx=Mymr}\p{scx=Tibt}]$/u;
const HANGUL = /^\p{scx=Hang}$/u;

/**
 * What a code point is to words, by its script. Matching and NEAR read words through this one
 * classification (docs/queries.md, "How text is compared"):
 *
 * - `edged`: a letter, mark or digit of a script written with spaces between words (Latin,
 *   Cyrillic, Greek, Armenian, Georgian, Hebrew, Arabic, the Indic scripts, ...). Such words are
 *   whole: where a term starts (ends) with one, the character before (after) must not be one.
 * - `hangul`: Korean separates words with spaces but attaches particles to them (`반도체가`), so
 *   a term matches inside a word; NEAR still counts Korean words.
 * - `unspaced`: a script written without spaces (see UNSPACED_SCRIPT): terms match inside words,
 *   and NEAR counts characters when a side has one.
 * - `none`: not part of a word (spaces, punctuation, symbols).
 */
export const WordKind = { none: 1, edged: 2, hangul: 3, unspaced: 4 } as const;

/** Per BMP code point, its WordKind (0: not classified yet). */
const bmpWordClass = new Uint8Array(0x10000);
for (let code = 0; code < 0x80; code++) {
  const isWord = (code >= 0x30 && code <= 0x39) || (code >= 0x41 && code <= 0x5a) || (code >= 0x61 && code <= 0x7a);
  bmpWordClass[code] = isWord ? WordKind.edged : WordKind.none;
}

function classifyWordKind(codePoint: number): number {
  const char = String.fromCodePoint(codePoint);
  if (!WORD_PART.test(char)) return WordKind.none;
  if (HANGUL.test(char)) return WordKind.hangul;
  return UNSPACED_SCRIPT.test(char) ? WordKind.unspaced : WordKind.edged;
}

/** The {@link WordKind} of a code point. */
export function wordKind(codePoint: number): number {
  if (codePoint < 0x10000) {
    let kind = bmpWordClass[codePoint] ?? 0;
    if (kind === 0) {
      // Classified lazily: a full table would cost a few regex tests per BMP code point at cold start.
      kind = classifyWordKind(codePoint);
      bmpWordClass[codePoint] = kind;
    }
    return kind;
  }
  return classifyWordKind(codePoint);
}

/**
 * Whether a code point makes a word edge: a letter, mark or digit of a script written with spaces
 * ({@link WordKind}.edged). Hangul, kana, CJK, Thai, punctuation and spaces are not, which is why
 * "AI" matches in "AI반도체" and "AI-driven" but not in "said", and "рост" not in "прирост".
 */
export const isWordCodePoint = (codePoint: number): boolean => wordKind(codePoint) === WordKind.edged;

/** Whether a code point is part of a word as NEAR counts words: a letter, mark or digit of any script. */
export const isWordPartCodePoint = (codePoint: number): boolean => wordKind(codePoint) !== WordKind.none;

/** Whether (normalized) text has a letter, mark or digit of a script written without spaces. */
export function hasUnspacedScript(text: string): boolean {
  for (const char of text) if (wordKind(char.codePointAt(0) ?? 0) === WordKind.unspaced) return true;
  return false;
}

const isHighSurrogate = (unit: number) => unit >= 0xd800 && unit <= 0xdbff;
const isLowSurrogate = (unit: number) => unit >= 0xdc00 && unit <= 0xdfff;

/** Whether the code point that ends just before `index` is a word character (false at the start). */
export function isWordBefore(text: string, index: number): boolean {
  if (index <= 0) return false;
  const unit = text.charCodeAt(index - 1);
  if (isLowSurrogate(unit) && index >= 2) {
    const high = text.charCodeAt(index - 2);
    if (isHighSurrogate(high)) return isWordCodePoint(((high - 0xd800) << 10) + (unit - 0xdc00) + 0x10000);
  }
  return isWordCodePoint(unit);
}

/** Whether the code point that starts at `index` is a word character (false past the end). */
export function isWordAt(text: string, index: number): boolean {
  if (index >= text.length) return false;
  // codePointAt combines a surrogate pair and returns a lone surrogate as is.
  return isWordCodePoint(text.codePointAt(index) ?? 0);
}

/** Whether a (normalized) term needs a word edge before it: it starts with a word character. */
export const startsWithWordCharacter = (term: string): boolean => term.length > 0 && isWordAt(term, 0);

/** Whether a (normalized) term needs a word edge after it: it ends with a word character. */
export const endsWithWordCharacter = (term: string): boolean => term.length > 0 && isWordBefore(term, term.length);

/**
 * Scratch space for {@link termPeriod}'s failure function, grown to the longest term seen (terms
 * are at most a few thousand code units), so finding occurrences allocates nothing.
 */
let borderScratch = new Int32Array(64);

/**
 * The smallest period of a non-empty string: the least p > 0 with `term[i] === term[i + p]` for
 * every i (its length when there is none shorter). Knuth-Morris-Pratt's failure function: the
 * longest proper border of `term` is `term.length - period`. O(term).
 */
export function termPeriod(term: string): number {
  const length = term.length;
  if (borderScratch.length < length) borderScratch = new Int32Array(2 * length);
  const border = borderScratch;
  border[0] = 0;
  let matched = 0;
  for (let i = 1; i < length; i++) {
    const unit = term.charCodeAt(i);
    while (matched > 0 && term.charCodeAt(matched) !== unit) matched = border[matched - 1] ?? 0;
    if (term.charCodeAt(matched) === unit) matched++;
    border[i] = matched;
  }
  return length - matched;
}

/**
 * Calls `visit` with the start of every occurrence of `term` in `text` (as substrings, overlapping
 * ones included, no edge check), left to right, until `visit` returns true; returns whether one
 * did. An empty term occurs nowhere.
 *
 * The work is linear in `text` plus `term`, however many occurrences there are (issue 30: a scan
 * that restarts one unit after each occurrence compares the whole term again at each of them,
 * term × text for `aaaa` in `aaaa…`). Two facts about the smallest period p of the term bound it:
 * no occurrence starts less than p after another (its overlap would be a shorter period), so the
 * search resumes p after each one; and when p is at most half the term, text that goes on with
 * period p past an occurrence holds occurrences exactly every p units up to where the period
 * breaks (Fine and Wilf), which are read off that run without searching again.
 */
export function forEachOccurrence(text: string, term: string, visit: (start: number) => boolean): boolean {
  const length = term.length;
  if (length === 0) return false;
  let at = text.indexOf(term);
  if (at === -1) return false;
  const period = termPeriod(term);
  const periodic = 2 * period <= length;
  while (at !== -1) {
    if (visit(at)) return true;
    if (periodic) {
      let runEnd = at + length;
      while (runEnd < text.length && text.charCodeAt(runEnd) === text.charCodeAt(runEnd - period)) runEnd++;
      for (at += period; at + length <= runEnd; at += period) if (visit(at)) return true;
    } else {
      at += period;
    }
    at = text.indexOf(term, at);
  }
  return false;
}

/**
 * Whether normalized `term` occurs in normalized `text` with valid edges: where the term starts
 * (ends) with a word character ({@link isWordCodePoint}), the character before (after) the
 * occurrence must not be one. Any occurrence counts. An empty term never occurs. This is the
 * straightforward scan the automaton must agree with; its work is linear (see
 * {@link forEachOccurrence}).
 *
 * With `prefix` (a query's `semicond*`), only the start is checked: the occurrence may go on
 * into a longer word (`semicond` occurs in `semiconductors`, not in `nonsemiconductor`).
 */
export function containsTerm(text: string, term: string, prefix = false): boolean {
  // Most terms do not occur at all: answered before any closure is made.
  if (term.length === 0 || !text.includes(term)) return false;
  const checkStart = startsWithWordCharacter(term);
  const checkEnd = !prefix && endsWithWordCharacter(term);
  return forEachOccurrence(
    text,
    term,
    (at) => !(checkStart && isWordBefore(text, at)) && !(checkEnd && isWordAt(text, at + term.length)),
  );
}

/**
 * A set of small integer ids that one instance keeps for every article of a run without
 * allocating: members live in a typed array allocated once (setting a JS array's length to 0
 * would drop its storage and make every article grow it again), and membership is one byte per
 * id, cleared member by member on `reset`. A byte rather than a 32-bit generation stamp (which
 * would empty in O(1)) keeps the marks of 30,000 rule terms in 30 KB, within the L1 cache, and
 * `has` is the matcher's most frequent read; an article hits a few dozen ids, so clearing them
 * costs less than the cache misses it saves.
 */
export class IdSet {
  readonly #marks: Uint8Array;
  /** The ids added since the last reset, in the order they were first added: `members[0 .. size]`. */
  readonly members: Int32Array;
  size = 0;

  /** @param capacity ids range over `0 .. capacity - 1`. */
  constructor(capacity: number) {
    this.#marks = new Uint8Array(Math.max(1, capacity));
    this.members = new Int32Array(Math.max(1, capacity));
  }

  /** Empties the set. */
  reset(): void {
    const marks = this.#marks;
    const members = this.members;
    for (let i = 0; i < this.size; i++) marks[members[i] ?? 0] = 0;
    this.size = 0;
  }

  has(id: number): boolean {
    return this.#marks[id] === 1;
  }

  /** Adds `id`; returns false when it was already a member. */
  add(id: number): boolean {
    if (this.#marks[id] === 1) return false;
    this.#marks[id] = 1;
    this.members[this.size++] = id;
    return true;
  }
}

/** A term for the automaton: its normalized text and the id reported when it occurs. */
export interface AutomatonTerm {
  /** Normalized, non-empty; `text` and `prefix` together are distinct among the automaton's terms. */
  readonly text: string;
  readonly id: number;
  /**
   * A prefix term (a query's `semicond*`): it occurs like {@link containsTerm} with `prefix`, so
   * only its left edge is checked. Default false.
   */
  readonly prefix?: boolean;
}

/**
 * A trie over UTF-16 code units laid out as a double array: the child of state `s` on symbol `c`
 * is `t = base[s] + c` exactly when `check[t] === s`, so a step is two typed-array reads. The root
 * is state 0.
 */
interface DoubleArrayTrie {
  /** Code unit -> symbol (1..alphabet); 0 for code units that occur in no term. */
  readonly symbolOf: Int32Array;
  readonly base: Int32Array;
  readonly check: Int32Array;
  /** The term (index into the term list) that ends at a state, or -1. */
  readonly termAt: Int32Array;
  /** Aho-Corasick failure link of each state. */
  readonly fail: Int32Array;
  /** The nearest state on the failure chain, not the state itself, where a term ends, or -1. */
  readonly nextOutput: Int32Array;
}

/** Free slots a placement may start from are dropped from the search after this many misses. */
const PLACEMENT_MISSES = 32;

function buildAutomaton(terms: readonly string[]): DoubleArrayTrie {
  const symbolOf = new Int32Array(0x10000);
  let alphabet = 0;
  for (const term of terms) {
    for (let i = 0; i < term.length; i++) {
      const unit = term.charCodeAt(i);
      if (symbolOf[unit] === 0) symbolOf[unit] = ++alphabet;
    }
  }
  const stride = alphabet + 1;

  // 1. A plain trie: node 0 is the root, children as first-child / next-sibling lists.
  const childOf = new Map<number, number>();
  const firstChild: number[] = [-1];
  const nextSibling: number[] = [-1];
  const symbolOfNode: number[] = [0];
  const termOfNode: number[] = [-1];
  terms.forEach((term, termIndex) => {
    let node = 0;
    for (let i = 0; i < term.length; i++) {
      const symbol = symbolOf[term.charCodeAt(i)] ?? 0;
      const key = node * stride + symbol;
      let child = childOf.get(key);
      if (child === undefined) {
        child = symbolOfNode.length;
        childOf.set(key, child);
        symbolOfNode.push(symbol);
        termOfNode.push(-1);
        firstChild.push(-1);
        nextSibling.push(firstChild[node] ?? -1);
        firstChild[node] = child;
      }
      node = child;
    }
    termOfNode[node] = termIndex;
  });
  const nodeCount = symbolOfNode.length;

  // 2. Double-array layout, breadth first. The root sits in slot 0 with base 0, so its children
  // take slots 1..alphabet; every other node goes above that band, which keeps each base positive
  // and each `base + symbol` inside the arrays, so the scan needs no bound checks.
  let capacity = 0;
  let base = new Int32Array(0);
  let check = new Int32Array(0);
  // Free slots at or above `stride`, as a doubly linked list ordered by slot (END = none).
  const END = -1;
  let nextFree = new Int32Array(0);
  let prevFree = new Int32Array(0);
  let misses = new Uint8Array(0);
  let freeHead = END;
  let freeTail = END;
  const grow = (needed: number) => {
    if (needed < capacity) return;
    const previous = capacity;
    let next = Math.max(1024, capacity);
    while (next <= needed) next *= 2;
    const resized = <T extends Int32Array | Uint8Array>(array: T, make: (length: number) => T, fill: number): T => {
      const copy = make(next);
      copy.fill(fill, previous);
      copy.set(array);
      return copy;
    };
    base = resized(base, (length) => new Int32Array(length), 0);
    check = resized(check, (length) => new Int32Array(length), -1);
    nextFree = resized(nextFree, (length) => new Int32Array(length), END);
    prevFree = resized(prevFree, (length) => new Int32Array(length), END);
    misses = resized(misses, (length) => new Uint8Array(length), 0);
    capacity = next;
    for (let slot = Math.max(previous, stride); slot < capacity; slot++) {
      prevFree[slot] = freeTail;
      if (freeTail === END) freeHead = slot;
      else nextFree[freeTail] = slot;
      freeTail = slot;
    }
  };
  const unlinkFree = (slot: number) => {
    const before = prevFree[slot] ?? END;
    const after = nextFree[slot] ?? END;
    if (before === END) freeHead = after;
    else nextFree[before] = after;
    if (after === END) freeTail = before;
    else prevFree[after] = before;
    // Marks the slot as off the list, so it is not unlinked twice.
    nextFree[slot] = -2;
  };
  grow(2 * (nodeCount + stride));
  check[0] = 0;

  const slotOf = new Int32Array(nodeCount);
  let highestSlot = 0;
  const order: number[] = [0];
  const symbols: number[] = [];
  for (let cursor = 0; cursor < order.length; cursor++) {
    const node = order[cursor] ?? 0;
    const slot = slotOf[node] ?? 0;
    symbols.length = 0;
    for (let child = firstChild[node] ?? -1; child !== -1; child = nextSibling[child] ?? -1) {
      symbols.push(symbolOfNode[child] ?? 0);
      order.push(child);
    }
    if (symbols.length === 0) continue;
    symbols.sort((a, b) => a - b);
    const lowest = symbols[0] ?? 1;
    let nodeBase = 0;
    if (node !== 0) {
      // First fit over the free list: the lowest symbol goes to free slot `free`; every other
      // symbol's slot must be free too. Slots that keep failing leave the search (darts-clone's
      // trick), which bounds the build at a few passes over the array at the price of some holes.
      for (let free = freeHead; ; ) {
        if (free === END) {
          // Out of free slots: the first slot of the grown area is free and on the list.
          const firstNew = capacity;
          grow(capacity);
          free = firstNew;
        }
        const candidate = free - lowest;
        grow(candidate + stride);
        if (symbols.every((symbol) => check[candidate + symbol] === -1)) {
          nodeBase = candidate;
          break;
        }
        const following = nextFree[free] ?? END;
        const missed = (misses[free] ?? 0) + 1;
        misses[free] = missed;
        if (missed >= PLACEMENT_MISSES) unlinkFree(free);
        free = following;
      }
    }
    base[slot] = nodeBase;
    for (let child = firstChild[node] ?? -1; child !== -1; child = nextSibling[child] ?? -1) {
      const childSlot = nodeBase + (symbolOfNode[child] ?? 0);
      check[childSlot] = slot;
      if (childSlot >= stride && nextFree[childSlot] !== -2) unlinkFree(childSlot);
      slotOf[child] = childSlot;
      if (childSlot > highestSlot) highestSlot = childSlot;
    }
  }
  // Every `base + symbol` must stay in range, including for leaves whose base is 0.
  const size = highestSlot + stride + 1;
  grow(size);
  base = base.slice(0, size);
  check = check.slice(0, size);

  // 3. Failure and output links, breadth first: a failure target is shallower, hence final.
  const termAt = new Int32Array(size).fill(-1);
  const fail = new Int32Array(size);
  const nextOutput = new Int32Array(size).fill(-1);
  for (const node of order) termAt[slotOf[node] ?? 0] = termOfNode[node] ?? -1;
  const outputOf = (state: number) => ((termAt[state] ?? -1) >= 0 ? state : (nextOutput[state] ?? -1));
  for (const node of order) {
    if (node === 0) continue;
    const slot = slotOf[node] ?? 0;
    for (let child = firstChild[node] ?? -1; child !== -1; child = nextSibling[child] ?? -1) {
      const symbol = symbolOfNode[child] ?? 0;
      let target = 0;
      for (let state = fail[slot] ?? 0; ; state = fail[state] ?? 0) {
        const next = (base[state] ?? 0) + symbol;
        if (check[next] === state) {
          target = next;
          break;
        }
        if (state === 0) break;
      }
      const childSlot = slotOf[child] ?? 0;
      fail[childSlot] = target;
      nextOutput[childSlot] = outputOf(target);
    }
  }
  return { symbolOf, base, check, termAt, fail, nextOutput };
}

/** Per-term data the scan needs once a term's last code unit is reached. */
interface TermTable {
  readonly ids: Int32Array;
  /**
   * 1 when the term ends with a word character ({@link isWordCodePoint}) and is not a prefix
   * term, so the next character must not be one.
   */
  readonly needsEndEdge: Uint8Array;
}

function termTable(terms: readonly AutomatonTerm[]): TermTable {
  return {
    ids: Int32Array.from(terms, (term) => term.id),
    needsEndEdge: Uint8Array.from(terms, (term) => (term.prefix !== true && endsWithWordCharacter(term.text) ? 1 : 0)),
  };
}

/** Size of the word table's filter in bits (a power of two). */
const WORD_FILTER_BITS = 1 << 18;
/**
 * Size of the one-word prefix terms' filter in bits (a power of two): a word of text is probed at
 * every length some prefix term has, so most probes must end at this 8 KB filter.
 */
const PREFIX_FILTER_BITS = 1 << 16;
/** Ints per word-table slot, and how many code units of the word the slot holds. */
const SLOT_INTS = 8;
const INLINE_UNITS = 8;

/** FNV-1a over UTF-16 code units, the hash of word runs in the word table. */
const FNV_OFFSET = 0x811c9dc5 | 0;
const FNV_PRIME = 0x01000193;

/** An ASCII capital as its small letter; every other code unit as is. */
const foldAscii = (unit: number): number => (unit >= 0x41 && unit <= 0x5a ? unit + 0x20 : unit);

/**
 * Whether an ASCII code unit is one normalizeText collapses into a space: whitespace to `\s`, or a
 * control character.
 */
const isAsciiSpace = (unit: number): boolean => unit <= 0x20 || unit === 0x7f;

/**
 * Where normalized `term` ends in ASCII text `bytes[0 .. length]` if it occurs at `start` as
 * `normalizeText` would spell the text (capitals as small letters, a whitespace run as one space),
 * or -1.
 */
function rawTermEnd(bytes: Uint8Array, length: number, start: number, term: string): number {
  let at = start;
  for (let i = 0; i < term.length; i++) {
    const unit = term.charCodeAt(i);
    if (at >= length) return -1;
    if (unit === 0x20) {
      if (!isAsciiSpace(bytes[at] ?? 0)) return -1;
      do at++;
      while (at < length && isAsciiSpace(bytes[at] ?? 0));
    } else if (foldAscii(bytes[at] ?? 0) === unit) {
      at++;
    } else {
      return -1;
    }
  }
  return at;
}

/** Writes ASCII text as its bytes for {@link WordTable.scanAscii} (UTF-8, which ASCII is). */
const ASCII_BYTES = new TextEncoder();

/** The leading run of word characters of a term (its first word), e.g. `ai` of `ai반도체`. */
function firstWord(term: string): string {
  let end = 0;
  while (end < term.length && isWordAt(term, end)) end += (term.codePointAt(end) ?? 0) > 0xffff ? 2 : 1;
  return term.slice(0, end);
}

/**
 * Terms that start with a word character ({@link isWordCodePoint}), filed by their first word in
 * an open-addressing hash table. Such a term can only occur where a word (a maximal run of word
 * characters) begins, and that whole word must equal the term's first word: a term made of one
 * word needs the text word to be exactly it (its end edge), and in a longer term the first word is
 * followed by a character that is not a word character, so the text word ends there too. So one
 * hash probe per word of text replaces walking a trie through every word.
 *
 * A prefix term that is one word (`semicond*`) occurs wherever a text word starts with it, so it
 * is filed by its own text in a second table, probed while a word is read at each length some
 * such prefix has (the FNV-1a hash of a word's first n units is the running hash at n). Longer
 * prefix terms (`interest ra*`) are filed by their first word like the others and only skip the
 * end edge.
 */
class WordTable {
  readonly #mask: number;
  /**
   * Open addressing, SLOT_INTS ints per slot: hash, word length (0: empty slot), the id of the
   * term that is exactly the word (-1: none), the word's group times two plus one if the group has
   * longer terms (the group holds those and, for words longer than INLINE_UNITS, the rest of the
   * word), then the word's first INLINE_UNITS code units, two per int. Everything a typical word
   * needs is in one slot, so a lookup costs one cache miss.
   */
  readonly #slots: Int32Array;
  /**
   * One bit per value of the hash's low bits, set for every first word: most words of a text are
   * no term's first word, and this 32 KB filter (it stays in L1 cache) turns them away without
   * touching the table.
   */
  readonly #filter: Uint32Array;
  /** The code units of words longer than INLINE_UNITS: group `g`'s from `#wordStart[g]`. */
  readonly #wordUnits: Uint16Array;
  readonly #wordStart: Int32Array;
  /** Longer terms of group `g` (indexes into the term table): `#longerTerms[#longerStart[g] .. #longerStart[g + 1]]`. */
  readonly #longerStart: Int32Array;
  readonly #longerTerms: Int32Array;
  readonly #termText: readonly string[];
  readonly #terms: TermTable;
  /**
   * One-word prefix terms: `#prefixLengths[n]` is 1 when some has n code units (the array ends
   * after the longest, and is empty without any), and `#prefixes` holds them by hash.
   */
  readonly #prefixLengths: Uint8Array;
  readonly #prefixes: Map<number, readonly { readonly text: string; readonly id: number }[]>;
  /** One bit per value of the hash's low bits, set for every one-word prefix term. */
  readonly #prefixFilter = new Uint32Array(PREFIX_FILTER_BITS / 32);
  /**
   * The ASCII text being scanned by {@link scanAscii}, one byte per character: reading a typed
   * array is cheaper than `charCodeAt` on a string made by slicing another (what `trim` and
   * `slice` return), and the scan reads some characters twice.
   */
  #bytes = new Uint8Array(256);

  constructor(terms: readonly AutomatonTerm[]) {
    this.#terms = termTable(terms);
    this.#termText = terms.map((term) => term.text);
    const groups = new Map<string, { whole: number; longer: number[] }>();
    const prefixes = new Map<number, { text: string; id: number }[]>();
    let longestPrefix = -1;
    terms.forEach((term, index) => {
      const word = firstWord(term.text);
      if (term.prefix === true && word.length === term.text.length) {
        let hash = FNV_OFFSET;
        for (let i = 0; i < word.length; i++) hash = Math.imul(hash ^ word.charCodeAt(i), FNV_PRIME);
        const entries = prefixes.get(hash) ?? [];
        entries.push({ text: word, id: term.id });
        const bit = hash & (PREFIX_FILTER_BITS - 1);
        this.#prefixFilter[bit >>> 5] = (this.#prefixFilter[bit >>> 5] ?? 0) | (1 << (bit & 31));
        prefixes.set(hash, entries);
        longestPrefix = Math.max(longestPrefix, word.length);
        return;
      }
      let group = groups.get(word);
      if (group === undefined) {
        group = { whole: -1, longer: [] };
        groups.set(word, group);
      }
      if (word.length === term.text.length) group.whole = term.id;
      else group.longer.push(index);
    });
    let capacity = 16;
    while (capacity < groups.size * 2) capacity *= 2;
    this.#mask = capacity - 1;
    const slots = new Int32Array(capacity * SLOT_INTS);
    const filter = new Uint32Array(WORD_FILTER_BITS / 32);
    const wordStart: number[] = [];
    const wordUnits: number[] = [];
    const longerStart: number[] = [];
    const longerTerms: number[] = [];
    for (const [word, group] of groups) {
      const index = wordStart.length;
      wordStart.push(wordUnits.length);
      for (let i = 0; i < word.length; i++) wordUnits.push(word.charCodeAt(i));
      longerStart.push(longerTerms.length);
      longerTerms.push(...group.longer);
      let hash = FNV_OFFSET;
      for (let i = 0; i < word.length; i++) hash = Math.imul(hash ^ word.charCodeAt(i), FNV_PRIME);
      const bit = hash & (WORD_FILTER_BITS - 1);
      filter[bit >>> 5] = (filter[bit >>> 5] ?? 0) | (1 << (bit & 31));
      let slot = (hash ^ (hash >>> 16)) & this.#mask;
      while (slots[slot * SLOT_INTS + 1] !== 0) slot = (slot + 1) & this.#mask;
      const at = slot * SLOT_INTS;
      slots[at] = hash;
      slots[at + 1] = word.length;
      slots[at + 2] = group.whole;
      slots[at + 3] = 2 * index + (group.longer.length > 0 ? 1 : 0);
      for (let i = 0; i < Math.min(word.length, INLINE_UNITS); i++) {
        const packed = at + 4 + (i >> 1);
        slots[packed] = (slots[packed] ?? 0) | (word.charCodeAt(i) << ((i & 1) * 16));
      }
    }
    longerStart.push(longerTerms.length);
    this.#prefixes = prefixes;
    this.#prefixLengths = new Uint8Array(longestPrefix + 1);
    for (const entries of prefixes.values()) for (const { text } of entries) this.#prefixLengths[text.length] = 1;
    this.#slots = slots;
    this.#filter = filter;
    this.#wordStart = Int32Array.from(wordStart);
    this.#wordUnits = Uint16Array.from(wordUnits);
    this.#longerStart = Int32Array.from(longerStart);
    this.#longerTerms = Int32Array.from(longerTerms);
  }

  /**
   * Reports the terms that occur at the word `text[start, end)` of normalized `text`, whose
   * FNV-1a hash is `hash`.
   */
  word(text: string, start: number, end: number, hash: number, found: IdSet): void {
    const bit = hash & (WORD_FILTER_BITS - 1);
    if (((this.#filter[bit >>> 5] ?? 0) & (1 << (bit & 31))) === 0) return;
    const slots = this.#slots;
    const mask = this.#mask;
    const length = end - start;
    for (let slot = (hash ^ (hash >>> 16)) & mask; ; slot = (slot + 1) & mask) {
      const at = slot * SLOT_INTS;
      const slotLength = slots[at + 1] ?? 0;
      if (slotLength === 0) return;
      if (slots[at] !== hash || slotLength !== length || !this.#sameWord(at, text, start, length)) continue;
      const whole = slots[at + 2] ?? -1;
      if (whole !== -1) found.add(whole);
      const groupAndFlag = slots[at + 3] ?? 0;
      if ((groupAndFlag & 1) === 0) return;
      const group = groupAndFlag >>> 1;
      const last = this.#longerStart[group + 1] ?? 0;
      for (let k = this.#longerStart[group] ?? 0; k < last; k++) {
        const term = this.#longerTerms[k] ?? 0;
        const id = this.#terms.ids[term] ?? 0;
        if (found.has(id)) continue;
        const termText = this.#termText[term] ?? '';
        if (!text.startsWith(termText, start)) continue;
        if (this.#terms.needsEndEdge[term] === 1 && isWordAt(text, start + termText.length)) continue;
        found.add(id);
      }
      return;
    }
  }

  /**
   * {@link word} for ASCII text that is not normalized yet, `bytes[0 .. length]` (see
   * {@link TermAutomaton.findIn}): letters compare case-insensitively and a space of a term
   * matches a run of whitespace. It repeats {@link word}'s probe on purpose: this is the scan's
   * innermost loop, and sharing the probe through a comparison callback or a split-out helper
   * measured slower.
   */
  #rawWord(bytes: Uint8Array, length: number, start: number, end: number, hash: number, found: IdSet): void {
    const bit = hash & (WORD_FILTER_BITS - 1);
    if (((this.#filter[bit >>> 5] ?? 0) & (1 << (bit & 31))) === 0) return;
    const slots = this.#slots;
    const mask = this.#mask;
    const wordLength = end - start;
    for (let slot = (hash ^ (hash >>> 16)) & mask; ; slot = (slot + 1) & mask) {
      const at = slot * SLOT_INTS;
      const slotLength = slots[at + 1] ?? 0;
      if (slotLength === 0) return;
      if (slots[at] !== hash || slotLength !== wordLength || !this.#sameRawWord(at, bytes, start, wordLength)) continue;
      const whole = slots[at + 2] ?? -1;
      if (whole !== -1) found.add(whole);
      const groupAndFlag = slots[at + 3] ?? 0;
      if ((groupAndFlag & 1) === 0) return;
      const group = groupAndFlag >>> 1;
      const last = this.#longerStart[group + 1] ?? 0;
      for (let k = this.#longerStart[group] ?? 0; k < last; k++) {
        const term = this.#longerTerms[k] ?? 0;
        const id = this.#terms.ids[term] ?? 0;
        if (found.has(id)) continue;
        const termEnd = rawTermEnd(bytes, length, start, this.#termText[term] ?? '');
        if (termEnd === -1) continue;
        // Past the end, or an ASCII character: a word character only if a letter or digit.
        if (
          this.#terms.needsEndEdge[term] === 1 &&
          termEnd < length &&
          bmpWordClass[bytes[termEnd] ?? 0] === 2 /* WordKind.edged */
        )
          continue;
        found.add(id);
      }
      return;
    }
  }

  /**
   * Reports the one-word prefix terms equal to `text[start, start + length)`, the first `length`
   * units of a word of normalized `text`, whose FNV-1a hash is `hash`.
   */
  prefix(text: string, start: number, length: number, hash: number, found: IdSet): void {
    const entries = this.#prefixEntries(hash);
    if (entries === undefined) return;
    for (const { text: prefix, id } of entries) {
      if (prefix.length !== length || found.has(id)) continue;
      if (text.startsWith(prefix, start)) found.add(id);
    }
  }

  /** {@link prefix} for ASCII text that is not normalized yet (capitals compare as small letters). */
  #rawPrefix(bytes: Uint8Array, start: number, length: number, hash: number, found: IdSet): void {
    const entries = this.#prefixEntries(hash);
    if (entries === undefined) return;
    for (const { text: prefix, id } of entries) {
      if (prefix.length !== length || found.has(id)) continue;
      let same = true;
      for (let i = 0; i < length && same; i++) same = prefix.charCodeAt(i) === foldAscii(bytes[start + i] ?? 0);
      if (same) found.add(id);
    }
  }

  /** The one-word prefix terms whose hash is `hash`, past the filter; undefined for none. */
  #prefixEntries(hash: number): readonly { readonly text: string; readonly id: number }[] | undefined {
    const bit = hash & (PREFIX_FILTER_BITS - 1);
    if (((this.#prefixFilter[bit >>> 5] ?? 0) & (1 << (bit & 31))) === 0) return undefined;
    return this.#prefixes.get(hash);
  }

  /** Whether `text[start, start + length)` is the word of the slot at `at` (`length` is the slot's). */
  #sameWord(at: number, text: string, start: number, length: number): boolean {
    const slots = this.#slots;
    const inline = Math.min(length, INLINE_UNITS);
    for (let i = 0; i < inline; i++) {
      const unit = ((slots[at + 4 + (i >> 1)] ?? 0) >>> ((i & 1) * 16)) & 0xffff;
      if (unit !== text.charCodeAt(start + i)) return false;
    }
    if (length > INLINE_UNITS) {
      const units = this.#wordUnits;
      const from = this.#wordStart[(slots[at + 3] ?? 0) >>> 1] ?? 0;
      for (let i = INLINE_UNITS; i < length; i++) {
        if (units[from + i] !== text.charCodeAt(start + i)) return false;
      }
    }
    return true;
  }

  /** `#sameWord` for raw ASCII `bytes`, whose capitals compare as their small letters. */
  #sameRawWord(at: number, bytes: Uint8Array, start: number, length: number): boolean {
    const slots = this.#slots;
    const inline = Math.min(length, INLINE_UNITS);
    for (let i = 0; i < inline; i++) {
      const unit = ((slots[at + 4 + (i >> 1)] ?? 0) >>> ((i & 1) * 16)) & 0xffff;
      if (unit !== foldAscii(bytes[start + i] ?? 0)) return false;
    }
    if (length > INLINE_UNITS) {
      const units = this.#wordUnits;
      const from = this.#wordStart[(slots[at + 3] ?? 0) >>> 1] ?? 0;
      for (let i = INLINE_UNITS; i < length; i++) {
        if (units[from + i] !== foldAscii(bytes[start + i] ?? 0)) return false;
      }
    }
    return true;
  }

  /**
   * If `text` is ASCII, splits it into words, not normalized yet (see
   * {@link TermAutomaton.findIn}), looks each one up as `normalizeText` would have spelled it
   * (small letters, whitespace runs as one space) and returns true; otherwise returns false and
   * adds nothing. The word characters of ASCII are the letters and digits, so words split the
   * same.
   */
  scanAscii(text: string, found: IdSet): boolean {
    const length = text.length;
    // Korean and Japanese text mostly starts above ASCII: turned away before any encoding.
    if (length > 0 && text.charCodeAt(0) >= 0x80) return false;
    let bytes = this.#bytes;
    if (bytes.length < length) {
      bytes = new Uint8Array(Math.max(length, 2 * bytes.length));
      this.#bytes = bytes;
    }
    // Any other character takes two or more bytes in UTF-8 (a lone surrogate three), so the text
    // is ASCII exactly when all of it fits in `length` bytes.
    const { read, written } = ASCII_BYTES.encodeInto(text, bytes);
    if (read !== length || written !== length) return false;
    const wordClass = bmpWordClass;
    const prefixLengths = this.#prefixLengths;
    const hasPrefixes = prefixLengths.length > 0;
    let start = -1;
    let hash = FNV_OFFSET;
    for (let i = 0; i < length; i++) {
      const unit = bytes[i] ?? 0;
      if (wordClass[unit] === 2 /* WordKind.edged */) {
        if (start === -1) {
          start = i;
          hash = FNV_OFFSET;
        }
        hash = Math.imul(hash ^ foldAscii(unit), FNV_PRIME);
        const read = i + 1 - start;
        if (hasPrefixes && read < prefixLengths.length && prefixLengths[read] === 1)
          this.#rawPrefix(bytes, start, read, hash, found);
      } else if (start !== -1) {
        this.#rawWord(bytes, length, start, i, hash, found);
        start = -1;
      }
    }
    if (start !== -1) this.#rawWord(bytes, length, start, length, hash, found);
    return true;
  }

  /**
   * Splits `text` into words and looks each one up; returns the highest code unit above ASCII in
   * `text` (0 for ASCII text).
   */
  scan(text: string, found: IdSet): number {
    const length = text.length;
    const wordClass = bmpWordClass;
    const prefixLengths = this.#prefixLengths;
    const hasPrefixes = prefixLengths.length > 0;
    let start = -1;
    let hash = FNV_OFFSET;
    let highest = 0;
    for (let i = 0; i < length; i++) {
      const unit = text.charCodeAt(i);
      if (unit < 0x80) {
        if (wordClass[unit] === 2 /* WordKind.edged */) {
          if (start === -1) {
            start = i;
            hash = FNV_OFFSET;
          }
          hash = Math.imul(hash ^ unit, FNV_PRIME);
          const read = i + 1 - start;
          if (hasPrefixes && read < prefixLengths.length && prefixLengths[read] === 1)
            this.prefix(text, start, read, hash, found);
        } else if (start !== -1) {
          this.word(text, start, i, hash, found);
          start = -1;
        }
        continue;
      }
      if (unit > highest) highest = unit;
      // Text is well-formed (normalizeText), so a high surrogate starts a pair.
      const pair = isHighSurrogate(unit) && i + 1 < length;
      if (pair ? isWordCodePoint(text.codePointAt(i) ?? 0) : isWordCodePoint(unit)) {
        if (start === -1) {
          start = i;
          hash = FNV_OFFSET;
        }
        hash = Math.imul(hash ^ unit, FNV_PRIME);
        if (pair) hash = Math.imul(hash ^ text.charCodeAt(i + 1), FNV_PRIME);
        const read = (pair ? i + 2 : i + 1) - start;
        if (hasPrefixes && read < prefixLengths.length && prefixLengths[read] === 1)
          this.prefix(text, start, read, hash, found);
      } else if (start !== -1) {
        this.word(text, start, i, hash, found);
        start = -1;
      }
      if (pair) i++;
    }
    if (start !== -1) this.word(text, start, length, hash, found);
    return highest;
  }
}

/**
 * Finds every term of a fixed set in normalized text, with the word-edge rule of
 * {@link containsTerm}, in one left-to-right pass per term family.
 *
 * Terms that start with a word character (a letter or digit of a script written with spaces) go
 * through a {@link WordTable}: one hash probe per word of text. The other terms (Hangul, kana,
 * CJK, Thai, leading punctuation) can begin anywhere and go through an Aho-Corasick automaton over
 * UTF-16 code units, stored as a double-array trie (a step is two typed-array reads); in
 * Latin-script text almost every character is outside its alphabet, which resets it at no cost.
 *
 * Why not `modern-ahocorasick` (installed): it matches whole grapheme clusters found with
 * `Intl.Segmenter`. `npx tsx bench/matching.ts` scans the same normalized texts of 10,000
 * synthetic articles for the 23,761 keywords of 20,000 rules with both: its fastest call,
 * `count()`, took about 130 ns per character (310 ms, about 3 s for a 100,000-article window
 * before any rule is checked) against about 24 ns here (56 ms), although this scan also checks
 * word edges and reports term ids. On Korean text alone it was slower still (about 800 ns per
 * character in an early test). Grapheme matching would also make "term occurs in text" differ
 * from the plain substring test that defines the semantics (it never matches part of a cluster,
 * such as a Devanagari consonant followed by a vowel sign), and it has no notion of word edges
 * that hold in some scripts and not in others.
 */
export class TermAutomaton {
  readonly #words: WordTable;
  readonly #anywhere: DoubleArrayTrie;
  readonly #anywhereTerms: TermTable;
  /**
   * The next anywhere term with the same text (-1: none): the exact and the prefix form of one
   * text end at the same trie state, which names the first of them.
   */
  readonly #nextSameText: Int32Array;
  /**
   * The lowest code unit an automaton term starts with. A text whose code units are all below it
   * (most Latin-script text, as Hangul and kana sit far above ASCII) cannot contain one, so the
   * automaton pass is skipped.
   */
  readonly #anywhereLowestFirst: number;
  /** Number of terms. */
  readonly size: number;

  /** @throws RangeError when a term is empty. */
  constructor(terms: readonly AutomatonTerm[]) {
    for (const term of terms) {
      if (term.text.length === 0) throw new RangeError(`automaton term ${term.id} is empty`);
    }
    this.size = terms.length;
    const wordStart = terms.filter((term) => startsWithWordCharacter(term.text));
    const anywhere = terms.filter((term) => !startsWithWordCharacter(term.text));
    this.#words = new WordTable(wordStart);
    const firstOfText = new Map<string, number>();
    const nextSameText = new Int32Array(anywhere.length).fill(-1);
    anywhere.forEach((term, index) => {
      const first = firstOfText.get(term.text);
      if (first === undefined) {
        firstOfText.set(term.text, index);
      } else {
        nextSameText[index] = nextSameText[first] ?? -1;
        nextSameText[first] = index;
      }
    });
    const firstIndexes = [...firstOfText.values()];
    this.#anywhere = buildAutomaton(firstIndexes.map((index) => anywhere[index]?.text ?? ''));
    // The trie numbers distinct texts; the scan wants the first term of each.
    const termAt = this.#anywhere.termAt;
    for (let state = 0; state < termAt.length; state++) {
      const text = termAt[state] ?? -1;
      if (text >= 0) termAt[state] = firstIndexes[text] ?? -1;
    }
    this.#nextSameText = nextSameText;
    this.#anywhereTerms = termTable(anywhere);
    this.#anywhereLowestFirst = anywhere.reduce((lowest, term) => Math.min(lowest, term.text.charCodeAt(0)), 0x10000);
  }

  /**
   * Adds to `found` the id of every term that occurs in `normalizeText(text)` with valid word
   * edges, like `scan(normalizeText(text), found)`. ASCII text, most of an English feed, is not
   * normalized at all: normalization changes nothing in it but capitals and whitespace runs,
   * which the word pass folds as it reads, and building the normalized copy (NFKC through ICU,
   * lowercasing, the whitespace regex) cost about as much as the scan itself. Text with any other
   * character, or term sets whose automaton terms start with ASCII punctuation, take the plain
   * path.
   */
  findIn(text: string, found: IdSet): void {
    if (this.#anywhereLowestFirst < 0x80 || !this.#words.scanAscii(text, found)) this.scan(normalizeText(text), found);
  }

  /**
   * Adds to `found` the id of every term that occurs in `text` with valid word edges. `text` must
   * come from {@link normalizeText} (in particular, well-formed UTF-16). Ids already in `found`
   * are not checked again, so one set can collect several texts and kinds.
   */
  scan(text: string, found: IdSet): void {
    // The word pass runs even without word terms: it is cheap and finds the highest code unit.
    const highest = this.#words.scan(text, found);
    if (this.#anywhereLowestFirst < 0x80 || highest >= this.#anywhereLowestFirst) this.#scanAnywhere(text, found);
  }

  #scanAnywhere(text: string, found: IdSet): void {
    const { symbolOf, base, check, fail, termAt, nextOutput } = this.#anywhere;
    const { ids, needsEndEdge } = this.#anywhereTerms;
    const nextSameText = this.#nextSameText;
    let state = 0;
    for (let i = 0; i < text.length; i++) {
      const symbol = symbolOf[text.charCodeAt(i)] ?? 0;
      if (symbol === 0) {
        state = 0;
        continue;
      }
      for (;;) {
        const next = (base[state] ?? 0) + symbol;
        if (check[next] === state) {
          state = next;
          break;
        }
        if (state === 0) break;
        state = fail[state] ?? 0;
      }
      for (let output = (termAt[state] ?? -1) >= 0 ? state : (nextOutput[state] ?? -1); output !== -1; ) {
        for (let term = termAt[output] ?? -1; term !== -1; term = nextSameText[term] ?? -1) {
          const id = ids[term] ?? 0;
          // Left edges need no check: these terms start with a character that is not a word character.
          if (!found.has(id) && (needsEndEdge[term] === 0 || !isWordAt(text, i + 1))) found.add(id);
        }
        output = nextOutput[output] ?? -1;
      }
    }
  }
}

// --- Text people see ---------------------------------------------------------------------------

/**
 * What {@link displayText} looks at: an emoji tag sequence (a flag such as England's, kept whole),
 * then one character of the kinds that change how text displays without being seen: format
 * characters (Unicode Cf: bidi controls such as U+202E RIGHT-TO-LEFT OVERRIDE, zero-width space
 * and joiners, word joiner, BOM, soft hyphen, invisible operators, tags), the Hangul fillers that
 * render as blank, and control characters (Cc).
 */
const HIDDEN = /\u{1F3F4}[\u{E0020}-\u{E007E}]+\u{E007F}|[\p{Cf}\u3164\uFFA0]|\p{Cc}/gu;
/** What may precede a zero-width joiner inside an emoji ZWJ sequence (👩‍💻, 👩🏽‍💻, ❤️‍🔥). */
const EMOJI_BEFORE_JOINER = /\p{Extended_Pictographic}|\p{Emoji_Modifier}|\uFE0F|\u20E3/u;
const EMOJI_AFTER_JOINER = /\p{Extended_Pictographic}/u;
/**
 * Scripts in which zero-width (non-)joiners are spelling, not decoration: Persian and Arabic
 * (ZWNJ in `می‌خواهم`), the Indic scripts (half forms, conjuncts), Mongolian, Myanmar, Khmer.
 */
const JOINING_SCRIPT =
  /[\p{Script=Arabic}\p{Script=Syriac}\p{Script=Nko}\p{Script=Mongolian}\p{Script=Devanagari}\p{Script=Bengali}\p{Script=Gurmukhi}\p{Script=Gujarati}\p{Script=Oriya}\p{Script=Tamil}\p{Script=Telugu}\p{Script=Kannada}\p{Script=Malayalam}\p{Script=Sinhala}\p{Script=Myanmar}\p{Script=Khmer}\p{Mn}\p{Mc}]/u;
const LETTER_OR_MARK = /[\p{L}\p{M}]/u;
/** A letter or mark of a script that spells with joiners (never a format character of one). */
const isJoiningLetter = (char: string): boolean => LETTER_OR_MARK.test(char) && JOINING_SCRIPT.test(char);

const ZWNJ = '\u200C';
const ZWJ = '\u200D';

/** The character that ends just before `index` (a whole surrogate pair), or ''. */
function charBefore(text: string, index: number): string {
  if (index <= 0) return '';
  const low = text.charCodeAt(index - 1);
  if (isLowSurrogate(low) && index >= 2 && isHighSurrogate(text.charCodeAt(index - 2))) {
    return text.slice(index - 2, index);
  }
  return text.slice(index - 1, index);
}

/** The character that starts at `index` (a whole surrogate pair), or ''. */
const charAt = (text: string, index: number): string => String.fromCodePoint(text.codePointAt(index) ?? 0x20);

/**
 * The one sanitizer of text that subscribers see (email subjects and bodies, SMS, Slack blocks and
 * fallback text, digests, the chat fields of the structured body). Provider text is untrusted: a
 * U+202E RIGHT-TO-LEFT OVERRIDE in a headline makes `…gnp.exe` read as `…exe.png`, zero-width
 * characters hide words from a reader (or split a name a reader trusts), and control characters
 * break subject lines and terminals. So it:
 *
 * - removes bidi controls (U+061C, U+200E/F, U+202A–E, U+2066–9) and every other invisible format
 *   character (zero-width space, word joiner, BOM, soft hyphen, tags, Hangul fillers);
 * - keeps the zero-width joiner inside emoji sequences (👨‍👩‍👧, 🏳️‍🌈, 👩🏽‍💻 stay one
 *   picture) and both joiners between letters of scripts that spell with them (Persian, Indic),
 *   and keeps emoji tag sequences (🏴󠁧󠁢󠁳󠁣󠁴󠁿);
 * - turns control characters into spaces, except line breaks (callers that want one line collapse
 *   those too);
 * - replaces lone surrogates with U+FFFD (SNS takes only valid UTF-8).
 *
 * Hangul, kana, CJK, combining marks and variation selectors are untouched.
 */
export function displayText(text: string): string {
  const wellFormed = (text as string & WellFormed).toWellFormed();
  return wellFormed.replace(HIDDEN, (hidden: string, offset: number) => {
    if (hidden.length > 2) return hidden; // an emoji tag sequence
    if (hidden === '\n') return hidden;
    if (/\p{Cc}/u.test(hidden)) return ' ';
    if (hidden === ZWJ || hidden === ZWNJ) {
      const before = charBefore(wellFormed, offset);
      const after = charAt(wellFormed, offset + 1);
      if (hidden === ZWJ && EMOJI_BEFORE_JOINER.test(before) && EMOJI_AFTER_JOINER.test(after)) return hidden;
      if (isJoiningLetter(before) && isJoiningLetter(after)) return hidden;
    }
    return '';
  });
}

// --- Article links -----------------------------------------------------------------------------

/**
 * Longest article link published, in characters of its ASCII (WHATWG) form: what browsers, mail
 * clients and sitemaps reliably handle. A longer one is provider garbage, not a link to read.
 */
export const MAX_LINK_LENGTH = 2048;

/** The outcome of {@link publishableLink}. */
export type ArticleLink = { readonly ok: true; readonly url: string } | { readonly ok: false; readonly reason: string };

/**
 * The article link policy: an alert vouches for the link it carries, so a link is published only
 * when it is an `https:` or `http:` address of the public web, without `user:password@` (which
 * makes `https://trusted.example@evil.example/` read as the trusted site), not pointing at a
 * loopback, private, link-local or metadata address or an internal host name (the subscriber's
 * browser would open it inside their own network: `http://169.254.169.254/…`,
 * `http://intranet/…`), and at most {@link MAX_LINK_LENGTH} characters. The address rules are the
 * product's one target-address policy (functions/shared/network-targets.ts), the same the CLI
 * and the synth apply to webhooks and the provider.
 *
 * @returns the link as subscribers see it (WHATWG form: punycode host, percent-encoded path, so
 *          bidi controls in a path cannot reorder it and an SMS stays GSM-7), or why it is not
 *          published (naming the host, never quoting the whole link, which may be 300 KB).
 */
export function publishableLink(raw: string): ArticleLink {
  const trimmed = raw
    .replace(/[\s\p{Cc}]+/gu, ' ')
    .trim()
    .replace(/ /g, '%20');
  if (trimmed === '') return { ok: false, reason: 'the article has no link' };
  const check = checkTargetUrl(trimmed, { protocols: ['https:', 'http:'] });
  if (!check.ok) return { ok: false, reason: `article link: ${check.reason}` };
  const url = check.url.href;
  if (url.length > MAX_LINK_LENGTH) {
    return {
      ok: false,
      reason: `article link: is ${url.length} characters long, over the ${MAX_LINK_LENGTH} a published link may have`,
    };
  }
  return { ok: true, url };
}
