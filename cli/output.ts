/**
 * Everything the CLI prints goes through here: tables and text for people on stdout, one JSON
 * document for scripts with `--json`, and notes, warnings and progress on stderr so they never
 * mix with what a script parses.
 */
import Table from 'cli-table3';

/** A value a table cell can show. */
export type Cell = string | number | boolean | null | undefined;

/** Where output goes (process streams by default; tests of pure helpers pass their own). */
export interface OutputStreams {
  readonly stdout: NodeJS.WritableStream;
  readonly stderr: NodeJS.WritableStream;
}

/** The CLI's printer for one command invocation. */
export class Output {
  /** True with `--json`: stdout carries exactly one JSON document. */
  readonly json: boolean;
  readonly #streams: OutputStreams;

  constructor(options: { json: boolean; streams?: OutputStreams }) {
    this.json = options.json;
    this.#streams = options.streams ?? { stdout: process.stdout, stderr: process.stderr };
  }

  /** The command's result: `value` as JSON with `--json`, otherwise whatever `human` prints. */
  result(value: unknown, human: () => void): void {
    if (this.json) this.#streams.stdout.write(`${JSON.stringify(value, jsonReplacer, 2)}\n`);
    else human();
  }

  /** A line of human output on stdout (suppressed with `--json`, where the result says it all). */
  line(text = ''): void {
    if (!this.json) this.#streams.stdout.write(`${text}\n`);
  }

  /** A table on stdout; an empty table prints `empty` instead. */
  table(head: readonly string[], rows: readonly (readonly Cell[])[], empty = '(none)'): void {
    if (this.json) return;
    if (rows.length === 0) {
      this.line(empty);
      return;
    }
    const cells = rows.map((row) => row.map(cellText));
    // Plain borders and no colours: the output is pasted into tickets and read in CI logs.
    const table = new Table({
      head: [...head],
      style: { head: [], border: [] },
      wordWrap: true,
      colWidths: fitColumns([head, ...cells], this.#width()),
    });
    for (const row of cells) table.push(row);
    this.#streams.stdout.write(`${table.toString()}\n`);
  }

  /** Field/value pairs as a two-column table. */
  fields(entries: readonly (readonly [string, Cell])[]): void {
    if (this.json) return;
    const cells = entries.map(([name, value]) => [name, cellText(value)]);
    const table = new Table({
      style: { head: [], border: [] },
      wordWrap: true,
      colWidths: fitColumns(cells, this.#width()),
    });
    for (const row of cells) table.push(row);
    this.#streams.stdout.write(`${table.toString()}\n`);
  }

  /** Columns available: the terminal's width, or a generous fixed width for files and pipes. */
  #width(): number {
    const stdout = this.#streams.stdout as NodeJS.WriteStream;
    return stdout.isTTY && stdout.columns ? stdout.columns : 160;
  }

  /** A note for the person at the terminal, on stderr (kept with `--json`: it does not disturb stdout). */
  note(text: string): void {
    this.#streams.stderr.write(`${text}\n`);
  }

  /** A warning on stderr. */
  warn(text: string): void {
    this.#streams.stderr.write(`warning: ${text}\n`);
  }
}

/** Display width of text: East Asian wide characters take two columns. */
function displayWidth(text: string): number {
  let width = 0;
  for (const char of text) {
    const code = char.codePointAt(0) ?? 0;
    width +=
      code >= 0x1100 &&
      /[\p{Script=Han}\p{Script=Hangul}\p{Script=Hiragana}\p{Script=Katakana}\uFF00-\uFFEF]/u.test(char)
        ? 2
        : 1;
  }
  return width;
}

/**
 * Column widths that fit `total` columns: each column as wide as its widest line, and while the
 * table is too wide, the widest column gives way (never below 10), so long reasons wrap instead
 * of pushing the table off screen.
 */
export function fitColumns(rows: readonly (readonly string[])[], total: number): number[] {
  const count = Math.max(0, ...rows.map((row) => row.length));
  // Content plus one space of padding on each side.
  const widths = Array.from({ length: count }, (_, column) =>
    Math.max(3, ...rows.map((row) => Math.max(0, ...(row[column] ?? '').split('\n').map(displayWidth)) + 2)),
  );
  const borders = count + 1;
  const minimum = 10;
  while (widths.reduce((sum, width) => sum + width, borders) > total) {
    const widest = widths.indexOf(Math.max(...widths));
    if ((widths[widest] ?? 0) <= minimum) break;
    widths[widest] = (widths[widest] ?? minimum) - 1;
  }
  return widths;
}

const cellText = (value: Cell): string => {
  if (value === null || value === undefined) return '';
  return String(value);
};

/** Sets become arrays in JSON output (DynamoDB string sets arrive as Sets). */
function jsonReplacer(_key: string, value: unknown): unknown {
  return value instanceof Set ? [...value] : value;
}

/** An epoch-ms instant for people: ISO 8601 in UTC, without milliseconds. */
export const formatInstant = (epochMs: number | undefined): string =>
  epochMs === undefined || !Number.isFinite(epochMs) ? '' : new Date(epochMs).toISOString().replace('.000Z', 'Z');

/** A duration for people: `3h 05m`, `42s`, `2d 4h`. */
export function formatDuration(ms: number): string {
  const sign = ms < 0 ? '-' : '';
  let seconds = Math.round(Math.abs(ms) / 1000);
  const days = Math.floor(seconds / 86_400);
  seconds -= days * 86_400;
  const hours = Math.floor(seconds / 3600);
  seconds -= hours * 3600;
  const minutes = Math.floor(seconds / 60);
  seconds -= minutes * 60;
  if (days > 0) return `${sign}${days}d ${hours}h`;
  if (hours > 0) return `${sign}${hours}h ${String(minutes).padStart(2, '0')}m`;
  if (minutes > 0) return `${sign}${minutes}m ${String(seconds).padStart(2, '0')}s`;
  return `${sign}${seconds}s`;
}

/**
 * A URL with everything that may be a credential hidden: only the scheme and host stay. Webhook
 * URLs (Slack, HTTPS subscribers) carry their secret in the path or query.
 */
export function maskUrl(raw: string): string {
  try {
    const url = new URL(raw);
    const hidden = url.pathname.length > 1 || url.search !== '' || url.username !== '' ? '/…' : '';
    return `${url.protocol}//${url.host}${hidden}`;
  } catch {
    return '(hidden)';
  }
}

/** A list for a table cell. */
export const listText = (values: readonly string[] | ReadonlySet<string> | undefined): string =>
  values === undefined ? '' : [...values].join(', ');
