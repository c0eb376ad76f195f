/**
 * The CLI's sandbox against a provider other than its own simulator: `sandbox up --provider-url`
 * (here a second simulator with a CA of its own stands in for a real provider), the API key put
 * in with `api-key set`, and the descriptor's single description of the provider, so `run` reads
 * the provider `sandbox up` was given, trusting that provider's CA.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { daemonCommand } from '../../cli/sandbox.ts';
import { caPathOf, readDescriptor, type SandboxDescriptor, writeDescriptor } from '../../cli/sandbox-descriptor.ts';
import { type NewsSimulator, startNewsSimulator } from '../../sandbox/news-simulator.ts';
import { createCertificateAuthority } from '../../sandbox/tls.ts';
import { runCli } from './support.ts';

const dir = mkdtempSync(join(tmpdir(), 'news-alerts-sandbox-provider-'));
const descriptorPath = join(dir, 'sandbox.json');
const sandbox = (args: readonly string[], options: { input?: string; env?: Record<string, string | undefined> } = {}) =>
  runCli(['--sandbox-file', descriptorPath, ...args], { ...options, env: { NEWS_API_KEY: undefined, ...options.env } });

let provider: NewsSimulator;
let providerCaPath: string;

beforeAll(async () => {
  // The "real provider": its own CA (not the sandbox's), its own zone, on the real clock.
  const ca = await createCertificateAuthority();
  provider = await startNewsSimulator({
    ca,
    seed: 3,
    timeZone: 'Asia/Tokyo',
    generate: { days: 1, perDay: 120 },
  });
  providerCaPath = join(dir, 'provider-ca-source.pem');
  writeFileSync(providerCaPath, ca.cert);
});

afterAll(async () => {
  if (existsSync(descriptorPath)) await sandbox(['sandbox', 'down']);
  await provider?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('sandbox up with provider options', () => {
  it('refuses bad provider options with exit 2 before starting anything', async () => {
    const withoutUrl = await sandbox(['sandbox', 'up', '--provider-ca', providerCaPath]);
    expect(withoutUrl.code).toBe(2);
    expect(withoutUrl.stderr).toContain('--provider-ca applies to a real provider: give --provider-url too');

    const seeded = await sandbox(['sandbox', 'up', '--provider-url', provider.url, '--seed', '3']);
    expect(seeded.code).toBe(2);
    expect(seeded.stderr).toContain('--seed chooses the simulator’s articles');

    const plainHttp = await sandbox(['sandbox', 'up', '--provider-url', 'http://news.example.com']);
    expect(plainHttp.code).toBe(2);
    expect(plainHttp.stderr).toContain('NEWS_API_BASE_URL');
    expect(plainHttp.stderr).toContain('--provider-url sets NEWS_API_BASE_URL');

    const notPem = join(dir, 'not-a-cert.pem');
    writeFileSync(notPem, 'hello');
    const badCa = await sandbox(['sandbox', 'up', '--provider-url', provider.url, '--provider-ca', notPem]);
    expect(badCa.code).toBe(2);
    expect(badCa.stderr).toContain('holds no PEM certificate');

    const badMapping = join(dir, 'mapping.json');
    writeFileSync(badMapping, '{"title": ');
    const mapping = await sandbox(['sandbox', 'up', '--provider-url', provider.url, '--response-mapping', badMapping]);
    expect(mapping.code).toBe(2);
    expect(mapping.stderr).toContain(`--response-mapping: ${badMapping} is not JSON`);
    // Saved in Latin-1, a field name would never match the provider's UTF-8 JSON.
    const latin1Mapping = join(dir, 'latin1-mapping.json');
    writeFileSync(latin1Mapping, Buffer.from('{"title": ["d\xe9p\xeache"]}', 'latin1'));
    const latin1 = await sandbox([
      'sandbox',
      'up',
      '--provider-url',
      provider.url,
      '--response-mapping',
      latin1Mapping,
    ]);
    expect(latin1.code).toBe(2);
    expect(latin1.stderr).toContain(`--response-mapping: ${latin1Mapping} is not UTF-8 text`);
    expect(latin1.stderr).toContain(`${latin1Mapping}:1: byte 0xE9 (column 14) is not UTF-8`);

    const zone = await sandbox(['sandbox', 'up', '--provider-url', provider.url, '--provider-time-zone', 'Mars/Base']);
    expect(zone.code).toBe(2);
    expect(zone.stderr).toContain('--provider-time-zone sets NEWS_API_TIME_ZONE');
    expect(existsSync(descriptorPath)).toBe(false);
  });

  it('up --provider-url: run reads that provider with its CA once api-key set has put the key in; status shows provider, key and queues', async () => {
    const up = await sandbox([
      '--json',
      'sandbox',
      'up',
      '--provider-url',
      provider.url,
      '--provider-ca',
      providerCaPath,
      '--provider-time-zone',
      'Asia/Tokyo',
      '--page-size',
      '25',
    ]);
    expect(up.code, up.stderr).toBe(0);
    expect(up.json()).toMatchObject({
      running: true,
      provider: { url: provider.url, simulator: false, timeZone: 'Asia/Tokyo', pageSize: 25 },
      // The deployed default: the longer sandbox lookback is only for the simulator.
      initialLookbackMinutes: 60,
      apiKey: { set: false },
    });
    expect(up.stderr).toContain('api-key set');

    const descriptor = readDescriptor(descriptorPath);
    expect(descriptor.provider).toMatchObject({ url: provider.url, simulator: false, pageSize: 25 });
    expect(descriptor.alertEnvironment).toMatchObject({
      NEWS_API_BASE_URL: provider.url,
      NEWS_API_TIME_ZONE: 'Asia/Tokyo',
      NEWS_API_PAGE_SIZE: '25',
    });
    // The provider's CA, copied beside the descriptor: what `run` trusts for this provider.
    expect(caPathOf(descriptor, descriptorPath)).toBe(join(dir, 'provider-ca.pem'));
    expect(readFileSync(caPathOf(descriptor, descriptorPath), 'utf8')).toBe(readFileSync(providerCaPath, 'utf8'));

    const status = await sandbox(['sandbox', 'status']);
    expect(status.code, status.stderr).toBe(0);
    expect(status.stdout).toContain(provider.url);
    expect(status.stdout).toMatch(/API key\s+NOT SET: news-alerts --sandbox-file \S+ api-key set/);
    // The audit and Slack stand-in queues, with what they hold.
    expect(status.stdout).toMatch(
      /news-alerts-local-audit-markets-desk\s+\d+\s+every notification audience markets-desk/,
    );
    expect(status.stdout).toMatch(/news-alerts-local-slack-chips-team\s+\d+\s+what the Slack relay would post/);
    // Hints are commands that run as printed.
    // In a pipe the hints are notes on stderr: stdout is the fields and the queue table.
    expect(status.stderr).toContain(`Use it with: news-alerts --sandbox-file ${descriptorPath} rules list`);
    expect(status.stdout + status.stderr).not.toContain('<command>');

    const set = await sandbox(['api-key', 'set'], { input: provider.liveKey });
    expect(set.code, set.stderr).toBe(0);
    expect(set.stdout + set.stderr).not.toContain(provider.liveKey);
    const keyStatus = await sandbox(['--json', 'sandbox', 'status']);
    expect(keyStatus.json()).toMatchObject({ apiKey: { set: true } });

    const before = provider.requests.length;
    const run = await sandbox(['--json', 'run']);
    expect(run.code, run.stdout + run.stderr).toBe(0);
    const requests = provider.requests.slice(before);
    expect(requests.length).toBeGreaterThan(0);
    expect(requests.every((request) => request.status === 200)).toBe(true);
    expect(requests.map((request) => (request.body as { size?: number }).size)).toContain(25);
  }, 240_000);
});

describe('the sandbox descriptor describes the provider once', () => {
  const base = (): SandboxDescriptor => ({
    version: 1,
    endpoint: 'http://127.0.0.1:5000',
    region: 'us-east-1',
    names: {
      rulesTable: 'r',
      audiencesTable: 'a',
      stateTable: 's',
      audienceTopicPrefix: 'p-audience-',
      apiKeySecretId: 'p-news-api-key',
      slackWebhookSecretPrefix: 'p-slack/',
      slackStandInQueuePrefix: 'p-slack-',
    },
    provider: { url: 'https://news.example.com/', caPath: 'other-ca.pem', timeZone: 'Asia/Seoul' },
    alertEnvironment: {
      NEWS_API_KEY_SECRET_ID: 'p-news-api-key',
      RULES_TABLE_NAME: 'r',
      AUDIENCES_TABLE_NAME: 'a',
      STATE_TABLE_NAME: 's',
    },
  });

  it('builds the provider variables of alertEnvironment from provider.*', () => {
    const path = join(dir, 'provider-only.json');
    writeDescriptor(path, { ...base(), provider: { ...base().provider, pageSize: 40, responseMapping: {} } });
    expect(readDescriptor(path).alertEnvironment).toMatchObject({
      NEWS_API_BASE_URL: 'https://news.example.com/',
      NEWS_API_TIME_ZONE: 'Asia/Seoul',
      NEWS_API_PAGE_SIZE: '40',
      NEWS_API_RESPONSE_MAPPING: '{}',
    });
  });

  it('writes the provider once, so a provider.url edited in the file is the one read, as docs/sandbox.md says', () => {
    const path = join(dir, 'edited.json');
    // As describeLocalStack gives it: alertEnvironment repeats what provider.* says.
    writeDescriptor(path, {
      ...base(),
      alertEnvironment: {
        ...base().alertEnvironment,
        NEWS_API_BASE_URL: 'https://news.example.com/',
        NEWS_API_TIME_ZONE: 'Asia/Seoul',
      },
    });
    const written = JSON.parse(readFileSync(path, 'utf8')) as SandboxDescriptor;
    expect(written.alertEnvironment).toEqual(base().alertEnvironment);
    writeFileSync(
      path,
      JSON.stringify({ ...written, provider: { ...written.provider, url: 'https://other.example.com/' } }),
    );
    expect(readDescriptor(path).alertEnvironment).toMatchObject({
      NEWS_API_BASE_URL: 'https://other.example.com/',
      NEWS_API_TIME_ZONE: 'Asia/Seoul',
    });
  });

  it('refuses an alertEnvironment that names another provider than provider.url (the run would trust the wrong CA)', () => {
    const path = join(dir, 'two-providers.json');
    writeDescriptor(path, {
      ...base(),
      alertEnvironment: { ...base().alertEnvironment, NEWS_API_BASE_URL: 'https://127.0.0.1:4443' },
    });
    expect(() => readDescriptor(path)).toThrow(/describes the provider twice/);
    try {
      readDescriptor(path);
    } catch (error) {
      expect((error as { details: string[] }).details).toEqual([
        'alertEnvironment.NEWS_API_BASE_URL is "https://127.0.0.1:4443" but provider.url is "https://news.example.com/"; the provider is described once, in provider.url: remove NEWS_API_BASE_URL from alertEnvironment',
      ]);
    }
  });

  it('names a bad provider value in the run’s own words when the descriptor is read', () => {
    const path = join(dir, 'bad-page-size.json');
    writeDescriptor(path, { ...base(), provider: { ...base().provider, url: 'http://news.example.com/' } });
    expect(() => readDescriptor(path)).toThrow(/is invalid .*NEWS_API_BASE_URL/);
  });
});

describe('the daemon the sandbox starts', () => {
  it('is the bundled sandbox-daemon.js from the bundle, and the .ts through tsx from source', () => {
    expect(daemonCommand('file:///opt/news-alerts/dist/news-alerts.js')).toEqual([
      '/opt/news-alerts/dist/sandbox-daemon.js',
    ]);
    expect(daemonCommand('file:///work/news-alerts/cli/sandbox.ts')).toEqual([
      '--import',
      'tsx',
      '/work/news-alerts/cli/sandbox-daemon.ts',
    ]);
  });
});
