/**
 * `news-alerts subscriptions failures`: which audiences have failing subscribers, read from the
 * two dead-letter queues their failures end in, without removing anything. It is what the
 * `delivery-dlq` and `slack-relay-dlq` alarms point at: one alarm each for every audience, and
 * this command to name the audiences (docs/operate.md), instead of one alarm per audience.
 *
 * - The delivery dead-letter queue holds what SNS could not deliver to an email, SMS or HTTPS
 *   subscriber after its retries (every subscription has it as its redrive policy).
 * - The Slack relay's dead-letter queue holds alerts the relay could not post (on-failure records
 *   with the SNS event, or SNS envelopes of deliveries to the relay that failed).
 *
 * A message names its audience through its topic (`<prefix><audienceId>`), or, for a raw alert,
 * through its delivery id (`<audienceId>|<articleKey>`). Messages are received with a short
 * visibility timeout, never deleted, and made visible again as soon as they are read, so the next
 * reader (this command run again, a redrive) sees every one at once. Bodies are not printed: they
 * may hold webhook paths and subscribers' links.
 */
import { GetQueueUrlCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { peekQueue } from './queue-peek.ts';

/** Where a failure was found. */
export type FailureQueue = 'delivery' | 'slack relay';

/** Failed deliveries of one audience in one queue. */
export interface FailureRow {
  readonly audienceId: string;
  readonly queue: FailureQueue;
  readonly messages: number;
  /** When SQS received the newest of them (ISO 8601), if it said. */
  readonly newest: string | undefined;
}

/** What {@link readDeliveryFailures} found. */
export interface DeliveryFailures {
  readonly rows: readonly FailureRow[];
  /** Messages read (distinct), in all queues. */
  readonly scanned: number;
  /** Messages whose audience could not be told. */
  readonly unattributed: number;
  /** True when a queue held more than `maxMessages` and the rest was not read. */
  readonly truncated: boolean;
  /** True when what was read could not be made visible again at once (it reappears within 30 s). */
  readonly leftHidden: boolean;
}

/** `arn:aws:sqs:<region>:<account>:<name>` → name and account, for GetQueueUrl. */
function queueOfArn(arn: string): { name: string; account: string } | undefined {
  const parts = arn.split(':');
  const name = parts[5];
  const account = parts[4];
  return parts[2] === 'sqs' && name && account ? { name, account } : undefined;
}

/**
 * The topic ARN or delivery id a dead-lettered message carries, whichever shape it has. A topic of
 * the stack's naming gives its audience by name; any other (an audience given its own topic with
 * `--topic-arn`) by `topics`, the audiences' own topic ARNs.
 */
function audienceOf(body: string, topicPrefix: string, topics: ReadonlyMap<string, string>): string | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return undefined;
  }
  const object = parsed as Record<string, unknown> | null;
  if (typeof object !== 'object' || object === null) return undefined;
  const fromTopic = (topicArn: unknown): string | undefined => {
    if (typeof topicArn !== 'string') return undefined;
    const own = topics.get(topicArn);
    if (own !== undefined) return own;
    const name = topicArn.split(':').at(-1) ?? '';
    return name.startsWith(topicPrefix) && name.length > topicPrefix.length
      ? name.slice(topicPrefix.length)
      : undefined;
  };
  // An SNS envelope.
  const direct = fromTopic(object.TopicArn);
  if (direct !== undefined) return direct;
  // A Lambda on-failure record of the relay: the SNS event is its request payload.
  const records = (object.requestPayload as { Records?: { Sns?: { TopicArn?: unknown } }[] } | undefined)?.Records;
  const fromRecord = fromTopic(records?.[0]?.Sns?.TopicArn);
  if (fromRecord !== undefined) return fromRecord;
  // A raw alert (raw message delivery): its delivery id names the audience.
  const deliveryId = (object.newsAlerts as { deliveryId?: unknown } | undefined)?.deliveryId;
  if (typeof deliveryId === 'string' && deliveryId.includes('|')) return deliveryId.slice(0, deliveryId.indexOf('|'));
  // An SNS envelope whose Message is the alert.
  if (typeof object.Message === 'string') return audienceOf(object.Message, topicPrefix, topics);
  return undefined;
}

/**
 * The audiences with failed deliveries in the given dead-letter queues (by ARN), most messages first.
 */
export async function readDeliveryFailures(
  sqs: SQSClient,
  queues: readonly { readonly arn: string; readonly queue: FailureQueue }[],
  options: {
    readonly topicPrefix: string;
    readonly maxMessages?: number;
    /** Topic ARN → audience id of the audiences (those with a topic of their own included). */
    readonly topics?: ReadonlyMap<string, string>;
  },
): Promise<DeliveryFailures> {
  const rows = new Map<string, { audienceId: string; queue: FailureQueue; messages: number; newest: number }>();
  let scanned = 0;
  let unattributed = 0;
  let truncated = false;
  let leftHidden = false;
  for (const { arn, queue } of queues) {
    const location = queueOfArn(arn);
    if (location === undefined) continue;
    const { QueueUrl } = await sqs.send(
      new GetQueueUrlCommand({ QueueName: location.name, QueueOwnerAWSAccountId: location.account }),
    );
    if (QueueUrl === undefined) continue;
    const read = await peekQueue(sqs, QueueUrl, { maxMessages: options.maxMessages ?? 1000 });
    truncated ||= read.truncated;
    leftHidden ||= read.leftHidden;
    for (const message of read.messages) {
      scanned += 1;
      const audienceId = audienceOf(message.Body ?? '', options.topicPrefix, options.topics ?? new Map());
      if (audienceId === undefined) {
        unattributed += 1;
        continue;
      }
      const key = `${queue}\u0000${audienceId}`;
      const row = rows.get(key) ?? { audienceId, queue, messages: 0, newest: 0 };
      row.messages += 1;
      row.newest = Math.max(row.newest, Number(message.Attributes?.SentTimestamp ?? 0));
      rows.set(key, row);
    }
  }
  return {
    rows: [...rows.values()]
      .sort((a, b) => b.messages - a.messages || (a.audienceId < b.audienceId ? -1 : 1))
      .map((row) => ({ ...row, newest: row.newest > 0 ? new Date(row.newest).toISOString() : undefined })),
    scanned,
    unattributed,
    truncated,
    leftHidden,
  };
}
