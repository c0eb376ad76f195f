/**
 * The port of spike alerts' state: one record per rule ({@link SpikeRecord}) and the time the
 * last run counted. One DynamoDB adapter (functions/aws/dynamo-spike-store.ts) keeps them in the
 * state table; tests pass the same adapter pointed at moto, or test/support/memory-spike-store.ts.
 */
import { NewsAlertsError } from '../errors.ts';
import type { SpikeRecord } from './record.ts';

/** A record changed since it was read (another writer): nothing was written. */
export class SpikeRecordConflictError extends NewsAlertsError {
  readonly ruleId: string;
  constructor(ruleId: string, expected: number, options?: ErrorOptions) {
    super(
      `the spike record of rule "${ruleId}" is no longer at version ${expected}; it was changed since it was read`,
      options,
    );
    this.name = 'SpikeRecordConflictError';
    this.ruleId = ruleId;
  }
}

export interface SpikeStore {
  /** The records of these rules that exist, by rule id (strongly consistent; BatchGetItem). */
  read(ruleIds: readonly string[]): Promise<Map<string, SpikeRecord>>;
  /**
   * Stores `record` if the stored one is still at `record.version` (0: none may exist) and returns
   * it at version + 1; throws {@link SpikeRecordConflictError} otherwise. A conditional write, so a
   * run that read an older record can never overwrite a newer one.
   */
  write(record: SpikeRecord): Promise<SpikeRecord>;
  /** When the last run that counted finished counting (epoch ms), or undefined. */
  readHeartbeat(): Promise<number | undefined>;
  writeHeartbeat(at: number): Promise<void>;
}
