/**
 * `news-alerts run`, `runs list` and `watermark show|set|rewind` end to end: a run triggered from
 * a real CLI process with `--local` (the same wiring as the Lambda handler), its history and
 * watermark, moving the watermark with confirmation and the optimistic lock, and the lease that
 * keeps a CLI run or replay from overlapping a run in progress.
 */
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type CliSandbox, runCli, startCliSandbox } from './support.ts';

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

/** The value of a field row (`name  value`, `│ name │ value │` or `name<TAB>value`) in human output. */
function fieldOf(stdout: string, name: string): string | undefined {
  for (const line of stdout.split('\n')) {
    const cells = line
      .split(/[│|\t]|\s{2,}/)
      .map((cell) => cell.trim())
      .filter((cell) => cell !== '');
    if (cells[0] === name) return cells[1];
  }
  return undefined;
}

interface HeldRunJson {
  summary: {
    runId: string;
    startedAt: number;
    finishedAt: number;
    notificationsHeld: number;
    heldForDigest: number;
    digestsSent: number;
    digestItemsReleased: number;
    audiences: Record<string, { matched: number; published: number; held: number; collapsed: number }>;
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
    const [future, tooOld, nonsense, ages] = await Promise.all([
      sandbox.cli(['watermark', 'set', new Date(Date.now() + 3_600_000).toISOString(), '--yes']),
      sandbox.cli(['watermark', 'set', '30d', '--yes']),
      sandbox.cli(['watermark', 'rewind', 'a-while', '--yes']),
      // A date typed as a span: 55,000 years back, which --force must not store either.
      sandbox.cli(['watermark', 'rewind', '20261121d', '--yes', '--force']),
    ]);
    expect(ages.code).toBe(2);
    expect(ages.stderr).toContain('rewind "20261121d" falls before 1970');
    expect(future.code).toBe(2);
    expect(future.stderr).toContain('is in the future');
    expect(tooOld.code).toBe(2);
    expect(tooOld.stderr).toContain("more than the delivery ledger's 14 days back");
    expect(nonsense.code).toBe(2);
    expect((await sandbox.stack.dependencies.state.readWatermark())?.version).toBe(version + 1);

    // The next run re-reads the rewound two hours: the ledger keeps every alert from going out twice.
    const again = await sandbox.cli(['run']);
    expect(again.code, again.stderr).toBe(0);
    // Any table layout (boxed, borderless or TSV): the field's row reads "alerts sent" then 0.
    expect(fieldOf(again.stdout, 'alerts sent')).toBe('0');
    // No page was parked: no line saying so.
    expect(fieldOf(again.stdout, 'provider pages parked')).toBeUndefined();
    expect(await sandbox.stack.collectDeliveries()).toEqual([]);

    // Two days back from the sandbox's clock (the system clock): inside the ledger's 14 days on any date.
    const twoDaysBack = new Date(Math.floor((Date.now() - 2 * 86_400_000) / 1000) * 1000).toISOString();
    const set = await sandbox.cli(['--json', 'watermark', 'set', twoDaysBack, '--yes']);
    expect(set.code, set.stderr).toBe(0);
    expect((await sandbox.stack.dependencies.state.readWatermark())?.at).toBe(Date.parse(twoDaysBack));

    // Edited by hand to an instant no provider date exists for: the run says so and how to mend
    // it, and `watermark set` does (it could not read the item, so it could not set it either).
    await sandbox.stack.clients.documents.send(
      new UpdateCommand({
        TableName: sandbox.descriptor.names.stateTable,
        Key: { pk: 'watermark', sk: 'current' },
        // The version too: a repair that added to it would fail on a string.
        UpdateExpression: 'SET #at = :at, #version = :version',
        ExpressionAttributeNames: { '#at': 'at', '#version': 'version' },
        ExpressionAttributeValues: { ':at': -1_686_000_000_000_000, ':version': 'three' },
      }),
    );
    const damaged = await sandbox.cli(['run']);
    expect(damaged.code).toBe(1);
    expect(damaged.stdout + damaged.stderr).toContain("fix it with 'news-alerts watermark set'");
    const mended = await sandbox.cli(['--json', 'watermark', 'set', twoDaysBack, '--yes']);
    expect(mended.code, mended.stderr).toBe(0);
    expect(mended.stderr).toContain('setting it replaces the damaged item');
    expect(mended.json()).toMatchObject({ previous: null, replacedMalformed: true });
    expect((await sandbox.stack.dependencies.state.readWatermark())?.at).toBe(Date.parse(twoDaysBack));
  });

  it('a provider page parked as poison shows in the run summary, with what to do, and in runs list', async () => {
    // Every item of every provider day's second page is malformed while the fault lasts.
    sandbox.stack.simulator?.faults.inject({ kind: 'poison', page: 2, times: 1000 });
    const run = await sandbox.cli(['run']);
    expect(run.code, run.stderr).toBe(0);
    const [rows, table] = await Promise.all([sandbox.cli(['--json', 'runs', 'list']), sandbox.cli(['runs', 'list'])]);
    const [record] = rows.json<{ status: string; parked: number; pagesParked: number }[]>();
    expect(record).toMatchObject({ status: 'completed', parked: 0, pagesParked: expect.any(Number) });
    const pages = record?.pagesParked ?? 0;
    expect(pages).toBeGreaterThan(0);
    // Where the pages are, and what docs/operate.md ("pages-parked") says to do: re-read the day
    // once the data is fixed.
    const line = fieldOf(run.stdout, 'provider pages parked');
    expect(line).toMatch(new RegExp(`^${pages} \\(\\d{4}-\\d{2}-\\d{2} page 2\\b`));
    expect(line).toContain('those articles were not delivered');
    expect(line).toMatch(
      new RegExp(`'news-alerts --sandbox-file ${sandbox.descriptorPath} watermark set \\d{4}-\\d{2}-\\d{2}'`),
    );
    // PARKED: the notifications parked, plus the pages.
    expect(table.code, table.stderr).toBe(0);
    const [head, first] = table.stdout.split('\n').map((row) => row.split('\t'));
    expect(first?.[head?.indexOf('PARKED') ?? -1]).toBe(`0 + ${pages} page(s)`);
  });

  it('a run or replay started while another run holds the lease does nothing and exits 1', async () => {
    const state = sandbox.stack.dependencies.state;
    const lease = await state.acquireLease('scheduled-run', 60_000, Date.now());
    try {
      const run = await sandbox.cli(['--json', 'run']);
      expect(run.code).toBe(1);
      // Under --json a failure is one document: ok: false, the error and the run's summary (never
      // the summary followed by a second document).
      // `lease_held`, as documented for a run in progress (docs/ops-guide.md, exit codes), not `failed`.
      expect(run.json()).toMatchObject({
        ok: false,
        error: { code: 'lease_held', message: expect.stringContaining('the run was skipped') },
        summary: { status: 'skipped' },
      });
      // Who holds the lease, until when, and how to clear it when its holder is gone.
      expect(run.stderr).toContain('the run was skipped');
      expect(run.stderr).toContain('held by scheduled-run');
      expect(run.stderr).toContain(`expires ${new Date(lease.expiresAt).toISOString().replace('.000Z', 'Z')}`);
      expect(run.stderr).toContain(`'news-alerts --sandbox-file ${sandbox.descriptorPath} lease release'`);
      // The human summary does not claim there is no watermark: the skipped run never read it.
      const human = await sandbox.cli(['run']);
      expect(human.code).toBe(1);
      expect(human.stdout).toMatch(/^watermark\t\(not read: the run was skipped\)$/m);
      const replay = await sandbox.cli(['replay', '--from', '1h']);
      expect(replay.code).toBe(1);
      expect(replay.stderr).toContain('an alert run is in progress');
      expect(replay.stderr).toContain('held by scheduled-run');
      expect(replay.stderr).toContain(`'news-alerts --sandbox-file ${sandbox.descriptorPath} lease release'`);
      const replayJson = await sandbox.cli(['--json', 'replay', '--from', '1h']);
      expect(replayJson.code).toBe(1);
      expect(replayJson.json()).toMatchObject({
        ok: false,
        error: { code: 'lease_held', message: expect.stringContaining('an alert run is in progress') },
      });
    } finally {
      await state.releaseLease(lease);
    }
    expect(await sandbox.stack.collectDeliveries()).toEqual([]);
  });

  it('shows HELD next to SENT, and run --now releases a digest at its time in the sandbox (refused on a stack)', async () => {
    // Chips team gets a digest at 08:00 in Seoul (UTC+9, no daylight saving: 23:00 UTC).
    const update = await sandbox.cli([
      'audiences',
      'update',
      'chips-team',
      '--delivery-mode',
      'digest',
      '--digest-times',
      '08:00',
    ]);
    expect(update.code, update.stderr).toBe(0);

    const run = await sandbox.cli(['--json', 'run']);
    expect(run.code, run.stderr).toBe(0);
    const { summary } = run.json<HeldRunJson>();
    const chips = summary.audiences['chips-team'];
    expect(chips?.matched).toBeGreaterThan(0);
    // chips-team collapses stories: copies of a story it already holds are recorded, not held.
    const held = (chips?.matched ?? 0) - (chips?.collapsed ?? 0);
    expect(held).toBeGreaterThan(0);
    expect(chips).toMatchObject({ published: 0, held });
    expect(summary).toMatchObject({ notificationsHeld: held, heldForDigest: held, digestsSent: 0 });

    const runs = (await sandbox.cli(['--json', 'runs', 'list'])).json<{ runId: string; held: number }[]>();
    expect(runs[0]).toMatchObject({ runId: summary.runId, held, heldForDigest: held });
    const table = await sandbox.cli(['runs', 'list']);
    expect(table.stdout).toContain('HELD');

    // The clock at the next 08:00 in Seoul (plus a minute), computed from the sandbox's clock.
    const day = 86_400_000;
    // After the run finished, so every hold it made (at most then) is due by that release.
    const at23Utc = Math.floor(summary.finishedAt / day) * day + 23 * 3_600_000;
    const release = (at23Utc > summary.finishedAt ? at23Utc : at23Utc + day) + 60_000;
    const digest = await sandbox.cli(['--json', 'run', '--now', new Date(release).toISOString()]);
    expect(digest.code, digest.stderr).toBe(0);
    const released = digest.json<HeldRunJson>().summary;
    expect(released.startedAt).toBeGreaterThanOrEqual(release);
    expect(released.digestsSent).toBeGreaterThanOrEqual(1);
    expect(released.digestItemsReleased).toBe(held);
    const delivered = await sandbox.stack.collectDeliveries();
    const digests = delivered.filter(
      (delivery) =>
        delivery.audienceId === 'chips-team' && (delivery.body.newsAlerts as { kind?: string }).kind === 'digest',
    );
    expect(digests.length).toBe(released.digestsSent);

    // --now takes the forms watermark set takes, and only in the sandbox.
    const nonsense = await sandbox.cli(['run', '--now', 'tomorrow-ish']);
    expect(nonsense.code).toBe(2);
    expect(nonsense.stderr).toContain('--now "tomorrow-ish"');
    const stack = await runCli(['--region', 'us-east-1', 'run', '--now', '2h'], {
      env: { AWS_ACCESS_KEY_ID: 'testing', AWS_SECRET_ACCESS_KEY: 'testing', AWS_ENDPOINT_URL: 'http://127.0.0.1:9' },
    });
    expect(stack.code, stack.stderr).toBe(2);
    expect(stack.stderr).toContain('--now only works in the sandbox');
  });
});

describe('a watermark ahead of the clock', () => {
  it('run --now into the future and watermark show both say it is ahead and how to move it back, not a negative lag', async () => {
    const future = new Date(Date.now() + 16 * 60 * 60_000).toISOString();
    const run = await sandbox.cli(['run', '--now', future]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toMatch(/^warning: the watermark \S+ is 1[56]h \d\dm ahead of this machine's clock/m);
    expect(run.stderr).toContain(`'news-alerts --sandbox-file ${sandbox.descriptorPath} watermark set <when>'`);

    const [show, json] = await Promise.all([
      sandbox.cli(['watermark', 'show']),
      sandbox.cli(['--json', 'watermark', 'show']),
    ]);
    expect(show.code, show.stderr).toBe(0);
    expect(fieldOf(show.stdout, 'lag')).toMatch(/^none: 1[56]h \d\dm AHEAD of the clock$/);
    expect(show.stdout).not.toMatch(/-\d+h/);
    expect(show.stderr).toMatch(/^warning: the watermark .* ahead of this machine's clock/m);
    expect(json.json<{ watermark: { lagMs: number; aheadOfClock: boolean } }>().watermark).toMatchObject({
      aheadOfClock: true,
      lagMs: expect.any(Number),
    });
    expect(json.json<{ watermark: { lagMs: number } }>().watermark.lagMs).toBeLessThan(0);

    // Moved back, nothing is ahead any more.
    const set = await sandbox.cli(['watermark', 'set', '1h', '--yes']);
    expect(set.code, set.stderr).toBe(0);
    const after = await sandbox.cli(['watermark', 'show']);
    expect(fieldOf(after.stdout, 'lag')).toMatch(/^1h 0\dm$/);
    expect(after.stderr).not.toContain('ahead');
  });
});
