/**
 * Rule and audience files (JSON or YAML): one item, a list of items, or `{ "rules": [...] }` /
 * `{ "audiences": [...] }`. Every item keeps a way back to its place in the file, so a problem is
 * reported as `rules.yaml:14: rule "x" keywords[0]: must not be empty` instead of "somewhere".
 *
 * The same shapes are written back (`rules export`, `audiences export`, what `delete` prints):
 * whatever this module writes, it reads again as the same items.
 */

import { statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { extname } from 'node:path';
import { Option } from 'commander';
import type { Document, Node } from 'yaml';
import { z } from 'zod';
import { describeIssueList } from '#core/model';
import { UsageError } from './errors.ts';
import { newsAlerts } from './hints.ts';
import { terminalText } from './output.ts';
import { inputName, readUtf8File } from './utf8.ts';

/**
 * The yaml library (about 30 ms to load) is required the first time a file is read or written, so
 * the commands that touch no file (`rules list`, `audiences show`…) start without it (bench: CLI
 * start-up, a local command); jsonc-parser only when a JSON file is broken. Synchronous on
 * purpose: every caller here is.
 */
const requireOnUse = createRequire(import.meta.url);
let yamlModule: typeof import('yaml') | undefined;
const yaml = (): typeof import('yaml') => {
  yamlModule ??= requireOnUse('yaml') as typeof import('yaml');
  return yamlModule;
};

/** One item read from a file. */
export interface FileItem {
  /** The item as plain data. */
  readonly value: unknown;
  /** `rules[2]`, or `(item)` when the file holds a single item. */
  readonly label: string;
  /** `file:line` of the item, or of the attribute at `path` inside it (the nearest that exists). */
  locate(path?: readonly PropertyKey[], unknownKey?: string): string;
}

/**
 * Whether `path` names a file here. A name the file system cannot hold (ENAMETOOLONG, a NUL byte)
 * or cannot look at is no file: the id's own check then says what is wrong with it.
 */
const isFile = (path: string): boolean => {
  try {
    return statSync(path, { throwIfNoEntry: false })?.isFile() === true;
  } catch {
    return false;
  }
};

/**
 * Refuses an id argument that is a file: `rules put rules.yaml` (put takes a file only with
 * `--file`, where `rules validate` takes it as an argument) would otherwise fail on the id's
 * pattern or on missing attributes, which does not say what to fix.
 */
export function refuseFileAsId(id: string | undefined, kind: 'rules' | 'audiences', verb: string): void {
  if (id === undefined) return;
  // A path, or a file here: a folder or a name with a dot is still an id (`rules put test`).
  const looksLikeFile = /[/\\]/.test(id) || isFile(id);
  if (!looksLikeFile) return;
  throw new UsageError(
    `${terminalText(JSON.stringify(id))} is a file, not an id: give it with --file (${newsAlerts()} ${kind} ${verb} --file ${terminalText(id)})`,
  );
}

/**
 * Reads a file of items.
 * @throws UsageError for an unreadable file, a syntax error (with line and column) or a wrong shape
 */
export function readItemFile(path: string, listKey: 'rules' | 'audiences'): FileItem[] {
  // `-` is stdin, so a rule printed by `rules show --json` can be piped straight back.
  const text = readUtf8File(path);
  const json = extname(path).toLowerCase() === '.json' || (path === '-' && /^\s*[[{]/.test(text));
  // How messages name it: `stdin:3: …` for `-`, `rules.yaml:3: …` for a file.
  const source = inputName(path);
  if (json) checkJsonSyntax(source, text);
  const { LineCounter, parseDocument } = yaml();
  const lineCounter = new LineCounter();
  const document = parseDocument(text, { lineCounter, prettyErrors: true, uniqueKeys: true });
  if (document.errors.length > 0) {
    const details = document.errors.map((error) => {
      const position = error.linePos?.[0];
      const where = position ? `${source}:${position.line}:${position.col}` : source;
      return `${where}: ${plainParseMessage((error.message.split('\n')[0] ?? '').replace(/ at line \d+, column \d+:?$/, ''))}`;
    });
    throw new UsageError(`${source} is not valid ${json ? 'JSON' : 'YAML'}; nothing was written`, details);
  }
  const lineOf = (node: Node | null | undefined): string =>
    node?.range ? `${source}:${lineCounter.linePos(node.range[0]).line}` : source;
  let root: unknown;
  try {
    // The yaml library's guard against alias bombs ("billion laughs"): a few aliases are fine,
    // an expansion that would build millions of nodes is refused.
    root = document.toJS({ maxAliasCount: MAX_ALIAS_COUNT }) as unknown;
  } catch (error) {
    throw new UsageError(`${source} cannot be read as ${json ? 'JSON' : 'YAML'}; nothing was written`, [
      aliasProblem(document, lineOf, error),
    ]);
  }

  const item = (value: unknown, basePath: readonly (string | number)[], label: string): FileItem => ({
    value,
    label,
    locate(fieldPath = [], unknownKey) {
      return lineOf(nearestNode(document, [...basePath, ...fieldPath.map(pathPart)], unknownKey));
    },
  });

  // A row of `list --json` (or `audiences show --json`) carries the stored item under `item`,
  // next to the verdict (`valid`, `problem`…): the item is what is read back, so what a list
  // printed can be validated or put again as it stands.
  const stored = (value: unknown, basePath: readonly (string | number)[], label: string): FileItem =>
    isListRow(value) ? item(value.item, [...basePath, 'item'], label) : item(value, basePath, label);

  if (Array.isArray(root)) return root.map((value, index) => stored(value, [index], `${listKey}[${index}]`));
  if (isRecord(root)) {
    const list = root[listKey];
    if (Array.isArray(list)) {
      return list.map((value, index) => stored(value, [listKey, index], `${listKey}[${index}]`));
    }
    if (list !== undefined) {
      throw new UsageError(
        `${lineOf(nearestNode(document, [listKey]))}: "${listKey}" must be a list; nothing was written`,
      );
    }
    return [stored(root, [], '(item)')];
  }
  throw new UsageError(
    `${source} must hold one ${listKey === 'rules' ? 'rule' : 'audience'} (an object), a list of them, or {"${listKey}": [...]}; nothing was written`,
  );
}

/**
 * How many times aliases (`*name`) may be expanded while a file is read. Rule files have no
 * need for many; the limit is the yaml library's own default, stated so it cannot change
 * silently.
 */
export const MAX_ALIAS_COUNT = 100;

/** One `file:line: …` line for a document that could not be turned into data. */
function aliasProblem(document: Document, lineOf: (node: Node | undefined) => string, error: unknown): string {
  const { visit } = yaml();
  let firstAlias: Node | undefined;
  visit(document, {
    Alias(_, node) {
      firstAlias = node;
      return visit.BREAK;
    },
  });
  if (firstAlias !== undefined && /alias/i.test((error as Error).message)) {
    return `${lineOf(firstAlias)}: aliases (*name) expand to too much data (more than ${MAX_ALIAS_COUNT} expansions, as in a "billion laughs" file); write the values out instead of repeating aliases`;
  }
  return `${lineOf(firstAlias ?? (document.contents as Node | null) ?? undefined)}: ${plainParseMessage((error as Error).message)}`;
}

/** A parser's message, except the engine's stack overflow, which says nothing to an ops person. */
const plainParseMessage = (message: string): string =>
  /maximum call stack/i.test(message)
    ? 'lists or maps are nested too deeply to read (hundreds of levels); a rule or audience needs at most three'
    : message;

/**
 * JSON.parse's verdict, turned into `file:line:col` (YAML would accept some things JSON does not).
 * V8 gives the position of some faults only (`Expected ',' or ']' … at position 3`), not of an
 * unexpected token (a trailing comma, `tru`): there the first fault jsonc-parser's scanner finds
 * says where, so a 40-rule file points at its line either way.
 */
function checkJsonSyntax(path: string, text: string): void {
  try {
    JSON.parse(text);
  } catch (error) {
    const message = (error as Error).message;
    const position = Number(/position (\d+)/.exec(message)?.[1] ?? firstFaultOffset(text));
    let where = path;
    if (Number.isInteger(position)) {
      const before = text.slice(0, position);
      const line = before.split('\n').length;
      const col = position - before.lastIndexOf('\n');
      where = `${path}:${line}:${col}`;
    }
    throw new UsageError(`${path} is not valid JSON; nothing was written`, [`${where}: ${plainParseMessage(message)}`]);
  }
}

/**
 * Where jsonc-parser, in strict JSON mode, finds the first fault of `text`; undefined if none.
 * Required here, on the error path only, like the yaml library: no command pays to load it.
 */
function firstFaultOffset(text: string): number | undefined {
  const { parse } = requireOnUse('jsonc-parser') as typeof import('jsonc-parser');
  const errors: import('jsonc-parser').ParseError[] = [];
  parse(text, errors, { disallowComments: true, allowTrailingComma: false, allowEmptyContent: false });
  return errors[0]?.offset;
}

/**
 * A row as `rules list --json`, `audiences list --json` and `audiences show --json` print it: the
 * stored item under `item` and the run's verdict in `valid`. No rule or audience has either
 * attribute, so a real item is never taken for a row.
 */
const isListRow = (value: unknown): value is { item: Record<string, unknown>; valid: boolean } =>
  isRecord(value) && typeof value.valid === 'boolean' && isRecord(value.item);

const pathPart = (part: PropertyKey): string | number => (typeof part === 'number' ? part : String(part));

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** The deepest node along `path` that exists; for an unknown attribute, its key. */
function nearestNode(document: Document, path: readonly (string | number)[], unknownKey?: string): Node | undefined {
  const { isMap, isPair, isScalar, isSeq } = yaml();
  let node: unknown = document.contents;
  let found = node as Node | undefined;
  for (const part of path) {
    if (isMap(node)) {
      const pair = node.items.find(
        (candidate) => isPair(candidate) && isScalar(candidate.key) && candidate.key.value === part,
      );
      if (!pair) break;
      node = pair.value;
    } else if (isSeq(node) && typeof part === 'number') {
      node = node.items[part];
    } else break;
    if (node === undefined || node === null) break;
    found = node as Node;
  }
  if (unknownKey !== undefined && isMap(found)) {
    const pair = found.items.find(
      (candidate) => isPair(candidate) && isScalar(candidate.key) && candidate.key.value === unknownKey,
    );
    if (pair && isScalar(pair.key)) return pair.key;
  }
  return found;
}

/**
 * One line per schema issue, each at its place in the file, with the run's own wording
 * (`describeIssueList`, the same text the alert run logs for a rejected item).
 */
export function locateIssues(
  item: FileItem,
  error: z.core.$ZodError,
  knownKeys: readonly string[],
  what: string,
  schema?: z.core.$ZodType,
): string[] {
  const lines: string[] = [];
  for (const issue of error.issues) {
    // One text per unknown attribute, each on its own key's line (every line named them all).
    const texts = describeIssueList(new z.core.$ZodError([issue]), knownKeys, schema);
    if (issue.code === 'unrecognized_keys') {
      for (const [index, key] of issue.keys.entries()) {
        lines.push(`${item.locate(issue.path, key)}: ${what}: ${texts[index] ?? ''}`);
      }
    } else {
      lines.push(`${item.locate(issue.path)}: ${what}: ${texts.join('; ')}${yamlNumberHint(item, issue)}`);
    }
  }
  return lines;
}

/** YAML reads `002001000` as a number; say how to keep a code a string. */
function yamlNumberHint(item: FileItem, issue: z.core.$ZodIssue): string {
  if (issue.code !== 'invalid_type' || issue.expected !== 'string') return '';
  let value: unknown = item.value;
  for (const part of issue.path) {
    if (typeof value !== 'object' || value === null) return '';
    value = (value as Record<PropertyKey, unknown>)[part];
  }
  return typeof value === 'number'
    ? ' (in YAML, quote codes such as "002001000": unquoted they are read as numbers)'
    : '';
}

// --- Writing item documents -------------------------------------------------------------------

/** The formats `export` writes (and `put --file` reads). */
export const documentFormats = ['yaml', 'json'] as const;
export type DocumentFormat = (typeof documentFormats)[number];

/** `--format yaml|json` of the export verbs. */
export const formatOption = (): Option =>
  new Option('--format <format>', 'document format').choices(documentFormats).default('yaml');

/**
 * `{ "<listKey>": [items] }` with each item's attributes in `order` (the schema's order, so the
 * key comes first) and DynamoDB string sets as lists: the document `put --file` reads back.
 */
export function itemsDocument(
  listKey: 'rules' | 'audiences',
  items: readonly Record<string, unknown>[],
  order: readonly string[],
): Record<string, Record<string, unknown>[]> {
  const rank = (name: string): number => {
    const index = order.indexOf(name);
    return index === -1 ? order.length : index;
  };
  return {
    [listKey]: items.map((item) =>
      Object.fromEntries(
        Object.entries(item)
          .sort(([a], [b]) => rank(a) - rank(b))
          .map(([name, value]) => [name, plainValue(value)]),
      ),
    ),
  };
}

/** Sets as lists, all the way down (an item written by hand may nest them in a map). */
function plainValue(value: unknown): unknown {
  if (value instanceof Set) return [...value].map(plainValue);
  if (Array.isArray(value)) return value.map(plainValue);
  if (isRecord(value)) return Object.fromEntries(Object.entries(value).map(([key, entry]) => [key, plainValue(entry)]));
  return value;
}

/**
 * `value` as YAML that is safe on a terminal and reads back as the same data. A string holding a
 * character a terminal may act on or that hides text (controls, bidi overrides…) is written
 * double-quoted with that character as a YAML escape (`\e`, `\u202E`), so printing the text
 * through the output module changes nothing and `put --file` reads the very same string.
 */
export function yamlText(value: unknown): string {
  const { Document: YamlDocument, Scalar, visit } = yaml();
  const document = new YamlDocument(value);
  const unsafe = (text: string): boolean => terminalText(text) !== text;
  visit(document, {
    Scalar(_, node) {
      if (typeof node.value === 'string' && unsafe(node.value)) node.type = Scalar.QUOTE_DOUBLE;
    },
  });
  const text = document.toString({ lineWidth: 0 });
  // What the yaml library leaves raw inside double quotes (it counts bidi controls as printable).
  return [...text]
    .map((char) => {
      if (!unsafe(char)) return char;
      const code = char.codePointAt(0) ?? 0;
      if (code <= 0xff) return `\\x${code.toString(16).padStart(2, '0')}`;
      if (code <= 0xffff) return `\\u${code.toString(16).padStart(4, '0')}`;
      return `\\U${code.toString(16).padStart(8, '0')}`;
    })
    .join('');
}
