/**
 * What a write changes in a stored rule or audience (cli/items.ts changesFromStored): compared with
 * the stored item as the run reads it, so the CLI lists only what the write changes, and never
 * calls "unchanged" a write that repairs an item the run skips.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseAudience, parseRule } from '#core/model';
import { changesFromStored, type Item } from '../../cli/items.ts';

const minimalRule: Item = { ruleId: 'r', audienceId: 'a', keywords: ['k'] };
const minimalAudience: Item = { audienceId: 'a', name: 'A', topicArn: 'arn:aws:sns:us-east-1:123456789012:a' };

/** The content a write of `item` stores: the rule as the run reads it. */
function ruleContent(item: Item): Item {
  const parsed = parseRule(item);
  if (!parsed.ok) throw new Error(parsed.rejected.reason);
  return { ...parsed.value };
}
const ruleChanges = (previous: Item, next: Item) => changesFromStored(previous, next, parseRule, minimalRule);
const fields = (changes: readonly { field: string }[]) => changes.map((change) => change.field);

describe('changesFromStored', () => {
  it('compares a valid stored rule as the run reads it: its defaults are no change, and it repairs nothing', () => {
    const stored = { ruleId: 'chips', audienceId: 'desk', keywords: ['wafer'] };
    expect(ruleChanges(stored, ruleContent(stored))).toEqual({ changes: [] });
    expect(fields(ruleChanges(stored, ruleContent({ ...stored, urgent: true })).changes)).toEqual(['urgent']);
  });

  it('never calls a write over an invalid rule unchanged: one whose only fault is its version is repaired', () => {
    const stored = { ruleId: 'chips', audienceId: 'desk', keywords: ['wafer'], version: '3' };
    const result = ruleChanges(stored, ruleContent({ ruleId: 'chips', audienceId: 'desk', keywords: ['wafer'] }));
    expect(result.changes).toEqual([]);
    expect(result.repairs).toMatch(/version/);
  });

  it('lists for an invalid rule what the write changes, not the defaults it leaves out nor its stored forms', () => {
    // A string set, padded terms and a stray attribute, as the DynamoDB console allows.
    const stored = {
      ruleId: 'chips',
      audienceId: 'desk',
      keywords: new Set(['wafer', 'chip']),
      categories: [' 002* '],
      keyword: ['fab'],
    };
    const next = ruleContent({
      ruleId: 'chips',
      audienceId: 'desk',
      keywords: ['wafer', 'chip'],
      categories: ['002*'],
    });
    const result = ruleChanges(stored, next);
    expect(result.changes).toEqual([{ field: 'keyword', before: ['fab'], after: undefined }]);
    expect(result.repairs).toContain('keyword');
  });

  it('lists for an invalid audience only what the write changes (a zone in another case is the same zone)', () => {
    const stored = { ...minimalAudience, timeZone: 'asia/seoul', dailyBudget: 0 };
    const parsed = parseAudience({ ...stored, dailyBudget: 5 });
    if (!parsed.ok) throw new Error(parsed.rejected.reason);
    const result = changesFromStored(stored, { ...parsed.value }, parseAudience, minimalAudience);
    expect(result.changes).toEqual([{ field: 'dailyBudget', before: 0, after: 5 }]);
    expect(result.repairs).toContain('dailyBudget');
  });

  it('for any valid rule with a stray attribute, removing it is the one change, and it repairs', () => {
    const rule = fc.record(
      {
        keywords: fc.array(fc.constantFrom('wafer', 'chip', 'fab'), { minLength: 1, maxLength: 3 }),
        categories: fc.array(fc.constantFrom('002*', '004001000'), { maxLength: 2 }),
        urgent: fc.boolean(),
        enabled: fc.boolean(),
        matchAll: fc.boolean(),
        description: fc.string({ maxLength: 20 }).filter((text) => /^[a-z ]*[a-z]$/.test(text)),
      },
      { requiredKeys: ['keywords'] },
    );
    fc.assert(
      fc.property(rule, fc.constantFrom('keyword', 'categoriez', 'note'), (written, stray) => {
        const item = { ruleId: 'r1', audienceId: 'desk', ...written };
        const result = ruleChanges({ ...item, [stray]: 'x' }, ruleContent(item));
        expect(result.changes).toEqual([{ field: stray, before: 'x', after: undefined }]);
        expect(result.repairs).toBeDefined();
      }),
    );
  });
});
