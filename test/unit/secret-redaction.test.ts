/**
 * The secret registry and redaction (functions/shared/secret-redaction.ts): every fragment of
 * eight or more characters of a registered secret, in every encoding, in every field of every
 * error of a chain.
 */
import { inspect } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import {
  clearRegisteredSecrets,
  redactionMarker,
  redactSecrets,
  registerSecret,
  sanitizeError,
} from '#shared/secret-redaction';
import { leaksOf, secretForms } from '#test/secret-leaks';

const key = 'sk_live_9fQ2xR7tLm4Wb8Zc';

afterEach(() => clearRegisteredSecrets());

describe('redactSecrets', () => {
  it('removes every 8+ character fragment of a registered key in every encoding', () => {
    registerSecret(key);
    const forms = secretForms(key);
    expect(forms.length).toBeGreaterThan(100);
    for (const form of forms) {
      for (const text of [form, `before ${form} after`, `x${form.toUpperCase()}y`]) {
        expect(leaksOf(redactSecrets(text), key), text).toEqual([]);
      }
    }
  });

  it('removes base64 of the key at every byte alignment inside a longer encoded text', () => {
    registerSecret(key);
    for (const prefix of ['', 'a', 'ab', 'abc']) {
      for (const alphabet of ['base64', 'base64url'] as const) {
        const encoded = Buffer.from(`${prefix}Authorization: ${key}; more`).toString(alphabet);
        const redacted = redactSecrets(encoded);
        expect(redacted).toContain(redactionMarker);
        expect(leaksOf(Buffer.from(redacted.replaceAll(redactionMarker, ''), alphabet).toString(), key)).toEqual([]);
      }
    }
  });

  it('leaves ordinary text and short fragments alone', () => {
    registerSecret(key);
    expect(redactSecrets('nothing secret here')).toBe('nothing secret here');
    expect(redactSecrets(`${key.slice(0, 7)} is too short to matter`)).toBe(
      `${key.slice(0, 7)} is too short to matter`,
    );
  });

  it('redacts a short secret only whole, and ignores secrets under four characters', () => {
    registerSecret('abc');
    registerSecret('k3y42');
    expect(redactSecrets('abc k3y42 K3Y42')).toBe(`abc ${redactionMarker} ${redactionMarker}`);
  });
});

describe('sanitizeError', () => {
  it('redacts message, stack, own fields (enumerable or not), nested causes and AggregateError errors', () => {
    registerSecret(key);
    const inner = Object.assign(new Error(`inner ${key}`), { data: `raw bytes ${key}\r\n` });
    Object.defineProperty(inner, 'hidden', { value: Buffer.from(`hidden ${key}`), enumerable: false });
    const aggregate = new AggregateError(
      [new Error(`one ${key.toUpperCase()}`), inner],
      `many ${encodeURIComponent(key)}`,
    );
    const outer = Object.assign(new TypeError(`outer ${JSON.stringify(key)}`, { cause: aggregate }), {
      code: `E_${key}`,
      response: { headers: { 'x-echo': key }, body: Buffer.from(key).toString('base64') },
    });
    expect(inspect(outer, { showHidden: true, depth: 20 })).toContain(key);
    const copy = sanitizeError(outer);
    const text = inspect(copy, { showHidden: true, depth: 20 });
    expect(leaksOf(text, key)).toEqual([]);
    expect(copy.name).toBe('TypeError');
    expect((copy.cause as Error).name).toBe('AggregateError');
    expect((copy.cause as AggregateError).errors).toHaveLength(2);
    expect(text).toContain('raw bytes');
  });

  it('survives cycles, getters and non-errors', () => {
    registerSecret(key);
    const error = new Error('cyclic') as Error & { self?: unknown };
    error.self = error;
    Object.defineProperty(error, 'lazy', {
      get: () => {
        throw new Error('never called');
      },
    });
    expect(() => sanitizeError(error)).not.toThrow();
    expect(sanitizeError(`thrown string ${key}`).message).toBe(`thrown string ${redactionMarker}`);
  });
});
