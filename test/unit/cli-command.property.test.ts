/**
 * cli/command.ts's integerOption against any text: only decimal digits within the bounds are
 * taken, as the number they write; `1e1`, `0x10`, ` 5`, `5.0` and the empty string are refused
 * with a message that says what is wanted. Its textListOption splits a list as collectList does,
 * except that a comma inside a number (`1,000 jobs`) is refused, not split.
 */
import { InvalidArgumentError } from 'commander';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { collectList, integerOption, textListOption } from '../../cli/command.ts';

describe('integerOption', () => {
  it('takes exactly the decimal digits within its bounds', () => {
    const parse = integerOption(1, 1440);
    const texts = fc.oneof(
      fc.string(),
      fc.stringMatching(/^\d{1,6}$/),
      fc.constantFrom('1e1', '0x10', '0b11', '0o7', ' 5', '5 ', '5.0', '+5', '-1', '', '１２'),
    );
    fc.assert(
      fc.property(texts, (text) => {
        const wanted = /^\d+$/.test(text) && Number(text) >= 1 && Number(text) <= 1440;
        if (wanted) {
          expect(parse(text)).toBe(Number.parseInt(text, 10));
        } else {
          expect(() => parse(text)).toThrow(InvalidArgumentError);
          expect(() => parse(text)).toThrow('must be a whole number from 1 to 1440, in decimal digits (such as 1)');
        }
      }),
    );
  });
});

describe('textListOption (--keywords)', () => {
  const parse = textListOption('--keywords');
  const thousands = fc.integer({ min: 1000, max: 999_999_999 }).map((value) => value.toLocaleString('en-US'));
  const words = fc.array(fc.stringMatching(/^[a-z][a-z ]{0,10}[a-z]$/), { maxLength: 3 });

  it('refuses a comma inside a number anywhere in the list, naming the number and how to write it', () => {
    fc.assert(
      fc.property(
        words,
        fc.constantFrom('', '$', 'hire '),
        thousands,
        fc.constantFrom('', ' jobs', '%'),
        words,
        (before, lead, number, tail, after) => {
          const value = [...before, `${lead}${number}${tail}`, ...after].join(',');
          expect(() => parse(value, undefined)).toThrow(InvalidArgumentError);
          expect(() => parse(value, undefined)).toThrow(
            `the comma in ${number} would split it (into ${value
              .split(',')
              .map((part) => `"${part.trim()}"`)
              .join(
                ', ',
              )}), as every comma in a list does. Write the number as ${number.replaceAll(',', '')} if the articles do; to keep the comma, put the keyword in a rules file (keywords: ["${lead}${number}${tail}"])`,
          );
        },
      ),
    );
  });

  it('splits a list of small numbers, as a person means it: no decimal is suggested', () => {
    for (const value of ['Windows 10,11', 'iPhone 15,16', '2,5', '2,5%', 'G7,G20', '1,10'])
      expect(parse(value, undefined), value).toEqual(collectList(value, undefined));
  });

  it('splits every other list as collectList does: words, codes, years, numbers after a space', () => {
    const part = fc.oneof(
      fc.stringMatching(/^[a-z][a-z0-9 -]{0,10}$/),
      fc.stringMatching(/^\d{4,9}$/),
      fc.stringMatching(/^[A-Z]\d{1,3}$/),
      fc.stringMatching(/^\d{1,3}[a-z%]+$/),
      // Lists of small numbers: `Windows 10,11`, `2,5`.
      fc.stringMatching(/^(?:[a-z]+ )?\d{1,2}$/),
    );
    fc.assert(
      fc.property(fc.array(part, { minLength: 1, maxLength: 5 }), fc.constantFrom(',', ', ', ' ,'), (parts, comma) => {
        // A number after ", " is a new value, not the rest of one ("1, 2" is two numbers); only
        // three digits after a bare comma make a thousands separator.
        const value = parts.join(comma);
        if (
          comma === ',' &&
          parts.some((text, index) => /(^|\s)\d{1,3}$/.test(text) && /^\d{3}(?!\d)/.test(parts[index + 1] ?? ''))
        ) {
          return;
        }
        expect(parse(value, ['earlier'])).toEqual(collectList(value, ['earlier']));
      }),
    );
  });
});
