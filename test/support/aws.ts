/**
 * Real AWS SDK v3 clients pointed at the test run's moto server, plus unique names so test files
 * running in parallel never share a table, topic or queue.
 */

import { randomUUID } from 'node:crypto';
import { createServer } from 'node:net';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { SNSClient } from '@aws-sdk/client-sns';
import { SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { inject } from 'vitest';
import { localAwsConfig } from '../../sandbox/moto.ts';

export interface AwsClients {
  readonly endpoint: string;
  readonly dynamo: DynamoDBClient;
  readonly documents: DynamoDBDocumentClient;
  readonly sns: SNSClient;
  readonly sqs: SQSClient;
  readonly secrets: SecretsManagerClient;
}

/** Clients for the shared moto server of this test run, or for the one at `endpoint`. */
export function awsClients(endpoint: string = inject('motoEndpoint')): AwsClients {
  const config = localAwsConfig(endpoint);
  const dynamo = new DynamoDBClient(config);
  return {
    endpoint,
    dynamo,
    documents: DynamoDBDocumentClient.from(dynamo, { marshallOptions: { removeUndefinedValues: true } }),
    sns: new SNSClient(config),
    sqs: new SQSClient(config),
    secrets: new SecretsManagerClient(config),
  };
}

/** A short unique prefix for resource names (`t3f9a1c2-`). */
export const uniquePrefix = (): string => `t${randomUUID().slice(0, 8)}-`;

/** A loopback port nothing listens on (bound, then closed): where a client finds no endpoint. */
export async function unusedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  if (typeof address !== 'object' || address === null) throw new Error('no port');
  return address.port;
}
