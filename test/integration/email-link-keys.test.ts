/**
 * The link keys on moto's Secrets Manager (functions/aws/email/link-keys.ts): a link is read
 * before its signature can be checked, so made-up key versions must not each cost a Secrets
 * Manager read; a key a rotation just added must still verify at once.
 */
import { CreateSecretCommand, PutSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { describe, expect, it } from 'vitest';
import { REFETCH_INTERVAL_MS, SecretsManagerLinkKeys } from '#aws/email/link-keys';
import { awsClients, uniquePrefix } from '#test/aws';
import { localAwsConfig } from '../../sandbox/moto.ts';

const keyOf = (character: string) => character.repeat(64);

async function setUp() {
  const { endpoint, secrets } = awsClients();
  const secretId = `${uniquePrefix()}link-keys`;
  await secrets.send(
    new CreateSecretCommand({ Name: secretId, SecretString: JSON.stringify({ current: '1', key1: keyOf('a') }) }),
  );
  // A client of its own, so only this store's reads are counted.
  const client = new SecretsManagerClient(localAwsConfig(endpoint));
  const reads = { count: 0 };
  client.middlewareStack.add(
    (next, context) => async (args) => {
      if (context.commandName === 'GetSecretValueCommand') reads.count += 1;
      return next(args);
    },
    { step: 'initialize' },
  );
  const clock = { now: 1_000_000 };
  const keys = new SecretsManagerLinkKeys({ client, secretId, now: () => clock.now });
  const rotate = (secret: object) =>
    secrets.send(new PutSecretValueCommand({ SecretId: secretId, SecretString: JSON.stringify(secret) }));
  return { keys, reads, clock, rotate };
}

describe('link keys', () => {
  it('reads the secret once for a flood of made-up versions, and never for a retired one', async () => {
    const { keys, reads, clock } = await setUp();
    expect((await keys.byVersion('1'))?.key.toString()).toBe(keyOf('a'));
    expect(reads.count).toBe(1);
    for (let version = 2; version < 200; version++) expect(await keys.byVersion(String(version))).toBeUndefined();
    expect(reads.count).toBe(2);
    clock.now += REFETCH_INTERVAL_MS;
    expect(await keys.byVersion('0')).toBeUndefined();
    expect(reads.count).toBe(2);
  });

  it('finds a key a rotation added at once, and after a forced read, once the interval has passed', async () => {
    const { keys, reads, clock, rotate } = await setUp();
    await keys.current();
    await rotate({ current: '2', key1: keyOf('a'), key2: keyOf('b') });
    expect((await keys.byVersion('2'))?.key.toString()).toBe(keyOf('b'));
    expect(reads.count).toBe(2);
    // Someone asked for version 3 before the next rotation put it in: the next read waits out the interval.
    expect(await keys.byVersion('3')).toBeUndefined();
    await rotate({ current: '3', key2: keyOf('b'), key3: keyOf('c') });
    clock.now += REFETCH_INTERVAL_MS;
    expect((await keys.byVersion('3'))?.key.toString()).toBe(keyOf('c'));
    expect(reads.count).toBe(3);
  });
});
