/**
 * Spike alerts' guarantees (issue 34) against moto and the news API simulator with the real
 * alert run, story index, spike store and ledger: a run that crashes mid-count loses no story and
 * counts none twice (also when it dies storing the counts of a provider day it finished: the
 * counts are stored before the watermark moves past the day); a window read again counts nothing twice; an episode whose run crashes before
 * its alert went out, or after it went out but before the run noted it, is alerted exactly once.
 * Each scenario's rule starts with three weeks of counts (primed: the warm-up a new rule spends),
 * and the simulator schedules a burst on the rule's topic.
 */
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { afterEach, describe, expect, it } from 'vitest';
import type { Notifier } from '#core/ports';
import { emptyDetectorState, PRESETS, SpikeDetector, spikeModel } from '#core/spikes/detector';
import type { SpikeStore } from '#core/spikes/ports';
import { bucketOf, evaluatedThrough, newSpikeRecord, SPIKE_BUCKET_MS, type SpikeRecord } from '#core/spikes/record';
import type { SandboxAudience } from '#sandbox/examples';
import { burstStories, type SimBurst } from '#sandbox/news-simulator-data';
import { primeSpikeHistory } from '#sandbox/spike-demo';
import { startTestStack, stateWith, type TestStack } from '#test/run-harness';
import { seeded } from '#test/spike-world';

const minute = 60_000;
/** A whole hour plus five minutes (UTC): runs happen on a five-minute grid from here. */
const epoch = Date.UTC(2026, 10, 23, 2, 5);

const audiences: SandboxAudience[] = [
  { item: { audienceId: 'spike-desk', timeZone: 'UTC', collapse: 'story', updates: 'notify' }, subscribers: [] },
];
const ruleFor = (ruleId: string, topic: string) => ({
  ruleId,
  audienceId: 'spike-desk',
  keywords: [topic],
  spikes: 'balanced',
});

/** Stories of a burst published by `at` (a story's copies come after its original). */
function storiesBy(burst: SimBurst, at: number): number {
  return burstStories(burst).filter((story) => Number(story.original.publishedAt) <= at).length;
}

async function recordOf(store: SpikeStore, ruleId: string): Promise<SpikeRecord> {
  const record = (await store.read([ruleId])).get(ruleId);
  if (record === undefined) throw new Error(`no spike record for ${ruleId}`);
  return record;
}

/**
 * Stories counted in the hour starting at `at`: the detector's count once the hour is evaluated
 * (older open buckets keep headlines only), its story ids while it is not.
 */
function countedIn(record: SpikeRecord, at: number): number {
  const bucket = bucketOf(at);
  if (bucket <= evaluatedThrough(record)) {
    const count = record.detector.counts[bucket - record.detector.start];
    if (count === undefined) throw new Error(`hour ${new Date(at).toISOString()} left the detector's history`);
    return count;
  }
  return record.open.find((candidate) => candidate.bucket === bucket)?.stories.length ?? 0;
}

const isSpike = (key: string) => key.startsWith('spike:');

/** Spike alerts (not updates) delivered since the last call, as their delivery ids. */
async function spikeAlertsSince(stack: TestStack): Promise<string[]> {
  return (await stack.collectDeliveries())
    .filter((delivered) => isSpike(delivered.articleKey) && delivered.kind === 'alert')
    .map((delivered) => delivered.deliveryId)
    .sort();
}

/** The delivery id of the alert of `ruleId`'s current episode. */
async function alertIdOf(store: SpikeStore, ruleId: string): Promise<string> {
  const episodeId = (await recordOf(store, ruleId)).alert?.episodeId;
  if (episodeId === undefined) throw new Error(`${ruleId} has no episode`);
  return `spike-desk|spike:${ruleId}:${episodeId}`;
}

describe('spike alerts across crashes and re-reads', () => {
  let stack: TestStack | undefined;
  afterEach(async () => {
    await stack?.stop();
    stack = undefined;
  });

  async function start(rules: ReturnType<typeof ruleFor>[], environment: Record<string, string> = {}, at = epoch) {
    const s = await startTestStack({
      audiences,
      rules,
      simulator: { articles: [] },
      epoch: at,
      environment: { INITIAL_LOOKBACK_MINUTES: '60', ...environment },
    });
    stack = s;
    const spikes = s.dependencies.spikes as SpikeStore;
    for (const rule of rules) {
      await primeSpikeHistory(spikes, { ruleId: rule.ruleId, audienceId: 'spike-desk', now: at, perHour: 1 });
    }
    return { s, spikes };
  }

  it('a run that crashes between two rules’ counts: the next run counts what it lost, nothing twice, and each rule alerts once', async () => {
    // No re-reading below the watermark once it has passed a day: what a run does not count
    // before the watermark moves there is not read again (within the day, the sweep after a failed
    // run re-reads it; the day-boundary test below covers the other case). The guarantee is that
    // the watermark never moves past uncounted stories.
    const { s, spikes } = await start([ruleFor('alpha', 'Aurora Cell'), ruleFor('beta', 'Borealis Grid')], {
      LATE_ARRIVAL_MINUTES: '0',
      INCREMENTAL_OVERLAP_MINUTES: '0',
    });
    const alpha: SimBurst = { topic: 'Aurora Cell', from: epoch, hours: 1, storiesPerHour: 30, copies: 2, seed: 1 };
    const beta: SimBurst = { topic: 'Borealis Grid', from: epoch, hours: 1, storiesPerHour: 20, copies: 2, seed: 2 };
    s.simulator?.scheduleBurst(alpha);
    s.simulator?.scheduleBurst(beta);
    s.setTime(epoch + 20 * minute);
    const real = spikes.write.bind(spikes);
    let writes = 0;
    // The first record reaches the table, then the process dies.
    const crashing: SpikeStore = {
      ...spikes,
      read: spikes.read.bind(spikes),
      readHeartbeat: spikes.readHeartbeat.bind(spikes),
      writeHeartbeat: spikes.writeHeartbeat.bind(spikes),
      write: async (record) => {
        writes += 1;
        if (writes === 2) throw new Error('simulated crash between two spike records');
        return real(record);
      },
    };
    await expect(s.run({ dependencies: { spikes: crashing } })).rejects.toThrow(/simulated crash/);
    expect(writes).toBe(2);
    for (const at of [25, 30, 50]) {
      s.setTime(epoch + at * minute);
      expect((await s.run()).status).toBe('completed');
    }
    // Every story published by the last run of the hour is counted, once, in that hour.
    const lastRunOfHour = epoch + 50 * minute;
    expect(countedIn(await recordOf(spikes, 'alpha'), epoch)).toBe(storiesBy(alpha, lastRunOfHour));
    expect(countedIn(await recordOf(spikes, 'beta'), epoch)).toBe(storiesBy(beta, lastRunOfHour));
    // The hour ends: each rule's episode is alerted once.
    for (const at of [60, 65, 70]) {
      s.setTime(epoch + at * minute);
      expect((await s.run()).status).toBe('completed');
    }
    expect(countedIn(await recordOf(spikes, 'alpha'), epoch)).toBe(storiesBy(alpha, lastRunOfHour));
    expect(countedIn(await recordOf(spikes, 'beta'), epoch)).toBe(storiesBy(beta, lastRunOfHour));
    expect(await spikeAlertsSince(s)).toEqual([await alertIdOf(spikes, 'alpha'), await alertIdOf(spikes, 'beta')]);
  });

  it('a run that crashes while storing the counts of a provider day it finished: the watermark stays before that day, so the next run counts it', async () => {
    // The burst ends before the provider's midnight, and the first run after
    // midnight finishes that day and dies storing its counts. Its watermark must not have moved
    // past the day: the next run's sweep reads from the watermark on, and a day behind it is never
    // read again (no re-reading window below the watermark). Within one day a crash is forgiving
    // (the sweep after a failed run reads the whole day again), so only a day boundary tells.
    // 23:05 and midnight in Seoul, the simulator's (the provider's) time zone.
    const lateEvening = Date.UTC(2026, 10, 23, 14, 5);
    const midnight = Date.UTC(2026, 10, 23, 15);
    const { s, spikes } = await start(
      [ruleFor('alpha', 'Aurora Cell')],
      { LATE_ARRIVAL_MINUTES: '0', INCREMENTAL_OVERLAP_MINUTES: '0', INITIAL_LOOKBACK_MINUTES: '120' },
      lateEvening,
    );
    const burst: SimBurst = {
      topic: 'Aurora Cell',
      from: lateEvening,
      hours: 50 / 60,
      storiesPerHour: 36,
      copies: 2,
      seed: 5,
    };
    s.simulator?.scheduleBurst(burst);
    const dayCount = storiesBy(burst, midnight - 1);
    expect(dayCount).toBe(storiesBy(burst, midnight + 60 * minute));
    s.setTime(midnight + 10 * minute);
    const crashing: SpikeStore = {
      read: spikes.read.bind(spikes),
      readHeartbeat: spikes.readHeartbeat.bind(spikes),
      writeHeartbeat: spikes.writeHeartbeat.bind(spikes),
      write: async () => {
        throw new Error('simulated crash storing the day’s spike counts');
      },
    };
    await expect(s.run({ dependencies: { spikes: crashing } })).rejects.toThrow(/simulated crash/);
    expect((await s.dependencies.state.readWatermark())?.at ?? 0).toBeLessThan(midnight);
    for (const at of [15, 20, 25]) {
      s.setTime(midnight + at * minute);
      expect((await s.run()).status).toBe('completed');
    }
    // A story counts in the hour it was first seen: the crashed run saw them all at 00:10.
    expect(countedIn(await recordOf(spikes, 'alpha'), midnight)).toBe(dayCount);
    // The hour ends: one alert, and the count stays.
    for (const at of [60, 65, 70]) {
      s.setTime(midnight + at * minute);
      expect((await s.run()).status).toBe('completed');
    }
    expect(countedIn(await recordOf(spikes, 'alpha'), midnight)).toBe(dayCount);
    expect(await spikeAlertsSince(s)).toEqual([await alertIdOf(spikes, 'alpha')]);
  });

  it('a record keeps all its detector needs through the state table: a fewer detector read back continues exactly', async () => {
    const { spikes } = await start([{ ...ruleFor('alpha', 'Aurora Cell'), spikes: 'fewer' }]);
    // Three weeks of counts and two bursts, the second smaller: fewer holds it back (the record
    // of the last 14 days), which only a detector that kept its record history can repeat.
    const random = seeded(21);
    const counts: number[] = Array.from({ length: 21 * 24 }, () => (random() < 0.5 ? 1 : 2));
    counts[16 * 24 + 12] = 60;
    counts[19 * 24 + 12] = 30;
    const model = spikeModel(SPIKE_BUCKET_MS);
    const current = bucketOf(epoch);
    const detector = new SpikeDetector(model, PRESETS.fewer, emptyDetectorState(current - counts.length));
    for (const count of counts) detector.step(count);
    const stored = (await spikes.read(['alpha'])).get('alpha');
    // An open bucket's stories, headlines and outlets (what an alert names) come back as written.
    const open = [
      {
        bucket: current,
        stories: ['s1', 's2'],
        samples: [
          { storyId: 's1', title: 'One', url: 'https://news.example.com/1', outlet: 'Wire' },
          { storyId: 's2', title: 'Two', url: 'https://news.example.com/2' },
        ],
        outlets: ['Wire'],
      },
    ];
    await spikes.write({
      ...newSpikeRecord('alpha', 'spike-desk', 'fewer', epoch),
      version: stored?.version ?? 0,
      detector: detector.state(),
      open,
    });
    const read = await recordOf(spikes, 'alpha');
    expect(read.open).toEqual(open);
    expect(read.detector).toEqual(JSON.parse(JSON.stringify(detector.state())));
    const restored = new SpikeDetector(model, PRESETS.fewer, read.detector);
    const next = [1, 2, 35, 2, 1];
    expect(next.map((count) => restored.step(count))).toEqual(next.map((count) => detector.step(count)));
  });

  it('a spike record edited by hand into values no detector can continue restarts the rule, never fails the run', async () => {
    const { s, spikes } = await start([ruleFor('alpha', 'Aurora Cell')]);
    s.setTime(epoch + 10 * minute);
    expect((await s.run()).status).toBe('completed');
    // Each edit passes the item's type checks: a bucket of 0 ms (the model refuses it), a
    // negative dispersion, a first bucket of no valid time.
    const edits: [string, Record<string, unknown>][] = [
      ['SET bucketMs = :value', { ':value': 0 }],
      ['SET detector.dispersion = :value', { ':value': -5 }],
      ['SET detector.#start = :value', { ':value': -100_000_000_000 }],
    ];
    for (const [index, [expression, values]] of edits.entries()) {
      await s.clients.documents.send(
        new UpdateCommand({
          TableName: s.config.tables.state,
          Key: { pk: 'spike#alpha', sk: 'record' },
          UpdateExpression: expression,
          ExpressionAttributeValues: values,
          ...(expression.includes('#start') ? { ExpressionAttributeNames: { '#start': 'start' } } : {}),
        }),
      );
      s.setTime(epoch + (15 + 5 * index) * minute);
      const summary = await s.run();
      expect(summary.status, `${expression}: ${summary.reason ?? ''}`).toBe('completed');
      const record = await recordOf(spikes, 'alpha');
      expect(record.bucketMs).toBe(SPIKE_BUCKET_MS);
      expect(record.detector.dispersion).toBeGreaterThan(0);
      expect(record.detector.countingSince).toBeGreaterThanOrEqual(bucketOf(epoch));
    }
    expect(s.log.lines.filter((line) => line.includes('the rule starts counting again'))).toHaveLength(3);
  });

  it('runs that read the same window again (every run a full sweep) count nothing twice and alert once', async () => {
    const { s, spikes } = await start([ruleFor('alpha', 'Aurora Cell')], { FULL_SWEEP_MINUTES: '0' });
    const burst: SimBurst = { topic: 'Aurora Cell', from: epoch, hours: 1, storiesPerHour: 24, copies: 3, seed: 3 };
    s.simulator?.scheduleBurst(burst);
    for (const at of [20, 25, 30, 35, 40, 40, 50]) {
      s.setTime(epoch + at * minute);
      expect((await s.run()).status).toBe('completed');
    }
    const lastRunOfHour = epoch + 50 * minute;
    expect(countedIn(await recordOf(spikes, 'alpha'), epoch)).toBe(storiesBy(burst, lastRunOfHour));
    // Past the hour, sweeps read it again (its stories come back through the story index).
    for (const at of [60, 65, 65, 70]) {
      s.setTime(epoch + at * minute);
      expect((await s.run()).status).toBe('completed');
    }
    expect(countedIn(await recordOf(spikes, 'alpha'), epoch)).toBe(storiesBy(burst, lastRunOfHour));
    expect(await spikeAlertsSince(s)).toEqual([await alertIdOf(spikes, 'alpha')]);
  });

  it('an episode whose run crashed before its alert went out, then after SNS took it: one alert, counts once', async () => {
    const { s, spikes } = await start([ruleFor('alpha', 'Aurora Cell')]);
    // 30 stories an hour from epoch (02:05); the first run after 03:00 opens the episode.
    const burst: SimBurst = { topic: 'Aurora Cell', from: epoch, hours: 1, storiesPerHour: 30, copies: 1, seed: 4 };
    s.simulator?.scheduleBurst(burst);
    for (const at of [15, 30, 45, 50]) {
      s.setTime(epoch + at * minute);
      expect((await s.run()).status).toBe('completed');
    }
    const hourCount = storiesBy(burst, epoch + 50 * minute);
    const real = s.dependencies.notifier;
    // 1. The run that opens the episode stores it, then dies before SNS accepts the alert.
    const dyingBeforeSns: Notifier = {
      publish: async (messages, options) => {
        if (messages.some((message) => isSpike(message.key.articleKey))) throw new Error('simulated crash before SNS');
        return real.publish(messages, options);
      },
    };
    s.setTime(epoch + 60 * minute);
    await expect(s.run({ dependencies: { notifier: dyingBeforeSns } })).rejects.toThrow(/before SNS/);
    const opened = await recordOf(spikes, 'alpha');
    expect(opened.detector.open?.id).toBe(opened.alert?.episodeId);
    expect(opened.alert?.settled).not.toBe(true);
    expect(await spikeAlertsSince(s)).toEqual([]);
    // 2. The next run sends it; its process then dies before it could note the alert as settled.
    const state = s.dependencies.state;
    const dyingAfterLedger = stateWith(state, {
      findDelivered: async (keys) => {
        if (keys.some((key) => isSpike(key.articleKey))) throw new Error('simulated crash after the ledger write');
        return state.findDelivered(keys);
      },
    });
    s.setTime(epoch + 65 * minute);
    await expect(s.run({ dependencies: { state: dyingAfterLedger } })).rejects.toThrow(/after the ledger write/);
    const alertId = `spike-desk|spike:alpha:${opened.alert?.episodeId}`;
    expect(await spikeAlertsSince(s)).toEqual([alertId]);
    // 3. Later runs, until the episode closes (two quiet hours after the three-hour span that holds
    // the burst) and its alert is settled: nothing more.
    for (const at of [70, 75, 95, 125, 185, 245]) {
      s.setTime(epoch + at * minute);
      expect((await s.run()).status).toBe('completed');
    }
    expect(await spikeAlertsSince(s)).toEqual([]);
    const closed = await recordOf(spikes, 'alpha');
    expect(closed.alert?.episodeId).toBe(opened.alert?.episodeId);
    expect(closed.alert?.closedAt).toBeDefined();
    expect(closed.alert?.settled).toBe(true);
    expect(countedIn(closed, epoch)).toBe(hourCount);
  });
});
