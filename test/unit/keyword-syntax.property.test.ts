/**
 * A keyword is a literal phrase, so one written in query syntax (`"interest rate"`, `semicond*`,
 * `chips OR memory`, `-rumor`) would never match what was meant. The rule schema refuses every
 * such keyword, in `keywords` and `excludeKeywords`, naming it and saying what to write instead,
 * and accepts every keyword that is plain words, however much punctuation they carry
 * (functions/core/keyword-syntax.ts). A stored rule with one is skipped by the run, named, while
 * the others run.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { buildRuleSet, parseRule } from '#core/model';

const topicArn = 'arn:aws:sns:us-east-1:123456789012:desk';
const LISTS = ['keywords', 'excludeKeywords'] as const;

/** The schema's verdict on one keyword in `list` (a rule with another criterion when it is an exclusion). */
function verdict(keyword: string, list: (typeof LISTS)[number]): string | undefined {
  const parsed = parseRule({
    ruleId: 'r',
    audienceId: 'desk',
    ...(list === 'excludeKeywords' ? { categories: ['002*'] } : {}),
    [list]: [keyword],
  });
  return parsed.ok ? undefined : parsed.rejected.reason;
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
const list = fc.constantFrom(...LISTS);

describe('keywords written in query syntax', () => {
  it('accepts any keyword of plain words, with apostrophes, hyphens, stars inside and lowercase or/and/not', () => {
    fc.assert(
      fc.property(phrase(plainWord), list, (keyword, where) => {
        expect(verdict(keyword, where)).toBeUndefined();
      }),
    );
  });

  it('accepts what only looks like syntax: an operator with no word after it, a lone inch mark', () => {
    for (const keyword of [
      'Portland, OR',
      'OR',
      'do NOT',
      '12" vinyl',
      'rock ’n’ roll',
      'chips - memory',
      'war or peace',
    ])
      for (const where of LISTS) expect(verdict(keyword, where), keyword).toBeUndefined();
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
      fc.property(phrase(plainWord), phrase(plainWord), fc.constantFrom('OR', 'ＯＲ'), list, (a, b, or, where) => {
        const keyword = `${a} ${or} ${b}`;
        const reason = verdict(keyword, where);
        expect(reason).toContain(
          `OR joins terms only in a query; write the alternatives as separate ${where} (${a}, ${b})`,
        );
        expect(reason).toContain('write it in lowercase');
      }),
    );
  });

  it('refuses AND and NEAR/n between words, pointing at the query field', () => {
    fc.assert(
      fc.property(phrase(plainWord), phrase(plainWord), fc.constantFrom('AND', 'NEAR/5'), list, (a, b, and, where) => {
        const reason = verdict(`${a} ${and} ${b}`, where);
        expect(reason).toContain(`${and} joins terms only in a query`);
        expect(reason).toContain("use the rule's query field: query: ");
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

  it('refuses a keyword in parentheses and a field scope, pointing at the query field', () => {
    fc.assert(
      fc.property(phrase(plainWord), list, (words, where) => {
        expect(verdict(`(${words})`, where)).toContain(`write ${words} without them`);
        expect(verdict(`title:${words}`, where)).toContain("a keyword has no field scope ('title:'");
      }),
    );
  });

  it('the run skips a stored rule with such a keyword, naming it, while the others run', () => {
    const ruleSet = buildRuleSet(
      [
        { ruleId: 'quoted', audienceId: 'desk', keywords: ['rates', '"interest rate"'] },
        { ruleId: 'starred', audienceId: 'desk', keywords: ['chips'], excludeKeywords: new Set(['rumou*']) },
        { ruleId: 'fine', audienceId: 'desk', keywords: ['interest rate', "O'Brien"] },
      ],
      [{ audienceId: 'desk', topicArn }],
    );
    expect(ruleSet.rules.map((rule) => rule.ruleId)).toEqual(['fine']);
    expect(ruleSet.rejected).toEqual([
      {
        table: 'rules',
        key: 'quoted',
        reason: expect.stringContaining(`keywords[1]: '"interest rate"': write interest rate without quotes`),
      },
      { table: 'rules', key: 'starred', reason: expect.stringContaining('excludeKeywords[0]: "rumou*"') },
    ]);
  });
});
