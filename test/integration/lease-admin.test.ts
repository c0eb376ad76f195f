/**
 * The run lease as ops see and clear it (issue 10, item 7): DynamoStateStore's readLease,
 * renewLease and clearLease against moto, and how the CLI tells a live holder from a dead one.
 * Clearing is conditional on the owner token and expiry that were read, so a lease renewed or
 * taken in the meantime is never removed; a holder whose lease was cleared cannot renew it.
 */
import { describe, expect, it } from 'vitest';
import { DynamoStateStore } from '#aws/dynamo-state-store';
import { LeaseLostError } from '#core/errors';
import { LeaseChangedError, silentLog } from '#core/ports';
import { createTables, tableNamesFor } from '#sandbox/tables';
import { awsClients, uniquePrefix } from '#test/aws';
import { assessLease } from '../../cli/lease.ts';

const t0 = Date.parse('2026-11-22T09:00:00Z');
const minute = 60_000;

async function store(): Promise<DynamoStateStore> {
  const clients = awsClients();
  const names = tableNamesFor(uniquePrefix());
  await createTables(clients.dynamo, names);
  return new DynamoStateStore({ documents: clients.documents, tableName: names.state, log: silentLog, now: () => t0 });
}

describe('run lease administration', () => {
  it('reads the lease with its holder, renews it for its owner only, and clears only the lease that was read', async () => {
    const state = await store();
    expect(await state.readLease()).toBeUndefined();

    const lease = await state.acquireLease('cli-a', minute, t0, { host: 'ops-box', pid: 4242, renewEveryMs: 20_000 });
    expect(await state.readLease()).toEqual({
      owner: 'cli-a',
      expiresAt: t0 + minute,
      acquiredAt: t0,
      renewedAt: undefined,
      host: 'ops-box',
      pid: 4242,
      renewEveryMs: 20_000,
    });

    const renewed = await state.renewLease(lease, minute, t0 + 20_000);
    expect(renewed).toEqual({ owner: 'cli-a', expiresAt: t0 + 20_000 + minute });
    expect(await state.readLease()).toMatchObject({ expiresAt: renewed.expiresAt, renewedAt: t0 + 20_000 });

    // What ops saw before the renewal is no longer the lease: clearing it is refused.
    await expect(state.clearLease(lease)).rejects.toBeInstanceOf(LeaseChangedError);
    expect((await state.readLease())?.owner).toBe('cli-a');

    // The lease expires, another run takes it: a clear of the old one must not remove the new one.
    const taken = await state.acquireLease('scheduled-run', 16 * minute, t0 + 5 * minute);
    await expect(state.clearLease(renewed)).rejects.toBeInstanceOf(LeaseChangedError);
    expect((await state.readLease())?.owner).toBe('scheduled-run');
    // And the old holder cannot renew its way back in.
    await expect(state.renewLease(renewed, minute, t0 + 5 * minute)).rejects.toBeInstanceOf(LeaseLostError);

    await state.clearLease(taken);
    expect(await state.readLease()).toBeUndefined();
    await expect(state.renewLease(taken, minute, t0 + 6 * minute)).rejects.toThrow(/is gone/);
  });

  it('tells a live holder from a dead one', () => {
    const here = { host: 'ops-box', alive: (pid: number) => pid === 1000 };
    const cliLease = { owner: 'cli-a', expiresAt: t0 + minute, acquiredAt: t0, renewEveryMs: 20_000, host: 'ops-box' };
    expect(assessLease({ ...cliLease, pid: 1000 }, t0 + 10_000, here).state).toBe('live');
    expect(assessLease({ ...cliLease, pid: 1001 }, t0 + 10_000, here)).toMatchObject({
      state: 'stale',
      reason: expect.stringContaining('process 1001 on this host is gone'),
    });
    // On another host only the renewals tell: three missed ones mean the holder is gone.
    const remote = { ...cliLease, host: 'other-box', pid: 1000, expiresAt: t0 + 10 * minute };
    expect(assessLease(remote, t0 + 50_000, here).state).toBe('live');
    expect(assessLease(remote, t0 + 61_000, here).state).toBe('stale');
    expect(assessLease({ ...remote, renewedAt: t0 + 60_000 }, t0 + 61_000, here).state).toBe('live');
    // A scheduled run says nothing about itself: trusted until its lease expires.
    const scheduled = { owner: 'lambda-run', expiresAt: t0 + 16 * minute, acquiredAt: t0 };
    expect(assessLease(scheduled, t0 + 15 * minute, here).state).toBe('live');
    expect(assessLease(scheduled, t0 + 16 * minute, here).state).toBe('stale');
  });
});
