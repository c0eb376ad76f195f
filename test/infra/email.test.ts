/**
 * SES email in the stack (issue 31), read from the synthesized template: with `emailDomain` set,
 * the domain identity with Easy DKIM, the configuration set and its event destination, the email
 * queue and its dead-letter queue on the audience topics, the delivery function with bounded
 * concurrency and partial batch failures, the preference endpoint (throttled, access logs without
 * the path), the link-key secret, the reputation alarms, least privilege; without it, nothing that
 * sends email and a clear synth-time message. Assertions name behaviour, never logical ids.
 */
import { Annotations, Capture, Match } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { StackConfigError } from '../../lib/config.ts';
import { EmailChannel } from '../../lib/constructs/email-channel.ts';
import { fullContext, synthesize } from './synth.ts';

const emailContext = { ...fullContext, emailDomain: 'alerts.example.com' };
const synth = synthesize(emailContext);
const template = synth.template;
const resources = template.toJSON().Resources as Record<string, { Type: string; Properties?: Record<string, unknown> }>;
const ofType = (type: string) => Object.entries(resources).filter(([, resource]) => resource.Type === type);

const functionNamed = (part: string) => {
  const found = ofType('AWS::Lambda::Function').filter(([, resource]) =>
    String(resource.Properties?.Description ?? '').includes(part),
  );
  expect(found).toHaveLength(1);
  return found[0] as [string, { Properties: Record<string, unknown> }];
};
const policiesOf = (functionId: string) => {
  const role =
    (resources[functionId]?.Properties?.Role as { 'Fn::GetAtt': [string, string] } | undefined)?.['Fn::GetAtt'][0] ??
    '';
  return ofType('AWS::IAM::Policy')
    .filter(([, policy]) => JSON.stringify(policy.Properties?.Roles).includes(role))
    .flatMap(
      ([, policy]) =>
        (policy.Properties?.PolicyDocument as { Statement: Record<string, unknown>[] } | undefined)?.Statement ?? [],
    );
};

describe('with emailDomain', () => {
  it('has the SES domain identity with Easy DKIM, sending with the configuration set', () => {
    template.hasResourceProperties('AWS::SES::EmailIdentity', {
      EmailIdentity: 'alerts.example.com',
      DkimAttributes: { SigningEnabled: true },
      ConfigurationSetAttributes: { ConfigurationSetName: Match.anyValue() },
    });
  });

  it('has a configuration set that requires TLS, suppresses bounces and complaints and reports reputation', () => {
    template.hasResourceProperties('AWS::SES::ConfigurationSet', {
      DeliveryOptions: { TlsPolicy: 'REQUIRE' },
      ReputationOptions: { ReputationMetricsEnabled: true },
      SuppressionOptions: { SuppressedReasons: Match.arrayWith(['BOUNCE', 'COMPLAINT']) },
      SendingOptions: { SendingEnabled: true },
    });
  });

  it('publishes send, delivery, bounce, complaint, reject and delay events to an encrypted topic the events function reads', () => {
    const topic = new Capture();
    template.hasResourceProperties('AWS::SES::ConfigurationSetEventDestination', {
      EventDestination: {
        Enabled: true,
        MatchingEventTypes: Match.arrayWith(['send', 'delivery', 'bounce', 'complaint', 'reject', 'deliveryDelay']),
        SnsDestination: { TopicARN: { Ref: topic } },
      },
    });
    expect(resources[topic.asString()]?.Properties?.KmsMasterKeyId).toBeDefined();
    const [eventsId] = functionNamed('records SES events');
    template.hasResourceProperties('AWS::SNS::Subscription', {
      Protocol: 'lambda',
      TopicArn: { Ref: topic.asString() },
      Endpoint: { 'Fn::GetAtt': [eventsId, 'Arn'] },
      RedrivePolicy: Match.anyValue(),
    });
  });

  it('queues every declared audience topic for email, with a dead-letter queue after 5 receives', () => {
    const dlq = new Capture();
    template.hasResourceProperties('AWS::SQS::Queue', {
      RedrivePolicy: {
        deadLetterTargetArn: { 'Fn::GetAtt': [dlq, 'Arn'] },
        maxReceiveCount: EmailChannel.maxReceiveCount,
      },
      VisibilityTimeout: EmailChannel.deliveryTimeout.toSeconds() * 6,
      SqsManagedSseEnabled: true,
    });
    expect(resources[dlq.asString()]?.Type).toBe('AWS::SQS::Queue');
    const queueSubscriptions = ofType('AWS::SNS::Subscription').filter(([, sub]) => sub.Properties?.Protocol === 'sqs');
    expect(queueSubscriptions.length).toBe(2);
    for (const [, subscription] of queueSubscriptions)
      expect(subscription.Properties?.RawMessageDelivery).not.toBe(true);
  });

  it('drains the queue with bounded concurrency and partial batch failures', () => {
    const [deliveryId] = functionNamed('emails audience notifications');
    template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      FunctionName: { Ref: deliveryId },
      BatchSize: 10,
      ScalingConfig: { MaximumConcurrency: 2 },
      FunctionResponseTypes: ['ReportBatchItemFailures'],
    });
  });

  it('releases the daily digests on a schedule with retries and a dead-letter queue', () => {
    const [deliveryId] = functionNamed('emails audience notifications');
    template.hasResourceProperties('AWS::Scheduler::Schedule', {
      ScheduleExpression: 'rate(15 minutes)',
      Target: {
        Arn: { 'Fn::GetAtt': [deliveryId, 'Arn'] },
        Input: JSON.stringify({ action: 'release-daily-digests' }),
        DeadLetterConfig: Match.anyValue(),
        RetryPolicy: Match.anyValue(),
      },
    });
  });

  it('serves the preference endpoint on a throttled HTTP API whose access logs never hold the path or the caller', () => {
    template.hasResourceProperties('AWS::ApiGatewayV2::Api', { ProtocolType: 'HTTP' });
    const format = new Capture();
    template.hasResourceProperties('AWS::ApiGatewayV2::Stage', {
      StageName: '$default',
      DefaultRouteSettings: { ThrottlingRateLimit: 20, ThrottlingBurstLimit: 40 },
      AccessLogSettings: { DestinationArn: Match.anyValue(), Format: format },
    });
    expect(format.asString()).toContain('$context.routeKey');
    expect(format.asString()).not.toMatch(/\$context\.(path|identity|requestOverride)/);
    const routes = ofType('AWS::ApiGatewayV2::Route').map(([, route]) => route.Properties?.RouteKey);
    expect(routes.sort()).toEqual(['GET /{kind}/{token}', 'POST /{kind}/{token}']);
  });

  it('keeps the link keys in a generated secret, read only by the delivery and preference functions', () => {
    const secrets = ofType('AWS::SecretsManager::Secret').filter(
      ([, secret]) =>
        (secret.Properties?.GenerateSecretString as { GenerateStringKey?: string } | undefined)?.GenerateStringKey ===
        'key1',
    );
    expect(secrets).toHaveLength(1);
    const [secretId, secret] = secrets[0] as [string, { Properties: Record<string, unknown> }];
    expect(secret.Properties.GenerateSecretString).toMatchObject({
      SecretStringTemplate: '{"current":"1"}',
      PasswordLength: 64,
    });
    for (const reader of ['emails audience notifications', 'preference page']) {
      const [id, fn] = functionNamed(reader);
      expect(
        (fn.Properties.Environment as { Variables: Record<string, unknown> }).Variables.LINK_KEY_SECRET_ID,
      ).toEqual({ Ref: secretId });
      expect(JSON.stringify(policiesOf(id))).toContain('secretsmanager:GetSecretValue');
    }
    const [eventsId] = functionNamed('records SES events');
    expect(JSON.stringify(policiesOf(eventsId))).not.toContain('secretsmanager:');
  });

  it('lets only the delivery function send, only as the configured From address, only through this identity and configuration set', () => {
    const [deliveryId] = functionNamed('emails audience notifications');
    const send = policiesOf(deliveryId).filter((statement) =>
      JSON.stringify(statement.Action).includes('ses:SendEmail'),
    );
    expect(send).toHaveLength(1);
    const statement = send[0] as { Resource: unknown[]; Condition: unknown; Action: unknown };
    expect(statement.Action).toBe('ses:SendEmail');
    expect(statement.Resource).toHaveLength(2);
    const resourcesText = JSON.stringify(statement.Resource);
    expect(resourcesText).toContain(':identity/alerts.example.com');
    expect(resourcesText).toContain(':configuration-set/');
    expect(resourcesText).not.toContain('*');
    expect(statement.Condition).toEqual({ StringEquals: { 'ses:FromAddress': 'alerts@alerts.example.com' } });
    for (const other of ['records SES events', 'preference page', 'scheduled alert run']) {
      const [id] = functionNamed(other);
      expect(JSON.stringify(policiesOf(id))).not.toContain('ses:SendEmail');
    }
  });

  it('alarms on the bounce and complaint rates below SES review thresholds, pausing sending through the events topic', () => {
    for (const [metric, threshold] of [
      ['Reputation.BounceRate', EmailChannel.bounceRateAlarm],
      ['Reputation.ComplaintRate', EmailChannel.complaintRateAlarm],
    ] as const) {
      const actions = new Capture();
      template.hasResourceProperties('AWS::CloudWatch::Alarm', {
        Namespace: 'AWS/SES',
        MetricName: metric,
        Threshold: threshold,
        AlarmActions: actions,
      });
      expect(actions.asArray()).toHaveLength(2);
    }
    expect(EmailChannel.bounceRateAlarm).toBeLessThan(0.05);
    expect(EmailChannel.complaintRateAlarm).toBeLessThan(0.001);
  });

  it('lets those two alarms, and nothing else from CloudWatch, publish to the events topic (or they could not pause sending)', () => {
    const [topicId] =
      ofType('AWS::SNS::Topic').find(([, topic]) => topic.Properties?.DisplayName === 'news-alerts SES events') ?? [];
    expect(topicId).toBeDefined();
    const guards = ofType('AWS::CloudWatch::Alarm')
      .filter(([, alarm]) => /Reputation\.(Bounce|Complaint)Rate/.test(String(alarm.Properties?.MetricName)))
      .map(([id, alarm]) => {
        // Each of them notifies the events topic.
        expect(JSON.stringify(alarm.Properties?.AlarmActions)).toContain(`"Ref":"${topicId}"`);
        return { 'Fn::GetAtt': [id, 'Arn'] };
      });
    expect(guards).toHaveLength(2);
    template.hasResourceProperties('AWS::SNS::TopicPolicy', {
      Topics: [{ Ref: topicId }],
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({
            Effect: 'Allow',
            Principal: { Service: 'cloudwatch.amazonaws.com' },
            Action: 'sns:Publish',
            Resource: { Ref: topicId },
            Condition: { ArnEquals: { 'aws:SourceArn': Match.arrayEquals(guards) } },
          }),
        ]),
      },
    });
    // CloudWatch may use the topic's key too (it is encrypted).
    const keyStatements = ofType('AWS::KMS::Key').flatMap(
      ([, key]) =>
        (key.Properties?.KeyPolicy as { Statement?: Record<string, unknown>[] } | undefined)?.Statement ?? [],
    );
    expect(
      keyStatements.some(
        (statement) =>
          JSON.stringify(statement.Principal).includes('cloudwatch.amazonaws.com') &&
          JSON.stringify(statement.Action).includes('kms:GenerateDataKey'),
      ),
    ).toBe(true);
  });

  it('receives mailto unsubscribes with a receipt rule that invokes the endpoint function', () => {
    const [preferencesId] = functionNamed('preference page');
    template.hasResourceProperties('AWS::SES::ReceiptRule', {
      Rule: {
        Recipients: ['unsubscribe@alerts.example.com'],
        ScanEnabled: true,
        TlsPolicy: 'Require',
        Actions: [
          {
            LambdaAction: { FunctionArn: { 'Fn::GetAtt': [preferencesId, 'Arn'] }, InvocationType: 'RequestResponse' },
          },
        ],
      },
    });
  });

  it('names everything the CLI and DNS need in its outputs', () => {
    const outputs = template.toJSON().Outputs as Record<string, { Value: unknown }>;
    for (const name of [
      'EmailSubscribersTableName',
      'EmailQueueArn',
      'EmailQueueUrl',
      'EmailDeadLetterQueueUrl',
      'EmailPreferencesUrl',
      'EmailLinkKeySecretArn',
      'EmailConfigurationSetName',
      'EmailFromAddress',
      'EmailDkimRecord1',
      'EmailDkimRecord2',
      'EmailDkimRecord3',
    ]) {
      expect(outputs[name], name).toBeDefined();
    }
  });

  it('keeps the subscribers whatever the removal policy, with point-in-time recovery', () => {
    const destroyed = synthesize({ ...emailContext, removalPolicy: 'destroy' });
    const tables = Object.values(
      destroyed.template.toJSON().Resources as Record<
        string,
        { Type: string; DeletionPolicy?: string; Properties: Record<string, unknown> }
      >,
    )
      .filter((resource) => resource.Type === 'AWS::DynamoDB::Table')
      .filter((resource) => JSON.stringify(resource.Properties.GlobalSecondaryIndexes ?? []).includes('members'));
    expect(tables).toHaveLength(1);
    expect(tables[0]?.DeletionPolicy).toBe('Retain');
    expect(tables[0]?.Properties.DeletionProtectionEnabled).toBe(true);
    expect(tables[0]?.Properties.PointInTimeRecoverySpecification).toEqual({ PointInTimeRecoveryEnabled: true });
  });
});

describe('without emailDomain', () => {
  const plain = synthesize(fullContext);
  const types = Object.values(plain.template.toJSON().Resources as Record<string, { Type: string }>).map(
    (resource) => resource.Type,
  );

  it('has nothing that sends email through SES', () => {
    expect(types.filter((type) => type.startsWith('AWS::SES::') || type.startsWith('AWS::ApiGatewayV2::'))).toEqual([]);
    expect(JSON.stringify(plain.template.toJSON())).not.toMatch(/"ses:/);
  });

  it('says at synth time that SES email is off and how to turn it on', () => {
    const infos = Annotations.fromStack(plain.stack).findInfo('*', Match.stringLikeRegexp('SES email is off'));
    expect(infos).toHaveLength(1);
    expect(String(infos[0]?.entry.data)).toContain('emailDomain');
  });
});

describe('email settings', () => {
  it.each([
    [{ emailFromAddress: 'news@example.org' }, 'emailFromAddress: only applies to SES email'],
    [
      { emailDomain: 'alerts.example.com', emailFromAddress: 'news@other.example.org' },
      'must be an address at emailDomain',
    ],
    [{ emailDomain: 'not a domain' }, 'emailDomain: must be a domain name'],
    [{ emailDomain: 'alerts.example.com', emailPreferencesUrl: 'http://prefs.example.com' }, 'emailPreferencesUrl'],
    // Links are `<base>/p/<token>`: after a query or fragment every email's links would be broken.
    [
      { emailDomain: 'alerts.example.com', emailPreferencesUrl: 'https://prefs.example.org/x?a=1' },
      'emailPreferencesUrl: must not have a query or fragment',
    ],
    [
      { emailDomain: 'alerts.example.com', emailPreferencesUrl: 'https://prefs.example.org/x#top' },
      'emailPreferencesUrl: must not have a query or fragment',
    ],
    [{ emailDomain: 'alerts.example.com', emailFromName: 'Bad "name"' }, 'emailFromName'],
  ])('refuses %j with a message that names the key', (context, message) => {
    expect(() => synthesize(context)).toThrow(StackConfigError);
    expect(() => synthesize(context)).toThrow(message);
  });
});

describe('a From address with capitals in its domain', () => {
  it('is sent, allowed and shown as the delivery function sends it: the domain in lower case', async () => {
    const { normalizeAddress } = await import('#core/email/subscriber');
    const given = 'News.Desk@Alerts.Example.COM';
    const sent = normalizeAddress(given);
    expect(sent).toBe('News.Desk@alerts.example.com');
    const json = JSON.stringify(
      synthesize({ ...fullContext, emailDomain: 'alerts.example.com', emailFromAddress: given }).template.toJSON(),
    );
    expect(json).toContain(`"ses:FromAddress":"${sent}"`);
    expect(json).toContain(`"EMAIL_FROM_ADDRESS":"${sent}"`);
    expect(json).not.toContain('Alerts.Example.COM');
  });
});

describe('documentation', () => {
  it('configuration.md documents every variable of the email functions with its default', async () => {
    const { readFileSync } = await import('node:fs');
    const { emailEnvironment } = await import('../../functions/email/config.ts');
    const page = readFileSync(new URL('../../docs/configuration.md', import.meta.url), 'utf8');
    const section = page.slice(page.indexOf('## Email function variables'));
    for (const variable of emailEnvironment) {
      const row = section.split('\n').find((line) => line.startsWith(`| \`${variable.name}\` |`));
      expect(row, variable.name).toBeDefined();
      if (variable.default !== undefined && !variable.default.startsWith('('))
        expect(row).toContain(`\`${variable.default}\``);
    }
  });
});
