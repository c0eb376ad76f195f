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
import { setTimeout as delay } from 'node:timers/promises';
import { BatchWriteCommand, type DynamoDBDocumentClient, PutCommand } from '@aws-sdk/lib-dynamodb';
import { silentLog } from '#core/ports';
import {
  HISTORY_LIMITS,
  type HistoryAction,
  type RuleHistoryStore,
  type RuleVersion,
} from '#core/workbench/rule-history';
import { drainBatch, keyPart, ttlSeconds } from './dynamo-batch.ts';
import { partitionItems } from './dynamo-query.ts';

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
  /** Waits between retries of unprocessed deletes; injected by tests. */
  readonly sleep?: (ms: number) => Promise<void>;
}

/** Rule history in the state table. */
export class DynamoRuleHistory implements RuleHistoryStore {
  readonly #documents: DynamoDBDocumentClient;
  readonly #table: string;
  readonly #sleep: (ms: number) => Promise<void>;

  constructor(options: DynamoRuleHistoryOptions) {
    this.#documents = options.documents;
    this.#table = options.tableName;
    this.#sleep = options.sleep ?? ((ms) => delay(ms));
  }

  get tableName(): string {
    return this.#table;
  }

  async list(ruleId: string, limit: number = HISTORY_LIMITS.versionsPerRule): Promise<RuleVersion[]> {
    const versions: RuleVersion[] = [];
    if (limit <= 0) return versions;
    const items = partitionItems(this.#documents, this.#table, historyPartition(ruleId), { newestFirst: true });
    for await (const item of items) {
      const version = versionOf(item);
      if (version === undefined) continue;
      versions.push(version);
      if (versions.length >= limit) break;
    }
    return versions;
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
    const items = partitionItems(this.#documents, this.#table, historyPartition(ruleId), {
      newestFirst: true,
      keysOnly: true,
    });
    for await (const item of items) {
      seen += 1;
      if (seen > HISTORY_LIMITS.versionsPerRule) keys.push({ pk: String(item.pk), sk: String(item.sk) });
    }
    const context = { table: this.#table, sleep: this.#sleep, log: silentLog };
    for (let start = 0; start < keys.length; start += 25) {
      const requests = keys.slice(start, start + 25).map((Key) => ({ DeleteRequest: { Key } }));
      // What DynamoDB hands back unprocessed (under throttling) is sent again after a backoff.
      await drainBatch(context, 'trimming rule history', requests, async (pending) => {
        const output = await this.#documents.send(
          new BatchWriteCommand({ RequestItems: { [this.#table]: [...pending] } }),
        );
        return (output.UnprocessedItems?.[this.#table] ?? []) as typeof requests;
      });
    }
    return keys.length;
  }
}
