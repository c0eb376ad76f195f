/**
 * The CLI's "did you mean" for ids (cli/unknown-ids.ts): a case or plural slip, or an edit or two
 * in an id long enough for that to be a typo, names the closest stored id; another id, or the id
 * itself, never; whatever the ids, the hint quotes it as a JSON string (controls escaped; the CLI's
 * output escapes the rest).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { closestId, hintFrom } from '../../cli/unknown-ids.ts';

const stored = ['markets-desk', 'markets-rates', 'quakes', 'chips-team', 'ab'];

describe('closestId', () => {
  it('names the stored id a typo is closest to', () => {
    expect(closestId('markets-dsk', stored)).toBe('markets-desk');
    expect(closestId('Quakes', stored)).toBe('quakes');
    expect(closestId('quake', stored)).toBe('quakes');
    expect(closestId('markets-rate', stored)).toBe('markets-rates');
    expect(closestId('chips-tema', stored)).toBe('chips-team');
    // A singular in -y for a plural in -ies (an article file's "category" for "categories").
    expect(closestId('category', ['title', 'categories', 'categoryNames'])).toBe('categories');
    expect(closestId('categories', ['category'])).toBe('category');
  });

  it('names nothing for another id, a short one two edits away, or the id itself', () => {
    expect(closestId('weather', stored)).toBeUndefined();
    expect(closestId('cd', stored)).toBeUndefined();
    expect(closestId('quakes', stored)).toBeUndefined();
    expect(closestId('x'.repeat(5000), [...stored, 'x'.repeat(5000 - 1)])).toBeUndefined();
  });

  it('is a stored id, never the id itself, and the hint quotes it as a JSON string', () => {
    fc.assert(
      fc.property(
        fc.string({ maxLength: 20 }),
        fc.array(fc.string({ maxLength: 20 }), { maxLength: 30 }),
        (id, known) => {
          const closest = closestId(id, known);
          if (closest !== undefined) {
            expect(known).toContain(closest);
            expect(closest).not.toBe(id);
          }
          const hint = hintFrom([id], known);
          expect(hint).toBe(closest === undefined ? undefined : `did you mean ${JSON.stringify(closest)}?`);
        },
      ),
    );
  });
});
