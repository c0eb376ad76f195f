/**
 * Tables that fit (issue 11, item 5): in 80 or 40 columns ids are never cut or wrapped, free text
 * wraps at word boundaries (not a word per line), optional columns give way with a note, and
 * rows are borderless aligned columns. In a pipe tables are TSV; `--output` forces either.
 * Colour only when asked for, never from data, and never counted in widths; CJK text is two
 * columns wide per character and stays aligned.
 */
import { spawnSync } from 'node:child_process';
import { Writable } from 'node:stream';
import fc from 'fast-check';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  approximateWidth,
  type Cell,
  type Column,
  displayWidth,
  fitColumns,
  layoutTable,
  Output,
  type OutputOptions,
  status,
  toneOf,
  wrapText,
} from '../../cli/output.ts';

/** A stream that records what was written; `tty` makes it look like a terminal of that width. */
function sink(tty?: { columns?: number }) {
  let text = '';
  const stream = new Writable({
    write(chunk: Buffer | string, _encoding, done) {
      text += chunk.toString();
      done();
    },
  });
  if (tty) Object.assign(stream, { isTTY: true, columns: tty.columns });
  return { stream, text: () => text };
}

/** An Output with captured streams. */
function capture(options: Omit<OutputOptions, 'streams'> = {}, tty?: { columns?: number }) {
  const stdout = sink(tty);
  const stderr = sink();
  const output = new Output({ ...options, streams: { stdout: stdout.stream, stderr: stderr.stream } });
  return { output, stdout: stdout.text, stderr: stderr.text };
}

const lines = (text: string): string[] => text.replace(/\n$/, '').split('\n');
/** SGR colour sequences, the only escapes Output may write. */
const esc = '\u001b';
const sgr = new RegExp(`${esc}\\[\\d*m`, 'g');
/** The SGR codes Output writes: bold on/off, green, red, yellow, default colour. */
const ownCodes = new Set(['\u001b[1m', '\u001b[22m', '\u001b[32m', '\u001b[31m', '\u001b[33m', '\u001b[39m']);
const plain = (text: string): string => text.replace(sgr, '');

const ruleColumns: Column[] = [
  { head: 'RULE', id: true },
  { head: 'AUDIENCE', id: true },
  { head: 'CRITERIA', wrap: true },
  { head: 'STATUS', optional: true },
  { head: 'UPDATED BY', optional: true },
  { head: 'UPDATED', id: true, optional: true },
];
const criteria =
  'keywords: interest rate, central bank, bond yield, inflation expectations; categories 002001000, 002002000';
const ruleRows: Cell[][] = [
  ['rates-hike', 'markets-finance', criteria, status('ok'), 'erin@ops', '2026-11-21T09:00:00Z'],
  ['rates-cut', 'markets-rates', 'keywords: rate cut', status('INVALID'), 'mallory@ops', '2026-11-21T09:05:00Z'],
];

describe('tables that fit the terminal', () => {
  it.each([80, 50])('fits %i columns without cutting an id, as borderless aligned columns', (width) => {
    const { output, stdout } = capture({ format: 'table', columns: width });
    output.table(ruleColumns, ruleRows);
    const printed = lines(stdout());
    for (const line of printed) expect(displayWidth(line), line).toBeLessThanOrEqual(width);
    for (const id of ['rates-hike', 'rates-cut', 'markets-finance', 'markets-rates']) {
      expect(
        printed.some((line) => line.split(/\s+/).includes(id)),
        id,
      ).toBe(true);
    }
    expect(stdout()).not.toMatch(/[│┌─┐└┘├┤]|…/u);
    expect(printed[0]).toMatch(/^RULE\s+AUDIENCE\s+CRITERIA/);
    // Every row starts at the left edge with its id; continuation lines start with spaces.
    expect(printed.filter((line) => !line.startsWith(' ')).map((line) => line.split(' ')[0])).toEqual([
      'RULE',
      'rates-hike',
      'rates-cut',
    ]);
  });

  it('wraps free text at word boundaries, several words a line, and every word survives', () => {
    const { output, stdout } = capture({ format: 'table', columns: 80 });
    output.table(ruleColumns.slice(0, 3), ruleRows);
    const printed = lines(stdout());
    const start = printed[0]?.indexOf('CRITERIA') ?? -1;
    const criteriaLines = printed.slice(1).map((line) => line.slice(start).trim());
    const ofFirstRow = criteriaLines.slice(0, criteriaLines.indexOf('keywords: rate cut'));
    expect(ofFirstRow.length).toBeGreaterThan(1);
    expect(ofFirstRow.join(' ')).toBe(criteria);
    // Not a word per line: the column is as wide as the terminal allows.
    expect(ofFirstRow.length).toBeLessThanOrEqual(3);
  });

  it('leaves out optional columns rightmost first when the rest cannot fit, and says so on stderr', () => {
    const narrow = capture({ format: 'table', columns: 50 });
    narrow.output.table(ruleColumns, ruleRows);
    expect(narrow.stdout()).not.toContain('UPDATED');
    expect(narrow.stdout()).not.toContain('erin@ops');
    expect(narrow.stderr()).toContain('STATUS, UPDATED BY, UPDATED left out to fit 50 columns; --output json');

    const wide = capture({ format: 'table', columns: 200 });
    wide.output.table(ruleColumns, ruleRows);
    expect(lines(wide.stdout())).toHaveLength(3);
    expect(wide.stdout()).toContain('2026-11-21T09:05:00Z');
    expect(wide.stderr()).toBe('');
  });

  it('prints lines longer than the width rather than cut an id that cannot fit', () => {
    const id = `audience-${'x'.repeat(60)}`;
    const { output, stdout } = capture({ format: 'table', columns: 40 });
    output.table([{ head: 'AUDIENCE', id: true }, 'NAME'], [[id, 'Markets desk']]);
    expect(stdout()).toContain(id);
  });

  it('keeps an id column whole even when its value has spaces; heads and free text wrap', () => {
    const layout = layoutTable(
      [
        { head: 'WHEN', id: true },
        { head: 'WHAT HAPPENED', wrap: true },
      ],
      [['2026-11-21 09:00 KST', 'the provider answered 503 three times and the run gave up']],
      { width: 36 },
    );
    expect(layout.lines.some((line) => line.startsWith('2026-11-21 09:00 KST  '))).toBe(true);
    expect(layout.widths[0]).toBe(displayWidth('2026-11-21 09:00 KST'));
    for (const line of layout.lines) expect(displayWidth(line)).toBeLessThanOrEqual(36);
  });

  it('prints fields as aligned name  value lines, long values wrapped under the value column', () => {
    const { output, stdout } = capture({ format: 'table', columns: 60 });
    output.fields([
      ['run', 'run-2026-11-21T09:00:00Z'],
      ['alerts sent', 3],
      ['reason', 'the provider answered 503 three times; the watermark stays where it was until the next run'],
    ]);
    const printed = lines(stdout());
    expect(printed[0]).toBe('run          run-2026-11-21T09:00:00Z');
    expect(printed[1]).toBe('alerts sent  3');
    expect(printed[2]?.startsWith('reason       the provider')).toBe(true);
    expect(printed.length).toBe(4);
    expect(printed[3]?.startsWith(`${' '.repeat(13)}`)).toBe(true);
    for (const line of printed) expect(displayWidth(line)).toBeLessThanOrEqual(60);
  });

  it('counts Korean and Japanese characters two columns wide and keeps the columns aligned', () => {
    const { output, stdout } = capture({ format: 'table', columns: 80 });
    output.table(
      [{ head: 'AUDIENCE', id: true }, 'NAME', 'SENT'],
      [
        ['seoul-desk', '서울 속보', 4],
        ['tokyo-desk', '東京ニュース', 12],
        ['zurich-desk', 'Zürich desk', 7],
      ],
    );
    const printed = lines(stdout());
    // The SENT column starts at the same display column on every line.
    const sentAt = printed.map((line) => displayWidth(line.replace(/\S+$/, '')));
    expect(new Set(sentAt).size).toBe(1);
    expect(displayWidth('東京ニュース')).toBe(12);
    expect(printed[2]).toBe('tokyo-desk   東京ニュース  12');
  });

  it('wraps CJK text without spaces between characters, never wider than the column', () => {
    const layout = layoutTable(
      [
        { head: 'ID', id: true },
        { head: 'TITLE', wrap: true },
      ],
      [['a1', '日本銀行が政策金利を引き上げると発表しました']],
      { width: 30 },
    );
    expect(layout.lines.length).toBeGreaterThan(2);
    for (const line of layout.lines) expect(displayWidth(line)).toBeLessThanOrEqual(30);
    expect(
      layout.lines
        .slice(1)
        .map((line) => line.slice(4).trim())
        .join(''),
    ).toBe('日本銀行が政策金利を引き上げると発表しました');
  });

  it('keeps a Korean word whole: Korean separates words with spaces, like Latin', () => {
    const layout = layoutTable(
      [
        { head: 'ID', id: true },
        { head: 'CRITERIA', wrap: true },
      ],
      [['chips', 'keywords semiconductor, 반도체, 半導体; not categories 007*']],
      { width: 24 },
    );
    const text = layout.lines.slice(1).map((line) => line.slice(7).trim());
    expect(text.some((line) => line.split(' ').includes('반도체,'))).toBe(true);
    for (const line of layout.lines) expect(displayWidth(line)).toBeLessThanOrEqual(24);
  });

  it('leaves out optional columns rather than squeeze free text to a word or two per line', () => {
    const layout = layoutTable(
      [
        { head: 'RULE', id: true },
        { head: 'CRITERIA', wrap: true },
        { head: 'VERSION', optional: true },
        { head: 'UPDATED', optional: true },
      ],
      [
        [
          'markets-rates',
          'categories 002*; keywords "interest rate", inflation, 금리',
          '3',
          '2026-11-21T09:05:00Z by erin@ops',
        ],
      ],
      { width: 60 },
    );
    // Both optional columns would fit with CRITERIA at 10 columns; the criteria are worth more.
    expect(layout.lines[0]).not.toContain('UPDATED');
    expect(layout.lines[1]).toContain('categories 002*; keywords "interest');
  });

  it('keeps the former box sizing helper within its total', () => {
    const widths = fitColumns([['id', 'a very long reason '.repeat(10)]], 60);
    expect(widths.reduce((sum, width) => sum + width, 3)).toBeLessThanOrEqual(60);
    expect(widths[0]).toBe(4);
  });
});

describe('format and width selection', () => {
  afterEach(() => {
    vi.unstubAllEnvs();
  });

  it('prints TSV when stdout is not a terminal: header, one line per row, escaped tabs and newlines, no padding', () => {
    const { output, stdout, stderr } = capture();
    expect(output.format).toBe('tsv');
    output.table(ruleColumns, [
      ...ruleRows,
      ['multi', 'a\tb', 'line\nbreak', 'ok', '', ''],
      ['short'],
      [...ruleRows[0]!, 'extra'],
    ]);
    const printed = lines(stdout());
    expect(printed.splice(4)).toEqual(['short\t\t\t\t\t', printed[1]]);
    expect(printed[0]).toBe('RULE\tAUDIENCE\tCRITERIA\tSTATUS\tUPDATED BY\tUPDATED');
    expect(printed[1]).toBe(`rates-hike\tmarkets-finance\t${criteria}\tok\terin@ops\t2026-11-21T09:00:00Z`);
    expect(printed[3]).toBe('multi\ta\\tb\tline\\nbreak\tok\t\t');
    expect(printed).toHaveLength(4);
    expect(printed.every((line) => line.split('\t').length === 6)).toBe(true);
    expect(stderr()).toBe('');
  });

  it('prints an empty TSV table as its header line, and the empty message on stderr', () => {
    const { output, stdout, stderr } = capture();
    output.table(['AUDIENCE', 'NAME'], [], 'no audiences');
    expect(stdout()).toBe('AUDIENCE\tNAME\n');
    expect(stderr()).toBe('no audiences\n');
  });

  it('prints a caption above the table on a terminal, on stderr in a pipe, and not at all as JSON', () => {
    for (const [options, out, err] of [
      [{ format: 'table' as const }, 'Caption\nA\n1\n', ''],
      [{ format: 'tsv' as const }, 'A\n1\n', 'Caption\n'],
      [{ json: true }, '', ''],
    ] as const) {
      const { output, stdout, stderr } = capture(options);
      output.caption('Caption');
      output.table(['A'], [[1]]);
      expect([stdout(), stderr()]).toEqual([out, err]);
    }
  });

  it('prints fields as name<TAB>value lines in a pipe', () => {
    const { output, stdout } = capture();
    output.fields([
      ['run', 'r-1'],
      ['alerts sent', 2],
    ]);
    expect(stdout()).toBe('run\tr-1\nalerts sent\t2\n');
  });

  it('prints the aligned table on a terminal, and TSV there when --output tsv asks', () => {
    const tty = capture({}, { columns: 100 });
    expect(tty.output.format).toBe('table');
    tty.output.table(['A', 'B'], [['x', 'y']]);
    expect(tty.stdout()).toBe('A  B\nx  y\n');

    const forced = capture({ format: 'tsv' }, { columns: 100 });
    forced.output.table(['A', 'B'], [['x', 'y']]);
    expect(forced.stdout()).toBe('A\tB\nx\ty\n');
  });

  it('prints the aligned table in a pipe when --output table asks', () => {
    const { output, stdout } = capture({ format: 'table' });
    output.table(['A', 'B'], [['x', 'y']]);
    expect(stdout()).toBe('A  B\nx  y\n');
  });

  it('treats json: true as the JSON format, and an explicit format wins', () => {
    const json = capture({ json: true }, { columns: 80 });
    expect([json.output.format, json.output.json]).toEqual(['json', true]);
    json.output.table(['A'], [['x']]);
    json.output.fields([['a', 1]]);
    json.output.result({ a: 1 }, () => {});
    expect(JSON.parse(json.stdout())).toEqual({ a: 1 });
    expect(capture({ format: 'json' }).output.json).toBe(true);
    expect(capture({ json: false, format: 'table' }).output.json).toBe(false);
  });

  it('takes the width from the columns option, then the terminal, then $COLUMNS, then 80', () => {
    const row = [['id', 'word '.repeat(40).trim()]];
    const widest = (text: string) => Math.max(...lines(text).map(displayWidth));
    vi.stubEnv('COLUMNS', '50');
    const option = capture({ format: 'table', columns: 30 }, { columns: 100 });
    option.output.table(['ID', 'TEXT'], row);
    expect(widest(option.stdout())).toBeLessThanOrEqual(30);
    const terminal = capture({}, { columns: 100 });
    terminal.output.table(['ID', 'TEXT'], row);
    expect(widest(terminal.stdout())).toBeGreaterThan(80);
    expect(widest(terminal.stdout())).toBeLessThanOrEqual(100);
    const environment = capture({ format: 'table' });
    environment.output.table(['ID', 'TEXT'], row);
    expect(widest(environment.stdout())).toBeGreaterThan(40);
    expect(widest(environment.stdout())).toBeLessThanOrEqual(50);
    vi.stubEnv('COLUMNS', '');
    const fallback = capture({ format: 'table' });
    fallback.output.table(['ID', 'TEXT'], row);
    expect(widest(fallback.stdout())).toBeGreaterThan(70);
    expect(widest(fallback.stdout())).toBeLessThanOrEqual(80);
  });
});

describe('colour', () => {
  it('writes no escape sequence at all unless colour is on', () => {
    for (const options of [
      { format: 'table' as const },
      { format: 'tsv' as const, color: true },
      { json: true, color: true },
    ]) {
      const { output, stdout, stderr } = capture(options, { columns: 80 });
      output.table(ruleColumns, ruleRows);
      output.fields([['status', status('FAILED')]]);
      output.result({ status: 'ok' }, () => output.line('done'));
      expect(stdout() + stderr()).not.toContain('\u001b');
    }
  });

  it('makes headers bold and status words green, red or yellow, with the same layout as plain text', () => {
    const coloured = capture({ format: 'table', color: true, columns: 120 });
    const uncoloured = capture({ format: 'table', color: false, columns: 120 });
    for (const { output } of [coloured, uncoloured]) {
      output.table(ruleColumns, [...ruleRows, ['held', 'markets-desk', 'digest', status('HELD'), 'erin', '']]);
      output.fields([['topic', status('topic missing')]]);
    }
    expect(coloured.stdout()).toContain('\u001b[1mRULE\u001b[22m');
    expect(coloured.stdout()).toContain('\u001b[32mok\u001b[39m');
    expect(coloured.stdout()).toContain('\u001b[31mINVALID\u001b[39m');
    expect(coloured.stdout()).toContain('\u001b[33mHELD\u001b[39m');
    expect(coloured.stdout()).toContain('\u001b[31mtopic missing\u001b[39m');
    expect(plain(coloured.stdout())).toBe(uncoloured.stdout());
  });

  it('knows the status words, case-insensitively, and leaves others uncoloured', () => {
    expect([toneOf('ok'), toneOf('FAILED'), toneOf('topic missing'), toneOf('paused'), toneOf('HELD')]).toEqual([
      'good',
      'bad',
      'bad',
      'warn',
      'warn',
    ]);
    expect(toneOf('markets-desk')).toBeUndefined();
    expect(status('whatever', 'bad').tone).toBe('bad');
  });

  it('shows a status word from data that names an object member (__proto__, constructor) as plain text', () => {
    for (const word of ['__proto__', 'constructor', 'toString', 'hasOwnProperty']) {
      const { output, stdout } = capture({ format: 'table', color: true, columns: 60 });
      output.table(['ID', 'STATUS'], [['a', status(word)]]);
      output.fields([['status', status(word)]]);
      expect(plain(stdout())).toContain(word);
      expect(stdout().match(sgr) ?? []).toEqual((stdout().match(sgr) ?? []).filter((code) => ownCodes.has(code)));
    }
  });

  it('never lets data produce a colour sequence, even in a status cell (property)', () => {
    const sequences = fc.constantFrom('\u001b[31m', '\u009b31m', '\u001b[1m', '\u001b]8;;x\u0007', '\u001b[0m');
    const text = fc.array(fc.oneof(sequences, fc.string()), { maxLength: 5 }).map((parts) => parts.join(''));
    fc.assert(
      fc.property(text, text, (a, b) => {
        const { output, stdout } = capture({ format: 'table', color: true, columns: 60 });
        output.table([a, 'STATUS'], [[a, status(b, 'good')]]);
        output.fields([[a, status(b)]]);
        const printed = stdout();
        // Every escape written is one of Output's own SGR codes; the data's ESC and CSI bytes show escaped.
        return (
          (printed.match(sgr) ?? []).every((code) => ownCodes.has(code)) &&
          !/\p{Cc}/u.test(plain(printed).replaceAll('\n', ''))
        );
      }),
      { numRuns: 200 },
    );
  });
});

describe('layout properties', () => {
  const idText = fc.stringMatching(/^[a-z0-9][a-z0-9-]{0,14}$/);
  const word = fc.oneof(
    fc.stringMatching(/^[A-Za-z0-9,.;:'()-]{1,10}$/),
    fc.constantFrom('시장', '속보', '東京', 'ニュース', 'Zürich', '🚀', 'a\u0301b'),
  );
  const freeText = fc.array(word, { maxLength: 12 }).map((words) => words.join(' '));
  const table = fc.record({
    ids: fc.integer({ min: 1, max: 2 }),
    texts: fc.integer({ min: 0, max: 3 }),
    rows: fc.integer({ min: 1, max: 4 }),
    seed: fc.array(fc.tuple(idText, idText, freeText, freeText, freeText), { minLength: 4, maxLength: 4 }),
    optional: fc.boolean(),
  });

  /** What wrapping keeps whole: a word of narrow characters, or each character of a word with wide ones. */
  const unbroken = (word: string): string[] =>
    [...word].some((char) => displayWidth(char) === 2) ? [...word] : [word];

  it('fits every line in the width whenever the ids and the narrowest text columns fit (property)', () => {
    fc.assert(
      fc.property(table, fc.integer({ min: 0, max: 80 }), (spec, extra) => {
        const columns: Column[] = [
          ...Array.from({ length: spec.ids }, (_, index) => ({ head: `ID${index}`, id: true })),
          ...Array.from({ length: spec.texts }, (_, index) => ({ head: `TEXT ${index}`, wrap: index === 0 })),
        ];
        const rows = spec.seed
          .slice(0, spec.rows)
          .map(([a, b, ...texts]) => [a, b].slice(0, spec.ids).concat(texts.slice(0, spec.texts)));
        // Ids at most 15 wide and words at most 10 (10 for the text minimum): this width always fits.
        const enough = spec.ids * 15 + spec.texts * 10 + 2 * (columns.length - 1);
        const width = enough + extra;
        const layout = layoutTable(columns, rows, { width });
        const printed = layout.lines.join('\n');
        return (
          layout.lines.every((line) => displayWidth(line) <= width) &&
          rows.every((row) =>
            row.slice(0, spec.ids).every((id) => layout.lines.some((line) => line.split(' ').includes(id))),
          ) &&
          rows.every((row) =>
            row
              .slice(spec.ids)
              .every((text) =>
                text.split(' ').every((part) => unbroken(part).every((piece) => printed.includes(piece))),
              ),
          )
        );
      }),
      { numRuns: 300 },
    );
  });

  it('never cuts an id, however narrow the terminal (property)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(idText, freeText), { minLength: 1, maxLength: 5 }),
        fc.integer({ min: 1, max: 60 }),
        (rows, width) => {
          const layout = layoutTable([{ head: 'ID', id: true }, 'TEXT', { head: 'NOTE', optional: true }], rows, {
            width,
          });
          return rows.every(([id]) => layout.lines.some((line) => line.split(' ').includes(id)));
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe('display width', () => {
  it('loads string-width only for text beyond printable ASCII (start-up time)', () => {
    const script = `
      import { createRequire } from 'node:module';
      import { Output } from './cli/output.ts';
      const loaded = () => Object.keys(createRequire(import.meta.url).cache).some((path) => path.includes('/string-width/'));
      const output = new Output({ format: 'table', streams: { stdout: process.stderr, stderr: process.stderr } });
      output.table(['RULE', 'AUDIENCE'], [['rates-hike', 'markets-finance']]);
      const ascii = loaded();
      output.table(['RULE', 'NAME'], [['rates-hike', '서울 속보']]);
      process.stdout.write(JSON.stringify({ ascii, korean: loaded() }));
    `;
    const child = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      cwd: new URL('../../', import.meta.url),
      encoding: 'utf8',
    });
    expect(child.status, child.stderr).toBe(0);
    expect(JSON.parse(child.stdout)).toEqual({ ascii: false, korean: true });
  });

  it('measures the same as string-width for ASCII, CJK, emoji and combining marks, approximation included', () => {
    const samples: [string, number][] = [
      ['markets-finance', 15],
      ['서울 속보', 9],
      ['東京ニュース', 12],
      ['ＡＢＣ', 6],
      ['🚀 launch', 9],
      ['Zu\u0308rich', 6],
      ['\u001b[1mbold\u001b[22m', 4],
    ];
    for (const [text, width] of samples) {
      expect(displayWidth(text), text).toBe(width);
      expect(approximateWidth(text), text).toBe(width);
    }
  });
});

describe('narrow terminals: words are never split', () => {
  /** `rules list` of the sandbox's examples, as the CLI lays it out (cli/rules.ts). */
  const rulesListColumns: Column[] = [
    { head: 'RULE', id: true },
    { head: 'AUDIENCE', id: true },
    { head: 'ENABLED' },
    { head: 'CRITERIA', wrap: true },
    { head: 'VERSION', optional: true },
    { head: 'UPDATED', optional: true },
    { head: 'STATUS', wrap: true },
  ];
  const rulesListRows: Cell[][] = [
    [
      'chips-keywords',
      'chips-team',
      'true',
      'keywords semiconductor, 반도체, 半導体; not categories 007*',
      1,
      'news-alerts sandbox (example)',
      status('ok'),
    ],
    [
      'markets-chip-exports',
      'markets-desk',
      'true',
      'query export* AND (semiconductor OR "memory chips" OR 반도체) -rumor',
      1,
      'news-alerts sandbox (example)',
      status('ok'),
    ],
    [
      'typo-rule',
      'chips-team',
      'true',
      '',
      1,
      'news-alerts sandbox (example)',
      status('INVALID: unknown attribute "keyword" (did you mean "keywords"?)', 'bad'),
    ],
  ];

  it.each([60, 40, 24])('rules list at %i columns: no word is split, no line is wider than the terminal', (width) => {
    const { output, stdout } = capture({ format: 'table', columns: width });
    output.table(rulesListColumns, rulesListRows);
    const printed = lines(stdout());
    for (const line of printed) expect(displayWidth(line), line).toBeLessThanOrEqual(width);
    const tokens = new Set(printed.flatMap((line) => line.split(/\s+/)));
    for (const word of ['semiconductor,', '(semiconductor', 'markets-chip-exports', '"keywords"?)', 'attribute']) {
      expect(tokens.has(word), `${word} whole in\n${printed.join('\n')}`).toBe(true);
    }
    expect(stdout()).not.toMatch(/semiconduc(?!tor)/);
  });

  it('when the columns cannot fit, prints each row as a block of COLUMN value lines, every column included', () => {
    const { output, stdout, stderr } = capture({ format: 'table', columns: 60 });
    output.table(rulesListColumns, rulesListRows.slice(0, 2));
    expect(lines(stdout())).toEqual([
      'RULE      chips-keywords',
      'AUDIENCE  chips-team',
      'ENABLED   true',
      'CRITERIA  keywords semiconductor, 반도체, 半導体; not',
      '          categories 007*',
      'VERSION   1',
      'UPDATED   news-alerts sandbox (example)',
      'STATUS    ok',
      '',
      'RULE      markets-chip-exports',
      'AUDIENCE  markets-desk',
      'ENABLED   true',
      'CRITERIA  query export* AND (semiconductor OR "memory chips"',
      '          OR 반도체) -rumor',
      'VERSION   1',
      'UPDATED   news-alerts sandbox (example)',
      'STATUS    ok',
    ]);
    expect(stderr()).toBe('');
  });

  it('at 40 columns the rule table of the tests above becomes blocks too, optional columns included', () => {
    const { output, stdout, stderr } = capture({ format: 'table', columns: 40 });
    output.table(ruleColumns, ruleRows);
    const printed = lines(stdout());
    for (const line of printed) expect(displayWidth(line), line).toBeLessThanOrEqual(40);
    expect(printed.slice(0, 4)).toEqual([
      'RULE        rates-hike',
      'AUDIENCE    markets-finance',
      'CRITERIA    keywords: interest rate,',
      '            central bank, bond yield,',
    ]);
    expect(printed).toContain('UPDATED BY  erin@ops');
    expect(printed).toContain('UPDATED     2026-11-21T09:05:00Z');
    expect(stderr()).toBe('');
  });

  it('a value with a word too long to follow its name starts on a line of its own', () => {
    const arn = 'arn:aws:sns:ap-northeast-2:123456789012:news-alerts-audience-x';
    const layout = layoutTable(
      [
        { head: 'AUDIENCE', id: true },
        { head: 'TOPIC', id: true },
      ],
      [['x', arn]],
      { width: 64 },
    );
    expect(layout.lines).toEqual(['AUDIENCE  x', 'TOPIC', arn]);
  });

  /** Text of words from several scripts: Latin, Korean (spaced words), CJK and emoji (broken anywhere). */
  const word = fc.oneof(
    fc.stringMatching(/^[A-Za-z0-9,.;:'"()*-]{1,24}$/),
    fc.constantFrom('반도체', '기준금리', '半導体', '東京ニュース', 'Zürich', '🚀', 'a\u0301b', 'semiconductor'),
  );
  const text = fc.array(word, { maxLength: 20 }).map((words) => words.join(' '));
  /**
   * What wrapping keeps whole: a word; in a word with Chinese or Japanese characters or emoji, each
   * such character, with the narrow characters right after it (`体;`), as it breaks between them.
   */
  const wide = /[\u2e80-\u9fff\uff00-\uff60\u{1f300}-\u{1faff}]/u;
  const wholes = (value: string): string[] =>
    value
      .split(' ')
      .filter(Boolean)
      .flatMap((part) => {
        if (!wide.test(part)) return [part];
        const units: string[] = [];
        let run = '';
        let afterWide = false;
        const flush = () => {
          if (run === '') return;
          if (afterWide) units[units.length - 1] += run;
          else units.push(run);
          run = '';
        };
        for (const { segment } of new Intl.Segmenter().segment(part)) {
          if (!wide.test(segment)) {
            run += segment;
            continue;
          }
          flush();
          units.push(segment);
          afterWide = true;
        }
        flush();
        return units;
      });

  it('wrapText: no line wider than the width unless it is one word wider than that; no word split (property)', () => {
    fc.assert(
      fc.property(text, fc.integer({ min: 1, max: 80 }), (value, width) => {
        const wrapped = wrapText(value, width);
        for (const line of wrapped) {
          if (displayWidth(line) > width) expect(wholes(line), line).toHaveLength(1);
        }
        // Every word is whole on one line, in order.
        const tokens = wrapped.flatMap(wholes);
        expect(tokens).toEqual(wholes(value));
      }),
      { numRuns: 500 },
    );
  });

  it('tables: whatever the width, ids and words stay whole, and only a line holding one of them alone is wider (property)', () => {
    const id = fc.stringMatching(/^[a-z0-9][a-z0-9:-]{0,40}$/);
    fc.assert(
      fc.property(
        fc.array(fc.tuple(id, text, text), { minLength: 1, maxLength: 4 }),
        fc.integer({ min: 1, max: 100 }),
        fc.boolean(),
        (rows, width, optional) => {
          const columns: Column[] = [
            { head: 'ID', id: true },
            { head: 'TEXT', wrap: true },
            { head: 'NOTE', optional },
          ];
          const layout = layoutTable(columns, rows, { width });
          const tokens = layout.lines.flatMap(wholes);
          // Everything is shown, except an optional column left out (and named on stderr).
          const shown = layout.dropped.includes('NOTE') ? 1 : 2;
          for (const [rowId, ...texts] of rows) {
            expect(tokens).toContain(rowId);
            for (const value of texts.slice(0, shown))
              for (const piece of wholes(value)) expect(tokens).toContain(piece);
          }
          for (const line of layout.lines) {
            if (displayWidth(line) > width) expect(wholes(line), line).toHaveLength(1);
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});
