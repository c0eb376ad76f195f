/**
 * The `news-alerts` command line: global options (target, output), the command groups, and the
 * mapping from what went wrong to an exit code scripts can trust.
 *
 * Start-up is kept short: only the group the command line names is loaded (cli/commands.ts), and
 * this module imports nothing heavy (no AWS SDK, zod, yaml or table library) at the top.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Argument, Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import pkg from '../package.json' with { type: 'json' };
import {
  actorVariable,
  debugVariable,
  jsonRequested,
  outputFormatChoices,
  targetKinds,
  targetVariable,
} from './cli-config.ts';
import { isListParser } from './command.ts';
import { type CommandGroup, commandGroups, groupNamed } from './commands.ts';
import {
  ExitCode,
  exitCodeHelp,
  failureDocument,
  failureLines,
  failureOf,
  UsageError,
  withoutOptionValues,
} from './errors.ts';

const targetHelp = `Targets:
  By default commands act on the deployed stack: names come from the CloudFormation outputs of
  --stack (default NewsAlerts), with the standard AWS credentials and region (--profile or
  AWS_PROFILE, --region or AWS_REGION, SSO, ...). With --local they act on the local sandbox
  ('news-alerts sandbox up'), found through --sandbox-file or .sandbox/sandbox.json.
  ${targetVariable}=local makes --local the default (${targetVariable}=stack: the stack); a flag
  wins over it: --local or --sandbox-file for the sandbox, --stack <name> for a stack.

Output:
  A table on a terminal (coloured unless NO_COLOR is set or TERM=dumb), tab-separated values in
  a pipe or file; --output table|json|tsv chooses, --json is --output json. Under --json stdout
  is one JSON document, failures included: {"ok": false, "error": {"code", "message"}, "problems"}.

Changes record updatedBy from --actor, $${actorVariable}, the AWS caller, or the OS user.`;

/** What commander printed itself (usage errors), kept to be printed escaped once parsing is over. */
interface CommanderMessages {
  text: string;
}

/**
 * `--stack`: a CloudFormation stack name (a letter, then letters, digits and hyphens, at most 128),
 * refused here rather than by CloudFormation after the credentials were looked up (`--stack ''`
 * was taken as no stack).
 */
function stackName(value: string): string {
  if (!/^[A-Za-z][A-Za-z0-9-]{0,127}$/.test(value)) {
    throw new InvalidArgumentError(
      'a stack name is a letter, then letters, digits and hyphens (at most 128), as CloudFormation names it: NewsAlerts',
    );
  }
  return value;
}

/**
 * `--region`: an AWS region name such as eu-west-1 (lowercase letters, digits and hyphens). The SDK
 * refused `us east 1` only when the first request was built, as a failure (exit 1), not as a
 * mistyped option.
 */
function regionName(value: string): string {
  if (!/^[a-z]{2}(?:-[a-z0-9]+)+$/.test(value)) {
    throw new InvalidArgumentError('an AWS region is written like eu-west-1 or us-east-1 (lowercase, hyphens)');
  }
  return value;
}

/** The program with its global options and no command groups. */
function baseProgram(messages: CommanderMessages, versionFlags = '-V, --version'): Command {
  return (
    new Command('news-alerts')
      .description('Operate news-alerts: rules, audiences and subscriptions, preview and replay, watermark and runs.')
      .addOption(
        new Option('--stack <name>', 'CloudFormation stack to act on').default('NewsAlerts').argParser(stackName),
      )
      .option('--region <region>', "AWS region of the stack (default: AWS_REGION or the profile's region)", regionName)
      .option('--profile <name>', 'AWS profile for credentials and region (default: AWS_PROFILE)')
      .option(
        '--local',
        `act on the local sandbox instead of the deployed stack (default with ${targetVariable}=local)`,
      )
      .option('--sandbox-file <file>', 'sandbox descriptor to use (implies --local)')
      .addOption(
        new Option('--output <format>', 'table, json or tsv (default: a table on a terminal, tsv in a pipe)').choices(
          outputFormatChoices,
        ),
      )
      .option('--json', 'print one JSON document on stdout (for scripts), same as --output json')
      .option('--actor <name>', `who is making changes (default: $${actorVariable}, the AWS caller, or the OS user)`)
      .version(pkg.version, versionFlags, 'print the version of news-alerts')
      .exitOverride()
      // commander's messages quote the command line (an unknown option, a bad value): kept here and
      // printed escaped, like all output, once parsing has failed.
      .configureOutput({
        outputError: (text) => {
          messages.text += text;
        },
      })
      .addHelpText('after', `\n${targetHelp}\n\n${exitCodeHelp}\n\nEveryday tasks: docs/ops-guide.md`)
  );
}

/**
 * Settles the global options before any command runs: `--json` is `--output json` (any other
 * `--output` with it is a usage error), and ${targetVariable} chooses the target when no flag does.
 */
function settleGlobalOptions(program: Command): void {
  const options = program.opts<{ json?: boolean; output?: string; local?: boolean; sandboxFile?: string }>();
  if (options.json && options.output !== undefined && options.output !== 'json') {
    throw new UsageError(`--json and --output ${options.output} ask for different formats; give one of them`);
  }
  const sandbox = options.local === true ? '--local' : options.sandboxFile !== undefined ? '--sandbox-file' : undefined;
  const stackFlags = ['stack', 'region', 'profile'].filter((name) => program.getOptionValueSource(name) === 'cli');
  if (sandbox !== undefined && stackFlags.length > 0) {
    // They were ignored: the command acted on the sandbox whatever stack, region or profile they named.
    throw new UsageError(
      `${sandbox} acts on the local sandbox, and ${stackFlags.map((name) => `--${name}`).join(', ')} on a deployed stack; give one or the other`,
    );
  }
  if (options.output === 'json') program.setOptionValueWithSource('json', true, 'implied');
  if (options.json) program.setOptionValueWithSource('output', 'json', 'implied');
  const target = process.env[targetVariable]?.trim() ?? '';
  if (target === '') return;
  if (!(targetKinds as readonly string[]).includes(target)) {
    throw new UsageError(`${targetVariable} is "${target}"; set it to local or stack (or unset it)`);
  }
  const flagChoosesTarget =
    options.local === true || options.sandboxFile !== undefined || program.getOptionValueSource('stack') === 'cli';
  if (target === 'local' && !flagChoosesTarget) program.setOptionValueWithSource('local', true, 'env');
}

/**
 * The top-level command the arguments name (`rules` in `--local --stack X rules list`), skipping
 * global options and their values; `help rules` names `rules`. Undefined when there is none.
 */
export function commandNameOf(program: Command, args: readonly string[]): string | undefined {
  const takesValue = new Set<string>();
  for (const option of program.options) {
    if (!option.required && !option.optional) continue;
    if (option.long) takesValue.add(option.long);
    if (option.short) takesValue.add(option.short);
  }
  let afterHelp = false;
  for (let index = 0; index < args.length; index++) {
    const arg = args[index] ?? '';
    if (arg === '--') return undefined;
    if (arg.startsWith('-') && arg !== '-') {
      if (!arg.includes('=') && takesValue.has(arg)) index++;
      continue;
    }
    if (arg === 'help' && !afterHelp) {
      afterHelp = true;
      continue;
    }
    return arg;
  }
  return afterHelp ? 'help' : undefined;
}

/** Registers the groups `wanted` for real (each module once) and lists the others by name only. */
async function addGroups(program: Command, wanted: (group: CommandGroup) => boolean): Promise<Set<Command>> {
  const loaded = new Set<CommandGroup['load']>();
  const stubs = new Set<Command>();
  const toLoad = commandGroups.filter(wanted).map((group) => group.load);
  // Load side by side, register in manifest order (the order --help lists them).
  const registers = new Map(await Promise.all(toLoad.map(async (load) => [load, await load()] as const)));
  for (const group of commandGroups) {
    const register = registers.get(group.load);
    if (register) {
      if (!loaded.has(group.load)) register(program);
      loaded.add(group.load);
    } else {
      // Listed by --help and known to "did you mean"; never run (a named group is loaded for real).
      const stub = program
        .command(group.name)
        .aliases([...(group.aliases ?? [])])
        .description(group.summary);
      stubs.add(stub);
    }
  }
  return stubs;
}

/** `completion bash|zsh`: the script comes from the whole command tree (every group is loaded for it). */
function addCompletion(program: Command): void {
  program
    .command('completion')
    .description('print a shell completion script (bash or zsh) for every command and option')
    .addArgument(new Argument('<shell>', 'the shell').choices(['bash', 'zsh']))
    .addHelpText(
      'after',
      `
Install:
  bash: news-alerts completion bash > ~/.local/share/bash-completion/completions/news-alerts
  zsh:  echo 'eval "$(news-alerts completion zsh)"' >> ~/.zshrc`,
    )
    .action(async (shell: 'bash' | 'zsh') => {
      const [{ completionScript }, { Output }] = await Promise.all([import('./completion.ts'), import('./output.ts')]);
      new Output({ json: false }).line(completionScript(program, shell).trimEnd());
    });
}

/**
 * Builds the program (a new one per call, so tests can run it more than once). With `args` (the
 * arguments after node and the script) only the group they name is loaded; without, every group.
 */
export async function buildProgram(args?: readonly string[]): Promise<Command> {
  return (await buildProgramWith(args, { text: '' })).program;
}

async function buildProgramWith(
  args: readonly string[] | undefined,
  messages: CommanderMessages,
): Promise<{ program: Command; messages: CommanderMessages }> {
  // `rules restore <rule> --version N` names a rule version: there `--version` is the command's
  // option, and only -V prints the version of news-alerts (commander reads program options anywhere).
  const named = args === undefined ? undefined : commandNameOf(baseProgram({ text: '' }), args);
  const restore = named === 'rules' && args?.includes('restore') === true;
  const program = baseProgram(messages, restore ? '-V' : '-V, --version');
  program.hook('preAction', () => settleGlobalOptions(program));
  const group = named === undefined ? undefined : groupNamed(named);
  // Completion knows every command: it loads them all.
  const all = args === undefined || named === 'completion';
  const stubs = await addGroups(program, (candidate) => all || candidate.load === group?.load);
  addCompletion(program);
  const addExitCodes = (parent: Command) => {
    for (const command of parent.commands) {
      command.addHelpText('after', `\n${exitCodeHelp}`);
      addExitCodes(command);
    }
  };
  // Stubs have no help of their own; loaded groups (and their subcommands) get the exit codes.
  for (const command of program.commands) {
    if (stubs.has(command)) continue;
    command.addHelpText('after', `\n${exitCodeHelp}`);
    addExitCodes(command);
  }
  refuseRepeatedOptions(program);
  checkRequiredOptionsAfterUnknown(program);
  return { program, messages };
}

/**
 * Makes an option that takes one value a usage error when given twice: commander keeps the last
 * value, so `rules put r --query alpha --query beta` saved `beta` without a word. List options
 * (`--keywords a --keywords b`, {@link isListParser}) gather every value and stay repeatable. The
 * message names the option, never its values (one may be a secret).
 */
function refuseRepeatedOptions(command: Command): void {
  for (const option of command.options) {
    if ((!option.required && !option.optional) || option.variadic || isListParser(option.parseArg)) continue;
    let given = 0;
    command.on(`option:${option.name()}`, () => {
      given += 1;
      if (given > 1) {
        command.error(
          `error: option '${option.flags}' was given twice; give it once (the second would replace the first)`,
          {
            exitCode: ExitCode.usage,
            code: 'commander.optionRepeated',
          },
        );
      }
    });
  }
  for (const sub of command.commands) refuseRepeatedOptions(sub);
}

/**
 * Checks a command's required options (`requiredOption`) once its unknown options were checked:
 * commander checks required options first, so a typo of one (`spikes evaluate --csvv x.csv`) said
 * "required option '--csv <file>' not specified" and never named the option it did not know, nor
 * its "Did you mean --csv?". The same check and message, moved after the unknown options (a
 * command's own preAction hook runs after them; commander offers no setting for the order).
 */
function checkRequiredOptionsAfterUnknown(command: Command): void {
  const required = command.options.filter((option) => option.mandatory);
  if (required.length > 0) {
    for (const option of required) option.makeOptionMandatory(false);
    command.hook('preAction', (_hooked, acting) => {
      if (acting !== command) return;
      for (const option of required) {
        if (command.getOptionValue(option.attributeName()) === undefined) {
          command.error(`error: required option '${option.flags}' not specified`, {
            exitCode: ExitCode.usage,
            code: 'commander.missingMandatoryOptionValue',
          });
        }
      }
    });
  }
  for (const sub of command.commands) checkRequiredOptionsAfterUnknown(sub);
}

/** Where `sandbox up` leaves its descriptor (cli/sandbox-descriptor.ts), found from this module (cli/ or dist/). */
const defaultDescriptor = fileURLToPath(new URL('../.sandbox/sandbox.json', import.meta.url));

/** Bytes written to stdout by this process so far (a command's document stands; no failure document after it). */
let stdoutWrites = 0;
let streamsWatched = false;
/** Set when writing stdout failed for another reason than a reader that went away. */
let outputFailed = false;

/**
 * Counts what is written to stdout, and makes a reader that goes away (`news-alerts watermark
 * show | head -1`) no failure: EPIPE on stdout or stderr is ignored (what is left to print is
 * dropped) and the command ends as it would. Any other failure to write stdout (a full disk under
 * `> file`) is said once on stderr, without a stack trace, and makes the exit code 1: what was
 * printed is incomplete. One on stderr is ignored: it only carries messages. Once per process
 * (tests call main more than once).
 */
function watchStreams(): void {
  if (streamsWatched) return;
  streamsWatched = true;
  const write = process.stdout.write;
  process.stdout.write = function (this: NodeJS.WriteStream, ...args: Parameters<typeof write>) {
    stdoutWrites += (args[0] as { length?: number }).length ?? 0;
    return write.apply(this, args);
  } as typeof write;
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'EPIPE' || error.code === 'ERR_STREAM_DESTROYED') return;
      // stderr only carries messages; what the command printed (stdout, files) is whole.
      if (stream !== process.stdout || outputFailed) return;
      outputFailed = true;
      // The code only (ENOSPC, EIO): the message may name a path.
      const code = /^[A-Z0-9_]{1,32}$/.test(error.code ?? '') ? error.code : 'an error';
      process.stderr.write(`news-alerts: writing to stdout failed (${code}): what it printed is incomplete\n`);
    });
  }
}

/**
 * The exit code of a command that returned `code`, once its output is flushed: 1 when writing it
 * failed (the stream reports that after the write, so only the flush is late enough to know).
 */
export function exitCodeAfterOutput(code: number): number {
  return outputFailed && code === ExitCode.ok ? ExitCode.failed : code;
}

/**
 * Runs the CLI with `argv` (as process.argv: node, script, args...) and returns the exit code.
 * Failures are printed as one clear message on stderr (`NEWS_ALERTS_DEBUG=1` adds the stack) and,
 * under `--json`/`--output json`, as one JSON document on stdout:
 * `{ "ok": false, "error": { "code", "message" }, "problems": [...] }`.
 */
export async function main(argv: readonly string[]): Promise<number> {
  // The AWS SDK warns about Node 20 on every client; the Lambda runtime is Node 22.
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  watchStreams();
  const writtenBefore = stdoutWrites;
  const args = argv.slice(2);
  const messages: CommanderMessages = { text: '' };
  let program: Command | undefined;
  try {
    program = (await buildProgramWith(args, messages)).program;
    await program.parseAsync([...argv]);
    return ExitCode.ok;
  } catch (error) {
    const options = program?.opts<{ local?: boolean; sandboxFile?: string; profile?: string }>() ?? {};
    const profile = options.profile ?? process.env.AWS_PROFILE;
    const setting = {
      local: options.local === true || options.sandboxFile !== undefined,
      profile: profile === undefined || profile === '' ? undefined : profile,
      sandboxDescriptor: existsSync(defaultDescriptor) ? defaultDescriptor : undefined,
    };
    const failure = failureOf(error, setting);
    if (failure.exitCode === ExitCode.ok) return ExitCode.ok; // --help, --version
    // Loaded only when something failed: the happy path never pays for it.
    const { jsonText, safeText, terminalText } = await import('./output.ts');
    if (error instanceof CommanderError) {
      // commander's own message, escaped, and a hint (never the whole help; `news-alerts rules`
      // without a subcommand has printed the group's help already).
      if (messages.text !== '') {
        process.stderr.write(`${commanderText(withoutOptionValues(messages.text), safeText)}(add --help for usage)\n`);
      }
    } else {
      // Messages quote items, files and flags: printed escaped, like everything else the CLI prints,
      // line breaks included (`\n`): each line is one line, so a quoted value cannot print a line
      // of its own that reads like the CLI's.
      for (const line of failureLines(error, setting)) {
        process.stderr.write(line.detail ? `${safeText(line.text)}\n` : `news-alerts: ${safeText(line.text)}\n`);
      }
      if (process.env[debugVariable] && error instanceof Error && error.stack) {
        process.stderr.write(`${terminalText(error.stack)}\n`);
      }
    }
    if (jsonRequested(args) && stdoutWrites === writtenBefore) {
      const message =
        error instanceof CommanderError && messages.text !== ''
          ? withoutOptionValues(messages.text.trim())
          : failure.message;
      process.stdout.write(`${jsonText(failureDocument({ ...failure, message: message.replace(/^error: /, '') }))}\n`);
    }
    return failure.exitCode;
  }
}

/**
 * commander's message as printed: one line, plus its "(Did you mean …?)" line when it has one. Its
 * messages quote what they were given ('…'), and a value may hold quotes and line breaks of its
 * own, so no quoting is trusted: every other line break is data, shown as \n, and cannot print a
 * line that reads like one of the CLI's.
 */
function commanderText(text: string, safeText: (text: string) => string): string {
  const suggestion = /\n(\(Did you mean [^\n]*\?\))\n?$/.exec(text);
  const message = (suggestion === null ? text : text.slice(0, suggestion.index)).replace(/\n$/, '');
  return `${safeText(message)}\n${suggestion?.[1] === undefined ? '' : `${safeText(suggestion[1])}\n`}`;
}
