/**
 * Whether an audience's SNS topic is still there, as `audiences list` and the console's audience
 * list show it: the run parks every alert of an audience whose topic was deleted, so a list that
 * says "ok" for it would be wrong.
 */
import { GetTopicAttributesCommand, NotFoundException, type SNSClient } from '@aws-sdk/client-sns';

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
