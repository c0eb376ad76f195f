/**
 * What the deployed stack guarantees, read from the synthesized template of a deployment that uses
 * every kind of subscriber (test/infra/synth.ts). Assertions name behaviour, never logical ids or
 * whole-template snapshots.
 */
import { Capture, Match, type Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { alertRunEnvironment } from '#alert-run/config';
import { everyRunMetrics, metricNames } from '#alert-run/metrics';
import { slackPostedPartition } from '#aws/table-layout';
import { serviceName } from '#shared/powertools';
import { StackConfigError } from '../../lib/config.ts';
import { Monitoring } from '../../lib/constructs/monitoring.ts';
import { fullContext, type Synthesized, synthesize } from './synth.ts';

type Resource = { Type: string; Properties: Record<string, unknown>; DeletionPolicy?: string };

let synth: Synthesized;
let resources: Record<string, Resource>;

beforeAll(() => {
  synth = synthesize(fullContext);
  const raw = synth.template.toJSON().Resources as Record<
    string,
    { Type: string; Properties?: Record<string, unknown> }
  >;
  resources = Object.fromEntries(
    Object.entries(raw).map(([id, resource]) => [id, { ...resource, Properties: resource.Properties ?? {} }]),
  );
});

const ofType = (type: string) => Object.entries(resources).filter(([, resource]) => resource.Type === type);

/** The one function whose handler entry is `name` (by its description, not its logical id). */
function functionResource(descriptionPart: string): [string, Resource] {
  const found = ofType('AWS::Lambda::Function').filter(([, resource]) =>
    String(resource.Properties.Description ?? '').includes(descriptionPart),
  );
  expect(found).toHaveLength(1);
  return found[0] as [string, Resource];
}

const alertFunction = () => functionResource('scheduled alert run');
const relayFunction = () => functionResource('Slack incoming webhooks');
const environmentOf = ([, resource]: [string, Resource]) =>
  (resource.Properties.Environment as { Variables: Record<string, unknown> }).Variables;

describe('the schedule', () => {
  it('is an EventBridge Scheduler schedule (not a legacy rule) with time zone, flexible window, bounded retries and a DLQ', () => {
    expect(ofType('AWS::Events::Rule')).toHaveLength(0);
    const [alertId] = alertFunction();
    const dlq = new Capture();
    synth.template.hasResourceProperties('AWS::Scheduler::Schedule', {
      ScheduleExpression: 'rate(10 minutes)',
      ScheduleExpressionTimezone: 'Asia/Seoul',
      State: 'ENABLED',
      FlexibleTimeWindow: { Mode: 'FLEXIBLE', MaximumWindowInMinutes: 2 },
      Target: {
        Arn: { 'Fn::GetAtt': [alertId, 'Arn'] },
        RetryPolicy: { MaximumRetryAttempts: 3, MaximumEventAgeInSeconds: 600 },
        DeadLetterConfig: { Arn: { 'Fn::GetAtt': [dlq, 'Arn'] } },
      },
    });
    expect(resources[dlq.asString()]?.Type).toBe('AWS::SQS::Queue');
  });

  it('turns the flexible window off when configured to 0', () => {
    const plain = synthesize({ flexibleWindowMinutes: 0 });
    plain.template.hasResourceProperties('AWS::Scheduler::Schedule', { FlexibleTimeWindow: { Mode: 'OFF' } });
  });
});

describe('the alert function', () => {
  it('runs Node 22 on arm64 with explicit memory and timeout, one at a time, traced', () => {
    const [, fn] = alertFunction();
    expect(fn.Properties).toMatchObject({
      Runtime: 'nodejs22.x',
      Architectures: ['arm64'],
      MemorySize: 512,
      Timeout: 300,
      ReservedConcurrentExecutions: 1,
      TracingConfig: { Mode: 'Active' },
    });
  });

  it('retries once asynchronously, drops invocations older than one interval, and sends failures to an SQS queue', () => {
    const [alertId] = alertFunction();
    const destination = new Capture();
    synth.template.hasResourceProperties('AWS::Lambda::EventInvokeConfig', {
      FunctionName: { Ref: alertId },
      MaximumRetryAttempts: 1,
      MaximumEventAgeInSeconds: 600,
      DestinationConfig: { OnFailure: { Destination: { 'Fn::GetAtt': [destination, 'Arn'] } } },
    });
    expect(resources[destination.asString()]?.Type).toBe('AWS::SQS::Queue');
  });

  it('sets every variable the function requires, from alertRunEnvironment, plus the Powertools settings', () => {
    const variables = environmentOf(alertFunction());
    const required = alertRunEnvironment
      .filter((variable) => variable.default === undefined)
      .map((variable) => variable.name);
    expect(required.length).toBeGreaterThan(0);
    for (const name of required) expect(variables).toHaveProperty(name);
    const known = new Set(alertRunEnvironment.map((variable) => variable.name));
    const ours = ['NODE_OPTIONS', 'POWERTOOLS_SERVICE_NAME', 'POWERTOOLS_METRICS_NAMESPACE', 'POWERTOOLS_LOG_LEVEL'];
    for (const name of Object.keys(variables)) expect(known.has(name) || ours.includes(name)).toBe(true);
    expect(variables).toMatchObject({
      NODE_OPTIONS: '--enable-source-maps',
      POWERTOOLS_METRICS_NAMESPACE: 'NewsAlerts',
      NEWS_API_BASE_URL: 'https://api.news.example.org/v1',
      NEWS_API_PAGINATION: 'CURSOR',
      NEWS_API_CURSOR_FIELD: 'next',
      NEWS_API_RESPONSE_MAPPING: JSON.stringify({ articles: ['data.items'], title: ['headline'] }),
      NEWS_API_MAX_PAGES: '50',
      LATE_ARRIVAL_MINUTES: '60',
      FULL_SWEEP_MINUTES: '360',
      INCREMENTAL_OVERLAP_MINUTES: '2',
      LATE_RECHECK_MINUTES: String(synth.config.recheckMinutes),
      LEDGER_RETENTION_DAYS: '14',
    });
  });

  it('holds the run lease longer than the function may run', () => {
    const [, fn] = alertFunction();
    expect(Number(environmentOf(alertFunction()).LEASE_SECONDS)).toBeGreaterThan(Number(fn.Properties.Timeout));
  });

  it('logs to its own log group with retention', () => {
    const [, fn] = alertFunction();
    const group = (fn.Properties.LoggingConfig as { LogGroup: { Ref: string } }).LogGroup.Ref;
    expect(resources[group]).toMatchObject({ Type: 'AWS::Logs::LogGroup', Properties: { RetentionInDays: 90 } });
  });
});

describe('least privilege', () => {
  type Statement = { Effect: string; Action: string | string[]; Resource?: unknown; Condition?: unknown };
  const statementsOf = (type: string, documentKey: string) =>
    ofType(type).flatMap(([id, resource]) =>
      ((resource.Properties[documentKey] as { Statement: Statement[] } | undefined)?.Statement ?? []).map(
        (statement) => ({ id, statement }),
      ),
    );
  const identityStatements = () => statementsOf('AWS::IAM::Policy', 'PolicyDocument');
  const actions = (statement: Statement) => [statement.Action].flat();
  const policyOfRole = (functionEntry: [string, Resource]) => {
    const roleId = (functionEntry[1].Properties.Role as { 'Fn::GetAtt': [string, string] })['Fn::GetAtt'][0];
    const policies = ofType('AWS::IAM::Policy').filter(([, policy]) =>
      (policy.Properties.Roles as { Ref: string }[]).some((role) => role.Ref === roleId),
    );
    return policies.flatMap(([, policy]) => (policy.Properties.PolicyDocument as { Statement: Statement[] }).Statement);
  };

  it('has no "*" resource except where AWS requires it: X-Ray in roles, the key itself in key policies', () => {
    const wildcard = (statement: Statement) => [statement.Resource].flat().includes('*');
    const identity = identityStatements().filter(({ statement }) => wildcard(statement));
    expect(identity.length).toBeGreaterThan(0);
    for (const { statement } of identity) {
      expect(actions(statement).sort()).toEqual(['xray:PutTelemetryRecords', 'xray:PutTraceSegments']);
    }
    const resourcePolicies = [
      ...statementsOf('AWS::SQS::QueuePolicy', 'PolicyDocument'),
      ...statementsOf('AWS::SNS::TopicPolicy', 'PolicyDocument'),
      ...statementsOf('AWS::SecretsManager::ResourcePolicy', 'ResourcePolicy'),
    ];
    expect(resourcePolicies.filter(({ statement }) => wildcard(statement))).toEqual([]);
    // In a key policy "*" means "this key": AWS requires it there.
    expect(statementsOf('AWS::KMS::Key', 'KeyPolicy').length).toBeGreaterThan(0);
    expect(ofType('AWS::IAM::ManagedPolicy')).toEqual([]);
    for (const [, role] of ofType('AWS::IAM::Role')) expect(role.Properties.ManagedPolicyArns).toBeUndefined();
  });

  it('lets a service use a key only for this account (aws:SourceAccount on every service statement)', () => {
    const services = statementsOf('AWS::KMS::Key', 'KeyPolicy').filter(
      ({ statement }) => (statement as { Principal?: { Service?: unknown } }).Principal?.Service !== undefined,
    );
    expect(services.length).toBeGreaterThan(0);
    // The ops topic's key lacked it (found by a reviewer); the SES events key had it.
    for (const { statement } of services) {
      expect(statement.Condition).toMatchObject({ StringEquals: { 'aws:SourceAccount': expect.anything() } });
    }
  });

  it('lets the alert function scan the rules and audiences, and read the state table only by key', () => {
    const statements = policyOfRole(alertFunction()).filter((statement) =>
      actions(statement).some((action) => action.startsWith('dynamodb:')),
    );
    // The state table is the one it writes: nothing of it is ever scanned (found by a reviewer).
    const state = statements.filter((statement) => actions(statement).includes('dynamodb:PutItem'));
    expect(state.length).toBeGreaterThan(0);
    for (const statement of state) expect(actions(statement)).not.toContain('dynamodb:Scan');
    expect(statements.filter((statement) => actions(statement).includes('dynamodb:Scan'))).toHaveLength(2);
  });

  it('lets the alert function publish only to this deployment’s audience topics, present and future', () => {
    const statements = policyOfRole(alertFunction());
    const publish = statements.filter((statement) => actions(statement).includes('sns:Publish'));
    expect(publish).toHaveLength(1);
    expect(JSON.stringify(publish[0]?.Resource)).toMatch(/:sns:.*:news-alerts-audience-\*"\]\]\}$/);
    const kms = statements.filter((statement) => actions(statement).some((action) => action.startsWith('kms:')));
    expect(kms.map(actions)).toEqual([['kms:GenerateDataKey', 'kms:Decrypt']]);
  });

  it('gives the alert function read on rules and audiences, read/write on state, its one secret, and nothing else', () => {
    const statements = policyOfRole(alertFunction());
    const all = statements.flatMap(actions);
    for (const action of all) {
      expect(action).toMatch(/^(dynamodb|secretsmanager|sns|kms|logs|xray|sqs):/);
      expect(action).not.toMatch(/\*$|:(CreateTable|DeleteTable|UpdateTable|GetRecords|GetShardIterator)$/);
    }
    const secretStatements = statements.filter((statement) =>
      actions(statement).includes('secretsmanager:GetSecretValue'),
    );
    expect(secretStatements).toHaveLength(1);
    expect(secretStatements[0]?.Resource).toEqual({ Ref: expect.stringMatching(/ApiKey/) });
    const writes = statements.filter((statement) => actions(statement).includes('dynamodb:PutItem'));
    expect(writes).toHaveLength(1);
    expect(JSON.stringify(writes[0]?.Resource)).toMatch(/TablesState/);
  });

  it('lets the relay read only the webhook store of this deployment and the secrets given by ARN', () => {
    const statements = policyOfRole(relayFunction()).filter((statement) =>
      actions(statement).includes('secretsmanager:GetSecretValue'),
    );
    const resourcesRead = statements
      .flatMap((statement) => [statement.Resource].flat())
      .map((resource) => JSON.stringify(resource));
    expect(resourcesRead).toHaveLength(2);
    expect(resourcesRead.some((resource) => resource.includes(':secret:news-alerts/slack-webhooks/*'))).toBe(true);
    // Not the per-audience secrets of earlier releases.
    expect(resourcesRead.some((resource) => resource.includes(':secret:news-alerts/slack/'))).toBe(false);
    expect(resourcesRead.some((resource) => resource.includes('secret:team/slack-AbCdEf'))).toBe(true);
  });

  it('remembers posted deliveries in the state table, allowed only its own partition there', () => {
    const environment = environmentOf(relayFunction());
    expect(JSON.stringify(environment.POSTED_ALERTS_TABLE)).toMatch(/TablesState/);
    const dynamoStatements = policyOfRole(relayFunction()).filter((statement) =>
      actions(statement).some((action) => action.startsWith('dynamodb:')),
    );
    expect(dynamoStatements).toHaveLength(1);
    expect(actions(dynamoStatements[0]!).sort()).toEqual([
      'dynamodb:DeleteItem',
      'dynamodb:GetItem',
      'dynamodb:PutItem',
      'dynamodb:UpdateItem',
    ]);
    expect(JSON.stringify(dynamoStatements[0]?.Resource)).toMatch(/TablesState/);
    expect(dynamoStatements[0]?.Condition).toEqual({
      'ForAllValues:StringEquals': { 'dynamodb:LeadingKeys': [slackPostedPartition] },
    });
  });
});

describe('audience topics', () => {
  it('creates one KMS-encrypted topic per declared audience, named <prefix>-audience-<id>, with a rotated key', () => {
    const key = new Capture();
    synth.template.resourcePropertiesCountIs(
      'AWS::SNS::Topic',
      { TopicName: Match.stringLikeRegexp('^news-alerts-audience-') },
      2,
    );
    synth.template.hasResourceProperties('AWS::SNS::Topic', {
      TopicName: 'news-alerts-audience-markets',
      KmsMasterKeyId: { 'Fn::GetAtt': [key, 'Arn'] },
    });
    expect(resources[key.asString()]).toMatchObject({ Type: 'AWS::KMS::Key', Properties: { EnableKeyRotation: true } });
    for (const [, topic] of ofType('AWS::SNS::Topic')) expect(topic.Properties.KmsMasterKeyId).toBeDefined();
  });

  it("refuses at construction, naming audiences, a declaration that would pass CloudFormation's 500 resources", () => {
    // CDK said so only at the end of synth, with a line of its minified source and a stack trace
    // (found by a reviewer with 10 audiences of 60 addresses each).
    const audiences = Array.from({ length: 10 }, (_, index) => ({
      audienceId: `desk-${index}`,
      emails: Array.from({ length: 60 }, (_, n) => `person${n}@example.com`),
    }));
    expect(() => synthesize({ audiences })).toThrow(StackConfigError);
    // CDK's own CDKMetadata resource counts only while version reporting is on (a reviewer found a
    // stack of exactly 500 without it refused).
    const held = (context: Record<string, unknown>) => {
      try {
        synthesize(context);
      } catch (error) {
        return Number(/would hold (\d+) CloudFormation resources/.exec(String(error))?.[1]);
      }
      return Number.NaN;
    };
    expect(held({ audiences }) - held({ audiences, 'aws:cdk:version-reporting': false })).toBe(1);
    expect(() => synthesize({ audiences })).toThrow(
      /audiences: the stack would hold \d+ CloudFormation resources, more than the 500 a stack can; the 10 audience\(s\) declare 600 subscription\(s\)/,
    );
  });

  it('refuses publishing without TLS on every topic', () => {
    const topics = ofType('AWS::SNS::Topic').map(([id]) => id);
    expect(topics).toHaveLength(3);
    for (const topicId of topics) {
      synth.template.hasResourceProperties('AWS::SNS::TopicPolicy', {
        Topics: Match.arrayWith([{ Ref: topicId }]),
        PolicyDocument: {
          Statement: Match.arrayWith([
            Match.objectLike({
              Effect: 'Deny',
              Condition: { Bool: { 'aws:SecureTransport': 'false' } },
            }),
          ]),
        },
      });
    }
  });

  it('subscribes the declared email, SMS and HTTPS endpoints, each with a redrive policy', () => {
    for (const [protocol, endpoint] of [
      ['email', 'desk@example.com'],
      ['sms', '+821012345678'],
      ['https', 'https://hooks.example.com/news'],
    ]) {
      synth.template.hasResourceProperties('AWS::SNS::Subscription', {
        Protocol: protocol,
        Endpoint: endpoint,
        RedrivePolicy: { deadLetterTargetArn: Match.anyValue() },
      });
    }
    synth.template.hasResourceProperties('AWS::SNS::Subscription', {
      Protocol: 'https',
      Endpoint: 'https://webhook.example.net/in',
      RawMessageDelivery: true,
    });
    for (const [, subscription] of ofType('AWS::SNS::Subscription')) {
      expect(subscription.Properties.RedrivePolicy).toBeDefined();
    }
  });
});

describe('the Slack relay', () => {
  it('is subscribed (protocol lambda) to each audience topic with Slack, redriving to the relay dead-letter queue', () => {
    const [relayId] = relayFunction();
    const deadLetters = new Capture();
    synth.template.hasResourceProperties('AWS::Lambda::EventInvokeConfig', {
      FunctionName: { Ref: relayId },
      DestinationConfig: { OnFailure: { Destination: { 'Fn::GetAtt': [deadLetters, 'Arn'] } } },
    });
    const subscriptions = ofType('AWS::SNS::Subscription').filter(
      ([, subscription]) => subscription.Properties.Protocol === 'lambda',
    );
    expect(subscriptions).toHaveLength(2);
    for (const [, subscription] of subscriptions) {
      expect(subscription.Properties).toMatchObject({
        Endpoint: { 'Fn::GetAtt': [relayId, 'Arn'] },
        // One queue holds every alert the relay could not post, whichever side failed.
        RedrivePolicy: { deadLetterTargetArn: { 'Fn::GetAtt': [deadLetters.asString(), 'Arn'] } },
      });
    }
  });

  it('sends failed invocations to its dead-letter queue after two async retries', () => {
    const [relayId, relay] = relayFunction();
    expect(relay.Properties).toMatchObject({
      Runtime: 'nodejs22.x',
      Architectures: ['arm64'],
      ReservedConcurrentExecutions: 2,
    });
    synth.template.hasResourceProperties('AWS::Lambda::EventInvokeConfig', {
      FunctionName: { Ref: relayId },
      MaximumRetryAttempts: 2,
      DestinationConfig: { OnFailure: { Destination: Match.anyValue() } },
    });
  });

  it('lets SNS park undeliverable notifications from any audience topic of this deployment', () => {
    const queuePolicies = ofType('AWS::SQS::QueuePolicy').filter(([, policy]) =>
      JSON.stringify(policy.Properties.PolicyDocument).includes(':news-alerts-audience-*'),
    );
    // The delivery and the relay dead-letter queues: topics the CLI creates redrive there too.
    expect(queuePolicies).toHaveLength(2);
    for (const [, policy] of queuePolicies) {
      expect(JSON.stringify(policy.Properties.PolicyDocument)).toMatch(
        /"Action":"sqs:SendMessage","Condition":\{"ArnLike":\{"aws:SourceArn":/,
      );
    }
  });

  it('may be invoked by any audience topic of this deployment (the CLI subscribes later ones)', () => {
    const [relayId] = relayFunction();
    synth.template.hasResourceProperties('AWS::Lambda::Permission', {
      FunctionName: { 'Fn::GetAtt': [relayId, 'Arn'] },
      Principal: 'sns.amazonaws.com',
      SourceArn: { 'Fn::Join': ['', Match.arrayWith([Match.stringLikeRegexp(':news-alerts-audience-\\*$')])] },
    });
  });

  it('lets the relay decrypt an existing webhook secret under a customer-managed key, through Secrets Manager only', () => {
    const keyArn = 'arn:aws:kms:us-east-1:123456789012:key/0a1b2c3d-1111-2222-3333-444455556666';
    const keyed = synthesize({
      audiences: [
        {
          audienceId: 'keyed',
          slack: {
            webhookSecretArn: 'arn:aws:secretsmanager:us-east-1:123456789012:secret:team/slack-keyed-AbCdEf',
            webhookSecretKmsKeyArn: keyArn,
          },
        },
      ],
    });
    const relays = Object.values(keyed.template.findResources('AWS::Lambda::Function')).filter((resource) =>
      String(resource.Properties.Description ?? '').includes('Slack incoming webhooks'),
    );
    expect(relays).toHaveLength(1);
    const roleId = JSON.stringify(relays[0]?.Properties.Role).match(/"Fn::GetAtt":\["([^"]+)"/)?.[1];
    expect(roleId).toBeDefined();
    const decrypts = Object.values(keyed.template.findResources('AWS::IAM::Policy'))
      .filter((policy) => JSON.stringify(policy.Properties.Roles).includes(`"${roleId}"`))
      .flatMap((policy) => policy.Properties.PolicyDocument.Statement as { Action: unknown; Resource: unknown }[])
      .filter((statement) => [statement.Action].flat().includes('kms:Decrypt'));
    // Only through Secrets Manager, and only for this secret (the key may protect others).
    expect(decrypts).toContainEqual(
      expect.objectContaining({
        Resource: keyArn,
        Condition: {
          StringEquals: {
            'kms:ViaService': expect.anything(),
            'kms:EncryptionContext:SecretARN':
              'arn:aws:secretsmanager:us-east-1:123456789012:secret:team/slack-keyed-AbCdEf',
          },
        },
      }),
    );
    expect(JSON.stringify(decrypts.find((statement) => statement.Resource === keyArn))).toMatch(
      /"kms:ViaService":\{"Fn::Join":\["",\["secretsmanager\."/,
    );
    // Without a key named, the relay is granted no key beyond the tables'.
    expect(JSON.stringify(synth.template.toJSON())).not.toContain('0a1b2c3d-1111');
  });

  it('knows where each audience’s webhook lives: the webhook store, or an explicit ARN', () => {
    expect(environmentOf(relayFunction())).toMatchObject({
      // The function defaults survive: the subclass merges props.environment over them.
      NODE_OPTIONS: '--enable-source-maps',
      POWERTOOLS_SERVICE_NAME: 'news-alerts',
      AUDIENCE_TOPIC_PREFIX: 'news-alerts-audience-',
      SLACK_WEBHOOK_STORE_PREFIX: 'news-alerts/slack-webhooks/',
      SLACK_WEBHOOK_SECRETS: JSON.stringify({
        policy: 'arn:aws:secretsmanager:us-east-1:123456789012:secret:team/slack-AbCdEf',
      }),
    });
  });
});

describe('secrets', () => {
  it('creates the API key secret empty and no secret per Slack audience: no value, generated or given, in the template', () => {
    const secrets = ofType('AWS::SecretsManager::Secret');
    // The webhook URLs go into the webhook store, which the CLI writes: never into the template.
    expect(secrets).toHaveLength(1);
    for (const [, secret] of secrets) {
      expect(secret.Properties).not.toHaveProperty('SecretString');
      expect(secret.Properties).not.toHaveProperty('GenerateSecretString');
      expect(JSON.stringify(secret.Properties)).not.toContain('slack');
    }
    expect(JSON.stringify(synth.template.toJSON())).not.toMatch(/hooks\.slack\.com/);
  });

  it('keeps one set of secrets however many audiences post to Slack', () => {
    const many = synthesize({
      audiences: Array.from({ length: 40 }, (_, index) => ({ audienceId: `desk-${index}`, slack: {} })),
    });
    many.template.resourceCountIs('AWS::SecretsManager::Secret', 1);
  });

  it('imports an existing API key secret by ARN instead of creating one', () => {
    const imported = synthesize({
      apiKeySecretArn: 'arn:aws:secretsmanager:us-east-1:123456789012:secret:news/api-key-AbCdEf',
      apiKeySecretKmsKeyArn: 'arn:aws:kms:us-east-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab',
    });
    imported.template.resourceCountIs('AWS::SecretsManager::Secret', 0);
    imported.template.hasResourceProperties('AWS::Lambda::Function', {
      Environment: {
        Variables: Match.objectLike({
          NEWS_API_KEY_SECRET_ID: 'arn:aws:secretsmanager:us-east-1:123456789012:secret:news/api-key-AbCdEf',
        }),
      },
    });
    imported.template.hasResourceProperties('AWS::IAM::Policy', {
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({
            Action: 'kms:Decrypt',
            Condition: {
              StringEquals: {
                'kms:ViaService': Match.anyValue(),
                'kms:EncryptionContext:SecretARN':
                  'arn:aws:secretsmanager:us-east-1:123456789012:secret:news/api-key-AbCdEf',
              },
            },
          }),
        ]),
      },
    });
  });

  it('grants the key of a secret imported by its name alone only for the ARNs that name can have', () => {
    const partial = synthesize({
      apiKeySecretArn: 'arn:aws:secretsmanager:us-east-1:123456789012:secret:news/provider',
      apiKeySecretKmsKeyArn: 'arn:aws:kms:us-east-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab',
    });
    partial.template.hasResourceProperties('AWS::IAM::Policy', {
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({
            Action: 'kms:Decrypt',
            Condition: {
              StringEquals: { 'kms:ViaService': Match.anyValue() },
              // Secrets Manager's ARNs end in `-` and six characters the name does not hold.
              StringLike: {
                'kms:EncryptionContext:SecretARN':
                  'arn:aws:secretsmanager:us-east-1:123456789012:secret:news/provider-??????',
              },
            },
          }),
        ]),
      },
    });
  });
});

describe('tables', () => {
  it('keys the tables as functions/aws/table-layout.ts says, on demand, with PITR and KMS encryption', () => {
    const tables = ofType('AWS::DynamoDB::Table');
    expect(tables).toHaveLength(3);
    for (const [, table] of tables) {
      expect(table.Properties).toMatchObject({
        BillingMode: 'PAY_PER_REQUEST',
        PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
        SSESpecification: { SSEEnabled: true },
      });
    }
    synth.template.hasResourceProperties('AWS::DynamoDB::Table', {
      KeySchema: [
        { AttributeName: 'pk', KeyType: 'HASH' },
        { AttributeName: 'sk', KeyType: 'RANGE' },
      ],
      TimeToLiveSpecification: { AttributeName: 'expiresAt', Enabled: true },
    });
  });

  it('protects the ops-edited tables from deletion, whatever the removal policy', () => {
    const destroy = synthesize({ removalPolicy: 'destroy' });
    for (const key of ['ruleId', 'audienceId']) {
      destroy.template.hasResource('AWS::DynamoDB::Table', {
        Properties: Match.objectLike({
          KeySchema: [{ AttributeName: key, KeyType: 'HASH' }],
          DeletionProtectionEnabled: true,
        }),
        DeletionPolicy: 'Retain',
        UpdateReplacePolicy: 'Retain',
      });
    }
    destroy.template.hasResource('AWS::DynamoDB::Table', {
      Properties: Match.objectLike({ TimeToLiveSpecification: Match.anyValue() }),
      DeletionPolicy: 'Delete',
    });
  });

  it('keeps every topic, queue and log group on cdk destroy under the retain policy, SES email and sharded included', () => {
    const retained = synthesize({ emailDomain: 'alerts.example.com', publishMode: 'sharded' });
    const all = Object.entries(retained.template.toJSON().Resources as Record<string, Resource>);
    const kept = ['AWS::SNS::Topic', 'AWS::SQS::Queue', 'AWS::Logs::LogGroup', 'AWS::KMS::Key', 'AWS::DynamoDB::Table'];
    const deleted = all
      .filter(([, resource]) => kept.includes(resource.Type) && resource.DeletionPolicy !== 'Retain')
      .map(([id]) => id);
    expect(all.filter(([, resource]) => resource.Type === 'AWS::SNS::Topic').length).toBeGreaterThan(1);
    expect(deleted).toEqual([]);
  });

  it('grants the tables key to every role that reads or writes a table it encrypts (email and sharded included)', () => {
    const managed = synthesize({
      tableEncryption: 'customer-managed',
      emailDomain: 'alerts.example.com',
      publishMode: 'sharded',
    });
    const all = managed.template.toJSON().Resources as Record<string, Resource>;
    const tables = Object.entries(all).filter(([, resource]) => resource.Type === 'AWS::DynamoDB::Table');
    const sse = (table: Resource) =>
      table.Properties.SSESpecification as { SSEType?: string; KMSMasterKeyId?: { 'Fn::GetAtt'?: string[] } };
    const encrypted = new Set(tables.filter(([, table]) => sse(table).SSEType === 'KMS').map(([id]) => id));
    const keys = new Set(tables.map(([, table]) => sse(table).KMSMasterKeyId?.['Fn::GetAtt']?.[0]));
    expect(encrypted.size).toBe(tables.length);
    expect(keys.size).toBe(1);
    const [key] = [...keys] as [string];
    // Every logical id a statement's resources name.
    const named = (value: unknown): string[] =>
      (JSON.stringify(value ?? null).match(/"[A-Za-z0-9]+"/g) ?? []).map((name) => name.slice(1, -1));
    const actions = (statement: { Action: string | string[] }): string[] => [statement.Action].flat();
    const missing: string[] = [];
    for (const [id, resource] of Object.entries(all)) {
      if (resource.Type !== 'AWS::IAM::Policy') continue;
      const document = resource.Properties.PolicyDocument as {
        Statement: { Action: string | string[]; Resource: unknown }[];
      };
      const statements = document.Statement;
      const touchesTable = statements.some(
        (statement) =>
          actions(statement).some((action) => action.startsWith('dynamodb:')) &&
          named(statement.Resource).some((name) => encrypted.has(name)),
      );
      const grantsKey = statements.some(
        (statement) => actions(statement).includes('kms:Decrypt') && named(statement.Resource).includes(key),
      );
      if (touchesTable && !grantsKey) missing.push(id);
    }
    expect(missing).toEqual([]);
  });

  it('uses a rotated customer-managed key when configured, and grants the function that key', () => {
    const managed = synthesize({ tableEncryption: 'customer-managed' });
    const key = new Capture();
    managed.template.hasResourceProperties('AWS::DynamoDB::Table', {
      SSESpecification: { SSEEnabled: true, SSEType: 'KMS', KMSMasterKeyId: { 'Fn::GetAtt': [key, 'Arn'] } },
    });
    managed.template.hasResourceProperties('AWS::IAM::Policy', {
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({
            Action: Match.arrayWith(['kms:Decrypt']),
            Resource: { 'Fn::GetAtt': [key.asString(), 'Arn'] },
          }),
        ]),
      },
    });
  });
});

describe('monitoring', () => {
  const alarms = () => ofType('AWS::CloudWatch::Alarm').map(([, alarm]) => alarm.Properties ?? {});
  const alarm = (name: string) => {
    const found = alarms().find((properties) => properties.AlarmName === name);
    expect(found, name).toBeDefined();
    return found ?? {};
  };

  it('sends every alarm (and its recovery) to the encrypted ops topic, with a description of what it means and what to do', () => {
    const opsTopic = ofType('AWS::SNS::Topic').find(([, topic]) => topic.Properties.TopicName === undefined);
    expect(opsTopic).toBeDefined();
    for (const properties of alarms()) {
      expect(properties.AlarmActions).toEqual([{ Ref: opsTopic?.[0] }]);
      expect(properties.OKActions).toEqual([{ Ref: opsTopic?.[0] }]);
      expect(String(properties.AlarmDescription)).toMatch(/What to do: .{20,}/);
    }
    synth.template.hasResourceProperties('AWS::SNS::Subscription', { Protocol: 'email', Endpoint: 'ops@example.com' });
  });

  it('filters the run metrics on the namespace and service the functions emit them with', () => {
    expect(serviceName).toBe('news-alerts');
    expect(environmentOf(alertFunction())).toMatchObject({
      POWERTOOLS_SERVICE_NAME: serviceName,
      POWERTOOLS_METRICS_NAMESPACE: 'NewsAlerts',
    });
  });

  it('gives a second deployment (another resourcePrefix) metrics and alarms of its own', () => {
    const second = synthesize({ resourcePrefix: 'news-b', stackName: 'NewsAlertsB' });
    const all = Object.values(second.template.toJSON().Resources as Record<string, Resource>);
    const functions = all.filter((resource) => resource.Type === 'AWS::Lambda::Function');
    expect(functions.length).toBeGreaterThan(1);
    for (const fn of functions) {
      const variables = (fn.Properties.Environment as { Variables: Record<string, unknown> }).Variables;
      expect(variables.POWERTOOLS_SERVICE_NAME).toBe('news-b');
    }
    const watched = all
      .filter((resource) => resource.Type === 'AWS::CloudWatch::Alarm')
      .flatMap((alarm) => (alarm.Properties.Dimensions as { Name: string; Value: unknown }[] | undefined) ?? [])
      .filter((dimension) => dimension.Name === 'service');
    expect(watched.length).toBeGreaterThan(3);
    expect(watched.every((dimension) => dimension.Value === 'news-b')).toBe(true);
  });

  it('alarms when no run succeeded for N intervals, treating missing data as breaching', () => {
    expect(alarm('news-alerts-no-successful-run')).toMatchObject({
      Namespace: 'NewsAlerts',
      MetricName: metricNames.runSucceeded,
      Dimensions: [{ Name: 'service', Value: 'news-alerts' }],
      Statistic: 'Sum',
      Period: 3 * 10 * 60,
      EvaluationPeriods: 1,
      ComparisonOperator: 'LessThanThreshold',
      Threshold: 1,
      TreatMissingData: 'breaching',
    });
  });

  it('reads a missing value as not breaching on every run metric the function sends only when not zero', () => {
    // addRunMetrics sends everyRunMetrics each run and the rest only when not zero (they cost
    // nothing in an hour they are not sent): an alarm that read their absence as breaching would
    // fire in every healthy hour.
    const onRunMetrics = alarms().filter((properties) => properties.Namespace === 'NewsAlerts');
    expect(onRunMetrics.length).toBeGreaterThan(5);
    for (const properties of onRunMetrics) {
      if (everyRunMetrics.has(String(properties.MetricName))) continue;
      expect(properties.TreatMissingData, String(properties.AlarmName)).toBe('notBreaching');
    }
  });

  it('alarms on function errors and throttles, watermark lag, upstream 401/403, parked notifications and invalid rules', () => {
    expect(alarm('news-alerts-alert-function-errors')).toMatchObject({ MetricName: 'Errors', Namespace: 'AWS/Lambda' });
    expect(alarm('news-alerts-alert-function-throttles')).toMatchObject({ MetricName: 'Throttles' });
    expect(alarm('news-alerts-watermark-lag')).toMatchObject({
      MetricName: metricNames.watermarkLag,
      Threshold: 60 * 60,
      ComparisonOperator: 'GreaterThanThreshold',
    });
    expect(alarm('news-alerts-upstream-auth-failures')).toMatchObject({ MetricName: metricNames.upstreamAuthFailures });
    expect(alarm('news-alerts-notifications-parked')).toMatchObject({ MetricName: metricNames.notificationsParked });
    expect(alarm('news-alerts-notifications-unrenderable')).toMatchObject({
      MetricName: metricNames.notificationsUnrenderable,
    });
    expect(alarm('news-alerts-invalid-rules')).toMatchObject({ MetricName: metricNames.invalidRules });
    expect(alarm('news-alerts-invalid-audiences')).toMatchObject({ MetricName: metricNames.invalidAudiences });
  });

  it('alarms on the depth of every dead-letter queue', () => {
    const queues = ofType('AWS::SQS::Queue').map(([id]) => id);
    expect(queues).toHaveLength(4);
    const watched = alarms()
      .filter((properties) => properties.MetricName === 'ApproximateNumberOfMessagesVisible')
      .map(
        (properties) =>
          (properties.Dimensions as { Value: { 'Fn::GetAtt': [string, string] } }[])[0]?.Value['Fn::GetAtt'][0],
      );
    expect(watched.sort()).toEqual(queues.sort());
  });

  it('has one alarm set, not one alarm per audience: the same alarms for 1 declared audience or 60', () => {
    const alarmNames = (template: Template) =>
      Object.values(template.findResources('AWS::CloudWatch::Alarm'))
        .map((resource) => String((resource as { Properties: { AlarmName: string } }).Properties.AlarmName))
        .sort();
    const one = synthesize({ audiences: [{ audienceId: 'desk-0', emails: ['a@example.com'], slack: {} }] });
    const sixty = synthesize({
      audiences: Array.from({ length: 60 }, (_, index) => ({
        audienceId: `desk-${index}`,
        emails: [`desk-${index}@example.com`],
        slack: {},
      })),
    });
    expect(alarmNames(sixty.template)).toEqual(alarmNames(one.template));
    for (const name of alarmNames(sixty.template)) expect(name).not.toMatch(/desk-/);
    // SNS delivery failures of every audience reach the delivery dead-letter queue, which alarms once.
    const subscriptions = Object.values(sixty.template.findResources('AWS::SNS::Subscription')).map(
      (resource) => (resource as { Properties: Record<string, unknown> }).Properties,
    );
    for (const subscription of subscriptions) expect(subscription).toHaveProperty('RedrivePolicy');
    expect(alarmNames(sixty.template)).toContain('news-alerts-delivery-dlq');
    // The dashboard does not grow either: one search over every audience topic.
    const body = JSON.stringify(
      Object.values(sixty.template.findResources('AWS::CloudWatch::Dashboard'))[0]?.Properties?.DashboardBody,
    );
    expect(body).not.toContain('desk-59');
    expect(body).toContain('NumberOfNotificationsFailed');
    // A partial match of the topics' name prefix: quoted, CloudWatch would look for a topic named
    // exactly "news-alerts-audience-", and the graph would stay empty.
    expect(body).toContain(`TopicName=news-alerts-audience', 'Sum', 300)`);
    expect(body).not.toMatch(/TopicName=\\*"/);
  });

  it('documents every alarm it creates', () => {
    const documented = Monitoring.describeAlarms().map((doc) => doc.name);
    for (const properties of alarms()) {
      const slug = String(properties.AlarmName).replace(/^news-alerts-/, '');
      expect(documented).toContain(slug);
    }
  });

  it('publishes a dashboard with the run metrics', () => {
    const body = new Capture();
    synth.template.hasResourceProperties('AWS::CloudWatch::Dashboard', {
      DashboardName: 'news-alerts-operations',
      DashboardBody: body,
    });
    const text = JSON.stringify(body.asObject());
    for (const name of [
      metricNames.runSucceeded,
      metricNames.watermarkLag,
      metricNames.notificationsPublished,
      'SlackMessagesPosted',
    ]) {
      expect(text).toContain(name);
    }
  });
});

describe('stack outputs for the CLI', () => {
  it('names the tables, topic prefix and key, function, secret and ops topic', () => {
    const outputs = synth.template.toJSON().Outputs as Record<string, { Value: unknown }>;
    expect(Object.keys(outputs)).toEqual(
      expect.arrayContaining([
        'RulesTableName',
        'AudiencesTableName',
        'StateTableName',
        'AudienceTopicPrefix',
        'AudienceTopicKeyArn',
        'AlertFunctionName',
        'ApiKeySecretArn',
        'OpsTopicArn',
        'SlackRelayFunctionArn',
        'SlackWebhookSecretPrefix',
        'SlackRelayDeadLetterQueueArn',
        'DeliveryDeadLetterQueueArn',
      ]),
    );
    expect(outputs.AudienceTopicPrefix?.Value).toBe('news-alerts-audience-');
  });
});
