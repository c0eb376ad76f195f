/**
 * The email channel's delivery: one notification an audience topic sent (alert, update notice or
 * digest) becomes one email per confirmed subscriber of the audience, through SES. Owns these
 * guarantees (each has a fault test in test/integration/email-faults.test.ts):
 *
 * - **Nothing is sent twice.** Every (message, subscriber) pair is claimed before it is sent: a
 *   conditional write of its record (`claimSend`), keyed by the delivery id, so a duplicate SQS
 *   delivery, a retried batch, or the alert run's one accepted duplicate finds the record and
 *   sends nothing. A claim whose invocation died is taken over after its lease; that crash,
 *   between SES accepting a message and the record saying so, is the one accepted duplicate.
 *   Once SES accepted a message its claim is never given back: a record that cannot be marked
 *   sent (DynamoDB failing after a few tries) stays `sending`, and the email counts as sent.
 * - **Nothing is sent to a suppressed, unsubscribed or paused address.** The claim is written in
 *   one transaction with a check of the profile (no suppression) and of the membership
 *   (confirmed, not paused): a bounce or an unsubscribe that arrives while a batch is being sent
 *   stops the sends that have not started.
 * - **Nothing is lost.** SES throttling (or paused sending) gives the claim back and makes the
 *   whole notification fail for now ({@link EmailRetryError}): SQS brings it back after the
 *   visibility timeout, and only the subscribers not yet sent to get it then. After the queue's
 *   last receive it waits in the email dead-letter queue (with an alarm) for a redrive. A message
 *   SES refuses for good is recorded as `rejected`, not retried forever.
 * - **Subscribers who chose the daily digest** get the notification held for their digest and
 *   one email a day ({@link releaseDailyDigests}). An entry is held once per subscriber, ever: a
 *   notification that comes back after the digest went out (another subscriber was throttled)
 *   holds nothing again, so no alert is in two digests.
 *
 * Logs name the SNS message, the audience, the subscriber id and the delivery id; never an
 * address, never a body.
 */
import pLimit from 'p-limit';
import type { Audience } from '../model.ts';
import { deliveryId, type Log } from '../ports.ts';
import {
  audienceFromDocument,
  type ComposeOptions,
  composeAlert,
  composeDailyDigest,
  composeDigest,
  type EmailDraft,
  personalize,
  spikeDigestTitleOf,
} from './compose.ts';
import { dailyDigestAt } from './daily-digest.ts';
import { markSent } from './mark-sent.ts';
import { buildMime, listIdOf } from './mime.ts';
import {
  type AlertNotification,
  audienceOfTopic,
  type DigestEntryDocument,
  type DigestNotification,
  type QueuedNotification,
  UnreadableNotificationError,
} from './notification.ts';
import {
  type AudienceDirectory,
  type DueDigest,
  EmailRejectedError,
  type EmailSender,
  EmailThrottledError,
  type HeldEntry,
  type LinkMaker,
  type MessageKind,
  messageKeyOf,
  type SendRecord,
  type SendStatus,
  type SubscriberStore,
} from './ports.ts';
import {
  deliveryDecision,
  digestDecision,
  heldBeforeLeaving,
  type Membership,
  type SubscriberProfile,
  UNDELIVERED,
} from './subscriber.ts';

/** Some subscribers could not be sent to for now (throttling, a send in progress elsewhere): retry the notification. */
export class EmailRetryError extends Error {
  readonly pending: number;
  constructor(pending: number, reason: string, options?: ErrorOptions) {
    super(`${pending} email(s) not sent for now (${reason}); the notification comes back later`, options);
    this.name = 'EmailRetryError';
    this.pending = pending;
  }
}

/** The deployment's sender settings. */
export interface SenderSettings {
  readonly fromAddress: string;
  readonly fromName: string;
  readonly replyTo?: string | undefined;
  /** The sending domain: the right side of Message-IDs and of List-Id. */
  readonly domain: string;
  /** A mailbox that handles `mailto:` unsubscribes (`unsubscribe@<domain>`); undefined: HTTPS only. */
  readonly unsubscribeMailbox?: string | undefined;
}

/** Counters the handler turns into metrics (names in functions/email/handler.ts). */
export interface DeliveryCounters {
  sent(count: number): void;
  held(count: number): void;
  suppressed(count: number): void;
  paused(count: number): void;
  duplicates(count: number): void;
  throttled(count: number): void;
  rejected(count: number): void;
}

/** Everything the delivery works with. */
export interface EmailDeliveryDeps {
  readonly store: SubscriberStore;
  readonly sender: EmailSender;
  readonly audiences: AudienceDirectory;
  readonly links: LinkMaker;
  readonly settings: SenderSettings;
  /** `<prefix>-audience-`: the audience of a topic (a body naming another audience is refused). */
  readonly topicNamePrefix: string;
  readonly compose?: ComposeOptions;
  /** Sends at once within one notification (SES's rate is shared by the whole account). */
  readonly sendConcurrency: number;
  /** How long a claim holds before another invocation may take a crashed send over. */
  readonly claimLeaseMs: number;
  readonly log: Log;
  readonly now: () => number;
  /** Waits between tries of marking a send sent; tests pass one that does not wait. */
  readonly sleep?: ((ms: number) => Promise<void>) | undefined;
  /** Most alerts one daily digest email carries ({@link DAILY_DIGEST_MAX_ENTRIES}); tests pass fewer. */
  readonly dailyDigestMaxEntries?: number | undefined;
  readonly counters?: DeliveryCounters | undefined;
}

/** What one notification did. */
export interface DeliveryOutcome {
  readonly deliveryId: string;
  readonly audienceId: string;
  readonly sent: number;
  readonly held: number;
  readonly suppressed: number;
  readonly paused: number;
  readonly duplicates: number;
  readonly rejected: number;
}

const noCounters: DeliveryCounters = {
  sent() {},
  held() {},
  suppressed() {},
  paused() {},
  duplicates() {},
  throttled() {},
  rejected() {},
};

/** A subscriber id for logs; never the address. */
const who = (profile: SubscriberProfile) => profile.subscriberId;

/**
 * Sends one notification to the audience's subscribers.
 *
 * @throws UnreadableNotificationError for a message that is not for this audience (misrouted)
 * @throws EmailRetryError when some subscribers must be retried (all others are done)
 */
export async function deliverNotification(
  notification: QueuedNotification,
  deps: EmailDeliveryDeps,
): Promise<DeliveryOutcome> {
  const { document } = notification;
  const audienceId = audienceOf(notification, deps.topicNamePrefix);
  const audience = (await deps.audiences.get(audienceId)) ?? audienceFromDocument(document);
  const draft =
    document.kind === 'digest'
      ? composeDigest(document, audience, notification.subject, deps.compose)
      : composeAlert(document as AlertNotification, audience, notification.subject, deps.compose);
  const members = await deps.store.audienceMembers(audienceId);
  const profiles = await deps.store.profiles(members.map((member) => member.subscriberId));
  const missedOriginal = await originalMissedBy(document, audienceId, members, deps.store);
  let withoutOriginal = 0;
  const counts = { sent: 0, held: 0, suppressed: 0, paused: 0, duplicates: 0, rejected: 0 };
  const retry: string[] = [];
  let firstFailure: unknown;
  const context = { snsMessageId: notification.snsMessageId, audienceId, deliveryId: draft.deliveryId };
  const now = deps.now();
  // The same for every member held for a daily digest: made once, when the first one is.
  let held: HeldEntry[] | undefined;
  const heldEntries = () =>
    (held ??= heldEntriesOf(
      document,
      draft,
      now,
      document.kind === 'digest' ? undefined : spikeDigestTitleOf(document, audience, deps.compose),
    ));
  const limit = pLimit(Math.max(1, deps.sendConcurrency));
  await Promise.all(
    members.map((membership) =>
      limit(async () => {
        const profile = profiles.get(membership.subscriberId);
        if (profile === undefined) return;
        if (missedOriginal?.has(profile.subscriberId) === true) {
          withoutOriginal += 1;
          return;
        }
        const decision = deliveryDecision(profile, membership, now);
        try {
          if (decision.action === 'skip') {
            if (decision.reason === 'suppressed' || decision.reason === 'paused') {
              await deps.store.recordOutcome({
                subscriberId: profile.subscriberId,
                messageKey: messageKeyOf(draft.deliveryId),
                deliveryId: draft.deliveryId,
                audienceId,
                kind: draft.kind,
                subject: draft.subject,
                status: decision.reason,
                createdAt: now,
              });
              counts[decision.reason] += 1;
            }
            return;
          }
          if (decision.action === 'hold') {
            await holdForDigest(profile, audience, heldEntries(), draft, deps, now);
            counts.held += 1;
            return;
          }
          const outcome = await sendOne(profile, membership, draft, deps, draft.kind);
          if (outcome === 'retry') retry.push(who(profile));
          else counts[outcome] += 1;
        } catch (error) {
          firstFailure ??= error;
          retry.push(who(profile));
          deps.log.error('email to a subscriber failed; the notification comes back', {
            ...context,
            subscriberId: who(profile),
            errorName: error instanceof Error ? error.name : typeof error,
          });
        }
      }),
    ),
  );
  const counters = deps.counters ?? noCounters;
  counters.sent(counts.sent);
  counters.held(counts.held);
  counters.suppressed(counts.suppressed);
  counters.paused(counts.paused);
  counters.duplicates(counts.duplicates);
  counters.rejected(counts.rejected);
  deps.log.info('notification emailed', {
    ...context,
    members: members.length,
    ...counts,
    ...(missedOriginal === undefined ? {} : { withoutOriginal }),
    retry: retry.length,
  });
  if (retry.length > 0) {
    throw new EmailRetryError(retry.length, firstFailure === undefined ? 'throttled or in progress' : 'a send failed', {
      cause: firstFailure,
    });
  }
  return { deliveryId: draft.deliveryId, audienceId, ...counts };
}

/** Record statuses of a message that did not reach the subscriber: not sent, or sent and undelivered. */
const ORIGINAL_MISSED: ReadonlySet<SendStatus> = new Set<SendStatus>([
  'paused',
  'suppressed',
  'unsubscribed',
  ...UNDELIVERED,
]);

/**
 * For an update notice, the members whose record of the alert it corrects says it did not reach
 * them (paused or suppressed when it went out, refused, bounced); undefined for anything else. An
 * alert held for a member's daily digest counts as reaching them, whatever became of that digest. An
 * update notice corrects an alert the subscriber has, and "Updated: …" about one they never got is
 * news of nothing. Only such a record counts: a member with none may have had the alert in an
 * audience digest (recorded under the digest's id), by SNS email before a migration, or in a
 * record since expired, and gets the notice.
 */
async function originalMissedBy(
  document: QueuedNotification['document'],
  audienceId: string,
  members: readonly Membership[],
  store: SubscriberStore,
): Promise<Set<string> | undefined> {
  if (document.kind === 'digest' || (document as AlertNotification).update === undefined) return undefined;
  const original = messageKeyOf(deliveryId({ audienceId, articleKey: (document as AlertNotification).article.key }));
  const statuses = await store.sendStatuses(
    original,
    members.map((member) => member.subscriberId),
  );
  return new Set([...statuses].filter(([, status]) => ORIGINAL_MISSED.has(status)).map(([id]) => id));
}

/**
 * The audience a notification is for: its topic's. A body naming another audience was misrouted;
 * sending it would mail one audience's alerts to another's subscribers.
 */
function audienceOf(notification: QueuedNotification, topicNamePrefix: string): string {
  const fromTopic = audienceOfTopic(notification.topicArn, topicNamePrefix);
  const named = notification.document.audienceId;
  if (fromTopic !== undefined && fromTopic !== named) {
    throw new UnreadableNotificationError(
      `the notification names audience "${named}" but arrived on the topic of audience "${fromTopic}"; not sent`,
    );
  }
  return named;
}

type SendOutcome = 'sent' | 'duplicates' | 'retry' | 'rejected' | 'suppressed';

/** Claims, renders, sends and records one message to one subscriber. */
async function sendOne(
  profile: SubscriberProfile,
  membership: Membership,
  draft: EmailDraft,
  deps: EmailDeliveryDeps,
  kind: MessageKind,
  digest?: {
    /** The held entries the digest carries, kept with its claim. */
    readonly entryKeys: readonly string[];
    /** Told the earlier send's record when this digest went out before ('duplicates'). */
    readonly onDuplicate: (record: SendRecord) => void;
  },
): Promise<SendOutcome> {
  const messageKey = messageKeyOf(draft.deliveryId);
  const claimedAt = deps.now();
  const claim = await deps.store.claimSend({
    subscriberId: profile.subscriberId,
    messageKey,
    deliveryId: draft.deliveryId,
    audienceId: membership.audienceId,
    kind,
    subject: draft.subject,
    now: claimedAt,
    leaseMs: deps.claimLeaseMs,
    requireMembership: kind === 'confirmation' ? 'pending' : 'confirmed',
    ...(digest === undefined ? {} : { entryKeys: digest.entryKeys }),
  });
  const context = { audienceId: membership.audienceId, deliveryId: draft.deliveryId, subscriberId: who(profile) };
  if (!claim.claimed) {
    if (claim.reason === 'done') {
      deps.log.info('already emailed to this subscriber; not sent again', { ...context, status: claim.record.status });
      digest?.onDuplicate(claim.record);
      return 'duplicates';
    }
    if (claim.reason === 'in-progress') return 'retry';
    // Suppressed, unsubscribed or paused since the members were read: the transaction stopped it.
    deps.log.info('subscriber changed since the members were read; not sent', context);
    return 'suppressed';
  }
  let messageId: string;
  try {
    const [manage, unsubscribe] = await Promise.all([
      deps.links.manage(profile.subscriberId, membership.audienceId),
      deps.links.unsubscribe(profile.subscriberId, membership.audienceId),
    ]);
    const rendered = personalize(draft, { manage, unsubscribe });
    const settings = deps.settings;
    const raw = await buildMime({
      from: { name: settings.fromName, address: settings.fromAddress },
      replyTo: settings.replyTo,
      to: profile.address,
      rendered,
      locale: draft.locale,
      list: {
        label: draft.audienceLabel,
        id: listIdOf(membership.audienceId, settings.domain),
      },
      unsubscribe: {
        https: unsubscribe,
        mailto:
          settings.unsubscribeMailbox === undefined
            ? undefined
            : `mailto:${settings.unsubscribeMailbox}?subject=${encodeURIComponent(`unsubscribe ${tokenOf(unsubscribe)}`)}`,
      },
      messageId: `${messageKey}.${profile.subscriberId}@${settings.domain}`,
      date: new Date(claimedAt),
    });
    ({ messageId } = await deps.sender.send({
      from: settings.fromAddress,
      to: profile.address,
      raw,
      tags: {
        subscriber: profile.subscriberId,
        message: messageKey,
        audience: membership.audienceId.replace(/[^A-Za-z0-9_-]/g, '_'),
      },
    }));
  } catch (error) {
    if (error instanceof EmailRejectedError) {
      await deps.store.completeSend(profile.subscriberId, messageKey, { providerMessageId: '', at: deps.now() });
      await deps.store.recordEvent(
        profile.subscriberId,
        messageKey,
        { type: 'Reject', at: deps.now(), detail: error.message.slice(0, 200) },
        'rejected',
      );
      deps.log.warn('SES refused the email for good; recorded as rejected, not retried', context);
      return 'rejected';
    }
    // Not sent: give the claim back so the retry sends it.
    await deps.store.releaseSend(profile.subscriberId, messageKey);
    if (error instanceof EmailThrottledError) {
      (deps.counters ?? noCounters).throttled(1);
      deps.log.warn('SES throttled (or sending is paused); the email is retried', context);
      return 'retry';
    }
    throw error;
  }
  // SES has the email: from here on the claim is never given back, whatever DynamoDB says.
  await markSent(deps, profile.subscriberId, messageKey, messageId, context);
  return 'sent';
}

/** The token of a preference-endpoint URL (its last path segment), for the mailto subject. */
const tokenOf = (url: string): string => url.slice(url.lastIndexOf('/') + 1);

// --- A subscriber's daily digest ----------------------------------------------------------------------

/** The entries a notification adds to a subscriber's daily digest. */
export function heldEntriesOf(
  document: AlertNotification | DigestNotification,
  draft: Pick<EmailDraft, 'locale'>,
  now: number,
  /** The headline the digest shows for an alert, when not its article's (a spike's, with its figures). */
  shownTitle?: string,
): HeldEntry[] {
  const entries: DigestEntryDocument[] =
    document.kind === 'digest'
      ? document.digest.groups.flatMap((group) => group.entries)
      : [
          {
            deliveryId: document.deliveryId,
            urgent: document.urgent,
            heldFor: 'digest',
            heldAt: new Date(now).toISOString(),
            article: shownTitle === undefined ? document.article : { ...document.article, title: shownTitle },
            matches: document.matches,
            omittedMatches: document.omittedMatches,
            alsoIn: undefined,
          },
        ];
  return entries.map((entry) => ({
    key: messageKeyOf(entry.deliveryId || entry.article.key),
    heldAt: now,
    locale: draft.locale,
    entry,
  }));
}

async function holdForDigest(
  profile: SubscriberProfile,
  audience: Audience,
  entries: HeldEntry[],
  draft: EmailDraft,
  deps: EmailDeliveryDeps,
  now: number,
): Promise<void> {
  await deps.store.hold(profile.subscriberId, audience.audienceId, entries, dailyDigestAt(now, audience));
  const messageKey = messageKeyOf(draft.deliveryId);
  await deps.store.recordOutcome({
    subscriberId: profile.subscriberId,
    messageKey,
    deliveryId: draft.deliveryId,
    audienceId: audience.audienceId,
    kind: draft.kind,
    subject: draft.subject,
    status: 'held',
    // An audience digest's entries are held (and later carried) under keys of their own: kept on
    // its record, so `email history` can name the daily digest that sent them (carriedBy).
    ...(entries.some((entry) => entry.key !== messageKey) ? { entryKeys: entries.map((entry) => entry.key) } : {}),
    createdAt: now,
  });
}

/** What one release of daily digests did. */
export interface DailyDigestOutcome {
  readonly due: number;
  readonly sent: number;
  /** Digests not sent because the subscriber is suppressed, paused or no longer subscribed (entries recorded, then dropped). */
  readonly notSent: number;
  readonly retry: number;
}

/** Records a subscriber's daily digest as not sent, with why; its held alerts are then dropped. */
async function recordDigestNotSent(
  deps: EmailDeliveryDeps,
  digest: {
    readonly subscriberId: string;
    readonly audienceId: string;
    readonly deliveryId: string;
    readonly now: number;
    readonly entries: number;
    readonly reason: string;
  },
): Promise<void> {
  const { subscriberId, audienceId, deliveryId, reason, entries } = digest;
  await deps.store.recordOutcome({
    subscriberId,
    messageKey: messageKeyOf(deliveryId),
    deliveryId,
    audienceId,
    kind: 'daily-digest',
    status: reason === 'paused' ? 'paused' : reason === 'unsubscribed' ? 'unsubscribed' : 'suppressed',
    createdAt: digest.now,
    detail: `${entries} held alert(s) not sent: ${reason}`,
  });
  deps.log.info('daily digest not sent', { audienceId, subscriberId, reason, entries });
}

/** Time a release leaves unused at the end of its invocation: a digest started is finished. */
export const DIGEST_RELEASE_MARGIN_MS = 20_000;

/**
 * Sends every subscriber daily digest that is due (the handler runs this on a schedule), page after
 * page of `limit`, `sendConcurrency` at a time, until none is left or `remainingMs` (the
 * invocation's time left) falls under {@link DIGEST_RELEASE_MARGIN_MS}: what is left stays due and
 * the next release sends it, so no number of digests due at once is capped at one page. A digest
 * that must be retried (throttled, claimed elsewhere) is tried once per release. A digest
 * goes out through the same claim as an alert (its id is the subscriber, audience and due time),
 * so a release that runs twice sends it once. A subscriber suppressed, paused or unsubscribed
 * while entries waited gets nothing: the held entries are recorded as not sent (with the reason)
 * in the history and removed. Entries held before the member's last unsubscribe were held for a
 * subscription that ended (ops then added the address again and the person confirmed): they are
 * recorded as not sent and removed the same way, never sent to the new subscription, whichever
 * path ended the old one.
 */
export async function releaseDailyDigests(
  deps: EmailDeliveryDeps,
  options: { readonly limit?: number; readonly remainingMs?: () => number } = {},
): Promise<DailyDigestOutcome> {
  const now = deps.now();
  const pageSize = options.limit ?? 200;
  const remainingMs = options.remainingMs ?? (() => Number.POSITIVE_INFINITY);
  const tally = { due: 0, sent: 0, notSent: 0, retry: 0 };
  // Tried in this release: one still due after it (to be retried) is not tried again until the next.
  const tried = new Set<string>();
  const keyOf = (item: DueDigest) => `${item.subscriberId}|${item.audienceId}|${item.dueAt}`;
  const limit = pLimit(Math.max(1, deps.sendConcurrency));
  let outOfTime = false;
  const failures: unknown[] = [];
  while (!outOfTime) {
    const page = (await deps.store.dueDigests(now, pageSize + tried.size)).filter((item) => !tried.has(keyOf(item)));
    if (page.length === 0) break;
    const settled = await Promise.allSettled(
      page.map((item) =>
        limit(async () => {
          if (outOfTime || remainingMs() < DIGEST_RELEASE_MARGIN_MS) {
            outOfTime = true;
            return;
          }
          tried.add(keyOf(item));
          tally.due += 1;
          // A day past the cap goes out part after part: the digest is taken up again (it is still
          // due) once this part cleared its entries, so each try makes progress.
          if (await releaseOne(item, deps, now, tally)) tried.delete(keyOf(item));
        }),
      ),
    );
    // One digest that fails outside a send (its store reads, its history) holds back no other:
    // the release goes on, and fails at its end so the retry and the alarms see it.
    for (const outcome of settled) if (outcome.status === 'rejected') failures.push(outcome.reason);
  }
  if (failures.length > 0) {
    deps.log.error('daily digests could not be released; the next release tries them again', {
      failed: failures.length,
      errorName: failures[0] instanceof Error ? failures[0].name : typeof failures[0],
    });
    throw failures[0];
  }
  if (outOfTime) {
    deps.log.info('daily digests left due for the next release: this invocation is running out of time', {
      released: tally.due,
    });
  }
  return tally;
}

/**
 * Most alerts one daily digest email carries: a safety valve, far above a real day. The send's
 * claim lists every entry's key in one DynamoDB item (400 KB, some 12,000 keys) and SES takes a
 * message of at most 40 MB, so a day past it would never go out. The oldest go first; the rest go
 * out in further digests, one after another in the same release while its time lasts.
 */
export const DAILY_DIGEST_MAX_ENTRIES = 2000;

/**
 * Releases one due daily digest (one part of it, past the cap), counting what became of it in
 * `tally`. True when a part went out (or was found sent) and more of the day is still due.
 */
async function releaseOne(
  item: DueDigest,
  deps: EmailDeliveryDeps,
  now: number,
  tally: { sent: number; notSent: number; retry: number },
): Promise<boolean> {
  const context = { audienceId: item.audienceId, subscriberId: item.subscriberId };
  const [profile, membership, heldNow] = await Promise.all([
    deps.store.profile(item.subscriberId),
    deps.store.membership(item.subscriberId, item.audienceId),
    deps.store.heldEntries(item.subscriberId, item.audienceId),
  ]);
  let held = heldNow;
  if (profile === undefined || membership === undefined) {
    await deps.store.clearHeld(
      item.subscriberId,
      item.audienceId,
      held.map((entry) => entry.key),
    );
    return false;
  }
  const deliveryId = `${item.audienceId}|daily:${item.subscriberId}:${new Date(item.dueAt).toISOString()}`;
  // Held before the member's last unsubscribe (kept on the membership when ops add it again): the
  // clock that matters is the one at the unsubscribe, where holding stops anyway, so a clock that
  // runs ahead elsewhere (a laptop's, on a migration) cannot drop an alert of the new subscription.
  // Only for a membership that is on again: one that has just left is the skip below, which
  // records its held alerts as not sent because it left.
  const ended =
    membership.state === 'unsubscribed' ? [] : held.filter((entry) => heldBeforeLeaving(entry.heldAt, membership));
  if (ended.length > 0) {
    await deps.store.recordOutcome({
      subscriberId: profile.subscriberId,
      messageKey: messageKeyOf(`${deliveryId}|ended`),
      deliveryId: `${deliveryId}|ended`,
      audienceId: item.audienceId,
      kind: 'daily-digest',
      status: 'unsubscribed',
      createdAt: now,
      detail: `${ended.length} held alert(s) not sent: held before the subscriber left this audience and was confirmed again`,
    });
    await deps.store.clearHeld(
      item.subscriberId,
      item.audienceId,
      ended.map((entry) => entry.key),
    );
    deps.log.info('held alerts of an ended subscription not sent', { ...context, entries: ended.length });
    held = held.filter((entry) => !ended.includes(entry));
  }
  const decision = digestDecision(profile, membership, now);
  if (decision.action !== 'send' || held.length === 0) {
    if (held.length > 0 && decision.action === 'skip') {
      await recordDigestNotSent(deps, { ...context, deliveryId, now, entries: held.length, reason: decision.reason });
      tally.notSent += 1;
    }
    await deps.store.clearHeld(
      item.subscriberId,
      item.audienceId,
      held.map((entry) => entry.key),
    );
    return false;
  }
  // Oldest first, at most the cap. A day within the cap is one digest with the day's id, however
  // its entries are cleared after a crash: a retry finds it sent. A part of a longer day names its
  // first entry, so the next part is a digest of its own. Only past the cap, where the day would
  // otherwise never go out, can a crash between a send and its clearing send a part again: when
  // the clearing changed which entry is first, or alerts held since took the day past the cap.
  const ordered = [...held].sort((a, b) => a.heldAt - b.heldAt || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  const part = ordered.slice(0, Math.max(1, deps.dailyDigestMaxEntries ?? DAILY_DIGEST_MAX_ENTRIES));
  const more = part.length < ordered.length;
  const partId = more ? `${deliveryId}+${(part[0] as HeldEntry).key.slice(0, 16)}` : deliveryId;
  const keys = part.map((entry) => entry.key);
  const audience =
    (await deps.audiences.get(item.audienceId)) ??
    audienceFromDocument({ audienceId: item.audienceId, locale: part[0]?.locale });
  const draft = composeDailyDigest(
    { deliveryId: partId, entries: part.map((entry) => entry.entry), locale: part[0]?.locale, releaseAt: item.dueAt },
    audience,
    deps.compose,
  );
  try {
    let earlier: SendRecord | undefined;
    const outcome = await sendOne(profile, membership, draft, deps, 'daily-digest', {
      entryKeys: keys,
      onDuplicate: (record) => {
        earlier = record;
      },
    });
    if (outcome === 'retry') {
      tally.retry += 1;
      return false;
    }
    if (outcome === 'sent') tally.sent += 1;
    if (outcome === 'suppressed') {
      // The member changed between the read and the claim (unsubscribed, paused, suppressed):
      // nothing went out, and what waited is recorded as not sent, with why, before it is dropped.
      const [profileNow, membershipNow] = await Promise.all([
        deps.store.profile(item.subscriberId),
        deps.store.membership(item.subscriberId, item.audienceId),
      ]);
      const decisionNow = profileNow && membershipNow ? digestDecision(profileNow, membershipNow, now) : undefined;
      const reason = decisionNow?.action === 'skip' ? decisionNow.reason : 'suppressed';
      await recordDigestNotSent(deps, { ...context, deliveryId: partId, now, entries: part.length, reason });
      tally.notSent += 1;
    }
    // This digest went out before (a release that stopped before clearing, or ran twice): only
    // the entries it was claimed with are cleared; an alert held since (under the same due time,
    // which the uncleared entries kept) waits for the next digest. A claim of an earlier release
    // that kept no keys clears nothing: a repeat is better than a loss.
    const carried = new Set(earlier?.entryKeys ?? []);
    const cleared = outcome === 'duplicates' ? keys.filter((key) => carried.has(key)) : keys;
    // What is left moves to the next digest's due time, and so to a digest of its own; past the
    // cap it stays due, and this release sends the next part. When nothing was cleared (a claim
    // that kept no keys) it moves too: the same part would find the same claim again, for good.
    const again = more && cleared.length > 0;
    await deps.store.clearHeld(
      item.subscriberId,
      item.audienceId,
      cleared,
      again ? undefined : dailyDigestAt(now, audience),
    );
    return again;
  } catch (error) {
    tally.retry += 1;
    deps.log.error('daily digest failed; retried at the next release', {
      ...context,
      errorName: error instanceof Error ? error.name : typeof error,
    });
  }
  return false;
}
