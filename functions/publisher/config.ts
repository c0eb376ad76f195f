/**
 * The publisher function's configuration, read once at cold start from the variables the stack
 * sets (lib/constructs/sharded-publishing.ts). The settings it shares with the alert function
 * (state table, ledger retention, SNS concurrency, ledger flush delay) keep the alert function's
 * names, defaults, bounds and descriptions, so one deployment tunes both the same way; a missing
 * or bad value fails the cold start with a ConfigError that names the variable.
 */
import * as z from 'zod/mini';
import { alertRunEnvironment, type EnvironmentVariable } from '#alert-run/config';
import { ConfigError } from '#core/errors';
import { describeIssues } from '#core/model';

/** The names the publisher shares with the alert function (documented once, in its list). */
const sharedNames = ['STATE_TABLE_NAME', 'LEDGER_RETENTION_DAYS', 'SNS_CONCURRENCY', 'LEDGER_FLUSH_DELAY_MS'] as const;

/** Every variable the publisher function reads. */
export const publisherEnvironment: readonly EnvironmentVariable[] = [
  ...alertRunEnvironment.filter((variable) => (sharedNames as readonly string[]).includes(variable.name)),
  {
    name: 'WORK_MAX_RECEIVE_COUNT',
    default: '3',
    description:
      "The work queue's maxReceiveCount: on that receive an item's notifications that still fail for now are parked for `news-alerts replay --parked` instead of retried (the stack sets it from the queue's redrive policy).",
  },
];

// The same bounds as functions/alert-run/config.ts, which keeps its schema to itself.
const integer = (min: number, max: number) => z.coerce.number().check(z.int(), z.gte(min), z.lte(max));

const EnvironmentSchema = z.object({
  STATE_TABLE_NAME: z.string().check(z.trim(), z.minLength(1, 'is required')),
  LEDGER_RETENTION_DAYS: z._default(integer(2, 365), 14),
  SNS_CONCURRENCY: z._default(integer(1, 64), 8),
  LEDGER_FLUSH_DELAY_MS: z._default(integer(0, 10_000), 100),
  // SQS allows a maxReceiveCount of 1 to 1000.
  WORK_MAX_RECEIVE_COUNT: z._default(integer(1, 1000), 3),
});

/** Everything the publisher needs besides its AWS clients. */
export interface PublisherConfig {
  readonly stateTableName: string;
  readonly ledgerRetentionDays: number;
  readonly snsConcurrency: number;
  readonly ledgerFlushDelayMs: number;
  /** The work queue's maxReceiveCount (`lastAttempt` from this receive on). */
  readonly maxReceiveCount: number;
}

/** Validates the environment; throws ConfigError naming the variable and what is wrong. */
export function loadPublisherConfig(env: Readonly<Record<string, string | undefined>>): PublisherConfig {
  const parsed = EnvironmentSchema.safeParse(env);
  if (!parsed.success) {
    throw new ConfigError(`invalid publisher function configuration: ${describeIssues(parsed.error)}`);
  }
  const e = parsed.data;
  return {
    stateTableName: e.STATE_TABLE_NAME,
    ledgerRetentionDays: e.LEDGER_RETENTION_DAYS,
    snsConcurrency: e.SNS_CONCURRENCY,
    ledgerFlushDelayMs: e.LEDGER_FLUSH_DELAY_MS,
    maxReceiveCount: e.WORK_MAX_RECEIVE_COUNT,
  };
}
