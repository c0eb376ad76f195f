/**
 * A small world for spike-alert tests: a seeded supply of distinct headlines (so stories only
 * collapse when a test makes copies on purpose), rules and audiences with spike alerts, and a
 * driver that plays hourly runs of the spike step the way the alert run calls it (observe, flush,
 * deliver through a real DeliveryPipeline over the in-memory ports, a real story index).
 */
import { DeliveryPipeline, emptyDeliveryCounts } from '#core/delivery-pipeline';
import { type Article, type Audience, type AudienceMatch, AudienceSchema, type Rule, RuleSchema } from '#core/model';
import type { EpisodeAlert } from '#core/spikes/record';
import { SpikeStep } from '#core/spikes/step';
import { StoryResolver } from '#core/story';
import { HoldingMemoryStateStore, MemoryNotifier, memoryLog } from './fake-ports.ts';
import { MemorySpikeStore } from './memory-spike-store.ts';
import { MemoryStoryStore } from './memory-story-store.ts';

export const HOUR = 3_600_000;

/** Mulberry32: a small seeded generator (tests and the bench need the same draws every time). */
export function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const WORDS =
  'harbour council budget orchard railway festival glacier tariff vaccine stadium museum copper drought satellite bridge pension lithium ferry election wildfire senate harvest robotics bakery court refinery airline census reservoir startup typhoon embassy coral pipeline tribunal vineyard quarry subway ballot telescope freight clinic forest turbine'.split(
    ' ',
  );

/** Headlines that share no wording to speak of: each is its own story to the index. */
export function headlines(seed: number): () => string {
  const random = seeded(seed);
  let n = 0;
  return () => {
    n += 1;
    const pick = () => WORDS[Math.floor(random() * WORDS.length)] as string;
    return `${pick()} ${pick()} ${pick()} ${pick()} ${pick()} report ${n} ${Math.floor(random() * 1e9).toString(36)}`;
  };
}

export function spikeAudience(audienceId = 'desk', extra: Record<string, unknown> = {}): Audience {
  return AudienceSchema.parse({
    audienceId,
    name: 'Desk',
    topicArn: `arn:aws:sns:us-east-1:123456789012:news-alerts-audience-${audienceId}`,
    timeZone: 'UTC',
    ...extra,
  });
}

export function spikeRule(ruleId = 'chips', audienceId = 'desk', extra: Record<string, unknown> = {}): Rule {
  return RuleSchema.parse({ ruleId, audienceId, keywords: ['semiconductor'], spikes: 'balanced', ...extra });
}

/** An article the rule matched; `copyOf` makes it a syndicated copy of that headline. */
export function spikeArticle(key: string, title: string, publishedAt: number, media = 'M001'): Article {
  return {
    key: `id:${key}`,
    id: key,
    title,
    summary: `${title}. Officials said more details would follow later in the week.`,
    url: `https://news.example.com/${encodeURIComponent(key)}`,
    publishedAt,
    categories: ['002000000'],
    categoryNames: ['Economy'],
    media,
    mediaName: `Outlet ${media}`,
    status: 'PUBLISHED',
  };
}

/**
 * A spike episode as the run fixes it when it opens (functions/core/spikes/record.ts): 57 new
 * stories against 0.8 expected since three hours before `publishedAt`, opened an hour before it,
 * on the balanced preset. Tests give the stories and outlets they show.
 */
export function spikeEpisode(
  publishedAt: number,
  shown: Pick<EpisodeAlert, 'episodeId' | 'topStories' | 'topOutlets'>,
): EpisodeAlert {
  const hour = Math.floor(publishedAt / HOUR);
  return {
    ...shown,
    openedAt: hour - 1,
    since: hour - 3,
    preset: 'balanced',
    bucketMs: HOUR,
    observed: 57,
    expected: 0.8,
    bucketCount: 31,
    bucketExpected: 0.3,
    outletCount: 23,
    stage: 'spike',
    storiesSoFar: 57,
    expectedSoFar: 0.8,
  };
}

/**
 * The email tests' spike: rule `rates` ("Interest rate decisions") on the balanced preset, and an
 * episode published at `publishedAt` whose top stories are in English and Korean.
 */
export function ratesSpike(audienceId: string, publishedAt: number): { rule: Rule; episode: EpisodeAlert } {
  const rule = RuleSchema.parse({
    ruleId: 'rates',
    audienceId,
    description: 'Interest rate decisions',
    keywords: ['interest rate'],
    spikes: 'balanced',
  });
  const episode = spikeEpisode(publishedAt, {
    episodeId: 'e1',
    topStories: [
      { storyId: 's1', title: 'Central bank signals rate cut', url: 'https://news.example.com/a/1', outlets: 14 },
      { storyId: 's2', title: '기준금리 인하 신호에 은행주 약세', url: 'https://news.example.kr/b/2', outlets: 6 },
    ],
    topOutlets: [{ name: 'Example Wire', stories: 12 }],
  });
  return { rule, episode };
}

/** Plays runs of the spike step over shared in-memory state. */
export class SpikeWorld {
  readonly spikes = new MemorySpikeStore();
  readonly state = new HoldingMemoryStateStore();
  readonly notifier = new MemoryNotifier();
  readonly log = memoryLog();
  clock: number;
  readonly stories: StoryResolver;
  readonly counts = emptyDeliveryCounts();

  constructor(
    start: number,
    /** The rules that ask for spikes; a test turns one off and on by changing the list. */
    public rules: readonly Rule[],
    readonly audiences: readonly Audience[],
  ) {
    this.clock = start;
    this.stories = new StoryResolver(new MemoryStoryStore({ now: () => this.clock }));
  }

  /** One run at `at`: observes the matches of `articles` for every rule (all match), then delivers. */
  async run(
    at: number,
    articles: readonly Article[],
    options: { readonly step?: (step: SpikeStep) => Promise<void> } = {},
  ) {
    this.clock = at;
    const audiences = new Map(this.audiences.map((audience) => [audience.audienceId, audience]));
    const step = new SpikeStep({
      store: this.spikes,
      state: this.state,
      stories: this.stories,
      log: this.log,
      now: () => this.clock,
      rules: this.rules,
      audiences,
    });
    const matches: AudienceMatch[] = [];
    for (const rule of this.rules) {
      for (const article of articles) {
        matches.push({
          audienceId: rule.audienceId,
          article,
          rules: [{ ruleId: rule.ruleId, urgent: false, reasons: [{ kind: 'keyword', term: 'semiconductor' }] }],
        });
      }
    }
    step.observe(matches);
    if (options.step !== undefined) {
      await options.step(step);
      return step;
    }
    await step.deliver(this.pipeline());
    return step;
  }

  pipeline(): DeliveryPipeline {
    return new DeliveryPipeline({
      state: this.state,
      notifier: this.notifier,
      log: this.log,
      stories: this.stories,
      now: () => this.clock,
      audiences: new Map(this.audiences.map((audience) => [audience.audienceId, audience])),
      ledgerFlushDelayMs: 0,
      publishSignal: new AbortController().signal,
      lateBefore: 0,
      counts: this.counts,
      applyDeliveryPreferences: true,
    });
  }

  /** Spike alerts published so far (article keys starting `spike:`), in order. */
  spikeMessages() {
    return this.notifier.published.filter((message) => message.key.articleKey.startsWith('spike:'));
  }
}

/**
 * Plays `hours` hourly runs from `start`, each with `perHour(hour)` fresh stories published in
 * the half hour before the run (a quiet baseline for the detector to learn).
 */
export async function playBaseline(
  world: SpikeWorld,
  start: number,
  hours: number,
  perHour: (hour: number) => number,
  seed = 7,
): Promise<number> {
  const next = headlines(seed);
  for (let hour = 0; hour < hours; hour++) {
    const at = start + hour * HOUR + 50 * 60_000;
    const articles = Array.from({ length: perHour(hour) }, (_, i) =>
      spikeArticle(`b${hour}-${i}`, next(), at - (i + 1) * 60_000),
    );
    await world.run(at, articles);
  }
  return start + hours * HOUR;
}

/** A NAB-format series: five-minute counts with a daily rhythm and one burst, from a seed. */
export function syntheticSeries(rows: number, seed: number, burstAt: number): string {
  const random = seeded(seed);
  const start = Date.UTC(2015, 1, 26, 21, 42, 53);
  const lines = ['timestamp,value'];
  for (let i = 0; i < rows; i++) {
    const hour = Math.floor((i * 5) / 60) % 24;
    const mean = 20 * (hour < 7 ? 0.4 : 1.2);
    let count = 0;
    for (let p = random(); p > Math.exp(-mean); p *= random()) count += 1;
    if (i >= burstAt && i < burstAt + 6) count += 400;
    const time = new Date(start + i * 5 * 60_000).toISOString().replace('T', ' ').slice(0, 19);
    lines.push(`${time},${count}`);
  }
  return `${lines.join('\n')}\n`;
}
