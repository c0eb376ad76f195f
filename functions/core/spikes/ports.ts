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
  /** What the last run that finished its spike step left (strongly consistent), or undefined. */
  readHeartbeat(): Promise<SpikeHeartbeat | undefined>;
  writeHeartbeat(heartbeat: SpikeHeartbeat): Promise<void>;
}

/**
 * The last finished spike step: when, how far every rule was evaluated, and which rules have an
 * alert the ledger may not hold yet. It lets a run inside an hour read only the rules it needs.
 */
export interface SpikeHeartbeat {
  /** Epoch ms: buckets since then that no run saw are unknown. */
  readonly at: number;
  /** Every rule's record was evaluated through this bucket (of `SPIKE_BUCKET_MS`, an hour, whatever a record's own bucket). */
  readonly evaluatedThrough: number;
  /** Rules whose alert is not settled (at most 1,000). */
  readonly unsettled: readonly string[];
  /** More rules than listed have unsettled alerts: the next run reads every rule. */
  readonly overflow?: boolean | undefined;
}
