/**
 * Digests: the one message an audience receives for everything that was held for it (digest mode,
 * quiet hours, daily budget overflow). Like render.ts, in two steps:
 *
 * 1. {@link buildDigestView} turns held notifications into a view model: entries normalized by
 *    render.ts's {@link buildAlertView} (so a headline looks the same in an alert and a digest),
 *    grouped by category with counts, and why they were held;
 * 2. channel renderers lay the view out: an email subject (template `digestSubject`) and plain-text
 *    body listing every entry with the rule(s) and term(s) that matched; an SMS with the count and
 *    the top headlines within the audience's segment budget ("+N more"); and the structured JSON
 *    document (an Amazon Q Developer custom notification with a versioned `newsAlerts` part of
 *    kind `digest`), which the Slack relay also renders.
 *
 * A digest message carries the structured document under `default` rather than under six
 * protocol keys as an alert does: every protocol without its own key (https, http, sqs, lambda,
 * email-json, firehose) receives `default`, so subscribers see the same thing, and a message under
 * SNS's 256 KB limit holds about four times as many entries. When a release is still too large it
 * is split into numbered parts ({@link planDigest}): every held entry is in exactly one part.
 *
 * An entry whose match carries a story (`match.storyId`, collapsed copies of it were not sent) says
 * where else the story ran: "also in N outlets: A, B, C and 2 more" on every channel, from the story
 * records the release step read (`DigestRenderOptions.stories`); without a record, no line.
 *
 * Every fixed word comes from the audience's message catalog (functions/core/messages/), resolved
 * once per audience and locale by render.ts's {@link audienceViewOf}; the structured document keeps
 * English keys and names its locale (`newsAlerts.locale`).
 *
 * Pure: no clock, no I/O.
 */

import { ledgerFacts } from './ledger-facts.ts';
import { ENGLISH, type Messages } from './messages/catalog.ts';
import type { Audience, AudienceMatch, RuleMatch } from './model.ts';
import {
  type DigestRelease,
  deliveryId,
  digestKey,
  type HeldNotification,
  HOLD_REASONS,
  type HoldReason,
  maxStoryOutlets,
  type OutboundMessage,
  type StoryRecord,
} from './ports.ts';
import {
  type AlertView,
  audienceViewOf,
  buildAlertView,
  chatSafe,
  describeReasons,
  formatInZone,
  formatLocalTime,
  formatShortLocalTime,
  type MatchView,
  MessageTooLargeError,
  messageBytes,
  NotificationRenderError,
  type RenderOptions,
  renderFooter,
  SNS_MAX_MESSAGE_BYTES,
  singleLine,
  subjectFromTemplate,
  trimToFit,
  truncateText,
  utf8Bytes,
  VIEW_LIMITS,
  type ViewLimits,
} from './render.ts';
import { fitsSms, isGsm7, toGsmFriendly } from './sms.ts';
import { isSpikeAlertKey } from './spikes/alert.ts';

/** `metadata.eventType` of a digest's structured body. */
export const DIGEST_EVENT_TYPE = 'news-alerts.digest';

/** The digest email subject when the audience has no `templates.digestSubject` (English; every catalog has its own). */
export const DEFAULT_DIGEST_SUBJECT_TEMPLATE = ENGLISH.templates.digestSubject;

/** Most held notifications one release takes; the rest go in the next run's release. */
export const MAX_RELEASE_ITEMS = 1000;

/** Longest `content.description` of the structured body (chat channels show it whole). */
const CHAT_DESCRIPTION_MAX = 3000;

/** Room kept free in each part for everything but the entries (headers, SMS, subject, chat text). */
const PART_OVERHEAD_BYTES = 48 * 1024;

/** How much of each entry a digest keeps (the standard tier; smaller ones come from VIEW_LIMITS). */
export const DIGEST_ENTRY_LIMITS: ViewLimits = {
  titleUnits: 300,
  summaryUnits: 300,
  maxCategories: 10,
  categoryUnits: 80,
  maxRules: 10,
  maxReasonsPerRule: 5,
  descriptionUnits: 150,
  termUnits: 100,
};

// --- Held notifications ---------------------------------------------------------------------------

/** Bounds on what a held item stores: plenty for a digest, and far below DynamoDB's 400 KB item. */
const HELD_LIMITS = { titleUnits: 500, summaryUnits: 500, values: 20, valueUnits: 100, rules: 50, reasons: 20 };

const bounded = (value: string | undefined, units: number) =>
  value === undefined ? undefined : truncateText(value, units);

/**
 * The held form of a match: the article and rules bounded in size (a digest shows a short entry,
 * not the whole summary), every rule id kept for the ledger.
 */
export function toHeldNotification(
  match: AudienceMatch,
  reason: HoldReason,
  heldAt: number,
  /** The headline the digest shows, when not the article's (a spike's, with its figures); the ledger facts keep the article's. */
  shownTitle?: string,
): HeldNotification {
  const { article } = match;
  const values = (list: readonly string[]) =>
    list.slice(0, HELD_LIMITS.values).map((value) => truncateText(value, HELD_LIMITS.valueUnits));
  const rules: RuleMatch[] = match.rules.slice(0, HELD_LIMITS.rules).map((rule) => ({
    ruleId: rule.ruleId,
    description: bounded(rule.description, HELD_LIMITS.summaryUnits),
    urgent: rule.urgent,
    reasons: rule.reasons
      .slice(0, HELD_LIMITS.reasons)
      .map((item) => ({ kind: item.kind, term: truncateText(item.term, HELD_LIMITS.valueUnits) })),
  }));
  return {
    key: { audienceId: match.audienceId, articleKey: article.key },
    heldAt,
    facts: ledgerFacts(article, match.storyId),
    reason,
    ruleIds: match.rules.map((rule) => rule.ruleId),
    match: {
      audienceId: match.audienceId,
      // Kept so the digest can say where else the story ran.
      ...(match.storyId === undefined ? {} : { storyId: match.storyId }),
      rules,
      article: {
        key: article.key,
        id: article.id,
        title: truncateText(shownTitle ?? article.title, HELD_LIMITS.titleUnits),
        summary: truncateText(article.summary, HELD_LIMITS.summaryUnits),
        url: article.url,
        publishedAt: article.publishedAt,
        categories: values(article.categories),
        categoryNames: values(article.categoryNames),
        media: bounded(article.media, HELD_LIMITS.valueUnits),
        mediaName: bounded(article.mediaName, HELD_LIMITS.valueUnits),
        status: bounded(article.status, HELD_LIMITS.valueUnits),
      },
    },
  };
}

// --- The view model -------------------------------------------------------------------------------

/** Options of the digest renderers: the alert's, plus the stories of the entries. */
export interface DigestRenderOptions extends RenderOptions {
  /**
   * Story records by story id (read once per release step, `StoryIndex.readStories`): an entry
   * whose `match.storyId` has one names the story's other outlets. Absent: no entry does.
   */
  readonly stories?: ReadonlyMap<string, StoryRecord> | undefined;
}

/** Outlet names an "also in" line shows before "and N more". */
export const ALSO_IN_NAMES = 3;

/** Where else an entry's story ran: the other outlets (count) and the first few names. */
export interface AlsoInView {
  /** Distinct outlets of the story other than the entry's own. */
  readonly count: number;
  /** Up to {@link ALSO_IN_NAMES} of their names, one line each, first seen first. */
  readonly outlets: readonly string[];
}

/**
 * The "also in" part of an entry from its story's record, or undefined when the story ran nowhere
 * else (or the entry has no story). The entry's own outlet is not counted or named: the record
 * counts it when it is among the names, or when the names were capped before it.
 */
export function alsoInOf(
  own: Pick<AlertView['article'], 'media' | 'mediaName'>,
  record: StoryRecord | undefined,
): AlsoInView | undefined {
  if (record === undefined) return undefined;
  const mine = new Set([own.mediaName, own.media].filter((name): name is string => name !== undefined));
  const others = record.outlets.filter((name) => !mine.has(singleLine(name)) && !mine.has(name));
  const ownCounted =
    mine.size > 0 && (others.length < record.outlets.length || record.outlets.length >= maxStoryOutlets);
  const count = Math.max(others.length, record.outletCount - (ownCounted ? 1 : 0));
  if (count <= 0) return undefined;
  const outlets = others
    .map((name) => truncateText(singleLine(name), 40))
    .filter((name) => name !== '')
    .slice(0, ALSO_IN_NAMES);
  return { count, outlets };
}

/** The "also in" line in the audience's words; `names: false` says the count alone. */
export function describeAlsoIn(alsoIn: AlsoInView, messages: Messages, names = true): string {
  const shown = names ? alsoIn.outlets : [];
  return messages.digest.alsoIn(alsoIn.count, shown, alsoIn.count - shown.length);
}

/** One held article as a digest shows it. */
export interface DigestEntryView {
  /** 1-based position in the whole release (parts continue the numbering). */
  readonly index: number;
  /** `<audienceId>|<articleKey>`: the id the article would have had as an alert. */
  readonly deliveryId: string;
  readonly heldAt: number;
  readonly heldFor: HoldReason;
  /** The key of the group (category) it is listed under. */
  readonly group: string;
  readonly article: AlertView['article'] & {
    /** `Mar 14, 09:30` in the audience's zone (the digest names the zone once). */
    readonly publishedShort: string;
  };
  readonly matches: readonly MatchView[];
  readonly omittedMatches: number;
  readonly ruleIds: readonly string[];
  readonly urgent: boolean;
  /** Where else its story ran; absent when nowhere (or unknown). */
  readonly alsoIn?: AlsoInView | undefined;
}

/** A category of a digest, with its entries in this message. */
export interface DigestGroupView {
  readonly label: string;
  /** Entries of the group in this message. */
  readonly count: number;
  /** Entries of the group in the whole release (more than `count` when it spans parts). */
  readonly total: number;
  readonly entries: readonly DigestEntryView[];
}

/** Everything every channel needs to show one digest message. */
export interface DigestView {
  /** `<audienceId>|digest:<release instant>[#part/parts]`: the message's idempotency key. */
  readonly digestId: string;
  readonly audience: AlertView['audience'];
  readonly releaseAt: number;
  readonly releaseAtIso: string;
  /** `Mon, Nov 23, 2026, 08:00 (Europe/London, UTC+00:00)`. */
  readonly releaseLocal: string;
  readonly releaseDate: string;
  readonly releaseTime: string;
  readonly part: number;
  readonly parts: number;
  /** Entries in the whole release. */
  readonly total: number;
  /** Entries in this message. */
  readonly count: number;
  /** Entries of this message by why they were held. */
  readonly held: Readonly<Record<HoldReason, number>>;
  /** The audience's current settings, to explain the holds. */
  readonly settings: {
    readonly quietHours?: { readonly start: string; readonly end: string } | undefined;
    readonly dailyBudget?: number | undefined;
    readonly digestTimes: readonly string[];
  };
  readonly groups: readonly DigestGroupView[];
  readonly urgent: boolean;
}

/** `Mon, Nov 23, 2026` and `08:00` in the audience's zone and locale (subject placeholders). */
function dateAndTime(epochMs: number, timeZone: string, locale: string): { date: string; time: string } {
  return {
    date: formatInZone(epochMs, timeZone, locale, 'date').text,
    time: formatInZone(epochMs, timeZone, locale, 'time').text,
  };
}

/** The group of spike alerts: its own, first in the digest. */
const spikeGroupKey = 'spike';

/**
 * The group an entry is listed under: spike alerts their own; others their first category. Grouped by code when the provider sends
 * codes, so an English, a Korean and a Japanese article of category 002000000 share one group
 * (labelled as its first entry names it); by name otherwise; "Other" (in the audience's words)
 * without any category. The key does not depend on the language, so the order does not either.
 */
function groupOf(view: AlertView): { key: string; label: string } {
  if (isSpikeAlertKey(view.article.key)) return { key: spikeGroupKey, label: view.audience.messages.digest.spikeGroup };
  const code = view.article.categories[0];
  const name = view.article.categoryLabels[0];
  const label = name ?? view.audience.messages.digest.otherGroup;
  return { key: code === undefined ? `name:${(name ?? 'Other').toLowerCase()}` : `code:${code.toLowerCase()}`, label };
}

interface OrderedEntry {
  readonly held: HeldNotification;
  readonly view: AlertView;
  readonly group: string;
}

/**
 * A held match as a digest shows it. A spike alert has no link when none of its top stories has
 * one that may be published (spikes/alert.ts), and is shown without one, as it is when sent at
 * once (spikes/render.ts); every other entry's link was checked before it was held, and one that
 * no longer passes is dropped rather than shown without its link.
 */
const entryView = (match: AudienceMatch, audience: Audience, options: RenderOptions, limits: ViewLimits): AlertView =>
  buildAlertView(match, audience, {
    ...options,
    limits,
    ...(isSpikeAlertKey(match.article.key) ? { linkPolicy: 'omit' as const } : {}),
  });

/**
 * Orders a release: spike alerts first, then groups by size (largest first, then by name), newest article first inside a
 * group. Items whose article cannot be shown at all (no URL, no valid time) come back in `dropped`.
 */
export function orderForDigest(
  items: readonly HeldNotification[],
  audience: Audience,
  options: RenderOptions = {},
): { ordered: HeldNotification[]; dropped: HeldNotification[] } {
  const entries: OrderedEntry[] = [];
  const dropped: HeldNotification[] = [];
  for (const held of items) {
    try {
      const view = entryView(held.match, audience, options, DIGEST_ENTRY_LIMITS);
      entries.push({ held, view, group: groupOf(view).key });
    } catch (error) {
      if (!(error instanceof NotificationRenderError)) throw error;
      dropped.push(held);
    }
  }
  const sizes = new Map<string, number>();
  for (const entry of entries) sizes.set(entry.group, (sizes.get(entry.group) ?? 0) + 1);
  entries.sort((a, b) => {
    // A spike is the news of the digest: its group comes first, whatever its size.
    const bySpike = Number(b.group === spikeGroupKey) - Number(a.group === spikeGroupKey);
    if (bySpike !== 0) return bySpike;
    const bySize = (sizes.get(b.group) ?? 0) - (sizes.get(a.group) ?? 0);
    if (bySize !== 0) return bySize;
    if (a.group !== b.group) return a.group < b.group ? -1 : 1;
    if (a.held.match.article.publishedAt !== b.held.match.article.publishedAt) {
      return b.held.match.article.publishedAt - a.held.match.article.publishedAt;
    }
    return a.held.key.articleKey < b.held.key.articleKey ? -1 : a.held.key.articleKey > b.held.key.articleKey ? 1 : 0;
  });
  return { ordered: entries.map((entry) => entry.held), dropped };
}

/** Where a message sits in its release. */
export interface DigestPosition {
  readonly release: Pick<DigestRelease, 'audienceId' | 'releaseAt'>;
  /** 1-based. */
  readonly part: number;
  readonly parts: number;
  /** Entries in the whole release. */
  readonly total: number;
  /** Index (1-based) of this message's first entry in the whole release. */
  readonly firstIndex: number;
  /** Entries per group key in the whole release (see {@link groupTotals}). */
  readonly groupTotals: ReadonlyMap<string, number>;
}

/**
 * Builds the view of one digest message from its entries, in the order given (see
 * {@link orderForDigest}); groups keep the order in which they first appear.
 *
 * @throws NotificationRenderError when an entry cannot be shown (no URL, no valid time) or an
 *         entry belongs to another audience
 */
export function buildDigestView(
  items: readonly HeldNotification[],
  audience: Audience,
  position: DigestPosition,
  options: DigestRenderOptions & { readonly limits?: ViewLimits } = {},
): DigestView {
  if (position.release.audienceId !== audience.audienceId) {
    throw new NotificationRenderError(
      `digest for audience "${position.release.audienceId}" cannot be rendered for audience "${audience.audienceId}"`,
    );
  }
  const limits = options.limits ?? DIGEST_ENTRY_LIMITS;
  const audienceView = audienceViewOf(audience, options);
  const { locale } = audienceView;
  const groups = new Map<string, { label: string; entries: DigestEntryView[] }>();
  const held: Record<HoldReason, number> = { digest: 0, 'quiet-hours': 0, budget: 0 };
  items.forEach((item, offset) => {
    const view = entryView(item.match, audience, options, limits);
    const group = groupOf(view);
    const { storyId } = item.match;
    const alsoIn = storyId === undefined ? undefined : alsoInOf(view.article, options.stories?.get(storyId));
    const entry: DigestEntryView = {
      index: position.firstIndex + offset,
      deliveryId: view.deliveryId,
      heldAt: item.heldAt,
      heldFor: item.reason,
      group: group.key,
      article: {
        ...view.article,
        publishedShort: formatShortLocalTime(view.article.publishedAt, audience.timeZone, locale),
      },
      matches: view.matches,
      omittedMatches: view.omittedMatches,
      ruleIds: item.ruleIds,
      urgent: view.urgent,
      ...(alsoIn === undefined ? {} : { alsoIn }),
    };
    held[item.reason] += 1;
    const existing = groups.get(group.key);
    if (existing) existing.entries.push(entry);
    else groups.set(group.key, { label: group.label, entries: [entry] });
  });
  const local = formatLocalTime(position.release.releaseAt, audience.timeZone, locale);
  const localParts = dateAndTime(position.release.releaseAt, audience.timeZone, locale);
  const key = digestKey(position.release, position.part, position.parts);
  const groupViews = [...groups].map(([groupKey, { label: name, entries }]) => ({
    label: name,
    count: entries.length,
    total: position.groupTotals.get(groupKey) ?? entries.length,
    entries,
  }));
  return {
    digestId: deliveryId(key),
    audience: audienceView,
    releaseAt: position.release.releaseAt,
    releaseAtIso: new Date(position.release.releaseAt).toISOString(),
    releaseLocal: local,
    releaseDate: localParts.date,
    releaseTime: localParts.time,
    part: position.part,
    parts: position.parts,
    total: position.total,
    count: items.length,
    held,
    settings: {
      quietHours: audience.quietHours,
      dailyBudget: audience.dailyBudget,
      digestTimes: audience.digestTimes,
    },
    groups: groupViews,
    urgent: groupViews.some((group) => group.entries.some((entry) => entry.urgent)),
  };
}

// --- Channel renderers ----------------------------------------------------------------------------

/** Entries in the order a reader should see them first: urgent ones, spike alerts, then the newest. */
export function topEntries(view: DigestView): DigestEntryView[] {
  const spike = (entry: DigestEntryView) => Number(entry.group === spikeGroupKey);
  return view.groups
    .flatMap((group) => group.entries)
    .sort(
      (a, b) =>
        Number(b.urgent) - Number(a.urgent) ||
        spike(b) - spike(a) ||
        b.article.publishedAt - a.article.publishedAt ||
        a.index - b.index,
    );
}

/**
 * Why the entries of this message were held, one line per reason present, from the audience's
 * current settings: `5 held during your quiet hours (22:00–07:00)`.
 */
export function describeHolds(view: DigestView): string[] {
  const { digest } = view.audience.messages;
  const lines: string[] = [];
  for (const reason of HOLD_REASONS) {
    const count = view.held[reason];
    if (count === 0) continue;
    if (reason === 'quiet-hours') lines.push(digest.heldQuietHours(count, view.settings.quietHours));
    else if (reason === 'budget') lines.push(digest.heldBudget(count, view.settings.dailyBudget));
    else lines.push(digest.heldDigest(count, view.settings.digestTimes));
  }
  return lines;
}

/**
 * `rule rates (urgent): keyword "interest rate"; rule fed-watch: media reuters; +2 more rules`, in
 * the words of `messages` (English by default).
 */
export function describeWhy(
  entry: Pick<DigestEntryView, 'matches' | 'omittedMatches'>,
  messages: Messages = ENGLISH,
): string {
  const parts = entry.matches.map((match) =>
    messages.digest.rule(match.ruleId, match.urgent, describeReasons(match, messages)),
  );
  const more = entry.omittedMatches;
  if (more > 0) parts.push(messages.digest.moreRules(more));
  return parts.join(messages.clauseSeparator);
}

/** `[Markets desk] 12 articles: Fed raises rates…` (template `digestSubject`), under 100 characters. */
export function renderDigestSubject(view: DigestView): string {
  const { messages, wording } = view.audience;
  const partSuffix = view.parts > 1 ? ' ({part})' : '';
  return subjectFromTemplate(
    `${wording.digestSubject}${partSuffix}`,
    {
      audience: view.audience.label,
      count: String(view.total),
      articles: messages.articles(view.total),
      top: topEntries(view)[0]?.article.title,
      date: view.releaseDate,
      time: view.releaseTime,
      part: messages.digest.part(view.part, view.parts),
    },
    'top',
  );
}

/** The heading line of a group: `Economy (002000000) · 5` (`· 5 of 12` when it spans parts). */
const groupHeading = (group: DigestGroupView, messages: Messages) =>
  messages.digest.groupHeading(group.label, group.count, group.total);

/**
 * Readable plain-text email: why these arrive together, then every entry grouped by category with
 * its media, local time, link and why it matched, then the footer and the digest id.
 */
export function renderDigestEmail(view: DigestView): string {
  const { messages } = view.audience;
  const { digest } = messages;
  const lines: string[] = [digest.title(view.audience.label, view.total), view.releaseLocal];
  if (view.parts > 1) {
    const last = view.groups.at(-1)?.entries.at(-1)?.index ?? 0;
    const first = view.groups[0]?.entries[0]?.index ?? 0;
    lines.push(digest.partLine(view.part, view.parts, first, last, view.total));
  }
  const holds = describeHolds(view);
  if (holds.length > 0) lines.push('', digest.heldHeading, ...holds.map((line) => `- ${line}`));
  for (const group of view.groups) {
    lines.push('', groupHeading(group, messages));
    for (const entry of group.entries) {
      const number = `${entry.index}. `;
      const indent = ' '.repeat(number.length);
      lines.push(`${number}${entry.urgent ? digest.urgentMarker : ''}${entry.article.title}`);
      const status = entry.article.status === undefined ? undefined : messages.status(entry.article.status);
      const facts = [entry.article.mediaLabel, entry.article.publishedShort, status].filter(
        (fact) => fact !== undefined && fact !== '',
      );
      lines.push(`${indent}${facts.join(' \u00B7 ')}`);
      if (entry.alsoIn !== undefined) lines.push(`${indent}${describeAlsoIn(entry.alsoIn, messages)}`);
      if (entry.article.url !== '') lines.push(`${indent}${entry.article.url}`);
      const why = describeWhy(entry, messages);
      if (why !== '') lines.push(`${indent}${digest.whyLine(why)}`);
    }
  }
  lines.push('', '--', renderFooter(view.audience), digest.digestId(view.digestId));
  return lines.join('\n');
}

/**
 * An entry's headline for an SMS with its "also in" line in each form from the richest down: with
 * names, with the count alone, without it. Callers take the first that fits, so names go before
 * the count and the line goes before the budget is broken.
 */
function smsHeadlines(entry: DigestEntryView, messages: Messages): string[] {
  const headline = toGsmFriendly(entry.article.title);
  if (entry.alsoIn === undefined) return [headline];
  const forms = entry.alsoIn.outlets.length > 0 ? [true, false] : [false];
  const marked = forms.map((names) =>
    toGsmFriendly(`${headline} (${describeAlsoIn(entry.alsoIn as AlsoInView, messages, names)})`),
  );
  return [...marked, headline];
}

/**
 * One SMS within the audience's segment budget. A single entry reads like an alert (headline and
 * the link, never cut); more entries give the count and as many top headlines as fit, then
 * "+N more" (links would not fit: the email, Slack and JSON bodies carry them). An entry whose
 * story ran elsewhere says so after its headline when that fits whole (see {@link smsHeadlines}).
 */
export function renderDigestSms(view: DigestView): string {
  const maxSegments = view.audience.smsMaxSegments;
  const { messages } = view.audience;
  const { digest } = messages;
  const top = topEntries(view);
  const first = top[0];
  if (view.count === 1 && first !== undefined) {
    const { url } = first.article;
    if (fitsSms(url, maxSegments)) {
      const withUrl = (headline: string) =>
        headline === '' || url === '' ? `${headline}${url}` : `${headline} ${url}`;
      const forms = smsHeadlines(first, messages);
      for (const form of forms.slice(0, -1)) if (fitsSms(withUrl(form), maxSegments)) return withUrl(form);
      const headline = trimToFit(
        forms.at(-1) ?? '',
        (candidate) => fitsSms(withUrl(candidate), maxSegments),
        (prefix) => (isGsm7(withUrl(prefix)) ? '...' : '\u2026'),
      );
      return withUrl(headline);
    }
    return url;
  }
  const intro = digest.smsIntro(view.audience.label, view.part, view.parts, view.count);
  const compose = (headlines: readonly string[], more: number) => digest.sms(intro, headlines, more);
  const fits = (text: string) => fitsSms(text, maxSegments);
  const shown: string[] = [];
  for (const entry of top) {
    const forms = smsHeadlines(entry, messages);
    const more = view.count - shown.length - 1;
    const whole = forms.find((form) => fits(compose([...shown, form], more)));
    if (whole !== undefined) {
      shown.push(whole);
      continue;
    }
    // The first headline that does not fit whole is cut at a word, if enough of it stays.
    const headline = forms.at(-1) ?? '';
    const cut = trimToFit(
      headline,
      (candidate) => fits(compose([...shown, candidate], more)),
      (prefix) => (isGsm7(compose([...shown, prefix], more)) ? '...' : '\u2026'),
    );
    if (cut.length >= Math.min(20, headline.length)) shown.push(cut);
    break;
  }
  const text = compose(shown, view.count - shown.length);
  // The intro alone always fits one segment, unless an absurd audience name makes it long.
  return fits(text) ? text : trimToFit(text, fits);
}

/** One entry of the structured body; `alsoIn` only when its story ran elsewhere. */
function entryDocument(entry: DigestEntryView): ReturnType<typeof entryFields> & { readonly alsoIn?: AlsoInDocument } {
  const fields = entryFields(entry);
  if (entry.alsoIn === undefined) return fields;
  return { ...fields, alsoIn: { count: entry.alsoIn.count, outlets: [...entry.alsoIn.outlets] } };
}

/** `newsAlerts.digest.groups[].entries[].alsoIn`: the story's other outlets (count, first names). */
export interface AlsoInDocument {
  readonly count: number;
  readonly outlets: readonly string[];
}

function entryFields(entry: DigestEntryView) {
  return {
    deliveryId: entry.deliveryId,
    urgent: entry.urgent,
    heldFor: entry.heldFor,
    heldAt: new Date(entry.heldAt).toISOString(),
    article: {
      key: entry.article.key,
      id: entry.article.id ?? null,
      title: entry.article.title,
      summary: entry.article.summary,
      url: entry.article.url,
      ...(entry.article.linkWithheld ? { linkWithheld: true } : {}),
      publishedAt: entry.article.publishedAtIso,
      categories: [...entry.article.categories],
      categoryNames: [...entry.article.categoryNames],
      media: entry.article.media ?? null,
      mediaName: entry.article.mediaName ?? null,
      status: entry.article.status ?? null,
    },
    matches: entry.matches.map((match) => ({
      ruleId: match.ruleId,
      description: match.description ?? null,
      urgent: match.urgent,
      reasons: match.reasons.map((reason) => ({ kind: reason.kind, term: reason.term })),
      omittedReasons: match.omittedReasons,
    })),
    omittedMatches: entry.omittedMatches,
  };
}

/** The structured body of one entry, as JSON consumers receive it. */
export type DigestEntryDocument = ReturnType<typeof entryDocument>;

/**
 * The structured body of a digest: an Amazon Q Developer custom notification (its description is
 * a markdown list that ends with "+N more" when it would be too long for a chat message) plus the
 * versioned `newsAlerts` part with `kind: "digest"` and every entry of the message, grouped.
 * Consumers de-duplicate on `newsAlerts.deliveryId` (the digest id), and can tell single alerts
 * (no `kind`) from digests by `newsAlerts.kind`.
 */
export function buildDigestDocument(view: DigestView) {
  const { messages } = view.audience;
  const { digest } = messages;
  const holds = describeHolds(view);
  const lines: string[] = [];
  if (holds.length > 0) lines.push(`_${holds.join(' \u00B7 ')}_`);
  let shown = 0;
  const room = (line: string) => [...lines, line].join('\n').length <= CHAT_DESCRIPTION_MAX - 40;
  outer: for (const group of view.groups) {
    const heading = `*${groupHeading(group, messages)}*`;
    if (!room(heading)) break;
    lines.push(heading);
    for (const entry of group.entries) {
      const media = entry.article.mediaLabel === undefined ? '' : ` \u2014 ${entry.article.mediaLabel}`;
      const alsoIn = entry.alsoIn === undefined ? '' : ` \u00B7 _${describeAlsoIn(entry.alsoIn, messages)}_`;
      const link = entry.article.url === '' ? '' : ` ${entry.article.url}`;
      const line = `\u2022 ${truncateText(entry.article.title, 150)}${media} \u00B7 ${entry.article.publishedShort}${link}${alsoIn}`;
      if (!room(line)) break outer;
      lines.push(line);
      shown += 1;
    }
  }
  if (shown < view.count) lines.push(`_${digest.moreInDigest(view.count - shown)}_`);
  const label = view.audience.label;
  return {
    version: '1.0' as const,
    source: 'custom' as const,
    id: view.digestId,
    content: {
      textType: 'client-markdown' as const,
      title: chatSafe(
        `${view.urgent ? '\u{1F6A8}' : '\u{1F4EC}'} ${digest.chatTitle(label, view.count, view.part, view.parts)}`,
      ),
      description: chatSafe(lines.join('\n')),
      keywords: view.groups.slice(0, 5).map((group) => chatSafe(truncateText(group.label, 40))),
    },
    metadata: {
      eventType: DIGEST_EVENT_TYPE,
      summary: chatSafe(truncateText(digest.chatSummary(label, view.releaseLocal, view.count), 200)),
      additionalContext: {
        digestId: view.digestId,
        audienceId: view.audience.id,
        releaseAt: view.releaseAtIso,
        count: String(view.count),
        total: String(view.total),
        part: `${view.part}/${view.parts}`,
      },
    },
    newsAlerts: {
      schemaVersion: 1 as const,
      kind: 'digest' as const,
      deliveryId: view.digestId,
      audienceId: view.audience.id,
      audienceName: view.audience.name ?? null,
      /** The subscriber's locale: the language of `content` and `holds`; keys stay English. */
      locale: view.audience.locale,
      /** The language of the fixed words (render.ts AlertDocumentSchema `language`). */
      language: view.audience.messages.language,
      urgent: view.urgent,
      digest: {
        releaseAt: view.releaseAtIso,
        part: view.part,
        parts: view.parts,
        total: view.total,
        count: view.count,
        held: { quietHours: view.held['quiet-hours'], budget: view.held.budget, digest: view.held.digest },
        holds,
        groups: view.groups.map((group) => ({
          label: group.label,
          count: group.count,
          total: group.total,
          entries: group.entries.map(entryDocument),
        })),
      },
    },
  };
}

/** The structured body of a digest (see {@link buildDigestDocument}). */
export type DigestDocument = ReturnType<typeof buildDigestDocument>;

/** The rendered channels of one digest message. */
export interface DigestBodies {
  readonly subject: string;
  readonly email: string;
  readonly sms: string;
  /** The structured JSON document, serialized; sent as `default`. */
  readonly structured: string;
}

/** Renders every channel of one digest message. */
export function renderDigestBodies(view: DigestView): DigestBodies {
  return {
    subject: renderDigestSubject(view),
    email: renderDigestEmail(view),
    sms: renderDigestSms(view),
    structured: JSON.stringify(buildDigestDocument(view)),
  };
}

/**
 * The `MessageStructure: json` document of a digest: `default` (the structured body, for every
 * protocol without its own key), `email` and `sms`.
 *
 * @throws MessageTooLargeError when body plus subject exceed SNS's 256 KB
 */
export function encodeDigestStructure(bodies: DigestBodies): string {
  const body = JSON.stringify({ default: bodies.structured, email: bodies.email, sms: bodies.sms });
  const bytes = messageBytes(body, bodies.subject);
  if (bytes > SNS_MAX_MESSAGE_BYTES) {
    throw new MessageTooLargeError('the rendered digest', bytes, SNS_MAX_MESSAGE_BYTES);
  }
  return body;
}

/**
 * Renders one digest message for SNS, trying smaller entry tiers only when the standard one is
 * too large (a re-render after the audience's settings changed).
 *
 * @throws MessageTooLargeError when even the minimal rendering is too large
 * @throws NotificationRenderError when an entry cannot be shown at all
 */
export function renderDigestMessage(
  items: readonly HeldNotification[],
  audience: Audience,
  position: DigestPosition,
  options: DigestRenderOptions = {},
): OutboundMessage {
  let lastError: MessageTooLargeError | undefined;
  for (const limits of [DIGEST_ENTRY_LIMITS, ...VIEW_LIMITS.slice(1)]) {
    const bodies = renderDigestBodies(buildDigestView(items, audience, position, { ...options, limits }));
    try {
      return {
        key: digestKey(position.release, position.part, position.parts),
        topicArn: audience.topicArn,
        subject: bodies.subject,
        body: encodeDigestStructure(bodies),
        ruleIds: [...new Set(items.flatMap((item) => item.ruleIds))],
      };
    } catch (error) {
      if (!(error instanceof MessageTooLargeError)) throw error;
      lastError = error;
    }
  }
  throw lastError ?? new MessageTooLargeError('the rendered digest', 0, SNS_MAX_MESSAGE_BYTES);
}

/** Entries per group key of a release. */
export function groupTotals(
  items: readonly HeldNotification[],
  audience: Audience,
  options: RenderOptions = {},
): Map<string, number> {
  const totals = new Map<string, number>();
  for (const item of items) {
    try {
      const { key } = groupOf(entryView(item.match, audience, options, DIGEST_ENTRY_LIMITS));
      totals.set(key, (totals.get(key) ?? 0) + 1);
    } catch (error) {
      if (!(error instanceof NotificationRenderError)) throw error;
    }
  }
  return totals;
}

/** A release cut into messages: the parts (items in order), what could not be shown, and the messages. */
export interface PlannedDigest {
  readonly parts: readonly (readonly HeldNotification[])[];
  readonly dropped: readonly HeldNotification[];
  readonly messages: readonly OutboundMessage[];
}

/** What one entry adds to a message, in UTF-8 bytes, as it ends up inside the SNS document. */
function entryBytes(item: HeldNotification, audience: Audience, options: DigestRenderOptions): number {
  const view = buildDigestView(
    [item],
    audience,
    {
      release: { audienceId: audience.audienceId, releaseAt: 0 },
      part: 1,
      parts: 1,
      total: 1,
      firstIndex: 1,
      groupTotals: new Map(),
    },
    options,
  );
  const entry = view.groups[0]?.entries[0];
  if (entry === undefined) return 0;
  const emailLines = renderDigestEmail(view);
  // Each body is a JSON string inside the SNS document; the structured one is escaped once more.
  return (
    utf8Bytes(JSON.stringify(JSON.stringify(entryDocument(entry)))) +
    utf8Bytes(JSON.stringify(emailLines)) -
    utf8Bytes(JSON.stringify(renderFooter(view.audience)))
  );
}

/**
 * Cuts a release into as few messages as SNS's size limit allows and renders them. Entries are
 * ordered by {@link orderForDigest} and packed in that order, so every entry is in exactly one part
 * and the numbering runs on across parts. A part that renders too large after all is split again.
 */
export function planDigest(
  items: readonly HeldNotification[],
  audience: Audience,
  releaseAt: number,
  options: DigestRenderOptions = {},
): PlannedDigest {
  const { ordered, dropped: unshowable } = orderForDigest(items, audience, options);
  const budget = SNS_MAX_MESSAGE_BYTES - PART_OVERHEAD_BYTES;
  const dropped = [...unshowable];
  let parts: HeldNotification[][] = [];
  let current: HeldNotification[] = [];
  let used = 0;
  for (const item of ordered) {
    const size = entryBytes(item, audience, options);
    if (size > budget) {
      // Not even alone in a message (an enormous URL): logged and counted by the caller.
      dropped.push(item);
      continue;
    }
    if (current.length > 0 && used + size > budget) {
      parts.push(current);
      current = [];
      used = 0;
    }
    current.push(item);
    used += size;
  }
  if (current.length > 0) parts.push(current);
  const release = { audienceId: audience.audienceId, releaseAt };
  const totals = groupTotals(ordered, audience, options);
  const render = (candidate: readonly (readonly HeldNotification[])[]) => {
    const total = candidate.reduce((sum, part) => sum + part.length, 0);
    let firstIndex = 1;
    return candidate.map((part, index) => {
      const message = renderDigestMessage(
        part,
        audience,
        { release, part: index + 1, parts: candidate.length, total, firstIndex, groupTotals: totals },
        options,
      );
      firstIndex += part.length;
      return message;
    });
  };
  for (;;) {
    try {
      return { parts, dropped, messages: render(parts) };
    } catch (error) {
      if (!(error instanceof MessageTooLargeError)) throw error;
      // The estimate was off (a very long header template, say): split the largest part in two.
      const largest = parts.reduce((best, part, index) => ((parts[best]?.length ?? 0) < part.length ? index : best), 0);
      const part = parts[largest] ?? [];
      if (part.length <= 1) {
        dropped.push(...part);
        parts = parts.filter((_, index) => index !== largest);
        continue;
      }
      const half = Math.ceil(part.length / 2);
      parts = [...parts.slice(0, largest), part.slice(0, half), part.slice(half), ...parts.slice(largest + 1)];
    }
  }
}
