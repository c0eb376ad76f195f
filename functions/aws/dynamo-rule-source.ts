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
import { logger } from '#shared/powertools';

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
type TypeTag = keyof typeof TYPE_TAGS;
const isTypeTag = (tag: string): tag is TypeTag => Object.hasOwn(TYPE_TAGS, tag);

/** A DynamoDB number: what the service accepts in `N` (it never stores "", "NaN" or "Infinity"). */
const NUMBER = /^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/;

/** An attribute value that cannot be decoded, with the reason; thrown only inside {@link readItem}. */
class UnreadableValueError extends Error {
  readonly path: string;
  constructor(path: string, message: string) {
    super(message);
    this.name = 'UnreadableValueError';
    this.path = path;
  }
}

/** A property of `value` read as data: never through a getter or the prototype chain. */
function ownValue(value: object, name: string): unknown {
  return Object.getOwnPropertyDescriptor(value, name)?.value;
}

const PLAIN_NAME = /^[A-Za-z_$][\w$]*$/;
/** `keywords`, `"__proto__"`: a top-level attribute as messages print it. */
const topLevelPath = (name: string): string => (PLAIN_NAME.test(name) ? name : quoteAttributeName(name));
/** `quietHours.start`, `templates["__proto__"]`. */
const childPath = (path: string, name: string): string =>
  PLAIN_NAME.test(name) ? `${path}.${name}` : `${path}[${quoteAttributeName(name)}]`;

/** Sets an own data property: defineProperty, not assignment, so no name reaches a setter. */
function defineAttribute(target: Record<string, unknown>, name: string, value: unknown): void {
  Object.defineProperty(target, name, { value, enumerable: true, writable: true, configurable: true });
}

/** The entry `name` of a DynamoDB map (or item), decoded; its name is checked first. */
function decodeAttribute(attributes: object, name: string, path: string, depth: number): unknown {
  if (RESERVED_NAMES.has(name)) {
    throw new UnreadableValueError(
      path,
      'a name no rule or audience attribute has (reserved in JavaScript); remove it',
    );
  }
  return decodeValue(ownValue(attributes, name), path, depth);
}

/** `attributes` (a DynamoDB map) as a plain object; throws UnreadableValueError for a bad entry. */
function decodeMap(attributes: object, path: string, depth: number): Record<string, unknown> {
  const result: Record<string, unknown> = {};
  for (const name of Object.keys(attributes)) {
    const at = childPath(path, name);
    defineAttribute(result, name, decodeAttribute(attributes, name, at, depth + 1));
  }
  return result;
}

/** One DynamoDB AttributeValue as a plain JS value (the document client's conversions). */
function decodeValue(value: unknown, path: string, depth: number): unknown {
  // DynamoDB stores no deeper nesting, so deeper input is no stored item; the cap also keeps the
  // recursion shallow whatever a caller passes.
  if (depth > ITEM_LIMITS.nestingDepth) {
    throw new UnreadableValueError(path, `nested deeper than DynamoDB's ${ITEM_LIMITS.nestingDepth} levels`);
  }
  const tags = typeof value === 'object' && value !== null && !Array.isArray(value) ? Object.keys(value) : [];
  const present = tags.filter((tag) => ownValue(value as object, tag) !== undefined);
  const tag = present[0];
  if (present.length !== 1 || tag === undefined || !isTypeTag(tag)) {
    throw new UnreadableValueError(
      path,
      `not a DynamoDB attribute value (exactly one of ${Object.keys(TYPE_TAGS).join(', ')} expected${present.length > 0 ? `, found ${present.slice(0, 4).map(quoteAttributeName).join(', ')}` : ''})`,
    );
  }
  const content = ownValue(value as object, tag);
  const wrong = (): never => {
    throw new UnreadableValueError(path, `"${tag}" must hold ${TYPE_TAGS[tag]}`);
  };
  const number = (text: unknown): number => {
    if (typeof text !== 'string' || !NUMBER.test(text)) wrong();
    // Every number becomes a JS number and the schema judges it (1.5e30 is no dailyBudget);
    // beyond 2^53 precision is lost, which no rule or audience attribute needs.
    return Number(text);
  };
  const binary = (bytes: unknown): Uint8Array | string =>
    bytes instanceof Uint8Array || typeof bytes === 'string' ? bytes : wrong();
  switch (tag) {
    case 'S':
      return typeof content === 'string' ? content : wrong();
    case 'N':
      return number(content);
    case 'B':
      return binary(content);
    case 'BOOL':
      return typeof content === 'boolean' ? content : wrong();
    case 'NULL':
      return content === true ? null : wrong();
    case 'SS':
      return Array.isArray(content) && content.every((entry) => typeof entry === 'string')
        ? new Set<string>(content)
        : wrong();
    case 'NS':
      return Array.isArray(content) ? new Set(content.map(number)) : wrong();
    case 'BS':
      return Array.isArray(content) ? new Set(content.map(binary)) : wrong();
    case 'L':
      return Array.isArray(content)
        ? content.map((entry, index) => decodeValue(entry, `${path}[${index}]`, depth + 1))
        : wrong();
    default:
      // 'M'
      return typeof content === 'object' && content !== null && !Array.isArray(content)
        ? decodeMap(content, path, depth)
        : wrong();
  }
}

/**
 * One raw item as the low-level client returns it, decoded attribute by attribute like the
 * document client would (lists as arrays, string sets as `Set`s, numbers as JS numbers, maps as
 * plain objects). Never throws: an attribute that cannot be decoded is left out and recorded
 * under {@link unreadableAttributes}, so validation skips this item with the reason while every
 * other item still loads. Objects are built with `defineProperty` and refuse the names of
 * `Object.prototype`, so no item can reach or shadow a prototype.
 */
export function readItem(raw: unknown): Record<string, unknown> {
  const item: Record<string, unknown> = {};
  const unreadable: UnreadableAttribute[] = [];
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    unreadable.push({ attribute: '', path: '(item)', reason: 'not a DynamoDB attribute map' });
  } else {
    for (const name of Object.keys(raw)) {
      try {
        defineAttribute(item, name, decodeAttribute(raw, name, topLevelPath(name), 1));
      } catch (error) {
        // Anything else would be a bug here; it still costs only this item, never the table.
        unreadable.push(
          error instanceof UnreadableValueError
            ? { attribute: name, path: error.path, reason: error.message }
            : { attribute: name, path: topLevelPath(name), reason: `could not be read (${String(error)})` },
        );
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
  /** Receives one warning per rejected item. Default: the shared Powertools logger. */
  readonly log?: Log;
}

/** Loads and validates rules and audiences from their two DynamoDB tables. */
export class DynamoRuleSource implements RuleSource {
  readonly #documents: DynamoDBDocumentClient;
  readonly #tableNames: { readonly rules: string; readonly audiences: string };
  readonly #log: Log;

  constructor(options: DynamoRuleSourceOptions) {
    this.#documents = options.documents;
    this.#tableNames = { rules: options.rulesTableName, audiences: options.audiencesTableName };
    this.#log = options.log ?? logger;
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
