/**
 * The publisher's step (functions/core/publish-work.ts) against moto server: the real
 * DynamoStateStore (ledger and parked notifications), the real DynamoDispatchStore (the run's
 * dispatch opened under its lease, completions counted once), the real SnsNotifier, and an SNS topic with
 * an SQS queue subscribed (raw delivery), where what subscribers received is read back. SNS
 * failures are injected on the real client (test/support/sns-faults.ts). Each work item goes
 * through workItemBody and parseWorkItem, as it does through the queue.
 */
import { CreateTopicCommand, SubscribeCommand } from '@aws-sdk/client-sns';
import { CreateQueueCommand, GetQueueAttributesCommand, ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import { describe, expect, it } from 'vitest';
import { DynamoDispatchStore } from '#aws/dynamo-dispatch-store';
import { DynamoStateStore } from '#aws/dynamo-state-store';
import { SnsNotifier } from '#aws/sns-notifier';
import { WorkItemRetryError } from '#core/errors';
import { AudienceSchema } from '#core/model';
import {
  deliveryId,
  type Lease,
  type Log,
  type OutboundMessage,
  updateNoticeKey,
  type WorkItem,
  type WorkItemResult,
} from '#core/ports';
import { type PublishWorkDeps, publishWorkItem, publishWorkItems, retriesExhaustedCode } from '#core/publish-work';
import { renderNotification } from '#core/render';
import { packWorkItems, parseWorkItem, workItemBody } from '#core/work-items';
import { createTables, tableNamesFor } from '#sandbox/tables';
import { type AwsClients, awsClients, uniquePrefix } from '#test/aws';
import { failDeliveries, installSnsFaults } from '#test/sns-faults';

const t0 = Date.UTC(2025, 2, 14, 9, 0);
const silentLog: Log = { debug() {}, info() {}, warn() {}, error() {} };

/** The real dispatch store, with the answer of each completion recorded for the assertions. */
class ObservedDispatches extends DynamoDispatchStore {
  readonly completions: { itemId: string; first: boolean }[] = [];
  override async completeItem(dispatchId: string, itemId: string, result: WorkItemResult, now: number) {
    const first = await super.completeItem(dispatchId, itemId, result, now);
    this.completions.push({ itemId, first });
    return first;
  }
}

interface Setup {
  readonly clients: AwsClients;
  readonly state: DynamoStateStore;
  readonly topicArn: string;
  readonly queueUrl: string;
  readonly dispatches: ObservedDispatches;
  /** The run lease under which `run-1` was opened. */
  readonly lease: Lease;
  /** Deps with a notifier on `clients.sns` that makes one attempt per batch (no SNS-level retries). */
  readonly deps: PublishWorkDeps;
}

async function setup(): Promise<Setup> {
  const clients = awsClients();
  const prefix = uniquePrefix();
  const names = tableNamesFor(prefix);
  await createTables(clients.dynamo, names);
  const state = new DynamoStateStore({
    documents: clients.documents,
    tableName: names.state,
    log: silentLog,
    now: () => t0,
  });
  const { TopicArn } = await clients.sns.send(new CreateTopicCommand({ Name: `${prefix}markets` }));
  const { QueueUrl } = await clients.sqs.send(new CreateQueueCommand({ QueueName: `${prefix}markets` }));
  const { Attributes } = await clients.sqs.send(
    new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ['QueueArn'] }),
  );
  await clients.sns.send(
    new SubscribeCommand({
      TopicArn,
      Protocol: 'sqs',
      Endpoint: Attributes?.QueueArn,
      Attributes: { RawMessageDelivery: 'true' },
    }),
  );
  const notifier = new SnsNotifier({ client: clients.sns, log: silentLog, maxAttempts: 1, sleep: async () => {} });
  // The run's side: dispatch `run-1` opened under the run lease, as the alert run opens it.
  const dispatches = new ObservedDispatches({ documents: clients.documents, tableName: names.state, log: silentLog });
  const lease = await state.acquireLease('run-1', 600_000, t0);
  await dispatches.open(lease, 'run-1', t0);
  const deps: PublishWorkDeps = { state, notifier, dispatches, log: silentLog, now: () => t0, ledgerFlushDelayMs: 20 };
  return { clients, state, topicArn: TopicArn ?? '', queueUrl: QueueUrl ?? '', dispatches, lease, deps };
}

/** `count` rendered alerts for audience `markets` on `topicArn`, each with its ledger facts. */
function alerts(topicArn: string, count: number, from = 1): OutboundMessage[] {
  const audience = AudienceSchema.parse({ audienceId: 'markets', topicArn, timeZone: 'Asia/Seoul' });
  return Array.from({ length: count }, (_, index) => {
    const n = from + index;
    const message = renderNotification(
      {
        audienceId: 'markets',
        article: {
          key: `id:${n}`,
          id: String(n),
          title: `Article ${n}: rates move`,
          summary: 'Summary.',
          url: `https://news.example.com/a/${n}`,
          publishedAt: t0 - 60_000,
          categories: ['002000000'],
          categoryNames: ['Economy'],
        },
        rules: [
          { ruleId: 'rates', description: 'Rates', urgent: false, reasons: [{ kind: 'keyword', term: 'rates' }] },
        ],
      },
      audience,
    );
    return { ...message, facts: { storyId: `story-${n}`, status: 'PUBLISHED', titleHash: `hash${n}` } };
  });
}

/** One work item of `messages`, as a publisher reads it off the queue. */
function itemOf(messages: readonly OutboundMessage[]): WorkItem {
  const { items, tooLarge } = packWorkItems('run-1', messages, { now: t0 });
  expect(tooLarge).toEqual([]);
  expect(items).toHaveLength(1);
  return parseWorkItem(workItemBody(items[0] as WorkItem));
}

/** Delivery ids subscribers received so far (moto delivers during Publish: nothing is in flight). */
async function received(clients: AwsClients, queueUrl: string): Promise<string[]> {
  const ids: string[] = [];
  for (;;) {
    const { Messages } = await clients.sqs.send(
      new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10, VisibilityTimeout: 300 }),
    );
    if (!Messages || Messages.length === 0) return ids.sort();
    for (const message of Messages) {
      ids.push((JSON.parse(message.Body ?? '') as { newsAlerts: { deliveryId: string } }).newsAlerts.deliveryId);
    }
  }
}

const ids = (messages: readonly OutboundMessage[]) => messages.map((message) => deliveryId(message.key)).sort();
const nothing: WorkItemResult = { published: 0, updateNotices: 0, alreadyDelivered: 0, parked: 0 };

describe('publishWorkItem', () => {
  it('publishes each message once and records it with its facts; the same item again sends nothing', async () => {
    const { clients, state, topicArn, queueUrl, dispatches, deps } = await setup();
    const messages = alerts(topicArn, 3);
    const item = itemOf(messages);

    expect(await publishWorkItem(item, deps, { lastAttempt: false })).toEqual({ ...nothing, published: 3 });
    expect(await received(clients, queueUrl)).toEqual(ids(messages));
    const ledger = await state.readDeliveries(messages.map((message) => message.key));
    expect(ledger.get(deliveryId({ audienceId: 'markets', articleKey: 'id:2' }))).toMatchObject({
      ruleIds: ['rates'],
      storyId: 'story-2',
      status: 'PUBLISHED',
      titleHash: 'hash2',
      deliveredAt: t0,
    });
    expect(ledger.size).toBe(3);

    // SQS delivers the item again (a visibility timeout ran out, or two pollers got it).
    expect(await publishWorkItem(item, deps, { lastAttempt: false })).toEqual({ ...nothing, alreadyDelivered: 3 });
    expect(await received(clients, queueUrl)).toEqual([]);
    expect(dispatches.completions).toEqual([
      { itemId: item.itemId, first: true },
      { itemId: item.itemId, first: false },
    ]);
    expect(await dispatches.read('run-1')).toMatchObject({
      done: 1,
      published: 3,
      updateNotices: 0,
      alreadyDelivered: 0,
      parked: 0,
    });
  });

  it('skips a message the ledger already holds', async () => {
    const { clients, state, topicArn, queueUrl, deps } = await setup();
    const messages = alerts(topicArn, 3);
    await state.recordDelivered([{ ...(messages[1] as OutboundMessage).key, deliveredAt: t0 - 1, ruleIds: ['rates'] }]);

    const result = await publishWorkItem(itemOf(messages), deps, { lastAttempt: false });
    expect(result).toEqual({ ...nothing, published: 2, alreadyDelivered: 1 });
    expect(await received(clients, queueUrl)).toEqual(ids([messages[0], messages[2]] as OutboundMessage[]));
  });

  it('parks a message SNS refuses for good, and publishes the rest', async () => {
    const { clients, state, topicArn, queueUrl, dispatches, deps } = await setup();
    const [first, second] = alerts(topicArn, 2);
    const lost = { ...(alerts(topicArn, 1, 3)[0] as OutboundMessage), topicArn: `${topicArn}-never-created` };

    const result = await publishWorkItem(itemOf([first, lost, second] as OutboundMessage[]), deps, {
      lastAttempt: false,
    });
    expect(result).toEqual({ ...nothing, published: 2, parked: 1 });
    expect(await received(clients, queueUrl)).toEqual(ids([first, second] as OutboundMessage[]));
    const parked = await state.listUndeliverable('markets');
    expect(parked).toEqual([
      {
        ...lost.key,
        topicArn: lost.topicArn,
        failedAt: t0,
        code: 'NotFound',
        reason: expect.any(String),
        subject: lost.subject,
        body: lost.body,
      },
    ]);
    expect(dispatches.completions).toEqual([{ itemId: expect.any(String), first: true }]);
    expect(await dispatches.read('run-1')).toMatchObject({ done: 1, published: 2, parked: 1 });
  });

  it('leaves the item not done when a message fails for now, so the next delivery sends only that one', async () => {
    const { clients, state, topicArn, queueUrl, dispatches, deps } = await setup();
    const messages = alerts(topicArn, 3);
    const flaky = deliveryId((messages[1] as OutboundMessage).key);
    installSnsFaults(clients.sns, {
      entryFault: failDeliveries([flaky], { code: 'InternalError', senderFault: false }, 1),
    });
    const item = itemOf(messages);

    const error = await publishWorkItem(item, deps, { lastAttempt: false }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(WorkItemRetryError);
    expect(error).toMatchObject({ unpublished: 1 });
    expect((error as Error).message).toContain('InternalError');
    expect(dispatches.completions).toEqual([]);
    expect(await state.listUndeliverable('markets')).toEqual([]);
    // The two that went out are in the ledger already: the retry does not send them again.
    expect(await received(clients, queueUrl)).toEqual(ids([messages[0], messages[2]] as OutboundMessage[]));

    expect(await publishWorkItem(item, deps, { lastAttempt: false })).toEqual({
      ...nothing,
      published: 1,
      alreadyDelivered: 2,
    });
    expect(await received(clients, queueUrl)).toEqual([flaky]);
    expect(dispatches.completions).toEqual([{ itemId: item.itemId, first: true }]);
    expect(await dispatches.read('run-1')).toMatchObject({ done: 1, published: 1, alreadyDelivered: 2, parked: 0 });
  });

  it('parks what still fails on the last delivery the queue allows (RetriesExhausted), and completes the item', async () => {
    const { clients, state, topicArn, queueUrl, dispatches, deps } = await setup();
    const messages = alerts(topicArn, 3);
    const flaky = messages[2] as OutboundMessage;
    installSnsFaults(clients.sns, {
      entryFault: failDeliveries([deliveryId(flaky.key)], { code: 'Throttled', senderFault: false }, 100),
    });

    const result = await publishWorkItem(itemOf(messages), deps, { lastAttempt: true });
    expect(result).toEqual({ ...nothing, published: 2, parked: 1 });
    expect(await received(clients, queueUrl)).toEqual(ids([messages[0], messages[1]] as OutboundMessage[]));
    const [parked] = await state.listUndeliverable('markets');
    expect(parked).toMatchObject({
      ...flaky.key,
      code: retriesExhaustedCode,
      subject: flaky.subject,
      body: flaky.body,
    });
    expect(parked?.reason).toContain('Throttled');
    expect(dispatches.completions).toHaveLength(1);
  });

  it('counts update notices apart from alerts', async () => {
    const { clients, topicArn, queueUrl, deps } = await setup();
    const [alert, base] = alerts(topicArn, 2);
    const notice = { ...(base as OutboundMessage), key: updateNoticeKey('markets', 'id:1', 'title'), facts: undefined };

    const result = await publishWorkItem(itemOf([alert, notice] as OutboundMessage[]), deps, { lastAttempt: false });
    expect(result).toEqual({ ...nothing, published: 1, updateNotices: 1 });
    expect(await received(clients, queueUrl)).toHaveLength(2);
  });

  it('does not mark the item done when the ledger write fails, and rethrows that failure', async () => {
    const { clients, topicArn, queueUrl, dispatches, deps } = await setup();
    clients.documents.middlewareStack.add(
      (next, context) => async (args) => {
        if (context.commandName === 'BatchWriteItemCommand') throw new Error('ledger unavailable (injected)');
        return await next(args);
      },
      { step: 'initialize', name: 'failLedgerWrites' },
    );
    const messages = alerts(topicArn, 2);

    const error = await publishWorkItem(itemOf(messages), deps, { lastAttempt: true }).catch(
      (caught: unknown) => caught,
    );
    expect(String(error)).toContain('ledger unavailable (injected)');
    expect(dispatches.completions).toEqual([]);
    expect(await dispatches.read('run-1')).toMatchObject({ done: 0, published: 0 });
    // SNS accepted them: this is the one duplicate window, the same as single mode's.
    expect(await received(clients, queueUrl)).toEqual(ids(messages));
  });

  it('an item of a dispatch with no head fails alone: the other items of its batch are done, and its claim is released', async () => {
    const { clients, topicArn, queueUrl, dispatches, deps } = await setup();
    const kept = alerts(topicArn, 2);
    const orphaned = alerts(topicArn, 2, 10);
    // Its dispatch was never opened here (its head deleted by hand, expired, or a made-up id).
    const { items } = packWorkItems('gone', orphaned, { now: t0 });
    const orphan = parseWorkItem(workItemBody(items[0] as WorkItem));
    const claim = { owner: 'invocation-1', until: t0 + 60_000 };
    const outcomes = await publishWorkItems(
      [
        { item: orphan, lastAttempt: false },
        { item: itemOf(kept), lastAttempt: false },
      ],
      deps,
      { claim },
    );
    expect(outcomes[0]).toMatchObject({ kind: 'failed' });
    expect(String((outcomes[0] as { error: Error }).error.message)).toMatch(/dispatch gone has no head/);
    expect(outcomes[1]).toEqual({ kind: 'done', result: { ...nothing, published: 2 }, counted: true });
    expect(await dispatches.read('run-1')).toMatchObject({ done: 1, published: 2 });
    // Both were published once; the orphan's next delivery claims it at once and sends nothing again.
    expect(await received(clients, queueUrl)).toEqual([...ids(kept), ...ids(orphaned)].sort());
    const again = await dispatches.claimItems([{ dispatchId: 'gone', itemId: orphan.itemId }], {
      owner: 'invocation-2',
      until: t0 + 120_000,
      now: t0 + 1,
    });
    expect(again).toEqual([{ state: 'claimed' }]);
  });

  it('an item of a dispatch a run gave up sends nothing: the run reads its days again and queues them anew', async () => {
    const { clients, topicArn, queueUrl, dispatches, lease, deps } = await setup();
    const item = itemOf(alerts(topicArn, 2));
    await dispatches.close(lease, 'run-1', 'abandoned', t0 + 1);
    const [outcome] = await publishWorkItems([{ item, lastAttempt: false }], deps, {
      claim: { owner: 'invocation-1', until: t0 + 60_000 },
    });
    expect(outcome).toEqual({ kind: 'done', result: nothing, counted: false });
    expect(await received(clients, queueUrl)).toEqual([]);
  });
});
