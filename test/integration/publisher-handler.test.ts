/**
 * The publisher's Lambda entry point as Lambda calls it: configuration read from the environment
 * at import, module-scope clients pointed at moto server through AWS_ENDPOINT_URL (which every
 * SDK v3 client honours), metrics as EMF on stdout. Only the Lambda context and the SQS event are
 * stand-ins, built in the shapes Lambda passes.
 */
import { CreateTopicCommand, SubscribeCommand } from '@aws-sdk/client-sns';
import { CreateQueueCommand, GetQueueAttributesCommand, ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { beforeAll, describe, expect, inject, it, vi } from 'vitest';
import { AudienceSchema } from '#core/model';
import { silentLog, type WorkItem } from '#core/ports';
import { renderNotification } from '#core/render';
import { packWorkItems, workItemBody } from '#core/work-items';
import { createTables, tableNamesFor } from '#sandbox/tables';
import { awsClients, uniquePrefix } from '#test/aws';

const clients = awsClients();
const dispatchId = 'run-handler';
let handler: (event: SQSEvent, context: Context) => Promise<SQSBatchResponse>;
let stateTable: string;
let topicArn: string;
let subscriberUrl: string;

const context = (requestId: string): Context =>
  ({
    awsRequestId: requestId,
    functionName: 'news-alerts-publisher',
    functionVersion: '$LATEST',
    invokedFunctionArn: 'arn:aws:lambda:us-east-1:123456789012:function:news-alerts-publisher',
    memoryLimitInMB: '512',
    logGroupName: '/aws/lambda/news-alerts-publisher',
    logStreamName: 'test',
    callbackWaitsForEmptyEventLoop: false,
    getRemainingTimeInMillis: () => 60_000,
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  }) as Context;

const record = (body: string, messageId: string): SQSRecord => ({
  messageId,
  receiptHandle: `handle-${messageId}`,
  body,
  attributes: {
    ApproximateReceiveCount: '1',
    SentTimestamp: '0',
    SenderId: 'local',
    ApproximateFirstReceiveTimestamp: '0',
  },
  messageAttributes: {},
  md5OfBody: '',
  eventSource: 'aws:sqs',
  eventSourceARN: 'arn:aws:sqs:us-east-1:123456789012:work',
  awsRegion: 'us-east-1',
});

/** EMF documents printed while running `action`. */
async function emittedMetrics(action: () => Promise<unknown>): Promise<Record<string, unknown>[]> {
  const lines: string[] = [];
  const spy = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    lines.push(String(chunk));
    return true;
  });
  try {
    await action();
  } finally {
    spy.mockRestore();
  }
  return lines
    .flatMap((line) => line.split('\n'))
    .filter((line) => line.includes('"_aws"'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

beforeAll(async () => {
  // Powertools reads these when its module loads: everything that imports it is imported below.
  Object.assign(process.env, { POWERTOOLS_METRICS_DISABLED: 'false', POWERTOOLS_METRICS_NAMESPACE: 'NewsAlertsTest' });
  const prefix = uniquePrefix();
  const names = tableNamesFor(prefix);
  stateTable = names.state;
  await createTables(clients.dynamo, names);
  ({ TopicArn: topicArn = '' } = await clients.sns.send(new CreateTopicCommand({ Name: `${prefix}markets` })));
  ({ QueueUrl: subscriberUrl = '' } = await clients.sqs.send(
    new CreateQueueCommand({ QueueName: `${prefix}subscriber` }),
  ));
  const { Attributes } = await clients.sqs.send(
    new GetQueueAttributesCommand({ QueueUrl: subscriberUrl, AttributeNames: ['QueueArn'] }),
  );
  await clients.sns.send(
    new SubscribeCommand({
      TopicArn: topicArn,
      Protocol: 'sqs',
      Endpoint: Attributes?.QueueArn,
      Attributes: { RawMessageDelivery: 'true' },
    }),
  );
  // The run's dispatch, opened under its lease on the same clock the handler uses (the system's).
  // These adapters import Powertools, so they are imported after its variables are set.
  const { DynamoStateStore } = await import('#aws/dynamo-state-store');
  const { DynamoDispatchStore } = await import('#aws/dynamo-dispatch-store');
  const state = new DynamoStateStore({ documents: clients.documents, tableName: stateTable, log: silentLog });
  const lease = await state.acquireLease(dispatchId, 600_000, Date.now());
  await new DynamoDispatchStore({ documents: clients.documents, tableName: stateTable }).open(
    lease,
    dispatchId,
    Date.now(),
  );
  Object.assign(process.env, {
    AWS_ENDPOINT_URL: inject('motoEndpoint'),
    STATE_TABLE_NAME: stateTable,
    LEDGER_FLUSH_DELAY_MS: '5',
  });
  ({ handler } = await import('../../functions/publisher/handler.ts'));
});

function workItem(): WorkItem {
  const audience = AudienceSchema.parse({ audienceId: 'markets', topicArn, timeZone: 'Asia/Seoul' });
  const messages = [1, 2].map((n) =>
    renderNotification(
      {
        audienceId: 'markets',
        article: {
          key: `id:${n}`,
          id: String(n),
          title: `Article ${n}: rates move`,
          summary: 'Summary.',
          url: `https://news.example.com/a/${n}`,
          publishedAt: Date.now() - 60_000,
          categories: ['002000000'],
          categoryNames: ['Economy'],
        },
        rules: [
          { ruleId: 'rates', description: 'Rates', urgent: false, reasons: [{ kind: 'keyword', term: 'rates' }] },
        ],
      },
      audience,
    ),
  );
  const [item] = packWorkItems(dispatchId, messages, { now: Date.now() }).items;
  if (item === undefined) throw new Error('no work item packed');
  return item;
}

describe('publisher function handler', () => {
  it('publishes a batch, reports the poison record, emits its metrics and keeps the claim of its item, now its completion record, in its dispatch', async () => {
    const item = workItem();
    let response: SQSBatchResponse | undefined;
    const metrics = await emittedMetrics(async () => {
      response = await handler(
        { Records: [record(workItemBody(item), 'm-good'), record('{"v":2}', 'm-poison')] },
        context('request-1'),
      );
    });
    expect(response?.batchItemFailures).toEqual([{ itemIdentifier: 'm-poison' }]);
    const document = metrics.at(-1) as Record<string, unknown>;
    expect(document).toMatchObject({ NotificationsPublished: 2, WorkItemsDone: 1, WorkItemsFailed: 1 });
    expect(JSON.stringify(document._aws)).toContain('NewsAlertsTest');

    const { Messages = [] } = await clients.sqs.send(
      new ReceiveMessageCommand({ QueueUrl: subscriberUrl, MaxNumberOfMessages: 10, VisibilityTimeout: 300 }),
    );
    expect(Messages).toHaveLength(2);
    const { Items = [] } = await clients.documents.send(
      new QueryCommand({
        TableName: stateTable,
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :item)',
        ExpressionAttributeValues: { ':pk': `dispatch#${dispatchId}`, ':item': 'item#' },
        ConsistentRead: true,
      }),
    );
    expect(Items).toHaveLength(1);
    // Claimed by this invocation, then done with its counts.
    expect(Items[0]).toMatchObject({
      itemId: item.itemId,
      claimOwner: expect.stringContaining('request-1'),
      doneAt: expect.any(Number),
      published: 2,
    });
    // TTL in epoch seconds, as the table's TTL attribute expects: kept as long as the dispatch's
    // head for the run history (14 days, longer than the work queue keeps a message), not milliseconds.
    const expiresAt = Number(Items[0]?.expiresAt);
    expect(expiresAt).toBeGreaterThan(Date.now() / 1000 + 4 * 24 * 3600);
    expect(expiresAt).toBeLessThan(Date.now() / 1000 + 15 * 24 * 3600);
  });
});
