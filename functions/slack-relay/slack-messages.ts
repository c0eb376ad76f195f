/**
 * The words only the Slack relay says, in every shipped language (functions/core/locale.ts
 * `SHIPPED_LOCALES`). Owns one guarantee: each shipped language has every entry, or typecheck
 * fails (each catalog is a {@link SlackCatalogFactory} returning a whole {@link SlackMessages}),
 * so a Slack message never shows a key name or falls silent. Words Slack shares with email and
 * the other channels (untitled, reasons, "+N more", article counts, digest parts and group
 * headings, hold notes) come from the core catalog (functions/core/messages/) instead, so every
 * channel says the same thing.
 *
 * Entries return plain text (the renderer escapes and decorates it); counts go through the
 * subscriber's `Intl.NumberFormat`, the one the core catalog was built with. Pure: no clock, no I/O.
 */
import type { ShippedLocale } from '#core/locale';
import type { CountFormat } from '#core/messages/catalog';

/** Every fixed word of a Slack alert or digest that no other channel uses. */
export interface SlackMessages {
  /** The label of the article link when the header shows the whole headline. */
  readonly readArticle: string;
  /** The same, naming the outlet. */
  readonly readArticleOn: (media: string) => string;
  /**
   * Shown after a headline in place of its link when the whole address does not fit Slack's
   * limits: an address is never shown cut (Slack would link the cut text to a broken page).
   */
  readonly linkTooLong: string;
  /**
   * A keyword reason, `term` already one line. Slack's own: it quotes typographically, the plain
   * text email with ASCII quotes.
   */
  readonly reasonKeyword: (term: string) => string;
  /** One matching rule, before its description and reasons. */
  readonly rule: (ruleId: string, urgent: boolean) => string;
  /** The last line of the "why" section when rules were left out. */
  readonly moreRulesLine: (count: number) => string;
  /** The last context line of an alert. */
  readonly alertFooter: (audience: string, deliveryId: string) => string;
  /** The last context line of a digest. */
  readonly digestFooter: (audience: string, deliveryId: string) => string;
  /** The first context line of a digest; `date` is a Slack date token, kept whole. */
  readonly digestOf: (date: string) => string;
  /** The last line of a category whose entries did not all fit. */
  readonly moreInCategory: (count: number) => string;
  /** The section that stands for the categories that did not fit. */
  readonly moreInCategories: (articles: number, categories: number) => string;
}

/** Builds a language's Slack words around the subscriber's count format. */
export type SlackCatalogFactory = (count: CountFormat) => SlackMessages;

const enPlurals = new Intl.PluralRules('en');

/** English: the wording of every Slack message before catalogs existed, byte for byte. */
const en: SlackCatalogFactory = (count) => {
  const counted = (n: number, one: string, other = `${one}s`) =>
    `${count(n)} ${enPlurals.select(n) === 'one' ? one : other}`;
  return {
    readArticle: 'Read the article',
    readArticleOn: (media) => `Read the article on ${media}`,
    linkTooLong: 'link too long to show in Slack',
    reasonKeyword: (term) => `keyword \u201C${term}\u201D`,
    rule: (ruleId, urgent) => `${urgent ? 'urgent ' : ''}rule ${ruleId}`,
    moreRulesLine: (n) => `\u2026and ${count(n)} more rule(s)`,
    alertFooter: (audience, deliveryId) => `news-alerts \u00B7 ${audience} \u00B7 alert ${deliveryId}`,
    digestFooter: (audience, deliveryId) => `news-alerts \u00B7 ${audience} \u00B7 digest ${deliveryId}`,
    digestOf: (date) => `Digest of ${date}`,
    moreInCategory: (n) => `\u2026and ${count(n)} more in this category`,
    moreInCategories: (articles, categories) =>
      `\u2026and ${counted(articles, 'more article')} in ${counted(categories, 'more category', 'more categories')}`,
  };
};

/** Korean, in the core catalog's terms (알림 an alert, 뉴스 요약 a digest, 규칙 a rule, 분류 a category). */
const ko: SlackCatalogFactory = (count) => ({
  readArticle: '기사 읽기',
  readArticleOn: (media) => `${media}에서 기사 읽기`,
  linkTooLong: '링크가 너무 길어 표시하지 않음',
  reasonKeyword: (term) => `키워드 \u201C${term}\u201D`,
  rule: (ruleId, urgent) => `규칙 ${ruleId}${urgent ? ' (긴급)' : ''}`,
  moreRulesLine: (n) => `\u2026외 규칙 ${count(n)}개`,
  alertFooter: (audience, deliveryId) => `news-alerts \u00B7 ${audience} \u00B7 알림 ${deliveryId}`,
  digestFooter: (audience, deliveryId) => `news-alerts \u00B7 ${audience} \u00B7 요약 ${deliveryId}`,
  digestOf: (date) => `${date} 뉴스 요약`,
  moreInCategory: (n) => `\u2026이 분류에 ${count(n)}건 더 있음`,
  moreInCategories: (articles, categories) => `\u2026다른 분류 ${count(categories)}개에 ${count(articles)}건 더 있음`,
});

/** Japanese, in the core catalog's terms (アラート, ダイジェスト, ルール, カテゴリ). */
const ja: SlackCatalogFactory = (count) => ({
  readArticle: '記事を読む',
  readArticleOn: (media) => `${media}で記事を読む`,
  linkTooLong: 'リンクが長すぎるため表示できません',
  reasonKeyword: (term) => `キーワード「${term}」`,
  rule: (ruleId, urgent) => `ルール ${ruleId}${urgent ? ' (緊急)' : ''}`,
  moreRulesLine: (n) => `\u2026ほかルール${count(n)}件`,
  alertFooter: (audience, deliveryId) => `news-alerts \u00B7 ${audience} \u00B7 アラート ${deliveryId}`,
  digestFooter: (audience, deliveryId) => `news-alerts \u00B7 ${audience} \u00B7 ダイジェスト ${deliveryId}`,
  digestOf: (date) => `${date}のダイジェスト`,
  moreInCategory: (n) => `\u2026このカテゴリにほか${count(n)}件`,
  moreInCategories: (articles, categories) => `\u2026ほか${count(categories)}カテゴリに${count(articles)}件`,
});

/** Every shipped language's Slack words. */
export const SLACK_CATALOGS: Readonly<Record<ShippedLocale, SlackCatalogFactory>> = { en, ko, ja };

const built = new WeakMap<CountFormat, Map<ShippedLocale, SlackMessages>>();

/**
 * The Slack words of `language` around `count` (the core catalog's count format, so numbers read
 * alike in every part of a message). Built once per pair and kept.
 */
export function slackMessagesFor(language: ShippedLocale, count: CountFormat): SlackMessages {
  let byLanguage = built.get(count);
  if (byLanguage === undefined) {
    byLanguage = new Map();
    built.set(count, byLanguage);
  }
  let messages = byLanguage.get(language);
  if (messages === undefined) {
    messages = SLACK_CATALOGS[language](count);
    byLanguage.set(language, messages);
  }
  return messages;
}
