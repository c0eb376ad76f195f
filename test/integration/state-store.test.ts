/**
 * DynamoStateStore against moto server through the real SDK clients: lease contention, watermark
 * optimistic locking, ledger batching (counted by middleware on the real client) and retries of
 * unprocessed batch items (injected by middleware that withholds part of the real request).
 */
import {
  DescribeTableCommand,
  DescribeTimeToLiveCommand,
  TransactionCanceledException,
} from '@aws-sdk/client-dynamodb';
import { DeleteCommand, type DynamoDBDocumentClient, PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import {
  DynamoStateStore,
  type DynamoStateStoreOptions,
  deliveryItemKey,
  keyPart,
  maxStoredStatusBytes,
  StateStoreError,
  storedStatus,
} from '#aws/dynamo-state-store';
import { measureItem } from '#aws/table-layout';
import { LeaseHeldError, LeaseLostError, WatermarkConflictError } from '#core/errors';
import {
  type DeliveryKey,
  type DeliveryRecord,
  deliveryId,
  type Log,
  type ReadingState,
  type RunRecord,
  type UndeliverableRecord,
} from '#core/ports';
import { createTables, tableNamesFor } from '#sandbox/tables';
import { type AwsClients, awsClients, uniquePrefix } from '#test/aws';
import { rawItem, recordCalls, withholdHalf } from '#test/dynamo-faults';
import { captureLog } from '#test/run-harness';

const t0 = Date.UTC(2025, 2, 1, 9, 0, 0);
const minute = 60_000;
const day = 86_400_000;

const silentLog: Log = { debug() {}, info() {}, warn() {}, error() {} };

interface Setup {
  readonly clients: AwsClients;
  readonly table: string;
  readonly store: DynamoStateStore;
  readonly sleeps: number[];
}

/** A fresh state table (unique name on the shared moto server) and a store on fresh clients. */
async function setup(options: Partial<DynamoStateStoreOptions> = {}): Promise<Setup> {
  const clients = awsClients();
  const names = tableNamesFor(uniquePrefix());
  await createTables(clients.dynamo, names);
  const sleeps: number[] = [];
  const store = new DynamoStateStore({
    documents: clients.documents,
    tableName: names.state,
    log: silentLog,
    sleep: async (ms) => {
      sleeps.push(ms);
    },
    now: () => t0,
    ...options,
  });
  return { clients, table: names.state, store, sleeps };
}

/** A second store on its own clients, so middleware on the first never sees its requests. */
const observer = (table: string) =>
  new DynamoStateStore({ documents: awsClients().documents, tableName: table, log: silentLog, now: () => t0 });

/**
 * Another request touching the same items at the same moment: the next `times` transactions are
 * cancelled with TransactionConflict before they reach the table, as DynamoDB reports it.
 */
function cancelTransactions(documents: DynamoDBDocumentClient, times: number): { cancelled: number } {
  const stats = { cancelled: 0 };
  documents.middlewareStack.add(
    (next, context) => async (args) => {
      if (context.commandName !== 'TransactWriteItemsCommand' || stats.cancelled >= times) return await next(args);
      stats.cancelled += 1;
      throw new TransactionCanceledException({
        message:
          'Transaction cancelled, please refer cancellation reasons for specific reasons [None, TransactionConflict]',
        $metadata: {},
        CancellationReasons: [
          { Code: 'None' },
          { Code: 'TransactionConflict', Message: 'Transaction is ongoing for the item' },
        ],
      });
    },
    { step: 'initialize', name: 'cancelTransactions' },
  );
  return stats;
}

const deliveryKeys = (count: number, audienceId = 'desk'): DeliveryKey[] =>
  Array.from({ length: count }, (_, index) => ({ audienceId, articleKey: `id:article-${index}` }));

const deliveries = (keys: readonly DeliveryKey[], deliveredAt = t0): DeliveryRecord[] =>
  keys.map((key, index) => ({ ...key, deliveredAt, messageId: `msg-${index}`, ruleIds: ['rule-a'] }));

describe('run lease', () => {
  it('refuses a second owner while the lease is live and names the holder', async () => {
    const { store } = await setup();
    const lease = await store.acquireLease('run-a', 5 * minute, t0);
    expect(lease).toEqual({ owner: 'run-a', expiresAt: t0 + 5 * minute });

    const attempt = store.acquireLease('run-b', 5 * minute, t0 + minute);
    await expect(attempt).rejects.toBeInstanceOf(LeaseHeldError);
    await expect(attempt).rejects.toMatchObject({ holder: 'run-a', expiresAt: t0 + 5 * minute });
  });

  it('lets the same owner take its lease again (an SDK retry of a Put that already succeeded)', async () => {
    const { store } = await setup();
    await store.acquireLease('run-a', 5 * minute, t0);
    await expect(store.acquireLease('run-a', 5 * minute, t0 + 1)).resolves.toEqual({
      owner: 'run-a',
      expiresAt: t0 + 1 + 5 * minute,
    });
  });

  it('takes over an expired lease, and the stale owner releasing it does not delete the new one', async () => {
    const { store } = await setup();
    const stale = await store.acquireLease('run-a', 5 * minute, t0);
    const fresh = await store.acquireLease('run-b', 5 * minute, t0 + 6 * minute);
    expect(fresh.owner).toBe('run-b');

    await store.releaseLease(stale);

    await expect(store.acquireLease('run-c', 5 * minute, t0 + 7 * minute)).rejects.toMatchObject({
      name: 'LeaseHeldError',
      holder: 'run-b',
    });
  });

  it('is free again after its owner releases it, and releasing twice is harmless', async () => {
    const { store } = await setup();
    const lease = await store.acquireLease('run-a', 5 * minute, t0);
    await store.releaseLease(lease);
    await store.releaseLease(lease);
    await expect(store.acquireLease('run-b', 5 * minute, t0 + minute)).resolves.toMatchObject({ owner: 'run-b' });
  });

  it('keeps its expiry in milliseconds and a TTL a day past it, so TTL never removes a live lease', async () => {
    const { store, clients, table } = await setup();
    await store.acquireLease('run-a', 15 * minute, t0);
    const item = await rawItem(clients.documents, table, { pk: 'lease', sk: 'run' });
    expect(item).toMatchObject({ owner: 'run-a', leaseExpiresAt: t0 + 15 * minute, acquiredAt: t0 });
    expect(item?.expiresAt).toBe(Math.floor((t0 + 15 * minute + day) / 1000));
  });

  it('rejects a non-positive duration before touching the table', async () => {
    const { store, clients } = await setup();
    const calls = recordCalls(clients.documents);
    await expect(store.acquireLease('run-a', 0, t0)).rejects.toBeInstanceOf(RangeError);
    expect(calls).toEqual([]);
  });
});

describe('watermark', () => {
  it('starts empty, is created at version 1 and read back', async () => {
    const { store } = await setup();
    expect(await store.readWatermark()).toBeUndefined();
    const lease = await store.acquireLease('run-a', 5 * minute, t0);
    const written = await store.advanceWatermark(lease, undefined, t0 - minute, t0 + 1000);
    expect(written).toEqual({ at: t0 - minute, version: 1, updatedAt: t0 + 1000, runId: 'run-a' });
    expect(await store.readWatermark()).toEqual(written);
  });

  // Two runs that read the same watermark version race to advance it; DynamoDB serializes the
  // conditional writes on the item, so the one that lands second meets the new version. The writes
  // are issued one after the other, in both orders, rather than with Promise.all: moto serves
  // requests on threads and rolls a failed transaction back by restoring a snapshot of the whole
  // table, which can erase the winner's concurrent write (4 failures in 21 runs). What is tested is
  // our condition, not moto's threading.
  it.each([
    ['this run first', 0],
    ['the other run first', 1],
  ])('lets exactly one of two advances from the same version win (%s)', async (_order, first) => {
    const { store, table } = await setup();
    const lease = await store.acquireLease('run-a', 5 * minute, t0);
    const base = await store.advanceWatermark(lease, undefined, t0 - 10 * minute, t0);
    // Two stores on separate clients, as two runs would be.
    const other = observer(table);
    const attempts = [
      () => store.advanceWatermark(lease, base, t0 - 5 * minute, t0 + 1000),
      () => other.advanceWatermark(lease, base, t0 - 4 * minute, t0 + 1000),
    ];
    const ordered = first === 0 ? attempts : [...attempts].reverse();
    const winner = await (ordered[0] as (typeof attempts)[0])();
    const loser = (ordered[1] as (typeof attempts)[0])();

    await expect(loser).rejects.toBeInstanceOf(WatermarkConflictError);
    await expect(loser).rejects.toThrow('expected version 1, found version 2');
    expect(winner.version).toBe(2);
    expect(await store.readWatermark()).toEqual(winner);
  });

  it('lets exactly one of two first writes win', async () => {
    const { store, table } = await setup();
    const lease = await store.acquireLease('run-a', 5 * minute, t0);
    const written = await store.advanceWatermark(lease, undefined, t0 - 2 * minute, t0);
    const second = observer(table).advanceWatermark(lease, undefined, t0 - minute, t0);
    await expect(second).rejects.toBeInstanceOf(WatermarkConflictError);
    expect(await store.readWatermark()).toEqual(written);
  });

  it('refuses to advance with an expired lease and leaves the watermark as it was', async () => {
    const { store } = await setup();
    const lease = await store.acquireLease('run-a', 5 * minute, t0);
    const before = await store.advanceWatermark(lease, undefined, t0 - 10 * minute, t0);

    const attempt = store.advanceWatermark(lease, before, t0 - minute, t0 + 6 * minute);
    await expect(attempt).rejects.toBeInstanceOf(LeaseLostError);
    await expect(attempt).rejects.toThrow(/expired/);
    expect(await store.readWatermark()).toEqual(before);
  });

  it('refuses to advance once another run took the lease over, even with the right version', async () => {
    const { store } = await setup();
    const lease = await store.acquireLease('run-a', 5 * minute, t0);
    const before = await store.advanceWatermark(lease, undefined, t0 - 10 * minute, t0);
    await store.acquireLease('run-b', 5 * minute, t0 + 6 * minute);

    const attempt = store.advanceWatermark(lease, before, t0 - minute, t0 + 6 * minute);
    await expect(attempt).rejects.toBeInstanceOf(LeaseLostError);
    await expect(attempt).rejects.toThrow(/taken over by run-b/);
    expect(await store.readWatermark()).toEqual(before);
  });

  it('refuses to advance when the lease item is gone', async () => {
    const { store } = await setup();
    const lease = await store.acquireLease('run-a', 5 * minute, t0);
    await store.releaseLease(lease);
    await expect(store.advanceWatermark(lease, undefined, t0, t0 + 1)).rejects.toBeInstanceOf(LeaseLostError);
    expect(await store.readWatermark()).toBeUndefined();
  });

  it('reports a lost lease rather than a version conflict when both conditions fail', async () => {
    const { store } = await setup();
    const lease = await store.acquireLease('run-a', 5 * minute, t0);
    const stale = await store.advanceWatermark(lease, undefined, t0 - 10 * minute, t0);
    await store.setWatermark(t0 - 5 * minute, 'ops:alice', t0 + 1);
    await expect(store.advanceWatermark(lease, stale, t0, t0 + 6 * minute)).rejects.toBeInstanceOf(LeaseLostError);
  });

  it('retries a transaction cancelled by a conflicting request, then applies it', async () => {
    const { store, clients, sleeps } = await setup();
    const lease = await store.acquireLease('run-a', 5 * minute, t0);
    const conflicts = cancelTransactions(clients.documents, 2);
    const written = await store.advanceWatermark(lease, undefined, t0 - minute, t0);
    expect(conflicts.cancelled).toBe(2);
    expect(sleeps).toHaveLength(2);
    expect(await store.readWatermark()).toEqual(written);
  });

  it('gives up with a StateStoreError when the transaction keeps conflicting', async () => {
    const { store, clients } = await setup();
    const lease = await store.acquireLease('run-a', 5 * minute, t0);
    const conflicts = cancelTransactions(clients.documents, Number.POSITIVE_INFINITY);
    const attempt = store.advanceWatermark(lease, undefined, t0 - minute, t0);
    await expect(attempt).rejects.toBeInstanceOf(StateStoreError);
    await expect(attempt).rejects.toThrow(/TransactionConflict/);
    expect(conflicts.cancelled).toBe(4);
    expect(await store.readWatermark()).toBeUndefined();
  });

  it('never moves backwards: an older or equal instant returns the current watermark without a write', async () => {
    const { store, clients } = await setup();
    const lease = await store.acquireLease('run-a', 5 * minute, t0);
    const current = await store.advanceWatermark(lease, undefined, t0 - minute, t0);
    const calls = recordCalls(clients.documents);

    await expect(store.advanceWatermark(lease, current, t0 - 2 * minute, t0 + 1)).resolves.toBe(current);
    await expect(store.advanceWatermark(lease, current, current.at, t0 + 1)).resolves.toBe(current);

    expect(calls).toEqual([]);
    expect(await store.readWatermark()).toEqual(current);
  });

  it('lets ops rewind it, which makes a run still holding the old version conflict', async () => {
    const { store } = await setup();
    const lease = await store.acquireLease('run-a', 5 * minute, t0);
    const seen = await store.advanceWatermark(lease, undefined, t0 - minute, t0);

    const rewound = await store.setWatermark(t0 - day, 'ops:alice', t0 + 1000);
    expect(rewound).toEqual({ at: t0 - day, version: 2, updatedAt: t0 + 1000, runId: 'ops:alice' });

    await expect(store.advanceWatermark(lease, seen, t0, t0 + 2000)).rejects.toBeInstanceOf(WatermarkConflictError);
    expect(await store.readWatermark()).toEqual(rewound);
  });

  it('applies an ops set with an expected version only while that version is current', async () => {
    const { store } = await setup();
    const first = await store.setWatermark(t0, 'ops:alice', t0);
    expect(first.version).toBe(1);
    const second = await store.setWatermark(t0 + minute, 'ops:bob', t0 + 1, first);
    expect(second).toMatchObject({ at: t0 + minute, version: 2, runId: 'ops:bob' });

    await expect(store.setWatermark(t0 - minute, 'ops:carol', t0 + 2, first)).rejects.toBeInstanceOf(
      WatermarkConflictError,
    );
    expect(await store.readWatermark()).toEqual(second);
  });

  it('reports a damaged watermark item instead of treating it as missing', async () => {
    const { store, clients, table } = await setup();
    await store.setWatermark(t0, 'ops:alice', t0);
    await clients.documents.send(
      new PutCommand({ TableName: table, Item: { pk: 'watermark', sk: 'current', at: 'yesterday', version: 1 } }),
    );
    await expect(store.readWatermark()).rejects.toBeInstanceOf(StateStoreError);
  });

  it('replaces a malformed watermark only while it is malformed, with a version above any a run can hold', async () => {
    const { store, clients, table } = await setup();
    const put = (item: Record<string, unknown>) =>
      clients.documents.send(new PutCommand({ TableName: table, Item: { pk: 'watermark', sk: 'current', ...item } }));
    // `at` broken, the count kept: one above it, so a run holding version 4 gets a conflict.
    await put({ at: 'yesterday', version: 4, updatedAt: t0, runId: 'r' });
    expect(await store.replaceMalformedWatermark(t0, 'cli:ops', t0 + minute)).toMatchObject({ at: t0, version: 5 });
    expect(await store.readWatermark()).toEqual({ at: t0, version: 5, updatedAt: t0 + minute, runId: 'cli:ops' });
    // The count itself broken: above any count, from the clock.
    await put({ at: t0, version: 'three', updatedAt: t0, runId: 'r' });
    expect((await store.replaceMalformedWatermark(t0, 'cli:ops', t0 + 2 * minute)).version).toBe(t0 + 2 * minute);
    // Mended meanwhile (by another operator, then advanced by a run): left alone.
    await expect(store.replaceMalformedWatermark(t0 + day, 'cli:late', t0 + 3 * minute)).rejects.toBeInstanceOf(
      WatermarkConflictError,
    );
    expect((await store.readWatermark())?.runId).toBe('cli:ops');
  });

  it('reports a watermark no provider date can be written for (55,000 years back) as damaged, saying how to fix it', async () => {
    const { store, clients, table } = await setup();
    for (const at of [-1_686_000_000_000_000, Date.UTC(1969, 11, 31, 9), Date.UTC(9999, 11, 31, 10)]) {
      await clients.documents.send(
        new PutCommand({
          TableName: table,
          Item: { pk: 'watermark', sk: 'current', at, version: 3, updatedAt: t0, runId: 'cli:ops' },
        }),
      );
      await expect(store.readWatermark()).rejects.toThrow(
        /the watermark item in .* is malformed \(.*from 1969-12-31T10:00Z to 9999-12-31T09:59Z.*\); fix it with 'news-alerts watermark set'/s,
      );
    }
  });
});

describe('delivery ledger', () => {
  it('writes 260 records in exactly 11 BatchWriteItem calls of at most 25 items', async () => {
    const { store, clients, table } = await setup();
    const calls = recordCalls(clients.documents);
    const records = deliveries(deliveryKeys(260));

    await store.recordDelivered(records);

    const writes = calls.filter((call) => call.command === 'BatchWriteItemCommand');
    expect(writes).toHaveLength(11);
    expect(Math.max(...writes.map((call) => call.size))).toBe(25);
    expect(writes.reduce((sum, call) => sum + call.size, 0)).toBe(260);
    const found = await observer(table).findDelivered(records);
    expect(found.size).toBe(260);
  });

  it('reads 250 distinct keys (plus duplicates) in exactly 3 BatchGetItem calls and reports only delivered ones', async () => {
    const { store, clients } = await setup();
    const keys = deliveryKeys(250);
    const delivered = keys.filter((_, index) => index % 2 === 0);
    await store.recordDelivered(deliveries(delivered));
    const calls = recordCalls(clients.documents);

    const asked = [...keys, ...keys.slice(0, 40), ...keys.slice(200, 230)];
    const found = await store.findDelivered(asked);

    const reads = calls.filter((call) => call.command === 'BatchGetItemCommand');
    expect(reads).toHaveLength(3);
    expect(reads.every((call) => call.size <= 100)).toBe(true);
    expect(reads.reduce((sum, call) => sum + call.size, 0)).toBe(250);
    expect(found).toEqual(new Set(delivered.map(deliveryId)));
  });

  it('collapses duplicate records into one write (DynamoDB rejects duplicate keys in a batch)', async () => {
    const { store, clients, table } = await setup();
    const calls = recordCalls(clients.documents);
    const [key] = deliveryKeys(1);
    await store.recordDelivered([
      { ...key!, deliveredAt: t0, ruleIds: ['rule-a'] },
      { ...key!, deliveredAt: t0 + 1, ruleIds: ['rule-b'] },
    ]);
    expect(calls.filter((call) => call.command === 'BatchWriteItemCommand').map((call) => call.size)).toEqual([1]);
    const item = await rawItem(clients.documents, table, deliveryItemKey(key!));
    expect(item?.ruleIds).toEqual(['rule-b']);
  });

  it("reads back what each entry recorded: story, collapse, status, title hash and a marker's lead", async () => {
    const { store } = await setup();
    const records: DeliveryRecord[] = [
      {
        audienceId: 'desk',
        articleKey: 'id:lead',
        deliveredAt: t0,
        messageId: 'm-1',
        ruleIds: ['r'],
        storyId: 's1',
        status: 'PUBLISHED',
        titleHash: 'abc',
      },
      {
        audienceId: 'desk',
        articleKey: 'id:copy',
        deliveredAt: t0,
        ruleIds: ['r'],
        storyId: 's1',
        collapsedInto: 's1',
        collapsedLead: 'id:lead',
        status: '',
        titleHash: 'def',
      },
      { audienceId: 'desk', articleKey: 'story:s1', deliveredAt: t0, ruleIds: [], leadArticleKey: 'id:lead' },
      { audienceId: 'desk', articleKey: 'id:old', deliveredAt: t0, ruleIds: ['r'] },
    ];
    await store.recordDelivered(records);
    const entries = await store.readDeliveries([...records, { audienceId: 'desk', articleKey: 'id:never' }]);
    expect(entries.size).toBe(4);
    for (const record of records) expect(entries.get(deliveryId(record))).toEqual(record);
  });

  it("refreshes an entry's facts in place (its retention untouched) and never recreates one that is gone", async () => {
    const { store, clients, table } = await setup();
    const key = { audienceId: 'desk', articleKey: 'id:changed' };
    await store.recordDelivered([
      { ...key, deliveredAt: t0, ruleIds: ['r'], messageId: 'm-1', status: 'PUBLISHED', titleHash: 'a' },
    ]);
    const before = await rawItem(clients.documents, table, deliveryItemKey(key));
    const gone = { audienceId: 'desk', articleKey: 'id:never' };
    await store.refreshLedgerFacts([
      { ...key, status: 'UPDATED', titleHash: 'b' },
      { ...gone, status: 'DELETED', titleHash: 'c' },
    ]);
    const after = await rawItem(clients.documents, table, deliveryItemKey(key));
    expect(after).toEqual({ ...before, status: 'UPDATED', titleHash: 'b' });
    expect(await rawItem(clients.documents, table, deliveryItemKey(gone))).toBeUndefined();
  });

  it('forgets only entries still recorded as collapsed copies: a sent entry, and one never written, stay as they are', async () => {
    const { store } = await setup();
    const copy = { audienceId: 'desk', articleKey: 'id:copy' };
    const sent = { audienceId: 'desk', articleKey: 'id:sent' };
    const never = { audienceId: 'desk', articleKey: 'id:never' };
    await store.recordDelivered([
      { ...copy, deliveredAt: t0, ruleIds: ['r'], storyId: 's1', collapsedInto: 's1' },
      { ...sent, deliveredAt: t0, ruleIds: ['r'], storyId: 's1', messageId: 'm-1' },
    ]);
    await store.forgetCollapsed([copy, sent, never]);
    expect([...(await store.findDelivered([copy, sent, never]))]).toEqual([deliveryId(sent)]);
  });

  it('stores a hostile status from the provider bounded, so the entry stays far below 400 KB', async () => {
    const { store, clients, table } = await setup();
    const key = { audienceId: 'desk', articleKey: 'id:hostile' };
    const status = 'UPDATED'.repeat(80_000);
    await store.recordDelivered([{ ...key, deliveredAt: t0, ruleIds: ['r'], status, titleHash: 'abc' }]);
    const stored = (await store.readDeliveries([key])).get(deliveryId(key));
    expect(stored?.status).toBe(storedStatus(status));
    expect(stored?.status?.length).toBeLessThanOrEqual(maxStoredStatusBytes);
    const item = await rawItem(clients.documents, table, deliveryItemKey(key));
    expect(measureItem(item ?? {}).bytes).toBeLessThan(1024);
    // Ordinary statuses, and none at all, stay as they are.
    expect(storedStatus('')).toBe('');
    expect(storedStatus('#DELETED')).toBe('#DELETED');
  });

  it('reads a ledger entry damaged by hand as handled, losing only its damaged fields, with a warning', async () => {
    const log = captureLog();
    const { store, clients, table } = await setup({ log });
    const key = { audienceId: 'desk', articleKey: 'story:s1' };
    await clients.documents.send(
      new PutCommand({
        TableName: table,
        Item: {
          ...deliveryItemKey(key),
          deliveredAt: 'yesterday',
          ruleIds: 'r',
          storyId: 9,
          status: 'UPDATED',
          leadArticleKey: 'id:lead',
        },
      }),
    );
    const bare = { audienceId: 'desk', articleKey: 'id:bare' };
    await clients.documents.send(new PutCommand({ TableName: table, Item: deliveryItemKey(bare) }));
    // A copy whose lead was emptied by hand: judged as one recorded before `collapsedLead` existed.
    const copy = { audienceId: 'desk', articleKey: 'id:copy' };
    await clients.documents.send(
      new PutCommand({
        TableName: table,
        Item: { ...deliveryItemKey(copy), deliveredAt: 5, ruleIds: [], collapsedInto: 's1', collapsedLead: '' },
      }),
    );
    const entries = await store.readDeliveries([key, bare, copy]);
    expect(entries.get(deliveryId(copy))).toEqual({
      ...copy,
      deliveredAt: 5,
      ruleIds: [],
      collapsedInto: 's1',
      malformed: ['collapsedLead'],
    });
    expect(entries.get(deliveryId(key))).toEqual({
      ...key,
      deliveredAt: 0,
      ruleIds: [],
      status: 'UPDATED',
      leadArticleKey: 'id:lead',
      // What the damaged fields said is unknown, and the entry says which they were.
      malformed: ['deliveredAt', 'ruleIds', 'storyId'],
    });
    expect(entries.get(deliveryId(bare))).toEqual({ ...bare, deliveredAt: 0, ruleIds: [] });
    expect(log.lines.filter((line) => line.includes('malformed'))).toHaveLength(2);
  });

  it('answers an empty question without calling DynamoDB', async () => {
    const { store, clients } = await setup();
    const calls = recordCalls(clients.documents);
    expect(await store.findDelivered([])).toEqual(new Set());
    await store.recordDelivered([]);
    expect(calls).toEqual([]);
  });

  it('retries items DynamoDB leaves unprocessed until every record is written', async () => {
    const { store, clients, table, sleeps } = await setup();
    const calls = recordCalls(clients.documents);
    const injected = withholdHalf(clients.documents, 6);
    const records = deliveries(deliveryKeys(60));

    await store.recordDelivered(records);

    expect(injected.withheld).toBeGreaterThan(0);
    const writes = calls.filter((call) => call.command === 'BatchWriteItemCommand');
    expect(writes.length).toBeGreaterThan(3);
    expect(writes.every((call) => call.size <= 25)).toBe(true);
    expect(sleeps.length).toBeGreaterThan(0);
    expect((await observer(table).findDelivered(records)).size).toBe(60);
  });

  it('retries keys DynamoDB leaves unprocessed, so no delivered notification looks new', async () => {
    const { store, clients, table } = await setup();
    const records = deliveries(deliveryKeys(150));
    await observer(table).recordDelivered(records);
    const calls = recordCalls(clients.documents);
    const injected = withholdHalf(clients.documents, 4);

    const found = await store.findDelivered(records);

    expect(injected.withheld).toBeGreaterThan(0);
    expect(calls.filter((call) => call.command === 'BatchGetItemCommand').length).toBeGreaterThan(2);
    expect(found.size).toBe(150);
  });

  it('fails loudly when items stay unprocessed after every retry, waiting longer each time', async () => {
    const { store, clients, sleeps } = await setup();
    const calls = recordCalls(clients.documents);
    withholdHalf(clients.documents, Number.POSITIVE_INFINITY);

    const attempt = store.recordDelivered(deliveries(deliveryKeys(2)));
    await expect(attempt).rejects.toBeInstanceOf(StateStoreError);
    await expect(attempt).rejects.toThrow(/1 of 2 item\(s\) .* still unprocessed after 8 attempts/);
    expect(calls.filter((call) => call.command === 'BatchWriteItemCommand')).toHaveLength(8);
    expect(sleeps).toHaveLength(7);
    expect(sleeps.every((ms) => ms >= 0 && ms <= 3000)).toBe(true);
  });

  it('keeps no more batch requests in flight than its concurrency', async () => {
    const { store, clients } = await setup({ concurrency: 2 });
    let inFlight = 0;
    let peak = 0;
    clients.documents.middlewareStack.add(
      (next) => async (args) => {
        inFlight += 1;
        peak = Math.max(peak, inFlight);
        try {
          // Hold each request a moment so that unbounded sends would overlap.
          await new Promise((resolve) => setTimeout(resolve, 20));
          return await next(args);
        } finally {
          inFlight -= 1;
        }
      },
      { step: 'initialize', name: 'countInFlight' },
    );
    await store.recordDelivered(deliveries(deliveryKeys(200)));
    expect(peak).toBe(2);
  });

  it('stores the TTL in epoch seconds, deliveredAt + ledgerRetentionDays', async () => {
    const { store, clients, table } = await setup({ ledgerRetentionDays: 3 });
    const [key] = deliveryKeys(1);
    await store.recordDelivered([{ ...key!, deliveredAt: t0 + 1234, ruleIds: ['rule-a', 'rule-b'] }]);
    const item = await rawItem(clients.documents, table, deliveryItemKey(key!));
    expect(item).toEqual({
      pk: 'delivery#desk|id:article-0',
      sk: 'ledger',
      audienceId: 'desk',
      articleKey: 'id:article-0',
      deliveredAt: t0 + 1234,
      ruleIds: ['rule-a', 'rule-b'],
      expiresAt: Math.floor((t0 + 1234) / 1000) + 3 * 86_400,
    });
  });

  it('hashes article keys too long for a key and still finds them', async () => {
    const { store, clients, table } = await setup();
    const longKey: DeliveryKey = { audienceId: 'desk', articleKey: `id:${'가'.repeat(600)}` };
    const hashLike: DeliveryKey = { audienceId: 'desk', articleKey: '#looks-hashed' };
    const empty: DeliveryKey = { audienceId: 'desk', articleKey: '' };
    await store.recordDelivered(deliveries([longKey, hashLike, empty]));

    const itemKey = deliveryItemKey(longKey);
    expect(Buffer.byteLength(itemKey.pk)).toBeLessThanOrEqual(64);
    expect(itemKey.pk.startsWith('delivery##')).toBe(true);
    expect(keyPart('#looks-hashed')).not.toBe('#looks-hashed');
    expect(keyPart('')).toMatch(/^#.{43}$/);
    expect((await rawItem(clients.documents, table, itemKey))?.articleKey).toBe(longKey.articleKey);
    expect(await store.findDelivered([longKey, hashLike, empty, { audienceId: 'desk', articleKey: 'id:x' }])).toEqual(
      new Set([deliveryId(longKey), deliveryId(hashLike), deliveryId(empty)]),
    );
  });

  it('counts an entry past its TTL that DynamoDB has not deleted yet as delivered', async () => {
    const { store } = await setup({ ledgerRetentionDays: 1 });
    const [key] = deliveryKeys(1);
    await store.recordDelivered([{ ...key!, deliveredAt: t0 - 30 * day, ruleIds: [] }]);
    expect(await store.findDelivered([key!])).toEqual(new Set([deliveryId(key!)]));
  });

  it('gives an entry read again with less than half its retention left a full retention, and leaves younger ones alone', async () => {
    // A stuck watermark makes every run re-read the same old window: its ledger entries must not
    // expire under it, or those alerts go out again.
    const { store, clients, table } = await setup({ ledgerRetentionDays: 14, now: () => t0 + 8 * day });
    const [old, young, expired] = deliveryKeys(3);
    await store.recordDelivered([
      { ...old!, deliveredAt: t0, ruleIds: ['rule-a'] },
      { ...young!, deliveredAt: t0 + 7 * day, ruleIds: ['rule-a'] },
      { ...expired!, deliveredAt: t0 - 20 * day, ruleIds: ['rule-a'] },
    ]);
    const calls = recordCalls(clients.documents);

    expect(await store.findDelivered([old!, young!, expired!])).toEqual(
      new Set([old, young, expired].map((key) => deliveryId(key!))),
    );

    const extended = Math.floor((t0 + 8 * day) / 1000) + 14 * 86_400;
    expect((await rawItem(clients.documents, table, deliveryItemKey(old!)))?.expiresAt).toBe(extended);
    expect((await rawItem(clients.documents, table, deliveryItemKey(expired!)))?.expiresAt).toBe(extended);
    expect((await rawItem(clients.documents, table, deliveryItemKey(young!)))?.expiresAt).toBe(
      Math.floor((t0 + 7 * day) / 1000) + 14 * 86_400,
    );
    expect(calls.filter((call) => call.command === 'UpdateItemCommand')).toHaveLength(2);
    // The rest of the entry is untouched.
    expect((await rawItem(clients.documents, table, deliveryItemKey(old!)))?.deliveredAt).toBe(t0);
  });

  it('reads a fresh ledger without extra writes, and never recreates an entry deleted meanwhile', async () => {
    const { store, clients, table } = await setup({ ledgerRetentionDays: 14, now: () => t0 + 10 * day });
    const keys = deliveryKeys(30);
    await store.recordDelivered(deliveries(keys, t0 + 9 * day));
    const [gone] = deliveryKeys(1, 'night-desk');
    await store.recordDelivered([{ ...gone!, deliveredAt: t0, ruleIds: [] }]);
    const calls = recordCalls(clients.documents);

    expect((await store.findDelivered(keys)).size).toBe(30);
    expect(calls.map((call) => call.command)).toEqual(['BatchGetItemCommand']);

    // TTL deletes the entry between the read and the extension: the update must not bring it back.
    clients.documents.middlewareStack.add(
      (next, context) => async (args) => {
        if (context.commandName === 'UpdateItemCommand') {
          await clients.documents.send(new DeleteCommand({ TableName: table, Key: deliveryItemKey(gone!) }));
        }
        return await next(args);
      },
      { step: 'initialize', name: 'deleteBeforeUpdate' },
    );
    expect(await store.findDelivered([gone!])).toEqual(new Set([deliveryId(gone!)]));
    expect(await rawItem(clients.documents, table, deliveryItemKey(gone!))).toBeUndefined();
  });

  it('still answers when extending old entries fails, and says so in a warning', async () => {
    const log = captureLog();
    const { store, clients, table } = await setup({ ledgerRetentionDays: 14, now: () => t0 + 10 * day, log });
    const [key] = deliveryKeys(1);
    await store.recordDelivered([{ ...key!, deliveredAt: t0, ruleIds: [] }]);
    clients.documents.middlewareStack.add(
      (next, context) => async (args) => {
        if (context.commandName === 'UpdateItemCommand') throw new Error('throttled for good');
        return await next(args);
      },
      { step: 'initialize', name: 'failUpdates' },
    );

    expect(await store.findDelivered([key!])).toEqual(new Set([deliveryId(key!)]));
    expect((await rawItem(clients.documents, table, deliveryItemKey(key!)))?.expiresAt).toBe(
      Math.floor(t0 / 1000) + 14 * 86_400,
    );
    expect(log.lines.filter((line) => line.includes('"WARN"') && line.includes('throttled for good'))).toHaveLength(1);
  });
});

describe('undeliverable notifications', () => {
  const parked = (audienceId: string, articleKey: string, failedAt: number): UndeliverableRecord => ({
    audienceId,
    articleKey,
    topicArn: `arn:aws:sns:us-east-1:123456789012:${audienceId}`,
    failedAt,
    code: 'NotFound',
    reason: 'Topic does not exist',
    subject: `Alert ${articleKey}`,
    body: JSON.stringify({ default: articleKey }),
  });

  it('parks them per audience with a TTL, lists them oldest first, and forgets them after replay', async () => {
    const { store, clients, table } = await setup({ undeliverableRetentionDays: 7 });
    const records = [
      parked('desk', 'id:b', t0 + 2000),
      parked('desk', 'id:a', t0 + 1000),
      parked('markets', 'id:a', t0 + 1500),
    ];
    await store.recordUndeliverable(records);

    expect(await store.listUndeliverable('desk')).toEqual([records[1], records[0]]);
    expect(await store.listUndeliverable('markets')).toEqual([records[2]]);
    expect(await store.listUndeliverable('nobody')).toEqual([]);
    const item = await rawItem(clients.documents, table, { pk: 'undeliverable#desk', sk: 'id:a' });
    expect(item?.expiresAt).toBe(Math.floor((t0 + 1000) / 1000) + 7 * 86_400);

    await store.forgetUndeliverable([records[1]!]);
    expect(await store.listUndeliverable('desk')).toEqual([records[0]]);
  });
});

describe('run history', () => {
  const run = (runId: string, startedAt: number, summary: Record<string, unknown> = {}): RunRecord => ({
    runId,
    status: 'completed',
    startedAt,
    finishedAt: startedAt + 30_000,
    summary,
  });

  it('returns the most recent runs first, however they were written', async () => {
    const { store } = await setup();
    await store.recordRun(run('run-2', t0 + 5 * minute));
    await store.recordRun(run('run-3', t0 + 10 * minute));
    await store.recordRun(run('run-1', t0));

    expect((await store.recentRuns(2)).map((record) => record.runId)).toEqual(['run-3', 'run-2']);
    expect((await store.recentRuns(10)).map((record) => record.runId)).toEqual(['run-3', 'run-2', 'run-1']);
    expect(await store.recentRuns(0)).toEqual([]);
  });

  it('keeps the summary (minus undefined values) and a TTL of finishedAt + runRetentionDays', async () => {
    const { store, clients, table } = await setup({ runRetentionDays: 5 });
    await store.recordRun(run('run-1', t0, { articles: 12, skipped: undefined, pages: [1, 2], note: 'ok' }));

    expect(await store.recentRuns(1)).toEqual([run('run-1', t0, { articles: 12, pages: [1, 2], note: 'ok' })]);
    const { Items } = await clients.documents.send(
      new QueryCommand({
        TableName: table,
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: { ':pk': 'run' },
      }),
    );
    expect(Items?.[0]?.sk).toBe(`${new Date(t0).toISOString()}#run-1`);
    expect(Items?.[0]?.expiresAt).toBe(Math.floor((t0 + 30_000) / 1000) + 5 * 86_400);
  });
});

describe('createTables', () => {
  it('creates the state table with pk/sk, on-demand billing and TTL on expiresAt, and can run twice', async () => {
    const { dynamo } = awsClients();
    const names = tableNamesFor(uniquePrefix());
    await createTables(dynamo, names);
    await createTables(dynamo, names);

    const { Table } = await dynamo.send(new DescribeTableCommand({ TableName: names.state }));
    expect(Table?.TableStatus).toBe('ACTIVE');
    expect(Table?.KeySchema).toEqual([
      { AttributeName: 'pk', KeyType: 'HASH' },
      { AttributeName: 'sk', KeyType: 'RANGE' },
    ]);
    expect(Table?.BillingModeSummary?.BillingMode).toBe('PAY_PER_REQUEST');
    const ttl = await dynamo.send(new DescribeTimeToLiveCommand({ TableName: names.state }));
    expect(ttl.TimeToLiveDescription).toMatchObject({ TimeToLiveStatus: 'ENABLED', AttributeName: 'expiresAt' });
    const rules = await dynamo.send(new DescribeTableCommand({ TableName: names.rules }));
    expect(rules.Table?.KeySchema).toEqual([{ AttributeName: 'ruleId', KeyType: 'HASH' }]);
    const audiences = await dynamo.send(new DescribeTableCommand({ TableName: names.audiences }));
    expect(audiences.Table?.KeySchema).toEqual([{ AttributeName: 'audienceId', KeyType: 'HASH' }]);
  });

  it('refuses a prefix that makes invalid table names', () => {
    expect(() => tableNamesFor('bad prefix/')).toThrow(/invalid DynamoDB table name/);
  });
});

describe('reading state', () => {
  const state: ReadingState = {
    order: 'oldest-first',
    lastSweepAt: t0 - 30 * minute,
    runId: 'run-a',
    runStatus: 'completed',
    watermarkVersion: 3,
    resume: [{ day: '2025-03-01', position: { cursor: 'opaque==' }, keys: ['id:a', 'id:b'] }],
    updatedAt: t0,
  };

  it('round-trips under the lease, and a run that lost the lease cannot overwrite its successor', async () => {
    const { store } = await setup();
    expect(await store.readReadingState()).toBeUndefined();
    const lease = await store.acquireLease('run-a', 10 * minute, t0);
    await store.writeReadingState(lease, state, t0);
    expect(await store.readReadingState()).toEqual(state);

    // run-a's lease expired and run-b took over: run-a's late write is refused.
    const successor = await store.acquireLease('run-b', 10 * minute, t0 + 11 * minute);
    await expect(store.writeReadingState(lease, { ...state, order: 'unknown' }, t0 + 12 * minute)).rejects.toThrow(
      LeaseLostError,
    );
    await store.writeReadingState(successor, { ...state, runId: 'run-b', resume: [] }, t0 + 12 * minute);
    expect(await store.readReadingState()).toMatchObject({ runId: 'run-b', order: 'oldest-first', resume: [] });
  });

  it('reads an item damaged by hand as none (the next run sweeps) and says why, whatever was written', async () => {
    const { clients, table } = await setup();
    const warnings: unknown[] = [];
    const store = new DynamoStateStore({
      documents: clients.documents,
      tableName: table,
      log: { ...silentLog, warn: (...args: unknown[]) => warnings.push(args) },
      now: () => t0,
    });
    const damaged: Record<string, unknown>[] = [
      { ...state, order: 'sideways' },
      { ...state, resume: [{ day: 'tomorrow', position: { page: 0 }, keys: [] }] },
      { ...state, resume: 'all of it' },
      { ...state, lastSweepAt: 'yesterday' },
      { ...state, resume: [{ day: '2025-03-01', position: { page: 2, cursor: 'x' }, keys: [] }] },
      { __proto__: { order: 'newest-first' }, runId: 1 },
    ];
    for (const item of damaged) {
      await clients.documents.send(
        new PutCommand({
          TableName: table,
          Item: { ...JSON.parse(JSON.stringify(item)), pk: 'reading', sk: 'current' },
        }),
      );
      expect(await store.readReadingState()).toBeUndefined();
    }
    expect(warnings).toHaveLength(damaged.length);
    expect(JSON.stringify(warnings[0])).toContain('order');
  });
});
