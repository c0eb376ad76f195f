/**
 * Guards of the delivery pipeline's accounting, each the test a single mutation of
 * delivery-pipeline.ts once survived (issue 10, item 14): every match must end up published,
 * held, parked or counted as unpublished (which keeps the watermark before it), never nothing.
 *
 * - (a) matches the hard deadline kept from being sent count as unpublished;
 * - (c) matches a budget conflict pushes over the daily budget are held, not dropped;
 * - (e) an article that cannot be rendered is parked for replay, and the rest still goes out.
 */
import { describe, expect, it } from 'vitest';
import { DeliveryPipeline, emptyDeliveryCounts } from '#core/delivery-pipeline';
import { type Audience, type AudienceMatch, AudienceSchema } from '#core/model';
import { deliveryId } from '#core/ports';
import { article, MemoryNotifier, MemoryStateStore, matchOf, memoryLog } from '#test/fake-ports';

/** 2026-11-22 12:00 UTC: outside any quiet hours of these audiences. */
const now = Date.UTC(2026, 10, 22, 12, 0);

const audienceOf = (overrides: Record<string, unknown> = {}): Audience =>
  AudienceSchema.parse({ audienceId: 'desk', topicArn: 'arn:aws:sns:us-east-1:123456789012:desk', ...overrides });

function pipelineFor(
  audience: Audience,
  options: {
    state?: MemoryStateStore;
    notifier?: MemoryNotifier;
    signal?: AbortSignal;
    dryRun?: boolean;
    applyDeliveryPreferences?: boolean;
  } = {},
) {
  const state = options.state ?? new MemoryStateStore();
  const notifier = options.notifier ?? new MemoryNotifier();
  const counts = emptyDeliveryCounts();
  const log = memoryLog();
  const pipeline = new DeliveryPipeline({
    state,
    notifier,
    log,
    now: () => now,
    audiences: new Map([[audience.audienceId, audience]]),
    ledgerFlushDelayMs: 0,
    publishSignal: options.signal ?? new AbortController().signal,
    lateBefore: 0,
    counts,
    dryRun: options.dryRun,
    applyDeliveryPreferences: options.applyDeliveryPreferences ?? true,
  });
  return { pipeline, state, notifier, counts, log };
}

const idsOf = (matches: readonly AudienceMatch[]) =>
  matches.map((match) => deliveryId({ audienceId: match.audienceId, articleKey: match.article.key })).sort();

describe('the hard deadline (14a)', () => {
  it('counts every match it kept from being sent as unpublished, so the watermark stays before them', async () => {
    const audience = audienceOf();
    const deadline = new AbortController();
    deadline.abort(new Error('hard deadline'));
    const { pipeline, state, counts } = pipelineFor(audience, { signal: deadline.signal });
    await pipeline.add(['1', '2', '3'].map((id) => matchOf('desk', article(id))));
    await pipeline.flush();

    expect(counts.notificationsPublished).toBe(0);
    expect(counts.notificationsDeferred).toBe(3);
    expect(pipeline.unpublished).toBe(3);
    // Deferred, not handled: nothing in the ledger, so the next run sends them.
    expect(state.ledger.size).toBe(0);
  });
});

describe('a daily budget that changed while it was reserved (14c)', () => {
  it('holds the matches the current count no longer allows, and sends the rest', async () => {
    const audience = audienceOf({ dailyBudget: 2 });
    const state = new MemoryStateStore();
    // Another writer counts one alert for today between the pipeline's read and its write.
    let raced = false;
    state.beforeDailyCountUpdate = (key) => {
      if (raced) return;
      raced = true;
      state.dailyCounts.set(`${key.audienceId}|${key.date}`, 1);
    };
    const { pipeline, notifier, counts } = pipelineFor(audience, { state });
    const matches = ['1', '2'].map((id) => matchOf('desk', article(id)));
    await pipeline.add(matches);
    await pipeline.flush();

    expect(raced).toBe(true);
    expect(notifier.published).toHaveLength(1);
    expect(state.held.size).toBe(1);
    expect(counts.notificationsHeld).toBe(1);
    expect(counts.budgetOverflow).toBe(1);
    // Every match is either sent or held (and in the ledger): none is neither.
    const handled = [...notifier.published.map((message) => deliveryId(message.key)), ...state.held.keys()].sort();
    expect(handled).toEqual(idsOf(matches));
    expect([...state.ledger.keys()].sort()).toEqual(idsOf(matches));
    expect(pipeline.unpublished).toBe(0);
    expect(state.dailyCounts.get(`desk|2026-11-22`)).toBe(2);
  });
});

describe('an article that can never be rendered (14e, 12a)', () => {
  const poisoned = [
    [
      'a 300 KB link',
      article('huge-url', { url: `https://news.example.com/${'a'.repeat(300 * 1024)}` }),
      'UnpublishableLink',
    ],
    ['a link to the metadata service', article('imds', { url: 'http://169.254.169.254/latest/' }), 'UnpublishableLink'],
    ['no valid publication time', article('no-time', { publishedAt: Number.NaN }), 'Unrenderable'],
  ] as const;

  it.each(poisoned)('parks it (%s) for replay and still delivers every other match', async (_what, bad, code) => {
    const audience = audienceOf();
    const { pipeline, state, notifier, counts, log } = pipelineFor(audience);
    const good = ['1', '2'].map((id) => matchOf('desk', article(id)));
    await pipeline.add([good[0] as AudienceMatch, matchOf('desk', bad), good[1] as AudienceMatch]);
    await pipeline.flush();

    expect(notifier.published.map((message) => deliveryId(message.key)).sort()).toEqual(idsOf(good));
    expect(counts.notificationsUnrenderable).toBe(1);
    expect(counts.notificationsParked).toBe(1);
    expect(counts.audiences.desk?.parked).toBe(1);
    // Parked counts as handled (the watermark may move on) and is kept for `replay --parked`,
    // with a message that can be sent as it is.
    expect(pipeline.unpublished).toBe(0);
    const parked = state.undeliverable.get(`desk|${bad.key}`);
    expect(parked).toMatchObject({ audienceId: 'desk', articleKey: bad.key, code });
    expect(parked?.reason).not.toBe('');
    // Never the link itself: it may be 300 KB, or a phishing target.
    expect(parked?.body).not.toContain(bad.url);
    expect(parked?.reason.length).toBeLessThanOrEqual(1000);
    expect(() => JSON.parse(parked?.body ?? '')).not.toThrow();
    expect(JSON.parse(parked?.body ?? '{}')).toHaveProperty('default');
    expect(state.ledger.has(`desk|${bad.key}`)).toBe(false);
    expect(log.lines.some((line) => line.level === 'error' && /parked/.test(line.message))).toBe(true);
  });

  it('parks what SNS refuses for good, and its log line names the command that sends parked notifications', async () => {
    const audience = audienceOf();
    const notifier = new MemoryNotifier(() => ({ code: 'NotFound', reason: 'Topic does not exist', permanent: true }));
    const { pipeline, state, counts, log } = pipelineFor(audience, { notifier });
    await pipeline.add([matchOf('desk', article('refused'))]);
    await pipeline.flush();

    expect(counts.notificationsParked).toBe(1);
    expect(state.undeliverable.size).toBe(1);
    const errors = log.lines.filter((line) => line.level === 'error' && /parked/.test(line.message));
    expect(errors.length).toBeGreaterThan(0);
    // `news-alerts replay` alone reads the provider again; only --parked sends what was parked.
    for (const line of errors) expect(line.message).toContain('news-alerts replay --parked');
  });

  it('parks an article read twice in one run only once', async () => {
    const audience = audienceOf();
    const { pipeline, state, counts } = pipelineFor(audience);
    const bad = poisoned[0][1];
    await pipeline.add([matchOf('desk', bad)]);
    await pipeline.add([matchOf('desk', bad)]);
    await pipeline.flush();
    expect(state.undeliverable.size).toBe(1);
    expect(counts.notificationsParked).toBe(1);
  });

  it('parks nothing in a dry run, but counts it', async () => {
    const audience = audienceOf();
    const { pipeline, state, counts } = pipelineFor(audience, { dryRun: true });
    await pipeline.add([matchOf('desk', poisoned[0][1]), matchOf('desk', article('1'))]);
    await pipeline.flush();
    expect(state.undeliverable.size).toBe(0);
    expect(counts.notificationsUnrenderable).toBe(1);
    expect(counts.notificationsWouldPublish).toBe(1);
  });
});
