/**
 * Renders one alert or digest as a Slack incoming-webhook message: Block Kit for the channel, and
 * a top-level `text` for notifications, screen readers and clients that cannot show blocks.
 *
 * A digest shows its count and why its entries were held, then one section per category with
 * each entry linked, its outlet, time and the rule(s) that matched; what does not fit Slack's
 * limits (50 blocks, 3,000 characters a section) is summed up as "…and N more", never cut mid-entry.
 *
 * Slack's limits (https://api.slack.com/reference/block-kit/blocks): a header's plain text holds
 * at most 150 characters, a section's text 3,000, a context block 1 to 10 elements, and every
 * text 1 to 3,000 characters. Every text here is cut to fit at a grapheme boundary (never inside
 * an emoji or a Hangul syllable), measured in UTF-16 code units, which is never less than what
 * Slack counts. Slack refuses the whole message (`invalid_blocks`) for one element whose text is
 * empty, blank or invisible, so an element or block with nothing to show is left out, never sent.
 *
 * A link's address is never cut: Slack would link the cut text to a broken page. A headline whose
 * whole link does not fit is shown without it, followed by a note that the link was too long; the
 * headline itself is always shown.
 *
 * Every fixed word is in the subscriber's language: the document's `locale` picks the catalog
 * along functions/core/locale.ts `localeChain` (`ko-KR → ko → en`); a document without one, or
 * with a tag no catalog serves, reads in English exactly as before the field existed. Words the
 * email also says come from the core catalog (functions/core/messages/), Slack's own from
 * ./slack-messages.ts, so a subscriber reads the same sentence on every channel. Dates are
 * Slack `<!date^…>` tokens, which every reader's client shows in its own language and zone; only
 * their fallback text is formatted here, in the document's language. Pure: no clock, no I/O.
 */
import { BoundedCache } from '#core/bounded-cache';
import { FALLBACK_LOCALE, type ShippedLocale } from '#core/locale';
import {
  describeReasonIn,
  describeUpdate,
  type Messages,
  messagesFor,
  messagesForLocale,
} from '#core/messages/catalog';
import { displayText, publishableLink } from '#core/text';
import type { Alert, AlertMatch, ArticleAlert, DigestAlert, DigestEntry, SpikeFacts } from './message.ts';
import { type SlackMessages, slackMessagesFor } from './slack-messages.ts';

/** Slack's limit for a header block's text. */
export const HEADER_MAX = 150;
/** Slack's limit for a section block's text (and what the fallback `text` is kept to). */
export const SECTION_MAX = 3000;
/** Kept well under Slack's limit so a context line stays one line. */
const CONTEXT_ELEMENT_MAX = 300;
/** Slack's limit of elements in one context block. */
const CONTEXT_ELEMENTS_MAX = 10;
/**
 * A link whose address leaves less than this much of its label (or the whole label when shorter)
 * is not shown as a link: the label would no longer say what it links to.
 */
const LINK_LABEL_MIN = 40;
/** What a digest entry's headline, outlet, time and reasons are kept within, its link's address aside. */
const DIGEST_ENTRY_MAX = 900;
/**
 * What a digest entry is kept within with its link's address: half a section, so one long address
 * cannot push the entries after it out of the message.
 */
const DIGEST_LINKED_ENTRY_MAX = 1500;
/** Rules listed under "Why you got this" before "+N more". */
const MAX_LISTED_RULES = 10;
/** Slack's limit of blocks in one message. */
export const MAX_BLOCKS = 50;

/** A Block Kit text object. */
export interface TextObject {
  readonly type: 'plain_text' | 'mrkdwn';
  readonly text: string;
  readonly emoji?: boolean;
}

/** The blocks this relay uses. */
export type Block =
  | { readonly type: 'header'; readonly text: TextObject }
  | { readonly type: 'section'; readonly text: TextObject }
  | { readonly type: 'context'; readonly elements: readonly TextObject[] }
  | { readonly type: 'divider' };

/** The JSON body posted to the incoming webhook. */
export interface SlackMessage {
  readonly text: string;
  readonly blocks: readonly Block[];
  readonly unfurl_links: boolean;
  readonly unfurl_media: boolean;
}

const graphemes = new Intl.Segmenter(undefined, { granularity: 'grapheme' });

/** Cuts `value` to at most `max` UTF-16 code units at a grapheme boundary, with an ellipsis when cut. */
export function clip(value: string, max: number): string {
  if (value.length <= max) return value;
  const room = max - 1;
  let end = 0;
  for (const { index, segment } of graphemes.segment(value.slice(0, room + 16))) {
    if (index + segment.length > room) break;
    end = index + segment.length;
  }
  return `${value.slice(0, end).trimEnd()}\u2026`;
}

/**
 * One line of text for the channel: the product's one sanitizer of what people see (no bidi
 * controls or invisible characters, see core/text.ts `displayText`; the alert function applied
 * it already, and the relay applies it again to whatever the message carries), then control
 * characters and runs of whitespace become one space.
 */
const oneLine = (value: string): string =>
  displayText(value)
    .replace(/[\s\p{Cc}\p{Zl}\p{Zp}]+/gu, ' ')
    .trim();

/**
 * Slack's mrkdwn treats `&`, `<` and `>` as markup (`<!channel>` would ping everyone): escape
 * them in every piece of text that comes from the provider or from ops.
 */
export const escapeMrkdwn = (value: string): string =>
  value.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/**
 * Whether a text shows anything: Slack refuses a text object that is empty, blank or made only of
 * invisible characters (zero-width spaces, joiners, variation selectors), and with it the message.
 */
export const showsText = (text: string): boolean => /[^\s\p{Cc}\p{Default_Ignorable_Code_Point}]/u.test(text);

/** A context block of the elements that show something, or no block when none does. */
function contextBlock(elements: readonly TextObject[]): Block[] {
  const shown = elements.filter((element) => showsText(element.text)).slice(0, CONTEXT_ELEMENTS_MAX);
  return shown.length > 0 ? [{ type: 'context', elements: shown }] : [];
}

/** `escapeMrkdwn` applied after clipping so the escaped text still fits `max`. */
function clipEscaped(value: string, max: number): string {
  let limit = max;
  for (;;) {
    const escaped = escapeMrkdwn(clip(value, limit));
    if (escaped.length <= max) return escaped;
    if (limit <= 1) return '';
    // Each escape adds at most 4 units; shrinking by the overflow converges in a few rounds.
    limit = Math.max(1, limit - (escaped.length - max));
  }
}

/**
 * The URL for a `<url|label>` link, or undefined when the product's link policy does not publish
 * it (core/text.ts `publishableLink`: public `https:`/`http:` only, no credentials, no internal
 * host, not absurdly long). Characters that would end the link markup early are percent-encoded
 * (WHATWG serialization leaves `|` alone).
 */
export function linkTarget(url: string): string | undefined {
  const link = publishableLink(url);
  if (!link.ok) return undefined;
  return link.url.replace(/\|/g, '%7C').replace(/</g, '%3C').replace(/>/g, '%3E');
}

/**
 * `<target|label>` within `max`, the label escaped and cut to the room the whole address leaves;
 * undefined when that room is under {@link LINK_LABEL_MIN} (or the label's own length): the
 * address is never cut, so such a link is not shown at all.
 */
function linked(target: string, label: string, max: number): string | undefined {
  // `|` ends the URL part; in the label it is shown literally only when escaped as a lookalike.
  const shown = defanged(label.replace(/\|/g, '\u2223'), target);
  const room = max - target.length - 3;
  if (room < Math.min(escapeMrkdwn(shown).length, LINK_LABEL_MIN)) return undefined;
  return `<${target}|${clipEscaped(shown, room)}>`;
}

/**
 * Addresses written in a link's label, defanged (`https[:]//bank[.]example[.]com/login`,
 * `bank[.]example[.]com`, `www[.]bank…`): the label is provider text (a headline, an outlet's
 * name), and one that reads as another address than the link's own would show the reader one
 * address and open another. Found by review: `<https://evil.example/phish|https://bank…>`. A name
 * of the link's own host (or a domain it is under: `example.com` for `news.example.com`) is kept.
 */
function defanged(label: string, target: string): string {
  const own = hostOf(target);
  const isOwn = (host: string): boolean => {
    const name = host.toLowerCase();
    return own !== undefined && (own === name || own.endsWith(`.${name}`));
  };
  const dots = (host: string): string => (isOwn(host) ? host : host.replaceAll('.', '[.]'));
  return label
    .replace(/\b([a-z][a-z0-9+.-]*):\/\/([^\s/?#]*)/gi, (whole: string, scheme: string, host: string) =>
      isOwn(host) ? whole : `${scheme}[:]//${dots(host)}`,
    )
    .replace(/\b(?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?\.)+[a-z]{2,63}\b/gi, dots);
}

/** The host of a link target, lower case; undefined when it is no URL. */
function hostOf(target: string): string | undefined {
  try {
    return new URL(target).hostname.toLowerCase();
  } catch {
    return undefined;
  }
}

/** The note that stands for a link too long to show, in italics. */
const linkTooLongNote = (words: SlackMessages): string => `_(${escapeMrkdwn(words.linkTooLong)})_`;

/** The words and the date fallback of one document's language. */
interface Wording {
  /** Words every channel shares. */
  readonly shared: Messages;
  /** Words only Slack says. */
  readonly words: SlackMessages;
  /** The heading of the "why" section: the email's, without its colon. */
  readonly whyHeading: string;
  /** The fallback text of a date token: what a client that cannot render the token shows. */
  readonly fallbackDate: (epochMs: number) => string;
}

const isoDate = (epochMs: number) => new Date(epochMs).toISOString();

/**
 * The date fallback outside English: the document's language, in UTC (the document carries no
 * zone; the token itself shows the reader's), on a 24-hour clock like the email's dates.
 */
const localizedDateOptions: Intl.DateTimeFormatOptions = {
  year: 'numeric',
  month: 'long',
  day: 'numeric',
  weekday: 'short',
  hour: '2-digit',
  minute: '2-digit',
  hourCycle: 'h23',
  timeZone: 'UTC',
  timeZoneName: 'short',
};

/** Wordings by document locale: every message of an audience shares one. */
const wordings = new BoundedCache<string, Wording>(64);

/**
 * The wording of a document: the catalog of the language the publisher wrote its words in (it
 * walked the locale chain through the stack's `defaultLocale`, which the relay does not know), or,
 * from an older publisher without `language`, of the first shipped language on the locale's chain.
 * In English the date fallback stays the ISO instant, as before documents carried a locale.
 */
function wordingFor(locale: string | undefined, language: ShippedLocale | undefined): Wording {
  return wordings.get(`${language ?? ''}\u0000${locale ?? ''}`, () => {
    const shared =
      language === undefined ? messagesForLocale(locale, FALLBACK_LOCALE) : messagesFor(language, locale ?? language);
    const words = slackMessagesFor(shared.language, shared.count);
    const whyHeading = shared.email.whyHeading.replace(/\s*[:\uFF1A]$/u, '');
    if (shared.language === 'en' || locale === undefined) return { shared, words, whyHeading, fallbackDate: isoDate };
    // Words other than English need a well-formed tag with a shipped language in it, which
    // Intl accepts (message.ts keeps only canonical tags).
    const format = new Intl.DateTimeFormat(locale, localizedDateOptions);
    return { shared, words, whyHeading, fallbackDate: (epochMs) => format.format(epochMs) };
  });
}

/** `<!date^…>` renders in each reader's own time zone and language; the fallback in the document's. */
function slackDate(iso: string, wording: Wording): string {
  const epochMs = Date.parse(iso);
  if (Number.isNaN(epochMs)) return escapeMrkdwn(clip(oneLine(iso), 40));
  const seconds = Math.floor(epochMs / 1000);
  return `<!date^${seconds}^{date_short_pretty} {time}|${escapeMrkdwn(oneLine(wording.fallbackDate(epochMs)))}>`;
}

function categoryLabels(alert: ArticleAlert): string[] {
  const { categories, categoryNames } = alert.article;
  if (categoryNames.length > 0 && categoryNames.length === categories.length) {
    return categories.map((code, index) => {
      const name = categoryNames[index] ?? '';
      return name === '' || name === code ? code : `${name} (${code})`;
    });
  }
  return categoryNames.length > 0 ? [...categoryNames] : [...categories];
}

function describeReason(reason: { kind: string; term: string }, wording: Wording): string {
  const term = oneLine(reason.term);
  // Slack quotes a keyword typographically; every other reason reads as in the email.
  if (reason.kind === 'keyword') return wording.words.reasonKeyword(term);
  return describeReasonIn(wording.shared, oneLine(reason.kind), term);
}

/** Every reason of one rule, then how many were left out, joined as the language lists. */
function describeReasons(match: AlertMatch, wording: Wording): string {
  const reasons = match.reasons.map((reason) => describeReason(reason, wording));
  if (match.omittedReasons > 0) reasons.push(wording.shared.more(match.omittedReasons));
  return reasons.join(wording.shared.listSeparator);
}

function describeMatch(match: AlertMatch, wording: Wording): string {
  const description = match.description ? ` — ${oneLine(match.description)}` : '';
  const reasons = describeReasons(match, wording);
  const why = reasons !== '' ? `: ${reasons}` : '';
  return `${wording.words.rule(match.ruleId, match.urgent)}${description}${why}`;
}

/** The "Why you got this" section: one bullet per rule, within the section limit. */
function whySection(alert: ArticleAlert, wording: Wording): string | undefined {
  if (alert.matches.length === 0) return undefined;
  const { words } = wording;
  const heading = `*${wording.whyHeading}*`;
  const listed = alert.matches.slice(0, MAX_LISTED_RULES);
  const more = alert.matches.length - listed.length + alert.omittedMatches;
  const footer = more > 0 ? `\n${words.moreRulesLine(more)}` : '';
  const perLine = Math.floor((SECTION_MAX - heading.length - footer.length) / listed.length) - 3;
  const lines = listed.map((match) => `• ${clipEscaped(describeMatch(match, wording), perLine)}`);
  return `${heading}\n${lines.join('\n')}${footer}`;
}

/** Builds the webhook body for one alert or digest, in the language of its `locale`. */
export function renderSlackMessage(alert: Alert): SlackMessage {
  const wording = wordingFor(alert.locale, alert.language);
  if (alert.kind === 'digest') return digestMessage(alert, wording);
  if (alert.spike !== undefined) return spikeMessage(alert, alert.spike, wording);
  const { words, shared } = wording;
  const { article } = alert;
  const title = oneLine(article.title) || shared.untitled;
  const icon = alert.urgent ? '\u{1F6A8}' : '\u{1F4F0}';
  const media = oneLine(article.mediaName ?? article.media ?? '');
  const summary = oneLine(article.summary);
  // An update notice carries the same mark as its email subject and SMS, then what changed.
  const mark = alert.update === undefined ? '' : shared.update.prefix;
  const header = clip(`${icon} ${mark}${title}`, HEADER_MAX);
  const headerCut = header !== `${icon} ${mark}${title}`;

  // The header may have cut the headline: the linked headline below always carries all of it
  // that fits, then the summary fills what is left of the section.
  const linkLabel = headerCut ? title : media ? words.readArticleOn(media) : words.readArticle;
  const target = linkTarget(article.url);
  const link = target === undefined ? undefined : linked(target, linkLabel, SECTION_MAX - 2);
  const note = linkTooLongNote(words);
  // A link the policy refuses (or a test notification's, which has none) is left out, not shown
  // as text (Slack would turn a bare URL into a link again): the headline stays when the header
  // cut it, and "Read the article" without a link is not shown at all. One too long to show
  // leaves the headline, when the header cut it, and a note.
  const linkLine =
    link !== undefined
      ? `*${link}*`
      : target === undefined
        ? headerCut
          ? `*${clipEscaped(title, SECTION_MAX - 2)}*`
          : ''
        : headerCut
          ? `*${clipEscaped(title, SECTION_MAX - note.length - 3)}* ${note}`
          : note;
  const summaryRoom = SECTION_MAX - linkLine.length - 2;
  const summaryText = summary && summaryRoom > 20 ? clipEscaped(summary, summaryRoom) : '';
  // Never an empty section (Slack refuses one): the headline when there is nothing else.
  const body =
    [summaryText, linkLine].filter((part) => part !== '').join('\n\n') || `*${clipEscaped(title, SECTION_MAX - 2)}*`;

  const context: TextObject[] = [];
  if (media) context.push({ type: 'mrkdwn', text: `*${clipEscaped(media, CONTEXT_ELEMENT_MAX - 2)}*` });
  context.push({ type: 'mrkdwn', text: slackDate(article.publishedAt, wording) });
  const categories = categoryLabels(alert).map(oneLine).filter(Boolean);
  if (categories.length > 0) {
    context.push({ type: 'mrkdwn', text: clipEscaped(categories.join(', '), CONTEXT_ELEMENT_MAX) });
  }
  const status = oneLine(article.status ?? '');
  if (status) context.push({ type: 'mrkdwn', text: clipEscaped(oneLine(shared.status(status)), 100) });

  const blocks: Block[] = [{ type: 'header', text: { type: 'plain_text', text: header, emoji: true } }];
  if (alert.update !== undefined) {
    const change = clipEscaped(oneLine(describeUpdate(shared, alert.update)), SECTION_MAX - 2);
    if (showsText(change)) blocks.push({ type: 'section', text: { type: 'mrkdwn', text: `*${change}*` } });
  }
  blocks.push({ type: 'section', text: { type: 'mrkdwn', text: body } }, ...contextBlock(context));
  const why = whySection(alert, wording);
  if (why !== undefined) blocks.push({ type: 'section', text: { type: 'mrkdwn', text: why } });
  const audience = oneLine(alert.audienceName ?? '') || alert.audienceId;
  blocks.push(
    ...contextBlock([
      {
        type: 'mrkdwn',
        text: clipEscaped(words.alertFooter(audience, oneLine(alert.deliveryId)), CONTEXT_ELEMENT_MAX),
      },
    ]),
  );

  // Notifications show this text: headline first, then where it is from and the link.
  const suffix = escapeMrkdwn(`${media ? ` (${clip(media, 100)})` : ''}${target === undefined ? '' : ` ${target}`}`);
  const titleRoom = SECTION_MAX - icon.length - 1 - suffix.length;
  const marked = `${mark}${title}`;
  const text =
    titleRoom >= 20
      ? `${icon} ${clipEscaped(marked, titleRoom)}${suffix}`
      : `${icon} ${clipEscaped(marked, SECTION_MAX - icon.length - 1)}`;
  return { text, blocks, unfurl_links: false, unfurl_media: false };
}

/**
 * One digest entry: the linked headline, then outlet, time and why it matched. Its text stays
 * within {@link DIGEST_ENTRY_MAX}, with the link's address within {@link DIGEST_LINKED_ENTRY_MAX};
 * a headline whose whole link does not fit is shown without it, with a note.
 */
function digestEntryLines(entry: DigestEntry, wording: Wording): string {
  const { words, shared } = wording;
  const title = oneLine(entry.article.title) || shared.untitled;
  const media = oneLine(entry.article.mediaName ?? entry.article.media ?? '');
  const details = [media ? clipEscaped(media, 100) : '', slackDate(entry.article.publishedAt, wording)].filter(
    showsText,
  );
  const why = entry.matches.map((match) => {
    const reasons = describeReasons(match, wording);
    return `${words.rule(match.ruleId, match.urgent)}${reasons !== '' ? `: ${reasons}` : ''}`;
  });
  if (entry.omittedMatches > 0) why.push(shared.digest.moreRules(entry.omittedMatches));
  if (why.length > 0) details.push(`_${clipEscaped(why.join(shared.clauseSeparator), 240)}_`);
  const alsoIn = entry.alsoIn === undefined ? '' : clipEscaped(alsoInLine(entry.alsoIn, shared), 300);
  const second = `${details.length > 0 ? `\n    ${details.join(' \u00B7 ')}` : ''}${showsText(alsoIn) ? `\n    ${alsoIn}` : ''}`;
  const head = `• ${entry.urgent ? '\u{1F6A8} ' : ''}`;
  const headlineRoom = Math.max(LINK_LABEL_MIN, DIGEST_ENTRY_MAX - head.length - second.length);
  const target = linkTarget(entry.article.url);
  if (target === undefined) return `${head}${clipEscaped(title, headlineRoom)}${second}`;
  const linkRoom = Math.min(headlineRoom + target.length + 3, DIGEST_LINKED_ENTRY_MAX - head.length - second.length);
  const link = linked(target, title, linkRoom);
  if (link !== undefined) return `${head}${link}${second}`;
  const note = linkTooLongNote(words);
  return `${head}${clipEscaped(title, headlineRoom - note.length - 1)} ${note}${second}`;
}

/**
 * `also in 5 outlets: A, B, C and 2 more` from a digest entry's `alsoIn`, in the catalog's words
 * (the email says the same). Names beyond three are counted, not listed.
 */
function alsoInLine(alsoIn: NonNullable<DigestEntry['alsoIn']>, shared: Messages): string {
  const names = alsoIn.outlets
    .map(oneLine)
    .filter(Boolean)
    .slice(0, 3)
    .map((name) => clip(name, 40));
  const count = Math.max(alsoIn.count, names.length);
  return oneLine(shared.digest.alsoIn(count, names, count - names.length));
}

/** Stands for the label while the catalog lays out a group heading around it. */
const LABEL_SLOT = '\u0000';

/**
 * A category heading in the catalog's word order (`Economy · 5 of 12`), its label in bold: the
 * catalog lays the heading out around a slot, and the escaped label takes the slot's place.
 */
function groupHeading(shared: Messages, label: string, count: number, total: number | undefined): string {
  const layout = shared.digest.groupHeading(LABEL_SLOT, count, total ?? count);
  return layout.replace(LABEL_SLOT, () => `*${label}*`);
}

/**
 * Builds the webhook body for one digest: header with the count, a context line with why the
 * entries were held and when, one section per category (entries in the order the digest lists
 * them), and "…and N more" wherever Slack's limits stop the list.
 */
export function renderSlackDigest(digest: DigestAlert): SlackMessage {
  return digestMessage(digest, wordingFor(digest.locale, digest.language));
}

function digestMessage(digest: DigestAlert, wording: Wording): SlackMessage {
  const { words, shared } = wording;
  const { digest: body } = digest;
  const audience = oneLine(digest.audienceName ?? '') || digest.audienceId;
  const icon = digest.urgent ? '\u{1F6A8}' : '\u{1F4EC}';
  // The chat title every channel's structured body shows: `Markets desk: 3 articles (part 1/2)`.
  const title = (name: string) => shared.digest.chatTitle(name, body.count, body.part, body.parts);
  const blocks: Block[] = [
    {
      type: 'header',
      text: {
        type: 'plain_text',
        text: clip(`${icon} ${title(audience)}`, HEADER_MAX),
        emoji: true,
      },
    },
  ];
  const release = slackDate(body.releaseAt, wording);
  const context: TextObject[] = showsText(release) ? [{ type: 'mrkdwn', text: words.digestOf(release) }] : [];
  // Blank hold lines are dropped before counting, so up to eight that show something are listed.
  for (const hold of body.holds.map(oneLine).filter(showsText).slice(0, 8)) {
    context.push({ type: 'mrkdwn', text: clipEscaped(hold, CONTEXT_ELEMENT_MAX) });
  }
  blocks.push(...contextBlock(context));

  // Header, context, the "more" note and the footer stay; every other block is a category.
  const groupRoom = MAX_BLOCKS - blocks.length - 2;
  let groupsShown = 0;
  for (const group of body.groups) {
    if (groupsShown >= groupRoom) break;
    const label = clipEscaped(oneLine(group.label), 200);
    const heading = groupHeading(
      shared,
      showsText(label) ? label : escapeMrkdwn(shared.digest.otherGroup),
      group.count,
      group.total,
    );
    const lines = [heading];
    let length = heading.length;
    let listed = 0;
    for (const entry of group.entries) {
      // Room for this entry and for the "…and N more in this category" line after it.
      const line = digestEntryLines(entry, wording);
      if (length + 1 + line.length > SECTION_MAX - 60) break;
      lines.push(line);
      length += 1 + line.length;
      listed += 1;
    }
    const rest = group.entries.length - listed;
    if (rest > 0) lines.push(`_${words.moreInCategory(rest)}_`);
    blocks.push({ type: 'section', text: { type: 'mrkdwn', text: lines.join('\n') } });
    groupsShown += 1;
  }
  const hiddenGroups = body.groups.length - groupsShown;
  if (hiddenGroups > 0) {
    const hidden = body.groups.slice(groupsShown).reduce((sum, group) => sum + group.entries.length, 0);
    blocks.push({
      type: 'section',
      text: {
        type: 'mrkdwn',
        text: `_${words.moreInCategories(hidden, hiddenGroups)}_`,
      },
    });
  }
  blocks.push(
    ...contextBlock([
      {
        type: 'mrkdwn',
        text: clipEscaped(words.digestFooter(audience, oneLine(digest.deliveryId)), CONTEXT_ELEMENT_MAX),
      },
    ]),
  );

  // Notifications show this text: the count, then as many headlines as fit, then "+N more".
  const entries = body.groups.flatMap((group) => group.entries);
  const intro = `${icon} ${title(escapeMrkdwn(clip(audience, 100)))}`;
  const headlines: string[] = [];
  let textLength = intro.length + 20;
  for (const entry of entries.slice(0, 5)) {
    const headline = clipEscaped(oneLine(entry.article.title) || shared.untitled, 100);
    if (textLength + headline.length + 2 > SECTION_MAX) break;
    headlines.push(headline);
    textLength += headline.length + 2;
  }
  const more = body.count - headlines.length;
  const text = `${intro}${headlines.length > 0 ? ` \u2014 ${headlines.join('; ')}` : ''}${more > 0 ? ` ${shared.more(more)}` : ''}`;
  return { text, blocks, unfurl_links: false, unfurl_media: false };
}

/**
 * A spike alert (functions/core/spikes/): the headline, observed against expected since when, the
 * hour that fired, the outlets, the top stories (linked, with their outlet counts), the top outlets,
 * why, and the footer. An update notice (the episode doubled) says so first, like the email.
 */
function spikeMessage(alert: ArticleAlert, spike: SpikeFacts, wording: Wording): SlackMessage {
  const { words, shared } = wording;
  const title = oneLine(alert.article.title) || shared.untitled;
  const icon = '\u{1F4C8}';
  const mark = alert.update === undefined ? '' : shared.update.prefix;
  const header = clip(`${icon} ${mark}${title}`, HEADER_MAX);
  const since = slackDate(spike.since, wording);
  const until = slackDate(new Date(Date.parse(spike.openedAt) + spike.bucketMinutes * 60_000).toISOString(), wording);
  const lines = [
    shared.spike.observed(spike.observed, shared.spike.expected(spike.expected), since),
    shared.spike.lastBucket(spike.bucketCount, shared.spike.expected(spike.bucketExpected), until),
    ...(spike.outletCount > 0 ? [shared.spike.outlets(spike.outletCount)] : []),
  ];
  const blocks: Block[] = [{ type: 'header', text: { type: 'plain_text', text: header, emoji: true } }];
  if (alert.update !== undefined) {
    const change = clipEscaped(
      oneLine(
        shared.spike.escalated(
          spike.storiesSoFar ?? spike.observed,
          shared.spike.expected(spike.expectedSoFar ?? spike.expected),
        ),
      ),
      SECTION_MAX - 2,
    );
    if (showsText(change)) blocks.push({ type: 'section', text: { type: 'mrkdwn', text: `*${change}*` } });
  }
  // The sentences carry date tokens (not escaped again); the numbers and words are the catalog's.
  blocks.push({ type: 'section', text: { type: 'mrkdwn', text: clip(lines.join('\n'), SECTION_MAX) } });
  const heading = `*${escapeMrkdwn(shared.spike.topStoriesHeading.replace(/\s*[:\uFF1A]$/u, ''))}*`;
  const perStory = Math.floor((SECTION_MAX - heading.length) / Math.max(1, spike.topStories.length)) - 3;
  const stories = spike.topStories.map((story) => {
    const label = oneLine(story.title) || shared.untitled;
    const outlets = ` \u2014 ${escapeMrkdwn(shared.spike.storyOutlets(story.outlets))}`;
    const target = linkTarget(story.url);
    const link = target === undefined ? undefined : linked(target, label, perStory - outlets.length);
    return `• ${link ?? clipEscaped(label, perStory - outlets.length)}${outlets}`;
  });
  if (stories.length > 0)
    blocks.push({ type: 'section', text: { type: 'mrkdwn', text: [heading, ...stories].join('\n') } });
  const outletList = spike.topOutlets
    .map((outlet) => shared.spike.outletStories(oneLine(outlet.name), outlet.stories))
    .join(shared.listSeparator);
  if (outletList !== '') {
    blocks.push(
      ...contextBlock([
        { type: 'mrkdwn', text: clipEscaped(`${shared.spike.topOutletsHeading} ${outletList}`, CONTEXT_ELEMENT_MAX) },
      ]),
    );
  }
  const why = alert.matches.slice(0, MAX_LISTED_RULES).map((match) => {
    const description = match.description ? ` — ${oneLine(match.description)}` : '';
    return `• ${clipEscaped(`${words.rule(match.ruleId, match.urgent)}${description}: ${shared.spike.why(shared.spike.preset(spike.preset))}`, 600)}`;
  });
  if (why.length > 0) {
    blocks.push({
      type: 'section',
      text: { type: 'mrkdwn', text: `*${escapeMrkdwn(wording.whyHeading)}*\n${why.join('\n')}` },
    });
  }
  const audience = oneLine(alert.audienceName ?? '') || alert.audienceId;
  blocks.push(
    ...contextBlock([
      {
        type: 'mrkdwn',
        text: clipEscaped(words.alertFooter(audience, oneLine(alert.deliveryId)), CONTEXT_ELEMENT_MAX),
      },
    ]),
  );
  const summary = shared.spike.observed(
    spike.observed,
    shared.spike.expected(spike.expected),
    oneLine(wording.fallbackDate(Date.parse(spike.since))),
  );
  const text = `${icon} ${clipEscaped(`${mark}${title}: ${summary}`, SECTION_MAX - icon.length - 1)}`;
  return { text, blocks, unfurl_links: false, unfurl_media: false };
}
