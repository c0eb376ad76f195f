/**
 * Finds a secret in text the way an attacker reading logs would: the whole secret or any part of
 * eight or more characters, in any letter case, raw, JSON-escaped, URL-encoded, base64 / base64url
 * encoded (at each of the three byte alignments), hex-encoded, or written with an escape for every
 * character (`\u004b`, `\x4b`, `%4B`, `&#75;`, `&#x4b;`). Mixed escapes are found by decoding
 * first ({@link decodeEscapes}).
 */

/** The characters of base64 that encode only `part`'s bytes when `lead` bytes come before it. */
function base64Core(part: string, alphabet: 'base64' | 'base64url', lead: number): string {
  const padded = Buffer.concat([Buffer.alloc(lead, 0), Buffer.from(part, 'utf8')]);
  const encoded = padded.toString(alphabet).replace(/=+$/, '');
  return encoded.slice(lead === 0 ? 0 : Math.ceil((lead * 4) / 3), Math.floor(padded.length / 3) * 4);
}

const hex2 = (value: number) => value.toString(16).padStart(2, '0');

/** `part` with an escape of `kind` for every character (every UTF-16 unit, UTF-8 byte or code point). */
export function escapeEvery(part: string, kind: 'u' | 'x' | 'percent' | 'decimal' | 'hexref'): string {
  if (kind === 'u')
    return [...Array(part.length).keys()].map((i) => `\\u${part.charCodeAt(i).toString(16).padStart(4, '0')}`).join('');
  if (kind === 'decimal') return [...part].map((char) => `&#${char.codePointAt(0)};`).join('');
  if (kind === 'hexref') return [...part].map((char) => `&#x${char.codePointAt(0)?.toString(16)};`).join('');
  const bytes = [...Buffer.from(part, 'utf8')];
  return bytes.map((byte) => (kind === 'x' ? `\\x${hex2(byte)}` : `%${hex2(byte).toUpperCase()}`)).join('');
}

/** Every encoded form of every substring of `secret` with at least `min` characters. */
export function secretForms(secret: string, min = 8): string[] {
  const forms = new Set<string>();
  const parts = new Set<string>([secret]);
  for (let length = Math.min(min, secret.length); length <= secret.length; length++) {
    for (let start = 0; start + length <= secret.length; start++) parts.add(secret.slice(start, start + length));
  }
  for (const part of parts) {
    forms.add(part);
    forms.add(JSON.stringify(part).slice(1, -1));
    // A part cut inside a surrogate pair has no URL encoding (nor can it appear in well-formed text).
    if ((part as string & { isWellFormed(): boolean }).isWellFormed()) forms.add(encodeURIComponent(part));
    forms.add(Buffer.from(part, 'utf8').toString('hex'));
    for (const kind of ['u', 'x', 'percent', 'decimal', 'hexref'] as const) forms.add(escapeEvery(part, kind));
    for (const alphabet of ['base64', 'base64url'] as const) {
      for (const lead of [0, 1, 2]) {
        // What appears inside a longer encoded text, whatever comes before and after.
        const core = base64Core(part, alphabet, lead);
        if (core.length >= min) forms.add(core);
      }
    }
  }
  return [...forms];
}

/** The forms of `secret` that occur in `text` (case-insensitive); empty when nothing leaked. */
export function leaksOf(text: string, secret: string): string[] {
  const haystack = text.toLowerCase();
  return secretForms(secret).filter((form) => haystack.includes(form.toLowerCase()));
}

/**
 * `text` with `\uXXXX`, `\xHH`, `%HH` and `&#…;` escapes undone, repeatedly (an escaped escape),
 * byte escapes read as UTF-8: what a reader who decodes a log line sees.
 */
export function decodeEscapes(text: string): string {
  let current = text;
  for (let pass = 0; pass < 3; pass++) {
    const next = current
      .replace(/\\\\/g, '\\')
      .replace(/\\u([0-9a-f]{4})/gi, (_, unit: string) => String.fromCharCode(Number.parseInt(unit, 16)))
      .replace(/(?:(?:\\x|%)[0-9a-f]{2})+/gi, (run) => Buffer.from(run.replace(/\\x|%/gi, ''), 'hex').toString('utf8'))
      .replace(/&#x([0-9a-f]+);/gi, (_, code: string) => String.fromCodePoint(Number.parseInt(code, 16)))
      .replace(/&#(\d+);/g, (_, code: string) => String.fromCodePoint(Number.parseInt(code, 10)));
    if (next === current) break;
    current = next;
  }
  return current;
}
