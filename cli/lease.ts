/**
 * The run lease as the CLI sees it: a CLI run or replay holds a short lease that it renews while
 * it works (so a killed CLI blocks the schedule for about a minute, not for a Lambda-sized
 * lease), how `watermark show` and `runs list` describe the lease, and `news-alerts lease release`
 * for a lease whose holder died.
 *
 * Clearing a lease is safe only when its holder cannot still be working: a second runner would
 * check the ledger for the same alerts at the same time and could send them twice. So the command
 * tells a dead holder from a live one (expired; not renewed for three of its renewal intervals;
 * its process gone on this host) and refuses a live one unless forced. The delete is conditional
 * on the owner token and expiry that were shown, so a lease renewed or taken in the meantime is
 * never removed.
 */
import { hostname } from 'node:os';
import type { Command } from 'commander';
import type { DynamoStateStore } from '#aws/dynamo-state-store';
import { LeaseLostError } from '#core/errors';
import { type Lease, LeaseChangedError, type LeaseHolder, type LeaseRecord } from '#core/ports';
import { action } from './command.ts';
import type { CommandContext } from './context.ts';
import { ConcurrentChangeError, OperationFailedError } from './errors.ts';
import { newsAlerts } from './hints.ts';
import { formatDuration, formatInstant } from './output.ts';
import { stateStoreOf } from './state-store.ts';

/**
 * Lease length of a CLI run or replay. It is renewed every third of that while the command
 * works, so a live command never loses it, and a killed one frees the schedule within a minute.
 */
export const cliLeaseMs = 60_000;

/** A lease not renewed for this many of its holder's renewal intervals has a dead holder. */
const missedRenewals = 3;

/** How this process describes itself in a lease it takes. */
export const thisProcess = (renewEveryMs: number): LeaseHolder => ({
  host: hostname(),
  pid: process.pid,
  renewEveryMs,
});

/** Whether a process id is alive on this host (EPERM: alive, owned by another user). */
function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** What can be said about the holder of a lease at `now`. */
export interface LeaseAssessment {
  /** `stale`: its holder cannot still be working (expired, stopped renewing, or its process is gone). */
  readonly state: 'live' | 'stale';
  readonly reason: string;
}

/** Tells a live lease holder from a dead one (see the module comment). */
export function assessLease(
  lease: LeaseRecord,
  now: number,
  here: { host: string; alive: (pid: number) => boolean } = { host: hostname(), alive: processAlive },
): LeaseAssessment {
  if (!Number.isFinite(lease.expiresAt)) return { state: 'stale', reason: 'the lease item is malformed' };
  if (!(lease.expiresAt > now)) {
    return { state: 'stale', reason: `expired ${formatDuration(now - lease.expiresAt)} ago` };
  }
  if (lease.renewEveryMs !== undefined) {
    const lastSign = lease.renewedAt ?? lease.acquiredAt;
    if (lastSign !== undefined && now - lastSign > missedRenewals * lease.renewEveryMs) {
      return {
        state: 'stale',
        reason: `its holder renews every ${formatDuration(lease.renewEveryMs)} but has not since ${formatInstant(lastSign)}`,
      };
    }
  }
  if (lease.pid !== undefined && lease.host === here.host) {
    return here.alive(lease.pid)
      ? { state: 'live', reason: `process ${lease.pid} on this host is running` }
      : { state: 'stale', reason: `process ${lease.pid} on this host is gone` };
  }
  if (lease.renewEveryMs !== undefined) {
    return { state: 'live', reason: `renewed within its last ${missedRenewals} intervals` };
  }
  return { state: 'live', reason: `not expired; its holder (a scheduled run?) may still be working` };
}

/** The lease for `--json` output and tables; null when none is held. */
export function leaseJson(lease: LeaseRecord | undefined, now: number) {
  if (lease === undefined) return null;
  const iso = (at: number | undefined) =>
    at === undefined || !Number.isFinite(at) ? undefined : new Date(at).toISOString();
  return {
    owner: lease.owner,
    acquiredAt: lease.acquiredAt,
    acquiredAtIso: iso(lease.acquiredAt),
    expiresAt: lease.expiresAt,
    expiresAtIso: iso(lease.expiresAt),
    renewedAt: lease.renewedAt,
    host: lease.host,
    pid: lease.pid,
    renewEveryMs: lease.renewEveryMs,
    ...assessLease(lease, now),
  };
}

/** One line about the lease for people: who holds it, since when, until when, and whether it looks alive. */
export function describeLease(lease: LeaseRecord, now: number): string {
  const assessment = assessLease(lease, now);
  const where =
    lease.host === undefined ? '' : ` (${lease.host}${lease.pid === undefined ? '' : `, pid ${lease.pid}`})`;
  const since = lease.acquiredAt === undefined ? '' : ` since ${formatInstant(lease.acquiredAt)}`;
  const until = Number.isFinite(lease.expiresAt) ? `, expires ${formatInstant(lease.expiresAt)}` : '';
  return `held by ${lease.owner}${where}${since}${until}: ${assessment.state}, ${assessment.reason}`;
}

/**
 * A lease this process holds: taken with {@link thisProcess} as holder, renewed every third of
 * its length until `stop`. When a renewal finds the lease lost (cleared by ops, or taken over
 * after it expired while this process was suspended), `onLost` is called once: the command must
 * stop delivering, since another runner may be checking the ledger for the same alerts.
 */
export class RenewedLease {
  readonly #state: DynamoStateStore;
  readonly #durationMs: number;
  readonly #now: () => number;
  #lease: Lease;
  #timer: NodeJS.Timeout | undefined;

  private constructor(state: DynamoStateStore, lease: Lease, durationMs: number, now: () => number) {
    this.#state = state;
    this.#lease = lease;
    this.#durationMs = durationMs;
    this.#now = now;
  }

  /** Takes the lease (LeaseHeldError while another runner holds it) and starts renewing it. */
  static async take(
    state: DynamoStateStore,
    owner: string,
    options: { durationMs?: number; now?: () => number; onLost: (error: unknown) => void },
  ): Promise<RenewedLease> {
    const durationMs = options.durationMs ?? cliLeaseMs;
    const now = options.now ?? Date.now;
    const renewEveryMs = Math.max(1000, Math.floor(durationMs / 3));
    const lease = await state.acquireLease(owner, durationMs, now(), thisProcess(renewEveryMs));
    const held = new RenewedLease(state, lease, durationMs, now);
    held.#timer = setInterval(() => {
      held.#state.renewLease(held.#lease, held.#durationMs, held.#now()).then(
        (renewed) => {
          held.#lease = renewed;
        },
        (error: unknown) => {
          // A transient DynamoDB error is retried at the next tick; the lease lasts three of them.
          if (!(error instanceof LeaseLostError)) return;
          held.stop();
          options.onLost(error);
        },
      );
    }, renewEveryMs);
    // Renewal alone must not keep a finished command alive.
    held.#timer.unref();
    return held;
  }

  get lease(): Lease {
    return this.#lease;
  }

  /** Stops renewing (the lease then expires on its own unless released). */
  stop(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
  }

  /** Stops renewing and gives the lease back (a lease lost meanwhile is left alone). */
  async release(): Promise<void> {
    this.stop();
    await this.#state.releaseLease(this.#lease);
  }
}

interface ReleaseOptions {
  force?: boolean;
  yes?: boolean;
}

/** `news-alerts lease release`: clears a lease whose holder died (see the module comment). */
async function releaseLease(
  context: CommandContext,
  _args: readonly unknown[],
  options: ReleaseOptions,
): Promise<void> {
  const target = await context.target();
  const state = stateStoreOf(context, target);
  const lease = await state.readLease();
  const now = Date.now();
  if (lease === undefined) {
    context.output.result({ target: target.label, released: false, lease: null }, () =>
      context.output.line('No run lease is held; nothing to release.'),
    );
    return;
  }
  const assessment = assessLease(lease, now);
  if (assessment.state === 'live' && !options.force) {
    throw new OperationFailedError(
      `the run lease is ${describeLease(lease, now)}. Releasing it would let a second run deliver alongside it (alerts could go out twice). Wait for it, stop it, or add --force if you know it is dead.`,
    );
  }
  await context.confirm(
    `Release the run lease ${describeLease(lease, now)}?${assessment.state === 'live' ? ' Its holder may still be working: if it is, it stops at its next renewal or watermark write.' : ''}`,
    options.yes,
  );
  try {
    await state.clearLease(lease);
  } catch (error) {
    if (error instanceof LeaseChangedError) {
      throw new ConcurrentChangeError(
        `${error.message}; nothing was released. Look again with '${newsAlerts()} watermark show'.`,
        {
          cause: error,
        },
      );
    }
    throw error;
  }
  context.output.result({ target: target.label, released: true, lease: leaseJson(lease, now) }, () =>
    context.output.line(`Released the run lease of ${lease.owner}; the next run starts at once.`),
  );
}

/** Registers `lease`. */
export function registerLease(program: Command): void {
  const lease = program.command('lease').description('the run lease: clear one whose holder died');
  lease
    .command('release')
    .description('release a stuck run lease (asks first); refuses while its holder looks alive unless --force')
    .option('-y, --yes', 'do not ask for confirmation')
    .option('--force', 'release it even though its holder looks alive')
    .addHelpText(
      'after',
      `
'watermark show' and 'runs list' show who holds the lease. A holder is dead when the lease expired,
when it stopped renewing (CLI runs and replays renew every 20 s), or when its process is gone on
this host; a scheduled run is trusted until its lease expires. The release only deletes the lease
that was shown: one renewed or taken in the meantime is left alone (exit 1).`,
    )
    .action(action(releaseLease));
}
