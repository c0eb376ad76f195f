/**
 * Rule history: who changed a rule, when, and what the rule was, so ops can read the changes and
 * restore an earlier version. Every write of the CLI and the console records the new version in
 * the same DynamoDB transaction as the rule itself (cli/items.ts); an item edited in the DynamoDB
 * console (or any other tool) is recognised the next time the CLI or the console reads or writes
 * the rule: its content differs from the latest recorded version, so an "outside edit" entry is
 * recorded first, with the item's `updatedBy` when it names one.
 *
 * Bounded: {@link HISTORY_LIMITS} versions per rule (older ones are trimmed after each write) and
 * a retention in days (TTL), so a rule edited every minute cannot grow its history without end.
 */

import { createHash } from 'node:crypto';
import { parseRule } from '../model.ts';

/** How much history is kept. */
export const HISTORY_LIMITS = {
  /** Versions kept per rule; the oldest beyond are deleted after each write. */
  versionsPerRule: 50,
  /** Days a version is kept (DynamoDB TTL), whatever the count. */
  retentionDays: 400,
} as const;

/** How a version came to be. */
export type HistoryAction = 'created' | 'updated' | 'deleted' | 'restored' | 'outside-edit';

/** One recorded version of a rule. */
export interface RuleVersion {
  readonly ruleId: string;
  /** The rule's `version` attribute after this change (0 for an item that never had one). */
  readonly version: number;
  /**
   * 0 for a version the CLI or the console wrote; 1, 2… for edits made outside them on top of
   * `version` (the DynamoDB console leaves `version` as it was). Shown as `3` or `3.1`.
   */
  readonly edit: number;
  readonly at: number;
  readonly actor: string;
  readonly action: HistoryAction;
  /** The whole item after the change (audit attributes included); absent for `deleted`. */
  readonly item?: Record<string, unknown> | undefined;
  /** For `restored`: the version label it restored. */
  readonly restoredFrom?: string | undefined;
}

/** `3`, or `3.1` for the first outside edit on top of version 3. */
export const versionLabel = (entry: Pick<RuleVersion, 'version' | 'edit'>): string =>
  entry.edit === 0 ? String(entry.version) : `${entry.version}.${entry.edit}`;

/** Parses `3` or `3.1`; undefined when it is neither. */
export function parseVersionLabel(label: string): { version: number; edit: number } | undefined {
  const match = /^(\d{1,9})(?:\.(\d{1,4}))?$/.exec(label.trim());
  if (!match) return undefined;
  return { version: Number(match[1]), edit: Number(match[2] ?? 0) };
}

const auditNames = new Set(['updatedAt', 'updatedBy', 'version']);

/** The attributes a rule has when its item leaves them out, with their values (model.ts defaults). */
const RULE_DEFAULTS: Readonly<Record<string, unknown>> = (() => {
  const probe = { ruleId: 'r', audienceId: 'a', keywords: ['k'] };
  const parsed = parseRule(probe);
  if (!parsed.ok) return {};
  return Object.fromEntries(
    Object.entries(parsed.value).filter(
      ([key, value]) => !(key in probe) && value !== undefined && typeof value !== 'object',
    ),
  );
})();

/**
 * `value` with object keys sorted and sets as sorted lists, so equal items give equal JSON. With
 * `tagSets`, a set stays told apart from a list (`{"$set": […]}`): a list rewritten as a set is a
 * change to the stored item, though not to the rule's content.
 */
export function canonicalValue(value: unknown, tagSets = false): unknown {
  if (value instanceof Set) {
    const sorted = [...value].map(String).sort();
    return tagSets ? { $set: sorted } : sorted;
  }
  if (Array.isArray(value)) return value.map((element) => canonicalValue(element, tagSets));
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((key) => [key, canonicalValue((value as Record<string, unknown>)[key], tagSets)]),
    );
  }
  return value;
}

/** The item's content for comparison: audit attributes left out, sets as sorted lists, keys sorted. */
export function contentOf(item: Record<string, unknown> | undefined): string {
  if (item === undefined) return '';
  const content = Object.fromEntries(
    Object.keys(item)
      .filter((key) => !auditNames.has(key) && item[key] !== undefined)
      .sort()
      .map((key) => [key, canonicalValue(item[key])]),
  );
  return JSON.stringify(content);
}

/**
 * A fingerprint of a rule's content, which `rules export` writes into the file (`fingerprint`) and
 * `rules put --file` compares with the stored rule's: a file exported before the stored rule
 * changed (an edit in the DynamoDB console keeps `version`) is refused, one exported after is
 * written. Equal for equal content as the model reads it: audit attributes and the fingerprint
 * left out, key order ignored, a left-out attribute read as its default, and the list attributes
 * (categories, keywords, ...: sets to the model) compared as sets of trimmed strings, whether
 * stored as a list or as a string set.
 */
export function ruleFingerprint(item: Record<string, unknown>): string {
  const content: Record<string, unknown> = { ...RULE_DEFAULTS };
  for (const [key, value] of Object.entries(item)) {
    if (auditNames.has(key) || key === 'fingerprint' || value === undefined) continue;
    content[key] =
      value instanceof Set || Array.isArray(value)
        ? [...new Set([...value].map((term) => (typeof term === 'string' ? term.trim() : JSON.stringify(term))))].sort()
        : value;
  }
  return createHash('sha256')
    .update(JSON.stringify(canonicalValue(content)))
    .digest('base64url')
    .slice(0, 22);
}

/**
 * The entry to record when the stored rule is not the latest recorded version (edited outside the
 * CLI and the console), or undefined when history already has it. `latest` is the newest recorded
 * version (undefined: none recorded yet, e.g. a rule written before history existed).
 */
export function outsideEdit(
  ruleId: string,
  stored: Record<string, unknown> | undefined,
  latest: RuleVersion | undefined,
  now: number,
): RuleVersion | undefined {
  if (stored === undefined) return undefined;
  if (latest !== undefined && latest.action !== 'deleted' && contentOf(latest.item) === contentOf(stored)) {
    return undefined;
  }
  const version = typeof stored.version === 'number' && Number.isInteger(stored.version) ? stored.version : 0;
  const edit = latest !== undefined && latest.version === version ? latest.edit + 1 : latest === undefined ? 0 : 1;
  const updatedBy = typeof stored.updatedBy === 'string' && stored.updatedBy !== '' ? stored.updatedBy : undefined;
  const updatedAt = typeof stored.updatedAt === 'string' ? Date.parse(stored.updatedAt) : Number.NaN;
  return {
    ruleId,
    version,
    edit,
    // When it was noticed: also for a first entry, whose item may be older than the history's
    // retention (an entry dated by it would expire at once and be recorded again on every read);
    // the item's own save time is in the actor's words.
    at: now,
    actor:
      latest === undefined
        ? `${updatedBy ?? 'unknown'} (written before history was kept${
            Number.isFinite(updatedAt) ? `, last saved ${new Date(updatedAt).toISOString()}` : ''
          }; recorded when history first read it)`
        : `unknown (edited outside the CLI and console${updatedBy === undefined ? '' : `; updatedBy still says ${updatedBy}`})`,
    action: latest === undefined ? 'created' : 'outside-edit',
    item: stored,
  };
}

/** One changed attribute between two versions. */
export interface VersionChange {
  readonly field: string;
  readonly before: unknown;
  readonly after: unknown;
}

/** The attributes that differ between two versions (audit attributes left out). */
export function diffVersions(
  before: Record<string, unknown> | undefined,
  after: Record<string, unknown> | undefined,
): VersionChange[] {
  // An attribute left out reads as its default (enabled: true, urgent: false…), as the run reads
  // it: a version that only wrote a default out changed nothing, and `enabled` turned off reads
  // `true → false`, not `(none) → false`.
  // Between two versions only: a creation or a deletion lists what the item held.
  const defaults = before === undefined || after === undefined ? {} : RULE_DEFAULTS;
  const effective = (item: Record<string, unknown> | undefined) =>
    item === undefined ? {} : { ...defaults, ...(JSON.parse(contentOf(item)) as Record<string, unknown>) };
  const left = effective(before) as Record<string, unknown>;
  const right = effective(after) as Record<string, unknown>;
  const fields = [...new Set([...Object.keys(left), ...Object.keys(right)])].sort();
  return fields
    .filter((field) => JSON.stringify(left[field]) !== JSON.stringify(right[field]))
    .map((field) => ({ field, before: left[field], after: right[field] }));
}

/**
 * The edits made outside the CLI and the console (the DynamoDB console keeps `version`) that
 * writing `next` would undo: the attributes in which the stored item differs from what `recorded`
 * (the history entry of the version `next` was made from) holds, and in which `next` does not
 * carry the stored value. Empty when nothing was edited outside, or when `next` was made after the
 * edit (it carries the edited values, so writing it loses nothing). Each change reads recorded →
 * stored.
 */
export function outsideEditsUndone(
  recorded: Record<string, unknown>,
  stored: Record<string, unknown>,
  next: Record<string, unknown>,
): VersionChange[] {
  // A string set read back from a file is a list, in any order: the same values are no change.
  const nextAsStored = Object.fromEntries(
    Object.entries(next).map(([field, value]) => [
      field,
      stored[field] instanceof Set && Array.isArray(value) ? new Set(value) : value,
    ]),
  );
  const kept = new Set(diffVersions(stored, nextAsStored).map((change) => change.field));
  return diffVersions(recorded, stored).filter((change) => kept.has(change.field));
}

/** Where rule history is kept (the state table in production: functions/aws/dynamo-rule-history.ts). */
export interface RuleHistoryStore {
  /** The rule's versions, newest first, at most `limit`. */
  list(ruleId: string, limit?: number): Promise<RuleVersion[]>;
  /** Records versions (outside edits found on reading); trims each rule to its limit. */
  record(entries: readonly RuleVersion[]): Promise<void>;
}
