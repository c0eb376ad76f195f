/**
 * When to post again. Slack answers 429 with `Retry-After` (seconds) when a webhook sends faster
 * than about one message a second, and 5xx during its own incidents; both pass. Other 4xx
 * (`invalid_payload`, `no_service`, `channel_is_archived`, `action_prohibited`) will not change
 * by waiting. Retries stay inside the invocation's remaining time; what does not fit is left to
 * Lambda's async retries (minutes later), which are the better place to wait out a long outage.
 */

import { exponentialBackoff, parseRetryAfter } from '#shared/retry';

/** Settings of the retry policy. */
export interface RetryPolicy {
  /** Attempts per message in one invocation, the first included. */
  readonly maxAttempts: number;
  /** First backoff delay; doubles on every retry. */
  readonly baseDelayMs: number;
  /** Longest backoff delay (Retry-After may ask for more). */
  readonly maxDelayMs: number;
  /** Time one request may take, reserved before deciding a retry still fits. */
  readonly requestTimeoutMs: number;
}

/** What one attempt produced. */
export type AttemptOutcome =
  | { readonly kind: 'response'; readonly status: number; readonly retryAfter?: string | undefined }
  | { readonly kind: 'network-error' }
  /** The request could not be built (a malformed webhook URL): the same every time. */
  | { readonly kind: 'request-error' };

/** The decision after a failed attempt. */
export type RetryDecision =
  | { readonly action: 'retry'; readonly delayMs: number; readonly reason: string }
  | { readonly action: 'give-up'; readonly permanent: boolean; readonly reason: string };

/** Whether an HTTP status can succeed on a later attempt. */
export const isRetryableStatus = (status: number): boolean => status === 408 || status === 429 || status >= 500;

/** Re-exported: the relay's callers read `Retry-After` through this module. */
export { parseRetryAfter };

/** Exponential backoff with "equal jitter": half fixed, half random, so retries spread out. */
export function backoffDelay(policy: RetryPolicy, attempt: number, random: () => number): number {
  return Math.round(
    exponentialBackoff(attempt, { baseMs: policy.baseDelayMs, maxMs: policy.maxDelayMs, jitter: 'equal', random }),
  );
}

/**
 * Decides what follows failed attempt number `attempt` (1-based).
 *
 * @param remainingMs time left in the invocation, with the caller's safety margin already taken off
 */
export function decideRetry(
  policy: RetryPolicy,
  attempt: number,
  outcome: AttemptOutcome,
  context: { readonly now: number; readonly remainingMs: number; readonly random: () => number },
): RetryDecision {
  const what =
    outcome.kind === 'response'
      ? `HTTP ${outcome.status}`
      : outcome.kind === 'request-error'
        ? 'a request that could not be built'
        : 'network error';
  if ((outcome.kind === 'response' && !isRetryableStatus(outcome.status)) || outcome.kind === 'request-error') {
    return { action: 'give-up', permanent: true, reason: `${what} will not change on retry` };
  }
  if (attempt >= policy.maxAttempts) {
    return { action: 'give-up', permanent: false, reason: `${what} after ${attempt} attempt(s)` };
  }
  const requested =
    outcome.kind === 'response' && outcome.status === 429
      ? parseRetryAfter(outcome.retryAfter, context.now)
      : undefined;
  const delayMs = requested ?? backoffDelay(policy, attempt, context.random);
  if (delayMs + policy.requestTimeoutMs > context.remainingMs) {
    return {
      action: 'give-up',
      permanent: false,
      reason: `${what}; waiting ${delayMs} ms and trying again would not fit in the invocation's remaining time`,
    };
  }
  return {
    action: 'retry',
    delayMs,
    reason: requested === undefined ? `${what}; backing off` : `${what}; Slack asked to wait (Retry-After)`,
  };
}
