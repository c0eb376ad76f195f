/**
 * The cold-start baseline (bench/cold-start.ts): a Lambda handler that imports and creates, at
 * module scope as the alert handler does, only what the design itself calls for: the three SDK
 * clients (DynamoDB document client, SNS, Secrets Manager) and undici's keep-alive pool for the
 * provider (functions/provider/news-client.ts creates one `Agent` with these options at import).
 * Bundled with the stack's options. Everything the handler loads beyond this is the price of how
 * it is written, not of what it does.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { SNSClient } from '@aws-sdk/client-sns';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { Agent } from 'undici';

const clients = {
  documents: DynamoDBDocumentClient.from(new DynamoDBClient({}), { marshallOptions: { removeUndefinedValues: true } }),
  sns: new SNSClient({}),
  secrets: new SecretsManagerClient({}),
  provider: new Agent({ connect: { timeout: 5000 }, headersTimeout: 15_000, bodyTimeout: 15_000, connections: 4 }),
};

/** Returns how many clients it holds, so nothing is tree-shaken away. */
export const handler = async (): Promise<number> => Object.keys(clients).length;
