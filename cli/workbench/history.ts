/**
 * Rule history and restore for the CLI and the console: the versions recorded in the state table
 * (functions/aws/dynamo-rule-history.ts), each with what it changed against the version before,
 * after recording an edit made outside them (the DynamoDB console) that the stored rule shows.
 * A restore is an ordinary write of the old content (validated with the run's schema, under the
 * optimistic lock, recorded as `restored`), so it can itself be undone.
 */
import { parseRule } from '#core/model';
import {
  diffVersions,
  outsideEdit,
  parseVersionLabel,
  type RuleVersion,
  type VersionChange,
  versionLabel,
} from '#core/workbench/rule-history';
import { newControlCharacterProblems } from '../control-characters.ts';
import { NotFoundError, UsageError } from '../errors.ts';
import { newsAlerts } from '../hints.ts';
import { type Audit, getItem, type Item, type WriteResult, withoutAudit, writeItems } from '../items.ts';
import type { Target } from '../target.ts';
import { didYouMean, hinted } from '../unknown-ids.ts';
import { storedAudience } from './explain.ts';
import { ruleHistoryOf, ruleTableOf } from './tables.ts';

/** One version as shown: its label and what it changed against the version before it. */
export interface VersionView extends RuleVersion {
  readonly label: string;
  readonly changes: readonly VersionChange[];
}

/** A rule's history, newest first. */
export interface RuleHistoryView {
  readonly ruleId: string;
  /** The stored rule now (undefined: deleted). */
  readonly current: Item | undefined;
  readonly versions: readonly VersionView[];
  /** Set when this read found and recorded an edit made outside the CLI and the console. */
  readonly recordedOutsideEdit?: string | undefined;
  /**
   * The label of the first entry this read recorded for a rule history had nothing of (written
   * before history was kept, or by something else than the CLI and the console): the rule as found.
   */
  readonly recordedFirst?: string | undefined;
}

/** Reads the history of `ruleId`, recording first an outside edit the stored rule shows. */
export async function ruleHistory(target: Target, ruleId: string, now: number): Promise<RuleHistoryView> {
  const history = ruleHistoryOf(target);
  const [current, versions] = await Promise.all([
    getItem(target.clients.documents, ruleTableOf(target), ruleId),
    history.list(ruleId),
  ]);
  let recorded: string | undefined;
  let first: string | undefined;
  const outside = outsideEdit(ruleId, current, versions[0], now);
  if (outside !== undefined) {
    await history.record([outside]);
    // No history before it: the stored rule as found (written before history was kept, or by
    // something else than the CLI and the console), not an edit of a recorded version.
    if (versions.length === 0) first = versionLabel(outside);
    else recorded = versionLabel(outside);
    versions.unshift(outside);
  }
  if (current === undefined && versions.length === 0) {
    throw new NotFoundError(
      `rule ${ruleId} does not exist and has no history${hinted(await didYouMean(target, 'rule', [ruleId]), `${newsAlerts()} rules list`)}`,
    );
  }
  const views = versions.map(
    (version, index): VersionView => ({
      ...version,
      label: versionLabel(version),
      changes: diffVersions(versions[index + 1]?.item, version.item),
    }),
  );
  return { ruleId, current, versions: views, recordedOutsideEdit: recorded, recordedFirst: first };
}

/** What a restore would write: the version, and the changes against the stored rule. */
export interface RestorePlan {
  readonly ruleId: string;
  readonly label: string;
  readonly version: VersionView;
  readonly current: Item | undefined;
  readonly changes: readonly VersionChange[];
}

/** Plans restoring version `label` of `ruleId` (nothing is written). */
export async function planRestore(target: Target, ruleId: string, label: string, now: number): Promise<RestorePlan> {
  const wanted = parseVersionLabel(label);
  if (wanted === undefined) {
    throw new UsageError(
      `version "${label}" is not a version of a rule: give one as the history of rule ${ruleId} lists it ('${newsAlerts()} rules history ${ruleId}'), such as 3 or 3.1`,
    );
  }
  const view = await ruleHistory(target, ruleId, now);
  const version = view.versions.find(
    (candidate) => candidate.version === wanted.version && candidate.edit === wanted.edit,
  );
  if (version === undefined) {
    throw new NotFoundError(
      `rule ${ruleId} has no version ${label} in its history (kept: ${view.versions.map((entry) => entry.label).join(', ') || 'none'}); see '${newsAlerts()} rules history ${ruleId}'`,
    );
  }
  if (version.item === undefined) {
    throw new UsageError(`version ${label} of rule ${ruleId} is its deletion; restore the version before it`);
  }
  const parsed = parseRule(version.item);
  if (!parsed.ok) {
    throw new UsageError(
      `version ${label} of rule ${ruleId} does not pass today's validation (${parsed.rejected.reason}); nothing was written`,
    );
  }
  // What the CLI's edits refuse, unless the rule holds it now (cli/control-characters.ts).
  const acting = newControlCharacterProblems(withoutAudit(version.item), view.current);
  if (acting.length > 0) {
    throw new UsageError(
      `version ${label} of rule ${ruleId} cannot be restored: ${acting.map(({ message }) => message).join('; ')}; nothing was written`,
    );
  }
  const audience = await storedAudience(target, parsed.value.audienceId);
  if (typeof audience === 'string') {
    // `audience` says what is wrong with it: "audience x does not exist" or "... is invalid: ...".
    throw new UsageError(
      `version ${label} of rule ${ruleId} is for an audience that cannot take it (${audience}); nothing was written`,
    );
  }
  return {
    ruleId,
    // As the history lists it: `03` or ` 3` find version 3, and the record says 3.
    label: version.label,
    version,
    current: view.current,
    changes: diffVersions(view.current, version.item),
  };
}

/** Writes a planned restore (optimistic lock on the stored rule as planned). */
export async function applyRestore(target: Target, plan: RestorePlan, audit: Audit): Promise<WriteResult> {
  const item = withoutAudit(plan.version.item ?? {});
  const [result] = await writeItems(
    target.clients.documents,
    ruleTableOf(target),
    { puts: [{ id: plan.ruleId, item, previous: plan.current }] },
    audit,
    { restoredFrom: plan.label },
  );
  if (result === undefined) throw new Error('the restore wrote nothing');
  return result;
}
