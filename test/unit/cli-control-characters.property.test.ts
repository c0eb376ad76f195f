/**
 * newControlCharacterProblems (cli/control-characters.ts): a text attribute a person writes is
 * refused when it holds a character a web page shows escaped (controls but tab and line breaks,
 * format characters but the soft hyphen and joiners, lone surrogates), at the first such
 * character; a value the stored item holds already is kept.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { newControlCharacterProblems } from '../../cli/control-characters.ts';

/** The characters a web page shows escaped (cli/output.ts), written out again here as the oracle. */
const acting = (char: string): boolean =>
  /[\p{Cc}\p{Cf}\p{Cs}\p{Zl}\p{Zp}\u115f\u1160\u3164\uffa0]/u.test(char) && !'\t\n\r\u00ad\u200c\u200d'.includes(char);

const text = fc.string({
  unit: fc.oneof(
    fc.constantFrom(
      '\u001b',
      '\u0007',
      '\u007f',
      '\u009b',
      '\u202e',
      '\u2066',
      '\t',
      '\n',
      '\r',
      '\u200c',
      '\u200d',
      'é',
      '반',
      '😀',
    ),
    fc.string({ minLength: 1, maxLength: 1 }),
  ),
  maxLength: 12,
});

describe('newControlCharacterProblems', () => {
  it('names the first acting character of each new value at its place, and nothing else', () => {
    fc.assert(
      fc.property(text, fc.array(text, { maxLength: 4 }), (name, keywords) => {
        const problems = newControlCharacterProblems({ name, keywords }, undefined);
        const expected = [
          ...(Array.from(name).some(acting) ? [['name']] : []),
          ...keywords.flatMap((keyword, index) => (Array.from(keyword).some(acting) ? [['keywords', index]] : [])),
        ];
        expect(problems.map((problem) => problem.path)).toEqual(expected);
        for (const problem of problems) {
          const value = problem.path.length === 1 ? name : (keywords[problem.path[1] as number] ?? '');
          const at = Array.from(value).findIndex(acting);
          const code = Array.from(value)[at]?.codePointAt(0) ?? 0;
          expect(problem.message).toContain(
            `(U+${code.toString(16).toUpperCase().padStart(4, '0')} at character ${at + 1})`,
          );
        }
        // Stored as it is: kept, whatever it holds.
        expect(newControlCharacterProblems({ name, keywords }, { name, keywords: new Set(keywords) })).toEqual([]);
      }),
    );
  });
});
