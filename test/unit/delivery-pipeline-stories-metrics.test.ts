/**
 * Collapsed copies and update notices become CloudWatch metrics like the other delivery counts
 * (issue 13): `NotificationsCollapsed`, `UpdateNotices`, `UpdatesIgnored`, from the run summary.
 */
import type { Metrics } from '@aws-lambda-powertools/metrics';
import { describe, expect, it } from 'vitest';
import { addRunMetrics, metricNames } from '#alert-run/metrics';
import type { RunSummary } from '#core/alert-run';
import { emptyDeliveryCounts } from '#core/delivery-pipeline';
import { emptyDigestCounts } from '#core/digest-release';

function published(summary: RunSummary): Record<string, number> {
  const values: Record<string, number> = {};
  const metrics = {
    addMetric: (name: string, _unit: string, value: number) => {
      values[name] = (values[name] ?? 0) + value;
    },
  } as unknown as Metrics;
  addRunMetrics(metrics, summary, summary.finishedAt);
  return values;
}

describe('story and update metrics', () => {
  it('reports collapsed copies, update notices sent and updates ignored', () => {
    const summary: RunSummary = {
      runId: 'run-1',
      status: 'completed',
      startedAt: 0,
      finishedAt: 1000,
      daysCompleted: 1,
      pages: 1,
      articlesFetched: 9,
      articlesNew: 9,
      articlesMatched: 9,
      articlesSkippedMalformed: 0,
      pagesParked: 0,
      parkedPages: [],
      invalidRules: 0,
      invalidAudiences: 0,
      ...emptyDeliveryCounts(),
      ...emptyDigestCounts(),
      notificationsCollapsed: 7,
      updateNotices: 2,
      updatesIgnored: 3,
    };
    expect(published(summary)).toMatchObject({
      [metricNames.notificationsCollapsed]: 7,
      [metricNames.updateNotices]: 2,
      [metricNames.updatesIgnored]: 3,
    });
    expect(metricNames).toMatchObject({
      notificationsCollapsed: 'NotificationsCollapsed',
      updateNotices: 'UpdateNotices',
      updatesIgnored: 'UpdatesIgnored',
    });
  });
});
