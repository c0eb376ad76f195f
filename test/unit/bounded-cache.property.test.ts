/**
 * BoundedCache, the memo behind the zone, text-cut and TLS-context caches: every answer is the
 * function's own (remembered or not, `undefined` included), a thrown computation remembers
 * nothing, and it never holds more than its limit whatever keys arrive.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BoundedCache } from '#core/bounded-cache';

describe('BoundedCache', () => {
  it('answers as the function does and never holds more than its limit, in any order of keys', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 8 }),
        fc.array(fc.integer({ min: 0, max: 20 }), { maxLength: 200 }),
        (limit, keys) => {
          const cache = new BoundedCache<number, number | undefined>(limit);
          const answer = (key: number) => (key % 3 === 0 ? undefined : key * 7);
          let computed = 0;
          for (const key of keys) {
            expect(
              cache.get(key, (k) => {
                computed++;
                return answer(k);
              }),
            ).toBe(answer(key));
            expect(cache.size).toBeLessThanOrEqual(limit);
          }
          expect(computed).toBeLessThanOrEqual(keys.length);
        },
      ),
    );
  });

  it('computes a remembered answer once, `undefined` included, and remembers nothing from a throw', () => {
    const cache = new BoundedCache<string, string | undefined>(4);
    let calls = 0;
    const lookUp = (key: string) => {
      calls++;
      return key === 'none' ? undefined : key.toUpperCase();
    };
    expect(cache.get('a', lookUp)).toBe('A');
    expect(cache.get('none', lookUp)).toBeUndefined();
    expect(cache.get('a', lookUp)).toBe('A');
    expect(cache.get('none', lookUp)).toBeUndefined();
    expect(calls).toBe(2);
    expect(() =>
      cache.get('bad', () => {
        throw new Error('no');
      }),
    ).toThrow('no');
    expect(cache.get('bad', lookUp)).toBe('BAD');
    expect(() => new BoundedCache(0)).toThrow(RangeError);
  });
});
