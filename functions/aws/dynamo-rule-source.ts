/**
 * The DynamoDB adapter of {@link RuleSource}: reads the ops-edited rules and audiences tables and
 * validates every item with the model's schemas, so one item saved wrongly in the console is
 * skipped and reported while every other rule still runs.
 */
import { ScanCommand } from '@aws-sdk/client-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { ITEM_LIMITS } from '#aws/table-layout';
import { NewsAlertsError } from '#core/errors';
import {
  buildRuleSet,
  quoteAttributeName,
  type RuleSet,
  type UnreadableAttribute,
  unreadableAttributes,
} from '#core/model';
import type { Log, RuleSource } from '#core/ports';

/** A rules or audiences table could not be read at all (missing table, no permission...). */
export class RuleSourceError extends NewsAlertsError {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'RuleSourceError';
  }
}

/**
 * Names an item or a nested map may not carry as own properties: the members of
 * `Object.prototype`. Assigning `__proto__` would replace an object's prototype, and an own
 * `toString` or `valueOf` that is a string makes `String(item)` throw wherever the CLI prints a
 * value. No rule or audience attribute has such a name, so the attribute is reported instead.
 */
const RESERVED_NAMES: ReadonlySet<string> = new Set(Object.getOwnPropertyNames(Object.prototype));

/** The DynamoDB type tags, with what each must hold (for the message when it does not). */
const TYPE_TAGS = {
  S: 'a string',
  N: 'a number written as a string, such as "42"',
  B: 'binary data',
  SS: 'a list of strings',
  NS: 'a list of numbers written as strings',
  BS: 'a list of binary values',
  M: 'a map of attribute values',
  L: 'a list of attribute values',
  NULL: 'true',
  BOOL: 'true or false',
} as const;
export type TypeTag = keyof typeof TYPE_TAGS;
const isTypeTag = (tag: string): tag is TypeTag => Object.hasOwn(TYPE_TAGS, tag);

/** A DynamoDB number: what the service accepts in `N` (it never stores "", "NaN" or "Infinity"). */
const NUMBER = /^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/;

/**
 * Where a value sits in an item: the attribute name, then map keys and list positions. Kept as
 * links and printed only when something is wrong, so reading good items builds no strings.
 */
interface ValuePath {
  readonly parent: ValuePath | undefined;
  readonly key: string | number;
}

const PLAIN_NAME = /^[A-Za-z_$][\w$]*$/;

/** `keywords[3]`, `quietHours.start`, `"__proto__"`, `templates["odd name"]`. */
function formatPath(path: ValuePath): string {
  const { parent, key } = path;
  if (typeof key === 'number') return `${parent ? formatPath(parent) : ''}[${key}]`;
  if (parent === undefined) return PLAIN_NAME.test(key) ? key : quoteAttributeName(key);
  return PLAIN_NAME.test(key) ? `${formatPath(parent)}.${key}` : `${formatPath(parent)}[${quoteAttributeName(key)}]`;
}

/** The top-level attribute a path starts at. */
const attributeOf = (path: ValuePath): string =>
  path.parent === undefined ? String(path.key) : attributeOf(path.parent);

/** An attribute value that cannot be decoded, with the reason; thrown only inside {@link readItem}. */
class UnreadableValueError extends Error {
  readonly path: ValuePath;
  constructor(path: ValuePath, message: string) {
    super(message);
    this.name = 'UnreadableValueError';
    this.path = path;
  }
}

/** An own property of `value`; never one inherited through the prototype chain. */
function ownValue(value: object, name: string): unknown {
  return Object.hasOwn(value, name) ? (value as Record<string, unknown>)[name] : undefined;
}

/**
 * The entry `name` of an item or map, decoded, after its name was checked: every name of
 * `Object.prototype` is refused before anything is assigned (the only one with a setter is
 * `__proto__`), which makes plain assignment safe and keeps the objects in V8's fast mode.
 */
function decodeEntry(attributes: object, name: string, parent: ValuePath | undefined, depth: number): unknown {
  const path: ValuePath = { parent, key: name };
  if (RESERVED_NAMES.has(name)) {
    throw new UnreadableValueError(
      path,
      'a name no rule or audience attribute has (reserved in JavaScript); remove it',
    );
  }
  return decodeValue(ownValue(attributes, name), path, depth);
}

/** A DynamoDB map as a plain object. */
function decodeMap(attributes: object, parent: ValuePath, depth: number): Record<string, unknown> {
  const result: Record<string, unknown> = {};
  for (const name of Object.keys(attributes)) result[name] = decodeEntry(attributes, name, parent, depth);
  return result;
}

/** The keys of `value` that hold something (an AttributeValue has exactly one). */
function presentKeys(value: object): string[] {
  return Object.keys(value).filter((key) => (value as Record<string, unknown>)[key] !== undefined);
}

/** The one type tag of an AttributeValue, or undefined when it has none, several or an unknown one. */
export function typeTagOf(value: unknown): TypeTag | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  let tag: string | undefined;
  let count = 0;
  // Object.keys lists own properties only, so reading them never reaches the prototype.
  for (const key of Object.keys(value)) {
    if ((value as Record<string, unknown>)[key] !== undefined) {
      tag = key;
      count += 1;
    }
  }
  return count === 1 && tag !== undefined && isTypeTag(tag) ? tag : undefined;
}

function wrongContent(path: ValuePath, tag: TypeTag): never {
  throw new UnreadableValueError(path, `"${tag}" must hold ${TYPE_TAGS[tag]}`);
}

function decodeNumber(text: unknown, path: ValuePath, tag: TypeTag): number {
  if (typeof text !== 'string' || !NUMBER.test(text)) wrongContent(path, tag);
  // Every number becomes a JS number and the schema judges it (1.5e30 is no dailyBudget);
  // beyond 2^53 precision is lost, which no rule or audience attribute needs.
  return Number(text);
}

function decodeBinary(bytes: unknown, path: ValuePath, tag: TypeTag): Uint8Array | string {
  return bytes instanceof Uint8Array || typeof bytes === 'string' ? bytes : wrongContent(path, tag);
}

/** One DynamoDB AttributeValue as a plain JS value (the document client's conversions). */
function decodeValue(value: unknown, path: ValuePath, depth: number): unknown {
  // DynamoDB stores no deeper nesting, so deeper input is no stored item; the cap also keeps the
  // recursion shallow whatever a caller passes.
  if (depth > ITEM_LIMITS.nestingDepth) {
    throw new UnreadableValueError(path, `nested deeper than DynamoDB's ${ITEM_LIMITS.nestingDepth} levels`);
  }
  const tag = typeTagOf(value);
  if (tag === undefined) {
    const found = typeof value === 'object' && value !== null && !Array.isArray(value) ? presentKeys(value) : [];
    const shown = found.length > 0 ? `, found ${found.slice(0, 4).map(quoteAttributeName).join(', ')}` : '';
    throw new UnreadableValueError(
      path,
      `not a DynamoDB attribute value (exactly one of ${Object.keys(TYPE_TAGS).join(', ')} expected${shown})`,
    );
  }
  const content = ownValue(value as object, tag);
  switch (tag) {
    case 'S':
      return typeof content === 'string' ? content : wrongContent(path, tag);
    case 'N':
      return decodeNumber(content, path, tag);
    case 'B':
      return decodeBinary(content, path, tag);
    case 'BOOL':
      return typeof content === 'boolean' ? content : wrongContent(path, tag);
    case 'NULL':
      return content === true ? null : wrongContent(path, tag);
    case 'SS':
      return Array.isArray(content) && content.every((entry) => typeof entry === 'string')
        ? new Set<string>(content)
        : wrongContent(path, tag);
    case 'NS':
      return Array.isArray(content)
        ? new Set(content.map((entry) => decodeNumber(entry, path, tag)))
        : wrongContent(path, tag);
    case 'BS':
      return Array.isArray(content)
        ? new Set(content.map((entry) => decodeBinary(entry, path, tag)))
        : wrongContent(path, tag);
    case 'L':
      return Array.isArray(content)
        ? content.map((entry, index) => decodeValue(entry, { parent: path, key: index }, depth + 1))
        : wrongContent(path, tag);
    case 'M':
      return typeof content === 'object' && content !== null && !Array.isArray(content)
        ? decodeMap(content, path, depth + 1)
        : wrongContent(path, tag);
  }
}

/**
 * One raw item as the low-level client returns it, decoded attribute by attribute like the
 * document client would (lists as arrays, string sets as `Set`s, numbers as JS numbers, maps as
 * plain objects). Never throws: an attribute that cannot be decoded is left out and recorded
 * under {@link unreadableAttributes}, so validation skips this item with the reason while every
 * other item still loads. Objects refuse the names of `Object.prototype` before anything is
 * assigned, so no item can reach or shadow a prototype.
 */
export function readItem(raw: unknown): Record<string, unknown> {
  const item: Record<string, unknown> = {};
  const unreadable: UnreadableAttribute[] = [];
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    unreadable.push({ attribute: '', path: '(item)', reason: 'not a DynamoDB attribute map' });
  } else {
    for (const name of Object.keys(raw)) {
      // One attribute at a time, so every unreadable one is named, not just the first.
      try {
        item[name] = decodeEntry(raw, name, undefined, 1);
      } catch (error) {
        // Anything but UnreadableValueError would be a bug here; it still costs only this item.
        const path: ValuePath = error instanceof UnreadableValueError ? error.path : { parent: undefined, key: name };
        unreadable.push({
          attribute: attributeOf(path),
          path: formatPath(path),
          reason: error instanceof UnreadableValueError ? error.message : `could not be read (${String(error)})`,
        });
      }
    }
  }
  if (unreadable.length > 0) {
    Object.defineProperty(item, unreadableAttributes, { value: unreadable, enumerable: true });
  }
  return item;
}

/**
 * Every item of `tableName` (all pages, strongly consistent), each decoded by {@link readItem}.
 *
 * The raw Scan is decoded item by item instead of through the document client because the
 * document client fails the whole page on one value it cannot convert (a console typo such as
 * `1.5e30` in `dailyBudget`, an attribute named `__proto__`): here the bad item is rejected with
 * a reason and the others still load.
 */
export async function scanItems(
  documents: DynamoDBDocumentClient,
  tableName: string,
): Promise<Record<string, unknown>[]> {
  const items: Record<string, unknown>[] = [];
  let startKey: ScanCommand['input']['ExclusiveStartKey'];
  do {
    const output = await documents.send(
      // Ops edits made a second ago must show up in the next run or preview.
      new ScanCommand({ TableName: tableName, ConsistentRead: true, ExclusiveStartKey: startKey }),
    );
    for (const item of output.Items ?? []) items.push(readItem(item));
    startKey = output.LastEvaluatedKey;
  } while (startKey !== undefined);
  return items;
}

export interface DynamoRuleSourceOptions {
  readonly documents: DynamoDBDocumentClient;
  readonly rulesTableName: string;
  readonly audiencesTableName: string;
  /**
   * Receives one warning per rejected item: the function passes the shared Powertools logger, the
   * CLI its stderr log (so the CLI's rules group starts without loading Powertools).
   */
  readonly log: Log;
}

/** Loads and validates rules and audiences from their two DynamoDB tables. */
export class DynamoRuleSource implements RuleSource {
  readonly #documents: DynamoDBDocumentClient;
  readonly #tableNames: { readonly rules: string; readonly audiences: string };
  readonly #log: Log;

  constructor(options: DynamoRuleSourceOptions) {
    this.#documents = options.documents;
    this.#tableNames = { rules: options.rulesTableName, audiences: options.audiencesTableName };
    this.#log = options.log;
  }

  async load(): Promise<RuleSet> {
    const [ruleItems, audienceItems] = await Promise.all([this.#scan('rules'), this.#scan('audiences')]);
    const ruleSet = buildRuleSet(ruleItems, audienceItems);
    for (const rejected of ruleSet.rejected) {
      this.#log.warn('skipped an invalid item', {
        table: rejected.table,
        tableName: this.#tableNames[rejected.table],
        key: rejected.key,
        reason: rejected.reason,
      });
    }
    return ruleSet;
  }

  async #scan(table: 'rules' | 'audiences'): Promise<Record<string, unknown>[]> {
    const tableName = this.#tableNames[table];
    try {
      return await scanItems(this.#documents, tableName);
    } catch (error) {
      throw new RuleSourceError(`could not read the ${table} table "${tableName}"`, { cause: error });
    }
  }
}
