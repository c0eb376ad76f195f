import { Duration, type RemovalPolicy, Validations } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import type * as logs from 'aws-cdk-lib/aws-logs';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { loadPublisherConfig, publisherEnvironment } from '../../functions/publisher/config.ts';
import { type StackConfig, StackConfigError } from '../config.ts';
import type { AudienceTopics } from './audience-topics.ts';
import { NewsAlertsFunction } from './news-alerts-function.ts';
import type { StateTables } from './state-tables.ts';

const knownPublisherVariables = new Set(publisherEnvironment.map((variable) => variable.name));

/** Props of {@link ShardedPublishing}. */
export interface ShardedPublishingProps {
  readonly config: StackConfig;
  readonly logRetention: logs.RetentionDays;
  readonly removalPolicy: RemovalPolicy;
}

/**
 * `publishMode: sharded` (issue 14): the alert run queues work items on an SQS queue instead of
 * publishing, and a publisher function drains it through Lambda's SQS event source, many
 * invocations at once. The guarantees this construct owns:
 *
 * - A work item is retried, never lost: a failed record (partial batch response) comes back after
 *   the visibility timeout, which is six times the publisher's timeout so an invocation still
 *   running never sees its own item delivered again; after {@link ShardedPublishing.maxReceiveCount}
 *   receives it moves to a dead-letter queue with a depth alarm.
 * - The alert run gives up waiting for an earlier run's items only when none of them can still be
 *   published: {@link ShardedPublishing.abandonAfter} is every receive's visibility timeout plus a
 *   margin, so by then each item is done or in the dead-letter queue.
 * - Least privilege: the alert function may only send to this queue; the publisher may read and
 *   write the state table (ledger, dispatch counts, its idempotency records) and publish to the
 *   audience topics, nothing else.
 *
 * Created only in sharded mode, so a `single` deployment's template is exactly what it was before.
 */
export class ShardedPublishing extends Construct {
  /**
   * The publisher's timeout: one batch of at most 99 items (and 6 MB), each a PublishBatch per 10
   * messages; new calls stop 5 s before it, and what is left is retried.
   */
  static readonly publisherTimeout = Duration.seconds(60);
  /** Receives of one work item before SQS moves it to the dead-letter queue (WORK_MAX_RECEIVE_COUNT). */
  static readonly maxReceiveCount = 3;
  /** The event source's MaximumBatchingWindowInSeconds: how long Lambda may wait to fill a batch. */
  static readonly batchingWindow = Duration.seconds(1);
  /** What the alert run waits beyond the last possible receive before it abandons a dispatch. */
  static readonly abandonMargin = Duration.minutes(5);

  /** The work queue the alert run sends to. */
  readonly queue: sqs.Queue;
  /** Work items that failed every receive (poison, or a publisher failing for good). */
  readonly deadLetterQueue: sqs.Queue;
  readonly publisher: NewsAlertsFunction;
  /** The queue's visibility timeout: six times the publisher timeout, as Lambda's SQS guide advises. */
  readonly visibilityTimeout: Duration;
  /** Oldest a work item can be while it is still being retried (visibility timeout × maxReceiveCount). */
  readonly lastReceiveWithin: Duration;
  /** DISPATCH_ABANDON_AFTER_MS of the alert run: {@link lastReceiveWithin} plus the margin. */
  readonly abandonAfter: Duration;
  readonly #environment = new Map<string, string>();

  constructor(scope: Construct, id: string, props: ShardedPublishingProps) {
    super(scope, id);
    const { config } = props;
    this.visibilityTimeout = Duration.seconds(ShardedPublishing.publisherTimeout.toSeconds() * 6);
    this.lastReceiveWithin = Duration.seconds(this.visibilityTimeout.toSeconds() * ShardedPublishing.maxReceiveCount);
    this.abandonAfter = Duration.seconds(
      this.lastReceiveWithin.toSeconds() + ShardedPublishing.abandonMargin.toSeconds(),
    );

    // The settings of every dead-letter queue here (DeadLetterQueue): SQS-managed encryption, TLS
    // only, the longest retention. Not that construct itself: it acknowledges AwsSolutions-SQS3,
    // which cdk-nag does not raise on a queue that is another queue's redrive target, and a stale
    // acknowledgement fails test/infra/nag-and-lint.test.ts.
    this.deadLetterQueue = new sqs.Queue(this, 'WorkDeadLetters', {
      encryption: sqs.QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: Duration.days(14),
      removalPolicy: props.removalPolicy,
    });
    Validations.of(this.deadLetterQueue).acknowledge({
      id: 'Serverless-SQSRedrivePolicy',
      reason: `This queue is itself the dead-letter queue of the work queue (items the publisher failed ${ShardedPublishing.maxReceiveCount} times); a dead-letter queue behind it would only move the same items again. Its depth has an alarm (work-dlq).`,
    });
    // SQS-managed encryption: the alert function and Lambda's poller need no key grants, and the
    // bodies (rendered alerts) are encrypted at rest all the same.
    this.queue = new sqs.Queue(this, 'WorkQueue', {
      encryption: sqs.QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      visibilityTimeout: this.visibilityTimeout,
      // Longer than any wait of the alert run: an item nobody drained is still there to publish.
      retentionPeriod: Duration.days(4),
      deadLetterQueue: { queue: this.deadLetterQueue, maxReceiveCount: ShardedPublishing.maxReceiveCount },
      removalPolicy: props.removalPolicy,
    });

    this.publisher = new NewsAlertsFunction(this, 'Publisher', {
      entry: 'functions/publisher/handler.ts',
      description: 'news-alerts: publishes queued work items to audience topics (sharded publishing)',
      memorySize: config.memorySize,
      timeout: ShardedPublishing.publisherTimeout,
      logRetention: props.logRetention,
      removalPolicy: props.removalPolicy,
    });
    this.#set('LEDGER_RETENTION_DAYS', String(config.ledgerRetentionDays));
    // The publisher parks an item's transient failures instead of throwing on its last receive.
    this.#set('WORK_MAX_RECEIVE_COUNT', String(ShardedPublishing.maxReceiveCount));
    // Tuned for the alert function's publishing; the publisher publishes the same way.
    for (const name of ['SNS_CONCURRENCY', 'LEDGER_FLUSH_DELAY_MS']) {
      const value = config.alertEnvironmentOverrides[name];
      if (value !== undefined) this.#set(name, value);
    }
    const synchronous =
      'The publisher is invoked only by its SQS event source (synchronously): a failed record returns to the work queue and, after its last receive, moves to the work dead-letter queue, which has a depth alarm. An async dead-letter queue or destination would never receive anything.';
    Validations.of(this.publisher).acknowledge({ id: 'Serverless-LambdaDLQ', reason: synchronous });

    this.publisher.addEventSource(
      new SqsEventSource(this.queue, {
        batchSize: config.publisherBatchSize,
        // Lambda waits up to this long to fill a batch: a publisher invocation costs two DynamoDB
        // requests however many items it holds (claim and settlement), so full batches keep
        // sharded publishing near single mode's requests per notification, for at most a second
        // of delay.
        maxBatchingWindow: ShardedPublishing.batchingWindow,
        maxConcurrency: config.publisherConcurrency,
        // Only the failed items of a batch come back (partial batch responses).
        reportBatchItemFailures: true,
      }),
    );
    for (const mapping of this.publisher.node.children.filter((child) => child instanceof lambda.EventSourceMapping)) {
      Validations.of(mapping).acknowledge({
        id: 'Serverless-LambdaEventSourceMappingDestination',
        reason:
          'An SQS event source mapping takes no on-failure destination (Lambda supports them for stream and Kafka sources only); a record that keeps failing moves to the work dead-letter queue through the queue’s redrive policy, which has a depth alarm.',
      });
    }
  }

  /**
   * The publisher's state: delivery ledger (read and written), dispatch completion counts (a
   * transaction with a condition) and the claims of work items, all in the state table.
   * Sets STATE_TABLE_NAME and grants exactly the item actions those adapters use.
   */
  useStateTable(tables: StateTables): void {
    const state = tables.state;
    this.#set('STATE_TABLE_NAME', state.tableName);
    state.grant(
      this.publisher,
      'dynamodb:GetItem',
      'dynamodb:BatchGetItem',
      'dynamodb:Query',
      'dynamodb:PutItem',
      'dynamodb:UpdateItem',
      'dynamodb:DeleteItem',
      'dynamodb:BatchWriteItem',
      'dynamodb:ConditionCheckItem',
    );
    tables.encryptionKey?.grant(this.publisher, 'kms:Decrypt', 'kms:Encrypt', 'kms:GenerateDataKey', 'kms:DescribeKey');
  }

  /** Publishing to every audience topic of the deployment, as the alert function does in single mode. */
  publishToAudienceTopics(topics: AudienceTopics): void {
    topics.grantPublish(this.publisher);
  }

  /**
   * Checks the publisher's environment with its own cold-start validation
   * (functions/publisher/config.ts), so a value it would refuse fails the synth, not the first batch.
   */
  validateEnvironment(): void {
    try {
      loadPublisherConfig(Object.fromEntries(this.#environment));
    } catch (error) {
      throw new StackConfigError(
        `the publisher function would refuse its configuration: ${error instanceof Error ? error.message : String(error)}`,
        { cause: error },
      );
    }
  }

  /**
   * Switches the alert function to sharded mode: sets PUBLISH_MODE, WORK_QUEUE_URL and
   * DISPATCH_ABANDON_AFTER_MS, and lets it send to the work queue and nothing more (SendMessage
   * also authorizes SendMessageBatch; no receive, delete or purge).
   */
  feedFrom(alertFunction: lambda.Function): void {
    alertFunction.addEnvironment('PUBLISH_MODE', 'sharded');
    alertFunction.addEnvironment('WORK_QUEUE_URL', this.queue.queueUrl);
    alertFunction.addEnvironment('DISPATCH_ABANDON_AFTER_MS', String(this.abandonAfter.toMilliseconds()));
    alertFunction.addToRolePolicy(
      new iam.PolicyStatement({ actions: ['sqs:SendMessage'], resources: [this.queue.queueArn] }),
    );
  }

  #set(name: string, value: string): void {
    if (!knownPublisherVariables.has(name)) {
      throw new StackConfigError(`${name} is not a variable the publisher reads (functions/publisher/config.ts)`);
    }
    this.#environment.set(name, value);
    this.publisher.addEnvironment(name, value);
  }
}
