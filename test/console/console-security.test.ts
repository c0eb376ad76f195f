/**
 * The console's guard, against the real `news-alerts console` process on a test sandbox: it binds
 * loopback only (127.0.0.2, another loopback address, and this machine's other addresses are
 * refused), answers nothing without its token, refuses a Host header that is not its own (DNS
 * rebinding) and a peer that is not loopback, refuses every write without the CSRF token (or from
 * another origin), sends a strict Content-Security-Policy that the browser enforces, and never
 * shows a secret: not the provider API key, not a Slack webhook URL, not an HTTPS subscriber's
 * URL path, and subscriber addresses only on the pages about the audience's subscribers.
 */
import { connect } from 'node:net';
import { networkInterfaces } from 'node:os';
import { GetSecretValueCommand } from '@aws-sdk/client-secrets-manager';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import fc from 'fast-check';
import { Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { type HttpsReceiver, startHttpsReceiver } from '#sandbox/https-receiver';
import { contentSecurityPolicy, guard, newKeys } from '../../cli/console/security.ts';
import { type CliSandbox, startCliSandbox } from '../cli/support.ts';
import { type ConsoleProcess, launchChromium, raw, startConsoleProcess } from './support.ts';

/** Whether a TCP connection to `host:port` is accepted. */
function accepts(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

describe('console security', () => {
  let sandbox: CliSandbox;
  let consoleProcess: ConsoleProcess;
  let cookie: string;
  let csrf: string;
  let receiver: HttpsReceiver;
  const webhookSecret = 'T0SECRET/B0SECRET/ZzWebhookSecretPath42';
  const httpsSecret = 'hook-secret-path-7c1e';

  beforeAll(async () => {
    sandbox = await startCliSandbox();
    receiver = await startHttpsReceiver(inject('sandboxCa'));
    const slack = await sandbox.cli(['subscriptions', 'add', 'chips-team', '--slack-webhook'], {
      input: `https://hooks.slack.com/services/${webhookSecret}\n`,
    });
    expect(slack.code, slack.stderr).toBe(0);
    const email = await sandbox.cli(['subscriptions', 'add', 'chips-team', '--email', 'desk-lead@example.com']);
    expect(email.code, email.stderr).toBe(0);
    const https = await sandbox.cli([
      'subscriptions',
      'add',
      'chips-team',
      '--https',
      `${receiver.url}/${httpsSecret}`,
      '--allow-internal-target',
    ]);
    expect(https.code, https.stderr).toBe(0);
    consoleProcess = await startConsoleProcess(sandbox.descriptorPath);
    const opened = await raw(consoleProcess.port, { path: `/rules?token=${consoleProcess.token}` });
    expect(opened.status).toBe(303);
    cookie = String(opened.headers['set-cookie'] ?? '').split(';')[0] ?? '';
    expect(cookie).toMatch(/^news_alerts_console=/);
    const page = await raw(consoleProcess.port, { headers: { cookie } });
    csrf = /name="csrf-token" content="([^"]+)"/.exec(page.body)?.[1] ?? '';
    expect(csrf).not.toBe('');
  });

  afterAll(async () => {
    await consoleProcess?.stop();
    await receiver?.stop();
    await sandbox?.stop();
  });

  it('binds loopback 127.0.0.1 only: other loopback and interface addresses are refused', async () => {
    expect(await accepts('127.0.0.1', consoleProcess.port)).toBe(true);
    expect(await accepts('127.0.0.2', consoleProcess.port)).toBe(false);
    const others = Object.values(networkInterfaces())
      .flat()
      .filter((entry) => entry !== undefined && !entry.internal)
      .map((entry) => entry?.address ?? '');
    for (const address of others) expect(await accepts(address, consoleProcess.port), address).toBe(false);
  });

  it('a --port that is in use is refused with what to do, and the running console is untouched', async () => {
    const taken = await sandbox.cli(['console', '--port', String(consoleProcess.port)]);
    expect(taken.code).toBe(1);
    expect(taken.stderr).toContain(`port ${consoleProcess.port} on 127.0.0.1 is in use`);
    expect(taken.stderr).toContain('give another --port, or leave it out');
    expect((await raw(consoleProcess.port, { headers: { cookie } })).status).toBe(200);
  });

  it('serves nothing without the token, or with a wrong one', async () => {
    for (const path of ['/rules', '/audiences', '/runs', '/assets/console.js', '/rules/quakes/history']) {
      expect((await raw(consoleProcess.port, { path })).status, path).toBe(401);
    }
    expect((await raw(consoleProcess.port, { path: '/rules?token=wrong' })).status).toBe(401);
    expect((await raw(consoleProcess.port, { headers: { cookie: 'news_alerts_console=wrong' } })).status).toBe(401);
    expect((await raw(consoleProcess.port, { headers: { cookie } })).status).toBe(200);
  });

  it('refuses a Host header that is not its own, whatever the token says', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.constantFrom(
            'evil.example',
            `evil.example:${consoleProcess.port}`,
            '127.0.0.1',
            `127.0.0.1:1`,
            `0.0.0.0:${consoleProcess.port}`,
          ),
          fc.domain(),
        ),
        async (host) => {
          const response = await raw(consoleProcess.port, { host, headers: { cookie } });
          expect(response.status).toBe(403);
        },
      ),
      { numRuns: 25 },
    );
    expect(
      (await raw(consoleProcess.port, { host: `localhost:${consoleProcess.port}`, headers: { cookie } })).status,
    ).toBe(200);
  });

  /** The guard on its own, on `port`: asks for /rules with the token's cookie, from `host` and `peer`. */
  function guardOnly(port: number) {
    const keys = newKeys();
    const app = new Hono();
    app.use(
      '*',
      guard(keys, () => port),
    );
    app.get('/rules', (c) => c.text('ok'));
    return async (host: string, peer = '127.0.0.1') =>
      (
        await app.fetch(
          new Request(`http://${host}/rules`, { headers: { host, cookie: `news_alerts_console=${keys.token}` } }),
          { incoming: { socket: { remoteAddress: peer } } },
        )
      ).status;
  }

  it('refuses a peer that is not loopback (the guard on its own)', async () => {
    const ask = guardOnly(8080);
    expect(await ask('127.0.0.1:8080', '10.1.2.3')).toBe(403);
    expect(await ask('127.0.0.1:8080', '192.168.0.7')).toBe(403);
    expect(await ask('127.0.0.1:8080', '127.0.0.1')).toBe(200);
  });

  it('on port 80 takes the host as browsers send it there, without the port; still refuses other hosts (the guard on its own)', async () => {
    const ask = guardOnly(80);
    for (const host of ['127.0.0.1', 'localhost', '127.0.0.1:80', 'LOCALHOST']) expect(await ask(host), host).toBe(200);
    for (const host of ['evil.example', '127.0.0.1:8080', 'evil.example:80', '0.0.0.0']) {
      expect(await ask(host), host).toBe(403);
    }
  });

  it('refuses every write without the CSRF token, with a wrong one, or from another origin', async () => {
    const form = { 'content-type': 'application/x-www-form-urlencoded', cookie };
    const writes = [
      '/audiences/chips-team/test-send',
      '/audiences/chips-team/repair',
      '/rules/quakes/restore',
      '/rules/quakes/save',
      '/new-rule/preview',
      '/runs/replay',
      '/rules/validate',
    ];
    for (const path of writes) {
      const none = await raw(consoleProcess.port, { method: 'POST', path, headers: form, body: 'version=1' });
      expect(none.status, path).toBe(403);
      const wrong = await raw(consoleProcess.port, {
        method: 'POST',
        path,
        headers: form,
        body: '_csrf=nope&version=1',
      });
      expect(wrong.status, path).toBe(403);
    }
    const crossOrigin = await raw(consoleProcess.port, {
      method: 'POST',
      path: '/rules/validate',
      headers: { ...form, origin: 'https://evil.example', 'x-csrf-token': csrf },
      body: 'ruleId=x',
    });
    expect(crossOrigin.status).toBe(403);
    // With the token it goes through (validation answers).
    const valid = await raw(consoleProcess.port, {
      method: 'POST',
      path: '/rules/validate',
      headers: { ...form, 'x-csrf-token': csrf },
      body: 'ruleId=x&audienceId=chips-team&keywords=chip&enabled=true',
    });
    expect(valid.status).toBe(200);
    expect(JSON.parse(valid.body)).toEqual({ ok: true, problems: [], notes: [] });
    // Nothing of the refused writes happened: no test was sent, no rule changed.
    const history = await sandbox.cli(['--json', 'rules', 'history', 'quakes']);
    expect(history.json<{ versions: unknown[] }>().versions).toHaveLength(1);
  });

  it('refuses a restore reviewed against a version the rule has since left, and writes nothing', async () => {
    const put = (keyword: string) =>
      sandbox.cli(['rules', 'put', 'restore-race', '--audience', 'chips-team', '--keywords', keyword]);
    for (const keyword of ['alpha', 'beta']) expect((await put(keyword)).code).toBe(0);
    const review = await raw(consoleProcess.port, {
      path: '/rules/restore-race/restore?version=1',
      headers: { cookie },
    });
    expect(review.status).toBe(200);
    const hiddenOf = (page: string, name: string) => new RegExp(`name="${name}" value="([^"]*)"`).exec(page)?.[1];
    expect(hiddenOf(review.body, 'expectedVersion')).toBe('2');
    // Someone else edits the rule between the review and the confirmation.
    expect((await put('gamma')).code).toBe(0);
    const form = { 'content-type': 'application/x-www-form-urlencoded', cookie };
    const confirm = (page: string) =>
      raw(consoleProcess.port, {
        method: 'POST',
        path: '/rules/restore-race/restore',
        headers: form,
        body: new URLSearchParams({
          _csrf: csrf,
          version: '1',
          expectedVersion: hiddenOf(page, 'expectedVersion') ?? '',
          reviewed: hiddenOf(page, 'reviewed') ?? '',
        }).toString(),
      });
    const stale = await confirm(review.body);
    expect(stale.status).toBe(409);
    expect(stale.body).toContain('changed since you reviewed the restore (version 3 now');
    const keywordsNow = async () =>
      (await sandbox.cli(['--json', 'rules', 'show', 'restore-race'])).json<{ keywords?: string[] }>().keywords;
    expect(await keywordsNow()).toEqual(['gamma']);
    // Reviewed again, then edited in the DynamoDB console (version unchanged): refused too.
    const again = await raw(consoleProcess.port, {
      path: '/rules/restore-race/restore?version=1',
      headers: { cookie },
    });
    await sandbox.stack.clients.documents.send(
      new UpdateCommand({
        TableName: sandbox.stack.config.tables.rules,
        Key: { ruleId: 'restore-race' },
        UpdateExpression: 'SET excludeKeywords = :rumor',
        ExpressionAttributeValues: { ':rumor': ['rumor'] },
      }),
    );
    const outside = await confirm(again.body);
    expect(outside.status).toBe(409);
    expect(outside.body).toContain('edited outside the console after you reviewed the restore, version 3 unchanged');
    const shown = await sandbox.cli(['--json', 'rules', 'show', 'restore-race']);
    expect(shown.json<{ excludeKeywords?: string[] }>().excludeKeywords).toEqual(['rumor']);
    // Reviewed against the rule as it is now, it goes through.
    const current = await raw(consoleProcess.port, {
      path: '/rules/restore-race/restore?version=1',
      headers: { cookie },
    });
    expect((await confirm(current.body)).status).toBe(303);
    expect(await keywordsNow()).toEqual(['alpha']);
  });

  it('sends a strict Content-Security-Policy that the browser enforces (no inline script runs)', async () => {
    const response = await raw(consoleProcess.port, { headers: { cookie } });
    expect(response.headers['content-security-policy']).toBe(contentSecurityPolicy);
    expect(contentSecurityPolicy).toContain("script-src 'self'");
    expect(contentSecurityPolicy).not.toContain('unsafe-inline');
    expect(response.headers['referrer-policy']).toBe('no-referrer');
    const browser = await launchChromium();
    try {
      const page = await browser.newPage();
      await page.goto(consoleProcess.url);
      // Inline script added to the page (as an injection would): the policy blocks it and says so.
      const blocked = await page.evaluate(`new Promise((resolve) => {
        document.addEventListener('securitypolicyviolation', (event) => resolve(event.effectiveDirective));
        const script = document.createElement('script');
        script.textContent = 'window.inlineRan = true;';
        document.body.append(script);
      })`);
      expect(blocked).toMatch(/^script-src/);
      expect(await page.evaluate('window.inlineRan')).toBeUndefined();
    } finally {
      await browser.close();
    }
  });

  it('never shows a secret on any page; subscriber addresses only where the page is about them', async () => {
    const apiKey = (
      await sandbox.stack.clients.secrets.send(
        new GetSecretValueCommand({ SecretId: sandbox.descriptor.names.apiKeySecretId }),
      )
    ).SecretString;
    expect(apiKey).toBeTruthy();
    const pages = [
      '/rules',
      '/rules/quakes',
      '/rules/quakes/history',
      '/audiences',
      '/holds',
      '/runs',
      '/articles?since=2d',
      '/deliveries?audience=chips-team&since=2d',
      '/audiences/chips-team',
      '/audiences/chips-team/repair',
    ];
    const aboutSubscribers = new Set([
      '/deliveries?audience=chips-team&since=2d',
      '/audiences/chips-team',
      '/audiences/chips-team/repair',
    ]);
    for (const path of pages) {
      const response = await raw(consoleProcess.port, { path, headers: { cookie } });
      expect(response.status, path).toBe(200);
      expect(response.body, path).not.toContain(apiKey);
      expect(response.body, path).not.toContain(webhookSecret);
      expect(response.body, path).not.toContain('ZzWebhookSecretPath42');
      expect(response.body, path).not.toContain(httpsSecret);
      if (!aboutSubscribers.has(path)) expect(response.body, path).not.toContain('desk-lead@example.com');
    }
    // The audience page lists its subscribers (the email address, the Slack relay), masked where a URL is a credential.
    const audience = await raw(consoleProcess.port, { path: '/audiences/chips-team', headers: { cookie } });
    expect(audience.body).toContain('desk-lead@example.com');
    expect(audience.body).toContain('slack');
    expect(audience.body).toContain('https://127.0.0.1');
    // A test send's result page masks them the same way.
    const sent = await raw(consoleProcess.port, {
      method: 'POST',
      path: '/audiences/chips-team/test-send',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie },
      body: `_csrf=${encodeURIComponent(csrf)}`,
    });
    // Post/Redirect/Get: the result is at an address of its own.
    expect(sent.status).toBe(303);
    const result = await raw(consoleProcess.port, { path: String(sent.headers.location), headers: { cookie } });
    expect(result.status).toBe(200);
    expect(result.body).toContain('[TEST]');
    expect(result.body).not.toContain(webhookSecret);
    expect(result.body).not.toContain(httpsSecret);
    expect(consoleProcess.stderr()).not.toContain(webhookSecret);
  });
});
