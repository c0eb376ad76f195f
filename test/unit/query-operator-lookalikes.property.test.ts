/**
 * operatorLookalikes (functions/core/query.ts): words a query reads as terms where an operator was
 * probably meant (`chip or memory`, `ADN`, `NEAR5`, `&&`), named at their column with the operator
 * to write; words that only resemble one (EARN, TON, NOW, ANT), quoted words and prefixes are not.
 * Advice for `rules create/update/put` (a warning), never a refusal: the syntax reads them as words.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { newOperatorLookalikes, operatorLookalikes, parseQuery } from '#core/query';

/** Words that are none of the lookalikes, in three scripts and all-capital forms that resemble one. */
const plain = fc.constantFrom(
  'chip',
  'memory',
  'rates',
  'EARN',
  'TON',
  'NOW',
  'ANT',
  'NET',
  'AI',
  '반도체',
  '半導体',
  'x-ray',
  '5g',
  'orb',
  'android',
  'notably',
);
const operator = fc.constantFrom(' AND ', ' OR ', ' ', ' NEAR/3 ', ' -');
/** What was typed, and the operator meant. */
const lookalike = fc.constantFrom(
  ['or', 'OR'],
  ['and', 'AND'],
  ['Not', 'NOT'],
  ['ADN', 'AND'],
  ['ANDD', 'AND'],
  ['NTO', 'NOT'],
  ['NAER', 'NEAR/5'],
  ['near', 'NEAR/5'],
  ['ORR', 'OR'],
  ['NEAR5', 'NEAR/5'],
  ['near/5', 'NEAR/5'],
  ['&&', 'AND'],
  ['||', 'OR'],
);

const queryOf = (words: readonly string[], joins: readonly string[]): string =>
  words.map((word, at) => (at === 0 ? word : `${joins[(at - 1) % joins.length] ?? ' '}${word}`)).join('');

describe('operatorLookalikes', () => {
  it('names nothing in a query of plain words and real operators', () => {
    fc.assert(
      fc.property(
        fc.array(plain, { minLength: 1, maxLength: 6 }),
        fc.array(operator, { minLength: 1, maxLength: 5 }),
        (words, joins) => {
          const query = queryOf(words, joins);
          expect(operatorLookalikes(query), query).toEqual([]);
        },
      ),
    );
  });

  it('names a lookalike put between two words at its column, with the operator meant; quoted, it is a word and not named', () => {
    fc.assert(
      fc.property(plain, lookalike, plain, fc.boolean(), (left, [typed, meant], right, quoted) => {
        const query = `${left} ${quoted ? `"${typed}"` : typed} ${right}`;
        const found = operatorLookalikes(query);
        if (quoted) {
          expect(found, query).toEqual([]);
          return;
        }
        expect(found, query).toHaveLength(1);
        expect(found[0]?.text).toBe(typed);
        expect(found[0]?.column).toBe([...left].length + 2);
        expect(found[0]?.message).toContain(`did you mean ${meant}?`);
        expect(found[0]?.message).toContain(`put it in quotes ("${typed}")`);
        // Written as meant, it parses as that operator and nothing is named.
        const fixed = `${left} ${meant} ${right}`;
        expect(operatorLookalikes(fixed), fixed).toEqual([]);
        expect(() => parseQuery(fixed)).not.toThrow();
        // Said once: a query that held it already (a stored rule) is not told again.
        expect(newOperatorLookalikes(`${query} chip`, query)).toEqual([]);
        expect(newOperatorLookalikes(query, `${left} ${right}`)).toHaveLength(1);
      }),
    );
  });

  it('names nothing in a query that does not parse (its syntax error says more) or in a prefix term', () => {
    expect(operatorLookalikes('chip or (memory')).toEqual([]);
    expect(operatorLookalikes('chip or*')).toEqual([]);
  });
});
