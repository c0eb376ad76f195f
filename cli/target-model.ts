/**
 * What a target is, shared by the two kinds (cli/target.ts resolves one; cli/stack-target.ts builds
 * the deployed stack's), so neither module imports the other: target.ts loads stack-target.ts
 * with a dynamic import, and stack-target.ts needs only this module.
 */
import { type AlertRunConfig, loadAlertRunConfig } from '#alert-run/config';
import { ConfigError } from '#core/errors';
import type { AwsClients } from './aws-clients.ts';
import { UsageError } from './errors.ts';
import type { SandboxDescriptor } from './sandbox-descriptor.ts';

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
  /** The Slack webhook store's secret name prefix (`SlackWebhookStorePrefix`; derived from the above when absent). */
  readonly slackWebhookStorePrefix?: string | undefined;
  readonly slackRelayFunctionArn?: string | undefined;
  readonly slackRelayDeadLetterQueueArn?: string | undefined;
  readonly deliveryDeadLetterQueueArn?: string | undefined;
  /** `publishMode: sharded` stacks: work items that failed every receive (`replay --parked` takes them). */
  readonly workDeadLetterQueueUrl?: string | undefined;
  /** Sandbox only: SQS queues `<prefix><audienceId>` stand in for the Slack relay Lambda. */
  readonly slackStandInQueuePrefix?: string | undefined;
  /** SES email (`emailDomain` set; the sandbox always has it): see {@link EmailTargetNames}. */
  readonly email?: EmailTargetNames | undefined;
}

/** What the `email` commands need of a deployment with SES email. */
export interface EmailTargetNames {
  /** The email functions' variables (functions/email/config.ts), as the deployment sets them. */
  readonly environment: Readonly<Record<string, string>>;
  /** The email queue: audience topics are subscribed to it. */
  readonly queueArn: string;
  /** Redrive policy of those subscriptions (stack only). */
  readonly deadLetterQueueArn?: string | undefined;
  /** Sandbox only: where sent email is written as `.eml` files. */
  readonly mailDir?: string | undefined;
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
  | {
      readonly ok: false;
      readonly errorType: string;
      readonly errorMessage: string;
      /** The invocation's request id: the failed run's `runId` in the run history. */
      readonly requestId?: string | undefined;
    };

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
  /**
   * The audiences whose Slack webhook stays in a secret of their own (cdk.json
   * `slack.webhookSecretArn`), with that secret's ARN: the relay reads it before the webhook store.
   * Read from the relay's environment; empty without a relay.
   */
  slackOwnWebhookSecrets(): Promise<Readonly<Record<string, string>>>;
  /**
   * The logical id of the stack's resource whose physical id is `physicalId` (a topic's ARN), if
   * the stack made it: such a resource is CloudFormation's to change or delete (a cdk.json
   * audience's topic), not the CLI's.
   */
  stackResourceOf(physicalId: string): Promise<string | undefined>;
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
  /** AWS profile for the stack's credentials and region (the sandbox ignores it). */
  readonly profile?: string;
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
