/**
 * Retry timing shared by every adapter that retries: exponential backoff with jitter (AWS
 * Architecture Blog, "Exponential Backoff And Jitter") and the `Retry-After` header.
 */

import { setTimeout as delay } from 'node:timers/promises';

export interface BackoffOptions {
  /** Delay ceiling of the first retry. */
  readonly baseMs: number;
  /** Largest ceiling, however many retries. */
  readonly maxMs: number;
  /**
   * `full`: uniform in [0, ceiling), the least contention when many clients retry together;
   * `equal`: half the ceiling fixed and half random, so a retry never comes back at once.
   */
  readonly jitter: 'full' | 'equal';
  /** Uniform in [0, 1); injectable so tests see exact delays. */
  readonly random: () => number;
}

/** Delay before retry number `retry` (1 for the first retry): ceiling = base × 2^(retry − 1). */
export function exponentialBackoff(retry: number, options: BackoffOptions): number {
  const ceiling = Math.min(options.maxMs, options.baseMs * 2 ** Math.max(0, retry - 1));
  return options.jitter === 'full' ? options.random() * ceiling : ceiling / 2 + (options.random() * ceiling) / 2;
}

/**
 * Milliseconds a `Retry-After` header asks for: delta-seconds or an HTTP date (never negative).
 * Undefined when the header is missing or unreadable; the backoff applies then.
 */
export function parseRetryAfter(header: string | readonly string[] | undefined, now: number): number | undefined {
  const value = (typeof header === 'string' ? header : header?.[0])?.trim();
  if (!value) return undefined;
  if (/^\d+$/.test(value)) return Number(value) * 1000;
  // An HTTP date names its month (`Sun, 22 Nov 2026 …`); Date.parse alone would read "-5" as a year.
  if (!/[A-Za-z]{3}/.test(value)) return undefined;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/** Resolves after `ms`, or at once when `signal` aborts (a deadline must not wait out a backoff). */
export async function abortableSleep(ms: number, signal?: AbortSignal): Promise<void> {
  try {
    await delay(ms, undefined, { signal });
  } catch (error) {
    if (!(signal?.aborted ?? false)) throw error;
  }
}
