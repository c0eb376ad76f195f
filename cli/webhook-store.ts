/**
 * Writes Slack webhook URLs into the webhook store (functions/shared/slack-webhook-store.ts): a
 * few Secrets Manager secrets, each a JSON map of audience id → URL. One webhook is replaced alone
 * (its shard is read, changed and written back) and never at the expense of a webhook someone
 * else wrote at the same moment: the new version is put aside (`AWSPENDING`) and made current
 * only if the version it was computed from is still current (UpdateSecretVersionStage with
 * `RemoveFromVersionId`); otherwise the shard is read again and the change applied anew.
 *
 * A URL is never part of an error message or of anything returned: they name audiences and shards.
 */
import { randomUUID } from 'node:crypto';
import {
  CreateSecretCommand,
  GetSecretValueCommand,
  PutSecretValueCommand,
  ResourceExistsException,
  ResourceNotFoundException,
  type SecretsManagerClient,
  UpdateSecretVersionStageCommand,
} from '@aws-sdk/client-secrets-manager';
import {
  parseWebhookMap,
  serializeWebhookMap,
  WEBHOOK_SHARD_MAX_BYTES,
  WebhookMapError,
  webhookShardName,
  webhookStorePrefixFor,
} from '#shared/slack-webhook-store';
import { OperationFailedError } from './errors.ts';

/** Attempts of one shard's read-change-write when another writer keeps getting there first. */
const maxAttempts = 5;

/** What {@link storeWebhooks} did, by audience id. */
export interface StoreOutcome {
  /** Written (new, or replacing another URL). */
  readonly stored: readonly string[];
  /** Already held exactly this URL. */
  readonly unchanged: readonly string[];
  /** Held another URL, left as it was (`keepExisting`). */
  readonly kept: readonly string[];
  /** The shards (secret names) that were created. */
  readonly createdShards: readonly string[];
  /** Taken out of the store ({@link removeWebhooks}). */
  readonly removed: readonly string[];
}

/** One shard as read: its map, and the version it came from (undefined: the secret does not exist). */
async function readShard(
  secrets: SecretsManagerClient,
  name: string,
): Promise<{ map: Map<string, string>; versionId: string | undefined }> {
  try {
    // The current version, named: what the relay reads, and what the stage move below compares with.
    const { SecretString, VersionId } = await secrets.send(
      new GetSecretValueCommand({ SecretId: name, VersionStage: 'AWSCURRENT' }),
    );
    try {
      return { map: parseWebhookMap(SecretString ?? ''), versionId: VersionId };
    } catch (error) {
      if (!(error instanceof WebhookMapError)) throw error;
      throw new OperationFailedError(
        `the webhook store secret ${name} ${error.message}; nothing was written (fix or delete the secret, then run this again)`,
      );
    }
  } catch (error) {
    if (error instanceof ResourceNotFoundException) return { map: new Map(), versionId: undefined };
    throw error;
  }
}

/**
 * Puts `webhooks` (audience id → URL) into the store under `prefix`, one shard at a time. With
 * `keepExisting`, an audience that already has another URL keeps it (the migration's rule: the
 * store is newer than what it migrates from).
 * @throws OperationFailedError when a shard would outgrow a secret, or stays contended
 */
export async function storeWebhooks(
  secrets: SecretsManagerClient,
  prefix: string,
  webhooks: ReadonlyMap<string, string | null>,
  options: { keepExisting?: boolean; description?: string } = {},
): Promise<StoreOutcome> {
  const outcome = {
    stored: [] as string[],
    unchanged: [] as string[],
    kept: [] as string[],
    createdShards: [] as string[],
    removed: [] as string[],
  };
  for (const [name, entries] of byShard(prefix, webhooks)) {
    await storeInShard(secrets, name, entries, options, outcome);
  }
  return outcome;
}

/**
 * What {@link storeWebhooks} with `keepExisting` would do, read from the shards and written nowhere
 * (a migration's dry run): which audiences it would store, which hold this URL already, and which
 * keep another.
 */
export async function planWebhooks(
  secrets: SecretsManagerClient,
  prefix: string,
  webhooks: ReadonlyMap<string, string>,
): Promise<Pick<StoreOutcome, 'stored' | 'unchanged' | 'kept'>> {
  const plan = { stored: [] as string[], unchanged: [] as string[], kept: [] as string[] };
  for (const [name, entries] of byShard(prefix, webhooks)) {
    // The change applied to a copy of what the shard holds, which is then dropped.
    const change = applyToShard((await readShard(secrets, name)).map, entries, true);
    plan.stored.push(...change.stored);
    plan.unchanged.push(...change.unchanged);
    plan.kept.push(...change.kept);
  }
  return plan;
}

/**
 * Why a shard holding `map` would not fit one secret, or undefined when it fits. Names the entries
 * taking the most room (never their URLs): the fix is to take out those no longer used
 * (subscriptions remove, audiences delete) or to shorten what was pasted.
 */
function oversizeProblem(name: string, map: ReadonlyMap<string, string>, text = serializeWebhookMap(map)) {
  if (Buffer.byteLength(text, 'utf8') <= WEBHOOK_SHARD_MAX_BYTES) return undefined;
  const largest = [...map]
    .sort((a, b) => b[1].length - a[1].length)
    .slice(0, 3)
    .map(([audienceId, url]) => `${audienceId} (${url.length} characters)`);
  return `the webhook store secret ${name} would hold ${map.size} webhooks, more than fits one secret (${WEBHOOK_SHARD_MAX_BYTES} bytes); the largest entries are ${largest.join(', ')}; remove the webhooks no longer used (news-alerts subscriptions remove <audienceId> <id>) and try again; nothing was written to it`;
}

/**
 * What {@link storeWebhooks} would refuse, by shard, read from the shards and written nowhere (a
 * migration's dry run): the problem of each shard `webhooks` would outgrow.
 */
export async function overfullShards(
  secrets: SecretsManagerClient,
  prefix: string,
  webhooks: ReadonlyMap<string, string>,
  options: { keepExisting?: boolean } = {},
): Promise<Map<string, string>> {
  const problems = new Map<string, string>();
  for (const [name, entries] of byShard(prefix, webhooks)) {
    const { map } = await readShard(secrets, name);
    const change = applyToShard(map, entries, options.keepExisting === true);
    // A shard the change leaves as it is is not written (storeInShard), so it cannot fail.
    if (change.stored.length === 0 && change.removed.length === 0) continue;
    const problem = oversizeProblem(name, map);
    if (problem !== undefined) problems.set(name, problem);
  }
  return problems;
}

/** The entries grouped by the shard (secret name) each audience's webhook lives in. */
function byShard<T>(prefix: string, webhooks: ReadonlyMap<string, T>): Map<string, Map<string, T>> {
  const shards = new Map<string, Map<string, T>>();
  for (const [audienceId, url] of webhooks) {
    const name = webhookShardName(prefix, audienceId);
    const shard = shards.get(name) ?? new Map<string, T>();
    shard.set(audienceId, url);
    shards.set(name, shard);
  }
  return shards;
}

/**
 * Applies `entries` (a URL to store, or null to remove) to a shard's map, in place, and says what
 * became of each audience: the one rule {@link storeWebhooks} writes by and {@link planWebhooks}
 * previews with.
 */
function applyToShard(
  map: Map<string, string>,
  entries: ReadonlyMap<string, string | null>,
  keepExisting: boolean,
): { stored: string[]; unchanged: string[]; kept: string[]; removed: string[] } {
  const change = { stored: [] as string[], unchanged: [] as string[], kept: [] as string[], removed: [] as string[] };
  for (const [audienceId, url] of entries) {
    const current = map.get(audienceId);
    if (url === null) {
      if (current !== undefined) {
        map.delete(audienceId);
        change.removed.push(audienceId);
      }
    } else if (current === url) change.unchanged.push(audienceId);
    else if (current !== undefined && keepExisting) change.kept.push(audienceId);
    else {
      map.set(audienceId, url);
      change.stored.push(audienceId);
    }
  }
  return change;
}

/**
 * Takes the webhooks of `audienceIds` out of the store (an audience deleted, or its Slack
 * subscription removed): the same read-change-write as {@link storeWebhooks}, so a webhook another
 * writer changes meanwhile is kept. An audience the store does not hold is left out of `removed`.
 */
export async function removeWebhooks(
  secrets: SecretsManagerClient,
  prefix: string,
  audienceIds: readonly string[],
): Promise<StoreOutcome> {
  return await storeWebhooks(secrets, prefix, new Map(audienceIds.map((audienceId) => [audienceId, null])));
}

async function storeInShard(
  secrets: SecretsManagerClient,
  name: string,
  entries: ReadonlyMap<string, string | null>,
  options: { keepExisting?: boolean; description?: string },
  outcome: { stored: string[]; unchanged: string[]; kept: string[]; createdShards: string[]; removed: string[] },
): Promise<void> {
  for (let attempt = 1; attempt <= maxAttempts; attempt += 1) {
    const { map, versionId } = await readShard(secrets, name);
    const { stored, unchanged, kept, removed } = applyToShard(map, entries, options.keepExisting === true);
    const done = () => {
      outcome.stored.push(...stored);
      outcome.unchanged.push(...unchanged);
      outcome.kept.push(...kept);
      outcome.removed.push(...removed);
    };
    if (stored.length === 0 && removed.length === 0) {
      done();
      return;
    }
    const text = serializeWebhookMap(map);
    const oversize = oversizeProblem(name, map, text);
    if (oversize !== undefined) throw new OperationFailedError(oversize);
    if (versionId === undefined) {
      try {
        await secrets.send(
          new CreateSecretCommand({
            Name: name,
            SecretString: text,
            Description:
              options.description ??
              'news-alerts: Slack incoming-webhook URLs of the audiences in this shard (JSON map of audience id to URL); written by news-alerts subscriptions add --slack-webhook',
            Tags: [{ Key: 'project', Value: 'news-alerts' }],
          }),
        );
        outcome.createdShards.push(name);
        done();
        return;
      } catch (error) {
        // Another writer created it first: read it and apply the change to what it holds.
        if (error instanceof ResourceExistsException) continue;
        throw error;
      }
    }
    const token = randomUUID();
    await secrets.send(
      new PutSecretValueCommand({
        SecretId: name,
        SecretString: text,
        ClientRequestToken: token,
        VersionStages: ['AWSPENDING'],
      }),
    );
    try {
      // Current only if nobody made another version current since this one was read.
      await secrets.send(
        new UpdateSecretVersionStageCommand({
          SecretId: name,
          VersionStage: 'AWSCURRENT',
          MoveToVersionId: token,
          RemoveFromVersionId: versionId,
        }),
      );
      done();
      return;
    } catch (error) {
      if (!(error instanceof Error) || !/InvalidParameter|InvalidRequest/.test(error.name)) throw error;
      // Lost the race: read the shard again and apply the change to the newer version.
    }
  }
  throw new OperationFailedError(
    `the webhook store secret ${name} kept changing while it was written (${maxAttempts} attempts); run this again`,
  );
}

/**
 * Whether the store under `prefix` holds a webhook for `audienceId` (its shard is read; nothing of
 * the URL leaves this function). A shard that does not exist holds none; one that cannot be read
 * or parsed throws, so an access problem is never taken for a missing webhook.
 */
export async function storeHoldsWebhook(
  secrets: SecretsManagerClient,
  prefix: string,
  audienceId: string,
): Promise<boolean> {
  return (await readWebhook(secrets, prefix, audienceId)) !== undefined;
}

/**
 * The URL the store under `prefix` holds for `key`, or undefined. For the caller that must use it
 * (`audiences repair` subscribing an HTTPS endpoint again): it is never to be printed. A shard that
 * cannot be read or parsed throws, as in {@link storeHoldsWebhook}.
 */
export async function readWebhook(
  secrets: SecretsManagerClient,
  prefix: string,
  key: string,
): Promise<string | undefined> {
  const { map } = await readShard(secrets, webhookShardName(prefix, key));
  return map.get(key);
}

/** The webhook store prefix of a target: its own output, or derived from the per-audience secret prefix. */
export function storePrefixOf(names: {
  readonly slackWebhookStorePrefix?: string | undefined;
  readonly slackWebhookSecretPrefix?: string | undefined;
}): string | undefined {
  if (names.slackWebhookStorePrefix) return names.slackWebhookStorePrefix;
  return names.slackWebhookSecretPrefix ? webhookStorePrefixFor(names.slackWebhookSecretPrefix) : undefined;
}
