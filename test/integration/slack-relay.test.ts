/**
 * The Slack relay end to end on loopback: webhook URLs in moto's Secrets Manager, a local HTTPS
 * receiver standing in for Slack (certificate signed by the test run's CA, which the relay's
 * connection pool trusts explicitly; verification stays on), the real Powertools logger.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { Logger } from '@aws-lambda-powertools/logger';
import { CreateSecretCommand } from '@aws-sdk/client-secrets-manager';
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import type { Context } from 'aws-lambda';
import { Agent } from 'undici';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import { slackPostedPartition } from '#aws/table-layout';
import { createTables, tableNamesFor } from '#sandbox/tables';
import { Agent as PublicOnlyAgent } from '#shared/http-pool';
import { webhookShardName } from '#shared/slack-webhook-store';
import { awsClients, uniquePrefix } from '#test/aws';
import { storeWebhooks } from '../../cli/webhook-store.ts';
import { SlackDeliveryError, SlackRejectedError, SlackWebhookConfigError } from '../../functions/slack-relay/errors.ts';
import { postedAlerts } from '../../functions/slack-relay/idempotency.ts';
import { type OncePerDelivery, SlackRelay, type SlackRelayDependencies } from '../../functions/slack-relay/relay.ts';
import { SecretsManagerWebhooks, UndiciWebhookPoster } from '../../functions/slack-relay/webhook.ts';
import { createCertificateAuthority, issueLoopbackCertificate } from '../../sandbox/tls.ts';

type Reply = { status: number; body?: string; headers?: Record<string, string> };

/** A stand-in for hooks.slack.com: replies from a script per webhook path, records what it got. */
class SlackReceiver {
  readonly received: { path: string; contentType: string | undefined; body: string }[] = [];
  readonly #scripts = new Map<string, Reply[]>();
  #server: Server | undefined;
  port = 0;

  async start(pem: { cert: string; key: string }): Promise<void> {
    this.#server = createServer(
      { cert: pem.cert, key: pem.key },
      (request, response) => void this.#handle(request, response),
    );
    await new Promise<void>((resolve) => this.#server?.listen(0, '127.0.0.1', resolve));
    this.port = (this.#server.address() as AddressInfo).port;
  }

  /** A webhook URL on this receiver whose replies follow `script` (the last reply repeats). */
  webhook(token: string, script: Reply[]): string {
    const path = `/services/T0000/B0000/${token}`;
    this.#scripts.set(path, script);
    return `https://127.0.0.1:${this.port}${path}`;
  }

  async #handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const path = request.url ?? '';
    this.received.push({ path, contentType: request.headers['content-type'], body: Buffer.concat(chunks).toString() });
    const script = this.#scripts.get(path) ?? [{ status: 404, body: 'no_service' }];
    const reply = (script.length > 1 ? script.shift() : script[0]) ?? { status: 500 };
    response.writeHead(reply.status, { 'content-type': 'text/plain', ...reply.headers });
    response.end(reply.body ?? (reply.status === 200 ? 'ok' : 'error'));
  }

  async stop(): Promise<void> {
    await new Promise((resolve) => this.#server?.close(resolve));
  }
}

const alertDocument = (audienceId: string, locale?: string) =>
  JSON.stringify({
    version: '1.0',
    source: 'custom',
    id: `${audienceId}|id:7`,
    content: { textType: 'client-markdown', title: 'Fed holds rates', description: 'x' },
    newsAlerts: {
      schemaVersion: 1,
      deliveryId: `${audienceId}|id:7`,
      audienceId,
      audienceName: 'Markets desk',
      ...(locale === undefined ? {} : { locale }),
      urgent: false,
      article: {
        title: '연준, 기준금리 동결 — Fed holds rates 🏦',
        summary: 'The Federal Reserve left rates unchanged.',
        url: 'https://news.example.com/fed',
        publishedAt: '2025-03-14T00:30:00.000Z',
        categories: ['002000000'],
        categoryNames: ['Economy'],
        media: 'wire',
        mediaName: 'Example Wire',
        status: 'published',
      },
      matches: [
        { ruleId: 'rates', description: 'Rates', urgent: false, reasons: [{ kind: 'keyword', term: 'rates' }] },
      ],
      omittedMatches: 0,
    },
  });

describe('Slack relay against a local HTTPS Slack and moto Secrets Manager', () => {
  const receiver = new SlackReceiver();
  const clients = awsClients();
  const ca = inject('sandboxCa');
  const dispatcher = new Agent({ connect: { ca: ca.cert } });
  const logLines: string[] = [];
  const prefix = uniquePrefix();
  const storePrefix = `${prefix}slack-webhooks/`;
  const topicNamePrefix = `${prefix}audience-`;
  const topicArn = (audienceId: string) => `arn:aws:sns:us-east-1:123456789012:${topicNamePrefix}${audienceId}`;

  beforeAll(async () => {
    await receiver.start(await issueLoopbackCertificate(ca));
  });
  afterAll(async () => {
    await receiver.stop();
    await dispatcher.close();
  });
  afterEach(() => {
    vi.restoreAllMocks();
    // Whatever a scenario did, the webhook URL (a bearer credential) never reaches a log line.
    const written = logLines.splice(0).join('');
    expect(written).not.toMatch(/-token/);
    expect(written).not.toContain('/services/T0000');
  });

  /** A relay wired as the handler wires it, with the real logger writing to a captured stdout. */
  async function relayFor(
    audienceId: string,
    secretString: string,
    options: {
      pool?: Agent;
      oncePerDelivery?: OncePerDelivery;
      locale?: string;
      /** Whether the webhook source accepts an internal host (this receiver is on loopback). */
      allowInternalTargets?: boolean;
      /** Keep the webhook in a secret of the audience's own (given by id), not in the store. */
      own?: boolean;
    } = {},
  ) {
    const ownSecret = `${prefix}own/${audienceId}`;
    if (options.own) {
      await clients.secrets.send(new CreateSecretCommand({ Name: ownSecret, SecretString: secretString }));
    } else {
      await storeWebhooks(clients.secrets, storePrefix, new Map([[audienceId, secretString]]));
    }
    // Powertools writes INFO to stdout and WARN/ERROR to stderr: capture both.
    for (const stream of [process.stdout, process.stderr]) {
      vi.spyOn(stream, 'write').mockImplementation((chunk: string | Uint8Array) => {
        logLines.push(String(chunk));
        return true;
      });
    }
    const sleeps: number[] = [];
    const deps: SlackRelayDependencies = {
      webhooks: new SecretsManagerWebhooks({
        client: clients.secrets,
        explicitSecrets: options.own ? { [audienceId]: ownSecret } : {},
        storePrefix,
        maxAgeSeconds: 300,
        allowInternalTargets: options.allowInternalTargets ?? true,
      }),
      poster: new UndiciWebhookPoster({ dispatcher: options.pool ?? dispatcher, timeoutMs: 3000 }),
      log: new Logger({ serviceName: 'slack-relay-test', logLevel: 'DEBUG' }),
      retry: { maxAttempts: 4, baseDelayMs: 20, maxDelayMs: 80, requestTimeoutMs: 3000 },
      topicNamePrefix,
      oncePerDelivery: options.oncePerDelivery,
      sleep: async (ms) => {
        sleeps.push(ms);
        await sleep(ms);
      },
    };
    const relay = new SlackRelay(deps);
    const event = {
      Records: [
        {
          EventSource: 'aws:sns',
          Sns: {
            MessageId: `msg-${audienceId}`,
            TopicArn: topicArn(audienceId),
            Message: alertDocument(audienceId, options.locale),
          },
        },
      ],
    };
    return { relay, deps, event, sleeps, invocation: { remainingTimeMs: () => 25_000 } };
  }

  it('posts Block Kit with a text fallback to the webhook from the secret', async () => {
    const url = receiver.webhook('success-token', [{ status: 200 }]);
    const { relay, event, invocation } = await relayFor('success', url);
    await expect(relay.handle(event, invocation)).resolves.toEqual([
      { messageId: 'msg-success', audienceId: 'success', deliveryId: 'success|id:7', attempts: 1 },
    ]);
    const posted = receiver.received.filter((request) => request.path.endsWith('/success-token'));
    expect(posted).toHaveLength(1);
    expect(posted[0]?.contentType).toBe('application/json; charset=utf-8');
    const body = JSON.parse(posted[0]?.body ?? '{}') as { text: string; blocks: { type: string }[] };
    expect(body.text).toContain('연준, 기준금리 동결 — Fed holds rates 🏦');
    expect(body.blocks.map((block) => block.type)).toEqual(['header', 'section', 'context', 'section', 'context']);
  });

  it('posts a ko-KR alert with Korean fixed words, and the same alert without a locale in English', async () => {
    const korean = receiver.webhook('korean-token', [{ status: 200 }]);
    const ko = await relayFor('korean', korean, { locale: 'ko-KR' });
    await ko.relay.handle(ko.event, ko.invocation);
    const english = receiver.webhook('english-token', [{ status: 200 }]);
    const en = await relayFor('english', english);
    await en.relay.handle(en.event, en.invocation);
    const posted = (token: string) => {
      const request = receiver.received.find((entry) => entry.path.endsWith(`/${token}`));
      return JSON.parse(request?.body ?? '{}') as { blocks: { type: string; text?: { text: string } }[] };
    };
    const sections = (token: string) => posted(token).blocks.flatMap((block) => (block.text ? [block.text.text] : []));
    expect(sections('korean-token')).toContain('*이 알림을 받은 이유*\n• 규칙 rates — Rates: 키워드 “rates”');
    expect(sections('korean-token').join('\n')).toContain('Example Wire에서 기사 읽기');
    expect(sections('english-token')).toContain('*Why you got this*\n• rule rates — Rates: keyword “rates”');
  });

  it('waits as long as Retry-After asks after a 429, then succeeds', async () => {
    const url = receiver.webhook('throttled-token', [
      { status: 429, body: 'rate_limited', headers: { 'retry-after': '1' } },
      { status: 200 },
    ]);
    const { relay, event, sleeps, invocation } = await relayFor('throttled', JSON.stringify({ webhookUrl: url }), {
      own: true,
    });
    await expect(relay.handle(event, invocation)).resolves.toMatchObject([{ attempts: 2 }]);
    expect(sleeps).toEqual([1000]);
    expect(receiver.received.filter((request) => request.path.endsWith('/throttled-token'))).toHaveLength(2);
  });

  it('gives up after the last attempt of a 500 storm and throws for Lambda to retry and dead-letter', async () => {
    const url = receiver.webhook('storm-token', [{ status: 500, body: 'rollup_error' }]);
    const { relay, event, sleeps, invocation } = await relayFor('storm', url);
    const failure = await relay.handle(event, invocation).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(SlackDeliveryError);
    expect(failure).toMatchObject({ attempts: 4, lastStatus: 500 });
    expect(sleeps).toHaveLength(3);
    expect(receiver.received.filter((request) => request.path.endsWith('/storm-token'))).toHaveLength(4);
  });

  it('re-reads the secret when Slack refuses the cached webhook, and posts with the replacement', async () => {
    const archived = receiver.webhook('archived-token', [{ status: 410, body: 'channel_is_archived' }]);
    const replacement = receiver.webhook('replacement-token', [{ status: 200 }]);
    const { relay, event, invocation } = await relayFor('rotated', archived);
    // Warm the cache with the archived channel's URL, then ops put the new one.
    await expect(relay.handle(event, invocation)).rejects.toBeInstanceOf(SlackRejectedError);
    // Ops replace that audience's webhook alone: its store shard gets a new version.
    await storeWebhooks(clients.secrets, storePrefix, new Map([['rotated', replacement]]));
    await expect(relay.handle(event, invocation)).resolves.toMatchObject([{ attempts: 2 }]);
    expect(receiver.received.filter((request) => request.path.endsWith('/replacement-token'))).toHaveLength(1);
  });

  it('refuses a receiver whose certificate it does not trust (TLS verification stays on)', async () => {
    const strangerCa = await createCertificateAuthority();
    const stranger = new SlackReceiver();
    await stranger.start(await issueLoopbackCertificate(strangerCa));
    try {
      const url = stranger.webhook('stranger-token', [{ status: 200 }]);
      const { relay, event, invocation } = await relayFor('stranger', url);
      await expect(relay.handle(event, invocation)).rejects.toBeInstanceOf(SlackDeliveryError);
      expect(stranger.received).toHaveLength(0);
    } finally {
      await stranger.stop();
    }
  });

  it('logs success, retries and refusals with context but never the webhook URL', async () => {
    const flaky = receiver.webhook('logged-token', [{ status: 503, body: 'busy' }, { status: 200 }]);
    const { relay, event, invocation } = await relayFor('logged', flaky);
    await relay.handle(event, invocation);
    const revoked = receiver.webhook('revoked-token', [{ status: 404, body: 'no_service' }]);
    const second = await relayFor('revoked', revoked);
    const error = (await second.relay
      .handle(second.event, second.invocation)
      .catch((caught: unknown) => caught)) as Error;
    const lines = logLines.join('').split('\n').filter(Boolean);
    expect(lines.map((line) => (JSON.parse(line) as { message: string }).message)).toEqual([
      'Slack post failed; retrying',
      'alert posted to Slack',
      'alert could not be posted to Slack',
    ]);
    expect(lines[2]).toContain(`"secretId":"${webhookShardName(storePrefix, 'revoked')}"`);
    expect(lines[2]).toContain('"detail":"no_service"');
    for (const text of [...lines, error.message, String(error.stack)]) {
      expect(text).not.toMatch(/-token/);
      expect(text).not.toContain('/services/T0000');
    }
  });

  describe('where a webhook may point (target-address policy, issue 30 item 6)', () => {
    it('refuses a webhook host name that resolves to loopback at connect time, naming the host only', async () => {
      const resolved: string[] = [];
      // The pool the handler builds (functions/shared/http-pool.ts), trusting the test CA, with
      // a resolver that answers the public-looking name with loopback, as a rebinding DNS would.
      const pool = new PublicOnlyAgent({
        connect: {
          ca: ca.cert,
          lookup: (hostname, options, callback) => {
            resolved.push(hostname);
            if (options.all) callback(null, [{ address: '127.0.0.1', family: 4 }]);
            else callback(null, '127.0.0.1', 4);
          },
        },
      });
      try {
        const url = receiver
          .webhook('rebound-token', [{ status: 200 }])
          .replace('https://127.0.0.1:', 'https://hooks.example.com:');
        const { relay, event, invocation, sleeps } = await relayFor('rebound', url, { pool });
        const error = (await relay.handle(event, invocation).catch((caught: unknown) => caught)) as Error;
        expect(error).toBeInstanceOf(SlackRejectedError);
        expect(error.message).toContain('the host hooks.example.com resolves to 127.0.0.1, a loopback address');
        expect(resolved).toEqual(['hooks.example.com']);
        // Refused for good: no retry, and nothing reached the receiver.
        expect(sleeps).toEqual([]);
        expect(receiver.received.filter((request) => request.path.includes('rebound-token'))).toEqual([]);
        for (const text of [error.message, String(error.stack)]) {
          expect(text).not.toMatch(/-token/);
          expect(text).not.toContain('/services/T0000');
        }
      } finally {
        await pool.close();
      }
    });

    it.each([
      [
        'the metadata service',
        'https://169.254.169.254/services/T0000/B0000/meta-token',
        /the host 169\.254\.169\.254 is a link-local address/,
      ],
      [
        'loopback',
        'https://127.0.0.1:9/services/T0000/B0000/loop-token',
        /the host 127\.0\.0\.1 is a loopback address/,
      ],
      [
        'a local-only name',
        'https://hooks.internal/services/T0000/B0000/name-token',
        /the host hooks\.internal is a host name that only resolves inside a network/,
      ],
    ])('refuses a webhook secret naming %s before any connection', async (_label, url, reason) => {
      const audienceId = `internal-${url.length}`;
      const { relay, event, invocation } = await relayFor(audienceId, url, { allowInternalTargets: false });
      const error = (await relay.handle(event, invocation).catch((caught: unknown) => caught)) as Error;
      expect(error).toBeInstanceOf(SlackWebhookConfigError);
      expect(error.message).toMatch(reason);
      expect(error.message).toContain(`secret "${webhookShardName(storePrefix, audienceId)}"`);
      expect(error.message).not.toMatch(/-token|\/services\/T0000/);
    });
  });

  describe('remembering posted deliveries in the state table (Powertools idempotency)', () => {
    const names = tableNamesFor(`${prefix}posted-`);
    const rememberSeconds = 7 * 86_400;
    beforeAll(async () => {
      await createTables(clients.dynamo, names);
    });

    /** The relay as the handler wires it, with its invocation registered as the handler does. */
    function remembering() {
      const posted = postedAlerts({ client: clients.dynamo, tableName: names.state, rememberSeconds });
      posted.registerInvocation({ getRemainingTimeInMillis: () => 25_000 } as Context);
      return posted;
    }

    const postedItems = async () =>
      (
        await clients.documents.send(
          new QueryCommand({
            TableName: names.state,
            KeyConditionExpression: 'pk = :pk',
            ExpressionAttributeValues: { ':pk': slackPostedPartition },
            ConsistentRead: true,
          }),
        )
      ).Items ?? [];

    it('posts a delivery that arrives twice (SNS redelivery, a second message id) once', async () => {
      const url = receiver.webhook('twice-token', [{ status: 200 }]);
      const { relay, deps, event, invocation } = await relayFor('twice', url, {
        oncePerDelivery: remembering().oncePerDelivery,
      });
      const redelivery = {
        Records: event.Records.map((record) => ({ ...record, Sns: { ...record.Sns, MessageId: 'msg-twice-again' } })),
      };
      const started = Date.now();

      await expect(relay.handle(event, invocation)).resolves.toMatchObject([{ messageId: 'msg-twice', attempts: 1 }]);
      // A cold relay (new execution environment) sees what the first one remembered.
      const second = new SlackRelay({ ...deps, oncePerDelivery: remembering().oncePerDelivery });
      await expect(second.handle(redelivery, invocation)).resolves.toEqual([
        { messageId: 'msg-twice-again', audienceId: 'twice', deliveryId: 'twice|id:7', attempts: 0 },
      ]);

      expect(receiver.received.filter((request) => request.path.endsWith('/twice-token'))).toHaveLength(1);
      const messages = logLines
        .join('')
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as { message: string; firstMessageId?: string });
      expect(messages.find((line) => line.message === 'alert already posted to Slack; not posted again')).toMatchObject(
        {
          firstMessageId: 'msg-twice',
        },
      );
      const items = (await postedItems()).filter((item) => JSON.stringify(item).includes('msg-twice'));
      expect(items).toHaveLength(1);
      expect(items[0]).toMatchObject({ pk: slackPostedPartition, status: 'COMPLETED' });
      const expiresAt = Number(items[0]?.expiresAt);
      expect(expiresAt).toBeGreaterThanOrEqual(Math.floor(started / 1000) + rememberSeconds);
      expect(expiresAt).toBeLessThanOrEqual(Math.ceil(Date.now() / 1000) + rememberSeconds);
    });

    it('forgets a post that failed, so the retry posts it, once', async () => {
      const url = receiver.webhook('retried-token', [
        { status: 500, body: 'rollup_error' },
        { status: 500, body: 'rollup_error' },
        { status: 200 },
      ]);
      const posted = remembering();
      const { deps, event, invocation } = await relayFor('retried', url, { oncePerDelivery: posted.oncePerDelivery });
      const limited = new SlackRelay({
        ...deps,
        retry: { maxAttempts: 2, baseDelayMs: 1, maxDelayMs: 1, requestTimeoutMs: 3000 },
      });

      await expect(limited.handle(event, invocation)).rejects.toBeInstanceOf(SlackDeliveryError);
      // Lambda's retry of the failed invocation.
      await expect(limited.handle(event, invocation)).resolves.toMatchObject([{ attempts: 1 }]);
      await expect(limited.handle(event, invocation)).resolves.toMatchObject([{ attempts: 0 }]);

      expect(receiver.received.filter((request) => request.path.endsWith('/retried-token'))).toHaveLength(3);
    });
  });
});
