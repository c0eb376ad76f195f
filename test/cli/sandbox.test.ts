/**
 * `news-alerts sandbox up|status|down` end to end: a background sandbox (its own moto server and
 * news API simulator, the example audiences and rules) that later `--local` commands find through
 * its descriptor, and that `down` stops completely.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readDescriptor } from '../../cli/sandbox-descriptor.ts';
import { runCli } from './support.ts';

const dir = mkdtempSync(join(tmpdir(), 'news-alerts-sandbox-'));
const descriptorPath = join(dir, 'sandbox.json');
const sandbox = (args: readonly string[]) => runCli(['--sandbox-file', descriptorPath, ...args]);

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

afterAll(async () => {
  // Never leave the background process behind, even when an assertion failed half way.
  if (existsSync(descriptorPath)) await sandbox(['sandbox', 'down']);
  rmSync(dir, { recursive: true, force: true });
});

describe('sandbox', () => {
  it('up starts a background sandbox that --local commands use; status reports it; down stops it', {
    timeout: 180_000,
  }, async () => {
    const up = await sandbox(['--json', 'sandbox', 'up']);
    expect(up.code, up.stderr).toBe(0);
    expect(up.json()).toMatchObject({ running: true, descriptor: descriptorPath, tablesReachable: true });
    const { daemon, endpoint, provider } = readDescriptor(descriptorPath);
    expect(endpoint).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(provider.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    const pid = daemon?.pid ?? 0;
    expect(alive(pid)).toBe(true);

    // A second up finds it running and starts nothing new.
    const again = await sandbox(['--json', 'sandbox', 'up']);
    expect(again.code).toBe(0);
    expect(again.json()).toMatchObject({ running: true, pid });

    const rules = await sandbox(['--json', 'rules', 'list']);
    expect(rules.json<{ ruleId: string }[]>()).toHaveLength(7);
    const preview = await sandbox(['--json', 'preview', '--from', '1d', '--no-samples']);
    expect(preview.code, preview.stderr).toBe(0);
    expect(preview.json<{ articles: number }>().articles).toBeGreaterThan(0);

    const status = await sandbox(['--json', 'sandbox', 'status']);
    expect(status.code).toBe(0);
    expect(status.json()).toMatchObject({ running: true, pid });

    const down = await sandbox(['sandbox', 'down']);
    expect(down.code, down.stderr).toBe(0);
    expect(down.stdout).toContain(`stopped the sandbox (process ${pid})`);
    expect(alive(pid)).toBe(false);
    expect(existsSync(descriptorPath)).toBe(false);

    const stopped = await sandbox(['sandbox', 'status']);
    expect(stopped.code).toBe(3);
    expect(stopped.stdout).toContain('no sandbox is running');
    const local = await sandbox(['rules', 'list']);
    expect(local.code).toBe(3);
  });
});
