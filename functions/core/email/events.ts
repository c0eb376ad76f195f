/**
 * What SES reports about each message (send, delivery, bounce, complaint, reject, delivery delay),
 * through the configuration set's event destination, recorded per subscriber. Owns these
 * guarantees:
 *
 * - **A hard bounce or a complaint suppresses the address at once**, on every audience: the
 *   profile is written before the event is acknowledged, and the delivery function checks it in
 *   the same transaction as every claim (delivery.ts). Soft bounces count toward
 *   {@link SOFT_BOUNCE_LIMIT} in a row, each message once however often its bounce is delivered;
 *   a delivery resets the count. Each of these is a write of
 *   its own attribute (suppression, the count), so no event can undo another handled at once.
 * - **Every event lands in the subscriber's history** (the record of the message it is about,
 *   found by the `subscriber` and `message` tags the delivery function set), with a short detail
 *   that never holds an address (SMTP diagnostics often quote the recipient: only the status code
 *   and SES's bounce type are kept).
 * - **Events arrive in any order**: a record's status only moves up ({@link STATUS_RANK}), so a
 *   late `Send` never turns `delivered` back into `sent`.
 *
 * Pure decisions over the {@link SubscriberStore} port.
 */
import * as z from 'zod/mini';
import type { Log } from '../ports.ts';
import type { SendEvent, SendStatus, SubscriberStore } from './ports.ts';
import { type FeedbackKind, SOFT_BOUNCE_LIMIT, type SuppressionReason } from './subscriber.ts';

export { SOFT_BOUNCE_LIMIT };

/** How far along a message is; a record's status only moves to a higher rank. */
export const STATUS_RANK: Readonly<Record<SendStatus, number>> = {
  held: 0,
  paused: 0,
  suppressed: 0,
  unsubscribed: 0,
  sending: 1,
  sent: 2,
  delayed: 3,
  delivered: 4,
  'soft-bounced': 5,
  rejected: 6,
  bounced: 6,
  complained: 7,
};

const tags = z._default(z.record(z.string(), z.array(z.string())), {});
const maybe = () => z.optional(z.string());

/** The part of an SES event (event publishing format) this function reads. */
export const SesEventSchema = z.object({
  eventType: z.string(),
  mail: z.object({
    timestamp: maybe(),
    messageId: maybe(),
    tags,
  }),
  bounce: z.optional(
    z.object({
      bounceType: z.string(),
      bounceSubType: maybe(),
      timestamp: maybe(),
      bouncedRecipients: z._default(z.array(z.object({ emailAddress: maybe(), status: maybe() })), []),
    }),
  ),
  complaint: z.optional(
    z.object({
      timestamp: maybe(),
      complaintFeedbackType: maybe(),
      complaintSubType: z.nullish(z.string()),
    }),
  ),
  delivery: z.optional(z.object({ timestamp: maybe(), smtpResponse: maybe() })),
  deliveryDelay: z.optional(z.object({ timestamp: maybe(), delayType: maybe() })),
  reject: z.optional(z.object({ reason: maybe() })),
});
export type SesEvent = z.output<typeof SesEventSchema>;

/** The event types SES publishes through a configuration set (event publishing). */
const SES_EVENT_TYPES = new Set([
  'Send',
  'Reject',
  'Bounce',
  'Complaint',
  'Delivery',
  'Open',
  'Click',
  'Rendering Failure',
  'DeliveryDelay',
  'Subscription',
]);

/**
 * The fields of an event that fits the schema but not SES's documented shape: an unknown type,
 * or a bounce or complaint without its details. Read on, a bounce would count as soft and a
 * complaint as nothing, so a changed shape must fail loudly instead (the events dead-letter queue).
 */
export function sesEventShapeProblems(event: SesEvent): string[] {
  if (!SES_EVENT_TYPES.has(event.eventType)) return ['eventType'];
  if (event.eventType === 'Bounce') {
    if (event.bounce === undefined) return ['bounce'];
    if (!['Permanent', 'Transient', 'Undetermined'].includes(event.bounce.bounceType)) return ['bounce.bounceType'];
  }
  if (event.eventType === 'Complaint' && event.complaint === undefined) return ['complaint'];
  return [];
}

/** What one event did. */
export interface EventOutcome {
  readonly eventType: string;
  readonly subscriberId?: string | undefined;
  /** The address was suppressed by this event. */
  readonly suppressed: boolean;
  /** The history record was found and updated. */
  readonly recorded: boolean;
}

/** An SMTP enhanced status code (`5.1.1`), the only part of a diagnostic kept. */
const statusCode = (value: string | undefined): string | undefined => /^\d\.\d{1,3}\.\d{1,3}$/.exec(value ?? '')?.[0];

/** The event's instant (its own timestamp, else the message's, else now). */
function instantOf(event: SesEvent, now: number): number {
  const candidates = [
    event.bounce?.timestamp,
    event.complaint?.timestamp,
    event.delivery?.timestamp,
    event.deliveryDelay?.timestamp,
    event.mail.timestamp,
  ];
  for (const candidate of candidates) {
    const parsed = candidate === undefined ? Number.NaN : Date.parse(candidate);
    if (Number.isFinite(parsed)) return parsed;
  }
  return now;
}

/** The history status, profile feedback and address-free detail of an event. */
export function classifyEvent(event: SesEvent): {
  status: SendStatus | undefined;
  feedback: FeedbackKind | undefined;
  detail?: string;
} {
  switch (event.eventType) {
    case 'Send':
      return { status: 'sent', feedback: undefined };
    case 'Delivery':
      return {
        status: 'delivered',
        feedback: 'delivery',
        detail: statusCode(/\b(\d\.\d{1,3}\.\d{1,3})\b/.exec(event.delivery?.smtpResponse ?? '')?.[1]),
      };
    case 'DeliveryDelay':
      return { status: 'delayed', feedback: undefined, detail: event.deliveryDelay?.delayType };
    case 'Reject':
      return { status: 'rejected', feedback: undefined, detail: event.reject?.reason?.slice(0, 100) };
    case 'Complaint':
      return {
        status: 'complained',
        feedback: 'complaint',
        detail:
          [event.complaint?.complaintFeedbackType, event.complaint?.complaintSubType].filter(Boolean).join('/') ||
          undefined,
      };
    case 'Bounce': {
      const bounce = event.bounce;
      const permanent = bounce?.bounceType === 'Permanent';
      const code = statusCode(bounce?.bouncedRecipients[0]?.status);
      const detail = [`${bounce?.bounceType ?? 'Undetermined'}/${bounce?.bounceSubType ?? 'General'}`, code]
        .filter(Boolean)
        .join(' ');
      return {
        status: permanent ? 'bounced' : 'soft-bounced',
        feedback: permanent ? 'hard-bounce' : 'soft-bounce',
        detail,
      };
    }
    default:
      // Open, Click, RenderingFailure, Subscription: recorded as they are, no status change.
      return { status: undefined, feedback: undefined };
  }
}

/**
 * Records one SES event: the profile first (suppression), then the history record.
 *
 * @throws whatever the store throws (the handler fails, SNS/Lambda retries: suppression is kept
 *   once, a soft bounce counted once per message, a status only rises; the history may show the
 *   event twice)
 */
export async function recordSesEvent(
  event: SesEvent,
  deps: { readonly store: SubscriberStore; readonly log: Log; readonly now: () => number },
): Promise<EventOutcome> {
  const subscriberId = event.mail.tags.subscriber?.[0];
  const messageKey = event.mail.tags.message?.[0];
  const { status, feedback, detail } = classifyEvent(event);
  const at = instantOf(event, deps.now());
  if (subscriberId === undefined || !/^[0-9a-f]{8,64}$/.test(subscriberId)) {
    deps.log.warn('SES event without a subscriber tag; not recorded (was it sent by news-alerts?)', {
      eventType: event.eventType,
      sesMessageId: event.mail.messageId,
    });
    return { eventType: event.eventType, suppressed: false, recorded: false };
  }
  const validKey = messageKey !== undefined && /^[0-9a-f]{32}$/.test(messageKey) ? messageKey : undefined;
  const suppression =
    feedback === undefined ? undefined : await applyFeedback(deps.store, subscriberId, validKey, feedback, at);
  const suppressed = suppression !== undefined;
  if (suppression !== undefined) {
    deps.log.warn('address suppressed: nothing more is sent to it', {
      subscriberId,
      reason: suppression,
      eventType: event.eventType,
    });
  }
  let recorded = false;
  if (validKey !== undefined) {
    const sendEvent: SendEvent = { type: event.eventType, at, ...(detail === undefined ? {} : { detail }) };
    recorded = await deps.store.recordEvent(subscriberId, validKey, sendEvent, status ?? 'sent');
  }
  deps.log.info('SES event recorded', { subscriberId, eventType: event.eventType, recorded, suppressed });
  return { eventType: event.eventType, subscriberId, suppressed, recorded };
}

/**
 * Applies one event's feedback to the address (the rule of subscriber.ts's `applyFeedback`) as
 * targeted writes, never a read-modify-write of the whole profile: a complaint and a delivery of
 * the same address handled by two invocations at once both stand. Returns the reason when this
 * event suppressed the address.
 */
async function applyFeedback(
  store: SubscriberStore,
  subscriberId: string,
  messageKey: string | undefined,
  feedback: FeedbackKind,
  at: number,
): Promise<SuppressionReason | undefined> {
  const suppress = async (reason: SuppressionReason) =>
    (await store.suppress(subscriberId, { reason, at })) ? reason : undefined;
  switch (feedback) {
    case 'delivery': {
      // Read first: nearly every delivered address has no soft bounce to reset, and every email
      // gets a Delivery event; a read costs a fifth of the (conditional) write it spares.
      const profile = await store.profile(subscriberId);
      if ((profile?.softBounces ?? 0) > 0) await store.resetSoftBounces(subscriberId);
      return undefined;
    }
    case 'hard-bounce':
      return await suppress('bounce');
    case 'complaint':
      return await suppress('complaint');
    case 'soft-bounce': {
      // Once per message; the limit is checked even when this is a repeat, whose first try may
      // have counted and then failed before it suppressed.
      const count = await store.countSoftBounce(subscriberId, messageKey);
      return count !== undefined && count >= SOFT_BOUNCE_LIMIT ? await suppress('soft-bounces') : undefined;
    }
  }
}

/** The part of a CloudWatch alarm notification (SNS → Lambda) that pauses sending. */
export const AlarmNotificationSchema = z.object({
  AlarmName: z.string(),
  NewStateValue: z.string(),
  NewStateReason: z.optional(z.string()),
});
