/**
 * normalizeText (functions/core/text.ts) spelled as its plain pipeline, without any of its
 * shortcuts: what it must equal on any input. Shared by the tests that hold its shortcuts to it.
 */
export const referenceNormalize = (value: string): string =>
  referenceNormalizeKeepingApostrophes(value).replace(/[\u2018\u2019\u201b]/g, "'");

/** normalizeTextKeepingApostrophes: normalizeText before apostrophes were folded (what stored hashes used). */
export const referenceNormalizeKeepingApostrophes = (value: string): string =>
  (value as string & { toWellFormed(): string })
    .toWellFormed()
    .replace(/\p{Default_Ignorable_Code_Point}/gu, '')
    .normalize('NFKC')
    .toLowerCase()
    .replace(/ß/g, 'ss')
    .replace(/ς/g, 'σ')
    .replace(/i\u0307+/g, 'i')
    .normalize('NFKC')
    .replace(/[\s\p{Cc}]+/gu, ' ')
    .trim();
