/**
 * English: the wording every alert and digest had before catalogs existed (an `en` audience's
 * renderings are byte-for-byte what they were, test/unit/channel-goldens.test.ts), and the last
 * resort of every locale chain.
 */
import type { CatalogFactory, Messages } from './catalog.ts';

const plurals = new Intl.PluralRules('en');

/** `1 article`, `3 articles`. */
const counted = (format: (count: number) => string, count: number, one: string, other = `${one}s`) =>
  `${format(count)} ${plurals.select(count) === 'one' ? one : other}`;

/** A spike preset in words; a preset this catalog does not know is shown as given. */
const presetWord = (preset: string): string =>
  (({ fewer: 'fewer', balanced: 'balanced', more: 'more' }) as Readonly<Record<string, string>>)[preset] ?? preset;

/** The English catalog. */
export const en: CatalogFactory = (count) =>
  ({
    language: 'en',
    count,
    listSeparator: ', ',
    clauseSeparator: '; ',
    more: (n) => `+${count(n)} more`,
    articles: (n) => counted(count, n, 'article'),
    untitled: '(untitled article)',
    // Statuses are shown as the provider sends them (its own English codes).
    status: (status) => status,
    templates: {
      subject: '[{audience}] {headline}',
      digestSubject: '[{audience}] {articles}: {top}',
      footer: [
        'You receive this alert as a subscriber of "{audience}" (audience {audienceId}).',
        'To change which articles you get, ask your news-alerts administrators to update the rules of audience {audienceId} (rule ids above), or to remove this address from the audience.',
      ].join('\n'),
    },
    reason: {
      keyword: (term) => `keyword "${term}"`,
      category: (term) => `category ${term}`,
      media: (term) => `media ${term}`,
      status: (term) => `status ${term}`,
      all: 'every article (match-all rule)',
      spike: (preset) => `spike alerts (${presetWord(preset)})`,
      other: (kind, term) => `${kind} ${term}`,
    },
    email: {
      labels: {
        source: 'Source',
        published: 'Published',
        category: 'Category',
        categories: 'Categories',
        status: 'Status',
        link: 'Link',
      },
      linkWithheld: 'not included: the news provider sent a link that cannot be published safely',
      whyHeading: 'Why you got this:',
      rule: (ruleId, description, urgent) =>
        `- Rule ${ruleId}${description === undefined ? '' : `: ${description}`}${urgent ? ' (urgent)' : ''}`,
      matched: (reasons) => `  Matched ${reasons}`,
      // "1 more rules" before the catalogs: the plural now follows the count.
      moreRules: (n) => `- ...and ${counted(count, n, 'more rule')}`,
      alertId: (id) => `Alert id: ${id}`,
    },
    update: {
      prefix: 'Updated: ',
      statusChanged: (status, previous) =>
        `Update: the status changed from ${previous ?? 'none'} to ${status ?? 'none'}`,
      withdrawn: 'Update: the publisher withdrew this article',
      titleChanged: 'Update: the headline changed',
    },
    spike: {
      headline: (rule) => `Coverage spike: ${rule}`,
      expected: (n) => (n < 1 ? 'fewer than 1 expected' : `about ${count(n)} expected`),
      observed: (n, expected, since) => `${counted(count, n, 'new story', 'new stories')} since ${since}, ${expected}`,
      lastBucket: (n, expected, until) =>
        `In the hour to ${until}: ${counted(count, n, 'new story', 'new stories')}, ${expected}`,
      outlets: (n) => `From ${counted(count, n, 'outlet')}`,
      topStoriesHeading: 'Top stories:',
      storyOutlets: (n) => counted(count, n, 'outlet'),
      topOutletsHeading: 'Top outlets:',
      outletStories: (name, n) => `${name} (${counted(count, n, 'story', 'stories')})`,
      preset: presetWord,
      why: (preset) => `spike alerts (${preset}): new stories far above what is usual for this hour of the week`,
      escalated: (n, expected) =>
        `Update: the spike keeps growing, now ${counted(count, n, 'new story', 'new stories')} (${expected})`,
      sms: (rule, n, expected, since) =>
        `Coverage spike: ${rule}: ${counted(count, n, 'new story', 'new stories')} since ${since} (${expected})`,
    },
    chat: { why: 'Why:' },
    digest: {
      title: (audience, n) => `${audience} \u00B7 news digest \u00B7 ${counted(count, n, 'article')}`,
      partLine: (part, parts, first, last, total) =>
        `Part ${count(part)} of ${count(parts)} \u00B7 articles ${count(first)}\u2013${count(last)} of ${count(total)}`,
      part: (part, parts) => `part ${count(part)}/${count(parts)}`,
      heldHeading: 'Held for this digest:',
      heldQuietHours: (n, window) =>
        `${count(n)} held during your quiet hours${window === undefined ? '' : ` (${window.start}\u2013${window.end})`}`,
      heldBudget: (n, budget) =>
        `+${count(n)} more over the daily limit${budget === undefined ? '' : ` of ${counted(count, budget, 'immediate alert')}`}`,
      heldDigest: (n, times) => `${count(n)} collected for your digest (${times.join(', ')})`,
      groupHeading: (label, n, total) => `${label} \u00B7 ${count(n)}${total > n ? ` of ${count(total)}` : ''}`,
      otherGroup: 'Other',
      spikeGroup: 'Coverage spikes',
      urgentMarker: '[urgent] ',
      whyLine: (why) => `Why: ${why}`,
      rule: (ruleId, urgent, reasons) =>
        `rule ${ruleId}${urgent ? ' (urgent)' : ''}${reasons === '' ? '' : `: ${reasons}`}`,
      moreRules: (n) => `+${counted(count, n, 'more rule')}`,
      digestId: (id) => `Digest id: ${id}`,
      smsIntro: (audience, part, parts, n) =>
        `${audience}${parts > 1 ? ` (part ${count(part)}/${count(parts)})` : ''}: ${counted(count, n, 'news alert')}`,
      sms: (intro, headlines, more) =>
        `${intro}${headlines.length > 0 ? `. ${headlines.join('; ')}` : ''}${more > 0 ? ` +${count(more)} more` : ''}`,
      chatTitle: (audience, n, part, parts) =>
        `${audience}: ${counted(count, n, 'article')}${parts > 1 ? ` (part ${count(part)}/${count(parts)})` : ''}`,
      alsoIn: (n, outlets, more) =>
        `also in ${counted(count, n, 'outlet')}${outlets.length === 0 ? '' : `: ${outlets.join(', ')}${more > 0 ? ` and ${count(more)} more` : ''}`}`,
      moreInDigest: (n) => `+${count(n)} more in this digest`,
      chatSummary: (audience, releaseLocal, n) =>
        `[${audience}] digest of ${releaseLocal}: ${counted(count, n, 'article')}`,
    },
  }) satisfies Messages;
