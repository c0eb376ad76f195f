/**
 * DynamoStoryStore against moto server through the real SDK clients: stories, bands and filings
 * round-trip; repeated writes (a run that crashed and re-read) change no count; bands stay
 * bounded; stories past the window and items damaged by hand read as absent; hostile keys and
 * outlet names stay inside DynamoDB's limits; unprocessed batch items are retried.
 */
import {
  type BatchGetCommandInput,
  type BatchWriteCommandInput,
  type DynamoDBDocumentClient,
  PutCommand,
} from '@aws-sdk/lib-dynamodb';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  bandItemKey,
  DynamoStoryStore,
  type DynamoStoryStoreOptions,
  decodeSignature,
  encodeSignature,
  filingItemKey,
  maxCountedTokens,
  maxOutletNameLength,
  storyIndexItemBytes,
  storyItemKey,
} from '#aws/dynamo-story-index';
import { ITEM_LIMITS, measureItem } from '#aws/table-layout';
import { maxBandStories, maxStoryOutlets, type StoredStory, type StoryFiling } from '#core/ports';
import { MAX_STORED_TERMS, SIGNATURE_SIZE, STORY_WINDOW_MS, StoryResolver, storyIdOf } from '#core/story';
import { createTables, tableNamesFor } from '#sandbox/tables';
import { awsClients, uniquePrefix } from '#test/aws';
import { rawItem, recordCalls, withholdHalf } from '#test/dynamo-faults';
import { captureLog } from '#test/run-harness';

const t0 = Date.UTC(2026, 10, 22, 9, 0, 0);
const minute = 60_000;
const day = 86_400_000;

async function setup(options: Partial<DynamoStoryStoreOptions> = {}) {
  const clients = awsClients();
  const names = tableNamesFor(uniquePrefix());
  await createTables(clients.dynamo, names);
  const log = captureLog();
  const sleeps: number[] = [];
  let clock = t0;
  const store = new DynamoStoryStore({
    documents: clients.documents,
    tableName: names.state,
    log,
    sleep: async (ms) => {
      sleeps.push(ms);
    },
    now: () => clock,
    ...options,
  });
  return {
    documents: clients.documents,
    table: names.state,
    store,
    log,
    sleeps,
    setClock: (at: number) => {
      clock = at;
    },
  };
}

/** A new story led by `id:<lead>`, counted with its lead (one article, one outlet). */
function story(lead: string, overrides: Partial<StoredStory> = {}): StoredStory {
  return {
    storyId: `s-${lead}`,
    leadArticleKey: `id:${lead}`,
    firstSeenAt: t0,
    outlets: ['Yonhap'],
    outletCount: 1,
    articleCount: 1,
    signature: Uint32Array.from({ length: 64 }, (_, index) => (index * 2_654_435_761) >>> 0),
    bands: [`0:${lead}`, `1:${lead}`, 'shared-band'],
    ...overrides,
  };
}

const filing = (article: string, storyId: string, outlet?: string, at = t0): StoryFiling => ({
  articleKey: `id:${article}`,
  storyId,
  outlet,
  at,
});

/** The next `times` BatchWriteItem requests whose items are filings fail as if the process died there. */
function crashOnFilings(documents: DynamoDBDocumentClient, times: number): void {
  let remaining = times;
  documents.middlewareStack.add(
    (next, context) => async (args) => {
      if (remaining > 0 && context.commandName === 'BatchWriteItemCommand') {
        const requests = Object.values((args.input as BatchWriteCommandInput).RequestItems ?? {})[0] ?? [];
        if (requests.some((request) => String(request.PutRequest?.Item?.pk).startsWith('story-filing#'))) {
          remaining -= 1;
          throw new Error('the process died before the filings were written');
        }
      }
      return await next(args);
    },
    { step: 'initialize', name: 'crashOnFilings' },
  );
}

describe('story store', () => {
  it('round-trips stories, bands and filings, and leaves unknown ids out', async () => {
    const { store } = await setup();
    // As many terms as a fingerprint holds (a long headline's and its credit's): all kept.
    const terms = Array.from({ length: MAX_STORED_TERMS }, (_, index) => `${index < 64 ? '' : '~'}t${index}`);
    const first = { ...story('a1'), marks: ['¬', '1000', 'july'], terms };
    const second = story('b1', { firstSeenAt: t0 + minute, outlets: [], outletCount: 0, articleCount: 0 });
    await store.write({
      stories: [second, first],
      filings: [
        filing('a1', first.storyId, 'Yonhap'),
        filing('a2', first.storyId, 'Newsis', t0 + minute),
        filing('a3', first.storyId, 'Yonhap', t0 + 2 * minute),
        filing('b1', second.storyId, 'Kyodo', t0 + minute),
      ],
    });

    const stories = await store.readStories([first.storyId, second.storyId, 'nope']);
    expect([...stories.keys()].sort()).toEqual([first.storyId, second.storyId]);
    const a = stories.get(first.storyId)!;
    expect(a).toMatchObject({
      storyId: first.storyId,
      leadArticleKey: 'id:a1',
      firstSeenAt: t0,
      outlets: ['Yonhap', 'Newsis'],
      outletCount: 2,
      articleCount: 3,
      bands: first.bands,
      marks: ['¬', '1000', 'july'],
      terms,
    });
    expect([...a.signature]).toEqual([...first.signature]);
    // A story stored without marks (before they existed) reads without them: no check.
    expect(stories.get(second.storyId)?.marks).toBeUndefined();
    expect(stories.get(second.storyId)?.terms).toBeUndefined();
    expect(stories.get(second.storyId)).toMatchObject({ outlets: ['Kyodo'], outletCount: 1, articleCount: 1 });

    const bands = await store.readBands(['0:a1', 'shared-band', 'nope']);
    expect(Object.fromEntries(bands)).toEqual({
      '0:a1': [first.storyId],
      // Oldest first, whatever order the stories were given in.
      'shared-band': [first.storyId, second.storyId],
    });
    const filings = await store.readFilings(['id:a1', 'id:a2', 'id:a3', 'id:b1', 'id:never']);
    expect(Object.fromEntries(filings)).toEqual({
      'id:a1': first.storyId,
      'id:a2': first.storyId,
      'id:a3': first.storyId,
      'id:b1': second.storyId,
    });
  });

  it('changes no count when the same write is repeated, also after a crash before the filings', async () => {
    const { store, documents } = await setup();
    const lead = story('a1');
    const changes = {
      stories: [lead],
      filings: [filing('a1', lead.storyId, 'Yonhap'), filing('a2', lead.storyId, 'Newsis')],
    };
    crashOnFilings(documents, 1);
    await expect(store.write(changes)).rejects.toThrow(/process died/);
    await store.write(changes);
    await store.write(changes);
    // A later run files one more copy, then repeats that write.
    const later = { stories: [], filings: [filing('a3', lead.storyId, 'Newsis', t0 + minute)] };
    await store.write(later);
    await store.write(later);

    const read = (await store.readStories([lead.storyId])).get(lead.storyId);
    expect(read).toMatchObject({ outlets: ['Yonhap', 'Newsis'], outletCount: 2, articleCount: 3 });
    expect((await store.readBands(['shared-band'])).get('shared-band')).toEqual([lead.storyId]);
  });

  it('rewrites nothing when a repeated write changes nothing', async () => {
    const { store, documents } = await setup();
    const lead = story('a1');
    const changes = { stories: [lead], filings: [filing('a1', lead.storyId, 'Yonhap')] };
    await store.write(changes);
    const calls = recordCalls(documents);
    await store.write(changes);
    const writes = calls.filter((call) => call.command === 'BatchWriteItemCommand');
    // Only the filing is put again (idempotent); the story and its bands are unchanged.
    expect(writes).toEqual([{ command: 'BatchWriteItemCommand', size: 1 }]);
  });

  it(`keeps the newest ${maxBandStories} stories of a hot band, oldest first, with the newest one's TTL`, async () => {
    const { store, documents, table } = await setup();
    const stories = Array.from({ length: 12 }, (_, index) =>
      story(`h${index}`, { firstSeenAt: t0 + index * minute, bands: ['hot'] }),
    );
    // Two runs: the band is read back and merged, not overwritten.
    await store.write({ stories: stories.slice(0, 5), filings: [] });
    await store.write({ stories: stories.slice(5), filings: [] });
    const band = (await store.readBands(['hot'])).get('hot');
    expect(band).toEqual(stories.slice(-maxBandStories).map((entry) => entry.storyId));
    const item = await rawItem(documents, table, bandItemKey('hot'));
    expect(item?.expiresAt).toBe(Math.floor((t0 + 11 * minute + STORY_WINDOW_MS + day) / 1000));
  });

  it(`reads a band item written by hand with thousands of ids as its newest ${maxBandStories}, and keeps the bound when it grows`, async () => {
    const { store, documents, table } = await setup();
    const ids = Array.from({ length: 3_000 }, (_, index) => `hand-${index}`);
    await documents.send(new PutCommand({ TableName: table, Item: { ...bandItemKey('hand'), storyIds: ids } }));
    expect((await store.readBands(['hand'])).get('hand')).toEqual(ids.slice(-maxBandStories));
    const next = story('h-next', { bands: ['hand'] });
    await store.write({ stories: [next], filings: [] });
    const item = await rawItem(documents, table, bandItemKey('hand'));
    expect(item?.storyIds).toEqual([...ids.slice(-(maxBandStories - 1)), next.storyId]);
  });

  it('leaves out stories past the window (TTL deletes late) and sets TTLs in epoch seconds', async () => {
    const { store, documents, table, setClock } = await setup({ filingRetentionDays: 14 });
    const lead = story('a1');
    await store.write({ stories: [lead], filings: [filing('a1', lead.storyId, 'Yonhap', t0 + 5)] });
    expect((await rawItem(documents, table, storyItemKey(lead.storyId)))?.expiresAt).toBe(
      Math.floor((t0 + STORY_WINDOW_MS + day) / 1000),
    );
    expect((await rawItem(documents, table, filingItemKey('id:a1')))?.expiresAt).toBe(
      Math.floor((t0 + 5 + 14 * day) / 1000),
    );
    setClock(t0 + STORY_WINDOW_MS - 1);
    expect((await store.readStories([lead.storyId])).size).toBe(1);
    setClock(t0 + STORY_WINDOW_MS);
    expect((await store.readStories([lead.storyId])).size).toBe(0);
    // The filing is remembered longer: a re-read within the ledger's memory finds its story id.
    expect((await store.readFilings(['id:a1'])).get('id:a1')).toBe(lead.storyId);
  });

  it('reads items damaged by hand as absent with a warning, and a new story replaces a damaged one', async () => {
    const { store, documents, table, log } = await setup();
    const put = (item: Record<string, unknown>) => documents.send(new PutCommand({ TableName: table, Item: item }));
    await put({ ...storyItemKey('s-bad'), storyId: 's-bad', leadArticleKey: 7, signature: 'not bytes' });
    await put({ ...storyItemKey('s-odd'), ...oddSignatureStory() });
    await put({ ...storyItemKey('s-other'), ...validStoryAttributes('s-elsewhere') });
    await put({ ...bandItemKey('bad-band'), storyIds: 's-1' });
    await put({ ...filingItemKey('id:bad'), storyId: 42 });

    expect((await store.readStories(['s-bad', 's-odd', 's-other'])).size).toBe(0);
    expect((await store.readBands(['bad-band'])).size).toBe(0);
    expect((await store.readFilings(['id:bad'])).size).toBe(0);
    const warnings = log.lines.filter((line) => line.includes('"WARN"') && line.includes('malformed'));
    expect(warnings.length).toBe(5);

    // Writing over the damage works: the story is new, the band starts again.
    const fresh = story('bad', { storyId: 's-bad', bands: ['bad-band'] });
    await store.write({ stories: [fresh], filings: [filing('bad', 's-bad', 'Yonhap')] });
    expect((await store.readStories(['s-bad'])).get('s-bad')).toMatchObject({ articleCount: 1, outletCount: 1 });
    expect((await store.readBands(['bad-band'])).get('bad-band')).toEqual(['s-bad']);
    expect((await store.readFilings(['id:bad'])).get('id:bad')).toBe('s-bad');
  });

  it('files under a story it does not hold without failing (the filing still records the decision)', async () => {
    const { store, log } = await setup();
    await store.write({ stories: [], filings: [filing('x1', 's-gone', 'Yonhap')] });
    expect((await store.readFilings(['id:x1'])).get('id:x1')).toBe('s-gone');
    expect(log.lines.some((line) => line.includes('does not hold'))).toBe(true);
  });

  it(`keeps ${maxStoryOutlets} outlet names, counts every distinct outlet, and bounds what it remembers`, async () => {
    const { store, documents, table } = await setup();
    const lead = story('a0', { outlets: [], outletCount: 0, articleCount: 0 });
    const count = maxCountedTokens + 40;
    const filings = Array.from({ length: count }, (_, index) =>
      filing(`a${index}`, lead.storyId, `Outlet ${index} ${'장'.repeat(300)}`, t0 + index),
    );
    await store.write({ stories: [lead], filings });
    const read = (await store.readStories([lead.storyId])).get(lead.storyId)!;
    expect(read.outlets).toHaveLength(maxStoryOutlets);
    expect(read.outlets.every((name) => name.length <= maxOutletNameLength)).toBe(true);
    expect(read.outlets[0]?.startsWith('Outlet 0 ')).toBe(true);
    expect(read).toMatchObject({ outletCount: count, articleCount: count });
    const item = (await rawItem(documents, table, storyItemKey(lead.storyId)))!;
    expect((item.filed as Set<string>).size).toBe(maxCountedTokens);
    expect(measureItem(item).bytes).toBeLessThan(16 * 1024);
  });

  it('keeps hostile article keys, outlet names and band keys inside DynamoDB limits', async () => {
    const { store, documents, table } = await setup();
    await fc.assert(
      fc.asyncProperty(
        fc.string({ minLength: 0, maxLength: 3000, unit: 'binary' }),
        fc.string({ minLength: 1, maxLength: 5000, unit: 'binary' }),
        fc.string({ minLength: 0, maxLength: 3000, unit: 'binary' }),
        async (articleKey, outlet, bandKey) => {
          const lead = story('p', {
            storyId: `s-${articleKey.length}-${outlet.length}`,
            leadArticleKey: articleKey,
            bands: [bandKey],
            outlets: [outlet],
          });
          await store.write({
            stories: [lead],
            filings: [{ articleKey, storyId: lead.storyId, outlet, at: t0 }],
          });
          expect((await store.readFilings([articleKey])).get(articleKey)).toBe(lead.storyId);
          expect((await store.readBands([bandKey])).get(bandKey)).toContain(lead.storyId);
          const read = (await store.readStories([lead.storyId])).get(lead.storyId)!;
          expect(read.outlets.every((name) => name.length <= maxOutletNameLength)).toBe(true);
          const item = (await rawItem(documents, table, storyItemKey(lead.storyId)))!;
          expect(measureItem(item).bytes).toBeLessThan(ITEM_LIMITS.itemBytes);
          for (const key of [filingItemKey(articleKey), bandItemKey(bandKey), storyItemKey(lead.storyId)]) {
            expect(Buffer.byteLength(key.pk, 'utf8')).toBeLessThanOrEqual(ITEM_LIMITS.partitionKeyBytes);
          }
        },
      ),
      { numRuns: 12 },
    );
    const long = `url:https://news.example.com/${'x'.repeat(100_000)}`;
    const lead = story('long', { leadArticleKey: long });
    await store.write({ stories: [lead], filings: [{ articleKey: long, storyId: lead.storyId, at: t0 }] });
    expect((await store.readFilings([long])).get(long)).toBe(lead.storyId);
    const stored = (await store.readStories([lead.storyId])).get(lead.storyId)!;
    expect(stored.leadArticleKey.startsWith('#')).toBe(true);
    expect(stored.articleCount).toBe(1);
  });

  it('reads and writes in batches of at most 100 keys and 25 items, and retries unprocessed ones', async () => {
    const { store, documents, sleeps } = await setup();
    const stories = Array.from({ length: 30 }, (_, index) => story(`b${index}`, { bands: [`band-${index}`] }));
    const filings = stories.flatMap((entry, index) => [
      filing(`b${index}`, entry.storyId, 'Yonhap'),
      filing(`c${index}`, entry.storyId, 'Newsis'),
    ]);
    const calls = recordCalls(documents);
    const consistent: unknown[] = [];
    documents.middlewareStack.add(
      (next, context) => async (args) => {
        if (context.commandName === 'BatchGetItemCommand') {
          const request = Object.values((args.input as BatchGetCommandInput).RequestItems ?? {})[0];
          consistent.push(request?.ConsistentRead);
        }
        return await next(args);
      },
      { step: 'initialize', name: 'consistentReads' },
    );
    const stats = withholdHalf(documents, 6);
    await store.write({ stories, filings });
    expect(stats.withheld).toBeGreaterThan(0);
    expect(sleeps.length).toBeGreaterThan(0);
    expect(calls.every((call) => call.size <= (call.command === 'BatchGetItemCommand' ? 100 : 25))).toBe(true);

    const keys = [...filings.map((entry) => entry.articleKey), ...Array.from({ length: 150 }, (_, i) => `id:n${i}`)];
    const read = await store.readFilings(keys);
    expect(read.size).toBe(60);
    await store.readBands(['band-1']);
    const all = await store.readStories(stories.map((entry) => entry.storyId));
    // A story, band or filing written by the previous run must be seen: every read is strongly consistent.
    expect(consistent.length).toBeGreaterThan(4);
    expect(consistent.every((flag) => flag === true)).toBe(true);
    expect([...all.values()].every((entry) => entry.articleCount === 2 && entry.outletCount === 2)).toBe(true);
  });

  it('keeps no more batch requests in flight than its concurrency', async () => {
    const { store, documents } = await setup({ concurrency: 2 });
    let inFlight = 0;
    let most = 0;
    documents.middlewareStack.add(
      (next) => async (args) => {
        inFlight += 1;
        most = Math.max(most, inFlight);
        try {
          return await next(args);
        } finally {
          inFlight -= 1;
        }
      },
      { step: 'initialize', name: 'countInFlight' },
    );
    await store.readFilings(Array.from({ length: 1000 }, (_, index) => `id:${index}`));
    expect(most).toBe(2);
  });
});

describe('story item sizes', () => {
  it('measures filings, stories and band entries, and the largest story stays far below 400 KB', () => {
    const typical = storyIndexItemBytes();
    expect(typical.filing).toBeGreaterThan(0);
    expect(typical.filing).toBeLessThan(128);
    expect(typical.story).toBeGreaterThan(SIGNATURE_SIZE * 4);
    // A new story is one write unit (1 KB): the resolver's signature and bands fit with room for its lead.
    expect(typical.story).toBeLessThanOrEqual(1024);
    expect(typical.storyPerArticle).toBeGreaterThan(0);
    expect(typical.bandPerStory).toBe(17);
    const largest = storyIndexItemBytes({ signatureLength: 512, bands: 32, bandKeyLength: 63, outletLength: 100 });
    expect(largest.story + maxCountedTokens * largest.storyPerArticle).toBeLessThan(ITEM_LIMITS.itemBytes / 10);
  });

  it('stores signatures little-endian whatever the machine', () => {
    const bytes = encodeSignature(Uint32Array.of(1, 0xdeadbeef));
    expect([...bytes]).toEqual([1, 0, 0, 0, 0xef, 0xbe, 0xad, 0xde]);
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 0xffffffff })), (values) => {
        expect([...decodeSignature(encodeSignature(Uint32Array.from(values)))]).toEqual(values);
      }),
    );
  });
});

/** A story item whose signature is not whole 32-bit values. */
function oddSignatureStory(): Record<string, unknown> {
  return { ...validStoryAttributes('s-odd'), signature: new Uint8Array(7) };
}

function validStoryAttributes(storyId: string): Record<string, unknown> {
  return {
    storyId,
    leadArticleKey: 'id:x',
    firstSeenAt: t0,
    signature: new Uint8Array(8),
    bands: [],
    outlets: [],
    outletCount: 0,
    articleCount: 0,
  };
}

describe('requests of an assign round', () => {
  const article = (key: string, title: string, media: string) => ({
    key,
    title,
    summary: '',
    url: `https://news.example.com/${key}`,
    publishedAt: t0,
    categories: [],
    categoryNames: [],
    mediaName: media,
  });

  it('the write merges into the stories and bands the round read, without reading them again', async () => {
    const { store, documents } = await setup();
    const resolver = new StoryResolver(store);
    const calls = recordCalls(documents);
    let writeStartsAt = -1;
    const write = store.write.bind(store);
    store.write = async (changes) => {
      writeStartsAt = calls.length;
      await write(changes);
    };
    const lead = article('id:1', 'Samsung to invest 10 trillion won in new chip plant', 'Yonhap');
    // Keys the write reads itself: only the stories it starts (an earlier write that crashed may
    // have left them); never a band or a story the round read already.
    const keysReadByWrite = () =>
      calls
        .slice(writeStartsAt)
        .filter((call) => call.command === 'BatchGetItemCommand')
        .reduce((sum, call) => sum + call.size, 0);
    await resolver.assign([lead, article('id:2', 'Heavy rain floods roads in Busan', 'Newsis')], { now: t0 });
    expect(keysReadByWrite()).toBe(2);

    // A later round: a copy of a stored story, and a new one.
    const copy = article('id:3', '[속보] Samsung to invest 10 trillion won in new chip plant', 'Kyodo');
    const result = await new StoryResolver(store).assign(
      [copy, article('id:4', 'Central bank holds rates steady', 'Yonhap')],
      { now: t0 + minute },
    );
    expect(keysReadByWrite()).toBe(1);
    const storyId = result.get('id:3')?.storyId ?? '';
    expect(storyId).toBe(storyIdOf('id:1'));
    expect((await store.readStories([storyId])).get(storyId)).toMatchObject({
      articleCount: 2,
      outlets: ['Yonhap', 'Kyodo'],
    });
  });
});
