/**
 * `news-alerts subscriptions failures` reads which audiences have failing subscribers from the two
 * dead-letter queues every audience's failures end in (cli/delivery-failures.ts), against moto SQS
 * with messages in the shapes SNS and Lambda put there: an SNS envelope, a raw alert, and a Lambda
 * on-failure record of the Slack relay. It names each audience and counts its messages, leaves
 * every message in its queue, and never depends on an alarm per audience.
 */
import { CreateQueueCommand, GetQueueAttributesCommand, SendMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { describe, expect, it } from 'vitest';
import { awsClients, uniquePrefix } from '#test/aws';
import { readDeliveryFailures } from '../../cli/delivery-failures.ts';

async function queue(sqs: SQSClient, name: string): Promise<{ url: string; arn: string }> {
  const { QueueUrl = '' } = await sqs.send(new CreateQueueCommand({ QueueName: name }));
  const { Attributes } = await sqs.send(new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ['QueueArn'] }));
  return { url: QueueUrl, arn: Attributes?.QueueArn ?? '' };
}

const topic = (prefix: string, audienceId: string) => `arn:aws:sns:us-east-1:123456789012:${prefix}${audienceId}`;

describe('subscriptions failures', () => {
  it('names the audiences whose deliveries failed, per queue, and leaves the messages where they are', async () => {
    const { sqs } = awsClients();
    const prefix = uniquePrefix();
    const topicPrefix = `${prefix}audience-`;
    const ownTopic = 'arn:aws:sns:us-east-1:123456789012:team-owned-topic';
    const delivery = await queue(sqs, `${prefix}delivery-dlq`);
    const relay = await queue(sqs, `${prefix}relay-dlq`);
    const alert = (audienceId: string, n: number) =>
      JSON.stringify({
        newsAlerts: { deliveryId: `${audienceId}|id:${n}` },
        title: 'https://hooks.example.com/secret',
      });
    const bodies: [string, string][] = [
      // SNS envelopes (email, SMS or HTTPS subscriber): the topic names the audience.
      [
        delivery.url,
        JSON.stringify({ Type: 'Notification', TopicArn: topic(topicPrefix, 'markets'), Message: alert('markets', 1) }),
      ],
      [
        delivery.url,
        JSON.stringify({ Type: 'Notification', TopicArn: topic(topicPrefix, 'markets'), Message: alert('markets', 2) }),
      ],
      // A raw alert to an HTTPS subscriber: its delivery id names the audience.
      [delivery.url, alert('rates', 3)],
      // Something of another deployment or tool.
      [delivery.url, JSON.stringify({ TopicArn: 'arn:aws:sns:us-east-1:123456789012:other-topic' })],
      // An email subscriber of an audience with a topic of its own (--topic-arn): the envelope holds
      // the email text, no delivery id, so only the stored topic ARN names the audience.
      [
        delivery.url,
        JSON.stringify({ Type: 'Notification', TopicArn: ownTopic, Message: 'Rates move again\n\nThe Fed...' }),
      ],
      // The relay's on-failure record carries the SNS event it was given.
      [
        relay.url,
        JSON.stringify({
          requestContext: { condition: 'RetriesExhausted' },
          requestPayload: { Records: [{ Sns: { TopicArn: topic(topicPrefix, 'chips'), Message: alert('chips', 4) } }] },
        }),
      ],
    ];
    for (const [url, body] of bodies) await sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: body }));

    const read = () =>
      readDeliveryFailures(
        sqs,
        [
          { arn: delivery.arn, queue: 'delivery' },
          { arn: relay.arn, queue: 'slack relay' },
        ],
        { topicPrefix, topics: new Map([[ownTopic, 'own-desk']]) },
      );
    const found = await read();
    expect(found.rows.map(({ audienceId, queue: where, messages }) => ({ audienceId, where, messages }))).toEqual([
      { audienceId: 'markets', where: 'delivery', messages: 2 },
      { audienceId: 'chips', where: 'slack relay', messages: 1 },
      { audienceId: 'own-desk', where: 'delivery', messages: 1 },
      { audienceId: 'rates', where: 'delivery', messages: 1 },
    ]);
    expect(found).toMatchObject({ scanned: 6, unattributed: 1, truncated: false });
    expect(found.rows[0]?.newest).toMatch(/^\d{4}-\d{2}-\d{2}T/);
    // Read again at once (the alarm's command, then one audience's): the same answer, not an empty
    // queue hidden by the first read.
    expect(await read()).toEqual(found);
    expect(found.leftHidden).toBe(false);
    // Nothing was removed, and nothing is left hidden: each queue shows what it held.
    for (const [url, count] of [
      [delivery.url, 5],
      [relay.url, 1],
    ] as const) {
      const { Attributes } = await sqs.send(
        new GetQueueAttributesCommand({
          QueueUrl: url,
          AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'],
        }),
      );
      expect(Number(Attributes?.ApproximateNumberOfMessages)).toBe(count);
      expect(Number(Attributes?.ApproximateNumberOfMessagesNotVisible)).toBe(0);
    }
    // A policy without sqs:ChangeMessageVisibility still gets the answer, and is told they stay hidden.
    const denied = new Proxy(sqs, {
      get(client, property, receiver) {
        if (property !== 'send') return Reflect.get(client, property, receiver);
        return (command: { constructor: { name: string } }) => {
          if (command.constructor.name === 'ChangeMessageVisibilityBatchCommand') {
            return Promise.reject(Object.assign(new Error('not allowed'), { name: 'AccessDenied' }));
          }
          return (client.send as (c: unknown) => Promise<unknown>)(command);
        };
      },
    });
    const hidden = await readDeliveryFailures(
      denied,
      [
        { arn: delivery.arn, queue: 'delivery' },
        { arn: relay.arn, queue: 'slack relay' },
      ],
      { topicPrefix, topics: new Map([[ownTopic, 'own-desk']]) },
    );
    expect({ ...hidden, leftHidden: false }).toEqual(found);
    expect(hidden.leftHidden).toBe(true);
  });
});
