/**
 * The console's guard, in front of every request (docs/console.md "Security"):
 *
 * - Loopback only: the server binds 127.0.0.1, and a request whose peer is not loopback or whose
 *   Host header is not this server's own (`127.0.0.1:<port>`, `localhost:<port>`) is refused: a
 *   web page elsewhere cannot reach the console through DNS rebinding.
 * - A one-time token, random per console start, in the URL the command prints (as Jupyter does):
 *   `?token=…` on any page sets an HttpOnly, SameSite=Strict cookie and redirects to the same page
 *   without it (so the token does not stay in history or Referer); without the cookie or the token
 *   nothing is served.
 * - CSRF: every request that is not GET or HEAD must carry the CSRF token (a form field `_csrf` or
 *   the header `X-CSRF-Token`), derived from the console token, and an Origin, when sent, of this
 *   server. GET never changes anything.
 * - Headers: a strict Content-Security-Policy (scripts and styles from this server only, no inline
 *   script, no framing), no referrer, no caching, no MIME sniffing.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Context, MiddlewareHandler } from 'hono';

/** The console's secrets for one start. */
export interface ConsoleKeys {
  /** In the URL the command prints; also the cookie's value. */
  readonly token: string;
  /** In every form and in a meta tag for the page's script. */
  readonly csrf: string;
}

/** New keys: 32 random bytes of token, the CSRF token an HMAC of it. */
export function newKeys(): ConsoleKeys {
  const token = randomBytes(32).toString('base64url');
  return { token, csrf: createHmac('sha256', token).update('news-alerts console csrf').digest('base64url') };
}

export const cookieName = 'news_alerts_console';

/** Equal strings, compared in constant time. */
export function sameSecret(given: string | undefined, expected: string): boolean {
  if (given === undefined) return false;
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** The strict Content-Security-Policy of every response. */
export const contentSecurityPolicy = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
].join('; ');

const loopbackPeers = new Set(['127.0.0.1', '::1', '::ffff:127.0.0.1']);

function peerOf(c: Context): string | undefined {
  const incoming = (c.env as { incoming?: { socket?: { remoteAddress?: string } } } | undefined)?.incoming;
  return incoming?.socket?.remoteAddress;
}

function cookieOf(c: Context): string | undefined {
  const header = c.req.header('cookie') ?? '';
  for (const part of header.split(';')) {
    const [name, ...value] = part.trim().split('=');
    if (name === cookieName) return value.join('=');
  }
  return undefined;
}

function refuse(c: Context, status: 400 | 401 | 403, message: string) {
  return c.text(`${message}\n`, status);
}

/** The guard middleware (see the module comment); `port()` is the port the server listens on. */
export function guard(keys: ConsoleKeys, port: () => number): MiddlewareHandler {
  return async (c, next) => {
    c.header('Content-Security-Policy', contentSecurityPolicy);
    c.header('Referrer-Policy', 'no-referrer');
    c.header('X-Content-Type-Options', 'nosniff');
    c.header('X-Frame-Options', 'DENY');
    c.header('Cache-Control', 'no-store');
    const peer = peerOf(c);
    if (peer !== undefined && !loopbackPeers.has(peer)) return refuse(c, 403, 'the console answers this machine only');
    const host = c.req.header('host') ?? '';
    // On port 80 browsers and curl send the host without the port (HTTP's default), in Host and Origin alike.
    const allowed = ['127.0.0.1', 'localhost'].flatMap((name) =>
      port() === 80 ? [name, `${name}:80`] : [`${name}:${port()}`],
    );
    if (!allowed.includes(host.toLowerCase())) {
      return refuse(c, 403, 'unexpected Host header: open the console at the address it printed');
    }
    const url = new URL(c.req.url);
    const fromQuery = url.searchParams.get('token') ?? undefined;
    if (fromQuery !== undefined) {
      if (!sameSecret(fromQuery, keys.token))
        return refuse(c, 401, 'wrong console token: use the URL the console printed');
      url.searchParams.delete('token');
      c.header('Set-Cookie', `${cookieName}=${keys.token}; HttpOnly; SameSite=Strict; Path=/`);
      return c.redirect(`${url.pathname}${url.search}`, 303);
    }
    if (!sameSecret(cookieOf(c), keys.token)) {
      return refuse(c, 401, 'open the console with the URL it printed (it carries a one-time token)');
    }
    if (c.req.method !== 'GET' && c.req.method !== 'HEAD') {
      const origin = c.req.header('origin');
      if (origin !== undefined && origin !== 'null' && !allowed.some((entry) => origin === `http://${entry}`)) {
        return refuse(c, 403, 'cross-origin request refused');
      }
      let given = c.req.header('x-csrf-token');
      if (given === undefined) {
        const type = c.req.header('content-type') ?? '';
        if (type.includes('form')) {
          const body = await c.req.parseBody();
          given = typeof body._csrf === 'string' ? body._csrf : undefined;
        }
      }
      if (!sameSecret(given, keys.csrf))
        return refuse(c, 403, 'missing or wrong CSRF token: reload the page and try again');
    }
    await next();
    // Handlers build their own responses: the headers go on each of them too.
    c.res.headers.set('Content-Security-Policy', contentSecurityPolicy);
    c.res.headers.set('Referrer-Policy', 'no-referrer');
    c.res.headers.set('X-Content-Type-Options', 'nosniff');
    c.res.headers.set('X-Frame-Options', 'DENY');
    c.res.headers.set('Cache-Control', 'no-store');
  };
}
