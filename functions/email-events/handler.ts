/**
 * Lambda entry point of the SES events function (configuration set → SNS → this). An adapter
 * only: configuration and clients once per execution environment; the work is process.ts.
 */
import { MetricUnit } from '@aws-lambda-powertools/metrics';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { PutConfigurationSetSendingOptionsCommand, SESv2Client } from '@aws-sdk/client-sesv2';
import type { Context } from 'aws-lambda';
import { logger, metrics } from '#shared/powertools';
import { loadEmailConfig } from '../email/config.ts';
import { subscriberStoreOf } from '../email/wiring.ts';
import { handleEmailEvents } from './process.ts';

const config = loadEmailConfig(process.env, 'events');
const ses = new SESv2Client({});
const store = subscriberStoreOf(config, { dynamo: new DynamoDBClient({}) });
const configurationSet = config.configurationSet;

export const handler = async (event: unknown, context: Context) => {
  logger.addContext(context);
  try {
    return await handleEmailEvents(event, {
      store,
      sending:
        configurationSet === undefined
          ? undefined
          : {
              pause: async () => {
                await ses.send(
                  new PutConfigurationSetSendingOptionsCommand({
                    ConfigurationSetName: configurationSet,
                    SendingEnabled: false,
                  }),
                );
              },
            },
      log: logger,
      now: Date.now,
      count: (name) => metrics.addMetric(name, MetricUnit.Count, 1),
    });
  } finally {
    metrics.publishStoredMetrics();
  }
};
