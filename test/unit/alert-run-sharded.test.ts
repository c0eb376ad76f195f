/**
 * The alert run's side of sharded publishing (issue 14), with in-memory ports: the run queues
 * what it would publish, the watermark moves only once the dispatch's work items are done (in
 * this run, or settled by the next one), a run never queues while an earlier dispatch is in
 * flight, and a dispatch that never finishes is given up without moving the watermark — its
 * alerts are queued again from the ledger's point of view and reach SNS exactly once.
 */
import { describe, expect, it } from 'vitest';
import { type AlertRunDependencies, runAlertCycle } from '#core/alert-run';
import { settleOpenDispatch } from '#core/dispatch';
import { type Article, buildRuleSet } from '#core/model';
import type { StoryAssignment, StoryIndex, StoryRecord, WorkItem } from '#core/ports';
import { publishWorkItem } from '#core/publish-work';
import {
  article,
  MemoryNewsSource,
  MemoryNotifier,
  MemoryStateStore,
  memoryLog,
  memoryRules,
  memoryRunSettings,
} from '#test/fake-ports';
import { MemoryDispatchStore, MemoryWorkQueue } from '#test/memory-dispatch';

/** 2026-11-22 12:00 UTC; with a one-day lookback the window is 2026-11-21 and 2026-11-22. */
const start = Date.UTC(2026, 10, 22, 12, 0);
const minute = 60_000;

const ruleSet = buildRuleSet(
  [
    { ruleId: 'rates', audienceId: 'desk', keywords: ['interest rate'] },
    { ruleId: 'rates-too', audienceId: 'board', keywords: ['interest rate'] },
  ],
  [
    { audienceId: 'desk', topicArn: 'arn:aws:sns:us-east-1:123456789012:desk' },
    { audienceId: 'board', topicArn: 'arn:aws:sns:us-east-1:123456789012:board' },
  ],
);
const earlier = article('day-1', { publishedAt: Date.UTC(2026, 10, 21, 15, 0) });
const later = article('day-2', { publishedAt: Date.UTC(2026, 10, 22, 9, 0) });
const news = new MemoryNewsSource(
  new Map([
    ['2026-11-21', [earlier]],
    ['2026-11-22', [later]],
  ]),
);

/** One deployment in memory: state, SNS, the dispatch store and the queue, and a clock. */
function deployment() {
  const clock = { now: start };
  const now = () => clock.now;
  const state = new MemoryStateStore();
  const notifier = new MemoryNotifier();
  const dispatches = new MemoryDispatchStore();
  const queue = new MemoryWorkQueue(dispatches, now);
  const log = memoryLog();
  const deps: AlertRunDependencies = {
    news,
    rules: memoryRules(ruleSet),
    state,
    notifier,
    log,
    now,
    sharded: { queue, dispatches },
  };
  /** The publishers: every queued item, through the real publisher step. */
  const publish = async (items: readonly WorkItem[] = queue.take()) => {
    for (const item of items) {
      await publishWorkItem(
        item,
        { state, notifier, dispatches, log, now, ledgerFlushDelayMs: 0 },
        { lastAttempt: false },
      );
    }
  };
  return { clock, state, notifier, dispatches, queue, deps, publish };
}

/**
 * A run with every deadline far away, or with the hard one (the end of its wait for the
 * publishers) or both (the end of its wait for an earlier dispatch, too) already reached, or with
 * the soft one `softInMs` ahead (time to wait for an earlier dispatch and then to read, were it
 * allowed to).
 */
const run = (
  deps: AlertRunDependencies,
  runId: string,
  options: { passed?: 'hard' | 'both'; softInMs?: number } = {},
) =>
  runAlertCycle(
    deps,
    memoryRunSettings({
      ...(options.passed ? { hardMarginMs: 10 ** 12 } : {}),
      ...(options.passed === 'both' ? { softMarginMs: 10 ** 12 } : {}),
      ...(options.softInMs === undefined ? {} : { softMarginMs: 10 ** 12 - options.softInMs }),
    }),
    { runId, remainingTimeMs: () => 10 ** 12 },
  );

const sentKeys = (notifier: MemoryNotifier) =>
  notifier.published.map((m) => `${m.key.audienceId}|${m.key.articleKey}`).sort();

describe('sharded publishing: the run queues, the publishers publish', () => {
  it('moves the watermark where single mode does, once the publishers finished the items, and counts their publishing', async () => {
    const single = new MemoryStateStore();
    const singleSummary = await runAlertCycle(
      {
        news,
        rules: memoryRules(ruleSet),
        state: single,
        notifier: new MemoryNotifier(),
        log: memoryLog(),
        now: () => start,
      },
      memoryRunSettings(),
      { runId: 'single', remainingTimeMs: () => 10 ** 12 },
    );

    const { deps, state, notifier, dispatches, queue, publish } = deployment();
    // Publishers that keep up: each item is published as soon as it is queued.
    const enqueue = queue.enqueue.bind(queue);
    queue.enqueue = async (...args) => {
      const outcome = await enqueue(...args);
      await publish();
      return outcome;
    };
    const summary = await run(deps, 'run-1');

    expect(summary.status).toBe('completed');
    expect(summary.notificationsQueued).toBe(4);
    expect(summary.workItemsQueued).toBeGreaterThanOrEqual(2);
    // The publishers' counts are the dispatch's; the run published nothing itself.
    expect(summary.notificationsPublished).toBe(0);
    expect(summary.dispatch).toMatchObject({ state: 'completed', published: 4, done: summary.workItemsQueued });
    expect(sentKeys(notifier)).toEqual(['board|id:day-1', 'board|id:day-2', 'desk|id:day-1', 'desk|id:day-2']);
    expect(state.ledger.size).toBe(4);
    expect((await state.readWatermark())?.at).toBe(singleSummary.watermarkAfter);
    expect(summary.watermarkAfter).toBe(singleSummary.watermarkAfter);
    expect(dispatches.openId).toBeUndefined();
  });

  it('leaves the watermark until the items are done; the next run waits for them, the one after settles them', async () => {
    const { deps, state, notifier, dispatches, queue, publish, clock } = deployment();
    // Run 1: the publishers have not started when the run's time to wait for them is up.
    const first = await run(deps, 'run-1', { passed: 'hard' });
    expect(first.status).toBe('checkpointed');
    expect(first.reason).toMatch(/work item\(s\) still with the publishers/);
    expect(first.dispatch?.state).toBe('in-flight');
    expect(await state.readWatermark()).toBeUndefined();
    expect(notifier.published).toEqual([]);
    const queued = queue.items.length;
    expect(queued).toBeGreaterThan(0);

    // Run 2: still in flight and young: it waits for them until its soft deadline, then queues
    // nothing new and leaves the watermark.
    clock.now += 5 * minute;
    const second = await run(deps, 'run-2', { softInMs: 300 });
    expect(second.status).toBe('checkpointed');
    expect(second.reason).toMatch(/waiting for \d+ work item\(s\) of dispatch run-1@/);
    expect(second.settled?.state).toBe('in-flight');
    expect(second.notificationsQueued).toBe(0);
    expect(queue.items.length).toBe(queued);
    expect(await state.readWatermark()).toBeUndefined();

    // The publishers catch up; run 3 moves the watermark to where run 1 left it and queues nothing twice.
    await publish();
    clock.now += 5 * minute;
    const third = await run(deps, 'run-3');
    expect(third.settled).toMatchObject({ state: 'completed', published: 4 });
    // The watermark is where run 1 would have left it, so run 3 reads nothing of what went out.
    expect(third.watermarkBefore).toBe(dispatches.heads.get(first.dispatch?.dispatchId ?? '')?.advanceTo);
    expect(third.notificationsQueued).toBe(0);
    expect(sentKeys(notifier)).toEqual(['board|id:day-1', 'board|id:day-2', 'desk|id:day-1', 'desk|id:day-2']);
    expect(dispatches.openId).toBeUndefined();
  });

  it('reads the days of a dispatch it gave up again only once no publisher can still be publishing one of its items', async () => {
    const { deps, notifier, dispatches, queue, publish, clock } = deployment();
    const first = await run(deps, 'run-1', { passed: 'hard' });
    const firstId = first.dispatch?.dispatchId ?? '';
    const [held, ...rest] = queue.take();
    expect(held).toBeDefined();
    // A publisher claimed one item late in a backlog, just before the give-up, and is still on it.
    clock.now += 16 * minute;
    const ref = { dispatchId: firstId, itemId: held?.itemId ?? '' };
    const claimEnds = clock.now + minute;
    expect(await dispatches.claimItems([ref], { owner: 'slow', until: claimEnds, now: clock.now })).toEqual([
      { state: 'claimed' },
    ]);
    const second = await run(deps, 'run-2', { passed: 'hard' });
    expect(second.status).toBe('checkpointed');
    expect(second.reason).toMatch(/gave up dispatch .*a publisher may still be publishing one of its items/);
    expect(second.notificationsQueued).toBe(0);
    expect(queue.items).toEqual([]);
    // From the give-up on, no other item of it is claimed; the claim made before still ends as it was.
    const [other] = rest;
    const late = await dispatches.claimItems([{ dispatchId: firstId, itemId: other?.itemId ?? '' }], {
      owner: 'late',
      until: clock.now + 2 * minute,
      now: clock.now,
    });
    expect(late).toEqual([{ state: 'closed' }]);
    // Ended seconds ago by the run's clock: the publisher's clock may run behind, so it is still waited for.
    clock.now = claimEnds + 10_000;
    const skewed = await run(deps, 'run-2b', { passed: 'hard' });
    expect(skewed.reason).toMatch(/a publisher may still be publishing one of its items/);
    // The claim ended: the next run closes it and reads its days again; every alert goes out once.
    clock.now += 2 * minute;
    const third = await run(deps, 'run-3', { passed: 'hard' });
    expect(third.settled).toMatchObject({ dispatchId: firstId, state: 'abandoned' });
    expect(third.notificationsQueued).toBe(4);
    await publish();
    expect(sentKeys(notifier)).toEqual(['board|id:day-1', 'board|id:day-2', 'desk|id:day-1', 'desk|id:day-2']);
  });

  it('does not wait for a claim no invocation could hold (its end typed by hand days ahead), which would stop every run', async () => {
    const { deps, dispatches, queue, clock } = deployment();
    const first = await run(deps, 'run-1', { passed: 'hard' });
    const [held] = queue.take();
    clock.now += 16 * minute;
    const ref = { dispatchId: first.dispatch?.dispatchId ?? '', itemId: held?.itemId ?? '' };
    await dispatches.claimItems([ref], { owner: 'typed', until: clock.now + 10 * 24 * 60 * minute, now: clock.now });
    const second = await run(deps, 'run-2', { passed: 'hard' });
    expect(second.settled).toMatchObject({ dispatchId: ref.dispatchId, state: 'abandoned' });
    expect(second.notificationsQueued).toBe(4);
  });

  it('gives up a dispatch that never finishes without moving the watermark, and its alerts still go out once', async () => {
    const { deps, state, notifier, dispatches, queue, publish, clock } = deployment();
    const first = await run(deps, 'run-1', { passed: 'hard' });
    const firstId = first.dispatch?.dispatchId ?? '';
    // One item was published; the others died (in the DLQ, say).
    const [survivor] = queue.take();
    await publish(survivor ? [survivor] : []);
    const publishedBefore = notifier.published.length;
    expect(publishedBefore).toBeGreaterThan(0);

    clock.now += 16 * minute;
    const second = await run(deps, 'run-2', { passed: 'hard' });
    expect(second.settled).toMatchObject({ dispatchId: firstId, state: 'abandoned' });
    // It reads the days again: only what the ledger lacks is queued.
    expect(second.notificationsAlreadyDelivered).toBe(publishedBefore);
    expect(second.notificationsQueued).toBe(4 - publishedBefore);
    expect(await state.readWatermark()).toBeUndefined();

    await publish();
    clock.now += minute;
    await run(deps, 'run-3');
    expect(sentKeys(notifier)).toEqual(['board|id:day-1', 'board|id:day-2', 'desk|id:day-1', 'desk|id:day-2']);
    expect(await state.readWatermark()).toBeDefined();
    expect(dispatches.openId).toBeUndefined();
  });

  it('opens no dispatch when nothing matched, and moves the watermark at once', async () => {
    const { deps, state, dispatches } = deployment();
    const quiet = { ...deps, rules: memoryRules(buildRuleSet([], ruleSet.audiences)) };
    const summary = await run(quiet, 'run-1');
    expect(summary.status).toBe('completed');
    expect(dispatches.heads.size).toBe(0);
    expect(summary.dispatch).toBeUndefined();
    expect(await state.readWatermark()).toBeDefined();
  });

  it('seals the dispatch of a run the provider failed, so the next run settles what it queued', async () => {
    const { deps, state, dispatches, publish, clock } = deployment();
    const failing = {
      ...deps,
      news: {
        async *pages(range: { from: string; to: string }) {
          if (range.from === '2026-11-22') throw new Error('provider down');
          yield* news.pages(range);
        },
      },
    };
    await expect(run(failing, 'run-1')).rejects.toThrow('provider down');
    const head = [...dispatches.heads.values()][0];
    expect(head?.expected).toBe(head?.enqueued);
    expect(head?.advanceTo).toBe(Date.UTC(2026, 10, 22, 0, 0));
    expect(await state.readWatermark()).toBeUndefined();

    await publish();
    clock.now += minute;
    const second = await run(deps, 'run-2', { passed: 'hard' });
    expect(second.settled).toMatchObject({ state: 'completed' });
    // Settling moved the watermark past the first day: only the second is read and queued.
    expect(second.watermarkBefore).toBe(Date.UTC(2026, 10, 22, 0, 0));
    expect(second.window).toEqual({ from: '2026-11-22', to: '2026-11-22' });
    expect(second.notificationsQueued).toBe(2);
  });
});

/**
 * The run must not read while an earlier dispatch is open and unfinished, however its wait for
 * that dispatch ended. A wait that ends at the soft deadline also ends the reading, so these
 * tests use the one open dispatch whose wait ends at once: its open pointer outlived its head (an
 * item deleted by hand), which the DynamoDB adapter reads as an unsealed, empty dispatch.
 */
describe('an earlier dispatch still open when the next run has time to read', () => {
  const budgeted = buildRuleSet(
    ruleSet.rules,
    ruleSet.audiences.map((audience) => ({ ...audience, dailyBudget: 10 })),
  );

  /** Run 1 queues work items the publishers never finish; then their dispatch's head is lost. */
  async function openHeadlessDispatch(deps: AlertRunDependencies, dispatches: MemoryDispatchStore) {
    const first = await run(deps, 'run-1', { passed: 'hard' });
    expect(first.dispatch?.state).toBe('in-flight');
    dispatches.heads.delete(first.dispatch?.dispatchId ?? '');
    expect(await dispatches.readOpen()).toMatchObject({ dispatchId: first.dispatch?.dispatchId, done: 0 });
    return first;
  }

  it('with something to queue, it checkpoints: it queues nothing and reserves no daily budget again', async () => {
    const setup = deployment();
    const { state, queue, dispatches, clock } = setup;
    const deps = { ...setup.deps, rules: memoryRules(budgeted) };
    await openHeadlessDispatch(deps, dispatches);
    const queued = queue.items.length;
    const budgetUsed = new Map(state.dailyCounts);
    expect([...budgetUsed.values()].reduce((sum, count) => sum + count, 0)).toBe(4);

    clock.now += 5 * minute;
    // What a run that went on would do (queue, and fail to open a second dispatch) shows in the
    // budget even when the run throws, so the budget is checked first.
    const second = await run(deps, 'run-2').catch((error: unknown) => error);
    expect(state.dailyCounts).toEqual(budgetUsed);
    expect(queue.items.length).toBe(queued);
    expect(second).toMatchObject({
      status: 'checkpointed',
      reason: expect.stringMatching(/waiting for \d+ work item\(s\) of dispatch run-1@/),
      notificationsQueued: 0,
    });
    expect(await state.readWatermark()).toBeUndefined();
  });

  it("with nothing to queue, it leaves the watermark before the earlier run's days, which are read again once that dispatch is given up", async () => {
    const { deps, state, notifier, dispatches, queue, publish, clock } = deployment();
    await openHeadlessDispatch(deps, dispatches);
    // The items die (in the DLQ, say): nothing of run 1 is ever published.
    queue.take();

    clock.now += 5 * minute;
    const quiet = { ...deps, rules: memoryRules(buildRuleSet([], ruleSet.audiences)) };
    const second = await run(quiet, 'run-2');
    expect(second.status).toBe('checkpointed');
    expect(second.daysCompleted).toBe(0);
    expect(await state.readWatermark()).toBeUndefined();

    // Given up later, the dispatch's days are read again and their alerts go out once.
    clock.now += 16 * minute;
    const third = await run(deps, 'run-3', { passed: 'hard' });
    expect(third.settled).toMatchObject({ state: 'abandoned' });
    expect(third.window).toEqual({ from: '2026-11-21', to: '2026-11-22' });
    expect(third.notificationsQueued).toBe(4);
    await publish();
    clock.now += minute;
    await run(deps, 'run-4');
    expect(sentKeys(notifier)).toEqual(['board|id:day-1', 'board|id:day-2', 'desk|id:day-1', 'desk|id:day-2']);
  });
});

describe('when an open dispatch is given up', () => {
  const lease = { owner: 'run-1', expiresAt: Number.MAX_SAFE_INTEGER };
  const aborted = AbortSignal.abort();
  const settle = (dispatches: MemoryDispatchStore, now: number) =>
    settleOpenDispatch(dispatches, {
      signal: aborted,
      abandonAfterMs: 15 * minute,
      runLimitMs: 6 * minute,
      now: () => now,
    });

  it('counts from when the run sealed it, so items queued late in a long run get all their retries', async () => {
    const dispatches = new MemoryDispatchStore();
    await dispatches.open(lease, 'long-run', start);
    await dispatches.seal(lease, 'long-run', { expected: 3 }, start + 14 * minute);
    expect((await settle(dispatches, start + 20 * minute)).kind).toBe('waiting');
    expect((await settle(dispatches, start + 29 * minute)).kind).toBe('abandoned');
  });

  it('counts from as late as the run could have queued when it died before sealing', async () => {
    const dispatches = new MemoryDispatchStore();
    await dispatches.open(lease, 'died', start);
    expect((await settle(dispatches, start + 20 * minute)).kind).toBe('waiting');
    expect((await settle(dispatches, start + 21 * minute)).kind).toBe('abandoned');
  });
});

describe('a story whose lead was queued and never published', () => {
  /** Every article of the day is one story, led by the first copy the run meets. */
  class OneStory implements StoryIndex {
    async assign(articles: readonly Article[]): Promise<Map<string, StoryAssignment>> {
      return new Map(articles.map((a) => [a.key, { articleKey: a.key, storyId: 'story-1', leadArticleKey: a.key }]));
    }
    async readStories(): Promise<Map<string, StoryRecord>> {
      return new Map();
    }
  }
  const collapsing = buildRuleSet(
    [{ ruleId: 'rates', audienceId: 'desk', keywords: ['interest rate'] }],
    [{ audienceId: 'desk', topicArn: 'arn:aws:sns:us-east-1:123456789012:desk', collapse: 'story' }],
  );
  const lead = article('s1-a', { publishedAt: Date.UTC(2026, 10, 22, 9, 0) });
  const copy = article('s1-b', { publishedAt: Date.UTC(2026, 10, 22, 9, 1), media: 'M002', mediaName: 'Other Daily' });

  function storyDeployment() {
    const day = new Map([['2026-11-22', [lead, copy]]]);
    const base = deployment();
    const deps: AlertRunDependencies = {
      ...base.deps,
      news: new MemoryNewsSource(day),
      rules: memoryRules(collapsing),
      stories: new OneStory(),
    };
    return { ...base, day, deps };
  }

  it('is carried by its copy once the dispatch is given up, when the lead no longer matches: the copy recorded as collapsed is sent', async () => {
    const { deps, day, state, notifier, queue, publish, clock } = storyDeployment();
    const first = await run(deps, 'run-1', { passed: 'hard' });
    expect(first.notificationsQueued).toBe(1);
    expect(first.notificationsCollapsed).toBe(1);
    queue.take(); // the lead's item dies (in the DLQ, say): nothing is published
    clock.now += 16 * minute;
    day.set('2026-11-22', [copy]); // the provider withdrew the lead meanwhile
    const second = await run(deps, 'run-2', { passed: 'hard' });
    expect(second.settled).toMatchObject({ state: 'abandoned' });
    expect(second.notificationsQueued).toBe(1);
    await publish();
    clock.now += minute;
    await run(deps, 'run-3');
    expect(sentKeys(notifier)).toEqual(['desk|id:s1-b']);
    // The copy's entry is its own publish now, not the collapse into a lead nobody received.
    const entry = (await state.readDeliveries([{ audienceId: 'desk', articleKey: 'id:s1-b' }])).get('desk|id:s1-b');
    expect(entry).toBeDefined();
    expect(entry?.collapsedInto).toBeUndefined();
  });

  it('stays collapsed when the lead was published: a re-read sends the story once', async () => {
    const { deps, notifier, publish, clock } = storyDeployment();
    await run(deps, 'run-1', { passed: 'hard' });
    await publish();
    clock.now += minute;
    await run(deps, 'run-2');
    // The lead again, re-read by a sweep of the same day: nothing more goes out.
    clock.now += minute;
    const third = await run(deps, 'run-3');
    await publish();
    expect(third.notificationsQueued).toBe(0);
    expect(sentKeys(notifier)).toEqual(['desk|id:s1-a']);
  });
});
