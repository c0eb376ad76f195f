/**
 * The email channel in the local sandbox: the same resources the stack's EmailChannel construct
 * creates in AWS, created in moto server (the subscribers table with its indexes, the email queue
 * and its dead-letter queue subscribed to the audience topics, the SES domain identity and
 * configuration set, the link-key secret), the email delivery function run in this process over
 * the queue through its own composition root, and the preference endpoint on loopback HTTPS.
 *
 * Every email SES accepts is also written as a `.eml` file (the exact MIME bytes SES was given,
 * which moto keeps as well) into `mailDir`, numbered in the order they were sent, so a person
 * can open them in a mail client and tests can parse them.
 *
 * moto's SES sends nothing and reports no events: tests feed the events function SES's documented
 * event JSON (test/support/ses-events.ts).
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  CreateTableCommand,
  type DynamoDBClient,
  ResourceInUseException,
  UpdateTimeToLiveCommand,
  waitUntilTableExists,
} from '@aws-sdk/client-dynamodb';
import { CreateSecretCommand, type SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { CreateConfigurationSetCommand, CreateEmailIdentityCommand, SESv2Client } from '@aws-sdk/client-sesv2';
import { type SNSClient, SubscribeCommand } from '@aws-sdk/client-sns';
import {
  ChangeMessageVisibilityBatchCommand,
  CreateQueueCommand,
  DeleteMessageBatchCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { digestsIndex, membersIndex, subscriberTableKey } from '#aws/email/subscriber-table';
import type { DailyDigestOutcome, EmailDeliveryDeps } from '#core/email/delivery';
import type { EmailSender } from '#core/email/ports';
import type { PreferenceDeps } from '#core/email/preferences';
import { addSubscriber, type SubscribeDeps, type SubscribeOutcome } from '#core/email/subscribe';
import { FALLBACK_LOCALE, localeChain, messageLocale } from '#core/locale';
import type { Log } from '#core/ports';
import { type EmailConfig, loadEmailConfig } from '../functions/email/config.ts';
import { createEmailHandler, RELEASE_DAILY_DIGESTS } from '../functions/email/process.ts';
import {
  createDeliveryDependencies,
  createPreferenceDependencies,
  createSubscribeDependencies,
  type EmailClients,
} from '../functions/email/wiring.ts';
import { localAwsConfig } from './moto.ts';
import { type PreferenceServer, startPreferenceServer } from './preference-server.ts';
import type { PemPair } from './tls.ts';

/** The sandbox's sending domain and sender (placeholders; nothing leaves the machine). */
export const sandboxEmailDomain = 'alerts.example.com';

/**
 * The folders under `.sandbox/` that the background sandbox (`news-alerts sandbox up`) and
 * `npm start` write their mail to. Each start empties its own folder, so they are apart: an
 * `npm start` while a sandbox is up must not delete the mail whose links that sandbox still serves.
 */
export const MAIL_FOLDERS = { sandbox: 'mail', npmStart: 'start-mail' } as const;

/** A subscriber the sandbox adds to an example audience (confirmed, as if migrated from SNS). */
export interface SandboxEmailSubscriber {
  readonly address: string;
  readonly locale?: string | undefined;
  /** `confirmed` (the default: it receives alerts at once) or `pending` (gets the confirmation email). */
  readonly state?: 'confirmed' | 'pending';
}

export interface LocalEmailOptions {
  readonly motoEndpoint: string;
  readonly clients: {
    readonly dynamo: DynamoDBClient;
    readonly sqs: SQSClient;
    readonly sns: SNSClient;
    readonly secrets: SecretsManagerClient;
  };
  readonly ca: PemPair;
  /** Resource-name prefix of the sandbox. */
  readonly prefix: string;
  readonly audiencesTable: string;
  /** `<prefix>audience-`: the audience topics' name prefix. */
  readonly topicNamePrefix: string;
  /** Where `.eml` files are written. */
  readonly mailDir: string;
  readonly defaultLocale?: string | undefined;
  readonly now: () => number;
  readonly log: Log;
  /** Fault tests wrap the SES sender (throttle, fail) here. */
  readonly wrapSender?: ((sender: EmailSender) => EmailSender) | undefined;
  /** Fixed port of the preference endpoint (0: any free port). */
  readonly port?: number | undefined;
}

/** One email the sandbox sent (and wrote as a file). */
export interface SentEmail {
  readonly path: string;
  readonly audienceId: string;
  readonly subscriberId: string;
  /** The `message` tag: the key of its history record. */
  readonly messageKey: string;
  readonly providerMessageId: string;
  readonly raw: Uint8Array;
}

/** What one pass over the email queue did. */
export interface EmailPass {
  readonly received: number;
  readonly failed: number;
}

export interface LocalEmail {
  /** The email functions' variables, as the stack sets them (the CLI reads them from the descriptor). */
  readonly environment: Readonly<Record<string, string>>;
  readonly config: EmailConfig;
  readonly preferencesUrl: string;
  readonly subscribersTable: string;
  readonly queueUrl: string;
  readonly queueArn: string;
  readonly deadLetterQueueUrl: string;
  readonly configurationSet: string;
  readonly linkKeySecretId: string;
  readonly mailDir: string;
  readonly delivery: EmailDeliveryDeps;
  readonly preferences: PreferenceDeps;
  readonly subscribe: SubscribeDeps;
  readonly server: PreferenceServer;
  /** Every email sent so far, oldest first. */
  readonly sent: readonly SentEmail[];
  /** Subscribes the email queue to an audience topic (idempotent, as SNS is). */
  subscribeTopic(topicArn: string): Promise<void>;
  /** Adds an address to an audience (confirmed by default, as a migrated SNS subscriber). */
  addSubscriber(
    audienceId: string,
    subscriber: SandboxEmailSubscriber,
    audience?: { readonly name?: string; readonly locale?: string },
  ): Promise<SubscribeOutcome>;
  /**
   * One pass over the email queue through the delivery function: every message visible now is
   * handed to it once (batches of 10); failed ones are made visible again for the next pass.
   */
  deliver(): Promise<EmailPass>;
  /** Runs the schedule's daily-digest release once. */
  releaseDailyDigests(): Promise<DailyDigestOutcome>;
  stop(): Promise<void>;
}

/** Creates the subscribers table as the stack defines it (keys, both sparse indexes, TTL). */
export async function createSubscribersTable(dynamo: DynamoDBClient, tableName: string): Promise<void> {
  try {
    await dynamo.send(
      new CreateTableCommand({
        TableName: tableName,
        BillingMode: 'PAY_PER_REQUEST',
        KeySchema: [
          { AttributeName: subscriberTableKey.partitionKey, KeyType: 'HASH' },
          { AttributeName: subscriberTableKey.sortKey, KeyType: 'RANGE' },
        ],
        AttributeDefinitions: [
          { AttributeName: 'pk', AttributeType: 'S' },
          { AttributeName: 'sk', AttributeType: 'S' },
          { AttributeName: membersIndex.partitionKey, AttributeType: 'S' },
          { AttributeName: digestsIndex.partitionKey, AttributeType: 'S' },
          { AttributeName: digestsIndex.sortKey, AttributeType: 'N' },
        ],
        GlobalSecondaryIndexes: [
          {
            IndexName: membersIndex.name,
            KeySchema: [
              { AttributeName: membersIndex.partitionKey, KeyType: 'HASH' },
              { AttributeName: membersIndex.sortKey, KeyType: 'RANGE' },
            ],
            Projection: { ProjectionType: 'ALL' },
          },
          {
            IndexName: digestsIndex.name,
            KeySchema: [
              { AttributeName: digestsIndex.partitionKey, KeyType: 'HASH' },
              { AttributeName: digestsIndex.sortKey, KeyType: 'RANGE' },
            ],
            Projection: { ProjectionType: 'KEYS_ONLY' },
          },
        ],
      }),
    );
  } catch (error) {
    if (!(error instanceof ResourceInUseException)) throw error;
  }
  await waitUntilTableExists({ client: dynamo, maxWaitTime: 120, minDelay: 1, maxDelay: 5 }, { TableName: tableName });
  try {
    await dynamo.send(
      new UpdateTimeToLiveCommand({
        TableName: tableName,
        TimeToLiveSpecification: { AttributeName: subscriberTableKey.timeToLiveAttribute, Enabled: true },
      }),
    );
  } catch {
    // Already enabled (a table left from an earlier start).
  }
}

/** Receives of one email notification before SQS moves it to the dead-letter queue (the stack's setting). */
export const emailMaxReceiveCount = 5;

/** Starts the email channel of a sandbox. */
export async function startLocalEmail(options: LocalEmailOptions): Promise<LocalEmail> {
  const { clients, prefix, log, now } = options;
  const ses = new SESv2Client(localAwsConfig(options.motoEndpoint));
  const subscribersTable = `${prefix}email-subscribers`;
  const configurationSet = `${prefix}email`;
  const linkKeySecretId = `${prefix}email-link-keys`;
  await createSubscribersTable(clients.dynamo, subscribersTable);
  await ses.send(new CreateEmailIdentityCommand({ EmailIdentity: sandboxEmailDomain })).catch(ignoreExisting);
  await ses.send(new CreateConfigurationSetCommand({ ConfigurationSetName: configurationSet })).catch(ignoreExisting);
  await clients.secrets
    .send(
      new CreateSecretCommand({
        Name: linkKeySecretId,
        SecretString: JSON.stringify({ current: '1', key1: randomBytes(48).toString('base64url') }),
      }),
    )
    .catch(ignoreExisting);
  const queue = async (name: string, attributes: Record<string, string>) => {
    const { QueueUrl } = await clients.sqs.send(new CreateQueueCommand({ QueueName: name, Attributes: attributes }));
    if (!QueueUrl) throw new Error(`moto did not return a URL for queue ${name}`);
    const { Attributes } = await clients.sqs.send(
      new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ['QueueArn'] }),
    );
    return { url: QueueUrl, arn: Attributes?.QueueArn ?? '' };
  };
  const deadLetters = await queue(`${prefix}email-dlq`, { MessageRetentionPeriod: String(14 * 86_400) });
  const emailQueue = await queue(`${prefix}email`, {
    VisibilityTimeout: '30',
    RedrivePolicy: JSON.stringify({ deadLetterTargetArn: deadLetters.arn, maxReceiveCount: emailMaxReceiveCount }),
  });

  let preferences: PreferenceDeps | undefined;
  const server = await startPreferenceServer(options.ca, () => preferences as PreferenceDeps, options.port ?? 0);
  const environment: Record<string, string> = {
    SUBSCRIBERS_TABLE_NAME: subscribersTable,
    AUDIENCES_TABLE_NAME: options.audiencesTable,
    AUDIENCE_TOPIC_PREFIX: options.topicNamePrefix,
    EMAIL_DOMAIN: sandboxEmailDomain,
    EMAIL_FROM_ADDRESS: `alerts@${sandboxEmailDomain}`,
    EMAIL_FROM_NAME: 'News alerts (sandbox)',
    EMAIL_UNSUBSCRIBE_MAILBOX: `unsubscribe@${sandboxEmailDomain}`,
    EMAIL_CONFIGURATION_SET: configurationSet,
    PREFERENCES_URL: server.url,
    LINK_KEY_SECRET_ID: linkKeySecretId,
    DEFAULT_LOCALE: options.defaultLocale ?? FALLBACK_LOCALE,
    // The sandbox's clock may be pinned: keys are read once, links made on the pinned day.
    LINK_KEY_CACHE_SECONDS: '3600',
  };
  const config = loadEmailConfig(environment, 'delivery');
  const emailClients: EmailClients = { dynamo: clients.dynamo, ses, secrets: clients.secrets };
  mkdirSync(options.mailDir, { recursive: true });
  // The folder holds the mail of this start only: numbering starts again at 0001.
  for (const name of readdirSync(options.mailDir)) {
    if (name.endsWith('.eml') || name === 'preview.html') rmSync(join(options.mailDir, name), { force: true });
  }
  const sent: SentEmail[] = [];
  const recording = (sender: EmailSender): EmailSender => ({
    async send(email) {
      const result = await sender.send(email);
      const number = String(sent.length + 1).padStart(4, '0');
      const audienceId = email.tags.audience ?? 'confirm';
      const path = join(options.mailDir, `${number}-${audienceId}-${email.tags.subscriber ?? 'unknown'}.eml`);
      writeFileSync(path, email.raw);
      sent.push({
        path,
        audienceId,
        subscriberId: email.tags.subscriber ?? '',
        messageKey: email.tags.message ?? '',
        providerMessageId: result.messageId,
        raw: email.raw,
      });
      return result;
    },
  });
  const base = createDeliveryDependencies(config, emailClients, log, { now });
  const sender = recording(options.wrapSender ? options.wrapSender(base.sender) : base.sender);
  const delivery: EmailDeliveryDeps = { ...base, sender };
  preferences = createPreferenceDependencies(loadEmailConfig(environment, 'preferences'), emailClients, log, { now });
  const subscribe: SubscribeDeps = { ...createSubscribeDependencies(config, emailClients, log, { now }), sender };
  const handler = createEmailHandler(delivery);

  async function deliver(): Promise<EmailPass> {
    const seen = new Set<string>();
    let received = 0;
    let failed = 0;
    for (;;) {
      const { Messages: messages = [] } = await clients.sqs.send(
        new ReceiveMessageCommand({
          QueueUrl: emailQueue.url,
          MaxNumberOfMessages: 10,
          VisibilityTimeout: 30,
          WaitTimeSeconds: 0,
          MessageSystemAttributeNames: ['ApproximateReceiveCount', 'SentTimestamp'],
        }),
      );
      if (messages.length === 0) break;
      const fresh = messages.filter((message) => !seen.has(message.MessageId ?? ''));
      const again = messages.filter((message) => seen.has(message.MessageId ?? ''));
      if (again.length > 0) await makeVisible(clients.sqs, emailQueue.url, again);
      if (fresh.length === 0) break;
      for (const message of fresh) seen.add(message.MessageId ?? '');
      received += fresh.length;
      const event: SQSEvent = {
        Records: fresh.map((message) => ({
          messageId: message.MessageId ?? '',
          receiptHandle: message.ReceiptHandle ?? '',
          body: message.Body ?? '',
          attributes: {
            ApproximateReceiveCount: message.Attributes?.ApproximateReceiveCount ?? '1',
            SentTimestamp: message.Attributes?.SentTimestamp ?? '0',
            SenderId: 'sns',
            ApproximateFirstReceiveTimestamp: '0',
          },
          messageAttributes: {},
          md5OfBody: message.MD5OfBody ?? '',
          eventSource: 'aws:sqs',
          eventSourceARN: emailQueue.arn,
          awsRegion: 'us-east-1',
        })),
      };
      let failedIds: Set<string>;
      try {
        const response = (await handler(event, localContext())) as SQSBatchResponse;
        failedIds = new Set(response.batchItemFailures.map((failure) => failure.itemIdentifier));
      } catch {
        failedIds = new Set(event.Records.map((record) => record.messageId));
      }
      const done = fresh.filter((message) => !failedIds.has(message.MessageId ?? ''));
      const retry = fresh.filter((message) => failedIds.has(message.MessageId ?? ''));
      failed += retry.length;
      if (done.length > 0) {
        await clients.sqs.send(
          new DeleteMessageBatchCommand({
            QueueUrl: emailQueue.url,
            Entries: done.map((message, index) => ({ Id: String(index), ReceiptHandle: message.ReceiptHandle })),
          }),
        );
      }
      if (retry.length > 0) await makeVisible(clients.sqs, emailQueue.url, retry);
    }
    return { received, failed };
  }

  return {
    environment,
    config,
    preferencesUrl: server.url,
    subscribersTable,
    queueUrl: emailQueue.url,
    queueArn: emailQueue.arn,
    deadLetterQueueUrl: deadLetters.url,
    configurationSet,
    linkKeySecretId,
    mailDir: options.mailDir,
    delivery,
    preferences,
    subscribe,
    server,
    sent,
    async subscribeTopic(topicArn) {
      await clients.sns.send(new SubscribeCommand({ TopicArn: topicArn, Protocol: 'sqs', Endpoint: emailQueue.arn }));
    },
    async addSubscriber(audienceId, subscriber, audience = {}) {
      const locale = audience.locale ?? options.defaultLocale ?? FALLBACK_LOCALE;
      return await addSubscriber(
        {
          address: subscriber.address,
          audience: {
            audienceId,
            label: audience.name ?? audienceId,
            locale,
            language: messageLocale(localeChain(locale, options.defaultLocale ?? FALLBACK_LOCALE)),
          },
          // Confirmed ones come as a migrated SNS subscriber would; pending ones as `email add` adds them.
          ...((subscriber.state ?? 'confirmed') === 'confirmed' ? { migration: { confirmed: true } } : {}),
          locale: subscriber.locale,
        },
        subscribe,
      );
    },
    deliver,
    async releaseDailyDigests() {
      return (await handler(RELEASE_DAILY_DIGESTS, localContext())) as DailyDigestOutcome;
    },
    async stop() {
      await server.stop();
      ses.destroy();
    },
  };
}

async function makeVisible(
  sqs: SQSClient,
  queueUrl: string,
  messages: readonly { ReceiptHandle?: string | undefined }[],
): Promise<void> {
  await sqs.send(
    new ChangeMessageVisibilityBatchCommand({
      QueueUrl: queueUrl,
      Entries: messages.map((message, index) => ({
        Id: String(index),
        ReceiptHandle: message.ReceiptHandle,
        VisibilityTimeout: 0,
      })),
    }),
  );
}

function ignoreExisting(error: unknown): void {
  const name = error instanceof Error ? error.name : '';
  if (name === 'AlreadyExistsException' || name === 'ResourceExistsException') return;
  throw error;
}

function localContext(): Context {
  return {
    awsRequestId: `local-email-${Date.now()}`,
    functionName: 'news-alerts-email',
    functionVersion: '$LATEST',
    invokedFunctionArn: 'arn:aws:lambda:us-east-1:000000000000:function:news-alerts-email',
    memoryLimitInMB: '512',
    logGroupName: '/aws/lambda/news-alerts-email',
    logStreamName: 'local',
    callbackWaitsForEmptyEventLoop: false,
    getRemainingTimeInMillis: () => 60_000,
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}
