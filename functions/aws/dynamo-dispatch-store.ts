/**
 * The DynamoDB adapter of {@link DispatchStore}: the completion counts of sharded publishing, in
 * the state table.
 *
 * What it guarantees:
 * - at most one dispatch is open: the open pointer is written only when none points elsewhere, in
 *   the same transaction as a check of the run lease, so a run that lost its lease can neither
 *   open, seal nor close a dispatch;
 * - each work item counts once: its completion record gets `doneAt` only where it has none, in
 *   the same transaction that ADDs its result to the head, so a redelivered item (or two
 *   deliveries racing) changes nothing the second time and `completeItem` returns false;
 * - one delivery of an item at a time: a publisher claims the items of its batch in one
 *   transaction (`claimItems`: a conditional put per item that only takes an item nobody holds,
 *   or whose holder's claim lapsed; an item of a dispatch a run closed, which a read of its head
 *   after the claim tells, is given back and publishes nothing), and settles them in one more per
 *   dispatch (`settleItems`:
 *   the done ones recorded and counted, only while the claim is still its own, the failed ones
 *   released). Three requests per publisher batch (the head read too), whatever it holds, where
 *   a claim, a completion and a release per item would cost several per item;
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
 * - completion: pk `dispatch#<dispatchId>`, sk `item#<itemId>`; `dispatchId`, `itemId`, while a
 *   delivery holds it `claimOwner` and `claimedUntil`, once done `doneAt` and the item's result.
 *   TTL claim or doneAt + retention.
 * - open pointer: pk `dispatch`, sk `open`; `dispatchId`, `openedAt`. No TTL: it lives until a
 *   run closes the dispatch.
 *
 * Ids go through {@link keyPart}, so `#`, unicode or very long ids can never break a key.
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import {
  type AttributeValue,
  type CancellationReason,
  ConditionalCheckFailedException,
  GetItemCommand,
  QueryCommand,
  TransactionCanceledException,
  TransactionConflictException,
} from '@aws-sdk/client-dynamodb';
import {
  type DynamoDBDocumentClient,
  TransactWriteCommand,
  type TransactWriteCommandInput,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import * as z from 'zod/mini';
import { isWorkableInstant } from '#core/calendar';
import { DispatchOpenError, LeaseLostError } from '#core/errors';
import { unreadableAttributesOf } from '#core/model';
import {
  type ClaimOutcome,
  type DispatchHead,
  type DispatchStore,
  type Lease,
  type Log,
  publisherBatchMax,
  transactionMaxActions,
  type WorkItemClaim,
  type WorkItemRef,
  type WorkItemResult,
} from '#core/ports';
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
import { readItem } from './dynamo-rule-source.ts';

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
// An instant edited by hand outside 1970 to 9999 is damage: `advanceTo` becomes the watermark.
const instant = z.number().check(z.refine(isWorkableInstant));
const ResultSchema = z.object({
  published: count,
  updateNotices: count,
  alreadyDelivered: count,
  parked: count,
});
// A damaged openedAt reads as absent (opened at 0: the run gives the dispatch up): a pointer
// whose dispatchId can be read must always be settled, or no run could open another.
const PointerItem = z.object({ dispatchId: z.string(), openedAt: z.catch(z.optional(instant), undefined) });
/** The counts of a done completion record. */
const resultCounts = ['published', 'updateNotices', 'alreadyDelivered', 'parked'] as const;

type TransactAction = NonNullable<TransactWriteCommandInput['TransactItems']>[number];

const refKey = (ref: WorkItemRef): string => `${ref.dispatchId}\u0000${ref.itemId}`;

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
    // Attributes that could not be decoded at all read as absent: damaged too, optional or not.
    for (const { attribute } of unreadableAttributesOf(item)) if (!damaged.includes(attribute)) damaged.push(attribute);
    if (damaged.length > 0) {
      this.#log.warn('a dispatch head is malformed; its damaged fields read as zero or absent', {
        dispatchId,
        fields: damaged,
      });
    }
    return head;
  }

  async completeItem(dispatchId: string, itemId: string, result: WorkItemResult, now: number): Promise<boolean> {
    const [counted] = await this.#complete(undefined, [{ dispatchId, itemId, result }], [], now);
    return counted ?? false;
  }

  async claimItems(items: readonly WorkItemRef[], claim: WorkItemClaim): Promise<ClaimOutcome[]> {
    const distinct = [...new Map(items.map((ref) => [refKey(ref), ref])).values()];
    const outcomes = new Map<string, ClaimOutcome>();
    for (let start = 0; start < distinct.length; start += transactionMaxActions) {
      await this.#claimChunk(distinct.slice(start, start + transactionMaxActions), claim, outcomes);
    }
    // A dispatch a run gave up (it reads the days again) lets no item be claimed: a copy queued
    // before would race the one the run queues anew. Its head is read after the claims are in:
    // the run marks it closed before it looks for live claims, so either the run sees these claims
    // and waits for them, or this read sees the head closed and they are given back. A check in
    // the claim transaction would do too, but every publisher's settlement updates the head, and
    // their claims would conflict with each other (TransactionConflict). No head: not closed.
    const claimed = distinct.filter((ref) => outcomes.get(refKey(ref))?.state === 'claimed');
    const closed = await this.#closedDispatches([...new Set(claimed.map((ref) => ref.dispatchId))]);
    const givenBack = claimed.filter((ref) => closed.has(ref.dispatchId));
    if (givenBack.length > 0) {
      await this.#complete(claim.owner, [], givenBack, claim.now);
      for (const ref of givenBack) outcomes.set(refKey(ref), { state: 'closed' });
    }
    return items.map((ref) => outcomes.get(refKey(ref)) ?? { state: 'busy' });
  }

  /** Which of `dispatchIds` a run closed: their heads read strongly consistent, one request each. */
  async #closedDispatches(dispatchIds: readonly string[]): Promise<Set<string>> {
    const heads = await Promise.all(dispatchIds.map((dispatchId) => this.#get(dispatchHeadKey(dispatchId))));
    return new Set(dispatchIds.filter((_, index) => heads[index]?.closed !== undefined));
  }

  /**
   * One transaction of conditional puts. A cancelled one wrote nothing: the items whose condition
   * failed are answered from the record the cancellation returns (done or busy), and the rest are
   * tried again without them, so each round settles at least one item.
   */
  async #claimChunk(refs: readonly WorkItemRef[], claim: WorkItemClaim, outcomes: Map<string, ClaimOutcome>) {
    let pending = refs;
    while (pending.length > 0) {
      const reasons = await this.#transact(
        `claiming ${pending.length} work item(s)`,
        pending.map((ref) => ({
          Put: {
            TableName: this.#table,
            Item: {
              ...completionKey(ref.dispatchId, ref.itemId),
              dispatchId: ref.dispatchId,
              itemId: ref.itemId,
              claimOwner: claim.owner,
              claimedUntil: claim.until,
              expiresAt: ttlSeconds(claim.now, this.#retentionDays),
            },
            // Free: never claimed, or held by a delivery whose claim lapsed, and not done.
            ConditionExpression:
              'attribute_not_exists(#pk) OR (attribute_not_exists(#doneAt) AND #claimedUntil < :now)',
            ExpressionAttributeNames: { '#pk': 'pk', '#doneAt': 'doneAt', '#claimedUntil': 'claimedUntil' },
            ExpressionAttributeValues: { ':now': claim.now },
            ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
          },
        })),
      );
      if (reasons === undefined) {
        for (const ref of pending) outcomes.set(refKey(ref), { state: 'claimed' });
        return;
      }
      const failed = reasons.reasons.map((reason) => reason.Code === 'ConditionalCheckFailed');
      if (!failed.some(Boolean)) throw this.#cancelled(`claiming ${pending.length} work item(s)`, reasons);
      const retry: WorkItemRef[] = [];
      pending.forEach((ref, index) => {
        if (!failed[index]) {
          retry.push(ref);
          return;
        }
        // Done is what the condition saw: a doneAt, whatever became of the counts beside it.
        const old = reasons.reasons[index]?.Item;
        outcomes.set(
          refKey(ref),
          old?.doneAt !== undefined ? { state: 'done', result: this.#storedResult(ref, old) } : { state: 'busy' },
        );
      });
      pending = retry;
    }
  }

  /**
   * The result a done completion record holds (raw, as a failed claim condition returns it), each
   * count read on its own: a damaged one reads as 0 with a warning (the item is done either way).
   */
  #storedResult(ref: WorkItemRef, raw: Record<string, AttributeValue>): WorkItemResult {
    const item = readItem(raw);
    const damaged: string[] = [];
    const result = Object.fromEntries(
      resultCounts.map((name) => {
        const parsed = count.safeParse(item[name] ?? 0);
        if (!parsed.success) damaged.push(name);
        return [name, parsed.success ? parsed.data : 0];
      }),
    ) as Record<(typeof resultCounts)[number], number>;
    if (damaged.length > 0) {
      this.#log.warn('a done work item record is malformed; its damaged counts read as zero', {
        dispatchId: ref.dispatchId,
        itemId: ref.itemId,
        fields: damaged,
      });
    }
    return result;
  }

  async settleItems(
    owner: string,
    settlement: {
      readonly done: readonly (WorkItemRef & { readonly result: WorkItemResult })[];
      readonly released: readonly WorkItemRef[];
    },
    now: number,
  ): Promise<boolean[]> {
    return await this.#complete(owner, settlement.done, settlement.released, now);
  }

  /**
   * Records `done` items (counted in their heads) and drops `released` claims, one transaction
   * per dispatch and at most 100 actions each. With an `owner`, an item counts only while its
   * claim is still that owner's; without, only where it is not done yet. A cancelled transaction
   * wrote nothing: items whose condition failed are answered false (done or taken over by another
   * delivery) and the rest go again with the head's sums recomputed.
   */
  async #complete(
    owner: string | undefined,
    done: readonly (WorkItemRef & { readonly result: WorkItemResult })[],
    released: readonly WorkItemRef[],
    now: number,
  ): Promise<boolean[]> {
    for (const entry of done) {
      const counts = ResultSchema.safeParse(entry.result);
      if (!counts.success) {
        throw new StateStoreError(
          `the result of work item ${entry.itemId} is not a set of counts: ${z.prettifyError(counts.error)}`,
        );
      }
    }
    const counted = new Map<string, boolean>();
    const dispatchIds = [...new Set([...done, ...released].map((ref) => ref.dispatchId))];
    for (const dispatchId of dispatchIds) {
      // An item named twice is settled once; a done one wins over a release of the same item.
      const doneHere = [...new Map(done.filter((e) => e.dispatchId === dispatchId).map((e) => [e.itemId, e])).values()];
      const doneIds = new Set(doneHere.map((entry) => entry.itemId));
      const releasedHere = [
        ...new Map(
          released.filter((r) => r.dispatchId === dispatchId && !doneIds.has(r.itemId)).map((r) => [r.itemId, r]),
        ).values(),
      ];
      // The head takes one action per transaction.
      const room = publisherBatchMax;
      for (let start = 0; start < doneHere.length + releasedHere.length; start += room) {
        const chunkDone = doneHere.slice(start, start + room);
        const chunkReleased = releasedHere.slice(
          Math.max(0, start - doneHere.length),
          Math.max(0, start + room - doneHere.length),
        );
        await this.#completeChunk(owner, dispatchId, chunkDone, chunkReleased, now, counted);
      }
    }
    return done.map((entry) => counted.get(refKey(entry)) ?? false);
  }

  async #completeChunk(
    owner: string | undefined,
    dispatchId: string,
    done: readonly (WorkItemRef & { readonly result: WorkItemResult })[],
    released: readonly WorkItemRef[],
    now: number,
    counted: Map<string, boolean>,
  ): Promise<void> {
    let pendingDone = done;
    let pendingReleased = released;
    const what = `completing ${done.length} work item(s) of dispatch ${dispatchId}`;
    while (pendingDone.length > 0 || pendingReleased.length > 0) {
      const actions: TransactAction[] = [
        ...pendingDone.map((entry) => this.#doneAction(owner, entry, now)),
        ...pendingReleased.map((ref) => this.#releaseAction(owner ?? '', ref)),
      ];
      if (pendingDone.length > 0) actions.push(this.#headAction(dispatchId, pendingDone));
      const reasons = await this.#transact(what, actions);
      if (reasons === undefined) {
        for (const entry of pendingDone) counted.set(refKey(entry), true);
        return;
      }
      const failed = reasons.reasons.map((reason) => reason.Code === 'ConditionalCheckFailed');
      const itemFailed = failed.slice(0, pendingDone.length + pendingReleased.length);
      const headFailed = pendingDone.length > 0 && failed[actions.length - 1] === true;
      if (itemFailed.some(Boolean)) {
        // Already done, or another delivery's claim now: not counted here. Its release is moot.
        const doneCount = pendingDone.length;
        pendingDone = pendingDone.filter((entry, index) => {
          if (itemFailed[index]) counted.set(refKey(entry), false);
          return !itemFailed[index];
        });
        pendingReleased = pendingReleased.filter((_, index) => !itemFailed[doneCount + index]);
        continue;
      }
      if (headFailed) {
        throw new StateStoreError(
          `dispatch ${dispatchId} has no head in ${this.#table} (never opened, or expired); work item ${pendingDone[0]?.itemId ?? ''} was not counted`,
          { cause: reasons.error },
        );
      }
      throw this.#cancelled(what, reasons);
    }
  }

  #doneAction(
    owner: string | undefined,
    entry: WorkItemRef & { readonly result: WorkItemResult },
    now: number,
  ): TransactAction {
    const { published, updateNotices, alreadyDelivered, parked } = entry.result;
    return {
      Update: {
        TableName: this.#table,
        Key: completionKey(entry.dispatchId, entry.itemId),
        UpdateExpression:
          'SET #dispatchId = :dispatchId, #itemId = :itemId, #doneAt = :now, #published = :published, #updateNotices = :updateNotices, #alreadyDelivered = :alreadyDelivered, #parked = :parked, #expiresAt = :ttl',
        ConditionExpression:
          owner === undefined
            ? 'attribute_not_exists(#doneAt)'
            : 'attribute_not_exists(#doneAt) AND #claimOwner = :owner',
        ExpressionAttributeNames: {
          '#dispatchId': 'dispatchId',
          '#itemId': 'itemId',
          '#doneAt': 'doneAt',
          '#published': 'published',
          '#updateNotices': 'updateNotices',
          '#alreadyDelivered': 'alreadyDelivered',
          '#parked': 'parked',
          '#expiresAt': 'expiresAt',
          ...(owner === undefined ? {} : { '#claimOwner': 'claimOwner' }),
        },
        ExpressionAttributeValues: {
          ':dispatchId': entry.dispatchId,
          ':itemId': entry.itemId,
          ':now': now,
          ':published': published,
          ':updateNotices': updateNotices,
          ':alreadyDelivered': alreadyDelivered,
          ':parked': parked,
          ':ttl': ttlSeconds(now, this.#retentionDays),
          ...(owner === undefined ? {} : { ':owner': owner }),
        },
      },
    };
  }

  /** Drops a claim that is still `owner`'s and not done, so the item's next delivery may claim it. */
  #releaseAction(owner: string, ref: WorkItemRef): TransactAction {
    return {
      Delete: {
        TableName: this.#table,
        Key: completionKey(ref.dispatchId, ref.itemId),
        ConditionExpression: 'attribute_not_exists(#doneAt) AND #claimOwner = :owner',
        ExpressionAttributeNames: { '#doneAt': 'doneAt', '#claimOwner': 'claimOwner' },
        ExpressionAttributeValues: { ':owner': owner },
      },
    };
  }

  /** Adds the results of `done` to the dispatch's head. */
  #headAction(dispatchId: string, done: readonly { readonly result: WorkItemResult }[]): TransactAction {
    const sum = (pick: (result: WorkItemResult) => number) =>
      done.reduce((total, entry) => total + pick(entry.result), 0);
    return {
      Update: {
        TableName: this.#table,
        Key: dispatchHeadKey(dispatchId),
        UpdateExpression:
          'ADD #done :done, #published :published, #updateNotices :updateNotices, #alreadyDelivered :alreadyDelivered, #parked :parked',
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
          ':done': done.length,
          ':published': sum((r) => r.published),
          ':updateNotices': sum((r) => r.updateNotices),
          ':alreadyDelivered': sum((r) => r.alreadyDelivered),
          ':parked': sum((r) => r.parked),
        },
      },
    };
  }

  async stopClaims(lease: Lease, dispatchId: string, now: number): Promise<void> {
    const reasons = await this.#transact(`giving up dispatch ${dispatchId}`, [
      this.#leaseCheck(lease, now),
      // Not conditional on the head: a head deleted by hand is written anew, closed, so that no
      // item naming it can be claimed either. An earlier close stands.
      this.#closeHeadAction(dispatchId, 'abandoned', now, { keepEarlier: true }),
    ]);
    if (reasons === undefined) return;
    const [leaseReason] = reasons.reasons;
    if (leaseReason?.Code === 'ConditionalCheckFailed') {
      throw new LeaseLostError(describeLostLease(lease, leaseReason, now, 'the dispatch was not given up'), {
        cause: reasons.error,
      });
    }
    throw this.#cancelled(`giving up dispatch ${dispatchId}`, reasons);
  }

  async liveClaimsUntil(dispatchId: string, now: number, latest: number): Promise<number | undefined> {
    let found: number | undefined;
    let startKey: Record<string, AttributeValue> | undefined;
    do {
      const output = await this.#documents.send(
        new QueryCommand({
          TableName: this.#table,
          KeyConditionExpression: '#pk = :pk AND begins_with(#sk, :item)',
          FilterExpression: 'attribute_not_exists(#doneAt) AND #claimedUntil BETWEEN :now AND :latest',
          ExpressionAttributeNames: { '#pk': 'pk', '#sk': 'sk', '#doneAt': 'doneAt', '#claimedUntil': 'claimedUntil' },
          ExpressionAttributeValues: {
            ':pk': { S: dispatchHeadKey(dispatchId).pk },
            ':item': { S: 'item#' },
            ':now': { N: String(now) },
            ':latest': { N: String(latest) },
          },
          ProjectionExpression: '#claimedUntil',
          ConsistentRead: true,
          ExclusiveStartKey: startKey,
        }),
      );
      for (const raw of output.Items ?? []) {
        // Decoded one by one (a value typed by hand): one that is no instant is no live claim.
        const until = readItem(raw).claimedUntil;
        if (typeof until === 'number' && Number.isFinite(until)) found = Math.max(found ?? until, until);
      }
      startKey = output.LastEvaluatedKey;
    } while (startKey !== undefined);
    return found;
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
      this.#closeHeadAction(dispatchId, outcome, now, { keepEarlier: false }),
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

  /**
   * Marks the head closed with `outcome` (written anew if it is gone). With `keepEarlier`, an
   * outcome already there stands (giving up never undoes a close).
   */
  #closeHeadAction(
    dispatchId: string,
    outcome: 'completed' | 'abandoned',
    now: number,
    options: { readonly keepEarlier: boolean },
  ): TransactAction {
    const set = (name: string, value: string) =>
      options.keepEarlier ? `${name} = if_not_exists(${name}, ${value})` : `${name} = ${value}`;
    return {
      Update: {
        TableName: this.#table,
        Key: dispatchHeadKey(dispatchId),
        UpdateExpression: `SET #dispatchId = :id, ${set('#closed', ':outcome')}, ${set('#closedAt', ':now')}, #expiresAt = if_not_exists(#expiresAt, :ttl)`,
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
    };
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

  /**
   * The item at `key`, decoded attribute by attribute ({@link readItem}), not by the document
   * client, which throws on the whole item for one number edited by hand that it cannot convert
   * (past 2^53, with a fraction): that attribute reads as damaged, and every run still settles.
   */
  async #get(key: Key): Promise<Record<string, unknown> | undefined> {
    const { Item } = await this.#documents.send(
      new GetItemCommand({
        TableName: this.#table,
        Key: { pk: { S: key.pk }, sk: { S: key.sk } },
        ConsistentRead: true,
      }),
    );
    return Item === undefined ? undefined : readItem(Item);
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
