import { describe, expect, it } from 'vitest';
import { exponentialBackoff, parseRetryAfter } from '#shared/retry';

describe('exponentialBackoff', () => {
  const options = { baseMs: 100, maxMs: 1000, random: () => 0.5 } as const;

  it('doubles the ceiling per retry up to the cap', () => {
    const full = [1, 2, 3, 4, 5].map((retry) => exponentialBackoff(retry, { ...options, jitter: 'full' }));
    expect(full).toEqual([50, 100, 200, 400, 500]);
  });

  it('equal jitter keeps half the ceiling fixed', () => {
    expect(exponentialBackoff(1, { ...options, jitter: 'equal', random: () => 0 })).toBe(50);
    expect(exponentialBackoff(3, { ...options, jitter: 'equal', random: () => 0.999 })).toBeCloseTo(399.8);
  });
});

describe('parseRetryAfter', () => {
  const now = Date.parse('2026-11-22T00:00:00Z');

  it('reads delta-seconds and HTTP dates, never negative', () => {
    expect(parseRetryAfter('3', now)).toBe(3000);
    expect(parseRetryAfter([' 7 '], now)).toBe(7000);
    expect(parseRetryAfter('Sun, 22 Nov 2026 00:00:12 GMT', now)).toBe(12_000);
    expect(parseRetryAfter('Sat, 21 Nov 2026 23:59:00 GMT', now)).toBe(0);
  });

  it('ignores a missing or unreadable header', () => {
    expect(parseRetryAfter(undefined, now)).toBeUndefined();
    expect(parseRetryAfter('', now)).toBeUndefined();
    expect(parseRetryAfter('soon', now)).toBeUndefined();
    expect(parseRetryAfter('-5', now)).toBeUndefined();
  });
});
