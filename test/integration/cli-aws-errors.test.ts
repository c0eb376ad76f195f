/**
 * What the CLI makes of the errors AWS answers with (cli/errors.ts), from real SDK clients (the
 * CLI's own) against the test run's moto server: a missing table or secret names itself and the
 * fix. The other failures are in test/unit/cli-errors.test.ts.
 */
import { GetSecretValueCommand } from '@aws-sdk/client-secrets-manager';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { localAwsConfig } from '#sandbox/moto';
import { AwsClients } from '../../cli/aws-clients.ts';
import { failureOf } from '../../cli/errors.ts';

const clients: AwsClients[] = [];
afterAll(() => {
  for (const client of clients) client.destroy();
});

/** What `send` threw. */
async function thrown(send: () => Promise<unknown>): Promise<unknown> {
  try {
    await send();
  } catch (error) {
    return error;
  }
  throw new Error('the call succeeded');
}

describe('AWS errors point the way', () => {
  it('a missing table or secret is named, exit 3, with the fix for the stack or the sandbox', async () => {
    const aws = new AwsClients({ ...localAwsConfig(inject('motoEndpoint')), region: 'us-east-1' });
    clients.push(aws);
    const table = await thrown(() =>
      aws.documents.send(new GetCommand({ TableName: 'no-such-table', Key: { id: 'x' } })),
    );
    expect(failureOf(table)).toMatchObject({
      exitCode: 3,
      code: 'aws_not_found',
      message: 'DynamoDB table no-such-table does not exist: deploy the stack or check --stack/--region',
    });
    expect(failureOf(table, { local: true }).message).toMatch(
      /^DynamoDB table no-such-table does not exist: the sandbox/,
    );
    const secret = await thrown(() => aws.secrets.send(new GetSecretValueCommand({ SecretId: 'no-such-secret' })));
    expect(failureOf(secret)).toMatchObject({
      exitCode: 3,
      message: expect.stringMatching(/^secret no-such-secret does not exist/),
    });
  });
});
