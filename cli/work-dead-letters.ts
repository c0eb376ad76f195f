/**
 * The work dead-letter queue of sharded publishing, for `news-alerts replay --parked`: work items
 * the publisher failed on until SQS gave up on them. Each item that can be read is turned into
 * parked notifications (`recordUndeliverable`, code {@link workItemDeadLetteredCode}), and its SQS
 * message is deleted only after that write succeeded: a failure in between leaves it in the
 * queue, never lost. A message that cannot be read as a work item stays in the queue and is
 * reported by its SQS message id and why (never its body: it holds subscriber-facing text and
 * links). With `dryRun` nothing is written or deleted.
 */
import type { Message, SQSClient } from '@aws-sdk/client-sqs';
import { PoisonWorkItemError } from '#core/errors';
import type { StateStore, UndeliverableRecord } from '#core/ports';
import { parseWorkItem } from '#core/work-items';

/** The `code` of a notification parked from the work dead-letter queue. */
export const workItemDeadLetteredCode = 'WorkItemDeadLettered';

/** How long the messages being read stay hidden (they come back on their own if this process dies). */
const readVisibilitySeconds = 120;

/** A dead-lettered message that is not a work item, left in the queue. */
export interface UnreadableDeadLetter {
  readonly messageId: string;
  readonly reason: string;
}

/** What was taken from (or, dry run, found in) the work dead-letter queue. */
export interface TakenDeadLetters {
  /** Work items read. */
  readonly items: number;
  /** Their notifications, as parked (dry run: as they would be parked). */
  readonly records: readonly UndeliverableRecord[];
  /** Items left in the queue because their audience was not asked for (`--audience`). */
  readonly leftForOtherAudiences: number;
  readonly unreadable: readonly UnreadableDeadLetter[];
  /**
   * Items parked whose message SQS did not delete (an entry DeleteMessageBatch failed): they come
   * back after the read visibility and the next replay parks them again, which sends nothing twice
   * (it skips what the ledger holds).
   */
  readonly notDeleted: number;
}

/**
 * Reads the work dead-letter queue once through and parks every readable item's notifications
 * (see the module comment). Messages it does not delete are made visible again at the end.
 */
export async function takeWorkDeadLetters(
  sqs: SQSClient,
  queueUrl: string,
  options: {
    readonly state: Pick<StateStore, 'recordUndeliverable'>;
    readonly now: () => number;
    readonly dryRun: boolean;
    /** Only items of these audiences; the others stay in the queue. */
    readonly audiences?: ReadonlySet<string> | undefined;
  },
): Promise<TakenDeadLetters> {
  const { ReceiveMessageCommand, DeleteMessageBatchCommand } = await import('@aws-sdk/client-sqs');
  const records: UndeliverableRecord[] = [];
  const unreadable: UnreadableDeadLetter[] = [];
  const release: Message[] = [];
  const seen = new Set<string>();
  let items = 0;
  let leftForOtherAudiences = 0;
  let notDeleted = 0;
  try {
    for (;;) {
      const { Messages = [] } = await sqs.send(
        new ReceiveMessageCommand({
          QueueUrl: queueUrl,
          MaxNumberOfMessages: 10,
          VisibilityTimeout: readVisibilitySeconds,
          WaitTimeSeconds: 0,
        }),
      );
      // Each message once: one that comes back (this read took longer than its visibility) is done.
      const fresh = Messages.filter((message) => !seen.has(message.MessageId ?? ''));
      if (fresh.length === 0) break;
      const take: { message: Message; records: UndeliverableRecord[] }[] = [];
      for (const message of fresh) {
        const messageId = message.MessageId ?? '';
        seen.add(messageId);
        let item: ReturnType<typeof parseWorkItem>;
        try {
          item = parseWorkItem(message.Body ?? '');
        } catch (error) {
          if (!(error instanceof PoisonWorkItemError)) throw error;
          unreadable.push({ messageId, reason: error.message });
          release.push(message);
          continue;
        }
        if (options.audiences !== undefined && !options.audiences.has(item.audienceId)) {
          leftForOtherAudiences += 1;
          release.push(message);
          continue;
        }
        items += 1;
        const failedAt = options.now();
        take.push({
          message,
          records: item.messages.map((outbound) => ({
            ...outbound.key,
            topicArn: outbound.topicArn,
            failedAt,
            code: workItemDeadLetteredCode,
            reason: `work item ${item.itemId} of run ${item.dispatchId} went to the work dead-letter queue: the publisher failed on it until SQS stopped retrying`,
            subject: outbound.subject,
            body: outbound.body,
          })),
        });
      }
      const taken = take.flatMap((entry) => entry.records);
      records.push(...taken);
      if (options.dryRun) {
        release.push(...take.map((entry) => entry.message));
        continue;
      }
      // Parked first, deleted after: a crash in between leaves the item in the queue to take again.
      try {
        if (taken.length > 0) await options.state.recordUndeliverable(taken);
      } catch (error) {
        // Not parked: back in the queue at once for the next replay, not after the read visibility.
        release.push(...take.map((entry) => entry.message));
        throw error;
      }
      if (take.length > 0) {
        const { Failed = [] } = await sqs.send(
          new DeleteMessageBatchCommand({
            QueueUrl: queueUrl,
            Entries: take.map((entry, index) => ({ Id: String(index), ReceiptHandle: entry.message.ReceiptHandle })),
          }),
        );
        notDeleted += Failed.length;
      }
    }
  } finally {
    await makeVisible(sqs, queueUrl, release);
  }
  return { items, records, leftForOtherAudiences, unreadable, notDeleted };
}

/** Ends the read visibility of messages left in the queue, so they can be read again at once. */
async function makeVisible(sqs: SQSClient, queueUrl: string, messages: readonly Message[]): Promise<void> {
  const { ChangeMessageVisibilityBatchCommand } = await import('@aws-sdk/client-sqs');
  for (let start = 0; start < messages.length; start += 10) {
    await sqs.send(
      new ChangeMessageVisibilityBatchCommand({
        QueueUrl: queueUrl,
        Entries: messages
          .slice(start, start + 10)
          .map((message, index) => ({ Id: String(index), ReceiptHandle: message.ReceiptHandle, VisibilityTimeout: 0 })),
      }),
    );
  }
}
