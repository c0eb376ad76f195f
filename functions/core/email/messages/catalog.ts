/**
 * The words of the email channel's own parts, per shipped language: the chrome around an alert in
 * an email (links to the preference page, "why you get this"), the confirmation email, the
 * subscriber's daily digest, and the preference page. The alert and digest wording itself comes
 * from the shared catalog (functions/core/messages/), so an email says what every channel says.
 *
 * Every language has every member (a missing one fails typecheck; test/unit/email-messages.test.ts
 * compares them key by key). Sentences with values are functions, so word order is the
 * language's. Pure.
 */
import { SHIPPED_LOCALES, type ShippedLocale } from '../../locale.ts';
import { en } from './en.ts';
import { ja } from './ja.ts';
import { ko } from './ko.ts';

/** Words of the email channel in one language. */
export interface EmailWords {
  readonly language: ShippedLocale;
  /** The name of the language in itself (`한국어`), for the page's language links. */
  readonly languageName: string;
  readonly mail: {
    /** `You get this email because this address is subscribed to Markets desk.` */
    readonly why: (audience: string) => string;
    readonly manage: string;
    readonly unsubscribe: (audience: string) => string;
    readonly readArticle: string;
    /** Heading of a digest's hold notes in HTML. */
    readonly summary: string;
    /**
     * The footer of an audience without a footer template of its own (placeholders `{audience}`
     * and `{audienceId}`): what to ask ops for; the links beside it cover the rest.
     */
    readonly footer: string;
  };
  readonly confirm: {
    readonly subject: (audience: string) => string;
    readonly heading: (audience: string) => string;
    readonly body: (audience: string) => string;
    readonly button: string;
    readonly ignore: string;
  };
  /** A subscriber's own daily digest (the page's "one daily digest"). */
  readonly dailyDigest: {
    /** `articles` is the count in the audience's words and number format (`1,500 articles`, `기사 1,500건`). */
    readonly subject: (audience: string, articles: string) => string;
    readonly heading: (audience: string, articles: string) => string;
    readonly intro: string;
  };
  readonly page: {
    readonly title: string;
    readonly languageLabel: string;
    readonly addressLine: (maskedAddress: string) => string;
    readonly listHeading: string;
    readonly thisList: string;
    readonly state: {
      readonly confirmed: string;
      readonly digest: string;
      readonly paused: (until: string) => string;
      readonly pending: string;
      readonly unsubscribed: string;
    };
    readonly suppressed: string;
    readonly manageHeading: (audience: string) => string;
    /** Under the settings heading of a membership that is not confirmed yet (it has no settings). */
    readonly pendingNote: string;
    readonly frequencyLegend: string;
    readonly immediate: string;
    /** `time`: the local time of the audience's next daily digest; `zone`: its IANA time zone. */
    readonly digest: (time: string, zone: string) => string;
    readonly save: string;
    readonly pauseLegend: string;
    readonly pauseDays: string;
    readonly pauseButton: string;
    readonly resumeButton: string;
    readonly unsubscribeHeading: string;
    readonly unsubscribeThis: (audience: string) => string;
    readonly unsubscribeAll: string;
    readonly notices: {
      readonly unsubscribed: (audience: string) => string;
      readonly unsubscribedAll: string;
      readonly paused: (until: string) => string;
      readonly resumed: string;
      readonly immediate: string;
      readonly digest: string;
      readonly confirmed: (audience: string) => string;
      readonly nothingChanged: string;
    };
    readonly refused: {
      readonly unsubscribed: string;
      readonly notConfirmed: string;
      readonly badDays: (max: number) => string;
      /** A frequency the form does not offer (a form posted by hand). */
      readonly badPreference: string;
    };
    readonly oneClickHeading: (audience: string) => string;
    readonly oneClickBody: string;
    readonly oneClickButton: string;
    readonly oneClickDone: string;
    readonly confirmHeading: (audience: string) => string;
    readonly confirmBody: string;
    readonly confirmButton: string;
    readonly invalidTitle: string;
    readonly invalidBody: string;
    readonly tooMany: string;
    readonly manageLink: string;
  };
}

const catalogs: Record<ShippedLocale, EmailWords> = { en, ko, ja };

/** The email words of a shipped language. */
export const emailWordsFor = (language: ShippedLocale): EmailWords => catalogs[language];

/** Every shipped language's email words (the page lists them as language links). */
export const allEmailWords: readonly EmailWords[] = SHIPPED_LOCALES.map((language) => catalogs[language]);
