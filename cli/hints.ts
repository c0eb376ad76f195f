/**
 * The commands the CLI suggests ("Next: news-alerts subscriptions add …", "fix it with
 * 'news-alerts audiences update …'") act on the target the suggesting command acted on: after
 * `news-alerts --local audiences create`, the hint says `news-alerts --local subscriptions add`, so
 * a hint copied into the same shell never reaches the deployed stack instead of the sandbox (or
 * another stack, region or profile than the one just used).
 *
 * The target flags are settled once per process, when a command starts (cli/command.ts); hints
 * built before that, or by code run outside a command, name no target.
 */

/** The global options that choose the target, as a command received them. */
export interface TargetFlags {
  readonly local?: boolean | undefined;
  readonly sandboxFile?: string | undefined;
  readonly stack?: string | undefined;
  readonly region?: string | undefined;
  readonly profile?: string | undefined;
}

/** The stack commands act on when no `--stack` is given. */
export const defaultStackName = 'NewsAlerts';

/** A word as the shell reads it back: as it is when it needs no quoting, else in single quotes. */
export function shellWord(word: string): string {
  return /^[\w./:@%+=,-]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`;
}

/**
 * The flags that select the same target again: `--sandbox-file <file>` or `--local` for the
 * sandbox; `--stack`, `--region` and `--profile` as given for a stack (nothing for the default
 * stack with the environment's region and credentials). Empty, or ends with a space.
 */
export function targetSelector(flags: TargetFlags): string {
  const words: string[] = [];
  if (flags.sandboxFile !== undefined) words.push('--sandbox-file', shellWord(flags.sandboxFile));
  else if (flags.local === true) words.push('--local');
  else {
    if (flags.stack !== undefined && flags.stack !== defaultStackName) words.push('--stack', shellWord(flags.stack));
    if (flags.region !== undefined) words.push('--region', shellWord(flags.region));
    if (flags.profile !== undefined) words.push('--profile', shellWord(flags.profile));
  }
  return words.map((word) => `${word} `).join('');
}

let selector = '';

/** Settles the target of this process's hints (cli/command.ts, as a command starts). */
export function setHintTarget(flags: TargetFlags): void {
  selector = targetSelector(flags);
}

/** `news-alerts` with the flags of this invocation's target: what a hint's command line starts with. */
export function newsAlerts(): string {
  return `news-alerts ${selector}`.trimEnd();
}

/** A command line to suggest: `hint('subscriptions add x')` → `news-alerts --local subscriptions add x`. */
export function hint(command: string): string {
  return `news-alerts ${selector}${command}`;
}

/**
 * The command that subscribes a lost HTTPS endpoint of `audienceId` again: its URL on stdin or at
 * the hidden prompt (`-`), since it may carry a token (ops-guide.md, Subscriptions), and in the
 * sandbox (`local`) with the flag its receiver on this machine needs.
 */
export const addHttpsAgain = (audienceId: string, local: boolean): string =>
  `'${newsAlerts()} subscriptions add ${audienceId} --https -${local ? ' --allow-internal-target' : ''}' (the URL on stdin or at the hidden prompt)`;
