/**
 * `api-key set`'s reading of its input (cli/api-key.ts `apiKeyValueOf`) against any text: what it
 * stores is a key the run can send (printable ASCII, the rule functions/provider/news-client.ts
 * enforces), and what it refuses it refuses with a usage error that does not quote the input.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { apiKeyValueOf } from '../../cli/api-key.ts';
import { UsageError } from '../../cli/errors.ts';

const sendable = (key: string) => /^[\x21-\x7e]+$/.test(key);

describe('apiKeyValueOf', () => {
  it('stores only keys an HTTP header can carry, bare or as {"apiKey": …}, and never quotes what it refuses', () => {
    const printable = fc.string({ unit: fc.integer({ min: 0x21, max: 0x7e }).map((c) => String.fromCharCode(c)) });
    const text = fc.oneof(
      printable,
      fc.string({ unit: 'binary' }),
      fc.tuple(printable, fc.string({ unit: 'binary', maxLength: 2 }), printable).map((parts) => parts.join('')),
    );
    const input = fc.oneof(
      text,
      text.map((key) => JSON.stringify({ apiKey: key })),
      text.map((key) => `  ${key}\n`),
    );
    fc.assert(
      fc.property(input, (raw) => {
        let stored: string;
        try {
          stored = apiKeyValueOf(raw);
        } catch (error) {
          expect(error).toBeInstanceOf(UsageError);
          const trimmed = raw.trim();
          if (trimmed.length >= 8) expect((error as Error).message).not.toContain(trimmed);
          return;
        }
        const key = stored.startsWith('{') ? (JSON.parse(stored) as { apiKey: string }).apiKey.trim() : stored;
        expect(sendable(key)).toBe(true);
      }),
      { numRuns: 2000 },
    );
  });

  it('refuses a key with a character that is not ASCII and says where, not what', () => {
    for (const raw of ['\ufffd\ufffdSECRETBIN', 'caf\u00e9-secret', '{"apiKey": "ключ-secret"}']) {
      expect(() => apiKeyValueOf(raw)).toThrow(/space, control or non-ASCII character \(character \d+\)/);
    }
  });
});
