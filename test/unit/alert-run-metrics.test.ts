/**
 * How failures of the provider boundary are counted (issue 10, items 5a and 5b): a body that
 * crashes the parser and a provider that stalls the run until its deadline are upstream errors,
 * never a successful run.
 */
import type { Metrics } from '@aws-lambda-powertools/metrics';
import { describe, expect, it } from 'vitest';
import { addFailureMetrics, metricNames } from '#alert-run/metrics';
import { ProviderResponseError, ProviderStalledError } from '#core/errors';

function published(error: unknown): Record<string, number> {
  const values: Record<string, number> = {};
  const metrics = {
    addMetric: (name: string, _unit: string, value: number) => {
      values[name] = (values[name] ?? 0) + value;
    },
  } as unknown as Metrics;
  addFailureMetrics(metrics, error);
  return values;
}

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
