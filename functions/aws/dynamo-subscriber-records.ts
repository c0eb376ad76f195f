/**
 * What the project knows about an audience's subscribers, kept so `news-alerts audiences repair`
 * can subscribe them again when the audience's topic was deleted (SNS deletes its subscriptions
 * with it). One state-table partition per audience, `subscribers#<audienceId>`, one item per
 * subscription the CLI or the console made: protocol, endpoint, raw delivery, who added it and
 * when. Removed with `subscriptions remove`. No TTL while subscribed; when `audiences delete
 * --delete-topic` ends every subscription, the audience's records are kept
 * {@link DELETED_AUDIENCE_RECORD_DAYS} days for a restore ({@link expireAudience}), then
 * DynamoDB's TTL deletes them, unless a repair subscribes them again first ({@link keep}); one
 * past its expiry is no longer listed.
 *
 * The endpoint is an email address, a phone number or a queue ARN. Not a URL: an HTTPS endpoint
 * is a webhook URL, a credential, and no table holds one in plaintext. Its record keeps the
 * endpoint's digest (`endpointRef`, also its sort key) and the URL as a person may see it
 * (`shown`, masked); the URL itself is in the CLI's endpoint store (cli/endpoint-store.ts). Slack
 * records hold no endpoint either: the webhook URL is in the webhook store. Records of earlier
 * releases may still hold an HTTPS URL in `endpoint`; `subscriptions migrate-webhooks` moves them.
 *
 * Endpoints are personal data: stored (encrypted at rest like the rest of the table) and never
 * logged; HTTPS URLs are never printed whole (cli/subscriptions.ts masks them).
 */
import { createHash } from 'node:crypto';
import {
  DeleteCommand,
  type DynamoDBDocumentClient,
  PutCommand,
  ScanCommand,
  TransactWriteCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import pLimit from 'p-limit';
import { keyPart } from './dynamo-batch.ts';
import { partitionItems } from './dynamo-query.ts';

/** A channel the project can subscribe again. `slack` is the relay (or the sandbox's stand-in queue). */
export type RecordedProtocol = 'email' | 'sms' | 'https' | 'sqs' | 'slack';

/** One subscription as recorded. */
export interface SubscriberRecord {
  readonly audienceId: string;
  readonly protocol: RecordedProtocol;
  /** Absent for `slack`, and for `https` when the URL is in the endpoint store (`endpointRef`). */
  readonly endpoint?: string | undefined;
  /** `https`: the endpoint's digest ({@link endpointDigest}); the URL is in the endpoint store under it. */
  readonly endpointRef?: string | undefined;
  /** With `endpointRef`: the URL as a person may see it (masked: scheme and host). */
  readonly shown?: string | undefined;
  readonly raw?: boolean | undefined;
  readonly addedAt: number;
  readonly addedBy: string;
  /** When DynamoDB's TTL deletes the record (epoch seconds): set once its audience was deleted. */
  readonly expiresAt?: number | undefined;
  /** The key it is stored under, as read (a record written by hand may sit under another). */
  readonly storedKey?: { readonly pk: string; readonly sk: string } | undefined;
}

/**
 * Days the subscriber records of an audience deleted with its topic are kept: long enough to undo
 * a mistake (`audiences put` the printed document, then `audiences repair`), and no longer, since
 * the addresses and numbers they hold are personal data kept for nobody once nothing is subscribed.
 */
export const DELETED_AUDIENCE_RECORD_DAYS = 30;

const partition = (audienceId: string): string => `subscribers#${keyPart(audienceId)}`;

/** An endpoint's digest: the key of its record, and of its URL in the endpoint store (128 bits of SHA-256). */
export const endpointDigest = (endpoint: string | undefined): string =>
  createHash('sha256')
    .update(endpoint ?? '')
    .digest('hex')
    .slice(0, 32);

const digestPattern = /^[0-9a-f]{32}$/;
const sortKey = (protocol: RecordedProtocol, endpoint: string | undefined): string =>
  `${protocol}#${endpointDigest(endpoint)}`;

/** A record's sort key: by its endpoint's digest, or the reference an HTTPS record keeps. */
const recordSortKey = (record: Pick<SubscriberRecord, 'protocol' | 'endpoint' | 'endpointRef'>): string =>
  record.endpointRef === undefined
    ? sortKey(record.protocol, record.endpoint)
    : `${record.protocol}#${record.endpointRef}`;

const protocols: readonly string[] = ['email', 'sms', 'https', 'sqs', 'slack'];

export interface DynamoSubscriberRecordsOptions {
  readonly documents: DynamoDBDocumentClient;
  readonly tableName: string;
}

/** Subscriber records in the state table. */
export class DynamoSubscriberRecords {
  readonly #documents: DynamoDBDocumentClient;
  readonly #table: string;

  constructor(options: DynamoSubscriberRecordsOptions) {
    this.#documents = options.documents;
    this.#table = options.tableName;
  }

  /** Records (or refreshes) one subscription. */
  async add(record: SubscriberRecord): Promise<void> {
    if (record.endpointRef !== undefined && !digestPattern.test(record.endpointRef)) {
      throw new TypeError('endpointRef must be an endpoint digest (endpointDigest)');
    }
    // No table holds a webhook URL in plaintext: an HTTPS record refers to the endpoint store.
    if (record.protocol === 'https' && record.endpoint !== undefined) {
      throw new TypeError('an https record keeps endpointRef and shown, not the URL (cli/endpoint-store.ts)');
    }
    await this.#documents.send(
      new PutCommand({
        TableName: this.#table,
        Item: {
          pk: partition(record.audienceId),
          sk: recordSortKey(record),
          audienceId: record.audienceId,
          protocol: record.protocol,
          ...(record.endpoint === undefined ? {} : { endpoint: record.endpoint }),
          ...(record.endpointRef === undefined ? {} : { endpointRef: record.endpointRef }),
          ...(record.shown === undefined ? {} : { shown: record.shown }),
          ...(record.raw === undefined ? {} : { raw: record.raw }),
          addedAt: record.addedAt,
          addedBy: record.addedBy,
        },
      }),
    );
  }

  /**
   * Replaces a record of an earlier release that holds an HTTPS URL in `endpoint` by one that
   * refers to it (`endpointRef`, `shown`), once the URL is in the endpoint store. Only while the
   * record still holds that URL: false (nothing written) when it was removed or changed meanwhile.
   */
  async replaceEndpointByRef(record: ClearRecord, shown: string): Promise<boolean> {
    const { endpoint, storedKey, ...rest } = record;
    const item = {
      pk: partition(record.audienceId),
      sk: sortKey(record.protocol, endpoint),
      ...Object.fromEntries(Object.entries(rest).filter(([, value]) => value !== undefined)),
      endpointRef: endpointDigest(endpoint),
      shown,
    };
    const stillHolds = {
      ConditionExpression: 'endpoint = :endpoint',
      ExpressionAttributeValues: { ':endpoint': endpoint },
    };
    try {
      if (storedKey.pk === item.pk && storedKey.sk === item.sk) {
        await this.#documents.send(new PutCommand({ TableName: this.#table, Item: item, ...stillHolds }));
      } else {
        // Written by hand under another key: moved to the key `remove` and repair use, in one step.
        await this.#documents.send(
          new TransactWriteCommand({
            TransactItems: [
              { Delete: { TableName: this.#table, Key: storedKey, ...stillHolds } },
              { Put: { TableName: this.#table, Item: item } },
            ],
          }),
        );
      }
      return true;
    } catch (error) {
      if (
        error instanceof Error &&
        (error.name === 'ConditionalCheckFailedException' || error.name === 'TransactionCanceledException')
      ) {
        return false;
      }
      throw error;
    }
  }

  /** Forgets one subscription (nothing when it was never recorded). */
  async remove(audienceId: string, protocol: RecordedProtocol, endpoint: string | undefined): Promise<void> {
    await this.#documents.send(
      new DeleteCommand({
        TableName: this.#table,
        Key: { pk: partition(audienceId), sk: sortKey(protocol, endpoint) },
      }),
    );
  }

  /**
   * Marks every record of an audience whose topic (and so every subscription) was deleted to be
   * deleted by DynamoDB's TTL {@link DELETED_AUDIENCE_RECORD_DAYS} days after `now`; returns how
   * many, and when (epoch seconds). A record removed meanwhile is not written again.
   */
  async expireAudience(audienceId: string, now: number): Promise<{ records: number; expiresAt: number }> {
    const expiresAt = Math.floor(now / 1000) + DELETED_AUDIENCE_RECORD_DAYS * 86_400;
    const keys: { pk: string; sk: string }[] = [];
    for await (const item of partitionItems(this.#documents, this.#table, partition(audienceId))) {
      keys.push({ pk: String(item.pk), sk: String(item.sk) });
    }
    const limit = pLimit(8);
    const marked = await Promise.all(
      keys.map((key) =>
        limit(async () => {
          try {
            await this.#documents.send(
              new UpdateCommand({
                TableName: this.#table,
                Key: key,
                UpdateExpression: 'SET expiresAt = :expiresAt',
                ConditionExpression: 'attribute_exists(pk)',
                ExpressionAttributeValues: { ':expiresAt': expiresAt },
              }),
            );
            return true;
          } catch (error) {
            if ((error as Error).name !== 'ConditionalCheckFailedException') throw error;
            return false;
          }
        }),
      ),
    );
    return { records: marked.filter(Boolean).length, expiresAt };
  }

  /**
   * Keeps a record again (a repair found it subscribed and confirmed): its deletion is called off.
   * False when it was removed meanwhile.
   */
  async keep(record: SubscriberRecord): Promise<boolean> {
    try {
      await this.#documents.send(
        new UpdateCommand({
          TableName: this.#table,
          Key: record.storedKey ?? { pk: partition(record.audienceId), sk: recordSortKey(record) },
          UpdateExpression: 'REMOVE expiresAt',
          ConditionExpression: 'attribute_exists(pk)',
        }),
      );
      return true;
    } catch (error) {
      if ((error as Error).name !== 'ConditionalCheckFailedException') throw error;
      return false;
    }
  }

  /**
   * Every recorded subscription of an audience. With `now`, a record past its expiry is left out:
   * it is deleted as far as anyone is concerned, though DynamoDB's TTL may take a day or two more.
   */
  async list(audienceId: string, now?: number): Promise<SubscriberRecord[]> {
    const records: SubscriberRecord[] = [];
    for await (const item of partitionItems(this.#documents, this.#table, partition(audienceId))) {
      const record = recordOf(item, audienceId);
      if (record === undefined) continue;
      if (now !== undefined && record.expiresAt !== undefined && record.expiresAt * 1000 <= now) continue;
      records.push(record);
    }
    return records;
  }

  /**
   * The records of earlier releases that hold an HTTPS URL in clear, of every audience, deleted
   * ones included (a restored audience's repair reads them): one filtered scan of the state table,
   * for `subscriptions migrate-webhooks`.
   */
  async withUrlsInClear(): Promise<ClearRecord[]> {
    const records: ClearRecord[] = [];
    let startKey: Record<string, unknown> | undefined;
    do {
      const output = await this.#documents.send(
        new ScanCommand({
          TableName: this.#table,
          FilterExpression:
            'begins_with(#pk, :partition) AND #protocol = :https AND attribute_type(#endpoint, :string)',
          ExpressionAttributeNames: { '#pk': 'pk', '#protocol': 'protocol', '#endpoint': 'endpoint' },
          ExpressionAttributeValues: { ':partition': 'subscribers#', ':https': 'https', ':string': 'S' },
          ConsistentRead: true,
          ExclusiveStartKey: startKey,
        }),
      );
      for (const item of output.Items ?? []) {
        // The audience from the item, else from its partition key (verbatim unless it was hashed).
        const fromKey = String(item.pk).slice('subscribers#'.length);
        const audienceId =
          typeof item.audienceId === 'string' ? item.audienceId : fromKey.startsWith('#') ? undefined : fromKey;
        const record = audienceId === undefined ? undefined : recordOf(item, audienceId);
        if (record?.endpoint !== undefined) {
          records.push({
            ...record,
            endpoint: record.endpoint,
            storedKey: { pk: String(item.pk), sk: String(item.sk) },
          });
        }
      }
      startKey = output.LastEvaluatedKey;
    } while (startKey !== undefined);
    return records;
  }
}

/** A record holding an HTTPS URL in clear, with the key it is stored under. */
export type ClearRecord = SubscriberRecord & {
  readonly endpoint: string;
  readonly storedKey: { readonly pk: string; readonly sk: string };
};

/** A record as stored, read leniently (the table is edited by hand too); undefined for an unknown protocol. */
function recordOf(item: Record<string, unknown>, audienceId: string): SubscriberRecord | undefined {
  if (!protocols.includes(String(item.protocol))) return undefined;
  return {
    audienceId,
    protocol: item.protocol as RecordedProtocol,
    endpoint: typeof item.endpoint === 'string' ? item.endpoint : undefined,
    // A hand-written ref that is not a digest is dropped: repair then says the URL is unknown.
    endpointRef:
      typeof item.endpointRef === 'string' && digestPattern.test(item.endpointRef) ? item.endpointRef : undefined,
    shown: typeof item.shown === 'string' ? item.shown : undefined,
    raw: item.raw === true ? true : undefined,
    addedAt: typeof item.addedAt === 'number' ? item.addedAt : 0,
    addedBy: typeof item.addedBy === 'string' ? item.addedBy : 'unknown',
    expiresAt: typeof item.expiresAt === 'number' ? item.expiresAt : undefined,
    storedKey: { pk: String(item.pk), sk: String(item.sk) },
  };
}
