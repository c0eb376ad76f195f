/**
 * Lambda entry point of the preference endpoint, behind an API Gateway HTTP API (payload 2.0),
 * and of `mailto:` unsubscribes (an SES receipt rule invokes it with the mail's headers). An
 * adapter only: the HTTP event becomes a plain request for functions/core/email/preferences.ts
 * and its response goes back as it is. Nothing here logs a path (it holds the token) or an
 * address.
 */
import { MetricUnit } from '@aws-lambda-powertools/metrics';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { handleMailtoUnsubscribe, handlePreferenceRequest } from '#core/email/preferences';
import { logger, metrics } from '#shared/powertools';
import { loadEmailConfig } from '../email/config.ts';
import { createPreferenceDependencies } from '../email/wiring.ts';
import { fromHttpApiEvent } from './http.ts';

const config = loadEmailConfig(process.env, 'preferences');
const deps = createPreferenceDependencies(
  config,
  { dynamo: new DynamoDBClient({}), secrets: new SecretsManagerClient({}) },
  logger,
  {
    count: (outcome) =>
      metrics.addMetric(`PreferenceRequests_${outcome.replace(/[^A-Za-z0-9_-]/g, '_')}`, MetricUnit.Count, 1),
  },
);

interface SesReceiptEvent {
  readonly Records: readonly {
    readonly eventSource?: string;
    readonly ses?: { readonly mail?: { readonly commonHeaders?: { readonly subject?: string } } };
  }[];
}

const isSesReceipt = (event: unknown): event is SesReceiptEvent =>
  Array.isArray((event as { Records?: unknown } | null)?.Records) &&
  (event as SesReceiptEvent).Records[0]?.eventSource === 'aws:ses';

export const handler = async (
  event: APIGatewayProxyEventV2 | SesReceiptEvent,
  context: Context,
): Promise<APIGatewayProxyStructuredResultV2 | { disposition: string }> => {
  logger.addContext(context);
  try {
    if (isSesReceipt(event)) {
      for (const record of event.Records)
        await handleMailtoUnsubscribe(record.ses?.mail?.commonHeaders?.subject ?? '', deps);
      // The mail itself is not kept or delivered anywhere.
      return { disposition: 'STOP_RULE' };
    }
    const response = await handlePreferenceRequest(fromHttpApiEvent(event), deps);
    return { statusCode: response.status, headers: { ...response.headers }, body: response.body };
  } finally {
    metrics.publishStoredMetrics();
  }
};
