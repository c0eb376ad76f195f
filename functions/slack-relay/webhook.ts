/**
 * The two outside things the relay talks to: Secrets Manager for each audience's incoming-webhook
 * URL (the webhook store of functions/shared/slack-webhook-store.ts: a few secrets, each a map of
 * audience id → URL; or an existing secret of the audience's own, given by ARN), and Slack itself
 * over HTTPS (undici). The URL is a bearer credential (anyone holding it can
 * post to the channel), so it is never logged, never put in an error message, and scrubbed from
 * whatever undici reports.
 */
import { SecretsProvider } from '@aws-lambda-powertools/parameters/secrets';
import type { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import type { Dispatcher } from 'undici';
import { request } from '#shared/http-pool';
import { checkTargetUrl } from '#shared/network-targets';
import { registerSecret } from '#shared/secret-redaction';
import { parseWebhookMap, WebhookMapError, webhookShardName } from '#shared/slack-webhook-store';
import { SlackWebhookConfigError } from './errors.ts';

/** Where an audience's webhook URL is kept. */
export interface WebhookSource {
  /**
   * The audience's webhook URL and the secret it came from. Cached; `forceRefresh` reads the
   * secret again (after Slack refused the cached URL, in case ops replaced it).
   * @throws SlackWebhookConfigError when the secret is missing, empty, not an https:// URL, or a
   *   URL the target-address policy refuses (an internal host, credentials in it)
   */
  webhook(audienceId: string, options?: { forceRefresh?: boolean }): Promise<{ url: string; secretId: string }>;
}

/** Options of {@link SecretsManagerWebhooks}. */
export interface SecretsManagerWebhooksOptions {
  readonly client: SecretsManagerClient;
  /** Secret ids of audiences whose webhook is in an existing secret of their own (by ARN). */
  readonly explicitSecrets: Readonly<Record<string, string>>;
  /** Every other audience's webhook is in the store's shard `<this><shard>` (webhookShardName). */
  readonly storePrefix: string;
  readonly maxAgeSeconds: number;
  /**
   * Accept a webhook on an internal host (loopback, private…): tests and local receivers only.
   * The handler never sets it: a webhook goes to Slack, on the public internet.
   */
  readonly allowInternalTargets?: boolean;
}

/** JSON keys accepted when the secret is a JSON object instead of the bare URL. */
const jsonKeys = ['webhookUrl', 'webhook_url', 'url'] as const;

/** Webhook URLs from Secrets Manager through Powertools Parameters (in-memory cache with a max age). */
export class SecretsManagerWebhooks implements WebhookSource {
  readonly #provider: SecretsProvider;
  readonly #options: SecretsManagerWebhooksOptions;

  constructor(options: SecretsManagerWebhooksOptions) {
    this.#provider = new SecretsProvider({ awsSdkV3Client: options.client });
    this.#options = options;
  }

  /** The secret that holds an audience's webhook URL: its own, or its shard of the store. */
  secretIdOf(audienceId: string): string {
    return this.#options.explicitSecrets[audienceId] ?? webhookShardName(this.#options.storePrefix, audienceId);
  }

  async webhook(
    audienceId: string,
    options: { forceRefresh?: boolean } = {},
  ): Promise<{ url: string; secretId: string }> {
    const secretId = this.secretIdOf(audienceId);
    const own = this.#options.explicitSecrets[audienceId] !== undefined;
    let value: unknown;
    try {
      value = await this.#provider.get(secretId, {
        maxAge: this.#options.maxAgeSeconds,
        forceFetch: options.forceRefresh ?? false,
        // The version ops made current (the CLI moves this stage to a new version of a store shard).
        sdkOptions: { VersionStage: 'AWSCURRENT' },
      });
    } catch (error) {
      // The SDK's message names the secret, never its value.
      throw new SlackWebhookConfigError(
        `could not read the Slack webhook of audience "${audienceId}" from secret "${secretId}": ${error instanceof Error ? error.message : String(error)}`,
      );
    }
    const url =
      typeof value !== 'string' ? undefined : own ? extractUrl(value) : fromStore(value, audienceId, secretId);
    if (url === undefined) {
      throw new SlackWebhookConfigError(
        own
          ? `secret "${secretId}" holds no webhook URL for audience "${audienceId}"; put the incoming-webhook URL (https://hooks.slack.com/services/…) as the secret string`
          : `no Slack webhook is stored for audience "${audienceId}" (webhook store secret "${secretId}"); store it with: news-alerts subscriptions add ${audienceId} --slack-webhook (a deployment that kept one secret per audience: news-alerts subscriptions migrate-webhooks)`,
      );
    }
    // The path is the credential (anyone holding it can post): from now on every log line and
    // error chain of this process redacts it, whatever field or encoding it turns up in.
    registerSecret(secretPathOf(url));
    if (!url.startsWith('https://')) {
      throw new SlackWebhookConfigError(`secret "${secretId}" must hold an https:// incoming-webhook URL`);
    }
    // The target-address policy (docs/how-it-works.md): the reason names the host, never the path.
    const target = checkTargetUrl(url, { allowInternal: this.#options.allowInternalTargets === true });
    if (!target.ok) {
      throw new SlackWebhookConfigError(
        `secret "${secretId}" holds a webhook URL that cannot be used: ${target.reason}; put the incoming-webhook URL exactly as Slack shows it (https://hooks.slack.com/services/…)`,
      );
    }
    return { url, secretId };
  }
}

/** The audience's URL in a store shard's map; a shard that is not a map is a configuration error. */
function fromStore(secretString: string, audienceId: string, secretId: string): string | undefined {
  try {
    const url = parseWebhookMap(secretString).get(audienceId)?.trim();
    return url === '' ? undefined : url;
  } catch (error) {
    if (!(error instanceof WebhookMapError)) throw error;
    // The message says what is wrong with the shard, never what it holds.
    throw new SlackWebhookConfigError(
      `webhook store secret "${secretId}" ${error.message}; rewrite it with news-alerts subscriptions add <audienceId> --slack-webhook`,
    );
  }
}

function extractUrl(secretString: string): string | undefined {
  const trimmed = secretString.trim();
  if (trimmed.startsWith('{')) {
    try {
      const parsed = JSON.parse(trimmed) as Record<string, unknown>;
      for (const key of jsonKeys) {
        const candidate = parsed[key];
        if (typeof candidate === 'string' && candidate.trim() !== '') return candidate.trim();
      }
      return undefined;
    } catch {
      return undefined;
    }
  }
  return trimmed === '' ? undefined : trimmed;
}

/** Slack's answer to one post. */
export interface WebhookResponse {
  readonly status: number;
  readonly retryAfter?: string | undefined;
  /** Slack's short error code (`invalid_payload`, `channel_is_archived`, …), trimmed. */
  readonly detail: string;
}

/** Posts a JSON body to a webhook. */
export interface WebhookPoster {
  /** Resolves with any HTTP answer; rejects only when no answer came (network, TLS, timeout). */
  post(url: string, body: string): Promise<WebhookResponse>;
}

/** Replaces the webhook URL, and its secret path alone, wherever they occur in `text`. */
export function redactWebhook(text: string, url: string): string {
  let redacted = text.split(url).join('[webhook]');
  try {
    const { pathname, search } = new URL(url);
    if (pathname.length > 1) redacted = redacted.split(`${pathname}${search}`).join('[webhook]');
    if (pathname.length > 1) redacted = redacted.split(pathname).join('[webhook]');
  } catch {
    // not a URL: the whole-string replacement above is all there is
  }
  return redacted;
}

/** Options of {@link UndiciWebhookPoster}. */
export interface UndiciWebhookPosterOptions {
  /** Connection pool to use (the handler's keep-alive pool; tests pass one that trusts the local CA). */
  readonly dispatcher: Dispatcher;
  readonly timeoutMs: number;
}

/** Posts with undici (keep-alive pool; connect, header and body timeouts). */
export class UndiciWebhookPoster implements WebhookPoster {
  readonly #options: UndiciWebhookPosterOptions;

  constructor(options: UndiciWebhookPosterOptions) {
    this.#options = options;
  }

  async post(url: string, body: string): Promise<WebhookResponse> {
    const response = await request(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json; charset=utf-8' },
      body,
      headersTimeout: this.#options.timeoutMs,
      bodyTimeout: this.#options.timeoutMs,
      signal: AbortSignal.timeout(this.#options.timeoutMs),
      dispatcher: this.#options.dispatcher,
    });
    // Read the (short) body in full so the connection goes back to the pool.
    const text = await response.body.text();
    const retryAfter = response.headers['retry-after'];
    return {
      status: response.statusCode,
      retryAfter: Array.isArray(retryAfter) ? retryAfter[0] : retryAfter,
      detail: redactWebhook(text.trim().slice(0, 200), url),
    };
  }
}

/** The secret part of a webhook URL: its path and query (the host is public knowledge). */
function secretPathOf(url: string): string | undefined {
  try {
    const { pathname, search } = new URL(url);
    return pathname.length > 1 ? `${pathname}${search}` : undefined;
  } catch {
    return undefined;
  }
}
