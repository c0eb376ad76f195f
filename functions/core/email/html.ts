/**
 * The few HTML helpers the email and the preference page are built with: every value put into
 * markup goes through {@link escapeHtml} (text and attribute values alike), and links only through
 * {@link safeHref}, which lets nothing but `https:` and `http:` (and the page's own relative
 * paths) into an `href`. Pure.
 */

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Text or an attribute value, safe inside markup. */
export const escapeHtml = (value: string): string => value.replace(/[&<>"']/g, (char) => ESCAPES[char] ?? char);

/**
 * A URL for an `href`: absolute `https:`/`http:` URLs (normalized by the WHATWG parser) and
 * root-relative paths; anything else (`javascript:`, `data:`, a relative path, a broken URL)
 * becomes `undefined`, and callers render the text without a link.
 */
export function safeHref(url: string): string | undefined {
  if (url.startsWith('/') && !url.startsWith('//')) return escapeHtml(url);
  try {
    const parsed = new URL(url);
    if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') return undefined;
    return escapeHtml(parsed.href);
  } catch {
    return undefined;
  }
}

/** `<a href>` around `text`, or the escaped text alone when the URL may not be linked. */
export function link(url: string, text: string, attributes = ''): string {
  const href = safeHref(url);
  return href === undefined ? escapeHtml(text) : `<a href="${href}"${attributes}>${escapeHtml(text)}</a>`;
}

/** Text with its line breaks kept (`<br>` between escaped lines). */
export const multiline = (value: string): string => value.split('\n').map(escapeHtml).join('<br>');
