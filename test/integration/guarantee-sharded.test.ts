/**
 * DESIGN section 3 in `publishMode: sharded` (issue 14), against moto and the simulator: the real
 * alert run queues work items on SQS, the real publisher (its batch loop and work item claims
 * behind the emulated SQS event source) publishes them. Each fault below must end with every matched
 * alert delivered exactly once: SQS delivering items twice, a publisher failing after SNS
 * accepted part of an item, a poison item on the queue, a run that dies while its items are in
 * flight (the watermark must not move until they are done), and a story whose lead's item dies with
 * its dispatch (the copy recorded as collapsed into that lead must carry the story).
 */
import {
  GetQueueAttributesCommand,
  PurgeQueueCommand,
  SendMessageBatchCommand,
  SendMessageCommand,
} from '@aws-sdk/client-sqs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { type DispatchStore, dispatchComplete } from '#core/ports';
import { firstWindowStart, startTestStack, type TestStack } from '#test/run-harness';

const exact = { missing: [], unexpected: [], duplicates: [] };

/**
 * A transaction that marks a work item done: an update of its completion record (`sk` `item#…`,
 * plain or marshalled) that sets `doneAt`. The claim before publishing is a put, not this.
 */
function completesAnItem(input: unknown): boolean {
  type Update = { Key?: Record<string, unknown>; UpdateExpression?: string };
  const items = (input as { TransactItems?: { Update?: Update }[] }).TransactItems ?? [];
  return items.some((item) => {
    const sk = item.Update?.Key?.sk;
    const value = typeof sk === 'object' && sk !== null && 'S' in sk ? (sk as { S: unknown }).S : sk;
    return (
      typeof value === 'string' && value.startsWith('item#') && /#doneAt = /.test(item.Update?.UpdateExpression ?? '')
    );
  });
}

/** A latch the test opens: middleware waits on it. */
function latch() {
  let open: () => void = () => undefined;
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { opened, open };
}

describe('sharded publishing keeps every guarantee (moto, simulator, in-process publisher)', () => {
  let stack: TestStack | undefined;
  afterEach(async () => {
    await stack?.stop();
    stack = undefined;
  });

  const sharded = () => startTestStack({ publishMode: 'sharded' });

  it('publishes what a run queued exactly once, and moves the watermark once the items are done', async () => {
    stack = await sharded();
    const summary = await stack.run();
    expect(summary.status).toBe('completed');
    expect(summary.notificationsQueued).toBeGreaterThan(0);
    expect(summary.dispatch).toMatchObject({ state: 'completed' });
    expect(summary.dispatch?.published).toBe(summary.notificationsQueued);
    expect((await stack.dependencies.state.readWatermark())?.at).toBe(summary.watermarkAfter);
    expect(await stack.verifyExactlyOnce(firstWindowStart(stack))).toEqual(exact);
  });

  it('sends nothing twice when SQS delivers every work item twice', async () => {
    stack = await sharded();
    const { sqs } = stack.clients;
    let copies = 0;
    const resent = new WeakSet<object>();
    // SQS is at-least-once: every batch the run sends arrives a second time.
    sqs.middlewareStack.add(
      (next, context) => async (args) => {
        const result = await next(args);
        if (context.commandName === 'SendMessageBatchCommand' && !resent.has(args.input as object)) {
          const input = { ...(args.input as SendMessageBatchCommand['input']) };
          resent.add(input);
          copies += input.Entries?.length ?? 0;
          await sqs.send(new SendMessageBatchCommand(input));
        }
        return result;
      },
      { step: 'initialize', name: 'duplicateDelivery' },
    );
    const summary = await stack.run();
    expect(copies).toBeGreaterThan(0);
    expect(summary.status).toBe('completed');
    expect(summary.dispatch?.state).toBe('completed');
    expect(await stack.verifyExactlyOnce(firstWindowStart(stack))).toEqual(exact);
  });

  it('a publisher that fails after SNS accepted an item is retried, and the retry sends nothing twice', async () => {
    stack = await sharded();
    const { documents } = stack.clients;
    let failed = 0;
    // The first completion of each of the first two items fails (the publisher dies after
    // publishing and writing the ledger): SQS hands the item over again.
    documents.middlewareStack.add(
      (next, context) => async (args) => {
        if (context.commandName?.startsWith('TransactWrite') && failed < 2 && completesAnItem(args.input)) {
          failed += 1;
          throw Object.assign(new Error('publisher crashed before it marked the item done'), { name: 'Crash' });
        }
        return await next(args);
      },
      { step: 'initialize', name: 'crashBeforeCompletion' },
    );
    const summary = await stack.run();
    expect(failed).toBe(2);
    expect(summary.dispatch?.state).toBe('completed');
    expect(summary.dispatch?.alreadyDelivered).toBeGreaterThan(0);
    expect(stack.publishing?.stats().failed).toBeGreaterThanOrEqual(2);
    expect(await stack.verifyExactlyOnce(firstWindowStart(stack))).toEqual(exact);
  });

  it('a poison item goes to the dead-letter queue and stops nothing else', async () => {
    stack = await sharded();
    const publishing = stack.publishing;
    if (!publishing) throw new Error('sharded stack without its queues');
    await stack.clients.sqs.send(
      new SendMessageCommand({ QueueUrl: publishing.queueUrl, MessageBody: '{"v":9,"not":"a work item"}' }),
    );
    const summary = await stack.run();
    expect(summary.status).toBe('completed');
    expect(await stack.verifyExactlyOnce(firstWindowStart(stack))).toEqual(exact);
    await vi.waitFor(
      async () => {
        const { Attributes } = await stack!.clients.sqs.send(
          new GetQueueAttributesCommand({
            QueueUrl: publishing.deadLetterQueueUrl,
            AttributeNames: ['ApproximateNumberOfMessages'],
          }),
        );
        expect(Number(Attributes?.ApproximateNumberOfMessages)).toBe(1);
      },
      { timeout: 180_000, interval: 200 },
    );
  });

  it('a run that dies while its items are in flight leaves the watermark; the next run moves it once they are done', async () => {
    stack = await sharded();
    const publishers = holdPublishers(stack);
    try {
      await diesWhileInFlight(stack, publishers);
    } finally {
      publishers.open();
    }
  });

  it("a story whose lead's item dies with its dispatch, the lead revised so it no longer matches: the copy recorded as collapsed carries the story, once", async () => {
    stack = await startTestStack({
      publishMode: 'sharded',
      audiences: [{ item: { audienceId: 'story-desk', timeZone: 'UTC', collapse: 'story' }, subscribers: [] }],
      rules: [{ ruleId: 'chips', audienceId: 'story-desk', keywords: ['Hanbit Semiconductor'] }],
      simulator: { generate: { days: 0, perDay: 0 } },
    });
    const publishing = stack.publishing;
    const simulator = stack.simulator;
    if (!publishing || !simulator) throw new Error('sharded stack without its queues or simulator');
    const story = { categories: ['002000000'], status: 'PUBLISHED', summary: storySummary };
    // The run meets the newer article first (the simulator lists newest first): it leads the story.
    simulator.publish(
      {
        ...story,
        articleId: 'copy',
        media: 'M002',
        title: `[속보] ${storyHeadline}`,
        publishedAt: stack.time() - 2 * minute,
      },
      { ...story, articleId: 'lead', media: 'M001', title: storyHeadline, publishedAt: stack.time() - minute },
    );
    const publishers = holdPublishers(stack);
    try {
      // Run 1 queues the lead, records the copy as collapsed into it, and dies waiting.
      await dieWaitingForDispatch(stack, publishers);
      const open = await stack.dependencies.sharded?.dispatches.readOpen();
      expect(open?.expected).toBe(1);
      const entries = await stack.dependencies.state.readDeliveries([
        { audienceId: 'story-desk', articleKey: 'id:copy' },
      ]);
      expect(entries.get('story-desk|id:copy')?.collapsedLead).toBe('id:lead');
      // The lead's item dies before any publisher takes it (as in the dead-letter queue).
      await stack.clients.sqs.send(new PurgeQueueCommand({ QueueUrl: publishing.queueUrl }));
    } finally {
      publishers.open();
    }
    // Revised meanwhile, the lead no longer matches the rule when its day is read again.
    simulator.publish({
      ...story,
      articleId: 'lead',
      media: 'M001',
      status: 'UPDATED',
      title: 'Chipmaker to build memory plant in Yongin',
      summary: 'A chipmaker said it will build a memory plant south of Seoul.',
      publishedAt: stack.time() - minute,
    });
    stack.setTime(stack.time() + 16 * minute);
    const next = await stack.run();
    expect(next.settled).toMatchObject({ state: 'abandoned' });
    expect(next.notificationsQueued).toBe(1);
    expect(next.dispatch?.state).toBe('completed');
    expect(await stack.deliveredSoFar()).toEqual(['story-desk|id:copy']);
    // A later run reads the day again and sends nothing more.
    stack.setTime(stack.time() + 5 * minute);
    await stack.run();
    expect(await stack.deliveredSoFar()).toEqual(['story-desk|id:copy']);
  });
});

const minute = 60_000;
const storyHeadline = 'Hanbit Semiconductor to build $12 billion memory chip plant in Yongin, creating 3,000 jobs';
const storySummary =
  'Hanbit Semiconductor said on Monday it will invest $12 billion in a new memory chip plant in Yongin, ' +
  'south of Seoul, with production of high-bandwidth memory starting in 2029 and about 3,000 new jobs.';

/**
 * The publishers do not get the work items until the test opens the latch (the audit queues still
 * answer); `parked()` counts the event source's polls held at it.
 */
function holdPublishers(stack: TestStack): ReturnType<typeof latch> & { parked(): number } {
  const workQueueUrl = stack.publishing?.queueUrl;
  const publishers = latch();
  let parked = 0;
  stack.clients.sqs.middlewareStack.add(
    (next, context) => async (args) => {
      const queueUrl = (args.input as { QueueUrl?: string }).QueueUrl;
      if (context.commandName === 'ReceiveMessageCommand' && queueUrl === workQueueUrl) {
        parked += 1;
        await publishers.opened;
      }
      return await next(args);
    },
    { step: 'initialize', name: 'holdPublishers' },
  );
  return { ...publishers, parked: () => parked };
}

/**
 * Runs the alert cycle with the publishers held, and kills it (its time limit) while it waits for
 * its sealed dispatch: the dispatch stays open and its items on the queue.
 */
async function dieWaitingForDispatch(stack: TestStack, publishers: { parked(): number }): Promise<void> {
  // A poller parked at the latch: the event source sends one ReceiveMessage at a time
  // (sandbox/sqs-event-source.ts), so the others wait behind it and none can take an item.
  await vi.waitFor(() => expect(publishers.parked()).toBe(1), { timeout: 180_000, interval: 50 });
  const dispatches = stack.dependencies.sharded?.dispatches;
  if (!dispatches) throw new Error('sharded stack without a dispatch store');
  const dying: DispatchStore = new Proxy(dispatches, {
    get(target, property, receiver) {
      if (property === 'read') {
        return async (id: string) => {
          const head = await target.read(id);
          if (head?.expected !== undefined && !dispatchComplete(head)) throw new Error('Task timed out');
          return head;
        };
      }
      const value = Reflect.get(target, property, receiver);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  const queue = stack.dependencies.sharded?.queue;
  if (!queue) throw new Error('sharded stack without a work queue');
  await expect(stack.run({ dependencies: { sharded: { queue, dispatches: dying } } })).rejects.toThrow(
    'Task timed out',
  );
  expect(await stack.deliveredSoFar()).toEqual([]);
}

/** The body of the test of a run that dies: `publishers` holds the event source's polls until it opens. */
async function diesWhileInFlight(stack: TestStack, publishers: ReturnType<typeof holdPublishers>): Promise<void> {
  await dieWaitingForDispatch(stack, publishers);
  expect(await stack.dependencies.state.readWatermark()).toBeUndefined();
  const dispatches = stack.dependencies.sharded?.dispatches;
  if (!dispatches) throw new Error('sharded stack without a dispatch store');
  const open = await dispatches.readOpen();
  expect(open?.expected).toBeGreaterThan(0);

  publishers.open();
  await vi.waitFor(
    async () => {
      const head = await dispatches.read(open?.dispatchId ?? '');
      expect(head && dispatchComplete(head)).toBe(true);
    },
    { timeout: 180_000, interval: 100 },
  );
  stack.setTime(stack.time() + 5 * 60_000);
  const next = await stack.run();
  expect(next.settled).toMatchObject({ dispatchId: open?.dispatchId, state: 'completed' });
  expect(next.watermarkBefore).toBe(open?.advanceTo);
  expect(await stack.verifyExactlyOnce(firstWindowStart(stack))).toEqual(exact);
}
