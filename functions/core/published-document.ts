/**
 * The structured body the alert function publishes: the `default` of every SNS message, which
 * HTTPS, SQS, Lambda, email-json and Firehose subscribers (and the Slack relay and SES email
 * function) receive. Three kinds share one envelope, an Amazon Q Developer custom notification
 * (`version`, `source`, `id`, `content`, `metadata`) plus a versioned `newsAlerts` part for
 * programs:
 *
 * - an article alert or its update notice (`metadata.eventType` `news-alerts.article-matched`),
 * - a spike alert or its update (`news-alerts.spike-detected`, with `newsAlerts.spike`),
 * - a digest (`news-alerts.digest`, with `newsAlerts.kind: "digest"`).
 *
 * These schemas are the publisher's side of the contract, and strict: every field the renderers
 * write and no other, so a test that parses every kind of rendered message with them fails when a
 * field is added without being described here. docs/schemas/structured-body.schema.json is
 * generated from them (scripts/generate-schemas.ts) for people writing consumers; there, objects
 * accept fields they do not list, because consumers must ignore fields added later
 * (`schemaVersion` changes only on breaking changes). The consumers in this repository read the
 * body leniently (alert-document.ts).
 *
 * Only tests, scripts and types import this module at run time: the functions that publish take
 * the types alone, so their bundles do not build these schemas at import.
 */
import * as z from 'zod/mini';
import { DIGEST_EVENT_TYPE } from './digest.ts';
import { SHIPPED_LOCALES } from './locale.ts';
import { ALERT_EVENT_TYPE, ALERT_SCHEMA_VERSION } from './render.ts';
import { SPIKE_EVENT_TYPE } from './spikes/render.ts';

const described = <T extends z.ZodMiniType>(schema: T, description: string): T =>
  schema.check(z.meta({ description })) as T;
const nonEmpty = () => z.string().check(z.minLength(1));
const wholeCount = () => z.number().check(z.int(), z.nonnegative());
const instant = () => z.iso.datetime();

/** The chat envelope's `content`: what a chat channel mapped to the topic shows. */
const ContentSchema = z.strictObject({
  textType: z.literal('client-markdown'),
  title: nonEmpty(),
  description: nonEmpty(),
  keywords: z.array(z.string()),
});

/** One matching rule, and why it matched. */
const MatchSchema = z.strictObject({
  ruleId: z.string(),
  description: z.nullable(z.string()),
  urgent: z.boolean(),
  reasons: z.array(
    z.strictObject({
      kind: described(z.string(), 'What matched, in English: keyword, category, media, status, all, query, …'),
      term: z.string(),
    }),
  ),
  omittedReasons: described(wholeCount(), 'Reasons left out to stay within the size limit (normally 0).'),
});

/** The article as the provider gave it (title and summary as sent, never translated). */
const ArticleSchema = z.strictObject({
  key: described(nonEmpty(), 'The article key the ledger uses (`id:<provider id>` or a hash of its link).'),
  id: z.nullable(z.string()),
  title: z.string(),
  summary: described(z.string(), 'Trimmed at a word (about 1,000 characters at most).'),
  url: described(
    z.string(),
    'The link (WHATWG form). Empty only when the link was withheld by the link policy (then `linkWithheld` is true) or the message has none (a test notification).',
  ),
  linkWithheld: z.optional(z.literal(true)),
  publishedAt: described(
    instant(),
    'When the provider says it was published; in the plain notice of an alert that could not be rendered (sent by `news-alerts replay --parked`) whose time was not valid, when it was parked.',
  ),
  categories: z.array(z.string()),
  categoryNames: z.array(z.string()),
  media: z.nullable(z.string()),
  mediaName: z.nullable(z.string()),
  status: z.nullable(z.string()),
});

/** What an update notice says changed; the statuses are the provider's (null: none). */
const UpdateSchema = z.strictObject({
  change: z.enum(['status', 'title']),
  status: z.nullable(z.string()),
  previousStatus: z.nullable(z.string()),
});

/** The fields every kind's `newsAlerts` starts with. */
const newsAlertsHead = {
  schemaVersion: z.literal(ALERT_SCHEMA_VERSION),
  deliveryId: described(
    nonEmpty(),
    'De-duplicate on this: delivery is at least once, and the same id always means the same message for the same audience.',
  ),
  audienceId: nonEmpty(),
  audienceName: z.nullable(z.string()),
  locale: described(
    z.optional(z.string()),
    "The subscriber's locale (BCP 47): the locale of the dates and numbers in `content`. Absent in documents written before locales existed.",
  ),
  language: described(
    z.optional(z.enum(SHIPPED_LOCALES)),
    'The language of the fixed words in `content`; keys and `reasons[].kind` stay English.',
  ),
  urgent: described(z.boolean(), 'True when any matching rule is urgent.'),
};

/** A spike alert's episode (`newsAlerts.spike`). Times are ISO 8601 instants. */
const SpikeSchema = z.strictObject({
  ruleId: nonEmpty(),
  episodeId: nonEmpty(),
  preset: described(z.string(), 'The rule\'s sensitivity: "fewer", "balanced" or "more".'),
  since: instant(),
  openedAt: instant(),
  bucketMinutes: z.number().check(z.positive()),
  observed: z.number().check(z.nonnegative()),
  expected: z.number().check(z.nonnegative()),
  bucketCount: z.number().check(z.nonnegative()),
  bucketExpected: z.number().check(z.nonnegative()),
  outletCount: wholeCount(),
  storiesSoFar: z.number().check(z.nonnegative()),
  expectedSoFar: z.number().check(z.nonnegative()),
  stage: z.enum(['spike', 'escalated']),
  topStories: z.array(z.strictObject({ title: z.string(), url: z.string(), outlets: wholeCount() })),
  topOutlets: z.array(z.strictObject({ name: z.string(), stories: wholeCount() })),
});

/** An article alert, its update notice, a spike alert or a spike alert's update. */
export const AlertDocumentSchema = z.strictObject({
  version: z.literal('1.0'),
  source: z.literal('custom'),
  id: nonEmpty(),
  content: ContentSchema,
  metadata: z.strictObject({
    eventType: z.enum([ALERT_EVENT_TYPE, SPIKE_EVENT_TYPE]),
    summary: z.string(),
    additionalContext: z.record(z.string(), z.string()),
  }),
  newsAlerts: z.strictObject({
    ...newsAlertsHead,
    article: ArticleSchema,
    matches: z.array(MatchSchema),
    omittedMatches: described(
      wholeCount(),
      'Matching rules left out to stay within the size limit (normally 0); all ids are in the ledger.',
    ),
    update: described(
      z.optional(UpdateSchema),
      "Only in an update notice (audience setting `updates: notify`); `deliveryId` is then the notice's own key.",
    ),
    spike: described(z.optional(SpikeSchema), 'Only in a spike alert and its update.'),
  }),
});
/** An article alert, update notice or spike alert, as published. */
export type AlertDocument = z.output<typeof AlertDocumentSchema>;

/** One held message of a digest. */
const DigestEntrySchema = z.strictObject({
  deliveryId: nonEmpty(),
  urgent: z.boolean(),
  heldFor: z.enum(['digest', 'quiet-hours', 'budget']),
  heldAt: instant(),
  article: ArticleSchema,
  matches: z.array(MatchSchema),
  omittedMatches: wholeCount(),
  alsoIn: described(
    z.optional(z.strictObject({ count: wholeCount(), outlets: z.array(z.string()) })),
    "Only when the entry's story ran in other outlets: how many, and the first names.",
  ),
});

/** A digest: the held messages of one release, grouped; a long one comes in parts. */
export const DigestDocumentSchema = z.strictObject({
  version: z.literal('1.0'),
  source: z.literal('custom'),
  id: nonEmpty(),
  content: ContentSchema,
  metadata: z.strictObject({
    eventType: z.literal(DIGEST_EVENT_TYPE),
    summary: z.string(),
    additionalContext: z.record(z.string(), z.string()),
  }),
  newsAlerts: z.strictObject({
    ...newsAlertsHead,
    kind: z.literal('digest'),
    digest: z.strictObject({
      releaseAt: instant(),
      part: z.number().check(z.int(), z.positive()),
      parts: z.number().check(z.int(), z.positive()),
      total: wholeCount(),
      count: wholeCount(),
      held: z.strictObject({ quietHours: wholeCount(), budget: wholeCount(), digest: wholeCount() }),
      holds: described(z.array(z.string()), 'The sentences shown to people about why the entries were held.'),
      groups: z.array(
        z.strictObject({
          label: z.string(),
          count: wholeCount(),
          total: wholeCount(),
          entries: z.array(DigestEntrySchema),
        }),
      ),
    }),
  }),
});

/** Every structured body the alert function publishes. */
export const PublishedDocumentSchema = z.union([AlertDocumentSchema, DigestDocumentSchema]);
