/**
 * DESIGN section 3, "Bad rules never stop good ones", plus the secret: a key rotated between runs
 * is picked up, and the key never shows up in a log line, an error or the run history.
 */
import { PutSecretValueCommand } from '@aws-sdk/client-secrets-manager';
import { afterEach, describe, expect, it } from 'vitest';
import { ProviderAuthError } from '#core/errors';
import { firstWindowStart, startTestStack, type TestStack, testEpoch } from '#test/run-harness';
import { exampleRules } from '../../sandbox/examples.ts';
import { MEDIA, OUT_OF_SCOPE_MEDIA } from '../../sandbox/news-simulator-data.ts';

const inScopeMedia = MEDIA.map((media) => media.code).filter((code) => code !== OUT_OF_SCOPE_MEDIA);

describe('bad rules never stop good ones', () => {
  let stack: TestStack | undefined;
  afterEach(async () => {
    await stack?.stop();
    stack = undefined;
  });

  it('skips each broken rule with its key and reason, counts it, and runs every other rule', async () => {
    const broken = [
      { ruleId: 'wrong-type', audienceId: 'quake-oncall', keywords: 'earthquake' },
      { ruleId: 'no-criteria', audienceId: 'partner-feed' },
      { ruleId: 'ghost-audience', audienceId: 'nobody', keywords: ['election'] },
      { ruleId: 'bad id with spaces', audienceId: 'chips-team', keywords: ['wafer'] },
    ];
    stack = await startTestStack({ rules: [...exampleRules, ...broken] });
    const summary = await stack.run();

    expect(summary.status).toBe('completed');
    // typo-rule from the examples plus the four above
    expect(summary.invalidRules).toBe(5);
    const warnings = stack.log.lines.filter((line) => line.includes('skipped an invalid item'));
    for (const key of ['typo-rule', 'wrong-type', 'no-criteria', 'ghost-audience', 'bad id with spaces']) {
      expect(warnings.some((line) => line.includes(`"${key}"`))).toBe(true);
    }
    expect(warnings.find((line) => line.includes('"wrong-type"'))).toContain('keywords');
    expect(warnings.find((line) => line.includes('"ghost-audience"'))).toContain('nobody');
    const outcome = await stack.verifyExactlyOnce(firstWindowStart(stack));
    expect(outcome).toEqual({ missing: [], unexpected: [], duplicates: [] });
    expect((await stack.deliveredSoFar()).length).toBeGreaterThan(0);
  });
});

describe('the API key', () => {
  let stack: TestStack | undefined;
  afterEach(async () => {
    await stack?.stop();
    stack = undefined;
  });

  it('a key rotated between runs is picked up without waiting for the secret cache', async () => {
    stack = await startTestStack();
    const simulator = stack.simulator!;
    await stack.run();

    const rotated = 'sim-rotated-key-7f3a9c';
    simulator.setKey(rotated, { name: 'rotated', kind: 'live', media: inScopeMedia });
    simulator.revokeKey(simulator.liveKey);
    await stack.clients.secrets.send(new PutSecretValueCommand({ SecretId: stack.secretId, SecretString: rotated }));
    stack.setTime(testEpoch + 5 * 60_000);
    const [breaking] = simulator.publish({
      title: 'Strong earthquake shakes the coast',
      categories: ['003002000'],
      media: 'M004',
      publishedAt: testEpoch + 60_000,
    });

    const before = (await stack.deliveredSoFar()).length;
    const summary = await stack.run();
    expect(summary.status).toBe('completed');
    expect((await stack.deliveredSoFar()).slice(before)).toEqual([`quake-oncall|id:${breaking?.articleId}`]);
    const afterRotation = simulator.requests.filter((request) => request.time >= testEpoch + 5 * 60_000);
    expect(afterRotation.map((request) => request.status)).toContain(401);
    expect(afterRotation.at(-1)?.keyName).toBe('rotated');
  });

  it('never appears in a log line, an error or the run history, whatever fails', async () => {
    const key = 'sk-live-DISTINCTIVE-0a1b2c3d4e5f';
    stack = await startTestStack({
      simulator: {
        seed: 11,
        generate: { days: 1, perDay: 40 },
        keys: { [key]: { name: 'live', kind: 'live', media: '*' } },
      },
    });
    const simulator = stack.simulator!;
    const texts: string[] = [];
    const remember = (error: unknown) => {
      let current: unknown = error;
      while (current instanceof Error) {
        texts.push(`${current.name} ${current.message} ${current.stack ?? ''}`);
        current = current.cause;
      }
      texts.push(String(error));
    };

    simulator.faults.inject({ kind: 'status', status: 500, times: 1 });
    simulator.faults.inject({ kind: 'status', status: 429, times: 1 });
    simulator.faults.inject({ kind: 'malformed', times: 1 });
    simulator.faults.inject({ kind: 'error-body', times: 1 });
    texts.push(JSON.stringify(await stack.run()));

    simulator.setKey(key, { name: 'live', kind: 'live', media: [] });
    await stack.run().then((summary) => texts.push(JSON.stringify(summary)), remember);
    simulator.revokeKey(key);
    const denied = await stack.run().catch((error: unknown) => error);
    expect(denied).toBeInstanceOf(ProviderAuthError);
    remember(denied);

    const history = await stack.dependencies.state.recentRuns(10);
    const everything = [...stack.log.lines, ...texts, JSON.stringify(history)].join('\n');
    expect(everything).toContain('ProviderAuthError');
    expect(everything).not.toContain(key);
  });
});
