/**
 * Finding recent articles for ops: by key, or by text, category, media and time. Pure: the
 * articles come from the provider (cli/workbench/articles.ts reads them on demand, exactly as
 * `preview` does), and this module only filters them, with the matcher's own normalization, so
 * "category 002*" finds what a rule with that category matches.
 */
import type { Article } from '../model.ts';
import { containsTerm, normalizeText } from '../text.ts';

/** What to look for; every given field must hold (AND). */
export interface ArticleSearch {
  /** Words in the title or summary (all of them; whole words for Latin scripts, as keywords match). */
  readonly text?: string | undefined;
  /** A category code or name; `002*` by prefix, as in rules. */
  readonly category?: string | undefined;
  /** A media code or name. */
  readonly media?: string | undefined;
}

/** Whether `article` fits `search`. */
export function articleFits(article: Article, search: ArticleSearch): boolean {
  if (search.text !== undefined && search.text.trim() !== '') {
    const title = normalizeText(article.title);
    const summary = normalizeText(article.summary);
    const words = normalizeText(search.text)
      .split(/\s+/)
      .filter((word) => word !== '');
    if (!words.every((word) => containsTerm(title, word) || containsTerm(summary, word))) return false;
  }
  if (search.category !== undefined && search.category.trim() !== '') {
    const wanted = normalizeText(search.category.trim());
    const values = [...article.categories, ...article.categoryNames].map(normalizeText);
    const hit = wanted.endsWith('*')
      ? values.some((value) => value.startsWith(wanted.slice(0, -1)))
      : values.includes(wanted);
    if (!hit) return false;
  }
  if (search.media !== undefined && search.media.trim() !== '') {
    const wanted = normalizeText(search.media.trim());
    const values = [article.media, article.mediaName].filter((value) => value !== undefined).map(normalizeText);
    if (!values.includes(wanted)) return false;
  }
  return true;
}

/** The article a key names: `id:<provider id>`, `url:<hash>`, or a bare provider id. */
export function keyMatches(article: Article, key: string): boolean {
  const wanted = key.trim();
  return (
    article.key === wanted || (article.id !== undefined && article.id === wanted) || article.key === `id:${wanted}`
  );
}
