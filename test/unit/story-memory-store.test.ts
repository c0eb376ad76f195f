/**
 * The compact in-memory story store (test/support/memory-story-store.ts) keeps the StoryStore
 * contract: checked against a plain-Map model of it on hostile band keys, terms and marks (empty,
 * with the separator it packs lists with, shared by many stories), through table growth.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { maxBandStories, maxStoryOutlets, type StoredStory, type StoryFiling } from '#core/ports';
import { MemoryStoryStore } from '../support/memory-story-store.ts';

const T0 = Date.UTC(2026, 2, 2, 9);
const WINDOW = 60_000;

/** The contract, as plainly as it can be written. */
class ModelStore {
  readonly stories = new Map<string, { record: StoredStory; all: Set<string> }>();
  /** Every story ever filed under a band key; a read lists the newest {@link maxBandStories}. */
  readonly bands = new Map<string, string[]>();
  readonly filings = new Map<string, string>();

  write(stories: readonly StoredStory[], filings: readonly StoryFiling[]): void {
    for (const story of stories) {
      if (this.stories.has(story.storyId)) continue;
      this.stories.set(story.storyId, { record: structuredClone(story), all: new Set(story.outlets) });
      for (const band of story.bands) {
        const ids = this.bands.get(band) ?? [];
        if (!ids.includes(story.storyId)) ids.push(story.storyId);
        this.bands.set(band, ids);
      }
    }
    for (const filing of filings) {
      if (this.filings.has(filing.articleKey)) continue;
      this.filings.set(filing.articleKey, filing.storyId);
      const story = this.stories.get(filing.storyId);
      if (story === undefined) continue;
      const outlet = filing.outlet;
      const fresh = outlet !== undefined && !story.all.has(outlet);
      if (fresh) story.all.add(outlet);
      story.record = {
        ...story.record,
        articleCount: story.record.articleCount + 1,
        outletCount: story.all.size,
        outlets:
          fresh && story.record.outlets.length < maxStoryOutlets
            ? [...story.record.outlets, outlet]
            : story.record.outlets,
      };
    }
  }
}

const STORY_IDS = Array.from({ length: maxBandStories + 4 }, (_, index) => `s${index + 1}`);
const text = fc.oneof(
  fc.constantFrom('', '\0', 'a\0b', '\0\0', 'k'),
  fc.string({ maxLength: 8 }),
  fc.string({ unit: 'binary', maxLength: 4 }),
);
const storyArbitrary = fc.record({
  // More stories than a band lists, so the bound is met.
  storyId: fc.constantFrom(...STORY_IDS),
  leadArticleKey: fc.constantFrom('id:1', 'id:9'),
  firstSeenAt: fc.constantFrom(T0, T0 - 2 * WINDOW),
  signature: fc.array(fc.nat({ max: 0xffffffff }), { maxLength: 6 }).map((values) => Uint32Array.from(values)),
  bands: fc.array(fc.oneof(text, fc.constantFrom('0abc', '1abc', '2abc')), { maxLength: 8 }),
  marks: fc.option(fc.array(text, { maxLength: 4 }), { nil: undefined }),
  terms: fc.option(fc.array(text, { maxLength: 4 }), { nil: undefined }),
  outlets: fc.array(fc.constantFrom('A', 'B', 'C'), { maxLength: 2 }),
  outletCount: fc.nat({ max: 3 }),
  articleCount: fc.constant(0),
});
const filingArbitrary = fc.record({
  articleKey: fc.constantFrom('id:1', 'id:2', 'id:3', 'id:4', 'id:5', 'id:6', 'id:7', 'id:8'),
  storyId: fc.constantFrom(...STORY_IDS, 'nobody'),
  outlet: fc.option(fc.constantFrom('A', 'B', 'C', 'D', 'E', 'F', 'G'), { nil: undefined }),
  at: fc.constant(T0),
});

const plain = (story: StoredStory | undefined) =>
  story === undefined
    ? undefined
    : {
        ...story,
        signature: [...story.signature],
        marks: story.marks === undefined ? undefined : [...story.marks],
        terms: story.terms === undefined ? undefined : [...story.terms],
      };

describe('MemoryStoryStore', () => {
  it('answers every read as the contract model does (fast-check: hostile keys and lists)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.record({
            stories: fc.array(storyArbitrary, { maxLength: 4 }),
            filings: fc.array(filingArbitrary, { maxLength: 4 }),
          }),
          { maxLength: 8 },
        ),
        fc.array(text, { maxLength: 6 }),
        async (writes, probes) => {
          const store = new MemoryStoryStore({ now: () => T0, windowMs: WINDOW });
          const model = new ModelStore();
          for (const change of writes) {
            await store.write(change);
            model.write(change.stories, change.filings);
          }
          const keys = [...new Set([...probes, ...model.bands.keys()])];
          const newest = Object.fromEntries([...model.bands].map(([key, ids]) => [key, ids.slice(-maxBandStories)]));
          expect(Object.fromEntries(await store.readBands(keys))).toEqual(newest);
          const ids = [...STORY_IDS, 'nobody'];
          const stories = await store.readStories(ids);
          for (const id of ids) {
            const expected = model.stories.get(id)?.record;
            expect(plain(stories.get(id))).toEqual(
              expected === undefined || expected.firstSeenAt < T0 - WINDOW ? undefined : plain(expected),
            );
          }
          const files = ['id:1', 'id:2', 'id:3', 'id:4', 'id:5', 'id:6', 'id:7', 'id:8'];
          expect(Object.fromEntries(await store.readFilings(files))).toEqual(Object.fromEntries(model.filings));
          const contents = store.contents();
          expect(Object.fromEntries(contents.bands)).toEqual(newest);
          expect(contents.stories.map(plain)).toEqual([...model.stories.values()].map((story) => plain(story.record)));
          let articles = 0;
          for (const story of model.stories.values()) articles += story.record.articleCount;
          expect(store.counts()).toEqual({
            stories: model.stories.size,
            bands: model.bands.size,
            filings: model.filings.size,
            articles,
          });
        },
      ),
      { numRuns: 300 },
    );
  });

  it(`lists the newest ${maxBandStories} of a band key shared by thousands of stories, oldest first, through table growth`, async () => {
    const store = new MemoryStoryStore({ now: () => T0 });
    const ids: string[] = [];
    for (let index = 0; index < 3_000; index++) {
      const storyId = `story-${index}`;
      ids.push(storyId);
      const own = Array.from({ length: 31 }, (_, band) => `${band}:${index}`);
      await store.write({
        stories: [
          {
            storyId,
            leadArticleKey: `id:${index}`,
            firstSeenAt: T0,
            signature: Uint32Array.of(index),
            bands: ['shared', ...own],
            outlets: [],
            outletCount: 0,
            articleCount: 0,
          },
        ],
        filings: [],
      });
    }
    const found = await store.readBands(['shared', '5:2999', '5:3000']);
    expect(found.get('shared')).toEqual(ids.slice(-maxBandStories));
    expect(store.contents().bands.get('shared')).toEqual(ids.slice(-maxBandStories));
    expect(found.get('5:2999')).toEqual(['story-2999']);
    expect(found.has('5:3000')).toBe(false);
    expect(store.counts().bands).toBe(1 + 31 * 3_000);
    expect([...((await store.readStories(['story-1234'])).get('story-1234')?.signature ?? [])]).toEqual([1234]);
  });
});
