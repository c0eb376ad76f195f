/**
 * The system tests' temporary files (synthesized CDK assemblies, mail directories, browser profiles,
 * the CLI's and moto's own) go to a directory the test run owns and removes at its end
 * (test/support/global-setup.ts), not to the machine's temporary directory, where each run used
 * to leave about 150 directories behind.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname } from 'node:path';
import { App } from 'aws-cdk-lib';
import { describe, expect, it } from 'vitest';

describe("the test run's temporary files", () => {
  it('go to a directory of the run, which the processes the tests start use too', () => {
    const directory = tmpdir();
    expect(basename(directory)).toMatch(/^news-alerts-test-run-/);
    expect(existsSync(directory)).toBe(true);
    // CDK's default assembly directory (an App given no outdir) is made there.
    expect(dirname(new App().synth().directory)).toBe(directory);
    const child = spawnSync(process.execPath, ['-e', 'process.stdout.write(require("node:os").tmpdir())'], {
      encoding: 'utf8',
    });
    expect(child.stdout).toBe(directory);
  });
});
