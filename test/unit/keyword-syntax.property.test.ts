/**
 * A keyword is a literal phrase, so one written in query syntax (`"interest rate"`, `semicond*`,
 * `chips OR memory`, `-rumor`) would never match what was meant. Where a person writes a rule, every
 * such keyword, in `keywords` and `excludeKeywords`, is refused, naming it and saying what to write
 * instead, and every keyword whose punctuation may be text (wire tags in parentheses, quotes inside
 * a name, an inch mark, a title in capitals) is accepted (functions/core/keyword-syntax.ts). The
 * run never skips a stored rule for it: it matches the keyword literally, as it always did.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { newKeywordSyntaxProblems } from '#core/keyword-syntax';
import { naiveMatch } from '#core/matcher';
import { type Article, buildRuleSet, parseRule } from '#core/model';
import { parseQuery } from '#core/query';
import { article as articleOf } from '#test/fake-ports';

const topicArn = 'arn:aws:sns:us-east-1:123456789012:desk';
const LISTS = ['keywords', 'excludeKeywords'] as const;

/** The verdict on one keyword in `list` written into a new rule; the schema (the run's) accepts it either way. */
function verdict(keyword: string, list: (typeof LISTS)[number]): string | undefined {
  const rule = { ruleId: 'r', audienceId: 'desk', ...(list === 'excludeKeywords' ? { categories: ['002*'] } : {}) };
  expect(parseRule({ ...rule, [list]: [keyword] }).ok, keyword).toBe(true);
  return newKeywordSyntaxProblems({ [list]: [keyword] })[0]?.message;
}

/** Words as people type them into keywords: apostrophes, hyphens, C++, AT&T, scripts without spaces. */
const plainWord = fc.oneof(
  fc
    .stringMatching(/^[A-Za-z][A-Za-z0-9]{0,8}$/)
    // The uppercase operators are syntax: what they make is tested below.
    .filter((word) => !['AND', 'OR', 'NOT'].includes(word)),
  fc.constantFrom(
    "O'Brien",
    "don't",
    'O’Neill',
    "'90s",
    'COVID-19',
    'K-pop',
    'AI-driven',
    'C++',
    'AT&T',
    'Oregon',
    'for',
    'or',
    'and',
    'not',
    'Yahoo!',
    'M*A*S*H',
    '*NSYNC',
    '-30',
    '5%',
    '반도체',
    '半導体',
    'Ölpreis',
    'цена',
  ),
);
/** A plain word that starts with a letter, so `-word` reads as a NOT. */
const letterWord = fc.stringMatching(/^[a-z][a-z0-9]{0,8}$/).filter((word) => !['and', 'or', 'not'].includes(word));
const phrase = (word: fc.Arbitrary<string>) =>
  fc.array(word, { minLength: 1, maxLength: 4 }).map((words) => words.join(' '));
/** Words around an operator that make a query, not a title in capitals: one of them in lowercase. */
const queryWords = fc
  .tuple(fc.option(phrase(plainWord)), letterWord)
  .map(([before, word]) => (before === null ? word : `${before} ${word}`));
const list = fc.constantFrom(...LISTS);

describe('keywords written in query syntax', () => {
  it('accepts any keyword of plain words, with apostrophes, hyphens, stars inside and lowercase or/and/not', () => {
    fc.assert(
      fc.property(phrase(plainWord), list, (keyword, where) => {
        expect(verdict(keyword, where)).toBeUndefined();
      }),
    );
  });

  it('accepts what only looks like syntax: wire tags, quotes inside a name, inch marks, titles in capitals, a state', () => {
    for (const keyword of [
      'Portland, OR',
      'Portland, OR police',
      'OR',
      'do NOT',
      'TO BE OR NOT TO BE',
      'NOT GUILTY',
      'ROCK AND ROLL',
      '12" vinyl',
      'MacBook Pro 14"',
      '27"',
      '5′11″',
      'Toys"R"Us',
      'Toys“R”Us',
      'Dwayne "The Rock" Johnson',
      '(속보)',
      '(종합)',
      '(1보)',
      '(LEAD)',
      '(URGENT)',
      '(2nd LD)',
      '（速報）',
      '(Reuters)',
      '(AP)',
      '(株)',
      '(주)',
      '기온 −10도',
      'rock ’n’ roll',
      'chips - memory',
      'war or peace',
    ])
      for (const where of LISTS) expect(verdict(keyword, where), keyword).toBeUndefined();
  });

  it('accepts any plain words in parentheses (a wire tag) and quotes or an inch mark inside a keyword', () => {
    fc.assert(
      fc.property(
        phrase(plainWord),
        plainWord,
        fc.constantFrom('"', '“', '”', '″'),
        list,
        (words, word, quote, where) => {
          expect(verdict(`(${words})`, where)).toBeUndefined();
          expect(verdict(`${word} ${quote}${words}${quote} ${word}`, where)).toBeUndefined();
          expect(verdict(`${words} 14${quote}`, where)).toBeUndefined();
        },
      ),
    );
  });

  it('refuses a keyword in quotes of any kind, saying to write it without them (which is then accepted)', () => {
    const quotes = fc.constantFrom(['"', '"'], ['“', '”'], ['„', '“'], ['＂', '＂'], ["'", "'"], ['‘', '’']);
    fc.assert(
      fc.property(phrase(plainWord), quotes, list, (words, [open, close], where) => {
        const keyword = `${open}${words}${close}`;
        const reason = verdict(keyword, where);
        expect(reason).toContain(`${where}[0]: `);
        expect(reason).toContain(keyword);
        expect(reason).toContain(`write ${words} without quotes: a keyword is already matched as a phrase`);
        expect(verdict(words, where)).toBeUndefined();
      }),
    );
  });

  it('refuses a prefix star, pointing at the query field', () => {
    fc.assert(
      fc.property(phrase(plainWord), fc.constantFrom('*', '＊'), list, (words, star, where) => {
        const keyword = `${words}${star}`;
        const reason = verdict(keyword, where);
        expect(reason).toContain(keyword);
        expect(reason).toContain("a keyword has no wildcard ('*' would be matched as a star); for a prefix match");
        expect(reason).toContain(`use the rule's query field: query: ${where === 'keywords' ? '' : '-'}`);
      }),
    );
  });

  it('refuses OR between words, naming the alternatives as separate keywords', () => {
    fc.assert(
      fc.property(queryWords, queryWords, fc.constantFrom('OR', 'ＯＲ'), list, (a, b, or, where) => {
        const keyword = `${a} ${or} ${b}`;
        const reason = verdict(keyword, where);
        expect(reason).toContain(
          `OR joins terms only in a query; write the alternatives as separate ${where} ("${a}", "${b}")`,
        );
        expect(reason).toContain('write it in lowercase');
      }),
    );
  });

  it('refuses AND and NEAR/n between words, pointing at a query that parses (NEAR past 50 too)', () => {
    const distance = fc.integer({ min: 0, max: 999 });
    fc.assert(
      fc.property(letterWord, letterWord, fc.option(distance), list, (a, b, near, where) => {
        const operator = near === null ? 'AND' : `NEAR/${near}`;
        const reason = verdict(`${a} ${operator} ${b}`, where) ?? '';
        expect(reason).toContain(`${operator} joins terms only in a query`);
        // What the parser takes: NEAR/1 to NEAR/50.
        const fixed = near === null ? 'AND' : `NEAR/${Math.min(Math.max(near, 1), 50)}`;
        const query = where === 'keywords' ? `${a} ${fixed} ${b}` : `-(${a} ${fixed} ${b})`;
        expect(reason).toContain(`use the rule's query field: query: ${query}`);
        expect(() => parseQuery(query), query).not.toThrow();
        if (fixed !== operator) expect(reason).toContain(`a query's NEAR takes 1 to 50 words`);
      }),
    );
  });

  it('refuses NOT or a dash before a word: excludeKeywords is where an exclusion goes', () => {
    const negation = fc.constantFrom('NOT ', '-', '\u2013', '\u2014', '\u2212', '\u2010');
    fc.assert(
      fc.property(fc.option(phrase(plainWord)), negation, letterWord, list, (before, not, word, where) => {
        const keyword = `${before === null ? '' : `${before} `}${not}${word}`;
        const reason = verdict(keyword, where);
        expect(reason).toContain(keyword);
        expect(reason).toContain(
          where === 'keywords' ? `to exclude ${word}, put it in excludeKeywords` : `already excludes: write ${word}`,
        );
      }),
    );
  });

  it('refuses parentheses around query syntax, pointing at the query (and its phrase for the text), never a bare word', () => {
    fc.assert(
      fc.property(queryWords, queryWords, list, (a, b, where) => {
        const keyword = `(${a} OR ${b})`;
        const reason = verdict(keyword, where) ?? '';
        expect(reason).toContain('parentheses group terms only in a query');
        // The text as a query phrase, where one can hold it (no '*' or '"' in it).
        const phrase = `"${keyword}"`;
        const parsesAsPhrase = (() => {
          try {
            parseQuery(phrase);
            return true;
          } catch {
            return false;
          }
        })();
        if (parsesAsPhrase) expect(reason).toContain(`query: ${where === 'keywords' ? '' : '-'}${phrase}`);
        else expect(reason).not.toContain('with its parentheses');
        expect(reason).not.toContain('without them');
      }),
    );
  });

  it('refuses a field scope, pointing at the query field', () => {
    fc.assert(
      fc.property(phrase(plainWord), list, (words, where) => {
        expect(verdict(`title:${words}`, where)).toContain("a keyword has no field scope ('title:'");
      }),
    );
  });

  it('refuses only what the write adds: a keyword the stored rule has in the same list is kept', () => {
    const stored = { keywords: new Set(['"interest rate"']), excludeKeywords: ['rumou*'] };
    expect(
      newKeywordSyntaxProblems({ keywords: ['"interest rate"', 'rates'], excludeKeywords: ['rumou*'] }, stored),
    ).toEqual([]);
    expect(newKeywordSyntaxProblems({ keywords: ['rates', 'rumou*'] }, stored)).toEqual([
      {
        list: 'keywords',
        index: 1,
        message: expect.stringContaining('keywords[1]: "rumou*": a keyword has no wildcard'),
      },
    ]);
  });

  it('the query it advises for a keyword of a rule with other keywords keeps the any-of: the advised rule matches what the original meant', () => {
    const audiences = [{ audienceId: 'desk', topicArn }];
    const article = (title: string): Article => articleOf('1', { title, summary: '' });
    /** The rule as advised: the query the message gives, and no keywords. */
    const advised = (rule: { keywords: string[]; query?: string }) => {
      const [problem] = newKeywordSyntaxProblems(rule);
      const query = /query: (.*?)(?:; to match|$)/u.exec(problem?.message ?? '')?.[1];
      expect(query, problem?.message).toBeDefined();
      const ruleSet = buildRuleSet([{ ruleId: 'advised', audienceId: 'desk', query }], audiences);
      expect(ruleSet.rejected).toEqual([]);
      return (title: string) => naiveMatch(ruleSet.rules, article(title)).length > 0;
    };
    const anyOf = advised({ keywords: ['금리', 'Apple AND Samsung', 'interest rate'] });
    expect(anyOf('금리 인상')).toBe(true);
    expect(anyOf('interest rate cut')).toBe(true);
    expect(anyOf('Apple and Samsung settle')).toBe(true);
    expect(anyOf('Apple earnings')).toBe(false);
    expect(newKeywordSyntaxProblems({ keywords: ['금리', 'Apple AND Samsung'] })[0]?.message).toContain(
      "a rule's keywords are any-of and its query is ANDed with them",
    );
    // A query the rule has is kept, ANDed with the whole any-of.
    const scoped = advised({ keywords: ['금리', 'Apple AND Samsung'], query: 'title:경제' });
    expect(scoped('경제 금리 인상')).toBe(true);
    expect(scoped('경제 Apple Samsung')).toBe(true);
    expect(scoped('금리 인상')).toBe(false);
    expect(scoped('경제 Apple')).toBe(false);
  });

  it('the run keeps running a stored rule with such a keyword, as before: it is no reason to skip the rule', () => {
    const ruleSet = buildRuleSet(
      [
        { ruleId: 'quoted', audienceId: 'desk', keywords: ['rates', '"interest rate"'] },
        { ruleId: 'starred', audienceId: 'desk', keywords: ['chips'], excludeKeywords: new Set(['rumou*']) },
        { ruleId: 'tagged', audienceId: 'desk', keywords: ['(속보)', 'chips OR memory', '-rumor', 'title:x'] },
        { ruleId: 'fine', audienceId: 'desk', keywords: ['interest rate', "O'Brien"] },
      ],
      [{ audienceId: 'desk', topicArn }],
    );
    expect(ruleSet.rules.map((rule) => rule.ruleId)).toEqual(['quoted', 'starred', 'tagged', 'fine']);
    expect(ruleSet.rejected).toEqual([]);
    expect(ruleSet.rules[0]?.keywords).toEqual(['rates', '"interest rate"']);
  });
});
