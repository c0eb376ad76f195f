/**
 * Progress bars for long work (replay, preview over many days), drawn on stderr with cli-progress.
 * They are off with `--json` and whenever stderr is not a terminal, so logs and pipes stay clean.
 */
import { createRequire } from 'node:module';
import type * as CliProgress from 'cli-progress';

// Loaded on the first bar drawn (a person is watching), never for --json, pipes or --help.
const require = createRequire(import.meta.url);

/** What a long-running command reports as it goes. */
export interface Progress {
  start(total: number, label: string): void;
  /** Moves forward by `by` and shows `detail` (e.g. "240 articles, 12 sent"). */
  advance(by: number, detail?: string): void;
  stop(): void;
}

const silent: Progress = { start() {}, advance() {}, stop() {} };

/** A progress bar on stderr when a person is watching, otherwise nothing. */
export function createProgress(options: { json: boolean; stream?: NodeJS.WriteStream }): Progress {
  const stream = options.stream ?? process.stderr;
  if (options.json || !stream.isTTY) return silent;
  const { Presets, SingleBar } = require('cli-progress') as typeof CliProgress;
  const bar = new SingleBar(
    {
      stream,
      format: '{label} [{bar}] {value}/{total} {detail}',
      hideCursor: true,
      clearOnComplete: false,
    },
    Presets.shades_classic,
  );
  let value = 0;
  return {
    start(total, label) {
      value = 0;
      bar.start(total, 0, { label, detail: '' });
    },
    advance(by, detail = '') {
      value += by;
      bar.update(value, { detail });
    },
    stop() {
      bar.stop();
    },
  };
}
