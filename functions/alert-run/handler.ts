/**
 * Lambda entry point of the scheduled alert run. An adapter only: configuration and clients are
 * built once per execution environment, the run itself is `runAlertCycle`. Failures are logged
 * once and rethrown so Lambda's retries, the on-failure destination and the error alarm see them.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { SNSClient } from '@aws-sdk/client-sns';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { Context } from 'aws-lambda';
import { type RunSummary, runAlertCycle } from '#core/alert-run';
import { DeliveryIncompleteError } from '#core/errors';
import { logger, metrics } from '#shared/powertools';
import { loadAlertRunConfig } from './config.ts';
import { addFailureMetrics, addRunMetrics } from './metrics.ts';
import { createAlertRunDependencies } from './wiring.ts';

const config = loadAlertRunConfig(process.env);
const dependencies = createAlertRunDependencies(
  config,
  {
    documents: DynamoDBDocumentClient.from(new DynamoDBClient({}), {
      marshallOptions: { removeUndefinedValues: true },
    }),
    sns: new SNSClient({}),
    secrets: new SecretsManagerClient({}),
    // Only sharded mode queues work items; a single-mode cold start does not load the SQS client.
    // One attempt per request: the work queue retries itself and judges each attempt (one that
    // got no answer may have queued its items); the SDK's own retries would hide that.
    sqs:
      config.publishMode === 'sharded'
        ? new (await import('@aws-sdk/client-sqs')).SQSClient({ maxAttempts: 1 })
        : undefined,
  },
  logger,
);

/** The Scheduler's payload is not used: every run works out its window from the watermark. */
export const handler = async (_event: unknown, context: Context): Promise<RunSummary> => {
  logger.addContext(context);
  logger.appendKeys({ runId: context.awsRequestId });
  try {
    const summary = await runAlertCycle(dependencies, config.run, {
      runId: context.awsRequestId,
      remainingTimeMs: () => context.getRemainingTimeInMillis(),
    });
    addRunMetrics(metrics, summary, Date.now());
    logger.info('alert run finished', { summary });
    if (summary.status === 'incomplete') {
      // Everything else is checkpointed; failing the invocation makes Lambda retry and alarms fire.
      throw new DeliveryIncompleteError(summary.notificationsFailed);
    }
    return summary;
  } catch (error) {
    if (!(error instanceof DeliveryIncompleteError)) addFailureMetrics(metrics, error);
    logger.error('alert run failed', error as Error);
    throw error;
  } finally {
    metrics.publishStoredMetrics();
    logger.removeKeys(['runId']);
  }
};
