/**
 * The spike step of an alert run: what the run calls to count the stories its rules matched, to
 * evaluate the hours that ended, and to hand the alerts of new episodes to its delivery pipeline.
 * The run stays in charge of order (functions/core/alert-run.ts):
 *
 * 1. {@link SpikeStep.observe} with every batch of matches (synchronous, in memory);
 * 2. {@link SpikeStep.flush} before the watermark moves past a provider day, so what a crash
 *    loses is read again by the next run (the watermark did not move) and counted then:
 *    counting is idempotent (record.ts), so reading twice never counts twice;
 * 3. {@link SpikeStep.deliver} once the days are read: evaluates the buckets that completed
 *    (records written BEFORE any alert goes out), offers the alert of every episode whose
 *    alert the ledger does not hold yet to the pipeline (ledger, digests, quiet hours, budgets
 *    apply; one ledger key per episode, `spike:<ruleId>:<episodeId>`), then marks the ones the
 *    ledger now holds as settled, and records the run's heartbeat.
 *
 * So no spike alert is lost (an episode's alert is offered on every run until the ledger holds
 * it) or sent twice (the ledger holds the key; an episode re-evaluated after a crash gets the same
 * id), and no story is counted twice.
 */
import type { Article, Audience, AudienceMatch, Rule } from '../model.ts';
import type { DeliveryKey, Log, StateStore, StoryIndex } from '../ports.ts';
import { deliveryId } from '../ports.ts';
import type { RenderOptions } from '../render.ts';
import { storyIdOf } from '../story.ts';
import { spikeAlertKey, spikeAlertMatch } from './alert.ts';

import type { SpikePreset } from './detector.ts';
import { type SpikeHeartbeat, SpikeRecordConflictError, type SpikeStore } from './ports.ts';
import {
  bucketOf,
  countStories,
  type EpisodeAlert,
  evaluateCompleted,
  evaluatedThrough,
  newSpikeRecord,
  rankAlert,
  SPIKE_BUCKET_MS,
  type SpikeRecord,
  type StorySighting,
} from './record.ts';

/** The rule attribute's values: a preset, or `off`. */
export type SpikeSetting = SpikePreset | 'off';

/** The preset a rule asks for, or undefined when it does not want spike alerts. */
export const spikePresetOf = (rule: Pick<Rule, 'spikes'>): SpikePreset | undefined =>
  rule.spikes === undefined || rule.spikes === 'off' ? undefined : rule.spikes;

/** Rules with unsettled alerts the heartbeat lists; beyond it the next run reads every rule. */
const MAX_HEARTBEAT_UNSETTLED = 1000;

/**
 * How long after its episode closed an alert the ledger still lacks is offered (a run that failed
 * to send it, an outage of a day): then it is settled, never offered again. Shorter than the
 * shortest ledger retention the stack allows (three days), so no alert is offered once
 * its ledger entry may have expired, which would send it a second time.
 */
const SETTLE_AFTER_CLOSE_MS = 48 * 60 * 60 * 1000;

/** Whether the record's episode closed more than {@link SETTLE_AFTER_CLOSE_MS} before `now`. */
const closedLongAgo = (record: SpikeRecord, now: number): boolean =>
  record.alert?.closedAt !== undefined &&
  (bucketOf(now, record.bucketMs) - record.alert.closedAt) * record.bucketMs > SETTLE_AFTER_CLOSE_MS;

/** What the spike step did in one run (kept in the run summary as `spikes`). */
export interface SpikeRunStats {
  rules: number;
  storiesCounted: number;
  storiesLate: number;
  storiesSaturated: number;
  recordsRead: number;
  recordsWritten: number;
  conflicts: number;
  bucketsEvaluated: number;
  episodesOpened: number;
  alertsOffered: number;
  alertsSettled: number;
}

/** Where spike alerts go: the run's delivery pipeline. */
export interface SpikeDelivery {
  add(matches: readonly AudienceMatch[]): Promise<void>;
  flush(): Promise<void>;
}

export interface SpikeStepOptions {
  readonly store: SpikeStore;
  /** The ledger (to tell which alerts it holds). */
  readonly state: Pick<StateStore, 'findDelivered'>;
  readonly stories?: StoryIndex | undefined;
  readonly log: Log;
  readonly now: () => number;
  readonly rules: readonly Rule[];
  readonly audiences: ReadonlyMap<string, Audience>;
  /** How the run renders (the stack's default locale): the alert's headline is in the audience's words. */
  readonly render?: RenderOptions | undefined;
}

/** The step, or undefined when no enabled rule asks for spike alerts (nothing is read or written). */
export function spikeStepFor(
  options: Omit<SpikeStepOptions, 'store'> & { readonly store?: SpikeStore | undefined },
): SpikeStep | undefined {
  if (options.store === undefined) return undefined;
  if (!options.rules.some((rule) => spikePresetOf(rule) !== undefined)) return undefined;
  return new SpikeStep({ ...options, store: options.store });
}

export class SpikeStep {
  readonly stats: SpikeRunStats = {
    rules: 0,
    storiesCounted: 0,
    storiesLate: 0,
    storiesSaturated: 0,
    recordsRead: 0,
    recordsWritten: 0,
    conflicts: 0,
    bucketsEvaluated: 0,
    episodesOpened: 0,
    alertsOffered: 0,
    alertsSettled: 0,
  };
  readonly #options: SpikeStepOptions;
  /** Rules with spike alerts, by id. */
  readonly #rules = new Map<string, Rule & { readonly preset: SpikePreset }>();
  /** Articles seen since the last flush, by rule. */
  #seen = new Map<string, Map<string, Article>>();
  /** Records as last read or written in this run. */
  readonly #records = new Map<string, SpikeRecord>();
  #heartbeat: Promise<SpikeHeartbeat | undefined> | undefined;
  #warnedNoIndex = false;

  constructor(options: SpikeStepOptions) {
    this.#options = options;
    for (const rule of options.rules) {
      const preset = spikePresetOf(rule);
      if (preset !== undefined) this.#rules.set(rule.ruleId, { ...rule, preset });
    }
    this.stats.rules = this.#rules.size;
  }

  /** Notes the articles of spike rules among `matches` (cheap: no I/O). */
  observe(matches: readonly AudienceMatch[]): void {
    for (const match of matches) {
      for (const rule of match.rules) {
        if (!this.#rules.has(rule.ruleId)) continue;
        let articles = this.#seen.get(rule.ruleId);
        if (articles === undefined) {
          articles = new Map();
          this.#seen.set(rule.ruleId, articles);
        }
        articles.set(match.article.key, match.article);
      }
    }
  }

  /**
   * Counts what was observed since the last flush into the rules' records, evaluating any record
   * whose hour ended, and stores them (call before the watermark moves past what was observed).
   */
  async flush(): Promise<void> {
    if (this.#seen.size === 0) return;
    const changed = await this.#advance([...this.#seen.keys()]);
    await this.#write(changed);
  }

  /**
   * Evaluates the hours that ended, offers the alerts the ledger does not hold yet to `delivery`,
   * settles the ones it now holds, and records the run in the heartbeat. Call once per run, after
   * the last flush. Every rule's record is read only in the first run after an hour ended (or
   * when the last run did not finish); other runs read the rules that matched and those with an
   * alert to settle (listed in the heartbeat).
   */
  async deliver(delivery: SpikeDelivery): Promise<void> {
    const now = this.#options.now();
    const heartbeat = await this.#lastHeartbeat();
    const full = this.#needsFullPass(heartbeat, now);
    const wanted = full
      ? [...this.#rules.keys()]
      : [...new Set([...this.#seen.keys(), ...(heartbeat?.unsettled ?? []).filter((id) => this.#rules.has(id))])];
    const changed = await this.#advance(wanted, { createMissing: full });
    // Written before anything is offered: a crash after this re-offers the same episodes.
    await this.#write(changed);
    // An episode closed long ago is settled, never offered: after days idle its ledger entry may
    // have expired, and an offer would send it again.
    const stale = [...this.#records]
      .filter(([, record]) => record.alert !== undefined && !record.alert.settled && closedLongAgo(record, now))
      .map(([ruleId]) => ruleId);
    const offers = this.#offers(now);
    if (offers.length > 0) {
      this.stats.alertsOffered += offers.length;
      await delivery.add(offers.map((offer) => offer.match));
      await delivery.flush();
    }
    if (offers.length + stale.length > 0) await this.#settle([...offers.map((offer) => offer.ruleId), ...stale]);
    const unsettled = new Set(full ? [] : (heartbeat?.unsettled ?? []).filter((id) => this.#rules.has(id)));
    for (const [ruleId, record] of this.#records) {
      if (record.alert !== undefined && !record.alert.settled) unsettled.add(ruleId);
      else unsettled.delete(ruleId);
    }
    const current = bucketOf(now);
    await this.#options.store.writeHeartbeat({
      at: now,
      // Only a full pass brings every rule up to date; otherwise what the last full pass reached.
      evaluatedThrough: full ? current - 1 : (heartbeat?.evaluatedThrough ?? current - 2),
      unsettled: [...unsettled].slice(0, MAX_HEARTBEAT_UNSETTLED),
      ...(unsettled.size > MAX_HEARTBEAT_UNSETTLED ? { overflow: true } : {}),
    });
  }

  /** Whether this run must read every rule: an hour ended since the last full pass, or there is no trace of one. */
  #needsFullPass(heartbeat: SpikeHeartbeat | undefined, now: number): boolean {
    return heartbeat === undefined || heartbeat.overflow === true || heartbeat.evaluatedThrough < bucketOf(now) - 1;
  }

  /**
   * Brings the records of `ruleIds` up to date in memory: counts what was observed for them and
   * evaluates the hours that ended. Returns the records that changed (to write).
   */
  async #advance(
    ruleIds: readonly string[],
    options: { readonly createMissing?: boolean } = {},
  ): Promise<SpikeRecord[]> {
    const now = this.#options.now();
    const seen = this.#seen;
    this.#seen = new Map();
    const articles = new Map<string, Article>();
    for (const byKey of seen.values()) for (const [key, article] of byKey) articles.set(key, article);
    const stories = articles.size === 0 ? new Map() : await this.#storiesOf([...articles.values()], now);
    const heartbeat = await this.#lastHeartbeat();
    await this.#load([...new Set([...ruleIds, ...seen.keys()])]);
    const changed = new Map<string, SpikeRecord>();
    for (const ruleId of new Set([...ruleIds, ...seen.keys()])) {
      const rule = this.#rules.get(ruleId);
      if (rule === undefined) continue;
      const byKey = seen.get(ruleId);
      const stored = this.#records.get(ruleId);
      if (stored === undefined && byKey === undefined && options.createMissing !== true) continue;
      let record = stored ?? newSpikeRecord(ruleId, rule.audienceId, rule.preset, now);
      if (byKey !== undefined) record = this.#count(rule.ruleId, record, byKey, stories, now);
      if (evaluatedThrough(record) + 1 < bucketOf(now, record.bucketMs)) {
        const outcome = evaluateCompleted(record, now, {
          lastRunAt: heartbeat?.at,
          evaluatedForAllUntil:
            heartbeat === undefined ? undefined : (heartbeat.evaluatedThrough + 1) * SPIKE_BUCKET_MS,
          preset: rule.preset,
        });
        this.stats.bucketsEvaluated += outcome.buckets.length;
        record = outcome.record;
        if (outcome.opened && record.alert !== undefined) {
          this.stats.episodesOpened += 1;
          record = { ...record, alert: await this.#rank(record.alert, outcome.episodeStories ?? []) };
          this.#options.log.info('spike episode opened', {
            ruleId,
            episodeId: record.alert?.episodeId,
            observed: record.alert?.observed,
            expected: record.alert?.expected,
          });
        }
      }
      if (record !== stored) {
        changed.set(ruleId, record);
        this.#records.set(ruleId, record);
      }
    }
    return [...changed.values()];
  }

  /** One rule's sightings counted into its record. */
  #count(
    ruleId: string,
    record: SpikeRecord,
    byKey: ReadonlyMap<string, Article>,
    stories: ReadonlyMap<string, { storyId: string; firstSeenAt: number }>,
    now: number,
  ): SpikeRecord {
    const sightings: StorySighting[] = [];
    for (const article of byKey.values()) {
      const story = stories.get(article.key);
      if (story === undefined) {
        this.stats.storiesLate += 1;
        continue;
      }
      sightings.push({
        storyId: story.storyId,
        firstSeenAt: story.firstSeenAt,
        publishedAt: article.publishedAt,
        title: article.title,
        url: article.url,
        outlet: article.mediaName ?? article.media,
      });
    }
    const outcome = countStories(record, sightings, now);
    this.stats.storiesCounted += outcome.counted;
    this.stats.storiesLate += outcome.late;
    this.stats.storiesSaturated += outcome.saturated;
    if (outcome.saturated > 0) {
      this.#options.log.warn('a spike bucket is full; its count stops growing this hour', {
        ruleId,
        saturated: outcome.saturated,
      });
    }
    return outcome.record;
  }

  /** The alert of every episode the ledger may not hold yet, as matches for the pipeline. */
  #offers(now: number): { ruleId: string; match: AudienceMatch }[] {
    const offers: { ruleId: string; match: AudienceMatch }[] = [];
    for (const [ruleId, rule] of this.#rules) {
      const record = this.#records.get(ruleId);
      const alert = record?.alert;
      if (record === undefined || alert === undefined || alert.settled || closedLongAgo(record, now)) continue;
      const audience = this.#options.audiences.get(rule.audienceId);
      if (audience === undefined) continue;
      const key = spikeAlertKey(ruleId, alert.episodeId);
      const match = spikeAlertMatch({ rule, audience, alert, key, render: this.#options.render });
      if (match !== undefined) offers.push({ ruleId, match });
    }
    return offers;
  }

  /** Marks the alerts the ledger now holds (and long-closed ones) as settled: not offered again. */
  async #settle(ruleIds: readonly string[]): Promise<void> {
    const keys: (DeliveryKey & { ruleId: string })[] = [];
    for (const ruleId of ruleIds) {
      const record = this.#records.get(ruleId);
      const alert = record?.alert;
      if (record === undefined || alert === undefined) continue;
      keys.push({ ruleId, audienceId: record.audienceId, articleKey: spikeAlertKey(ruleId, alert.episodeId) });
    }
    const delivered = await this.#options.state.findDelivered(keys);
    const now = this.#options.now();
    const changed: SpikeRecord[] = [];
    for (const key of keys) {
      const record = this.#records.get(key.ruleId) as SpikeRecord;
      const alert = record.alert as EpisodeAlert;
      const held = delivered.has(deliveryId(key));
      // While open, an escalation may still have its update to send: keep offering (the ledger dedupes).
      const open = alert.closedAt === undefined;
      if ((held && !open) || closedLongAgo(record, now)) {
        changed.push({ ...record, alert: { ...alert, settled: true } });
        this.stats.alertsSettled += 1;
      }
    }
    await this.#write(changed);
  }

  /** Stories of the articles: the index's (copies share one), or each article its own without an index. */
  async #storiesOf(
    articles: readonly Article[],
    now: number,
  ): Promise<Map<string, { storyId: string; firstSeenAt: number }>> {
    const result = new Map<string, { storyId: string; firstSeenAt: number }>();
    const { stories } = this.#options;
    if (stories === undefined) {
      if (!this.#warnedNoIndex) {
        this.#options.log.warn('spike alerts without a story index count every article as its own story');
        this.#warnedNoIndex = true;
      }
      for (const article of articles) result.set(article.key, { storyId: storyIdOf(article.key), firstSeenAt: now });
      return result;
    }
    if (articles.length === 0) return result;
    const assigned = await stories.assign(articles, { now });
    for (const [key, assignment] of assigned) {
      // A story the index no longer remembers has no first sighting: it is old news, not counted.
      if (assignment.firstSeenAt !== undefined)
        result.set(key, { storyId: assignment.storyId, firstSeenAt: assignment.firstSeenAt });
    }
    return result;
  }

  /**
   * Ranks an alert's stories by their outlets, and tallies the outlets of all `episodeStories`, as
   * the story index counts them: one read of up to MAX_RANKED_SAMPLES + MAX_RANKED_STORIES
   * stories (100 a request), once per episode.
   */
  async #rank(alert: EpisodeAlert, episodeStories: readonly string[]): Promise<EpisodeAlert> {
    const { stories } = this.#options;
    const storyIds = [...new Set([...alert.topStories.map((story) => story.storyId), ...episodeStories])];
    if (stories === undefined || storyIds.length === 0) return rankAlert(alert, new Map(), storyIds);
    try {
      return rankAlert(alert, await stories.readStories(storyIds), storyIds);
    } catch (error) {
      // The ranking only orders what the alert shows: a throttled read leaves the sampled stories
      // and outlets unranked rather than failing the spike step (the alert goes out either way).
      this.#options.log.warn('spike alert stories could not be ranked by outlets; sent unranked', {
        episodeId: alert.episodeId,
        error: error instanceof Error ? error.name : 'error',
      });
      return rankAlert(alert, new Map(), storyIds);
    }
  }

  async #lastHeartbeat(): Promise<SpikeHeartbeat | undefined> {
    this.#heartbeat ??= this.#options.store.readHeartbeat();
    return this.#heartbeat;
  }

  /** Reads the records this run has not read yet. */
  async #load(ruleIds: readonly string[]): Promise<void> {
    const missing = ruleIds.filter((ruleId) => !this.#records.has(ruleId) && this.#rules.has(ruleId));
    if (missing.length === 0) return;
    const found = await this.#options.store.read(missing);
    this.stats.recordsRead += missing.length;
    for (const [ruleId, record] of found) {
      const rule = this.#rules.get(ruleId);
      // A rule moved to another audience keeps its counts; its alerts go where the rule says now.
      this.#records.set(ruleId, rule === undefined ? record : { ...record, audienceId: rule.audienceId });
    }
  }

  /**
   * Writes changed records, each conditional on its version, 16 at a time. Any failure but a
   * conflict is thrown (the run fails before its watermark moves, so the next run counts again).
   */
  async #write(records: readonly SpikeRecord[]): Promise<void> {
    const concurrency = 16;
    let next = 0;
    let failure: { error: unknown } | undefined;
    const worker = async () => {
      while (next < records.length && failure === undefined) {
        const record = records[next++] as SpikeRecord;
        try {
          // updatedAt is the last write: the record's TTL counts from it, so a rule in use keeps its history.
          const written = await this.#options.store.write({ ...record, updatedAt: this.#options.now() });
          this.#records.set(record.ruleId, written);
          this.stats.recordsWritten += 1;
        } catch (error) {
          if (!(error instanceof SpikeRecordConflictError)) {
            failure ??= { error };
            continue;
          }
          // Only a writer outside the run lease can cause this (ops editing by hand): the next run
          // reads the record afresh. What this run counted for the rule is given up, never doubled.
          this.stats.conflicts += 1;
          this.#records.delete(record.ruleId);
          this.#options.log.warn('a spike record changed while the run held it; the next run reads it again', {
            ruleId: record.ruleId,
          });
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(concurrency, records.length) }, worker));
    if (failure !== undefined) throw failure.error;
  }
}
