/**
 * The work dead-letter queue is emptied only behind the parked records (cli/work-dead-letters.ts):
 * when parking fails, every work item stays in the queue for the next `replay --parked`; when it
 * succeeds, each item is parked once and deleted. Against moto's SQS, with a state store whose
 * write fails or records what it was given.
 */
import { randomUUID } from 'node:crypto';
import { SendMessageCommand } from '@aws-sdk/client-sqs';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import type { UndeliverableRecord, WorkItem } from '#core/ports';
import { workItemBody } from '#core/work-items';
import { createWorkQueues } from '#sandbox/tables';
import { awsClients, uniquePrefix } from '#test/aws';
import { takeWorkDeadLetters } from '../../cli/work-dead-letters.ts';

const aws = awsClients();
afterAll(() => {
  aws.sqs.destroy();
});

const item = (audienceId: string, articles: readonly string[]): WorkItem => ({
  v: 1,
  dispatchId: 'run-1',
  itemId: randomUUID(),
  audienceId,
  queuedAt: 1_800_000_000_000,
  messages: articles.map((articleKey) => ({
    key: { audienceId, articleKey },
    topicArn: `arn:aws:sns:us-east-1:123456789012:audience-${audienceId.replace(/[^A-Za-z0-9_-]/g, '-')}`,
    subject: `Alert ${articleKey}`,
    body: JSON.stringify({ default: `alert ${articleKey}` }),
    ruleIds: ['r1'],
  })),
});

async function queueWith(items: readonly WorkItem[]): Promise<string> {
  const { deadLetterQueueUrl } = await createWorkQueues(aws.sqs, uniquePrefix());
  for (const work of items) {
    await aws.sqs.send(new SendMessageCommand({ QueueUrl: deadLetterQueueUrl, MessageBody: workItemBody(work) }));
  }
  return deadLetterQueueUrl;
}

describe('takeWorkDeadLetters', () => {
  it('leaves every item in the queue when parking them fails', async () => {
    const queueUrl = await queueWith([item('a', ['k1', 'k2']), item('b', ['k3'])]);
    const failing = {
      recordUndeliverable: async () => {
        throw new Error('DynamoDB unavailable');
      },
    };
    await expect(
      takeWorkDeadLetters(aws.sqs, queueUrl, { state: failing, now: () => 1, dryRun: false }),
    ).rejects.toThrow('DynamoDB unavailable');
    // Back in the queue at once: the next replay takes them.
    const parked: UndeliverableRecord[] = [];
    const recording = {
      recordUndeliverable: async (records: readonly UndeliverableRecord[]) => {
        parked.push(...records);
      },
    };
    const taken = await takeWorkDeadLetters(aws.sqs, queueUrl, { state: recording, now: () => 2, dryRun: false });
    expect(taken.items).toBe(2);
    expect(parked.map((record) => record.articleKey).sort()).toEqual(['k1', 'k2', 'k3']);
    expect(parked.every((record) => record.code === 'WorkItemDeadLettered' && record.failedAt === 2)).toBe(true);
    expect(
      (await takeWorkDeadLetters(aws.sqs, queueUrl, { state: recording, now: () => 3, dryRun: false })).items,
    ).toBe(0);
  });

  it('counts the items parked whose message SQS did not delete; they come back for the next replay', async () => {
    const queueUrl = await queueWith([item('a', ['k1']), item('b', ['k2'])]);
    // The real client, with one entry of each DeleteMessageBatch given a receipt handle SQS refuses.
    const sqs = awsClients().sqs;
    sqs.middlewareStack.add(
      (next, context) => async (args) => {
        if (context.commandName !== 'DeleteMessageBatchCommand') return await next(args);
        const [first] = (args.input as { Entries: { ReceiptHandle?: string }[] }).Entries;
        if (first !== undefined) first.ReceiptHandle = 'not-a-receipt';
        return await next(args);
      },
      { step: 'initialize', name: 'refuseOneDelete' },
    );
    const parked: UndeliverableRecord[] = [];
    const state = {
      recordUndeliverable: async (records: readonly UndeliverableRecord[]) => {
        parked.push(...records);
      },
    };
    const taken = await takeWorkDeadLetters(sqs, queueUrl, { state, now: () => 1, dryRun: false });
    expect(taken).toMatchObject({ items: 2, notDeleted: 1 });
    expect(parked).toHaveLength(2);
  });

  it('parks each item of any mix once, and a dry run parks and deletes nothing', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.record({
            audienceId: fc.constantFrom('a', 'b.c', 'd_e:f-1'),
            // Article keys as providers spell them (no blank keys: those are not work items).
            articles: fc.uniqueArray(fc.stringMatching(/^[A-Za-z0-9:#|é_-]{1,12}$/), { minLength: 1, maxLength: 4 }),
          }),
          { minLength: 1, maxLength: 12 },
        ),
        async (shapes) => {
          const items = shapes.map((shape) => item(shape.audienceId, shape.articles));
          const queueUrl = await queueWith(items);
          const parked: UndeliverableRecord[] = [];
          const state = {
            recordUndeliverable: async (records: readonly UndeliverableRecord[]) => {
              parked.push(...records);
            },
          };
          const dry = await takeWorkDeadLetters(aws.sqs, queueUrl, { state, now: () => 1, dryRun: true });
          expect(dry.items, JSON.stringify(dry)).toBe(items.length);
          expect(parked).toEqual([]);
          const taken = await takeWorkDeadLetters(aws.sqs, queueUrl, { state, now: () => 1, dryRun: false });
          expect(taken.items).toBe(items.length);
          const expected = items.flatMap((work) =>
            work.messages.map((message) => `${message.key.audienceId}|${message.key.articleKey}`),
          );
          expect(parked.map((record) => `${record.audienceId}|${record.articleKey}`).sort()).toEqual(expected.sort());
          expect((await takeWorkDeadLetters(aws.sqs, queueUrl, { state, now: () => 1, dryRun: false })).items).toBe(0);
        },
      ),
      { numRuns: 8 },
    );
  });
});
