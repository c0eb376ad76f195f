/**
 * `news-alerts articles categories|media` (issue 11, item 8): the category codes with their names
 * and the media seen in recent provider articles, counted per article, read through the run's
 * provider client from a real CLI process; the counts equal the simulator's own articles.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OUT_OF_SCOPE_MEDIA } from '#sandbox/news-simulator-data';
import { type CliSandbox, countBy, startCliSandbox } from './support.ts';

let sandbox: CliSandbox;
beforeAll(async () => {
  sandbox = await startCliSandbox();
});
afterAll(async () => {
  await sandbox?.stop();
});

interface SeenJson {
  articles: number;
  without: number;
  categories?: { code: string; names: string[]; articles: number }[];
  media?: { code: string; names: string[]; articles: number }[];
}

describe('articles', () => {
  it('lists the categories and media of the articles in a window, with names and counts', async () => {
    // The sandbox's key does not cover one outlet: the provider never returns its articles.
    const simulated = (sandbox.stack.simulator?.articles() ?? []).filter(
      (article) => article.media.code !== OUT_OF_SCOPE_MEDIA,
    );
    expect(simulated.length).toBeGreaterThan(10);
    // A window given as instants: the same on any date.
    const from = new Date(Math.min(...simulated.map((article) => article.publishedAt))).toISOString();
    const to = new Date(Math.max(...simulated.map((article) => article.publishedAt))).toISOString();

    const categories = await sandbox.cli(['--json', 'articles', 'categories', '--since', from, '--to', to]);
    expect(categories.code, categories.stderr).toBe(0);
    const seen = categories.json<SeenJson>();
    expect(seen.articles).toBe(simulated.length);
    const expected = countBy(
      simulated.flatMap((article) => [...new Set(article.categories.map((category) => category.code))]),
      (code) => code,
    );
    expect(Object.fromEntries((seen.categories ?? []).map((entry) => [entry.code, entry.articles]))).toEqual(
      Object.fromEntries(expected),
    );
    // Most frequent first; names as the provider sends them.
    const counts = (seen.categories ?? []).map((entry) => entry.articles);
    expect(counts).toEqual([...counts].sort((a, b) => b - a));
    const finance = seen.categories?.find((entry) => entry.code === '002001000');
    if (expected.has('002001000')) expect(finance?.names).toEqual(['Economy > Finance']);

    const media = await sandbox.cli(['--json', 'articles', 'media', '--since', from, '--to', to]);
    expect(media.code, media.stderr).toBe(0);
    const outlets = media.json<SeenJson>().media ?? [];
    expect(Object.fromEntries(outlets.map((entry) => [entry.code, entry.articles]))).toEqual(
      Object.fromEntries(countBy(simulated, (article) => article.media.code)),
    );
    for (const outlet of outlets) {
      const name = simulated.find((article) => article.media.code === outlet.code)?.media.name;
      expect(outlet.names).toEqual(name && name !== outlet.code ? [name] : []);
    }

    // The human form: a table with the code, its name and the count, under a caption.
    const [table, tsv] = await Promise.all([
      sandbox.cli(['--output', 'table', 'articles', 'media', '--since', from, '--to', to]),
      sandbox.cli(['articles', 'media', '--since', from, '--to', to]),
    ]);
    expect(table.code, table.stderr).toBe(0);
    const [top] = outlets;
    expect(table.stdout).toContain(`Media of ${simulated.length} article(s)`);
    expect(table.stdout).toContain(top?.code);
    // In a pipe, stdout is the header and the rows (| cut -f1 reads codes); the caption is a note.
    expect(tsv.code, tsv.stderr).toBe(0);
    expect(tsv.stdout.split('\n')[0]).toBe('MEDIA\tNAME\tARTICLES');
    expect(tsv.stderr).toContain(`Media of ${simulated.length} article(s)`);

    const bad = await sandbox.cli(['articles', 'categories', '--since', 'last-tuesday']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--since "last-tuesday"');
  });
});
