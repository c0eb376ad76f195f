/**
 * `deliveries --article` reads the ledger, then what is held. A release that finishes between the
 * two marks the ledger entry first and deletes the held item after: the entry read first still
 * says held, and nothing is held any more. It must read as what the release recorded, not as an
 * entry an older release left unmarked (cli/workbench/ledger-state.ts).
 */
import { describe, expect, it } from 'vitest';
import type { DeliveryRecord, HeldState, UndeliverableRecord } from '#core/ports';
import { deliveryId } from '#core/ports';
import { readLedgerStates } from '../../cli/workbench/ledger-state.ts';

const heldAt = Date.UTC(2026, 10, 30, 1);
const releasedAt = Date.UTC(2026, 10, 30, 7);

describe('deliveries --article while a release finishes', () => {
  it('reads the entry again when nothing is held for it, and says what the release recorded', async () => {
    const key = { audienceId: 'desk', articleKey: 'id:a1' };
    const ledger = new Map<string, DeliveryRecord>([
      [deliveryId(key), { ...key, deliveredAt: heldAt, ruleIds: ['r'], heldFor: 'digest' }],
    ]);
    const state = {
      async readDeliveries(keys: readonly { audienceId: string; articleKey: string }[]) {
        return new Map(
          keys.flatMap((each) => {
            const entry = ledger.get(deliveryId(each));
            return entry === undefined ? [] : [[deliveryId(each), { ...entry }] as const];
          }),
        );
      },
      async listUndeliverable(): Promise<UndeliverableRecord[]> {
        return [];
      },
      // The release finishes right after the ledger was read: marks first, then the item goes.
      async readHeld(): Promise<HeldState> {
        const entry = ledger.get(deliveryId(key)) as DeliveryRecord;
        ledger.set(deliveryId(key), {
          ...entry,
          releasedAt,
          releasedIn: 'digest:2026-11-30T07:00:00.000Z',
          releaseOutcome: 'sent',
        });
        return { items: [], releases: [] };
      },
    };
    const [state0] = await readLedgerStates(state, 'desk', ['id:a1']);
    expect(state0).toMatchObject({ kind: 'sent', entry: { releasedAt, releaseOutcome: 'sent' } });
    expect(state0?.status).toContain('in digest digest:2026-11-30T07:00:00.000Z');
  });
});
