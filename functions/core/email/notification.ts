/**
 * What the email delivery function reads from its queue: the SNS envelope of one notification an
 * audience topic sent (the email queue is an SQS subscriber without raw delivery, so the topic,
 * the subject and the message id come with it), and inside it the structured document the alert
 * function publishes under `default` (functions/core/render.ts for alerts and update notices,
 * functions/core/digest.ts for digests).
 *
 * Parsed leniently, as that document's contract asks of consumers: unknown fields are ignored and
 * optional ones default, so a newer publisher keeps working; only another `schemaVersion`, or a
 * body that is no news-alerts document at all, is refused (a poison message: it fails on every
 * receive and ends in the email dead-letter queue, with its SNS message id in the log).
 *
 * Pure.
 */
import * as z from 'zod/mini';
import {
  alertDocumentSchema,
  digestDocumentSchema,
  digestEntrySchema,
  type MatchSchema,
  nonEmpty,
  strings,
  text,
  textOrEmpty,
} from '../alert-document.ts';
import { describeIssues } from '../model.ts';

/** `newsAlerts.schemaVersion` this function renders. */
export const SUPPORTED_SCHEMA_VERSION = 1;

/** A queue message that is not a notification this function can send (never retried into success). */
export class UnreadableNotificationError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'UnreadableNotificationError';
  }
}

const EnvelopeSchema = z.object({
  Type: z.optional(z.string()),
  MessageId: z.string().check(z.minLength(1)),
  TopicArn: z.string().check(z.minLength(1)),
  Subject: z.nullish(z.string()),
  Message: z.string(),
});

const ArticleSchema = z.object({
  key: nonEmpty(),
  id: text,
  title: z.string(),
  summary: textOrEmpty(),
  url: textOrEmpty(),
  linkWithheld: z.optional(z.boolean()),
  publishedAt: z.string(),
  categories: strings(),
  categoryNames: strings(),
  media: text,
  mediaName: text,
  status: text,
});

const AlertSchema = alertDocumentSchema(ArticleSchema);

const DigestEntrySchema = digestEntrySchema(ArticleSchema, {
  heldFor: z.catch(z.enum(['digest', 'quiet-hours', 'budget']), 'digest'),
  heldAt: z.optional(z.string()),
});

const DigestSchema = digestDocumentSchema(DigestEntrySchema);

/** One article of a notification, as the document carries it. */
export type DocumentArticle = z.output<typeof ArticleSchema>;
/** One matching rule. */
export type DocumentMatch = z.output<typeof MatchSchema>;
/** A single alert, or an update notice (`update` set). */
export type AlertNotification = z.output<typeof AlertSchema> & { readonly kind?: 'alert' };
/** One digest entry. */
export type DigestEntryDocument = z.output<typeof DigestEntrySchema>;
/** An audience digest (everything held for the audience: digest mode, quiet hours, budget). */
export type DigestNotification = z.output<typeof DigestSchema>;

/** One notification from the queue. */
export interface QueuedNotification {
  /** The SNS message id (logged; never the body). */
  readonly snsMessageId: string;
  readonly topicArn: string;
  /** The subject SNS email subscribers got (the audience's subject template, rendered). */
  readonly subject: string | undefined;
  readonly document: AlertNotification | DigestNotification;
}

/**
 * Reads one SQS record body (an SNS envelope).
 * @throws UnreadableNotificationError naming what is wrong (never the body)
 */
export function parseQueuedNotification(body: string): QueuedNotification {
  const envelope = EnvelopeSchema.safeParse(safeJson(body, 'the queue message'));
  if (!envelope.success) {
    throw new UnreadableNotificationError(
      `the queue message is not an SNS notification (is the email queue subscribed without raw message delivery?): ${describeIssues(envelope.error)}`,
    );
  }
  const { MessageId, TopicArn, Subject, Message } = envelope.data;
  return {
    snsMessageId: MessageId,
    topicArn: TopicArn,
    subject: Subject ?? undefined,
    document: parseDocument(Message),
  };
}

/**
 * Reads the structured document of a notification.
 * @throws UnreadableNotificationError when it is no news-alerts document of a version this reads
 */
export function parseDocument(message: string): AlertNotification | DigestNotification {
  const root = safeJson(message, 'the SNS message');
  const part = typeof root === 'object' && root !== null ? (root as { newsAlerts?: unknown }).newsAlerts : undefined;
  if (typeof part !== 'object' || part === null) {
    throw new UnreadableNotificationError(
      'the SNS message has no `newsAlerts` part; it was not published by news-alerts',
    );
  }
  const isDigest = (part as { kind?: unknown }).kind === 'digest';
  const parsed = isDigest ? DigestSchema.safeParse(part) : AlertSchema.safeParse(part);
  if (!parsed.success) {
    throw new UnreadableNotificationError(
      `the ${isDigest ? 'digest' : 'alert'} does not fit the expected shape: ${describeIssues(parsed.error)}`,
    );
  }
  if (parsed.data.schemaVersion !== SUPPORTED_SCHEMA_VERSION) {
    throw new UnreadableNotificationError(
      `the notification has schemaVersion ${parsed.data.schemaVersion}; this function sends version ${SUPPORTED_SCHEMA_VERSION} (deploy the matching version)`,
    );
  }
  return parsed.data as AlertNotification | DigestNotification;
}

function safeJson(text: string, what: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new UnreadableNotificationError(`${what} is not JSON`, { cause: error });
  }
}

/**
 * The audience a topic belongs to, from its name `<prefix>-audience-<audienceId>`; undefined when
 * the name does not follow it.
 */
export function audienceOfTopic(topicArn: string, topicNamePrefix: string): string | undefined {
  const name = topicArn.slice(topicArn.lastIndexOf(':') + 1);
  if (!name.startsWith(topicNamePrefix)) return undefined;
  const audienceId = name.slice(topicNamePrefix.length);
  return audienceId === '' ? undefined : audienceId;
}
