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
import { canonicalLocale, SHIPPED_LOCALES } from '#core/locale';
import { describeIssues } from '#core/model';
import { type SpikeDocument, SpikeDocumentSchema } from '#core/spikes/document';
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

const text = z.nullish(z.string());
const nonEmpty = () => z.string().check(z.minLength(1));
const wholeCount = () => z.number().check(z.int(), z.nonnegative());
const positiveCount = () => z.number().check(z.int(), z.positive());
const strings = () => z._default(z.array(z.string()), []);
const flag = () => z._default(z.boolean(), false);

/** Longer than any BCP 47 tag people write (RFC 5646 asks implementations to handle 35). */
const LOCALE_MAX_LENGTH = 100;

/**
 * The subscriber's locale (`ko-KR`), canonical; undefined when absent, not a string or not a BCP 47
 * tag. Never a parse failure: a document from an older publisher, or with a tag this runtime cannot
 * read, still renders (in English, as before the field existed).
 */
const locale = z.optional(
  z.pipe(
    z.unknown(),
    z.transform((value) =>
      typeof value === 'string' && value.length <= LOCALE_MAX_LENGTH ? canonicalLocale(value) : undefined,
    ),
  ),
);

/**
 * The language the publisher wrote the fixed words in (render.ts `language`): the relay says its
 * own words in the same one. Anything but a shipped language reads as absent (older publishers).
 */
const language = z.catch(z.optional(z.enum(SHIPPED_LOCALES)), undefined);

const ReasonSchema = z.object({ kind: z.string(), term: z.string() });

/**
 * An update notice's `newsAlerts.update` (render.ts): what changed about an article the audience
 * already had. Anything malformed reads as absent: the notice still renders, as a plain alert.
 */
const UpdateSchema = z.catch(
  z.optional(
    z.object({
      change: z.enum(['status', 'title']),
      status: text,
      previousStatus: text,
    }),
  ),
  undefined,
);

/**
 * A digest entry's `alsoIn` (digest.ts): the other outlets of its story. Malformed reads as absent.
 */
const AlsoInSchema = z.catch(z.optional(z.object({ count: positiveCount(), outlets: strings() })), undefined);

const MatchSchema = z.object({
  ruleId: z.string(),
  description: text,
  urgent: flag(),
  reasons: z._default(z.array(ReasonSchema), []),
  omittedReasons: z._default(wholeCount(), 0),
});

/** The `newsAlerts` part of the structured alert document. */
export const AlertSchema = z.object({
  schemaVersion: z.number().check(z.int()),
  /** Absent in single alerts; present only so the union with digests can be told apart. */
  kind: z.optional(z.literal('alert')),
  deliveryId: nonEmpty(),
  audienceId: nonEmpty(),
  audienceName: text,
  /** The subscriber's locale: the date fallbacks are in it. */
  locale,
  /** The language of the fixed words, as the publisher chose it; else from `locale`. */
  language,
  urgent: flag(),
  article: z.object({
    title: z.string(),
    summary: z._default(z.string(), ''),
    /** `''` when the alert function withheld the link (see core/text.ts `publishableLink`). */
    url: z._default(z.string(), ''),
    publishedAt: z.string(),
    categories: strings(),
    categoryNames: strings(),
    media: text,
    mediaName: text,
    status: text,
  }),
  matches: z._default(z.array(MatchSchema), []),
  omittedMatches: z._default(wholeCount(), 0),
  /** Present only in an update notice. */
  update: UpdateSchema,
  /** Present only in a spike alert (or its update notice). */
  spike: SpikeDocumentSchema,
});
const DigestEntrySchema = z.object({
  deliveryId: z._default(z.string(), ''),
  urgent: flag(),
  heldFor: text,
  article: z.object({
    title: z.string(),
    url: z._default(z.string(), ''),
    publishedAt: z.string(),
    media: text,
    mediaName: text,
    status: text,
  }),
  matches: z._default(z.array(MatchSchema), []),
  omittedMatches: z._default(wholeCount(), 0),
  /** Where else the entry's story ran; absent when nowhere. */
  alsoIn: AlsoInSchema,
});

/** The `newsAlerts` part of a digest document (`kind: "digest"`). */
export const DigestSchema = z.object({
  schemaVersion: z.number().check(z.int()),
  kind: z.literal('digest'),
  deliveryId: nonEmpty(),
  audienceId: nonEmpty(),
  audienceName: text,
  /** The subscriber's locale: the date fallbacks are in it. */
  locale,
  /** The language of the fixed words, as the publisher chose it; else from `locale`. */
  language,
  urgent: flag(),
  digest: z.object({
    releaseAt: z.string(),
    part: z._default(positiveCount(), 1),
    parts: z._default(positiveCount(), 1),
    total: wholeCount(),
    count: wholeCount(),
    /** Why the entries were held, one sentence each. */
    holds: strings(),
    groups: z._default(
      z.array(
        z.object({
          label: z.string(),
          count: wholeCount(),
          total: z.optional(wholeCount()),
          entries: z._default(z.array(DigestEntrySchema), []),
        }),
      ),
      [],
    ),
  }),
});

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
