/**
 * The `news-alerts` command line: global options (target, output), every command group, and the
 * mapping from what went wrong to an exit code scripts can trust.
 */
import { Command, CommanderError, Option } from 'commander';
import { registerAudiences } from './audiences.ts';
import { actorVariable } from './context.ts';
import { describeFailure, ExitCode, exitCodeHelp, exitCodeOf } from './errors.ts';
import { registerLease } from './lease.ts';
import { terminalText } from './output.ts';
import { registerPreview } from './preview.ts';
import { registerReplay } from './replay.ts';
import { registerRules } from './rules.ts';
import { registerRun } from './run.ts';
import { registerSandbox } from './sandbox.ts';
import { registerSubscriptions } from './subscriptions.ts';
import { registerWatermark } from './watermark.ts';

const targetHelp = `Targets:
  By default commands act on the deployed stack: names come from the CloudFormation outputs of
  --stack (default NewsAlerts), with the standard AWS credentials and region (AWS_PROFILE,
  AWS_REGION, SSO, ...). With --local they act on the local sandbox ('news-alerts sandbox up'),
  found through --sandbox-file or .sandbox/sandbox.json.

Changes record updatedBy from --actor, $${actorVariable}, the AWS caller, or the OS user.`;

/** Builds the program (a new one per call, so tests can run it more than once). */
export function buildProgram(): Command {
  const program = new Command('news-alerts')
    .description('Operate news-alerts: rules, audiences and subscriptions, preview and replay, watermark and runs.')
    .addOption(new Option('--stack <name>', 'CloudFormation stack to act on').default('NewsAlerts'))
    .option('--region <region>', 'AWS region of the stack (default: the standard AWS configuration)')
    .option('--local', 'act on the local sandbox instead of the deployed stack')
    .option('--sandbox-file <file>', 'sandbox descriptor to use (implies --local)')
    .option('--json', 'print one JSON document on stdout (for scripts); no tables, no progress bars')
    .option('--actor <name>', `who is making changes (default: $${actorVariable}, the AWS caller, or the OS user)`)
    .showHelpAfterError('(add --help for usage)')
    .exitOverride()
    // commander's messages quote the command line (an unknown option, a bad value): escaped like all output.
    .configureOutput({ outputError: (text, write) => write(terminalText(text)) })
    .addHelpText('after', `\n${targetHelp}\n\n${exitCodeHelp}\n\nEveryday tasks: the "Ops guide" section of README.md`);
  // Every subcommand created below inherits exitOverride and the output settings.
  registerRules(program);
  registerAudiences(program);
  registerSubscriptions(program);
  registerPreview(program);
  registerReplay(program);
  registerWatermark(program);
  registerLease(program);
  registerRun(program);
  registerSandbox(program);
  const addExitCodes = (parent: Command) => {
    for (const command of parent.commands) {
      command.addHelpText('after', `\n${exitCodeHelp}`);
      addExitCodes(command);
    }
  };
  addExitCodes(program);
  return program;
}

/**
 * Runs the CLI with `argv` (as process.argv: node, script, args...) and returns the exit code.
 * Failures are printed as one clear message on stderr; `NEWS_ALERTS_DEBUG=1` adds the stack.
 */
export async function main(argv: readonly string[]): Promise<number> {
  // The AWS SDK warns about Node 20 on every client; the Lambda runtime is Node 22.
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  const program = buildProgram();
  try {
    await program.parseAsync([...argv]);
    return ExitCode.ok;
  } catch (error) {
    const code = exitCodeOf(error);
    // commander has already printed its own usage errors and help.
    if (!(error instanceof CommanderError)) {
      // Messages quote items, files and flags: printed escaped, like everything else the CLI prints.
      for (const line of describeFailure(error)) process.stderr.write(`news-alerts: ${terminalText(line)}\n`);
      if (process.env.NEWS_ALERTS_DEBUG && error instanceof Error && error.stack) {
        process.stderr.write(`${terminalText(error.stack)}\n`);
      }
    }
    return code;
  }
}
