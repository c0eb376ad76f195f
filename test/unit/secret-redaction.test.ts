/**
 * The secret registry and redaction (functions/shared/secret-redaction.ts): every fragment of
 * eight or more characters of a registered secret, in every encoding, in every field of every
 * error of a chain.
 */
import { inspect } from 'node:util';
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import {
  clearRegisteredSecrets,
  redactionMarker,
  redactSecrets,
  registerSecret,
  sanitizeError,
} from '#shared/secret-redaction';
import { decodeEscapes, escapeEvery, leaksOf, secretForms } from '#test/secret-leaks';

const key = 'sk_live_9fQ2xR7tLm4Wb8Zc';

afterEach(() => clearRegisteredSecrets());

describe('redactSecrets', () => {
  it('removes every 8+ character fragment of a registered key in every encoding', () => {
    registerSecret(key);
    const forms = secretForms(key);
    expect(forms.length).toBeGreaterThan(100);
    // Every redacted text on a line of its own, searched once (a search per text would take seconds).
    const redacted = forms.flatMap((form) =>
      [form, `before ${form} after`, `x${form.toUpperCase()}y`].map((text) => redactSecrets(text)),
    );
    expect(leaksOf(redacted.join('\n'), key)).toEqual([]);
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

describe('redactSecrets over every encoding (issue 30, item 6)', () => {
  /** Ways a provider, a proxy or a log pipeline writes a text it was given. */
  const encodings: Readonly<Record<string, (part: string) => string>> = {
    raw: (part) => part,
    'upper case': (part) => part.toUpperCase(),
    'JSON string': (part) => JSON.stringify(part).slice(1, -1),
    'JSON string in a JSON string': (part) => JSON.stringify(JSON.stringify(part)).slice(1, -1),
    'URL component': (part) => encodeURIComponent(part),
    hex: (part) => Buffer.from(part, 'utf8').toString('hex'),
    'upper-case hex': (part) => Buffer.from(part, 'utf8').toString('hex').toUpperCase(),
    '\\uXXXX for every character': (part) => escapeEvery(part, 'u'),
    '\\uXXXX with upper-case digits': (part) =>
      escapeEvery(part, 'u').replace(/[a-f]/g, (digit) => digit.toUpperCase()),
    '\\uXXXX escaped again': (part) => JSON.stringify(escapeEvery(part, 'u')).slice(1, -1),
    '\\xHH for every byte': (part) => escapeEvery(part, 'x'),
    '%HH for every byte': (part) => escapeEvery(part, 'percent'),
    '%HH for every byte, encoded twice': (part) => encodeURIComponent(escapeEvery(part, 'percent')),
    '&#N; references': (part) => escapeEvery(part, 'decimal'),
    '&#xH; references': (part) => escapeEvery(part, 'hexref'),
    'base64 inside a longer text': (part) => Buffer.from(`x:${part};`).toString('base64'),
    'base64url inside a longer text': (part) => Buffer.from(`ab${part}`).toString('base64url'),
  };

  /** Keys as they come: letters, digits and the punctuation key formats use, sometimes not ASCII. */
  const secret = fc.string({
    unit: fc.oneof(
      { weight: 20, arbitrary: fc.constantFrom(...'ABCXYZabcxyz0123456789-_.~+/=:'.split('')) },
      { weight: 1, arbitrary: fc.constantFrom('é', '키', '鍵', '🔑', '"', '\\', '%', '&') },
    ),
    minLength: 8,
    maxLength: 48,
  });

  /** A secret and a part of it of eight characters or more (often all of it). */
  const secretAndPart = secret.chain((value) => {
    // Cut between characters, never inside a surrogate pair (no text holds half an emoji).
    const chars = [...value];
    return fc.oneof(
      fc.constant([value, value] as const),
      fc
        .integer({ min: 0, max: Math.max(0, chars.length - 8) })
        .chain((start) =>
          fc
            .integer({ min: Math.min(start + 8, chars.length), max: chars.length })
            .map((end) => [value, chars.slice(start, end).join('')] as const),
        ),
    );
  });

  /** What surrounds the encoded secret: any text, escapes and markup included. */
  const around = fc.string({ maxLength: 40 });

  it('no encoded form of a registered secret, whole or any part of eight characters, survives in any text', () => {
    fc.assert(
      fc.property(
        secretAndPart,
        fc.constantFrom(...Object.keys(encodings)),
        around,
        around,
        ([value, part], name, before, after) => {
          clearRegisteredSecrets();
          registerSecret(value);
          const encode = encodings[name] ?? ((text: string) => text);
          const redacted = redactSecrets(`${before}${encode(part)}${after}`);
          expect(leaksOf(redacted, value), name).toEqual([]);
          expect(leaksOf(decodeEscapes(redacted), value), name).toEqual([]);
        },
      ),
      { numRuns: 400 },
    );
  });

  it('a secret escaped right after a backslash is redacted in the greedy reading too (property counterexample)', () => {
    // JSON reads `\\u0041` as a backslash and "u0041"; a log viewer or a person reads `\A`.
    clearRegisteredSecrets();
    registerSecret('Aé%AAAAA');
    const escaped = encodings['\\uXXXX for every character']?.('Aé%AAAAA') ?? '';
    expect(escaped).toBe('\\u0041\\u00e9\\u0025\\u0041\\u0041\\u0041\\u0041\\u0041');
    const redacted = redactSecrets(`\\${escaped}`);
    expect(redacted).not.toContain(escaped);
    expect(leaksOf(redacted, 'Aé%AAAAA')).toEqual([]);
  });

  it('a secret holding JSON’s \\/ is redacted when another of its characters is escaped and \\/ is not (property counterexample)', () => {
    // JSON reads `\/` as `/`; a reader who undoes only the HTML reference reads the secret.
    clearRegisteredSecrets();
    const secret = '+z~c7/鍵Y%9zé2B9a.7&A%\\/=a';
    registerSecret(secret);
    const redacted = redactSecrets('.7&A%\\/&#61;');
    expect(leaksOf(decodeEscapes(redacted), secret)).toEqual([]);
    expect(redacted).toBe('[REDACTED]');
  });

  it('no part of a registered secret survives when only some of its characters are escaped, in any mix', () => {
    const escapeOne = fc.constantFrom(
      (char: string) => char,
      (char: string) => escapeEvery(char, 'u'),
      (char: string) => escapeEvery(char, 'x'),
      (char: string) => escapeEvery(char, 'percent'),
      (char: string) => escapeEvery(char, 'decimal'),
      (char: string) => escapeEvery(char, 'hexref'),
    );
    fc.assert(
      fc.property(
        secretAndPart.chain(([value, part]) =>
          fc.tuple(
            fc.constant(value),
            fc
              .array(escapeOne, { minLength: [...part].length, maxLength: [...part].length })
              .map((escapes) =>
                [...part].map((char, index) => (escapes[index] ?? ((same: string) => same))(char)).join(''),
              ),
          ),
        ),
        around,
        around,
        ([value, mixed], before, after) => {
          clearRegisteredSecrets();
          registerSecret(value);
          const redacted = redactSecrets(`${before}${mixed}${after}`);
          expect(leaksOf(decodeEscapes(redacted), value)).toEqual([]);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('redacts the issue forms: hex=… in a 403 body and literal \\uXXXX escapes', () => {
    const apiKey = 'KEY-1f9a7c3e5b20d846';
    registerSecret(apiKey);
    const hex = Buffer.from(apiKey).toString('hex');
    expect(hex.startsWith('4b45592d')).toBe(true);
    expect(redactSecrets(`403 forbidden: hex=${hex}`)).toBe(`403 forbidden: hex=${redactionMarker}`);
    expect(redactSecrets(`{"message":"key ${escapeEvery(apiKey, 'u')} refused"}`)).toBe(
      `{"message":"key ${redactionMarker} refused"}`,
    );
  });

  it('leaves escapes, hex and percent-encoding that hold no secret as they are', () => {
    registerSecret(key);
    const ordinary = [
      '{"title":"caf\\u00e9 \\u2014 100% \\x41","id":"4b45592d0a0b0c0d0e0f"}',
      'GET /news?q=%EB%B0%98%EB%8F%84%EC%B2%B4&size=100 &#8212; &#x2014;',
      'trace 0123456789abcdef0123456789abcdef',
    ];
    for (const text of ordinary) expect(redactSecrets(text)).toBe(text);
  });
});
