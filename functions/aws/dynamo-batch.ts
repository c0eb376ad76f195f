/**
 * Batched reads and writes on the state table, shared by its adapters (run state, story index):
 * requests never exceed DynamoDB's per-call limits (100 keys to get, 25 items to write, no
 * duplicate key in one write), items DynamoDB hands back unprocessed (it does so under
 * throttling) are sent again with exponential backoff and full jitter until they go through or a
 * StateStoreError says how many never did, and no more requests are in flight than the caller's
 * limiter allows. Key parts taken from data are bounded by {@link keyPart}.
 */
import { createHash } from 'node:crypto';
import { type AttributeValue, BatchGetItemCommand, type CancellationReason } from '@aws-sdk/client-dynamodb';
import {
  BatchGetCommand,
  BatchWriteCommand,
  type BatchWriteCommandInput,
  type DynamoDBDocumentClient,
} from '@aws-sdk/lib-dynamodb';
import type { LimitFunction } from 'p-limit';
import * as z from 'zod/mini';
import { NewsAlertsError } from '#core/errors';
import { type DeliveryKey, deliveryId, type Lease, type Log } from '#core/ports';
import { exponentialBackoff } from '#shared/retry';
import { readItem } from './dynamo-rule-source.ts';

/** The state table could not be read or written as expected (after retries where they help). */
export class StateStoreError extends NewsAlertsError {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'StateStoreError';
  }
}

/** The state table's primary key. */
export type Key = { readonly pk: string; readonly sk: string };

/** DynamoDB's own per-request limits; moto does not enforce the write one, so we do. */
export const batchGetLimit = 100;
export const batchWriteLimit = 25;
/** Attempts for a batch whose items keep coming back unprocessed (throttling). */
export const maxBatchAttempts = 8;
const backoffBaseMs = 50;
const backoffCapMs = 3_000;

export const dayMs = 86_400_000;
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

/** A key as one string (map keys; `\u0000` cannot occur in either part's meaning). */
export const keyString = (key: Key): string => `${key.pk}\u0000${key.sk}`;

/** TTL value (epoch seconds) `days` after the epoch-ms instant `from`. */
export const ttlSeconds = (from: number, days: number): number => Math.floor((from + days * dayMs) / 1000);

export function chunk<T>(items: readonly T[], size: number): T[][] {
  const chunks: T[][] = [];
  for (let start = 0; start < items.length; start += size) chunks.push(items.slice(start, start + size));
  return chunks;
}

/** Waits for every task (so nothing is left in flight), then rethrows the first failure. */
export async function settleAll(tasks: readonly Promise<void>[]): Promise<void> {
  const results = await Promise.allSettled(tasks);
  const failed = results.find((result): result is PromiseRejectedResult => result.status === 'rejected');
  if (failed !== undefined) throw failed.reason;
}

/** Full jitter; the first retry already waits up to twice the base. */
export const backoff = (attempt: number): number =>
  exponentialBackoff(attempt + 1, { baseMs: backoffBaseMs, maxMs: backoffCapMs, jitter: 'full', random: Math.random });

/** What the batch helpers need from their adapter. */
export interface BatchContext {
  readonly documents: DynamoDBDocumentClient;
  readonly table: string;
  /** Shared by every call of one adapter, so concurrent calls share the bound. */
  readonly limit: LimitFunction;
  readonly sleep: (ms: number) => Promise<void>;
  readonly log: Log;
}

/**
 * Sends `batch`, then re-sends whatever DynamoDB hands back unprocessed with exponential backoff
 * and full jitter, and fails loudly if some never go through.
 */
export async function drainBatch<T>(
  context: Pick<BatchContext, 'table' | 'sleep' | 'log'>,
  what: string,
  batch: readonly T[],
  send: (pending: readonly T[]) => Promise<readonly T[]>,
): Promise<void> {
  let pending = batch;
  for (let attempt = 1; pending.length > 0; attempt += 1) {
    pending = await send(pending);
    if (pending.length === 0) return;
    if (attempt >= maxBatchAttempts) {
      throw new StateStoreError(
        `${what}: ${pending.length} of ${batch.length} item(s) in ${context.table} were still unprocessed after ${attempt} attempts`,
      );
    }
    context.log.debug('retrying unprocessed batch items', { what, unprocessed: pending.length, attempt });
    await context.sleep(backoff(attempt));
  }
}

type WriteRequest = NonNullable<BatchWriteCommandInput['RequestItems']>[string][number];
/** One BatchWriteItem request with the key it writes (to drop duplicates). */
export type KeyedWrite = { readonly key: Key; readonly request: WriteRequest };

/** BatchWriteItem in requests of 25, one request per item key (the last one given wins). */
export async function writeAll(context: BatchContext, what: string, requests: readonly KeyedWrite[]): Promise<void> {
  const unique = new Map<string, WriteRequest>();
  for (const { key, request } of requests) unique.set(keyString(key), request);
  await settleAll(
    chunk([...unique.values()], batchWriteLimit).map((batch) =>
      context.limit(() =>
        drainBatch(context, what, batch, async (pending) => {
          const output = await context.documents.send(
            new BatchWriteCommand({ RequestItems: { [context.table]: [...pending] } }),
          );
          return output.UnprocessedItems?.[context.table] ?? [];
        }),
      ),
    ),
  );
}

/**
 * BatchGetItem in requests of 100 distinct keys, strongly consistent: every item of `keys` that
 * exists, by {@link keyString} of its key.
 */
export async function getAll(
  context: BatchContext,
  what: string,
  keys: readonly Key[],
  /**
   * Decodes each raw item instead of the document client, which throws on a whole batch for one
   * value it cannot convert (a number typed by hand past 2^53): for items ops may edit by hand.
   */
  decode?: (raw: Record<string, AttributeValue>) => Record<string, unknown>,
): Promise<Map<string, Record<string, unknown>>> {
  const unique = new Map<string, Key>();
  for (const key of keys) unique.set(keyString(key), { pk: key.pk, sk: key.sk });
  const found = new Map<string, Record<string, unknown>>();
  const readBatch = async (pending: readonly Key[]): Promise<Key[]> => {
    if (decode === undefined) {
      const output = await context.documents.send(
        new BatchGetCommand({ RequestItems: { [context.table]: { Keys: [...pending], ConsistentRead: true } } }),
      );
      for (const item of output.Responses?.[context.table] ?? []) {
        found.set(keyString({ pk: String(item.pk), sk: String(item.sk) }), item);
      }
      return (output.UnprocessedKeys?.[context.table]?.Keys ?? []) as Key[];
    }
    const output = await context.documents.send(
      new BatchGetItemCommand({
        RequestItems: {
          [context.table]: {
            Keys: pending.map((key) => ({ pk: { S: key.pk }, sk: { S: key.sk } })),
            ConsistentRead: true,
          },
        },
      }),
    );
    for (const raw of output.Responses?.[context.table] ?? []) {
      found.set(keyString({ pk: String(raw.pk?.S), sk: String(raw.sk?.S) }), decode(raw));
    }
    return (output.UnprocessedKeys?.[context.table]?.Keys ?? []).map((key) => ({
      pk: String(key.pk?.S),
      sk: String(key.sk?.S),
    }));
  };
  await settleAll(
    chunk([...unique.values()], batchGetLimit).map((batch) =>
      context.limit(() => drainBatch(context, what, batch, readBatch)),
    ),
  );
  return found;
}

/** The run lease item, which every lease-checked write of the state table conditions on. */
export const leaseKey: Key = { pk: 'lease', sk: 'run' };

/** Attempts for a transaction cancelled by conflicts or throttling. */
export const maxTransactionAttempts = 4;

/** The delivery ledger's item key of one notification (the state store and its holds write it). */
export const deliveryItemKey = (key: DeliveryKey): Key => ({
  pk: `delivery#${keyPart(deliveryId(key))}`,
  sk: 'ledger',
});

/**
 * Reads an item returned by a failed condition check (raw attribute values), if it fits. Decoded
 * attribute by attribute ({@link readItem}): a value edited by hand that the document client
 * cannot convert (a number past 2^53 with a fraction) makes the item not fit; it never throws.
 */
export function oldItem<T>(schema: z.ZodMiniType<T>, item: Record<string, AttributeValue> | undefined): T | undefined {
  if (item === undefined) return undefined;
  const parsed = schema.safeParse(readItem(item));
  return parsed.success ? parsed.data : undefined;
}

/** Why a transaction was cancelled that a retry can fix: another transaction, or throttling. */
const transientCodes = new Set(['TransactionConflict', 'ThrottlingError', 'ProvisionedThroughputExceeded']);

export function isTransient(reasons: readonly CancellationReason[] | undefined): boolean {
  return (reasons ?? []).some((reason) => reason.Code !== undefined && transientCodes.has(reason.Code));
}

/** The cancellation reasons of a transaction, for an error message. */
export const reasonCodes = (reasons: readonly CancellationReason[] | undefined): string =>
  (reasons ?? []).map((reason) => reason.Code ?? 'unknown').join(', ') || 'no reasons given';

const LeaseHolderItem = z.object({ owner: z.string(), leaseExpiresAt: z.number() });

/** What became of `lease`, from the lease item a failed condition check returned, and what that means. */
export function describeLostLease(lease: Lease, reason: CancellationReason, now: number, consequence: string): string {
  const holder = oldItem(LeaseHolderItem, reason.Item);
  if (holder === undefined) return `the run lease of ${lease.owner} is gone; ${consequence}`;
  if (holder.owner !== lease.owner) return `the run lease was taken over by ${holder.owner}; ${consequence}`;
  return `the run lease of ${lease.owner} expired at ${new Date(holder.leaseExpiresAt).toISOString()} (now ${new Date(now).toISOString()}); ${consequence}`;
}
