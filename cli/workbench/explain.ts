/**
 * "Would rule X match article Y, and what would the audience's delivery do with it?", from the
 * target's tables: the rule and its audience as stored, the ledger entry, the story index (asked
 * without writing), and today's budget count. The verdicts are the core's
 * (functions/core/workbench/explain.ts); this module only gathers the facts.
 */
import { DynamoStateStore } from '#aws/dynamo-state-store';
import { DynamoStoryStore } from '#aws/dynamo-story-index';
import { localDate } from '#core/delivery-plan';
import { leadOfCollapsedCopy, whyCopyLeadLost } from '#core/ledger-facts';
import { compileRules } from '#core/matcher';
import type { Article, Audience, AudienceMatch, Rule } from '#core/model';
import { parseAudience, parseRule } from '#core/model';
import {
  type DeliveryRecord,
  deliveryId,
  type Log,
  type ReadingState,
  storyMarkerKey,
  type Watermark,
} from '#core/ports';
import { earliestScheduledRead } from '#core/reading/plan';
import { savedTimes } from '#core/rule-reach';
import { StoryResolver } from '#core/story';
import {
  type DeliveryExplanation,
  type DeliveryFacts,
  explainDelivery,
  explainRule,
  type RuleExplanation,
} from '#core/workbench/explain';
import { describeHolds, stillHeld } from '#core/workbench/holds';
import { NotFoundError, UsageError } from '../errors.ts';
import { newsAlerts } from '../hints.ts';
import { getItem, type Item, listItems } from '../items.ts';
import type { Target } from '../target.ts';
import { didYouMean, hinted } from '../unknown-ids.ts';
import { audienceTableOf, ruleTableOf } from './tables.ts';

/** The explanation of one rule on one article, with the delivery when the audience is known. */
export interface ArticleExplanation {
  readonly rule: RuleExplanation;
  /** What the audience's delivery would do (as if the rule matched, when it does not). */
  readonly delivery?: DeliveryExplanation | undefined;
  /** Set when the audience item is missing or invalid, so the delivery could not be judged. */
  readonly audienceProblem?: string | undefined;
}

/** A rule item validated with the run's schema, or a usage error naming the problem. */
export function ruleOf(item: Item, ruleId: string): Rule {
  const parsed = parseRule(item);
  if (!parsed.ok) {
    throw new UsageError(
      `rule ${ruleId} is invalid, so the run skips it: ${parsed.rejected.reason}; fix it with '${newsAlerts()} rules update ${ruleId} …'`,
    );
  }
  return parsed.value;
}

/** The stored rule, validated. */
export async function storedRule(target: Target, ruleId: string): Promise<Rule> {
  const item = await getItem(target.clients.documents, ruleTableOf(target), ruleId);
  if (item === undefined) {
    throw new NotFoundError(
      `rule ${ruleId} does not exist${hinted(await didYouMean(target, 'rule', [ruleId]), `${newsAlerts()} rules list`)}`,
    );
  }
  return ruleOf(item, ruleId);
}

/** The stored audience, validated; a reason instead when it is missing or invalid. */
export async function storedAudience(target: Target, audienceId: string): Promise<Audience | string> {
  const item = await getItem(target.clients.documents, audienceTableOf(target), audienceId);
  if (item === undefined) return `audience ${audienceId} does not exist`;
  const parsed = parseAudience(item);
  return parsed.ok ? parsed.value : `audience ${audienceId} is invalid: ${parsed.rejected.reason}`;
}

/** Explains `rule` on `article`, with `audienceId`'s delivery (default: the rule's audience). */
export async function explainOnArticle(
  target: Target,
  rule: Rule,
  article: Article,
  now: number,
  log: Log,
  audienceId: string = rule.audienceId,
): Promise<ArticleExplanation> {
  const explanation = explainRule(rule, article);
  const [audience, ruleItems] = await Promise.all([
    storedAudience(target, audienceId),
    listItems(target.clients.documents, ruleTableOf(target)),
  ]);
  if (typeof audience === 'string') return { rule: explanation, audienceProblem: audience };
  // The run hands the delivery one match per audience with every rule of it that matched (any
  // urgent one makes it urgent): the other enabled, valid rules of the audience count too, with
  // this rule as given (a draft stands in for its stored version).
  const others = ruleItems.flatMap((item) => {
    const parsed = parseRule(item);
    return parsed.ok &&
      parsed.value.enabled &&
      parsed.value.audienceId === audienceId &&
      parsed.value.ruleId !== rule.ruleId
      ? [parsed.value]
      : [];
  });
  const ruleMatch = { ruleId: rule.ruleId, description: rule.description, urgent: rule.urgent, reasons: [] };
  const found = compileRules([{ ...rule, audienceId }, ...others])
    .match(article)
    .find((match) => match.audienceId === audienceId);
  // As if this rule matched, when it does not: what its match alone would get.
  const match: AudienceMatch =
    found?.rules.some((matched) => matched.ruleId === rule.ruleId) === true
      ? found
      : { audienceId, article, rules: [ruleMatch] };
  const savedAt = savedTimes([rule, ...others]);
  return { rule: explanation, delivery: await deliveryOf(target, audience, match, now, log, savedAt) };
}

/**
 * Where the scheduled runs read (the watermark, the overlap and the late-arrival window from the
 * alert function's settings), or why that cannot be told; undefined before any run set a watermark.
 */
export async function readingOf(
  target: Target,
  state: DynamoStateStore,
  ruleSavedAt: ReadonlyMap<string, number>,
): Promise<DeliveryFacts['reading']> {
  const reason = (error: unknown) => (error instanceof Error ? error.message : String(error));
  // Read together: one round trip instead of two (the reading state is needed once a watermark exists).
  const [watermarkRead, readingRead] = await Promise.allSettled([state.readWatermark(), state.readReadingState()]);
  if (watermarkRead.status === 'rejected') {
    return { problem: `the watermark cannot be read (${reason(watermarkRead.reason)})` };
  }
  const watermark: Watermark | undefined = watermarkRead.value;
  if (watermark === undefined) return undefined;
  if (readingRead.status === 'rejected') {
    return { problem: `the reading state cannot be read (${reason(readingRead.reason)})` };
  }
  const reading: ReadingState | undefined = readingRead.value;
  try {
    const { run } = await target.alertRunConfig();
    return {
      watermarkAt: watermark.at,
      overlapMs: run.incrementalOverlapMs,
      lateArrivalMs: run.lateArrivalMs,
      ruleSavedAt,
      earliestReadAt: earliestScheduledRead(reading, watermark.at, run),
    };
  } catch (error) {
    return { problem: `the alert function's settings cannot be read (${reason(error)})` };
  }
}

/** The delivery verdict of `match` for `audience`, from the state table's facts. */
export async function deliveryOf(
  target: Target,
  audience: Audience,
  match: AudienceMatch,
  now: number,
  log: Log,
  ruleSavedAt: ReadonlyMap<string, number>,
  /** Where the runs read, when the caller read it once for several audiences ({@link readingOf}). */
  read?: DeliveryFacts['reading'],
): Promise<DeliveryExplanation> {
  const state = new DynamoStateStore({ documents: target.clients.documents, tableName: target.names.stateTable, log });
  const key = { audienceId: audience.audienceId, articleKey: match.article.key };
  const date = localDate(now, audience.timeZone);
  const [ledger, counts, reading] = await Promise.all([
    state.readDeliveries([key]),
    state.readDailyCounts([{ audienceId: audience.audienceId, date }]),
    read ?? readingOf(target, state, ruleSavedAt),
  ]);
  let entry = ledger.get(deliveryId(key));
  const usedToday = counts.get(`${audience.audienceId}|${date}`) ?? 0;
  // Held still: planned with the audience's other holds, as `holds` shows it (they share the budget).
  let heldRelease: DeliveryFacts['heldRelease'];
  let releasedUnrecorded = false;
  if (entry?.heldFor !== undefined && entry.releasedAt === undefined) {
    const held = await state.readHeld(audience.audienceId);
    const view = describeHolds(audience, held.items, held.releases, now, usedToday).held.find(
      (item) => item.articleKey === match.article.key,
    );
    if (view?.releaseAt !== undefined && view.when !== 'blocked')
      heldRelease = { releaseAt: view.releaseAt, when: view.when };
    releasedUnrecorded = !stillHeld(held).has(match.article.key);
    if (releasedUnrecorded) {
      // A release that finished between the two reads marked the entry before deleting the item.
      entry = (await state.readDeliveries([key])).get(deliveryId(key)) ?? entry;
      releasedUnrecorded = entry.releasedAt === undefined;
    }
  }
  const copyLeadLost = entry === undefined ? undefined : await copyLeadLostOf(state, entry);
  let story: { storyId: string; leadArticleKey?: string | undefined } | undefined;
  if (audience.collapse === 'story') {
    const resolver = new StoryResolver(
      new DynamoStoryStore({ documents: target.clients.documents, tableName: target.names.stateTable, log }),
      { log },
    );
    // dryRun: decides as the run would, files nothing.
    const assignment = (await resolver.assign([match.article], { now, dryRun: true })).get(match.article.key);
    if (assignment !== undefined) {
      const marker = storyMarkerKey(audience.audienceId, assignment.storyId);
      const markers = await state.readDeliveries([marker]);
      const lead = markers.get(deliveryId(marker))?.leadArticleKey;
      // A marker is written before its lead goes out: the copy collapses only if the lead reached
      // the audience, as the run decides it (a lead whose publish failed has no entry).
      // The article leads its own story: nothing more to read.
      const leadKey =
        lead === undefined || lead === match.article.key
          ? undefined
          : { audienceId: audience.audienceId, articleKey: lead };
      const leadEntry =
        leadKey === undefined ? undefined : (await state.readDeliveries([leadKey])).get(deliveryId(leadKey));
      const { collapsesIntoMarkedLead } = await import('#core/delivery-pipeline');
      story = {
        storyId: assignment.storyId,
        leadArticleKey:
          lead !== undefined && (lead === match.article.key || collapsesIntoMarkedLead(match, audience, leadEntry))
            ? lead
            : undefined,
      };
    }
  }
  return explainDelivery(audience, match, now, {
    ledger: entry,
    story,
    usedToday,
    heldRelease,
    releasedUnrecorded,
    copyLeadLost,
    reading,
    cli: newsAlerts(),
  });
}

/**
 * For a ledger entry of a collapsed copy: its lead, and why it never reached the audience, as the
 * run judges it from the ledger (ledger-facts.ts `whyCopyLeadLost`); undefined when it did,
 * or when the entry is not a collapsed copy or its lead is not known.
 */
export async function copyLeadLostOf(
  state: Pick<DynamoStateStore, 'readDeliveries'>,
  entry: DeliveryRecord,
): Promise<DeliveryFacts['copyLeadLost']> {
  if (entry.collapsedInto === undefined) return undefined;
  const markerKey = storyMarkerKey(entry.audienceId, entry.collapsedInto);
  // Only an entry from before `collapsedLead` existed needs its story's marker.
  const marker =
    entry.collapsedLead === undefined
      ? (await state.readDeliveries([markerKey])).get(deliveryId(markerKey))
      : undefined;
  const lead = leadOfCollapsedCopy(entry, marker);
  if (lead === undefined || lead === entry.articleKey) return undefined;
  const leadKey = { audienceId: entry.audienceId, articleKey: lead };
  const why = whyCopyLeadLost((await state.readDeliveries([leadKey])).get(deliveryId(leadKey)));
  return why === undefined ? undefined : { lead, why };
}
