import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { LedgerWriter, Outbox } from '#core/delivery-buffers';
import type { DeliveryRecord, OutboundMessage, PublishedMessage } from '#core/ports';

const message = (topic: string, article: number): OutboundMessage => ({
  key: { audienceId: topic, articleKey: `id:${article}` },
  topicArn: `arn:aws:sns:us-east-1:123456789012:${topic}`,
  subject: 's',
  body: '{"default":"d"}',
  ruleIds: ['r'],
});
const published = (messages: OutboundMessage[]): PublishedMessage[] =>
  messages.map((m, index) => ({ message: m, messageId: `m-${index}` }));

function recordingStore(options: { failOnCall?: number } = {}) {
  const calls: DeliveryRecord[][] = [];
  return {
    calls,
    async recordDelivered(records: readonly DeliveryRecord[]) {
      calls.push([...records]);
      if (calls.length === options.failOnCall) throw new Error('ledger unavailable');
    },
  };
}

describe('LedgerWriter', () => {
  it('writes full batches of 25 at once and the rest on flush', async () => {
    const store = recordingStore();
    const writer = new LedgerWriter(store, { maxDelayMs: 60_000, now: () => 1000 });
    await writer.add(published(Array.from({ length: 30 }, (_, i) => message('a', i))));
    expect(store.calls.map((call) => call.length)).toEqual([25]);
    await writer.add(published(Array.from({ length: 22 }, (_, i) => message('a', 100 + i))));
    expect(store.calls.map((call) => call.length)).toEqual([25, 25]);
    await writer.flush();
    expect(store.calls.map((call) => call.length)).toEqual([25, 25, 2]);
    expect(writer.written).toBe(52);
    expect(store.calls[0]?.[0]).toMatchObject({
      audienceId: 'a',
      articleKey: 'id:0',
      deliveredAt: 1000,
      ruleIds: ['r'],
    });
  });

  it('never lets a record wait longer than the flush delay', async () => {
    const store = recordingStore();
    const writer = new LedgerWriter(store, { maxDelayMs: 5, now: () => 0 });
    await writer.add(published([message('a', 1)]));
    expect(store.calls).toHaveLength(0);
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(store.calls.map((call) => call.length)).toEqual([1]);
    await writer.flush();
    expect(store.calls).toHaveLength(1);
  });

  it('surfaces a failed write on the next add and on flush, and writes nothing after it', async () => {
    const store = recordingStore({ failOnCall: 1 });
    const writer = new LedgerWriter(store, { maxDelayMs: 60_000, now: () => 0 });
    await expect(writer.add(published(Array.from({ length: 25 }, (_, i) => message('a', i))))).rejects.toThrow(
      'ledger unavailable',
    );
    await expect(writer.add(published([message('a', 99)]))).rejects.toThrow('ledger unavailable');
    await expect(writer.flush()).rejects.toThrow('ledger unavailable');
    expect(store.calls).toHaveLength(1);
  });
});

describe('LedgerWriter after a failed write', () => {
  it('still attempts the writes queued behind it, and reports the first error', async () => {
    const store = recordingStore({ failOnCall: 1 });
    const writer = new LedgerWriter(store, { maxDelayMs: 60_000, now: () => 0 });
    // Two batches queued before the first write settles: it fails, the second must still be tried.
    const first = writer.add(published(Array.from({ length: 25 }, (_, i) => message('a', i))));
    const second = writer.add(published(Array.from({ length: 25 }, (_, i) => message('a', 100 + i))));
    await expect(first).rejects.toThrow('ledger unavailable');
    await expect(second).rejects.toThrow('ledger unavailable');
    expect(store.calls.map((call) => call.length)).toEqual([25, 25]);
    expect(writer.written).toBe(25);
  });
});

describe('Outbox', () => {
  it('releases only whole batches of 10 per topic until drained', () => {
    const outbox = new Outbox();
    outbox.add([
      ...Array.from({ length: 23 }, (_, i) => message('a', i)),
      ...Array.from({ length: 7 }, (_, i) => message('b', i)),
    ]);
    const full = outbox.takeFullBatches();
    expect(full).toHaveLength(20);
    expect(full.every((m) => m.key.audienceId === 'a')).toBe(true);
    expect(outbox.size).toBe(10);
    outbox.add(Array.from({ length: 3 }, (_, i) => message('b', 10 + i)));
    expect(outbox.takeFullBatches().map((m) => m.key.articleKey)).toEqual([
      ...Array.from({ length: 7 }, (_, i) => `id:${i}`),
      'id:10',
      'id:11',
      'id:12',
    ]);
    expect(outbox.drain().map((m) => m.key.articleKey)).toEqual(['id:20', 'id:21', 'id:22']);
    expect(outbox.size).toBe(0);
  });
});

describe('Outbox.takeTopicsWith (sharded publishing: one work item per audience)', () => {
  const message = (topic: string, n: number): OutboundMessage => ({
    key: { audienceId: topic, articleKey: `a${n}` },
    topicArn: topic,
    subject: 's',
    body: '{}',
    ruleIds: [],
  });
  const many = (topic: string, count: number, from = 0) =>
    Array.from({ length: count }, (_, n) => message(topic, from + n));
  const keysOf = (messages: readonly OutboundMessage[]) => messages.map((m) => `${m.topicArn}/${m.key.articleKey}`);

  it('takes whole SNS batches of the topics that hold an item’s worth, and keeps their remainders and the others', () => {
    const outbox = new Outbox();
    outbox.add([...many('big', 57), ...many('small', 3)]);
    expect(keysOf(outbox.takeTopicsWith(50, 5_000))).toEqual(keysOf(many('big', 50)));
    expect(outbox.size).toBe(10);
    expect(keysOf(outbox.drain())).toEqual(keysOf([...many('big', 7, 50), ...many('small', 3)]));
  });

  it('past the cap takes every topic’s whole batches, and the remainders too only when they alone fill half of it', () => {
    const outbox = new Outbox();
    outbox.add([...many('x', 23), ...many('y', 4)]);
    expect(keysOf(outbox.takeTopicsWith(50, 20))).toEqual(keysOf(many('x', 20)));
    expect(outbox.size).toBe(7);

    const crowded = new Outbox();
    crowded.add([...many('p', 9), ...many('q', 9), ...many('r', 9)]);
    expect(crowded.takeTopicsWith(50, 20)).toHaveLength(27);
    expect(crowded.size).toBe(0);
  });

  it('loses and repeats nothing, keeps each topic’s order, sends remainders only when forced, and stays bounded', () => {
    const step = fc.oneof(
      fc.record({
        add: fc.array(fc.record({ topic: fc.constantFrom('t1', 't2', 't3', 't4'), count: fc.nat(30) }), {
          maxLength: 4,
        }),
      }),
      fc.record({
        take: fc.record({ min: fc.integer({ min: 10, max: 60 }), maxHeld: fc.integer({ min: 1, max: 120 }) }),
      }),
    );
    fc.assert(
      fc.property(fc.array(step, { maxLength: 30 }), (steps) => {
        const outbox = new Outbox();
        const next = new Map<string, number>();
        const out: OutboundMessage[] = [];
        for (const s of steps) {
          if ('add' in s) {
            for (const { topic, count } of s.add) {
              const from = next.get(topic) ?? 0;
              outbox.add(many(topic, count, from));
              next.set(topic, from + count);
            }
            continue;
          }
          const before = outbox.size;
          const taken = outbox.takeTopicsWith(s.take.min, s.take.maxHeld);
          out.push(...taken);
          const perTopic = new Map<string, number>();
          for (const m of taken) perTopic.set(m.topicArn, (perTopic.get(m.topicArn) ?? 0) + 1);
          const drained = outbox.size === 0 && before > s.take.maxHeld;
          // A take sends whole batches of ten per topic, unless the cap forced out the remainders.
          if (!drained) for (const count of perTopic.values()) expect(count % 10).toBe(0);
          // Past the cap, at most half of it stays behind.
          if (before > s.take.maxHeld) expect(outbox.size).toBeLessThanOrEqual(s.take.maxHeld / 2);
        }
        out.push(...outbox.drain());
        for (const [topic, count] of next) {
          const sent = out.filter((m) => m.topicArn === topic).map((m) => m.key.articleKey);
          expect(sent).toEqual(many(topic, count).map((m) => m.key.articleKey));
        }
        expect(out).toHaveLength([...next.values()].reduce((a, b) => a + b, 0));
      }),
    );
  });
});
