import { describe, expect, it } from 'vitest';
import {
  backoffDelay,
  decideRetry,
  isRetryableStatus,
  parseRetryAfter,
  type RetryPolicy,
} from '../../functions/slack-relay/retry.ts';

const policy: RetryPolicy = { maxAttempts: 4, baseDelayMs: 500, maxDelayMs: 8000, requestTimeoutMs: 5000 };
const now = Date.UTC(2025, 2, 14, 0, 0, 0);
const plenty = { now, remainingMs: 25_000, random: () => 1 };

describe('parseRetryAfter', () => {
  it('reads delta-seconds and HTTP dates, and ignores what it cannot read', () => {
    expect(parseRetryAfter('3', now)).toBe(3000);
    expect(parseRetryAfter(' 0 ', now)).toBe(0);
    expect(parseRetryAfter(new Date(now + 7000).toUTCString(), now)).toBe(7000);
    expect(parseRetryAfter(new Date(now - 7000).toUTCString(), now)).toBe(0);
    expect(parseRetryAfter('soon', now)).toBeUndefined();
    expect(parseRetryAfter(undefined, now)).toBeUndefined();
  });
});

describe('backoffDelay', () => {
  it('doubles per attempt up to the cap, with half of it jittered', () => {
    expect([1, 2, 3, 4, 5, 6].map((attempt) => backoffDelay(policy, attempt, () => 1))).toEqual([
      500, 1000, 2000, 4000, 8000, 8000,
    ]);
    expect(backoffDelay(policy, 3, () => 0)).toBe(1000);
  });
});

describe('decideRetry', () => {
  it('retries 429 after exactly the Retry-After Slack asked for', () => {
    expect(decideRetry(policy, 1, { kind: 'response', status: 429, retryAfter: '2' }, plenty)).toEqual({
      action: 'retry',
      delayMs: 2000,
      reason: 'HTTP 429; Slack asked to wait (Retry-After)',
    });
  });

  it('backs off on 429 without Retry-After, 5xx, 408 and network errors', () => {
    for (const outcome of [
      { kind: 'response', status: 429 },
      { kind: 'response', status: 500 },
      { kind: 'response', status: 503 },
      { kind: 'response', status: 408 },
      { kind: 'network-error' },
    ] as const) {
      expect(decideRetry(policy, 2, outcome, plenty)).toMatchObject({ action: 'retry', delayMs: 1000 });
    }
  });

  it('treats a request that could not be built as permanent, on any attempt', () => {
    for (const attempt of [1, 2, 5]) {
      expect(decideRetry(policy, attempt, { kind: 'request-error' }, plenty)).toMatchObject({
        action: 'give-up',
        permanent: true,
      });
    }
  });

  it('treats other 4xx as permanent: waiting does not fix a revoked webhook or a bad payload', () => {
    for (const status of [400, 403, 404, 410, 413]) {
      expect(isRetryableStatus(status)).toBe(false);
      expect(decideRetry(policy, 1, { kind: 'response', status }, plenty)).toMatchObject({
        action: 'give-up',
        permanent: true,
      });
    }
  });

  it('gives up (transiently) after the last attempt', () => {
    expect(decideRetry(policy, 4, { kind: 'response', status: 500 }, plenty)).toEqual({
      action: 'give-up',
      permanent: false,
      reason: 'HTTP 500 after 4 attempt(s)',
    });
  });

  it('leaves a wait that does not fit in the invocation to Lambda’s async retry', () => {
    const decision = decideRetry(
      policy,
      1,
      { kind: 'response', status: 429, retryAfter: '30' },
      { ...plenty, remainingMs: 20_000 },
    );
    expect(decision).toMatchObject({ action: 'give-up', permanent: false });
    expect(decideRetry(policy, 1, { kind: 'response', status: 503 }, { ...plenty, remainingMs: 5200 })).toMatchObject({
      action: 'give-up',
      permanent: false,
    });
  });
});
