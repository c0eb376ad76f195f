/**
 * Scores spike detection on the labelled news replay (bench/spikes/replay.ts): the production
 * counting and detector (functions/core/spikes/record.ts `countStories` and `evaluateCompleted`,
 * over the real story index `StoryResolver`) at each preset, against two baselines on the same
 * data: mean + kσ of the last seven days of hourly story counts, and the balanced detector on raw
 * article counts (no story collapse).
 *
 * Runs happen every 15 minutes of simulated time: each run's articles are those published since
 * the last run, assigned to stories in one call (as the alert run does), and counted; the first
 * run of each hour evaluates the hour that ended. What is scored (docs/spikes.md "Measured"):
 *
 * - a burst is found when an alert opens in a bucket from its onset to two hours after its end;
 *   the first such alert is a hit, with delay = its bucket − the onset bucket;
 * - every other alert is a false alarm (a second alert in one burst too), except one alert within
 *   a day after a labelled level shift, which is allowed (neither hit nor false alarm);
 * - precision = hits / (hits + false alarms), recall = hits / bursts, false alarms per rule-week
 *   over the weeks after the first (bursts start after it; warm-up is three days).
 */
import type { Article } from '#core/model';
import { SPIKE_PRESETS, type SpikePreset } from '#core/spikes/detector';
import {
  bucketOf,
  countStories,
  evaluateCompleted,
  newSpikeRecord,
  type SpikeRecord,
  type StorySighting,
} from '#core/spikes/record';
import { StoryResolver } from '#core/story';
import { MemoryStoryStore } from '../../test/support/memory-story-store.ts';
import { median } from '../stats.ts';
import { Replay, type ReplayOptions } from './replay.ts';

const HOUR = 3_600_000;
const WEEK = 7 * 24 * HOUR;
const RUN_EVERY = 15 * 60_000;

/** A method's alerts: rule id → opening buckets. */
type Alerts = Map<string, number[]>;

export interface MethodScore {
  readonly method: string;
  readonly alerts: number;
  readonly hits: number;
  readonly bursts: number;
  readonly falseAlarms: number;
  readonly allowedAtShifts: number;
  readonly precision: number;
  readonly recall: number;
  readonly medianDelay: number;
  readonly falseAlarmsPerRuleWeek: number;
  /** False alarms at syndication storms (one story, many copies). */
  readonly stormAlarms: number;
}

export interface NewsReplayResults {
  readonly options: ReplayOptions;
  readonly articles: number;
  readonly stories: number;
  readonly bursts: number;
  readonly shifts: number;
  readonly storms: number;
  readonly scores: readonly MethodScore[];
  /** Wall and CPU time of the replay (one pass, every method). */
  readonly ms: number;
}

/** Runs the replay and scores every method. */
export async function runNewsReplay(
  options: ReplayOptions,
  progress?: (line: string) => void,
): Promise<NewsReplayResults> {
  const started = performance.now();
  const replay = new Replay(options);
  let clock = options.start;
  const stories = new StoryResolver(new MemoryStoryStore({ now: () => clock }));
  type Method = { name: string; raw: boolean; preset: SpikePreset };
  const methods: Method[] = [
    ...SPIKE_PRESETS.map((preset) => ({ name: preset, raw: false, preset })),
    { name: 'raw articles (balanced, no story collapse)', raw: true, preset: 'balanced' },
  ];
  const records = new Map<string, SpikeRecord>();
  const alerts = new Map<string, Alerts>(methods.map((method) => [method.name, new Map()]));
  /** Hourly story counts per rule (the balanced record's), for the mean + kσ baseline. */
  const hourly = new Map<string, Map<number, number>>();
  const keyOf = (method: Method, ruleId: string) => `${method.name}\u0000${ruleId}`;
  for (const rule of replay.rules) {
    for (const method of methods) {
      records.set(keyOf(method, rule.ruleId), newSpikeRecord(rule.ruleId, 'bench', method.preset, options.start - 1));
    }
    hourly.set(rule.ruleId, new Map());
  }
  let articlesSeen = 0;
  const storyIds = new Set<string>();
  let lastHour = bucketOf(options.start);
  let previous = options.start;
  for (let now = options.start + RUN_EVERY; now <= replay.end; now += RUN_EVERY) {
    clock = now;
    const articles = replay.articlesBetween(previous, now);
    previous = now;
    articlesSeen += articles.length;
    // One assign per run, as the alert run's spike step does: copies in the same run share a story.
    const assigned = articles.length === 0 ? new Map() : await stories.assign(articles, { now });
    const byRule = new Map<string, { story: StorySighting[]; raw: StorySighting[] }>();
    for (const article of articles) {
      const assignment = assigned.get(article.key);
      if (assignment?.firstSeenAt === undefined) continue;
      storyIds.add(assignment.storyId);
      let entry = byRule.get(article.ruleId);
      if (entry === undefined) {
        entry = { story: [], raw: [] };
        byRule.set(article.ruleId, entry);
      }
      const sighting = sightingOf(article, assignment.storyId, assignment.firstSeenAt);
      entry.story.push(sighting);
      // Without story collapse every article is a story of its own, first seen when read.
      entry.raw.push({ ...sighting, storyId: article.key, firstSeenAt: now });
    }
    for (const [ruleId, entry] of byRule) {
      for (const method of methods) {
        const key = keyOf(method, ruleId);
        const record = records.get(key) as SpikeRecord;
        records.set(key, countStories(record, method.raw ? entry.raw : entry.story, now).record);
      }
    }
    const hour = bucketOf(now);
    if (hour !== lastHour) {
      lastHour = hour;
      for (const rule of replay.rules) {
        for (const method of methods) {
          const key = keyOf(method, rule.ruleId);
          const outcome = evaluateCompleted(records.get(key) as SpikeRecord, now);
          records.set(key, outcome.record);
          for (const bucket of outcome.buckets) {
            if (bucket.event === 'open') pushAlert(alerts.get(method.name) as Alerts, rule.ruleId, bucket.bucket);
            if (method.name === 'balanced' && bucket.count >= 0)
              hourly.get(rule.ruleId)?.set(bucket.bucket, bucket.count);
          }
        }
      }
      if (progress !== undefined && (hour - bucketOf(options.start)) % (24 * 7) === 0) {
        progress(`news replay: week ${Math.round((hour - bucketOf(options.start)) / (24 * 7))} of ${options.weeks}`);
      }
    }
  }
  for (const k of [3]) alerts.set(`mean + ${k}σ, last 7 days (story counts)`, meanSigmaAlerts(hourly, k));
  const scores = [...alerts].map(([method, found]) => scoreMethod(method, found, replay));
  return {
    options,
    articles: articlesSeen,
    stories: storyIds.size,
    bursts: replay.bursts().length,
    shifts: replay.rules.filter((rule) => rule.shift !== undefined).length,
    storms: replay.rules.length,
    scores,
    ms: performance.now() - started,
  };
}

function sightingOf(article: Article, storyId: string, firstSeenAt: number): StorySighting {
  return {
    storyId,
    firstSeenAt,
    publishedAt: article.publishedAt,
    title: article.title,
    url: article.url,
    outlet: article.mediaName ?? article.media,
  };
}

function pushAlert(alerts: Alerts, ruleId: string, bucket: number): void {
  const list = alerts.get(ruleId);
  if (list === undefined) alerts.set(ruleId, [bucket]);
  else list.push(bucket);
}

/**
 * The mean + kσ baseline (what Brandwatch-style tools document): the mean and standard deviation
 * of the last 168 hourly story counts; an alert on the first hour above mean + kσ after one that
 * was not (one alert per run of high hours), after three days of history.
 */
function meanSigmaAlerts(hourly: ReadonlyMap<string, ReadonlyMap<number, number>>, k: number): Alerts {
  const alerts: Alerts = new Map();
  for (const [ruleId, counts] of hourly) {
    const buckets = [...counts.keys()].sort((a, b) => a - b);
    let above = false;
    for (const bucket of buckets) {
      const history: number[] = [];
      for (let b = bucket - 168; b < bucket; b++) {
        const value = counts.get(b);
        if (value !== undefined) history.push(value);
      }
      if (history.length < 72) continue;
      const mean = history.reduce((sum, value) => sum + value, 0) / history.length;
      const sd = Math.sqrt(history.reduce((sum, value) => sum + (value - mean) ** 2, 0) / history.length);
      const isAbove = (counts.get(bucket) as number) > mean + k * sd;
      if (isAbove && !above) pushAlert(alerts, ruleId, bucket);
      above = isAbove;
    }
  }
  return alerts;
}

function scoreMethod(method: string, alerts: Alerts, replay: Replay): MethodScore {
  const bursts = replay.bursts();
  const found = new Set<string>();
  const delays: number[] = [];
  let hits = 0;
  let falseAlarms = 0;
  let allowed = 0;
  let stormAlarms = 0;
  let total = 0;
  const firstScored = bucketOf(replay.options.start + WEEK);
  for (const rule of replay.rules) {
    const list = [...(alerts.get(rule.ruleId) ?? [])].sort((a, b) => a - b);
    let shiftUsed = false;
    for (const bucket of list) {
      if (bucket < firstScored) continue;
      total += 1;
      const burst = bursts.find(
        (candidate) =>
          candidate.ruleId === rule.ruleId &&
          bucket >= bucketOf(candidate.onset) &&
          bucket <= bucketOf(candidate.onset) + candidate.hours + 1,
      );
      const id = burst === undefined ? undefined : `${burst.ruleId}@${burst.onset}`;
      if (burst !== undefined && id !== undefined && !found.has(id)) {
        found.add(id);
        hits += 1;
        delays.push(bucket - bucketOf(burst.onset));
        continue;
      }
      if (
        burst === undefined &&
        !shiftUsed &&
        rule.shift !== undefined &&
        bucket >= bucketOf(rule.shift.at) &&
        bucket <= bucketOf(rule.shift.at) + 24
      ) {
        shiftUsed = true;
        allowed += 1;
        continue;
      }
      falseAlarms += 1;
      if (bucket >= bucketOf(rule.storm.at) && bucket <= bucketOf(rule.storm.at) + 2) stormAlarms += 1;
    }
  }
  const weeks = replay.options.weeks - 1;
  return {
    method,
    alerts: total,
    hits,
    bursts: bursts.length,
    falseAlarms,
    allowedAtShifts: allowed,
    precision: hits + falseAlarms === 0 ? Number.NaN : hits / (hits + falseAlarms),
    recall: bursts.length === 0 ? Number.NaN : hits / bursts.length,
    medianDelay: delays.length === 0 ? Number.NaN : median(delays),
    falseAlarmsPerRuleWeek: falseAlarms / (replay.rules.length * weeks),
    stormAlarms,
  };
}
