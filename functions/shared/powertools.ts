/**
 * The one Powertools setup every function shares: logger and metrics are created once per
 * execution environment. Service name and namespace come from the POWERTOOLS_* variables the
 * stack sets (so two deployments in one account keep their metrics and alarms apart), with these
 * defaults for local runs. Constructor values would win over the environment, hence the lookup.
 *
 * The logger scrubs secrets from every log line (defense in depth behind the redaction the
 * adapters already do): every string of every entry — message, keys' values, and each field of
 * each error in a cause chain, which Powertools serializes with its own enumerable fields such as
 * undici's `data` — goes through `redactSecrets` with the registered secrets
 * (functions/shared/secret-redaction.ts).
 */
import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import { hasRegisteredSecrets, redactSecrets, sanitizeError } from './secret-redaction.ts';

/** Default service name (the stack sets POWERTOOLS_SERVICE_NAME to its resource prefix). */
export const defaultServiceName = 'news-alerts';
/** Default CloudWatch namespace of the run metrics. */
export const defaultMetricsNamespace = 'NewsAlerts';

export const serviceName = process.env.POWERTOOLS_SERVICE_NAME || defaultServiceName;

/**
 * The JSON replacer of every log entry: strings are redacted, and errors are replaced by
 * sanitized copies (non-enumerable fields included) before Powertools formats them.
 */
export function redactingJsonReplacer(_key: string, value: unknown): unknown {
  if (!hasRegisteredSecrets()) return value;
  if (typeof value === 'string') return redactSecrets(value);
  if (value instanceof Error) return sanitizeError(value);
  return value;
}

/** A logger that redacts registered secrets; `options` as for Powertools' Logger. */
export function createLogger(options: ConstructorParameters<typeof Logger>[0] = {}): Logger {
  return new Logger({ serviceName, ...options, jsonReplacerFn: redactingJsonReplacer });
}

export const logger = createLogger();

export const metrics = new Metrics({
  namespace: process.env.POWERTOOLS_METRICS_NAMESPACE || defaultMetricsNamespace,
  serviceName,
});
