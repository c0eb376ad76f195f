/**
 * The state store's additions for delivery preferences, against moto server: held notifications
 * written in transactions with their ledger entries and the holding index (packed to DynamoDB's
 * 100 writes), digest release claims, and daily budget counts with conditional writes.
 */
import { TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import {
  type DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  type TransactWriteCommandInput,
} from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { DynamoStateStore, deliveryItemKey, holdingItemKey, StateStoreError } from '#aws/dynamo-state-store';
import { toHeldNotification } from '#core/digest';
import { changeSince, titleHash } from '#core/ledger-facts';
import {
  DailyCountConflictError,
  type DigestRelease,
  deliveryId,
  type HeldNotification,
  type HoldReason,
  type Log,
  ReleaseClaimConflictError,
  type ReleasedNotification,
} from '#core/ports';
import { createTables, tableNamesFor } from '#sandbox/tables';
import { awsClients, uniquePrefix } from '#test/aws';
import { MemoryStateStore } from '#test/fake-ports';
import { MemoryHoldingStateStore } from '#test/memory-holds';

const t0 = Date.UTC(2026, 10, 22, 9, 0, 0);
const silentLog: Log = { debug() {}, info() {}, warn() {}, error() {} };

async function setup() {
  const clients = awsClients();
  const names = tableNamesFor(uniquePrefix());
  await createTables(clients.dynamo, names);
  const transactions: number[] = [];
  clients.documents.middlewareStack.add(
    (next, context) => async (args) => {
      if (context.commandName === 'TransactWriteItemsCommand') {
        transactions.push((args.input as TransactWriteCommandInput).TransactItems?.length ?? 0);
      }
      return await next(args);
    },
    { step: 'initialize', name: 'countTransactions' },
  );
  const warnings: { message: string; extra: unknown }[] = [];
  const log: Log = { ...silentLog, warn: (message, extra) => warnings.push({ message, extra }) };
  const store = new DynamoStateStore({
    documents: clients.documents,
    tableName: names.state,
    log,
    sleep: async () => {},
  });
  return { store, documents: clients.documents, table: names.state, transactions, log: { warnings } };
}

function held(audienceId: string, index: number, reason: HoldReason = 'quiet-hours', heldAt = t0): HeldNotification {
  return toHeldNotification(
    {
      audienceId,
      article: {
        key: `id:${index}`,
        id: String(index),
        title: `헤드라인 ${index} 🚀`,
        summary: '',
        url: `https://news.example.com/${index}`,
        publishedAt: t0 - index * 1000,
        categories: ['002000000'],
        categoryNames: ['Economy'],
        media: undefined,
      },
      rules: [{ ruleId: 'rates', description: undefined, urgent: false, reasons: [{ kind: 'keyword', term: 'rate' }] }],
    },
    reason,
    heldAt,
  );
}

const raw = async (documents: DynamoDBDocumentClient, table: string, key: { pk: string; sk: string }) =>
  (await documents.send(new GetCommand({ TableName: table, Key: key, ConsistentRead: true }))).Item;

describe('held notifications', () => {
  it('record the facts of the full article in the ledger, not of the bounded match (a long title is no change)', async () => {
    const { store } = await setup();
    const title = `${'반도체 수출 '.repeat(120)}끝`;
    const status = 'PUBLISHED'.repeat(40);
    const article = {
      key: 'id:long',
      title,
      summary: '',
      url: 'https://news.example.com/long',
      publishedAt: t0,
      categories: [],
      categoryNames: [],
      status,
    };
    const record = toHeldNotification(
      { audienceId: 'desk', article, rules: [{ ruleId: 'r', urgent: false, reasons: [] }] },
      'digest',
      t0,
    );
    expect(record.match.article.title.length).toBeLessThan(title.length);
    await store.holdNotifications([record]);
    const entry = (await store.readDeliveries([record.key])).get(deliveryId(record.key));
    expect(entry === undefined ? 'missing' : changeSince(entry, article)).toBeUndefined();
  });

  it('are written with their ledger entries and the holding index, in transactions of at most 100 writes', async () => {
    const { store, documents, table, transactions } = await setup();
    const records = [
      ...Array.from({ length: 70 }, (_, index) => held('desk', index, 'quiet-hours', t0 + index)),
      ...Array.from({ length: 10 }, (_, index) => held('other', index, 'budget', t0 + 500)),
    ];
    await store.holdNotifications(records);
    expect(transactions.every((size) => size <= 100)).toBe(true);
    // 80 items and 80 ledger entries, plus one index update per audience per transaction.
    expect(transactions.reduce((sum, size) => sum + size, 0)).toBeGreaterThanOrEqual(162);

    const { items, releases } = await store.readHeld('desk');
    expect(releases).toEqual([]);
    expect(items).toHaveLength(70);
    // The held item keeps the bounded match; the facts of the full article went to its ledger entry.
    expect(items.find((item) => item.key.articleKey === 'id:3')).toEqual({ ...records[3], facts: undefined });
    const delivered = await store.findDelivered(records.map((record) => record.key));
    expect(delivered.size).toBe(80);
    expect(
      await raw(documents, table, deliveryItemKey(records[0]?.key ?? { audienceId: '', articleKey: '' })),
    ).toMatchObject({
      heldFor: 'quiet-hours',
      deliveredAt: t0,
      ruleIds: ['rates'],
    });
    const index = await store.listHoldingAudiences();
    expect(index.sort((a, b) => a.audienceId.localeCompare(b.audienceId))).toEqual([
      { audienceId: 'desk', oldestHeldAt: t0, reasons: ['quiet-hours'], lastReleaseAt: undefined },
      { audienceId: 'other', oldestHeldAt: t0 + 500, reasons: ['budget'], lastReleaseAt: undefined },
    ]);
  });

  it('a held spike alert (reason kind spike) is read back, not skipped as malformed, for every hold reason', async () => {
    const { documents, table } = await setup();
    const warnings: string[] = [];
    const store = new DynamoStateStore({
      documents,
      tableName: table,
      log: { ...silentLog, warn: (message: string) => warnings.push(message) },
      sleep: async () => {},
    });
    for (const [index, reason] of (['quiet-hours', 'digest', 'budget'] as const).entries()) {
      const spike = held('desk', index, reason);
      const alert: HeldNotification = {
        ...spike,
        key: { audienceId: 'desk', articleKey: `spike:zeph:${index}` },
        match: {
          ...spike.match,
          article: { ...spike.match.article, key: `spike:zeph:${index}` },
          rules: [
            { ruleId: 'zeph', description: undefined, urgent: false, reasons: [{ kind: 'spike', term: 'balanced' }] },
          ],
        },
      };
      await store.holdNotifications([alert]);
    }
    const { items } = await store.readHeld('desk');
    expect(items.map((item) => [item.key.articleKey, item.reason, item.match.rules[0]?.reasons[0]?.kind])).toEqual([
      ['spike:zeph:0', 'quiet-hours', 'spike'],
      ['spike:zeph:1', 'digest', 'spike'],
      ['spike:zeph:2', 'budget', 'spike'],
    ]);
    expect(warnings).toEqual([]);
  });

  it('holding the same match again overwrites it and keeps the oldest instant in the index', async () => {
    const { store } = await setup();
    await store.holdNotifications([held('desk', 1, 'quiet-hours', t0)]);
    await store.holdNotifications([
      held('desk', 1, 'quiet-hours', t0 + 60_000),
      held('desk', 2, 'digest', t0 + 60_000),
    ]);
    const { items } = await store.readHeld('desk');
    expect(items.map((item) => [item.key.articleKey, item.heldAt]).sort()).toEqual([
      ['id:1', t0 + 60_000],
      ['id:2', t0 + 60_000],
    ]);
    const [entry] = await store.listHoldingAudiences();
    expect(entry?.oldestHeldAt).toBe(t0);
    expect([...(entry?.reasons ?? [])].sort()).toEqual(['digest', 'quiet-hours']);
  });

  it('keep the match story id, and their ledger entries record story, status and title hash as the in-memory store does', async () => {
    const { store } = await setup();
    const base = held('desk', 7, 'digest');
    // Without `facts` (an item held before they existed) the store works them out from the match.
    const record: HeldNotification = {
      ...base,
      facts: undefined,
      match: { ...base.match, storyId: 's-7', article: { ...base.match.article, status: 'UPDATED' } },
    };
    const plain = held('desk', 8, 'digest');
    await store.holdNotifications([record, plain]);

    const { items } = await store.readHeld('desk');
    expect(items.find((item) => item.key.articleKey === 'id:7')?.match.storyId).toBe('s-7');
    expect(items.find((item) => item.key.articleKey === 'id:8')?.match).not.toHaveProperty('storyId');

    const memory = new MemoryStateStore();
    await memory.holdNotifications([record, plain]);
    const keys = [record.key, plain.key];
    const entries = await store.readDeliveries(keys);
    expect(entries.get(deliveryId(record.key))).toEqual({
      ...record.key,
      deliveredAt: t0,
      ruleIds: ['rates'],
      heldFor: 'digest',
      storyId: 's-7',
      status: 'UPDATED',
      titleHash: titleHash(record.match.article.title),
    });
    expect(entries.get(deliveryId(plain.key))).toMatchObject({ status: '', titleHash: expect.any(String) });
    expect(entries.get(deliveryId(plain.key))).not.toHaveProperty('storyId');
    expect(await memory.readDeliveries(keys)).toEqual(entries);
  });

  it('retries a transaction that conflicts with another request', async () => {
    const { store, documents } = await setup();
    let cancelled = 0;
    documents.middlewareStack.add(
      (next, context) => async (args) => {
        if (context.commandName === 'TransactWriteItemsCommand' && cancelled === 0) {
          cancelled += 1;
          throw new TransactionCanceledException({
            message: 'conflict (injected)',
            $metadata: {},
            CancellationReasons: [{ Code: 'TransactionConflict' }],
          });
        }
        return await next(args);
      },
      { step: 'initialize', name: 'conflictOnce' },
    );
    await store.holdNotifications([held('desk', 1)]);
    expect(cancelled).toBe(1);
    expect((await store.readHeld('desk')).items).toHaveLength(1);
  });
});

describe('digest releases', () => {
  const release = (releaseAt: number, parts: string[][]): DigestRelease => ({
    audienceId: 'desk',
    releaseAt,
    claimedAt: releaseAt,
    parts,
    dropped: [],
  });

  it('a claim is read back with the items, refuses a second claim of the same instant, and records lastReleaseAt', async () => {
    const { store } = await setup();
    await store.holdNotifications([held('desk', 1), held('desk', 2), held('desk', 3)]);
    const claim = release(t0 + 3_600_000, [['id:1', 'id:2']]);
    await store.claimRelease(claim);
    await expect(store.claimRelease(claim)).rejects.toBeInstanceOf(ReleaseClaimConflictError);
    const state = await store.readHeld('desk');
    expect(state.releases).toEqual([claim]);
    expect(state.items).toHaveLength(3);
    expect((await store.listHoldingAudiences())[0]?.lastReleaseAt).toBe(t0 + 3_600_000);

    await store.finishRelease(claim, []);
    const after = await store.readHeld('desk');
    expect(after.releases).toEqual([]);
    expect(after.items.map((item) => item.key.articleKey)).toEqual(['id:3']);
  });

  it('finishing a release marks what became of each released notification on its ledger entry, once, as the in-memory store does', async () => {
    const { store, documents, table } = await setup();
    const memory = new MemoryHoldingStateStore();
    const [first, second, third] = [held('desk', 1), held('desk', 2), held('desk', 3)] as const;
    const records = [first, second, third];
    const claim: DigestRelease = {
      ...release(t0 + 3_600_000, [['id:1'], ['id:2']]),
      dropped: ['id:3'],
      settingsChanged: ['id:2', 'id:3'],
    };
    for (const target of [store, memory]) {
      await target.holdNotifications(records);
      await target.claimRelease(claim);
    }
    // The claim keeps which notifications the settings let out, for the run that finishes it.
    expect((await store.readHeld('desk')).releases).toEqual([claim]);
    const keys = [...records.map((record) => record.key), { audienceId: 'desk', articleKey: 'id:gone' }];
    const before = await store.readDeliveries(keys);
    const ttl = (await raw(documents, table, deliveryItemKey(first.key)))?.expiresAt;
    const releasedAt = t0 + 3_600_500;
    const released: ReleasedNotification[] = [
      {
        ...first.key,
        releasedAt,
        releasedIn: 'digest:2026-11-22T10:00:00.000Z#1/2',
        releaseOutcome: 'sent',
        releaseCause: 'due',
      },
      {
        ...second.key,
        releasedAt,
        releasedIn: 'digest:2026-11-22T10:00:00.000Z#2/2',
        releaseOutcome: 'parked',
        releaseCause: 'settings-changed',
      },
      { ...third.key, releasedAt, releaseOutcome: 'dropped', releaseCause: 'settings-changed' },
      // No ledger entry (expired): it stays gone.
      { audienceId: 'desk', articleKey: 'id:gone', releasedAt, releaseOutcome: 'sent', releaseCause: 'due' },
    ];
    for (const target of [store, memory]) await target.finishRelease(claim, released);

    const after = await store.readDeliveries(keys);
    expect(after.get(deliveryId(first.key))).toEqual({
      ...before.get(deliveryId(first.key)),
      releasedAt,
      releasedIn: 'digest:2026-11-22T10:00:00.000Z#1/2',
      releaseOutcome: 'sent',
      releaseCause: 'due',
    });
    expect(after.get(deliveryId(second.key))).toMatchObject({ heldFor: 'quiet-hours', releaseOutcome: 'parked' });
    expect(after.get(deliveryId(third.key))).toMatchObject({
      releaseOutcome: 'dropped',
      releaseCause: 'settings-changed',
    });
    expect(after.get(deliveryId(third.key))).not.toHaveProperty('releasedIn');
    expect(after.has('desk|id:gone')).toBe(false);
    // Marking keeps the entry's retention; the held items and the claim are gone.
    expect((await raw(documents, table, deliveryItemKey(first.key)))?.expiresAt).toBe(ttl);
    expect(await store.readHeld('desk')).toEqual({ items: [], releases: [] });
    expect(await memory.readDeliveries(keys)).toEqual(after);

    // A run that crashed after marking finishes again: the first marks stay.
    await store.finishRelease(
      claim,
      released.map((entry) => ({ ...entry, releasedAt: entry.releasedAt + 60_000, releaseCause: 'due' as const })),
    );
    expect(await store.readDeliveries(keys)).toEqual(after);
  });

  it('the holding index keeps lastReleaseAt when what is held changes, and empties without disappearing', async () => {
    const { store, documents, table } = await setup();
    await store.holdNotifications([held('desk', 1)]);
    await store.claimRelease(release(t0 + 1, [['id:1']]));
    await store.setHoldingAudience('desk', { oldestHeldAt: t0 + 5, reasons: ['budget'] });
    expect(await store.listHoldingAudiences()).toEqual([
      { audienceId: 'desk', oldestHeldAt: t0 + 5, reasons: ['budget'], lastReleaseAt: t0 + 1 },
    ]);
    await store.setHoldingAudience('desk', undefined);
    expect(await store.listHoldingAudiences()).toEqual([
      { audienceId: 'desk', oldestHeldAt: 0, reasons: [], lastReleaseAt: t0 + 1 },
    ]);
    expect(await raw(documents, table, holdingItemKey('desk'))).not.toHaveProperty('reasons');
  });
});

describe('daily budget counts', () => {
  it('count with conditional writes and report the current value to a writer that lost the race', async () => {
    const { store } = await setup();
    const key = { audienceId: 'desk', date: '2026-11-22' };
    expect(await store.readDailyCounts([key])).toEqual(new Map());
    await store.updateDailyCount(key, 0, 3);
    await store.updateDailyCount(key, 3, 5);
    expect(await store.readDailyCounts([key, { audienceId: 'desk', date: '2026-11-23' }])).toEqual(
      new Map([['desk|2026-11-22', 5]]),
    );
    const stale = store.updateDailyCount(key, 3, 4);
    await expect(stale).rejects.toBeInstanceOf(DailyCountConflictError);
    await expect(stale).rejects.toMatchObject({ current: 5 });
    await expect(store.updateDailyCount(key, 0, 1)).rejects.toMatchObject({ current: 5 });
  });

  it.each([
    ['a negative number', -3],
    ['a string', '0'],
    ['a fraction', 2.5],
  ])(
    'a count item edited by hand to hold %s counts as 0, is replaced by the next reservation, and says so in the log',
    async (found, sent) => {
      // Before, every reservation failed its condition against the value and the run gave up on
      // every audience's sends (DailyCountConflictError after five attempts).
      const { store, documents, table, log } = await setup();
      const key = { audienceId: 'desk', date: '2026-11-22' };
      const item = { pk: 'budget#desk', sk: '2026-11-22', audienceId: 'desk', date: '2026-11-22' };
      await documents.send(new PutCommand({ TableName: table, Item: { ...item, sent } }));
      expect(await store.readDailyCounts([key])).toEqual(new Map());
      await store.updateDailyCount(key, 0, 2);
      expect(await store.readDailyCounts([key])).toEqual(new Map([['desk|2026-11-22', 2]]));
      expect(log.warnings).toEqual([
        expect.objectContaining({
          message: expect.stringContaining('holds no count'),
          extra: expect.objectContaining({
            audienceId: 'desk',
            date: '2026-11-22',
            found: expect.stringContaining(found),
          }),
        }),
      ]);
      // Damaged between the read and the write: the conflict reports 0, and the retry replaces it.
      await documents.send(new PutCommand({ TableName: table, Item: { ...item, sent } }));
      await expect(store.updateDailyCount(key, 2, 3)).rejects.toMatchObject({ current: 0 });
      await store.updateDailyCount(key, 0, 1);
      expect(await store.readDailyCounts([key])).toEqual(new Map([['desk|2026-11-22', 1]]));
      // A count someone else wrote after the damaged value was read (and remembered) is kept: the
      // reservation is conditioned on the damaged value, so it fails and reports the count.
      await documents.send(new PutCommand({ TableName: table, Item: { ...item, sent } }));
      expect(await store.readDailyCounts([key])).toEqual(new Map());
      await documents.send(new PutCommand({ TableName: table, Item: { ...item, sent: 4 } }));
      await expect(store.updateDailyCount(key, 0, 1)).rejects.toMatchObject({ current: 4 });
      await store.updateDailyCount(key, 4, 5);
      expect(await store.readDailyCounts([key])).toEqual(new Map([['desk|2026-11-22', 5]]));
    },
  );

  it('a failed transaction that is not a conflict is a StateStoreError', async () => {
    const { store, documents } = await setup();
    documents.middlewareStack.add(
      (next, context) => async (args) => {
        if (context.commandName === 'TransactWriteItemsCommand') {
          throw new TransactionCanceledException({
            message: 'validation (injected)',
            $metadata: {},
            CancellationReasons: [{ Code: 'ValidationError' }],
          });
        }
        return await next(args);
      },
      { step: 'initialize', name: 'failTransactions' },
    );
    await expect(store.holdNotifications([held('desk', 1)])).rejects.toBeInstanceOf(StateStoreError);
  });
});
