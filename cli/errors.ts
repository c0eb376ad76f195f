/**
 * Exit codes scripts can rely on, and the errors that carry them. Every command throws one of
 * these (or lets a domain error through, which maps to "operation failed"); `exitCodeOf` is the
 * one place that decides the code, so `--help` and the ops guide can promise them.
 */
import { CommanderError } from 'commander';
import { LeaseHeldError, NewsAlertsError, WatermarkConflictError } from '#core/errors';

/** The exit codes of every `news-alerts` command. */
export const ExitCode = {
  /** Everything the command was asked to do was done. */
  ok: 0,
  /** The operation failed (AWS or provider error, conflict, partial delivery); nothing is claimed done. */
  failed: 1,
  /** The command line or an input file is wrong; nothing was written. */
  usage: 2,
  /** A named rule, audience, subscription, stack or sandbox does not exist. */
  notFound: 3,
} as const;

export type ExitCodeValue = (typeof ExitCode)[keyof typeof ExitCode];

/** The `--help` epilogue that documents the codes. */
export const exitCodeHelp = `Exit codes:
  0  ok
  1  the operation failed, or part of it (AWS or provider error, a concurrent change, alerts not
     delivered, one audience of several unreadable: the others are still printed)
  2  usage or validation error (bad option, malformed or invalid file); nothing was written
  3  not found (rule, audience, subscription, stack outputs or sandbox)`;

/** Base class of errors the CLI reports as one line on stderr with a chosen exit code. */
export class CliError extends NewsAlertsError {
  readonly exitCode: ExitCodeValue;
  constructor(message: string, exitCode: ExitCodeValue, options?: ErrorOptions) {
    super(message, options);
    this.name = 'CliError';
    this.exitCode = exitCode;
  }
}

/** Bad command line or input; the message says what to change. Exit code 2. */
export class UsageError extends CliError {
  /** Extra lines (one per problem) printed under the message. */
  readonly details: readonly string[];
  constructor(message: string, details: readonly string[] = [], options?: ErrorOptions) {
    super(message, ExitCode.usage, options);
    this.name = 'UsageError';
    this.details = details;
  }
}

/** A named thing does not exist. Exit code 3. */
export class NotFoundError extends CliError {
  constructor(message: string, options?: ErrorOptions) {
    super(message, ExitCode.notFound, options);
    this.name = 'NotFoundError';
  }
}

/** The operation ran but did not succeed completely. Exit code 1. */
export class OperationFailedError extends CliError {
  constructor(message: string, options?: ErrorOptions) {
    super(message, ExitCode.failed, options);
    this.name = 'OperationFailedError';
  }
}

/** Someone else changed the item between our read and our write (optimistic lock lost). Exit code 1. */
export class ConcurrentChangeError extends CliError {
  constructor(message: string, options?: ErrorOptions) {
    super(message, ExitCode.failed, options);
    this.name = 'ConcurrentChangeError';
  }
}

/** The exit code for anything a command threw. */
export function exitCodeOf(error: unknown): ExitCodeValue {
  if (error instanceof CliError) return error.exitCode;
  if (error instanceof CommanderError) {
    if (error.code === 'commander.helpDisplayed' || error.code === 'commander.version') return ExitCode.ok;
    if (error.code === 'commander.help') return error.exitCode === 0 ? ExitCode.ok : ExitCode.usage;
    return ExitCode.usage;
  }
  return ExitCode.failed;
}

/** One or more lines describing a failure for stderr, without stack traces (those are for `--debug`). */
export function describeFailure(error: unknown): string[] {
  if (error instanceof UsageError) return [error.message, ...error.details.map((line) => `  ${line}`)];
  if (error instanceof CliError) return [error.message];
  if (error instanceof LeaseHeldError) {
    return [`${error.message}; wait for it to finish (or for the lease to expire) and try again`];
  }
  if (error instanceof WatermarkConflictError) return [`${error.message}; read it again and retry`];
  if (error instanceof Error) {
    const name = error.name && error.name !== 'Error' ? `${error.name}: ` : '';
    return [`${name}${error.message}`];
  }
  return [String(error)];
}
