/**
 * The rule query language: `(반도체 OR 메모리) AND 수출 -삼성`, `"interest rate hike"`,
 * `title:samsung NEAR/5 semicond*`. This module owns what a query means; the indexed matcher
 * (functions/core/matcher.ts) must agree with {@link evaluateQuery} on every article.
 *
 * ## Guarantees
 *
 * - {@link parseQuery} accepts exactly the grammar below and refuses everything else with a
 *   {@link QuerySyntaxError} that names the 1-based column (code points of the query as written)
 *   and what was expected. It throws nothing else, on any input, and its work is linear in the
 *   query's length: the length is checked before anything else, the lexer reads each code point
 *   once, and the recursion is bounded by {@link QUERY_LIMITS}.`depth`.
 * - {@link evaluateQuery} is the reference semantics: a plain scan of the article text for every
 *   term, written to be obviously right rather than fast, and yet linear in the text for any
 *   query: a leaf's occurrences are found in one pass (forEachOccurrence in text.ts) and a NEAR
 *   sweeps the two lists of occurrences once ({@link occursNear}), never pair by pair, so no
 *   crafted article can make one rule cost more than a fixed number of reads per character.
 * - {@link queryAnchors} is sound: every article for which the query is true contains at least one
 *   anchor (with the anchor's own field scope). The matcher files a query rule under its anchors in
 *   the keyword index and verifies only the candidates.
 *
 * ## Syntax
 *
 * | Form | Meaning |
 * | --- | --- |
 * | `samsung`, `반도체` | a term (same rules as a keyword: whole words in scripts written with spaces, Korean/Japanese/Chinese/Thai inside words) |
 * | `semicond*` | prefix: a word (of a script written with spaces) starting with `semicond` |
 * | `"interest rate hike"` | a phrase: the words in order, any whitespace between |
 * | `a b`, `a AND b` | both |
 * | `a OR b` | either |
 * | `NOT a`, `-a`, `-"a b"`, `-(a OR b)` | not |
 * | `a NEAR/5 b` | both in the same field with at most 5 words between them, either order (characters when a side is in a script written without spaces: Han, kana, Thai...) |
 * | `( … )` | grouping |
 * | `title:a`, `summary:"a b"`, `title:(a OR b)` | scope to the title or the summary (default: either, never across the two) |
 *
 * Precedence: NOT > NEAR > AND > OR. Operators are uppercase; `and`, `or`, `not` are plain terms,
 * and `"OR"` searches for the word "or".
 *
 * Full-width and other compatibility forms of the ASCII characters above (`（` `）` `＂` `ＡＮＤ`
 * `：` `－` `＊`, what Japanese, Chinese and Korean input methods type) read as those characters,
 * one for one, so columns are unchanged. Typographic double quotes (`“ ”`) outside a phrase and
 * control characters are refused with the fix: they would make terms that never match what was
 * meant. A typed dash (`–` `—` `−` `‐`) is text, as it always was, so a stored query keeps matching
 * as it did; where `-` would negate (before a term, phrase or group, not before a figure such as
 * `−10`, `–$10` or `−.5%`) {@link typedDashProblems} names it for the person writing a rule, and the
 * CLI and the console refuse one a write adds.
 *
 * ## Semantics
 *
 * - Terms and phrases match exactly as keywords do (functions/core/matcher.ts, `containsTerm` in
 *   functions/core/text.ts): both sides normalized by `normalizeText`; where a term starts (ends)
 *   with a letter or digit of a script written with spaces (Latin, Cyrillic, Greek, Arabic...),
 *   the character before (after) it must not be one; Hangul, kana, CJK and Thai terms match inside
 *   words (WordKind in text.ts); a phrase's words match across any whitespace. A prefix term
 *   (`semicond*`) checks the start edge only. A leaf is true when it occurs in the title or the
 *   summary (`any`), or in its scoped field.
 * - `a NEAR/n b` is true when, in one field (the title, or the summary), there are two separate
 *   (non-overlapping) occurrences of `a` and `b`, in either order, with at most n words between
 *   them. A word is a maximal run of letters, marks and digits of any script (so in scripts with
 *   word edges, exactly the unit a term matches whole), and only words wholly between the
 *   occurrences count: the rest of a word an occurrence starts (`semicond|uctors`, `반도체|가`)
 *   does not, and punctuation is not a word. When either side contains a letter of a script
 *   written without spaces (Han, kana, Thai, Lao, Khmer, Myanmar, Tibetan) the distance is in
 *   characters instead: at most n code points,
 *   spaces and punctuation included, between the two occurrences (`半導体 NEAR/1 輸出` matches
 *   `半導体の輸出`).
 * - AND, OR and NOT are the boolean operators. Reasons ({@link evaluateQuery}) are the true leaves
 *   outside any NOT, as written (with their field scope), in query order, each once.
 *
 * ## Why hand-written
 *
 * A small recursive-descent parser (one token of lookahead, one function per precedence level).
 * The npm boolean-query parsers (search-query-parser, boolean-query, liqe's Lucene dialect) have no
 * `NEAR/n`, no way to report the column and the expected token in our words, and different rules
 * for `-`, fields and wildcards; a parser generator (peggy, nearley) would add a build step and a
 * runtime to the alert function bundle for a grammar of a dozen productions.
 */
import { NewsAlertsError } from './errors.ts';
import { hasVisibleCharacter, isBidiControl, listCodePoints } from './hostile-text.ts';
import type { MatchReason } from './model.ts';
import {
  forEachOccurrence,
  hasUnspacedScript,
  isWordAt,
  isWordBefore,
  isWordCodePoint,
  isWordPartCodePoint,
  normalizeText,
  startsWithWordCharacter,
} from './text.ts';

/** Limits of one query, enforced by {@link parseQuery} (and so by the rule schema). */
export const QUERY_LIMITS = {
  /** Characters (code points) of the query as written. */
  length: 1000,
  /** Parentheses and negations nested inside each other. */
  depth: 8,
  /** Terms and phrases. */
  terms: 50,
  /** Largest n of `NEAR/n`. */
  nearDistance: 50,
} as const;

/** Where a term must occur. `any` = title or summary (never across the two, as keywords today). */
export type QueryField = 'any' | 'title' | 'summary';

/** A parsed query. Leaves carry the 1-based column where they start in the query as written. */
export type QueryNode =
  /** One term as written (`semicond*`, `반도체`); `norm` = normalizeText(text without the `*`). */
  | {
      readonly type: 'term';
      readonly text: string;
      readonly norm: string;
      readonly prefix: boolean;
      readonly field: QueryField;
      readonly column: number;
    }
  /** `"interest rate hike"`: the words in order, any whitespace between (same as a multi-word keyword). */
  | {
      readonly type: 'phrase';
      readonly text: string;
      readonly norm: string;
      readonly field: QueryField;
      readonly column: number;
    }
  | { readonly type: 'and'; readonly children: readonly QueryNode[] }
  | { readonly type: 'or'; readonly children: readonly QueryNode[] }
  | { readonly type: 'not'; readonly child: QueryNode }
  /** `a NEAR/5 b`: operands are terms or phrases only. */
  | { readonly type: 'near'; readonly distance: number; readonly left: QueryNode; readonly right: QueryNode };

/** A term or a phrase: what can occur in a text. */
export type QueryLeaf = QueryNode & { type: 'term' | 'phrase' };

/** A query that does not parse. The message names the column and what was expected. */
export class QuerySyntaxError extends NewsAlertsError {
  /** 1-based, in code points of the query as written. */
  readonly column: number;
  /** What the parser expected at `column` (`')'`, `a term, phrase or group`, ...). */
  readonly expected: string;
  constructor(message: string, details: { column: number; expected: string }, options?: ErrorOptions) {
    super(message, options);
    this.name = 'QuerySyntaxError';
    this.column = details.column;
    this.expected = details.expected;
  }
}

// --- Lexer -------------------------------------------------------------------------------------

type Token =
  | { readonly kind: 'open' | 'close' | 'and' | 'or' | 'not' | 'minus' | 'end'; readonly column: number }
  | { readonly kind: 'near'; readonly column: number; readonly distance: number }
  /** `prefix`: the word ends with `*` (or a form of it, such as `＊`). */
  | { readonly kind: 'word'; readonly column: number; readonly text: string; readonly prefix: boolean }
  | { readonly kind: 'phrase'; readonly column: number; readonly text: string }
  | { readonly kind: 'field'; readonly column: number; readonly field: 'title' | 'summary' };

const OPERAND = 'a term, phrase or group';
const isSpace = (char: string | undefined): boolean => char !== undefined && /^\s$/u.test(char);
/** Characters that end a word: whitespace, parentheses and the phrase quote. */
const endsWord = (char: string | undefined): boolean =>
  char === undefined || char === '(' || char === ')' || char === '"' || isSpace(char);
const isAsciiLetter = (char: string | undefined): boolean => char !== undefined && /^[A-Za-z]$/.test(char);

const fail = (message: string, column: number, expected: string): never => {
  throw new QuerySyntaxError(message, { column, expected });
};

/** How a token reads in a message. */
function describeToken(token: Token): string {
  switch (token.kind) {
    case 'open':
      return "'('";
    case 'close':
      return "')'";
    case 'and':
      return "'AND'";
    case 'or':
      return "'OR'";
    case 'not':
      return "'NOT'";
    case 'minus':
      return "'-'";
    case 'near':
      return `'NEAR/${token.distance}'`;
    case 'field':
      return `'${token.field}:'`;
    case 'word':
      return `'${token.text}'`;
    case 'phrase':
      return 'a phrase';
    case 'end':
      return 'the end of the query';
  }
}

/** A control character that is not whitespace (NUL, ESC, DEL, C1): nothing anyone types or sees. */
const isControl = (char: string): boolean => /^\p{Cc}$/u.test(char) && !isSpace(char);

/**
 * Refuses characters no query needs and that make it read differently from what it matches.
 * Invisible format characters (zero-width space, soft hyphen, joiners) are not refused: terms are
 * normalized as article text is, which drops them, so `sam\u200Bsung` is `samsung` on both sides.
 */
function checkCharacters(chars: readonly string[]): void {
  for (const [index, char] of chars.entries()) {
    const codePoint = char.codePointAt(0) ?? 0;
    if (isControl(char)) {
      fail(
        `a control character (${listCodePoints(char)}) at column ${index + 1} shows as nothing and matches nothing a reader sees; delete it and type the query again`,
        index + 1,
        'a visible character',
      );
    }
    if (codePoint >= 0xd800 && codePoint <= 0xdfff) {
      fail(
        `not valid Unicode text at column ${index + 1} (a lone surrogate); type the query again`,
        index + 1,
        'a character',
      );
    }
    if (isBidiControl(codePoint)) {
      fail(
        `a bidirectional control character (${listCodePoints(char)}) at column ${index + 1} reorders what a reader sees; type the query without it`,
        index + 1,
        'a visible character',
      );
    }
  }
}

/**
 * The character the lexer reads for one of the query as written: the character itself, or, for a
 * compatibility form of a printable ASCII character, that character. Japanese, Chinese and Korean
 * input methods type full-width forms by default (`（` `）` `＂` `ＡＮＤ` `：` `－` `＊` `／`), so
 * `（半導体 OR メモリ）` and `samsung ＡＮＤ chip` read as they look (small and vertical forms such as
 * `﹙` and `︵` too). One character for one, so columns stay those of the query as written; terms
 * keep the characters as written (they are normalized like article text anyway).
 */
export function syntaxForm(char: string): string {
  if ((char.codePointAt(0) ?? 0) < 0x80) return char;
  const folded = char.normalize('NFKC');
  const unit = folded.charCodeAt(0);
  return folded.length === 1 && unit > 0x20 && unit < 0x7f ? folded : char;
}

/**
 * Typographic double quotes, which word processors and phone keyboards type for `"`: outside a
 * phrase they would be part of a term (`“interest`), which never matches what was meant.
 */
export const TYPOGRAPHIC_QUOTES: ReadonlySet<string> = new Set([
  '\u201C',
  '\u201D',
  '\u201E',
  '\u201F',
  '\u2033',
  '\u2036',
  '\u301D',
  '\u301E',
  '\u301F',
]);

/**
 * Dashes that word processors, phone keyboards and typeset documents put where `-` was typed
 * (autocorrect turns `-` into an en or em dash), by name. Before a word they would be part of a
 * term (`–rumor`), which never matches, where a NOT was meant. Forms NFKC folds to `-` (`－`,
 * `﹣`) already read as `-` (see {@link syntaxForm}).
 */
export const TYPOGRAPHIC_DASHES: ReadonlyMap<string, string> = new Map([
  ['\u2010', 'hyphen'],
  ['\u2011', 'non-breaking hyphen'],
  ['\u2012', 'figure dash'],
  ['\u2013', 'en dash'],
  ['\u2014', 'em dash'],
  ['\u2015', 'horizontal bar'],
  ['\u2212', 'minus sign'],
  ['\uFE58', 'small em dash'],
]);

/** Refuses a typographic quote at `at` (outside a phrase), showing the phrase in straight quotes. */
function refuseTypographicQuote(chars: readonly string[], at: number): never {
  let close = at + 1;
  while (close < chars.length && !TYPOGRAPHIC_QUOTES.has(chars[close] ?? '')) close++;
  const inner = chars
    .slice(at + 1, close)
    .join('')
    .trim()
    .replace(/\s+/gu, ' ');
  return fail(
    `a typographic quote (${chars[at]}) at column ${at + 1} does not make a phrase; type straight double quotes instead: "${inner || '…'}"`,
    at + 1,
    'a straight double quote (")',
  );
}

/**
 * A typed dash (en dash, minus sign, ...) starting a token before an operand, where `-` (NOT) was
 * probably meant: the query reads it as text (`–rumor` is one term, as it always was, so stored
 * rules keep matching as they did), and {@link typedDashProblems} names it where a person writes a
 * rule. `text` is the dash with its operand (`–rumor`), to compare a written query with the stored one.
 */
export interface TypedDashProblem {
  readonly column: number;
  readonly text: string;
  readonly message: string;
}

/**
 * Describes a typed dash that starts a token and is followed by an operand: it is part of the term
 * (`–rumor`), which matches nothing, where `-` (NOT) was meant. A dash on its own, inside a word
 * (`COVID–19`) or before a figure (`−10도`, `–$10`, `−.5%`, `—½`) is not described.
 */
function describeTypedDash(
  written: readonly string[],
  chars: readonly string[],
  at: number,
  afterField: boolean,
): TypedDashProblem {
  const char = written[at] ?? '';
  // After `title:` the NOT goes before the scope: `-title:rumor` (`title:-rumor` does not parse).
  let field = '';
  if (afterField) {
    let start = at - 1;
    while (isAsciiLetter(chars[start - 1])) start--;
    field = chars.slice(start, at).join('');
  }
  const next = chars[at + 1];
  let operand: string;
  if (next === '(') {
    let close = at + 1;
    for (let depth = 0; close < chars.length; close++) {
      depth += chars[close] === '(' ? 1 : chars[close] === ')' ? -1 : 0;
      if (depth === 0) break;
    }
    operand = close < chars.length ? chars.slice(at + 1, close + 1).join('') : '(…)';
  } else if (next === '"') {
    const close = chars.indexOf('"', at + 2);
    operand = close === -1 ? '"…"' : chars.slice(at + 1, close + 1).join('');
  } else {
    let end = at + 1;
    while (!endsWord(chars[end])) end++;
    operand = chars.slice(at + 1, end).join('');
  }
  const literal =
    next === '(' || next === '"' ? '' : ` (to search for the dash itself, put it in a phrase: "${char}${operand}")`;
  return {
    column: at + 1,
    text: `${char}${operand}`,
    message: `${TYPOGRAPHIC_DASHES.get(char) ?? 'a dash'} (${char}, ${listCodePoints(char)}) at column ${at + 1} is not NOT; write -${field}${operand} with an ASCII hyphen-minus for NOT${literal}`,
  };
}

/** A number of any kind (`1`, `١`, `½`) or a currency sign: after a typed dash, a figure, not a NOT. */
const FIGURE = /^[\p{N}\p{Sc}]$/u;
const NUMBER = /^\p{N}$/u;

function lex(written: readonly string[], typedDashes?: TypedDashProblem[]): Token[] {
  const chars = written.map(syntaxForm);
  const tokens: Token[] = [];
  let at = 0;
  /** Where the code point after the last `field:` is: a `-` there starts a token too. */
  let afterField = -1;
  while (at < chars.length) {
    const char = chars[at];
    const column = at + 1;
    const next = chars[at + 1];
    if (
      typedDashes !== undefined &&
      TYPOGRAPHIC_DASHES.has(char ?? '') &&
      (at === 0 || at === afterField || endsWord(chars[at - 1])) &&
      next !== undefined &&
      !isSpace(next) &&
      next !== ')' &&
      // Before a figure it is a minus sign (`기온 −10도`, `日経平均 −1000円`, `–$10`, `−.5%`, `—½`).
      !FIGURE.test(next) &&
      !(next === '.' && NUMBER.test(chars[at + 2] ?? ''))
    ) {
      typedDashes.push(describeTypedDash(written, chars, at, at === afterField));
    }
    // Whatever it was meant as, the dash is read as text, as it always was: a stored query keeps
    // matching exactly as before, and the run never skips its rule for it.
    if (isSpace(char)) {
      at++;
    } else if (char === '(' || char === ')') {
      tokens.push({ kind: char === '(' ? 'open' : 'close', column });
      at++;
    } else if (char === '"') {
      let close = at + 1;
      while (close < chars.length && chars[close] !== '"') close++;
      if (close >= chars.length) {
        fail(`unterminated phrase starting at column ${column}; add the closing '"'`, column, "'\"'");
      }
      const star = chars.slice(at + 1, close).indexOf('*');
      if (star !== -1) {
        fail(
          `'*' at column ${at + 2 + star} is not a wildcard inside a phrase; remove it, or write the words as terms (semicond* exports)`,
          at + 2 + star,
          'a phrase without *',
        );
      }
      const text = written
        .slice(at + 1, close)
        .join('')
        .trim()
        .replace(/\s+/gu, ' ');
      if (text === '') fail(`empty phrase at column ${column}; write words between the quotes`, column, 'a word');
      if (!hasVisibleCharacter(text)) {
        fail(
          `the phrase at column ${column} has no visible character (only ${listCodePoints(text)}); remove it or type the words`,
          column,
          'a visible character',
        );
      }
      tokens.push({ kind: 'phrase', column, text });
      at = close + 1;
    } else if (char === '-' && (at === 0 || at === afterField || endsWord(chars[at - 1]))) {
      // `-` starting a token negates; inside a word (`AI-driven`, `K-pop`) it is part of the word.
      const next = chars[at + 1];
      if (next === undefined || isSpace(next) || next === ')' || next === '-') {
        fail(
          `'-' at column ${column} must be followed directly by a term, phrase or group (no space), e.g. -삼성 or -"sponsored content"`,
          column,
          OPERAND,
        );
      }
      tokens.push({ kind: 'minus', column });
      at++;
    } else {
      // A field scope: ASCII letters and a colon at the start of a word (`title:`).
      let letters = at;
      while (isAsciiLetter(chars[letters])) letters++;
      if (letters > at && chars[letters] === ':') {
        const name = chars.slice(at, letters).join('');
        const field = name.toLowerCase();
        if (field !== 'title' && field !== 'summary') {
          fail(
            `unknown field '${name}:' at column ${column} (did you mean title: or summary:?); to search for text with a colon, put it in quotes: "${name}:…"`,
            column,
            "'title:' or 'summary:'",
          );
        }
        const next = chars[letters + 1];
        if (next === undefined || isSpace(next) || next === ')') {
          fail(
            `'${name}:' at column ${column} needs a term, phrase or group right after it, with no space (e.g. ${field}:반도체 or ${field}:"interest rate")`,
            column,
            OPERAND,
          );
        }
        tokens.push({ kind: 'field', column, field: field as 'title' | 'summary' });
        at = letters + 1;
        afterField = at;
        continue;
      }
      let end = at;
      while (!endsWord(chars[end])) {
        if (TYPOGRAPHIC_QUOTES.has(chars[end] ?? '')) refuseTypographicQuote(written, end);
        end++;
      }
      tokens.push(wordToken(written.slice(at, end).join(''), chars.slice(at, end), column));
      at = end;
    }
  }
  tokens.push({ kind: 'end', column: chars.length + 1 });
  return tokens;
}

const NEAR_FORM = /^NEAR\/(\d{1,3})$/;

/**
 * The token of a word: `text` as written, `chars` as the lexer reads it (see syntaxForm), one
 * for each code point of `text`.
 */
function wordToken(text: string, chars: readonly string[], column: number): Token {
  const read = chars.join('');
  if (read === 'AND') return { kind: 'and', column };
  if (read === 'OR') return { kind: 'or', column };
  if (read === 'NOT') return { kind: 'not', column };
  if (read === 'NEAR' || read.startsWith('NEAR/')) {
    const distance = Number(NEAR_FORM.exec(read)?.[1] ?? Number.NaN);
    if (!(distance >= 1 && distance <= QUERY_LIMITS.nearDistance)) {
      fail(
        `NEAR/n needs a number 1–${QUERY_LIMITS.nearDistance} at column ${column} (e.g. NEAR/5: at most 5 words between the two terms)`,
        column,
        `a number 1–${QUERY_LIMITS.nearDistance}`,
      );
    }
    return { kind: 'near', column, distance };
  }
  const star = chars.indexOf('*');
  if (star !== -1) {
    const before = chars[star - 1];
    if (star !== chars.length - 1 || before === undefined || !isWordCodePoint(before.codePointAt(0) ?? 0)) {
      fail(
        `'*' at column ${column + star} is only allowed at the end of a word in a script written with spaces, such as Latin, Cyrillic or Greek (Korean, Japanese, Chinese and Thai terms already match inside words)`,
        column + star,
        'a letter or digit of a script written with spaces before a final *',
      );
    }
    // A variation selector or a combining mark passes the test above, and is dropped or matches
    // nothing a reader sees: a prefix of no letter or digit would look empty and match anything.
    const stem = [...text].slice(0, -1).join('');
    if (!/[\p{L}\p{N}]/u.test(normalizeText(stem))) {
      fail(
        `the prefix before '*' at column ${column} has no letter or digit (only ${listCodePoints(stem)}); type the start of a word, e.g. semicond*`,
        column,
        'a letter or digit before a final *',
      );
    }
  }
  if (!hasVisibleCharacter(text)) {
    fail(
      `the term at column ${column} has no visible character (only ${listCodePoints(text)}), so it would match text no reader can see; remove it or type the word`,
      column,
      'a visible character',
    );
  }
  return { kind: 'word', column, text, prefix: star !== -1 };
}

// --- Parser ------------------------------------------------------------------------------------

/** Tokens that can start an operand (of AND, OR, implicit AND). */
const startsOperand = (token: Token): boolean =>
  token.kind === 'word' ||
  token.kind === 'phrase' ||
  token.kind === 'open' ||
  token.kind === 'minus' ||
  token.kind === 'not' ||
  token.kind === 'field';

class Parser {
  readonly #tokens: readonly Token[];
  #position = 0;
  #depth = 0;
  #terms = 0;
  /** The field scope in force and the column of the `field:` that set it. */
  #field: { field: 'title' | 'summary'; column: number } | undefined;

  constructor(tokens: readonly Token[]) {
    this.#tokens = tokens;
  }

  get #peek(): Token {
    return this.#tokens[this.#position] ?? { kind: 'end', column: 0 };
  }

  #next(): Token {
    const token = this.#peek;
    if (token.kind !== 'end') this.#position++;
    return token;
  }

  query(): QueryNode {
    const node = this.#or();
    const rest = this.#peek;
    if (rest.kind === 'close') {
      fail(`unexpected ')' at column ${rest.column}: no '(' is open`, rest.column, 'the end of the query');
    }
    if (rest.kind !== 'end') {
      fail(`unexpected ${describeToken(rest)} at column ${rest.column}`, rest.column, 'the end of the query');
    }
    return node;
  }

  #or(): QueryNode {
    const children = [this.#and()];
    while (this.#peek.kind === 'or') {
      const operator = this.#next();
      children.push(this.#and(operator));
    }
    return children.length === 1 ? (children[0] as QueryNode) : { type: 'or', children };
  }

  #and(after?: Token): QueryNode {
    const children = [this.#near(after)];
    for (;;) {
      const token = this.#peek;
      if (token.kind === 'and') {
        this.#next();
        children.push(this.#near(token));
      } else if (startsOperand(token)) {
        children.push(this.#near());
      } else {
        break;
      }
    }
    return children.length === 1 ? (children[0] as QueryNode) : { type: 'and', children };
  }

  #near(after?: Token): QueryNode {
    const start = this.#peek;
    let left = this.#unary(after);
    while (this.#peek.kind === 'near') {
      const operator = this.#next() as Token & { kind: 'near' };
      this.#checkNearOperand(left, start, operator);
      const rightStart = this.#peek;
      const right = this.#unary(operator);
      this.#checkNearOperand(right, rightStart, operator);
      if (
        isLeaf(left) &&
        isLeaf(right) &&
        left.field !== 'any' &&
        right.field !== 'any' &&
        left.field !== right.field
      ) {
        fail(
          `NEAR/${operator.distance} at column ${operator.column} joins a ${left.field}: term and a ${right.field}: term, which can never be near each other; scope both to one field`,
          operator.column,
          'operands in the same field',
        );
      }
      left = { type: 'near', distance: operator.distance, left, right };
    }
    return left;
  }

  #checkNearOperand(node: QueryNode, start: Token, operator: Token & { kind: 'near' }): void {
    if (isLeaf(node)) return;
    const what =
      node.type === 'near'
        ? `another NEAR (combine NEAR expressions with AND)`
        : node.type === 'not'
          ? 'a negation'
          : 'a group';
    fail(
      `NEAR operands must be terms or phrases: the operand of NEAR/${operator.distance} at column ${start.column} is ${what}`,
      start.column,
      'a term or phrase',
    );
  }

  #unary(after?: Token): QueryNode {
    const token = this.#peek;
    if (token.kind === 'not' || token.kind === 'minus') {
      this.#next();
      this.#enter(token);
      const child = token.kind === 'not' ? this.#unary(token) : this.#primary(token);
      this.#depth--;
      // `NOT NOT x` is `x`: kept as a double negation, it had no anchors, so a rule of `NOT NOT
      // samsung` alone was refused for want of matchAll though it requires samsung.
      return child.type === 'not' ? child.child : { type: 'not', child };
    }
    return this.#primary(after);
  }

  #primary(after?: Token): QueryNode {
    const token = this.#next();
    switch (token.kind) {
      case 'word':
        return this.#leaf(token);
      case 'phrase':
        return this.#leaf(token);
      case 'open': {
        this.#enter(token);
        if (this.#peek.kind === 'close') {
          fail(`empty group '()' at column ${token.column}; put terms inside or remove it`, token.column, OPERAND);
        }
        const inner = this.#or();
        const close = this.#next();
        if (close.kind !== 'close') {
          fail(
            `expected ')' at column ${close.column} to close the '(' at column ${token.column}`,
            close.column,
            "')'",
          );
        }
        this.#depth--;
        return inner;
      }
      case 'field': {
        const outer = this.#field;
        if (outer !== undefined && outer.field !== token.field) {
          fail(
            `'${token.field}:' at column ${token.column} is inside '${outer.field}:' at column ${outer.column}; a term is in one field only`,
            token.column,
            OPERAND,
          );
        }
        const next = this.#peek;
        if (next.kind !== 'word' && next.kind !== 'phrase' && next.kind !== 'open') {
          fail(
            `'${token.field}:' at column ${token.column} needs a term, phrase or group right after it (e.g. ${token.field}:반도체), not ${describeToken(next)}${next.kind === 'minus' ? ` (to exclude, write -${token.field}:…)` : ''}`,
            token.column,
            OPERAND,
          );
        }
        this.#field = outer ?? { field: token.field, column: token.column };
        const scoped = this.#primary(token);
        this.#field = outer;
        return scoped;
      }
      default:
        return this.#unexpected(token, after);
    }
  }

  #unexpected(token: Token, after: Token | undefined): never {
    const isOperator = token.kind === 'and' || token.kind === 'or' || token.kind === 'near';
    if (isOperator && after === undefined) {
      const where = this.#position === 1 ? 'a query' : 'a group';
      return fail(
        `unexpected ${describeToken(token)} at column ${token.column}: ${where} cannot start with an operator`,
        token.column,
        OPERAND,
      );
    }
    const context = after === undefined ? '' : ` after ${describeToken(after)} at column ${after.column}`;
    if (token.kind === 'end') {
      return fail(`expected ${OPERAND} at column ${token.column}${context}`, token.column, OPERAND);
    }
    return fail(
      `unexpected ${describeToken(token)} at column ${token.column}: expected ${OPERAND}${context}`,
      token.column,
      OPERAND,
    );
  }

  /** Enters a nesting level (a group or a negation), refusing one beyond the limit. */
  #enter(token: Token): void {
    this.#depth++;
    if (this.#depth > QUERY_LIMITS.depth) {
      fail(
        `the query nests more than ${QUERY_LIMITS.depth} levels of parentheses and NOT at column ${token.column}; simplify it`,
        token.column,
        `at most ${QUERY_LIMITS.depth} levels`,
      );
    }
  }

  #leaf(token: Token & { kind: 'word' | 'phrase' }): QueryLeaf {
    this.#terms++;
    if (this.#terms > QUERY_LIMITS.terms) {
      fail(
        `the query has more than ${QUERY_LIMITS.terms} terms (the one at column ${token.column} is term ${this.#terms}); split it over several rules`,
        token.column,
        `at most ${QUERY_LIMITS.terms} terms`,
      );
    }
    const field = this.#field?.field ?? 'any';
    if (token.kind === 'phrase') {
      return { type: 'phrase', text: token.text, norm: normalizeText(token.text), field, column: token.column };
    }
    const { prefix, text } = token;
    return {
      type: 'term',
      text,
      // The star is one code unit, whichever form of it was typed.
      norm: normalizeText(prefix ? text.slice(0, -1) : text),
      prefix,
      field,
      column: token.column,
    };
  }
}

/** Whether a node is a term or a phrase. */
export const isLeaf = (node: QueryNode): node is QueryLeaf => node.type === 'term' || node.type === 'phrase';

/** The code points of `text` (a lone surrogate counts as one), without building an array of them. */
function codePointCount(text: string): number {
  let count = 0;
  for (let index = 0; index < text.length; index++) {
    const unit = text.charCodeAt(index);
    const next = text.charCodeAt(index + 1);
    if (unit >= 0xd800 && unit <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) index++;
    count++;
  }
  return count;
}

/**
 * Parses a rule query. Throws {@link QuerySyntaxError} (and nothing else) for a query that does
 * not parse or breaks {@link QUERY_LIMITS}, with a message such as
 * `expected ')' at column 23 to close the '(' at column 5`.
 */
export function parseQuery(text: string): QueryNode {
  const limit = QUERY_LIMITS.length;
  // Characters are code points, as the limit and the columns count them (not UTF-16 units: an
  // emoji is one character), counted before the query is split into them.
  const length = codePointCount(text);
  if (length > limit) {
    fail(
      `the query is ${length} characters long; at most ${limit} are allowed (column ${limit + 1} is over): split it over several rules`,
      limit + 1,
      `at most ${limit} characters`,
    );
  }
  const chars = Array.from(text);
  checkCharacters(chars);
  const tokens = lex(chars);
  if (tokens.length === 1) {
    fail('the query is empty; write at least one term, or remove the query attribute', 1, OPERAND);
  }
  return new Parser(tokens).query();
}

/**
 * The typed dashes of `query` that start a token before an operand (`chips –rumor`), where `-`
 * (NOT) was probably meant, each with the ASCII form to write. {@link parseQuery} reads them as
 * text, as it always did; this is advice for the person writing a rule. Empty for a query that
 * does not parse (its syntax error says more).
 */
export function typedDashProblems(query: string): TypedDashProblem[] {
  const found: TypedDashProblem[] = [];
  try {
    lex(Array.from(query), found);
  } catch (error) {
    if (!(error instanceof QuerySyntaxError)) throw error;
    return [];
  }
  return found;
}

/**
 * The typed dashes {@link typedDashProblems} names in `query` (a rule's query as written), less
 * those the stored rule's query (`stored`) already has: a stored one is matched as it always was,
 * and refusing it would stop every other edit of the rule.
 */
export function newTypedDashProblems(query: unknown, stored?: unknown): TypedDashProblem[] {
  return newProblems(typedDashProblems, query, stored);
}

/** What `find` names in `query`, less as many of each text as it names in `stored`. */
function newProblems(find: (query: string) => TypedDashProblem[], query: unknown, stored: unknown): TypedDashProblem[] {
  if (typeof query !== 'string') return [];
  const kept = new Map<string, number>();
  for (const { text } of typeof stored === 'string' ? find(stored) : []) {
    kept.set(text, (kept.get(text) ?? 0) + 1);
  }
  return find(query).filter(({ text }) => {
    const left = kept.get(text) ?? 0;
    kept.set(text, left - 1);
    return left <= 0;
  });
}

const OPERATORS = ['AND', 'OR', 'NOT', 'NEAR'] as const;
const SYMBOL_OPERATORS: Readonly<Record<string, string>> = { '&': 'AND', '&&': 'AND', '|': 'OR', '||': 'OR', '!': '-' };

/**
 * `ADN`, `ANDD`: an operator with two neighbouring letters swapped, or one letter doubled (typing
 * slips; words such as EARN or TON are not taken for NEAR or NOT).
 */
function misspeltOperator(word: string): string | undefined {
  if (!/^[A-Z]{3,5}$/.test(word) || (OPERATORS as readonly string[]).includes(word)) return undefined;
  return OPERATORS.find((operator) =>
    [...operator].some(
      (_, at) =>
        operator.slice(0, at + 1) + operator.slice(at) === word ||
        (at + 1 < operator.length &&
          `${operator.slice(0, at)}${operator[at + 1]}${operator[at]}${operator.slice(at + 2)}` === word),
    ),
  );
}

/**
 * Words of `query` that read as terms where an operator was probably meant: an operator in lower
 * case (`chip or memory` finds articles holding the word "or"), misspelt (`ADN`, `ANDD`), run into
 * its distance (`NEAR5`) or written as a symbol (`&&`, `||`). {@link parseQuery} reads them as
 * terms, as the documented syntax says; this is advice for the person writing a rule, who can put
 * a word meant as a word in quotes. Empty for a query that does not parse.
 */
export function operatorLookalikes(query: string): TypedDashProblem[] {
  let tree: QueryNode;
  try {
    tree = parseQuery(query);
  } catch (error) {
    if (!(error instanceof QuerySyntaxError)) throw error;
    return [];
  }
  const found: TypedDashProblem[] = [];
  for (const leaf of queryLeaves(tree)) {
    if (leaf.type !== 'term' || leaf.prefix) continue;
    const { text, column } = leaf;
    const upper = text.toUpperCase();
    const at = `"${text}" (column ${column})`;
    const keep = `put it in quotes ("${text}") if the word is meant`;
    let meant: string | undefined;
    if ((OPERATORS as readonly string[]).includes(upper) && text !== upper) meant = upper;
    else if (/^near\/\d+$/i.test(text)) meant = upper;
    else if (/^NEAR\d+$/i.test(text)) meant = `NEAR/${text.slice(4)}`;
    else meant = SYMBOL_OPERATORS[text] ?? misspeltOperator(text);
    // NEAR takes its distance: on its own it does not parse.
    if (meant === 'NEAR') meant = 'NEAR/5';
    if (meant !== undefined) {
      found.push({
        column,
        text,
        message: `${at} is read as a word to find in the article, not as an operator; did you mean ${meant}? Operators are written in capitals (AND, OR, NOT or -, NEAR/5); ${keep}`,
      });
    }
  }
  return found;
}

/** The {@link operatorLookalikes} of `query` less those the stored rule's query already has. */
export function newOperatorLookalikes(query: unknown, stored?: unknown): TypedDashProblem[] {
  return newProblems(operatorLookalikes, query, stored);
}

// --- Printing ----------------------------------------------------------------------------------

const PRECEDENCE: Readonly<Record<QueryNode['type'], number>> = {
  or: 1,
  and: 2,
  near: 3,
  not: 4,
  term: 5,
  phrase: 5,
};

/** A leaf as written in canonical form: `title:반도체`, `semicond*`, `summary:"interest rate"`. */
export function formatLeaf(node: QueryLeaf): string {
  const scope = node.field === 'any' ? '' : `${node.field}:`;
  return node.type === 'phrase' ? `${scope}"${node.text}"` : `${scope}${node.text}`;
}

/**
 * The canonical text of a query: explicit `AND`, `NOT` rather than `-`, parentheses only where
 * the precedence needs them, field scopes on each term. It parses back to the same tree (apart
 * from columns).
 */
export function formatQuery(node: QueryNode): string {
  const wrap = (child: QueryNode, parentLevel: number, strict: boolean): string => {
    const text = formatQuery(child);
    const level = PRECEDENCE[child.type];
    return level < parentLevel || (strict && level === parentLevel) ? `(${text})` : text;
  };
  switch (node.type) {
    case 'term':
    case 'phrase':
      return formatLeaf(node);
    case 'and':
      return node.children.map((child) => wrap(child, PRECEDENCE.and, true)).join(' AND ');
    case 'or':
      return node.children.map((child) => wrap(child, PRECEDENCE.or, true)).join(' OR ');
    case 'not':
      return `NOT ${wrap(node.child, PRECEDENCE.not, false)}`;
    case 'near':
      return `${formatQuery(node.left)} NEAR/${node.distance} ${formatQuery(node.right)}`;
  }
}

/**
 * The tree as indented lines (two spaces a level), for `rules explain`:
 * `AND`, `  OR`, `    term 반도체`, `    phrase "interest rate"`, `  NOT`, `    term title:삼성`,
 * `NEAR/5 (words)`.
 */
export function describeQueryTree(node: QueryNode): string[] {
  const lines: string[] = [];
  const walk = (current: QueryNode, indent: string): void => {
    switch (current.type) {
      case 'term':
        lines.push(`${indent}${current.prefix ? 'prefix' : 'term'} ${formatLeaf(current)}`);
        return;
      case 'phrase':
        lines.push(`${indent}phrase ${formatLeaf(current)}`);
        return;
      case 'and':
      case 'or':
        lines.push(`${indent}${current.type.toUpperCase()}`);
        for (const child of current.children) walk(child, `${indent}  `);
        return;
      case 'not':
        lines.push(`${indent}NOT`);
        walk(current.child, `${indent}  `);
        return;
      case 'near':
        lines.push(`${indent}NEAR/${current.distance} (${nearCountsCharacters(current) ? 'characters' : 'words'})`);
        walk(current.left, `${indent}  `);
        walk(current.right, `${indent}  `);
        return;
    }
  };
  walk(node, '');
  return lines;
}

/** Every term and phrase of a query, in query order. */
export function queryLeaves(node: QueryNode): QueryLeaf[] {
  switch (node.type) {
    case 'term':
    case 'phrase':
      return [node];
    case 'and':
    case 'or':
      return node.children.flatMap(queryLeaves);
    case 'not':
      return queryLeaves(node.child);
    case 'near':
      return [...queryLeaves(node.left), ...queryLeaves(node.right)];
  }
}

// --- Semantics ---------------------------------------------------------------------------------

/** Article text as the matcher normalizes it (normalizeText of title / summary). */
export interface QueryText {
  readonly title: string;
  readonly summary: string;
}

/**
 * Whether a NEAR counts the distance in characters (either operand has a letter of a script
 * written without spaces: Han, kana, Thai, Lao, Khmer, Myanmar, Tibetan; see WordKind in text.ts)
 * rather than in words.
 */
export const nearCountsCharacters = (node: QueryNode & { type: 'near' }): boolean =>
  (isLeaf(node.left) && hasUnspacedScript(node.left.norm)) ||
  (isLeaf(node.right) && hasUnspacedScript(node.right.norm));

/** How a leaf is named in match reasons: as written, with its field (`semicond*`, `title:반도체`). */
export function queryTermLabel(node: QueryLeaf): string {
  if (node.type === 'phrase' && node.field === 'any') return node.text;
  return formatLeaf(node);
}

/** The fields a leaf may occur in. */
const fieldsOf = (field: QueryField): readonly ('title' | 'summary')[] =>
  field === 'any' ? ['title', 'summary'] : [field];

/** Whether a leaf's occurrences need a word edge before them and after them. */
function leafEdges(node: QueryLeaf): { readonly start: boolean; readonly end: boolean } {
  const term = node.norm;
  return {
    start: startsWithWordCharacter(term),
    end: node.type === 'phrase' || !node.prefix ? isWordBefore(term, term.length) : false,
  };
}

/**
 * Calls `visit` with the start of each occurrence of a leaf in one normalized text that has valid
 * edges, left to right, until it returns true; returns whether one did. Linear in the text (see
 * forEachOccurrence).
 */
function forEachLeafOccurrence(text: string, node: QueryLeaf, visit: (start: number) => boolean): boolean {
  const term = node.norm;
  if (term.length === 0) return false;
  const edges = leafEdges(node);
  return forEachOccurrence(text, term, (at) => {
    if (edges.start && isWordBefore(text, at)) return false;
    if (edges.end && isWordAt(text, at + term.length)) return false;
    return visit(at);
  });
}

/**
 * Every occurrence of a leaf in one normalized text, as `[start, end)` UTF-16 offsets, with the
 * keyword edge rules: where the term starts (ends) with a word character, the character before
 * (after) it must not be one; a prefix term checks only the start.
 */
export function leafOccurrences(text: string, node: QueryLeaf): [number, number][] {
  const found: [number, number][] = [];
  forEachLeafOccurrence(text, node, (at) => {
    found.push([at, at + node.norm.length]);
    return false;
  });
  return found;
}

/** Whether a leaf occurs in one normalized text (stops at the first occurrence with valid edges). */
export const leafOccurs = (text: string, node: QueryLeaf): boolean =>
  text.includes(node.norm) && forEachLeafOccurrence(text, node, () => true);

/** The starts of a leaf's occurrences in one normalized text, ascending. */
function leafStarts(text: string, node: QueryLeaf): number[] {
  const starts: number[] = [];
  forEachLeafOccurrence(text, node, (at) => {
    starts.push(at);
    return false;
  });
  return starts;
}

/** The code point that ends just before `index` (a whole surrogate pair when there is one). */
function codePointBefore(text: string, index: number): number {
  const low = text.charCodeAt(index - 1);
  if (low >= 0xdc00 && low <= 0xdfff && index >= 2) {
    const high = text.charCodeAt(index - 2);
    if (high >= 0xd800 && high <= 0xdbff) return ((high - 0xd800) << 10) + (low - 0xdc00) + 0x10000;
  }
  return low;
}

/**
 * A walk over a text that only moves forward and counts, from where it started, the code points
 * it has passed and the words (maximal runs of letters, marks and digits) that began and that
 * ended. The runs
 * are in order, so the words wholly inside `[a, b)` are those that ended by `b` less those that
 * began before `a` (none when that is negative), and the code points are the difference of the two
 * counts: two walks that follow the two ends of a sweep of gaps count every gap with one pass
 * over the text between the first and the last.
 */
class TextWalk {
  readonly #text: string;
  #position: number;
  #inWord: boolean;
  /** Code points passed since the origin. */
  codePoints = 0;
  /** Words that began before the position (one straddling the origin included). */
  began: number;
  #ended = 0;

  constructor(text: string, origin: number) {
    this.#text = text;
    this.#position = origin;
    this.#inWord = origin > 0 && isWordPartCodePoint(codePointBefore(text, origin));
    this.began = this.#inWord ? 1 : 0;
  }

  /** Moves forward to `position` (a code point boundary at or after the current one). */
  moveTo(position: number): void {
    const text = this.#text;
    while (this.#position < position) {
      const codePoint = text.codePointAt(this.#position) ?? 0;
      const isWord = isWordPartCodePoint(codePoint);
      if (isWord && !this.#inWord) this.began++;
      else if (!isWord && this.#inWord) this.#ended++;
      this.#inWord = isWord;
      this.#position += codePoint > 0xffff ? 2 : 1;
      this.codePoints++;
    }
  }

  /** Words that ended at or before the position (a word ends where a non-word character or the text's end follows it). */
  get ended(): number {
    if (!this.#inWord) return this.#ended;
    const text = this.#text;
    const atEnd = this.#position >= text.length || !isWordPartCodePoint(text.codePointAt(this.#position) ?? 0);
    return atEnd ? this.#ended + 1 : this.#ended;
  }
}

/**
 * How many words lie wholly inside `text[start, end)`: maximal runs of letters, marks and digits
 * (any script) that neither continue a word from before `start` nor go on past `end`, so the rest
 * of a word an occurrence starts or ends (`semicond|uctor`, `반도체|가`) is not one. NEAR counts
 * its gaps this way, with two {@link TextWalk}s for a whole sweep of gaps.
 */
export function wordsBetween(text: string, start: number, end: number): number {
  const walk = new TextWalk(text, start);
  const beganBefore = walk.began;
  walk.moveTo(end);
  return Math.max(0, walk.ended - beganBefore);
}

/**
 * Whether some occurrence in `seconds` has one in `firsts` (each `firstLength` long) ending at or
 * before its start with at most `distance` words, or characters, between them. Only the first
 * occurrence that ends last before a second one needs trying: a gap that starts later holds no
 * more words or characters. Both lists ascend, and so do the gaps' two ends, so one pointer into
 * `firsts` and two walks over the text count every gap: linear in the text and the lists.
 */
function nearInOrder(
  text: string,
  firsts: readonly number[],
  firstLength: number,
  seconds: readonly number[],
  distance: number,
  characters: boolean,
): boolean {
  let next = 0;
  let gapStarts: TextWalk | undefined;
  let gapEnds: TextWalk | undefined;
  for (const second of seconds) {
    while (next < firsts.length && (firsts[next] ?? 0) + firstLength <= second) next++;
    if (next === 0) continue;
    const gapStart = (firsts[next - 1] ?? 0) + firstLength;
    gapStarts ??= new TextWalk(text, gapStart);
    gapEnds ??= new TextWalk(text, gapStart);
    gapStarts.moveTo(gapStart);
    gapEnds.moveTo(second);
    const between = characters
      ? gapEnds.codePoints - gapStarts.codePoints
      : Math.max(0, gapEnds.ended - gapStarts.began);
    if (between <= distance) return true;
  }
  return false;
}

/**
 * Whether two leaves occur near each other in one normalized text: two separate (non-overlapping)
 * occurrences, in either order, with at most `distance` words between them ({@link wordsBetween}),
 * or with `characters`, at most `distance` characters (code points, spaces and punctuation
 * included) between them.
 *
 * The work is linear in the text, however many occurrences each side has (issue 30: trying every
 * pair made `半 NEAR/50 体` on 470 of each cost 466 ms an article, four times that at twice the
 * text): see nearInOrder.
 */
export function occursNear(
  text: string,
  left: QueryLeaf,
  right: QueryLeaf,
  distance: number,
  characters: boolean,
): boolean {
  const lefts = leafStarts(text, left);
  if (lefts.length === 0) return false;
  const rights = leafStarts(text, right);
  if (rights.length === 0) return false;
  return (
    nearInOrder(text, lefts, left.norm.length, rights, distance, characters) ||
    nearInOrder(text, rights, right.norm.length, lefts, distance, characters)
  );
}

/**
 * The reference semantics (naive: scans the text for every term). Returns the terms that made the
 * query true (MatchReason-ready: `{ kind: 'keyword', term }`, term as written in the query, e.g.
 * `semicond*`, `interest rate hike`, `title:반도체`), in query order, deduplicated; undefined when
 * false. NOT subtrees never contribute reasons, so a true query may have no reasons (`NOT a`).
 *
 * `text` must be normalized ({@link normalizeText}) as the matcher does.
 */
export function evaluateQuery(query: QueryNode, text: QueryText): readonly MatchReason[] | undefined {
  const terms = evaluate(query, text);
  if (terms === undefined) return undefined;
  return [...new Set(terms)].map((term) => ({ kind: 'keyword', term }));
}

/**
 * Why `query` is false for `text`, for people (`rules explain`): one reason per part of the query
 * that failed, down to its terms (a term that is not there, an excluded one that is, two terms
 * that are not near each other), in the query's order. Empty when the query is true. Read off the
 * same evaluation as {@link evaluateQuery}, so it never contradicts the verdict.
 */
export function queryFalseBecause(query: QueryNode, text: QueryText): string[] {
  // A term written twice (`rate OR rate`, `rate rate`) fails once.
  return evaluate(query, text) === undefined ? [...new Set(falseBecause(query, text))] : [];
}

/** Reasons of {@link queryFalseBecause} on one line: up to five, `; `-separated, and how many more. */
export const falseBecauseText = (reasons: readonly string[]): string =>
  reasons.length <= 5 ? reasons.join('; ') : `${reasons.slice(0, 5).join('; ')}; and ${reasons.length - 5} more`;

/** A leaf's label as a reason names it: in quotes (a phrase with a field, `title:"rate hike"`, has its own). */
const quotedLabel = (label: string): string => (label.includes('"') ? label : `"${label}"`);
const named = (leaf: QueryLeaf): string => quotedLabel(queryTermLabel(leaf));

/** Where a leaf of `field` was looked for, as a reason says it. */
const lookedIn = (field: QueryField): string => (field === 'any' ? 'the title or summary' : `the ${field}`);

/** The reasons a node that is false for `text` is false (see {@link queryFalseBecause}). */
function falseBecause(node: QueryNode, text: QueryText): string[] {
  switch (node.type) {
    case 'term':
    case 'phrase':
      return [`${named(node)} is not in ${lookedIn(node.field)}`];
    case 'and':
      // Only the parts that failed: the others held.
      return node.children.flatMap((child) => (evaluate(child, text) === undefined ? falseBecause(child, text) : []));
    case 'or': {
      // Every alternative failed. Alternatives that are all terms of one field read as one reason.
      const leaves = node.children.filter(isLeaf);
      const field = leaves[0]?.field;
      if (leaves.length === node.children.length && leaves.every((leaf) => leaf.field === field)) {
        return [`none of ${[...new Set(leaves.map(named))].join(', ')} is in ${lookedIn(field ?? 'any')}`];
      }
      return node.children.flatMap((child) => falseBecause(child, text));
    }
    case 'not': {
      const child = node.child;
      const negated = isLeaf(child) ? `NOT ${formatQuery(child)}` : `NOT (${formatQuery(child)})`;
      return [`${negated} excludes it: ${whyTrue(child, text)}`];
    }
    case 'near': {
      const { left, right } = node;
      if (!isLeaf(left) || !isLeaf(right)) return ['NEAR takes only terms and phrases'];
      const missing = [left, right].filter((leaf) => evaluate(leaf, text) === undefined);
      if (missing.length > 0) return missing.flatMap((leaf) => falseBecause(leaf, text));
      // Both occur, but no occurrence of one is near a separate occurrence of the other: a term
      // NEAR itself needs two occurrences, and overlapping ones (`"interest rate" NEAR/3 rate`) do not count.
      const span = nearSpan(node);
      return [
        named(left) === named(right)
          ? `${named(left)} is there, but no two separate occurrences are within ${span} of each other in one field`
          : `${named(left)} and ${named(right)} are both there, but never as separate occurrences within ${span} of each other in one field`,
      ];
    }
  }
}

/** `NEAR/n`'s span in words: `3 words`, `1 character`. */
const nearSpan = (node: QueryNode & { type: 'near' }): string =>
  `${node.distance} ${nearCountsCharacters(node) ? 'character' : 'word'}${node.distance === 1 ? '' : 's'}`;

/**
 * Why a part that a NOT excludes is true (see {@link queryFalseBecause}): the terms it found, when
 * those alone make it true (terms, AND and OR of them); otherwise that the part holds, with the
 * terms it found, since a NOT or NEAR inside it is true for what is absent or for where terms sit.
 */
function whyTrue(node: QueryNode, text: QueryText): string {
  const found = [...new Set(evaluate(node, text) ?? [])].map(quotedLabel);
  const plain = (part: QueryNode): boolean =>
    isLeaf(part) || ((part.type === 'and' || part.type === 'or') && part.children.every(plain));
  if (plain(node) && found.length > 0) return `${found.join(', ')} ${found.length === 1 ? 'is' : 'are'} there`;
  if (node.type === 'near' && isLeaf(node.left) && isLeaf(node.right)) {
    return `${named(node.left)} and ${named(node.right)} are within ${nearSpan(node)} of each other`;
  }
  return found.length === 0
    ? `${formatQuery(node)} is true for this text`
    : `${formatQuery(node)} is true for this text (${found.join(', ')} ${found.length === 1 ? 'is' : 'are'} there)`;
}

/** The labels of the leaves that made `node` true, or undefined when it is false. */
function evaluate(node: QueryNode, text: QueryText): string[] | undefined {
  switch (node.type) {
    case 'term':
    case 'phrase':
      return fieldsOf(node.field).some((field) => leafOccurs(text[field], node)) ? [queryTermLabel(node)] : undefined;
    case 'and': {
      const terms: string[] = [];
      for (const child of node.children) {
        const childTerms = evaluate(child, text);
        if (childTerms === undefined) return undefined;
        terms.push(...childTerms);
      }
      return terms;
    }
    case 'or': {
      let terms: string[] | undefined;
      for (const child of node.children) {
        const childTerms = evaluate(child, text);
        if (childTerms !== undefined) terms = [...(terms ?? []), ...childTerms];
      }
      return terms;
    }
    case 'not':
      return evaluate(node.child, text) === undefined ? [] : undefined;
    case 'near': {
      const { left, right } = node;
      if (!isLeaf(left) || !isLeaf(right)) return undefined;
      const characters = nearCountsCharacters(node);
      const fields = fieldsOf(left.field).filter((field) => fieldsOf(right.field).includes(field));
      return fields.some((field) => occursNear(text[field], left, right, node.distance, characters))
        ? [queryTermLabel(left), queryTermLabel(right)]
        : undefined;
    }
  }
}

// --- Anchors -----------------------------------------------------------------------------------

/**
 * An estimate of how often a leaf occurs (lower = rarer), used to pick the anchors of an AND and a
 * NEAR: the side whose anchors add up to the least.
 */
export type TermFrequency = (node: QueryLeaf) => number;

/**
 * The default {@link TermFrequency} without statistics: phrases are rarer than words, longer terms
 * than shorter ones, exact terms than prefixes, title-only than anywhere.
 */
export const defaultTermFrequency: TermFrequency = (node) => {
  const kind = node.type === 'phrase' ? 1 : node.prefix ? 4 : 2;
  const field = node.field === 'title' ? 0.5 : 1;
  return (kind * field) / Math.min(Math.max(Array.from(node.norm).length, 1), 32);
};

/**
 * Terms whose occurrence is necessary for the query to be true: a set such that every article
 * matching the query hits at least one of them (AND: one child's set, the rarest; OR: union of all
 * children's sets; NOT: none; NEAR: one side's). undefined = no such set (NOT-only, `a OR NOT b`):
 * the rule then needs another positive criterion or matchAll.
 *
 * @param rarity how often a leaf occurs, lower = rarer (default {@link defaultTermFrequency}).
 */
export function queryAnchors(
  query: QueryNode,
  rarity: TermFrequency = defaultTermFrequency,
): readonly QueryLeaf[] | undefined {
  const anchors = anchorsOf(query, rarity);
  if (anchors === undefined) return undefined;
  const seen = new Set<string>();
  return anchors.filter((leaf) => {
    const key = `${leaf.type === 'term' && leaf.prefix ? '*' : '='}${leaf.field}:${leaf.norm}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

function anchorsOf(node: QueryNode, rarity: TermFrequency): QueryLeaf[] | undefined {
  const cost = (set: readonly QueryLeaf[]) => set.reduce((sum, leaf) => sum + rarity(leaf), 0);
  const cheapest = (sets: readonly (QueryLeaf[] | undefined)[]): QueryLeaf[] | undefined => {
    let best: QueryLeaf[] | undefined;
    let bestCost = Number.POSITIVE_INFINITY;
    for (const set of sets) {
      if (set === undefined) continue;
      const setCost = cost(set);
      if (best === undefined || setCost < bestCost) {
        best = set;
        bestCost = setCost;
      }
    }
    return best;
  };
  switch (node.type) {
    case 'term':
    case 'phrase':
      return [node];
    case 'and':
      return cheapest(node.children.map((child) => anchorsOf(child, rarity)));
    case 'or': {
      const union: QueryLeaf[] = [];
      for (const child of node.children) {
        const set = anchorsOf(child, rarity);
        if (set === undefined) return undefined;
        union.push(...set);
      }
      return union;
    }
    case 'not':
      return undefined;
    case 'near':
      return cheapest([anchorsOf(node.left, rarity), anchorsOf(node.right, rarity)]);
  }
}
