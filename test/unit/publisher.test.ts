/**
 * The publisher's batch loop (functions/publisher/process.ts) with its steps stubbed (no claims
 * are taken): which receive is the last attempt, the deadline signal, what a failure
 * reports and what the logs may say. The loop with the real steps and AWS is in
 * test/integration/publisher.test.ts.
 */
import type { Context, SQSRecord } from 'aws-lambda';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { WorkItemRetryError } from '#core/errors';
import { AudienceSchema } from '#core/model';
import type { WorkItem, WorkItemResult } from '#core/ports';
import type { WorkItemOutcome } from '#core/publish-work';
import { renderNotification } from '#core/render';
import { parseWorkItem, workItemBody } from '#core/work-items';
import { captureLog } from '#test/run-harness';
import { createBatchHandler, type WorkItemSteps } from '../../functions/publisher/process.ts';
import { splitBody } from './work-items.support.ts';

const audience = AudienceSchema.parse({
  audienceId: 'markets',
  topicArn: 'arn:aws:sns:us-east-1:123456789012:markets',
  timeZone: 'Asia/Seoul',
});
const message = renderNotification(
  {
    audienceId: 'markets',
    article: {
      key: 'id:1',
      id: '1',
      title: 'Rates move',
      summary: 'Summary.',
      url: 'https://news.example.com/a/1',
      publishedAt: 0,
      categories: ['002000000'],
      categoryNames: ['Economy'],
    },
    rules: [{ ruleId: 'rates', description: 'Rates', urgent: false, reasons: [{ kind: 'keyword', term: 'rates' }] }],
  },
  audience,
);
const item: WorkItem = {
  v: 1,
  dispatchId: 'run-1',
  itemId: 'item-1',
  audienceId: 'markets',
  queuedAt: 0,
  messages: [message],
};
const done: WorkItemResult = { published: 1, updateNotices: 0, alreadyDelivered: 0, parked: 0 };

const record = (body: string, receiveCount: number, messageId = `m-${receiveCount}`): SQSRecord => ({
  messageId,
  receiptHandle: 'handle',
  body,
  attributes: {
    ApproximateReceiveCount: String(receiveCount),
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

const context = (remainingMs = 60_000): Context =>
  ({ awsRequestId: 'request', getRemainingTimeInMillis: () => remainingMs }) as Context;

/** A step that handles one item (the batch step calls it for each, in order). */
type ItemStep = (
  item: WorkItem,
  options: { lastAttempt: boolean; signal?: AbortSignal | undefined },
) => Promise<WorkItemResult>;

/** The batch step made of a per-item one: an item whose step throws fails, the others are done. */
const perItem =
  (step: ItemStep): WorkItemSteps['publish'] =>
  async (deliveries, options) =>
    await Promise.all(
      deliveries.map(async ({ item: work, lastAttempt }): Promise<WorkItemOutcome> => {
        try {
          return { kind: 'done', result: await step(work, { lastAttempt, signal: options.signal }), counted: true };
        } catch (error) {
          return { kind: 'failed', error };
        }
      }),
    );

function loop(
  steps: { parse?: WorkItemSteps['parse']; publish?: ItemStep; publishBatch?: WorkItemSteps['publish'] } = {},
  options: { maxReceiveCount?: number; deadlineMarginMs?: number; now?: () => number } = {},
) {
  const log = captureLog();
  const handler = createBatchHandler(
    {
      parse: steps.parse ?? parseWorkItem,
      publish: steps.publishBatch ?? perItem(steps.publish ?? (async () => done)),
    },
    {
      maxReceiveCount: options.maxReceiveCount ?? 3,
      log,
      deadlineMarginMs: options.deadlineMarginMs,
      now: options.now,
    },
  );
  return { handler, log };
}

describe('publisher batch loop (steps stubbed)', () => {
  it('passes lastAttempt from the receive that reaches maxReceiveCount on', async () => {
    const seen: [string, boolean][] = [];
    const { handler } = loop({
      parse: (body) => ({ ...item, itemId: body }),
      publish: async (work, options) => {
        seen.push([work.itemId, options.lastAttempt]);
        return done;
      },
    });
    const response = await handler(
      { Records: [1, 2, 3, 4].map((count) => record(`receive-${count}`, count)) },
      context(),
    );
    expect(response.batchItemFailures).toEqual([]);
    expect(seen.sort()).toEqual([
      ['receive-1', false],
      ['receive-2', false],
      ['receive-3', true],
      ['receive-4', true],
    ]);
  });

  it('stops new publishing at the deadline margin before the invocation times out', async () => {
    const signals: boolean[] = [];
    const { handler } = loop(
      {
        parse: () => item,
        publish: async (_work, options) => {
          signals.push(options.signal?.aborted ?? false);
          return done;
        },
      },
      { deadlineMarginMs: 5000 },
    );
    await handler({ Records: [record('a', 1)] }, context(60_000));
    await handler({ Records: [record('a', 1)] }, context(4000));
    expect(signals).toEqual([false, true]);
  });

  it('reports a record whose item asks for a retry, with its ids and codes in the log; the other record succeeds', async () => {
    const { handler, log } = loop({
      parse: (body) => ({ ...item, itemId: body }),
      publish: async (work) => {
        if (work.itemId === 'retry-me') throw new WorkItemRetryError(2, ['Throttling']);
        return done;
      },
    });
    const response = await handler(
      { Records: [record('retry-me', 1, 'm-retry'), record('fine', 1, 'm-fine')] },
      context(),
    );
    expect(response.batchItemFailures).toEqual([{ itemIdentifier: 'm-retry' }]);
    const line = log.lines.find((entry) => entry.includes('m-retry')) ?? '';
    expect(JSON.parse(line)).toMatchObject({
      level: 'WARN',
      dispatchId: 'run-1',
      itemId: 'retry-me',
      audienceId: 'markets',
      errorName: 'WorkItemRetryError',
    });
    expect(line).toContain('Throttling');
  });

  it("logs another error's name but not its message, which may carry an endpoint", async () => {
    const { handler, log } = loop({
      parse: () => item,
      publish: async () => {
        throw Object.assign(new Error('connect ECONNREFUSED https://hooks.example.com/services/T000/B000/secret'), {
          name: 'NetworkingError',
        });
      },
    });
    // The only record failed, so the whole batch fails (Powertools FullBatchFailureError).
    await expect(handler({ Records: [record('a', 1)] }, context())).rejects.toThrow(/All records failed/);
    const text = log.lines.join('\n');
    expect(text).toContain('NetworkingError');
    expect(text).not.toContain('hooks.example.com');
  });

  it('claims each batch for as long as the invocation can run, under an owner of its own per invocation', async () => {
    const claims: { owner: string; until: number }[] = [];
    let clock = 1_000_000;
    const { handler } = loop(
      {
        publishBatch: async (deliveries, options) => {
          if (options.claim) claims.push(options.claim);
          return deliveries.map(() => ({ kind: 'done', result: done, counted: true }));
        },
      },
      { now: () => clock },
    );
    await handler(
      { Records: [record(workItemBody(item), 1, 'm-1'), record(workItemBody(item), 1, 'm-2')] },
      context(30_000),
    );
    clock += 5_000;
    await handler({ Records: [record(workItemBody(item), 1, 'm-3')] }, context(20_000));
    expect(claims).toEqual([
      { owner: expect.any(String), until: 1_030_000 },
      { owner: expect.any(String), until: 1_025_000 },
    ]);
    expect(claims[0]?.owner).not.toBe(claims[1]?.owner);
  });

  it('never logs any part of an unreadable body: hostile bodies fail their record and leave only ids and reasons (property)', async () => {
    const marker = 'https://hooks.example.com/services/MARKER';
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.string({ unit: 'binary' }).map((noise) => `${noise}${marker}`),
          fc.json().map((json) => `[${json},${JSON.stringify(marker)}]`),
          // Almost a work item: a valid one with one field broken (carrying the marker).
          fc.constantFrom('v', 'dispatchId', 'itemId', 'audienceId', 'queuedAt', 'messages').map((field) => {
            const { head, tail } = splitBody(workItemBody(item));
            head[field] = { broken: marker };
            return `${JSON.stringify(head)}\n${tail}`;
          }),
          fc.string({ unit: 'binary' }).map((text) => {
            const { head, tail } = splitBody(workItemBody(item));
            const messages = head.messages as Record<string, unknown>[];
            head.messages = [{ ...messages[0], key: { broken: `${text}${marker}` } }];
            return `${JSON.stringify(head)}\n${tail}`;
          }),
          // The bodies after the head cut short or overlong, with the marker in them.
          fc.boolean().map((short) => {
            const body = workItemBody(item);
            return short ? `${body.slice(0, -1)}` : `${body}${marker}`;
          }),
        ),
        async (body) => {
          const { handler, log } = loop();
          const outcome = await handler(
            { Records: [record(body, 1, 'm-poison'), record(workItemBody(item), 1, 'm-ok')] },
            context(),
          );
          expect(outcome.batchItemFailures).toEqual([{ itemIdentifier: 'm-poison' }]);
          const text = log.lines.join('\n');
          expect(text).toContain('PoisonWorkItemError');
          expect(text).not.toContain('MARKER');
        },
      ),
      { numRuns: 150 },
    );
  });
});
