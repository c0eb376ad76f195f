/**
 * The glue between commander and the command implementations: each action gets a fresh
 * {@link CommandContext} built from the global options, and the context's connections are closed
 * whatever happens. Errors are left to the program, which turns them into exit codes.
 */
import { type Command, InvalidArgumentError } from 'commander';
import { CommandContext, type GlobalOptions } from './context.ts';
import { UsageError } from './errors.ts';
import { setHintTarget, shellWord } from './hints.ts';

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
      refuseEmptyOperands(command, params.slice(0, -2));
      await body(context, [...params.slice(0, -2), ...excessArguments(command)], command.opts() as O);
    } finally {
      await context.close();
    }
  };
}

/**
 * An operand given empty (`holds ''`, `audiences show "$UNSET"`) is a usage error naming it: no id,
 * key, address or file is empty, and looked up it read as "audience  does not exist" (exit 3).
 */
function refuseEmptyOperands(command: Command, operands: readonly unknown[]): void {
  for (const [index, argument] of command.registeredArguments.entries()) {
    const value = operands[index];
    for (const given of Array.isArray(value) ? value : [value]) {
      if (typeof given === 'string' && given.trim() === '') {
        throw new UsageError(
          `<${argument.name()}> is empty: give one${argument.required ? '' : ', or leave it out where --help says it may be'}`,
        );
      }
    }
  }
}

/**
 * A single-valued option whose value cannot be empty (`--audience ''`, `--text ' '`): refused
 * with what to do instead of being read as no filter, or looked up as an id nothing has.
 */
export function nonEmptyOption(value: string): string {
  if (value.trim() === '') throw new InvalidArgumentError('it is empty; give a value, or leave the option out');
  return value;
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
 * A thousands separator, as the split sees it: the part before ends with a number of one to three
 * digits (alone, or after a space, a currency sign or a bracket), the part after starts with
 * exactly three digits. `1,000 jobs`, `$10,000`, `1,000,000`; not a list of small numbers
 * (`Windows 10,11`, `2,5`), `2024,2025`, `5g,6g` or `COVID-19,2020`.
 */
const NUMBER_BEFORE_COMMA = /(?:^|[\s\p{Sc}(])\d{1,3}$/u;
const DIGIT_AFTER_COMMA = /^\d{3}(?!\d)/;

/** Parsers of list options: commander gathers every value of such an option (see cli/program.ts). */
const listParsers = new WeakSet<object>([collectList]);

/** Whether `parse` is the parser of a repeatable list option ({@link collectList}, {@link textListOption}). */
export const isListParser = (parse: unknown): boolean => typeof parse === 'function' && listParsers.has(parse);

/** Whether the comma between pieces `index` and `index + 1` of a split value is inside a number. */
const commaInNumber = (pieces: readonly string[], index: number): boolean =>
  NUMBER_BEFORE_COMMA.test(pieces[index] ?? '') && DIGIT_AFTER_COMMA.test(pieces[index + 1] ?? '');

/**
 * {@link collectList} for an option whose values are text people read (`--keywords`): a comma
 * inside a number (`--keywords '1,000 jobs'`) would split the keyword into `1` and `000 jobs`, so
 * it is refused, with how to write the number and how to give separate values. A list option has
 * no escape for a comma: a keyword with one is written in a rules file.
 * @param flag the option, for the message (`--keywords`)
 */
export function textListOption(flag: string): (value: string, previous: string[] | undefined) => string[] {
  const parse = (value: string, previous: string[] | undefined): string[] => {
    const pieces = value.split(',');
    const start = pieces.findIndex((_, index) => commaInNumber(pieces, index));
    if (start === -1) return collectList(value, previous);
    let end = start + 1;
    while (commaInNumber(pieces, end)) end++;
    const keyword = pieces
      .slice(start, end + 1)
      .join(',')
      .trim();
    const number = /\d{1,3}(?:,\d{3})+/.exec(keyword)?.[0] ?? keyword;
    const plain = number.replaceAll(',', '');
    const parts = pieces.map((part) => part.trim()).filter((part) => part !== '');
    throw new InvalidArgumentError(
      `the comma in ${number} would split it (into ${parts.map((part) => `"${part}"`).join(', ')}), as every comma in a list does. Write the number as ${plain} if the articles do; to keep the comma, put the keyword in a rules file (${flag.replace(/^--/, '').replace(/-(\w)/g, (_, letter: string) => letter.toUpperCase())}: ["${keyword}"]) and use 'rules put --file'; for separate values, give the option once for each (${parts.map((part) => `${flag} ${shellWord(part)}`).join(' ')})`,
    );
  };
  listParsers.add(parse);
  return parse;
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

/**
 * Refuses an attribute both set by its flag and named by `--clear` in one update (`--query x
 * --clear query`): one of the two would be dropped without a word. `given` holds the attributes
 * the flags set; each flag is its attribute's name in kebab case.
 */
export function refuseSetAndCleared(given: Readonly<Record<string, unknown>>, cleared: readonly string[]): void {
  for (const name of cleared) {
    if (!Object.hasOwn(given, name)) continue;
    const flag = `--${name.replace(/[A-Z]/g, (capital) => `-${capital.toLowerCase()}`)}`;
    throw new UsageError(
      `${flag} and --clear ${name} conflict: give ${flag} to change it, or --clear ${name} to remove it`,
    );
  }
}
