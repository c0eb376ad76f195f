/**
 * Builds the stack for infrastructure tests from the context shipped in cdk.json plus overrides,
 * exactly as bin/app.ts does (minus the nag plugins, which the tests run themselves so they can
 * report the violations). Bundling is skipped unless asked for: only the bundle test needs the
 * real esbuild output, and skipping it keeps the suite fast.
 */
import { readFileSync } from 'node:fs';
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import type { CloudAssembly } from 'aws-cdk-lib/cx-api';
import { type StackConfig, stackConfigFromContext } from '../../lib/config.ts';
import { NewsAlertsStack } from '../../lib/news-alerts-stack.ts';

/** The `context` object of cdk.json, as shipped. */
export const shippedContext = (): Record<string, unknown> =>
  (JSON.parse(readFileSync(new URL('../../cdk.json', import.meta.url), 'utf8')) as { context: Record<string, unknown> })
    .context;

/** A deployment that uses every kind of subscriber and option. */
export const fullContext: Record<string, unknown> = {
  newsApiBaseUrl: 'https://api.news.example.org/v1',
  alarmEmail: 'ops@example.com',
  scheduleExpression: 'rate(10 minutes)',
  scheduleTimeZone: 'Asia/Seoul',
  flexibleWindowMinutes: 2,
  newsApiResponseMapping: { articles: ['data.items'], title: ['headline'] },
  newsApiPagination: { method: 'CURSOR', cursorField: 'next' },
  alertEnvironmentOverrides: { NEWS_API_MAX_PAGES: 50 },
  audiences: [
    {
      audienceId: 'markets',
      emails: ['desk@example.com'],
      phoneNumbers: ['+821012345678'],
      httpsEndpoints: [
        'https://hooks.example.com/news',
        { url: 'https://webhook.example.net/in', rawMessageDelivery: true },
      ],
      slack: {},
    },
    {
      audienceId: 'policy',
      slack: { webhookSecretArn: 'arn:aws:secretsmanager:us-east-1:123456789012:secret:team/slack-AbCdEf' },
    },
  ],
};

export interface Synthesized {
  readonly app: App;
  readonly stack: NewsAlertsStack;
  readonly config: StackConfig;
  readonly template: Template;
  readonly assembly: CloudAssembly;
}

/** Builds and synthesizes the stack once. */
export function synthesize(overrides: Record<string, unknown> = {}, options: { bundle?: boolean } = {}): Synthesized {
  const app = new App({
    context: {
      ...shippedContext(),
      ...overrides,
      ...(options.bundle ? {} : { 'aws:cdk:bundling-stacks': [] }),
    },
  });
  const config = stackConfigFromContext((key) => app.node.tryGetContext(key), Object.keys(app.node.getAllContext()));
  const stack = new NewsAlertsStack(app, config.stackName, { config });
  const assembly = app.synth();
  return { app, stack, config, template: Template.fromStack(stack), assembly };
}
