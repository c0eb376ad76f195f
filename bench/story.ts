/**
 * The story benchmark (issue 13): precision and recall of "same story" on the labelled pairs of
 * bench/story-pairs.json (each pair through a fresh {@link StoryResolver}: the first article
 * filed, the second assigned a minute later, so band lookup and confirmation both count), the
 * similarity threshold's sweep on the tuning half beside the held-out half, the in-process cost
 * of fingerprint + lookup per article at 100,000 articles over the in-memory store, and the
 * index's storage per article as DynamoDB would count it.
 *
 * `npx tsx bench/story.ts [--quick]` prints the section; `npm run bench` includes it. Nothing
 * here asserts a figure.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { BatchGetCommand, BatchWriteCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { DynamoStoryStore, measureStoryIndex } from '#aws/dynamo-story-index';
import { measureItem } from '#aws/table-layout';
import type { Article } from '#core/model';
import { maxBandStories } from '#core/ports';
import {
  BANDS,
  disagree,
  fingerprint,
  MIN_SHARED_BANDS,
  STORY_SIMILARITY,
  STORY_WINDOW_MS,
  StoryResolver,
  similarity,
} from '#core/story';
import { mulberry32 } from '#sandbox/news-simulator-data';
import { MemoryStoryStore } from '../test/support/memory-story-store.ts';
import { DYNAMO_ITEM_OVERHEAD_BYTES } from './cost-model.ts';
import type { Section, TargetCheck } from './report.ts';
import { formatNumber, formatShare, median } from './stats.ts';
import type { PairArticle, StoryPair } from './story-pairs.ts';
import { delivered, syntheticArticles } from './synthetic.ts';

/** Confusion counts of "same story". */
export interface Confusion {
  truePositives: number;
  falsePositives: number;
  falseNegatives: number;
  trueNegatives: number;
}

export interface StoryBenchResults {
  readonly pairs: number;
  readonly all: Confusion;
  readonly holdout: Confusion;
  readonly tune: Confusion;
  /** By language and by kind (all pairs). */
  readonly byGroup: readonly { readonly group: string; readonly confusion: Confusion }[];
  /** Pairs decided wrongly, for the findings. */
  readonly mistakes: readonly { readonly id: string; readonly kind: string; readonly similarity: number }[];
  /** Precision and recall by threshold, tuning and held-out halves (similarity on band candidates). */
  readonly sweep: readonly { readonly threshold: number; readonly tune: Confusion; readonly holdout: Confusion }[];
  /** CPU time per article, µs, of {@link StoryResolver.assign} over the in-memory store. */
  readonly cost: {
    readonly articles: number;
    readonly copyShare: number;
    readonly batch: number;
    /**
     * The target's "fingerprint + lookup": the resolver's in-process work (fingerprints, band and
     * candidate handling, similarity, new stories, filings, its cache), every store call excluded.
     */
    readonly microsPerArticle: readonly number[];
    /** The same plus the in-memory store's reads (DynamoDB BatchGetItem in production). */
    readonly withReadsMicros: readonly number[];
    /** The same plus the in-memory store's writes. */
    readonly withWritesMicros: readonly number[];
    readonly fingerprintMicros: readonly number[];
    readonly stories: number;
    /** Stories the resolver read (band candidates and filed articles' stories) per article. */
    readonly storiesReadPerArticle: number;
  };
  /**
   * DynamoDB request units of the index as its DynamoDB adapter (functions/aws/dynamo-story-index.ts)
   * spends them, per article filed: every BatchGetItem key (strongly consistent: one read unit per
   * 4 KB begun, one for a key with no item) and every BatchWriteItem put (one write unit per 1 KB
   * begun of the larger of the old and the new item).
   */
  readonly requestUnits: {
    readonly articles: number;
    readonly readUnitsPerArticle: number;
    readonly writeUnitsPerArticle: number;
    readonly requestsPerArticle: number;
    /** Share of the articles that started a story. */
    readonly newStoryShare: number;
  };
  readonly storage: {
    readonly storyItemBytes: number;
    readonly bandItemBytes: number;
    readonly filingItemBytes: number;
    readonly bytesPerArticle: number;
    readonly itemsPerArticle: number;
  };
}

const emptyConfusion = (): Confusion => ({ truePositives: 0, falsePositives: 0, falseNegatives: 0, trueNegatives: 0 });

function count(confusion: Confusion, same: boolean, decided: boolean): void {
  if (same && decided) confusion.truePositives++;
  else if (same) confusion.falseNegatives++;
  else if (decided) confusion.falsePositives++;
  else confusion.trueNegatives++;
}

export const precisionOf = (c: Confusion): number =>
  c.truePositives + c.falsePositives === 0 ? 1 : c.truePositives / (c.truePositives + c.falsePositives);
export const recallOf = (c: Confusion): number =>
  c.truePositives + c.falseNegatives === 0 ? 1 : c.truePositives / (c.truePositives + c.falseNegatives);

export function loadPairs(): StoryPair[] {
  const path = fileURLToPath(new URL('./story-pairs.json', import.meta.url));
  return (JSON.parse(readFileSync(path, 'utf8')) as { pairs: StoryPair[] }).pairs;
}

const T0 = Date.UTC(2026, 0, 5, 9);

const toArticle = (side: PairArticle, key: string): Article => ({
  key,
  title: side.title,
  summary: side.summary,
  url: `https://news.example.com/${key}`,
  publishedAt: T0,
  categories: [],
  categoryNames: [],
  media: side.media,
  mediaName: side.media,
});

async function evaluate(pairs: readonly StoryPair[]) {
  const all = emptyConfusion();
  const tune = emptyConfusion();
  const holdout = emptyConfusion();
  const groups = new Map<string, Confusion>();
  const mistakes: { id: string; kind: string; similarity: number }[] = [];
  for (const pair of pairs) {
    const store = new MemoryStoryStore({ now: () => T0 + 60_000 });
    const resolver = new StoryResolver(store);
    const a = toArticle(pair.a, `id:${pair.id}-a`);
    const b = toArticle(pair.b, `id:${pair.id}-b`);
    const first = await resolver.assign([a], { now: T0 });
    const second = await resolver.assign([b], { now: T0 + 60_000 });
    const decided = first.get(a.key)?.storyId === second.get(b.key)?.storyId;
    count(all, pair.same, decided);
    count(pair.split === 'tune' ? tune : holdout, pair.same, decided);
    for (const group of [pair.language, pair.kind]) {
      const confusion = groups.get(group) ?? emptyConfusion();
      groups.set(group, confusion);
      count(confusion, pair.same, decided);
    }
    if (decided !== pair.same) {
      const score = similarity(fingerprint(a.title, a.summary).signature, fingerprint(b.title, b.summary).signature);
      mistakes.push({ id: pair.id, kind: pair.kind, similarity: score });
    }
  }
  return { all, tune, holdout, byGroup: [...groups].map(([group, confusion]) => ({ group, confusion })), mistakes };
}

function sweep(pairs: readonly StoryPair[]) {
  const scored = pairs.map((pair) => {
    const a = fingerprint(pair.a.title, pair.a.summary);
    const b = fingerprint(pair.b.title, pair.b.summary);
    const bands = new Set(a.bands);
    // As the resolver decides: MIN_SHARED_BANDS bands in common, then the marks, then the threshold.
    const candidate = b.bands.filter((band) => bands.has(band)).length >= MIN_SHARED_BANDS && !disagree(b, a);
    return { pair, score: candidate ? similarity(a.signature, b.signature) : 0 };
  });
  const thresholds = [0.3, 0.35, 0.4, 0.45, 0.5, 0.55, 0.6, 0.65, 0.7];
  return thresholds.map((threshold) => {
    const tune = emptyConfusion();
    const holdout = emptyConfusion();
    for (const { pair, score } of scored) {
      count(pair.split === 'tune' ? tune : holdout, pair.same, score > 0 && score >= threshold);
    }
    return { threshold, tune, holdout };
  });
}

/**
 * A stream of articles where `copyShare` of them are reworded copies of a recent one. The copies
 * are built from delivered articles, so the whole stream goes through {@link delivered} again: the
 * resolver gets every article as the provider client hands it over.
 */
function articleStream(articles: number, copyShare: number, seed: number): Article[] {
  const originals = syntheticArticles(articles, seed);
  const next = mulberry32(seed);
  const stream = originals.map((article, index) => {
    if (index < 10 || next() >= copyShare) return article;
    const source = originals[index - 1 - Math.floor(next() * Math.min(index - 1, 500))] as Article;
    return {
      ...article,
      title: `UPDATE 1-${source.title}`,
      summary: source.summary.slice(0, Math.max(40, Math.floor(source.summary.length * 0.7))),
    };
  });
  return delivered(stream);
}

/**
 * CPU time of this process (user + system), µs: on a shared two-core machine wall time measures
 * the neighbours as much as the code.
 */
function cpuMicros(): number {
  const { user, system } = process.cpuUsage();
  return user + system;
}

/**
 * The memory store, counting the CPU time its calls take: in production they are DynamoDB
 * requests, not in-process work. The store keeps its 2.5 million band entries at 100,000
 * articles in typed arrays, so its data adds little to the collections that run while the
 * resolver does (test/support/memory-story-store.ts).
 */
class TimedStore extends MemoryStoryStore {
  writeMicros = 0;
  readMicros = 0;
  storiesRead = 0;

  override async write(changes: Parameters<MemoryStoryStore['write']>[0]): Promise<void> {
    const started = cpuMicros();
    await super.write(changes);
    this.writeMicros += cpuMicros() - started;
  }

  override async readBands(bandKeys: readonly string[]) {
    const started = cpuMicros();
    const found = await super.readBands(bandKeys);
    this.readMicros += cpuMicros() - started;
    return found;
  }

  override async readStories(storyIds: readonly string[]) {
    this.storiesRead += storyIds.length;
    const started = cpuMicros();
    const found = await super.readStories(storyIds);
    this.readMicros += cpuMicros() - started;
    return found;
  }

  override async readFilings(articleKeys: readonly string[]) {
    const started = cpuMicros();
    const found = await super.readFilings(articleKeys);
    this.readMicros += cpuMicros() - started;
    return found;
  }
}

async function measureCost(articles: number, repetitions: number, batch: number) {
  const copyShare = 0.3;
  const stream = articleStream(articles, copyShare, 20_261_123);
  const microsPerArticle: number[] = [];
  const withReadsMicros: number[] = [];
  const withWritesMicros: number[] = [];
  const fingerprintMicros: number[] = [];
  let stories = 0;
  let storiesRead = 0;
  let lastStore: MemoryStoryStore | undefined;
  // A warm-up first, as bench/matching.ts warms its matchers: without it the first repetition
  // also measured the resolver's compilation (it ran about 3 µs per article slower than the rest).
  await warmUp(stream.slice(0, Math.min(stream.length, WARM_UP_ARTICLES)), batch);
  for (let repetition = 0; repetition < repetitions; repetition++) {
    let started = cpuMicros();
    for (const article of stream) fingerprint(article.title, article.summary);
    fingerprintMicros.push((cpuMicros() - started) / stream.length);
    // The whole stream inside one window: every story stays a candidate, the worst case for lookup.
    const now = T0;
    const store = new TimedStore({ now: () => now, windowMs: STORY_WINDOW_MS });
    const resolver = new StoryResolver(store);
    started = cpuMicros();
    for (let from = 0; from < stream.length; from += batch) {
      await resolver.assign(stream.slice(from, from + batch), { now });
    }
    const total = cpuMicros() - started;
    withWritesMicros.push(total / stream.length);
    withReadsMicros.push((total - store.writeMicros) / stream.length);
    microsPerArticle.push((total - store.writeMicros - store.readMicros) / stream.length);
    stories = store.counts().stories;
    storiesRead = store.storiesRead;
    lastStore = store;
  }
  return {
    copyShare,
    microsPerArticle,
    withReadsMicros,
    withWritesMicros,
    fingerprintMicros,
    stories,
    storiesReadPerArticle: storiesRead / stream.length,
    store: lastStore as MemoryStoryStore,
  };
}

/** Articles the warm-up assigns (not measured). */
const WARM_UP_ARTICLES = 20_000;

/** Runs the fingerprint and the resolver over `stream` once, unmeasured, with a store of its own. */
async function warmUp(stream: readonly Article[], batch: number): Promise<void> {
  for (const article of stream) fingerprint(article.title, article.summary);
  const resolver = new StoryResolver(new MemoryStoryStore({ now: () => T0, windowMs: STORY_WINDOW_MS }));
  for (let from = 0; from < stream.length; from += batch) {
    await resolver.assign(stream.slice(from, from + batch), { now: T0 });
  }
}

/**
 * The index's storage as the state-table layout stores it: per story one item (signature as 512
 * bytes of binary, marks, terms, outlets, counts and the token sets that keep them idempotent),
 * per band key one item listing story ids, per filing one item.
 */
function measureStorage(store: MemoryStoryStore, articles: number) {
  const contents = store.contents();
  const { stories, bands, filings } = contents;
  // The DynamoDB store's own item layout (functions/aws/dynamo-story-index.ts), plus what
  // DynamoDB bills per item.
  const bytes = measureStoryIndex(contents);
  const storyBytes = bytes.story + stories.length * DYNAMO_ITEM_OVERHEAD_BYTES;
  const bandBytes = bytes.band + bands.size * DYNAMO_ITEM_OVERHEAD_BYTES;
  const filingBytes = bytes.filing + filings.size * DYNAMO_ITEM_OVERHEAD_BYTES;
  return {
    storyItemBytes: storyBytes / Math.max(1, stories.length),
    bandItemBytes: bandBytes / Math.max(1, bands.size),
    filingItemBytes: filingBytes / Math.max(1, filings.size),
    bytesPerArticle: (storyBytes + bandBytes + filingBytes) / articles,
    itemsPerArticle: (stories.length + bands.size + filings.size) / articles,
  };
}

/** Articles the request-unit count files (the adapter's own code, zod parsing included, is slower than the memory store). */
const REQUEST_UNIT_ARTICLES = 20_000;

/**
 * The real DynamoDB adapter over a document client that keeps the items in a map and counts what
 * DynamoDB would bill for each request (the adapter uses only BatchGetItem and BatchWriteItem).
 * Written here because no emulator counts capacity units: moto answers ConsumedCapacity with
 * fixed figures, not from item sizes.
 */
export async function measureRequestUnits(
  stream: readonly Article[],
  batch: number,
): Promise<StoryBenchResults['requestUnits']> {
  const tableName = 'state';
  const items = new Map<string, Record<string, unknown>>();
  const units = { read: 0, write: 0, requests: 0 };
  const keyOf = (key: Record<string, unknown>) => `${String(key.pk)}\u0000${String(key.sk)}`;
  const bytes = (item: Record<string, unknown>) => measureItem(item).bytes;
  const documents = {
    async send(command: unknown): Promise<unknown> {
      units.requests += 1;
      if (command instanceof BatchWriteCommand) {
        for (const request of command.input.RequestItems?.[tableName] ?? []) {
          const item = request.PutRequest?.Item;
          if (item === undefined) throw new Error('the story index only puts items');
          const old = items.get(keyOf(item));
          units.write += Math.ceil(Math.max(bytes(item), old === undefined ? 0 : bytes(old)) / 1024);
          items.set(keyOf(item), structuredClone(item));
        }
        return { UnprocessedItems: {} };
      }
      if (command instanceof BatchGetCommand) {
        const found: Record<string, unknown>[] = [];
        for (const key of command.input.RequestItems?.[tableName]?.Keys ?? []) {
          const item = items.get(keyOf(key));
          units.read += item === undefined ? 1 : Math.ceil(bytes(item) / 4096);
          if (item !== undefined) found.push(structuredClone(item));
        }
        return { Responses: { [tableName]: found }, UnprocessedKeys: {} };
      }
      throw new Error(`the story index sent ${(command as object).constructor.name}, which this count does not price`);
    },
  } as unknown as DynamoDBDocumentClient;
  const store = new DynamoStoryStore({ documents, tableName, now: () => T0, windowMs: STORY_WINDOW_MS });
  const resolver = new StoryResolver(store);
  let started = 0;
  for (let from = 0; from < stream.length; from += batch) {
    const assigned = await resolver.assign(stream.slice(from, from + batch), { now: T0 });
    for (const assignment of assigned.values()) if (assignment.leadArticleKey === assignment.articleKey) started += 1;
  }
  return {
    articles: stream.length,
    readUnitsPerArticle: units.read / stream.length,
    writeUnitsPerArticle: units.write / stream.length,
    requestsPerArticle: units.requests / stream.length,
    newStoryShare: started / stream.length,
  };
}

/** Item sizes are a few hundred bytes: whole bytes, not KiB (which would round them to 0). */
const formatByteCount = (bytes: number) => `${formatNumber(Math.round(bytes))} B`;

/** Runs the whole story benchmark. */
export async function runStoryBench(options: {
  readonly articles: number;
  readonly repetitions: number;
  readonly batch?: number;
}): Promise<StoryBenchResults> {
  const pairs = loadPairs();
  const evaluation = await evaluate(pairs);
  const batch = options.batch ?? 100;
  const cost = await measureCost(options.articles, options.repetitions, batch);
  return {
    pairs: pairs.length,
    ...evaluation,
    sweep: sweep(pairs),
    cost: {
      articles: options.articles,
      copyShare: cost.copyShare,
      batch,
      microsPerArticle: cost.microsPerArticle,
      withReadsMicros: cost.withReadsMicros,
      withWritesMicros: cost.withWritesMicros,
      fingerprintMicros: cost.fingerprintMicros,
      stories: cost.stories,
      storiesReadPerArticle: cost.storiesReadPerArticle,
    },
    requestUnits: await measureRequestUnits(
      articleStream(options.articles, 0.3, 20_261_123).slice(0, REQUEST_UNIT_ARTICLES),
      batch,
    ),
    storage: measureStorage(cost.store, options.articles),
  };
}

const PRECISION_TARGET = 0.98;
const RECALL_TARGET = 0.95;
const MICROS_TARGET = 20;
const TARGET_ARTICLES = 100_000;

const pr = (c: Confusion) => `precision ${formatNumber(precisionOf(c), 3)}, recall ${formatNumber(recallOf(c), 3)}`;

/**
 * Issue 33: the story resolver against matching per article, both measured in one run (measured
 * 1.72× with 19.5 µs against 11.3 µs): both read every article's text once; the resolver also
 * normalizes it for its fingerprint and hashes shingles, which is what limits the ratio.
 */
export const STORY_MATCHING_RATIO = 2;

/**
 * The targets rows. `matchingMicrosPerArticle`: the matching time per article of the same run
 * (100,000 × 20,000), when it was measured.
 */
export function storyTargets(results: StoryBenchResults, matchingMicrosPerArticle?: number): TargetCheck[] {
  const micros = median(results.cost.microsPerArticle);
  const atTarget = results.cost.articles >= TARGET_ARTICLES;
  const ratio =
    matchingMicrosPerArticle === undefined
      ? 'matching not measured in this run'
      : `${formatNumber(micros / matchingMicrosPerArticle, 2)}× matching's ${formatNumber(matchingMicrosPerArticle, 1)} µs of CPU per article`;
  const missedWhy = (what: string) =>
    `${what}: ${results.mistakes
      .slice(0, 6)
      .map((m) => `${m.id} (${m.kind}, similarity ${formatNumber(m.similarity, 2)})`)
      .join(', ')}`;
  const precisionMet = precisionOf(results.all) >= PRECISION_TARGET && precisionOf(results.holdout) >= PRECISION_TARGET;
  const recallMet = recallOf(results.all) >= RECALL_TARGET && recallOf(results.holdout) >= RECALL_TARGET;
  return [
    {
      target: 'Same-story precision ≥ 0.98 on bench/story-pairs.json (issue 13; all and held-out)',
      measured: `${formatNumber(precisionOf(results.all), 3)} all ${results.pairs} pairs, ${formatNumber(precisionOf(results.holdout), 3)} held-out`,
      met: precisionMet,
      ...(precisionMet ? {} : { note: missedWhy('wrongly joined or missed pairs') }),
    },
    {
      target: 'Same-story recall ≥ 0.95 on bench/story-pairs.json (issue 13; all and held-out)',
      measured: `${formatNumber(recallOf(results.all), 3)} all, ${formatNumber(recallOf(results.holdout), 3)} held-out`,
      met: recallMet,
      ...(recallMet ? {} : { note: missedWhy('wrongly joined or missed pairs') }),
    },
    {
      target: `Story fingerprint + lookup ≤ ${STORY_MATCHING_RATIO}× matching's CPU time per article at 100,000 articles (issue 13; the reference: matching 100,000 × 20,000 in the same run, the median CPU time of its passes; store calls excluded)`,
      measured: `${ratio}; for information: ${formatNumber(micros, 1)} µs median of ${results.cost.microsPerArticle.length} at ${formatNumber(results.cost.articles)} articles (issue 13 asked ≤ ${MICROS_TARGET} µs)`,
      met:
        atTarget && matchingMicrosPerArticle !== undefined
          ? micros / matchingMicrosPerArticle <= STORY_MATCHING_RATIO
          : undefined,
      ...(atTarget
        ? matchingMicrosPerArticle === undefined || micros / matchingMicrosPerArticle <= STORY_MATCHING_RATIO
          ? {}
          : {
              note: `why: of ${formatNumber(micros, 1)} µs, the fingerprint alone takes ${formatNumber(median(results.cost.fingerprintMicros), 1)} µs (NFKC normalization, wire-tag and mark regexes, shingle hashing, the signature, 32 band-key strings); the rest is band and candidate handling (${formatNumber(results.cost.storiesReadPerArticle, 1)} stories read and compared per article: common words make bands collide in this corpus), new stories, filings, and garbage collection of what all of it allocates (the store's own calls, ${formatNumber(median(results.cost.withReadsMicros) - micros, 1)} µs of reads and ${formatNumber(median(results.cost.withWritesMicros) - median(results.cost.withReadsMicros), 1)} µs of writes per article, are excluded: DynamoDB does them in production)`,
            }
        : { note: 'quick runs use fewer articles; run the full benchmark for this target' }),
    },
  ];
}

/** The section: evaluation, threshold sweep, cost and storage. */
export function storySection(results: StoryBenchResults, title: string): Section {
  const row = (name: string, c: Confusion) => [
    name,
    formatNumber(c.truePositives + c.falseNegatives),
    formatNumber(c.trueNegatives + c.falsePositives),
    formatNumber(precisionOf(c), 3),
    formatNumber(recallOf(c), 3),
    formatNumber(c.falsePositives),
    formatNumber(c.falseNegatives),
  ];
  const { cost, storage } = results;
  return {
    title,
    intro: [
      `Cost: CPU time (user + system) of this process per article through StoryResolver.assign in batches of ${cost.batch}, the articles (${formatShare(cost.copyShare)} of them reworded copies of a recent one) read back through the provider client's mapping from the simulator's JSON as production reads them, every story inside one window (each stays a candidate: the worst case for lookup). "Fingerprint + lookup" is everything the resolver does in-process: fingerprints, band and candidate handling, similarity and marks, starting stories (story id, band entries), filings, its cache, and the garbage collection that happens while it runs. It excludes the time inside the store's calls (readFilings, readBands, readStories, write), which are DynamoDB requests in production and map operations on the in-memory stand-in here; the next two rows add them back. The store lists the newest ${maxBandStories} stories of a band key, as the DynamoDB band items keep them. An unmeasured warm-up of ${formatNumber(WARM_UP_ARTICLES)} articles (fingerprints and assignments, with a store of its own) comes first, as the matching bench warms its matchers.`,
      `Each of the ${results.pairs} labelled pairs of bench/story-pairs.json (generated by bench/story-pairs.ts from the hand-written seeds of bench/story-seeds.ts; Korean, English, Japanese; translations excluded) goes through a fresh StoryResolver over the in-memory store: the first article is filed, the second assigned a minute later, so band lookup and confirmation both count. Pairs of even topics are the tuning half, odd topics the held-out half; the threshold (${STORY_SIMILARITY}) was chosen on the tuning half (the sweep below).`,
    ],
    tables: [
      {
        title: 'Same story: precision and recall',
        header: ['pairs', 'same', 'different', 'precision', 'recall', 'wrongly joined', 'missed'],
        rows: [
          row('all', results.all),
          row('tuning half', results.tune),
          row('held-out half', results.holdout),
          ...results.byGroup.map(({ group, confusion }) => row(group, confusion)),
        ],
      },
      {
        title: 'Threshold sweep (band candidates only; the resolver uses the threshold marked *)',
        header: ['threshold', 'tuning', 'held-out'],
        rows: results.sweep.map((s) => [
          `${formatNumber(s.threshold, 2)}${s.threshold === STORY_SIMILARITY ? ' *' : ''}`,
          pr(s.tune),
          pr(s.holdout),
        ]),
      },
      {
        title: `CPU time per article at ${formatNumber(cost.articles)} articles (${formatShare(cost.copyShare)} reworded copies, batches of ${cost.batch}, one window)`,
        header: ['step', 'median', 'passes'],
        rows: [
          [
            "fingerprint + lookup (the target): the resolver's in-process work, every store call excluded",
            `${formatNumber(median(cost.microsPerArticle), 1)} µs`,
            cost.microsPerArticle.map((m) => formatNumber(m, 1)).join(', '),
          ],
          [
            'the same with the memory store reads (DynamoDB BatchGetItem in production)',
            `${formatNumber(median(cost.withReadsMicros), 1)} µs`,
            cost.withReadsMicros.map((m) => formatNumber(m, 1)).join(', '),
          ],
          [
            'the same with the memory store writes as well',
            `${formatNumber(median(cost.withWritesMicros), 1)} µs`,
            cost.withWritesMicros.map((m) => formatNumber(m, 1)).join(', '),
          ],
          [
            'fingerprint alone',
            `${formatNumber(median(cost.fingerprintMicros), 1)} µs`,
            cost.fingerprintMicros.map((m) => formatNumber(m, 1)).join(', '),
          ],
        ],
      },
      {
        title: `DynamoDB request units per article filed (the DynamoDB adapter over a counting document client; the first ${formatNumber(results.requestUnits.articles)} articles of the same stream, batches of ${formatNumber(cost.batch)}, one window)`,
        header: ['read units', 'write units', 'requests', 'articles that started a story'],
        rows: [
          [
            formatNumber(results.requestUnits.readUnitsPerArticle, 1),
            formatNumber(results.requestUnits.writeUnitsPerArticle, 1),
            formatNumber(results.requestUnits.requestsPerArticle, 2),
            formatShare(results.requestUnits.newStoryShare),
          ],
        ],
      },
      {
        title: 'Index storage (state-table items as measureItem counts them, plus 100 bytes per item)',
        header: ['item', 'bytes'],
        rows: [
          ['story (signature 512 B binary, lead, outlets, counts)', formatByteCount(storage.storyItemBytes)],
          ['band key (story ids)', formatByteCount(storage.bandItemBytes)],
          ['filing (article key → story id)', formatByteCount(storage.filingItemBytes)],
          [`per article (${formatNumber(storage.itemsPerArticle, 2)} items)`, formatByteCount(storage.bytesPerArticle)],
        ],
      },
    ],
    findings: [
      `The index costs ${formatNumber(storage.itemsPerArticle, 1)} items per article, nearly all of them band entries (${BANDS} per story): each new story is ${BANDS + 1} item writes, which the DynamoDB adapter pays in write units as well as storage.`,
      `${cost.stories} stories for ${formatNumber(cost.articles)} articles in the cost run; the resolver read ${formatNumber(cost.storiesReadPerArticle, 1)} stories per article (band candidates), each one DynamoDB item read in production.`,
      ...(results.mistakes.length === 0
        ? ['No pair was decided wrongly.']
        : [
            `Decided wrongly: ${results.mistakes.map((m) => `${m.id} (${m.kind}, similarity ${formatNumber(m.similarity, 2)})`).join(', ')}.`,
          ]),
    ],
  };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { renderTextTable } = await import('./report.ts');
  const quick = process.argv.includes('--quick');
  const results = await runStoryBench({ articles: quick ? 10_000 : 100_000, repetitions: quick ? 1 : 5 });
  const section = storySection(results, 'Stories');
  for (const paragraph of section.intro ?? []) process.stdout.write(`${paragraph}\n\n`);
  for (const table of section.tables) process.stdout.write(`${renderTextTable(table)}\n\n`);
  for (const finding of section.findings ?? []) process.stdout.write(`* ${finding}\n`);
  const { targetTable } = await import('./report.ts');
  process.stdout.write(`\n${renderTextTable(targetTable(storyTargets(results)))}\n`);
}
