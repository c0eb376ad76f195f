#!/usr/bin/env node
/**
 * The CDK app: cdk-nag's AwsSolutions and Serverless packs check every synth (an unacknowledged
 * finding stops it), and the stack is built from the validated cdk.json context.
 */
import { App, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks, ServerlessChecks } from 'cdk-nag';
import { StackConfigError, stackConfigFromContext } from '../lib/config.ts';
import { NewsAlertsStack } from '../lib/news-alerts-stack.ts';

const app = new App();
Validations.of(app).addPlugins(new AwsSolutionsChecks(app), new ServerlessChecks(app));
try {
  const config = stackConfigFromContext((key) => app.node.tryGetContext(key), Object.keys(app.node.getAllContext()));
  new NewsAlertsStack(app, config.stackName, { config });
} catch (error) {
  if (error instanceof StackConfigError) {
    // The message names the context key; a stack trace would only hide it.
    console.error(`news-alerts: ${error.message}`);
    process.exit(1);
  }
  throw error;
}
