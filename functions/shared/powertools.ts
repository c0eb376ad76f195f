/**
 * The one Powertools setup every function shares: logger and metrics are created once per
 * execution environment. Service name and namespace come from the POWERTOOLS_* variables the
 * stack sets (so two deployments in one account keep their metrics and alarms apart), with these
 * defaults for local runs. Constructor values would win over the environment, hence the lookup.
 */
import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';

/** Default service name (the stack sets POWERTOOLS_SERVICE_NAME to its resource prefix). */
export const defaultServiceName = 'news-alerts';
/** Default CloudWatch namespace of the run metrics. */
export const defaultMetricsNamespace = 'NewsAlerts';

export const serviceName = process.env.POWERTOOLS_SERVICE_NAME || defaultServiceName;

export const logger = new Logger({ serviceName });

export const metrics = new Metrics({
  namespace: process.env.POWERTOOLS_METRICS_NAMESPACE || defaultMetricsNamespace,
  serviceName,
});
