/**
 * The quick start's stack with the AWS side in memory (sandbox/quick-start.ts QuickStartStack):
 * the real alert run, configuration and provider client over HTTPS against the news simulator,
 * with the in-memory state store, story store and notifier of test/support instead of moto. What
 * an audience received is read from the notifier as an audit queue would hold it. For tests that
 * run the quick start many times (every hour of a day); the end-to-end tests run it on moto.
 */
import type { PemPair } from '#sandbox/tls';
import { loadAlertRunConfig } from '../../functions/alert-run/config.ts';
import type { AlertRunWiring } from '../../functions/alert-run/wiring.ts';
import { buildRuleSet } from '../../functions/core/model.ts';
import { silentLog } from '../../functions/core/ports.ts';
import { StoryResolver } from '../../functions/core/story.ts';
import { NewsLookupClient } from '../../functions/provider/news-client.ts';
import type { SandboxAudience } from '../../sandbox/examples.ts';
import { toDelivered } from '../../sandbox/local-stack.ts';
import { type NewsSimulator, type NewsSimulatorOptions, startNewsSimulator } from '../../sandbox/news-simulator.ts';
import type { QuickStartStack } from '../../sandbox/quick-start.ts';
import { MemoryNotifier, MemoryStateStore, memoryRules } from './fake-ports.ts';
import { MemoryStoryStore } from './memory-story-store.ts';

export interface MemoryQuickStack extends QuickStartStack {
  stop(): Promise<void>;
}

export async function startMemoryQuickStack(options: {
  readonly ca: PemPair;
  readonly now: () => number;
  readonly audiences: readonly SandboxAudience[];
  readonly rules: readonly Readonly<Record<string, unknown>>[];
  readonly simulator: Omit<NewsSimulatorOptions, 'ca' | 'now'>;
  readonly environment?: Readonly<Record<string, string>>;
}): Promise<MemoryQuickStack> {
  const simulator: NewsSimulator = await startNewsSimulator({ ...options.simulator, ca: options.ca, now: options.now });
  const config = loadAlertRunConfig({
    NEWS_API_BASE_URL: simulator.url,
    NEWS_API_ALLOW_INTERNAL_TARGET: 'true',
    NEWS_API_KEY_SECRET_ID: 'memory-quick-stack',
    NEWS_API_TIME_ZONE: simulator.timeZone,
    NEWS_API_CA_PEM: options.ca.cert,
    RULES_TABLE_NAME: 'rules',
    AUDIENCES_TABLE_NAME: 'audiences',
    STATE_TABLE_NAME: 'state',
    NEWS_API_BASE_DELAY_MS: '20',
    NEWS_API_MAX_DELAY_MS: '500',
    ...options.environment,
  });
  const topics = new Map(
    options.audiences.map((audience) => [
      audience.item.audienceId,
      `arn:aws:sns:us-east-1:000000000000:memory-${audience.item.audienceId}`,
    ]),
  );
  const ruleSet = buildRuleSet(
    options.rules,
    options.audiences.map((audience) => ({ ...audience.item, topicArn: topics.get(audience.item.audienceId) })),
  );
  const news = new NewsLookupClient({
    config: config.provider,
    secrets: { apiKey: async () => simulator.liveKey },
    log: silentLog,
    now: options.now,
  });
  const notifier = new MemoryNotifier();
  const state = new MemoryStateStore();
  const dependencies = {
    news,
    rules: memoryRules(ruleSet),
    state,
    notifier,
    stories: new StoryResolver(new MemoryStoryStore({ now: options.now })),
    log: silentLog,
    now: options.now,
  } as unknown as AlertRunWiring;
  let collected = 0;
  let runs = 0;
  const { runAlertCycle } = await import('../../functions/core/alert-run.ts');
  return {
    config,
    dependencies,
    simulator,
    topics,
    async run(runOptions = {}) {
      runs += 1;
      return await runAlertCycle({ ...dependencies, ...runOptions.dependencies }, config.run, {
        runId: runOptions.runId ?? `memory-run-${runs}`,
        remainingTimeMs: runOptions.remainingTimeMs ?? (() => 15 * 60_000),
      });
    },
    async collectDeliveries() {
      const fresh = notifier.published.slice(collected);
      collected = notifier.published.length;
      return fresh.map((message) => {
        const bodies = JSON.parse(message.body) as Record<string, string>;
        return toDelivered(message.key.audienceId, bodies.sqs ?? bodies.default ?? '{}');
      });
    },
    async collectInbox() {
      return [];
    },
    async stop() {
      await news.close();
      await simulator.stop();
    },
  };
}
