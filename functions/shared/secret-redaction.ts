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
 * - raw, JSON-escaped, URL-encoded, and base64/base64url-encoded at any byte alignment.
 *
 * Why substrings: providers and HTTP parsers quote what they were given, but often trimmed
 * (Node's JSON.parse error quotes the first 10 characters; undici's HTTPParserError keeps raw
 * bytes); a fragment of a key narrows a brute force as much as a leaked prefix does.
 *
 * Matching works on lower-cased text against the set of `minSecretFragment`-character windows of
 * each encoded form, so it is linear in the text length and never misses a fragment at a chunk
 * boundary: every character of a matching fragment lies in at least one matching window.
 */

/** Shortest part of a secret that is redacted on its own; shorter secrets are redacted whole. */
export const minSecretFragment = 8;
/** Secrets shorter than this are too short to redact without destroying ordinary text. */
const minSecretLength = 4;
/** What a redacted part is replaced with. */
export const redactionMarker = '[REDACTED]';

interface SecretForms {
  /** Lower-cased `minSecretFragment`-character windows of every encoded form. */
  readonly windows: ReadonlySet<string>;
  /** Lower-cased whole forms, for secrets shorter than a window. */
  readonly whole: readonly string[];
}

const registry = new Map<string, SecretForms>();

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

function formsOf(secret: string): SecretForms {
  const forms = new Set<string>([
    secret,
    JSON.stringify(secret).slice(1, -1),
    encodeURIComponent(secret),
    // A JSON-escaped secret inside a JSON string that is escaped again (a log line of a log line).
    JSON.stringify(JSON.stringify(secret).slice(1, -1)).slice(1, -1),
    ...base64Cores(secret, 'base64'),
    ...base64Cores(secret, 'base64url'),
  ]);
  const windows = new Set<string>();
  const whole: string[] = [];
  for (const form of forms) {
    const lower = form.toLowerCase();
    if (lower.length === 0) continue;
    if (lower.length < minSecretFragment) {
      // Base64 cores of a short secret are shorter still and would match ordinary words.
      if (form === secret || form === encodeURIComponent(secret) || form === JSON.stringify(secret).slice(1, -1)) {
        whole.push(lower);
      }
      continue;
    }
    for (let i = 0; i + minSecretFragment <= lower.length; i++) windows.add(lower.slice(i, i + minSecretFragment));
  }
  return { windows, whole };
}

/**
 * Registers a secret value so every later `redactSecrets`, `sanitizeError` and log line removes
 * it. Values shorter than four characters are ignored (they cannot be told from ordinary text);
 * surrounding whitespace is registered in both forms since a pasted key often carries a newline.
 */
export function registerSecret(value: string | undefined): void {
  if (value === undefined) return;
  for (const candidate of new Set([value, value.trim()])) {
    if (candidate.length < minSecretLength || registry.has(candidate)) continue;
    registry.set(candidate, formsOf(candidate));
  }
}

/** Whether any secret is registered (lets hot paths skip work). */
export const hasRegisteredSecrets = (): boolean => registry.size > 0;

/** Forgets every registered secret; for tests that need a clean registry. */
export function clearRegisteredSecrets(): void {
  registry.clear();
}

const formsFor = (extra: Iterable<string>): SecretForms[] => {
  const all = [...registry.values()];
  for (const secret of extra) {
    if (secret.length < minSecretLength || registry.has(secret)) continue;
    all.push(formsOf(secret));
  }
  return all;
};

/**
 * `text` with every registered secret (and every secret in `extra`), every fragment of at least
 * eight characters of one, in any case and in each encoding named in the module comment,
 * replaced with `[REDACTED]`.
 */
export function redactSecrets(text: string, extra: Iterable<string> = []): string {
  const forms = formsFor(extra);
  if (forms.length === 0 || text.length < minSecretLength) return text;
  const haystack = lowerSameLength(text);
  const hidden = new Uint8Array(haystack.length);
  let any = false;
  for (const { windows, whole } of forms) {
    if (windows.size > 0) {
      for (let i = 0; i + minSecretFragment <= haystack.length; i++) {
        if (windows.has(haystack.slice(i, i + minSecretFragment))) {
          hidden.fill(1, i, i + minSecretFragment);
          any = true;
        }
      }
    }
    for (const form of whole) {
      for (let at = haystack.indexOf(form); at !== -1; at = haystack.indexOf(form, at + 1)) {
        hidden.fill(1, at, at + form.length);
        any = true;
      }
    }
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
