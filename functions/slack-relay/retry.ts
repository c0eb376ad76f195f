/**
 * When to post again. Slack answers 429 with `Retry-After` (seconds) when a webhook sends faster
 * than about one message a second, and 5xx during its own incidents; both pass. Other 4xx
 * (`invalid_payload`, `no_service`, `channel_is_archived`, `action_prohibited`) will not change
 * by waiting. Retries stay inside the invocation's remaining time; what does not fit is left to
 * Lambda's async retries (minutes later), which are the better place to wait out a long outage.
 */

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
  | { readonly kind: 'network-error' };

/** The decision after a failed attempt. */
export type RetryDecision =
  | { readonly action: 'retry'; readonly delayMs: number; readonly reason: string }
  | { readonly action: 'give-up'; readonly permanent: boolean; readonly reason: string };

/** Whether an HTTP status can succeed on a later attempt. */
export const isRetryableStatus = (status: number): boolean => status === 408 || status === 429 || status >= 500;

/**
 * Milliseconds a `Retry-After` header asks for: delta-seconds or an HTTP date. Undefined when the
 * header is missing or unreadable (the backoff applies then).
 */
export function parseRetryAfter(header: string | undefined, now: number): number | undefined {
  if (header === undefined) return undefined;
  const trimmed = header.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  const at = Date.parse(trimmed);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/** Exponential backoff with "equal jitter": half fixed, half random, so retries spread out. */
export function backoffDelay(policy: RetryPolicy, attempt: number, random: () => number): number {
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** Math.max(0, attempt - 1));
  return Math.round(ceiling / 2 + (ceiling / 2) * random());
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
  const what = outcome.kind === 'response' ? `HTTP ${outcome.status}` : 'network error';
  if (outcome.kind === 'response' && !isRetryableStatus(outcome.status)) {
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
