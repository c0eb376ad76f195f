/**
 * The cold-start baseline (bench/cold-start.ts): a Lambda handler that imports and creates only the
 * three SDK clients the alert handler uses (DynamoDB document client, SNS, Secrets Manager), at
 * module scope as the alert handler does, and nothing else. Bundled with the stack's options.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { SNSClient } from '@aws-sdk/client-sns';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';

const clients = {
  documents: DynamoDBDocumentClient.from(new DynamoDBClient({}), { marshallOptions: { removeUndefinedValues: true } }),
  sns: new SNSClient({}),
  secrets: new SecretsManagerClient({}),
};

/** Returns how many clients it holds, so nothing is tree-shaken away. */
export const handler = async (): Promise<number> => Object.keys(clients).length;
