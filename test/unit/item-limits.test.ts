/**
 * Issue 10, item 11: limits DynamoDB and the file reader enforce are reported as validation
 * errors (exit 2, naming file, item, field and fix) before anything is sent, instead of a raw
 * ValidationException or a ReferenceError from the YAML library.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { attributeValueBytes, ITEM_LIMITS, measureItem } from '#aws/table-layout';
import { UsageError } from '../../cli/errors.ts';
import { MAX_ALIAS_COUNT, readItemFile, refuseFileAsId } from '../../cli/item-files.ts';
import { isStorableKey, itemLimitProblem } from '../../cli/items.ts';

const rules = { tableName: 'rules', keyName: 'ruleId', noun: 'rule' } as const;

describe('item size as DynamoDB measures it', () => {
  it('counts UTF-8 bytes of names and values, significant digits of numbers, and list/map overhead', () => {
    expect(attributeValueBytes('abc')).toBe(3);
    expect(attributeValueBytes('語')).toBe(3);
    expect(attributeValueBytes('😀')).toBe(4);
    expect(attributeValueBytes(true)).toBe(1);
    expect(attributeValueBytes(null)).toBe(1);
    expect(attributeValueBytes(12345)).toBe(4);
    expect(attributeValueBytes(1000)).toBe(2);
    expect(attributeValueBytes(new Uint8Array(10))).toBe(10);
    expect(attributeValueBytes(new Set(['ab', 'cd']))).toBe(4);
    expect(attributeValueBytes(['ab', 'cd'])).toBe(3 + 2 * (1 + 2));
    expect(attributeValueBytes({ start: '22:00' })).toBe(3 + 1 + 5 + 5);
    expect(measureItem({ ruleId: 'r', keywords: ['ab'] })).toEqual({
      bytes: 6 + 1 + 8 + 3 + 1 + 2,
      attributes: [
        { name: 'keywords', bytes: 14 },
        { name: 'ruleId', bytes: 7 },
      ],
    });
  });
});

describe('itemLimitProblem', () => {
  it('refuses an item over 400 KB, naming its size, the limit and the largest attributes', () => {
    // Valid for the schema (500 terms of 200 characters), but 3 bytes per character.
    const item = {
      ruleId: 'big',
      audienceId: 'desk',
      keywords: Array.from({ length: 500 }, () => '語'.repeat(200)),
      media: Array.from({ length: 500 }, () => 'm'.repeat(200)),
      statuses: Array.from({ length: 50 }, () => 's'.repeat(200)),
    };
    expect(measureItem(item).bytes).toBeGreaterThan(ITEM_LIMITS.itemBytes);
    expect(itemLimitProblem(rules, item)).toMatch(
      /^the rule is 401\.5 KB \(411103 bytes\) as DynamoDB measures items, over its limit of 400\.0 KB \(409600 bytes\); largest attributes: keywords 293\.\d KB, media 98\.\d KB, statuses 9\.\d KB\. Shorten them or split the rule in two$/,
    );
    expect(itemLimitProblem(rules, { ...item, keywords: item.keywords.slice(0, 400) })).toBeUndefined();
  });

  it('refuses an empty or over-long key instead of letting DynamoDB answer ValidationException', () => {
    expect(itemLimitProblem(rules, { ruleId: '' })).toBe(
      "ruleId: must be a non-empty string of at most 2048 bytes (DynamoDB's key limit)",
    );
    expect(itemLimitProblem(rules, { ruleId: 'x'.repeat(2049) })).toMatch(/^ruleId: must be a non-empty string/);
    expect(itemLimitProblem(rules, { keywords: ['x'] })).toMatch(/^ruleId\b/);
    expect(isStorableKey('')).toBe(false);
    expect(isStorableKey('語'.repeat(683))).toBe(false);
    expect(isStorableKey('語'.repeat(682))).toBe(true);
  });
});

describe('readItemFile', () => {
  const dir = mkdtempSync(join(tmpdir(), 'news-alerts-item-files-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const file = (name: string, text: string) => {
    const path = join(dir, name);
    writeFileSync(path, text);
    return path;
  };
  const usageError = (path: string): UsageError => {
    try {
      readItemFile(path, 'rules');
    } catch (error) {
      if (error instanceof UsageError) return error;
      throw error;
    }
    throw new Error('no error');
  };

  it('points at the line and column of a JSON fault V8 gives no position for (a trailing comma, a stray token)', () => {
    const text = '{"rules": [\n  {"ruleId": "a",\n   "keywords": ["x",],\n  }\n]}\n';
    const trailing = usageError(file('trailing.json', text));
    expect(trailing.message).toMatch(/trailing\.json is not valid JSON; nothing was written/);
    expect(trailing.details?.[0]).toMatch(/trailing\.json:3:21: /);
    const lines = JSON.stringify(
      { rules: Array.from({ length: 40 }, (_, index) => ({ ruleId: `r${index}`, keywords: ['chip', 'wafer'] })) },
      null,
      2,
    ).split('\n');
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: lines.length - 1 }),
        fc.constantFrom('@', ']', '}', 'tru', ','),
        (line, token) => {
          const faulty = lines.map((text, index) => (index === line ? `${text} ${token}` : text)).join('\n');
          let detail: string | undefined;
          try {
            JSON.parse(faulty);
            return; // `,` after a line that ends a value and before the next one can still be JSON: nothing to point at
          } catch {
            detail = usageError(file('faulty.json', faulty)).details?.[0];
          }
          // The fault is on that line or, when the token could still open something, where that breaks next.
          const at = /faulty\.json:(\d+):(\d+): /.exec(detail ?? '');
          expect(at, detail).not.toBeNull();
          expect(Number(at?.[1])).toBeGreaterThanOrEqual(line + 1);
          expect(Number(at?.[1])).toBeLessThanOrEqual(line + 2);
        },
      ),
      { numRuns: 60 },
    );
  });

  it('refuses a YAML alias bomb (billion laughs) as a usage error naming file and line, not a ReferenceError', () => {
    const levels = ['lol: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]'];
    for (let level = 1; level < 9; level++) {
      const previous = String.fromCharCode(96 + level);
      const refs = Array.from({ length: 9 }, () => `*${previous}`).join(', ');
      levels.push(`l${level}: &${String.fromCharCode(97 + level)} [${refs}]`);
    }
    const path = file('bomb.yaml', `${levels.join('\n')}\nruleId: r\n`);
    const error = usageError(path);
    expect(error.exitCode).toBe(2);
    expect(error.message).toBe(`${path} cannot be read as YAML; nothing was written`);
    expect(error.details).toEqual([
      `${path}:2: aliases (*name) expand to too much data (more than ${MAX_ALIAS_COUNT} expansions, as in a "billion laughs" file); write the values out instead of repeating aliases`,
    ]);
  });

  it('refuses nesting too deep for the parser as a usage error with file, line and column', () => {
    for (const [name, text] of [
      ['deep.json', `${'['.repeat(100_000)}${']'.repeat(100_000)}`],
      ['deep.yaml', `ruleId: r\nkeywords: ${'['.repeat(100_000)}${']'.repeat(100_000)}\n`],
    ] as const) {
      const path = file(name, text);
      const error = usageError(path);
      expect(error.exitCode).toBe(2);
      expect(error.details[0]).toMatch(
        new RegExp(`^${path.replace(/[.\\/]/g, '\\$&')}:\\d+:\\d+: lists or maps are nested too deeply to read`),
      );
    }
  });

  it('still reads a file with a few aliases', () => {
    const path = file('aliases.yaml', 'common: &kw [rates, inflation]\nrules:\n  - ruleId: a\n    keywords: *kw\n');
    expect(readItemFile(path, 'rules').map((item) => item.value)).toEqual([
      { ruleId: 'a', keywords: ['rates', 'inflation'] },
    ]);
  });

  it('keeps a __proto__ key in a file an ordinary (refused) attribute, never a prototype', () => {
    const path = file('proto.yaml', 'ruleId: r\n__proto__:\n  polluted: true\n');
    const [item] = readItemFile(path, 'rules');
    expect(Object.keys(item?.value as object)).toEqual(['ruleId', '__proto__']);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.getPrototypeOf(item?.value)).toBe(Object.prototype);
  });
});

describe('a file given where an id goes', () => {
  it('is refused with the command that takes it (--file), whether it exists or only looks like one', () => {
    const dir = mkdtempSync(join(tmpdir(), 'file-as-id-'));
    try {
      const existing = join(dir, 'desk');
      writeFileSync(existing, 'ruleId: x\n');
      for (const [id, kind, verb] of [
        ['./rules.json', 'rules', 'create'],
        [existing, 'audiences', 'put'],
        ['test/unit/item-limits.test.ts', 'rules', 'put'],
      ] as const) {
        expect(() => refuseFileAsId(id, kind, verb)).toThrow(UsageError);
        expect(() => refuseFileAsId(id, kind, verb)).toThrow(`is a file, not an id: give it with --file`);
        expect(() => refuseFileAsId(id, kind, verb)).toThrow(`${kind} ${verb} --file ${id}`);
      }
      // Ids stay ids, also one named like a folder here, or with a dot.
      for (const id of ['markets-rates', 'desk.v2', 'feed.json', 'chips:exports', 'test', 'docs', undefined]) {
        expect(() => refuseFileAsId(id, 'rules', 'put')).not.toThrow();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
