/**
 * The small interfaces the email core talks through. Each has one AWS adapter
 * (functions/aws/email/: DynamoDB for subscribers, SES v2 for sending, Secrets Manager for link
 * keys); tests and the local sandbox use the same adapters against moto server.
 */
import { createHash } from 'node:crypto';
import type { Audience } from '../model.ts';
import type { DigestEntryDocument } from './notification.ts';
import type { Membership, SubscriberProfile } from './subscriber.ts';

// --- Sending ---------------------------------------------------------------------------------------

/** One raw message to one recipient. */
export interface RawEmail {
  readonly from: string;
  readonly to: string;
  /** The whole MIME message (mime.ts). */
  readonly raw: Uint8Array;
  /** SES message tags, echoed in every event of the message (ASCII letters, digits, `_` and `-`). */
  readonly tags: Readonly<Record<string, string>>;
}

/** Sends email (SES v2 `SendEmail` with `Content.Raw` and the configuration set). */
export interface EmailSender {
  /**
   * @returns the provider's message id
   * @throws EmailThrottledError when the provider asks to slow down or sending is paused (retry later)
   * @throws EmailRejectedError when the provider refuses this message for good (not retried)
   */
  send(email: RawEmail): Promise<{ readonly messageId: string }>;
}

/** The provider asked to slow down, or sending is paused: nothing was sent; try again later. */
export class EmailThrottledError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'EmailThrottledError';
  }
}

/** The provider refused the message for good (a rejected recipient or content): recorded, not retried. */
export class EmailRejectedError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'EmailRejectedError';
  }
}

// --- Audiences ---------------------------------------------------------------------------------------

/** Reads audience items (the audiences table). */
export interface AudienceDirectory {
  /** The audience, or undefined when there is no such item (or it does not validate). */
  get(audienceId: string): Promise<Audience | undefined>;
}

// --- Subscribers and what was sent to them -------------------------------------------------------------

/** What happened to one message for one subscriber, as history shows it. */
export type SendStatus =
  /** Claimed by an invocation that is sending it now. */
  | 'sending'
  | 'sent'
  | 'delivered'
  | 'delayed'
  | 'bounced'
  | 'soft-bounced'
  | 'complained'
  | 'rejected'
  /** Not sent: the address is suppressed. */
  | 'suppressed'
  /** Not sent: the subscriber paused alerts. */
  | 'paused'
  /** Not sent: the subscriber left the audience before it went out. */
  | 'unsubscribed'
  /** Waiting for the subscriber's daily digest. */
  | 'held';

/** What a message to a subscriber is. */
export type MessageKind = 'alert' | 'update' | 'digest' | 'daily-digest' | 'confirmation';

/** One event SES reported about a message (or a decision of this function). */
export interface SendEvent {
  readonly type: string;
  readonly at: number;
  /** A short, address-free detail (`Permanent/General`, an SMTP status code). */
  readonly detail?: string | undefined;
}

/** One message to one subscriber: the idempotency record of the send and its history. */
export interface SendRecord {
  readonly subscriberId: string;
  /** Hash of the delivery id (see {@link messageKeyOf}): the record's key and the SES `message` tag. */
  readonly messageKey: string;
  /** The notification's delivery id (`<audienceId>|<articleKey>`, a digest id...). */
  readonly deliveryId: string;
  readonly audienceId: string;
  readonly kind: MessageKind;
  readonly subject?: string | undefined;
  readonly status: SendStatus;
  /** When this function first took it on. */
  readonly createdAt: number;
  readonly sentAt?: number | undefined;
  /** SES's message id. */
  readonly providerMessageId?: string | undefined;
  readonly events: readonly SendEvent[];
  /** A daily digest's held entries (their keys), as it was claimed with them: what it carried. */
  readonly entryKeys?: readonly string[] | undefined;
}

/** A new message this invocation wants to send. */
export interface SendClaim {
  readonly subscriberId: string;
  readonly messageKey: string;
  readonly deliveryId: string;
  readonly audienceId: string;
  readonly kind: MessageKind;
  readonly subject: string;
  readonly now: number;
  /** How long the claim holds before another invocation may take over a crashed send. */
  readonly leaseMs: number;
  /** A daily digest's held entries (their keys), kept with the claim: what a repeat may clear. */
  readonly entryKeys?: readonly string[] | undefined;
  /**
   * What the membership must still be when the claim is written, checked in the same transaction
   * together with "the address is not suppressed": `confirmed` and not paused (alerts, digests),
   * or `pending` (the confirmation email). A bounce or an unsubscribe that arrived since the
   * subscribers were read stops the send.
   */
  readonly requireMembership: 'confirmed' | 'pending';
}

/** The outcome of {@link SubscriberStore.claimSend}. */
export type ClaimOutcome =
  | { readonly claimed: true }
  /** Sent (or decided) before: a repeat; nothing to do. */
  | { readonly claimed: false; readonly reason: 'done'; readonly record: SendRecord }
  /** Another invocation is sending it right now: try again later. */
  | { readonly claimed: false; readonly reason: 'in-progress' }
  /** The subscriber may not be sent to any more (suppressed, unsubscribed, paused, or gone). */
  | { readonly claimed: false; readonly reason: 'not-allowed' };

/** A subscriber's daily digest that is due. */
export interface DueDigest {
  readonly subscriberId: string;
  readonly audienceId: string;
  readonly dueAt: number;
}

/**
 * The key of a message for one subscriber: the first 32 hex digits of the SHA-256 of its delivery
 * id. Delivery ids hold provider data of any length and characters; the key fits an SES tag
 * (letters and digits only) and a sort key, and one delivery id always gives the same key, so a
 * repeated delivery finds the first one's record.
 */
export const messageKeyOf = (deliveryId: string): string =>
  createHash('sha256').update(deliveryId, 'utf8').digest('hex').slice(0, 32);

/** Subscribers, memberships, send records and held digest entries (one DynamoDB table). */
export interface SubscriberStore {
  // Profiles
  /** The subscriber of an address, if any. */
  findByAddress(address: string): Promise<SubscriberProfile | undefined>;
  profile(subscriberId: string): Promise<SubscriberProfile | undefined>;
  /** Profiles by id (missing ids are absent from the map). */
  profiles(subscriberIds: readonly string[]): Promise<Map<string, SubscriberProfile>>;
  /**
   * The subscriber of `address`, created when there is none (a conditional write on the address
   * key, so two creations of one address give one subscriber). A `locale` given is the address's
   * page language: set on creation, and changed on an existing subscriber that has another.
   */
  ensureSubscriber(
    address: string,
    options: { readonly locale?: string | undefined; readonly now: number },
  ): Promise<SubscriberProfile>;
  /**
   * Suppresses the address unless it is already (the first reason stands). True when this call
   * suppressed it; false when it was suppressed before or the subscriber no longer exists. Each
   * feedback method changes only its own attribute, so events handled at once never undo each other.
   */
  suppress(subscriberId: string, suppression: NonNullable<SubscriberProfile['suppression']>): Promise<boolean>;
  /**
   * Adds one soft bounce of a message to the count (atomically), once per message: the message's
   * record is marked in the same write, so the same bounce delivered again is not counted again.
   * Returns the count as it stands, or undefined when the subscriber is gone.
   */
  countSoftBounce(subscriberId: string, messageKey: string | undefined): Promise<number | undefined>;
  /** A delivery: the soft-bounce count starts again from zero. */
  resetSoftBounces(subscriberId: string): Promise<void>;
  /** Removes a subscriber and everything of it (memberships, records, held entries, the address key). */
  deleteSubscriber(subscriberId: string): Promise<void>;

  // Memberships
  memberships(subscriberId: string): Promise<Membership[]>;
  membership(subscriberId: string, audienceId: string): Promise<Membership | undefined>;
  /**
   * Writes a membership. With `create` it must not exist yet (false when it does); otherwise the
   * subscriber's profile must still exist (false when the subscriber was deleted). With `expected`
   * (the membership as the caller read it) it is written only if it still is so (false when it
   * changed meanwhile: read it again and decide again), so a read-modify-write never undoes a
   * change made in between, such as a one-click unsubscribe.
   */
  saveMembership(
    membership: Membership,
    options?: { readonly create?: boolean; readonly expected?: Membership },
  ): Promise<boolean>;
  /** Pending and confirmed memberships of an audience (unsubscribed ones are not listed). */
  audienceMembers(audienceId: string): Promise<Membership[]>;

  // Sends
  claimSend(claim: SendClaim): Promise<ClaimOutcome>;
  /** Marks a claimed send as sent. */
  completeSend(
    subscriberId: string,
    messageKey: string,
    result: { readonly providerMessageId: string; readonly at: number },
  ): Promise<void>;
  /** Gives a claim up (the send failed for now and will be retried). */
  releaseSend(subscriberId: string, messageKey: string): Promise<void>;
  /** Records a decision without sending (suppressed, paused, held, rejected); keeps an existing record. */
  recordOutcome(
    record: Omit<SendRecord, 'events' | 'sentAt' | 'providerMessageId'> & { readonly detail?: string },
  ): Promise<void>;
  /**
   * Adds an SES event to a record and sets its status; false when there is no such record (it
   * expired, or the subscriber was deleted).
   */
  recordEvent(subscriberId: string, messageKey: string, event: SendEvent, status: SendStatus): Promise<boolean>;
  /** The subscriber's records, newest first. */
  history(subscriberId: string, options?: { readonly limit?: number }): Promise<SendRecord[]>;
  /** The status of one message's record for each of these subscribers (absent: no record). */
  sendStatuses(messageKey: string, subscriberIds: readonly string[]): Promise<Map<string, SendStatus>>;

  // A subscriber's daily digest
  /**
   * Keeps entries for the subscriber's daily digest of an audience, due at `dueAt` unless already
   * due earlier. An entry is held once per subscriber and audience, ever (as long as the history
   * is kept): one held before is not held again, even after its digest went out, so a
   * notification that comes back later never puts it in a second digest. Returns how many were
   * newly held.
   */
  hold(subscriberId: string, audienceId: string, entries: readonly HeldEntry[], dueAt: number): Promise<number>;
  /** Daily digests due at or before `now`. */
  dueDigests(now: number, limit: number): Promise<DueDigest[]>;
  heldEntries(subscriberId: string, audienceId: string): Promise<HeldEntry[]>;
  /**
   * Removes entries that went out (or were decided), and clears the due time when none are left;
   * with `nextDueAt`, entries left over (held while the digest went out) are due then instead, so
   * the next release sends them in a digest of their own, never as a repeat of the one just sent.
   */
  clearHeld(subscriberId: string, audienceId: string, keys: readonly string[], nextDueAt?: number): Promise<void>;
}

/** One alert waiting in a subscriber's daily digest. */
export interface HeldEntry {
  /** Hash of the entry's delivery id: an entry held twice (a repeated delivery) is kept once. */
  readonly key: string;
  readonly heldAt: number;
  readonly locale?: string | undefined;
  readonly entry: DigestEntryDocument;
}

/** Makes the subscriber's signed links (tokens.ts) into URLs of the preference endpoint. */
export interface LinkMaker {
  manage(subscriberId: string, audienceId: string): Promise<string>;
  unsubscribe(subscriberId: string, audienceId: string): Promise<string>;
  confirm(subscriberId: string, audienceId: string): Promise<string>;
}
