import { ArnFormat, Duration, type RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as iam from 'aws-cdk-lib/aws-iam';
import { SqsDestination } from 'aws-cdk-lib/aws-lambda-destinations';
import type * as logs from 'aws-cdk-lib/aws-logs';
import type * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import type * as sns from 'aws-cdk-lib/aws-sns';
import * as subscriptions from 'aws-cdk-lib/aws-sns-subscriptions';
import { Construct } from 'constructs';
import { slackPostedPartition } from '#aws/table-layout';
import { DeadLetterQueue } from './dead-letter-queue.ts';
import { NewsAlertsFunction } from './news-alerts-function.ts';
import { EmptySecret, importSecret } from './secrets.ts';

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
 * Each audience's webhook URL is a secret: `<prefix>/slack/<audienceId>` by convention (created
 * empty here, or by ops for audiences the CLI adds), or an existing secret given by ARN.
 * Undeliverable alerts land in one dead-letter queue, whether SNS could not invoke the function
 * (subscription redrive policy) or the function failed after Lambda's retries (on-failure
 * destination).
 */
export class SlackRelay extends Construct {
  readonly function: NewsAlertsFunction;
  readonly deadLetterQueue: DeadLetterQueue;
  /** `<prefix>/slack/`: the name prefix of conventionally named webhook secrets. */
  readonly secretNamePrefix: string;
  readonly #props: SlackRelayProps;
  readonly #explicitSecrets: Record<string, string> = {};

  constructor(scope: Construct, id: string, props: SlackRelayProps) {
    super(scope, id);
    this.#props = props;
    this.secretNamePrefix = `${props.resourcePrefix}/slack/`;
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
        SLACK_SECRET_NAME_PREFIX: this.secretNamePrefix,
        SLACK_WEBHOOK_SECRETS: '{}',
      },
    });
    Validations.of(this.function).acknowledge({
      id: 'Serverless-LambdaDLQ',
      reason:
        'Failed async invocations go to the on-failure destination (the relay dead-letter queue, with a depth alarm), which records the error with the SNS record; a dead-letter queue would duplicate it with less context.',
    });

    // Conventionally named secrets, including those ops create later for CLI-made audiences.
    const conventionalSecrets = Stack.of(this).formatArn({
      service: 'secretsmanager',
      resource: 'secret',
      resourceName: `${this.secretNamePrefix}*`,
      arnFormat: ArnFormat.COLON_RESOURCE_NAME,
    });
    this.function.addToRolePolicy(
      new iam.PolicyStatement({
        actions: ['secretsmanager:GetSecretValue', 'secretsmanager:DescribeSecret'],
        resources: [conventionalSecrets],
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
      id: `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:secretsmanager:<AWS::Region>:<AWS::AccountId>:secret:${this.secretNamePrefix}*]`,
      reason: `Webhook secrets are named ${this.secretNamePrefix}<audienceId>, also for audiences the CLI adds after the deploy; the wildcard covers that name prefix only.`,
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
   * Subscribes the relay to an audience topic and sets up where its webhook URL lives: an existing
   * secret given by ARN, or a new empty one named `<prefix>/slack/<audienceId>`.
   */
  subscribe(audienceId: string, topic: sns.ITopic, webhookSecretArn: string | undefined): secretsmanager.ISecret {
    let secret: secretsmanager.ISecret;
    if (webhookSecretArn === undefined) {
      secret = new EmptySecret(this, `Webhook-${audienceId}`, {
        description: `news-alerts: Slack incoming-webhook URL of audience ${audienceId}. Put the URL as the secret string.`,
        secretName: `${this.secretNamePrefix}${audienceId}`,
        removalPolicy: this.#props.removalPolicy,
        rotationNote:
          'Slack issues incoming-webhook URLs; no rotation function can obtain one. Ops replace it with put-secret-value; the relay re-reads the secret when Slack refuses the cached URL.',
      }).secret;
    } else {
      secret = importSecret(this, `Webhook-${audienceId}`, webhookSecretArn);
      secret.grantRead(this.function);
      this.#explicitSecrets[audienceId] = webhookSecretArn;
      this.function.addEnvironment('SLACK_WEBHOOK_SECRETS', JSON.stringify(this.#explicitSecrets));
    }
    topic.addSubscription(
      new subscriptions.LambdaSubscription(this.function, { deadLetterQueue: this.deadLetterQueue.queue }),
    );
    return secret;
  }
}
