/**
 * Webhook subscriptions as ops meet them (in a real CLI process against the sandbox): a URL with a
 * control character or of absurd length is refused before SNS or the store sees it; a URL given to
 * `remove` is never echoed, however it is spelled; adding an endpoint twice changes nothing, and a
 * different raw setting is refused with how to change it; a Slack webhook leaves the store with its
 * last subscription or its audience; a deleted topic is named with its repair before anything is
 * written; and `migrate-webhooks` moves only what the relay could post to, reads the store for its
 * dry run, and asks before it writes anything.
 */
import { CreateSecretCommand, GetSecretValueCommand } from '@aws-sdk/client-secrets-manager';
import { DeleteTopicCommand } from '@aws-sdk/client-sns';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseWebhookMap, webhookShardName } from '#shared/slack-webhook-store';
import { type CliSandbox, startCliSandbox } from './support.ts';

let sandbox: CliSandbox;
beforeAll(async () => {
  sandbox = await startCliSandbox();
});
afterAll(async () => {
  await sandbox?.stop();
});

const slackUrl = (token: string) => `https://hooks.slack.com/services/T0/B0/${token}`;

/** The URL the webhook store holds for an audience, if any. */
async function stored(audienceId: string): Promise<string | undefined> {
  const store = `${sandbox.prefix}slack-webhooks/`;
  try {
    const { SecretString } = await sandbox.stack.clients.secrets.send(
      new GetSecretValueCommand({ SecretId: webhookShardName(store, audienceId), VersionStage: 'AWSCURRENT' }),
    );
    return parseWebhookMap(SecretString ?? '').get(audienceId);
  } catch {
    return undefined;
  }
}

const endpointsOf = async (audienceId: string) =>
  (await sandbox.cli(['--json', 'subscriptions', 'list', audienceId])).json<{ endpoint: string }[]>();

describe('webhook URLs ops type or paste', () => {
  it('refuses a control character or an absurd length in --https, naming where, never the URL', async () => {
    const before = await endpointsOf('markets-desk');
    const receiver = sandbox.stack.receivers.webhook.url;
    const results = await Promise.all(
      [`${receiver}/a\u001b[31mHiDdEn\nb`, `${receiver}/${'HiDdEn'.repeat(400)}`].map((url) =>
        sandbox.cli(['subscriptions', 'add', 'markets-desk', '--https', url, '--allow-internal-target']),
      ),
    );
    expect(results.map((result) => result.code)).toEqual([2, 2]);
    expect(results[0]?.stderr).toContain('space, control or non-ASCII character (character');
    expect(results[1]?.stderr).toContain('more than the 2048 a webhook URL can be');
    for (const result of results) expect(result.stdout + result.stderr).not.toContain('HiDdEn');
    expect(await endpointsOf('markets-desk')).toEqual(before);
    const slack = await sandbox.cli(['subscriptions', 'add', 'markets-desk', '--slack-webhook'], {
      input: slackUrl('HiDdEn'.repeat(400)),
    });
    expect(slack.code).toBe(2);
    expect(slack.stderr).toContain('it was not stored');
    expect(slack.stdout + slack.stderr).not.toContain('HiDdEn');
  });

  it('never echoes a URL given to remove, however it is spelled', async () => {
    for (const which of [
      'http://hooks.example.com/RmSeCrEt',
      'HTTPS://hooks.example.com/RmSeCrEt',
      ' https://hooks.example.com/RmSeCrEt',
      'hooks.example.com/RmSeCrEt',
    ]) {
      for (const json of [[], ['--json']]) {
        const result = await sandbox.cli([...json, 'subscriptions', 'remove', 'markets-desk', which, '--yes']);
        expect(result.code).toBe(3);
        expect(result.stdout + result.stderr).not.toContain('RmSeCrEt');
      }
    }
  });

  it('changes nothing when an endpoint is added twice, and refuses another raw setting with the fix', async () => {
    const url = `${sandbox.stack.receivers.webhook.url}/twice`;
    const add = (...flags: string[]) =>
      sandbox.cli(['subscriptions', 'add', 'partner-feed', '--https', url, '--allow-internal-target', ...flags]);
    const first = await add('--raw');
    expect(first.code, first.stderr).toBe(0);
    const listed = await endpointsOf('partner-feed');
    const again = await add('--raw');
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toContain('is subscribed to partner-feed already');
    const otherRaw = await add();
    expect(otherRaw.code).toBe(2);
    expect(otherRaw.stderr).toContain('already, with --raw; to change that, remove it first');
    expect(await endpointsOf('partner-feed')).toEqual(listed);
  });
});

describe('a Slack webhook in the store', () => {
  it('leaves the store with its last subscription, and with its audience', async () => {
    const added = await sandbox.cli(['subscriptions', 'add', 'chips-team', '--slack-webhook'], {
      input: slackUrl('LeAvEs1'),
    });
    expect(added.code, added.stderr).toBe(0);
    expect(await stored('chips-team')).toBe(slackUrl('LeAvEs1'));
    const listed = await sandbox.cli(['--json', 'subscriptions', 'list', 'chips-team']);
    // The sandbox's Slack subscription is its stand-in queue (a Lambda relay on a stack).
    const slack = listed
      .json<{ endpoint: string; subscriptionArn: string }[]>()
      .filter((row) => row.endpoint.startsWith(`${sandbox.prefix}slack-`));
    expect(slack).toHaveLength(1);
    const removed = await sandbox.cli([
      'subscriptions',
      'remove',
      'chips-team',
      slack[0]?.subscriptionArn ?? '',
      '--yes',
    ]);
    expect(removed.code, removed.stderr).toBe(0);
    expect(removed.stdout).toContain("the audience's Slack webhook URL was removed from the webhook store");
    expect(await stored('chips-team')).toBeUndefined();

    const created = await sandbox.cli(['audiences', 'create', 'slack-gone', '--time-zone', 'UTC']);
    expect(created.code, created.stderr).toBe(0);
    const again = await sandbox.cli(['subscriptions', 'add', 'slack-gone', '--slack-webhook'], {
      input: slackUrl('LeAvEs2'),
    });
    expect(again.code, again.stderr).toBe(0);
    const deleted = await sandbox.cli(['audiences', 'delete', 'slack-gone', '--delete-topic', '--yes']);
    expect(deleted.code, deleted.stderr).toBe(0);
    expect(deleted.stderr).toContain('removed its Slack webhook URL from the webhook store');
    expect(deleted.stderr).toContain('deleted topic');
    expect(deleted.stderr).not.toContain('kept topic');
    expect(await stored('slack-gone')).toBeUndefined();
    for (const output of [added, removed, again, deleted])
      expect(output.stdout + output.stderr).not.toContain('LeAvEs');
  });

  it('is not written for an audience whose topic is gone, and the error names the repair', async () => {
    const created = await sandbox.cli(['audiences', 'create', 'topic-gone', '--time-zone', 'UTC', '--json']);
    expect(created.code, created.stderr).toBe(0);
    const topicArn = created.json<{ results: { topicArn: string }[] }>().results[0]?.topicArn ?? '';
    await sandbox.stack.clients.sns.send(new DeleteTopicCommand({ TopicArn: topicArn }));
    const added = await sandbox.cli(['subscriptions', 'add', 'topic-gone', '--slack-webhook'], {
      input: slackUrl('NoTsToReD'),
    });
    expect(added.code).not.toBe(0);
    expect(added.stderr).toContain('audiences repair topic-gone');
    expect(added.stderr).not.toContain('sandbox down');
    expect(await stored('topic-gone')).toBeUndefined();
  });
});

describe('migrate-webhooks with values the relay could not use', () => {
  it('moves only usable URLs, reads the store for its dry run, and asks before writing anything', async () => {
    const { secrets } = sandbox.stack.clients;
    const legacy = `${sandbox.prefix}slack/`;
    const values: Record<string, string> = {
      'mig-plain': 'http://hooks.slack.com/services/T0/B0/PlAiNhTtP',
      'mig-junk': 'LEGACYGARBAGE not a url',
      'mig-escape': slackUrl('Es\u001bCaPe'),
      'mig-good': slackUrl('GoOdOnE'),
    };
    for (const [audienceId, value] of Object.entries(values)) {
      await secrets.send(new CreateSecretCommand({ Name: `${legacy}${audienceId}`, SecretString: value }));
    }
    // No --yes and no terminal: refused before the store is touched.
    const unasked = await sandbox.cli(['subscriptions', 'migrate-webhooks', '--delete-old-secrets']);
    expect(unasked.code).toBe(2);
    expect(await stored('mig-good')).toBeUndefined();

    const moved = await sandbox.cli(['--json', 'subscriptions', 'migrate-webhooks']);
    expect(moved.code, moved.stderr).toBe(0);
    const outcomes = (text: string) =>
      Object.fromEntries(
        JSON.parse(text)
          .audiences.filter((row: { audienceId: string }) => row.audienceId.startsWith('mig-'))
          .map((row: { audienceId: string; outcome: string }) => [row.audienceId, row.outcome]),
      );
    expect(outcomes(moved.stdout)).toMatchObject({
      'mig-good': 'moved',
      'mig-plain': expect.stringMatching(/^not moved: the URL /),
      'mig-junk': expect.stringMatching(/^not moved: the URL /),
      'mig-escape': expect.stringMatching(/^not moved: the URL has a space, control or non-ASCII character/),
    });
    expect(await stored('mig-good')).toBe(values['mig-good']);
    for (const audienceId of ['mig-plain', 'mig-junk', 'mig-escape']) expect(await stored(audienceId)).toBeUndefined();
    // The dry run now reads the store: what is there already is said so.
    const dry = await sandbox.cli(['--json', 'subscriptions', 'migrate-webhooks', '--dry-run']);
    expect(dry.code, dry.stderr).toBe(0);
    expect(outcomes(dry.stdout)['mig-good']).toBe('already in the store');
    for (const output of [unasked, moved, dry]) {
      expect(output.stdout + output.stderr).not.toMatch(/PlAiNhTtP|GoOdOnE|CaPe|GARBAGE/);
    }
  });
});
