/**
 * `news-alerts deliveries` end to end (issue 11, item 8): after a `--local run`, what the
 * subscribers of an audience created with the CLI received is shown per channel (email subject
 * and body, SMS text, the structured JSON of queue and webhook subscribers), read without
 * consuming the audit queue; against a deployed stack the command says it only sees the sandbox.
 */
import { DeleteTopicCommand, ListSubscriptionsByTopicCommand } from '@aws-sdk/client-sns';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CliSandbox, runCli, startCliSandbox } from './support.ts';

let sandbox: CliSandbox;
beforeAll(async () => {
  // Its own moto: `deliveries` reads moto's state dump (see startCliSandbox).
  sandbox = await startCliSandbox({ ownMoto: true });
});
afterAll(async () => {
  await sandbox?.stop();
});

/** A Slack incoming-webhook URL (a credential; the sandbox never calls it). */
const webhookUrl = 'https://hooks.slack.com/services/T0000/B0000/deliveries-test-secret';

interface Received {
  channel: string;
  endpoint: string;
  subject?: string;
  text?: string;
  json?: { newsAlerts?: { deliveryId?: string } };
}

interface DeliveriesJson {
  audiences: {
    audienceId: string;
    total: number;
    subscribers: { channel: string; endpoint: string }[];
    deliveries: { deliveryId: string; kind: string; sentAt: string; received: Received[] }[];
  }[];
}

interface RunJson {
  summary: { status: string; audiences: Record<string, { published: number }>; reading?: { counted?: unknown } };
}

describe('deliveries', () => {
  it('shows what each subscriber of an audience created with the CLI received, per channel, without consuming it', async () => {
    const create = await sandbox.cli(['audiences', 'create', 'rates-watch', '--name', 'Rates watch']);
    expect(create.code, create.stderr).toBe(0);
    const rules = sandbox.file(
      'rates.yaml',
      'ruleId: rates-watch-all\naudienceId: rates-watch\ndescription: Economy news\ncategories: ["002*"]\n',
    );
    expect((await sandbox.cli(['rules', 'put', '--file', rules])).code).toBe(0);
    for (const subscriber of [['--email', 'rates@example.com'], ['--sms', '+15555550123'], ['--slack-webhook']]) {
      const added = await sandbox.cli(['subscriptions', 'add', 'rates-watch', ...subscriber], {
        input: `${webhookUrl}\n`,
      });
      expect(added.code, added.stderr).toBe(0);
    }

    const run = await sandbox.cli(['--json', 'run']);
    expect(run.code, run.stderr).toBe(0);
    const sent = run.json<RunJson>().summary.audiences['rates-watch']?.published ?? 0;
    expect(sent).toBeGreaterThan(1);
    // Wired like the Lambda function: it counts the days it reads, so late articles are rechecked
    // within LATE_RECHECK_MINUTES instead of waiting hours for a full sweep.
    expect(run.json<RunJson>().summary.reading?.counted).toBeDefined();

    const shown = await sandbox.cli(['--json', 'deliveries', 'rates-watch']);
    expect(shown.code, shown.stderr).toBe(0);
    const [audience] = shown.json<DeliveriesJson>().audiences;
    expect(audience?.audienceId).toBe('rates-watch');
    expect(audience?.total).toBe(sent);
    expect(audience?.deliveries).toHaveLength(Math.min(sent, 20));
    expect(audience?.subscribers.map((subscriber) => subscriber.channel).sort()).toEqual(['email', 'slack', 'sms']);
    for (const delivery of audience?.deliveries ?? []) {
      expect(delivery.deliveryId.startsWith('rates-watch|')).toBe(true);
      const email = delivery.received.find((received) => received.channel === 'email');
      expect(email).toMatchObject({ endpoint: 'rates@example.com', subject: expect.stringContaining('[Rates watch]') });
      expect(email?.text).toContain('Why you got this:');
      const sms = delivery.received.find((received) => received.channel === 'sms');
      expect(sms?.text).toMatch(/https:\/\//);
      // Slack: the relay's own rendering of the message (its blocks' text).
      const slack = delivery.received.find((received) => received.channel === 'slack');
      expect(slack?.endpoint).toBe(`stand-in queue ${sandbox.prefix}slack-rates-watch`);
      expect(slack?.text).toMatch(/^\u{1F4F0} /u);
    }
    // The webhook URL is a credential: never printed.
    expect(shown.stdout).not.toContain(webhookUrl);
    // Newest last.
    const times = (audience?.deliveries ?? []).map((delivery) => Date.parse(delivery.sentAt));
    expect(times).toEqual([...times].sort((a, b) => a - b));

    // Reading did not consume: the same again, and --limit keeps the newest.
    const again = await sandbox.cli(['--json', 'deliveries', 'rates-watch', '--limit', '1']);
    const [limited] = again.json<DeliveriesJson>().audiences;
    expect(limited?.total).toBe(sent);
    expect(limited?.deliveries.map((delivery) => delivery.deliveryId)).toEqual([
      audience?.deliveries.at(-1)?.deliveryId,
    ]);

    // The human form: per notification, what each channel showed.
    const human = await sandbox.cli(['deliveries', 'rates-watch', '--limit', '2']);
    expect(human.code, human.stderr).toBe(0);
    expect(human.stdout).toContain(`=== rates-watch: ${sent} notification(s), newest 2 shown`);
    expect(human.stdout).toContain('> email rates@example.com');
    expect(human.stdout).toContain('Subject: [Rates watch]');
    expect(human.stdout).toContain('> sms +15555550123');

    // Every audience is listed; one without subscribers still shows what its topic sent.
    const all = (await sandbox.cli(['--json', 'deliveries'])).json<DeliveriesJson>();
    const markets = all.audiences.find((entry) => entry.audienceId === 'markets-desk');
    expect(markets?.total).toBe(run.json<RunJson>().summary.audiences['markets-desk']?.published);
    expect(markets?.subscribers).toEqual([]);
  });

  it('an audience created with the CLI has its audit queue from the start, before any run publishes to it', async () => {
    const create = await sandbox.cli(['--json', 'audiences', 'create', 'early-watch', '--name', 'Early watch']);
    expect(create.code, create.stderr).toBe(0);
    const topicArn = create.json<{ results: { topicArn: string }[] }>().results[0]?.topicArn;
    const { Subscriptions } = await sandbox.stack.clients.sns.send(
      new ListSubscriptionsByTopicCommand({ TopicArn: topicArn }),
    );
    expect(
      Subscriptions?.map((subscription) => [subscription.Protocol, subscription.Endpoint?.split(':').pop()]),
    ).toEqual([['sqs', `${sandbox.descriptor.names.auditQueuePrefix}early-watch`]]);
  });

  it('a sandbox audience whose topic was deleted does not stop the run for the others; the run exits 1 naming the repair, and so does deliveries, showing the others', async () => {
    const own = await startCliSandbox({ motoEndpoint: sandbox.descriptor.endpoint });
    try {
      await own.stack.clients.sns.send(new DeleteTopicCommand({ TopicArn: own.stack.topics.get('partner-feed') }));
      const run = await own.cli(['--json', 'run']);
      expect(run.code, run.stderr).toBe(1);
      expect(run.stderr).toContain("audience partner-feed: its topic could not get the sandbox's audit queue");
      expect(run.stderr).toContain(`'news-alerts --sandbox-file ${own.descriptorPath} audiences repair partner-feed'`);
      // The others are shown; the command fails (exit 1) naming the audience and its repair.
      const shown = await own.cli(['--json', 'deliveries']);
      expect(shown.code, shown.stderr).toBe(1);
      expect(shown.stderr).toContain(
        `partner-feed: cannot be read (Topic does not exist); if its topic was deleted, 'news-alerts --sandbox-file ${own.descriptorPath} audiences repair partner-feed' makes it again`,
      );
      expect(shown.json<{ ok: boolean; error: { message: string } }>()).toMatchObject({
        ok: false,
        error: { message: '1 audience(s) could not be read: partner-feed' },
      });
      const audiences = shown.json<DeliveriesJson>().audiences;
      expect(audiences.find((entry) => entry.audienceId === 'partner-feed')).toMatchObject({
        total: 0,
        problem: expect.any(String),
      });
      expect(audiences.find((entry) => entry.audienceId === 'quake-oncall')?.total).toBe(
        run.json<RunJson>().summary.audiences['quake-oncall']?.published,
      );
    } finally {
      await own.stop();
    }
  });

  it('names an unknown audience (exit 3) and refuses a deployed stack (exit 2)', async () => {
    const unknown = await sandbox.cli(['deliveries', 'nope']);
    expect(unknown.code).toBe(3);
    expect(unknown.stderr).toContain('audience nope does not exist');

    const stack = await runCli(['--region', 'us-east-1', 'deliveries'], {
      env: {
        AWS_ACCESS_KEY_ID: 'testing',
        AWS_SECRET_ACCESS_KEY: 'testing',
        // Nothing listens here: the command must refuse before it talks to AWS.
        AWS_ENDPOINT_URL: 'http://127.0.0.1:9',
      },
    });
    expect(stack.code, stack.stderr).toBe(2);
    expect(stack.stderr).toContain('deliveries are visible only in the sandbox');
    expect(stack.stderr).toContain('--sqs');
  });
});
