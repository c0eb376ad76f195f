/**
 * The core's {@link Log} port for a CLI process: warnings and errors (a skipped rule, SNS retries,
 * a malformed article) go to stderr as one readable line each, so they never disturb stdout or
 * `--json`: `warning: skipped an invalid item (table rules, key typo-rule): unknown attribute
 * "keyword" (did you mean "keywords"?)`. The structured details the Lambda logs as JSON are
 * written here as words: the fields in brackets, the reason after a colon.
 * The core never logs the API key or webhook URLs, so nothing here needs to mask them.
 */
import type { Log } from '#core/ports';
import type { Output } from './output.ts';

/** Fields that say why, written after the message instead of in brackets. */
const reasonFields = ['reason', 'error', 'cause', 'message'] as const;

/** Nested values deeper than this print as `…`. */
const maxDepth = 3;

/** `tableName` → `table name`, `maxAttempts` → `max attempts`. */
const words = (name: string): string =>
  name
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/[_-]+/g, ' ')
    .toLowerCase()
    .trim();

/** Text on one line: line breaks (multi-line validation reports) become `; `. */
const oneLine = (text: string): string =>
  text
    .split(/[\r\n\u2028\u2029]/)
    .map((line) => line.trim())
    .filter((line) => line !== '')
    .join('; ');

/** A value as words: errors by their message, lists comma-joined, objects as `name value` pairs. */
function valueText(value: unknown, depth = 0): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'string') return oneLine(value);
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return String(value);
  if (value instanceof Error) return oneLine(value.message || value.name);
  if (typeof value !== 'object') return undefined;
  if (depth >= maxDepth) return '…';
  if (value instanceof Set || Array.isArray(value)) {
    const items = [...value].map((item) => valueText(item, depth + 1)).filter((item) => item !== undefined);
    return items.length === 0 ? undefined : items.join(', ');
  }
  const pairs = fieldsText(value as Record<string, unknown>, depth + 1);
  return pairs === '' ? undefined : `(${pairs})`;
}

/** `name value` pairs of the fields that have a value, comma-separated. */
function fieldsText(fields: Readonly<Record<string, unknown>>, depth = 0): string {
  return Object.entries(fields)
    .map(([name, value]) => {
      const text = valueText(value, depth);
      return text === undefined || text === '' ? undefined : `${words(name)} ${text}`;
    })
    .filter((pair) => pair !== undefined)
    .join(', ');
}

/**
 * One log entry as one line for people: the message, its details in brackets, then the reason.
 * `skipped an invalid item` with `{ table: 'rules', key: 'x', reason: 'why' }` reads
 * `skipped an invalid item (table rules, key x): why`.
 */
export function logLine(message: string, extra: readonly Record<string, unknown>[]): string {
  const merged: Record<string, unknown> = Object.assign({}, ...extra);
  const reasons = reasonFields
    .map((field) => valueText(merged[field]))
    .filter((reason): reason is string => reason !== undefined && reason !== '');
  for (const field of reasonFields) delete merged[field];
  const details = fieldsText(merged);
  return `${oneLine(message)}${details === '' ? '' : ` (${details})`}${reasons.length === 0 ? '' : `: ${reasons.join('; ')}`}`;
}

/** A Log that prints warnings and errors on stderr and drops the rest. */
export function stderrLog(output: Output): Log {
  return {
    debug() {},
    info() {},
    warn(message, ...extra) {
      output.warn(logLine(message, extra));
    },
    error(message, ...extra) {
      output.note(`error: ${logLine(message, extra)}`);
    },
  };
}
