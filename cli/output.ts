/**
 * Everything the CLI prints goes through here: tables and text for people on stdout, one JSON
 * document for scripts with `--json`, and notes, warnings and progress on stderr so they never
 * mix with what a script parses.
 *
 * Nothing that came from data reaches the terminal as a control sequence. Rule and audience
 * items, files, flags, provider text and the error messages that quote them are written by
 * anyone who can edit a table; printed raw, `ESC[2J` clears the screen, OSC sets the window
 * title or plants a hyperlink, and a right-to-left override makes text read backwards. So every
 * method here escapes control characters (C0, DEL, C1), invisible format characters (bidi
 * overrides and isolates, zero-width characters, BOM, tags), line and paragraph separators and
 * lone surrogates visibly (`\x1b`, `\u202e`): people see them, terminals never act on them.
 * Table cells escape tabs and newlines too (one value, one cell); lines and notes keep `\n`,
 * which the CLI's own multi-line texts use and which no terminal interprets as a sequence.
 * `--json` output is JSON.stringify's (which escapes C0 only) with DEL, C1, format characters
 * and U+2028/2029 escaped as `\uXXXX` too: the same JSON value, safe to print on a terminal.
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
    if (this.json) this.#streams.stdout.write(`${jsonText(value)}\n`);
    else human();
  }

  /** A line of human output on stdout (suppressed with `--json`, where the result says it all). */
  line(text = ''): void {
    if (!this.json) this.#streams.stdout.write(`${terminalText(text)}\n`);
  }

  /** A table on stdout; an empty table prints `empty` instead. */
  table(head: readonly string[], rows: readonly (readonly Cell[])[], empty = '(none)'): void {
    if (this.json) return;
    if (rows.length === 0) {
      this.line(empty);
      return;
    }
    const cells = rows.map((row) => row.map(cellText));
    const heads = head.map((text) => cellText(text));
    // Plain borders and no colours: the output is pasted into tickets and read in CI logs.
    const table = new Table({
      head: heads,
      style: { head: [], border: [] },
      wordWrap: true,
      colWidths: fitColumns([heads, ...cells], this.#width()),
    });
    for (const row of cells) table.push(row);
    this.#streams.stdout.write(`${table.toString()}\n`);
  }

  /** Field/value pairs as a two-column table. */
  fields(entries: readonly (readonly [string, Cell])[]): void {
    if (this.json) return;
    const cells = entries.map(([name, value]) => [cellText(name), cellText(value)]);
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
    this.#streams.stderr.write(`${terminalText(text)}\n`);
  }

  /** A warning on stderr. */
  warn(text: string): void {
    this.#streams.stderr.write(`warning: ${terminalText(text)}\n`);
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

/** A table cell: one value on one line, with every control and format character escaped. */
const cellText = (value: Cell): string => {
  if (value === null || value === undefined) return '';
  return safeText(String(value));
};

/**
 * Characters a terminal may act on or that hide or reorder text: controls (C0, DEL, C1), format
 * characters (bidi embeddings, overrides and isolates, LRM/RLM/ALM, zero-width space and joiners,
 * soft hyphen, BOM, tag characters…), line/paragraph separators, lone surrogates, and the
 * Hangul fillers that render as blank letters.
 */
const unsafeCharacters = /[\p{Cc}\p{Cf}\p{Cs}\p{Zl}\p{Zp}\u115f\u1160\u3164\uffa0]/gu;

const namedEscapes: Readonly<Record<string, string>> = { '\t': '\\t', '\n': '\\n', '\r': '\\r', '\u001b': '\\x1b' };

const hex = (code: number, digits: number): string => code.toString(16).padStart(digits, '0');

/** The visible escape of one unsafe character: `\t`, `\x1b`, `\x9b`, `\u202e`, `\u{e0041}`. */
function escapeCharacter(char: string): string {
  const named = namedEscapes[char];
  if (named !== undefined) return named;
  const code = char.codePointAt(0) ?? 0;
  if (code <= 0xff) return `\\x${hex(code, 2)}`;
  if (code <= 0xffff) return `\\u${hex(code, 4)}`;
  return `\\u{${hex(code, 5)}}`;
}

/**
 * Text from data made safe for a terminal: every control or invisible format character is
 * replaced by its visible escape, so it is seen and never interpreted. With `newlines`, `\n`
 * stays a line break (the CLI's own multi-line messages); everything else, `\r` and `\t`
 * included, is escaped.
 */
export function safeText(text: string, options: { readonly newlines?: boolean } = {}): string {
  return text.replace(unsafeCharacters, (char) => (char === '\n' && options.newlines ? char : escapeCharacter(char)));
}

/** A line or message for the terminal: {@link safeText} keeping line breaks. */
export const terminalText = (text: string): string => safeText(text, { newlines: true });

/**
 * Characters JSON.stringify leaves raw in strings that a terminal may still act on or that hide
 * text (it escapes only U+0000–U+001F, quotes and backslashes).
 */
const unsafeInJson = /[\u007f-\u009f\p{Cf}\p{Zl}\p{Zp}\u115f\u1160\u3164\uffa0]/gu;

/**
 * `value` as pretty JSON that is safe to print: JSON.stringify's text with DEL, C1, format
 * characters and U+2028/2029 also written as `\uXXXX` escapes (astral ones as surrogate pairs).
 * They can only occur inside strings, so the document parses to exactly the same value.
 */
export function jsonText(value: unknown): string {
  return (JSON.stringify(value, jsonReplacer, 2) ?? 'null').replace(unsafeInJson, (char) =>
    [...Array(char.length).keys()].map((index) => `\\u${hex(char.charCodeAt(index), 4)}`).join(''),
  );
}

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

/**
 * A stored item value as the tables print it: maps, sets and binary as JSON, lists comma-joined,
 * since ops may have saved anything by hand (a map in `enabled` must not read `[object Object]`).
 */
export function storedValueText(value: unknown): string {
  if (value instanceof Set || Array.isArray(value)) {
    return listText(
      [...value].map((entry) => (typeof entry === 'object' && entry !== null ? storedValueText(entry) : String(entry))),
    );
  }
  return typeof value === 'object' && value !== null
    ? JSON.stringify(value, (_key, entry: unknown) => (entry instanceof Set ? [...entry] : entry))
    : String(value);
}
