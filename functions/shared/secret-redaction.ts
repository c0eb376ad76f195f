/**
 * Keeps secrets (the provider API key, webhook URLs) out of every error chain and log line.
 *
 * The guarantee (DESIGN section 3, "Secrets stay secret"): once a value is registered, no text
 * that passes through `redactSecrets` or `sanitizeError` — and so no log line of the shared logger
 * (functions/shared/powertools.ts) — contains the secret or any part of it long enough to matter:
 *
 * - the whole secret and every substring of at least {@link minSecretFragment} characters
 *   (a prefix quoted by a parser error, a suffix left after a cut sample, a middle part);
 * - in any letter case;
 * - raw, URL-encoded, base64/base64url-encoded at any byte alignment, and hex-encoded (its UTF-8
 *   bytes, two digits each, in either case: `4b45592d…`);
 * - written with escapes, in any mix and nested up to three deep (a JSON string inside a JSON
 *   string): JSON's `\"` `\\` `\/` and `\uXXXX` (`\u004b\u0045…`), `\u{…}`, `\xHH`,
 *   percent-encoding of every byte (`%4B%45…`, and `%254B` twice encoded), and HTML character
 *   references (`&#75;`, `&#x4b;`).
 *
 * Why substrings: providers and HTTP parsers quote what they were given, but often trimmed
 * (Node's JSON.parse error quotes the first 10 characters; undici's HTTPParserError keeps raw
 * bytes); a fragment of a key narrows a brute force as much as a leaked prefix does.
 *
 * How, at a cost linear in the text: each secret's encoded forms are computed once, at
 * registration, as the set of their fixed-length windows (a window of the raw, URL and base64
 * forms is `minSecretFragment` characters; of the hex form, the `2 × minSecretFragment` digits of
 * as many bytes). Redaction slides one window of each length over the lower-cased text and marks
 * every hit, so it never misses a fragment at a chunk boundary: every character of a matching
 * fragment lies in at least one matching window. Escapes are undone first, into a decoded copy of
 * the text that remembers which characters of the original each of its characters came from; the
 * same windows run over the copy, and what they hit is redacted in the original, escapes and all.
 * Text without a `\`, `%` or `&#` skips that step.
 */

/** Shortest part of a secret that is redacted on its own; shorter secrets are redacted whole. */
export const minSecretFragment = 8;
/** Secrets shorter than this are too short to redact without destroying ordinary text. */
const minSecretLength = 4;
/** What a redacted part is replaced with. */
export const redactionMarker = '[REDACTED]';
/** Escapes inside escapes are undone this many times at most (a JSON log line of a JSON log line…). */
const maxDecodePasses = 3;

interface SecretForms {
  /** Lower-cased windows of every encoded form, by window length. */
  readonly windows: ReadonlyMap<number, ReadonlySet<string>>;
  /** Lower-cased whole forms, for secrets shorter than a window. */
  readonly whole: readonly string[];
}

const registry = new Map<string, SecretForms>();
/** The registry's windows and whole forms merged, so a text is scanned once whatever the number of secrets. */
let merged: SecretForms | undefined;

const base64Cores = (secret: string, alphabet: 'base64' | 'base64url'): string[] => {
  // A secret inside a longer encoded text starts at one of three byte alignments. Encoding it
  // with 0, 1 or 2 bytes in front and dropping the characters those bytes (and the unknown
  // bytes after the secret) touch leaves the characters that encode only the secret's own bytes.
  const bytes = Buffer.from(secret, 'utf8');
  const cores: string[] = [];
  for (let lead = 0; lead < 3; lead++) {
    const padded = Buffer.concat([Buffer.alloc(lead, 0), bytes]);
    const encoded = padded.toString(alphabet).replace(/=+$/, '');
    const start = lead === 0 ? 0 : Math.ceil((lead * 4) / 3);
    const fullGroups = Math.floor(padded.length / 3);
    // Only characters of complete 3-byte groups are independent of what follows the secret.
    cores.push(encoded.slice(start, fullGroups * 4));
  }
  return cores;
};

function addWindows(windows: Map<number, Set<string>>, form: string, length: number): void {
  let set = windows.get(length);
  if (set === undefined) {
    set = new Set();
    windows.set(length, set);
  }
  for (let i = 0; i + length <= form.length; i++) set.add(form.slice(i, i + length));
}

/** `encodeURIComponent`, which refuses a lone surrogate: such a secret is written with U+FFFD in its place. */
const uriComponent = (value: string): string =>
  encodeURIComponent((value as string & { toWellFormed(): string }).toWellFormed());

function formsOf(secret: string): SecretForms {
  const json = JSON.stringify(secret).slice(1, -1);
  const bytes = Buffer.from(secret, 'utf8');
  // Whole forms a short secret is redacted in: the base64 cores of a short secret are shorter
  // still and would match ordinary words.
  const exact = new Set([secret, uriComponent(secret), json, bytes.toString('latin1')]);
  const forms = new Set<string>([
    ...exact,
    // A JSON-escaped secret inside a JSON string that is escaped again (a log line of a log line).
    JSON.stringify(json).slice(1, -1),
    ...base64Cores(secret, 'base64'),
    ...base64Cores(secret, 'base64url'),
  ]);
  const windows = new Map<number, Set<string>>();
  const whole = new Set<string>();
  for (const form of forms) {
    const lower = form.toLowerCase();
    if (lower.length === 0) continue;
    if (lower.length >= minSecretFragment) addWindows(windows, lower, minSecretFragment);
    else if (exact.has(form)) whole.add(lower);
  }
  // Hex: two digits a byte, so a fragment of `minSecretFragment` bytes is twice as many digits.
  const hex = bytes.toString('hex');
  if (hex.length >= 2 * minSecretFragment) addWindows(windows, hex, 2 * minSecretFragment);
  else whole.add(hex);
  return { windows, whole: [...whole] };
}

function mergeForms(all: Iterable<SecretForms>): SecretForms {
  const windows = new Map<number, Set<string>>();
  const whole = new Set<string>();
  for (const forms of all) {
    for (const [length, set] of forms.windows) {
      const into = windows.get(length);
      if (into === undefined) windows.set(length, new Set(set));
      else for (const window of set) into.add(window);
    }
    for (const form of forms.whole) whole.add(form);
  }
  return { windows, whole: [...whole] };
}

/**
 * Registers a secret value so every later `redactSecrets`, `sanitizeError` and log line removes
 * it. Values shorter than four characters are ignored (they cannot be told from ordinary text);
 * surrounding whitespace is registered in both forms since a pasted key often carries a newline.
 * The encoded forms are computed here, once, so redaction stays a single scan of the text.
 */
export function registerSecret(value: string | undefined): void {
  if (value === undefined) return;
  for (const candidate of new Set([value, value.trim()])) {
    if (candidate.length < minSecretLength || registry.has(candidate)) continue;
    registry.set(candidate, formsOf(candidate));
    merged = undefined;
  }
}

/** Whether any secret is registered (lets hot paths skip work). */
export const hasRegisteredSecrets = (): boolean => registry.size > 0;

/** Forgets every registered secret; for tests that need a clean registry. */
export function clearRegisteredSecrets(): void {
  registry.clear();
  merged = undefined;
}

const formsFor = (extra: Iterable<string>): SecretForms | undefined => {
  const unregistered: SecretForms[] = [];
  for (const secret of extra) {
    if (secret.length < minSecretLength || registry.has(secret)) continue;
    unregistered.push(formsOf(secret));
  }
  if (registry.size === 0 && unregistered.length === 0) return undefined;
  merged ??= mergeForms(registry.values());
  return unregistered.length === 0 ? merged : mergeForms([merged, ...unregistered]);
};

/**
 * `text` with every registered secret (and every secret in `extra`), every fragment of at least
 * eight characters of one, in any case and in each encoding named in the module comment,
 * replaced with `[REDACTED]`.
 */
export function redactSecrets(text: string, extra: Iterable<string> = []): string {
  const forms = formsFor(extra);
  if (forms === undefined || text.length < minSecretLength) return text;
  const hidden = new Uint8Array(text.length);
  let any = markHits(lowerSameLength(text), forms, (from, to) => hidden.fill(1, from, to));
  for (const decoded of decodedViews(text)) {
    const { starts, ends } = decoded;
    any =
      markHits(lowerSameLength(decoded.text), forms, (from, to) => {
        const start = starts[from];
        const end = ends[to - 1];
        if (start !== undefined && end !== undefined) hidden.fill(1, start, end);
      }) || any;
  }
  if (!any) return text;
  let out = '';
  for (let i = 0; i < text.length; ) {
    if (hidden[i] === 1) {
      out += redactionMarker;
      while (i < text.length && hidden[i] === 1) i++;
    } else {
      const start = i;
      while (i < text.length && hidden[i] !== 1) i++;
      out += text.slice(start, i);
    }
  }
  return out;
}

/** Calls `hit` with the range of every window or whole form of `forms` in `haystack`; whether any was found. */
function markHits(haystack: string, forms: SecretForms, hit: (from: number, to: number) => void): boolean {
  let any = false;
  for (const [length, windows] of forms.windows) {
    for (let i = 0; i + length <= haystack.length; i++) {
      if (windows.has(haystack.slice(i, i + length))) {
        hit(i, i + length);
        any = true;
      }
    }
  }
  for (const form of forms.whole) {
    for (let at = haystack.indexOf(form); at !== -1; at = haystack.indexOf(form, at + 1)) {
      hit(at, at + form.length);
      any = true;
    }
  }
  return any;
}

/** A decoded copy of a text: character `i` came from characters `starts[i]` to `ends[i]` (exclusive) of the original. */
interface DecodedView {
  readonly text: string;
  readonly starts: Int32Array;
  readonly ends: Int32Array;
}

/**
 * An escape of one character: JSON's and JavaScript's backslash escapes, percent-encoding, HTML
 * references. The letters in any case (`\U004B`, `\X4B`, `&#X4B;`): a log pipeline may have
 * upper-cased the line.
 */
const ESCAPE =
  /\\u\{([0-9a-f]{1,6})\}|\\u([0-9a-f]{4})|\\x([0-9a-f]{2})|%([0-9a-f]{2})|&#x([0-9a-f]{1,6});|&#([0-9]{1,7});|\\(["\\/])/gi;
/**
 * {@link ESCAPE} without JSON's `\\`, `\"` and `\/`: `\\u0041` is a backslash and `u0041`
 * to JSON, but a backslash and `A` to whatever decodes escapes greedily (a log viewer, a person);
 * and `\/` is a `/` to JSON, but stays `\/` to a reader who undoes only the other escapes (a
 * secret holding `\/` written with its `=` as `&#61;` reads as the secret there). Text holding
 * one of those three is decoded both ways, so a secret survives in neither reading.
 */
const GREEDY_ESCAPE =
  /\\u\{([0-9a-f]{1,6})\}|\\u([0-9a-f]{4})|\\x([0-9a-f]{2})|%([0-9a-f]{2})|&#x([0-9a-f]{1,6});|&#([0-9]{1,7});/gi;
const MAY_BE_ESCAPED = /[\\%]|&#/;
/**
 * JSON's escapes that stand for a character a secret may hold. The letter escapes (`\n`, `\t`, …)
 * are left alone: a secret holds no control character, and `\` before a secret that starts with
 * `n` or `t` must not eat that letter.
 */
const simpleEscapes: Readonly<Record<string, string>> = { '"': '"', '\\': '\\', '/': '/' };

/**
 * What {@link ESCAPE} stands for, as UTF-16 code units. A percent or `\x` escape gives its byte
 * as one character (U+0000–U+00FF), which is how a secret's UTF-8 bytes read in Latin-1: that form
 * is registered too.
 */
function unescaped(match: RegExpExecArray): string | undefined {
  const [, braced, unit, byte, percent, hexRef, decimalRef, simple] = match;
  if (unit !== undefined) return String.fromCharCode(Number.parseInt(unit, 16));
  if (byte !== undefined) return String.fromCharCode(Number.parseInt(byte, 16));
  if (percent !== undefined) return String.fromCharCode(Number.parseInt(percent, 16));
  if (simple !== undefined) return simpleEscapes[simple];
  const code = Number.parseInt(
    braced ?? hexRef ?? decimalRef ?? '',
    braced !== undefined || hexRef !== undefined ? 16 : 10,
  );
  return Number.isInteger(code) && code <= 0x10ffff ? String.fromCodePoint(code) : undefined;
}

/** One byte escape, `\xHH` or `%HH`, exactly at `lastIndex`. */
const BYTE_ESCAPE = /\\x([0-9a-f]{2})|%([0-9a-f]{2})/iy;

/**
 * When `first` is the lead byte of a UTF-8 sequence (from a byte escape), the character that it
 * and the byte escapes right after it at `at` spell, and where they end: a secret written as
 * `\xf0\x9f\x94\x91` next to characters left as they are reads as the secret itself.
 */
function utf8Sequence(text: string, first: string, at: number): { value: string; end: number } | undefined {
  const lead = first.charCodeAt(0);
  if (first.length !== 1 || lead < 0xc2 || lead > 0xf4) return undefined;
  const bytes = [lead];
  let end = at;
  for (let more = lead >= 0xf0 ? 3 : lead >= 0xe0 ? 2 : 1; more > 0; more--) {
    BYTE_ESCAPE.lastIndex = end;
    const next = BYTE_ESCAPE.exec(text);
    const byte = next === null ? Number.NaN : Number.parseInt(next[1] ?? next[2] ?? '', 16);
    if (next === null || byte < 0x80 || byte > 0xbf) return undefined;
    bytes.push(byte);
    end += next[0].length;
  }
  const value = Buffer.from(bytes).toString('utf8');
  return value.includes('\ufffd') ? undefined : { value, end };
}

/** The text with one layer of escapes undone, or undefined when it has none. */
function decodeOnce(
  text: string,
  pattern: RegExp = ESCAPE,
): { text: string; starts: Int32Array; ends: Int32Array } | undefined {
  if (!MAY_BE_ESCAPED.test(text)) return undefined;
  let out = '';
  const starts: number[] = [];
  const ends: number[] = [];
  let from = 0;
  let changed = false;
  const keep = (to: number) => {
    for (let i = from; i < to; i++) {
      starts.push(i);
      ends.push(i + 1);
    }
    out += text.slice(from, to);
  };
  pattern.lastIndex = 0;
  for (let match = pattern.exec(text); match !== null; match = pattern.exec(text)) {
    let value = unescaped(match);
    if (value === undefined) continue;
    keep(match.index);
    let end = match.index + match[0].length;
    const sequence = utf8Sequence(text, value, end);
    if (sequence !== undefined) {
      ({ value, end } = sequence);
      pattern.lastIndex = end;
    }
    for (let i = 0; i < value.length; i++) {
      starts.push(match.index);
      ends.push(end);
    }
    out += value;
    from = end;
    changed = true;
  }
  if (!changed) return undefined;
  keep(text.length);
  return { text: out, starts: Int32Array.from(starts), ends: Int32Array.from(ends) };
}

/**
 * Each layer of escapes of `text` undone in turn, mapped back to the original's positions; with
 * one of JSON's `\\`, `\"` or `\/` in the text, the layers of the other reading too
 * ({@link GREEDY_ESCAPE}).
 */
function decodedViews(text: string): DecodedView[] {
  const views = decodedLayers(text, ESCAPE);
  return SIMPLE_ESCAPE.test(text) ? [...views, ...decodedLayers(text, GREEDY_ESCAPE)] : views;
}

/** A JSON escape {@link GREEDY_ESCAPE} leaves as it is. */
const SIMPLE_ESCAPE = /\\["\\/]/;

function decodedLayers(text: string, pattern: RegExp): DecodedView[] {
  const views: DecodedView[] = [];
  let current: DecodedView | undefined;
  for (let pass = 0; pass < maxDecodePasses; pass++) {
    const next = decodeOnce(current?.text ?? text, pattern);
    if (next === undefined) break;
    if (current !== undefined) {
      const { starts, ends } = current;
      // Compose: a character of this layer spans characters of the last, which span the original's.
      for (let i = 0; i < next.starts.length; i++) {
        next.starts[i] = starts[next.starts[i] ?? 0] ?? 0;
        next.ends[i] = ends[(next.ends[i] ?? 1) - 1] ?? text.length;
      }
    }
    current = next;
    views.push(current);
  }
  return views;
}

/** Lower case with one code unit per code unit of `text`, so positions map back to the original. */
function lowerSameLength(text: string): string {
  const lower = text.toLowerCase();
  if (lower.length === text.length) return lower;
  // A few characters (İ) grow when lower-cased; keep those as they are.
  let out = '';
  for (let i = 0; i < text.length; i++) {
    const unit = text.charAt(i);
    const lowered = unit.toLowerCase();
    out += lowered.length === 1 ? lowered : unit;
  }
  return out;
}

/**
 * A copy of an error that is safe to keep, log or attach as a `cause`: an Error with the same
 * `name`, whose message, stack, cause chain, `AggregateError.errors` and every own string field
 * (enumerable or not: undici's `data`, a body, a code, headers) went through `redactSecrets`.
 * Other own values are copied when they are numbers, booleans or null, and sanitized recursively
 * when they are objects, up to a depth limit; functions and symbols are dropped.
 *
 * The copy is a plain `Error` (its `name` tells the class): the original may hold sockets,
 * buffers of raw response bytes or getters that would re-expose the secret.
 */
export function sanitizeError(error: unknown, redact: Redactor = (text) => redactSecrets(text)): Error {
  const sanitized = sanitizeValue(error, redact, 0, new WeakMap());
  if (sanitized instanceof Error) return sanitized;
  // A thrown non-Error (a string, an object) becomes an Error whose message shows it.
  const wrapped = new Error(typeof sanitized === 'string' ? sanitized : safeJson(sanitized));
  wrapped.name = 'NonErrorThrown';
  return wrapped;
}

/** Turns a text into its redacted form; `redactSecrets` with the registry by default. */
export type Redactor = (text: string) => string;

function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return '[unserializable]';
  }
}

const maxDepth = 8;
const maxStringLength = 4096;

function sanitizeString(value: string, redact: Redactor): string {
  // Redact first: a cut made before redaction could leave a fragment that no longer matches.
  const redacted = redact(value.length > maxStringLength * 4 ? value.slice(0, maxStringLength * 4) : value);
  return redacted.length > maxStringLength ? `${redacted.slice(0, maxStringLength - 1)}…` : redacted;
}

function sanitizeValue(value: unknown, redact: Redactor, depth: number, seen: WeakMap<object, unknown>): unknown {
  if (typeof value === 'string') return sanitizeString(value, redact);
  if (typeof value === 'number' || typeof value === 'boolean' || value === null || value === undefined) return value;
  if (typeof value === 'bigint') return value.toString();
  if (typeof value !== 'object') {
    // Functions and symbols carry no data worth logging.
    return typeof value === 'function' ? undefined : sanitizeString(String(value), redact);
  }
  if (seen.has(value)) return seen.get(value);
  if (depth >= maxDepth) return '[nested too deep]';
  if (value instanceof Error) {
    const copy = new Error(sanitizeString(String(value.message ?? ''), redact));
    seen.set(value, copy);
    copy.name = sanitizeString(String(value.name ?? 'Error'), redact);
    Object.defineProperty(copy, 'stack', {
      value: typeof value.stack === 'string' ? sanitizeString(value.stack, redact) : undefined,
      writable: true,
      configurable: true,
      enumerable: false,
    });
    for (const key of Object.getOwnPropertyNames(value)) {
      if (key === 'message' || key === 'name' || key === 'stack') continue;
      const descriptor = Object.getOwnPropertyDescriptor(value, key);
      // Getters are not called: they may compute a value from raw bytes.
      if (descriptor === undefined || !('value' in descriptor)) continue;
      const sanitized = sanitizeValue(descriptor.value, redact, depth + 1, seen);
      if (sanitized === undefined && typeof descriptor.value === 'function') continue;
      Object.defineProperty(copy, key, {
        value: sanitized,
        writable: true,
        configurable: true,
        enumerable: descriptor.enumerable ?? true,
      });
    }
    return copy;
  }
  if (ArrayBuffer.isView(value) || value instanceof ArrayBuffer) {
    // Raw bytes (a response chunk) are shown as text, so they can be redacted like text.
    const bytes =
      value instanceof ArrayBuffer
        ? new Uint8Array(value)
        : new Uint8Array(value.buffer, value.byteOffset, value.byteLength);
    return sanitizeString(Buffer.from(bytes).toString('utf8'), redact);
  }
  if (Array.isArray(value)) {
    const copy: unknown[] = [];
    seen.set(value, copy);
    for (const element of value.slice(0, 100)) copy.push(sanitizeValue(element, redact, depth + 1, seen));
    return copy;
  }
  const copy: Record<string, unknown> = {};
  seen.set(value, copy);
  for (const key of Object.keys(value).slice(0, 100)) {
    const descriptor = Object.getOwnPropertyDescriptor(value, key);
    if (descriptor === undefined || !('value' in descriptor)) continue;
    const sanitized = sanitizeValue(descriptor.value, redact, depth + 1, seen);
    if (sanitized !== undefined) copy[redact(key)] = sanitized;
  }
  return copy;
}
