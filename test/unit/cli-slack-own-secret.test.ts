/**
 * `subscriptions add <audience> --slack-webhook` for an audience whose webhook stays in a secret of
 * its own (cdk.json `slack.webhookSecretArn`): the relay reads that secret first, so a URL put in
 * the webhook store would be reported as stored and never used. It is refused, naming the secret.
 */
import { describe, expect, it } from 'vitest';
import type { CommandContext } from '../../cli/context.ts';
import { UsageError } from '../../cli/errors.ts';
import { refuseOwnWebhookSecret } from '../../cli/subscriptions.ts';
import type { Target } from '../../cli/target-model.ts';

const secretArn = 'arn:aws:secretsmanager:us-east-1:123456789012:secret:team/slack-policy-AbCdEf';

function setUp(own: () => Promise<Readonly<Record<string, string>>>) {
  const warnings: string[] = [];
  const context = { output: { warn: (line: string) => warnings.push(line) } } as unknown as CommandContext;
  const target = { kind: 'stack', slackOwnWebhookSecrets: own } as unknown as Target;
  return { context, target, warnings };
}

describe('a Slack webhook kept in a secret of its own', () => {
  it('is refused with the secret to rotate instead; other audiences go on', async () => {
    const { context, target } = setUp(async () => ({ policy: secretArn }));
    const refusal = refuseOwnWebhookSecret(context, target, 'policy');
    await expect(refusal).rejects.toThrow(UsageError);
    await expect(refuseOwnWebhookSecret(context, target, 'policy')).rejects.toThrow(
      `put-secret-value --secret-id ${secretArn}`,
    );
    await expect(refuseOwnWebhookSecret(context, target, 'markets')).resolves.toBeUndefined();
  });

  it('warns and goes on when the relay settings cannot be read (no permission)', async () => {
    const denied = Object.assign(new Error('not authorized'), { name: 'AccessDeniedException' });
    const { context, target, warnings } = setUp(async () => Promise.reject(denied));
    await expect(refuseOwnWebhookSecret(context, target, 'policy')).resolves.toBeUndefined();
    expect(warnings.join('\n')).toMatch(/AccessDeniedException.*slack\.webhookSecretArn/);
  });

  it('never asks the sandbox, which has no relay settings to read', async () => {
    const local = { kind: 'local' } as unknown as Target;
    const { context } = setUp(async () => ({}));
    await expect(refuseOwnWebhookSecret(context, local, 'policy')).resolves.toBeUndefined();
  });
});
