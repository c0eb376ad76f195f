import { CfnOutput, Duration, RemovalPolicy, Stack, TimeZone, Validations } from 'aws-cdk-lib';
import * as apigw from 'aws-cdk-lib/aws-apigateway';
import * as apigwv2 from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as actions from 'aws-cdk-lib/aws-cloudwatch-actions';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { SqsDestination } from 'aws-cdk-lib/aws-lambda-destinations';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as scheduler from 'aws-cdk-lib/aws-scheduler';
import * as schedulerTargets from 'aws-cdk-lib/aws-scheduler-targets';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import * as ses from 'aws-cdk-lib/aws-ses';
import * as sesActions from 'aws-cdk-lib/aws-ses-actions';
import * as sns from 'aws-cdk-lib/aws-sns';
import * as subscriptions from 'aws-cdk-lib/aws-sns-subscriptions';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { digestsIndex, membersIndex, subscriberTableKey } from '#aws/email/subscriber-table';
import { emailEnvironment, loadEmailConfig } from '../../functions/email/config.ts';
import { RELEASE_DAILY_DIGESTS } from '../../functions/email/process.ts';
import { type StackConfig, StackConfigError } from '../config.ts';
import type { AudienceTopics } from './audience-topics.ts';
import { DeadLetterQueue } from './dead-letter-queue.ts';
import { Monitoring } from './monitoring.ts';
import { NewsAlertsFunction, type NewsAlertsFunctionProps } from './news-alerts-function.ts';
import type { StateTables } from './state-tables.ts';

/** Props of {@link EmailChannel}. */
export interface EmailChannelProps {
  readonly config: StackConfig & { readonly email: NonNullable<StackConfig['email']> };
  readonly topics: AudienceTopics;
  readonly tables: StateTables;
  /** Alarms go here (the ops topic). */
  readonly opsTopic: sns.ITopic;
  readonly logRetention: logs.RetentionDays;
  readonly removalPolicy: RemovalPolicy;
}

const string = (name: string): dynamodb.Attribute => ({ name, type: dynamodb.AttributeType.STRING });
const knownVariables = new Set(emailEnvironment.map((variable) => variable.name));

/**
 * SES email (issue 31, DESIGN section 11), created only when `emailDomain` is set. The guarantees
 * this construct owns:
 *
 * - **Sent from the deployer's domain**, DKIM-signed: an SES domain identity with Easy DKIM (its
 *   three CNAME records are stack outputs), a configuration set that requires TLS, suppresses
 *   bounced and complaining addresses account-wide, publishes reputation metrics, and reports
 *   send, delivery, bounce, complaint, reject, delay and rendering failure to the events function.
 * - **SES's rate is respected and nothing is lost**: SNS fans every audience topic out to the email
 *   queue; the delivery function drains it with bounded concurrency (the event source's maximum
 *   concurrency, sends at once inside an invocation); throttled notifications return to the queue
 *   (partial batch responses), and after {@link EmailChannel.maxReceiveCount} receives wait in a
 *   dead-letter queue with a depth alarm.
 * - **Reputation is guarded**: alarms on the bounce and complaint rates, below SES's own review
 *   thresholds, page ops and pause sending on the configuration set (the events function turns it
 *   off) before the account is at risk.
 * - **Subscribers control their inbox**: the preference endpoint (API Gateway HTTP API, throttled,
 *   access logs that name the route, never the path with its token) and, optionally, an SES
 *   receipt rule for `mailto:` unsubscribes; links are signed with keys from a secret.
 * - **Least privilege**: `ses:SendEmail` only on this identity and configuration set, from the
 *   configured From address; table, secret and topic access only where a function needs it.
 */
export class EmailChannel extends Construct {
  /** Receives of one notification before SQS moves it to the dead-letter queue. */
  static readonly maxReceiveCount = 5;
  /** The delivery function's timeout (a batch of 10 notifications to an audience's subscribers). */
  static readonly deliveryTimeout = Duration.minutes(2);
  /** SES's review thresholds are 5% bounces and 0.1% complaints; these alarms fire before. */
  static readonly bounceRateAlarm = 0.04;
  static readonly complaintRateAlarm = 0.0008;

  readonly subscribers: dynamodb.Table;
  readonly queue: sqs.Queue;
  readonly deadLetterQueue: sqs.Queue;
  readonly identity: ses.EmailIdentity;
  readonly configurationSet: ses.ConfigurationSet;
  readonly delivery: NewsAlertsFunction;
  readonly events: NewsAlertsFunction;
  readonly preferences: NewsAlertsFunction;
  readonly api: apigwv2.HttpApi;
  readonly linkKeys: secretsmanager.Secret;
  /** The public URL of the preference endpoint. */
  readonly preferencesUrl: string;
  readonly alarms: cloudwatch.Alarm[] = [];
  readonly #environments = new Map<NewsAlertsFunction, Map<string, string>>();

  constructor(scope: Construct, id: string, props: EmailChannelProps) {
    super(scope, id);
    const { config, removalPolicy, logRetention } = props;
    const { domain, fromAddress } = config.email;
    const stack = Stack.of(this);

    // --- Storage -------------------------------------------------------------------------------
    const tablesKey = props.tables.encryptionKey;
    this.subscribers = new dynamodb.Table(this, 'Subscribers', {
      partitionKey: string(subscriberTableKey.partitionKey),
      sortKey: string(subscriberTableKey.sortKey),
      timeToLiveAttribute: subscriberTableKey.timeToLiveAttribute,
      billingMode: dynamodb.BillingMode.PAY_PER_REQUEST,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      ...(tablesKey
        ? { encryption: dynamodb.TableEncryption.CUSTOMER_MANAGED, encryptionKey: tablesKey }
        : { encryption: dynamodb.TableEncryption.AWS_MANAGED }),
      // Subscribers are people's consent: kept whatever the stack's removal policy.
      deletionProtection: true,
      removalPolicy: RemovalPolicy.RETAIN,
    });
    this.subscribers.addGlobalSecondaryIndex({
      indexName: membersIndex.name,
      partitionKey: string(membersIndex.partitionKey),
      sortKey: string(membersIndex.sortKey),
      projectionType: dynamodb.ProjectionType.ALL,
    });
    this.subscribers.addGlobalSecondaryIndex({
      indexName: digestsIndex.name,
      partitionKey: string(digestsIndex.partitionKey),
      sortKey: { name: digestsIndex.sortKey, type: dynamodb.AttributeType.NUMBER },
      projectionType: dynamodb.ProjectionType.KEYS_ONLY,
    });

    this.linkKeys = new secretsmanager.Secret(this, 'LinkKeys', {
      description:
        'news-alerts: keys that sign the links in every email ({"current": "<n>", "key<n>": "…"}); rotation: docs/email.md',
      generateSecretString: {
        secretStringTemplate: JSON.stringify({ current: '1' }),
        generateStringKey: 'key1',
        passwordLength: 64,
        excludePunctuation: true,
      },
      removalPolicy,
    });
    Validations.of(this.linkKeys).acknowledge({
      id: 'AwsSolutions-SMG4',
      reason:
        'A link key must keep verifying links for as long as they are valid (EMAIL_LINK_DAYS, 180 days), so a new key is added beside the old one and the old one removed only later; an automatic single-value rotation would break every link in every inbox. The procedure is in docs/email.md ("Rotating the link key").',
    });

    // --- SES -------------------------------------------------------------------------------------
    this.configurationSet = new ses.ConfigurationSet(this, 'ConfigurationSet', {
      reputationMetrics: true,
      sendingEnabled: true,
      tlsPolicy: ses.ConfigurationSetTlsPolicy.REQUIRE,
      suppressionReasons: ses.SuppressionReasons.BOUNCES_AND_COMPLAINTS,
    });
    this.identity = new ses.EmailIdentity(this, 'Identity', {
      identity: ses.Identity.domain(domain),
      configurationSet: this.configurationSet,
      dkimSigning: true,
      // A MAIL FROM of the domain's own (its MX and SPF records in docs/deploy.md) aligns SPF with
      // the From domain for DMARC; until they resolve SES falls back to amazonses.com.
      mailFromDomain: `mail.${domain}`,
      mailFromBehaviorOnMxFailure: ses.MailFromBehaviorOnMxFailure.USE_DEFAULT_VALUE,
    });

    const eventsKey = new kms.Key(this, 'EventsKey', {
      description: 'news-alerts: encrypts the SES event and email alarm topics',
      enableKeyRotation: true,
      removalPolicy,
    });
    // SES and CloudWatch publish to the topics below; each needs the key to do so.
    for (const service of ['ses.amazonaws.com', 'cloudwatch.amazonaws.com']) {
      eventsKey.addToResourcePolicy(
        new iam.PolicyStatement({
          principals: [new iam.ServicePrincipal(service)],
          actions: ['kms:GenerateDataKey*', 'kms:Decrypt'],
          resources: ['*'],
          conditions: { StringEquals: { 'aws:SourceAccount': stack.account } },
        }),
      );
    }
    const eventsTopic = new sns.Topic(this, 'SesEvents', {
      displayName: 'news-alerts SES events',
      masterKey: eventsKey,
      enforceSSL: true,
    });
    eventsTopic.applyRemovalPolicy(removalPolicy);
    eventsTopic.addToResourcePolicy(
      new iam.PolicyStatement({
        principals: [new iam.ServicePrincipal('ses.amazonaws.com')],
        actions: ['sns:Publish'],
        resources: [eventsTopic.topicArn],
        conditions: { StringEquals: { 'aws:SourceAccount': stack.account } },
      }),
    );
    this.configurationSet.addEventDestination('Events', {
      destination: ses.EventDestination.snsTopic(eventsTopic),
      events: [
        ses.EmailSendingEvent.SEND,
        ses.EmailSendingEvent.DELIVERY,
        ses.EmailSendingEvent.BOUNCE,
        ses.EmailSendingEvent.COMPLAINT,
        ses.EmailSendingEvent.REJECT,
        ses.EmailSendingEvent.DELIVERY_DELAY,
        ses.EmailSendingEvent.RENDERING_FAILURE,
      ],
    });

    // --- Queue --------------------------------------------------------------------------------------
    // The settings of DeadLetterQueue, built here: cdk-nag raises no AwsSolutions-SQS3 on a queue that
    // is another queue's redrive target, and a stale acknowledgement fails test/infra/nag-and-lint.test.ts.
    this.deadLetterQueue = new sqs.Queue(this, 'DeadLetters', {
      encryption: sqs.QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: Duration.days(14),
      removalPolicy,
    });
    Validations.of(this.deadLetterQueue).acknowledge({
      id: 'Serverless-SQSRedrivePolicy',
      reason: `This queue is itself the dead-letter queue of the email queue (notifications the email function failed ${EmailChannel.maxReceiveCount} times, and those SNS could not put on the email queue); a dead-letter queue behind it would only move them again. Its depth has an alarm (email-dlq).`,
    });
    // SNS parks here what it could not put on the email queue (the subscriptions' redrive policy).
    this.deadLetterQueue.addToResourcePolicy(
      new iam.PolicyStatement({
        principals: [new iam.ServicePrincipal('sns.amazonaws.com')],
        actions: ['sqs:SendMessage'],
        resources: [this.deadLetterQueue.queueArn],
        conditions: { ArnLike: { 'aws:SourceArn': props.topics.topicArnPattern } },
      }),
    );
    this.queue = new sqs.Queue(this, 'Queue', {
      encryption: sqs.QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      // Six times the function timeout: a batch still being sent is never handed out again.
      visibilityTimeout: Duration.seconds(EmailChannel.deliveryTimeout.toSeconds() * 6),
      retentionPeriod: Duration.days(4),
      deadLetterQueue: { queue: this.deadLetterQueue, maxReceiveCount: EmailChannel.maxReceiveCount },
      removalPolicy,
    });
    // Every audience topic, also those the CLI creates after the deploy (`news-alerts email add` subscribes them).
    this.queue.addToResourcePolicy(
      new iam.PolicyStatement({
        principals: [new iam.ServicePrincipal('sns.amazonaws.com')],
        actions: ['sqs:SendMessage'],
        resources: [this.queue.queueArn],
        conditions: { ArnLike: { 'aws:SourceArn': props.topics.topicArnPattern } },
      }),
    );
    for (const topic of props.topics.topics.values()) {
      topic.addSubscription(
        new subscriptions.SqsSubscription(this.queue, {
          rawMessageDelivery: false,
          deadLetterQueue: this.deadLetterQueue,
        }),
      );
    }

    // --- The preference endpoint -----------------------------------------------------------------------
    this.preferences = this.#function('Preferences', {
      entry: 'functions/preferences/handler.ts',
      description: 'news-alerts: the email preference page, one-click and mailto unsubscribes',
      timeout: Duration.seconds(10),
      logRetention,
      removalPolicy,
    });
    Validations.of(this.preferences).acknowledge({
      id: 'Serverless-LambdaDLQ',
      reason:
        'Invoked synchronously only (API Gateway for the page, an SES receipt rule with RequestResponse for mailto unsubscribes): the caller gets the error, there is no async invocation to park.',
    });
    this.api = new apigwv2.HttpApi(this, 'PreferencesApi', {
      description: 'news-alerts: email preference page and one-click unsubscribe',
      createDefaultStage: false,
    });
    const accessLogs = new logs.LogGroup(this, 'PreferencesAccessLogs', { retention: logRetention, removalPolicy });
    const stage = new apigwv2.HttpStage(this, 'PreferencesStage', {
      httpApi: this.api,
      stageName: '$default',
      autoDeploy: true,
      // Scanners and bots hit these links too: a steady rate per account, with a small burst.
      throttle: { rateLimit: 20, burstLimit: 40 },
      accessLogSettings: {
        destination: new apigwv2.LogGroupLogDestination(accessLogs),
        // The route key names the route, never the path: the token (and so the subscriber) stays out.
        format: apigw.AccessLogFormat.custom(
          JSON.stringify({
            requestId: '$context.requestId',
            time: '$context.requestTime',
            route: '$context.routeKey',
            status: '$context.status',
            responseLength: '$context.responseLength',
            latencyMs: '$context.responseLatency',
            integrationError: '$context.integrationErrorMessage',
          }),
        ),
      },
    });
    const integration = new HttpLambdaIntegration('Preferences', this.preferences);
    for (const method of [apigwv2.HttpMethod.GET, apigwv2.HttpMethod.POST]) {
      this.api.addRoutes({ path: '/{kind}/{token}', methods: [method], integration });
    }
    const noAuthorizer =
      'The preference endpoint is opened from links in email by people without an account: the signed token in the path is the authorization (HMAC over subscriber, audience and key version, checked before anything is read or changed; docs/email.md). A GET changes nothing.';
    for (const route of this.api.node.findAll().filter((child) => child instanceof apigwv2.HttpRoute)) {
      Validations.of(route).acknowledge({ id: 'AwsSolutions-APIG4', reason: noAuthorizer });
    }
    // The `$default` stage is served at the API's own endpoint, without a path.
    this.preferencesUrl = config.emailPreferencesUrl ?? this.api.apiEndpoint;
    void stage;

    // --- Delivery ----------------------------------------------------------------------------------------
    this.delivery = this.#function('Delivery', {
      entry: 'functions/email/handler.ts',
      description: 'news-alerts: emails audience notifications through SES',
      timeout: EmailChannel.deliveryTimeout,
      logRetention,
      removalPolicy,
    });
    Validations.of(this.delivery).acknowledge({
      id: 'Serverless-LambdaDLQ',
      reason:
        "The function is invoked by its SQS event source (a failed notification returns to the queue and then moves to the email dead-letter queue, with a depth alarm) and by the daily-digest schedule, whose undelivered invocations go to the schedule's dead-letter queue.",
    });
    this.delivery.addEventSource(
      new SqsEventSource(this.queue, {
        batchSize: 10,
        maxConcurrency: config.emailConcurrency,
        reportBatchItemFailures: true,
      }),
    );
    for (const mapping of this.delivery.node.children.filter((child) => child instanceof lambda.EventSourceMapping)) {
      Validations.of(mapping).acknowledge({
        id: 'Serverless-LambdaEventSourceMappingDestination',
        reason:
          "An SQS event source mapping takes no on-failure destination; a notification that keeps failing moves to the email dead-letter queue through the queue's redrive policy, which has a depth alarm.",
      });
    }

    // The subscribers' daily digests, released by a schedule. Each release works through every
    // digest that is due until its time runs low (releaseDailyDigests), and the next continues.
    const scheduleDeadLetters = new DeadLetterQueue(this, 'DigestScheduleDeadLetters', {
      purpose: 'daily-digest releases EventBridge Scheduler could not deliver to the email function',
      removalPolicy,
    });
    const scheduleRole = new iam.Role(this, 'DigestScheduleRole', {
      description: 'EventBridge Scheduler: releases the daily digests of email subscribers',
      assumedBy: new iam.ServicePrincipal('scheduler.amazonaws.com', {
        conditions: { StringEquals: { 'aws:SourceAccount': stack.account } },
      }),
    });
    new scheduler.Schedule(this, 'DigestSchedule', {
      description: 'news-alerts: releases the daily digests of email subscribers that are due',
      schedule: scheduler.ScheduleExpression.expression('rate(15 minutes)', TimeZone.ETC_UTC),
      timeWindow: scheduler.TimeWindow.off(),
      target: new schedulerTargets.LambdaInvoke(this.delivery, {
        role: scheduleRole,
        input: scheduler.ScheduleTargetInput.fromObject(RELEASE_DAILY_DIGESTS),
        deadLetterQueue: scheduleDeadLetters.queue,
        retryAttempts: 3,
        maxEventAge: Duration.minutes(15),
      }),
    });
    Validations.of(scheduleRole).acknowledge({
      id: `AwsSolutions-IAM5[Resource::<${stack.getLogicalId(this.delivery.node.defaultChild as lambda.CfnFunction)}.Arn>:*]`,
      reason:
        'lambda:InvokeFunction on the email function only: CDK grants its ARN and its versions and aliases (<arn>:*) together.',
    });

    // --- Events ---------------------------------------------------------------------------------------------
    const eventDeadLetters = new DeadLetterQueue(this, 'EventDeadLetters', {
      purpose: 'SES events the events function could not record',
      removalPolicy,
    });
    this.events = this.#function('Events', {
      entry: 'functions/email-events/handler.ts',
      description: 'news-alerts: records SES events per subscriber and suppresses bounced and complaining addresses',
      timeout: Duration.seconds(30),
      logRetention,
      removalPolicy,
      retryAttempts: 2,
      onFailure: new SqsDestination(eventDeadLetters.queue),
    });
    Validations.of(this.events).acknowledge({
      id: 'Serverless-LambdaDLQ',
      reason:
        'Failed async invocations go to the on-failure destination (the events dead-letter queue, with a depth alarm), which keeps the SNS record with the error.',
    });
    eventsTopic.addSubscription(
      new subscriptions.LambdaSubscription(this.events, { deadLetterQueue: eventDeadLetters.queue }),
    );

    // --- Wiring and grants ----------------------------------------------------------------------------------
    const identityArn = stack.formatArn({ service: 'ses', resource: 'identity', resourceName: domain });
    const configurationSetArn = stack.formatArn({
      service: 'ses',
      resource: 'configuration-set',
      resourceName: this.configurationSet.configurationSetName,
    });
    for (const fn of [this.delivery, this.events, this.preferences]) {
      this.#set(fn, 'SUBSCRIBERS_TABLE_NAME', this.subscribers.tableName);
      this.#set(fn, 'DEFAULT_LOCALE', config.defaultLocale);
      this.#set(fn, 'EMAIL_CONFIGURATION_SET', this.configurationSet.configurationSetName);
    }
    for (const fn of [this.delivery, this.preferences]) {
      this.#set(fn, 'AUDIENCES_TABLE_NAME', props.tables.audiences.tableName);
      this.#set(fn, 'PREFERENCES_URL', this.preferencesUrl);
      this.#set(fn, 'LINK_KEY_SECRET_ID', this.linkKeys.secretArn);
      this.linkKeys.grantRead(fn);
      props.tables.audiences.grant(fn, 'dynamodb:GetItem');
    }
    this.#set(this.delivery, 'AUDIENCE_TOPIC_PREFIX', props.topics.topicNamePrefix);
    this.#set(this.delivery, 'EMAIL_DOMAIN', domain);
    this.#set(this.delivery, 'EMAIL_FROM_ADDRESS', fromAddress);
    this.#set(this.delivery, 'EMAIL_FROM_NAME', config.emailFromName);
    if (config.emailReplyTo !== null) this.#set(this.delivery, 'EMAIL_REPLY_TO', config.emailReplyTo);
    const mailbox = `unsubscribe@${domain}`;
    if (config.emailMailtoUnsubscribe) this.#set(this.delivery, 'EMAIL_UNSUBSCRIBE_MAILBOX', mailbox);

    const itemActions = [
      'dynamodb:GetItem',
      'dynamodb:PutItem',
      'dynamodb:UpdateItem',
      'dynamodb:DeleteItem',
      'dynamodb:Query',
    ];
    this.subscribers.grant(
      this.delivery,
      ...itemActions,
      'dynamodb:BatchGetItem',
      'dynamodb:BatchWriteItem',
      'dynamodb:ConditionCheckItem',
    );
    this.subscribers.grant(this.events, 'dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem');
    this.subscribers.grant(this.preferences, 'dynamodb:GetItem', 'dynamodb:UpdateItem', 'dynamodb:Query');
    // Table.grant() names actions only: with `tableEncryption: customer-managed` each function
    // also needs the key the subscribers and audiences tables are encrypted with.
    for (const fn of [this.delivery, this.events, this.preferences]) {
      tablesKey?.grant(fn, 'kms:Decrypt', 'kms:Encrypt', 'kms:GenerateDataKey', 'kms:DescribeKey');
    }
    // ses:SendEmail (SES v2, raw included) only for this identity and configuration set, only from the configured address.
    this.delivery.addToRolePolicy(
      new iam.PolicyStatement({
        actions: ['ses:SendEmail'],
        resources: [identityArn, configurationSetArn],
        conditions: { StringEquals: { 'ses:FromAddress': fromAddress } },
      }),
    );
    this.events.addToRolePolicy(
      new iam.PolicyStatement({ actions: ['ses:PutConfigurationSetSendingOptions'], resources: [configurationSetArn] }),
    );
    // The index queries (members of an audience, due digests).
    for (const fn of [this.delivery]) {
      Validations.of(fn.role as iam.Role).acknowledge({
        id: `AwsSolutions-IAM5[Resource::<${stack.getLogicalId(this.subscribers.node.defaultChild as dynamodb.CfnTable)}.Arn>/index/*]`,
        reason:
          "Query on the subscribers table's own two indexes (members of an audience, daily digests due); CDK grants table actions on the table and its indexes together.",
      });
    }
    for (const fn of [this.events, this.preferences]) {
      Validations.of(fn.role as iam.Role).acknowledge({
        id: `AwsSolutions-IAM5[Resource::<${stack.getLogicalId(this.subscribers.node.defaultChild as dynamodb.CfnTable)}.Arn>/index/*]`,
        reason:
          'CDK grants table actions on the subscribers table and its indexes together; this function only reads and writes items by key.',
      });
    }

    if (config.emailMailtoUnsubscribe) {
      new ses.ReceiptRuleSet(this, 'UnsubscribeMail', {
        receiptRuleSetName: `${config.resourcePrefix}-email-unsubscribe`,
        rules: [
          {
            recipients: [mailbox],
            scanEnabled: true,
            tlsPolicy: ses.TlsPolicy.REQUIRE,
            actions: [
              new sesActions.Lambda({
                function: this.preferences,
                invocationType: sesActions.LambdaInvocationType.REQUEST_RESPONSE,
              }),
            ],
          },
        ],
      });
    }

    this.#alarmsAndOutputs(props, eventsTopic, eventDeadLetters, scheduleDeadLetters, identityArn);
    this.#validate();
  }

  #function(id: string, props: Omit<NewsAlertsFunctionProps, 'memorySize'>): NewsAlertsFunction {
    const fn = new NewsAlertsFunction(this, id, { memorySize: 512, ...props });
    this.#environments.set(fn, new Map());
    return fn;
  }

  #set(fn: NewsAlertsFunction, name: string, value: string): void {
    if (!knownVariables.has(name))
      throw new StackConfigError(`${name} is not a variable the email functions read (functions/email/config.ts)`);
    this.#environments.get(fn)?.set(name, value);
    fn.addEnvironment(name, value);
  }

  /** Each function's environment through its own cold-start validation, so a value it would refuse fails the synth. */
  #validate(): void {
    const roles = [
      [this.delivery, 'delivery'],
      [this.events, 'events'],
      [this.preferences, 'preferences'],
    ] as const;
    for (const [fn, role] of roles) {
      const environment = Object.fromEntries(
        [...(this.#environments.get(fn) ?? new Map<string, string>())].map(([name, value]) => [
          name,
          // Tokens (table names, the API URL) resolve at deploy time; a stand-in of the right form is checked.
          value.includes('${Token[')
            ? name === 'PREFERENCES_URL'
              ? 'https://preferences.example.com'
              : 'token'
            : value,
        ]),
      );
      try {
        loadEmailConfig(environment, role);
      } catch (error) {
        throw new StackConfigError(
          `the email ${role} function would refuse its configuration: ${error instanceof Error ? error.message : String(error)}`,
          { cause: error },
        );
      }
    }
  }

  #alarmsAndOutputs(
    props: EmailChannelProps,
    eventsTopic: sns.Topic,
    eventDeadLetters: DeadLetterQueue,
    scheduleDeadLetters: DeadLetterQueue,
    identityArn: string,
  ): void {
    const { config } = props;
    const prefix = config.resourcePrefix;
    const ops = new actions.SnsAction(props.opsTopic);
    // The alarm topic the events function listens on to pause sending.
    const pause = new actions.SnsAction(eventsTopic);
    const guards: string[] = [];
    const reputation = (metricName: string) =>
      new cloudwatch.Metric({
        namespace: 'AWS/SES',
        metricName,
        dimensionsMap: { 'ses:configuration-set': this.configurationSet.configurationSetName },
        statistic: 'Maximum',
        period: Duration.hours(1),
      });
    const alarm = (slug: string, metric: cloudwatch.IMetric, threshold: number, guard: boolean) => {
      const doc = Monitoring.describe(slug);
      const created = new cloudwatch.Alarm(this, `Alarm-${slug}`, {
        alarmName: `${prefix}-${slug}`,
        alarmDescription: `${doc.meaning} What to do: ${doc.action} (docs/operate.md, "${slug}")`,
        metric,
        threshold,
        evaluationPeriods: 1,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      });
      created.addAlarmAction(ops);
      created.addOkAction(ops);
      if (guard) {
        created.addAlarmAction(pause);
        guards.push(created.alarmArn);
      }
      this.alarms.push(created);
    };
    alarm('email-bounce-rate', reputation('Reputation.BounceRate'), EmailChannel.bounceRateAlarm, true);
    alarm('email-complaint-rate', reputation('Reputation.ComplaintRate'), EmailChannel.complaintRateAlarm, true);
    // CloudWatch publishes the alarm itself: without this statement the topic (whose policy lets
    // only SES publish) refuses it, and a reputation alarm pages ops but never pauses sending. Only
    // these alarms may publish; the topic's key already lets CloudWatch use it (above).
    eventsTopic.addToResourcePolicy(
      new iam.PolicyStatement({
        principals: [new iam.ServicePrincipal('cloudwatch.amazonaws.com')],
        actions: ['sns:Publish'],
        resources: [eventsTopic.topicArn],
        conditions: { ArnEquals: { 'aws:SourceArn': guards } },
      }),
    );
    const depth = (queue: sqs.IQueue) =>
      queue.metricApproximateNumberOfMessagesVisible({ period: Duration.minutes(5), statistic: 'Maximum' });
    alarm('email-dlq', depth(this.deadLetterQueue), 1, false);
    alarm('email-events-dlq', depth(eventDeadLetters.queue), 1, false);
    alarm('email-digest-schedule-dlq', depth(scheduleDeadLetters.queue), 1, false);
    alarm(
      'email-function-errors',
      this.delivery.metricErrors({ period: Duration.minutes(15), statistic: 'Sum' }),
      1,
      false,
    );

    // At the stack's top level: the CLI reads outputs by their plain names.
    const stack = Stack.of(this);
    const output = (id: string, value: string, description: string) => new CfnOutput(stack, id, { value, description });
    output('EmailSubscribersTableName', this.subscribers.tableName, 'SES email subscribers, memberships and history');
    output('EmailQueueArn', this.queue.queueArn, 'Email queue: subscribe audience topics to it (protocol sqs)');
    output('EmailQueueUrl', this.queue.queueUrl, 'Email queue');
    output(
      'EmailDeadLetterQueueArn',
      this.deadLetterQueue.queueArn,
      'Redrive policy of audience topic subscriptions of the email queue',
    );
    output('EmailDeadLetterQueueUrl', this.deadLetterQueue.queueUrl, 'Notifications the email function could not send');
    output('EmailPreferencesUrl', this.preferencesUrl, 'Public URL of the preference endpoint (links in every email)');
    output('EmailApiUrl', this.api.apiEndpoint, 'The own URL of the preference endpoint (map a custom domain to it)');
    output('EmailLinkKeySecretArn', this.linkKeys.secretArn, 'Secret with the keys that sign email links');
    output('EmailConfigurationSetName', this.configurationSet.configurationSetName, 'SES configuration set');
    output('EmailIdentityArn', identityArn, 'SES domain identity');
    output('EmailFromAddress', config.email.fromAddress, 'From address of SES email');
    output('EmailFromName', config.emailFromName, 'From display name of SES email');
    if (config.emailReplyTo !== null) output('EmailReplyTo', config.emailReplyTo, 'Reply-To of SES email');
    output('EmailFunctionName', this.delivery.functionName, 'The email delivery function');
    if (config.emailMailtoUnsubscribe) {
      output(
        'EmailReceiptRuleSetName',
        `${config.resourcePrefix}-email-unsubscribe`,
        'Make it active for mailto unsubscribes (docs/deploy.md)',
      );
    }
    for (const index of [1, 2, 3] as const) {
      const name = this.identity[`dkimDnsTokenName${index}`];
      const value = this.identity[`dkimDnsTokenValue${index}`];
      output(
        `EmailDkimRecord${index}`,
        `${name} CNAME ${value}`,
        `DKIM record ${index} to publish in DNS (docs/deploy.md)`,
      );
    }
  }
}
