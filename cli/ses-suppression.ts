/**
 * SES's account-level suppression list, as `news-alerts email remove --forget` needs it. The
 * configuration set adds every address that hard-bounces or complains to that list
 * (lib/constructs/email-channel.ts, `suppressionReasons`), and SES answers a send to a listed
 * address with a bounce of its own (`OnAccountSuppressionList`) without trying it: deleting only
 * this project's records would leave the address blocked for good, its next confirmation email
 * bounced and the new subscriber suppressed again at once.
 */
import { DeleteSuppressedDestinationCommand, NotFoundException, type SESv2Client } from '@aws-sdk/client-sesv2';
import { OperationFailedError } from './errors.ts';

/** What removing an address from SES's list did: `lifted`, or `not-listed` when SES did not hold it. */
export type SesSuppressionOutcome = 'lifted' | 'not-listed';

/**
 * Removes `address` from the account's suppression list. An address SES does not hold is fine.
 * Any other failure is an OperationFailedError that says what is left to do; it never repeats the
 * address (an SES message may hold it) and carries no cause that could.
 */
export async function liftSesSuppression(ses: SESv2Client, address: string): Promise<SesSuppressionOutcome> {
  try {
    await ses.send(new DeleteSuppressedDestinationCommand({ EmailAddress: address }));
    return 'lifted';
  } catch (error) {
    if (error instanceof NotFoundException) return 'not-listed';
    const name = error instanceof Error ? error.name : 'an error';
    throw new OperationFailedError(
      `SES did not remove the address from its account-level suppression list (${name}), so SES still bounces mail to it without sending; remove it with \`aws sesv2 delete-suppressed-destination --email-address <the address>\` (this needs ses:DeleteSuppressedDestination)`,
    );
  }
}
