/**
 * The checks every rule term goes through before it may match anything (list terms in
 * functions/core/model.ts, terms and phrases of a rule query in functions/core/query.ts): no lone
 * surrogates, no bidirectional controls, at least one visible character. One module, so a
 * keyword and the same word in a query are refused for the same reasons.
 */
import { normalizeText } from './text.ts';

/**
 * Bidirectional embedding, override and isolate controls: they reorder what a reader sees
 * (U+202E shows "cod.exe" as "exe.doc"), so a term holding one reads differently from what it
 * matches. No keyword, category or media code needs them.
 */
export const BIDI_CONTROLS = /[\u202A-\u202E\u2066-\u2069]/u;

/** Whether a single code point is a bidirectional control (see {@link BIDI_CONTROLS}). */
export const isBidiControl = (codePoint: number): boolean =>
  (codePoint >= 0x202a && codePoint <= 0x202e) || (codePoint >= 0x2066 && codePoint <= 0x2069);

/** A lone UTF-16 surrogate: not Unicode text; DynamoDB would store U+FFFD instead. */
export const LONE_SURROGATE = /\p{Cs}/u;

/**
 * Characters that show nothing on their own: controls, format characters (zero-width space,
 * joiners, soft hyphen, BOM, tag characters), separators, combining marks without a base, and
 * the fillers (Hangul, Braille blank) that render as blank.
 */
const INVISIBLE = /[\p{Cc}\p{Cf}\p{Z}\p{M}\u115F\u1160\u2800\u3164\uFFA0]/gu;

/**
 * Whether `value` has at least one character a reader can see once normalized the way the
 * matcher normalizes terms. A term of zero-width spaces looks empty in every console and message
 * yet would match any text that carries the same invisible characters.
 */
export function hasVisibleCharacter(value: string): boolean {
  // Fast path: the usual term has an ASCII letter or digit.
  if (/[A-Za-z0-9]/.test(value)) return true;
  return normalizeText(value).replace(INVISIBLE, '').length > 0;
}

/** `U+200B, U+200C`-style listing of the distinct code points of a value (at most eight). */
export const listCodePoints = (value: string): string =>
  [
    ...new Set(
      Array.from(value, (char) => `U+${(char.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, '0')}`),
    ),
  ]
    .slice(0, 8)
    .join(', ');
