import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '#core/errors';
import { leaksOf } from '#test/secret-leaks';
import { loadSlackRelayConfig, slackRelayEnvironment } from '../../functions/slack-relay/config.ts';
import {
  SlackDeliveryError,
  SlackMessageError,
  SlackRejectedError,
  SlackWebhookConfigError,
} from '../../functions/slack-relay/errors.ts';
import { audienceOfTopic } from '../../functions/slack-relay/message.ts';
import { SlackRelay } from '../../functions/slack-relay/relay.ts';
import type { RetryPolicy } from '../../functions/slack-relay/retry.ts';
import { redactWebhook, type WebhookResponse, type WebhookSource } from '../../functions/slack-relay/webhook.ts';

const prefix = 'news-alerts-audience-';
const topicArn = (audienceId: string) => `arn:aws:sns:us-east-1:123456789012:${prefix}${audienceId}`;
const WEBHOOK = 'https://hooks.slack.com/services/T000/B000/secret-token-1';
const policy: RetryPolicy = { maxAttempts: 3, baseDelayMs: 10, maxDelayMs: 40, requestTimeoutMs: 100 };

const document = (audienceId = 'markets') => ({
  newsAlerts: {
    schemaVersion: 1,
    deliveryId: `${audienceId}|id:1`,
    audienceId,
    audienceName: null,
    urgent: false,
    article: {
      title: 'Fed holds rates',
      summary: '',
      url: 'https://news.example.com/a',
      publishedAt: '2025-03-14T00:30:00.000Z',
      categories: [],
      categoryNames: [],
      media: null,
      mediaName: null,
      status: null,
    },
    matches: [],
    omittedMatches: 0,
  },
});

const snsEvent = (body: unknown, arn = topicArn('markets')) => ({
  Records: [{ EventSource: 'aws:sns', Sns: { MessageId: 'm-1', TopicArn: arn, Message: JSON.stringify(body) } }],
});

interface LogLine {
  level: string;
  message: string;
  extra?: Record<string, unknown>;
}

function harness(options: { responses: (WebhookResponse | Error)[]; urls?: string[] }) {
  const lines: LogLine[] = [];
  const log = {
    debug: (message: string, extra?: Record<string, unknown>) => lines.push({ level: 'debug', message, extra }),
    info: (message: string, extra?: Record<string, unknown>) => lines.push({ level: 'info', message, extra }),
    warn: (message: string, extra?: Record<string, unknown>) => lines.push({ level: 'warn', message, extra }),
    error: (message: string, extra?: Record<string, unknown>) => lines.push({ level: 'error', message, extra }),
  };
  const posts: { url: string; body: string }[] = [];
  const sleeps: number[] = [];
  const lookups: boolean[] = [];
  // The secret holds urls[0] until ops replace it; a forced refresh sees the latest value.
  const urls = options.urls ?? [WEBHOOK];
  let current = 0;
  const webhooks: WebhookSource = {
    async webhook(audienceId, lookup) {
      lookups.push(lookup?.forceRefresh ?? false);
      if (audienceId !== 'markets') throw new SlackWebhookConfigError(`no webhook for ${audienceId}`);
      if (lookup?.forceRefresh) current = urls.length - 1;
      return { url: urls[current] ?? WEBHOOK, secretId: 'news-alerts/slack/markets' };
    },
  };
  const responses = [...options.responses];
  const relay = new SlackRelay({
    webhooks,
    poster: {
      async post(url, body) {
        posts.push({ url, body });
        const next = responses.shift() ?? { status: 200, detail: 'ok' };
        if (next instanceof Error) throw next;
        return next;
      },
    },
    log,
    retry: policy,
    topicNamePrefix: prefix,
    sleep: async (ms) => {
      sleeps.push(ms);
    },
    random: () => 1,
  });
  const invocation = { remainingTimeMs: () => 30_000 };
  return { relay, lines, posts, sleeps, lookups, invocation };
}

describe('SlackRelay', () => {
  it('posts the rendered alert once on success', async () => {
    const { relay, posts, lines, invocation } = harness({ responses: [{ status: 200, detail: 'ok' }] });
    await expect(relay.handle(snsEvent(document()), invocation)).resolves.toEqual([
      { messageId: 'm-1', audienceId: 'markets', deliveryId: 'markets|id:1', attempts: 1 },
    ]);
    expect(posts).toHaveLength(1);
    expect(JSON.parse(posts[0]?.body ?? '{}')).toMatchObject({ text: expect.stringContaining('Fed holds rates') });
    expect(lines.map((line) => line.message)).toEqual(['alert posted to Slack']);
  });

  it('retries a network error with backoff, then succeeds', async () => {
    const { relay, posts, sleeps, invocation } = harness({
      responses: [new Error(`connect ECONNRESET while posting to ${WEBHOOK}`), { status: 200, detail: 'ok' }],
    });
    await expect(relay.handle(snsEvent(document()), invocation)).resolves.toHaveLength(1);
    expect(posts).toHaveLength(2);
    expect(sleeps).toEqual([10]);
  });

  it('throws SlackDeliveryError after the last attempt so Lambda retries the event', async () => {
    const { relay, posts, sleeps, invocation } = harness({
      responses: [
        { status: 500, detail: 'rollup_error' },
        { status: 503, detail: '' },
        { status: 500, detail: 'rollup_error' },
      ],
    });
    await expect(relay.handle(snsEvent(document()), invocation)).rejects.toBeInstanceOf(SlackDeliveryError);
    expect(posts).toHaveLength(3);
    expect(sleeps).toEqual([10, 20]);
  });

  it('treats 404 as permanent, re-reads the secret once, and throws SlackRejectedError if it did not change', async () => {
    const { relay, posts, lookups, lines, invocation } = harness({
      responses: [{ status: 404, detail: 'no_service' }],
    });
    const failure = relay.handle(snsEvent(document()), invocation);
    await expect(failure).rejects.toBeInstanceOf(SlackRejectedError);
    await expect(failure).rejects.toMatchObject({ status: 404, name: 'SlackRejectedError' });
    expect(posts).toHaveLength(1);
    expect(lookups).toEqual([false, true]);
    expect(lines.at(-1)).toMatchObject({ level: 'error', extra: { status: 404, detail: 'no_service' } });
  });

  it('gives up at once on a request that cannot be built (a malformed webhook URL): no backoff, never the URL', async () => {
    for (const error of [
      Object.assign(new TypeError(`Invalid URL: ${WEBHOOK}`), { code: 'ERR_INVALID_URL' }),
      Object.assign(new Error('invalid content-type header'), {
        code: 'UND_ERR_INVALID_ARG',
        name: 'InvalidArgumentError',
      }),
    ]) {
      const { relay, posts, sleeps, lookups, invocation } = harness({ responses: [error, error] });
      const failure = relay.handle(snsEvent(document()), invocation);
      await expect(failure).rejects.toBeInstanceOf(SlackRejectedError);
      await expect(failure).rejects.toThrow(/is not a usable URL/);
      await expect(failure).rejects.not.toThrow(WEBHOOK);
      // One post, and one more after re-reading the secret (ops may have fixed it); no backoff.
      expect(posts).toHaveLength(1);
      expect(lookups).toEqual([false, true]);
      expect(sleeps).toEqual([]);
    }
  });

  it('retries with the replaced webhook when ops updated the secret after Slack revoked the old one', async () => {
    const replacement = 'https://hooks.slack.com/services/T000/B000/secret-token-2';
    const { relay, posts, invocation } = harness({
      responses: [
        { status: 403, detail: 'invalid_token' },
        { status: 200, detail: 'ok' },
      ],
      urls: [WEBHOOK, replacement],
    });
    await expect(relay.handle(snsEvent(document()), invocation)).resolves.toHaveLength(1);
    expect(posts.map((post) => post.url)).toEqual([WEBHOOK, replacement]);
  });

  it('refuses an alert that names another audience than its topic, without posting it', async () => {
    const { relay, posts, invocation } = harness({ responses: [] });
    await expect(relay.handle(snsEvent(document('other'), topicArn('markets')), invocation)).rejects.toBeInstanceOf(
      SlackMessageError,
    );
    expect(posts).toHaveLength(0);
  });

  it('fails with a named error on a malformed message or a non-SNS event', async () => {
    const { relay, invocation } = harness({ responses: [] });
    await expect(relay.handle(snsEvent({ hello: 'world' }), invocation)).rejects.toBeInstanceOf(SlackMessageError);
    await expect(relay.handle({ detail: {} }, invocation)).rejects.toBeInstanceOf(SlackMessageError);
  });

  it('fails when the audience has no webhook secret', async () => {
    const { relay, invocation } = harness({ responses: [] });
    await expect(relay.handle(snsEvent(document('policy'), topicArn('policy')), invocation)).rejects.toBeInstanceOf(
      SlackWebhookConfigError,
    );
  });

  it('never puts the webhook URL into a log line or an error', async () => {
    const { relay, lines, invocation } = harness({
      responses: [new Error(`socket hang up ${WEBHOOK}`), { status: 500, detail: 'x' }, { status: 500, detail: 'x' }],
    });
    const error = await relay.handle(snsEvent(document()), invocation).catch((caught: unknown) => caught);
    const everything = JSON.stringify(lines) + String((error as Error).message) + String((error as Error).stack);
    expect(everything).not.toContain('secret-token');
    expect(everything).toContain('[webhook]');
  });
});

describe('audienceOfTopic', () => {
  it('maps <prefix><audienceId> topics to their audience and leaves other topics alone', () => {
    expect(audienceOfTopic(topicArn('markets'), prefix)).toBe('markets');
    expect(audienceOfTopic('arn:aws:sns:us-east-1:123456789012:other-topic', prefix)).toBeUndefined();
    expect(audienceOfTopic(topicArn(''), prefix)).toBeUndefined();
  });
});

describe('redactWebhook', () => {
  it('removes the URL and its secret path', () => {
    expect(redactWebhook(`failed ${WEBHOOK} and /services/T000/B000/secret-token-1`, WEBHOOK)).toBe(
      'failed [webhook] and [webhook]',
    );
  });
});

describe('loadSlackRelayConfig', () => {
  const required = { AUDIENCE_TOPIC_PREFIX: prefix, SLACK_WEBHOOK_STORE_PREFIX: 'news-alerts/slack-webhooks/' };

  it('applies defaults', () => {
    expect(loadSlackRelayConfig(required)).toEqual({
      topicNamePrefix: prefix,
      storePrefix: 'news-alerts/slack-webhooks/',
      webhookSecrets: {},
      webhookCacheSeconds: 300,
      retry: { maxAttempts: 4, baseDelayMs: 500, maxDelayMs: 8000, requestTimeoutMs: 5000 },
      postedAlerts: undefined,
    });
  });

  it('remembers posts in the named table for SLACK_REMEMBER_POSTS_HOURS (a week by default)', () => {
    expect(loadSlackRelayConfig({ ...required, POSTED_ALERTS_TABLE: 'state' }).postedAlerts).toEqual({
      tableName: 'state',
      rememberSeconds: 7 * 86_400,
    });
    expect(
      loadSlackRelayConfig({ ...required, POSTED_ALERTS_TABLE: 'state', SLACK_REMEMBER_POSTS_HOURS: '2' }).postedAlerts,
    ).toEqual({ tableName: 'state', rememberSeconds: 7200 });
    expect(() => loadSlackRelayConfig({ ...required, SLACK_REMEMBER_POSTS_HOURS: '0' })).toThrow(
      /SLACK_REMEMBER_POSTS_HOURS/,
    );
  });

  const arn = 'arn:aws:secretsmanager:us-east-1:123456789012:secret:news-alerts/slack/markets-AbCdEf';

  it('reads explicit secrets and names bad variables', () => {
    expect(loadSlackRelayConfig({ ...required, SLACK_WEBHOOK_SECRETS: `{"markets":"${arn}"}` }).webhookSecrets).toEqual(
      { markets: arn },
    );
    expect(() => loadSlackRelayConfig({ ...required, SLACK_WEBHOOK_SECRETS: '[1' })).toThrow(/SLACK_WEBHOOK_SECRETS/);
    expect(() => loadSlackRelayConfig({ SLACK_WEBHOOK_STORE_PREFIX: 'x/' })).toThrow(/AUDIENCE_TOPIC_PREFIX/);
    expect(() => loadSlackRelayConfig({ ...required, SLACK_MAX_ATTEMPTS: '0' })).toThrow(/SLACK_MAX_ATTEMPTS/);
  });

  /** The error loadSlackRelayConfig throws for `env`, or undefined when it accepts it. */
  const refusal = (env: Record<string, string>): Error | undefined => {
    try {
      loadSlackRelayConfig(env);
      return undefined;
    } catch (error) {
      return error as Error;
    }
  };

  it('refuses a webhook URL put in SLACK_WEBHOOK_SECRETS instead of a secret ARN, without echoing it (issue 30, item 6)', () => {
    const error = refusal({ ...required, SLACK_WEBHOOK_SECRETS: JSON.stringify({ markets: WEBHOOK }) });
    expect(error).toBeInstanceOf(ConfigError);
    expect(error?.message).toMatch(
      /SLACK_WEBHOOK_SECRETS: audience "markets": .*webhook URL.*Secrets Manager secret ARN \(arn:aws:secretsmanager:/,
    );
    expect(leaksOf(error?.message ?? '', WEBHOOK)).toEqual([]);
    expect(leaksOf(error?.message ?? '', '/services/T000/B000/secret-token-1')).toEqual([]);
  });

  it('refuses a webhook URL (or anything but a secret name prefix) as the webhook store prefix, never echoing it', () => {
    for (const value of [WEBHOOK, 'hooks.slack.com/services/T000/B000/secret-token-1/', `${WEBHOOK}/`]) {
      const error = refusal({ ...required, SLACK_WEBHOOK_STORE_PREFIX: value });
      expect(error).toBeInstanceOf(ConfigError);
      expect(error?.message).toMatch(/SLACK_WEBHOOK_STORE_PREFIX: looks like a URL \(not shown\)/);
      expect(leaksOf(error?.message ?? '', '/services/T000/B000/secret-token-1')).toEqual([]);
    }
    expect(refusal({ ...required, SLACK_WEBHOOK_STORE_PREFIX: 'news-alerts/slack-webhooks' })?.message).toMatch(
      /SLACK_WEBHOOK_STORE_PREFIX: must be a secret name prefix ending in "\/"/,
    );
    expect(refusal({ ...required, SLACK_WEBHOOK_STORE_PREFIX: '' })?.message).toMatch(/SLACK_WEBHOOK_STORE_PREFIX/);
  });

  it('refuses other values that are not a secret ARN, naming the audience and never the value', () => {
    for (const [value, expected] of [
      ['news-alerts/slack/markets', /audience "markets": is not a Secrets Manager secret ARN/],
      [5, /audience "markets": is not a Secrets Manager secret ARN/],
      ['', /audience "markets": is not a Secrets Manager secret ARN/],
      ['hooks.slack.com/services/T000/B000/secret-token-1', /webhook URL/],
    ] as const) {
      const error = refusal({ ...required, SLACK_WEBHOOK_SECRETS: JSON.stringify({ markets: value }) });
      expect(error, String(value)).toBeInstanceOf(ConfigError);
      expect(error?.message).toMatch(expected);
      if (typeof value === 'string' && value !== '') expect(error?.message).not.toContain(value);
    }
    // Keys and values swapped: the audience id is the URL, and is not shown either.
    const swapped = refusal({ ...required, SLACK_WEBHOOK_SECRETS: JSON.stringify({ [WEBHOOK]: arn }) });
    expect(swapped?.message).toMatch(/SLACK_WEBHOOK_SECRETS: an audience id that looks like a URL/);
    expect(leaksOf(swapped?.message ?? '', '/services/T000/B000/secret-token-1')).toEqual([]);
    expect(refusal({ ...required, SLACK_WEBHOOK_SECRETS: `[${JSON.stringify(WEBHOOK)}]` })?.message).toMatch(
      /SLACK_WEBHOOK_SECRETS: must be a JSON object of audience id → secret ARN/,
    );
  });

  it('never echoes a URL-looking value in any configuration error, whatever variable holds it', () => {
    const token = fc.stringMatching(/^[A-Za-z0-9]{10,16}$/);
    const url = fc.tuple(fc.constantFrom('https://hooks.slack.com', 'http://127.0.0.1:9', 'hooks.slack.com'), token);
    const shape = fc.constantFrom(
      (value: string) => value,
      (value: string) => JSON.stringify({ markets: value }),
      (value: string) => JSON.stringify({ [value]: 'x' }),
      (value: string) => JSON.stringify([value]),
      (value: string) => `{"markets":"${value}"`,
    );
    fc.assert(
      fc.property(
        fc.constantFrom(...slackRelayEnvironment.map((variable) => variable.name)),
        url,
        shape,
        (name, [host, secret], write) => {
          const error = refusal({ ...required, [name]: write(`${host}/services/T0/B0/${secret}`) });
          if (error === undefined) return;
          expect(error).toBeInstanceOf(ConfigError);
          expect(error.message.toLowerCase()).not.toContain(secret.toLowerCase());
          expect(error.message).not.toContain(host.replace(/^https?:\/\//, ''));
        },
      ),
      { numRuns: 200 },
    );
  });
});
