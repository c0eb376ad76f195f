/**
 * `news-alerts audiences …`: list, show, export, create, update, put (create or replace from a
 * file), validate, delete.
 *
 * What one command prints, another reads: `export`, `list --json`, `show --json` and what
 * `delete` prints on stdout are documents `put --file` and `validate` accept. STATUS tells the
 * truth about the topic too: an audience whose topic was deleted is `topic missing`, not `ok`.
 *
 * `create` makes what the stack makes for a declared audience: a topic named
 * `<AudienceTopicPrefix><audienceId>`, encrypted with the stack's topic key and refusing anything
 * but TLS, so the alert function (granted that name prefix and key) publishes to it without a
 * redeploy; then the audience item. Items are validated with the run's own schema.
 */
import {
  DeleteTopicCommand,
  GetTopicAttributesCommand,
  NotFoundException,
  type Subscription,
} from '@aws-sdk/client-sns';
import type { Command } from 'commander';
import pLimit from 'p-limit';
import { DELETED_AUDIENCE_RECORD_DAYS } from '#aws/dynamo-subscriber-records';
import {
  FALLBACK_LOCALE,
  isShipped,
  languageOf,
  localeChain,
  messageLocale,
  SHIPPED_LOCALES,
  templateFallbacks,
} from '#core/locale';
import { type Audience, AudienceSchema, audienceAttributes, parseAudience, ruleAttributes } from '#core/model';
import { webhookShardName } from '#shared/slack-webhook-store';
import {
  audiencesTable,
  createTopic,
  requireAudience,
  topicArnProblem,
  topicNameOf,
  topicSubscriptions,
} from './audience-topics.ts';
import { action, collectList, integerOption, refuseSetAndCleared } from './command.ts';
import type { CommandContext } from './context.ts';
import { newControlCharacterProblems } from './control-characters.ts';
import { endpointEntryName, endpointStorePrefixOf, forgetEndpoints } from './endpoint-store.ts';
import { NotFoundError, type ProblemInput, UsageError, versionConflict } from './errors.ts';
import { addHttpsAgain, newsAlerts } from './hints.ts';
import {
  type DocumentFormat,
  type FileItem,
  formatOption,
  itemsDocument,
  locateIssues,
  readItemFile,
  refuseFileAsId,
  yamlText,
} from './item-files.ts';
import {
  auditAttributes,
  changesFromStored,
  describeChange,
  describeRepair,
  describeVersion,
  type FieldChange,
  getItem,
  type Item,
  type ItemTable,
  listItems,
  type PlannedPut,
  versionOf,
  withoutAudit,
  writeItems,
} from './items.ts';
import { stderrLog } from './log.ts';
import { withNewAudienceDefaults } from './new-audience.ts';
import { jsonText, listText, status, storedValueText } from './output.ts';
import { subscriberRecordsOf } from './subscriptions.ts';
import type { DeploymentHome, Target } from './target.ts';
import { didYouMean, hinted } from './unknown-ids.ts';
import { inputName, sourceName } from './utf8.ts';
import { removeWebhooks, storePrefixOf } from './webhook-store.ts';
import { ruleTableOf } from './workbench/tables.ts';
import { topicChecks, topicProblemWithFix, topicState } from './workbench/topics.ts';

const rulesTable = (target: Target): ItemTable => ruleTableOf(target);

/** The smallest valid audience: what parsing it adds are the defaults (changesFromStored). */
const minimalAudience: Item = { audienceId: 'a', name: 'A', topicArn: 'arn:aws:sns:us-east-1:123456789012:a' };

/** SNS topic names: letters, digits, `-` and `_`, at most 256. */
const topicNamePattern = /^[A-Za-z0-9_-]{1,256}$/;

/**
 * Refuses (exit 2) a topic ARN outside the deployment or that does not exist, before anything is
 * written; warns when the alert function's grant (the topic name prefix) does not cover it.
 */
async function requireHomeTopic(
  context: CommandContext,
  target: Target,
  topicArn: string,
  what: string,
  /** Given by a file's `topicArn`, not by `--topic-arn`: the advice names what the file can do. */
  fromFile: boolean,
) {
  const problem = topicArnProblem(topicArn, await target.home());
  if (problem) throw new UsageError(`${what}: ${problem}; nothing was written`);
  try {
    await target.clients.sns.send(new GetTopicAttributesCommand({ TopicArn: topicArn }));
  } catch (error) {
    if (error instanceof NotFoundException) {
      throw new UsageError(
        `${what}: the topic ${topicArn} does not exist; create it first or ${fromFile ? 'leave topicArn out of the file (a new audience gets a topic made for it, one that exists keeps its own)' : 'omit --topic-arn'}; nothing was written`,
        [],
        { cause: error },
      );
    }
    throw error;
  }
  const name = topicArn.split(':').at(-1) ?? '';
  if (!name.startsWith(target.names.audienceTopicPrefix)) {
    context.output.warn(
      `${what}: the topic ${name} is not named ${target.names.audienceTopicPrefix}<audienceId>; the alert function is only granted sns:Publish on that prefix`,
    );
  }
}

// --- Items from flags -------------------------------------------------------------------------

interface AudienceFlags {
  file?: string;
  name?: string;
  timeZone?: string;
  locale?: string;
  deliveryMode?: string;
  collapse?: string;
  updates?: string;
  digestTimes?: string[];
  quietHours?: string;
  urgentCategories?: string[];
  dailyBudget?: number;
  smsMaxSegments?: number;
  topicArn?: string;
  notes?: string;
  disabled?: boolean;
  enable?: boolean;
  disable?: boolean;
  clear?: string[];
  yes?: boolean;
  withRules?: boolean;
  deleteTopic?: boolean;
}

const settableFlags: (keyof AudienceFlags)[] = [
  'name',
  'timeZone',
  'locale',
  'deliveryMode',
  'collapse',
  'updates',
  'digestTimes',
  'quietHours',
  'urgentCategories',
  'dailyBudget',
  'smsMaxSegments',
  'topicArn',
  'notes',
];

/** `22:00-07:00` → `{start, end}`; the schema judges the times themselves. */
function quietHoursOf(value: string): { start: string; end: string } {
  const match = /^\s*([^-\s]+)\s*-\s*([^-\s]+)\s*$/.exec(value);
  if (!match?.[1] || !match[2]) throw new UsageError(`--quiet-hours must look like 22:00-07:00; got "${value}"`);
  return { start: match[1], end: match[2] };
}

function attributesFromFlags(options: AudienceFlags): Item {
  const item: Item = {};
  if (options.name !== undefined) item.name = options.name;
  if (options.timeZone !== undefined) item.timeZone = options.timeZone;
  if (options.locale !== undefined) item.locale = options.locale;
  if (options.deliveryMode !== undefined) item.deliveryMode = options.deliveryMode;
  if (options.collapse !== undefined) item.collapse = options.collapse;
  if (options.updates !== undefined) item.updates = options.updates;
  if (options.digestTimes !== undefined) item.digestTimes = options.digestTimes;
  if (options.quietHours !== undefined) item.quietHours = quietHoursOf(options.quietHours);
  if (options.urgentCategories !== undefined) item.urgentCategories = options.urgentCategories;
  if (options.dailyBudget !== undefined) item.dailyBudget = options.dailyBudget;
  if (options.smsMaxSegments !== undefined) item.smsMaxSegments = options.smsMaxSegments;
  if (options.topicArn !== undefined) item.topicArn = options.topicArn;
  if (options.notes !== undefined) item.notes = options.notes;
  return item;
}

/** Validates one audience item as the run does, with the file or flag location of each problem. */
function checkAudience(
  item: FileItem,
  what: string,
  stored: Item | undefined,
): { value: Item } | { problems: string[] } {
  const acting = newControlCharacterProblems((item.value ?? {}) as Item, stored);
  if (acting.length > 0)
    return { problems: acting.map(({ path, message }) => `${item.locate(path)}: ${what}: ${message}`) };
  const parsed = parseAudience(item.value);
  if (parsed.ok) return { value: withoutAudit({ ...parsed.value }) };
  const result = AudienceSchema.safeParse(item.value);
  return {
    problems: result.success
      ? [`${item.locate()}: ${what}: ${parsed.rejected.reason}`]
      : locateIssues(item, result.error, audienceAttributes, what, AudienceSchema),
  };
}

const flagItem = (value: Item, label: string): FileItem => ({ value, label, locate: () => 'command line' });

/**
 * The target's default locale (its alert function's `DEFAULT_LOCALE`, from the stack's
 * `defaultLocale`); undefined when the target's configuration cannot be read.
 */
async function targetDefaultLocale(target: Target): Promise<string | undefined> {
  try {
    return (await target.alertRunConfig()).run.defaultLocale ?? FALLBACK_LOCALE;
  } catch {
    // Listing or validating audiences must not depend on reading the function's configuration.
    return undefined;
  }
}

const languageNames = new Intl.DisplayNames('en', { type: 'language' });
const languageName = (tag: string): string => {
  try {
    return languageNames.of(tag) ?? tag;
  } catch {
    return tag;
  }
};

/**
 * What a valid audience's subscribers get that ops may not expect: their language has no shipped
 * messages (the words come from further down the chain; dates still follow their locale), or a
 * template translated for other locales but not theirs. Warnings only: the run sends the fallback.
 */
export function localeWarnings(audience: Audience, defaultLocale: string): string[] {
  const warnings: string[] = [];
  if (audience.locale !== undefined) {
    const language = languageOf(audience.locale);
    if (!isShipped(language)) {
      const words = messageLocale(localeChain(audience.locale, defaultLocale));
      warnings.push(
        `locale ${audience.locale}: no ${languageName(language)} messages; subscribers get ${languageName(words)} words with ${languageName(language)} dates (shipped: ${SHIPPED_LOCALES.join(', ')})`,
      );
    }
  }
  warnings.push(...templateFallbacks(audience.templates, audience.locale, defaultLocale));
  return warnings;
}

/** {@link localeWarnings} of a checked item, each with the item's location and audience. */
function locatedLocaleWarnings(item: FileItem, value: Item, what: string, defaultLocale: string): string[] {
  const parsed = parseAudience(value);
  if (!parsed.ok) return [];
  return localeWarnings(parsed.value, defaultLocale).map((warning) => {
    const field = warning.startsWith('locale ') ? ['locale'] : ['templates', 'locales'];
    return `${item.locate(field)}: ${what}: ${warning}`;
  });
}

/**
 * How `collapse` and `updates` of a stored audience read: its own value, or what the run applies
 * to an item without the attribute, marked as the default (as `locale` is).
 */
function storySettingsText(item: Item): {
  collapse: string;
  collapseFromDefault: boolean;
  updates: string;
  updatesFromDefault: boolean;
} {
  return {
    collapse: typeof item.collapse === 'string' ? item.collapse : 'none',
    collapseFromDefault: item.collapse === undefined,
    updates: typeof item.updates === 'string' ? item.updates : 'ignore',
    updatesFromDefault: item.updates === undefined,
  };
}

/** How the locale of a stored audience reads: its own, or the stack default marked as such. */
function localeText(item: Item, defaultLocale: string | undefined): { locale: string; fromDefault: boolean } {
  if (typeof item.locale === 'string') return { locale: item.locale, fromDefault: false };
  return { locale: defaultLocale ?? FALLBACK_LOCALE, fromDefault: true };
}

// --- Commands ---------------------------------------------------------------------------------

/** An audience of a file or of flags, checked and ready to write. */
interface PlannedAudience {
  readonly id: string;
  /** The content to write (audit attributes left to writeItems). */
  readonly item: Item;
  /** The stored audience it replaces; undefined for a new one. */
  readonly previous: Item | undefined;
  /** A new audience without topicArn: its topic is made by the stack convention first. */
  readonly createTopic: boolean;
  readonly topicName: string;
  readonly changes: FieldChange[];
  /** Why the run skips the stored audience, when it does: the write repairs it (changesFromStored). */
  readonly repairs?: string;
}

/**
 * Checks every audience of a file (or of flags) as the run does, plus what only a write needs:
 * unique ids, a topic name SNS accepts for a new audience, a given topic in this deployment, and
 * (when the item carries `version`) that the stored audience is still the version it was made
 * from. With `mode` create, an audience that exists is a problem; with put it is replaced (a
 * missing topicArn keeps the stored one). Nothing is written.
 */
async function planAudiences(
  context: CommandContext,
  target: Target,
  items: readonly FileItem[],
  mode: 'create' | 'put',
): Promise<{ planned: PlannedAudience[]; problems: ProblemInput[]; warnings: string[] }> {
  const problems: ProblemInput[] = [];
  const warnings: string[] = [];
  let defaultLocale: string | undefined;
  const planned: PlannedAudience[] = [];
  for (const item of items) {
    const raw = (typeof item.value === 'object' && item.value !== null ? item.value : {}) as Item;
    const id = typeof raw.audienceId === 'string' ? raw.audienceId : item.label;
    const what = `audience "${id}"`;
    if (planned.some((entry) => entry.id === id)) {
      problems.push(`${item.locate(['audienceId'])}: ${what} appears twice`);
      continue;
    }
    const previous =
      typeof raw.audienceId === 'string'
        ? await getItem(target.clients.documents, audiencesTable(target), raw.audienceId)
        : undefined;
    if (previous !== undefined && mode === 'create') {
      problems.push(
        `${item.locate(['audienceId'])}: ${what} already exists; change it with '${newsAlerts()} audiences update ${id}' or replace it with '${newsAlerts()} audiences put --file <file>'`,
      );
      continue;
    }
    if (raw.version !== undefined && raw.version !== versionOf(previous)) {
      problems.push(
        versionConflict(
          `${item.locate(['version'])}: ${what}: the file was made from version ${String(raw.version)}, but the table holds ${describeVersion(previous)}; export it again with '${newsAlerts()} audiences export ${id}' and redo the change`,
        ),
      );
      continue;
    }
    const topicName = topicNameOf(target, id);
    const createTopic = previous === undefined && raw.topicArn === undefined;
    if (createTopic && !topicNamePattern.test(topicName)) {
      problems.push(
        `${item.locate(['audienceId'])}: ${what}: the topic name "${topicName}" is not a valid SNS topic name (letters, digits, - and _ only, at most 256); choose another audienceId`,
      );
      continue;
    }
    // A stand-in ARN where the topic is still to be made; the stored topic where the file has none.
    const topic = createTopic
      ? { topicArn: `arn:aws:sns:us-east-1:000000000000:${topicName}` }
      : previous !== undefined && raw.topicArn === undefined
        ? { topicArn: previous.topicArn }
        : {};
    // A new audience collapses stories unless it says otherwise (cli/new-audience.ts).
    const value = { ...withoutAudit(raw), ...topic };
    const checked = checkAudience(
      { ...item, value: previous === undefined ? withNewAudienceDefaults(value) : value },
      what,
      previous,
    );
    if ('problems' in checked) {
      problems.push(...checked.problems);
      continue;
    }
    defaultLocale ??= (await targetDefaultLocale(target)) ?? FALLBACK_LOCALE;
    warnings.push(...locatedLocaleWarnings(item, checked.value, what, defaultLocale));
    const topicArn = checked.value.topicArn;
    if (!createTopic && typeof topicArn === 'string' && topicArn !== previous?.topicArn) {
      try {
        await requireHomeTopic(
          context,
          target,
          topicArn,
          `${item.locate(['topicArn'])}: ${what}`,
          item.locate(['topicArn']) !== 'command line',
        );
      } catch (error) {
        if (!(error instanceof UsageError)) throw error;
        problems.push(error.message.replace(/; nothing was written$/, ''));
        continue;
      }
    }
    const { changes, repairs } = changesFromStored(
      previous,
      createTopic ? { ...checked.value, topicArn: undefined } : checked.value,
      parseAudience,
      minimalAudience,
    );
    planned.push({
      id,
      item: createTopic ? withoutTopic(checked.value) : checked.value,
      previous,
      createTopic,
      topicName,
      changes,
      ...(repairs === undefined ? {} : { repairs }),
    });
  }
  return { planned, problems, warnings };
}

function withoutTopic(item: Item): Item {
  const { topicArn: _topicArn, ...rest } = item;
  return rest;
}

interface AudienceResult {
  audienceId: string;
  action: 'created' | 'updated' | 'unchanged';
  version: number | undefined;
  previousVersion: number | undefined;
  topicArn: unknown;
  changes: FieldChange[];
  /** The stored audience's problem, when the run skipped it and this write repaired it. */
  repairs?: string;
}

/** Makes the topics of new audiences, then writes every changed audience (one transaction up to 100, see writeItems). */
async function writeAudiences(
  context: CommandContext,
  target: Target,
  planned: readonly PlannedAudience[],
): Promise<AudienceResult[]> {
  const puts: PlannedPut[] = [];
  for (const entry of planned) {
    if (entry.previous !== undefined && entry.changes.length === 0 && entry.repairs === undefined) continue;
    const topicArn = entry.createTopic
      ? await createTopic((text) => context.output.warn(text), target, entry.id, entry.topicName)
      : undefined;
    puts.push({ id: entry.id, item: topicArn ? { ...entry.item, topicArn } : entry.item, previous: entry.previous });
  }
  const written = await writeItems(
    target.clients.documents,
    audiencesTable(target),
    { puts },
    {
      actor: await context.actor(),
      now: Date.now(),
    },
  );
  return planned.map((entry): AudienceResult => {
    const result = written.find((candidate) => candidate.id === entry.id);
    const version = versionOf(entry.previous);
    return result === undefined
      ? {
          audienceId: entry.id,
          action: 'unchanged',
          version,
          previousVersion: version,
          topicArn: entry.previous?.topicArn,
          changes: [],
        }
      : {
          audienceId: entry.id,
          action: result.action === 'created' ? 'created' : 'updated',
          version: result.version,
          previousVersion: result.previousVersion,
          topicArn: result.item?.topicArn,
          changes: entry.changes,
          ...(entry.repairs === undefined ? {} : { repairs: entry.repairs }),
        };
  });
}

/** The human report of `create` and `put`, and the next step for new audiences, with their ids. */
async function reportAudiences(
  context: CommandContext,
  target: Target,
  planned: readonly PlannedAudience[],
  results: readonly AudienceResult[],
  warnings: readonly string[],
): Promise<void> {
  const topicsMade = new Set(planned.filter((entry) => entry.createTopic).map((entry) => entry.id));
  const recorded = await recordedSubscribers(target, results, topicsMade);
  context.output.result({ target: target.label, results, warnings }, () => {
    for (const result of results) {
      if (result.action === 'created') {
        context.output.line(
          `created audience ${result.audienceId} (version ${result.version}), topic ${String(result.topicArn)}`,
        );
      } else if (result.action === 'unchanged') {
        context.output.line(`unchanged ${result.audienceId} (version ${result.version ?? '(none)'})`);
      } else {
        context.output.line(
          `updated ${result.audienceId}: version ${result.previousVersion ?? '(none)'} → ${result.version}`,
        );
        for (const change of result.changes) context.output.line(`  ${describeChange(change)}`);
        if (result.repairs !== undefined) context.output.line(`  ${describeRepair('audience', result.repairs)}`);
      }
    }
  });
  const created = results.filter((result) => result.action === 'created');
  const recordedOf = (id: string): RecordedSubscribers => recorded.get(id) ?? { expiring: 0, delivering: 0 };
  // An audience on a topic that exists (a restore of 'audiences delete' without --delete-topic,
  // a topic given, or one found again by its name with people subscribed) has its people already:
  // asking for subscribers would mislead.
  const onExistingTopic = created.filter((entry) => {
    const count = recordedOf(entry.audienceId);
    return !topicsMade.has(entry.audienceId) || ('delivering' in count && count.delivering > 0 && count.expiring === 0);
  });
  for (const result of onExistingTopic) {
    context.output.note(
      `audience ${result.audienceId} uses the existing topic ${String(result.topicArn)}: whoever is subscribed there receives its alerts (see them with '${newsAlerts()} subscriptions list ${result.audienceId}')`,
    );
  }
  // One on a new topic may be a restore whose topic was deleted: its people are recorded for a
  // while, and a repair subscribes them again.
  const restorable = created.filter((entry) => {
    const count = recordedOf(entry.audienceId);
    return topicsMade.has(entry.audienceId) && (!('expiring' in count) || count.expiring > 0);
  });
  for (const result of restorable) {
    const count = recordedOf(result.audienceId);
    context.output.note(
      'unreadable' in count
        ? `audience ${result.audienceId}: its recorded subscribers could not be read (${count.unreadable}); if it was deleted with --delete-topic, '${newsAlerts()} audiences repair ${result.audienceId}' subscribes again those recorded then`
        : `Next: '${newsAlerts()} audiences repair ${result.audienceId}' subscribes again the subscribers recorded when it was deleted (${count.expiring} recorded; it says which it cannot)`,
    );
  }
  const fresh = created.filter((entry) => !onExistingTopic.includes(entry) && !restorable.includes(entry));
  const [first] = fresh;
  if (first !== undefined) {
    // Every new audience is named: with several, an example for the first alone reads as if the
    // others needed nothing.
    const others =
      fresh.length > 1
        ? ` (and the same for ${fresh
            .slice(1)
            .map((entry) => entry.audienceId)
            .join(', ')})`
        : '';
    // With SES email on, people's addresses go through double opt-in (docs/email.md), not SNS email.
    context.output.note(
      target.names.email === undefined
        ? `Next: subscribe people, e.g. ${newsAlerts()} subscriptions add ${first.audienceId} --email desk@example.com (or --sms +15555550100, --https <url>, --slack-webhook)${others}`
        : `Next: add people's email addresses with ${newsAlerts()} email add ${first.audienceId} desk@example.com (each confirms by email); other channels: ${newsAlerts()} subscriptions add ${first.audienceId} --sms +15555550100 (or --https <url>, --slack-webhook)${others}`,
    );
  }
}

/**
 * The subscribers recorded for each audience just made on a new topic: `expiring`, those an
 * 'audiences delete --delete-topic' recorded (marked to expire, not expired yet), whom a restore
 * finds there; and otherwise (the topic may have been kept and found again by its name)
 * `delivering`: how many of the topic's subscriptions deliver to someone, as SNS lists them
 * (records outlive a topic deleted by hand, and people subscribed by hand have none, so records
 * alone cannot say). A read that fails gives
 * the error's name (`unreadable`): the audiences are written already, and only the hint depends on it.
 */
async function recordedSubscribers(
  target: Target,
  results: readonly AudienceResult[],
  topicsMade: ReadonlySet<string>,
): Promise<Map<string, RecordedSubscribers>> {
  const made = results.filter((result) => result.action === 'created' && topicsMade.has(result.audienceId));
  const records = subscriberRecordsOf(target);
  const limit = pLimit(8);
  const now = Date.now();
  const counts = await Promise.all(
    made.map((result) =>
      limit(async (): Promise<readonly [string, RecordedSubscribers]> => {
        let found: Awaited<ReturnType<typeof records.list>>;
        try {
          found = await records.list(result.audienceId, now);
        } catch (error) {
          return [result.audienceId, { unreadable: error instanceof Error ? error.name : 'error' }];
        }
        const expiring = found.filter((record) => record.expiresAt !== undefined).length;
        // With no records at all, the topic may still be one found again by its name whose people
        // were subscribed by hand (the SNS console): SNS is asked, as for a kept topic.
        if (expiring > 0 || result.topicArn === undefined) {
          return [result.audienceId, { expiring, delivering: 0 }];
        }
        try {
          const subscriptions = await topicSubscriptions(target.clients.sns, String(result.topicArn));
          const { deliveringSubscriptions } = await import('./audit-queues.ts');
          const delivering = deliveringSubscriptions(target, result.audienceId, subscriptions).length;
          return [result.audienceId, { expiring, delivering }];
        } catch {
          // Who is subscribed is not known: the first step (subscribe people) is the safer hint.
          return [result.audienceId, { expiring, delivering: 0 }];
        }
      }),
    ),
  );
  return new Map(counts);
}

/** What {@link recordedSubscribers} found for one audience. */
type RecordedSubscribers = { readonly expiring: number; readonly delivering: number } | { readonly unreadable: string };

/** The audiences of `--file`, or one from an id and flags. */
function audiencesToWrite(audienceId: string | undefined, options: AudienceFlags, verb: 'put' | 'create'): FileItem[] {
  let items: FileItem[];
  if (options.file !== undefined) {
    if (audienceId !== undefined || settableFlags.some((flag) => options[flag] !== undefined) || options.disabled) {
      throw new UsageError('give either --file or an audience id with flags, not both');
    }
    items = readItemFile(options.file, 'audiences');
  } else {
    if (audienceId === undefined)
      throw new UsageError('give an audience id (with flags such as --name) or --file <file>');
    refuseFileAsId(audienceId, 'audiences', verb);
    const value: Item = { audienceId, ...attributesFromFlags(options) };
    if (options.disabled) value.enabled = false;
    items = [flagItem(value, `audience ${audienceId}`)];
  }
  if (items.length === 0)
    throw new UsageError(`${inputName(options.file ?? '-')} holds no audiences; nothing was written`);
  return items;
}

/** `audiences create`: new audiences only (an existing one refuses the whole file). */
async function createAudiences(
  context: CommandContext,
  args: readonly unknown[],
  options: AudienceFlags,
): Promise<void> {
  const [audienceId] = args as [string | undefined];
  const target = await context.target();
  const items = audiencesToWrite(audienceId, options, 'create');
  const { planned, problems, warnings } = await planAudiences(context, target, items, 'create');
  for (const warning of warnings) context.output.warn(warning);
  if (problems.length > 0) {
    throw new UsageError(
      `${sourceName(options.file, 'the audience')}: ${problems.length} problem(s); nothing was created`,
      problems,
    );
  }
  const results = await writeAudiences(context, target, planned);
  await subscribeAuditQueues(context, target, results);
  await reportAudiences(context, target, planned, results, warnings);
}

/**
 * In the sandbox a new audience's topic gets its audit queue at once (cli/deliveries.ts), so
 * `news-alerts deliveries` shows everything it is ever sent, whoever publishes to it first.
 */
async function subscribeAuditQueues(
  context: CommandContext,
  target: Target,
  results: readonly AudienceResult[],
): Promise<void> {
  if (target.kind !== 'local') return;
  const created = results.filter((result) => result.action === 'created').map((result) => result.audienceId);
  if (created.length === 0) return;
  const { auditQueueWarning, ensureAuditQueues } = await import('./audit-queues.ts');
  const warn = auditQueueWarning((text) => context.output.warn(text));
  try {
    await ensureAuditQueues(target, { only: created, onFailure: warn });
  } catch (error) {
    // The audiences are written already: a failure here is a warning about the audit queues,
    // not a failed write.
    for (const audienceId of created) warn(audienceId, error);
  }
}

/** `audiences put --file`: creates the new audiences (and their topics), replaces the others. */
async function putAudiences(context: CommandContext, args: readonly unknown[], options: AudienceFlags): Promise<void> {
  const [audienceId] = args as [string | undefined];
  const target = await context.target();
  const items = audiencesToWrite(audienceId, options, 'put');
  const { planned, problems, warnings } = await planAudiences(context, target, items, 'put');
  for (const warning of warnings) context.output.warn(warning);
  if (problems.length > 0) {
    throw new UsageError(
      `${sourceName(options.file, 'the audience')}: ${problems.length} problem(s); nothing was written`,
      problems,
    );
  }
  const results = await writeAudiences(context, target, planned);
  await subscribeAuditQueues(context, target, results);
  await reportAudiences(context, target, planned, results, warnings);
}

/** `audiences validate <file>`: what put would do, without writing anything. */
async function validateAudiences(context: CommandContext, args: readonly unknown[]): Promise<void> {
  const [file] = args as [string];
  const target = await context.target();
  const items = readItemFile(file, 'audiences');
  if (items.length === 0) throw new UsageError(`${inputName(file)} holds no audiences`);
  const { planned, problems, warnings } = await planAudiences(context, target, items, 'put');
  // Warnings first, also when the file is refused: they are what the author fixes next.
  for (const warning of warnings) context.output.warn(warning);
  if (problems.length > 0) {
    throw new UsageError(
      `${inputName(file)}: ${problems.length} problem(s); 'audiences put' would refuse this file`,
      problems,
    );
  }
  const rows = planned.map((entry) => ({
    audienceId: entry.id,
    // As 'rules validate' says it: a write over an audience the run skips is never "unchanged".
    status:
      entry.previous === undefined
        ? 'new'
        : entry.changes.length === 0 && entry.repairs === undefined
          ? 'unchanged'
          : [
              ...(entry.changes.length === 0
                ? []
                : [`changes ${entry.changes.map((change) => change.field).join(', ')}`]),
              ...(entry.repairs === undefined ? [] : [describeRepair('audience')]),
            ].join('; '),
    topic: entry.createTopic ? `creates ${entry.topicName}` : String(entry.item.topicArn ?? ''),
  }));
  context.output.result({ file, valid: true, audiences: rows, warnings }, () => {
    context.output.table(
      [
        { head: 'AUDIENCE', id: true },
        { head: 'AGAINST THE TABLE', wrap: true },
        { head: 'TOPIC', id: true },
      ],
      rows.map((row) => [row.audienceId, row.status, row.topic]),
    );
    context.output.note(
      `${inputName(file)}: ${rows.length} audience(s) valid${warnings.length > 0 ? `, ${warnings.length} warning(s)` : ''}; nothing was written`,
    );
  });
}

/** `audiences export [audienceId...]`: the stored audiences as a file `audiences put --file` writes back. */
async function exportAudiences(
  context: CommandContext,
  args: readonly unknown[],
  options: { format: DocumentFormat },
): Promise<void> {
  const [audienceIds] = args as [string[]];
  const target = await context.target();
  const all = await listItems(target.clients.documents, audiencesTable(target));
  const selected = audienceIds.length === 0 ? all : all.filter((item) => audienceIds.includes(String(item.audienceId)));
  const missing = audienceIds.filter((id) => !selected.some((item) => item.audienceId === id));
  if (missing.length > 0) {
    throw new NotFoundError(
      `audience ${missing.join(', ')} does not exist in ${target.label}${hinted(await didYouMean(target, 'audience', missing))}; nothing was exported`,
    );
  }
  selected.sort((a, b) => String(a.audienceId).localeCompare(String(b.audienceId)));
  for (const item of selected) {
    const parsed = parseAudience(item);
    if (!parsed.ok) {
      context.output.warn(
        `audience ${String(item.audienceId)} is INVALID (${parsed.rejected.reason}): 'audiences put' refuses it until it is fixed`,
      );
    }
  }
  const document = itemsDocument('audiences', selected, audienceAttributes);
  context.output.result(document, () =>
    context.output.line((options.format === 'json' ? jsonText(document) : yamlText(document)).trimEnd()),
  );
}

async function updateAudience(
  context: CommandContext,
  args: readonly unknown[],
  options: AudienceFlags,
): Promise<void> {
  const [audienceId] = args as [string];
  const target = await context.target();
  const previous = await requireAudience(target, audienceId);
  let next: Item;
  let source: FileItem;
  if (options.file !== undefined) {
    if (
      settableFlags.some((flag) => options[flag] !== undefined) ||
      options.clear ||
      options.enable ||
      options.disable
    ) {
      throw new UsageError('give either --file or flags, not both');
    }
    const items = readItemFile(options.file, 'audiences');
    const item = items[0];
    if (items.length !== 1 || !item)
      throw new UsageError(`${inputName(options.file)} must hold exactly one audience for update`);
    const raw = (typeof item.value === 'object' && item.value !== null ? item.value : {}) as Item;
    if (raw.audienceId !== audienceId) {
      throw new UsageError(
        `${item.locate(['audienceId'])}: the file is audience "${String(raw.audienceId)}", not ${audienceId}`,
      );
    }
    if (raw.version !== undefined && raw.version !== versionOf(previous)) {
      throw new UsageError(`audience ${audienceId}: the table moved on; nothing was written`, [
        versionConflict(
          `${item.locate(['version'])}: the file was made from version ${String(raw.version)}, but the table holds ${describeVersion(previous)}; export it again with '${newsAlerts()} audiences export ${audienceId}'`,
        ),
      ]);
    }
    next = { topicArn: previous.topicArn, ...withoutAudit(raw) };
    source = { ...item, value: next };
  } else {
    if (options.enable && options.disable) throw new UsageError('give --enable or --disable, not both');
    const given = attributesFromFlags(options);
    next = { ...withoutAudit(previous), ...given };
    // As 'rules update' refuses them: a value given and cleared in one command, or an attribute
    // the write sets itself, would be dropped without a word.
    const clearable = audienceAttributes.filter(
      (name) => name !== 'audienceId' && name !== 'topicArn' && !(auditAttributes as readonly string[]).includes(name),
    );
    for (const name of options.clear ?? []) {
      if (name === 'audienceId' || name === 'topicArn') throw new UsageError(`--clear ${name}: ${name} is required`);
      if (!clearable.includes(name)) {
        throw new UsageError(`--clear ${name}: not an audience attribute you can clear (${clearable.join(', ')})`);
      }
      refuseSetAndCleared(given, [name]);
      delete next[name];
    }
    if (options.enable) next.enabled = true;
    if (options.disable) next.enabled = false;
    source = flagItem(next, `audience ${audienceId}`);
  }
  const checked = checkAudience(source, `audience "${audienceId}"`, previous);
  if ('problems' in checked)
    throw new UsageError(
      `audience ${audienceId}: ${checked.problems.length} problem(s); nothing was written`,
      checked.problems,
    );
  const warnings = locatedLocaleWarnings(
    source,
    checked.value,
    `audience "${audienceId}"`,
    (await targetDefaultLocale(target)) ?? FALLBACK_LOCALE,
  );
  for (const warning of warnings) context.output.warn(warning);
  if (typeof checked.value.topicArn === 'string' && checked.value.topicArn !== previous.topicArn) {
    await requireHomeTopic(
      context,
      target,
      checked.value.topicArn,
      options.file === undefined ? '--topic-arn' : source.locate(['topicArn']),
      options.file !== undefined,
    );
  }
  const { changes, repairs } = changesFromStored(previous, checked.value, parseAudience, minimalAudience);
  if (changes.length === 0 && repairs === undefined) {
    context.output.result({ audienceId, action: 'unchanged', version: versionOf(previous), warnings }, () =>
      context.output.line(`unchanged ${audienceId} (${describeVersion(previous)})`),
    );
    return;
  }
  const [result] = await writeItems(
    target.clients.documents,
    audiencesTable(target),
    { puts: [{ id: audienceId, item: checked.value, previous }] },
    { actor: await context.actor(), now: Date.now() },
  );
  context.output.result(
    {
      audienceId,
      action: 'updated',
      version: result?.version,
      previousVersion: result?.previousVersion,
      changes,
      ...(repairs === undefined ? {} : { repairs }),
      previous,
      warnings,
    },
    () => {
      context.output.line(
        `updated ${audienceId}: version ${result?.previousVersion ?? '(none)'} → ${result?.version}; previous: ${describeVersion(previous)}`,
      );
      for (const change of changes) context.output.line(`  ${describeChange(change)}`);
      if (repairs !== undefined) context.output.line(`  ${describeRepair('audience', repairs)}`);
    },
  );
}

async function listAudiences(context: CommandContext): Promise<void> {
  const target = await context.target();
  const [audienceItems, ruleItems] = await Promise.all([
    listItems(target.clients.documents, audiencesTable(target)),
    listItems(target.clients.documents, rulesTable(target)),
  ]);
  // A topic outside the deployment breaks only its own audience; the list says which one.
  let home: DeploymentHome | undefined;
  try {
    home = await target.home();
  } catch (error) {
    context.output.warn(`could not tell the stack's account and region, topics were not checked: ${String(error)}`);
  }
  const defaultLocale = await targetDefaultLocale(target);
  const topicProblemOf = (item: Item): string | undefined =>
    home && typeof item.topicArn === 'string' ? topicArnProblem(item.topicArn, home) : undefined;
  // Whether each topic is still there (a few requests at a time): the run parks every alert of
  // an audience whose topic was deleted, so "ok" would be a lie.
  const limit = pLimit(topicChecks);
  const topicStates = await Promise.all(
    audienceItems.map((item) =>
      typeof item.topicArn === 'string' && topicProblemOf(item) === undefined
        ? limit(() => topicState(target.clients.sns, item.topicArn as string))
        : Promise.resolve(undefined),
    ),
  );
  const rows = audienceItems
    .map((item, index) => {
      const parsed = parseAudience(item);
      const audienceId = typeof item.audienceId === 'string' ? item.audienceId : '<missing key>';
      const valid = parsed.ok && topicProblemOf(item) === undefined;
      const problem = parsed.ok ? topicProblemOf(item) : parsed.rejected.reason;
      const topic = topicStates[index];
      const locale = localeText(item, defaultLocale);
      const stories = storySettingsText(item);
      return {
        audienceId,
        name: item.name,
        enabled: item.enabled ?? true,
        deliveryMode: item.deliveryMode ?? 'immediate',
        timeZone: item.timeZone ?? 'UTC',
        locale: locale.locale,
        localeFromDefault: locale.fromDefault,
        ...stories,
        topicArn: item.topicArn,
        rules: ruleItems.filter((rule) => rule.audienceId === audienceId).length,
        version: versionOf(item),
        updatedAt: item.updatedAt,
        updatedBy: item.updatedBy,
        valid,
        problem: problem ?? topic?.problem,
        status: valid ? (topic?.status ?? 'ok') : `INVALID: ${problem ?? ''}`,
        item,
      };
    })
    .sort((a, b) => a.audienceId.localeCompare(b.audienceId));
  context.output.result(rows, () => {
    context.output.table(
      [
        { head: 'AUDIENCE', id: true },
        { head: 'NAME', wrap: true, optional: true },
        'ENABLED',
        'MODE',
        { head: 'TIME ZONE', optional: true },
        { head: 'LOCALE', optional: true },
        { head: 'COLLAPSE', optional: true },
        'RULES',
        { head: 'TOPIC', id: true, optional: true },
        { head: 'VERSION', optional: true },
        { head: 'STATUS', wrap: true },
      ],
      rows.map((row) => [
        row.audienceId,
        typeof row.name === 'string' ? row.name : '',
        storedValueText(row.enabled),
        storedValueText(row.deliveryMode),
        storedValueText(row.timeZone),
        row.localeFromDefault ? `${row.locale} (default)` : storedValueText(row.locale),
        row.collapseFromDefault ? `${row.collapse} (default)` : storedValueText(row.collapse),
        row.rules,
        typeof row.topicArn === 'string' ? row.topicArn.split(':').at(-1) : '',
        row.version ?? '-',
        status(row.status, row.status === 'ok' ? 'good' : 'bad'),
      ]),
      'no audiences',
    );
  });
}

async function showAudience(context: CommandContext, args: readonly unknown[]): Promise<void> {
  const [audienceId] = args as [string];
  const target = await context.target();
  const item = await requireAudience(target, audienceId);
  const parsed = parseAudience(item);
  const rules = (await listItems(target.clients.documents, rulesTable(target)))
    .filter((rule) => rule.audienceId === audienceId)
    .map((rule) => String(rule.ruleId));
  let subscriptions: Subscription[] = [];
  let topicProblem: string | undefined;
  let topicStatus: string | undefined;
  if (typeof item.topicArn === 'string' && item.topicArn !== '') {
    try {
      subscriptions = await topicSubscriptions(target.clients.sns, item.topicArn);
    } catch (error) {
      // Whatever is wrong with the topic (gone, another account, no access), the item still shows.
      const state = topicProblemWithFix(audienceId, item.topicArn, error);
      topicStatus = state.status;
      topicProblem = state.problem;
    }
  } else {
    // No topic to ask SNS about: what gives it one (a repair cannot).
    const state = topicProblemWithFix(audienceId, item.topicArn);
    topicStatus = state.status;
    topicProblem = state.problem;
  }
  const statusText = parsed.ok ? (topicStatus ?? 'ok') : `INVALID: ${parsed.rejected.reason}`;
  const locale = localeText(item, item.locale === undefined ? await targetDefaultLocale(target) : undefined);
  const stories = storySettingsText(item);
  const byProtocol = new Map<string, number>();
  for (const subscription of subscriptions) {
    const protocol = subscription.Protocol ?? '?';
    byProtocol.set(protocol, (byProtocol.get(protocol) ?? 0) + 1);
  }
  const pending = subscriptions.filter((subscription) => subscription.SubscriptionArn === 'PendingConfirmation').length;
  const summary = {
    ...item,
    valid: parsed.ok,
    problem: parsed.ok ? undefined : parsed.rejected.reason,
    rules,
    subscriptions: Object.fromEntries(byProtocol),
    pendingConfirmations: pending,
    topicProblem,
    status: statusText,
    locale: locale.locale,
    localeFromDefault: locale.fromDefault,
    ...stories,
    // The stored item alone, so the document reads back with 'audiences put --file -'.
    item,
  };
  context.output.result(summary, () => {
    context.output.fields([
      ...Object.entries(item)
        .sort(([a], [b]) => audienceAttributes.indexOf(a) - audienceAttributes.indexOf(b))
        .map(
          ([name, value]) =>
            [
              name,
              typeof value === 'object' && value !== null
                ? JSON.stringify(value instanceof Set ? [...value] : value)
                : String(value),
            ] as const,
        ),
      ...(locale.fromDefault ? [['locale', `${locale.locale} (default)`] as const] : []),
      ...(stories.collapseFromDefault ? [['collapse', `${stories.collapse} (default)`] as const] : []),
      ...(stories.updatesFromDefault ? [['updates', `${stories.updates} (default)`] as const] : []),
      ['rules', listText(rules)],
      ['subscriptions', [...byProtocol].map(([protocol, count]) => `${protocol} ${count}`).join(', ') || '(none)'],
      ['pending confirmations', pending],
      ['status', status(statusText, statusText === 'ok' ? 'good' : 'bad')],
    ]);
    if (topicProblem) context.output.warn(topicProblem);
  });
}

async function deleteAudience(
  context: CommandContext,
  args: readonly unknown[],
  options: AudienceFlags,
): Promise<void> {
  const [audienceId] = args as [string];
  const target = await context.target();
  const previous = await requireAudience(target, audienceId);
  const rules = (await listItems(target.clients.documents, rulesTable(target))).filter(
    (rule) => rule.audienceId === audienceId,
  );
  if (rules.length > 0 && !options.withRules) {
    throw new UsageError(
      `audience ${audienceId} still has rule(s) ${rules.map((rule) => String(rule.ruleId)).join(', ')}: without the audience the run would reject them. Delete them too with --with-rules, or move them to another audience first; nothing was deleted`,
    );
  }
  const topicArn = typeof previous.topicArn === 'string' ? previous.topicArn : undefined;
  const conventionalTopic = topicArn?.endsWith(`:${topicNameOf(target, audienceId)}`) === true;
  if (options.deleteTopic && !conventionalTopic) {
    throw new UsageError(
      `--delete-topic: ${topicArn ?? 'the topic'} is not named ${topicNameOf(target, audienceId)} (not made by 'audiences create'); delete it yourself if you mean to; nothing was deleted`,
    );
  }
  // A cdk.json audience's topic is the stack's: deleted here, the stack drifts, and its next
  // deploy fails or leaves the audience without a topic. It goes with cdk.json and a deploy.
  if (options.deleteTopic && topicArn && target.kind === 'stack') {
    const ownedBy = await target.stackResourceOf(topicArn);
    if (ownedBy !== undefined) {
      throw new UsageError(
        `--delete-topic: ${topicArn} belongs to stack ${target.stackName} (resource ${ownedBy}: audience ${audienceId} is declared in cdk.json); remove the audience from cdk.json and deploy, which deletes its topic; nothing was deleted`,
      );
    }
  }
  // What it holds for digests, quiet hours or its budget stays held: no run releases the holds of
  // an audience that does not exist (they go out if it is restored).
  const { DynamoStateStore } = await import('#aws/dynamo-state-store');
  const held = (
    await new DynamoStateStore({
      documents: target.clients.documents,
      tableName: target.names.stateTable,
      log: stderrLog(context.output),
    }).readHeld(audienceId)
  ).items.length;
  const consequences = [
    rules.length > 0 ? `its ${rules.length} rule(s)` : undefined,
    options.deleteTopic ? `its topic and every subscription` : undefined,
  ].filter((part) => part !== undefined);
  const heldNote =
    held > 0
      ? `its ${held} held alert(s) stay held, never sent unless the audience is restored ('${newsAlerts()} holds' lists them)`
      : undefined;
  if (heldNote !== undefined) context.output.warn(`audience ${audienceId}: ${heldNote}`);
  await context.confirm(
    `Delete audience ${audienceId}${consequences.length > 0 ? ` with ${consequences.join(' and ')}` : ''} from ${target.label}?`,
    options.yes,
  );
  // Read before anything is deleted: the HTTPS endpoints whose URLs go with the topic (below).
  const endpointStore = endpointStorePrefixOf(target);
  const refs =
    options.deleteTopic === true && endpointStore !== undefined
      ? (await subscriberRecordsOf(target).list(audienceId)).flatMap((record) =>
          record.endpointRef === undefined ? [] : [record.endpointRef],
        )
      : [];
  const audit = { actor: await context.actor(), now: Date.now() };
  const deletedRules = await writeItems(
    target.clients.documents,
    rulesTable(target),
    { deletes: rules.map((rule) => ({ id: String(rule.ruleId), previous: rule })) },
    audit,
  );
  await writeItems(
    target.clients.documents,
    audiencesTable(target),
    { deletes: [{ id: audienceId, previous }] },
    audit,
  );
  if (options.deleteTopic && topicArn) await target.clients.sns.send(new DeleteTopicCommand({ TopicArn: topicArn }));
  // With its subscriptions gone, the audience's Slack webhook (if the store holds one) is a
  // credential kept for nothing: it goes too. A restore adds it again with subscriptions add.
  // Its failure is a warning: the audience is gone already, and the restore document below must
  // still be printed.
  const store = storePrefixOf(target.names);
  let webhookRemoved = false;
  if (options.deleteTopic === true && store !== undefined) {
    try {
      webhookRemoved = (await removeWebhooks(target.clients.secrets, store, [audienceId])).removed.length > 0;
    } catch (error) {
      context.output.warn(
        `audience ${audienceId}: its Slack webhook URL (if any) could not be taken out of the webhook store (${error instanceof Error ? error.name : 'error'}); take the entry ${audienceId} out of the secret ${webhookShardName(store, audienceId)} by hand`,
      );
    }
  }
  // Its HTTPS endpoints' URLs go the same way (their records stay for a while, so a repair after
  // a restore says which to add again).
  let endpointsRemoved = 0;
  if (options.deleteTopic === true && endpointStore !== undefined) {
    try {
      endpointsRemoved = await forgetEndpoints(target.clients.secrets, endpointStore, audienceId, refs);
    } catch (error) {
      context.output.warn(
        `audience ${audienceId}: its HTTPS endpoint URLs could not be taken out of the endpoint store (${error instanceof Error ? error.name : 'error'}); take out by hand: ${refs.map((ref) => endpointEntryName(endpointStore, audienceId, ref)).join(', ')}`,
      );
    }
  }
  // With every subscription gone, the record of who subscribed (addresses, numbers) is kept for
  // nobody but a restore: DynamoDB's TTL deletes it after DELETED_AUDIENCE_RECORD_DAYS, unless a
  // repair subscribes them again first.
  let recordsExpiring = 0;
  let recordsExpireAt: string | undefined;
  if (options.deleteTopic === true) {
    try {
      const expiring = await subscriberRecordsOf(target).expireAudience(audienceId, audit.now);
      recordsExpiring = expiring.records;
      if (expiring.records > 0) recordsExpireAt = new Date(expiring.expiresAt * 1000).toISOString();
    } catch (error) {
      context.output.warn(
        `audience ${audienceId}: its subscriber records could not be marked to expire (${error instanceof Error ? error.name : 'error'}); they stay in the state table (partition subscribers#${audienceId}) until deleted by hand`,
      );
    }
  }
  // What was deleted, as one document both 'audiences put --file' and 'rules put --file' read (each
  // its own list). Without the audit attributes (restored items start again at version 1), and
  // without a deleted topic's ARN, so the restore makes the topic again by the stack convention.
  const restored = withoutAudit(previous);
  if (options.deleteTopic) delete restored.topicArn;
  const restore = {
    ...itemsDocument('audiences', [restored], audienceAttributes),
    ...itemsDocument(
      'rules',
      deletedRules.map((rule) => withoutAudit(rule.previous ?? {})),
      ruleAttributes,
    ),
  };
  context.output.note(`deleted audience ${audienceId} (was ${describeVersion(previous)})`);
  for (const rule of deletedRules) context.output.note(`deleted rule ${rule.id}`);
  if (options.deleteTopic) context.output.note(`deleted topic ${topicArn} and its subscriptions`);
  else if (topicArn) context.output.note(`kept topic ${topicArn} and its subscriptions (--delete-topic removes them)`);
  if (recordsExpiring > 0) {
    context.output.note(
      `kept the record of its ${recordsExpiring} subscriber(s) for ${DELETED_AUDIENCE_RECORD_DAYS} days (until ${recordsExpireAt}), then it is deleted: to undo, 'audiences put --file' this document, then '${newsAlerts()} audiences repair ${audienceId}' subscribes them again`,
    );
  }
  if (webhookRemoved) {
    context.output.note(
      `removed its Slack webhook URL from the webhook store; after a restore, add it again with '${newsAlerts()} subscriptions add ${audienceId} --slack-webhook'`,
    );
  }
  if (endpointsRemoved > 0) {
    context.output.note(
      `removed ${endpointsRemoved} HTTPS endpoint URL(s) from the endpoint store; after a restore, add them again with ${addHttpsAgain(audienceId, target.kind === 'local')}`,
    );
  }
  context.output.result(
    {
      audienceId,
      action: 'deleted',
      previous,
      deletedRules: deletedRules.map((rule) => rule.id),
      topicDeleted: options.deleteTopic === true,
      webhookRemoved,
      endpointsRemoved,
      subscriberRecordsExpiring: recordsExpiring,
      ...(recordsExpireAt === undefined ? {} : { subscriberRecordsExpireAt: recordsExpireAt }),
      ...restore,
    },
    () => {
      context.output.note(
        `to restore, save stdout to a file and give it to '${newsAlerts()} audiences put --file <file>'${deletedRules.length > 0 ? `, then '${newsAlerts()} rules put --file <file>'` : ''}`,
      );
      context.output.line(yamlText(restore).trimEnd());
    },
  );
}

function audienceFlags(command: Command, forUpdate: boolean): Command {
  return command
    .option('--name <text>', 'display name used in subjects and digests')
    .option('--time-zone <zone>', 'IANA time zone for times in messages, quiet hours and digests')
    .option(
      '--locale <tag>',
      forUpdate
        ? 'BCP 47 locale of its subscribers’ messages, e.g. ko-KR, ja-JP, en-US (--clear locale: the stack default)'
        : 'BCP 47 locale of its subscribers’ messages, e.g. ko-KR, ja-JP, en-US (default: the stack’s defaultLocale)',
    )
    .option('--delivery-mode <mode>', '"immediate" or "digest"')
    .option(
      '--collapse <mode>',
      forUpdate
        ? '"story" (one alert per story; copies from other outlets are recorded, not sent) or "none" (every copy)'
        : '"story" (one alert per story; copies from other outlets are recorded, not sent) or "none" (every copy); default story',
    )
    .option(
      '--updates <mode>',
      '"ignore" or "notify" (one marked update notice when an article it had comes back with another status or title); default ignore',
    )
    .option('--digest-times <list>', 'local digest times, comma-separated (e.g. 08:00,17:30)', collectList)
    .option('--quiet-hours <range>', 'quiet hours in the audience’s zone, e.g. 22:00-07:00')
    .option('--urgent-categories <list>', 'categories that bypass quiet hours', collectList)
    .option('--daily-budget <n>', 'most immediate alerts per local day', integerOption(1))
    .option('--sms-max-segments <n>', 'most SMS segments per alert', integerOption(1, 10))
    .option(
      '--topic-arn <arn>',
      forUpdate ? 'point the audience at another topic' : 'use this existing topic instead of creating one',
    )
    .option('--notes <text>', 'free text for ops; ignored by the run')
    .option(
      '-f, --file <file>',
      forUpdate ? 'JSON or YAML file with the whole audience' : 'JSON or YAML file of one or many audiences',
    );
}

/** Registers `audiences` and its subcommands. */
export function registerAudiences(program: Command): void {
  const audiences = program
    .command('audiences')
    .description(
      'list, show, export, create, update, put, validate, delete and repair audiences (who receives alerts)',
    );

  audiences
    .command('list')
    .description('list audiences with their settings, rule count, topic and status (a missing topic shows)')
    .action(action(listAudiences));

  audiences
    .command('show')
    .description('show one audience: settings, rules, subscriptions by protocol, pending confirmations')
    .argument('<audienceId>')
    .action(action(showAudience));

  audiences
    .command('export')
    .description(
      'print audiences (all, or the ones named) as a YAML or JSON file that "audiences put --file" reads back',
    )
    .argument('[audienceId...]', 'the audiences to export (default: all)')
    .addOption(formatOption())
    .addHelpText(
      'after',
      `
Examples:
  news-alerts audiences export > audiences.yaml   # edit, then: news-alerts audiences put --file audiences.yaml
  news-alerts audiences export markets-desk --format json`,
    )
    .action(action(exportAudiences));

  audienceFlags(
    audiences
      .command('create')
      .description('create an audience: its SNS topic (stack naming, KMS key, TLS-only policy) and its item')
      .argument('[audienceId]'),
    false,
  )
    .option('--disabled', 'create it disabled')
    .addHelpText(
      'after',
      `
Example:
  news-alerts audiences create markets-desk --name "Markets desk" --time-zone Europe/London
  news-alerts email add markets-desk desk@example.com     # with SES email on (docs/email.md)
  news-alerts subscriptions add markets-desk --email desk@example.com   # SNS email, without it`,
    )
    .action(action(createAudiences));

  audienceFlags(
    audiences
      .command('update')
      .description('change an audience’s settings (only the flags given), or replace it from a file')
      .argument('<audienceId>'),
    true,
  )
    .option('--enable', 'enable the audience')
    .option('--disable', 'disable the audience (its rules stop matching)')
    .option(
      '--clear <attributes>',
      'remove optional attributes, comma-separated (e.g. quietHours,dailyBudget; collapse → none, updates → ignore)',
      collectList,
    )
    .action(action(updateAudience));

  audiences
    .command('put')
    .description('create or replace audiences from a JSON/YAML file; new ones get a topic by the stack convention')
    .requiredOption('-f, --file <file>', 'JSON or YAML file of one or many audiences ("-": stdin)')
    .addHelpText(
      'after',
      `
A file holds one audience, a list, or {"audiences": [...]}: what 'audiences export', 'audiences
list --json', 'audiences show --json' and 'audiences delete' print is read back as it stands.
An audience without topicArn keeps its stored topic, or (new) gets one made by the stack
convention. Everything is validated before anything is written; an audience carrying "version"
is only written if the table still holds that version.

Examples:
  news-alerts audiences put --file audiences.yaml
  news-alerts audiences export | news-alerts audiences put --file -`,
    )
    .action(action(putAudiences));

  audiences
    .command('validate')
    .description('check an audiences file exactly as put would, without writing; shows what it would change')
    .argument('<file>', 'JSON or YAML file ("-": stdin)')
    .action(action(validateAudiences));

  audiences
    .command('delete')
    .description('delete an audience item (and with flags its rules and its topic); prints them as a file put restores')
    .argument('<audienceId>')
    .option('--with-rules', 'also delete the audience’s rules')
    .option(
      '--delete-topic',
      'also delete its topic and every subscription (only a topic named by the stack convention)',
    )
    .option('-y, --yes', 'do not ask for confirmation')
    .addHelpText(
      'after',
      `
Example:
  news-alerts audiences delete partner-feed --with-rules --yes > deleted.yaml
  # undo: news-alerts audiences put --file deleted.yaml && news-alerts rules put --file deleted.yaml`,
    )
    .action(action(deleteAudience));

  audiences
    .command('repair')
    .description(
      'recreate a missing topic and its subscriptions from what the project knows; say what it could not restore',
    )
    .argument('<audienceId>')
    .option('-y, --yes', 'do not ask for confirmation')
    .addHelpText(
      'after',
      `
When an audience's SNS topic was deleted, SNS deleted its subscriptions too, and runs park what
they cannot send. Repair creates the topic again under the same name (the stack's key, TLS only),
points the audience at it, and subscribes again every subscriber the CLI or the console added
(Slack included: its webhook URL is still in Secrets Manager). It says what it could not restore:
subscriptions made outside the CLI, a Slack secret that is gone, email subscribers who must
confirm again. Then 'replay --parked' sends what was parked meanwhile.

Example:
  news-alerts audiences repair world-desk --yes && news-alerts replay --parked`,
    )
    .action(action(repair));
}

async function repair(context: CommandContext, args: readonly unknown[], options: { yes?: boolean }): Promise<void> {
  const [audienceId] = args as [string];
  // Loaded here: the repair module builds on this one (topics, subscriptions).
  const { repairAudience } = await import('./workbench/repair.ts');
  const target = await context.target();
  const audit = { actor: await context.actor(), now: Date.now() };
  const log = stderrLog(context.output);
  const warn = (text: string) => context.output.warn(text);
  const plan = await repairAudience(target, audienceId, audit, log, { apply: false, warn });
  const needed = plan.topic === 'missing' || plan.subscriptions.some((entry) => entry.result !== 'present');
  let report = plan;
  if (needed) {
    context.output.note(
      `repair ${audienceId}: ${plan.topic === 'missing' ? `create the topic ${plan.topicArn} again; ` : ''}subscribe ${
        plan.subscriptions.filter((entry) => entry.result !== 'present').length
      } recorded subscriber(s) again`,
    );
    await context.confirm(`Repair audience ${audienceId}?`, options.yes);
    report = await repairAudience(target, audienceId, { ...audit, now: Date.now() }, log, { apply: true, warn });
  }
  context.output.result({ ...report, changed: needed }, () => {
    context.output.fields([
      ['topic', `${report.topicArn}: ${report.topic === 'recreated' ? 'created again' : report.topic}`],
      [
        'parked',
        report.parked > 0
          ? `${report.parked} notification(s): send them with '${newsAlerts()} replay --parked'`
          : 'none',
      ],
    ]);
    context.output.table(
      ['PROTOCOL', 'ENDPOINT', 'RESULT', 'DETAIL'],
      report.subscriptions.map((entry) => [entry.protocol, entry.endpoint, entry.result, entry.detail]),
      'no subscriber is recorded for this audience',
    );
    for (const line of report.notRestored) context.output.line(`not restored: ${line}`);
  });
}
