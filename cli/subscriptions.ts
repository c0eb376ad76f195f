/**
 * `news-alerts subscriptions …`: list, add, remove, pending, confirm.
 *
 * Subscribers subscribe to their audience's topic. Email owners are guided to confirm with
 * authenticated unsubscribe, so one click on an alert's unsubscribe link (or a mail scanner
 * "clicking" it) cannot drop a whole mailing list. A Slack webhook URL is a credential: it is read
 * from stdin or a hidden prompt (never from argv), kept in the webhook store (a few Secrets
 * Manager secrets, cli/webhook-store.ts) and never printed; the Slack relay is what subscribes to
 * the topic. `migrate-webhooks` moves a deployment that kept one secret per audience into the store.
 */
import {
  DeleteSecretCommand,
  GetSecretValueCommand,
  ListSecretsCommand,
  type SecretListEntry,
} from '@aws-sdk/client-secrets-manager';
import {
  ConfirmSubscriptionCommand,
  GetSubscriptionAttributesCommand,
  SubscribeCommand,
  type Subscription,
  UnsubscribeCommand,
} from '@aws-sdk/client-sns';
import type { Command } from 'commander';
import { DynamoSubscriberRecords, endpointDigest, type RecordedProtocol } from '#aws/dynamo-subscriber-records';
import { InvalidAddressError, normalizeAddress } from '#core/email/subscriber';
import { checkTargetUrl, isLoopbackHost } from '#shared/network-targets';
import { webhookShardName } from '#shared/slack-webhook-store';
import { audienceSubscriptions, requireAudience, topicArnOf } from './audience-topics.ts';
import { action } from './command.ts';
import type { CommandContext } from './context.ts';
import {
  endpointEntryName,
  endpointStorePrefixOf,
  forgetEndpoints,
  keepEndpoint,
  moveRecordedEndpoints,
} from './endpoint-store.ts';
import { NotFoundError, OperationFailedError, UsageError } from './errors.ts';
import { newsAlerts } from './hints.ts';
import { listItems } from './items.ts';
import { maskUrl } from './output.ts';
import type { LocalTarget, Target } from './target.ts';
import { hinted, hintFrom } from './unknown-ids.ts';
import { overfullShards, planWebhooks, removeWebhooks, storePrefixOf, storeWebhooks } from './webhook-store.ts';

/** E.164: `+`, country code, up to 15 digits. */
const phonePattern = /^\+[1-9]\d{6,14}$/;

/** What a person may see of a subscription endpoint: HTTPS endpoints are webhook URLs (credentials). */
export function displayEndpoint(subscription: Pick<Subscription, 'Protocol' | 'Endpoint'>): string {
  const endpoint = subscription.Endpoint ?? '';
  switch (subscription.Protocol) {
    case 'http':
    case 'https':
      return maskUrl(endpoint);
    case 'lambda':
    case 'sqs':
      return endpoint.split(':').at(-1) ?? endpoint;
    default:
      return endpoint;
  }
}

const isPending = (subscription: Subscription): boolean => subscription.SubscriptionArn === 'PendingConfirmation';

export interface SubscriptionRow {
  audienceId: string;
  protocol: string;
  endpoint: string;
  status: 'confirmed' | 'pending confirmation';
  subscriptionArn: string | undefined;
}

const rowOf = (audienceId: string, subscription: Subscription): SubscriptionRow => ({
  audienceId,
  protocol: subscription.Protocol ?? '',
  endpoint: displayEndpoint(subscription),
  status: isPending(subscription) ? 'pending confirmation' : 'confirmed',
  subscriptionArn: isPending(subscription) ? undefined : subscription.SubscriptionArn,
});

async function listSubscriptions(context: CommandContext, args: readonly unknown[]): Promise<void> {
  const [audienceId] = args as [string];
  const target = await context.target();
  const topicArn = topicArnOf(await requireAudience(target, audienceId), audienceId);
  const rows = (await audienceSubscriptions(target, audienceId, topicArn)).map((subscription) =>
    rowOf(audienceId, subscription),
  );
  context.output.result(rows, () =>
    context.output.table(
      ['PROTOCOL', 'ENDPOINT', 'STATUS', 'SUBSCRIPTION ID'],
      // The id is the ARN's last part; `remove` takes it, the full ARN (--json) or the endpoint.
      rows.map((row) => [row.protocol, row.endpoint, row.status, row.subscriptionArn?.split(':').at(-1) ?? '']),
      `audience ${audienceId} has no subscriptions`,
    ),
  );
}

/** The subscriptions of an audience still waiting for confirmation (SNS lists them without an ARN). */
export const pendingRows = (audienceId: string, subscriptions: readonly Subscription[]): SubscriptionRow[] =>
  subscriptions.filter(isPending).map((subscription) => rowOf(audienceId, subscription));

async function pendingSubscriptions(context: CommandContext, args: readonly unknown[]): Promise<void> {
  const [audienceId] = args as [string | undefined];
  const target = await context.target();
  const audiences =
    audienceId === undefined
      ? await listItems(target.clients.documents, {
          tableName: target.names.audiencesTable,
          keyName: 'audienceId',
          noun: 'audience',
        })
      : [await requireAudience(target, audienceId)];
  // One broken audience (a topic gone or in another account) must not hide the others: each
  // failure is reported with its reason, the rest is listed, and the exit code says "not all".
  const rows: SubscriptionRow[] = [];
  const failures: { audienceId: string; reason: string }[] = [];
  for (const audience of audiences) {
    const id = typeof audience.audienceId === 'string' ? audience.audienceId : '<missing audienceId>';
    if (typeof audience.topicArn !== 'string' || audience.topicArn === '') {
      failures.push({
        audienceId: id,
        reason: `has no topicArn (${newsAlerts()} audiences update ${id} --topic-arn <arn>)`,
      });
      continue;
    }
    try {
      rows.push(...pendingRows(id, await audienceSubscriptions(target, id, audience.topicArn)));
    } catch (error) {
      if (!(error instanceof OperationFailedError)) throw error;
      failures.push({ audienceId: id, reason: error.message.replace(`audience ${id}: `, '') });
    }
  }
  context.output.result(rows, () => {
    context.output.table(
      ['AUDIENCE', 'PROTOCOL', 'ENDPOINT'],
      rows.map((row) => [row.audienceId, row.protocol, row.endpoint]),
      failures.length > 0
        ? 'no subscriptions of the readable audiences are waiting for confirmation'
        : 'no subscriptions are waiting for confirmation',
    );
    if (rows.some((row) => row.protocol === 'email'))
      context.output.caption(emailConfirmHint('<audienceId>', '<topic ARN>'));
  });
  for (const failure of failures) context.output.note(`audience ${failure.audienceId}: ${failure.reason}`);
  if (failures.length > 0) {
    throw new OperationFailedError(
      `${failures.length} of ${audiences.length} audience(s) could not be checked (${failures.map((failure) => failure.audienceId).join(', ')}); the others are listed above`,
    );
  }
}

/**
 * How long a confirmation token is valid, and an unconfirmed subscription kept: two days, as AWS's
 * Subscribe and ConfirmSubscription documentation says (an older SDK page said three).
 */
export const confirmationLifetime = 'two days';

const emailConfirmHint = (audienceId: string, topicArn: string): string =>
  `Confirm email subscriptions with authenticated unsubscribe, so that a link scanner or one click on
"unsubscribe" in any alert cannot remove the address (or a whole mailing list): do not open the
confirmation link; copy its Token parameter and run
  ${newsAlerts()} subscriptions confirm ${audienceId} --token <Token>
or
  aws sns confirm-subscription --topic-arn ${topicArn} --token <Token> --authenticate-on-unsubscribe true
Tokens expire after ${confirmationLifetime}.`;

/**
 * In the sandbox, the queue `--sqs` names must exist: moto fails every PublishBatch to a topic
 * that has a subscribed queue it does not have (an empty answer, no entry sent or failed), so one
 * such subscription would park every alert of the audience. On AWS, SNS delivers to the other
 * subscribers and counts the failed deliveries; a queue of another account cannot be looked at
 * from here anyway, so a stack is not checked.
 */
async function requireSandboxQueue(target: LocalTarget, queueArn: string): Promise<void> {
  const [, , , region = '', , name = ''] = queueArn.split(':');
  // Looked for where SNS delivers: the ARN's region (moto keeps each region apart, and takes the
  // queue from the sandbox's one account whatever account the ARN names).
  const { SQSClient, GetQueueUrlCommand, QueueDoesNotExist } = await import('@aws-sdk/client-sqs');
  const sqs = new SQSClient({ ...target.clients.config, region });
  try {
    await sqs.send(new GetQueueUrlCommand({ QueueName: name }));
  } catch (error) {
    if (
      error instanceof QueueDoesNotExist ||
      (error as { name?: unknown }).name === 'AWS.SimpleQueueService.NonExistentQueue'
    ) {
      throw new UsageError(
        `--sqs: the sandbox has no queue ${name} in ${region}; its SNS fails every publish to a topic with a subscribed queue it does not have, so nothing was subscribed (see the sandbox's queues with 'aws --endpoint-url ${target.descriptor.endpoint} --region ${region} sqs list-queues')`,
      );
    }
    throw error;
  } finally {
    sqs.destroy();
  }
}

/** An SQS queue ARN: `arn:<partition>:sqs:<region>:<account>:<name>`. */
const queueArnPattern = /^arn:aws[a-z-]*:sqs:[a-z0-9-]+:\d{12}:[A-Za-z0-9_-]{1,80}(\.fifo)?$/;

/**
 * A subscription confirmation token as SNS issues it (the Token parameter of the link): a long
 * hexadecimal string. Anything else is a copy-paste slip, refused before SNS is asked.
 */
const tokenPattern = /^[0-9a-f]{32,2048}$/i;

interface AddOptions {
  email?: string;
  sms?: string;
  https?: string;
  sqs?: string;
  slackWebhook?: boolean;
  raw?: boolean;
  allowInternalTarget?: boolean;
}

/**
 * `--email` as SNS gets it: as strict as SES email (email add), plain ASCII addresses only, so no
 * control character, quote or second recipient reaches SNS, the records or a terminal.
 * @throws UsageError saying what is wrong, without repeating the value
 */
function emailAddressOf(value: string): string {
  try {
    return normalizeAddress(value);
  } catch (error) {
    if (!(error instanceof InvalidAddressError)) throw error;
    throw new UsageError(`--email: ${error.message}`, [], { cause: error });
  }
}

async function addSubscription(context: CommandContext, args: readonly unknown[], given: AddOptions): Promise<void> {
  const [audienceId, extra] = args as [string, string | undefined];
  // `--https -`: the URL from stdin or a hidden prompt, kept out of the process list and shell
  // history (a webhook URL that carries a token is a credential), as --slack-webhook reads its URL.
  const read =
    given.https === '-' ? { ...given, https: await context.readSecret('HTTPS endpoint URL (input hidden): ') } : given;
  // The address as SES email keeps it (normalizeAddress: trimmed, the domain lower-cased) is what
  // SNS, the record and the terminal get: a line break or invisible character around it never does.
  const options = read.email === undefined ? read : { ...read, email: emailAddressOf(read.email) };
  if (options.https === '') throw new UsageError('--https -: no URL given: pipe it on stdin or type it at the prompt');
  if (extra !== undefined) {
    // Not quoted: it may well be the webhook URL, a bearer credential for the channel.
    throw new UsageError(
      options.slackWebhook
        ? `the Slack webhook URL is read from stdin or a hidden prompt, never from the command line (the process list and shell history keep arguments): pbpaste | ${newsAlerts()} subscriptions add <audienceId> --slack-webhook`
        : 'too many arguments: give one audience id, and the subscriber with --email, --sms, --https, --sqs or --slack-webhook',
    );
  }
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(audienceId)) {
    // Most likely `add --slack-webhook <url>` without the audience: the URL is a credential, so it
    // is neither looked up nor quoted.
    throw new UsageError(
      `the audience id is a URL; give the audience id first (${newsAlerts()} subscriptions add <audienceId> …); a Slack webhook URL is read from stdin or a hidden prompt, never from the command line`,
    );
  }
  const chosen = (['email', 'sms', 'https', 'sqs', 'slackWebhook'] as const).filter(
    (kind) => options[kind] !== undefined,
  );
  if (chosen.length !== 1) {
    throw new UsageError(
      'give exactly one of --email <address>, --sms <E.164 number>, --https <url>, --sqs <queueArn>, --slack-webhook',
    );
  }
  if (options.sqs !== undefined && !queueArnPattern.test(options.sqs)) {
    throw new UsageError(
      `--sqs: "${options.sqs}" is not an SQS queue ARN such as arn:aws:sqs:us-east-1:123456789012:news-alerts-reader`,
    );
  }
  if (options.sms !== undefined && !phonePattern.test(options.sms)) {
    throw new UsageError(`--sms: "${options.sms}" is not an E.164 phone number such as +821012345678`);
  }
  const https =
    options.https === undefined
      ? undefined
      : requireTarget(options.https, '--https', options.allowInternalTarget === true);
  if (options.raw && options.https === undefined && options.sqs === undefined) {
    throw new UsageError('--raw only applies to --https and --sqs');
  }
  if (options.allowInternalTarget && options.https === undefined && !options.slackWebhook) {
    throw new UsageError('--allow-internal-target only applies to --https and --slack-webhook');
  }

  const target = await context.target();
  if (https !== undefined && target.kind === 'local' && !isLoopbackHost(https.hostname)) {
    // moto posts to an HTTP(S) subscriber itself, from this machine, inside every Publish (a failing
    // one is logged and dropped, sandbox/moto-server.py), and nothing here may send to a host off
    // this machine.
    throw new UsageError(
      `--https: the sandbox's SNS posts to an https subscriber from this machine, during every publish, so it must be a receiver on this machine (https://127.0.0.1:<port>/..., with ${allowInternalFlag}); ${https.hostname} is not a loopback host; nothing was subscribed`,
    );
  }
  const topicArn = topicArnOf(await requireAudience(target, audienceId), audienceId);
  if (options.sqs !== undefined && target.kind === 'local') await requireSandboxQueue(target, options.sqs);
  // Read first: a topic that is gone is named with its repair (audienceTopicError) before anything
  // is written, the webhook store included.
  const existing = await audienceSubscriptions(target, audienceId, topicArn);
  if (options.slackWebhook) {
    await addSlack(context, target, audienceId, topicArn, options.allowInternalTarget === true);
    return;
  }
  const protocol =
    options.email !== undefined
      ? 'email'
      : options.sms !== undefined
        ? 'sms'
        : options.sqs !== undefined
          ? 'sqs'
          : 'https';
  const endpoint = options.email ?? options.sms ?? options.sqs ?? options.https ?? '';
  // Only a confirmed one: subscribing a pending endpoint again is how SNS re-sends its confirmation.
  const same = existing.find(
    (subscription) =>
      subscription.Protocol === protocol && subscription.Endpoint === endpoint && !isPending(subscription),
  );
  if (same !== undefined) {
    await alreadySubscribed(context, target, audienceId, same, options.raw === true);
    return;
  }
  // An HTTPS URL is a credential: it is kept in the endpoint store, and its record refers to it.
  // Stored first: if the store cannot be written, nothing is subscribed.
  const kept = protocol === 'https' ? await keepEndpoint(target, audienceId, endpoint) : undefined;
  const deadLetters = target.names.deliveryDeadLetterQueueArn;
  const attributes: Record<string, string> = {};
  if (deadLetters) attributes.RedrivePolicy = JSON.stringify({ deadLetterTargetArn: deadLetters });
  if (options.raw) attributes.RawMessageDelivery = 'true';
  let SubscriptionArn: string | undefined;
  try {
    ({ SubscriptionArn } = await target.clients.sns.send(
      new SubscribeCommand({
        TopicArn: topicArn,
        Protocol: protocol,
        Endpoint: endpoint,
        ReturnSubscriptionArn: true,
        ...(Object.keys(attributes).length > 0 ? { Attributes: attributes } : {}),
      }),
    ));
  } catch (error) {
    // Not subscribed: the URL just stored is kept for nothing, unless a pending subscription of
    // the same endpoint (added earlier, its record referring to it) still needs it.
    const pending = existing.some(
      (subscription) => subscription.Protocol === 'https' && subscription.Endpoint === endpoint,
    );
    if (kept !== undefined && !pending) await forgetStoredEndpoint(context, target, audienceId, kept.endpointRef);
    throw error;
  }
  const shown = displayEndpoint({ Protocol: protocol, Endpoint: endpoint });
  const status = await subscriptionStatus(target, SubscriptionArn);
  // Kept so 'audiences repair' can subscribe it again if the topic is ever deleted.
  await subscriberRecordsOf(target).add({
    audienceId,
    protocol,
    ...(kept ?? { endpoint }),
    ...(options.raw ? { raw: true } : {}),
    addedAt: Date.now(),
    addedBy: await context.actor(),
  });
  context.output.result({ audienceId, protocol, endpoint: shown, subscriptionArn: SubscriptionArn, status }, () => {
    context.output.line(`subscribed ${protocol} ${shown} to ${audienceId}: ${status}`);
    if (protocol === 'email' && status === 'confirmed') {
      // moto (the sandbox) confirms at once and sends no email; AWS does not.
      context.output.line(
        target.kind === 'local'
          ? 'The sandbox confirmed it at once: no confirmation email is sent, and alerts go to it from the next run. On a deployed stack SNS first emails a confirmation link:'
          : 'SNS reports it confirmed already (the address was subscribed and confirmed before).',
      );
      if (target.kind === 'local') context.output.line(emailConfirmHint(audienceId, topicArn));
    } else if (protocol === 'email') {
      context.output.line(`SNS is sending a confirmation email to ${endpoint}; alerts reach it once it is confirmed.`);
      context.output.line(emailConfirmHint(audienceId, topicArn));
    } else if (protocol === 'sqs') {
      context.output.line(sqsPolicyHint(topicArn, endpoint, target.names.audienceTopicKeyArn));
    } else if (protocol === 'https') {
      context.output.line(
        target.kind === 'local'
          ? "The sandbox's moto confirms it itself (AWS posts a SubscriptionConfirmation the endpoint must visit); it trusts only .sandbox/sandbox-cli-ca.pem, and a post it cannot make is logged in .sandbox/sandbox.log (docs/sandbox.md). Alerts carry newsAlerts.deliveryId to de-duplicate on."
          : 'The endpoint receives a SubscriptionConfirmation POST and must visit its SubscribeURL (or confirm with its Token); alerts carry newsAlerts.deliveryId to de-duplicate on.',
      );
    } else {
      context.output.line('SMS needs no confirmation (in the SNS SMS sandbox only verified numbers receive texts).');
    }
  });
}

/**
 * The endpoint is subscribed to the topic already, confirmed. SNS would hand back the same
 * subscription (and AWS refuses other attributes for it), so nothing is written: the same settings
 * are reported as they are, and another raw-delivery setting is refused with how to change it.
 */
async function alreadySubscribed(
  context: CommandContext,
  target: Target,
  audienceId: string,
  subscription: Subscription,
  raw: boolean,
): Promise<void> {
  const arn = subscription.SubscriptionArn;
  let rawNow = false;
  if (arn !== undefined && !isPending(subscription)) {
    const { Attributes } = await target.clients.sns.send(
      new GetSubscriptionAttributesCommand({ SubscriptionArn: arn }),
    );
    rawNow = Attributes?.RawMessageDelivery === 'true';
  }
  const shown = displayEndpoint(subscription);
  const id = arn?.split(':').at(-1) ?? '';
  if (rawNow !== raw && (subscription.Protocol === 'https' || subscription.Protocol === 'sqs')) {
    throw new UsageError(
      `${subscription.Protocol} ${shown} is subscribed to ${audienceId} already, ${rawNow ? 'with' : 'without'} --raw; to change that, remove it first (${newsAlerts()} subscriptions remove ${audienceId} ${id}) and add it again; nothing was changed`,
    );
  }
  const status = 'confirmed';
  context.output.result(
    { audienceId, protocol: subscription.Protocol, endpoint: shown, subscriptionArn: arn, status, unchanged: true },
    () =>
      context.output.line(
        `${subscription.Protocol} ${shown} is subscribed to ${audienceId} already (${status}); nothing was changed`,
      ),
  );
}

/** Takes one endpoint out of the endpoint store; a failure is a warning naming the entry to take out by hand. */
async function forgetStoredEndpoint(
  context: CommandContext,
  target: Target,
  audienceId: string,
  endpointRef: string,
): Promise<void> {
  const store = endpointStorePrefixOf(target);
  if (store === undefined) return;
  try {
    await forgetEndpoints(target.clients.secrets, store, audienceId, [endpointRef]);
  } catch (error) {
    context.output.warn(
      `the endpoint's URL could not be taken out of the endpoint store (${error instanceof Error ? error.name : 'error'}); take out by hand: ${endpointEntryName(store, audienceId, endpointRef)}`,
    );
  }
}

/**
 * What SNS says of a subscription just made: confirmed, or pending confirmation (email and
 * HTTPS subscribers confirm through a link or token; SQS, SMS and moto's subscriptions are
 * confirmed at once).
 */
async function subscriptionStatus(
  target: Target,
  subscriptionArn: string | undefined,
): Promise<'confirmed' | 'pending confirmation'> {
  if (subscriptionArn === undefined || subscriptionArn === '' || /pending/i.test(subscriptionArn)) {
    return 'pending confirmation';
  }
  try {
    const { Attributes } = await target.clients.sns.send(
      new GetSubscriptionAttributesCommand({ SubscriptionArn: subscriptionArn }),
    );
    return Attributes?.PendingConfirmation === 'true' ? 'pending confirmation' : 'confirmed';
  } catch {
    // No attributes to read yet (AWS can answer NotFound right after a pending subscribe).
    return 'pending confirmation';
  }
}

/** What an SQS subscriber's queue must allow before SNS can deliver to it. */
function sqsPolicyHint(topicArn: string, queueArn: string, keyArn: string | undefined): string {
  const statement = {
    Effect: 'Allow',
    Principal: { Service: 'sns.amazonaws.com' },
    Action: 'sqs:SendMessage',
    Resource: queueArn,
    Condition: { ArnEquals: { 'aws:SourceArn': topicArn } },
  };
  return `The queue's access policy must let the topic send to it (SNS drops what it may not deliver):
${JSON.stringify(statement, null, 2)}${
  keyArn
    ? `\nIf the queue is encrypted with a customer managed KMS key, that key policy must let sns.amazonaws.com use it too.`
    : ''
}
Read what it received with: aws sqs receive-message --queue-url <queue URL> --max-number-of-messages 10`;
}

/** The override's flag, named in refusals so the fix is one copy away. */
const allowInternalFlag = '--allow-internal-target';

/**
 * Longest webhook URL taken (Slack's are about 80 characters). A longer one is a paste gone wrong,
 * and one Slack URL of 60 KB would fill a whole shard of the webhook store by itself.
 */
export const maxWebhookUrlLength = 2_048;

/**
 * Why a webhook URL cannot be stored or subscribed as it is, or undefined: a character that is not
 * printable ASCII (a URL as a service shows it never has one; anything else would be percent-encoded
 * into a URL that answers 404 forever, or break SNS's XML), or more than {@link maxWebhookUrlLength}.
 * Says where, never what: the URL is a credential.
 */
export function webhookUrlProblem(url: string): string | undefined {
  const odd = url.search(/[^\x21-\x7e]/);
  if (odd !== -1) {
    return `has a space, control or non-ASCII character (character ${odd + 1}); paste it exactly as the service shows it`;
  }
  if (url.length > maxWebhookUrlLength) {
    return `is ${url.length} characters long, more than the ${maxWebhookUrlLength} a webhook URL can be; paste it again, exactly as the service shows it`;
  }
  return undefined;
}

/** Why a target check failed, in the words of the refusals above, or undefined when it passed. */
const checkUsable = (check: ReturnType<typeof checkTargetUrl>): string | undefined =>
  check.ok ? undefined : check.reason;

/**
 * What `subscriptions remove` echoes of the subscription it was given: an ARN or id as it is, and
 * anything else (a URL in any spelling, a value with spaces) masked, since an endpoint can be a
 * credential.
 */
function subscriptionNamed(which: string): string {
  const given = which.trim();
  // An ARN, or a subscription id as `subscriptions list` shows it (a UUID): nothing secret.
  if (
    /^(arn:aws[a-z-]*:sns:[A-Za-z0-9:_.-]+|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/i.test(given)
  ) {
    return given;
  }
  // A URL's path and query may be its secret: the scheme and host only.
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(given)) return `${maskUrl(given)} (the URL given, masked)`;
  // An email address or phone number, as typed at this terminal (printed escaped).
  if (!given.includes('/')) return JSON.stringify(given);
  return '(not shown: what was given is no id, ARN, address or URL, and may hold a secret)';
}

/**
 * A subscriber URL under the target-address policy (functions/shared/network-targets.ts):
 * https://, no credentials, and a public host unless `--allow-internal-target` says otherwise.
 * Messages name the host only: the path and query of a webhook URL are its secret.
 */
function requireTarget(value: string, what: string, allowInternal: boolean): URL {
  const problem = webhookUrlProblem(value);
  if (problem !== undefined) throw new UsageError(`${what}: the URL ${problem}; nothing was subscribed`);
  const check = checkTargetUrl(value, { allowInternal });
  if (check.ok) return check.url;
  const hint = check.internal ? ` (pass ${allowInternalFlag} only for a local test receiver)` : '';
  throw new UsageError(`${what}: ${check.reason}${hint}; nothing was subscribed`);
}

/**
 * An audience whose webhook stays in a secret of its own (cdk.json `slack.webhookSecretArn`) is
 * posted to from that secret, whatever the webhook store holds: a URL stored there would be
 * reported as stored and never used. Its webhook is rotated in its own secret.
 */
export async function refuseOwnWebhookSecret(
  context: CommandContext,
  target: Target,
  audienceId: string,
): Promise<void> {
  if (target.kind !== 'stack') return;
  let own: Readonly<Record<string, string>>;
  try {
    own = await target.slackOwnWebhookSecrets();
  } catch (error) {
    context.output.warn(
      `could not read the Slack relay's settings (${error instanceof Error ? error.name : String(error)}; lambda:GetFunctionConfiguration on the relay): if cdk.json gives ${audienceId} slack.webhookSecretArn, the relay reads that secret, not the URL stored now`,
    );
    return;
  }
  const secretArn = own[audienceId];
  if (secretArn === undefined) return;
  throw new UsageError(
    `audience ${audienceId} keeps its Slack webhook in a secret of its own (cdk.json slack.webhookSecretArn), which the relay reads: change the URL there (aws secretsmanager put-secret-value --secret-id ${secretArn} --secret-string <url>); nothing was stored`,
  );
}

/** Stores the webhook URL in the webhook store and subscribes the relay to the topic. */
async function addSlack(
  context: CommandContext,
  target: Target,
  audienceId: string,
  topicArn: string,
  allowInternal: boolean,
): Promise<void> {
  const prefix = storePrefixOf(target.names);
  if (!prefix) throw new NotFoundError(`${target.label} has no SlackWebhookStorePrefix output`);
  await refuseOwnWebhookSecret(context, target, audienceId);
  const url = await context.readSecret('Slack incoming-webhook URL (input hidden): ');
  if (url === '') throw new UsageError('no webhook URL given: pipe it on stdin or type it at the prompt');
  const problem = webhookUrlProblem(url);
  if (problem !== undefined) throw new UsageError(`the webhook URL ${problem}; it was not stored`);
  // Checked without ever echoing the URL: it is a bearer credential for the channel. The relay
  // posts to it from inside AWS, so an internal host is refused, not merely warned about.
  const check = checkTargetUrl(url, { allowInternal });
  if (!check.ok) {
    const reason = check.reason === 'is not a URL' ? 'is not a URL' : check.reason;
    const hint = check.internal ? ` (pass ${allowInternalFlag} only for a local test receiver)` : '';
    throw new UsageError(`the webhook URL ${reason}${hint}; it was not stored`);
  }
  if (check.url.hostname !== 'hooks.slack.com') {
    context.output.warn(`the webhook URL's host is ${check.url.hostname}, not hooks.slack.com; storing it anyway`);
  }
  const { secrets, sns } = target.clients;
  // Only this audience's entry changes; the others in its shard are kept as they are.
  const stored = await storeWebhooks(secrets, prefix, new Map([[audienceId, url]]));
  const secretId = webhookShardName(prefix, audienceId);
  const action: 'stored' | 'unchanged' = stored.stored.length > 0 ? 'stored' : 'unchanged';

  let subscriptionArn: string | undefined;
  let relay: string;
  if (target.names.slackRelayFunctionArn) {
    const deadLetters = target.names.slackRelayDeadLetterQueueArn;
    ({ SubscriptionArn: subscriptionArn } = await sns.send(
      new SubscribeCommand({
        TopicArn: topicArn,
        Protocol: 'lambda',
        Endpoint: target.names.slackRelayFunctionArn,
        ReturnSubscriptionArn: true,
        ...(deadLetters ? { Attributes: { RedrivePolicy: JSON.stringify({ deadLetterTargetArn: deadLetters }) } } : {}),
      }),
    ));
    relay = target.names.slackRelayFunctionArn.split(':').at(-1) ?? 'the Slack relay';
  } else if (target.names.slackStandInQueuePrefix) {
    subscriptionArn = await subscribeStandInQueue(
      target,
      `${target.names.slackStandInQueuePrefix}${audienceId}`,
      topicArn,
    );
    relay = 'the sandbox’s Slack stand-in queue';
  } else {
    throw new NotFoundError(
      `${target.label} has no SlackRelayFunctionArn output; the webhook was stored in ${secretId} but nothing subscribes it`,
    );
  }
  await subscriberRecordsOf(target).add({
    audienceId,
    protocol: 'slack',
    addedAt: Date.now(),
    addedBy: await context.actor(),
  });
  context.output.result(
    { audienceId, protocol: 'slack', secretId, secretAction: action, webhook: maskUrl(url), subscriptionArn },
    () => {
      context.output.line(
        action === 'stored'
          ? `stored the webhook URL (${maskUrl(url)}) for ${audienceId} in ${secretId}`
          : `${secretId} already held this webhook URL (${maskUrl(url)}) for ${audienceId}`,
      );
      context.output.line(`subscribed ${relay} to ${audienceId}'s topic`);
    },
  );
}

/** The sandbox has no relay Lambda: an SQS queue subscribed with raw delivery stands in, as in `npm start`. */
export async function subscribeStandInQueue(
  target: Target,
  queueName: string,
  topicArn: string,
): Promise<string | undefined> {
  const { SQSClient, CreateQueueCommand, GetQueueAttributesCommand } = await import('@aws-sdk/client-sqs');
  const sqs = new SQSClient({ ...target.clients.config });
  try {
    const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: queueName }));
    const { Attributes } = await sqs.send(new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ['QueueArn'] }));
    const { SubscriptionArn } = await target.clients.sns.send(
      new SubscribeCommand({
        TopicArn: topicArn,
        Protocol: 'sqs',
        Endpoint: Attributes?.QueueArn,
        ReturnSubscriptionArn: true,
        Attributes: { RawMessageDelivery: 'true' },
      }),
    );
    return SubscriptionArn;
  } finally {
    sqs.destroy();
  }
}

async function removeSubscription(
  context: CommandContext,
  args: readonly unknown[],
  options: { yes?: boolean },
): Promise<void> {
  const [audienceId, given] = args as [string, string];
  // `-`: the subscription from stdin or a hidden prompt, as `subscriptions add --https -` reads
  // the URL: an endpoint URL that carries a token stays out of the process list and shell history.
  const which = given === '-' ? await context.readSecret('subscription id, ARN or endpoint (input hidden): ') : given;
  if (which === '') {
    throw new UsageError('-: no subscription given: pipe its id, ARN or endpoint on stdin or type it at the prompt');
  }
  const target = await context.target();
  const topicArn = topicArnOf(await requireAudience(target, audienceId), audienceId);
  const subscriptions = await audienceSubscriptions(target, audienceId, topicArn);
  const matches = subscriptions.filter(
    (subscription) =>
      subscription.SubscriptionArn === which ||
      subscription.Endpoint === which ||
      // A queue as `subscriptions list` shows it: its name.
      (subscription.Protocol === 'sqs' && displayEndpoint(subscription) === which) ||
      (subscription.SubscriptionArn !== undefined &&
        !isPending(subscription) &&
        subscription.SubscriptionArn.endsWith(`:${which}`)),
  );
  if (matches.length === 0) {
    throw new NotFoundError(
      `audience ${audienceId} has no subscription ${subscriptionNamed(which)} (${newsAlerts()} subscriptions list ${audienceId})`,
    );
  }
  // A queue name alone can be two queues (other accounts or regions): which one is meant is not
  // guessed, and both are not removed.
  if (matches.length > 1 && matches.every((subscription) => subscription.Endpoint !== which)) {
    throw new UsageError(
      `${subscriptionNamed(which)} names ${matches.length} subscriptions of ${audienceId}; give the queue ARN or the subscription id of the one to remove (${newsAlerts()} subscriptions list ${audienceId})`,
    );
  }
  const confirmed = matches.filter((subscription) => !isPending(subscription));
  if (confirmed.length === 0) {
    throw new UsageError(
      `that subscription is still pending confirmation and has no ARN to remove; SNS deletes unconfirmed subscriptions after ${confirmationLifetime}`,
    );
  }
  await context.confirm(
    `Unsubscribe ${confirmed.map((subscription) => `${subscription.Protocol} ${displayEndpoint(subscription)}`).join(', ')} from ${audienceId}?`,
    options.yes,
  );
  const records = subscriberRecordsOf(target);
  for (const subscription of confirmed) {
    await target.clients.sns.send(new UnsubscribeCommand({ SubscriptionArn: subscription.SubscriptionArn }));
    await records.remove(audienceId, ...recordedAs(target, subscription));
  }
  const rows = confirmed.map((subscription) => rowOf(audienceId, subscription));
  // An HTTPS endpoint's URL leaves the endpoint store with its subscription. A failure is a
  // warning: the unsubscribe is done.
  const endpointStore = endpointStorePrefixOf(target);
  let refs = confirmed
    .filter((subscription) => subscription.Protocol === 'https')
    .map((subscription) => endpointDigest(subscription.Endpoint));
  if (endpointStore !== undefined && refs.length > 0) {
    try {
      // Read again just before, as for Slack: the same endpoint subscribed again meanwhile keeps its URL.
      const remaining = new Set(
        (await audienceSubscriptions(target, audienceId, topicArn))
          .filter((subscription) => subscription.Protocol === 'https')
          .map((subscription) => endpointDigest(subscription.Endpoint)),
      );
      refs = refs.filter((ref) => !remaining.has(ref));
      await forgetEndpoints(target.clients.secrets, endpointStore, audienceId, refs);
    } catch (error) {
      context.output.warn(
        `the HTTPS subscription is removed, but its URL could not be taken out of the endpoint store (${error instanceof Error ? error.name : 'error'}); take out by hand: ${refs.map((ref) => endpointEntryName(endpointStore, audienceId, ref)).join(', ')}`,
      );
    }
  }
  // The audience's Slack webhook goes with its last Slack subscription: a URL nobody posts to is a
  // credential kept for nothing, and room taken in its shard.
  // The topic is read again just before: a Slack subscription added meanwhile (a URL being
  // replaced) keeps its webhook. A failure here is a warning, since the unsubscribe is done.
  const isSlack = (subscription: Subscription) => recordedAs(target, subscription)[0] === 'slack';
  const store = storePrefixOf(target.names);
  let webhookRemoved: string | undefined;
  if (store && confirmed.some(isSlack)) {
    try {
      const remaining = await audienceSubscriptions(target, audienceId, topicArn);
      if (!remaining.some(isSlack)) {
        const outcome = await removeWebhooks(target.clients.secrets, store, [audienceId]);
        if (outcome.removed.length > 0) webhookRemoved = webhookShardName(store, audienceId);
      }
    } catch (error) {
      context.output.warn(
        `the Slack subscription is removed, but its webhook URL could not be taken out of the webhook store (${error instanceof Error ? error.name : 'error'}); take the entry ${audienceId} out of ${webhookShardName(store, audienceId)} by hand`,
      );
    }
  }
  context.output.result({ audienceId, removed: rows, webhookRemovedFrom: webhookRemoved ?? null }, () => {
    for (const row of rows) context.output.line(`unsubscribed ${row.protocol} ${row.endpoint} from ${audienceId}`);
    if (webhookRemoved !== undefined) {
      context.output.line(`the audience's Slack webhook URL was removed from the webhook store (${webhookRemoved})`);
    }
  });
}

async function confirmSubscription(
  context: CommandContext,
  args: readonly unknown[],
  options: { token: string },
): Promise<void> {
  const [audienceId] = args as [string];
  const token = options.token.trim();
  if (!tokenPattern.test(token)) {
    throw new UsageError(
      `--token "${token.length > 40 ? `${token.slice(0, 40)}…` : token}" is not a confirmation token: copy the whole Token parameter of the confirmation link (a long hexadecimal string, ${token.length} character(s) given); nothing was confirmed`,
    );
  }
  const target = await context.target();
  const topicArn = topicArnOf(await requireAudience(target, audienceId), audienceId);
  const { SubscriptionArn } = await target.clients.sns.send(
    new ConfirmSubscriptionCommand({ TopicArn: topicArn, Token: token, AuthenticateOnUnsubscribe: 'true' }),
  );
  // Only what the topic lists as confirmed counts: a token of another topic, or one that SNS
  // accepted without a subscription behind it, confirms nothing.
  const confirmed = (await audienceSubscriptions(target, audienceId, topicArn)).find(
    (subscription) => subscription.SubscriptionArn === SubscriptionArn && !isPending(subscription),
  );
  if (SubscriptionArn === undefined || confirmed === undefined) {
    throw new OperationFailedError(
      `the token confirmed no subscription of audience ${audienceId}'s topic (is it from another audience's confirmation email, or expired after ${confirmationLifetime}?); see ${newsAlerts()} subscriptions pending ${audienceId}`,
    );
  }
  context.output.result({ audienceId, subscriptionArn: SubscriptionArn, authenticateOnUnsubscribe: true }, () =>
    context.output.line(`confirmed ${SubscriptionArn}; only an authenticated AWS caller can unsubscribe it`),
  );
}

/** The subscriber records of a target (state table), for `audiences repair`. */
export const subscriberRecordsOf = (target: Target): DynamoSubscriberRecords =>
  new DynamoSubscriberRecords({ documents: target.clients.documents, tableName: target.names.stateTable });

/** How a topic's subscription is recorded: the Slack relay (or stand-in queue) as `slack`. */
export function recordedAs(
  target: Target,
  subscription: Pick<Subscription, 'Protocol' | 'Endpoint'>,
): [RecordedProtocol, string | undefined] {
  const endpoint = subscription.Endpoint;
  if (subscription.Protocol === 'lambda' && endpoint === target.names.slackRelayFunctionArn)
    return ['slack', undefined];
  const standIn = target.names.slackStandInQueuePrefix;
  if (subscription.Protocol === 'sqs' && standIn && endpoint?.split(':').at(-1)?.startsWith(standIn)) {
    return ['slack', undefined];
  }
  return [(subscription.Protocol ?? 'https') as RecordedProtocol, endpoint];
}

/** A per-audience webhook secret's string: the bare URL, or JSON with one of these keys (as the relay read it). */
function webhookOfSecret(secretString: string): string | undefined {
  const trimmed = secretString.trim();
  if (!trimmed.startsWith('{')) return trimmed === '' ? undefined : trimmed;
  try {
    const parsed = JSON.parse(trimmed) as Record<string, unknown>;
    for (const key of ['webhookUrl', 'webhook_url', 'url']) {
      const value = parsed[key];
      if (typeof value === 'string' && value.trim() !== '') return value.trim();
    }
  } catch {
    // not JSON: reported as holding no URL
  }
  return undefined;
}

interface MigrationRow {
  audienceId: string;
  secret: string;
  outcome:
    | 'moved'
    | 'already in the store'
    | 'store kept its own URL'
    | 'no URL in the secret'
    | 'not readable'
    | `not moved: ${string}`;
  deleted: boolean;
}

/**
 * `subscriptions migrate-webhooks`: moves the webhooks of a deployment that kept one secret per
 * audience (`<prefix>/slack/<audienceId>`) into the webhook store, checks the store holds each one,
 * and (with --delete-old-secrets) schedules the old secrets for deletion with a 7-day recovery
 * window. Run it before deploying the release that reads the store, and again after (it is
 * idempotent); subscriptions are not touched, so no subscriber is lost. Secrets given to the stack
 * by ARN (`slack.webhookSecretArn`) are not under the prefix and stay where they are. It also moves
 * the HTTPS endpoint URLs that subscriber records of earlier releases hold in clear into the
 * endpoint store (cli/endpoint-store.ts), each record keeping a reference.
 */
async function migrateWebhooks(
  context: CommandContext,
  _args: readonly unknown[],
  options: { deleteOldSecrets?: boolean; dryRun?: boolean; yes?: boolean },
): Promise<void> {
  const target = await context.target();
  const legacyPrefix = target.names.slackWebhookSecretPrefix ?? '';
  const store = storePrefixOf(target.names) ?? '';
  if (endpointStorePrefixOf(target) === undefined) {
    throw new NotFoundError(`${target.label} has no SlackWebhookSecretPrefix output: there is nothing to migrate`);
  }
  // First the HTTPS endpoint URLs that records of earlier releases hold in clear in the state
  // table: they move into the endpoint store, each record keeping a reference
  // (cli/endpoint-store.ts). It needs the HttpsEndpointsWrite statement only.
  const endpoints = await moveRecordedEndpoints(target, subscriberRecordsOf(target), {
    dryRun: options.dryRun === true,
  });

  // Then the Slack webhooks of per-audience secrets. Without the statements to find them
  // (SlackWebhooksFind), that part is skipped with a warning, and the part above still counts.
  const { secrets } = target.clients;
  const found: SecretListEntry[] = [];
  let slackSkipped: string | undefined = legacyPrefix === '' ? 'no SlackWebhookSecretPrefix output' : undefined;
  let nextToken: string | undefined;
  try {
    while (slackSkipped === undefined) {
      const page = await secrets.send(
        new ListSecretsCommand({
          Filters: [{ Key: 'name', Values: [legacyPrefix] }],
          NextToken: nextToken,
          MaxResults: 100,
        }),
      );
      // The name filter matches prefixes of words too: keep exactly `<prefix><audienceId>`.
      found.push(
        ...(page.SecretList ?? []).filter(
          (entry) => entry.Name?.startsWith(legacyPrefix) && !entry.Name.slice(legacyPrefix.length).includes('/'),
        ),
      );
      nextToken = page.NextToken;
      if (!nextToken) break;
    }
  } catch (error) {
    if (!(error instanceof Error) || !/AccessDenied/.test(error.name)) throw error;
    slackSkipped = `secretsmanager:ListSecrets is not allowed (${error.name}; the SlackWebhooksFind statement of docs/deploy.md)`;
  }

  const rows: MigrationRow[] = [];
  const webhooks = new Map<string, string>();
  for (const entry of found) {
    const name = entry.Name ?? '';
    const audienceId = name.slice(legacyPrefix.length);
    if (entry.DeletedDate !== undefined) continue;
    let url: string | undefined;
    try {
      const { SecretString } = await secrets.send(new GetSecretValueCommand({ SecretId: name }));
      url = webhookOfSecret(SecretString ?? '');
    } catch (error) {
      // Created empty by the stack and never filled has no value to read: nothing to move.
      const empty = error instanceof Error && /ResourceNotFound/.test(error.name);
      rows.push({ audienceId, secret: name, outcome: empty ? 'no URL in the secret' : 'not readable', deleted: false });
      continue;
    }
    if (url === undefined) {
      rows.push({ audienceId, secret: name, outcome: 'no URL in the secret', deleted: false });
      continue;
    }
    // What `subscriptions add --slack-webhook` would refuse is not moved either: the relay would
    // post to it in vain. It stays in its old secret, which is not deleted. Says why, never the URL.
    const problem =
      webhookUrlProblem(url) ?? checkUsable(checkTargetUrl(url, { allowInternal: target.kind === 'local' }));
    if (problem !== undefined) {
      rows.push({ audienceId, secret: name, outcome: `not moved: the URL ${problem}`, deleted: false });
      continue;
    }
    webhooks.set(audienceId, url);
  }

  // Asked before anything is written, so a refusal (no --yes, no terminal) leaves everything as it was.
  if (!options.dryRun && options.deleteOldSecrets && webhooks.size > 0) {
    await context.confirm(
      `Move ${webhooks.size} webhook(s) into the store and schedule their per-audience secret(s) under ${legacyPrefix} for deletion (7-day recovery window)?`,
      options.yes,
    );
  }
  const outcome =
    webhooks.size === 0
      ? { stored: [] as readonly string[], unchanged: [] as readonly string[], kept: [] as readonly string[] }
      : options.dryRun
        ? await planWebhooks(secrets, store, webhooks)
        : await storeWebhooks(secrets, store, webhooks, { keepExisting: true });
  // A dry run reads the shards and says which would not fit: the migration would stop there.
  const overfull =
    options.dryRun && webhooks.size > 0
      ? await overfullShards(secrets, store, webhooks, { keepExisting: true })
      : new Map<string, string>();
  for (const audienceId of webhooks.keys()) {
    const problem = overfull.get(webhookShardName(store, audienceId));
    rows.push({
      audienceId,
      secret: `${legacyPrefix}${audienceId}`,
      outcome:
        problem !== undefined
          ? `not moved: ${problem}`
          : outcome.unchanged.includes(audienceId)
            ? 'already in the store'
            : outcome.kept.includes(audienceId)
              ? 'store kept its own URL'
              : 'moved',
      deleted: false,
    });
  }
  rows.sort((a, b) => (a.audienceId < b.audienceId ? -1 : a.audienceId > b.audienceId ? 1 : 0));

  if (!options.dryRun && options.deleteOldSecrets) {
    // Only secrets whose webhook the store now holds (moved, or there before) are deleted.
    const safe = rows.filter((row) => webhooks.has(row.audienceId));
    for (const row of safe) {
      await secrets.send(new DeleteSecretCommand({ SecretId: row.secret, RecoveryWindowInDays: 7 }));
      row.deleted = true;
    }
  }

  if (slackSkipped !== undefined) {
    context.output.warn(`per-audience Slack webhook secrets were not looked for: ${slackSkipped}`);
  }
  context.output.result(
    { store, dryRun: options.dryRun === true, audiences: rows, endpoints, slackSkipped: slackSkipped ?? null },
    () => {
      context.output.table(
        ['AUDIENCE', 'OLD SECRET', 'OUTCOME', 'OLD SECRET DELETED'],
        rows.map((row) => [
          row.audienceId,
          row.secret,
          options.dryRun && !row.outcome.startsWith('not moved') ? `would be ${row.outcome}` : row.outcome,
          row.deleted ? 'scheduled (7 days)' : 'no',
        ]),
        slackSkipped === undefined
          ? `no per-audience webhook secrets under ${legacyPrefix}`
          : 'Slack webhooks of per-audience secrets: not checked',
      );
      if (rows.length > 0 && !options.dryRun) {
        context.output.caption(
          `The relay reads the store (${store}0 to ${store}3).${options.deleteOldSecrets ? ' Restore a deleted secret within 7 days with: aws secretsmanager restore-secret --secret-id <name>' : ` Once the new release is deployed and posts arrive, delete the old secrets: ${newsAlerts()} subscriptions migrate-webhooks --delete-old-secrets`}`,
        );
      }
      context.output.table(
        ['AUDIENCE', 'HTTPS ENDPOINT', 'OUTCOME'],
        endpoints.map((row) => [row.audienceId, row.endpoint, row.outcome]),
        'no subscriber record holds an HTTPS endpoint URL in clear',
      );
      if (endpoints.length > 0 && !options.dryRun) {
        context.output.caption(
          `The URLs are in the endpoint store (${endpointStorePrefixOf(target) ?? ''}0 to 3); the subscriber records keep a reference, and audiences repair reads the URL from there.`,
        );
      }
    },
  );
  if (overfull.size > 0) {
    throw new OperationFailedError(
      `the migration would stop: ${overfull.size} shard(s) of the webhook store would outgrow a secret (the table above says which); make room there first`,
    );
  }
  const stuck = endpoints.filter((row) => row.outcome.startsWith('not moved'));
  if (stuck.length > 0) {
    throw new OperationFailedError(
      `${stuck.length} HTTPS endpoint URL(s) stay in their subscriber records (the table above says why); make room in the endpoint store and run this again`,
    );
  }
  const unreadable = rows.filter((row) => row.outcome === 'not readable');
  if (unreadable.length > 0) {
    throw new OperationFailedError(
      `${unreadable.length} secret(s) could not be read (${unreadable.map((row) => row.secret).join(', ')}); their webhooks were not moved and the secrets were kept`,
    );
  }
}

/**
 * `subscriptions failures [audienceId]`: the audiences whose subscribers are failing, from the
 * delivery and Slack relay dead-letter queues (read, not removed): what `delivery-dlq` and
 * `slack-relay-dlq` alarm on.
 */
async function listFailures(context: CommandContext, args: readonly unknown[]): Promise<void> {
  const [audienceId] = args as [string | undefined];
  const target = await context.target();
  const queues = [
    ...(target.names.deliveryDeadLetterQueueArn
      ? [{ arn: target.names.deliveryDeadLetterQueueArn, queue: 'delivery' as const }]
      : []),
    ...(target.names.slackRelayDeadLetterQueueArn
      ? [{ arn: target.names.slackRelayDeadLetterQueueArn, queue: 'slack relay' as const }]
      : []),
  ];
  if (queues.length === 0) {
    throw new NotFoundError(
      `${target.label} has no delivery or Slack relay dead-letter queue (DeliveryDeadLetterQueueArn, SlackRelayDeadLetterQueueArn): subscriber deliveries are not redriven there`,
    );
  }
  const { SQSClient } = await import('@aws-sdk/client-sqs');
  const sqs = new SQSClient({ ...target.clients.config });
  try {
    const { readDeliveryFailures } = await import('./delivery-failures.ts');
    // Audiences with a topic of their own (--topic-arn) are named by their stored topic ARN.
    const topics = new Map<string, string>();
    const known: string[] = [];
    for (const item of await listItems(target.clients.documents, {
      tableName: target.names.audiencesTable,
      keyName: 'audienceId',
      noun: 'audience',
    })) {
      if (typeof item.audienceId !== 'string') continue;
      known.push(item.audienceId);
      if (typeof item.topicArn === 'string') topics.set(item.topicArn, item.audienceId);
    }
    const found = await readDeliveryFailures(sqs, queues, { topicPrefix: target.names.audienceTopicPrefix, topics });
    const rows = audienceId === undefined ? found.rows : found.rows.filter((row) => row.audienceId === audienceId);
    // A typo must not read as "nothing is failing". An audience deleted since may still have
    // failures waiting: those are listed, whatever the table says.
    if (audienceId !== undefined && rows.length === 0 && !known.includes(audienceId)) {
      throw new NotFoundError(
        `audience ${audienceId} does not exist in ${target.label}${hinted(hintFrom([audienceId], known), `${newsAlerts()} audiences list`)}`,
      );
    }
    context.output.result({ ...found, rows }, () => {
      context.output.table(
        ['AUDIENCE', 'QUEUE', 'MESSAGES', 'NEWEST'],
        rows.map((row) => [row.audienceId, row.queue, String(row.messages), row.newest ?? '']),
        audienceId === undefined
          ? 'no failed deliveries are waiting'
          : `no failed deliveries of ${audienceId} are waiting`,
      );
      if (found.unattributed > 0) {
        context.output.note(
          `${found.unattributed} message(s) name no audience of this deployment (read them with aws sqs receive-message)`,
        );
      }
      if (found.truncated)
        context.output.note('the queues hold more messages than were read; the counts are a lower bound');
      if (found.leftHidden)
        context.output.warn(
          'what was read could not be made visible again (is sqs:ChangeMessageVisibility allowed? docs/deploy.md): those messages reappear within 30 s',
        );
      if (rows.length > 0) {
        context.output.caption(
          `See who subscribes with: ${newsAlerts()} subscriptions list <audienceId>. Slack: store the new webhook with ${newsAlerts()} subscriptions add <audienceId> --slack-webhook, then redrive (docs/operate.md).`,
        );
      }
    });
  } finally {
    sqs.destroy();
  }
}

/** Registers `subscriptions` and its subcommands. */
export function registerSubscriptions(program: Command): void {
  const subscriptions = program
    .command('subscriptions')
    .description('list, add, remove and confirm subscribers of an audience; show pending confirmations');

  subscriptions
    .command('list')
    .description('list the subscriptions of an audience’s topic (webhook URLs masked)')
    .argument('<audienceId>')
    .action(action(listSubscriptions));

  subscriptions
    .command('add')
    .description('subscribe an email address, phone number, HTTPS endpoint, SQS queue or Slack channel to an audience')
    .argument('<audienceId>')
    // A second operand (most likely a pasted webhook URL) is refused by the command, not listed.
    .allowExcessArguments()
    .option('--email <address>', 'email subscriber (confirm with authenticated unsubscribe)')
    .option('--sms <number>', 'SMS subscriber, E.164 (+821012345678)')
    .option(
      '--https <url>',
      'HTTPS webhook endpoint (must confirm the subscription); - reads the URL from stdin or a hidden prompt, out of shell history',
    )
    .option(
      '--sqs <queueArn>',
      'SQS queue subscriber (its policy must allow the topic to send); read any audience’s deliveries from it',
    )
    .option('--raw', 'with --https or --sqs: deliver the alert JSON without the SNS envelope')
    .option(
      '--slack-webhook',
      'Slack channel: reads the incoming-webhook URL from stdin or a hidden prompt, never from argv',
    )
    .option(
      '--allow-internal-target',
      'with --https or --slack-webhook: accept a loopback, private or link-local host (local test receivers only)',
    )
    .addHelpText(
      'after',
      `
Examples:
  news-alerts subscriptions add markets --email desk@example.com
  news-alerts subscriptions add quakes --sms +821012345678
  news-alerts subscriptions add markets --sqs arn:aws:sqs:us-east-1:123456789012:markets-reader --raw
  pbpaste | news-alerts subscriptions add partner-feed --https - --raw
  pbpaste | news-alerts subscriptions add chips --slack-webhook

Targets must be public https:// hosts without user:password@: loopback, private, link-local
(169.254.169.254, fd00:ec2::254), CGNAT, multicast and local-only names (localhost, *.internal)
are refused in every notation; --allow-internal-target accepts them for a local test receiver.
In the sandbox (--local) it is the other way round: its SNS posts to an --https subscriber from this
machine, so only a loopback receiver (with --allow-internal-target) is accepted.`,
    )
    .action(action(addSubscription));

  subscriptions
    .command('remove')
    .description('unsubscribe by subscription id, ARN or endpoint (email, phone number, URL, queue name)')
    .argument('<audienceId>')
    .argument(
      '<subscription>',
      'subscription id (as subscriptions list shows it), ARN, or endpoint (a queue by its name or ARN); - reads it from stdin or a hidden prompt (a URL that carries a token)',
    )
    .option('-y, --yes', 'do not ask for confirmation')
    .action(action(removeSubscription));

  subscriptions
    .command('failures')
    .description(
      'which audiences have failing subscribers: the delivery and Slack relay dead-letter queues, read without removing anything',
    )
    .argument('[audienceId]')
    .action(action(listFailures));

  subscriptions
    .command('migrate-webhooks')
    .description(
      'move what earlier releases kept elsewhere: Slack webhooks from one secret per audience into the webhook store, HTTPS endpoint URLs from the subscriber records into the endpoint store; subscriptions are kept',
    )
    .option('--dry-run', 'list what would move; write nothing')
    .option('--delete-old-secrets', 'then schedule the per-audience secrets for deletion (7-day recovery window)')
    .option('-y, --yes', 'do not ask for confirmation')
    .action(action(migrateWebhooks));

  subscriptions
    .command('pending')
    .description('show subscriptions still waiting for confirmation (all audiences, or one)')
    .argument('[audienceId]')
    .action(action(pendingSubscriptions));

  subscriptions
    .command('confirm')
    .description('confirm a subscription with authenticated unsubscribe (Token from the confirmation link)')
    .argument('<audienceId>')
    .requiredOption('--token <token>', 'the Token parameter of the confirmation link')
    .action(action(confirmSubscription));
}
