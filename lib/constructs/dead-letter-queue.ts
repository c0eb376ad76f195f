import { Duration, type RemovalPolicy, Validations } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';

/** Props of {@link DeadLetterQueue}. */
export interface DeadLetterQueueProps {
  /** What ends up here and why: shown in the console and in the acknowledgement of the nag rules. */
  readonly purpose: string;
  readonly removalPolicy: RemovalPolicy;
}

/**
 * A queue that holds what could not be processed (failed schedule targets, failed async
 * invocations, undeliverable notifications) for ops to inspect and redrive. SQS-managed
 * encryption, because SNS, Lambda and EventBridge Scheduler can all write to it without a key
 * policy; TLS only; the longest retention SQS offers, so a long weekend loses nothing.
 */
export class DeadLetterQueue extends Construct {
  readonly queue: sqs.Queue;

  constructor(scope: Construct, id: string, props: DeadLetterQueueProps) {
    super(scope, id);
    this.queue = new sqs.Queue(this, 'Queue', {
      encryption: sqs.QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: Duration.days(14),
      removalPolicy: props.removalPolicy,
    });
    const reason = `This queue is itself the dead-letter queue (${props.purpose}); a dead-letter queue behind it would only move the same messages again. Its depth has an alarm.`;
    Validations.of(this.queue).acknowledge({ id: 'AwsSolutions-SQS3', reason });
    Validations.of(this.queue).acknowledge({ id: 'Serverless-SQSRedrivePolicy', reason });
  }

  /**
   * Lets SNS park undeliverable notifications here from every topic matching `topicArnPattern`,
   * including topics the CLI creates after the deploy (their subscriptions' redrive policies point
   * here too).
   */
  allowSnsFrom(topicArnPattern: string): void {
    this.queue.addToResourcePolicy(
      new iam.PolicyStatement({
        principals: [new iam.ServicePrincipal('sns.amazonaws.com')],
        actions: ['sqs:SendMessage'],
        resources: [this.queue.queueArn],
        conditions: { ArnLike: { 'aws:SourceArn': topicArnPattern } },
      }),
    );
  }
}
