/**
 * Foreign topics (issue 10, item 10): an audience topic must be in the deployment's account and
 * region, which come from the stack id (or the sandbox's STS).
 */
import { describe, expect, it } from 'vitest';
import { topicArnProblem } from '../../cli/audience-topics.ts';
import { homeOfStackId } from '../../cli/stack-target.ts';

const home = { partition: 'aws', region: 'us-east-1', account: '123456789012' };

describe('topicArnProblem', () => {
  it('accepts a topic of the stack’s own account and region', () => {
    expect(topicArnProblem('arn:aws:sns:us-east-1:123456789012:news-alerts-audience-desk', home)).toBeUndefined();
  });

  it('refuses another account, another region or another partition, naming each and the fix', () => {
    expect(topicArnProblem('arn:aws:sns:us-east-1:999999999999:t', home)).toMatch(
      /account 999999999999, not the stack's account 123456789012; .*Omit --topic-arn to create one/,
    );
    expect(topicArnProblem('arn:aws:sns:eu-west-1:123456789012:t', home)).toMatch(
      /region eu-west-1, not the stack's region us-east-1/,
    );
    expect(topicArnProblem('arn:aws-cn:sns:us-east-1:123456789012:t', home)).toMatch(/partition aws-cn, not aws/);
    expect(topicArnProblem('arn:aws:sns:eu-west-1:999999999999:t', home)).toMatch(/account .* and region/);
  });

  it('refuses what is not a topic ARN', () => {
    expect(topicArnProblem('arn:aws:sqs:us-east-1:123456789012:q', home)).toMatch(/is not an SNS topic ARN/);
    expect(topicArnProblem('news-alerts-audience-desk', home)).toMatch(/is not an SNS topic ARN/);
  });
});

describe('homeOfStackId', () => {
  it('reads the account and region from a CloudFormation stack id', () => {
    expect(
      homeOfStackId(
        'arn:aws:cloudformation:ap-northeast-2:210987654321:stack/NewsAlerts/0a1b2c3d-aaaa-bbbb-cccc-1234567890ab',
      ),
    ).toEqual({ partition: 'aws', region: 'ap-northeast-2', account: '210987654321' });
    expect(homeOfStackId(undefined)).toBeUndefined();
    expect(homeOfStackId('NewsAlerts')).toBeUndefined();
  });
});
