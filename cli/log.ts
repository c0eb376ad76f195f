/**
 * The core's {@link Log} port for a CLI process: warnings and errors (a skipped rule, SNS retries,
 * a malformed article) go to stderr as one line each, so they never disturb stdout or `--json`.
 * The core never logs the API key or webhook URLs, so nothing here needs to mask them.
 */
import type { Log } from '#core/ports';
import type { Output } from './output.ts';

const details = (extra: readonly Record<string, unknown>[]): string => {
  const merged = Object.assign({}, ...extra) as Record<string, unknown>;
  return Object.keys(merged).length === 0 ? '' : ` ${JSON.stringify(merged)}`;
};

/** A Log that prints warnings and errors on stderr and drops the rest. */
export function stderrLog(output: Output): Log {
  return {
    debug() {},
    info() {},
    warn(message, ...extra) {
      output.warn(`${message}${details(extra)}`);
    },
    error(message, ...extra) {
      output.note(`error: ${message}${details(extra)}`);
    },
  };
}
