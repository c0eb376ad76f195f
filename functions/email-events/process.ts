/**
 * The SES events function: SNS deliveries from the configuration set's event destination (one SES
 * event each) and from the reputation alarms. Each record is handled on its own; the first failure
 * is thrown after all were tried, so Lambda retries the event. A repeat changes nothing more:
 * suppression keeps its first reason, a soft bounce is counted once per message (a mark on the
 * message's record, written with the count) and a status only rises; only the history may list
 * the event twice. A message that is neither an SES event nor an alarm fails the same way, so it
 * ends in the events dead-letter queue, with its alarm, instead of vanishing.
 *
 * A reputation alarm (bounce or complaint rate near SES's review thresholds) going to ALARM pauses
 * sending on the configuration set at once: SES then refuses sends with `SendingPausedException`,
 * which the delivery function treats as throttling (the notifications wait in the queue, then in
 * the dead-letter queue, never lost). Ops resume sending after they found the cause
 * (docs/email.md, "When sending is paused").
 */
import { AlarmNotificationSchema, recordSesEvent, SesEventSchema, sesEventShapeProblems } from '#core/email/events';
import type { SubscriberStore } from '#core/email/ports';
import type { Log } from '#core/ports';

/** Turns sending on the configuration set off (SES v2 `PutConfigurationSetSendingOptions`). */
export interface SendingSwitch {
  pause(): Promise<void>;
}

export interface EventsDeps {
  readonly store: SubscriberStore;
  readonly sending: SendingSwitch | undefined;
  readonly log: Log;
  readonly now: () => number;
  readonly count?: ((name: string) => void) | undefined;
}

/** An SNS message that is neither an SES event this function can read nor an alarm notification. */
export class UnreadableEventError extends Error {
  override readonly name = 'UnreadableEventError';
  constructor(paths: readonly string[]) {
    const named = [...new Set(paths.map((path) => (path === '' ? 'the message itself' : path)))].slice(0, 5);
    super(`neither an SES event nor an alarm notification; wrong or missing: ${named.join(', ')}`);
  }
}

interface SnsRecord {
  readonly Sns?: { readonly Message?: unknown; readonly MessageId?: unknown };
}

/** Handles an SNS → Lambda event of SES events and alarm notifications. */
export async function handleEmailEvents(
  event: unknown,
  deps: EventsDeps,
): Promise<{ recorded: number; suppressed: number; paused: boolean }> {
  const records = (
    typeof event === 'object' && event !== null ? (event as { Records?: unknown }).Records : undefined
  ) as SnsRecord[] | undefined;
  if (!Array.isArray(records)) throw new Error('the email events function was invoked without SNS records');
  let recorded = 0;
  let suppressed = 0;
  let paused = false;
  let firstFailure: unknown;
  for (const record of records) {
    const messageId = typeof record.Sns?.MessageId === 'string' ? record.Sns.MessageId : undefined;
    try {
      const body = typeof record.Sns?.Message === 'string' ? (JSON.parse(record.Sns.Message) as unknown) : undefined;
      const alarm = AlarmNotificationSchema.safeParse(body);
      if (alarm.success) {
        if (alarm.data.NewStateValue === 'ALARM' && deps.sending !== undefined) {
          await deps.sending.pause();
          paused = true;
          deps.count?.('EmailSendingPaused');
          deps.log.error('email reputation alarm: sending paused on the configuration set', {
            alarm: alarm.data.AlarmName,
          });
        }
        continue;
      }
      const parsed = SesEventSchema.safeParse(body);
      // Failed, not skipped: a changed event shape would otherwise drop every bounce and complaint
      // quietly. After Lambda's retries the record waits in the events dead-letter queue, with its
      // alarm, for a redrive once this function reads it. Only the fields' paths are named, never a
      // value (an event quotes the subscriber's address).
      if (!parsed.success) throw new UnreadableEventError(parsed.error.issues.map((issue) => issue.path.join('.')));
      const shape = sesEventShapeProblems(parsed.data);
      if (shape.length > 0) throw new UnreadableEventError(shape);
      const outcome = await recordSesEvent(parsed.data, deps);
      if (outcome.recorded) recorded += 1;
      if (outcome.suppressed) {
        suppressed += 1;
        deps.count?.('EmailAddressesSuppressed');
      }
      deps.count?.(`SesEvent${parsed.data.eventType}`);
    } catch (error) {
      firstFailure ??= error;
      deps.log.error('an SES event could not be recorded; the event is retried', {
        messageId,
        errorName: error instanceof Error ? error.name : typeof error,
        ...(error instanceof UnreadableEventError ? { reason: error.message } : {}),
      });
    }
  }
  if (firstFailure !== undefined) throw firstFailure;
  return { recorded, suppressed, paused };
}
