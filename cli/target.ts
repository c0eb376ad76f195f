/**
 * Which deployment a command talks to: the deployed stack (names from its CloudFormation outputs,
 * standard AWS credentials and region) or the local sandbox (`--local`: names from the sandbox
 * descriptor, moto server's endpoint). Commands see the same {@link Target} either way, so every
 * command works against both.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { localAwsConfig } from '#sandbox/moto';
import { AwsClients } from './aws-clients.ts';
import { NotFoundError, OperationFailedError } from './errors.ts';
import { caPathOf, defaultSandboxDir, descriptorFileName, readDescriptor } from './sandbox-descriptor.ts';
import {
  alertConfigFrom,
  type DeploymentHome,
  type LocalTarget,
  type ResourceNames,
  type Target,
  type TargetOptions,
} from './target-model.ts';

export {
  alertConfigFrom,
  type DeploymentHome,
  type InvokeOutcome,
  type LocalTarget,
  type ResourceNames,
  type StackTarget,
  type Target,
  type TargetOptions,
} from './target-model.ts';

/** Resolves the target of a command (reads the descriptor or the stack outputs). */
export async function resolveTarget(options: TargetOptions, projectRoot: string): Promise<Target> {
  if (options.local || options.sandboxFile !== undefined) {
    const path = resolve(options.sandboxFile ?? resolve(defaultSandboxDir(projectRoot), descriptorFileName));
    return localTarget(path, options.sandboxFile !== undefined);
  }
  // Loaded only for the stack: the sandbox never needs the CloudFormation, Lambda or STS clients.
  const { resolveStackTarget } = await import('./stack-target.ts');
  return await resolveStackTarget({ stackName: options.stack, region: options.region, profile: options.profile });
}

function localTarget(descriptorPath: string, given: boolean): LocalTarget {
  const descriptor = readDescriptor(descriptorPath, given);
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
    ...(descriptor.email ? { email: descriptor.email } : {}),
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
