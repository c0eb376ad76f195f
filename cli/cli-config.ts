/**
 * The CLI's settings that come from the environment, and the choices of its global options, in
 * one light module (nothing heavy imported), so the program can use them before loading any command.
 */
import type { OutputFormat } from './output.ts';

/** Names the person or automation making changes (`updatedBy`), when --actor is not given. */
export const actorVariable = 'NEWS_ALERTS_ACTOR';

/** Set to 1 to print the stack of a failure under its message. */
export const debugVariable = 'NEWS_ALERTS_DEBUG';

/** The default target: `local` (the sandbox, as if --local were given) or `stack` (the default). */
export const targetVariable = 'NEWS_ALERTS_TARGET';

/** The values of {@link targetVariable}. */
export const targetKinds = ['stack', 'local'] as const;
export type TargetKind = (typeof targetKinds)[number];

/** What `--output` accepts. */
export const outputFormatChoices = ['table', 'json', 'tsv'] as const satisfies readonly OutputFormat[];

/**
 * Whether output may be coloured: stdout is a terminal, `NO_COLOR` is unset or empty
 * (https://no-color.org) and `TERM` is not `dumb`; `FORCE_COLOR` (non-empty, not `0`) turns it on
 * anyway, `FORCE_COLOR=0` off. The output still colours tables only.
 */
export function colorWanted(isTTY: boolean | undefined, env: Readonly<Record<string, string | undefined>>): boolean {
  const force = env.FORCE_COLOR;
  if (force !== undefined && force !== '') return force !== '0' && force !== 'false';
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== '') return false;
  if (env.TERM === 'dumb') return false;
  return isTTY === true;
}

/**
 * Whether the command line asks for JSON (`--json`, `--output json`, `--output=json`), read from
 * the raw arguments so that a failure while parsing them is still reported as one JSON document.
 * Arguments after `--` are not options.
 */
export function jsonRequested(args: readonly string[]): boolean {
  for (let index = 0; index < args.length; index++) {
    const arg = args[index];
    if (arg === '--') return false;
    if (arg === '--json' || arg === '--output=json' || (arg === '--output' && args[index + 1] === 'json')) return true;
  }
  return false;
}
