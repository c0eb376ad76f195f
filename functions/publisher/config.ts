/**
 * The publisher function's configuration, read once at cold start from the variables the stack
 * sets (lib/constructs/sharded-publishing.ts). The settings it shares with the alert function
 * (state table, ledger retention, SNS concurrency, ledger flush delay) come from
 * functions/shared/publishing-environment.ts with their names, defaults, bounds and descriptions, so
 * one deployment tunes both the same way; a missing
 * or bad value fails the cold start with a ConfigError that names the variable.
 */
import * as z from 'zod/mini';
import { ConfigError } from '#core/errors';
import { describeIssues } from '#core/model';
import {
  type EnvironmentVariable,
  integerVariable,
  sharedVariableSchema,
  sharedVariables,
} from '#shared/publishing-environment';

/** Every variable the publisher function reads. */
export const publisherEnvironment: readonly EnvironmentVariable[] = [
  sharedVariables.STATE_TABLE_NAME,
  sharedVariables.LEDGER_RETENTION_DAYS,
  sharedVariables.SNS_CONCURRENCY,
  sharedVariables.LEDGER_FLUSH_DELAY_MS,
  {
    name: 'WORK_MAX_RECEIVE_COUNT',
    default: '3',
    description:
      "The work queue's maxReceiveCount: on that receive an item's notifications that still fail for now are parked for `news-alerts replay --parked` instead of retried (the stack sets it from the queue's redrive policy).",
  },
];

const EnvironmentSchema = z.object({
  ...sharedVariableSchema,
  // SQS allows a maxReceiveCount of 1 to 1000.
  WORK_MAX_RECEIVE_COUNT: z._default(integerVariable(1, 1000), 3),
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
