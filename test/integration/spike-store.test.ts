/**
 * The spike record store against moto: a record's TTL follows its last write, and a record whose
 * version was broken by hand (a string, a fraction, 0, none) is replaced by the next write instead
 * of refusing every write until DynamoDB expires it.
 */
import { UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { DeleteCommand, GetCommand, NumberValue, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { DynamoSpikeStore, spikeRecordKey } from '#aws/dynamo-spike-store';
import type { Log } from '#core/ports';
import { newSpikeRecord } from '#core/spikes/record';
import { createTables, tableNamesFor } from '#sandbox/tables';
import { awsClients, uniquePrefix } from '#test/aws';

const t0 = Date.UTC(2026, 9, 5, 0, 0);
const day = 86_400_000;

async function setup() {
  const clients = awsClients();
  const names = tableNamesFor(uniquePrefix());
  await createTables(clients.dynamo, names);
  const log: Log = { debug() {}, info() {}, warn() {}, error() {} };
  const store = new DynamoSpikeStore({ documents: clients.documents, tableName: names.state, now: () => t0, log });
  const stored = async (ruleId: string) =>
    (await clients.documents.send(new GetCommand({ TableName: names.state, Key: spikeRecordKey(ruleId) }))).Item;
  /** Sets the chips record's `version` by hand (removes it for undefined), as ops in the console would. */
  const editVersion = (version: unknown) =>
    clients.documents.send(
      new UpdateCommand({
        TableName: names.state,
        Key: spikeRecordKey('chips'),
        ...(version === undefined
          ? { UpdateExpression: 'REMOVE #version', ExpressionAttributeNames: { '#version': 'version' } }
          : {
              UpdateExpression: 'SET #version = :version',
              ExpressionAttributeNames: { '#version': 'version' },
              ExpressionAttributeValues: { ':version': version },
            }),
      }),
    );
  return { clients, table: names.state, store, stored, editVersion };
}

describe('spike record store', () => {
  it('expires a record its retention after its last write, not after it was created', async () => {
    const { store, stored } = await setup();
    let record = await store.write(newSpikeRecord('chips', 'desk', 'balanced', t0));
    expect((await stored('chips'))?.expiresAt).toBe(Math.floor((t0 + 35 * day) / 1000));
    record = await store.write({ ...record, updatedAt: t0 + 34 * day });
    expect((await stored('chips'))?.expiresAt).toBe(Math.floor((t0 + 69 * day) / 1000));
    expect(record.version).toBe(2);
  });

  it.each([
    ['a string', 'seven'],
    ['a fraction', 2.5],
    ['zero', 0],
    ['a negative number', -3],
    ['a number past 2^53', NumberValue.from('1E+20')],
    ['nothing', undefined],
  ])('replaces a record whose version was set to %s by hand at its next write', async (_what, version) => {
    const { store, stored, editVersion } = await setup();
    const written = await store.write(newSpikeRecord('chips', 'desk', 'balanced', t0));
    await editVersion(version);
    const read = (await store.read(['chips'])).get('chips');
    expect(read?.version).toBe(0);
    const rewritten = await store.write({ ...(read ?? written), updatedAt: t0 + day });
    expect(rewritten.version).toBe(1);
    expect(await stored('chips')).toMatchObject({ version: 1, updatedAt: t0 + day });
    // From then on, the record is written as any other.
    expect((await store.write({ ...rewritten, updatedAt: t0 + 2 * day })).version).toBe(2);
  });

  it('creates the record anew when a damaged one it read is deleted before the rule writes (a warm store remembers nothing stale)', async () => {
    const { clients, table, store, stored, editVersion } = await setup();
    await store.write(newSpikeRecord('chips', 'desk', 'balanced', t0));
    await editVersion('x');
    expect((await store.read(['chips'])).get('chips')?.version).toBe(0);
    await clients.documents.send(new DeleteCommand({ TableName: table, Key: spikeRecordKey('chips') }));
    expect((await store.read(['chips'])).get('chips')).toBeUndefined();
    expect((await store.write(newSpikeRecord('chips', 'desk', 'balanced', t0 + day))).version).toBe(1);
    expect(await stored('chips')).toMatchObject({ version: 1 });
  });

  it('reads the other records when one holds a number typed by hand that no JavaScript number is (1E+20 in its counts)', async () => {
    const { clients, table, store } = await setup();
    const chips = await store.write(newSpikeRecord('chips', 'desk', 'balanced', t0));
    await store.write(newSpikeRecord('quakes', 'desk', 'balanced', t0));
    await clients.dynamo.send(
      new UpdateItemCommand({
        TableName: table,
        Key: { pk: { S: 'spike#quakes' }, sk: { S: 'record' } },
        UpdateExpression: 'SET #detector.#counts = :counts',
        ExpressionAttributeNames: { '#detector': 'detector', '#counts': 'counts' },
        ExpressionAttributeValues: { ':counts': { L: [{ N: '1E+20' }, { N: '12345678901234567.5' }] } },
      }),
    );
    const read = await store.read(['chips', 'quakes']);
    expect(read.get('chips')).toEqual(chips);
    // Damaged (its next write could not hold such a number): it counts again, and that write lands.
    const quakes = read.get('quakes');
    expect(quakes).toMatchObject({ ruleId: 'quakes', version: 1, detector: { counts: [] } });
    expect((await store.write(quakes ?? newSpikeRecord('quakes', 'desk', 'balanced', t0))).version).toBe(2);
  });

  it("reads a record copied by hand to another rule's key as damaged: that rule counts again on its own key, the original is untouched", async () => {
    const { clients, table, store, stored } = await setup();
    const chips = await store.write({ ...newSpikeRecord('chips', 'desk', 'balanced', t0), outletCounts: [3] });
    const original = await stored('chips');
    await clients.documents.send(
      new PutCommand({ TableName: table, Item: { ...original, ...spikeRecordKey('clone') } }),
    );
    const read = await store.read(['chips', 'clone']);
    expect(read.get('chips')).toEqual(chips);
    const clone = read.get('clone');
    expect(clone).toMatchObject({ ruleId: 'clone', audienceId: '', outletCounts: [] });
    const written = await store.write(clone ?? newSpikeRecord('clone', 'desk', 'balanced', t0));
    expect(await stored('clone')).toMatchObject({ ruleId: 'clone', version: written.version });
    expect(await stored('chips')).toEqual(original);
  });

  // Counts of hours to come made every story until then read as late: the rule stopped counting and
  // alerting, silently, until that day (a reviewer typed epoch seconds into detector.start).
  it.each([
    ['epoch seconds typed into detector.start', { start: Math.floor((t0 + 30 * day) / 1000) }],
    // Ahead of the real clock too: a record ahead of the run's clock alone is a run moved back (below).
    ['detector.start moved 30 days ahead', { start: Math.floor((Date.now() + 30 * day) / 3_600_000) }],
    ['detector.counts 60,000 hours long', { counts: Array.from({ length: 60_000 }, () => 0) }],
    // Not in the future, but no count either: whole stories only (found by the same reviewer).
    ['a fraction typed into detector.counts', { counts: [...Array.from({ length: 46 }, () => 2), 2.5] }],
  ])(
    'reads a record that counts hours after now, or not in whole stories (%s), as damaged, saying so: the rule counts again',
    async (_, edit) => {
      const { clients, table, store, stored } = await setup();
      const warnings: { message: string; reason: unknown }[] = [];
      const watching = new DynamoSpikeStore({
        documents: clients.documents,
        tableName: table,
        now: () => t0,
        log: {
          debug() {},
          info() {},
          error() {},
          warn: (message, fields) => warnings.push({ message, reason: fields?.reason }),
        },
      });
      const start = Math.floor(t0 / 3_600_000) - 48;
      await store.write({
        ...newSpikeRecord('chips', 'desk', 'balanced', t0 - 48 * 3_600_000),
        detector: {
          ...newSpikeRecord('chips', 'desk', 'balanced', t0).detector,
          start,
          counts: Array.from({ length: 47 }, () => 2),
        },
      });
      // As it was written, it reads back whole: the last counted hour is the one before now.
      expect((await watching.read(['chips'])).get('chips')?.detector.counts).toHaveLength(47);
      expect(warnings).toEqual([]);
      const original = (await stored('chips')) as { detector: Record<string, unknown> };
      await clients.documents.send(
        new PutCommand({ TableName: table, Item: { ...original, detector: { ...original.detector, ...edit } } }),
      );
      const read = (await watching.read(['chips'])).get('chips');
      expect(read?.detector).toMatchObject({ start: Math.floor(t0 / 3_600_000), counts: [] });
      expect(warnings).toEqual([
        {
          message: 'a spike record does not fit its schema; the rule starts counting again',
          reason: expect.stringMatching(
            /is more than two days after the current one \(.+\): edited by hand|detector\.counts\.46: must be a whole number/,
          ),
        },
      ]);
    },
  );

  // The first version of the check reset a rule whose record was a few hours ahead of the run's
  // clock: a sandbox `run --now 6h` cost every spike rule its learned counts; the second, one
  // whose clock was moved back more than two days (found by reviewers of both).
  it('keeps a record up to two days ahead of the real clock, and any record a run moved back in time finds', async () => {
    const { clients, table, store } = await setup();
    const warnings: unknown[] = [];
    const hour = 3_600_000;
    const reader = (now: number) =>
      new DynamoSpikeStore({
        documents: clients.documents,
        tableName: table,
        now: () => now,
        log: { debug() {}, info() {}, error() {}, warn: (message) => warnings.push(message) },
      });
    /** Writes 39 counted hours ending at `end`, then reads them back at `readAt`. */
    const countsRead = async (end: number, readAt: number) => {
      await clients.documents.send(new DeleteCommand({ TableName: table, Key: spikeRecordKey('chips') }));
      const record = newSpikeRecord('chips', 'desk', 'balanced', end);
      await store.write({
        ...record,
        detector: {
          ...record.detector,
          start: Math.floor(end / hour) - 39,
          counts: Array.from({ length: 39 }, () => 2),
        },
      });
      warnings.length = 0;
      return (await reader(readAt).read(['chips'])).get('chips')?.detector.counts.length;
    };
    const now = Date.now();
    // Written by runs on the real clock, read by a run moved back (`run --now 6h`, `3d`, a week, t0).
    for (const back of [6 * hour, 3 * day, 7 * day, now - t0]) {
      expect(await countsRead(now, now - back), `read ${back / hour} hours back`).toBe(39);
      expect(warnings).toEqual([]);
    }
    // Ahead of the real clock (a run moved ahead wrote it): kept within two days, then counted anew.
    for (const [ahead, kept] of [
      [6 * hour, true],
      [47 * hour, true],
      [50 * hour, false],
    ] as const) {
      expect(await countsRead(now + ahead, now), `${ahead / hour} hours ahead`).toBe(kept ? 39 : 0);
      expect(warnings, `${ahead / hour} hours ahead`).toHaveLength(kept ? 0 : 1);
    }
  });

  it('writes a record made too large by hand (a long title in its alert) anew, counting again, instead of failing the write', async () => {
    const { clients, table, store, stored } = await setup();
    const written = await store.write(newSpikeRecord('chips', 'desk', 'more', t0));
    const alert = {
      episodeId: 'x',
      openedAt: 1,
      since: 1,
      preset: 'more',
      bucketMs: 3_600_000,
      observed: 9,
      expected: 1,
      bucketCount: 9,
      bucketExpected: 1,
      outletCount: 1,
      topStories: [{ storyId: 's', title: 'x'.repeat(395_000), url: 'https://e.example/a', outlets: 1 }],
      topOutlets: [],
      stage: 'spike',
      storiesSoFar: 9,
      settled: true,
      closedAt: 3,
    };
    await clients.documents.send(new PutCommand({ TableName: table, Item: { ...(await stored('chips')), alert } }));
    const read = (await store.read(['chips'])).get('chips');
    expect(read?.alert?.topStories[0]?.title).toHaveLength(395_000);
    // What a run adds to it takes it past DynamoDB's 400 KB, which would refuse the write.
    const base = read ?? written;
    const rewritten = await store.write({ ...base, detector: { ...base.detector, counts: Array(8000).fill(123) } });
    expect(rewritten).toMatchObject({ ruleId: 'chips', audienceId: 'desk', preset: 'more', version: 2 });
    expect(rewritten.alert).toBeUndefined();
    expect(await stored('chips')).toMatchObject({ version: 2, open: [] });
  });

  it('still refuses a version-0 write over a record another writer created, and over one edited since it was read', async () => {
    const { store, editVersion } = await setup();
    await store.write(newSpikeRecord('chips', 'desk', 'balanced', t0));
    await expect(store.write(newSpikeRecord('chips', 'desk', 'balanced', t0))).rejects.toThrow(/chips/);
    await editVersion('seven');
    const read = (await store.read(['chips'])).get('chips');
    // Someone repairs it by hand between the read and the write: the write must not undo that.
    await editVersion(9);
    await expect(store.write(read ?? newSpikeRecord('chips', 'desk', 'balanced', t0))).rejects.toThrow(/chips/);
  });
});
