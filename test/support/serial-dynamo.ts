/**
 * One DynamoDB request at a time against moto, for tests that race writes on one item.
 *
 * Why: moto server (5.2.5) handles requests on threads without locking its DynamoDB backend. An
 * UpdateItem's ADD is a read-modify-write in Python, so two concurrent ADDs to one item can lose
 * one; and a cancelled TransactWriteItems restores a deep copy of the whole table taken when it
 * started, erasing every write other requests made meanwhile. Real DynamoDB serializes writes to
 * an item, so a test that checks the store's conditions and counters under concurrent callers
 * serializes requests at the wire: the callers still interleave, and each request sees the state
 * the ones before it left, as on DynamoDB.
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import pLimit, { type LimitFunction } from 'p-limit';

/** A lock several clients can share (two publisher instances on one table). */
export const dynamoLock = (): LimitFunction => pLimit(1);

/** Sends each request of `documents` (retries included) only while holding `lock`. */
export function serializeRequests(
  documents: DynamoDBDocumentClient,
  lock: LimitFunction = dynamoLock(),
): LimitFunction {
  documents.middlewareStack.add((next) => (args) => lock(() => next(args)), {
    step: 'initialize',
    name: 'serializeRequests',
  });
  return lock;
}
