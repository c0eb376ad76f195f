/**
 * `news-alerts email …`: the SES email subscribers of a deployment with `emailDomain` (and of the
 * sandbox, which always has SES email): add addresses (double opt-in), list and remove them, move
 * an audience's SNS email subscribers over, and read one subscriber's status and history.
 *
 * Addresses are people's: lists show them masked (`k***@example.com`) beside the subscriber id,
 * and no command prints one in clear; `history` takes the address (or the id) ops already have.
 * Everything goes through the same core and adapters as the email functions (functions/email/).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { SESv2Client } from '@aws-sdk/client-sesv2';
import { SubscribeCommand, type Subscription, UnsubscribeCommand } from '@aws-sdk/client-sns';
import type { Command } from 'commander';
import type { EmailSender, SendRecord, SubscriberStore } from '#core/email/ports';
import { type AudienceLabel, addSubscriber, type SubscribeDeps } from '#core/email/subscribe';
import {
  afterHeld,
  InvalidAddressError,
  maskAddress,
  normalizeAddress,
  type SubscriberProfile,
} from '#core/email/subscriber';
import { checkShippedLocale, FALLBACK_LOCALE, localeChain, messageLocale } from '#core/locale';
import { silentLog } from '#core/ports';
import { audienceSubscriptions, requireAudience, topicArnOf } from './audience-topics.ts';
import { action, integerOption } from './command.ts';
import type { CommandContext } from './context.ts';
import { NotFoundError, OperationFailedError, UsageError } from './errors.ts';
import { hint } from './hints.ts';
import { formatInstant } from './output.ts';
import { liftSesSuppression } from './ses-suppression.ts';
import type { Target } from './target.ts';
import type { EmailTargetNames } from './target-model.ts';

/** What the email commands work with on a target. */
interface EmailTarget {
  readonly target: Target;
  readonly names: EmailTargetNames;
  readonly store: SubscriberStore;
  readonly subscribe: () => Promise<SubscribeDeps>;
}

async function emailTarget(context: CommandContext): Promise<EmailTarget> {
  const target = await context.target();
  const names = target.names.email;
  if (names === undefined) {
    throw new NotFoundError(
      `${target.label} has no SES email: set emailDomain in cdk.json and deploy (docs/email.md); until then email subscribers are SNS email subscriptions (news-alerts subscriptions add <audienceId> --email <address>)`,
    );
  }
  const [{ loadEmailConfig }, wiring] = await Promise.all([
    import('../functions/email/config.ts'),
    import('../functions/email/wiring.ts'),
  ]);
  const config = loadEmailConfig(names.environment, 'events');
  const store = wiring.subscriberStoreOf(config, { dynamo: target.clients.dynamo });
  return {
    target,
    names,
    store,
    subscribe: async () => {
      const { SESv2Client } = await import('@aws-sdk/client-sesv2');
      const ses = new SESv2Client({ ...target.clients.config });
      const deps = wiring.createSubscribeDependencies(
        loadEmailConfig(names.environment, 'delivery'),
        { dynamo: target.clients.dynamo, ses, secrets: target.clients.secrets },
        silentLog,
      );
      const mailDir = names.mailDir;
      return mailDir === undefined ? deps : { ...deps, sender: mailDrop(deps.sender, mailDir) };
    },
  };
}

/** In the sandbox, every email the CLI sends is written as a `.eml` file beside the sandbox's own. */
function mailDrop(sender: EmailSender, dir: string): EmailSender {
  let count = 0;
  return {
    async send(email) {
      const result = await sender.send(email);
      count += 1;
      const name = `cli-${Date.now()}-${count}-${email.tags.audience ?? 'confirm'}-${email.tags.subscriber ?? 'unknown'}.eml`;
      writeFileSync(join(dir, name), email.raw);
      return result;
    },
  };
}

/** `--locale`: a locale the preference page speaks, in canonical form (checkShippedLocale). */
function pageLocale(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  const check = checkShippedLocale(value);
  if (!check.ok) throw new UsageError(`--locale ${check.message}; or leave it out to use each audience's language`);
  return check.locale;
}

/**
 * The address as stored. `position` (of several given) names which one is refused: the message
 * never repeats the value (it may hold anything), so in a list of fifty it must say where.
 */
function address(value: string, position?: { readonly index: number; readonly of: number }): string {
  try {
    return normalizeAddress(value);
  } catch (error) {
    if (!(error instanceof InvalidAddressError)) throw error;
    const which =
      position === undefined || position.of < 2
        ? ''
        : `address ${position.index + 1} of ${position.of}${/^[\x21-\x7e]+$/.test(value.trim()) ? ` (${maskAddress(value.trim())})` : ''}: `;
    // Only `email add` gives positions: its addresses are added all or none.
    throw new UsageError(`${which}${error.message}${position === undefined ? '' : '; nothing was added'}`, [], {
      cause: error,
    });
  }
}

/** The audience as the confirmation email names it. */
async function audienceLabel(target: Target, audienceId: string): Promise<{ label: AudienceLabel; topicArn: string }> {
  const item = await requireAudience(target, audienceId);
  const locale =
    typeof item.locale === 'string' ? item.locale : (target.names.email?.environment.DEFAULT_LOCALE ?? FALLBACK_LOCALE);
  return {
    label: {
      audienceId,
      label: typeof item.name === 'string' ? item.name : audienceId,
      locale,
      language: messageLocale(localeChain(locale, target.names.email?.environment.DEFAULT_LOCALE ?? FALLBACK_LOCALE)),
    },
    topicArn: topicArnOf(item, audienceId),
  };
}

/**
 * Subscribes the email queue to an audience topic (SNS returns the existing subscription when it
 * is there already), with the email dead-letter queue as its redrive policy on a stack.
 */
async function ensureQueueSubscribed(email: EmailTarget, topicArn: string): Promise<void> {
  await email.target.clients.sns.send(
    new SubscribeCommand({
      TopicArn: topicArn,
      Protocol: 'sqs',
      Endpoint: email.names.queueArn,
      ...(email.names.deadLetterQueueArn === undefined
        ? {}
        : { Attributes: { RedrivePolicy: JSON.stringify({ deadLetterTargetArn: email.names.deadLetterQueueArn }) } }),
    }),
  );
}

interface AddOptions {
  readonly locale?: string;
}

async function addAddresses(context: CommandContext, args: readonly unknown[], options: AddOptions): Promise<void> {
  const [audienceId, addresses] = args as [string, string[]];
  const normalized = addresses.map((value, index) => address(value, { index, of: addresses.length }));
  const locale = pageLocale(options.locale);
  const email = await emailTarget(context);
  const { label, topicArn } = await audienceLabel(email.target, audienceId);
  await ensureQueueSubscribed(email, topicArn);
  const deps = await email.subscribe();
  const rows: (Awaited<ReturnType<typeof addSubscriber>> & { address: string })[] = [];
  for (const value of normalized) {
    const outcome = await addSubscriber({ address: value, audience: label, locale }, deps);
    rows.push({ ...outcome, address: maskAddress(value) });
  }
  context.output.result(rows, () => {
    context.output.table(
      ['SUBSCRIBER', 'ADDRESS', 'STATE', 'CHANGE', 'CONFIRMATION'],
      rows.map((row) => [row.subscriberId, row.address, row.state, row.change, confirmationText(row)]),
    );
    context.output.note(
      'Pending addresses receive nothing until they confirm with the link in the confirmation email.',
    );
    if (rows.some((row) => row.state === 'pending' && !row.confirmationSent && !row.suppressed)) {
      context.output.note(
        'A confirmation goes out once a day per address and audience; the one sent earlier today still works.',
      );
    }
  });
}

/** What became of the confirmation email of one added address. */
function confirmationText(row: { state: string; confirmationSent: boolean; suppressed: boolean }): string {
  if (row.suppressed) return 'not sent: address suppressed';
  if (row.confirmationSent) return 'sent';
  return row.state === 'pending' ? 'not sent: one was sent today' : '-';
}

interface ListOptions {
  readonly all?: boolean;
}

async function listAddresses(context: CommandContext, args: readonly unknown[]): Promise<void> {
  const [audienceId] = args as [string];
  const email = await emailTarget(context);
  await requireAudience(email.target, audienceId);
  const members = await email.store.audienceMembers(audienceId);
  const profiles = await email.store.profiles(members.map((member) => member.subscriberId));
  const rows = members.map((member) => {
    const profile = profiles.get(member.subscriberId);
    return {
      subscriberId: member.subscriberId,
      address: profile === undefined ? '(deleted)' : maskAddress(profile.address),
      state: member.state,
      preference: member.preference,
      pausedUntil: member.pausedUntil === undefined ? null : new Date(member.pausedUntil).toISOString(),
      suppressed: profile?.suppression?.reason ?? null,
      source: member.source,
    };
  });
  context.output.result(rows, () =>
    context.output.table(
      ['SUBSCRIBER', 'ADDRESS', 'STATE', 'PREFERENCE', 'PAUSED UNTIL', 'SUPPRESSED', 'SOURCE'],
      rows.map((row) => [
        row.subscriberId,
        row.address,
        row.state,
        row.preference,
        row.pausedUntil ?? '',
        row.suppressed ?? '',
        row.source,
      ]),
      `audience ${audienceId} has no SES email subscribers`,
    ),
  );
}

/** The subscriber an argument names: an address, or a subscriber id as `list` shows it. */
async function findSubscriber(store: SubscriberStore, value: string): Promise<SubscriberProfile> {
  const found = /^[0-9a-f]{8,64}$/.test(value) ? await store.profile(value) : await store.findByAddress(address(value));
  if (found === undefined)
    throw new NotFoundError(`no SES email subscriber has that address or id (${hint('email list <audienceId>')})`);
  return found;
}

/**
 * Deletes everything of a subscriber: the address on SES's account-level suppression list first,
 * where a hard bounce or a complaint also put it (cli/ses-suppression.ts), then this project's
 * records. In that order, a refusal by SES leaves everything as it was and the command can be run
 * again (with the subscriber id, whose address no output shows); `keepSesSuppression` forgets the
 * records alone. The sandbox's SES keeps no such list.
 */
export async function forgetSubscriber(
  email: {
    readonly store: Pick<SubscriberStore, 'deleteSubscriber'>;
    readonly target: Pick<Target, 'kind' | 'clients'>;
  },
  profile: SubscriberProfile,
  options: { readonly ses?: SESv2Client; readonly keepSesSuppression?: boolean } = {},
): Promise<void> {
  if (email.target.kind === 'stack' && options.keepSesSuppression !== true) {
    const client =
      options.ses ?? new (await import('@aws-sdk/client-sesv2')).SESv2Client({ ...email.target.clients.config });
    try {
      await liftSesSuppression(client, profile.address);
    } catch (error) {
      if (!(error instanceof OperationFailedError)) throw error;
      throw new OperationFailedError(
        `nothing was forgotten: ${error.message}. Run it again once SES allows it, or add --keep-ses-suppression to delete subscriber ${profile.subscriberId}'s records alone (SES then keeps bouncing mail to the address)`,
      );
    }
  }
  await email.store.deleteSubscriber(profile.subscriberId);
}

interface RemoveOptions {
  readonly forget?: boolean;
  readonly keepSesSuppression?: boolean;
}

async function removeAddress(context: CommandContext, args: readonly unknown[], options: RemoveOptions): Promise<void> {
  if (options.keepSesSuppression && !options.forget) throw new UsageError('--keep-ses-suppression goes with --forget');
  const [audienceId, value] = args as [string, string];
  const email = await emailTarget(context);
  const profile = await findSubscriber(email.store, value);
  if (options.forget) {
    await forgetSubscriber(email, profile, { keepSesSuppression: options.keepSesSuppression === true });
    const lifted = email.target.kind === 'stack' && options.keepSesSuppression !== true;
    context.output.result({ subscriberId: profile.subscriberId, forgotten: true }, () =>
      context.output.line(
        `forgot subscriber ${profile.subscriberId}: its address, memberships and history are deleted${lifted ? ", and SES's account-level suppression list does not hold the address" : ''}`,
      ),
    );
    return;
  }
  const membership = await email.store.membership(profile.subscriberId, audienceId);
  if (membership === undefined)
    throw new NotFoundError(`subscriber ${profile.subscriberId} is not on audience ${audienceId}`);
  const { applyChange } = await import('#core/email/subscriber');
  const outcome = applyChange(membership, { kind: 'unsubscribe' }, Date.now());
  if (outcome.ok && outcome.changed) await email.store.saveMembership(outcome.membership);
  context.output.result(
    { subscriberId: profile.subscriberId, audienceId, state: 'unsubscribed', changed: outcome.ok && outcome.changed },
    () =>
      context.output.line(
        outcome.ok && outcome.changed
          ? `subscriber ${profile.subscriberId} is unsubscribed from ${audienceId}`
          : `subscriber ${profile.subscriberId} was already unsubscribed from ${audienceId}`,
      ),
  );
}

/** The membership an address has on an audience now, if any. */
async function currentMembership(store: SubscriberStore, address: string, audienceId: string) {
  const profile = await store.findByAddress(address);
  return profile === undefined ? undefined : await store.membership(profile.subscriberId, audienceId);
}

/** What a migration would make of one SNS email subscription (addSubscriber's rules, read-only). */
function migrationOutcome(
  existing: { state: string; unsubscribedAt?: number | undefined } | undefined,
  snsConfirmed: boolean,
): string {
  if (existing?.state === 'unsubscribed') {
    return 'stays unsubscribed (the subscriber left this audience; the SNS subscription is removed too)';
  }
  if (existing?.state === 'confirmed') return 'confirmed already (unchanged)';
  if (existing?.state === 'pending' && existing.unsubscribedAt !== undefined) {
    return 'stays pending (added again after an unsubscribe: it confirms by its own link)';
  }
  if (snsConfirmed) return 'confirmed';
  return existing?.state === 'pending' ? 'pending already (confirmation email)' : 'pending (confirmation email)';
}

interface MigrateOptions {
  readonly keepSns?: boolean;
  readonly dryRun?: boolean;
}

/** SNS email subscriptions: `email` (and `email-json`, which people read as JSON) protocols. */
const isSnsEmail = (subscription: Subscription) =>
  subscription.Protocol === 'email' || subscription.Protocol === 'email-json';
const isPending = (subscription: Subscription) => subscription.SubscriptionArn === 'PendingConfirmation';

async function migrateAudience(
  context: CommandContext,
  args: readonly unknown[],
  options: MigrateOptions,
): Promise<void> {
  const [audienceId] = args as [string];
  const email = await emailTarget(context);
  const { label, topicArn } = await audienceLabel(email.target, audienceId);
  const snsEmail = (await audienceSubscriptions(email.target, audienceId, topicArn)).filter(isSnsEmail);
  const problems: string[] = [];
  const plan = snsEmail.flatMap((subscription) => {
    try {
      return [
        { subscription, address: normalizeAddress(subscription.Endpoint ?? ''), confirmed: !isPending(subscription) },
      ];
    } catch (error) {
      problems.push(
        `an SNS email subscription (${subscription.SubscriptionArn?.split(':').at(-1) ?? 'pending'}) is skipped: ${(error as Error).message}`,
      );
      return [];
    }
  });
  if (options.dryRun) {
    const { store } = await email.subscribe();
    const rows = await Promise.all(
      plan.map(async (entry) => ({
        address: maskAddress(entry.address),
        becomes: migrationOutcome(await currentMembership(store, entry.address, audienceId), entry.confirmed),
      })),
    );
    context.output.result({ dryRun: true, rows, problems }, () => {
      context.output.table(
        ['ADDRESS', 'BECOMES'],
        rows.map((row) => [row.address, row.becomes]),
        `audience ${audienceId} has no SNS email subscriptions`,
      );
      for (const problem of problems) context.output.warn(problem);
      context.output.note('Dry run: nothing was changed.');
    });
    return;
  }
  await ensureQueueSubscribed(email, topicArn);
  const deps = await email.subscribe();
  const rows: {
    subscriberId: string;
    address: string;
    state: string;
    change: string;
    confirmationSent: boolean;
    snsRemoved: boolean;
  }[] = [];
  for (const entry of plan) {
    const outcome = await addSubscriber(
      { address: entry.address, audience: label, migration: { confirmed: entry.confirmed } },
      deps,
    );
    let snsRemoved = false;
    // Only once the SES member exists, so an interrupted migration never leaves an address on neither.
    if (!options.keepSns && entry.confirmed && entry.subscription.SubscriptionArn !== undefined) {
      await email.target.clients.sns.send(
        new UnsubscribeCommand({ SubscriptionArn: entry.subscription.SubscriptionArn }),
      );
      snsRemoved = true;
    }
    rows.push({
      subscriberId: outcome.subscriberId,
      address: maskAddress(entry.address),
      state: outcome.state,
      change: outcome.change,
      confirmationSent: outcome.confirmationSent,
      snsRemoved,
    });
  }
  // Said under --json too: it means every alert twice.
  const twice = rows.filter((row) => !row.snsRemoved && row.state === 'confirmed').length;
  if (options.keepSns && twice > 0) {
    context.output.warn(
      `${twice} confirmed address(es) kept their SNS email subscription: they get every alert twice, by SNS email and by SES email, until it is removed ('${hint(`email migrate ${audienceId}`)}' without --keep-sns removes it)`,
    );
  }
  context.output.result({ rows, problems }, () => {
    context.output.table(
      ['SUBSCRIBER', 'ADDRESS', 'STATE', 'CONFIRMATION', 'SNS SUBSCRIPTION'],
      rows.map((row) => [
        row.subscriberId,
        row.address,
        row.state,
        row.confirmationSent ? 'sent' : '-',
        row.snsRemoved ? 'removed' : 'kept',
      ]),
      `audience ${audienceId} has no SNS email subscriptions`,
    );
    for (const problem of problems) context.output.warn(problem);
    const kept = rows.filter((row) => row.change === 'kept-unsubscribed').length;
    if (kept > 0) {
      context.output.note(
        `${kept} address(es) had unsubscribed from this audience's email and stay unsubscribed${options.keepSns ? '' : ', and their SNS subscriptions were removed'}: the unsubscribe is taken as newer than their SNS subscription (SNS does not say when it was confirmed). If one of them subscribed again since, '${hint('email add')}' asks them again, with a new confirmation.`,
      );
    }
    context.output.note(
      'Confirmed SNS subscribers confirmed once already: they are confirmed SES subscribers now, without a new confirmation. Pending ones got the confirmation email and keep their SNS subscription until they confirm. Remove the addresses from the audience\'s "emails" in cdk.json too, or the next deploy subscribes them to SNS again.',
    );
  });
}

interface HistoryOptions {
  readonly limit: number;
}

async function showHistory(context: CommandContext, args: readonly unknown[], options: HistoryOptions): Promise<void> {
  const [value] = args as [string];
  const email = await emailTarget(context);
  const profile = await findSubscriber(email.store, value);
  const [memberships, history] = await Promise.all([
    email.store.memberships(profile.subscriberId),
    email.store.history(profile.subscriberId, { limit: options.limit }),
  ]);
  const document = {
    subscriberId: profile.subscriberId,
    address: maskAddress(profile.address),
    suppressed:
      profile.suppression === undefined
        ? null
        : { reason: profile.suppression.reason, at: new Date(profile.suppression.at).toISOString() },
    softBounces: profile.softBounces,
    memberships: memberships.map((membership) => ({
      audienceId: membership.audienceId,
      state: membership.state,
      preference: membership.preference,
      pausedUntil: membership.pausedUntil === undefined ? null : new Date(membership.pausedUntil).toISOString(),
      source: membership.source,
    })),
    history: history.map((record) => {
      // A held alert that its digest will not send says so (the rule the release applies).
      // One that went out in the subscriber's daily digest says which, and when; one a digest SES
      // refused carried, that it was not sent.
      const membership = memberships.find((entry) => entry.audienceId === record.audienceId);
      const { sentIn: carried, willNotBeSent } = afterHeld(record, history, profile, membership, Date.now());
      return {
        ...historyRow(record),
        willNotBeSent: willNotBeSent ?? null,
        sentInDigest:
          carried === undefined
            ? null
            : { deliveryId: carried.deliveryId, sentAt: new Date(carried.sentAt ?? 0).toISOString() },
      };
    }),
  };
  context.output.result(document, () => {
    context.output.fields([
      ['subscriber', profile.subscriberId],
      ['address', document.address],
      [
        'suppressed',
        document.suppressed === null
          ? 'no'
          : `${document.suppressed.reason} since ${formatInstant(profile.suppression?.at ?? 0)}`,
      ],
      ['soft bounces in a row', String(profile.softBounces)],
    ]);
    context.output.caption('Audiences');
    context.output.table(
      ['AUDIENCE', 'STATE', 'PREFERENCE', 'PAUSED UNTIL', 'SOURCE'],
      document.memberships.map((row) => [row.audienceId, row.state, row.preference, row.pausedUntil ?? '', row.source]),
    );
    context.output.caption(`History (newest first, at most ${options.limit})`);
    context.output.table(
      ['WHEN', 'AUDIENCE', 'KIND', 'STATUS', 'SUBJECT', 'EVENTS'],
      document.history.map((row) => [
        row.createdAt,
        row.audienceId,
        row.kind,
        row.sentInDigest !== null
          ? `${row.status}, then sent in the daily digest of ${formatInstant(Date.parse(row.sentInDigest.sentAt))}`
          : row.willNotBeSent === null
            ? row.status
            : `${row.status} (will not be sent: ${row.willNotBeSent})`,
        row.subject ?? '',
        row.events.map((event) => `${event.type}${event.detail ? ` (${event.detail})` : ''} ${event.at}`).join('; '),
      ]),
      'nothing was sent to this subscriber yet (records are kept 90 days)',
    );
  });
}

const historyRow = (record: SendRecord) => ({
  createdAt: new Date(record.createdAt).toISOString(),
  sentAt: record.sentAt === undefined ? null : new Date(record.sentAt).toISOString(),
  audienceId: record.audienceId,
  kind: record.kind,
  deliveryId: record.deliveryId,
  subject: record.subject,
  status: record.status,
  sesMessageId: record.providerMessageId ?? null,
  events: record.events.map((event) => ({
    type: event.type,
    at: new Date(event.at).toISOString(),
    detail: event.detail,
  })),
});

export function registerEmail(program: Command): void {
  const email = program
    .command('email')
    .description('SES email subscribers: add (double opt-in), list, remove, migrate from SNS email, history');

  email
    .command('add')
    .description('add addresses to an audience; each gets a confirmation email and receives alerts once it confirms')
    .argument('<audienceId>')
    .argument('<address...>')
    .option(
      '--locale <tag>',
      'language of the preference page for these addresses, also when they are on other audiences (default: the language of the audience whose email links to the page)',
    )
    .action(action(addAddresses));

  email
    .command('list')
    .description('the pending and confirmed SES email subscribers of an audience (addresses masked)')
    .argument('<audienceId>')
    .action(action<ListOptions>(listAddresses));

  email
    .command('remove')
    .description('unsubscribe an address (or subscriber id) from an audience; --forget deletes everything of it')
    .argument('<audienceId>')
    .argument('<address>', 'the address, or the subscriber id as list shows it')
    .option(
      '--forget',
      "delete the subscriber, its memberships of every audience and its history, and take the address off SES's account-level suppression list",
    )
    .option(
      '--keep-ses-suppression',
      "with --forget: leave SES's suppression list as it is (when SES refuses to change it: the command says so)",
    )
    .action(action(removeAddress));

  email
    .command('migrate')
    .description('move an audience’s SNS email subscribers to SES: confirmed ones without a new confirmation')
    .argument('<audienceId>')
    .option('--keep-sns', 'keep the SNS email subscriptions (the addresses then get both)')
    .option('--dry-run', 'show what would happen, change nothing')
    .action(action(migrateAudience));

  email
    .command('history')
    .description('status and delivery history of one subscriber: sent, delivered, bounced, complained, suppressed')
    .argument('<address>', 'the address, or the subscriber id as list shows it')
    .option('--limit <n>', 'newest records to show', integerOption(1, 1000), 50)
    .addHelpText(
      'after',
      `
Covers SES email (from SES's events through the configuration set). SMS, webhook and queue
deliveries are not in it: the stack does not turn on SNS delivery status logging (docs/email.md,
"Delivery status").`,
    )
    .action(action(showHistory));
}
