/**
 * What each audience should have received, worked out independently of the run: the simulator's
 * articles in the run's window, matched by the naive reference matcher. `npm start` prints the
 * comparison and the end-to-end tests assert it, so "every audience received exactly what its
 * rules match" is checked, not assumed.
 *
 * Two things make "exactly" more than a set comparison, and both are kept truthful here:
 * - Stories: an audience with `collapse: story` gets one alert per story; the other copies of it
 *   are recorded in the delivery ledger as collapsed, not sent. A matching article the audience did
 *   not receive is accounted for only when the ledger says so ({@link readCollapsedCopies});
 *   anywhere else it is missing. An audience with `collapse: none` must receive every copy.
 * - Revisions: an article is delivered as the run first read it. The expectation is worked out
 *   from those versions; a later version (the provider's newest status or title) may also have
 *   been delivered if it matches, but never has to be.
 */

import { naiveMatch } from '#core/matcher';
import type { Article } from '#core/model';
import { buildRuleSet } from '#core/model';
import { type DeliveryKey, type DeliveryRecord, deliveryId, storyMarkerKey } from '#core/ports';
import { storyTitle } from '#core/story';
import type { SimArticle } from './news-simulator.ts';

/** The article the provider client makes of a simulator article (default response mapping). */
export function articleOf(article: SimArticle): Article {
  return {
    key: `id:${article.articleId}`,
    id: article.articleId,
    title: article.title,
    summary: article.summary,
    url: article.url,
    publishedAt: article.publishedAt,
    categories: article.categories.map((category) => category.code),
    categoryNames: article.categories.map((category) => category.name),
    media: article.media.code,
    mediaName: article.media.name,
    status: article.status,
  };
}

export interface ExpectationInput {
  readonly articles: readonly SimArticle[];
  readonly ruleItems: readonly unknown[];
  readonly audienceItems: readonly unknown[];
  /** Articles published in [from, to] (epoch ms) are in the window. */
  readonly from: number;
  readonly to: number;
  /** Media codes the API key may see (the simulator's key scope). */
  readonly inScope: (mediaCode: string) => boolean;
}

/** audienceId → the article keys it should have received. */
export function expectedDeliveries(input: ExpectationInput): Map<string, Set<string>> {
  return expectedFromArticles({
    ...input,
    articles: input.articles.filter((article) => input.inScope(article.media.code)).map(articleOf),
  });
}

/** The articles, rules and audiences of {@link expectedFromArticles}. */
export interface ArticleExpectationInput {
  /** Articles as the provider client read them (duplicates are fine: keys are compared). */
  readonly articles: readonly Article[];
  readonly ruleItems: readonly unknown[];
  readonly audienceItems: readonly unknown[];
  /** Articles published in [from, to] (epoch ms) are in the window. */
  readonly from: number;
  readonly to: number;
}

/**
 * audienceId → the article keys it should have received, from articles already read (a real
 * provider's: the ones the runs fetched, since nothing else knows what it holds).
 */
export function expectedFromArticles(input: ArticleExpectationInput): Map<string, Set<string>> {
  const { rules, audiences } = buildRuleSet(input.ruleItems, input.audienceItems);
  const expected = new Map<string, Set<string>>(audiences.map((audience) => [audience.audienceId, new Set()]));
  for (const article of input.articles) {
    if (article.publishedAt < input.from || article.publishedAt > input.to) continue;
    for (const match of naiveMatch(rules, article)) {
      expected.get(match.audienceId)?.add(match.article.key);
    }
  }
  return expected;
}

/** How one audience's deliveries compare with what it should have received. */
export interface AudienceCheck {
  readonly expected: number;
  readonly received: number;
  readonly missing: string[];
  readonly unexpected: string[];
  readonly duplicates: string[];
  /**
   * Expected articles not sent because the ledger records them as copies of a story the audience
   * already has (`collapse: story` only). Received plus collapsed is the expectation.
   */
  readonly collapsed: string[];
  /**
   * Expected articles not received because their delivery is not due yet: listed late by the
   * provider, they are promised by a later recheck (docs/incremental-reading.md), with when.
   */
  readonly notYetDue: NotYetDue[];
}

/** An expected article whose delivery is due after the last run (see {@link CompareOptions.due}). */
export interface NotYetDue {
  readonly articleKey: string;
  /** By when it is due (epoch ms), and when the provider listed it how late. */
  readonly dueAt: number;
  readonly listedAt?: number;
  readonly minutesLate?: number;
}

/** When an article's delivery is due, by the documented promise. */
export interface DueTime {
  readonly at: number;
  /** Listed late: when it was listed and how many minutes after its publication time. */
  readonly late?: { readonly listedAt: number; readonly minutesLate: number };
}

/** audienceId → article key → the story id the ledger recorded it as a collapsed copy of. */
export type CollapsedCopies = ReadonlyMap<string, ReadonlyMap<string, string>>;

/** What else {@link compareDeliveries} takes into account; both default to nothing. */
export interface CompareOptions {
  /** Copies the ledger records as collapsed (see {@link readCollapsedCopies}). */
  readonly collapsed?: CollapsedCopies;
  /**
   * audienceId → articles it may have received although they are not expected: later versions
   * that match (the provider's newest status or title of an article first read otherwise).
   */
  readonly allowed?: ReadonlyMap<string, ReadonlySet<string>>;
  /**
   * When each article's delivery is due (article key → due time) and when the last run was: an
   * expected article not received and not due by then is `notYetDue`, not missing.
   */
  readonly due?: { readonly at: ReadonlyMap<string, DueTime>; readonly now: number };
}

export function compareDeliveries(
  expected: ReadonlyMap<string, ReadonlySet<string>>,
  received: ReadonlyMap<string, readonly string[]>,
  options: CompareOptions = {},
): Map<string, AudienceCheck> {
  const checks = new Map<string, AudienceCheck>();
  for (const audienceId of new Set([...expected.keys(), ...received.keys()])) {
    const want = expected.get(audienceId) ?? new Set<string>();
    const allowed = options.allowed?.get(audienceId);
    const collapsedHere = options.collapsed?.get(audienceId);
    const got = received.get(audienceId) ?? [];
    const counts = new Map<string, number>();
    for (const key of got) counts.set(key, (counts.get(key) ?? 0) + 1);
    const collapsed = [...want].filter((key) => !counts.has(key) && collapsedHere?.has(key) === true).sort();
    const absent = [...want].filter((key) => !counts.has(key) && collapsedHere?.has(key) !== true).sort();
    const notDue = (key: string) => {
      const due = options.due?.at.get(key);
      return due !== undefined && due.at > (options.due?.now ?? Number.POSITIVE_INFINITY);
    };
    checks.set(audienceId, {
      expected: want.size,
      received: got.length,
      missing: absent.filter((key) => !notDue(key)),
      notYetDue: absent.filter(notDue).map((articleKey) => {
        const due = options.due?.at.get(articleKey) as DueTime;
        return {
          articleKey,
          dueAt: due.at,
          ...(due.late === undefined ? {} : { listedAt: due.late.listedAt, minutesLate: due.late.minutesLate }),
        };
      }),
      unexpected: [...counts.keys()].filter((key) => !want.has(key) && allowed?.has(key) !== true).sort(),
      duplicates: [...counts.entries()]
        .filter(([, count]) => count > 1)
        .map(([key]) => key)
        .sort(),
      collapsed,
    });
  }
  return checks;
}

/** The ids of the audiences that collapse stories (`collapse: story`); invalid items are left out. */
export function collapsingAudiences(audienceItems: readonly unknown[]): Set<string> {
  const { audiences } = buildRuleSet([], audienceItems);
  return new Set(audiences.filter((audience) => audience.collapse === 'story').map((audience) => audience.audienceId));
}

/**
 * What the delivery ledger recorded about the expected articles a collapsing audience did not
 * receive: those it marks as collapsed copies (`collapsedInto`), with their story. Only audiences
 * in `collapsing` are asked: for any other audience a missing article is missing.
 *
 * With `sameStory` (the simulator knows which article copies which), a copy counts as collapsed
 * only when it really is a copy of the article its audience received for the story (the story
 * marker's lead): a wrong merge is a lost alert, and the ledger must not vouch for itself.
 */
export async function readCollapsedCopies(
  ledger: { readDeliveries(keys: readonly DeliveryKey[]): Promise<ReadonlyMap<string, DeliveryRecord>> },
  expected: ReadonlyMap<string, ReadonlySet<string>>,
  received: ReadonlyMap<string, readonly string[]>,
  collapsing: ReadonlySet<string>,
  sameStory?: (copyKey: string, leadKey: string) => boolean,
): Promise<Map<string, Map<string, string>>> {
  const keys: DeliveryKey[] = [];
  for (const audienceId of collapsing) {
    const got = new Set(received.get(audienceId) ?? []);
    for (const articleKey of expected.get(audienceId) ?? []) {
      if (!got.has(articleKey)) keys.push({ audienceId, articleKey });
    }
  }
  const copies = new Map<string, Map<string, string>>();
  if (keys.length === 0) return copies;
  const entries = [...(await ledger.readDeliveries(keys)).values()].filter(
    (entry) => entry.collapsedInto !== undefined,
  );
  const markers =
    sameStory === undefined || entries.length === 0
      ? new Map<string, DeliveryRecord>()
      : await ledger.readDeliveries(
          entries.map((entry) => storyMarkerKey(entry.audienceId, entry.collapsedInto ?? '')),
        );
  for (const entry of entries) {
    const storyId = entry.collapsedInto ?? '';
    if (sameStory !== undefined) {
      const lead = markers.get(deliveryId(storyMarkerKey(entry.audienceId, storyId)))?.leadArticleKey;
      if (lead === undefined || !sameStory(entry.articleKey, lead)) continue;
    }
    const byKey = copies.get(entry.audienceId) ?? new Map<string, string>();
    byKey.set(entry.articleKey, storyId);
    copies.set(entry.audienceId, byKey);
  }
  return copies;
}

/**
 * The simulator's truth about stories: two articles are the same story when they copy the same
 * original (or one is the other's original), or when their originals' headlines are word for word
 * the same: the simulator builds originals from a limited set of templates, so the same headline
 * recurs over a lead that differs in a detail (a city, "third" or "fifth" session), which a
 * reader would take for the same story too. Any other merge is a wrong one: a lost alert.
 */
export function simulatorSameStory(articles: readonly SimArticle[]): (copyKey: string, leadKey: string) => boolean {
  const byId = new Map(articles.map((article) => [article.articleId, article]));
  const original = (key: string) => {
    const article = byId.get(key.startsWith('id:') ? key.slice(3) : key);
    return article?.copyOf === undefined ? article : (byId.get(article.copyOf) ?? article);
  };
  const text = (article: SimArticle) => storyTitle(article.title);
  return (copyKey, leadKey) => {
    const copy = original(copyKey);
    const lead = original(leadKey);
    if (copy === undefined || lead === undefined) return false;
    return copy.articleId === lead.articleId || text(copy) === text(lead);
  };
}

/** One audience's alerts and the story copies collapsed into them, as `npm start` reports it. */
export interface CollapseReport {
  readonly collapse: 'story' | 'none';
  /** Alerts received (update notices not included). */
  readonly alerts: number;
  /** Copies recorded as collapsed, not sent. */
  readonly copiesCollapsed: number;
  /** Stories those copies belong to. */
  readonly stories: number;
  /** Copies of the largest of those stories, its alert included ("1 alert for N copies"). */
  readonly largestStory: number;
  /** Update notices received (`updates: notify`). */
  readonly updateNotices: number;
}

export function collapseReport(input: {
  readonly collapse: 'story' | 'none';
  readonly alerts: number;
  readonly updateNotices?: number;
  /** article key → story id, from {@link readCollapsedCopies}. */
  readonly copies?: ReadonlyMap<string, string> | undefined;
}): CollapseReport {
  const perStory = new Map<string, number>();
  for (const storyId of input.copies?.values() ?? []) perStory.set(storyId, (perStory.get(storyId) ?? 0) + 1);
  return {
    collapse: input.collapse,
    alerts: input.alerts,
    copiesCollapsed: input.copies?.size ?? 0,
    stories: perStory.size,
    largestStory: perStory.size === 0 ? 0 : Math.max(...perStory.values()) + 1,
    updateNotices: input.updateNotices ?? 0,
  };
}

const counted = (n: number, one: string, many: string): string =>
  `${n.toLocaleString('en-US')} ${n === 1 ? one : many}`;

/**
 * The line `npm start` prints per audience, e.g.
 * `chips-team: 12 alerts (7 copies collapsed into 3 stories; the largest: 1 alert for 4 copies)`.
 */
export function describeCollapse(audienceId: string, report: CollapseReport): string {
  const alerts = `${audienceId}: ${counted(report.alerts, 'alert', 'alerts')}`;
  const updates =
    report.updateNotices > 0 ? `, ${counted(report.updateNotices, 'update notice', 'update notices')}` : '';
  if (report.collapse === 'none') return `${alerts}${updates} (collapse: none, every copy sent)`;
  if (report.copiesCollapsed === 0) return `${alerts}${updates} (no copies of a story to collapse)`;
  return `${alerts}${updates} (${counted(report.copiesCollapsed, 'copy', 'copies')} collapsed into ${counted(
    report.stories,
    'story',
    'stories',
  )}; the largest: 1 alert for ${report.largestStory} copies)`;
}

export const isExact = (check: AudienceCheck): boolean =>
  check.missing.length === 0 && check.unexpected.length === 0 && check.duplicates.length === 0;

/** An update notice an audience received (`updates: notify`). */
export interface ReceivedUpdateNotice {
  readonly deliveryId: string;
  /** The article it is about. */
  readonly articleKey: string;
}

/**
 * Update notices that should not have gone out, per audience: to an audience that ignores updates,
 * about an article it never had (neither received nor collapsed into a story it has), or the same
 * notice twice. An empty result is the truthful "nothing wrong"; how many were due is not known
 * here (it depends on when the runs re-read a revised article), so none missing is not checked.
 */
export function checkUpdateNotices(
  notices: ReadonlyMap<string, readonly ReceivedUpdateNotice[]>,
  audienceItems: readonly unknown[],
  had: ReadonlyMap<string, ReadonlySet<string>>,
): Map<string, string[]> {
  const { audiences } = buildRuleSet([], audienceItems);
  const notifying = new Set(audiences.filter((audience) => audience.updates === 'notify').map((a) => a.audienceId));
  const problems = new Map<string, string[]>();
  for (const [audienceId, list] of notices) {
    const found: string[] = [];
    const seen = new Set<string>();
    for (const notice of list) {
      if (!notifying.has(audienceId)) found.push(`${notice.deliveryId}: the audience ignores updates`);
      else if (had.get(audienceId)?.has(notice.articleKey) !== true) {
        found.push(`${notice.deliveryId}: about ${notice.articleKey}, which the audience never had`);
      }
      if (seen.has(notice.deliveryId)) found.push(`${notice.deliveryId}: sent twice`);
      seen.add(notice.deliveryId);
    }
    if (found.length > 0) problems.set(audienceId, found);
  }
  return problems;
}
