/**
 * An in-memory {@link StoryStore} with the contract's semantics, for unit tests and the bench:
 * writes are idempotent (a story is put only if absent, a filing counts once per article key),
 * each filing adds its article and outlet to its story's counts once, band keys list their
 * newest `maxBandStories` stories oldest first (as the DynamoDB band items keep them), and
 * stories older than the window (by `firstSeenAt`, against the injected clock) are left out of
 * `readStories`.
 *
 * It is compact on purpose: it stands in for DynamoDB, and its data shares the heap with the
 * resolver the bench measures. At 100,000 articles it holds 2.5 million band entries; kept as a
 * `Map` of strings, they made every young-generation collection copy and promote them, which the
 * bench then charged to the resolver. So band entries live in typed arrays (an open-addressing
 * table of entry numbers, and per entry its story, key hash and where its key is spelled), a
 * story's band keys, terms and marks are one string each, and signatures share one pool. Reads
 * build fresh objects, as a DynamoDB read would.
 */
import { maxBandStories, maxStoryOutlets, type StoredStory, type StoryFiling, type StoryStore } from '#core/ports';
import { STORY_WINDOW_MS } from '#core/story';

/** A list of strings kept as one string (`\0` between items), or as given when an item holds `\0`. */
type PackedList = string | readonly string[];
const SEPARATOR = '\0';

function pack(list: readonly string[]): PackedList {
  // [] and [''] would join alike; an item with the separator could not be split back.
  if (list.length === 0 || list.some((item) => item === '' || item.includes(SEPARATOR))) return [...list];
  return list.join(SEPARATOR);
}

const unpack = (packed: PackedList): string[] => (typeof packed === 'string' ? packed.split(SEPARATOR) : [...packed]);

interface StoryEntry {
  readonly storyId: string;
  readonly leadArticleKey: string;
  readonly firstSeenAt: number;
  /** Where the signature starts in the pool, and its length. */
  readonly signatureAt: number;
  readonly signatureLength: number;
  /** The band keys, concatenated; entry `firstBand + i` says where band `i` is spelled. */
  readonly bandText: string;
  readonly firstBand: number;
  readonly bandCount: number;
  readonly marks: PackedList | undefined;
  readonly terms: PackedList | undefined;
  readonly outlets: string[];
  readonly allOutlets: Set<string>;
  outletCount: number;
  articleCount: number;
}

/** Calls made, for tests that check the resolver batches its reads and writes. */
export interface StoryStoreCalls {
  readFilings: number;
  readBands: number;
  readStories: number;
  write: number;
}

/** FNV-1a over UTF-16 code units, then the murmur3 finalizer: the band table's hash of a key. */
function hashKey(key: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) hash = Math.imul(hash ^ key.charCodeAt(i), 0x01000193);
  hash ^= hash >>> 16;
  hash = Math.imul(hash, 0x85ebca6b);
  hash ^= hash >>> 13;
  hash = Math.imul(hash, 0xc2b2ae35);
  return (hash ^ (hash >>> 16)) >>> 0;
}

/** An Int32Array twice as long (or `least` long), with the old values. */
function grown(array: Int32Array, least: number): Int32Array<ArrayBuffer> {
  const next = new Int32Array(Math.max(least, array.length * 2));
  next.set(array);
  return next;
}

export class MemoryStoryStore implements StoryStore {
  readonly #stories = new Map<string, StoryEntry>();
  /** Stories in write order: band entries name them by this index. */
  readonly #storyList: StoryEntry[] = [];
  #signatures = new Uint32Array(1024);
  #signaturesUsed = 0;
  /** Per band entry: its story's index, its key's hash, where in the story's bandText it starts, and its length. */
  #entryStory = new Int32Array(1024);
  #entryHash = new Int32Array(1024);
  #entryAt = new Int32Array(1024);
  #entryLength = new Int32Array(1024);
  /** 1 when the entry is in the table (0: its story already listed that key). */
  #entryPlaced = new Uint8Array(1024);
  #entries = 0;
  /**
   * Open addressing with linear probing: entry number + 1, 0 when free, at most half full. Nothing
   * is ever removed, so the entries of one key sit along its probe sequence in the order they were
   * written: oldest first, as the contract asks.
   */
  #table = new Int32Array(2048);
  #distinctBands = 0;
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
      if (found.has(key)) continue;
      const hash = hashKey(key) | 0;
      const mask = this.#table.length - 1;
      let ids: string[] | undefined;
      for (let slot = hash & mask; ; slot = (slot + 1) & mask) {
        const entry = (this.#table[slot] as number) - 1;
        if (entry < 0) break;
        if (this.#entryHash[entry] === hash && this.#entrySpells(entry, key)) {
          const storyId = (this.#storyList[this.#entryStory[entry] as number] as StoryEntry).storyId;
          if (ids === undefined) ids = [storyId];
          else ids.push(storyId);
        }
      }
      // The newest maxBandStories, as a band item keeps them (entries sit in write order).
      if (ids !== undefined) found.set(key, ids.length > maxBandStories ? ids.slice(-maxBandStories) : ids);
    }
    return found;
  }

  async readStories(storyIds: readonly string[]): Promise<Map<string, StoredStory>> {
    this.calls.readStories++;
    const oldest = this.#now() - this.#windowMs;
    const found = new Map<string, StoredStory>();
    for (const id of storyIds) {
      const story = this.#stories.get(id);
      if (story !== undefined && story.firstSeenAt >= oldest) found.set(id, this.#record(story));
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
      this.#addStory(story);
    }
    for (const filing of changes.filings) {
      if (this.#filings.has(filing.articleKey)) continue;
      this.#filings.set(filing.articleKey, filing.storyId);
      const story = this.#stories.get(filing.storyId);
      if (story === undefined) continue;
      story.articleCount++;
      const outlet = filing.outlet;
      if (outlet !== undefined && !story.allOutlets.has(outlet)) {
        story.allOutlets.add(outlet);
        if (story.outlets.length < maxStoryOutlets) story.outlets.push(outlet);
      }
      story.outletCount = story.allOutlets.size;
    }
  }

  /** Everything stored (the bench sizes the index from it). */
  contents(): {
    readonly stories: readonly StoredStory[];
    readonly bands: ReadonlyMap<string, readonly string[]>;
    readonly filings: ReadonlyMap<string, string>;
  } {
    const bands = new Map<string, string[]>();
    for (let entry = 0; entry < this.#entries; entry++) {
      const story = this.#storyList[this.#entryStory[entry] as number] as StoryEntry;
      const key = this.#entryKey(entry, story);
      const ids = bands.get(key);
      if (ids === undefined) bands.set(key, [story.storyId]);
      else if (!ids.includes(story.storyId)) ids.push(story.storyId);
    }
    for (const [key, ids] of bands) if (ids.length > maxBandStories) bands.set(key, ids.slice(-maxBandStories));
    return {
      stories: this.#storyList.map((story) => this.#record(story)),
      bands,
      filings: this.#filings,
    };
  }

  /** Sizes, for tests of idempotence. */
  counts(): { stories: number; bands: number; filings: number; articles: number } {
    let articles = 0;
    for (const story of this.#storyList) articles += story.articleCount;
    return { stories: this.#stories.size, bands: this.#distinctBands, filings: this.#filings.size, articles };
  }

  #addStory(story: StoredStory): void {
    const index = this.#storyList.length;
    const signatureAt = this.#signaturesUsed;
    if (signatureAt + story.signature.length > this.#signatures.length) {
      const pool = new Uint32Array(Math.max(signatureAt + story.signature.length, this.#signatures.length * 2));
      pool.set(this.#signatures);
      this.#signatures = pool;
    }
    this.#signatures.set(story.signature, signatureAt);
    this.#signaturesUsed += story.signature.length;
    const firstBand = this.#entries;
    const entry: StoryEntry = {
      storyId: story.storyId,
      leadArticleKey: story.leadArticleKey,
      firstSeenAt: story.firstSeenAt,
      signatureAt,
      signatureLength: story.signature.length,
      bandText: story.bands.join(''),
      firstBand,
      bandCount: story.bands.length,
      marks: story.marks === undefined ? undefined : pack(story.marks),
      terms: story.terms === undefined ? undefined : pack(story.terms),
      outlets: [...story.outlets],
      allOutlets: new Set(story.outlets),
      outletCount: story.outletCount,
      articleCount: story.articleCount,
    };
    this.#stories.set(story.storyId, entry);
    this.#storyList.push(entry);
    if (this.#entries + story.bands.length > this.#entryStory.length) {
      const least = this.#entries + story.bands.length;
      this.#entryStory = grown(this.#entryStory, least);
      this.#entryHash = grown(this.#entryHash, least);
      this.#entryAt = grown(this.#entryAt, least);
      this.#entryLength = grown(this.#entryLength, least);
      const placed = new Uint8Array(this.#entryStory.length);
      placed.set(this.#entryPlaced);
      this.#entryPlaced = placed;
    }
    let at = 0;
    for (const band of story.bands) {
      const number = this.#entries++;
      this.#entryStory[number] = index;
      this.#entryHash[number] = hashKey(band) | 0;
      this.#entryAt[number] = at;
      this.#entryLength[number] = band.length;
      at += band.length;
      this.#place(number, entry);
    }
  }

  /** Puts an entry in the table, unless its story is already filed under its key; grows the table first when half full. */
  #place(entry: number, story: StoryEntry): void {
    if ((this.#entries + 1) * 2 > this.#table.length) this.#rehash(this.#table.length * 2);
    const hash = this.#entryHash[entry] as number;
    const key = this.#entryKey(entry, story);
    const mask = this.#table.length - 1;
    let keySeen = false;
    let slot = hash & mask;
    for (; ; slot = (slot + 1) & mask) {
      const other = (this.#table[slot] as number) - 1;
      if (other < 0) break;
      if (this.#entryHash[other] !== hash || !this.#entrySpells(other, key)) continue;
      keySeen = true;
      // A story lists a band key once, as the contract's sets do.
      if (this.#entryStory[other] === this.#entryStory[entry]) return;
    }
    this.#table[slot] = entry + 1;
    this.#entryPlaced[entry] = 1;
    if (!keySeen) this.#distinctBands++;
  }

  /** Re-places every entry in write order, which keeps each key's entries oldest first. */
  #rehash(size: number): void {
    this.#table = new Int32Array(size);
    const mask = size - 1;
    for (let entry = 0; entry < this.#entries; entry++) {
      if (this.#entryPlaced[entry] === 0) continue;
      let slot = (this.#entryHash[entry] as number) & mask;
      while ((this.#table[slot] as number) !== 0) slot = (slot + 1) & mask;
      this.#table[slot] = entry + 1;
    }
  }

  /** Whether an entry's key is `key`, compared in place (no substring made). */
  #entrySpells(entry: number, key: string): boolean {
    if (this.#entryLength[entry] !== key.length) return false;
    const story = this.#storyList[this.#entryStory[entry] as number] as StoryEntry;
    return story.bandText.startsWith(key, this.#entryAt[entry] as number);
  }

  #entryKey(entry: number, story: StoryEntry): string {
    const at = this.#entryAt[entry] as number;
    return story.bandText.slice(at, at + (this.#entryLength[entry] as number));
  }

  /**
   * The story as a read returns it: a fresh object, its signature a view of the pool (nothing
   * changes it). Band keys, marks and terms are spelled out when first asked for (enumerable
   * getters, so a spread or a comparison sees them): the resolver reads about seven candidate
   * stories per article and looks at the terms of few and the band keys of none, and 32 fresh
   * band keys per story read were garbage the bench charged to the resolver's collections.
   */
  #record(story: StoryEntry): StoredStory {
    const store = this;
    let bands: string[] | undefined;
    let marks: string[] | undefined;
    let terms: string[] | undefined;
    return {
      storyId: story.storyId,
      leadArticleKey: story.leadArticleKey,
      firstSeenAt: story.firstSeenAt,
      outlets: [...story.outlets],
      outletCount: story.outletCount,
      articleCount: story.articleCount,
      signature: this.#signatures.subarray(story.signatureAt, story.signatureAt + story.signatureLength),
      get bands(): string[] {
        if (bands === undefined) {
          bands = new Array(story.bandCount);
          for (let i = 0; i < story.bandCount; i++) bands[i] = store.#entryKey(story.firstBand + i, story);
        }
        return bands;
      },
      get marks(): string[] | undefined {
        if (marks === undefined && story.marks !== undefined) marks = unpack(story.marks);
        return marks;
      },
      get terms(): string[] | undefined {
        if (terms === undefined && story.terms !== undefined) terms = unpack(story.terms);
        return terms;
      },
    };
  }
}
