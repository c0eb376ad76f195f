/**
 * Issue 10, item 4 (fuzz): the readers of hand-written DynamoDB items, the run's and the CLI's
 * (`readItem`, then `parseRule`/`parseAudience`/`buildRuleSet`), accept ANY attribute map:
 * arbitrary names (`__proto__`, `constructor`, empty, control characters), arbitrary
 * AttributeValue shapes (wrong tags, several tags, garbage, NULL, binary, sets) and nesting past
 * DynamoDB's 32 levels. Each item is either valid or skipped with its key and a reason; nothing
 * throws, nothing reaches Object.prototype, and whatever was read can still be printed.
 */
import { marshall } from '@aws-sdk/util-dynamodb';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { readItem } from '#aws/dynamo-rule-source';
import { buildRuleSet, parseAudience, parseRule, unreadableAttributesOf } from '#core/model';

const RESERVED = Object.getOwnPropertyNames(Object.prototype);

/** Attribute names: the schema's own, JavaScript's reserved ones, DynamoDB's tags, and anything. */
const attributeName = fc.oneof(
  fc.constantFrom(
    ...RESERVED,
    'prototype',
    'toJSON',
    'then',
    '',
    'ruleId',
    'audienceId',
    'keywords',
    'categories',
    'enabled',
    'quietHours',
    'templates',
    'start',
    'end',
    'version',
    'notes',
    'S',
    'M',
  ),
  fc.string({ maxLength: 12 }),
  fc.string({ unit: 'binary', maxLength: 8 }),
);

/** A map object as the SDK returns it (null prototype), with own keys such as `__proto__`. */
const mapOf = (entries: readonly (readonly [string, unknown])[]): Record<string, unknown> => {
  const map = Object.create(null) as Record<string, unknown>;
  for (const [name, value] of entries) {
    Object.defineProperty(map, name, { value, enumerable: true, writable: true, configurable: true });
  }
  return map;
};

const numberText = fc.oneof(
  fc.double().map(String),
  fc.bigInt().map(String),
  fc.constantFrom('', 'NaN', 'Infinity', '1e400', '-0', '12345678901234567890.5', ' 1 ', '0x10', '1e125', 'abc'),
);

const { value: attributeValue } = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.string({ maxLength: 20 }).map((S) => ({ S })),
    fc.string({ unit: 'grapheme', maxLength: 10 }).map((S) => ({ S })),
    numberText.map((N) => ({ N })),
    fc.uint8Array({ maxLength: 8 }).map((B) => ({ B })),
    fc.array(fc.string({ maxLength: 8 }), { maxLength: 5 }).map((SS) => ({ SS })),
    fc.array(numberText, { maxLength: 4 }).map((NS) => ({ NS })),
    fc.array(fc.uint8Array({ maxLength: 4 }), { maxLength: 3 }).map((BS) => ({ BS })),
    fc.boolean().map((BOOL) => ({ BOOL })),
    fc.constantFrom({ NULL: true }, { NULL: false }),
    fc.array(tie('value'), { maxLength: 4 }).map((L) => ({ L })),
    fc.array(fc.tuple(attributeName, tie('value')), { maxLength: 4 }).map((entries) => ({ M: mapOf(entries) })),
    // Shapes that are no AttributeValue at all.
    fc.anything({ maxDepth: 2 }),
    fc.constantFrom(undefined, null, { S: 'a', N: '1' }, { $unknown: ['X', 1] }, { S: 1 }, { SS: [1] }, { L: {} }),
  ),
}));

/** Nesting past DynamoDB's 32 levels, through lists and maps with hostile names. */
const deepValue = fc
  .tuple(fc.integer({ min: 30, max: 60 }), fc.array(fc.constantFrom('L', 'M'), { minLength: 60, maxLength: 60 }))
  .map(([depth, kinds]) => {
    let value: unknown = { S: 'bottom' };
    for (let level = 0; level < depth; level++) {
      value = kinds[level] === 'L' ? { L: [value] } : { M: mapOf([['__proto__', value]]) };
    }
    return value;
  });

/** A raw item: sometimes the start of a valid rule or audience, always with arbitrary attributes. */
const rawItem = fc
  .tuple(
    fc.constantFrom(
      [],
      [
        ['ruleId', { S: 'r1' }],
        ['audienceId', { S: 'desk' }],
        ['keywords', { SS: ['rates'] }],
      ],
      [
        ['audienceId', { S: 'desk' }],
        ['topicArn', { S: 'arn:aws:sns:us-east-1:123456789012:desk' }],
      ],
    ),
    fc.array(fc.tuple(attributeName, fc.oneof({ weight: 5, arbitrary: attributeValue }, deepValue)), {
      maxLength: 5,
    }),
  )
  .map(([base, extra]) => mapOf([...(base as readonly (readonly [string, unknown])[]), ...extra]));

/** Every value of an item printed the ways the CLI prints values. */
function printAll(item: Record<string, unknown>): void {
  for (const [name, value] of Object.entries(item)) {
    `${name}=${String(value)}`;
    JSON.stringify(value, (_key, entry: unknown) => (entry instanceof Set ? [...entry] : entry));
    if (value instanceof Set || Array.isArray(value)) for (const entry of value) String(entry);
  }
}

/** Own properties anywhere in `value` that shadow Object.prototype. */
function reservedOwnNames(value: unknown, seen = new Set<unknown>()): string[] {
  if (typeof value !== 'object' || value === null || seen.has(value)) return [];
  seen.add(value);
  const found = Object.getOwnPropertyNames(value).filter((name) => RESERVED.includes(name));
  const children = value instanceof Set ? [...value] : Object.values(value);
  return [...found, ...children.flatMap((child) => reservedOwnNames(child, seen))];
}

describe('reading any attribute map', () => {
  it('never throws, never pollutes Object.prototype, and leaves every item printable', () => {
    fc.assert(
      fc.property(rawItem, (raw) => {
        const item = readItem(raw);
        expect(Object.getPrototypeOf(item)).toBe(Object.prototype);
        expect(reservedOwnNames(item)).toEqual([]);
        printAll(item);
        for (const parsed of [parseRule(item), parseAudience(item)]) {
          if (!parsed.ok) {
            expect(parsed.rejected.key.length).toBeGreaterThan(0);
            expect(parsed.rejected.reason.length).toBeGreaterThan(0);
          }
        }
        // An attribute that could not be read always makes the item invalid, with that reason.
        for (const unreadable of unreadableAttributesOf(item)) {
          const parsed = parseRule(item);
          expect(parsed.ok).toBe(false);
          if (!parsed.ok) expect(parsed.rejected.reason).toContain(unreadable.reason);
        }
        expect(({} as Record<string, unknown>).polluted).toBeUndefined();
        expect(Object.prototype.toString.call({})).toBe('[object Object]');
      }),
      { numRuns: 400 },
    );
  });

  it('buildRuleSet over any tables accounts for every item: a rule, a rejection, or disabled', () => {
    fc.assert(
      fc.property(fc.array(rawItem, { maxLength: 6 }), fc.array(rawItem, { maxLength: 4 }), (rules, audiences) => {
        const ruleSet = buildRuleSet(rules.map(readItem), audiences.map(readItem));
        expect(ruleSet.rules.length + ruleSet.rejected.filter((r) => r.table === 'rules').length).toBeLessThanOrEqual(
          rules.length,
        );
        expect(ruleSet.audiences.length + ruleSet.rejected.filter((r) => r.table === 'audiences').length).toBe(
          audiences.length,
        );
        for (const rejected of ruleSet.rejected) expect(rejected.reason).not.toBe('');
      }),
      { numRuns: 150 },
    );
  });

  it('reads back exactly what the document client writes for a valid rule', () => {
    const term = fc.string({ minLength: 1, maxLength: 12 }).filter((value) => /^[a-z]/.test(value.trim()));
    fc.assert(
      fc.property(
        fc.record(
          {
            ruleId: fc.stringMatching(/^[a-z][a-z0-9-]{0,20}$/),
            audienceId: fc.constant('desk'),
            keywords: fc.array(term, { minLength: 1, maxLength: 5 }),
            categories: fc.array(term, { maxLength: 3 }),
            urgent: fc.boolean(),
            version: fc.nat(),
            description: fc.string({ maxLength: 40 }),
          },
          { requiredKeys: ['ruleId', 'audienceId', 'keywords'] },
        ),
        fc.boolean(),
        (rule, asSets) => {
          const stored = asSets
            ? { ...rule, keywords: new Set(rule.keywords), ...(rule.categories ? { categories: rule.categories } : {}) }
            : rule;
          const parsed = parseRule(readItem(marshall(stored, { removeUndefinedValues: true })));
          const direct = parseRule(stored);
          expect(parsed).toEqual(direct);
        },
      ),
      { numRuns: 200 },
    );
  });
});
