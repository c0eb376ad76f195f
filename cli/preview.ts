/**
 * `news-alerts preview` (alias `backtest`): runs the matching for a past window, or for a
 * proposed rules file, against the provider, and prints per audience how many alerts it would
 * have received, with one rendered sample per channel. Nothing is sent, and the watermark, the
 * lease and the delivery ledger are not touched.
 *
 * It reads the provider day by day with the run's own client and configuration, matches with the
 * run's compiled matcher, and counts one notification per article and audience that renders, as
 * the delivery pipeline does; so over a window a fresh run would read, the counts equal what that
 * run delivers.
 *
 * For audiences that collapse stories (`collapse: 'story'`) it asks the target's story index,
 * without writing (`dryRun`), which story each matched article belongs to, and reads the ledger's
 * story markers: a copy of a story the audience already has (sent before, or carried by an earlier
 * copy in the window) is counted as collapsed, not as an alert, as the run would record it.
 */
import type { Command } from 'commander';
import { DynamoStateStore } from '#aws/dynamo-state-store';
import { DynamoStoryStore } from '#aws/dynamo-story-index';
import { SecretsManagerApiKey } from '#aws/secret-source';
import { localDate, planDelivery, releaseDueAt } from '#core/delivery-plan';
import { planDigest, toHeldNotification } from '#core/digest';
import { compileRules } from '#core/matcher';
import { type Audience, type AudienceMatch, buildRuleSet, type RuleSet } from '#core/model';
import {
  deliveryId,
  type HeldNotification,
  type HoldReason,
  type Log,
  type OutboundMessage,
  storyMarkerKey,
} from '#core/ports';
import { type RenderOptions, renderNotification } from '#core/render';
import { StoryResolver } from '#core/story';
import { NewsLookupClient } from '#provider/news-client';
import { action, collectList } from './command.ts';
import type { CommandContext } from './context.ts';
import { NotFoundError, UsageError } from './errors.ts';
import { newsAlerts } from './hints.ts';
import { type Item, listItems } from './items.ts';
import { stderrLog } from './log.ts';
import { formatInstant } from './output.ts';
import { readProposedRules } from './rules.ts';
import { slackRendering } from './slack-text.ts';
import type { Target } from './target.ts';
import { hinted, hintFrom } from './unknown-ids.ts';
import { parseWindow, type TimeWindow } from './window.ts';

/** Channels a sample is shown for (`slack`: as the Slack relay would post it). */
const channels = ['email', 'sms', 'slack', 'webhook', 'default'] as const;
type Channel = (typeof channels)[number];

interface PreviewOptions {
  from: string;
  to?: string;
  audience?: string[];
  rulesFile?: string;
  rule?: string[];
  samples: boolean;
  channel?: string[];
}

/** Per-audience result of a preview. */
export interface AudiencePreview {
  audienceId: string;
  name: string | undefined;
  /** Notifications the audience would receive (one per article). */
  notifications: number;
  /** Of those, urgent ones (an urgent rule matched). */
  urgent: number;
  /** Of those, sent at once under the audience's current delivery preferences. */
  immediate: number;
  /** Of those, held for a digest instead, by reason (digest mode, quiet hours, daily budget). */
  held: Record<HoldReason, number>;
  /** Notifications each rule took part in. */
  rules: Record<string, number>;
  /**
   * Copies that would not be sent because the audience has their story (`collapse: 'story'`):
   * recorded as collapsed by the run. Not counted in `notifications`.
   */
  collapsed: number;
  /** Of those, copies of stories the audience was already sent before the window (ledger markers). */
  collapsedIntoSent: number;
  /** The digests the held ones would go out in, in release order. */
  digests: DigestPreview[];
}

/** One digest a preview expects: when it is released and what it holds. */
export interface DigestPreview {
  /** The release instant (the audience's digest time, or the end of its quiet hours). */
  releaseAt: string;
  /** True when that instant is after now: the digest is still to come. */
  pending: boolean;
  /** Held alerts in it, by the reason they were held. */
  alerts: number;
  reasons: Record<HoldReason, number>;
  /** SNS messages it takes (a large digest is split into numbered parts). */
  messages: number;
  /** The subject of its first message, as the email subscribers would see it. */
  subject: string;
  /** Titles of its first few alerts, oldest first. */
  titles: string[];
}

/** A rendered sample, per channel. */
export interface Sample {
  articleKey: string;
  title: string;
  publishedAt: string;
  subject: string;
  email: string;
  sms: string;
  /** The Slack message as the relay would post it, as text (its blocks, one line each). */
  slack: string;
  /** The relay's webhook body (`{text, blocks}`), or null when it would refuse the alert. */
  slackMessage: unknown;
  webhook: unknown;
  default: string;
}

/** The rules and audiences to preview with: the table's, a proposed file merged over them, or a selection. */
async function previewRuleSet(
  context: CommandContext,
  options: PreviewOptions,
): Promise<{ ruleSet: RuleSet; proposed: string[] }> {
  const target = await context.target();
  const table = (tableName: string, keyName: string) => ({ tableName, keyName, noun: keyName });
  const [storedRules, audienceItems] = await Promise.all([
    listItems(target.clients.documents, table(target.names.rulesTable, 'ruleId')),
    listItems(target.clients.documents, table(target.names.audiencesTable, 'audienceId')),
  ]);
  let ruleItems: Item[] = storedRules;
  let proposed: string[] = [];
  if (options.rulesFile !== undefined) {
    const fileRules = await readProposedRules(context, options.rulesFile);
    proposed = fileRules.map((rule) => rule.ruleId);
    const replaced = new Set(proposed);
    ruleItems = [
      ...storedRules.filter((item) => !replaced.has(String(item.ruleId))),
      ...fileRules.map((rule) => ({ ...rule })),
    ];
  }
  if (options.rule !== undefined) {
    const wanted = new Set(options.rule);
    const missing = options.rule.filter((id) => !ruleItems.some((item) => item.ruleId === id));
    if (missing.length > 0) {
      const hint = hintFrom(
        missing,
        ruleItems.map((item) => String(item.ruleId)),
      );
      throw new NotFoundError(`rule ${missing.join(', ')} does not exist${hinted(hint, `${newsAlerts()} rules list`)}`);
    }
    // Asking for a rule by name previews it as if enabled: "preview before enabling".
    ruleItems = ruleItems.filter((item) => wanted.has(String(item.ruleId))).map((item) => ({ ...item, enabled: true }));
  }
  const ruleSet = buildRuleSet(ruleItems, audienceItems);
  if (options.audience !== undefined) {
    const known = new Set(ruleSet.audiences.map((audience) => audience.audienceId));
    const missing = options.audience.filter((id) => !known.has(id));
    if (missing.length > 0) {
      throw new NotFoundError(
        `audience ${missing.join(', ')} does not exist (or is invalid)${hinted(hintFrom(missing, [...known]))}`,
      );
    }
  }
  return { ruleSet, proposed };
}

/** What a notification looks like on each channel, from its SNS message structure. */
async function sampleOf(match: AudienceMatch, message: OutboundMessage): Promise<Sample> {
  const structure = JSON.parse(message.body) as Record<string, string>;
  // What SNS hands the relay's Lambda subscription: its own key, else `default`.
  const slack = await slackRendering(structure.lambda ?? structure.default ?? '');
  // What SNS hands an HTTPS subscriber: its own key, else `default`.
  const https = structure.https ?? structure.default;
  let webhook: unknown = https;
  try {
    webhook = JSON.parse(https ?? '');
  } catch {
    // shown as text
  }
  return {
    articleKey: match.article.key,
    title: match.article.title,
    publishedAt: new Date(match.article.publishedAt).toISOString(),
    subject: message.subject,
    email: structure.email ?? '',
    sms: structure.sms ?? '',
    slack: slack.text,
    slackMessage: slack.json,
    webhook,
    default: structure.default ?? '',
  };
}

async function preview(context: CommandContext, _args: readonly unknown[], options: PreviewOptions): Promise<void> {
  const shownChannels = (options.channel ?? [...channels]) as Channel[];
  const unknownChannel = shownChannels.find((channel) => !channels.includes(channel));
  if (unknownChannel) throw new UsageError(`--channel ${unknownChannel}: choose from ${channels.join(', ')}`);
  const target = await context.target();
  const config = await target.alertRunConfig();
  // As the target's scheduled run renders: audiences without `locale` read its default locale.
  const render: RenderOptions = { defaultLocale: config.run.defaultLocale };
  const window = parseWindow(options.from, options.to, config.provider.timeZone, Date.now());
  const { ruleSet, proposed } = await previewRuleSet(context, options);
  const selected = new Set(options.audience ?? ruleSet.audiences.map((audience) => audience.audienceId));
  const audiences = new Map<string, Audience>(
    ruleSet.audiences
      .filter((audience) => selected.has(audience.audienceId))
      .map((audience) => [audience.audienceId, audience]),
  );
  const matcher = compileRules(ruleSet.rules.filter((rule) => audiences.has(rule.audienceId)));

  const log = stderrLog(context.output);
  const news = new NewsLookupClient({
    config: config.provider,
    secrets: new SecretsManagerApiKey({ client: target.clients.secrets, secretId: config.secretId }),
    log,
  });
  const tallies = new Map<string, AudiencePreview>();
  for (const audience of audiences.values()) {
    tallies.set(audience.audienceId, {
      audienceId: audience.audienceId,
      name: audience.name,
      notifications: 0,
      urgent: 0,
      immediate: 0,
      held: { digest: 0, 'quiet-hours': 0, budget: 0 },
      rules: {},
      collapsed: 0,
      collapsedIntoSent: 0,
      digests: [],
    });
  }
  const samples = new Map<string, Sample>();
  const counted = new Set<string>();
  const planned: { match: AudienceMatch; message: OutboundMessage }[] = [];
  let articles = 0;
  let pages = 0;
  let unrenderable = 0;
  const progress = context.progress();
  progress.start(window.days.length, 'provider days');
  try {
    for (const day of window.days) {
      for await (const page of news.pages({ from: day, to: day })) {
        pages += 1;
        for (const article of page.articles) {
          if (article.publishedAt < window.since || article.publishedAt > window.until) continue;
          articles += 1;
          for (const match of matcher.match(article)) {
            const audience = audiences.get(match.audienceId);
            const id = deliveryId({ audienceId: match.audienceId, articleKey: article.key });
            if (!audience || counted.has(id)) continue;
            let message: OutboundMessage;
            try {
              message = renderNotification(match, audience, render);
            } catch (error) {
              // The run skips (and logs) what it cannot render; so does the count.
              unrenderable += 1;
              log.warn(
                `could not render a notification; the run would park it for review (${newsAlerts()} replay --parked)`,
                { id, error: String(error) },
              );
              continue;
            }
            counted.add(id);
            planned.push({ match, message });
          }
        }
      }
      progress.advance(1, `${articles} articles, ${counted.size} alerts`);
    }
  } finally {
    progress.stop();
    await news.close();
  }

  const collapse = await collapseCopies(target, planned, audiences, Date.now(), log);
  const alerts: AudienceMatch[] = [];
  for (const { match, message } of planned) {
    const tally = tallies.get(match.audienceId);
    if (!tally) continue;
    const collapsed = collapse.get(deliveryId({ audienceId: match.audienceId, articleKey: match.article.key }));
    if (collapsed !== undefined) {
      tally.collapsed += 1;
      if (collapsed === 'sent') tally.collapsedIntoSent += 1;
      continue;
    }
    alerts.push(match);
    tally.notifications += 1;
    if (match.rules.some((rule) => rule.urgent)) tally.urgent += 1;
    for (const rule of match.rules) tally.rules[rule.ruleId] = (tally.rules[rule.ruleId] ?? 0) + 1;
    if (!samples.has(match.audienceId)) samples.set(match.audienceId, await sampleOf(match, message));
  }
  applyPreferences(alerts, audiences, tallies, Date.now(), render);
  const rows = [...tallies.values()].sort((a, b) => a.audienceId.localeCompare(b.audienceId));
  const invalidRules = ruleSet.rejected.filter((entry) => entry.table === 'rules');
  const result = {
    target: target.label,
    window: windowJson(window),
    articles,
    pages,
    notifications: alerts.length,
    collapsed: planned.length - alerts.length,
    unrenderable,
    proposedRules: proposed,
    audiences: rows,
    samples: options.samples ? Object.fromEntries(samples) : {},
    invalidRules,
  };
  context.output.result(result, () => {
    context.output.caption(
      `Preview of ${formatInstant(window.since)} .. ${formatInstant(window.until)} (${window.days.length} provider day(s), ${articles} articles): nothing was sent`,
    );
    context.output.table(
      [
        'AUDIENCE',
        'NAME',
        'ALERTS',
        'URGENT',
        'AT ONCE',
        'HELD: DIGEST / QUIET / BUDGET',
        'DIGESTS',
        'COLLAPSED',
        'BY RULE',
      ],
      rows.map((row) => [
        row.audienceId,
        row.name ?? '',
        row.notifications,
        row.urgent,
        row.immediate,
        `${row.held.digest} / ${row.held['quiet-hours']} / ${row.held.budget}`,
        row.digests.length,
        row.collapsed,
        Object.entries(row.rules)
          .map(([ruleId, count]) => `${ruleId} ${count}`)
          .join(', '),
      ]),
      'no audiences to preview',
    );
    for (const row of rows) {
      if (row.collapsed === 0) continue;
      const earlier = row.collapsed - row.collapsedIntoSent;
      const parts = [
        row.collapsedIntoSent > 0 ? `${row.collapsedIntoSent} into stories already sent` : undefined,
        earlier > 0 ? `${earlier} into stories an earlier copy in the window carries` : undefined,
      ].filter((part) => part !== undefined);
      context.output.caption(
        `${row.audienceId}: ${row.collapsed} cop${row.collapsed === 1 ? 'y' : 'ies'} would collapse (${parts.join(', ')}): recorded, not sent`,
      );
    }
    if (invalidRules.length > 0) {
      context.output.warn(
        `${invalidRules.length} invalid rule(s) skipped, as the run skips them: ${invalidRules.map((entry) => entry.key).join(', ')}`,
      );
    }
    for (const row of rows) {
      if (row.digests.length === 0) continue;
      context.output.caption('');
      context.output.caption(`=== ${row.audienceId}: ${row.digests.length} digest(s) instead of single alerts`);
      for (const digest of row.digests) {
        const reasons = (['digest', 'quiet-hours', 'budget'] as const)
          .filter((reason) => digest.reasons[reason] > 0)
          .map((reason) => `${reason} ${digest.reasons[reason]}`)
          .join(', ');
        context.output.caption(
          `--- ${digest.releaseAt}${digest.pending ? ' (still to come)' : ''}: ${digest.alerts} alert(s) (${reasons}), ${digest.messages} message(s)`,
        );
        context.output.caption(`    Subject: ${digest.subject}`);
        for (const title of digest.titles) context.output.caption(`    - ${title}`);
        if (digest.alerts > digest.titles.length) {
          context.output.caption(`    … and ${digest.alerts - digest.titles.length} more`);
        }
      }
    }
    if (!options.samples) return;
    for (const [audienceId, sample] of [...samples].sort(([a], [b]) => a.localeCompare(b))) {
      context.output.caption('');
      context.output.caption(`=== ${audienceId}: sample alert (${sample.articleKey}, published ${sample.publishedAt})`);
      for (const channel of shownChannels) {
        context.output.caption(`--- ${channel}`);
        if (channel === 'email') context.output.caption(`Subject: ${sample.subject}\n\n${sample.email}`);
        else if (channel === 'webhook') context.output.caption(JSON.stringify(sample.webhook, null, 2));
        else context.output.caption(sample[channel]);
      }
    }
  });
}

/** Why a copy would not be sent: its story was sent before the window, or an earlier copy carries it. */
type CollapseReason = 'sent' | 'window';

/**
 * The matches that would collapse, by delivery id, as the delivery pipeline decides it: for each
 * audience with `collapse: 'story'`, the story index (asked once, without writing) gives each
 * article's story; a story marker in the ledger with another lead means the audience has the story
 * already, and otherwise the first copy read carries it and later ones collapse.
 */
async function collapseCopies(
  target: Target,
  planned: readonly { match: AudienceMatch }[],
  audiences: ReadonlyMap<string, Audience>,
  now: number,
  log: Log,
): Promise<Map<string, CollapseReason>> {
  const collapsed = new Map<string, CollapseReason>();
  const matches = planned
    .map(({ match }) => match)
    .filter((match) => audiences.get(match.audienceId)?.collapse === 'story');
  if (matches.length === 0) return collapsed;
  const { documents } = target.clients;
  const tableName = target.names.stateTable;
  const stories = new StoryResolver(new DynamoStoryStore({ documents, tableName, log }), { log });
  // One call, in the order the run reads them (which copy starts a story, and so which copies are
  // close enough to it, depends on the order): a dry run files nothing, so copies must meet in
  // the same call.
  const articles = new Map(matches.map((match) => [match.article.key, match.article]));
  const assignments = await stories.assign([...articles.values()], { now, dryRun: true });
  const markerKeys = new Map<string, ReturnType<typeof storyMarkerKey>>();
  for (const match of matches) {
    const storyId = assignments.get(match.article.key)?.storyId;
    if (storyId === undefined) continue;
    const key = storyMarkerKey(match.audienceId, storyId);
    markerKeys.set(deliveryId(key), key);
  }
  const state = new DynamoStateStore({ documents, tableName, log });
  const markers = markerKeys.size > 0 ? await state.readDeliveries([...markerKeys.values()]) : new Map();
  // A marker is written before its lead goes out: the story reached the audience only if the
  // lead's own ledger entry says so (sent, or held and not dropped or parked by its release), and
  // an urgent copy goes out past a lead still held for quiet hours or the budget, as the pipeline
  // decides (collapsesIntoMarkedLead). A lead whose publish failed has a marker and no entry, and
  // its copy carries the story.
  const leadKeys = [...markers.values()].flatMap((marker) =>
    marker.leadArticleKey === undefined ? [] : [{ audienceId: marker.audienceId, articleKey: marker.leadArticleKey }],
  );
  const leadEntries = leadKeys.length > 0 ? await state.readDeliveries(leadKeys) : new Map();
  // The pipeline's module is large: loaded only by a preview of an audience that collapses.
  const { collapsesIntoMarkedLead } = await import('#core/delivery-pipeline');
  const leads = new Map<string, string>();
  for (const match of matches) {
    const storyId = assignments.get(match.article.key)?.storyId;
    if (storyId === undefined) continue;
    const story = deliveryId(storyMarkerKey(match.audienceId, storyId));
    const id = deliveryId({ audienceId: match.audienceId, articleKey: match.article.key });
    const lead = markers.get(story)?.leadArticleKey;
    // As the pipeline decides: a marker without its lead (damaged by hand) collapses nothing.
    const audience = audiences.get(match.audienceId);
    if (
      lead !== undefined &&
      lead !== match.article.key &&
      audience !== undefined &&
      collapsesIntoMarkedLead(
        match,
        audience,
        leadEntries.get(deliveryId({ audienceId: match.audienceId, articleKey: lead })),
      )
    ) {
      collapsed.set(id, 'sent');
      continue;
    }
    const first = leads.get(story);
    if (first === undefined) leads.set(story, match.article.key);
    else if (first !== match.article.key) collapsed.set(id, 'window');
  }
  return collapsed;
}

/** Titles a digest preview lists. */
const digestTitlesShown = 3;

/**
 * Splits each audience's alerts into "sent at once" and "held for a digest" with the run's own
 * planner and the audience's current preferences, as if each article had been matched when it
 * was published: in publication order, with the daily budget counted per local date. What is
 * held is then gathered into the digests it would go out in: each held alert is due when the run
 * would release it (the next digest time, or the end of the quiet hours), alerts due at the same
 * instant share one digest, and the digest is planned and rendered as the release step does it.
 */
function applyPreferences(
  matches: readonly AudienceMatch[],
  audiences: ReadonlyMap<string, Audience>,
  tallies: ReadonlyMap<string, AudiencePreview>,
  now: number,
  render: RenderOptions,
): void {
  const used = new Map<string, number>();
  const releases = new Map<string, Map<number, HeldNotification[]>>();
  for (const match of [...matches].sort((a, b) => a.article.publishedAt - b.article.publishedAt)) {
    const audience = audiences.get(match.audienceId);
    const tally = tallies.get(match.audienceId);
    if (!audience || !tally) continue;
    const at = match.article.publishedAt;
    const budgetKey = `${audience.audienceId}|${localDate(at, audience.timeZone)}`;
    const decision = planDelivery(match, audience, at, used.get(budgetKey) ?? 0);
    if (decision.action === 'hold') {
      tally.held[decision.reason] += 1;
      const held = toHeldNotification(match, decision.reason, at);
      const dueAt = releaseDueAt(held, audience);
      const byInstant = releases.get(audience.audienceId) ?? new Map<number, HeldNotification[]>();
      releases.set(audience.audienceId, byInstant);
      byInstant.set(dueAt, [...(byInstant.get(dueAt) ?? []), held]);
      continue;
    }
    tally.immediate += 1;
    if (decision.budgetDate !== undefined) used.set(budgetKey, (used.get(budgetKey) ?? 0) + 1);
  }
  for (const [audienceId, byInstant] of releases) {
    const audience = audiences.get(audienceId);
    const tally = tallies.get(audienceId);
    if (!audience || !tally) continue;
    for (const [releaseAt, items] of [...byInstant].sort(([a], [b]) => a - b)) {
      const planned = planDigest(items, audience, releaseAt, render);
      const reasons: Record<HoldReason, number> = { digest: 0, 'quiet-hours': 0, budget: 0 };
      for (const item of items) reasons[item.reason] += 1;
      tally.digests.push({
        releaseAt: new Date(releaseAt).toISOString(),
        pending: releaseAt > now,
        alerts: items.length,
        reasons,
        messages: planned.messages.length,
        subject: planned.messages[0]?.subject ?? '',
        titles: items.slice(0, digestTitlesShown).map((item) => item.match.article.title),
      });
    }
  }
}

export const windowJson = (window: TimeWindow) => ({
  since: new Date(window.since).toISOString(),
  until: new Date(window.until).toISOString(),
  days: window.days,
});

/** Registers `preview` (alias `backtest`). */
export function registerPreview(program: Command): void {
  program
    .command('preview')
    .alias('backtest')
    .description('what audiences would have received over a past window (or with a proposed rules file); sends nothing')
    .requiredOption('--from <when>', 'start: provider date (2026-11-21), date-time with zone, or span back (6h, 2d)')
    .option('--to <when>', 'end (inclusive), same forms; default now')
    .option('--audience <ids>', 'only these audiences, comma-separated', collectList)
    .option('--rules-file <file>', 'proposed rules (JSON/YAML), validated like rules put, replacing same-id rules')
    .option('--rule <ids>', 'only these rules, treated as enabled (preview a rule before enabling it)', collectList)
    .option('--channel <list>', `sample channels to show (${channels.join(', ')})`, collectList)
    .option('--no-samples', 'counts only, no rendered samples')
    .addHelpText(
      'after',
      `
Nothing is sent and the watermark and delivery ledger are untouched. ALERTS counts one alert per
article and audience, exactly as a run over the same window with an empty ledger would deliver
them (use 'replay --dry-run' to see what is still undelivered). For audiences with collapse
"story", COLLAPSED counts the copies that would be recorded, not sent: copies of a story the
audience was already sent (the ledger's story markers) or that a copy read earlier in the window
carries; they are not in ALERTS. AT ONCE and HELD split them by the
audience's current delivery preferences (digest mode, quiet hours, daily budget), as if each
article had been matched when it was published. DIGESTS counts the digests the held alerts would
go out in; each is listed with its release time (the next digest time, or the end of the quiet
hours), how many alerts it holds, its subject and its first titles.

Examples:
  news-alerts preview --from 2d
  news-alerts backtest --from 2026-11-01 --to 2026-11-07 --rules-file proposed.yaml --audience markets
  news-alerts preview --from 1w --rule new-chips-rule --channel sms`,
    )
    .action(action(preview));
}
