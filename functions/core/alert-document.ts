/**
 * The structured alert document (`newsAlerts`) as the channels that consume it read it: the SES
 * email function (functions/core/email/notification.ts) and the Slack relay
 * (functions/slack-relay/message.ts). The alert function writes it (render.ts for alerts, update
 * notices and spike alerts, digest.ts for digests); this is the one reader's side of that contract.
 *
 * Lenient, as the contract asks of consumers: unknown fields are ignored, optional ones default,
 * and a malformed optional part (an update, a story's other outlets, a spike episode, the language)
 * reads as absent, so a newer publisher keeps working with an older consumer. Each consumer gives
 * the article fields it reads: the email function keeps the article's key and id, the relay only
 * what it shows.
 */
import * as z from 'zod/mini';
import { canonicalLocale, SHIPPED_LOCALES } from './locale.ts';
import { SpikeDocumentSchema } from './spikes/document.ts';

/** A string that may be absent or null. */
export const text = z.nullish(z.string());
/** A string that must hold something. */
export const nonEmpty = () => z.string().check(z.minLength(1));
/** A list of strings, empty when absent. */
export const strings = () => z._default(z.array(z.string()), []);
/** A string, `''` when absent. */
export const textOrEmpty = () => z._default(z.string(), '');
const flag = () => z._default(z.boolean(), false);
const wholeCount = () => z.number().check(z.int(), z.nonnegative());
const positiveCount = () => z.number().check(z.int(), z.positive());

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
 * The language the publisher wrote the fixed words in (render.ts `language`): a consumer says its
 * own words in the same one. Anything but a shipped language reads as absent (older publishers).
 */
const language = z.catch(z.optional(z.enum(SHIPPED_LOCALES)), undefined);

/** One matching rule of an alert or a digest entry, and why it matched. */
export const MatchSchema = z.object({
  ruleId: z.string(),
  description: text,
  urgent: flag(),
  reasons: z._default(z.array(z.object({ kind: z.string(), term: z.string() })), []),
  omittedReasons: z._default(wholeCount(), 0),
});

/**
 * An update notice's `update` (render.ts): what changed about an article the audience already had.
 * Anything malformed reads as absent: the notice still renders, as a plain alert.
 */
const UpdateSchema = z.catch(
  z.optional(z.object({ change: z.enum(['status', 'title']), status: text, previousStatus: text })),
  undefined,
);

/** A digest entry's `alsoIn` (digest.ts): the other outlets of its story. Malformed reads as absent. */
const AlsoInSchema = z.catch(z.optional(z.object({ count: positiveCount(), outlets: strings() })), undefined);

/** The fields both kinds of document share, before what each holds. */
const commonFields = {
  schemaVersion: z.number().check(z.int()),
  deliveryId: nonEmpty(),
  audienceId: nonEmpty(),
  audienceName: text,
  /** The subscriber's locale: the date fallbacks are in it. */
  locale,
  /** The language of the fixed words, as the publisher chose it; else from `locale`. */
  language,
  urgent: flag(),
};

/** A single alert, an update notice (`update` set) or a spike alert (`spike` set), with `article`. */
export function alertDocumentSchema<Article extends z.ZodMiniType>(article: Article) {
  return z.object({
    ...commonFields,
    /** Absent in single alerts; present only so the union with digests can be told apart. */
    kind: z.optional(z.literal('alert')),
    article,
    matches: z._default(z.array(MatchSchema), []),
    omittedMatches: z._default(wholeCount(), 0),
    /** Present only in an update notice. */
    update: UpdateSchema,
    /** Present only in a spike alert (or its update notice). */
    spike: SpikeDocumentSchema,
  });
}

/** One entry of a digest, with `article` and `held` (why and since when it was held, as read). */
export function digestEntrySchema<Article extends z.ZodMiniType, Held extends z.core.$ZodLooseShape>(
  article: Article,
  held: Held,
) {
  return z.object({
    deliveryId: textOrEmpty(),
    urgent: flag(),
    ...held,
    article,
    matches: z._default(z.array(MatchSchema), []),
    omittedMatches: z._default(wholeCount(), 0),
    /** Where else the entry's story ran; absent when nowhere. */
    alsoIn: AlsoInSchema,
  });
}

/** A digest (`kind: "digest"`): everything held for the audience, in groups of `entry`. */
export function digestDocumentSchema<Entry extends z.ZodMiniType>(entry: Entry) {
  return z.object({
    ...commonFields,
    kind: z.literal('digest'),
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
            entries: z._default(z.array(entry), []),
          }),
        ),
        [],
      ),
    }),
  });
}
