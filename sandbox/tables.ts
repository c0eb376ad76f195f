/**
 * Creates the three tables in the local sandbox (moto server) the way the CDK stack defines them:
 * keys from functions/aws/table-layout.ts, on-demand billing, TTL on the state table; and, for a
 * sharded sandbox, the publisher's work queue with its dead-letter queue and redrive policy.
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
import { CreateQueueCommand, GetQueueAttributesCommand, type SQSClient } from '@aws-sdk/client-sqs';
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

/** The publisher's queues of a sharded sandbox (the stack's ShardedPublishing construct, locally). */
export interface WorkQueues {
  readonly queueUrl: string;
  readonly queueArn: string;
  readonly deadLetterQueueUrl: string;
  readonly deadLetterQueueArn: string;
}

/** As the stack sets them: a work item SQS delivered this often without success goes to the DLQ. */
export const workMaxReceiveCount = 3;
/** The stack's visibility timeout: 6 × the publisher's 60 s timeout. */
export const workVisibilityTimeoutSeconds = 6 * 60;

/**
 * Creates (or reuses) the work queue `<prefix>work` and its dead-letter queue `<prefix>work-dlq`
 * in moto, with the stack's redrive policy (maxReceiveCount {@link workMaxReceiveCount}) and
 * visibility timeout. The dead-letter queue keeps messages 14 days, as the stack's does.
 */
export async function createWorkQueues(sqs: SQSClient, prefix: string): Promise<WorkQueues> {
  const created = async (name: string, attributes: Record<string, string>) => {
    const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: name, Attributes: attributes }));
    if (!QueueUrl) throw new Error(`moto did not return a URL for queue ${name}`);
    const { Attributes } = await sqs.send(new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ['QueueArn'] }));
    const arn = Attributes?.QueueArn;
    if (!arn) throw new Error(`moto did not return an ARN for queue ${name}`);
    return { url: QueueUrl, arn };
  };
  const deadLetter = await created(`${prefix}work-dlq`, { MessageRetentionPeriod: String(14 * 24 * 3600) });
  const work = await created(`${prefix}work`, {
    VisibilityTimeout: String(workVisibilityTimeoutSeconds),
    RedrivePolicy: JSON.stringify({ deadLetterTargetArn: deadLetter.arn, maxReceiveCount: workMaxReceiveCount }),
  });
  return {
    queueUrl: work.url,
    queueArn: work.arn,
    deadLetterQueueUrl: deadLetter.url,
    deadLetterQueueArn: deadLetter.arn,
  };
}
