/**
 * `news-alerts rules …`: list, show, export, create, update, put (create or replace, from flags
 * or a JSON/YAML file of one or many rules), validate a file without writing, enable, disable,
 * delete.
 *
 * What one command prints, another reads: `export`, `list --json`, `show --json` and what
 * `delete` prints on stdout are all documents `put --file` and `validate` accept, so a change can
 * be reviewed as a file and a deletion undone with a pipe. Notes and confirmations go to stderr.
 *
 * Validation is the alert run's own (`parseRule`, `buildRuleSet`, `describeIssues` from the model),
 * so what the CLI accepts the run accepts, and the run would reject exactly what the CLI refuses.
 * A file is checked completely before anything is written; one bad rule refuses the whole file.
 */

import type { Command } from 'commander';
import pLimit from 'p-limit';
import { z } from 'zod';
import { newKeywordSyntaxProblems } from '#core/keyword-syntax';
import { buildRuleSet, parseAudience, parseRule, type Rule, RuleSchema, ruleAttributes } from '#core/model';
import { newOperatorLookalikes, newTypedDashProblems, parseQuery, QuerySyntaxError } from '#core/query';
import { outsideEditsUndone, ruleFingerprint, type VersionChange } from '#core/workbench/rule-history';
import { action, collectList, nonEmptyOption, refuseSetAndCleared, textListOption } from './command.ts';
import type { CommandContext } from './context.ts';
import { newControlCharacterProblems } from './control-characters.ts';
import { NotFoundError, type ProblemInput, UsageError, versionConflict } from './errors.ts';
import { hint, newsAlerts, shellWord } from './hints.ts';
import {
  type DocumentFormat,
  type FileItem,
  formatOption,
  itemsDocument,
  locateIssues,
  readItemFile,
  refuseFileAsId,
  yamlText,
} from './item-files.ts';
import {
  type Audit,
  auditAttributes,
  changesFromStored,
  contentAttributesOf,
  describeChange,
  describeRepair,
  describeVersion,
  exportAttributes,
  type FieldChange,
  getItem,
  type Item,
  type ItemTable,
  itemLimitProblem,
  listItems,
  type PlannedPut,
  refuseRepeatedIds,
  updateAttributes,
  versionOf,
  withoutAudit,
  writeItems,
} from './items.ts';
import { jsonText, status, storedValueText } from './output.ts';
import { querySyntaxProblem, registerExplain } from './rules-explain.ts';
import { registerHistory } from './rules-history.ts';
import { didYouMean, hinted } from './unknown-ids.ts';
import { inputName, sourceName } from './utf8.ts';
import { ruleStandings } from './workbench/rule-status.ts';
import { ruleTableOf } from './workbench/tables.ts';
import { criteriaText } from './workbench/terms.ts';

const rulesTable = async (context: CommandContext): Promise<ItemTable> => ruleTableOf(await context.target());

const audiencesTable = async (context: CommandContext): Promise<ItemTable> => ({
  tableName: (await context.target()).names.audiencesTable,
  keyName: 'audienceId',
  noun: 'audience',
});

async function auditOf(context: CommandContext): Promise<Audit> {
  return { actor: await context.actor(), now: Date.now() };
}

// --- Checking rules ---------------------------------------------------------------------------

/** A rule that passed validation, with where it came from. */
interface CheckedRule {
  readonly rule: Rule;
  readonly source: FileItem;
  /** What writing it changes in the stored rule, as the run reads both (none, nothing repaired: unchanged). */
  readonly changes: FieldChange[];
  /** Why the run skips the stored rule, when it does: the write repairs it (changesFromStored). */
  readonly repairs?: string;
}

interface RuleCheck {
  readonly rules: CheckedRule[];
  readonly problems: ProblemInput[];
  readonly warnings: string[];
}

/**
 * Validates every rule exactly as the run does, plus what only makes sense for a write: unique
 * ids, an audience that exists, and (when the file carries `version`) that the stored rule is
 * still the version the file was made from. With `written` (a person writes the rules: create,
 * update, put, validate), a keyword the write adds in query syntax is refused too, with the advice
 * of functions/core/keyword-syntax.ts; one the stored rule has already is a warning, since the run
 * matches it as it always did.
 */
async function checkRules(
  context: CommandContext,
  items: readonly FileItem[],
  stored: ReadonlyMap<string, Item | undefined>,
  written = true,
): Promise<RuleCheck> {
  const problems: ProblemInput[] = [];
  const warnings: string[] = [];
  const rules: CheckedRule[] = [];
  const seen = new Map<string, FileItem>();
  const table = await rulesTable(context);
  // Only for measuring: `rules validate` must not fail because the caller cannot be named (the
  // write itself checks the exact item again).
  const actor = await context.actor().catch(() => 'unknown');
  for (const item of items) {
    const parsed = parseRule(item.value);
    if (!parsed.ok) {
      const result = RuleSchema.safeParse(item.value);
      const what = `rule ${parsed.rejected.key === '<missing key>' ? item.label : `"${parsed.rejected.key}"`}`;
      const query = querySyntaxErrorOf(item.value);
      if (!result.success) {
        // A query that does not parse is shown with its column and a caret (below), not only as
        // the schema's one-line message.
        const issues = result.error.issues.filter((issue) => query === undefined || issue.path[0] !== 'query');
        problems.push(...locateIssues(item, new z.core.$ZodError(issues), ruleAttributes, what, RuleSchema));
      } else if (query === undefined) problems.push(`${item.locate()}: ${what}: ${parsed.rejected.reason}`);
      if (query !== undefined) {
        problems.push(
          querySyntaxProblem(`${item.locate(['query'])}: ${what}: `, query.text, query.error, !context.output.json),
        );
      }
      continue;
    }
    const what = `rule "${parsed.value.ruleId}"`;
    if (written) {
      const previous = stored.get(parsed.value.ruleId);
      const added = newKeywordSyntaxProblems(parsed.value, previous);
      const dashes = newTypedDashProblems(parsed.value.query, previous?.query);
      const acting = newControlCharacterProblems(contentOf(parsed.value), previous);
      if (added.length > 0 || dashes.length > 0 || acting.length > 0) {
        problems.push(...added.map(({ list, index, message }) => `${item.locate([list, index])}: ${what}: ${message}`));
        problems.push(...dashes.map(({ message }) => `${item.locate(['query'])}: ${what}: query: ${message}`));
        problems.push(...acting.map(({ path, message }) => `${item.locate(path)}: ${what}: ${message}`));
        continue;
      }
      // None added: any left are stored already.
      for (const { message } of newKeywordSyntaxProblems(parsed.value)) {
        warnings.push(`${what}: ${message} (stored already, so kept: the run matches it as written)`);
      }
      for (const { message } of newTypedDashProblems(parsed.value.query)) {
        warnings.push(`${what}: query: ${message} (stored already, so kept: the run reads the dash as text)`);
      }
    }
    // Advice, never refused: the syntax reads these as words, and a word may be meant (quoted, it is
    // not named again). Only what the stored query did not hold already, so it is said once.
    for (const { message } of newOperatorLookalikes(parsed.value.query, stored.get(parsed.value.ruleId)?.query)) {
      warnings.push(`${what}: query: ${message}`);
    }
    // DynamoDB's own limits, judged on the item exactly as it will be written (audit included).
    const limitProblem = itemLimitProblem(table, {
      ...contentOf(parsed.value),
      ruleId: parsed.value.ruleId,
      ...auditPlaceholder(actor, versionOf(stored.get(parsed.value.ruleId))),
    });
    if (limitProblem !== undefined) {
      problems.push(`${item.locate()}: rule "${parsed.value.ruleId}": ${limitProblem}`);
      continue;
    }
    const earlier = seen.get(parsed.value.ruleId);
    if (earlier) {
      problems.push(
        `${item.locate(['ruleId'])}: rule "${parsed.value.ruleId}": appears twice (also at ${earlier.locate(['ruleId'])})`,
      );
      continue;
    }
    seen.set(parsed.value.ruleId, item);
    rules.push({
      rule: parsed.value,
      source: item,
      ...changesFromStored(stored.get(parsed.value.ruleId), contentOf(parsed.value), parseRule, minimalRule),
    });
  }

  // The audience must exist and be valid, as the run requires (buildRuleSet gives its wording).
  const target = await context.target();
  const audienceItems = await listItems(target.clients.documents, await audiencesTable(context));
  const ruleSet = buildRuleSet(
    rules.map(({ rule }) => ({ ...rule, enabled: true })),
    audienceItems,
  );
  const rejected = new Map(
    ruleSet.rejected.filter((entry) => entry.table === 'rules').map((entry) => [entry.key, entry]),
  );
  const audiences = new Map(
    audienceItems.flatMap((raw) => {
      const parsed = parseAudience(raw);
      return parsed.ok ? [[parsed.value.audienceId, parsed.value] as const] : [];
    }),
  );
  // One history read for each rule made from a version that the file changes, a few at a time (a
  // file may hold hundreds): a rule the file leaves as stored undoes no edit.
  const limit = pLimit(8);
  const changing = rules.filter(({ changes }) => changes.length > 0);
  const undoneEdits = new Map(
    await Promise.all(
      changing.map(({ rule }) =>
        limit(async () => [rule.ruleId, await outsideEditsUndoneBy(table, rule, stored.get(rule.ruleId))] as const),
      ),
    ),
  );
  const accepted: CheckedRule[] = [];
  for (const checked of rules) {
    const { rule, source } = checked;
    const rejection = rejected.get(rule.ruleId);
    if (rejection) {
      problems.push(`${source.locate(['audienceId'])}: rule "${rule.ruleId}": ${rejection.reason}`);
      continue;
    }
    if (audiences.get(rule.audienceId)?.enabled === false) {
      warnings.push(
        `rule "${rule.ruleId}": audience "${rule.audienceId}" is disabled; the rule runs once it is enabled`,
      );
    }
    const previous = stored.get(rule.ruleId);
    if (rule.version !== undefined && rule.version !== versionOf(previous)) {
      // A conflict, not a mistake in the file: exit 1 when it is the only kind of problem.
      problems.push(
        versionConflict(
          `${source.locate(['version'])}: rule "${rule.ruleId}": the file was made from version ${rule.version}, but the table holds ${describeVersion(previous)}; export it again with '${newsAlerts()} rules export ${rule.ruleId}' and redo the change`,
        ),
      );
      continue;
    }
    if (rule.fingerprint !== undefined && !FINGERPRINT_FORM.test(rule.fingerprint)) {
      // Not what export writes: a mistake in the file, not a sign that the stored rule changed.
      problems.push(
        `${source.locate(['fingerprint'])}: rule "${rule.ruleId}": fingerprint ${JSON.stringify(rule.fingerprint)} is malformed (rules export writes 22 characters of A-Z, a-z, 0-9, - and _); export the rule again with '${newsAlerts()} rules export ${rule.ruleId}' and redo the change, or remove the fingerprint line to put the file by its version`,
      );
      continue;
    }
    if (rule.fingerprint !== undefined && previous !== undefined && rule.fingerprint !== ruleFingerprint(previous)) {
      // The file says which stored state it was exported from: any change since is a conflict,
      // an edit in the DynamoDB console (which keeps the version) included. Which of the two
      // changed cannot be told: the stored rule, or the fingerprint in the file.
      problems.push(
        versionConflict(
          `${source.locate(['fingerprint'])}: rule "${rule.ruleId}": the stored rule changed since the export, or the file's fingerprint was edited (the stored rule's fingerprint is ${ruleFingerprint(previous)}, the file's ${rule.fingerprint}), and writing the file could undo a change; export it again with '${newsAlerts()} rules export ${rule.ruleId}' and redo the change (or leave fingerprint and version out of the file to replace the rule whatever the table holds)`,
        ),
      );
      continue;
    }
    const undone = undoneEdits.get(rule.ruleId) ?? [];
    if (undone.length > 0) {
      problems.push(
        versionConflict(
          `${source.locate(['version'])}: rule "${rule.ruleId}": version ${rule.version} was edited outside the CLI after it was recorded (${undone.map(describeChange).join('; ')}), and the file, made from version ${rule.version}, would undo that edit; export it again with '${newsAlerts()} rules export ${rule.ruleId}' and redo the change (or leave version out of the file to replace the rule whatever the table holds)`,
        ),
      );
      continue;
    }
    accepted.push(checked);
  }
  return { rules: accepted, problems, warnings };
}

/**
 * For a file without a fingerprint (written by hand, or exported before `rules export` wrote one):
 * the edits made outside the CLI (in the DynamoDB console, which keeps `version`) that writing
 * `rule`, made from the stored version, would undo, judged against that version as its history
 * recorded it (its first entry, as the CLI or the console wrote it). None for a rule without a
 * version, and when history holds no entry of that version (trimmed, or written before history
 * was kept): the version check alone then. A file with a fingerprint is judged by it instead.
 */
async function outsideEditsUndoneBy(
  table: ItemTable,
  rule: Rule,
  previous: Item | undefined,
): Promise<VersionChange[]> {
  if (rule.fingerprint !== undefined) return [];
  if (rule.version === undefined || previous === undefined || table.history === undefined) return [];
  const recorded = (await table.history.list(rule.ruleId))
    .filter((entry) => entry.version === rule.version && entry.item !== undefined)
    .sort((a, b) => a.edit - b.edit)[0];
  return recorded?.item === undefined ? [] : outsideEditsUndone(recorded.item, previous, contentOf(rule));
}

/** The syntax error of an item's `query`, when it is a string that does not parse. */
function querySyntaxErrorOf(value: unknown): { text: string; error: QuerySyntaxError } | undefined {
  const text = (value as { query?: unknown } | null)?.query;
  if (typeof text !== 'string') return undefined;
  try {
    parseQuery(text);
    return undefined;
  } catch (error) {
    if (error instanceof QuerySyntaxError) return { text, error };
    throw error;
  }
}

/** Audit attributes of the size `writeItems` will add, for measuring an item before the write. */
const auditPlaceholder = (actor: string, previousVersion: number | undefined) => ({
  updatedAt: new Date(0).toISOString(),
  updatedBy: actor,
  version: (previousVersion ?? 0) + 1,
});

/** The stored rules for the given ids (read before validating, so version checks see them). */
async function storedRules(context: CommandContext, ids: readonly string[]): Promise<Map<string, Item | undefined>> {
  const table = await rulesTable(context);
  const documents = (await context.target()).clients.documents;
  const entries = await Promise.all(
    [...new Set(ids)].map(async (id) => [id, await getItem(documents, table, id)] as const),
  );
  return new Map(entries);
}

const idsOf = (items: readonly FileItem[]): string[] =>
  items.flatMap((item) => {
    const value = item.value as { ruleId?: unknown } | null;
    return typeof value === 'object' && value !== null && typeof value.ruleId === 'string' ? [value.ruleId] : [];
  });

/** The smallest valid rule: what parsing it adds are the defaults (changesFromStored). */
const minimalRule: Item = { ruleId: 'r', audienceId: 'a', keywords: ['k'] };

/** The form of the fingerprint `rules export` writes (ruleFingerprint: 22 base64url characters). */
const FINGERPRINT_FORM = /^[A-Za-z0-9_-]{22}$/;

/**
 * A stored item without the export attributes: a `fingerprint` found on the item (an export pasted
 * into the DynamoDB console) says nothing about which state an edit made from the item started
 * from, so only a rule read from a file is judged by it, and a write made from the item drops it.
 */
function withoutExportAttributes(item: Item): Item {
  const rest = { ...item };
  for (const name of exportAttributes) delete rest[name];
  return rest;
}

/** A stored item with the fingerprint of its content, as `rules export` writes it (any stored one replaced). */
function withFingerprint(item: Item): Item {
  return { ...item, fingerprint: ruleFingerprint(item) };
}

/** The attributes of a rule's content: what an outside edit changes (the key, audit and export attributes left out). */
const ruleContentAttributes = contentAttributesOf({ keyName: 'ruleId' });

/** The new content of a rule: the validated rule without the attributes the CLI manages, nor the fingerprint. */
function contentOf(rule: Rule): Item {
  const content = withoutAudit({ ...rule });
  for (const name of exportAttributes) delete content[name];
  return content;
}

/**
 * The rules of a proposed file (for preview), validated exactly as `rules put` validates them:
 * any problem refuses the whole file.
 */
export async function readProposedRules(context: CommandContext, file: string): Promise<Rule[]> {
  const items = readItemFile(file, 'rules');
  const check = await checkRules(context, items, await storedRules(context, idsOf(items)));
  for (const warning of check.warnings) context.output.warn(warning);
  if (check.problems.length > 0) {
    throw new UsageError(`${inputName(file)}: ${check.problems.length} problem(s); fix the file first`, check.problems);
  }
  return check.rules.map(({ rule }) => rule);
}

// --- Commands ---------------------------------------------------------------------------------

interface PutOptions {
  file?: string;
  audience?: string;
  description?: string;
  categories?: string[];
  excludeCategories?: string[];
  keywords?: string[];
  excludeKeywords?: string[];
  query?: string;
  media?: string[];
  statuses?: string[];
  urgent?: boolean;
  matchAll?: boolean;
  spikes?: string;
  disabled?: boolean;
  notes?: string;
}

/** A rule item from `rules put <ruleId> --audience … --keywords …`. */
function ruleFromFlags(ruleId: string, options: PutOptions): FileItem {
  const value: Record<string, unknown> = { ruleId };
  if (options.audience !== undefined) value.audienceId = options.audience;
  if (options.description !== undefined) value.description = options.description;
  if (options.categories) value.categories = options.categories;
  if (options.excludeCategories) value.excludeCategories = options.excludeCategories;
  if (options.keywords) value.keywords = options.keywords;
  if (options.excludeKeywords) value.excludeKeywords = options.excludeKeywords;
  if (options.query !== undefined) value.query = options.query;
  if (options.media) value.media = options.media;
  if (options.statuses) value.statuses = options.statuses;
  if (options.urgent) value.urgent = true;
  if (options.matchAll) value.matchAll = true;
  // Validated with the rule (model.ts): a wrong value is refused with the allowed ones.
  if (options.spikes !== undefined) value.spikes = options.spikes;
  if (options.disabled) value.enabled = false;
  if (options.notes !== undefined) value.notes = options.notes;
  return { value, label: `rule ${ruleId}`, locate: () => 'command line' };
}

const flagNames: (keyof PutOptions)[] = [
  'audience',
  'description',
  'categories',
  'excludeCategories',
  'keywords',
  'excludeKeywords',
  'query',
  'media',
  'statuses',
  'urgent',
  'matchAll',
  'spikes',
  'disabled',
  'notes',
];

interface PutResultJson {
  ruleId: string;
  action: 'created' | 'updated' | 'unchanged';
  version: number | undefined;
  previousVersion: number | undefined;
  changes: FieldChange[];
  /** The stored rule's problem, when the run skipped it and this write repaired it. */
  repairs?: string;
  previous: Item | undefined;
}

/** The rules `put`/`create` write: from `--file`, or one from a rule id and flags. */
function itemsToWrite(ruleId: string | undefined, options: PutOptions, verb: 'put' | 'create'): FileItem[] {
  const usedFlags = flagNames.filter((name) => options[name] !== undefined);
  let items: FileItem[];
  if (options.file !== undefined) {
    if (ruleId !== undefined || usedFlags.length > 0) {
      throw new UsageError('give either --file or a rule id with flags, not both');
    }
    items = readItemFile(options.file, 'rules');
  } else {
    if (ruleId === undefined)
      throw new UsageError('give a rule id with flags (--audience, --keywords, …) or --file <file>');
    refuseFileAsId(ruleId, 'rules', verb);
    items = [ruleFromFlags(ruleId, options)];
  }
  if (items.length === 0) throw new UsageError(`${inputName(options.file ?? '-')} holds no rules; nothing was written`);
  return items;
}

/** `rules put`: creates or replaces each rule. */
async function putRules(context: CommandContext, args: readonly unknown[], options: PutOptions): Promise<void> {
  const [ruleId] = args as [string | undefined];
  const items = itemsToWrite(ruleId, options, 'put');
  await writeRules(context, items, await storedRules(context, idsOf(items)), sourceName(options.file, 'the rule'));
}

/** `rules create`: like put, but refuses (nothing written) when any of the rules exists already. */
async function createRules(context: CommandContext, args: readonly unknown[], options: PutOptions): Promise<void> {
  const [ruleId] = args as [string | undefined];
  const items = itemsToWrite(ruleId, options, 'create');
  const stored = await storedRules(context, idsOf(items));
  const existing = items.flatMap((item) => {
    const [id] = idsOf([item]);
    return id !== undefined && stored.get(id) !== undefined
      ? [
          `${item.locate(['ruleId'])}: rule "${id}" already exists; change it with '${newsAlerts()} rules update ${id}' or replace it with '${newsAlerts()} rules put'`,
        ]
      : [];
  });
  if (existing.length > 0) {
    throw new UsageError(
      `${sourceName(options.file, 'the rule')}: ${existing.length} rule(s) exist already; nothing was written`,
      existing,
    );
  }
  await writeRules(context, items, stored, sourceName(options.file, 'the rule'));
}

interface UpdateOptions extends Omit<PutOptions, 'file' | 'disabled'> {
  enable?: boolean;
  disable?: boolean;
  clear?: string[];
}

/** `rules update <ruleId>`: changes only the attributes given, keeps the others. */
async function updateRule(context: CommandContext, args: readonly unknown[], options: UpdateOptions): Promise<void> {
  const [ruleId] = args as [string];
  const given = ruleFromFlags(ruleId, options).value as Item;
  refuseSetAndCleared(
    given,
    (options.clear ?? []).filter((name) => name !== 'enabled' && name !== 'ruleId'),
  );
  const stored = await storedRules(context, [ruleId]);
  const previous = stored.get(ruleId);
  if (previous === undefined) {
    const hint = await didYouMean(await context.target(), 'rule', [ruleId]);
    throw new NotFoundError(
      `rule ${ruleId} does not exist${hinted(hint)}; create it with '${newsAlerts()} rules create ${ruleId}'`,
    );
  }
  if (options.enable && options.disable) throw new UsageError('give --enable or --disable, not both');
  const next: Item = { ...withoutExportAttributes(withoutAudit(previous)), ...given };
  // Attributes the stored item has that no rule has (a typo written by hand, such as `keyword`):
  // --clear removes them, which is how such a rule is repaired in place.
  const strays = Object.keys(withoutAudit(previous)).filter((name) => !ruleAttributes.includes(name));
  for (const name of options.clear ?? []) {
    if (name === 'ruleId' || name === 'audienceId') throw new UsageError(`--clear ${name}: ${name} is required`);
    const clearableHere = ruleAttributes.includes(name) || strays.includes(name);
    if (!clearableHere || (auditAttributes as readonly string[]).includes(name)) {
      throw new UsageError(
        `--clear ${name}: not a rule attribute you can clear (${[...clearable(), ...strays].join(', ')})`,
      );
    }
    delete next[name];
  }
  if (options.enable) next.enabled = true;
  if (options.disable) next.enabled = false;
  const left = strays.filter((name) => Object.hasOwn(next, name));
  try {
    await writeRules(
      context,
      [{ value: next, label: `rule ${ruleId}`, locate: () => 'command line' }],
      stored,
      'the rule',
    );
  } catch (error) {
    if (!(error instanceof UsageError) || left.length === 0) throw error;
    // The stored rule itself is what is wrong: say how to repair it, not only what is wrong.
    throw new UsageError(
      `${error.message}; the stored rule has attribute(s) no rule has: ${left.join(', ')}. Add ${left.map((name) => `--clear ${shellWord(name)}`).join(' ')} to this command to remove them, or export, edit and put it back (${hint(`rules export ${ruleId}`)}, then ${hint('rules put --file <file>')})`,
      error.problems,
      { cause: error },
    );
  }
}

const clearable = (): string[] => ruleContentAttributes.filter((name) => name !== 'audienceId');

/** Validates the rules completely, then writes them (in one transaction up to 50, see writeItems) and reports each. */
async function writeRules(
  context: CommandContext,
  items: readonly FileItem[],
  stored: ReadonlyMap<string, Item | undefined>,
  source: string,
): Promise<void> {
  const check = await checkRules(context, items, stored);
  for (const warning of check.warnings) context.output.warn(warning);
  if (check.problems.length > 0) {
    throw new UsageError(`${source}: ${check.problems.length} problem(s); nothing was written`, check.problems);
  }

  const results: PutResultJson[] = [];
  const puts: PlannedPut[] = [];
  for (const { rule, changes, repairs } of check.rules) {
    const previous = stored.get(rule.ruleId);
    const content = contentOf(rule);
    if (previous !== undefined && changes.length === 0 && repairs === undefined) {
      const version = versionOf(previous);
      results.push({ ruleId: rule.ruleId, action: 'unchanged', version, previousVersion: version, changes, previous });
    } else {
      // writeItems requires the content it was checked against still stored: an edit in the
      // DynamoDB console in between keeps the version, and writing over it would undo that edit.
      puts.push({ id: rule.ruleId, item: content, previous });
      results.push({
        ruleId: rule.ruleId,
        action: 'created',
        version: undefined,
        previousVersion: undefined,
        changes,
        ...(repairs === undefined ? {} : { repairs }),
        previous,
      });
    }
  }
  const target = await context.target();
  const written = await writeItems(
    target.clients.documents,
    await rulesTable(context),
    { puts },
    await auditOf(context),
  );
  for (const result of written) {
    const entry = results.find((candidate) => candidate.ruleId === result.id);
    if (!entry) continue;
    entry.action = result.action === 'deleted' ? 'updated' : result.action;
    entry.version = result.version;
    entry.previousVersion = result.previousVersion;
  }

  context.output.result({ target: target.label, results }, () => {
    for (const result of results) {
      if (result.action === 'unchanged') {
        context.output.line(`unchanged ${result.ruleId} (${describeVersion(result.previous)})`);
      } else if (result.action === 'created') {
        context.output.line(`created ${result.ruleId} (version ${result.version})`);
      } else {
        context.output.line(
          `updated ${result.ruleId}: version ${result.previousVersion ?? '(none)'} → ${result.version}; previous: ${describeVersion(result.previous)}`,
        );
        for (const change of result.changes) context.output.line(`  ${describeChange(change)}`);
        if (result.repairs !== undefined) context.output.line(`  ${describeRepair('rule', result.repairs)}`);
      }
    }
  });
}

async function validateRules(context: CommandContext, args: readonly unknown[]): Promise<void> {
  const [file] = args as [string];
  const items = readItemFile(file, 'rules');
  if (items.length === 0) throw new UsageError(`${inputName(file)} holds no rules`);
  const stored = await storedRules(context, idsOf(items));
  const check = await checkRules(context, items, stored);
  for (const warning of check.warnings) context.output.warn(warning);
  if (check.problems.length > 0) {
    throw new UsageError(
      `${inputName(file)}: ${check.problems.length} problem(s); 'rules put' would refuse this file`,
      check.problems,
    );
  }
  const rows = check.rules.map(({ rule, changes, repairs }) => {
    const previous = stored.get(rule.ruleId);
    const changed = changes.length === 0 ? [] : [`changes ${changes.map((change) => change.field).join(', ')}`];
    const verdict =
      previous === undefined
        ? 'new'
        : changed.length === 0 && repairs === undefined
          ? 'unchanged'
          : [...changed, ...(repairs === undefined ? [] : [describeRepair('rule')])].join('; ');
    return { ruleId: rule.ruleId, audienceId: rule.audienceId, enabled: rule.enabled, status: verdict };
  });
  context.output.result({ file, valid: true, rules: rows }, () => {
    context.output.table(
      [
        { head: 'RULE', id: true },
        { head: 'AUDIENCE', id: true },
        'ENABLED',
        { head: 'AGAINST THE TABLE', wrap: true },
      ],
      rows.map((row) => [row.ruleId, row.audienceId, row.enabled, row.status]),
    );
    context.output.note(`${inputName(file)}: ${rows.length} rule(s) valid; nothing was written`);
  });
}

interface RuleRow {
  ruleId: string;
  audienceId: unknown;
  enabled: unknown;
  valid: boolean;
  problem: string | undefined;
  item: Item;
}

/**
 * The rules (all, or those `filter` keeps) judged as the run judges them. With `audienceId`, only
 * that audience's rules, and NotFoundError when there is no such audience and no rule names it
 * (a typo must not read as "this audience has no rules").
 */
async function describeRules(
  context: CommandContext,
  filter?: (item: Item) => boolean,
  audienceId?: string,
): Promise<RuleRow[]> {
  const target = await context.target();
  const [ruleItems, audienceItems] = await Promise.all([
    listItems(target.clients.documents, await rulesTable(context)),
    listItems(target.clients.documents, await audiencesTable(context)),
  ]);
  const keep = (item: Item): boolean =>
    (filter === undefined || filter(item)) && (audienceId === undefined || item.audienceId === audienceId);
  const selected = ruleItems.filter(keep);
  if (
    audienceId !== undefined &&
    selected.length === 0 &&
    !audienceItems.some((item) => item.audienceId === audienceId)
  ) {
    throw new NotFoundError(
      `audience ${audienceId} does not exist in ${target.label}${hinted(await didYouMean(target, 'audience', [audienceId]), `${newsAlerts()} audiences list`)}`,
    );
  }
  return ruleStandings(selected, audienceItems)
    .map(
      ({ item, ruleId, valid, problem }): RuleRow => ({
        ruleId,
        audienceId: item.audienceId,
        enabled: item.enabled ?? true,
        valid,
        problem,
        item,
      }),
    )
    .sort((a, b) => a.ruleId.localeCompare(b.ruleId));
}

async function listRules(
  context: CommandContext,
  _args: readonly unknown[],
  options: { audience?: string },
): Promise<void> {
  const rows = await describeRules(context, undefined, options.audience);
  context.output.result(rows, () => {
    context.output.table(
      [
        { head: 'RULE', id: true },
        { head: 'AUDIENCE', id: true },
        'ENABLED',
        { head: 'CRITERIA', wrap: true },
        { head: 'VERSION', optional: true },
        { head: 'UPDATED', optional: true },
        { head: 'STATUS', wrap: true },
      ],
      rows.map((row) => [
        row.ruleId,
        String(row.audienceId ?? ''),
        String(row.enabled),
        criteriaText(row.item),
        // An item saved by hand (console, AWS CLI) has no bookkeeping: '-', not a blank that reads as lost.
        versionOf(row.item) ?? '-',
        [row.item.updatedAt, row.item.updatedBy].filter((part) => typeof part === 'string').join(' by ') || '-',
        row.valid
          ? status(row.problem ?? 'ok', row.problem === undefined ? 'good' : 'warn')
          : status(`INVALID: ${row.problem ?? ''}`, 'bad'),
      ]),
      'no rules',
    );
    const invalid = rows.filter((row) => !row.valid).length;
    if (invalid > 0) context.output.warn(`${invalid} rule(s) are invalid: the run skips them (see STATUS)`);
  });
}

async function showRule(context: CommandContext, args: readonly unknown[]): Promise<void> {
  const [ruleId] = args as [string];
  const rows = await describeRules(context, (item) => item.ruleId === ruleId);
  const row = rows[0];
  if (!row) {
    throw new NotFoundError(
      `rule ${ruleId} does not exist${hinted(await didYouMean(await context.target(), 'rule', [ruleId]), `${newsAlerts()} rules list`)}`,
    );
  }
  // With --json the stored item alone, so it can be edited and piped back into `rules put --file -`,
  // with its fingerprint as `rules export` writes it (a change since is then a conflict).
  if (context.output.json && row.problem !== undefined) {
    context.output.warn(`rule ${ruleId} ${row.valid ? '' : 'is INVALID: '}${row.problem}`);
  }
  context.output.result(withFingerprint(row.item), () => {
    context.output.fields([
      ...Object.entries(row.item)
        .sort(([a], [b]) => ruleAttributes.indexOf(a) - ruleAttributes.indexOf(b))
        .map(([name, value]) => [name, storedValueText(value)] as const),
      ['status', row.valid ? (row.problem ?? 'ok') : `INVALID: ${row.problem ?? ''}`],
    ]);
  });
}

async function setEnabled(context: CommandContext, args: readonly unknown[], enabled: boolean): Promise<void> {
  const [ruleIds] = args as [string[]];
  refuseRepeatedIds('rule', ruleIds, 'nothing was changed');
  const table = await rulesTable(context);
  const target = await context.target();
  const stored = await storedRules(context, ruleIds);
  const missing = ruleIds.filter((id) => stored.get(id) === undefined);
  if (missing.length > 0) {
    throw new NotFoundError(
      `rule ${missing.join(', ')} does not exist${hinted(await didYouMean(await context.target(), 'rule', missing))}; nothing was changed`,
    );
  }
  if (enabled) {
    // Enabling a rule the run would skip helps nobody: say why it is invalid instead.
    const items = ruleIds.map(
      (id): FileItem => ({
        value: { ...withoutExportAttributes(stored.get(id) ?? {}), enabled: true },
        label: `rule ${id}`,
        locate: () => `rule ${id} in ${table.tableName}`,
      }),
    );
    const check = await checkRules(context, items, stored, false);
    if (check.problems.length > 0) {
      throw new UsageError(
        'cannot enable invalid rule(s); fix them first (rules show, rules put); nothing was changed',
        check.problems,
      );
    }
  }
  const audit = await auditOf(context);
  const results: {
    ruleId: string;
    action: string;
    version: number | undefined;
    previousVersion: number | undefined;
  }[] = [];
  for (const id of ruleIds) {
    const previous = stored.get(id) as Item;
    if ((previous.enabled ?? true) === enabled) {
      results.push({
        ruleId: id,
        action: 'unchanged',
        version: versionOf(previous),
        previousVersion: versionOf(previous),
      });
      continue;
    }
    const result = await updateAttributes(target.clients.documents, table, previous, id, { enabled }, audit);
    results.push({
      ruleId: id,
      action: enabled ? 'enabled' : 'disabled',
      version: result.version,
      previousVersion: result.previousVersion,
    });
  }
  context.output.result({ target: target.label, results }, () => {
    for (const result of results) {
      context.output.line(
        result.action === 'unchanged'
          ? `unchanged ${result.ruleId}: already ${enabled ? 'enabled' : 'disabled'}`
          : `${result.action} ${result.ruleId}: version ${result.previousVersion ?? '(none)'} → ${result.version}`,
      );
    }
  });
}

async function deleteRules(
  context: CommandContext,
  args: readonly unknown[],
  options: { yes?: boolean },
): Promise<void> {
  const [ruleIds] = args as [string[]];
  // Before the confirmation: a question about a list the write would then refuse wastes the answer.
  refuseRepeatedIds('rule', ruleIds, 'nothing was deleted');
  const stored = await storedRules(context, ruleIds);
  const missing = ruleIds.filter((id) => stored.get(id) === undefined);
  if (missing.length > 0) {
    throw new NotFoundError(
      `rule ${missing.join(', ')} does not exist${hinted(await didYouMean(await context.target(), 'rule', missing))}; nothing was deleted`,
    );
  }
  const target = await context.target();
  await context.confirm(`Delete rule(s) ${ruleIds.join(', ')} from ${target.label}?`, options.yes);
  const deletes = ruleIds.map((id) => ({ id, previous: stored.get(id) as Item }));
  const results = await writeItems(
    target.clients.documents,
    await rulesTable(context),
    { deletes },
    await auditOf(context),
  );
  // What was deleted, as a document `rules put --file -` writes back (without the audit
  // attributes: a restored rule starts again at version 1).
  const restore = itemsDocument(
    'rules',
    results.map((result) => withoutAudit(result.previous ?? {})),
    ruleAttributes,
  );
  for (const result of results) context.output.note(`deleted ${result.id} (was ${describeVersion(result.previous)})`);
  context.output.result(
    {
      target: target.label,
      results: results.map(({ id, previousVersion, previous }) => ({
        ruleId: id,
        action: 'deleted',
        previousVersion,
        previous,
      })),
      ...restore,
    },
    () => {
      context.output.note(`to restore, pipe stdout into '${newsAlerts()} rules put --file -'`);
      context.output.line(yamlText(restore).trimEnd());
    },
  );
}

interface ExportOptions {
  format: DocumentFormat;
  audience?: string;
}

/** `rules export [ruleId...]`: the stored rules as a file `rules put --file` writes back unchanged. */
async function exportRules(context: CommandContext, args: readonly unknown[], options: ExportOptions): Promise<void> {
  const [ruleIds] = args as [string[]];
  const wanted = ruleIds.length > 0 ? new Set(ruleIds) : undefined;
  const rows = await describeRules(
    context,
    wanted === undefined ? undefined : (item) => typeof item.ruleId === 'string' && wanted.has(item.ruleId),
    options.audience,
  );
  const missing = ruleIds.filter((id) => !rows.some((row) => row.item.ruleId === id));
  if (missing.length > 0) {
    throw new NotFoundError(
      `rule ${missing.join(', ')} does not exist${hinted(await didYouMean(await context.target(), 'rule', missing))}; nothing was exported`,
    );
  }
  for (const row of rows) {
    if (!row.valid) {
      context.output.warn(
        `rule ${row.ruleId} is INVALID (${row.problem ?? ''}): 'rules put' refuses it until it is fixed`,
      );
    }
  }
  // Each rule carries the fingerprint of what is stored, so `put --file` can tell an edit made
  // since (in the DynamoDB console too) from one made before the export.
  const document = itemsDocument(
    'rules',
    rows.map((row) => ({ ...row.item, fingerprint: ruleFingerprint(row.item) })),
    ruleAttributes,
  );
  context.output.result(document, () =>
    context.output.line((options.format === 'json' ? jsonText(document) : yamlText(document)).trimEnd()),
  );
}

/** The criteria flags of `create`, `update` and `put`. */
function criteriaFlags(command: Command): Command {
  return command
    .option('--audience <audienceId>', 'audience that receives the matches')
    .option('--description <text>', 'what the rule is for (shown in alerts)')
    .option('--categories <list>', 'category codes or names, comma-separated; "002*" matches by prefix', collectList)
    .option('--exclude-categories <list>', 'categories that veto a match', collectList)
    .option(
      '--keywords <list>',
      'any-of keywords over title and summary, comma-separated (a comma inside a number, as in 1,000, is refused)',
      textListOption('--keywords'),
    )
    .option('--exclude-keywords <list>', 'keywords that veto a match', textListOption('--exclude-keywords'))
    .option(
      '--query <query>',
      'boolean query over title and summary: "phrases", AND, OR, NOT/-term, ( ), NEAR/n, prefix*, title:, summary:',
    )
    .option('--media <list>', 'media codes the rule is limited to', collectList)
    .option('--statuses <list>', 'article statuses the rule is limited to', collectList)
    .option('--urgent', 'matches bypass the audience’s quiet hours')
    .option('--match-all', 'match every article (required for a rule without criteria)')
    .option(
      '--spikes <preset>',
      "spike alerts when the rule's new stories per hour jump: fewer, balanced, more, or off (docs/spikes.md)",
    )
    .option('--notes <text>', 'free text for ops; ignored by the run');
}

/** `-f/--file` and `--disabled` of `create` and `put`, which write whole rules. */
function wholeRuleFlags(command: Command): Command {
  return criteriaFlags(command.option('-f, --file <file>', 'JSON or YAML file of one or many rules ("-": stdin)'))
    .option('--disabled', 'store the rule disabled (preview it, then enable)')
    .addHelpText(
      'after',
      `
A file holds one rule, a list of rules, or {"rules": [...]}: what 'rules export', 'rules list --json',
'rules show --json' and 'rules delete' print is read back as it stands. It is validated completely
(with the run's own validation) before anything is written; a problem anywhere refuses the whole
file and names its line and field. Every write records updatedBy/updatedAt and increments
version; a rule carrying "version" (as 'rules export' prints it) is only written if the table
still holds that version.`,
    );
}

/** Registers `rules` and its subcommands. */
export function registerRules(program: Command): void {
  const rules = program
    .command('rules')
    .description(
      'list, show, export, create, update, put, validate, explain, history, restore, enable, disable and delete subscriber rules',
    );

  rules
    .command('list')
    .description('list rules with their criteria, version, last change and whether the run accepts them')
    .option(
      '--audience <audienceId>',
      'only the rules of this audience (exit 3 if there is no such audience)',
      nonEmptyOption,
    )
    .action(action(listRules));

  rules
    .command('show')
    .description('show one rule, every attribute, and whether the run accepts it')
    .argument('<ruleId>')
    .action(action(showRule));

  rules
    .command('export')
    .description('print rules (all, or the ones named) as a YAML or JSON file that "rules put --file" reads back')
    .argument('[ruleId...]', 'the rules to export (default: all)')
    .option('--audience <audienceId>', 'only the rules of this audience', nonEmptyOption)
    .addOption(formatOption())
    .addHelpText(
      'after',
      `
Examples:
  news-alerts rules export > rules.yaml        # edit, then: news-alerts rules put --file rules.yaml
  news-alerts rules export markets-rates --format json`,
    )
    .action(action(exportRules));

  wholeRuleFlags(
    rules
      .command('create')
      .description('create new rules from flags or a file; refused if a rule exists already')
      .argument('[ruleId]', 'the rule to create from flags'),
  )
    .addHelpText(
      'after',
      `
Example:
  news-alerts rules create markets-rates --audience markets-desk --categories '002*' --keywords 'interest rate,inflation'`,
    )
    .action(action(createRules));

  criteriaFlags(
    rules
      .command('update')
      .description('change some attributes of a rule (only the flags given); the others stay')
      .argument('<ruleId>'),
  )
    .option('--enable', 'enable the rule')
    .option('--disable', 'disable the rule')
    .option('--clear <attributes>', 'remove optional attributes, comma-separated (e.g. media,notes)', collectList)
    .addHelpText(
      'after',
      `
Example:
  news-alerts rules update markets-rates --keywords 'interest rate,inflation,rate cut'`,
    )
    .action(action(updateRule));

  wholeRuleFlags(
    rules
      .command('put')
      .description(
        'create or replace rules from a JSON/YAML file (one rule, a list, or {"rules": [...]}) or from flags',
      )
      .argument('[ruleId]', 'the rule to create or replace from flags'),
  )
    .addHelpText(
      'after',
      `
Examples:
  news-alerts rules put --file rules.yaml
  news-alerts rules export | news-alerts rules put --file -
  news-alerts rules put markets-rates --audience markets-desk --categories '002*' --keywords 'interest rate,inflation'
  news-alerts rules put chips-exports --audience chips-team --query '(semiconductor OR 반도체) AND (export* OR 수출) -rumor'

A query (--query, or "query" in a file) is checked before anything is written: one that does not
parse is refused with its column and a caret under it. 'news-alerts rules explain --query …' shows
how it is read; the syntax with tested examples is in docs/queries.md.`,
    )
    .action(action(putRules));

  rules
    .command('validate')
    .description('check a rules file exactly as put would, without writing; shows what it would change')
    .argument('<file>', 'JSON or YAML file ("-": stdin); also what rules export/list --json/show --json print')
    .action(action(validateRules));

  registerExplain(rules, rulesTable);
  registerHistory(rules);

  rules
    .command('enable')
    .description('enable rules (refused for a rule the run would reject)')
    .argument('<ruleId...>')
    .action(action((context, args) => setEnabled(context, args, true)));

  rules
    .command('disable')
    .description('disable rules (e.g. a noisy one); the next run ignores them')
    .argument('<ruleId...>')
    .action(action((context, args) => setEnabled(context, args, false)));

  rules
    .command('delete')
    .description('delete rules; prints them on stdout as a file "rules put --file -" restores')
    .argument('<ruleId...>')
    .option('-y, --yes', 'do not ask for confirmation')
    .addHelpText(
      'after',
      `
Example:
  news-alerts rules delete markets-rates --yes > deleted.yaml   # undo: news-alerts rules put --file deleted.yaml`,
    )
    .action(action(deleteRules));
}
