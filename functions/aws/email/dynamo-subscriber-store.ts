/**
 * The {@link SubscriberStore} port on one DynamoDB table (subscriber-table.ts). Owns the storage
 * side of the email guarantees:
 *
 * - A send is claimed in one transaction with a check of the profile (not suppressed) and of the
 *   membership (confirmed and not paused, or pending for a confirmation), so no claim, and so no
 *   send, can follow a suppression or an unsubscribe, however the requests interleave.
 * - A record moves from `sending` only by the claimant (conditional updates); a claim whose lease
 *   ran out can be taken over, so a crashed invocation never blocks a message forever.
 * - A record's status only rises (`statusRank`), whatever order SES's events arrive in.
 * - A subscriber is created once per address (a conditional write on the address key).
 *
 * Addresses are stored in profiles only; keys and indexes hold ids and hashes.
 */
import { randomBytes } from 'node:crypto';
import {
  ConditionalCheckFailedException,
  type DynamoDBClient,
  TransactionCanceledException,
} from '@aws-sdk/client-dynamodb';
import {
  BatchGetCommand,
  BatchWriteCommand,
  DeleteCommand,
  DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
  type QueryCommandInput,
  TransactWriteCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { STATUS_RANK } from '#core/email/events';
import type {
  ClaimOutcome,
  DueDigest,
  HeldEntry,
  SendClaim,
  SendEvent,
  SendRecord,
  SendStatus,
  SubscriberStore,
} from '#core/email/ports';
import { addressKey, type Membership, normalizeAddress, type SubscriberProfile } from '#core/email/subscriber';
import { digestsIndex, membersIndex } from './subscriber-table.ts';

export interface DynamoSubscriberStoreOptions {
  readonly client: DynamoDBClient;
  readonly tableName: string;
  /** How long message records (the history) are kept. */
  readonly historyDays: number;
}

const DAY_SECONDS = 86_400;
const subKey = (subscriberId: string) => `sub#${subscriberId}`;
const audKey = (audienceId: string) => `aud#${audienceId}`;
const msgKey = (messageKey: string) => `msg#${messageKey}`;
const heldPrefix = (audienceId: string) => `held#${audienceId}#`;
/** Marks an entry ever held for the subscriber's daily digest of an audience (kept as long as the history). */
const wasHeldPrefix = (audienceId: string) => `washeld#${audienceId}#`;

type Item = Record<string, unknown>;

const isConditionFailure = (error: unknown): boolean =>
  error instanceof ConditionalCheckFailedException ||
  (error instanceof Error && error.name === 'ConditionalCheckFailedException');

export class DynamoSubscriberStore implements SubscriberStore {
  readonly #documents: DynamoDBDocumentClient;
  readonly #table: string;
  readonly #historySeconds: number;

  constructor(options: DynamoSubscriberStoreOptions) {
    this.#documents = DynamoDBDocumentClient.from(options.client, { marshallOptions: { removeUndefinedValues: true } });
    this.#table = options.tableName;
    this.#historySeconds = options.historyDays * DAY_SECONDS;
  }

  // --- Profiles -----------------------------------------------------------------------------------

  async findByAddress(address: string): Promise<SubscriberProfile | undefined> {
    const { Item: lookup } = await this.#documents.send(
      new GetCommand({
        TableName: this.#table,
        Key: { pk: `addr#${addressKey(address)}`, sk: 'addr' },
        ConsistentRead: true,
      }),
    );
    const subscriberId = typeof lookup?.subscriberId === 'string' ? lookup.subscriberId : undefined;
    return subscriberId === undefined ? undefined : await this.profile(subscriberId);
  }

  async profile(subscriberId: string): Promise<SubscriberProfile | undefined> {
    const { Item: item } = await this.#documents.send(
      new GetCommand({
        TableName: this.#table,
        Key: { pk: subKey(subscriberId), sk: 'profile' },
        ConsistentRead: true,
      }),
    );
    return item === undefined ? undefined : toProfile(item);
  }

  async profiles(subscriberIds: readonly string[]): Promise<Map<string, SubscriberProfile>> {
    const found = new Map<string, SubscriberProfile>();
    await this.#batchGet(
      subscriberIds.map((id) => ({ pk: subKey(id), sk: 'profile' })),
      (item) => {
        const profile = toProfile(item);
        found.set(profile.subscriberId, profile);
      },
    );
    return found;
  }

  /** Reads `keys` (each once, strongly consistent), 100 a request, retrying what DynamoDB leaves unprocessed. */
  async #batchGet(keys: readonly Item[], onItem: (item: Item) => void): Promise<void> {
    const unique = [...new Map(keys.map((key) => [`${String(key.pk)}\u0000${String(key.sk)}`, key])).values()];
    for (let start = 0; start < unique.length; start += 100) {
      let pending: Item[] = unique.slice(start, start + 100);
      for (let attempt = 0; pending.length > 0; attempt += 1) {
        const result = await this.#documents.send(
          new BatchGetCommand({ RequestItems: { [this.#table]: { Keys: pending, ConsistentRead: true } } }),
        );
        for (const item of result.Responses?.[this.#table] ?? []) onItem(item);
        pending = (result.UnprocessedKeys?.[this.#table]?.Keys as Item[] | undefined) ?? [];
        if (pending.length > 0) await backoff(attempt);
      }
    }
  }

  async ensureSubscriber(
    address: string,
    options: { readonly locale?: string | undefined; readonly now: number },
  ): Promise<SubscriberProfile> {
    const normalized = normalizeAddress(address);
    for (let attempt = 0; attempt < 3; attempt += 1) {
      const existing = await this.findByAddress(normalized);
      if (existing !== undefined) {
        if (options.locale === undefined || existing.locale === options.locale) return existing;
        // One attribute, not the whole profile: a bounce recorded meanwhile must not be undone.
        try {
          await this.#documents.send(
            new UpdateCommand({
              TableName: this.#table,
              Key: { pk: subKey(existing.subscriberId), sk: 'profile' },
              UpdateExpression: 'SET #locale = :locale',
              ConditionExpression: 'attribute_exists(pk)',
              ExpressionAttributeNames: { '#locale': 'locale' },
              ExpressionAttributeValues: { ':locale': options.locale },
            }),
          );
        } catch (error) {
          // Deleted meanwhile: the next attempt creates it afresh.
          if (isConditionFailure(error)) continue;
          throw error;
        }
        return { ...existing, locale: options.locale };
      }
      const profile: SubscriberProfile = {
        subscriberId: randomBytes(10).toString('hex'),
        address: normalized,
        locale: options.locale,
        createdAt: options.now,
        softBounces: 0,
      };
      try {
        await this.#documents.send(
          new TransactWriteCommand({
            TransactItems: [
              {
                Put: {
                  TableName: this.#table,
                  Item: { pk: `addr#${addressKey(normalized)}`, sk: 'addr', subscriberId: profile.subscriberId },
                  ConditionExpression: 'attribute_not_exists(pk)',
                },
              },
              {
                Put: {
                  TableName: this.#table,
                  Item: profileItem(profile),
                  ConditionExpression: 'attribute_not_exists(pk)',
                },
              },
            ],
          }),
        );
        return profile;
      } catch (error) {
        // Another creation of the same address won the race: read its subscriber.
        if (!(error instanceof TransactionCanceledException)) throw error;
      }
    }
    throw new Error('could not create the subscriber: the address key kept changing');
  }

  // SES feedback changes one attribute each, never the whole profile: two events of one address
  // handled at once (a complaint and a delivery) must not write back what the other read.

  async suppress(subscriberId: string, suppression: NonNullable<SubscriberProfile['suppression']>): Promise<boolean> {
    try {
      await this.#documents.send(
        new UpdateCommand({
          TableName: this.#table,
          Key: { pk: subKey(subscriberId), sk: 'profile' },
          UpdateExpression: 'SET suppression = :suppression',
          // The first reason stands; a deleted subscriber is not brought back as a bare profile.
          ConditionExpression: 'attribute_exists(pk) AND attribute_not_exists(suppression)',
          ExpressionAttributeValues: { ':suppression': { reason: suppression.reason, at: suppression.at } },
        }),
      );
      return true;
    } catch (error) {
      if (isConditionFailure(error)) return false;
      throw error;
    }
  }

  async countSoftBounce(subscriberId: string, messageKey: string | undefined): Promise<number | undefined> {
    const profileKey = { pk: subKey(subscriberId), sk: 'profile' };
    const add = {
      TableName: this.#table,
      Key: profileKey,
      UpdateExpression: 'ADD softBounces :one',
      ConditionExpression: 'attribute_exists(pk)',
      ExpressionAttributeValues: { ':one': 1 },
    };
    try {
      if (messageKey === undefined) {
        await this.#documents.send(new UpdateCommand(add));
      } else {
        // Counted together with a mark on the message's record, so the same bounce delivered again
        // (Lambda's retries of an event whose history write failed, SNS's at-least-once) counts once.
        await this.#documents.send(
          new TransactWriteCommand({
            TransactItems: [
              {
                Update: {
                  TableName: this.#table,
                  Key: { pk: subKey(subscriberId), sk: msgKey(messageKey) },
                  UpdateExpression: 'SET softBounceCounted = :true',
                  ConditionExpression: 'attribute_exists(pk) AND attribute_not_exists(softBounceCounted)',
                  ExpressionAttributeValues: { ':true': true },
                },
              },
              { Update: add },
            ],
          }),
        );
      }
    } catch (error) {
      if (isConditionFailure(error)) return undefined;
      if (!(error instanceof TransactionCanceledException) || messageKey === undefined) throw error;
      const failed = (index: number) => error.CancellationReasons?.[index]?.Code === 'ConditionalCheckFailed';
      if (failed(1)) return undefined;
      if (!failed(0)) throw error;
      // Counted before, or a message without a record (expired from the history): the latter is
      // counted as it comes, since nothing is left to tell a repeat by.
      if ((await this.#record(subscriberId, messageKey)) === undefined) {
        try {
          await this.#documents.send(new UpdateCommand(add));
        } catch (inner) {
          if (isConditionFailure(inner)) return undefined;
          throw inner;
        }
      }
    }
    return (await this.profile(subscriberId))?.softBounces;
  }

  async resetSoftBounces(subscriberId: string): Promise<void> {
    try {
      await this.#documents.send(
        new UpdateCommand({
          TableName: this.#table,
          Key: { pk: subKey(subscriberId), sk: 'profile' },
          UpdateExpression: 'SET softBounces = :zero',
          ConditionExpression: 'attribute_exists(pk) AND softBounces <> :zero',
          ExpressionAttributeValues: { ':zero': 0 },
        }),
      );
    } catch (error) {
      // Already zero, or the subscriber was deleted meanwhile: nothing to change.
      if (!isConditionFailure(error)) throw error;
    }
  }

  async deleteSubscriber(subscriberId: string): Promise<void> {
    const profile = await this.profile(subscriberId);
    const keys: Item[] = [];
    for await (const item of this.#query({
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': subKey(subscriberId) },
      ProjectionExpression: 'pk, sk',
    })) {
      keys.push({ pk: item.pk, sk: item.sk });
    }
    if (profile !== undefined) keys.push({ pk: `addr#${addressKey(profile.address)}`, sk: 'addr' });
    await this.#batchWrite(keys.map((Key) => ({ DeleteRequest: { Key } })));
  }

  // --- Memberships ---------------------------------------------------------------------------------

  async memberships(subscriberId: string): Promise<Membership[]> {
    const memberships: Membership[] = [];
    for await (const item of this.#query({
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :aud)',
      ExpressionAttributeValues: { ':pk': subKey(subscriberId), ':aud': 'aud#' },
      ConsistentRead: true,
    })) {
      memberships.push(toMembership(item));
    }
    return memberships;
  }

  async membership(subscriberId: string, audienceId: string): Promise<Membership | undefined> {
    const { Item: item } = await this.#documents.send(
      new GetCommand({
        TableName: this.#table,
        Key: { pk: subKey(subscriberId), sk: audKey(audienceId) },
        ConsistentRead: true,
      }),
    );
    return item === undefined ? undefined : toMembership(item);
  }

  async saveMembership(
    membership: Membership,
    options: { readonly create?: boolean; readonly expected?: Membership } = {},
  ): Promise<boolean> {
    const set: Record<string, unknown> = {
      subscriberId: membership.subscriberId,
      audienceId: membership.audienceId,
      state: membership.state,
      preference: membership.preference,
      createdAt: membership.createdAt,
      source: membership.source,
    };
    const optional = {
      pausedUntil: membership.pausedUntil,
      confirmedAt: membership.confirmedAt,
      unsubscribedAt: membership.unsubscribedAt,
      // Listed in the audience's members index only while it may receive something.
      memberOf: membership.state === 'unsubscribed' ? undefined : membership.audienceId,
    };
    const remove: string[] = [];
    for (const [name, value] of Object.entries(optional)) {
      if (value === undefined) remove.push(name);
      else set[name] = value;
    }
    const names: Record<string, string> = {};
    const values: Record<string, unknown> = {};
    const assignments = Object.entries(set).map(([name, value], index) => {
      names[`#a${index}`] = name;
      values[`:a${index}`] = value;
      return `#a${index} = :a${index}`;
    });
    const removals = remove.map((name, index) => {
      names[`#r${index}`] = name;
      return `#r${index}`;
    });
    // Written over what the caller read only if it still holds: an unsubscribe (a one-click POST)
    // that landed between the read and this write must not be turned back by a preference change.
    const conditions = [options.create ? 'attribute_not_exists(pk)' : 'attribute_exists(pk)'];
    if (options.expected !== undefined) {
      const read = options.expected;
      const fields = {
        state: read.state,
        preference: read.preference,
        pausedUntil: read.pausedUntil,
        confirmedAt: read.confirmedAt,
        unsubscribedAt: read.unsubscribedAt,
      };
      for (const [index, [name, value]] of Object.entries(fields).entries()) {
        names[`#e${index}`] = name;
        if (value === undefined) {
          conditions.push(`attribute_not_exists(#e${index})`);
        } else {
          values[`:e${index}`] = value;
          conditions.push(`#e${index} = :e${index}`);
        }
      }
    }
    // Leaving the audience keeps a waiting daily digest due: its release sends nothing to someone
    // who left, records the held alerts as not sent (unsubscribed) and drops them.
    try {
      await this.#documents.send(
        new UpdateCommand({
          TableName: this.#table,
          Key: { pk: subKey(membership.subscriberId), sk: audKey(membership.audienceId) },
          UpdateExpression: `SET ${assignments.join(', ')}${removals.length > 0 ? ` REMOVE ${removals.join(', ')}` : ''}`,
          ConditionExpression: conditions.join(' AND '),
          ExpressionAttributeNames: names,
          ExpressionAttributeValues: values,
        }),
      );
      return true;
    } catch (error) {
      if (isConditionFailure(error)) return false;
      throw error;
    }
  }

  async audienceMembers(audienceId: string): Promise<Membership[]> {
    const members: Membership[] = [];
    for await (const item of this.#query({
      IndexName: membersIndex.name,
      KeyConditionExpression: '#memberOf = :audience',
      ExpressionAttributeNames: { '#memberOf': membersIndex.partitionKey },
      ExpressionAttributeValues: { ':audience': audienceId },
    })) {
      members.push(toMembership(item));
    }
    return members;
  }

  // --- Sends -----------------------------------------------------------------------------------------

  async claimSend(claim: SendClaim): Promise<ClaimOutcome> {
    const pk = subKey(claim.subscriberId);
    const membershipCondition =
      claim.requireMembership === 'pending'
        ? { expression: '#state = :pending', values: { ':pending': 'pending' } }
        : {
            expression: '#state = :confirmed AND (attribute_not_exists(pausedUntil) OR pausedUntil <= :now)',
            values: { ':confirmed': 'confirmed', ':now': claim.now },
          };
    try {
      await this.#documents.send(
        new TransactWriteCommand({
          TransactItems: [
            {
              ConditionCheck: {
                TableName: this.#table,
                Key: { pk, sk: 'profile' },
                ConditionExpression: 'attribute_exists(pk) AND attribute_not_exists(suppression)',
              },
            },
            {
              ConditionCheck: {
                TableName: this.#table,
                Key: { pk, sk: audKey(claim.audienceId) },
                ConditionExpression: membershipCondition.expression,
                ExpressionAttributeNames: { '#state': 'state' },
                ExpressionAttributeValues: membershipCondition.values,
              },
            },
            {
              Put: {
                TableName: this.#table,
                Item: {
                  pk,
                  sk: msgKey(claim.messageKey),
                  subscriberId: claim.subscriberId,
                  messageKey: claim.messageKey,
                  deliveryId: claim.deliveryId,
                  audienceId: claim.audienceId,
                  kind: claim.kind,
                  subject: claim.subject,
                  status: 'sending',
                  statusRank: STATUS_RANK.sending,
                  createdAt: claim.now,
                  leaseUntil: claim.now + claim.leaseMs,
                  events: [],
                  ...(claim.entryKeys === undefined ? {} : { entryKeys: [...claim.entryKeys] }),
                  expiresAt: Math.floor(claim.now / 1000) + this.#historySeconds,
                },
                ConditionExpression: 'attribute_not_exists(pk) OR (#status = :sending AND leaseUntil < :now)',
                ExpressionAttributeNames: { '#status': 'status' },
                ExpressionAttributeValues: { ':sending': 'sending', ':now': claim.now },
              },
            },
          ],
        }),
      );
      return { claimed: true };
    } catch (error) {
      if (!(error instanceof TransactionCanceledException)) throw error;
      const reasons = error.CancellationReasons ?? [];
      const failed = (index: number) => reasons[index]?.Code === 'ConditionalCheckFailed';
      if (failed(2)) {
        const record = await this.#record(claim.subscriberId, claim.messageKey);
        if (record === undefined) return { claimed: false, reason: 'in-progress' };
        if (record.status === 'sending') return { claimed: false, reason: 'in-progress' };
        return { claimed: false, reason: 'done', record };
      }
      if (failed(0) || failed(1)) return { claimed: false, reason: 'not-allowed' };
      // Cancelled for another reason (a conflicting transaction, throttling): try again later.
      return { claimed: false, reason: 'in-progress' };
    }
  }

  async completeSend(
    subscriberId: string,
    messageKey: string,
    result: { readonly providerMessageId: string; readonly at: number },
  ): Promise<void> {
    try {
      await this.#documents.send(
        new UpdateCommand({
          TableName: this.#table,
          Key: { pk: subKey(subscriberId), sk: msgKey(messageKey) },
          UpdateExpression:
            'SET #status = :sent, statusRank = :rank, sentAt = :at, providerMessageId = :id REMOVE leaseUntil',
          ConditionExpression: '#status = :sending',
          ExpressionAttributeNames: { '#status': 'status' },
          ExpressionAttributeValues: {
            ':sent': 'sent',
            ':rank': STATUS_RANK.sent,
            ':at': result.at,
            ':id': result.providerMessageId,
            ':sending': 'sending',
          },
        }),
      );
    } catch (error) {
      // An SES event already moved the status on: it stays.
      if (!isConditionFailure(error)) throw error;
    }
  }

  async releaseSend(subscriberId: string, messageKey: string): Promise<void> {
    try {
      await this.#documents.send(
        new DeleteCommand({
          TableName: this.#table,
          Key: { pk: subKey(subscriberId), sk: msgKey(messageKey) },
          ConditionExpression: '#status = :sending',
          ExpressionAttributeNames: { '#status': 'status' },
          ExpressionAttributeValues: { ':sending': 'sending' },
        }),
      );
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
    }
  }

  async recordOutcome(
    record: Omit<SendRecord, 'events' | 'sentAt' | 'providerMessageId'> & { readonly detail?: string },
  ): Promise<void> {
    const { detail, ...fields } = record;
    try {
      await this.#documents.send(
        new PutCommand({
          TableName: this.#table,
          Item: {
            pk: subKey(record.subscriberId),
            sk: msgKey(record.messageKey),
            ...fields,
            statusRank: STATUS_RANK[record.status],
            events: [{ type: record.status, at: record.createdAt, ...(detail === undefined ? {} : { detail }) }],
            expiresAt: Math.floor(record.createdAt / 1000) + this.#historySeconds,
          },
          ConditionExpression: 'attribute_not_exists(pk)',
        }),
      );
    } catch (error) {
      // Decided (or sent) before: the first record stands.
      if (!isConditionFailure(error)) throw error;
    }
  }

  async recordEvent(subscriberId: string, messageKey: string, event: SendEvent, status: SendStatus): Promise<boolean> {
    const Key = { pk: subKey(subscriberId), sk: msgKey(messageKey) };
    try {
      await this.#documents.send(
        new UpdateCommand({
          TableName: this.#table,
          Key,
          UpdateExpression: 'SET events = list_append(if_not_exists(events, :none), :event), lastEventAt = :at',
          ConditionExpression: 'attribute_exists(pk)',
          ExpressionAttributeValues: { ':none': [], ':event': [event], ':at': event.at },
        }),
      );
    } catch (error) {
      if (isConditionFailure(error)) return false;
      throw error;
    }
    try {
      await this.#documents.send(
        new UpdateCommand({
          TableName: this.#table,
          Key,
          UpdateExpression: 'SET #status = :status, statusRank = :rank',
          ConditionExpression: 'attribute_not_exists(statusRank) OR statusRank < :rank',
          ExpressionAttributeNames: { '#status': 'status' },
          ExpressionAttributeValues: { ':status': status, ':rank': STATUS_RANK[status] },
        }),
      );
    } catch (error) {
      // A later status is already there (events arrive in any order).
      if (!isConditionFailure(error)) throw error;
    }
    return true;
  }

  async history(subscriberId: string, options: { readonly limit?: number } = {}): Promise<SendRecord[]> {
    const records: SendRecord[] = [];
    for await (const item of this.#query({
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :msg)',
      ExpressionAttributeValues: { ':pk': subKey(subscriberId), ':msg': 'msg#' },
      ConsistentRead: true,
    })) {
      records.push(toRecord(item));
    }
    records.sort((a, b) => b.createdAt - a.createdAt);
    return options.limit === undefined ? records : records.slice(0, options.limit);
  }

  async sendStatuses(messageKey: string, subscriberIds: readonly string[]): Promise<Map<string, SendStatus>> {
    const found = new Map<string, SendStatus>();
    await this.#batchGet(
      subscriberIds.map((id) => ({ pk: subKey(id), sk: msgKey(messageKey) })),
      (item) => {
        const record = toRecord(item);
        found.set(record.subscriberId, record.status);
      },
    );
    return found;
  }

  async #record(subscriberId: string, messageKey: string): Promise<SendRecord | undefined> {
    const { Item: item } = await this.#documents.send(
      new GetCommand({
        TableName: this.#table,
        Key: { pk: subKey(subscriberId), sk: msgKey(messageKey) },
        ConsistentRead: true,
      }),
    );
    return item === undefined ? undefined : toRecord(item);
  }

  // --- Daily digests -----------------------------------------------------------------------------------

  async hold(subscriberId: string, audienceId: string, entries: readonly HeldEntry[], dueAt: number): Promise<number> {
    const pk = subKey(subscriberId);
    let held = 0;
    for (const entry of entries) {
      try {
        // The entry and a mark that it was held, in one transaction: the mark outlives the entry
        // (cleared once its digest went out), so a notification that comes back after the digest
        // (another subscriber was throttled, a redrive) finds it and holds nothing again.
        await this.#documents.send(
          new TransactWriteCommand({
            TransactItems: [
              {
                Put: {
                  TableName: this.#table,
                  Item: {
                    pk,
                    sk: `${wasHeldPrefix(audienceId)}${entry.key}`,
                    heldAt: entry.heldAt,
                    expiresAt: Math.floor(entry.heldAt / 1000) + this.#historySeconds,
                  },
                  ConditionExpression: 'attribute_not_exists(pk)',
                },
              },
              {
                Put: {
                  TableName: this.#table,
                  Item: {
                    pk,
                    sk: `${heldPrefix(audienceId)}${entry.key}`,
                    key: entry.key,
                    audienceId,
                    heldAt: entry.heldAt,
                    locale: entry.locale,
                    // As JSON: the document's optional fields are absent, never undefined (which DynamoDB cannot store).
                    entry: JSON.parse(JSON.stringify(entry.entry)) as unknown,
                    expiresAt: Math.floor(entry.heldAt / 1000) + 30 * DAY_SECONDS,
                  },
                },
              },
            ],
          }),
        );
        held += 1;
      } catch (error) {
        const heldBefore =
          error instanceof TransactionCanceledException &&
          error.CancellationReasons?.[0]?.Code === 'ConditionalCheckFailed';
        if (!heldBefore) throw error;
      }
    }
    // Every entry held before: a retry. If one of them is still held (not sent in a digest yet),
    // the due time is written again: the first try may have failed right before it, and without
    // it their digest would never be due.
    if (held === 0 && !(await this.#anyStillHeld(pk, audienceId, entries))) return 0;
    try {
      await this.#documents.send(
        new UpdateCommand({
          TableName: this.#table,
          Key: { pk, sk: audKey(audienceId) },
          // holdSeq counts holds, so a release that found nothing left clears the due time only
          // if no hold came in meanwhile (clearHeld).
          UpdateExpression: 'SET #shard = :due, #dueAt = if_not_exists(#dueAt, :at) ADD holdSeq :one',
          ConditionExpression: 'attribute_exists(pk)',
          ExpressionAttributeNames: { '#shard': digestsIndex.partitionKey, '#dueAt': digestsIndex.sortKey },
          ExpressionAttributeValues: { ':due': 'due', ':at': dueAt, ':one': 1 },
        }),
      );
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
    }
    return held;
  }

  /** Whether any of `entries` is still held for the audience (its digest has not taken it yet). */
  async #anyStillHeld(pk: string, audienceId: string, entries: readonly HeldEntry[]): Promise<boolean> {
    for (const entry of entries) {
      const { Item } = await this.#documents.send(
        new GetCommand({
          TableName: this.#table,
          Key: { pk, sk: `${heldPrefix(audienceId)}${entry.key}` },
          ConsistentRead: true,
          ProjectionExpression: 'pk',
        }),
      );
      if (Item !== undefined) return true;
    }
    return false;
  }

  async dueDigests(now: number, limit: number): Promise<DueDigest[]> {
    const due: DueDigest[] = [];
    for await (const item of this.#query({
      IndexName: digestsIndex.name,
      KeyConditionExpression: '#shard = :due AND #dueAt <= :now',
      ExpressionAttributeNames: { '#shard': digestsIndex.partitionKey, '#dueAt': digestsIndex.sortKey },
      ExpressionAttributeValues: { ':due': 'due', ':now': now },
    })) {
      const pk = String(item.pk);
      const sk = String(item.sk);
      due.push({
        subscriberId: pk.slice('sub#'.length),
        audienceId: sk.slice('aud#'.length),
        dueAt: Number(item.digestDueAt),
      });
      if (due.length >= limit) break;
    }
    return due;
  }

  async heldEntries(subscriberId: string, audienceId: string): Promise<HeldEntry[]> {
    const entries: HeldEntry[] = [];
    for await (const item of this.#query({
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :held)',
      ExpressionAttributeValues: { ':pk': subKey(subscriberId), ':held': heldPrefix(audienceId) },
      ConsistentRead: true,
    })) {
      entries.push({
        key: String(item.key),
        heldAt: Number(item.heldAt),
        locale: typeof item.locale === 'string' ? item.locale : undefined,
        entry: item.entry as HeldEntry['entry'],
      });
    }
    return entries.sort((a, b) => a.heldAt - b.heldAt);
  }

  async clearHeld(
    subscriberId: string,
    audienceId: string,
    keys: readonly string[],
    nextDueAt?: number,
  ): Promise<void> {
    const pk = subKey(subscriberId);
    await this.#batchWrite(
      keys.map((key) => ({ DeleteRequest: { Key: { pk, sk: `${heldPrefix(audienceId)}${key}` } } })),
    );
    // The due time goes only when nothing is held and no hold came in since the entries were
    // listed (holdSeq unchanged): a hold between the listing and the removal would otherwise keep
    // its entry with no due time, and no release would ever find it. Listed again when one did.
    for (let attempt = 0; attempt < 5; attempt++) {
      const { Item: member } = await this.#documents.send(
        new GetCommand({ TableName: this.#table, Key: { pk, sk: audKey(audienceId) }, ConsistentRead: true }),
      );
      if (member === undefined) return;
      const seq = typeof member.holdSeq === 'number' ? member.holdSeq : undefined;
      const left = await this.heldEntries(subscriberId, audienceId);
      if (left.length > 0) {
        await this.#moveDue(pk, audienceId, nextDueAt);
        return;
      }
      try {
        await this.#documents.send(
          new UpdateCommand({
            TableName: this.#table,
            Key: { pk, sk: audKey(audienceId) },
            UpdateExpression: 'REMOVE #shard, #dueAt',
            ConditionExpression:
              seq === undefined
                ? 'attribute_exists(pk) AND attribute_not_exists(holdSeq)'
                : 'attribute_exists(pk) AND holdSeq = :seq',
            ExpressionAttributeNames: { '#shard': digestsIndex.partitionKey, '#dueAt': digestsIndex.sortKey },
            ...(seq === undefined ? {} : { ExpressionAttributeValues: { ':seq': seq } }),
          }),
        );
        return;
      } catch (error) {
        if (!isConditionFailure(error)) throw error;
      }
    }
  }

  /** Entries are left over: due at `nextDueAt` when given (a digest of their own), else as they were. */
  async #moveDue(pk: string, audienceId: string, nextDueAt: number | undefined): Promise<void> {
    if (nextDueAt === undefined) return;
    try {
      await this.#documents.send(
        new UpdateCommand({
          TableName: this.#table,
          Key: { pk, sk: audKey(audienceId) },
          UpdateExpression: 'SET #shard = :due, #dueAt = :at',
          ConditionExpression: 'attribute_exists(pk)',
          ExpressionAttributeNames: { '#shard': digestsIndex.partitionKey, '#dueAt': digestsIndex.sortKey },
          ExpressionAttributeValues: { ':due': 'due', ':at': nextDueAt },
        }),
      );
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
    }
  }

  // --- Helpers -----------------------------------------------------------------------------------------

  async *#query(input: Omit<QueryCommandInput, 'TableName'>): AsyncGenerator<Item> {
    let ExclusiveStartKey: Item | undefined;
    do {
      const page = await this.#documents.send(
        new QueryCommand({ TableName: this.#table, ...input, ExclusiveStartKey }),
      );
      for (const item of page.Items ?? []) yield item;
      ExclusiveStartKey = page.LastEvaluatedKey;
    } while (ExclusiveStartKey !== undefined);
  }

  async #batchWrite(requests: readonly Item[]): Promise<void> {
    for (let start = 0; start < requests.length; start += 25) {
      let batch = requests.slice(start, start + 25);
      for (let attempt = 0; batch.length > 0; attempt += 1) {
        if (attempt >= 8)
          throw new Error(`${batch.length} subscriber-table write(s) stayed unprocessed after 8 attempts`);
        const result = await this.#documents.send(
          new BatchWriteCommand({ RequestItems: { [this.#table]: batch as never } }),
        );
        batch = (result.UnprocessedItems?.[this.#table] as Item[] | undefined) ?? [];
        if (batch.length > 0) await backoff(attempt);
      }
    }
  }
}

const backoff = (attempt: number) =>
  new Promise((resolve) => setTimeout(resolve, Math.min(2000, 50 * 2 ** attempt * Math.random())));

function profileItem(profile: SubscriberProfile): Item {
  return {
    pk: subKey(profile.subscriberId),
    sk: 'profile',
    subscriberId: profile.subscriberId,
    address: profile.address,
    locale: profile.locale,
    createdAt: profile.createdAt,
    suppression: profile.suppression,
    softBounces: profile.softBounces,
  };
}

function toProfile(item: Item): SubscriberProfile {
  const suppression = item.suppression as { reason?: unknown; at?: unknown } | undefined;
  return {
    subscriberId: String(item.subscriberId),
    address: String(item.address),
    locale: typeof item.locale === 'string' ? item.locale : undefined,
    createdAt: Number(item.createdAt),
    suppression:
      suppression === undefined || suppression === null
        ? undefined
        : {
            reason: String(suppression.reason) as NonNullable<SubscriberProfile['suppression']>['reason'],
            at: Number(suppression.at),
          },
    softBounces: Number(item.softBounces ?? 0),
  };
}

function toMembership(item: Item): Membership {
  const optionalNumber = (value: unknown) => (typeof value === 'number' ? value : undefined);
  return {
    subscriberId: String(item.subscriberId),
    audienceId: String(item.audienceId),
    state: String(item.state) as Membership['state'],
    preference: item.preference === 'digest' ? 'digest' : 'immediate',
    pausedUntil: optionalNumber(item.pausedUntil),
    createdAt: Number(item.createdAt),
    confirmedAt: optionalNumber(item.confirmedAt),
    unsubscribedAt: optionalNumber(item.unsubscribedAt),
    source: item.source === 'migrated' ? 'migrated' : 'added',
  };
}

function toRecord(item: Item): SendRecord {
  return {
    subscriberId: String(item.subscriberId),
    messageKey: String(item.messageKey),
    deliveryId: String(item.deliveryId),
    audienceId: String(item.audienceId),
    kind: String(item.kind) as SendRecord['kind'],
    subject: typeof item.subject === 'string' ? item.subject : undefined,
    status: String(item.status) as SendStatus,
    createdAt: Number(item.createdAt),
    sentAt: typeof item.sentAt === 'number' ? item.sentAt : undefined,
    providerMessageId:
      typeof item.providerMessageId === 'string' && item.providerMessageId !== '' ? item.providerMessageId : undefined,
    events: Array.isArray(item.events) ? (item.events as SendEvent[]) : [],
    entryKeys: Array.isArray(item.entryKeys) ? item.entryKeys.filter((key) => typeof key === 'string') : undefined,
  };
}
