/**
 * Lambda entry point of the email delivery function (SNS → SQS → this → SES). An adapter only:
 * configuration and one client per service are built once per execution environment; the work is
 * functions/email/process.ts over the email core.
 */
import { MetricUnit } from '@aws-lambda-powertools/metrics';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { SESv2Client } from '@aws-sdk/client-sesv2';
import type { Context } from 'aws-lambda';
import { logger, metrics } from '#shared/powertools';
import { loadEmailConfig } from './config.ts';
import { createEmailHandler } from './process.ts';
import { createDeliveryDependencies } from './wiring.ts';

const config = loadEmailConfig(process.env, 'delivery');
const count = (name: string) => (value: number) => {
  if (value > 0) metrics.addMetric(name, MetricUnit.Count, value);
};

const handle = createEmailHandler(
  createDeliveryDependencies(
    config,
    { dynamo: new DynamoDBClient({}), ses: new SESv2Client({}), secrets: new SecretsManagerClient({}) },
    logger,
    {
      counters: {
        sent: count('EmailsSent'),
        held: count('EmailsHeldForDigest'),
        suppressed: count('EmailsSuppressed'),
        paused: count('EmailsPaused'),
        duplicates: count('EmailDuplicatesSkipped'),
        throttled: count('EmailsThrottled'),
        rejected: count('EmailsRejected'),
      },
    },
  ),
);

export const handler = async (event: unknown, context: Context) => {
  logger.addContext(context);
  try {
    return await handle(event, context);
  } finally {
    metrics.publishStoredMetrics();
  }
};
