/**
 * `news-alerts audiences …` and `news-alerts subscriptions …` end to end against moto server:
 * topics made with the stack's naming and a TLS-only policy, items validated like the run does,
 * subscribers added and removed, email owners told to confirm with authenticated unsubscribe,
 * and a Slack webhook URL that goes from stdin to Secrets Manager without ever being printed.
 */
import { GetSecretValueCommand } from '@aws-sdk/client-secrets-manager';
import {
  DeleteTopicCommand,
  GetTopicAttributesCommand,
  ListSubscriptionsByTopicCommand,
  ListTopicsCommand,
  SubscribeCommand,
  UnsubscribeCommand,
} from '@aws-sdk/client-sns';
import { NumberValue, PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseWebhookMap, webhookShardName } from '#shared/slack-webhook-store';
import { listItems } from '../../cli/items.ts';
import { pendingRows } from '../../cli/subscriptions.ts';
import { type CliSandbox, cliInProcess, cliWithEditBeforeWrite, setByHand, startCliSandbox } from './support.ts';

let sandbox: CliSandbox;
const rulesTable = () => ({ tableName: sandbox.descriptor.names.rulesTable, keyName: 'ruleId', noun: 'rule' });
const audience = (id: string) => sandbox.audience(id);

async function topicNames(): Promise<string[]> {
  const names: string[] = [];
  let NextToken: string | undefined;
  do {
    const page = await sandbox.stack.clients.sns.send(new ListTopicsCommand({ NextToken }));
    names.push(...(page.Topics ?? []).map((topic) => topic.TopicArn?.split(':').at(-1) ?? ''));
    NextToken = page.NextToken;
  } while (NextToken);
  return names.filter((name) => name.startsWith(sandbox.prefix));
}

// A sandbox of its own for every test: each starts from the example set, whatever ran before it
// (the tests pass in any order, e.g. with --sequence.shuffle).
beforeEach(async () => {
  sandbox = await startCliSandbox();
});
afterEach(async () => {
  await sandbox?.stop();
});

describe('audiences', () => {
  it('creates an audience with a topic named by the stack convention and a TLS-only policy, then lists, shows and updates it', async () => {
    const created = await sandbox.cli([
      '--actor',
      'erin',
      'audiences',
      'create',
      'ops-desk',
      '--name',
      'Ops desk',
      '--time-zone',
      'Europe/Berlin',
      '--quiet-hours',
      '22:00-07:00',
      '--daily-budget',
      '40',
    ]);
    expect(created.code, created.stderr).toBe(0);
    const topicName = `${sandbox.prefix}audience-ops-desk`;
    expect(await topicNames()).toContain(topicName);
    const item = await audience('ops-desk');
    expect(item).toMatchObject({
      audienceId: 'ops-desk',
      name: 'Ops desk',
      timeZone: 'Europe/Berlin',
      quietHours: { start: '22:00', end: '07:00' },
      dailyBudget: 40,
      version: 1,
      updatedBy: 'erin',
      topicArn: expect.stringMatching(new RegExp(`:${topicName}$`)),
    });
    const { Attributes } = await sandbox.stack.clients.sns.send(
      new GetTopicAttributesCommand({ TopicArn: String(item?.topicArn) }),
    );
    const policy = JSON.parse(Attributes?.Policy ?? '{}') as { Statement: Record<string, unknown>[] };
    expect(policy.Statement).toContainEqual(
      expect.objectContaining({
        Effect: 'Deny',
        Action: 'sns:Publish',
        Condition: { Bool: { 'aws:SecureTransport': 'false' } },
      }),
    );

    const list = await sandbox.cli(['--json', 'audiences', 'list']);
    expect(list.json<{ audienceId: string; rules: number; valid: boolean }[]>()).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ audienceId: 'ops-desk', rules: 0, valid: true }),
        expect.objectContaining({ audienceId: 'chips-team', rules: 3 }),
      ]),
    );

    const update = await sandbox.cli([
      'audiences',
      'update',
      'ops-desk',
      '--clear',
      'dailyBudget',
      '--delivery-mode',
      'digest',
      '--digest-times',
      '08:00,17:30',
    ]);
    expect(update.code, update.stderr).toBe(0);
    expect(update.stdout).toContain('updated ops-desk: version 1 → 2; previous: version 1');
    expect(update.stdout).toContain('dailyBudget: 40 → (none)');
    expect(await audience('ops-desk')).toMatchObject({
      deliveryMode: 'digest',
      digestTimes: ['08:00', '17:30'],
      version: 2,
    });
    expect(await audience('ops-desk')).not.toHaveProperty('dailyBudget');

    // A value given and cleared in one command, or an attribute the write sets itself, is refused
    // and nothing is written (the quiet hours given were dropped, and --clear version said "unchanged").
    const before = await audience('ops-desk');
    const [both, audit] = await Promise.all([
      sandbox.cli(['audiences', 'update', 'ops-desk', '--quiet-hours', '22:00-07:00', '--clear', 'quietHours']),
      sandbox.cli(['audiences', 'update', 'ops-desk', '--clear', 'version']),
    ]);
    expect(both.code, both.stderr).toBe(2);
    expect(both.stderr).toContain('--quiet-hours and --clear quietHours conflict');
    expect(audit.code, audit.stderr).toBe(2);
    expect(audit.stderr).toContain('--clear version: not an audience attribute you can clear (');
    expect(audit.stderr).not.toMatch(/can clear \([^)]*\b(version|updatedAt|audienceId)\b/);
    expect(await audience('ops-desk')).toEqual(before);

    const show = await sandbox.cli(['--json', 'audiences', 'show', 'chips-team']);
    expect(show.json()).toMatchObject({
      audienceId: 'chips-team',
      rules: ['chips-category', 'chips-keywords', 'typo-rule'],
      // The sandbox's audit queue.
      subscriptions: { sqs: 1 },
    });
  });

  it('audiences update refuses when the audience is edited in the DynamoDB console between its read and its write, version kept, and keeps that edit', async () => {
    const before = await audience('markets-desk');
    const updated = await cliWithEditBeforeWrite(
      sandbox,
      { table: 'audiences', id: 'markets-desk', name: 'dailyBudget', value: 7 },
      ['audiences', 'update', 'markets-desk', '--name', 'Markets (edited)'],
    );
    expect(updated.edited).toBe(true);
    expect(updated.code, updated.output).toBe(1);
    expect(updated.output).toContain('changed since it was read');
    expect(await audience('markets-desk')).toEqual({ ...before, dailyBudget: 7 });
  });

  it('audiences update is not refused for a number stored in a form JavaScript cannot hold (its guard compares what was stored)', async () => {
    // 5.00000000000000000001 reads as 5, and 1.5e30 cannot be written back as a JavaScript number.
    await setByHand(sandbox, 'audiences', 'markets-desk', 'dailyBudget', NumberValue.from('5.00000000000000000001'));
    const renamed = await sandbox.cli(['audiences', 'update', 'markets-desk', '--name', 'Markets X']);
    expect(renamed.code, renamed.stderr).toBe(0);
    expect(await audience('markets-desk')).toMatchObject({ name: 'Markets X', dailyBudget: 5, version: 2 });
    await setByHand(sandbox, 'audiences', 'markets-desk', 'dailyBudget', NumberValue.from('1.5e30'));
    const repaired = await sandbox.cli(['audiences', 'update', 'markets-desk', '--daily-budget', '5']);
    expect(repaired.code, repaired.stderr).toBe(0);
    expect(await audience('markets-desk')).toMatchObject({ dailyBudget: 5, version: 3 });
  });

  it('audiences update of an invalid audience written by hand lists what it changes, not the defaults the item leaves out', async () => {
    const { topicArn } = (await audience('markets-desk')) as { topicArn: string };
    await sandbox.stack.clients.documents.send(
      new PutCommand({
        TableName: sandbox.descriptor.names.audiencesTable,
        Item: { audienceId: 'bare-desk', name: 'Bare desk', topicArn, dailyBudget: 0 },
      }),
    );
    const repaired = await sandbox.cli(['audiences', 'update', 'bare-desk', '--daily-budget', '5']);
    expect(repaired.code, repaired.stderr).toBe(0);
    // Not `enabled: (none) → true`, `timeZone: (none) → "UTC"`...: the run reads those as defaults.
    const changed = repaired.stdout
      .split('\n')
      .filter((line) => line.startsWith('  '))
      .map((line) => line.trim());
    expect(changed).toEqual([
      'dailyBudget: 0 → 5',
      'repairs the stored audience, which the run skips: dailyBudget: must be at least 1',
    ]);
    expect(await audience('bare-desk')).toMatchObject({ dailyBudget: 5, version: 1 });
  });

  it('audiences validate says a file would repair an audience the run skips, not that it is unchanged', async () => {
    const { topicArn } = (await audience('markets-desk')) as { topicArn: string };
    const stored = { audienceId: 'text-version-desk', name: 'Text version', topicArn };
    await sandbox.stack.clients.documents.send(
      new PutCommand({ TableName: sandbox.descriptor.names.audiencesTable, Item: { ...stored, version: '3' } }),
    );
    const validated = await sandbox.cli([
      '--json',
      'audiences',
      'validate',
      sandbox.file('tv.json', JSON.stringify(stored)),
    ]);
    expect(validated.code, validated.stderr).toBe(0);
    expect(validated.json<{ audiences: { status: string }[] }>().audiences).toMatchObject([
      { status: 'repairs the stored audience, which the run skips' },
    ]);
  });

  it('a file naming a topic that does not exist is told what the file can do, not to omit a flag', async () => {
    const { topicArn } = (await audience('markets-desk')) as { topicArn: string };
    const missing = topicArn.replace(/[^:]+$/, `${sandbox.prefix}audience-no-such-topic`);
    const file = sandbox.file('missing-topic.json', JSON.stringify({ audienceId: 'missing-topic', topicArn: missing }));
    const validated = await sandbox.cli(['audiences', 'validate', file]);
    expect(validated.code, validated.stderr).toBe(2);
    expect(validated.stderr).toContain(
      `the topic ${missing} does not exist; create it first or leave topicArn out of the file`,
    );
    expect(validated.stderr).not.toContain('--topic-arn');
  });

  it('audiences show tells an audience stored without a topic how to give it one', async () => {
    await sandbox.stack.clients.documents.send(
      new PutCommand({
        TableName: sandbox.descriptor.names.audiencesTable,
        Item: { audienceId: 'no-topic-desk', name: 'No topic' },
      }),
    );
    const shown = await sandbox.cli(['audiences', 'show', 'no-topic-desk']);
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stderr).toMatch(
      /the audience has no topicArn: give it one with 'news-alerts .*audiences update no-topic-desk --topic-arn <arn>'/,
    );
  });

  it('audiences put --file refuses when the audience is edited by hand between its read and its write, and keeps that edit', async () => {
    const exported = await sandbox.cli(['audiences', 'export', 'markets-desk', '--format', 'json']);
    expect(exported.code, exported.stderr).toBe(0);
    const document = JSON.parse(exported.stdout) as { audiences: Record<string, unknown>[] };
    const file = sandbox.file(
      'markets.json',
      JSON.stringify({ audiences: document.audiences.map((item) => ({ ...item, name: 'Markets (file)' })) }),
    );
    const before = await audience('markets-desk');
    const put = await cliWithEditBeforeWrite(
      sandbox,
      { table: 'audiences', id: 'markets-desk', name: 'dailyBudget', value: 7 },
      ['audiences', 'put', '--file', file],
    );
    expect(put.edited).toBe(true);
    expect(put.code, put.output).toBe(1);
    expect(put.output).toContain('changed since it was read');
    expect(await audience('markets-desk')).toEqual({ ...before, dailyBudget: 7 });
  });

  it('stores a time zone typed in another case as IANA spells it, and a hand-written one once the audience is written again', async () => {
    const created = await sandbox.cli(['audiences', 'create', 'case-desk', '--time-zone', 'europe/london']);
    expect(created.code, created.stderr).toBe(0);
    expect(await audience('case-desk')).toMatchObject({ timeZone: 'Europe/London' });
    // Written in the DynamoDB console: an update of something else writes it as IANA spells it.
    await setByHand(sandbox, 'audiences', 'case-desk', 'timeZone', 'asia/seoul');
    const renamed = await sandbox.cli(['audiences', 'update', 'case-desk', '--name', 'Case desk']);
    expect(renamed.code, renamed.stderr).toBe(0);
    expect(await audience('case-desk')).toMatchObject({ timeZone: 'Asia/Seoul', name: 'Case desk' });
    // An alias stays the name given.
    const alias = await sandbox.cli(['audiences', 'update', 'case-desk', '--time-zone', 'US/Pacific']);
    expect(alias.code, alias.stderr).toBe(0);
    expect(await audience('case-desk')).toMatchObject({ timeZone: 'US/Pacific' });
  });

  it('refuses a name with a control or text-direction character where a person writes it, and keeps one stored already', async () => {
    const created = await sandbox.cli(['audiences', 'create', 'ctl-desk', '--name', 'Control desk']);
    expect(created.code, created.stderr).toBe(0);
    const [withEscape, override] = await Promise.all([
      sandbox.cli(['audiences', 'update', 'ctl-desk', '--name', 'Chips\u001b[31m team']),
      sandbox.cli(['audiences', 'create', 'ctl-desk-2', '--name', 'Desk \u202etxt.exe']),
    ]);
    expect(withEscape.code).toBe(2);
    expect(withEscape.stderr).toContain(
      'command line: audience "ctl-desk": name holds a control or text-direction character (U+001B at character 6)',
    );
    expect(override.code).toBe(2);
    expect(override.stderr).toContain('name holds a control or text-direction character (U+202E at character 6)');
    expect(await audience('ctl-desk')).toMatchObject({ name: 'Control desk' });
    expect(await audience('ctl-desk-2')).toBeUndefined();
    // Typed in the DynamoDB console: kept, and every other edit still goes through.
    await setByHand(sandbox, 'audiences', 'ctl-desk', 'name', 'Old\u0007desk');
    const edited = await sandbox.cli(['audiences', 'update', 'ctl-desk', '--daily-budget', '5']);
    expect(edited.code, edited.stderr).toBe(0);
    expect(await audience('ctl-desk')).toMatchObject({ name: 'Old\u0007desk', dailyBudget: 5 });
  });

  it('refuses bad input with the reason and creates nothing: invalid setting, bad id, duplicate, invalid file entry', async () => {
    const topicsBefore = await topicNames();
    const file = sandbox.file(
      'audiences.yaml',
      'audiences:\n  - audienceId: good-desk\n    name: Good\n  - audienceId: bad-desk\n    smsMaxSegments: 40\n',
    );
    const [badZone, badId, duplicate, fromFile, unknown] = await Promise.all([
      sandbox.cli(['audiences', 'create', 'moon-desk', '--time-zone', 'Moon/Base']),
      sandbox.cli(['audiences', 'create', 'desk.one']),
      sandbox.cli(['audiences', 'create', 'chips-team']),
      sandbox.cli(['audiences', 'create', '--file', file]),
      sandbox.cli(['audiences', 'update', 'no-such-desk', '--name', 'x']),
    ]);
    expect(badZone.code).toBe(2);
    expect(badZone.stderr).toContain('timeZone: must be an IANA time zone');
    expect(badId.code).toBe(2);
    expect(badId.stderr).toContain('is not a valid SNS topic name');
    expect(duplicate.code).toBe(2);
    expect(duplicate.stderr).toContain('audience "chips-team" already exists');
    expect(fromFile.code).toBe(2);
    expect(fromFile.stderr).toMatch(/audiences\.yaml:5: audience "bad-desk": smsMaxSegments: /);
    expect(await topicNames()).toEqual(topicsBefore);
    expect(await audience('moon-desk')).toBeUndefined();
    expect(await audience('good-desk')).toBeUndefined();
    expect(unknown.code).toBe(3);
    expect(unknown.stderr).toContain('audience no-such-desk does not exist');
  });

  it('deletes an audience only together with its rules, and its topic on request', async () => {
    const refused = await sandbox.cli(['audiences', 'delete', 'partner-feed', '--yes']);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('still has rule(s) partner-elections');
    expect(await audience('partner-feed')).toBeDefined();

    const deleted = await sandbox.cli([
      '--json',
      'audiences',
      'delete',
      'partner-feed',
      '--with-rules',
      '--delete-topic',
      '--yes',
    ]);
    expect(deleted.code, deleted.stderr).toBe(0);
    expect(deleted.json()).toMatchObject({
      audienceId: 'partner-feed',
      deletedRules: ['partner-elections'],
      topicDeleted: true,
    });
    expect(await audience('partner-feed')).toBeUndefined();
    expect((await listItems(sandbox.stack.clients.documents, rulesTable())).map((rule) => rule.ruleId)).not.toContain(
      'partner-elections',
    );
    expect(await topicNames()).not.toContain(`${sandbox.prefix}audience-partner-feed`);
  });

  it('put back on the topic it kept, an audience is not sent to find subscribers: it says whose topic it uses', async () => {
    const added = await sandbox.cli(['subscriptions', 'add', 'partner-feed', '--email', 'partner@example.com']);
    expect(added.code, added.stderr).toBe(0);
    const deleted = await sandbox.cli(['--json', 'audiences', 'delete', 'partner-feed', '--with-rules', '--yes']);
    expect(deleted.code, deleted.stderr).toBe(0);
    const topicArn = String((deleted.json() as { audiences: { topicArn: string }[] }).audiences[0]?.topicArn);

    const restored = await sandbox.cli(['audiences', 'put', '--file', sandbox.file('partner.json', deleted.stdout)]);
    expect(restored.code, restored.stderr).toBe(0);
    expect(restored.stderr).toContain(
      `audience partner-feed uses the existing topic ${topicArn}: whoever is subscribed there receives its alerts`,
    );
    expect(restored.stderr).not.toContain('Next:');

    // A new audience still gets the first step, and with several new ones each is named.
    const fresh = await sandbox.cli(['audiences', 'create', 'new-desk']);
    expect(fresh.code, fresh.stderr).toBe(0);
    expect(fresh.stderr).toContain('Next: subscribe people, e.g.');
    const file = sandbox.file(
      'three.json',
      JSON.stringify({ audiences: ['north-desk', 'south-desk', 'west-desk'].map((audienceId) => ({ audienceId })) }),
    );
    const several = await sandbox.cli(['audiences', 'put', '--file', file]);
    expect(several.code, several.stderr).toBe(0);
    expect(several.stderr).toMatch(
      /Next: subscribe people, e\.g\. .* subscriptions add north-desk .*\(and the same for south-desk, west-desk\)/,
    );

    // Deleted again with its topic kept, then made anew by name: its subscriber is still on the
    // topic, not waiting for a repair or for people to be subscribed.
    expect((await sandbox.cli(['audiences', 'delete', 'partner-feed', '--yes'])).code).toBe(0);
    const again = await sandbox.cli(['audiences', 'create', 'partner-feed']);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).not.toContain('audiences repair');
    expect(again.stderr).toContain(`audience partner-feed uses the existing topic ${topicArn}`);
    expect(again.stderr).not.toContain('Next:');
  });

  it('re-created by name after its kept topic was deleted by hand, an audience is sent to subscribe people: records alone do not say anyone is there (found by review)', async () => {
    const { sns } = sandbox.stack.clients;
    expect((await sandbox.cli(['audiences', 'create', 'ghost-desk'])).code).toBe(0);
    expect((await sandbox.cli(['subscriptions', 'add', 'ghost-desk', '--email', 'ghost@example.com'])).code).toBe(0);
    const deleted = await sandbox.cli(['--json', 'audiences', 'delete', 'ghost-desk', '--yes']);
    expect(deleted.code, deleted.stderr).toBe(0);
    const topicArn = String((deleted.json() as { audiences: { topicArn: string }[] }).audiences[0]?.topicArn);
    // Deleted in the SNS console: SNS takes its subscriptions with it (moto needs telling).
    const listed = await sns.send(new ListSubscriptionsByTopicCommand({ TopicArn: topicArn }));
    for (const { SubscriptionArn } of listed.Subscriptions ?? [])
      await sns.send(new UnsubscribeCommand({ SubscriptionArn }));
    await sns.send(new DeleteTopicCommand({ TopicArn: topicArn }));

    const again = await sandbox.cli(['audiences', 'create', 'ghost-desk']);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).not.toContain('uses the existing topic');
    expect(again.stderr).toContain('Next: subscribe people, e.g.');
  });

  it('made anew on the topic it kept, whose only subscriber was added by hand in SNS, an audience is not sent to subscribe people (found by review)', async () => {
    const { sns } = sandbox.stack.clients;
    expect((await sandbox.cli(['audiences', 'create', 'hand-desk'])).code).toBe(0);
    const deleted = await sandbox.cli(['--json', 'audiences', 'delete', 'hand-desk', '--yes']);
    expect(deleted.code, deleted.stderr).toBe(0);
    const topicArn = String((deleted.json() as { audiences: { topicArn: string }[] }).audiences[0]?.topicArn);
    // The kept topic, subscribed to in the SNS console: no subscriber record says so.
    await sns.send(
      new SubscribeCommand({
        TopicArn: topicArn,
        Protocol: 'email',
        Endpoint: 'by-hand@example.com',
        ReturnSubscriptionArn: true,
      }),
    );
    const again = await sandbox.cli(['audiences', 'create', 'hand-desk']);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toContain(`audience hand-desk uses the existing topic ${topicArn}`);
    expect(again.stderr).not.toContain('Next:');
  });

  it('a restore whose recorded subscribers cannot be read says so and names the repair, not "subscribe people"', async () => {
    expect((await sandbox.cli(['audiences', 'create', 'lost-desk'])).code).toBe(0);
    expect((await sandbox.cli(['subscriptions', 'add', 'lost-desk', '--sms', '+821055512345'])).code).toBe(0);
    const deleted = await sandbox.cli(['--json', 'audiences', 'delete', 'lost-desk', '--delete-topic', '--yes']);
    expect(deleted.code, deleted.stderr).toBe(0);
    const file = sandbox.file('lost.json', deleted.stdout);
    const restored = await cliInProcess(sandbox, ['audiences', 'put', '--file', file], (command) => {
      if (
        command instanceof QueryCommand &&
        command.input.ExpressionAttributeValues?.[':pk'] === 'subscribers#lost-desk'
      ) {
        throw Object.assign(new Error('not allowed'), { name: 'AccessDeniedException' });
      }
    });
    expect(restored.code, restored.output).toBe(0);
    expect(restored.output).toContain(
      'audience lost-desk: its recorded subscribers could not be read (AccessDeniedException); if it was deleted',
    );
    expect(restored.output).toMatch(/'news-alerts .*audiences repair lost-desk' subscribes again those recorded then/);
    expect(restored.output).not.toContain('Next: subscribe people');
  });

  it('with its topic: keeps the record of who subscribed 30 days for a restore, then lets it expire; a repair keeps what it subscribes again', async () => {
    const { documents } = sandbox.stack.clients;
    const records = async () =>
      (
        await documents.send(
          new QueryCommand({
            TableName: sandbox.descriptor.names.stateTable,
            KeyConditionExpression: 'pk = :pk',
            ExpressionAttributeValues: { ':pk': 'subscribers#gone-desk' },
          }),
        )
      ).Items ?? [];
    const expiryOf = async (protocol: string) =>
      (await records()).find((item) => item.protocol === protocol)?.expiresAt;
    expect((await sandbox.cli(['audiences', 'create', 'gone-desk', '--time-zone', 'UTC'])).code).toBe(0);
    for (const flag of [
      ['--sms', '+821055512345'],
      ['--email', 'gone@example.com'],
      ['--https', `${sandbox.stack.receivers.webhook.url}/hook/gone`, '--allow-internal-target'],
    ]) {
      const added = await sandbox.cli(['subscriptions', 'add', 'gone-desk', ...flag]);
      expect(added.code, added.stderr).toBe(0);
    }
    // Subscribed: no expiry.
    expect((await records()).map((item) => item.expiresAt)).toEqual([undefined, undefined, undefined]);

    const deleted = await sandbox.cli(['--json', 'audiences', 'delete', 'gone-desk', '--delete-topic', '--yes']);
    expect(deleted.code, deleted.stderr).toBe(0);
    const result = deleted.json<{ subscriberRecordsExpiring: number; subscriberRecordsExpireAt: string }>();
    expect(result.subscriberRecordsExpiring).toBe(3);
    const expiresAt = Date.parse(result.subscriberRecordsExpireAt) / 1000;
    expect((await records()).map((item) => item.expiresAt)).toEqual([expiresAt, expiresAt, expiresAt]);
    // One whose expiry has passed (TTL deletes a day or two late) is gone for a repair too.
    await documents.send(
      new PutCommand({
        TableName: sandbox.descriptor.names.stateTable,
        Item: {
          pk: 'subscribers#gone-desk',
          sk: 'sms#expired',
          audienceId: 'gone-desk',
          protocol: 'sms',
          endpoint: '+821055500000',
          addedAt: 1,
          addedBy: 'test',
          expiresAt: 1,
        },
      }),
    );

    // One written by hand under another key than its endpoint's digest: kept by the key it has.
    await documents.send(
      new PutCommand({
        TableName: sandbox.descriptor.names.stateTable,
        Item: {
          pk: 'subscribers#gone-desk',
          sk: 'sms#by-hand',
          audienceId: 'gone-desk',
          protocol: 'sms',
          endpoint: '+821055577777',
          addedAt: 1,
          addedBy: 'test',
          expiresAt,
        },
      }),
    );

    // Undone within the 30 days: restored, then repaired. What it subscribed again is kept; the
    // HTTPS endpoint, whose URL left the store with the topic, is not restored and keeps expiring.
    const restored = await sandbox.cli(['audiences', 'put', '--file', sandbox.file('gone.json', deleted.stdout)]);
    expect(restored.code, restored.stderr).toBe(0);
    // The next step is the repair (the three subscribed and the one by hand; not the expired one).
    expect(restored.stderr).toContain(
      "audiences repair gone-desk' subscribes again the subscribers recorded when it was deleted (4 recorded; it says which it cannot)",
    );
    expect(restored.stderr).not.toContain('Next: subscribe people');
    const repaired = await sandbox.cli(['--json', 'audiences', 'repair', 'gone-desk', '--yes']);
    expect(repaired.code, repaired.stderr).toBe(0);
    const report = repaired.json<{ subscriptions: { protocol: string; endpoint: string; result: string }[] }>();
    expect(report.subscriptions.map((entry) => [entry.protocol, entry.result]).sort()).toEqual([
      ['email', 'restored'],
      ['https', 'not restored'],
      ['sms', 'restored'],
      ['sms', 'restored'],
    ]);
    // An email subscription must confirm before its record is kept; a later repair that finds it
    // confirmed keeps it (moto confirms at once).
    expect(await expiryOf('email')).toBe(expiresAt);
    expect(await expiryOf('https')).toBe(expiresAt);
    const again = await sandbox.cli(['--json', 'audiences', 'repair', 'gone-desk', '--yes']);
    expect(again.code, again.stderr).toBe(0);
    expect(await expiryOf('email')).toBeUndefined();
    expect(await expiryOf('https')).toBe(expiresAt);
    const sms = (await records()).filter((item) => item.protocol === 'sms');
    expect(sms.map((item) => [item.endpoint, item.expiresAt]).sort()).toEqual([
      ['+821055500000', 1],
      ['+821055512345', undefined],
      ['+821055577777', undefined],
    ]);
  });
});

describe('subscriptions', () => {
  it('adds email, SMS and HTTPS subscribers, guides email owners to authenticated unsubscribe, lists, removes', async () => {
    const email = await sandbox.cli(['subscriptions', 'add', 'markets-desk', '--email', 'desk@example.com']);
    expect(email.code, email.stderr).toBe(0);
    expect(email.stdout).toContain('--authenticate-on-unsubscribe true');
    // The hint names the target the command ran against (here the test's sandbox descriptor).
    expect(email.stdout).toMatch(/news-alerts --sandbox-file \S+ subscriptions confirm markets-desk --token <Token>/);

    const [badPhone, twoKinds, plainHttp, unknown, smsAdded] = await Promise.all([
      sandbox.cli(['subscriptions', 'add', 'markets-desk', '--sms', '0101234']),
      sandbox.cli(['subscriptions', 'add', 'markets-desk', '--sms', '+821012345678', '--email', 'x@example.com']),
      sandbox.cli(['subscriptions', 'add', 'markets-desk', '--https', 'http://hooks.example.com/x']),
      sandbox.cli(['subscriptions', 'add', 'no-such-desk', '--email', 'x@example.com']),
      sandbox.cli(['subscriptions', 'add', 'markets-desk', '--sms', '+821012345678']),
    ]);
    expect(badPhone.code).toBe(2);
    expect(badPhone.stderr).toContain('is not an E.164 phone number');
    // As strict as SES email: no control character, quote or display name reaches SNS or a record.
    for (const hostile of [
      'a@e.com\u001b[2J',
      '"x"@example.com',
      'Kim <kim@example.com>',
      'a@e.com\nBcc: c@evil.com',
    ]) {
      const refused = await sandbox.cli(['subscriptions', 'add', 'markets-desk', '--email', hostile]);
      expect(refused.code, hostile).toBe(2);
      expect(refused.stderr).toContain('--email: not a usable email address');
      expect(refused.stderr).not.toContain('\u001b');
    }
    // What surrounds an address (a line break, a byte-order mark, spaces) does not reach SNS: the
    // address is subscribed as SES email keeps it, the domain lower-cased.
    const padded = await sandbox.cli([
      '--json',
      'subscriptions',
      'add',
      'markets-desk',
      '--email',
      '\ufeff Pad@Example.COM\u2028\n',
    ]);
    expect(padded.code, padded.stderr).toBe(0);
    const endpoints = (await sandbox.cli(['--json', 'subscriptions', 'list', 'markets-desk']))
      .json<{ endpoint: string }[]>()
      .map((row) => row.endpoint);
    expect(endpoints).toContain('Pad@example.com');
    expect(endpoints.filter((endpoint) => /pad@/i.test(endpoint))).toEqual(['Pad@example.com']);
    expect((await sandbox.cli(['subscriptions', 'remove', 'markets-desk', 'Pad@example.com', '--yes'])).code).toBe(0);
    expect(twoKinds.code).toBe(2);
    expect(twoKinds.stderr).toContain('give exactly one of');
    expect(plainHttp.code).toBe(2);
    expect(unknown.code).toBe(3);
    expect(smsAdded.code, smsAdded.stderr).toBe(0);
    // The sandbox's SNS posts to https subscribers itself, during every publish: a host off this
    // machine is refused before anything is subscribed (it broke the run's PublishBatch calls).
    const publicHost = await sandbox.cli([
      'subscriptions',
      'add',
      'markets-desk',
      '--https',
      'https://hooks.example.com/in/t0ken-s3cret',
    ]);
    expect(publicHost.code).toBe(2);
    expect(publicHost.stderr).toContain('hooks.example.com is not a loopback host; nothing was subscribed');
    expect(publicHost.stderr).not.toContain('t0ken-s3cret');
    // NAT64 of 127.0.0.1 is internal, but another machine: refused even with --allow-internal-target.
    const nat64 = await sandbox.cli([
      'subscriptions',
      'add',
      'markets-desk',
      '--https',
      'https://[64:ff9b::7f00:1]/in',
      '--allow-internal-target',
    ]);
    expect(nat64.code).toBe(2);
    expect(nat64.stderr).toContain('[64:ff9b::7f00:1] is not a loopback host');
    const https = await sandbox.cli([
      'subscriptions',
      'add',
      'markets-desk',
      '--https',
      `${sandbox.stack.receivers.webhook.url}/in/t0ken-s3cret`,
      '--allow-internal-target',
      '--raw',
    ]);
    expect(https.code, https.stderr).toBe(0);
    expect(https.stdout + https.stderr).not.toContain('t0ken-s3cret');

    const list = await sandbox.cli(['--json', 'subscriptions', 'list', 'markets-desk']);
    const rows = list.json<{ protocol: string; endpoint: string; status: string; subscriptionArn: string }[]>();
    expect(rows.map((row) => [row.protocol, row.endpoint])).toEqual(
      expect.arrayContaining([
        ['email', 'desk@example.com'],
        ['sms', '+821012345678'],
        ['https', `${sandbox.stack.receivers.webhook.url}/…`],
      ]),
    );
    expect(list.stdout).not.toContain('t0ken-s3cret');
    const table = await sandbox.cli(['subscriptions', 'list', 'markets-desk']);
    expect(table.stdout).not.toContain('t0ken-s3cret');

    const sms = rows.find((row) => row.protocol === 'sms');
    const removeById = await sandbox.cli([
      'subscriptions',
      'remove',
      'markets-desk',
      String(sms?.subscriptionArn.split(':').at(-1)),
      '--yes',
    ]);
    expect(removeById.code, removeById.stderr).toBe(0);
    const removeByEndpoint = await sandbox.cli([
      'subscriptions',
      'remove',
      'markets-desk',
      'desk@example.com',
      '--yes',
    ]);
    expect(removeByEndpoint.code).toBe(0);
    const after = (await sandbox.cli(['--json', 'subscriptions', 'list', 'markets-desk'])).json<
      { protocol: string }[]
    >();
    expect(after.map((row) => row.protocol).sort()).toEqual(['https', 'sqs']);
    const gone = await sandbox.cli(['subscriptions', 'remove', 'markets-desk', 'desk@example.com', '--yes']);
    expect(gone.code).toBe(3);
    // The message names what was given: an address as typed, a URL masked, nothing that may be a secret.
    expect(gone.stderr).toContain('audience markets-desk has no subscription "desk@example.com"');
    const [url, odd] = await Promise.all([
      sandbox.cli(['subscriptions', 'remove', 'markets-desk', 'https://127.0.0.1:9/in/t0ken-s3cret', '--yes']),
      sandbox.cli(['subscriptions', 'remove', 'markets-desk', 'x/t0ken-s3cret', '--yes']),
    ]);
    expect(url.stderr).toContain('no subscription https://127.0.0.1:9/… (the URL given, masked)');
    expect(odd.stderr).toContain('no subscription (not shown:');
    for (const result of [url, odd]) expect(result.stderr).not.toContain('t0ken-s3cret');

    // moto confirms every subscription at once, so nothing is pending there.
    const pending = await sandbox.cli(['subscriptions', 'pending']);
    expect(pending.code).toBe(0);
    // Piped, the table is TSV (its header alone) and the sentence goes to stderr.
    expect(pending.stdout + pending.stderr).toContain('no subscriptions are waiting for confirmation');
  });

  it('stores a Slack webhook URL read from stdin in the webhook store, subscribes the relay, and never prints it', async () => {
    const url = 'https://hooks.slack.com/services/T0001/B0002/sUp3rSeCrEt';
    const added = await sandbox.cli(['--json', 'subscriptions', 'add', 'chips-team', '--slack-webhook'], {
      input: `${url}\n`,
    });
    expect(added.code, added.stderr).toBe(0);
    expect(added.stdout + added.stderr).not.toContain('sUp3rSeCrEt');
    // One of the store's few secrets (a map of audience id → URL), not a secret of the audience's own.
    const secretId = webhookShardName(`${sandbox.prefix}slack-webhooks/`, 'chips-team');
    expect(added.json()).toMatchObject({ secretId, secretAction: 'stored', webhook: 'https://hooks.slack.com/…' });
    const shard = async () =>
      parseWebhookMap(
        (
          await sandbox.stack.clients.secrets.send(
            new GetSecretValueCommand({ SecretId: secretId, VersionStage: 'AWSCURRENT' }),
          )
        ).SecretString ?? '',
      );
    expect((await shard()).get('chips-team')).toBe(url);
    const list = (await sandbox.cli(['--json', 'subscriptions', 'list', 'chips-team'])).json<
      { protocol: string; endpoint: string }[]
    >();
    expect(list).toContainEqual(
      expect.objectContaining({ protocol: 'sqs', endpoint: `${sandbox.prefix}slack-chips-team` }),
    );

    // Replacing the URL changes that audience's entry alone.
    const replaced = await sandbox.cli(['subscriptions', 'add', 'chips-team', '--slack-webhook'], {
      input: `${url}-v2`,
    });
    expect(replaced.stdout).toContain(
      `stored the webhook URL (https://hooks.slack.com/…) for chips-team in ${secretId}`,
    );
    expect((await shard()).get('chips-team')).toBe(`${url}-v2`);

    const [empty, notHttps] = await Promise.all([
      sandbox.cli(['subscriptions', 'add', 'chips-team', '--slack-webhook'], { input: '' }),
      sandbox.cli(['subscriptions', 'add', 'chips-team', '--slack-webhook'], { input: 'http://hooks.slack.com/x' }),
    ]);
    expect(empty.code).toBe(2);
    expect(empty.stderr).toContain('no webhook URL given');
    expect(notHttps.code).toBe(2);
    expect(notHttps.stderr).not.toContain('hooks.slack.com/x');
  });
});

describe('pending confirmations', () => {
  it('are the subscriptions SNS lists with the ARN PendingConfirmation', () => {
    const rows = pendingRows('markets-desk', [
      { Protocol: 'email', Endpoint: 'a@example.com', SubscriptionArn: 'PendingConfirmation' },
      { Protocol: 'email', Endpoint: 'b@example.com', SubscriptionArn: 'arn:aws:sns:us-east-1:1:t:abc' },
      { Protocol: 'https', Endpoint: 'https://hooks.example.com/secret', SubscriptionArn: 'PendingConfirmation' },
    ]);
    expect(rows).toEqual([
      {
        audienceId: 'markets-desk',
        protocol: 'email',
        endpoint: 'a@example.com',
        status: 'pending confirmation',
        subscriptionArn: undefined,
      },
      {
        audienceId: 'markets-desk',
        protocol: 'https',
        endpoint: 'https://hooks.example.com/…',
        status: 'pending confirmation',
        subscriptionArn: undefined,
      },
    ]);
  });
});
