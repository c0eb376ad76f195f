/**
 * The publisher's queue in moto for tests: a work queue with a dead-letter queue behind it (the
 * stack's redrive policy: after `maxReceiveCount` receives SQS moves a message to the DLQ), and a
 * reader that takes everything visible off a queue as a subscriber would.
 */
import {
  CreateQueueCommand,
  DeleteMessageBatchCommand,
  GetQueueAttributesCommand,
  type Message,
  ReceiveMessageCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';

export interface WorkQueueUrls {
  readonly queueUrl: string;
  readonly dlqUrl: string;
}

/** A work queue and its DLQ under `prefix` (unique per test, see aws.ts `uniquePrefix`). */
export async function createWorkQueue(
  sqs: SQSClient,
  prefix: string,
  options: { maxReceiveCount?: number; visibilityTimeoutSeconds?: number } = {},
): Promise<WorkQueueUrls> {
  const { QueueUrl: dlqUrl } = await sqs.send(new CreateQueueCommand({ QueueName: `${prefix}work-dlq` }));
  const { Attributes } = await sqs.send(
    new GetQueueAttributesCommand({ QueueUrl: dlqUrl, AttributeNames: ['QueueArn'] }),
  );
  const { QueueUrl: queueUrl } = await sqs.send(
    new CreateQueueCommand({
      QueueName: `${prefix}work`,
      Attributes: {
        VisibilityTimeout: String(options.visibilityTimeoutSeconds ?? 360),
        RedrivePolicy: JSON.stringify({
          deadLetterTargetArn: Attributes?.QueueArn,
          maxReceiveCount: options.maxReceiveCount ?? 3,
        }),
      },
    }),
  );
  if (queueUrl === undefined || dlqUrl === undefined) throw new Error('moto created no queue URL');
  return { queueUrl, dlqUrl };
}

/**
 * Every message visible on the queue, received (with attributes) and deleted, until a receive
 * comes back empty: what a consumer would get, each message once.
 */
export async function drainQueue(sqs: SQSClient, queueUrl: string): Promise<Message[]> {
  const messages: Message[] = [];
  for (;;) {
    const { Messages = [] } = await sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: queueUrl,
        MaxNumberOfMessages: 10,
        WaitTimeSeconds: 0,
        MessageAttributeNames: ['All'],
        AttributeNames: ['All'],
      }),
    );
    if (Messages.length === 0) return messages;
    messages.push(...Messages);
    await sqs.send(
      new DeleteMessageBatchCommand({
        QueueUrl: queueUrl,
        Entries: Messages.map((message, index) => ({ Id: String(index), ReceiptHandle: message.ReceiptHandle })),
      }),
    );
  }
}
