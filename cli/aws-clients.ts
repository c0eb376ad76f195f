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
    this.#dynamo ??= new DynamoDBClient({ ...this.config });
    return this.#dynamo;
  }

  /** Document client with the alert function's marshalling options. */
  get documents(): DynamoDBDocumentClient {
    this.#documents ??= DynamoDBDocumentClient.from(this.dynamo, { marshallOptions: { removeUndefinedValues: true } });
    return this.#documents;
  }

  get sns(): SNSClient {
    this.#sns ??= new SNSClient({ ...this.config });
    return this.#sns;
  }

  get secrets(): SecretsManagerClient {
    this.#secrets ??= new SecretsManagerClient({ ...this.config });
    return this.#secrets;
  }

  /** Closes every connection pool, so the process can exit at once. */
  destroy(): void {
    this.#dynamo?.destroy();
    this.#sns?.destroy();
    this.#secrets?.destroy();
  }
}
