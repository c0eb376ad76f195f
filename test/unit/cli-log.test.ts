/**
 * The core's warnings as the CLI prints them (cli/log.ts): one readable line each, with the
 * details as words and the reason after a colon, never the raw JSON the Lambda logs.
 */
import { PassThrough } from 'node:stream';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { logLine, stderrLog } from '../../cli/log.ts';
import { Output } from '../../cli/output.ts';

function capture(): { output: Output; stderr: () => string } {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let text = '';
  stderr.on('data', (chunk: Buffer) => {
    text += chunk.toString();
  });
  return { output: new Output({ streams: { stdout, stderr } }), stderr: () => text };
}

describe('stderrLog', () => {
  it('prints the rule source skipping an item as table, key and reason, not as JSON', () => {
    const { output, stderr } = capture();
    // What functions/aws/dynamo-rule-source.ts logs for each rejected item.
    stderrLog(output).warn('skipped an invalid item', {
      table: 'rules',
      tableName: 'news-alerts-local-rules',
      key: 'typo-rule',
      reason: 'unknown attribute "keyword" (did you mean "keywords"?)',
    });
    expect(stderr()).toBe(
      'warning: skipped an invalid item (table rules, table name news-alerts-local-rules, key typo-rule): unknown attribute "keyword" (did you mean "keywords"?)\n',
    );
  });

  it('errors too; multi-line reasons, errors, lists and nested details stay on one line', () => {
    const { output, stderr } = capture();
    stderrLog(output).error(
      'a delivery-ledger entry is malformed; its damaged fields are ignored',
      { pk: 'delivery#a|b', attempts: 3, retryable: false, codes: ['Throttled', 'InternalError'] },
      { range: { from: '2026-11-20', to: '2026-11-21' }, error: new Error('✖ Invalid input\n  → at deliveredAt') },
    );
    expect(stderr()).toBe(
      'error: a delivery-ledger entry is malformed; its damaged fields are ignored (pk delivery#a|b, attempts 3, retryable false, codes Throttled, InternalError, range (from 2026-11-20, to 2026-11-21)): ✖ Invalid input; → at deliveredAt\n',
    );
  });

  it('any message and details: one line holding every field name and value, never a JSON object', () => {
    const name = fc
      .stringMatching(/^[a-z][a-zA-Z]{0,11}$/)
      .filter((key) => !['reason', 'error', 'cause', 'message'].includes(key) && key !== '__proto__');
    const value = fc.oneof(
      fc.string({ unit: 'binary-ascii', maxLength: 30 }),
      fc.integer(),
      fc.boolean(),
      fc.constant(undefined),
    );
    fc.assert(
      fc.property(
        fc.string({ maxLength: 40 }),
        fc.dictionary(name, value, { maxKeys: 6 }),
        fc.option(fc.string()),
        (message, fields, reason) => {
          const line = logLine(message, [{ ...fields, ...(reason === null ? {} : { reason }) }]);
          expect(line).not.toMatch(/[\r\n\u2028\u2029]/);
          // No JSON object of the details: a `{"` in the line comes from a given text, never from the log.
          const given = [message, reason, ...Object.values(fields)].some(
            (text) => typeof text === 'string' && text.includes('{'),
          );
          if (!given) expect(line).not.toMatch(/\{"/);
          for (const [key, entry] of Object.entries(fields)) {
            const text =
              typeof entry === 'string'
                ? entry
                    .split(/[\r\n]/)
                    .map((part) => part.trim())
                    .filter(Boolean)
                    .join('; ')
                : entry;
            if (text === undefined || text === '') continue;
            expect(line).toContain(`${key.replace(/([a-z0-9])([A-Z])/g, '$1 $2').toLowerCase()} ${String(text)}`);
          }
        },
      ),
    );
  });
});
