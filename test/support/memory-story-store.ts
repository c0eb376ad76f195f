/**
 * An in-memory {@link StoryStore} with the contract's semantics, for unit tests and the bench:
 * writes are idempotent (a story is put only if absent, a filing counts once per article key),
 * each filing adds its article and outlet to its story's counts once, and stories older than the
 * window (by `firstSeenAt`, against the injected clock) are left out of `readStories`.
 */
import { maxStoryOutlets, type StoredStory, type StoryFiling, type StoryStore } from '#core/ports';
import { STORY_WINDOW_MS } from '#core/story';

interface MutableStory {
  record: StoredStory;
  readonly allOutlets: Set<string>;
}

/** Calls made, for tests that check the resolver batches its reads and writes. */
export interface StoryStoreCalls {
  readFilings: number;
  readBands: number;
  readStories: number;
  write: number;
}

export class MemoryStoryStore implements StoryStore {
  readonly #stories = new Map<string, MutableStory>();
  /**
   * Story ids by band key: one id as a plain string (nearly every band key names one story), an
   * array once a second story shares it. At 100,000 articles this is 2.5 million entries, and
   * one array each made the garbage collector's marking a large share of the bench's CPU time.
   */
  readonly #bands = new Map<string, string | string[]>();
  readonly #filings = new Map<string, string>();
  readonly #windowMs: number;
  readonly #now: () => number;
  /** Counts of calls, by method. */
  readonly calls: StoryStoreCalls = { readFilings: 0, readBands: 0, readStories: 0, write: 0 };

  /** @param options.now the clock expiry is judged by (stories older than `windowMs` are gone). */
  constructor(options: { readonly now: () => number; readonly windowMs?: number }) {
    this.#now = options.now;
    this.#windowMs = options.windowMs ?? STORY_WINDOW_MS;
  }

  async readFilings(articleKeys: readonly string[]): Promise<Map<string, string>> {
    this.calls.readFilings++;
    const found = new Map<string, string>();
    for (const key of articleKeys) {
      const storyId = this.#filings.get(key);
      if (storyId !== undefined) found.set(key, storyId);
    }
    return found;
  }

  async readBands(bandKeys: readonly string[]): Promise<Map<string, readonly string[]>> {
    this.calls.readBands++;
    const found = new Map<string, readonly string[]>();
    for (const key of bandKeys) {
      const ids = this.#bands.get(key);
      if (ids !== undefined) found.set(key, typeof ids === 'string' ? [ids] : ids);
    }
    return found;
  }

  async readStories(storyIds: readonly string[]): Promise<Map<string, StoredStory>> {
    this.calls.readStories++;
    const oldest = this.#now() - this.#windowMs;
    const found = new Map<string, StoredStory>();
    for (const id of storyIds) {
      const story = this.#stories.get(id);
      if (story !== undefined && story.record.firstSeenAt >= oldest) found.set(id, story.record);
    }
    return found;
  }

  async write(changes: {
    readonly stories: readonly StoredStory[];
    readonly filings: readonly StoryFiling[];
  }): Promise<void> {
    this.calls.write++;
    for (const story of changes.stories) {
      if (this.#stories.has(story.storyId)) continue;
      // The signature and band keys are kept, not copied: nothing changes them once a story is
      // written (the resolver makes a new signature per article), and at 100,000 articles the
      // copies were 40 MB of garbage in the bench's heap.
      this.#stories.set(story.storyId, {
        record: { ...story, outlets: [...story.outlets] },
        allOutlets: new Set(story.outlets),
      });
      for (const band of story.bands) {
        const ids = this.#bands.get(band);
        if (ids === undefined) this.#bands.set(band, story.storyId);
        else if (typeof ids === 'string') {
          if (ids !== story.storyId) this.#bands.set(band, [ids, story.storyId]);
        } else if (!ids.includes(story.storyId)) ids.push(story.storyId);
      }
    }
    for (const filing of changes.filings) {
      if (this.#filings.has(filing.articleKey)) continue;
      this.#filings.set(filing.articleKey, filing.storyId);
      const story = this.#stories.get(filing.storyId);
      if (story === undefined) continue;
      const { record } = story;
      const outlet = filing.outlet;
      const newOutlet = outlet !== undefined && !story.allOutlets.has(outlet);
      if (newOutlet) story.allOutlets.add(outlet);
      story.record = {
        ...record,
        articleCount: record.articleCount + 1,
        outletCount: story.allOutlets.size,
        outlets: newOutlet && record.outlets.length < maxStoryOutlets ? [...record.outlets, outlet] : record.outlets,
      };
    }
  }

  /** Everything stored (the bench sizes the index from it). */
  contents(): {
    readonly stories: readonly StoredStory[];
    readonly bands: ReadonlyMap<string, readonly string[]>;
    readonly filings: ReadonlyMap<string, string>;
  } {
    const bands = new Map<string, readonly string[]>();
    for (const [band, ids] of this.#bands) bands.set(band, typeof ids === 'string' ? [ids] : ids);
    return {
      stories: [...this.#stories.values()].map((story) => story.record),
      bands,
      filings: this.#filings,
    };
  }

  /** Sizes, for tests of idempotence. */
  counts(): { stories: number; bands: number; filings: number; articles: number } {
    let articles = 0;
    for (const story of this.#stories.values()) articles += story.record.articleCount;
    return { stories: this.#stories.size, bands: this.#bands.size, filings: this.#filings.size, articles };
  }
}
