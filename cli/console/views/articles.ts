/** Templates of the articles pages: search, and one article with why each audience did or did not get it. */
import { html } from 'hono/html';
import type { Article } from '#core/model';
import type { DeliveryExplanation, RuleExplanation } from '#core/workbench/explain';
import { type Html, problem, table, when } from './layout.ts';
import { deliveryText } from './rules.ts';

export interface SearchValues {
  readonly text: string;
  readonly category: string;
  readonly media: string;
  readonly since: string;
  readonly rule: string;
}

export function searchForm(values: SearchValues): Html {
  return html`<form class="filters" method="get" action="/articles" role="search">
  <label>Words <input type="search" name="text" value="${values.text}"></label>
  <label>Category <input type="text" name="category" value="${values.category}" placeholder="002*"></label>
  <label>Media <input type="text" name="media" value="${values.media}"></label>
  <label>Look back <input type="text" name="since" value="${values.since}"></label>
  ${values.rule === '' ? '' : html`<input type="hidden" name="rule" value="${values.rule}">`}
  <button type="submit">Search</button>
</form>
<p class="hint">Articles are read again from the provider for the look-back (at most 7 days); nothing is stored.</p>`;
}

export function results(articles: readonly Article[], total: number, values: SearchValues): Html {
  const link = (article: Article) =>
    values.rule === ''
      ? `/articles/view?key=${encodeURIComponent(article.key)}&since=${encodeURIComponent(values.since)}`
      : `/rules/${encodeURIComponent(values.rule)}/explain?article=${encodeURIComponent(article.key)}&since=${encodeURIComponent(values.since)}`;
  return table(
    `${total} article(s) fit${total > articles.length ? ` (newest ${articles.length} shown)` : ''}`,
    ['Published', 'Title', 'Media', 'Categories', 'Key'],
    articles.map((article) => [
      when(article.publishedAt),
      html`<a href="${link(article)}">${article.title}</a>`,
      article.mediaName ?? article.media ?? '',
      article.categories.join(', '),
      article.key,
    ]),
    'No article fits.',
  );
}

/** A stored rule the run skips (its own schema or its audience), with why. */
export interface SkippedRule {
  readonly ruleId: string;
  readonly skipped: string;
}

/**
 * Per audience: every rule's verdict, the rules the run's matcher matched (`matchedBy`), and the
 * delivery of that match; or why the run skips the audience (`problem`).
 */
export interface AudienceVerdict {
  readonly audienceId: string;
  readonly rules: readonly (RuleExplanation | SkippedRule)[];
  readonly matchedBy?: readonly string[] | undefined;
  readonly delivery?: DeliveryExplanation | undefined;
  readonly problem?: string | undefined;
}

const isSkipped = (rule: RuleExplanation | SkippedRule): rule is SkippedRule => 'skipped' in rule;

function heading(verdict: AudienceVerdict): Html {
  if (verdict.problem !== undefined) return html`<span class="verdict-nomatch">skipped by the run</span>`;
  const matchedBy = verdict.matchedBy ?? [];
  return matchedBy.length > 0
    ? html`<span class="verdict-match">matches</span> (${matchedBy.join(', ')})`
    : html`<span class="verdict-nomatch">no rule matches</span>`;
}

export function articleView(article: Article, verdicts: readonly AudienceVerdict[], since: string): Html {
  return html`<dl class="fields">
<dt>Key</dt><dd>${article.key}</dd>
<dt>Published</dt><dd>${when(article.publishedAt)}</dd>
<dt>Media</dt><dd>${article.mediaName ?? ''} ${article.media ?? ''}</dd>
<dt>Categories</dt><dd>${article.categories.join(', ')} ${article.categoryNames.length > 0 ? `(${article.categoryNames.join(', ')})` : ''}</dd>
<dt>Status</dt><dd>${article.status ?? ''}</dd>
<dt>Summary</dt><dd>${article.summary}</dd>
</dl>
<h2>Why did or didn't it match, per audience</h2>
${verdicts.map(
  (verdict) => html`<section aria-labelledby="a-${verdict.audienceId}">
<h3 id="a-${verdict.audienceId}">${verdict.audienceId}: ${heading(verdict)}</h3>
${verdict.problem === undefined ? '' : problem(`The run skips this audience: ${verdict.problem}`)}
${table(
  'Rules of the audience',
  ['Rule', 'Verdict', 'Why'],
  verdict.rules.map((rule) =>
    isSkipped(rule)
      ? [
          html`<a href="/rules/${encodeURIComponent(rule.ruleId)}">${rule.ruleId}</a>`,
          'INVALID',
          `the run skips this rule: ${rule.skipped}`,
        ]
      : [
          html`<a href="/rules/${encodeURIComponent(rule.ruleId)}/explain?article=${encodeURIComponent(article.key)}&since=${encodeURIComponent(since)}">${rule.ruleId}</a>`,
          rule.matches ? 'matches' : 'no',
          rule.summary,
        ],
  ),
  'The audience has no rule.',
)}
${verdict.delivery === undefined ? '' : html`<p>Delivery: <strong>${deliveryText(verdict.delivery.outcome, verdict.delivery.reason, verdict.delivery.releaseAt, verdict.delivery.collapsedInto)}</strong> ${verdict.delivery.steps.map((step) => `${step.step}: ${step.why}`).join(' · ')}</p>`}
</section>`,
)}`;
}
