/**
 * The CLI tests run the built `news-alerts` (dist/), so dist/ must be what the sources say: the
 * test run's global set-up rebuilds it (test/support/global-setup.ts). This builds the sources
 * again into a folder of its own and compares the code of every file: a dist/ left from an earlier
 * build, or one the set-up forgot to rebuild, fails here instead of letting every CLI test run
 * stale code.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { projectRoot } from './support.ts';

/**
 * The code of a build: every .js file's text, with the content hashes in chunk names left out
 * (they also hash the source-map paths, which differ between two output folders), sorted.
 */
function codeOf(outdir: string): string[] {
  return readdirSync(outdir)
    .filter((name) => name.endsWith('.js'))
    .map((name) => `${name.replace(/-[A-Z0-9]{8}\.js$/, '.js')}\n${readFileSync(join(outdir, name), 'utf8')}`)
    .map((text) => text.replace(/-[A-Z0-9]{8}\.js/g, '.js'))
    .sort();
}

describe('the built CLI the tests run', () => {
  it('is what the sources say: dist/ holds the code a build of them makes now', async () => {
    const outdir = mkdtempSync(join(tmpdir(), 'news-alerts-build-'));
    try {
      await promisify(execFile)(process.execPath, ['scripts/build-cli.mjs', '--outdir', outdir], { cwd: projectRoot });
      const fresh = codeOf(outdir);
      const dist = codeOf(join(projectRoot, 'dist'));
      expect(fresh.length).toBeGreaterThan(2);
      const stale = dist.filter((file) => !fresh.includes(file)).map((file) => file.slice(0, file.indexOf('\n')));
      expect(stale, 'dist/ is not what the sources say (test/support/global-setup.ts should have rebuilt it)').toEqual(
        [],
      );
      expect(dist.length).toBe(fresh.length);
    } finally {
      rmSync(outdir, { recursive: true, force: true });
    }
  });
});
