/**
 * The glue between commander and the command implementations: each action gets a fresh
 * {@link CommandContext} built from the global options, and the context's connections are closed
 * whatever happens. Errors are left to the program, which turns them into exit codes.
 */
import { type Command, InvalidArgumentError } from 'commander';
import { CommandContext, type GlobalOptions } from './context.ts';
import { setHintTarget } from './hints.ts';

/** An action implementation: positional arguments as commander parsed them, then the command's options. */
export type ActionBody<O> = (context: CommandContext, args: readonly unknown[], options: O) => Promise<void>;

/** Wraps an action body for `command.action(...)`. */
export function action<O>(body: ActionBody<O>): (...params: unknown[]) => Promise<void> {
  return async (...params: unknown[]) => {
    // commander passes the positional arguments, then the options object, then the command.
    const command = params[params.length - 1] as Command;
    const context = new CommandContext(command.optsWithGlobals<GlobalOptions>());
    // The commands this one suggests act on the same target (cli/hints.ts).
    setHintTarget(context.options);
    try {
      await body(context, [...params.slice(0, -2), ...excessArguments(command)], command.opts() as O);
    } finally {
      await context.close();
    }
  };
}

/**
 * Operands beyond the declared arguments, for a command that takes them (`allowExcessArguments`)
 * only to refuse them with a message of its own: a webhook URL or an API key pasted onto the
 * command line. They are passed after the declared arguments and never listed in `--help`.
 */
function excessArguments(command: Command): string[] {
  const declared = command.registeredArguments;
  if (declared.at(-1)?.variadic) return [];
  return command.args.slice(declared.length);
}

/** Collects a repeatable, comma-separated list option: `--keywords a,b --keywords c` → [a, b, c]. */
export function collectList(value: string, previous: string[] | undefined): string[] {
  const parts = value
    .split(',')
    .map((part) => part.trim())
    .filter((part) => part !== '');
  // `--keywords ','` made an empty list, and the rule was refused for lacking categories.
  if (parts.length === 0) {
    throw new InvalidArgumentError('it holds no value; give one or more, comma-separated, or leave the option out');
  }
  return [...(previous ?? []), ...parts];
}

/**
 * A whole number option from `min` to `max`, written in decimal digits only: `Number()` would
 * also take `1e1`, `0x10`, `0b11`, ` 5 ` and `''` (0), none of which a person means as a count.
 */
export const integerOption =
  (min: number, max = Number.MAX_SAFE_INTEGER) =>
  (value: string): number => {
    const parsed = /^\d+$/.test(value) ? Number(value) : Number.NaN;
    if (!Number.isSafeInteger(parsed) || parsed < min || parsed > max) {
      throw new InvalidArgumentError(
        `must be a whole number from ${min} to ${max}, in decimal digits (such as ${min})`,
      );
    }
    return parsed;
  };
