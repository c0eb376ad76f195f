/**
 * The story bench's request-unit count (bench/story.ts measureRequestUnits), which docs/cost.md
 * prices story collapse from: the real DynamoDB adapter over a counting document client must bill
 * each story start its story item, one item per band and the filing, and read the bands first.
 */
import { describe, expect, it } from 'vitest';
import { BANDS } from '#core/story';
import { measureRequestUnits } from '../../bench/story.ts';
import { syntheticArticles } from '../../bench/synthetic.ts';

describe('story index request units (bench/story.ts)', () => {
  it('bills every story start its story item, its bands and its filing, and an article the run filed already nothing', async () => {
    const articles = syntheticArticles(60, 7);
    const units = await measureRequestUnits(articles, 25);
    expect(units.articles).toBe(60);
    expect(units.newStoryShare).toBeGreaterThan(0.9);
    // A start: the story item (one unit per KB begun, over 1 KB with its 512-byte signature), a unit per band, the filing.
    expect(units.writeUnitsPerArticle).toBeGreaterThanOrEqual(units.newStoryShare * (BANDS + 3));
    expect(units.writeUnitsPerArticle).toBeLessThanOrEqual(BANDS + 4);
    // Strongly consistent reads: the filing and every band key, a unit each (one for a key with no item).
    expect(units.readUnitsPerArticle).toBeGreaterThanOrEqual(BANDS + 1);

    // The same articles again in the same run: the resolver remembers what it filed, so they cost nothing.
    const twice = await measureRequestUnits([...articles, ...articles], 25);
    expect(twice.writeUnitsPerArticle * 2).toBeCloseTo(units.writeUnitsPerArticle, 5);
    expect(twice.readUnitsPerArticle * 2).toBeCloseTo(units.readUnitsPerArticle, 5);
  });
});
