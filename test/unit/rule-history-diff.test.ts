/**
 * What `rules history` and `rules restore` say changed between two versions of a rule
 * (functions/core/workbench/rule-history.ts diffVersions): an attribute left out reads as its
 * default, as the run reads it, so a write that only spelled defaults out changed nothing, and a
 * rule turned off reads `enabled: true → false`.
 */
import { describe, expect, it } from 'vitest';
import { diffVersions } from '#core/workbench/rule-history';

const seeded = { ruleId: 'quakes', audienceId: 'quake-oncall', keywords: ['earthquake'] };

describe('the changes between two versions of a rule', () => {
  it('are none when a version only spells the defaults out', () => {
    const written = { ...seeded, enabled: true, urgent: false, matchAll: false, version: 2, updatedBy: 'kim' };
    expect(diffVersions(seeded, written)).toEqual([]);
    expect(diffVersions(written, seeded)).toEqual([]);
  });

  it('name the default a change left or came back to', () => {
    expect(diffVersions(seeded, { ...seeded, enabled: false })).toEqual([
      { field: 'enabled', before: true, after: false },
    ]);
    expect(diffVersions({ ...seeded, urgent: true }, seeded)).toEqual([
      { field: 'urgent', before: true, after: false },
    ]);
    expect(diffVersions(seeded, { ...seeded, keywords: ['earthquake', 'tsunami'] })).toEqual([
      { field: 'keywords', before: ['earthquake'], after: ['earthquake', 'tsunami'] },
    ]);
  });

  it('of a deletion list what the rule was', () => {
    expect(diffVersions(seeded, undefined).map((change) => change.field)).toEqual(['audienceId', 'keywords', 'ruleId']);
  });
});
