/**
 * Signed links (functions/core/email/tokens.ts) against hostile input: a token verifies exactly
 * when it was made with a key the secret still has, is unaltered, is of the right purpose and not
 * older than the link lifetime. Any altered byte, another key, another purpose, an expired day, a
 * removed key version or plain garbage fails, and verification never throws.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  type LinkClaims,
  type LinkKey,
  type LinkKeys,
  parseLinkKeySecret,
  signLink,
  verifyLink,
} from '#core/email/tokens';

const key = (version: string, fill: string): LinkKey => ({ version, key: Buffer.from(fill.repeat(64).slice(0, 64)) });
const keysOf = (...keys: LinkKey[]): LinkKeys => ({
  current: async () => keys[0] as LinkKey,
  byVersion: async (version) => keys.find((candidate) => candidate.version === version),
});
const k1 = key('1', 'a');
const today = 20_000;
const options = { today, validDays: 180, purpose: 'manage' as const };

const claims = fc.record({
  purpose: fc.constantFrom<LinkClaims['purpose']>('manage', 'confirm'),
  subscriberId: fc.stringMatching(/^[0-9a-f]{8,40}$/),
  audienceId: fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9._:-]{0,40}$/),
  issuedDay: fc.integer({ min: today - 180, max: today }),
});

describe('signed links', () => {
  it('verify with the claims they were made with', async () => {
    await fc.assert(
      fc.asyncProperty(claims, async (made) => {
        const verified = await verifyLink(signLink(made, k1), keysOf(k1), { ...options, purpose: made.purpose });
        expect(verified).toEqual({ ok: true, claims: made, keyVersion: '1' });
      }),
    );
  });

  it('never verify once any character is changed', async () => {
    await fc.assert(
      fc.asyncProperty(claims, fc.nat(), fc.constantFrom(...'ABCabc019_-.|'), async (made, at, replacement) => {
        const token = signLink(made, k1);
        const index = at % token.length;
        if (token[index] === replacement) return;
        const altered = `${token.slice(0, index)}${replacement}${token.slice(index + 1)}`;
        const verified = await verifyLink(altered, keysOf(k1), { ...options, purpose: made.purpose });
        expect(verified.ok).toBe(false);
      }),
      { numRuns: 500 },
    );
  });

  it('never verify with another key of the same version, or once their version is removed', async () => {
    await fc.assert(
      fc.asyncProperty(claims, async (made) => {
        const token = signLink(made, k1);
        expect(await verifyLink(token, keysOf(key('1', 'b')), { ...options, purpose: made.purpose })).toEqual({
          ok: false,
          failure: 'bad-signature',
        });
        expect(await verifyLink(token, keysOf(key('2', 'a')), { ...options, purpose: made.purpose })).toEqual({
          ok: false,
          failure: 'unknown-key',
        });
      }),
      { numRuns: 100 },
    );
  });

  it('work for the link lifetime after the day they were made, and not after', async () => {
    const made = { purpose: 'manage' as const, subscriberId: 'abcdef0123', audienceId: 'desk', issuedDay: today };
    const token = signLink(made, k1);
    for (const [day, ok] of [
      [today, true],
      [today + 60, true],
      [today + 180, true],
      [today + 181, false],
      [today - 2, false],
    ] as const) {
      expect((await verifyLink(token, keysOf(k1), { ...options, today: day })).ok, String(day - today)).toBe(ok);
    }
  });

  it('serve only their purpose: a confirmation link cannot manage, nor a management link confirm', async () => {
    const manage = signLink(
      { purpose: 'manage', subscriberId: 'abcdef0123', audienceId: 'desk', issuedDay: today },
      k1,
    );
    expect(await verifyLink(manage, keysOf(k1), { ...options, purpose: 'confirm' })).toEqual({
      ok: false,
      failure: 'wrong-purpose',
    });
  });

  it('turn any string into a failure, never an exception', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.string({ maxLength: 600 }),
          fc.stringMatching(/^v1\.[0-9]{1,3}\.[A-Za-z0-9_-]{0,60}\.[A-Za-z0-9_-]{43}$/),
        ),
        async (text) => {
          const verified = await verifyLink(text, keysOf(k1), options);
          expect(verified.ok).toBe(false);
        },
      ),
      { numRuns: 500 },
    );
  });
});

describe('the link-key secret', () => {
  it('reads the current key and every version still accepted', () => {
    const keys = parseLinkKeySecret(
      JSON.stringify({ current: '2', key1: 'x'.repeat(64), key2: 'y'.repeat(64), other: 1 }),
    );
    expect(keys.current.version).toBe('2');
    expect([...keys.all.keys()].sort()).toEqual(['1', '2']);
  });

  it('says what is wrong without ever repeating a key', () => {
    const secret = 'SECRET-KEY-MATERIAL-0123456789';
    for (const text of [
      'not json',
      JSON.stringify([secret]),
      JSON.stringify({ current: '1', key1: secret.slice(0, 10) }),
      JSON.stringify({ current: '3', key1: `${secret}${secret}` }),
    ]) {
      expect(() => parseLinkKeySecret(text)).toThrow();
      try {
        parseLinkKeySecret(text);
      } catch (error) {
        expect((error as Error).message).not.toContain(secret.slice(0, 10));
      }
    }
  });
});
