/**
 * The DynamoDB adapter of {@link RuleSource}: reads the ops-edited rules and audiences tables and
 * validates every item with the model's schemas, so one item saved wrongly in the console is
 * skipped and reported while every other rule still runs.
 */
import { ScanCommand } from '@aws-sdk/client-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { NewsAlertsError } from '#core/errors';
import { buildRuleSet, type RuleSet } from '#core/model';
import type { Log, RuleSource } from '#core/ports';
import { logger } from '#shared/powertools';

/** A rules or audiences table could not be read at all (missing table, no permission...). */
export class RuleSourceError extends NewsAlertsError {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'RuleSourceError';
  }
}

/**
 * Every item of `tableName` (all pages, strongly consistent) as plain objects: lists as arrays,
 * string sets as `Set`s, numbers as JS numbers.
 *
 * The raw Scan is converted item by item instead of through the document client because the
 * document client fails the whole page on one number it cannot represent (a console typo such as
 * `1.5e30` in `dailyBudget`); here every number becomes a JS number and the schema judges it, so
 * the bad item is rejected with a reason and the others still load. Numbers beyond 2^53 lose
 * precision, which no rule or audience attribute needs.
 */
export async function scanItems(
  documents: DynamoDBDocumentClient,
  tableName: string,
): Promise<Record<string, unknown>[]> {
  const items: Record<string, unknown>[] = [];
  let startKey: ScanCommand['input']['ExclusiveStartKey'];
  do {
    const output = await documents.send(
      // Ops edits made a second ago must show up in the next run or preview.
      new ScanCommand({ TableName: tableName, ConsistentRead: true, ExclusiveStartKey: startKey }),
    );
    for (const item of output.Items ?? []) {
      items.push(unmarshall(item, { wrapNumbers: (value: string) => Number(value) }));
    }
    startKey = output.LastEvaluatedKey;
  } while (startKey !== undefined);
  return items;
}

export interface DynamoRuleSourceOptions {
  readonly documents: DynamoDBDocumentClient;
  readonly rulesTableName: string;
  readonly audiencesTableName: string;
  /** Receives one warning per rejected item. Default: the shared Powertools logger. */
  readonly log?: Log;
}

/** Loads and validates rules and audiences from their two DynamoDB tables. */
export class DynamoRuleSource implements RuleSource {
  readonly #documents: DynamoDBDocumentClient;
  readonly #tableNames: { readonly rules: string; readonly audiences: string };
  readonly #log: Log;

  constructor(options: DynamoRuleSourceOptions) {
    this.#documents = options.documents;
    this.#tableNames = { rules: options.rulesTableName, audiences: options.audiencesTableName };
    this.#log = options.log ?? logger;
  }

  async load(): Promise<RuleSet> {
    const [ruleItems, audienceItems] = await Promise.all([this.#scan('rules'), this.#scan('audiences')]);
    const ruleSet = buildRuleSet(ruleItems, audienceItems);
    for (const rejected of ruleSet.rejected) {
      this.#log.warn('skipped an invalid item', {
        table: rejected.table,
        tableName: this.#tableNames[rejected.table],
        key: rejected.key,
        reason: rejected.reason,
      });
    }
    return ruleSet;
  }

  async #scan(table: 'rules' | 'audiences'): Promise<Record<string, unknown>[]> {
    const tableName = this.#tableNames[table];
    try {
      return await scanItems(this.#documents, tableName);
    } catch (error) {
      throw new RuleSourceError(`could not read the ${table} table "${tableName}"`, { cause: error });
    }
  }
}
