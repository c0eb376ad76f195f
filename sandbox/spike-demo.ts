/**
 * The spike alerts sandbox demo (`npm start -- --spike-demo`; docs/sandbox.md): the whole alert
 * job on moto and the news simulator, with one rule that asks for spike alerts, and a burst of
 * coverage the simulator schedules on its topic. It shows what the issue asks for: one spike alert
 * sent once, then updated (one update notice when the episode doubles, for an audience with
 * `updates: notify`), never repeated, while the burst's article alerts go out as usual.
 *
 * A real rule needs three days of counts before its first spike alert (the warm-up). The demo
 * gives its rule three weeks of hourly counts at its usual rate (stepped through the real detector
 * and written with the real store), then plays the runs of a few hours on a pinned clock: a run
 * every 20 minutes, through the same code path as the Lambda handler.
 */

import { isSpikeAlertKey, spikeAlertKey } from '#core/spikes/alert';
import { emptyDetectorState, PRESETS, SpikeDetector, spikeModel } from '#core/spikes/detector';
import type { SpikeStore } from '#core/spikes/ports';
import { bucketOf, newSpikeRecord, SPIKE_BUCKET_MS } from '#core/spikes/record';
import type { SandboxAudience } from './examples.ts';
import type { DeliveredNotification, LocalStack, SubscriberDelivery } from './local-stack.ts';
import { mulberry32 } from './news-simulator-data.ts';

/** The demo's topic: no seeded article names it. */
export const SPIKE_DEMO_TOPIC = 'Aurora Cell';
export const SPIKE_DEMO_RULE = 'aurora-coverage';

export const spikeDemoAudiences: readonly SandboxAudience[] = [
  {
    item: {
      audienceId: 'spike-desk',
      name: 'Spike desk',
      timeZone: 'Asia/Seoul',
      collapse: 'story',
      updates: 'notify',
      notes: 'Spike alerts demo: coverage of one company; an alert when it jumps, one notice when it doubles.',
    },
    subscribers: [{ protocol: 'email', endpoint: 'spike-desk@example.com' }, { protocol: 'slack' }],
  },
];

export const spikeDemoRules: readonly Readonly<Record<string, unknown>>[] = [
  {
    ruleId: SPIKE_DEMO_RULE,
    audienceId: 'spike-desk',
    description: `${SPIKE_DEMO_TOPIC} coverage`,
    keywords: [SPIKE_DEMO_TOPIC],
    spikes: 'balanced',
  },
];

/**
 * Gives a rule three weeks of hourly counts at `perHour` new stories an hour (a daily rhythm in
 * Seoul time: quiet nights), stepped through the real detector and written with `store`, and a
 * heartbeat as the last run before `now` would have left it: the warm-up a new rule would spend
 * counting, for the demo and the tests.
 */
export async function primeSpikeHistory(
  store: SpikeStore,
  options: {
    readonly ruleId: string;
    readonly audienceId: string;
    readonly now: number;
    readonly perHour: number;
    readonly seed?: number;
  },
): Promise<void> {
  const model = spikeModel(SPIKE_BUCKET_MS);
  const current = bucketOf(options.now);
  const detector = new SpikeDetector(model, PRESETS.balanced, emptyDetectorState(current - 21 * 24));
  const random = mulberry32(options.seed ?? 11);
  while (detector.next < current) {
    const hour = ((detector.next % 24) + 9) % 24;
    const mean = options.perHour * (hour < 7 ? 0.3 : hour < 19 ? 1.4 : 0.8);
    let count = 0;
    for (let p = random(); p > Math.exp(-mean); p *= random()) count += 1;
    detector.step(count);
  }
  const stored = (await store.read([options.ruleId])).get(options.ruleId);
  await store.write({
    ...newSpikeRecord(options.ruleId, options.audienceId, 'balanced', options.now),
    version: stored?.version ?? 0,
    detector: detector.state(),
  });
  await store.writeHeartbeat({ at: options.now - 5 * 60_000, evaluatedThrough: current - 1, unsettled: [] });
}

/** Usual new stories an hour about the topic (the primed history and the demo's quiet hours). */
const USUAL_PER_HOUR = 1.5;

export interface SpikeDemoRun {
  readonly at: number;
  readonly articleAlerts: number;
  readonly spikeAlerts: readonly DeliveredNotification[];
  readonly updates: readonly DeliveredNotification[];
  readonly episode: { readonly id: string; readonly storiesSoFar: number } | undefined;
}

export interface SpikeDemoOutcome {
  readonly runs: readonly SpikeDemoRun[];
  /** What the subscribers received for the spike alert and its update, per channel. */
  readonly inbox: readonly SubscriberDelivery[];
  /** One spike alert, at most one update notice, nothing repeated. */
  readonly ok: boolean;
  readonly problems: readonly string[];
}

/**
 * Primes the rule's history, schedules the burst and plays the runs. `stack` must have been
 * started with {@link spikeDemoAudiences} and {@link spikeDemoRules} on a clock `setClock` moves.
 */
export async function runSpikeDemo(input: {
  readonly stack: LocalStack;
  readonly now: () => number;
  readonly setClock: (at: number) => void;
  readonly onRun?: (run: SpikeDemoRun) => void;
}): Promise<SpikeDemoOutcome> {
  const { stack, now, setClock } = input;
  const start = now();
  const spikes = stack.dependencies.spikes;
  if (spikes === undefined) throw new Error('the local stack has no spike store');
  await primeSpikeHistory(spikes, {
    ruleId: SPIKE_DEMO_RULE,
    audienceId: 'spike-desk',
    now: start,
    perHour: USUAL_PER_HOUR,
  });
  const current = bucketOf(start);
  // The usual trickle, then the burst from ten minutes past the hour: 30 stories an hour for two
  // hours and 60 in the third (the episode doubles), each republished by up to four outlets.
  const simulator = stack.simulator;
  if (simulator === undefined) throw new Error('the spike demo needs the news simulator');
  const hourStart = current * SPIKE_BUCKET_MS;
  simulator.scheduleBurst({ topic: SPIKE_DEMO_TOPIC, from: start, hours: 8, storiesPerHour: USUAL_PER_HOUR, seed: 3 });
  simulator.scheduleBurst({
    topic: SPIKE_DEMO_TOPIC,
    from: hourStart + 10 * 60_000,
    hours: 2,
    storiesPerHour: 30,
    copies: 3,
    seed: 4,
  });
  simulator.scheduleBurst({
    topic: SPIKE_DEMO_TOPIC,
    from: hourStart + 130 * 60_000,
    hours: 1,
    storiesPerHour: 60,
    copies: 2,
    seed: 5,
  });

  const runs: SpikeDemoRun[] = [];
  const inbox: SubscriberDelivery[] = [];
  const spikeKeys = new Map<string, number>();
  for (let step = 1; step <= 18; step++) {
    setClock(start + step * 20 * 60_000);
    await stack.run({ runId: `spike-demo-${step}` });
    const delivered = await stack.collectDeliveries();
    const received = await stack.collectInbox();
    const isSpike = (notification: DeliveredNotification) => isSpikeAlertKey(notification.articleKey);
    const spikeAlerts = delivered.filter((n) => isSpike(n) && n.kind === 'alert');
    const updates = delivered.filter((n) => isSpike(n) && n.kind === 'update');
    for (const alert of spikeAlerts) spikeKeys.set(alert.deliveryId, (spikeKeys.get(alert.deliveryId) ?? 0) + 1);
    inbox.push(...received.filter((item) => /\|(update:)?spike:/.test(item.text)));
    const record = (await spikes.read([SPIKE_DEMO_RULE])).get(SPIKE_DEMO_RULE);
    const alert = record?.alert;
    const run: SpikeDemoRun = {
      at: now(),
      articleAlerts: delivered.filter((n) => !isSpike(n) && n.kind === 'alert').length,
      spikeAlerts,
      updates,
      episode:
        alert === undefined || alert.closedAt !== undefined
          ? undefined
          : { id: spikeAlertKey(SPIKE_DEMO_RULE, alert.episodeId), storiesSoFar: alert.storiesSoFar },
    };
    runs.push(run);
    input.onRun?.(run);
  }
  const problems: string[] = [];
  const alerts = runs.flatMap((run) => run.spikeAlerts);
  const updates = runs.flatMap((run) => run.updates);
  if (alerts.length !== 1) problems.push(`expected exactly one spike alert, got ${alerts.length}`);
  if ([...spikeKeys.values()].some((times) => times > 1)) problems.push('a spike alert was sent twice');
  if (updates.length > 1) problems.push(`expected at most one update notice, got ${updates.length}`);
  return { runs, inbox, ok: problems.length === 0, problems };
}

const clockText = (at: number) => new Date(at).toISOString().slice(11, 16);

/** One line per run, for `npm start -- --spike-demo`. */
export function describeSpikeDemoRun(run: SpikeDemoRun): string {
  const parts = [`${clockText(run.at)} UTC run: ${run.articleAlerts} article alert(s)`];
  for (const alert of run.spikeAlerts) parts.push(`SPIKE ALERT sent (${alert.title})`);
  for (const update of run.updates) parts.push(`spike alert UPDATED (${update.title})`);
  if (run.episode !== undefined && run.spikeAlerts.length === 0 && run.updates.length === 0) {
    parts.push(`episode open, ${run.episode.storiesSoFar} new stories so far (not sent again)`);
  }
  return parts.join(' · ');
}

/** The closing lines: what each channel showed, and the verdict. */
export function describeSpikeDemoOutcome(outcome: SpikeDemoOutcome): string[] {
  const lines = ['', 'What the spike desk received for the spike (email and Slack):'];
  for (const item of outcome.inbox) {
    lines.push('', `--- ${item.channel} → ${item.endpoint}${item.subject ? ` · ${item.subject}` : ''}`, item.text);
  }
  lines.push(
    '',
    outcome.ok
      ? 'Spike alerts: one alert for the burst, one update when it doubled, never repeated.'
      : `Spike alerts check FAILED: ${outcome.problems.join('; ')}`,
  );
  return lines;
}

/** `npm start -- --spike-demo --json`: every run, what the desk received, and the verdict. */
export function spikeDemoDocument(outcome: SpikeDemoOutcome) {
  const sent = (notification: DeliveredNotification) => ({
    deliveryId: notification.deliveryId,
    title: notification.title,
  });
  return {
    spikeDemo: { ruleId: SPIKE_DEMO_RULE, audienceId: 'spike-desk', topic: SPIKE_DEMO_TOPIC },
    runs: outcome.runs.map((run) => ({
      at: new Date(run.at).toISOString(),
      articleAlerts: run.articleAlerts,
      spikeAlerts: run.spikeAlerts.map(sent),
      updates: run.updates.map(sent),
      episode: run.episode ?? null,
    })),
    received: outcome.inbox,
    ok: outcome.ok,
    problems: outcome.problems,
  };
}
