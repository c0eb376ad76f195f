/**
 * `news-alerts replay --parked` with sharded publishing, through the real CLI process against
 * moto: what the publisher parked itself (`RetriesExhausted`, as publish-work.ts records it)
 * replays like any parked alert, and the work items in the work dead-letter queue are parked
 * first (code `WorkItemDeadLettered`) and then sent once; a message that is not a work item is
 * reported by its id, never its body, and stays in the queue. `--dry-run` changes nothing.
 */
import { randomUUID } from 'node:crypto';
import { CreateTopicCommand, DeleteTopicCommand, SubscribeCommand } from '@aws-sdk/client-sns';
import {
  CreateQueueCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
} from '@aws-sdk/client-sqs';
import { afterEach, describe, expect, it } from 'vitest';
import { DynamoDispatchStore } from '#aws/dynamo-dispatch-store';
import { silentLog, type UndeliverableRecord, type WorkItem } from '#core/ports';
import { workItemBody } from '#core/work-items';
import { createWorkQueues, type WorkQueues } from '#sandbox/tables';
import { writeDescriptor } from '../../cli/sandbox-descriptor.ts';
import { type CliSandbox, deliveryIdOfBody, drainQueue, startCliSandbox } from './support.ts';

let sandbox: CliSandbox | undefined;
afterEach(async () => {
  await sandbox?.stop();
  sandbox = undefined;
});

/** A sandbox whose descriptor names a work dead-letter queue (as a sharded sandbox's does). */
async function withWorkQueues(current: CliSandbox): Promise<WorkQueues> {
  const queues = await createWorkQueues(current.stack.clients.sqs, current.prefix);
  writeDescriptor(current.descriptorPath, {
    ...current.descriptor,
    names: {
      ...current.descriptor.names,
      workQueueUrl: queues.queueUrl,
      workDeadLetterQueueUrl: queues.deadLetterQueueUrl,
    },
  });
  return queues;
}

/** Every message of a queue, visible or not for long: received with a zero visibility timeout. */
async function peek(current: CliSandbox, queueUrl: string): Promise<{ id: string; body: string }[]> {
  const seen = new Map<string, string>();
  for (let round = 0; round < 5; round++) {
    const { Messages = [] } = await current.stack.clients.sqs.send(
      new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10, VisibilityTimeout: 0 }),
    );
    for (const message of Messages) seen.set(message.MessageId ?? '', message.Body ?? '');
  }
  return [...seen].map(([id, body]) => ({ id, body }));
}

/** partner-feed's alerts of the last day, rendered by a real run and parked (its topic deleted). */
async function renderedAlerts(current: CliSandbox): Promise<UndeliverableRecord[]> {
  const { sns } = current.stack.clients;
  await sns.send(new DeleteTopicCommand({ TopicArn: current.stack.topics.get('partner-feed') }));
  const summary = await current.stack.run();
  expect(summary.status).toBe('completed');
  const parked = await current.stack.dependencies.state.listUndeliverable('partner-feed');
  // Some given up by the publisher, some dead-lettered: at least one of each.
  expect(parked.length).toBeGreaterThanOrEqual(2);
  await current.stack.dependencies.state.forgetUndeliverable(parked);
  return parked;
}

/** A new topic for partner-feed with a queue that shows what arrives, and the audience pointed at it. */
async function fixPartnerFeed(current: CliSandbox): Promise<string> {
  const { sns, sqs } = current.stack.clients;
  const { TopicArn } = await sns.send(new CreateTopicCommand({ Name: `${current.prefix}partner-fixed` }));
  const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: `${current.prefix}partner-fixed` }));
  const { Attributes } = await sqs.send(new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ['QueueArn'] }));
  await sns.send(
    new SubscribeCommand({
      TopicArn,
      Protocol: 'sqs',
      Endpoint: Attributes?.QueueArn,
      Attributes: { RawMessageDelivery: 'true' },
    }),
  );
  const repoint = await current.cli(['audiences', 'update', 'partner-feed', '--topic-arn', String(TopicArn)]);
  expect(repoint.code, repoint.stderr).toBe(0);
  return String(QueueUrl);
}

const workItem = (records: readonly UndeliverableRecord[]): WorkItem => ({
  v: 1,
  dispatchId: 'cli-run-1',
  itemId: randomUUID(),
  audienceId: 'partner-feed',
  queuedAt: Date.now(),
  messages: records.map((record) => ({
    key: { audienceId: record.audienceId, articleKey: record.articleKey },
    topicArn: record.topicArn,
    subject: record.subject,
    body: record.body,
    ruleIds: [],
  })),
});

interface ParkedJson {
  workDeadLetters?: {
    items: number;
    alerts: number;
    leftForOtherAudiences: number;
    unreadable: { messageId: string; reason: string }[];
  };
  audiences: { audienceId: string; parked: number; wouldSend: number; sent: number; stillParked: number }[];
}

const partnerFeed = (json: ParkedJson) => json.audiences.find((row) => row.audienceId === 'partner-feed');

describe('replay --parked with sharded publishing', () => {
  it('sends what the publisher parked and what the work dead-letter queue holds, once; leaves an unreadable message there', async () => {
    // Enough articles that partner-feed has several alerts.
    const current = await startCliSandbox({ simulator: { seed: 11, generate: { days: 1, perDay: 300 } } });
    sandbox = current;
    const queues = await withWorkQueues(current);
    const alerts = await renderedAlerts(current);
    const half = Math.floor(alerts.length / 2);
    // The publisher gave up on some (retries ran out) and parked them, as publish-work.ts does.
    const givenUp = alerts.slice(0, half);
    await current.stack.dependencies.state.recordUndeliverable(
      givenUp.map((record) => ({ ...record, code: 'RetriesExhausted', reason: 'SNS throttled every attempt' })),
    );
    // The rest went to the dead-letter queue in one work item, next to something that is no work item.
    const deadLettered = alerts.slice(half);
    const { sqs } = current.stack.clients;
    await sqs.send(
      new SendMessageCommand({
        QueueUrl: queues.deadLetterQueueUrl,
        MessageBody: workItemBody(workItem(deadLettered)),
      }),
    );
    const poisonBody = '{"v":9,"note":"https://hooks.slack.com/services/T000/B000/SECRET"}';
    const { MessageId: poisonId } = await sqs.send(
      new SendMessageCommand({ QueueUrl: queues.deadLetterQueueUrl, MessageBody: poisonBody }),
    );
    const received = await fixPartnerFeed(current);

    // A dry run counts both kinds and changes nothing.
    const dryRun = await current.cli(['--json', 'replay', '--parked', '--dry-run']);
    expect(dryRun.code, dryRun.stderr).toBe(0);
    const dry = dryRun.json<ParkedJson>();
    expect(dry.workDeadLetters).toMatchObject({ items: 1, alerts: deadLettered.length, leftForOtherAudiences: 0 });
    expect(dry.workDeadLetters?.unreadable).toEqual([{ messageId: poisonId, reason: expect.any(String) }]);
    expect(partnerFeed(dry)).toMatchObject({ parked: alerts.length, wouldSend: alerts.length });
    expect((await peek(current, queues.deadLetterQueueUrl)).map((message) => message.id).sort()).toHaveLength(2);
    expect(await current.stack.dependencies.state.listUndeliverable('partner-feed')).toHaveLength(givenUp.length);

    // Only other audiences asked for: the work item stays where it is.
    const others = await current.cli(['--json', 'replay', '--parked', '--dry-run', '--audience', 'markets-desk']);
    expect(others.json<ParkedJson>().workDeadLetters).toMatchObject({ items: 0, leftForOtherAudiences: 1 });

    const replay = await current.cli(['--json', 'replay', '--parked']);
    expect(replay.code, replay.stderr).toBe(0);
    const sent = replay.json<ParkedJson>();
    expect(sent.workDeadLetters).toMatchObject({ items: 1, alerts: deadLettered.length, notDeleted: 0 });
    expect(partnerFeed(sent)).toMatchObject({ parked: alerts.length, sent: alerts.length, stillParked: 0 });
    // Each alert once, on the fixed topic.
    expect((await drainQueue(sqs, received)).map(deliveryIdOfBody).sort()).toEqual(
      alerts.map((record) => `partner-feed|${record.articleKey}`).sort(),
    );
    // The unreadable message is named by its id and stays; its body is never printed.
    expect(replay.stderr).toContain(String(poisonId));
    expect(replay.stderr).not.toContain('hooks.slack.com');
    expect(replay.stdout).not.toContain('hooks.slack.com');
    expect(await peek(current, queues.deadLetterQueueUrl)).toEqual([{ id: poisonId, body: poisonBody }]);
    expect(await current.stack.dependencies.state.listUndeliverable('partner-feed')).toEqual([]);

    // Nothing left to send.
    const again = await current.cli(['--json', 'replay', '--parked']);
    expect(again.code, again.stderr).toBe(0);
    expect(again.json<ParkedJson>().workDeadLetters).toMatchObject({ items: 0, alerts: 0 });
    expect(partnerFeed(again.json<ParkedJson>())).toMatchObject({ parked: 0, sent: 0 });
    expect(await drainQueue(sqs, received)).toEqual([]);
  });

  it("refuses to send while an earlier run's work items are still with the publishers, and sends nothing", async () => {
    const current = await startCliSandbox();
    sandbox = current;
    const { state } = current.stack.dependencies;
    const dispatches = new DynamoDispatchStore({
      documents: current.stack.clients.documents,
      tableName: current.stack.config.tables.state,
      log: silentLog,
    });
    // An earlier run queued 3 items and released its lease; one is done.
    const lease = await state.acquireLease('run-earlier', 60_000, Date.now());
    await dispatches.open(lease, 'run-earlier@1', Date.now());
    await dispatches.countEnqueued('run-earlier@1', 3);
    await dispatches.seal(lease, 'run-earlier@1', { expected: 3 }, Date.now());
    await dispatches.completeItem(
      'run-earlier@1',
      'item-1',
      { published: 2, updateNotices: 0, alreadyDelivered: 0, parked: 0 },
      Date.now(),
    );
    await state.releaseLease(lease);

    for (const args of [
      ['replay', '--parked'],
      ['replay', '--from', '2d', '--to', '1d'],
    ]) {
      const refused = await current.cli(args);
      expect(refused.code, refused.stderr).not.toBe(0);
      expect(refused.stderr).toContain('2 of 3 work item(s) of dispatch run-earlier@1 are still with the publishers');
    }
    // Refused with the lease given back: the next alert run is not kept waiting.
    expect(await state.readLease()).toBeUndefined();
  });
});
