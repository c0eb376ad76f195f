/**
 * What the project knows about an audience's subscribers, kept so `news-alerts audiences repair`
 * can subscribe them again when the audience's topic was deleted (SNS deletes its subscriptions
 * with it). One state-table partition per audience, `subscribers#<audienceId>`, one item per
 * subscription the CLI or the console made: protocol, endpoint (an email address, phone number,
 * HTTPS URL or queue ARN; for Slack none: the webhook URL stays in Secrets Manager), raw delivery,
 * who added it and when. Removed with `subscriptions remove`. No TTL: kept while subscribed.
 *
 * Endpoints are personal data and HTTPS URLs may carry credentials: they are stored (encrypted at
 * rest like the rest of the table) and never printed whole (cli/subscriptions.ts masks them).
 */
import { createHash } from 'node:crypto';
import { DeleteCommand, type DynamoDBDocumentClient, PutCommand } from '@aws-sdk/lib-dynamodb';
import { keyPart } from './dynamo-batch.ts';
import { partitionItems } from './dynamo-query.ts';

/** A channel the project can subscribe again. `slack` is the relay (or the sandbox's stand-in queue). */
export type RecordedProtocol = 'email' | 'sms' | 'https' | 'sqs' | 'slack';

/** One subscription as recorded. */
export interface SubscriberRecord {
  readonly audienceId: string;
  readonly protocol: RecordedProtocol;
  /** Absent for `slack`. */
  readonly endpoint?: string | undefined;
  readonly raw?: boolean | undefined;
  readonly addedAt: number;
  readonly addedBy: string;
}

const partition = (audienceId: string): string => `subscribers#${keyPart(audienceId)}`;
const sortKey = (protocol: RecordedProtocol, endpoint: string | undefined): string =>
  `${protocol}#${createHash('sha256')
    .update(endpoint ?? '')
    .digest('hex')
    .slice(0, 32)}`;

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
    await this.#documents.send(
      new PutCommand({
        TableName: this.#table,
        Item: {
          pk: partition(record.audienceId),
          sk: sortKey(record.protocol, record.endpoint),
          audienceId: record.audienceId,
          protocol: record.protocol,
          ...(record.endpoint === undefined ? {} : { endpoint: record.endpoint }),
          ...(record.raw === undefined ? {} : { raw: record.raw }),
          addedAt: record.addedAt,
          addedBy: record.addedBy,
        },
      }),
    );
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

  /** Every recorded subscription of an audience. */
  async list(audienceId: string): Promise<SubscriberRecord[]> {
    const records: SubscriberRecord[] = [];
    for await (const item of partitionItems(this.#documents, this.#table, partition(audienceId))) {
      if (!protocols.includes(String(item.protocol))) continue;
      records.push({
        audienceId,
        protocol: item.protocol as RecordedProtocol,
        endpoint: typeof item.endpoint === 'string' ? item.endpoint : undefined,
        raw: item.raw === true ? true : undefined,
        addedAt: typeof item.addedAt === 'number' ? item.addedAt : 0,
        addedBy: typeof item.addedBy === 'string' ? item.addedBy : 'unknown',
      });
    }
    return records;
  }
}
