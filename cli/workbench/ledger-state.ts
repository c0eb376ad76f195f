/**
 * The delivery ledger's answer for one article of one audience (`news-alerts deliveries
 * <audienceId> --article <key>`, the workbench's sent history): sent, held, released in a digest,
 * parked, dropped, collapsed into a story another copy carried, or not in the ledger at all.
 *
 * What this module guarantees: each state is explained from what the ledger recorded (the key's
 * own entry, its story's marker, the lead's entry), never guessed; an entry that is missing is
 * said to be missing. It only reads.
 */
import { leadOfCollapsedCopy, outcomeFieldsDamaged, whyCopyLeadLost } from '#core/ledger-facts';
import type { DeliveryRecord, HeldState, UndeliverableRecord } from '#core/ports';
import { deliveryId, readUpdateNoticeKey, storyMarkerKey, storyOfMarker } from '#core/ports';
import { stillHeld } from '#core/workbench/holds';
import { formatInstant } from '../output.ts';

/** What the ledger says happened to one key of one audience. */
export type LedgerStateKind =
  | 'sent'
  | 'held'
  | 'parked'
  | 'dropped'
  | 'collapsed'
  | 'story-marker'
  | 'update-notice'
  | 'not-in-ledger'
  | 'released-unrecorded'
  | 'malformed';

/** One key's ledger state, as `deliveries <audienceId> --article <key>` prints it. */
export interface LedgerState {
  readonly audienceId: string;
  readonly articleKey: string;
  readonly kind: LedgerStateKind;
  /** The sentence a person reads in the STATUS column. */
  readonly status: string;
  /** The key's own ledger entry, when there is one. */
  readonly entry?: DeliveryRecord | undefined;
  /** The story: the article's (sent, held, collapsed), or the marker's or notice's. */
  readonly storyId?: string | undefined;
  /** The article that carries the story for this audience (collapsed copies and story markers). */
  readonly leadArticleKey?: string | undefined;
  /** The lead's own ledger entry: when it was sent, or why it is held. */
  readonly lead?: DeliveryRecord | undefined;
}

/** `status=UPDATED` → `status UPDATED`, `title` → `title changed` (see ledger-facts.ts changeLabel). */
function changeText(change: string): string {
  if (change === 'title' || change.startsWith('title=')) return 'headline changed';
  if (change.startsWith('status=')) {
    const value = change.slice('status='.length);
    return value === '' ? 'status cleared' : `status ${value}`;
  }
  return change;
}

/**
 * How a ledger entry's outcome reads: `sent 2026-…Z`, `held for its digest since …`, and once a
 * held one's release finished, `sent <time> in digest <key> (held for … from …)`, with why it went
 * then when the audience's settings changed, or that its digest was parked or it was dropped.
 */
export function deliveryOutcomeText(entry: DeliveryRecord, stillHeldKeys?: ReadonlySet<string>): string {
  const unknown = outcomeFieldsDamaged(entry);
  if (unknown.length > 0) {
    return `handled, but what became of it is unknown: its ledger entry is malformed (${unknown.join(', ')} edited by hand)`;
  }
  if (entry.heldFor === undefined) return `sent ${formatInstant(entry.deliveredAt)}`;
  const reason = {
    digest: 'its digest',
    'quiet-hours': 'the end of its quiet hours',
    budget: 'its digest (daily budget used up)',
  }[entry.heldFor];
  if (releasedUnrecorded(entry, stillHeldKeys)) {
    return `no longer held, and the ledger does not say what became of it (held for ${reason} from ${formatInstant(entry.deliveredAt)}): a release from before the ledger recorded release outcomes released it, or its held item expired or could not be read`;
  }
  if (entry.releasedAt === undefined) return `held for ${reason} since ${formatInstant(entry.deliveredAt)}`;
  const at = formatInstant(entry.releasedAt);
  const digest = entry.releasedIn ?? '(not recorded)';
  const because =
    entry.releaseCause === 'settings-changed' ? "; released then because the audience's settings changed" : '';
  const held = `held for ${reason} from ${formatInstant(entry.deliveredAt)}${because}`;
  switch (entry.releaseOutcome) {
    case 'parked':
      return `not sent: its digest ${digest} was refused by SNS for good at ${at} and parked for 'news-alerts replay --parked' (${held})`;
    case 'dropped':
      return `not sent: dropped at ${at} because it could not be rendered into its digest (${held})`;
    default:
      return `sent ${at} in digest ${digest} (${held})`;
  }
}

/**
 * Whether an entry that says held was released all the same: nothing is held for it any more
 * (`stillHeldKeys`: the audience's held items and unfinished releases; unknown when absent).
 */
export function releasedUnrecorded(entry: DeliveryRecord, stillHeldKeys: ReadonlySet<string> | undefined): boolean {
  return (
    stillHeldKeys !== undefined &&
    entry.heldFor !== undefined &&
    entry.releasedAt === undefined &&
    entry.collapsedInto === undefined &&
    !stillHeldKeys.has(entry.articleKey)
  );
}

/** The kind of an article's own entry: sent, still held, or what its release did. */
function entryKind(entry: DeliveryRecord, stillHeldKeys?: ReadonlySet<string>): LedgerStateKind {
  if (outcomeFieldsDamaged(entry).length > 0) return 'malformed';
  if (entry.heldFor === undefined) return 'sent';
  if (releasedUnrecorded(entry, stillHeldKeys)) return 'released-unrecorded';
  if (entry.releasedAt === undefined) return 'held';
  return entry.releaseOutcome === 'parked' || entry.releaseOutcome === 'dropped' ? entry.releaseOutcome : 'sent';
}

/**
 * What the ledger says about `articleKey` for `audienceId`. `entries` holds every entry read (the
 * key's own, its story's marker, the lead's), by delivery id; a missing one is said, not guessed.
 */
export function ledgerState(
  audienceId: string,
  articleKey: string,
  entries: ReadonlyMap<string, DeliveryRecord>,
  parked?: Pick<UndeliverableRecord, 'failedAt' | 'code'>,
  stillHeldKeys?: ReadonlySet<string>,
): LedgerState {
  const base = { audienceId, articleKey };
  const entry = entries.get(deliveryId({ audienceId, articleKey }));
  const storyId = storyOfMarker(articleKey);
  if (storyId !== undefined) {
    if (entry === undefined) {
      return {
        ...base,
        kind: 'not-in-ledger',
        storyId,
        status: `no story marker: story ${storyId} was not sent to this audience (or the ledger forgot it)`,
      };
    }
    const lead =
      entry.leadArticleKey === undefined
        ? undefined
        : entries.get(deliveryId({ audienceId, articleKey: entry.leadArticleKey }));
    return {
      ...base,
      kind: 'story-marker',
      entry,
      storyId,
      leadArticleKey: entry.leadArticleKey,
      lead,
      status: `story marker: story ${storyId} is carried by ${entry.leadArticleKey ?? '(no lead recorded)'} since ${formatInstant(entry.deliveredAt)}${lead === undefined ? '' : ` (${deliveryOutcomeText(lead, stillHeldKeys)})`}; other copies of it collapse`,
    };
  }
  const notice = readUpdateNoticeKey(articleKey);
  if (notice !== undefined) {
    const { subject } = notice;
    const change = notice.change === '' ? '' : changeText(notice.change);
    // Article keys carry their kind (`id:`, `url:`); a story id has none.
    const about = subject.includes(':') ? `article ${subject}` : `story ${subject}`;
    const storyId = subject.includes(':') ? undefined : subject;
    if (entry === undefined) {
      return {
        ...base,
        kind: 'not-in-ledger',
        storyId,
        status: `no update notice (${change}) for ${about} in the ledger`,
      };
    }
    return {
      ...base,
      kind: 'update-notice',
      entry,
      storyId,
      status: `update notice (${change}) for ${about}: ${deliveryOutcomeText(entry, stillHeldKeys)}`,
    };
  }
  if (entry === undefined && parked !== undefined) {
    // Matched and rendered, but SNS refused it for good: parked, not in the ledger until a replay sends it.
    return {
      ...base,
      kind: 'parked',
      status: `not sent: SNS refused it for good at ${formatInstant(parked.failedAt)} (${parked.code}) and it is parked for 'news-alerts replay --parked'`,
    };
  }
  if (entry === undefined) {
    return {
      ...base,
      kind: 'not-in-ledger',
      status:
        'not in the ledger: never delivered to this audience (not matched, not read yet, or older than the ledger keeps)',
    };
  }
  if (entry.collapsedInto !== undefined) {
    const storyId = entry.collapsedInto;
    const marker = entries.get(deliveryId(storyMarkerKey(audienceId, storyId)));
    const ownLead = leadOfCollapsedCopy(entry, marker);
    const leadArticleKey = ownLead ?? marker?.leadArticleKey;
    const lead =
      leadArticleKey === undefined ? undefined : entries.get(deliveryId({ audienceId, articleKey: leadArticleKey }));
    const leadText = collapsedLeadText(entry, marker, ownLead, lead, stillHeldKeys);
    return {
      ...base,
      kind: 'collapsed',
      entry,
      storyId,
      leadArticleKey,
      lead,
      status: `collapsed into story ${storyId} (${leadText}): this copy was not sent (recorded ${formatInstant(entry.deliveredAt)})`,
    };
  }
  const story = entry.storyId === undefined ? '' : ` as the lead of story ${entry.storyId}`;
  return {
    ...base,
    kind: entryKind(entry, stillHeldKeys),
    entry,
    storyId: entry.storyId,
    status: `${deliveryOutcomeText(entry, stillHeldKeys)}${story}`,
  };
}

/**
 * What a collapsed copy's line says of its lead, as the run judges the copy when it reads it again:
 * the lead it went with (`ownLead`: its own, or for an entry from before `collapsedLead` the one a
 * marker no younger than it names), and whether a re-read sends the copy. A younger marker names a
 * later lead, not the copy's: the run then judges the copy as handled, and so does this line.
 */
function collapsedLeadText(
  entry: DeliveryRecord,
  marker: DeliveryRecord | undefined,
  ownLead: string | undefined,
  lead: DeliveryRecord | undefined,
  stillHeldKeys: ReadonlySet<string> | undefined,
): string {
  // A hand edit that damaged `collapsedLead`: the lead is the marker's, as the run takes it.
  const damaged = entry.malformed?.includes('collapsedLead') === true;
  const markerLead = marker?.leadArticleKey;
  if (ownLead === undefined && markerLead === undefined) {
    const why =
      marker === undefined
        ? 'its story marker is gone from the ledger'
        : 'its story marker names no lead (damaged by hand)';
    return `${damaged ? 'its collapsedLead is damaged and ' : ''}${why}; a re-read sends nothing`;
  }
  const leadOutcome = lead === undefined ? 'not in the ledger' : deliveryOutcomeText(lead, stillHeldKeys);
  if (ownLead === undefined) {
    return `the lead it went with is ${damaged ? 'damaged in its entry' : 'not recorded'}; the story marker now names ${markerLead}, ${leadOutcome}; a re-read sends nothing`;
  }
  const prefix = `${damaged ? 'its collapsedLead is damaged, so the lead its story marker names: ' : ''}lead ${ownLead}`;
  const why = whyCopyLeadLost(lead);
  if (why === undefined) return `${prefix}, ${leadOutcome}`;
  const resent = 'a run that reads this copy again sends it, and it carries the story';
  if (lead === undefined) {
    return `${prefix}, not in the ledger: queued for a publisher still, or it never reached the audience and ${resent}`;
  }
  const what =
    lead.collapsedInto === undefined
      ? leadOutcome
      : `itself recorded as a collapsed copy of story ${lead.collapsedInto}`;
  return `${prefix}, ${what}, so it never carried the story: ${resent}`;
}

/** The kinds of key the delivery ledger holds: articles (`id:`, `url:`) and its own entries. */
const LEDGER_KEY = /^(?:id|url|story|update|digest|spike):/;

/**
 * A key as given to `deliveries --article`, as the ledger holds it: a provider id alone
 * (`20261130-000022`, as `rules explain --article` and `articles show` take it) is the article key
 * `id:20261130-000022`; a key of a ledger kind is kept as it is.
 */
export function ledgerKeyOf(given: string): string {
  return LEDGER_KEY.test(given) ? given : `id:${given}`;
}

/**
 * Reads what the ledger holds for `articleKeys` of one audience: the keys' entries, then the story
 * markers of collapsed copies, then their leads' entries (three strongly consistent reads).
 */
export async function readLedgerStates(
  state: {
    readDeliveries(keys: readonly { audienceId: string; articleKey: string }[]): Promise<Map<string, DeliveryRecord>>;
    listUndeliverable(audienceId: string): Promise<UndeliverableRecord[]>;
    readHeld(audienceId: string): Promise<HeldState>;
  },
  audienceId: string,
  articleKeys: readonly string[],
): Promise<LedgerState[]> {
  const entries = new Map(await state.readDeliveries(articleKeys.map((articleKey) => ({ audienceId, articleKey }))));
  const markers = [...entries.values()]
    .map((entry) => entry.collapsedInto)
    .filter((storyId) => storyId !== undefined)
    .map((storyId) => storyMarkerKey(audienceId, storyId))
    .filter((key) => !entries.has(deliveryId(key)));
  for (const [id, entry] of markers.length > 0 ? await state.readDeliveries(markers) : []) entries.set(id, entry);
  const leads = [...entries.values()]
    .flatMap((entry) => [entry.leadArticleKey, entry.collapsedLead])
    .filter((key) => key !== undefined)
    .map((articleKey) => ({ audienceId, articleKey }))
    .filter((key) => !entries.has(deliveryId(key)));
  for (const [id, entry] of leads.length > 0 ? await state.readDeliveries(leads) : []) entries.set(id, entry);
  // A key with no entry may be parked (SNS refused it for good): the audience's parked list says.
  const unknown = articleKeys.some((articleKey) => !entries.has(deliveryId({ audienceId, articleKey })));
  const parked = new Map(
    (unknown ? await state.listUndeliverable(audienceId) : []).map((record) => [record.articleKey, record]),
  );
  const { stillHeldKeys, again } = await checkHeld(state, audienceId, [...entries.values()]);
  for (const [id, entry] of again) entries.set(id, entry);
  return articleKeys.map((articleKey) =>
    ledgerState(audienceId, articleKey, entries, parked.get(articleKey), stillHeldKeys),
  );
}

/**
 * Checks ledger entries that say held against what the audience holds: an entry with nothing held
 * for it was released by a release from before the ledger recorded outcomes (or its item expired),
 * see {@link releasedUnrecorded}. `stillHeldKeys` is undefined when no entry says held (nothing is
 * read then). A release that finished between the ledger read and this one marked its entries
 * before it deleted the items: those entries come back read again in `again`, by delivery id.
 */
export async function checkHeld(
  state: {
    readDeliveries(keys: readonly { audienceId: string; articleKey: string }[]): Promise<Map<string, DeliveryRecord>>;
    readHeld(audienceId: string): Promise<HeldState>;
  },
  audienceId: string,
  entries: readonly DeliveryRecord[],
): Promise<{ stillHeldKeys: ReadonlySet<string> | undefined; again: ReadonlyMap<string, DeliveryRecord> }> {
  if (!entries.some((entry) => releasedUnrecorded(entry, new Set())))
    return { stillHeldKeys: undefined, again: new Map() };
  const stillHeldKeys = stillHeld(await state.readHeld(audienceId));
  const unmarked = entries.filter((entry) => releasedUnrecorded(entry, stillHeldKeys));
  const again =
    unmarked.length === 0
      ? new Map<string, DeliveryRecord>()
      : await state.readDeliveries(unmarked.map((entry) => ({ audienceId, articleKey: entry.articleKey })));
  return { stillHeldKeys, again };
}
