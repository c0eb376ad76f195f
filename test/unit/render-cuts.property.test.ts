/**
 * Where rendering cuts text: `clipUnits` finds the last grapheme boundary within a limit from the
 * one grapheme around it, and `trimToFit` keeps the cut points of texts it has seen. Both must
 * cut exactly where walking every grapheme and word from the start does, for any text: emoji
 * with modifiers and joiners, flags, combining marks, Hangul jamo, lone surrogates.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { clipUnits, forgetTextCuts, trimToFit } from '#core/render';

const graphemes = new Intl.Segmenter(undefined, { granularity: 'grapheme' });

/** The reference: every grapheme from the start, up to the limit. */
function clipByWalking(text: string, maxUnits: number): string {
  if (text.length <= maxUnits) return text;
  let end = 0;
  for (const { index, segment } of graphemes.segment(text)) {
    if (index + segment.length > maxUnits) break;
    end = index + segment.length;
  }
  return text.slice(0, end);
}

/** Pieces that make graphemes of several code units, and places where they join or split. */
const tricky = fc.constantFrom(
  '👩‍👩‍👧',
  '👍🏽',
  '🇰🇷',
  '🇯🇵🇺🇸',
  '🏴󠁧󠁢󠁳󠁣󠁴󠁿',
  'e\u0301',
  '\u1100\u1161\u11A8',
  '한',
  '日本',
  ' ',
  '  ',
  '-',
  '\u200d',
  '\ud800',
  '\udc00',
  'a',
  'Samsung',
  '\r\n',
);
const text = fc.oneof(
  fc.string({ unit: 'grapheme', maxLength: 60 }),
  fc.array(tricky, { maxLength: 40 }).map((parts) => parts.join('')),
  fc.string({ unit: fc.constantFrom('\ud83c', '\udde6', '\u0301', 'a', ' ', '\u200d'), maxLength: 40 }),
);

describe('clipUnits', () => {
  it('keeps the same whole graphemes as walking from the start', () => {
    fc.assert(
      fc.property(text, fc.integer({ min: -2, max: 130 }), (value, maxUnits) => {
        expect(clipUnits(value, maxUnits)).toBe(clipByWalking(value, Math.max(0, maxUnits)));
      }),
      { numRuns: 3000 },
    );
  });
});

describe('trimToFit', () => {
  it('cuts a text it has seen exactly where it cuts it unseen, for every limit', () => {
    fc.assert(
      fc.property(
        text,
        text,
        fc.array(fc.integer({ min: 0, max: 80 }), { minLength: 1, maxLength: 6 }),
        (value, other, limits) => {
          for (const limit of limits) {
            const fits = (candidate: string) => candidate.length <= limit;
            forgetTextCuts();
            const unseen = trimToFit(value, fits);
            // Seen: the same headline again for another audience, another text's cuts beside it.
            trimToFit(other, (candidate) => candidate.length <= limit + 1);
            expect(trimToFit(value, fits)).toBe(unseen);
            expect(trimToFit(value, fits)).toBe(unseen);
          }
        },
      ),
      { numRuns: 1500 },
    );
  });
});
