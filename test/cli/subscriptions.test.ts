/**
 * Subscription states that say what happened (issue 11, item 10): an email subscriber the sandbox
 * confirms at once is reported confirmed (no "confirmation email on its way"), a junk token
 * confirms nothing (exit 2) and a well-formed one that matches no subscription is a failure
 * (exit 1); and `subscriptions add --sqs` subscribes a queue anyone can read an audience's
 * deliveries from, on a stack as in the sandbox.
 */
import {
  CreateSecretCommand,
  DescribeSecretCommand,
  GetSecretValueCommand,
  PutSecretValueCommand,
} from '@aws-sdk/client-secrets-manager';
import { CreateQueueCommand, GetQueueAttributesCommand, SQSClient } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseWebhookMap, webhookShardName } from '#shared/slack-webhook-store';
import { localAwsConfig } from '../../sandbox/moto.ts';
import { type CliSandbox, deliveryIdOfBody, drainQueue, startCliSandbox } from './support.ts';

let sandbox: CliSandbox;
beforeAll(async () => {
  sandbox = await startCliSandbox();
});
afterAll(async () => {
  await sandbox?.stop();
});

describe('subscription states', () => {
  it('reports an email subscriber the sandbox confirmed at once as confirmed', async () => {
    const added = await sandbox.cli(['--json', 'subscriptions', 'add', 'markets-desk', '--email', 'a@example.com']);
    expect(added.code, added.stderr).toBe(0);
    expect(added.json()).toMatchObject({ protocol: 'email', endpoint: 'a@example.com', status: 'confirmed' });
    const human = await sandbox.cli(['subscriptions', 'add', 'markets-desk', '--email', 'b@example.com']);
    expect(human.code, human.stderr).toBe(0);
    expect(human.stdout).toContain('subscribed email b@example.com to markets-desk: confirmed');
    expect(human.stdout).toContain('The sandbox confirmed it at once');
    expect(human.stdout).not.toContain('is on its way');
  });

  it('confirms nothing with a junk token (exit 2) or a token that matches no subscription (exit 1)', async () => {
    const junk = await sandbox.cli(['subscriptions', 'confirm', 'markets-desk', '--token', 'abc']);
    expect(junk.code).toBe(2);
    expect(junk.stderr).toContain('--token "abc" is not a confirmation token');
    expect(junk.stdout).not.toContain('confirmed');

    const stranger = await sandbox.cli(['subscriptions', 'confirm', 'markets-desk', '--token', 'ab12'.repeat(32)]);
    expect(stranger.code, stranger.stderr).toBe(1);
    expect(stranger.stderr).toContain('the token confirmed no subscription');
    expect(stranger.stdout).toBe('');
  });

  it('subscribes an SQS queue (raw) that receives every alert of the audience', async () => {
    const { sqs } = sandbox.stack.clients;
    const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: `${sandbox.prefix}reader` }));
    const { Attributes } = await sqs.send(new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ['QueueArn'] }));
    const queueArn = Attributes?.QueueArn ?? '';

    const [badArn, rawAlone] = await Promise.all([
      sandbox.cli(['subscriptions', 'add', 'quake-oncall', '--sqs', 'https://sqs.example.com/queue']),
      sandbox.cli(['subscriptions', 'add', 'quake-oncall', '--email', 'x@example.com', '--raw']),
    ]);
    expect(badArn.code).toBe(2);
    expect(badArn.stderr).toContain('is not an SQS queue ARN');
    expect(rawAlone.code).toBe(2);
    expect(rawAlone.stderr).toContain('--raw only applies to --https and --sqs');

    // A queue the sandbox does not have (the ops guide's example ARN is in another region) is
    // refused: moto then failed every publish to the topic, parking all of the audience's alerts.
    const [, , , region, account] = queueArn.split(':');
    const other = region === 'eu-west-1' ? 'eu-west-2' : 'eu-west-1';
    const [missing, elsewhere] = await Promise.all([
      sandbox.cli(['subscriptions', 'add', 'quake-oncall', '--sqs', `${queueArn}-missing`]),
      sandbox.cli([
        'subscriptions',
        'add',
        'quake-oncall',
        '--sqs',
        `arn:aws:sqs:${other}:${account}:${sandbox.prefix}reader`,
      ]),
    ]);
    expect(missing.code, missing.stderr).toBe(2);
    expect(missing.stderr).toContain(`--sqs: the sandbox has no queue ${sandbox.prefix}reader-missing in ${region}`);
    expect(missing.stderr).toContain('nothing was subscribed');
    // Looked for in the ARN's region, where SNS would deliver: the queue is in another.
    expect(elsewhere.code, elsewhere.stderr).toBe(2);
    expect(elsewhere.stderr).toContain(`the sandbox has no queue ${sandbox.prefix}reader in ${other}`);
    const none = await sandbox.cli(['--json', 'subscriptions', 'list', 'quake-oncall']);
    const endpoints = none.json<{ endpoint: string }[]>().map((row) => row.endpoint);
    expect(endpoints).not.toContain(`${sandbox.prefix}reader`);
    expect(endpoints).not.toContain(`${sandbox.prefix}reader-missing`);

    const added = await sandbox.cli(['subscriptions', 'add', 'quake-oncall', '--sqs', queueArn, '--raw']);
    expect(added.code, added.stderr).toBe(0);
    expect(added.stdout).toContain('sns.amazonaws.com');
    const listed = await sandbox.cli(['--json', 'subscriptions', 'list', 'quake-oncall']);
    expect(listed.json<{ protocol: string; status: string }[]>()).toContainEqual(
      expect.objectContaining({ protocol: 'sqs', endpoint: `${sandbox.prefix}reader`, status: 'confirmed' }),
    );

    const summary = await sandbox.stack.run();
    const sent = summary.audiences['quake-oncall']?.published ?? 0;
    expect(sent).toBeGreaterThan(0);
    const bodies = await drainQueue(sqs, QueueUrl ?? '');
    expect(bodies).toHaveLength(sent);
    for (const body of bodies) expect(deliveryIdOfBody(body).startsWith('quake-oncall|')).toBe(true);

    // A queue of the same name in another region: the name alone does not say which to remove.
    const otherSqs = new SQSClient({ ...localAwsConfig(sandbox.descriptor.endpoint), region: other });
    try {
      await otherSqs.send(new CreateQueueCommand({ QueueName: `${sandbox.prefix}reader` }));
    } finally {
      otherSqs.destroy();
    }
    const twin = `arn:aws:sqs:${other}:${account}:${sandbox.prefix}reader`;
    const second = await sandbox.cli(['subscriptions', 'add', 'quake-oncall', '--sqs', twin]);
    expect(second.code, second.stderr).toBe(0);
    const ambiguous = await sandbox.cli([
      'subscriptions',
      'remove',
      'quake-oncall',
      `${sandbox.prefix}reader`,
      '--yes',
    ]);
    expect(ambiguous.code, ambiguous.stderr).toBe(2);
    expect(ambiguous.stderr).toContain(`"${sandbox.prefix}reader" names 2 subscriptions of quake-oncall`);
    const byArn = await sandbox.cli(['subscriptions', 'remove', 'quake-oncall', twin, '--yes']);
    expect(byArn.code, byArn.stderr).toBe(0);

    // Removed by the name the list shows for it (only the ARN or the subscription id worked).
    const removed = await sandbox.cli(['subscriptions', 'remove', 'quake-oncall', `${sandbox.prefix}reader`, '--yes']);
    expect(removed.code, removed.stderr).toBe(0);
    const after = await sandbox.cli(['--json', 'subscriptions', 'list', 'quake-oncall']);
    expect(after.json<{ endpoint: string }[]>().map((row) => row.endpoint)).not.toContain(`${sandbox.prefix}reader`);
  });
});

describe('migrate-webhooks: from one secret per audience to the webhook store', () => {
  it('moves every webhook, keeps every subscription, deletes the old secrets only when asked, and never prints a URL', async () => {
    const { secrets } = sandbox.stack.clients;
    const legacy = `${sandbox.prefix}slack/`;
    const store = `${sandbox.prefix}slack-webhooks/`;
    const token = (n: number) => `mIgRaTe${n}SeCrEt`;
    const url = (n: number) => `https://hooks.slack.com/services/T000${n}/B000${n}/${token(n)}`;
    const audiences = Array.from({ length: 7 }, (_, n) => `desk-${n}`);
    // As an earlier release left them: bare URLs, one in the relay's JSON form, one created empty
    // (by the stack, never filled), and a secret of another tool under a deeper path.
    for (const [n, audienceId] of audiences.entries()) {
      await secrets.send(
        new CreateSecretCommand({
          Name: `${legacy}${audienceId}`,
          SecretString: n === 1 ? JSON.stringify({ webhookUrl: url(n) }) : url(n),
        }),
      );
    }
    await secrets.send(new CreateSecretCommand({ Name: `${legacy}never-filled` }));
    await secrets.send(new CreateSecretCommand({ Name: `${legacy}other/tool`, SecretString: 'not ours' }));
    // One audience already in the store with a newer URL: the store keeps it.
    await secrets.send(new PutSecretValueCommand({ SecretId: `${legacy}desk-6`, SecretString: url(6) }));
    const newer = await sandbox.cli(['subscriptions', 'add', 'chips-team', '--slack-webhook'], { input: url(99) });
    expect(newer.code, newer.stderr).toBe(0);
    await secrets.send(new CreateSecretCommand({ Name: `${legacy}chips-team`, SecretString: url(98) }));
    const subscriptionsBefore = (await sandbox.cli(['--json', 'subscriptions', 'list', 'chips-team'])).json<
      unknown[]
    >();

    const dry = await sandbox.cli(['--json', 'subscriptions', 'migrate-webhooks', '--dry-run']);
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.json<{ audiences: unknown[] }>().audiences).toHaveLength(audiences.length + 2);

    const moved = await sandbox.cli(['subscriptions', 'migrate-webhooks']);
    expect(moved.code, moved.stderr).toBe(0);
    const shard = async (audienceId: string) =>
      parseWebhookMap(
        (
          await secrets.send(
            new GetSecretValueCommand({ SecretId: webhookShardName(store, audienceId), VersionStage: 'AWSCURRENT' }),
          )
        ).SecretString ?? '',
      ).get(audienceId);
    for (const [n, audienceId] of audiences.entries()) expect(await shard(audienceId)).toBe(url(n));
    expect(await shard('chips-team')).toBe(url(99));
    expect(await shard('never-filled')).toBeUndefined();

    // Again, now also deleting: idempotent, and only secrets whose webhook the store holds go.
    const again = await sandbox.cli(['--json', 'subscriptions', 'migrate-webhooks', '--delete-old-secrets', '--yes']);
    expect(again.code, again.stderr).toBe(0);
    const rows = again.json<{ audiences: { audienceId: string; outcome: string; deleted: boolean }[] }>().audiences;
    expect(
      rows
        .filter((row) => row.deleted)
        .map((row) => row.audienceId)
        .sort(),
    ).toEqual([...audiences, 'chips-team'].sort());
    expect(rows.find((row) => row.audienceId === 'chips-team')?.outcome).toBe('store kept its own URL');
    expect(rows.find((row) => row.audienceId === 'never-filled')).toMatchObject({ deleted: false });
    for (const audienceId of audiences) {
      const { DeletedDate } = await secrets.send(new DescribeSecretCommand({ SecretId: `${legacy}${audienceId}` }));
      expect(DeletedDate).toBeDefined();
    }
    expect(
      (await secrets.send(new DescribeSecretCommand({ SecretId: `${legacy}other/tool` }))).DeletedDate,
    ).toBeUndefined();
    // Nothing about subscribers changed, and no URL was printed anywhere.
    expect((await sandbox.cli(['--json', 'subscriptions', 'list', 'chips-team'])).json()).toEqual(subscriptionsBefore);
    for (const output of [dry, moved, again]) {
      for (let n = 0; n < 100; n += 1) expect(output.stdout + output.stderr).not.toContain(token(n));
    }
  });
});
