/**
 * The cold-start baseline (bench/cold-start.ts, bench/first-request.ts): a Lambda handler that
 * imports and creates, at module scope as the alert handler does, only what the design itself calls
 * for: the three SDK clients (DynamoDB document client, SNS, Secrets Manager) and undici's
 * keep-alive pool for the provider (functions/provider/news-client.ts creates one `Agent` with
 * these options at import, trusting NEWS_API_CA_PEM as well when it is set). Bundled with the
 * stack's options. Everything the handler loads beyond this is the price of how it is written, not
 * of what it does.
 *
 * Invoked, it does what every alert run must do before its first provider request and nothing
 * else: it reads the API key from Secrets Manager and asks the provider for the first page of
 * `event.date`, the same request the alert run makes first.
 */
import { createSecureContext, rootCertificates } from 'node:tls';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { SNSClient } from '@aws-sdk/client-sns';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { Agent, request } from 'undici';

const caPem = process.env.NEWS_API_CA_PEM;
const clients = {
  documents: DynamoDBDocumentClient.from(new DynamoDBClient({}), { marshallOptions: { removeUndefinedValues: true } }),
  sns: new SNSClient({}),
  secrets: new SecretsManagerClient({}),
  provider: new Agent({
    connect: {
      timeout: 5000,
      ...(caPem ? { secureContext: createSecureContext({ ca: [...rootCertificates, caPem] }) } : {}),
    },
    headersTimeout: 15_000,
    bodyTimeout: 15_000,
    connections: 4,
  }),
};

/** The secret read and the first page request; returns the provider's status code. */
export const handler = async (event: { readonly date?: string } = {}): Promise<number> => {
  const secret = await clients.secrets.send(
    new GetSecretValueCommand({ SecretId: process.env.NEWS_API_KEY_SECRET_ID }),
  );
  const date = event.date ?? new Date().toISOString().slice(0, 10);
  const response = await request(`${process.env.NEWS_API_BASE_URL ?? ''}/news`, {
    dispatcher: clients.provider,
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Accept: 'application/json', 'X-API-KEY': secret.SecretString ?? '' },
    body: JSON.stringify({
      paginationMethod: 'PAGE',
      publishedAtStart: date,
      publishedAtEnd: date,
      page: 1,
      size: 100,
    }),
  });
  await response.body.text();
  return response.statusCode;
};
