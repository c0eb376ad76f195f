/**
 * What subscribers receive for a spike alert, on every channel and in the audience's language
 * (the catalog's `spike` words, functions/core/messages/): observed against expected, since when,
 * the top stories (one line each, with their outlet counts), the top outlets, and why the
 * subscriber got it (the rule and its preset).
 *
 * It lays out the same {@link AlertView} as an article alert (render.ts builds it: the audience's
 * label, locale, zone, templates and footer, the alert's id), so subjects follow the audience's
 * `templates.subject`, emails end with its footer, and the SMS never cuts the link. The structured
 * body is the article alert's document (Amazon Q Developer custom notification + `newsAlerts`)
 * with `metadata.eventType` `news-alerts.spike-detected` and the episode under `newsAlerts.spike`,
 * so existing consumers keep working and the Slack relay shows the spike's own blocks.
 *
 * Pure: no clock, no I/O.
 */
import type { ArticleChange } from '../ledger-facts.ts';
import type { Audience, AudienceMatch } from '../model.ts';
import { type DeliveryKey, deliveryId, type OutboundMessage } from '../ports.ts';
import {
  type AlertView,
  buildAlertDocument,
  buildAlertView,
  chatSafe,
  encodeMessageStructure,
  formatInZone,
  NotificationRenderError,
  type RenderOptions,
  renderFooter,
  renderSubject,
  singleLine,
  trimToFit,
  truncateText,
  updateFactsOf,
} from '../render.ts';
import { fitsSms, isGsm7, toGsmFriendly } from '../sms.ts';
import { publishableLink } from '../text.ts';
import type { SpikeAlertFacts } from './alert.ts';
import type { SpikeDocument } from './document.ts';

/** `metadata.eventType` of a spike alert's structured body. */
export const SPIKE_EVENT_TYPE = 'news-alerts.spike-detected';

/** The episode as the structured body carries it (`newsAlerts.spike`). */
export interface SpikeDocumentPart {
  readonly ruleId: string;
  readonly episodeId: string;
  readonly preset: string;
  readonly since: string;
  readonly openedAt: string;
  readonly bucketMinutes: number;
  readonly observed: number;
  readonly expected: number;
  readonly bucketCount: number;
  readonly bucketExpected: number;
  readonly outletCount: number;
  readonly storiesSoFar: number;
  /** Stories expected over the span of `storiesSoFar`. */
  readonly expectedSoFar: number;
  readonly stage: 'spike' | 'escalated';
  readonly topStories: readonly { readonly title: string; readonly url: string; readonly outlets: number }[];
  readonly topOutlets: readonly { readonly name: string; readonly stories: number }[];
}

/** Everything the channels show, in the audience's words. */
export interface SpikeView {
  readonly view: AlertView;
  readonly facts: SpikeAlertFacts;
  readonly headline: string;
  readonly observedLine: string;
  readonly bucketLine: string;
  readonly outletsLine: string;
  readonly stories: readonly {
    readonly title: string;
    readonly url: string;
    readonly outlets: number;
    readonly line: string;
  }[];
  readonly outletsList: string;
  readonly whyLine: string;
  readonly sinceText: string;
}

export function spikeView(match: AudienceMatch, audience: Audience, options: RenderOptions): SpikeView {
  const facts = match.spike;
  if (facts === undefined) throw new NotificationRenderError(`${match.article.key} is not a spike alert`);
  const view = buildAlertView(match, audience, { ...options, linkPolicy: 'omit' });
  const { messages, timeZone, locale } = view.audience;
  const { spike } = messages;
  const time = (bucket: number) => formatInZone(bucket * facts.bucketMs, timeZone, locale, 'time').text;
  // An episode can last a day and an email be read later: the first line says which day, and in
  // which zone, as an article alert's Published line does. SMS keeps the time alone (one segment).
  const sinceText = time(facts.since);
  const sinceZoned = formatInZone(facts.since * facts.bucketMs, timeZone, locale, 'short');
  const stories = facts.topStories.map((story) => {
    const link = publishableLink(story.url);
    const title = truncateText(singleLine(story.title), 150) || messages.untitled;
    return {
      title,
      url: link.ok ? link.url : '',
      outlets: story.outlets,
      line: `${title} \u2014 ${spike.storyOutlets(story.outlets)}`,
    };
  });
  return {
    view,
    facts,
    headline: view.article.title,
    sinceText,
    observedLine: spike.observed(
      facts.observed,
      spike.expected(facts.expected),
      `${sinceZoned.text} ${sinceZoned.zoneLabel}`,
    ),
    bucketLine: spike.lastBucket(facts.bucketCount, spike.expected(facts.bucketExpected), time(facts.openedAt + 1)),
    outletsLine: spike.outlets(facts.outletCount),
    stories,
    outletsList: facts.topOutlets
      .map((outlet) => spike.outletStories(truncateText(singleLine(outlet.name), 60), outlet.stories))
      .join(messages.listSeparator),
    whyLine: spike.why(spike.preset(facts.preset)),
  };
}

/** The email text of a spike alert (its update notice: with `firstLine`), as SNS email subscribers read it. */
export function emailBody(spike: SpikeView, firstLine?: string): string {
  const { view } = spike;
  const { messages } = view.audience;
  const lines: string[] = [];
  if (firstLine !== undefined) lines.push(firstLine, '');
  lines.push(spike.headline, '', spike.observedLine, spike.bucketLine);
  if (spike.facts.outletCount > 0) lines.push(spike.outletsLine);
  if (spike.stories.length > 0) {
    lines.push('', messages.spike.topStoriesHeading);
    for (const story of spike.stories) {
      lines.push(`- ${story.line}`);
      if (story.url !== '') lines.push(`  ${story.url}`);
    }
  }
  if (spike.outletsList !== '') lines.push('', `${messages.spike.topOutletsHeading} ${spike.outletsList}`);
  lines.push('', messages.email.whyHeading);
  for (const match of view.matches) {
    lines.push(messages.email.rule(match.ruleId, match.description, match.urgent), `  ${spike.whyLine}`);
  }
  lines.push('', '--', renderFooter(view.audience), messages.email.alertId(singleLine(view.deliveryId)));
  return lines.join('\n');
}

/** The SMS: the spike in one line, then the top story's link (never cut; alone if it must be). */
function smsBody(spike: SpikeView, prefix = ''): string {
  const { view, facts } = spike;
  const { spike: words } = view.audience.messages;
  const maxSegments = view.audience.smsMaxSegments;
  const url = view.article.url;
  if (url !== '' && !fitsSms(url, maxSegments)) return url;
  const withUrl = (line: string) => (line === '' || url === '' ? `${line}${url}` : `${line} ${url}`);
  const fits = (candidate: string) => fitsSms(withUrl(candidate), maxSegments);
  const lineWith = (label: string) =>
    toGsmFriendly(
      `${prefix}${words.sms(label, facts.storiesSoFar, words.expected(soFarExpected(facts)), spike.sinceText)}`,
    );
  const full = lineWith(facts.ruleLabel);
  if (fits(full)) return withUrl(full);
  // The numbers (how many, since when, against what) are the alert, and the rule's label says
  // what they count: the label gives way first, then the link (the email and chat channels carry
  // it). A 70-unit Korean or Japanese segment used to hold the label and the link, and no number.
  const enoughLabel = Math.min(facts.ruleLabel.length, MIN_SMS_LABEL_UNITS);
  const withLabelCut = (fitting: (candidate: string) => boolean): string | undefined => {
    if (fitting(full)) return full;
    const label = trimToFit(facts.ruleLabel, (candidate) => fitting(lineWith(candidate)));
    return label.replace(/\u2026$/, '').length >= enoughLabel ? lineWith(label) : undefined;
  };
  const withLink = withLabelCut(fits);
  if (withLink !== undefined) return withUrl(withLink);
  const withoutLink = withLabelCut((candidate) => fitsSms(candidate, maxSegments));
  if (withoutLink !== undefined) return withoutLink;
  return withUrl(trimToFit(full, fits, (start) => (isGsm7(withUrl(start)) ? '...' : '\u2026')));
}

/**
 * A held spike alert's headline in a digest: the SMS line (`Coverage spike: chips: 42 new stories
 * since 14:00 (about 6 expected)`), so a digest says how big the spike is, not only that there was
 * one (a digest entry shows its headline, not the alert's figures).
 */
export function spikeDigestHeadline(match: AudienceMatch, audience: Audience, options: RenderOptions): string {
  const spike = spikeView(match, audience, options);
  const { spike: words } = spike.view.audience.messages;
  const { facts } = spike;
  return words.sms(facts.ruleLabel, facts.storiesSoFar, words.expected(soFarExpected(facts)), spike.sinceText);
}

/** Stories expected over the span of `storiesSoFar` (records written before it was kept: the alert's). */
export const soFarExpected = (facts: SpikeAlertFacts): number => facts.expectedSoFar ?? facts.expected;

/** The shortest cut of a rule's label a spike SMS keeps (UTF-16 units) before it drops the link. */
const MIN_SMS_LABEL_UNITS = 8;

/**
 * The facts of a spike alert read back from its document ({@link documentPart} inverted), for a
 * channel that renders from the structured document (the SES email function): `ruleLabel` is the
 * rule as the document's match names it.
 */
export function spikeFactsOf(part: SpikeDocument, ruleLabel: string): SpikeAlertFacts {
  const bucketMs = part.bucketMinutes * 60_000;
  const bucket = (iso: string) => Math.round(Date.parse(iso) / bucketMs);
  return {
    ruleId: part.ruleId,
    ruleLabel,
    episodeId: part.episodeId,
    // A preset this code does not know is shown as given (the catalogs' presetWord).
    preset: part.preset as SpikeAlertFacts['preset'],
    since: bucket(part.since),
    openedAt: bucket(part.openedAt),
    bucketMs,
    observed: part.observed,
    expected: part.expected,
    bucketCount: part.bucketCount,
    bucketExpected: part.bucketExpected,
    outletCount: part.outletCount,
    storiesSoFar: part.storiesSoFar ?? part.observed,
    expectedSoFar: part.expectedSoFar ?? part.expected,
    stage: part.stage,
    topStories: part.topStories.map((story, index) => ({ storyId: String(index), ...story })),
    topOutlets: part.topOutlets,
  };
}

function documentPart(spike: SpikeView): SpikeDocumentPart {
  const { facts } = spike;
  const iso = (bucket: number) => new Date(bucket * facts.bucketMs).toISOString();
  return {
    ruleId: facts.ruleId,
    episodeId: facts.episodeId,
    preset: facts.preset,
    since: iso(facts.since),
    openedAt: iso(facts.openedAt),
    bucketMinutes: facts.bucketMs / 60_000,
    observed: facts.observed,
    expected: facts.expected,
    bucketCount: facts.bucketCount,
    bucketExpected: facts.bucketExpected,
    outletCount: facts.outletCount,
    storiesSoFar: facts.storiesSoFar,
    expectedSoFar: soFarExpected(facts),
    stage: facts.stage,
    topStories: spike.stories.map((story) => ({ title: story.title, url: story.url, outlets: story.outlets })),
    topOutlets: facts.topOutlets.map((outlet) => ({ name: singleLine(outlet.name), stories: outlet.stories })),
  };
}

function structuredBody(
  spike: SpikeView,
  update?: { readonly line: string; readonly prefix: string; readonly change: ArticleChange },
): string {
  const { view } = spike;
  const { messages } = view.audience;
  const document = buildAlertDocument(view);
  const stories = spike.stories
    .slice(0, 3)
    .map((story) => (story.url === '' ? `• ${story.line}` : `• ${story.line} ${story.url}`));
  const description = [
    update === undefined ? '' : `*${singleLine(update.line)}*`,
    spike.observedLine,
    spike.bucketLine,
    ...stories,
    spike.outletsList === '' ? '' : `${messages.spike.topOutletsHeading} ${spike.outletsList}`,
    `*${messages.chat.why}* \`${spike.facts.ruleId}\` (${spike.whyLine})`,
  ]
    .filter((line) => line !== '')
    .join('\n');
  const prefix = update?.prefix ?? '';
  return JSON.stringify({
    ...document,
    content: {
      ...document.content,
      title: chatSafe(`\u{1F4C8} ${prefix}${truncateText(spike.headline, 250)}`),
      description: chatSafe(description),
      keywords: [],
    },
    metadata: {
      ...document.metadata,
      eventType: SPIKE_EVENT_TYPE,
      summary: chatSafe(
        truncateText(`[${view.audience.label}] ${prefix}${spike.headline}: ${spike.observedLine}`, 200),
      ),
      additionalContext: {
        ...document.metadata.additionalContext,
        ruleId: spike.facts.ruleId,
        episodeId: spike.facts.episodeId,
        ...(update === undefined ? {} : { update: 'status' }),
      },
    },
    newsAlerts: {
      ...document.newsAlerts,
      spike: documentPart(spike),
      ...(update === undefined ? {} : { update: updateFactsOf(update.change) }),
    },
  });
}

function message(
  match: AudienceMatch,
  audience: Audience,
  key: DeliveryKey,
  bodies: { subject: string; email: string; sms: string; structured: string },
): OutboundMessage {
  return {
    key,
    topicArn: audience.topicArn,
    subject: bodies.subject,
    body: encodeMessageStructure(bodies),
    ruleIds: match.rules.map((rule) => rule.ruleId),
  };
}

/**
 * Renders a spike alert (a match with `spike` set, see alert.ts) for its audience: subject, email,
 * SMS and the structured body, under the match's own key (`spike:<ruleId>:<episodeId>`).
 *
 * @throws NotificationRenderError when the match is not a spike alert or belongs to another audience.
 */
export function renderSpikeAlert(
  match: AudienceMatch,
  audience: Audience,
  options: RenderOptions = {},
): OutboundMessage {
  const spike = spikeView(match, audience, options);
  return message(
    match,
    audience,
    { audienceId: match.audienceId, articleKey: match.article.key },
    {
      subject: renderSubject(spike.view),
      email: emailBody(spike),
      sms: smsBody(spike),
      structured: structuredBody(spike),
    },
  );
}

/**
 * The update notice of a spike alert whose episode doubled (audiences with `updates: notify`),
 * under `key` (its update notice key): marked as an update on every channel, the first line says
 * how many new stories there are now.
 */
export function renderSpikeUpdate(
  match: AudienceMatch,
  audience: Audience,
  change: ArticleChange,
  key: DeliveryKey,
  options: RenderOptions = {},
): OutboundMessage {
  const base = spikeView(match, audience, options);
  const spike: SpikeView = { ...base, view: { ...base.view, deliveryId: deliveryId(key) } };
  const { messages } = spike.view.audience;
  const { prefix } = messages.update;
  const line = messages.spike.escalated(spike.facts.storiesSoFar, messages.spike.expected(soFarExpected(spike.facts)));
  return message(match, audience, key, {
    subject: renderSubject(spike.view, prefix),
    email: emailBody(spike, line),
    sms: smsBody(spike, prefix),
    structured: structuredBody(spike, { line, prefix, change }),
  });
}
