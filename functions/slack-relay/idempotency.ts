/**
 * "Post each delivery to Slack once", kept in the state table with Powertools idempotency: the
 * first invocation for a delivery id writes an in-progress record (conditional put), posts, and
 * stores the result; a repeat finds the completed record and gets that result without posting.
 * A failed post deletes the record, so Lambda's retry posts again. If the function dies mid-post,
 * the in-progress record expires with the invocation's remaining time and a retry takes over.
 *
 * Items: pk `slack#posted`, sk the idempotency key (function name and a hash of the delivery id),
 * TTL attribute `expiresAt` (epoch seconds, the table's TTL attribute), so DynamoDB removes them.
 * The relay's IAM policy is limited to that partition key.
 */

import { IdempotencyConfig, makeIdempotent } from '@aws-lambda-powertools/idempotency';
import { DynamoDBPersistenceLayer } from '@aws-lambda-powertools/idempotency/dynamodb';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { Context } from 'aws-lambda';
import { slackPostedPartition } from '#aws/table-layout';
import type { OncePerDelivery, RelayResult } from './relay.ts';

export interface PostedAlertsOptions {
  readonly client: DynamoDBClient;
  readonly tableName: string;
  /** How long a post is remembered. */
  readonly rememberSeconds: number;
}

/** {@link OncePerDelivery} on DynamoDB, plus the hook that ties in-progress records to the invocation. */
export interface PostedAlerts {
  readonly oncePerDelivery: OncePerDelivery;
  /** Call at the start of every invocation: an in-progress record lasts as long as the invocation can. */
  registerInvocation(context: Context): void;
}

export function postedAlerts(options: PostedAlertsOptions): PostedAlerts {
  const config = new IdempotencyConfig({
    expiresAfterSeconds: options.rememberSeconds,
    eventKeyJmesPath: 'deliveryId',
  });
  const persistenceStore = new DynamoDBPersistenceLayer({
    tableName: options.tableName,
    awsSdkV3Client: options.client,
    keyAttr: 'pk',
    sortKeyAttr: 'sk',
    staticPkValue: slackPostedPartition,
    expiryAttr: 'expiresAt',
  });
  // Only the first argument (the delivery id) is the idempotency payload; the second is the work.
  const once = makeIdempotent(
    async (_key: { deliveryId: string }, post: () => Promise<RelayResult>): Promise<RelayResult> => await post(),
    { persistenceStore, config, dataIndexArgument: 0 },
  );
  return {
    oncePerDelivery: (deliveryId, post) => once({ deliveryId }, post),
    registerInvocation: (context) => config.registerLambdaContext(context),
  };
}
