/**
 * Environment of the benchmark process, set before any AWS SDK or Powertools module loads (import
 * this module first): no SDK Node-version banner in the output, no Powertools logs or EMF metrics
 * from the in-process run, and a region for clients that do not get one explicitly.
 */
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
process.env.POWERTOOLS_LOG_LEVEL ??= 'SILENT';
process.env.POWERTOOLS_METRICS_DISABLED ??= 'true';
process.env.AWS_REGION ??= 'us-east-1';

/** Marks the module as loaded (imported for its side effect). */
export const benchEnvironmentReady = true;
