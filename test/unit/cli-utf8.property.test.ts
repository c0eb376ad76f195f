/**
 * cli/utf8.ts against any bytes: UTF-8 comes back as the same text (a leading byte-order mark
 * dropped), and anything else is refused with the line and column of its first bad byte, never
 * decoded into U+FFFD.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { UsageError } from '../../cli/errors.ts';
import { utf8Text } from '../../cli/utf8.ts';

/** Byte sequences that are not UTF-8 whatever follows them. */
const invalid = fc.constantFrom(
  [0x80], // a continuation byte with no lead
  [0xbf],
  [0xc0, 0x80], // overlong
  [0xc1, 0xbf],
  [0xe0, 0x80, 0x80], // overlong
  [0xed, 0xa0, 0x80], // a surrogate
  [0xf4, 0x90, 0x80, 0x80], // past U+10FFFF
  [0xf5],
  [0xff],
  [0xe2, 0x41], // a lead cut short by ASCII
  [0xf0, 0x9f, 0x0a], // cut short by a line break
  [0xe9, 0x0a], // Latin-1 "é" at the end of a line
);
/** Any text: every code point but the surrogates, which UTF-8 cannot encode. */
const text = fc.string({
  unit: fc
    .oneof(fc.integer({ min: 0, max: 0xd7ff }), fc.integer({ min: 0xe000, max: 0x10ffff }), fc.constant(0x0a))
    .map((code) => String.fromCodePoint(code)),
});

function refusal(bytes: Uint8Array): UsageError {
  try {
    utf8Text(bytes, 'f.yaml');
  } catch (error) {
    expect(error).toBeInstanceOf(UsageError);
    return error as UsageError;
  }
  throw new Error('expected a refusal');
}

describe('utf8Text', () => {
  it('returns UTF-8 as the text it encodes', () => {
    fc.assert(
      fc.property(text, fc.boolean(), (s, bom) => {
        const bytes = Buffer.from(bom ? `\ufeff${s}` : s, 'utf8');
        expect(utf8Text(bytes, 'f.yaml')).toBe(bom || !s.startsWith('\ufeff') ? s : s.slice(1));
      }),
      { numRuns: 500 },
    );
  });

  it('refuses bytes that are not UTF-8, naming the line, column and byte where they start', () => {
    fc.assert(
      fc.property(text, fc.boolean(), invalid, fc.uint8Array({ maxLength: 20 }), (text, bom, bad, after) => {
        const before = bom ? `\ufeff${text}` : text;
        const bytes = Buffer.concat([Buffer.from(before, 'utf8'), Buffer.from(bad), Buffer.from(after)]);
        const error = refusal(bytes);
        const lines = before.split('\n');
        // A byte-order mark at the start of the file is not a column.
        const last = lines.length === 1 ? before.replace(/^\ufeff/, '') : (lines.at(-1) ?? '');
        const column = [...last].length + 1;
        const byte = (bad[0] ?? 0).toString(16).toUpperCase();
        expect(error.message).toBe('f.yaml is not UTF-8 text; nothing was read from it');
        expect(error.problems).toEqual([
          {
            message: `byte 0x${byte} (column ${column}) is not UTF-8: save the file as UTF-8 and try again`,
            file: 'f.yaml',
            line: lines.length,
          },
        ]);
      }),
      { numRuns: 500 },
    );
  });

  it('counts columns from after a byte-order mark', () => {
    const error = refusal(Buffer.from([0xef, 0xbb, 0xbf, 0x63, 0x61, 0x66, 0xe9]));
    expect(error.problems).toEqual([
      expect.objectContaining({ line: 1, message: expect.stringContaining('byte 0xE9 (column 4)') }),
    ]);
  });

  it('names a character cut off by the end of the file', () => {
    const error = refusal(Buffer.from([0x61, 0x0a, 0x62, 0xe2, 0x82]));
    expect(error.problems).toEqual([
      expect.objectContaining({ line: 2, message: expect.stringContaining('byte 0xE2 (column 2)') }),
    ]);
  });
});
