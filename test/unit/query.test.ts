/**
 * The rule query language (functions/core/query.ts): what parses into which tree, every syntax
 * error with its message and column, the canonical text and tree lines `rules explain` prints, the
 * reference semantics in English, Korean and Japanese, and the anchors the index files a query
 * under.
 */
import { describe, expect, it } from 'vitest';
import {
  describeQueryTree,
  evaluateQuery,
  falseBecauseText,
  formatQuery,
  parseQuery,
  type QueryLeaf,
  type QueryNode,
  QuerySyntaxError,
  queryAnchors,
  queryFalseBecause,
  queryLeaves,
} from '#core/query';
import { normalizeText } from '#core/text';

/** The tree without columns, leaves as `term:text@field` / `phrase:text@field`, for readable expectations. */
function shape(node: QueryNode): unknown {
  switch (node.type) {
    case 'term':
      return `${node.prefix ? 'prefix' : 'term'}:${node.text}${node.field === 'any' ? '' : `@${node.field}`}`;
    case 'phrase':
      return `phrase:${node.text}${node.field === 'any' ? '' : `@${node.field}`}`;
    case 'and':
    case 'or':
      return { [node.type]: node.children.map(shape) };
    case 'not':
      return { not: shape(node.child) };
    case 'near':
      return { [`near${node.distance}`]: [shape(node.left), shape(node.right)] };
  }
}

const parsed = (query: string) => shape(parseQuery(query));
const EMPTY = 'the query is empty; write at least one term, or remove the query attribute';

/** The syntax error a query gets: message, column and what was expected. */
function syntaxError(query: string): { message: string; column: number; expected: string } {
  try {
    parseQuery(query);
  } catch (error) {
    expect(error).toBeInstanceOf(QuerySyntaxError);
    const { message, column, expected, name } = error as QuerySyntaxError;
    expect(name).toBe('QuerySyntaxError');
    // The column a program reads is the one the message names (an empty query names none).
    if (message !== EMPTY) expect(message).toContain(`column ${column}`);
    return { message, column, expected };
  }
  throw new Error(`${JSON.stringify(query)} parsed`);
}

const article = (title: string, summary = '') => ({ title: normalizeText(title), summary: normalizeText(summary) });
/** The reason terms of a query on an article, or undefined when it does not match. */
const reasons = (query: string, title: string, summary = '') =>
  evaluateQuery(parseQuery(query), article(title, summary))?.map((reason) => reason.term);

describe('parseQuery', () => {
  it('reads terms, phrases, prefixes, AND (explicit or by adjacency), OR and grouping', () => {
    expect(parsed('samsung')).toBe('term:samsung');
    expect(parsed('"interest  rate\nhike"')).toBe('phrase:interest rate hike');
    expect(parsed('semicond*')).toBe('prefix:semicond*');
    expect(parsed('samsung semiconductor')).toEqual({ and: ['term:samsung', 'term:semiconductor'] });
    expect(parsed('samsung AND semiconductor')).toEqual({ and: ['term:samsung', 'term:semiconductor'] });
    expect(parsed('(반도체 OR 메모리) AND 수출 NOT 삼성')).toEqual({
      and: [{ or: ['term:반도체', 'term:메모리'] }, 'term:수출', { not: 'term:삼성' }],
    });
  });

  it('binds NOT tighter than NEAR, NEAR than AND, AND than OR', () => {
    expect(parsed('a OR b c')).toEqual({ or: ['term:a', { and: ['term:b', 'term:c'] }] });
    expect(parsed('a b OR c')).toEqual({ or: [{ and: ['term:a', 'term:b'] }, 'term:c'] });
    expect(parsed('a NEAR/3 b c')).toEqual({ and: [{ near3: ['term:a', 'term:b'] }, 'term:c'] });
    expect(parsed('a OR NOT b')).toEqual({ or: ['term:a', { not: 'term:b' }] });
    expect(parsed('NOT a b')).toEqual({ and: [{ not: 'term:a' }, 'term:b'] });
    expect(parsed('a OR (b OR c)')).toEqual({ or: ['term:a', { or: ['term:b', 'term:c'] }] });
  });

  it('takes -term, -"phrase", -(group) and -field: as NOT, but keeps a hyphen inside a word', () => {
    expect(parsed('rates -sponsored')).toEqual({ and: ['term:rates', { not: 'term:sponsored' }] });
    expect(parsed('-"press release" -(a OR b) -title:x')).toEqual({
      and: [{ not: 'phrase:press release' }, { not: { or: ['term:a', 'term:b'] } }, { not: 'term:x@title' }],
    });
    expect(parsed('AI-driven K-pop')).toEqual({ and: ['term:AI-driven', 'term:K-pop'] });
  });

  it('reads uppercase operators only: and, or, not, near are terms, and so is a quoted operator', () => {
    expect(parsed('rock and roll')).toEqual({ and: ['term:rock', 'term:and', 'term:roll'] });
    expect(parsed('"OR" not')).toEqual({ and: ['phrase:OR', 'term:not'] });
    expect(parsed('NEARBY')).toBe('term:NEARBY');
  });

  it('scopes a term, a phrase or a group to title: or summary: (field names in any case)', () => {
    expect(parsed('title:반도체 summary:"interest rate" Title:(a OR -b)')).toEqual({
      and: ['term:반도체@title', 'phrase:interest rate@summary', { or: ['term:a@title', { not: 'term:b@title' }] }],
    });
    expect(parsed('title:(title:a b)')).toEqual({ and: ['term:a@title', 'term:b@title'] });
    // A colon that follows no field name is part of the term.
    expect(parsed('3:1 "body: text"')).toEqual({ and: ['term:3:1', 'phrase:body: text'] });
  });

  it('reads NEAR/n between terms and phrases, n from 1 to 50', () => {
    expect(parsed('samsung NEAR/5 "chip exports"')).toEqual({ near5: ['term:samsung', 'phrase:chip exports'] });
    expect(parsed('title:a NEAR/50 b')).toEqual({ near50: ['term:a@title', 'term:b'] });
  });

  it('keeps the term as written, its normalized form and its 1-based column in code points', () => {
    const [first, second, third] = queryLeaves(parseQuery('😀ＡＩ  title:Semicond* "Rate  Hike"'));
    expect(first).toEqual({ type: 'term', text: '😀ＡＩ', norm: '😀ai', prefix: false, field: 'any', column: 1 });
    expect(second).toEqual({
      type: 'term',
      text: 'Semicond*',
      norm: 'semicond',
      prefix: true,
      field: 'title',
      column: 12,
    });
    expect(third).toEqual({ type: 'phrase', text: 'Rate Hike', norm: 'rate hike', field: 'any', column: 22 });
  });

  it('refuses an empty query and an empty phrase or group', () => {
    expect(syntaxError('')).toEqual({
      message: 'the query is empty; write at least one term, or remove the query attribute',
      column: 1,
      expected: 'a term, phrase or group',
    });
    expect(syntaxError(' \n\t').message).toMatch(/^the query is empty/);
    expect(syntaxError('a ""')).toMatchObject({ message: 'empty phrase at column 3; write words between the quotes' });
    expect(syntaxError('a "  "').column).toBe(3);
    expect(syntaxError('a ()')).toMatchObject({
      message: "empty group '()' at column 3; put terms inside or remove it",
    });
  });

  it("names the column of a missing ')' and of the '(' it would close", () => {
    expect(syntaxError('samsung AND (chips OR memory AND exports')).toEqual({
      message: "expected ')' at column 41 to close the '(' at column 13",
      column: 41,
      expected: "')'",
    });
    expect(syntaxError('(a OR b')).toMatchObject({ column: 8 });
    expect(syntaxError('a )')).toEqual({
      message: "unexpected ')' at column 3: no '(' is open",
      column: 3,
      expected: 'the end of the query',
    });
  });

  it('refuses a query or group that starts with an operator, and an operator with nothing after it', () => {
    expect(syntaxError('OR rates')).toEqual({
      message: "unexpected 'OR' at column 1: a query cannot start with an operator",
      column: 1,
      expected: 'a term, phrase or group',
    });
    expect(syntaxError('AND a').message).toBe("unexpected 'AND' at column 1: a query cannot start with an operator");
    expect(syntaxError('NEAR/2 a').message).toBe(
      "unexpected 'NEAR/2' at column 1: a query cannot start with an operator",
    );
    expect(syntaxError('a (OR b)').message).toBe("unexpected 'OR' at column 4: a group cannot start with an operator");
    expect(syntaxError('rates OR')).toEqual({
      message: "expected a term, phrase or group at column 9 after 'OR' at column 7",
      column: 9,
      expected: 'a term, phrase or group',
    });
    expect(syntaxError('a AND OR b').message).toBe(
      "unexpected 'OR' at column 7: expected a term, phrase or group after 'AND' at column 3",
    );
    expect(syntaxError('a NOT').column).toBe(6);
    expect(syntaxError('a NOT )').message).toBe(
      "unexpected ')' at column 7: expected a term, phrase or group after 'NOT' at column 3",
    );
  });

  it('refuses an unterminated phrase, naming where it starts', () => {
    expect(syntaxError('rates "interest rate')).toEqual({
      message: `unterminated phrase starting at column 7; add the closing '"'`,
      column: 7,
      expected: "'\"'",
    });
  });

  it('refuses NEAR without a number 1–50 and NEAR operands that are not terms or phrases', () => {
    for (const [query, column] of [
      ['a NEAR b', 3],
      ['a NEAR/0 b', 3],
      ['a NEAR/51 b', 3],
      ['a NEAR/x b', 3],
      ['a NEAR/5x b', 3],
      ['a NEAR/ b', 3],
    ] as const) {
      expect(syntaxError(query), query).toEqual({
        message: `NEAR/n needs a number 1–50 at column ${column} (e.g. NEAR/5: at most 5 words between the two terms)`,
        column,
        expected: 'a number 1–50',
      });
    }
    expect(syntaxError('(a OR b) NEAR/3 c')).toEqual({
      message: 'NEAR operands must be terms or phrases: the operand of NEAR/3 at column 1 is a group',
      column: 1,
      expected: 'a term or phrase',
    });
    expect(syntaxError('a NEAR/3 -b').message).toBe(
      'NEAR operands must be terms or phrases: the operand of NEAR/3 at column 10 is a negation',
    );
    expect(syntaxError('a NEAR/3 b NEAR/2 c').message).toMatch(
      /^NEAR operands must be terms or phrases: the operand of NEAR\/2 at column 1 is another NEAR/,
    );
    expect(syntaxError('a NEAR/3').message).toBe(
      "expected a term, phrase or group at column 9 after 'NEAR/3' at column 3",
    );
    expect(syntaxError('title:a NEAR/2 summary:b')).toMatchObject({
      message: expect.stringMatching(/^NEAR\/2 at column 9 joins a title: term and a summary: term/),
      column: 9,
    });
  });

  it("allows '*' only at the end of a word in a script written with spaces", () => {
    const message = (column: number) =>
      `'*' at column ${column} is only allowed at the end of a word in a script written with spaces, such as Latin, Cyrillic or Greek (Korean, Japanese, Chinese and Thai terms already match inside words)`;
    expect(syntaxError('수출 반도체*')).toEqual({
      message: message(7),
      column: 7,
      expected: 'a letter or digit of a script written with spaces before a final *',
    });
    expect(syntaxError('半導体*').message).toBe(message(4));
    expect(syntaxError('semi*cond').message).toBe(message(5));
    expect(syntaxError('a *').message).toBe(message(3));
    expect(syntaxError('ab**').message).toBe(message(3));
    expect(syntaxError('AI-*').message).toBe(message(4));
    expect(syntaxError('"semicond* exports"')).toMatchObject({
      message: expect.stringMatching(/^'\*' at column 10 is not a wildcard inside a phrase/),
      column: 10,
    });
    expect(parsed('202* covid19*')).toEqual({ and: ['prefix:202*', 'prefix:covid19*'] });
  });

  it('refuses a field scope with nothing after it, an unknown field, and nested different fields', () => {
    for (const query of ['title:', 'rates title: x', 'title:)']) {
      expect(syntaxError(query).message, query).toMatch(
        /^'title:' at column \d+ needs a term, phrase or group right after it, with no space/,
      );
    }
    expect(syntaxError('rates title:')).toMatchObject({ column: 7, expected: 'a term, phrase or group' });
    expect(syntaxError('title:-x').message).toMatch(/not '-' \(to exclude, write -title:…\)$/);
    expect(syntaxError('title:NOT x').message).toMatch(/^'title:' at column 1 needs a term, phrase or group/);
    expect(syntaxError('rates body:x')).toEqual({
      message:
        'unknown field \'body:\' at column 7 (did you mean title: or summary:?); to search for text with a colon, put it in quotes: "body:…"',
      column: 7,
      expected: "'title:' or 'summary:'",
    });
    expect(syntaxError('title:(a summary:b)').message).toBe(
      "'summary:' at column 10 is inside 'title:' at column 1; a term is in one field only",
    );
  });

  it("refuses a '-' that is not directly followed by what it excludes", () => {
    expect(syntaxError('rates - sponsored')).toEqual({
      message:
        '\'-\' at column 7 must be followed directly by a term, phrase or group (no space), e.g. -삼성 or -"sponsored content"',
      column: 7,
      expected: 'a term, phrase or group',
    });
    expect(syntaxError('a -').column).toBe(3);
    expect(syntaxError('--a').column).toBe(1);
    expect(syntaxError('(a -)').column).toBe(4);
  });

  it('enforces the limits: 1000 characters, 8 levels of parentheses and NOT, 50 terms', () => {
    expect(syntaxError('a'.repeat(1001))).toEqual({
      message:
        'the query is 1001 characters long; at most 1000 are allowed (column 1001 is over): split it over several rules',
      column: 1001,
      expected: 'at most 1000 characters',
    });
    expect(syntaxError('a'.repeat(1_000_000)).message).toMatch(/^the query is 1000000 characters long/);
    expect(() => parseQuery('반'.repeat(1000))).not.toThrow();
    expect(() => parseQuery(`${'('.repeat(8)}a${')'.repeat(8)}`)).not.toThrow();
    expect(syntaxError(`${'('.repeat(9)}a${')'.repeat(9)}`)).toEqual({
      message: 'the query nests more than 8 levels of parentheses and NOT at column 9; simplify it',
      column: 9,
      expected: 'at most 8 levels',
    });
    expect(() => parseQuery(`${'NOT '.repeat(4)}(((( a ))))`)).not.toThrow();
    expect(syntaxError(`${'NOT '.repeat(5)}(((( a ))))`).column).toBe(24);
    expect(syntaxError('-'.repeat(500)).column).toBe(1);
    const terms = (count: number) => Array.from({ length: count }, (_, i) => `t${i}`).join(' ');
    expect(() => parseQuery(terms(50))).not.toThrow();
    expect(syntaxError(terms(51))).toEqual({
      message: 'the query has more than 50 terms (the one at column 191 is term 51); split it over several rules',
      column: 191,
      expected: 'at most 50 terms',
    });
  });

  it('refuses lone surrogates, bidi controls and terms no reader can see, like keywords', () => {
    expect(syntaxError('rates \uD800x')).toEqual({
      message: 'not valid Unicode text at column 7 (a lone surrogate); type the query again',
      column: 7,
      expected: 'a character',
    });
    expect(syntaxError('"a \u202Eetar"').message).toBe(
      'a bidirectional control character (U+202E) at column 4 reorders what a reader sees; type the query without it',
    );
    expect(syntaxError('rates \u200B\u200B')).toEqual({
      message:
        'the term at column 7 has no visible character (only U+200B), so it would match text no reader can see; remove it or type the word',
      column: 7,
      expected: 'a visible character',
    });
    expect(syntaxError('"\u2060"').message).toMatch(
      /^the phrase at column 1 has no visible character \(only U\+2060\)/,
    );
    // Joiners inside visible words (Persian, emoji sequences) are spelling, as in keywords.
    expect(() => parseQuery('می\u200Cخواهم 👩\u200D💻')).not.toThrow();
  });
});

describe('queries typed on Japanese, Chinese and Korean keyboards', () => {
  it('reads full-width syntax as its ASCII form: parentheses, quotes, operators, fields, NEAR, -, *', () => {
    expect(parsed('（半導体 OR メモリ）')).toEqual({ or: ['term:半導体', 'term:メモリ'] });
    expect(parsed('＂interest rate＂')).toEqual('phrase:interest rate');
    expect(parsed('samsung ＡＮＤ chip')).toEqual({ and: ['term:samsung', 'term:chip'] });
    expect(parsed('samsung ＯＲ chip')).toEqual({ or: ['term:samsung', 'term:chip'] });
    expect(parsed('ＮＯＴ rumor')).toEqual({ not: 'term:rumor' });
    expect(parsed('title：samsung')).toEqual('term:samsung@title');
    expect(parsed('ｔｉｔｌｅ：（반도체 OR 메모리）')).toEqual({ or: ['term:반도체@title', 'term:메모리@title'] });
    expect(parsed('반도체 ＮＥＡＲ／５ 수출')).toEqual({ near5: ['term:반도체', 'term:수출'] });
    expect(parsed('반도체　－삼성')).toEqual({ and: ['term:반도체', { not: 'term:삼성' }] });
    expect(parsed('semicond＊')).toEqual('prefix:semicond＊');
    // Small and vertical forms of the same characters, and a query mixing both widths.
    expect(parsed('﹙a OR b﹚ ︵c OR d︶')).toEqual({
      and: [{ or: ['term:a', 'term:b'] }, { or: ['term:c', 'term:d'] }],
    });
    expect(parsed('(반도체 OR 메모리） AND 수출')).toEqual({
      and: [{ or: ['term:반도체', 'term:메모리'] }, 'term:수출'],
    });
  });

  it('matches what the same query typed in ASCII matches, and keeps full-width terms as written', () => {
    const pairs = [
      ['（半導体 OR メモリ） 輸出', '(半導体 OR メモリ) 輸出'],
      ['＂interest rate＂ hike', '"interest rate" hike'],
      ['samsung ＡＮＤ chip', 'samsung AND chip'],
      ['title：samsung', 'title:samsung'],
      ['ＳＡＭＳＵＮＧ ＮＥＡＲ／２ chip', 'samsung NEAR/2 chip'],
    ] as const;
    const articles = [
      ['半導体の輸出が増加', ''],
      ['メモリ輸出', ''],
      ['Interest rate hike ahead', ''],
      ['Samsung chip plant', ''],
      ['Chips', 'Samsung'],
      ['Samsung and its new chip', ''],
    ] as const;
    for (const [wide, ascii] of pairs) {
      for (const [title, summary] of articles) {
        expect(reasons(wide, title, summary) !== undefined, `${wide} on ${title}`).toBe(
          reasons(ascii, title, summary) !== undefined,
        );
      }
    }
    expect(reasons('（半導体 OR メモリ） 輸出', '半導体の輸出が増加')).toEqual(['半導体', '輸出']);
    // Columns are those of the query as written, one per code point.
    expect(syntaxError('（半導体 OR メモリ')).toMatchObject({
      message: "expected ')' at column 12 to close the '(' at column 1",
      column: 12,
    });
    expect(formatQuery(parseQuery('ＡＩ ＡＮＤ（반도체 ＯＲ 메모리）'))).toBe('ＡＩ AND (반도체 OR 메모리)');
  });

  it('refuses typographic quotes, which look like a phrase but are not one, with the fix', () => {
    expect(syntaxError('“interest rate” hike')).toEqual({
      message:
        'a typographic quote (“) at column 1 does not make a phrase; type straight double quotes instead: "interest rate"',
      column: 1,
      expected: 'a straight double quote (")',
    });
    expect(syntaxError('hike „Zinswende“').message).toBe(
      'a typographic quote („) at column 6 does not make a phrase; type straight double quotes instead: "Zinswende"',
    );
    expect(syntaxError('rate 〝利上げ').message).toBe(
      'a typographic quote (〝) at column 6 does not make a phrase; type straight double quotes instead: "利上げ"',
    );
    // Inside a phrase they are text like any other.
    expect(parsed('"he said “yes”"')).toEqual('phrase:he said “yes”');
  });

  it('refuses control characters in a term, naming the column and the fix', () => {
    expect(syntaxError('sam\u0000sung')).toEqual({
      message:
        'a control character (U+0000) at column 4 shows as nothing and matches nothing a reader sees; delete it and type the query again',
      column: 4,
      expected: 'a visible character',
    });
    expect(syntaxError('"rate \u001Bhike"').message).toMatch(/^a control character \(U\+001B\) at column 7 /);
    expect(syntaxError('rate\u0085').column).toBe(5);
    // Tabs and line breaks are whitespace between terms.
    expect(parsed('rate\thike\r\nfed')).toEqual({ and: ['term:rate', 'term:hike', 'term:fed'] });
  });

  it('reads a term holding invisible characters as the word a reader sees', () => {
    expect(reasons('sam\u200Bsung', 'Samsung chips')).toEqual(['sam\u200Bsung']);
    expect(reasons('"interest\u00AD rate"', 'Interest rate hike')).toEqual(['interest\u00AD rate']);
    expect(parseQuery('sam\u2060sung')).toMatchObject({ type: 'term', norm: 'samsung' });
  });
});

describe('formatQuery and describeQueryTree', () => {
  it('print the canonical text: explicit AND, NOT for -, parentheses only where precedence needs them', () => {
    expect(formatQuery(parseQuery('(반도체 OR 메모리) 수출 -삼성'))).toBe('(반도체 OR 메모리) AND 수출 AND NOT 삼성');
    expect(formatQuery(parseQuery('a OR (b c)'))).toBe('a OR b AND c');
    expect(formatQuery(parseQuery('a OR (b OR c)'))).toBe('a OR (b OR c)');
    expect(formatQuery(parseQuery('-(a NEAR/2 "b c") title:(x OR y*)'))).toBe(
      'NOT (a NEAR/2 "b c") AND (title:x OR title:y*)',
    );
  });

  it('render the tree as indented lines with the counting unit of each NEAR', () => {
    expect(
      describeQueryTree(
        parseQuery('(반도체 OR 메모리) 수출 -title:삼성 semicond* NEAR/5 "rate hike" 半導体 NEAR/3 輸出'),
      ),
    ).toEqual([
      'AND',
      '  OR',
      '    term 반도체',
      '    term 메모리',
      '  term 수출',
      '  NOT',
      '    term title:삼성',
      '  NEAR/5 (words)',
      '    prefix semicond*',
      '    phrase "rate hike"',
      '  NEAR/3 (characters)',
      '    term 半導体',
      '    term 輸出',
    ]);
  });
});

describe('evaluateQuery', () => {
  it('matches terms like keywords: Latin whole words, Korean and Japanese inside words, any case and width', () => {
    expect(reasons('rate', 'Corporate rates')).toBeUndefined();
    expect(reasons('rate', 'The RATE rose')).toEqual(['rate']);
    expect(reasons('AI', 'AI반도체 수출')).toEqual(['AI']);
    expect(reasons('AI', 'he said')).toBeUndefined();
    expect(reasons('반도체', '반도체가 늘었다')).toEqual(['반도체']);
    expect(reasons('半導体', '次世代半導体の輸出')).toEqual(['半導体']);
    expect(reasons('ai', 'ＡＩ chips')).toEqual(['ai']);
  });

  it('matches a prefix at a word start only, and phrases in order across any whitespace', () => {
    expect(reasons('semicond*', 'Semiconductors rally')).toEqual(['semicond*']);
    expect(reasons('semicond*', 'Semicond')).toEqual(['semicond*']);
    expect(reasons('semicond*', 'nonsemiconductor')).toBeUndefined();
    expect(reasons('"interest rate hike"', 'An interest\n rate  hike looms')).toEqual(['interest rate hike']);
    expect(reasons('"interest rate hike"', 'rate hike on interest')).toBeUndefined();
    expect(reasons('"interest rate"', 'interest rates')).toBeUndefined();
  });

  it('combines with AND, OR and NOT; reasons are the true terms in query order, once each, never from NOT', () => {
    const query = '(반도체 OR 메모리) AND 수출 NOT 삼성';
    expect(reasons(query, '메모리 반도체 수출 급증')).toEqual(['반도체', '메모리', '수출']);
    expect(reasons(query, '메모리 수출', '삼성전자 실적')).toBeUndefined();
    expect(reasons(query, '반도체 생산')).toBeUndefined();
    expect(reasons('a OR b OR a', 'a b')).toEqual(['a', 'b']);
    expect(reasons('NOT sports', 'markets')).toEqual([]);
    expect(reasons('NOT sports', 'sports')).toBeUndefined();
    expect(reasons('rates OR NOT sports', 'markets')).toEqual([]);
  });

  it('looks for a term in the title or the summary, never across the two, and honours field scopes', () => {
    expect(reasons('"rate hike"', 'rate', 'hike')).toBeUndefined();
    expect(reasons('title:rates', 'Rates rise')).toEqual(['title:rates']);
    expect(reasons('title:rates', 'Markets', 'rates rise')).toBeUndefined();
    expect(reasons('summary:"rate hike"', 'x', 'a rate hike')).toEqual(['summary:"rate hike"']);
    expect(reasons('title:(a OR b) c', 'b', 'c')).toEqual(['title:b', 'c']);
  });

  it('NEAR/n: both in one field with at most n words between, either order, two separate occurrences', () => {
    expect(reasons('samsung NEAR/2 chips', 'Samsung sells more chips')).toEqual(['samsung', 'chips']);
    expect(reasons('samsung NEAR/1 chips', 'Samsung sells more chips')).toBeUndefined();
    expect(reasons('chips NEAR/2 samsung', 'Samsung sells more chips')).toEqual(['chips', 'samsung']);
    expect(reasons('samsung NEAR/1 chips', 'Samsung, chips')).toEqual(['samsung', 'chips']);
    // Punctuation is not a word; the rest of a word a prefix or a Korean term starts is not one either.
    expect(reasons('samsung NEAR/1 semicond*', 'Samsung — semiconductors')).toEqual(['samsung', 'semicond*']);
    expect(reasons('반도체 NEAR/1 수출', '반도체가 수출을 이끌었다')).toEqual(['반도체', '수출']);
    expect(reasons('반도체 NEAR/1 수출', '반도체가 올해 상반기 수출을')).toBeUndefined();
    expect(reasons('반도체 NEAR/1 수출', '반도체가 대거 수출을')).toEqual(['반도체', '수출']);
    expect(reasons('rates NEAR/1 semicond*', 'semiconductors, rates')).toEqual(['rates', 'semicond*']);
    expect(reasons('AI NEAR/1 수출', 'AI반도체 수출')).toEqual(['AI', '수출']);
    expect(reasons('samsung NEAR/5 chips', 'Samsung', 'chips')).toBeUndefined();
    expect(reasons('rates NEAR/3 rates', 'rates')).toBeUndefined();
    expect(reasons('rates NEAR/3 rates', 'rates and rates')).toEqual(['rates']);
    expect(reasons('samsung NEAR/3 "samsung electronics"', 'Samsung Electronics')).toBeUndefined();
    expect(reasons('"rate hike" NEAR/1 fed', 'Fed signals rate hike')).toEqual(['rate hike', 'fed']);
  });

  it('NEAR counts characters instead of words when a side has Han or kana', () => {
    expect(reasons('半導体 NEAR/1 輸出', '半導体の輸出')).toEqual(['半導体', '輸出']);
    expect(reasons('半導体 NEAR/2 輸出', '半導体と車の輸出')).toBeUndefined();
    expect(reasons('半導体 NEAR/3 輸出', '半導体と車の輸出')).toEqual(['半導体', '輸出']);
    expect(reasons('トヨタ NEAR/2 EV', 'トヨタ EV')).toEqual(['トヨタ', 'EV']);
  });
});

describe('queryFalseBecause', () => {
  const because = (query: string, title: string, summary = '') =>
    queryFalseBecause(parseQuery(query), article(title, summary));

  it('names the part of the query that failed, down to its terms, and nothing for a true query', () => {
    const query = '(반도체 OR 메모리) AND 수출 NOT 삼성';
    expect(because(query, '메모리 반도체 수출 급증')).toEqual([]);
    // Only the excluded term: the rest held.
    expect(because(query, '메모리 수출', '삼성전자 실적')).toEqual(['NOT 삼성 excludes it: "삼성" is there']);
    expect(because(query, '반도체 생산')).toEqual(['"수출" is not in the title or summary']);
    expect(because(query, '생산')).toEqual([
      'none of "반도체", "메모리" is in the title or summary',
      '"수출" is not in the title or summary',
    ]);
  });

  it('says where a fielded term was looked for, and what an excluded group found', () => {
    expect(because('title:chip AND summary:"export ban"', 'Export ban', 'chip')).toEqual([
      '"title:chip" is not in the title',
      'summary:"export ban" is not in the summary',
    ]);
    expect(because('chip NOT (samsung OR hynix)', 'Samsung and Hynix chip')).toEqual([
      'NOT (samsung OR hynix) excludes it: "samsung", "hynix" are there',
    ]);
    // An excluded part true through NOTs of its own names no term: it says it holds.
    expect(because('chip NOT (NOT samsung AND NOT hynix)', 'chip')).toEqual([
      'NOT (NOT samsung AND NOT hynix) excludes it: NOT samsung AND NOT hynix is true for this text',
    ]);
    // Alternatives that are not all plain terms of one field are each explained.
    expect(because('chip OR (wafer AND fab)', 'wafer news')).toEqual([
      '"chip" is not in the title or summary',
      '"fab" is not in the title or summary',
    ]);
  });

  it('tells a NEAR whose terms are too far apart from one whose term is missing', () => {
    const apart =
      '"chip" and "export" are both there, but never as separate occurrences within 2 words of each other in one field';
    expect(because('chip NEAR/2 export', 'chip makers plan a record export')).toEqual([apart]);
    expect(because('chip NEAR/2 export', 'chip export', '')).toEqual([]);
    expect(because('chip NEAR/2 export', 'chip', 'export')).toEqual([apart]);
    expect(because('chip NEAR/2 export', 'chip makers')).toEqual(['"export" is not in the title or summary']);
    // A term NEAR itself needs a second occurrence; overlapping ones are not separate; one is singular.
    expect(because('rate NEAR/3 rate', 'Rate decision')).toEqual([
      '"rate" is there, but no two separate occurrences are within 3 words of each other in one field',
    ]);
    expect(because('"interest rate" NEAR/3 rate', 'Interest rate decision')).toEqual([
      '"interest rate" and "rate" are both there, but never as separate occurrences within 3 words of each other in one field',
    ]);
    expect(because('半導体 NEAR/1 輸出', '半導体の生産と輸出')).toEqual([
      '"半導体" and "輸出" are both there, but never as separate occurrences within 1 character of each other in one field',
    ]);
  });

  it('says why an excluded part holds: the terms it found, or that it holds when a NOT or NEAR inside decides', () => {
    expect(because('fed AND NOT (rate AND NOT cut)', 'Fed rate')).toEqual([
      'NOT (rate AND NOT cut) excludes it: rate AND NOT cut is true for this text ("rate" is there)',
    ]);
    expect(because('fed NOT (rate NEAR/2 hike)', 'Fed rate hike')).toEqual([
      'NOT (rate NEAR/2 hike) excludes it: "rate" and "hike" are within 2 words of each other',
    ]);
  });

  it('puts at most five reasons on a line, and says how many more there are', () => {
    const terms = ['a1', 'b2', 'c3', 'd4', 'e5', 'f6', 'g7'];
    const text = falseBecauseText(because(terms.map((term) => `(${term} OR x${term})`).join(' AND '), 'nothing'));
    expect(text.split('; ')).toHaveLength(6);
    expect(text).toMatch(/; and 2 more$/);
  });
});

describe('queryAnchors', () => {
  const anchors = (query: string, frequency?: (node: QueryLeaf) => number) =>
    queryAnchors(parseQuery(query), frequency)?.map((leaf) => formatQuery(leaf));

  it('takes one child of an AND (the rarest), every branch of an OR, one side of a NEAR, nothing under NOT', () => {
    expect(anchors('(반도체 OR 메모리) AND 수출 NOT 삼성')).toEqual(['수출']);
    expect(anchors('(반도체 OR 메모리) AND 수')).toEqual(['반도체', '메모리']);
    expect(anchors('a OR b c')).toEqual(['a', 'b']);
    expect(anchors('samsung NEAR/3 "chip exports"')).toEqual(['"chip exports"']);
    expect(anchors('rates -sponsored')).toEqual(['rates']);
  });

  it('prefers phrases over words, longer over shorter, exact over prefix, by default', () => {
    expect(anchors('"rate hike" ratehikes')).toEqual(['"rate hike"']);
    expect(anchors('ai semiconductor')).toEqual(['semiconductor']);
    expect(anchors('semiconductor* semiconductor')).toEqual(['semiconductor']);
  });

  it('follows a given frequency (lower is rarer) and lists each anchor once', () => {
    expect(anchors('ai semiconductor', (leaf) => (leaf.norm === 'ai' ? 0.1 : 1))).toEqual(['ai']);
    expect(anchors('a OR A OR title:a OR a*')).toEqual(['a', 'title:a', 'a*']);
  });

  it('has no anchors for a query that only excludes', () => {
    expect(anchors('NOT a')).toBeUndefined();
    expect(anchors('a OR NOT b')).toBeUndefined();
    expect(anchors('-a -b')).toBeUndefined();
    expect(anchors('-a b')).toEqual(['b']);
  });

  it('reads a double negation as what it negates: NOT NOT samsung requires samsung (found by review)', () => {
    expect(anchors('NOT NOT samsung')).toEqual(['samsung']);
    expect(formatQuery(parseQuery('NOT NOT samsung'))).toBe('samsung');
    expect(formatQuery(parseQuery('NOT NOT NOT samsung'))).toBe('NOT samsung');
    expect(anchors('a AND NOT NOT (b OR c)')).toEqual(['a']);
  });
});
