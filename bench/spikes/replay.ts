/**
 * The labelled news replay of the spike bench (issue 34, part b): a seeded generator of provider
 * history for many rules over weeks of simulated time, with the bursts labelled by construction.
 *
 * Per rule (all draws from {@link mulberry32} streams of one seed, so a seed is the whole data set):
 * - a base rate of new stories per hour, log-uniform in [0.4, 6];
 * - a daily rhythm in the provider's zone (Asia/Seoul: quiet at night, a morning peak, a lower
 *   evening) and a weekly one (weekends at 0.35-0.8 of weekdays), both drawn per rule;
 * - a slow drift (the rate ends the period at 0.6-1.6 times where it started, exponentially);
 * - for 30% of rules, a level shift (×0.45-0.6 or ×1.7-2.6, for good) at a random hour of weeks 3-7;
 * - gamma noise on each hour's rate (shape 6: counts vary more than Poisson, as news does);
 * - syndication: 35% of stories are republished by 2-8 other outlets within 40 minutes, rewritten
 *   the way the news simulator rewrites wire copy (sandbox/news-simulator-data.ts
 *   `rewriteForOutlet`: prefixes such as `[속보]`, credits, shortened leads, reordered clauses);
 * - bursts (the labels): 1-3 per rule after the first week, each with a known onset, a duration of
 *   1-6 hours and a size of 4-12 times the rule's usual rate in that hour (at least 6 more stories
 *   an hour: a jump a reader notices), extra new stories, themselves syndicated like any;
 * - syndication storms (negatives): once per rule, one wire story republished 60-200 times within
 *   an hour. Counted as stories it is one; counted as articles it looks like a burst.
 *
 * Headlines are drawn from a seeded vocabulary so that only copies of a story are alike to the
 * story index; outlets are the simulator's ({@link MEDIA}, {@link SYNDICATION_MEDIA}).
 *
 * The generator streams: {@link Replay.articlesBetween} hands out what was published in a time
 * range (copies included), so eight weeks of fifty rules never sit in memory at once.
 */
import type { Article } from '#core/model';
import { MEDIA, mulberry32, rewriteForOutlet, type SimMedia, SYNDICATION_MEDIA } from '#sandbox/news-simulator-data';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const WEEK = 7 * DAY;

export interface ReplayOptions {
  readonly seed: number;
  readonly rules: number;
  readonly weeks: number;
  /** First instant (epoch ms, a Monday 00:00 UTC keeps weeks aligned in the report). */
  readonly start: number;
}

/** A labelled burst. */
export interface ReplayBurst {
  readonly ruleId: string;
  readonly onset: number;
  readonly hours: number;
  /** Extra new stories per hour (on top of the rule's usual count). */
  readonly extraPerHour: number;
}

/** A level shift: alerting once at it is allowed (neither hit nor false alarm); again is a false alarm. */
export interface ReplayShift {
  readonly ruleId: string;
  readonly at: number;
  readonly factor: number;
}

/** A syndication storm: one story, many copies (a negative). */
export interface ReplayStorm {
  readonly ruleId: string;
  readonly at: number;
  readonly copies: number;
}

/** One rule's draws. */
export interface ReplayRule {
  readonly ruleId: string;
  readonly baseRate: number;
  readonly daily: readonly number[];
  readonly weekend: number;
  /** Rate multiplier at the end of the period (drift). */
  readonly drift: number;
  readonly shift?: ReplayShift | undefined;
  readonly bursts: readonly ReplayBurst[];
  readonly storm: ReplayStorm;
}

/** An article of the replay, with the rule it was generated for. */
export interface ReplayArticle extends Article {
  readonly ruleId: string;
}

const WORDS = (
  'harbour council budget orchard railway festival glacier tariff vaccine stadium museum copper drought ' +
  'satellite bridge pension lithium ferry election wildfire senate harvest robotics bakery court refinery ' +
  'airline census reservoir startup typhoon embassy coral pipeline tribunal vineyard quarry subway ballot ' +
  'telescope freight clinic forest turbine lagoon archive canal pharmacy shipyard rainfall theatre mayor ' +
  'bond crater dialect tunnel orchestra cathedral monsoon vaccine semiconductor battery aviation fishery'
).split(' ');

/** Hourly shape of a day (provider-local hour 0-23), before each rule's own variation. */
const DAILY = [
  0.2, 0.15, 0.12, 0.12, 0.15, 0.3, 0.6, 1.0, 1.4, 1.6, 1.6, 1.5, 1.3, 1.4, 1.5, 1.4, 1.3, 1.2, 1.0, 0.9, 0.8, 0.6,
  0.45, 0.3,
];
/** Asia/Seoul has no daylight saving time: provider-local hours are UTC + 9. */
const ZONE_OFFSET_HOURS = 9;

/** A gamma draw with shape `k` and mean 1 (Marsaglia–Tsang), for overdispersed rates. */
function gammaMeanOne(rng: () => number, k: number): number {
  const d = k - 1 / 3;
  const c = 1 / Math.sqrt(9 * d);
  for (;;) {
    let x: number;
    let v: number;
    do {
      // Box–Muller normal.
      const u1 = Math.max(rng(), 1e-12);
      x = Math.sqrt(-2 * Math.log(u1)) * Math.cos(2 * Math.PI * rng());
      v = 1 + c * x;
    } while (v <= 0);
    v = v * v * v;
    const u = rng();
    if (u < 1 - 0.0331 * x ** 4 || Math.log(u) < 0.5 * x * x + d * (1 - v + Math.log(v))) return (d * v) / k;
  }
}

function poisson(rng: () => number, mean: number): number {
  if (mean <= 0) return 0;
  if (mean > 60)
    return Math.max(
      0,
      Math.round(
        mean + Math.sqrt(mean) * Math.sqrt(-2 * Math.log(Math.max(rng(), 1e-12))) * Math.cos(2 * Math.PI * rng()),
      ),
    );
  const limit = Math.exp(-mean);
  let k = 0;
  let p = rng();
  while (p > limit) {
    k += 1;
    p *= rng();
  }
  return k;
}

export class Replay {
  readonly options: ReplayOptions;
  readonly rules: readonly ReplayRule[];
  readonly end: number;
  /** Articles generated but not handed out yet (copies published later), by time. */
  #pending: ReplayArticle[] = [];
  /** The next whole hour not generated yet. */
  #nextHour: number;
  readonly #rng: () => number;
  #serial = 0;

  constructor(options: ReplayOptions) {
    this.options = options;
    this.end = options.start + options.weeks * WEEK;
    this.#nextHour = options.start;
    const setup = mulberry32(options.seed);
    this.#rng = mulberry32((options.seed ^ 0x9e3779b9) >>> 0);
    const rules: ReplayRule[] = [];
    for (let r = 0; r < options.rules; r++) {
      const ruleId = `replay-${String(r + 1).padStart(3, '0')}`;
      const baseRate = Math.exp(Math.log(0.4) + setup() * Math.log(6 / 0.4));
      const daily = DAILY.map((value) => value * (0.8 + 0.4 * setup()));
      const weekend = 0.35 + 0.45 * setup();
      const drift = 0.6 + setup();
      const shift =
        setup() < 0.3
          ? {
              ruleId,
              at: options.start + (2 + setup() * 4.5) * WEEK,
              factor: setup() < 0.5 ? 0.45 + 0.15 * setup() : 1.7 + 0.9 * setup(),
            }
          : undefined;
      const bursts: ReplayBurst[] = [];
      const count = 1 + Math.floor(setup() * 3);
      for (let b = 0; b < count; b++) {
        // Onsets spread over the weeks after the first, on whole hours, apart from each other.
        const span = options.weeks * WEEK - WEEK - DAY;
        const onset = options.start + WEEK + Math.floor((setup() * span) / HOUR) * HOUR;
        if (bursts.some((other) => Math.abs(other.onset - onset) < 3 * DAY)) continue;
        if (shift !== undefined && Math.abs(shift.at - onset) < 2 * DAY) continue;
        bursts.push({ ruleId, onset, hours: 1 + Math.floor(setup() * 6), extraPerHour: 4 + setup() * 8 });
      }
      const stormAt = options.start + WEEK + Math.floor((setup() * (options.weeks - 1.2) * WEEK) / HOUR) * HOUR;
      rules.push({
        ruleId,
        baseRate,
        daily,
        weekend,
        drift,
        shift,
        bursts: bursts.sort((a, b) => a.onset - b.onset),
        storm: { ruleId, at: stormAt + Math.floor(setup() * 50) * 60_000, copies: 60 + Math.floor(setup() * 141) },
      });
    }
    this.rules = rules;
  }

  /** Every labelled burst, with its size in new stories an hour resolved against the rule's usual rate. */
  bursts(): ReplayBurst[] {
    return this.rules.flatMap((rule) =>
      rule.bursts.map((burst) => ({ ...burst, extraPerHour: this.#burstExtra(rule, burst) })),
    );
  }

  /** The rule's usual rate of new stories in the hour starting at `at` (no noise, no bursts). */
  usualRate(rule: ReplayRule, at: number): number {
    const local = new Date(at + ZONE_OFFSET_HOURS * HOUR);
    const hour = local.getUTCHours();
    const weekday = local.getUTCDay();
    const weekly = weekday === 0 || weekday === 6 ? rule.weekend : 1;
    const progress = (at - this.options.start) / (this.end - this.options.start);
    const drift = rule.drift ** progress;
    const shift = rule.shift !== undefined && at >= rule.shift.at ? rule.shift.factor : 1;
    return rule.baseRate * (rule.daily[hour] as number) * weekly * drift * shift;
  }

  #burstExtra(rule: ReplayRule, burst: ReplayBurst): number {
    // The burst's size factor times the rule's usual rate at onset, at least six stories an hour.
    return Math.max(6, burst.extraPerHour * this.usualRate(rule, burst.onset));
  }

  /** Articles published in [from, to), in time order; call with consecutive ranges. */
  articlesBetween(from: number, to: number): ReplayArticle[] {
    while (this.#nextHour < to && this.#nextHour < this.end) {
      this.#generateHour(this.#nextHour);
      this.#nextHour += HOUR;
    }
    this.#pending.sort((a, b) => a.publishedAt - b.publishedAt);
    const split = this.#pending.findIndex((article) => article.publishedAt >= to);
    const due = this.#pending.splice(0, split === -1 ? this.#pending.length : split);
    return due.filter((article) => article.publishedAt >= from);
  }

  #generateHour(hour: number): void {
    const rng = this.#rng;
    for (const rule of this.rules) {
      let mean = this.usualRate(rule, hour) * gammaMeanOne(rng, 6);
      for (const burst of rule.bursts) {
        if (hour >= burst.onset && hour < burst.onset + burst.hours * HOUR) mean += this.#burstExtra(rule, burst);
      }
      const stories = poisson(rng, mean);
      for (let s = 0; s < stories; s++)
        this.#story(rule, hour + Math.floor(rng() * HOUR), rng() < 0.35 ? 2 + Math.floor(rng() * 7) : 0);
      if (rule.storm.at >= hour && rule.storm.at < hour + HOUR) this.#story(rule, rule.storm.at, rule.storm.copies, 40);
    }
  }

  /** One new story for `rule` at `at`, with `copies` syndicated copies within `spreadMinutes`. */
  #story(rule: ReplayRule, at: number, copies: number, spreadMinutes = 40): void {
    const rng = this.#rng;
    this.#serial += 1;
    const words = Array.from({ length: 6 }, () => WORDS[Math.floor(rng() * WORDS.length)] as string);
    const tag = Math.floor(rng() * 36 ** 5).toString(36);
    const title = `${capital(words[0] as string)} ${words[1]} ${words[2]} ${words[3]}, ${words[4]} ${words[5]} ${tag}`;
    const summary = `${title}: officials in ${words[5]} said on Monday that ${words[2]} talks on the ${words[1]} ${words[3]} would continue, ${tag} sources said.`;
    const pool = [...MEDIA.slice(0, 7)];
    const media = pool[Math.floor(rng() * pool.length)] as SimMedia;
    const original = this.#article(rule.ruleId, `s${this.#serial}`, at, title, summary, media);
    this.#pending.push(original);
    const outlets = [...MEDIA.slice(0, 7), ...SYNDICATION_MEDIA].filter((outlet) => outlet.code !== media.code);
    for (let c = 0; c < copies; c++) {
      const outlet = outlets[Math.floor(rng() * outlets.length)] as SimMedia;
      const text = rewriteForOutlet(rng, { title, summary }, outlet);
      const publishedAt = at + 1000 * (1 + Math.floor(rng() * spreadMinutes * 60));
      this.#pending.push(
        this.#article(rule.ruleId, `s${this.#serial}c${c}`, publishedAt, text.title, text.summary, outlet),
      );
    }
  }

  #article(
    ruleId: string,
    id: string,
    publishedAt: number,
    title: string,
    summary: string,
    media: SimMedia,
  ): ReplayArticle {
    return {
      ruleId,
      key: `id:${id}`,
      id,
      title,
      summary,
      url: `https://news.example.com/${media.code.toLowerCase()}/${id}`,
      publishedAt,
      categories: ['002000000'],
      categoryNames: ['Economy'],
      media: media.code,
      mediaName: media.name,
      status: 'PUBLISHED',
    };
  }
}

const capital = (word: string): string => `${word.charAt(0).toUpperCase()}${word.slice(1)}`;
