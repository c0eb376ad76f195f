/**
 * The sandbox's audit queues: one SQS queue per audience topic (`<prefix>audit-<audienceId>`),
 * subscribed with raw delivery, that keeps the structured body of every notification the topic
 * sent, so `news-alerts deliveries` and the workbench can show what subscribers received.
 *
 * What this module guarantees: {@link ensureAuditQueues} is idempotent (queue and subscription
 * calls return what exists) and never swallows an audience it could not give a queue (the caller's
 * `onFailure` hears of each); {@link peekQueue} reads a queue without consuming it.
 *
 * Shared by the commands that publish in the sandbox (`run`, `replay`, `audiences create`/`put`),
 * `deliveries` and the workbench; it imports none of them.
 */
import type { Subscription } from '@aws-sdk/client-sns';
import type { Message, SQSClient } from '@aws-sdk/client-sqs';
import { newsAlerts } from './hints.ts';
import { type Item, listItems } from './items.ts';
import { peekQueue as peekAll } from './queue-peek.ts';
import type { LocalTarget, Target } from './target.ts';

/**
 * The audit queue prefix of a sandbox: the descriptor's `auditQueuePrefix`, or for a descriptor
 * written before it existed `<prefix>audit-` from the Slack stand-in queues' `<prefix>slack-`
 * (local-stack.ts names both from the same resource prefix).
 */
export function auditQueuePrefix(target: LocalTarget): string {
  if (target.descriptor.names.auditQueuePrefix !== undefined) return target.descriptor.names.auditQueuePrefix;
  const slack = target.names.slackStandInQueuePrefix ?? target.descriptor.names.slackStandInQueuePrefix;
  return slack.endsWith('slack-') ? `${slack.slice(0, -'slack-'.length)}audit-` : `${slack}audit-`;
}

/** SQS queue names: up to 80 of `[A-Za-z0-9_-]`. */
export const queueNameOf = (target: LocalTarget, audienceId: string): string =>
  `${auditQueuePrefix(target)}${audienceId}`.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 80);

/**
 * Whether a subscription endpoint is the sandbox's audit queue of `audienceId` (an SQS queue ARN
 * ending in its name): the sandbox's own window on what the topic sent, not a subscriber.
 */
export function isAuditQueue(target: Target, audienceId: string, endpoint: string | undefined): boolean {
  return target.kind === 'local' && endpoint?.endsWith(`:${queueNameOf(target, audienceId)}`) === true;
}

/**
 * The subscriptions of an audience's topic that deliver to someone: confirmed (a pending one has
 * no ARN yet), and not the sandbox's audit queue, which is no subscriber.
 */
export function deliveringSubscriptions(
  target: Target,
  audienceId: string,
  subscriptions: readonly Subscription[],
): Subscription[] {
  return subscriptions.filter(
    (subscription) =>
      subscription.SubscriptionArn?.startsWith('arn:') === true &&
      !isAuditQueue(target, audienceId, subscription.Endpoint),
  );
}

/** One SQS client per command, built like the target's others (moto's endpoint in the sandbox). */
export async function sqsClientOf(target: Target): Promise<SQSClient> {
  const { SQSClient } = await import('@aws-sdk/client-sqs');
  return new SQSClient({ ...target.clients.config });
}

/** The audiences of a target as stored (any item with an id and a topic). */
export async function audienceItems(target: Target): Promise<Item[]> {
  return await listItems(target.clients.documents, {
    tableName: target.names.audiencesTable,
    keyName: 'audienceId',
    noun: 'audience',
  });
}

export const topicOf = (item: Item): string | undefined =>
  typeof item.topicArn === 'string' && item.topicArn !== '' ? item.topicArn : undefined;

/**
 * Makes sure every sandbox audience's topic has its audit queue subscribed (creating queue and
 * subscription when missing; both calls are idempotent). Called by `audiences create`/`put` for
 * new audiences and by `run` and `replay` in the sandbox before they publish. An audience whose topic is gone (or broken) is passed to `onFailure`
 * and skipped: the run parks its alerts as it would without the queue. Returns audienceId → queue URL.
 */
export async function ensureAuditQueues(
  target: LocalTarget,
  options: {
    readonly only?: readonly string[];
    readonly sqs?: SQSClient;
    /** Required: an audience left without its audit queue must be said, never swallowed. */
    readonly onFailure: (audienceId: string, error: unknown) => void;
  },
): Promise<Map<string, string>> {
  const { CreateQueueCommand, GetQueueAttributesCommand } = await import('@aws-sdk/client-sqs');
  const { SubscribeCommand } = await import('@aws-sdk/client-sns');
  const sqs = options.sqs ?? (await sqsClientOf(target));
  const queues = new Map<string, string>();
  try {
    for (const item of await audienceItems(target)) {
      const audienceId = typeof item.audienceId === 'string' ? item.audienceId : undefined;
      const topicArn = topicOf(item);
      if (audienceId === undefined || topicArn === undefined) continue;
      if (options.only !== undefined && !options.only.includes(audienceId)) continue;
      try {
        const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: queueNameOf(target, audienceId) }));
        if (!QueueUrl) continue;
        const { Attributes } = await sqs.send(
          new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ['QueueArn'] }),
        );
        // SNS returns the existing subscription for the same topic, protocol and endpoint.
        await target.clients.sns.send(
          new SubscribeCommand({
            TopicArn: topicArn,
            Protocol: 'sqs',
            Endpoint: Attributes?.QueueArn,
            Attributes: { RawMessageDelivery: 'true' },
          }),
        );
        queues.set(audienceId, QueueUrl);
      } catch (error) {
        options.onFailure(audienceId, error);
      }
    }
  } finally {
    if (options.sqs === undefined) sqs.destroy();
  }
  return queues;
}

/** The warning `run` and `replay` print for an audience whose audit queue could not be subscribed. */
export const auditQueueWarning =
  (warn: (text: string) => void) =>
  (audienceId: string, error: unknown): void =>
    warn(
      `audience ${audienceId}: its topic could not get the sandbox's audit queue (${error instanceof Error ? error.message : String(error)}); '${newsAlerts()} deliveries' will not show what it is sent`,
    );

/** Every message of a queue, oldest first, left in the queue (visible again at once). */
export async function peekQueue(sqs: SQSClient, queueUrl: string): Promise<Message[]> {
  return (await peekAll(sqs, queueUrl)).messages;
}
