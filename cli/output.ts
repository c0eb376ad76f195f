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
 *
 * Colour is the one escape sequence printed, and only this module writes it: with `color` on,
 * around header rows and {@link status} cells, after the data in them was escaped. With
 * `color` off the output is plain text, byte for byte.
 *
 * Tables fit the terminal (`columns`, else the terminal's width, else `$COLUMNS`, else 80) as
 * borderless aligned columns: ids are never cut or wrapped, free text wraps at word boundaries,
 * and optional columns are left out (with a note on stderr) when the rest would not fit. No word
 * and no id is ever split: when the columns cannot fit even so, each row is printed as a block of
 * `COLUMN value` lines, every column included. When stdout is not a terminal and no format was
 * asked for, tables are TSV: one line per row, no padding, nothing left out, so `cut`, `sort` and
 * `awk` see whole values.
 */
import { createRequire } from 'node:module';
import type stringWidth from 'string-width';

/** How a cell is coloured on a terminal: a status that is fine, broken, or waiting. */
export type Tone = 'good' | 'bad' | 'warn';

/** A cell with a tone, from {@link status}: its text is data (escaped), its colour is the CLI's. */
export interface StyledCell {
  readonly text: string;
  readonly tone: Tone | undefined;
}

/** A value a table cell can show. */
export type Cell = string | number | boolean | null | undefined | StyledCell;

/**
 * A table column. `id`: never wrapped or cut (ids, ARNs, timestamps). `wrap`: free text that
 * gives way first when the table is too wide. `optional`: left out when the table cannot fit
 * otherwise (`--output json` and TSV still have it). A plain string is a column with no marks.
 */
export interface Column {
  readonly head: string;
  readonly id?: boolean;
  readonly wrap?: boolean;
  readonly optional?: boolean;
}

/** What `--output` selects. */
export type OutputFormat = 'table' | 'json' | 'tsv';

/** The output formats, for option parsing. */
export const outputFormats: readonly OutputFormat[] = ['table', 'json', 'tsv'];

/** Where output goes (process streams by default; tests of pure helpers pass their own). */
export interface OutputStreams {
  readonly stdout: NodeJS.WritableStream;
  readonly stderr: NodeJS.WritableStream;
}

/** How one invocation prints. */
export interface OutputOptions {
  /** Shorthand for `format: 'json'` (the `--json` flag). */
  readonly json?: boolean;
  /**
   * `--output`; an explicit format wins over `json`. Unset: JSON with `json`, otherwise a table
   * when stdout is a terminal and TSV when it is a pipe or file.
   */
  readonly format?: OutputFormat;
  /** Colour headers and status words (the caller decides: stdout a TTY and no `NO_COLOR`). */
  readonly color?: boolean;
  /** The width tables fit in; unset: the terminal's, else `$COLUMNS`, else 80. */
  readonly columns?: number;
  readonly streams?: OutputStreams;
}

/** The CLI's printer for one command invocation. */
export class Output {
  /** The format this invocation prints in, settled at construction. */
  readonly format: OutputFormat;
  /** True for the JSON format: stdout carries exactly one JSON document. */
  readonly json: boolean;
  /** True when colour sequences are written (tables on a terminal with colour asked for). */
  readonly color: boolean;
  readonly #columns: number | undefined;
  readonly #streams: OutputStreams;

  constructor(options: OutputOptions = {}) {
    this.#streams = options.streams ?? { stdout: process.stdout, stderr: process.stderr };
    const terminal = (this.#streams.stdout as Partial<NodeJS.WriteStream>).isTTY === true;
    this.format = options.format ?? (options.json ? 'json' : terminal ? 'table' : 'tsv');
    this.json = this.format === 'json';
    this.color = options.color === true && this.format === 'table';
    this.#columns = positiveInteger(options.columns);
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

  /**
   * A line that introduces or sums up a table or field list: on stdout with the table, on stderr
   * as TSV, where stdout carries only the header and the rows (`| cut -f1` reads no sentence), and
   * not at all with `--json`.
   */
  caption(text: string): void {
    if (this.json) return;
    if (this.format === 'tsv') this.note(text);
    else this.line(text);
  }

  /**
   * A table on stdout: aligned columns that fit the width, or TSV (see {@link OutputOptions.format}).
   * An empty table prints `empty` instead; as TSV it prints the header line, and `empty` goes to
   * stderr so a script reads no rows rather than a sentence.
   */
  table(head: readonly (string | Column)[], rows: readonly (readonly Cell[])[], empty = '(none)'): void {
    if (this.json) return;
    const columns = head.map(toColumn);
    if (this.format === 'tsv') {
      // Every line has one cell per column, so `cut -f` and `awk -F'\t'` count right.
      const cells = rows.map((row) => columns.map((_, index) => row[index]));
      this.#write(tsvLines([columns.map((column) => column.head), ...cells]));
      if (rows.length === 0) this.note(empty);
      return;
    }
    if (rows.length === 0) {
      this.line(empty);
      return;
    }
    const width = this.#width();
    const layout = layoutTable(columns, rows, { width, color: this.color, header: true });
    this.#write(layout.lines);
    if (layout.dropped.length > 0) {
      this.note(
        `(${layout.dropped.join(', ')} left out to fit ${width} columns; --output json or --output tsv shows every column)`,
      );
    }
  }

  /** Name/value pairs: aligned `name  value` lines (values wrap), or `name<TAB>value` as TSV. */
  fields(entries: readonly (readonly [string, Cell])[]): void {
    if (this.json) return;
    if (this.format === 'tsv') {
      this.#write(tsvLines(entries));
      return;
    }
    const columns: Column[] = [{ head: '' }, { head: '', wrap: true }];
    this.#write(layoutTable(columns, entries, { width: this.#width(), color: this.color, header: false }).lines);
  }

  /** A note for the person at the terminal, on stderr (kept with `--json`: it does not disturb stdout). */
  note(text: string): void {
    this.#streams.stderr.write(`${terminalText(text)}\n`);
  }

  /** A warning on stderr. */
  warn(text: string): void {
    this.#streams.stderr.write(`warning: ${terminalText(text)}\n`);
  }

  #write(lines: readonly string[]): void {
    this.#streams.stdout.write(lines.map((line) => `${line}\n`).join(''));
  }

  /** Columns to fit: the `columns` option, the terminal's width, `$COLUMNS`, or 80. */
  #width(): number {
    const stdout = this.#streams.stdout as Partial<NodeJS.WriteStream>;
    return (
      this.#columns ??
      (stdout.isTTY ? positiveInteger(stdout.columns) : undefined) ??
      positiveInteger(Number(process.env.COLUMNS || Number.NaN)) ??
      80
    );
  }
}

const toColumn = (column: string | Column): Column => (typeof column === 'string' ? { head: column } : column);

const positiveInteger = (value: number | undefined): number | undefined =>
  value !== undefined && Number.isInteger(value) && value > 0 ? value : undefined;

/**
 * A status word as a cell, coloured on a terminal by what it says: `ok`, `sent`, `confirmed` …
 * green; `INVALID`, `FAILED`, `topic missing` … red; `HELD`, `paused`, `pending` … yellow. Pass
 * `tone` to decide it yourself; a word not listed stays uncoloured.
 */
export function status(text: string, tone: Tone | undefined = toneOf(text)): StyledCell {
  return { text, tone };
}

// A Map, not an object: a status word from data such as "__proto__" or "constructor" would find
// the object's prototype members and be painted with a style that does not exist.
const tonesByWord: ReadonlyMap<string, Tone> = new Map([
  ...['ok', 'sent', 'confirmed', 'valid', 'enabled', 'active', 'succeeded', 'completed', 'complete', 'delivered'].map(
    (word) => [word, 'good'] as const,
  ),
  ...[
    'invalid',
    'failed',
    'failure',
    'error',
    'topic missing',
    'missing',
    'parked',
    'refused',
    'incomplete',
    'replay incomplete',
    'deleted',
  ].map((word) => [word, 'bad'] as const),
  ...[
    'held',
    'paused',
    'unsubscribed',
    'pending',
    'pending confirmation',
    'disabled',
    'deferred',
    'skipped',
    'partial',
    'running',
  ].map((word) => [word, 'warn'] as const),
]);

/** The tone a status word is shown in, if it is one {@link status} knows. */
export const toneOf = (text: string): Tone | undefined => tonesByWord.get(text.trim().toLowerCase());

/** SGR sequences: the only escape codes the CLI writes. */
const sgr = {
  bold: ['\u001b[1m', '\u001b[22m'],
  good: ['\u001b[32m', '\u001b[39m'],
  bad: ['\u001b[31m', '\u001b[39m'],
  warn: ['\u001b[33m', '\u001b[39m'],
} as const;

const paint = (text: string, style: keyof typeof sgr | undefined): string =>
  style === undefined || text === '' ? text : `${sgr[style][0]}${text}${sgr[style][1]}`;

/**
 * Display width of text in terminal columns: East Asian wide characters and emoji take two,
 * combining marks none, colour sequences none (string-width: grapheme clusters and the Unicode
 * East Asian Width property). Printable ASCII is one column a character and needs no library:
 * string-width is loaded on the first other text (its segmenter and emoji tables cost tens of
 * milliseconds, which `--help` and most tables never pay).
 */
export function displayWidth(text: string): number {
  if (/^[ -~]*$/.test(text)) return text.length;
  measureWidth ??= loadStringWidth();
  return measureWidth(text);
}

let measureWidth: ((text: string) => number) | undefined;

/** string-width, loaded synchronously (require of an ES module: Node 20.19+), else an approximation. */
function loadStringWidth(): (text: string) => number {
  try {
    return (createRequire(import.meta.url)('string-width') as { default: typeof stringWidth }).default;
  } catch {
    return approximateWidth;
  }
}

/**
 * Display width without string-width (a Node that cannot require an ES module): the East Asian
 * wide blocks (Hangul, CJK, kana, fullwidth forms) and emoji take two columns, combining marks
 * and colour sequences none.
 */
export function approximateWidth(text: string): number {
  let width = 0;
  const uncoloured = Object.values(sgr)
    .flat()
    .reduce((rest, code) => rest.replaceAll(code, ''), text);
  for (const char of uncoloured) {
    if (/\p{Mn}|\p{Me}/u.test(char)) continue;
    width +=
      /[\u1100-\u115f\u2e80-\u303e\u3041-\u33ff\u3400-\u4dbf\u4e00-\u9fff\ua000-\ua4cf\uac00-\ud7a3\uf900-\ufaff\ufe30-\ufe4f\uff00-\uff60\uffe0-\uffe6\u{20000}-\u{3fffd}]|\p{Emoji_Presentation}/u.test(
        char,
      )
        ? 2
        : 1;
  }
  return width;
}

/** Gap between table columns. */
const gap = '  ';
/** Free text does not wrap narrower than this (unless the column is narrower anyway). */
const minimumTextWidth = 10;

/** Free text columns get at least this much (or their whole text) before optional columns are kept. */
const comfortableTextWidth = 28;

/** Rows as TSV lines: cells escaped (tabs and newlines too), tab-separated, unpadded. */
const tsvLines = (rows: readonly (readonly Cell[])[]): string[] => rows.map((row) => row.map(cellText).join('\t'));

/** A piece of a cell that wrapping never breaks: a word, or one wide character. */
interface Piece {
  readonly text: string;
  readonly width: number;
  /** A space separates it from the piece before (dropped when a line breaks there). */
  readonly spaced: boolean;
}

let graphemeSegmenter: Intl.Segmenter | undefined;

/** Hangul syllables and jamo. */
const hangul = /[\u1100-\u11ff\u3130-\u318f\ua960-\ua97f\uac00-\ud7af\ud7b0-\ud7ff]/u;

/**
 * A cell's text cut where it may wrap: at spaces, and around Chinese and Japanese characters
 * (scripts that do not separate words with spaces; Korean does, so a Hangul word stays whole).
 * An ASCII cell with no space is one piece: an id is never cut.
 */
function piecesOf(text: string): Piece[] {
  graphemeSegmenter ??= new Intl.Segmenter(undefined, { granularity: 'grapheme' });
  const pieces: Piece[] = [];
  for (const [index, word] of text.split(' ').entries()) {
    let run = '';
    let first = true;
    let afterWide = false;
    const push = (piece: string): void => {
      pieces.push({ text: piece, width: displayWidth(piece), spaced: index > 0 && first });
      first = false;
    };
    // Narrow characters right after a wide one stay with it (`体;`, `東京)`): no line starts with them.
    const flush = (): void => {
      const last = pieces.at(-1);
      if (afterWide && last !== undefined)
        pieces[pieces.length - 1] = { ...last, text: last.text + run, width: last.width + displayWidth(run) };
      else push(run);
      run = '';
    };
    // Only a word with a wide character needs segmenting; ASCII words (almost all) stay whole.
    if (/[\u1100-\u{10ffff}]/u.test(word)) {
      for (const { segment } of graphemeSegmenter.segment(word)) {
        // Korean separates words with spaces like Latin: a Hangul word stays whole.
        if (displayWidth(segment) < 2 || hangul.test(segment)) {
          run += segment;
          continue;
        }
        if (run !== '') flush();
        push(segment);
        afterWide = true;
      }
    } else run = word;
    if (run !== '') flush();
    else if (first) push(run);
  }
  return pieces;
}

/**
 * Pieces laid into lines no wider than `width`, breaking only between pieces: a piece wider than
 * that gets a line of its own (wider than `width`), never a cut.
 */
function wrapPieces(pieces: readonly Piece[], width: number): string[] {
  const lines: string[] = [];
  let line = '';
  let lineWidth = 0;
  let wrapped = false;
  for (const piece of pieces) {
    const space = piece.spaced && !(wrapped && line === '') ? 1 : 0;
    if (lineWidth > 0 && lineWidth + space + piece.width > width) {
      lines.push(line);
      line = piece.text;
      lineWidth = piece.width;
      wrapped = true;
      continue;
    }
    line += `${space ? ' ' : ''}${piece.text}`;
    lineWidth += space + piece.width;
  }
  lines.push(line);
  return lines;
}

/**
 * Text wrapped at word boundaries into lines no wider than `width` terminal columns: between
 * words, and between the characters of Chinese and Japanese text (which has no spaces). A word is
 * never split: one wider than `width` has a line of its own.
 */
export const wrapText = (text: string, width: number): string[] => wrapPieces(piecesOf(text), width);

/** A table laid out for a terminal. */
export interface TableLayout {
  /** The printed lines, trailing spaces trimmed. */
  readonly lines: readonly string[];
  /** Heads of the optional columns left out to fit. */
  readonly dropped: readonly string[];
  /** Each shown column's width, in the order shown. */
  readonly widths: readonly number[];
}

/**
 * Columns laid out in `width` terminal columns, gh/kubectl style: a header row, then one row per
 * entry, columns two spaces apart, no borders. Every column starts as wide as its widest value;
 * while the table is too wide the widest free-text column (`wrap`) gives way, then the widest
 * other non-id one, never below its longest word (so ids, which have no spaces, are never cut)
 * nor below {@link minimumTextWidth}. When that does not fit, optional columns are left out,
 * rightmost first. When even the narrowest columns do not fit, no word or id is cut: each row is
 * printed as a block of `COLUMN value` lines instead ({@link stackedLayout}), every column
 * included.
 */
export function layoutTable(
  head: readonly (string | Column)[],
  rows: readonly (readonly Cell[])[],
  options: { readonly width: number; readonly color?: boolean; readonly header?: boolean },
): TableLayout {
  const columns = head.map(toColumn);
  const header = options.header !== false;
  const body = rows.map((row) => columns.map((_, index) => styledText(row[index])));
  const heads = columns.map((column) => ({ text: safeText(column.head), tone: undefined }));
  const measured = columns.map((column, index) => {
    const cells = [...(header ? [heads[index]] : []), ...body.map((row) => row[index])].map((cell) => {
      const text = cell?.text ?? '';
      const pieces = piecesOf(text);
      const whole = displayWidth(text);
      // An id column is never wrapped: its narrowest is its widest value (the head may wrap).
      const narrowest = column.id && cell !== heads[index] ? whole : Math.max(0, ...pieces.map((p) => p.width));
      return { whole, narrowest };
    });
    const natural = Math.max(0, ...cells.map((cell) => cell.whole));
    const sane = Math.min(natural, minimumTextWidth);
    const minimum = Math.max(sane, ...cells.map((cell) => cell.narrowest));
    // Free text narrower than this reads a word or two per line: worth more than an optional column.
    const comfortable = column.wrap ? Math.max(minimum, Math.min(natural, comfortableTextWidth)) : minimum;
    return { natural, minimum, comfortable };
  });

  // Leave out optional columns, rightmost first, while keeping them would squeeze free text below
  // a comfortable width (or even the narrowest layout is too wide).
  let shown = columns.map((_, index) => index);
  const comfortableTotal = (indexes: readonly number[]): number =>
    indexes.reduce((sum, index) => sum + (measured[index]?.comfortable ?? 0), gap.length * (indexes.length - 1));
  const dropped: string[] = [];
  for (let index = columns.length - 1; index >= 0 && comfortableTotal(shown) > options.width; index--) {
    const column = columns[index];
    if (column?.optional !== true) continue;
    shown = shown.filter((other) => other !== index);
    dropped.unshift(column.head);
  }

  const budget = options.width - gap.length * (shown.length - 1);
  const rank = shown.map((index) => (columns[index]?.wrap ? 0 : columns[index]?.id ? 2 : 1));
  const widths = fitWidths(
    shown.map((index) => measured[index]?.natural ?? 0),
    shown.map((index) => measured[index]?.minimum ?? 0),
    budget,
    rank,
  );
  // A column narrower than its longest word would cut it: stack the rows instead.
  if (widths.reduce((sum, width) => sum + width, 0) > budget) {
    return stackedLayout(columns, header ? heads : undefined, body, options);
  }

  const lines: string[] = [];
  const render = (cells: readonly (StyledCell | undefined)[], bold: boolean): void => {
    const wrapped = shown.map((index, position) =>
      columns[index]?.id && !bold
        ? [cells[index]?.text ?? '']
        : wrapPieces(piecesOf(cells[index]?.text ?? ''), widths[position] ?? 0),
    );
    const height = Math.max(1, ...wrapped.map((cell) => cell.length));
    for (let row = 0; row < height; row++) {
      const parts = shown.map((index, position) => {
        const text = wrapped[position]?.[row] ?? '';
        const padding = ' '.repeat(Math.max(0, (widths[position] ?? 0) - displayWidth(text)));
        const style = options.color ? (bold ? 'bold' : cells[index]?.tone) : undefined;
        return `${paint(text, style)}${padding}`;
      });
      lines.push(parts.join(gap).trimEnd());
    }
  };
  if (header) render(heads, true);
  for (const row of body) render(row, false);
  return { lines, dropped, widths };
}

/**
 * A table too narrow for its columns, as blocks of `NAME  value` lines, one block a row (blank
 * lines between them): the names are the heads, or without a header the rows' first cells (name
 * and value fields). Values wrap at word boundaries under the value column; a value with a word
 * or id too wide to follow its name starts on the line after the name, at the left edge, so that
 * only a word wider than the whole terminal makes a line wider than `width`.
 */
function stackedLayout(
  columns: readonly Column[],
  heads: readonly StyledCell[] | undefined,
  body: readonly (readonly (StyledCell | undefined)[])[],
  options: { readonly width: number; readonly color?: boolean },
): TableLayout {
  const records = body.map((row) =>
    heads !== undefined
      ? columns.map((column, index) => ({ name: heads[index]?.text ?? '', cell: row[index], id: column.id === true }))
      : [{ name: row[0]?.text ?? '', cell: joinCells(row.slice(1)), id: false }],
  );
  const nameWidth = Math.max(0, ...records.flat().map((field) => displayWidth(field.name)));
  const indent = nameWidth + gap.length;
  const valueWidth = options.width - indent;
  const lines: string[] = [];
  for (const [index, record] of records.entries()) {
    if (heads !== undefined && index > 0) lines.push('');
    for (const { name, cell, id } of record) {
      const text = cell?.text ?? '';
      const pieces: Piece[] = id ? [{ text, width: displayWidth(text), spaced: false }] : piecesOf(text);
      const paintValue = (value: string): string => paint(value, options.color ? cell?.tone : undefined);
      const label = paint(name, options.color && heads !== undefined ? 'bold' : undefined);
      if (text === '') {
        lines.push(label);
        continue;
      }
      if (pieces.every((piece) => piece.width <= valueWidth)) {
        const [first = '', ...rest] = wrapPieces(pieces, valueWidth);
        const padding = ' '.repeat(Math.max(0, nameWidth - displayWidth(name)));
        lines.push(`${label}${padding}${gap}${paintValue(first)}`.trimEnd());
        for (const line of rest) lines.push(`${' '.repeat(indent)}${paintValue(line)}`.trimEnd());
      } else {
        lines.push(label);
        for (const line of wrapPieces(pieces, options.width)) lines.push(paintValue(line));
      }
    }
  }
  return { lines, dropped: [], widths: [nameWidth, valueWidth] };
}

/** Cells after the first of a headerless row, as one value (fields have exactly one). */
const joinCells = (cells: readonly (StyledCell | undefined)[]): StyledCell | undefined =>
  cells.length <= 1
    ? cells[0]
    : { text: cells.map((cell) => cell?.text ?? '').join(gap), tone: cells.find((cell) => cell?.tone)?.tone };

/**
 * Widths that fit `budget` (the total of the widths): each column starts at `natural`; while too
 * wide, the widest column of the lowest `rank` that is still above its `minimum` loses a column.
 * Returns the minimums when even they do not fit.
 */
export function fitWidths(
  natural: readonly number[],
  minimum: readonly number[],
  budget: number,
  rank: readonly number[] = natural.map(() => 0),
): number[] {
  const widths = natural.map((width, index) => Math.max(width, minimum[index] ?? 0));
  let excess = widths.reduce((sum, width) => sum + width, 0) - budget;
  for (const tier of [...new Set(rank)].sort((a, b) => a - b)) {
    while (excess > 0) {
      const candidates = widths
        .map((width, index) => ({ width, index }))
        .filter(({ width, index }) => rank[index] === tier && width > (minimum[index] ?? 0))
        .sort((a, b) => b.width - a.width);
      const widest = candidates[0];
      if (widest === undefined) break;
      // Down to the next widest (or the minimum) in one step; ties go one column at a time.
      const floor = Math.max(minimum[widest.index] ?? 0, candidates[1]?.width ?? 0, widest.width - excess);
      const next = floor < widest.width ? floor : widest.width - 1;
      excess -= widest.width - next;
      widths[widest.index] = next;
    }
  }
  return widths;
}

/**
 * Column widths for the former boxed tables (content plus a space each side, one border between
 * columns and at both ends), widest first, never below 10.
 * @deprecated Tables are laid out by {@link layoutTable}; kept for callers that still size boxes.
 */
export function fitColumns(rows: readonly (readonly string[])[], total: number): number[] {
  const count = Math.max(0, ...rows.map((row) => row.length));
  const natural = Array.from({ length: count }, (_, column) =>
    Math.max(3, ...rows.map((row) => Math.max(0, ...(row[column] ?? '').split('\n').map(displayWidth)) + 2)),
  );
  return fitWidths(
    natural,
    natural.map((width) => Math.min(width, 10)),
    total - (count + 1),
  );
}

/** A cell's text (escaped) and tone. */
const styledText = (value: Cell): StyledCell | undefined =>
  typeof value === 'object' && value !== null
    ? { text: safeText(value.text), tone: value.tone }
    : { text: cellText(value), tone: undefined };

/** A table cell: one value on one line, with every control and format character escaped. */
const cellText = (value: Cell): string => {
  if (value === null || value === undefined) return '';
  if (typeof value === 'object') return safeText(value.text);
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

/**
 * The characters of {@link unsafeCharacters} that a web page must show as escapes (the console):
 * all but tab, line breaks, the soft hyphen and the zero-width (non-)joiners, which a browser
 * renders harmlessly and which emoji and some scripts need.
 */
const hidingInPage = /[^\t\n\r\u00ad\u200c\u200d]/u;

/**
 * Whether `char` acts on a terminal or hides or reorders text where a person reads it: what a web
 * page shows as an escape ({@link pageText}). Tab, line breaks, the soft hyphen and the zero-width
 * (non-)joiners are text. What the CLI refuses in names and keywords (cli/control-characters.ts).
 */
export const hidesOrActs = (char: string): boolean => unsafeCharacter.test(char) && hidingInPage.test(char);

/** {@link unsafeCharacters} without the global flag, whose `lastIndex` would carry from one test to the next. */
const unsafeCharacter = new RegExp(unsafeCharacters.source, 'u');

/**
 * Text for a web page's text nodes: bidi overrides and isolates, other controls and invisible
 * format characters become the same visible escapes the CLI prints (`\u202e`), so provider text
 * cannot reorder or hide what ops read.
 */
export const pageText = (text: string): string =>
  text.replace(unsafeCharacters, (char) => (hidingInPage.test(char) ? escapeCharacter(char) : char));

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
