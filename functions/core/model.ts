/**
 * The domain model: articles as the run sees them after the response mapping, and the rule and
 * audience items ops teams edit in DynamoDB. Rule and audience types come from their schemas, so
 * the alert run, the CLI and the published JSON Schema all apply the same validation.
 */
// zod/mini: the same validation core (and messages) as `zod`, with functions instead of methods,
// so a bundle keeps only what the schemas use. Classic zod's `z` is one object holding every
// method and all 40-odd locales: about 480 KiB of the alert function's bundle, parsed at every
// cold start, against about 45 KiB once every schema it loads is on zod/mini. `import * as`
// (not `import { z }`) is what lets esbuild drop the unused parts.
import { en } from 'zod/locales';
import * as z from 'zod/mini';
import { BoundedCache } from './bounded-cache.ts';
import { BIDI_CONTROLS, hasVisibleCharacter, LONE_SURROGATE, listCodePoints } from './hostile-text.ts';
import { isSupportedLocale } from './locale.ts';
import { parseQuery, QUERY_LIMITS, type QueryNode, QuerySyntaxError, queryAnchors } from './query.ts';
import type { SpikeAlertFacts } from './spikes/alert.ts';

/** Re-exported where the schemas' callers have always found it. */
export { isSupportedLocale };

// zod/mini ships without messages; the English ones are those classic zod uses, so a value no
// custom message covers has a message to go on ("Invalid option: expected one of ..."), which
// describeIssues words for people (plainWords).
z.config(en());

/** An article after the provider response was mapped and normalized. */
export interface Article {
  /**
   * Stable identity used for de-duplication and the delivery ledger: `id:<provider id>` when the
   * provider gives an id, otherwise `url:<sha256 of the canonical url>`.
   */
  readonly key: string;
  /** Provider id, when present. */
  readonly id?: string | undefined;
  readonly title: string;
  /** Summary or lead; empty string when the provider sends none. */
  readonly summary: string;
  readonly url: string;
  /** Publication instant, epoch milliseconds UTC. */
  readonly publishedAt: number;
  /** Category codes (or names when the provider sends no codes): an open set, order kept. */
  readonly categories: readonly string[];
  /** Human-readable category names, when the provider gives them (rules match codes and names). */
  readonly categoryNames: readonly string[];
  /** Media code (or name when no code is given). */
  readonly media?: string | undefined;
  /** Human-readable media name, when the provider gives one. */
  readonly mediaName?: string | undefined;
  /** Latest status as the provider sends it (open set). */
  readonly status?: string | undefined;
  /**
   * Read back from a notification whose link was withheld (the document says so and carries no
   * link): the message names the withheld link, as the first rendering did.
   */
  readonly linkWithheld?: boolean | undefined;
}

/** Why a rule matched an article: the criterion and the value that hit. */
export interface MatchReason {
  readonly kind: 'category' | 'keyword' | 'media' | 'status' | 'all' | 'spike';
  /** The rule's term that matched (as the rule spells it), e.g. `economy*` or `interest rate`. */
  readonly term: string;
}

/** One rule that matched, with every reason it matched. */
export interface RuleMatch {
  readonly ruleId: string;
  readonly description?: string | undefined;
  readonly urgent: boolean;
  readonly reasons: readonly MatchReason[];
}

/** Everything one audience should hear about one article: one notification, naming every rule. */
export interface AudienceMatch {
  readonly audienceId: string;
  readonly article: Article;
  readonly rules: readonly RuleMatch[];
  /**
   * The story the article belongs to (functions/core/story.ts), set by the delivery pipeline for
   * audiences that collapse stories; kept with held matches so a digest can say "also in N outlets".
   */
  readonly storyId?: string | undefined;
  /**
   * Set on a spike alert (functions/core/spikes/): the episode's facts. Its `article` is the
   * alert itself (key `spike:<ruleId>:<episodeId>`, the headline in the audience's words, the top
   * story's link), so digests, the ledger and the delivery plan treat it like any alert.
   */
  readonly spike?: SpikeAlertFacts | undefined;
}

// ---------------------------------------------------------------------------------------------
// Ops-edited items. DynamoDB lists (L) and string sets (SS) are both accepted for list attributes,
// because the console offers both and an ops person should not have to know the difference.

const idPattern = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;
const identifier = (what: string) =>
  z
    .string({ error: (issue) => (issue.input === undefined ? `${what} is required` : `${what} must be a string`) })
    .check(z.regex(idPattern, `${what} must be 1-128 characters of letters, digits, '.', '_', ':' or '-'`));

/**
 * Limits of a rule item, enforced by the schema (so the run skips an item that breaks them and
 * the CLI refuses it before writing). Whole-item size (DynamoDB's 400 KB) is checked by the CLI
 * when it writes, because audit attributes count too.
 */
export const RULE_LIMITS = {
  /** Entries per list attribute (categories, keywords, ...). */
  termsPerList: 500,
  /** Characters per term. */
  termLength: 200,
  descriptionLength: 500,
  notesLength: 2000,
  /** Characters (code points) of a `query`. */
  queryLength: QUERY_LIMITS.length,
  /** Parentheses and NOT nested inside each other in a `query`. */
  queryDepth: QUERY_LIMITS.depth,
  /** Terms and phrases of a `query`. */
  queryTerms: QUERY_LIMITS.terms,
} as const;

export { hasVisibleCharacter } from './hostile-text.ts';

const term = z.string().check(
  z.trim(),
  z.minLength(1, 'must not be empty'),
  z.maxLength(RULE_LIMITS.termLength, `must be at most ${RULE_LIMITS.termLength} characters; shorten it`),
  z.superRefine((value, ctx) => {
    if (LONE_SURROGATE.test(value)) {
      ctx.addIssue({ code: 'custom', message: 'is not valid Unicode text (a lone surrogate); type the term again' });
    } else if (BIDI_CONTROLS.test(value)) {
      ctx.addIssue({
        code: 'custom',
        message: `contains a bidirectional control character (${listCodePoints(value.replace(/[^\u202A-\u202E\u2066-\u2069]/gu, ''))}) that reorders what a reader sees; type the term without it`,
      });
    } else if (value.length > 0 && !hasVisibleCharacter(value)) {
      ctx.addIssue({
        code: 'custom',
        message: `has no visible character (only ${listCodePoints(value)}), so it would match text no reader can see; remove it or type the word`,
      });
    }
  }),
);

/** A list attribute: a DynamoDB list or string set of non-empty strings. */
const termList = (what: string) =>
  // What classic zod's `preprocess` is: a transform piped into the schema.
  z.pipe(
    z.transform((value: unknown) => (value instanceof Set ? [...value] : value)),
    z
      .array(term, {
        // Only a wrong type gets this wording: a list that is too long says so below.
        error: (issue) =>
          issue.code === 'invalid_type' ? `${what} must be a list (L) or string set (SS) of strings` : undefined,
      })
      // Checked before the entries, so 10,000 keywords get one line saying so, not 10,000.
      .check(
        z.maxLength(RULE_LIMITS.termsPerList, {
          error: (issue) =>
            `has ${Array.isArray(issue.input) ? issue.input.length : 'too many'} entries; at most ${RULE_LIMITS.termsPerList} are allowed: split them over several rules`,
        }),
      ),
  );

const clockTime = z.string().check(z.regex(/^([01]\d|2[0-3]):[0-5]\d$/, 'must be a 24-hour time such as "07:30"'));

/**
 * How IANA spells a zone this runtime knows, or null for a name it does not (building a formatter
 * for it throws). Intl takes any case (`europe/london`), and messages, quiet hours and the CLI
 * showed a zone as typed; only the case is changed: an alias (`US/Pacific`) stays the name its
 * owner chose.
 */
function spellingOf(value: string): string | null {
  let spelt: string;
  try {
    spelt = new Intl.DateTimeFormat('en-US', { timeZone: value }).resolvedOptions().timeZone;
  } catch {
    return null;
  }
  return spelt.toLowerCase() === value.toLowerCase() ? spelt : value;
}

/**
 * Answers of {@link spellingOf} by name: a run validates every audience's zone, a few distinct
 * names among hundreds of audiences, and building an `Intl.DateTimeFormat` to ask costs ~60 µs
 * (one formatter answers both whether the zone exists and how it is spelt).
 */
const zoneSpellings = new BoundedCache<string, string | null>(256);

/** Whether `value` names a time zone this runtime knows (an IANA name such as `Asia/Seoul`, or `UTC`). */
export const isTimeZone = (value: string): boolean => zoneSpellings.get(value, spellingOf) !== null;

const zoneSpelling = (value: string): string => zoneSpellings.get(value, spellingOf) ?? value;

const timeZone = z
  .string()
  .check(
    z.refine(isTimeZone, 'must be an IANA time zone such as "Europe/Berlin" or "Asia/Seoul"'),
    z.overwrite(zoneSpelling),
  );

const auditFields = {
  /** Set by the CLI on every write: who changed the item and when (ISO 8601). */
  updatedAt: z.optional(z.string()),
  updatedBy: z.optional(z.string()),
  /** Optimistic-lock counter the CLI increments on every write. */
  version: z.optional(z.number().check(z.int(), z.nonnegative())),
  /** Free text for ops; ignored by the run. */
  notes: z.optional(
    z
      .string()
      .check(z.maxLength(RULE_LIMITS.notesLength, `must be at most ${RULE_LIMITS.notesLength} characters; shorten it`)),
  ),
};

/** The `query` attribute as the JSON Schema describes it: syntax summary and limits. */
const QUERY_DESCRIPTION = [
  'Boolean query over title and summary, ANDed with the other criteria.',
  'Terms match like keywords (whole words in scripts written with spaces, Korean/Japanese/Chinese/Thai inside words); "exact phrase"; AND (or a space), OR, NOT or -term, parentheses;',
  'a NEAR/n b: both in the same field with at most n words between (n characters when a side has Han, kana, Thai or another script written without spaces), n 1-50;',
  'semicond*: prefix of a word in a script written with spaces; title:term, summary:"phrase", title:(a OR b) scope to one field.',
  'Precedence NOT > NEAR > AND > OR; operators are uppercase.',
  `Limits: ${QUERY_LIMITS.length} characters, ${QUERY_LIMITS.depth} levels of parentheses and NOT, ${QUERY_LIMITS.terms} terms.`,
  'A query that only excludes (NOT a, a OR NOT b) needs matchAll unless the rule has another criterion.',
  'Example: (반도체 OR 메모리) AND 수출 -삼성',
].join(' ');

/**
 * Parsed queries by text, memoized for the last few distinct texts because the schema asks twice
 * per rule (the attribute, then the whole-rule criterion check).
 */
const parsedQueries = new BoundedCache<string, QueryNode | QuerySyntaxError>(64);

/** The parsed query, or the syntax error that refuses it (memoized in {@link parsedQueries}). */
function parseRuleQuery(text: string): QueryNode | QuerySyntaxError {
  return parsedQueries.get(text, parseOrRefuse);
}

/** The parsed query, or its syntax error as a value (any other error is thrown). */
function parseOrRefuse(text: string): QueryNode | QuerySyntaxError {
  try {
    return parseQuery(text);
  } catch (error) {
    if (!(error instanceof QuerySyntaxError)) throw error;
    return error;
  }
}

/**
 * A value written by hand, as an error names it: a string quoted (JSON escapes, at most 40
 * characters), anything else by its kind, so the message says what to change.
 */
function describeFound(value: unknown): string {
  if (typeof value === 'string')
    return value.length > 40 ? `${JSON.stringify(value.slice(0, 40))}…` : JSON.stringify(value);
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'a map';
  if (typeof value === 'boolean' || typeof value === 'number') return `the ${typeof value} ${String(value)}`;
  return typeof value;
}

/**
 * A subscriber rule: which articles an audience wants. Criteria of different kinds are combined
 * with AND; the values inside one criterion with OR. Exclusions win over everything.
 */
export const RuleSchema = z
  .strictObject({
    ruleId: identifier('ruleId'),
    audienceId: identifier('audienceId'),
    enabled: z._default(z.boolean({ error: 'enabled must be a boolean (BOOL)' }), true),
    description: z.optional(
      z
        .string()
        .check(
          z.maxLength(
            RULE_LIMITS.descriptionLength,
            `must be at most ${RULE_LIMITS.descriptionLength} characters; shorten it`,
          ),
        ),
    ),
    /** Exact, case-insensitive category codes or names; a trailing `*` matches by prefix (`002*`). */
    categories: z.optional(termList('categories')),
    excludeCategories: z.optional(termList('excludeCategories')),
    /** Any-of keywords over title and summary, case-insensitive; whole words in scripts written with spaces. */
    keywords: z.optional(termList('keywords')),
    excludeKeywords: z.optional(termList('excludeKeywords')),
    /**
     * A boolean query over title and summary (functions/core/query.ts), ANDed with the other
     * criteria: `(반도체 OR 메모리) AND 수출 -삼성`. Kept as written, so the columns of messages
     * point into what the ops person typed.
     */
    query: z.optional(
      z.string({ error: 'query must be a string' }).check(
        z.superRefine((value, ctx) => {
          const parsed = parseRuleQuery(value);
          if (parsed instanceof QuerySyntaxError) ctx.addIssue({ code: 'custom', message: parsed.message });
        }),
        // JSON Schema counts characters (code points), as the parser does; zod's maxLength would count UTF-16 units.
        z.meta({ description: QUERY_DESCRIPTION, maxLength: QUERY_LIMITS.length }),
      ),
    ),
    /** Media codes (or names) the rule is limited to. */
    media: z.optional(termList('media')),
    /** Article statuses the rule is limited to (open set, compared case-insensitively). */
    statuses: z.optional(termList('statuses')),
    /** Urgent matches bypass the audience's quiet hours. */
    urgent: z._default(z.boolean({ error: 'urgent must be a boolean (BOOL)' }), false),
    /** Must be true for a rule with no positive criterion, so an empty rule never floods anyone by accident. */
    matchAll: z._default(z.boolean({ error: 'matchAll must be a boolean (BOOL)' }), false),
    /**
     * Spike alerts (docs/spikes.md): one alert when the rule's new stories per hour jump far above
     * what is usual for that hour of the week, at a sensitivity preset. Absent or `off`: none.
     */
    spikes: z.optional(
      z
        .enum(['off', 'fewer', 'balanced', 'more'], {
          // What was found is named: `"Balanced"`, `" balanced "` and `true` look right in a console.
          error: (issue) =>
            `spikes must be "off", "fewer", "balanced" or "more" (see docs/spikes.md); got ${describeFound(issue.input)}`,
        })
        .check(
          z.meta({
            description:
              "Spike alerts: one alert per episode when the rule's new stories per hour (copies of a story count once) jump far above the usual for that hour of the week. fewer: only the largest jumps; balanced: the default choice; more: smaller jumps too. Absent or off: no spike alerts.",
          }),
        ),
    ),
    ...auditFields,
    /**
     * Written by `rules export`: a fingerprint of the stored rule the file was exported from
     * (ruleFingerprint, functions/core/workbench/rule-history.ts), so `rules put --file` refuses a
     * file made before the stored rule changed, an edit in the DynamoDB console included. The CLI
     * never stores it; ignored by the run.
     */
    fingerprint: z.optional(z.string({ error: 'fingerprint must be a string (as rules export writes it)' })),
  })
  .check(
    z.superRefine((rule, ctx) => {
      const positive = [rule.categories, rule.keywords, rule.media, rule.statuses].some(
        (list) => list !== undefined && list.length > 0,
      );
      const query = rule.query === undefined ? undefined : parseRuleQuery(rule.query);
      if (!positive && !rule.matchAll && query === undefined) {
        ctx.addIssue({
          code: 'custom',
          path: ['categories'],
          message:
            'the rule has no categories, keywords, media or statuses, so it would match every article; add a criterion or a query, or set matchAll to true',
        });
      } else if (!positive && !rule.matchAll && query !== undefined && !(query instanceof QuerySyntaxError)) {
        if (queryAnchors(query) === undefined) {
          ctx.addIssue({
            code: 'custom',
            path: ['query'],
            message:
              "the query has no term every match must contain (it only excludes, as NOT-only or 'a OR NOT b' queries do), so it would match almost every article; add a term it requires, another criterion (categories, keywords, media, statuses), or set matchAll to true",
          });
        }
      }
      for (const [index, category] of (rule.categories ?? []).entries()) {
        if (category.indexOf('*') !== -1 && category.indexOf('*') !== category.length - 1) {
          ctx.addIssue({
            code: 'custom',
            path: ['categories', index],
            message: `"${category}": '*' is only allowed at the end (prefix form, e.g. "002*")`,
          });
        }
      }
      for (const field of ['categories', 'excludeCategories'] as const) {
        for (const [index, category] of (rule[field] ?? []).entries()) {
          const prefix = category.endsWith('*') ? category.slice(0, -1) : '';
          // A lone '*' is the documented "any category"; an invisible prefix only looks like one.
          if (prefix.length > 0 && !hasVisibleCharacter(prefix)) {
            ctx.addIssue({
              code: 'custom',
              path: [field, index],
              message: `the prefix before '*' has no visible character (only ${listCodePoints(prefix)}); type the code (e.g. "002*"), or use a lone "*" for any category`,
            });
          }
        }
      }
    }),
  );
export type Rule = z.infer<typeof RuleSchema>;

/**
 * Quiet hours in the audience's time zone; `start` may be later than `end` (overnight, e.g.
 * 22:00-07:00). Equal times mean no quiet hours.
 */
export const QuietHoursSchema = z.strictObject({ start: clockTime, end: clockTime });

/**
 * The placeholders each ops-adjustable template may use. Anything else in braces is refused when
 * the audience item is validated, so a typo (`{headlin}`) is reported instead of reaching a
 * subscriber's inbox.
 */
export const TEMPLATE_PLACEHOLDERS = {
  /** Email subject of an immediate alert; must contain `{headline}`. */
  subject: ['audience', 'headline', 'media', 'category'],
  /** Email subject of a digest. */
  digestSubject: ['audience', 'count', 'articles', 'top', 'date', 'time'],
  /** Email footer (alerts and digests): how to change the subscription. */
  footer: ['audience', 'audienceId'],
} as const satisfies Record<string, readonly string[]>;

/** A template kind: see {@link TEMPLATE_PLACEHOLDERS}. */
export type TemplateName = keyof typeof TEMPLATE_PLACEHOLDERS;

const placeholder = /\{([^{}]*)\}/g;

const template = (name: TemplateName, options: { maxLength: number; multiline: boolean; required?: string }) =>
  z.string({ error: `templates.${name} must be a string` }).check(
    z.trim(),
    z.minLength(1, 'must not be empty'),
    z.maxLength(options.maxLength, `must be at most ${options.maxLength} characters`),
    z.superRefine((value, ctx) => {
      const allowed: readonly string[] = TEMPLATE_PLACEHOLDERS[name];
      const list = allowed.map((key) => `{${key}}`).join(', ');
      for (const [, key = ''] of value.matchAll(placeholder)) {
        if (!allowed.includes(key))
          ctx.addIssue({ code: 'custom', message: `unknown placeholder {${key}}; allowed: ${list}` });
      }
      if (/[{}]/.test(value.replace(placeholder, ''))) {
        ctx.addIssue({ code: 'custom', message: `braces only enclose placeholders (${list})` });
      }
      if (!options.multiline && /[\r\n]/.test(value)) {
        ctx.addIssue({ code: 'custom', message: 'must be one line' });
      }
      if (options.required !== undefined && !value.includes(`{${options.required}}`)) {
        ctx.addIssue({ code: 'custom', message: `must contain {${options.required}}` });
      }
    }),
  );

/**
 * Wording ops can adjust per audience (a map attribute `templates`). Every key is optional; what
 * is missing keeps the default. Placeholders are written `{name}` (see TEMPLATE_PLACEHOLDERS).
 *
 * - `subject`: default `[{audience}] {headline}`; the headline is cut at a word so the subject
 *   stays under 100 characters.
 * - `digestSubject`: default `[{audience}] {articles}: {top}` (`{articles}` is "12 articles",
 *   `{count}` the bare number, `{top}` the first headline, `{date}`/`{time}` the release time).
 * - `footer`: replaces the two lines at the end of every email that say why the address gets it
 *   and how to change that; the alert or digest id line always follows.
 */
const templateFields = {
  subject: z.optional(template('subject', { maxLength: 200, multiline: false, required: 'headline' })),
  digestSubject: z.optional(template('digestSubject', { maxLength: 200, multiline: false })),
  footer: z.optional(template('footer', { maxLength: 1000, multiline: true })),
};

/** Most translations one audience's `templates.locales` may hold. */
export const MAX_TEMPLATE_LOCALES = 20;

export const MessageTemplatesSchema = z.strictObject({
  ...templateFields,
  /**
   * The same templates per locale (`{"ko": {"footer": "..."}}`). A subscriber gets the first
   * entry along the audience's locale chain (`ko-KR → ko → defaultLocale → en`), then the
   * locale-neutral template above, then the built-in wording (functions/core/locale.ts).
   */
  locales: z.optional(
    z.record(z.string(), z.strictObject(templateFields)).check(
      z.superRefine((byLocale, ctx) => {
        const tags = Object.keys(byLocale);
        if (tags.length > MAX_TEMPLATE_LOCALES) {
          ctx.addIssue({ code: 'custom', message: `at most ${MAX_TEMPLATE_LOCALES} locales; found ${tags.length}` });
        }
        for (const tag of tags) {
          if (!isSupportedLocale(tag)) {
            ctx.addIssue({
              code: 'custom',
              path: [tag],
              message: 'each key must be a BCP 47 locale this runtime supports, such as "ko", "en" or "ja-JP"',
            });
          }
        }
      }),
    ),
  ),
});
/** Validated templates of an audience. */
export type MessageTemplates = z.infer<typeof MessageTemplatesSchema>;

const locale = z
  .string()
  .check(
    z.refine(isSupportedLocale, 'must be a BCP 47 locale this runtime supports, such as "en-GB", "ko-KR" or "ja-JP"'),
  );

/** Who receives a set of alerts: one SNS topic and its subscribers, plus delivery preferences. */
export const AudienceSchema = z.strictObject({
  audienceId: identifier('audienceId'),
  /** Display name used in subjects and digests. */
  name: z.optional(
    z
      .string()
      .check(z.minLength(1, 'must not be empty'), z.maxLength(100, 'must be at most 100 characters; shorten it')),
  ),
  topicArn: z
    .string({ error: 'topicArn must be a string' })
    .check(z.regex(/^arn:aws[a-z-]*:sns:[a-z0-9-]+:\d{12}:[A-Za-z0-9_-]{1,256}$/, 'topicArn must be an SNS topic ARN')),
  enabled: z._default(z.boolean({ error: 'enabled must be a boolean (BOOL)' }), true),
  /** Time zone for times shown in messages, quiet hours, digests and the daily budget. */
  timeZone: z._default(timeZone, 'UTC'),
  /** `immediate` sends each alert as it matches; `digest` collects them for the digest times. */
  deliveryMode: z._default(z.enum(['immediate', 'digest']), 'immediate'),
  /** Local times at which a digest is sent (digest mode, and for held or over-budget alerts). */
  digestTimes: z.pipe(
    // A string set has no order: its times are taken in time order.
    z.transform((value: unknown) => (value instanceof Set ? [...value].sort() : value)),
    z._default(
      z
        .array(clockTime, {
          error: (issue) =>
            issue.code === 'invalid_type'
              ? 'digestTimes must be a list (L) or string set (SS) of times such as "08:00"'
              : undefined,
        })
        .check(
          z.minLength(1, 'needs at least one time such as "08:00"'),
          z.maxLength(24, 'at most 24 digest times a day'),
        ),
      ['08:00'],
    ),
  ),
  quietHours: z.optional(QuietHoursSchema),
  /** Categories (same forms as rule categories) that bypass quiet hours. */
  urgentCategories: z.optional(termList('urgentCategories')),
  /** Maximum immediate alerts per local day; overflow goes to the next digest as "+N more". */
  dailyBudget: z.optional(
    z
      .number({ error: 'dailyBudget must be a number (N)' })
      .check(
        z.int('must be a whole number'),
        z.positive('must be at least 1'),
        z.lte(100_000, 'must be at most 100000'),
      ),
  ),
  /** Maximum SMS segments per alert. */
  smsMaxSegments: z._default(
    z
      .number({ error: 'smsMaxSegments must be a number (N)' })
      .check(z.int('must be a whole number'), z.gte(1, 'must be at least 1'), z.lte(10, 'must be at most 10')),
    1,
  ),
  /** Locale of dates in messages (`ko-KR`: `2025년 3월 14일 (금) 22:30`); default `en-US`. */
  locale: z.optional(locale),
  /** Subject and footer wording (see {@link MessageTemplatesSchema}). */
  templates: z.optional(MessageTemplatesSchema),
  /**
   * `story`: one alert per story, copies of it from other outlets are recorded as collapsed and
   * not sent; `none`: every copy is its own alert. An item without the attribute (every audience
   * written before stories existed) keeps `none`, so an upgrade changes nothing; the CLI writes
   * `story` for new audiences.
   */
  collapse: z._default(z.enum(['story', 'none'], { error: 'collapse must be "story" or "none"' }), 'none'),
  /**
   * What happens when an article the audience already has comes back with another status or a
   * changed title: `ignore` (nothing), or `notify` (one clearly marked update notice per story and
   * status, sent at once).
   */
  updates: z._default(z.enum(['ignore', 'notify'], { error: 'updates must be "ignore" or "notify"' }), 'ignore'),
  ...auditFields,
});
export type Audience = z.infer<typeof AudienceSchema>;

/** A rule or audience item that failed validation: skipped, logged with its key, counted. */
export interface RejectedItem {
  readonly table: 'rules' | 'audiences';
  /** The item's key as far as it could be read (`ruleId`/`audienceId`), or `<missing key>`. */
  readonly key: string;
  readonly reason: string;
}

/**
 * An attribute of a stored item that could not be decoded at all (a value that is no DynamoDB
 * type, nesting deeper than DynamoDB allows, a name such as `__proto__` that no item may carry).
 * The table adapter leaves such an attribute out of the item and lists it under
 * {@link unreadableAttributes}, so validation rejects the item with this reason instead of the
 * read failing for every item.
 */
export interface UnreadableAttribute {
  /** The top-level attribute name. */
  readonly attribute: string;
  /** Where inside it, as printed: `quietHours.start`, `keywords[3]`, `"__proto__"`. */
  readonly path: string;
  readonly reason: string;
}

/**
 * The key under which an item read from a table carries its {@link UnreadableAttribute}s. A
 * symbol: never an attribute name, skipped by schemas and JSON, but kept by `{ ...item }`, so a
 * copy of an unreadable item stays unreadable.
 */
export const unreadableAttributes: unique symbol = Symbol('news-alerts.unreadableAttributes');

/** The unreadable attributes recorded on `item`, if any. */
export function unreadableAttributesOf(item: unknown): readonly UnreadableAttribute[] {
  if (typeof item !== 'object' || item === null) return [];
  const recorded = (item as { [unreadableAttributes]?: unknown })[unreadableAttributes];
  return Array.isArray(recorded) ? (recorded as UnreadableAttribute[]) : [];
}

/** The validated rules and audiences for one run. */
export interface RuleSet {
  readonly rules: readonly Rule[];
  readonly audiences: readonly Audience[];
  readonly rejected: readonly RejectedItem[];
}

/**
 * Formats a schema failure as one line per problem: `categories[2]: must not be empty`. An
 * unknown attribute is named with the attribute it most likely meant, because a typo such as
 * `keyword` for `keywords` is the most common console mistake: among `knownKeys` at the top of the
 * item, among the names `schema` allows inside an attribute (`quietHours: start, end`). A missing
 * value says so, and, for an item (`schema` given), a NULL says how to clear the attribute.
 */
export function describeIssues(
  error: z.core.$ZodError,
  knownKeys: readonly string[] = [],
  schema?: z.core.$ZodType,
): string {
  return describeIssueList(error, knownKeys, schema).join('; ');
}

/** {@link describeIssues}, one problem per entry (an unknown attribute each, in the issue's key order). */
export function describeIssueList(
  error: z.core.$ZodError,
  knownKeys: readonly string[],
  schema: z.core.$ZodType | undefined,
): string[] {
  return error.issues.flatMap((issue) => {
    const path = issue.path
      .map((part, index) => (typeof part === 'number' ? `[${part}]` : index === 0 ? String(part) : `.${String(part)}`))
      .join('');
    // Inside an attribute (`quietHours: {from: …}`), the names allowed there, not the item's.
    const allowed = issue.path.length === 0 ? knownKeys : schema === undefined ? [] : objectKeysAt(schema, issue.path);
    if (issue.code === 'unrecognized_keys') {
      return issue.keys.map((key) => {
        const message = describeUnknownKey(key, allowed);
        return path ? `${path}: ${message}` : message;
      });
    }
    const message =
      issue.code === 'invalid_type' && issue.message.endsWith('received undefined')
        ? 'is missing'
        : // Advice for an item edited by hand (parseItem and the CLI pass its schema), not for a message.
          schema !== undefined && issue.code === 'invalid_type' && issue.message.endsWith('received null')
          ? `${plainWords(issue.message)}; to clear it, remove the attribute instead of setting it to NULL`
          : plainWords(issue.message);
    // A message that names its attribute ('enabled must be a boolean') is not prefixed with
    // the name a second time; nested paths keep their location.
    const named = issue.path.length === 1 && message.startsWith(`${String(issue.path[0])} `);
    return [path && !named ? `${path}: ${message}` : message];
  });
}

/** Zod's own wording of a wrong type or value, which the schemas' messages do not replace. */
const ZOD_WRONG_TYPE = /^Invalid input: expected (\w+), received (\S+)$/;
const ZOD_WRONG_OPTION = /^Invalid option: expected one of (.+)$/;
/** Types as people who edit an item or a file know them (DynamoDB and YAML alike). */
const expectedWords: Readonly<Record<string, string>> = {
  string: 'text',
  number: 'a number',
  int: 'a whole number',
  boolean: 'true or false',
  object: 'a map',
  record: 'a map',
  array: 'a list',
};
const receivedWords: Readonly<Record<string, string>> = {
  ...expectedWords,
  boolean: 'a boolean',
  null: 'NULL',
  Set: 'a set',
  Date: 'a date',
  Uint8Array: 'binary data',
};

/**
 * Zod's default messages in the words a person editing the item reads: `Invalid input: expected
 * string, received number` is `must be text, not a number`; `Invalid option: expected one of
 * "immediate"|"digest"` is `must be "immediate" or "digest"`. Any other message is kept.
 */
function plainWords(message: string): string {
  const type = ZOD_WRONG_TYPE.exec(message);
  if (type !== null) {
    const [, expected = '', received = ''] = type;
    // A number that is not whole: "must be a whole number, not a number" would contradict itself.
    if (expected === 'int' && received === 'number') return 'must be a whole number';
    return `must be ${expectedWords[expected] ?? expected}, not ${receivedWords[received] ?? received}`;
  }
  const option = ZOD_WRONG_OPTION.exec(message);
  if (option !== null) {
    const values = (option[1] ?? '').split('|');
    return `must be ${values.length === 2 ? values.join(' or ') : `one of ${values.join(', ')}`}`;
  }
  return message;
}

/**
 * The attribute names of the object `schema` holds at `path` (through optional, default, pipe and
 * list wrappers), or none when there is no object there.
 */
function objectKeysAt(schema: z.core.$ZodType, path: readonly PropertyKey[]): readonly string[] {
  let current: z.core.$ZodType | undefined = schema;
  let index = 0;
  for (let guard = 0; current !== undefined && guard < 64; guard += 1) {
    const def = current._zod.def as unknown as Record<string, unknown> & { type: string };
    const inner = (def.innerType ?? (def.type === 'pipe' ? def.in : undefined)) as z.core.$ZodType | undefined;
    if (inner !== undefined) {
      current = inner;
      continue;
    }
    const part = path[index];
    if (def.type === 'object') {
      const shape = def.shape as Record<string, z.core.$ZodType>;
      if (part === undefined) return Object.keys(shape);
      current = typeof part === 'string' && Object.hasOwn(shape, part) ? shape[part] : undefined;
    } else if (def.type === 'array' && typeof part === 'number') {
      current = def.element as z.core.$ZodType;
    } else {
      return [];
    }
    index += 1;
  }
  return [];
}

/**
 * An attribute name as messages print it: in JSON quotes, so control characters, quotes and
 * lone surrogates are escaped, and cut after 64 characters (DynamoDB allows 64 KB names).
 */
export function quoteAttributeName(name: string): string {
  return name.length > 64 ? `${JSON.stringify(name.slice(0, 64)).slice(0, -1)}…"` : JSON.stringify(name);
}

function describeUnknownKey(key: string, knownKeys: readonly string[]): string {
  const folded = key.toLowerCase();
  // A long name is no typo of a short one (and would make the edit distance slow).
  const suggestion =
    key.length > 64
      ? undefined
      : knownKeys.find((known) => {
          const candidate = known.toLowerCase();
          return candidate === `${folded}s` || `${candidate}s` === folded || editDistance(candidate, folded) <= 2;
        });
  const name = quoteAttributeName(key);
  if (suggestion) return `unknown attribute ${name} (did you mean "${suggestion}"?)`;
  return knownKeys.length > 0
    ? `unknown attribute ${name}; allowed: ${knownKeys.join(', ')}`
    : `unknown attribute ${name}`;
}

/** Levenshtein distance of two short strings (attribute names; the CLI's "did you mean" for ids). */
export function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, index) => index);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const substitution = (previous[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1);
      current.push(Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, substitution));
    }
    previous = current;
  }
  return previous[b.length] ?? 0;
}

/**
 * A parsed item, or why it was rejected: `reasons` are the problems `rejected.reason` joins, each
 * alone with its advice (which follows `; ` too, so the joined reason cannot be split back).
 */
type Parsed<T> = { ok: true; value: T } | { ok: false; rejected: RejectedItem; reasons: readonly string[] };

function parseItem<T>(
  schema: z.ZodMiniType<T>,
  knownKeys: readonly string[],
  table: RejectedItem['table'],
  keyName: string,
  item: unknown,
): Parsed<T> {
  const raw =
    typeof item === 'object' && item !== null && Object.hasOwn(item, keyName)
      ? (item as Record<string, unknown>)[keyName]
      : undefined;
  const key = typeof raw === 'string' && raw.length > 0 ? raw : '<missing key>';
  const reject = (reasons: readonly string[]): Parsed<T> => ({
    ok: false,
    rejected: { table, key, reason: reasons.join('; ') },
    reasons,
  });
  const unreadable = unreadableAttributesOf(item);
  const reasons = unreadable.map((entry) => `${entry.path}: ${entry.reason}`);
  // What the schema says about the rest is worth adding only when no attribute the schema knows
  // was left out: otherwise "no criteria" for a rule whose unreadable keywords were dropped
  // would point at the wrong fix.
  if (unreadable.some((entry) => knownKeys.includes(entry.attribute))) return reject(reasons);
  let result: ReturnType<z.ZodMiniType<T>['safeParse']>;
  try {
    result = schema.safeParse(item);
  } catch (error) {
    // safeParse reports rather than throws; this is the promise that one item can never stop
    // the others even if a refinement meets a value nobody thought of.
    return reject([...reasons, `could not be validated (${(error as Error).message})`]);
  }
  if (result.success && reasons.length === 0) return { ok: true, value: result.data };
  if (!result.success) reasons.push(...describeIssueList(result.error, knownKeys, schema));
  return reject(reasons);
}

/** The key `rules explain` gives an article described by its text (`--title`, a file without a key). */
export const DESCRIBED_ARTICLE_KEY = 'given:article';

/** Attribute names a rule item may have. */
export const ruleAttributes: readonly string[] = Object.keys(RuleSchema.shape);
/** Attribute names an audience item may have. */
export const audienceAttributes: readonly string[] = Object.keys(AudienceSchema.shape);

/** Validates one rule item as read from DynamoDB (or a CLI file). */
export const parseRule = (item: unknown): Parsed<Rule> =>
  parseItem(RuleSchema, ruleAttributes, 'rules', 'ruleId', item);

/** Validates one audience item as read from DynamoDB (or a CLI file). */
export const parseAudience = (item: unknown): Parsed<Audience> =>
  parseItem(AudienceSchema, audienceAttributes, 'audiences', 'audienceId', item);

/**
 * Validates all items and drops rules whose audience is missing or disabled, so one bad item
 * never stops the others.
 */
export function buildRuleSet(ruleItems: readonly unknown[], audienceItems: readonly unknown[]): RuleSet {
  const rejected: RejectedItem[] = [];
  const audiences: Audience[] = [];
  const seenAudiences = new Set<string>();
  for (const item of audienceItems) {
    const parsed = parseAudience(item);
    if (!parsed.ok) rejected.push(parsed.rejected);
    else if (seenAudiences.has(parsed.value.audienceId)) {
      rejected.push({ table: 'audiences', key: parsed.value.audienceId, reason: 'duplicate audienceId' });
    } else {
      seenAudiences.add(parsed.value.audienceId);
      audiences.push(parsed.value);
    }
  }
  const activeAudiences = new Set(audiences.filter((a) => a.enabled).map((a) => a.audienceId));
  const rules: Rule[] = [];
  for (const item of ruleItems) {
    const parsed = parseRule(item);
    if (!parsed.ok) {
      rejected.push(parsed.rejected);
      continue;
    }
    const rule = parsed.value;
    if (!seenAudiences.has(rule.audienceId)) {
      // An audience that exists but is invalid is named as such: "create it" sent ops to a
      // create that refused ("already exists").
      const invalid = rejected.find((entry) => entry.table === 'audiences' && entry.key === rule.audienceId);
      rejected.push({
        table: 'rules',
        key: rule.ruleId,
        reason:
          invalid === undefined
            ? `audienceId: no valid audience "${rule.audienceId}" exists; create it or fix the rule's audienceId`
            : `audienceId: audience "${rule.audienceId}" is invalid (${invalid.reason}), so the run skips its rules; fix the audience`,
      });
    } else if (rule.enabled && activeAudiences.has(rule.audienceId)) {
      rules.push(rule);
    }
  }
  return { rules, audiences, rejected };
}
