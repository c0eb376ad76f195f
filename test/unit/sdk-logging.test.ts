/**
 * Both composition roots take the SDK's logger middleware off the clients they are given: the
 * project never gives the SDK a logger, and the middleware would redact every request and
 * response through its schema for the no-op logger to drop. The clients are real SDK clients that
 * are never called.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { SNSClient } from '@aws-sdk/client-sns';
import { SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { afterEach, describe, expect, it } from 'vitest';
import { loadAlertRunConfig } from '#alert-run/config';
import { createAlertRunDependencies } from '#alert-run/wiring';
import type { Log } from '#core/ports';
import { SDK_LOGGER_MIDDLEWARE } from '#shared/sdk-logging';
import { loadPublisherConfig } from '../../functions/publisher/config.ts';
import { createPublisherDependencies } from '../../functions/publisher/wiring.ts';

const aws = { region: 'us-east-1', credentials: { accessKeyId: 'test', secretAccessKey: 'test' } };
const log: Log = { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} };
const made: { destroy(): void }[] = [];
const client = <T extends { destroy(): void }>(value: T): T => {
  made.push(value);
  return value;
};
afterEach(() => {
  for (const value of made.splice(0)) value.destroy();
});

/** Whether a client's stack still has the SDK's logger middleware. */
const logs = (value: { middlewareStack: { identify(): string[] } }) =>
  value.middlewareStack.identify().some((entry) => entry.startsWith(`${SDK_LOGGER_MIDDLEWARE} `));

describe("the SDK's logger middleware", () => {
  it('is on a new client (so the checks below can fail)', () => {
    expect(logs(client(new SNSClient(aws)))).toBe(true);
  });

  it('is off every client the alert run is wired with, in both publish modes', () => {
    const dynamo = client(new DynamoDBClient(aws));
    const clients = {
      documents: DynamoDBDocumentClient.from(dynamo),
      sns: client(new SNSClient(aws)),
      secrets: client(new SecretsManagerClient(aws)),
      sqs: client(new SQSClient(aws)),
    };
    createAlertRunDependencies(
      loadAlertRunConfig({
        NEWS_API_BASE_URL: 'https://news.example.com/v1',
        NEWS_API_KEY_SECRET_ID: 'news-alerts/api-key',
        RULES_TABLE_NAME: 'rules',
        AUDIENCES_TABLE_NAME: 'audiences',
        STATE_TABLE_NAME: 'state',
        PUBLISH_MODE: 'sharded',
        WORK_QUEUE_URL: 'https://sqs.us-east-1.amazonaws.com/123456789012/work',
      }),
      clients,
      log,
    );
    for (const value of [dynamo, clients.documents, clients.sns, clients.secrets, clients.sqs]) {
      expect(logs(value)).toBe(false);
    }
  });

  it('is off every client the publisher is wired with', () => {
    const dynamo = client(new DynamoDBClient(aws));
    const clients = { dynamo, documents: DynamoDBDocumentClient.from(dynamo), sns: client(new SNSClient(aws)) };
    createPublisherDependencies(loadPublisherConfig({ STATE_TABLE_NAME: 'state' }), clients, log);
    for (const value of [dynamo, clients.documents, clients.sns]) expect(logs(value)).toBe(false);
  });
});
