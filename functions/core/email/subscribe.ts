/**
 * Adding addresses to an audience (double opt-in), moving SNS email subscribers over, and taking
 * addresses off. The CLI calls these (`news-alerts email add|migrate|remove`). Owns these
 * guarantees:
 *
 * - **Only a confirmed address receives alerts.** A new address gets a `pending` membership and
 *   one confirmation email whose signed link confirms it (a POST on the page); nothing else is
 *   sent to it until then. Adding it again sends the confirmation again only while it is pending.
 * - **A migration confirms without asking again**: an SNS email subscription that SNS reports as
 *   confirmed already went through SNS's own double opt-in, so its address becomes a confirmed
 *   member (`source: migrated`); pending SNS subscriptions become pending members and get the
 *   confirmation email.
 * - **An unsubscribe is final until the person confirms again.** A migration never touches a
 *   membership the subscriber ended, nor confirms one reopened since (it stays pending until its own
 *   link confirms it): the SNS subscription's consent is older than the unsubscribe.
 *   Only ops adding the address again (`email add`) reopens it, as pending, with a new
 *   confirmation email even if one went out the same day.
 * - **A suppressed address is not mailed**, not even a confirmation (the claim checks it).
 */

import type { ShippedLocale } from '../locale.ts';
import type { Log } from '../ports.ts';
import { composeConfirmation } from './compose.ts';
import type { SenderSettings } from './delivery.ts';
import { markSent } from './mark-sent.ts';
import { buildMime } from './mime.ts';
import { type EmailSender, type LinkMaker, messageKeyOf, type SubscriberStore } from './ports.ts';
import type { Membership, SubscriberProfile } from './subscriber.ts';

/** What adding or migrating one address did. */
export interface SubscribeOutcome {
  readonly subscriberId: string;
  readonly state: Membership['state'];
  /**
   * `created` (new member), `unchanged` (already there in that state), `reopened` (had
   * unsubscribed; pending again), `confirmed` (a pending member a migration confirmed),
   * `kept-unsubscribed` (a migration met a member who had unsubscribed, and left it so).
   */
  readonly change: 'created' | 'unchanged' | 'reopened' | 'confirmed' | 'kept-unsubscribed';
  readonly confirmationSent: boolean;
  readonly suppressed: boolean;
}

/** What the subscribe flow works with. */
export interface SubscribeDeps {
  readonly store: SubscriberStore;
  readonly sender: EmailSender;
  readonly links: LinkMaker;
  readonly settings: SenderSettings;
  readonly log: Log;
  readonly now: () => number;
  /** Waits between tries of marking a send sent; tests pass one that does not wait. */
  readonly sleep?: ((ms: number) => Promise<void>) | undefined;
}

/** The audience as the confirmation email names it. */
export interface AudienceLabel {
  readonly audienceId: string;
  readonly label: string;
  readonly locale: string;
  readonly language: ShippedLocale;
}

/**
 * Adds `address` to an audience, pending confirmation, and sends the confirmation email.
 * `migration` moves an SNS email subscription: `confirmed` (SNS confirmed it) makes it a confirmed
 * member without any email, and a member who had unsubscribed stays unsubscribed.
 */
export async function addSubscriber(
  input: {
    readonly address: string;
    readonly audience: AudienceLabel;
    readonly migration?: { readonly confirmed: boolean };
    /** The address's page language, chosen by ops (`--locale`): set or changed on the subscriber. */
    readonly locale?: string | undefined;
  },
  deps: SubscribeDeps,
): Promise<SubscribeOutcome> {
  const now = deps.now();
  const confirmed = input.migration?.confirmed === true;
  // Only a language ops chose is the address's own: without one, each email's page speaks the
  // language of the audience that sent it (an address on a Korean and an English audience).
  const profile = await deps.store.ensureSubscriber(input.address, { locale: input.locale, now });
  const { audienceId } = input.audience;
  const suppressed = profile.suppression !== undefined;
  const fresh: Membership = {
    subscriberId: profile.subscriberId,
    audienceId,
    state: confirmed ? 'confirmed' : 'pending',
    preference: 'immediate',
    createdAt: now,
    ...(confirmed ? { confirmedAt: now } : {}),
    source: input.migration === undefined ? 'added' : 'migrated',
  };
  let membership: Membership | undefined;
  let change: SubscribeOutcome['change'] = 'unchanged';
  // Each write is made over the membership as it was read (or only while there is none): when the
  // person unsubscribed or confirmed in between, the decision is made again on what is there now.
  for (let attempt = 1; membership === undefined; attempt += 1) {
    if (attempt > 5)
      throw new Error(
        'the membership kept changing while the address was being added; nothing was changed, run it again',
      );
    const existing = await deps.store.membership(profile.subscriberId, audienceId);
    if (existing === undefined) {
      if (await deps.store.saveMembership(fresh, { create: true })) {
        membership = fresh;
        change = 'created';
      }
    } else if (existing.state === 'unsubscribed' && input.migration !== undefined) {
      // The person left after SNS confirmed them: that is the newer word, and a migration keeps it.
      membership = existing;
      change = 'kept-unsubscribed';
    } else if (existing.state === 'unsubscribed') {
      // Ops add an address that had left: it must confirm again. `unsubscribedAt` stays, so a later
      // migration knows this pending member once ended a subscription (below).
      const reopened = { ...fresh, createdAt: existing.createdAt, unsubscribedAt: existing.unsubscribedAt };
      if (await deps.store.saveMembership(reopened, { expected: existing })) {
        membership = reopened;
        change = 'reopened';
      }
    } else if (existing.state === 'pending' && confirmed && existing.unsubscribedAt === undefined) {
      // (A pending member who once unsubscribed confirms by their own link: SNS's consent is older.)
      const confirmedNow: Membership = { ...existing, state: 'confirmed', confirmedAt: now, source: 'migrated' };
      if (await deps.store.saveMembership(confirmedNow, { expected: existing })) {
        membership = confirmedNow;
        change = 'confirmed';
      }
    } else {
      membership = existing;
      change = 'unchanged';
    }
  }
  let confirmationSent = false;
  if (membership.state === 'pending' && !suppressed) {
    // A reopened membership gets its own confirmation, even if one went out today before it ended.
    const reopenedAt = change === 'reopened' ? now : undefined;
    confirmationSent = await sendConfirmation(profile, membership, input.audience, deps, { reopenedAt });
  }
  deps.log.info('email subscriber added', {
    subscriberId: profile.subscriberId,
    audienceId,
    change,
    state: membership.state,
  });
  return { subscriberId: profile.subscriberId, state: membership.state, change, confirmationSent, suppressed };
}

/**
 * Sends the confirmation email of a pending membership (again, when called again: one per
 * membership and day, through the same claim as every other message; a membership reopened after
 * an unsubscribe, `reopenedAt`, has a claim of its own).
 *
 * @returns false when it was sent today already or the address may not be mailed
 * @throws EmailThrottledError when SES asks to slow down (nothing was sent; try again)
 */
export async function sendConfirmation(
  profile: SubscriberProfile,
  membership: Membership,
  audience: AudienceLabel,
  deps: SubscribeDeps,
  options: { readonly reopenedAt?: number | undefined } = {},
): Promise<boolean> {
  const now = deps.now();
  const when =
    options.reopenedAt === undefined
      ? new Date(now).toISOString().slice(0, 10)
      : `reopened-${new Date(options.reopenedAt).toISOString()}`;
  const deliveryId = `${membership.audienceId}|confirm:${profile.subscriberId}:${when}`;
  const messageKey = messageKeyOf(deliveryId);
  const confirmUrl = await deps.links.confirm(profile.subscriberId, membership.audienceId);
  const rendered = composeConfirmation({
    audienceLabel: audience.label,
    language: audience.language,
    locale: audience.locale,
    confirmUrl,
  });
  const claim = await deps.store.claimSend({
    subscriberId: profile.subscriberId,
    messageKey,
    deliveryId,
    audienceId: membership.audienceId,
    kind: 'confirmation',
    subject: rendered.subject,
    now,
    leaseMs: 60_000,
    requireMembership: 'pending',
  });
  if (!claim.claimed) return false;
  let messageId: string;
  try {
    const raw = await buildMime({
      from: { name: deps.settings.fromName, address: deps.settings.fromAddress },
      replyTo: deps.settings.replyTo,
      to: profile.address,
      rendered,
      locale: audience.locale,
      messageId: `${messageKey}.${profile.subscriberId}@${deps.settings.domain}`,
      date: new Date(now),
    });
    ({ messageId } = await deps.sender.send({
      from: deps.settings.fromAddress,
      to: profile.address,
      raw,
      tags: { subscriber: profile.subscriberId, message: messageKey },
    }));
  } catch (error) {
    // Not sent: give the claim back so that adding the address again sends it.
    await deps.store.releaseSend(profile.subscriberId, messageKey);
    throw error;
  }
  // SES has it: the claim stays, even when the record cannot be marked sent (markSent says why).
  await markSent(deps, profile.subscriberId, messageKey, messageId, {
    audienceId: membership.audienceId,
    subscriberId: profile.subscriberId,
  });
  return true;
}
