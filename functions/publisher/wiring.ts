/**
 * The composition root of the publisher function: the same state store and notifier as the alert
 * run (so a work item is published, recorded and parked exactly as the run would do it), and the
 * dispatch store it claims work items in and marks them done in. The Lambda handler, the
 * local sandbox and the bench wire the publisher here.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { SNSClient } from '@aws-sdk/client-sns';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { DynamoDispatchStore } from '#aws/dynamo-dispatch-store';
import { DynamoStateStore } from '#aws/dynamo-state-store';
import { SnsNotifier } from '#aws/sns-notifier';
import type { Log } from '#core/ports';
import { dropSdkLogging } from '#shared/sdk-logging';
import type { PublisherConfig } from './config.ts';
import type { WorkItemHandlerDeps } from './process.ts';

/** One client per AWS service, created once per execution environment by the caller. */
export interface PublisherClients {
  /** The document client of the state store and dispatch store. */
  readonly documents: DynamoDBDocumentClient;
  /** The plain client `documents` wraps (its SDK logging is dropped too). */
  readonly dynamo: DynamoDBClient;
  readonly sns: SNSClient;
}

/** The publisher's adapters with their concrete types (the sandbox reads the stores directly). */
export interface PublisherWiring extends WorkItemHandlerDeps {
  readonly state: DynamoStateStore;
  readonly notifier: SnsNotifier;
  readonly dispatches: DynamoDispatchStore;
}

export function createPublisherDependencies(
  config: PublisherConfig,
  clients: PublisherClients,
  log: Log,
  options: { now?: () => number } = {},
): PublisherWiring {
  // Nothing here gives the SDK a logger: its middleware would redact every request for nobody.
  dropSdkLogging(clients.dynamo, clients.documents, clients.sns);
  const now = options.now ?? Date.now;
  return {
    state: new DynamoStateStore({
      documents: clients.documents,
      tableName: config.stateTableName,
      ledgerRetentionDays: config.ledgerRetentionDays,
      log,
      now,
    }),
    notifier: new SnsNotifier({ client: clients.sns, concurrency: config.snsConcurrency, log }),
    dispatches: new DynamoDispatchStore({ documents: clients.documents, tableName: config.stateTableName, log, now }),
    maxReceiveCount: config.maxReceiveCount,
    ledgerFlushDelayMs: config.ledgerFlushDelayMs,
    log,
    now,
  };
}
