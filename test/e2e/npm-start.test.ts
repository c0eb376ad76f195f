/**
 * The main job as a user runs it: `npm start -- --once --json` in a real process, with its own
 * moto server and simulator (or a provider of its own: a second simulator with another CA). The
 * expected deliveries are worked out here, independently, from the seeded articles and the rules;
 * audiences that collapse stories receive one alert per story and the ledger accounts for the
 * rest as collapsed copies, which the printed summary shows ("1 alert for N copies").
 *
 * `npm start -- --publish-mode sharded` too: the runs queue work items, the in-process publisher
 * sends them, and every example audience still receives exactly what its rules match (the same
 * checks as single mode), nothing twice, across two cycles; what it prints says which mode ran
 * and shows queued against published. A mode other than single or sharded is a usage error.
 *
 * All `npm start` tests are in this one file so that no two run at once: two `npm start` in one
 * clone share `.sandbox/sandbox-ca.pem` (scripts/start.ts), so each one's moto can come to trust
 * the other's CA and refuse its own HTTPS webhook receiver.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { messagesFor } from '#core/messages/catalog';
import { exampleAudiences, exampleRules, exampleSimulator } from '../../sandbox/examples.ts';
import { expectedDeliveries } from '../../sandbox/expectations.ts';
import { startNewsSimulator } from '../../sandbox/news-simulator.ts';
import { generateArticles, OUT_OF_SCOPE_MEDIA } from '../../sandbox/news-simulator-data.ts';
import { createCertificateAuthority } from '../../sandbox/tls.ts';

const dir = mkdtempSync(join(tmpdir(), 'news-alerts-npm-start-'));
const file = (name: string, content: string | Buffer): string => {
  const path = join(dir, name);
  writeFileSync(path, content);
  return path;
};
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const now = Date.parse('2026-11-22T09:00:00+09:00');

function npmStart(
  args: string[],
  env: Record<string, string> = {},
  /** Typed in another directory than the clone's: `npm --prefix <clone> start` there. */
  typedIn?: string,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const prefix = typedIn === undefined ? [] : ['--prefix', process.cwd()];
    const child = spawn('npm', [...prefix, 'start', '--silent', '--', ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, ...env },
      ...(typedIn === undefined ? {} : { cwd: typedIn }),
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
  stories: Record<string, { collapse: 'story' | 'none'; alerts: number; copiesCollapsed: number; stories: number }>;
  initialLookbackMinutes: number;
  checkedAgainst: string;
  unchecked: Record<string, string>;
  invalidItems: { key: string; reason: string }[];
  cycles: {
    at: string;
    failure?: string;
    run: { status: string };
    received: Record<string, { articleKey: string; rules: string[] }[]>;
    channels: { audienceId: string; channel: string; subject?: string; text: string }[];
  }[];
  audiences: Record<
    string,
    {
      expected: number;
      received: number;
      missing: string[];
      unexpected: string[];
      duplicates: string[];
      collapsed: string[];
    }
  >;
}

/** The example feed npm start serves with `--now`: the same seed (7) and story rates. */
const exampleArticles = () =>
  generateArticles({
    seed: 7,
    days: exampleSimulator.generate.days,
    perDay: exampleSimulator.generate.perDay,
    syndicationRate: exampleSimulator.syndicationRate,
    updateRate: exampleSimulator.updateRate,
    now,
    timeZone: 'Asia/Seoul',
  });

/**
 * `npm start --once --json` on the pinned clock against the provider at `url` (its CA `caPem`),
 * with one audience, "everything", and a rule that matches every article.
 */
function startWithProvider(url: string, caPem: string, apiKey: string, extra: readonly string[] = []) {
  const audiences = file(
    'provider-audiences.json',
    JSON.stringify([{ audienceId: 'everything', name: 'All', timeZone: 'UTC' }]),
  );
  const rules = file(
    'provider-rules.json',
    JSON.stringify([{ ruleId: 'all', audienceId: 'everything', matchAll: true }]),
  );
  return npmStart(
    [
      '--once',
      '--json',
      '--now',
      new Date(now).toISOString(),
      '--provider-url',
      url,
      '--provider-ca',
      file('provider-ca.pem', caPem),
      ...extra,
      '--audiences',
      audiences,
      '--rules',
      rules,
    ],
    { NEWS_API_KEY: apiKey },
  );
}

describe('npm start', () => {
  it('--once --json: every example audience receives exactly the articles its rules match, one alert per story where it collapses them', async () => {
    const { code, stdout, stderr } = await npmStart(['--once', '--json', '--now', new Date(now).toISOString()]);
    expect(code, stderr).toBe(0);
    const summary = JSON.parse(stdout) as StartSummary;
    expect(summary.ok).toBe(true);
    expect(summary.cycles).toHaveLength(1);
    const [cycle] = summary.cycles;
    expect(cycle?.run.status).toBe('completed');

    // The same seeded articles the simulator served (seed 7, two days of 240 a day, with copies).
    const articles = exampleArticles();
    expect(articles.some((article) => article.copyOf !== undefined)).toBe(true);
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
      const collapsed = summary.audiences[id]?.collapsed ?? [];
      expect(received.length, id).toBeGreaterThan(0);
      expect(new Set(received).size, `${id} received something twice`).toBe(received.length);
      // Every matching article either reached the audience or is recorded as a copy of a story it has.
      expect(
        collapsed.filter((key) => received.includes(key)),
        id,
      ).toEqual([]);
      expect(new Set([...received, ...collapsed]), id).toEqual(expected.get(id));
      expect(summary.audiences[id]).toMatchObject({ missing: [], unexpected: [], duplicates: [] });
      expect(summary.stories[id]).toMatchObject({
        collapse: audience.item.collapse,
        alerts: received.length,
        copiesCollapsed: collapsed.length,
      });
      if (audience.item.collapse === 'none') expect(collapsed, `${id} gets every copy`).toEqual([]);
    }
    // The feed's syndicated copies collapse: an audience that collapses stories got fewer alerts than matches.
    const collapsing = exampleAudiences.filter((audience) => audience.item.collapse === 'story');
    expect(collapsing.length).toBeGreaterThan(1);
    expect(collapsing.some((audience) => (summary.stories[audience.item.audienceId]?.copiesCollapsed ?? 0) > 0)).toBe(
      true,
    );
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
    // chips-team (Slack) reads Korean by its locale; markets-desk (the email above) has none and
    // reads the default, English.
    const slack = JSON.parse(channel('slack')?.text ?? '{}') as {
      content?: { description?: string };
      newsAlerts?: { locale?: string };
    };
    expect(slack.newsAlerts?.locale).toBe('ko-KR');
    expect(slack.content?.description).toContain(`*${messagesFor('ko').chat.why}*`);
    expect(channel('email')?.text).not.toContain(messagesFor('ko').email.whyHeading);
  }, 240_000);

  it('prints, per audience, the alerts it received and the story copies collapsed into them', async () => {
    // The background sandbox's mail (news-alerts sandbox up): npm start writes and empties its own
    // folder, never this one, whose links a running sandbox still serves.
    const sandboxMail = join(process.cwd(), '.sandbox', 'mail');
    mkdirSync(sandboxMail, { recursive: true });
    const sentinel = join(sandboxMail, `9999-npm-start-test-${process.pid}.eml`);
    writeFileSync(sentinel, 'Subject: kept\r\n\r\nthe sandbox still serves this mail\r\n');
    let result: Awaited<ReturnType<typeof npmStart>>;
    try {
      result = await npmStart(['--once', '--now', new Date(now).toISOString()]);
      expect(existsSync(sentinel), 'npm start deleted the background sandbox mail').toBe(true);
    } finally {
      rmSync(sentinel, { force: true });
    }
    const { code, stdout, stderr } = result;
    expect(code, stderr).toBe(0);
    expect(stdout).toContain(`in ${join('.sandbox', 'start-mail')}/`);
    expect(stdout).toContain('Its links go to the preference page this run served, which stopped');
    // The last thing it says is the step after it: the CLI on a sandbox that stays up (README).
    expect(stdout.trimEnd().split('\n').slice(-3)).toEqual([
      '  Next: the ops command line, on a sandbox that stays up until `news-alerts sandbox down`:',
      '    npm ci && npm link && news-alerts sandbox up && news-alerts --local rules list',
      '  `npm test` runs the test suite; docs/ covers operating the service and deploying it to AWS.',
    ]);
    // The first run has no watermark: no "last run" and nothing read again to speak of.
    expect(stdout).toMatch(
      /\n {2}Fetched \d+ articles on .*: a first run \(no watermark yet\) reads back the initial look-back · \d+ matched a rule\n/,
    );
    expect(stdout).not.toContain('since the last run');
    expect(stdout).toContain('One story, one alert');
    expect(stdout).toMatch(
      /\n {4}[a-z-]+: \d+ alerts? \(\d+ cop(y|ies) collapsed into \d+ stor(y|ies); the largest: 1 alert for \d+ copies\)\n/,
    );
    expect(stdout).toMatch(/\n {4}partner-feed: \d+ alerts? \(collapse: none, every copy sent\)\n/);
    expect(stdout).toMatch(/ · \d+ copies collapsed\n/);
    // A message shown in part says so, rather than end mid-object as if that were all of it.
    expect(stdout).toMatch(/\n {4}│ … \d+ more line\(s\); --json prints every message whole\n/);
  }, 240_000);

  it('refuses a --response-mapping file that is not UTF-8 (exit 2), naming its line', async () => {
    const mapping = file('latin1-mapping.json', Buffer.from('{\n  "title": ["d\xe9p\xeache"]\n}\n', 'latin1'));
    const { code, stdout, stderr } = await npmStart(
      ['--once', '--provider-url', 'https://news.example.com', '--response-mapping', mapping],
      { NEWS_API_KEY: 'not-a-real-key' },
    );
    expect(code).toBe(2);
    expect(stdout).toBe('');
    expect(stderr).toContain(`--response-mapping: ${mapping} is not UTF-8 text`);
    expect(stderr).toContain(`${mapping}:2: byte 0xE9 (column 15) is not UTF-8`);
  }, 240_000);

  it('refuses an http:// provider with a clear error (a usage error: exit 2)', async () => {
    const { code, stdout, stderr } = await npmStart(['--once', '--provider-url', 'http://news.example.com'], {
      NEWS_API_KEY: 'not-a-real-key',
    });
    expect(code).toBe(2);
    expect(stdout).toBe('');
    expect(stderr).toContain('NEWS_API_BASE_URL');
    expect(stderr).toContain('https://');
  });

  it('usage errors exit 2 with the one-line error and where help is, not the whole help', async () => {
    for (const args of [
      ['--bogus'],
      ['--cycles', 'x'],
      // Decimal digits only: Number() read '' as 0 and 1e1 as 10.
      ['--cycles', '1e1'],
      ['--initial-lookback', ''],
      ['--now', 'yesterday'],
      // --now pins the clock: no rolled-over date, no zone taken from this machine, 1970 to 9999.
      ['--now', '2026-02-30T09:00:00Z'],
      ['--now', '2026-11-22T09:00:00'],
      ['--now', '1960-01-01T00:00:00Z'],
      ['--now', '+275760-09-13T00:00:00Z'],
      // Options that would be ignored without a word.
      ['--once', '--cycles', '3'],
      ['--interval', '30'],
      ['--audiences', 'a.yaml'],
      // A real provider's setting without --provider-url would be silently ignored by the simulator.
      ['--provider-time-zone', 'Asia/Seoul', '--once'],
      // The spike demo plays its own runs on the simulator, for its own rule: refused before anything starts.
      ['--spike-demo', '--provider-url', 'https://news.example.test/', '--api-key', 'k'],
      ['--spike-demo', '--rules', 'r.yaml', '--audiences', 'a.yaml'],
      ['--spike-demo', '--cycles', '2'],
    ]) {
      const { code, stdout, stderr } = await npmStart(args);
      expect(code, `${args.join(' ')}: ${stderr}`).toBe(2);
      expect(stdout).toBe('');
      const lines = stderr.trim().split('\n');
      expect(lines, args.join(' ')).toHaveLength(2);
      expect(lines[1]).toBe('(npm start -- --help for usage)');
      expect(stderr).not.toContain('Options:');
    }
  });

  it('--rules is validated like rules put --file: exit 2 with each problem at its line, nothing started', async () => {
    const rules = file(
      'broken-rules.yaml',
      [
        'rules:',
        '  - ruleId: ok-rule',
        '    audienceId: nobody',
        '    keywords: [x]',
        '  - ruleId: typo',
        '    audienceId: markets-desk',
        "    categories: ['002*']",
        '    keyword: [x]',
        '',
      ].join('\n'),
    );
    const { code, stdout, stderr } = await npmStart(['--once', '--rules', rules]);
    expect(code).toBe(2);
    expect(stdout).toBe('');
    expect(stderr).toContain(`${rules}: 2 problem(s); nothing was started`);
    expect(stderr).toContain(`${rules}:3: rule "ok-rule": audience "nobody" is not in the example audiences`);
    expect(stderr).toContain(`${rules}:8: rule "typo": unknown attribute "keyword" (did you mean "keywords"?)`);
    expect(stderr).not.toContain('starting moto');
  });

  it('reads --rules and --audiences given relative to the directory npm start was typed in, not the clone', async () => {
    const typedIn = join(dir, 'typed-in');
    mkdirSync(typedIn, { recursive: true });
    writeFileSync(join(typedIn, 'my-audiences.yaml'), 'audienceId: mine\nname: Mine\ntimeZone: UTC\n');
    writeFileSync(join(typedIn, 'my-rules.yaml'), 'ruleId: r\naudienceId: nobody\nkeywords: [x]\n');
    const { code, stderr } = await npmStart(
      ['--once', '--audiences', 'my-audiences.yaml', '--rules', 'my-rules.yaml'],
      {},
      typedIn,
    );
    // Both files were read where they were typed: the rule's audience is checked against the file's.
    expect(code, stderr).toBe(2);
    const rules = join(typedIn, 'my-rules.yaml');
    expect(stderr).toContain(`${rules}:2: rule "r": audience "nobody" is not in ${join(typedIn, 'my-audiences.yaml')}`);
    expect(stderr).not.toContain('ENOENT');
  });

  it('--audiences and --rules: your audiences get exactly what your rules match, checked against the simulator', async () => {
    const audiences = file(
      'audiences.yaml',
      [
        'audiences:',
        '  - audienceId: my-desk',
        '    name: My desk',
        '    timeZone: UTC',
        '  - audienceId: my-digest',
        '    name: My digest',
        '    timeZone: UTC',
        '    digestTimes: ["08:00"]',
        '',
      ].join('\n'),
    );
    const rules = file(
      'rules.yaml',
      [
        'rules:',
        '  - ruleId: my-economy',
        '    audienceId: my-desk',
        '    categories: ["002*"]',
        '  - ruleId: my-digest-all',
        '    audienceId: my-digest',
        '    matchAll: true',
        '',
      ].join('\n'),
    );
    const { code, stdout, stderr } = await npmStart([
      '--once',
      '--json',
      '--now',
      new Date(now).toISOString(),
      '--audiences',
      audiences,
      '--rules',
      rules,
    ]);
    expect(code, stderr).toBe(0);
    const summary = JSON.parse(stdout) as StartSummary;
    expect(summary.ok).toBe(true);
    // The sandbox's longer first look back is the default with the simulator, and said so.
    expect(summary.initialLookbackMinutes).toBe(1440);
    expect(stderr).toContain(
      "the first cycle looks back 1,440 minutes (--initial-lookback; a deployed stack's first run looks back 60)",
    );
    const articles = exampleArticles();
    const expected = expectedDeliveries({
      articles,
      ruleItems: [{ ruleId: 'my-economy', audienceId: 'my-desk', categories: ['002*'] }],
      audienceItems: [
        { audienceId: 'my-desk', name: 'My desk', timeZone: 'UTC', topicArn: 'arn:aws:sns:us-east-1:123456789012:x' },
      ],
      from: now - (24 + 1) * 60 * 60_000,
      to: now,
      inScope: (media) => media !== OUT_OF_SCOPE_MEDIA,
    });
    const received = (summary.cycles[0]?.received['my-desk'] ?? []).map((delivery) => delivery.articleKey);
    expect(received.length).toBeGreaterThan(0);
    // The file says nothing of stories: the audience collapses them, as `audiences create --file`
    // makes the same file's audience do (cli/new-audience.ts), and the check counts collapsed copies.
    expect(summary.stories['my-desk']).toMatchObject({ collapse: 'story' });
    const collapsed = summary.audiences['my-desk']?.collapsed ?? [];
    expect(new Set([...received, ...collapsed])).toEqual(expected.get('my-desk'));
    expect(summary.audiences['my-desk']).toMatchObject({ missing: [], unexpected: [], duplicates: [] });
    expect(Object.keys(summary.audiences)).toEqual(['my-desk']);
    expect(summary.unchecked['my-digest']).toContain('it holds alerts (digestTimes)');
    // None of the example audiences was created.
    expect(Object.keys(summary.cycles[0]?.received ?? {})).not.toContain('markets-desk');
  }, 240_000);

  it('--provider-url with --now and your rules: the check uses the articles the run fetched, on the pinned clock', async () => {
    const ca = await createCertificateAuthority();
    const provider = await startNewsSimulator({
      ca,
      seed: 5,
      timeZone: 'Asia/Tokyo',
      now: () => now,
      generate: { days: 1, perDay: 240 },
    });
    try {
      const { code, stdout, stderr } = await startWithProvider(provider.url, ca.cert, provider.liveKey, [
        '--provider-time-zone',
        'Asia/Tokyo',
      ]);
      expect(code, stderr).toBe(0);
      const summary = JSON.parse(stdout) as StartSummary;
      expect(summary.ok).toBe(true);
      expect(summary.initialLookbackMinutes).toBe(60);
      expect(summary.checkedAgainst).toContain('articles the runs fetched from the provider');
      expect(summary.cycles[0]?.at).toBe(new Date(now).toISOString());
      // The window of the pinned clock: the first run's 60 minutes plus the 60-minute late-arrival window.
      const inWindow = provider
        .articles()
        .filter((article) => article.publishedAt >= now - 120 * 60_000 && article.publishedAt <= now)
        .filter((article) => article.media.code !== OUT_OF_SCOPE_MEDIA)
        .map((article) => `id:${article.articleId}`);
      expect(inWindow.length).toBeGreaterThan(0);
      expect(summary.audiences.everything).toMatchObject({
        expected: inWindow.length,
        received: inWindow.length,
        missing: [],
        unexpected: [],
        duplicates: [],
      });
      expect(new Set((summary.cycles[0]?.received.everything ?? []).map((item) => item.articleKey))).toEqual(
        new Set(inWindow),
      );
    } finally {
      await provider.stop();
    }
  }, 240_000);

  it('--provider-url whose run fails: the audiences are not checked (no "received 0 of 0"), exit 1', async () => {
    const ca = await createCertificateAuthority();
    const provider = await startNewsSimulator({ ca, seed: 6, now: () => now, generate: { days: 1, perDay: 40 } });
    try {
      // Not the simulator's key: every request is refused with 401.
      const { code, stdout, stderr } = await startWithProvider(provider.url, ca.cert, 'not-the-providers-key');
      expect(code, stderr).toBe(1);
      const summary = JSON.parse(stdout) as StartSummary;
      expect(summary.ok).toBe(false);
      expect(summary.cycles[0]?.failure).toMatch(/^ProviderAuthError/);
      expect(summary.audiences).toEqual({});
      expect(summary.unchecked.everything).toContain('run 1 failed');
    } finally {
      await provider.stop();
    }
  }, 240_000);
});

interface RunDispatchJson {
  dispatchId: string;
  state: string;
  items: number;
  done: number;
  published: number;
  updateNotices: number;
  alreadyDelivered: number;
  parked: number;
}

interface ShardedStartSummary {
  ok: boolean;
  publishMode: string;
  publisher?: { invocations: number; records: number; deleted: number; failed: number; maxConcurrent: number };
  cycles: {
    run: {
      status: string;
      runId: string;
      notificationsQueued: number;
      workItemsQueued: number;
      notificationsPublished: number;
      dispatch?: RunDispatchJson;
    };
    received: Record<string, { articleKey: string }[]>;
  }[];
  audiences: Record<string, { missing: string[]; unexpected: string[]; duplicates: string[] }>;
}

describe('npm start --spike-demo', () => {
  it('--json: one machine-readable document, one spike alert sent once, at most one update, both channels', async () => {
    const { code, stdout, stderr } = await npmStart(['--spike-demo', '--json']);
    expect(code, stderr).toBe(0);
    const document = JSON.parse(stdout) as {
      ok: boolean;
      problems: string[];
      runs: { spikeAlerts: { deliveryId: string }[]; updates: { deliveryId: string }[] }[];
      received: { channel: string; text: string }[];
    };
    expect(document.ok).toBe(true);
    expect(document.problems).toEqual([]);
    expect(document.runs).toHaveLength(18);
    expect(document.runs.flatMap((run) => run.spikeAlerts)).toHaveLength(1);
    expect(document.runs.flatMap((run) => run.updates).length).toBeLessThanOrEqual(1);
    expect(new Set(document.received.map((item) => item.channel))).toEqual(new Set(['email', 'slack']));
    // No run line or closing text around the document.
    expect(stdout.trimStart().startsWith('{')).toBe(true);
  }, 300_000);
});

describe('npm start --publish-mode sharded', () => {
  it('--json: the publishers deliver what the runs queued, and every audience receives exactly its matches', async () => {
    const { code, stdout, stderr } = await npmStart([
      '--cycles',
      '2',
      '--json',
      '--publish-mode',
      'sharded',
      '--now',
      new Date(now).toISOString(),
    ]);
    expect(code, stderr.slice(-2000)).toBe(0);
    const summary = JSON.parse(stdout) as ShardedStartSummary;
    expect(summary.ok).toBe(true);
    expect(summary.publishMode).toBe('sharded');
    expect(summary.cycles).toHaveLength(2);
    let records = 0;
    for (const cycle of summary.cycles) {
      const { run } = cycle;
      expect(run.status).toBe('completed');
      expect(run.notificationsQueued).toBeGreaterThan(0);
      // Each run waited for its own work items: all done, within the run.
      expect(run.dispatch).toMatchObject({
        dispatchId: expect.stringContaining(run.runId),
        state: 'completed',
        items: run.workItemsQueued,
      });
      const dispatch = run.dispatch as RunDispatchJson;
      expect(dispatch.done).toBe(dispatch.items);
      // Everything queued is accounted for by the publishers, and nothing was parked.
      expect(dispatch.published + dispatch.updateNotices + dispatch.alreadyDelivered).toBe(run.notificationsQueued);
      expect(dispatch.parked).toBe(0);
      // What the audiences received (alerts, not update notices) is what the publishers published.
      const alerts = Object.values(cycle.received).flat().length;
      expect(alerts).toBeGreaterThanOrEqual(dispatch.published);
      records += run.workItemsQueued;
    }
    // The same checks as single mode: nothing missing, nothing unexpected, nothing twice.
    expect(Object.keys(summary.audiences).length).toBeGreaterThan(0);
    for (const [audienceId, check] of Object.entries(summary.audiences)) {
      expect(check, audienceId).toMatchObject({ missing: [], unexpected: [], duplicates: [] });
    }
    // The emulated event source handed every item over once, none failed, and it ran batches in parallel.
    expect(summary.publisher).toMatchObject({ records, deleted: records, failed: 0 });
    expect(summary.publisher?.maxConcurrent).toBeGreaterThanOrEqual(1);
  }, 300_000);

  it('prints which mode ran and what each cycle queued against what the publishers published', async () => {
    const { code, stdout, stderr } = await npmStart([
      '--once',
      '--publish-mode',
      'sharded',
      '--now',
      new Date(now).toISOString(),
    ]);
    expect(code, stderr.slice(-2000)).toBe(0);
    expect(stderr).toContain('publish mode sharded: runs queue work items on');
    expect(stdout).toMatch(/\n {2}Queued (\d+) notifications in \d+ work items → the publishers published \d+/);
    expect(stdout).toMatch(/\n {2}The run itself: \d+ published · /);
    expect(stdout).not.toContain('✗');
  }, 300_000);

  it('refuses a publish mode other than single or sharded (a usage error: exit 2)', async () => {
    const { code, stdout, stderr } = await npmStart(['--once', '--publish-mode', 'parallel']);
    expect(code).toBe(2);
    expect(stdout).toBe('');
    expect(stderr).toContain("'--publish-mode <mode>'");
    expect(stderr).toContain('must be "single" or "sharded"');
    expect(stderr.trim().split('\n')).toHaveLength(2);
  });
});
