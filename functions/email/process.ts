/**
 * The email delivery function's batch loop: one SQS batch of notifications in, a partial batch
 * response out (Powertools batch). A record is reported as failed exactly when its notification
 * is not done: unreadable (it fails on every receive until SQS moves it to the email dead-letter
 * queue, which alarms), some subscribers still to send (`EmailRetryError`: throttling, or a send
 * in progress elsewhere), or any other error. The records of one batch are independent: one
 * failure never fails the others. Nothing is turned into a success; what was sent stays recorded,
 * so the retry sends only the rest.
 *
 * The same handler releases the subscribers' daily digests when the schedule invokes it with
 * `{"action": "release-daily-digests"}`.
 */
import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import {
  type DailyDigestOutcome,
  type DeliveryOutcome,
  deliverNotification,
  type EmailDeliveryDeps,
  EmailRetryError,
  releaseDailyDigests,
} from '#core/email/delivery';
import { parseQueuedNotification, UnreadableNotificationError } from '#core/email/notification';

/** The schedule's payload. */
export const RELEASE_DAILY_DIGESTS = { action: 'release-daily-digests' } as const;

/** The handler body: an SQS batch (partial response) or the daily-digest release. */
export function createEmailHandler(
  deps: EmailDeliveryDeps,
): (
  event: SQSEvent | typeof RELEASE_DAILY_DIGESTS | unknown,
  context: Context,
) => Promise<SQSBatchResponse | DailyDigestOutcome> {
  const { log } = deps;
  const handleRecord = async (record: SQSRecord): Promise<DeliveryOutcome> => {
    const message = { sqsMessageId: record.messageId, receiveCount: Number(record.attributes.ApproximateReceiveCount) };
    try {
      return await deliverNotification(parseQueuedNotification(record.body), deps);
    } catch (error) {
      if (error instanceof UnreadableNotificationError) {
        log.error('a queued notification cannot be sent; it fails until SQS moves it to the email dead-letter queue', {
          ...message,
          reason: error.message,
        });
      } else if (error instanceof EmailRetryError) {
        log.warn('some emails of a notification are retried', { ...message, pending: error.pending });
      } else {
        log.error('emailing a notification failed; it comes back', {
          ...message,
          errorName: error instanceof Error ? error.name : typeof error,
        });
      }
      throw error;
    }
  };
  return async (event, context) => {
    if (
      typeof event === 'object' &&
      event !== null &&
      (event as { action?: unknown }).action === RELEASE_DAILY_DIGESTS.action
    ) {
      const outcome = await releaseDailyDigests(deps, { remainingMs: () => context.getRemainingTimeInMillis() });
      log.info('daily digests released', { ...outcome });
      return outcome;
    }
    if (typeof event !== 'object' || event === null || !Array.isArray((event as { Records?: unknown }).Records)) {
      throw new UnreadableNotificationError(
        'the email function was invoked with neither an SQS batch nor the daily-digest release',
      );
    }
    const processor = new BatchProcessor(EventType.SQS);
    return processPartialResponse(event as SQSEvent, handleRecord, processor, { context });
  };
}
