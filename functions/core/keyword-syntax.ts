/**
 * Query syntax written into a keyword. A keyword (`keywords`, `excludeKeywords`) is a literal
 * phrase matched as words (functions/core/matcher.ts): `"interest rate"` looks for the quotes,
 * `semicond*` for a star, `chips OR memory` for the three words. Such a keyword never matches what
 * was meant, and nothing says so. {@link keywordSyntaxProblem} says so, with what to write instead:
 * the keyword without the syntax, or the rule's `query`, whose language (functions/core/query.ts)
 * has these forms.
 *
 * Advice for the person writing a rule, never a reason to skip one: a stored keyword is matched
 * literally, as it always was, and the run takes it (the rule schema, functions/core/model.ts,
 * does not ask this module). The CLI's create/update/put/validate and the web console's save
 * refuse a keyword they would newly write ({@link newKeywordSyntaxProblems}); `rules list` and
 * `rules show` name the stored ones as a warning.
 *
 * Only what can never match what was meant is named: double quotes (straight, full-width,
 * typographic) or single quotes wrapping the whole keyword; parentheses wrapping a keyword with
 * query syntax inside (`(chips OR memory)`); the uppercase operators `AND`, `OR` between two words
 * and `NOT` before one, unless the keyword is a title in capitals (`TO BE OR NOT TO BE`,
 * `NOT GUILTY`) or the `OR` follows a comma (`Portland, OR police`: a US state); `NEAR/n` between
 * two words; `-` (or a typed dash) starting a word before a letter; `*` ending a word;
 * `title:`/`summary:` starting one. Everything else stays a keyword: wire tags in parentheses
 * (`(속보)`, `(2nd LD)`, `（速報）`, `(Reuters)`), quotes inside a name (`Toys"R"Us`,
 * `Dwayne "The Rock" Johnson`), an inch mark or double prime after a digit (`MacBook Pro 14"`,
 * `5′11″`), apostrophes (`O'Brien`, `'90s`), hyphens and dashes inside words (`COVID-19`), a
 * negative figure (`−10도`), `C++`, `AT&T`, lowercase `or`/`and`/`not` (matching ignores case,
 * so `war or peace` is the way to match those words), and `*NSYNC` or `M*A*S*H`.
 */
import {
  parseQuery,
  QUERY_LIMITS,
  QuerySyntaxError,
  syntaxForm,
  TYPOGRAPHIC_DASHES,
  TYPOGRAPHIC_QUOTES,
} from './query.ts';

/** The list a keyword is in: the advice differs (an excluded keyword already excludes). */
export type KeywordList = 'keywords' | 'excludeKeywords';

/**
 * What advice to use the query must know of the keyword's rule: the other `keywords` (any-of, so
 * they go into the query as alternatives) and the query the rule has (kept, ANDed).
 */
export interface KeywordRule {
  readonly otherKeywords?: readonly string[];
  readonly query?: unknown;
}

/** `query` as one operand: as it is when it is one already (a word, a phrase, a group), else in parentheses. */
function grouped(query: string): string {
  if (/^-?[^\s()"]+$/u.test(query) || /^-?"[^"]*"$/u.test(query)) return query;
  const open = query.startsWith('-(') ? 1 : query.startsWith('(') ? 0 : -1;
  if (open >= 0 && query.endsWith(')')) {
    // One group only when its opening parenthesis closes at the end.
    let depth = 0;
    let closes = -1;
    for (const [at, char] of [...query].entries()) {
      if (at < open) continue;
      depth += char === '(' ? 1 : char === ')' ? -1 : 0;
      if (depth === 0) {
        closes = at;
        break;
      }
    }
    if (closes === [...query].length - 1) return query;
  }
  return `(${query})`;
}

/** A keyword as a query operand: a single word of letters and digits as it is, else a phrase. */
const asQueryTerm = (keyword: string): string =>
  /^[\p{L}\p{N}]+$/u.test(keyword) ? keyword : `"${keyword.replace(/["\uFF02\u201C\u201D]/gu, '').trim()}"`;

const isDoubleQuote = (char: string): boolean => char === '"' || TYPOGRAPHIC_QUOTES.has(char);
/** Single quotes that wrap a keyword (`'interest rate'`, `‘inflation’`); inside one they are apostrophes. */
const OPENING_SINGLE_QUOTES = new Set(["'", '\u2018', '\u201B']);
const CLOSING_SINGLE_QUOTES = new Set(["'", '\u2019']);
const isNegatingDash = (char: string): boolean => char === '-' || TYPOGRAPHIC_DASHES.has(char);
const NEAR_OPERATOR = /^NEAR\/(\d+)$/;
const FIELD_SCOPE = /^(title|summary):\S/i;
/** A word written in capitals: a cased letter, none of them lowercase (`GUILTY`, `TO`, `LD`). */
const inCapitals = (word: string): boolean => /\p{Lu}/u.test(word) && !/\p{Ll}/u.test(word);
/** Whether `query` parses: advice only offers a query that does. */
function parses(query: string): boolean {
  try {
    parseQuery(query);
    return true;
  } catch (error) {
    if (error instanceof QuerySyntaxError) return false;
    throw error;
  }
}
/** What a keyword is when matching ignores case: the same words in lowercase. */
const lowercaseHint = (operator: string): string =>
  `; to match the word "${operator.toLowerCase()}" itself, write it in lowercase (matching ignores case)`;

/**
 * Why `keyword` (trimmed, as the schema has it) is query syntax that would never match what was
 * meant, with what to write instead; undefined for a keyword that is plain words, or whose
 * punctuation may well be text (see the module header).
 * @param list which list the keyword is in, for the advice
 */
export function keywordSyntaxProblem(keyword: string, list: KeywordList, rule: KeywordRule = {}): string | undefined {
  const written = [...keyword];
  // As the query lexer reads it: `＂`, `ＯＲ` and `＊` are `"`, `OR` and `*`.
  const chars = written.map(syntaxForm);
  const read = chars.join('');
  const words = read.split(/\s+/u);
  const named = keyword.includes('"') ? `'${keyword}'` : `"${keyword}"`;
  const excluded = list === 'excludeKeywords';
  const negated = (query: string): string =>
    !excluded ? query : /\s/u.test(query) && !/^(\(.*\)|".*")$/u.test(query) ? `-(${query})` : `-${query}`;
  const others = list === 'keywords' ? (rule.otherKeywords ?? []).filter((other) => other !== '') : [];
  const existing = typeof rule.query === 'string' && rule.query.trim() !== '' ? rule.query.trim() : undefined;
  /**
   * The rule's whole query for `query` (this keyword as a query): the query is ANDed with the
   * keywords, which are any-of, so the other keywords go into it as alternatives (and `keywords`
   * is removed), and a query the rule has already is kept, ANDed with it.
   */
  const wholeQuery = (query: string): string => {
    const own = negated(query);
    const anyOf = others.length === 0 ? own : [...others.map(asQueryTerm), grouped(own)].join(' OR ');
    return existing === undefined ? anyOf : `${grouped(existing)} AND ${grouped(anyOf)}`;
  };
  const asQuery = (query: string): string =>
    others.length > 0
      ? `use the rule's query field: a rule's keywords are any-of and its query is ANDed with them, so write the whole any-of as the query and remove keywords: query: ${wholeQuery(query)}`
      : existing !== undefined
        ? `use the rule's query field, ANDed with the query it has: query: ${wholeQuery(query)} (and remove this keyword)`
        : `use the rule's query field: query: ${wholeQuery(query)}`;

  const quotes = chars.filter(isDoubleQuote).length;
  const first = chars[0] ?? '';
  const last = chars.at(-1) ?? '';
  // Only quotes around the whole keyword: a pair inside (`Toys"R"Us`) or an inch mark after a
  // digit (`14"`, `5′11″`) is text.
  const wrappedInDoubleQuotes = chars.length > 2 && quotes === 2 && isDoubleQuote(first) && isDoubleQuote(last);
  const wrappedInSingleQuotes = chars.length > 2 && OPENING_SINGLE_QUOTES.has(first) && CLOSING_SINGLE_QUOTES.has(last);
  if (wrappedInDoubleQuotes || wrappedInSingleQuotes) {
    const bare = written.slice(1, -1).join('').trim().replace(/\s+/gu, ' ');
    return `${named}: write ${bare || 'the words'} without quotes: a keyword is already matched as a phrase (its words in order, case ignored)`;
  }
  if (first === '(' && last === ')') {
    // A wire tag (`(속보)`, `(2nd LD)`, `(Reuters)`) is text; parentheses around query syntax group it.
    const inside = read.slice(1, -1).trim();
    if (keywordSyntaxProblem(inside, 'keywords') === undefined) return undefined;
    // The text with its parentheses, as a query phrase: only offered when it parses (a phrase has no `"` or `*`).
    const phrase = wholeQuery(`"${read}"`);
    const literal = parses(phrase) ? `; to match the text with its parentheses, query: ${phrase}` : '';
    return `${named}: parentheses group terms only in a query; ${asQuery(read)}${literal}`;
  }
  // A title in capitals (`TO BE OR NOT TO BE`, `NOT GUILTY`) is text, not a query.
  const operands = words.filter((word) => !['AND', 'OR', 'NOT'].includes(word) && !NEAR_OPERATOR.test(word));
  const title = operands.length > 0 && operands.every(inCapitals);
  for (const [index, word] of words.entries()) {
    const between = index > 0 && index < words.length - 1;
    // `Portland, OR police`: after a comma, OR is a US state.
    if (between && word === 'OR' && !title && !(words[index - 1] ?? '').endsWith(',')) {
      const alternatives = read
        .split(/\s+OR\s+/u)
        .map((alternative) => `"${alternative.replace(/[\s,]+$/u, '')}"`)
        .join(', ');
      return `${named}: OR joins terms only in a query; write the alternatives as separate ${list} (${alternatives}), or ${asQuery(read)}${lowercaseHint(word)}`;
    }
    const near = NEAR_OPERATOR.exec(word);
    if (between && ((word === 'AND' && !title) || near !== null)) {
      const together = excluded ? 'exclude' : 'require';
      const why = `${word} joins terms only in a query (${excluded ? 'an article is excluded when any one of the excludeKeywords matches' : 'a rule matches when any one of its keywords does'})`;
      if (near === null)
        return `${named}: ${why}; to ${together} them together, ${asQuery(read)}${lowercaseHint(word)}`;
      // What the query parser takes: NEAR/1 to NEAR/50.
      const distance = Math.min(Math.max(Number(near[1]), 1), QUERY_LIMITS.nearDistance);
      const query = [...words.slice(0, index), `NEAR/${distance}`, ...words.slice(index + 1)].join(' ');
      const limit =
        String(distance) === near[1]
          ? ''
          : ` (a query's NEAR takes 1 to ${QUERY_LIMITS.nearDistance} words; for both anywhere in the article, query: ${wholeQuery([...words.slice(0, index), 'AND', ...words.slice(index + 1)].join(' '))})`;
      return `${named}: ${why}; to ${together} them together, ${asQuery(query)}${limit}`;
    }
    if (word === 'NOT' && index < words.length - 1 && !title) {
      const rest = words.slice(index + 1).join(' ');
      return excluded
        ? `${named}: NOT is an operator only in a query, and an excludeKeywords entry already excludes: write ${rest}${lowercaseHint(word)}`
        : `${named}: NOT is an operator only in a query; to exclude ${rest}, put it in excludeKeywords, or ${asQuery(read)}${lowercaseHint(word)}`;
    }
  }
  // Positions in `chars` of each word's first code point.
  let at = 0;
  for (const word of read.split(/(\s+)/u)) {
    const start = at;
    at += [...word].length;
    if (word.trim() === '') continue;
    const wordChars = chars.slice(start, at);
    const [head = '', next = ''] = wordChars;
    // Not before a digit: `-30` may well be a temperature.
    if (isNegatingDash(head) && /^[\p{L}"(]$/u.test(next)) {
      const rest = wordChars.slice(1).join('');
      const dash = head === '-' ? "'-'" : `${TYPOGRAPHIC_DASHES.get(head)} (${head})`;
      return excluded
        ? `${named}: ${dash} before ${rest} is not NOT in a keyword, and an excludeKeywords entry already excludes: write ${rest}`
        : `${named}: ${dash} before ${rest} is not NOT in a keyword; to exclude ${rest}, put it in excludeKeywords, or use the rule's query field: query: -${rest} (written with an ASCII hyphen-minus)`;
    }
    if (wordChars.length > 1 && wordChars.at(-1) === '*' && !/^\s$/u.test(wordChars.at(-2) ?? ' ')) {
      return `${named}: a keyword has no wildcard ('*' would be matched as a star); for a prefix match, ${asQuery(read)}`;
    }
    if (FIELD_SCOPE.test(word)) {
      return `${named}: a keyword has no field scope ('${word.slice(0, word.indexOf(':') + 1)}' would be matched as text); to search one field, ${asQuery(read)}`;
    }
  }
  if (read === '*') {
    return `${named}: a keyword has no wildcard ('*' would be matched as a star); for a rule that matches every article, remove the ${list} and set matchAll: true`;
  }
  return undefined;
}

/** One keyword written in query syntax: where it is and {@link keywordSyntaxProblem}'s advice. */
export interface KeywordSyntaxProblem {
  readonly list: KeywordList;
  readonly index: number;
  /** `keywords[1]: '"interest rate"': write interest rate without quotes: …` */
  readonly message: string;
}

/** The strings of a stored list attribute (a DynamoDB list or string set), trimmed as the schema trims them. */
function termsOf(value: unknown): string[] {
  const terms = value instanceof Set ? [...value] : Array.isArray(value) ? value : [];
  return terms.filter((term): term is string => typeof term === 'string').map((term) => term.trim());
}

/**
 * The keywords of `rule` written in query syntax, in both lists. With `stored` (the rule as the
 * table holds it), only those the write would add: a keyword already stored in the same list
 * is matched as it always was, and refusing it would stop every other edit of the rule.
 */
export function newKeywordSyntaxProblems(
  rule: { readonly keywords?: unknown; readonly excludeKeywords?: unknown; readonly query?: unknown },
  stored?: { readonly keywords?: unknown; readonly excludeKeywords?: unknown },
): KeywordSyntaxProblem[] {
  const problems: KeywordSyntaxProblem[] = [];
  for (const list of ['keywords', 'excludeKeywords'] as const) {
    const kept = new Set(termsOf(stored?.[list]));
    const keywords = termsOf(rule.keywords);
    for (const [index, keyword] of termsOf(rule[list]).entries()) {
      if (keyword === '' || kept.has(keyword)) continue;
      const otherKeywords = list === 'keywords' ? keywords.filter((_, other) => other !== index) : keywords;
      const problem = keywordSyntaxProblem(keyword, list, { otherKeywords, query: rule.query });
      if (problem !== undefined) problems.push({ list, index, message: `${list}[${index}]: ${problem}` });
    }
  }
  return problems;
}
