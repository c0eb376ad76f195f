/**
 * The local sandbox: the same resources the CDK stack creates in AWS (tables, one SNS topic per
 * audience with its subscriptions, the API-key secret), created in moto server, plus the news API
 * simulator and local HTTPS receivers, wired to the real alert run through the same composition
 * root as the Lambda handler. `npm start`, the end-to-end and fault tests, the benchmarks and the
 * CLI's `--local` mode all use it.
 *
 * Every audience topic also gets an "audit" SQS queue with raw delivery: it receives the
 * structured JSON body of every notification the audience was sent, which is how tests check that
 * nothing was lost or sent twice.
 *
 * With `publishMode: 'sharded'` it also creates the publisher's work queue and dead-letter queue
 * (the stack's redrive policy) and runs the publisher function in this process behind an emulated
 * SQS event source mapping (sandbox/sqs-event-source.ts; maximum concurrency 4, batches of 10, as
 * the stack's defaults), through the same composition roots as the Lambda handlers. `stop()`
 * finishes the publishers' batches in flight before it closes anything.
 */
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { CreateSecretCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { CreateTopicCommand, SNSClient, SubscribeCommand } from '@aws-sdk/client-sns';
import {
  CreateQueueCommand,
  DeleteMessageBatchCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient, PutCommand } from '@aws-sdk/lib-dynamodb';
import { type AlertRunConfig, loadAlertRunConfig } from '#alert-run/config';
import { type AlertRunWiring, createAlertRunDependencies } from '#alert-run/wiring';
import { type AlertRunDependencies, type RunSummary, runAlertCycle } from '#core/alert-run';
import { FALLBACK_LOCALE } from '#core/locale';
import { type LeaseHolder, type Log, type StateStore, silentLog } from '#core/ports';
import { exampleAudiences, exampleRules, type SandboxAudience } from './examples.ts';
import { type HttpsReceiver, startHttpsReceiver } from './https-receiver.ts';
import type { LocalEmail, LocalEmailOptions } from './local-email.ts';
import { localAwsConfig, motoState } from './moto.ts';
import { type NewsSimulator, type NewsSimulatorOptions, startNewsSimulator } from './news-simulator.ts';
import type { LocalEventSource, LocalEventSourceStats } from './sqs-event-source.ts';
import {
  createTables,
  createWorkQueues,
  tableNamesFor,
  type WorkQueues,
  workMaxReceiveCount,
  workVisibilityTimeoutSeconds,
} from './tables.ts';
import type { PemPair } from './tls.ts';

/**
 * The sandbox's default locale: cdk.json's `defaultLocale` (what a deploy from this checkout would
 * use), or `en-US` without a readable cdk.json (an installed CLI far from any checkout). The value
 * is validated where it is used, by the alert function's own cold-start check.
 */
export function projectDefaultLocale(cdkJson: URL | string = new URL('../cdk.json', import.meta.url)): string {
  let text: string;
  try {
    text = readFileSync(cdkJson, 'utf8');
  } catch {
    return FALLBACK_LOCALE;
  }
  let value: unknown;
  try {
    value = (JSON.parse(text) as { context?: { defaultLocale?: unknown } } | null)?.context?.defaultLocale;
  } catch (error) {
    throw new Error(`${String(cdkJson)} is not valid JSON (${(error as Error).message}); fix it or remove it`, {
      cause: error,
    });
  }
  return typeof value === 'string' ? value : FALLBACK_LOCALE;
}

/** A provider outside the sandbox (`npm start -- --provider-url ...`). */
export interface ExternalProvider {
  readonly url: string;
  /**
   * The API key the secret is created with; without it the secret is created empty, as the
   * stack creates it (`news-alerts --local api-key set` puts the key in).
   */
  readonly apiKey?: string | undefined;
  /** Extra CA (PEM) to trust for this provider. */
  readonly caPem?: string | undefined;
}

export interface LocalStackOptions {
  /** A running moto server that trusts `ca` for HTTPS subscriptions. */
  readonly motoEndpoint: string;
  /** The sandbox CA: signs the simulator's and receivers' certificates. */
  readonly ca: PemPair;
  /** Prefix of every resource name; tests pass a unique one. Default `news-alerts-local-`. */
  readonly prefix?: string;
  /** Use this provider instead of starting the simulator. */
  readonly provider?: ExternalProvider | undefined;
  /** Options of the simulator (ignored with `provider`). */
  readonly simulator?: Omit<NewsSimulatorOptions, 'ca'>;
  readonly audiences?: readonly SandboxAudience[];
  readonly rules?: readonly Readonly<Record<string, unknown>>[];
  /** Alert-function environment overrides (same variables as in Lambda). */
  readonly environment?: Readonly<Record<string, string>>;
  /** The run's clock; the simulator shares it unless its options say otherwise. */
  readonly now?: () => number;
  readonly log?: Log;
  /**
   * `sharded`: runs queue work items for an in-process publisher instead of publishing (see the
   * module comment). Default `single`, or what `environment.PUBLISH_MODE` says.
   */
  readonly publishMode?: PublishMode | undefined;
  /** Sharded only: the publisher's maximum concurrency (default {@link localPublisherConcurrency}). */
  readonly publisherConcurrency?: number | undefined;
  /**
   * The SES email channel (sandbox/local-email.ts): subscribers table, email queue on every
   * audience topic, moto's SES, the preference endpoint on loopback HTTPS, `.eml` files in
   * `mailDir`. Off when absent.
   */
  readonly email?: Pick<LocalEmailOptions, 'mailDir' | 'wrapSender' | 'port'> | undefined;
}

export type PublishMode = 'single' | 'sharded';

/** The stack's default `publisherConcurrency` (cdk.json). */
export const localPublisherConcurrency = 4;
/**
 * Not the stack's default (99, with a 1 s batching window): batches of ten need no window, so a
 * local run's few items are published at once instead of a second later. bench/publishing.ts
 * runs the stack's values.
 */
const localPublisherBatchSize = 10;

/** A sharded sandbox's work queues and the publisher draining them. */
export interface LocalPublishing {
  readonly queueUrl: string;
  readonly deadLetterQueueUrl: string;
  /** What the emulated event source mapping has done so far (invocations, records, failures). */
  stats(): LocalEventSourceStats;
}

/** One notification as an audience's topic delivered it (read from the audit queue). */
export interface DeliveredNotification {
  readonly audienceId: string;
  /**
   * `alert` (one article), `update` (an update notice about an article the audience already has:
   * `articleKey` is that article, `deliveryId` the notice's own) or `digest`.
   */
  readonly kind: 'alert' | 'update' | 'digest';
  readonly deliveryId: string;
  readonly articleKey: string;
  readonly title: string;
  readonly ruleIds: readonly string[];
  /** The structured JSON body (`sqs`/`https`/`lambda` protocols). */
  readonly body: Record<string, unknown>;
}

/** What one subscriber received, as its channel shows it. */
export interface SubscriberDelivery {
  readonly audienceId: string;
  readonly channel: 'email' | 'sms' | 'webhook' | 'slack';
  /** Where it went (an email address, phone number, or local receiver). */
  readonly endpoint: string;
  readonly subject?: string | undefined;
  readonly text: string;
}

export interface LocalStack {
  readonly config: AlertRunConfig;
  readonly clients: {
    readonly dynamo: DynamoDBClient;
    readonly documents: DynamoDBDocumentClient;
    readonly sns: SNSClient;
    readonly sqs: SQSClient;
    readonly secrets: SecretsManagerClient;
  };
  readonly dependencies: AlertRunWiring;
  readonly simulator: NewsSimulator | undefined;
  /** Local HTTPS endpoints: webhook audiences' subscriptions and the Slack stand-in. */
  readonly receivers: { readonly webhook: HttpsReceiver; readonly slack: HttpsReceiver };
  /** audienceId → topic ARN. */
  readonly topics: ReadonlyMap<string, string>;
  readonly secretId: string;
  /** `single`, or `sharded` with the work queues and the in-process publisher. */
  readonly publishMode: PublishMode;
  /** Sharded only. */
  readonly publishing: LocalPublishing | undefined;
  /** The SES email channel, when started with `email`. */
  readonly email: LocalEmail | undefined;
  /** Runs one alert cycle; `dependencies` replaces adapters (fault tests wrap them). */
  run(options?: {
    runId?: string;
    remainingTimeMs?: () => number;
    dependencies?: Partial<AlertRunDependencies>;
  }): Promise<RunSummary>;
  /** Notifications delivered to each audience since the last call, from the audit queues. */
  collectDeliveries(): Promise<DeliveredNotification[]>;
  /** What each subscriber received since the last call, rendered for its channel. */
  collectInbox(): Promise<SubscriberDelivery[]>;
  /** Adds audiences and rules after start (topics, subscriptions and items). */
  addAudience(audience: SandboxAudience): Promise<string>;
  putRules(rules: readonly Readonly<Record<string, unknown>>[]): Promise<void>;
  stop(): Promise<void>;
}

interface AudienceWiring {
  readonly audienceId: string;
  readonly topicArn: string;
  readonly auditQueueUrl: string;
  readonly subscribers: readonly SandboxSubscriber[];
  readonly slackQueueUrl?: string | undefined;
}

type SandboxSubscriber = SandboxAudience['subscribers'][number];

/** Creates the local stack and returns it ready to run. */
export async function startLocalStack(options: LocalStackOptions): Promise<LocalStack> {
  const prefix = options.prefix ?? 'news-alerts-local-';
  const aws = localAwsConfig(options.motoEndpoint);
  const dynamo = new DynamoDBClient(aws);
  const clients = {
    dynamo,
    documents: DynamoDBDocumentClient.from(dynamo, { marshallOptions: { removeUndefinedValues: true } }),
    sns: new SNSClient(aws),
    sqs: new SQSClient(aws),
    secrets: new SecretsManagerClient(aws),
  };
  const now = options.now ?? Date.now;
  const simulator = options.provider
    ? undefined
    : await startNewsSimulator({ now, ...options.simulator, ca: options.ca });
  const provider: ExternalProvider = options.provider ?? {
    url: (simulator as NewsSimulator).url,
    apiKey: (simulator as NewsSimulator).liveKey,
    caPem: options.ca.cert,
  };
  const webhook = await startHttpsReceiver(options.ca);
  const slack = await startHttpsReceiver(options.ca);

  const tables = tableNamesFor(prefix);
  await createTables(dynamo, tables);
  const publishMode: PublishMode =
    options.publishMode ?? (options.environment?.PUBLISH_MODE === 'sharded' ? 'sharded' : 'single');
  const workQueues = publishMode === 'sharded' ? await createWorkQueues(clients.sqs, prefix) : undefined;
  const secretId = `${prefix}news-api-key`;
  await clients.secrets.send(
    new CreateSecretCommand({
      Name: secretId,
      ...(provider.apiKey !== undefined ? { SecretString: provider.apiKey } : {}),
    }),
  );

  const alertEnvironment: Record<string, string> = {
    NEWS_API_BASE_URL: provider.url,
    // The simulator listens on loopback: the explicit override of the target-address policy.
    NEWS_API_ALLOW_INTERNAL_TARGET: 'true',
    NEWS_API_KEY_SECRET_ID: secretId,
    // The simulator's zone is known; an outside provider's is whatever the caller's environment
    // says (a guess would read its zone-less timestamps hours off).
    ...(simulator ? { NEWS_API_TIME_ZONE: simulator.timeZone } : {}),
    ...(provider.caPem ? { NEWS_API_CA_PEM: provider.caPem } : {}),
    RULES_TABLE_NAME: tables.rules,
    AUDIENCES_TABLE_NAME: tables.audiences,
    STATE_TABLE_NAME: tables.state,
    // Locally there is no reason to wait long between retries.
    NEWS_API_BASE_DELAY_MS: '20',
    NEWS_API_MAX_DELAY_MS: '500',
    DEFAULT_LOCALE: projectDefaultLocale(),
    ...options.environment,
    ...(workQueues ? { PUBLISH_MODE: 'sharded', WORK_QUEUE_URL: workQueues.queueUrl } : {}),
  };
  const config = loadAlertRunConfig(alertEnvironment);
  const log = options.log ?? silentLog;
  // Sharded: the wiring builds the run's work queue and dispatch store from WORK_QUEUE_URL.
  const dependencies = createAlertRunDependencies(config, clients, log, { now });
  const publisher = workQueues
    ? await startPublisher({
        clients,
        queues: workQueues,
        environment: alertEnvironment,
        log,
        now,
        concurrency: options.publisherConcurrency,
      })
    : undefined;

  // Loaded only when asked for: a sandbox without email never loads SES or the preference endpoint.
  const email = options.email
    ? await (await import('./local-email.ts')).startLocalEmail({
        ...options.email,
        motoEndpoint: options.motoEndpoint,
        clients,
        ca: options.ca,
        prefix,
        audiencesTable: tables.audiences,
        topicNamePrefix: `${prefix}audience-`,
        defaultLocale: alertEnvironment.DEFAULT_LOCALE,
        now,
        log,
      })
    : undefined;

  const audiences = new Map<string, AudienceWiring>();
  const topics = new Map<string, string>();
  const seenNotifications = new Map<string, Set<string>>();

  async function createQueue(name: string, topicArn: string): Promise<string> {
    const { QueueUrl } = await clients.sqs.send(new CreateQueueCommand({ QueueName: name }));
    if (!QueueUrl) throw new Error(`moto did not return a URL for queue ${name}`);
    const attributes = await clients.sqs.send(
      new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ['QueueArn'] }),
    );
    await clients.sns.send(
      new SubscribeCommand({
        TopicArn: topicArn,
        Protocol: 'sqs',
        Endpoint: attributes.Attributes?.QueueArn,
        Attributes: { RawMessageDelivery: 'true' },
      }),
    );
    return QueueUrl;
  }

  async function addAudience(audience: SandboxAudience): Promise<string> {
    const { audienceId } = audience.item;
    const { TopicArn } = await clients.sns.send(new CreateTopicCommand({ Name: `${prefix}audience-${audienceId}` }));
    if (!TopicArn) throw new Error(`moto did not return an ARN for the topic of ${audienceId}`);
    const auditQueueUrl = await createQueue(`${prefix}audit-${audienceId}`, TopicArn);
    let slackQueueUrl: string | undefined;
    for (const subscriber of audience.subscribers) {
      if (subscriber.protocol === 'email' || subscriber.protocol === 'sms') {
        await clients.sns.send(
          new SubscribeCommand({ TopicArn, Protocol: subscriber.protocol, Endpoint: subscriber.endpoint }),
        );
      } else if (subscriber.protocol === 'webhook') {
        await clients.sns.send(
          new SubscribeCommand({ TopicArn, Protocol: 'https', Endpoint: `${webhook.url}/${audienceId}` }),
        );
      } else {
        slackQueueUrl = await createQueue(`${prefix}slack-${audienceId}`, TopicArn);
      }
    }
    await clients.documents.send(
      new PutCommand({ TableName: tables.audiences, Item: { ...audience.item, topicArn: TopicArn } }),
    );
    if (email) {
      await email.subscribeTopic(TopicArn);
      const { name, locale } = audience.item as { name?: string; locale?: string };
      for (const subscriber of audience.emailSubscribers ?? []) {
        await email.addSubscriber(audienceId, subscriber, { name, locale });
      }
    }
    audiences.set(audienceId, {
      audienceId,
      topicArn: TopicArn,
      auditQueueUrl,
      subscribers: audience.subscribers,
      slackQueueUrl,
    });
    topics.set(audienceId, TopicArn);
    return TopicArn;
  }

  async function putRules(rules: readonly Readonly<Record<string, unknown>>[]): Promise<void> {
    for (const rule of rules) {
      await clients.documents.send(new PutCommand({ TableName: tables.rules, Item: { ...rule } }));
    }
  }

  for (const audience of options.audiences ?? exampleAudiences) await addAudience(audience);
  await putRules(options.rules ?? exampleRules);

  let runCount = 0;
  return {
    config,
    clients,
    dependencies,
    simulator,
    receivers: { webhook, slack },
    topics,
    secretId,
    publishMode,
    email,
    publishing:
      workQueues && publisher
        ? {
            queueUrl: workQueues.queueUrl,
            deadLetterQueueUrl: workQueues.deadLetterQueueUrl,
            stats: () => publisher.stats(),
          }
        : undefined,
    addAudience,
    putRules,
    async run(runOptions = {}) {
      runCount += 1;
      const wired = { ...dependencies, ...runOptions.dependencies };
      const summary = await runAlertCycle({ ...wired, state: withHolder(wired.state) }, config.run, {
        runId: runOptions.runId ?? `local-run-${runCount}`,
        remainingTimeMs: runOptions.remainingTimeMs ?? (() => 15 * 60_000),
      });
      // What the run published reached the email queue at once (moto delivers inside Publish).
      await email?.deliver();
      return summary;
    },
    async collectDeliveries() {
      const delivered: DeliveredNotification[] = [];
      for (const wiring of audiences.values()) {
        for (const body of await drainQueue(clients.sqs, wiring.auditQueueUrl)) {
          delivered.push(toDelivered(wiring.audienceId, body));
        }
      }
      return delivered;
    },
    async collectInbox() {
      const inbox: SubscriberDelivery[] = [];
      const sent = await sentNotifications(options.motoEndpoint);
      for (const wiring of audiences.values()) {
        const seen = seenNotifications.get(wiring.topicArn) ?? new Set<string>();
        seenNotifications.set(wiring.topicArn, seen);
        const fresh = (sent.get(wiring.topicArn) ?? []).filter((notification) => !seen.has(notification.messageId));
        for (const notification of fresh) seen.add(notification.messageId);
        for (const subscriber of wiring.subscribers) {
          if (subscriber.protocol === 'email' || subscriber.protocol === 'sms') {
            for (const notification of fresh) {
              inbox.push({
                audienceId: wiring.audienceId,
                channel: subscriber.protocol,
                endpoint: subscriber.endpoint,
                subject: subscriber.protocol === 'email' ? notification.subject : undefined,
                text: pickProtocol(notification.message, subscriber.protocol),
              });
            }
          } else if (subscriber.protocol === 'webhook') {
            for (const request of webhook.received.filter((r) => r.path === `/${wiring.audienceId}`)) {
              if (seen.has(`webhook:${request.body}`)) continue;
              seen.add(`webhook:${request.body}`);
              inbox.push({
                audienceId: wiring.audienceId,
                channel: 'webhook',
                endpoint: 'local HTTPS receiver',
                text: webhookPayload(request.body),
              });
            }
          } else if (wiring.slackQueueUrl) {
            for (const body of await drainQueue(clients.sqs, wiring.slackQueueUrl)) {
              inbox.push({
                audienceId: wiring.audienceId,
                channel: 'slack',
                endpoint: 'local Slack receiver',
                text: body,
              });
            }
          }
        }
      }
      return inbox;
    },
    async stop() {
      // The publishers' batches in flight finish (and are acknowledged) before the clients close.
      await publisher?.stop();
      await email?.stop();
      await dependencies.news.close();
      await Promise.all([simulator?.stop(), webhook.stop(), slack.stop()]);
      dynamo.destroy();
      clients.sns.destroy();
      clients.sqs.destroy();
      clients.secrets.destroy();
    },
  };
}

/**
 * The publisher function of a sharded sandbox, in this process: its Lambda handler's record
 * processing (Powertools batch and idempotency, on the state table), wired by its own composition
 * root from the variables the stack gives it, behind the emulated SQS event source mapping with
 * the stack's maxReceiveCount and visibility timeout.
 */
async function startPublisher(options: {
  readonly clients: LocalStack['clients'];
  readonly queues: WorkQueues;
  /** The alert function's variables: the publisher shares the state table and delivery settings. */
  readonly environment: Readonly<Record<string, string | undefined>>;
  readonly log: Log;
  readonly now: () => number;
  readonly concurrency: number | undefined;
}): Promise<LocalEventSource> {
  // Loaded in sharded mode only: a single-mode sandbox never loads the publisher.
  const [
    { loadPublisherConfig },
    { createPublisherDependencies },
    { createWorkItemHandler },
    { startLocalEventSource },
  ] = await Promise.all([
    import('../functions/publisher/config.ts'),
    import('../functions/publisher/wiring.ts'),
    import('../functions/publisher/process.ts'),
    import('./sqs-event-source.ts'),
  ]);
  const { clients, log, now } = options;
  const config = loadPublisherConfig({ ...options.environment, WORK_MAX_RECEIVE_COUNT: String(workMaxReceiveCount) });
  const handler = createWorkItemHandler(createPublisherDependencies(config, clients, log, { now }));
  return startLocalEventSource({
    client: clients.sqs,
    queueUrl: options.queues.queueUrl,
    handler,
    concurrency: options.concurrency ?? localPublisherConcurrency,
    batchSize: localPublisherBatchSize,
    visibilityTimeoutSeconds: workVisibilityTimeoutSeconds,
    log,
  });
}

/**
 * The state store with this process named as the lease holder (host and pid), so `watermark
 * show` says who holds the lease and `lease release` can tell when that process is gone.
 */
function withHolder(state: StateStore): StateStore {
  const holder = { host: hostname(), pid: process.pid };
  return new Proxy(state, {
    get(target, property, receiver) {
      if (property === 'acquireLease') {
        return (owner: string, durationMs: number, now: number, given?: LeaseHolder) =>
          target.acquireLease(owner, durationMs, now, given ?? holder);
      }
      const value = Reflect.get(target, property, receiver);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

/** Receives and deletes every message of a queue. */
async function drainQueue(sqs: SQSClient, queueUrl: string): Promise<string[]> {
  const bodies: string[] = [];
  for (;;) {
    const { Messages = [] } = await sqs.send(
      new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10, VisibilityTimeout: 600 }),
    );
    if (Messages.length === 0) return bodies;
    for (const message of Messages) bodies.push(message.Body ?? '');
    await sqs.send(
      new DeleteMessageBatchCommand({
        QueueUrl: queueUrl,
        Entries: Messages.map((message, index) => ({ Id: String(index), ReceiptHandle: message.ReceiptHandle })),
      }),
    );
  }
}

/** A notification as an audit queue holds it (the `sqs` body of the message), for the checks. */
export function toDelivered(audienceId: string, raw: string): DeliveredNotification {
  const body = JSON.parse(raw) as Record<string, unknown>;
  const details = (body.newsAlerts ?? {}) as {
    kind?: string;
    update?: unknown;
    deliveryId?: string;
    article?: { key?: string; title?: string };
    matches?: { ruleId?: string }[];
  };
  return {
    audienceId,
    kind:
      details.kind === 'digest'
        ? 'digest'
        : details.update === undefined || details.update === null
          ? 'alert'
          : 'update',
    deliveryId: details.deliveryId ?? '',
    articleKey: details.article?.key ?? '',
    title: details.article?.title ?? '',
    ruleIds: (details.matches ?? []).map((match) => match.ruleId ?? ''),
    body,
  };
}

interface SentNotification {
  readonly messageId: string;
  readonly message: string;
  readonly subject: string | undefined;
}

/** moto keeps every message published to a topic; it is the only way to see email and SMS. */
async function sentNotifications(endpoint: string): Promise<Map<string, SentNotification[]>> {
  const dump = (await motoState(endpoint)) as {
    sns?: { Topic?: { arn: string; sent_notifications?: [string, string, string | null, ...unknown[]][] }[] };
  };
  const byTopic = new Map<string, SentNotification[]>();
  for (const topic of dump.sns?.Topic ?? []) {
    byTopic.set(
      topic.arn,
      (topic.sent_notifications ?? []).map(([messageId, message, subject]) => ({
        messageId,
        message,
        subject: subject ?? undefined,
      })),
    );
  }
  return byTopic;
}

/** What SNS sends a subscriber of `protocol` for a `MessageStructure: json` message. */
function pickProtocol(message: string, protocol: string): string {
  try {
    const structure = JSON.parse(message) as Record<string, unknown>;
    const body = structure[protocol] ?? structure.default;
    return typeof body === 'string' ? body : message;
  } catch {
    return message;
  }
}

/** moto posts the SNS envelope to HTTPS subscribers; the notification is its `Message`. */
function webhookPayload(body: string): string {
  try {
    const envelope = JSON.parse(body) as { Message?: unknown };
    return typeof envelope.Message === 'string' ? envelope.Message : body;
  } catch {
    return body;
  }
}
