/**
 * The target-address policy (issue 10, item 9): every way of writing an internal address is
 * refused, public targets pass, credentials never pass, and the override is explicit.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  checkTargetUrl,
  internalAddressReason,
  internalHostReason,
  isLoopbackHost,
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
