/**
 * The publisher function's batch loop (sharded publishing): one SQS batch of work items in, a
 * partial batch response out. What it guarantees on top of `publishWorkItems`
 * (functions/core/publish-work.ts):
 *
 * - A record is reported as failed exactly when its item is not done: unreadable (poison: it
 *   fails on every receive until SQS moves it to the work dead-letter queue, which alarms), a
 *   retry asked for (`WorkItemRetryError`), another delivery holding it (`WorkItemBusyError`), or
 *   any other error. Failed records come back; the other records of the batch are deleted. A
 *   batch whose every record failed fails the invocation (as Powertools batch processing does),
 *   so nothing is turned into a success.
 * - Two deliveries of one item at the same time never both publish: the batch's items are claimed
 *   in the dispatch store (one transaction for the batch, see DispatchStore.claimItems) for as
 *   long as the invocation can run, and settled in one more; a delivery that finds the item
 *   claimed fails and comes back later, when it finds it done (and gets the result it was counted
 *   with, publishing nothing). The ledger check inside `publishWorkItems` covers deliveries that
 *   come one after the other.
 * - The last receive SQS allows (`ApproximateReceiveCount` ≥ the queue's maxReceiveCount) is
 *   passed on as `lastAttempt`, so transient failures are parked instead of lost to the DLQ.
 *
 * The batch shares its requests: its DynamoDB requests are about those of single mode for the
 * same notifications (docs/sharded-publishing.md, "What it costs").
 *
 * Logs name the dispatch, item, audience and SQS message and the error's name; never the body
 * (it holds subscriber-facing links) and never an endpoint URL.
 */
import { randomUUID } from 'node:crypto';
import { FullBatchFailureError } from '@aws-lambda-powertools/batch';
import { MetricUnit } from '@aws-lambda-powertools/metrics';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { PoisonWorkItemError, WorkItemBusyError, WorkItemRetryError } from '#core/errors';
import type { WorkItem } from '#core/ports';
import {
  type PublishBatchOptions,
  type PublishWorkDeps,
  publishWorkItems,
  type WorkItemDelivery,
  type WorkItemOutcome,
} from '#core/publish-work';
import { parseWorkItem } from '#core/work-items';

/** Metric names the publisher emits (EMF through Powertools Metrics). */
export const publisherMetricNames = {
  notificationsPublished: 'NotificationsPublished',
  updateNotices: 'UpdateNotices',
  notificationsParked: 'NotificationsParked',
  workItemsDone: 'WorkItemsDone',
  workItemsFailed: 'WorkItemsFailed',
} as const;

/** The part of Powertools Metrics the publisher uses (Metrics itself; tests pass a recorder). */
export interface PublisherMetrics {
  addMetric(name: string, unit: typeof MetricUnit.Count, value: number): unknown;
}

/** Everything {@link createWorkItemHandler} works with. */
export interface WorkItemHandlerDeps extends PublishWorkDeps {
  /** The work queue's maxReceiveCount: the receive from which failures are parked, not retried. */
  readonly maxReceiveCount: number;
  readonly metrics?: PublisherMetrics | undefined;
  /**
   * New PublishBatch calls stop this long before the invocation would time out, so the item is
   * retried (or parked, on its last receive) rather than cut off by Lambda. Default 5 s.
   */
  readonly deadlineMarginMs?: number | undefined;
}

/** The steps of one batch, injectable so the batch loop can be tested on its own. */
export interface WorkItemSteps {
  parse(body: string): WorkItem;
  /** One outcome per delivery, in order (functions/core/publish-work.ts publishWorkItems). */
  publish(deliveries: readonly WorkItemDelivery[], options: PublishBatchOptions): Promise<WorkItemOutcome[]>;
}

/** The publisher's Lambda handler body: SQS batch in, partial batch response out. */
export function createWorkItemHandler(
  deps: WorkItemHandlerDeps,
): (event: SQSEvent, context: Context) => Promise<SQSBatchResponse> {
  return createBatchHandler(
    { parse: parseWorkItem, publish: (deliveries, options) => publishWorkItems(deliveries, deps, options) },
    deps,
  );
}

/**
 * The batch loop with its steps given: {@link createWorkItemHandler} passes `parseWorkItem` and
 * `publishWorkItems`; tests pass their own to fail or hold a step at will.
 */
export function createBatchHandler(
  steps: WorkItemSteps,
  deps: Pick<WorkItemHandlerDeps, 'maxReceiveCount' | 'metrics' | 'deadlineMarginMs' | 'log'> & {
    readonly now?: (() => number) | undefined;
  },
): (event: SQSEvent, context: Context) => Promise<SQSBatchResponse> {
  const { log } = deps;
  const now = deps.now ?? Date.now;
  const count = (name: string, value: number) => {
    if (value > 0) deps.metrics?.addMetric(name, MetricUnit.Count, value);
  };

  return async (event, context) => {
    const margin = deps.deadlineMarginMs ?? 5000;
    const remainingMs = context.getRemainingTimeInMillis();
    const untilDeadline = remainingMs - margin;
    // AbortSignal.timeout(0) fires only on the next timer tick: past the deadline, abort now.
    const signal = untilDeadline > 0 ? AbortSignal.timeout(untilDeadline) : AbortSignal.abort();
    // The claim lasts as long as this invocation can: a crashed one frees its items when Lambda
    // would have stopped it anyway.
    const claim = { owner: `${context.awsRequestId}/${randomUUID()}`, until: now() + remainingMs };

    const records = event.Records;
    const failures: Error[] = [];
    const failed = new Set<string>();
    const fail = (record: SQSRecord, error: unknown) => {
      failures.push(error instanceof Error ? error : new Error(String(error)));
      failed.add(record.messageId);
      count(publisherMetricNames.workItemsFailed, 1);
    };
    const parsed: { record: SQSRecord; delivery: WorkItemDelivery; ids: Record<string, unknown> }[] = [];
    for (const record of records) {
      const receiveCount = Number(record.attributes.ApproximateReceiveCount);
      const message = { messageId: record.messageId, receiveCount };
      let item: WorkItem;
      try {
        item = steps.parse(record.body);
      } catch (error) {
        fail(record, error);
        log.error('a work item cannot be read; it fails on every receive until SQS moves it to the dead-letter queue', {
          ...message,
          ...describeError(error),
        });
        continue;
      }
      const lastAttempt = receiveCount >= deps.maxReceiveCount;
      parsed.push({
        record,
        delivery: { item, lastAttempt },
        ids: { dispatchId: item.dispatchId, itemId: item.itemId, audienceId: item.audienceId, ...message },
      });
    }

    let outcomes: WorkItemOutcome[] = [];
    if (parsed.length > 0) {
      try {
        outcomes = await steps.publish(
          parsed.map((entry) => entry.delivery),
          { signal, claim },
        );
      } catch (error) {
        // The batch as a whole failed (the ledger, the state table, SNS): every item comes back.
        outcomes = parsed.map(() => ({ kind: 'failed', error }));
      }
    }
    parsed.forEach(({ record, delivery, ids }, index) => {
      const outcome = outcomes[index] ?? { kind: 'failed', error: new Error('no outcome for the work item') };
      if (outcome.kind === 'done') {
        // Counted where the work is done: a result an earlier delivery stored was counted then.
        if (outcome.counted) {
          count(publisherMetricNames.notificationsPublished, outcome.result.published);
          count(publisherMetricNames.updateNotices, outcome.result.updateNotices);
          count(publisherMetricNames.notificationsParked, outcome.result.parked);
          count(publisherMetricNames.workItemsDone, 1);
        }
        return;
      }
      fail(record, outcome.error);
      const { error } = outcome;
      if (error instanceof WorkItemBusyError) {
        log.warn('the work item is being published by another delivery; this one comes back later', ids);
      } else if (error instanceof WorkItemRetryError) {
        log.warn('the work item is retried: some notifications were not published for now', {
          ...ids,
          ...describeError(error),
        });
      } else {
        log.error('publishing a work item failed; it comes back', {
          ...ids,
          lastAttempt: delivery.lastAttempt,
          ...describeError(error),
        });
      }
    });
    if (records.length > 0 && failed.size === records.length) throw new FullBatchFailureError(failures);
    return {
      batchItemFailures: records.filter((r) => failed.has(r.messageId)).map((r) => ({ itemIdentifier: r.messageId })),
    };
  };
}

/**
 * What a log line may say about an error: its name always; its message only for this
 * publisher's own errors, whose messages are known to name counts and codes and never a body
 * or a URL (an SDK error's message is not vouched for).
 */
function describeError(error: unknown): Record<string, unknown> {
  const errorName = error instanceof Error ? error.name : typeof error;
  if (
    error instanceof PoisonWorkItemError ||
    error instanceof WorkItemRetryError ||
    error instanceof WorkItemBusyError
  ) {
    return { errorName, reason: error.message };
  }
  return { errorName };
}
