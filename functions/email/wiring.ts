/**
 * The composition root of the email functions: adapters built from the configuration and the
 * AWS clients, shared by the Lambda handlers (one client per service, created at cold start), the
 * local sandbox and the CLI, so all of them run the same code against the same kind of store.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import type { SESv2Client } from '@aws-sdk/client-sesv2';
import { DynamoAudienceDirectory } from '#aws/email/dynamo-audience-directory';
import { DynamoSubscriberStore } from '#aws/email/dynamo-subscriber-store';
import { SecretsManagerLinkKeys } from '#aws/email/link-keys';
import { SesEmailSender } from '#aws/email/ses-sender';
import type { DeliveryCounters, EmailDeliveryDeps } from '#core/email/delivery';
import { createLinkMaker } from '#core/email/links';
import type { PreferenceDeps } from '#core/email/preferences';
import type { SubscribeDeps } from '#core/email/subscribe';
import type { LinkKeys } from '#core/email/tokens';
import type { Log } from '#core/ports';
import type { EmailConfig } from './config.ts';

/** The clients the email functions use. */
export interface EmailClients {
  readonly dynamo: DynamoDBClient;
  readonly ses?: SESv2Client | undefined;
  readonly secrets?: SecretsManagerClient | undefined;
}

const required = <T>(value: T | undefined, what: string): T => {
  if (value === undefined) throw new Error(`the email wiring needs ${what}`);
  return value;
};

/** The subscriber store of a configuration. */
export const subscriberStoreOf = (config: EmailConfig, clients: EmailClients) =>
  new DynamoSubscriberStore({
    client: clients.dynamo,
    tableName: config.subscribersTable,
    historyDays: config.historyDays,
  });

/** The link keys of a configuration (Secrets Manager). */
export const linkKeysOf = (config: EmailConfig, clients: EmailClients): LinkKeys =>
  new SecretsManagerLinkKeys({
    client: required(clients.secrets, 'a Secrets Manager client'),
    secretId: required(config.linkKeySecretId, 'LINK_KEY_SECRET_ID'),
    maxAgeSeconds: config.linkKeyCacheSeconds,
  });

/** Everything the delivery function needs. */
export function createDeliveryDependencies(
  config: EmailConfig,
  clients: EmailClients,
  log: Log,
  options: { readonly now?: () => number; readonly counters?: DeliveryCounters; readonly keys?: LinkKeys } = {},
): EmailDeliveryDeps {
  const now = options.now ?? Date.now;
  const keys = options.keys ?? linkKeysOf(config, clients);
  return {
    store: subscriberStoreOf(config, clients),
    sender: new SesEmailSender({
      client: required(clients.ses, 'an SES client'),
      configurationSetName: config.configurationSet,
    }),
    audiences: new DynamoAudienceDirectory({
      client: clients.dynamo,
      tableName: required(config.audiencesTable, 'AUDIENCES_TABLE_NAME'),
      now,
    }),
    links: createLinkMaker({ keys, baseUrl: required(config.preferencesUrl, 'PREFERENCES_URL'), now }),
    settings: required(config.sender, 'EMAIL_DOMAIN and EMAIL_FROM_ADDRESS'),
    topicNamePrefix: required(config.topicNamePrefix, 'AUDIENCE_TOPIC_PREFIX'),
    compose: { defaultLocale: config.defaultLocale },
    sendConcurrency: config.sendConcurrency,
    claimLeaseMs: config.claimLeaseMs,
    log,
    now,
    counters: options.counters,
  };
}

/** Everything the preference endpoint needs. */
export function createPreferenceDependencies(
  config: EmailConfig,
  clients: EmailClients,
  log: Log,
  options: { readonly now?: () => number; readonly count?: (outcome: string) => void; readonly keys?: LinkKeys } = {},
): PreferenceDeps {
  const now = options.now ?? Date.now;
  const keys = options.keys ?? linkKeysOf(config, clients);
  return {
    keys,
    linkDays: config.linkDays,
    store: subscriberStoreOf(config, clients),
    audiences: new DynamoAudienceDirectory({
      client: clients.dynamo,
      tableName: required(config.audiencesTable, 'AUDIENCES_TABLE_NAME'),
      now,
    }),
    links: createLinkMaker({ keys, baseUrl: required(config.preferencesUrl, 'PREFERENCES_URL'), now }),
    defaultLocale: config.defaultLocale,
    log,
    now,
    count: options.count,
  };
}

/** Everything adding addresses (double opt-in) and migrating SNS subscribers needs (the CLI). */
export function createSubscribeDependencies(
  config: EmailConfig,
  clients: EmailClients,
  log: Log,
  options: { readonly now?: () => number; readonly keys?: LinkKeys } = {},
): SubscribeDeps {
  const delivery = createDeliveryDependencies(config, clients, log, options);
  return {
    store: delivery.store,
    sender: delivery.sender,
    links: delivery.links,
    settings: delivery.settings,
    log,
    now: delivery.now,
  };
}
