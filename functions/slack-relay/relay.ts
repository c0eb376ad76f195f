/**
 * The relay itself: one SNS delivery in, one Slack message out. Everything outside (Secrets
 * Manager, HTTPS, clock, sleep, randomness) comes in through {@link SlackRelayDependencies}, so
 * tests drive the same code against moto and a local HTTPS receiver.
 *
 * Failures are logged once here, with the audience, the alert and the secret's name (never the
 * webhook URL), then thrown: Lambda retries the event twice and then hands it to the relay's
 * dead-letter queue. Nothing is turned into a success.
 */
import { setTimeout as sleepFor } from 'node:timers/promises';
import type { Log } from '#core/ports';
import { renderSlackMessage } from './blocks.ts';
import { SlackDeliveryError, SlackMessageError, SlackRejectedError } from './errors.ts';
import { type Alert, audienceOfTopic, parseAlertMessage, SnsEventSchema, type SnsRecord } from './message.ts';
import { type AttemptOutcome, decideRetry, type RetryPolicy } from './retry.ts';
import { redactWebhook, type WebhookPoster, type WebhookResponse, type WebhookSource } from './webhook.ts';

/**
 * Error codes of a request that could not be built, or whose host resolves to an internal address
 * (the connect-time check of functions/shared/http-pool.ts): permanent, whatever the attempt.
 */
const requestErrorCodes = new Set(['ERR_INVALID_URL', 'UND_ERR_INVALID_ARG', 'ERR_TARGET_ADDRESS']);

/** Kept free at the end of the invocation for logging and returning the error. */
export const SAFETY_MARGIN_MS = 1000;

/** Counters the handler turns into metrics. */
export interface RelayCounters {
  posted(): void;
  retried(): void;
  failed(): void;
  /** A delivery that was already posted arrived again and was not posted twice. */
  duplicate(): void;
}

/**
 * Runs `post` at most once per delivery id, returning the first run's result to every repeat (the
 * handler uses Powertools idempotency on the state table; see idempotency.ts). A failed `post` is
 * forgotten, so Lambda's retry posts again.
 */
export type OncePerDelivery = (deliveryId: string, post: () => Promise<RelayResult>) => Promise<RelayResult>;

/** What the relay needs from outside. */
export interface SlackRelayDependencies {
  readonly webhooks: WebhookSource;
  readonly poster: WebhookPoster;
  readonly log: Log;
  readonly retry: RetryPolicy;
  /** `<prefix>-audience-`: topic names map to audience ids through it. */
  readonly topicNamePrefix: string;
  readonly counters?: RelayCounters | undefined;
  /**
   * Without it every repeat is posted again: SNS delivers to Lambda at least once, Lambda retries
   * an invocation that failed after posting, and the alert run's one accepted duplicate (a crash
   * between SNS accepting a message and the ledger write) republishes the same delivery id.
   */
  readonly oncePerDelivery?: OncePerDelivery | undefined;
  readonly sleep?: ((ms: number) => Promise<void>) | undefined;
  readonly random?: (() => number) | undefined;
  readonly now?: (() => number) | undefined;
}

/** The part of the Lambda context the relay uses. */
export interface RelayInvocation {
  remainingTimeMs(): number;
}

/** The outcome of one delivered alert. */
export interface RelayResult {
  readonly messageId: string;
  readonly audienceId: string;
  readonly deliveryId: string;
  /** Posts it took; 0 when the delivery had been posted before and was not posted again. */
  readonly attempts: number;
}

const noCounters: RelayCounters = { posted() {}, retried() {}, failed() {}, duplicate() {} };

/** Relays SNS deliveries of alert documents to each audience's Slack incoming webhook. */
export class SlackRelay {
  readonly #deps: SlackRelayDependencies;
  readonly #sleep: (ms: number) => Promise<void>;
  readonly #random: () => number;
  readonly #now: () => number;
  readonly #counters: RelayCounters;

  constructor(deps: SlackRelayDependencies) {
    this.#deps = deps;
    this.#sleep = deps.sleep ?? ((ms) => sleepFor(ms));
    this.#random = deps.random ?? Math.random;
    this.#now = deps.now ?? Date.now;
    this.#counters = deps.counters ?? noCounters;
  }

  /**
   * Handles one SNS → Lambda event (SNS sends one record per invocation; more are handled in
   * turn). Throws the first failure after every record was tried.
   */
  async handle(event: unknown, invocation: RelayInvocation): Promise<RelayResult[]> {
    const parsed = SnsEventSchema.safeParse(event);
    if (!parsed.success) {
      const error = new SlackMessageError('the event is not an SNS delivery (no Records[].Sns)');
      this.#deps.log.error('Slack relay received an event it cannot handle', { reason: error.message });
      throw error;
    }
    const results: RelayResult[] = [];
    let firstFailure: unknown;
    for (const record of parsed.data.Records) {
      try {
        results.push(await this.relay(record, invocation));
      } catch (error) {
        this.#counters.failed();
        firstFailure ??= error;
      }
    }
    if (firstFailure !== undefined) throw firstFailure;
    return results;
  }

  /** Posts one SNS record's alert to its audience's webhook. */
  async relay(record: SnsRecord, invocation: RelayInvocation): Promise<RelayResult> {
    const { MessageId: messageId, TopicArn: topicArn } = record.Sns;
    let alert: Alert;
    try {
      alert = parseAlertMessage(record.Sns.Message);
    } catch (error) {
      this.#deps.log.error('Slack relay could not read the alert', {
        messageId,
        topicArn,
        reason: error instanceof Error ? error.message : String(error),
      });
      throw error;
    }
    const audienceId = this.#audienceOf(alert, topicArn, messageId);
    const context = { messageId, audienceId, deliveryId: alert.deliveryId };
    const once = this.#deps.oncePerDelivery;
    if (once === undefined) return await this.#post(alert, context, invocation);
    let posted = false;
    const result = await once(alert.deliveryId, () => {
      posted = true;
      return this.#post(alert, context, invocation);
    });
    if (!posted) {
      this.#counters.duplicate();
      this.#deps.log.info('alert already posted to Slack; not posted again', {
        ...context,
        firstMessageId: result.messageId,
      });
    }
    return { ...context, attempts: posted ? result.attempts : 0 };
  }

  /** Posts a parsed alert, retrying what is worth retrying. */
  async #post(
    alert: Alert,
    context: { messageId: string; audienceId: string; deliveryId: string },
    invocation: RelayInvocation,
  ): Promise<RelayResult> {
    const { audienceId } = context;
    const body = JSON.stringify(renderSlackMessage(alert));

    let webhook = await this.#webhook(audienceId, context, false);
    let refreshed = false;
    for (let attempt = 1; ; attempt += 1) {
      const outcome = await this.#attempt(webhook.url, body);
      if (outcome.kind === 'response' && outcome.status >= 200 && outcome.status < 300) {
        this.#counters.posted();
        this.#deps.log.info('alert posted to Slack', { ...context, secretId: webhook.secretId, attempts: attempt });
        return { ...context, attempts: attempt };
      }
      const details = {
        ...context,
        secretId: webhook.secretId,
        attempt,
        status: outcome.kind === 'response' ? outcome.status : undefined,
        detail: outcome.kind === 'response' ? outcome.response.detail : outcome.detail,
      };
      const decision = decideRetry(this.#deps.retry, attempt, outcome, {
        now: this.#now(),
        remainingMs: invocation.remainingTimeMs() - SAFETY_MARGIN_MS,
        random: this.#random,
      });
      if (decision.action === 'retry') {
        this.#counters.retried();
        this.#deps.log.warn('Slack post failed; retrying', {
          ...details,
          delayMs: decision.delayMs,
          reason: decision.reason,
        });
        await this.#sleep(decision.delayMs);
        continue;
      }
      if (decision.permanent && !refreshed) {
        // Ops may have replaced a revoked webhook: the cached URL is the one Slack refused.
        refreshed = true;
        const latest = await this.#webhook(audienceId, context, true);
        if (latest.url !== webhook.url) {
          this.#deps.log.warn('Slack refused the cached webhook; retrying with the updated secret', details);
          webhook = latest;
          continue;
        }
      }
      this.#deps.log.error('alert could not be posted to Slack', { ...details, reason: decision.reason });
      if (decision.permanent) {
        throw new SlackRejectedError(
          outcome.kind === 'response'
            ? `Slack refused the alert ${alert.deliveryId} for audience "${audienceId}" (HTTP ${outcome.status} ${details.detail}); check the webhook in secret "${webhook.secretId}"`
            : `the alert ${alert.deliveryId} for audience "${audienceId}" could not be sent: the webhook in secret "${webhook.secretId}" is not a usable URL (${details.detail}); store the URL exactly as Slack shows it`,
          details.status ?? 400,
        );
      }
      throw new SlackDeliveryError(
        `the alert ${alert.deliveryId} for audience "${audienceId}" was not posted to Slack: ${decision.reason}`,
        { attempts: attempt, lastStatus: details.status },
      );
    }
  }

  /**
   * The topic says which audience (and so which channel) a message is for. A body naming another
   * audience was misrouted; posting it would leak one audience's alerts into another's channel.
   */
  #audienceOf(alert: Alert, topicArn: string, messageId: string): string {
    const fromTopic = audienceOfTopic(topicArn, this.#deps.topicNamePrefix);
    if (fromTopic === undefined || fromTopic === alert.audienceId) return alert.audienceId;
    const error = new SlackMessageError(
      `the alert names audience "${alert.audienceId}" but arrived on the topic of audience "${fromTopic}"; not posted`,
    );
    this.#deps.log.error('Slack relay refused a misrouted alert', { messageId, topicArn, reason: error.message });
    throw error;
  }

  async #webhook(
    audienceId: string,
    context: Record<string, unknown>,
    forceRefresh: boolean,
  ): Promise<{ url: string; secretId: string }> {
    try {
      return await this.#deps.webhooks.webhook(audienceId, { forceRefresh });
    } catch (error) {
      this.#deps.log.error('Slack webhook unavailable', {
        ...context,
        reason: error instanceof Error ? error.message : String(error),
      });
      throw error;
    }
  }

  async #attempt(
    url: string,
    body: string,
  ): Promise<
    | (AttemptOutcome & { kind: 'response'; response: WebhookResponse })
    | (AttemptOutcome & { kind: 'network-error' | 'request-error'; detail: string })
  > {
    try {
      const response = await this.#deps.poster.post(url, body);
      return { kind: 'response', status: response.status, retryAfter: response.retryAfter, response };
    } catch (error) {
      const reason = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
      const code = typeof error === 'object' && error !== null && 'code' in error ? String(error.code) : '';
      // A URL that does not parse, or a request undici refuses to build, fails the same way on
      // every attempt: retrying would only wait.
      const kind = requestErrorCodes.has(code) ? 'request-error' : 'network-error';
      return { kind, detail: redactWebhook(reason, url) };
    }
  }
}
