/**
 * A dead HTTPS subscriber in the sandbox (sandbox/moto-server.py, fix 5): SNS delivers to http(s)
 * subscribers after it accepted a message, so one that refuses the connection must not fail the
 * publish. Before the fix, moto raised out of PublishBatch, the run published the batch again, and
 * every other subscriber of the audience got each alert once per attempt (five times), and the
 * next run sent them again.
 */
import { createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CliSandbox, countBy, startCliSandbox } from './support.ts';

let sandbox: CliSandbox;
beforeAll(async () => {
  sandbox = await startCliSandbox();
});
afterAll(async () => {
  await sandbox?.stop();
});

/** A loopback port nothing listens on (bound, then closed). */
async function deadPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

describe('an HTTPS subscriber that refuses every connection', () => {
  it('fails only itself: the run completes, and every other subscriber gets each alert once', async () => {
    const url = `https://127.0.0.1:${await deadPort()}/dead-hook`;
    const added = await sandbox.cli([
      'subscriptions',
      'add',
      'partner-feed',
      '--https',
      url,
      '--allow-internal-target',
    ]);
    expect(added.code, added.stderr).toBe(0);
    await sandbox.stack.collectDeliveries();

    const run = await sandbox.cli(['--json', 'run']);
    expect(run.code, run.stderr).toBe(0);
    const summary = run.json<{
      summary: { status: string; audiences: Record<string, { failed: number; published: number }> };
    }>().summary;
    expect(summary.status).toBe('completed');
    expect(summary.audiences['partner-feed']).toMatchObject({ failed: 0 });
    const published = summary.audiences['partner-feed']?.published ?? 0;
    expect(published).toBeGreaterThan(0);
    // deliveries (which only peeks) shows the dead webhook's row as what SNS posted, not as something it received.
    const shown = await sandbox.cli(['deliveries', 'partner-feed'], { env: { COLUMNS: '300' } });
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toContain('whether the endpoint accepted it is not checked here');
    expect(shown.stdout).not.toContain('dead-hook');
    // The audit queue (a subscriber of the same topic) got each alert exactly once.
    const delivered = (await sandbox.stack.collectDeliveries()).filter((entry) => entry.audienceId === 'partner-feed');
    expect(delivered).toHaveLength(published);
    expect([...countBy(delivered, (entry) => entry.deliveryId).values()].every((count) => count === 1)).toBe(true);
  });
});
