/**
 * `replay --audience` of a disabled audience says the audience is disabled: it matches nothing, as
 * in a run, and its MATCHED 0 alone read as "no news for it" (found by a reviewer). Its parked
 * alerts stay parked too: `replay --parked` sent them to the disabled audience (found by a reviewer).
 */
import { DeleteTopicCommand } from '@aws-sdk/client-sns';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CliSandbox, startCliSandbox } from './support.ts';

let sandbox: CliSandbox;
beforeAll(async () => {
  sandbox = await startCliSandbox();
});
afterAll(async () => {
  await sandbox?.stop();
});

describe('replay of a disabled audience', () => {
  it('warns that it is disabled and how to enable it; an enabled one gets no warning', async () => {
    expect((await sandbox.cli(['audiences', 'update', 'partner-feed', '--disable'])).code).toBe(0);
    const replay = await sandbox.cli([
      'replay',
      '--from',
      '1d',
      '--dry-run',
      '--audience',
      'partner-feed,quake-oncall',
    ]);
    expect(replay.code, replay.stderr).toBe(0);
    expect(replay.stderr).toContain(
      `audience partner-feed is disabled: the replay matches nothing for it (enable it first with 'news-alerts --sandbox-file ${sandbox.descriptorPath} audiences update partner-feed --enable')`,
    );
    expect(replay.stderr).not.toContain('audience quake-oncall is disabled');
  });

  it('keeps the parked alerts of a disabled audience parked, and sends them once it is enabled', async () => {
    expect((await sandbox.cli(['audiences', 'update', 'partner-feed', '--enable'])).code).toBe(0);
    await sandbox.stack.clients.sns.send(
      new DeleteTopicCommand({ TopicArn: sandbox.stack.topics.get('partner-feed') }),
    );
    expect((await sandbox.stack.run()).status).toBe('completed');
    const parked = await sandbox.stack.dependencies.state.listUndeliverable('partner-feed');
    expect(parked.length).toBeGreaterThan(0);
    expect((await sandbox.cli(['audiences', 'repair', 'partner-feed', '--yes'])).code).toBe(0);
    expect((await sandbox.cli(['audiences', 'update', 'partner-feed', '--disable'])).code).toBe(0);

    const replayParked = [
      '--json',
      'replay',
      '--parked',
      '--audience',
      'partner-feed',
      '--to-topic-without-subscribers',
    ];
    const kept = await sandbox.cli(replayParked);
    expect(kept.code, kept.stderr).toBe(1);
    expect(kept.stderr).toContain(
      `partner-feed: the audience is disabled, so its ${parked.length} parked alert(s) stay parked; enable it with 'news-alerts --sandbox-file ${sandbox.descriptorPath} audiences update partner-feed --enable'`,
    );
    expect(kept.json<{ audiences: { audienceId: string; sent: number; audienceDisabled: number }[] }>()).toMatchObject({
      ok: false,
      audiences: [{ audienceId: 'partner-feed', sent: 0, audienceDisabled: parked.length }],
    });
    expect(await sandbox.stack.dependencies.state.listUndeliverable('partner-feed')).toHaveLength(parked.length);
    expect((await sandbox.stack.dependencies.state.findDelivered(parked)).size).toBe(0);
    const runs = (await sandbox.cli(['--json', 'runs', 'list'])).json<
      { kind: string; status: string; reason?: string }[]
    >();
    expect(runs.find((run) => run.kind === 'replay --parked')).toMatchObject({
      status: 'incomplete',
      reason: expect.stringContaining('their audience is disabled'),
    });

    expect((await sandbox.cli(['audiences', 'update', 'partner-feed', '--enable'])).code).toBe(0);
    const sent = await sandbox.cli(replayParked);
    expect(sent.code, sent.stderr).toBe(0);
    expect(await sandbox.stack.dependencies.state.listUndeliverable('partner-feed')).toEqual([]);
    expect((await sandbox.stack.dependencies.state.findDelivered(parked)).size).toBe(parked.length);
  });
});
