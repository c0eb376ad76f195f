/**
 * Turns a run summary (or a failure) into CloudWatch metrics through Powertools Metrics (EMF).
 * The stack's alarms are built on these names, so they are exported as constants.
 */
import { type Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import type { RunSummary } from '#core/alert-run';
import { ProviderAuthError, ProviderError } from '#core/errors';

/** Metric names the monitoring construct alarms on. */
export const metricNames = {
  runSucceeded: 'RunSucceeded',
  runSkipped: 'RunSkipped',
  runFailed: 'RunFailed',
  runDuration: 'RunDuration',
  watermarkLag: 'WatermarkLag',
  articlesFetched: 'ArticlesFetched',
  articlesNew: 'ArticlesNew',
  articlesMatched: 'ArticlesMatched',
  articlesMalformed: 'ArticlesMalformed',
  pagesParked: 'PagesParked',
  notificationsPublished: 'NotificationsPublished',
  notificationsFailed: 'NotificationsFailed',
  notificationsParked: 'NotificationsParked',
  notificationsDeferred: 'NotificationsDeferred',
  notificationsUnrenderable: 'NotificationsUnrenderable',
  duplicatesSuppressed: 'DuplicatesSuppressed',
  lateDeliveries: 'LateDeliveries',
  notificationsHeld: 'NotificationsHeld',
  budgetOverflow: 'BudgetOverflow',
  notificationsCollapsed: 'NotificationsCollapsed',
  updateNotices: 'UpdateNotices',
  updatesIgnored: 'UpdatesIgnored',
  notificationsQueued: 'NotificationsQueued',
  workItemsQueued: 'WorkItemsQueued',
  digestsSent: 'DigestsSent',
  digestItemsReleased: 'DigestItemsReleased',
  digestsFailed: 'DigestsFailed',
  invalidRules: 'InvalidRules',
  invalidAudiences: 'InvalidAudiences',
  upstreamAuthFailures: 'UpstreamAuthFailures',
  upstreamErrors: 'UpstreamErrors',
} as const;

/**
 * The metrics every finished run sends, zero included: the no-successful-run alarm fires on a
 * missing RunSucceeded, and the dashboard's volume graphs read a quiet run as zero. Every other
 * metric is sent only when it is not zero. CloudWatch bills a custom metric for each hour it
 * receives a value, so a count that stays zero in a healthy month (failures, parked pages,
 * invalid rules...) costs nothing then; the alarms on those counts treat missing data as not
 * breaching (lib/constructs/monitoring.ts), which is what a zero means to them.
 */
export const everyRunMetrics: ReadonlySet<string> = new Set([
  metricNames.runSucceeded,
  metricNames.runDuration,
  metricNames.watermarkLag,
  metricNames.articlesFetched,
  metricNames.articlesNew,
  metricNames.articlesMatched,
  metricNames.notificationsPublished,
]);

/**
 * Metrics that count what the product does in normal use (stories collapsed, digests, quiet hours,
 * late articles, sharded queueing): sent only when not zero, like the trouble counts, but a
 * deployment that uses the feature sends them most hours, so docs/cost.md prices them as sent
 * every hour. The rest of {@link metricNames} counts trouble: zero in a healthy month.
 */
export const activityMetrics: ReadonlySet<string> = new Set([
  metricNames.duplicatesSuppressed,
  metricNames.lateDeliveries,
  metricNames.notificationsHeld,
  metricNames.budgetOverflow,
  metricNames.notificationsCollapsed,
  metricNames.updateNotices,
  metricNames.updatesIgnored,
  metricNames.notificationsQueued,
  metricNames.workItemsQueued,
  metricNames.digestsSent,
  metricNames.digestItemsReleased,
]);

/** Adds the metrics of a finished (or skipped) run: {@link everyRunMetrics} always, the rest when not zero. */
export function addRunMetrics(metrics: Metrics, summary: RunSummary, now: number): void {
  const count = (name: string, value: number) => {
    if (value !== 0 || everyRunMetrics.has(name)) metrics.addMetric(name, MetricUnit.Count, value);
  };
  if (summary.status === 'skipped') {
    count(metricNames.runSkipped, 1);
    return;
  }
  // A checkpointed run made progress and will continue: it counts as a successful run.
  count(metricNames.runSucceeded, summary.status === 'completed' || summary.status === 'checkpointed' ? 1 : 0);
  metrics.addMetric(metricNames.runDuration, MetricUnit.Milliseconds, summary.finishedAt - summary.startedAt);
  if (summary.watermarkAfter !== undefined) {
    metrics.addMetric(metricNames.watermarkLag, MetricUnit.Seconds, Math.max(0, (now - summary.watermarkAfter) / 1000));
  }
  count(metricNames.articlesFetched, summary.articlesFetched);
  count(metricNames.articlesNew, summary.articlesNew);
  count(metricNames.articlesMatched, summary.articlesMatched);
  count(metricNames.articlesMalformed, summary.articlesSkippedMalformed);
  count(metricNames.pagesParked, summary.pagesParked);
  count(metricNames.notificationsPublished, summary.notificationsPublished);
  count(metricNames.notificationsFailed, summary.notificationsFailed);
  count(metricNames.notificationsParked, summary.notificationsParked);
  count(metricNames.notificationsDeferred, summary.notificationsDeferred);
  count(metricNames.notificationsUnrenderable, summary.notificationsUnrenderable);
  count(metricNames.duplicatesSuppressed, summary.notificationsAlreadyDelivered);
  count(metricNames.lateDeliveries, summary.lateDeliveries);
  count(metricNames.notificationsHeld, summary.notificationsHeld);
  count(metricNames.budgetOverflow, summary.budgetOverflow);
  count(metricNames.notificationsCollapsed, summary.notificationsCollapsed);
  count(metricNames.updateNotices, summary.updateNotices);
  count(metricNames.updatesIgnored, summary.updatesIgnored);
  // Sharded publishing: what the run handed to the publishers (they report what they published).
  count(metricNames.notificationsQueued, summary.notificationsQueued);
  count(metricNames.workItemsQueued, summary.workItemsQueued);
  count(metricNames.digestsSent, summary.digestsSent);
  count(metricNames.digestItemsReleased, summary.digestItemsReleased);
  count(metricNames.digestsFailed, summary.digestsFailed);
  count(metricNames.invalidRules, summary.invalidRules);
  count(metricNames.invalidAudiences, summary.invalidAudiences);
}

/** Adds the metrics of a run that threw. */
export function addFailureMetrics(metrics: Metrics, error: unknown): void {
  metrics.addMetric(metricNames.runSucceeded, MetricUnit.Count, 0);
  metrics.addMetric(metricNames.runFailed, MetricUnit.Count, 1);
  if (error instanceof ProviderAuthError) metrics.addMetric(metricNames.upstreamAuthFailures, MetricUnit.Count, 1);
  else if (error instanceof ProviderError) metrics.addMetric(metricNames.upstreamErrors, MetricUnit.Count, 1);
}
