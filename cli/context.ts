/**
 * What every command gets: its output, its target (resolved once, on first use), who is acting,
 * and the few interactive bits (confirmation prompts, reading a secret without echo). Commands
 * never touch process streams or global options directly, so each reads as its domain steps.
 */
import { hostname, userInfo } from 'node:os';
import { fileURLToPath } from 'node:url';
import { actorVariable, colorWanted } from './cli-config.ts';
import { OperationFailedError, UsageError } from './errors.ts';
import { Output, type OutputFormat, safeText, terminalText } from './output.ts';
import { createProgress, type Progress } from './progress.ts';
import type { Target } from './target.ts';

/** The repository root (the CLI runs from a clone). */
export const projectRoot = fileURLToPath(new URL('../', import.meta.url));

/** Options every command accepts (declared on the program). */
export interface GlobalOptions {
  readonly local?: boolean;
  readonly sandboxFile?: string;
  readonly stack: string;
  readonly region?: string;
  /** AWS profile (credentials and region) for the stack. */
  readonly profile?: string;
  /** True with `--json` or `--output json`. */
  readonly json?: boolean;
  /** `--output`; unset: a table on a terminal, TSV in a pipe. */
  readonly output?: OutputFormat;
  readonly actor?: string;
}

export { actorVariable };

export class CommandContext {
  readonly options: GlobalOptions;
  readonly output: Output;
  #target: Promise<Target> | undefined;
  #actor: Promise<string> | undefined;

  constructor(options: GlobalOptions) {
    this.options = options;
    this.output = new Output({
      json: options.json === true,
      format: options.output,
      color: colorWanted(process.stdout.isTTY, process.env),
    });
  }

  /** The deployed stack or the local sandbox, resolved on first use. */
  target(): Promise<Target> {
    // Loaded on first use: the AWS SDK clients stay out of commands that never reach AWS (validate, --help).
    this.#target ??= import('./target.ts').then(({ resolveTarget }) => resolveTarget(this.options, projectRoot));
    return this.#target;
  }

  /**
   * Who makes a change, for `updatedBy`: `--actor`, then `$NEWS_ALERTS_ACTOR`, then the AWS
   * caller (stack), then the OS user at this host.
   */
  actor(): Promise<string> {
    this.#actor ??= (async () => {
      const explicit = this.options.actor?.trim() || process.env[actorVariable]?.trim();
      if (explicit) {
        // Stored as updatedBy and shown by every list: refuse what would print as an escape sequence.
        if (safeText(explicit) !== explicit) {
          throw new UsageError(
            `--actor (or $${actorVariable}) holds control or invisible characters: "${safeText(explicit)}"; give a plain name such as erin@ops`,
          );
        }
        return explicit;
      }
      const caller = await (await this.target()).callerIdentity();
      if (caller) return caller;
      return `${safeUserName()}@${hostname()}`;
    })();
    return this.#actor;
  }

  /** A progress bar on stderr, only when a person is watching. */
  progress(): Progress {
    return createProgress({ json: this.output.json });
  }

  /**
   * Asks before a change that cannot be undone by the next run. `--yes` skips the question; without
   * a terminal to ask on, the command refuses rather than guess.
   * @throws UsageError when there is no terminal and no `--yes`; OperationFailedError when the answer is no
   */
  async confirm(question: string, yes: boolean | undefined): Promise<void> {
    if (yes) return;
    if (!process.stdin.isTTY || !process.stderr.isTTY) {
      throw new UsageError(`${question} Pass --yes to confirm (no terminal to ask on).`);
    }
    const { createInterface } = await import('node:readline/promises');
    const prompt = createInterface({ input: process.stdin, output: process.stderr });
    try {
      const answer = (await prompt.question(`${terminalText(question)} [y/N] `)).trim().toLowerCase();
      if (answer !== 'y' && answer !== 'yes') throw new OperationFailedError('cancelled; nothing was changed');
    } finally {
      prompt.close();
    }
  }

  /**
   * Reads a secret (a webhook URL) from stdin: piped input is read whole; at a terminal the user
   * is prompted and nothing is echoed. Never from argv, where the process list and shell history
   * would keep it.
   */
  async readSecret(prompt: string): Promise<string> {
    if (!process.stdin.isTTY) return (await readAll(process.stdin)).trim();
    return await readHidden(prompt);
  }

  /** Closes the target's connections. */
  async close(): Promise<void> {
    if (this.#target) {
      try {
        (await this.#target).close();
      } catch {
        // The target never resolved: nothing to close.
      }
    }
  }
}

function safeUserName(): string {
  try {
    return userInfo().username;
  } catch {
    return process.env.USER ?? 'unknown';
  }
}

/**
 * stdin as text. A secret (API key, webhook URL) comes this way, so bytes that are not UTF-8 are
 * refused without saying which (toString('utf8') turned them into U+FFFD, and that was stored).
 */
async function readAll(stream: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(Buffer.concat(chunks));
  } catch {
    throw new UsageError(
      'the input on stdin is not UTF-8 text (a file saved in another encoding?); pipe the value exactly as issued; nothing was stored',
    );
  }
}

/** A line typed at the terminal without echo (raw mode), ending at Enter; Ctrl-C cancels. */
function readHidden(prompt: string): Promise<string> {
  const input = process.stdin;
  process.stderr.write(prompt);
  return new Promise((resolve, reject) => {
    let value = '';
    const finish = (error?: Error) => {
      input.setRawMode(false);
      input.pause();
      input.off('data', onData);
      process.stderr.write('\n');
      if (error) reject(error);
      else resolve(value.trim());
    };
    const onData = (chunk: Buffer) => {
      for (const char of chunk.toString('utf8')) {
        if (char === '\r' || char === '\n') return finish();
        if (char === '\u0003') return finish(new OperationFailedError('cancelled; nothing was changed'));
        if (char === '\u007f' || char === '\b') value = value.slice(0, -1);
        else value += char;
      }
    };
    input.setRawMode(true);
    input.resume();
    input.on('data', onData);
  });
}
