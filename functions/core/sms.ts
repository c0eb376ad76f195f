/**
 * SMS length arithmetic (3GPP TS 23.038 / 23.040). A text that fits the GSM 7-bit default alphabet
 * (plus its extension table) is sent as GSM-7; anything else turns the whole message into UCS-2,
 * which holds less than half as much. Subscribers pay per segment, so the renderer measures every
 * candidate SMS with {@link smsSegments} instead of counting JavaScript string length.
 */

/** Encoding a carrier uses for a text. */
export type SmsEncoding = 'GSM-7' | 'UCS-2';

/** How a text is billed: encoding, segments and encoding units (septets or UTF-16 code units). */
export interface SmsSegmentCount {
  readonly encoding: SmsEncoding;
  /** Number of SMS parts; 0 for an empty text (nothing to send). */
  readonly segments: number;
  /** GSM-7 septets (extension characters count 2) or UCS-2 code units (astral characters count 2). */
  readonly units: number;
}

/** Units per segment: a single SMS, and each part of a concatenated one (the rest holds the UDH). */
export const SMS_LIMITS = {
  'GSM-7': { single: 160, multipart: 153 },
  'UCS-2': { single: 70, multipart: 67 },
} as const satisfies Record<SmsEncoding, { single: number; multipart: number }>;

// The GSM 03.38 default alphabet, row by row, without ESC (0x1B), which only introduces the
// extension table. 0x09 is the capital C with cedilla, as 23.038 defines it; Unicode's mapping
// table says small c with cedilla instead, so "ç" is counted as UCS-2: overestimating a segment
// only trims a headline a little, underestimating one would bill an extra part.
const GSM_BASIC = new Set(
  '@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞÆæßÉ !"#¤%&\'()*+,-./0123456789:;<=>?¡ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ§¿abcdefghijklmnopqrstuvwxyzäöñüà',
);
// Reachable through ESC, so each costs two septets.
const GSM_EXTENSION = new Set('\f^{}\\[~]|€');

/** Septets a character costs in GSM-7, or undefined when GSM-7 cannot carry it. */
function gsmCost(char: string): 1 | 2 | undefined {
  if (GSM_BASIC.has(char)) return 1;
  if (GSM_EXTENSION.has(char)) return 2;
  return undefined;
}

/** True when every character of `text` is in the GSM-7 default alphabet or its extension table. */
export function isGsm7(text: string): boolean {
  for (const char of text) if (gsmCost(char) === undefined) return false;
  return true;
}

/**
 * Counts segments the way handsets and carriers split them: a part never splits a GSM escape
 * sequence or a UTF-16 surrogate pair, so a part may hold one unit less than its nominal size.
 */
function segmentsFor(costs: readonly number[], units: number, encoding: SmsEncoding): number {
  if (units === 0) return 0;
  const { single, multipart } = SMS_LIMITS[encoding];
  if (units <= single) return 1;
  let segments = 1;
  let used = 0;
  for (const cost of costs) {
    if (used + cost > multipart) {
      segments += 1;
      used = 0;
    }
    used += cost;
  }
  return segments;
}

/**
 * Encoding, segment count and units of an SMS text.
 *
 * @example smsSegments('a'.repeat(160)) // { encoding: 'GSM-7', segments: 1, units: 160 }
 * @example smsSegments('€'.repeat(81))  // { encoding: 'GSM-7', segments: 2, units: 162 }
 * @example smsSegments('한'.repeat(71)) // { encoding: 'UCS-2', segments: 2, units: 71 }
 */
export function smsSegments(text: string): SmsSegmentCount {
  const gsmCosts: number[] = [];
  let gsmUnits = 0;
  let gsm = true;
  for (const char of text) {
    const cost = gsmCost(char);
    if (cost === undefined) {
      gsm = false;
      break;
    }
    gsmCosts.push(cost);
    gsmUnits += cost;
  }
  if (gsm) return { encoding: 'GSM-7', segments: segmentsFor(gsmCosts, gsmUnits, 'GSM-7'), units: gsmUnits };
  const ucsCosts: number[] = [];
  for (const char of text) ucsCosts.push(char.length);
  return { encoding: 'UCS-2', segments: segmentsFor(ucsCosts, text.length, 'UCS-2'), units: text.length };
}

/** True when `text` fits in at most `maxSegments` parts. */
export function fitsSms(text: string, maxSegments: number): boolean {
  return smsSegments(text).segments <= maxSegments;
}

// Typographic characters that news headlines are full of and that would otherwise force UCS-2
// (70 instead of 160 characters per segment) for an otherwise plain Latin headline.
const GSM_LOOKALIKES: ReadonlyArray<readonly [RegExp, string]> = [
  [/[\u2018\u2019\u201A\u201B\u2032\u00B4`]/g, "'"],
  [/[\u201C\u201D\u201E\u201F\u2033\u00AB\u00BB]/g, '"'],
  [/[\u2010\u2011\u2012\u2013\u2014\u2015\u2212]/g, '-'],
  [/\u2026/g, '...'],
  [/[\u00A0\u2000-\u200A\u202F\u205F\u3000]/g, ' '],
  [/[\u2022\u00B7]/g, '-'],
];

/**
 * Replaces typographic quotes, dashes, ellipses and special spaces with their GSM-7 look-alikes,
 * but only when that makes the whole text GSM-7: a Korean or Japanese headline stays UCS-2 either
 * way, so it keeps its original punctuation.
 */
export function toGsmFriendly(text: string): string {
  if (isGsm7(text)) return text;
  let replaced = text;
  for (const [pattern, replacement] of GSM_LOOKALIKES) replaced = replaced.replace(pattern, replacement);
  return isGsm7(replaced) ? replaced : text;
}

/**
 * `GSM-7, 132 of 306 units, 2 segments`: how an SMS will be billed, for previews, samples and
 * logs (the units are septets for GSM-7, UTF-16 code units for UCS-2).
 */
export function describeSms(text: string): string {
  const { encoding, segments, units } = smsSegments(text);
  const { single, multipart } = SMS_LIMITS[encoding];
  const capacity = segments <= 1 ? single : segments * multipart;
  return `${encoding}, ${units} of ${capacity} units, ${segments} segment${segments === 1 ? '' : 's'}`;
}
