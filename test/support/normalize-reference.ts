/**
 * normalizeText (functions/core/text.ts) spelled as its plain pipeline, without any of its
 * shortcuts: what it must equal on any input. Shared by the tests that hold its shortcuts to it.
 */
export const referenceNormalize = (value: string): string =>
  (value as string & { toWellFormed(): string })
    .toWellFormed()
    .normalize('NFKC')
    .toLowerCase()
    .replace(/\s+/g, ' ')
    .trim();
