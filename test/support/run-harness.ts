/**
 * A local stack for one test: the real alert run wired to moto server (shared by the test run),
 * a news API simulator over HTTPS with a pinned clock, and the example audiences and rules, all
 * under a unique prefix. `deliveredSoFar` reads the audit queues so a test can state exactly what
 * every audience received.
 */
import { inject } from 'vitest';
import type { StateStore } from '#core/ports';
import { exampleAudiences, exampleRules, type SandboxAudience } from '../../sandbox/examples.ts';
import { compareDeliveries, expectedDeliveries } from '../../sandbox/expectations.ts';
import { type LocalStack, type LocalStackOptions, startLocalStack } from '../../sandbox/local-stack.ts';
import { OUT_OF_SCOPE_MEDIA } from '../../sandbox/news-simulator-data.ts';
import { uniquePrefix } from './aws.ts';

/** 2026-11-22 09:00 in Seoul, the simulator's zone. */
export const testEpoch = Date.parse('2026-11-22T09:00:00+09:00');

export interface CapturedLog {
  readonly lines: string[];
  debug(message: string, ...extra: Record<string, unknown>[]): void;
  info(message: string, ...extra: Record<string, unknown>[]): void;
  warn(message: string, ...extra: Record<string, unknown>[]): void;
  error(message: string, ...extra: Record<string, unknown>[]): void;
}

/** A Log that keeps every line as JSON text, so tests can search it. */
export function captureLog(): CapturedLog {
  const lines: string[] = [];
  const write =
    (level: string) =>
    (message: string, ...extra: Record<string, unknown>[]) => {
      lines.push(JSON.stringify(Object.assign({ level, message }, ...extra), errorReplacer));
    };
  return { lines, debug: write('DEBUG'), info: write('INFO'), warn: write('WARN'), error: write('ERROR') };
}

function errorReplacer(_key: string, value: unknown): unknown {
  if (value instanceof Error)
    return { name: value.name, message: value.message, stack: value.stack, cause: value.cause };
  return value;
}

export interface TestStack extends LocalStack {
  readonly log: CapturedLog;
  /** Sets the shared clock of the run and the simulator. */
  setTime(epochMs: number): void;
  time(): number;
  /** Every notification delivered so far, as `audienceId|articleKey` strings (repeats kept). */
  deliveredSoFar(): Promise<string[]>;
  /**
   * Compares everything delivered so far with what the rules match among the simulator's
   * articles published in [from, to]: missing, unexpected and doubled deliveries per audience.
   */
  verifyExactlyOnce(
    from: number,
    to?: number,
  ): Promise<{ missing: string[]; unexpected: string[]; duplicates: string[] }>;
}

/**
 * Audiences of the example set without extra subscribers: the audit queue is all a test needs.
 * They get every copy (`collapse: none`): these tests prove per-article guarantees against what
 * the simulator served, and story collapse has its own (guarantee-stories.test.ts).
 */
export const quietAudiences: readonly SandboxAudience[] = exampleAudiences.map((audience) => ({
  item: { ...audience.item, collapse: 'none' },
  subscribers: [],
}));

export async function startTestStack(
  options: Partial<Omit<LocalStackOptions, 'motoEndpoint' | 'ca' | 'now' | 'log'>> & {
    /** Where the shared clock starts (default `testEpoch`). */
    readonly epoch?: number;
  } = {},
): Promise<TestStack> {
  let clock = options.epoch ?? testEpoch;
  const log = captureLog();
  const stack = await startLocalStack({
    motoEndpoint: inject('motoEndpoint'),
    ca: inject('sandboxCa'),
    prefix: uniquePrefix(),
    now: () => clock,
    log,
    audiences: quietAudiences,
    rules: exampleRules,
    ...options,
    simulator: { seed: 11, generate: { days: 1, perDay: 80 }, ...options.simulator },
    environment: {
      INITIAL_LOOKBACK_MINUTES: '1440',
      NEWS_API_PAGE_SIZE: '10',
      NEWS_API_BASE_DELAY_MS: '1',
      NEWS_API_MAX_DELAY_MS: '5',
      LEDGER_FLUSH_DELAY_MS: '5',
      ...options.environment,
    },
  });
  const delivered: string[] = [];
  const audienceItems = (options.audiences ?? quietAudiences).map((audience) => ({
    ...audience.item,
    topicArn: stack.topics.get(audience.item.audienceId),
  }));
  return Object.assign(stack, {
    log,
    setTime(epochMs: number) {
      clock = epochMs;
    },
    time: () => clock,
    async deliveredSoFar() {
      for (const notification of await stack.collectDeliveries()) {
        delivered.push(`${notification.audienceId}|${notification.articleKey}`);
      }
      return [...delivered];
    },
    async verifyExactlyOnce(from: number, to = clock) {
      const received = new Map<string, string[]>();
      for (const entry of await this.deliveredSoFar()) {
        const [audienceId = '', ...rest] = entry.split('|');
        const list = received.get(audienceId) ?? [];
        list.push(rest.join('|'));
        received.set(audienceId, list);
      }
      const simulator = stack.simulator;
      if (!simulator) throw new Error('verifyExactlyOnce needs the simulator');
      const expected = expectedDeliveries({
        articles: simulator.articles(),
        ruleItems: options.rules ?? exampleRules,
        audienceItems,
        from,
        to,
        inScope: (media) => media !== OUT_OF_SCOPE_MEDIA,
      });
      const result = { missing: [] as string[], unexpected: [] as string[], duplicates: [] as string[] };
      for (const [audienceId, check] of compareDeliveries(expected, received)) {
        result.missing.push(...check.missing.map((key) => `${audienceId}|${key}`));
        result.unexpected.push(...check.unexpected.map((key) => `${audienceId}|${key}`));
        result.duplicates.push(...check.duplicates.map((key) => `${audienceId}|${key}`));
      }
      return result;
    },
  });
}

/** Where the first run's window starts: initial lookback plus the late-arrival overlap. */
export const firstWindowStart = (stack: LocalStack): number =>
  testEpoch - stack.config.run.initialLookbackMs - stack.config.run.lateArrivalMs;

/** The real state store with some methods replaced, to crash a run at a chosen point. */
export function stateWith(state: StateStore, overrides: Partial<StateStore>): StateStore {
  return new Proxy(state, {
    get(target, property, receiver) {
      if (property in overrides) return overrides[property as keyof StateStore];
      const value = Reflect.get(target, property, receiver);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

/** What the audit queues received: single alerts as `audienceId|articleKey`, digests by id with their sorted article keys. */
export interface AlertsAndDigests {
  readonly alerts: string[];
  readonly digests: { id: string; keys: string[] }[];
}

/** Adds everything delivered since the last call to `into`, split into alerts and digests. */
export async function collectAlertsAndDigests(stack: LocalStack, into: AlertsAndDigests): Promise<AlertsAndDigests> {
  for (const notification of await stack.collectDeliveries()) {
    const part = notification.body.newsAlerts as {
      kind?: string;
      deliveryId: string;
      digest?: { groups: { entries: { article: { key: string } }[] }[] };
    };
    if (part.kind === 'digest') {
      into.digests.push({
        id: part.deliveryId,
        keys: (part.digest?.groups ?? []).flatMap((group) => group.entries.map((entry) => entry.article.key)).sort(),
      });
    } else {
      into.alerts.push(`${notification.audienceId}|${notification.articleKey}`);
    }
  }
  return into;
}
