/**
 * Finds a secret in text the way an attacker reading logs would: the whole secret or any part of
 * eight or more characters, in any letter case, raw, JSON-escaped, URL-encoded, or base64 /
 * base64url encoded (at each of the three byte alignments).
 */

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
    forms.add(encodeURIComponent(part));
    for (const alphabet of ['base64', 'base64url'] as const) {
      // The standalone encoding without its padded last group: what appears inside a longer text.
      const encoded = Buffer.from(part, 'utf8').toString(alphabet).replace(/=+$/, '');
      const full = Math.floor(Buffer.byteLength(part) / 3) * 4;
      if (full >= min) forms.add(encoded.slice(0, full));
    }
  }
  return [...forms];
}

/** The forms of `secret` that occur in `text` (case-insensitive); empty when nothing leaked. */
export function leaksOf(text: string, secret: string): string[] {
  const haystack = text.toLowerCase();
  return secretForms(secret).filter((form) => haystack.includes(form.toLowerCase()));
}
