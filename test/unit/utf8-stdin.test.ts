/**
 * `--file -` (and every other input read from stdin through cli/utf8.ts) reads all of stdin
 * however late the command before the pipe writes it. Node makes a piped stdin non-blocking once
 * anything touches `process.stdin`; `readFileSync(0)` then threw EAGAIN when nothing was written
 * yet, and `news-alerts rules delete x | news-alerts rules put --file -` lost the deleted rule.
 */
import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';

/** Runs readUtf8File('-') in a child whose stdin is a pipe Node made non-blocking; writes `parts` once it reads. */
function readLateStdin(parts: readonly string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const script = `
    import { readUtf8File } from './cli/utf8.ts';
    void process.stdin; // as the CLI does before it reads a file: the pipe becomes non-blocking
    process.stdout.write('reading\\n');
    const text = readUtf8File('-');
    process.stdout.write(JSON.stringify({ text }) + '\\n');
    process.exit(0);
  `;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      cwd: new URL('../../', import.meta.url),
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    let written = false;
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      // Nothing is in the pipe until the child is about to read: the slow writer of a real pipe.
      if (!written && stdout.includes('reading\n')) {
        written = true;
        const [first, ...rest] = parts;
        child.stdin.write(first ?? '', () => {
          for (const part of rest) child.stdin.write(part);
          child.stdin.end();
        });
      }
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('reading stdin', () => {
  it('reads all of a pipe written only after the read began, in several writes', async () => {
    const parts = [
      'rules:\n',
      '  - ruleId: quakes\n',
      '    audienceId: quake-oncall\n',
      `    description: ${'x'.repeat(100_000)}\n`,
    ];
    const { code, stdout, stderr } = await readLateStdin(parts);
    expect(code, stderr).toBe(0);
    const line = stdout.split('\n').find((text) => text.startsWith('{'));
    expect(JSON.parse(line ?? '{}')).toEqual({ text: parts.join('') });
  });
});
