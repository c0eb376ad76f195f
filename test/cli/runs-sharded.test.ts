/**
 * `news-alerts runs list` with sharded publishing: QUEUED (notifications the run put on the work
 * queue) and PUBLISHED (what the publishers reported) appear only when a listed run queued work,
 * a run whose items were still in flight shows how a later run settled them, and `--json` carries
 * the fields. Single-mode histories read exactly as before.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DynamoStateStore } from '#aws/dynamo-state-store';
import type { RunRecord } from '#core/ports';
import { type CliSandbox, startCliSandbox } from './support.ts';

let sandbox: CliSandbox;
beforeEach(async () => {
  sandbox = await startCliSandbox();
});
afterEach(async () => {
  await sandbox?.stop();
});

/** The run history as the alert run writes it (the state table's run items), in the sandbox. */
function history(): DynamoStateStore {
  return new DynamoStateStore({
    documents: sandbox.stack.clients.documents,
    tableName: sandbox.descriptor.names.stateTable,
  });
}

const base = Date.UTC(2026, 10, 20, 9, 0, 0);
const minute = 60_000;

/** A run record with the counts every run summary carries, and `extra` on top. */
function run(runId: string, startedAt: number, extra: Record<string, unknown>): RunRecord {
  return {
    runId,
    status: 'completed',
    startedAt,
    finishedAt: startedAt + 30_000,
    summary: {
      runId,
      articlesNew: 10,
      notificationsPublished: 0,
      notificationsHeld: 0,
      notificationsAlreadyDelivered: 0,
      notificationsFailed: 0,
      notificationsParked: 0,
      notificationsQueued: 0,
      workItemsQueued: 0,
      ...extra,
    },
  };
}

const dispatch = (dispatchId: string, state: string, counts: Record<string, number>) => ({
  dispatchId,
  state,
  items: 4,
  done: 4,
  published: 0,
  updateNotices: 0,
  alreadyDelivered: 0,
  parked: 0,
  ...counts,
});

/** TSV rows (what a pipe sees) as header → cell records. */
function tsv(stdout: string): Record<string, string>[] {
  const [header = '', ...lines] = stdout.trimEnd().split('\n');
  const head = header.split('\t');
  return lines.map((line) => Object.fromEntries(line.split('\t').map((cell, index) => [head[index], cell])));
}

interface RunListJson {
  runId: string;
  published?: number;
  queued?: number;
  workItemsQueued?: number;
  dispatch?: { state: string; published: number; done: number; items: number; settledBy?: string };
}

describe('runs list', () => {
  it('counts parked digests in PARKED beside parked alerts, as replay --parked sends both', async () => {
    await history().recordRun(run('parked-run', base, { notificationsParked: 1, digestsParked: 2 }));
    await history().recordRun(run('older-run', base - minute, { notificationsParked: undefined }));
    const rows = (await sandbox.cli(['--json', 'runs', 'list'])).json<{ runId: string; parked?: number }[]>();
    expect(rows.find((row) => row.runId === 'parked-run')?.parked).toBe(3);
    expect(rows.find((row) => row.runId === 'older-run')?.parked).toBeUndefined();
    const table = tsv((await sandbox.cli(['runs', 'list'])).stdout);
    expect(table.find((row) => row.STARTED?.startsWith('2026-11-20'))?.PARKED).toBe('3');
  });

  it('leaves QUEUED and PUBLISHED out while no listed run queued work (single mode)', async () => {
    const summary = await sandbox.stack.run();
    expect(summary.status).toBe('completed');
    const table = await sandbox.cli(['runs', 'list']);
    expect(table.code, table.stderr).toBe(0);
    const header = table.stdout.split('\n')[0]?.split('\t');
    expect(header).toContain('SENT');
    expect(header).not.toContain('QUEUED');
    expect(header).not.toContain('PUBLISHED');
    const [row] = (await sandbox.cli(['--json', 'runs', 'list'])).json<RunListJson[]>();
    expect(row?.dispatch).toBeUndefined();
  });

  it('shows what each sharded run queued and what its publishers published, in flight or given up', async () => {
    const state = history();
    // Oldest first: a single-mode run, a run whose items were in flight when it ended (settled by
    // the next one), that next run (its own items done within it), a run whose items were given up.
    await state.recordRun(run('single-run', base, { notificationsPublished: 7 }));
    await state.recordRun(
      run('run-a', base + 5 * minute, {
        notificationsQueued: 40,
        workItemsQueued: 4,
        dispatch: dispatch('run-a', 'in-flight', { done: 1, published: 9 }),
      }),
    );
    await state.recordRun(
      run('run-b', base + 10 * minute, {
        notificationsQueued: 12,
        workItemsQueued: 2,
        notificationsPublished: 12,
        settled: dispatch('run-a', 'completed', { published: 38, alreadyDelivered: 2 }),
        dispatch: dispatch('run-b', 'completed', { items: 2, done: 2, published: 12 }),
      }),
    );
    await state.recordRun(
      run('run-c', base + 15 * minute, {
        notificationsQueued: 30,
        workItemsQueued: 3,
        dispatch: dispatch('run-c', 'abandoned', { items: 3, done: 2, published: 20 }),
      }),
    );
    await state.recordRun(
      run('run-d', base + 20 * minute, {
        notificationsQueued: 5,
        workItemsQueued: 1,
        dispatch: dispatch('run-d', 'in-flight', { items: 1, done: 0 }),
      }),
    );

    const table = await sandbox.cli(['runs', 'list']);
    expect(table.code, table.stderr).toBe(0);
    const rows = tsv(table.stdout);
    const header = table.stdout.split('\n')[0]?.split('\t') ?? [];
    // The two columns sit after SENT, in that order.
    expect(header.slice(header.indexOf('SENT'), header.indexOf('SENT') + 3)).toEqual(['SENT', 'QUEUED', 'PUBLISHED']);
    expect(rows.map((row) => [row.QUEUED, row.PUBLISHED, row.SENT])).toEqual([
      ['5', 'in flight (0/1 items done)', '0'],
      ['30', 'abandoned (2/3 items done)', '0'],
      ['12', '12', '12'],
      // Ended with its items in flight; the next run found them all done.
      ['40', '38', '0'],
      // Single mode: nothing queued, nothing for publishers.
      ['-', '-', '7'],
    ]);

    const json = (await sandbox.cli(['--json', 'runs', 'list'])).json<RunListJson[]>();
    expect(json.map((row) => row.runId)).toEqual(['run-d', 'run-c', 'run-b', 'run-a', 'single-run']);
    expect(json[3]).toMatchObject({
      queued: 40,
      workItemsQueued: 4,
      dispatch: { state: 'completed', published: 38, done: 4, items: 4, settledBy: 'run-b' },
    });
    expect(json[1]).toMatchObject({ queued: 30, dispatch: { state: 'abandoned', done: 2, items: 3 } });
    expect(json[4]).toMatchObject({ runId: 'single-run', published: 7, queued: 0 });
    expect(json[4]?.dispatch).toBeUndefined();
  });

  it('lists a real sharded run made by `run` in a sharded sandbox with what its publishers published', async () => {
    await sandbox.stop();
    // The publisher runs in this process (the sandbox's); the run in the CLI process queues for it.
    sandbox = await startCliSandbox({ publishMode: 'sharded' });
    const run = await sandbox.cli(['--json', 'run']);
    expect(run.code, run.stderr).toBe(0);
    const summary = run.json<{
      summary: { runId: string; notificationsQueued: number; dispatch?: { state: string; published: number } };
    }>().summary;
    expect(summary.notificationsQueued).toBeGreaterThan(0);
    expect(summary.dispatch).toMatchObject({ state: 'completed' });
    const delivered = await sandbox.stack.collectDeliveries();
    expect(delivered.length).toBeGreaterThan(0);
    expect(summary.dispatch?.published).toBe(delivered.filter((notification) => notification.kind === 'alert').length);

    const table = await sandbox.cli(['runs', 'list']);
    expect(table.code, table.stderr).toBe(0);
    expect(tsv(table.stdout)[0]).toMatchObject({
      QUEUED: String(summary.notificationsQueued),
      PUBLISHED: String(summary.dispatch?.published),
    });
    const [row] = (await sandbox.cli(['--json', 'runs', 'list'])).json<RunListJson[]>();
    expect(row).toMatchObject({
      runId: summary.runId,
      queued: summary.notificationsQueued,
      dispatch: { state: 'completed' },
    });
  });

  it('reads a damaged dispatch in a run record as none, and lists the rest', async () => {
    const state = history();
    await state.recordRun(
      run('damaged', base, { notificationsQueued: 3, dispatch: { dispatchId: 42, state: 'exploded' } }),
    );
    await state.recordRun(run('fine', base + minute, { notificationsPublished: 2 }));
    const table = await sandbox.cli(['runs', 'list']);
    expect(table.code, table.stderr).toBe(0);
    expect(tsv(table.stdout).map((row) => [row.QUEUED, row.PUBLISHED])).toEqual([
      ['-', '-'],
      ['3', '-'],
    ]);
  });
});
