/**
 * `news-alerts run`, `runs list` and `watermark show|set|rewind` end to end: a run triggered from
 * a real CLI process with `--local` (the same wiring as the Lambda handler), its history and
 * watermark, moving the watermark with confirmation and the optimistic lock, and the lease that
 * keeps a CLI run or replay from overlapping a run in progress.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type CliSandbox, startCliSandbox } from './support.ts';

let sandbox: CliSandbox;
// A sandbox of its own for every test, so each starts from the example set in any order
// (--sequence.shuffle).
beforeEach(async () => {
  sandbox = await startCliSandbox();
});
afterEach(async () => {
  await sandbox?.stop();
});

interface RunJson {
  summary: {
    runId: string;
    status: string;
    notificationsPublished: number;
    notificationsAlreadyDelivered: number;
    watermarkAfter: number;
    reason?: string;
  };
}

interface WatermarkJson {
  watermark: { at: number; version: number; lagMs: number; runId: string } | null;
  runs: { runId: string; status: string; kind: string }[];
}

describe('run, runs list and watermark', () => {
  it('runs a cycle from the CLI, shows it in the history and the watermark, and moves the watermark on request', async () => {
    const empty = await sandbox.cli(['--json', 'watermark', 'show']);
    expect(empty.json<WatermarkJson>()).toMatchObject({ watermark: null, runs: [] });

    const run = await sandbox.cli(['--json', 'run']);
    expect(run.code, run.stderr).toBe(0);
    const { summary } = run.json<RunJson>();
    expect(summary.status).toBe('completed');
    expect(summary.notificationsPublished).toBeGreaterThan(0);
    const delivered = await sandbox.stack.collectDeliveries();
    expect(delivered).toHaveLength(summary.notificationsPublished);

    const runs = await sandbox.cli(['--json', 'runs', 'list']);
    expect(runs.json<{ runId: string; status: string; published: number }[]>()).toEqual([
      expect.objectContaining({ runId: summary.runId, status: 'completed', published: summary.notificationsPublished }),
    ]);
    const shown = (await sandbox.cli(['--json', 'watermark', 'show'])).json<WatermarkJson>();
    expect(shown.watermark).toMatchObject({ at: summary.watermarkAfter, runId: summary.runId });
    expect(shown.watermark?.lagMs).toBeGreaterThanOrEqual(0);
    expect(shown.runs[0]?.runId).toBe(summary.runId);
    const version = shown.watermark?.version ?? 0;

    // Moving it needs a confirmation; without a terminal that is --yes.
    const unconfirmed = await sandbox.cli(['watermark', 'rewind', '2h']);
    expect(unconfirmed.code).toBe(2);
    expect(unconfirmed.stderr).toContain('Pass --yes to confirm');
    expect((await sandbox.stack.dependencies.state.readWatermark())?.version).toBe(version);

    const rewound = await sandbox.cli(['--json', '--actor', 'frank', 'watermark', 'rewind', '2h', '--yes']);
    expect(rewound.code, rewound.stderr).toBe(0);
    expect(rewound.json()).toMatchObject({
      previous: { at: summary.watermarkAfter, version },
      watermark: { at: summary.watermarkAfter - 2 * 3_600_000, version: version + 1, runId: 'cli:frank' },
    });

    // Refused: the future, further back than the ledger remembers, and nonsense.
    const [future, tooOld, nonsense] = await Promise.all([
      sandbox.cli(['watermark', 'set', new Date(Date.now() + 3_600_000).toISOString(), '--yes']),
      sandbox.cli(['watermark', 'set', '30d', '--yes']),
      sandbox.cli(['watermark', 'rewind', 'a-while', '--yes']),
    ]);
    expect(future.code).toBe(2);
    expect(future.stderr).toContain('is in the future');
    expect(tooOld.code).toBe(2);
    expect(tooOld.stderr).toContain("more than the delivery ledger's 14 days back");
    expect(nonsense.code).toBe(2);
    expect((await sandbox.stack.dependencies.state.readWatermark())?.version).toBe(version + 1);

    // The next run re-reads the rewound two hours: the ledger keeps every alert from going out twice.
    const again = await sandbox.cli(['run']);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toMatch(/alerts sent\s+│ 0 /);
    expect(await sandbox.stack.collectDeliveries()).toEqual([]);

    // Two days back from the sandbox's clock (the system clock): inside the ledger's 14 days on any date.
    const twoDaysBack = new Date(Math.floor((Date.now() - 2 * 86_400_000) / 1000) * 1000).toISOString();
    const set = await sandbox.cli(['--json', 'watermark', 'set', twoDaysBack, '--yes']);
    expect(set.code, set.stderr).toBe(0);
    expect((await sandbox.stack.dependencies.state.readWatermark())?.at).toBe(Date.parse(twoDaysBack));
  });

  it('a run or replay started while another run holds the lease does nothing and exits 1', async () => {
    const state = sandbox.stack.dependencies.state;
    const lease = await state.acquireLease('scheduled-run', 60_000, Date.now());
    try {
      const run = await sandbox.cli(['--json', 'run']);
      expect(run.code).toBe(1);
      expect(run.json<RunJson>().summary).toMatchObject({ status: 'skipped' });
      expect(run.stderr).toContain('the run was skipped');
      const replay = await sandbox.cli(['replay', '--from', '1h']);
      expect(replay.code).toBe(1);
      expect(replay.stderr).toContain('an alert run is in progress');
    } finally {
      await state.releaseLease(lease);
    }
    expect(await sandbox.stack.collectDeliveries()).toEqual([]);
  });
});
