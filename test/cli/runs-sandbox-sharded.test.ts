/**
 * `news-alerts sandbox up --publish-mode sharded` as an ops person runs it: the background sandbox
 * hosts the publisher, so `run` (a separate CLI process) queues work items that the sandbox's
 * publisher sends within the run; `runs list` shows queued against published; `replay --parked`
 * reads the sandbox's work dead-letter queue; `sandbox down` stops it all.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readDescriptor } from '../../cli/sandbox-descriptor.ts';
import { runCli } from './support.ts';

const dir = mkdtempSync(join(tmpdir(), 'news-alerts-sandbox-sharded-'));
const descriptorPath = join(dir, 'sandbox.json');
const sandbox = (args: readonly string[]) => runCli(['--sandbox-file', descriptorPath, ...args]);

afterAll(async () => {
  // Never leave the background process behind, even when an assertion failed half way.
  if (existsSync(descriptorPath)) await sandbox(['sandbox', 'down']);
  rmSync(dir, { recursive: true, force: true });
});

describe('sandbox up --publish-mode sharded', () => {
  it('refuses a mode other than single or sharded', async () => {
    const up = await sandbox(['sandbox', 'up', '--publish-mode', 'parallel']);
    expect(up.code).toBe(2);
    expect(up.stderr).toContain('--publish-mode');
    expect(up.stderr).toContain('single, sharded');
    expect(existsSync(descriptorPath)).toBe(false);
  });

  it('runs the publisher in the sandbox: a CLI run queues, the sandbox publishes, runs list shows both', async () => {
    const up = await sandbox(['sandbox', 'up', '--publish-mode', 'sharded']);
    expect(up.code, up.stderr).toBe(0);
    const descriptor = readDescriptor(descriptorPath);
    expect(descriptor.names.workQueueUrl).toBeDefined();
    expect(descriptor.names.workDeadLetterQueueUrl).toBeDefined();
    expect(descriptor.alertEnvironment).toMatchObject({
      PUBLISH_MODE: 'sharded',
      WORK_QUEUE_URL: descriptor.names.workQueueUrl,
    });

    const run = await sandbox(['--json', 'run']);
    expect(run.code, run.stderr).toBe(0);
    const summary = run.json<{
      summary: {
        notificationsQueued: number;
        dispatch?: { state: string; published: number; done: number; items: number };
      };
    }>().summary;
    expect(summary.notificationsQueued).toBeGreaterThan(0);
    expect(summary.dispatch).toMatchObject({ state: 'completed' });
    expect(summary.dispatch?.done).toBe(summary.dispatch?.items);
    expect(summary.dispatch?.published).toBeGreaterThan(0);

    const list = await sandbox(['runs', 'list']);
    expect(list.code, list.stderr).toBe(0);
    const [header = '', first = ''] = list.stdout.split('\n');
    const row = Object.fromEntries(first.split('\t').map((cell, index) => [header.split('\t')[index], cell]));
    expect(row).toMatchObject({
      QUEUED: String(summary.notificationsQueued),
      PUBLISHED: String(summary.dispatch?.published),
    });

    // The work dead-letter queue is read (and empty): nothing to park, nothing sent.
    const parked = await sandbox(['--json', 'replay', '--parked', '--dry-run']);
    expect(parked.code, parked.stderr).toBe(0);
    expect(parked.json()).toMatchObject({ workDeadLetters: { items: 0, alerts: 0, unreadable: [] } });

    const down = await sandbox(['sandbox', 'down']);
    expect(down.code, down.stderr).toBe(0);
    expect(existsSync(descriptorPath)).toBe(false);
  }, 240_000);
});
