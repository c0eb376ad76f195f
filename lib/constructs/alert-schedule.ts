import { Duration, type RemovalPolicy, Stack, TimeZone, Validations } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import * as scheduler from 'aws-cdk-lib/aws-scheduler';
import * as targets from 'aws-cdk-lib/aws-scheduler-targets';
import { Construct } from 'constructs';
import { DeadLetterQueue } from './dead-letter-queue.ts';

/** Props of {@link AlertSchedule}. */
export interface AlertScheduleProps {
  readonly target: lambda.IFunction;
  /** `rate(…)` or `cron(…)`, evaluated in `timeZone`. */
  readonly expression: string;
  readonly timeZone: string;
  /** Minutes between runs; bounds how long an undelivered invocation is worth retrying. */
  readonly intervalMinutes: number;
  /** 0 fires exactly on time; otherwise Scheduler may start up to this many minutes late to spread load. */
  readonly flexibleWindowMinutes: number;
  readonly retryAttempts: number;
  readonly removalPolicy: RemovalPolicy;
}

/**
 * EventBridge Scheduler (not a legacy scheduled rule) invoking the alert function asynchronously.
 * Scheduler retries an invocation it could not deliver for at most one interval (after that the
 * next run has started anyway), then parks it in a dead-letter queue with a depth alarm.
 */
export class AlertSchedule extends Construct {
  readonly schedule: scheduler.Schedule;
  readonly deadLetterQueue: DeadLetterQueue;

  constructor(scope: Construct, id: string, props: AlertScheduleProps) {
    super(scope, id);
    this.deadLetterQueue = new DeadLetterQueue(this, 'DeadLetters', {
      purpose: 'invocations EventBridge Scheduler could not deliver to the alert function',
      removalPolicy: props.removalPolicy,
    });
    const stack = Stack.of(this);
    // Created here rather than by the target, so the acknowledgement below sits next to it.
    const role = new iam.Role(this, 'Role', {
      description: 'EventBridge Scheduler: invokes the news-alerts alert function',
      assumedBy: new iam.ServicePrincipal('scheduler.amazonaws.com', {
        conditions: { StringEquals: { 'aws:SourceAccount': stack.account } },
      }),
    });
    const maxEventAgeSeconds = Math.min(Math.max(props.intervalMinutes * 60, 60), 86_400);
    this.schedule = new scheduler.Schedule(this, 'Schedule', {
      description: 'news-alerts: starts an alert run',
      schedule: scheduler.ScheduleExpression.expression(props.expression, TimeZone.of(props.timeZone)),
      timeWindow:
        props.flexibleWindowMinutes > 0
          ? scheduler.TimeWindow.flexible(Duration.minutes(props.flexibleWindowMinutes))
          : scheduler.TimeWindow.off(),
      target: new targets.LambdaInvoke(props.target, {
        role,
        deadLetterQueue: this.deadLetterQueue.queue,
        retryAttempts: props.retryAttempts,
        maxEventAge: Duration.seconds(maxEventAgeSeconds),
      }),
    });
    Validations.of(role).acknowledge({
      id: `AwsSolutions-IAM5[Resource::<${stack.getLogicalId(props.target.node.defaultChild as lambda.CfnFunction)}.Arn>:*]`,
      reason:
        'lambda:InvokeFunction on this one function: CDK grants its ARN and its versions and aliases (<arn>:*) together; no other function is covered.',
    });
  }
}
