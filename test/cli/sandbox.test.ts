/**
 * `news-alerts sandbox up|status|down` end to end: a background sandbox (its own moto server and
 * news API simulator, the example audiences and rules) that later `--local` commands find through
 * its descriptor, and that `down` stops completely.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { NewsSource } from '#core/ports';
import { exampleRules } from '#sandbox/examples';
import { unusedPort } from '#test/aws';
import { readDescriptor } from '../../cli/sandbox-descriptor.ts';
import { runCli, startCliSandbox } from './support.ts';

const dir = mkdtempSync(join(tmpdir(), 'news-alerts-sandbox-'));
const descriptorPath = join(dir, 'sandbox.json');
const sandbox = (args: readonly string[], options?: Parameters<typeof runCli>[1]) =>
  runCli(['--sandbox-file', descriptorPath, ...args], options);

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

afterAll(async () => {
  // Never leave the background process behind, even when an assertion failed half way.
  if (existsSync(descriptorPath)) await sandbox(['sandbox', 'down']);
  rmSync(dir, { recursive: true, force: true });
});

describe('sandbox', () => {
  it('up starts a background sandbox that --local commands use; status reports it; down stops it', {
    timeout: 180_000,
  }, async () => {
    const up = await sandbox(['--json', 'sandbox', 'up']);
    expect(up.code, up.stderr).toBe(0);
    expect(up.json()).toMatchObject({
      running: true,
      descriptor: descriptorPath,
      tablesReachable: true,
      provider: { simulator: true },
      initialLookbackMinutes: 1440,
      apiKey: { set: true },
    });
    // The sandbox looks back longer than a deployed stack's first run, and says so.
    expect(up.stderr).toContain(
      'the first run looks back 1,440 minutes (--initial-lookback; a deployed stack looks back 60)',
    );
    const { daemon, endpoint, provider } = readDescriptor(descriptorPath);
    expect(endpoint).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(provider.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    const pid = daemon?.pid ?? 0;
    expect(alive(pid)).toBe(true);

    // A second up finds it running and starts nothing new.
    const again = await sandbox(['--json', 'sandbox', 'up']);
    expect(again.code).toBe(0);
    expect(again.json()).toMatchObject({ running: true, pid });

    // A receiver's own certificate can be appended to the CA file moto trusts: it ends in a line break.
    expect(readFileSync(join(dirname(descriptorPath), 'sandbox-cli-ca.pem'), 'utf8')).toMatch(
      /-----END CERTIFICATE-----\n$/,
    );
    // A post moto cannot make (nothing listens there) is logged in sandbox.log, with why, without the URL.
    const nowhere = `https://127.0.0.1:${await unusedPort()}/hook-path-secret`;
    const added = await sandbox(['subscriptions', 'add', 'chips-team', '--https', '-', '--allow-internal-target'], {
      input: `${nowhere}\n`,
    });
    expect(added.code, added.stderr).toBe(0);
    const tested = await sandbox(['--json', 'test-send', 'chips-team']);
    expect(tested.code, tested.stderr).toBe(0);
    // Where a failed post shows here: the sandbox's log, not a dead-letter queue it does not have.
    const https = tested
      .json<{ channels: { protocol: string; detail: string }[] }>()
      .channels.find((channel) => channel.protocol === 'https');
    expect(https?.detail).toContain(`a post it could not make is logged in ${daemon?.logPath}`);
    expect(https?.detail).not.toContain('dead-letter queue)');
    const log = readFileSync(daemon?.logPath ?? '', 'utf8');
    expect(log).toMatch(
      /SNS could not deliver to an http\(s\) subscriber of arn:aws:sns:[a-z0-9-]+:\d+:\S*audience-chips-team \(ConnectionError\)/,
    );
    expect(log).not.toContain('hook-path-secret');

    const rules = await sandbox(['--json', 'rules', 'list']);
    expect(rules.json<{ ruleId: string }[]>()).toHaveLength(exampleRules.length);
    const preview = await sandbox(['--json', 'preview', '--from', '1d', '--no-samples']);
    expect(preview.code, preview.stderr).toBe(0);
    expect(preview.json<{ articles: number }>().articles).toBeGreaterThan(0);

    const status = await sandbox(['--json', 'sandbox', 'status']);
    expect(status.code).toBe(0);
    expect(status.json()).toMatchObject({ running: true, pid });
    // The audit queue of every audience and the Slack stand-in queue, named with what they hold.
    const queues = status.json<{ queues: { name: string; kind: string; audienceId: string }[] }>().queues;
    expect(queues.map((queue) => queue.name)).toEqual(
      expect.arrayContaining([
        'news-alerts-local-audit-markets-desk',
        'news-alerts-local-audit-quake-oncall',
        'news-alerts-local-audit-chips-team',
        'news-alerts-local-audit-partner-feed',
        'news-alerts-local-slack-chips-team',
      ]),
    );

    // The hints are commands that run as printed.
    const human = await sandbox(['sandbox', 'status']);
    expect(human.stdout).toContain('first run looks back');
    expect(human.stdout).toMatch(
      /news-alerts-local-audit-markets-desk\s+\d+\s+every notification audience markets-desk/,
    );
    expect(human.stdout).not.toContain('<command>');
    // In a pipe, stdout is the fields and the queue table only; the hints are notes on stderr.
    expect(human.stdout).not.toMatch(/Use it with|Queues \(SQS/);
    const hint = /Use it with: news-alerts (.+)$/m.exec(human.stderr)?.[1];
    expect(hint).toBe(`--sandbox-file ${descriptorPath} rules list`);
    const hinted = await runCli(hint?.split(' ') ?? []);
    expect(hinted.code, hinted.stderr).toBe(0);
    expect(hinted.stdout).toContain('markets-rates');

    const down = await sandbox(['sandbox', 'down']);
    expect(down.code, down.stderr).toBe(0);
    expect(down.stdout).toContain(`stopped the sandbox (process ${pid})`);
    expect(alive(pid)).toBe(false);
    expect(existsSync(descriptorPath)).toBe(false);

    const stopped = await sandbox(['sandbox', 'status']);
    expect(stopped.code).toBe(3);
    expect(stopped.stdout).toContain('no sandbox is running');
    expect(stopped.stderr).toContain(`start it with news-alerts --sandbox-file ${descriptorPath} sandbox up`);
    // Under --json: one document, the failure.
    const stoppedJson = await sandbox(['--json', 'sandbox', 'status']);
    expect(stoppedJson.code).toBe(3);
    expect(stoppedJson.json()).toMatchObject({ ok: false, error: { code: 'not_found' } });
    const local = await sandbox(['rules', 'list']);
    expect(local.code).toBe(3);
  });
});

describe('sandbox runs', () => {
  it('a sandbox run names its holder (host, pid) in the lease, so watermark show explains it', async () => {
    const local = await startCliSandbox();
    try {
      let seen: Record<string, unknown> | undefined;
      const news: NewsSource = {
        async *pages(range, options) {
          // Mid-run, the lease is held: ask the CLI what it knows about it.
          seen ??= (await local.cli(['--json', 'watermark', 'show'])).json<{ lease: Record<string, unknown> }>().lease;
          yield* local.stack.dependencies.news.pages(range, options);
        },
      };
      const summary = await local.stack.run({ dependencies: { news } });
      expect(summary.status).toBe('completed');
      expect(seen).toMatchObject({
        host: hostname(),
        pid: process.pid,
        state: 'live',
        reason: `process ${process.pid} on this host is running`,
      });
    } finally {
      await local.stop();
    }
  });
});
