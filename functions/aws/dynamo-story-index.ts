/**
 * The DynamoDB adapter of {@link StoryStore}, in the state table. It owns two guarantees: a story
 * written by one run is seen by the next (every read is strongly consistent), and writing the
 * same changes again (a run that crashed and re-read) changes no count. Nothing the provider
 * sends can push a key or an item past DynamoDB's limits.
 *
 * Item layout (partition key `pk`, sort key `sk`, TTL attribute `expiresAt` in epoch SECONDS;
 * other times epoch milliseconds):
 *
 * - story: pk `story#<storyId>`, sk `story`; `storyId`, `leadArticleKey`, `firstSeenAt`,
 *   `signature` (binary: the lead's MinHash values as unsigned 32-bit little-endian), `bands`
 *   (list), `outlets` (list of at most {@link maxStoryOutlets} names, first seen first, each cut
 *   to {@link maxOutletNameLength} characters), `outletCount`, `articleCount`, and the two sets
 *   that make counting idempotent: `filed` (tokens of the article keys counted) and
 *   `outletTokens` (tokens of the outlets counted), each at most {@link maxCountedTokens}.
 *   TTL firstSeenAt + window + one day.
 * - band: pk `story-band#<bandKey>`, sk `band`; `storyIds` (list, oldest first, the newest
 *   {@link maxBandStories} kept, so a hot band cannot grow without bound). TTL that of its newest
 *   story.
 * - filing: pk `story-filing#<articleKey>`, sk `filing`; `storyId`, `at`. TTL at +
 *   filingRetentionDays (14 by default, like the ledger: an article re-read while the ledger
 *   remembers it finds the same story).
 *
 * Why counts are kept this way: a filing changes its story's counts only when its article's token
 * is not yet in `filed`, and the story item is rewritten whole (read, merge, BatchWriteItem put)
 * before the filing items are written. Repeating a write, whatever point the first attempt
 * reached, finds the tokens and adds nothing. That costs one item write per touched story and one
 * per filing, batched 25 a request, where a transaction (filing put + story update) costs twice
 * the write units and one request per story, and a conditional filing put followed by an ADD
 * loses or doubles a count when the process dies between the two. Read-merge-write of stories and
 * bands relies on the run lease (one writer at a time); two writers racing could at worst drop
 * one's entry from a band or a count, which makes a later copy start a new story: an extra alert,
 * never a lost one. Beyond {@link maxCountedTokens} articles or outlets a story's counts still
 * grow, but a repeated write may count those again (digests say "also in 300 outlets" either way).
 *
 * Keys taken from data go through keyPart (verbatim when short, `#` + SHA-256 otherwise). A lead
 * article key longer than {@link maxStoredKeyBytes} is stored as its hashed form.
 */
import { createHash } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import pLimit, { type LimitFunction } from 'p-limit';
import * as z from 'zod/mini';
import {
  type Log,
  maxBandStories,
  maxStoryOutlets,
  type StoredStory,
  type StoryFiling,
  type StoryStore,
} from '#core/ports';
import { BANDS, MAX_STORED_TERMS, SIGNATURE_SIZE, STORY_WINDOW_MS } from '#core/story';
import { logger } from '#shared/powertools';
import { type BatchContext, getAll, type Key, keyPart, keyString, ttlSeconds, writeAll } from './dynamo-batch.ts';
import { measureItem } from './table-layout.ts';

export interface DynamoStoryStoreOptions {
  /** The one shared document client. */
  readonly documents: DynamoDBDocumentClient;
  /** The state table. */
  readonly tableName: string;
  /** How long a story accepts copies (default STORY_WINDOW_MS of core/story.ts). */
  readonly windowMs?: number;
  /** How long an article's filing is remembered (default 14 days, like the ledger). */
  readonly filingRetentionDays?: number;
  /** Batch requests in flight at once. Default 4. */
  readonly concurrency?: number;
  /** Waits between retries of unprocessed batch items; tests pass a fast one. */
  readonly sleep?: (ms: number) => Promise<void>;
  /** The clock that decides which stories are past the window. */
  readonly now?: () => number;
  readonly log?: Log;
}

/** Article and outlet tokens a story keeps to count each once (see the module comment). */
export const maxCountedTokens = 256;
/** Longest outlet name kept (UTF-16 units); provider bytes beyond it are cut. */
export const maxOutletNameLength = 100;
/** Longest lead article key stored verbatim (UTF-8 bytes); a longer one is stored hashed. */
export const maxStoredKeyBytes = 2048;
/** Stories and bands outlive the window by this much before TTL removes them (reads filter by the window). */
const ttlMarginDays = 1;

/** The key of a story item. */
export const storyItemKey = (storyId: string): Key => ({ pk: `story#${keyPart(storyId)}`, sk: 'story' });
/** The key of a band item. */
export const bandItemKey = (bandKey: string): Key => ({ pk: `story-band#${keyPart(bandKey)}`, sk: 'band' });
/** The key of a filing item. */
export const filingItemKey = (articleKey: string): Key => ({
  pk: `story-filing#${keyPart(articleKey)}`,
  sk: 'filing',
});

/**
 * A short token of a value for the idempotency sets: 72 bits of SHA-256 (12 base64url
 * characters). Among the few hundred tokens of one story a collision is a 1-in-10^17 event, and
 * would only leave one copy uncounted.
 */
const token = (value: string): string => createHash('sha256').update(value, 'utf8').digest('base64url').slice(0, 12);

/** The name cut to maxOutletNameLength units, never inside a surrogate pair. */
function outletName(name: string): string {
  if (name.length <= maxOutletNameLength) return name;
  const cut = name.slice(0, maxOutletNameLength);
  const last = cut.charCodeAt(cut.length - 1);
  return last >= 0xd800 && last <= 0xdbff ? cut.slice(0, -1) : cut;
}

const storedKey = (articleKey: string): string =>
  Buffer.byteLength(articleKey, 'utf8') <= maxStoredKeyBytes ? articleKey : keyPart(articleKey);

/** The signature's bytes: each value as unsigned 32-bit little-endian, whatever the machine. */
export function encodeSignature(signature: Uint32Array): Uint8Array {
  const bytes = new Uint8Array(signature.length * 4);
  const view = new DataView(bytes.buffer);
  for (const [index, value] of signature.entries()) view.setUint32(index * 4, value, true);
  return bytes;
}

/** The signature stored by {@link encodeSignature}. */
export function decodeSignature(bytes: Uint8Array): Uint32Array {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return Uint32Array.from({ length: bytes.byteLength / 4 }, (_, index) => view.getUint32(index * 4, true));
}

const finite = z.number();
const count = z.number().check(z.int(), z.nonnegative());
const tokenSet = z.pipe(
  z.transform((value: unknown) => (value instanceof Set ? [...value] : value)),
  z.array(z.string()),
);
const StoryItem = z.object({
  storyId: z.string(),
  leadArticleKey: z.string(),
  firstSeenAt: finite,
  signature: z
    .instanceof(Uint8Array)
    .check(z.refine((bytes) => bytes.byteLength % 4 === 0, 'signature bytes must be a multiple of 4')),
  bands: z.array(z.string()),
  marks: z.optional(z.array(z.string())),
  terms: z.optional(z.array(z.string())),
  outlets: z.array(z.string()),
  outletCount: count,
  articleCount: count,
  filed: z._default(tokenSet, []),
  outletTokens: z._default(tokenSet, []),
});
type StoryState = Omit<z.infer<typeof StoryItem>, 'signature' | 'filed' | 'outletTokens'> & {
  signature: Uint32Array;
  filed: Set<string>;
  outletTokens: Set<string>;
};
const BandItem = z.object({ storyIds: z.array(z.string()), expiresAt: z.optional(finite) });
type BandData = z.infer<typeof BandItem>;

/** What one assign round read, for its write (see DynamoStoryStore's `#round`). */
const newRound = () => ({
  stories: new Map<string, StoryState | null>(),
  bands: new Map<string, BandData | null>(),
});
const FilingItem = z.object({ storyId: z.string() });

/** The story item of `story` (TTL from its first sighting). */
function storyItem(story: StoryState, windowMs: number): Record<string, unknown> {
  return {
    ...storyItemKey(story.storyId),
    storyId: story.storyId,
    leadArticleKey: story.leadArticleKey,
    firstSeenAt: story.firstSeenAt,
    signature: encodeSignature(story.signature),
    bands: [...story.bands],
    ...(story.marks === undefined ? {} : { marks: [...story.marks] }),
    ...(story.terms === undefined ? {} : { terms: [...story.terms] }),
    outlets: [...story.outlets],
    outletCount: story.outletCount,
    articleCount: story.articleCount,
    // DynamoDB refuses empty sets.
    ...(story.filed.size > 0 ? { filed: new Set(story.filed) } : {}),
    ...(story.outletTokens.size > 0 ? { outletTokens: new Set(story.outletTokens) } : {}),
    expiresAt: storyExpiresAt(story.firstSeenAt, windowMs),
  };
}

const storyExpiresAt = (firstSeenAt: number, windowMs: number): number =>
  ttlSeconds(firstSeenAt + windowMs, ttlMarginDays);

function bandItem(bandKey: string, storyIds: readonly string[], expiresAt: number): Record<string, unknown> {
  return { ...bandItemKey(bandKey), storyIds: [...storyIds], expiresAt };
}

function filingItem(filing: StoryFiling, retentionDays: number): Record<string, unknown> {
  return {
    ...filingItemKey(filing.articleKey),
    storyId: filing.storyId,
    at: filing.at,
    expiresAt: ttlSeconds(filing.at, retentionDays),
  };
}

/**
 * A new story as the store starts it: its record's counts as given, with the lead's article and
 * the named outlets already counted, so a filing of the lead adds nothing a second time.
 */
function newStoryState(story: StoredStory): StoryState {
  const outlets = story.outlets.slice(0, maxStoryOutlets).map(outletName);
  return {
    storyId: story.storyId,
    leadArticleKey: storedKey(story.leadArticleKey),
    firstSeenAt: story.firstSeenAt,
    signature: story.signature,
    bands: [...story.bands],
    // Bounded here too: the store never trusts a caller to keep an item small.
    ...(story.marks === undefined ? {} : { marks: story.marks.slice(0, 16).map((mark) => mark.slice(0, 16)) }),
    ...(story.terms === undefined
      ? {}
      : { terms: story.terms.slice(0, MAX_STORED_TERMS).map((term) => term.slice(0, 8)) }),
    outlets,
    outletCount: Math.max(story.outletCount, outlets.length),
    articleCount: story.articleCount,
    filed: new Set(story.articleCount > 0 ? [token(story.leadArticleKey)] : []),
    outletTokens: new Set(outlets.map(token)),
  };
}

/** Counts `filing` into `story` unless it was counted already; true when something changed. */
function countFiling(story: StoryState, filing: StoryFiling): boolean {
  const article = token(filing.articleKey);
  if (story.filed.has(article)) return false;
  if (story.filed.size < maxCountedTokens) story.filed.add(article);
  story.articleCount += 1;
  if (filing.outlet !== undefined && filing.outlet !== '') {
    const name = outletName(filing.outlet);
    const outlet = token(name);
    if (!story.outletTokens.has(outlet)) {
      if (story.outletTokens.size < maxCountedTokens) story.outletTokens.add(outlet);
      story.outletCount += 1;
      if (story.outlets.length < maxStoryOutlets) story.outlets.push(name);
    }
  }
  return true;
}

/** The newest maxBandStories ids of `storyIds` plus `storyId` (kept in place when present). */
function withStory(storyIds: readonly string[], storyId: string): string[] | undefined {
  if (storyIds.includes(storyId)) return undefined;
  return [...storyIds, storyId].slice(-maxBandStories);
}

/** The DynamoDB story store: see the module comment for the layout and why counts are idempotent. */
export class DynamoStoryStore implements StoryStore {
  readonly #batch: BatchContext;
  readonly #windowMs: number;
  readonly #filingRetentionDays: number;
  readonly #now: () => number;
  readonly #log: Log;
  /**
   * The stories and bands this assign round read (a round starts with readFilings), parsed;
   * null: read and absent or damaged. `write` merges into these instead of reading them again:
   * the resolver read exactly what it is about to file under, and under the run lease nobody else
   * writes the index meanwhile.
   */
  #round = newRound();

  constructor(options: DynamoStoryStoreOptions) {
    const limit: LimitFunction = pLimit(options.concurrency ?? 4);
    this.#log = options.log ?? logger;
    this.#batch = {
      documents: options.documents,
      table: options.tableName,
      limit,
      sleep: options.sleep ?? ((ms) => delay(ms)),
      log: this.#log,
    };
    this.#windowMs = options.windowMs ?? STORY_WINDOW_MS;
    this.#filingRetentionDays = options.filingRetentionDays ?? 14;
    this.#now = options.now ?? Date.now;
  }

  async readFilings(articleKeys: readonly string[]): Promise<Map<string, string>> {
    this.#round = newRound();
    const items = await getAll(this.#batch, 'reading story filings', articleKeys.map(filingItemKey));
    const filings = new Map<string, string>();
    for (const articleKey of articleKeys) {
      const item = items.get(keyString(filingItemKey(articleKey)));
      if (item === undefined) continue;
      const parsed = FilingItem.safeParse(item);
      if (parsed.success) filings.set(articleKey, parsed.data.storyId);
      else this.#warn('story filing', item, parsed.error);
    }
    return filings;
  }

  async readBands(bandKeys: readonly string[]): Promise<Map<string, readonly string[]>> {
    const read = await this.#readBandData(bandKeys);
    const bands = new Map<string, readonly string[]>();
    for (const [bandKey, data] of read) if (data !== null) bands.set(bandKey, data.storyIds);
    return bands;
  }

  async readStories(storyIds: readonly string[]): Promise<Map<string, StoredStory>> {
    const states = await this.#readStates(storyIds);
    const oldest = this.#now() - this.#windowMs;
    const stories = new Map<string, StoredStory>();
    for (const [storyId, state] of states) {
      // TTL deletion is lazy (up to days late): a story past its window is gone for the index.
      if (state.firstSeenAt <= oldest) continue;
      const { filed: _filed, outletTokens: _outletTokens, ...story } = state;
      stories.set(storyId, story);
    }
    return stories;
  }

  async write(changes: {
    readonly stories: readonly StoredStory[];
    readonly filings: readonly StoryFiling[];
  }): Promise<void> {
    const round = this.#round;
    try {
      await this.#writeMerged(changes, round);
    } finally {
      // What this write read for itself, or what a failed write left, is no round's any more.
      this.#round = newRound();
    }
  }

  async #writeMerged(
    changes: { readonly stories: readonly StoredStory[]; readonly filings: readonly StoryFiling[] },
    round: ReturnType<typeof newRound>,
  ): Promise<void> {
    const created = new Map(changes.stories.map((story) => [story.storyId, story]));
    const filingsByStory = new Map<string, StoryFiling[]>();
    for (const filing of changes.filings) {
      const list = filingsByStory.get(filing.storyId) ?? [];
      list.push(filing);
      filingsByStory.set(filing.storyId, list);
    }
    const touched = [...new Set([...created.keys(), ...filingsByStory.keys()])];
    const unread = touched.filter((storyId) => !round.stories.has(storyId));
    const existing = new Map<string, StoryState>();
    for (const storyId of touched) {
      const known = round.stories.get(storyId);
      // A copy: counting the filing mutates it, and the reader may still hold the original.
      if (known)
        existing.set(storyId, {
          ...known,
          outlets: [...known.outlets],
          filed: new Set(known.filed),
          outletTokens: new Set(known.outletTokens),
        });
    }
    for (const [storyId, state] of unread.length > 0 ? await this.#readStates(unread) : [])
      existing.set(storyId, state);

    const storyWrites: Record<string, unknown>[] = [];
    for (const storyId of new Set([...created.keys(), ...filingsByStory.keys()])) {
      const stored = existing.get(storyId);
      const story = created.get(storyId);
      const state = stored ?? (story === undefined ? undefined : newStoryState(story));
      if (state === undefined) {
        // The resolver filed under a story that expired or was damaged meanwhile: the filing
        // still records the decision; only the story's counts miss it.
        this.#log.warn('filed articles under a story the index does not hold', { storyId });
        continue;
      }
      let changed = stored === undefined;
      const filings = [...(filingsByStory.get(storyId) ?? [])].sort(
        (a, b) => a.at - b.at || (a.articleKey < b.articleKey ? -1 : 1),
      );
      for (const filing of filings) changed = countFiling(state, filing) || changed;
      if (changed) storyWrites.push(storyItem(state, this.#windowMs));
    }
    const bandWrites = await this.#bandWrites(changes.stories, round.bands);

    // Stories and their bands first, so a filing of a story this write starts never points at a
    // story that is not there yet (one filed under a story the index no longer holds is written
    // anyway, with a warning above: the article keeps its decision).
    await writeAll(
      this.#batch,
      'writing stories',
      [...storyWrites, ...bandWrites].map((item) => ({
        key: { pk: String(item.pk), sk: String(item.sk) },
        request: { PutRequest: { Item: item } },
      })),
    );
    await writeAll(
      this.#batch,
      'writing story filings',
      changes.filings.map((filing) => ({
        key: filingItemKey(filing.articleKey),
        request: { PutRequest: { Item: filingItem(filing, this.#filingRetentionDays) } },
      })),
    );
  }

  /** Band items that gain a story of `stories` (read, merged, bounded); unchanged bands are not rewritten. */
  async #bandWrites(
    stories: readonly StoredStory[],
    known: ReadonlyMap<string, BandData | null>,
  ): Promise<Record<string, unknown>[]> {
    const bandKeys = [...new Set(stories.flatMap((story) => story.bands))];
    if (bandKeys.length === 0) return [];
    const unread = bandKeys.filter((bandKey) => !known.has(bandKey));
    const read = unread.length > 0 ? await this.#readBandData(unread) : new Map<string, BandData | null>();
    const bands = new Map<string, { storyIds: string[]; expiresAt: number; changed: boolean }>();
    for (const bandKey of bandKeys) {
      const data = known.get(bandKey) ?? read.get(bandKey) ?? null;
      bands.set(bandKey, { storyIds: [...(data?.storyIds ?? [])], expiresAt: data?.expiresAt ?? 0, changed: false });
    }
    // Oldest first, so a band's list stays oldest first whatever order the caller gave.
    for (const story of [...stories].sort((a, b) => a.firstSeenAt - b.firstSeenAt)) {
      for (const bandKey of new Set(story.bands)) {
        const band = bands.get(bandKey);
        const next = band === undefined ? undefined : withStory(band.storyIds, story.storyId);
        if (band === undefined || next === undefined) continue;
        band.storyIds = next;
        band.expiresAt = Math.max(band.expiresAt, storyExpiresAt(story.firstSeenAt, this.#windowMs));
        band.changed = true;
      }
    }
    return [...bands]
      .filter(([, band]) => band.changed)
      .map(([bandKey, band]) => bandItem(bandKey, band.storyIds, band.expiresAt));
  }

  /** Band items by key, parsed (null: absent, or damaged and logged), remembered for this round's write. */
  async #readBandData(bandKeys: readonly string[]): Promise<Map<string, BandData | null>> {
    const items = await getAll(this.#batch, 'reading story bands', bandKeys.map(bandItemKey));
    const bands = new Map<string, BandData | null>();
    for (const bandKey of bandKeys) {
      const item = items.get(keyString(bandItemKey(bandKey)));
      const parsed = item === undefined ? undefined : BandItem.safeParse(item);
      if (parsed?.success === false) this.#warn('story band', item ?? {}, parsed.error);
      // The contract's bound holds for any item: one written by hand may list thousands of ids.
      const data = parsed?.success ? { ...parsed.data, storyIds: parsed.data.storyIds.slice(-maxBandStories) } : null;
      bands.set(bandKey, data);
      this.#round.bands.set(bandKey, data);
    }
    return bands;
  }

  /** Story items by id, parsed; damaged ones are logged and left out (a new story, never a lost alert). */
  async #readStates(storyIds: readonly string[]): Promise<Map<string, StoryState>> {
    const items = await getAll(this.#batch, 'reading stories', storyIds.map(storyItemKey));
    const states = new Map<string, StoryState>();
    for (const storyId of new Set(storyIds)) {
      const item = items.get(keyString(storyItemKey(storyId)));
      if (item === undefined) continue;
      const parsed = StoryItem.safeParse(item);
      if (!parsed.success || parsed.data.storyId !== storyId) {
        this.#warn('story', item, parsed.error);
        continue;
      }
      const { signature, filed, outletTokens, ...rest } = parsed.data;
      states.set(storyId, {
        ...rest,
        signature: decodeSignature(signature),
        filed: new Set(filed),
        outletTokens: new Set(outletTokens),
      });
    }
    for (const storyId of storyIds) this.#round.stories.set(storyId, states.get(storyId) ?? null);
    return states;
  }

  #warn(kind: string, item: Record<string, unknown>, error: z.core.$ZodError | undefined): void {
    this.#log.warn(`skipped a malformed ${kind} item; it counts as absent`, {
      pk: item.pk,
      reason: error === undefined ? 'belongs to another id' : z.prettifyError(error),
    });
  }
}

/** Sizes of the story index's items as DynamoDB bills them (bytes), for the benchmark's storage figures. */
export interface StoryIndexItemBytes {
  /** A filing item (one per article filed). */
  readonly filing: number;
  /** A story item with the given signature, bands and outlets, one article counted. */
  readonly story: number;
  /** What each further article (and outlet) adds to its story item, at most. */
  readonly storyPerArticle: number;
  /** A band item holding one story id. */
  readonly band: number;
  /** What each further story id adds to a band item. */
  readonly bandPerStory: number;
}

/** The shape of what {@link storyIndexItemBytes} measures. */
export interface StoryItemShape {
  /** Values in a signature (default SIGNATURE_SIZE of core/story.ts). */
  readonly signatureLength: number;
  /** Band keys per story (default BANDS). */
  readonly bands: number;
  /** Characters per band key (default 7, as core/story.ts spells them). */
  readonly bandKeyLength: number;
  /** UTF-8 bytes of an outlet name (default 12: `연합뉴스`, `The Herald`). */
  readonly outletLength: number;
}

/**
 * Measures the items this store writes for an article key like `id:<20 digits>` and a
 * 16-character story id (storyIdOf), in the given shape (by default the resolver's).
 */
export function storyIndexItemBytes(overrides: Partial<StoryItemShape> = {}): StoryIndexItemBytes {
  const shape: StoryItemShape = {
    signatureLength: SIGNATURE_SIZE,
    bands: BANDS,
    bandKeyLength: 7,
    outletLength: 12,
    ...overrides,
  };
  const at = Date.UTC(2026, 0, 1);
  const articleKey = `id:${'1'.repeat(20)}`;
  const storyId = 'f'.repeat(16);
  const bands = Array.from({ length: shape.bands }, (_, index) => `${index}:`.padEnd(shape.bandKeyLength, 'b'));
  const story = newStoryState({
    storyId,
    leadArticleKey: articleKey,
    firstSeenAt: at,
    signature: new Uint32Array(shape.signatureLength).fill(0xffffffff),
    bands,
    outlets: ['o'.repeat(shape.outletLength)],
    outletCount: 1,
    articleCount: 1,
  });
  const one = measureItem(storyItem(story, STORY_WINDOW_MS)).bytes;
  countFiling(story, { articleKey: `${articleKey}2`, storyId, outlet: 'p'.repeat(shape.outletLength), at });
  const two = measureItem(storyItem(story, STORY_WINDOW_MS)).bytes;
  const band = measureItem(bandItem(bands[0] ?? 'b', [storyId], 0)).bytes;
  return {
    filing: measureItem(filingItem({ articleKey, storyId, at }, 14)).bytes,
    story: one,
    storyPerArticle: two - one,
    band,
    bandPerStory: measureItem(bandItem(bands[0] ?? 'b', [storyId, storyId], 0)).bytes - band,
  };
}

/**
 * The bytes DynamoDB would store for an index's contents (stories with their filed articles,
 * bands, filings), as this store writes the items: for the benchmark's storage figures, measured
 * on the real item layout rather than a copy of it.
 */
export function measureStoryIndex(
  contents: {
    readonly stories: readonly StoredStory[];
    readonly bands: ReadonlyMap<string, readonly string[]>;
    readonly filings: ReadonlyMap<string, string>;
  },
  options: { readonly windowMs?: number; readonly filingRetentionDays?: number } = {},
): { readonly story: number; readonly band: number; readonly filing: number } {
  const windowMs = options.windowMs ?? STORY_WINDOW_MS;
  const byStory = new Map<string, string[]>();
  for (const [articleKey, storyId] of contents.filings) {
    const keys = byStory.get(storyId) ?? [];
    keys.push(articleKey);
    byStory.set(storyId, keys);
  }
  let story = 0;
  for (const stored of contents.stories) {
    const state = newStoryState({ ...stored, articleCount: 1 });
    for (const articleKey of byStory.get(stored.storyId) ?? []) {
      countFiling(state, { articleKey, storyId: stored.storyId, at: stored.firstSeenAt });
    }
    story += measureItem(storyItem(state, windowMs)).bytes;
  }
  let band = 0;
  for (const [bandKey, storyIds] of contents.bands) band += measureItem(bandItem(bandKey, storyIds, 0)).bytes;
  let filing = 0;
  for (const [articleKey, storyId] of contents.filings) {
    filing += measureItem(filingItem({ articleKey, storyId, at: 0 }, options.filingRetentionDays ?? 14)).bytes;
  }
  return { story, band, filing };
}
