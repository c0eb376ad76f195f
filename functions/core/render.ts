/**
 * Turns one audience match into the SNS message its subscribers receive: one `MessageStructure:
 * json` document with a body per distinct rendering: `email`, `sms`, and the structured JSON
 * document under `default`, which SNS hands to every protocol without a key of its own (`https`,
 * `http`, `sqs`, `lambda`, `email-json`, `firehose`), as digests do (digest.ts). Each distinct body
 * is in the document once (but see {@link KEYED_STRUCTURED_PROTOCOLS}): the message is most of what
 * the SDK URL-encodes and signs per notification.
 *
 * Rendering happens in two steps, so digests (digest.ts) reuse the same normalization and the
 * same channel rules:
 *
 * 1. {@link buildAlertView} normalizes and trims everything once (single-line headline, summary
 *    cut at a word, categories paired with their names, time in the audience's zone and locale,
 *    matches, the audience's templates);
 * 2. the channel renderers ({@link renderChannelBodies}) only lay that view out, and
 *    {@link encodeMessageStructure} assembles the SNS document and enforces the size limit.
 *
 * Every fixed word comes from the message catalog of the audience's language
 * (functions/core/messages/): the locale chain of `audience.locale` (else the stack's
 * `defaultLocale`) picks the language (functions/core/locale.ts), the full tag formats dates and
 * counts. The catalog and the audience's templates are resolved once per audience and locale
 * ({@link audienceViewOf}), not per notification. The structured JSON keeps English keys and names
 * the locale it was written for (`newsAlerts.locale`).
 *
 * Ops adjust the wording per audience with `templates` (model.ts), per locale if they like
 * (`templates.locales`): the email subject and the email footer; {@link fillTemplate} fills their
 * `{placeholders}`.
 *
 * Update notices ({@link renderUpdateNotice}, audience setting `updates: notify`) are alerts of the
 * article as it reads now, marked as updates on every channel (the catalog's prefix, a first line
 * that says what changed, `newsAlerts.update`) and sent under their own delivery id.
 *
 * Everything here is pure: no clock, no I/O.
 */
import { Buffer } from 'node:buffer';
import { DateTime } from 'luxon';
import { BoundedCache } from './bounded-cache.ts';
import { zoneReader } from './calendar.ts';
import { NewsAlertsError } from './errors.ts';
import type { ArticleChange } from './ledger-facts.ts';
import { FALLBACK_LOCALE, localeChain, messageLocale, resolveTemplate } from './locale.ts';
import {
  describeReasonIn,
  describeUpdate,
  ENGLISH,
  type Messages,
  messagesFor,
  type UpdateFacts,
} from './messages/catalog.ts';
import type { Article, Audience, AudienceMatch, MatchReason, TemplateName } from './model.ts';
import { type DeliveryKey, deliveryId, type OutboundMessage } from './ports.ts';
import type { AlertDocument } from './published-document.ts';
import { fitsSms, isGsm7, toGsmFriendly } from './sms.ts';
import { type ArticleLink, displayText, publishableLink } from './text.ts';

/** SNS's limit for one message (and for a whole PublishBatch), in UTF-8 bytes. */
export const SNS_MAX_MESSAGE_BYTES = 262_144;

/** Longest email subject, in UTF-16 code units, so it is "less than 100 characters" however SNS counts. */
export const SUBJECT_MAX_LENGTH = 99;

/** `metadata.eventType` of the structured body. */
export const ALERT_EVENT_TYPE = 'news-alerts.article-matched';

/** Version of the `newsAlerts` part of the structured body; bumped on breaking changes only. */
export const ALERT_SCHEMA_VERSION = 1;

/** Protocols that receive the structured JSON document. */
export const STRUCTURED_PROTOCOLS = ['https', 'http', 'sqs', 'lambda', 'email-json', 'firehose'] as const;

/**
 * Structured protocols that still get a copy of `default` under their own key, although SNS would
 * hand them `default` anyway: readers outside the publishing path pick these keys by name instead
 * of `key ?? default` (cli/preview.ts reads `https`; cli/replay.ts and test/support/sns-faults.ts
 * read `sqs`; relay and sanitizer tests read `lambda`). Each entry costs one more copy of the
 * largest body per message; drop it once its readers fall back to `default`.
 */
export const KEYED_STRUCTURED_PROTOCOLS = [] as const satisfies readonly (typeof STRUCTURED_PROTOCOLS)[number][];

/** Every key of the `MessageStructure: json` document this module writes. */
export const MESSAGE_PROTOCOL_KEYS = ['default', 'email', 'sms', ...KEYED_STRUCTURED_PROTOCOLS] as const;
/** A key of the `MessageStructure: json` document. */
export type MessageProtocolKey = (typeof MESSAGE_PROTOCOL_KEYS)[number];

// --- Errors -------------------------------------------------------------------------------------

/** A match cannot be rendered (wrong audience, unusable article data). */
export class NotificationRenderError extends NewsAlertsError {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'NotificationRenderError';
  }
}

/**
 * The article's link may not be published (see {@link publishableLink}): not a public `https:` or
 * `http:` address, credentials in it, or absurdly long. The alert is not sent with it; the
 * delivery pipeline parks the link-less rendering for review (see {@link renderParkedNotification}).
 *
 * Why parked rather than sent without the link: subscribers act on the link (an SMS is the
 * headline and the link, nothing else), so a link-less alert is not what they expect, and a
 * provider that sends a link to the metadata service, to localhost or with credentials is broken
 * or hostile: its headline deserves a person's look before it reaches anyone. Ops get the
 * `notifications-parked` alarm and send the link-less alert with `news-alerts replay --parked`
 * when it is genuine. Why not cut the link: a cut URL leads somewhere else (DESIGN section 5).
 */
export class UnpublishableLinkError extends NotificationRenderError {
  constructor(articleKey: string, reason: string, options?: ErrorOptions) {
    super(`article ${articleKey}: ${reason}`, options);
    this.name = 'UnpublishableLinkError';
  }
}

/** Even the most compact rendering exceeds SNS's message size limit. */
export class MessageTooLargeError extends NotificationRenderError {
  readonly bytes: number;
  readonly limit: number;
  constructor(what: string, bytes: number, limit: number, options?: ErrorOptions) {
    super(`${what} is ${bytes} bytes in UTF-8, over the SNS limit of ${limit} bytes`, options);
    this.name = 'MessageTooLargeError';
    this.bytes = bytes;
    this.limit = limit;
  }
}

// --- The structured body --------------------------------------------------------------------------

/**
 * The structured body is sent to `https`, `http`, `sqs`, `lambda`, `email-json` and `firehose`
 * subscribers: an Amazon Q Developer in chat applications custom notification (`version`, `source`,
 * `content`, `metadata`), so a topic mapped to a chat channel shows it without code, plus a
 * versioned `newsAlerts` part for programs. Its fields are described, strictly, in
 * published-document.ts (docs/schemas/structured-body.schema.json is generated from there).
 *
 * Consumers must de-duplicate on `newsAlerts.deliveryId` (`<audienceId>|<articleKey>`): delivery is
 * at least once (an SNS retry, or a crash between publishing and recording the delivery), and the
 * same id always means the same article for the same audience.
 */
export type { AlertDocument };

// --- Text helpers ---------------------------------------------------------------------------------

/**
 * The segmenters, made on first use: the first `Intl.Segmenter` of a process loads ICU's break
 * rules (about 2.5 ms of CPU here once ICU has started), and a run renders only after it has read
 * a page, so that cost comes after the cold start's first provider request instead of before it.
 * Made once, then shared.
 */
let segmenters: { readonly grapheme: Intl.Segmenter; readonly word: Intl.Segmenter } | undefined;
const segmenterOf = (granularity: 'grapheme' | 'word'): Intl.Segmenter => {
  segmenters ??= {
    grapheme: new Intl.Segmenter(undefined, { granularity: 'grapheme' }),
    word: new Intl.Segmenter(undefined, { granularity: 'word' }),
  };
  return segmenters[granularity];
};

/**
 * One line of text people see: sanitized by {@link displayText} (no bidi controls, no invisible
 * characters, valid UTF-8), then every run of whitespace, line/paragraph separators and control
 * characters becomes one space.
 */
export const singleLine = (text: string): string =>
  displayText(text)
    .replace(/[\s\p{Cc}\p{Zl}\p{Zp}]+/gu, ' ')
    .trim();

/**
 * The longest prefix of whole graphemes that is at most `maxUnits` UTF-16 code units: up to where
 * the grapheme holding unit `maxUnits` (the first one past the limit) starts. ICU finds that one
 * grapheme's bounds from a safe point nearby, with the same boundaries as segmenting from the
 * start; walking every grapheme up to the limit instead was a tenth of rendering an alert.
 * Exported for its test only.
 * @internal
 */
export function clipUnits(text: string, maxUnits: number): string {
  if (text.length <= maxUnits) return text;
  if (maxUnits <= 0) return '';
  return text.slice(0, segmenterOf('grapheme').segment(text).containing(maxUnits)?.index ?? 0);
}

/**
 * Where a text may be cut: after each grapheme, and (found only when a grapheme cut exists) before
 * each run of spaces and after each word.
 */
interface TextCuts {
  readonly text: string;
  readonly graphemeEnds: readonly number[];
  words?: { readonly spaceStarts: readonly number[]; readonly wordEnds: readonly number[] };
}

/**
 * Cuts of recently trimmed texts. One headline is trimmed once per audience that gets it (the
 * subject's room depends on the audience's label and template), and segmenting it was a fifth of
 * rendering a notification; the cuts depend on the text alone. Bounded in entries and in text
 * length, so hostile text cannot make it large.
 */
const textCuts = new BoundedCache<string, TextCuts>(512);
/** Longer than any text a view holds (VIEW_LIMITS: 1,000 units at most), so hostile text stays out. */
const TEXT_CUTS_MAX_UNITS = 1024;

/** Empties the cache of cuts, for its test only. @internal */
export const forgetTextCuts = (): void => textCuts.clear();

const cutsOf = (text: string): TextCuts =>
  text.length <= TEXT_CUTS_MAX_UNITS ? textCuts.get(text, segmentCuts) : segmentCuts(text);

/** The grapheme cuts of `text` (its word cuts are found when first needed, {@link wordCutsOf}). */
function segmentCuts(text: string): TextCuts {
  const graphemeEnds: number[] = [];
  for (const { index, segment } of segmenterOf('grapheme').segment(text)) graphemeEnds.push(index + segment.length);
  return { text, graphemeEnds };
}

function wordCutsOf(cuts: TextCuts): NonNullable<TextCuts['words']> {
  if (cuts.words !== undefined) return cuts.words;
  const spaceStarts: number[] = [];
  const wordEnds: number[] = [];
  for (const { index, segment } of segmenterOf('word').segment(cuts.text)) {
    if (/^\s+$/u.test(segment)) spaceStarts.push(index);
    else wordEnds.push(index + segment.length);
  }
  cuts.words = { spaceStarts, wordEnds };
  return cuts.words;
}

// Characters that look wrong right before an ellipsis ("rates, …", "Seoul (…").
const DANGLING = '\\s,;:\\-\u2013\u2014\u00B7/|(\\[{\u201C\u2018\u00AB\u300C\u300E\u3001\u3002\u30FB';
const danglingEnd = new RegExp(`[${DANGLING}]+$`, 'u');
const contentChar = new RegExp(`[^${DANGLING}]`, 'u');

/**
 * Whether `text` holds a character {@link trimToFit} keeps before an ellipsis, not only spaces and
 * the punctuation that looks wrong there (`,` `(` `|` …). Exported for tests' oracles only.
 * @internal
 */
export const hasContentChar = (text: string): boolean => contentChar.test(text);

/**
 * Shortens `text` so that `fits` accepts it, cutting at a word and appending an ellipsis. Prefers a
 * cut at a space; falls back to a word boundary (Japanese and Chinese have no spaces) and finally
 * to a grapheme boundary when the word cut would throw away too much (one very long token). Never
 * splits a surrogate pair or a grapheme (emoji with modifiers, Hangul jamo sequences).
 *
 * `fits` must be monotonic: if a string fits, every shorter prefix of it fits too.
 *
 * @returns `text` unchanged when it fits; otherwise the cut text with its ellipsis, or `''` when
 *          not even one grapheme plus the ellipsis fits.
 */
export function trimToFit(
  text: string,
  fits: (candidate: string) => boolean,
  ellipsis: string | ((prefix: string) => string) = '\u2026',
): string {
  if (fits(text)) return text;
  const firstContent = text.search(contentChar);
  if (firstContent === -1) return '';
  const ellipsisFor = typeof ellipsis === 'string' ? () => ellipsis : ellipsis;
  const attempt = (cut: number): string | undefined => {
    const prefix = text.slice(0, cut).replace(danglingEnd, '');
    const candidate = prefix + ellipsisFor(prefix);
    return fits(candidate) ? candidate : undefined;
  };
  const longest = (cuts: readonly number[]): string | undefined => {
    // Cuts before the first real character would leave only punctuation: never candidates.
    const usable = cuts.filter((cut) => cut > firstContent && cut < text.length);
    let low = 0;
    let high = usable.length - 1;
    let best: string | undefined;
    while (low <= high) {
      const middle = (low + high) >> 1;
      const candidate = attempt(usable[middle] ?? 0);
      if (candidate === undefined) high = middle - 1;
      else {
        best = candidate;
        low = middle + 1;
      }
    }
    return best;
  };
  const cuts = cutsOf(text);
  const byGrapheme = longest(cuts.graphemeEnds);
  if (byGrapheme === undefined) return '';
  const { spaceStarts, wordEnds } = wordCutsOf(cuts);
  // A word cut may lose at most ~40% of what a hard cut would keep; beyond that the hard cut
  // carries more information than a tidy but nearly empty headline.
  const acceptable = (candidate: string | undefined) =>
    candidate !== undefined && candidate.length >= 0.6 * byGrapheme.length;
  const bySpace = longest(spaceStarts);
  if (bySpace !== undefined && acceptable(bySpace)) return bySpace;
  const byWord = longest(wordEnds);
  if (byWord !== undefined && acceptable(byWord)) return byWord;
  return byGrapheme;
}

/** Cuts `text` at a word to at most `maxUnits` UTF-16 code units, ellipsis included. */
export function truncateText(text: string, maxUnits: number): string {
  if (text.length <= maxUnits) return text;
  if (maxUnits <= 0) return '';
  // Only the head can survive; segmenting a 100 kB summary in full would be wasted work.
  const head = clipUnits(text, maxUnits + 16);
  // The head alone is never an answer: it lost its tail to the clip, so it needs an ellipsis too.
  return trimToFit(head, (candidate) => candidate.length <= maxUnits && candidate !== head);
}

/** Size of a text in UTF-8 bytes, as SNS counts its limit. */
export const utf8Bytes = (text: string): number => Buffer.byteLength(text, 'utf8');

/** `<` and `>` start links and mentions in Slack markup: a headline must never ping `<!channel>`. */
export const chatSafe = (text: string): string => text.replace(/</g, '\u2039').replace(/>/g, '\u203A');

/**
 * Fills a template's `{placeholders}` (validated by the audience schema) with single-line values;
 * an unknown or missing placeholder becomes empty text. Runs of spaces left by empty values are
 * collapsed only in single-line output (`multiline: false`).
 */
export function fillTemplate(
  template: string,
  values: Readonly<Record<string, string | undefined>>,
  options: { readonly multiline?: boolean } = {},
): string {
  const filled = template.replace(/\{([^{}]*)\}/g, (_whole, key: string) => values[key] ?? '');
  if (!options.multiline) return singleLine(filled);
  // Line breaks stay; other control characters (a pasted tab, a stray BEL), invisible and bidi
  // characters (displayText) and trailing blanks go.
  return displayText(filled.replace(/\r\n?/g, '\n'))
    .replace(/[^\P{Cc}\n]|[\p{Zl}\p{Zp}]/gu, ' ')
    .replace(/[ ]+$/gm, '')
    .trim();
}

/** The email subject of an alert when the audience has no `templates.subject` (English; every catalog has its own). */
export const DEFAULT_SUBJECT_TEMPLATE = ENGLISH.templates.subject;

/** The email footer when the audience has no `templates.footer` (English; every catalog has its own). */
export const DEFAULT_FOOTER_TEMPLATE = ENGLISH.templates.footer;

// --- The view model -------------------------------------------------------------------------------

/** How much of the match a rendering keeps; smaller tiers are tried when a message is too large. */
export interface ViewLimits {
  readonly titleUnits: number;
  readonly summaryUnits: number;
  readonly maxCategories: number;
  readonly categoryUnits: number;
  readonly maxRules: number;
  readonly maxReasonsPerRule: number;
  readonly descriptionUnits: number;
  readonly termUnits: number;
}

/**
 * Standard, compact and minimal renderings. A realistic alert always fits the first (a few kB);
 * the others exist so that an audience with hundreds of matching rules, or a rule with hundreds
 * of matching keywords, still gets its alert instead of a permanent publish failure.
 */
export const VIEW_LIMITS: readonly ViewLimits[] = [
  {
    titleUnits: 500,
    summaryUnits: 1000,
    maxCategories: 20,
    categoryUnits: 100,
    maxRules: 50,
    maxReasonsPerRule: 20,
    descriptionUnits: 500,
    termUnits: 200,
  },
  {
    titleUnits: 300,
    summaryUnits: 300,
    maxCategories: 10,
    categoryUnits: 60,
    maxRules: 10,
    maxReasonsPerRule: 5,
    descriptionUnits: 200,
    termUnits: 100,
  },
  {
    titleUnits: 200,
    summaryUnits: 0,
    maxCategories: 5,
    categoryUnits: 40,
    maxRules: 3,
    maxReasonsPerRule: 3,
    descriptionUnits: 100,
    termUnits: 50,
  },
];

/** One matching rule as shown to people. */
export interface MatchView {
  readonly ruleId: string;
  readonly description?: string | undefined;
  readonly urgent: boolean;
  readonly reasons: readonly MatchReason[];
  readonly omittedReasons: number;
}

/** Everything every channel needs to show one alert, already normalized, trimmed and formatted. */
export interface AlertView {
  readonly deliveryId: string;
  readonly audience: {
    readonly id: string;
    readonly name?: string | undefined;
    /** Name when set, otherwise the id, single line, at most 40 characters. */
    readonly label: string;
    readonly timeZone: string;
    readonly smsMaxSegments: number;
    /** The effective locale (BCP 47): dates and counts are formatted in it. */
    readonly locale: string;
    /** The words: the catalog of the first language along the locale chain that has one. */
    readonly messages: Messages;
    /** The templates along the locale chain (`templates.locales`, `templates`), else the catalog's. */
    readonly wording: Readonly<Record<TemplateName, string>>;
  };
  readonly article: {
    readonly key: string;
    readonly id?: string | undefined;
    /** Single line, never empty. */
    readonly title: string;
    /** Single paragraph, cut at a word; may be empty. */
    readonly summary: string;
    /** The link as published (WHATWG form); `''` when it was withheld (`linkPolicy: 'omit'`) or none was given. */
    readonly url: string;
    /** The provider gave a link that may not be published (`url` is then `''`): the text says so. */
    readonly linkWithheld: boolean;
    readonly publishedAt: number;
    readonly publishedAtIso: string;
    /** Publication time in the audience's zone, with the zone: `Fri, Mar 14, 2025, 09:30 (Asia/Seoul, UTC+09:00)`. */
    readonly publishedLocal: string;
    /** Codes as the provider sent them (capped). */
    readonly categories: readonly string[];
    /** Names as the provider sent them (capped). */
    readonly categoryNames: readonly string[];
    /** What to show people: names paired with codes when the provider sent both. */
    readonly categoryLabels: readonly string[];
    readonly media?: string | undefined;
    readonly mediaName?: string | undefined;
    /** Name when known, otherwise the code. */
    readonly mediaLabel?: string | undefined;
    readonly status?: string | undefined;
  };
  readonly matches: readonly MatchView[];
  /** Matching rules not listed in `matches` (size limit); `ruleIds` still has them all. */
  readonly omittedMatches: number;
  readonly ruleIds: readonly string[];
  readonly urgent: boolean;
}

/** Options of {@link buildAlertView} and {@link renderNotification}. */
export interface RenderOptions {
  /**
   * BCP 47 locale that overrides the audience's `locale` (`en-US`, `ko-KR`, `ja-JP`): dates,
   * counts and (through its locale chain) the words.
   */
  readonly locale?: string | undefined;
  /**
   * The stack's `defaultLocale`: the locale of audiences without `locale`, and the fallback
   * language before English for the others. Absent: {@link FALLBACK_LOCALE} (`en-US`).
   */
  readonly defaultLocale?: string | undefined;
  /**
   * What to do with an article link that may not be published ({@link publishableLink}):
   * `require` (the default) throws {@link UnpublishableLinkError}; `omit` renders the alert
   * without it (the parked form of such an alert, and digest entries, which were held already).
   */
  readonly linkPolicy?: 'require' | 'omit' | undefined;
}

const DEFAULT_LOCALE = FALLBACK_LOCALE;

/** True when `locale` is a BCP 47 tag this runtime formats dates in. */
function isUsableLocale(locale: string): boolean {
  try {
    return Intl.DateTimeFormat.supportedLocalesOf([locale]).length > 0;
  } catch {
    // A malformed tag (RangeError) must not cost the subscriber the alert.
    return false;
  }
}

/**
 * The locale a rendering is for: the first usable of `options.locale`, the audience's `locale`
 * and `options.defaultLocale`, else `en-US`. A malformed tag is skipped, never fatal.
 */
export function effectiveLocale(audienceLocale: string | undefined, options: RenderOptions = {}): string {
  for (const candidate of [options.locale, audienceLocale, options.defaultLocale]) {
    if (candidate !== undefined && isUsableLocale(candidate)) return candidate;
  }
  return DEFAULT_LOCALE;
}

/** How a local time is laid out (Intl options, as luxon's `toLocaleString` takes them). */
export const LOCAL_TIME_LAYOUTS = {
  /** `Fri, Mar 14, 2025, 09:30`: an alert's publication time. */
  full: {
    weekday: 'short',
    year: 'numeric',
    month: 'short',
    day: 'numeric',
    hour: '2-digit',
    minute: '2-digit',
    hourCycle: 'h23',
  },
  /** `Mar 14, 09:30`: a digest entry's time. */
  short: { month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit', hourCycle: 'h23' },
  /** `Mon, Nov 23, 2026`: a digest's date. */
  date: { weekday: 'short', year: 'numeric', month: 'short', day: 'numeric' },
  /** `08:00`: a digest's time. */
  time: { hour: '2-digit', minute: '2-digit', hourCycle: 'h23' },
} as const satisfies Record<string, Intl.DateTimeFormatOptions>;

/** A layout of {@link formatInZone}. */
export type LocalTimeLayout = keyof typeof LOCAL_TIME_LAYOUTS;

/** An instant as people in a zone read it, and the zone to name beside it. */
export interface ZonedText {
  /** The local date and/or time in the layout asked for. */
  readonly text: string;
  /** `(Asia/Seoul, UTC+09:00)`, or `(UTC)`. */
  readonly zoneLabel: string;
}

/** The largest instant a Date (and luxon) can hold. */
const MAX_EPOCH_MS = 8.64e15;
/** Intl formatters by layout, locale and zone: creating one costs far more than using it. */
const localTimeFormats = new BoundedCache<string, Intl.DateTimeFormat | null>(1024);

function localTimeFormat(layout: LocalTimeLayout, locale: string, timeZone: string): Intl.DateTimeFormat | null {
  return localTimeFormats.get(`${layout}\u0000${locale}\u0000${timeZone}`, () => {
    try {
      return new Intl.DateTimeFormat(locale, { ...LOCAL_TIME_LAYOUTS[layout], timeZone });
    } catch {
      return null;
    }
  });
}

/** luxon's `ZZ`: `+09:00`, `-03:30`. */
function offsetText(offset: number): string {
  const hours = Math.trunc(Math.abs(offset / 60));
  const minutes = Math.trunc(Math.abs(offset % 60));
  return `${offset >= 0 ? '+' : '-'}${String(hours).padStart(2, '0')}:${String(minutes).padStart(2, '0')}`;
}

/**
 * What luxon shows for `DateTime.fromMillis(epochMs, { zone }).setLocale(locale)` in `layout`,
 * from a cached Intl formatter and the zone's cached offsets. `undefined` where luxon does more
 * than that: fixed offsets other than UTC (it maps them to `Etc/GMT` names), locales with `-u-` or
 * `-x-` extensions (it rewrites them), unknown zones (it falls back to UTC) and instants out of
 * range.
 */
function fastZonedText(
  epochMs: number,
  timeZone: string,
  locale: string,
  layout: LocalTimeLayout,
): ZonedText | undefined {
  if (!(Math.abs(epochMs) <= MAX_EPOCH_MS)) return undefined;
  const lowered = locale.toLowerCase();
  if (lowered.includes('-u-') || lowered.includes('-x-')) return undefined;
  const zone = zoneReader(timeZone);
  if (zone === undefined || (zone.kind === 'fixed' && zone.offset !== 0)) return undefined;
  const format = localTimeFormat(layout, locale, zone.kind === 'fixed' ? 'UTC' : zone.name);
  if (format === null) return undefined;
  const zoneLabel = zone.kind === 'fixed' ? '(UTC)' : `(${zone.name}, UTC${offsetText(zone.offsets.at(epochMs))})`;
  return { text: format.format(epochMs), zoneLabel };
}

/**
 * `epochMs` in `timeZone` (UTC when the zone is unusable) and `locale`, laid out as `layout`.
 * The common zones and locales take a fast path with luxon's exact output; the rest goes through
 * luxon as before.
 */
export function formatInZone(epochMs: number, timeZone: string, locale: string, layout: LocalTimeLayout): ZonedText {
  const fast = fastZonedText(epochMs, timeZone, locale, layout);
  if (fast !== undefined) return fast;
  const local = DateTime.fromMillis(epochMs, { zone: timeZone }).setLocale(locale);
  const zoned = local.isValid ? local : DateTime.fromMillis(epochMs, { zone: 'UTC' }).setLocale(locale);
  const zone = zoned.zoneName ?? 'UTC';
  return {
    text: zoned.toLocaleString(LOCAL_TIME_LAYOUTS[layout]),
    zoneLabel: zone === 'UTC' ? '(UTC)' : `(${zone}, UTC${zoned.toFormat('ZZ')})`,
  };
}

/** `Fri, Mar 14, 2025, 09:30 (Asia/Seoul, UTC+09:00)`: local time, IANA zone and offset. */
export function formatLocalTime(epochMs: number, timeZone: string, locale: string): string {
  const { text, zoneLabel } = formatInZone(epochMs, timeZone, locale, 'full');
  return `${text} ${zoneLabel}`;
}

/** `Mar 14, 09:30`: the short local time of a digest entry (the digest names the zone once). */
export function formatShortLocalTime(epochMs: number, timeZone: string, locale: string): string {
  return formatInZone(epochMs, timeZone, locale, 'short').text;
}

function categoryLabels(codes: readonly string[], names: readonly string[]): string[] {
  if (names.length > 0 && names.length === codes.length) {
    return codes.map((code, index) => {
      const name = names[index] ?? '';
      return name === '' || name === code ? code : `${name} (${code})`;
    });
  }
  return names.length > 0 ? [...names] : [...codes];
}

const cleanOptional = (value: string | undefined, maxUnits: number): string | undefined => {
  if (value === undefined) return undefined;
  const cleaned = truncateText(singleLine(value), maxUnits);
  return cleaned === '' ? undefined : cleaned;
};

/**
 * Normalizes and trims one match for display. `limits` defaults to the standard tier.
 *
 * @throws NotificationRenderError when the match belongs to another audience or the article has
 *         no valid publication time; UnpublishableLinkError when its link may not be published
 *         (unless `linkPolicy: 'omit'`).
 */
export function buildAlertView(
  match: AudienceMatch,
  audience: Audience,
  options: RenderOptions & { readonly limits?: ViewLimits } = {},
): AlertView {
  const limits = options.limits ?? VIEW_LIMITS[0] ?? fail('VIEW_LIMITS is empty');
  if (match.audienceId !== audience.audienceId) {
    throw new NotificationRenderError(
      `match for audience "${match.audienceId}" cannot be rendered for audience "${audience.audienceId}"`,
    );
  }
  const { article } = match;
  if (!Number.isFinite(article.publishedAt)) {
    throw new NotificationRenderError(`article ${article.key} has no valid publication time`);
  }
  const parts = articleParts(article, limits);
  const { link } = parts;
  if (!link.ok && options.linkPolicy !== 'omit') throw new UnpublishableLinkError(article.key, link.reason);
  const url = link.ok ? link.url : '';
  const audienceView = audienceViewOf(audience, options);
  const rules = match.rules.slice(0, limits.maxRules);
  return {
    deliveryId: deliveryId({ audienceId: match.audienceId, articleKey: article.key }),
    audience: audienceView,
    article: articleViewIn(parts, article, url, audience.timeZone, audienceView),
    matches: rules.map((rule) => ({
      ruleId: rule.ruleId,
      description: cleanOptional(rule.description, limits.descriptionUnits),
      urgent: rule.urgent,
      reasons: rule.reasons.slice(0, limits.maxReasonsPerRule).map((reason) => ({
        kind: reason.kind,
        term: truncateText(singleLine(reason.term), limits.termUnits),
      })),
      omittedReasons: Math.max(0, rule.reasons.length - limits.maxReasonsPerRule),
    })),
    omittedMatches: match.rules.length - rules.length,
    ruleIds: match.rules.map((rule) => rule.ruleId),
    urgent: match.rules.some((rule) => rule.urgent),
  };
}

// --- Per-article work, done once per article ------------------------------------------------------
//
// An article matched by several audiences used to be cleaned, cut, checked and formatted again for
// each of them. What depends only on the article (and the size tier) is kept per article object,
// what depends on the audience's zone and locale per article and zone; articles are immutable once
// mapped, and the WeakMaps let them go with the page they came on.

/** The audience-independent part of an article's view, for one size tier. */
interface ArticleParts {
  readonly link: ArticleLink;
  readonly title: string;
  readonly summary: string;
  readonly publishedAtIso: string;
  readonly categories: readonly string[];
  readonly categoryNames: readonly string[];
  readonly categoryLabels: readonly string[];
  readonly media: string | undefined;
  readonly mediaName: string | undefined;
  readonly status: string | undefined;
  /** Finished `AlertView['article']` objects by link, zone and locale. */
  readonly views: Map<string, AlertView['article']>;
}

const partsByArticle = new WeakMap<Article, Map<ViewLimits, ArticleParts>>();

function articleParts(article: Article, limits: ViewLimits): ArticleParts {
  let byLimits = partsByArticle.get(article);
  if (byLimits === undefined) {
    byLimits = new Map();
    partsByArticle.set(article, byLimits);
  }
  let parts = byLimits.get(limits);
  if (parts === undefined) {
    const clean = (values: readonly string[], max: number) =>
      values
        .map((value) => truncateText(singleLine(value), limits.categoryUnits))
        .filter((value) => value !== '')
        .slice(0, max);
    const categories = clean(article.categories, limits.maxCategories);
    const categoryNames = clean(article.categoryNames, limits.maxCategories);
    parts = {
      link: publishableLink(article.url),
      // '' for a missing headline: each language says "untitled" in its own words (articleViewIn).
      title: truncateText(singleLine(article.title), limits.titleUnits),
      summary: truncateText(singleLine(article.summary), limits.summaryUnits),
      publishedAtIso: new Date(article.publishedAt).toISOString(),
      categories,
      categoryNames,
      categoryLabels: categoryLabels(categories, categoryNames),
      media: cleanOptional(article.media, limits.categoryUnits),
      mediaName: cleanOptional(article.mediaName, limits.categoryUnits),
      status: cleanOptional(article.status, limits.categoryUnits),
      views: new Map(),
    };
    byLimits.set(limits, parts);
  }
  return parts;
}

function articleViewIn(
  parts: ArticleParts,
  article: Article,
  url: string,
  timeZone: string,
  audience: Pick<AlertView['audience'], 'locale' | 'messages'>,
): AlertView['article'] {
  const { locale, messages } = audience;
  const key = `${url === '' ? '-' : '+'}${timeZone}\u0000${locale}\u0000${messages.language}`;
  let view = parts.views.get(key);
  if (view === undefined) {
    view = {
      key: article.key,
      id: article.id,
      title: parts.title || messages.untitled,
      summary: parts.summary,
      url,
      // A test notification (news-alerts test-send) has no link at all: nothing was withheld.
      linkWithheld: url === '' && (article.url !== '' || article.linkWithheld === true),
      publishedAt: article.publishedAt,
      publishedAtIso: parts.publishedAtIso,
      publishedLocal: formatLocalTime(article.publishedAt, timeZone, locale),
      categories: parts.categories,
      categoryNames: parts.categoryNames,
      categoryLabels: parts.categoryLabels,
      media: parts.media,
      mediaName: parts.mediaName,
      mediaLabel: parts.mediaName ?? parts.media,
      status: parts.status,
    };
    parts.views.set(key, view);
  }
  return view;
}

const audienceViews = new WeakMap<Audience, Map<string, AlertView['audience']>>();

/**
 * What every rendering for `audience` shares: its cleaned name and label (name or id, at most 40
 * characters), its effective locale ({@link effectiveLocale}), the catalog of the first language
 * along its locale chain, and its templates resolved along that chain. Built once per audience
 * object and locale options, so a run pays for it once per audience, not per notification.
 */
export function audienceViewOf(audience: Audience, options: RenderOptions = {}): AlertView['audience'] {
  let byOptions = audienceViews.get(audience);
  if (byOptions === undefined) {
    byOptions = new Map();
    audienceViews.set(audience, byOptions);
  }
  const key = `${options.locale ?? ''}\u0000${options.defaultLocale ?? ''}`;
  let view = byOptions.get(key);
  if (view === undefined) {
    const name = cleanOptional(audience.name, 100);
    const locale = effectiveLocale(audience.locale, options);
    const chain = localeChain(locale, options.defaultLocale ?? FALLBACK_LOCALE);
    const messages = messagesFor(messageLocale(chain), locale);
    const wordingOf = (template: TemplateName) =>
      resolveTemplate(audience.templates, template, chain).template ?? messages.templates[template];
    view = {
      id: audience.audienceId,
      name,
      label: truncateText(name ?? audience.audienceId, 40),
      timeZone: audience.timeZone,
      smsMaxSegments: audience.smsMaxSegments,
      locale,
      messages,
      wording: {
        subject: wordingOf('subject'),
        digestSubject: wordingOf('digestSubject'),
        footer: wordingOf('footer'),
      },
    };
    if (byOptions.size >= 16) byOptions.clear();
    byOptions.set(key, view);
  }
  return view;
}

function fail(message: string): never {
  throw new NotificationRenderError(message);
}

// --- Channel renderers ----------------------------------------------------------------------------

/** `keyword "interest rate"`, `category 002*`, in the words of `messages` (English by default). */
export function describeReason(reason: MatchReason, messages: Messages = ENGLISH): string {
  return describeReasonIn(messages, String(reason.kind), reason.term);
}

/** `keyword "interest rate", category 002*, +3 more`: every reason of one matching rule. */
export const describeReasons = (match: MatchView, messages: Messages = ENGLISH): string => {
  const listed = match.reasons.map((reason) => describeReason(reason, messages));
  if (match.omittedReasons > 0) listed.push(messages.more(match.omittedReasons));
  return listed.join(messages.listSeparator);
};

/**
 * A subject line from a template whose `{headline}`-like placeholder (`slot`) is cut at a word so
 * the whole subject stays under 100 characters; the other placeholders are filled as they are.
 */
export function subjectFromTemplate(
  template: string,
  values: Readonly<Record<string, string | undefined>>,
  slot: string,
  maxLength: number = SUBJECT_MAX_LENGTH,
): string {
  const full = values[slot] ?? '';
  const subjectWith = (text: string) => fillTemplate(template, { ...values, [slot]: text });
  // Nearly every subject fits whole: then trimToFit and truncateText below would return it as is.
  const whole = subjectWith(full);
  if (whole.length <= maxLength) return whole;
  const cut = trimToFit(full, (candidate) => subjectWith(candidate).length <= maxLength);
  // A template whose fixed text alone is too long still yields a valid subject, cut at a word.
  return truncateText(subjectWith(cut), maxLength);
}

/**
 * `[Markets desk] Fed raises rates…`: one line, under 100 characters, cut at a word; `prefix`
 * (an update notice's mark) goes first and the headline gives up the room it takes.
 */
export function renderSubject(view: AlertView, prefix = ''): string {
  return `${prefix}${subjectFromTemplate(
    view.audience.wording.subject,
    {
      audience: view.audience.label,
      headline: view.article.title,
      media: view.article.mediaLabel,
      category: view.article.categoryLabels[0],
    },
    'headline',
    SUBJECT_MAX_LENGTH - prefix.length,
  )}`;
}

/** The email footer lines (the template along the locale chain, or the catalog's) for an audience. */
export function renderFooter(audience: AlertView['audience']): string {
  const template = audience.wording.footer;
  return footers.get(`${template}\u0000${audience.label}\u0000${audience.id}`, () =>
    fillTemplate(template, { audience: audience.label, audienceId: audience.id }, { multiline: true }),
  );
}

/** Footers by template, label and audience id: the same for every alert of an audience. */
const footers = new BoundedCache<string, string>(1024);

/**
 * Renderings that depend only on the article part of a view, kept per article view object (shared
 * by every audience in the same zone and locale, see `articleViewIn`).
 */
interface ArticleRenderings {
  readonly sms: Map<number, string>;
  structured?: { readonly title: string; readonly summary: string; readonly keywords: readonly string[] };
}

const renderingsByArticle = new WeakMap<AlertView['article'], ArticleRenderings>();

function renderingsOf(article: AlertView['article']): ArticleRenderings {
  let renderings = renderingsByArticle.get(article);
  if (renderings === undefined) {
    renderings = { sms: new Map() };
    renderingsByArticle.set(article, renderings);
  }
  return renderings;
}

/** What an English email says in place of a link that was withheld (every catalog has its own). */
export const LINK_WITHHELD_NOTE = ENGLISH.email.linkWithheld;

// Characters a monospace font shows two columns wide (Hangul, CJK, kana, full-width forms).
const WIDE =
  /[\u1100-\u115F\u2E80-\u303E\u3041-\u33FF\u3400-\u4DBF\u4E00-\u9FFF\uA960-\uA97F\uAC00-\uD7A3\uF900-\uFAFF\uFE30-\uFE4F\uFF00-\uFF60\uFFE0-\uFFE6]/gu;

/** `label` padded with spaces to `columns` columns as a monospace font shows it. */
function padColumns(label: string, columns: number): string {
  const width = label.length + (label.match(WIDE)?.length ?? 0);
  return `${label}${' '.repeat(Math.max(0, columns - width))}`;
}

/** Readable plain-text email: the article, why it was sent, and how to change the subscription. */
export function renderEmailBody(view: AlertView): string {
  const { article } = view;
  const { messages } = view.audience;
  const { labels } = messages.email;
  const lines: string[] = [article.title, ''];
  if (article.summary !== '') lines.push(article.summary, '');
  const field = (label: string, value: string | undefined) => {
    if (value !== undefined && value !== '') lines.push(`${padColumns(`${label}:`, 12)}${value}`);
  };
  field(
    labels.source,
    article.mediaName !== undefined && article.media !== undefined && article.mediaName !== article.media
      ? `${article.mediaName} (${article.media})`
      : article.mediaLabel,
  );
  field(labels.published, article.publishedLocal);
  field(
    article.categoryLabels.length === 1 ? labels.category : labels.categories,
    article.categoryLabels.join(messages.listSeparator),
  );
  field(labels.status, article.status === undefined ? undefined : messages.status(article.status));
  field(labels.link, article.url !== '' ? article.url : article.linkWithheld ? messages.email.linkWithheld : undefined);
  lines.push('', messages.email.whyHeading);
  for (const match of view.matches) {
    lines.push(messages.email.rule(match.ruleId, match.description, match.urgent));
    if (match.reasons.length > 0) lines.push(messages.email.matched(describeReasons(match, messages)));
  }
  if (view.omittedMatches > 0) lines.push(messages.email.moreRules(view.omittedMatches));
  // The id holds the provider's article id: shown sanitized like any provider text.
  lines.push('', '--', renderFooter(view.audience), messages.email.alertId(singleLine(view.deliveryId)));
  return lines.join('\n');
}

/**
 * One SMS: the headline, cut at a word, then the URL, within the audience's segment budget. The
 * URL is never cut: if it alone needs more segments than allowed, it is sent alone. Without a
 * link (withheld), the headline alone.
 */
export function renderSmsBody(view: AlertView): string {
  const { sms } = renderingsOf(view.article);
  const maxSegments = view.audience.smsMaxSegments;
  let body = sms.get(maxSegments);
  if (body === undefined) {
    body = smsBodyOf(view.article, maxSegments);
    sms.set(maxSegments, body);
  }
  return body;
}

/**
 * The SMS of an alert: `prefix` (an update notice's mark, dropped when it would cost the headline
 * its place), the headline cut to fit, then the URL, never cut.
 */
function smsBodyOf(article: AlertView['article'], maxSegments: number, prefix = ''): string {
  const { url } = article;
  if (url !== '' && !fitsSms(url, maxSegments)) return url;
  const withUrl = (headline: string) => (headline === '' || url === '' ? `${headline}${url}` : `${headline} ${url}`);
  if (prefix !== '') {
    const marked = smsBodyOf({ ...article, title: `${prefix}${article.title}` }, maxSegments);
    // The mark is worth a shorter headline, not a headline reduced to the mark.
    if (marked.startsWith(prefix) && marked.length > prefix.length + url.length + 8) return marked;
  }
  const headline = toGsmFriendly(article.title);
  const trimmed = trimToFit(
    headline,
    (candidate) => fitsSms(withUrl(candidate), maxSegments),
    // "…" is not in GSM-7 and would halve the room in a Latin headline.
    (prefix) => (isGsm7(withUrl(prefix)) ? '...' : '\u2026'),
  );
  return withUrl(trimmed);
}

/** The structured body as an object (see {@link AlertDocumentSchema}). */
export function buildAlertDocument(view: AlertView): AlertDocument {
  const { article } = view;
  const renderings = renderingsOf(article);
  renderings.structured ??= {
    title: truncateText(article.title, 250),
    summary: truncateText(article.summary, 300),
    keywords: [...new Set(article.categoryNames.length > 0 ? article.categoryNames : article.categories)]
      .slice(0, 5)
      .map((keyword) => chatSafe(truncateText(keyword, 40))),
  };
  const shared = renderings.structured;
  const { messages } = view.audience;
  const why = view.matches
    .slice(0, 3)
    .map((match) => `\`${match.ruleId}\`${match.reasons.length > 0 ? ` (${describeReasons(match, messages)})` : ''}`);
  const moreRules = view.matches.length - 3 + view.omittedMatches;
  if (moreRules > 0) why.push(messages.more(moreRules));
  const description = [
    [article.mediaLabel === undefined ? undefined : `*${article.mediaLabel}*`, article.publishedLocal]
      .filter((part) => part !== undefined)
      .join(' · '),
    shared.summary,
    article.url,
    why.length > 0 ? `*${messages.chat.why}* ${why.join(messages.clauseSeparator)}` : '',
  ]
    .filter((line) => line !== '')
    .join('\n');
  const additionalContext: Record<string, string> = {
    deliveryId: view.deliveryId,
    audienceId: view.audience.id,
    articleKey: article.key,
    ...(article.url === '' ? {} : { articleUrl: article.url }),
    publishedAt: article.publishedAtIso,
    ruleIds: truncateText(view.ruleIds.join(','), 1000),
  };
  if (article.mediaLabel !== undefined) additionalContext.media = article.mediaLabel;
  return {
    version: '1.0',
    source: 'custom',
    id: view.deliveryId,
    content: {
      textType: 'client-markdown',
      title: chatSafe(`${view.urgent ? '\u{1F6A8} ' : '\u{1F4F0} '}${shared.title}`),
      description: chatSafe(description),
      keywords: [...shared.keywords],
    },
    metadata: {
      eventType: ALERT_EVENT_TYPE,
      summary: chatSafe(truncateText(`[${view.audience.label}] ${article.title}`, 200)),
      additionalContext,
    },
    newsAlerts: {
      schemaVersion: ALERT_SCHEMA_VERSION,
      deliveryId: view.deliveryId,
      audienceId: view.audience.id,
      audienceName: view.audience.name ?? null,
      locale: view.audience.locale,
      language: view.audience.messages.language,
      urgent: view.urgent,
      article: {
        key: article.key,
        id: article.id ?? null,
        title: article.title,
        summary: article.summary,
        url: article.url,
        ...(article.linkWithheld ? { linkWithheld: true } : {}),
        publishedAt: article.publishedAtIso,
        categories: [...article.categories],
        categoryNames: [...article.categoryNames],
        media: article.media ?? null,
        mediaName: article.mediaName ?? null,
        status: article.status ?? null,
      },
      matches: view.matches.map((match) => ({
        ruleId: match.ruleId,
        description: match.description ?? null,
        urgent: match.urgent,
        reasons: match.reasons.map((reason) => ({ kind: reason.kind, term: reason.term })),
        omittedReasons: match.omittedReasons,
      })),
      omittedMatches: view.omittedMatches,
    },
  };
}

/** The rendered text of every channel, before it is packed into the SNS document. */
export interface ChannelBodies {
  readonly subject: string;
  readonly email: string;
  readonly sms: string;
  /** The structured JSON document, serialized; sent as `default` (every structured protocol). */
  readonly structured: string;
}

/** Renders every channel from one view. */
export function renderChannelBodies(view: AlertView): ChannelBodies {
  return {
    subject: renderSubject(view),
    email: renderEmailBody(view),
    sms: renderSmsBody(view),
    structured: JSON.stringify(buildAlertDocument(view)),
  };
}

/** UTF-8 size SNS counts for a message: the body plus its subject. */
export const messageBytes = (body: string, subject = ''): number => utf8Bytes(body) + utf8Bytes(subject);

/** The keyed copies of the structured body after `sms`, split where the body goes (escaped once). */
const STRUCTURED_KEYS = KEYED_STRUCTURED_PROTOCOLS.map((protocol) => `,${JSON.stringify(protocol)}:`);
const STRUCTURED_KEYS_LENGTH = STRUCTURED_KEYS.reduce((sum, key) => sum + key.length, 0);

/** UTF-8 sizes of the messages this module rendered, so the notifier need not count 13 KiB again. */
const renderedBytes = new WeakMap<OutboundMessage, number>();

/**
 * UTF-8 size SNS counts for an outbound message (body plus subject): remembered from rendering,
 * counted otherwise.
 */
export function outboundBytes(message: OutboundMessage): number {
  return renderedBytes.get(message) ?? messageBytes(message.body, message.subject);
}

/**
 * The `MessageStructure: json` document: the structured body as `default`, `email`, `sms`, and the
 * copies under {@link KEYED_STRUCTURED_PROTOCOLS}. SNS picks `doc[protocol] ?? doc.default` per
 * subscription, so every structured protocol receives the same bytes with or without its key.
 *
 * Written piece by piece rather than by `JSON.stringify` of the whole document (same bytes): the
 * structured body makes up most of the message and is escaped and counted once however many keys
 * carry it.
 *
 * @throws MessageTooLargeError when body plus subject exceed {@link SNS_MAX_MESSAGE_BYTES}.
 */
export function encodeMessageStructure(bodies: ChannelBodies): string {
  return encodeSized(bodies).body;
}

function encodeSized(bodies: ChannelBodies): { body: string; bytes: number } {
  const structured = JSON.stringify(bodies.structured);
  const rest = `,"email":${JSON.stringify(bodies.email)},"sms":${JSON.stringify(bodies.sms)}`;
  let body = `{"default":${structured}${rest}`;
  for (const key of STRUCTURED_KEYS) body += key + structured;
  body += '}';
  // Every character outside `rest` and the structured copies is ASCII: one byte each.
  const bytes =
    '{"default":'.length +
    (1 + STRUCTURED_KEYS.length) * utf8Bytes(structured) +
    utf8Bytes(rest) +
    STRUCTURED_KEYS_LENGTH +
    1 +
    utf8Bytes(bodies.subject);
  if (bytes > SNS_MAX_MESSAGE_BYTES) {
    throw new MessageTooLargeError('the rendered SNS message', bytes, SNS_MAX_MESSAGE_BYTES);
  }
  return { body, bytes };
}

/**
 * What an update notice says changed, as the structured body carries it (`newsAlerts.update`).
 * Statuses are provider bytes: shown on one line, cut like the article's own status, null when empty.
 */
export function updateFactsOf(change: ArticleChange): NonNullable<AlertDocument['newsAlerts']['update']> {
  if (change.kind !== 'status') return { change: 'title', status: null, previousStatus: null };
  const clean = (status: string) => truncateText(singleLine(status), 100) || null;
  return { change: 'status', status: clean(change.status), previousStatus: clean(change.previousStatus) };
}

/**
 * Every channel of an update notice: the alert of the article as it reads now, marked as an
 * update on each: the catalog's prefix before the subject, the SMS and the chat title; the line
 * that says what changed ({@link describeUpdate}) first in the email and the chat text; and
 * `newsAlerts.update` in the structured body. `view.deliveryId` is the notice's own id.
 */
export function renderUpdateBodies(view: AlertView, update: UpdateFacts): ChannelBodies {
  const { messages } = view.audience;
  const { prefix } = messages.update;
  const line = describeUpdate(messages, update);
  const document = buildAlertDocument(view);
  const icon = view.urgent ? '\u{1F6A8} ' : '\u{1F4F0} ';
  const marked: AlertDocument = {
    ...document,
    content: {
      ...document.content,
      title: chatSafe(`${icon}${prefix}${truncateText(view.article.title, 250)}`),
      description: chatSafe(`*${singleLine(line)}*\n${document.content.description}`),
    },
    metadata: {
      ...document.metadata,
      summary: chatSafe(truncateText(`[${view.audience.label}] ${prefix}${view.article.title}`, 200)),
      additionalContext: { ...document.metadata.additionalContext, update: update.change },
    },
    newsAlerts: {
      ...document.newsAlerts,
      update: {
        change: update.change,
        status: update.status ?? null,
        previousStatus: update.previousStatus ?? null,
      },
    },
  };
  return {
    subject: renderSubject(view, prefix),
    email: `${line}\n\n${renderEmailBody(view)}`,
    sms: smsBodyOf(view.article, view.audience.smsMaxSegments, prefix),
    structured: JSON.stringify(marked),
  };
}

/**
 * An update notice: the article the audience already has came back changed (audience setting
 * `updates: notify`). Rendered like an alert of the article as it reads now, under `key` (an
 * {@link updateNoticeKey}), marked as an update on every channel in the audience's language (see
 * {@link renderUpdateBodies}); a withdrawn article (status `DELETED`) is said to be withdrawn.
 * Sized like an alert: smaller tiers only when the standard one would exceed SNS's limit.
 *
 * @throws the errors of {@link renderNotification}.
 */
export function renderUpdateNotice(
  match: AudienceMatch,
  audience: Audience,
  change: ArticleChange,
  key: DeliveryKey,
  options: RenderOptions = {},
): OutboundMessage {
  const update = updateFactsOf(change);
  const id = deliveryId(key);
  return renderSized(match, audience, options, key, (view) => renderUpdateBodies({ ...view, deliveryId: id }, update));
}

/**
 * Renders one match for one audience: subject plus the `MessageStructure: json` body. Tries the
 * standard rendering first and the more compact ones only when a message would exceed SNS's size
 * limit, so no alert is lost to an unusually long rule list.
 *
 * @throws NotificationRenderError for a match of another audience or an article without a valid time.
 * @throws UnpublishableLinkError when the article's link may not be published (see
 *         {@link publishableLink}; unless `linkPolicy: 'omit'`).
 * @throws MessageTooLargeError when even the minimal rendering is too large.
 */
export function renderNotification(
  match: AudienceMatch,
  audience: Audience,
  options: RenderOptions = {},
): OutboundMessage {
  const key = { audienceId: match.audienceId, articleKey: match.article.key };
  return renderSized(match, audience, options, key, renderChannelBodies);
}

/** Renders `match` with `bodiesOf` under `key`, trying the smaller tiers only when one is too large. */
function renderSized(
  match: AudienceMatch,
  audience: Audience,
  options: RenderOptions,
  key: DeliveryKey,
  bodiesOf: (view: AlertView) => ChannelBodies,
): OutboundMessage {
  let lastError: MessageTooLargeError | undefined;
  for (const limits of VIEW_LIMITS) {
    const bodies = bodiesOf(buildAlertView(match, audience, { ...options, limits }));
    try {
      const { body, bytes } = encodeSized(bodies);
      const message: OutboundMessage = {
        key,
        topicArn: audience.topicArn,
        subject: bodies.subject,
        body,
        ruleIds: match.rules.map((rule) => rule.ruleId),
      };
      renderedBytes.set(message, bytes);
      return message;
    } catch (error) {
      if (!(error instanceof MessageTooLargeError)) throw error;
      lastError = error;
    }
  }
  throw new MessageTooLargeError(
    `the notification for ${deliveryId(key)}`,
    lastError?.bytes ?? 0,
    SNS_MAX_MESSAGE_BYTES,
    { cause: lastError },
  );
}

/**
 * The message kept for an alert that could not be rendered normally, parked (with an alarm) for
 * ops to review and send with `news-alerts replay --parked`: the alert without its link, or, when
 * not even that renders (no valid publication time, say), a plain notice with the headline and
 * the alert id, so a replay still has something true to send: on every channel, in the
 * audience's SMS length, and as a structured body its readers can parse (no link, no rule
 * details; `publishedAt` is the article's when valid, else `parkedAt`). Never throws: the parking
 * of a poisoned article must not fail on the same poison.
 */
export function renderParkedNotification(
  match: AudienceMatch,
  audience: Audience,
  options: RenderOptions = {},
  parkedAt = 0,
): OutboundMessage {
  try {
    return renderNotification(match, audience, { ...options, linkPolicy: 'omit' });
  } catch {
    return plainParkedNotice(match, audience, options, parkedAt);
  }
}

/** The plain notice of {@link renderParkedNotification}, from what is left to trust. */
function plainParkedNotice(
  match: AudienceMatch,
  audience: Audience,
  options: RenderOptions,
  parkedAt: number,
): OutboundMessage {
  const key = { audienceId: match.audienceId, articleKey: match.article.key };
  const id = deliveryId(key);
  const messages = parkedMessages(audience, options);
  const title = truncateText(singleLine(String(match.article.title ?? '')), 200) || messages.untitled;
  const label = truncateText(singleLine(audience.name ?? '') || audience.audienceId, 40);
  const text = `${title}\n\n${messages.email.alertId(singleLine(id))}`;
  const sms = trimToFit(
    toGsmFriendly(title),
    (candidate) => fitsSms(candidate, audience.smsMaxSegments ?? 1),
    (prefix) => (isGsm7(prefix) ? '...' : '\u2026'),
  );
  const published = match.article.publishedAt;
  const instant = Number.isFinite(published) && Math.abs(published) <= 8.64e15 ? published : parkedAt;
  const document: AlertDocument = {
    version: '1.0',
    source: 'custom',
    id,
    content: {
      textType: 'client-markdown',
      title: chatSafe(`\u{1F4F0} ${title}`),
      description: chatSafe(text),
      keywords: [],
    },
    metadata: {
      eventType: ALERT_EVENT_TYPE,
      summary: chatSafe(truncateText(`[${label}] ${title}`, 200)),
      additionalContext: { deliveryId: id, audienceId: key.audienceId, articleKey: truncateText(key.articleKey, 1000) },
    },
    newsAlerts: {
      schemaVersion: ALERT_SCHEMA_VERSION,
      deliveryId: id,
      audienceId: key.audienceId,
      audienceName: audience.name ?? null,
      ...(audience.locale === undefined ? {} : { locale: audience.locale }),
      language: messages.language,
      urgent: match.rules.some((rule) => rule.urgent),
      article: {
        key: key.articleKey,
        id: typeof match.article.id === 'string' ? match.article.id : null,
        title,
        summary: '',
        url: '',
        publishedAt: new Date(instant).toISOString(),
        categories: [],
        categoryNames: [],
        media: null,
        mediaName: null,
        status: null,
      },
      // The rules that matched are in the ledger; their details may be what would not render.
      matches: [],
      omittedMatches: match.rules.length,
    },
  };
  return {
    key,
    topicArn: audience.topicArn,
    subject: truncateText(`[${label}] ${title}`, SUBJECT_MAX_LENGTH),
    body: JSON.stringify({ default: JSON.stringify(document), email: text, sms }),
    ruleIds: match.rules.map((rule) => rule.ruleId),
  };
}

/** The audience's words for a parked notice, English when even those cannot be found (never throws). */
function parkedMessages(audience: Audience, options: RenderOptions): Messages {
  try {
    return audienceViewOf(audience, options).messages;
  } catch {
    return ENGLISH;
  }
}
