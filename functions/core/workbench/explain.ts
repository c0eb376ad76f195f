/**
 * The ops workbench's answer to "would this rule match this article, and why not?" and "what would
 * this audience's delivery do with it?". Pure: it takes the rule, the audience, the article and
 * the few facts of the state table that matter (the ledger entry, the story marker, today's budget
 * count), and says what the run would do, in the run's own terms.
 *
 * It owns one guarantee: what explain says is what the run does. The rule verdict is the reference
 * matcher's (`criterionHits` in matcher.ts, which `naiveMatch` shares, and a property test holds it
 * to the indexed matcher); the delivery verdict is `planDelivery` and `releaseDueAt` of
 * delivery-plan.ts, the functions the run itself plans with.
 */

import { isQuietAt, planDelivery, releaseDueAt, urgencyOf } from '../delivery-plan.ts';
import { changeSince, outcomeFieldsDamaged } from '../ledger-facts.ts';
import { criterionHits } from '../matcher.ts';
import { type Article, type Audience, type AudienceMatch, DESCRIBED_ARTICLE_KEY, type Rule } from '../model.ts';
import type { DeliveryRecord, HoldReason } from '../ports.ts';
import { falseBecauseText } from '../query.ts';
import { withoutLaterRules } from '../rule-reach.ts';
import { storyIdOf } from '../story.ts';
import { heldReleaseOf } from './holds.ts';

/** A rule's criterion, named as the rule item spells it. */
export type CriterionName =
  | 'enabled'
  | 'categories'
  | 'excludeCategories'
  | 'keywords'
  | 'excludeKeywords'
  | 'media'
  | 'statuses'
  | 'query'
  | 'matchAll';

/**
 * One criterion's verdict: `pass` (it lets the article through), `fail` (it stops it), or
 * `unset` (the rule does not use it: no effect).
 */
export interface CriterionVerdict {
  readonly criterion: CriterionName;
  readonly verdict: 'pass' | 'fail' | 'unset';
  /** Why, in plain words: which terms hit, or what the article carries instead. */
  readonly why: string;
  /** The rule's terms that hit (for exclusions: the ones that exclude). */
  readonly hits: readonly string[];
  /** A query that is false: every part that failed (`why` shows five at most). */
  readonly because?: readonly string[];
}

/** Every criterion of one rule judged on one article. */
export interface RuleExplanation {
  readonly ruleId: string;
  readonly audienceId: string;
  /** The run's verdict: the rule is enabled and every criterion passes. */
  readonly matches: boolean;
  /** One line: why it matches, or the criteria that stop it. */
  readonly summary: string;
  readonly criteria: readonly CriterionVerdict[];
}

/**
 * Each value once, in order: a rule may list a term twice (`keywords: [rate, rate]`), and the
 * term hit once, not twice.
 */
const once = (values: readonly string[]): string[] => [...new Set(values)];
const list = (values: readonly string[]): string =>
  once(values)
    .map((value) => `"${value}"`)
    .join(', ');
const carried = (values: readonly string[], what: string): string =>
  values.length === 0 ? `the article has no ${what}` : `the article has ${list(values)}`;

/** Judges every criterion of `rule` on `article` (see the module comment). */
export function explainRule(rule: Rule, article: Article): RuleExplanation {
  const hits = criterionHits(rule, article);
  const criteria: CriterionVerdict[] = [];
  criteria.push(
    rule.enabled
      ? { criterion: 'enabled', verdict: 'pass', why: 'the rule is enabled', hits: [] }
      : { criterion: 'enabled', verdict: 'fail', why: 'the rule is disabled: the run skips it', hits: [] },
  );
  const positive = (
    criterion: CriterionName,
    terms: readonly string[] | undefined,
    found: readonly string[] | undefined,
    what: string,
    articleValues: readonly string[],
  ) => {
    if (terms === undefined || terms.length === 0 || found === undefined) {
      criteria.push({ criterion, verdict: 'unset', why: `no ${criterion} in the rule`, hits: [] });
    } else if (found.length > 0) {
      criteria.push({ criterion, verdict: 'pass', why: `${list(found)} hit`, hits: once(found) });
    } else {
      criteria.push({
        criterion,
        verdict: 'fail',
        why: `none of ${list(terms)} hit; ${carried(articleValues, what)}`,
        hits: [],
      });
    }
  };
  positive('categories', rule.categories, hits.categories, 'category', hits.article.categoryValues);
  positive('keywords', rule.keywords, hits.keywords, 'such word in its title or summary', []);
  // The keyword line needs no list of the article's words: say where they were looked for.
  const keywordLine = criteria.at(-1);
  if (keywordLine?.criterion === 'keywords' && keywordLine.verdict === 'fail') {
    criteria[criteria.length - 1] = {
      ...keywordLine,
      why: `none of ${list(rule.keywords ?? [])} is in the title or summary (whole words for Latin scripts)`,
    };
  }
  positive('media', rule.media, hits.media, 'media', hits.article.media);
  positive(
    'statuses',
    rule.statuses,
    hits.statuses,
    'status',
    hits.article.status === undefined ? [] : [hits.article.status],
  );
  const exclusion = (criterion: CriterionName, terms: readonly string[] | undefined, found: readonly string[]) => {
    if (terms === undefined || terms.length === 0) {
      criteria.push({ criterion, verdict: 'unset', why: `no ${criterion} in the rule`, hits: [] });
    } else if (found.length > 0) {
      criteria.push({
        criterion,
        verdict: 'fail',
        why: `${list(found)} hit, which excludes the article`,
        hits: once(found),
      });
    } else {
      criteria.push({ criterion, verdict: 'pass', why: `none of ${list(terms)} hit`, hits: [] });
    }
  };
  exclusion('excludeCategories', rule.excludeCategories, hits.excludedByCategories);
  exclusion('excludeKeywords', rule.excludeKeywords, hits.excludedByKeywords);
  const { query } = hits;
  if (query.state === 'absent')
    criteria.push({ criterion: 'query', verdict: 'unset', why: 'no query in the rule', hits: [] });
  else if (query.state === 'invalid') {
    criteria.push({
      criterion: 'query',
      verdict: 'fail',
      why: 'the query does not parse, so it matches nothing',
      hits: [],
    });
  } else if (query.true) {
    criteria.push({
      criterion: 'query',
      verdict: 'pass',
      why: query.terms.length > 0 ? `true because of ${list(query.terms)}` : 'true (nothing it excludes is there)',
      hits: once(query.terms),
    });
  } else {
    // In parentheses: the summary separates criteria with `; `, as the reasons are separated.
    criteria.push({
      criterion: 'query',
      verdict: 'fail',
      why: `false (${falseBecauseText(query.falseBecause)})`,
      hits: [],
      because: query.falseBecause,
    });
  }
  const hasPositive =
    [rule.categories, rule.keywords, rule.media, rule.statuses].some((terms) => (terms ?? []).length > 0) ||
    (query.state === 'evaluated' && query.anchored);
  if (hasPositive) {
    criteria.push({
      criterion: 'matchAll',
      verdict: rule.matchAll ? 'pass' : 'unset',
      why: rule.matchAll ? 'set (the rule has positive criteria anyway)' : 'not needed: the rule has positive criteria',
      hits: [],
    });
  } else if (rule.matchAll) {
    criteria.push({
      criterion: 'matchAll',
      verdict: 'pass',
      why: 'set: every article passes unless excluded',
      hits: [],
    });
  } else {
    criteria.push({
      criterion: 'matchAll',
      verdict: 'fail',
      why: 'the rule has no positive criterion and matchAll is not set, so it matches nothing',
      hits: [],
    });
  }
  const matches = rule.enabled && hits.matches;
  const failing = criteria.filter((criterion) => criterion.verdict === 'fail');
  const summary = matches
    ? `matches: ${criteria
        .filter((criterion) => criterion.verdict === 'pass' && criterion.criterion !== 'enabled')
        .map((criterion) => `${criterion.criterion} ${criterion.why}`)
        .join('; ')}`
    : `does not match: ${failing.map((criterion) => `${criterion.criterion}: ${criterion.why}`).join('; ')}`;
  return { ruleId: rule.ruleId, audienceId: rule.audienceId, matches, summary, criteria };
}

/** What the state table knows that decides an audience's delivery of one article. */
export interface DeliveryFacts {
  /** The ledger entry of this article for this audience, if any. */
  readonly ledger?: DeliveryRecord | undefined;
  /**
   * The article's story and the article that carries it for the audience (its story marker),
   * when the audience collapses stories and the story index knows the article or would file it.
   */
  readonly story?: { readonly storyId: string; readonly leadArticleKey?: string | undefined } | undefined;
  /** Immediate alerts counted today (the audience's local date) against its daily budget. */
  readonly usedToday: number;
  /**
   * When the ledger holds the article still: its release as `holds` plans it, with the audience's
   * other holds (oldest first share today's budget). Without it, planned for this entry alone.
   */
  readonly heldRelease?: { readonly releaseAt: number; readonly when: 'next-run' | 'scheduled' } | undefined;
  /**
   * The ledger entry says held, but nothing is held for it: a release from before the ledger
   * recorded release outcomes released it (what became of it is not recorded).
   */
  readonly releasedUnrecorded?: boolean | undefined;
  /**
   * The ledger records the article as a collapsed copy whose lead never reached the audience
   * (delivery-pipeline.ts `copyLeadEntryLost`): the lead, and why. A run that reads the copy
   * again plans it again, and it carries the story.
   */
  readonly copyLeadLost?: { readonly lead: string; readonly why: string } | undefined;
  /**
   * How the reader runs the CLI on the target explained (`news-alerts --local`, cli/hints.ts
   * `newsAlerts`): the start of the command lines the explanation suggests, so a suggestion pasted
   * into the same shell acts on that target, never on the deployed stack instead. Default
   * `news-alerts`.
   */
  readonly cli?: string | undefined;
  /**
   * Where the scheduled runs read: the watermark and how late the provider may list an article
   * and still be read (LATE_ARRIVAL_MINUTES), or why that cannot be told. Without it, reading is
   * not judged.
   */
  readonly reading?:
    | {
        readonly watermarkAt: number;
        /** INCREMENTAL_OVERLAP_MINUTES: how far behind the watermark the next run reads anyway. */
        readonly overlapMs: number;
        readonly lateArrivalMs: number;
        /** When each rule was saved (rule-reach.ts `savedTimes`): far back, an article is old news to a later rule. */
        readonly ruleSavedAt: ReadonlyMap<string, number>;
        /**
         * The earliest publication time a scheduled run can still read (reading/plan.ts
         * `earliestScheduledRead`); an article before it is never read again. Absent: not judged.
         */
        readonly earliestReadAt?: number | undefined;
      }
    | { readonly problem: string }
    | undefined;
}

/** The audience has the article's story already, carried by another article: the match collapses. */
const collapses = (audience: Audience, facts: DeliveryFacts, match: AudienceMatch): boolean =>
  audience.collapse === 'story' &&
  facts.story?.leadArticleKey !== undefined &&
  facts.story.leadArticleKey !== match.article.key;

/** What the delivery would do with a match, step by step as the run decides. */
export interface DeliveryExplanation {
  readonly audienceId: string;
  /**
   * `send` now, `hold` for a digest (with `reason` and `releaseAt`; also an article the ledger
   * holds already), `collapse` into a story another article carries, `already` handled (the ledger
   * has it), `unread` (published so far behind the watermark that no scheduled run reads it: a
   * replay sends it), or `skip` (audience disabled).
   */
  readonly outcome: 'send' | 'hold' | 'collapse' | 'already' | 'unread' | 'skip';
  readonly reason?: HoldReason | undefined;
  /** When a hold would be released (epoch ms), planned from the audience's current settings. */
  readonly releaseAt?: number | undefined;
  /** The article a collapsed copy goes with. */
  readonly collapsedInto?: string | undefined;
  /** One line per step: collapse, quiet hours, digest, budget. */
  readonly steps: readonly { readonly step: string; readonly why: string }[];
}

const iso = (at: number): string => new Date(at).toISOString();

/**
 * What the audience's delivery would do with `match` at `now` (see {@link DeliveryExplanation}),
 * in the run's order: the ledger, story collapse, then `planDelivery` (digest mode, quiet hours,
 * daily budget).
 */
export function explainDelivery(
  audience: Audience,
  match: AudienceMatch,
  now: number,
  facts: DeliveryFacts,
): DeliveryExplanation {
  const steps: { step: string; why: string }[] = [];
  const base = { audienceId: audience.audienceId };
  if (!audience.enabled) {
    steps.push({ step: 'audience', why: 'the audience is disabled: the run sends it nothing' });
    return { ...base, outcome: 'skip', steps };
  }
  const lostCopy = facts.ledger?.collapsedInto !== undefined ? facts.copyLeadLost : undefined;
  if (facts.ledger !== undefined && lostCopy !== undefined) {
    steps.push({
      step: 'ledger',
      why: `recorded at ${iso(facts.ledger.deliveredAt)} as collapsed into story ${facts.ledger.collapsedInto} with ${lostCopy.lead}, which never reached the audience (${lostCopy.why}): a run that reads it again plans it again, and it carries the story (unless that lead is read with it and goes out)`,
    });
  } else if (facts.ledger !== undefined) {
    const entry = facts.ledger;
    const damaged = outcomeFieldsDamaged(entry);
    if (damaged.length > 0) {
      steps.push({
        step: 'ledger',
        why: `handled, but what became of it is unknown: its ledger entry is malformed (${damaged.join(', ')}); a re-read sends nothing`,
      });
      return { ...base, outcome: 'already', steps };
    }
    const heldStill =
      entry.heldFor !== undefined && entry.releasedAt === undefined && entry.collapsedInto === undefined;
    if (heldStill && facts.releasedUnrecorded === true) {
      steps.push({
        step: 'ledger',
        why: `already handled at ${iso(entry.deliveredAt)} (held for ${entry.heldFor}; no longer held, and the ledger does not say what became of it: a release from before the ledger recorded release outcomes released it, or its held item expired or could not be read): a re-read sends nothing`,
      });
      return { ...base, outcome: 'already', steps };
    }
    if (heldStill && entry.heldFor !== undefined) {
      // Still held: it goes out when its hold is released, as `holds` plans it (facts.heldRelease);
      // without the other holds, planned for this entry alone with today's budget left.
      const budgetLeft =
        audience.dailyBudget === undefined
          ? Number.POSITIVE_INFINITY
          : Math.max(0, audience.dailyBudget - facts.usedToday);
      const release =
        facts.heldRelease ??
        heldReleaseOf({ heldAt: entry.deliveredAt, reason: entry.heldFor, match }, audience, now, budgetLeft);
      steps.push({
        step: 'ledger',
        why: `held for ${entry.heldFor} since ${iso(entry.deliveredAt)}: ${
          release.when === 'next-run' ? 'the next run releases it' : `released at ${iso(release.releaseAt)}`
        } (a re-read adds nothing)`,
      });
      return { ...base, outcome: 'hold', reason: entry.heldFor, releaseAt: release.releaseAt, steps };
    }
    const what =
      entry.collapsedInto !== undefined
        ? `collapsed into story ${entry.collapsedInto}`
        : entry.heldFor !== undefined
          ? `held for ${entry.heldFor}${entry.releasedAt !== undefined ? `, released ${iso(entry.releasedAt)}` : ''}`
          : 'sent';
    // What the run does with a re-read of a handled article (delivery-pipeline.ts): a change since
    // the entry was written is an update notice for an audience that wants them, once.
    const change = entry.collapsedInto === undefined ? changeSince(entry, match.article) : undefined;
    const reRead =
      change === undefined
        ? 'a re-read sends nothing'
        : `the article changed since (${
            change.kind === 'status'
              ? `status ${JSON.stringify(change.status)}, the ledger has ${JSON.stringify(change.previousStatus)}`
              : 'a new title'
          }): ${
            audience.updates === 'notify'
              ? 'a run that reads it again sends an update notice (updates: notify), once'
              : `the audience ignores updates (updates: ${audience.updates}): a re-read sends nothing`
          }`;
    steps.push({ step: 'ledger', why: `already handled at ${iso(entry.deliveredAt)} (${what}): ${reRead}` });
    return { ...base, outcome: 'already', steps };
  }
  if (facts.reading !== undefined && 'problem' in facts.reading) {
    steps.push({ step: 'reading', why: `not judged: ${facts.reading.problem}` });
  } else if (facts.reading !== undefined) {
    const { watermarkAt, overlapMs, lateArrivalMs, ruleSavedAt, earliestReadAt } = facts.reading;
    const published = match.article.publishedAt;
    const minutes = Math.round(lateArrivalMs / 60_000);
    const replay = `${facts.cli ?? 'news-alerts'} replay --from ${iso(published)} --to ${iso(published)} --audience ${audience.audienceId}`;
    // A copy of a story the audience has: a replay records it as collapsed too, it sends nothing.
    const replayHint = (send: string) =>
      collapses(audience, facts, match) ? 'a replay would collapse it as well' : `${send}: ${replay}`;
    // A run reads back to the watermark less the overlap, but never before its cutoff (the
    // late-arrival window behind the watermark): the shorter of the two is what the next run reads.
    if (published >= watermarkAt - Math.min(overlapMs, lateArrivalMs)) {
      steps.push({
        step: 'reading',
        why: `published at or after the watermark ${iso(watermarkAt)} (less INCREMENTAL_OVERLAP_MINUTES): the next run reads it`,
      });
    } else if (
      published < watermarkAt - lateArrivalMs &&
      withoutLaterRules([match], published + lateArrivalMs, ruleSavedAt).length === 0
    ) {
      // What the run does (alert-run.ts): so far behind the watermark only a sweep or a recheck
      // reads an article, and it is old news to a rule saved more than LATE_ARRIVAL_MINUTES after it.
      steps.push({
        step: 'reading',
        why: `published ${iso(published)}, more than LATE_ARRIVAL_MINUTES (${minutes}) before the watermark ${iso(watermarkAt)}, and every matching rule was saved more than ${minutes} minutes after it: runs treat it as old news; ${replayHint('to send it')}`,
      });
      return { ...base, outcome: 'unread', steps };
    } else if (earliestReadAt !== undefined && published < earliestReadAt) {
      // What the runs read (reading/plan.ts): back to the late-arrival window behind the watermark,
      // or behind where the last full sweep started (at most two days); later runs only read later.
      steps.push({
        step: 'reading',
        why: `published ${iso(published)}, before ${iso(earliestReadAt)}, the earliest a scheduled run still reads (LATE_ARRIVAL_MINUTES, ${minutes}, behind the watermark ${iso(watermarkAt)}, or behind where the last full sweep started, at most two days): no scheduled run will read it; ${replayHint('to send it')}`,
      });
      return { ...base, outcome: 'unread', steps };
    } else {
      steps.push({
        step: 'reading',
        why: `published before the watermark ${iso(watermarkAt)}: a run reads it only if the provider lists it late (up to LATE_ARRIVAL_MINUTES, ${minutes}) or a full sweep reads its day; ${replayHint('to send it now')}`,
      });
    }
  }
  if (audience.collapse === 'story') {
    const story = facts.story;
    if (collapses(audience, facts, match) && story?.leadArticleKey !== undefined) {
      steps.push({
        step: 'story collapse',
        why: `the audience has story ${story.storyId} already (carried by ${story.leadArticleKey}): this copy collapses into it`,
      });
      return { ...base, outcome: 'collapse', collapsedInto: story.leadArticleKey, steps };
    }
    steps.push({
      step: 'story collapse',
      why:
        story === undefined
          ? 'no story known for the article yet: it would lead a new story'
          : story.leadArticleKey === undefined && story.storyId === storyIdOf(match.article.key)
            ? // A new story takes its id from its lead's key: one an article described by its text
              // does not have (every such article would name the same story).
              `no story of this audience has it yet: it would lead a new story${match.article.key === DESCRIBED_ARTICLE_KEY ? '' : `, ${story.storyId}`}`
            : `it leads story ${story.storyId} for this audience`,
    });
  } else {
    steps.push({ step: 'story collapse', why: 'off for this audience (collapse: none)' });
  }
  const decision = planDelivery(match, audience, now, facts.usedToday);
  const urgency = urgencyOf(match, audience);
  if (audience.quietHours !== undefined) {
    const quiet = isQuietAt(now, audience);
    steps.push({
      step: 'quiet hours',
      why: `${audience.quietHours.start}-${audience.quietHours.end} ${audience.timeZone}: ${
        quiet
          ? urgency !== undefined
            ? `inside them, but urgent (${urgency}) bypasses them`
            : 'inside them now'
          : 'outside them now'
      }`,
    });
  } else {
    steps.push({ step: 'quiet hours', why: 'none set' });
  }
  steps.push({
    step: 'digest',
    why:
      audience.deliveryMode === 'digest'
        ? `digest mode: collected for ${audience.digestTimes.join(', ')} ${audience.timeZone}`
        : 'immediate mode',
  });
  steps.push({
    step: 'budget',
    why:
      audience.dailyBudget === undefined
        ? 'no daily budget'
        : `${facts.usedToday} of ${audience.dailyBudget} immediate alerts used today${
            decision.action === 'hold' && decision.reason === 'budget' ? ': used up' : ''
          }`,
  });
  if (decision.action === 'send') return { ...base, outcome: 'send', steps };
  const releaseAt = releaseDueAt({ heldAt: now, reason: decision.reason, urgent: decision.urgent }, audience);
  return { ...base, outcome: 'hold', reason: decision.reason, releaseAt, steps };
}
