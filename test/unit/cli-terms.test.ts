/**
 * A rule's terms as lists show them (cli/workbench/terms.ts). A review found the console's rules
 * page writing the one term "semiconductor, chip" exactly as it wrote the two terms semiconductor
 * and chip, and its form accepting the one term without a word.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { commaTermNotes, termsText } from '../../cli/workbench/terms.ts';

/** Reads a list back as a person would: JSON strings, and bare words between ", ". */
function readBack(text: string): string[] {
  if (text === '') return [];
  const terms: string[] = [];
  const token = /("(?:[^"\\]|\\.)*"|[^,\s"]+)(?:, |$)/gy;
  for (let match = token.exec(text); match !== null; match = token.exec(text)) {
    const [, term = ''] = match;
    terms.push(term.startsWith('"') ? (JSON.parse(term) as string) : term);
    if (token.lastIndex === text.length) break;
  }
  expect(token.lastIndex, `all of ${text} read`).toBe(text.length);
  return terms;
}

describe('termsText', () => {
  it('tells one term with a comma from two terms', () => {
    expect(termsText(['semiconductor, chip'])).toBe('"semiconductor, chip"');
    expect(termsText(['semiconductor', 'chip'])).toBe('semiconductor, chip');
    expect(termsText(new Set(['interest rate', 'inflation']))).toBe('"interest rate", inflation');
    expect(termsText('not a list')).toBe('');
  });

  it('any list of terms reads back as exactly those terms (property)', () => {
    fc.assert(
      fc.property(fc.array(fc.string({ unit: 'grapheme', maxLength: 12 }), { maxLength: 6 }), (terms) => {
        expect(readBack(termsText(terms))).toEqual(terms);
      }),
      { numRuns: 500 },
    );
  });
});

describe('commaTermNotes', () => {
  it('names each term holding a comma, with its field, and nothing else', () => {
    expect(
      commaTermNotes({ keywords: ['semiconductor, chip', 'memory'], excludeKeywords: new Set(['1,000 jobs']) }),
    ).toEqual([
      'Keywords: "semiconductor, chip" is one term, matched as written with its comma; if you meant several, put each on a line of its own',
      'Not keywords: "1,000 jobs" is one term, matched as written with its comma; if you meant several, put each on a line of its own',
    ]);
    expect(commaTermNotes({ keywords: ['semiconductor', 'chip'], query: 'a, b' })).toEqual([]);
  });
});
