/**
 * A Slack incoming-webhook URL is a credential: once the relay has read one from the webhook store
 * (Secrets Manager), the shared redaction removes its path from every log line and error chain of
 * the process.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { clearRegisteredSecrets, redactSecrets, sanitizeError } from '#shared/secret-redaction';
import { awsClients, uniquePrefix } from '#test/aws';
import { storeWebhooks } from '../../cli/webhook-store.ts';
import { SecretsManagerWebhooks } from '../../functions/slack-relay/webhook.ts';

afterEach(() => clearRegisteredSecrets());

describe('the Slack webhook source', () => {
  it('registers the webhook path as a secret when it reads it, so logs and errors redact it', async () => {
    const { secrets } = awsClients();
    const prefix = uniquePrefix();
    const token = 'Xq7Lw2Zp9Rt4Yv8Nm3Kb6Hd1';
    const url = `https://hooks.slack.com/services/T0ABC1234/B0DEF5678/${token}`;
    await storeWebhooks(secrets, `${prefix}slack-webhooks/`, new Map([['desk', url]]));
    const webhooks = new SecretsManagerWebhooks({
      client: secrets,
      explicitSecrets: {},
      storePrefix: `${prefix}slack-webhooks/`,
      maxAgeSeconds: 300,
    });

    expect(redactSecrets(`post to ${url} failed`)).toContain(token);
    expect((await webhooks.webhook('desk')).url).toBe(url);

    expect(redactSecrets(`post to ${url} failed`)).not.toContain(token.slice(0, 10));
    const error = sanitizeError(
      new Error('socket hang up', { cause: Object.assign(new Error('parse'), { data: `GET ${url.toUpperCase()}` }) }),
    ) as Error & { cause: { data: string } };
    expect(JSON.stringify({ message: error.message, data: error.cause.data })).not.toContain(
      token.slice(4, 14).toUpperCase(),
    );
  });
});
