/**
 * Subscription states that say what happened (issue 11, item 10): an email subscriber the sandbox
 * confirms at once is reported confirmed (no "confirmation email on its way"), a junk token
 * confirms nothing (exit 2) and a well-formed one that matches no subscription is a failure
 * (exit 1); and `subscriptions add --sqs` subscribes a queue anyone can read an audience's
 * deliveries from, on a stack as in the sandbox.
 */
import { CreateQueueCommand, GetQueueAttributesCommand } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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
  });
});
