/**
 * Lambda entry point of the publisher function (sharded publishing), invoked by the work queue's
 * SQS event source with `ReportBatchItemFailures`. An adapter only: configuration and clients
 * are built once per execution environment; the batch loop is `createWorkItemHandler`. Failed
 * records are reported, not swallowed, so SQS retries them and finally moves them to the work
 * dead-letter queue; a batch whose every record failed fails the invocation (Powertools).
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SNSClient } from '@aws-sdk/client-sns';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { logger, metrics } from '#shared/powertools';
import { loadPublisherConfig } from './config.ts';
import { createWorkItemHandler } from './process.ts';
import { createPublisherDependencies } from './wiring.ts';

const config = loadPublisherConfig(process.env);
const dynamo = new DynamoDBClient({});
const handleBatch = createWorkItemHandler({
  ...createPublisherDependencies(
    config,
    {
      dynamo,
      documents: DynamoDBDocumentClient.from(dynamo, { marshallOptions: { removeUndefinedValues: true } }),
      sns: new SNSClient({}),
    },
    logger,
  ),
  metrics,
});

export const handler = async (event: SQSEvent, context: Context): Promise<SQSBatchResponse> => {
  logger.addContext(context);
  try {
    return await handleBatch(event, context);
  } finally {
    metrics.publishStoredMetrics();
  }
};
