/**
 * A SpikeStore in memory with the DynamoDB adapter's contract (versions, conflicts), for unit
 * tests and the bench's replay, with request counts for the bench's cost figures and a hook to
 * crash a run between two record writes.
 */

import { type SpikeHeartbeat, SpikeRecordConflictError, type SpikeStore } from '#core/spikes/ports';
import type { SpikeRecord } from '#core/spikes/record';

/** A SpikeStore in memory, with the adapter's contract (versions, conflicts); for tests and the bench. */
export class MemorySpikeStore implements SpikeStore {
  readonly records = new Map<string, SpikeRecord>();
  heartbeat: SpikeHeartbeat | undefined;
  /** Requests made, by kind, for the bench's cost figures (one per call; reads count keys too). */
  readonly calls = { reads: 0, keysRead: 0, writes: 0, heartbeatReads: 0, heartbeatWrites: 0 };
  /** Called before each write; a test throws here to crash a run between two records. */
  beforeWrite: ((record: SpikeRecord) => void) | undefined;

  /** @param options.copy whether records are copied in and out, as a real store would (the bench's CPU figures turn it off). */
  constructor(private readonly options: { readonly copy?: boolean } = {}) {}

  #copy<T>(value: T): T {
    return this.options.copy === false ? value : structuredClone(value);
  }

  async read(ruleIds: readonly string[]): Promise<Map<string, SpikeRecord>> {
    this.calls.reads += Math.ceil(ruleIds.length / 100);
    this.calls.keysRead += ruleIds.length;
    const found = new Map<string, SpikeRecord>();
    for (const ruleId of ruleIds) {
      const record = this.records.get(ruleId);
      if (record !== undefined) found.set(ruleId, this.#copy(record));
    }
    return found;
  }

  async write(record: SpikeRecord): Promise<SpikeRecord> {
    this.beforeWrite?.(record);
    this.calls.writes += 1;
    const stored = this.records.get(record.ruleId);
    if ((stored?.version ?? 0) !== record.version) throw new SpikeRecordConflictError(record.ruleId, record.version);
    const next = { ...this.#copy(record), version: record.version + 1 };
    this.records.set(record.ruleId, next);
    return this.#copy(next);
  }

  async readHeartbeat(): Promise<SpikeHeartbeat | undefined> {
    this.calls.heartbeatReads += 1;
    return this.heartbeat === undefined ? undefined : structuredClone(this.heartbeat);
  }

  async writeHeartbeat(heartbeat: SpikeHeartbeat): Promise<void> {
    this.calls.heartbeatWrites += 1;
    this.heartbeat = structuredClone(heartbeat);
  }
}
