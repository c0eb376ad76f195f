/**
 * The rules pages: list and filter, a rule with its edit form (validated as you type by the run's
 * schema), explain against a recent article, history with restore. Every write shows its diff and
 * needs a confirmation, and goes through the CLI's own write path (cli/items.ts: optimistic lock,
 * audit attributes, history in the same transaction).
 */
import { createHash } from 'node:crypto';
import type { Context, Hono } from 'hono';
import { html } from 'hono/html';
import { newKeywordSyntaxProblems } from '#core/keyword-syntax';
import { parseRule, type Rule, ruleAttributes } from '#core/model';
import { newTypedDashProblems } from '#core/query';
import { canonicalValue, diffVersions } from '#core/workbench/rule-history';
import { newControlCharacterProblems } from '../../control-characters.ts';
import { hint } from '../../hints.ts';
import { auditAttributes, getItem, type Item, listItems, versionOf, withoutAudit, writeItems } from '../../items.ts';
import { pageText } from '../../output.ts';
import { findArticle } from '../../workbench/articles.ts';
import { explainOnArticle, storedAudience } from '../../workbench/explain.ts';
import { applyRestore, planRestore, ruleHistory } from '../../workbench/history.ts';
import { ruleStandings } from '../../workbench/rule-status.ts';
import { audienceTableOf, ruleTableOf } from '../../workbench/tables.ts';
import { commaTermNotes, criteriaText } from '../../workbench/terms.ts';
import { type ConsoleServices, render, statusOf } from '../context.ts';
import { problem } from '../views/layout.ts';
import {
  confirmWrite,
  currentVersionOf,
  explanation,
  history,
  type RuleForm,
  type RuleRow,
  restorePreview,
  ruleExplainBox,
  ruleForm,
  rulesList,
} from '../views/rules.ts';

const listNames = ['categories', 'excludeCategories', 'keywords', 'excludeKeywords', 'media', 'statuses'] as const;

/**
 * A value written by hand with the wrong type, as the form shows it so that it can be seen and
 * fixed: `42` for a number, JSON for a map or a list where text belongs ('' when absent or null).
 */
const shownAsText = (value: unknown): string =>
  value === undefined || value === null
    ? ''
    : typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean'
      ? String(value)
      : value instanceof Set
        ? [...value].map(shownAsText).join('\n')
        : (JSON.stringify(value) ?? '');
const text = (value: unknown): string => (typeof value === 'string' ? value : shownAsText(value));
/** A list as the form shows it: one term per line, so a term may hold a comma ("1,000 jobs"). */
const listLines = (value: unknown): string =>
  Array.isArray(value) ? value.map(shownAsText).join('\n') : shownAsText(value);

/**
 * Whether a stored attribute has the type the form writes (text, or a list of terms). One that
 * does not (a query saved as a number, keywords as one string) is replaced by what the form holds
 * when saved, even unchanged: keeping it would keep the rule invalid, and an emptied box removes it.
 */
const formTyped = (name: 'text' | 'list', value: unknown): boolean =>
  value === undefined ||
  (name === 'text'
    ? typeof value === 'string'
    : (Array.isArray(value) || value instanceof Set) && [...value].every((term) => typeof term === 'string'));
/** Line breaks as stored: browsers send a textarea's line breaks as CRLF. */
const lines = (value: string): string => value.replace(/\r\n?/g, '\n');

/**
 * Whether a stored rule is shown as enabled: absent (the default) or `true`. Anything else written
 * by hand (`"false"`, `0`) shows as not enabled, and the run rejects the rule: a checked box would
 * turn such a rule on as soon as its other fields were fixed.
 */
const enabledOf = (item: Item): boolean => item.enabled === undefined || item.enabled === true;

/** The form's fields from a stored item. */
export function formFromItem(item: Item | undefined, ruleId = ''): RuleForm {
  return {
    ruleId: text(item?.ruleId) || ruleId,
    audienceId: text(item?.audienceId),
    description: text(item?.description),
    categories: listLines(item?.categories),
    excludeCategories: listLines(item?.excludeCategories),
    keywords: listLines(item?.keywords),
    excludeKeywords: listLines(item?.excludeKeywords),
    media: listLines(item?.media),
    statuses: listLines(item?.statuses),
    query: text(item?.query),
    notes: text(item?.notes),
    enabled: item === undefined ? true : enabledOf(item),
    urgent: item?.urgent === true,
    matchAll: item?.matchAll === true,
    remove: [],
  };
}

/** How to remove what no rule has, when the item has such attributes. */
const removable = (item: Item): string[] => {
  const strays = straysOf(item);
  return strays.length === 0
    ? []
    : [`tick "Remove ${strays.join('", "Remove ')}" in the form to remove what no rule has`];
};

/** The attributes of a stored rule that no rule has (a hand-made `keyword`): the run refuses it. */
export function straysOf(item: Item | undefined): string[] {
  if (item === undefined) return [];
  return Object.keys(item)
    .filter((name) => !ruleAttributes.includes(name) && !(auditAttributes as readonly string[]).includes(name))
    .sort();
}

/** The form's fields from a posted body. */
function formFromBody(body: Record<string, unknown>): RuleForm {
  return {
    ruleId: text(body.ruleId).trim(),
    audienceId: text(body.audienceId).trim(),
    description: text(body.description),
    categories: text(body.categories),
    excludeCategories: text(body.excludeCategories),
    keywords: text(body.keywords),
    excludeKeywords: text(body.excludeKeywords),
    media: text(body.media),
    statuses: text(body.statuses),
    query: text(body.query),
    notes: text(body.notes),
    enabled: body.enabled === 'true',
    urgent: body.urgent === 'true',
    matchAll: body.matchAll === 'true',
    remove: [body.remove].flat().filter((name): name is string => typeof name === 'string'),
  };
}

/** The form's fields the page shows in an input of type text, which drops line breaks. */
const singleLine = new Set<keyof RuleForm>(['ruleId', 'audienceId', 'description']);

/**
 * The rule item a form describes. An edit starts from the stored rule's own attributes, so what
 * the form does not show (spike alerts, an attribute a newer version added) is kept as it is;
 * a field the user did not touch keeps its stored value exactly (what the form showed comes back
 * unchanged), so reading a value into the form and back cannot rewrite it; a changed field
 * replaces it, an emptied one is removed (lists: one term per line), and a checkbox left at its
 * default adds nothing to a rule that did not store it (no `urgent: false` appears in the diff and
 * the history of a rule nobody made urgent).
 */
export function itemFromForm(form: RuleForm, stored?: Item): Item {
  const item: Item = stored === undefined ? {} : withoutAudit(stored);
  const shown = stored === undefined ? undefined : formFromItem(stored);
  const untouched = (name: keyof RuleForm): boolean => {
    if (shown === undefined) return false;
    if (!formTyped((listNames as readonly string[]).includes(name) ? 'list' : 'text', stored?.[name])) return false;
    const before = String(shown[name]);
    return lines(String(form[name])) === lines(singleLine.has(name) ? before.replace(/[\r\n]/g, '') : before);
  };
  item.ruleId = form.ruleId;
  item.audienceId = form.audienceId;
  const setText = (name: 'description' | 'query' | 'notes', value: string) => {
    if (untouched(name)) return;
    if (value.trim() === '') delete item[name];
    else item[name] = value;
  };
  setText('description', form.description.trim());
  for (const name of listNames) {
    if (untouched(name)) continue;
    const terms = lines(form[name])
      .split('\n')
      .map((term) => term.trim())
      .filter((term) => term !== '');
    if (terms.length > 0) item[name] = terms;
    else delete item[name];
  }
  setText('query', lines(form.query).trim());
  setText('notes', lines(form.notes));
  const setFlag = (name: 'enabled' | 'urgent' | 'matchAll', value: boolean, byDefault: boolean) => {
    if (value !== byDefault || item[name] !== undefined) item[name] = value;
  };
  setFlag('enabled', form.enabled, true);
  setFlag('urgent', form.urgent, false);
  setFlag('matchAll', form.matchAll, false);
  // Only attributes no rule has can be removed this way, as with the CLI's `rules update --clear`.
  for (const name of straysOf(item)) if (form.remove.includes(name)) delete item[name];
  return item;
}

/**
 * The item as the review carries it to the save (a hidden field): JSON, with a DynamoDB set (a
 * list written as SS in the DynamoDB console) kept as one, where plain JSON would make it `{}`
 * and the save would refuse a rule the user never changed there.
 */
function itemJson(item: Item): string {
  return JSON.stringify(item, (_name, value: unknown) => (value instanceof Set ? { $set: [...value] } : value));
}

/** What the list's text filter searches: the rule's values, a string set's terms as a list's. */
const searchText = (item: Item): string => {
  // The values only, as written: attribute names are not what a person searches for, and JSON
  // escaping kept a query's quotes ("memory chips") from being found.
  const parts: string[] = [];
  const walk = (value: unknown): void => {
    if (typeof value === 'string' || typeof value === 'number') parts.push(String(value));
    else if (Array.isArray(value) || value instanceof Set) for (const entry of value) walk(entry);
    else if (value !== null && typeof value === 'object') for (const entry of Object.values(value)) walk(entry);
  };
  walk(withoutAudit(item));
  return parts.join('\n').toLowerCase();
};

/** The item {@link itemJson} wrote. @throws SyntaxError for anything else */
function itemOfJson(json: string): Item {
  return JSON.parse(json, (_name, value: unknown) => {
    if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
      const names = Object.keys(value);
      const set = (value as { $set?: unknown }).$set;
      if (names.length === 1 && Array.isArray(set)) return new Set(set);
    }
    return value;
  }) as Item;
}

/**
 * A digest of the stored rule item, every attribute included. The review carries the digest of
 * what it was computed from, and the save refuses if the stored item differs: an edit made in the
 * DynamoDB console does not bump `version`, so comparing versions alone would overwrite it.
 */
export function storedDigest(item: Item | undefined): string {
  if (item === undefined) return 'none';
  return createHash('sha256')
    .update(JSON.stringify(canonicalValue(item, true)))
    .digest('base64url');
}

/**
 * What stops the run from accepting the rule (its own schema), and a missing audience. With
 * `written` (the rule is being saved over `written.stored`), also a keyword the save adds in query
 * syntax (functions/core/keyword-syntax.ts), a typed dash the save adds to the query where `-`
 * (NOT) was meant (`typedDashProblems`): the run would read them literally, never as meant; and a
 * control or text-direction character the save adds to a name, description or term, as the CLI refuses.
 */
async function problemsOf(
  services: ConsoleServices,
  item: Item,
  written?: { readonly stored: Item | undefined },
): Promise<string[]> {
  const parsed = parseRule(item);
  const problems = parsed.ok ? [] : [...parsed.reasons];
  if (written !== undefined) {
    problems.push(...newKeywordSyntaxProblems(item, written.stored).map(({ message }) => message));
    problems.push(...newTypedDashProblems(item.query, written.stored?.query).map(({ message }) => `query: ${message}`));
    // What the CLI's edits refuse (cli/control-characters.ts): it would reach subscribers' messages.
    problems.push(...newControlCharacterProblems(withoutAudit(item), written.stored).map(({ message }) => message));
  }
  const inForm = problems.map((problem) => inFormWords(problem, item));
  if (typeof item.audienceId === 'string' && item.audienceId !== '') {
    const audience = await storedAudience(services.target, item.audienceId);
    if (typeof audience === 'string') inForm.push(audience);
  }
  return inForm;
}

/** The form's label of each rule attribute it has a field for. */
const formLabels: Readonly<Record<string, string>> = {
  ruleId: 'Rule id',
  audienceId: 'Audience',
  description: 'Description',
  categories: 'Categories',
  excludeCategories: 'Excluded categories',
  keywords: 'Keywords',
  excludeKeywords: 'Excluded keywords',
  media: 'Media',
  statuses: 'Statuses',
  query: 'Query',
  notes: 'Notes',
  enabled: 'Enabled',
  urgent: 'Urgent',
  matchAll: 'Match all',
};

/**
 * A problem as the form names things: `keywords[2]: …` becomes `Keywords "the term": …` (the
 * term itself, since the form's lines skip blank ones and the index would not say which line),
 * `query: …` becomes `Query: …`. A message that quotes its term already keeps just the label;
 * an entry that could not be read is named by its place. An attribute the form has no field for
 * keeps its name. Terms may hold anything: pages and the live check pass the text through
 * `pageText`.
 */
function inFormWords(problem: string, item: Item): string {
  const found = /^([A-Za-z]+)(?:\[(\d+)\])?(?=[: ])/.exec(problem);
  if (found === null || !Object.hasOwn(formLabels, found[1] ?? '')) return problem;
  const [path, name = '', index] = found;
  const label = formLabels[name];
  const rest = problem.slice(path.length);
  if (index === undefined || /^: ["']/.test(rest)) return `${label}${rest}`;
  const list = item[name];
  const entries = list instanceof Set || Array.isArray(list) ? [...list] : [];
  if (Number(index) >= entries.length) return `${label}, entry ${Number(index) + 1}${rest}`;
  // Cut by code points, so no surrogate pair is split.
  const characters = Array.from(shownAsText(entries[Number(index)]));
  const term = characters.length > 40 ? `${characters.slice(0, 39).join('')}…` : characters.join('');
  return `${label} ${term.includes('"') ? `'${term}'` : `"${term}"`}${rest}`;
}

/** Why a rule the run accepts still does not run: its audience is disabled (as `rules list` says). */
async function disabledAudienceOf(services: ConsoleServices, item: Item): Promise<string | undefined> {
  if (typeof item.audienceId !== 'string' || item.audienceId === '') return undefined;
  const audience = await storedAudience(services.target, item.audienceId);
  return typeof audience !== 'string' && !audience.enabled
    ? `The rule does not run while audience "${audience.audienceId}" is disabled (enable it with '${hint(`audiences update ${audience.audienceId} --enable`)}').`
    : undefined;
}

async function audienceIds(services: ConsoleServices): Promise<string[]> {
  return (await listItems(services.target.clients.documents, audienceTableOf(services.target)))
    .map((item) => String(item.audienceId))
    .sort();
}

export function rulePages(app: Hono, services: ConsoleServices): void {
  const { target } = services;
  const table = () => ruleTableOf(target);

  app.get('/rules', async (c) => {
    const audience = c.req.query('audience') ?? '';
    const q = (c.req.query('q') ?? '').trim().toLowerCase();
    const [items, audienceItems] = await Promise.all([
      listItems(target.clients.documents, table()),
      listItems(target.clients.documents, audienceTableOf(target)),
    ]);
    // Judged as the run judges them, audiences included (a rule of a missing audience is skipped,
    // and one of a disabled audience does not run), and as `rules list` shows them.
    const selected = items
      .filter((item) => audience === '' || item.audienceId === audience)
      .filter((item) => q === '' || searchText(item).includes(q));
    const rows: RuleRow[] = ruleStandings(selected, audienceItems)
      .sort((a, b) => String(a.item.ruleId).localeCompare(String(b.item.ruleId)))
      .map(({ item, problem, valid }) => ({
        ruleId: String(item.ruleId),
        audienceId: String(item.audienceId ?? ''),
        enabled: enabledOf(item),
        criteria: criteriaText(item),
        version: String(versionOf(item) ?? ''),
        status: problem === undefined ? 'ok' : valid ? problem : `INVALID: ${problem}`,
      }));
    return render(
      c,
      services,
      { title: 'Rules', section: 'rules' },
      rulesList(rows, { audience, q }, await audienceIds(services)),
    );
  });

  app.get('/new-rule', async (c) =>
    render(
      c,
      services,
      { title: 'New rule', section: 'rules' },
      ruleForm(formFromItem(undefined), services.keys.csrf, true, await audienceIds(services), ''),
    ),
  );

  // Live validation (the page's script); also usable without it: the preview validates again.
  app.post('/rules/validate', async (c) => {
    const body = await c.req.parseBody({ all: true });
    const form = formFromBody(body);
    // Judged as it would be saved: with what the form does not show of a stored rule.
    const stored = form.ruleId === '' ? undefined : await getItem(target.clients.documents, table(), form.ruleId);
    // The new-rule form asks with ?new: judged as its review judges it (an existing id is refused).
    const isNew = c.req.query('new') !== undefined;
    const problems = await problemsOf(services, itemFromForm(form, isNew ? undefined : stored), {
      stored: isNew ? undefined : stored,
    });
    if (isNew && stored !== undefined) problems.push(`rule ${form.ruleId} exists already: edit it instead`);
    // The page's script writes these as text, past the escaping every rendered page gets: they
    // quote what was typed, which may hold a text-direction or invisible character.
    return c.json({
      ok: problems.length === 0,
      problems: problems.map(pageText),
      notes: commaTermNotes(itemFromForm(form, undefined)).map(pageText),
    });
  });

  const preview = async (c: Context, isNew: boolean) => {
    const body = await c.req.parseBody({ all: true });
    const form = formFromBody(body);
    const previous = isNew ? undefined : await getItem(target.clients.documents, table(), form.ruleId);
    // Fields left as the form showed them keep the stored values: only if the rule is still what
    // the form was made from (an edit in the DynamoDB console keeps its version).
    const opened = text(body.opened);
    if (!isNew && opened !== '' && opened !== storedDigest(previous)) {
      return render(
        c,
        services,
        { title: 'Not saved', section: 'rules' },
        html`${problem(`rule ${form.ruleId} changed since you opened it (edited outside the console); nothing was saved.`)}<p><a href="/rules/${encodeURIComponent(form.ruleId)}">Open the current version</a></p>`,
        409,
      );
    }
    const item = itemFromForm(form, previous);
    const problems = await problemsOf(services, item, { stored: previous });
    if (isNew && form.ruleId !== '' && (await getItem(target.clients.documents, table(), form.ruleId)) !== undefined) {
      problems.push(`rule ${form.ruleId} exists already: edit it instead`);
    }
    const title = isNew ? 'New rule' : `Rule ${form.ruleId}`;
    if (problems.length > 0) {
      return render(
        c,
        services,
        { title, section: 'rules' },
        html`${problem(`Not saved: ${[...problems, ...removable(item)].join(' · ')}`)}${ruleForm(form, services.keys.csrf, isNew, await audienceIds(services), text(body.expectedVersion), straysOf(previous), opened)}`,
        400,
      );
    }
    const changes = diffVersions(previous, item);
    return render(
      c,
      services,
      { title: `Review: ${title}`, section: 'rules' },
      confirmWrite(
        isNew
          ? `Create rule ${form.ruleId}:`
          : `Save rule ${form.ruleId} (version ${text(body.expectedVersion) || 'none'}):`,
        changes,
        `/rules/${encodeURIComponent(form.ruleId)}/save`,
        {
          item: itemJson(item),
          expectedVersion: isNew ? 'new' : text(body.expectedVersion),
          reviewed: storedDigest(previous),
        },
        services.keys.csrf,
        isNew ? '/rules' : `/rules/${encodeURIComponent(form.ruleId)}`,
      ),
    );
  };
  app.post('/new-rule/preview', (c) => preview(c, true));
  app.post('/rules/:id/preview', (c) => preview(c, false));

  app.post('/rules/:id/save', async (c) => {
    const ruleId = c.req.param('id');
    const body = await c.req.parseBody();
    let item: Item;
    try {
      item = itemOfJson(text(body.item));
    } catch {
      return render(
        c,
        services,
        { title: 'Not saved', section: 'rules' },
        problem('the form was damaged; start again'),
        400,
      );
    }
    if (item.ruleId !== ruleId) {
      return render(
        c,
        services,
        { title: 'Not saved', section: 'rules' },
        problem('the rule id does not match the page'),
        400,
      );
    }
    const previous = await getItem(target.clients.documents, table(), ruleId);
    const problems = await problemsOf(services, item, { stored: previous });
    if (problems.length > 0) {
      return render(c, services, { title: 'Not saved', section: 'rules' }, problem(problems.join(' · ')), 400);
    }
    const expected = text(body.expectedVersion);
    const current = previous === undefined ? 'new' : String(versionOf(previous) ?? '');
    if (expected !== current || text(body.reviewed) !== storedDigest(previous)) {
      const how =
        expected === current
          ? `it was edited outside the console after you reviewed your changes, version ${current} unchanged`
          : `version ${current} now, you edited ${expected}`;
      return render(
        c,
        services,
        { title: 'Not saved', section: 'rules' },
        html`${problem(`rule ${ruleId} changed since you opened it (${how}); nothing was saved.`)}<p><a href="/rules/${encodeURIComponent(ruleId)}">Open the current version</a></p>`,
        409,
      );
    }
    try {
      const [result] = await writeItems(
        target.clients.documents,
        table(),
        { puts: [{ id: ruleId, item, previous }] },
        {
          actor: services.actor,
          now: services.now(),
        },
      );
      return c.redirect(`/rules/${encodeURIComponent(ruleId)}?saved=${result?.version ?? ''}`, 303);
    } catch (error) {
      return render(
        c,
        services,
        { title: 'Not saved', section: 'rules' },
        problem(String((error as Error).message)),
        statusOf(error, 409),
      );
    }
  });

  app.get('/rules/:id', async (c) => {
    const ruleId = c.req.param('id');
    const item = await getItem(target.clients.documents, table(), ruleId);
    if (item === undefined) {
      return render(
        c,
        services,
        { title: `Rule ${ruleId}`, section: 'rules' },
        html`${problem(`rule ${ruleId} does not exist`)}<p><a href="/rules/${encodeURIComponent(ruleId)}/history">Its history</a></p>`,
        404,
      );
    }
    const problems = await problemsOf(services, item);
    const paused = problems.length === 0 ? await disabledAudienceOf(services, item) : undefined;
    const saved = c.req.query('saved');
    return render(
      c,
      services,
      {
        title: `Rule ${ruleId}`,
        section: 'rules',
        flash: saved === undefined ? undefined : `Saved: now version ${saved}.`,
      },
      html`<p>Version ${String(versionOf(item) ?? 'none')}, ${text(item.updatedAt)} by ${text(item.updatedBy)} · <a href="/rules/${encodeURIComponent(ruleId)}/history">History</a></p>
${problems.length === 0 ? '' : problem(`The run skips this rule: ${[...problems, ...removable(item)].join(' · ')}`)}${paused === undefined ? '' : problem(paused)}
${ruleExplainBox(ruleId, '', '2d')}
<h2>Edit</h2>
${ruleForm(formFromItem(item), services.keys.csrf, false, await audienceIds(services), String(versionOf(item) ?? ''), straysOf(item), storedDigest(item))}`,
    );
  });

  app.get('/rules/:id/explain', async (c) => {
    const ruleId = c.req.param('id');
    const key = (c.req.query('article') ?? '').trim();
    const since = (c.req.query('since') ?? '2d').trim() || '2d';
    const audience = c.req.query('audience') || undefined;
    const title = `Explain ${ruleId}`;
    const item = await getItem(target.clients.documents, table(), ruleId);
    if (item === undefined)
      return render(c, services, { title, section: 'rules' }, problem(`rule ${ruleId} does not exist`), 404);
    const parsed = parseRule(item);
    if (!parsed.ok)
      return render(
        c,
        services,
        { title, section: 'rules' },
        problem(`the run skips this rule: ${parsed.rejected.reason}`),
        400,
      );
    const box = ruleExplainBox(ruleId, key, since);
    if (key === '') {
      // Opened from the rule's page (no key asked yet): the form alone; sent empty: say what is missing.
      const asked = c.req.query('article') !== undefined;
      return render(
        c,
        services,
        { title, section: 'rules' },
        asked ? html`${box}${problem('give the key of an article (id:… or url:…); the Articles page finds one')}` : box,
        asked ? 400 : 200,
      );
    }
    try {
      const found = await findArticle(target, key, { since }, services.now(), services.log);
      if (found.article === undefined) {
        return render(
          c,
          services,
          { title, section: 'rules' },
          html`${box}${problem(`no article ${key} in the last ${since}: widen the look-back (at most 7 days) or find it on the Articles page`)}`,
          404,
        );
      }
      const rule: Rule = parsed.value;
      const result = await explainOnArticle(target, rule, found.article, services.now(), services.log, audience);
      return render(
        c,
        services,
        { title, section: 'rules' },
        html`${box}${explanation(result, `${found.article.key}: ${found.article.title}`, audience ?? rule.audienceId)}`,
      );
    } catch (error) {
      return render(
        c,
        services,
        { title, section: 'rules' },
        html`${box}${problem((error as Error).message.replace(/--since\b/g, 'Look back'))}`,
        statusOf(error, 400),
      );
    }
  });

  app.get('/rules/:id/history', async (c) => {
    const ruleId = c.req.param('id');
    const restored = c.req.query('restored');
    try {
      const view = await ruleHistory(target, ruleId, services.now());
      // A deleted rule has no page to go back to: its versions can still be restored here.
      const exists = (await getItem(target.clients.documents, table(), ruleId)) !== undefined;
      const back = exists
        ? html`<p><a href="/rules/${encodeURIComponent(ruleId)}">Back to the rule</a></p>`
        : html`<p>Rule ${ruleId} does not exist now (deleted): restore a version below, or go to <a href="/rules">the rules</a>.</p>`;
      return render(
        c,
        services,
        {
          title: `History of ${ruleId}`,
          section: 'rules',
          flash: restored === undefined ? undefined : `Restored version ${restored}.`,
        },
        html`${back}${history(view)}`,
      );
    } catch (error) {
      return render(
        c,
        services,
        { title: `History of ${ruleId}`, section: 'rules' },
        problem((error as Error).message),
        statusOf(error, 404),
      );
    }
  });

  app.get('/rules/:id/restore', async (c) => {
    const ruleId = c.req.param('id');
    try {
      const plan = await planRestore(target, ruleId, c.req.query('version') ?? '', services.now());
      return render(
        c,
        services,
        { title: `Restore ${ruleId}`, section: 'rules' },
        restorePreview(plan, services.keys.csrf, storedDigest(plan.current)),
      );
    } catch (error) {
      return render(
        c,
        services,
        { title: `Restore ${ruleId}`, section: 'rules' },
        problem((error as Error).message),
        statusOf(error, 400),
      );
    }
  });

  app.post('/rules/:id/restore', async (c) => {
    const ruleId = c.req.param('id');
    const body = await c.req.parseBody();
    try {
      const plan = await planRestore(target, ruleId, text(body.version), services.now());
      const expected = text(body.expectedVersion);
      const current = currentVersionOf(plan);
      if (expected !== current || text(body.reviewed) !== storedDigest(plan.current)) {
        const how =
          expected === current
            ? `it was edited outside the console after you reviewed the restore, version ${current} unchanged`
            : `version ${current} now, you reviewed against ${expected || 'nothing'}`;
        return render(
          c,
          services,
          { title: 'Not restored', section: 'rules' },
          html`${problem(`rule ${ruleId} changed since you reviewed the restore (${how}); nothing was written.`)}<p><a href="/rules/${encodeURIComponent(ruleId)}/restore?version=${encodeURIComponent(plan.label)}">Review the restore again</a></p>`,
          409,
        );
      }
      await applyRestore(target, plan, { actor: services.actor, now: services.now() });
      return c.redirect(`/rules/${encodeURIComponent(ruleId)}/history?restored=${encodeURIComponent(plan.label)}`, 303);
    } catch (error) {
      return render(
        c,
        services,
        { title: `Restore ${ruleId}`, section: 'rules' },
        problem((error as Error).message),
        statusOf(error, 409),
      );
    }
  });
}
