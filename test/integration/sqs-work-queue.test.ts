/**
 * SqsWorkQueue against moto server through the real SQS client, with the real dispatch store:
 * what it queues arrives on the queue exactly once as items the publisher can read, within SQS's
 * size and batch limits; items are counted in the dispatch before they are sent; entries and
 * calls SQS did not take are retried; an abort or a failure that outlasts the retries is reported
 * per message, never lost. Faults are SDK middleware on the real client.
 */
import { Buffer } from 'node:buffer';
import { createHash } from 'node:crypto';
import type { SendMessageBatchCommandInput, SendMessageBatchCommandOutput, SQSClient } from '@aws-sdk/client-sqs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DynamoDispatchStore } from '#aws/dynamo-dispatch-store';
import { DynamoStateStore } from '#aws/dynamo-state-store';
import { SqsWorkQueue, type SqsWorkQueueOptions } from '#aws/sqs-work-queue';
import type { DispatchStore } from '#core/ports';
import { type OutboundMessage, silentLog, type WorkItem, workItemMaxBytes } from '#core/ports';
import { parseWorkItem, workItemBody } from '#core/work-items';
import { createTables, tableNamesFor } from '#sandbox/tables';
import { awsClients, uniquePrefix } from '#test/aws';
import { createWorkQueue, drainQueue } from '#test/work-queue';

const t0 = Date.UTC(2025, 2, 1, 9, 0, 0);
const minute = 60_000;

interface Setup {
  readonly sqs: SQSClient;
  readonly queueUrl: string;
  readonly dispatches: DynamoDispatchStore;
  readonly queue: SqsWorkQueue;
  readonly sleeps: number[];
}

/** A work queue, a state table with dispatch `run-a` open, and a queue adapter on fresh clients. */
async function setup(
  options: Partial<SqsWorkQueueOptions> = {},
  faults: (sqs: SQSClient) => void = () => {},
): Promise<Setup> {
  const clients = awsClients();
  const prefix = uniquePrefix();
  const names = tableNamesFor(prefix);
  const [{ queueUrl }] = await Promise.all([createWorkQueue(clients.sqs, prefix), createTables(clients.dynamo, names)]);
  const state = new DynamoStateStore({ documents: clients.documents, tableName: names.state, log: silentLog });
  const lease = await state.acquireLease('run-a', 5 * minute, t0);
  const dispatches = new DynamoDispatchStore({ documents: clients.documents, tableName: names.state, log: silentLog });
  await dispatches.open(lease, 'run-a', t0);
  faults(clients.sqs);
  const sleeps: number[] = [];
  const queue = new SqsWorkQueue({
    client: clients.sqs,
    queueUrl,
    dispatches,
    log: silentLog,
    now: () => t0,
    sleep: async (ms) => {
      sleeps.push(ms);
    },
    ...options,
  });
  return { sqs: clients.sqs, queueUrl, dispatches, queue, sleeps };
}

const message = (audienceId: string, index: number, text = `Headline ${index}`): OutboundMessage => ({
  key: { audienceId, articleKey: `id:article-${index}` },
  topicArn: `arn:aws:sns:us-east-1:123456789012:news-${audienceId}`,
  subject: `Headline ${index}`,
  body: JSON.stringify({ default: text, sqs: text }),
  ruleIds: ['rule-a'],
});

const deliveryOf = (message: OutboundMessage): string => `${message.key.audienceId}|${message.key.articleKey}`;

/** What arrived on the queue: the items, read as the publisher reads them, and their attributes. */
async function arrived(sqs: SQSClient, queueUrl: string): Promise<{ items: WorkItem[]; audiences: string[] }> {
  const received = await drainQueue(sqs, queueUrl);
  for (const entry of received)
    expect(Buffer.byteLength(entry.Body ?? '', 'utf8')).toBeLessThanOrEqual(workItemMaxBytes);
  return {
    items: received.map((entry) => parseWorkItem(entry.Body ?? '')),
    audiences: received.map((entry) => entry.MessageAttributes?.audienceId?.StringValue ?? '<none>'),
  };
}

interface SentBatch {
  readonly entries: number;
  /** The request's payload: bodies and attributes, as SQS counts them. */
  readonly bytes: number;
  /** Its largest message (body and attributes). */
  readonly largest: number;
}

/** Records every SendMessageBatch request: its entries and its payload as SQS counts it. */
function recordSends(sqs: SQSClient): SentBatch[] {
  const sent: SentBatch[] = [];
  sqs.middlewareStack.add(
    (next, context) => async (args) => {
      if (context.commandName === 'SendMessageBatchCommand') {
        const sizes = ((args.input as SendMessageBatchCommandInput).Entries ?? []).map(
          (entry) =>
            Buffer.byteLength(entry.MessageBody ?? '', 'utf8') +
            Object.entries(entry.MessageAttributes ?? {}).reduce(
              (size, [name, value]) =>
                size +
                Buffer.byteLength(name) +
                Buffer.byteLength(value.DataType ?? '') +
                Buffer.byteLength(value.StringValue ?? ''),
              0,
            ),
        );
        sent.push({
          entries: sizes.length,
          bytes: sizes.reduce((sum, size) => sum + size, 0),
          largest: Math.max(0, ...sizes),
        });
      }
      return await next(args);
    },
    { step: 'initialize', name: 'recordSends' },
  );
  return sent;
}

/**
 * SQS not taking one entry: for the next `times` SendMessageBatch requests the first entry never
 * reaches the queue and comes back in `Failed` (server side, so retryable), as SQS reports it.
 */
function failFirstEntry(sqs: SQSClient, times: number, fault: { code: string; senderFault: boolean }) {
  const stats = { failed: 0 };
  sqs.middlewareStack.add(
    (next, context) => async (args) => {
      if (context.commandName !== 'SendMessageBatchCommand' || stats.failed >= times) return await next(args);
      stats.failed += 1;
      const input = args.input as SendMessageBatchCommandInput;
      const [first, ...rest] = input.Entries ?? [];
      const result =
        rest.length > 0
          ? await next({ ...args, input: { ...input, Entries: rest } })
          : { output: { $metadata: {}, Successful: [], Failed: [] }, response: undefined };
      const output = result.output as SendMessageBatchCommandOutput;
      output.Failed = [
        ...(output.Failed ?? []),
        { Id: first?.Id, Code: fault.code, SenderFault: fault.senderFault, Message: 'injected' },
      ];
      return result;
    },
    { step: 'initialize', name: 'failFirstEntry' },
  );
  return stats;
}

/**
 * SQS refusing SendMessageBatch with `name` and HTTP `status` the next `times` times (the request
 * never reaches the queue), as the SDK reports a service error.
 */
function refuseSend(sqs: SQSClient, name: string, status: number, times = Number.POSITIVE_INFINITY) {
  const stats = { thrown: 0 };
  sqs.middlewareStack.add(
    (next, context) => async (args) => {
      if (context.commandName !== 'SendMessageBatchCommand' || stats.thrown >= times) return await next(args);
      stats.thrown += 1;
      throw Object.assign(new Error(`injected ${name}`), { name, $metadata: { httpStatusCode: status } });
    },
    { step: 'initialize', name: 'throwOnSend' },
  );
  return stats;
}

describe('queueing work items', () => {
  it('everything queued arrives exactly once as items the publisher reads, one audience each, counted in the dispatch', async () => {
    const { sqs, queueUrl, dispatches, queue } = await setup();
    const messages = Array.from({ length: 37 }, (_, index) =>
      message(['markets', 'politics', 'sports'][index % 3]!, index),
    );

    const outcome = await queue.enqueue('run-a', messages, {});

    expect(outcome.failed).toEqual([]);
    expect(outcome.queued.map(deliveryOf).sort()).toEqual(messages.map(deliveryOf).sort());
    const { items, audiences } = await arrived(sqs, queueUrl);
    expect(items).toHaveLength(outcome.items);
    expect(outcome.items).toBe(3);
    expect(
      items
        .flatMap((item) => item.messages)
        .map(deliveryOf)
        .sort(),
    ).toEqual(messages.map(deliveryOf).sort());
    for (const [index, item] of items.entries()) {
      expect(item).toMatchObject({ v: 2, dispatchId: 'run-a', queuedAt: t0 });
      expect(audiences[index]).toBe(item.audienceId);
      expect(item.messages.every((entry) => entry.key.audienceId === item.audienceId)).toBe(true);
    }
    // Each audience's messages keep the order the run planned them in.
    const markets = items.find((item) => item.audienceId === 'markets')!;
    expect(markets.messages).toEqual(messages.filter((entry) => entry.key.audienceId === 'markets'));
    expect(new Set(items.map((item) => item.itemId)).size).toBe(items.length);
    expect((await dispatches.read('run-a'))?.enqueued).toBe(3);
  });

  it('1,000 messages over 50 audiences: items and requests within 256 KiB and 10 entries, every message once', async () => {
    let sent: SentBatch[] = [];
    const { sqs, queueUrl, dispatches, queue } = await setup({}, (client) => {
      sent = recordSends(client);
    });
    // 1 KB to 26 KB bodies, some of them Korean (three bytes a character): audiences need several items.
    const messages = Array.from({ length: 1_000 }, (_, index) => {
      const size = 1_000 + ((index * 7_919) % 25_000);
      const text = index % 4 === 0 ? '한'.repeat(Math.floor(size / 3)) : 'x'.repeat(size);
      return message(`audience-${index % 50}`, index, text);
    });

    const outcome = await queue.enqueue('run-a', messages, {});

    expect(outcome.failed).toEqual([]);
    const { items } = await arrived(sqs, queueUrl);
    expect(items.length).toBe(outcome.items);
    expect(items.length).toBeGreaterThan(50);
    const delivered = items.flatMap((item) => item.messages).map(deliveryOf);
    expect(delivered).toHaveLength(1_000);
    expect(new Set(delivered)).toEqual(new Set(messages.map(deliveryOf)));
    expect(sent.length).toBeGreaterThanOrEqual(Math.ceil(items.length / 10));
    for (const batch of sent) {
      expect(batch.entries).toBeLessThanOrEqual(10);
      expect(batch.bytes).toBeLessThanOrEqual(workItemMaxBytes);
    }
    expect((await dispatches.read('run-a'))?.enqueued).toBe(items.length);
  });

  it('sends rendered notifications compressed, a fraction of their packed size, and they read back exactly', async () => {
    let sent: SentBatch[] = [];
    const { sqs, queueUrl, queue } = await setup({}, (client) => {
      sent = recordSends(client);
    });
    // As a render makes them: the article in each channel's form, the chat document JSON in JSON.
    const messages = Array.from({ length: 200 }, (_, index) => {
      const title = `Central bank raises rates by ${index % 9} basis points as inflation stays high`;
      const link = `https://news.example.com/2025/03/14/${index}`;
      const document = JSON.stringify({ version: '1.0', content: { title, description: `${title}\n${link}` } });
      return {
        ...message(`audience-${index % 10}`, index),
        body: JSON.stringify({ default: document, email: `${title}\n\nLink: ${link}\n`, sms: `${title} ${link}` }),
      };
    });

    const outcome = await queue.enqueue('run-a', messages, {});

    expect(outcome.failed).toEqual([]);
    const received = await drainQueue(sqs, queueUrl);
    expect(received.length).toBe(outcome.items);
    expect(received.every((entry) => entry.Body?.startsWith('v2.deflate:'))).toBe(true);
    const items = received.map((entry) => parseWorkItem(entry.Body ?? ''));
    const read = items.flatMap((item) => item.messages);
    expect(read).toHaveLength(messages.length);
    expect(read).toEqual(expect.arrayContaining(messages));
    const packedBytes = items.reduce((sum, item) => sum + Buffer.byteLength(workItemBody(item), 'utf8'), 0);
    const sentBytes = received.reduce((sum, entry) => sum + Buffer.byteLength(entry.Body ?? '', 'utf8'), 0);
    expect(sentBytes * 3).toBeLessThan(packedBytes);
    expect(sent.reduce((sum, batch) => sum + batch.entries, 0)).toBe(items.length);
  });

  it('leaves room in each message for its audienceId attribute, which SQS counts in the 256 KiB', async () => {
    // Pseudo-random printable ASCII (SHA-256 in counter mode, 6.6 bits a character): DEFLATE and
    // base64 would make it larger, so the item travels as packed (functions/core/work-items.ts),
    // at exactly its packed size.
    const incompressible = (chars: number) => {
      const blocks = Array.from({ length: Math.ceil(chars / 32) }, (_, n) =>
        createHash('sha256').update(`block ${n}`).digest(),
      );
      return Array.from(Buffer.concat(blocks).subarray(0, chars), (byte) =>
        String.fromCharCode(0x20 + (byte % 95)),
      ).join('');
    };
    let sent: SentBatch[] = [];
    const itemId = '00000000-0000-4000-8000-000000000000';
    const { sqs, queueUrl, queue } = await setup({ newItemId: () => itemId }, (client) => {
      sent = recordSends(client);
    });
    // The longest audience id there is: the attribute takes 10 + 6 + 128 bytes.
    const audienceId = `a${'x'.repeat(127)}`;
    /** A message whose item body, alone, is exactly `bytes` long. */
    const sized = (index: number, bytes: number): OutboundMessage => {
      const draft = { ...message(audienceId, index), body: '' };
      const size = (chars: number) =>
        Buffer.byteLength(
          workItemBody({
            v: 2,
            dispatchId: 'run-a',
            itemId,
            audienceId,
            queuedAt: t0,
            messages: [{ ...draft, body: 'y'.repeat(chars) }],
          }),
        );
      // The head gives the body's length, so the rest of the item depends on its digits: measure
      // it with a body of about the final length.
      const rough = bytes - size(0);
      return { ...draft, body: incompressible(bytes - (size(rough) - rough)) };
    };
    const fits = sized(1, workItemMaxBytes - 256);
    // Its body alone is under the limit, but not with the attribute: SQS would refuse the message.
    const tooLargeWithAttribute = sized(2, workItemMaxBytes - 50);

    const outcome = await queue.enqueue('run-a', [fits, tooLargeWithAttribute], {});

    expect(outcome.queued).toEqual([fits]);
    expect(outcome.failed).toEqual([
      expect.objectContaining({ message: tooLargeWithAttribute, code: 'MessageTooLarge', permanent: true }),
    ]);
    expect(sent.map((batch) => batch.largest)).toEqual([workItemMaxBytes - 256 + 144]);
    expect((await arrived(sqs, queueUrl)).items.flatMap((item) => item.messages)).toEqual([fits]);
  });

  it('a message that cannot travel in an item fails for good (MessageTooLarge); the rest are queued', async () => {
    const { sqs, queueUrl, queue } = await setup();
    const huge = message('markets', 1, 'x'.repeat(workItemMaxBytes));
    const small = message('markets', 2);

    const outcome = await queue.enqueue('run-a', [huge, small], {});

    expect(outcome.failed).toEqual([
      expect.objectContaining({ message: huge, code: 'MessageTooLarge', permanent: true }),
    ]);
    expect(outcome.queued).toEqual([small]);
    const { items } = await arrived(sqs, queueUrl);
    expect(items.flatMap((item) => item.messages)).toEqual([small]);
  });

  it('queues hostile text (unicode, U+FFFE, lone surrogates, controls) so it reads back exactly', async () => {
    const { sqs, queueUrl, queue } = await setup();
    const text = fc.string({
      maxLength: 200,
      unit: fc.constantFrom('a', '한', '🦜', '\uFFFE', '\uFFFF', '\uD800', '\u0000', '"', '\\', '\n'),
    });
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(fc.constantFrom('markets', 'politics'), text), { minLength: 1, maxLength: 15 }),
        async (drafts) => {
          const messages = drafts.map(([audienceId, body], index) => ({
            ...message(audienceId, index),
            body,
            subject: body.slice(0, 20),
          }));
          const outcome = await queue.enqueue('run-a', messages, {});
          expect(outcome.failed).toEqual([]);
          const { items } = await arrived(sqs, queueUrl);
          const read = items.flatMap((item) => item.messages);
          const sortKey = (entry: OutboundMessage) => deliveryOf(entry);
          expect([...read].sort((a, b) => sortKey(a).localeCompare(sortKey(b)))).toEqual(
            [...messages].sort((a, b) => sortKey(a).localeCompare(sortKey(b))),
          );
        },
      ),
      { numRuns: 10 },
    );
  });
});

describe('when SQS does not take everything', () => {
  it('sends an entry SQS failed once again, and it arrives once', async () => {
    let fault = { failed: 0 };
    const { sqs, queueUrl, queue, sleeps } = await setup({}, (client) => {
      fault = failFirstEntry(client, 1, { code: 'InternalError', senderFault: false });
    });
    const messages = Array.from({ length: 5 }, (_, index) => message(`audience-${index}`, index));

    const outcome = await queue.enqueue('run-a', messages, {});

    expect(fault.failed).toBe(1);
    expect(sleeps).toHaveLength(1);
    expect(outcome.failed).toEqual([]);
    expect(outcome.items).toBe(5);
    const { items } = await arrived(sqs, queueUrl);
    expect(
      items
        .flatMap((item) => item.messages)
        .map(deliveryOf)
        .sort(),
    ).toEqual(messages.map(deliveryOf).sort());
  });

  it('retries a throttled request', async () => {
    let fault = { thrown: 0 };
    const { sqs, queueUrl, queue, sleeps } = await setup({}, (client) => {
      fault = refuseSend(client, 'RequestThrottled', 400, 2);
    });
    const outcome = await queue.enqueue('run-a', [message('markets', 1)], {});
    expect(fault.thrown).toBe(2);
    expect(sleeps).toHaveLength(2);
    expect(outcome).toMatchObject({ items: 1, failed: [] });
    expect((await arrived(sqs, queueUrl)).items).toHaveLength(1);
  });

  it('reports what still fails after the retries with SQS code, not permanent', async () => {
    const { queue } = await setup({ maxAttempts: 3 }, (client) => {
      refuseSend(client, 'RequestThrottled', 400);
    });
    const messages = [message('markets', 1), message('markets', 2), message('politics', 3)];
    const outcome = await queue.enqueue('run-a', messages, {});
    expect(outcome.items).toBe(0);
    expect(outcome.queued).toEqual([]);
    expect(outcome.failed.map((failure) => [deliveryOf(failure.message), failure.code, failure.permanent])).toEqual(
      messages.map((entry) => [deliveryOf(entry), 'RequestThrottled', false]),
    );
  });

  it('counts an item SQS may hold without saying so (no answer) as queued for the dispatch, while its messages are failed', async () => {
    const { sqs, queueUrl, queue } = await setup({ maxAttempts: 2 }, (client) => {
      // The request reaches the queue, the answer is lost on the way back.
      client.middlewareStack.add(
        (next, context) => async (args) => {
          const result = await next(args);
          if (context.commandName === 'SendMessageBatchCommand') {
            throw Object.assign(new Error('socket hang up'), { name: 'TimeoutError' });
          }
          return result;
        },
        { step: 'initialize', name: 'loseAnswers' },
      );
    });
    const sent = message('markets', 1);

    const outcome = await queue.enqueue('run-a', [sent], {});

    // Expected by the dispatch: if it arrives it is waited for, not taken for an accepted item.
    expect(outcome.items).toBe(1);
    expect(outcome.queued).toEqual([]);
    expect(outcome.failed).toEqual([
      expect.objectContaining({ message: sent, code: 'TimeoutError', permanent: false }),
    ]);
    const { items } = await arrived(sqs, queueUrl);
    expect(items).toHaveLength(2);
    expect(new Set(items.map((item) => item.itemId)).size).toBe(1);
  });

  it('counts an item as maybe queued when the SDK retried on its own before a refusal: its earlier attempt may have queued it', async () => {
    const { sqs, queueUrl, queue } = await setup({ maxAttempts: 1 }, (client) => {
      // The SDK's first attempt reached the queue and got a 500; its own retry was throttled (400).
      client.middlewareStack.add(
        (next, context) => async (args) => {
          const result = await next(args);
          if (context.commandName === 'SendMessageBatchCommand') {
            throw Object.assign(new Error('injected RequestThrottled'), {
              name: 'RequestThrottled',
              $metadata: { httpStatusCode: 400, attempts: 2 },
            });
          }
          return result;
        },
        { step: 'initialize', name: 'refuseAfterSdkRetry' },
      );
    });
    const sent = message('markets', 1);
    const outcome = await queue.enqueue('run-a', [sent], {});
    expect(outcome.items).toBe(1);
    expect(outcome.failed).toEqual([expect.objectContaining({ message: sent, code: 'RequestThrottled' })]);
    expect((await arrived(sqs, queueUrl)).items).toHaveLength(1);
  });

  it('does not retry an entry SQS refused as the sender’s fault, and reports it with its code', async () => {
    let fault = { failed: 0 };
    const { sqs, queueUrl, queue, sleeps } = await setup({}, (client) => {
      fault = failFirstEntry(client, 1, { code: 'InvalidMessageContents', senderFault: true });
    });
    const outcome = await queue.enqueue('run-a', [message('markets', 1), message('politics', 2)], {});
    expect(fault.failed).toBe(1);
    expect(sleeps).toEqual([]);
    expect(outcome.items).toBe(1);
    expect(outcome.failed).toEqual([expect.objectContaining({ code: 'InvalidMessageContents', permanent: false })]);
    expect((await arrived(sqs, queueUrl)).items).toHaveLength(1);
  });

  it('counts the items in the dispatch before sending them: a send that fails leaves them counted', async () => {
    const { dispatches, queue } = await setup({}, (client) => {
      refuseSend(client, 'AccessDenied', 403);
    });
    const outcome = await queue.enqueue('run-a', [message('markets', 1), message('politics', 2)], {});
    expect(outcome.items).toBe(0);
    expect(outcome.failed.map((failure) => failure.code)).toEqual(['AccessDenied', 'AccessDenied']);
    // Two items the dispatch will never see done: it cannot look complete while they are unaccounted for.
    expect((await dispatches.read('run-a'))?.enqueued).toBe(2);
  });
});

describe('a dispatch count that fails', () => {
  it('sends nothing of the call, and accounts for every message; the next call counts and sends again', async () => {
    const base = await setup();
    let counts = 0;
    const flaky: DispatchStore = Object.assign(Object.create(base.dispatches) as DispatchStore, {
      countEnqueued: async (dispatchId: string, items: number) => {
        counts += 1;
        if (counts === 1) throw new Error('DynamoDB unreachable');
        await base.dispatches.countEnqueued(dispatchId, items);
      },
    });
    const queue = new SqsWorkQueue({
      client: base.sqs,
      queueUrl: base.queueUrl,
      dispatches: flaky,
      log: silentLog,
      concurrency: 1,
    });
    // 30 audiences: three batches of 10 items, counted in one request.
    const messages = Array.from({ length: 30 }, (_, n) => message(`audience-${n}`, n));
    const outcome = await queue.enqueue('run-a', messages, {});
    expect(counts).toBe(1);
    expect(outcome.failed).toHaveLength(30);
    expect(outcome.failed.every((failure) => failure.code === 'DispatchCountFailed' && !failure.permanent)).toBe(true);
    expect(outcome.items).toBe(0);
    expect((await arrived(base.sqs, base.queueUrl)).items).toEqual([]);

    const retried = await queue.enqueue('run-a', messages, {});
    expect(counts).toBe(2);
    expect(retried.failed).toEqual([]);
    expect(retried.items).toBe(30);
    // What reached SQS is exactly what the outcome and the dispatch count.
    expect((await arrived(base.sqs, base.queueUrl)).items).toHaveLength(30);
    expect((await base.dispatches.read('run-a'))?.enqueued).toBe(30);
  });
});

describe('aborting', () => {
  it('sends nothing once the signal fired, and reports every message Aborted, not permanent', async () => {
    let sent: SentBatch[] = [];
    const { sqs, queueUrl, queue } = await setup({}, (client) => {
      sent = recordSends(client);
    });
    const messages = [message('markets', 1), message('politics', 2)];
    const outcome = await queue.enqueue('run-a', messages, { signal: AbortSignal.abort() });
    expect(sent).toEqual([]);
    expect(outcome.items).toBe(0);
    expect(outcome.failed.map((failure) => [failure.code, failure.permanent])).toEqual([
      ['Aborted', false],
      ['Aborted', false],
    ]);
    expect((await arrived(sqs, queueUrl)).items).toEqual([]);
  });

  it('stops between requests when the signal fires: what was sent is queued, the rest Aborted', async () => {
    const controller = new AbortController();
    const { sqs, queueUrl, queue } = await setup({ concurrency: 1 }, (client) => {
      client.middlewareStack.add(
        (next, context) => async (args) => {
          const result = await next(args);
          // The deadline passes while the first request is answered.
          if (context.commandName === 'SendMessageBatchCommand') controller.abort();
          return result;
        },
        { step: 'initialize', name: 'abortAfterFirstSend' },
      );
    });
    const messages = Array.from({ length: 25 }, (_, index) => message(`audience-${index}`, index));

    const outcome = await queue.enqueue('run-a', messages, { signal: controller.signal });

    expect(outcome.items).toBe(10);
    expect(outcome.queued).toHaveLength(10);
    expect(outcome.failed).toHaveLength(15);
    expect(outcome.failed.every((failure) => failure.code === 'Aborted' && !failure.permanent)).toBe(true);
    expect([...outcome.queued, ...outcome.failed.map((failure) => failure.message)].map(deliveryOf).sort()).toEqual(
      messages.map(deliveryOf).sort(),
    );
    const { items } = await arrived(sqs, queueUrl);
    expect(
      items
        .flatMap((item) => item.messages)
        .map(deliveryOf)
        .sort(),
    ).toEqual(outcome.queued.map(deliveryOf).sort());
  });

  it('stops waiting out a backoff when the signal fires, and reports the entry Aborted', async () => {
    const controller = new AbortController();
    const { sqs, queueUrl, queue } = await setup(
      {
        sleep: async () => {
          controller.abort();
        },
      },
      (client) => {
        failFirstEntry(client, 1, { code: 'InternalError', senderFault: false });
      },
    );
    const outcome = await queue.enqueue('run-a', [message('markets', 1), message('politics', 2)], {
      signal: controller.signal,
    });
    expect(outcome.items).toBe(1);
    expect(outcome.failed).toEqual([expect.objectContaining({ code: 'Aborted', permanent: false })]);
    expect((await arrived(sqs, queueUrl)).items).toHaveLength(1);
  });
});
