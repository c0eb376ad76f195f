/**
 * The publishing benchmark's latency proxy (bench/latency-proxy.ts) in front of the test run's
 * moto server, driven by the real SDK clients: a PublishBatch waits the injected latency, a
 * DynamoDB GetItem does not, and bodies reach moto unchanged. Every timing assertion reads the
 * proxy's own per-request record of what it injected, never the test's wall clock.
 */
import { CreateTableCommand, DynamoDBClient, GetItemCommand, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { CreateTopicCommand, PublishBatchCommand, SNSClient, SubscribeCommand } from '@aws-sdk/client-sns';
import { CreateQueueCommand, GetQueueAttributesCommand, ReceiveMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { localAwsConfig } from '#sandbox/moto';
import { awsClients, uniquePrefix } from '#test/aws';
import {
  actionFromRequestLine,
  type LatencyProxy,
  queryActionOf,
  startLatencyProxy,
} from '../../bench/latency-proxy.ts';

const DELAY_MS = 40;

describe('latency proxy against moto', () => {
  const clients = awsClients();
  let proxy: LatencyProxy;

  beforeAll(async () => {
    proxy = await startLatencyProxy({ target: clients.endpoint, delayMs: DELAY_MS });
  });
  afterAll(async () => {
    await proxy.stop();
  });

  it('holds a PublishBatch at least the injected latency and forwards its body unchanged', async () => {
    const prefix = uniquePrefix();
    const { TopicArn } = await clients.sns.send(new CreateTopicCommand({ Name: `${prefix}desk` }));
    const { QueueUrl } = await clients.sqs.send(new CreateQueueCommand({ QueueName: `${prefix}desk` }));
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
    // Large enough to arrive in many chunks: the proxy must stream it, not cut or reorder it.
    const message = `héllo ${'0123456789abcdef'.repeat(12_000)} & Action=GetItem`;
    const viaProxy = new SNSClient(localAwsConfig(proxy.endpoint));
    proxy.clear();
    const answer = await viaProxy.send(
      new PublishBatchCommand({ TopicArn, PublishBatchRequestEntries: [{ Id: 'one', Message: message }] }),
    );
    viaProxy.destroy();

    expect(answer.Successful?.map((entry) => entry.Id)).toEqual(['one']);
    expect(proxy.requests).toHaveLength(1);
    const [record] = proxy.requests;
    expect(record).toMatchObject({ action: 'PublishBatch', protocol: 'query', status: 200 });
    expect(record?.injectedMs).toBeGreaterThanOrEqual(DELAY_MS);
    const { Messages } = await clients.sqs.send(
      new ReceiveMessageCommand({ QueueUrl, MaxNumberOfMessages: 1, WaitTimeSeconds: 5 }),
    );
    expect(Messages?.[0]?.Body).toBe(message);
  });

  it('forwards a DynamoDB GetItem at once', async () => {
    const table = `${uniquePrefix()}items`;
    await clients.dynamo.send(
      new CreateTableCommand({
        TableName: table,
        BillingMode: 'PAY_PER_REQUEST',
        KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
        AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }],
      }),
    );
    await clients.dynamo.send(new PutItemCommand({ TableName: table, Item: { pk: { S: 'a' }, v: { N: '7' } } }));
    const viaProxy = new DynamoDBClient(localAwsConfig(proxy.endpoint));
    proxy.clear();
    const { Item } = await viaProxy.send(new GetItemCommand({ TableName: table, Key: { pk: { S: 'a' } } }));
    viaProxy.destroy();

    expect(Item?.v).toEqual({ N: '7' });
    expect(proxy.requests).toEqual([{ action: 'GetItem', protocol: 'json', injectedMs: 0, status: 200 }]);
  });

  it('forwards SNS calls other than PublishBatch at once, and SQS (JSON protocol) too', async () => {
    const prefix = uniquePrefix();
    const sns = new SNSClient(localAwsConfig(proxy.endpoint));
    const sqs = new SQSClient(localAwsConfig(proxy.endpoint));
    proxy.clear();
    await sns.send(new CreateTopicCommand({ Name: `${prefix}other` }));
    await sqs.send(new CreateQueueCommand({ QueueName: `${prefix}other` }));
    sns.destroy();
    sqs.destroy();

    expect(proxy.requests.map(({ action, injectedMs }) => ({ action, injectedMs }))).toEqual([
      { action: 'CreateTopic', injectedMs: 0 },
      { action: 'CreateQueue', injectedMs: 0 },
    ]);
  });
});

describe('reading the action', () => {
  it('reads JSON targets and Smithy RPC v2 CBOR paths', () => {
    expect(actionFromRequestLine('/', { 'x-amz-target': 'AmazonSNS.PublishBatch' })).toEqual({
      action: 'PublishBatch',
      protocol: 'json',
    });
    expect(actionFromRequestLine('/service/AmazonSNS/operation/PublishBatch', {})).toEqual({
      action: 'PublishBatch',
      protocol: 'cbor',
    });
    expect(actionFromRequestLine('/', { 'content-type': 'application/x-www-form-urlencoded' })).toBeUndefined();
  });

  it('finds the Action parameter wherever the body is cut, and only once it is complete', () => {
    const parameter = fc.stringMatching(/^[A-Za-z.0-9]{1,12}=[A-Za-z0-9%+]{0,20}$/);
    fc.assert(
      fc.property(
        fc.array(parameter, { maxLength: 6 }),
        fc.array(parameter, { maxLength: 6 }),
        fc.constantFrom('PublishBatch', 'Publish', 'CreateTopic', 'Publish+Batch'),
        fc.nat(),
        (before, after, action, cutAt) => {
          const body = [...before.filter((p) => !p.startsWith('Action=')), `Action=${action}`, ...after].join('&');
          const expected = action.replaceAll('+', ' ');
          expect(queryActionOf(body, true)).toBe(expected);
          const cut = cutAt % (body.length + 1);
          const partial = queryActionOf(body.slice(0, cut), false);
          // A cut start either already holds the whole parameter or asks for more; it never guesses.
          if (partial !== undefined) expect(partial).toBe(expected);
        },
      ),
    );
    expect(queryActionOf('Version=2010-03-31&Topic', true)).toBeNull();
    expect(queryActionOf('Action=Publish', false)).toBeUndefined();
    expect(queryActionOf('Action=Publish&', false)).toBe('Publish');
  });
});
