/**
 * `npm start -- --publish-mode sharded` as a user runs it, in a real process with its own moto
 * server and simulator: the runs queue work items, the in-process publisher sends them, and every
 * example audience still receives exactly what its rules match (the same checks as single mode),
 * nothing twice, across two cycles; what it prints says which mode ran and shows queued against
 * published. A mode other than single or sharded is a usage error naming the flag and the values.
 */
import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';

const now = Date.parse('2026-11-22T09:00:00+09:00');

function npmStart(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('npm', ['start', '--silent', '--', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

interface RunDispatchJson {
  dispatchId: string;
  state: string;
  items: number;
  done: number;
  published: number;
  updateNotices: number;
  alreadyDelivered: number;
  parked: number;
}

interface ShardedStartSummary {
  ok: boolean;
  publishMode: string;
  publisher?: { invocations: number; records: number; deleted: number; failed: number; maxConcurrent: number };
  cycles: {
    run: {
      status: string;
      runId: string;
      notificationsQueued: number;
      workItemsQueued: number;
      notificationsPublished: number;
      dispatch?: RunDispatchJson;
    };
    received: Record<string, { articleKey: string }[]>;
  }[];
  audiences: Record<string, { missing: string[]; unexpected: string[]; duplicates: string[] }>;
}

describe('npm start --publish-mode sharded', () => {
  it('--json: the publishers deliver what the runs queued, and every audience receives exactly its matches', async () => {
    const { code, stdout, stderr } = await npmStart([
      '--cycles',
      '2',
      '--json',
      '--publish-mode',
      'sharded',
      '--now',
      new Date(now).toISOString(),
    ]);
    expect(code, stderr.slice(-2000)).toBe(0);
    const summary = JSON.parse(stdout) as ShardedStartSummary;
    expect(summary.ok).toBe(true);
    expect(summary.publishMode).toBe('sharded');
    expect(summary.cycles).toHaveLength(2);
    let records = 0;
    for (const cycle of summary.cycles) {
      const { run } = cycle;
      expect(run.status).toBe('completed');
      expect(run.notificationsQueued).toBeGreaterThan(0);
      // Each run waited for its own work items: all done, within the run.
      expect(run.dispatch).toMatchObject({
        dispatchId: expect.stringContaining(run.runId),
        state: 'completed',
        items: run.workItemsQueued,
      });
      const dispatch = run.dispatch as RunDispatchJson;
      expect(dispatch.done).toBe(dispatch.items);
      // Everything queued is accounted for by the publishers, and nothing was parked.
      expect(dispatch.published + dispatch.updateNotices + dispatch.alreadyDelivered).toBe(run.notificationsQueued);
      expect(dispatch.parked).toBe(0);
      // What the audiences received (alerts, not update notices) is what the publishers published.
      const alerts = Object.values(cycle.received).flat().length;
      expect(alerts).toBeGreaterThanOrEqual(dispatch.published);
      records += run.workItemsQueued;
    }
    // The same checks as single mode: nothing missing, nothing unexpected, nothing twice.
    expect(Object.keys(summary.audiences).length).toBeGreaterThan(0);
    for (const [audienceId, check] of Object.entries(summary.audiences)) {
      expect(check, audienceId).toMatchObject({ missing: [], unexpected: [], duplicates: [] });
    }
    // The emulated event source handed every item over once, none failed, and it ran batches in parallel.
    expect(summary.publisher).toMatchObject({ records, deleted: records, failed: 0 });
    expect(summary.publisher?.maxConcurrent).toBeGreaterThanOrEqual(1);
  }, 300_000);

  it('prints which mode ran and what each cycle queued against what the publishers published', async () => {
    const { code, stdout, stderr } = await npmStart([
      '--once',
      '--publish-mode',
      'sharded',
      '--now',
      new Date(now).toISOString(),
    ]);
    expect(code, stderr.slice(-2000)).toBe(0);
    expect(stderr).toContain('publish mode sharded: runs queue work items on');
    expect(stdout).toMatch(/\n {2}Queued (\d+) notifications in \d+ work items → the publishers published \d+/);
    expect(stdout).toMatch(/\n {2}The run itself: \d+ published · /);
    expect(stdout).not.toContain('✗');
  }, 300_000);

  it('refuses a publish mode other than single or sharded (a usage error: exit 2)', async () => {
    const { code, stdout, stderr } = await npmStart(['--once', '--publish-mode', 'parallel']);
    expect(code).toBe(2);
    expect(stdout).toBe('');
    expect(stderr).toContain("'--publish-mode <mode>'");
    expect(stderr).toContain('must be "single" or "sharded"');
    expect(stderr.trim().split('\n')).toHaveLength(2);
  });
});
