/**
 * The alert run's composition root in each publish mode: single mode wires no queue and needs no
 * SQS client (what the Lambda handler relies on to skip loading one); sharded mode wires the SQS
 * work queue and the DynamoDB dispatch store on the state table. The clients are real SDK clients
 * that are never called: wiring makes no requests.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { SNSClient } from '@aws-sdk/client-sns';
import { SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { afterAll, describe, expect, it } from 'vitest';
import { loadAlertRunConfig } from '#alert-run/config';
import { type AlertRunClients, createAlertRunDependencies } from '#alert-run/wiring';
import { DynamoDispatchStore } from '#aws/dynamo-dispatch-store';
import { SqsWorkQueue } from '#aws/sqs-work-queue';
import { ConfigError } from '#core/errors';
import type { Log } from '#core/ports';

const environment = {
  NEWS_API_BASE_URL: 'https://news.example.com/v1',
  NEWS_API_KEY_SECRET_ID: 'news-alerts/api-key',
  RULES_TABLE_NAME: 'rules',
  AUDIENCES_TABLE_NAME: 'audiences',
  STATE_TABLE_NAME: 'state',
};
const sharded = {
  ...environment,
  PUBLISH_MODE: 'sharded',
  WORK_QUEUE_URL: 'https://sqs.us-east-1.amazonaws.com/123456789012/work',
};

const aws = { region: 'us-east-1', credentials: { accessKeyId: 'test', secretAccessKey: 'test' } };
const dynamo = new DynamoDBClient(aws);
const clients: AlertRunClients = {
  documents: DynamoDBDocumentClient.from(dynamo),
  sns: new SNSClient(aws),
  secrets: new SecretsManagerClient(aws),
};
const sqs = new SQSClient(aws);
const log: Log = { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} };

afterAll(() => {
  for (const client of [dynamo, clients.sns, clients.secrets, sqs]) client.destroy();
});

describe('alert run wiring by publish mode', () => {
  it('publishes itself in single mode: no sharded dependency, no SQS client needed', () => {
    const wiring = createAlertRunDependencies(loadAlertRunConfig(environment), clients, log);
    expect(wiring.sharded).toBeUndefined();
  });

  it('ignores an SQS client in single mode', () => {
    const wiring = createAlertRunDependencies(loadAlertRunConfig(environment), { ...clients, sqs }, log);
    expect(wiring.sharded).toBeUndefined();
  });

  it('queues on SQS and counts in the state table in sharded mode', () => {
    const wiring = createAlertRunDependencies(loadAlertRunConfig(sharded), { ...clients, sqs }, log);
    expect(wiring.sharded?.queue).toBeInstanceOf(SqsWorkQueue);
    expect(wiring.sharded?.dispatches).toBeInstanceOf(DynamoDispatchStore);
  });

  it('refuses sharded mode without an SQS client instead of publishing in single mode', () => {
    expect(() => createAlertRunDependencies(loadAlertRunConfig(sharded), clients, log)).toThrow(ConfigError);
  });
});
