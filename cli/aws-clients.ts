/**
 * One AWS SDK client per service for the whole CLI process, created on first use: a command that
 * only reads DynamoDB never loads SNS. The same holder serves the deployed stack (default
 * credential chain and region) and the local sandbox (moto server's endpoint, dummy credentials).
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { SNSClient } from '@aws-sdk/client-sns';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';

/** What every client is built with. */
export interface AwsClientConfig {
  readonly region?: string;
  /** A profile of the shared AWS config and credentials files (`--profile`); unset: AWS_PROFILE or default. */
  readonly profile?: string;
  readonly endpoint?: string;
  readonly credentials?: { readonly accessKeyId: string; readonly secretAccessKey: string };
}

/** Lazily created, shared clients. */
export class AwsClients {
  readonly config: AwsClientConfig;
  #dynamo: DynamoDBClient | undefined;
  #documents: DynamoDBDocumentClient | undefined;
  #sns: SNSClient | undefined;
  #secrets: SecretsManagerClient | undefined;

  constructor(config: AwsClientConfig) {
    this.config = config;
  }

  get dynamo(): DynamoDBClient {
    this.#dynamo ??= nameFailedResources(new DynamoDBClient({ ...this.config }), 'DynamoDB table');
    return this.#dynamo;
  }

  /** Document client with the alert function's marshalling options. */
  get documents(): DynamoDBDocumentClient {
    this.#documents ??= DynamoDBDocumentClient.from(this.dynamo, { marshallOptions: { removeUndefinedValues: true } });
    return this.#documents;
  }

  get sns(): SNSClient {
    this.#sns ??= nameFailedResources(new SNSClient({ ...this.config }), 'SNS topic');
    return this.#sns;
  }

  get secrets(): SecretsManagerClient {
    this.#secrets ??= nameFailedResources(new SecretsManagerClient({ ...this.config }), 'secret');
    return this.#secrets;
  }

  /** Closes every connection pool, so the process can exit at once. */
  destroy(): void {
    this.#dynamo?.destroy();
    this.#sns?.destroy();
    this.#secrets?.destroy();
  }
}

/** What a failed AWS call was about, attached to its error for cli/errors.ts to name in the message. */
export interface AwsCallContext {
  readonly service: string;
  readonly operation: string;
  readonly resource?: string;
}

/** The table, topic, secret, function, queue or stack a request names. */
function resourceOf(input: unknown): string | undefined {
  if (typeof input !== 'object' || input === null) return undefined;
  const fields = input as Record<string, unknown>;
  for (const key of ['TableName', 'TopicArn', 'SecretId', 'FunctionName', 'QueueUrl', 'StackName', 'Name']) {
    if (typeof fields[key] === 'string') return fields[key];
  }
  // TransactWriteItems: [{ Put: { TableName } }, ...]; BatchWriteItem / BatchGetItem: { RequestItems: { table: ... } }
  if (Array.isArray(fields.TransactItems)) {
    for (const item of fields.TransactItems) {
      for (const step of Object.values((item ?? {}) as Record<string, { TableName?: unknown }>)) {
        if (typeof step?.TableName === 'string') return step.TableName;
      }
    }
  }
  if (typeof fields.RequestItems === 'object' && fields.RequestItems !== null) {
    return Object.keys(fields.RequestItems).join(', ') || undefined;
  }
  return undefined;
}

/** The smallest view of an SDK client this needs (every v3 client has it). */
interface WithMiddleware {
  readonly middlewareStack: {
    add(
      middleware: (
        next: (args: { input: unknown }) => Promise<unknown>,
        context: { commandName?: string },
      ) => (args: { input: unknown }) => Promise<unknown>,
      options: { step: 'initialize'; name: string; override: boolean },
    ): void;
  };
}

/**
 * Makes every error of `client` carry what the call was about (`$newsAlerts`: service, operation,
 * resource), so a failure can say which table, topic or secret is missing or forbidden.
 */
export function nameFailedResources<C>(client: C, service: string): C {
  (client as unknown as WithMiddleware).middlewareStack.add(
    (next, context) => async (args) => {
      try {
        return await next(args);
      } catch (error) {
        if (typeof error === 'object' && error !== null && !('$newsAlerts' in error)) {
          const call: AwsCallContext = {
            service,
            operation: (context.commandName ?? 'call').replace(/Command$/, ''),
            resource: resourceOf(args.input),
          };
          Object.defineProperty(error, '$newsAlerts', { value: call, enumerable: false });
        }
        throw error;
      }
    },
    { step: 'initialize', name: 'newsAlertsNameFailedResources', override: true },
  );
  return client;
}
