/**
 * Reading and writing the ops-edited items (rules and audiences) the way the CLI promises: every
 * write records who and when (`updatedBy`, `updatedAt`), increments `version` under an
 * optimistic-lock condition, and hands back the previous item so the command can show what
 * changed. A batch of writes that fits one DynamoDB transaction (100 audiences, or 50 rules:
 * each also records its version) lands whole or not at all, even when someone else edits one of
 * its items at the same moment; a larger one is written in several, in order, and a failure names
 * the items the earlier ones wrote.
 */

import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import {
  ConditionalCheckFailedException,
  GetItemCommand,
  TransactionCanceledException,
} from '@aws-sdk/client-dynamodb';
import {
  type DynamoDBDocumentClient,
  TransactWriteCommand,
  type TransactWriteCommandInput,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import type { DynamoRuleHistory } from '#aws/dynamo-rule-history';
import { historyPut } from '#aws/dynamo-rule-history';
import { readItem, scanItems, typeTagOf } from '#aws/dynamo-rule-source';
import { ITEM_LIMITS, measureItem } from '#aws/table-layout';
import { audienceAttributes, ruleAttributes } from '#core/model';
import { outsideEdit, type RuleVersion } from '#core/workbench/rule-history';
import { CliError, ConcurrentChangeError, type ExitCodeValue, failureOf, UsageError } from './errors.ts';

/** A raw item as stored (lists as arrays, string sets as Sets, numbers as numbers). */
export type Item = Record<string, unknown>;

/** Attributes the CLI manages itself; they are never compared or copied from input. */
export const auditAttributes = ['updatedAt', 'updatedBy', 'version'] as const;

/** One of the two ops-edited tables. */
export interface ItemTable {
  readonly tableName: string;
  /** `ruleId` or `audienceId`. */
  readonly keyName: string;
  /** `rule` or `audience`, for messages. */
  readonly noun: string;
  /**
   * Where each write's new version is recorded, in the same transaction (rules: the state table,
   * functions/aws/dynamo-rule-history.ts); absent: no history (audiences).
   */
  readonly history?: DynamoRuleHistory | undefined;
}

/** Why a write happens, for its history entry: a plain change, or a restore of an earlier version. */
export interface WriteIntent {
  /** The version label (`3`, `3.1`) a restore brings back. */
  readonly restoredFrom?: string | undefined;
}

/**
 * The history entries a write of `id` records, in its transaction: an outside edit first when the
 * stored item is not the latest recorded version (edited in the DynamoDB console), then the new
 * version itself.
 */
async function historyEntries(
  table: ItemTable,
  id: string,
  previous: Item | undefined,
  next: Item | undefined,
  action: 'created' | 'updated' | 'deleted',
  audit: Audit,
  intent: WriteIntent,
): Promise<RuleVersion[]> {
  if (table.history === undefined) return [];
  const [latest] = await table.history.list(id, 1);
  const entries: RuleVersion[] = [];
  const outside = outsideEdit(id, previous, latest, audit.now);
  if (outside !== undefined) entries.push(outside);
  const base = outside ?? latest;
  const version = versionOf(next) ?? versionOf(previous) ?? 0;
  // A delete keeps the version it deleted, one edit above what history holds of it.
  const edit = action === 'deleted' && base !== undefined && base.version === version ? base.edit + 1 : 0;
  entries.push({
    ruleId: id,
    version,
    edit,
    at: audit.now,
    actor: audit.actor,
    action: intent.restoredFrom !== undefined ? 'restored' : action,
    item: next,
    restoredFrom: intent.restoredFrom,
  });
  return entries;
}

/**
 * The version a write of `id` gives the item: one above the stored item's, and, for a table with
 * history, above every version its history holds too. A rule deleted at version 3 and created
 * again (`rules put`, `rules restore`, the console) is version 4, not 1: its history keeps one
 * entry per version, and a new version 1 would overwrite the first one.
 */
async function nextVersion(table: ItemTable, id: string, previous: Item | undefined): Promise<number> {
  const stored = versionOf(previous);
  // A stored version is at least its history's newest (outside edits keep it): no read needed.
  if (stored !== undefined || table.history === undefined) return (stored ?? 0) + 1;
  const [latest] = await table.history.list(id, 1);
  return (latest?.version ?? 0) + 1;
}

/** Who is writing, and when. */
export interface Audit {
  readonly actor: string;
  readonly now: number;
}

/**
 * Whether `id` can be a partition key value at all (non-empty, at most 2048 bytes). A lookup of
 * one that cannot is answered "none" instead of sending a request DynamoDB refuses with a
 * ValidationException; validation then says what is wrong with the id.
 */
export const isStorableKey = (id: string): boolean =>
  id.length > 0 && Buffer.byteLength(id, 'utf8') <= ITEM_LIMITS.partitionKeyBytes;

/** The item's attributes as DynamoDB stored them, on an item {@link getItem} read. */
const storedValues = Symbol('storedValues');

/** The stored item, read strongly consistent; undefined when there is none. */
export async function getItem(
  documents: DynamoDBDocumentClient,
  table: ItemTable,
  id: string,
): Promise<Item | undefined> {
  if (!isStorableKey(id)) return undefined;
  // The raw GetItem, decoded like the rule source does, so an attribute the document client
  // cannot convert (a huge number, a name such as `__proto__`) still shows up, and the schema
  // reports it, instead of failing the read.
  const { Item: raw } = await documents.send(
    new GetItemCommand({ TableName: table.tableName, Key: { [table.keyName]: { S: id } }, ConsistentRead: true }),
  );
  if (raw === undefined) return undefined;
  const item = readItem(raw);
  // Kept beside the decoded item, for the content guard of a write made from it (not enumerable:
  // no copy, diff or output of the item sees it).
  Object.defineProperty(item, storedValues, { value: raw, enumerable: false });
  return item;
}

/** What a guard knows of one stored attribute. */
type StoredState =
  | { readonly kind: 'absent' }
  | { readonly kind: 'null' }
  /** Stored, but not as a value that can be sent back exactly (one readItem could not read). */
  | { readonly kind: 'typed'; readonly tag: string | undefined }
  | { readonly kind: 'value'; readonly value: unknown };

/**
 * What was stored in `name` when `previous` was read: exactly what DynamoDB stored when `previous`
 * came from {@link getItem} (a number as its stored text: decoded, `5.00000000000000000001` reads
 * as 5 and `1.5e30` cannot be sent back at all, so a guard on the decoded value would refuse every
 * write; an attribute readItem could not read, such as a map with a `constructor` key typed in the
 * console, is there although the decoded item lacks it), else what the decoded item says.
 */
function storedState(previous: Item, name: string): StoredState {
  const stored = (previous as { [storedValues]?: Record<string, AttributeValue> })[storedValues];
  if (stored === undefined) {
    const value = previous[name];
    return value === undefined ? { kind: 'absent' } : value === null ? { kind: 'null' } : { kind: 'value', value };
  }
  const raw = stored[name];
  if (raw === undefined) return { kind: 'absent' };
  const tag = typeTagOf(raw);
  if (tag === 'NULL') return { kind: 'null' };
  if (previous[name] === undefined) return { kind: 'typed', tag };
  try {
    return { kind: 'value', value: unmarshall({ value: raw }, { wrapNumbers: true }).value };
  } catch {
    return { kind: 'typed', tag };
  }
}

/** KB with one decimal, as DynamoDB's limits are stated (1 KB = 1024 bytes). */
const kilobytes = (bytes: number): string => `${(bytes / 1024).toFixed(1)} KB`;

/**
 * What stops DynamoDB from storing `item` (the whole item as it will be written, audit
 * attributes included), or undefined: an empty or too long key, or more than 400 KB as DynamoDB
 * measures items (UTF-8 bytes of names and values).
 */
export function itemLimitProblem(table: ItemTable, item: Readonly<Record<string, unknown>>): string | undefined {
  const key = item[table.keyName];
  if (typeof key !== 'string' || !isStorableKey(key)) {
    return `${table.keyName}: must be a non-empty string of at most ${ITEM_LIMITS.partitionKeyBytes} bytes (DynamoDB's key limit)`;
  }
  const { bytes, attributes } = measureItem(item);
  if (bytes <= ITEM_LIMITS.itemBytes) return undefined;
  const largest = attributes
    .slice(0, 3)
    .map((attribute) => `${attribute.name} ${kilobytes(attribute.bytes)}`)
    .join(', ');
  return `the ${table.noun} is ${kilobytes(bytes)} (${bytes} bytes) as DynamoDB measures items, over its limit of ${kilobytes(ITEM_LIMITS.itemBytes)} (${ITEM_LIMITS.itemBytes} bytes); largest attributes: ${largest}. Shorten them or split the ${table.noun} in two`;
}

/** Every item of the table, like the alert run reads it. */
export const listItems = (documents: DynamoDBDocumentClient, table: ItemTable): Promise<Item[]> =>
  scanItems(documents, table.tableName);

/** The `version` of a stored item, if it has a valid one. */
export function versionOf(item: Item | undefined): number | undefined {
  const version = item?.version;
  return typeof version === 'number' && Number.isInteger(version) && version >= 0 ? version : undefined;
}

/** A planned write of one item. */
export interface PlannedPut {
  readonly id: string;
  /** The new content, without audit attributes. */
  readonly item: Item;
  /** The stored item the write replaces (undefined: a new item). */
  readonly previous: Item | undefined;
}

/** A planned deletion of one stored item. */
export interface PlannedDelete {
  readonly id: string;
  readonly previous: Item;
}

/** What a write did to one item. */
export interface WriteResult {
  readonly id: string;
  readonly action: 'created' | 'updated' | 'deleted';
  readonly version: number | undefined;
  readonly previousVersion: number | undefined;
  readonly item: Item | undefined;
  readonly previous: Item | undefined;
}

/** DynamoDB's limit of items in one transaction. */
const transactionLimit = 100;

/**
 * DynamoDB's limit of a transaction's items, 4 MB, less a margin for what the request adds (table
 * names, expressions), which {@link requestBytes} leaves out.
 */
const transactionMaxBytes = 4 * 1024 * 1024 - 64 * 1024;

/**
 * The bytes of the item a transaction entry puts (or the key it deletes), as DynamoDB measures
 * items, and of the values its condition compares (a content guard holds a whole item's worth).
 */
function requestBytes(request: {
  Put?: { Item?: Record<string, unknown>; ExpressionAttributeValues?: Record<string, unknown> };
  Delete?: { Key?: Record<string, unknown> };
}): number {
  const item = request.Put?.Item ?? request.Delete?.Key;
  const compared = request.Put?.ExpressionAttributeValues;
  return (
    (item === undefined ? 0 : measureItem(item).bytes) + (compared === undefined ? 0 : measureItem(compared).bytes)
  );
}

/** A condition expression with its names and values. */
interface Condition {
  readonly ConditionExpression: string;
  readonly ExpressionAttributeNames: Record<string, string>;
  readonly ExpressionAttributeValues?: Record<string, unknown>;
}

/** What a file may carry that is never stored: the fingerprint `rules export` writes. */
export const exportAttributes: readonly string[] = ['fingerprint'];

/**
 * The attributes of an item's content: those the table's items may have (rules: model.ts's rule
 * attributes; audiences: its audience attributes), without the key, the attributes the CLI manages
 * and what only a file carries (a rule's export fingerprint). An attribute no item has (a typo
 * saved by hand) is left out: guarding every name a stored item holds could make a condition
 * longer than DynamoDB's 4 KB.
 */
export function contentAttributesOf(table: Pick<ItemTable, 'keyName'>): readonly string[] {
  const names = table.keyName === 'ruleId' ? ruleAttributes : audienceAttributes;
  return names.filter(
    (name) =>
      name !== table.keyName &&
      !exportAttributes.includes(name) &&
      !(auditAttributes as readonly string[]).includes(name),
  );
}

/** The condition that the stored item is still the one that was read. */
function unchangedCondition(table: ItemTable, previous: Item | undefined): Condition {
  if (previous === undefined) {
    return { ConditionExpression: 'attribute_not_exists(#key)', ExpressionAttributeNames: { '#key': table.keyName } };
  }
  const version = versionOf(previous);
  if (version === undefined && previous.version !== undefined) {
    // A version written by hand that is not one ("3", -1): the write takes over from exactly that
    // value. Requiring no version at all, as below, could never hold, and every write was refused
    // as a concurrent change.
    return {
      ConditionExpression: '#version = :storedVersion',
      ExpressionAttributeNames: { '#version': 'version' },
      ExpressionAttributeValues: { ':storedVersion': storedVersion(previous) },
    };
  }
  if (version === undefined) {
    // Written outside the CLI (console): no version yet, so require that there still is none.
    return {
      ConditionExpression: 'attribute_exists(#key) AND attribute_not_exists(#version)',
      ExpressionAttributeNames: { '#key': table.keyName, '#version': 'version' },
    };
  }
  return {
    ConditionExpression: '#version = :expectedVersion',
    ExpressionAttributeNames: { '#version': 'version' },
    ExpressionAttributeValues: { ':expectedVersion': storedVersion(previous) },
  };
}

/**
 * The stored `version`, exactly as stored: a version saved by hand as `2.00000000000000000001`
 * reads as 2, and compared as 2 it would refuse every write as a concurrent change.
 */
function storedVersion(previous: Item): unknown {
  const state = storedState(previous, 'version');
  return state.kind === 'value' ? state.value : previous.version;
}

/**
 * `condition` and that each of `names` still holds its value in `previous` (or is still absent).
 * DynamoDB compares lists, maps and sets as whole values.
 */
function withContentGuard(condition: Condition, previous: Item | undefined, names: readonly string[]): Condition {
  if (previous === undefined || names.length === 0) return condition;
  const parts = [condition.ConditionExpression];
  const attributeNames = { ...condition.ExpressionAttributeNames };
  const values = { ...condition.ExpressionAttributeValues };
  for (const [index, name] of names.entries()) {
    attributeNames[`#guard${index}`] = name;
    const state = storedState(previous, name);
    if (state.kind === 'absent') {
      parts.push(`attribute_not_exists(#guard${index})`);
    } else if (state.kind === 'null' || (state.kind === 'typed' && state.tag !== undefined)) {
      // A NULL saved by hand (DynamoDB's = is not defined on NULL), or a value that cannot be sent
      // back as it is stored: compared by its type. The write replaces it either way.
      values[`:guard${index}`] = state.kind === 'null' ? 'NULL' : state.tag;
      parts.push(`attribute_type(#guard${index}, :guard${index})`);
    } else if (state.kind === 'typed') {
      parts.push(`attribute_exists(#guard${index})`);
    } else {
      values[`:guard${index}`] = state.value;
      parts.push(`#guard${index} = :guard${index}`);
    }
  }
  return {
    ConditionExpression: parts.map((part) => `(${part})`).join(' AND '),
    ExpressionAttributeNames: attributeNames,
    ...(Object.keys(values).length > 0 ? { ExpressionAttributeValues: values } : {}),
  };
}

/**
 * Refuses a list of ids that names one more than once, before anything is read or written: a
 * command that acted on each id in turn would act on the repeated one twice (the second time
 * against the version the first wrote, a conflict), and one that checks them together would blame
 * the item for what is a slip in the arguments.
 * @param outcome what the refusal means for the store, e.g. `nothing was changed`
 * @throws UsageError naming every repeated id and saying to give each once
 */
export function refuseRepeatedIds(noun: string, ids: readonly string[], outcome: string): void {
  const seen = new Set<string>();
  const repeated = new Set<string>();
  for (const id of ids) {
    if (seen.has(id)) repeated.add(id);
    seen.add(id);
  }
  if (repeated.size === 0) return;
  const names = [...repeated].join(', ');
  throw new UsageError(
    `${noun} ${names} ${repeated.size === 1 ? 'is' : 'are'} given more than once; give each ${noun} once (${[...seen].join(' ')}); ${outcome}`,
  );
}

/**
 * Writes all puts and deletes, each conditioned on the stored item being the one that was read,
 * in as few transactions as DynamoDB's 100 entries per transaction allow (items with history take
 * two or three entries each), in order. Each transaction lands whole or not at all; a failure
 * stops the later ones and says which items the earlier ones wrote. Returns one result per item.
 * @throws ConcurrentChangeError when any item changed since it was read (nothing of that batch is written)
 */
export async function writeItems(
  documents: DynamoDBDocumentClient,
  table: ItemTable,
  changes: { readonly puts?: readonly PlannedPut[]; readonly deletes?: readonly PlannedDelete[] },
  audit: Audit,
  intent: WriteIntent = {},
): Promise<WriteResult[]> {
  type Request = NonNullable<TransactWriteCommandInput['TransactItems']>[number];
  type Step = { readonly request: Request; history?: Request[] } & WriteResult;
  const steps: Step[] = [];
  for (const put of changes.puts ?? []) {
    const previousVersion = versionOf(put.previous);
    const version = await nextVersion(table, put.id, put.previous);
    const item: Item = {
      ...withoutAudit(put.item),
      [table.keyName]: put.id,
      updatedAt: new Date(audit.now).toISOString(),
      updatedBy: audit.actor,
      version,
    };
    steps.push({
      id: put.id,
      action: put.previous === undefined ? 'created' : 'updated',
      version,
      previousVersion,
      item,
      previous: put.previous,
      request: {
        Put: {
          TableName: table.tableName,
          Item: item,
          // Besides the version, every content attribute must still hold what was read: an edit
          // in the DynamoDB console keeps `version`, and a write made from a read must not undo an
          // edit it never saw.
          ...withContentGuard(unchangedCondition(table, put.previous), put.previous, contentAttributesOf(table)),
        },
      },
    });
  }
  for (const deletion of changes.deletes ?? []) {
    steps.push({
      id: deletion.id,
      action: 'deleted',
      version: undefined,
      previousVersion: versionOf(deletion.previous),
      item: undefined,
      previous: deletion.previous,
      request: {
        Delete: {
          TableName: table.tableName,
          Key: { [table.keyName]: deletion.id },
          ...unchangedCondition(table, deletion.previous),
        },
      },
    });
  }
  // DynamoDB would refuse these with a bare ValidationException (and cancel the whole batch).
  const tooBig = steps.flatMap((step) => {
    const problem =
      step.action === 'deleted' || step.item === undefined ? undefined : itemLimitProblem(table, step.item);
    return problem === undefined ? [] : [`${table.noun} "${step.id}": ${problem}`];
  });
  if (tooBig.length > 0) {
    throw new UsageError(
      `${tooBig.length} ${table.noun}(s) would break DynamoDB's item limits; nothing was written`,
      tooBig,
    );
  }
  refuseRepeatedIds(
    table.noun,
    steps.map((step) => step.id),
    'nothing was written',
  );
  const { history } = table;
  if (history !== undefined) {
    for (const step of steps) {
      const entries = await historyEntries(table, step.id, step.previous, step.item, step.action, audit, intent);
      step.history = entries.map((entry) => historyPut(history.tableName, entry));
    }
  }
  // Each item takes one transaction entry, and with history one more for its version and another
  // for an outside edit: as many items go into each transaction as its 100 entries and 4 MB hold
  // (50 rules with history, usually), in order. Only what one transaction holds lands whole.
  const batches: Step[][] = [];
  let entries = transactionLimit;
  let bytes = 0;
  for (const step of steps) {
    const size = 1 + (step.history?.length ?? 0);
    const stepBytes = [step.request, ...(step.history ?? [])].reduce((sum, request) => sum + requestBytes(request), 0);
    if (entries + size > transactionLimit || bytes + stepBytes > transactionMaxBytes) {
      batches.push([]);
      entries = 0;
      bytes = 0;
    }
    batches.at(-1)?.push(step);
    entries += size;
    bytes += stepBytes;
  }
  let start = 0;
  const writtenBefore = (count: number) =>
    count === 0
      ? ''
      : ` (the first ${count} were written before, in earlier transactions: ${steps
          .slice(0, count)
          .map((step) => step.id)
          .join(', ')})`;
  for (const batch of batches) {
    try {
      await documents.send(
        new TransactWriteCommand({ TransactItems: batch.flatMap((step) => [step.request, ...(step.history ?? [])]) }),
      );
    } catch (error) {
      // What earlier transactions wrote is in the table: its history is trimmed as if it were all.
      if (history !== undefined) for (const step of steps.slice(0, start)) await trimAfterWrite(history, step.id);
      if (error instanceof TransactionCanceledException) {
        // Reasons come one per transaction entry: the item's own entry is the first of its step's.
        let entry = 0;
        const conflicted = batch.filter((step) => {
          const reason = error.CancellationReasons?.[entry]?.Code;
          entry += 1 + (step.history?.length ?? 0);
          return reason === 'ConditionalCheckFailed';
        });
        if (conflicted.length > 0) {
          throw new ConcurrentChangeError(
            `${table.noun} ${conflicted.map((step) => step.id).join(', ')} changed since it was read; nothing of this batch was written${writtenBefore(start)}. Run the command again to see the current version.`,
            { cause: error },
          );
        }
      }
      if (start === 0) throw error;
      // Whatever stopped it, ops must know that part of the change is in the table: the failure
      // as the CLI would report it (an AWS error in its own words), and what was written.
      const failure = failureOf(error);
      throw new CliError(
        `could not write ${table.noun}s ${batch[0]?.id} to ${steps.at(-1)?.id}: ${failure.message}${writtenBefore(start)}`,
        failure.exitCode as ExitCodeValue,
        { code: failure.code, cause: error },
      );
    }
    start += batch.length;
  }
  if (history !== undefined) for (const step of steps) await trimAfterWrite(history, step.id);
  return steps.map(({ request: _request, history: _history, ...result }) => result);
}

/**
 * Sets some attributes of one stored item (enable/disable), with the audit attributes and the
 * optimistic lock, leaving every other attribute as it is. Guarded by content like every write
 * made from a read ({@link writeItems}): the history entry records `previous` with these attributes
 * set as the new version, so an edit made in the DynamoDB console after the read (the version
 * kept) would otherwise be recorded as this command's.
 */
export async function updateAttributes(
  documents: DynamoDBDocumentClient,
  table: ItemTable,
  previous: Item,
  id: string,
  attributes: Record<string, unknown>,
  audit: Audit,
): Promise<WriteResult> {
  const previousVersion = versionOf(previous);
  const version = await nextVersion(table, id, previous);
  const values: Record<string, unknown> = {
    ':updatedAt': new Date(audit.now).toISOString(),
    ':updatedBy': audit.actor,
    ':version': version,
  };
  const names: Record<string, string> = { '#updatedAt': 'updatedAt', '#updatedBy': 'updatedBy', '#version': 'version' };
  const sets = ['#updatedAt = :updatedAt', '#updatedBy = :updatedBy', '#version = :version'];
  for (const [index, [name, value]] of Object.entries(attributes).entries()) {
    names[`#a${index}`] = name;
    values[`:a${index}`] = value;
    sets.push(`#a${index} = :a${index}`);
  }
  const condition = withContentGuard(unchangedCondition(table, previous), previous, contentAttributesOf(table));
  const item: Item = {
    ...previous,
    ...attributes,
    updatedAt: values[':updatedAt'],
    updatedBy: audit.actor,
    version,
  };
  const update = {
    TableName: table.tableName,
    Key: { [table.keyName]: id },
    UpdateExpression: `SET ${sets.join(', ')}`,
    ConditionExpression: condition.ConditionExpression,
    ExpressionAttributeNames: { ...names, ...condition.ExpressionAttributeNames },
    ExpressionAttributeValues: { ...values, ...condition.ExpressionAttributeValues },
  };
  const { history } = table;
  try {
    // No ReturnValues: the document client would convert the stored item and fail on an
    // attribute it cannot represent (the very item someone is disabling because it is broken).
    // The condition held, so the new item is the previous one with these attributes set.
    if (history === undefined) {
      await documents.send(new UpdateCommand(update));
    } else {
      const entries = await historyEntries(table, id, previous, item, 'updated', audit, {});
      await documents.send(
        new TransactWriteCommand({
          TransactItems: [{ Update: update }, ...entries.map((entry) => historyPut(history.tableName, entry))],
        }),
      );
      await trimAfterWrite(history, id);
    }
    return { id, action: 'updated', version, previousVersion, item, previous };
  } catch (error) {
    if (
      error instanceof ConditionalCheckFailedException ||
      (error instanceof TransactionCanceledException &&
        error.CancellationReasons?.[0]?.Code === 'ConditionalCheckFailed')
    ) {
      throw new ConcurrentChangeError(
        `${table.noun} ${id} changed since it was read; nothing was written. Run the command again.`,
        { cause: error },
      );
    }
    throw error;
  }
}

/** The item without the attributes the CLI manages. */
export function withoutAudit(item: Item): Item {
  const copy: Item = { ...item };
  for (const name of auditAttributes) delete copy[name];
  return copy;
}

/** What a model parser (parseRule, parseAudience) gives: the item as the run reads it, or why the run skips it. */
type ParsedItem =
  | { readonly ok: true; readonly value: object }
  | { readonly ok: false; readonly rejected: { readonly reason: string } };

/** What writing an item over the stored one changes, as the run reads both. */
export interface StoredChanges {
  readonly changes: FieldChange[];
  /**
   * Why the run skips the stored item, when it does: writing repairs it, so the write is never
   * "unchanged", even when no attribute of its content changes (a `version` written by hand as
   * text is repaired by any update).
   */
  readonly repairs?: string;
}

/**
 * What writing `next` changes in the stored item, for a fair "did anything change?": a valid stored
 * item is compared as the run reads it (parsed, defaults applied). An invalid one, which the run
 * skips, is compared attribute by attribute as the run would read it once valid: each attribute
 * parsed alone in `minimal` (a smallest valid item), kept as stored when it cannot be, and the
 * schema's defaults where it leaves an attribute out. So a repair lists what it changes, not
 * `enabled: (none) → true` for every default, nor a string set written back as a list.
 */
export function changesFromStored(
  previous: Item | undefined,
  next: Item,
  parse: (item: unknown) => ParsedItem,
  minimal: Item,
): StoredChanges {
  if (previous === undefined) return { changes: diffItems(undefined, next) };
  const parsed = parse(previous);
  if (parsed.ok) return { changes: diffItems({ ...parsed.value }, next) };
  return { changes: diffItems(invalidAsRead(previous, parse, minimal), next), repairs: parsed.rejected.reason };
}

function invalidAsRead(previous: Item, parse: (item: unknown) => ParsedItem, minimal: Item): Item {
  const defaults = parse(minimal);
  if (!defaults.ok)
    throw new Error(`the smallest valid item given for its defaults is invalid: ${defaults.rejected.reason}`);
  const read: Item = {};
  for (const [name, value] of Object.entries(defaults.value)) {
    if (!Object.hasOwn(minimal, name)) read[name] = value;
  }
  for (const [name, value] of Object.entries(previous)) {
    const alone = parse({ ...minimal, [name]: value });
    read[name] = alone.ok && Object.hasOwn(alone.value, name) ? (alone.value as Item)[name] : value;
  }
  return read;
}

/** The line a write that repairs an item the run skipped prints under its changes. */
export const describeRepair = (kind: 'rule' | 'audience', reason?: string): string =>
  `repairs the stored ${kind}, which the run skips${reason === undefined ? '' : `: ${reason}`}`;

/** A value for comparison and display: Sets become sorted arrays. */
const comparable = (value: unknown): unknown => (value instanceof Set ? [...value].map(String).sort() : value);

/** One changed attribute. */
export interface FieldChange {
  readonly field: string;
  readonly before: unknown;
  readonly after: unknown;
}

/** The attributes that differ between two items, audit attributes left out. */
export function diffItems(before: Item | undefined, after: Item | undefined): FieldChange[] {
  const left = before ? withoutAudit(before) : {};
  const right = after ? withoutAudit(after) : {};
  const fields = [...new Set([...Object.keys(left), ...Object.keys(right)])].sort();
  const changes: FieldChange[] = [];
  for (const field of fields) {
    const a = comparable(left[field]);
    const b = comparable(right[field]);
    if (JSON.stringify(a) !== JSON.stringify(b)) changes.push({ field, before: a, after: b });
  }
  return changes;
}

/** `categories: ["002*"] → ["002*","003"]` */
export const describeChange = (change: FieldChange): string =>
  `${change.field}: ${showValue(change.before)} → ${showValue(change.after)}`;

export const showValue = (value: unknown): string =>
  value === undefined ? '(none)' : JSON.stringify(comparable(value));

/** `version 3, 2026-11-21T08:00:00Z by alice` */
export function describeVersion(item: Item | undefined): string {
  if (item === undefined) return '(none)';
  const version = versionOf(item);
  const parts = [version === undefined ? 'no version (written outside the CLI)' : `version ${version}`];
  if (typeof item.updatedAt === 'string') parts.push(item.updatedAt);
  if (typeof item.updatedBy === 'string') parts.push(`by ${item.updatedBy}`);
  return parts.join(', ');
}

/**
 * Trims a rule's history after a write that committed. A trim that fails is left to the next
 * write's trim and to the versions' own expiry (TTL): the write succeeded, and reporting it failed
 * would have people write it again.
 */
async function trimAfterWrite(history: DynamoRuleHistory, id: string): Promise<void> {
  try {
    await history.trim(id);
  } catch {
    // Housekeeping only; see above.
  }
}
