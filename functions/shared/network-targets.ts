/**
 * The target-address policy: where the product agrees to send things (HTTPS subscribers, Slack
 * webhooks, the news provider). It refuses every address that reaches the machine itself or a
 * private network instead of the public internet (loopback, link-local with the cloud metadata
 * service, RFC 1918, CGNAT, unique-local IPv6, unspecified, multicast, broadcast, reserved and
 * documentation ranges), host names that only resolve inside a network (`localhost`,
 * `*.internal`, single-label names), and credentials in the URL, in every notation a URL parser
 * accepts: the WHATWG parser turns `2852039166`, `0xa9fea9fe`, `0251.0376.0251.0376`, `127.1`,
 * full-width digits and a trailing dot into one dotted quad and IPv6 into its canonical form, so
 * the checks below only ever see canonical addresses.
 *
 * One pure module (no AWS imports) used by the CLI, the synth-time configuration and the runtime
 * configuration, so the three can never disagree. The local sandbox and tests legitimately use
 * loopback: they pass `allowInternal`, an explicit override, never a hole in the policy.
 *
 * What a URL check cannot see, a public name that resolves to an internal address (DNS can
 * change after any check), is refused where the connection is made: {@link publicAddressLookup}
 * checks the answer Node connects to, so nothing can change between the check and the connect.
 */
import dns from 'node:dns';
import { BlockList, isIPv4, isIPv6, type LookupFunction } from 'node:net';

/** A target URL broke the policy; the message names the field and the host, never the whole URL. */
export class TargetAddressError extends Error {
  /** Lets callers that see it through a network library tell it from a network failure. */
  readonly code = 'ERR_TARGET_ADDRESS';
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'TargetAddressError';
  }
}

/** What a check may accept beyond the default (public HTTPS, no credentials). */
export interface TargetPolicyOptions {
  /**
   * Accept internal addresses and names (loopback, private, link-local…): the local sandbox and
   * tests only. Credentials and the scheme are still checked.
   */
  readonly allowInternal?: boolean;
  /** Schemes accepted, with the colon (default `['https:']`). */
  readonly protocols?: readonly string[];
}

/** The outcome of {@link checkTargetUrl}. */
export type TargetCheck =
  | { readonly ok: true; readonly url: URL }
  | {
      readonly ok: false;
      readonly reason: string;
      /** True when only the address is at fault: `allowInternal` would accept it. */
      readonly internal: boolean;
    };

interface Range {
  readonly network: string;
  readonly prefix: number;
  readonly reason: string;
}

const ipv4Ranges: readonly Range[] = [
  { network: '0.0.0.0', prefix: 8, reason: 'an unspecified ("this network") address' },
  { network: '10.0.0.0', prefix: 8, reason: 'a private address (RFC 1918)' },
  { network: '100.64.0.0', prefix: 10, reason: 'a shared carrier-grade NAT address (RFC 6598)' },
  { network: '127.0.0.0', prefix: 8, reason: 'a loopback address' },
  {
    network: '169.254.0.0',
    prefix: 16,
    reason: 'a link-local address (the cloud instance metadata service lives at 169.254.169.254)',
  },
  { network: '172.16.0.0', prefix: 12, reason: 'a private address (RFC 1918)' },
  { network: '192.0.0.0', prefix: 24, reason: 'an IETF protocol-assignment address' },
  { network: '192.0.2.0', prefix: 24, reason: 'a documentation address' },
  { network: '192.88.99.0', prefix: 24, reason: 'a 6to4 relay anycast address' },
  { network: '192.168.0.0', prefix: 16, reason: 'a private address (RFC 1918)' },
  { network: '198.18.0.0', prefix: 15, reason: 'a benchmarking address' },
  { network: '198.51.100.0', prefix: 24, reason: 'a documentation address' },
  { network: '203.0.113.0', prefix: 24, reason: 'a documentation address' },
  { network: '224.0.0.0', prefix: 4, reason: 'a multicast address' },
  { network: '240.0.0.0', prefix: 4, reason: 'a reserved or broadcast address' },
];

const ipv6Ranges: readonly Range[] = [
  { network: '::', prefix: 128, reason: 'the unspecified address' },
  { network: '::1', prefix: 128, reason: 'a loopback address' },
  { network: '100::', prefix: 64, reason: 'a discard-only address' },
  { network: '2001:db8::', prefix: 32, reason: 'a documentation address' },
  {
    network: 'fc00::',
    prefix: 7,
    reason: 'a unique-local (private) IPv6 address (the EC2 metadata service lives at fd00:ec2::254)',
  },
  { network: 'fe80::', prefix: 10, reason: 'a link-local address' },
  { network: 'fec0::', prefix: 10, reason: 'a site-local address' },
  { network: 'ff00::', prefix: 8, reason: 'a multicast address' },
];

/** One BlockList per range, so a hit can say which range it was. */
type CompiledRange = Range & { readonly type: 'ipv4' | 'ipv6'; readonly list: BlockList };

let compiledRanges: readonly CompiledRange[] | undefined;

/**
 * The ranges as BlockLists, built on the first IP address checked: targets are host names almost
 * always, and a cold start that meets none skips building the 20 lists.
 */
function compiled(): readonly CompiledRange[] {
  compiledRanges ??= [
    ...ipv4Ranges.map((range) => ({ ...range, type: 'ipv4' as const })),
    ...ipv6Ranges.map((range) => ({ ...range, type: 'ipv6' as const })),
  ].map((range) => {
    const list = new BlockList();
    list.addSubnet(range.network, range.prefix, range.type);
    return { ...range, list };
  });
  return compiledRanges;
}

/** The eight 16-bit groups of a valid IPv6 address (dotted-quad tails included). */
function ipv6Groups(address: string): number[] {
  let text = address;
  const tail = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (tail?.[1]) {
    const [a = 0, b = 0, c = 0, d = 0] = tail[1].split('.').map(Number);
    text = `${text.slice(0, -tail[1].length)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = '', rest] = text.split('::');
  const parse = (part: string) => (part === '' ? [] : part.split(':').map((group) => Number.parseInt(group, 16)));
  const before = parse(head);
  const after = rest === undefined ? [] : parse(rest);
  const zeros = rest === undefined ? [] : new Array<number>(8 - before.length - after.length).fill(0);
  return [...before, ...zeros, ...after];
}

const dottedQuad = (high: number, low: number): string =>
  [(high >> 8) & 0xff, high & 0xff, (low >> 8) & 0xff, low & 0xff].join('.');

/**
 * The IPv4 address an IPv6 address carries and would reach, if any: IPv4-mapped `::ffff:a.b.c.d`,
 * IPv4-compatible `::a.b.c.d`, NAT64 `64:ff9b::a.b.c.d` and 6to4 `2002:aabb:ccdd::`.
 */
function embeddedIpv4(address: string): string | undefined {
  const groups = ipv6Groups(address);
  const [g0 = 0, g1 = 0, g2 = 0, g3 = 0, g4 = 0, g5 = 0, g6 = 0, g7 = 0] = groups;
  const upperZero = g0 === 0 && g1 === 0 && g2 === 0 && g3 === 0 && g4 === 0;
  // Mapped: every address, `::ffff:0.0.0.0` included (Linux connects it to this machine).
  if (upperZero && g5 === 0xffff) return dottedQuad(g6, g7);
  // Compatible: all but `::` and `::1`, which the IPv6 ranges name as themselves.
  if (upperZero && g5 === 0 && (g6 !== 0 || g7 > 1)) return dottedQuad(g6, g7);
  if (g0 === 0x64 && g1 === 0xff9b && g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0) return dottedQuad(g6, g7);
  if (g0 === 0x2002) return dottedQuad(g1, g2);
  return undefined;
}

/**
 * Why an IP address (v4 dotted quad or v6, no brackets) is internal, or undefined when it is a
 * public address. For checks on resolved addresses at connect time too.
 */
export function internalAddressReason(address: string): string | undefined {
  const bare = address.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  if (isIPv4(bare)) return compiled().find((range) => range.type === 'ipv4' && range.list.check(bare, 'ipv4'))?.reason;
  if (!isIPv6(bare)) return undefined;
  const embedded = embeddedIpv4(bare);
  if (embedded !== undefined) {
    const reason = internalAddressReason(embedded);
    if (reason !== undefined) return `${reason}, written as IPv6`;
  }
  return compiled().find((range) => range.type === 'ipv6' && range.list.check(bare, 'ipv6'))?.reason;
}

/** Name suffixes that only resolve inside a network (RFC 6761/6762, RFC 8375, cloud-internal zones). */
const internalSuffixes = ['localhost', 'local', 'internal', 'localdomain', 'home.arpa', 'intranet', 'lan'];

/**
 * Why a URL host name (as `URL.hostname` gives it: lower case, IPv6 in brackets) is internal,
 * or undefined when it may be public.
 */
export function internalHostReason(hostname: string): string | undefined {
  // A trailing dot is the same name, fully qualified: `localhost.` is `localhost`.
  const host = hostname.toLowerCase().replace(/\.+$/, '');
  if (host === '') return 'an empty host name';
  const address = host.replace(/^\[|\]$/g, '');
  // Every IPv6 address has a colon and no host name does: asking isIPv6 only then spares each cold
  // start the compilation of Node's IPv6 pattern (about 3 ms), with the same answers.
  if (isIPv4(address) || (address.includes(':') && isIPv6(address))) return internalAddressReason(address);
  if (host === 'localhost' || host.endsWith('.localhost')) return 'a loopback host name';
  if (host === 'metadata' || host === 'instance-data' || host.startsWith('metadata.google.')) {
    return 'a cloud instance metadata host name';
  }
  const suffix = internalSuffixes.find((name) => host === name || host.endsWith(`.${name}`));
  if (suffix !== undefined) return `a host name that only resolves inside a network (*.${suffix})`;
  // A name without a dot resolves through the local DNS search list, i.e. inside the network.
  if (!host.includes('.')) return 'a single-label host name (resolved through the local DNS search list)';
  return undefined;
}

/**
 * Whether a URL host name (as `URL.hostname` gives it) is this machine: `localhost`, 127.0.0.0/8,
 * `::1`, or 127.0.0.0/8 mapped into IPv6. Stricter than "internal" on purpose: NAT64, 6to4 and
 * IPv4-compatible forms of 127.x name other hosts, and a `*.localhost` name depends on the resolver.
 */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.toLowerCase().replace(/\.+$/, '');
  if (host === 'localhost') return true;
  if (isIPv4(host)) return host.startsWith('127.');
  const address = host.replace(/^\[|\]$/g, '');
  if (!isIPv6(address)) return false;
  if (address === '::1') return true;
  // URL writes an IPv4-mapped address in hex: [::ffff:127.0.0.1] is [::ffff:7f00:1].
  const mapped = /^::ffff:([0-9a-f]{1,4}):[0-9a-f]{1,4}$/.exec(address);
  return mapped !== null && Number.parseInt(mapped[1] ?? '0', 16) >>> 8 === 127;
}

/**
 * `value` (a URL, or what was meant as one) as an error message may quote it: user info replaced
 * by `…@`, and everything from the first `?` or `#` by `?…`. That is where a key or token would be
 * put by mistake (`?apiKey=…`), and a message goes to consoles, CI logs and terminals. For an
 * endpoint whose path may be its secret, {@link quotableOrigin}.
 */
export function quotableUrl(value: string): string {
  const cut = value.search(/[?#]/);
  const head = cut < 0 ? value : `${value.slice(0, cut)}?…`;
  return head.replace(/^([a-z][a-z0-9+.-]*:\/\/)[^/?#]*@/i, '$1…@');
}

/**
 * What a refusal may quote of an endpoint URL (a webhook's, a subscriber's): its scheme and host,
 * never its path, query or user info, any of which may hold a credential (a webhook's path is its
 * secret). {@link quotableUrl} keeps the path, for URLs whose path is configuration (an API's
 * base). A value that is not a URL is quoted up to its first `/`, `\`, `?`, `#`, `@` or `:` after
 * the scheme (user info `user:password@` may follow it).
 */
export function quotableOrigin(value: string): string {
  try {
    const url = new URL(value.trim());
    const rest =
      url.pathname.length > 1 || url.search !== '' || url.hash !== '' || url.username !== '' || url.password !== '';
    return `${url.protocol}//${url.host}${rest ? '/…' : ''}`;
  } catch {
    const text = value.trim();
    const scheme = /^[a-z][a-z0-9+.-]*:\/\//i.exec(text)?.[0] ?? '';
    const end = text.slice(scheme.length).search(/[/\\?#@:]/);
    return end < 0 ? text : `${text.slice(0, scheme.length + end)}…`;
  }
}

/**
 * Checks a target URL against the policy: a URL, an accepted scheme, no `user:pass@`, and
 * (unless `allowInternal`) a host that is not internal. Reasons name the host, never the path
 * or query, which may hold a webhook's secret.
 */
export function checkTargetUrl(value: string, options: TargetPolicyOptions = {}): TargetCheck {
  const protocols = options.protocols ?? ['https:'];
  let url: URL;
  try {
    url = new URL(value.trim());
  } catch {
    return { ok: false, reason: 'is not a URL', internal: false };
  }
  if (!protocols.includes(url.protocol)) {
    return { ok: false, reason: `must be an ${protocols.map((p) => `${p}//`).join(' or ')} URL`, internal: false };
  }
  if (url.username !== '' || url.password !== '') {
    return {
      ok: false,
      reason: 'must not carry credentials (user:password@); remove them from the URL',
      internal: false,
    };
  }
  if (options.allowInternal) return { ok: true, url };
  const reason = internalHostReason(url.hostname);
  if (reason !== undefined) {
    return {
      ok: false,
      reason: `the host ${url.hostname} is ${reason}; alerts and requests only go to public internet addresses`,
      internal: true,
    };
  }
  return { ok: true, url };
}

/**
 * {@link checkTargetUrl} that throws: `what` names the field or flag, `override` how to allow an
 * internal target deliberately (shown only when the address is the only problem).
 * @throws TargetAddressError
 */
export function requireTargetUrl(
  value: string,
  what: string,
  options: TargetPolicyOptions & { readonly override?: string } = {},
): URL {
  const check = checkTargetUrl(value, options);
  if (check.ok) return check.url;
  const hint = check.internal && options.override ? ` (for a local test target: ${options.override})` : '';
  throw new TargetAddressError(`${what}: ${check.reason}${hint}`);
}

/** Options of {@link publicAddressLookup}. */
export interface ConnectTargetOptions {
  /**
   * Lets a host name that looks public resolve to an internal address. Only for local receivers
   * and tests: no Lambda function sets it.
   */
  readonly allowInternal?: boolean | undefined;
  /** The resolver the check wraps; `dns.lookup` (what Node connects with), read at each call, by default. */
  readonly lookup?: LookupFunction | undefined;
}

/**
 * The target-address policy at connect time: a `lookup` for `net.connect`/`tls.connect` (undici's
 * `connect` options pass it through) that refuses, with a {@link TargetAddressError}, every answer
 * of a public-looking host name that holds an internal address (loopback, link-local with the
 * metadata service, private…). Node connects to exactly the addresses the lookup returns, so a
 * DNS answer that changes between a check and the connection (DNS rebinding) cannot slip through.
 *
 * What it leaves to the URL check ({@link checkTargetUrl}, with its explicit `allowInternal`
 * override): an IP address written in the URL (Node connects to it without a lookup) and a name
 * that is internal by itself (`localhost`, `*.local`, `*.internal`, single labels), which only
 * the override lets through to here. The error names the host and the address, never the URL's
 * path or query, which may hold a webhook's secret.
 */
export function publicAddressLookup(options: ConnectTargetOptions = {}): LookupFunction {
  const resolve: LookupFunction =
    options.lookup ?? ((hostname, lookupOptions, callback) => dns.lookup(hostname, lookupOptions, callback));
  if (options.allowInternal) return resolve;
  return (hostname, lookupOptions, callback) => {
    resolve(hostname, lookupOptions, (error, address, family) => {
      if (error !== null || internalHostReason(hostname) !== undefined) {
        callback(error, address, family);
        return;
      }
      const answers = typeof address === 'string' ? [address] : address.map((answer) => answer.address);
      for (const answer of answers) {
        const reason = internalAddressReason(answer);
        if (reason === undefined) continue;
        callback(
          new TargetAddressError(
            `the host ${hostname} resolves to ${answer}, ${reason}; alerts and requests only go to public internet addresses`,
          ),
          address,
          family,
        );
        return;
      }
      callback(null, address, family);
    });
  };
}
