/**
 * The run lease from the command line (issue 10, item 7): an interrupted `news-alerts run` gives
 * its lease back, `watermark show` says who holds the lease, and `lease release` clears a lease
 * whose holder is gone but refuses a live one unless forced.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { hostname } from 'node:os';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type CliSandbox, cliEntry, projectRoot, startCliSandbox } from './support.ts';

let sandbox: CliSandbox;
// A sandbox of its own for every test, so each starts from the example set in any order
// (--sequence.shuffle).
beforeEach(async () => {
  sandbox = await startCliSandbox();
});
afterEach(async () => {
  await sandbox?.stop();
});

/** A lease far beyond any test run, without reading the clock. */
const longAgo = Date.parse('2026-11-22T00:00:00Z');
const centuries = 1000 * 365 * 86_400_000;

/** The pid of a process that has exited (nothing runs under it any more). */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', '']);
  await once(child, 'exit');
  return child.pid ?? -1;
}

describe('the run lease', () => {
  it('an interrupted run releases its lease: SIGINT stops it cleanly, exit 130, the next run starts at once', async () => {
    const state = sandbox.stack.dependencies.state;
    // The provider hangs, so the run is certainly mid-way when the signal comes.
    sandbox.stack.simulator?.faults.inject({ kind: 'delay', ms: 600_000, times: 100 });
    try {
      const child = spawn(process.execPath, [cliEntry, '--sandbox-file', sandbox.descriptorPath, 'run'], {
        cwd: projectRoot,
        env: { ...process.env, NEWS_ALERTS_ACTOR: undefined },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (chunk: Buffer) => {
        stdout += chunk.toString();
      });
      const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
      // Wait for the run to say it holds the lease, then interrupt it.
      await new Promise<void>((resolve, reject) => {
        child.stderr.on('data', (chunk: Buffer) => {
          stderr += chunk.toString();
          if (stderr.includes('holds the run lease')) resolve();
        });
        child.on('close', () => reject(new Error(`the run ended before it held the lease:\n${stderr}`)));
      });
      expect(await state.readLease()).toMatchObject({ host: hostname(), pid: child.pid });
      child.kill('SIGINT');
      const code = await exited;
      expect(code, `${stdout}\n${stderr}`).toBe(130);
      expect(stderr).toContain('interrupted (SIGINT)');
      expect(await state.readLease()).toBeUndefined();
      const [last] = await state.recentRuns(1);
      expect(last).toMatchObject({ status: 'failed', summary: { reason: expect.stringContaining('SIGINT') } });
    } finally {
      sandbox.stack.simulator?.faults.clear();
    }
    // The next run does not wait for a lease to expire: at an instant before any lease this
    // machine's clock could have set would expire, it still gets one.
    const next = await state.acquireLease('next-run', 60_000, longAgo);
    await state.releaseLease(next);
  });

  it('watermark show reports a held lease, and lease release clears one whose holder is gone', async () => {
    const state = sandbox.stack.dependencies.state;
    // A CLI run on this host whose process is gone: stale although its lease has not expired.
    await state.acquireLease('cli-dead', centuries, longAgo, {
      host: hostname(),
      pid: await deadPid(),
      renewEveryMs: centuries,
    });
    const shown = await sandbox.cli(['--json', 'watermark', 'show']);
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.json<{ lease: unknown }>().lease).toMatchObject({
      owner: 'cli-dead',
      acquiredAt: longAgo,
      expiresAt: longAgo + centuries,
      host: hostname(),
      state: 'stale',
    });
    const released = await sandbox.cli(['--json', 'lease', 'release', '--yes']);
    expect(released.code, released.stderr).toBe(0);
    expect(released.json()).toMatchObject({ released: true, lease: { owner: 'cli-dead' } });
    expect(await state.readLease()).toBeUndefined();
  });

  it('lease release refuses a live holder unless forced, and asks first', async () => {
    const state = sandbox.stack.dependencies.state;
    // A holder that is alive (this test process) is not released without --force, and --force asks first.
    await state.acquireLease('cli-live', centuries, longAgo, {
      host: hostname(),
      pid: process.pid,
      renewEveryMs: centuries,
    });
    const [refused, unconfirmed] = await Promise.all([
      sandbox.cli(['lease', 'release', '--yes']),
      sandbox.cli(['lease', 'release', '--force']),
    ]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('held by cli-live');
    expect(refused.stderr).toContain('--force');
    expect(unconfirmed.code).toBe(2);
    expect(unconfirmed.stderr).toContain('Pass --yes to confirm');
    expect((await state.readLease())?.owner).toBe('cli-live');
    const forced = await sandbox.cli(['lease', 'release', '--force', '--yes']);
    expect(forced.code, forced.stderr).toBe(0);
    expect(await state.readLease()).toBeUndefined();
  });
});
