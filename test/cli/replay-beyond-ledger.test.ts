/**
 * `replay --from` further back than the delivery ledger remembers (LEDGER_RETENTION_DAYS after
 * delivery) would send again the alerts the ledger has forgotten: refused without --force, as
 * `watermark set` refuses; a dry run warns (found by a reviewer: it resent them without a word).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CliSandbox, startCliSandbox } from './support.ts';

let sandbox: CliSandbox;
beforeAll(async () => {
  sandbox = await startCliSandbox();
});
afterAll(async () => {
  await sandbox?.stop();
});

const beyond = "is more than the delivery ledger's 14 days back";
/** A replay of one day, `from` and `to` spans back, for the quake-oncall audience. */
const replay = (from: string, to: string, ...options: string[]) =>
  sandbox.cli(['replay', '--from', from, '--to', to, ...options, '--audience', 'quake-oncall']);

describe('replay of a window older than the ledger remembers', () => {
  it('is refused without --force, sending and recording nothing', async () => {
    const refused = await replay('15d', '14d');
    expect(refused.code, refused.stderr).toBe(2);
    expect(refused.stderr).toContain(beyond);
    expect(refused.stderr).toContain('add --force if sending them again is what you want');
    expect(await sandbox.stack.collectDeliveries()).toEqual([]);
    const runs = await sandbox.cli(['--json', 'runs', 'list']);
    expect(runs.code, runs.stderr).toBe(0);
    expect(JSON.stringify(JSON.parse(runs.stdout))).not.toContain('replay');
  });

  it('warns on a dry run and with --force, and not for a window the ledger covers', async () => {
    const dryRun = await replay('15d', '14d', '--dry-run');
    expect(dryRun.code, dryRun.stderr).toBe(0);
    expect(dryRun.stderr).toContain(beyond);
    expect(dryRun.stderr).toContain('ALREADY DELIVERED does not count them');
    const inside = await replay('13d', '12d', '--dry-run');
    expect(inside.code, inside.stderr).toBe(0);
    expect(inside.stderr).not.toContain('delivery ledger');
    const forced = await replay('15d', '14d', '--force');
    expect(forced.code, forced.stderr).toBe(0);
    expect(forced.stderr).toContain(beyond);
  });

  it('takes --force only with --from', async () => {
    const parked = await sandbox.cli(['replay', '--parked', '--force']);
    expect(parked.code).toBe(2);
    expect(parked.stderr).toContain('--force goes with --from');
  });
});
