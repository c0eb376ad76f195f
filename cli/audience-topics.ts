/**
 * An audience's SNS topic as the CLI finds, checks and creates it: the stored audience, its topic
 * ARN, the topic's subscriptions, and a topic made the way the stack makes one.
 *
 * What this module guarantees: every failure names the audience, the topic and the fix (an
 * audience that does not exist, one without a topic, a topic that cannot be read: `audiences
 * repair` or `--topic-arn`); a topic it creates has the stack's key and refuses anything but TLS.
 *
 * Shared by the `audiences` and `subscriptions` commands, `email`, `replay`, `deliveries`, the
 * workbench and the console; it imports none of them.
 */
import {
  CreateTopicCommand,
  ListSubscriptionsByTopicCommand,
  NotFoundException,
  SetTopicAttributesCommand,
  type SNSClient,
  type Subscription,
} from '@aws-sdk/client-sns';
import { NotFoundError, OperationFailedError, UsageError } from './errors.ts';
import { newsAlerts } from './hints.ts';
import { getItem, type Item, type ItemTable } from './items.ts';
import type { DeploymentHome, Target } from './target.ts';
import { didYouMean, hinted } from './unknown-ids.ts';

/** The audiences table, as the item helpers read it. */
export const audiencesTable = (target: Target): ItemTable => ({
  tableName: target.names.audiencesTable,
  keyName: 'audienceId',
  noun: 'audience',
});

/** The topic name the stack's convention gives an audience. */
export const topicNameOf = (target: Target, audienceId: string): string =>
  `${target.names.audienceTopicPrefix}${audienceId}`;

/** The stack's `enforceSSL` statement (what CDK's Topic adds): no publishing over plain HTTP. */
export function sslOnlyTopicPolicy(topicArn: string): string {
  return JSON.stringify({
    Version: '2012-10-17',
    Statement: [
      {
        Sid: 'AllowPublishThroughSSLOnly',
        Effect: 'Deny',
        Principal: '*',
        Action: 'sns:Publish',
        Resource: topicArn,
        Condition: { Bool: { 'aws:SecureTransport': 'false' } },
      },
    ],
  });
}

/** Every subscription of a topic (all pages). */
export async function topicSubscriptions(sns: SNSClient, topicArn: string): Promise<Subscription[]> {
  const subscriptions: Subscription[] = [];
  let NextToken: string | undefined;
  do {
    const page = await sns.send(new ListSubscriptionsByTopicCommand({ TopicArn: topicArn, NextToken }));
    subscriptions.push(...(page.Subscriptions ?? []));
    NextToken = page.NextToken;
  } while (NextToken);
  return subscriptions;
}

/**
 * Why a topic ARN cannot be an audience topic of this deployment, or undefined when it can. The
 * alert function may only publish in its own account and region, and a topic elsewhere makes
 * every SNS call about it fail (NotFound or AuthorizationError).
 */
export function topicArnProblem(topicArn: string, home: DeploymentHome): string | undefined {
  const match = /^arn:([^:]+):sns:([^:]*):([^:]*):([^:]+)$/.exec(topicArn);
  if (!match) return `"${topicArn}" is not an SNS topic ARN (arn:aws:sns:<region>:<account>:<name>)`;
  const [, partition, region, account] = match;
  const problems: string[] = [];
  if (account !== home.account) problems.push(`account ${account}, not the stack's account ${home.account}`);
  if (region !== home.region) problems.push(`region ${region}, not the stack's region ${home.region}`);
  if (partition !== home.partition) problems.push(`partition ${partition}, not ${home.partition}`);
  if (problems.length === 0) return undefined;
  return `the topic ${topicArn} is in ${problems.join(' and ')}; the alert function can only publish to topics in its own account and region. Omit --topic-arn to create one, or give a topic of ${home.account} in ${home.region}`;
}

/**
 * An SNS failure about one audience's topic as a CLI error that names the audience, the topic and
 * the fix: a topic that is gone is made again, with its recorded subscribers, by `audiences
 * repair`; one in another account (or otherwise unreadable) is replaced with `--topic-arn`.
 */
export function audienceTopicError(audienceId: string, topicArn: string, error: unknown): OperationFailedError {
  const reason = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  const replace = `point it at a topic of this stack with '${newsAlerts()} audiences update ${audienceId} --topic-arn <arn>'`;
  // SNS says NotFound for a deleted topic and for one of another account alike: name both fixes.
  const fix =
    error instanceof NotFoundException
      ? `if it was deleted, recreate it and its subscriptions with '${newsAlerts()} audiences repair ${audienceId}'; else ${replace}`
      : replace;
  return new OperationFailedError(`audience ${audienceId}: its topic ${topicArn} cannot be read (${reason}); ${fix}`, {
    cause: error,
  });
}

/** Every subscription of an audience's topic, or {@link audienceTopicError}. */
export async function audienceSubscriptions(
  target: Target,
  audienceId: string,
  topicArn: string,
): Promise<Subscription[]> {
  try {
    return await topicSubscriptions(target.clients.sns, topicArn);
  } catch (error) {
    throw audienceTopicError(audienceId, topicArn, error);
  }
}

/** The stored audience, or NotFoundError naming what to do. */
export async function requireAudience(target: Target, audienceId: string): Promise<Item> {
  const item = await getItem(target.clients.documents, audiencesTable(target), audienceId);
  if (item === undefined) {
    throw new NotFoundError(
      `audience ${audienceId} does not exist in ${target.label}${hinted(await didYouMean(target, 'audience', [audienceId]), `${newsAlerts()} audiences list`)}`,
    );
  }
  return item;
}

/** The topic ARN of a stored audience. */
export function topicArnOf(audience: Item, audienceId: string): string {
  if (typeof audience.topicArn !== 'string' || audience.topicArn === '') {
    throw new UsageError(
      `audience ${audienceId} has no topicArn; fix it with '${newsAlerts()} audiences update ${audienceId} --topic-arn <arn>'`,
    );
  }
  return audience.topicArn;
}

/** Creates (or finds) the audience topic with the stack's key and the TLS-only policy. */
export async function createTopic(
  warn: (text: string) => void,
  target: Target,
  audienceId: string,
  topicName: string,
): Promise<string> {
  const { sns } = target.clients;
  const keyArn = target.names.audienceTopicKeyArn;
  if (target.kind === 'stack' && !keyArn) {
    warn('the stack has no AudienceTopicKeyArn output; the topic is created without a customer-managed key');
  }
  const { TopicArn } = await sns.send(
    new CreateTopicCommand({
      Name: topicName,
      ...(keyArn ? { Attributes: { KmsMasterKeyId: keyArn } } : {}),
      Tags: [
        { Key: 'project', Value: 'news-alerts' },
        { Key: 'news-alerts:audience', Value: audienceId },
      ],
    }),
  );
  if (!TopicArn) throw new Error(`SNS returned no ARN for topic ${topicName}`);
  await sns.send(
    new SetTopicAttributesCommand({ TopicArn, AttributeName: 'Policy', AttributeValue: sslOnlyTopicPolicy(TopicArn) }),
  );
  return TopicArn;
}
