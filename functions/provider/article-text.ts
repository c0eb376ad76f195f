/**
 * Article text as the run reads it from the provider (functions/provider/response-mapping.ts), and
 * what `rules explain` needs to judge a described article as the run would: the same cut, and
 * whether the text holds markup the run would have decoded.
 */

const maxTitleLength = 1_000;
/** Summaries feed notifications and keyword rules; full article bodies would only cost memory. */
const maxSummaryLength = 2_000;

const entities: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ' };

/** Naver and others put `<b>` highlights and entities in titles; subscribers should see plain text. */
function plainText(raw: string, max: number): string {
  const text = raw
    .replace(/<br\s*\/?>|<\/p>/gi, ' ')
    .replace(/<\/?[a-zA-Z][^<>]*>/g, '')
    .replace(/&(#\d{1,7}|#x[0-9a-f]{1,6}|[a-z]+);/gi, (match, name: string) => {
      if (name.startsWith('#')) {
        const code = name[1] === 'x' || name[1] === 'X' ? Number.parseInt(name.slice(2), 16) : Number(name.slice(1));
        return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : match;
      }
      return entities[name.toLowerCase()] ?? match;
    })
    .replace(/\s+/g, ' ')
    .trim();
  return cut(text, max);
}

const cut = (text: string, max: number): string => (text.length <= max ? text : `${text.slice(0, max - 1).trimEnd()}…`);

/** Text already read (as `articles show` prints it) cut as the run cuts a title or a summary. */
export const cutArticleText = (text: string, field: 'title' | 'summary'): string =>
  cut(text, field === 'title' ? maxTitleLength : maxSummaryLength);

/** Whether text holds what the run changes in provider text: HTML tags or entities. */
export const holdsMarkup = (text: string): boolean =>
  plainText(text, Number.POSITIVE_INFINITY) !== text.replace(/\s+/g, ' ').trim();

/**
 * A title or summary as the run reads it from the provider: plain text (tags dropped, entities
 * decoded, whitespace collapsed) cut to its length; a title that is nothing but markup stays as
 * sent.
 */
export function articleText(raw: string, field: 'title' | 'summary'): string {
  if (field === 'summary') return plainText(raw, maxSummaryLength);
  return plainText(raw, maxTitleLength) || raw.slice(0, maxTitleLength);
}
