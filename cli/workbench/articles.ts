/**
 * Recent articles for the workbench, re-fetched from the provider on demand: nothing is kept
 * between runs, so nothing costs storage, and an article reads exactly as the run's client maps
 * it. The cost is provider requests: a look-up or search reads every page of each provider day of
 * its window (ceil(articles of the day / page size) requests a day), so windows are bounded to
 * {@link maxSearchDays} days. docs/ops-guide.md says so.
 */
import { SecretsManagerApiKey } from '#aws/secret-source';
import type { Article } from '#core/model';
import type { Log } from '#core/ports';
import { type ArticleSearch, articleFits, keyMatches } from '#core/workbench/article-search';
import { NewsLookupClient } from '#provider/news-client';
import { UsageError } from '../errors.ts';
import type { Target } from '../target.ts';
import { parseWindow, type TimeWindow } from '../window.ts';

/**
 * The longest window a look-up or search reads, in days of 24 hours: `--since 7d` (or `1w`) is
 * allowed, although it touches eight provider dates (a part of the first and of the last).
 */
export const maxSearchDays = 7;
const dayMs = 86_400_000;

/** Where and how to look. */
export interface ArticleWindow {
  /** Start: a span back (24h, 2d), a provider date or a date-time with zone. */
  readonly since: string;
  readonly to?: string | undefined;
}

/** Articles of a window, read from the provider, newest first. */
export interface WindowArticles {
  readonly window: TimeWindow;
  readonly articles: readonly Article[];
}

/** Reads every article of the window (deduplicated, newest first). */
export async function readWindowArticles(
  target: Target,
  window: ArticleWindow,
  now: number,
  log: Log,
  options: { readonly sinceOption?: string; readonly toOption?: string } = {},
): Promise<WindowArticles> {
  const config = await target.alertRunConfig();
  const parsed = parseWindow(window.since, window.to, config.provider.timeZone, now, {
    from: options.sinceOption ?? '--since',
    to: options.toOption ?? '--to',
  });
  // Seven whole provider dates end a millisecond short of seven days (an hour more across a
  // daylight-saving change); `--since 7d` is seven days, on eight dates.
  const length = parsed.until - parsed.since;
  if (length > maxSearchDays * dayMs && parsed.days.length > maxSearchDays) {
    throw new UsageError(
      `${options.sinceOption ?? '--since'}: the window is ${(length / dayMs).toFixed(1)} days long; articles are re-read from the provider, at most ${maxSearchDays} days at a time (--since ${maxSearchDays}d): narrow it`,
    );
  }
  const news = new NewsLookupClient({
    config: config.provider,
    secrets: new SecretsManagerApiKey({ client: target.clients.secrets, secretId: config.secretId }),
    log,
  });
  const seen = new Map<string, Article>();
  try {
    for (const day of parsed.days) {
      for await (const page of news.pages({ from: day, to: day })) {
        for (const article of page.articles) {
          if (article.publishedAt < parsed.since || article.publishedAt > parsed.until) continue;
          if (!seen.has(article.key)) seen.set(article.key, article);
        }
      }
    }
  } finally {
    await news.close();
  }
  const articles = [...seen.values()].sort((a, b) => b.publishedAt - a.publishedAt || a.key.localeCompare(b.key));
  return { window: parsed, articles };
}

/** The articles of the window that fit `search`, newest first, at most `limit`. */
export async function searchArticles(
  target: Target,
  window: ArticleWindow,
  search: ArticleSearch,
  limit: number,
  now: number,
  log: Log,
): Promise<WindowArticles & { readonly total: number }> {
  const read = await readWindowArticles(target, window, now, log);
  const fitting = read.articles.filter((article) => articleFits(article, search));
  return { window: read.window, articles: fitting.slice(0, limit), total: fitting.length };
}

/** The article with this key (or provider id) in the window, or undefined. */
export async function findArticle(
  target: Target,
  key: string,
  window: ArticleWindow,
  now: number,
  log: Log,
): Promise<{ readonly window: TimeWindow; readonly article: Article | undefined }> {
  const read = await readWindowArticles(target, window, now, log);
  return { window: read.window, article: read.articles.find((article) => keyMatches(article, key)) };
}

/** An article as the workbench prints it (`--json`). */
export function articleJson(article: Article) {
  return {
    key: article.key,
    ...(article.id === undefined ? {} : { id: article.id }),
    title: article.title,
    summary: article.summary,
    url: article.url,
    publishedAt: new Date(article.publishedAt).toISOString(),
    categories: article.categories,
    categoryNames: article.categoryNames,
    ...(article.media === undefined ? {} : { media: article.media }),
    ...(article.mediaName === undefined ? {} : { mediaName: article.mediaName }),
    ...(article.status === undefined ? {} : { status: article.status }),
  };
}
