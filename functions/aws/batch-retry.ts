/**
 * How the batch senders retry (SnsNotifier's PublishBatch, SqsWorkQueue's SendMessageBatch): at
 * most `concurrency` calls in flight, `maxAttempts` attempts per batch, and exponential backoff
 * with equal jitter between them (functions/shared/retry.ts), so a retry never comes back at once.
 * What each sender retries, and what it reports when attempts run out, stays its own.
 */
import pLimit, { type LimitFunction } from 'p-limit';
import { ConfigError } from '#core/errors';
import { abortableSleep, exponentialBackoff } from '#shared/retry';

/** The retry options both senders take (each documents its own default concurrency). */
export interface BatchRetryOptions {
  /** Calls in flight at once. */
  readonly concurrency?: number;
  /** Attempts per batch (first call included) before what is left is reported failed. Default 5. */
  readonly maxAttempts?: number;
  /** First retry waits about this long; each further retry doubles it. Default 100 ms. */
  readonly baseDelayMs?: number;
  /** Upper bound of one backoff wait. Default 5,000 ms. */
  readonly maxDelayMs?: number;
  /** Waits between attempts; must return early when `signal` aborts. Injected by tests. */
  readonly sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** Jitter source in [0, 1). Default `Math.random`. */
  readonly random?: () => number;
}

/** A sender's retry settings, checked once. */
export class BatchRetry {
  /** Runs a call when one of the `concurrency` slots is free. */
  readonly limit: LimitFunction;
  readonly maxAttempts: number;
  readonly #baseDelayMs: number;
  readonly #maxDelayMs: number;
  readonly #sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  readonly #random: () => number;

  /**
   * @param calls what the calls are, for the error (`SNS publish`, `SQS send`)
   * @throws ConfigError when the concurrency or the attempts are not whole numbers of at least 1
   */
  constructor(calls: string, options: BatchRetryOptions, defaultConcurrency: number) {
    const concurrency = options.concurrency ?? defaultConcurrency;
    const maxAttempts = options.maxAttempts ?? 5;
    if (!Number.isInteger(concurrency) || concurrency < 1) {
      throw new ConfigError(`${calls} concurrency must be a whole number of at least 1, got ${concurrency}`);
    }
    if (!Number.isInteger(maxAttempts) || maxAttempts < 1) {
      throw new ConfigError(`${calls} maxAttempts must be a whole number of at least 1, got ${maxAttempts}`);
    }
    this.limit = pLimit(concurrency);
    this.maxAttempts = maxAttempts;
    this.#baseDelayMs = options.baseDelayMs ?? 100;
    this.#maxDelayMs = options.maxDelayMs ?? 5_000;
    this.#sleep = options.sleep ?? abortableSleep;
    this.#random = options.random ?? Math.random;
  }

  /** Waits before attempt `attempt` (2 is the first retry); returns early when `signal` aborts. */
  async before(attempt: number, signal: AbortSignal | undefined): Promise<void> {
    const wait = exponentialBackoff(attempt - 1, {
      baseMs: this.#baseDelayMs,
      maxMs: this.#maxDelayMs,
      jitter: 'equal',
      random: this.#random,
    });
    await this.#sleep(wait, signal);
  }
}
