/**
 * The stack's configuration: shipped defaults, validation messages that name the context key, the
 * synth-time refusal through the real CDK app, and the docs that must list every option and alarm.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { alertRunEnvironment } from '#alert-run/config';
import {
  misspeltOptions,
  parseStackConfig,
  StackConfigError,
  StackConfigSchema,
  stackOptions,
} from '../../lib/config.ts';
import { Monitoring } from '../../lib/constructs/monitoring.ts';
import { fullContext, shippedContext, synthesize } from './synth.ts';

const projectFile = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8');

const refusal = (context: Record<string, unknown>): string => {
  try {
    parseStackConfig({ ...shippedContext(), ...context });
  } catch (error) {
    expect(error).toBeInstanceOf(StackConfigError);
    return (error as Error).message;
  }
  throw new Error(`expected ${JSON.stringify(context)} to be refused`);
};

describe('cdk.json', () => {
  it('lists every option with its default', () => {
    const shipped = shippedContext();
    const defaults = StackConfigSchema.parse({}) as Record<string, unknown>;
    expect(Object.keys(shipped).filter((key) => !key.startsWith('@') && !key.startsWith('aws:'))).toEqual([
      ...stackOptions,
    ]);
    for (const key of stackOptions) expect(shipped[key], key).toEqual(defaults[key]);
  });

  it('runs the app through tsx', () => {
    expect((JSON.parse(projectFile('cdk.json')) as { app: string }).app).toBe('npx tsx bin/app.ts');
  });

  it('is a valid configuration as shipped (with the placeholder base URL)', () => {
    const config = parseStackConfig(shippedContext());
    expect(config).toMatchObject({ intervalMinutes: 5, leaseSeconds: 360, usesPlaceholderBaseUrl: true });
  });

  it('rechecks late articles every three schedule intervals, at least every 10 minutes, unless lateRecheckMinutes says otherwise', () => {
    const recheck = (context: Record<string, unknown>) =>
      parseStackConfig({ ...shippedContext(), ...context }).recheckMinutes;
    expect(recheck({})).toBe(15);
    expect(recheck({ scheduleExpression: 'rate(1 minute)', flexibleWindowMinutes: 0 })).toBe(10);
    expect(recheck({ scheduleExpression: 'rate(10 minutes)' })).toBe(30);
    expect(recheck({ lateRecheckMinutes: 7 })).toBe(7);
    expect(recheck({ lateRecheckMinutes: 0 })).toBe(0);
  });
});

describe('validation', () => {
  it("refuses a context key that is a misspelt setting, naming the setting meant, and leaves CDK's keys alone", () => {
    expect(
      misspeltOptions([
        'publishmode',
        'emailDomian',
        'stackName',
        '@aws-cdk/aws-lambda:recognizeLayerVersion',
        'aws:cdk:enable-path-metadata',
        'notices',
        'cli-telemetry',
        'acknowledged-issue-numbers',
      ]),
    ).toEqual([
      { key: 'publishmode', meant: 'publishMode' },
      { key: 'emailDomian', meant: 'emailDomain' },
    ]);
    expect(() => synthesize({ publishmode: 'sharded' })).toThrow(StackConfigError);
    expect(() => synthesize({ publishmode: 'sharded' })).toThrow(
      '"publishmode" is not a setting: did you mean "publishMode"?',
    );
  });

  it('names no provider time zone unless one is set, so zone-less timestamps are refused, never read as UTC (item 13)', () => {
    const shipped = synthesize(shippedContext());
    const zoneOf = (synth: typeof shipped) =>
      Object.values(
        synth.template.toJSON().Resources as Record<string, { Type: string; Properties?: Record<string, unknown> }>,
      )
        .filter((resource) => resource.Type === 'AWS::Lambda::Function')
        .map(
          (resource) =>
            (resource.Properties?.Environment as { Variables?: Record<string, string> } | undefined)?.Variables,
        )
        .filter((variables) => variables?.NEWS_API_BASE_URL !== undefined)
        .map((variables) => variables?.NEWS_API_TIME_ZONE);
    expect(parseStackConfig(shippedContext()).newsApiTimeZone).toBeNull();
    expect(zoneOf(shipped)).toEqual([undefined]);
    expect(zoneOf(synthesize({ ...shippedContext(), newsApiTimeZone: 'Asia/Seoul' }))).toEqual(['Asia/Seoul']);
    expect(() => parseStackConfig({ ...shippedContext(), newsApiTimeZone: 'Mars/Olympus' })).toThrow(StackConfigError);
  });

  it('sets DEFAULT_LOCALE from defaultLocale (en-US as shipped, canonical form of -c defaultLocale=ko-kr)', () => {
    const localeOf = (synth: ReturnType<typeof synthesize>) =>
      Object.values(
        synth.template.toJSON().Resources as Record<string, { Type: string; Properties?: Record<string, unknown> }>,
      )
        .filter((resource) => resource.Type === 'AWS::Lambda::Function')
        .map(
          (resource) =>
            (resource.Properties?.Environment as { Variables?: Record<string, string> } | undefined)?.Variables,
        )
        .filter((variables) => variables?.NEWS_API_BASE_URL !== undefined)
        .map((variables) => variables?.DEFAULT_LOCALE);
    expect(localeOf(synthesize(shippedContext()))).toEqual(['en-US']);
    expect(localeOf(synthesize({ ...shippedContext(), defaultLocale: 'ko-KR' }))).toEqual(['ko-KR']);
    expect(parseStackConfig({ defaultLocale: 'ko-kr' }).defaultLocale).toBe('ko-KR');
    expect(parseStackConfig({ defaultLocale: 'ja' }).defaultLocale).toBe('ja');
  });

  it('refuses a defaultLocale without shipped messages or that is no locale, naming the key, the value and the choices', () => {
    for (const value of ['fr-FR', 'not a locale', 'de', '']) {
      const message = refusal({ defaultLocale: value });
      expect(message, value).toMatch(/defaultLocale: /);
      expect(message, value).toContain(`got ${JSON.stringify(value)}`);
      expect(message, value).toContain('(en, ko, ja)');
      expect(message, value).toContain('"ko-KR"');
    }
    expect(refusal({ defaultLocale: 'fr-FR' })).toMatch(/has no shipped messages for its language "fr"/);
    expect(refusal({ defaultLocale: 'ko_KR' })).toMatch(/is not a BCP 47 locale/);
    expect(refusal({ alertEnvironmentOverrides: { DEFAULT_LOCALE: 'ko-KR' } })).toMatch(
      /alertEnvironmentOverrides\.DEFAULT_LOCALE: is set by the stack/,
    );
  });

  it('refuses an http:// provider base URL, naming the key', () => {
    expect(refusal({ newsApiBaseUrl: 'http://news-api.example.com' })).toMatch(
      /newsApiBaseUrl: must use https:\/\/ \(the provider only allows HTTPS\)/,
    );
  });

  it('refuses internal provider and webhook targets in every notation unless allowInternalTargets is set (target-address policy)', () => {
    for (const url of [
      'https://169.254.169.254',
      'https://2852039166',
      'https://127.1:8443',
      'https://[::ffff:127.0.0.1]',
    ]) {
      expect(refusal({ newsApiBaseUrl: url }), url).toMatch(
        /newsApiBaseUrl: the host \S+ is a (link-local|loopback) address.*Set allowInternalTargets to true only for a test stack/,
      );
    }
    const message = refusal({
      audiences: [
        { audienceId: 'desk', httpsEndpoints: ['https://hooks.example.com/in', { url: 'https://localhost:8443/in' }] },
        { audienceId: 'ops', httpsEndpoints: ['https://metadata.google.internal/computeMetadata/v1/'] },
      ],
    });
    expect(message).toMatch(/audiences\[0\]\.httpsEndpoints\[1\]\.url: the host localhost is a loopback host name/);
    expect(message).toMatch(/audiences\[1\]\.httpsEndpoints\[0\]\.url: the host metadata\.google\.internal is a cloud/);
    expect(message).not.toMatch(/httpsEndpoints\[0\]\.url.*hooks\.example\.com/);
    const allowed = parseStackConfig({
      allowInternalTargets: 'true',
      newsApiBaseUrl: 'https://127.0.0.1:8443',
      audiences: [{ audienceId: 'desk', httpsEndpoints: ['https://[::1]:9443/in'] }],
    });
    expect(allowed).toMatchObject({ allowInternalTargets: true, newsApiBaseUrl: 'https://127.0.0.1:8443' });
    expect(refusal({ allowInternalTargets: 'yes' })).toMatch(/allowInternalTargets: must be true or false/);
    // A credential in an endpoint's URL would be in the template in clear; the same subscriber
    // twice would get every alert twice.
    const secrets = refusal({
      audiences: [
        {
          audienceId: 'desk',
          httpsEndpoints: [
            'https://hooks.slack.com/services/T0/B0/x',
            'https://partner.example.com/hook?token=s3cr3t',
            'https://partner.example.com/hook?access_key=s3cr3t',
            'https://partner.example.com/hook?format=json',
            'https://partner.example.com/hook?format=json',
          ],
          emails: ['x@example.com', 'X@Example.com'],
          phoneNumbers: ['+821012345678', '+821012345678'],
        },
      ],
    });
    expect(secrets).toMatch(/httpsEndpoints\[0\]\.url: is a Slack incoming-webhook URL/);
    expect(secrets).toMatch(/httpsEndpoints\[1\]\.url: carries a credential in its query \(token=…\)/);
    expect(secrets).toMatch(/httpsEndpoints\[2\]\.url: carries a credential in its query \(access_key=…\)/);
    expect(secrets).not.toMatch(/httpsEndpoints\[3\]\.url/);
    expect(secrets).toMatch(/httpsEndpoints\[4\]: is listed twice \(as httpsEndpoints\[3\] too\)/);
    expect(secrets).toMatch(/emails\[1\]: is listed twice/);
    expect(secrets).toMatch(/phoneNumbers\[1\]: is listed twice/);
    expect(secrets).not.toContain('s3cr3t');
    // Ordinary parameters that end like a credential's name are not one.
    for (const url of [
      'https://partner.example.com/hook?country_code=KR',
      'https://partner.example.com/hook?lang_code=ko',
      'https://partner.example.com/hook?sort_key=published',
      'https://partner.example.com/hook?channel-key=alerts',
    ]) {
      expect(
        parseStackConfig({ audiences: [{ audienceId: 'desk', httpsEndpoints: [url] }] }).audiences,
        url,
      ).toHaveLength(1);
    }
    // Webhook services that carry their secret in the path are refused too, by name when known
    // (they take their own JSON, not SNS's, so the message says a relay is needed), and by the
    // secret's looks otherwise; the message never repeats the secret.
    const pathSecret = 'Zq8xW3kLmN0pRt5VbY7cDe2F';
    const secretParts = (text: string) =>
      [pathSecret.slice(0, 6), pathSecret.slice(6, 12), pathSecret.slice(-6)].filter((part) => text.includes(part));
    for (const [url, service] of [
      [`https://discord.com/api/webhooks/112233445566/${pathSecret}`, 'a Discord webhook URL'],
      [`https://discordapp.com/api/v10/webhooks/1/${pathSecret}`, 'a Discord webhook URL'],
      [
        `https://contoso.webhook.office.com/webhookb2/0d2b/IncomingWebhook/${pathSecret}/0e1f`,
        'a Microsoft Teams incoming-webhook URL',
      ],
      [`https://hooks.zapier.com/hooks/catch/123/${pathSecret.slice(0, 6)}/`, 'a Zapier webhook URL'],
      [`https://hooks.zapier.com./hooks/catch/123/${pathSecret.slice(0, 6)}/`, 'a Zapier webhook URL'],
      [`https://maker.ifttt.com/trigger/news/with/key/${pathSecret}`, 'an IFTTT Webhooks URL'],
      [`https://api.telegram.org/bot1234:${pathSecret}/sendMessage`, 'a Telegram bot API URL'],
      // Percent-encoding changes no path as the service reads it.
      [`https://hooks.zapier.com/%68ooks/catch/123/${pathSecret.slice(0, 6)}/`, 'a Zapier webhook URL'],
    ] as const) {
      const problem = refusal({ audiences: [{ audienceId: 'desk', httpsEndpoints: [url] }] });
      expect(problem, url).toContain(`is ${service}: its path is a credential`);
      expect(problem, url).toMatch(/cannot confirm an SNS subscription or read SNS's messages; put a relay/);
      expect(secretParts(problem), url).toEqual([]);
    }
    for (const [url, expected] of [
      [`https://chat.example.com/hooks/${pathSecret}`, /looks like a credential in its path \(segment 2 is 24/],
      [`https://chat.example.com/webhook/%5A${pathSecret.slice(1)}`, /looks like a credential in its path/],
      [`https://chat.example.com/hooks/3f2a9c1e-5b7d-4e8f-9a0b-1c2d3e4f5a6b`, /looks like a credential in its path/],
      [`https://chat.example.com/incoming_webhook/${pathSecret.toLowerCase()}`, /looks like a credential in its path/],
      [`https://chat.example.com/web-hooks/abc-${pathSecret}`, /looks like a credential in its path/],
      // PagerDuty's SNS endpoint confirms subscriptions itself: the endpoint store is the way.
      [
        'https://events.pagerduty.com/integration/9f8e7d6c5b4a39281706f5e4d3c2b1a0/enqueue',
        /is a PagerDuty integration URL: its path is a credential/,
      ],
      [
        `https://api.example.com/v1/${pathSecret}aB9cD0eF/notify`,
        /looks like a credential in its path \(segment 2 is 32/,
      ],
      // Base64 with its padding, as Sumo Logic's tokens are, on a host nobody named.
      [`https://logs.example.com/receiver/${pathSecret}aB9+cD0=`, /looks like a credential in its path/],
      // On-call and log services that confirm SNS subscriptions, their key a UUID or padded base64.
      [
        `https://endpoint1.collection.us2.sumologic.com/receiver/v1/http/${pathSecret}aB9cD0eFgH1j==`,
        /is a Sumo Logic HTTP source URL: its path is a credential/,
      ],
      [
        'https://alert.victorops.com/integrations/cloudwatch/20131130/alert/9f8e7d6c-5b4a-4928-8170-6f5e4d3c2b1a/ops',
        /is a Splunk On-Call \(VictorOps\) URL: its path is a credential/,
      ],
      [
        `https://oncall-prod-us-central-0.grafana.net/oncall/integrations/v1/amazon_sns/${pathSecret}/`,
        /is a Grafana OnCall integration URL: its path is a credential/,
      ],
      [
        'https://www.zenduty.com/api/integration/amazonsns/9f8e7d6c-5b4a-4928-8170-6f5e4d3c2b1a/',
        /is a Zenduty integration URL: its path is a credential/,
      ],
    ] as const) {
      const problem = refusal({ audiences: [{ audienceId: 'desk', httpsEndpoints: [url] }] });
      expect(problem, url).toMatch(expected);
      expect(problem, url).toMatch(/subscriptions add <audienceId> --https -/);
      expect(secretParts(problem), url).toEqual([]);
      expect(problem, url).not.toContain('9f8e7d6c5b4a');
    }
    // A URL refused for its scheme, or as no URL at all, is quoted without its path either.
    for (const url of [
      `http://chat.example.com/hooks/${pathSecret}`,
      `http://discord.com/api/webhooks/1/${pathSecret}`,
      `hooks.slack.com/services/T0/B0/${pathSecret}`,
      `http://chat.example.com\\hooks\\${pathSecret}`,
      `https://user:${pathSecret.slice(0, 6)}/${pathSecret.slice(6)}@chat.example.com/in`,
      `ftp://${pathSecret}@chat.example.com/in`,
    ]) {
      const problem = refusal({ audiences: [{ audienceId: 'desk', httpsEndpoints: [url] }] });
      expect(problem, url).toMatch(/must use https:\/\/|is not a URL/);
      expect(secretParts(problem), url).toEqual([]);
    }
    // Identifiers people put in ordinary endpoints are not credentials: words and slugs, dates,
    // hex ids (a MongoDB ObjectId, a SHA-1), UUIDs and ULIDs outside a hook's path.
    for (const url of [
      'https://partner.example.com/v2/alerts/inbound-news-notifications',
      'https://partner.example.com/v2/alerts/inbound-notifications-v2',
      'https://partner.example.com/hooks/2026-11-30/desk42',
      'https://partner.example.com/accounts/507f1f77bcf86cd799439011/events',
      'https://partner.example.com/commits/2fd4e1c67a2d28fced849ee1bb76e7391b93eb12',
      'https://partner.example.com/events/01HV8ZK3Q4X5Y6Z7A8B9C0D1E2',
      'https://partner.example.com/tenants/3f2a9c1e-5b7d-4e8f-9a0b-1c2d3e4f5a6b/alerts',
      // Slugs after a hook segment: words and short runs, however long the whole.
      'https://partner.example.com/webhooks/news-alerts-prod-01',
      'https://partner.example.com/hooks/orders-v2-production',
      'https://discord.example.com/api/webhooks/public',
    ]) {
      expect(
        parseStackConfig({ audiences: [{ audienceId: 'desk', httpsEndpoints: [url] }] }).audiences,
        url,
      ).toHaveLength(1);
    }
    // A key in a URL's query is never repeated, whichever check refuses the URL.
    for (const context of [
      { newsApiBaseUrl: 'http://news.example.com/v1?apiKey=SECRETKEY123' },
      { newsApiBaseUrl: 'news.example.com/v1?apiKey=SECRETKEY123' },
      { audiences: [{ audienceId: 'desk', httpsEndpoints: ['http://partner.example.com/h?token=SECRETKEY123'] }] },
      { newsApiBaseUrl: 'http://user:SECRETKEY123@news.example.com/v1' },
    ]) {
      const message = refusal(context);
      expect(message).toMatch(/./);
      expect(message, JSON.stringify(context)).not.toContain('SECRETKEY123');
    }
  });

  it('refuses a query or fragment in newsApiBaseUrl under that key, not the function variable it becomes', () => {
    for (const newsApiBaseUrl of ['https://api.example.org/v1?apikey=x', 'https://api.example.org/v1#top']) {
      const message = refusal({ newsApiBaseUrl });
      expect(message).toContain('newsApiBaseUrl: must not have a query or fragment');
      expect(message).not.toContain('NEWS_API_BASE_URL');
      expect(message).not.toContain('apikey=x');
    }
  });

  it('refuses credentials in provider and webhook URLs, even with allowInternalTargets', () => {
    expect(refusal({ newsApiBaseUrl: 'https://user:pw@news.example.com' })).toMatch(
      /newsApiBaseUrl: must not carry credentials/,
    );
    expect(
      refusal({
        allowInternalTargets: true,
        audiences: [{ audienceId: 'desk', httpsEndpoints: ['https://u:p@127.0.0.1/in'] }],
      }),
    ).toMatch(/audiences\[0\]\.httpsEndpoints\[0\]\.url: must not carry credentials/);
  });

  it('refuses a schedule expression Scheduler would not take', () => {
    expect(refusal({ scheduleExpression: 'every 5 minutes' })).toMatch(
      /scheduleExpression: must be an EventBridge Scheduler expression/,
    );
    expect(refusal({ scheduleExpression: 'cron(0/10 * ? * 2#1 *)' })).toMatch(
      /scheduleIntervalMinutes: is required with a cron\(\) schedule synth cannot read/,
    );
    expect(refusal({ scheduleTimeZone: 'Mars/Olympus' })).toMatch(/scheduleTimeZone: must be an IANA time zone/);
    // Found at synth, not at deploy: the day fields and the numbers' ranges.
    for (const [expression, problem] of [
      ['cron(99 * * * ? *)', /minutes \(1st field\) must be from 0 to 59/],
      ['cron(0/5 * * * * *)', /exactly one of day-of-month \(3rd field\) and day-of-week \(5th\) must be "\?"/],
      ['cron(0 24 ? * MON-FRI *)', /hours \(2nd field\) must be from 0 to 23/],
      ['cron(0/0 * * * ? *)', /has a step "\/0"/],
      ['rate(5 minute)', /write rate\(5 minutes\)/],
      ['rate(1 hours)', /write rate\(1 hour\)/],
    ] as const) {
      expect(refusal({ scheduleExpression: expression, scheduleIntervalMinutes: 5 }), expression).toMatch(problem);
    }
    // L, W, #, a year field that stops and a range that wraps are Scheduler's to read: the stated
    // interval is taken as given.
    for (const expression of [
      'cron(15 10 L * ? 2027)',
      'cron(0 12 15W * ? *)',
      'cron(0 12 ? * 2#1 *)',
      'cron(0 0/2 ? * SUN 2026-2028)',
      'cron(0/10 22-2 * * ? *)',
    ]) {
      expect(parseStackConfig({ scheduleExpression: expression, scheduleIntervalMinutes: 10 }).intervalMinutes).toBe(
        10,
      );
    }
    // A cron's gaps are read from its fields, names included: the interval is its shortest gap
    // (derived when left out), a stated one must be a gap it has, and the no-run alarm watches the
    // longest. A reviewer's hourly cron stated as 10 minutes made that alarm fire between every two
    // runs; a cron that pauses at night paged nightly.
    for (const [expression, shortest, longest] of [
      ['cron(0/10 * * * ? *)', 10, 10],
      ['cron(10-50/5 * * * ? *)', 5, 20],
      ['cron(*/5 * ? * * *)', 5, 5],
      ['cron(0,15,45 * * * ? *)', 15, 30],
      ['cron(0 * * * ? *)', 60, 60],
      ['cron(0 * ? * SUN-SAT *)', 60, 60],
      ['cron(0/10 * * * ? 2026-2099)', 10, 10],
      ['cron(30 0/6 ? * * *)', 360, 360],
      ['cron(0/5 0-22 * * ? *)', 5, 65],
      ['cron(0/20 6-23 * * ? *)', 20, 380],
    ] as const) {
      const derived = parseStackConfig({ scheduleExpression: expression });
      expect(derived.intervalMinutes, expression).toBe(shortest);
      // Three intervals by default: the longest gap and two more.
      expect(derived.noRunWindowMinutes, expression).toBe(longest + 2 * shortest);
      expect(
        parseStackConfig({ scheduleExpression: expression, scheduleIntervalMinutes: longest }).intervalMinutes,
      ).toBe(longest);
      const apart = shortest === longest ? `every ${longest} minute(s)` : `${shortest} to ${longest} minutes apart`;
      for (const wrong of [shortest - 1, longest + 1]) {
        expect(refusal({ scheduleExpression: expression, scheduleIntervalMinutes: wrong }), expression).toContain(
          `scheduleIntervalMinutes: is ${wrong}, but ${expression} runs ${apart}: leave it null`,
        );
      }
    }
    expect(refusal({ scheduleExpression: 'cron(0 * ? * SUN-SAT *)', scheduleIntervalMinutes: 10 })).toContain(
      'runs every 60 minute(s): leave it null',
    );
    // Where clocks go back once a year, a local hour repeats and a cron's gap grows by it that
    // night: the no-run alarm holds an hour more (a reviewer's Berlin schedule paged once a year).
    const berlin = { scheduleExpression: 'cron(0/15 6-22 * * ? *)', scheduleTimeZone: 'Europe/Berlin' };
    expect(parseStackConfig(berlin).noRunWindowMinutes).toBe(435 + 60 + 2 * 15);
    expect(parseStackConfig({ ...berlin, scheduleTimeZone: 'Asia/Seoul' }).noRunWindowMinutes).toBe(435 + 2 * 15);
    expect(parseStackConfig({ ...berlin, scheduleExpression: 'rate(15 minutes)' }).noRunWindowMinutes).toBe(45);
    // The flexible window is judged against the shortest gap the runs have, whatever is stated.
    expect(
      refusal({
        scheduleExpression: 'cron(0/10 6-22 * * ? *)',
        scheduleIntervalMinutes: 430,
        flexibleWindowMinutes: 300,
      }),
    ).toContain('flexibleWindowMinutes: must be shorter than the schedule interval (10 min, its shortest gap)');
    // Runs further apart than the no-run alarm can watch, however the interval is stated.
    for (const [expression, apart] of [
      ['cron(0 8 * * ? *)', 'runs 1440 min apart'],
      ['cron(0 8 ? * MON-FRI *)', 'runs 4320 min apart at the most'],
      ['cron(0/10 8-18 ? * 2-6 *)', 'runs 3670 min apart at the most'],
      ['cron(0 0 1 * ? *)', 'runs 44640 min apart'],
      ['cron(0 0 1 JAN ? *)', 'runs 525600 min apart'],
      ['cron(0 0 29 2 ? *)', 'runs at most once a year'],
    ] as const) {
      expect(refusal({ scheduleExpression: expression }), expression).toContain(`scheduleExpression: ${apart}`);
    }
    expect(refusal({ scheduleExpression: 'cron(0 0 1 * ? *)', scheduleIntervalMinutes: 5 })).toContain(
      'runs 40320 to 44640 minutes apart',
    );
    // What synth cannot read is taken as stated, and asked for when left out.
    expect(refusal({ scheduleExpression: 'cron(0 23-1 * * ? *)' })).toMatch(
      /scheduleIntervalMinutes: is required with a cron\(\) schedule synth cannot read \(L, W or #, a range that wraps/,
    );
    // The interval is derived from rate(): one that contradicts it would size the alarms wrongly.
    expect(refusal({ scheduleExpression: 'rate(5 minutes)', scheduleIntervalMinutes: 60 })).toMatch(
      /scheduleIntervalMinutes: is 60, but rate\(5 minutes\) runs every 5 minute/,
    );
    expect(parseStackConfig({ scheduleExpression: 'rate(1 hour)', scheduleIntervalMinutes: 60 }).intervalMinutes).toBe(
      60,
    );
    // A fetch margin as long as the timeout: every run would stop before reading anything.
    expect(refusal({ timeoutSeconds: 30 })).toMatch(
      /timeoutSeconds: is 30, not more than the run's fetch margin \(SOFT_MARGIN_SECONDS, 30 s by default\)/,
    );
    // Below its own minimum: that is the one thing said, not a margin the user never set.
    const below = refusal({ timeoutSeconds: 29 });
    expect(below).toMatch(/timeoutSeconds: must be at least 30/);
    expect(below).not.toMatch(/SOFT_MARGIN_SECONDS|fetch margin/);
    expect(refusal({ alertEnvironmentOverrides: { SOFT_MARGIN_SECONDS: '600' } })).toMatch(/is 600 s, not less than/);
    expect(parseStackConfig({ timeoutSeconds: 60 }).timeoutSeconds).toBe(60);
  });

  it('refuses alarm settings that would fire on a healthy deployment or exceed CloudWatch limits', () => {
    expect(refusal({ noSuccessfulRunIntervals: 1 })).toMatch(
      /noSuccessfulRunIntervals: .*shorter than the longest healthy gap/,
    );
    expect(refusal({ scheduleExpression: 'rate(12 hours)', noSuccessfulRunIntervals: 3 })).toMatch(/one-day limit/);
    expect(refusal({ flexibleWindowMinutes: 5 })).toMatch(
      /flexibleWindowMinutes: must be shorter than the schedule interval/,
    );
    // Longer than 12 hours apart, no alarm window fits in a day: one message that says so, not two
    // that send the reader back and forth.
    for (const scheduleExpression of ['rate(1 day)', 'rate(13 hours)', 'rate(721 minutes)']) {
      for (const noSuccessfulRunIntervals of [1, 2, 3]) {
        const message = refusal({ scheduleExpression, noSuccessfulRunIntervals, flexibleWindowMinutes: 0 });
        expect(message).toMatch(/scheduleExpression: runs \d+ min apart; it must fire at least every 12 hours/);
        expect(message).not.toMatch(/noSuccessfulRunIntervals/);
      }
    }
    expect(
      parseStackConfig({ scheduleExpression: 'rate(12 hours)', noSuccessfulRunIntervals: 2 }).intervalMinutes,
    ).toBe(720);
  });

  it('refuses a ledger retention that would let re-read articles be sent twice', () => {
    expect(refusal({ ledgerRetentionDays: 2 })).toMatch(/ledgerRetentionDays: must cover the re-read overlap/);
  });

  it('names the exact audience field that is wrong', () => {
    const message = refusal({
      audiences: [
        { audienceId: 'ok', emails: ['not-an-email'] },
        { audienceId: 'bad id' },
        { audienceId: 'ok', httpsEndpoints: ['http://plain.example.com'] },
      ],
    });
    expect(message).toMatch(/audiences\[0\]\.emails\[0\]: must be an email address/);
    expect(message).toMatch(/audiences\[1\]\.audienceId: must be 1-128 letters/);
    expect(message).toMatch(/audiences\[2\]\.httpsEndpoints\[0\]\.url: must use https:\/\//);
    expect(message).toMatch(/audiences\[2\]\.audienceId: is declared twice/);
    expect(refusal({ audiences: [{ audienceId: 'x', phoneNumbers: ['010-1234-5678'] }] })).toMatch(/E\.164/);
    // As strict as SES email: a quote, display name or control character never reaches SNS.
    for (const hostile of ['"x"@example.com', 'Kim <kim@example.com>', 'a@e.com\u001b[2J']) {
      expect(refusal({ audiences: [{ audienceId: 'x', emails: [hostile] }] }), hostile).toMatch(
        /audiences\[0\]\.emails\[0\]: must be an email address \(not a usable email address/,
      );
      expect(refusal({ alarmEmail: hostile }), hostile).toMatch(/alarmEmail: must be an email address/);
    }
  });

  it('refuses overrides of variables the stack manages or the function does not read', () => {
    expect(refusal({ alertEnvironmentOverrides: { NEWS_API_BASE_URL: 'https://x.example' } })).toMatch(
      /alertEnvironmentOverrides\.NEWS_API_BASE_URL: is set by the stack/,
    );
    expect(refusal({ alertEnvironmentOverrides: { NEWS_API_TYPO: '1' } })).toMatch(/NEWS_API_TYPO: is not a variable/);
  });

  it('refuses other bad values, each naming its key', () => {
    expect(refusal({ logRetentionDays: 42 })).toMatch(/logRetentionDays: must be one of/);
    expect(refusal({ removalPolicy: 'keep' })).toMatch(/removalPolicy: must be "retain" or "destroy"/);
    expect(refusal({ memorySize: 64 })).toMatch(/memorySize: must be at least 128/);
    expect(refusal({ newsApiResponseMapping: { headline: ['title'] } })).toMatch(/newsApiResponseMapping/);
    expect(refusal({ apiKeySecretArn: 'my-secret' })).toMatch(/apiKeySecretArn: must be a Secrets Manager secret ARN/);
    expect(
      refusal({
        audiences: [
          { audienceId: 'desk', slack: { webhookSecretKmsKeyArn: 'arn:aws:kms:us-east-1:123456789012:key/abc' } },
        ],
      }),
    ).toMatch(
      /audiences\[0\]\.slack\.webhookSecretKmsKeyArn: is the key of an existing webhook secret: give webhookSecretArn/,
    );
    expect(refusal({ apiKeySecretKmsKeyArn: 'arn:aws:kms:us-east-1:123456789012:key/abc' })).toMatch(
      /apiKeySecretKmsKeyArn: only applies to an existing secret/,
    );
  });

  it('accepts `-c key=value` strings for numbers and JSON values', () => {
    const config = parseStackConfig({
      memorySize: '1024',
      audiences: '[{"audienceId":"desk","emails":["desk@example.com"]}]',
      newsApiPagination: '{"method":"CURSOR"}',
      alarmEmail: 'null',
    });
    expect(config.memorySize).toBe(1024);
    expect(config.audiences).toEqual([
      { audienceId: 'desk', emails: ['desk@example.com'], phoneNumbers: [], httpsEndpoints: [] },
    ]);
    expect(config.newsApiPagination).toEqual({ method: 'CURSOR', methodValue: 'CURSOR', cursorField: 'cursor' });
    expect(config.alarmEmail).toBeNull();
  });

  it('checks the alert function environment with the function’s own validation at synth', () => {
    expect(() =>
      synthesize({
        ...fullContext,
        alertEnvironmentOverrides: { SOFT_MARGIN_SECONDS: '5', HARD_MARGIN_SECONDS: '10' },
      }),
    ).toThrow(/alert function would refuse its configuration: SOFT_MARGIN_SECONDS must be larger/);
  });
});

describe('cdk synth through bin/app.ts', () => {
  const runApp = (context: Record<string, unknown>) => {
    const outdir = mkdtempSync(join(tmpdir(), 'news-alerts-app-'));
    try {
      return spawnSync(join('node_modules', '.bin', 'tsx'), ['bin/app.ts'], {
        cwd: new URL('../../', import.meta.url),
        encoding: 'utf8',
        // What the CDK CLI hands the app: cdk.json's context merged with -c values.
        env: {
          ...process.env,
          CDK_OUTDIR: outdir,
          CDK_CONTEXT_JSON: JSON.stringify({ ...shippedContext(), ...context }),
        },
      });
    } finally {
      rmSync(outdir, { recursive: true, force: true });
    }
  };

  it('fails with one clear line naming the key when the base URL is http://', () => {
    const result = runApp({ newsApiBaseUrl: 'http://news-api.example.com' });
    expect(result.status).toBe(1);
    expect(result.stderr).toMatch(
      /^news-alerts: invalid news-alerts configuration .*newsApiBaseUrl: must use https:\/\//m,
    );
    expect(result.stderr).not.toMatch(/\n\s+at /);
  });

  it('fails with one clear line naming defaultLocale when its language has no messages', () => {
    const result = runApp({ defaultLocale: 'fr-FR' });
    expect(result.status).toBe(1);
    expect(result.stderr).toMatch(
      /^news-alerts: invalid news-alerts configuration .*defaultLocale: has no shipped messages/m,
    );
    expect(result.stderr).toContain('got "fr-FR"');
  });

  it('fails the same way on a bad schedule', () => {
    const result = runApp({ scheduleExpression: 'rate(five minutes)' });
    expect(result.status).toBe(1);
    expect(result.stderr).toMatch(/scheduleExpression: must be an EventBridge Scheduler expression/);
  });
});

describe('docs/', () => {
  /** The text of one `## Heading` section of a docs page, up to the next `##` heading. */
  const section = (page: string, heading: string): string => {
    const text = projectFile(`docs/${page}`);
    const start = text.indexOf(`\n## ${heading}\n`);
    expect(start, `docs/${page} has a "## ${heading}" section`).toBeGreaterThan(-1);
    const end = text.indexOf('\n## ', start + 1);
    return text.slice(start, end === -1 ? undefined : end);
  };

  it('configuration.md documents every cdk.json option', () => {
    const options = section('configuration.md', 'Stack options (`cdk.json`)');
    for (const key of stackOptions) {
      const row = options.split('\n').find((line) => new RegExp(`^\\|\\s*\`${key}\`\\s*\\|`).test(line));
      expect(row, key).toBeDefined();
    }
  });

  it('operate.md documents every alarm', () => {
    const alarms = section('operate.md', 'Alarms');
    for (const alarm of Monitoring.describeAlarms()) expect(alarms, alarm.name).toContain(`\`${alarm.name}\``);
  });

  it('configuration.md documents every variable of the alert function with its default', () => {
    const configuration = section('configuration.md', 'Alert function variables');
    for (const variable of alertRunEnvironment) {
      const row = configuration
        .split('\n')
        .find((line) => new RegExp(`^\\|\\s*\`${variable.name}\`\\s*\\|`).test(line));
      expect(row, variable.name).toBeDefined();
      if (variable.default && !variable.default.startsWith('(')) expect(row).toContain(`\`${variable.default}\``);
    }
  });
});
