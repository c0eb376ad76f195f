/**
 * One story, one alert, and update notices, in the delivery pipeline (issue 13): copies of a story
 * an audience already has are recorded as collapsed, not sent; the story marker is written before
 * the lead goes out; requests stay one `assign` and one ledger read per batch; an article that
 * comes back changed gets one update notice under `updates: 'notify'` and none under `ignore`.
 *
 * The story index here is a small fake with fixed stories (which article belongs to which story
 * is the resolver's business, tested in story*.test.ts); the pipeline's decisions only depend on
 * the assignments it returns.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DeliveryPipeline, emptyDeliveryCounts } from '#core/delivery-pipeline';
import { titleHash } from '#core/ledger-facts';
import { type Article, type Audience, type AudienceMatch, AudienceSchema } from '#core/model';
import {
  type DeliveryKey,
  type DeliveryRecord,
  deliveryId,
  type OutboundMessage,
  type StoryAssignment,
  type StoryIndex,
  type StoryRecord,
  storyMarkerKey,
} from '#core/ports';
import { article, MemoryNotifier, MemoryStateStore, matchOf, memoryLog } from '#test/fake-ports';
import { MemoryDispatchStore, MemoryWorkQueue } from '#test/memory-dispatch';

/** 2026-11-22 12:00 UTC: outside any quiet hours of these audiences. */
const now = Date.UTC(2026, 10, 22, 12, 0);

const audienceOf = (audienceId: string, overrides: Record<string, unknown> = {}): Audience =>
  AudienceSchema.parse({ audienceId, topicArn: `arn:aws:sns:us-east-1:123456789012:${audienceId}`, ...overrides });

/** Stories by article id: `story(id)` is the story, and its first article (by key) the lead. */
class FixedStories implements StoryIndex {
  readonly calls: { keys: string[]; dryRun: boolean }[] = [];
  constructor(readonly storyOf: (articleKey: string) => string) {}

  async assign(
    articles: readonly Article[],
    options: { now: number; dryRun?: boolean | undefined },
  ): Promise<Map<string, StoryAssignment>> {
    this.calls.push({ keys: articles.map((item) => item.key), dryRun: options.dryRun === true });
    return new Map(
      articles.map((item) => [
        item.key,
        { articleKey: item.key, storyId: this.storyOf(item.key), leadArticleKey: item.key },
      ]),
    );
  }

  async readStories(): Promise<Map<string, StoryRecord>> {
    return new Map();
  }
}

/** Articles `s<n>-<copy>` belong to story `story-<n>`; anything else is its own story. */
const byPrefix = (articleKey: string): string => {
  const found = /^id:s(\d+)-/.exec(articleKey);
  return found ? `story-${found[1]}` : `own-${articleKey}`;
};

/** A MemoryStateStore that counts ledger reads and writes, and which keys each read asked for. */
class CountingState extends MemoryStateStore {
  readonly reads: { kind: 'find' | 'read'; keys: DeliveryKey[] }[] = [];
  readonly writes: DeliveryRecord[][] = [];
  override async findDelivered(keys: readonly DeliveryKey[]): Promise<Set<string>> {
    this.reads.push({ kind: 'find', keys: [...keys] });
    return super.findDelivered(keys);
  }
  override async readDeliveries(keys: readonly DeliveryKey[]): Promise<Map<string, DeliveryRecord>> {
    this.reads.push({ kind: 'read', keys: [...keys] });
    return super.readDeliveries(keys);
  }
  override async recordDelivered(records: readonly DeliveryRecord[]): Promise<void> {
    this.writes.push([...records]);
    return super.recordDelivered(records);
  }
}

function pipelineFor(
  audiences: readonly Audience[],
  options: {
    /** Sharded publishing: what would be published is queued here for the publishers. */
    queue?: MemoryWorkQueue;
    state?: CountingState;
    notifier?: MemoryNotifier;
    stories?: StoryIndex | null;
    dryRun?: boolean;
    onWouldPublish?: (message: OutboundMessage) => void;
    onWouldCollapse?: (audienceId: string) => void;
    /** The clock (default: outside any quiet hours). */
    now?: number;
  } = {},
) {
  const state = options.state ?? new CountingState();
  const notifier = options.notifier ?? new MemoryNotifier();
  const stories = options.stories === null ? undefined : (options.stories ?? new FixedStories(byPrefix));
  const counts = emptyDeliveryCounts();
  const pipeline = new DeliveryPipeline({
    state,
    notifier,
    log: memoryLog(),
    stories,
    now: () => options.now ?? now,
    audiences: new Map(audiences.map((audience) => [audience.audienceId, audience])),
    ledgerFlushDelayMs: 0,
    publishSignal: new AbortController().signal,
    lateBefore: 0,
    counts,
    dryRun: options.dryRun,
    onWouldPublish: options.onWouldPublish,
    onWouldCollapse: options.onWouldCollapse,
    applyDeliveryPreferences: true,
    queue: options.queue === undefined ? undefined : { queue: options.queue, dispatchId: 'dispatch-1' },
  });
  return { pipeline, state, notifier, counts, stories };
}

/**
 * A run that dies at its first publish after reading `matches`: its story markers are written,
 * its leads never reached SNS.
 */
async function crashAtFirstPublish(
  audiences: readonly Audience[],
  state: CountingState,
  matches: readonly AudienceMatch[],
): Promise<void> {
  const crashing = new MemoryNotifier();
  crashing.publish = async () => {
    throw new Error('simulated crash while publishing');
  };
  const { pipeline } = pipelineFor(audiences, { state, notifier: crashing });
  await expect(
    (async () => {
      await pipeline.add(matches);
      await pipeline.flush();
    })(),
  ).rejects.toThrow(/simulated crash/);
}

/** Copies of story `n` from different outlets. */
const copies = (n: number, count: number, overrides: Partial<Article> = {}): Article[] =>
  Array.from({ length: count }, (_, copy) =>
    article(`s${n}-${copy}`, { media: `M00${copy}`, mediaName: `Outlet ${copy}`, ...overrides }),
  );

const matchesFor = (audienceId: string, articles: readonly Article[]): AudienceMatch[] =>
  articles.map((item) => matchOf(audienceId, item));

const publishedKeys = (notifier: MemoryNotifier) => notifier.published.map((message) => deliveryId(message.key));

/**
 * Sharded, collapsing: x leads and y collapses into it, and x's work item dies (nothing is
 * published, and x has no ledger entry). Story 1's copies x, y and a third one, m.
 */
async function deadLetteredLead(): Promise<{ state: CountingState; x: Article; y: Article; m: Article }> {
  const state = new CountingState();
  const [x, y, m] = copies(1, 3);
  if (x === undefined || y === undefined || m === undefined) throw new Error('three copies');
  const queue = new MemoryWorkQueue(new MemoryDispatchStore(), () => now);
  const first = pipelineFor([audienceOf('desk', { collapse: 'story' })], { state, queue });
  await first.pipeline.add(matchesFor('desk', [x, y]));
  await first.pipeline.flush();
  queue.take();
  expect(state.ledger.get('desk|id:s1-1')).toMatchObject({ collapsedLead: 'id:s1-0' });
  expect(state.ledger.get('desk|id:s1-0')).toBeUndefined();
  return { state, x, y, m };
}

/** SNS, refusing `refused` for good (as it refuses an invalid parameter) and taking the rest. */
const refusingForGood = (refused: Article): MemoryNotifier =>
  new MemoryNotifier((message) =>
    message.key.articleKey === refused.key
      ? { code: 'InvalidParameter', reason: 'refused', permanent: true }
      : undefined,
  );

/** An article whose link cannot be rendered into an alert. */
const unrenderable = (item: Article): Article => ({ ...item, url: 'http://169.254.169.254/latest/' });

describe('collapsing copies of a story', () => {
  it('sends one alert per story to a collapsing audience and every copy to a `none` audience', async () => {
    const desk = audienceOf('desk', { collapse: 'story' });
    const all = audienceOf('all', { collapse: 'none' });
    const { pipeline, state, notifier, counts } = pipelineFor([desk, all]);
    const story = copies(1, 3);
    await pipeline.add([...matchesFor('desk', story), ...matchesFor('all', story)]);
    await pipeline.flush();

    expect(publishedKeys(notifier).sort()).toEqual(
      ['desk|id:s1-0', 'all|id:s1-0', 'all|id:s1-1', 'all|id:s1-2'].sort(),
    );
    expect(counts).toMatchObject({ notificationsMatched: 6, notificationsPublished: 4, notificationsCollapsed: 2 });
    expect(counts.audiences.desk).toMatchObject({ matched: 3, published: 1, collapsed: 2 });
    expect(counts.audiences.all).toMatchObject({ matched: 3, published: 3, collapsed: 0 });
    // Every copy is handled in the ledger: the lead delivered, the others collapsed with the story.
    for (const key of ['id:s1-1', 'id:s1-2']) {
      expect(state.ledger.get(`desk|${key}`)).toMatchObject({ collapsedInto: 'story-1', storyId: 'story-1' });
    }
    const lead = state.ledger.get('desk|id:s1-0');
    expect(lead?.collapsedInto).toBeUndefined();
    expect(lead).toMatchObject({ storyId: 'story-1', status: 'PUBLISHED', titleHash: titleHash(story[0]!.title) });
    expect(state.ledger.get(deliveryId(storyMarkerKey('desk', 'story-1')))).toMatchObject({
      leadArticleKey: 'id:s1-0',
    });
    // The `none` audience's alerts carry facts too (a later switch to `notify` can see updates).
    expect(state.ledger.get('all|id:s1-1')).toMatchObject({ status: 'PUBLISHED' });
    expect(state.ledger.get('all|id:s1-1')?.storyId).toBeUndefined();
    // The lead names its story, so a digest can say "also in N outlets".
    expect(notifier.published.find((message) => message.key.audienceId === 'desk')?.facts?.storyId).toBe('story-1');
  });

  it('writes the story marker before the lead is published', async () => {
    const desk = audienceOf('desk', { collapse: 'story' });
    const state = new CountingState();
    const seenAtPublish: (DeliveryRecord | undefined)[] = [];
    const notifier = new MemoryNotifier((message) => {
      seenAtPublish.push(state.ledger.get(deliveryId(storyMarkerKey(message.key.audienceId, 'story-1'))));
      return undefined;
    });
    const { pipeline } = pipelineFor([desk], { state, notifier });
    await pipeline.add(matchesFor('desk', copies(1, 2)));
    await pipeline.flush();
    expect(seenAtPublish).toHaveLength(1);
    expect(seenAtPublish[0]).toMatchObject({ leadArticleKey: 'id:s1-0' });
  });

  it('writes the story marker before the lead is held for a digest', async () => {
    const desk = audienceOf('desk', { collapse: 'story', deliveryMode: 'digest', digestTimes: ['08:00'] });
    const state = new CountingState();
    const markerAtHold: (DeliveryRecord | undefined)[] = [];
    const hold = state.holdNotifications.bind(state);
    state.holdNotifications = async (records) => {
      markerAtHold.push(state.ledger.get(deliveryId(storyMarkerKey('desk', 'story-1'))));
      await hold(records);
    };
    const { pipeline, notifier, counts } = pipelineFor([desk], { state });
    await pipeline.add(matchesFor('desk', copies(1, 3)));
    await pipeline.flush();
    expect(notifier.published).toEqual([]);
    expect(counts).toMatchObject({ notificationsHeld: 1, notificationsCollapsed: 2 });
    expect(markerAtHold).toEqual([expect.objectContaining({ leadArticleKey: 'id:s1-0' })]);
    expect(state.held.get('desk|id:s1-0')?.match.storyId).toBe('story-1');
  });

  it('collapses a copy that arrives in a later run into the lead an earlier run sent', async () => {
    const desk = audienceOf('desk', { collapse: 'story' });
    const state = new CountingState();
    const first = pipelineFor([desk], { state });
    await first.pipeline.add(matchesFor('desk', copies(1, 1)));
    await first.pipeline.flush();

    const second = pipelineFor([desk], { state });
    const [lead, late] = copies(1, 2);
    await second.pipeline.add(matchesFor('desk', [lead!, late!]));
    await second.pipeline.flush();
    expect(second.notifier.published).toEqual([]);
    expect(second.counts).toMatchObject({ notificationsAlreadyDelivered: 1, notificationsCollapsed: 1 });
    expect(state.ledger.get('desk|id:s1-1')).toMatchObject({ collapsedInto: 'story-1' });
  });

  it('after a crash between the marker and the lead, the next run sends the lead and collapses the rest', async () => {
    const desk = audienceOf('desk', { collapse: 'story' });
    const state = new CountingState();
    // Run 1 dies at its first publish: the marker is written, the lead never reached SNS.
    await crashAtFirstPublish([desk], state, matchesFor('desk', copies(1, 2)));
    expect(state.ledger.has('desk|id:s1-0')).toBe(false);

    const second = pipelineFor([desk], { state });
    await second.pipeline.add(matchesFor('desk', copies(1, 4)));
    await second.pipeline.flush();
    expect(publishedKeys(second.notifier)).toEqual(['desk|id:s1-0']);
    for (const copy of [1, 2, 3]) {
      expect(state.ledger.get(`desk|id:s1-${copy}`)).toMatchObject({ collapsedInto: 'story-1' });
    }
  });

  it('a story marker damaged by hand (no lead) collapses nothing: the copy read carries the story and the marker is written anew', async () => {
    const desk = audienceOf('desk', { collapse: 'story' });
    const state = new CountingState();
    state.ledger.set('desk|story:story-1', {
      audienceId: 'desk',
      articleKey: 'story:story-1',
      deliveredAt: 0,
      ruleIds: [],
    });
    const run = pipelineFor([desk], { state });
    await run.pipeline.add(matchesFor('desk', copies(1, 2)));
    await run.pipeline.flush();
    expect(publishedKeys(run.notifier)).toEqual(['desk|id:s1-0']);
    expect(state.ledger.get('desk|story:story-1')).toMatchObject({ leadArticleKey: 'id:s1-0' });
    expect(state.ledger.get('desk|id:s1-1')).toMatchObject({ collapsedInto: 'story-1' });
  });

  it('a lead that cannot be rendered is parked and the next copy carries the story', async () => {
    const desk = audienceOf('desk', { collapse: 'story' });
    const [bad, good] = copies(1, 2);
    const { pipeline, state, notifier, counts } = pipelineFor([desk]);
    await pipeline.add(matchesFor('desk', [{ ...bad!, url: 'http://169.254.169.254/latest/' }, good!]));
    await pipeline.flush();
    expect(counts).toMatchObject({ notificationsParked: 1, notificationsPublished: 1, notificationsCollapsed: 0 });
    expect(publishedKeys(notifier)).toEqual(['desk|id:s1-1']);
    expect(state.ledger.get(deliveryId(storyMarkerKey('desk', 'story-1')))?.leadArticleKey).toBe('id:s1-1');
  });

  it('a copy in a later run is not collapsed into a lead that never reached the audience (its publish failed, then it stopped matching): the copy carries the story', async () => {
    const desk = audienceOf('desk', { collapse: 'story' });
    const state = new CountingState();
    await crashAtFirstPublish([desk], state, matchesFor('desk', copies(1, 1)));
    expect(state.ledger.get(deliveryId(storyMarkerKey('desk', 'story-1')))?.leadArticleKey).toBe('id:s1-0');

    // The rule was edited meanwhile: the lead no longer matches, only a later copy does.
    const second = pipelineFor([desk], { state });
    await second.pipeline.add(matchesFor('desk', copies(1, 2).slice(1)));
    await second.pipeline.flush();
    expect(publishedKeys(second.notifier)).toEqual(['desk|id:s1-1']);
    expect(second.counts.notificationsCollapsed).toBe(0);
    expect(state.ledger.get(deliveryId(storyMarkerKey('desk', 'story-1')))?.leadArticleKey).toBe('id:s1-1');

    // A third copy collapses into the copy that went out.
    const third = pipelineFor([desk], { state });
    await third.pipeline.add(matchesFor('desk', copies(1, 3).slice(2)));
    await third.pipeline.flush();
    expect(third.notifier.published).toEqual([]);
    expect(state.ledger.get('desk|id:s1-2')).toMatchObject({ collapsedInto: 'story-1' });
  });

  it('a copy collapsed into a lead of the same run that SNS then failed for now is not recorded: it waits for the next run with its lead', async () => {
    const desk = audienceOf('desk', { collapse: 'story' });
    const state = new CountingState();
    const throttled = { code: 'Throttled', reason: 'slow down', permanent: false };
    const notifier = new MemoryNotifier((message) => (message.key.articleKey === 'id:s1-0' ? throttled : undefined));
    const first = pipelineFor([desk], { state, notifier });
    // The copy comes in the lead's batch and in a later batch of the same run.
    const [lead, copy, later] = copies(1, 3);
    await first.pipeline.add(matchesFor('desk', [lead!, copy!]));
    await first.pipeline.flush();
    await first.pipeline.add(matchesFor('desk', [later!]));
    await first.pipeline.flush();
    expect(state.ledger.has('desk|id:s1-1')).toBe(false);
    expect(first.counts).toMatchObject({ notificationsCollapsed: 0, notificationsFailed: 1, notificationsDeferred: 1 });
    // The watermark stays before the copies, and the later copy carried the story at once.
    expect(first.pipeline.unpublished).toBe(2);
    expect(publishedKeys(notifier)).toEqual(['desk|id:s1-2']);

    // The next run reads the copy again (the lead no longer matches): it is not lost.
    const second = pipelineFor([desk], { state });
    await second.pipeline.add(matchesFor('desk', [copy!, later!]));
    await second.pipeline.flush();
    expect(state.ledger.get('desk|id:s1-1')).toMatchObject({ collapsedInto: 'story-1' });
    expect(second.counts.notificationsAlreadyDelivered).toBe(1);
  });

  it('a lead SNS refuses for good is parked and a copy carries the story in the same run: nothing waits, also when every run reads the lead again (found by review)', async () => {
    const desk = audienceOf('desk', { collapse: 'story' });
    const state = new CountingState();
    const refused = { code: 'InvalidParameter', reason: 'message refused', permanent: true };
    const [lead, copy, later] = copies(1, 3);
    for (const run of [1, 2, 3]) {
      const notifier = new MemoryNotifier((message) => (message.key.articleKey === 'id:s1-0' ? refused : undefined));
      const { pipeline, counts } = pipelineFor([desk], { state, notifier });
      await pipeline.add(matchesFor('desk', [lead!, copy!, later!]));
      await pipeline.flush();
      expect(pipeline.unpublished, `run ${run}`).toBe(0);
      expect(publishedKeys(notifier), `run ${run}`).toEqual(run === 1 ? ['desk|id:s1-1'] : []);
      // Later runs collapse the parked lead into the copy that went out.
      expect(counts.notificationsParked, `run ${run}`).toBe(run === 1 ? 1 : 0);
      // Copies planned again are not counted twice: three matches each run.
      expect(counts.notificationsMatched, `run ${run}`).toBe(3);
    }
    expect(state.ledger.get(deliveryId(storyMarkerKey('desk', 'story-1')))?.leadArticleKey).toBe('id:s1-1');
    expect(state.ledger.get('desk|id:s1-2')).toMatchObject({ collapsedInto: 'story-1' });
    expect(state.ledger.get('desk|id:s1-0')).toMatchObject({ collapsedInto: 'story-1' });
  });

  it('a lead that failed for now and leads again later in the same run takes its copies with it (found by review)', async () => {
    const desk = audienceOf('desk', { collapse: 'story' });
    const state = new CountingState();
    let fail = true;
    const notifier = new MemoryNotifier(() =>
      fail ? { code: 'Throttled', reason: 'slow down', permanent: false } : undefined,
    );
    const { pipeline } = pipelineFor([desk], { state, notifier });
    const [lead, copy] = copies(1, 2);
    await pipeline.add(matchesFor('desk', [lead!]));
    await pipeline.flush();
    fail = false;
    await pipeline.add(matchesFor('desk', [lead!, copy!]));
    await pipeline.flush();
    expect(publishedKeys(notifier)).toEqual(['desk|id:s1-0']);
    expect(state.ledger.get('desk|id:s1-1')).toMatchObject({ collapsedInto: 'story-1' });
  });

  it('a lead a marker names that comes back unrenderable is parked, and a copy read with it carries the story', async () => {
    const desk = audienceOf('desk', { collapse: 'story' });
    const state = new CountingState();
    await crashAtFirstPublish([desk], state, matchesFor('desk', copies(1, 1)));

    const [lead, copy] = copies(1, 2);
    const second = pipelineFor([desk], { state });
    await second.pipeline.add(matchesFor('desk', [{ ...lead!, url: 'http://169.254.169.254/latest/' }, copy!]));
    await second.pipeline.flush();
    expect(second.counts).toMatchObject({ notificationsParked: 1, notificationsCollapsed: 0 });
    expect(publishedKeys(second.notifier)).toEqual(['desk|id:s1-1']);
    expect(state.ledger.get(deliveryId(storyMarkerKey('desk', 'story-1')))?.leadArticleKey).toBe('id:s1-1');
  });

  it.each(['dropped', 'parked'] as const)(
    'a held lead whose digest release %s it did not reach the audience: a later copy carries the story',
    async (outcome) => {
      const desk = audienceOf('desk', { collapse: 'story' });
      const state = new CountingState();
      state.ledger.set('desk|story:story-1', {
        ...storyMarkerKey('desk', 'story-1'),
        deliveredAt: 0,
        ruleIds: [],
        storyId: 'story-1',
        leadArticleKey: 'id:s1-0',
      });
      state.ledger.set('desk|id:s1-0', {
        audienceId: 'desk',
        articleKey: 'id:s1-0',
        deliveredAt: 0,
        ruleIds: [],
        heldFor: 'quiet-hours',
        storyId: 'story-1',
        releasedAt: 1,
        releaseOutcome: outcome,
      });
      const run = pipelineFor([desk], { state });
      await run.pipeline.add(matchesFor('desk', copies(1, 2).slice(1)));
      await run.pipeline.flush();
      expect(publishedKeys(run.notifier)).toEqual(['desk|id:s1-1']);
      // Two ledger reads: the batch's keys, then the lead the marker names.
      expect(state.reads.map((read) => read.keys.map(deliveryId))).toEqual([
        ['desk|id:s1-1', 'desk|story:story-1'],
        ['desk|id:s1-0'],
      ]);
    },
  );

  describe('an urgent copy of a story whose lead is held goes out now', () => {
    /** 23:00 UTC: inside the quiet hours of `quiet`. */
    const late = Date.UTC(2026, 10, 22, 23, 0);
    const quiet = audienceOf('desk', { collapse: 'story', quietHours: { start: '22:00', end: '07:00' } });
    const pipelineAt = (state: CountingState) => pipelineFor([quiet], { state, now: late });
    const [lead, copy, another] = copies(1, 3);

    it('when an earlier run held the lead for quiet hours', async () => {
      const state = new CountingState();
      const first = pipelineAt(state);
      await first.pipeline.add([matchOf('desk', lead!)]);
      await first.pipeline.flush();
      expect(first.counts.heldForQuietHours).toBe(1);

      const second = pipelineAt(state);
      await second.pipeline.add([matchOf('desk', copy!, true), matchOf('desk', another!)]);
      await second.pipeline.flush();
      expect(publishedKeys(second.notifier)).toEqual(['desk|id:s1-1']);
      // The urgent copy carries the story from now on: a later plain copy collapses into it.
      expect(state.ledger.get('desk|id:s1-2')).toMatchObject({ collapsedInto: 'story-1' });
      expect(state.ledger.get(deliveryId(storyMarkerKey('desk', 'story-1')))?.leadArticleKey).toBe('id:s1-1');
    });

    it('when the plain lead comes first in the same batch, or in an earlier batch of the same run', async () => {
      const state = new CountingState();
      const same = pipelineAt(state);
      await same.pipeline.add([matchOf('desk', lead!), matchOf('desk', copy!, true)]);
      await same.pipeline.flush();
      expect(publishedKeys(same.notifier)).toEqual(['desk|id:s1-1']);
      expect(same.counts).toMatchObject({ notificationsHeld: 0, notificationsCollapsed: 1 });

      const other = new CountingState();
      const batches = pipelineAt(other);
      await batches.pipeline.add([matchOf('desk', lead!)]);
      await batches.pipeline.flush();
      await batches.pipeline.add([matchOf('desk', copy!, true)]);
      await batches.pipeline.flush();
      expect(publishedKeys(batches.notifier)).toEqual(['desk|id:s1-1']);
    });

    it('when the lead an earlier run could not send is read again with it, and would now be held', async () => {
      const state = new CountingState();
      await crashAtFirstPublish([quiet], state, [matchOf('desk', lead!)]);

      const second = pipelineAt(state);
      await second.pipeline.add([matchOf('desk', lead!), matchOf('desk', copy!, true)]);
      await second.pipeline.flush();
      expect(publishedKeys(second.notifier)).toEqual(['desk|id:s1-1']);
      expect(second.counts).toMatchObject({ notificationsHeld: 0, notificationsCollapsed: 1 });
    });

    it('and a dry run decides the same as the run', async () => {
      const run = async (dryRun: boolean) => {
        const wouldPublish: string[] = [];
        const { pipeline, notifier, counts } = pipelineFor([quiet], {
          now: late,
          dryRun,
          onWouldPublish: (message) => wouldPublish.push(deliveryId(message.key)),
        });
        await pipeline.add([matchOf('desk', lead!)]);
        await pipeline.flush();
        await pipeline.add([matchOf('desk', copy!, true)]);
        await pipeline.flush();
        return {
          sent: dryRun ? wouldPublish : publishedKeys(notifier),
          collapsed: dryRun ? counts.notificationsWouldCollapse : counts.notificationsCollapsed,
        };
      };
      expect(await run(true)).toEqual(await run(false));
      expect(await run(false)).toEqual({ sent: ['desk|id:s1-1'], collapsed: 0 });
    });

    it('but not in digest mode, where urgent alerts wait for the digest too', async () => {
      const state = new CountingState();
      const digest = audienceOf('desk', { collapse: 'story', deliveryMode: 'digest', digestTimes: ['08:00'] });
      const run = pipelineFor([digest], { state });
      await run.pipeline.add([matchOf('desk', lead!), matchOf('desk', copy!, true)]);
      await run.pipeline.flush();
      expect(run.notifier.published).toEqual([]);
      expect(run.counts).toMatchObject({ notificationsHeld: 1, notificationsCollapsed: 1 });
    });
  });

  it('without a story index nothing collapses, and the ledger is read once, as a batch always reads it', async () => {
    const desk = audienceOf('desk', { collapse: 'story' });
    const { pipeline, state, notifier, counts } = pipelineFor([desk], { stories: null });
    await pipeline.add(matchesFor('desk', copies(1, 3)));
    await pipeline.flush();
    expect(notifier.published).toHaveLength(3);
    expect(counts.notificationsCollapsed).toBe(0);
    expect(state.reads.map((read) => read.kind)).toEqual(['read']);
    expect(state.writes.flat().some((record) => record.articleKey.startsWith('story:'))).toBe(false);
  });
});

describe('requests near their floor', () => {
  it('one assign and one ledger read per batch of 100; the marker of a story already led in this run is not read again', async () => {
    const desk = audienceOf('desk', { collapse: 'story' });
    const all = audienceOf('all', { collapse: 'none' });
    const stories = new FixedStories(byPrefix);
    const { pipeline, state, notifier } = pipelineFor([desk, all], { stories });
    // 150 matches: 75 articles (15 stories × 5 copies) for each audience; two lookup batches.
    const articles = Array.from({ length: 15 }, (_, n) => copies(n, 5)).flat();
    await pipeline.add(articles.flatMap((item) => [matchOf('desk', item), matchOf('all', item)]));
    await pipeline.flush();

    expect(stories.calls).toHaveLength(2);
    // Only articles a collapsing audience matched need a story.
    expect(stories.calls.flatMap((call) => call.keys).sort()).toEqual(articles.map((item) => item.key).sort());
    const ledgerReads = state.reads.filter((read) => read.keys.every((key) => !key.articleKey.startsWith('update:')));
    expect(ledgerReads).toHaveLength(2);
    // Every story's marker is read once, in the batch that first met it.
    const markerReads = ledgerReads.flatMap((read) => read.keys).filter((key) => key.articleKey.startsWith('story:'));
    expect(markerReads).toHaveLength(15);
    expect(notifier.published.filter((message) => message.key.audienceId === 'desk')).toHaveLength(15);
    expect(notifier.published.filter((message) => message.key.audienceId === 'all')).toHaveLength(75);
    // Markers: one write per batch that found new stories, awaited before publishing.
    const markerWrites = state.writes.filter((batch) => batch.some((record) => record.articleKey.startsWith('story:')));
    expect(markerWrites).toHaveLength(2);
  });
});

describe('dry runs (preview)', () => {
  it('decide the same way, count what would collapse, and write nothing', async () => {
    const desk = audienceOf('desk', { collapse: 'story' });
    const stories = new FixedStories(byPrefix);
    const wouldPublish: OutboundMessage[] = [];
    const { pipeline, state, notifier, counts } = pipelineFor([desk], {
      stories,
      dryRun: true,
      onWouldPublish: (message) => wouldPublish.push(message),
    });
    await pipeline.add(matchesFor('desk', [...copies(1, 3), ...copies(2, 2)]));
    await pipeline.flush();
    expect(stories.calls.every((call) => call.dryRun)).toBe(true);
    expect(counts).toMatchObject({
      notificationsWouldPublish: 2,
      notificationsWouldCollapse: 3,
      notificationsCollapsed: 0,
      notificationsPublished: 0,
    });
    expect(wouldPublish.map((message) => message.key.articleKey).sort()).toEqual(['id:s1-0', 'id:s2-0']);
    expect(notifier.published).toEqual([]);
    expect(state.ledger.size).toBe(0);
    expect(state.writes).toEqual([]);
  });

  it('name the audience of each copy that would collapse (replay --dry-run shows them per audience)', async () => {
    const desk = audienceOf('desk', { collapse: 'story' });
    const all = audienceOf('all', { collapse: 'story' });
    const every = audienceOf('every', { collapse: 'none' });
    const wouldCollapse: string[] = [];
    const { pipeline, counts } = pipelineFor([desk, all, every], {
      dryRun: true,
      onWouldCollapse: (audienceId) => wouldCollapse.push(audienceId),
    });
    await pipeline.add([
      ...matchesFor('desk', copies(1, 3)),
      ...matchesFor('all', [...copies(1, 3), ...copies(2, 4)]),
      ...matchesFor('every', copies(1, 3)),
    ]);
    await pipeline.flush();
    expect(counts.notificationsWouldCollapse).toBe(7);
    expect(wouldCollapse.sort()).toEqual([...Array(5).fill('all'), 'desk', 'desk']);
  });
});

describe('a copy recorded as collapsed, read again, is judged by the lead it went with', () => {
  const late = Date.UTC(2026, 10, 22, 23, 0); // inside the quiet hours below
  const morning = Date.UTC(2026, 10, 23, 8, 0); // after them
  const quiet = audienceOf('desk', { collapse: 'story', quietHours: { start: '22:00', end: '07:00' } });
  const lead = article('s1-0', { media: 'M000' });
  const urgent = article('s1-1', { media: 'M001' });
  const copy = article('s1-2', { media: 'M002' });
  const run = async (state: CountingState, at: number, matches: AudienceMatch[], notifier?: MemoryNotifier) => {
    const ran = pipelineFor([quiet], { state, now: at, ...(notifier === undefined ? {} : { notifier }) });
    await ran.pipeline.add(matches);
    await ran.pipeline.flush();
    return ran;
  };

  it('stays collapsed into its held lead when an urgent copy took the story over and never went out (found by review)', async () => {
    const state = new CountingState();
    const first = await run(state, late, [matchOf('desk', lead), matchOf('desk', copy)]);
    expect(first.counts).toMatchObject({ heldForQuietHours: 1, notificationsCollapsed: 1 });
    expect(state.ledger.get('desk|id:s1-2')).toMatchObject({ collapsedInto: 'story-1', collapsedLead: 'id:s1-0' });
    // The urgent copy carries the story from here (the marker names it), and SNS fails it for now.
    const failing = new MemoryNotifier(() => ({ code: 'Throttled', reason: 'slow down', permanent: false }));
    expect((await run(state, late, [matchOf('desk', urgent, true)], failing)).counts.notificationsFailed).toBe(1);
    expect(state.ledger.get(deliveryId(storyMarkerKey('desk', 'story-1')))?.leadArticleKey).toBe('id:s1-1');
    // The urgent copy no longer matches; the plain copy is read again. Its lead is still held and
    // goes out with the digest: sending the copy too would send the story twice.
    const third = await run(state, morning, [matchOf('desk', copy)]);
    expect(third.notifier.published).toEqual([]);
    expect(state.ledger.get('desk|id:s1-2')).toMatchObject({ collapsedLead: 'id:s1-0' });
  });

  /** The lead held and its copy collapsed into it, then the lead's entry as a digest release leaves it. */
  const releasedHeldLead = async (outcome: Partial<DeliveryRecord>): Promise<CountingState> => {
    const state = new CountingState();
    await run(state, late, [matchOf('desk', lead), matchOf('desk', copy)]);
    const leadEntry = state.ledger.get('desk|id:s1-0');
    if (leadEntry === undefined) throw new Error('the lead was not held');
    state.ledger.set('desk|id:s1-0', { ...leadEntry, releasedAt: morning, releaseCause: 'due', ...outcome });
    state.held.clear();
    return state;
  };

  it('is planned again when a digest release dropped its held lead, and carries the story (found by review)', async () => {
    // What a release writes for a held lead it could not put in a digest (an unpublishable link).
    const state = await releasedHeldLead({ releaseOutcome: 'dropped' });
    const later = await run(state, morning + 60_000, [matchOf('desk', copy)]);
    expect(later.notifier.published.map((message) => deliveryId(message.key))).toEqual(['desk|id:s1-2']);
  });

  it('stays collapsed when the digest carrying its held lead was parked: replay --parked still owes the story (found by review)', async () => {
    // What a release writes when SNS refused the digest for good: `replay --parked` sends it as it is.
    const state = await releasedHeldLead({ releasedIn: 'digest:desk:2026-11-23T07:00Z#1/1', releaseOutcome: 'parked' });
    const later = await run(state, morning + 60_000, [matchOf('desk', copy)]);
    expect(later.notifier.published).toEqual([]);
    expect(later.counts.notificationsParked).toBe(0);
  });

  it('a copy recorded before collapsedLead existed goes with the lead its marker named then, not one an urgent copy named later', async () => {
    const desk = audienceOf('desk', { collapse: 'story' });
    const legacy = (markerAt: number) => {
      const state = new CountingState();
      state.ledger.set(deliveryId(storyMarkerKey('desk', 'story-1')), {
        ...storyMarkerKey('desk', 'story-1'),
        deliveredAt: markerAt,
        ruleIds: [],
        storyId: 'story-1',
        leadArticleKey: 'id:s1-0',
      });
      state.ledger.set('desk|id:s1-2', {
        audienceId: 'desk',
        articleKey: 'id:s1-2',
        deliveredAt: now - 60_000,
        ruleIds: [],
        storyId: 'story-1',
        collapsedInto: 'story-1',
      });
      return state;
    };
    // The marker is older than the copy's entry: its lead, which never got an entry, was the copy's.
    const lost = pipelineFor([desk], { state: legacy(now - 120_000) });
    await lost.pipeline.add([matchOf('desk', copy)]);
    await lost.pipeline.flush();
    expect(publishedKeys(lost.notifier)).toEqual(['desk|id:s1-2']);
    // Written after the copy's entry, the marker was rewritten by a takeover: nothing is known of the copy's lead.
    const unknown = pipelineFor([desk], { state: legacy(now) });
    await unknown.pipeline.add([matchOf('desk', copy)]);
    await unknown.pipeline.flush();
    expect(publishedKeys(unknown.notifier)).toEqual([]);
  });

  it('carries the story when its lead was itself recorded later as a copy of a lead that never reached the audience (found by review)', async () => {
    const desk = audienceOf('desk', { collapse: 'story' });
    const state = new CountingState();
    const [x, y, m] = copies(1, 3);
    if (x === undefined || y === undefined || m === undefined) throw new Error('three copies');
    const deadLettered = async (batches: Article[][]) => {
      const queue = new MemoryWorkQueue(new MemoryDispatchStore(), () => now);
      const { pipeline } = pipelineFor([desk], { state, queue });
      for (const batch of batches) {
        await pipeline.add(matchesFor('desk', batch));
        await pipeline.flush();
      }
      queue.take(); // its work items die: nothing is published
    };
    // Sharded: x leads and y collapses into it; then m leads (x has no entry) and x collapses into m.
    await deadLettered([[x, y]]);
    await deadLettered([[m], [x]]);
    expect(state.ledger.get('desk|id:s1-0')).toMatchObject({ collapsedLead: 'id:s1-2' });
    // x and m are withdrawn: y alone is read again, and nothing ever reached the audience.
    const last = pipelineFor([desk], { state });
    await last.pipeline.add(matchesFor('desk', [y]));
    await last.pipeline.flush();
    expect(publishedKeys(last.notifier)).toEqual(['desk|id:s1-1']);
  });

  it('carries the story when its lead, led again earlier in the run, was refused for good (found by review)', async () => {
    const desk = audienceOf('desk', { collapse: 'story' });
    const state = new CountingState();
    const [x, y] = copies(1, 2);
    if (x === undefined || y === undefined) throw new Error('two copies');
    const queue = new MemoryWorkQueue(new MemoryDispatchStore(), () => now);
    const first = pipelineFor([desk], { state, queue });
    await first.pipeline.add(matchesFor('desk', [x, y]));
    await first.pipeline.flush();
    queue.take(); // x's work item dies; y is recorded as collapsed into x
    const refusing = refusingForGood(x);
    const again = pipelineFor([desk], { state, notifier: refusing });
    await again.pipeline.add(matchesFor('desk', [x]));
    await again.pipeline.flush();
    expect(again.counts.notificationsParked).toBe(1);
    await again.pipeline.add(matchesFor('desk', [y]));
    await again.pipeline.flush();
    expect(publishedKeys(again.notifier)).toEqual(['desk|id:s1-1']);
  });

  describe('read in the same batch as its lead, read again with no entry (found by review)', () => {
    const desk = audienceOf('desk', { collapse: 'story' });

    it('stays collapsed when the lead goes out now: one alert for the story', async () => {
      const { state, x, y } = await deadLetteredLead();
      const again = pipelineFor([desk], { state });
      await again.pipeline.add(matchesFor('desk', [y, x]));
      await again.pipeline.flush();
      expect(publishedKeys(again.notifier)).toEqual(['desk|id:s1-0']);
      expect(state.ledger.get('desk|id:s1-1')).toMatchObject({ collapsedLead: 'id:s1-0' });
    });

    it('carries the story when SNS refuses the lead for good', async () => {
      const { state, x, y } = await deadLetteredLead();
      const refusing = refusingForGood(x);
      const again = pipelineFor([desk], { state, notifier: refusing });
      await again.pipeline.add(matchesFor('desk', [y, x]));
      await again.pipeline.flush();
      expect(again.counts.notificationsParked).toBe(1);
      expect(publishedKeys(again.notifier)).toEqual(['desk|id:s1-1']);
      expect(state.ledger.get('desk|id:s1-1')?.collapsedInto).toBeUndefined();
    });

    it('carries the story when the lead comes back unrenderable and is parked', async () => {
      const { state, x, y } = await deadLetteredLead();
      const again = pipelineFor([desk], { state });
      await again.pipeline.add(matchesFor('desk', [y, { ...x, url: 'http://169.254.169.254/latest/' }]));
      await again.pipeline.flush();
      expect(again.counts.notificationsParked).toBe(1);
      expect(publishedKeys(again.notifier)).toEqual(['desk|id:s1-1']);
    });

    it('waits with the lead when SNS fails it for now: the next run sends the lead, not both', async () => {
      const { state, x, y } = await deadLetteredLead();
      const failing = new MemoryNotifier(() => ({ code: 'Throttled', reason: 'slow down', permanent: false }));
      const again = pipelineFor([desk], { state, notifier: failing });
      await again.pipeline.add(matchesFor('desk', [y, x]));
      await again.pipeline.flush();
      expect(again.counts.notificationsFailed).toBe(1);
      const next = pipelineFor([desk], { state });
      await next.pipeline.add(matchesFor('desk', [y, x]));
      await next.pipeline.flush();
      expect(publishedKeys(next.notifier)).toEqual(['desk|id:s1-0']);
    });
  });

  it('carries the story when its lead, led again in an earlier batch of the run and not published yet, is then refused for good', async () => {
    const desk = audienceOf('desk', { collapse: 'story' });
    const others = audienceOf('others');
    const { state, x, y } = await deadLetteredLead();
    const refusing = refusingForGood(x);
    const again = pipelineFor([desk, others], { state, notifier: refusing });
    // A full batch: x leads again, and waits in the outbox for its topic's batch of ten.
    await again.pipeline.add([
      matchOf('desk', x),
      ...Array.from({ length: 99 }, (_, index) => matchOf('others', article(`filler-${index}`))),
    ]);
    expect(refusing.published.some((message) => message.key.articleKey === x.key)).toBe(false);
    await again.pipeline.add([matchOf('desk', y)]);
    await again.pipeline.flush();
    expect(again.counts.notificationsParked).toBe(1);
    expect(publishedKeys(again.notifier).filter((id) => id.startsWith('desk|'))).toEqual(['desk|id:s1-1']);
  });

  it('the same for a copy recorded before collapsedLead existed, whose lead is led again from the marker the ledger holds (found by review)', async () => {
    const desk = audienceOf('desk', { collapse: 'story' });
    const others = audienceOf('others');
    const { state, x, y } = await deadLetteredLead();
    const { collapsedLead: _lead, ...legacy } = state.ledger.get('desk|id:s1-1') as DeliveryRecord;
    state.ledger.set('desk|id:s1-1', legacy);
    const refusing = refusingForGood(x);
    const again = pipelineFor([desk, others], { state, notifier: refusing });
    await again.pipeline.add([
      matchOf('desk', x),
      ...Array.from({ length: 99 }, (_, index) => matchOf('others', article(`filler-${index}`))),
    ]);
    await again.pipeline.add([matchOf('desk', y)]);
    await again.pipeline.flush();
    expect(again.counts.notificationsParked).toBe(1);
    expect(publishedKeys(again.notifier).filter((id) => id.startsWith('desk|'))).toEqual(['desk|id:s1-1']);
  });

  it('is planned again when the dropped lead is read in the same batch: the lead is not sent again (found by review)', async () => {
    const state = await releasedHeldLead({ releaseOutcome: 'dropped' });
    const later = await run(state, morning + 60_000, [matchOf('desk', copy), matchOf('desk', lead)]);
    expect(later.notifier.published.map((message) => deliveryId(message.key))).toEqual(['desk|id:s1-2']);
  });

  it("asks the ledger once per batch: old copies of a story an earlier batch of the run read find their lead's entry read already", async () => {
    const desk = audienceOf('desk', { collapse: 'story' });
    const state = new CountingState();
    const [first, a, b, fresh] = copies(1, 4);
    const sent = pipelineFor([desk], { state });
    await sent.pipeline.add(
      matchesFor(
        'desk',
        [first, a, b].filter((item) => item !== undefined),
      ),
    );
    await sent.pipeline.flush();
    expect(publishedKeys(sent.notifier)).toEqual(['desk|id:s1-0']);
    // A later run re-reads the day: one batch holds the lead and a new copy, the next the old copies.
    const reread = pipelineFor([desk], { state });
    await reread.pipeline.add(
      matchesFor(
        'desk',
        [first, fresh].filter((item) => item !== undefined),
      ),
    );
    await reread.pipeline.flush();
    const before = state.reads.length;
    await reread.pipeline.add(
      matchesFor(
        'desk',
        [a, b].filter((item) => item !== undefined),
      ),
    );
    await reread.pipeline.flush();
    expect(publishedKeys(reread.notifier)).toEqual([]);
    expect(state.reads.slice(before).map((read) => read.keys.map(deliveryId))).toEqual([
      ['desk|id:s1-1', 'desk|id:s1-2'],
    ]);
  });
});

describe('update notices', () => {
  /** Delivers `articles` to the audiences, then re-reads `changed` in a new pipeline (a later run). */
  async function deliverThenReread(
    audiences: readonly Audience[],
    articles: readonly Article[],
    changed: readonly Article[],
  ) {
    const state = new CountingState();
    const first = pipelineFor(audiences, { state });
    await first.pipeline.add(audiences.flatMap((audience) => matchesFor(audience.audienceId, articles)));
    await first.pipeline.flush();
    const second = pipelineFor(audiences, { state });
    await second.pipeline.add(audiences.flatMap((audience) => matchesFor(audience.audienceId, changed)));
    await second.pipeline.flush();
    return { state, first, second };
  }

  it('under `ignore`, a change moves the entry on once, also in a batch where no audience collapses or wants notices', async () => {
    const plain = audienceOf('plain');
    const item = article('a1', { status: '' });
    const { state, second } = await deliverThenReread([plain], [item], [{ ...item, status: 'UPDATED' }]);
    expect(second.notifier.published).toEqual([]);
    expect(second.counts.updatesIgnored).toBe(1);
    expect(state.ledger.get('plain|id:a1')?.status).toBe('UPDATED');
    // Seen once: a later re-read neither counts it again nor writes.
    const third = pipelineFor([plain], { state });
    const writes = state.writes.length;
    await third.pipeline.add(matchesFor('plain', [{ ...item, status: 'UPDATED' }]));
    await third.pipeline.flush();
    expect(third.counts.updatesIgnored).toBe(0);
    expect(state.writes.length).toBe(writes);
  });

  it('sends one notice per story and change under `notify`, none under `ignore`, and none again on a later re-read', async () => {
    const notify = audienceOf('notify', { collapse: 'story', updates: 'notify' });
    const ignore = audienceOf('ignore', { collapse: 'story' });
    const story = copies(1, 3);
    const updated = story.map((item) => ({ ...item, status: 'UPDATED' }));
    const { state, first, second } = await deliverThenReread([notify, ignore], story, updated);
    expect(first.notifier.published).toHaveLength(2);

    // Three copies came back UPDATED: one notice for the story.
    expect(publishedKeys(second.notifier)).toEqual(['notify|update:story-1#status=UPDATED']);
    expect(second.notifier.published[0]?.subject).toMatch(/update/i);
    expect(second.counts).toMatchObject({
      updateNotices: 1,
      // Only the lead reached `ignore`: its two collapsed copies' changes are not its news.
      updatesIgnored: 1,
      notificationsPublished: 0,
      notificationsAlreadyDelivered: 6,
    });
    expect(state.ledger.has('notify|update:story-1#status=UPDATED')).toBe(true);

    const third = pipelineFor([notify, ignore], { state });
    await third.pipeline.add([...matchesFor('notify', updated), ...matchesFor('ignore', updated)]);
    await third.pipeline.flush();
    expect(third.notifier.published).toEqual([]);
    expect(third.counts.updateNotices).toBe(0);
  });

  it('an audience that starts collapsing keeps the keys of its earlier notices: a change is never announced twice', async () => {
    const before = audienceOf('desk', { collapse: 'none', updates: 'notify' });
    const after = audienceOf('desk', { collapse: 'story', updates: 'notify' });
    const [item] = copies(1, 1);
    const updated = { ...item!, status: 'UPDATED' };
    const { state, second } = await deliverThenReread([before], [item!], [updated]);
    expect(publishedKeys(second.notifier)).toEqual(['desk|update:id:s1-0#status=UPDATED']);

    const switched = pipelineFor([after], { state });
    await switched.pipeline.add(matchesFor('desk', [updated]));
    await switched.pipeline.flush();
    expect(switched.notifier.published).toEqual([]);
  });

  it('keys notices by article for an audience that does not collapse, and sends one per change', async () => {
    const notify = audienceOf('notify', { collapse: 'none', updates: 'notify' });
    const [item] = copies(1, 1);
    const retitled = { ...item!, title: `${item!.title}, revised` };
    const { state, second } = await deliverThenReread([notify], [item!], [retitled]);
    expect(publishedKeys(second.notifier)).toEqual([`notify|update:id:s1-0#title=${titleHash(retitled.title)}`]);

    const deleted = pipelineFor([notify], { state });
    await deleted.pipeline.add(matchesFor('notify', [{ ...retitled, status: 'DELETED' }]));
    await deleted.pipeline.flush();
    expect(publishedKeys(deleted.notifier)).toEqual(['notify|update:id:s1-0#status=DELETED']);
  });

  it('compares each change with what the audience was last told, with no quiet re-read between changes (found by review)', async () => {
    // The entry took a change's facts only on the re-read after its notice: a run per change told
    // subscribers "CORRECTED, was PUBLISHED" after "UPDATED", and a headline changed back went unsaid.
    const notify = audienceOf('notify', { collapse: 'none', updates: 'notify' });
    const [item] = copies(1, 1);
    const state = new CountingState();
    const previousStatuses: unknown[] = [];
    const runWith = async (version: Article) => {
      const run = pipelineFor([notify], { state });
      await run.pipeline.add(matchesFor('notify', [version]));
      await run.pipeline.flush();
      for (const message of run.notifier.published) {
        const payload = JSON.parse(JSON.parse(message.body).default) as {
          newsAlerts: { update?: { previousStatus?: unknown } };
        };
        if (payload.newsAlerts.update !== undefined) previousStatuses.push(payload.newsAlerts.update.previousStatus);
      }
      return publishedKeys(run.notifier);
    };
    await runWith({ ...item!, status: 'PUBLISHED' });
    expect(await runWith({ ...item!, status: 'UPDATED' })).toEqual(['notify|update:id:s1-0#status=UPDATED']);
    expect(await runWith({ ...item!, status: 'CORRECTED' })).toEqual(['notify|update:id:s1-0#status=CORRECTED']);
    expect(previousStatuses).toEqual(['PUBLISHED', 'UPDATED']);
    expect(state.ledger.get('notify|id:s1-0')).toMatchObject({ status: 'CORRECTED' });
    // A headline changed, then changed back: both are announced.
    const retitled = { ...item!, status: 'CORRECTED', title: `${item!.title}, revised` };
    expect(await runWith(retitled)).toEqual([`notify|update:id:s1-0#title=${titleHash(retitled.title)}`]);
    expect(await runWith({ ...item!, status: 'CORRECTED' })).toEqual([
      `notify|update:id:s1-0#title=${titleHash(item!.title)}`,
    ]);

    // Sharded: queued is not yet sent (the publisher may park the notice), so the entry keeps its
    // facts and the next run offers the notice again until the publisher's ledger entry is there.
    const queue = new MemoryWorkQueue(new MemoryDispatchStore(), () => now);
    const queuedKeys = () =>
      queue.take().flatMap((queued) => queued.messages.map((message) => deliveryId(message.key)));
    const sharded = pipelineFor([notify], { state, queue });
    await sharded.pipeline.add(matchesFor('notify', [{ ...item!, status: 'DELETED' }]));
    await sharded.pipeline.flush();
    expect(queuedKeys()).toEqual(['notify|update:id:s1-0#status=DELETED']);
    expect(state.ledger.get('notify|id:s1-0')).toMatchObject({ status: 'CORRECTED' });
    const again = pipelineFor([notify], { state, queue });
    await again.pipeline.add(matchesFor('notify', [{ ...item!, status: 'DELETED' }]));
    await again.pipeline.flush();
    expect(queuedKeys()).toEqual(['notify|update:id:s1-0#status=DELETED']);
  });

  it('a change once handled moves the entry on: not counted or looked up again, and a later headline change gets its own notice', async () => {
    const notify = audienceOf('notify', { collapse: 'story', updates: 'notify' });
    const ignore = audienceOf('ignore', { collapse: 'story' });
    const [item] = copies(1, 1);
    const updated = { ...item!, status: 'UPDATED' };
    const { state, second } = await deliverThenReread([notify, ignore], [item!], [updated]);
    expect(second.counts).toMatchObject({ updateNotices: 1, updatesIgnored: 1 });

    // The next re-read finds the notice in the ledger and moves the entry on; nothing is counted.
    const third = pipelineFor([notify, ignore], { state });
    await third.pipeline.add([...matchesFor('notify', [updated]), ...matchesFor('ignore', [updated])]);
    await third.pipeline.flush();
    expect(third.counts).toMatchObject({ updateNotices: 0, updatesIgnored: 0 });
    expect(state.ledger.get('notify|id:s1-0')).toMatchObject({ status: 'UPDATED' });

    const retitled = { ...updated, title: `${item!.title}: what changed` };
    const fourth = pipelineFor([notify, ignore], { state });
    await fourth.pipeline.add([...matchesFor('notify', [retitled]), ...matchesFor('ignore', [retitled])]);
    await fourth.pipeline.flush();
    expect(publishedKeys(fourth.notifier)).toEqual([`notify|update:story-1#title=${titleHash(retitled.title)}`]);
    expect(fourth.counts).toMatchObject({ updateNotices: 1, updatesIgnored: 1 });
    const reads = state.reads.length;
    const fifth = pipelineFor([notify, ignore], { state });
    await fifth.pipeline.add([...matchesFor('ignore', [retitled])]);
    await fifth.pipeline.flush();
    // One ledger read for the batch; no notice-key lookup for a change already handled.
    expect(state.reads.length - reads).toBe(1);
    expect(fifth.counts.updatesIgnored).toBe(0);
  });

  it("a collapsed copy's change sends nothing and leaves the story's notice for its lead", async () => {
    const notify = audienceOf('notify', { collapse: 'story', updates: 'notify' });
    const [lead, copy] = copies(1, 2);
    const { state, second } = await deliverThenReread([notify], [lead!, copy!], [{ ...copy!, status: 'DELETED' }]);
    expect(second.notifier.published).toEqual([]);
    const later = pipelineFor([notify], { state });
    await later.pipeline.add(matchesFor('notify', [{ ...lead!, status: 'DELETED' }]));
    await later.pipeline.flush();
    expect(publishedKeys(later.notifier)).toEqual(['notify|update:story-1#status=DELETED']);
  });

  it('an unchanged re-read, or a change in case and spacing only, sends nothing', async () => {
    const notify = audienceOf('notify', { collapse: 'story', updates: 'notify' });
    const [item] = copies(1, 1);
    const same = { ...item!, title: `  ${item!.title.toUpperCase()}  ` };
    const { second } = await deliverThenReread([notify], [item!], [item!, same]);
    expect(second.notifier.published).toEqual([]);
    expect(second.counts).toMatchObject({ updateNotices: 0, updatesIgnored: 0 });
  });

  it('goes out at once: not held in digest mode, and no daily budget is used', async () => {
    const immediate = audienceOf('notify', { collapse: 'story', updates: 'notify' });
    // The audience switched to digest mode with a daily budget after its alert went out.
    const digest = audienceOf('notify', {
      collapse: 'story',
      updates: 'notify',
      deliveryMode: 'digest',
      digestTimes: ['08:00'],
      dailyBudget: 1,
    });
    const [item] = copies(1, 1);
    const state = new CountingState();
    const first = pipelineFor([immediate], { state });
    await first.pipeline.add(matchesFor('notify', [item!]));
    await first.pipeline.flush();
    const second = pipelineFor([digest], { state });
    await second.pipeline.add(matchesFor('notify', [{ ...item!, status: 'UPDATED' }]));
    await second.pipeline.flush();
    expect(publishedKeys(second.notifier)).toEqual(['notify|update:story-1#status=UPDATED']);
    expect(second.counts.notificationsHeld).toBe(0);
    expect(state.held.size).toBe(0);
    expect([...state.dailyCounts.values()].reduce((sum, value) => sum + value, 0)).toBe(0);
  });

  it('a notice SNS fails stays unpublished (the watermark waits) and goes out on the next read', async () => {
    const notify = audienceOf('notify', { collapse: 'story', updates: 'notify' });
    const [item] = copies(1, 1);
    const state = new CountingState();
    const first = pipelineFor([notify], { state });
    await first.pipeline.add(matchesFor('notify', [item!]));
    await first.pipeline.flush();
    const failing = new MemoryNotifier(() => ({ code: 'InternalError', reason: 'try again', permanent: false }));
    const second = pipelineFor([notify], { state, notifier: failing });
    await second.pipeline.add(matchesFor('notify', [{ ...item!, status: 'UPDATED' }]));
    await second.pipeline.flush();
    expect(second.pipeline.unpublished).toBe(1);
    expect(second.counts.notificationsFailed).toBe(1);
    const third = pipelineFor([notify], { state });
    await third.pipeline.add(matchesFor('notify', [{ ...item!, status: 'UPDATED' }]));
    await third.pipeline.flush();
    expect(third.counts.updateNotices).toBe(1);
  });
});

describe('one story, one alert, whatever the order, batching, failures and crashes (property)', () => {
  it('a collapsing audience gets exactly one alert per story it can be sent, a `none` audience every copy, and every copy is in the ledger or parked', async () => {
    const pair = fc.tuple(fc.integer({ min: 0, max: 4 }), fc.integer({ min: 0, max: 5 }));
    await fc.assert(
      fc.asyncProperty(
        // Copies: (story, copy) pairs in arrival order, possibly repeated by the provider.
        fc.array(pair, { minLength: 1, maxLength: 40 }),
        // Where runs end: the arrival index at which each run stops, and the publish it crashes at (0: none).
        fc.array(fc.tuple(fc.integer({ min: 1, max: 40 }), fc.integer({ min: 0, max: 3 })), { maxLength: 3 }),
        // How many articles each run reads between flushes (so a run has several batches).
        fc.integer({ min: 1, max: 4 }),
        // Copies SNS fails for now in the cut runs, and copies it refuses for good for `desk` in every run.
        fc.array(pair, { maxLength: 6 }),
        fc.array(pair, { maxLength: 4 }),
        async (arrivals, cuts, flushEvery, transient, permanent) => {
          const desk = audienceOf('desk', { collapse: 'story' });
          const all = audienceOf('all', { collapse: 'none' });
          const state = new CountingState();
          const sent: string[] = [];
          const arrivalsOf = arrivals.map(([n, copy]) =>
            article(`s${n}-${copy}`, { media: `M${copy}`, mediaName: `Outlet ${copy}` }),
          );
          const keyOf = ([n, copy]: [number, number]) => `id:s${n}-${copy}`;
          const failsForNow = new Set(transient.map(keyOf));
          const refused = new Set(permanent.map(keyOf));
          // A copy: sorting fast-check's own array in place would disturb its shrinking. Two clean
          // runs end it: the first delivers what is left, the second must find nothing to do.
          const runs = [
            ...[...cuts].sort(([a], [b]) => a - b).map(([cut, crashAt]) => ({ cut, crashAt, clean: false })),
            { cut: arrivalsOf.length, crashAt: 0, clean: true },
            { cut: arrivalsOf.length, crashAt: 0, clean: true },
          ];
          let unpublished = 0;
          for (const { cut, crashAt, clean } of runs) {
            const end = Math.min(cut, arrivalsOf.length);
            const notifier = new MemoryNotifier((message) => {
              const key = message.key.articleKey;
              if (message.key.audienceId === 'desk' && refused.has(key))
                return { code: 'InvalidParameter', reason: 'refused', permanent: true };
              if (!clean && failsForNow.has(key)) return { code: 'Throttled', reason: 'for now', permanent: false };
              return undefined;
            });
            const { pipeline } = pipelineFor([desk, all], { state, notifier });
            // A crashing run dies at that publish: what SNS took is in `sent`, the rest is not.
            let publishes = 0;
            const publish = notifier.publish.bind(notifier);
            notifier.publish = async (messages, options) => {
              publishes += 1;
              if (crashAt > 0 && publishes >= crashAt) throw new Error('crash');
              const outcome = await publish(messages, options);
              sent.push(...outcome.published.map((entry) => deliveryId(entry.message.key)));
              return outcome;
            };
            // Each run re-reads everything so far (overlapping windows), a few articles a batch.
            try {
              const read = arrivalsOf.slice(0, end);
              for (let at = 0; at < read.length; at += flushEvery) {
                await pipeline.add(
                  read.slice(at, at + flushEvery).flatMap((item) => [matchOf('desk', item), matchOf('all', item)]),
                );
                await pipeline.flush();
              }
              await pipeline.flush();
            } catch (error) {
              if (crashAt === 0) throw error;
            }
            unpublished = pipeline.unpublished;
          }
          // The last clean run had nothing left over: the watermark can move on.
          expect(unpublished).toBe(0);
          const desks = sent.filter((id) => id.startsWith('desk|'));
          expect(new Set(desks).size).toBe(desks.length);
          // One alert per story with a copy SNS takes; none for a story whose every copy it refuses.
          const sendable = new Set(
            arrivalsOf.filter((item) => !refused.has(item.key)).map((item) => byPrefix(item.key)),
          );
          expect(desks.map((id) => byPrefix(id.slice('desk|'.length))).sort()).toEqual([...sendable].sort());
          const distinct = new Set(arrivalsOf.map((item) => item.key));
          const alls = sent.filter((id) => id.startsWith('all|'));
          expect(new Set(alls).size).toBe(alls.length);
          expect(alls.length).toBe(distinct.size);
          for (const key of distinct) {
            expect(state.ledger.has(`desk|${key}`) || state.undeliverable.has(`desk|${key}`), key).toBe(true);
          }
        },
      ),
      { numRuns: 150 },
    );
  });
});

describe('an old copy and its lead, read again together: the lead, not the batch, decides (found by review)', () => {
  const desk = audienceOf('desk', { collapse: 'story' });

  it("an urgent lead that comes back unrenderable (it leads anew, not as the marker's lead): the copy carries the story", async () => {
    const { state, x, y } = await deadLetteredLead();
    const again = pipelineFor([desk], { state });
    await again.pipeline.add([matchOf('desk', y), matchOf('desk', unrenderable(x), true)]);
    await again.pipeline.flush();
    expect(again.counts.notificationsParked).toBe(1);
    expect(publishedKeys(again.notifier)).toEqual(['desk|id:s1-1']);
  });

  it('a lead the marker no longer names, read again with its copy and unrenderable: the copy carries the story', async () => {
    const { state, x, y, m } = await deadLetteredLead();
    // m leads (x has no entry and is not read): the marker names m; the run dies at m's publish.
    await crashAtFirstPublish([desk], state, matchesFor('desk', [m]));
    expect(state.ledger.get(deliveryId(storyMarkerKey('desk', 'story-1')))?.leadArticleKey).toBe('id:s1-2');
    // m is withdrawn; y and x are read again, x now unrenderable.
    const again = pipelineFor([desk], { state });
    await again.pipeline.add(matchesFor('desk', [y, unrenderable(x)]));
    await again.pipeline.flush();
    expect(again.counts.notificationsParked).toBe(1);
    expect(publishedKeys(again.notifier)).toEqual(['desk|id:s1-1']);
  });

  it('the same with the lead first in the batch', async () => {
    const { state, x, y, m } = await deadLetteredLead();
    await crashAtFirstPublish([desk], state, matchesFor('desk', [m]));
    const again = pipelineFor([desk], { state });
    await again.pipeline.add(matchesFor('desk', [unrenderable(x), y]));
    await again.pipeline.flush();
    expect(publishedKeys(again.notifier)).toEqual(['desk|id:s1-1']);
  });

  it('a copy planned again after its lead is refused for good is counted once: matched, and published', async () => {
    const { state, x, y } = await deadLetteredLead();
    const refusing = refusingForGood(x);
    const again = pipelineFor([desk], { state, notifier: refusing });
    await again.pipeline.add(matchesFor('desk', [y, x]));
    await again.pipeline.flush();
    expect(publishedKeys(again.notifier)).toEqual(['desk|id:s1-1']);
    // Two matches: x parked, y published. Nothing was already delivered.
    expect(again.counts).toMatchObject({
      notificationsMatched: 2,
      notificationsParked: 1,
      notificationsPublished: 1,
      notificationsAlreadyDelivered: 0,
    });
  });
});

describe('an old copy whose lead comes back unrenderable, read again by later runs (found by review)', () => {
  const desk = audienceOf('desk', { collapse: 'story' });
  it('is sent once over three runs reading the same window', async () => {
    const { state, x, y } = await deadLetteredLead();
    const sent: string[] = [];
    for (let run = 1; run <= 3; run++) {
      const again = pipelineFor([desk], { state });
      await again.pipeline.add([matchOf('desk', y), matchOf('desk', unrenderable(x), true)]);
      await again.pipeline.flush();
      sent.push(...publishedKeys(again.notifier));
    }
    expect(sent).toEqual(['desk|id:s1-1']);
  });
});

describe('an old copy read again with its lead that goes out: it stays collapsed (found by review)', () => {
  it('sharded: the lead alone is queued', async () => {
    const { state, x, y } = await deadLetteredLead();
    const queue = new MemoryWorkQueue(new MemoryDispatchStore(), () => now);
    const again = pipelineFor([audienceOf('desk', { collapse: 'story' })], { state, queue });
    await again.pipeline.add(matchesFor('desk', [y, x]));
    await again.pipeline.flush();
    expect(queue.take().flatMap((item) => item.messages.map((m) => deliveryId(m.key)))).toEqual(['desk|id:s1-0']);
    expect(state.ledger.get('desk|id:s1-1')).toMatchObject({ collapsedLead: 'id:s1-0' });
  });
  it.each([
    ['quiet hours', { quietHours: { start: '22:00', end: '07:00' } }, Date.UTC(2026, 10, 22, 23, 0)],
    ['digest', { deliveryMode: 'digest', digestTimes: ['08:00'] }, now],
    ['budget', { dailyBudget: 1 }, now],
  ] as const)('the lead held (%s): nothing sent, the lead held once', async (_name, extra, at) => {
    const { state, x, y } = await deadLetteredLead();
    if (_name === 'budget') state.dailyCounts.set('desk|2026-11-22', 1);
    const again = pipelineFor([audienceOf('desk', { collapse: 'story', ...extra })], { state, now: at });
    await again.pipeline.add(matchesFor('desk', [y, x]));
    await again.pipeline.flush();
    expect(again.notifier.published).toEqual([]);
    expect(again.counts.notificationsHeld).toBe(1);
    expect(state.ledger.get('desk|id:s1-1')).toMatchObject({ collapsedLead: 'id:s1-0' });
  });
  it('listed three times while its lead waits in the outbox, then the lead refused for good: the copy is sent once, and counted once', async () => {
    const { state, x, y } = await deadLetteredLead();
    const refusing = refusingForGood(x);
    const desk = audienceOf('desk', { collapse: 'story' });
    const others = audienceOf('others');
    const again = pipelineFor([desk, others], { state, notifier: refusing });
    await again.pipeline.add([
      matchOf('desk', y),
      matchOf('desk', x),
      ...Array.from({ length: 98 }, (_, index) => matchOf('others', article(`filler-${index}`))),
    ]);
    await again.pipeline.add([
      matchOf('desk', y),
      ...Array.from({ length: 99 }, (_, index) => matchOf('others', article(`filler2-${index}`))),
    ]);
    await again.pipeline.add([matchOf('desk', y)]);
    await again.pipeline.flush();
    expect(publishedKeys(again.notifier).filter((id) => id.startsWith('desk|'))).toEqual(['desk|id:s1-1']);
    expect(again.pipeline.unpublished).toBe(0);
    // 197 fillers, y read three times and x once: each read counted once; y's two other reads already delivered.
    expect(again.counts).toMatchObject({
      notificationsMatched: 201,
      notificationsPublished: 198,
      notificationsParked: 1,
      notificationsAlreadyDelivered: 2,
    });
  });
  it('a dry run decides as the run', async () => {
    const { state, x, y } = await deadLetteredLead();
    const would: string[] = [];
    const dry = pipelineFor([audienceOf('desk', { collapse: 'story' })], {
      state,
      dryRun: true,
      onWouldPublish: (m) => would.push(deliveryId(m.key)),
    });
    await dry.pipeline.add(matchesFor('desk', [y, x]));
    await dry.pipeline.flush();
    expect(would).toEqual(['desk|id:s1-0']);
  });
  it('the lead failing for now, the copy listed again later in the run, then the next run: one alert', async () => {
    const { state, x, y } = await deadLetteredLead();
    let fail = true;
    const notifier = new MemoryNotifier((message) =>
      fail && message.key.articleKey === x.key ? { code: 'Throttled', reason: 'slow', permanent: false } : undefined,
    );
    const desk = audienceOf('desk', { collapse: 'story' });
    const again = pipelineFor([desk], { state, notifier });
    await again.pipeline.add(matchesFor('desk', [y, x]));
    await again.pipeline.flush();
    await again.pipeline.add(matchesFor('desk', [y]));
    await again.pipeline.flush();
    fail = false;
    const next = pipelineFor([desk], { state });
    await next.pipeline.add(matchesFor('desk', [y, x]));
    await next.pipeline.flush();
    expect([...publishedKeys(notifier), ...publishedKeys(next.notifier)]).toHaveLength(1);
  });
});

describe('an old copy of an audience that stopped collapsing (found by review)', () => {
  it.each([['y first'], ['x first']] as const)(
    'its lead read again and refused for good (%s): the copy carries the story',
    async (order) => {
      const state = new CountingState();
      const [x, y] = copies(1, 2);
      if (x === undefined || y === undefined) throw new Error('two copies');
      const queue = new MemoryWorkQueue(new MemoryDispatchStore(), () => now);
      const first = pipelineFor([audienceOf('desk', { collapse: 'story' })], { state, queue });
      await first.pipeline.add(matchesFor('desk', [x, y]));
      await first.pipeline.flush();
      queue.take();
      const refusing = refusingForGood(x);
      const none = audienceOf('desk', { collapse: 'none', updates: 'notify' });
      const again = pipelineFor([none], { state, notifier: refusing });
      await again.pipeline.add(matchesFor('desk', order === 'y first' ? [y, x] : [x, y]));
      await again.pipeline.flush();
      expect(again.counts.notificationsParked).toBe(1);
      expect(publishedKeys(again.notifier)).toEqual(['desk|id:s1-1']);
    },
  );
});

describe('an old copy of an audience that stopped collapsing and ignores updates (found by review)', () => {
  const none = audienceOf('desk', { collapse: 'none' });

  it('its lead withdrawn (not read again): the copy carries the story', async () => {
    const { state, y } = await deadLetteredLead();
    const again = pipelineFor([none], { state });
    await again.pipeline.add(matchesFor('desk', [y]));
    await again.pipeline.flush();
    expect(publishedKeys(again.notifier)).toEqual(['desk|id:s1-1']);
  });

  it('its lead read again and refused for good: the copy carries the story', async () => {
    const { state, x, y } = await deadLetteredLead();
    const refusing = refusingForGood(x);
    const again = pipelineFor([none], { state, notifier: refusing });
    await again.pipeline.add(matchesFor('desk', [y, x]));
    await again.pipeline.flush();
    expect(again.counts.notificationsParked).toBe(1);
    expect(publishedKeys(again.notifier)).toEqual(['desk|id:s1-1']);
  });

  it('the same with a collapsing audience in the batch: the ledger decides, not the batch', async () => {
    const { state, y } = await deadLetteredLead();
    const other = audienceOf('other', { collapse: 'story' });
    const again = pipelineFor([none, other], { state });
    await again.pipeline.add([matchOf('desk', y), matchOf('other', article('unrelated'))]);
    await again.pipeline.flush();
    expect(publishedKeys(again.notifier).filter((id) => id.startsWith('desk|'))).toEqual(['desk|id:s1-1']);
  });
});

describe('a copy recorded before collapsedLead existed, whose marker is younger than it', () => {
  it('the run sends nothing on a re-read, whatever the younger marker names (deliveries --article says a re-read sends it)', async () => {
    const desk = audienceOf('desk', { collapse: 'story' });
    const state = new CountingState();
    const [, y] = copies(1, 2);
    if (y === undefined) throw new Error('two copies');
    const copyAt = now - 60 * 60_000;
    await state.recordDelivered([
      // Its lead long gone from the ledger (or never known): the copy predates collapsedLead.
      { audienceId: 'desk', articleKey: y.key, deliveredAt: copyAt, ruleIds: ['desk-rule'], collapsedInto: 'story-1' },
      // A later run's marker names another lead, m, whose publish never happened (no entry).
      {
        ...storyMarkerKey('desk', 'story-1'),
        deliveredAt: copyAt + 30 * 60_000,
        ruleIds: [],
        storyId: 'story-1',
        leadArticleKey: 'id:s1-9',
      },
    ]);
    const again = pipelineFor([desk], { state });
    await again.pipeline.add(matchesFor('desk', [y]));
    await again.pipeline.flush();
    expect(publishedKeys(again.notifier)).toEqual([]);
    expect(again.counts.notificationsAlreadyDelivered).toBe(1);
  });
});

describe('counts of copies matched again', () => {
  const desk = audienceOf('desk', { collapse: 'story' });
  it.each([['y first'], ['x first']] as const)(
    'a dry run, the lead unrenderable (%s): counted once, nothing negative',
    async (order) => {
      const { state, x, y } = await deadLetteredLead();
      const would: string[] = [];
      const dry = pipelineFor([desk], { state, dryRun: true, onWouldPublish: (m) => would.push(deliveryId(m.key)) });
      await dry.pipeline.add(
        order === 'y first' ? matchesFor('desk', [y, unrenderable(x)]) : matchesFor('desk', [unrenderable(x), y]),
      );
      await dry.pipeline.flush();
      expect(would).toEqual(['desk|id:s1-1']);
      expect(dry.counts).toMatchObject({
        notificationsMatched: 2,
        notificationsAlreadyDelivered: 0,
        notificationsUnrenderable: 1,
      });
      expect(dry.counts.audiences.desk).toMatchObject({ matched: 2, alreadyDelivered: 0 });
    },
  );
  it('sharded, the lead refused for good by SQS, the copy read three times: totals and tallies agree', async () => {
    const { state, x, y } = await deadLetteredLead();
    const queue = new MemoryWorkQueue(new MemoryDispatchStore(), () => now);
    const enqueue = queue.enqueue.bind(queue);
    queue.enqueue = async (dispatchId: string, messages: readonly OutboundMessage[]) => {
      const refused = messages.filter((message) => message.key.articleKey === x.key);
      const outcome = await enqueue(
        dispatchId,
        messages.filter((message) => message.key.articleKey !== x.key),
      );
      return {
        ...outcome,
        failed: [
          ...outcome.failed,
          ...refused.map((message) => ({ message, code: 'Refused', reason: 'no', permanent: true })),
        ],
      };
    };
    const again = pipelineFor([desk], { state, queue });
    await again.pipeline.add(matchesFor('desk', [y, y, x, y]));
    await again.pipeline.flush();
    expect(queue.take().flatMap((item) => item.messages.map((m) => deliveryId(m.key)))).toEqual(['desk|id:s1-1']);
    const tally = again.counts.audiences.desk;
    expect(again.counts.notificationsMatched).toBe(4);
    expect(tally?.matched).toBe(4);
    expect(again.counts.notificationsAlreadyDelivered).toBe(2);
    expect(tally?.alreadyDelivered).toBe(2);
  });
});

describe('a copy recorded before collapsedLead existed, read after its story was led anew earlier in the run (found by review)', () => {
  it('is handled the same by the run and its dry run, with one ledger read for its batch', async () => {
    const desk = audienceOf('desk', { collapse: 'story' });
    const [lead, old, fresh] = copies(1, 3);
    if (lead === undefined || old === undefined || fresh === undefined) throw new Error('three copies');
    const later = now + 60 * 60_000;
    const outcome = async (dryRun: boolean) => {
      const state = new CountingState();
      const first = pipelineFor([desk], { state });
      await first.pipeline.add(matchesFor('desk', [lead, old]));
      await first.pipeline.flush();
      // From before collapsedLead, and its lead never reached the audience (a dead-lettered item).
      const { collapsedLead: _lead, ...legacy } = state.ledger.get('desk|id:s1-1') as DeliveryRecord;
      state.ledger.set('desk|id:s1-1', legacy);
      state.ledger.delete('desk|id:s1-0');
      const again = pipelineFor([desk], { state, now: later, dryRun });
      // The fresh copy leads the story anew (its marker rewritten, or as good as in a dry run).
      await again.pipeline.add(matchesFor('desk', [fresh]));
      await again.pipeline.flush();
      const readsBefore = state.reads.length;
      await again.pipeline.add(matchesFor('desk', [old]));
      await again.pipeline.flush();
      return {
        reads: state.reads.length - readsBefore,
        alreadyDelivered: again.counts.notificationsAlreadyDelivered,
        collapsing: again.counts.notificationsCollapsed + again.counts.notificationsWouldCollapse,
      };
    };
    const expected = { reads: 1, alreadyDelivered: 1, collapsing: 0 };
    expect(await outcome(false)).toEqual(expected);
    expect(await outcome(true)).toEqual(expected);
  });
});

describe('a copy recorded before collapsedLead existed, its marker older, its lead with no entry (found by review)', () => {
  it.each([
    ['stopped collapsing, updates: ignore', { collapse: 'none', updates: 'ignore' }],
    ['stopped collapsing, updates: notify', { collapse: 'none', updates: 'notify' }],
    ['still collapsing', { collapse: 'story' }],
  ] as const)('carries the story, as rules explain says (%s)', async (_name, settings) => {
    const state = new CountingState();
    const [, y] = copies(1, 2);
    if (y === undefined) throw new Error('two copies');
    const copyAt = now - 60 * 60_000;
    await state.recordDelivered([
      {
        ...storyMarkerKey('desk', 'story-1'),
        deliveredAt: copyAt - 60_000,
        ruleIds: [],
        storyId: 'story-1',
        leadArticleKey: 'id:s1-0',
      },
      { audienceId: 'desk', articleKey: y.key, deliveredAt: copyAt, ruleIds: ['desk-rule'], collapsedInto: 'story-1' },
    ]);
    const again = pipelineFor([audienceOf('desk', settings)], { state });
    await again.pipeline.add(matchesFor('desk', [y]));
    await again.pipeline.flush();
    expect(publishedKeys(again.notifier)).toEqual(['desk|id:s1-1']);
  });
});
