/**
 * The email a subscriber reads, in two parts: plain text and HTML, both in the audience's
 * language. Owns these guarantees:
 *
 * - **The same words as every other channel.** An alert's text part is the SNS email body
 *   (render.ts `renderEmailBody`, update notices with their first line), built from the structured
 *   document the topic sent through the same view (`buildAlertView`) with the locale the alert
 *   function chose; digests use the shared catalog's digest words. Digests, quiet hours, budgets
 *   and story collapse happened before SNS, so this channel gets exactly what the others get.
 * - **Every value escaped, every link checked.** HTML is built with html.ts: text and attributes
 *   escaped, article links only when they are `https:`/`http:` (a withheld link shows the
 *   catalog's note, as the text part does).
 * - **Personal links only in the footer.** A draft is rendered once per notification; the
 *   subscriber's own links (preference page and one-click unsubscribe) are added by
 *   {@link personalize}, so nothing of another subscriber can end up in a message.
 *
 * Pure: no clock, no I/O.
 */
import { DIGEST_ENTRY_LIMITS, describeAlsoIn, describeWhy } from '../digest.ts';
import type { ShippedLocale } from '../locale.ts';
import { describeUpdate, type Messages } from '../messages/catalog.ts';
import { type Article, type Audience, type AudienceMatch, AudienceSchema } from '../model.ts';
import {
  type AlertView,
  audienceViewOf,
  buildAlertView,
  describeReasons,
  formatLocalTime,
  formatShortLocalTime,
  type RenderOptions,
  renderEmailBody,
  renderFooter,
  renderSubject,
  singleLine,
  truncateText,
} from '../render.ts';
import { ruleLabelOf } from '../spikes/alert.ts';
import type { SpikeDocument } from '../spikes/document.ts';
import {
  type SpikeView,
  soFarExpected,
  spikeDigestHeadline,
  emailBody as spikeEmailBody,
  spikeFactsOf,
  spikeView,
} from '../spikes/render.ts';
import { escapeHtml, link, multiline } from './html.ts';
import { type EmailWords, emailWordsFor } from './messages/catalog.ts';
import type {
  AlertNotification,
  DigestEntryDocument,
  DigestNotification,
  DocumentArticle,
  DocumentMatch,
} from './notification.ts';

/** The subscriber's own links, added to every message. */
export interface SubscriberLinks {
  /** The preference page. */
  readonly manage: string;
  /** The one-click unsubscribe URL (RFC 8058): a POST there unsubscribes from this audience. */
  readonly unsubscribe: string;
}

/** A message rendered for one notification, before the subscriber's links are added. */
export interface EmailDraft {
  readonly kind: 'alert' | 'update' | 'digest' | 'daily-digest';
  readonly deliveryId: string;
  readonly audienceId: string;
  /** Name when set, otherwise the id (at most 40 characters). */
  readonly audienceLabel: string;
  /** The effective locale (BCP 47): the `lang` of the HTML and the Content-Language header. */
  readonly locale: string;
  readonly language: ShippedLocale;
  readonly subject: string;
  /** The text part without the subscriber's links. */
  readonly text: string;
  /** The HTML of the message body (inside `<main>`). */
  readonly html: string;
  /** The footer lines of the audience's template. */
  readonly footer: string;
  readonly urgent: boolean;
}

/** One message as it is sent: subject, text part and HTML document. */
export interface RenderedEmail {
  readonly subject: string;
  readonly text: string;
  readonly html: string;
}

/** Options of the composers. */
export interface ComposeOptions {
  /** The stack's `defaultLocale`. */
  readonly defaultLocale?: string | undefined;
}

/**
 * The audience an email is rendered for when its item cannot be read any more (deleted after the
 * alert was sent): built from the document, UTC times. The message still goes out.
 */
export function audienceFromDocument(document: {
  readonly audienceId: string;
  readonly audienceName?: string | null | undefined;
  readonly locale?: string | undefined;
}): Audience {
  return AudienceSchema.parse({
    audienceId: document.audienceId,
    ...(document.audienceName ? { name: document.audienceName.slice(0, 100) } : {}),
    topicArn: 'arn:aws:sns:us-east-1:000000000000:unknown',
    ...(document.locale ? { locale: document.locale } : {}),
  });
}

const toArticle = (article: DocumentArticle): Article => ({
  key: article.key,
  id: article.id ?? undefined,
  title: article.title,
  summary: article.summary,
  url: article.url,
  ...(article.linkWithheld === true ? { linkWithheld: true } : {}),
  publishedAt: Date.parse(article.publishedAt),
  categories: article.categories,
  categoryNames: article.categoryNames,
  media: article.media ?? undefined,
  mediaName: article.mediaName ?? undefined,
  status: article.status ?? undefined,
});

const toMatch = (audienceId: string, article: DocumentArticle, matches: readonly DocumentMatch[]): AudienceMatch => ({
  audienceId,
  article: toArticle(article),
  rules: matches.map((match) => ({
    ruleId: match.ruleId,
    description: match.description ?? undefined,
    urgent: match.urgent,
    reasons: match.reasons.map((reason) => ({ kind: reason.kind as 'keyword', term: reason.term })),
  })),
});

/** The render options that give the locale the publisher chose (so the words match the other channels). */
const renderOptions = (locale: string | undefined, options: ComposeOptions): RenderOptions => ({
  ...(locale === undefined ? {} : { locale }),
  defaultLocale: options.defaultLocale,
  // The alert function vetted the link before it published; one withheld then stays withheld.
  linkPolicy: 'omit',
});

/** The words of the email channel in the language of an audience view. */
const wordsOf = (view: AlertView['audience']): EmailWords => emailWordsFor(view.messages.language);

/**
 * The audience as an email renders it. The built-in footer tells subscribers to ask ops to remove
 * their address, which fits SNS email and SMS; an SES email has its own unsubscribe link beside
 * it, so an audience without a footer template of its own gets the email catalog's footer instead.
 */
function emailAudience(view: AlertView['audience']): AlertView['audience'] {
  if (view.wording.footer !== view.messages.templates.footer) return view;
  return { ...view, wording: { ...view.wording, footer: wordsOf(view).mail.footer } };
}

// --- Alerts and update notices --------------------------------------------------------------------

/**
 * The draft of a single alert (or update notice) for `audience`: its text part is the SNS email
 * body of the same alert.
 */
export function composeAlert(
  notification: AlertNotification,
  audience: Audience,
  subject: string | undefined,
  options: ComposeOptions = {},
): EmailDraft {
  if (notification.spike !== undefined)
    return composeSpikeAlert(notification, notification.spike, audience, subject, options);
  const built = buildAlertView(
    toMatch(audience.audienceId, notification.article, notification.matches),
    audience,
    renderOptions(notification.locale, options),
  );
  const view: AlertView = {
    ...built,
    audience: emailAudience(built.audience),
    deliveryId: notification.deliveryId,
    omittedMatches: built.omittedMatches + notification.omittedMatches,
  };
  const { messages } = view.audience;
  const update = notification.update;
  const updateLine = update === undefined ? undefined : describeUpdate(messages, update);
  const text = updateLine === undefined ? renderEmailBody(view) : `${updateLine}\n\n${renderEmailBody(view)}`;
  const fallbackSubject = renderSubject(view, update === undefined ? '' : messages.update.prefix);
  return {
    kind: update === undefined ? 'alert' : 'update',
    deliveryId: notification.deliveryId,
    audienceId: audience.audienceId,
    audienceLabel: view.audience.label,
    locale: view.audience.locale,
    language: messages.language,
    subject: cleanSubject(subject) ?? fallbackSubject,
    text,
    html: alertHtml(view, wordsOf(view.audience), updateLine),
    footer: renderFooter(view.audience),
    urgent: view.urgent,
  };
}

function alertHtml(view: AlertView, words: EmailWords, updateLine: string | undefined): string {
  const { article } = view;
  const { messages } = view.audience;
  const { labels } = messages.email;
  const facts: [string, string][] = [];
  const source =
    article.mediaName !== undefined && article.media !== undefined && article.mediaName !== article.media
      ? `${article.mediaName} (${article.media})`
      : article.mediaLabel;
  if (source) facts.push([labels.source, source]);
  facts.push([labels.published, article.publishedLocal]);
  if (article.categoryLabels.length > 0) {
    facts.push([
      article.categoryLabels.length === 1 ? labels.category : labels.categories,
      article.categoryLabels.join(messages.listSeparator),
    ]);
  }
  if (article.status !== undefined) facts.push([labels.status, messages.status(article.status)]);
  const parts: string[] = [];
  if (updateLine !== undefined) parts.push(`<p class="notice">${escapeHtml(updateLine)}</p>`);
  parts.push(`<h1>${view.urgent ? escapeHtml(messages.digest.urgentMarker) : ''}${headline(article)}</h1>`);
  if (article.summary !== '') parts.push(`<p>${escapeHtml(article.summary)}</p>`);
  parts.push(
    `<dl>${facts.map(([term, value]) => `<dt>${escapeHtml(term)}</dt><dd>${escapeHtml(value)}</dd>`).join('')}</dl>`,
  );
  if (article.url !== '') {
    parts.push(`<p class="action">${link(article.url, words.mail.readArticle, ' class="button"')}</p>`);
  } else if (article.linkWithheld) parts.push(`<p>${escapeHtml(messages.email.linkWithheld)}</p>`);
  parts.push(
    `<h2>${escapeHtml(heading(messages.email.whyHeading))}</h2>`,
    whyList(view.matches, view.omittedMatches, messages),
  );
  parts.push(`<p class="small">${escapeHtml(messages.email.alertId(singleLine(view.deliveryId)))}</p>`);
  return parts.join('\n');
}

/**
 * A spike alert's headline in a subscriber's daily digest, with its figures (the audience digest
 * shows the same: `Coverage spike: chips: 42 new stories since 14:00 (about 6 expected)`); undefined
 * for any other notification.
 */
export function spikeDigestTitleOf(
  notification: AlertNotification,
  audience: Audience,
  options: ComposeOptions = {},
): string | undefined {
  const part = notification.spike;
  if (part === undefined) return undefined;
  const rule = notification.matches.find((match) => match.ruleId === part.ruleId) ?? notification.matches[0];
  const ruleLabel = ruleLabelOf({ ruleId: part.ruleId, description: rule?.description ?? undefined });
  return spikeDigestHeadline(
    {
      ...toMatch(audience.audienceId, notification.article, notification.matches),
      spike: spikeFactsOf(part, ruleLabel),
    },
    audience,
    renderOptions(notification.locale, options),
  );
}

/**
 * The draft of a spike alert (or its update notice): the same text SNS email subscribers get
 * (spikes/render.ts, rebuilt from the episode in the document), and the episode in HTML.
 */
function composeSpikeAlert(
  notification: AlertNotification,
  part: SpikeDocument,
  audience: Audience,
  subject: string | undefined,
  options: ComposeOptions,
): EmailDraft {
  const base = toMatch(audience.audienceId, notification.article, notification.matches);
  const rule = notification.matches.find((match) => match.ruleId === part.ruleId) ?? notification.matches[0];
  const ruleLabel = ruleLabelOf({ ruleId: part.ruleId, description: rule?.description ?? undefined });
  const built = spikeView(
    { ...base, spike: spikeFactsOf(part, ruleLabel) },
    audience,
    renderOptions(notification.locale, options),
  );
  const spike: SpikeView = {
    ...built,
    view: { ...built.view, audience: emailAudience(built.view.audience), deliveryId: notification.deliveryId },
  };
  const { view } = spike;
  const { messages } = view.audience;
  const updateLine =
    notification.update === undefined
      ? undefined
      : messages.spike.escalated(spike.facts.storiesSoFar, messages.spike.expected(soFarExpected(spike.facts)));
  return {
    kind: notification.update === undefined ? 'alert' : 'update',
    deliveryId: notification.deliveryId,
    audienceId: audience.audienceId,
    audienceLabel: view.audience.label,
    locale: view.audience.locale,
    language: messages.language,
    subject:
      cleanSubject(subject) ?? renderSubject(view, notification.update === undefined ? '' : messages.update.prefix),
    text: spikeEmailBody(spike, updateLine),
    html: spikeHtml(spike, updateLine),
    footer: renderFooter(view.audience),
    urgent: view.urgent,
  };
}

function spikeHtml(spike: SpikeView, updateLine: string | undefined): string {
  const { view } = spike;
  const { messages } = view.audience;
  const parts: string[] = [];
  if (updateLine !== undefined) parts.push(`<p class="notice">${escapeHtml(updateLine)}</p>`);
  parts.push(`<h1>${escapeHtml(spike.headline)}</h1>`);
  const lines = [spike.observedLine, spike.bucketLine, ...(spike.facts.outletCount > 0 ? [spike.outletsLine] : [])];
  parts.push(lines.map((line) => `<p>${escapeHtml(line)}</p>`).join('\n'));
  if (spike.stories.length > 0) {
    parts.push(
      `<h2>${escapeHtml(heading(messages.spike.topStoriesHeading))}</h2>`,
      `<ul>${spike.stories
        .map(
          (story) =>
            `<li>${story.url === '' ? escapeHtml(story.title) : link(story.url, story.title)} \u2014 ${escapeHtml(messages.spike.storyOutlets(story.outlets))}</li>`,
        )
        .join('')}</ul>`,
    );
  }
  if (spike.outletsList !== '') {
    parts.push(`<p>${escapeHtml(`${messages.spike.topOutletsHeading} ${spike.outletsList}`)}</p>`);
  }
  parts.push(
    `<h2>${escapeHtml(heading(messages.email.whyHeading))}</h2>`,
    `<ul>${view.matches
      .map(
        (match) =>
          `<li>${escapeHtml(messages.email.rule(match.ruleId, match.description, match.urgent).replace(/^-\s*/, ''))}: ${escapeHtml(spike.whyLine)}</li>`,
      )
      .join('')}</ul>`,
    `<p class="small">${escapeHtml(messages.email.alertId(singleLine(view.deliveryId)))}</p>`,
  );
  return parts.join('\n');
}

/** A heading without the colon the text part ends it with (`Why you got this:`). */
const heading = (text: string): string => text.replace(/\s*[:：]\s*$/u, '');

/** The headline, linked to the article when it has a link. */
const headline = (article: { readonly title: string; readonly url: string }): string =>
  article.url === '' ? escapeHtml(article.title) : link(article.url, article.title);

function whyList(matches: AlertView['matches'], omitted: number, messages: Messages): string {
  const items = matches.map((match) => {
    const rule = messages.email.rule(match.ruleId, match.description, match.urgent).replace(/^-\s*/, '');
    const reasons =
      match.reasons.length > 0 ? `<br><span class="small">${escapeHtml(describeReasons(match, messages))}</span>` : '';
    return `<li>${escapeHtml(rule)}${reasons}</li>`;
  });
  if (omitted > 0) items.push(`<li>${escapeHtml(messages.email.moreRules(omitted).replace(/^-\s*/, ''))}</li>`);
  return items.length === 0 ? '' : `<ul>${items.join('')}</ul>`;
}

// --- Digests --------------------------------------------------------------------------------------

/** One entry of a digest as an email shows it. */
interface EntryView {
  readonly index: number;
  readonly view: AlertView;
  readonly publishedShort: string;
  readonly alsoIn?: { readonly count: number; readonly outlets: readonly string[] } | undefined;
}

interface GroupView {
  readonly label: string;
  readonly count: number;
  readonly total: number;
  readonly entries: readonly EntryView[];
}

function entryViews(
  groups: DigestNotification['digest']['groups'],
  audience: Audience,
  locale: string | undefined,
  options: ComposeOptions,
): GroupView[] {
  let index = 0;
  return groups
    .map((group) => {
      const entries: EntryView[] = [];
      for (const entry of group.entries) {
        const built = buildAlertView(toMatch(audience.audienceId, entry.article, entry.matches), audience, {
          ...renderOptions(locale, options),
          limits: DIGEST_ENTRY_LIMITS,
        });
        index += 1;
        entries.push({
          index,
          view: {
            ...built,
            deliveryId: entry.deliveryId || built.deliveryId,
            omittedMatches: built.omittedMatches + entry.omittedMatches,
            urgent: built.urgent || entry.urgent,
          },
          publishedShort: formatShortLocalTime(built.article.publishedAt, audience.timeZone, built.audience.locale),
          alsoIn: entry.alsoIn,
        });
      }
      return { label: singleLine(group.label), count: entries.length, total: group.total ?? entries.length, entries };
    })
    .filter((group) => group.entries.length > 0);
}

/**
 * The draft of an audience digest (everything held for the audience: digest mode, quiet hours,
 * daily budget): the catalog's digest words, every entry grouped by category with its link and
 * why it matched. Entries are numbered within the message.
 */
export function composeDigest(
  notification: DigestNotification,
  audience: Audience,
  subject: string | undefined,
  options: ComposeOptions = {},
): EmailDraft {
  const groups = entryViews(notification.digest.groups, audience, notification.locale, options);
  const audienceView = emailAudience(audienceViewOf(audience, renderOptions(notification.locale, options)));
  const { messages } = audienceView;
  const { digest } = notification;
  const releaseAt = Date.parse(digest.releaseAt);
  const when = Number.isFinite(releaseAt) ? formatLocalTime(releaseAt, audience.timeZone, audienceView.locale) : '';
  const title =
    digest.parts > 1
      ? `${messages.digest.title(audienceView.label, digest.total)} (${messages.digest.part(digest.part, digest.parts)})`
      : messages.digest.title(audienceView.label, digest.total);
  const holds = digest.holds.map((line) => singleLine(line)).filter((line) => line !== '');
  const lines: string[] = [title, when];
  if (holds.length > 0) lines.push('', messages.digest.heldHeading, ...holds.map((line) => `- ${line}`));
  lines.push(...digestTextEntries(groups, messages));
  lines.push('', '--', renderFooter(audienceView), messages.digest.digestId(singleLine(notification.deliveryId)));
  const summary = holds.length > 0 ? { heading: messages.digest.heldHeading, lines: holds } : undefined;
  return {
    kind: 'digest',
    deliveryId: notification.deliveryId,
    audienceId: audience.audienceId,
    audienceLabel: audienceView.label,
    locale: audienceView.locale,
    language: messages.language,
    subject: cleanSubject(subject) ?? truncateText(title, 99),
    text: lines.join('\n'),
    html: digestHtml(title, when, summary, groups, messages, notification.deliveryId),
    footer: renderFooter(audienceView),
    urgent: groups.some((group) => group.entries.some((entry) => entry.view.urgent)),
  };
}

/**
 * The draft of a subscriber's own daily digest (the page's "one daily digest"): every alert held
 * for this subscriber since the last one, grouped by category, in the audience's language.
 */
export function composeDailyDigest(
  input: {
    readonly deliveryId: string;
    readonly entries: readonly DigestEntryDocument[];
    readonly locale: string | undefined;
    readonly releaseAt: number;
  },
  audience: Audience,
  options: ComposeOptions = {},
): EmailDraft {
  const audienceView = emailAudience(audienceViewOf(audience, renderOptions(input.locale, options)));
  const { messages } = audienceView;
  const words = emailWordsFor(messages.language);
  const byGroup = new Map<string, DigestEntryDocument[]>();
  for (const entry of input.entries) {
    const label = entry.article.categoryNames[0] ?? entry.article.categories[0] ?? messages.digest.otherGroup;
    byGroup.set(label, [...(byGroup.get(label) ?? []), entry]);
  }
  const groups = entryViews(
    [...byGroup].map(([label, entries]) => ({ label, count: entries.length, entries })),
    audience,
    input.locale,
    options,
  );
  const count = groups.reduce((sum, group) => sum + group.entries.length, 0);
  const when = formatLocalTime(input.releaseAt, audience.timeZone, audienceView.locale);
  const title = words.dailyDigest.heading(audienceView.label, messages.articles(count));
  const lines = [title, when, '', words.dailyDigest.intro, ...digestTextEntries(groups, messages)];
  lines.push('', '--', renderFooter(audienceView), messages.digest.digestId(singleLine(input.deliveryId)));
  return {
    kind: 'daily-digest',
    deliveryId: input.deliveryId,
    audienceId: audience.audienceId,
    audienceLabel: audienceView.label,
    locale: audienceView.locale,
    language: messages.language,
    subject: truncateText(singleLine(words.dailyDigest.subject(audienceView.label, messages.articles(count))), 99),
    text: lines.join('\n'),
    html: digestHtml(title, when, { heading: words.dailyDigest.intro, lines: [] }, groups, messages, input.deliveryId),
    footer: renderFooter(audienceView),
    urgent: groups.some((group) => group.entries.some((entry) => entry.view.urgent)),
  };
}

function digestTextEntries(groups: readonly GroupView[], messages: Messages): string[] {
  const lines: string[] = [];
  for (const group of groups) {
    lines.push('', messages.digest.groupHeading(group.label, group.count, group.total));
    for (const entry of group.entries) {
      const { article } = entry.view;
      const number = `${entry.index}. `;
      const indent = ' '.repeat(number.length);
      lines.push(`${number}${entry.view.urgent ? messages.digest.urgentMarker : ''}${article.title}`);
      const status = article.status === undefined ? undefined : messages.status(article.status);
      const facts = [article.mediaLabel, entry.publishedShort, status].filter(
        (fact) => fact !== undefined && fact !== '',
      );
      lines.push(`${indent}${facts.join(' \u00B7 ')}`);
      if (entry.alsoIn !== undefined) lines.push(`${indent}${alsoInText(entry, messages)}`);
      if (article.url !== '' || article.linkWithheld) {
        lines.push(`${indent}${article.url === '' ? messages.email.linkWithheld : article.url}`);
      }
      const why = describeWhy(entry.view, messages);
      if (why !== '') lines.push(`${indent}${messages.digest.whyLine(why)}`);
    }
  }
  return lines;
}

const alsoInText = (entry: EntryView, messages: Messages): string =>
  entry.alsoIn === undefined
    ? ''
    : describeAlsoIn(
        {
          count: entry.alsoIn.count,
          outlets: entry.alsoIn.outlets
            .map((name) => truncateText(singleLine(name), 40))
            .filter((name) => name !== '')
            .slice(0, 3),
        },
        messages,
      );

function digestHtml(
  title: string,
  when: string,
  summary: { readonly heading: string; readonly lines: readonly string[] } | undefined,
  groups: readonly GroupView[],
  messages: Messages,
  deliveryId: string,
): string {
  const parts = [`<h1>${escapeHtml(title)}</h1>`];
  if (when !== '') parts.push(`<p class="small">${escapeHtml(when)}</p>`);
  if (summary !== undefined) {
    parts.push(`<p>${escapeHtml(heading(summary.heading))}</p>`);
    if (summary.lines.length > 0)
      parts.push(`<ul>${summary.lines.map((line) => `<li>${escapeHtml(line)}</li>`).join('')}</ul>`);
  }
  for (const group of groups) {
    parts.push(`<h2>${escapeHtml(messages.digest.groupHeading(group.label, group.count, group.total))}</h2>`);
    const items = group.entries.map((entry) => {
      const { article } = entry.view;
      const status = article.status === undefined ? undefined : messages.status(article.status);
      const facts = [article.mediaLabel, entry.publishedShort, status].filter(
        (fact) => fact !== undefined && fact !== '',
      );
      const why = describeWhy(entry.view, messages);
      const lines = [
        `<p class="entry">${entry.view.urgent ? escapeHtml(messages.digest.urgentMarker) : ''}${headline(article)}</p>`,
        `<p class="small">${escapeHtml(facts.join(' \u00B7 '))}</p>`,
      ];
      if (entry.alsoIn !== undefined) lines.push(`<p class="small">${escapeHtml(alsoInText(entry, messages))}</p>`);
      if (article.linkWithheld) lines.push(`<p class="small">${escapeHtml(messages.email.linkWithheld)}</p>`);
      if (why !== '') lines.push(`<p class="small">${escapeHtml(messages.digest.whyLine(why))}</p>`);
      return `<li>${lines.join('')}</li>`;
    });
    parts.push(`<ol start="${group.entries[0]?.index ?? 1}">${items.join('')}</ol>`);
  }
  parts.push(`<p class="small">${escapeHtml(messages.digest.digestId(singleLine(deliveryId)))}</p>`);
  return parts.join('\n');
}

/** A subject as it may go in a header: one line, at most 99 characters; undefined when empty. */
function cleanSubject(subject: string | undefined): string | undefined {
  if (subject === undefined) return undefined;
  const cleaned = truncateText(singleLine(subject), 99);
  return cleaned === '' ? undefined : cleaned;
}

// --- The message around the draft -------------------------------------------------------------------

const STYLE = [
  'body{margin:0;padding:0;background:#f4f5f7;color:#1b1f24;font:16px/1.5 -apple-system,"Segoe UI",Roboto,"Noto Sans","Noto Sans CJK KR","Noto Sans JP",sans-serif}',
  'main,footer{max-width:640px;margin:0 auto;padding:16px 20px;background:#fff}',
  'footer{background:#f4f5f7;color:#3d4450;font-size:14px}',
  'h1{font-size:22px;line-height:1.3;margin:8px 0 12px}',
  'h2{font-size:17px;margin:20px 0 8px}',
  'a{color:#0b57d0}',
  'a.button{display:inline-block;padding:10px 16px;background:#0b57d0;color:#fff;text-decoration:none;border-radius:6px}',
  'dl{margin:12px 0}dt{font-weight:600;margin-top:4px}dd{margin:0 0 4px}',
  '.small{font-size:14px;color:#3d4450}',
  '.notice{padding:8px 12px;background:#fff4ce;border-left:4px solid #b58100}',
  '.entry{margin:0;font-weight:600}',
  'ol,ul{padding-left:22px}li{margin-bottom:10px}',
  '@media (prefers-color-scheme: dark){body,footer{background:#111418;color:#e6e8eb}main{background:#1b1f24;color:#e6e8eb}.small,footer{color:#c2c7ce}a{color:#8ab4f8}a.button{background:#8ab4f8;color:#111418}.notice{background:#3a2f00;color:#fff4ce}}',
].join('\n');

/**
 * The message one subscriber receives: the draft with the subscriber's links added to both parts
 * (preference page and one-click unsubscribe), and the HTML wrapped into a whole document in the
 * audience's language.
 */
export function personalize(draft: EmailDraft, links: SubscriberLinks): RenderedEmail {
  const words = emailWordsFor(draft.language);
  const unsubscribe = words.mail.unsubscribe(draft.audienceLabel);
  const text = [
    draft.text,
    '',
    words.mail.why(draft.audienceLabel),
    `${words.mail.manage}: ${links.manage}`,
    `${unsubscribe}: ${links.unsubscribe}`,
  ].join('\n');
  const footer = [
    `<p>${escapeHtml(words.mail.why(draft.audienceLabel))}</p>`,
    `<p>${link(links.manage, words.mail.manage)} &#183; ${link(links.unsubscribe, unsubscribe)}</p>`,
    draft.footer === '' ? '' : `<p class="small">${multiline(draft.footer)}</p>`,
  ].join('\n');
  return { subject: draft.subject, text, html: htmlDocument(draft.locale, draft.subject, draft.html, footer) };
}

/** A whole HTML document (`lang` set, UTF-8, a viewport for phones) around body and footer. */
export function htmlDocument(locale: string, title: string, main: string, footer: string): string {
  return [
    '<!DOCTYPE html>',
    `<html lang="${escapeHtml(locale)}">`,
    '<head>',
    '<meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    '<meta name="color-scheme" content="light dark">',
    `<title>${escapeHtml(title)}</title>`,
    `<style>\n${STYLE}\n</style>`,
    '</head>',
    '<body>',
    `<main>\n${main}\n</main>`,
    `<footer>\n${footer}\n</footer>`,
    '</body>',
    '</html>',
    '',
  ].join('\n');
}

/**
 * The confirmation email of a new address (double opt-in): what was asked, one link to confirm,
 * and that ignoring it is safe. In the language of `locale` (the audience's).
 */
export function composeConfirmation(input: {
  readonly audienceLabel: string;
  readonly language: ShippedLocale;
  readonly locale: string;
  readonly confirmUrl: string;
}): RenderedEmail {
  const words = emailWordsFor(input.language).confirm;
  const label = singleLine(input.audienceLabel);
  const subject = truncateText(singleLine(words.subject(label)), 99);
  const text = [
    words.heading(label),
    '',
    words.body(label),
    '',
    `${words.button}: ${input.confirmUrl}`,
    '',
    words.ignore,
  ].join('\n');
  const main = [
    `<h1>${escapeHtml(words.heading(label))}</h1>`,
    `<p>${escapeHtml(words.body(label))}</p>`,
    `<p class="action">${link(input.confirmUrl, words.button, ' class="button"')}</p>`,
  ].join('\n');
  return { subject, text, html: htmlDocument(input.locale, subject, main, `<p>${escapeHtml(words.ignore)}</p>`) };
}
