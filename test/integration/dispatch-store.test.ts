/**
 * DynamoDispatchStore against moto server through the real SDK clients: the open/seal/complete/
 * close round trip, each work item counted once however often and however concurrently it is
 * completed, one open dispatch at a time under the run lease, and hand-damaged items read as
 * zero with a warning.
 */
import {
  TransactionCanceledException,
  TransactionConflictException,
  UpdateItemCommand,
} from '@aws-sdk/client-dynamodb';
import { DeleteCommand, type DynamoDBDocumentClient, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  completionKey,
  DynamoDispatchStore,
  dispatchHeadKey,
  openDispatchKey,
  StateStoreError,
} from '#aws/dynamo-dispatch-store';
import { DynamoStateStore } from '#aws/dynamo-state-store';
import { ITEM_LIMITS } from '#aws/table-layout';
import { DispatchOpenError, LeaseLostError } from '#core/errors';
import { dispatchComplete, type Lease, type Log, type WorkItemResult } from '#core/ports';
import { createTables, tableNamesFor } from '#sandbox/tables';
import { awsClients, uniquePrefix } from '#test/aws';
import { rawItem } from '#test/dynamo-faults';
import { captureLog } from '#test/run-harness';

const t0 = Date.UTC(2025, 2, 1, 9, 0, 0);
const minute = 60_000;
const day = 86_400_000;
const silentLog: Log = { debug() {}, info() {}, warn() {}, error() {} };

const result = (published: number, extra: Partial<WorkItemResult> = {}): WorkItemResult => ({
  published,
  updateNotices: 0,
  alreadyDelivered: 0,
  parked: 0,
  ...extra,
});

interface Setup {
  readonly documents: DynamoDBDocumentClient;
  readonly table: string;
  readonly store: DynamoDispatchStore;
  readonly state: DynamoStateStore;
  readonly lease: Lease;
}

/** A fresh state table, the run lease held by `run-a` for five minutes, and a dispatch store. */
async function setup(log: Log = silentLog): Promise<Setup> {
  const clients = awsClients();
  const names = tableNamesFor(uniquePrefix());
  await createTables(clients.dynamo, names);
  const state = new DynamoStateStore({ documents: clients.documents, tableName: names.state, log: silentLog });
  const lease = await state.acquireLease('run-a', 5 * minute, t0);
  const store = new DynamoDispatchStore({
    documents: clients.documents,
    tableName: names.state,
    log,
    sleep: async () => {},
  });
  return { documents: clients.documents, table: names.state, store, state, lease };
}

/**
 * Another request touching the head at the same moment: the next `times` transactions are
 * cancelled with TransactionConflict before they reach the table, as DynamoDB reports it.
 */
function conflictTransactions(documents: DynamoDBDocumentClient, times: number): { cancelled: number } {
  const stats = { cancelled: 0 };
  documents.middlewareStack.add(
    (next, context) => async (args) => {
      if (context.commandName !== 'TransactWriteItemsCommand' || stats.cancelled >= times) return await next(args);
      stats.cancelled += 1;
      throw new TransactionCanceledException({
        message:
          'Transaction cancelled, please refer cancellation reasons for specific reasons [None, TransactionConflict]',
        $metadata: {},
        CancellationReasons: [{ Code: 'None' }, { Code: 'TransactionConflict', Message: 'Transaction is ongoing' }],
      });
    },
    { step: 'initialize', name: 'conflictTransactions' },
  );
  return stats;
}

describe('a dispatch from open to close', () => {
  it('opens, counts, seals, completes every item and closes, keeping the head for the run history', async () => {
    const { documents, table, store, lease } = await setup();
    expect(await store.readOpen()).toBeUndefined();

    await store.open(lease, 'run-a', t0);
    await store.countEnqueued('run-a', 2);
    await store.countEnqueued('run-a', 1);
    expect(await store.readOpen()).toEqual({
      dispatchId: 'run-a',
      openedAt: t0,
      enqueued: 3,
      done: 0,
      published: 0,
      updateNotices: 0,
      alreadyDelivered: 0,
      parked: 0,
    });

    await store.seal(lease, 'run-a', { expected: 3, advanceTo: t0 - minute }, t0 + 1);
    expect(await store.completeItem('run-a', 'item-1', result(4), t0 + 2)).toBe(true);
    expect(await store.completeItem('run-a', 'item-2', result(1, { updateNotices: 2, parked: 1 }), t0 + 3)).toBe(true);
    const partial = await store.read('run-a');
    expect(partial).toMatchObject({ expected: 3, done: 2, advanceTo: t0 - minute, sealedAt: t0 + 1 });
    expect(dispatchComplete(partial!)).toBe(false);

    expect(await store.completeItem('run-a', 'item-3', result(0, { alreadyDelivered: 5 }), t0 + 4)).toBe(true);
    const head = await store.read('run-a');
    expect(head).toEqual({
      dispatchId: 'run-a',
      openedAt: t0,
      enqueued: 3,
      done: 3,
      expected: 3,
      advanceTo: t0 - minute,
      sealedAt: t0 + 1,
      published: 5,
      updateNotices: 2,
      alreadyDelivered: 5,
      parked: 1,
    });
    expect(dispatchComplete(head!)).toBe(true);

    await store.close(lease, 'run-a', 'completed', t0 + 5);
    expect(await store.readOpen()).toBeUndefined();
    expect(await rawItem(documents, table, openDispatchKey)).toBeUndefined();
    expect(await store.read('run-a')).toEqual(head);
    const stored = await rawItem(documents, table, dispatchHeadKey('run-a'));
    expect(stored).toMatchObject({
      closed: 'completed',
      closedAt: t0 + 5,
      expiresAt: Math.floor((t0 + 14 * day) / 1000),
    });
    const completion = await rawItem(documents, table, completionKey('run-a', 'item-2'));
    expect(completion).toMatchObject({ itemId: 'item-2', doneAt: t0 + 3, published: 1, updateNotices: 2, parked: 1 });
    expect(completion?.expiresAt).toBe(Math.floor((t0 + 3 + 14 * day) / 1000));

    // The next run opens its own.
    await store.open(lease, 'run-b', t0 + 6);
    expect((await store.readOpen())?.dispatchId).toBe('run-b');
  });

  it('seals without a watermark target when the run had nowhere to move it', async () => {
    const { store, lease } = await setup();
    await store.open(lease, 'run-a', t0);
    await store.seal(lease, 'run-a', { expected: 0 }, t0 + 1);
    const head = await store.read('run-a');
    expect(head).toMatchObject({ expected: 0, sealedAt: t0 + 1 });
    expect(head?.advanceTo).toBeUndefined();
    expect(dispatchComplete(head!)).toBe(true);
  });

  it('opening the same dispatch again (a retried open) keeps its counts; closing twice is harmless', async () => {
    const { store, lease } = await setup();
    await store.open(lease, 'run-a', t0);
    await store.countEnqueued('run-a', 4);
    await store.completeItem('run-a', 'item-1', result(2), t0 + 1);
    await store.open(lease, 'run-a', t0 + 2);
    expect(await store.readOpen()).toMatchObject({
      dispatchId: 'run-a',
      openedAt: t0,
      enqueued: 4,
      done: 1,
      published: 2,
    });

    await store.close(lease, 'run-a', 'abandoned', t0 + 3);
    await store.close(lease, 'run-a', 'abandoned', t0 + 4);
    expect(await store.readOpen()).toBeUndefined();
  });

  it('refuses to count items into a dispatch never opened, or already sealed', async () => {
    const { store, lease } = await setup();
    await expect(store.countEnqueued('nobody', 1)).rejects.toBeInstanceOf(StateStoreError);
    await store.open(lease, 'run-a', t0);
    await store.seal(lease, 'run-a', { expected: 0 }, t0 + 1);
    await expect(store.countEnqueued('run-a', 1)).rejects.toThrow(/not open for more work items/);
    expect((await store.read('run-a'))?.enqueued).toBe(0);
    expect(await store.read('nobody')).toBeUndefined();
  });

  it('does not count an item of a dispatch that has no head, and says so', async () => {
    const { store } = await setup();
    await expect(store.completeItem('gone', 'item-1', result(1), t0)).rejects.toThrow(/has no head/);
    expect(await store.read('gone')).toBeUndefined();
  });

  it('refuses a result that is not a set of counts', async () => {
    const { store, lease } = await setup();
    await store.open(lease, 'run-a', t0);
    await expect(store.completeItem('run-a', 'item-1', result(-1), t0)).rejects.toBeInstanceOf(StateStoreError);
    await expect(store.completeItem('run-a', 'item-1', result(1.5), t0)).rejects.toBeInstanceOf(StateStoreError);
    expect((await store.read('run-a'))?.done).toBe(0);
  });
});

describe('each work item counts once', () => {
  it('a second completion of the same item is a no-op returning false', async () => {
    const { store, lease } = await setup();
    await store.open(lease, 'run-a', t0);
    expect(await store.completeItem('run-a', 'item-1', result(3), t0)).toBe(true);
    expect(await store.completeItem('run-a', 'item-1', result(3), t0 + 1)).toBe(false);
    expect(await store.read('run-a')).toMatchObject({ done: 1, published: 3 });
  });

  it('20 concurrent completions of 10 items, each twice, count 10', async () => {
    const { store, lease } = await setup(silentLog);
    await store.open(lease, 'run-a', t0);
    const items = Array.from({ length: 10 }, (_, index) => `item-${index}`);
    const outcomes = await Promise.all(
      [...items, ...items].map((itemId) => store.completeItem('run-a', itemId, result(2), t0)),
    );
    expect(outcomes.filter(Boolean)).toHaveLength(10);
    expect(await store.read('run-a')).toMatchObject({ done: 10, published: 20 });
  });

  it('concurrent completions of different items all count', async () => {
    const { store, lease } = await setup(silentLog);
    await store.open(lease, 'run-a', t0);
    const outcomes = await Promise.all(
      Array.from({ length: 30 }, (_, index) => store.completeItem('run-a', `item-${index}`, result(1), t0)),
    );
    expect(outcomes.every(Boolean)).toBe(true);
    expect(await store.read('run-a')).toMatchObject({ done: 30, published: 30 });
  });

  it('retries a completion cancelled by a transaction conflict, and counts it once', async () => {
    const { documents, store, lease } = await setup();
    await store.open(lease, 'run-a', t0);
    const conflicts = conflictTransactions(documents, 3);
    expect(await store.completeItem('run-a', 'item-1', result(1), t0)).toBe(true);
    expect(conflicts.cancelled).toBe(3);
    expect(await store.read('run-a')).toMatchObject({ done: 1, published: 1 });
  });

  it('retries counting items when a completion transaction holds the head (TransactionConflictException)', async () => {
    const { documents, store, lease } = await setup();
    await store.open(lease, 'run-a', t0);
    let refused = 0;
    documents.middlewareStack.add(
      (next, context) => async (args) => {
        if (context.commandName !== 'UpdateItemCommand' || refused >= 2) return await next(args);
        refused += 1;
        throw new TransactionConflictException({ message: 'Transaction is ongoing for the item', $metadata: {} });
      },
      { step: 'initialize', name: 'headInTransaction' },
    );
    await store.countEnqueued('run-a', 3);
    expect(refused).toBe(2);
    expect(await store.read('run-a')).toMatchObject({ enqueued: 3 });
  });
});

/** Counts the requests `documents` sends, by command, from now on. */
function countRequests(documents: DynamoDBDocumentClient): Map<string, number> {
  const counts = new Map<string, number>();
  documents.middlewareStack.add(
    (next, context) => async (args) => {
      const command = String(context.commandName);
      counts.set(command, (counts.get(command) ?? 0) + 1);
      return await next(args);
    },
    { step: 'initialize', name: 'countRequests' },
  );
  return counts;
}

describe('claims: one delivery of a work item at a time, a batch in three requests', () => {
  const refs = (...ids: string[]) => ids.map((itemId) => ({ dispatchId: 'run-a', itemId }));

  it('claims a batch of 10 items in one request after a read of their head, and settles it in one more', async () => {
    const { documents, store, lease } = await setup();
    await store.open(lease, 'run-a', t0);
    const items = refs(...Array.from({ length: 10 }, (_, index) => `item-${index}`));
    const requests = countRequests(documents);
    const claims = await store.claimItems(items, { owner: 'invocation-1', until: t0 + minute, now: t0 });
    expect(claims).toEqual(items.map(() => ({ state: 'claimed' })));
    const counted = await store.settleItems(
      'invocation-1',
      { done: items.slice(0, 8).map((ref) => ({ ...ref, result: result(2) })), released: items.slice(8) },
      t0 + 1,
    );
    expect(counted).toEqual(items.slice(0, 8).map(() => true));
    expect(Object.fromEntries(requests)).toEqual({ GetItemCommand: 1, TransactWriteItemsCommand: 2 });
    expect(await store.read('run-a')).toMatchObject({ done: 8, published: 16 });
    // The released two are free for the next delivery at once; the done ones answer with their result.
    const again = await store.claimItems(items, { owner: 'invocation-2', until: t0 + 2 * minute, now: t0 + 2 });
    expect(again.slice(0, 8)).toEqual(items.slice(0, 8).map(() => ({ state: 'done', result: result(2) })));
    expect(again.slice(8)).toEqual([{ state: 'claimed' }, { state: 'claimed' }]);
  });

  it('answers closed for the items of a dispatch a run closed (done ones: done), and claims the others of the batch', async () => {
    const { store, state, lease } = await setup();
    await store.open(lease, 'run-a', t0);
    await store.claimItems(refs('done-1'), { owner: 'first', until: t0 + minute, now: t0 });
    await store.settleItems('first', { done: [{ ...refs('done-1')[0]!, result: result(1) }], released: [] }, t0 + 1);
    await store.close(lease, 'run-a', 'abandoned', t0 + 2);
    const next = await state.acquireLease('run-b', 5 * minute, t0 + 6 * minute);
    await store.open(next, 'run-b', t0 + 6 * minute);
    const batch = [...refs('done-1', 'stale-1', 'stale-2'), { dispatchId: 'run-b', itemId: 'fresh-1' }];
    const claims = await store.claimItems(batch, { owner: 'second', until: t0 + 8 * minute, now: t0 + 7 * minute });
    expect(claims).toEqual([
      { state: 'done', result: result(1) },
      { state: 'closed' },
      { state: 'closed' },
      { state: 'claimed' },
    ]);
  });

  it('a dispatch given up stays the open one but lets no item be claimed, and says until when a claim made before holds', async () => {
    const { store, lease } = await setup();
    await store.open(lease, 'run-a', t0);
    await store.claimItems(refs('held-1', 'held-2', 'done-1'), { owner: 'first', until: t0 + 2 * minute, now: t0 });
    await store.claimItems(refs('held-3'), { owner: 'second', until: t0 + 3 * minute, now: t0 });
    await store.settleItems('first', { done: [{ ...refs('done-1')[0]!, result: result(1) }], released: [] }, t0 + 1);
    expect(await store.liveClaimsUntil('run-a', t0 + 2, t0 + day)).toBe(t0 + 3 * minute);
    await store.stopClaims(lease, 'run-a', t0 + 3);
    expect((await store.readOpen())?.dispatchId).toBe('run-a');
    expect(await store.claimItems(refs('fresh-1'), { owner: 'third', until: t0 + 4 * minute, now: t0 + 4 })).toEqual([
      { state: 'closed' },
    ]);
    // Claims made before still hold until they end; done items and lapsed claims do not count.
    expect(await store.liveClaimsUntil('run-a', t0 + 2 * minute + 1, t0 + day)).toBe(t0 + 3 * minute);
    expect(await store.liveClaimsUntil('run-a', t0 + 3 * minute + 1, t0 + day)).toBeUndefined();
    // A claim ending after `latest` is none an invocation made: not counted.
    expect(await store.liveClaimsUntil('run-a', t0 + 2, t0 + 2 * minute + 30_000)).toBe(t0 + 2 * minute);
    // Given up with its head deleted by hand: the head is written anew, closed.
    await store.close(lease, 'run-a', 'abandoned', t0 + 5);
    await store.open(lease, 'run-b', t0 + 6);
    await store.stopClaims(lease, 'never-opened', t0 + 7);
    expect(
      await store.claimItems([{ dispatchId: 'never-opened', itemId: 'x' }], {
        owner: 'o',
        until: t0 + minute,
        now: t0 + 8,
      }),
    ).toEqual([{ state: 'closed' }]);
  });

  it('gives a claim back when the run gave its dispatch up while the claim was being written', async () => {
    const { documents, store, lease } = await setup();
    await store.open(lease, 'run-a', t0);
    // The run gives the dispatch up (and looks for live claims, finding none) just before the
    // publisher's claim transaction commits.
    let raced = false;
    let seenByRun: number | undefined = -1;
    documents.middlewareStack.add(
      (next, context) => async (args) => {
        const items = (args.input as { TransactItems?: { Put?: { Item?: { claimOwner?: unknown } } }[] }).TransactItems;
        if (
          !raced &&
          context.commandName === 'TransactWriteItemsCommand' &&
          items?.[0]?.Put?.Item?.claimOwner === 'late'
        ) {
          raced = true;
          await store.stopClaims(lease, 'run-a', t0 + 1);
          seenByRun = await store.liveClaimsUntil('run-a', t0 + 1, t0 + day);
        }
        return await next(args);
      },
      { step: 'initialize', name: 'giveUpDuringClaim' },
    );
    const claims = await store.claimItems(refs('item-1'), { owner: 'late', until: t0 + minute, now: t0 + 1 });
    expect(raced).toBe(true);
    expect(seenByRun).toBeUndefined();
    expect(claims).toEqual([{ state: 'closed' }]);
    // Given back: nothing holds the item, so the run's next look finds no live claim either.
    expect(await store.liveClaimsUntil('run-a', t0 + 2, t0 + day)).toBeUndefined();
  });

  it('answers busy for an item another delivery holds, until that claim lapses', async () => {
    const { store, lease } = await setup();
    await store.open(lease, 'run-a', t0);
    await store.claimItems(refs('item-1'), { owner: 'first', until: t0 + minute, now: t0 });
    expect(
      await store.claimItems(refs('item-1', 'item-2'), { owner: 'second', until: t0 + minute, now: t0 + 1 }),
    ).toEqual([{ state: 'busy' }, { state: 'claimed' }]);
    // The first delivery died: after its claim lapsed, the item is free again.
    expect(
      await store.claimItems(refs('item-1'), { owner: 'third', until: t0 + 3 * minute, now: t0 + minute + 1 }),
    ).toEqual([{ state: 'claimed' }]);
    // The first one's late settlement no longer counts: the item is the third's.
    expect(
      await store.settleItems(
        'first',
        { done: [{ ...refs('item-1')[0]!, result: result(1) }], released: [] },
        t0 + 2 * minute,
      ),
    ).toEqual([false]);
    expect(
      await store.settleItems(
        'third',
        { done: [{ ...refs('item-1')[0]!, result: result(0, { alreadyDelivered: 1 }) }], released: [] },
        t0 + 2 * minute,
      ),
    ).toEqual([true]);
    expect(await store.read('run-a')).toMatchObject({ done: 1, published: 0, alreadyDelivered: 1 });
  });

  it('an item named twice in one batch is claimed once and gets the same answer twice', async () => {
    const { store, lease } = await setup();
    await store.open(lease, 'run-a', t0);
    expect(await store.claimItems(refs('item-1', 'item-1'), { owner: 'one', until: t0 + minute, now: t0 })).toEqual([
      { state: 'claimed' },
      { state: 'claimed' },
    ]);
    expect(
      await store.settleItems(
        'one',
        {
          done: [
            { ...refs('item-1')[0]!, result: result(1) },
            { ...refs('item-1')[0]!, result: result(1) },
          ],
          released: [],
        },
        t0,
      ),
    ).toEqual([true, true]);
    expect(await store.read('run-a')).toMatchObject({ done: 1, published: 1 });
  });

  it('concurrent claims of the same 10 items by 4 deliveries give each item to exactly one', async () => {
    const { store, lease } = await setup(silentLog);
    await store.open(lease, 'run-a', t0);
    const items = refs(...Array.from({ length: 10 }, (_, index) => `item-${index}`));
    const answers = await Promise.all(
      ['a', 'b', 'c', 'd'].map((owner) => store.claimItems(items, { owner, until: t0 + minute, now: t0 })),
    );
    items.forEach((_, index) => {
      expect(answers.filter((answer) => answer[index]?.state === 'claimed')).toHaveLength(1);
    });
  });

  it('a settlement into a dispatch without a head counts nothing and says so', async () => {
    const { store } = await setup();
    await store.claimItems(refs('item-1'), { owner: 'one', until: t0 + minute, now: t0 });
    await expect(
      store.settleItems('one', { done: [{ ...refs('item-1')[0]!, result: result(1) }], released: [] }, t0),
    ).rejects.toThrow(/has no head/);
  });

  it('completeItem (no claim) still counts an item a claim is on, once', async () => {
    const { store, lease } = await setup();
    await store.open(lease, 'run-a', t0);
    await store.claimItems(refs('item-1'), { owner: 'one', until: t0 + minute, now: t0 });
    expect(await store.completeItem('run-a', 'item-1', result(2), t0)).toBe(true);
    expect(
      await store.settleItems('one', { done: [{ ...refs('item-1')[0]!, result: result(2) }], released: [] }, t0),
    ).toEqual([false]);
    expect(await store.read('run-a')).toMatchObject({ done: 1, published: 2 });
  });
});

describe('one open dispatch, under the run lease', () => {
  it('refuses to open a second dispatch while one is open, naming it', async () => {
    const { store, lease } = await setup();
    await store.open(lease, 'run-a', t0);
    const attempt = store.open(lease, 'run-b', t0 + 1);
    await expect(attempt).rejects.toBeInstanceOf(DispatchOpenError);
    await expect(attempt).rejects.toMatchObject({ openDispatchId: 'run-a' });
    expect(await store.read('run-b')).toBeUndefined();
    expect((await store.readOpen())?.dispatchId).toBe('run-a');
  });

  it('refuses to open, seal or close with an expired lease', async () => {
    const { store, lease } = await setup();
    const late = lease.expiresAt + 1;
    await expect(store.open(lease, 'run-a', late)).rejects.toThrow(LeaseLostError);
    await expect(store.open(lease, 'run-a', late)).rejects.toThrow(/expired/);
    expect(await store.readOpen()).toBeUndefined();
    expect(await store.read('run-a')).toBeUndefined();

    await store.open(lease, 'run-a', t0);
    await expect(store.seal(lease, 'run-a', { expected: 1 }, late)).rejects.toBeInstanceOf(LeaseLostError);
    expect((await store.read('run-a'))?.expected).toBeUndefined();
    await expect(store.close(lease, 'run-a', 'completed', late)).rejects.toBeInstanceOf(LeaseLostError);
    expect((await store.readOpen())?.dispatchId).toBe('run-a');
  });

  it('refuses to open, seal or close once another run holds the lease', async () => {
    const { store, state, lease } = await setup();
    await store.open(lease, 'run-a', t0);
    const later = t0 + 6 * minute;
    const other = await state.acquireLease('run-b', 5 * minute, later);

    await expect(store.seal(lease, 'run-a', { expected: 0 }, later)).rejects.toThrow(/taken over by run-b/);
    await expect(store.close(lease, 'run-a', 'completed', later)).rejects.toBeInstanceOf(LeaseLostError);
    await expect(store.open(lease, 'run-c', later)).rejects.toBeInstanceOf(LeaseLostError);
    // The new holder settles it.
    await store.close(other, 'run-a', 'abandoned', later);
    expect(await store.readOpen()).toBeUndefined();
  });

  it('refuses with the lease gone', async () => {
    const { store, state, lease } = await setup();
    await state.releaseLease(lease);
    await expect(store.open(lease, 'run-a', t0)).rejects.toThrow(/lease of run-a is gone/);
  });

  it('refuses to close a dispatch that is not the open one', async () => {
    const { store, lease } = await setup();
    await store.open(lease, 'run-a', t0);
    await expect(store.close(lease, 'run-b', 'completed', t0)).rejects.toThrow(/run-a is/);
    expect((await store.readOpen())?.dispatchId).toBe('run-a');
  });
});

describe('damaged items', () => {
  it('a head with wrong types reads as zero counts and no seal, with a warning naming the fields', async () => {
    const log = captureLog();
    const { documents, table, store, lease } = await setup(log);
    await store.open(lease, 'run-a', t0);
    await store.seal(lease, 'run-a', { expected: 2, advanceTo: t0 }, t0);
    await documents.send(
      new PutCommand({
        TableName: table,
        Item: {
          ...dispatchHeadKey('run-a'),
          dispatchId: 'run-a',
          openedAt: 'yesterday',
          enqueued: 'two',
          done: -3,
          published: 1.5,
          updateNotices: { n: 1 },
          alreadyDelivered: 4,
          expected: 'all',
          advanceTo: true,
          sealedAt: t0,
        },
      }),
    );
    const head = await store.readOpen();
    expect(head).toEqual({
      dispatchId: 'run-a',
      openedAt: 0,
      enqueued: 0,
      done: 0,
      published: 0,
      updateNotices: 0,
      alreadyDelivered: 4,
      parked: 0,
      expected: undefined,
      advanceTo: undefined,
      sealedAt: t0,
    });
    // Unsealed as far as anyone can tell: the watermark never moves on a damaged head.
    expect(dispatchComplete(head!)).toBe(false);
    const warning = log.lines.find((line) => line.includes('dispatch head is malformed'));
    expect(warning).toBeDefined();
    for (const name of [
      'openedAt',
      'enqueued',
      'done',
      'published',
      'updateNotices',
      'parked',
      'expected',
      'advanceTo',
    ]) {
      expect(warning).toContain(name);
    }
  });

  it('numbers typed by hand that the document client cannot convert: the head and pointer still read, those fields damaged', async () => {
    const log = captureLog();
    const { documents, table, store, lease } = await setup(log);
    await store.open(lease, 'run-a', t0);
    await store.seal(lease, 'run-a', { expected: 2, advanceTo: t0 }, t0);
    // Past 2^53 with a fraction, which DynamoDB stores (38 digits) and the document client refuses.
    const huge = { N: '12345678901234567.5' };
    const damage = (key: { pk: string; sk: string }, values: Record<string, { N: string }>) =>
      documents.send(
        new UpdateItemCommand({
          TableName: table,
          Key: { pk: { S: key.pk }, sk: { S: key.sk } },
          UpdateExpression: `SET ${Object.keys(values)
            .map((_name, index) => `#n${index} = :v${index}`)
            .join(', ')}`,
          ExpressionAttributeNames: Object.fromEntries(Object.keys(values).map((name, index) => [`#n${index}`, name])),
          ExpressionAttributeValues: Object.fromEntries(
            Object.values(values).map((value, index) => [`:v${index}`, value]),
          ),
        }),
      );
    await damage(dispatchHeadKey('run-a'), { done: huge, note: huge, advanceTo: { N: '1e300' } });
    await damage(openDispatchKey, { note: huge });
    const head = await store.readOpen();
    expect(head).toMatchObject({ dispatchId: 'run-a', done: 0, expected: 2, advanceTo: undefined, sealedAt: t0 });
    expect(dispatchComplete(head!)).toBe(false);
    const warning = log.lines.find((line) => line.includes('dispatch head is malformed'));
    for (const name of ['done', 'advanceTo']) expect(warning).toContain(name);
  });

  it('a done item whose counts were damaged by hand still answers done to a claim, its damaged counts as zero', async () => {
    const log = captureLog();
    const { documents, table, store, lease } = await setup(log);
    await store.open(lease, 'run-a', t0);
    const items = ['negative', 'fraction', 'huge'].map((itemId) => ({ dispatchId: 'run-a', itemId }));
    await store.claimItems(items, { owner: 'first', until: t0 + minute, now: t0 });
    await store.settleItems(
      'first',
      { done: items.map((ref) => ({ ...ref, result: result(3, { alreadyDelivered: 1 }) })), released: [] },
      t0 + 1,
    );
    const damaged = { negative: '-1', fraction: '2.5', huge: '12345678901234567.5' } as const;
    for (const ref of items) {
      const key = completionKey('run-a', ref.itemId);
      await documents.send(
        new UpdateItemCommand({
          TableName: table,
          Key: { pk: { S: key.pk }, sk: { S: key.sk } },
          UpdateExpression: 'SET published = :bad',
          ExpressionAttributeValues: { ':bad': { N: damaged[ref.itemId as keyof typeof damaged] } },
        }),
      );
    }
    // A redelivery finds each done (not busy, which would send it to the dead-letter queue), and the batch goes on.
    const claims = await store.claimItems(items, { owner: 'second', until: t0 + 2 * minute, now: t0 + 2 });
    expect(claims).toEqual(items.map(() => ({ state: 'done', result: result(0, { alreadyDelivered: 1 }) })));
    expect(log.lines.filter((line) => line.includes('done work item record is malformed'))).toHaveLength(3);
  });

  it('a pointer whose openedAt was damaged by hand still names its dispatch, which the run can settle', async () => {
    const log = captureLog();
    const { documents, table, store, lease } = await setup(log);
    await store.open(lease, 'run-a', t0);
    await documents.send(
      new UpdateCommand({
        TableName: table,
        Key: openDispatchKey,
        UpdateExpression: 'SET openedAt = :far',
        ExpressionAttributeValues: { ':far': t0 * 1000 },
      }),
    );
    expect((await store.readOpen())?.dispatchId).toBe('run-a');
    await store.close(lease, 'run-a', 'abandoned', t0 + 1);
    await store.open(lease, 'run-b', t0 + 2);
    expect((await store.readOpen())?.dispatchId).toBe('run-b');
  });

  it('a pointer whose head was deleted reads as an unsealed dispatch as old as the pointer', async () => {
    const log = captureLog();
    const { documents, table, store, lease } = await setup(log);
    await store.open(lease, 'run-a', t0);
    await documents.send(new DeleteCommand({ TableName: table, Key: dispatchHeadKey('run-a') }));
    expect(await store.readOpen()).toEqual({
      dispatchId: 'run-a',
      openedAt: t0,
      enqueued: 0,
      done: 0,
      published: 0,
      updateNotices: 0,
      alreadyDelivered: 0,
      parked: 0,
    });
    expect(log.lines.some((line) => line.includes('no head'))).toBe(true);
    // And the run can still settle it.
    await store.close(lease, 'run-a', 'abandoned', t0 + 1);
    expect(await store.readOpen()).toBeUndefined();
  });

  it('a pointer that names no dispatch reads as none, with a warning, and the next open replaces it', async () => {
    const log = captureLog();
    const { documents, table, store, lease } = await setup(log);
    await documents.send(new PutCommand({ TableName: table, Item: { ...openDispatchKey, dispatchId: 42 } }));
    expect(await store.readOpen()).toBeUndefined();
    expect(log.lines.some((line) => line.includes('pointer is malformed'))).toBe(true);
    await store.open(lease, 'run-a', t0);
    expect((await store.readOpen())?.dispatchId).toBe('run-a');
  });
});

describe('hostile ids', () => {
  it('keeps ids with #, unicode and any length apart and inside the key limits', async () => {
    const { store, lease } = await setup();
    const id = fc.oneof(
      fc.string({ minLength: 1, maxLength: 40, unit: 'grapheme' }),
      fc.constantFrom('#', 'a#b', '#item#x', 'head', 'item#head', 'open', '한국어', '🦜#🦜'),
      fc.string({ minLength: 300, maxLength: 2000 }),
    );
    let run = 0;
    await fc.assert(
      fc.asyncProperty(id, fc.uniqueArray(id, { minLength: 1, maxLength: 6 }), async (suffix, itemIds) => {
        run += 1;
        // A fresh dispatch per case; the previous one is closed first (one open at a time).
        const dispatchId = `${run}${suffix}`;
        await store.open(lease, dispatchId, t0);
        await store.countEnqueued(dispatchId, itemIds.length);
        await store.seal(lease, dispatchId, { expected: itemIds.length }, t0);
        for (const itemId of [...itemIds, ...itemIds]) await store.completeItem(dispatchId, itemId, result(1), t0);
        const head = await store.readOpen();
        expect(head).toMatchObject({ dispatchId, done: itemIds.length, published: itemIds.length });
        expect(dispatchComplete(head!)).toBe(true);
        for (const key of [
          dispatchHeadKey(dispatchId),
          ...itemIds.map((itemId) => completionKey(dispatchId, itemId)),
        ]) {
          expect(Buffer.byteLength(key.pk, 'utf8')).toBeLessThanOrEqual(ITEM_LIMITS.partitionKeyBytes);
          expect(Buffer.byteLength(key.sk, 'utf8')).toBeLessThanOrEqual(1024);
        }
        await store.close(lease, dispatchId, 'completed', t0);
      }),
      { numRuns: 15 },
    );
  });
});
