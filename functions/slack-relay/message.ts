/**
 * What the relay reads from an SNS Lambda delivery: the event envelope and, inside it, the
 * structured document the alert function publishes: a single alert under the `lambda` protocol
 * key (functions/core/render.ts), or a digest (`newsAlerts.kind: "digest"`) under `default`, which
 * Lambda subscribers receive when a message has no `lambda` key (functions/core/digest.ts).
 * Parsed leniently, as that document's contract asks of consumers: unknown fields are ignored and
 * optional ones default, so a newer publisher keeps working with this relay; only a different
 * `schemaVersion` is refused.
 */
import * as z from 'zod/mini';
import {
  alertDocumentSchema,
  digestDocumentSchema,
  digestEntrySchema,
  type MatchSchema,
  strings,
  text,
  textOrEmpty,
} from '#core/alert-document';
import { describeIssues } from '#core/model';
import type { SpikeDocument } from '#core/spikes/document';
import { SlackMessageError } from './errors.ts';

/** `newsAlerts.schemaVersion` this relay renders. */
export const SUPPORTED_SCHEMA_VERSION = 1;

const SnsRecordSchema = z.object({
  EventSource: z.optional(z.string()),
  Sns: z.object({
    MessageId: z.string(),
    TopicArn: z.string(),
    Message: z.string(),
  }),
});

/** The part of an SNS → Lambda event the relay uses. */
export const SnsEventSchema = z.object({ Records: z.array(SnsRecordSchema).check(z.minLength(1)) });
/** One SNS record. */
export type SnsRecord = z.output<typeof SnsRecordSchema>;

/** The `newsAlerts` part of the structured alert document. */
export const AlertSchema = alertDocumentSchema(
  z.object({
    title: z.string(),
    summary: textOrEmpty(),
    /** `''` when the alert function withheld the link (see core/text.ts `publishableLink`). */
    url: textOrEmpty(),
    publishedAt: z.string(),
    categories: strings(),
    categoryNames: strings(),
    media: text,
    mediaName: text,
    status: text,
  }),
);

const DigestEntrySchema = digestEntrySchema(
  z.object({
    title: z.string(),
    url: textOrEmpty(),
    publishedAt: z.string(),
    media: text,
    mediaName: text,
    status: text,
  }),
  { heldFor: text },
);

/** The `newsAlerts` part of a digest document (`kind: "digest"`). */
export const DigestSchema = digestDocumentSchema(DigestEntrySchema);

/** One single-article alert as the relay renders it. */
export type ArticleAlert = z.output<typeof AlertSchema> & { readonly digest?: never };
/** One digest as the relay renders it (the `never` fields keep the union's shared keys usable). */
export type DigestAlert = z.output<typeof DigestSchema> & {
  readonly article?: never;
  readonly matches?: never;
  readonly omittedMatches?: never;
};
/** What one SNS message carries: a single alert or a digest (tell them apart by `kind`). */
export type Alert = ArticleAlert | DigestAlert;
/** One matching rule of an alert. */
export type AlertMatch = z.output<typeof MatchSchema>;
/** One entry of a digest. */
export type DigestEntry = z.output<typeof DigestEntrySchema>;
/** The episode of a spike alert. */
export type SpikeFacts = SpikeDocument;

/**
 * Parses the SNS message body into an alert.
 * @throws SlackMessageError when the body is not JSON, lacks the `newsAlerts` part, or has another schema version
 */
export function parseAlertMessage(body: string): Alert {
  let document: unknown;
  try {
    document = JSON.parse(body);
  } catch (error) {
    throw new SlackMessageError(
      'the SNS message is not JSON; is the topic publishing with MessageStructure json and a `lambda` key?',
      { cause: error },
    );
  }
  const envelope = z.object({ newsAlerts: z.unknown() }).safeParse(document);
  if (!envelope.success || envelope.data.newsAlerts === undefined) {
    throw new SlackMessageError('the SNS message has no `newsAlerts` part; it was not published by news-alerts');
  }
  const part = envelope.data.newsAlerts;
  const isDigest = typeof part === 'object' && part !== null && (part as { kind?: unknown }).kind === 'digest';
  const parsed = isDigest ? DigestSchema.safeParse(part) : AlertSchema.safeParse(part);
  if (!parsed.success) {
    throw new SlackMessageError(
      `the ${isDigest ? 'digest' : 'alert'} does not fit the expected shape: ${describeIssues(parsed.error)}`,
    );
  }
  if (parsed.data.schemaVersion !== SUPPORTED_SCHEMA_VERSION) {
    throw new SlackMessageError(
      `the alert has schemaVersion ${parsed.data.schemaVersion}; this relay renders version ${SUPPORTED_SCHEMA_VERSION} (deploy the matching relay)`,
    );
  }
  return parsed.data;
}

/**
 * The audience a topic belongs to, from its name `<prefix>-audience-<audienceId>`; undefined when
 * the topic does not follow the naming.
 */
export function audienceOfTopic(topicArn: string, topicNamePrefix: string): string | undefined {
  const name = topicArn.slice(topicArn.lastIndexOf(':') + 1);
  if (!name.startsWith(topicNamePrefix)) return undefined;
  const audienceId = name.slice(topicNamePrefix.length);
  return audienceId === '' ? undefined : audienceId;
}
