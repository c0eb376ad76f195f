/**
 * The DynamoDB adapter of {@link DispatchStore}: the completion counts of sharded publishing, in
 * the state table.
 *
 * What it guarantees:
 * - at most one dispatch is open: the open pointer is written only when none points elsewhere, in
 *   the same transaction as a check of the run lease, so a run that lost its lease can neither
 *   open, seal nor close a dispatch;
 * - each work item counts once: its completion record is put with `attribute_not_exists` in the
 *   same transaction that ADDs its result to the head, so a redelivered item (or two deliveries
 *   racing) changes nothing the second time and `completeItem` returns false;
 * - reads are strongly consistent, and a hand-damaged item reads as zero or absent with a
 *   warning naming its fields, never as a crash: a damaged `expected` makes the dispatch look
 *   incomplete, so at worst the next run abandons it and reads those days again (the ledger
 *   dedupes), and never moves the watermark past undone work.
 *
 * Item layout (TTL attribute `expiresAt` in epoch seconds, other times epoch milliseconds):
 * - head: pk `dispatch#<dispatchId>`, sk `head`; `dispatchId`, `openedAt`, `enqueued`, `done`,
 *   `published`, `updateNotices`, `alreadyDelivered`, `parked`, and once sealed `expected`,
 *   `sealedAt`, `advanceTo` (when the run had somewhere to move the watermark); once closed
 *   `closed` (`completed`|`abandoned`) and `closedAt`. TTL openedAt + retention (14 days).
 * - completion: pk `dispatch#<dispatchId>`, sk `item#<itemId>`; `dispatchId`, `itemId`, `doneAt`
 *   and the item's result. TTL doneAt + retention.
 * - open pointer: pk `dispatch`, sk `open`; `dispatchId`, `openedAt`. No TTL: it lives until a
 *   run closes the dispatch.
 *
 * Ids go through {@link keyPart}, so `#`, unicode or very long ids can never break a key.
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import {
  type CancellationReason,
  ConditionalCheckFailedException,
  TransactionCanceledException,
  TransactionConflictException,
} from '@aws-sdk/client-dynamodb';
import {
  type DynamoDBDocumentClient,
  GetCommand,
  TransactWriteCommand,
  type TransactWriteCommandInput,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import * as z from 'zod/mini';
import { DispatchOpenError, LeaseLostError } from '#core/errors';
import type { DispatchHead, DispatchStore, Lease, Log, WorkItemResult } from '#core/ports';
import { logger } from '#shared/powertools';
import {
  backoff,
  describeLostLease,
  isTransient,
  type Key,
  keyPart,
  leaseKey,
  oldItem,
  StateStoreError,
  ttlSeconds,
} from './dynamo-batch.ts';

export { StateStoreError };

/** Options of {@link DynamoDispatchStore}. */
export interface DynamoDispatchStoreOptions {
  /** The one shared document client. */
  readonly documents: DynamoDBDocumentClient;
  readonly tableName: string;
  readonly log?: Log;
  /**
   * Accepted for the wiring's symmetry with the other adapters; unused, because every write takes
   * the caller's `now` (the run's and the publisher's clocks, which tests move).
   */
  readonly now?: () => number;
  /** How long heads and completion records stay for the run history. Default 14 days. */
  readonly retentionDays?: number;
  /** Waits between retries of cancelled transactions; tests pass a fast one. */
  readonly sleep?: (ms: number) => Promise<void>;
}

/** The pointer to THE open dispatch. */
export const openDispatchKey: Key = { pk: 'dispatch', sk: 'open' };
const dispatchPartition = (dispatchId: string): string => `dispatch#${keyPart(dispatchId)}`;

/** The key of a dispatch's head (counts, seal, outcome). */
export const dispatchHeadKey = (dispatchId: string): Key => ({ pk: dispatchPartition(dispatchId), sk: 'head' });

/** The key of one work item's completion record. */
export const completionKey = (dispatchId: string, itemId: string): Key => ({
  pk: dispatchPartition(dispatchId),
  sk: `item#${keyPart(itemId)}`,
});

/**
 * Attempts of a transaction cancelled by a conflict. Higher than the state store's: every
 * publisher completing an item touches the same head, so conflicts are expected under load.
 */
const maxTransactionAttempts = 10;

const count = z.number().check(z.int(), z.nonnegative());
// zod 4 numbers are finite already.
const instant = z.number();
const ResultSchema = z.object({
  published: count,
  updateNotices: count,
  alreadyDelivered: count,
  parked: count,
});
const PointerItem = z.object({ dispatchId: z.string(), openedAt: z.optional(instant) });

/** Head fields read one by one, so one damaged field does not hide the others. */
const headCounts = ['enqueued', 'done', 'published', 'updateNotices', 'alreadyDelivered', 'parked'] as const;
const headOptionals = { expected: count, advanceTo: instant, sealedAt: instant } as const;

/** DynamoDB implementation of the dispatch counts; see the module comment for the layout. */
export class DynamoDispatchStore implements DispatchStore {
  readonly #documents: DynamoDBDocumentClient;
  readonly #table: string;
  readonly #log: Log;
  readonly #retentionDays: number;
  readonly #sleep: (ms: number) => Promise<void>;

  constructor(options: DynamoDispatchStoreOptions) {
    this.#documents = options.documents;
    this.#table = options.tableName;
    this.#log = options.log ?? logger;
    this.#retentionDays = options.retentionDays ?? 14;
    this.#sleep = options.sleep ?? ((ms) => delay(ms));
  }

  async open(lease: Lease, dispatchId: string, now: number): Promise<void> {
    const head = dispatchHeadKey(dispatchId);
    const reasons = await this.#transact(`opening dispatch ${dispatchId}`, [
      this.#leaseCheck(lease, now),
      {
        Put: {
          TableName: this.#table,
          Item: { ...openDispatchKey, dispatchId, openedAt: now },
          // The same id again is a retry of this open; a pointer nobody can read names no
          // dispatch (readOpen reports it as none), so it may be replaced rather than block forever.
          ConditionExpression: 'attribute_not_exists(#pk) OR #dispatchId = :id OR NOT attribute_type(#dispatchId, :S)',
          ExpressionAttributeNames: { '#pk': 'pk', '#dispatchId': 'dispatchId' },
          ExpressionAttributeValues: { ':id': dispatchId, ':S': 'S' },
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        },
      },
      {
        // An update, not a put: opening again (a retry whose answer was lost) keeps the counts.
        Update: {
          TableName: this.#table,
          Key: head,
          UpdateExpression: `SET #dispatchId = :id, #openedAt = if_not_exists(#openedAt, :now), #expiresAt = if_not_exists(#expiresAt, :ttl), ${headCounts
            .map((name) => `#${name} = if_not_exists(#${name}, :zero)`)
            .join(', ')}`,
          ExpressionAttributeNames: {
            '#dispatchId': 'dispatchId',
            '#openedAt': 'openedAt',
            '#expiresAt': 'expiresAt',
            ...Object.fromEntries(headCounts.map((name) => [`#${name}`, name])),
          },
          ExpressionAttributeValues: {
            ':id': dispatchId,
            ':now': now,
            ':ttl': ttlSeconds(now, this.#retentionDays),
            ':zero': 0,
          },
        },
      },
    ]);
    if (reasons === undefined) return;
    const [leaseReason, pointerReason] = reasons.reasons;
    if (leaseReason?.Code === 'ConditionalCheckFailed') {
      throw new LeaseLostError(describeLostLease(lease, leaseReason, now, 'no dispatch was opened'), {
        cause: reasons.error,
      });
    }
    if (pointerReason?.Code === 'ConditionalCheckFailed') {
      const open = oldItem(PointerItem, pointerReason.Item);
      throw new DispatchOpenError(open?.dispatchId ?? '<unreadable>', { cause: reasons.error });
    }
    throw this.#cancelled(`opening dispatch ${dispatchId}`, reasons);
  }

  async countEnqueued(dispatchId: string, items: number): Promise<void> {
    checkCount('items', items);
    if (items === 0) return;
    // A plain update of the head meets the publishers' completion transactions on it: DynamoDB
    // refuses it while one is in progress (TransactionConflictException, not retried by the SDK).
    for (let attempt = 1; ; attempt += 1) {
      try {
        await this.#countEnqueuedOnce(dispatchId, items);
        return;
      } catch (error) {
        if (!(error instanceof TransactionConflictException) || attempt >= maxTransactionAttempts) throw error;
        this.#log.debug('counting work items met a completion in progress; retrying', { dispatchId, attempt });
        await this.#sleep(backoff(attempt));
      }
    }
  }

  async #countEnqueuedOnce(dispatchId: string, items: number): Promise<void> {
    try {
      await this.#documents.send(
        new UpdateCommand({
          TableName: this.#table,
          Key: dispatchHeadKey(dispatchId),
          UpdateExpression: 'ADD #enqueued :items',
          // Counting into a dispatch that was never opened, or already sealed, would be lost work.
          ConditionExpression: 'attribute_exists(#pk) AND attribute_not_exists(#sealedAt)',
          ExpressionAttributeNames: { '#pk': 'pk', '#enqueued': 'enqueued', '#sealedAt': 'sealedAt' },
          ExpressionAttributeValues: { ':items': items },
        }),
      );
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) {
        throw new StateStoreError(`dispatch ${dispatchId} is not open for more work items (never opened, or sealed)`, {
          cause: error,
        });
      }
      throw error;
    }
  }

  async seal(
    lease: Lease,
    dispatchId: string,
    seal: { expected: number; advanceTo?: number | undefined },
    now: number,
  ): Promise<void> {
    checkCount('expected', seal.expected);
    const withAdvance = seal.advanceTo !== undefined;
    const reasons = await this.#transact(`sealing dispatch ${dispatchId}`, [
      this.#leaseCheck(lease, now),
      {
        Update: {
          TableName: this.#table,
          Key: dispatchHeadKey(dispatchId),
          UpdateExpression: `SET #expected = :expected, #sealedAt = :now${withAdvance ? ', #advanceTo = :advanceTo' : ''}`,
          ConditionExpression: 'attribute_exists(#pk)',
          ExpressionAttributeNames: {
            '#pk': 'pk',
            '#expected': 'expected',
            '#sealedAt': 'sealedAt',
            ...(withAdvance ? { '#advanceTo': 'advanceTo' } : {}),
          },
          ExpressionAttributeValues: {
            ':expected': seal.expected,
            ':now': now,
            ...(withAdvance ? { ':advanceTo': seal.advanceTo } : {}),
          },
        },
      },
    ]);
    if (reasons === undefined) return;
    const [leaseReason, headReason] = reasons.reasons;
    if (leaseReason?.Code === 'ConditionalCheckFailed') {
      throw new LeaseLostError(describeLostLease(lease, leaseReason, now, 'the dispatch was not sealed'), {
        cause: reasons.error,
      });
    }
    if (headReason?.Code === 'ConditionalCheckFailed') {
      throw new StateStoreError(`dispatch ${dispatchId} has no head in ${this.#table}; it was never opened`, {
        cause: reasons.error,
      });
    }
    throw this.#cancelled(`sealing dispatch ${dispatchId}`, reasons);
  }

  async readOpen(): Promise<DispatchHead | undefined> {
    const item = await this.#get(openDispatchKey);
    if (item === undefined) return undefined;
    const pointer = PointerItem.safeParse(item);
    if (!pointer.success) {
      // It names no dispatch anyone could settle; `open` replaces it.
      this.#log.warn('the open-dispatch pointer is malformed; read as no open dispatch', {
        error: z.prettifyError(pointer.error),
      });
      return undefined;
    }
    const { dispatchId, openedAt } = pointer.data;
    const head = await this.read(dispatchId);
    if (head !== undefined) return head;
    // The pointer outlived its head (deleted by hand): an unsealed, empty dispatch as old as the
    // pointer, which the run waits for and then abandons (the watermark does not move).
    this.#log.warn('the open dispatch has no head; read as opened and never sealed', { dispatchId });
    return emptyHead(dispatchId, openedAt ?? 0);
  }

  async read(dispatchId: string): Promise<DispatchHead | undefined> {
    const item = await this.#get(dispatchHeadKey(dispatchId));
    if (item === undefined) return undefined;
    const damaged: string[] = [];
    const field = <T>(name: string, schema: z.ZodMiniType<T>, required: boolean): T | undefined => {
      const value = item[name];
      if (value === undefined && !required) return undefined;
      const parsed = schema.safeParse(value);
      if (parsed.success) return parsed.data;
      damaged.push(name);
      return undefined;
    };
    const counts = Object.fromEntries(headCounts.map((name) => [name, field(name, count, true) ?? 0])) as Record<
      (typeof headCounts)[number],
      number
    >;
    const head: DispatchHead = {
      dispatchId,
      openedAt: field('openedAt', instant, true) ?? 0,
      ...counts,
      expected: field('expected', headOptionals.expected, false),
      advanceTo: field('advanceTo', headOptionals.advanceTo, false),
      sealedAt: field('sealedAt', headOptionals.sealedAt, false),
    };
    if (damaged.length > 0) {
      this.#log.warn('a dispatch head is malformed; its damaged fields read as zero or absent', {
        dispatchId,
        fields: damaged,
      });
    }
    return head;
  }

  async completeItem(dispatchId: string, itemId: string, result: WorkItemResult, now: number): Promise<boolean> {
    const counts = ResultSchema.safeParse(result);
    if (!counts.success) {
      throw new StateStoreError(
        `the result of work item ${itemId} is not a set of counts: ${z.prettifyError(counts.error)}`,
      );
    }
    const { published, updateNotices, alreadyDelivered, parked } = counts.data;
    const reasons = await this.#transact(`completing work item ${itemId} of dispatch ${dispatchId}`, [
      {
        Put: {
          TableName: this.#table,
          Item: {
            ...completionKey(dispatchId, itemId),
            dispatchId,
            itemId,
            doneAt: now,
            published,
            updateNotices,
            alreadyDelivered,
            parked,
            expiresAt: ttlSeconds(now, this.#retentionDays),
          },
          ConditionExpression: 'attribute_not_exists(#pk)',
          ExpressionAttributeNames: { '#pk': 'pk' },
        },
      },
      {
        Update: {
          TableName: this.#table,
          Key: dispatchHeadKey(dispatchId),
          UpdateExpression:
            'ADD #done :one, #published :published, #updateNotices :updateNotices, #alreadyDelivered :alreadyDelivered, #parked :parked',
          // Counting into a head that is gone would write a head without openedAt or seal.
          ConditionExpression: 'attribute_exists(#pk)',
          ExpressionAttributeNames: {
            '#pk': 'pk',
            '#done': 'done',
            '#published': 'published',
            '#updateNotices': 'updateNotices',
            '#alreadyDelivered': 'alreadyDelivered',
            '#parked': 'parked',
          },
          ExpressionAttributeValues: {
            ':one': 1,
            ':published': published,
            ':updateNotices': updateNotices,
            ':alreadyDelivered': alreadyDelivered,
            ':parked': parked,
          },
        },
      },
    ]);
    if (reasons === undefined) return true;
    const [completionReason, headReason] = reasons.reasons;
    // Already done wins: a redelivered item of a dispatch whose head is gone is still done.
    if (completionReason?.Code === 'ConditionalCheckFailed') return false;
    if (headReason?.Code === 'ConditionalCheckFailed') {
      throw new StateStoreError(
        `dispatch ${dispatchId} has no head in ${this.#table} (never opened, or expired); work item ${itemId} was not counted`,
        { cause: reasons.error },
      );
    }
    throw this.#cancelled(`completing work item ${itemId} of dispatch ${dispatchId}`, reasons);
  }

  async close(lease: Lease, dispatchId: string, outcome: 'completed' | 'abandoned', now: number): Promise<void> {
    const reasons = await this.#transact(`closing dispatch ${dispatchId}`, [
      this.#leaseCheck(lease, now),
      {
        Delete: {
          TableName: this.#table,
          Key: openDispatchKey,
          // Already cleared is a retry of this close; another open dispatch is not ours to clear.
          ConditionExpression: 'attribute_not_exists(#pk) OR #dispatchId = :id',
          ExpressionAttributeNames: { '#pk': 'pk', '#dispatchId': 'dispatchId' },
          ExpressionAttributeValues: { ':id': dispatchId },
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        },
      },
      {
        Update: {
          TableName: this.#table,
          Key: dispatchHeadKey(dispatchId),
          UpdateExpression:
            'SET #dispatchId = :id, #closed = :outcome, #closedAt = :now, #expiresAt = if_not_exists(#expiresAt, :ttl)',
          ExpressionAttributeNames: {
            '#dispatchId': 'dispatchId',
            '#closed': 'closed',
            '#closedAt': 'closedAt',
            '#expiresAt': 'expiresAt',
          },
          ExpressionAttributeValues: {
            ':id': dispatchId,
            ':outcome': outcome,
            ':now': now,
            ':ttl': ttlSeconds(now, this.#retentionDays),
          },
        },
      },
    ]);
    if (reasons === undefined) return;
    const [leaseReason, pointerReason] = reasons.reasons;
    if (leaseReason?.Code === 'ConditionalCheckFailed') {
      throw new LeaseLostError(describeLostLease(lease, leaseReason, now, 'the dispatch was not closed'), {
        cause: reasons.error,
      });
    }
    if (pointerReason?.Code === 'ConditionalCheckFailed') {
      const open = oldItem(PointerItem, pointerReason.Item);
      throw new StateStoreError(
        `dispatch ${dispatchId} is not the open one (${open?.dispatchId ?? 'an unreadable one'} is); nothing was closed`,
        { cause: reasons.error },
      );
    }
    throw this.#cancelled(`closing dispatch ${dispatchId}`, reasons);
  }

  #leaseCheck(lease: Lease, now: number): NonNullable<TransactWriteCommandInput['TransactItems']>[number] {
    return {
      ConditionCheck: {
        TableName: this.#table,
        Key: leaseKey,
        ConditionExpression: '#owner = :owner AND #leaseExpiresAt > :now',
        ExpressionAttributeNames: { '#owner': 'owner', '#leaseExpiresAt': 'leaseExpiresAt' },
        ExpressionAttributeValues: { ':owner': lease.owner, ':now': now },
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      },
    };
  }

  async #get(key: Key): Promise<Record<string, unknown> | undefined> {
    const { Item } = await this.#documents.send(
      new GetCommand({ TableName: this.#table, Key: key, ConsistentRead: true }),
    );
    return Item;
  }

  /**
   * TransactWriteItems, retried with backoff while it is cancelled by conflicts or throttling
   * only. Undefined when it went through; otherwise the cancellation, for the caller to read
   * which condition failed.
   */
  async #transact(
    what: string,
    items: NonNullable<TransactWriteCommandInput['TransactItems']>,
  ): Promise<{ reasons: readonly CancellationReason[]; error: TransactionCanceledException } | undefined> {
    for (let attempt = 1; ; attempt += 1) {
      try {
        // A token per attempt: the SDK's own retry of a commit whose answer was lost is then
        // idempotent, while our retry after a cancellation is a new transaction.
        await this.#documents.send(
          new TransactWriteCommand({ ClientRequestToken: randomUUID(), TransactItems: items }),
        );
        return undefined;
      } catch (error) {
        if (!(error instanceof TransactionCanceledException)) throw error;
        const reasons = error.CancellationReasons ?? [];
        const failedCondition = reasons.some((reason) => reason.Code === 'ConditionalCheckFailed');
        if (failedCondition || !isTransient(reasons)) {
          return { reasons, error };
        }
        if (attempt >= maxTransactionAttempts) return { reasons, error };
        this.#log.debug('dispatch transaction conflicted; retrying', { what, attempt });
        await this.#sleep(backoff(attempt));
      }
    }
  }

  #cancelled(
    what: string,
    cancellation: { reasons: readonly CancellationReason[]; error: TransactionCanceledException },
  ): StateStoreError {
    const codes = cancellation.reasons.map((reason) => reason.Code ?? 'unknown').join(', ') || 'no reasons given';
    return new StateStoreError(`${what} in ${this.#table} was cancelled (${codes})`, { cause: cancellation.error });
  }
}

/** A head with nothing counted: an opened, never sealed dispatch. */
function emptyHead(dispatchId: string, openedAt: number): DispatchHead {
  return {
    dispatchId,
    openedAt,
    enqueued: 0,
    done: 0,
    published: 0,
    updateNotices: 0,
    alreadyDelivered: 0,
    parked: 0,
  };
}

function checkCount(name: string, value: number): void {
  if (!Number.isInteger(value) || value < 0) {
    throw new RangeError(`${name} must be a whole number of at least 0, got ${value}`);
  }
}
