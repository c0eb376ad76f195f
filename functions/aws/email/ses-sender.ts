/**
 * The {@link EmailSender} port on SES v2: `SendEmail` with `Content.Raw` (the MIME bytes of
 * mime.ts), the configuration set (so SES publishes the message's events) and message tags (so
 * each event names the subscriber and the message). What SES answers is sorted into the two
 * outcomes the delivery function acts on:
 *
 * - throttled (`TooManyRequestsException`, the daily quota, paused sending, an account under
 *   review, a configuration not ready yet): {@link EmailThrottledError}, nothing was sent, the
 *   notification comes back later;
 * - refused for good (`MessageRejected`, `BadRequestException`): {@link EmailRejectedError},
 *   recorded and counted, not retried;
 * - anything else (network, 5xx) propagates as it is and is retried like throttling.
 */
import { type SESv2Client, SendEmailCommand } from '@aws-sdk/client-sesv2';
import { EmailRejectedError, type EmailSender, EmailThrottledError, type RawEmail } from '#core/email/ports';

const RETRY_LATER = new Set([
  'TooManyRequestsException',
  'LimitExceededException',
  'SendingPausedException',
  'AccountSuspendedException',
  'MailFromDomainNotVerifiedException',
  'NotFoundException',
  'Throttling',
  'ThrottlingException',
]);
const REFUSED = new Set(['MessageRejected', 'BadRequestException']);

export interface SesEmailSenderOptions {
  readonly client: SESv2Client;
  /** The configuration set every message is sent with (its event destination reports the events). */
  readonly configurationSetName?: string | undefined;
}

export class SesEmailSender implements EmailSender {
  readonly #client: SESv2Client;
  readonly #configurationSet: string | undefined;

  constructor(options: SesEmailSenderOptions) {
    this.#client = options.client;
    this.#configurationSet = options.configurationSetName;
  }

  async send(email: RawEmail): Promise<{ readonly messageId: string }> {
    try {
      const { MessageId } = await this.#client.send(
        new SendEmailCommand({
          FromEmailAddress: email.from,
          Destination: { ToAddresses: [email.to] },
          Content: { Raw: { Data: email.raw } },
          ...(this.#configurationSet === undefined ? {} : { ConfigurationSetName: this.#configurationSet }),
          EmailTags: Object.entries(email.tags).map(([Name, Value]) => ({ Name, Value })),
        }),
      );
      return { messageId: MessageId ?? '' };
    } catch (error) {
      const name = error instanceof Error ? error.name : '';
      // SES messages can quote the recipient: only the error's name goes into ours.
      if (RETRY_LATER.has(name)) throw new EmailThrottledError(`SES: ${name}`, { cause: error });
      if (REFUSED.has(name)) throw new EmailRejectedError(`SES: ${name}`, { cause: error });
      throw error;
    }
  }
}
