/**
 * The email channel on the test run's moto server, wired as in the sandbox (sandbox/local-email.ts):
 * audience topics and items, the email queue subscribed to them, subscribers, and helpers to
 * publish real notifications through SNS, feed SES events to the events function, read what SES
 * was given (moto keeps the raw bytes) and call the preference endpoint over real HTTPS.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ScanCommand } from '@aws-sdk/client-dynamodb';
import { CreateTopicCommand, PublishCommand } from '@aws-sdk/client-sns';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { Agent, fetch } from 'undici';
import { inject } from 'vitest';
import type { EmailSender } from '#core/email/ports';
import type { Audience, AudienceMatch } from '#core/model';
import { AudienceSchema } from '#core/model';
import type { OutboundMessage } from '#core/ports';
import { renderNotification } from '#core/render';
import { handleEmailEvents } from '../../functions/email-events/process.ts';
import { type LocalEmail, startLocalEmail } from '../../sandbox/local-email.ts';
import { motoState } from '../../sandbox/moto.ts';
import { createTables, tableNamesFor } from '../../sandbox/tables.ts';
import { type AwsClients, awsClients, uniquePrefix } from './aws.ts';
import { PUBLISHED, testArticle, testRules } from './email-fixtures.ts';

export interface EmailTestStack {
  readonly aws: AwsClients;
  readonly prefix: string;
  readonly email: LocalEmail;
  /** The test's clock (the links are signed on its day). */
  readonly clock: { now: number };
  /** audienceId → topic ARN. */
  readonly topics: Map<string, string>;
  addAudience(overrides: Record<string, unknown> & { audienceId: string }): Promise<Audience>;
  /** Publishes a rendered message to its audience topic (moto hands it to the email queue at once). */
  publish(message: OutboundMessage): Promise<void>;
  /** Publishes an alert of a fresh article for `audience`. */
  publishAlert(audience: Audience, articleKey?: string): Promise<OutboundMessage>;
  /** Feeds SES events (event publishing JSON) to the events function. */
  sesEvents(...events: readonly Record<string, unknown>[]): Promise<void>;
  /** What moto's SES was given, for this stack's recipients. */
  sesRawMessages(): Promise<{ id: string; raw: string; destinations: string[] }[]>;
  /** Every item of the subscribers table (to prove a request changed nothing). */
  tableSnapshot(): Promise<string>;
  /** A request to the preference endpoint over HTTPS (the sandbox CA trusted, redirects not followed). */
  request(
    url: string,
    init?: { method?: string; body?: string; headers?: Record<string, string> },
  ): Promise<{ status: number; body: string; headers: Headers }>;
  stop(): Promise<void>;
}

export async function startEmailTestStack(
  options: { wrapSender?: (sender: EmailSender) => EmailSender; now?: number } = {},
): Promise<EmailTestStack> {
  const aws = awsClients();
  const prefix = uniquePrefix();
  const tables = tableNamesFor(prefix);
  await createTables(aws.dynamo, tables);
  const clock = { now: options.now ?? PUBLISHED + 3_600_000 };
  const ca = inject('sandboxCa');
  const email = await startLocalEmail({
    motoEndpoint: aws.endpoint,
    clients: aws,
    ca,
    prefix,
    audiencesTable: tables.audiences,
    topicNamePrefix: `${prefix}audience-`,
    mailDir: mkdtempSync(join(tmpdir(), 'news-alerts-mail-')),
    now: () => clock.now,
    log: { debug() {}, info() {}, warn() {}, error() {} },
    wrapSender: options.wrapSender,
  });
  const topics = new Map<string, string>();
  const dispatcher = new Agent({ connect: { ca: ca.cert } });
  let articleCount = 0;

  const stack: EmailTestStack = {
    aws,
    prefix,
    email,
    clock,
    topics,
    async addAudience(overrides) {
      const { TopicArn } = await aws.sns.send(
        new CreateTopicCommand({ Name: `${prefix}audience-${overrides.audienceId}` }),
      );
      if (!TopicArn) throw new Error('no topic');
      const audience = AudienceSchema.parse({ timeZone: 'UTC', ...overrides, topicArn: TopicArn });
      await aws.documents.send(
        new PutCommand({ TableName: tables.audiences, Item: { ...overrides, topicArn: TopicArn } }),
      );
      await email.subscribeTopic(TopicArn);
      topics.set(audience.audienceId, TopicArn);
      return audience;
    },
    async publish(message) {
      await aws.sns.send(
        new PublishCommand({
          TopicArn: message.topicArn,
          Message: message.body,
          MessageStructure: 'json',
          Subject: message.subject,
        }),
      );
    },
    async publishAlert(audience, articleKey) {
      articleCount += 1;
      const key = articleKey ?? `id:${prefix}${articleCount}`;
      const match: AudienceMatch = {
        audienceId: audience.audienceId,
        article: testArticle({
          key,
          id: key.slice(3),
          title: `Story ${articleCount}: rates move again`,
          publishedAt: PUBLISHED,
        }),
        rules: testRules,
      };
      const message = renderNotification(match, audience);
      await stack.publish(message);
      return message;
    },
    async sesEvents(...events) {
      await handleEmailEvents(
        {
          Records: events.map((event, index) => ({
            Sns: { MessageId: `event-${index}`, Message: JSON.stringify(event) },
          })),
        },
        { store: email.delivery.store, sending: undefined, log: email.delivery.log, now: () => clock.now },
      );
    },
    async sesRawMessages() {
      const dump = (await motoState(aws.endpoint)) as {
        ses?: { RawMessage?: { id: string; raw_data: string; destinations: string[] }[] };
      };
      const mine = new Set(email.sent.map((sent) => sent.providerMessageId));
      return (dump.ses?.RawMessage ?? [])
        .filter((message) => mine.has(message.id))
        .map((message) => ({ id: message.id, raw: message.raw_data, destinations: message.destinations }));
    },
    async tableSnapshot() {
      const { Items = [] } = await aws.dynamo.send(
        new ScanCommand({ TableName: email.subscribersTable, ConsistentRead: true }),
      );
      return JSON.stringify(Items.map((item) => stableJson(item)).sort());
    },
    async request(url, init = {}) {
      const response = await fetch(url, {
        method: init.method ?? 'GET',
        body: init.body,
        headers: init.headers,
        redirect: 'manual',
        dispatcher,
      });
      return { status: response.status, body: await response.text(), headers: response.headers as unknown as Headers };
    },
    async stop() {
      await email.stop();
      await dispatcher.close();
    },
  };
  return stack;
}

/** JSON with every object's keys in order, at every depth (two equal items give equal text). */
function stableJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(stableJson).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    return `{${Object.keys(value)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${stableJson((value as Record<string, unknown>)[key])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value);
}

/** SES's event JSON (event publishing through a configuration set) for a message the stack sent. */
export function sesEvent(
  type: 'Send' | 'Delivery' | 'Bounce' | 'Complaint' | 'DeliveryDelay' | 'Reject',
  sent: {
    readonly subscriberId: string;
    readonly messageKey: string;
    readonly raw: Uint8Array;
    readonly providerMessageId: string;
  },
  options: { readonly bounceType?: 'Permanent' | 'Transient'; readonly at?: number } = {},
): Record<string, unknown> {
  const raw = Buffer.from(sent.raw).toString('utf8');
  const to = /^To: (.+)$/m.exec(raw)?.[1]?.trim() ?? '';
  const timestamp = new Date(options.at ?? PUBLISHED).toISOString();
  const event: Record<string, unknown> = {
    eventType: type,
    mail: {
      timestamp,
      source: 'alerts@alerts.example.com',
      messageId: sent.providerMessageId,
      destination: [to],
      tags: { subscriber: [sent.subscriberId], message: [sent.messageKey], 'ses:configuration-set': ['test'] },
    },
  };
  if (type === 'Bounce') {
    event.bounce = {
      bounceType: options.bounceType ?? 'Permanent',
      bounceSubType: options.bounceType === 'Transient' ? 'MailboxFull' : 'General',
      bouncedRecipients: [
        {
          emailAddress: to,
          action: 'failed',
          status: '5.1.1',
          diagnosticCode: `smtp; 550 5.1.1 <${to}>: user unknown`,
        },
      ],
      timestamp,
      feedbackId: 'feedback',
    };
  }
  if (type === 'Complaint') {
    event.complaint = {
      complainedRecipients: [{ emailAddress: to }],
      timestamp,
      feedbackId: 'f',
      complaintFeedbackType: 'abuse',
    };
  }
  if (type === 'Delivery')
    event.delivery = {
      timestamp,
      recipients: [to],
      smtpResponse: '250 2.6.0 Message received',
      processingTimeMillis: 500,
    };
  if (type === 'DeliveryDelay')
    event.deliveryDelay = { timestamp, delayType: 'MailboxFull', delayedRecipients: [{ emailAddress: to }] };
  if (type === 'Reject') event.reject = { reason: 'Bad content' };
  return event;
}
