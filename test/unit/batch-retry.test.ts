/**
 * The batch senders' retry settings (functions/aws/batch-retry.ts): bad settings are refused at
 * construction with an error that names them, retries wait between half and all of a doubling
 * ceiling, and no more calls than `concurrency` run at once.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '#core/errors';
import { BatchRetry } from '../../functions/aws/batch-retry.ts';

describe('BatchRetry', () => {
  it.each([
    [{ concurrency: 0 }, 'SNS publish concurrency must be a whole number of at least 1, got 0'],
    [{ concurrency: 1.5 }, 'SNS publish concurrency must be a whole number of at least 1, got 1.5'],
    [{ maxAttempts: 0 }, 'SNS publish maxAttempts must be a whole number of at least 1, got 0'],
  ])('refuses %o, naming the setting', (options, message) => {
    expect(() => new BatchRetry('SNS publish', options, 8)).toThrow(new ConfigError(message));
  });

  it('waits between half and all of base × 2^(retry − 1), capped, before each retry', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 2, max: 40 }),
        fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
        fc.integer({ min: 1, max: 1_000 }),
        fc.integer({ min: 1, max: 100_000 }),
        async (attempt, random, baseDelayMs, maxDelayMs) => {
          const waits: number[] = [];
          const retry = new BatchRetry(
            'SQS send',
            { baseDelayMs, maxDelayMs, random: () => random, sleep: async (ms) => void waits.push(ms) },
            4,
          );
          await retry.before(attempt, undefined);
          const ceiling = Math.min(maxDelayMs, baseDelayMs * 2 ** (attempt - 2));
          expect(waits).toHaveLength(1);
          expect(waits[0]).toBeGreaterThanOrEqual(ceiling / 2);
          expect(waits[0]).toBeLessThanOrEqual(ceiling);
        },
      ),
    );
  });

  it('runs at most `concurrency` calls at once (the sender default when not set)', async () => {
    for (const [options, expected] of [
      [{}, 4],
      [{ concurrency: 2 }, 2],
    ] as const) {
      const retry = new BatchRetry('SQS send', options, 4);
      let running = 0;
      let most = 0;
      let finished = 0;
      const release: (() => void)[] = [];
      const calls = Array.from({ length: 10 }, () =>
        retry.limit(async () => {
          running += 1;
          most = Math.max(most, running);
          await new Promise<void>((resolve) => release.push(resolve));
          running -= 1;
          finished += 1;
        }),
      );
      // Let the limiter start what it may, then finish the calls one at a time.
      while (finished < calls.length) {
        await new Promise((resolve) => setImmediate(resolve));
        release.shift()?.();
      }
      await Promise.all(calls);
      expect(most).toBe(expected);
      expect(retry.maxAttempts).toBe(5);
    }
  });
});
