/**
 * The environment variables the alert function and the publisher function share (sharded
 * publishing: both publish and write the ledger), with their documentation and their schema in
 * one place, so one deployment tunes both the same way and neither function's bundle carries the
 * other's configuration code (the alert function's pulls in the provider client's).
 */
import * as z from 'zod/mini';

/** One documented environment variable. */
export interface EnvironmentVariable {
  readonly name: string;
  readonly default?: string;
  readonly description: string;
}

/** An integer in [min, max], given as a string (environment variables are strings). */
export const integerVariable = (min: number, max: number) => z.coerce.number().check(z.int(), z.gte(min), z.lte(max));

/** A non-empty string (surrounding blanks trimmed). */
export const requiredVariable = z.string().check(z.trim(), z.minLength(1, 'is required'));

/** The shared variables' documentation, by name (each function lists them where it wants them). */
export const sharedVariables = {
  STATE_TABLE_NAME: {
    name: 'STATE_TABLE_NAME',
    description: 'DynamoDB table of watermark, lease, delivery ledger and run history.',
  },
  LEDGER_RETENTION_DAYS: {
    name: 'LEDGER_RETENTION_DAYS',
    default: '14',
    description: 'TTL of delivery-ledger entries; must exceed the re-read overlap.',
  },
  LEDGER_FLUSH_DELAY_MS: {
    name: 'LEDGER_FLUSH_DELAY_MS',
    default: '100',
    description: 'Longest a published notification waits for its ledger write.',
  },
  SNS_CONCURRENCY: { name: 'SNS_CONCURRENCY', default: '8', description: 'PublishBatch calls in flight at once.' },
} as const satisfies Record<string, EnvironmentVariable>;

/** The shared variables' schema fields (defaults and bounds match the documentation above). */
export const sharedVariableSchema = {
  STATE_TABLE_NAME: requiredVariable,
  LEDGER_RETENTION_DAYS: z._default(integerVariable(2, 365), 14),
  LEDGER_FLUSH_DELAY_MS: z._default(integerVariable(0, 10_000), 100),
  SNS_CONCURRENCY: z._default(integerVariable(1, 64), 8),
};
