import { type RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as sns from 'aws-cdk-lib/aws-sns';
import * as subscriptions from 'aws-cdk-lib/aws-sns-subscriptions';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { type AudienceConfig, audienceTopicName } from '../config.ts';

/** Props of {@link AudienceTopics}. */
export interface AudienceTopicsProps {
  readonly resourcePrefix: string;
  /** Audiences declared in configuration: each gets its topic and subscriptions here. */
  readonly audiences: readonly AudienceConfig[];
  /** Where SNS parks notifications it could not deliver to a subscriber after its retries. */
  readonly deliveryDeadLetterQueue: sqs.IQueue;
  readonly removalPolicy: RemovalPolicy;
}

/**
 * One SNS topic per audience, `<prefix>-audience-<audienceId>`, encrypted with a customer-managed
 * key (rotated yearly) and refusing anything but TLS, with the email, SMS and HTTPS subscribers
 * declared in configuration. Audiences the CLI creates later follow the same naming and use the
 * same key, so {@link AudienceTopics.grantPublish} covers them without a redeploy.
 */
export class AudienceTopics extends Construct {
  readonly key: kms.Key;
  /** Declared audiences' topics by audience id. */
  readonly topics: ReadonlyMap<string, sns.Topic>;
  /** `<prefix>-audience-`: every audience topic's name starts with it. */
  readonly topicNamePrefix: string;
  /** ARN matching every audience topic of this deployment, present and future. */
  readonly topicArnPattern: string;
  readonly #deadLetterQueue: sqs.IQueue;

  constructor(scope: Construct, id: string, props: AudienceTopicsProps) {
    super(scope, id);
    this.#deadLetterQueue = props.deliveryDeadLetterQueue;
    this.topicNamePrefix = audienceTopicName(props.resourcePrefix, '');
    this.topicArnPattern = Stack.of(this).formatArn({ service: 'sns', resource: `${this.topicNamePrefix}*` });
    this.key = new kms.Key(this, 'TopicsKey', {
      description: `news-alerts: encrypts the audience topics (${this.topicNamePrefix}*)`,
      enableKeyRotation: true,
      removalPolicy: props.removalPolicy,
    });
    const topics = new Map<string, sns.Topic>();
    for (const audience of props.audiences) {
      const topic = new sns.Topic(this, `Audience-${audience.audienceId}`, {
        topicName: audienceTopicName(props.resourcePrefix, audience.audienceId),
        masterKey: this.key,
        enforceSSL: true,
      });
      topic.applyRemovalPolicy(props.removalPolicy);
      const redrive = { deadLetterQueue: this.#deadLetterQueue };
      for (const email of audience.emails) topic.addSubscription(new subscriptions.EmailSubscription(email, redrive));
      for (const phone of audience.phoneNumbers) {
        // SmsSubscription drops its deadLetterQueue prop; the plain Subscription keeps the redrive policy.
        new sns.Subscription(this, `Audience-${audience.audienceId}-sms-${phone}`, {
          topic,
          protocol: sns.SubscriptionProtocol.SMS,
          endpoint: phone,
          ...redrive,
        });
      }
      for (const endpoint of audience.httpsEndpoints) {
        topic.addSubscription(
          new subscriptions.UrlSubscription(endpoint.url, {
            ...redrive,
            protocol: sns.SubscriptionProtocol.HTTPS,
            rawMessageDelivery: endpoint.rawMessageDelivery,
          }),
        );
      }
      topics.set(audience.audienceId, topic);
    }
    this.topics = topics;
  }

  /**
   * Lets `grantee` publish to every audience topic of this deployment, including topics the CLI
   * creates later (matched by name prefix), and use the topic key as SNS requires of publishers
   * to encrypted topics.
   */
  grantPublish(grantee: iam.IGrantable): void {
    grantee.grantPrincipal.addToPrincipalPolicy(
      new iam.PolicyStatement({ actions: ['sns:Publish'], resources: [this.topicArnPattern] }),
    );
    // Exactly what SNS calls on a publisher's behalf for an encrypted topic (no GenerateDataKey* wildcard).
    this.key.grant(grantee, 'kms:GenerateDataKey', 'kms:Decrypt');
    if (grantee.grantPrincipal instanceof iam.Role) {
      Validations.of(grantee.grantPrincipal).acknowledge({
        id: `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:sns:<AWS::Region>:<AWS::AccountId>:${this.topicNamePrefix}*]`,
        reason: `Audience topics are named ${this.topicNamePrefix}<audienceId>, and the CLI adds audiences after the deploy; the wildcard covers this deployment's audience topics only.`,
      });
    }
  }
}
