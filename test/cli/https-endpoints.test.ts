/**
 * HTTPS endpoint URLs are credentials, and no table holds one in plaintext (issue 33): `subscriptions
 * add --https` keeps the URL in the endpoint store (cli/endpoint-store.ts) and its subscriber
 * record a digest and a masked form; `audiences repair` subscribes the same URL again from the
 * store; `subscriptions remove` and `audiences delete --delete-topic` take it out; and
 * `migrate-webhooks` moves the URLs that records of earlier releases hold in clear, without losing
 * the subscriber. In a real CLI process against the sandbox; no output ever carries a URL's path.
 */
import { GetSecretValueCommand, ResourceNotFoundException } from '@aws-sdk/client-secrets-manager';
import {
  DeleteTopicCommand,
  ListSubscriptionsByTopicCommand,
  SNSClient,
  SubscribeCommand,
  ThrottledException,
} from '@aws-sdk/client-sns';
import { DeleteCommand, PutCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { endpointDigest } from '#aws/dynamo-subscriber-records';
import {
  parseWebhookMap,
  serializeWebhookMap,
  WEBHOOK_SHARD_MAX_BYTES,
  webhookShardName,
} from '#shared/slack-webhook-store';
import { removeWebhooks, storeWebhooks } from '../../cli/webhook-store.ts';
import { type CliResult, type CliSandbox, cliInProcess, startCliSandbox } from './support.ts';

let sandbox: CliSandbox;
beforeAll(async () => {
  sandbox = await startCliSandbox();
});
afterAll(async () => {
  await sandbox?.stop();
});

/** A loopback receiver URL whose path carries `token`, as a webhook's secret part. */
const urlWith = (token: string) => `${sandbox.stack.receivers.webhook.url}/hook/${token}`;

/** The URL the endpoint store holds for an audience's endpoint, if any (a shard not made yet holds none). */
async function inStore(audienceId: string, url: string): Promise<string | undefined> {
  const key = `${audienceId}#${endpointDigest(url)}`;
  try {
    const { SecretString } = await sandbox.stack.clients.secrets.send(
      new GetSecretValueCommand({
        SecretId: webhookShardName(`${sandbox.prefix}https-endpoints/`, key),
        VersionStage: 'AWSCURRENT',
      }),
    );
    return parseWebhookMap(SecretString ?? '').get(key);
  } catch (error) {
    if (error instanceof ResourceNotFoundException) return undefined;
    throw error;
  }
}

/** What a store shard holds now (empty when it was not made yet). */
async function readShardMap(name: string): Promise<{ map: Map<string, string> }> {
  try {
    const { SecretString } = await sandbox.stack.clients.secrets.send(
      new GetSecretValueCommand({ SecretId: name, VersionStage: 'AWSCURRENT' }),
    );
    return { map: parseWebhookMap(SecretString ?? '') };
  } catch (error) {
    if (error instanceof ResourceNotFoundException) return { map: new Map() };
    throw error;
  }
}

/** Every item of every table of the sandbox, as text: where a URL must not be. */
async function allTablesText(): Promise<string> {
  const names = sandbox.descriptor.names;
  const texts: string[] = [];
  for (const table of [names.stateTable, names.audiencesTable, names.rulesTable]) {
    const { Items } = await sandbox.stack.clients.documents.send(new ScanCommand({ TableName: table }));
    texts.push(JSON.stringify(Items ?? []));
  }
  return texts.join('\n');
}

async function topicEndpoints(audienceId: string): Promise<string[]> {
  const topicArn = String((await sandbox.audience(audienceId))?.topicArn);
  const { Subscriptions } = await sandbox.stack.clients.sns.send(
    new ListSubscriptionsByTopicCommand({ TopicArn: topicArn }),
  );
  return (Subscriptions ?? []).map((subscription) => subscription.Endpoint ?? '');
}

/** `subscriptions add <audienceId> --https <url>` for a loopback receiver. */
const addHttps = (audienceId: string, url: string) =>
  sandbox.cli(['subscriptions', 'add', audienceId, '--https', url, '--allow-internal-target']);

const expectSilent = (token: string, ...results: CliResult[]) => {
  for (const result of results) expect(result.stdout + result.stderr).not.toContain(token);
};

describe('an HTTPS endpoint subscribed with the CLI', () => {
  it('is kept in the endpoint store, not in a table, and repair subscribes it again from there', async () => {
    const token = 'EnDpOiNtToKeN1';
    const url = urlWith(token);
    const added = await addHttps('partner-feed', url);
    expect(added.code, added.stderr).toBe(0);
    // The sandbox's moto confirms it itself: no SubscriptionConfirmation to wait for there.
    expect(added.stdout).toContain("The sandbox's moto confirms it itself");
    expect(added.stdout).not.toContain('The endpoint receives a SubscriptionConfirmation POST');
    expect(await inStore('partner-feed', url)).toBe(url);
    expect(await allTablesText()).not.toContain(token);

    const topicArn = String((await sandbox.audience('partner-feed'))?.topicArn);
    await sandbox.stack.clients.sns.send(new DeleteTopicCommand({ TopicArn: topicArn }));
    const dryRun = await sandbox.cli(['--json', 'audiences', 'repair', 'partner-feed']);
    const repaired = await sandbox.cli(['--json', 'audiences', 'repair', 'partner-feed', '--yes']);
    expect(repaired.code, repaired.stderr).toBe(0);
    const report = repaired.json<{ subscriptions: { protocol: string; endpoint: string; result: string }[] }>();
    expect(report.subscriptions.find((entry) => entry.protocol === 'https')).toMatchObject({ result: 'restored' });
    expect(await topicEndpoints('partner-feed')).toContain(url);
    expectSilent(token, added, dryRun, repaired);
  });

  it('is not kept when SNS refuses the subscription: no URL is left behind, and none is printed', async () => {
    const token = 'EnDpOiNtToKeN4';
    const url = urlWith(token);
    const send = SNSClient.prototype.send;
    const refuse = vi.spyOn(SNSClient.prototype, 'send').mockImplementation(function (
      this: SNSClient,
      ...args: Parameters<SNSClient['send']>
    ) {
      if (args[0] instanceof SubscribeCommand) {
        return Promise.reject(new ThrottledException({ message: 'Rate exceeded', $metadata: {} }));
      }
      return (send as (...a: unknown[]) => Promise<unknown>).apply(this, args);
    } as SNSClient['send']);
    let failed: { code: number; output: string };
    try {
      failed = await cliInProcess(sandbox, [
        'subscriptions',
        'add',
        'quake-oncall',
        '--https',
        url,
        '--allow-internal-target',
      ]);
    } finally {
      refuse.mockRestore();
    }
    expect(failed.code).not.toBe(0);
    expect(failed.output).toContain('ThrottledException');
    expect(failed.output).not.toContain(token);
    expect(await inStore('quake-oncall', url)).toBeUndefined();
    expect(await allTablesText()).not.toContain(endpointDigest(url));
  });

  it('leaves the endpoint store with its subscription, and with its audience', async () => {
    const token = 'EnDpOiNtToKeN2';
    const url = urlWith(token);
    // Given on stdin (`--https -`), so it is in no process list or shell history.
    const empty = await sandbox.cli(['subscriptions', 'add', 'chips-team', '--https', '-'], { input: '' });
    expect(empty.code).toBe(2);
    expect(empty.stderr).toContain('--https -: no URL given: pipe it on stdin');
    const added = await sandbox.cli(['subscriptions', 'add', 'chips-team', '--https', '-', '--allow-internal-target'], {
      input: `${url}\n`,
    });
    expect(added.code, added.stderr).toBe(0);
    expect(await inStore('chips-team', url)).toBe(url);
    const listed = await sandbox.cli(['--json', 'subscriptions', 'list', 'chips-team']);
    const row = listed
      .json<{ protocol: string; subscriptionArn: string }[]>()
      .find((entry) => entry.protocol === 'https');
    const removed = await sandbox.cli(['subscriptions', 'remove', 'chips-team', row?.subscriptionArn ?? '', '--yes']);
    expect(removed.code, removed.stderr).toBe(0);
    expect(await inStore('chips-team', url)).toBeUndefined();

    // Removed by its URL, given on stdin (`-`): no argument holds the token.
    const byUrl = await addHttps('chips-team', url);
    expect(byUrl.code, byUrl.stderr).toBe(0);
    const nothing = await sandbox.cli(['subscriptions', 'remove', 'chips-team', '-', '--yes'], { input: '' });
    expect(nothing.code).toBe(2);
    expect(nothing.stderr).toContain('-: no subscription given');
    const removedByUrl = await sandbox.cli(['subscriptions', 'remove', 'chips-team', '-', '--yes'], {
      input: `${url}\n`,
    });
    expect(removedByUrl.code, removedByUrl.stderr).toBe(0);
    expect(await inStore('chips-team', url)).toBeUndefined();
    expectSilent(token, byUrl, nothing, removedByUrl);

    const created = await sandbox.cli(['audiences', 'create', 'https-gone', '--time-zone', 'UTC']);
    expect(created.code, created.stderr).toBe(0);
    const again = await addHttps('https-gone', url);
    expect(again.code, again.stderr).toBe(0);
    expect(await inStore('https-gone', url)).toBe(url);
    const deleted = await sandbox.cli(['audiences', 'delete', 'https-gone', '--delete-topic', '--yes']);
    expect(deleted.code, deleted.stderr).toBe(0);
    expect(deleted.stderr).toContain('removed 1 HTTPS endpoint URL(s) from the endpoint store');
    expect(deleted.stderr).toContain('--https - --allow-internal-target');
    expect(await inStore('https-gone', url)).toBeUndefined();
    expectSilent(token, added, listed, removed, again, deleted);
  });
});

describe('a subscriber record of an earlier release', () => {
  it('migrate-webhooks moves its URL into the endpoint store, and the subscriber is kept', async () => {
    const token = 'EnDpOiNtToKeN3';
    const url = urlWith(token);
    // What `subscriptions add --https` did before this release: the subscription, and the URL in
    // clear in its record (and nothing in the endpoint store).
    await sandbox.stack.clients.sns.send(
      new SubscribeCommand({
        TopicArn: String((await sandbox.audience('markets-desk'))?.topicArn),
        Protocol: 'https',
        Endpoint: url,
        Attributes: { RawMessageDelivery: 'true' },
      }),
    );
    const record = {
      pk: 'subscribers#markets-desk',
      sk: `https#${endpointDigest(url)}`,
      audienceId: 'markets-desk',
      protocol: 'https',
      endpoint: url,
      raw: true,
      addedAt: 1,
      addedBy: 'earlier-release',
    };
    await sandbox.stack.clients.documents.send(
      new PutCommand({ TableName: sandbox.descriptor.names.stateTable, Item: record }),
    );
    expect(await allTablesText()).toContain(token);
    expect(await inStore('markets-desk', url)).toBeUndefined();

    const dryRun = await sandbox.cli(['--json', 'subscriptions', 'migrate-webhooks', '--dry-run']);
    expect(dryRun.code, dryRun.stderr).toBe(0);
    expect(dryRun.json<{ endpoints: { audienceId: string; outcome: string }[] }>().endpoints).toEqual([
      expect.objectContaining({ audienceId: 'markets-desk', outcome: 'would be moved' }),
    ]);
    expect(await allTablesText()).toContain(token);
    expect(await inStore('markets-desk', url)).toBeUndefined();

    const migrated = await sandbox.cli(['subscriptions', 'migrate-webhooks']);
    expect(migrated.code, migrated.stderr).toBe(0);
    expect(migrated.stdout).toMatch(/markets-desk\s+https:\/\/127\.0\.0\.1:\d+\/…\s+moved/);
    expect(await allTablesText()).not.toContain(token);
    expect(await inStore('markets-desk', url)).toBe(url);
    const rerun = await sandbox.cli(['--json', 'subscriptions', 'migrate-webhooks']);
    expect(rerun.json<{ endpoints: unknown[] }>().endpoints).toEqual([]);

    // What the record said is kept: the raw setting, who added it and when; and repair restores it.
    const { Items } = await sandbox.stack.clients.documents.send(
      new ScanCommand({
        TableName: sandbox.descriptor.names.stateTable,
        FilterExpression: 'pk = :pk AND sk = :sk',
        ExpressionAttributeValues: { ':pk': record.pk, ':sk': record.sk },
      }),
    );
    expect(Items?.[0]).toMatchObject({ raw: true, addedBy: 'earlier-release', endpointRef: endpointDigest(url) });
    expect(Items?.[0]?.endpoint).toBeUndefined();
    const topicArn = String((await sandbox.audience('markets-desk'))?.topicArn);
    await sandbox.stack.clients.sns.send(new DeleteTopicCommand({ TopicArn: topicArn }));
    const repaired = await sandbox.cli(['--json', 'audiences', 'repair', 'markets-desk', '--yes']);
    expect(repaired.code, repaired.stderr).toBe(0);
    expect(await topicEndpoints('markets-desk')).toContain(url);
    expectSilent(token, dryRun, migrated, rerun, repaired);
    const report = repaired.json<{ subscriptions: { protocol: string; result: string }[] }>();
    expect(report.subscriptions.find((entry) => entry.protocol === 'https')).toMatchObject({ result: 'restored' });
  });

  it('migrate-webhooks --dry-run foresees a shard without room: it says so and exits 1, as the run does, and the record keeps its URL', async () => {
    const token = 'EnDpOiNtToKeN4';
    const url = urlWith(token);
    const key = `partner-feed#${endpointDigest(url)}`;
    const shard = webhookShardName(`${sandbox.prefix}https-endpoints/`, key);
    const { secrets } = sandbox.stack.clients;
    const prefix = `${sandbox.prefix}https-endpoints/`;
    // The shard filled, by the store's own writes, to 50 bytes short of what the CLI writes to one
    // secret, with an entry of its own (a key that lands in the same shard).
    let filler = 0;
    while (webhookShardName(prefix, `filler-${filler}#0`) !== shard) filler += 1;
    const fillerKey = `filler-${filler}#0`;
    const { map } = await readShardMap(shard);
    map.set(fillerKey, '');
    const room = WEBHOOK_SHARD_MAX_BYTES - 50 - Buffer.byteLength(serializeWebhookMap(map));
    await storeWebhooks(secrets, prefix, new Map([[fillerKey, `https://127.0.0.1/${'x'.repeat(room - 18)}`]]));
    const record = {
      pk: 'subscribers#partner-feed',
      sk: `https#${endpointDigest(url)}`,
      audienceId: 'partner-feed',
      protocol: 'https',
      endpoint: url,
      addedAt: 1,
      addedBy: 'earlier-release',
    };
    const { documents } = sandbox.stack.clients;
    await documents.send(new PutCommand({ TableName: sandbox.descriptor.names.stateTable, Item: record }));

    const dryRun = await sandbox.cli(['--json', 'subscriptions', 'migrate-webhooks', '--dry-run']);
    expect(dryRun.code).toBe(1);
    expect(dryRun.json<{ endpoints: { audienceId: string; outcome: string }[] }>().endpoints).toEqual([
      expect.objectContaining({
        audienceId: 'partner-feed',
        outcome: expect.stringContaining(`not moved: the webhook store secret ${shard} would hold`),
      }),
    ]);
    const run = await sandbox.cli(['--json', 'subscriptions', 'migrate-webhooks']);
    expect(run.code).toBe(1);
    expect(run.json<{ endpoints: { outcome: string }[] }>().endpoints[0]?.outcome).toContain(
      'more than fits one secret',
    );
    expect(await allTablesText()).toContain(token);
    expect(await inStore('partner-feed', url)).toBeUndefined();
    expectSilent(token, dryRun, run);

    // As it was, for the tests after this one.
    await documents.send(
      new DeleteCommand({ TableName: sandbox.descriptor.names.stateTable, Key: { pk: record.pk, sk: record.sk } }),
    );
    await removeWebhooks(secrets, prefix, [fillerKey]);
  });

  it('repair names an endpoint whose URL left the store, and how to add it again', async () => {
    await sandbox.stack.clients.documents.send(
      new PutCommand({
        TableName: sandbox.descriptor.names.stateTable,
        Item: {
          pk: 'subscribers#quake-oncall',
          sk: `https#${'0'.repeat(32)}`,
          audienceId: 'quake-oncall',
          protocol: 'https',
          endpointRef: '0'.repeat(32),
          shown: 'https://gone.example.com/…',
          addedAt: 1,
          addedBy: 'test',
        },
      }),
    );
    const repaired = await sandbox.cli(['--json', 'audiences', 'repair', 'quake-oncall', '--yes']);
    expect(repaired.code, repaired.stderr).toBe(0);
    const report = repaired.json<{ subscriptions: { endpoint: string; result: string; detail: string }[] }>();
    expect(report.subscriptions.find((entry) => entry.endpoint === 'https://gone.example.com/…')).toMatchObject({
      result: 'not restored',
      detail: expect.stringContaining(
        'is not in the endpoint store (quake-oncall#00000000000000000000000000000000 in ',
      ),
    });
    // The advice keeps the URL (a credential) off the command line, and works in the sandbox.
    expect(report.subscriptions.find((entry) => entry.endpoint === 'https://gone.example.com/…')?.detail).toMatch(
      /add it again with 'news-alerts .*subscriptions add quake-oncall --https - --allow-internal-target' \(the URL on stdin or at the hidden prompt\)$/,
    );
  });
});
