/**
 * The {@link LinkKeys} port on Secrets Manager, through Powertools Parameters: the link-key secret
 * (`{"current": "1", "key1": "…"}`, tokens.ts `parseLinkKeySecret`) is cached for
 * `maxAgeSeconds`, and read again at once when a link names a version the cached copy does not
 * have (a key added by a rotation a moment ago). Keys are registered with the log redaction, so
 * no log line can ever carry one.
 *
 * Links come from anyone, and a link is read before its signature can be checked. So only a
 * version above every cached one (what a rotation adds) reads the secret again, and at most once
 * per {@link REFETCH_INTERVAL_MS}: a flood of made-up versions costs one Secrets Manager read per
 * interval, not one per request. A version at or below the newest cached one is a retired key.
 */
import { SecretsProvider } from '@aws-lambda-powertools/parameters/secrets';
import type { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { type LinkKey, type LinkKeys, parseLinkKeySecret } from '#core/email/tokens';
import { ConfigError } from '#core/errors';
import { registerSecret } from '#shared/secret-redaction';

export interface SecretsManagerLinkKeysOptions {
  readonly client: SecretsManagerClient;
  readonly secretId: string;
  readonly maxAgeSeconds?: number;
  /** The clock that spaces forced reads (ms since the epoch). */
  readonly now?: () => number;
}

/** The least time between two reads forced by a link naming a version the cache does not have. */
export const REFETCH_INTERVAL_MS = 10_000;

export class SecretsManagerLinkKeys implements LinkKeys {
  readonly #provider: SecretsProvider;
  readonly #secretId: string;
  readonly #maxAge: number;
  readonly #now: () => number;
  #lastForcedAt = Number.NEGATIVE_INFINITY;

  constructor(options: SecretsManagerLinkKeysOptions) {
    this.#provider = new SecretsProvider({ awsSdkV3Client: options.client });
    this.#secretId = options.secretId;
    this.#maxAge = options.maxAgeSeconds ?? 300;
    this.#now = options.now ?? Date.now;
  }

  async current(): Promise<LinkKey> {
    return (await this.#read(false)).current;
  }

  async byVersion(version: string): Promise<LinkKey | undefined> {
    const keys = await this.#read(false);
    const cached = keys.all.get(version);
    if (cached !== undefined) return cached;
    const newest = Math.max(...[...keys.all.keys()].map(Number));
    const now = this.#now();
    if (!(Number(version) > newest) || now - this.#lastForcedAt < REFETCH_INTERVAL_MS) return undefined;
    this.#lastForcedAt = now;
    return (await this.#read(true)).all.get(version);
  }

  async #read(forceFetch: boolean): Promise<ReturnType<typeof parseLinkKeySecret>> {
    let value: unknown;
    try {
      value = await this.#provider.get(this.#secretId, { maxAge: this.#maxAge, forceFetch });
    } catch (error) {
      throw new ConfigError(
        `could not read the email link keys from secret "${this.#secretId}": ${error instanceof Error ? error.name : String(error)}`,
        { cause: error },
      );
    }
    if (typeof value !== 'string') throw new ConfigError(`secret "${this.#secretId}" holds no string`);
    let keys: ReturnType<typeof parseLinkKeySecret>;
    try {
      keys = parseLinkKeySecret(value);
    } catch (error) {
      throw new ConfigError(`secret "${this.#secretId}": ${(error as Error).message}`, { cause: error });
    }
    for (const key of keys.all.values()) registerSecret(Buffer.from(key.key).toString('utf8'));
    return keys;
  }
}
