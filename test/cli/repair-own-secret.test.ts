/**
 * `audiences repair` of an audience whose Slack webhook stays in a secret of its own (cdk.json
 * `slack.webhookSecretArn`): the relay reads that secret, so the repair subscribes the relay again
 * from it. Before, the repair looked only in the webhook store, reported the Slack subscriber as
 * not restored, and told the operator to run `subscriptions add --slack-webhook`, which refuses
 * such an audience: nothing restored Slack. The stack target is the sandbox's clients (moto) with
 * the relay's settings a stack would read from the relay function's environment.
 */
import { DeleteTopicCommand, ListSubscriptionsByTopicCommand } from '@aws-sdk/client-sns';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLog } from '#core/ports';
import { subscriberRecordsOf } from '../../cli/subscriptions.ts';
import { resolveTarget, type StackTarget, type Target } from '../../cli/target.ts';
import { repairAudience } from '../../cli/workbench/repair.ts';
import { type CliSandbox, startCliSandbox } from './support.ts';

const secretArn = 'arn:aws:secretsmanager:us-east-1:123456789012:secret:team/slack-markets-AbCdEf';
const relayArn = 'arn:aws:lambda:us-east-1:123456789012:function:news-alerts-slack-relay';
const audienceId = 'markets-desk';

let sandbox: CliSandbox;
let local: Target;

beforeAll(async () => {
  sandbox = await startCliSandbox();
  local = await resolveTarget({ sandboxFile: sandbox.descriptorPath, stack: 'NewsAlerts' }, process.cwd());
});

afterAll(async () => {
  await sandbox?.stop();
});

/** The sandbox as a deployed stack whose relay has these settings (or cannot be read). */
function stackOf(own: () => Promise<Readonly<Record<string, string>>>): StackTarget {
  return {
    ...local,
    kind: 'stack',
    stackName: 'NewsAlerts',
    names: { ...local.names, slackRelayFunctionArn: relayArn, slackStandInQueuePrefix: undefined },
    invokeAlertFunction: () => Promise.reject(new Error('not in this test')),
    slackOwnWebhookSecrets: own,
  } as StackTarget;
}

describe('audiences repair, a Slack webhook in a secret of its own', () => {
  it('subscribes the relay again from that secret; without it, the subscriber is named as not restored', async () => {
    const audience = await sandbox.audience(audienceId);
    const topicArn = String(audience?.topicArn);
    await subscriberRecordsOf(local).add({ audienceId, protocol: 'slack', addedAt: Date.now(), addedBy: 'test' });
    await local.clients.sns.send(new DeleteTopicCommand({ TopicArn: topicArn }));
    const audit = { actor: 'test', now: Date.now() };
    const warnings: string[] = [];
    const warn = (text: string) => warnings.push(text);

    // Relay settings that cannot be read: warned, and the subscriber is reported as not restored.
    const denied = Object.assign(new Error('not authorized'), { name: 'AccessDeniedException' });
    const unread = await repairAudience(
      stackOf(() => Promise.reject(denied)),
      audienceId,
      audit,
      silentLog,
      {
        apply: false,
        warn,
      },
    );
    expect(warnings.join('\n')).toMatch(/AccessDeniedException.*slack\.webhookSecretArn/);
    expect(unread.subscriptions.find((entry) => entry.protocol === 'slack')?.result).toBe('not restored');
    expect(unread.notRestored.join('\n')).toContain('--slack-webhook');

    const own = stackOf(async () => ({ [audienceId]: secretArn }));
    const plan = await repairAudience(own, audienceId, audit, silentLog, { apply: false, warn });
    expect(plan.notRestored.join('\n')).not.toContain('Slack');
    expect(plan.subscriptions.find((entry) => entry.protocol === 'slack')?.detail).toBe('would be subscribed again');

    const report = await repairAudience(own, audienceId, audit, silentLog, { apply: true, warn });
    expect(report.topic).toBe('recreated');
    expect(report.notRestored.join('\n')).not.toContain('Slack');
    const slack = report.subscriptions.find((entry) => entry.protocol === 'slack');
    expect(slack).toMatchObject({ result: 'restored' });
    expect(slack?.detail).toContain(`its own secret ${secretArn}`);
    const { Subscriptions } = await local.clients.sns.send(
      new ListSubscriptionsByTopicCommand({ TopicArn: report.topicArn }),
    );
    expect(Subscriptions?.filter((entry) => entry.Protocol === 'lambda').map((entry) => entry.Endpoint)).toEqual([
      relayArn,
    ]);
  });
});
