/**
 * `audiences repair <id>`: an audience whose SNS topic was deleted (or never made) gets it back,
 * with what the project knows of its subscribers: the topic is created again under the same name
 * (the stack's key and TLS-only policy), the audience item points at it, and every subscription
 * recorded when the CLI or the console made it (functions/aws/dynamo-subscriber-records.ts) is
 * made again, Slack and HTTPS endpoints included (their URLs are in Secrets Manager: the webhook
 * store and the endpoint store). What it cannot restore is said: subscriptions made outside the
 * CLI, Slack or HTTPS endpoints whose URL left its store, and email subscribers, who must confirm
 * again. Notifications parked while the topic was gone wait for
 * `replay --parked`.
 */

import { DescribeSecretCommand, ResourceNotFoundException } from '@aws-sdk/client-secrets-manager';
import { GetTopicAttributesCommand, NotFoundException, SubscribeCommand } from '@aws-sdk/client-sns';
import { DynamoStateStore } from '#aws/dynamo-state-store';
import { endpointDigest } from '#aws/dynamo-subscriber-records';
import type { Log } from '#core/ports';
import { webhookShardName } from '#shared/slack-webhook-store';
import { createTopic, requireAudience, topicArnOf, topicNameOf, topicSubscriptions } from '../audience-topics.ts';
import { ensureAuditQueues } from '../audit-queues.ts';
import { endpointEntryName, endpointOf, endpointStorePrefixOf } from '../endpoint-store.ts';
import { addHttpsAgain, newsAlerts } from '../hints.ts';
import { type Audit, type Item, writeItems } from '../items.ts';
import { maskUrl } from '../output.ts';
import { displayEndpoint, recordedAs, subscriberRecordsOf, subscribeStandInQueue } from '../subscriptions.ts';
import type { Target } from '../target.ts';
import { storeHoldsWebhook, storePrefixOf } from '../webhook-store.ts';
import { audienceTableOf } from './tables.ts';

/** One subscription's fate in a repair. */
export interface RepairedSubscription {
  readonly protocol: string;
  readonly endpoint: string;
  readonly result: 'present' | 'restored' | 'not restored';
  readonly detail: string;
}

/** What a repair did (or, planned, would do). */
export interface RepairReport {
  readonly audienceId: string;
  readonly topicArn: string;
  /** `ok`: the topic exists; `recreated`: it was missing and is made again (`missing` when planned). */
  readonly topic: 'ok' | 'recreated' | 'missing';
  readonly topicArnChanged: boolean;
  readonly subscriptions: readonly RepairedSubscription[];
  /** What could not be restored, in words. */
  readonly notRestored: readonly string[];
  /** Notifications parked for this audience (SNS refused them), for `replay --parked`. */
  readonly parked: number;
}

async function topicExists(target: Target, topicArn: string): Promise<boolean> {
  try {
    await target.clients.sns.send(new GetTopicAttributesCommand({ TopicArn: topicArn }));
    return true;
  } catch (error) {
    if (error instanceof NotFoundException || (error as { name?: string }).name === 'NotFound') return false;
    throw error;
  }
}

/**
 * Repairs the audience (`apply`), or says what a repair would do (`apply: false`, nothing is
 * written).
 */
export async function repairAudience(
  target: Target,
  audienceId: string,
  audit: Audit,
  log: Log,
  options: { readonly apply: boolean; readonly warn: (text: string) => void },
): Promise<RepairReport> {
  const item = await requireAudience(target, audienceId);
  const storedArn = topicArnOf(item, audienceId);
  const exists = await topicExists(target, storedArn);
  const topicName = storedArn.split(':').at(-1) ?? topicNameOf(target, audienceId);
  let topicArn = storedArn;
  if (!exists && options.apply) {
    topicArn = await createTopic(options.warn, target, audienceId, topicName);
    if (topicArn !== storedArn) {
      const next: Item = { ...item, topicArn };
      await writeItems(
        target.clients.documents,
        audienceTableOf(target),
        { puts: [{ id: audienceId, item: next, previous: item }] },
        audit,
      );
    }
  }
  const present = exists || options.apply ? await topicSubscriptions(target.clients.sns, topicArn) : [];
  // Compared by digest: a record of an HTTPS endpoint keeps its digest, not its URL.
  const keyOf = (subscription: (typeof present)[number]) => {
    const [protocol, endpoint] = recordedAs(target, subscription);
    return `${protocol}|${endpointDigest(endpoint)}`;
  };
  const have = new Set(present.map(keyOf));
  // Confirmed ones only: a pending email or HTTPS subscription that nobody confirms is dropped by
  // SNS, and its record must not outlive it.
  const confirmed = new Set(
    present.filter((subscription) => !/pending/i.test(subscription.SubscriptionArn ?? 'pending')).map(keyOf),
  );
  // A record past its expiry (its audience deleted with its topic 30 days ago) is gone, though
  // DynamoDB's TTL may not have deleted it yet: it is not subscribed again.
  const recorded = subscriberRecordsOf(target);
  const records = await recorded.list(audienceId, Date.now());
  const subscriptions: RepairedSubscription[] = [];
  const notRestored: string[] = [];
  for (const record of records) {
    const endpoint =
      record.protocol === 'slack'
        ? 'Slack (webhook in Secrets Manager)'
        : record.endpointRef !== undefined
          ? // Masked again: the record may have been edited by hand.
            record.shown === undefined
            ? 'https (URL in the endpoint store)'
            : maskUrl(record.shown)
          : displayEndpoint({ Protocol: record.protocol, Endpoint: record.endpoint });
    const key = `${record.protocol}|${record.endpointRef ?? endpointDigest(record.endpoint)}`;
    if (have.has(key)) {
      subscriptions.push({ protocol: record.protocol, endpoint, result: 'present', detail: 'subscribed' });
      // Subscribed and confirmed: kept while it is (a record of an audience deleted with its topic
      // had an expiry).
      if (options.apply && record.expiresAt !== undefined && confirmed.has(key)) await recorded.keep(record);
      continue;
    }
    // The URL of an HTTPS endpoint, from the endpoint store; read only to subscribe it, never shown.
    let url = record.endpoint;
    if (record.endpointRef !== undefined) {
      url = await endpointOf(target, audienceId, record.endpointRef);
      if (url === undefined) {
        const store = endpointStorePrefixOf(target);
        const why = `${endpoint}: its URL is not in the endpoint store (${store === undefined ? 'none' : endpointEntryName(store, audienceId, record.endpointRef)}); add it again with ${addHttpsAgain(audienceId, target.kind === 'local')}`;
        notRestored.push(why);
        subscriptions.push({ protocol: record.protocol, endpoint, result: 'not restored', detail: why });
        continue;
      }
    }
    let webhookFrom = '';
    if (record.protocol === 'slack') {
      const webhook = await slackWebhookWhere(target, audienceId, options.warn);
      webhookFrom = webhook ?? '';
      if (webhook === undefined) {
        const prefix = storePrefixOf(target.names);
        const why = `Slack: no webhook for ${audienceId} in the webhook store (${prefix === undefined ? 'none' : webhookShardName(prefix, audienceId)}); add it again with '${newsAlerts()} subscriptions add ${audienceId} --slack-webhook'`;
        notRestored.push(why);
        subscriptions.push({ protocol: 'slack', endpoint, result: 'not restored', detail: why });
        continue;
      }
    }
    if (!options.apply) {
      subscriptions.push({
        protocol: record.protocol,
        endpoint,
        result: 'not restored',
        detail: 'would be subscribed again',
      });
      continue;
    }
    let detail = 'subscribed again';
    if (record.protocol === 'slack') {
      if (target.names.slackRelayFunctionArn) {
        // As `subscriptions add` subscribes it: with the relay's dead-letter queue.
        const deadLetters = target.names.slackRelayDeadLetterQueueArn;
        await target.clients.sns.send(
          new SubscribeCommand({
            TopicArn: topicArn,
            Protocol: 'lambda',
            Endpoint: target.names.slackRelayFunctionArn,
            ...(deadLetters
              ? { Attributes: { RedrivePolicy: JSON.stringify({ deadLetterTargetArn: deadLetters }) } }
              : {}),
          }),
        );
      } else if (target.names.slackStandInQueuePrefix) {
        await subscribeStandInQueue(target, `${target.names.slackStandInQueuePrefix}${audienceId}`, topicArn);
      }
      detail = `the Slack relay is subscribed again (the same webhook, from ${webhookFrom})`;
    } else {
      const attributes: Record<string, string> = {};
      if (target.names.deliveryDeadLetterQueueArn) {
        attributes.RedrivePolicy = JSON.stringify({ deadLetterTargetArn: target.names.deliveryDeadLetterQueueArn });
      }
      if (record.raw) attributes.RawMessageDelivery = 'true';
      const { SubscriptionArn } = await target.clients.sns.send(
        new SubscribeCommand({
          TopicArn: topicArn,
          Protocol: record.protocol,
          Endpoint: url,
          ReturnSubscriptionArn: true,
          ...(Object.keys(attributes).length > 0 ? { Attributes: attributes } : {}),
        }),
      );
      if (record.protocol === 'email' && (SubscriptionArn === undefined || /pending/i.test(SubscriptionArn))) {
        detail = 'subscribed again; SNS emails a confirmation link, and alerts reach it once confirmed';
        notRestored.push(`${endpoint}: must confirm again (SNS sent a confirmation email)`);
      } else if (record.protocol === 'https') {
        detail = 'subscribed again; the endpoint must confirm the subscription again';
      }
    }
    subscriptions.push({ protocol: record.protocol, endpoint, result: 'restored', detail });
    // Subscribed again, confirmed at once (SMS, SQS, the Slack relay): kept while it is. An email or
    // HTTPS subscription must confirm first, so its record keeps its expiry until a later repair
    // finds it confirmed; one not restored keeps it too.
    if (record.expiresAt !== undefined && record.protocol !== 'email' && record.protocol !== 'https') {
      await recorded.keep(record);
    }
  }
  if (!exists) {
    notRestored.push(
      'subscriptions made outside the CLI and the console (the AWS console, aws sns subscribe) were deleted with the topic and are not known: add them again',
    );
  }
  if (options.apply && target.kind === 'local') {
    await ensureAuditQueues(target, { only: [audienceId], onFailure: (_id, error) => options.warn(String(error)) });
  }
  const state = new DynamoStateStore({ documents: target.clients.documents, tableName: target.names.stateTable, log });
  const parked = (await state.listUndeliverable(audienceId)).length;
  return {
    audienceId,
    topicArn,
    topic: exists ? 'ok' : options.apply ? 'recreated' : 'missing',
    topicArnChanged: topicArn !== storedArn,
    subscriptions,
    notRestored,
    parked,
  };
}

/**
 * Where the relay finds the audience's Slack webhook, if anywhere, in words: a secret of its own
 * (cdk.json `slack.webhookSecretArn`, which the relay reads first and `subscriptions add
 * --slack-webhook` refuses to overwrite); the webhook store; or (a deployment not migrated yet, `subscriptions
 * migrate-webhooks`) its own secret under the old per-audience prefix. Only a secret that does not
 * exist counts as missing; any other error is the command's error.
 */
async function slackWebhookWhere(
  target: Target,
  audienceId: string,
  warn: (text: string) => void,
): Promise<string | undefined> {
  if (target.kind === 'stack') {
    try {
      const own = (await target.slackOwnWebhookSecrets())[audienceId];
      if (own !== undefined) return `its own secret ${own} (cdk.json slack.webhookSecretArn)`;
    } catch (error) {
      warn(
        `could not read the Slack relay's settings (${error instanceof Error ? error.name : String(error)}; lambda:GetFunctionConfiguration on the relay): a webhook that cdk.json keeps in a secret of its own (slack.webhookSecretArn) is not seen`,
      );
    }
  }
  const store = storePrefixOf(target.names);
  if (store && (await storeHoldsWebhook(target.clients.secrets, store, audienceId))) {
    return `the webhook store (${webhookShardName(store, audienceId)})`;
  }
  const legacyPrefix = target.names.slackWebhookSecretPrefix;
  if (!legacyPrefix) return undefined;
  const legacy = `${legacyPrefix}${audienceId}`;
  try {
    await target.clients.secrets.send(new DescribeSecretCommand({ SecretId: legacy }));
    return `its own secret ${legacy}`;
  } catch (error) {
    if (error instanceof ResourceNotFoundException) return undefined;
    throw error;
  }
}
