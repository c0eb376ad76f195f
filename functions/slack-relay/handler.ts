/**
 * Lambda entry point of the Slack relay, subscribed to the audience topics that post to Slack. An
 * adapter only: configuration, the Secrets Manager client and the HTTPS pool are built once per
 * execution environment; the work is `SlackRelay`. Errors propagate so Lambda retries the event
 * and then sends it to the relay's dead-letter queue.
 */
import { MetricUnit } from '@aws-lambda-powertools/metrics';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import type { Context } from 'aws-lambda';
import { Agent } from '#shared/http-pool';
import { logger, metrics } from '#shared/powertools';
import { loadSlackRelayConfig } from './config.ts';
import { postedAlerts } from './idempotency.ts';
import { type RelayResult, SlackRelay } from './relay.ts';
import { SecretsManagerWebhooks, UndiciWebhookPoster } from './webhook.ts';

const config = loadSlackRelayConfig(process.env);

const posted =
  config.postedAlerts === undefined
    ? undefined
    : postedAlerts({ client: new DynamoDBClient({}), ...config.postedAlerts });
if (posted === undefined) {
  logger.warn('POSTED_ALERTS_TABLE is not set: a delivery that arrives twice is posted to Slack twice');
}

const relay = new SlackRelay({
  webhooks: new SecretsManagerWebhooks({
    client: new SecretsManagerClient({}),
    explicitSecrets: config.webhookSecrets,
    storePrefix: config.storePrefix,
    maxAgeSeconds: config.webhookCacheSeconds,
  }),
  poster: new UndiciWebhookPoster({
    // Keep-alive across warm invocations; Slack's endpoint is one host. The pool connects only to
    // public addresses, whatever the webhook's host name resolves to (no allowInternalTargets).
    dispatcher: new Agent({ connect: { timeout: config.retry.requestTimeoutMs }, keepAliveTimeout: 30_000 }),
    timeoutMs: config.retry.requestTimeoutMs,
  }),
  log: logger,
  retry: config.retry,
  topicNamePrefix: config.topicNamePrefix,
  counters: {
    posted: () => metrics.addMetric('SlackMessagesPosted', MetricUnit.Count, 1),
    retried: () => metrics.addMetric('SlackPostRetries', MetricUnit.Count, 1),
    failed: () => metrics.addMetric('SlackMessagesFailed', MetricUnit.Count, 1),
    duplicate: () => metrics.addMetric('SlackDuplicatesSkipped', MetricUnit.Count, 1),
  },
  oncePerDelivery: posted?.oncePerDelivery,
});

/** SNS → Lambda: one alert per record. */
export const handler = async (event: unknown, context: Context): Promise<RelayResult[]> => {
  logger.addContext(context);
  posted?.registerInvocation(context);
  try {
    return await relay.handle(event, { remainingTimeMs: () => context.getRemainingTimeInMillis() });
  } finally {
    metrics.publishStoredMetrics();
  }
};
