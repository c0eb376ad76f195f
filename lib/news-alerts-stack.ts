import { Annotations, CfnOutput, CfnResource, RemovalPolicy, Stack, type StackProps, Tags } from 'aws-cdk-lib';
import type * as logs from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';
import { type StackConfig, StackConfigError } from './config.ts';
import { AlertFunction } from './constructs/alert-function.ts';
import { AlertSchedule } from './constructs/alert-schedule.ts';
import { AudienceTopics } from './constructs/audience-topics.ts';
import { DeadLetterQueue } from './constructs/dead-letter-queue.ts';
import { EmailChannel } from './constructs/email-channel.ts';
import { Monitoring } from './constructs/monitoring.ts';
import { nameService } from './constructs/news-alerts-function.ts';
import { ApiKeySecret } from './constructs/secrets.ts';
import { ShardedPublishing } from './constructs/sharded-publishing.ts';
import { SlackRelay } from './constructs/slack-relay.ts';
import { StateTables } from './constructs/state-tables.ts';

/** Props of {@link NewsAlertsStack}. */
export interface NewsAlertsStackProps extends StackProps {
  /** Validated configuration (lib/config.ts). */
  readonly config: StackConfig;
}

/**
 * The whole deployment: tables, API key secret, audience topics, the scheduled alert function,
 * the Slack relay, monitoring and, with `publishMode: sharded`, the work queue and publisher. Outputs name everything the CLI needs, so it never guesses.
 */
export class NewsAlertsStack extends Stack {
  constructor(scope: Construct, id: string, props: NewsAlertsStackProps) {
    super(scope, id, {
      description: 'news-alerts: scheduled news alerts to email, SMS, Slack and webhooks through SNS',
      ...props,
    });
    const { config } = props;
    nameService(this, config.resourcePrefix);
    Tags.of(this).add('project', 'news-alerts');
    Tags.of(this).add('news-alerts:prefix', config.resourcePrefix);
    const removalPolicy = config.removalPolicy === 'destroy' ? RemovalPolicy.DESTROY : RemovalPolicy.RETAIN;
    const logRetention = config.logRetentionDays as logs.RetentionDays;

    const tables = new StateTables(this, 'Tables', { encryption: config.tableEncryption, removalPolicy });
    const apiKey = new ApiKeySecret(this, 'ApiKeySecret', {
      existingSecretArn: config.apiKeySecretArn ?? undefined,
      existingSecretKmsKeyArn: config.apiKeySecretKmsKeyArn ?? undefined,
      removalPolicy,
    });
    const deliveryDeadLetters = new DeadLetterQueue(this, 'DeliveryDeadLetters', {
      purpose: 'notifications SNS could not deliver to an email, SMS or HTTPS subscriber',
      removalPolicy,
    });
    const topics = new AudienceTopics(this, 'AudienceTopics', {
      resourcePrefix: config.resourcePrefix,
      audiences: config.audiences,
      deliveryDeadLetterQueue: deliveryDeadLetters.queue,
      removalPolicy,
    });

    deliveryDeadLetters.allowSnsFrom(topics.topicArnPattern);

    const alertRun = new AlertFunction(this, 'AlertRun', { config, logRetention, removalPolicy });
    alertRun.useTables(tables);
    alertRun.useApiKeySecret(apiKey);
    alertRun.publishToAudienceTopics(topics);
    alertRun.validateEnvironment();

    // publishMode sharded: the run queues work items, the publisher publishes them. In single mode
    // nothing of it exists, so the template is exactly what it was before sharded publishing.
    let sharded: ShardedPublishing | undefined;
    if (config.publishMode === 'sharded') {
      sharded = new ShardedPublishing(this, 'ShardedPublishing', { config, logRetention, removalPolicy });
      sharded.useStateTable(tables);
      sharded.publishToAudienceTopics(topics);
      sharded.validateEnvironment();
      sharded.feedFrom(alertRun.function);
    }

    const schedule = new AlertSchedule(this, 'Schedule', {
      target: alertRun.function,
      expression: config.scheduleExpression,
      timeZone: config.scheduleTimeZone,
      intervalMinutes: config.intervalMinutes,
      flexibleWindowMinutes: config.flexibleWindowMinutes,
      retryAttempts: config.schedulerRetryAttempts,
      removalPolicy,
    });

    const relay = new SlackRelay(this, 'SlackRelay', {
      resourcePrefix: config.resourcePrefix,
      topicNamePrefix: topics.topicNamePrefix,
      topicArnPattern: topics.topicArnPattern,
      reservedConcurrency: config.slackRelayConcurrency,
      logRetention,
      removalPolicy,
    });
    relay.rememberPostsIn(tables.state);
    for (const audience of config.audiences) {
      const topic = topics.topics.get(audience.audienceId);
      if (audience.slack !== undefined && topic !== undefined) {
        relay.subscribe(audience.audienceId, topic, audience.slack);
      }
    }

    const monitoring = new Monitoring(this, 'Monitoring', {
      resourcePrefix: config.resourcePrefix,
      alertFunction: alertRun.function,
      relayFunction: relay.function,
      intervalMinutes: config.intervalMinutes,
      noRunWindowMinutes: config.noRunWindowMinutes,
      watermarkLagAlarmMinutes: config.watermarkLagAlarmMinutes,
      queues: [
        { slug: 'scheduler-dlq', queue: schedule.deadLetterQueue.queue, ...Monitoring.describe('scheduler-dlq') },
        {
          slug: 'alert-failures-dlq',
          queue: alertRun.failureQueue.queue,
          ...Monitoring.describe('alert-failures-dlq'),
        },
        { slug: 'slack-relay-dlq', queue: relay.deadLetterQueue.queue, ...Monitoring.describe('slack-relay-dlq') },
        { slug: 'delivery-dlq', queue: deliveryDeadLetters.queue, ...Monitoring.describe('delivery-dlq') },
        ...(sharded ? [{ slug: 'work-dlq', queue: sharded.deadLetterQueue, ...Monitoring.describe('work-dlq') }] : []),
      ],
      audienceTopicPrefix: topics.topicNamePrefix,
      alarmEmail: config.alarmEmail,
      deliveryDeadLetterQueue: deliveryDeadLetters.queue,
      removalPolicy,
      sharded: sharded && {
        workQueue: sharded.queue,
        publisherFunction: sharded.publisher,
        oldestItemAlarmAge: sharded.lastReceiveWithin,
      },
    });

    // SES email only with emailDomain; without it the template has nothing that sends email.
    if (config.email !== undefined) {
      new EmailChannel(this, 'Email', {
        config: { ...config, email: config.email },
        topics,
        tables,
        opsTopic: monitoring.opsTopic,
        logRetention,
        removalPolicy,
      });
    } else {
      Annotations.of(this).addInfoV2(
        'news-alerts:email-off',
        'SES email is off (no emailDomain in cdk.json): email subscribers get SNS email, meant for internal alerts. Set emailDomain to send email through SES from your domain with one-click unsubscribe (docs/email.md).',
      );
    }

    if (config.usesPlaceholderBaseUrl) {
      Annotations.of(this).addWarningV2(
        'news-alerts:placeholder-base-url',
        `newsApiBaseUrl is still the example ${config.newsApiBaseUrl}; set the provider's base URL in cdk.json before deploying (docs/deploy.md)`,
      );
    }

    const output = (id: string, value: string, description: string) => new CfnOutput(this, id, { value, description });
    output('RulesTableName', tables.rules.tableName, 'Rules table (partition key ruleId)');
    output('AudiencesTableName', tables.audiences.tableName, 'Audiences table (partition key audienceId)');
    output('StateTableName', tables.state.tableName, 'State table: watermark, lease, delivery ledger, run history');
    output('AudienceTopicPrefix', topics.topicNamePrefix, 'Name prefix of every audience topic: <prefix><audienceId>');
    output('AudienceTopicKeyArn', topics.key.keyArn, 'KMS key to encrypt audience topics with (KmsMasterKeyId)');
    output('AlertFunctionName', alertRun.function.functionName, 'The scheduled alert function');
    output(
      'ApiKeySecretArn',
      apiKey.secret.secretArn,
      apiKey.createdEmpty ? 'API key secret (created empty: put the key into it)' : 'API key secret (existing)',
    );
    output('OpsTopicArn', monitoring.opsTopic.topicArn, 'Alarm notifications; subscribe ops here');
    output('SlackRelayFunctionArn', relay.function.functionArn, 'Subscribe audience topics to it (protocol lambda)');
    output(
      'SlackWebhookStorePrefix',
      relay.storePrefix,
      'Slack webhook store: secrets <prefix>0 to <prefix>3, each a map of audience id to webhook URL',
    );
    output(
      'SlackWebhookSecretPrefix',
      relay.legacySecretPrefix,
      'Where earlier releases kept one webhook secret per audience (news-alerts subscriptions migrate-webhooks)',
    );
    output(
      'SlackRelayDeadLetterQueueArn',
      relay.deadLetterQueue.queue.queueArn,
      'Redrive policy of relay subscriptions',
    );
    output(
      'DeliveryDeadLetterQueueArn',
      deliveryDeadLetters.queue.queueArn,
      'Redrive policy of email, SMS and HTTPS subscriptions',
    );
    output('ScheduleName', schedule.schedule.scheduleName, 'EventBridge Scheduler schedule of the alert run');
    output('DashboardName', monitoring.dashboard.dashboardName, 'CloudWatch dashboard');
    output('AlertFunctionLogGroupName', alertRun.function.functionLogGroup.logGroupName, 'Logs of the alert run');
    output('SlackRelayLogGroupName', relay.function.functionLogGroup.logGroupName, 'Logs of the Slack relay');
    output(
      'SchedulerDeadLetterQueueUrl',
      schedule.deadLetterQueue.queue.queueUrl,
      'Invocations Scheduler could not deliver',
    );
    output('AlertFailureQueueUrl', alertRun.failureQueue.queue.queueUrl, 'Alert runs that failed after retries');
    output('SlackRelayDeadLetterQueueUrl', relay.deadLetterQueue.queue.queueUrl, 'Alerts not posted to Slack');
    output('DeliveryDeadLetterQueueUrl', deliveryDeadLetters.queue.queueUrl, 'Notifications SNS could not deliver');
    if (sharded) {
      output('WorkQueueUrl', sharded.queue.queueUrl, 'Sharded publishing: work items the alert run queued');
      output(
        'WorkDeadLetterQueueUrl',
        sharded.deadLetterQueue.queueUrl,
        'Sharded publishing: work items that failed every receive',
      );
      output('PublisherFunctionName', sharded.publisher.functionName, 'Sharded publishing: the publisher function');
    }
    this.#checkResourceCount(config);
  }

  /**
   * CloudFormation takes at most 500 resources in a stack, and CDK says so only at the end of
   * synth with a stack trace. The subscriptions declared in `audiences` are what grows the count
   * (one resource each, with their topics and secrets): said here, naming the key and the way out.
   * @throws StackConfigError when the stack would hold more than CloudFormation's 500
   */
  #checkResourceCount(config: StackConfig): void {
    const maxResources = 500;
    // CDK adds its CDKMetadata resource at synth unless version reporting is off (deploy.md says how).
    const reporting = this.node.tryGetContext('aws:cdk:version-reporting');
    const metadata = reporting === false || reporting === 'false' ? 0 : 1;
    const count = this.node.findAll().filter((construct) => CfnResource.isCfnResource(construct)).length + metadata;
    if (count <= maxResources) return;
    const subscriptions = config.audiences.reduce(
      (sum, audience) => sum + audience.emails.length + audience.phoneNumbers.length + audience.httpsEndpoints.length,
      0,
    );
    throw new StackConfigError(
      `invalid news-alerts configuration (cdk.json "context", or -c key=value): audiences: the stack would hold ${count} CloudFormation resources, more than the ${maxResources} a stack can; the ${config.audiences.length} audience(s) declare ${subscriptions} subscription(s), each a resource. Declare fewer here and add the rest after deploying with 'news-alerts subscriptions add' (or 'news-alerts email add' with SES email), which are not stack resources`,
    );
  }
}
