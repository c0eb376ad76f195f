/**
 * Whether an audience's SNS topic is still there, as `audiences list` and the console's audience
 * list show it: the run parks every alert of an audience whose topic was deleted, so a list that
 * says "ok" for it would be wrong.
 */
import { GetTopicAttributesCommand, NotFoundException, type SNSClient } from '@aws-sdk/client-sns';
import { newsAlerts } from '../hints.ts';

/** How many topics `audiences list` checks at once. */
export const topicChecks = 4;

/** A topic that is gone or cannot be read, as a short STATUS and the reason with the fix. */
export async function topicState(
  sns: SNSClient,
  topicArn: string,
): Promise<{ status: string; problem: string } | undefined> {
  try {
    await sns.send(new GetTopicAttributesCommand({ TopicArn: topicArn }));
    return undefined;
  } catch (error) {
    return topicStateOf(topicArn, error);
  }
}

export function topicStateOf(topicArn: string, error: unknown): { status: string; problem: string } {
  if (error instanceof NotFoundException) {
    return {
      status: 'topic missing',
      problem: `the topic ${topicArn} does not exist: alerts for this audience are parked`,
    };
  }
  const name = error instanceof Error ? error.name : String(error);
  return { status: `topic unreadable (${name})`, problem: `the topic ${topicArn} cannot be read (${name})` };
}

/**
 * What is wrong with an audience's topic and the command that fixes it, as `audiences show` and
 * the console's audience page say it: a deleted topic is repaired (made again, its recorded
 * subscribers with it); one that cannot be read may be another's, and an audience stored without
 * a topic has nothing a repair could make again, so both are pointed at another topic.
 */
export function topicProblemWithFix(
  audienceId: string,
  topicArn: unknown,
  error?: unknown,
): { status: string; problem: string } {
  const replace = `'${newsAlerts()} audiences update ${audienceId} --topic-arn <arn>'`;
  const replay = `'${newsAlerts()} replay --parked --audience ${audienceId}'`;
  if (typeof topicArn !== 'string' || topicArn === '') {
    const what = topicArn === undefined || topicArn === '' ? 'has no topicArn' : 'has a topicArn that is not text';
    return { status: 'no topic', problem: `the audience ${what}: give it one with ${replace}` };
  }
  const state = topicStateOf(topicArn, error);
  const fix =
    state.status === 'topic missing'
      ? `repair it with '${newsAlerts()} audiences repair ${audienceId}'`
      : `fix the topic with ${replace}`;
  return {
    status: state.status,
    problem: `${state.problem.replace(/: alerts for this audience are parked$/, '')}: alerts for this audience are parked (${fix}, then ${replay})`,
  };
}
