import { ArnFormat, Duration, type RemovalPolicy, Stack } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as actions from 'aws-cdk-lib/aws-cloudwatch-actions';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import * as sns from 'aws-cdk-lib/aws-sns';
import * as subscriptions from 'aws-cdk-lib/aws-sns-subscriptions';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { metricNames } from '#alert-run/metrics';
import { publisherMetricNames } from '../../functions/publisher/process.ts';

import { powertools, serviceOf } from './news-alerts-function.ts';

/** A dead-letter queue to watch, with what a message in it means and what ops should do. */
export interface WatchedQueue {
  /** Short name, used in the alarm name: `scheduler-dlq`. */
  readonly slug: string;
  readonly queue: sqs.IQueue;
  readonly meaning: string;
  readonly action: string;
}

/** Sharded publishing's parts to watch (publishMode `sharded` only). */
export interface WatchedShardedPublishing {
  readonly workQueue: sqs.IQueue;
  readonly publisherFunction: lambda.IFunction;
  /**
   * `work-queue-age` fires when the oldest work item has waited longer than this: past every
   * retry it could have had, so publishers are not keeping up (or not running).
   */
  readonly oldestItemAlarmAge: Duration;
}

/** Props of {@link Monitoring}. */
export interface MonitoringProps {
  readonly resourcePrefix: string;
  readonly alertFunction: lambda.IFunction;
  readonly relayFunction: lambda.IFunction;
  /** Minutes between scheduled runs. */
  readonly intervalMinutes: number;
  /** "No successful run" fires after this many minutes without one (lib/config.ts `noRunWindowMinutes`). */
  readonly noRunWindowMinutes: number;
  readonly watermarkLagAlarmMinutes: number;
  readonly queues: readonly WatchedQueue[];
  /** `<prefix>-audience-`: every audience topic's name starts with it (the dashboard searches by it). */
  readonly audienceTopicPrefix: string;
  readonly alarmEmail: string | null;
  /** Where SNS parks ops emails it could not deliver. */
  readonly deliveryDeadLetterQueue: sqs.IQueue;
  readonly removalPolicy: RemovalPolicy;
  /** Set in sharded mode: the work queue's age alarm and the dashboard's queued-vs-published row. */
  readonly sharded?: WatchedShardedPublishing | undefined;
}

/** One alarm as documented in docs/operate.md: name, meaning and action. */
export interface AlarmDoc {
  readonly name: string;
  readonly meaning: string;
  readonly action: string;
}

/**
 * The alerter that alerts on itself: an encrypted ops topic (with an optional email subscriber),
 * alarms on the function, the run metrics and the dead-letter queues (SNS delivery failures of
 * every audience included), and a dashboard. The set of alarms is fixed: it does not grow with
 * the audiences. Every alarm description says what the alarm means and what to do; docs/operate.md
 * says the same at more length.
 */
export class Monitoring extends Construct {
  readonly opsTopic: sns.Topic;
  readonly dashboard: cloudwatch.Dashboard;
  readonly alarms: cloudwatch.Alarm[] = [];
  readonly #props: MonitoringProps;
  readonly #action: actions.SnsAction;

  constructor(scope: Construct, id: string, props: MonitoringProps) {
    super(scope, id);
    this.#props = props;
    const stack = Stack.of(this);
    const key = new kms.Key(this, 'OpsTopicKey', {
      description: 'news-alerts: encrypts the ops alarm topic',
      enableKeyRotation: true,
      removalPolicy: props.removalPolicy,
    });
    // CloudWatch publishes alarm notifications itself, so it needs the key of the encrypted topic:
    // for this account's alarms only (the confused-deputy guard the SES events key has too).
    key.addToResourcePolicy(
      new iam.PolicyStatement({
        principals: [new iam.ServicePrincipal('cloudwatch.amazonaws.com')],
        actions: ['kms:Decrypt', 'kms:GenerateDataKey'],
        resources: ['*'],
        conditions: { StringEquals: { 'aws:SourceAccount': stack.account } },
      }),
    );
    this.opsTopic = new sns.Topic(this, 'OpsTopic', { masterKey: key, enforceSSL: true });
    this.opsTopic.applyRemovalPolicy(props.removalPolicy);
    this.opsTopic.addToResourcePolicy(
      new iam.PolicyStatement({
        principals: [new iam.ServicePrincipal('cloudwatch.amazonaws.com')],
        actions: ['sns:Publish'],
        resources: [this.opsTopic.topicArn],
        conditions: {
          ArnLike: {
            'aws:SourceArn': stack.formatArn({
              service: 'cloudwatch',
              resource: 'alarm',
              resourceName: `${props.resourcePrefix}-*`,
              arnFormat: ArnFormat.COLON_RESOURCE_NAME,
            }),
          },
        },
      }),
    );
    if (props.alarmEmail !== null) {
      this.opsTopic.addSubscription(
        new subscriptions.EmailSubscription(props.alarmEmail, { deadLetterQueue: props.deliveryDeadLetterQueue }),
      );
    }
    this.#action = new actions.SnsAction(this.opsTopic);
    this.#alarms();
    this.dashboard = this.#dashboard();
  }

  /** A metric of the alert run (Powertools EMF, namespace and `service` dimension as the function sets them). */
  runMetric(name: string, statistic: string, period: Duration): cloudwatch.Metric {
    return new cloudwatch.Metric({
      namespace: powertools.namespace,
      metricName: name,
      dimensionsMap: { service: serviceOf(this) },
      statistic,
      period,
    });
  }

  /** Every alarm with its meaning and action, for docs/operate.md and the tests. */
  static describeAlarms(): readonly AlarmDoc[] {
    return alarmDocs;
  }

  /** Meaning and action of one documented alarm. */
  static describe(name: string): { meaning: string; action: string } {
    const found = alarmDocs.find((entry) => entry.name === name);
    if (!found) throw new Error(`alarm ${name} is not documented in alarmDocs`);
    return { meaning: found.meaning, action: found.action };
  }

  #alarm(
    slug: string,
    doc: { meaning: string; action: string },
    props: Omit<cloudwatch.AlarmProps, 'alarmName' | 'alarmDescription'>,
  ): cloudwatch.Alarm {
    const alarm = new cloudwatch.Alarm(this, `Alarm-${slug}`, {
      ...props,
      alarmName: `${this.#props.resourcePrefix}-${slug}`,
      alarmDescription: `${doc.meaning} What to do: ${doc.action} (docs/operate.md, "${slug}")`,
    });
    alarm.addAlarmAction(this.#action);
    alarm.addOkAction(this.#action);
    this.alarms.push(alarm);
    return alarm;
  }

  #alarms(): void {
    const p = this.#props;
    const interval = Duration.minutes(Math.max(p.intervalMinutes, 5));
    const doc = Monitoring.describe;
    const atLeastOne = cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD;
    const notBreaching = cloudwatch.TreatMissingData.NOT_BREACHING;

    this.#alarm('alert-function-errors', doc('alert-function-errors'), {
      metric: p.alertFunction.metricErrors({ period: interval, statistic: 'Sum' }),
      threshold: 1,
      comparisonOperator: atLeastOne,
      evaluationPeriods: 3,
      datapointsToAlarm: 2,
      treatMissingData: notBreaching,
    });
    this.#alarm('alert-function-throttles', doc('alert-function-throttles'), {
      metric: p.alertFunction.metricThrottles({ period: interval, statistic: 'Sum' }),
      threshold: 1,
      comparisonOperator: atLeastOne,
      evaluationPeriods: 3,
      datapointsToAlarm: 2,
      treatMissingData: notBreaching,
    });
    this.#alarm('no-successful-run', doc('no-successful-run'), {
      // One period spanning N intervals: a run anywhere inside it, however the flexible window shifted it, counts.
      metric: this.runMetric(metricNames.runSucceeded, 'Sum', Duration.minutes(p.noRunWindowMinutes)),
      threshold: 1,
      comparisonOperator: cloudwatch.ComparisonOperator.LESS_THAN_THRESHOLD,
      evaluationPeriods: 1,
      treatMissingData: cloudwatch.TreatMissingData.BREACHING,
    });
    this.#alarm('watermark-lag', doc('watermark-lag'), {
      metric: this.runMetric(metricNames.watermarkLag, 'Maximum', interval),
      threshold: p.watermarkLagAlarmMinutes * 60,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: 1,
      treatMissingData: notBreaching,
    });
    this.#alarm('upstream-auth-failures', doc('upstream-auth-failures'), {
      metric: this.runMetric(metricNames.upstreamAuthFailures, 'Sum', interval),
      threshold: 1,
      comparisonOperator: atLeastOne,
      evaluationPeriods: 1,
      treatMissingData: notBreaching,
    });
    this.#alarm('notifications-parked', doc('notifications-parked'), {
      metric: this.runMetric(metricNames.notificationsParked, 'Sum', interval),
      threshold: 1,
      comparisonOperator: atLeastOne,
      evaluationPeriods: 1,
      treatMissingData: notBreaching,
    });
    this.#alarm('notifications-unrenderable', doc('notifications-unrenderable'), {
      metric: this.runMetric(metricNames.notificationsUnrenderable, 'Sum', interval),
      threshold: 1,
      comparisonOperator: atLeastOne,
      evaluationPeriods: 1,
      treatMissingData: notBreaching,
    });
    this.#alarm('pages-parked', doc('pages-parked'), {
      metric: this.runMetric(metricNames.pagesParked, 'Sum', interval),
      threshold: 1,
      comparisonOperator: atLeastOne,
      evaluationPeriods: 1,
      treatMissingData: notBreaching,
    });
    this.#alarm('invalid-rules', doc('invalid-rules'), {
      metric: this.runMetric(metricNames.invalidRules, 'Maximum', interval),
      threshold: 1,
      comparisonOperator: atLeastOne,
      evaluationPeriods: 1,
      treatMissingData: notBreaching,
    });
    this.#alarm('invalid-audiences', doc('invalid-audiences'), {
      metric: this.runMetric(metricNames.invalidAudiences, 'Maximum', interval),
      threshold: 1,
      comparisonOperator: atLeastOne,
      evaluationPeriods: 1,
      treatMissingData: notBreaching,
    });
    for (const watched of p.queues) {
      this.#alarm(
        watched.slug,
        { meaning: watched.meaning, action: watched.action },
        {
          metric: watched.queue.metricApproximateNumberOfMessagesVisible({
            period: Duration.minutes(5),
            statistic: 'Maximum',
          }),
          threshold: 1,
          comparisonOperator: atLeastOne,
          evaluationPeriods: 1,
          treatMissingData: notBreaching,
        },
      );
    }
    if (p.sharded !== undefined) {
      this.#alarm('work-queue-age', doc('work-queue-age'), {
        metric: p.sharded.workQueue.metricApproximateAgeOfOldestMessage({
          period: Duration.minutes(5),
          statistic: 'Maximum',
        }),
        threshold: p.sharded.oldestItemAlarmAge.toSeconds(),
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
        evaluationPeriods: 1,
        treatMissingData: notBreaching,
      });
    }
    // No alarm per audience: every subscription (declared or added by the CLI) redrives what SNS
    // could not deliver to the delivery dead-letter queue, whose one alarm fires for any audience;
    // `news-alerts subscriptions failures` names the audiences (docs/operate.md). An alarm per
    // topic, or one on a Metrics Insights query over all topics, is billed per metric it watches.
  }

  #dashboard(): cloudwatch.Dashboard {
    const p = this.#props;
    const period = Duration.minutes(Math.max(p.intervalMinutes, 5));
    const sum = (name: string, label?: string) => this.runMetric(name, 'Sum', period).with({ label: label ?? name });
    const dashboard = new cloudwatch.Dashboard(this, 'Dashboard', {
      dashboardName: `${p.resourcePrefix}-operations`,
      defaultInterval: Duration.days(1),
    });
    dashboard.addWidgets(
      new cloudwatch.TextWidget({
        markdown: `# news-alerts (${p.resourcePrefix})\nRuns every ${p.intervalMinutes} min. Alarms go to the ops topic; what each one means and what to do: docs/operate.md in the news-alerts repository.`,
        width: 24,
        height: 2,
      }),
    );
    dashboard.addWidgets(
      new cloudwatch.AlarmStatusWidget({ title: 'Alarms', alarms: this.alarms, width: 24, height: 4 }),
    );
    dashboard.addWidgets(
      new cloudwatch.GraphWidget({
        title: 'Runs',
        left: [sum(metricNames.runSucceeded), sum(metricNames.runFailed), sum(metricNames.runSkipped)],
        width: 8,
      }),
      new cloudwatch.GraphWidget({
        title: 'Run duration (ms) and watermark lag (s)',
        left: [this.runMetric(metricNames.runDuration, 'Maximum', period).with({ label: 'RunDuration (max)' })],
        right: [this.runMetric(metricNames.watermarkLag, 'Maximum', period).with({ label: 'WatermarkLag (max)' })],
        width: 8,
      }),
      new cloudwatch.GraphWidget({
        title: 'Articles',
        left: [
          sum(metricNames.articlesFetched),
          sum(metricNames.articlesNew),
          sum(metricNames.articlesMatched),
          sum(metricNames.articlesMalformed),
          sum(metricNames.pagesParked),
        ],
        width: 8,
      }),
    );
    dashboard.addWidgets(
      new cloudwatch.GraphWidget({
        title: 'Notifications',
        left: [
          sum(metricNames.notificationsPublished),
          sum(metricNames.notificationsFailed),
          sum(metricNames.notificationsParked),
          sum(metricNames.notificationsDeferred),
          sum(metricNames.duplicatesSuppressed),
          sum(metricNames.lateDeliveries),
          sum(metricNames.notificationsCollapsed),
          sum(metricNames.updateNotices),
        ],
        width: 8,
      }),
      new cloudwatch.GraphWidget({
        title: 'Data and upstream problems',
        left: [
          this.runMetric(metricNames.invalidRules, 'Maximum', period).with({ label: 'InvalidRules' }),
          this.runMetric(metricNames.invalidAudiences, 'Maximum', period).with({ label: 'InvalidAudiences' }),
          sum(metricNames.upstreamAuthFailures),
          sum(metricNames.upstreamErrors),
        ],
        width: 8,
      }),
      new cloudwatch.GraphWidget({
        title: 'Slack relay',
        left: [
          sum('SlackMessagesPosted'),
          sum('SlackPostRetries'),
          sum('SlackMessagesFailed'),
          sum('SlackDuplicatesSkipped'),
        ],
        right: [
          p.relayFunction.metricErrors({ period, statistic: 'Sum' }).with({ label: 'relay Errors' }),
          p.relayFunction.metricThrottles({ period, statistic: 'Sum' }).with({ label: 'relay Throttles' }),
        ],
        width: 8,
      }),
    );
    dashboard.addWidgets(
      new cloudwatch.GraphWidget({
        title: 'Alert function',
        left: [
          p.alertFunction.metricInvocations({ period, statistic: 'Sum' }),
          p.alertFunction.metricErrors({ period, statistic: 'Sum' }),
          p.alertFunction.metricThrottles({ period, statistic: 'Sum' }),
        ],
        right: [p.alertFunction.metricDuration({ period, statistic: 'Maximum' })],
        width: 8,
      }),
      new cloudwatch.GraphWidget({
        title: 'Dead-letter queues (messages waiting)',
        left: p.queues.map((watched) =>
          watched.queue
            .metricApproximateNumberOfMessagesVisible({ period: Duration.minutes(5), statistic: 'Maximum' })
            .with({ label: watched.slug }),
        ),
        width: 8,
      }),
      new cloudwatch.GraphWidget({
        // Every audience topic, declared or added later by the CLI, one line each: a search, so the
        // dashboard neither grows with the audiences nor misses the ones created after the deploy.
        title: 'Audience topics: deliveries failed (per topic)',
        left: [
          new cloudwatch.MathExpression({
            expression: `SEARCH('{AWS/SNS,TopicName} MetricName="NumberOfNotificationsFailed" TopicName=${audienceTopicSearchTerm(p.audienceTopicPrefix)}', 'Sum', 300)`,
            label: '',
            period: Duration.minutes(5),
          }),
        ],
        width: 8,
      }),
    );
    if (p.sharded !== undefined) this.#shardedWidgets(dashboard, p.sharded, period);
    return dashboard;
  }

  /** Queued vs published: the run's counts, the queue's own view, and the publisher's health. */
  #shardedWidgets(dashboard: cloudwatch.Dashboard, sharded: WatchedShardedPublishing, period: Duration): void {
    const sum = (name: string) => this.runMetric(name, 'Sum', period).with({ label: name });
    const queue = sharded.workQueue;
    const publisher = sharded.publisherFunction;
    dashboard.addWidgets(
      new cloudwatch.GraphWidget({
        title: 'Sharded publishing: queued vs published',
        // The run counts what it queued; the publishers count what they published, parked and finished.
        left: [
          sum(metricNames.notificationsQueued),
          sum(publisherMetricNames.notificationsPublished),
          sum(publisherMetricNames.notificationsParked),
        ],
        right: [
          sum(metricNames.workItemsQueued),
          sum(publisherMetricNames.workItemsDone),
          sum(publisherMetricNames.workItemsFailed),
        ],
        width: 8,
      }),
      new cloudwatch.GraphWidget({
        title: 'Work queue (items)',
        left: [
          queue.metricNumberOfMessagesSent({ period, statistic: 'Sum' }).with({ label: 'sent' }),
          queue.metricNumberOfMessagesDeleted({ period, statistic: 'Sum' }).with({ label: 'done' }),
          queue
            .metricApproximateNumberOfMessagesVisible({ period, statistic: 'Maximum' })
            .with({ label: 'waiting (max)' }),
        ],
        right: [
          queue
            .metricApproximateAgeOfOldestMessage({ period, statistic: 'Maximum' })
            .with({ label: 'oldest item age (s)' }),
        ],
        width: 8,
      }),
      new cloudwatch.GraphWidget({
        title: 'Publisher function',
        left: [
          publisher.metricInvocations({ period, statistic: 'Sum' }),
          publisher.metricErrors({ period, statistic: 'Sum' }),
          publisher.metricThrottles({ period, statistic: 'Sum' }),
        ],
        right: [publisher.metricDuration({ period, statistic: 'Maximum' })],
        width: 8,
      }),
    );
  }
}

/**
 * Every alarm: what it means and what to do. The alarm descriptions are built from this list and
 * docs/operate.md documents each entry (a test checks that every name appears there).
 */
const alarmDocs: readonly AlarmDoc[] = [
  {
    name: 'email-bounce-rate',
    meaning:
      'SES email (emailDomain set): the bounce rate of the configuration set reached 4% (SES reviews an account at 5%). Sending on the configuration set was paused by the events function.',
    action:
      'Find where the bounces come from (`news-alerts email history <address>`, the SES console); remove or fix bad addresses, then resume sending (docs/email.md, "When sending is paused"). Notifications wait in the email queue and dead-letter queue meanwhile.',
  },
  {
    name: 'email-complaint-rate',
    meaning:
      'SES email: the complaint rate reached 0.08% (SES reviews an account at 0.1%; Gmail and Yahoo want under 0.3%). Sending on the configuration set was paused.',
    action:
      'Check which audiences and messages draw complaints; complaining addresses are already suppressed. Resume sending once the cause is fixed (docs/email.md, "When sending is paused").',
  },
  {
    name: 'email-dlq',
    meaning:
      'Notifications the email function could not send after 5 receives (SES throttled or paused for a long time, or a message it cannot read).',
    action:
      'Read the email function log group for the SQS message id; once the cause is gone, redrive the dead-letter queue to the email queue (SQS console "Start DLQ redrive"). Subscribers already sent to are not sent to again.',
  },
  {
    name: 'email-events-dlq',
    meaning: 'SES events (bounces, complaints, deliveries) the events function could not record.',
    action:
      'Read the events function log group; fix the cause and redrive the queue to the events function (or replay the records).',
  },
  {
    name: 'email-digest-schedule-dlq',
    meaning: 'Daily-digest releases EventBridge Scheduler could not deliver to the email function.',
    action:
      'Check the email function exists and may be invoked by the schedule role; the next release (every 15 minutes) sends what is due.',
  },
  {
    name: 'email-function-errors',
    meaning: 'The email delivery function failed (not a throttled notification, which is retried quietly).',
    action:
      'Read the email function log group ("emailing a notification failed"); the notification comes back from the queue until it is sent or parked.',
  },
  {
    name: 'alert-function-errors',
    meaning: 'Alert runs failed in at least two of the last three periods (the run threw; Lambda retries once).',
    action:
      'Read the errors in the alert function log group (filter "alert run failed"); fix the cause (provider down, key, table access). Nothing is lost: the next successful run resumes from the watermark.',
  },
  {
    name: 'alert-function-throttles',
    meaning:
      'Invocations were throttled in two of three periods: a run was still going when the next one started (reserved concurrency 1).',
    action:
      'Check RunDuration on the dashboard; if runs take longer than the schedule interval, lengthen the interval or raise memory. Throttled runs wait and retry; none run in parallel.',
  },
  {
    name: 'no-successful-run',
    meaning:
      'No alert run succeeded for the configured number of schedule intervals (RunSucceeded missing or zero). Subscribers are not getting alerts.',
    action:
      'Check the alert-function-errors and upstream alarms and the function log; check the schedule is enabled; right after the first deploy, put the API key into the secret. The next successful run catches up from the watermark.',
  },
  {
    name: 'watermark-lag',
    meaning:
      'The watermark is further behind now than the configured threshold: runs succeed but cannot catch up (checkpointed runs, page caps, slow provider).',
    action:
      'Look at RunDuration, NotificationsDeferred and the run log; raise timeoutSeconds or memorySize, or shorten the interval so each run has less to do.',
  },
  {
    name: 'upstream-auth-failures',
    meaning:
      'The news provider answered 401 or 403: the API key is wrong, expired or revoked, or a request fell outside the contracted media scope.',
    action:
      'Put a valid key into the API key secret (aws secretsmanager put-secret-value); if the key is valid, ask the provider about the media scope. Runs resume on their own.',
  },
  {
    name: 'notifications-parked',
    meaning:
      'Notifications were parked in the state table instead of being lost: SNS refused them for good (topic deleted, KMS key disabled, access denied), or the alert could not be published as rendered (a link that is not a public http(s) address, carries credentials or is over 2,048 characters).',
    action:
      'Find the reason in the log ("SNS refused notifications for good", or the parked article with its code). Fix the audience topic or key, or review the articles with `news-alerts replay --parked --dry-run`; then send them with `news-alerts replay --parked`.',
  },
  {
    name: 'notifications-unrenderable',
    meaning:
      'Alerts or digest entries could not be rendered. Alerts are parked (notifications-parked fires too); a held entry that cannot be shown even alone is left out of its digest and logged.',
    action:
      'Find "could not render" or "could not be rendered" in the function log (audience and article keys). Check the provider data for those articles; a digest entry left out can be sent again with `news-alerts replay` over its window.',
  },
  {
    name: 'pages-parked',
    meaning:
      'The provider served a page on which no item could be read while other pages read fine (poison data). The page was parked so it cannot stop alerting; its articles were not delivered.',
    action:
      'Find "parked a provider page" in the function log (day, page, reasons, sample; also in the run record\'s parkedPages). Ask the provider to fix the data, or fix the response mapping, then re-read the day with `news-alerts watermark set <day>`; the delivery ledger prevents duplicates.',
  },
  {
    name: 'invalid-rules',
    meaning:
      'At least one rule item in the rules table fails validation and is being skipped (every other rule still runs).',
    action:
      'Find the item in the alert function log ("skipped an invalid item", with table, key and reason) and fix it in the rules table.',
  },
  {
    name: 'invalid-audiences',
    meaning: 'At least one audience item fails validation; it and its rules are skipped.',
    action:
      'Find the item in the alert function log ("skipped an invalid item", with table, key and reason) and fix it in the audiences table.',
  },
  {
    name: 'scheduler-dlq',
    meaning: 'EventBridge Scheduler could not invoke the alert function (after its retries) and parked the invocation.',
    action:
      'Check that the function exists and the scheduler role may invoke it; then purge the queue (the next scheduled run catches up, so redriving is not needed).',
  },
  {
    name: 'alert-failures-dlq',
    meaning:
      'Alert runs failed after Lambda’s retry, or waited longer than one interval to start; each message holds the error.',
    action:
      'Read the messages (request, error) to find the cause, fix it, then purge the queue: the next run resumes from the watermark, so nothing needs redriving.',
  },
  {
    name: 'slack-relay-dlq',
    meaning: 'Alerts could not be posted to Slack after every retry (webhook revoked, channel archived, Slack down).',
    action:
      "`news-alerts subscriptions failures` names the audiences whose alerts wait here; fix the webhook (store the new URL with `news-alerts subscriptions add <audienceId> --slack-webhook`); then re-invoke the relay with each message's SNS event (docs/operate.md shows the loop) and delete the message.",
  },
  {
    name: 'delivery-dlq',
    meaning:
      'SNS could not deliver notifications to an email, SMS or HTTPS subscriber of some audience (or the ops email) after its retries: every subscription, declared or added by the CLI, sends what it could not deliver here, so this one alarm covers all audiences.',
    action:
      '`news-alerts subscriptions failures` names the failing audiences, with the count and newest failure of each (it reads the queue without removing anything); fix the endpoint or remove the subscription, then delete the messages: they show the subscriber what was missed.',
  },
  {
    name: 'work-dlq',
    meaning:
      'Sharded publishing: work items failed on every receive (an item the publisher cannot read, or an invocation that crashed each time) and SQS moved them to the work dead-letter queue. Their alerts were not published; the run that queued them stops waiting for them and leaves the watermark where it was.',
    action:
      'Find the item in the publisher log (dispatch and item id, reason) and fix the cause. Then `news-alerts replay --parked --dry-run` shows what the queue holds, and `news-alerts replay --parked` parks and sends every readable item (the ledger skips what was sent); an unreadable one stays in the queue, named by its message id, for you to delete.',
  },
  {
    name: 'work-queue-age',
    meaning:
      'Sharded publishing: the oldest work item has waited longer than all its retries could take. Publishers are not keeping up with a burst, or are not running (event source disabled, throttled, failing at start).',
    action:
      'Check the publisher function (errors, throttles, duration) and its event source on the dashboard; raise publisherConcurrency if it is only slow. Runs stop waiting for such items and read their days again, so alerts are late, not lost.',
  },
];

/**
 * The search term that finds every audience topic by its name prefix (`news-alerts-audience-`):
 * a partial match, unquoted. CloudWatch's search has no prefix match, and a quoted value matches
 * only the exact name, so `"news-alerts-audience-"` found no topic at all. Unquoted, the prefix's
 * hyphens make it a composite of its tokens (news, alerts, audience), which every audience topic's
 * name holds in that order (CloudWatch User Guide, "CloudWatch search expression syntax": partial
 * matches and non-alphanumeric characters). The trailing hyphen only separates tokens; a resource
 * prefix is lower-case letters, digits and hyphens (lib/config.ts), none of which needs escaping.
 */
export function audienceTopicSearchTerm(prefix: string): string {
  return prefix.replace(/-+$/, '');
}
