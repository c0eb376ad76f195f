/**
 * `test-send <audience>`: one clearly marked test notification through the real path (rendered
 * for the audience by the run's renderer, published with the run's SNS notifier to the audience's
 * topic, so every subscription gets its own protocol's body), and what each channel accepted.
 *
 * SNS accepts a publish for the topic, not per subscriber; what is known per subscription is said
 * as such: pending subscriptions get nothing; an SQS subscriber this target can read (the
 * sandbox's audit and Slack stand-in queues, an ops queue) is checked for the message itself;
 * email, SMS, HTTPS and the Slack relay are handed over by SNS, and their delivery status is in
 * SNS's delivery logs (and the relay's dead-letter queue). The test key starts with `test:`, so
 * it never collides with an article in the ledger, and nothing is written to the ledger.
 */
import { randomUUID } from 'node:crypto';
import type { SQSClient } from '@aws-sdk/client-sqs';
import { SnsNotifier } from '#aws/sns-notifier';
import type { Article, AudienceMatch } from '#core/model';
import { parseAudience } from '#core/model';
import { renderNotification } from '#core/render';
import { audienceSubscriptions, requireAudience, topicArnOf } from '../audience-topics.ts';
import { peekQueue } from '../audit-queues.ts';
import { UsageError } from '../errors.ts';
import { newsAlerts } from '../hints.ts';
import { displayEndpoint, recordedAs } from '../subscriptions.ts';
import type { Target } from '../target.ts';

/** What one subscription did with the test. */
export interface ChannelResult {
  readonly protocol: string;
  /** As people may see it (webhook URLs masked). */
  readonly endpoint: string;
  /** `received` (seen in its queue), `accepted` (SNS took it for delivery), `not sent` (pending). */
  readonly result: 'received' | 'accepted' | 'not sent' | 'not seen';
  readonly detail: string;
}

/** The outcome of a test send. */
export interface TestSendResult {
  readonly audienceId: string;
  readonly testKey: string;
  readonly subject: string;
  /** SNS's message id when the topic accepted it. */
  readonly messageId?: string | undefined;
  /** SNS's refusal when it did not (code and reason). */
  readonly refused?: { readonly code: string; readonly reason: string; readonly permanent: boolean } | undefined;
  readonly channels: readonly ChannelResult[];
}

/** Sends the test notification and reports each subscription. */
export async function testSend(target: Target, audienceId: string, now: number): Promise<TestSendResult> {
  const item = await requireAudience(target, audienceId);
  const parsed = parseAudience(item);
  if (!parsed.ok) {
    throw new UsageError(
      `audience ${audienceId} is invalid, so the run sends it nothing: ${parsed.rejected.reason}; fix it first ('${newsAlerts()} audiences update ${audienceId} …')`,
    );
  }
  const audience = parsed.value;
  const topicArn = topicArnOf(item, audienceId);
  const subscriptions = await audienceSubscriptions(target, audienceId, topicArn);
  const testKey = `test:${new Date(now).toISOString()}-${randomUUID().slice(0, 8)}`;
  const article: Article = {
    key: testKey,
    title: `[TEST] news-alerts test notification for ${audience.name ?? audienceId}`,
    // Who sent it stays with ops: the caller's identity (an account id, an SSO user's address)
    // is nothing to publish to every subscriber, webhook receivers and Slack channels included.
    summary: `A test sent with 'news-alerts test-send' at ${new Date(now).toISOString()} to prove this channel works. No news here; no action needed.`,
    url: '',
    publishedAt: now,
    categories: [],
    categoryNames: [],
    mediaName: 'news-alerts test',
  };
  const match: AudienceMatch = {
    audienceId,
    article,
    rules: [
      { ruleId: 'test-send', description: 'test notification', urgent: false, reasons: [{ kind: 'all', term: '*' }] },
    ],
  };
  const message = renderNotification(match, audience, { linkPolicy: 'omit' });
  const notifier = new SnsNotifier({ client: target.clients.sns, maxAttempts: 3 });
  const outcome = await notifier.publish([message], { onPublished: async () => {} });
  const published = outcome.published[0];
  const failed = outcome.failed[0];
  const channels: ChannelResult[] = [];
  let sqs: SQSClient | undefined;
  try {
    for (const subscription of subscriptions) {
      // The Slack relay (or the sandbox's stand-in queue) reads as Slack, which is what it is.
      const protocol = recordedAs(target, subscription)[0] === 'slack' ? 'slack' : (subscription.Protocol ?? '');
      const endpoint = displayEndpoint(subscription);
      if (subscription.SubscriptionArn === 'PendingConfirmation') {
        channels.push({
          protocol,
          endpoint,
          result: 'not sent',
          detail: 'pending confirmation: SNS delivers nothing to it until it is confirmed',
        });
        continue;
      }
      if (published === undefined) {
        channels.push({ protocol, endpoint, result: 'not sent', detail: 'the topic refused the message' });
        continue;
      }
      if (subscription.Protocol === 'sqs' && subscription.Endpoint !== undefined) {
        sqs ??= await sqsOf(target);
        const seen = await seenInQueue(sqs, subscription.Endpoint, testKey);
        channels.push(
          seen === undefined
            ? {
                protocol,
                endpoint,
                result: 'accepted',
                detail: 'SNS accepted it for this queue (the queue cannot be read from here)',
              }
            : seen
              ? { protocol, endpoint, result: 'received', detail: 'the message is in the queue' }
              : {
                  protocol,
                  endpoint,
                  result: 'not seen',
                  detail: 'not in the queue (yet): check its access policy lets the topic send',
                },
        );
        continue;
      }
      const detail: Record<string, string> = {
        email:
          'SNS accepted it; the mailbox gets it within minutes (SNS email delivery status: CloudWatch delivery logs)',
        sms: 'SNS accepted it; delivery status is in the SNS SMS delivery logs',
        // The sandbox's moto retries nothing into a dead-letter queue: it logs a post it could not make.
        https:
          target.kind === 'stack'
            ? 'SNS accepted it and posts it to the endpoint (failures go to the subscription dead-letter queue)'
            : `SNS accepted it and posts it to the endpoint (the sandbox has no dead-letter queue: a post it could not make is logged in ${target.descriptor.daemon?.logPath ?? 'sandbox.log beside its descriptor'})`,
        lambda: 'handed to the function (the Slack relay posts it; failures go to the relay dead-letter queue)',
      };
      channels.push({
        protocol,
        endpoint,
        result: 'accepted',
        detail: detail[protocol] ?? 'SNS accepted it for delivery',
      });
    }
  } finally {
    sqs?.destroy();
  }
  return {
    audienceId,
    testKey,
    subject: message.subject,
    messageId: published?.messageId,
    refused:
      failed === undefined ? undefined : { code: failed.code, reason: failed.reason, permanent: failed.permanent },
    channels,
  };
}

async function sqsOf(target: Target): Promise<SQSClient> {
  const { SQSClient } = await import('@aws-sdk/client-sqs');
  return new SQSClient({ ...target.clients.config });
}

/** Whether the queue of `queueArn` holds a message naming `testKey`; undefined when it cannot be read. */
async function seenInQueue(sqs: SQSClient, queueArn: string, testKey: string): Promise<boolean | undefined> {
  const { GetQueueUrlCommand } = await import('@aws-sdk/client-sqs');
  const [, , , , account, name] = queueArn.split(':');
  try {
    const { QueueUrl } = await sqs.send(new GetQueueUrlCommand({ QueueName: name, QueueOwnerAWSAccountId: account }));
    if (QueueUrl === undefined) return undefined;
    const messages = await peekQueue(sqs, QueueUrl);
    return messages.some((message) => (message.Body ?? '').includes(testKey));
  } catch {
    return undefined;
  }
}
