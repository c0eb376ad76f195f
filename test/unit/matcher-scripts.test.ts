/**
 * Word edges per script (issue 30, item 4): scripts written with spaces between words (Latin,
 * Cyrillic, Greek, Hebrew, Arabic, Devanagari, ...) have whole words, so a term never matches
 * inside a longer word; Hangul (space-separated, but particles attach to the word), Han, kana,
 * Thai, Lao, Khmer and Myanmar have no edges and match inside words. NEAR counts the same words,
 * and counts characters when a side is in a script written without spaces. Every example runs
 * through the indexed matcher, the naive one and the query evaluator, which must agree.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compileRules, naiveMatch } from '#core/matcher';
import type { Article, Rule } from '#core/model';
import { describeQueryTree, evaluateQuery, parseQuery } from '#core/query';
import { containsTerm, IdSet, normalizeText, TermAutomaton } from '#core/text';

function article(title: string, summary = ''): Article {
  return {
    key: 'id:1',
    title,
    summary,
    url: 'https://news.example.com/a',
    publishedAt: 0,
    categories: [],
    categoryNames: [],
  };
}

/** Whether a rule with this keyword, and one with this query, match; both matchers and the evaluator must agree. */
function matches(criterion: { keyword: string } | { query: string }, title: string, summary = ''): boolean {
  const rule: Rule = {
    ruleId: 'r',
    audienceId: 'desk',
    enabled: true,
    urgent: false,
    matchAll: false,
    ...('keyword' in criterion ? { keywords: [criterion.keyword] } : { query: criterion.query }),
  };
  const subject = article(title, summary);
  const indexed = compileRules([rule]).match(subject).length === 1;
  expect(naiveMatch([rule], subject).length === 1, `naive: ${JSON.stringify(criterion)} on ${title}`).toBe(indexed);
  if ('query' in criterion) {
    const evaluated = evaluateQuery(parseQuery(criterion.query), {
      title: normalizeText(title),
      summary: normalizeText(summary),
    });
    expect(evaluated !== undefined, `evaluateQuery: ${criterion.query} on ${title}`).toBe(indexed);
  }
  return indexed;
}

/** The keyword and the same word as a query must both match, or both not. */
function termMatches(term: string, title: string): boolean {
  const keyword = matches({ keyword: term }, title);
  expect(matches({ query: term }, title), `query ${term} on ${title}`).toBe(keyword);
  return keyword;
}

describe('scripts written with spaces have word edges', () => {
  it('Cyrillic: рост is not found inside Прирост', () => {
    expect(termMatches('рост', 'Прирост цен замедлился')).toBe(false);
    expect(termMatches('рост', 'Рост цен замедлился')).toBe(true);
    expect(termMatches('рост', 'цены: рост, затем спад')).toBe(true);
    expect(termMatches('рост', 'Ростелеком отчитался')).toBe(false);
  });

  it('Greek: νέα is not found inside Ανανέα', () => {
    expect(termMatches('νέα', 'Ανανέα παραίτηση')).toBe(false);
    expect(termMatches('νέα', 'Νέα Δημοκρατία')).toBe(true);
    expect(termMatches('ΝΈΑ', 'νέα μέτρα')).toBe(true);
  });

  it('Arabic, Hebrew, Armenian, Georgian and Devanagari', () => {
    expect(termMatches('سلام', 'مرحبا إسلام آباد')).toBe(false);
    expect(termMatches('سلام', 'سلام عليكم')).toBe(true);
    expect(termMatches('דם', 'אדם חדש')).toBe(false);
    expect(termMatches('דם', 'בדיקת דם')).toBe(true);
    expect(termMatches('ման', 'Հայաստանման')).toBe(false);
    expect(termMatches('ბანკი', 'ეროვნული ბანკი')).toBe(true);
    expect(termMatches('ბანკი', 'ბანკის')).toBe(false);
    // राम (Ram) inside आराम (rest): a vowel sign or a letter before it is part of the word.
    expect(termMatches('राम', 'आराम करें')).toBe(false);
    expect(termMatches('राम', 'राम मंदिर')).toBe(true);
  });

  it('keeps a Latin term whole next to another space-separated script, not next to Hangul or Han', () => {
    expect(termMatches('AI', 'AIрешения')).toBe(false);
    expect(termMatches('AI', 'AI-решения')).toBe(true);
    expect(termMatches('AI', 'AI반도체')).toBe(true);
    expect(termMatches('AI', '生成AIの活用')).toBe(true);
  });

  it('takes a * at the end of a word in any script written with spaces', () => {
    expect(matches({ query: 'рост*' }, 'Ростелеком отчитался')).toBe(true);
    expect(matches({ query: 'рост*' }, 'Прирост цен')).toBe(false);
    expect(matches({ query: 'νέ*' }, 'Νέα Δημοκρατία')).toBe(true);
    expect(() => parseQuery('ข่าว*')).toThrow(/is only allowed at the end of a word in a script written with spaces/);
  });
});

describe('Korean, Chinese, Japanese and Thai have no word edges', () => {
  it('match inside words, as before', () => {
    expect(termMatches('반도체', '차세대반도체가 온다')).toBe(true);
    expect(termMatches('半導体', '次世代半導体の開発')).toBe(true);
    expect(termMatches('トヨタ', 'トヨタ自動車')).toBe(true);
    expect(termMatches('ข่าว', 'หนังสือพิมพ์ข่าวสด')).toBe(true);
    expect(termMatches('ສປປ', 'ຂ່າວສປປລາວ')).toBe(true);
    expect(termMatches('ကမ္ဘာ', 'ကမ္ဘာ့သတင်း')).toBe(true);
  });
});

describe('NEAR counts the words matching sees', () => {
  it('counts words of space-separated scripts, and a term never starts inside one', () => {
    expect(matches({ query: 'рост NEAR/1 цен' }, 'Прирост цен')).toBe(false);
    expect(matches({ query: 'рост NEAR/1 цен' }, 'Рост высоких цен')).toBe(true);
    expect(matches({ query: 'рост NEAR/1 цен' }, 'Рост очень высоких цен')).toBe(false);
    expect(matches({ query: 'νέα NEAR/2 μέτρα' }, 'Νέα οικονομικά μέτρα')).toBe(true);
  });

  it('counts characters when a side is Thai, Lao, Khmer or Myanmar, as for Han and kana', () => {
    // Thai is written without spaces between words: a run of Thai is not one word.
    expect(matches({ query: 'ข่าว NEAR/3 สด' }, 'ข่าวสด')).toBe(true);
    expect(matches({ query: 'ข่าว NEAR/3 สด' }, 'ข่าววันนี้สด')).toBe(false);
    expect(matches({ query: 'ข่าว NEAR/6 สด' }, 'ข่าววันนี้สด')).toBe(true);
    expect(describeQueryTree(parseQuery('ข่าว NEAR/3 สด'))[0]).toBe('NEAR/3 (characters)');
    expect(describeQueryTree(parseQuery('рост NEAR/3 цен'))[0]).toBe('NEAR/3 (words)');
    expect(describeQueryTree(parseQuery('반도체 NEAR/3 수출'))[0]).toBe('NEAR/3 (words)');
  });
});

describe('the keyword automaton agrees with containsTerm in every script', () => {
  const PIECES = [
    'рост',
    'прирост',
    'цен',
    'νέα',
    'ανανέα',
    'سلام',
    'إسلام',
    'דם',
    'אדם',
    'राम',
    'आराम',
    'ข่าว',
    'สด',
    '반도체',
    '半導体',
    'ai',
    '5g',
    'é',
    'e\u0301',
  ];
  const SEPARATORS = ['', ' ', '-', ', ', '가'];
  const text = fc
    .array(fc.tuple(fc.constantFrom(...PIECES), fc.constantFrom(...SEPARATORS)), { maxLength: 8 })
    .map((parts) => normalizeText(parts.map(([word, separator]) => word + separator).join('')));
  const term = fc
    .array(fc.tuple(fc.constantFrom(...PIECES), fc.constantFrom(...SEPARATORS)), { minLength: 1, maxLength: 2 })
    .map((parts) => normalizeText(parts.map(([word, separator]) => word + separator).join('')));

  it('finds exactly the terms containsTerm finds, exact and prefix', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(term, { minLength: 1, maxLength: 12 }),
        text,
        fc.boolean(),
        (terms, subject, prefix) => {
          const usable = terms.filter((t) => t.length > 0);
          const automaton = new TermAutomaton(usable.map((t, id) => ({ text: t, id, prefix })));
          const found = new IdSet(usable.length);
          automaton.scan(subject, found);
          const expected = usable.flatMap((t, id) => (containsTerm(subject, t, prefix) ? [id] : []));
          expect([...found.members.subarray(0, found.size)].sort((a, b) => a - b)).toEqual(expected);
        },
      ),
      { numRuns: 1500 },
    );
  });
});
