/**
 * The main job as a user runs it: `npm start -- --once --json` in a real process, with its own
 * moto server and simulator. The expected deliveries are worked out here, independently, from
 * the simulator's seeded articles and the example rules.
 */
import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { exampleAudiences, exampleRules } from '../../sandbox/examples.ts';
import { expectedDeliveries } from '../../sandbox/expectations.ts';
import { generateArticles, OUT_OF_SCOPE_MEDIA } from '../../sandbox/news-simulator-data.ts';

const now = Date.parse('2026-11-22T09:00:00+09:00');

function npmStart(
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('npm', ['start', '--silent', '--', ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, ...env },
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

interface StartSummary {
  ok: boolean;
  invalidItems: { key: string; reason: string }[];
  cycles: {
    run: { status: string };
    received: Record<string, { articleKey: string; rules: string[] }[]>;
    channels: { audienceId: string; channel: string; subject?: string; text: string }[];
  }[];
  audiences: Record<
    string,
    { expected: number; received: number; missing: string[]; unexpected: string[]; duplicates: string[] }
  >;
}

describe('npm start', () => {
  it('--once --json: every example audience receives exactly the articles its rules match', async () => {
    const { code, stdout, stderr } = await npmStart(['--once', '--json', '--now', new Date(now).toISOString()]);
    expect(code, stderr).toBe(0);
    const summary = JSON.parse(stdout) as StartSummary;
    expect(summary.ok).toBe(true);
    expect(summary.cycles).toHaveLength(1);
    const [cycle] = summary.cycles;
    expect(cycle?.run.status).toBe('completed');

    // The same seeded articles the simulator served (seed 7, two days of 240 a day).
    const articles = generateArticles({ seed: 7, days: 2, perDay: 240, now, timeZone: 'Asia/Seoul' });
    const expected = expectedDeliveries({
      articles,
      ruleItems: exampleRules,
      audienceItems: exampleAudiences.map((audience) => ({
        ...audience.item,
        topicArn: `arn:aws:sns:us-east-1:123456789012:audience-${audience.item.audienceId}`,
      })),
      from: now - (24 + 1) * 60 * 60_000,
      to: now,
      inScope: (media) => media !== OUT_OF_SCOPE_MEDIA,
    });
    for (const audience of exampleAudiences) {
      const id = audience.item.audienceId;
      const received = (cycle?.received[id] ?? []).map((delivery) => delivery.articleKey);
      expect(received.length, id).toBeGreaterThan(0);
      expect(new Set(received).size, `${id} received something twice`).toBe(received.length);
      expect(new Set(received), id).toEqual(expected.get(id));
      expect(summary.audiences[id]).toMatchObject({ missing: [], unexpected: [], duplicates: [] });
    }
    // The deliberately broken example rule is reported, not fatal.
    expect(summary.invalidItems.map((item) => item.key)).toEqual(['typo-rule']);
    expect(summary.invalidItems[0]?.reason).toContain('did you mean "keywords"');
    // Each channel shows its own rendering.
    const channel = (name: string) => cycle?.channels.find((item) => item.channel === name);
    expect(channel('email')?.subject).toMatch(/^\[Markets desk\] /);
    expect(channel('email')?.text).toContain('Why you got this');
    expect(channel('sms')?.text).toMatch(/https:\/\/news\.example\.com\//);
    expect(JSON.parse(channel('webhook')?.text ?? '{}')).toMatchObject({ version: '1.0', source: 'custom' });
    expect(channel('slack')).toBeDefined();
  }, 120_000);

  it('refuses an http:// provider with a clear error', async () => {
    const { code, stdout, stderr } = await npmStart(['--once', '--provider-url', 'http://news.example.com'], {
      NEWS_API_KEY: 'not-a-real-key',
    });
    expect(code).not.toBe(0);
    expect(stdout).toBe('');
    expect(stderr).toContain('NEWS_API_BASE_URL');
    expect(stderr).toContain('https://');
  }, 60_000);
});
