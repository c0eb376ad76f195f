/**
 * `publishMode: sharded` (issue 14) as the synthesized template has it: the work queue and its
 * dead-letter queue, the publisher behind an SQS event source that reports partial batch failures,
 * least-privilege grants on both functions, the alert function switched to sharded mode with an
 * abandon time its own configuration accepts, alarms, dashboard widgets and outputs; and the
 * context keys' validation. Assertions name behaviour, never logical ids.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App, RemovalPolicy, Stack } from 'aws-cdk-lib';
import { Match } from 'aws-cdk-lib/assertions';
import * as logs from 'aws-cdk-lib/aws-logs';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadAlertRunConfig } from '#alert-run/config';
import { parseStackConfig, StackConfigError } from '../../lib/config.ts';
import { ShardedPublishing } from '../../lib/constructs/sharded-publishing.ts';
import { StateTables } from '../../lib/constructs/state-tables.ts';
import { fullContext, type Synthesized, shippedContext, synthesize } from './synth.ts';

type Resource = { Type: string; Properties: Record<string, unknown> };
type Statement = { Effect: string; Action: string | string[]; Resource?: unknown; Condition?: unknown };

const shardedContext = {
  ...fullContext,
  publishMode: 'sharded',
  publisherConcurrency: 16,
  publisherBatchSize: 5,
  alertEnvironmentOverrides: { NEWS_API_MAX_PAGES: 50, SNS_CONCURRENCY: 12 },
};

let synth: Synthesized;
let resources: Record<string, Resource>;

beforeAll(() => {
  synth = synthesize(shardedContext);
  const raw = synth.template.toJSON().Resources as Record<
    string,
    { Type: string; Properties?: Record<string, unknown> }
  >;
  resources = Object.fromEntries(
    Object.entries(raw).map(([id, resource]) => [id, { ...resource, Properties: resource.Properties ?? {} }]),
  );
});

const ofType = (type: string) => Object.entries(resources).filter(([, resource]) => resource.Type === type);

function functionResource(descriptionPart: string): [string, Resource] {
  const found = ofType('AWS::Lambda::Function').filter(([, resource]) =>
    String(resource.Properties.Description ?? '').includes(descriptionPart),
  );
  expect(found).toHaveLength(1);
  return found[0] as [string, Resource];
}
const alertFunction = () => functionResource('scheduled alert run');
const publisherFunction = () => functionResource('publishes queued work items');
const environmentOf = ([, resource]: [string, Resource]) =>
  (resource.Properties.Environment as { Variables: Record<string, unknown> }).Variables;
const actions = (statement: Statement) => [statement.Action].flat();
const policyOfRole = ([, fn]: [string, Resource]): Statement[] => {
  const roleId = (fn.Properties.Role as { 'Fn::GetAtt': [string, string] })['Fn::GetAtt'][0];
  return ofType('AWS::IAM::Policy')
    .filter(([, policy]) => (policy.Properties.Roles as { Ref: string }[]).some((role) => role.Ref === roleId))
    .flatMap(([, policy]) => (policy.Properties.PolicyDocument as { Statement: Statement[] }).Statement);
};

/** The work queue: the one queue with a redrive policy. */
function workQueue(): [string, Resource] {
  const found = ofType('AWS::SQS::Queue').filter(([, queue]) => queue.Properties.RedrivePolicy !== undefined);
  expect(found).toHaveLength(1);
  return found[0] as [string, Resource];
}
/** The work dead-letter queue: where the work queue's redrive policy points. */
const workDeadLetterQueueId = (): string =>
  (workQueue()[1].Properties.RedrivePolicy as { deadLetterTargetArn: { 'Fn::GetAtt': [string, string] } })
    .deadLetterTargetArn['Fn::GetAtt'][0];
const queueArn = (id: string) => ({ 'Fn::GetAtt': [id, 'Arn'] });
const mentions = (value: unknown, id: string) => JSON.stringify(value).includes(`"${id}"`);

describe('the work queue', () => {
  it('is encrypted by SQS, lets its items be invisible for 6 publisher timeouts and moves them to a dead-letter queue after 3 receives', () => {
    const [, queue] = workQueue();
    expect(queue.Properties).toMatchObject({
      SqsManagedSseEnabled: true,
      VisibilityTimeout: 6 * 60,
      RedrivePolicy: { maxReceiveCount: 3 },
    });
    expect(resources[workDeadLetterQueueId()]).toMatchObject({
      Type: 'AWS::SQS::Queue',
      Properties: { SqsManagedSseEnabled: true, MessageRetentionPeriod: 14 * 24 * 3600 },
    });
    expect(ShardedPublishing.maxReceiveCount).toBe(3);
  });

  it('refuses every request not made over TLS, on the queue and on its dead-letter queue', () => {
    const [queueId] = workQueue();
    const dlqId = workDeadLetterQueueId();
    for (const id of [queueId, dlqId]) {
      const policies = ofType('AWS::SQS::QueuePolicy').filter(([, policy]) => mentions(policy.Properties.Queues, id));
      const statements = policies.flatMap(
        ([, policy]) => (policy.Properties.PolicyDocument as { Statement: Statement[] }).Statement,
      );
      expect(statements, id).toContainEqual(
        expect.objectContaining({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
      );
    }
  });
});

describe('the publisher', () => {
  it('runs the project bundle (Node 22, arm64, traced) with a 60 s timeout and its own state-table settings', () => {
    const [, fn] = publisherFunction();
    expect(fn.Properties).toMatchObject({
      Runtime: 'nodejs22.x',
      Architectures: ['arm64'],
      Timeout: 60,
      TracingConfig: { Mode: 'Active' },
      Handler: 'index.handler',
    });
    expect(environmentOf(publisherFunction())).toMatchObject({
      STATE_TABLE_NAME: { Ref: expect.any(String) },
      LEDGER_RETENTION_DAYS: '14',
      WORK_MAX_RECEIVE_COUNT: '3',
      SNS_CONCURRENCY: '12',
      NODE_OPTIONS: '--enable-source-maps',
    });
    const alertState = (environmentOf(alertFunction()).STATE_TABLE_NAME as { Ref: string }).Ref;
    expect(environmentOf(publisherFunction()).STATE_TABLE_NAME).toEqual({ Ref: alertState });
  });

  it('drains the work queue through an event source mapping with partial batch responses, the batch size, a 1 s batching window and the maximum concurrency', () => {
    const [queueId] = workQueue();
    const [publisherId] = publisherFunction();
    synth.template.resourceCountIs('AWS::Lambda::EventSourceMapping', 1);
    synth.template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      EventSourceArn: queueArn(queueId),
      FunctionName: { Ref: publisherId },
      FunctionResponseTypes: ['ReportBatchItemFailures'],
      BatchSize: 5,
      // Full batches: a publisher invocation costs its claim and settlement whatever it holds.
      MaximumBatchingWindowInSeconds: 1,
      ScalingConfig: { MaximumConcurrency: 16 },
    });
  });

  it('may read and write the state table and publish to audience topics, and touch no other table or queue', () => {
    const statements = policyOfRole(publisherFunction());
    const [queueId] = workQueue();
    const stateId = (environmentOf(publisherFunction()).STATE_TABLE_NAME as { Ref: string }).Ref;
    const dynamo = statements.filter((statement) =>
      actions(statement).some((action) => action.startsWith('dynamodb:')),
    );
    expect(dynamo.length).toBeGreaterThan(0);
    for (const statement of dynamo) {
      for (const resource of [statement.Resource].flat()) expect(mentions(resource, stateId)).toBe(true);
    }
    expect(dynamo.flatMap(actions)).toEqual(
      expect.arrayContaining(['dynamodb:BatchGetItem', 'dynamodb:BatchWriteItem', 'dynamodb:ConditionCheckItem']),
    );
    expect(dynamo.flatMap(actions).filter((action) => /Scan|Delete.*Table|Stream|\*/.test(action))).toEqual([]);
    const publish = statements.filter((statement) => actions(statement).includes('sns:Publish'));
    expect(publish).toHaveLength(1);
    expect(JSON.stringify(publish[0]?.Resource)).toContain('news-alerts-audience-*');
    const sqs = statements.filter((statement) => actions(statement).some((action) => action.startsWith('sqs:')));
    for (const statement of sqs) {
      expect(statement.Resource).toEqual(queueArn(queueId));
      expect(actions(statement)).not.toContain('sqs:SendMessage');
      expect(actions(statement)).not.toContain('sqs:PurgeQueue');
    }
  });
});

describe('the alert function in sharded mode', () => {
  it('is told the mode, the queue and how long to wait for an earlier run (visibility x receives + 5 min)', () => {
    const [queueId] = workQueue();
    expect(environmentOf(alertFunction())).toMatchObject({
      PUBLISH_MODE: 'sharded',
      WORK_QUEUE_URL: { Ref: queueId },
      DISPATCH_ABANDON_AFTER_MS: String((360 * 3 + 300) * 1000),
    });
  });

  it('has an environment its own cold-start validation accepts, reading sharded mode from it', () => {
    const environment = Object.fromEntries(
      Object.entries(environmentOf(alertFunction())).map(([name, value]) => [
        name,
        typeof value === 'string'
          ? value
          : name === 'WORK_QUEUE_URL'
            ? 'https://sqs.us-east-1.amazonaws.com/123456789012/work'
            : `resolved-${name.toLowerCase()}`,
      ]),
    );
    const config = loadAlertRunConfig(environment);
    expect(config.publishMode).toBe('sharded');
    expect(config.run.dispatchAbandonAfterMs).toBe(1_380_000);
  });

  it('may send to the work queue and do nothing else with it', () => {
    const [queueId] = workQueue();
    const onQueue = policyOfRole(alertFunction()).filter((statement) => mentions(statement.Resource, queueId));
    expect(onQueue).toEqual([{ Effect: 'Allow', Action: 'sqs:SendMessage', Resource: queueArn(queueId) }]);
  });
});

describe('monitoring in sharded mode', () => {
  it('alarms on the work dead-letter queue depth and on work items older than all their retries could take', () => {
    const [queueId] = workQueue();
    const dlqId = workDeadLetterQueueId();
    synth.template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      AlarmName: 'news-alerts-work-dlq',
      MetricName: 'ApproximateNumberOfMessagesVisible',
      Dimensions: [{ Name: 'QueueName', Value: { 'Fn::GetAtt': [dlqId, 'QueueName'] } }],
      Threshold: 1,
      AlarmDescription: Match.stringLikeRegexp('What to do: .*docs/operate.md, "work-dlq"'),
    });
    synth.template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      AlarmName: 'news-alerts-work-queue-age',
      MetricName: 'ApproximateAgeOfOldestMessage',
      Dimensions: [{ Name: 'QueueName', Value: { 'Fn::GetAtt': [queueId, 'QueueName'] } }],
      ComparisonOperator: 'GreaterThanThreshold',
      Threshold: 360 * 3,
      AlarmActions: [{ Ref: Match.anyValue() }],
    });
  });

  it('graphs queued vs published, the work queue and the publisher on the dashboard', () => {
    const [, dashboard] = ofType('AWS::CloudWatch::Dashboard')[0] as [string, Resource];
    const body = JSON.stringify(dashboard.Properties.DashboardBody);
    for (const text of [
      'Sharded publishing: queued vs published',
      'NotificationsQueued',
      'WorkItemsQueued',
      'NotificationsPublished',
      'Work queue (items)',
      'ApproximateAgeOfOldestMessage',
      'Publisher function',
      'WorkItemsDone',
      'WorkItemsFailed',
    ]) {
      expect(body, text).toContain(text);
    }
  });

  it('outputs the work queue, its dead-letter queue and the publisher for the CLI and ops', () => {
    const outputs = synth.template.toJSON().Outputs as Record<string, { Value: unknown }>;
    const [queueId] = workQueue();
    const [publisherId] = publisherFunction();
    expect(outputs.WorkQueueUrl?.Value).toEqual({ Ref: queueId });
    expect(outputs.WorkDeadLetterQueueUrl?.Value).toEqual({ Ref: workDeadLetterQueueId() });
    expect(outputs.PublisherFunctionName?.Value).toEqual({ Ref: publisherId });
  });
});

describe('the publisher environment at synth', () => {
  it('is checked with the publisher’s own cold-start validation: a value it would refuse fails the synth, naming it', () => {
    const stack = new Stack(new App({ context: { 'aws:cdk:bundling-stacks': [] } }), 'Check');
    const config = { ...parseStackConfig({ ...shippedContext(), publishMode: 'sharded' }), ledgerRetentionDays: 500 };
    const sharded = new ShardedPublishing(stack, 'Sharded', {
      config,
      logRetention: logs.RetentionDays.ONE_WEEK,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    expect(() => sharded.validateEnvironment()).toThrow(/publisher function would refuse.*STATE_TABLE_NAME/);
    sharded.useStateTable(
      new StateTables(stack, 'Tables', { encryption: 'aws-managed', removalPolicy: RemovalPolicy.DESTROY }),
    );
    expect(() => sharded.validateEnvironment()).toThrow(StackConfigError);
    expect(() => sharded.validateEnvironment()).toThrow(/LEDGER_RETENTION_DAYS/);
  });
});

describe('cdk synth -c publishMode=sharded through bin/app.ts (cdk-nag packs on)', () => {
  const runApp = (context: Record<string, unknown>, read: (outdir: string) => unknown = () => undefined) => {
    const outdir = mkdtempSync(join(tmpdir(), 'news-alerts-app-'));
    try {
      const result = spawnSync(join('node_modules', '.bin', 'tsx'), ['bin/app.ts'], {
        cwd: new URL('../../', import.meta.url),
        encoding: 'utf8',
        // What the CDK CLI hands the app: cdk.json's context merged with -c values (as strings).
        env: {
          ...process.env,
          CDK_OUTDIR: outdir,
          CDK_CONTEXT_JSON: JSON.stringify({ ...shippedContext(), ...context, 'aws:cdk:bundling-stacks': [] }),
        },
      });
      return { result, read: result.status === 0 ? read(outdir) : undefined };
    } finally {
      rmSync(outdir, { recursive: true, force: true });
    }
  };

  it('synthesizes the queue, its dead-letter queue, the event source mapping with ReportBatchItemFailures and the alarms', () => {
    const { result, read } = runApp({ publishMode: 'sharded', publisherConcurrency: '8' }, (outdir) =>
      JSON.parse(readFileSync(join(outdir, 'NewsAlerts.template.json'), 'utf8')),
    );
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
    const resources = Object.values((read as { Resources: Record<string, Resource> }).Resources);
    const of = (type: string) => resources.filter((resource) => resource.Type === type);
    expect(of('AWS::SQS::Queue').filter((queue) => queue.Properties.RedrivePolicy !== undefined)).toHaveLength(1);
    expect(of('AWS::Lambda::EventSourceMapping')).toEqual([
      expect.objectContaining({
        Properties: expect.objectContaining({
          FunctionResponseTypes: ['ReportBatchItemFailures'],
          ScalingConfig: { MaximumConcurrency: 8 },
        }),
      }),
    ]);
    const alarmNames = of('AWS::CloudWatch::Alarm').map((alarm) => alarm.Properties.AlarmName);
    expect(alarmNames).toEqual(expect.arrayContaining(['news-alerts-work-dlq', 'news-alerts-work-queue-age']));
  });

  it('fails with one clear line naming publishMode when it is neither single nor sharded', () => {
    const { result } = runApp({ publishMode: 'auto' });
    expect(result.status).toBe(1);
    expect(result.stderr).toMatch(
      /^news-alerts: invalid news-alerts configuration .*publishMode: must be "single" or "sharded"/m,
    );
    expect(result.stderr).not.toMatch(/\n\s+at /);
  });
});

describe('sharded options', () => {
  const refusal = (context: Record<string, unknown>): string => {
    try {
      parseStackConfig({ ...shippedContext(), ...context });
    } catch (error) {
      expect(error).toBeInstanceOf(StackConfigError);
      return (error as Error).message;
    }
    throw new Error(`expected ${JSON.stringify(context)} to be refused`);
  };

  it('default to single mode, 4 publishers at most, 99 items per batch', () => {
    expect(parseStackConfig(shippedContext())).toMatchObject({
      publishMode: 'single',
      publisherConcurrency: 4,
      publisherBatchSize: 99,
    });
  });

  it('accept `-c key=value` strings', () => {
    expect(
      parseStackConfig({
        ...shippedContext(),
        publishMode: 'sharded',
        publisherConcurrency: '1000',
        publisherBatchSize: '1',
      }),
    ).toMatchObject({ publishMode: 'sharded', publisherConcurrency: 1000, publisherBatchSize: 1 });
  });

  it('refuse values SQS event sources would not take, naming the key and the range', () => {
    expect(refusal({ publishMode: 'auto' })).toMatch(/publishMode.*must be "single" or "sharded"/);
    expect(refusal({ publisherConcurrency: 1 })).toMatch(/publisherConcurrency.*at least 2/);
    expect(refusal({ publisherConcurrency: 1001 })).toMatch(/publisherConcurrency.*at most 1000/);
    expect(refusal({ publisherConcurrency: 'many' })).toMatch(/publisherConcurrency.*whole number from 2 to 1000/);
    expect(refusal({ publisherBatchSize: 0 })).toMatch(/publisherBatchSize.*at least 1/);
    expect(refusal({ publisherBatchSize: 100 })).toMatch(/publisherBatchSize.*at most 99/);
  });

  it('leave the sharded variables to the stack: alertEnvironmentOverrides may not set them', () => {
    for (const name of ['PUBLISH_MODE', 'WORK_QUEUE_URL', 'DISPATCH_ABANDON_AFTER_MS']) {
      expect(refusal({ alertEnvironmentOverrides: { [name]: '1' } })).toContain(
        'is set by the stack from its own option',
      );
    }
  });
});
