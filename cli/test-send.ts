/**
 * `news-alerts test-send <audienceId>`: proves every channel of an audience end to end after a
 * deploy or a change: a marked test notification through the real path, and per subscription what
 * was accepted (cli/workbench/test-send.ts). Exit 1 when the topic refuses it
 * (naming `audiences repair` when the topic is gone).
 */
import type { Command } from 'commander';
import { action } from './command.ts';
import type { CommandContext } from './context.ts';
import { OperationFailedError } from './errors.ts';
import { newsAlerts } from './hints.ts';
import { testSend } from './workbench/test-send.ts';

async function sendTest(context: CommandContext, args: readonly unknown[]): Promise<void> {
  const [audienceId] = args as [string];
  const target = await context.target();
  const result = await testSend(target, audienceId, Date.now());
  if (result.refused !== undefined) {
    throw new OperationFailedError(
      `audience ${audienceId}: SNS refused the test notification (${result.refused.code}: ${result.refused.reason})${
        result.refused.permanent
          ? `; if its topic is gone, '${newsAlerts()} audiences repair ${audienceId}' recreates it`
          : ''
      }`,
    );
  }
  context.output.result(result, () => {
    context.output.caption(`sent "${result.subject}" to ${audienceId} (SNS message ${result.messageId ?? '?'})`);
    context.output.table(
      ['PROTOCOL', 'ENDPOINT', 'RESULT', 'DETAIL'],
      result.channels.map((channel) => [channel.protocol, channel.endpoint, channel.result, channel.detail]),
      `audience ${audienceId} has no subscribers: nobody got it ('${newsAlerts()} subscriptions add ${audienceId} …')`,
    );
  });
}

/** Registers `test-send`. */
export function registerTestSend(program: Command): void {
  program
    .command('test-send')
    .description(
      'send a marked test notification to every subscriber of an audience; report what each channel accepted',
    )
    .argument('<audienceId>')
    .addHelpText(
      'after',
      `
The test is rendered and published exactly as an alert (one SNS publish to the audience's topic,
each subscription getting its protocol's body), titled [TEST], and never written to the ledger.
RESULT per subscription: received (seen in its SQS queue), accepted (SNS took it for delivery:
email, SMS, HTTPS, the Slack relay), not sent (pending confirmation), not seen (an SQS queue that
did not get it: check its access policy).

Example:
  news-alerts test-send markets-desk`,
    )
    .action(action(sendTest));
}
