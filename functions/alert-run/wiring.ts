/**
 * The composition root of the alert run: builds the adapters from validated config and one client
 * per AWS service. The Lambda handler, the local sandbox (`npm start`) and the CLI's `run` all
 * wire the run here, so what is tested locally is what runs in Lambda.
 */

import type { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import type { SNSClient } from '@aws-sdk/client-sns';
import type { SQSClient } from '@aws-sdk/client-sqs';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { DynamoDispatchStore } from '#aws/dynamo-dispatch-store';
import { DynamoRuleSource } from '#aws/dynamo-rule-source';
import { DynamoSpikeStore } from '#aws/dynamo-spike-store';
import { DynamoStateStore } from '#aws/dynamo-state-store';
import { DynamoStoryStore } from '#aws/dynamo-story-index';
import { SecretsManagerApiKey } from '#aws/secret-source';
import { SnsNotifier } from '#aws/sns-notifier';
import { SqsWorkQueue } from '#aws/sqs-work-queue';
import type { AlertRunDependencies } from '#core/alert-run';
import { ConfigError } from '#core/errors';
import type { Log, ShardedPublishing } from '#core/ports';
import { StoryResolver } from '#core/story';
import { NewsLookupClient } from '#provider/news-client';
import { dropSdkLogging } from '#shared/sdk-logging';
import type { AlertRunConfig } from './config.ts';

/** One client per AWS service, created once per execution environment by the caller. */
export interface AlertRunClients {
  readonly documents: DynamoDBDocumentClient;
  readonly sns: SNSClient;
  readonly secrets: SecretsManagerClient;
  /** Required in sharded mode only (the publisher's work queue); single mode never touches SQS. */
  readonly sqs?: SQSClient | undefined;
}

/** The run's adapters with their concrete types (the CLI reads the state store directly). */
export interface AlertRunWiring extends AlertRunDependencies {
  readonly news: NewsLookupClient;
  readonly state: DynamoStateStore;
  readonly rules: DynamoRuleSource;
  readonly notifier: SnsNotifier;
  readonly stories: StoryResolver;
}

export function createAlertRunDependencies(
  config: AlertRunConfig,
  clients: AlertRunClients,
  log: Log,
  options: { now?: () => number } = {},
): AlertRunWiring {
  // Nothing here gives the SDK a logger: its middleware would redact every request for nobody.
  dropSdkLogging(clients.documents, clients.sns, clients.secrets, clients.sqs);
  const secrets = new SecretsManagerApiKey({
    client: clients.secrets,
    secretId: config.secretId,
    maxAgeSeconds: config.secretCacheSeconds,
  });
  return {
    news: new NewsLookupClient({ config: config.provider, secrets, log }),
    rules: new DynamoRuleSource({
      documents: clients.documents,
      rulesTableName: config.tables.rules,
      audiencesTableName: config.tables.audiences,
      log,
    }),
    state: new DynamoStateStore({
      documents: clients.documents,
      tableName: config.tables.state,
      ledgerRetentionDays: config.ledgerRetentionDays,
      log,
      ...(options.now ? { now: options.now } : {}),
    }),
    notifier: new SnsNotifier({ client: clients.sns, concurrency: config.snsConcurrency, log }),
    // The story index lives in the state table (its own partitions): what collapses copies of a
    // story for audiences with `collapse: 'story'`, across runs.
    stories: new StoryResolver(
      new DynamoStoryStore({
        documents: clients.documents,
        tableName: config.tables.state,
        // A re-read finds an article's story for as long as the ledger remembers the article.
        filingRetentionDays: config.ledgerRetentionDays,
        log,
        ...(options.now ? { now: options.now } : {}),
      }),
      { log },
    ),
    // Spike alerts' per-rule records live in the state table too (partition `spike#<ruleId>`).
    spikes: new DynamoSpikeStore({
      documents: clients.documents,
      tableName: config.tables.state,
      log,
      ...(options.now ? { now: options.now } : {}),
    }),
    ...(config.publishMode === 'sharded' ? { sharded: shardedPublishing(config, clients, log, options) } : {}),
    log,
    ...(options.now ? { now: options.now } : {}),
  };
}

/**
 * Sharded mode's work queue and dispatch counts. Both share the state table and the clock with
 * the run, so the dispatch's times and the lease they are checked against agree.
 */
function shardedPublishing(
  config: AlertRunConfig,
  clients: AlertRunClients,
  log: Log,
  options: { now?: () => number },
): ShardedPublishing {
  if (clients.sqs === undefined || config.workQueueUrl === undefined) {
    // A wiring mistake, not an operator's: the handler and the sandbox pass both in sharded mode.
    throw new ConfigError('sharded publishing needs an SQS client and WORK_QUEUE_URL; neither may be left out');
  }
  const dispatches = new DynamoDispatchStore({
    documents: clients.documents,
    tableName: config.tables.state,
    log,
    ...(options.now ? { now: options.now } : {}),
  });
  const queue = new SqsWorkQueue({
    client: clients.sqs,
    queueUrl: config.workQueueUrl,
    dispatches,
    log,
    ...(options.now ? { now: options.now } : {}),
  });
  return { queue, dispatches };
}
