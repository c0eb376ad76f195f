/**
 * Named failures of the Slack relay. Every one is thrown out of the handler, so Lambda's async
 * retries run and the on-failure destination (the relay dead-letter queue) keeps the message.
 */
import { NewsAlertsError } from '#core/errors';

/** The SNS message is not an alert this relay understands (wrong shape, unknown schema version). */
export class SlackMessageError extends NewsAlertsError {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'SlackMessageError';
  }
}

/** The audience's webhook secret is missing, empty or not an https:// URL. */
export class SlackWebhookConfigError extends NewsAlertsError {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'SlackWebhookConfigError';
  }
}

/** Slack refused the message for good (4xx other than 429): revoked webhook, archived channel, bad payload. */
export class SlackRejectedError extends NewsAlertsError {
  readonly status: number;
  constructor(message: string, status: number, options?: ErrorOptions) {
    super(message, options);
    this.name = 'SlackRejectedError';
    this.status = status;
  }
}

/** Slack kept failing (429/5xx/network) through every attempt this invocation could afford. */
export class SlackDeliveryError extends NewsAlertsError {
  readonly attempts: number;
  readonly lastStatus: number | undefined;
  constructor(message: string, details: { attempts: number; lastStatus?: number | undefined }, options?: ErrorOptions) {
    super(message, options);
    this.name = 'SlackDeliveryError';
    this.attempts = details.attempts;
    this.lastStatus = details.lastStatus;
  }
}
