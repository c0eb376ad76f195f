/**
 * `news-alerts audiences …`: list, show, create, update, delete.
 *
 * `create` makes what the stack makes for a declared audience: a topic named
 * `<AudienceTopicPrefix><audienceId>`, encrypted with the stack's topic key and refusing anything
 * but TLS, so the alert function (granted that name prefix and key) publishes to it without a
 * redeploy; then the audience item. Items are validated with the run's own schema.
 */
import {
  CreateTopicCommand,
  DeleteTopicCommand,
  GetTopicAttributesCommand,
  ListSubscriptionsByTopicCommand,
  NotFoundException,
  SetTopicAttributesCommand,
  type SNSClient,
  type Subscription,
} from '@aws-sdk/client-sns';
import type { Command } from 'commander';
import { AudienceSchema, audienceAttributes, parseAudience } from '#core/model';
import { action, collectList, integerOption } from './command.ts';
import type { CommandContext } from './context.ts';
import { NotFoundError, OperationFailedError, UsageError } from './errors.ts';
import { type FileItem, locateIssues, readItemFile } from './item-files.ts';
import {
  describeChange,
  describeVersion,
  diffItems,
  getItem,
  type Item,
  type ItemTable,
  listItems,
  type PlannedPut,
  versionOf,
  withoutAudit,
  writeItems,
} from './items.ts';
import { listText, storedValueText } from './output.ts';
import type { DeploymentHome, Target } from './target.ts';

const audiencesTable = (target: Target): ItemTable => ({
  tableName: target.names.audiencesTable,
  keyName: 'audienceId',
  noun: 'audience',
});

const rulesTable = (target: Target): ItemTable => ({
  tableName: target.names.rulesTable,
  keyName: 'ruleId',
  noun: 'rule',
});

/** SNS topic names: letters, digits, `-` and `_`, at most 256. */
const topicNamePattern = /^[A-Za-z0-9_-]{1,256}$/;

/** The topic name the stack's convention gives an audience. */
export const topicNameOf = (target: Target, audienceId: string): string =>
  `${target.names.audienceTopicPrefix}${audienceId}`;

/** The stack's `enforceSSL` statement (what CDK's Topic adds): no publishing over plain HTTP. */
export function sslOnlyTopicPolicy(topicArn: string): string {
  return JSON.stringify({
    Version: '2012-10-17',
    Statement: [
      {
        Sid: 'AllowPublishThroughSSLOnly',
        Effect: 'Deny',
        Principal: '*',
        Action: 'sns:Publish',
        Resource: topicArn,
        Condition: { Bool: { 'aws:SecureTransport': 'false' } },
      },
    ],
  });
}

/** Every subscription of a topic (all pages). */
export async function topicSubscriptions(sns: SNSClient, topicArn: string): Promise<Subscription[]> {
  const subscriptions: Subscription[] = [];
  let NextToken: string | undefined;
  do {
    const page = await sns.send(new ListSubscriptionsByTopicCommand({ TopicArn: topicArn, NextToken }));
    subscriptions.push(...(page.Subscriptions ?? []));
    NextToken = page.NextToken;
  } while (NextToken);
  return subscriptions;
}

/**
 * Why a topic ARN cannot be an audience topic of this deployment, or undefined when it can. The
 * alert function may only publish in its own account and region, and a topic elsewhere makes
 * every SNS call about it fail (NotFound or AuthorizationError).
 */
export function topicArnProblem(topicArn: string, home: DeploymentHome): string | undefined {
  const match = /^arn:([^:]+):sns:([^:]*):([^:]*):([^:]+)$/.exec(topicArn);
  if (!match) return `"${topicArn}" is not an SNS topic ARN (arn:aws:sns:<region>:<account>:<name>)`;
  const [, partition, region, account] = match;
  const problems: string[] = [];
  if (account !== home.account) problems.push(`account ${account}, not the stack's account ${home.account}`);
  if (region !== home.region) problems.push(`region ${region}, not the stack's region ${home.region}`);
  if (partition !== home.partition) problems.push(`partition ${partition}, not ${home.partition}`);
  if (problems.length === 0) return undefined;
  return `the topic ${topicArn} is in ${problems.join(' and ')}; the alert function can only publish to topics in its own account and region. Omit --topic-arn to create one, or give a topic of ${home.account} in ${home.region}`;
}

/**
 * Refuses (exit 2) a topic ARN outside the deployment or that does not exist, before anything is
 * written; warns when the alert function's grant (the topic name prefix) does not cover it.
 */
async function requireHomeTopic(context: CommandContext, target: Target, topicArn: string, what: string) {
  const problem = topicArnProblem(topicArn, await target.home());
  if (problem) throw new UsageError(`${what}: ${problem}; nothing was written`);
  try {
    await target.clients.sns.send(new GetTopicAttributesCommand({ TopicArn: topicArn }));
  } catch (error) {
    if (error instanceof NotFoundException) {
      throw new UsageError(
        `${what}: the topic ${topicArn} does not exist; create it first or omit --topic-arn; nothing was written`,
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

/**
 * An SNS failure about one audience's topic as a CLI error that names the audience, the topic and
 * the fix (a topic that is gone or in another account fails every call about it).
 */
export function audienceTopicError(audienceId: string, topicArn: string, error: unknown): OperationFailedError {
  const reason = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  return new OperationFailedError(
    `audience ${audienceId}: its topic ${topicArn} cannot be read (${reason}); point it at a topic of this stack with 'news-alerts audiences update ${audienceId} --topic-arn <arn>'`,
    { cause: error },
  );
}

/** Every subscription of an audience's topic, or {@link audienceTopicError}. */
export async function audienceSubscriptions(
  target: Target,
  audienceId: string,
  topicArn: string,
): Promise<Subscription[]> {
  try {
    return await topicSubscriptions(target.clients.sns, topicArn);
  } catch (error) {
    throw audienceTopicError(audienceId, topicArn, error);
  }
}

/** The stored audience, or NotFoundError naming what to do. */
export async function requireAudience(target: Target, audienceId: string): Promise<Item> {
  const item = await getItem(target.clients.documents, audiencesTable(target), audienceId);
  if (item === undefined) {
    throw new NotFoundError(`audience ${audienceId} does not exist in ${target.label} (news-alerts audiences list)`);
  }
  return item;
}

/** The topic ARN of a stored audience. */
export function topicArnOf(audience: Item, audienceId: string): string {
  if (typeof audience.topicArn !== 'string' || audience.topicArn === '') {
    throw new UsageError(
      `audience ${audienceId} has no topicArn; fix it with 'news-alerts audiences update ${audienceId} --topic-arn <arn>'`,
    );
  }
  return audience.topicArn;
}

// --- Items from flags -------------------------------------------------------------------------

interface AudienceFlags {
  file?: string;
  name?: string;
  timeZone?: string;
  deliveryMode?: string;
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
  'deliveryMode',
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
  if (options.deliveryMode !== undefined) item.deliveryMode = options.deliveryMode;
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
function checkAudience(item: FileItem, what: string): { value: Item } | { problems: string[] } {
  const parsed = parseAudience(item.value);
  if (parsed.ok) return { value: withoutAudit({ ...parsed.value }) };
  const result = AudienceSchema.safeParse(item.value);
  return {
    problems: result.success
      ? [`${item.locate()}: ${what}: ${parsed.rejected.reason}`]
      : locateIssues(item, result.error, audienceAttributes, what),
  };
}

const flagItem = (value: Item, label: string): FileItem => ({ value, label, locate: () => 'command line' });

// --- Commands ---------------------------------------------------------------------------------

async function createAudiences(
  context: CommandContext,
  args: readonly unknown[],
  options: AudienceFlags,
): Promise<void> {
  const [audienceId] = args as [string | undefined];
  const target = await context.target();
  let items: FileItem[];
  if (options.file !== undefined) {
    if (audienceId !== undefined || settableFlags.some((flag) => options[flag] !== undefined)) {
      throw new UsageError('give either --file or an audience id with flags, not both');
    }
    items = readItemFile(options.file, 'audiences');
  } else {
    if (audienceId === undefined)
      throw new UsageError('give an audience id (with flags such as --name) or --file <file>');
    const value: Item = { audienceId, ...attributesFromFlags(options) };
    if (options.disabled) value.enabled = false;
    items = [flagItem(value, `audience ${audienceId}`)];
  }

  // Validate everything (with a stand-in ARN where the topic is still to be made) before creating anything.
  const problems: string[] = [];
  const planned: { id: string; item: Item; createTopic: boolean; topicName: string }[] = [];
  for (const item of items) {
    const raw = (typeof item.value === 'object' && item.value !== null ? item.value : {}) as Item;
    const id = typeof raw.audienceId === 'string' ? raw.audienceId : item.label;
    const topicName = topicNameOf(target, id);
    const createTopic = raw.topicArn === undefined;
    if (createTopic && !topicNamePattern.test(topicName)) {
      problems.push(
        `${item.locate(['audienceId'])}: audience "${id}": the topic name "${topicName}" is not a valid SNS topic name (letters, digits, - and _ only, at most 256); choose another audienceId`,
      );
      continue;
    }
    const standIn = createTopic ? { topicArn: `arn:aws:sns:us-east-1:000000000000:${topicName}` } : {};
    const checked = checkAudience({ ...item, value: { ...raw, ...standIn } }, `audience "${id}"`);
    if ('problems' in checked) {
      problems.push(...checked.problems);
      continue;
    }
    if (planned.some((entry) => entry.id === id)) {
      problems.push(`${item.locate(['audienceId'])}: audience "${id}" appears twice`);
      continue;
    }
    if ((await getItem(target.clients.documents, audiencesTable(target), id)) !== undefined) {
      problems.push(
        `${item.locate(['audienceId'])}: audience "${id}" already exists; change it with 'news-alerts audiences update ${id}'`,
      );
      continue;
    }
    if (!createTopic && typeof checked.value.topicArn === 'string') {
      try {
        await requireHomeTopic(
          context,
          target,
          checked.value.topicArn,
          `${item.locate(['topicArn'])}: audience "${id}"`,
        );
      } catch (error) {
        if (!(error instanceof UsageError)) throw error;
        problems.push(error.message.replace(/; nothing was written$/, ''));
        continue;
      }
    }
    planned.push({ id, item: checked.value, createTopic, topicName });
  }
  if (problems.length > 0) {
    throw new UsageError(
      `${options.file ?? 'the audience'}: ${problems.length} problem(s); nothing was created`,
      problems,
    );
  }

  const puts: PlannedPut[] = [];
  for (const entry of planned) {
    if (!entry.createTopic) {
      puts.push({ id: entry.id, item: entry.item, previous: undefined });
      continue;
    }
    const topicArn = await createTopic(context, target, entry.id, entry.topicName);
    puts.push({ id: entry.id, item: { ...entry.item, topicArn }, previous: undefined });
  }
  const results = await writeItems(
    target.clients.documents,
    audiencesTable(target),
    { puts },
    {
      actor: await context.actor(),
      now: Date.now(),
    },
  );
  context.output.result(
    {
      target: target.label,
      results: results.map(({ id, version, item }) => ({ audienceId: id, action: 'created', version, item })),
    },
    () => {
      for (const result of results) {
        context.output.line(
          `created audience ${result.id} (version ${result.version}), topic ${String(result.item?.topicArn)}`,
        );
      }
      context.output.line(
        'Next: subscribe people with news-alerts subscriptions add <audienceId> --email … | --sms … | --https … | --slack-webhook',
      );
    },
  );
}

/** Creates (or finds) the audience topic with the stack's key and the TLS-only policy. */
async function createTopic(
  context: CommandContext,
  target: Target,
  audienceId: string,
  topicName: string,
): Promise<string> {
  const { sns } = target.clients;
  const keyArn = target.names.audienceTopicKeyArn;
  if (target.kind === 'stack' && !keyArn) {
    context.output.warn(
      'the stack has no AudienceTopicKeyArn output; the topic is created without a customer-managed key',
    );
  }
  const { TopicArn } = await sns.send(
    new CreateTopicCommand({
      Name: topicName,
      ...(keyArn ? { Attributes: { KmsMasterKeyId: keyArn } } : {}),
      Tags: [
        { Key: 'project', Value: 'news-alerts' },
        { Key: 'news-alerts:audience', Value: audienceId },
      ],
    }),
  );
  if (!TopicArn) throw new Error(`SNS returned no ARN for topic ${topicName}`);
  await sns.send(
    new SetTopicAttributesCommand({ TopicArn, AttributeName: 'Policy', AttributeValue: sslOnlyTopicPolicy(TopicArn) }),
  );
  return TopicArn;
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
    if (items.length !== 1 || !item) throw new UsageError(`${options.file} must hold exactly one audience for update`);
    const raw = (typeof item.value === 'object' && item.value !== null ? item.value : {}) as Item;
    if (raw.audienceId !== audienceId) {
      throw new UsageError(
        `${item.locate(['audienceId'])}: the file is audience "${String(raw.audienceId)}", not ${audienceId}`,
      );
    }
    if (raw.version !== undefined && raw.version !== versionOf(previous)) {
      throw new UsageError(
        `${item.locate(['version'])}: the file was made from version ${String(raw.version)}, but the table holds ${describeVersion(previous)}; export it again with 'news-alerts audiences show ${audienceId} --json'`,
      );
    }
    next = { topicArn: previous.topicArn, ...withoutAudit(raw) };
    source = { ...item, value: next };
  } else {
    if (options.enable && options.disable) throw new UsageError('give --enable or --disable, not both');
    next = { ...withoutAudit(previous), ...attributesFromFlags(options) };
    for (const name of options.clear ?? []) {
      if (name === 'audienceId' || name === 'topicArn') throw new UsageError(`--clear ${name}: ${name} is required`);
      if (!audienceAttributes.includes(name)) {
        throw new UsageError(`--clear ${name}: not an audience attribute (${audienceAttributes.join(', ')})`);
      }
      delete next[name];
    }
    if (options.enable) next.enabled = true;
    if (options.disable) next.enabled = false;
    source = flagItem(next, `audience ${audienceId}`);
  }
  const checked = checkAudience(source, `audience "${audienceId}"`);
  if ('problems' in checked)
    throw new UsageError(`audience ${audienceId}: problem(s); nothing was written`, checked.problems);
  if (typeof checked.value.topicArn === 'string' && checked.value.topicArn !== previous.topicArn) {
    await requireHomeTopic(
      context,
      target,
      checked.value.topicArn,
      options.file === undefined ? '--topic-arn' : source.locate(['topicArn']),
    );
  }
  const normalizedPrevious = parseAudience(previous);
  const changes = diffItems(normalizedPrevious.ok ? { ...normalizedPrevious.value } : previous, checked.value);
  if (changes.length === 0) {
    context.output.result({ audienceId, action: 'unchanged', version: versionOf(previous) }, () =>
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
      previous,
    },
    () => {
      context.output.line(
        `updated ${audienceId}: version ${result?.previousVersion ?? '(none)'} → ${result?.version}; previous: ${describeVersion(previous)}`,
      );
      for (const change of changes) context.output.line(`  ${describeChange(change)}`);
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
  const topicProblemOf = (item: Item): string | undefined =>
    home && typeof item.topicArn === 'string' ? topicArnProblem(item.topicArn, home) : undefined;
  const rows = audienceItems
    .map((item) => {
      const parsed = parseAudience(item);
      const audienceId = typeof item.audienceId === 'string' ? item.audienceId : '<missing key>';
      return {
        audienceId,
        name: item.name,
        enabled: item.enabled ?? true,
        deliveryMode: item.deliveryMode ?? 'immediate',
        timeZone: item.timeZone ?? 'UTC',
        topicArn: item.topicArn,
        rules: ruleItems.filter((rule) => rule.audienceId === audienceId).length,
        version: versionOf(item),
        updatedAt: item.updatedAt,
        updatedBy: item.updatedBy,
        valid: parsed.ok && topicProblemOf(item) === undefined,
        problem: parsed.ok ? topicProblemOf(item) : parsed.rejected.reason,
      };
    })
    .sort((a, b) => a.audienceId.localeCompare(b.audienceId));
  context.output.result(rows, () => {
    context.output.table(
      ['AUDIENCE', 'NAME', 'ENABLED', 'MODE', 'TIME ZONE', 'RULES', 'TOPIC', 'VERSION', 'STATUS'],
      rows.map((row) => [
        row.audienceId,
        typeof row.name === 'string' ? row.name : '',
        storedValueText(row.enabled),
        storedValueText(row.deliveryMode),
        storedValueText(row.timeZone),
        row.rules,
        typeof row.topicArn === 'string' ? row.topicArn.split(':').at(-1) : '',
        row.version ?? '',
        row.valid ? 'ok' : `INVALID: ${row.problem}`,
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
  if (typeof item.topicArn === 'string') {
    try {
      subscriptions = await topicSubscriptions(target.clients.sns, item.topicArn);
    } catch (error) {
      // Whatever is wrong with the topic (gone, another account, no access), the item still shows.
      const reason =
        error instanceof NotFoundException
          ? 'does not exist'
          : `cannot be read (${String((error as Error)?.name ?? error)})`;
      topicProblem = `the topic ${item.topicArn} ${reason}: alerts for this audience are parked (fix the topic with 'news-alerts audiences update ${audienceId} --topic-arn <arn>', then 'news-alerts replay --parked --audience ${audienceId}')`;
    }
  }
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
      ['rules', listText(rules)],
      ['subscriptions', [...byProtocol].map(([protocol, count]) => `${protocol} ${count}`).join(', ') || '(none)'],
      ['pending confirmations', pending],
      ['status', parsed.ok ? 'ok' : `INVALID: ${parsed.rejected.reason}`],
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
  const consequences = [
    rules.length > 0 ? `its ${rules.length} rule(s)` : undefined,
    options.deleteTopic ? `its topic and every subscription` : undefined,
  ].filter((part) => part !== undefined);
  await context.confirm(
    `Delete audience ${audienceId}${consequences.length > 0 ? ` with ${consequences.join(' and ')}` : ''} from ${target.label}?`,
    options.yes,
  );
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
  context.output.result(
    {
      audienceId,
      action: 'deleted',
      previous,
      deletedRules: deletedRules.map((rule) => rule.id),
      topicDeleted: options.deleteTopic === true,
    },
    () => {
      context.output.line(`deleted audience ${audienceId} (was ${describeVersion(previous)})`);
      for (const rule of deletedRules) context.output.line(`deleted rule ${rule.id}`);
      if (options.deleteTopic) context.output.line(`deleted topic ${topicArn}`);
      else if (topicArn)
        context.output.line(`kept topic ${topicArn} and its subscriptions (--delete-topic removes them)`);
    },
  );
}

function audienceFlags(command: Command, forUpdate: boolean): Command {
  return command
    .option('--name <text>', 'display name used in subjects and digests')
    .option('--time-zone <zone>', 'IANA time zone for times in messages, quiet hours and digests')
    .option('--delivery-mode <mode>', '"immediate" or "digest"')
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
    .description('list, show, create, update and delete audiences (who receives alerts)');

  audiences
    .command('list')
    .description('list audiences with their settings, rule count and topic')
    .action(action(listAudiences));

  audiences
    .command('show')
    .description('show one audience: settings, rules, subscriptions by protocol, pending confirmations')
    .argument('<audienceId>')
    .action(action(showAudience));

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
  news-alerts audiences create markets --name "Markets desk" --time-zone Europe/London
  news-alerts subscriptions add markets --email desk@example.com`,
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
      'remove optional attributes, comma-separated (e.g. quietHours,dailyBudget)',
      collectList,
    )
    .action(action(updateAudience));

  audiences
    .command('delete')
    .description('delete an audience item (and with flags its rules and its topic)')
    .argument('<audienceId>')
    .option('--with-rules', 'also delete the audience’s rules')
    .option(
      '--delete-topic',
      'also delete its topic and every subscription (only a topic named by the stack convention)',
    )
    .option('-y, --yes', 'do not ask for confirmation')
    .action(action(deleteAudience));
}
