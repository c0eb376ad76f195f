/**
 * Reading an SQS queue without consuming it, for the commands that show what a queue holds (the
 * sandbox's audit queues, the delivery dead-letter queues): every message once, each made visible
 * again as soon as the read ends, so the next reader (the same command run again, a redrive, a
 * test draining the queue) sees them all at once. Nothing is deleted.
 *
 * The SQS client is loaded on first use: the commands that import this module run without it
 * otherwise.
 */
import type { Message, SQSClient } from '@aws-sdk/client-sqs';

/** What {@link peekQueue} read. */
export interface PeekedQueue {
  /** Distinct messages, oldest first (by SQS's SentTimestamp). */
  readonly messages: Message[];
  /** True when the queue held more than `maxMessages` and the rest was not read. */
  readonly truncated: boolean;
  /**
   * True when the messages could not be made visible again (no `sqs:ChangeMessageVisibility`, say):
   * what was read is still returned, and the messages reappear on their own within 30 s.
   */
  readonly leftHidden: boolean;
}

/** Reads up to `maxMessages` distinct messages of a queue, leaving them where they are. */
export async function peekQueue(
  sqs: SQSClient,
  queueUrl: string,
  options: { readonly maxMessages?: number } = {},
): Promise<PeekedQueue> {
  const { ReceiveMessageCommand, ChangeMessageVisibilityBatchCommand } = await import('@aws-sdk/client-sqs');
  const maxMessages = options.maxMessages ?? Number.POSITIVE_INFINITY;
  const seen = new Map<string, Message>();
  const received: Message[] = [];
  let truncated = false;
  let leftHidden = false;
  try {
    for (;;) {
      const { Messages = [] } = await sqs.send(
        new ReceiveMessageCommand({
          QueueUrl: queueUrl,
          MaxNumberOfMessages: 10,
          // Hidden only while this read lasts (so a receive does not return what it read already),
          // then visible again below.
          VisibilityTimeout: 30,
          WaitTimeSeconds: 0,
          MessageSystemAttributeNames: ['SentTimestamp'],
        }),
      );
      received.push(...Messages);
      const fresh = Messages.filter((message) => message.MessageId && !seen.has(message.MessageId));
      if (fresh.length === 0) break;
      for (const message of fresh) seen.set(message.MessageId as string, message);
      if (seen.size >= maxMessages) {
        truncated = true;
        break;
      }
    }
  } finally {
    const handles = received.filter((message) => message.ReceiptHandle !== undefined);
    try {
      for (let index = 0; index < handles.length; index += 10) {
        await sqs.send(
          new ChangeMessageVisibilityBatchCommand({
            QueueUrl: queueUrl,
            Entries: handles.slice(index, index + 10).map((message, position) => ({
              Id: String(position),
              ReceiptHandle: message.ReceiptHandle,
              VisibilityTimeout: 0,
            })),
          }),
        );
      }
    } catch {
      // What was read is still the answer; the caller says they reappear within the timeout.
      leftHidden = true;
    }
  }
  const sentAt = (message: Message) => Number(message.Attributes?.SentTimestamp ?? 0);
  return { messages: [...seen.values()].sort((a, b) => sentAt(a) - sentAt(b)), truncated, leftHidden };
}
