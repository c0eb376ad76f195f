/**
 * The articles pages: search recent articles (re-read from the provider, as the CLI's `articles
 * search`), and one article with, per audience, every rule's verdict and what the delivery would
 * do (the same explanation as `rules explain`).
 */
import type { Hono } from 'hono';
import { html } from 'hono/html';
import { parseRule, type Rule } from '#core/model';
import { explainRule } from '#core/workbench/explain';
import { listItems } from '../../items.ts';
import { findArticle, searchArticles } from '../../workbench/articles.ts';
import { deliveryOf, storedAudience } from '../../workbench/explain.ts';
import { audienceTableOf, ruleTableOf } from '../../workbench/tables.ts';
import { type ConsoleServices, render, statusOf } from '../context.ts';
import { type AudienceVerdict, articleView, results, type SearchValues, searchForm } from '../views/articles.ts';
import { problem } from '../views/layout.ts';

export function articlePages(app: Hono, services: ConsoleServices): void {
  const { target } = services;

  app.get('/articles', async (c) => {
    const values: SearchValues = {
      text: c.req.query('text') ?? '',
      category: c.req.query('category') ?? '',
      media: c.req.query('media') ?? '',
      since: c.req.query('since') || '24h',
      rule: c.req.query('rule') ?? '',
    };
    const title = values.rule === '' ? 'Articles' : `Articles: pick one to explain ${values.rule}`;
    try {
      const found = await searchArticles(
        target,
        { since: values.since },
        { text: values.text, category: values.category, media: values.media },
        100,
        services.now(),
        services.log,
      );
      return render(
        c,
        services,
        { title, section: 'articles' },
        html`${searchForm(values)}${results(found.articles, found.total, values)}`,
      );
    } catch (error) {
      return render(
        c,
        services,
        { title, section: 'articles' },
        html`${searchForm(values)}${problem((error as Error).message)}`,
        statusOf(error, 400),
      );
    }
  });

  app.get('/articles/view', async (c) => {
    const key = (c.req.query('key') ?? '').trim();
    const since = c.req.query('since') || '2d';
    if (key === '') {
      return render(
        c,
        services,
        { title: 'Article', section: 'articles' },
        problem('give the key of an article (id:… or url:…); the Articles page lists them'),
        400,
      );
    }
    const found = await findArticle(target, key, { since }, services.now(), services.log).catch(
      (error: Error) => error,
    );
    if (found instanceof Error || found.article === undefined) {
      return render(
        c,
        services,
        { title: 'Article', section: 'articles' },
        problem(found instanceof Error ? found.message : `no article ${key} in the last ${since}`),
        404,
      );
    }
    const article = found.article;
    const rules = (await listItems(target.clients.documents, ruleTableOf(target)))
      .map((item) => parseRule(item))
      .flatMap((parsed) => (parsed.ok ? [parsed.value] : []));
    const audiences = (await listItems(target.clients.documents, audienceTableOf(target)))
      .map((item) => String(item.audienceId))
      .sort();
    const verdicts: AudienceVerdict[] = [];
    for (const audienceId of audiences) {
      const own: Rule[] = rules
        .filter((rule) => rule.audienceId === audienceId)
        .sort((a, b) => a.ruleId.localeCompare(b.ruleId));
      const explained = own.map((rule) => explainRule(rule, article));
      const matching = own.find((_rule, index) => explained[index]?.matches);
      const audience = await storedAudience(target, audienceId);
      if (typeof audience === 'string') {
        verdicts.push({ audienceId, rules: explained, problem: audience });
        continue;
      }
      const delivery =
        matching === undefined
          ? undefined
          : await deliveryOf(
              target,
              audience,
              {
                audienceId,
                article,
                rules: [
                  { ruleId: matching.ruleId, description: matching.description, urgent: matching.urgent, reasons: [] },
                ],
              },
              services.now(),
              services.log,
            );
      verdicts.push({ audienceId, rules: explained, delivery });
    }
    return render(c, services, { title: article.title, section: 'articles' }, articleView(article, verdicts, since));
  });
}
