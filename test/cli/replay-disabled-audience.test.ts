/**
 * `replay --audience` of a disabled audience says the audience is disabled: it matches nothing, as
 * in a run, and its MATCHED 0 alone read as "no news for it" (found by a reviewer).
 */
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
});
