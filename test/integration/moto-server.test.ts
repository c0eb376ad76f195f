/**
 * What sandbox/moto-server.py changes in moto keeps SQS's answers right. Its third patch stops
 * moto counting the whole queue on every message sent or received (the counts read as 0 inside
 * those calls); these tests check that the counts GetQueueAttributes reports are still exact,
 * and that a send still reads the queue's own settings (content-based deduplication) correctly.
 */

import { CreateTopicCommand, PublishCommand, SubscribeCommand } from '@aws-sdk/client-sns';
import {
  CreateQueueCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  SendMessageCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { startHttpsReceiver } from '#sandbox/https-receiver';
import { awsClients, uniquePrefix } from '#test/aws';

const clients = awsClients();
afterAll(() => {
  clients.sqs.destroy();
  clients.sns.destroy();
});

async function counts(sqs: SQSClient, queueUrl: string) {
  const { Attributes } = await sqs.send(
    new GetQueueAttributesCommand({
      QueueUrl: queueUrl,
      AttributeNames: [
        'ApproximateNumberOfMessages',
        'ApproximateNumberOfMessagesNotVisible',
        'ApproximateNumberOfMessagesDelayed',
      ],
    }),
  );
  return {
    visible: Number(Attributes?.ApproximateNumberOfMessages),
    inFlight: Number(Attributes?.ApproximateNumberOfMessagesNotVisible),
    delayed: Number(Attributes?.ApproximateNumberOfMessagesDelayed),
  };
}

describe('moto server as patched for the sandbox', () => {
  it('still counts visible, in-flight and delayed messages exactly after sends and receives', async () => {
    const { sqs } = clients;
    const { QueueUrl: queueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: `${uniquePrefix()}counted` }));
    if (queueUrl === undefined) throw new Error('no queue url');
    for (let batch = 0; batch < 3; batch++) {
      await sqs.send(
        new SendMessageBatchCommand({
          QueueUrl: queueUrl,
          Entries: Array.from({ length: 10 }, (_, i) => ({ Id: `m${i}`, MessageBody: `body ${batch}-${i}` })),
        }),
      );
    }
    await sqs.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: 'later', DelaySeconds: 900 }));
    const received = await sqs.send(
      new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10, VisibilityTimeout: 600 }),
    );
    expect(received.Messages).toHaveLength(10);
    expect(await counts(sqs, queueUrl)).toEqual({ visible: 20, inFlight: 10, delayed: 1 });
  });

  it('still reads content-based deduplication when a message is sent to a FIFO queue', async () => {
    const { sqs } = clients;
    const { QueueUrl: queueUrl } = await sqs.send(
      new CreateQueueCommand({
        QueueName: `${uniquePrefix()}dedup.fifo`,
        Attributes: { FifoQueue: 'true', ContentBasedDeduplication: 'true' },
      }),
    );
    if (queueUrl === undefined) throw new Error('no queue url');
    for (let i = 0; i < 3; i++) {
      await sqs.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: 'same body', MessageGroupId: 'g' }));
    }
    await sqs.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: 'other body', MessageGroupId: 'g' }));
    expect((await counts(sqs, queueUrl)).visible).toBe(2);
  });

  it('posts to an http(s) subscriber as SNS does: the message itself when raw, the envelope otherwise, with SNS headers', async () => {
    // moto posted the envelope whatever RawMessageDelivery said (found by an integrator's review).
    const receiver = await startHttpsReceiver(inject('sandboxCa'));
    try {
      const { TopicArn } = await clients.sns.send(new CreateTopicCommand({ Name: `${uniquePrefix()}hooks` }));
      for (const [path, raw] of [
        ['/raw', 'true'],
        ['/envelope', 'false'],
      ] as const) {
        await clients.sns.send(
          new SubscribeCommand({
            TopicArn,
            Protocol: 'https',
            Endpoint: `${receiver.url}${path}`,
            Attributes: { RawMessageDelivery: raw },
          }),
        );
      }
      const message = JSON.stringify({
        default: '{"newsAlerts":{"deliveryId":"d1"}}',
        https: '{"newsAlerts":{"deliveryId":"d1"}}',
      });
      const { MessageId } = await clients.sns.send(
        new PublishCommand({ TopicArn, Message: message, MessageStructure: 'json' }),
      );
      // moto posts inside the Publish: both are here when it returns.
      const byPath = new Map(receiver.take().map((request) => [request.path, request]));
      const raw = byPath.get('/raw');
      expect(raw?.body).toBe('{"newsAlerts":{"deliveryId":"d1"}}');
      expect(raw?.headers).toMatchObject({
        'x-amz-sns-message-type': 'Notification',
        'x-amz-sns-message-id': MessageId,
        'x-amz-sns-topic-arn': TopicArn,
        'x-amz-sns-rawdelivery': 'true',
      });
      const envelope = byPath.get('/envelope');
      expect(JSON.parse(envelope?.body ?? '{}')).toMatchObject({
        Type: 'Notification',
        MessageId,
        Message: '{"newsAlerts":{"deliveryId":"d1"}}',
      });
      expect(envelope?.headers['x-amz-sns-message-type']).toBe('Notification');
      expect(envelope?.headers).not.toHaveProperty('x-amz-sns-rawdelivery');
    } finally {
      await receiver.stop();
    }
  });
});
