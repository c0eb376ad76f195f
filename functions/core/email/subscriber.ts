/**
 * Email subscribers as records this project owns (DESIGN section 11): one profile per address,
 * one membership per audience the address is on, and the rules that say what may change them and
 * who may be sent what. Owns these guarantees:
 *
 * - **Only a confirmed address receives alerts** (double opt-in): a membership starts `pending`
 *   and becomes `confirmed` only through the confirmation link (or a migration of an SNS email
 *   subscription that was already confirmed).
 * - **A suppressed address receives nothing**: a hard bounce or a complaint suppresses the address
 *   at once, on every audience; soft bounces suppress it once {@link SOFT_BOUNCE_LIMIT} arrive
 *   without a delivery in between. Suppression wins over every other setting.
 * - **Changes are explicit and idempotent**: {@link applyChange} says whether a change did
 *   anything, so a replayed one-click POST changes nothing the second time and says so.
 *
 * Addresses are validated here (and never logged anywhere): a value that could smuggle a header
 * (CR, LF, comma, angle brackets, quotes, non-ASCII) is refused, so it never reaches a `To:` line.
 *
 * Pure: no clock (every function takes `now`), no I/O.
 */
import { createHash } from 'node:crypto';
import type { SendRecord, SendStatus } from './ports.ts';

/** Where a membership stands. */
export type MembershipState = 'pending' | 'confirmed' | 'unsubscribed';
/** `immediate`: each alert as it comes; `digest`: one email a day with everything since the last. */
export type DeliveryPreference = 'immediate' | 'digest';
/** Why an address is suppressed. */
export type SuppressionReason = 'bounce' | 'complaint' | 'soft-bounces' | 'manual';

/** Soft bounces in a row (no delivery between them) that suppress an address. */
export const SOFT_BOUNCE_LIMIT = 5;
/** Longest pause a subscriber can choose on the page, in days. */
export const MAX_PAUSE_DAYS = 90;
const DAY_MS = 86_400_000;

/** One address: who it is (an opaque id), and whether anything may be sent to it at all. */
export interface SubscriberProfile {
  /** Opaque id (hex); used in links, logs and keys instead of the address. */
  readonly subscriberId: string;
  /** The address, normalized by {@link normalizeAddress}. Never logged. */
  readonly address: string;
  /** Preferred language of the page and the confirmation email (BCP 47), when known. */
  readonly locale?: string | undefined;
  readonly createdAt: number;
  /** Present once the address is suppressed: nothing is sent to it on any audience. */
  readonly suppression?: { readonly reason: SuppressionReason; readonly at: number } | undefined;
  /** Soft bounces since the last delivery. */
  readonly softBounces: number;
}

/** The address on one audience. */
export interface Membership {
  readonly subscriberId: string;
  readonly audienceId: string;
  readonly state: MembershipState;
  readonly preference: DeliveryPreference;
  /** Epoch ms until which nothing is sent (a pause the subscriber chose); absent: not paused. */
  readonly pausedUntil?: number | undefined;
  readonly createdAt: number;
  readonly confirmedAt?: number | undefined;
  readonly unsubscribedAt?: number | undefined;
  /** How the membership came to be: added by ops (double opt-in) or moved from an SNS email subscription. */
  readonly source: 'added' | 'migrated';
}

/** What a subscriber (through the page or a one-click POST) or a confirmation link asks for. */
export type PreferenceChange =
  | { readonly kind: 'confirm' }
  | { readonly kind: 'unsubscribe' }
  | { readonly kind: 'pause'; readonly days: number }
  | { readonly kind: 'resume' }
  | { readonly kind: 'preference'; readonly preference: DeliveryPreference };

/** The outcome of {@link applyChange}. */
export type ChangeOutcome =
  | { readonly ok: true; readonly membership: Membership; readonly changed: boolean }
  | { readonly ok: false; readonly reason: 'unsubscribed' | 'not-confirmed' | 'bad-days' };

/**
 * Applies one change to a membership. Idempotent: asking for what already holds succeeds with
 * `changed: false`. Refuses what makes no sense (pausing an address that left, confirming a
 * membership the subscriber ended: a new one must be added and confirmed again).
 */
export function applyChange(membership: Membership, change: PreferenceChange, now: number): ChangeOutcome {
  const done = (next: Membership) => ({
    ok: true as const,
    membership: next,
    changed: !sameMembership(membership, next),
  });
  switch (change.kind) {
    case 'confirm':
      if (membership.state === 'unsubscribed') return { ok: false, reason: 'unsubscribed' };
      if (membership.state === 'confirmed') return done(membership);
      return done({ ...membership, state: 'confirmed', confirmedAt: now });
    case 'unsubscribe':
      if (membership.state === 'unsubscribed') return done(membership);
      return done({ ...membership, state: 'unsubscribed', unsubscribedAt: now, pausedUntil: undefined });
    case 'pause': {
      if (!Number.isInteger(change.days) || change.days < 1 || change.days > MAX_PAUSE_DAYS) {
        return { ok: false, reason: 'bad-days' };
      }
      if (membership.state !== 'confirmed') {
        return { ok: false, reason: membership.state === 'unsubscribed' ? 'unsubscribed' : 'not-confirmed' };
      }
      return done({ ...membership, pausedUntil: now + change.days * DAY_MS });
    }
    case 'resume':
      if (membership.state === 'unsubscribed') return { ok: false, reason: 'unsubscribed' };
      return done({ ...membership, pausedUntil: undefined });
    case 'preference':
      if (membership.state === 'unsubscribed') return { ok: false, reason: 'unsubscribed' };
      return done({ ...membership, preference: change.preference });
  }
}

function sameMembership(a: Membership, b: Membership): boolean {
  return (
    a.state === b.state &&
    a.preference === b.preference &&
    (a.pausedUntil ?? 0) === (b.pausedUntil ?? 0) &&
    (a.confirmedAt ?? 0) === (b.confirmedAt ?? 0)
  );
}

/** True while a pause is in force. */
export const isPaused = (membership: Membership, now: number): boolean =>
  membership.pausedUntil !== undefined && membership.pausedUntil > now;

/** What happens to one notification for one subscriber. */
export type DeliveryDecision =
  | { readonly action: 'send' }
  /** The subscriber chose the daily digest: the notification waits in its digest. */
  | { readonly action: 'hold' }
  | { readonly action: 'skip'; readonly reason: 'suppressed' | 'unsubscribed' | 'not-confirmed' | 'paused' };

/**
 * Whether a notification goes to a subscriber now, waits for the subscriber's daily digest, or is
 * not sent (and why). Suppression is checked first: it wins over everything.
 */
export function deliveryDecision(profile: SubscriberProfile, membership: Membership, now: number): DeliveryDecision {
  if (profile.suppression !== undefined) return { action: 'skip', reason: 'suppressed' };
  if (membership.state === 'unsubscribed') return { action: 'skip', reason: 'unsubscribed' };
  if (membership.state !== 'confirmed') return { action: 'skip', reason: 'not-confirmed' };
  if (isPaused(membership, now)) return { action: 'skip', reason: 'paused' };
  return membership.preference === 'digest' ? { action: 'hold' } : { action: 'send' };
}

/** Whether a subscriber's own daily digest may go out now (the pause and suppression rules of alerts). */
export function digestDecision(profile: SubscriberProfile, membership: Membership, now: number): DeliveryDecision {
  const decision = deliveryDecision(profile, membership, now);
  return decision.action === 'hold' ? { action: 'send' } : decision;
}

/**
 * Whether an entry held at `heldAt` was held for a subscription that has since ended: held before
 * the member's last unsubscribe (kept on the membership when ops add the address again). Its
 * daily digest never sends it (releaseDailyDigests), whatever the membership is now.
 */
export const heldBeforeLeaving = (heldAt: number, membership: Membership): boolean =>
  membership.unsubscribedAt !== undefined && heldAt <= membership.unsubscribedAt;

/**
 * Why an alert held for a daily digest will not go out in it, as things stand now (the release
 * decides at its own time: a pause may end or begin before it), or undefined when it is due to go
 * out: the rule releaseDailyDigests applies, for `email history` to show beside a `held` record.
 */
export function heldFate(
  heldAt: number,
  profile: SubscriberProfile,
  membership: Membership | undefined,
  now: number,
): 'suppressed' | 'unsubscribed' | 'not-confirmed' | 'paused' | 'held before the subscriber left' | undefined {
  if (membership === undefined) return 'unsubscribed';
  const decision = digestDecision(profile, membership, now);
  if (decision.action === 'skip') return decision.reason;
  return heldBeforeLeaving(heldAt, membership) ? 'held before the subscriber left' : undefined;
}

/**
 * The subscriber's daily digest that carried a held alert or audience digest, from the subscriber's
 * history: a daily digest of the same audience that was sent (or refused: its status says which),
 * whose claim kept the held entries' keys among its entries (digests claimed before they kept their
 * keys cannot say). An audience digest held as a whole lists its entries' keys on its record; when
 * they went out in more than one daily digest, the last one carried the rest.
 */
export function carriedBy(record: SendRecord, history: readonly SendRecord[]): SendRecord | undefined {
  if (record.status !== 'held') return undefined;
  const keys = new Set([record.messageKey, ...(record.entryKeys ?? [])]);
  let carrier: SendRecord | undefined;
  for (const other of history) {
    if (other.kind !== 'daily-digest' || other.audienceId !== record.audienceId || other.sentAt === undefined) continue;
    if (!(other.entryKeys ?? []).some((key) => keys.has(key))) continue;
    if (carrier === undefined || other.sentAt > (carrier.sentAt ?? 0)) carrier = other;
  }
  return carrier;
}

/** Statuses of a message that SES took but that never reached the subscriber. */
export const UNDELIVERED: ReadonlySet<SendStatus> = new Set(['rejected', 'bounced', 'soft-bounced']);

/**
 * What became of a held record, for `email history`: the daily digest that sent it, or why it will
 * not be sent (the daily digest that carried it was refused or bounced, or {@link heldFate}'s
 * reason).
 */
export function afterHeld(
  record: SendRecord,
  history: readonly SendRecord[],
  profile: SubscriberProfile,
  membership: Membership | undefined,
  now: number,
): { readonly sentIn?: SendRecord; readonly willNotBeSent?: string } {
  if (record.status !== 'held') return {};
  const carrier = carriedBy(record, history);
  // A digest SES refused, or that bounced, went out but never reached the subscriber.
  if (carrier !== undefined && UNDELIVERED.has(carrier.status)) {
    return { willNotBeSent: `its daily digest was ${carrier.status}` };
  }
  if (carrier !== undefined) return { sentIn: carrier };
  const fate = heldFate(record.createdAt, profile, membership, now);
  return fate === undefined ? {} : { willNotBeSent: fate };
}

// --- Feedback from SES ------------------------------------------------------------------------------

/** An SES event as it concerns one address (functions/core/email/events.ts reads SES's JSON). */
export type FeedbackKind = 'delivery' | 'hard-bounce' | 'soft-bounce' | 'complaint';

/**
 * The profile after a feedback event; `suppressedNow` is true when this event suppressed it. The
 * rule itself: events.ts applies it to the stored profile as one targeted write per event.
 */
export function applyFeedback(
  profile: SubscriberProfile,
  kind: FeedbackKind,
  at: number,
): { readonly profile: SubscriberProfile; readonly suppressedNow: boolean } {
  const suppress = (reason: SuppressionReason) =>
    profile.suppression !== undefined
      ? { profile, suppressedNow: false }
      : { profile: { ...profile, suppression: { reason, at } }, suppressedNow: true };
  switch (kind) {
    case 'delivery':
      return { profile: profile.softBounces === 0 ? profile : { ...profile, softBounces: 0 }, suppressedNow: false };
    case 'hard-bounce':
      return suppress('bounce');
    case 'complaint':
      return suppress('complaint');
    case 'soft-bounce': {
      const counted = { ...profile, softBounces: profile.softBounces + 1 };
      if (counted.softBounces < SOFT_BOUNCE_LIMIT || profile.suppression !== undefined) {
        return { profile: counted, suppressedNow: false };
      }
      return { profile: { ...counted, suppression: { reason: 'soft-bounces', at } }, suppressedNow: true };
    }
  }
}

// --- Addresses ----------------------------------------------------------------------------------------

/** An address refused by {@link normalizeAddress}; the message never repeats the value. */
export class InvalidAddressError extends Error {
  constructor(reason: string) {
    super(`not a usable email address: ${reason}`);
    this.name = 'InvalidAddressError';
  }
}

const LOCAL_PART = /^[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*$/;
const DOMAIN_LABEL = /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?$/;

/**
 * The address as stored and sent to: trimmed, the domain lower-cased. Only plain ASCII addresses
 * (`dot-atom` local part, a domain of at least two labels) are accepted: they can never carry a
 * header break, a second recipient or a display name into the message.
 *
 * @throws InvalidAddressError saying what is wrong, without the value
 */
export function normalizeAddress(input: string): string {
  const value = input.trim();
  if (value.length === 0) throw new InvalidAddressError('it is empty');
  if (value.length > 254) throw new InvalidAddressError('it is longer than 254 characters');
  const at = value.lastIndexOf('@');
  if (at <= 0 || at === value.length - 1) throw new InvalidAddressError('it needs one "@" between a name and a domain');
  const local = value.slice(0, at);
  const domain = value.slice(at + 1).toLowerCase();
  if (local.length > 64) throw new InvalidAddressError('the part before "@" is longer than 64 characters');
  if (!LOCAL_PART.test(local)) {
    throw new InvalidAddressError(
      'the part before "@" may only hold letters, digits and !#$%&\'*+/=?^_`{|}~.- (no spaces, quotes or commas)',
    );
  }
  const labels = domain.split('.');
  if (labels.length < 2 || !labels.every((label) => DOMAIN_LABEL.test(label)) || /^\d+$/.test(labels.at(-1) ?? '')) {
    throw new InvalidAddressError('the domain must be a host name such as example.com');
  }
  return `${local}@${domain}`;
}

/**
 * The key an address is looked up by: a SHA-256 of the address with its local part lower-cased
 * too (mail providers treat it case-insensitively in practice), so `Kim@Example.com` and
 * `kim@example.com` are one subscriber. Keys hold no address in clear.
 */
export const addressKey = (address: string): string =>
  createHash('sha256').update(normalizeAddress(address).toLowerCase()).digest('hex');

/** Shows an address to ops in a list: `k**@example.com` (never in logs: there it is not shown at all). */
export function maskAddress(address: string): string {
  const at = address.lastIndexOf('@');
  if (at <= 0) return '***';
  const local = address.slice(0, at);
  return `${local.slice(0, 1)}${'*'.repeat(Math.min(Math.max(local.length - 1, 2), 6))}${address.slice(at)}`;
}
