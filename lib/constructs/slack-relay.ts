import { ArnFormat, Duration, type RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as iam from 'aws-cdk-lib/aws-iam';
import { SqsDestination } from 'aws-cdk-lib/aws-lambda-destinations';
import type * as logs from 'aws-cdk-lib/aws-logs';
import type * as sns from 'aws-cdk-lib/aws-sns';
import * as subscriptions from 'aws-cdk-lib/aws-sns-subscriptions';
import { Construct } from 'constructs';
import { slackPostedPartition } from '#aws/table-layout';
import { webhookStorePrefixFor } from '#shared/slack-webhook-store';
import { DeadLetterQueue } from './dead-letter-queue.ts';
import { NewsAlertsFunction } from './news-alerts-function.ts';
import { grantDecryptViaSecretsManager, importSecret } from './secrets.ts';

/** Props of {@link SlackRelay}. */
export interface SlackRelayProps {
  readonly resourcePrefix: string;
  /** `<prefix>-audience-`, and the ARN pattern of all audience topics (for topics the CLI subscribes later). */
  readonly topicNamePrefix: string;
  readonly topicArnPattern: string;
  /** Reserved concurrency (0: unreserved): a few posts at a time keep a burst of alerts under Slack's rate limit. */
  readonly reservedConcurrency: number;
  readonly logRetention: logs.RetentionDays;
  readonly removalPolicy: RemovalPolicy;
}

/**
 * SNS → Lambda → Slack incoming webhook (Slack cannot confirm an SNS HTTPS subscription itself).
 * Webhook URLs live in the webhook store (functions/shared/slack-webhook-store.ts): at most four
 * secrets `<prefix>/slack-webhooks/<shard>`, each a map of audience id → URL, written by the CLI
 * (never by the template, so no URL is in it), or in an existing secret of the audience's own
 * given by ARN. The stack creates no secret per audience: what Slack costs does not grow with
 * the audiences (docs/configuration.md, "Where Slack webhooks are kept").
 * Undeliverable alerts land in one dead-letter queue, whether SNS could not invoke the function
 * (subscription redrive policy) or the function failed after Lambda's retries (on-failure
 * destination).
 */
export class SlackRelay extends Construct {
  readonly function: NewsAlertsFunction;
  readonly deadLetterQueue: DeadLetterQueue;
  /** `<prefix>/slack-webhooks/`: the name prefix of the webhook store's shards. */
  readonly storePrefix: string;
  /**
   * `<prefix>/slack/`: where earlier releases kept one secret per audience; `news-alerts
   * subscriptions migrate-webhooks` moves them into the store. Nothing reads them any more.
   */
  readonly legacySecretPrefix: string;
  readonly #explicitSecrets: Record<string, string> = {};

  constructor(scope: Construct, id: string, props: SlackRelayProps) {
    super(scope, id);
    this.legacySecretPrefix = `${props.resourcePrefix}/slack/`;
    this.storePrefix = webhookStorePrefixFor(this.legacySecretPrefix);
    this.deadLetterQueue = new DeadLetterQueue(this, 'DeadLetters', {
      purpose: 'alerts the Slack relay could not post, from the subscription redrive policy and the function',
      removalPolicy: props.removalPolicy,
    });
    this.function = new NewsAlertsFunction(this, 'Function', {
      entry: 'functions/slack-relay/handler.ts',
      description: 'news-alerts: posts audience alerts to Slack incoming webhooks',
      memorySize: 256,
      timeout: Duration.seconds(30),
      logRetention: props.logRetention,
      removalPolicy: props.removalPolicy,
      reservedConcurrentExecutions: props.reservedConcurrency > 0 ? props.reservedConcurrency : undefined,
      retryAttempts: 2,
      maxEventAge: Duration.hours(6),
      onFailure: new SqsDestination(this.deadLetterQueue.queue),
      environment: {
        AUDIENCE_TOPIC_PREFIX: props.topicNamePrefix,
        SLACK_WEBHOOK_STORE_PREFIX: this.storePrefix,
        SLACK_WEBHOOK_SECRETS: '{}',
      },
    });
    Validations.of(this.function).acknowledge({
      id: 'Serverless-LambdaDLQ',
      reason:
        'Failed async invocations go to the on-failure destination (the relay dead-letter queue, with a depth alarm), which records the error with the SNS record; a dead-letter queue would duplicate it with less context.',
    });

    // The store's shards only (`<prefix>/slack-webhooks/0` … `3`, created by the CLI).
    const storeSecrets = Stack.of(this).formatArn({
      service: 'secretsmanager',
      resource: 'secret',
      resourceName: `${this.storePrefix}*`,
      arnFormat: ArnFormat.COLON_RESOURCE_NAME,
    });
    this.function.addToRolePolicy(
      new iam.PolicyStatement({
        actions: ['secretsmanager:GetSecretValue', 'secretsmanager:DescribeSecret'],
        resources: [storeSecrets],
      }),
    );
    // Audience topics subscribed later by the CLI may invoke the relay, and park in its queue, too.
    this.deadLetterQueue.allowSnsFrom(props.topicArnPattern);
    this.function.addPermission('InvokeFromAudienceTopics', {
      principal: new iam.ServicePrincipal('sns.amazonaws.com'),
      sourceArn: props.topicArnPattern,
      sourceAccount: Stack.of(this).account,
    });
    Validations.of(this.function.role ?? this.function).acknowledge({
      id: `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:secretsmanager:<AWS::Region>:<AWS::AccountId>:secret:${this.storePrefix}*]`,
      reason: `The webhook store is the secrets ${this.storePrefix}0 to ${this.storePrefix}3, created by the CLI after the deploy (Secrets Manager appends a random suffix to each ARN); the wildcard covers that name prefix only.`,
    });
  }

  /**
   * Lets the relay remember which deliveries it posted in `table` (the state table), so a repeated
   * delivery is not posted twice: sets POSTED_ALERTS_TABLE and grants item access limited to the
   * relay's own partition key.
   */
  rememberPostsIn(table: dynamodb.ITable): void {
    this.function.addEnvironment('POSTED_ALERTS_TABLE', table.tableName);
    this.function.addToRolePolicy(
      new iam.PolicyStatement({
        actions: ['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem'],
        resources: [table.tableArn],
        conditions: { 'ForAllValues:StringEquals': { 'dynamodb:LeadingKeys': [slackPostedPartition] } },
      }),
    );
    // The actions DynamoDB calls on the caller's behalf for a customer-managed table key, no wildcards.
    table.encryptionKey?.grant(this.function, 'kms:Decrypt', 'kms:Encrypt', 'kms:GenerateDataKey', 'kms:DescribeKey');
  }

  /**
   * Subscribes the relay to an audience topic. Its webhook URL goes into the webhook store (the
   * CLI puts it there: `news-alerts subscriptions add <audienceId> --slack-webhook`), or, with
   * `webhookSecretArn`, stays in that existing secret, which the relay may then read (and decrypt,
   * through Secrets Manager only, when `webhookSecretKmsKeyArn` names its customer-managed key).
   */
  subscribe(
    audienceId: string,
    topic: sns.ITopic,
    { webhookSecretArn, webhookSecretKmsKeyArn }: { webhookSecretArn?: string; webhookSecretKmsKeyArn?: string },
  ): void {
    if (webhookSecretArn !== undefined) {
      importSecret(this, `Webhook-${audienceId}`, webhookSecretArn).grantRead(this.function);
      if (webhookSecretKmsKeyArn !== undefined)
        grantDecryptViaSecretsManager(this, this.function, {
          keyArn: webhookSecretKmsKeyArn,
          secretArn: webhookSecretArn,
        });
      this.#explicitSecrets[audienceId] = webhookSecretArn;
      this.function.addEnvironment('SLACK_WEBHOOK_SECRETS', JSON.stringify(this.#explicitSecrets));
    }
    topic.addSubscription(
      new subscriptions.LambdaSubscription(this.function, { deadLetterQueue: this.deadLetterQueue.queue }),
    );
  }
}
