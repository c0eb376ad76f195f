/**
 * SnsNotifier against moto server through the real SNS and SQS clients. Delivery is read where
 * subscribers would see it: SQS queues subscribed with raw message delivery, and moto's record of
 * each topic's notifications for email and SMS subscribers. Batch sizes are counted, and SNS's
 * per-entry and whole-call failures injected, by middleware on the real client
 * (test/support/sns-faults.ts).
 */
import { CreateTopicCommand, SubscribeCommand } from '@aws-sdk/client-sns';
import { CreateQueueCommand, GetQueueAttributesCommand, ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import { describe, expect, it, onTestFinished } from 'vitest';
import { SnsNotifier, type SnsNotifierOptions } from '#aws/sns-notifier';
import { type Audience, AudienceSchema, type RuleMatch } from '#core/model';
import { deliveryId, type Log, type OutboundMessage, type PublishedMessage } from '#core/ports';
import { renderNotification } from '#core/render';
import { motoState, startMoto } from '#sandbox/moto';
import { type AwsClients, awsClients, uniquePrefix } from '#test/aws';
import { deliveryIdOf, failCalls, failDeliveries, installSnsFaults, snsErrors } from '#test/sns-faults';

const silentLog: Log = { debug() {}, info() {}, warn() {}, error() {} };

const rules: RuleMatch[] = [
  { ruleId: 'rates', description: 'Rate decisions', urgent: false, reasons: [{ kind: 'keyword', term: 'rates' }] },
];

interface AudienceTopic {
  readonly audience: Audience;
  readonly queueUrl: string;
}

/** A topic for one audience with an SQS queue subscribed to it (raw delivery: the queue gets the `sqs` body). */
async function audienceTopic(clients: AwsClients, prefix: string, audienceId: string): Promise<AudienceTopic> {
  const { TopicArn } = await clients.sns.send(new CreateTopicCommand({ Name: `${prefix}${audienceId}` }));
  const { QueueUrl } = await clients.sqs.send(new CreateQueueCommand({ QueueName: `${prefix}${audienceId}` }));
  const { Attributes } = await clients.sqs.send(
    new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ['QueueArn'] }),
  );
  await clients.sns.send(
    new SubscribeCommand({
      TopicArn,
      Protocol: 'sqs',
      Endpoint: Attributes?.QueueArn,
      Attributes: { RawMessageDelivery: 'true' },
    }),
  );
  return { audience: audienceFor(audienceId, TopicArn ?? ''), queueUrl: QueueUrl ?? '' };
}

const audienceFor = (audienceId: string, topicArn: string): Audience =>
  AudienceSchema.parse({ audienceId, name: `Audience ${audienceId}`, topicArn, timeZone: 'Asia/Seoul' });

/** `count` rendered notifications for one audience, articles `<from>`...`<from+count-1>`. */
function messagesFor(audience: Audience, count: number, options: { from?: number; title?: string } = {}) {
  const from = options.from ?? 0;
  return Array.from({ length: count }, (_, index) =>
    renderNotification(
      {
        audienceId: audience.audienceId,
        article: {
          key: `id:${from + index}`,
          id: String(from + index),
          title: options.title ?? `Article ${from + index}: rates move`,
          summary: 'Summary.',
          url: `https://news.example.com/a/${from + index}`,
          publishedAt: Date.UTC(2025, 2, 14, 0, 30),
          categories: ['002000000'],
          categoryNames: ['Economy'],
        },
        rules,
      },
      audience,
    ),
  );
}

/** Every message body in the queue (moto delivers during Publish, so nothing is in flight). */
async function drain(clients: AwsClients, queueUrl: string): Promise<string[]> {
  const bodies: string[] = [];
  for (;;) {
    const { Messages } = await clients.sqs.send(
      new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10, VisibilityTimeout: 300 }),
    );
    if (!Messages || Messages.length === 0) return bodies;
    for (const message of Messages) bodies.push(message.Body ?? '');
  }
}

/** How often each delivery id arrived in a queue. */
function deliveryCounts(bodies: readonly string[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const body of bodies) {
    const id = (JSON.parse(body) as { newsAlerts: { deliveryId: string } }).newsAlerts.deliveryId;
    counts.set(id, (counts.get(id) ?? 0) + 1);
  }
  return counts;
}

const sqsBody = (message: OutboundMessage) =>
  ((document) => document.sqs ?? document.default)(JSON.parse(message.body) as Record<string, string>);
const idOf = (message: OutboundMessage) => deliveryId(message.key);

/** A notifier on the real client whose backoff waits are recorded instead of slept. */
function notifierFor(clients: AwsClients, options: Partial<SnsNotifierOptions> = {}) {
  const sleeps: number[] = [];
  const notifier = new SnsNotifier({
    client: clients.sns,
    log: silentLog,
    random: () => 0.5,
    sleep: async (ms) => {
      sleeps.push(ms);
    },
    ...options,
  });
  return { notifier, sleeps };
}

/** An `onPublished` that records every batch it is given. */
function recorder() {
  const batches: PublishedMessage[][] = [];
  return {
    batches,
    onPublished: async (batch: readonly PublishedMessage[]) => {
      batches.push([...batch]);
    },
  };
}

describe('SnsNotifier delivery', () => {
  it("delivers each audience's messages to its own topic: every queue gets exactly its sqs bodies", async () => {
    const clients = awsClients();
    const prefix = uniquePrefix();
    const markets = await audienceTopic(clients, prefix, 'markets');
    const politics = await audienceTopic(clients, prefix, 'politics');
    const forMarkets = messagesFor(markets.audience, 3);
    const forPolitics = messagesFor(politics.audience, 2, { from: 100 });
    const { notifier } = notifierFor(clients);
    const record = recorder();

    const outcome = await notifier.publish(
      [forMarkets[0]!, forPolitics[0]!, forMarkets[1]!, forPolitics[1]!, forMarkets[2]!],
      record,
    );

    expect(outcome.failed).toEqual([]);
    expect(outcome.published).toHaveLength(5);
    for (const published of outcome.published) expect(published.messageId).toMatch(/\S/);
    expect(
      record.batches
        .flat()
        .map((p) => idOf(p.message))
        .sort(),
    ).toEqual([...forMarkets, ...forPolitics].map(idOf).sort());
    expect((await drain(clients, markets.queueUrl)).sort()).toEqual(forMarkets.map(sqsBody).sort());
    expect((await drain(clients, politics.queueUrl)).sort()).toEqual(forPolitics.map(sqsBody).sort());
  });

  it('publishes one document from which email and SMS subscribers get their own body and the subject', async () => {
    // A moto server of its own: its state dump (the only place email and SMS texts show) then holds
    // this test's topic only, not what every other file of the run writes meanwhile.
    const moto = await startMoto();
    onTestFinished(() => moto.stop());
    const clients = awsClients(moto.endpoint);
    onTestFinished(() => {
      for (const client of [clients.dynamo, clients.sns, clients.sqs, clients.secrets]) client.destroy();
    });
    const prefix = uniquePrefix();
    const { TopicArn = '' } = await clients.sns.send(new CreateTopicCommand({ Name: `${prefix}people` }));
    await clients.sns.send(new SubscribeCommand({ TopicArn, Protocol: 'email', Endpoint: 'desk@example.com' }));
    await clients.sns.send(new SubscribeCommand({ TopicArn, Protocol: 'sms', Endpoint: '+15555550123' }));
    const audience = audienceFor('people', TopicArn);
    const messages = messagesFor(audience, 2, { title: '한국은행 기준금리 인상… 물가 잡기 총력' });
    const { notifier } = notifierFor(clients);

    const outcome = await notifier.publish(messages, recorder());
    expect(outcome.failed).toEqual([]);

    // moto keeps each topic's notifications as [messageId, message, subject, attributes, groupId].
    const dump = (await motoState(clients.endpoint)) as {
      sns: { Topic: { arn: string; sent_notifications: [string, string, string | null, unknown, unknown][] }[] };
    };
    const sent = dump.sns.Topic.find((topic) => topic.arn === TopicArn)?.sent_notifications ?? [];
    expect(sent).toHaveLength(2);
    for (const [index, message] of messages.entries()) {
      const published = outcome.published.find((p) => p.message === message);
      const notification = sent.find(([messageId]) => messageId === published?.messageId);
      expect(notification).toBeDefined();
      const [, stored, subject] = notification!;
      expect(stored).toBe(message.body);
      expect(subject).toBe('[Audience people] 한국은행 기준금리 인상… 물가 잡기 총력');
      // SNS hands each subscriber document[protocol], or document.default when there is none.
      const document = JSON.parse(stored) as Record<string, string>;
      const forEmail = document.email ?? document.default ?? '';
      const forSms = document.sms ?? document.default ?? '';
      expect(forEmail.startsWith('한국은행 기준금리 인상… 물가 잡기 총력\n')).toBe(true);
      expect(forEmail).toContain('Published:  Fri, Mar 14, 2025, 09:30 (Asia/Seoul, UTC+09:00)');
      expect(forEmail).toContain('Why you got this:\n- Rule rates: Rate decisions\n  Matched keyword "rates"');
      expect(forSms).toBe(`한국은행 기준금리 인상… 물가 잡기 총력 https://news.example.com/a/${index}`);
    }
  });
});

describe('SnsNotifier batch packing', () => {
  it('sends 25 messages to one topic in 3 PublishBatch calls of 10, 10 and 5', async () => {
    const clients = awsClients();
    const topic = await audienceTopic(clients, uniquePrefix(), 'markets');
    const faults = installSnsFaults(clients.sns);
    const { notifier } = notifierFor(clients);
    const record = recorder();

    const outcome = await notifier.publish(messagesFor(topic.audience, 25), record);

    expect(outcome.published).toHaveLength(25);
    expect(faults.calls.map((call) => call.entries)).toEqual([10, 10, 5]);
    expect(record.batches.map((batch) => batch.length)).toEqual([10, 10, 5]);
    expect(await drain(clients, topic.queueUrl)).toHaveLength(25);
  });

  it('splits large Korean bodies by UTF-8 bytes, which moto does not check', async () => {
    const clients = awsClients();
    const topic = await audienceTopic(clients, uniquePrefix(), 'markets');
    // ~100 KB of UTF-8 but only ~33,000 characters each: three fit moto's character count, not SNS's bytes.
    const big = messagesFor(topic.audience, 6).map((message): OutboundMessage => {
      const document = JSON.parse(message.body) as Record<string, string>;
      const structured = JSON.parse(document.sqs ?? document.default ?? '') as Record<string, unknown>;
      const padded = JSON.stringify({ ...structured, padding: '가'.repeat(33_000) });
      return { ...message, body: JSON.stringify({ default: document.default, sqs: padded }) };
    });
    for (const message of big) expect(Buffer.byteLength(message.body)).toBeGreaterThan(99_000);
    const faults = installSnsFaults(clients.sns);
    const { notifier } = notifierFor(clients);

    const outcome = await notifier.publish(big, recorder());

    expect(outcome.failed).toEqual([]);
    expect(faults.calls.map((call) => call.entries)).toEqual([2, 2, 2]);
    for (const call of faults.calls) {
      expect(call.entries).toBeLessThanOrEqual(10);
      expect(call.bytes).toBeLessThanOrEqual(262_144);
    }
    expect(deliveryCounts(await drain(clients, topic.queueUrl))).toEqual(new Map(big.map((m) => [idOf(m), 1])));
  });

  it('reports a message over 256 KiB as permanently failed without sending it', async () => {
    const clients = awsClients();
    const topic = await audienceTopic(clients, uniquePrefix(), 'markets');
    const [ok, tooBig] = messagesFor(topic.audience, 2);
    const oversized: OutboundMessage = {
      ...tooBig!,
      body: JSON.stringify({ default: 'x', sqs: '한'.repeat(90_000) }),
    };
    const faults = installSnsFaults(clients.sns);
    const { notifier } = notifierFor(clients);

    const outcome = await notifier.publish([ok!, oversized], recorder());

    expect(outcome.published.map((p) => p.message)).toEqual([ok]);
    expect(outcome.failed).toMatchObject([{ message: oversized, code: 'MessageTooLarge', permanent: true }]);
    expect(faults.calls.map((call) => call.entries)).toEqual([1]);
  });
});

describe('SnsNotifier failures', () => {
  it('retries entries SNS failed with SenderFault false and delivers each exactly once', async () => {
    const clients = awsClients();
    const topic = await audienceTopic(clients, uniquePrefix(), 'markets');
    const messages = messagesFor(topic.audience, 10);
    const flaky = [messages[1]!, messages[4]!, messages[8]!].map(idOf);
    const faults = installSnsFaults(clients.sns, {
      entryFault: failDeliveries(flaky, { code: 'InternalError', senderFault: false }),
    });
    const { notifier, sleeps } = notifierFor(clients);
    const record = recorder();

    const outcome = await notifier.publish(messages, record);

    expect(outcome.failed).toEqual([]);
    expect(outcome.published).toHaveLength(10);
    expect(faults.calls.map((call) => call.entries)).toEqual([10, 3]);
    expect(faults.calls[0]?.failedDeliveryIds).toEqual(flaky);
    expect(faults.calls[1]?.deliveryIds).toEqual(flaky);
    expect(record.batches.map((batch) => batch.length)).toEqual([7, 3]);
    expect(sleeps).toEqual([75]);
    const counts = deliveryCounts(await drain(clients, topic.queueUrl));
    expect(counts).toEqual(new Map(messages.map((m) => [idOf(m), 1])));
  });

  it('reports entries SNS failed with SenderFault true as permanent and never delivers them', async () => {
    const clients = awsClients();
    const topic = await audienceTopic(clients, uniquePrefix(), 'markets');
    const messages = messagesFor(topic.audience, 5);
    const rejected = [messages[0]!, messages[3]!];
    const faults = installSnsFaults(clients.sns, {
      entryFault: failDeliveries(rejected.map(idOf), { code: 'InvalidParameter', senderFault: true }, 99),
    });
    const { notifier } = notifierFor(clients);

    const outcome = await notifier.publish(messages, recorder());

    expect(outcome.published).toHaveLength(3);
    expect(outcome.failed).toHaveLength(2);
    for (const failure of outcome.failed) {
      expect(failure).toMatchObject({ code: 'InvalidParameter', permanent: true });
    }
    expect(outcome.failed.map((f) => f.message)).toEqual(rejected);
    expect(faults.calls).toHaveLength(1);
    const counts = deliveryCounts(await drain(clients, topic.queueUrl));
    expect([...counts.keys()].sort()).toEqual(
      messages
        .filter((m) => !rejected.includes(m))
        .map(idOf)
        .sort(),
    );
  });

  it('fails a missing topic permanently while other topics still deliver', async () => {
    const clients = awsClients();
    const prefix = uniquePrefix();
    const present = await audienceTopic(clients, prefix, 'present');
    const missing = audienceFor('missing', `arn:aws:sns:us-east-1:123456789012:${prefix}never-created`);
    const good = messagesFor(present.audience, 12);
    const lost = messagesFor(missing, 3);
    const { notifier, sleeps } = notifierFor(clients);

    const outcome = await notifier.publish([...lost, ...good], recorder());

    expect(outcome.published.map((p) => p.message).sort((a, b) => idOf(a).localeCompare(idOf(b)))).toEqual(
      [...good].sort((a, b) => idOf(a).localeCompare(idOf(b))),
    );
    expect(outcome.failed).toHaveLength(3);
    for (const failure of outcome.failed) expect(failure).toMatchObject({ code: 'NotFound', permanent: true });
    expect(sleeps).toEqual([]);
    expect(await drain(clients, present.queueUrl)).toHaveLength(12);
  });

  it('retries a throttled or failed call with growing backoff and delivers once', async () => {
    const clients = awsClients();
    const topic = await audienceTopic(clients, uniquePrefix(), 'markets');
    const messages = messagesFor(topic.audience, 4);
    const faults = installSnsFaults(clients.sns, {
      callFault: failCalls(snsErrors.throttled, snsErrors.internal, snsErrors.network),
    });
    const { notifier, sleeps } = notifierFor(clients);

    const outcome = await notifier.publish(messages, recorder());

    expect(outcome.failed).toEqual([]);
    expect(faults.calls.map((call) => call.thrown)).toEqual([
      'ThrottledException',
      'InternalErrorException',
      'Error',
      undefined,
    ]);
    // Equal jitter with random() = 0.5: three quarters of 100, 200 and 400 ms.
    expect(sleeps).toEqual([75, 150, 300]);
    expect(deliveryCounts(await drain(clients, topic.queueUrl))).toEqual(new Map(messages.map((m) => [idOf(m), 1])));
  });

  it('gives up after maxAttempts and reports the batch as retryable (permanent: false)', async () => {
    const clients = awsClients();
    const topic = await audienceTopic(clients, uniquePrefix(), 'markets');
    const messages = messagesFor(topic.audience, 3);
    const faults = installSnsFaults(clients.sns, { callFault: () => snsErrors.throttled() });
    const { notifier } = notifierFor(clients, { maxAttempts: 3 });

    const outcome = await notifier.publish(messages, recorder());

    expect(outcome.published).toEqual([]);
    expect(outcome.failed.map((f) => f.message)).toEqual(messages);
    for (const failure of outcome.failed) expect(failure).toMatchObject({ code: 'Throttled', permanent: false });
    expect(faults.calls).toHaveLength(3);
    expect(await drain(clients, topic.queueUrl)).toEqual([]);
  });

  it('treats a disabled KMS key as permanent for every entry of the batch', async () => {
    const clients = awsClients();
    const topic = await audienceTopic(clients, uniquePrefix(), 'markets');
    const messages = messagesFor(topic.audience, 4);
    const faults = installSnsFaults(clients.sns, { callFault: failCalls(snsErrors.kmsDisabled) });
    const { notifier, sleeps } = notifierFor(clients);

    const outcome = await notifier.publish(messages, recorder());

    expect(outcome.failed).toHaveLength(4);
    for (const failure of outcome.failed) expect(failure).toMatchObject({ code: 'KMSDisabled', permanent: true });
    expect(faults.calls).toHaveLength(1);
    expect(sleeps).toEqual([]);
  });

  it('retries entries moto silently drops and reports them retryable when they never come back', async () => {
    // moto neither accepts nor rejects an entry whose subject is over 100 characters: a real
    // "no result" case. It must not count as published.
    const clients = awsClients();
    const topic = await audienceTopic(clients, uniquePrefix(), 'markets');
    const [ok, dropped] = messagesFor(topic.audience, 2);
    const badSubject: OutboundMessage = { ...dropped!, subject: 's'.repeat(101) };
    const faults = installSnsFaults(clients.sns);
    const { notifier } = notifierFor(clients, { maxAttempts: 2 });

    const outcome = await notifier.publish([ok!, badSubject], recorder());

    expect(outcome.published.map((p) => p.message)).toEqual([ok]);
    expect(outcome.failed).toMatchObject([{ message: badSubject, code: 'MissingResult', permanent: false }]);
    expect(faults.calls.map((call) => call.entries)).toEqual([2, 1]);
  });
});

describe('SnsNotifier stopping', () => {
  it('stops sending when onPublished throws, and rethrows its error', async () => {
    const clients = awsClients();
    const topic = await audienceTopic(clients, uniquePrefix(), 'markets');
    const faults = installSnsFaults(clients.sns);
    const { notifier } = notifierFor(clients, { concurrency: 1 });
    const ledgerDown = new Error('ledger write failed');

    await expect(
      notifier.publish(messagesFor(topic.audience, 30), {
        onPublished: async () => {
          throw ledgerDown;
        },
      }),
    ).rejects.toBe(ledgerDown);

    expect(faults.calls).toHaveLength(1);
    expect(await drain(clients, topic.queueUrl)).toHaveLength(10);
  });

  it('lets batches already in flight on other topics finish and still confirms them', async () => {
    const clients = awsClients();
    const prefix = uniquePrefix();
    const first = await audienceTopic(clients, prefix, 'first');
    const second = await audienceTopic(clients, prefix, 'second');
    const faults = installSnsFaults(clients.sns);
    const { notifier } = notifierFor(clients, { concurrency: 2 });
    const confirmed: number[] = [];
    const ledgerDown = new Error('ledger write failed');

    await expect(
      notifier.publish([...messagesFor(first.audience, 20), ...messagesFor(second.audience, 20, { from: 100 })], {
        onPublished: async (batch) => {
          confirmed.push(batch.length);
          if (confirmed.length === 1) throw ledgerDown;
        },
      }),
    ).rejects.toBe(ledgerDown);

    // Both topics' first batches were sent together; no second batch started on either.
    expect(faults.calls).toHaveLength(2);
    expect(confirmed).toEqual([10, 10]);
  });

  /** Publishes 30 messages (three batches), the signal aborting once the first is confirmed. */
  async function abortedAfterFirstBatch(change: (messages: OutboundMessage[]) => void = () => {}) {
    const clients = awsClients();
    const topic = await audienceTopic(clients, uniquePrefix(), 'markets');
    const messages = messagesFor(topic.audience, 30);
    change(messages);
    const faults = installSnsFaults(clients.sns);
    const { notifier } = notifierFor(clients);
    const deadline = new AbortController();
    const outcome = await notifier.publish(messages, {
      signal: deadline.signal,
      onPublished: async () => deadline.abort(),
    });
    return { clients, topic, messages, faults, outcome };
  }

  it('starts no batch once aborted and reports the rest as Aborted, retryable', async () => {
    const { clients, topic, messages, faults, outcome } = await abortedAfterFirstBatch();

    expect(faults.calls).toHaveLength(1);
    // What the one call published is confirmed: all ten of the first batch, unless moto answered
    // for fewer (an entry whose publish raised in moto, under load, is in neither list; the
    // notifier would send it again, but the abort comes first, so it is reported Aborted too).
    expect(faults.calls[0]?.deliveryIds).toEqual(messages.slice(0, 10).map(idOf));
    const accepted = new Set(faults.calls[0]?.acceptedDeliveryIds);
    expect(accepted.size).toBeGreaterThan(0);
    const confirmed = messages.slice(0, 10).filter((message) => accepted.has(idOf(message)));
    expect(outcome.published.map((p) => p.message)).toEqual(confirmed);
    expect(outcome.failed.map((f) => f.message)).toEqual(messages.filter((message) => !confirmed.includes(message)));
    for (const failure of outcome.failed) expect(failure).toMatchObject({ code: 'Aborted', permanent: false });
    // Each confirmed message arrived once; nothing beyond the first batch was sent.
    const delivered = deliveryCounts(await drain(clients, topic.queueUrl));
    for (const message of confirmed) expect(delivered.get(idOf(message))).toBe(1);
    const firstBatch = new Set(messages.slice(0, 10).map(idOf));
    for (const [id, count] of delivered)
      expect({ id, count, inFirstBatch: firstBatch.has(id) }).toEqual({ id, count: 1, inFirstBatch: true });
  });

  it('reports an entry of the aborted batch that SNS left unanswered as Aborted, not published and not lost', async () => {
    // moto answers neither success nor failure for a subject over 100 characters (see above).
    let unanswered: OutboundMessage | undefined;
    const { messages, faults, outcome } = await abortedAfterFirstBatch((messages) => {
      unanswered = { ...messages[3]!, subject: 's'.repeat(101) };
      messages[3] = unanswered;
    });

    expect(faults.calls).toHaveLength(1);
    expect(faults.calls[0]?.acceptedDeliveryIds).toHaveLength(9);
    expect(outcome.published.map((p) => p.message)).toEqual(messages.slice(0, 10).filter((m) => m !== unanswered));
    expect(outcome.failed.map((f) => f.message)).toEqual([unanswered, ...messages.slice(10)]);
    for (const failure of outcome.failed) expect(failure).toMatchObject({ code: 'Aborted', permanent: false });
  });

  it('sends nothing when the signal is already aborted', async () => {
    const clients = awsClients();
    const topic = await audienceTopic(clients, uniquePrefix(), 'markets');
    const faults = installSnsFaults(clients.sns);
    const { notifier } = notifierFor(clients);

    const outcome = await notifier.publish(messagesFor(topic.audience, 3), {
      signal: AbortSignal.abort(),
      onPublished: async () => {},
    });

    expect(faults.calls).toEqual([]);
    expect(outcome.published).toEqual([]);
    expect(outcome.failed.map((f) => f.code)).toEqual(['Aborted', 'Aborted', 'Aborted']);
  });

  it('does not retry entries after an abort during backoff', async () => {
    const clients = awsClients();
    const topic = await audienceTopic(clients, uniquePrefix(), 'markets');
    const messages = messagesFor(topic.audience, 4);
    const deadline = new AbortController();
    const faults = installSnsFaults(clients.sns, {
      entryFault: failDeliveries([idOf(messages[2]!)], { code: 'Throttling', senderFault: false }),
    });
    const { notifier } = notifierFor(clients, {
      sleep: async () => {
        deadline.abort();
      },
    });

    const outcome = await notifier.publish(messages, { signal: deadline.signal, onPublished: async () => {} });

    expect(faults.calls).toHaveLength(1);
    expect(outcome.published).toHaveLength(3);
    expect(outcome.failed).toMatchObject([{ message: messages[2], code: 'Aborted', permanent: false }]);
    expect(deliveryIdOf(messages[2]!.body)).toBe(idOf(messages[2]!));
  });
});
