/**
 * The articles pages: search recent articles (re-read from the provider, as the CLI's `articles
 * search`), and one article with, per audience, every rule's verdict and what the delivery would
 * do (the same explanation as `rules explain`).
 */
import type { Hono } from 'hono';
import { html } from 'hono/html';
import { DynamoStateStore } from '#aws/dynamo-state-store';
import { compileRules } from '#core/matcher';
import { buildRuleSet, parseRule } from '#core/model';
import { savedTimes } from '#core/rule-reach';
import { explainRule } from '#core/workbench/explain';
import { listItems } from '../../items.ts';
import { findArticle, searchArticles } from '../../workbench/articles.ts';
import { deliveryOf, readingOf } from '../../workbench/explain.ts';
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
        html`${searchForm(values)}${problem((error as Error).message.replace(/--since\b/g, 'Look back'))}`,
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
    if (found instanceof Error) {
      // Worded as the form asks (Look back), and a malformed look-back is 400, as on the explain page.
      return render(
        c,
        services,
        { title: 'Article', section: 'articles' },
        problem(found.message.replace(/--since\b/g, 'Look back')),
        statusOf(found, 400),
      );
    }
    if (found.article === undefined) {
      return render(
        c,
        services,
        { title: 'Article', section: 'articles' },
        problem(
          `no article ${key} in the last ${since}: widen the look-back (at most 7 days) or find it on the Articles page`,
        ),
        404,
      );
    }
    const article = found.article;
    const [ruleItems, audienceItems] = await Promise.all([
      listItems(target.clients.documents, ruleTableOf(target)),
      listItems(target.clients.documents, audienceTableOf(target)),
    ]);
    // Judged as the run judges them: the same rule set (invalid items and rules of a missing
    // audience rejected, disabled ones left out) and the same matcher, so the match handed to the
    // delivery carries every rule that matched (any urgent one makes it urgent).
    const ruleSet = buildRuleSet(ruleItems, audienceItems);
    const matches = new Map(
      compileRules(ruleSet.rules)
        .match(article)
        .map((match) => [match.audienceId, match]),
    );
    const skipped = new Map(
      ruleSet.rejected.filter((entry) => entry.table === 'audiences').map((entry) => [entry.key, entry.reason]),
    );
    const rejectedRules = new Map(
      ruleSet.rejected.filter((entry) => entry.table === 'rules').map((entry) => [entry.key, entry.reason]),
    );
    const audiences = new Map(ruleSet.audiences.map((audience) => [audience.audienceId, audience]));
    const savedAt = savedTimes(ruleSet.rules);
    // Read once for the page: every audience's delivery judges reading against the same watermark.
    const reading = await readingOf(
      target,
      new DynamoStateStore({
        documents: target.clients.documents,
        tableName: target.names.stateTable,
        log: services.log,
      }),
      savedAt,
    );
    // Every audience a rule names too: rules of an audience with no item are skipped by the run,
    // and "why did rule X not match" must find them here.
    const existing = new Set(audienceItems.map((item) => String(item.audienceId)));
    const audienceIds = [...new Set([...existing, ...ruleItems.map((item) => String(item.audienceId))])].sort();
    const verdicts: AudienceVerdict[] = [];
    for (const audienceId of audienceIds) {
      const own = ruleItems
        .filter((item) => item.audienceId === audienceId)
        .sort((a, b) => String(a.ruleId).localeCompare(String(b.ruleId)));
      const rules: AudienceVerdict['rules'] = own.map((item) => {
        const parsed = parseRule(item);
        return parsed.ok
          ? explainRule(parsed.value, article)
          : { ruleId: String(item.ruleId), skipped: rejectedRules.get(String(item.ruleId)) ?? parsed.rejected.reason };
      });
      const audience = audiences.get(audienceId);
      if (audience === undefined) {
        verdicts.push({
          audienceId,
          rules,
          problem: existing.has(audienceId)
            ? (skipped.get(audienceId) ?? 'it is invalid')
            : 'it does not exist (no item in the audiences table): the run skips its rules',
        });
        continue;
      }
      if (!audience.enabled) {
        verdicts.push({ audienceId, rules, problem: 'it is disabled' });
        continue;
      }
      const match = matches.get(audienceId);
      const delivery =
        match === undefined
          ? undefined
          : await deliveryOf(target, audience, match, services.now(), services.log, savedAt, reading);
      verdicts.push({ audienceId, rules, matchedBy: match?.rules.map((rule) => rule.ruleId) ?? [], delivery });
    }
    return render(c, services, { title: article.title, section: 'articles' }, articleView(article, verdicts, since));
  });
}
