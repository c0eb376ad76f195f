/**
 * Terminal injection (issue 10, item 8): whatever a rule file, an audience item, a flag or an
 * error message holds, the CLI's output layer never writes a control sequence or an invisible
 * format character to the terminal; it shows them escaped. `--json` stays the same JSON value.
 */
import { Writable } from 'node:stream';
import fc from 'fast-check';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { stderrLog } from '../../cli/log.ts';
import { displayWidth, jsonText, Output, safeText, storedValueText, terminalText } from '../../cli/output.ts';
import { main } from '../../cli/program.ts';

/** Anything a terminal could act on, or that hides or reorders text; `\n` is checked separately. */
const unsafe = /[\p{Cc}\p{Cf}\p{Cs}\p{Zl}\p{Zp}\u115f\u1160\u3164\uffa0]/u;
const unsafeExceptNewline = (text: string) => unsafe.test(text.replaceAll('\n', ''));

const hostileFragments = [
  '\u001b[2J',
  '\u001b[31mred\u001b[0m',
  '\u001b]0;owned title\u0007',
  '\u001b]8;;https://evil.example/\u001b\\click\u001b]8;;\u001b\\',
  '\u001bP+q544e\u001b\\',
  '\u009b2J',
  '\u009d0;title\u009c',
  '\u007f',
  '\b\b\bok',
  'safe\rEVIL',
  'tab\there',
  'line\nbreak',
  '\u202egnp.exe',
  '\u2066isolate\u2069',
  '\u200bzero\u200dwidth\ufeff',
  '\u{e0041}\u{e0042}',
  '\u2028\u2029',
  '\ud800',
  'ㅤ\u3164',
];

const hostileText = fc
  .array(fc.oneof(fc.constantFrom(...hostileFragments), fc.string({ unit: 'binary' }), fc.string()), {
    maxLength: 6,
  })
  .map((parts) => parts.join(''));

/** An Output whose streams are captured (aligned tables unless `format` says otherwise; stdout is no terminal). */
function capture(json = false, format: 'table' | 'tsv' | undefined = json ? undefined : 'table') {
  const written = { stdout: '', stderr: '' };
  const sink = (name: 'stdout' | 'stderr') =>
    new Writable({
      write(chunk: Buffer | string, _encoding, done) {
        written[name] += chunk.toString();
        done();
      },
    });
  const output = new Output({
    json,
    format,
    columns: 100,
    streams: { stdout: sink('stdout'), stderr: sink('stderr') },
  });
  return { output, written };
}

describe('safeText', () => {
  it('escapes CSI, OSC, OSC-8, DCS, C1, DEL and backspace visibly instead of passing them through', () => {
    expect(safeText('\u001b[2Jhello')).toBe('\\x1b[2Jhello');
    expect(safeText('\u001b]0;owned\u0007')).toBe('\\x1b]0;owned\\x07');
    expect(safeText('\u001b]8;;https://evil.example/\u001b\\x')).toBe('\\x1b]8;;https://evil.example/\\x1b\\x');
    expect(safeText('\u009b2J\u007f\b')).toBe('\\x9b2J\\x7f\\x08');
  });

  it('escapes bidi overrides and isolates and other invisible format characters', () => {
    expect(safeText('invoice\u202egnp.exe')).toBe('invoice\\u202egnp.exe');
    expect(safeText('\u2066a\u2069\u200b\u200e\ufeff\u00ad')).toBe('\\u2066a\\u2069\\u200b\\u200e\\ufeff\\xad');
    expect(safeText('\u{e0041}')).toBe('\\u{e0041}');
    expect(safeText('\u2028')).toBe('\\u2028');
  });

  it('escapes tabs, carriage returns and newlines in a cell; terminalText keeps only the newline', () => {
    expect(safeText('a\tb\r\nc')).toBe('a\\tb\\r\\nc');
    expect(terminalText('a\tb\r\nc')).toBe('a\\tb\\r\nc');
  });

  it('leaves ordinary text alone, non-Latin scripts and emoji included', () => {
    for (const text of ['Markets desk', '시장 속보', 'مرحبا', 'Zürich — “quotes”', '🚀 launch', 'C:\\path']) {
      expect(safeText(text)).toBe(text);
    }
  });
});

describe('storedValueText', () => {
  it('prints whatever ops saved by hand as readable text, never [object Object]', () => {
    expect(storedValueText({ S: 'yes' })).toBe('{"S":"yes"}');
    expect(storedValueText(new Set(['a', 'b']))).toBe(storedValueText(['a', 'b']));
    expect(storedValueText([{ x: 1 }, 'y'])).toContain('{"x":1}');
    expect(storedValueText(true)).toBe('true');
    fc.assert(
      fc.property(fc.anything(), (value) => {
        expect(storedValueText(value)).not.toContain('[object Object]');
      }),
      { numRuns: 200 },
    );
  });
});

describe('Output', () => {
  it.each(['table', 'tsv'] as const)(
    'prints a hostile audience name, rule field and actor escaped in %s tables, fields, lines, notes and warnings',
    (format) => {
      const { output, written } = capture(false, format);
      const name = 'Desk\u001b[2J\u001b]0;pwned\u0007\u202e';
      output.table(['AUDIENCE', 'NAME'], [['desk', name]]);
      output.fields([['updatedBy', 'mallory\u001b[31m']]);
      output.line(`created audience ${name}`);
      output.note(`note ${name}`);
      output.warn(`warn ${name}`);
      // TSV separates cells with tabs of its own; tabs in data are escaped.
      expect(unsafeExceptNewline(written.stdout.replaceAll('\t', '') + written.stderr)).toBe(false);
      expect(written.stdout).toContain('Desk\\x1b[2J\\x1b]0;pwned\\x07\\u202e');
      expect(written.stdout).toContain('mallory\\x1b[31m');
      expect(written.stderr).toContain('warning: warn Desk\\x1b[2J');
    },
  );

  it.each(['table', 'tsv'] as const)(
    'keeps a cell on one line in %s output: a newline in data does not forge a row',
    (format) => {
      const { output, written } = capture(false, format);
      output.table(['RULE', 'AUDIENCE'], [['a\nforged-rule\tforged-audience', 'desk']]);
      expect(written.stdout).toContain('a\\nforged-rule\\tforged-audience');
      expect(written.stdout.split('\n').filter((line) => line.includes('forged'))).toHaveLength(1);
    },
  );

  it('writes --json output that parses to the same value with DEL, C1, bidi and U+2028 escaped', () => {
    const value = { name: 'a\u001b[2J\u009b\u007f\u202e\u2028\u{e0041}b', list: new Set(['\u2066x']) };
    const text = jsonText(value);
    expect(unsafeExceptNewline(text)).toBe(false);
    expect(text).toContain('\\u009b');
    expect(text).toContain('\\u202e');
    expect(text).toContain('\\u2028');
    expect(JSON.parse(text)).toEqual({ name: value.name, list: ['\u2066x'] });
  });

  it('escapes what the core logs through the CLI log port', () => {
    const { output, written } = capture();
    stderrLog(output).warn('rule skipped', { ruleId: 'r\u001b]8;;https://evil.example/\u0007', reason: '\u009b2J' });
    expect(unsafeExceptNewline(written.stderr)).toBe(false);
    // The details are words now, not JSON: the output layer escapes every control character in them.
    expect(written.stderr).toBe('warning: rule skipped (rule id r\\x1b]8;;https://evil.example/\\x07): \\x9b2J\n');
  });

  it('never writes a control sequence or invisible format character, whatever the data (property)', () => {
    fc.assert(
      fc.property(hostileText, hostileText, (a, b) => {
        // Wide enough that nothing wraps: one line per row, whatever the data holds.
        const human = capture(false, 'table');
        human.output.table(['A', 'B', 'C', 'D'], [[a, b, 1, null]]);
        human.output.fields([
          [a, b],
          ['n', 3],
        ]);
        const tableLines = human.written.stdout.split('\n').length - 1;
        human.output.line(a);
        human.output.note(b);
        human.output.warn(a);
        stderrLog(human.output).error(a, { field: b });
        const tsv = capture(false, 'tsv');
        tsv.output.table(['A', 'B', 'C', 'D'], [[a, b, 1, null]]);
        tsv.output.fields([[a, b]]);
        const json = capture(true);
        json.output.result({ a, b, [a]: [b] }, () => {});
        const printed =
          human.written.stdout + human.written.stderr + tsv.written.stdout + json.written.stdout + json.written.stderr;
        const widths = [a, b].map((text) => displayWidth(safeText(text)));
        // Newlines and tabs survive only as line breaks and separators the CLI chose: never inside a cell.
        return (
          !unsafeExceptNewline(printed.replaceAll('\t', '')) &&
          (Math.max(...widths) > 40 || tableLines === 4) &&
          tsv.written.stdout
            .split('\n')
            .map((line) => line.split('\t').length)
            .join() === '4,4,2,1' &&
          JSON.stringify(JSON.parse(json.written.stdout)) === JSON.stringify({ a, b, [a]: [b] })
        );
      }),
      { numRuns: 300 },
    );
  });
});

describe('error messages on stderr', () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  /** Runs the CLI in this process and returns what it wrote to stderr. */
  async function stderrOf(args: readonly string[]): Promise<{ code: number; stderr: string }> {
    let stderr = '';
    vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
      stderr += chunk.toString();
      return true;
    });
    vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
    const code = await main(['node', 'news-alerts', ...args]);
    return { code, stderr };
  }

  it('escapes flags and paths that error messages quote, from commander and from commands (property)', async () => {
    await fc.assert(
      fc.asyncProperty(hostileText, async (text) => {
        const option = await stderrOf([`--bogus${text}`]);
        const file = await stderrOf(['--sandbox-file', `/nonexistent/${text}/sandbox.json`, 'rules', 'list']);
        vi.restoreAllMocks();
        return (
          option.code === 2 &&
          file.code !== 0 &&
          !unsafeExceptNewline(option.stderr) &&
          !unsafeExceptNewline(file.stderr)
        );
      }),
      { numRuns: 40 },
    );
  });
});
