/**
 * A spike episode's alert as the delivery pipeline takes it: an {@link AudienceMatch} whose
 * `article` is the alert itself (key `spike:<ruleId>:<episodeId>`, the headline in the audience's
 * words, the top story's link) and whose `spike` carries the facts the renderer explains
 * (functions/core/spikes/render.ts). So the ledger, exactly-once, digests, quiet hours and daily
 * budgets treat it like any alert, and a held spike alert reads well in a digest.
 *
 * The match is the same on every offer of an episode's alert (the facts are fixed when it opens),
 * so a re-read never looks like an update; the one planned change is its status `ESCALATED` once
 * the episode doubled, which audiences with `updates: notify` hear as one update notice.
 */
import type { Article, Audience, AudienceMatch, Rule, RuleMatch } from '../model.ts';
import { audienceViewOf, type RenderOptions, singleLine, truncateText } from '../render.ts';
import { publishableLink } from '../text.ts';
import type { SpikePreset } from './detector.ts';
import type { EpisodeAlert } from './record.ts';

/** What a spike alert's renderer needs besides the match's article: the episode and the rule it is about. */
export interface SpikeAlertFacts extends EpisodeAlert {
  readonly ruleId: string;
  /** The rule as people read it: its description, else its id (one line, at most 80 characters). */
  readonly ruleLabel: string;
}

/** The ledger key of an episode's alert: `spike:<ruleId>:<episodeId>`. */
export const spikeAlertKey = (ruleId: string, episodeId: string): string => `spike:${ruleId}:${episodeId}`;

/** Whether a ledger article key is a spike alert's ({@link spikeAlertKey}). */
export const isSpikeAlertKey = (articleKey: string): boolean => articleKey.startsWith('spike:');

/** The status a spike alert's article carries once its episode doubled (see the module header). */
export const ESCALATED_STATUS = 'ESCALATED';

/** The rule's name in alerts: its description, else its id. */
export const ruleLabelOf = (rule: Pick<Rule, 'ruleId' | 'description'>): string =>
  truncateText(singleLine(rule.description ?? ''), 80) || rule.ruleId;

/** The rule of a spike alert, with the reason that names the preset. */
export function spikeRuleMatch(rule: Rule, preset: SpikePreset): RuleMatch {
  return {
    ruleId: rule.ruleId,
    description: rule.description,
    urgent: rule.urgent,
    reasons: [{ kind: 'spike', term: preset }],
  };
}

/** The match the pipeline delivers for an episode's alert. */
export function spikeAlertMatch(input: {
  readonly rule: Rule;
  readonly audience: Audience;
  readonly alert: EpisodeAlert;
  /** The ledger key: `spike:<ruleId>:<episodeId>`. */
  readonly key: string;
  readonly render?: RenderOptions | undefined;
}): AudienceMatch {
  const { rule, audience, alert, key } = input;
  const { messages } = audienceViewOf(audience, input.render);
  const ruleLabel = ruleLabelOf(rule);
  const link = alert.topStories.map((story) => publishableLink(story.url)).find((candidate) => candidate.ok);
  const article: Article = {
    key,
    title: messages.spike.headline(ruleLabel),
    summary: alert.topStories
      .slice(0, 3)
      .map((story) => singleLine(story.title))
      .join(' · '),
    url: link?.ok ? link.url : '',
    publishedAt: (alert.openedAt + 1) * alert.bucketMs,
    categories: [],
    categoryNames: [],
    ...(alert.stage === 'escalated' ? { status: ESCALATED_STATUS } : {}),
  };
  return {
    audienceId: audience.audienceId,
    article,
    rules: [spikeRuleMatch(rule, alert.preset)],
    spike: { ...alert, ruleId: rule.ruleId, ruleLabel },
  };
}
