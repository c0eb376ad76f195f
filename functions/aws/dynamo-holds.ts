/**
 * The DynamoDB adapter of the held-notification part of {@link StateStore}: notifications held for
 * digests, quiet hours and daily budgets, their digest releases, the holding index and the daily
 * budget counts, in the state table (layout in functions/aws/dynamo-state-store.ts, which
 * delegates these methods here).
 *
 * What it guarantees: a held notification is written in one transaction with its ledger entry
 * (`heldFor` set) and its audience's index entry, so a hold is never half recorded; a release is
 * claimed once (a conditional put: a second claim is ReleaseClaimConflictError) and finished
 * ledger first, then items, the claim last, so a crash leaves a claim the next run finishes; a
 * daily count moves only from the value it was read at (DailyCountConflictError otherwise).
 */
import { randomUUID } from 'node:crypto';
import { ConditionalCheckFailedException, TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import {
  BatchGetCommand,
  DeleteCommand,
  TransactWriteCommand,
  type TransactWriteCommandInput,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import * as z from 'zod/mini';
import { ledgerFacts } from '#core/ledger-facts';
import type { MatchReason } from '#core/model';
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
  ReleaseClaimConflictError,
  type ReleasedNotification,
} from '#core/ports';
import {
  type BatchContext,
  backoff,
  batchGetLimit,
  chunk,
  deliveryItemKey,
  drainBatch,
  isTransient,
  type Key,
  keyPart,
  keyString,
  maxTransactionAttempts,
  oldItem,
  reasonCodes,
  StateStoreError,
  settleAll,
  ttlSeconds,
  writeAll,
} from './dynamo-batch.ts';
import { allPartitionItems } from './dynamo-query.ts';
import { readItem } from './dynamo-rule-source.ts';

/** What a damaged count's `sent` holds, for the log: its kind, never more of it. */
function describeSent(sent: unknown): string {
  if (typeof sent === 'number') return Number.isInteger(sent) ? 'a negative number' : 'a fraction';
  if (typeof sent === 'string') return 'a string (S), not a number (N)';
  if (sent === undefined) return 'nothing';
  if (sent === null) return 'NULL';
  return `a ${sent instanceof Set ? 'set' : Array.isArray(sent) ? 'list (L)' : typeof sent}`;
}

/** The holding index's partition: one item per audience that ever held something. */
const holdingPartition = 'holding';
/** DynamoDB's TransactWriteItems limit. */
const transactionLimit = 100;

/** The partition of one audience's held notifications and digest releases. */
export const heldPartition = (audienceId: string): string => `held#${keyPart(audienceId)}`;

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

/**
 * Every kind of reason a match carries (core/model.ts MatchReason), spike alerts' included: a held
 * notification whose reason this list lacked was skipped as malformed and never released.
 */
const MATCH_REASON_KINDS = [
  'category',
  'keyword',
  'media',
  'status',
  'all',
  'spike',
] as const satisfies readonly MatchReason['kind'][];
/** Fails to compile when MatchReason gains a kind the list above does not have. */
const everyReasonKind: Exclude<MatchReason['kind'], (typeof MATCH_REASON_KINDS)[number]> extends never ? true : never =
  true;
void everyReasonKind;

// zod 4's number() already refuses Infinity and NaN.
const finite = z.number();
/** Why a notification is held. */
export const HoldReasonSchema = z.enum(['digest', 'quiet-hours', 'budget']);
const optionalText = z.pipe(
  z.nullish(z.string()),
  z.transform((value) => value ?? undefined),
);
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
      reasons: z.array(z.object({ kind: z.enum(MATCH_REASON_KINDS), term: z.string() })),
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
/**
 * What {@link DynamoHolds} works with: the state store's batch context (client, table, and the
 * limiter its other calls share), retentions, and its ledger entries.
 */
export interface HoldsContext extends BatchContext {
  readonly heldRetentionDays: number;
  readonly budgetRetentionDays: number;
  /** The ledger entry of a delivery, as the state store writes it (a hold writes one too). */
  readonly ledgerItem: (record: DeliveryRecord) => Record<string, unknown>;
}

/** Held notifications, digest releases, the holding index and daily budgets in the state table. */
export class DynamoHolds {
  readonly #heldRetentionDays: number;
  readonly #budgetRetentionDays: number;
  readonly #ledgerItem: (record: DeliveryRecord) => Record<string, unknown>;
  readonly #batch: BatchContext;
  /**
   * Daily count items whose `sent` is not a whole number ≥ 0 (written by hand: `-3`, `"0"`,
   * `2.5`), by count id, with the value they hold. They count as 0, and the next reservation
   * replaces exactly that value: a write conditioned on 0 alone would fail against it every time,
   * and the run would give up on every audience's sends.
   */
  readonly #damagedCounts = new Map<string, unknown>();

  constructor(context: HoldsContext) {
    this.#batch = context;
    this.#heldRetentionDays = context.heldRetentionDays;
    this.#budgetRetentionDays = context.budgetRetentionDays;
    this.#ledgerItem = context.ledgerItem;
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
            TableName: this.#batch.table,
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
            TableName: this.#batch.table,
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
          TableName: this.#batch.table,
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
    for (const item of await allPartitionItems(this.#batch.documents, this.#batch.table, holdingPartition)) {
      const parsed = HoldingItem.safeParse(item);
      if (!parsed.success) {
        this.#batch.log.warn('skipped a malformed holding index item', { sk: item.sk });
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
    for (const item of await allPartitionItems(this.#batch.documents, this.#batch.table, heldPartition(audienceId))) {
      const sk = String(item.sk);
      if (sk.startsWith('item#')) {
        const parsed = HeldItem.safeParse(item);
        if (!parsed.success) {
          this.#batch.log.warn('skipped a malformed held notification', {
            pk: item.pk,
            sk,
            reason: parsed.error.message,
          });
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
        else this.#batch.log.warn('skipped a malformed digest release', { pk: item.pk, sk });
      }
    }
    return { items, releases };
  }

  async claimRelease(release: DigestRelease): Promise<void> {
    try {
      await this.#transact('claiming a digest release', [
        {
          Put: {
            TableName: this.#batch.table,
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
            TableName: this.#batch.table,
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
    await writeAll(
      this.#batch,
      'deleting released notifications',
      keys.map((articleKey) => {
        const key = heldItemKey({ audienceId: release.audienceId, articleKey });
        return { key, request: { DeleteRequest: { Key: key } } };
      }),
    );
    await this.#batch.documents.send(new DeleteCommand({ TableName: this.#batch.table, Key: releaseItemKey(release) }));
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
        this.#batch.limit(async () => {
          const { releasedAt, releasedIn, releaseOutcome, releaseCause } = entry;
          try {
            await this.#batch.documents.send(
              new UpdateCommand({
                TableName: this.#batch.table,
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

  /**
   * Marks the notifications a parked digest carried as sent, once `replay --parked` has published
   * it: their entries said `releaseOutcome: parked` in that digest since its release. Only an entry
   * still so marked, in that digest, changes (one conditional UpdateItem each).
   */
  async markDigestReplayed(
    audienceId: string,
    digestArticleKey: string,
    articleKeys: readonly string[],
    at: number,
  ): Promise<void> {
    await settleAll(
      articleKeys.map((articleKey) =>
        this.#batch.limit(async () => {
          try {
            await this.#batch.documents.send(
              new UpdateCommand({
                TableName: this.#batch.table,
                Key: deliveryItemKey({ audienceId, articleKey }),
                UpdateExpression: 'SET #releaseOutcome = :sent, #releasedAt = :at',
                ConditionExpression: 'attribute_exists(#pk) AND #releaseOutcome = :parked AND #releasedIn = :digest',
                ExpressionAttributeNames: {
                  '#pk': 'pk',
                  '#releaseOutcome': 'releaseOutcome',
                  '#releasedAt': 'releasedAt',
                  '#releasedIn': 'releasedIn',
                },
                ExpressionAttributeValues: {
                  ':sent': 'sent',
                  ':parked': 'parked',
                  ':at': at,
                  ':digest': digestArticleKey,
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
    await this.#batch.documents.send(
      new UpdateCommand(
        holding === undefined || holding.reasons.length === 0
          ? {
              TableName: this.#batch.table,
              Key: holdingItemKey(audienceId),
              UpdateExpression: 'SET #audienceId = :audienceId REMOVE #oldest, #reasons',
              ExpressionAttributeNames: names,
              ExpressionAttributeValues: { ':audienceId': audienceId },
            }
          : {
              TableName: this.#batch.table,
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
        this.#batch.limit(() =>
          drainBatch(this.#batch, 'reading daily alert counts', batch, async (pending) => {
            const output = await this.#batch.documents.send(
              new BatchGetCommand({
                RequestItems: { [this.#batch.table]: { Keys: [...pending], ConsistentRead: true } },
              }),
            );
            for (const item of output.Responses?.[this.#batch.table] ?? []) {
              const key = wanted.get(keyString({ pk: String(item.pk), sk: String(item.sk) }));
              if (key === undefined) continue;
              const parsed = DailyCountItem.safeParse(item);
              if (parsed.success) counts.set(dailyCountId(key), parsed.data.sent);
              else this.#noteDamagedCount(key, item.sent);
            }
            return (output.UnprocessedKeys?.[this.#batch.table]?.Keys ?? []) as Key[];
          }),
        ),
      ),
    );
    return counts;
  }

  async updateDailyCount(key: DailyCountKey, expected: number, next: number): Promise<void> {
    const dateMs = Date.parse(`${key.date}T00:00:00Z`);
    const id = dailyCountId(key);
    // An item without `sent` at all is met by attribute_not_exists already.
    const damaged = expected === 0 && this.#damagedCounts.get(id) !== undefined;
    try {
      await this.#batch.documents.send(
        new UpdateCommand({
          TableName: this.#batch.table,
          Key: dailyCountItemKey(key),
          UpdateExpression: 'SET #sent = :next, #audienceId = :audienceId, #date = :date, #expiresAt = :expiresAt',
          // A damaged count (read as 0) is replaced only while it still holds what was read.
          ConditionExpression: damaged
            ? 'attribute_not_exists(#sent) OR #sent = :damaged'
            : expected === 0
              ? 'attribute_not_exists(#sent) OR #sent = :expected'
              : '#sent = :expected',
          ExpressionAttributeNames: {
            '#sent': 'sent',
            '#audienceId': 'audienceId',
            '#date': 'date',
            '#expiresAt': 'expiresAt',
          },
          ExpressionAttributeValues: {
            ':next': next,
            ...(damaged ? { ':damaged': this.#damagedCounts.get(id) } : { ':expected': expected }),
            ':audienceId': key.audienceId,
            ':date': key.date,
            ':expiresAt': ttlSeconds(Number.isNaN(dateMs) ? 0 : dateMs, this.#budgetRetentionDays + 1),
          },
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
      this.#damagedCounts.delete(id);
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) {
        const current = oldItem(DailyCountItem, error.Item)?.sent;
        // Damaged since it was read: it counts as 0, and the retry replaces what it holds now.
        if (current === undefined && error.Item?.sent !== undefined)
          this.#noteDamagedCount(key, readItem(error.Item).sent);
        throw new DailyCountConflictError(key, expected, current ?? 0, { cause: error });
      }
      throw error;
    }
  }

  /** Remembers a count item that holds no count, and says so in the log (its type, not its value). */
  #noteDamagedCount(key: DailyCountKey, sent: unknown): void {
    const id = dailyCountId(key);
    if (!this.#damagedCounts.has(id)) {
      this.#batch.log.warn(
        'a daily alert count item holds no count: `sent` must be a whole number ≥ 0; it counts as 0 and the next send for this audience and day replaces it',
        { audienceId: key.audienceId, date: key.date, item: dailyCountItemKey(key), found: describeSent(sent) },
      );
    }
    this.#damagedCounts.set(id, sent);
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
        await this.#batch.documents.send(
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
        await this.#batch.sleep(backoff(attempt));
      }
    }
  }
}
