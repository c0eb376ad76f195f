/**
 * `news-alerts deliveries [audienceId]`: what the subscribers of each sandbox audience received,
 * rendered per channel (email subject and body, SMS text, Slack blocks, webhook JSON).
 *
 * Every sandbox audience topic has an "audit" SQS queue subscribed with raw delivery
 * (`<prefix>audit-<audienceId>`, beside the Slack stand-in queues `<prefix>slack-<audienceId>`):
 * it keeps the structured body of every notification the topic sent. `npm start` creates them
 * for its audiences; for audiences created with the CLI, `audiences create`/`put` subscribe one at
 * once, and `run` and `replay` against the sandbox (and this command) make sure of it idempotently
 * before anything is published
 * (`ensureAuditQueues`, cli/audit-queues.ts), so nothing a CLI run sends is invisible.
 *
 * Reading never consumes: messages are received with a short visibility timeout and made visible
 * again at once, so `deliveries` can be run any number of times and tests that drain the queues
 * still see every message. The email and SMS texts are the ones SNS was asked to send (moto keeps
 * every published message structure); the Slack rendering is the relay's own.
 *
 * Against a deployed stack there is no such queue: the command says so (exit 2) and points to
 * `subscriptions add <audienceId> --sqs <queueArn>`, an SQS subscriber anyone can read.
 *
 * `deliveries <audienceId> --article <key>` answers "why did (or didn't) this audience get this
 * article" from the delivery ledger, on the sandbox and on a stack alike: sent, held for a digest,
 * released from a hold (sent in which digest and when, or parked or dropped, and whether the
 * audience's settings changed), collapsed into a story another outlet's copy carried (with that
 * lead and when it went out), or not in the ledger at all. Story markers (`story:<id>`) and update notices
 * (`update:<subject>#<change>`) read as what they are. It only reads the ledger (strongly
 * consistent), and explains each key from what the entry recorded, never from guesses.
 */
import type { Command } from 'commander';
import { motoState } from '#sandbox/moto';
import { audienceItems, ensureAuditQueues, peekQueue, queueNameOf, sqsClientOf, topicOf } from './audit-queues.ts';
import { action, collectList, integerOption } from './command.ts';
import type { CommandContext } from './context.ts';
import { failureDocument, failureOf, NotFoundError, OperationFailedError, UsageError } from './errors.ts';
import { newsAlerts } from './hints.ts';
import { formatInstant, maskUrl, status } from './output.ts';
import { slackRendering } from './slack-text.ts';
import type { LocalTarget } from './target.ts';
import { didYouMean, hinted } from './unknown-ids.ts';
import { ledgerKeyOf, readLedgerStates } from './workbench/ledger-state.ts';

/** A subscriber of an audience topic, as this command shows it (webhook URLs masked). */
interface Subscriber {
  readonly channel: 'email' | 'ses-email' | 'sms' | 'webhook' | 'slack' | 'sqs' | 'lambda' | string;
  readonly endpoint: string;
}

/** What one subscriber got for one notification. */
interface Received {
  readonly channel: string;
  readonly endpoint: string;
  readonly subject?: string | undefined;
  readonly text?: string | undefined;
  readonly json?: unknown;
  /** What the row can and cannot tell (a webhook: what SNS posted, not what the endpoint took). */
  readonly note?: string | undefined;
}

/** One notification a topic sent, and what each of its subscribers received. */
interface Delivery {
  readonly deliveryId: string;
  readonly kind: 'alert' | 'digest';
  readonly sentAt: string | undefined;
  readonly title: string;
  readonly urgent: boolean;
  readonly subject: string | undefined;
  readonly received: Received[];
}

interface AudienceDeliveries {
  readonly audienceId: string;
  /** Why its deliveries cannot be read (its topic is gone), when they cannot. */
  readonly problem?: string;
  readonly subscribers: Subscriber[];
  /** How many notifications the topic sent in all (the list holds the newest `--limit`). */
  readonly total: number;
  readonly deliveries: Delivery[];
}

/** The message structure (per protocol keys) and subject SNS was asked to send, by delivery id. */
interface Published {
  readonly subject: string | undefined;
  readonly structure: Record<string, unknown>;
}

/**
 * What was published to the sandbox's topics, by topic and delivery id: moto keeps every
 * message structure, which holds the email and SMS texts no SQS subscriber can see.
 */
async function publishedStructures(
  endpoint: string,
  topicArns: ReadonlySet<string>,
): Promise<Map<string, Map<string, Published>>> {
  const byTopic = new Map<string, Map<string, Published>>();
  let dump: { sns?: { Topic?: { arn: string; sent_notifications?: unknown[][] }[] } };
  try {
    dump = (await motoState(endpoint)) as typeof dump;
  } catch {
    // Texts of email and SMS are then shown from the structured body only.
    return byTopic;
  }
  for (const topic of dump.sns?.Topic ?? []) {
    if (!topicArns.has(topic.arn)) continue;
    const entries = new Map<string, Published>();
    for (const [, message, subject] of topic.sent_notifications ?? []) {
      if (typeof message !== 'string') continue;
      try {
        const structure = JSON.parse(message) as Record<string, unknown>;
        const body = typeof structure.default === 'string' ? structure.default : message;
        const id = deliveryIdOf(JSON.parse(body));
        if (id) entries.set(id, { subject: typeof subject === 'string' ? subject : undefined, structure });
      } catch {
        // Not a news-alerts message.
      }
    }
    byTopic.set(topic.arn, entries);
  }
  return byTopic;
}

function deliveryIdOf(document: unknown): string | undefined {
  const part = (document as { newsAlerts?: { deliveryId?: unknown } } | null)?.newsAlerts;
  return typeof part?.deliveryId === 'string' ? part.deliveryId : undefined;
}

/** The subscribers of a topic, audit queue left out (it is this command's own). */
async function subscribersOf(target: LocalTarget, topicArn: string, auditQueueName: string): Promise<Subscriber[]> {
  const { topicSubscriptions } = await import('./audience-topics.ts');
  const slackPrefix = target.names.slackStandInQueuePrefix ?? '';
  const email = target.descriptor.email;
  const subscribers: Subscriber[] = [];
  for (const subscription of await topicSubscriptions(target.clients.sns, topicArn)) {
    const endpoint = subscription.Endpoint ?? '';
    const name = endpoint.split(':').at(-1) ?? endpoint;
    switch (subscription.Protocol) {
      case 'sqs':
        if (name === auditQueueName) break;
        subscribers.push(
          slackPrefix !== '' && name.startsWith(slackPrefix)
            ? { channel: 'slack', endpoint: `stand-in queue ${name}` }
            : email !== undefined && endpoint === email.queueArn
              ? { channel: 'ses-email', endpoint: `the email function's queue (emails in ${email.mailDir})` }
              : { channel: 'sqs', endpoint: name },
        );
        break;
      case 'https':
      case 'http':
        subscribers.push({ channel: 'webhook', endpoint: maskUrl(endpoint) });
        break;
      case 'lambda':
        subscribers.push({ channel: 'slack', endpoint: `relay ${name}` });
        break;
      default:
        subscribers.push({ channel: subscription.Protocol ?? 'unknown', endpoint });
    }
  }
  return subscribers;
}

/** What one subscriber of `channel` received for a notification. */
async function receivedBy(
  subscriber: Subscriber,
  document: Record<string, unknown>,
  raw: string,
  published: Published | undefined,
): Promise<Received> {
  const text = (key: string): string | undefined => {
    const value = published?.structure[key] ?? published?.structure.default;
    return typeof value === 'string' ? value : undefined;
  };
  switch (subscriber.channel) {
    case 'email':
      return { ...subscriber, subject: published?.subject, text: text('email') ?? '(email text not available)' };
    case 'sms':
      return { ...subscriber, text: text('sms') ?? '(SMS text not available)' };
    case 'ses-email':
      // Each confirmed subscriber gets an email of their own (links, language, digest choice).
      return {
        ...subscriber,
        subject: published?.subject,
        text: `sent by SES to each confirmed email subscriber, personalized: every email is a .eml file in the folder above; what one address got: ${newsAlerts()} email history <address>`,
      };
    case 'slack': {
      const slack = await slackRendering(raw);
      return { ...subscriber, text: slack.text, json: slack.json };
    }
    case 'webhook':
      // The audit queue saw what SNS posted; whether the endpoint took it (a dead one fails, and SNS
      // drops it after its retries) is not something this queue can tell.
      return {
        ...subscriber,
        json: document,
        note: 'what SNS posted to it; whether the endpoint accepted it is not checked here',
      };
    default:
      // SQS and Lambda subscribers get the structured body (the `default` key).
      return { ...subscriber, json: document };
  }
}

interface DeliveriesOptions {
  limit: number;
  article?: string[];
  sent?: boolean;
  /** With --sent only (default 24h): refused without it rather than ignored. */
  since?: string;
}

/** `deliveries <audienceId> --sent`: the audience's ledger over a window and its subscribers (stack or sandbox). */
async function showSent(
  context: CommandContext,
  audienceId: string | undefined,
  options: DeliveriesOptions,
): Promise<void> {
  if (audienceId === undefined) throw new UsageError('--sent needs an audience: deliveries <audienceId> --sent');
  const target = await context.target();
  const { entryKinds, sentHistory, sentSince } = await import('./workbench/sent.ts');
  const { stderrLog } = await import('./log.ts');
  const now = Date.now();
  const since = await sentSince(target, options.since ?? '24h', '--since', now);
  const history = await sentHistory(target, audienceId, since, options.limit, stderrLog(context.output));
  const document = {
    target: target.label,
    audienceId,
    since: new Date(since).toISOString(),
    total: history.total,
    kinds: history.kinds,
    entries: history.entries.map((entry) => ({ ...entry, at: new Date(entry.at).toISOString() })),
    subscribers: history.subscribers,
    ...(history.topicProblem === undefined ? {} : { topicProblem: history.topicProblem }),
  };
  context.output.result(document, () => {
    // Entries, not messages: a collapsed copy and each article a digest carried have one too.
    const breakdown = entryKinds
      .filter((kind) => (history.kinds[kind] ?? 0) > 0)
      .map((kind) => `${history.kinds[kind]} ${kind === 'collapsed' ? 'collapsed into a story (not sent)' : kind}`)
      .join(', ');
    context.output.caption(
      `${history.total} ledger entr${history.total === 1 ? 'y' : 'ies'} of ${audienceId} since ${formatInstant(since)}${breakdown === '' ? '' : ` (${breakdown})`}${history.total > history.entries.length ? `; the newest ${history.entries.length} (--limit)` : ''}:`,
    );
    context.output.table(
      ['WHEN', 'ARTICLE', 'OUTCOME', 'RULES'],
      history.entries.map((entry) => [
        formatInstant(entry.at),
        entry.articleKey,
        entry.outcome,
        entry.ruleIds.join(', '),
      ]),
      'nothing in that window',
    );
    context.output.line('');
    context.output.caption(`Subscribers (SNS delivers every accepted message to each confirmed one):`);
    if (history.topicProblem !== undefined) context.output.line(`unknown: ${history.topicProblem}`);
    else {
      context.output.table(
        ['PROTOCOL', 'ENDPOINT', 'STATUS'],
        history.subscribers.map((subscriber) => [subscriber.protocol, subscriber.endpoint, status(subscriber.status)]),
        'no subscribers',
      );
    }
  });
}

/** `deliveries <audienceId> --article <key>`: the ledger's answer for each key. */
async function showLedgerStates(
  context: CommandContext,
  audienceId: string | undefined,
  articleKeys: readonly string[],
) {
  if (audienceId === undefined) {
    throw new UsageError(
      `--article needs the audience: ${newsAlerts()} deliveries <audienceId> --article <articleKey>`,
    );
  }
  const target = await context.target();
  const known = await audienceItems(target);
  if (!known.some((item) => item.audienceId === audienceId)) {
    // A deleted audience's ledger entries still answer; say the audience is gone, then read them.
    context.output.warn(
      `audience ${audienceId} does not exist in ${target.label}; showing what the ledger still holds`,
    );
  }
  const { stateStoreOf } = await import('./state-store.ts');
  // A provider id alone is read as its article key (id:…), as rules explain reads it; it was looked
  // up as given, and answered "never delivered" for an article that was sent.
  const keys = articleKeys.map(ledgerKeyOf);
  for (const [index, key] of keys.entries()) {
    if (key !== articleKeys[index]) {
      context.output.note(`read ${JSON.stringify(articleKeys[index])} as the article key ${JSON.stringify(key)}`);
    }
  }
  const states = await readLedgerStates(stateStoreOf(context, target), audienceId, keys);
  context.output.result({ target: target.label, audienceId, articles: states }, () => {
    context.output.table(
      [
        { head: 'KEY', id: true },
        { head: 'STATUS', wrap: true },
      ],
      states.map((entry) => [entry.articleKey, status(entry.status, entry.kind === 'sent' ? 'good' : undefined)]),
    );
  });
}

async function showDeliveries(
  context: CommandContext,
  args: readonly unknown[],
  options: DeliveriesOptions,
): Promise<void> {
  const [wanted] = args as [string | undefined];
  // Options that only mean something together are refused apart, never silently ignored.
  if (options.article !== undefined && options.sent) {
    throw new UsageError(
      'give --article <key> (what became of an article) or --sent (the ledger over a window), not both',
    );
  }
  if (options.since !== undefined && !options.sent) {
    throw new UsageError(`--since is the start of --sent's window: add --sent, or leave --since out`);
  }
  // The ledger answers on a stack too: no audit queue is needed.
  if (options.article !== undefined) return await showLedgerStates(context, wanted, options.article);
  if (options.sent) return await showSent(context, wanted, options);
  const onStack = (label: string) =>
    new UsageError(
      `deliveries are visible only in the sandbox (--local), where every audience topic has an audit queue; on ${label}, subscribe a queue you can read: ${newsAlerts()} subscriptions add <audienceId> --sqs <queueArn>`,
    );
  // Refused before any AWS call: there is nothing to read on a stack.
  if (context.options.local !== true && context.options.sandboxFile === undefined) {
    throw onStack(`stack ${context.options.stack}`);
  }
  const target = await context.target();
  if (target.kind !== 'local') throw onStack(target.label);
  const items = await audienceItems(target);
  const known = items.filter((item) => typeof item.audienceId === 'string' && topicOf(item) !== undefined);
  if (wanted !== undefined && !known.some((item) => item.audienceId === wanted)) {
    throw new NotFoundError(
      `audience ${wanted} does not exist in ${target.label}${hinted(await didYouMean(target, 'audience', [wanted]), `${newsAlerts()} audiences list`)}`,
    );
  }
  const chosen = known
    .filter((item) => wanted === undefined || item.audienceId === wanted)
    .sort((a, b) => String(a.audienceId).localeCompare(String(b.audienceId)));
  const sqs = await sqsClientOf(target);
  const result: AudienceDeliveries[] = [];
  try {
    const failures = new Map<string, string>();
    const queues = await ensureAuditQueues(target, {
      only: chosen.map((item) => String(item.audienceId)),
      sqs,
      onFailure: (audienceId, error) =>
        failures.set(audienceId, error instanceof Error ? error.message : String(error)),
    });
    const topics = new Set(chosen.map((item) => topicOf(item) as string));
    const published = await publishedStructures(target.descriptor.endpoint, topics);
    for (const item of chosen) {
      const audienceId = String(item.audienceId);
      const topicArn = topicOf(item) as string;
      const queueUrl = queues.get(audienceId);
      const problem = failures.get(audienceId);
      if (problem !== undefined) {
        // A deleted topic: nothing can be read through it; the others are still shown.
        result.push({ audienceId, subscribers: [], total: 0, deliveries: [], problem });
        continue;
      }
      const subscribers = await subscribersOf(target, topicArn, queueNameOf(target, audienceId));
      const messages = queueUrl ? await peekQueue(sqs, queueUrl) : [];
      const deliveries: Delivery[] = [];
      for (const message of messages.slice(-options.limit)) {
        const raw = message.Body ?? '';
        let document: Record<string, unknown>;
        try {
          document = JSON.parse(raw) as Record<string, unknown>;
        } catch {
          document = { body: raw };
        }
        const part = (document.newsAlerts ?? {}) as Record<string, unknown>;
        const article = (part.article ?? {}) as Record<string, unknown>;
        const id = deliveryIdOf(document) ?? message.MessageId ?? '';
        const publishedMessage = published.get(topicArn)?.get(id);
        const kind = part.kind === 'digest' ? 'digest' : 'alert';
        const content = (document.content ?? {}) as Record<string, unknown>;
        const sent = Number(message.Attributes?.SentTimestamp);
        deliveries.push({
          deliveryId: id,
          kind,
          sentAt: Number.isFinite(sent) && sent > 0 ? new Date(sent).toISOString() : undefined,
          title: String(article.title ?? content.title ?? ''),
          urgent: part.urgent === true,
          subject: publishedMessage?.subject,
          received: await Promise.all(
            subscribers.map((subscriber) => receivedBy(subscriber, document, raw, publishedMessage)),
          ),
        });
      }
      result.push({ audienceId, subscribers, total: messages.length, deliveries });
    }
  } finally {
    sqs.destroy();
  }
  // An audience that cannot be read (its topic deleted) is shown beside the others, and fails the
  // command: exit 1, named on stderr with the fix, as the exit codes promise.
  const unreadable = result.filter((audience) => audience.problem !== undefined);
  for (const audience of unreadable) {
    context.output.warn(
      `${audience.audienceId}: cannot be read (${audience.problem}); if its topic was deleted, '${newsAlerts()} audiences repair ${audience.audienceId}' makes it again`,
    );
  }
  const failure =
    unreadable.length === 0
      ? undefined
      : new OperationFailedError(
          `${unreadable.length} audience(s) could not be read: ${unreadable.map((audience) => audience.audienceId).join(', ')}`,
        );
  const document = { target: target.label, audiences: result };
  context.output.result(
    failure === undefined ? document : { ...failureDocument(failureOf(failure)), ...document },
    () => printDeliveries(context, result),
  );
  if (failure !== undefined) throw failure;
}

function printDeliveries(context: CommandContext, audiences: readonly AudienceDeliveries[]): void {
  const { output } = context;
  if (audiences.length === 0) {
    output.line(`No audiences in the sandbox (${newsAlerts()} audiences create …).`);
    return;
  }
  for (const audience of audiences) {
    if (audience.problem !== undefined) {
      output.line(`=== ${audience.audienceId}: cannot be read: ${audience.problem}`);
      output.line('');
      continue;
    }
    const shown = audience.deliveries.length;
    const subscribers =
      audience.subscribers.length === 0
        ? 'no subscribers'
        : audience.subscribers.map((subscriber) => `${subscriber.channel} ${subscriber.endpoint}`).join(', ');
    output.line(
      `=== ${audience.audienceId}: ${audience.total} notification(s)${shown < audience.total ? `, newest ${shown} shown` : ''} (${subscribers})`,
    );
    for (const delivery of audience.deliveries) {
      output.line(
        `--- ${delivery.sentAt ?? ''} ${delivery.kind === 'digest' ? 'DIGEST ' : ''}${delivery.urgent ? 'URGENT ' : ''}${delivery.deliveryId}`,
      );
      output.line(`    ${delivery.subject ?? delivery.title}`);
      for (const received of delivery.received) {
        output.line(
          `  > ${received.channel} ${received.endpoint}${received.note === undefined ? '' : ` (${received.note})`}`,
        );
        if (received.subject !== undefined) output.line(indent(`Subject: ${received.subject}`));
        if (received.text !== undefined) output.line(indent(received.text));
        else if (received.json !== undefined) output.line(indent(JSON.stringify(received.json, null, 2)));
      }
    }
    output.line('');
  }
}

const indent = (text: string): string =>
  text
    .split('\n')
    .map((line) => `      ${line}`)
    .join('\n');

/** Registers `deliveries`. */
export function registerDeliveries(program: Command): void {
  program
    .command('deliveries')
    .description(
      'what the subscribers of each audience received (sandbox: rendered per channel; --sent: the ledger, stack too)',
    )
    .argument('[audienceId]', 'only this audience')
    .option('--limit <n>', 'newest notifications per audience', integerOption(1, 10_000), 20)
    .option(
      '--article <keys>',
      'why this audience did or did not get these articles, from the delivery ledger (sandbox or stack): sent, held, collapsed into a story (with its lead), or not in the ledger; also story:<id> and update:… keys (a provider id alone is read as id:<id>)',
      collectList,
    )
    .option(
      '--sent',
      "the audience's delivery ledger over --since (stack or sandbox): sent, held, released, collapsed, parked; and its subscribers",
    )
    .option(
      '--since <when>',
      "with --sent: start (span back such as 24h, a provider date such as 2026-11-21 from its midnight in the provider's zone, or a date-time with zone; default 24h)",
    )
    .addHelpText(
      'after',
      `
Reads each audience topic's audit queue (<prefix>audit-<audienceId>) without consuming it, newest
last: email subject and body, SMS text, the Slack message (blocks' text) and the webhook JSON, for
every subscriber of the audience. 'audiences create' and 'audiences put' subscribe a new sandbox
audience's audit queue at once, and 'run' and 'replay' make sure every audience has one first.

Only the sandbox has audit queues (exit 2 on a stack). On a stack, subscribe an SQS queue you can
read: news-alerts subscriptions add <audienceId> --sqs <queueArn> [--raw]

With --article, the delivery ledger says for each key what happened (this works on a stack too):
"sent <time>" (as the lead of story <id>), "held for its digest since <time>", "collapsed into
story <id> (lead <articleKey>, sent <time>): this copy was not sent", or "not in the ledger".
Keys "story:<id>" (which article carries a story) and "update:<story or article>#<change>"
(an update notice) are explained too.

With --sent (a stack too), the audience's ledger since --since, newest first, and its subscribers
with their status: SNS delivers every message it accepted to each confirmed subscriber. It scans
the state table (about $0.03 per GB of state table on demand).

Examples:
  news-alerts deliveries markets-desk --sent --since 2d
  news-alerts --local run && news-alerts --local deliveries
  news-alerts --local deliveries markets-desk --limit 5 --json
  news-alerts deliveries markets-desk --article id:20261121-0042 --article story:9f2c4e1ab03d77e0`,
    )
    .action(action(showDeliveries));
}
