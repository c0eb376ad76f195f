/**
 * Every fixed word a subscriber reads, per shipped language. Owns one guarantee: a rendering in
 * any shipped language (functions/core/locale.ts `SHIPPED_LOCALES`) has real wording for every
 * label, sentence and default template; a catalog that misses one does not typecheck (each is a
 * {@link CatalogFactory} returning a whole {@link Messages}), and test/unit/messages.test.ts checks
 * the built catalogs key by key against English.
 *
 * Sentences with values are functions, so word order and particles belong to the language, not
 * to the renderer. Counts are formatted with `Intl.NumberFormat` of the subscriber's locale;
 * plural forms come from `Intl.PluralRules` of the catalog's own language (the words are English,
 * Korean or Japanese whatever the region). Data (headlines, rule ids and descriptions, media and
 * category names, provider codes) is passed in and shown as it is.
 *
 * {@link messagesFor} builds a catalog once per language and number locale and keeps it: renderers
 * call it once per audience, never per notification.
 *
 * Pure: no clock, no I/O.
 */
import { BoundedCache } from '../bounded-cache.ts';
import { FALLBACK_LOCALE, localeChain, messageLocale, type ShippedLocale } from '../locale.ts';
import { en } from './en.ts';
import { ja } from './ja.ts';
import { ko } from './ko.ts';

/** A kind of match reason as the matcher reports it (model.ts `MatchReason['kind']`). */
export type ReasonKind = 'category' | 'keyword' | 'media' | 'status' | 'all' | 'spike';

/** Formats a count for the subscriber's locale (`1,000`). */
export type CountFormat = (count: number) => string;

/** The words of one language. Every member is required: a missing one fails typecheck. */
export interface Messages {
  /** The language of the words. */
  readonly language: ShippedLocale;
  /** Formats a count in the subscriber's locale. */
  readonly count: CountFormat;
  /** Separator of a short list (`a, b`). */
  readonly listSeparator: string;
  /** Separator of a list of clauses (`rule a: …; rule b: …`). */
  readonly clauseSeparator: string;
  /** `+3 more`: what follows a list that was cut. */
  readonly more: (count: number) => string;
  /** `3 articles` (the `{articles}` placeholder of `digestSubject`). */
  readonly articles: (count: number) => string;
  /** Shown as the headline of an article that has none. */
  readonly untitled: string;
  /** A provider status in words; unknown statuses come back as sent. */
  readonly status: (status: string) => string;

  /** The default ops templates (model.ts `TEMPLATE_PLACEHOLDERS` for their placeholders). */
  readonly templates: {
    readonly subject: string;
    readonly digestSubject: string;
    readonly footer: string;
  };

  /** Why a rule matched, one reason. */
  readonly reason: {
    readonly keyword: (term: string) => string;
    readonly category: (term: string) => string;
    readonly media: (term: string) => string;
    readonly status: (term: string) => string;
    /** A match-all rule. */
    readonly all: string;
    /** A spike alert of the rule, at its sensitivity preset (`fewer`, `balanced`, `more`). */
    readonly spike: (preset: string) => string;
    /** A reason kind this renderer does not know (a newer matcher). */
    readonly other: (kind: string, term: string) => string;
  };

  /** The plain-text email of an alert. */
  readonly email: {
    readonly labels: {
      readonly source: string;
      readonly published: string;
      readonly category: string;
      readonly categories: string;
      readonly status: string;
      readonly link: string;
    };
    /** In place of a link the link policy withheld. */
    readonly linkWithheld: string;
    /** Heading of the list of matching rules. */
    readonly whyHeading: string;
    /** `- Rule rates: Interest rates (urgent)`. */
    readonly rule: (ruleId: string, description: string | undefined, urgent: boolean) => string;
    /** `  Matched keyword "x", category 002*`. */
    readonly matched: (reasons: string) => string;
    /** `- ...and 3 more rules`. */
    readonly moreRules: (count: number) => string;
    /** `Alert id: desk|id:1`. */
    readonly alertId: (id: string) => string;
  };

  /** Update notices (audience setting `updates: notify`): an article the audience has came back changed. */
  readonly update: {
    /** Before the subject and the SMS of an update notice: `Updated: `, `[업데이트] `. */
    readonly prefix: string;
    /**
     * The first line of an update notice whose status changed: `Update: status changed from PUBLISHED
     * to UPDATED`. Each status is already in words ({@link Messages.status}); undefined: none was sent.
     */
    readonly statusChanged: (status: string | undefined, previousStatus: string | undefined) => string;
    /** The first line when the provider withdrew the article (status `DELETED`). */
    readonly withdrawn: string;
    /** The first line when the headline changed. */
    readonly titleChanged: string;
  };

  /**
   * Spike alerts (functions/core/spikes/): the new stories of a rule jumped. Counts of stories are
   * whole numbers; expected counts are rounded ({@link Messages.spike.expected}).
   */
  readonly spike: {
    /** `Coverage spike: Semiconductors`: the headline (email, chat title, digest entry). */
    readonly headline: (rule: string) => string;
    /** `about 6 expected`, `fewer than 1 expected`. */
    readonly expected: (expected: number) => string;
    /** `42 new stories since 14:00, about 6 expected`. */
    readonly observed: (observed: number, expected: string, since: string) => string;
    /** `In the hour to 15:00: 30 new stories, about 2 expected`. */
    readonly lastBucket: (count: number, expected: string, until: string) => string;
    /** `From 18 outlets`. */
    readonly outlets: (count: number) => string;
    readonly topStoriesHeading: string;
    /** `12 outlets`, after a story's headline. */
    readonly storyOutlets: (count: number) => string;
    readonly topOutletsHeading: string;
    /** `Example Wire (5 stories)`. */
    readonly outletStories: (name: string, count: number) => string;
    /** A preset in words. */
    readonly preset: (preset: string) => string;
    /** What the rule asked for, under "Why you got this". */
    readonly why: (preset: string) => string;
    /** The first line of an update notice when the episode doubled: `Update: now 90 new stories`. */
    /** The update's first line: the stories so far, and `expected` (the `expected` words) for the same span. */
    readonly escalated: (observed: number, expected: string) => string;
    /** The SMS: `Coverage spike: Semiconductors: 42 new stories since 14:00 (about 6 expected)`. */
    readonly sms: (rule: string, observed: number, expected: string, since: string) => string;
  };

  /** The structured JSON's chat text (Amazon Q Developer `content.description`). */
  readonly chat: {
    /** `Why:` before the rules that matched. */
    readonly why: string;
  };

  /** Digests on every channel. */
  readonly digest: {
    /** `Markets desk · news digest · 3 articles`. */
    readonly title: (audience: string, count: number) => string;
    /** `Part 1 of 2 · articles 1–40 of 75`. */
    readonly partLine: (part: number, parts: number, first: number, last: number, total: number) => string;
    /** `part 1/2` (the subject's part placeholder). */
    readonly part: (part: number, parts: number) => string;
    /** Heading of the hold notes. */
    readonly heldHeading: string;
    /** `5 held during your quiet hours (22:00–07:00)`. */
    readonly heldQuietHours: (
      count: number,
      window: { readonly start: string; readonly end: string } | undefined,
    ) => string;
    /** `+2 more over the daily limit of 20 immediate alerts`. */
    readonly heldBudget: (count: number, budget: number | undefined) => string;
    /** `3 collected for your digest (08:00, 18:00)`. */
    readonly heldDigest: (count: number, times: readonly string[]) => string;
    /** `Economy (002000000) · 5`, `· 5 of 12` when the group spans parts. */
    readonly groupHeading: (label: string, count: number, total: number) => string;
    /** The group of articles without a category. */
    readonly otherGroup: string;
    /** The group of spike alerts, listed first. */
    readonly spikeGroup: string;
    /** Before an urgent entry's headline. */
    readonly urgentMarker: string;
    /** `Why: rule rates: …`. */
    readonly whyLine: (why: string) => string;
    /** `rule rates (urgent): keyword "x"`. */
    readonly rule: (ruleId: string, urgent: boolean, reasons: string) => string;
    /** `+2 more rules`. */
    readonly moreRules: (count: number) => string;
    /** `Digest id: desk|digest:…`. */
    readonly digestId: (id: string) => string;
    /** `Markets desk (part 1/2): 3 news alerts`: the start of a digest SMS. */
    readonly smsIntro: (audience: string, part: number, parts: number, count: number) => string;
    /** The intro, the headlines that fit and how many did not. */
    readonly sms: (intro: string, headlines: readonly string[], more: number) => string;
    /** `Markets desk: 3 articles (part 1/2)`: the chat title. */
    readonly chatTitle: (audience: string, count: number, part: number, parts: number) => string;
    /**
     * `also in 5 outlets: A, B, C and 2 more`: the other outlets of an entry's story. `outlets` are
     * the names shown (possibly none), `more` how many of `count` are not named.
     */
    readonly alsoIn: (count: number, outlets: readonly string[], more: number) => string;
    /** `+3 more in this digest`: the end of a chat text that was cut. */
    readonly moreInDigest: (count: number) => string;
    /** `[Markets desk] digest of <time>: 3 articles`. */
    readonly chatSummary: (audience: string, releaseLocal: string, count: number) => string;
  };
}

/** Builds a language's catalog around a count format of the subscriber's locale. */
export type CatalogFactory = (count: CountFormat) => Messages;

const factories: Record<ShippedLocale, CatalogFactory> = { en, ko, ja };

const built = new BoundedCache<string, Messages>(256);

/**
 * `Intl.NumberFormat` of `locale`, or of `fallback` when `locale` is unusable, built at the first
 * count it formats: the process's first number format loads ICU's number data (~3 ms once the rest
 * of Intl is up), and `ENGLISH` is built when this module loads, so an eager format would put that
 * on every cold start, also of runs that format no count.
 */
function countFormat(locale: string, fallback: string): CountFormat {
  let format: Intl.NumberFormat | undefined;
  return (count) => {
    if (format === undefined) {
      try {
        format = new Intl.NumberFormat(locale, { maximumFractionDigits: 0 });
      } catch {
        // A malformed tag (RangeError) must not cost the subscriber the message.
        format = new Intl.NumberFormat(fallback, { maximumFractionDigits: 0 });
      }
    }
    return format.format(count);
  };
}

/**
 * The catalog of `language`, with counts formatted for `numberLocale` (the subscriber's full tag,
 * e.g. `fr-FR` for English words with French numbers; defaults to the language). Built once per
 * pair and kept.
 *
 * @example messagesFor('ko', 'ko-KR').articles(3) // '기사 3건'
 */
export function messagesFor(language: ShippedLocale, numberLocale: string = language): Messages {
  return built.get(`${language}\u0000${numberLocale}`, () => factories[language](countFormat(numberLocale, language)));
}

/** `keyword "interest rate"`, `category 002*`: one reason in the catalog's words. */
export function describeReasonIn(messages: Messages, kind: string, term: string): string {
  const { reason } = messages;
  switch (kind) {
    case 'keyword':
      return reason.keyword(term);
    case 'category':
      return reason.category(term);
    case 'media':
      return reason.media(term);
    case 'status':
      return reason.status(term);
    case 'all':
      return reason.all;
    case 'spike':
      return reason.spike(term);
    default:
      // Reasons come from this codebase's matcher, but a newer matcher must not break old renderers.
      return reason.other(kind, term);
  }
}

/**
 * The catalog a subscriber with locale `tag` reads: the language of the first entry of its chain
 * with a catalog (`ko-KR → ko → <defaultLocale> → en`), counts formatted for `tag` itself (or the
 * default when `tag` is missing or malformed).
 *
 * @example messagesForLocale('fr-FR').language // 'en' (French dates and numbers, English words)
 */
export function messagesForLocale(tag: string | undefined, defaultLocale?: string): Messages {
  const chain = localeChain(tag, defaultLocale);
  return messagesFor(messageLocale(chain), chain[0] ?? 'en');
}

/** What an update notice says changed: the structured body's `newsAlerts.update`. */
export interface UpdateFacts {
  readonly change: 'status' | 'title';
  /** The status now (`''` or null: none). */
  readonly status?: string | null | undefined;
  /** The status the audience was sent (`''` or null: none). */
  readonly previousStatus?: string | null | undefined;
}

/** Provider statuses that mean the article was taken down. */
const WITHDRAWN_STATUSES = new Set(['DELETED', 'WITHDRAWN', 'REMOVED']);

/** True when `status` says the provider withdrew the article (`DELETED`, any case). */
export const isWithdrawnStatus = (status: string | null | undefined): boolean =>
  status != null && WITHDRAWN_STATUSES.has(status.trim().toUpperCase());

/**
 * The first line of an update notice in the catalog's words, the same on every channel (render.ts
 * for email, SMS and JSON, the Slack relay from the JSON's `newsAlerts.update`).
 */
export function describeUpdate(messages: Messages, update: UpdateFacts): string {
  const { update: words } = messages;
  if (update.change === 'title') return words.titleChanged;
  if (isWithdrawnStatus(update.status)) return words.withdrawn;
  const inWords = (status: string | null | undefined) =>
    status == null || status.trim() === '' ? undefined : messages.status(status.trim());
  return words.statusChanged(inWords(update.status), inWords(update.previousStatus));
}

/**
 * The English catalog with `en-US` numbers: the wording of the renderers' exported defaults and of
 * callers that name no catalog (one object, so alerts and digests agree).
 */
export const ENGLISH: Messages = messagesFor('en', FALLBACK_LOCALE);
