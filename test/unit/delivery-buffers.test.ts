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

  it('takes whole topics that hold an item’s worth, keeps the others, and takes everything past the cap', () => {
    const outbox = new Outbox();
    outbox.add([...Array.from({ length: 5 }, (_, n) => message('big', n)), message('small', 0)]);
    expect(outbox.takeTopicsWith(5, 100).map((m) => m.key.articleKey)).toEqual(['a0', 'a1', 'a2', 'a3', 'a4']);
    expect(outbox.size).toBe(1);
    outbox.add([message('other', 1), message('other', 2)]);
    expect(outbox.takeTopicsWith(5, 2)).toHaveLength(3);
    expect(outbox.size).toBe(0);
  });
});
