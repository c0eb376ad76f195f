/**
 * Query syntax written into a keyword. A keyword (`keywords`, `excludeKeywords`) is a literal
 * phrase matched as words (functions/core/matcher.ts): `"interest rate"` looks for the quotes,
 * `semicond*` for a star, `chips OR memory` for the three words. Such a keyword never matches what
 * was meant, and nothing says so. The rule schema refuses it with {@link keywordSyntaxProblem},
 * which says what to write instead: the keyword without the syntax, or the rule's `query`, whose
 * language (functions/core/query.ts) has these forms.
 *
 * Only what the query language reads as syntax is refused, as it reads it: straight, full-width
 * and typographic double quotes around words; a whole keyword in parentheses; the uppercase
 * operators `AND`, `OR`, `NEAR/n` between two words and `NOT` before one; `-` (or a typed dash)
 * starting a word; `*` ending a word; `title:`/`summary:` starting one. Everything else stays a
 * keyword: apostrophes (`O'Brien`, `don't`, `'90s`), hyphens and dashes inside words (`COVID-19`,
 * `K-pop`), `C++`, `AT&T`, a lone inch mark (`12" vinyl`), lowercase `or`/`and`/`not` (matching
 * ignores case, so `war or peace` is the way to match those words), `Portland, OR` (no word
 * after the operator), and `*NSYNC` or `M*A*S*H` (no star ending a word).
 */
import { syntaxForm, TYPOGRAPHIC_DASHES, TYPOGRAPHIC_QUOTES } from './query.ts';

/** The list a keyword is in: the advice differs (an excluded keyword already excludes). */
export type KeywordList = 'keywords' | 'excludeKeywords';

const isDoubleQuote = (char: string): boolean => char === '"' || TYPOGRAPHIC_QUOTES.has(char);
/** Single quotes that wrap a keyword (`'interest rate'`, `‘inflation’`); inside one they are apostrophes. */
const OPENING_SINGLE_QUOTES = new Set(["'", '\u2018', '\u201B']);
const CLOSING_SINGLE_QUOTES = new Set(["'", '\u2019']);
const isNegatingDash = (char: string): boolean => char === '-' || TYPOGRAPHIC_DASHES.has(char);
const NEAR_OPERATOR = /^NEAR\/\d+$/;
const FIELD_SCOPE = /^(title|summary):\S/i;
/** What a keyword is when matching ignores case: the same words in lowercase. */
const lowercaseHint = (operator: string): string =>
  `; to match the word "${operator.toLowerCase()}" itself, write it in lowercase (matching ignores case)`;

/**
 * Why `keyword` (trimmed, as the schema has it) is query syntax that would never match what was
 * meant, with what to write instead; undefined for a keyword that is plain words.
 * @param list which list the keyword is in, for the advice
 */
export function keywordSyntaxProblem(keyword: string, list: KeywordList): string | undefined {
  const written = [...keyword];
  // As the query lexer reads it: `＂`, `ＯＲ` and `＊` are `"`, `OR` and `*`.
  const chars = written.map(syntaxForm);
  const read = chars.join('');
  const words = read.split(/\s+/u);
  const named = keyword.includes('"') ? `'${keyword}'` : `"${keyword}"`;
  const excluded = list === 'excludeKeywords';
  const asQuery = (query: string): string =>
    `use the rule's query field: query: ${excluded && /\s/u.test(query) && !/^\(.*\)$/u.test(query) ? `-(${query})` : excluded ? `-${query}` : query}`;

  const quotes = chars.filter(isDoubleQuote).length;
  const first = chars[0] ?? '';
  const last = chars.at(-1) ?? '';
  const wrappedInSingleQuotes = chars.length > 2 && OPENING_SINGLE_QUOTES.has(first) && CLOSING_SINGLE_QUOTES.has(last);
  if (quotes >= 2 || isDoubleQuote(first) || isDoubleQuote(last) || wrappedInSingleQuotes) {
    const bare = (wrappedInSingleQuotes ? written.slice(1, -1) : written)
      .filter((char) => !isDoubleQuote(syntaxForm(char)))
      .join('')
      .trim()
      .replace(/\s+/gu, ' ');
    return `${named}: write ${bare || 'the words'} without quotes: a keyword is already matched as a phrase (its words in order, case ignored)`;
  }
  if (first === '(' && last === ')') {
    const bare = written.slice(1, -1).join('').trim();
    return `${named}: parentheses group terms only in a query; write ${bare || 'the words'} without them (a keyword is matched as a phrase), or ${asQuery(read)}`;
  }
  for (const [index, word] of words.entries()) {
    const between = index > 0 && index < words.length - 1;
    if (between && word === 'OR') {
      const alternatives = read.split(/\s+OR\s+/u).join(', ');
      return `${named}: OR joins terms only in a query; write the alternatives as separate ${list} (${alternatives}), or ${asQuery(read)}${lowercaseHint(word)}`;
    }
    if (between && (word === 'AND' || NEAR_OPERATOR.test(word))) {
      return `${named}: ${word} joins terms only in a query (${excluded ? 'an article is excluded when any one of the excludeKeywords matches' : 'a rule matches when any one of its keywords does'}); to ${excluded ? 'exclude' : 'require'} them together, ${asQuery(read)}${word === 'AND' ? lowercaseHint(word) : ''}`;
    }
    if (word === 'NOT' && index < words.length - 1) {
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
