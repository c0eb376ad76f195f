/**
 * The deployed stack as a target: resource names from the stack's CloudFormation outputs (never
 * guessed), the alert function's configuration from its environment (so preview and replay read
 * the provider exactly as the scheduled run does), and synchronous invocation for `run`.
 * Credentials and region come from the standard AWS chain (`AWS_PROFILE`, SSO, environment...).
 */
import {
  CloudFormationClient,
  DescribeStacksCommand,
  ListStackResourcesCommand,
  type Output,
} from '@aws-sdk/client-cloudformation';
import {
  GetFunctionConfigurationCommand,
  InvokeCommand,
  type InvokeCommandOutput,
  LambdaClient,
  TooManyRequestsException,
} from '@aws-sdk/client-lambda';
import { GetCallerIdentityCommand, STSClient } from '@aws-sdk/client-sts';
import type { AlertRunConfig } from '#alert-run/config';
import { type AwsClientConfig, AwsClients, nameFailedResources } from './aws-clients.ts';
import { NotFoundError, OperationFailedError } from './errors.ts';
import {
  alertConfigFrom,
  type DeploymentHome,
  type InvokeOutcome,
  type ResourceNames,
  type StackTarget,
} from './target-model.ts';

/**
 * The account and region of a stack, from its id (`arn:aws:cloudformation:<region>:<account>:stack/…`).
 * Undefined when the id is missing or not an ARN.
 */
export function homeOfStackId(stackId: string | undefined): DeploymentHome | undefined {
  const match = /^arn:(aws[a-z-]*):cloudformation:([a-z0-9-]+):(\d{12}):stack\//.exec(stackId ?? '');
  if (!match?.[1] || !match[2] || !match[3]) return undefined;
  return { partition: match[1], region: match[2], account: match[3] };
}

/** Outputs the CLI cannot work without. */
const requiredOutputs = ['RulesTableName', 'AudiencesTableName', 'StateTableName', 'AudienceTopicPrefix'] as const;

/**
 * Resource names from a stack's outputs.
 * @throws NotFoundError naming every required output the stack lacks
 */
export function namesFromOutputs(stackName: string, outputs: readonly Output[]): ResourceNames {
  const byKey = new Map<string, string>();
  for (const output of outputs) {
    if (output.OutputKey && output.OutputValue !== undefined) byKey.set(output.OutputKey, output.OutputValue);
  }
  const missing = requiredOutputs.filter((key) => !byKey.has(key));
  if (missing.length > 0) {
    throw new NotFoundError(
      `stack ${stackName} has no output ${missing.join(', ')}: is it a news-alerts stack, deployed with this version? (pass --stack <name>)`,
    );
  }
  const get = (key: string): string | undefined => byKey.get(key);
  return {
    rulesTable: get('RulesTableName') ?? '',
    audiencesTable: get('AudiencesTableName') ?? '',
    stateTable: get('StateTableName') ?? '',
    audienceTopicPrefix: get('AudienceTopicPrefix') ?? '',
    audienceTopicKeyArn: get('AudienceTopicKeyArn'),
    apiKeySecretId: get('ApiKeySecretArn') ?? '',
    alertFunctionName: get('AlertFunctionName'),
    slackWebhookSecretPrefix: get('SlackWebhookSecretPrefix'),
    slackWebhookStorePrefix: get('SlackWebhookStorePrefix'),
    slackRelayFunctionArn: get('SlackRelayFunctionArn'),
    slackRelayDeadLetterQueueArn: get('SlackRelayDeadLetterQueueArn'),
    deliveryDeadLetterQueueArn: get('DeliveryDeadLetterQueueArn'),
    workDeadLetterQueueUrl: get('WorkDeadLetterQueueUrl'),
    email: emailNamesFrom(get, get('AudiencesTableName') ?? '', get('AudienceTopicPrefix') ?? ''),
  };
}

/** The email settings of a stack deployed with `emailDomain`, from its outputs; undefined without SES email. */
function emailNamesFrom(
  get: (key: string) => string | undefined,
  audiencesTable: string,
  topicPrefix: string,
): ResourceNames['email'] {
  const table = get('EmailSubscribersTableName');
  const from = get('EmailFromAddress');
  const queueArn = get('EmailQueueArn');
  if (table === undefined || from === undefined || queueArn === undefined) return undefined;
  const optional = (name: string, key: string) => {
    const value = get(key);
    return value === undefined || value === '' ? {} : { [name]: value };
  };
  return {
    environment: {
      SUBSCRIBERS_TABLE_NAME: table,
      AUDIENCES_TABLE_NAME: audiencesTable,
      AUDIENCE_TOPIC_PREFIX: topicPrefix,
      EMAIL_DOMAIN: from.slice(from.lastIndexOf('@') + 1),
      EMAIL_FROM_ADDRESS: from,
      ...optional('EMAIL_FROM_NAME', 'EmailFromName'),
      ...optional('EMAIL_REPLY_TO', 'EmailReplyTo'),
      ...optional('EMAIL_CONFIGURATION_SET', 'EmailConfigurationSetName'),
      ...optional('PREFERENCES_URL', 'EmailPreferencesUrl'),
      ...optional('LINK_KEY_SECRET_ID', 'EmailLinkKeySecretArn'),
    },
    queueArn,
    deadLetterQueueArn: get('EmailDeadLetterQueueArn'),
  };
}

/** Reads the stack's outputs and returns it as a target. */
export async function resolveStackTarget(options: {
  stackName: string;
  region?: string | undefined;
  profile?: string | undefined;
}): Promise<StackTarget> {
  const config: AwsClientConfig = {
    ...(options.region ? { region: options.region } : {}),
    ...(options.profile ? { profile: options.profile } : {}),
  };
  const cloudFormation = nameFailedResources(new CloudFormationClient({ ...config }), 'CloudFormation stack');
  let outputs: Output[];
  let stackId: string | undefined;
  try {
    const { Stacks = [] } = await cloudFormation.send(new DescribeStacksCommand({ StackName: options.stackName }));
    outputs = Stacks[0]?.Outputs ?? [];
    stackId = Stacks[0]?.StackId;
  } catch (error) {
    if (error instanceof Error && /does not exist/.test(error.message)) {
      throw new NotFoundError(
        `stack ${options.stackName} does not exist in this account and region; pass --stack <name> and --region, or --local for the sandbox`,
        { cause: error },
      );
    }
    throw error;
  } finally {
    cloudFormation.destroy();
  }
  const names = namesFromOutputs(options.stackName, outputs);
  const clients = new AwsClients(config);
  let lambda: LambdaClient | undefined;
  const lambdaClient = (): LambdaClient => {
    lambda ??= nameFailedResources(new LambdaClient({ ...config }), 'Lambda function');
    return lambda;
  };
  const functionName = (): string => {
    if (!names.alertFunctionName) {
      throw new NotFoundError(`stack ${options.stackName} has no AlertFunctionName output`);
    }
    return names.alertFunctionName;
  };
  let alertConfig: AlertRunConfig | undefined;
  return {
    kind: 'stack',
    stackName: options.stackName,
    label: `stack ${options.stackName}`,
    names,
    clients,
    async slackOwnWebhookSecrets() {
      if (!names.slackRelayFunctionArn) return {};
      const { Environment } = await lambdaClient().send(
        new GetFunctionConfigurationCommand({ FunctionName: names.slackRelayFunctionArn }),
      );
      const listed = Environment?.Variables?.SLACK_WEBHOOK_SECRETS;
      if (listed === undefined) return {};
      const parsed: unknown = JSON.parse(listed);
      if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return {};
      return Object.fromEntries(
        Object.entries(parsed).filter((entry): entry is [string, string] => typeof entry[1] === 'string'),
      );
    },
    async stackResourceOf(physicalId) {
      const client = nameFailedResources(new CloudFormationClient({ ...config }), 'CloudFormation stack');
      try {
        let nextToken: string | undefined;
        do {
          const page = await client.send(
            new ListStackResourcesCommand({ StackName: options.stackName, NextToken: nextToken }),
          );
          const found = page.StackResourceSummaries?.find((resource) => resource.PhysicalResourceId === physicalId);
          if (found) return found.LogicalResourceId ?? physicalId;
          nextToken = page.NextToken;
        } while (nextToken);
        return undefined;
      } finally {
        client.destroy();
      }
    },
    async alertRunConfig() {
      if (alertConfig) return alertConfig;
      const { Environment } = await lambdaClient().send(
        new GetFunctionConfigurationCommand({ FunctionName: functionName() }),
      );
      alertConfig = alertConfigFrom(Environment?.Variables ?? {}, `the environment of ${functionName()}`);
      return alertConfig;
    },
    async callerIdentity() {
      const sts = new STSClient({ ...config });
      try {
        return (await sts.send(new GetCallerIdentityCommand({}))).Arn;
      } catch {
        // Only used to label writes; the OS user is the fallback.
        return undefined;
      } finally {
        sts.destroy();
      }
    },
    async home() {
      const home = homeOfStackId(stackId);
      if (!home) {
        throw new OperationFailedError(
          `stack ${options.stackName} has no stack id to read its account and region from (${String(stackId)})`,
        );
      }
      return home;
    },
    async invokeAlertFunction(): Promise<InvokeOutcome> {
      let output: InvokeCommandOutput;
      try {
        output = await lambdaClient().send(
          new InvokeCommand({ FunctionName: functionName(), InvocationType: 'RequestResponse' }),
        );
      } catch (error) {
        if (error instanceof TooManyRequestsException) {
          // Reserved concurrency 1: a scheduled run is in progress.
          throw new OperationFailedError(
            `${functionName()} is already running (reserved concurrency 1); wait for the scheduled run to finish`,
            { cause: error },
          );
        }
        throw error;
      }
      const text = output.Payload ? new TextDecoder().decode(output.Payload) : '';
      let payload: unknown = text;
      try {
        payload = text === '' ? undefined : JSON.parse(text);
      } catch {
        // Not JSON: shown as text.
      }
      if (output.FunctionError) {
        const body = (typeof payload === 'object' && payload !== null ? payload : {}) as Record<string, unknown>;
        return {
          ok: false,
          errorType: typeof body.errorType === 'string' ? body.errorType : output.FunctionError,
          errorMessage: typeof body.errorMessage === 'string' ? body.errorMessage : text,
          requestId: output.$metadata.requestId,
        };
      }
      return { ok: true, payload };
    },
    close() {
      clients.destroy();
      lambda?.destroy();
    },
  };
}
