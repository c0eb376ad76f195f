/**
 * `news-alerts articles categories|media`: the category codes (with their names) and the media
 * seen in recent provider articles, with how many articles carried each, so rules can be written
 * with codes that exist (`categories: ["002001000"]`, `media: ["M001"]`) instead of guessed ones.
 *
 * It reads the provider exactly as `preview` does (the run's client and configuration, day by
 * day over the window), so what is listed is what the run's matcher sees. Nothing is sent or
 * stored.
 */
import type { Command } from 'commander';
import { SecretsManagerApiKey } from '#aws/secret-source';
import type { Article } from '#core/model';
import { NewsLookupClient } from '#provider/news-client';
import { action, integerOption, nonEmptyOption } from './command.ts';
import type { CommandContext } from './context.ts';
import { NotFoundError } from './errors.ts';
import { newsAlerts } from './hints.ts';
import { stderrLog } from './log.ts';
import { formatInstant } from './output.ts';
import { windowJson } from './preview.ts';
import { parseWindow, type TimeWindow } from './window.ts';
import { articleJson, findArticle, maxSearchDays, searchArticles } from './workbench/articles.ts';

interface ArticlesOptions {
  since: string;
  to?: string;
}

/** One category code or medium, its names as the provider gave them, and how many articles had it. */
export interface SeenValue {
  code: string;
  names: string[];
  articles: number;
}

/** Counts of a code across articles, with every name it came with. */
class Tally {
  readonly #values = new Map<string, { names: Set<string>; articles: number }>();

  add(code: string, name: string | undefined): void {
    const entry = this.#values.get(code) ?? { names: new Set<string>(), articles: 0 };
    entry.articles += 1;
    if (name !== undefined && name !== '' && name !== code) entry.names.add(name);
    this.#values.set(code, entry);
  }

  /** Most frequent first, then by code. */
  values(): SeenValue[] {
    return [...this.#values]
      .map(([code, entry]) => ({ code, names: [...entry.names].sort(), articles: entry.articles }))
      .sort((a, b) => b.articles - a.articles || a.code.localeCompare(b.code));
  }
}

/** Category codes paired with their names (the provider sends both lists in the same order). */
export function categoriesOf(article: Pick<Article, 'categories' | 'categoryNames'>): [string, string | undefined][] {
  const paired = article.categoryNames.length === article.categories.length;
  const codes = [...new Set(article.categories)];
  return codes.map((code) => [code, paired ? article.categoryNames[article.categories.indexOf(code)] : undefined]);
}

/** Reads the window's articles with the run's provider client and hands each to `visit`. */
async function readArticles(
  context: CommandContext,
  options: ArticlesOptions,
  visit: (article: Article) => void,
): Promise<{ window: TimeWindow; articles: number; label: string }> {
  const target = await context.target();
  const config = await target.alertRunConfig();
  const window = parseWindow(options.since, options.to, config.provider.timeZone, Date.now(), {
    from: '--since',
    to: '--to',
  });
  const news = new NewsLookupClient({
    config: config.provider,
    secrets: new SecretsManagerApiKey({ client: target.clients.secrets, secretId: config.secretId }),
    log: stderrLog(context.output),
  });
  const progress = context.progress();
  const seen = new Set<string>();
  progress.start(window.days.length, 'provider days');
  try {
    for (const day of window.days) {
      for await (const page of news.pages({ from: day, to: day })) {
        for (const article of page.articles) {
          if (article.publishedAt < window.since || article.publishedAt > window.until) continue;
          // A provider that repeats an article across pages counts it once, as the run alerts it once.
          if (seen.has(article.key)) continue;
          seen.add(article.key);
          visit(article);
        }
      }
      progress.advance(1, `${seen.size} articles`);
    }
  } finally {
    progress.stop();
    await news.close();
  }
  return { window, articles: seen.size, label: target.label };
}

function listSeen(kind: 'categories' | 'media') {
  return async (context: CommandContext, _args: readonly unknown[], options: ArticlesOptions): Promise<void> => {
    const tally = new Tally();
    let without = 0;
    const { window, articles, label } = await readArticles(context, options, (article) => {
      if (kind === 'categories') {
        const pairs = categoriesOf(article);
        if (pairs.length === 0) without += 1;
        for (const [code, name] of pairs) tally.add(code, name);
      } else if (article.media === undefined || article.media === '') {
        without += 1;
      } else {
        tally.add(article.media, article.mediaName);
      }
    });
    const values = tally.values();
    context.output.result({ target: label, window: windowJson(window), articles, without, [kind]: values }, () => {
      context.output.caption(
        `${kind === 'categories' ? 'Categories' : 'Media'} of ${articles} article(s) published ${formatInstant(window.since)} .. ${formatInstant(window.until)}${without > 0 ? ` (${without} without any)` : ''}:`,
      );
      context.output.table(
        [kind === 'categories' ? 'CATEGORY' : 'MEDIA', 'NAME', 'ARTICLES'],
        values.map((value) => [value.code, value.names.join(', '), value.articles]),
        `no ${kind} seen in that window`,
      );
    });
  };
}

interface LookupOptions extends ArticlesOptions {
  text?: string;
  category?: string;
  media?: string;
  limit: number;
}

async function showArticle(context: CommandContext, args: readonly unknown[], options: ArticlesOptions): Promise<void> {
  const [key] = args as [string];
  const target = await context.target();
  const found = await findArticle(
    target,
    key,
    { since: options.since, to: options.to },
    Date.now(),
    stderrLog(context.output),
  );
  if (found.article === undefined) {
    throw new NotFoundError(
      `no article ${key} among those the provider lists for ${formatInstant(found.window.since)} .. ${formatInstant(found.window.until)}; widen --since (at most ${maxSearchDays} days) or search with '${newsAlerts()} articles search'`,
    );
  }
  const article = articleJson(found.article);
  context.output.result(article, () =>
    context.output.fields(
      Object.entries(article).map(
        ([name, value]) => [name, Array.isArray(value) ? value.join(', ') : String(value)] as const,
      ),
    ),
  );
}

async function searchRecent(context: CommandContext, _args: readonly unknown[], options: LookupOptions): Promise<void> {
  const target = await context.target();
  const found = await searchArticles(
    target,
    { since: options.since, to: options.to },
    { text: options.text, category: options.category, media: options.media },
    options.limit,
    Date.now(),
    stderrLog(context.output),
  );
  const articles = found.articles.map(articleJson);
  context.output.result(
    { target: target.label, window: windowJson(found.window), total: found.total, articles },
    () => {
      context.output.caption(
        `${found.total} article(s) published ${formatInstant(found.window.since)} .. ${formatInstant(found.window.until)} fit${found.total > articles.length ? ` (the newest ${articles.length} shown; --limit)` : ''}:`,
      );
      context.output.table(
        ['KEY', 'PUBLISHED', 'MEDIA', 'CATEGORIES', 'TITLE'],
        articles.map((article) => [
          article.key,
          article.publishedAt,
          article.media ?? '',
          article.categories.join(', '),
          article.title,
        ]),
        'no article fits',
      );
    },
  );
}

/** Registers `articles`. */
export function registerArticles(program: Command): void {
  const articles = program
    .command('articles')
    .description('recent articles of the provider: look one up, search them, the categories and media they carry');
  for (const kind of ['categories', 'media'] as const) {
    articles
      .command(kind)
      .description(
        kind === 'categories'
          ? 'category codes and names seen in recent articles, with counts (for rules’ categories)'
          : 'media codes and names seen in recent articles, with counts (for rules’ media)',
      )
      .option('--since <when>', 'start: span back (24h, 2d), provider date or date-time with zone', '24h')
      .option('--to <when>', 'end (inclusive), same forms; default now')
      .addHelpText(
        'after',
        `
Reads the provider as preview does (nothing is sent or stored) and lists every value with the
number of articles that carried it, most frequent first. Use the codes in rules: a category code
('002001000', or a prefix '002*') or a media code.

Examples:
  news-alerts articles ${kind}
  news-alerts articles ${kind} --since 7d --json`,
      )
      .action(action(listSeen(kind)));
  }
  articles
    .command('show')
    .description('one recent article by key (id:…, url:…) or provider id, as the run reads it')
    .argument('<key>')
    .option('--since <when>', 'where to look: span back (2d), provider date or date-time with zone', '2d')
    .option('--to <when>', 'end (inclusive), same forms; default now')
    .addHelpText(
      'after',
      `
Articles are not stored: the provider is read again for the window (every page of each day, at most
${maxSearchDays} days), exactly as the run's client maps it.

Examples:
  news-alerts articles show id:a-1042
  news-alerts articles show a-1042 --since 3d --json > article.json   # then: rules explain <rule> --article-file article.json`,
    )
    .action(action(showArticle));
  articles
    .command('search')
    .description('recent articles by text, category and media, newest first')
    .option(
      '--text <words>',
      'all these words in the title or summary (whole words, as keywords match)',
      nonEmptyOption,
    )
    .option('--category <code>', "a category code or name; '002*' by prefix", nonEmptyOption)
    .option('--media <code>', 'a media code or name', nonEmptyOption)
    .option('--since <when>', 'start: span back (24h, 2d), provider date or date-time with zone', '24h')
    .option('--to <when>', 'end (inclusive), same forms; default now')
    .option('--limit <n>', 'show at most this many', integerOption(1, 1000), 50)
    .addHelpText(
      'after',
      `
Articles are not stored: the provider is read again for the window (every page of each day, at most
${maxSearchDays} days). Then 'rules explain <rule> --article <key>' says why a rule did or did not match.

Examples:
  news-alerts articles search --text election --since 2d
  news-alerts articles search --category '002*' --media M001 --json`,
    )
    .action(action(searchRecent));
}
