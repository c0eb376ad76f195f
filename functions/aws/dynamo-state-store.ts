/**
 * The DynamoDB adapter of {@link StateStore}: run lease, watermark, delivery ledger, parked
 * undeliverable notifications and run history, all in the one state table.
 *
 * Item layout (partition key `pk`, sort key `sk`, TTL attribute `expiresAt` in epoch SECONDS;
 * every other time is epoch milliseconds):
 *
 * - watermark: pk `watermark`, sk `current`; `at`, `version`, `updatedAt`, `runId`. No TTL.
 * - run lease: pk `lease`, sk `run`; `owner`, `leaseExpiresAt` (ms), `acquiredAt`.
 *   TTL one day after the lease ends.
 * - delivery ledger: pk `delivery#<audienceId>|<articleKey>` (the port's `deliveryId`), sk `ledger`;
 *   `audienceId`, `articleKey`, `deliveredAt`, `messageId` (when SNS gave one), `ruleIds`.
 *   TTL deliveredAt + ledgerRetentionDays. One partition key per notification spreads a big
 *   run's writes evenly, as an idempotency table does; an audience-keyed partition would turn a
 *   broad audience into a hot key (1,000 writes/s per partition).
 * - undeliverable: pk `undeliverable#<audienceId>`, sk `<articleKey>`; every UndeliverableRecord
 *   field. TTL failedAt + undeliverableRetentionDays. Keyed by audience because replay lists them
 *   per audience, and there are few.
 * - run history: pk `run`, sk `<startedAt as ISO 8601>#<runId>`; `runId`, `status`, `startedAt`,
 *   `finishedAt`, `summary` (map). TTL finishedAt + runRetentionDays. One run every few minutes
 *   fits one partition; ISO 8601 sorts like the instant, so a reverse Query gives newest first.
 *
 * Key parts taken from data (`audienceId`, `articleKey`, `runId`, the delivery id) go through
 * {@link keyPart}: verbatim when short, `#` + SHA-256 otherwise, so no key can exceed DynamoDB's
 * 2048/1024-byte limits, while the full values stay readable in the item's attributes. The lease
 * keeps its own millisecond expiry (`leaseExpiresAt`) because the TTL attribute is in seconds and
 * TTL deletion is lazy (up to days late); its TTL lies a day after the lease ends, so TTL never
 * removes a live lease and a dead one does not linger.
 *
 * Lost conditional writes become typed errors (LeaseHeldError, LeaseLostError,
 * WatermarkConflictError), in the manner of Powertools idempotency's persistence layer.
 */
import { createHash } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import {
  type AttributeValue,
  type CancellationReason,
  ConditionalCheckFailedException,
  type Put,
  TransactionCanceledException,
} from '@aws-sdk/client-dynamodb';
import {
  BatchGetCommand,
  BatchWriteCommand,
  type BatchWriteCommandInput,
  DeleteCommand,
  type DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
  TransactWriteCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import pLimit, { type LimitFunction } from 'p-limit';
import { z } from 'zod';
import { LeaseHeldError, LeaseLostError, NewsAlertsError, WatermarkConflictError } from '#core/errors';
import {
  type DeliveryKey,
  type DeliveryRecord,
  deliveryId,
  type Lease,
  type Log,
  type RunRecord,
  type StateStore,
  type UndeliverableRecord,
  type Watermark,
} from '#core/ports';
import { logger } from '#shared/powertools';

/** The state table could not be read or written as expected (after retries where they help). */
export class StateStoreError extends NewsAlertsError {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'StateStoreError';
  }
}

export interface DynamoStateStoreOptions {
  /** The one shared document client (default marshalling options: plain numbers, not NumberValue). */
  readonly documents: DynamoDBDocumentClient;
  readonly tableName: string;
  /** How long the ledger remembers a delivery; must exceed the provider window overlap. Default 14. */
  readonly ledgerRetentionDays?: number;
  /** How long run history is kept. Default 30. */
  readonly runRetentionDays?: number;
  /** How long refused notifications wait for `news-alerts replay`. Default 30. */
  readonly undeliverableRetentionDays?: number;
  /** Batch requests in flight at once, shared by all calls on this store. Default 4. */
  readonly concurrency?: number;
  /** Waits between retries of unprocessed batch items; tests pass a fast one. */
  readonly sleep?: (ms: number) => Promise<void>;
  readonly log?: Log;
}

type Key = { readonly pk: string; readonly sk: string };

const watermarkKey: Key = { pk: 'watermark', sk: 'current' };
const leaseKey: Key = { pk: 'lease', sk: 'run' };
const runPartition = 'run';

/** DynamoDB's own per-request limits; moto does not enforce the write one, so we do. */
const batchGetLimit = 100;
const batchWriteLimit = 25;
/** Attempts for a batch whose items keep coming back unprocessed (throttling), and for transaction conflicts. */
const maxBatchAttempts = 8;
const maxTransactionAttempts = 4;
const backoffBaseMs = 50;
const backoffCapMs = 3_000;

const dayMs = 86_400_000;
/** Key parts up to this size stay verbatim: far below the 1024-byte sort-key limit, still readable. */
const maxVerbatimKeyBytes = 256;

/**
 * A key part that is always a valid, bounded DynamoDB key fragment: the value itself when it is
 * non-empty, short and does not start with `#`; otherwise `#` + base64url SHA-256 of it. The two
 * forms cannot collide because only hashed parts start with `#`.
 */
export function keyPart(value: string): string {
  if (value.length > 0 && !value.startsWith('#') && Buffer.byteLength(value, 'utf8') <= maxVerbatimKeyBytes) {
    return value;
  }
  return `#${createHash('sha256').update(value, 'utf8').digest('base64url')}`;
}

/** The ledger item key of one notification. */
export const deliveryItemKey = (key: DeliveryKey): Key => ({
  pk: `delivery#${keyPart(deliveryId(key))}`,
  sk: 'ledger',
});

/** The key of a parked undeliverable notification. */
export const undeliverableItemKey = (key: DeliveryKey): Key => ({
  pk: `undeliverable#${keyPart(key.audienceId)}`,
  sk: keyPart(key.articleKey),
});

const keyString = (key: Key): string => `${key.pk}\u0000${key.sk}`;

/** TTL value (epoch seconds) `days` after the epoch-ms instant `from`. */
const ttlSeconds = (from: number, days: number): number => Math.floor((from + days * dayMs) / 1000);

const finite = z.number().finite();
const WatermarkItem = z.object({ at: finite, version: z.number().int(), updatedAt: finite, runId: z.string() });
const LeaseItem = z.object({ owner: z.string(), leaseExpiresAt: finite });
const RunItem = z.object({
  runId: z.string(),
  status: z.enum(['completed', 'checkpointed', 'skipped', 'incomplete', 'failed']),
  startedAt: finite,
  finishedAt: finite,
  summary: z.record(z.string(), z.unknown()),
});
const UndeliverableItem = z.object({
  audienceId: z.string(),
  articleKey: z.string(),
  topicArn: z.string(),
  failedAt: finite,
  code: z.string(),
  reason: z.string(),
  subject: z.string(),
  body: z.string(),
});

/** Reads an item returned by a failed condition check (raw attribute values), if it fits. */
function oldItem<T>(schema: z.ZodType<T>, item: Record<string, AttributeValue> | undefined): T | undefined {
  if (item === undefined) return undefined;
  const parsed = schema.safeParse(unmarshall(item));
  return parsed.success ? parsed.data : undefined;
}

function chunk<T>(items: readonly T[], size: number): T[][] {
  const chunks: T[][] = [];
  for (let start = 0; start < items.length; start += size) chunks.push(items.slice(start, start + size));
  return chunks;
}

/** Waits for every task (so nothing is left in flight), then rethrows the first failure. */
async function settleAll(tasks: readonly Promise<void>[]): Promise<void> {
  const results = await Promise.allSettled(tasks);
  const failed = results.find((result): result is PromiseRejectedResult => result.status === 'rejected');
  if (failed !== undefined) throw failed.reason;
}

type WriteRequest = NonNullable<BatchWriteCommandInput['RequestItems']>[string][number];
type KeyedWrite = { readonly key: Key; readonly request: WriteRequest };

/** DynamoDB implementation of the run's state: see the module comment for the item layout. */
export class DynamoStateStore implements StateStore {
  readonly #documents: DynamoDBDocumentClient;
  readonly #table: string;
  readonly #ledgerRetentionDays: number;
  readonly #runRetentionDays: number;
  readonly #undeliverableRetentionDays: number;
  readonly #limit: LimitFunction;
  readonly #sleep: (ms: number) => Promise<void>;
  readonly #log: Log;

  constructor(options: DynamoStateStoreOptions) {
    this.#documents = options.documents;
    this.#table = options.tableName;
    this.#ledgerRetentionDays = options.ledgerRetentionDays ?? 14;
    this.#runRetentionDays = options.runRetentionDays ?? 30;
    this.#undeliverableRetentionDays = options.undeliverableRetentionDays ?? 30;
    // One limiter per store: concurrent findDelivered/recordDelivered calls share the bound.
    this.#limit = pLimit(options.concurrency ?? 4);
    this.#sleep = options.sleep ?? ((ms) => delay(ms));
    this.#log = options.log ?? logger;
  }

  // --- Run lease ------------------------------------------------------------------------------

  async acquireLease(owner: string, durationMs: number, now: number): Promise<Lease> {
    if (!(durationMs > 0) || !Number.isFinite(durationMs)) {
      throw new RangeError(`lease duration must be a positive number of milliseconds, got ${durationMs}`);
    }
    const lease: Lease = { owner, expiresAt: now + durationMs };
    try {
      await this.#documents.send(
        new PutCommand({
          TableName: this.#table,
          Item: {
            ...leaseKey,
            owner,
            leaseExpiresAt: lease.expiresAt,
            acquiredAt: now,
            expiresAt: ttlSeconds(lease.expiresAt, 1),
          },
          // The same owner may take it again: an SDK retry of a Put that already succeeded must
          // not report our own lease as held by someone else.
          ConditionExpression: 'attribute_not_exists(#pk) OR #leaseExpiresAt < :now OR #owner = :owner',
          ExpressionAttributeNames: { '#pk': 'pk', '#leaseExpiresAt': 'leaseExpiresAt', '#owner': 'owner' },
          ExpressionAttributeValues: { ':now': now, ':owner': owner },
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) {
        const holder = oldItem(LeaseItem, error.Item);
        throw new LeaseHeldError(holder?.owner ?? '<unknown>', holder?.leaseExpiresAt ?? now, { cause: error });
      }
      throw error;
    }
    return lease;
  }

  async releaseLease(lease: Lease): Promise<void> {
    try {
      await this.#documents.send(
        new DeleteCommand({
          TableName: this.#table,
          Key: leaseKey,
          ConditionExpression: '#owner = :owner',
          ExpressionAttributeNames: { '#owner': 'owner' },
          ExpressionAttributeValues: { ':owner': lease.owner },
        }),
      );
    } catch (error) {
      // Taken over after expiry, or already gone: the lease is not ours to delete any more.
      if (error instanceof ConditionalCheckFailedException) {
        this.#log.debug('run lease was no longer ours; left it alone', { owner: lease.owner });
        return;
      }
      throw error;
    }
  }

  // --- Watermark ------------------------------------------------------------------------------

  async readWatermark(): Promise<Watermark | undefined> {
    const { Item } = await this.#documents.send(
      new GetCommand({ TableName: this.#table, Key: watermarkKey, ConsistentRead: true }),
    );
    if (Item === undefined) return undefined;
    const parsed = WatermarkItem.safeParse(Item);
    if (!parsed.success) {
      // Never treat a damaged watermark as "none": that would re-read and re-match the provider's history.
      throw new StateStoreError(
        `the watermark item in ${this.#table} is malformed (${z.prettifyError(parsed.error)}); fix it with 'news-alerts watermark set'`,
        { cause: parsed.error },
      );
    }
    return parsed.data;
  }

  async advanceWatermark(lease: Lease, expected: Watermark | undefined, at: number, now: number): Promise<Watermark> {
    if (expected !== undefined && at <= expected.at) return expected;
    const next: Watermark = { at, version: (expected?.version ?? 0) + 1, updatedAt: now, runId: lease.owner };
    const watermarkCondition: Pick<Put, 'ConditionExpression' | 'ExpressionAttributeNames'> & {
      ExpressionAttributeValues?: Record<string, number>;
    } =
      expected === undefined
        ? { ConditionExpression: 'attribute_not_exists(#pk)', ExpressionAttributeNames: { '#pk': 'pk' } }
        : {
            ConditionExpression: '#version = :expected',
            ExpressionAttributeNames: { '#version': 'version' },
            ExpressionAttributeValues: { ':expected': expected.version },
          };
    const command = () =>
      new TransactWriteCommand({
        TransactItems: [
          {
            ConditionCheck: {
              TableName: this.#table,
              Key: leaseKey,
              ConditionExpression: '#owner = :owner AND #leaseExpiresAt > :now',
              ExpressionAttributeNames: { '#owner': 'owner', '#leaseExpiresAt': 'leaseExpiresAt' },
              ExpressionAttributeValues: { ':owner': lease.owner, ':now': now },
              ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
            },
          },
          {
            Put: {
              TableName: this.#table,
              Item: { ...watermarkKey, ...next },
              ...watermarkCondition,
              ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
            },
          },
        ],
      });

    for (let attempt = 1; ; attempt += 1) {
      try {
        await this.#documents.send(command());
        return next;
      } catch (error) {
        if (!(error instanceof TransactionCanceledException)) throw error;
        const [leaseReason, watermarkReason] = error.CancellationReasons ?? [];
        // A lost lease wins over a version conflict: this run must stop either way, and the
        // lease is the reason it may not retry.
        if (leaseReason?.Code === 'ConditionalCheckFailed') {
          throw new LeaseLostError(describeLostLease(lease, leaseReason, now), { cause: error });
        }
        if (watermarkReason?.Code === 'ConditionalCheckFailed') {
          throw new WatermarkConflictError(describeConflict(expected, watermarkReason), { cause: error });
        }
        // TransactionConflict / throttling: another request touched the items at the same moment.
        // Retrying re-evaluates the conditions, which then tell who won.
        if (attempt >= maxTransactionAttempts || !isTransient(error.CancellationReasons)) {
          throw new StateStoreError(
            `advancing the watermark was cancelled (${reasonCodes(error.CancellationReasons)}) after ${attempt} attempt(s)`,
            { cause: error },
          );
        }
        await this.#sleep(backoff(attempt));
      }
    }
  }

  async setWatermark(at: number, runId: string, now: number, expected?: Watermark): Promise<Watermark> {
    let attributes: Record<string, unknown> | undefined;
    try {
      const output = await this.#documents.send(
        new UpdateCommand({
          TableName: this.#table,
          Key: watermarkKey,
          // ADD bumps the version atomically, so a run still holding the old one gets a conflict.
          UpdateExpression: 'SET #at = :at, #updatedAt = :now, #runId = :runId ADD #version :one',
          ...(expected === undefined ? {} : { ConditionExpression: '#version = :expected' }),
          ExpressionAttributeNames: {
            '#at': 'at',
            '#updatedAt': 'updatedAt',
            '#runId': 'runId',
            '#version': 'version',
          },
          ExpressionAttributeValues: {
            ':at': at,
            ':now': now,
            ':runId': runId,
            ':one': 1,
            ...(expected === undefined ? {} : { ':expected': expected.version }),
          },
          ReturnValues: 'ALL_NEW',
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
      attributes = output.Attributes;
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) {
        throw new WatermarkConflictError(
          describeConflict(expected, { Code: 'ConditionalCheckFailed', Item: error.Item }),
          { cause: error },
        );
      }
      throw error;
    }
    return WatermarkItem.parse(attributes);
  }

  // --- Delivery ledger ------------------------------------------------------------------------

  async findDelivered(keys: readonly DeliveryKey[]): Promise<Set<string>> {
    const wanted = new Map<string, { key: Key; ids: Set<string> }>();
    for (const key of keys) {
      const itemKey = deliveryItemKey(key);
      const entry = wanted.get(keyString(itemKey)) ?? { key: itemKey, ids: new Set<string>() };
      entry.ids.add(deliveryId(key));
      wanted.set(keyString(itemKey), entry);
    }
    const delivered = new Set<string>();
    const batches = chunk(
      [...wanted.values()].map((entry) => entry.key),
      batchGetLimit,
    );
    await settleAll(
      batches.map((batch) =>
        this.#limit(() =>
          this.#drain('reading the delivery ledger', batch, async (pending) => {
            const output = await this.#documents.send(
              new BatchGetCommand({
                RequestItems: {
                  [this.#table]: {
                    Keys: [...pending],
                    // A ledger entry written by the previous run must be seen, or its alert goes out twice.
                    ConsistentRead: true,
                    ProjectionExpression: '#pk, #sk',
                    ExpressionAttributeNames: { '#pk': 'pk', '#sk': 'sk' },
                  },
                },
              }),
            );
            // Items past their TTL that DynamoDB has not deleted yet still count as delivered.
            for (const item of output.Responses?.[this.#table] ?? []) {
              const entry = wanted.get(keyString({ pk: String(item.pk), sk: String(item.sk) }));
              for (const id of entry?.ids ?? []) delivered.add(id);
            }
            return (output.UnprocessedKeys?.[this.#table]?.Keys ?? []) as Key[];
          }),
        ),
      ),
    );
    return delivered;
  }

  async recordDelivered(records: readonly DeliveryRecord[]): Promise<void> {
    await this.#writeAll(
      'writing the delivery ledger',
      records.map((record) => {
        const key = deliveryItemKey(record);
        const item = {
          ...key,
          audienceId: record.audienceId,
          articleKey: record.articleKey,
          deliveredAt: record.deliveredAt,
          ...(record.messageId === undefined ? {} : { messageId: record.messageId }),
          ruleIds: [...record.ruleIds],
          expiresAt: ttlSeconds(record.deliveredAt, this.#ledgerRetentionDays),
        };
        return { key, request: { PutRequest: { Item: item } } };
      }),
    );
  }

  // --- Undeliverable notifications ------------------------------------------------------------

  async recordUndeliverable(records: readonly UndeliverableRecord[]): Promise<void> {
    await this.#writeAll(
      'parking undeliverable notifications',
      records.map((record) => {
        const key = undeliverableItemKey(record);
        const item = {
          ...key,
          audienceId: record.audienceId,
          articleKey: record.articleKey,
          topicArn: record.topicArn,
          failedAt: record.failedAt,
          code: record.code,
          reason: record.reason,
          subject: record.subject,
          body: record.body,
          expiresAt: ttlSeconds(record.failedAt, this.#undeliverableRetentionDays),
        };
        return { key, request: { PutRequest: { Item: item } } };
      }),
    );
  }

  /** The notifications parked for `audienceId`, oldest failure first (the order to replay them). */
  async listUndeliverable(audienceId: string): Promise<UndeliverableRecord[]> {
    const items = await this.#queryAll(`undeliverable#${keyPart(audienceId)}`);
    const records: UndeliverableRecord[] = [];
    for (const item of items) {
      const parsed = UndeliverableItem.safeParse(item);
      if (parsed.success) records.push(parsed.data);
      else this.#log.warn('skipped a malformed undeliverable item', { pk: item.pk, sk: item.sk });
    }
    return records.sort((a, b) => a.failedAt - b.failedAt);
  }

  /** Removes parked notifications, e.g. after `news-alerts replay` published them. */
  async forgetUndeliverable(keys: readonly DeliveryKey[]): Promise<void> {
    await this.#writeAll(
      'removing undeliverable notifications',
      keys.map((deliveryKey) => {
        const key = undeliverableItemKey(deliveryKey);
        return { key, request: { DeleteRequest: { Key: key } } };
      }),
    );
  }

  // --- Run history ----------------------------------------------------------------------------

  async recordRun(record: RunRecord): Promise<void> {
    await this.#documents.send(
      new PutCommand({
        TableName: this.#table,
        Item: {
          pk: runPartition,
          // ISO 8601 sorts like the instant and reads well in the console.
          sk: `${new Date(record.startedAt).toISOString()}#${keyPart(record.runId)}`,
          runId: record.runId,
          status: record.status,
          startedAt: record.startedAt,
          finishedAt: record.finishedAt,
          // A JSON round trip drops undefined values and turns NaN into null, which the document
          // client would otherwise refuse to marshal.
          summary: JSON.parse(JSON.stringify(record.summary)) as Record<string, unknown>,
          expiresAt: ttlSeconds(record.finishedAt, this.#runRetentionDays),
        },
      }),
    );
  }

  async recentRuns(limit: number): Promise<RunRecord[]> {
    const runs: RunRecord[] = [];
    let startKey: Record<string, unknown> | undefined;
    while (runs.length < limit) {
      const output = await this.#documents.send(
        new QueryCommand({
          TableName: this.#table,
          KeyConditionExpression: '#pk = :pk',
          ExpressionAttributeNames: { '#pk': 'pk' },
          ExpressionAttributeValues: { ':pk': runPartition },
          ScanIndexForward: false,
          Limit: limit - runs.length,
          ExclusiveStartKey: startKey,
        }),
      );
      for (const item of output.Items ?? []) {
        const parsed = RunItem.safeParse(item);
        if (parsed.success) runs.push(parsed.data);
        else this.#log.warn('skipped a malformed run history item', { sk: item.sk });
      }
      startKey = output.LastEvaluatedKey;
      if (startKey === undefined) break;
    }
    return runs;
  }

  // --- Batching -------------------------------------------------------------------------------

  /** BatchWriteItem in requests of 25, one request per item key (DynamoDB rejects duplicates in a batch). */
  async #writeAll(what: string, requests: readonly KeyedWrite[]): Promise<void> {
    const unique = new Map<string, WriteRequest>();
    for (const { key, request } of requests) unique.set(keyString(key), request);
    await settleAll(
      chunk([...unique.values()], batchWriteLimit).map((batch) =>
        this.#limit(() =>
          this.#drain(what, batch, async (pending) => {
            const output = await this.#documents.send(
              new BatchWriteCommand({ RequestItems: { [this.#table]: [...pending] } }),
            );
            return output.UnprocessedItems?.[this.#table] ?? [];
          }),
        ),
      ),
    );
  }

  /**
   * Sends `batch`, then re-sends whatever DynamoDB hands back unprocessed (it does so under
   * throttling) with exponential backoff and full jitter, and fails loudly if some never go through.
   */
  async #drain<T>(what: string, batch: readonly T[], send: (pending: readonly T[]) => Promise<readonly T[]>) {
    let pending = batch;
    for (let attempt = 1; pending.length > 0; attempt += 1) {
      pending = await send(pending);
      if (pending.length === 0) return;
      if (attempt >= maxBatchAttempts) {
        throw new StateStoreError(
          `${what}: ${pending.length} of ${batch.length} item(s) in ${this.#table} were still unprocessed after ${attempt} attempts`,
        );
      }
      this.#log.debug('retrying unprocessed batch items', { what, unprocessed: pending.length, attempt });
      await this.#sleep(backoff(attempt));
    }
  }

  async #queryAll(pk: string): Promise<Record<string, unknown>[]> {
    const items: Record<string, unknown>[] = [];
    let startKey: Record<string, unknown> | undefined;
    do {
      const output = await this.#documents.send(
        new QueryCommand({
          TableName: this.#table,
          KeyConditionExpression: '#pk = :pk',
          ExpressionAttributeNames: { '#pk': 'pk' },
          ExpressionAttributeValues: { ':pk': pk },
          ConsistentRead: true,
          ExclusiveStartKey: startKey,
        }),
      );
      items.push(...(output.Items ?? []));
      startKey = output.LastEvaluatedKey;
    } while (startKey !== undefined);
    return items;
  }
}

/** Exponential backoff with full jitter (AWS Architecture Blog, "Exponential Backoff And Jitter"). */
const backoff = (attempt: number): number => Math.random() * Math.min(backoffCapMs, backoffBaseMs * 2 ** attempt);

const transientCodes = new Set(['TransactionConflict', 'ThrottlingError', 'ProvisionedThroughputExceeded']);

function isTransient(reasons: readonly CancellationReason[] | undefined): boolean {
  return (reasons ?? []).some((reason) => reason.Code !== undefined && transientCodes.has(reason.Code));
}

const reasonCodes = (reasons: readonly CancellationReason[] | undefined): string =>
  (reasons ?? []).map((reason) => reason.Code ?? 'unknown').join(', ') || 'no reasons given';

function describeLostLease(lease: Lease, reason: CancellationReason, now: number): string {
  const holder = oldItem(LeaseItem, reason.Item);
  if (holder === undefined) return `the run lease of ${lease.owner} is gone; the watermark was not moved`;
  if (holder.owner !== lease.owner) {
    return `the run lease was taken over by ${holder.owner}; the watermark was not moved`;
  }
  return `the run lease of ${lease.owner} expired at ${new Date(holder.leaseExpiresAt).toISOString()} (now ${new Date(now).toISOString()}); the watermark was not moved`;
}

function describeConflict(expected: Watermark | undefined, reason: CancellationReason): string {
  const current = oldItem(WatermarkItem, reason.Item);
  const wanted = expected === undefined ? 'no watermark yet' : `version ${expected.version}`;
  const found =
    current === undefined
      ? 'none'
      : `version ${current.version} at ${new Date(current.at).toISOString()} set by ${current.runId}`;
  return `the watermark changed since it was read: expected ${wanted}, found ${found}`;
}
