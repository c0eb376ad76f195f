/** Templates of the rules pages: list, rule (edit form, explain box), preview of a write, history. */
import { html } from 'hono/html';
import type { VersionChange } from '#core/workbench/rule-history';
import { versionOf } from '../../items.ts';
import type { ArticleExplanation } from '../../workbench/explain.ts';
import type { RestorePlan, RuleHistoryView } from '../../workbench/history.ts';
import { csrfField, type Html, problem, table, when } from './layout.ts';

/** One row of the rules list. */
export interface RuleRow {
  readonly ruleId: string;
  readonly audienceId: string;
  readonly enabled: boolean;
  readonly criteria: string;
  readonly version: string;
  readonly status: string;
}

export function rulesList(
  rows: readonly RuleRow[],
  filter: { audience: string; q: string },
  audiences: readonly string[],
): Html {
  return html`<form class="filters" method="get" action="/rules" role="search">
  <label>Audience <select name="audience"><option value="">All</option>${audiences.map(
    (id) => html`<option value="${id}"${filter.audience === id ? html` selected` : ''}>${id}</option>`,
  )}${
    // A filter by an audience with no item (its rules are listed): shown as chosen, so Filter keeps it.
    filter.audience !== '' && !audiences.includes(filter.audience)
      ? html`<option value="${filter.audience}" selected>${filter.audience} (does not exist)</option>`
      : ''
  }</select></label>
  <label>Text <input type="search" name="q" value="${filter.q}" placeholder="id, description, term"></label>
  <button type="submit">Filter</button>
  <a href="/new-rule">New rule</a>
</form>
${table(
  `${rows.length} rule(s)`,
  ['Rule', 'Audience', 'Enabled', 'Criteria', 'Version', 'Status'],
  rows.map((row) => [
    html`<a href="/rules/${encodeURIComponent(row.ruleId)}">${row.ruleId}</a>`,
    html`<a href="/audiences/${encodeURIComponent(row.audienceId)}">${row.audienceId}</a>`,
    row.enabled ? 'yes' : 'no',
    row.criteria,
    row.version,
    row.status,
  ]),
  'No rule fits the filter.',
)}`;
}

/** The values of the rule form, as text. */
export interface RuleForm {
  readonly ruleId: string;
  readonly audienceId: string;
  readonly description: string;
  readonly categories: string;
  readonly excludeCategories: string;
  readonly keywords: string;
  readonly excludeKeywords: string;
  readonly media: string;
  readonly statuses: string;
  readonly query: string;
  readonly notes: string;
  readonly enabled: boolean;
  readonly urgent: boolean;
  readonly matchAll: boolean;
  /** Attributes no rule has (a stray `keyword`) that the user ticked to remove. */
  readonly remove: readonly string[];
}

/**
 * A multi-line field. A textarea keeps line breaks (an input of type text drops them, which would
 * change a query); the newline after the tag is there because HTML drops the first one of the
 * content, which would lose a value's own leading line break.
 */
const textArea = (name: keyof RuleForm, value: string, described = false) =>
  html`<textarea name="${name}"${described ? html` aria-describedby="hint-${name}"` : ''}>
${value}</textarea>`;

const listField = (name: keyof RuleForm, label: string, value: string, hint: string) => html`<label>${label}
  ${textArea(name, value, true)}
  <span class="hint" id="hint-${name}">${hint}</span></label>`;

export function ruleForm(
  form: RuleForm,
  csrf: string,
  isNew: boolean,
  audiences: readonly string[],
  version: string,
  strays: readonly string[] = [],
  /** The digest of the stored rule the form was made from (pages/rules.ts storedDigest). */
  opened = '',
): Html {
  const action = isNew ? '/new-rule/preview' : `/rules/${encodeURIComponent(form.ruleId)}/preview`;
  return html`<form class="stack" method="post" action="${action}" data-validate="${isNew ? '/rules/validate?new' : '/rules/validate'}">
${csrfField(csrf)}
<input type="hidden" name="expectedVersion" value="${version}">
${opened === '' ? '' : html`<input type="hidden" name="opened" value="${opened}">`}
${
  isNew
    ? html`<label>Rule id <input type="text" name="ruleId" value="${form.ruleId}" required aria-describedby="hint-ruleId"><span class="hint" id="hint-ruleId">letters, digits, . _ : -</span></label>`
    : html`<input type="hidden" name="ruleId" value="${form.ruleId}">`
}
<label>Audience <select name="audienceId">${
    // A rule's audience that no longer exists stays selected (and says so): the first option in
    // its place would move the rule to another audience on the next save.
    form.audienceId !== '' && !audiences.includes(form.audienceId)
      ? html`<option value="${form.audienceId}" selected>${form.audienceId} (does not exist)</option>`
      : ''
  }${audiences.map((id) => html`<option value="${id}"${form.audienceId === id ? html` selected` : ''}>${id}</option>`)}</select></label>
<label>Description <input type="text" name="description" value="${form.description}"></label>
${listField('categories', 'Categories', form.categories, "one per line: codes or names; '002*' by prefix")}
${listField('excludeCategories', 'Excluded categories', form.excludeCategories, 'one per line; an article with one of these never matches')}
${listField('keywords', 'Keywords', form.keywords, 'one per line; any of these in the title or summary (whole words)')}
${listField('excludeKeywords', 'Excluded keywords', form.excludeKeywords, 'one per line; an article with one of these never matches')}
${listField('media', 'Media', form.media, 'one per line: media codes or names')}
${listField('statuses', 'Statuses', form.statuses, 'one per line: PUBLISHED, UPDATED…')}
<label>Query ${textArea('query', form.query, true)}<span class="hint" id="hint-query">AND, OR, NOT, "phrases", NEAR/5, title:… (docs/queries.md)</span></label>
<label>Notes ${textArea('notes', form.notes)}</label>
<label class="check"><input type="checkbox" name="enabled" value="true"${form.enabled ? html` checked` : ''}> Enabled</label>
<label class="check"><input type="checkbox" name="urgent" value="true"${form.urgent ? html` checked` : ''}> Urgent (bypasses quiet hours)</label>
<label class="check"><input type="checkbox" name="matchAll" value="true"${form.matchAll ? html` checked` : ''}> Match all (no positive criterion needed)</label>
${
  strays.length === 0
    ? ''
    : html`<fieldset><legend>Attributes no rule has: the run skips the rule while it has them</legend>
${strays.map((name) => html`<label class="check"><input type="checkbox" name="remove" value="${name}"${form.remove.includes(name) ? html` checked` : ''}> Remove ${name}</label>`)}
</fieldset>`
}
<p id="validation" role="status" aria-live="polite"></p>
<p><button type="submit">Review changes</button></p>
</form>`;
}

export function ruleExplainBox(ruleId: string, article: string, since: string): Html {
  return html`<h2 id="explain">Explain against a recent article</h2>
<form class="filters" method="get" action="/rules/${encodeURIComponent(ruleId)}/explain">
  <label>Article key <input type="text" name="article" value="${article}" placeholder="id:20261121-0042"></label>
  <label>Look back <input type="text" name="since" value="${since}"></label>
  <button type="submit">Explain</button>
  <a href="/articles?rule=${encodeURIComponent(ruleId)}">Find an article</a>
</form>`;
}

/** `audienceId`: the audience whose delivery was asked for (the rule's own unless the address names another). */
export function explanation(result: ArticleExplanation, articleTitle: string, audienceId: string): Html {
  const { rule, delivery } = result;
  return html`<section aria-labelledby="verdict">
<h2 id="verdict">Verdict: <span class="${rule.matches ? 'verdict-match' : 'verdict-nomatch'}">${rule.matches ? 'matches' : 'does not match'}</span></h2>
<p>${articleTitle}</p>
<p>${rule.summary}</p>
${table(
  'Every criterion of the rule on this article',
  ['Criterion', 'Verdict', 'Why'],
  rule.criteria.map((criterion) => [
    criterion.criterion,
    html`<span class="${criterion.verdict}">${criterion.verdict}</span>`,
    criterion.why,
  ]),
  '',
)}
<h2>Delivery to ${audienceId}${rule.matches ? '' : ' (if it matched)'}</h2>
${
  delivery === undefined
    ? problem(result.audienceProblem ?? 'the audience is unknown')
    : html`<p><strong>${deliveryText(delivery.outcome, delivery.reason, delivery.releaseAt, delivery.collapsedInto)}</strong></p>
${table(
  'What the delivery decides, step by step',
  ['Step', 'Why'],
  delivery.steps.map((step) => [step.step, step.why]),
  '',
)}`
}
</section>`;
}

export function deliveryText(
  outcome: string,
  reason: string | undefined,
  releaseAt: number | undefined,
  into: string | undefined,
): string {
  switch (outcome) {
    case 'send':
      return 'Sent at once.';
    case 'hold':
      return `Held (${reason ?? ''}) until ${when(releaseAt)}.`;
    case 'collapse':
      return `Collapsed into ${into ?? 'its story'}: not sent.`;
    case 'already':
      return 'Already handled: it is in the ledger.';
    case 'unread':
      return 'Not sent: no scheduled run reads it (a replay does; see the reading step).';
    default:
      return 'Skipped: the audience is disabled.';
  }
}

const value = (v: unknown): string => (v === undefined ? '(none)' : JSON.stringify(v));

export function diff(changes: readonly VersionChange[]): Html {
  return table(
    `${changes.length} change(s)`,
    ['Attribute', 'Before', 'After'],
    changes.map((change) => [
      change.field,
      html`<del>${value(change.before)}</del>`,
      html`<ins>${value(change.after)}</ins>`,
    ]),
    'No change.',
  );
}

export function confirmWrite(
  title: string,
  changes: readonly VersionChange[],
  action: string,
  hidden: Readonly<Record<string, string>>,
  csrf: string,
  cancel: string,
): Html {
  return html`<p>${title}</p>
<div class="diff">${diff(changes)}</div>
<form method="post" action="${action}">
${csrfField(csrf)}
${Object.entries(hidden).map(([name, v]) => html`<input type="hidden" name="${name}" value="${v}">`)}
<button type="submit">Confirm and save</button> <a href="${cancel}">Cancel</a>
</form>`;
}

export function history(view: RuleHistoryView): Html {
  return html`${
    view.recordedOutsideEdit === undefined
      ? view.recordedFirst === undefined
        ? ''
        : html`<p class="flash" role="status">This rule had no history yet (written before history was kept, or not by the CLI or the console): recorded as found, as version ${view.recordedFirst}.</p>`
      : html`<p class="flash" role="status">This rule was edited outside the CLI and console: recorded as version ${view.recordedOutsideEdit}.</p>`
  }
${table(
  `Versions of ${view.ruleId}, newest first`,
  // A header for every column (axe: empty-table-header), seen by screen readers only.
  ['Version', 'When', 'Who', 'Action', 'Changes', html`<span class="visually-hidden">Restore</span>`],
  view.versions.map((version) => [
    version.label,
    when(version.at),
    version.actor,
    version.restoredFrom === undefined ? version.action : `restored ${version.restoredFrom}`,
    html`<div class="diff">${version.changes.map((change) => html`<div>${change.field}: <del>${value(change.before)}</del> → <ins>${value(change.after)}</ins></div>`)}</div>`,
    version.item === undefined
      ? ''
      : html`<a href="/rules/${encodeURIComponent(view.ruleId)}/restore?version=${version.label}">Restore ${version.label}</a>`,
  ]),
  'No history recorded.',
)}`;
}

/** The stored rule's version a restore plan was made against (`none`: the rule is deleted). */
export const currentVersionOf = (plan: RestorePlan): string =>
  plan.current === undefined ? 'none' : String(versionOf(plan.current) ?? '');

/**
 * @param reviewed - the digest of the stored rule the diff was made from (pages/rules.ts
 *   storedDigest): the restore is refused if the stored rule differs, as a save is, since an edit in
 *   the DynamoDB console does not bump `version`
 */
export function restorePreview(plan: RestorePlan, csrf: string, reviewed: string): Html {
  return confirmWrite(
    `Restoring ${plan.ruleId} to version ${plan.label} (${plan.version.actor}, ${when(plan.version.at)}) changes:`,
    plan.changes,
    `/rules/${encodeURIComponent(plan.ruleId)}/restore`,
    // The version the diff was made against: the restore is refused if the rule moved on since.
    { version: plan.label, expectedVersion: currentVersionOf(plan), reviewed },
    csrf,
    `/rules/${encodeURIComponent(plan.ruleId)}/history`,
  );
}
