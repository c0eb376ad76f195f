/**
 * Exit codes scripts can rely on, and the errors that carry them. Every command throws one of
 * these (or lets a domain or AWS error through); {@link failureOf} is the one place that decides
 * the exit code, the stable error code of the `--json` failure document and the message, so
 * `--help`, the docs and scripts can promise them. AWS errors are turned into what to do: a
 * missing region or credentials names the settings (and `--local` when a sandbox is up), a missing
 * table, topic or secret names it and says to deploy the stack or check `--stack`/`--region`.
 *
 * Light on purpose (commander and the core's error classes only): the program imports it before
 * any command is loaded.
 */
import { CommanderError } from 'commander';
import { LeaseHeldError, NewsAlertsError, ProviderError, WatermarkConflictError } from '#core/errors';
import { newsAlerts } from './hints.ts';

/** The exit codes of every `news-alerts` command. */
export const ExitCode = {
  /** Everything the command was asked to do was done. */
  ok: 0,
  /** The operation failed (AWS or provider error, conflict, partial delivery); nothing is claimed done. */
  failed: 1,
  /** The command line or an input file is wrong; nothing was written. */
  usage: 2,
  /** A named rule, audience, subscription, stack or sandbox does not exist, or the target cannot be reached. */
  notFound: 3,
} as const;

export type ExitCodeValue = (typeof ExitCode)[keyof typeof ExitCode];

/** The `--help` epilogue that documents the codes. */
export const exitCodeHelp = `Exit codes:
  0  ok
  1  the operation failed, or part of it (AWS or provider error, a concurrent change, alerts not
     delivered, one audience of several unreadable: the others are still printed)
  2  usage or validation error (bad option, malformed or invalid file); nothing was written
  3  not found (rule, audience, subscription, stack outputs, sandbox, or an AWS table, topic or
     secret), or no AWS region, credentials or endpoint to reach the stack with`;

/**
 * The stable `error.code` of the `--json` failure document (scripts match on it, not on messages).
 * Each maps to one exit code: usage 2; not_found, aws_not_found, no_region, no_credentials,
 * expired_credentials, unreachable 3; everything else 1.
 */
export type ErrorCode =
  | 'usage'
  | 'not_found'
  | 'failed'
  | 'conflict'
  | 'lease_held'
  | 'access_denied'
  | 'aws_not_found'
  | 'no_region'
  | 'no_credentials'
  | 'expired_credentials'
  | 'unreachable'
  | 'interrupted';

/** One problem of an input (a file, an item): printed one per line, and listed in `problems` under `--json`. */
export interface Problem {
  readonly message: string;
  /** The file it is in, when there is one. */
  readonly file?: string;
  /** 1-based line in {@link file}. */
  readonly line?: number;
  /**
   * 1-based column in that line, where a syntax error was found. (A query problem's `column` is
   * its column in the query, whose place in the file the message says.)
   */
  readonly column?: number;
  /** The rule or audience id it concerns. */
  readonly item?: string;
  /**
   * `conflict`: the stored item changed since the file was made (a version mismatch). A usage
   * error whose problems are all conflicts is a conflict (exit 1), not a usage error.
   */
  readonly kind?: 'conflict';
  /**
   * Lines shown under the problem on a terminal, as they are (no `news-alerts:` in front), already
   * escaped by their maker: a query with a caret under a column. Not in `--json`. A message itself
   * is one line: any line break in it is data, and is printed escaped.
   */
  readonly detail?: readonly string[];
}

/** A problem as commands give it: a line of text, or its structured form. */
export type ProblemInput = string | Problem;

/**
 * A problem given as a line of text, in its structured form: the file checkers write their lines
 * as `file:line: rule "id": message` (item-files.ts `locate`), and `--json` promises the parts as
 * fields. The message keeps the item's name, so the line reads back exactly as it was written.
 */
function parsedProblem(text: string): Problem {
  // `file:line: message`, or `file:line:column: message` for a syntax error (the column was read
  // as the line, and the line as part of the file's name).
  const located = /^(.+?):(\d+)(?::(\d+))?: (.*)$/s.exec(text);
  if (located === null) return { message: text };
  const [, file, line, column, message] = located as unknown as [string, string, string, string | undefined, string];
  const item = /^(?:rule|audience) "([^"]*)": /.exec(message)?.[1];
  return {
    message,
    file,
    line: Number(line),
    ...(column === undefined ? {} : { column: Number(column) }),
    ...(item === undefined ? {} : { item }),
  };
}

const asProblem = (problem: ProblemInput): Problem => (typeof problem === 'string' ? parsedProblem(problem) : problem);

/**
 * The problems with a file and line in the order a person reads the file (files in the order
 * they first appear, lines ascending, ties as found), each other problem where it was: checkers
 * find problems in passes (the item's shape, then its audience, then its version), and a list
 * that jumps back and forth through a file is harder to work down.
 */
function inLineOrder(problems: readonly Problem[]): Problem[] {
  const fileOrder = new Map<string, number>();
  const slots: number[] = [];
  for (const [index, problem] of problems.entries()) {
    if (problem.file === undefined || problem.line === undefined) continue;
    if (!fileOrder.has(problem.file)) fileOrder.set(problem.file, fileOrder.size);
    slots.push(index);
  }
  const located = slots
    .map((index) => problems[index] as Problem)
    .map((problem, found) => ({ problem, found }))
    .sort(
      (a, b) =>
        (fileOrder.get(a.problem.file as string) as number) - (fileOrder.get(b.problem.file as string) as number) ||
        (a.problem.line as number) - (b.problem.line as number) ||
        a.found - b.found,
    );
  const ordered = [...problems];
  for (const [slot, index] of slots.entries()) ordered[index] = (located[slot] as { problem: Problem }).problem;
  return ordered;
}

/** `file:line: item: message`, with the parts that are known (the item once, if the message names it already). */
export function problemText(problem: Problem): string {
  const column = problem.line !== undefined && problem.column !== undefined ? `:${problem.column}` : '';
  const at =
    problem.file === undefined
      ? ''
      : `${problem.file}${problem.line === undefined ? '' : `:${problem.line}${column}`}: `;
  const named = problem.item !== undefined && problem.message.includes(`"${problem.item}"`);
  const item = problem.item === undefined || named ? '' : `${problem.item}: `;
  return `${at}${item}${problem.message}`;
}

/** A version conflict found while checking a file (`rules put`, `audiences put`): see {@link Problem.kind}. */
export const versionConflict = (problem: string | Omit<Problem, 'kind'>): Problem => ({
  ...asProblem(problem),
  kind: 'conflict',
});

/** Options of every CLI error: the cause, the stable code and the problems (one per line). */
export interface CliErrorOptions extends ErrorOptions {
  readonly code?: ErrorCode;
  readonly problems?: readonly ProblemInput[];
}

const defaultCode = (exitCode: number): ErrorCode =>
  exitCode === ExitCode.usage
    ? 'usage'
    : exitCode === ExitCode.notFound
      ? 'not_found'
      : exitCode >= 128
        ? 'interrupted' // 128 + a signal's number, as shells report it
        : 'failed';

/** Base class of errors the CLI reports as one line on stderr with a chosen exit code. */
export class CliError extends NewsAlertsError {
  readonly exitCode: ExitCodeValue;
  /** The stable code of the `--json` failure document. */
  readonly code: ErrorCode;
  readonly problems: readonly Problem[];
  constructor(message: string, exitCode: ExitCodeValue, options?: CliErrorOptions) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'CliError';
    this.exitCode = exitCode;
    this.code = options?.code ?? defaultCode(exitCode);
    this.problems = inLineOrder((options?.problems ?? []).map(asProblem));
  }

  /** The problems as lines (`file:line: item: message`). */
  get details(): readonly string[] {
    return this.problems.map(problemText);
  }
}

/**
 * Bad command line or input; the message says what to change. Exit code 2 (1, code `conflict`,
 * when every problem is a version conflict: the file is fine, the table moved on).
 */
export class UsageError extends CliError {
  constructor(message: string, details: readonly ProblemInput[] = [], options?: CliErrorOptions) {
    const problems = details.map(asProblem);
    const conflict = problems.length > 0 && problems.every((problem) => problem.kind === 'conflict');
    super(message, conflict ? ExitCode.failed : ExitCode.usage, {
      ...options,
      code: options?.code ?? (conflict ? 'conflict' : 'usage'),
      problems,
    });
    this.name = 'UsageError';
  }
}

/** A named thing does not exist. Exit code 3. */
export class NotFoundError extends CliError {
  constructor(message: string, options?: CliErrorOptions) {
    super(message, ExitCode.notFound, options);
    this.name = 'NotFoundError';
  }
}

/** The operation ran but did not succeed completely. Exit code 1. */
export class OperationFailedError extends CliError {
  constructor(message: string, options?: CliErrorOptions) {
    super(message, ExitCode.failed, options);
    this.name = 'OperationFailedError';
  }
}

/** Someone else changed the item between our read and our write (optimistic lock lost). Exit code 1. */
export class ConcurrentChangeError extends CliError {
  constructor(message: string, options?: CliErrorOptions) {
    super(message, ExitCode.failed, { code: 'conflict', ...options });
    this.name = 'ConcurrentChangeError';
  }
}

/** What the program knows about where a failure happened, for hints. */
export interface FailureSetting {
  /** The default sandbox descriptor, when one exists (a sandbox is up): "did you mean --local?". */
  readonly sandboxDescriptor?: string | undefined;
  /** True when the command acted on the sandbox (`--local`, `--sandbox-file`). */
  readonly local?: boolean | undefined;
  /** The AWS profile the command was given (`--profile`, or AWS_PROFILE): named when it has no region or credentials. */
  readonly profile?: string | undefined;
}

/** How a failure is reported: exit code, stable code, message lines and problems. */
export interface Failure {
  readonly exitCode: number;
  readonly code: ErrorCode;
  readonly message: string;
  readonly problems: readonly Problem[];
}

/** The fields of an AWS SDK error (and of the annotation cli/aws-clients.ts adds) that matter here. */
interface AwsErrorFields {
  readonly name?: string;
  readonly message?: string;
  readonly code?: string;
  readonly $metadata?: { readonly httpStatusCode?: number };
  /** Added by cli/aws-clients.ts: what the failed call was about. */
  readonly $newsAlerts?: { readonly service: string; readonly operation: string; readonly resource?: string };
}

/** `error` and its causes, five deep at most (an AggregateError's first error stands for its cause). */
function causeChain(error: unknown): Error[] {
  const chain: Error[] = [];
  let current: unknown = error;
  for (let depth = 0; depth < 5 && current instanceof Error; depth++) {
    chain.push(current);
    current = current.cause ?? (current instanceof AggregateError ? current.errors[0] : undefined);
  }
  return chain;
}

const errorCodes = (error: unknown): Set<string> => {
  const codes = new Set<string>();
  for (const link of causeChain(error)) {
    const fields = link as AwsErrorFields;
    if (fields.code) codes.add(fields.code);
    codes.add(link.name);
  }
  return codes;
};

const credentialSettings =
  'set AWS_PROFILE (or --profile) to a configured profile, run aws sso login, or set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY';
const resourceNotFound = new Set([
  'ResourceNotFoundException',
  'NotFoundException',
  'NotFound',
  'QueueDoesNotExist',
  'AWS.SimpleQueueService.NonExistentQueue',
]);
const expiredCredentials = new Set([
  'ExpiredToken',
  'ExpiredTokenException',
  'InvalidClientTokenId',
  'UnrecognizedClientException',
  'InvalidSignatureException',
  'SignatureDoesNotMatch',
  'TokenRefreshRequired',
  'UnauthorizedException',
]);
const unreachable = new Set(['ENOTFOUND', 'EAI_AGAIN', 'ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH']);

/** Whether `error` is, or was caused by, a failure of the news provider. */
const fromProvider = (error: Error): boolean => causeChain(error).some((link) => link instanceof ProviderError);

/** An AWS error turned into what to do, or undefined when it is not one this knows. */
function awsFailure(error: Error, setting: FailureSetting): Failure | undefined {
  const fields = error as AwsErrorFields;
  const codes = errorCodes(error);
  const call = fields.$newsAlerts;
  const what = call?.resource ? `${call.service} ${call.resource}` : call ? `the ${call.service} resource` : undefined;
  const local = setting.sandboxDescriptor && !setting.local ? ` (did you mean --local? a sandbox is up)` : '';
  const failure = (code: ErrorCode, exitCode: number, message: string): Failure => ({
    exitCode,
    code,
    message,
    problems: [],
  });
  // The profile may not be configured at all: then neither its region nor its credentials exist.
  const profile =
    setting.profile === undefined
      ? ''
      : ` (profile ${JSON.stringify(setting.profile)}: is it in ~/.aws/config? 'aws configure list-profiles' lists them)`;
  if (/Region is missing/i.test(error.message)) {
    return failure(
      'no_region',
      ExitCode.notFound,
      `no AWS region to find the stack in: set AWS_REGION (or --region), or a region in the AWS_PROFILE (--profile) profile${profile}${local}`,
    );
  }
  if (/Region not accepted/i.test(error.message)) {
    // --region is checked as it is parsed; this one came from AWS_REGION or the profile.
    const region = /region="([^"]*)"/.exec(error.message)?.[1];
    return failure(
      'no_region',
      ExitCode.notFound,
      `the AWS region${region === undefined ? '' : ` "${region}"`} is not a region name: fix AWS_REGION or the profile's region (written like eu-west-1), or give --region${local}`,
    );
  }
  if (codes.has('CredentialsProviderError') || /Could not (load|resolve) credentials/i.test(error.message)) {
    return failure('no_credentials', ExitCode.notFound, `no AWS credentials${profile}: ${credentialSettings}${local}`);
  }
  if ([...codes].some((code) => expiredCredentials.has(code)) || /(token|session).*expired/i.test(error.message)) {
    return failure(
      'expired_credentials',
      ExitCode.notFound,
      `the AWS credentials were refused (${error.name}: ${error.message}): run aws sso login, or check AWS_PROFILE (--profile) and the access keys${local}`,
    );
  }
  if ([...codes].some((code) => unreachable.has(code))) {
    const endpoint = process.env.AWS_ENDPOINT_URL ? ` (AWS_ENDPOINT_URL is ${process.env.AWS_ENDPOINT_URL})` : '';
    const hint = setting.local
      ? `; is the sandbox up? ('${newsAlerts()} sandbox status')`
      : `: check the network, --region (AWS_REGION) and AWS_ENDPOINT_URL${endpoint}${local}`;
    return failure('unreachable', ExitCode.notFound, `cannot reach AWS${what ? ` for ${what}` : ''}${hint}`);
  }
  if ([...codes].some((code) => resourceNotFound.has(code))) {
    const fix = setting.local
      ? `the sandbox does not have it: restart it ('${newsAlerts()} sandbox down', then 'sandbox up')`
      : 'deploy the stack or check --stack/--region';
    return failure('aws_not_found', ExitCode.notFound, `${what ?? 'an AWS resource'} does not exist: ${fix}`);
  }
  if (codes.has('AccessDeniedException') || codes.has('AccessDenied') || codes.has('AuthorizationError')) {
    return failure(
      'access_denied',
      ExitCode.failed,
      `access denied${what ? ` to ${what}${call ? ` (${call.operation})` : ''}` : ''}: the AWS identity (AWS_PROFILE / --profile) lacks the permission; use the stack's operator role or ask for it (${error.message})`,
    );
  }
  return undefined;
}

/**
 * commander's message with what it quotes that may be a secret left out: the value of an
 * `--option=value` (`--slack-webhook=https://hooks.slack.com/…`, `--key=…`), a value attached to a
 * short option (`-kSECRET`), and an unknown command that is not a word (`api-key SECRET`, `set`
 * forgotten). A misspelt command (`rulse`) is still quoted, with commander's suggestion.
 */
export function withoutOptionValues(text: string): string {
  // commander quotes the argument whole ('--key=a b'): the value runs to the quote that closes it
  // (one followed by a space, a full stop, a bracket or the end of the line), spaces and quotes
  // inside included; unquoted, to the end of the line.
  const quoted = String.raw`(?:[^'\n]|'(?![\s.)]|$))`;
  return text
    .replace(new RegExp(String.raw`(--?[A-Za-z0-9][\w-]*)=${quoted}*`, 'gm'), '$1=…')
    .replace(new RegExp(`(unknown option '-[A-Za-z0-9])(?!=…')${quoted}+'`, 'gm'), "$1…'")
    .replace(new RegExp(`unknown command '(${quoted}*)'`, 'gm'), (whole, name: string) =>
      /^[a-z][a-z-]{0,23}$/.test(name)
        ? whole
        : `unknown command (${[...name].length} characters, not shown: a value typed where a command goes may be a secret)`,
    );
}

/** The exit code, stable code, message and problems for anything a command threw. */
export function failureOf(error: unknown, setting: FailureSetting = {}): Failure {
  if (error instanceof CliError) {
    return { exitCode: error.exitCode, code: error.code, message: error.message, problems: error.problems };
  }
  if (error instanceof CommanderError) {
    const ok =
      error.code === 'commander.helpDisplayed' ||
      error.code === 'commander.version' ||
      (error.code === 'commander.help' && error.exitCode === 0);
    return {
      exitCode: ok ? ExitCode.ok : ExitCode.usage,
      code: 'usage',
      message:
        error.code === 'commander.help'
          ? 'a command is missing: see the list above, or add --help'
          : withoutOptionValues(error.message.replace(/^error: /, '')),
      problems: [],
    };
  }
  if (error instanceof LeaseHeldError) {
    return {
      exitCode: ExitCode.failed,
      code: 'lease_held',
      message: `${error.message}; wait for it to finish (or for the lease to expire) and try again`,
      problems: [],
    };
  }
  if (error instanceof WatermarkConflictError) {
    return {
      exitCode: ExitCode.failed,
      code: 'conflict',
      message: `${error.message}; read it again and retry`,
      problems: [],
    };
  }
  if (error instanceof Error) {
    // The news provider is not AWS: its network errors (ECONNREFUSED, ENOTFOUND, ...) sit in the
    // cause chain too, and must not send the reader to the AWS settings.
    const aws = fromProvider(error) ? undefined : awsFailure(error, setting);
    if (aws) return aws;
    const name = error.name && error.name !== 'Error' ? `${error.name}: ` : '';
    return { exitCode: ExitCode.failed, code: 'failed', message: `${name}${error.message}`, problems: [] };
  }
  return { exitCode: ExitCode.failed, code: 'failed', message: String(error), problems: [] };
}

/** The exit code for anything a command threw. */
export function exitCodeOf(error: unknown): number {
  return failureOf(error).exitCode;
}

/** A line of a failure for stderr; `detail` lines belong to the problem above them ({@link Problem.detail}). */
export interface FailureLine {
  readonly text: string;
  readonly detail?: true;
}

/** The lines describing a failure for stderr, without stack traces (those are for NEWS_ALERTS_DEBUG). */
export function failureLines(error: unknown, setting: FailureSetting = {}): FailureLine[] {
  const failure = failureOf(error, setting);
  return [
    { text: failure.message },
    ...failure.problems.flatMap((problem) => [
      { text: `  ${problemText(problem)}` },
      ...(problem.detail ?? []).map((text) => ({ text, detail: true as const })),
    ]),
  ];
}

/** The `--json` document of a failure: `{ ok: false, error: { code, message }, problems }`. */
export function failureDocument(failure: Failure): {
  ok: false;
  error: { code: ErrorCode; message: string };
  problems: Problem[];
} {
  return {
    ok: false,
    error: { code: failure.code, message: failure.message },
    problems: failure.problems.map(({ detail: _detail, ...problem }) => problem),
  };
}
