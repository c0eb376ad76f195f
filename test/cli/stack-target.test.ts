/**
 * The deployed-stack target, with moto server standing in for AWS: a CloudFormation stack whose
 * outputs name a sandbox's tables and topics (the outputs the real stack has), and an alert
 * function whose environment is the sandbox's alert configuration. The CLI process gets no
 * `--local`: it finds everything from `--stack`, reaching moto through the standard
 * AWS_ENDPOINT_URL setting, as it would reach AWS with real credentials. moto runs Lambda
 * functions without Docker in its "simple" mode, which returns a scripted result: enough to
 * prove that `run` invokes the function the stack names and reports what it returns.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CloudFormationClient, CreateStackCommand, DeleteStackCommand } from '@aws-sdk/client-cloudformation';
import { GetQueueUrlCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exampleRules } from '#sandbox/examples';
import { localAwsConfig, type MotoServer, startMoto } from '#sandbox/moto';
import { namesFromOutputs } from '../../cli/stack-target.ts';
import { type CliSandbox, runCli, startCliSandbox } from './support.ts';

let sandbox: CliSandbox;
let cloudFormation: CloudFormationClient;
const stackName = () => `${sandbox.prefix}NewsAlerts`.replace(/[^A-Za-z0-9-]/g, '-');

/** The CLI against the "deployed" stack: no --local, endpoint and credentials from the environment. */
const stackCli = (args: readonly string[], stack = stackName()) =>
  runCli(['--stack', stack, '--region', 'us-east-1', ...args], {
    env: {
      AWS_ENDPOINT_URL: sandbox.descriptor.endpoint,
      AWS_ACCESS_KEY_ID: 'test',
      AWS_SECRET_ACCESS_KEY: 'test',
      NEWS_ALERTS_ACTOR: undefined,
    },
  });

let moto: MotoServer | undefined;

beforeAll(async () => {
  // A moto server of its own: once it holds a CloudFormation stack and a Lambda function, moto can
  // no longer dump its state, which other tests read to see SNS email and SMS deliveries.
  moto = await startMoto();
  sandbox = await startCliSandbox({ motoEndpoint: moto.endpoint });
  const { endpoint, names } = sandbox.descriptor;
  cloudFormation = new CloudFormationClient(localAwsConfig(endpoint));
  const environment = {
    ...sandbox.descriptor.alertEnvironment,
    NEWS_API_CA_PEM: sandbox.stack.config.provider.caPem ?? '',
  };
  const template = {
    Resources: {
      AlertRole: {
        Type: 'AWS::IAM::Role',
        Properties: {
          RoleName: `${sandbox.prefix}alert-run`,
          AssumeRolePolicyDocument: {
            Version: '2012-10-17',
            Statement: [{ Effect: 'Allow', Principal: { Service: 'lambda.amazonaws.com' }, Action: 'sts:AssumeRole' }],
          },
        },
      },
      // A cdk.json audience's topic: the stack's resource, named by the audience convention.
      CfnDeskTopic: {
        Type: 'AWS::SNS::Topic',
        Properties: { TopicName: `${names.audienceTopicPrefix}cfn-desk` },
      },
      // Where SNS puts what it could not deliver (`subscriptions failures` reads it).
      DeliveryDeadLetters: {
        Type: 'AWS::SQS::Queue',
        Properties: { QueueName: `${sandbox.prefix}delivery-dlq` },
      },
      AlertRun: {
        Type: 'AWS::Lambda::Function',
        Properties: {
          FunctionName: `${sandbox.prefix}alert-run`,
          Runtime: 'nodejs22.x',
          Handler: 'index.handler',
          Role: { 'Fn::GetAtt': ['AlertRole', 'Arn'] },
          Code: { ZipFile: 'exports.handler = async () => ({});' },
          Environment: { Variables: environment },
        },
      },
    },
    Outputs: {
      RulesTableName: { Value: names.rulesTable },
      AudiencesTableName: { Value: names.audiencesTable },
      StateTableName: { Value: names.stateTable },
      AudienceTopicPrefix: { Value: names.audienceTopicPrefix },
      ApiKeySecretArn: { Value: names.apiKeySecretId },
      AlertFunctionName: { Value: { Ref: 'AlertRun' } },
      SlackWebhookSecretPrefix: { Value: names.slackWebhookSecretPrefix },
      DeliveryDeadLetterQueueArn: { Value: { 'Fn::GetAtt': ['DeliveryDeadLetters', 'Arn'] } },
    },
  };
  // Lambda without Docker (set before the function is created: moto keeps such functions apart):
  // invocations return the results queued through moto's API.
  await fetch(`${endpoint}/moto-api/config`, {
    method: 'POST',
    body: JSON.stringify({ lambda: { use_docker: false } }),
  });
  await cloudFormation.send(new CreateStackCommand({ StackName: stackName(), TemplateBody: JSON.stringify(template) }));
});

afterAll(async () => {
  await cloudFormation?.send(new DeleteStackCommand({ StackName: stackName() })).catch(() => undefined);
  cloudFormation?.destroy();
  await sandbox?.stop();
  await moto?.stop();
});

describe('the deployed stack as target', () => {
  it('finds tables and topics from the stack outputs and the provider settings from the alert function', async () => {
    const rules = await stackCli(['--json', 'rules', 'list']);
    expect(rules.code, rules.stderr).toBe(0);
    expect(rules.json<{ ruleId: string }[]>()).toHaveLength(exampleRules.length);

    // Writes record the AWS caller (moto's STS) when no actor is given.
    const disable = await stackCli(['rules', 'disable', 'quakes']);
    expect(disable.code, disable.stderr).toBe(0);
    const shown = await stackCli(['--json', 'rules', 'show', 'quakes']);
    expect(shown.json()).toMatchObject({
      enabled: false,
      version: 2,
      updatedBy: expect.stringMatching(/^arn:aws:(iam|sts)::/),
    });

    // Preview reads the provider with the function's own configuration (base URL, zone, CA, secret).
    const preview = await stackCli(['--json', 'preview', '--from', '1d', '--no-samples']);
    expect(preview.code, preview.stderr).toBe(0);
    expect(preview.json<{ articles: number }>().articles).toBeGreaterThan(0);

    const created = await stackCli(['audiences', 'create', 'stack-desk', '--name', 'Stack desk']);
    expect(created.code, created.stderr).toBe(0);
    expect(created.stdout).toContain(`topic arn:aws:sns:us-east-1:123456789012:${sandbox.prefix}audience-stack-desk`);
  });

  it("audiences delete --delete-topic refuses a topic the stack made (a cdk.json audience's) and deletes the CLI's own", async () => {
    const topicPrefix = `arn:aws:sns:us-east-1:123456789012:${sandbox.descriptor.names.audienceTopicPrefix}`;
    const created = await stackCli(['audiences', 'create', 'cfn-desk', '--name', 'Declared desk']);
    expect(created.code, created.stderr).toBe(0);
    const refused = await stackCli(['audiences', 'delete', 'cfn-desk', '--delete-topic', '--yes']);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain(
      `--delete-topic: ${topicPrefix}cfn-desk belongs to stack ${stackName()} (resource CfnDeskTopic`,
    );
    expect(refused.stderr).toContain('nothing was deleted');
    expect(await sandbox.audience('cfn-desk')).toBeDefined();

    const own = await stackCli(['audiences', 'create', 'cli-desk', '--name', 'CLI desk']);
    expect(own.code, own.stderr).toBe(0);
    const deleted = await stackCli(['audiences', 'delete', 'cli-desk', '--delete-topic', '--yes']);
    expect(deleted.code, deleted.stderr).toBe(0);
    expect(deleted.stderr + deleted.stdout).toContain(`deleted topic ${topicPrefix}cli-desk`);
  });

  it('run invokes the alert function the stack names and reports its summary', async () => {
    const summary = { runId: 'lambda-request-1', status: 'completed', notificationsPublished: 12, audiences: {} };
    await fetch(`${sandbox.descriptor.endpoint}/moto-api/static/lambda-simple/response`, {
      method: 'POST',
      body: JSON.stringify({ results: [JSON.stringify(summary)], region: 'us-east-1' }),
    });
    const run = await stackCli(['--json', 'run']);
    expect(run.code, run.stderr).toBe(0);
    expect(run.json()).toMatchObject({ target: `stack ${stackName()}`, summary });
  });

  it('subscriptions failures: an unknown audience is not found (exit 3), not "nothing is failing"; a deleted one with failures waiting is listed', async () => {
    const { QueueUrl } = await sandbox.stack.clients.sqs.send(
      new GetQueueUrlCommand({ QueueName: `${sandbox.prefix}delivery-dlq` }),
    );
    // An email subscriber's failure, for an audience deleted since (its topic is still named).
    await sandbox.stack.clients.sqs.send(
      new SendMessageCommand({
        QueueUrl,
        MessageBody: JSON.stringify({
          Type: 'Notification',
          TopicArn: `arn:aws:sns:us-east-1:123456789012:${sandbox.descriptor.names.audienceTopicPrefix}gone-desk`,
          Message: 'Rates move again',
        }),
      }),
    );

    const typo = await stackCli(['subscriptions', 'failures', 'markets-dsk']);
    expect(typo.code).toBe(3);
    expect(typo.stderr).toContain(
      `audience markets-dsk does not exist in stack ${stackName()}; did you mean "markets-desk"?`,
    );
    expect(typo.stdout).not.toContain('no failed deliveries');
    const json = await stackCli(['--json', 'subscriptions', 'failures', 'markets-dsk']);
    expect(json.code).toBe(3);
    expect(json.json()).toMatchObject({ error: { code: 'not_found' } });

    const deleted = await stackCli(['--json', 'subscriptions', 'failures', 'gone-desk']);
    expect(deleted.code, deleted.stderr).toBe(0);
    expect(deleted.json<{ rows: unknown[] }>().rows).toEqual([
      expect.objectContaining({ audienceId: 'gone-desk', queue: 'delivery', messages: 1 }),
    ]);
    // An audience that exists and has nothing failing is still the quiet answer.
    const quiet = await stackCli(['subscriptions', 'failures', 'markets-desk']);
    expect(quiet.code, quiet.stderr).toBe(0);
    expect(quiet.stdout + quiet.stderr).toContain('no failed deliveries of markets-desk are waiting');
  });

  it('a stack that does not exist, or lacks the outputs, is exit 3 with what to do', async () => {
    const missing = await stackCli(['rules', 'list'], `${sandbox.prefix}Nothing`);
    expect(missing.code).toBe(3);
    expect(missing.stderr).toContain('does not exist');
    expect(() => namesFromOutputs('Other', [{ OutputKey: 'RulesTableName', OutputValue: 'r' }])).toThrow(
      /stack Other has no output AudiencesTableName, StateTableName, AudienceTopicPrefix/,
    );
  });

  it("a sharded stack's work dead-letter queue comes from its outputs (replay --parked reads it)", () => {
    const required = [
      'RulesTableName',
      'AudiencesTableName',
      'StateTableName',
      'AudienceTopicPrefix',
      'ApiKeySecretArn',
    ];
    const outputs = required.map((key) => ({ OutputKey: key, OutputValue: key.toLowerCase() }));
    const url = 'https://sqs.us-east-1.amazonaws.com/123456789012/news-alerts-work-dlq';
    expect(
      namesFromOutputs('S', [...outputs, { OutputKey: 'WorkDeadLetterQueueUrl', OutputValue: url }])
        .workDeadLetterQueueUrl,
    ).toBe(url);
    expect(namesFromOutputs('S', outputs).workDeadLetterQueueUrl).toBeUndefined();
  });

  it('--profile takes credentials and region from that profile of the AWS config files', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'news-alerts-profile-'));
    try {
      writeFileSync(join(dir, 'config'), `[profile ops]\nregion = us-east-1\n`);
      writeFileSync(join(dir, 'credentials'), `[ops]\naws_access_key_id = test\naws_secret_access_key = test\n`);
      // Nothing from the environment but the endpoint and the files: no keys, no region, no AWS_PROFILE.
      const env = {
        AWS_ENDPOINT_URL: sandbox.descriptor.endpoint,
        AWS_CONFIG_FILE: join(dir, 'config'),
        AWS_SHARED_CREDENTIALS_FILE: join(dir, 'credentials'),
        AWS_ACCESS_KEY_ID: undefined,
        AWS_SECRET_ACCESS_KEY: undefined,
        AWS_REGION: undefined,
        AWS_DEFAULT_REGION: undefined,
        AWS_PROFILE: undefined,
      };
      const [withProfile, without] = await Promise.all([
        runCli(['--stack', stackName(), '--profile', 'ops', '--json', 'rules', 'list'], { env }),
        runCli(['--stack', stackName(), '--json', 'rules', 'list'], { env }),
      ]);
      expect(withProfile.code, withProfile.stderr).toBe(0);
      expect(withProfile.json<unknown[]>()).toHaveLength(exampleRules.length);
      expect(without.code).not.toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
