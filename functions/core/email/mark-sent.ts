/**
 * The step after SES accepted an email: its record is marked sent. Shared by every path that
 * sends (alerts and digests in delivery.ts, confirmations in subscribe.ts), so none of them gives
 * a claim back once the email is out.
 */
import { setTimeout as delay } from 'node:timers/promises';
import type { Log } from '../ports.ts';
import type { SubscriberStore } from './ports.ts';

/**
 * How many times a send SES accepted is marked sent before the record is left as it is: with the
 * backoff below, about three seconds, long enough for throttling to pass.
 */
const COMPLETE_ATTEMPTS = 6;

/**
 * Marks a send SES accepted as sent, retrying a failed write a few times. Never throws and never
 * releases the claim: a released claim (or a failure that makes the notification come back) would
 * have the retry send the email again. When every attempt fails the record stays `sending`, and
 * its lease keeps any other invocation from taking the claim over and sending again until it ends
 * (SES's event for the message usually moves it on before that); the email counts as sent.
 */
export async function markSent(
  deps: {
    readonly store: SubscriberStore;
    readonly log: Log;
    readonly now: () => number;
    /** Waits between tries; tests pass one that does not wait. */
    readonly sleep?: ((ms: number) => Promise<void>) | undefined;
  },
  subscriberId: string,
  messageKey: string,
  providerMessageId: string,
  context: Readonly<Record<string, unknown>>,
): Promise<void> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      await deps.store.completeSend(subscriberId, messageKey, { providerMessageId, at: deps.now() });
      return;
    } catch (error) {
      if (attempt >= COMPLETE_ATTEMPTS) {
        deps.log.warn(
          'SES accepted the email but its record could not be marked sent; left as sending, not sent again',
          {
            ...context,
            messageKey,
            errorName: error instanceof Error ? error.name : typeof error,
          },
        );
        return;
      }
      await (deps.sleep ?? delay)(50 * 2 ** attempt);
    }
  }
}
