/**
 * The DynamoDB adapter of {@link SpikeStore}: spike alerts' per-rule records and the run
 * heartbeat, in the state table.
 *
 * Item layout (partition key `pk`, sort key `sk`, TTL `expiresAt` in epoch seconds):
 *
 * - spike record: pk `spike#<ruleId>`, sk `record`; `ruleId`, `audienceId`, `preset`, `bucketMs`,
 *   `version` (optimistic lock), `detector` (map: `start`, `counts` (list of numbers, four weeks
 *   of hourly new-story counts, -1 unknown), `expected` (the last week's expected counts),
 *   `seasonal` (the last day's seasonal medians), `scores` (presets with a record span: each
 *   hour's significance over that span; `levels` instead when the record compares levels),
 *   `dispersion`, `dispersionAt`, `countingSince`,
 *   `episodes` (past episodes in the history), `open` (the episode in progress), `closedAt`),
 *   `outletCounts` (the last week's distinct outlets per hour), `open` (the open buckets: story ids,
 *   a few headlines with links, outlets), `alert` (the current or last episode's alert facts),
 *   `recent` (the last 20 episodes), `updatedAt`. TTL updatedAt + 35 days: a rule that stops asking
 *   for spike alerts loses its history once it is too old to be a baseline anyway. About 3 KB for a
 *   rule with a few stories an hour; at most {@link maxRecordBytes} (open buckets are bounded in
 *   core/spikes/record.ts).
 * - heartbeat: pk `spike#heartbeat`, sk `run`; `at` (the last run that finished its spike step),
 *   `evaluatedThrough` (the bucket every record was evaluated through), `unsettled` (rule ids whose
 *   alert the ledger may not hold yet, at most 1,000), `overflow`. No TTL.
 *
 * One item per rule keeps a run's cost at one read and at most one write per rule that counted or
 * reached the end of an hour (BatchGetItem by 100; each write a conditional PutItem on `version`,
 * so a run holding an older record can never overwrite a newer one: the typed
 * {@link SpikeRecordConflictError}). Counting is idempotent by construction (story ids per open
 * bucket), so the adapter needs no transaction: a re-read writes the same record again.
 *
 * A record that does not fit its schema (edited by hand) is read as a fresh record at the stored
 * version, logged, and overwritten by the next write: the rule restarts its warm-up, never blocks.
 */
import { type AttributeValue, ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { type DynamoDBDocumentClient, GetCommand, PutCommand, type PutCommandInput } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import pLimit, { type LimitFunction } from 'p-limit';
import * as z from 'zod/mini';
import type { Log } from '#core/ports';
import { SPIKE_PRESETS } from '#core/spikes/detector';
import { type SpikeHeartbeat, SpikeRecordConflictError, type SpikeStore } from '#core/spikes/ports';
import { newSpikeRecord, type SpikeRecord, spikeRecordProblem } from '#core/spikes/record';
import { logger } from '#shared/powertools';
import { type BatchContext, getAll, type Key, keyPart, keyString, ttlSeconds } from './dynamo-batch.ts';
import { readItem } from './dynamo-rule-source.ts';
import { measureItem } from './table-layout.ts';

export interface DynamoSpikeStoreOptions {
  readonly documents: DynamoDBDocumentClient;
  /** The state table. */
  readonly tableName: string;
  /** Days a record outlives its last write. Default 35. */
  readonly retentionDays?: number;
  /** Requests in flight at once. Default 4. */
  readonly concurrency?: number;
  readonly sleep?: (ms: number) => Promise<void>;
  readonly now?: () => number;
  readonly log?: Log;
}

/** Largest record written; beyond it the open buckets would have to shrink (they are bounded well below). */
export const maxRecordBytes = 350 * 1024;

/** Where a read item keeps its raw `version` attribute. */
const storedVersion = Symbol('storedVersion');

export const spikeRecordKey = (ruleId: string): Key => ({ pk: `spike#${keyPart(ruleId)}`, sk: 'record' });
export const spikeHeartbeatKey: Key = { pk: 'spike#heartbeat', sk: 'run' };

/**
 * Numbers the document client can write back: a value typed by hand past 2^53 reads (the raw
 * decoder gives the nearest number) but would fail the record's next write, and every run with it.
 */
const writable = (value: number) => Math.abs(value) <= Number.MAX_SAFE_INTEGER;
const finite = z
  .number()
  .check(
    z.refine(Number.isFinite, 'must be a finite number'),
    z.refine(writable, 'must be at most 2^53 - 1 either way'),
  );
const int = z
  .number()
  .check(z.int('must be a whole number'), z.refine(writable, 'must be at most 2^53 - 1 either way'));
const Sample = z.object({
  storyId: z.string(),
  title: z.string(),
  url: z.string(),
  outlet: z.optional(z.string()),
});
const Episode = z.object({
  id: z.string(),
  openedAt: int,
  since: int,
  observed: finite,
  expected: finite,
  peak: finite,
  peakAt: int,
  score: finite,
  quiet: int,
  lastAt: int,
});
const RecordItem = z.object({
  ruleId: z.string(),
  audienceId: z.string(),
  preset: z.enum(SPIKE_PRESETS as [string, ...string[]]),
  bucketMs: int,
  version: int,
  detector: z.object({
    start: int,
    // Story counts are whole (-1: not counted): a fraction typed by hand is damage, not a count.
    counts: z.array(int),
    expected: z.array(finite),
    seasonal: z.array(finite),
    scores: z.optional(z.array(finite)),
    levels: z.optional(z.array(z.array(finite))),
    dispersion: finite,
    dispersionAt: int,
    countingSince: int,
    episodes: z.array(z.object({ id: z.string(), from: int, to: int, levelShift: z.boolean() })),
    open: z.optional(Episode),
    closedAt: int,
  }),
  outletCounts: z.array(int),
  open: z.array(
    z.object({ bucket: int, stories: z.array(z.string()), samples: z.array(Sample), outlets: z.array(z.string()) }),
  ),
  alert: z.optional(
    z.object({
      episodeId: z.string(),
      openedAt: int,
      since: int,
      preset: z.enum(SPIKE_PRESETS as [string, ...string[]]),
      bucketMs: int,
      observed: finite,
      expected: finite,
      bucketCount: finite,
      bucketExpected: finite,
      outletCount: finite,
      topStories: z.array(z.extend(Sample, { outlets: finite })),
      topOutlets: z.array(z.object({ name: z.string(), stories: finite })),
      stage: z.enum(['spike', 'escalated']),
      storiesSoFar: finite,
      expectedSoFar: z.optional(finite),
      settled: z.optional(z.boolean()),
      closedAt: z.optional(int),
    }),
  ),
  recent: z.array(
    z.object({
      episodeId: z.string(),
      since: int,
      openedAt: int,
      to: z.optional(int),
      observed: finite,
      expected: finite,
      peak: finite,
      levelShift: z.optional(z.boolean()),
    }),
  ),
  updatedAt: finite,
});

const HeartbeatItem = z.object({
  at: finite,
  evaluatedThrough: int,
  unsettled: z.array(z.string()),
  overflow: z.optional(z.boolean()),
});

export class DynamoSpikeStore implements SpikeStore {
  readonly #documents: DynamoDBDocumentClient;
  readonly #table: string;
  readonly #retentionDays: number;
  readonly #limit: LimitFunction;
  readonly #context: BatchContext;
  readonly #now: () => number;
  readonly #log: Log;
  /** Rules whose stored item was read with a version no write gives, and that value (may be undefined). */
  readonly #replacing = new Map<string, { readonly stored: unknown }>();

  constructor(options: DynamoSpikeStoreOptions) {
    this.#documents = options.documents;
    this.#table = options.tableName;
    this.#retentionDays = options.retentionDays ?? 35;
    this.#limit = pLimit(options.concurrency ?? 4);
    this.#now = options.now ?? Date.now;
    this.#log = options.log ?? logger;
    this.#context = {
      documents: options.documents,
      table: options.tableName,
      limit: this.#limit,
      sleep: options.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms))),
      log: this.#log,
    };
  }

  async read(ruleIds: readonly string[]): Promise<Map<string, SpikeRecord>> {
    const found = new Map<string, SpikeRecord>();
    if (ruleIds.length === 0) return found;
    // Decoded one by one, as the rule source decodes rules: a value typed by hand that the document
    // client cannot convert costs its own record (read as damaged), not every rule's read.
    const items = await getAll(this.#context, 'reading spike records', ruleIds.map(spikeRecordKey), (raw) =>
      // The stored version as it is, for the condition that replaces it when it is no count.
      Object.assign(readItem(raw), { [storedVersion]: raw.version }),
    );
    for (const ruleId of ruleIds) {
      const item = items.get(keyString(spikeRecordKey(ruleId)));
      if (item === undefined) {
        // Gone since a damaged one was read (deleted by hand, expired): a new record is created.
        this.#replacing.delete(ruleId);
        continue;
      }
      const parsed = RecordItem.safeParse(item);
      const problem = parsed.success
        ? parsed.data.ruleId === ruleId
          ? // Judged against the later of the run's clock and the real one: runs write no bucket past
            // their own clock, so a record ahead of both was edited by hand (or written by a run with
            // a clock moved ahead); a run whose clock was moved back (`run --now 3d`) keeps it.
            spikeRecordProblem(parsed.data as unknown as SpikeRecord, Math.max(this.#now(), Date.now()))
          : // Copied by hand from another rule's key: its counts are that rule's, and its writes would go there.
            `ruleId ${JSON.stringify(parsed.data.ruleId.slice(0, 100))} is not the rule of its key`
        : parsed.error.issues
            .slice(0, 3)
            .map((issue) => `${issue.path.join('.')}: ${issue.message}`)
            .join('; ');
      // Every record this store wrote has a version of 1 or more: any other (a hand edit: a
      // string, a fraction, 0, none) is replaced by the next write, conditional on that value.
      const stored = item.version;
      const version = typeof stored === 'number' && Number.isSafeInteger(stored) && stored > 0 ? stored : 0;
      // Compared as stored: wrapNumbers keeps a number such as 1E+20 exactly as DynamoDB holds it.
      const raw = (item as { [storedVersion]?: AttributeValue })[storedVersion];
      if (version === 0) {
        this.#replacing.set(ruleId, {
          stored: raw === undefined ? undefined : unmarshall({ version: raw }, { wrapNumbers: true }).version,
        });
      } else this.#replacing.delete(ruleId);
      if (parsed.success && problem === undefined) {
        found.set(ruleId, { ...(parsed.data as unknown as SpikeRecord), version });
        continue;
      }
      // A damaged record restarts the rule's history (warm-up again) and is overwritten, never blocks.
      this.#log.warn('a spike record does not fit its schema; the rule starts counting again', {
        ruleId,
        reason: problem,
      });
      const audienceId = typeof item.audienceId === 'string' && item.ruleId === ruleId ? item.audienceId : '';
      found.set(ruleId, { ...newSpikeRecord(ruleId, audienceId, 'balanced', this.#now()), version });
    }
    return found;
  }

  /**
   * The condition of a write over the stored item of `record`: it holds the version the record
   * was read at, or, for a version-0 record, no item at all, or the item read with a version no
   * write of this store gives (which a write at version 0 would otherwise never replace: the rule
   * would stop counting until its TTL).
   */
  #condition(
    record: SpikeRecord,
  ): Pick<PutCommandInput, 'ConditionExpression' | 'ExpressionAttributeNames' | 'ExpressionAttributeValues'> {
    if (record.version > 0) {
      return {
        ConditionExpression: '#version = :version',
        ExpressionAttributeNames: { '#version': 'version' },
        ExpressionAttributeValues: { ':version': record.version },
      };
    }
    const replacing = this.#replacing.get(record.ruleId);
    if (replacing === undefined) return { ConditionExpression: 'attribute_not_exists(pk)' };
    if (replacing.stored === undefined) {
      return {
        ConditionExpression: 'attribute_exists(pk) AND attribute_not_exists(#version)',
        ExpressionAttributeNames: { '#version': 'version' },
      };
    }
    return {
      ConditionExpression: '#version = :version',
      ExpressionAttributeNames: { '#version': 'version' },
      ExpressionAttributeValues: { ':version': replacing.stored },
    };
  }

  async write(record: SpikeRecord): Promise<SpikeRecord> {
    let next: SpikeRecord = { ...record, version: record.version + 1 };
    const itemOf = (stored: SpikeRecord) => ({
      ...spikeRecordKey(record.ruleId),
      ...stored,
      expiresAt: ttlSeconds(stored.updatedAt, this.#retentionDays),
    });
    let item = itemOf(next);
    const { bytes } = measureItem(item);
    if (bytes > maxRecordBytes) {
      // Bounded by construction; if it ever happens, drop the headlines rather than fail the run.
      this.#log.warn('a spike record is too large; its open buckets keep counts only', {
        ruleId: record.ruleId,
        bytes,
      });
      item.open = item.open.map((open) => ({ ...open, samples: [], outlets: [] }));
    }
    if (measureItem(item).bytes > maxRecordBytes) {
      // Still too large: only a hand edit makes it so (a long title in its alert). DynamoDB would
      // refuse the write, and every run with it: the rule starts counting again instead.
      this.#log.warn('a spike record is too large even with counts only; the rule starts counting again', {
        ruleId: record.ruleId,
        bytes,
      });
      next = {
        ...newSpikeRecord(record.ruleId, record.audienceId, record.preset, this.#now(), record.bucketMs),
        version: next.version,
      };
      item = itemOf(next);
    }
    try {
      await this.#limit(() =>
        this.#documents.send(
          new PutCommand({
            TableName: this.#table,
            Item: item,
            ...this.#condition(record),
          }),
        ),
      );
      this.#replacing.delete(record.ruleId);
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) {
        throw new SpikeRecordConflictError(record.ruleId, record.version, { cause: error });
      }
      throw error;
    }
    return next;
  }

  async readHeartbeat(): Promise<SpikeHeartbeat | undefined> {
    const output = await this.#limit(() =>
      this.#documents.send(new GetCommand({ TableName: this.#table, Key: spikeHeartbeatKey, ConsistentRead: true })),
    );
    if (output.Item === undefined) return undefined;
    const parsed = HeartbeatItem.safeParse(output.Item);
    // A damaged heartbeat only costs the next run a full pass: read as none.
    return parsed.success ? parsed.data : undefined;
  }

  async writeHeartbeat(heartbeat: SpikeHeartbeat): Promise<void> {
    await this.#limit(() =>
      this.#documents.send(new PutCommand({ TableName: this.#table, Item: { ...spikeHeartbeatKey, ...heartbeat } })),
    );
  }
}
