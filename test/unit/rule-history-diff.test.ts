/**
 * What `rules history` and `rules restore` say changed between two versions of a rule
 * (functions/core/workbench/rule-history.ts diffVersions): an attribute left out reads as its
 * default, as the run reads it, so a write that only spelled defaults out changed nothing, and a
 * rule turned off reads `enabled: true → false`.
 */
import { describe, expect, it } from 'vitest';
import { diffVersions, outsideEdit } from '#core/workbench/rule-history';

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

describe('outsideEdit: the first entry of a rule history has nothing of', () => {
  it('is dated when it is recorded, so an item saved before the retention does not expire at once; its save time is in the actor', () => {
    const now = Date.parse('2026-12-02T06:00:00Z');
    // Saved 15 months ago by the CLI, before history was kept (or its history expired since).
    const stored = { ruleId: 'r1', version: 7, updatedAt: '2025-09-01T10:00:00.000Z', updatedBy: 'alice (cli)' };
    const entry = outsideEdit('r1', stored, undefined, now);
    expect(entry).toMatchObject({ version: 7, action: 'created', at: now });
    expect(entry?.actor).toBe(
      'alice (cli) (written before history was kept, last saved 2025-09-01T10:00:00.000Z; recorded when history first read it)',
    );
    // Recorded already: nothing more to record.
    expect(outsideEdit('r1', stored, entry, now + 60_000)).toBeUndefined();
  });
});
