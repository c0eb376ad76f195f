/**
 * cli/command.ts's integerOption against any text: only decimal digits within the bounds are
 * taken, as the number they write; `1e1`, `0x10`, ` 5`, `5.0` and the empty string are refused
 * with a message that says what is wanted.
 */
import { InvalidArgumentError } from 'commander';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { integerOption } from '../../cli/command.ts';

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
