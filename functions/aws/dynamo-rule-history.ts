/**
 * Rule history in the state table (functions/core/workbench/rule-history.ts): one partition per
 * rule, `rule-history#<ruleId>`, one item per version, sort key `v#<version>#<edit>` (zero-padded,
 * so a query newest first is a reverse range read). The rule as it was is kept as JSON text (a
 * string set, a number DynamoDB holds, a nested map all come back as written), with a TTL of
 * {@link HISTORY_LIMITS}.retentionDays.
 *
 * Writers add {@link historyPut} to the transaction that writes the rule, so a version is never
 * recorded without its rule nor the other way round; {@link DynamoRuleHistory.trim} keeps the
 * newest {@link HISTORY_LIMITS}.versionsPerRule afterwards.
 */
import { BatchWriteCommand, type DynamoDBDocumentClient, PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import {
  HISTORY_LIMITS,
  type HistoryAction,
  type RuleHistoryStore,
  type RuleVersion,
} from '#core/workbench/rule-history';
import { keyPart, ttlSeconds } from './dynamo-batch.ts';

/** The partition of one rule's history. */
export const historyPartition = (ruleId: string): string => `rule-history#${keyPart(ruleId)}`;

const sortKey = (entry: Pick<RuleVersion, 'version' | 'edit'>): string =>
  `v#${String(entry.version).padStart(9, '0')}#${String(entry.edit).padStart(4, '0')}`;

const actions: readonly HistoryAction[] = ['created', 'updated', 'deleted', 'restored', 'outside-edit'];

/** The state-table item of one version. */
export function historyItem(entry: RuleVersion): Record<string, unknown> {
  return {
    pk: historyPartition(entry.ruleId),
    sk: sortKey(entry),
    ruleId: entry.ruleId,
    version: entry.version,
    edit: entry.edit,
    at: entry.at,
    actor: entry.actor,
    action: entry.action,
    ...(entry.item === undefined ? {} : { item: JSON.stringify(entry.item, setsAsLists) }),
    ...(entry.restoredFrom === undefined ? {} : { restoredFrom: entry.restoredFrom }),
    expiresAt: ttlSeconds(entry.at, HISTORY_LIMITS.retentionDays),
  };
}

/** JSON of an item: a string set (`SS`) as a sorted list, as the rule schema reads both. */
function setsAsLists(_key: string, value: unknown): unknown {
  return value instanceof Set ? [...value].map(String).sort() : value;
}

/** A transaction entry that records `entry` (put it in the rule's own transaction). */
export const historyPut = (tableName: string, entry: RuleVersion) => ({
  Put: { TableName: tableName, Item: historyItem(entry) },
});

/** A stored version; undefined for an item that is not one (damaged by hand: left out). */
function versionOf(item: Record<string, unknown>): RuleVersion | undefined {
  const { ruleId, version, edit, at, actor, action } = item;
  if (typeof ruleId !== 'string' || typeof version !== 'number' || typeof edit !== 'number') return undefined;
  if (typeof at !== 'number' || typeof actor !== 'string' || !actions.includes(action as HistoryAction)) {
    return undefined;
  }
  let parsed: Record<string, unknown> | undefined;
  if (typeof item.item === 'string') {
    try {
      parsed = JSON.parse(item.item) as Record<string, unknown>;
    } catch {
      return undefined;
    }
  }
  return {
    ruleId,
    version,
    edit,
    at,
    actor,
    action: action as HistoryAction,
    item: parsed,
    restoredFrom: typeof item.restoredFrom === 'string' ? item.restoredFrom : undefined,
  };
}

export interface DynamoRuleHistoryOptions {
  readonly documents: DynamoDBDocumentClient;
  readonly tableName: string;
}

/** Rule history in the state table. */
export class DynamoRuleHistory implements RuleHistoryStore {
  readonly #documents: DynamoDBDocumentClient;
  readonly #table: string;

  constructor(options: DynamoRuleHistoryOptions) {
    this.#documents = options.documents;
    this.#table = options.tableName;
  }

  get tableName(): string {
    return this.#table;
  }

  async list(ruleId: string, limit: number = HISTORY_LIMITS.versionsPerRule): Promise<RuleVersion[]> {
    const versions: RuleVersion[] = [];
    let startKey: Record<string, unknown> | undefined;
    do {
      const output = await this.#documents.send(
        new QueryCommand({
          TableName: this.#table,
          KeyConditionExpression: '#pk = :pk',
          ExpressionAttributeNames: { '#pk': 'pk' },
          ExpressionAttributeValues: { ':pk': historyPartition(ruleId) },
          ScanIndexForward: false,
          ConsistentRead: true,
          ExclusiveStartKey: startKey,
        }),
      );
      for (const item of output.Items ?? []) {
        const version = versionOf(item);
        if (version !== undefined) versions.push(version);
      }
      startKey = output.LastEvaluatedKey;
    } while (startKey !== undefined && versions.length < limit);
    return versions.slice(0, limit);
  }

  async record(entries: readonly RuleVersion[]): Promise<void> {
    for (const entry of entries) {
      await this.#documents.send(new PutCommand({ TableName: this.#table, Item: historyItem(entry) }));
    }
    for (const ruleId of new Set(entries.map((entry) => entry.ruleId))) await this.trim(ruleId);
  }

  /** Deletes the versions of a rule beyond the newest {@link HISTORY_LIMITS}.versionsPerRule. */
  async trim(ruleId: string): Promise<number> {
    const keys: { pk: string; sk: string }[] = [];
    let seen = 0;
    let startKey: Record<string, unknown> | undefined;
    do {
      const output = await this.#documents.send(
        new QueryCommand({
          TableName: this.#table,
          KeyConditionExpression: '#pk = :pk',
          ExpressionAttributeNames: { '#pk': 'pk', '#sk': 'sk' },
          ExpressionAttributeValues: { ':pk': historyPartition(ruleId) },
          ProjectionExpression: '#pk, #sk',
          ScanIndexForward: false,
          ConsistentRead: true,
          ExclusiveStartKey: startKey,
        }),
      );
      for (const item of output.Items ?? []) {
        seen += 1;
        if (seen > HISTORY_LIMITS.versionsPerRule) keys.push({ pk: String(item.pk), sk: String(item.sk) });
      }
      startKey = output.LastEvaluatedKey;
    } while (startKey !== undefined);
    for (let start = 0; start < keys.length; start += 25) {
      let pending = keys.slice(start, start + 25).map((Key) => ({ DeleteRequest: { Key } }));
      while (pending.length > 0) {
        const output = await this.#documents.send(new BatchWriteCommand({ RequestItems: { [this.#table]: pending } }));
        pending = (output.UnprocessedItems?.[this.#table] ?? []) as typeof pending;
      }
    }
    return keys.length;
  }
}
