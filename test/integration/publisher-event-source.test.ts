/**
 * The local SQS event source (sandbox/sqs-event-source.ts) against moto: it drains a queue with at
 * most `concurrency` invocations at once, deletes what succeeded, brings back what the partial
 * batch response names (or a throwing invocation held), lets moto's redrive policy move a message
 * that keeps failing to the DLQ, and `stop()` waits for the invocations in flight. The handlers
 * here are stubs on purpose: this is the mapping, not the publisher.
 */
import { Buffer } from 'node:buffer';
import {
  CreateQueueCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { describe, expect, it, vi } from 'vitest';
import { type AwsClients, awsClients, uniquePrefix } from '#test/aws';
import { type SqsBatchHandler, startLocalEventSource } from '../../sandbox/sqs-event-source.ts';

const clients: AwsClients = awsClients();

/** A queue (with a DLQ after `maxReceiveCount` receives when given) under a unique name. */
async function queue(maxReceiveCount?: number): Promise<{ url: string; dlqUrl?: string }> {
  const prefix = uniquePrefix();
  if (maxReceiveCount === undefined) {
    const { QueueUrl } = await clients.sqs.send(new CreateQueueCommand({ QueueName: `${prefix}work` }));
    return { url: QueueUrl ?? '' };
  }
  const { QueueUrl: dlqUrl } = await clients.sqs.send(new CreateQueueCommand({ QueueName: `${prefix}work-dlq` }));
  const { Attributes } = await clients.sqs.send(
    new GetQueueAttributesCommand({ QueueUrl: dlqUrl, AttributeNames: ['QueueArn'] }),
  );
  const { QueueUrl } = await clients.sqs.send(
    new CreateQueueCommand({
      QueueName: `${prefix}work`,
      Attributes: {
        RedrivePolicy: JSON.stringify({ deadLetterTargetArn: Attributes?.QueueArn, maxReceiveCount }),
      },
    }),
  );
  return { url: QueueUrl ?? '', ...(dlqUrl ? { dlqUrl } : {}) };
}

async function send(queueUrl: string, bodies: readonly string[]): Promise<void> {
  for (let start = 0; start < bodies.length; start += 10) {
    const { Failed } = await clients.sqs.send(
      new SendMessageBatchCommand({
        QueueUrl: queueUrl,
        Entries: bodies.slice(start, start + 10).map((body, index) => ({ Id: String(index), MessageBody: body })),
      }),
    );
    expect(Failed ?? []).toEqual([]);
  }
}

/** Messages still in the queue, visible or not. */
async function remaining(queueUrl: string): Promise<number> {
  const { Attributes = {} } = await clients.sqs.send(
    new GetQueueAttributesCommand({
      QueueUrl: queueUrl,
      AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'],
    }),
  );
  return Number(Attributes.ApproximateNumberOfMessages) + Number(Attributes.ApproximateNumberOfMessagesNotVisible);
}

/** A promise with its resolver, to wait for an event instead of a fixed time. */
function signal<T = void>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

const bodiesOf = (event: SQSEvent) => event.Records.map((record) => record.body);

/**
 * A handler whose invocations each wait until four run at once, so the bound is reached, then all
 * go on; `allSeen` resolves once `count` records were handled.
 */
function fourAtOnce(count: number): { handler: SqsBatchHandler; seen: string[]; allSeen: Promise<void> } {
  const seen: string[] = [];
  const allSeen = signal();
  const fourRunning = signal();
  let running = 0;
  const handler: SqsBatchHandler = async (event) => {
    running += 1;
    if (running >= 4) fourRunning.resolve();
    await fourRunning.promise;
    seen.push(...bodiesOf(event));
    running -= 1;
    if (seen.length >= count) allSeen.resolve();
    return { batchItemFailures: [] };
  };
  return { handler, seen, allSeen: allSeen.promise };
}

describe('local SQS event source', () => {
  it('drains a queue of N items with at most `concurrency` invocations at once, each record deleted after one success', async () => {
    const { url } = await queue();
    const bodies = Array.from({ length: 41 }, (_, index) => `item-${index}`);
    await send(url, bodies);
    const { handler, seen, allSeen } = fourAtOnce(bodies.length);
    const source = startLocalEventSource({
      client: clients.sqs,
      queueUrl: url,
      handler,
      concurrency: 4,
      batchSize: 3,
      visibilityTimeoutSeconds: 60,
    });
    await allSeen;
    await source.stop();
    expect([...seen].sort()).toEqual([...bodies].sort());
    const stats = source.stats();
    expect(stats.maxConcurrent).toBe(4);
    expect(stats.deleted).toBe(bodies.length);
    expect(stats.failed).toBe(0);
    expect(await remaining(url)).toBe(0);
  });

  it('sends one ReceiveMessage at a time while its invocations overlap (moto can hand one message to two receives at once)', async () => {
    const { url } = await queue();
    const bodies = Array.from({ length: 24 }, (_, index) => `item-${index}`);
    await send(url, bodies);
    // The real client, watched: how many ReceiveMessage requests are out at the same moment.
    const sqs = awsClients().sqs;
    const receives = { inFlight: 0, most: 0, total: 0 };
    sqs.middlewareStack.add(
      (next, context) => async (args) => {
        if (context.commandName !== 'ReceiveMessageCommand') return await next(args);
        receives.inFlight += 1;
        receives.total += 1;
        receives.most = Math.max(receives.most, receives.inFlight);
        try {
          return await next(args);
        } finally {
          receives.inFlight -= 1;
        }
      },
      { step: 'initialize', name: 'countReceives' },
    );
    const { handler, seen, allSeen } = fourAtOnce(bodies.length);
    const source = startLocalEventSource({
      client: sqs,
      queueUrl: url,
      handler,
      concurrency: 4,
      batchSize: 2,
      visibilityTimeoutSeconds: 60,
    });
    await allSeen;
    await source.stop();
    expect(source.stats().maxConcurrent).toBe(4);
    expect(receives.total).toBeGreaterThan(4);
    expect(receives.most).toBe(1);
    expect([...seen].sort()).toEqual([...bodies].sort());
  });

  it('deletes the records a partial batch response leaves out and brings back the ones it names', async () => {
    const { url } = await queue();
    await send(url, ['good-1', 'bad', 'good-2']);
    const deliveries: { body: string; receiveCount: string }[] = [];
    const badTwice = signal();
    const handler: SqsBatchHandler = async (event): Promise<SQSBatchResponse> => {
      const failures: { itemIdentifier: string }[] = [];
      for (const record of event.Records) {
        deliveries.push({ body: record.body, receiveCount: record.attributes.ApproximateReceiveCount });
        expect(record.eventSourceARN).toMatch(/^arn:aws:sqs:/);
        if (record.body === 'bad' && record.attributes.ApproximateReceiveCount === '1') {
          failures.push({ itemIdentifier: record.messageId });
        }
        if (record.body === 'bad' && record.attributes.ApproximateReceiveCount === '2') badTwice.resolve();
      }
      return { batchItemFailures: failures };
    };
    const source = startLocalEventSource({
      client: clients.sqs,
      queueUrl: url,
      handler,
      concurrency: 1,
      batchSize: 10,
      visibilityTimeoutSeconds: 300,
    });
    await badTwice.promise;
    await source.stop();
    const count = (body: string) => deliveries.filter((delivery) => delivery.body === body).length;
    expect([count('good-1'), count('good-2'), count('bad')]).toEqual([1, 1, 2]);
    expect(await remaining(url)).toBe(0);
  });

  it('retries every record of an invocation that threw, and of one whose response names no record of the batch', async () => {
    const { url } = await queue();
    await send(url, ['a', 'b']);
    const receives = new Map<string, number>();
    const settled = signal();
    let invocations = 0;
    const handler: SqsBatchHandler = async (event) => {
      invocations += 1;
      for (const body of bodiesOf(event)) receives.set(body, (receives.get(body) ?? 0) + 1);
      if ([...receives.values()].every((count) => count >= 3)) settled.resolve();
      if (invocations === 1) throw new Error('crashed mid-batch');
      if (invocations === 2) return { batchItemFailures: [{ itemIdentifier: 'not-a-record-of-this-batch' }] };
      return { batchItemFailures: [] };
    };
    const source = startLocalEventSource({
      client: clients.sqs,
      queueUrl: url,
      handler,
      concurrency: 1,
      batchSize: 10,
      visibilityTimeoutSeconds: 300,
    });
    await settled.promise;
    await source.stop();
    expect(Object.fromEntries(receives)).toEqual({ a: 3, b: 3 });
    expect(await remaining(url)).toBe(0);
  });

  it('leaves a record that always fails to the redrive policy: moto moves it to the DLQ after maxReceiveCount receives', async () => {
    const { url, dlqUrl } = await queue(3);
    await send(url, ['poison']);
    const receiveCounts: string[] = [];
    const handler: SqsBatchHandler = async (event) => {
      receiveCounts.push(...event.Records.map((record) => record.attributes.ApproximateReceiveCount));
      return { batchItemFailures: event.Records.map((record) => ({ itemIdentifier: record.messageId })) };
    };
    const source = startLocalEventSource({
      client: clients.sqs,
      queueUrl: url,
      handler,
      concurrency: 2,
      batchSize: 10,
      visibilityTimeoutSeconds: 300,
    });
    // Polls the DLQ (short polls: moto's long poll hangs under libfaketime) until the move happens. Once the work queue is
    // empty the message is either in the DLQ or gone, so one more look settles it.
    const receiveDead = async () => {
      const { Messages = [] } = await clients.sqs.send(
        new ReceiveMessageCommand({ QueueUrl: dlqUrl, WaitTimeSeconds: 0, VisibilityTimeout: 300 }),
      );
      return Messages.map((message) => message.Body ?? '');
    };
    let dead: string[] = [];
    // Until the move to the DLQ shows, or the queue is empty; a stalled source fails here.
    await vi.waitFor(
      async () => {
        const emptied = (await remaining(url)) === 0;
        dead = await receiveDead();
        expect(dead.length > 0 || emptied).toBe(true);
      },
      { timeout: 180_000, interval: 20 },
    );
    await source.stop();
    expect(dead).toEqual(['poison']);
    expect(receiveCounts).toEqual(['1', '2', '3']);
    expect(await remaining(url)).toBe(0);
  });

  it('stop() resolves only after the invocations in flight finished, and their records are deleted', async () => {
    const { url } = await queue();
    await send(url, ['slow']);
    const started = signal();
    const release = signal();
    let finished = false;
    const source = startLocalEventSource({
      client: clients.sqs,
      queueUrl: url,
      handler: async () => {
        started.resolve();
        await release.promise;
        finished = true;
        return { batchItemFailures: [] };
      },
      concurrency: 2,
      batchSize: 10,
      visibilityTimeoutSeconds: 300,
    });
    await started.promise;
    let stopped = false;
    const stopping = source.stop().then(() => {
      stopped = true;
    });
    // Let every pending callback run: stop() must still be waiting for the held invocation.
    await new Promise((resolve) => setImmediate(resolve));
    expect(stopped).toBe(false);
    release.resolve();
    await stopping;
    expect(finished).toBe(true);
    expect(await remaining(url)).toBe(0);
  });

  it('with a batching window, fills a batch above ten from receives of at most ten, acknowledges ten at a time, and keeps an event under 6 MB', async () => {
    const { url } = await queue();
    // Every request the source makes, to hold it to SQS's limit of ten per call (moto does not).
    const perCall: { command: string; count: number }[] = [];
    const client = {
      send(command: { constructor: { name: string }; input: { Entries?: unknown[]; MaxNumberOfMessages?: number } }) {
        const { Entries, MaxNumberOfMessages } = command.input;
        perCall.push({ command: command.constructor.name, count: Entries?.length ?? MaxNumberOfMessages ?? 0 });
        return clients.sqs.send(command as never);
      },
    } as unknown as SQSClient;
    const batches: string[][] = [];
    const delivered = new Map<string, number>();
    let expected = 0;
    const done = signal();
    const handler: SqsBatchHandler = async (event) => {
      batches.push(bodiesOf(event));
      const failures: { itemIdentifier: string }[] = [];
      event.Records.forEach((record, index) => {
        const times = (delivered.get(record.body) ?? 0) + 1;
        delivered.set(record.body, times);
        // Three records of the first batch fail once: they come back, the other 22 are deleted.
        if (batches.length === 1 && index % 10 === 3) failures.push({ itemIdentifier: record.messageId });
      });
      if (delivered.size === expected && [...delivered.values()].filter((n) => n === 2).length === 3) done.resolve();
      return { batchItemFailures: failures };
    };
    const start = () =>
      startLocalEventSource({
        client,
        queueUrl: url,
        handler,
        concurrency: 1,
        batchSize: 25,
        visibilityTimeoutSeconds: 300,
        maxBatchingWindowMs: 300,
      });

    const small = Array.from({ length: 37 }, (_, index) => `small-${index}`);
    await send(url, small);
    expected = small.length;
    const first = start();
    await done.promise;
    await first.stop();
    expect(batches[0]).toHaveLength(25);
    expect(await remaining(url)).toBe(0);

    // 262,000 bytes each (SQS takes up to 262,144): 25 of them would be 6.55 MB, past Lambda's 6 MiB.
    const large = Array.from(
      { length: 25 },
      (_, index) => `large-${String(index).padStart(2, '0')}-${'x'.repeat(262_000 - 9)}`,
    );
    for (const body of large) await send(url, [body]); // an SQS batch request carries at most 256 KiB
    batches.length = 0;
    const eventBytes: number[] = [];
    const allLarge = signal();
    const second = startLocalEventSource({
      client,
      queueUrl: url,
      handler: async (event) => {
        batches.push(bodiesOf(event));
        eventBytes.push(Buffer.byteLength(JSON.stringify(event), 'utf8'));
        if (batches.flat().length === large.length) allLarge.resolve();
        return { batchItemFailures: [] };
      },
      concurrency: 1,
      batchSize: 25,
      visibilityTimeoutSeconds: 300,
      maxBatchingWindowMs: 300,
    });
    await allLarge.promise;
    await second.stop();
    // The event as the function receives it, records' envelopes included, fits 6 MiB; the
    // records past it went into the next batch, each once.
    expect(Math.max(...eventBytes)).toBeLessThanOrEqual(6 * 1024 * 1024);
    expect(batches[0]?.length).toBeGreaterThanOrEqual(20);
    expect(batches.flat().sort()).toEqual([...large].sort());
    expect(await remaining(url)).toBe(0);
    expect(perCall.filter((call) => call.count > 10)).toEqual([]);
    expect(perCall.filter((call) => call.command === 'DeleteMessageBatchCommand').length).toBeGreaterThanOrEqual(3);
  });

  it('refuses a batch size Lambda would refuse', () => {
    const options = { client: clients.sqs, queueUrl: 'unused', handler: async () => undefined };
    expect(() =>
      startLocalEventSource({ ...options, concurrency: 1, batchSize: 11, visibilityTimeoutSeconds: 1 }),
    ).toThrow(/batchSize must be an integer from 1 to 10 \(more needs maxBatchingWindowMs\)/);
    expect(() =>
      startLocalEventSource({
        ...options,
        concurrency: 1,
        batchSize: 10_001,
        visibilityTimeoutSeconds: 1,
        maxBatchingWindowMs: 1000,
      }),
    ).toThrow(/batchSize must be an integer from 1 to 10000/);
    expect(() =>
      startLocalEventSource({ ...options, concurrency: 0, batchSize: 1, visibilityTimeoutSeconds: 1 }),
    ).toThrow(/concurrency/);
  });
});
