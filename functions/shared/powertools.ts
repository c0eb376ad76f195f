/**
 * The one Powertools setup every function shares: logger and metrics are created once per
 * execution environment. Service name and namespace come from POWERTOOLS_* environment variables
 * set by the stack, with these defaults.
 */
import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';

export const serviceName = 'news-alerts';

export const logger = new Logger({ serviceName });

export const metrics = new Metrics({ namespace: 'NewsAlerts', serviceName });
