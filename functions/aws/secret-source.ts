/**
 * The provider API key from Secrets Manager through Powertools Parameters, cached across warm
 * invocations for a deliberate `maxAgeSeconds`: long enough that a run every few minutes costs
 * almost no GetSecretValue calls, short enough that a rotated key is picked up within minutes
 * even without the forced refresh the provider client performs after a 401.
 */

import { SecretsProvider } from '@aws-lambda-powertools/parameters/secrets';
import type { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { ConfigError } from '#core/errors';
import type { SecretSource } from '#core/ports';
import { registerSecret } from '#shared/secret-redaction';

/** JSON keys accepted when the secret is a JSON object instead of the bare key. */
const jsonKeyNames = ['apiKey', 'api_key', 'key', 'X-API-KEY'] as const;

export interface SecretsManagerApiKeyOptions {
  readonly client: SecretsManagerClient;
  /** Secret name or ARN. */
  readonly secretId: string;
  /** Cache age in seconds (default 300). */
  readonly maxAgeSeconds?: number;
}

/** Reads the API key: the secret string itself, or `{"apiKey": "..."}`. */
export class SecretsManagerApiKey implements SecretSource {
  readonly #provider: SecretsProvider;
  readonly #secretId: string;
  readonly #maxAge: number;

  constructor(options: SecretsManagerApiKeyOptions) {
    this.#provider = new SecretsProvider({ awsSdkV3Client: options.client });
    this.#secretId = options.secretId;
    this.#maxAge = options.maxAgeSeconds ?? 300;
  }

  async apiKey(options: { forceRefresh?: boolean } = {}): Promise<string> {
    let value: unknown;
    try {
      value = await this.#provider.get(this.#secretId, { maxAge: this.#maxAge, forceFetch: options.forceRefresh });
    } catch (error) {
      throw new ConfigError(
        `could not read the news API key from secret "${this.#secretId}": ${error instanceof Error ? error.message : String(error)}`,
        { cause: error },
      );
    }
    const key = typeof value === 'string' ? extractKey(value) : undefined;
    if (!key) {
      // Never echo the value: it is the secret.
      throw new ConfigError(
        `secret "${this.#secretId}" holds no API key; store the key as the secret string (or as {"apiKey": "..."}), e.g. aws secretsmanager put-secret-value --secret-id ${this.#secretId} --secret-string <key>`,
      );
    }
    // From now on the shared logger and every sanitized error chain redact it.
    registerSecret(key);
    return key;
  }
}

function extractKey(secretString: string): string | undefined {
  const trimmed = secretString.trim();
  if (trimmed.startsWith('{')) {
    try {
      const parsed: unknown = JSON.parse(trimmed);
      if (typeof parsed === 'object' && parsed !== null) {
        for (const name of jsonKeyNames) {
          const candidate = (parsed as Record<string, unknown>)[name];
          if (typeof candidate === 'string' && candidate.trim()) return candidate.trim();
        }
      }
      return undefined;
    } catch {
      // not JSON after all: a key that happens to start with '{'
    }
  }
  return trimmed || undefined;
}
