/**
 * The reading state item of the state table (`pk = "reading"`, `sk = "current"`): what the runs
 * learned about reading the provider (its order, the last full sweep, where oldest-first reads
 * ended), see functions/core/reading.ts.
 *
 * It is an optimisation, never a source of truth: an item that is missing, damaged or edited by
 * hand reads as "none", and the next run then reads every page of its window (a full sweep) and
 * writes a good one. So this adapter never throws on reading it, and it writes it only while the
 * run still holds the lease, so a run that lost the lease cannot overwrite its successor's state.
 */

import { TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { type DynamoDBDocumentClient, GetCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import * as z from 'zod/mini';
import { LeaseLostError } from '#core/errors';
import {
  type Lease,
  type Log,
  maxAnchorKeyLength,
  maxDayAnchors,
  maxResumeKeys,
  maxResumeValueLength,
  type ReadingState,
} from '#core/ports';

/** Where the item lives. */
export const readingStateKey = { pk: 'reading', sk: 'current' } as const;

const finite = z.number().check(z.refine(Number.isFinite, 'must be a finite number'));
const Position = z.union([
  z.strictObject({ page: z.number().check(z.int(), z.positive()) }),
  z.strictObject({ cursor: z.string().check(z.minLength(1), z.maxLength(maxResumeValueLength)) }),
]);
const count = z.number().check(z.int(), z.nonnegative());
const providerDay = z.string().check(z.regex(/^\d{4}-\d{2}-\d{2}$/));
const CountedDayItem = z
  .object({
    day: providerDay,
    anchors: z
      .array(
        z.object({
          key: z.string().check(z.minLength(1), z.maxLength(maxAnchorKeyLength)),
          at: finite,
          older: count,
          cleanAt: finite,
        }),
      )
      .check(z.maxLength(maxDayAnchors)),
    bottomCleanAt: z.optional(finite),
    beyond: z.optional(count),
  })
  .check(
    z.refine(
      (day) => day.anchors.every((anchor, i) => i === 0 || anchor.older < (day.anchors[i - 1]?.older ?? 0)),
      'anchors must list fewer articles after each one, newest first',
    ),
  );
const ReadingItem = z.object({
  counted: z.optional(
    z.object({
      days: z.array(CountedDayItem).check(z.maxLength(8)),
      lastRecheckAt: z.optional(finite),
      off: z.optional(z.object({ reason: z.string().check(z.maxLength(2000)), since: finite })),
      disagreedAt: z.optional(finite),
    }),
  ),
  order: z.enum(['newest-first', 'oldest-first', 'unknown']),
  lastSweepAt: z.optional(finite),
  runId: z.string(),
  runStatus: z.enum(['completed', 'checkpointed', 'skipped', 'incomplete', 'failed']),
  watermarkVersion: z.optional(z.number().check(z.int())),
  resume: z.array(
    z.object({
      day: providerDay,
      position: Position,
      keys: z.array(z.string().check(z.maxLength(maxResumeValueLength))).check(z.maxLength(maxResumeKeys)),
    }),
  ),
  updatedAt: finite,
});

/**
 * Reads the reading state; undefined when there is none or it is damaged (logged with the reason,
 * since a damaged item costs every run a full sweep until a run replaces it).
 */
export async function readReadingState(
  documents: DynamoDBDocumentClient,
  table: string,
  log: Log,
): Promise<ReadingState | undefined> {
  const { Item } = await documents.send(
    new GetCommand({ TableName: table, Key: readingStateKey, ConsistentRead: true }),
  );
  if (Item === undefined) return undefined;
  const parsed = ReadingItem.safeParse(Item);
  if (!parsed.success) {
    log.warn('the reading state item is malformed; this run reads every page (a full sweep) and replaces it', {
      table,
      key: readingStateKey,
      reason: z.prettifyError(parsed.error),
    });
    return undefined;
  }
  return parsed.data;
}

/** Stores the reading state in one transaction with a check that `lease` is still held. */
export async function writeReadingState(
  documents: DynamoDBDocumentClient,
  table: string,
  leaseKey: Record<string, string>,
  lease: Lease,
  state: ReadingState,
  now: number,
): Promise<void> {
  try {
    await documents.send(
      new TransactWriteCommand({
        TransactItems: [
          {
            ConditionCheck: {
              TableName: table,
              Key: leaseKey,
              ConditionExpression: '#owner = :owner AND #leaseExpiresAt > :now',
              ExpressionAttributeNames: { '#owner': 'owner', '#leaseExpiresAt': 'leaseExpiresAt' },
              ExpressionAttributeValues: { ':owner': lease.owner, ':now': now },
            },
          },
          // A JSON round trip drops undefined fields, which the document client refuses to marshal.
          { Put: { TableName: table, Item: { ...readingStateKey, ...JSON.parse(JSON.stringify(state)) } } },
        ],
      }),
    );
  } catch (error) {
    const [leaseReason] = error instanceof TransactionCanceledException ? (error.CancellationReasons ?? []) : [];
    if (leaseReason?.Code === 'ConditionalCheckFailed') {
      throw new LeaseLostError(
        `run ${lease.owner} no longer holds the run lease, so it did not store its reading state (the run holding it now writes its own)`,
        { cause: error },
      );
    }
    throw error;
  }
}
