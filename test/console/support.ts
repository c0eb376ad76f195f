/**
 * Starting `news-alerts console` as ops do (the built CLI, a real process against a test
 * sandbox) and a headless Chromium (Debian's, through playwright-core) to drive it.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type BrowserContext, chromium } from 'playwright-core';
import { cliEntry, projectRoot } from '../cli/support.ts';
import { chromiumLaunchOptions } from '../support/browser.ts';

/** A console process and its URL. */
export interface ConsoleProcess {
  readonly url: string;
  /** `http://127.0.0.1:<port>` */
  readonly origin: string;
  readonly port: number;
  readonly token: string;
  stop(): Promise<void>;
  /** What it wrote on stderr so far. */
  stderr(): string;
}

/** Starts `news-alerts --sandbox-file <descriptor> console` and waits for the URL it prints. */
export function startConsoleProcess(descriptorPath: string, env: Record<string, string> = {}): Promise<ConsoleProcess> {
  const child: ChildProcess = spawn(process.execPath, [cliEntry, '--sandbox-file', descriptorPath, 'console'], {
    cwd: projectRoot,
    env: { ...process.env, NEWS_ALERTS_ACTOR: 'ops-tester', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const exited = new Promise<void>((resolve) => child.on('close', () => resolve()));
  return new Promise((resolve, reject) => {
    child.on('close', (code) => reject(new Error(`the console exited (${code}) before printing its URL:\n${stderr}`)));
    child.stdout?.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      const match = /open: (http:\/\/127\.0\.0\.1:(\d+)\/\?token=([A-Za-z0-9_-]+))/.exec(stdout);
      if (!match?.[1] || !match[2] || !match[3]) return;
      resolve({
        url: match[1],
        origin: `http://127.0.0.1:${match[2]}`,
        port: Number(match[2]),
        token: match[3],
        async stop() {
          child.kill('SIGTERM');
          await exited;
        },
        stderr: () => stderr,
      });
    });
  });
}

/** Chromium as every browser test starts it (test/support/browser.ts), in a fresh profile (user data dir). */
export function launchChromium(): Promise<BrowserContext> {
  return chromium.launchPersistentContext(mkdtempSync(join(tmpdir(), 'news-alerts-chromium-')), {
    ...chromiumLaunchOptions(),
    viewport: { width: 1280, height: 900 },
  });
}

/** A raw HTTP request to the console (any Host header, any cookie). */
export function raw(
  port: number,
  options: { method?: string; path?: string; host?: string; headers?: Record<string, string>; body?: string },
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        method: options.method ?? 'GET',
        path: options.path ?? '/rules',
        headers: { host: options.host ?? `127.0.0.1:${port}`, ...options.headers },
      },
      (res) => {
        let body = '';
        res.on('data', (chunk: Buffer) => {
          body += chunk.toString();
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      },
    );
    req.on('error', reject);
    req.end(options.body);
  });
}
