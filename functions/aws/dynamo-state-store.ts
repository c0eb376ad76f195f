/**
 * The DynamoDB adapter of {@link StateStore}: run lease, watermark, delivery ledger, parked
 * undeliverable notifications and run history, all in the one state table.
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
  type CancellationReason,
  ConditionalCheckFailedException,
  type Put,
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
  type TransactWriteCommandInput,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import pLimit, { type LimitFunction } from 'p-limit';
import * as z from 'zod/mini';
import { LeaseHeldError, LeaseLostError, WatermarkConflictError } from '#core/errors';
import { ledgerFacts, storedStatus } from '#core/ledger-facts';
import {
  DailyCountConflictError,
  type DailyCountKey,
  type DeliveryKey,
  type DeliveryRecord,
  type DigestRelease,
  dailyCountId,
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
  ReleaseClaimConflictError,
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
  describeLostLease,
  drainBatch,
  isTransient,
  type Key,
  type KeyedWrite,
  keyPart,
  keyString,
  leaseKey,
  oldItem,
  reasonCodes,
  StateStoreError,
  settleAll,
  ttlSeconds,
  writeAll,
} from './dynamo-batch.ts';
import { partitionItems } from './dynamo-query.ts';
import { readReadingState, writeReadingState } from './dynamo-reading-state.ts';

/** Re-exported for the store's tests: the ledger keeps statuses as core decides. */
export { maxStoredStatusBytes, storedStatus } from '#core/ledger-facts';

export { keyPart, StateStoreError };

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
const holdingPartition = 'holding';
/** DynamoDB's TransactWriteItems limit. */
const transactionLimit = 100;
/** Attempts for a transaction cancelled by conflicts or throttling. */
const maxTransactionAttempts = 4;

/** The object without its undefined fields (DynamoDB items and exactOptionalPropertyTypes want none). */
function withoutUndefined<T extends Record<string, unknown>>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, entry]) => entry !== undefined)) as Partial<T>;
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

/** The partition of one audience's held notifications and digest releases. */
const heldPartition = (audienceId: string): string => `held#${keyPart(audienceId)}`;

/** The key of a held notification. */
export const heldItemKey = (key: DeliveryKey): Key => ({
  pk: heldPartition(key.audienceId),
  sk: `item#${keyPart(key.articleKey)}`,
});

/** The key of a digest release claim. */
export const releaseItemKey = (release: Pick<DigestRelease, 'audienceId' | 'releaseAt'>): Key => ({
  pk: heldPartition(release.audienceId),
  sk: `release#${new Date(release.releaseAt).toISOString()}`,
});

/** The key of an audience's entry in the holding index. */
export const holdingItemKey = (audienceId: string): Key => ({ pk: holdingPartition, sk: keyPart(audienceId) });

/** The key of an audience's daily budget count. */
export const dailyCountItemKey = (key: DailyCountKey): Key => ({
  pk: `budget#${keyPart(key.audienceId)}`,
  sk: key.date,
});

// zod 4's number() already refuses Infinity and NaN (classic `.finite()` was a no-op).
const finite = z.number();
const WatermarkItem = z.object({
  at: finite,
  version: z.number().check(z.int()),
  updatedAt: finite,
  runId: z.string(),
});
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
const HoldReasonSchema = z.enum(['digest', 'quiet-hours', 'budget']);
const ReleaseOutcomeSchema = z.enum(['sent', 'parked', 'dropped']);
const ReleaseCauseSchema = z.enum(['due', 'settings-changed']);
const optionalText = z.pipe(
  z.nullish(z.string()),
  z.transform((value) => value ?? undefined),
);
/** What a ledger entry recorded besides its key (every field optional: hand-written items). */
const ledgerEntryFields = {
  deliveredAt: z._default(finite, 0),
  messageId: z.optional(z.string()),
  ruleIds: z._default(z.array(z.string()), []),
  heldFor: z.optional(HoldReasonSchema),
  storyId: z.optional(z.string()),
  collapsedInto: z.optional(z.string()),
  status: z.optional(z.string()),
  titleHash: z.optional(z.string()),
  leadArticleKey: z.optional(z.string()),
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
  status: z.catch(ledgerEntryFields.status, undefined),
  titleHash: z.catch(ledgerEntryFields.titleHash, undefined),
  leadArticleKey: z.catch(ledgerEntryFields.leadArticleKey, undefined),
  releasedAt: z.catch(ledgerEntryFields.releasedAt, undefined),
  releasedIn: z.catch(ledgerEntryFields.releasedIn, undefined),
  releaseOutcome: z.catch(ledgerEntryFields.releaseOutcome, undefined),
  releaseCause: z.catch(ledgerEntryFields.releaseCause, undefined),
});

const HeldItem = z.object({
  audienceId: z.string(),
  articleKey: z.string(),
  heldAt: finite,
  reason: HoldReasonSchema,
  ruleIds: z.array(z.string()),
  storyId: z.optional(z.string()),
  article: z.object({
    key: z.string(),
    id: optionalText,
    title: z.string(),
    summary: z.string(),
    url: z.string(),
    publishedAt: finite,
    categories: z.array(z.string()),
    categoryNames: z.array(z.string()),
    media: optionalText,
    mediaName: optionalText,
    status: optionalText,
  }),
  rules: z.array(
    z.object({
      ruleId: z.string(),
      description: optionalText,
      urgent: z.boolean(),
      reasons: z.array(z.object({ kind: z.enum(['category', 'keyword', 'media', 'status', 'all']), term: z.string() })),
    }),
  ),
});
const ReleaseItem = z.object({
  audienceId: z.string(),
  releaseAt: finite,
  claimedAt: finite,
  parts: z.array(z.array(z.string())),
  dropped: z._default(z.array(z.string()), []),
  settingsChanged: z.optional(z.array(z.string())),
});
const stringSet = z.pipe(
  z.transform((value: unknown) => (value instanceof Set ? [...value] : value)),
  z.array(HoldReasonSchema),
);
const HoldingItem = z.object({
  audienceId: z.string(),
  oldestHeldAt: z.optional(finite),
  reasons: z.optional(stringSet),
  lastReleaseAt: z.optional(finite),
});
const DailyCountItem = z.object({ sent: z.number().check(z.int(), z.nonnegative()) });
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
  readonly #heldRetentionDays: number;
  readonly #budgetRetentionDays: number;
  readonly #limit: LimitFunction;
  readonly #sleep: (ms: number) => Promise<void>;
  readonly #now: () => number;
  readonly #log: Log;

  constructor(options: DynamoStateStoreOptions) {
    this.#documents = options.documents;
    this.#table = options.tableName;
    this.#ledgerRetentionDays = options.ledgerRetentionDays ?? 14;
    this.#runRetentionDays = options.runRetentionDays ?? 30;
    this.#undeliverableRetentionDays = options.undeliverableRetentionDays ?? 30;
    this.#heldRetentionDays = options.heldRetentionDays ?? 30;
    this.#budgetRetentionDays = options.budgetRetentionDays ?? 3;
    // One limiter per store: concurrent findDelivered/recordDelivered calls share the bound.
    this.#limit = pLimit(options.concurrency ?? 4);
    this.#sleep = options.sleep ?? ((ms) => delay(ms));
    this.#now = options.now ?? Date.now;
    this.#log = options.log ?? logger;
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
      if (!parsed.success) {
        this.#log.warn('a delivery-ledger entry is malformed; its damaged fields are ignored', {
          pk: item.pk,
          reason: z.prettifyError(parsed.error),
        });
      }
      const facts = parsed.success ? parsed.data : LedgerEntryFieldByField.parse(item);
      entries.set(id, { ...withoutUndefined(facts), ...key, deliveredAt: facts.deliveredAt, ruleIds: facts.ruleIds });
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

  async refreshLedgerFacts(entries: readonly LedgerFactsUpdate[]): Promise<void> {
    // One conditional UpdateItem each: changed articles are few, and a put would reset the
    // entry's retention (possibly extended by findDelivered) to deliveredAt + retention.
    await settleAll(
      entries.map((entry) =>
        this.#limit(async () => {
          try {
            await this.#documents.send(
              new UpdateCommand({
                TableName: this.#table,
                Key: deliveryItemKey(entry),
                UpdateExpression: 'SET #status = :status, #titleHash = :titleHash',
                ConditionExpression: 'attribute_exists(#pk)',
                ExpressionAttributeNames: { '#pk': 'pk', '#status': 'status', '#titleHash': 'titleHash' },
                ExpressionAttributeValues: { ':status': storedStatus(entry.status), ':titleHash': entry.titleHash },
              }),
            );
          } catch (error) {
            if (!(error instanceof ConditionalCheckFailedException)) throw error;
          }
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
        status: record.status === undefined ? undefined : storedStatus(record.status),
        titleHash: record.titleHash,
        leadArticleKey: record.leadArticleKey,
      }),
      ruleIds: [...record.ruleIds],
      expiresAt: ttlSeconds(record.deliveredAt, this.#ledgerRetentionDays),
    };
  }

  // --- Held notifications and digest releases -------------------------------------------------

  async holdNotifications(records: readonly HeldNotification[]): Promise<void> {
    // One write per key: a transaction must not touch an item twice.
    const unique = new Map<string, HeldNotification>();
    for (const record of records) unique.set(deliveryId(record.key), record);
    // Each held notification costs two writes (item + ledger), each audience in a transaction one
    // more (its index entry); pack transactions up to DynamoDB's 100 writes.
    const transactions: HeldNotification[][] = [];
    let current: HeldNotification[] = [];
    let writes = 0;
    let audiences = new Set<string>();
    for (const record of unique.values()) {
      if (writes + 3 > transactionLimit) {
        transactions.push(current);
        current = [];
        writes = 0;
        audiences = new Set();
      }
      current.push(record);
      writes += audiences.has(record.key.audienceId) ? 2 : 3;
      audiences.add(record.key.audienceId);
    }
    if (current.length > 0) transactions.push(current);
    // Every transaction sets the index to the oldest instant of the whole call, so whichever
    // commits first already writes a lower bound.
    const oldest = new Map<string, number>();
    for (const record of unique.values()) {
      oldest.set(record.key.audienceId, Math.min(oldest.get(record.key.audienceId) ?? record.heldAt, record.heldAt));
    }
    // One after another: transactions of one audience all update its index item, and DynamoDB
    // cancels concurrent transactions on the same item (TransactionConflict). Every transaction
    // is attempted; the first error is rethrown after the others.
    let failure: { error: unknown } | undefined;
    for (const batch of transactions) {
      try {
        await this.#transact('holding notifications', this.#holdWrites(batch, oldest));
      } catch (error) {
        failure ??= { error };
      }
    }
    if (failure !== undefined) throw failure.error;
  }

  #holdWrites(
    batch: readonly HeldNotification[],
    oldest: ReadonlyMap<string, number>,
  ): NonNullable<TransactWriteCommandInput['TransactItems']> {
    const writes: NonNullable<TransactWriteCommandInput['TransactItems']> = [];
    const byAudience = new Map<string, HeldNotification[]>();
    for (const record of batch) {
      const list = byAudience.get(record.key.audienceId) ?? [];
      list.push(record);
      byAudience.set(record.key.audienceId, list);
      writes.push(
        {
          Put: {
            TableName: this.#table,
            Item: {
              ...heldItemKey(record.key),
              audienceId: record.key.audienceId,
              articleKey: record.key.articleKey,
              heldAt: record.heldAt,
              reason: record.reason,
              ruleIds: [...record.ruleIds],
              ...(record.match.storyId === undefined ? {} : { storyId: record.match.storyId }),
              // A JSON round trip drops undefined optional fields the document client would refuse.
              article: JSON.parse(JSON.stringify(record.match.article)) as Record<string, unknown>,
              rules: JSON.parse(JSON.stringify(record.match.rules)) as unknown[],
              expiresAt: ttlSeconds(record.heldAt, this.#heldRetentionDays),
            },
          },
        },
        {
          Put: {
            TableName: this.#table,
            Item: this.#ledgerItem({
              ...record.key,
              deliveredAt: record.heldAt,
              ruleIds: record.ruleIds,
              heldFor: record.reason,
              // Status and title hash, so a re-read of a held article can tell it came back changed.
              ...(record.facts ?? ledgerFacts(record.match.article, record.match.storyId)),
            }),
          },
        },
      );
    }
    for (const [audienceId, list] of byAudience) {
      writes.push({
        Update: {
          TableName: this.#table,
          Key: holdingItemKey(audienceId),
          // if_not_exists keeps an older oldestHeldAt: the index is a lower bound of what is due.
          UpdateExpression:
            'SET #audienceId = :audienceId, #oldest = if_not_exists(#oldest, :heldAt) ADD #reasons :reasons',
          ExpressionAttributeNames: { '#audienceId': 'audienceId', '#oldest': 'oldestHeldAt', '#reasons': 'reasons' },
          ExpressionAttributeValues: {
            ':audienceId': audienceId,
            ':heldAt': oldest.get(audienceId) ?? Math.min(...list.map((record) => record.heldAt)),
            ':reasons': new Set(list.map((record) => record.reason)),
          },
        },
      });
    }
    return writes;
  }

  async listHoldingAudiences(): Promise<HoldingAudience[]> {
    const entries: HoldingAudience[] = [];
    for (const item of await this.#queryAll(holdingPartition)) {
      const parsed = HoldingItem.safeParse(item);
      if (!parsed.success) {
        this.#log.warn('skipped a malformed holding index item', { sk: item.sk });
        continue;
      }
      const { audienceId, oldestHeldAt, reasons = [], lastReleaseAt } = parsed.data;
      entries.push({
        audienceId,
        oldestHeldAt: oldestHeldAt ?? 0,
        reasons: oldestHeldAt === undefined ? [] : reasons,
        lastReleaseAt,
      });
    }
    return entries;
  }

  async readHeld(audienceId: string): Promise<HeldState> {
    const items: HeldNotification[] = [];
    const releases: DigestRelease[] = [];
    for (const item of await this.#queryAll(heldPartition(audienceId))) {
      const sk = String(item.sk);
      if (sk.startsWith('item#')) {
        const parsed = HeldItem.safeParse(item);
        if (!parsed.success) {
          this.#log.warn('skipped a malformed held notification', { pk: item.pk, sk, reason: parsed.error.message });
          continue;
        }
        const { article, rules, ruleIds, heldAt, reason, storyId } = parsed.data;
        items.push({
          key: { audienceId: parsed.data.audienceId, articleKey: parsed.data.articleKey },
          heldAt,
          reason,
          ruleIds,
          match: { audienceId: parsed.data.audienceId, article, rules, ...(storyId === undefined ? {} : { storyId }) },
        });
      } else if (sk.startsWith('release#')) {
        const parsed = ReleaseItem.safeParse(item);
        if (parsed.success) releases.push(parsed.data);
        else this.#log.warn('skipped a malformed digest release', { pk: item.pk, sk });
      }
    }
    return { items, releases };
  }

  async claimRelease(release: DigestRelease): Promise<void> {
    try {
      await this.#transact('claiming a digest release', [
        {
          Put: {
            TableName: this.#table,
            Item: {
              ...releaseItemKey(release),
              audienceId: release.audienceId,
              releaseAt: release.releaseAt,
              claimedAt: release.claimedAt,
              parts: release.parts.map((part) => [...part]),
              dropped: [...release.dropped],
              ...(release.settingsChanged === undefined || release.settingsChanged.length === 0
                ? {}
                : { settingsChanged: [...release.settingsChanged] }),
              expiresAt: ttlSeconds(release.claimedAt, this.#heldRetentionDays),
            },
            ConditionExpression: 'attribute_not_exists(#pk)',
            ExpressionAttributeNames: { '#pk': 'pk' },
          },
        },
        {
          Update: {
            TableName: this.#table,
            Key: holdingItemKey(release.audienceId),
            UpdateExpression: 'SET #audienceId = :audienceId, #last = :releaseAt',
            ExpressionAttributeNames: { '#audienceId': 'audienceId', '#last': 'lastReleaseAt' },
            ExpressionAttributeValues: { ':audienceId': release.audienceId, ':releaseAt': release.releaseAt },
          },
        },
      ]);
    } catch (error) {
      const reasons =
        error instanceof StateStoreError && error.cause instanceof TransactionCanceledException
          ? error.cause.CancellationReasons
          : undefined;
      if (reasons?.[0]?.Code === 'ConditionalCheckFailed') {
        throw new ReleaseClaimConflictError(release, { cause: error });
      }
      throw error;
    }
  }

  async finishRelease(release: DigestRelease, released: readonly ReleasedNotification[]): Promise<void> {
    const keys = [...release.parts.flat(), ...release.dropped];
    // The ledger first, then the items, the claim last: a crash in between leaves the claim, and
    // the next run finishes (marking again changes nothing).
    await this.#markReleased(released);
    await this.#writeAll(
      'deleting released notifications',
      keys.map((articleKey) => {
        const key = heldItemKey({ audienceId: release.audienceId, articleKey });
        return { key, request: { DeleteRequest: { Key: key } } };
      }),
    );
    await this.#documents.send(new DeleteCommand({ TableName: this.#table, Key: releaseItemKey(release) }));
  }

  /**
   * Writes on each released notification's ledger entry what became of it: one conditional
   * UpdateItem each (a put would lose the facts of the full article and reset the retention). An
   * entry that is gone stays gone; one marked already (an earlier attempt of this finish) keeps
   * its first, truer, marks.
   */
  async #markReleased(released: readonly ReleasedNotification[]): Promise<void> {
    await settleAll(
      released.map((entry) =>
        this.#limit(async () => {
          const { releasedAt, releasedIn, releaseOutcome, releaseCause } = entry;
          try {
            await this.#documents.send(
              new UpdateCommand({
                TableName: this.#table,
                Key: deliveryItemKey(entry),
                UpdateExpression: `SET #releasedAt = :releasedAt, #releaseOutcome = :releaseOutcome, #releaseCause = :releaseCause${releasedIn === undefined ? '' : ', #releasedIn = :releasedIn'}`,
                ConditionExpression: 'attribute_exists(#pk) AND attribute_not_exists(#releasedAt)',
                ExpressionAttributeNames: {
                  '#pk': 'pk',
                  '#releasedAt': 'releasedAt',
                  '#releaseOutcome': 'releaseOutcome',
                  '#releaseCause': 'releaseCause',
                  ...(releasedIn === undefined ? {} : { '#releasedIn': 'releasedIn' }),
                },
                ExpressionAttributeValues: {
                  ':releasedAt': releasedAt,
                  ':releaseOutcome': releaseOutcome,
                  ':releaseCause': releaseCause,
                  ...(releasedIn === undefined ? {} : { ':releasedIn': releasedIn }),
                },
              }),
            );
          } catch (error) {
            if (!(error instanceof ConditionalCheckFailedException)) throw error;
          }
        }),
      ),
    );
  }

  async setHoldingAudience(
    audienceId: string,
    holding: Pick<HoldingAudience, 'oldestHeldAt' | 'reasons'> | undefined,
  ): Promise<void> {
    const names = { '#audienceId': 'audienceId', '#oldest': 'oldestHeldAt', '#reasons': 'reasons' };
    await this.#documents.send(
      new UpdateCommand(
        holding === undefined || holding.reasons.length === 0
          ? {
              TableName: this.#table,
              Key: holdingItemKey(audienceId),
              UpdateExpression: 'SET #audienceId = :audienceId REMOVE #oldest, #reasons',
              ExpressionAttributeNames: names,
              ExpressionAttributeValues: { ':audienceId': audienceId },
            }
          : {
              TableName: this.#table,
              Key: holdingItemKey(audienceId),
              UpdateExpression: 'SET #audienceId = :audienceId, #oldest = :oldest, #reasons = :reasons',
              ExpressionAttributeNames: names,
              ExpressionAttributeValues: {
                ':audienceId': audienceId,
                ':oldest': holding.oldestHeldAt,
                ':reasons': new Set(holding.reasons),
              },
            },
      ),
    );
  }

  // --- Daily budgets --------------------------------------------------------------------------

  async readDailyCounts(keys: readonly DailyCountKey[]): Promise<Map<string, number>> {
    const wanted = new Map<string, DailyCountKey>();
    for (const key of keys) wanted.set(keyString(dailyCountItemKey(key)), key);
    const counts = new Map<string, number>();
    await settleAll(
      chunk(
        [...wanted.values()].map((key) => dailyCountItemKey(key)),
        batchGetLimit,
      ).map((batch) =>
        this.#limit(() =>
          this.#drain('reading daily alert counts', batch, async (pending) => {
            const output = await this.#documents.send(
              new BatchGetCommand({
                RequestItems: { [this.#table]: { Keys: [...pending], ConsistentRead: true } },
              }),
            );
            for (const item of output.Responses?.[this.#table] ?? []) {
              const key = wanted.get(keyString({ pk: String(item.pk), sk: String(item.sk) }));
              const parsed = DailyCountItem.safeParse(item);
              if (key !== undefined && parsed.success) counts.set(dailyCountId(key), parsed.data.sent);
            }
            return (output.UnprocessedKeys?.[this.#table]?.Keys ?? []) as Key[];
          }),
        ),
      ),
    );
    return counts;
  }

  async updateDailyCount(key: DailyCountKey, expected: number, next: number): Promise<void> {
    const dateMs = Date.parse(`${key.date}T00:00:00Z`);
    try {
      await this.#documents.send(
        new UpdateCommand({
          TableName: this.#table,
          Key: dailyCountItemKey(key),
          UpdateExpression: 'SET #sent = :next, #audienceId = :audienceId, #date = :date, #expiresAt = :expiresAt',
          ConditionExpression:
            expected === 0 ? 'attribute_not_exists(#sent) OR #sent = :expected' : '#sent = :expected',
          ExpressionAttributeNames: {
            '#sent': 'sent',
            '#audienceId': 'audienceId',
            '#date': 'date',
            '#expiresAt': 'expiresAt',
          },
          ExpressionAttributeValues: {
            ':next': next,
            ':expected': expected,
            ':audienceId': key.audienceId,
            ':date': key.date,
            ':expiresAt': ttlSeconds(Number.isNaN(dateMs) ? 0 : dateMs, this.#budgetRetentionDays + 1),
          },
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) {
        const current = oldItem(DailyCountItem, error.Item)?.sent ?? 0;
        throw new DailyCountConflictError(key, expected, current, { cause: error });
      }
      throw error;
    }
  }

  /**
   * TransactWriteItems, retried on transaction conflicts and throttling; a condition that fails
   * comes back as a StateStoreError whose cause is the TransactionCanceledException.
   */
  async #transact(what: string, items: NonNullable<TransactWriteCommandInput['TransactItems']>): Promise<void> {
    for (let attempt = 1; ; attempt += 1) {
      try {
        // A token per attempt, so the SDK's own retry of a commit whose answer was lost is
        // idempotent (see advanceWatermark).
        await this.#documents.send(
          new TransactWriteCommand({ ClientRequestToken: randomUUID(), TransactItems: items }),
        );
        return;
      } catch (error) {
        if (!(error instanceof TransactionCanceledException)) throw error;
        if (attempt >= maxTransactionAttempts || !isTransient(error.CancellationReasons)) {
          throw new StateStoreError(
            `${what} was cancelled (${reasonCodes(error.CancellationReasons)}) after ${attempt} attempt(s)`,
            { cause: error },
          );
        }
        await this.#sleep(backoff(attempt));
      }
    }
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

  async #queryAll(pk: string): Promise<Record<string, unknown>[]> {
    const items: Record<string, unknown>[] = [];
    for await (const item of partitionItems(this.#documents, this.#table, pk)) items.push(item);
    return items;
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
