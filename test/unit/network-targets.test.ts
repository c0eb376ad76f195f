/**
 * The target-address policy (issue 10, item 9): every way of writing an internal address is
 * refused, public targets pass, credentials never pass, and the override is explicit.
 */
import dns, { type LookupAddress } from 'node:dns';
import { createServer } from 'node:http';
import type { AddressInfo, LookupFunction } from 'node:net';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ProviderError } from '#core/errors';
import { parseProviderConfig } from '#provider/config';
import { NewsLookupClient } from '#provider/news-client';
import { Agent, request } from '#shared/http-pool';
import {
  checkTargetUrl,
  internalAddressReason,
  internalHostReason,
  isLoopbackHost,
  publicAddressLookup,
  quotableOrigin,
  requireTargetUrl,
  TargetAddressError,
} from '#shared/network-targets';

const internalTargets = [
  // The cloud metadata service in every IPv4 notation the WHATWG parser accepts.
  'https://169.254.169.254/latest/meta-data/',
  'https://2852039166/latest',
  'https://0xa9fea9fe/',
  'https://0251.0376.0251.0376/',
  'https://0xa9.0xfe.0xa9.0xfe/',
  'https://169.254.43518/',
  'https://169.254.169.254./',
  'https://%31%36%39.254.169.254/',
  // Loopback.
  'https://127.0.0.1/',
  'https://127.1/',
  'https://0x7f.1/',
  'https://2130706433/',
  'https://localhost:8443/',
  'https://LOCALHOST./',
  'https://api.localhost/',
  'https://[::1]/',
  'https://[0:0:0:0:0:0:0:1]:8443/',
  'https://[::ffff:127.0.0.1]/',
  'https://[::ffff:7f00:1]/',
  'https://[::ffff:169.254.169.254]/',
  'https://[64:ff9b::169.254.169.254]/',
  // Private, shared and special ranges.
  'https://10.0.0.5/',
  'https://172.16.0.1/',
  'https://172.31.255.254/',
  'https://192.168.1.1/',
  'https://100.64.0.1/',
  'https://100.127.255.254/',
  'https://0.0.0.0/',
  'https://0/',
  'https://[::]/',
  'https://224.0.0.1/',
  'https://255.255.255.255/',
  'https://[fd00:ec2::254]/',
  'https://[fc00::1]/',
  'https://[fe80::1]/',
  'https://[ff02::1]/',
  // Names that only resolve inside a network.
  'https://metadata.google.internal/computeMetadata/v1/',
  'https://metadata.google.internal./',
  'https://metadata/',
  'https://ip-10-0-0-1.ec2.internal/',
  'https://printer.local/',
  'https://intranet/',
];

const publicTargets = [
  'https://hooks.slack.com/services/T0/B0/x',
  'https://hooks.example.com/in/t0ken',
  'https://api.news.example.org/v1',
  'https://8.8.8.8/',
  'https://172.32.0.1/',
  'https://100.128.0.1/',
  'https://169.255.0.1/',
  'https://[2606:4700:4700::1111]/',
  'https://[2002:808:808::1]/',
  'https://news-api.example.com:8443/path',
];

describe('target-address policy', () => {
  it.each(internalTargets)('refuses the internal target %s', (target) => {
    const check = checkTargetUrl(target);
    expect(check.ok).toBe(false);
    if (!check.ok) {
      expect(check.internal).toBe(true);
      expect(check.reason).toMatch(/^the host \S+ is /);
    }
  });

  it.each(publicTargets)('accepts the public target %s', (target) => {
    expect(checkTargetUrl(target)).toMatchObject({ ok: true });
  });

  it('names the canonical address, so a decimal or hex spelling is recognisable as the metadata service', () => {
    const check = checkTargetUrl('https://2852039166/');
    expect(check).toMatchObject({
      ok: false,
      reason: expect.stringContaining('169.254.169.254 is a link-local address'),
    });
  });

  it('refuses credentials in the URL, even with the internal override', () => {
    for (const allowInternal of [false, true]) {
      expect(checkTargetUrl('https://user:pass@hooks.example.com/x', { allowInternal })).toMatchObject({
        ok: false,
        internal: false,
        reason: expect.stringMatching(/must not carry credentials/),
      });
      expect(checkTargetUrl('https://user@hooks.example.com/x', { allowInternal }).ok).toBe(false);
    }
  });

  it('refuses plain http and non-URLs whatever the override says', () => {
    expect(checkTargetUrl('http://hooks.example.com/', { allowInternal: true })).toMatchObject({
      ok: false,
      reason: 'must be an https:// URL',
    });
    expect(checkTargetUrl('not a url', { allowInternal: true })).toMatchObject({ ok: false, reason: 'is not a URL' });
  });

  it('accepts internal targets only with the explicit override', () => {
    expect(checkTargetUrl('https://127.0.0.1:8443/hook', { allowInternal: true })).toMatchObject({ ok: true });
    expect(checkTargetUrl('https://127.0.0.1:8443/hook').ok).toBe(false);
  });

  it('never quotes the path or query, which may hold a webhook secret', () => {
    const check = checkTargetUrl('https://10.1.2.3/services/T0/B0/sUp3rSeCrEt?token=t0k3n');
    expect(JSON.stringify(check)).not.toMatch(/sUp3rSeCrEt|t0k3n/);
    expect(() => requireTargetUrl('https://u:sUp3rSeCrEt@10.1.2.3/', '--https')).toThrow(TargetAddressError);
    try {
      requireTargetUrl('https://u:sUp3rSeCrEt@example.com/', '--https');
    } catch (error) {
      expect(String(error)).not.toContain('sUp3rSeCrEt');
    }
  });

  it('requireTargetUrl names the field and the override only when the address is the problem', () => {
    expect(() =>
      requireTargetUrl('https://localhost/', '--https', { override: 'pass --allow-internal-target' }),
    ).toThrow(
      /^--https: the host localhost is a loopback host name; .*\(for a local test target: pass --allow-internal-target\)$/,
    );
    expect(() =>
      requireTargetUrl('http://example.com/', '--https', { override: 'pass --allow-internal-target' }),
    ).toThrow(/^--https: must be an https:\/\/ URL$/);
  });

  it('classifies resolved addresses and host names directly', () => {
    expect(internalAddressReason('169.254.169.254')).toMatch(/link-local/);
    expect(internalAddressReason('::ffff:10.0.0.1')).toMatch(/private/);
    expect(internalAddressReason('fe80::1%eth0')).toMatch(/link-local/);
    expect(internalAddressReason('93.184.216.34')).toBeUndefined();
    expect(internalHostReason('example.com')).toBeUndefined();
    expect(internalHostReason('foo.localhost.')).toMatch(/loopback/);
  });

  it('refuses every IPv4 address in a private range, whatever its notation (property)', () => {
    const privateAddress = fc.oneof(
      fc.tuple(fc.constant(10), fc.nat(255), fc.nat(255), fc.nat(255)),
      fc.tuple(fc.constant(127), fc.nat(255), fc.nat(255), fc.nat(255)),
      fc.tuple(fc.constant(169), fc.constant(254), fc.nat(255), fc.nat(255)),
      fc.tuple(fc.constant(172), fc.integer({ min: 16, max: 31 }), fc.nat(255), fc.nat(255)),
      fc.tuple(fc.constant(192), fc.constant(168), fc.nat(255), fc.nat(255)),
      fc.tuple(fc.constant(100), fc.integer({ min: 64, max: 127 }), fc.nat(255), fc.nat(255)),
    );
    const notation = fc.constantFrom('dotted', 'decimal', 'hex', 'octal', 'mapped', 'mapped-hex', 'trailing-dot');
    fc.assert(
      fc.property(privateAddress, notation, ([a, b, c, d], how) => {
        const value = ((a << 24) >>> 0) + (b << 16) + (c << 8) + d;
        const host = {
          dotted: `${a}.${b}.${c}.${d}`,
          decimal: String(value),
          hex: `0x${value.toString(16)}`,
          octal: [a, b, c, d].map((part) => `0${part.toString(8)}`).join('.'),
          mapped: `[::ffff:${a}.${b}.${c}.${d}]`,
          'mapped-hex': `[::ffff:${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}]`,
          'trailing-dot': `${a}.${b}.${c}.${d}.`,
        }[how];
        const check = checkTargetUrl(`https://${host}:8443/hook`);
        return !check.ok && check.internal;
      }),
    );
  });
  it('judges an IPv4 address carried in IPv6 as the IPv4 address itself, for every address (property)', () => {
    // `::ffff:0.0.0.0` once passed as public, and undici connected it to this machine.
    const quad = fc.tuple(fc.nat(255), fc.nat(255), fc.nat(255), fc.nat(255));
    const special = fc.constantFrom([0, 0, 0, 0], [0, 0, 0, 1], [127, 0, 0, 1], [255, 255, 255, 255], [0, 1, 2, 3]);
    const carriers = (a: number, b: number, c: number, d: number): string[] => {
      const high = ((a << 8) | b).toString(16);
      const low = ((c << 8) | d).toString(16);
      return [
        `::ffff:${a}.${b}.${c}.${d}`,
        `::ffff:${high}:${low}`,
        `0:0:0:0:0:ffff:${high}:${low}`,
        `64:ff9b::${a}.${b}.${c}.${d}`,
        `2002:${high}:${low}::1`,
      ];
    };
    fc.assert(
      fc.property(fc.oneof(quad, special), ([a = 0, b = 0, c = 0, d = 0]) => {
        const internal = internalAddressReason(`${a}.${b}.${c}.${d}`) !== undefined;
        for (const address of carriers(a, b, c, d)) {
          expect(internalAddressReason(address) !== undefined, address).toBe(internal);
          if (internal) expect(checkTargetUrl(`https://[${address}]/hook`).ok, address).toBe(false);
        }
      }),
    );
  });
});

describe('isLoopbackHost', () => {
  const hostOf = (url: string) => new URL(url).hostname;
  it('accepts only this machine, in the notations URL normalizes', () => {
    for (const url of [
      'https://localhost:8443/x',
      'https://LOCALHOST./x',
      'https://127.0.0.1/x',
      'https://127.1/x',
      'https://2130706433/x',
      'https://0x7f000001/x',
      'https://127.255.255.254/x',
      'https://[::1]/x',
      'https://[::ffff:127.0.0.1]/x',
      'https://[0:0:0:0:0:ffff:7f00:2]/x',
    ]) {
      expect(isLoopbackHost(hostOf(url)), url).toBe(true);
    }
  });

  it('refuses hosts that only look like loopback or are merely internal', () => {
    for (const url of [
      'https://[64:ff9b::7f00:1]/x', // NAT64
      'https://[2002:7f00:1::]/x', // 6to4
      'https://[::127.0.0.1]/x', // IPv4-compatible
      'https://[::ffff:10.0.0.1]/x',
      'https://app.localhost/x',
      'https://localhost.example.com/x',
      'https://10.0.0.1/x',
      'https://169.254.169.254/x',
      'https://128.0.0.1/x',
      'https://hooks.example.com/x',
      'https://8.8.8.8/x',
    ]) {
      expect(isLoopbackHost(hostOf(url)), url).toBe(false);
    }
  });

  it('agrees with the address blocks for any IPv4 address', () => {
    fc.assert(
      fc.property(fc.ipV4(), (address) => {
        expect(isLoopbackHost(hostOf(`https://${address}/`))).toBe(address.startsWith('127.'));
        expect(isLoopbackHost(hostOf(`https://[::ffff:${address}]/`))).toBe(address.startsWith('127.'));
      }),
    );
  });
});

describe('the connect-time check (issue 30, item 6)', () => {
  // A real server on loopback; host names reach it through a lookup the test answers, as a
  // hostile or misconfigured DNS would (the machine's resolver and /etc/hosts stay untouched).
  let connections = 0;
  const requests: string[] = [];
  const server = createServer((incoming, response) => {
    requests.push(incoming.url ?? '');
    response.end('reached');
  });
  server.on('connection', () => {
    connections += 1;
  });
  let port = 0;
  beforeAll(async () => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  /** A resolver that answers every name with `addresses` (in `all` form when asked), counting its calls. */
  function answering(...addresses: string[]): LookupFunction & { calls: string[] } {
    const calls: string[] = [];
    const lookup = ((hostname, options, callback) => {
      calls.push(hostname);
      const answers: LookupAddress[] = addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
      if (options.all) callback(null, answers);
      else callback(null, answers[0]?.address ?? '', answers[0]?.family ?? 4);
    }) as LookupFunction & { calls: string[] };
    lookup.calls = calls;
    return lookup;
  }

  /** The outcome of one GET through a fresh pool: the body, or the error it failed with. */
  async function get(url: string, options: ConstructorParameters<typeof Agent>[0]): Promise<string | Error> {
    const dispatcher = new Agent(options);
    try {
      const response = await request(url, { dispatcher });
      return await response.body.text();
    } catch (error) {
      return error as Error;
    } finally {
      await dispatcher.close();
    }
  }

  const secretPath = '/services/T0000/B0000/Xq7Lw2Zp9Rt4Yv8Nm3Kb6Hd1?token=Kb6Hd1Xq';

  it('refuses a public-looking name that resolves to loopback, naming the host and never the path', async () => {
    const before = connections;
    const lookup = answering('127.0.0.1');
    const outcome = await get(`http://hooks.example.com:${port}${secretPath}`, { connect: { lookup } });
    expect(outcome).toBeInstanceOf(TargetAddressError);
    const message = (outcome as Error).message;
    expect(message).toBe(
      'the host hooks.example.com resolves to 127.0.0.1, a loopback address; alerts and requests only go to public internet addresses',
    );
    expect(message).not.toContain('Xq7Lw2');
    expect(lookup.calls).toEqual(['hooks.example.com']);
    expect(connections).toBe(before);
    expect(requests).not.toContain(secretPath);
  });

  it('connects when the pool is told internal targets are allowed (local receivers and tests)', async () => {
    const outcome = await get(`http://hooks.example.com:${port}/allowed`, {
      allowInternalTargets: true,
      connect: { lookup: answering('127.0.0.1') },
    });
    expect(outcome).toBe('reached');
    expect(requests).toContain('/allowed');
  });

  it.each([
    ['the metadata service', ['169.254.169.254'], 'a link-local address'],
    ['a private address', ['10.1.2.3'], 'a private address (RFC 1918)'],
    ['IPv6 loopback', ['::1'], 'a loopback address'],
    ['loopback mapped into IPv6', ['::ffff:127.0.0.1'], 'a loopback address, written as IPv6'],
    ['a public and an internal answer', ['93.184.215.14', '127.0.0.1'], 'a loopback address'],
  ])('refuses a name that resolves to %s, whichever answer Node would try', async (_label, addresses, reason) => {
    const outcome = await get(`http://news.example.com:${port}/news`, {
      connect: { lookup: answering(...addresses), autoSelectFamily: true },
    });
    expect(outcome).toBeInstanceOf(TargetAddressError);
    expect((outcome as Error).message).toContain(reason);
    expect((outcome as Error & { code?: string }).code).toBe('ERR_TARGET_ADDRESS');
  });

  it('leaves addresses written in the URL and internal names to the URL check (and its explicit override)', async () => {
    // Node connects to an address written in the URL without a lookup; the configuration check
    // (checkTargetUrl, with NEWS_API_ALLOW_INTERNAL_TARGET or --allow-internal-target) rules on it.
    const literal = answering('10.0.0.1');
    expect(await get(`http://127.0.0.1:${port}/literal`, { connect: { lookup: literal } })).toBe('reached');
    expect(literal.calls).toEqual([]);
    expect(await get(`http://provider.local:${port}/named`, { connect: { lookup: answering('127.0.0.1') } })).toBe(
      'reached',
    );
  });

  it('every pool made by http-pool checks unless told otherwise', async () => {
    // The provider client and the Slack relay build their pools with connect options only.
    const outcome = await get(`http://api.example.net:${port}/news`, {
      connect: { timeout: 2000, lookup: answering('127.0.0.1') },
      keepAliveTimeout: 30_000,
    });
    expect(outcome).toBeInstanceOf(TargetAddressError);
  });

  it("guards the provider client's own pool too, with no change to the client", async () => {
    // The client builds its pool from http-pool with connect options alone; the machine's resolver
    // is stood in for at its seam (dns.lookup), answering the provider's name with loopback.
    const resolved: string[] = [];
    const spy = vi.spyOn(dns, 'lookup').mockImplementation(((
      hostname: string,
      options: dns.LookupOptions,
      callback: (error: Error | null, address: string | LookupAddress[], family?: number) => void,
    ) => {
      resolved.push(hostname);
      if (options.all) callback(null, [{ address: '127.0.0.1', family: 4 }]);
      else callback(null, '127.0.0.1', 4);
    }) as unknown as typeof dns.lookup);
    const client = new NewsLookupClient({
      config: parseProviderConfig({ baseUrl: `https://news-provider.example.com:${port}`, maxAttempts: 4 }),
      secrets: { apiKey: async () => 'Zk4q-9Wm2-Lx7v' },
      sleep: async () => {},
    });
    const before = connections;
    try {
      const pages = client.pages({ from: '2026-11-22', to: '2026-11-22' });
      const error = await pages.next().then(
        () => undefined,
        (caught: unknown) => caught as Error,
      );
      expect(error).toBeInstanceOf(ProviderError);
      const chain: string[] = [];
      for (let at: unknown = error; at instanceof Error; at = at.cause) chain.push(`${at.name}: ${at.message}`);
      expect(chain.join('\n')).toContain(
        'TargetAddressError: the host news-provider.example.com resolves to 127.0.0.1, a loopback address',
      );
      expect(resolved).toContain('news-provider.example.com');
      // Refused for good: asking the resolver again gives the same answer, so it is not retried.
      expect(resolved.filter((host) => host === 'news-provider.example.com')).toHaveLength(1);
      expect(error).toMatchObject({ retryable: false });
      expect(connections).toBe(before);
    } finally {
      spy.mockRestore();
      await client.close();
    }
  });

  it('passes the resolver through unchanged when allowed, and resolver errors as they are', async () => {
    const failing: LookupFunction = (_hostname, _options, callback) =>
      callback(Object.assign(new Error('getaddrinfo ENOTFOUND nowhere.example'), { code: 'ENOTFOUND' }), '', 4);
    const outcome = await get(`http://nowhere.example:${port}/`, { connect: { lookup: failing } });
    expect((outcome as Error & { code?: string }).code).toBe('ENOTFOUND');
    const allowed = answering('127.0.0.1');
    expect(publicAddressLookup({ allowInternal: true, lookup: allowed })).toBe(allowed);
  });
});

describe('quotableOrigin', () => {
  it('quotes an endpoint by scheme and host only, never its path, query or user info (property)', () => {
    fc.assert(
      fc.property(
        fc.webUrl({ withQueryParameters: true, withFragments: true }),
        fc.stringMatching(/^[A-Za-z0-9]{8,20}$/),
        (url, secret) => {
          const parsed = new URL(url);
          for (const value of [
            `${url}/${secret}`,
            url.replace('://', `://user:${secret}@`),
            `${url}?token=${secret}`,
          ]) {
            const quoted = quotableOrigin(value);
            expect(quoted).not.toContain(secret);
            expect(quoted.startsWith(`${parsed.protocol}//`)).toBe(true);
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it('quotes what is not a URL up to where a path, user info or port could begin', () => {
    expect(quotableOrigin('hooks.example.com/services/T0/B0/SECRET')).toBe('hooks.example.com…');
    expect(quotableOrigin('https://user:SECRET@')).toBe('https://user…');
    expect(quotableOrigin('https://hooks.example.com')).toBe('https://hooks.example.com');
  });
});
