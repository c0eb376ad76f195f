import { Duration, type RemovalPolicy, Validations } from 'aws-cdk-lib';
import { SqsDestination } from 'aws-cdk-lib/aws-lambda-destinations';
import type * as logs from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { alertRunEnvironment, loadAlertRunConfig } from '#alert-run/config';
import { type StackConfig, StackConfigError } from '../config.ts';
import type { AudienceTopics } from './audience-topics.ts';
import { DeadLetterQueue } from './dead-letter-queue.ts';
import { NewsAlertsFunction } from './news-alerts-function.ts';
import type { ApiKeySecret } from './secrets.ts';
import type { StateTables } from './state-tables.ts';

const knownVariables = new Set(alertRunEnvironment.map((variable) => variable.name));

/** Props of {@link AlertFunction}. */
export interface AlertFunctionProps {
  readonly config: StackConfig;
  readonly logRetention: logs.RetentionDays;
  readonly removalPolicy: RemovalPolicy;
}

/**
 * The scheduled alert run (functions/alert-run/handler.ts). Reserved concurrency 1 so two runs
 * never overlap (the lease in the state table is the second line of defence). An async event that
 * waited longer than one schedule interval is dropped to the failure queue rather than run late:
 * the next scheduled run picks the work up from the watermark anyway.
 *
 * Access is added by the `use…`/`publish…` methods, each of which sets the environment variable
 * it concerns and grants exactly the access that variable implies.
 */
export class AlertFunction extends Construct {
  readonly function: NewsAlertsFunction;
  /** Async invocations that failed after Lambda's retries (or expired while queued). */
  readonly failureQueue: DeadLetterQueue;
  readonly #environment = new Map<string, string>();

  constructor(scope: Construct, id: string, props: AlertFunctionProps) {
    super(scope, id);
    const { config } = props;
    this.failureQueue = new DeadLetterQueue(this, 'AsyncFailures', {
      purpose: 'on-failure destination of the alert function',
      removalPolicy: props.removalPolicy,
    });
    this.function = new NewsAlertsFunction(this, 'Function', {
      entry: 'functions/alert-run/handler.ts',
      description: 'news-alerts: scheduled alert run (fetch, match, publish, advance the watermark)',
      memorySize: config.memorySize,
      timeout: Duration.seconds(config.timeoutSeconds),
      logRetention: props.logRetention,
      removalPolicy: props.removalPolicy,
      reservedConcurrentExecutions: 1,
      retryAttempts: 1,
      maxEventAge: Duration.seconds(Math.min(Math.max(config.intervalMinutes * 60, 60), 6 * 3600)),
      onFailure: new SqsDestination(this.failureQueue.queue),
    });
    Validations.of(this.function).acknowledge({
      id: 'Serverless-LambdaDLQ',
      reason:
        'Failed async invocations go to the on-failure destination (an SQS queue with a depth alarm), which records the error and the request; a dead-letter queue would duplicate it with less context.',
    });

    const pagination = config.newsApiPagination;
    this.#set('NEWS_API_BASE_URL', config.newsApiBaseUrl);
    if (config.allowInternalTargets) this.#set('NEWS_API_ALLOW_INTERNAL_TARGET', 'true');
    this.#set('NEWS_API_PAGE_SIZE', String(config.newsApiPageSize));
    if (config.newsApiTimeZone !== null) this.#set('NEWS_API_TIME_ZONE', config.newsApiTimeZone);
    this.#set('NEWS_API_PAGINATION', pagination.method);
    if (pagination.method === 'CURSOR') {
      this.#set('NEWS_API_CURSOR_METHOD_VALUE', pagination.methodValue);
      this.#set('NEWS_API_CURSOR_FIELD', pagination.cursorField);
    }
    if (Object.keys(config.newsApiResponseMapping).length > 0) {
      this.#set('NEWS_API_RESPONSE_MAPPING', JSON.stringify(config.newsApiResponseMapping));
    }
    this.#set('LATE_ARRIVAL_MINUTES', String(config.lateArrivalMinutes));
    this.#set('FULL_SWEEP_MINUTES', String(config.fullSweepMinutes));
    this.#set('INCREMENTAL_OVERLAP_MINUTES', String(config.incrementalOverlapMinutes));
    this.#set('LATE_RECHECK_MINUTES', String(config.recheckMinutes));
    this.#set('LEDGER_RETENTION_DAYS', String(config.ledgerRetentionDays));
    // Longer than the timeout: a run killed by the timeout leaves a lease that expires by itself.
    this.#set('LEASE_SECONDS', String(config.leaseSeconds));
    this.#set('DEFAULT_LOCALE', config.defaultLocale);
    for (const [name, value] of Object.entries(config.alertEnvironmentOverrides)) this.#set(name, value);
  }

  /**
   * Rules and audiences are read; the state table is read and written (including the condition
   * checks of the watermark transaction). Exactly the item actions the adapters use, no stream
   * or table-management actions.
   */
  useTables(tables: StateTables): void {
    const read = ['dynamodb:Query', 'dynamodb:GetItem', 'dynamodb:BatchGetItem'];
    const write = ['dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem', 'dynamodb:BatchWriteItem'];
    // Rules and audiences are read whole (a Scan); the state table is only ever read by key.
    this.#set('RULES_TABLE_NAME', tables.rules.tableName);
    tables.rules.grant(this.function, 'dynamodb:Scan', ...read);
    this.#set('AUDIENCES_TABLE_NAME', tables.audiences.tableName);
    tables.audiences.grant(this.function, 'dynamodb:Scan', ...read);
    this.#set('STATE_TABLE_NAME', tables.state.tableName);
    tables.state.grant(this.function, ...read, ...write, 'dynamodb:ConditionCheckItem');
    // Customer-managed table key: what DynamoDB uses on the caller's behalf, without wildcard actions.
    tables.encryptionKey?.grant(this.function, 'kms:Decrypt', 'kms:Encrypt', 'kms:GenerateDataKey', 'kms:DescribeKey');
  }

  /** The provider API key: GetSecretValue on that one secret. */
  useApiKeySecret(apiKey: ApiKeySecret): void {
    this.#set('NEWS_API_KEY_SECRET_ID', apiKey.secret.secretArn);
    apiKey.grantRead(this.function);
  }

  /**
   * Publishing to audience topics. The topic ARN comes from each audience item, not from the
   * environment, so the grant covers the name prefix: audiences the CLI adds are publishable too.
   */
  publishToAudienceTopics(topics: AudienceTopics): void {
    topics.grantPublish(this.function);
  }

  /**
   * Checks the environment the stack set with the function's own validation (the one that runs at
   * cold start), so a value the function would refuse fails the synth instead of the first run.
   */
  validateEnvironment(): void {
    try {
      loadAlertRunConfig(Object.fromEntries(this.#environment));
    } catch (error) {
      throw new StackConfigError(
        `the alert function would refuse its configuration: ${error instanceof Error ? error.message : String(error)}`,
        { cause: error },
      );
    }
  }

  #set(name: string, value: string): void {
    if (!knownVariables.has(name)) {
      throw new StackConfigError(`${name} is not a variable the alert function reads (functions/alert-run/config.ts)`);
    }
    this.#environment.set(name, value);
    this.function.addEnvironment(name, value);
  }
}
