/**
 * The DynamoDB adapter of {@link StateStore}: run lease, watermark, delivery ledger, parked
 * undeliverable notifications and run history, all in the one state table. Held notifications,
 * digest releases, the holding index and daily budgets are written by functions/aws/dynamo-holds.ts,
 * to which this store delegates those methods; the layout of every item is described here.
 *
 * Item layout (partition key `pk`, sort key `sk`, TTL attribute `expiresAt` in epoch SECONDS;
 * every other time is epoch milliseconds):
 *
 * - watermark: pk `watermark`, sk `current`; `at`, `version`, `updatedAt`, `runId`. No TTL.
 * - run lease: pk `lease`, sk `run`; `owner`, `leaseExpiresAt` (ms), `acquiredAt`, and for
 *   holders that describe themselves (CLI runs and replays) `holderHost`, `holderPid`,
 *   `renewEveryMs`, `renewedAt`. TTL one day after the lease ends.
 * - delivery ledger: pk `delivery#<audienceId>|<articleKey>` (the port's `deliveryId`), sk `ledger`;
 *   `audienceId`, `articleKey`, `deliveredAt`, `messageId` (when SNS gave one), `ruleIds`, and
 *   when known: `heldFor` (held for a digest), `storyId`, `collapsedInto` (a copy not sent: its
 *   story id), `status` and `titleHash` (what a re-read compares, core/ledger-facts.ts),
 *   `leadArticleKey` (on a story marker, article key `story:<storyId>`), and on a held
 *   notification's entry once its release finished: `releasedAt`, `releasedIn` (the digest's
 *   article key), `releaseOutcome` (`sent`|`parked`|`dropped`), `releaseCause`
 *   (`due`|`settings-changed`). Update notices are ledger entries with article key
 *   `update:<story or article>#<change>`.
 *   TTL deliveredAt + ledgerRetentionDays, pushed out again when a read finds an entry past half
 *   its retention (see `findDelivered`). One partition key per notification spreads a big
 *   run's writes evenly, as an idempotency table does; an audience-keyed partition would turn a
 *   broad audience into a hot key (1,000 writes/s per partition).
 * - undeliverable: pk `undeliverable#<audienceId>`, sk `<articleKey>`; every UndeliverableRecord
 *   field. TTL failedAt + undeliverableRetentionDays. Keyed by audience because replay lists them
 *   per audience, and there are few.
 * - run history: pk `run`, sk `<startedAt as ISO 8601>#<runId>`; `runId`, `status`, `startedAt`,
 *   `finishedAt`, `summary` (map). TTL finishedAt + runRetentionDays. One run every few minutes
 *   fits one partition; ISO 8601 sorts like the instant, so a reverse Query gives newest first.
 * - held notification: pk `held#<audienceId>`, sk `item#<articleKey>`; `audienceId`,
 *   `articleKey`, `heldAt`, `reason` (`digest`|`quiet-hours`|`budget`), `article` (map), `rules`
 *   (list of maps), `ruleIds`, `storyId` (when the audience collapses stories). TTL heldAt + heldRetentionDays (only reached by an audience that
 *   stays disabled that long). Written in one transaction with its ledger entry (`heldFor` set)
 *   and the index entry below.
 * - digest release (claim): pk `held#<audienceId>`, sk `release#<releaseAt as ISO 8601>`;
 *   `audienceId`, `releaseAt`, `claimedAt`, `parts` (list of lists of article keys), `dropped`,
 *   `settingsChanged` (the keys released because the audience's settings changed; absent: none).
 *   TTL claimedAt + heldRetentionDays. Shares the held items' partition, so one Query reads both.
 *   A digest's ledger entry is an ordinary delivery-ledger item with article key
 *   `digest:<releaseAt ISO>[#part/parts]`.
 * - holding index: pk `holding`, sk `<audienceId>`; `audienceId`, `oldestHeldAt`, `reasons` (SS),
 *   `lastReleaseAt`. No TTL: one small item per audience that ever held something; the release
 *   step reads this partition instead of every audience's items.
 * - daily budget: pk `budget#<audienceId>`, sk `<local date YYYY-MM-DD>`; `audienceId`, `date`,
 *   `sent`. Conditional writes (optimistic lock on `sent`). TTL the date + budgetRetentionDays.
 * - story index (`story#…`, `story-band#…`, `story-filing#…`): written by DynamoStoryStore,
 *   laid out in functions/aws/dynamo-story-index.ts.
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
import { randomUUID } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import {
  type AttributeValue,
  type CancellationReason,
  ConditionalCheckFailedException,
  GetItemCommand,
  type Put,
  PutItemCommand,
  TransactionCanceledException,
} from '@aws-sdk/client-dynamodb';
import {
  BatchGetCommand,
  DeleteCommand,
  type DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
  TransactWriteCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { marshall, unmarshall } from '@aws-sdk/util-dynamodb';
import pLimit, { type LimitFunction } from 'p-limit';
import * as z from 'zod/mini';
import { isWorkableInstant, workableRange } from '#core/calendar';
import { LeaseHeldError, LeaseLostError, WatermarkConflictError } from '#core/errors';
import { storedStatus } from '#core/ledger-facts';
import {
  type DailyCountKey,
  type DeliveryKey,
  type DeliveryRecord,
  type DigestRelease,
  deliveryId,
  type HeldNotification,
  type HeldState,
  type HoldingAudience,
  type Lease,
  type LeaseAdmin,
  LeaseChangedError,
  type LeaseHolder,
  type LeaseRecord,
  type LedgerFactsUpdate,
  type Log,
  type ReadingState,
  type ReleasedNotification,
  type RunRecord,
  type StateStore,
  type UndeliverableRecord,
  type Watermark,
} from '#core/ports';
import { logger } from '#shared/powertools';
import {
  type BatchContext,
  backoff,
  batchGetLimit,
  chunk,
  deliveryItemKey,
  describeLostLease,
  drainBatch,
  isTransient,
  type Key,
  type KeyedWrite,
  keyPart,
  keyString,
  leaseKey,
  maxTransactionAttempts,
  oldItem,
  reasonCodes,
  StateStoreError,
  settleAll,
  ttlSeconds,
  writeAll,
} from './dynamo-batch.ts';
import {
  DynamoHolds,
  dailyCountItemKey,
  HoldReasonSchema,
  heldItemKey,
  holdingItemKey,
  releaseItemKey,
} from './dynamo-holds.ts';
import { allPartitionItems } from './dynamo-query.ts';
import { readReadingState, writeReadingState } from './dynamo-reading-state.ts';

/** Re-exported for the store's tests: the ledger keeps statuses as core decides. */
export { maxStoredStatusBytes, storedStatus } from '#core/ledger-facts';
export { dailyCountItemKey, deliveryItemKey, heldItemKey, holdingItemKey, keyPart, releaseItemKey, StateStoreError };

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
  /** How long a held notification waits (for an audience that stays disabled). Default 30. */
  readonly heldRetentionDays?: number;
  /** How long a daily budget count is kept after its date. Default 3. */
  readonly budgetRetentionDays?: number;
  /** Batch requests in flight at once, shared by all calls on this store. Default 4. */
  readonly concurrency?: number;
  /** Waits between retries of unprocessed batch items; tests pass a fast one. */
  readonly sleep?: (ms: number) => Promise<void>;
  /** The clock ledger expiry is extended by (see `findDelivered`); tests pass a fixed one. */
  readonly now?: () => number;
  readonly log?: Log;
}

const watermarkKey: Key = { pk: 'watermark', sk: 'current' };
const runPartition = 'run';
const _holdingPartition = 'holding';
/** DynamoDB's TransactWriteItems limit. */
const _transactionLimit = 100;

/** The object without its undefined fields (DynamoDB items and exactOptionalPropertyTypes want none). */
function withoutUndefined<T extends Record<string, unknown>>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, entry]) => entry !== undefined)) as Partial<T>;
}

/** The key of a parked undeliverable notification. */
export const undeliverableItemKey = (key: DeliveryKey): Key => ({
  pk: `undeliverable#${keyPart(key.audienceId)}`,
  sk: keyPart(key.articleKey),
});

// zod 4's number() already refuses Infinity and NaN (classic `.finite()` was a no-op).
const finite = z.number();
/** The watermark item holds what no watermark can be (edited by hand): `watermark set` replaces it. */
export class MalformedWatermarkError extends StateStoreError {}

const WatermarkItem = z.object({
  // A watermark no provider date can be written for would fail every run (a hand edit, an old CLI).
  at: z.number().check(z.refine(isWorkableInstant, { error: `must be epoch milliseconds from ${workableRange}` })),
  version: z.number().check(z.int()),
  updatedAt: finite,
  runId: z.string(),
});

/** Whether a raw item reads as a watermark (a number no JavaScript number holds does not). */
function isWatermarkItem(raw: Record<string, AttributeValue>): boolean {
  try {
    return WatermarkItem.safeParse(unmarshall(raw)).success;
  } catch {
    return false;
  }
}

const LeaseItem = z.object({ owner: z.string(), leaseExpiresAt: finite });
const LeaseRecordItem = z.extend(LeaseItem, {
  acquiredAt: z.optional(finite),
  renewedAt: z.optional(finite),
  holderHost: z.optional(z.string()),
  holderPid: z.optional(z.number().check(z.int())),
  renewEveryMs: z.optional(finite),
});

function checkLeaseDuration(durationMs: number): void {
  if (!(durationMs > 0) || !Number.isFinite(durationMs)) {
    throw new RangeError(`lease duration must be a positive number of milliseconds, got ${durationMs}`);
  }
}
const RunItem = z.object({
  runId: z.string(),
  status: z.enum(['completed', 'checkpointed', 'skipped', 'incomplete', 'failed']),
  startedAt: finite,
  finishedAt: finite,
  summary: z.record(z.string(), z.unknown()),
});
const ReleaseOutcomeSchema = z.enum(['sent', 'parked', 'dropped']);
const ReleaseCauseSchema = z.enum(['due', 'settings-changed']);
/** What a ledger entry recorded besides its key (every field optional: hand-written items). */
const ledgerEntryFields = {
  deliveredAt: z._default(finite, 0),
  messageId: z.optional(z.string()),
  // A list, or a string set as the DynamoDB console writes one.
  ruleIds: z._default(
    z.pipe(
      z.union([z.array(z.string()), z.set(z.string())]),
      z.transform((ids) => [...ids]),
    ),
    [],
  ),
  heldFor: z.optional(HoldReasonSchema),
  storyId: z.optional(z.string()),
  collapsedInto: z.optional(z.string()),
  // An empty article key names no article: a copy would be judged by a lead that cannot exist.
  collapsedLead: z.optional(z.string().check(z.minLength(1))),
  status: z.optional(z.string()),
  titleHash: z.optional(z.string()),
  leadArticleKey: z.optional(z.string().check(z.minLength(1))),
  releasedAt: z.optional(finite),
  releasedIn: z.optional(z.string()),
  releaseOutcome: z.optional(ReleaseOutcomeSchema),
  releaseCause: z.optional(ReleaseCauseSchema),
};
const LedgerEntryItem = z.object(ledgerEntryFields);
/**
 * The same fields, each dropped on its own when damaged: one bad field (a hand edit) loses only
 * what it said, not the story or lead the rest of the entry records.
 */
const LedgerEntryFieldByField = z.object({
  deliveredAt: z.catch(ledgerEntryFields.deliveredAt, 0),
  messageId: z.catch(ledgerEntryFields.messageId, undefined),
  ruleIds: z.catch(ledgerEntryFields.ruleIds, []),
  heldFor: z.catch(ledgerEntryFields.heldFor, undefined),
  storyId: z.catch(ledgerEntryFields.storyId, undefined),
  collapsedInto: z.catch(ledgerEntryFields.collapsedInto, undefined),
  collapsedLead: z.catch(ledgerEntryFields.collapsedLead, undefined),
  status: z.catch(ledgerEntryFields.status, undefined),
  titleHash: z.catch(ledgerEntryFields.titleHash, undefined),
  leadArticleKey: z.catch(ledgerEntryFields.leadArticleKey, undefined),
  releasedAt: z.catch(ledgerEntryFields.releasedAt, undefined),
  releasedIn: z.catch(ledgerEntryFields.releasedIn, undefined),
  releaseOutcome: z.catch(ledgerEntryFields.releaseOutcome, undefined),
  releaseCause: z.catch(ledgerEntryFields.releaseCause, undefined),
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

/** DynamoDB implementation of the run's state: see the module comment for the item layout. */
export class DynamoStateStore implements StateStore, LeaseAdmin {
  readonly #documents: DynamoDBDocumentClient;
  readonly #table: string;
  readonly #ledgerRetentionDays: number;
  readonly #runRetentionDays: number;
  readonly #undeliverableRetentionDays: number;
  readonly #limit: LimitFunction;
  readonly #sleep: (ms: number) => Promise<void>;
  readonly #now: () => number;
  readonly #log: Log;
  /** Held notifications, digest releases, the holding index and daily budgets (dynamo-holds.ts). */
  readonly #holds: DynamoHolds;

  constructor(options: DynamoStateStoreOptions) {
    this.#documents = options.documents;
    this.#table = options.tableName;
    this.#ledgerRetentionDays = options.ledgerRetentionDays ?? 14;
    this.#runRetentionDays = options.runRetentionDays ?? 30;
    this.#undeliverableRetentionDays = options.undeliverableRetentionDays ?? 30;
    // One limiter per store: concurrent findDelivered/recordDelivered calls share the bound.
    this.#limit = pLimit(options.concurrency ?? 4);
    this.#sleep = options.sleep ?? ((ms) => delay(ms));
    this.#now = options.now ?? Date.now;
    this.#log = options.log ?? logger;
    this.#holds = new DynamoHolds({
      ...this.#batch(),
      heldRetentionDays: options.heldRetentionDays ?? 30,
      budgetRetentionDays: options.budgetRetentionDays ?? 3,
      ledgerItem: (record) => this.#ledgerItem(record),
    });
  }

  // --- Run lease ------------------------------------------------------------------------------

  async acquireLease(owner: string, durationMs: number, now: number, holder?: LeaseHolder): Promise<Lease> {
    checkLeaseDuration(durationMs);
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
            ...(holder?.host === undefined ? {} : { holderHost: holder.host }),
            ...(holder?.pid === undefined ? {} : { holderPid: holder.pid }),
            ...(holder?.renewEveryMs === undefined ? {} : { renewEveryMs: holder.renewEveryMs }),
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

  async readLease(): Promise<LeaseRecord | undefined> {
    const { Item } = await this.#documents.send(
      new GetCommand({ TableName: this.#table, Key: leaseKey, ConsistentRead: true }),
    );
    if (Item === undefined) return undefined;
    const parsed = LeaseRecordItem.safeParse(Item);
    if (!parsed.success) {
      // Still reported: a lease nobody can read must not look like no lease at all.
      this.#log.warn('the run lease item is malformed', { error: parsed.error.message });
      return { owner: typeof Item.owner === 'string' ? Item.owner : '<unknown>', expiresAt: Number.NaN };
    }
    const item = parsed.data;
    return {
      owner: item.owner,
      expiresAt: item.leaseExpiresAt,
      acquiredAt: item.acquiredAt,
      renewedAt: item.renewedAt,
      host: item.holderHost,
      pid: item.holderPid,
      renewEveryMs: item.renewEveryMs,
    };
  }

  async renewLease(lease: Lease, durationMs: number, now: number): Promise<Lease> {
    checkLeaseDuration(durationMs);
    const renewed: Lease = { owner: lease.owner, expiresAt: now + durationMs };
    try {
      await this.#documents.send(
        new UpdateCommand({
          TableName: this.#table,
          Key: leaseKey,
          UpdateExpression: 'SET #leaseExpiresAt = :leaseExpiresAt, #renewedAt = :now, #expiresAt = :ttl',
          // Only the owner's own lease: one cleared by ops or taken over after expiry stays lost.
          ConditionExpression: '#owner = :owner',
          ExpressionAttributeNames: {
            '#owner': 'owner',
            '#leaseExpiresAt': 'leaseExpiresAt',
            '#renewedAt': 'renewedAt',
            '#expiresAt': 'expiresAt',
          },
          ExpressionAttributeValues: {
            ':owner': lease.owner,
            ':leaseExpiresAt': renewed.expiresAt,
            ':now': now,
            ':ttl': ttlSeconds(renewed.expiresAt, 1),
          },
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) {
        const holder = oldItem(LeaseItem, error.Item);
        throw new LeaseLostError(
          holder === undefined
            ? `the run lease of ${lease.owner} is gone (released, or expired and cleared); it could not be renewed`
            : `the run lease was taken over by ${holder.owner}; it could not be renewed`,
          { cause: error },
        );
      }
      throw error;
    }
    return renewed;
  }

  async clearLease(expected: Pick<Lease, 'owner' | 'expiresAt'>): Promise<void> {
    try {
      await this.#documents.send(
        new DeleteCommand({
          TableName: this.#table,
          Key: leaseKey,
          // The owner token and the expiry: a lease renewed since it was read has a live holder.
          ConditionExpression: '#owner = :owner AND #leaseExpiresAt = :leaseExpiresAt',
          ExpressionAttributeNames: { '#owner': 'owner', '#leaseExpiresAt': 'leaseExpiresAt' },
          ExpressionAttributeValues: { ':owner': expected.owner, ':leaseExpiresAt': expected.expiresAt },
        }),
      );
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) throw new LeaseChangedError(expected, { cause: error });
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
      throw new MalformedWatermarkError(
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
    // A token per attempt: if the SDK retries a commit whose answer was lost, DynamoDB treats
    // the retry as the same transaction instead of failing its conditions against its own write.
    const command = () =>
      new TransactWriteCommand({
        ClientRequestToken: randomUUID(),
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
          throw new LeaseLostError(describeLostLease(lease, leaseReason, now, 'the watermark was not moved'), {
            cause: error,
          });
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

  /**
   * Replaces a watermark item that {@link readWatermark} refused as malformed (edited by hand) with
   * a whole new one: `setWatermark` updates attributes and adds to `version`, which fails, or stays
   * malformed, when the broken attribute is the version itself.
   * - Only the item as read now, still malformed: the Put is conditional on its raw `at` and
   *   `version`, so a watermark mended (and advanced) meanwhile is never overwritten.
   * - The version only goes up: one above a stored version that is still a count; above any count
   *   a run can hold (the clock, in ms) when the count itself is lost, so a run that read the item
   *   before it was damaged gets a conflict, not a match.
   * @throws WatermarkConflictError when the item is no longer the malformed one
   */
  async replaceMalformedWatermark(at: number, runId: string, now: number): Promise<Watermark> {
    const key = { pk: { S: watermarkKey.pk }, sk: { S: watermarkKey.sk } };
    const { Item: raw } = await this.#documents.send(
      new GetItemCommand({ TableName: this.#table, Key: key, ConsistentRead: true }),
    );
    const changed = (cause?: unknown) =>
      new WatermarkConflictError('the watermark item changed while it was being replaced; read it again', { cause });
    if (raw === undefined || isWatermarkItem(raw)) throw changed();
    const count = Number(raw.version?.N);
    const version =
      raw.version?.N !== undefined && Number.isSafeInteger(count) && count >= 0 ? count + 1 : Math.max(now, 1);
    const next: Watermark = { at, version, updatedAt: now, runId };
    const names: Record<string, string> = { '#at': 'at', '#version': 'version' };
    const values: Record<string, AttributeValue> = {};
    const same = (name: '#at' | '#version', value: AttributeValue | undefined) => {
      if (value === undefined) return `attribute_not_exists(${name})`;
      values[`:${name.slice(1)}`] = value;
      return `${name} = :${name.slice(1)}`;
    };
    try {
      await this.#documents.send(
        new PutItemCommand({
          TableName: this.#table,
          Item: marshall({ ...watermarkKey, ...next }),
          ConditionExpression: `attribute_exists(pk) AND ${same('#at', raw.at)} AND ${same('#version', raw.version)}`,
          ExpressionAttributeNames: names,
          ...(Object.keys(values).length === 0 ? {} : { ExpressionAttributeValues: values }),
        }),
      );
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) throw changed(error);
      throw error;
    }
    return next;
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

  /**
   * Also keeps the ledger longer than any re-read: an entry found with less than half its retention
   * left gets a full retention again (one conditional UpdateItem each). Normal runs re-read a day
   * or two, so this never fires; it matters when the watermark is stuck (an audience's topic
   * failing for a week, an outage) and every run re-reads the same old window, whose entries would
   * otherwise expire under it and send those alerts again.
   */
  async findDelivered(keys: readonly DeliveryKey[]): Promise<Set<string>> {
    return new Set((await this.#readLedger(keys, false)).keys());
  }

  async readDeliveries(keys: readonly DeliveryKey[]): Promise<Map<string, DeliveryRecord>> {
    const entries = new Map<string, DeliveryRecord>();
    for (const [id, { key, item }] of await this.#readLedger(keys, true)) {
      const parsed = LedgerEntryItem.safeParse(item);
      // An entry damaged by hand still says "handled" (findDelivered counts it too): only the
      // damaged fields are lost, so it can never be sent twice, and without status or title hash
      // it never counts as changed.
      let malformed: string[] | undefined;
      if (!parsed.success) {
        this.#log.warn('a delivery-ledger entry is malformed; its damaged fields are ignored', {
          pk: item.pk,
          reason: z.prettifyError(parsed.error),
        });
        malformed = [...new Set(parsed.error.issues.map((issue) => String(issue.path[0] ?? '(item)')))];
      }
      const facts = parsed.success ? parsed.data : LedgerEntryFieldByField.parse(item);
      entries.set(id, {
        ...withoutUndefined(facts),
        ...key,
        deliveredAt: facts.deliveredAt,
        ruleIds: facts.ruleIds,
        ...(malformed === undefined ? {} : { malformed }),
      });
    }
    return entries;
  }

  /**
   * The ledger items of `keys` that exist, by delivery id: keys only (`full` false, the cheap
   * "was it handled" read) or every attribute.
   */
  async #readLedger(
    keys: readonly DeliveryKey[],
    full: boolean,
  ): Promise<Map<string, { key: DeliveryKey; item: Record<string, unknown> }>> {
    const wanted = new Map<string, { key: Key; deliveries: Map<string, DeliveryKey> }>();
    for (const key of keys) {
      const itemKey = deliveryItemKey(key);
      const entry = wanted.get(keyString(itemKey)) ?? { key: itemKey, deliveries: new Map<string, DeliveryKey>() };
      entry.deliveries.set(deliveryId(key), key);
      wanted.set(keyString(itemKey), entry);
    }
    const found = new Map<string, { key: DeliveryKey; item: Record<string, unknown> }>();
    const now = this.#now();
    const expiring: Key[] = [];
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
                    ...(full
                      ? {}
                      : {
                          ProjectionExpression: '#pk, #sk, #expiresAt',
                          ExpressionAttributeNames: { '#pk': 'pk', '#sk': 'sk', '#expiresAt': 'expiresAt' },
                        }),
                  },
                },
              }),
            );
            // Items past their TTL that DynamoDB has not deleted yet still count as delivered.
            for (const item of output.Responses?.[this.#table] ?? []) {
              const entry = wanted.get(keyString({ pk: String(item.pk), sk: String(item.sk) }));
              for (const [id, key] of entry?.deliveries ?? []) found.set(id, { key, item });
              if (entry && this.#ledgerExpiresSoon(item.expiresAt, now)) expiring.push(entry.key);
            }
            return (output.UnprocessedKeys?.[this.#table]?.Keys ?? []) as Key[];
          }),
        ),
      ),
    );
    await this.#extendLedger(expiring, now);
    return found;
  }

  /** Whether a ledger entry's TTL (epoch seconds) is less than half the retention away. */
  #ledgerExpiresSoon(expiresAt: unknown, now: number): boolean {
    return typeof expiresAt === 'number' && expiresAt < ttlSeconds(now, this.#ledgerRetentionDays / 2);
  }

  /**
   * Gives ledger entries a full retention from `now`. An entry already gone is not recreated, and
   * a failure is logged, not thrown: the delivery answer stands, and the next read tries again.
   */
  async #extendLedger(keys: readonly Key[], now: number): Promise<void> {
    if (keys.length === 0) return;
    const expiresAt = ttlSeconds(now, this.#ledgerRetentionDays);
    const results = await Promise.allSettled(
      keys.map((key) =>
        this.#limit(() =>
          this.#documents.send(
            new UpdateCommand({
              TableName: this.#table,
              Key: key,
              UpdateExpression: 'SET #expiresAt = :expiresAt',
              ConditionExpression: 'attribute_exists(#pk) AND #expiresAt < :expiresAt',
              ExpressionAttributeNames: { '#pk': 'pk', '#expiresAt': 'expiresAt' },
              ExpressionAttributeValues: { ':expiresAt': expiresAt },
            }),
          ),
        ),
      ),
    );
    const failures = results.flatMap((result) =>
      result.status === 'rejected' && !(result.reason instanceof ConditionalCheckFailedException)
        ? [result.reason]
        : [],
    );
    this.#log.info('extended the retention of old delivery-ledger entries that were read again', {
      entries: keys.length,
      failed: failures.length,
      expiresAt,
    });
    if (failures.length > 0) {
      this.#log.warn('could not extend some delivery-ledger entries; the next read tries again', {
        failed: failures.length,
        error: failures[0] instanceof Error ? failures[0].message : String(failures[0]),
      });
    }
  }

  async recordDelivered(records: readonly DeliveryRecord[]): Promise<void> {
    await this.#writeAll(
      'writing the delivery ledger',
      records.map((record) => {
        const key = deliveryItemKey(record);
        return { key, request: { PutRequest: { Item: this.#ledgerItem(record) } } };
      }),
    );
  }

  async forgetCollapsed(keys: readonly DeliveryKey[]): Promise<void> {
    // Not a collapsed copy (any more): what it records now stands.
    await this.#eachUnlessConditionFails(keys, (key) =>
      this.#documents.send(
        new DeleteCommand({
          TableName: this.#table,
          Key: deliveryItemKey(key),
          ConditionExpression: 'attribute_exists(#collapsedInto)',
          ExpressionAttributeNames: { '#collapsedInto': 'collapsedInto' },
        }),
      ),
    );
  }

  /**
   * One conditional write per item, at most the store's concurrency at a time; an item whose
   * condition fails is skipped, any other failure is thrown once all have settled.
   */
  async #eachUnlessConditionFails<T>(items: readonly T[], write: (item: T) => Promise<unknown>): Promise<void> {
    await settleAll(
      items.map((item) =>
        this.#limit(async () => {
          try {
            await write(item);
          } catch (error) {
            if (!(error instanceof ConditionalCheckFailedException)) throw error;
          }
        }),
      ),
    );
  }

  async refreshLedgerFacts(entries: readonly LedgerFactsUpdate[]): Promise<void> {
    // One conditional UpdateItem each: changed articles are few, and a put would reset the
    // entry's retention (possibly extended by findDelivered) to deliveredAt + retention. An entry
    // that is gone is not made again.
    await this.#eachUnlessConditionFails(entries, (entry) =>
      this.#documents.send(
        new UpdateCommand({
          TableName: this.#table,
          Key: deliveryItemKey(entry),
          UpdateExpression: 'SET #status = :status, #titleHash = :titleHash',
          ConditionExpression: 'attribute_exists(#pk)',
          ExpressionAttributeNames: { '#pk': 'pk', '#status': 'status', '#titleHash': 'titleHash' },
          ExpressionAttributeValues: { ':status': storedStatus(entry.status), ':titleHash': entry.titleHash },
        }),
      ),
    );
  }

  #ledgerItem(record: DeliveryRecord): Record<string, unknown> {
    return {
      ...deliveryItemKey(record),
      audienceId: record.audienceId,
      articleKey: record.articleKey,
      deliveredAt: record.deliveredAt,
      ...(record.messageId === undefined ? {} : { messageId: record.messageId }),
      ...(record.heldFor === undefined ? {} : { heldFor: record.heldFor }),
      ...withoutUndefined({
        storyId: record.storyId,
        collapsedInto: record.collapsedInto,
        collapsedLead: record.collapsedLead,
        status: record.status === undefined ? undefined : storedStatus(record.status),
        titleHash: record.titleHash,
        leadArticleKey: record.leadArticleKey,
      }),
      ruleIds: [...record.ruleIds],
      expiresAt: ttlSeconds(record.deliveredAt, this.#ledgerRetentionDays),
    };
  }

  // --- Held notifications, digest releases, daily budgets (dynamo-holds.ts) ------------------

  holdNotifications(records: readonly HeldNotification[]): Promise<void> {
    return this.#holds.holdNotifications(records);
  }

  listHoldingAudiences(): Promise<HoldingAudience[]> {
    return this.#holds.listHoldingAudiences();
  }

  readHeld(audienceId: string): Promise<HeldState> {
    return this.#holds.readHeld(audienceId);
  }

  claimRelease(release: DigestRelease): Promise<void> {
    return this.#holds.claimRelease(release);
  }

  finishRelease(release: DigestRelease, released: readonly ReleasedNotification[]): Promise<void> {
    return this.#holds.finishRelease(release, released);
  }

  /** See DynamoHolds.markDigestReplayed: `replay --parked` published a parked digest. */
  markDigestReplayed(
    audienceId: string,
    digestArticleKey: string,
    articleKeys: readonly string[],
    at: number,
  ): Promise<void> {
    return this.#holds.markDigestReplayed(audienceId, digestArticleKey, articleKeys, at);
  }

  setHoldingAudience(
    audienceId: string,
    holding: Pick<HoldingAudience, 'oldestHeldAt' | 'reasons'> | undefined,
  ): Promise<void> {
    return this.#holds.setHoldingAudience(audienceId, holding);
  }

  readDailyCounts(keys: readonly DailyCountKey[]): Promise<Map<string, number>> {
    return this.#holds.readDailyCounts(keys);
  }

  updateDailyCount(key: DailyCountKey, expected: number, next: number): Promise<void> {
    return this.#holds.updateDailyCount(key, expected, next);
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

  readReadingState(): Promise<ReadingState | undefined> {
    return readReadingState(this.#documents, this.#table, this.#log);
  }

  writeReadingState(lease: Lease, state: ReadingState, now: number): Promise<void> {
    return writeReadingState(this.#documents, this.#table, leaseKey, lease, state, now);
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

  #batch(): BatchContext {
    return { documents: this.#documents, table: this.#table, limit: this.#limit, sleep: this.#sleep, log: this.#log };
  }

  /** BatchWriteItem in requests of 25, one request per item key (DynamoDB rejects duplicates in a batch). */
  #writeAll(what: string, requests: readonly KeyedWrite[]): Promise<void> {
    return writeAll(this.#batch(), what, requests);
  }

  /** Sends `batch`, re-sending what DynamoDB hands back unprocessed (see drainBatch). */
  #drain<T>(what: string, batch: readonly T[], send: (pending: readonly T[]) => Promise<readonly T[]>) {
    return drainBatch(this.#batch(), what, batch, send);
  }

  #queryAll(pk: string): Promise<Record<string, unknown>[]> {
    return allPartitionItems(this.#documents, this.#table, pk);
  }
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
