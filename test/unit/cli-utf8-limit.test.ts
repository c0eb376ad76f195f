/**
 * cli/utf8.ts's read limit: a file or a pipe larger than the limit is refused once the limit is
 * passed, without reading the rest (an endless writer is cut off), and input up to the limit is
 * read whole.
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DEFAULT_READ_LIMIT, readUtf8File } from '../../cli/utf8.ts';

const directory = mkdtempSync(join(tmpdir(), 'utf8-limit-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));
const limit = { bytes: 1000, advice: 'split it' };

describe('readUtf8File with a limit', () => {
  it('reads a file up to the limit whole, and refuses one a byte larger, saying the limit and what to do', () => {
    const file = join(directory, 'series.csv');
    writeFileSync(file, 'x'.repeat(1000));
    expect(readUtf8File(file, '--csv', limit)).toHaveLength(1000);
    writeFileSync(file, 'x'.repeat(1001));
    expect(() => readUtf8File(file, '--csv', limit)).toThrow(
      `--csv: ${file} is larger than 1,000 bytes, the most read at once; split it`,
    );
  });

  it('stops reading a pipe that never ends once the limit is passed', () => {
    const pipe = join(directory, 'endless.fifo');
    execFileSync('mkfifo', [pipe]);
    // `yes` into the pipe, as `yes … | news-alerts spikes evaluate --csv -` does: it never ends.
    const writer = spawn('sh', ['-c', `exec yes '2021-03-01 00:00:00,1' > '${pipe}'`], { stdio: 'ignore' });
    try {
      expect(() => readUtf8File(pipe, '--csv', limit)).toThrow(/is larger than 1,000 bytes/);
    } finally {
      writer.kill();
    }
  });

  it('reads at most DEFAULT_READ_LIMIT when the caller names no limit (rules --file, mappings, articles)', () => {
    const pipe = join(directory, 'endless-items.fifo');
    execFileSync('mkfifo', [pipe]);
    const writer = spawn('sh', ['-c', `exec yes 'ruleId: x' > '${pipe}'`], { stdio: 'ignore' });
    try {
      expect(() => readUtf8File(pipe, '--file')).toThrow(
        `--file: ${pipe} is larger than ${DEFAULT_READ_LIMIT.bytes.toLocaleString('en-US')} bytes`,
      );
    } finally {
      writer.kill();
    }
  });
});
