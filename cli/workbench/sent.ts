/**
 * "Did it reach them?" on a deployed stack as in the sandbox: an audience's delivery ledger over a
 * window (what was sent, held, released in which digest, collapsed, parked), newest first, and
 * its subscribers with their status (SNS fans every accepted message out to each confirmed one).
 *
 * The ledger is keyed by notification, not by audience, so this reads the state table with a
 * filtered Scan (keys only), then the entries it found with BatchGet: the cost is one pass over
 * the state table, about 1 read unit per 8 KB scanned (on-demand: $0.25 per million read units,
 * so a 1 GB state table costs about $0.03 a look-up). Bounded by `--since` and `--limit`.
 */
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { DynamoStateStore } from '#aws/dynamo-state-store';
import { isProviderDate } from '#core/calendar';
import type { DeliveryRecord, Log } from '#core/ports';
import { deliveryId, storyOfMarker } from '#core/ports';
import { audienceSubscriptions, requireAudience, topicArnOf } from '../audience-topics.ts';
import { displayEndpoint, recordedAs } from '../subscriptions.ts';
import type { Target } from '../target.ts';
import { parseInstant } from '../window.ts';
import { checkHeld, deliveryOutcomeText, releasedUnrecorded } from './ledger-state.ts';

/** One ledger entry as shown. */
export interface SentEntry {
  readonly articleKey: string;
  /** When it was last handled: sent, or released from its hold; held (still held), collapsed or parked. */
  readonly at: number;
  readonly outcome: string;
  readonly ruleIds: readonly string[];
  readonly messageId?: string | undefined;
}

/** A subscriber of the audience's topic. */
export interface SubscriberView {
  readonly protocol: string;
  readonly endpoint: string;
  readonly status: 'confirmed' | 'pending confirmation';
}

/** The audience's sent history and subscribers. */
export interface SentHistory {
  readonly audienceId: string;
  readonly since: number;
  readonly entries: readonly SentEntry[];
  /** Entries in the window, also those `limit` left out. */
  readonly total: number;
  /** The same, by what became of them: the caption's breakdown (every entry is counted once). */
  readonly kinds: Readonly<Partial<Record<EntryKind, number>>>;
  readonly subscribers: readonly SubscriberView[];
  /** Set when the topic cannot be read (deleted?): the subscribers are unknown. */
  readonly topicProblem?: string | undefined;
}

/**
 * Where a sent history starts: `since` as the CLI reads any bound (`24h`, `2d`, a zoned
 * date-time), a provider date read in the provider's zone, as `watermark set` and the article
 * windows read one.
 * @throws UsageError naming `option` and the accepted forms
 */
export async function sentSince(target: Target, since: string, option: string, now: number): Promise<number> {
  // Only a provider date needs the provider's zone: a span or a zoned date-time asks the stack for
  // nothing (its alert function's configuration is one more request, and one more permission).
  const timeZone = isProviderDate(since.trim()) ? (await target.alertRunConfig()).provider.timeZone : 'UTC';
  return parseInstant(since, option, 'start', timeZone, now);
}

/** What became of a ledger entry, for the count of each. */
export type EntryKind = 'sent' | 'digests' | 'held' | 'collapsed' | 'not sent' | 'unknown';

/** The kinds in the order the caption names them. */
export const entryKinds: readonly EntryKind[] = ['sent', 'digests', 'held', 'collapsed', 'not sent', 'unknown'];

function entryKind(record: DeliveryRecord, stillHeldKeys: ReadonlySet<string> | undefined): EntryKind {
  if ((record.malformed ?? []).length > 0) return 'unknown';
  if (record.collapsedInto !== undefined) return 'collapsed';
  if (record.articleKey.startsWith('digest:')) return 'digests';
  if (record.heldFor === undefined) return 'sent';
  // Released by a release that recorded nothing: what became of it is not known.
  if (releasedUnrecorded(record, stillHeldKeys)) return 'unknown';
  if (record.releasedAt === undefined) return 'held';
  return record.releaseOutcome === 'parked' || record.releaseOutcome === 'dropped' ? 'not sent' : 'sent';
}

/** When the ledger last handled an entry: its release from a hold, or when it was sent (or held). */
const lastHandled = (record: DeliveryRecord): number => record.releasedAt ?? record.deliveredAt;

/** The audience's ledger since `since` (newest first, at most `limit`) and its subscribers. */
export async function sentHistory(
  target: Target,
  audienceId: string,
  since: number,
  limit: number,
  log: Log,
): Promise<SentHistory> {
  const audience = await requireAudience(target, audienceId);
  const keys: { audienceId: string; articleKey: string }[] = [];
  let startKey: Record<string, unknown> | undefined;
  do {
    const output = await target.clients.documents.send(
      new ScanCommand({
        TableName: target.names.stateTable,
        // A held entry keeps the time it was held in deliveredAt: it went out when it was released.
        FilterExpression: '#sk = :ledger AND #audience = :audience AND (#at >= :since OR #released >= :since)',
        ExpressionAttributeNames: {
          '#sk': 'sk',
          '#audience': 'audienceId',
          '#at': 'deliveredAt',
          '#released': 'releasedAt',
          '#key': 'articleKey',
        },
        ExpressionAttributeValues: { ':ledger': 'ledger', ':audience': audienceId, ':since': since },
        ProjectionExpression: '#key',
        ExclusiveStartKey: startKey,
      }),
    );
    for (const item of output.Items ?? []) {
      const articleKey = String(item.articleKey ?? '');
      if (articleKey === '' || storyOfMarker(articleKey) !== undefined) continue;
      keys.push({ audienceId, articleKey });
    }
    startKey = output.LastEvaluatedKey;
  } while (startKey !== undefined);
  const state = new DynamoStateStore({ documents: target.clients.documents, tableName: target.names.stateTable, log });
  const records = [...(await state.readDeliveries(keys)).values()].sort(
    (a, b) => lastHandled(b) - lastHandled(a) || a.articleKey.localeCompare(b.articleKey),
  );
  // Entries that say held are checked against what is held: an old release may have released them.
  const { stillHeldKeys, again } = await checkHeld(state, audienceId, records);
  if (again.size > 0) {
    records.forEach((record, index) => {
      records[index] = again.get(deliveryId(record)) ?? record;
    });
    records.sort((a, b) => lastHandled(b) - lastHandled(a) || a.articleKey.localeCompare(b.articleKey));
  }
  const entries = records.slice(0, limit).map(
    (record: DeliveryRecord): SentEntry => ({
      articleKey: record.articleKey,
      at: lastHandled(record),
      outcome:
        record.collapsedInto !== undefined
          ? `collapsed into story ${record.collapsedInto} (not sent)`
          : deliveryOutcomeText(record, stillHeldKeys),
      ruleIds: record.ruleIds,
      messageId: record.messageId,
    }),
  );
  let subscribers: SubscriberView[] = [];
  let topicProblem: string | undefined;
  try {
    subscribers = (await audienceSubscriptions(target, audienceId, topicArnOf(audience, audienceId))).map(
      (subscription) => ({
        protocol: recordedAs(target, subscription)[0] === 'slack' ? 'slack' : (subscription.Protocol ?? ''),
        endpoint: displayEndpoint(subscription),
        status: subscription.SubscriptionArn === 'PendingConfirmation' ? 'pending confirmation' : 'confirmed',
      }),
    );
  } catch (error) {
    topicProblem = error instanceof Error ? error.message : String(error);
  }
  const kinds: Partial<Record<EntryKind, number>> = {};
  for (const record of records) {
    const kind = entryKind(record, stillHeldKeys);
    kinds[kind] = (kinds[kind] ?? 0) + 1;
  }
  return { audienceId, since, entries, total: records.length, kinds, subscribers, topicProblem };
}
