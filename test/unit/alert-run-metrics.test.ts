/**
 * How runs become CloudWatch metrics: failures of the provider boundary (issue 10, items 5a and
 * 5b: a body that crashes the parser and a provider that stalls the run until its deadline are
 * upstream errors, never a successful run), and collapsed copies and update notices (issue 13).
 */
import type { Metrics } from '@aws-lambda-powertools/metrics';
import { describe, expect, it } from 'vitest';
import { activityMetrics, addFailureMetrics, addRunMetrics, everyRunMetrics, metricNames } from '#alert-run/metrics';
import { emptyRunSummary } from '#core/alert-run';
import { ProviderResponseError, ProviderStalledError } from '#core/errors';

/** The metrics `emit` adds, summed by name. */
function recorded(emit: (metrics: Metrics) => void): Record<string, number> {
  const values: Record<string, number> = {};
  const metrics = {
    addMetric: (name: string, _unit: string, value: number) => {
      values[name] = (values[name] ?? 0) + value;
    },
  } as unknown as Metrics;
  emit(metrics);
  return values;
}

const published = (error: unknown) => recorded((metrics) => addFailureMetrics(metrics, error));

describe('run failure metrics at the provider boundary', () => {
  it.each([
    ['a stalled provider cut by the deadline', new ProviderStalledError('the run time budget ran out while …')],
    ['a body the client could not read', new ProviderResponseError('the response could not be read: RangeError')],
  ])('counts %s as a failed run and an upstream error', (_label, error) => {
    expect(published(error)).toEqual({
      [metricNames.runSucceeded]: 0,
      [metricNames.runFailed]: 1,
      [metricNames.upstreamErrors]: 1,
    });
  });
});

describe('story and update metrics', () => {
  it('reports collapsed copies, update notices sent and updates ignored', () => {
    const summary = { ...emptyRunSummary('run-1', 0), notificationsCollapsed: 7, updateNotices: 2, updatesIgnored: 3 };
    expect(recorded((metrics) => addRunMetrics(metrics, summary, summary.finishedAt))).toMatchObject({
      [metricNames.notificationsCollapsed]: 7,
      [metricNames.updateNotices]: 2,
      [metricNames.updatesIgnored]: 3,
    });
    // The names docs/operate.md gives ops.
    expect(metricNames).toMatchObject({
      notificationsCollapsed: 'NotificationsCollapsed',
      updateNotices: 'UpdateNotices',
      updatesIgnored: 'UpdatesIgnored',
    });
  });
});

describe('sharded publishing metrics', () => {
  it('reports what a sharded run queued, and nothing of it as published by the run', () => {
    const summary = { ...emptyRunSummary('run-1', 0), notificationsQueued: 40, workItemsQueued: 5 };
    const values = recorded((metrics) => addRunMetrics(metrics, summary, summary.finishedAt));
    expect(values).toMatchObject({
      NotificationsQueued: 40,
      WorkItemsQueued: 5,
      [metricNames.notificationsPublished]: 0,
    });
  });

  it('adds no queue metrics to a single-mode run', () => {
    const values = recorded((metrics) => addRunMetrics(metrics, emptyRunSummary('run-1', 0), 0));
    expect(values).not.toHaveProperty('NotificationsQueued');
  });
});

describe('what a run sends (issue 33: a metric costs only in the hours it is sent)', () => {
  it('sends only the every-run metrics for a quiet run, zeros included', () => {
    const summary = { ...emptyRunSummary('run-1', 0), watermarkAfter: 0 };
    const values = recorded((metrics) => addRunMetrics(metrics, summary, 60_000));
    expect(new Set(Object.keys(values))).toEqual(everyRunMetrics);
    expect(values[metricNames.articlesNew]).toBe(0);
  });

  it('sends every other count in a run where it is not zero, with its value', () => {
    const summary = { ...emptyRunSummary('run-1', 0), watermarkAfter: 0 };
    const counted = Object.entries(summary).filter(([, value]) => value === 0);
    const busy = Object.fromEntries(counted.map(([key], index) => [key, index + 1]));
    const values = recorded((metrics) => addRunMetrics(metrics, { ...summary, ...busy, watermarkAfter: 0 }, 60_000));
    const trouble = Object.values(metricNames).filter(
      (name) =>
        !everyRunMetrics.has(name) &&
        !activityMetrics.has(name) &&
        !['RunSkipped', 'RunFailed', 'UpstreamAuthFailures', 'UpstreamErrors'].includes(name),
    );
    for (const name of [...activityMetrics, ...trouble]) expect(values[name], name).toBeGreaterThan(0);
  });

  it('names every metric once: sent every run, activity, or trouble', () => {
    for (const name of everyRunMetrics) expect(activityMetrics.has(name), name).toBe(false);
    for (const name of [...everyRunMetrics, ...activityMetrics]) expect(Object.values(metricNames)).toContain(name);
  });
});
