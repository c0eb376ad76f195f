/**
 * Which deployment a command talks to: the deployed stack (names from its CloudFormation outputs,
 * standard AWS credentials and region) or the local sandbox (`--local`: names from the sandbox
 * descriptor, moto server's endpoint). Commands see the same {@link Target} either way, so every
 * command works against both.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { type AlertRunConfig, loadAlertRunConfig } from '#alert-run/config';
import { ConfigError } from '#core/errors';
import { localAwsConfig } from '#sandbox/moto';
import { AwsClients } from './aws-clients.ts';
import { NotFoundError, OperationFailedError, UsageError } from './errors.ts';
import {
  caPathOf,
  defaultSandboxDir,
  descriptorFileName,
  readDescriptor,
  type SandboxDescriptor,
} from './sandbox-descriptor.ts';

/** Resource names a command may need; the stack's outputs or the sandbox descriptor provide them. */
export interface ResourceNames {
  readonly rulesTable: string;
  readonly audiencesTable: string;
  readonly stateTable: string;
  /** Audience topics are `<audienceTopicPrefix><audienceId>`. */
  readonly audienceTopicPrefix: string;
  /** KMS key new audience topics are encrypted with (stack only). */
  readonly audienceTopicKeyArn?: string | undefined;
  readonly apiKeySecretId: string;
  readonly alertFunctionName?: string | undefined;
  readonly slackWebhookSecretPrefix?: string | undefined;
  readonly slackRelayFunctionArn?: string | undefined;
  readonly slackRelayDeadLetterQueueArn?: string | undefined;
  readonly deliveryDeadLetterQueueArn?: string | undefined;
  /** Sandbox only: SQS queues `<prefix><audienceId>` stand in for the Slack relay Lambda. */
  readonly slackStandInQueuePrefix?: string | undefined;
}

/** Where the deployment lives: the only account and region its alert function can publish in. */
export interface DeploymentHome {
  readonly partition: string;
  readonly region: string;
  readonly account: string;
}

/** What invoking the deployed alert function returned. */
export type InvokeOutcome =
  | { readonly ok: true; readonly payload: unknown }
  | { readonly ok: false; readonly errorType: string; readonly errorMessage: string };

interface TargetBase {
  /** `stack NewsAlerts` or `sandbox /path/.sandbox/sandbox.json`, for messages. */
  readonly label: string;
  readonly names: ResourceNames;
  readonly clients: AwsClients;
  /** The alert function's configuration: what `run`, `preview` and `replay` read the provider with. */
  alertRunConfig(): Promise<AlertRunConfig>;
  /** The AWS identity making the calls, when it can be known (for `updatedBy`). */
  callerIdentity(): Promise<string | undefined>;
  /** The deployment's account and region (audience topics must be there). */
  home(): Promise<DeploymentHome>;
  close(): void;
}

/** The deployed stack. */
export interface StackTarget extends TargetBase {
  readonly kind: 'stack';
  readonly stackName: string;
  /** Invokes the alert function synchronously (RequestResponse). */
  invokeAlertFunction(): Promise<InvokeOutcome>;
}

/** The local sandbox. */
export interface LocalTarget extends TargetBase {
  readonly kind: 'local';
  readonly descriptorPath: string;
  readonly descriptor: SandboxDescriptor;
}

export type Target = StackTarget | LocalTarget;

/** The global options that choose the target. */
export interface TargetOptions {
  readonly local?: boolean;
  readonly sandboxFile?: string;
  readonly stack: string;
  readonly region?: string;
}

/** Resolves the target of a command (reads the descriptor or the stack outputs). */
export async function resolveTarget(options: TargetOptions, projectRoot: string): Promise<Target> {
  if (options.local || options.sandboxFile !== undefined) {
    const path = resolve(options.sandboxFile ?? resolve(defaultSandboxDir(projectRoot), descriptorFileName));
    return localTarget(path);
  }
  // Loaded only for the stack: the sandbox never needs the CloudFormation, Lambda or STS clients.
  const { resolveStackTarget } = await import('./stack-target.ts');
  return await resolveStackTarget({ stackName: options.stack, region: options.region });
}

function localTarget(descriptorPath: string): LocalTarget {
  const descriptor = readDescriptor(descriptorPath);
  const clients = new AwsClients({ ...localAwsConfig(descriptor.endpoint), region: descriptor.region });
  let home: Promise<DeploymentHome> | undefined;
  const names: ResourceNames = {
    rulesTable: descriptor.names.rulesTable,
    audiencesTable: descriptor.names.audiencesTable,
    stateTable: descriptor.names.stateTable,
    audienceTopicPrefix: descriptor.names.audienceTopicPrefix,
    apiKeySecretId: descriptor.names.apiKeySecretId,
    slackWebhookSecretPrefix: descriptor.names.slackWebhookSecretPrefix,
    slackStandInQueuePrefix: descriptor.names.slackStandInQueuePrefix,
  };
  return {
    kind: 'local',
    label: `sandbox ${descriptorPath}`,
    descriptorPath,
    descriptor,
    names,
    clients,
    async alertRunConfig() {
      const caPath = caPathOf(descriptor, descriptorPath);
      let caPem: string;
      try {
        caPem = readFileSync(caPath, 'utf8');
      } catch (error) {
        throw new NotFoundError(`the sandbox's CA certificate ${caPath} is missing; restart the sandbox`, {
          cause: error,
        });
      }
      return alertConfigFrom({ ...descriptor.alertEnvironment, NEWS_API_CA_PEM: caPem }, `the sandbox descriptor`);
    },
    async callerIdentity() {
      // moto accepts any credentials: there is no meaningful caller to record.
      return undefined;
    },
    async home() {
      // moto's account (123456789012 unless MOTO_ACCOUNT_ID says otherwise) is what its STS reports.
      home ??= (async () => {
        const { STSClient, GetCallerIdentityCommand } = await import('@aws-sdk/client-sts');
        const sts = new STSClient({ ...clients.config });
        try {
          const { Account } = await sts.send(new GetCallerIdentityCommand({}));
          if (!Account)
            throw new OperationFailedError(`the sandbox's STS returned no account (${descriptor.endpoint})`);
          return { partition: 'aws', region: descriptor.region, account: Account };
        } finally {
          sts.destroy();
        }
      })();
      return await home;
    },
    close() {
      clients.destroy();
    },
  };
}

/** The alert run's own config validation, with the source named when it fails. */
export function alertConfigFrom(
  environment: Readonly<Record<string, string | undefined>>,
  source: string,
): AlertRunConfig {
  try {
    return loadAlertRunConfig(environment);
  } catch (error) {
    if (error instanceof ConfigError) throw new UsageError(`${source}: ${error.message}`, [], { cause: error });
    throw error;
  }
}
