/**
 * The publisher function's batch loop (sharded publishing): one SQS batch of work items in, a
 * partial batch response out, through Powertools batch processing. What it guarantees on top of
 * `publishWorkItem` (functions/core/publish-work.ts):
 *
 * - A record is reported as failed exactly when its item is not done: unreadable (poison: it
 *   fails on every receive until SQS moves it to the work dead-letter queue, which alarms), a
 *   retry asked for (`WorkItemRetryError`), or any other error. Failed records come back; the
 *   other records of the batch are deleted. Nothing is turned into a success.
 * - Two deliveries of one item at the same time never both publish: each item runs inside
 *   Powertools idempotency keyed by `dispatchId#itemId` (partition {@link publishedItemsPartition}
 *   of the state table). The second delivery finds the first one's in-progress record and fails
 *   (SQS brings it back later, when it gets the stored result without publishing). The ledger
 *   check inside `publishWorkItem` covers deliveries that come one after the other.
 * - The last receive SQS allows (`ApproximateReceiveCount` ≥ the queue's maxReceiveCount) is
 *   passed on as `lastAttempt`, so transient failures are parked instead of lost to the DLQ.
 *
 * Logs name the dispatch, item, audience and SQS message and the error's name; never the body
 * (it holds subscriber-facing links) and never an endpoint URL.
 */
import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import {
  IdempotencyAlreadyInProgressError,
  IdempotencyConfig,
  makeIdempotent,
} from '@aws-lambda-powertools/idempotency';
import { DynamoDBPersistenceLayer } from '@aws-lambda-powertools/idempotency/dynamodb';
import { MetricUnit } from '@aws-lambda-powertools/metrics';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { PoisonWorkItemError, WorkItemRetryError } from '#core/errors';
import type { WorkItem, WorkItemResult } from '#core/ports';
import { type PublishWorkDeps, type PublishWorkOptions, publishWorkItem } from '#core/publish-work';
import { parseWorkItem } from '#core/work-items';

/**
 * The state-table partition of the publisher's Powertools idempotency records (one per work
 * item in progress or done); its IAM policy may be limited to it like the Slack relay's.
 */
export const publishedItemsPartition = 'publish#items';

/**
 * How long a done item is remembered: as long as the work queue keeps a message (4 days, see
 * lib/constructs/sharded-publishing.ts), so any later delivery of it still finds the record.
 */
export const rememberItemsSeconds = 4 * 24 * 3600;

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
  /** Where idempotency records live; undefined turns the concurrent-delivery guard off (warned). */
  readonly idempotency: { readonly client: DynamoDBClient; readonly tableName: string } | undefined;
  /** The work queue's maxReceiveCount: the receive from which failures are parked, not retried. */
  readonly maxReceiveCount: number;
  readonly metrics?: PublisherMetrics | undefined;
  /**
   * New PublishBatch calls stop this long before the invocation would time out, so the item is
   * retried (or parked, on its last receive) rather than cut off by Lambda. Default 5 s.
   */
  readonly deadlineMarginMs?: number | undefined;
}

/** The steps of one record, injectable so the batch loop can be tested on its own. */
export interface WorkItemSteps {
  parse(body: string): WorkItem;
  publish(item: WorkItem, options: PublishWorkOptions): Promise<WorkItemResult>;
}

/** The publisher's Lambda handler body: SQS batch in, partial batch response out. */
export function createWorkItemHandler(
  deps: WorkItemHandlerDeps,
): (event: SQSEvent, context: Context) => Promise<SQSBatchResponse> {
  return createBatchHandler(
    { parse: parseWorkItem, publish: (item, options) => publishWorkItem(item, deps, options) },
    deps,
  );
}

/**
 * The batch loop with its steps given: {@link createWorkItemHandler} passes `parseWorkItem` and
 * `publishWorkItem`; tests pass their own to fail or hold a step at will.
 */
export function createBatchHandler(
  steps: WorkItemSteps,
  deps: Pick<WorkItemHandlerDeps, 'idempotency' | 'maxReceiveCount' | 'metrics' | 'deadlineMarginMs' | 'log'>,
): (event: SQSEvent, context: Context) => Promise<SQSBatchResponse> {
  const { log } = deps;
  const count = (name: string, value: number) => {
    if (value > 0) deps.metrics?.addMetric(name, MetricUnit.Count, value);
  };
  const once = oncePerItem(deps.idempotency);
  if (deps.idempotency === undefined) {
    log.warn('no idempotency table: two deliveries of one work item at the same time may both publish');
  }

  const handleRecord = async (record: SQSRecord, signal: AbortSignal): Promise<WorkItemResult> => {
    const receiveCount = Number(record.attributes.ApproximateReceiveCount);
    const message = { messageId: record.messageId, receiveCount };
    let item: WorkItem;
    try {
      item = steps.parse(record.body);
    } catch (error) {
      count(publisherMetricNames.workItemsFailed, 1);
      log.error('a work item cannot be read; it fails on every receive until SQS moves it to the dead-letter queue', {
        ...message,
        ...describeError(error),
      });
      throw error;
    }
    const ids = { dispatchId: item.dispatchId, itemId: item.itemId, audienceId: item.audienceId, ...message };
    const lastAttempt = receiveCount >= deps.maxReceiveCount;
    try {
      return await once.run(`${item.dispatchId}#${item.itemId}`, async () => {
        const result = await steps.publish(item, { lastAttempt, signal });
        // Counted where the work is done: a stored result returned again was counted already.
        count(publisherMetricNames.notificationsPublished, result.published);
        count(publisherMetricNames.updateNotices, result.updateNotices);
        count(publisherMetricNames.notificationsParked, result.parked);
        count(publisherMetricNames.workItemsDone, 1);
        return result;
      });
    } catch (error) {
      count(publisherMetricNames.workItemsFailed, 1);
      if (error instanceof IdempotencyAlreadyInProgressError) {
        log.warn('the work item is being published by another delivery; this one comes back later', ids);
      } else if (error instanceof WorkItemRetryError) {
        log.warn('the work item is retried: some notifications were not published for now', {
          ...ids,
          ...describeError(error),
        });
      } else {
        log.error('publishing a work item failed; it comes back', { ...ids, lastAttempt, ...describeError(error) });
      }
      throw error;
    }
  };

  return async (event, context) => {
    once.registerInvocation(context);
    const margin = deps.deadlineMarginMs ?? 5000;
    const untilDeadline = context.getRemainingTimeInMillis() - margin;
    // AbortSignal.timeout(0) fires only on the next timer tick: past the deadline, abort now.
    const signal = untilDeadline > 0 ? AbortSignal.timeout(untilDeadline) : AbortSignal.abort();
    // A processor per invocation: it holds the batch's successes and failures, and the local
    // event source runs several invocations of one handler at the same time.
    const processor = new BatchProcessor(EventType.SQS);
    return processPartialResponse(event, (record: SQSRecord) => handleRecord(record, signal), processor, {
      context,
    });
  };
}

interface OncePerItem {
  run(key: string, work: () => Promise<WorkItemResult>): Promise<WorkItemResult>;
  registerInvocation(context: Context): void;
}

/**
 * Powertools idempotency on the state table, keyed by `dispatchId#itemId` (the pattern of
 * functions/slack-relay/idempotency.ts): the first argument is the key, the second the work.
 */
function oncePerItem(idempotency: WorkItemHandlerDeps['idempotency']): OncePerItem {
  if (idempotency === undefined) return { run: (_key, work) => work(), registerInvocation() {} };
  const config = new IdempotencyConfig({ expiresAfterSeconds: rememberItemsSeconds, eventKeyJmesPath: 'workItem' });
  const persistenceStore = new DynamoDBPersistenceLayer({
    tableName: idempotency.tableName,
    awsSdkV3Client: idempotency.client,
    keyAttr: 'pk',
    sortKeyAttr: 'sk',
    staticPkValue: publishedItemsPartition,
    expiryAttr: 'expiresAt',
  });
  const once = makeIdempotent(
    async (_key: { workItem: string }, work: () => Promise<WorkItemResult>): Promise<WorkItemResult> => await work(),
    { persistenceStore, config, dataIndexArgument: 0 },
  );
  return {
    run: (workItem, work) => once({ workItem }, work),
    // An in-progress record lasts as long as the invocation can (a crashed one frees the item).
    registerInvocation: (context) => config.registerLambdaContext(context),
  };
}

/**
 * What a log line may say about an error: its name always; its message only for this
 * publisher's own errors, whose messages are known to name counts and codes and never a body
 * or a URL (an SDK error's message is not vouched for).
 */
function describeError(error: unknown): Record<string, unknown> {
  const errorName = error instanceof Error ? error.name : typeof error;
  if (error instanceof PoisonWorkItemError || error instanceof WorkItemRetryError) {
    return { errorName, reason: error.message };
  }
  return { errorName };
}
