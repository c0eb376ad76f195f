/**
 * The Lambda handler as Lambda calls it: module-scope configuration and clients (pointed at moto
 * server through AWS_ENDPOINT_URL, which every SDK v3 client honours), a context with the time
 * left, metrics as EMF on stdout. Only the Lambda context is a stand-in: nothing emulates it.
 */
import type { Context } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import type { RunSummary } from '#core/alert-run';
import type { TestStack } from '#test/run-harness';

let stack: TestStack;
let handler: (event: unknown, context: Context) => Promise<RunSummary>;

const context = (requestId: string): Context =>
  ({
    awsRequestId: requestId,
    functionName: 'news-alerts-alert',
    functionVersion: '$LATEST',
    invokedFunctionArn: 'arn:aws:lambda:us-east-1:123456789012:function:news-alerts-alert',
    memoryLimitInMB: '512',
    logGroupName: '/aws/lambda/news-alerts-alert',
    logStreamName: 'test',
    callbackWaitsForEmptyEventLoop: false,
    getRemainingTimeInMillis: () => 5 * 60_000,
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  }) as Context;

/** EMF documents the handler printed while running `action`. */
async function emittedMetrics(action: () => Promise<unknown>): Promise<Record<string, unknown>[]> {
  const lines: string[] = [];
  const spy = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    lines.push(String(chunk));
    return true;
  });
  try {
    await action().catch(() => undefined);
  } finally {
    spy.mockRestore();
  }
  return lines
    .flatMap((line) => line.split('\n'))
    .filter((line) => line.includes('"_aws"'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

let ProviderError: typeof import('#core/errors').ProviderError;

beforeAll(async () => {
  // Powertools reads these when its module loads, so they are set before anything imports it:
  // everything that does is imported dynamically, below (vitest applies its own env after this
  // file's top level has run, so it cannot go there).
  Object.assign(process.env, { POWERTOOLS_METRICS_DISABLED: 'false', POWERTOOLS_METRICS_NAMESPACE: 'NewsAlertsTest' });
  ({ ProviderError } = await import('#core/errors'));
  const { startTestStack } = await import('#test/run-harness');
  // The handler is the Lambda entry point, so it runs on the system clock: the simulator's day is
  // anchored to that clock too (never to a fixed date, which would age out of the run's window).
  stack = await startTestStack({ epoch: Date.now() });
  const { tables } = stack.config;
  Object.assign(process.env, {
    AWS_ENDPOINT_URL: inject('motoEndpoint'),
    NEWS_API_BASE_URL: stack.simulator?.url,
    NEWS_API_ALLOW_INTERNAL_TARGET: 'true',
    NEWS_API_KEY_SECRET_ID: stack.secretId,
    NEWS_API_TIME_ZONE: 'Asia/Seoul',
    NEWS_API_CA_PEM: inject('sandboxCa').cert,
    NEWS_API_BASE_DELAY_MS: '1',
    NEWS_API_MAX_DELAY_MS: '5',
    RULES_TABLE_NAME: tables.rules,
    AUDIENCES_TABLE_NAME: tables.audiences,
    STATE_TABLE_NAME: tables.state,
    INITIAL_LOOKBACK_MINUTES: '1440',
  });
  ({ handler } = await import('../../functions/alert-run/handler.ts'));
});

afterAll(async () => {
  await stack?.stop();
});

describe('alert function handler', () => {
  it('runs a cycle, returns its summary and publishes the run metrics', async () => {
    let summary: RunSummary | undefined;
    let failure: unknown;
    const metrics = await emittedMetrics(async () => {
      summary = await handler({ source: 'aws.scheduler' }, context('request-1')).catch((error: unknown) => {
        failure = error;
        return undefined;
      });
    });
    // A thrown run fails here with its error, not as a missing summary.
    expect(failure).toBeUndefined();
    expect(summary?.status).toBe('completed');
    expect(summary?.runId).toBe('request-1');
    expect(summary?.notificationsPublished).toBeGreaterThan(0);
    expect((await stack.deliveredSoFar()).length).toBe(summary?.notificationsPublished);
    const document = metrics.at(-1) as Record<string, unknown>;
    expect(document.RunSucceeded).toBe(1);
    expect(document.NotificationsPublished).toBe(summary?.notificationsPublished);
    expect(document.InvalidRules).toBe(1);
    expect(JSON.stringify(document._aws)).toContain('NewsAlertsTest');
  });

  it('rethrows a failed run so Lambda retries it and the alarms see it', async () => {
    stack.simulator?.faults.inject({ kind: 'status', status: 503, times: 50 });
    let failure: unknown;
    const metrics = await emittedMetrics(async () => {
      await handler({}, context('request-2')).catch((error: unknown) => {
        failure = error;
      });
    });
    stack.simulator?.faults.clear();
    expect(failure).toBeInstanceOf(ProviderError);
    const document = metrics.at(-1) as Record<string, unknown>;
    expect(document.RunFailed).toBe(1);
    expect(document.UpstreamErrors).toBe(1);
    const runs = await stack.dependencies.state.recentRuns(5);
    expect(runs.find((run) => run.runId === 'request-2')?.status).toBe('failed');
  });
});
