/**
 * The `code` of a thrown value (`ECONNRESET`, `UND_ERR_SOCKET`, `HPE_INVALID_HEADER_TOKEN`), or
 * undefined when it has none worth naming. Error codes end up in messages people read; undici's
 * HTTPParserError sets `code` to undefined when the parser gave none, and `String(error.code)`
 * then printed "network error undefined". Only a non-empty string or a finite number is a code.
 */
export function errorCodeOf(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null || !('code' in error)) return undefined;
  const { code } = error;
  if (typeof code === 'string') return code.trim() === '' ? undefined : code.trim();
  if (typeof code === 'number' && Number.isFinite(code)) return String(code);
  return undefined;
}
