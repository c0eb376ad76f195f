/**
 * Where Slack incoming-webhook URLs are kept: a few Secrets Manager secrets, each a JSON map of
 * audience id → webhook URL, instead of one secret per audience. An audience's webhook lives in
 * shard `fnv1a(audienceId) mod WEBHOOK_SHARDS`, named `<prefix><shard>`
 * (`news-alerts/slack-webhooks/0` … `/3`), so the relay reads exactly one secret for an audience
 * and the bill has at most WEBHOOK_SHARDS secrets (US$0.40 each a month) however many audiences
 * post to Slack. docs/configuration.md says why this store and not SSM parameters or KMS
 * envelope encryption in the audiences table.
 *
 * The layout is shared by the relay (which reads it) and the CLI (which writes and migrates it).
 * Nothing here logs or returns a URL in an error: a webhook URL is a bearer credential.
 */

/** Secrets the webhook URLs are spread over; fixed, so every reader finds an audience's shard. */
export const WEBHOOK_SHARDS = 4;

/** Format version of a shard's JSON. */
const FORMAT = 1;

/**
 * Largest shard the CLI writes (bytes of its JSON): Secrets Manager takes 65,536; a little room is
 * kept. At ~110 bytes per webhook a shard holds ~590, the store ~2,300.
 */
export const WEBHOOK_SHARD_MAX_BYTES = 64_000;

/** 32-bit FNV-1a of the UTF-8 bytes: stable across runtimes, no dependency. */
function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (const byte of new TextEncoder().encode(text)) {
    hash ^= byte;
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash >>> 0;
}

/** The shard (0 … WEBHOOK_SHARDS − 1) that holds `audienceId`'s webhook. */
export const webhookShardOf = (audienceId: string): number => fnv1a(audienceId) % WEBHOOK_SHARDS;

/** The secret name of `audienceId`'s shard under `prefix` (`news-alerts/slack-webhooks/`). */
export const webhookShardName = (prefix: string, audienceId: string): string =>
  `${prefix}${webhookShardOf(audienceId)}`;

/**
 * The store's name prefix for a deployment whose per-audience webhook secrets were named
 * `<resourcePrefix>/slack/<audienceId>` (the `SlackWebhookSecretPrefix` output): the same prefix
 * with `slack/` turned into `slack-webhooks/`.
 */
export function webhookStorePrefixFor(legacySecretPrefix: string): string {
  return legacySecretPrefix.endsWith('slack/')
    ? `${legacySecretPrefix.slice(0, -'slack/'.length)}slack-webhooks/`
    : `${legacySecretPrefix}webhooks/`;
}

/** Why a shard's text could not be read as a webhook map (the text itself is never quoted). */
export class WebhookMapError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WebhookMapError';
  }
}

/**
 * A shard's secret string read as audience id → webhook URL. An empty string is an empty map (a
 * shard created empty); anything else must be `{"v":1,"webhooks":{…}}` with string values.
 * @throws WebhookMapError naming what is wrong, never quoting the text
 */
export function parseWebhookMap(text: string): Map<string, string> {
  if (text.trim() === '') return new Map();
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new WebhookMapError('is not JSON (expected {"v":1,"webhooks":{"<audienceId>":"https://…"}})');
  }
  const document = parsed as { v?: unknown; webhooks?: unknown } | null;
  if (typeof document !== 'object' || document === null || Array.isArray(document)) {
    throw new WebhookMapError('is not a JSON object (expected {"v":1,"webhooks":{…}})');
  }
  if (document.v !== FORMAT) throw new WebhookMapError(`has format version ${String(document.v)}, not ${FORMAT}`);
  const webhooks = document.webhooks;
  if (typeof webhooks !== 'object' || webhooks === null || Array.isArray(webhooks)) {
    throw new WebhookMapError('has no "webhooks" object');
  }
  const map = new Map<string, string>();
  for (const [audienceId, url] of Object.entries(webhooks)) {
    if (typeof url !== 'string') {
      throw new WebhookMapError(
        `holds a webhook of audience ${JSON.stringify(audienceId.slice(0, 64))} that is not a string`,
      );
    }
    map.set(audienceId, url);
  }
  return map;
}

/** A map as a shard's secret string (audiences sorted, so an unchanged map writes the same text). */
export function serializeWebhookMap(map: ReadonlyMap<string, string>): string {
  const webhooks = Object.fromEntries([...map].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  return JSON.stringify({ v: FORMAT, webhooks });
}
