/**
 * The endpoint store: where the CLI keeps the HTTPS endpoints it subscribes, so `audiences repair`
 * can subscribe them again after their topic was deleted. An HTTPS endpoint is a webhook URL (its
 * path or query usually holds the receiver's token), so it is kept as the Slack webhooks are: in a
 * few Secrets Manager secrets, never in a table. The store is the webhook store's layout
 * (cli/webhook-store.ts: at most four shards, each a JSON map, one entry replaced alone) under its
 * own prefix, `<resourcePrefix>/https-endpoints/`, so the Slack relay, which may read the Slack
 * shards, cannot read these; nothing deployed reads them. An entry's key is
 * `<audienceId>#<endpointDigest>`, the same digest the subscriber record keeps.
 *
 * Nothing here prints or returns a URL, except {@link endpointOf} to the caller that subscribes it.
 */
import type { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { type ClearRecord, type DynamoSubscriberRecords, endpointDigest } from '#aws/dynamo-subscriber-records';
import { webhookShardName } from '#shared/slack-webhook-store';
import { NotFoundError, OperationFailedError } from './errors.ts';
import { maskUrl } from './output.ts';
import type { Target } from './target.ts';
import { overfullShards, readWebhook, removeWebhooks, storePrefixOf, storeWebhooks } from './webhook-store.ts';

const DESCRIPTION =
  'news-alerts: HTTPS endpoint URLs of audience subscriptions in this shard (JSON map of <audienceId>#<digest> to URL), kept for news-alerts audiences repair; written by news-alerts subscriptions add --https';

/**
 * The endpoint store's prefix of a target: beside its Slack webhook store (`…/slack-webhooks/` →
 * `…/https-endpoints/`), so no new stack output is needed. Never under the webhook store's own
 * prefix, which the relay may read: a store prefix of another shape has no endpoint store.
 */
export function endpointStorePrefixOf(target: Pick<Target, 'names'>): string | undefined {
  const slack = storePrefixOf(target.names);
  for (const suffix of ['slack-webhooks/', 'webhooks/']) {
    if (slack?.endsWith(suffix)) return `${slack.slice(0, -suffix.length)}https-endpoints/`;
  }
  return undefined;
}

/** The store prefix, or the error that says this target has none. */
function requirePrefix(target: Pick<Target, 'names' | 'label'>): string {
  const prefix = endpointStorePrefixOf(target);
  if (prefix === undefined) {
    throw new NotFoundError(
      `${target.label} has no SlackWebhookStorePrefix output, beside which HTTPS endpoint URLs are kept; deploy this release's stack first`,
    );
  }
  return prefix;
}

const keyOf = (audienceId: string, ref: string): string => `${audienceId}#${ref}`;

/** Where an endpoint's entry is, for a person to take it out by hand: `<key> in <secret name>`. */
export const endpointEntryName = (prefix: string, audienceId: string, ref: string): string =>
  `${keyOf(audienceId, ref)} in ${webhookShardName(prefix, keyOf(audienceId, ref))}`;

/** What a subscriber record keeps of an HTTPS endpoint instead of its URL. */
export interface EndpointRef {
  readonly endpointRef: string;
  readonly shown: string;
}

/**
 * Puts `url` into the endpoint store for `audienceId` and says what its record keeps instead.
 * Called before the endpoint is subscribed: if the store cannot be written, nothing is subscribed.
 */
export async function keepEndpoint(target: Target, audienceId: string, url: string): Promise<EndpointRef> {
  const prefix = requirePrefix(target);
  const endpointRef = endpointDigest(url);
  await storeWebhooks(target.clients.secrets, prefix, new Map([[keyOf(audienceId, endpointRef), url]]), {
    description: DESCRIPTION,
  });
  return { endpointRef, shown: maskUrl(url) };
}

/** The URL a record refers to, or undefined when the store does not hold it (to subscribe it, never to print). */
export async function endpointOf(target: Target, audienceId: string, endpointRef: string): Promise<string | undefined> {
  const prefix = endpointStorePrefixOf(target);
  if (prefix === undefined) return undefined;
  return await readWebhook(target.clients.secrets, prefix, keyOf(audienceId, endpointRef));
}

/** Takes endpoints out of the store (their subscriptions removed): how many it held. */
export async function forgetEndpoints(
  secrets: SecretsManagerClient,
  prefix: string,
  audienceId: string,
  refs: readonly string[],
): Promise<number> {
  if (refs.length === 0) return 0;
  const outcome = await removeWebhooks(
    secrets,
    prefix,
    refs.map((ref) => keyOf(audienceId, ref)),
  );
  return outcome.removed.length;
}

/** One record of an earlier release, as `migrate-webhooks` treats it. */
export interface RecordMigrationRow {
  readonly audienceId: string;
  /** The URL masked. */
  readonly endpoint: string;
  readonly outcome: 'moved' | 'would be moved' | 'changed meanwhile, left as it is' | `not moved: ${string}`;
}

/**
 * Moves the HTTPS URLs that records of earlier releases hold in clear into the endpoint store: the
 * URL is stored first, then the record is replaced by one that refers to it (only if it still holds
 * that URL), so a failure at any point leaves the URL in one place or both, never in neither.
 */
export async function moveRecordedEndpoints(
  target: Target,
  records: DynamoSubscriberRecords,
  options: { readonly dryRun: boolean },
): Promise<RecordMigrationRow[]> {
  const rows: RecordMigrationRow[] = [];
  const clear = await records.withUrlsInClear();
  if (clear.length === 0) return rows;
  const prefix = requirePrefix(target);
  // One shard at a time, each shard's records replaced once it holds their URLs: a shard that is
  // full leaves its records as they are (said in the row), and the others still move.
  const byShard = new Map<string, ClearRecord[]>();
  for (const record of clear) {
    const shard = webhookShardName(prefix, keyOf(record.audienceId, endpointDigest(record.endpoint)));
    const group = byShard.get(shard) ?? [];
    group.push(record);
    byShard.set(shard, group);
  }
  // A dry run reads the shards and says which would not fit, as the migration itself would.
  const overfull = options.dryRun
    ? await overfullShards(
        target.clients.secrets,
        prefix,
        new Map(clear.map((record) => [keyOf(record.audienceId, endpointDigest(record.endpoint)), record.endpoint])),
      )
    : new Map<string, string>();
  for (const [shard, shardRecords] of byShard) {
    let problem = overfull.get(shard);
    if (!options.dryRun) {
      try {
        await storeWebhooks(
          target.clients.secrets,
          prefix,
          new Map(
            shardRecords.map((record) => [keyOf(record.audienceId, endpointDigest(record.endpoint)), record.endpoint]),
          ),
          { description: DESCRIPTION },
        );
      } catch (error) {
        if (!(error instanceof OperationFailedError)) throw error;
        problem = error.message;
      }
    }
    rows.push(...(await replaceRecords(target, records, prefix, shardRecords, options.dryRun, problem)));
  }
  return rows;
}

/** Replaces the records of one shard whose URLs it now holds (or says why not). */
async function replaceRecords(
  target: Target,
  records: DynamoSubscriberRecords,
  prefix: string,
  clear: readonly ClearRecord[],
  dryRun: boolean,
  problem: string | undefined,
): Promise<RecordMigrationRow[]> {
  const rows: RecordMigrationRow[] = [];
  for (const record of clear) {
    const shown = maskUrl(record.endpoint);
    if (problem !== undefined) {
      rows.push({ audienceId: record.audienceId, endpoint: shown, outcome: `not moved: ${problem}` });
      continue;
    }
    const replaced = dryRun ? true : await records.replaceEndpointByRef(record, shown);
    if (!replaced) {
      // Removed meanwhile (its subscription too): the URL just stored is kept for nothing. Kept if
      // a record of it is there after all (another migration got there first).
      const ref = endpointDigest(record.endpoint);
      const still = (await records.list(record.audienceId)).some(
        (other) => other.protocol === 'https' && (other.endpointRef ?? endpointDigest(other.endpoint)) === ref,
      );
      if (!still) await forgetEndpoints(target.clients.secrets, prefix, record.audienceId, [ref]);
    }
    rows.push({
      audienceId: record.audienceId,
      endpoint: shown,
      outcome: dryRun ? 'would be moved' : replaced ? 'moved' : 'changed meanwhile, left as it is',
    });
  }
  return rows;
}
