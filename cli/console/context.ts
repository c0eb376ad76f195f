/**
 * What every console handler gets: the target (resolved once, its clients reused), who is acting,
 * the page frame's keys, a log, and how to run the CLI itself for the operations that live in a
 * command (replay). Handlers are thin: they read the request, call the workbench services the CLI
 * uses (cli/workbench/), and render a view.
 */
import { spawn } from 'node:child_process';
import type { Context } from 'hono';
import type { Log } from '#core/ports';
import { failureOf } from '../errors.ts';
import { pageText } from '../output.ts';
import type { Target } from '../target.ts';
import type { ConsoleKeys } from './security.ts';
import { type Html, type PageFrame, page, type Section } from './views/layout.ts';

export interface ConsoleServices {
  readonly target: Target;
  readonly actor: string;
  readonly keys: ConsoleKeys;
  readonly log: Log;
  /**
   * The CLI as this console was started (node, entry, and the target options), so a handler can
   * run a command (replay) exactly as the CLI would, against the same target.
   */
  readonly cli: { readonly command: string; readonly args: readonly string[] };
  readonly now: () => number;
}

/**
 * Renders a page in the console's frame. Its text nodes go through {@link pageText}, as the CLI's
 * output goes through safeText: a title holding U+202E shows `\u202e`, not reversed text. Tags
 * (attribute values) and textareas keep their characters, so a form sends back exactly what is
 * stored; the template has already escaped every `<` and `>` of the data, so a tag is always `<…>`.
 */
export async function render(
  c: Context,
  services: ConsoleServices,
  frame: Omit<PageFrame, 'csrf' | 'target'>,
  body: Html,
  status: 200 | 400 | 404 | 409 | 500 = 200,
) {
  const markup = String(await page({ ...frame, csrf: services.keys.csrf, target: services.target.label }, body));
  return c.html(visibleText(markup), status);
}

/** `markup` with {@link pageText} applied to its text outside tags and textareas. */
export function visibleText(markup: string): string {
  let inTextarea = false;
  return markup
    .split(/(<[^>]*>)/)
    .map((part) => {
      if (part.startsWith('<')) {
        if (/^<textarea\b/i.test(part)) inTextarea = true;
        else if (/^<\/textarea\s*>/i.test(part)) inTextarea = false;
        return part;
      }
      return inTextarea ? part : pageText(part);
    })
    .join('');
}

/** What a CLI process run by the console did. */
export interface CliRun {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs the CLI with `args` (after the target options) and collects its output. */
export function runCli(services: ConsoleServices, args: readonly string[]): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(services.cli.command, [...services.cli.args, ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, NEWS_ALERTS_ACTOR: services.actor, NO_COLOR: '1' },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

export type { Section };

/**
 * The HTTP status of a page action that failed, as the CLI's exit code says it for the same
 * failure: not found 404 (exit 3), a usage error 400 (exit 2), a version conflict 409; any other
 * failure the page's own `otherwise` (an AWS call that failed for what the page asked).
 */
export function statusOf(error: unknown, otherwise: 400 | 404 | 409 | 500): 400 | 404 | 409 | 500 {
  return statusOfCode(failureOf(error).code, otherwise);
}

/** {@link statusOf} for the CLI's `error.code` (its `--json` failure document, a CLI run by a page). */
export function statusOfCode(code: unknown, otherwise: 400 | 404 | 409 | 500): 400 | 404 | 409 | 500 {
  return code === 'not_found' ? 404 : code === 'usage' ? 400 : code === 'conflict' ? 409 : otherwise;
}
