/**
 * Creates the three tables in the local sandbox (moto server) the way the CDK stack defines them:
 * keys from functions/aws/table-layout.ts, on-demand billing, TTL on the state table.
 */
import {
  type AttributeDefinition,
  CreateTableCommand,
  DescribeTableCommand,
  DescribeTimeToLiveCommand,
  type DynamoDBClient,
  type KeySchemaElement,
  ResourceInUseException,
  UpdateTimeToLiveCommand,
  waitUntilTableExists,
} from '@aws-sdk/client-dynamodb';
import { audiencesTableKey, rulesTableKey, stateTableKey, type TableNames } from '#aws/table-layout';

const tableNamePattern = /^[A-Za-z0-9_.-]{3,255}$/;

/** The sandbox's table names under `prefix` (e.g. `news-alerts-` → `news-alerts-rules`). */
export function tableNamesFor(prefix: string): TableNames {
  const names = { rules: `${prefix}rules`, audiences: `${prefix}audiences`, state: `${prefix}state` };
  for (const name of Object.values(names)) {
    if (!tableNamePattern.test(name)) {
      throw new Error(
        `table prefix "${prefix}" gives the invalid DynamoDB table name "${name}" (allowed: A-Z a-z 0-9 _ . -)`,
      );
    }
  }
  return names;
}

interface TableKey {
  readonly partitionKey: string;
  readonly sortKey?: string;
}

function keyDefinition(key: TableKey): { KeySchema: KeySchemaElement[]; AttributeDefinitions: AttributeDefinition[] } {
  const KeySchema: KeySchemaElement[] = [{ AttributeName: key.partitionKey, KeyType: 'HASH' }];
  const AttributeDefinitions: AttributeDefinition[] = [{ AttributeName: key.partitionKey, AttributeType: 'S' }];
  if (key.sortKey !== undefined) {
    KeySchema.push({ AttributeName: key.sortKey, KeyType: 'RANGE' });
    AttributeDefinitions.push({ AttributeName: key.sortKey, AttributeType: 'S' });
  }
  return { KeySchema, AttributeDefinitions };
}

async function createTable(dynamo: DynamoDBClient, name: string, key: TableKey): Promise<void> {
  try {
    await dynamo.send(
      new CreateTableCommand({ TableName: name, BillingMode: 'PAY_PER_REQUEST', ...keyDefinition(key) }),
    );
  } catch (error) {
    // Already there from an earlier sandbox start: reuse it.
    if (!(error instanceof ResourceInUseException)) throw error;
  }
  await waitUntilTableExists({ client: dynamo, maxWaitTime: 120, minDelay: 1, maxDelay: 5 }, { TableName: name });
  // A leftover table with another key schema would fail later in confusing ways: say so now.
  const { Table } = await dynamo.send(new DescribeTableCommand({ TableName: name }));
  const actual = JSON.stringify((Table?.KeySchema ?? []).map((k) => [k.AttributeName, k.KeyType]));
  const wanted = JSON.stringify(keyDefinition(key).KeySchema.map((k) => [k.AttributeName, k.KeyType]));
  if (actual !== wanted) {
    throw new Error(
      `table "${name}" exists with key schema ${actual}, expected ${wanted}; delete it or use another prefix`,
    );
  }
}

async function enableTimeToLive(dynamo: DynamoDBClient, name: string, attribute: string): Promise<void> {
  const { TimeToLiveDescription } = await dynamo.send(new DescribeTimeToLiveCommand({ TableName: name }));
  const status = TimeToLiveDescription?.TimeToLiveStatus;
  // Enabling it twice is a ValidationException.
  if (status === 'ENABLED' || status === 'ENABLING') return;
  await dynamo.send(
    new UpdateTimeToLiveCommand({
      TableName: name,
      TimeToLiveSpecification: { AttributeName: attribute, Enabled: true },
    }),
  );
}

/** Creates the rules, audiences and state tables unless they exist, and waits until all are ACTIVE. */
export async function createTables(dynamo: DynamoDBClient, names: TableNames): Promise<void> {
  await Promise.all([
    createTable(dynamo, names.rules, rulesTableKey),
    createTable(dynamo, names.audiences, audiencesTableKey),
    createTable(dynamo, names.state, stateTableKey),
  ]);
  await enableTimeToLive(dynamo, names.state, stateTableKey.timeToLiveAttribute);
}
