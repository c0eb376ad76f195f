/**
 * What spike alerts add to a run (issue 34, part c): CPU time and DynamoDB requests of the spike
 * step (functions/core/spikes/step.ts) at 20,000 rules with 10% of them asking for spike alerts,
 * over the in-memory ports that count requests (test/support/memory-spike-store.ts,
 * memory-story-store.ts, fake-ports.ts), each call counted as the one DynamoDB request (or batch
 * of 100 keys) the adapter makes.
 *
 * The rules' records start with four weeks of hourly history (stepped through the real detector),
 * so every record has its full size. Two runs are measured, as a five-minute schedule has them:
 * - a run inside an hour: the matches of five minutes (each opted-in rule a story now and then)
 *   are counted; only the rules that matched are read and written;
 * - the first run after an hour ends: the same, and every opted-in rule's record is read,
 *   evaluated and written.
 * The story index calls are the spike step's own (it files articles the pipeline did not; in
 * production most are already filed for `collapse: story` audiences, so this is the upper bound).
 */

import { spikeRecordKey } from '#aws/dynamo-spike-store';
import { measureItem } from '#aws/table-layout';
import { type AudienceMatch, AudienceSchema, RuleSchema } from '#core/model';
import { silentLog } from '#core/ports';
import { emptyDetectorState, PRESETS, SpikeDetector, spikeModel } from '#core/spikes/detector';
import { bucketOf, newSpikeRecord, type SpikeRecord } from '#core/spikes/record';
import { SpikeStep } from '#core/spikes/step';
import { StoryResolver } from '#core/story';
import { mulberry32 } from '#sandbox/news-simulator-data';
import { MemoryStateStore } from '#test/fake-ports';
import { MemorySpikeStore } from '../../test/support/memory-spike-store.ts';
import { MemoryStoryStore } from '../../test/support/memory-story-store.ts';
import { Replay } from './replay.ts';

const HOUR = 3_600_000;

export interface SpikeRunCost {
  readonly label: string;
  readonly cpuMs: number;
  readonly rulesTouched: number;
  readonly articles: number;
  readonly requests: {
    readonly spikeReads: number;
    readonly spikeKeysRead: number;
    readonly spikeWrites: number;
    readonly heartbeat: number;
    readonly storyIndex: number;
    readonly ledger: number;
  };
  /** Bytes of records written (DynamoDB bills a write unit per KB of each item). */
  readonly bytesWritten: number;
  readonly writeUnits: number;
}

export interface SpikeCostResults {
  readonly rules: number;
  readonly optedIn: number;
  readonly recordBytes: { readonly median: number; readonly max: number };
  readonly runs: readonly SpikeRunCost[];
}

/** A record with `weeks` of hourly history for a rule with `rate` stories an hour, ending before `now`. */
function seededRecord(ruleId: string, rate: number, now: number, weeks: number, random: () => number): SpikeRecord {
  const model = spikeModel(HOUR);
  const first = bucketOf(now) - weeks * model.bucketsPerWeek;
  const detector = new SpikeDetector(model, PRESETS.balanced, emptyDetectorState(first));
  const outlets: number[] = [];
  while (detector.next < bucketOf(now)) {
    let count = 0;
    const mean = rate * (0.4 + 1.2 * random());
    for (let p = random(); p > Math.exp(-mean); p *= random()) count += 1;
    detector.step(count);
    outlets.push(Math.min(count, 6));
  }
  return {
    ...newSpikeRecord(ruleId, 'bench', 'balanced', now),
    version: 1,
    detector: detector.state(),
    outletCounts: outlets.slice(-7 * 24),
  };
}

const bytesOf = (record: SpikeRecord): number =>
  measureItem({ ...spikeRecordKey(record.ruleId), ...record, expiresAt: 0 }).bytes;

export async function runSpikeCost(options: {
  readonly rules: number;
  readonly share: number;
  readonly seed: number;
}): Promise<SpikeCostResults> {
  const optedIn = Math.round(options.rules * options.share);
  const start = Date.UTC(2026, 0, 5);
  const now = start + 5 * 7 * 24 * HOUR;
  // The replay's rules and rhythm, generated from an hour before the measured runs only.
  const replay = new Replay({ seed: options.seed, rules: optedIn, weeks: 1, start: now - HOUR });
  const random = mulberry32(options.seed + 1);
  const store = new MemorySpikeStore({ copy: false });
  for (const rule of replay.rules) {
    store.records.set(rule.ruleId, seededRecord(rule.ruleId, rule.baseRate, now - 5 * 60_000, 4, random));
  }
  const sizes = [...store.records.values()].map(bytesOf).sort((a, b) => a - b);
  const rules = replay.rules.map((rule) =>
    RuleSchema.parse({ ruleId: rule.ruleId, audienceId: 'bench', keywords: ['x'], spikes: 'balanced' }),
  );
  const audiences = new Map([
    [
      'bench',
      AudienceSchema.parse({
        audienceId: 'bench',
        topicArn: 'arn:aws:sns:us-east-1:123456789012:news-alerts-audience-bench',
      }),
    ],
  ]);
  let clock = now;
  const storyStore = new MemoryStoryStore({ now: () => clock });
  const stories = new StoryResolver(storyStore);
  const ledger = new MemoryStateStore();
  let ledgerCalls = 0;
  const state = {
    findDelivered: (keys: Parameters<MemoryStateStore['findDelivered']>[0]) => {
      ledgerCalls += Math.ceil(keys.length / 100);
      return ledger.findDelivered(keys);
    },
  };
  // The articles of the five minutes before each measured run (the replay's rates at that hour).
  const articlesBefore = (at: number) => replay.articlesBetween(at - 5 * 60_000, at);
  replay.articlesBetween(now - HOUR, now - 10 * 60_000);
  // One run before the measured ones leaves the heartbeat a five-minute schedule always has.
  clock = now - 10 * 60_000 + 30_000;
  await new SpikeStep({ store, state, stories, log: silentLog, now: () => clock, rules, audiences }).deliver({
    add: async () => {},
    flush: async () => {},
  });
  const runs: SpikeRunCost[] = [];
  for (const [label, at] of [
    ['inside an hour (5 minutes of matches)', now - 5 * 60_000 + 30_000],
    ['first run after the hour ended (every record evaluated)', now + 30_000],
  ] as const) {
    clock = at;
    const articles = articlesBefore(at);
    const matches: AudienceMatch[] = articles.map((article) => ({
      audienceId: 'bench',
      article,
      rules: [{ ruleId: article.ruleId, urgent: false, reasons: [{ kind: 'keyword', term: 'x' }] }],
    }));
    const before = { ...store.calls };
    const storyBefore = { ...storyStore.calls };
    const ledgerBefore = ledgerCalls;
    let written = 0;
    let units = 0;
    store.beforeWrite = (record) => {
      const bytes = bytesOf(record);
      written += bytes;
      units += Math.ceil(bytes / 1024);
    };
    const step = new SpikeStep({
      store,
      state,
      stories,
      log: silentLog,
      now: () => clock,
      rules,
      audiences,
    });
    const cpu = process.cpuUsage();
    step.observe(matches);
    const offered: AudienceMatch[] = [];
    await step.deliver({
      add: async (spikeMatches) => {
        offered.push(...spikeMatches);
      },
      flush: async () => {},
    });
    const used = process.cpuUsage(cpu);
    const touched = new Set(articles.map((article) => article.ruleId)).size;
    runs.push({
      label,
      cpuMs: (used.user + used.system) / 1000,
      rulesTouched: label.startsWith('first') ? optedIn : touched,
      articles: articles.length,
      requests: {
        spikeReads: store.calls.reads - before.reads,
        spikeKeysRead: store.calls.keysRead - before.keysRead,
        spikeWrites: store.calls.writes - before.writes,
        heartbeat:
          store.calls.heartbeatReads - before.heartbeatReads + store.calls.heartbeatWrites - before.heartbeatWrites,
        storyIndex: Object.entries(storyStore.calls).reduce(
          (sum, [name, calls]) => sum + calls - (storyBefore[name as keyof typeof storyBefore] ?? 0),
          0,
        ),
        ledger: ledgerCalls - ledgerBefore,
      },
      bytesWritten: written,
      writeUnits: units,
    });
  }
  return {
    rules: options.rules,
    optedIn,
    recordBytes: { median: sizes[Math.floor(sizes.length / 2)] ?? 0, max: sizes.at(-1) ?? 0 },
    runs,
  };
}
