/**
 * The preference endpoint's core (functions/core/email/preferences.ts) with a store that counts
 * writes: no GET, HEAD or unknown method ever writes, whatever the path, query and headers; the
 * RFC 8058 body is recognised in both form encodings; the language comes from `?lang`, then the
 * subscriber, the audience and Accept-Language; a `mailto:` unsubscribe acts only on a verified
 * token. The SES sender adapter sorts SES's errors into retry-later and refused-for-good. Every
 * language of the email words is complete.
 */
import { SESv2ServiceException, SendEmailCommand } from '@aws-sdk/client-sesv2';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { SesEmailSender } from '#aws/email/ses-sender';
import { createLinkMaker } from '#core/email/links';
import { allEmailWords, emailWordsFor } from '#core/email/messages/catalog';
import { renderPreferencePage } from '#core/email/page';
import { EmailRejectedError, EmailThrottledError, type SubscriberStore } from '#core/email/ports';
import {
  handleMailtoUnsubscribe,
  handlePreferenceRequest,
  type PreferenceDeps,
  parseForm,
} from '#core/email/preferences';
import type { Membership, SubscriberProfile } from '#core/email/subscriber';
import { dayOf, type LinkKeys } from '#core/email/tokens';
import { type Audience, AudienceSchema } from '#core/model';
import { silentLog } from '#core/ports';

const NOW = Date.UTC(2026, 10, 22, 9);
const keys: LinkKeys = {
  current: async () => ({ version: '1', key: Buffer.alloc(32, 7) }),
  byVersion: async (version) => (version === '1' ? { version: '1', key: Buffer.alloc(32, 7) } : undefined),
};
const profile: SubscriberProfile = {
  subscriberId: 'abcdef012345',
  address: 'kim@example.com',
  createdAt: 0,
  softBounces: 0,
  locale: 'ja-JP',
};
const membership: Membership = {
  subscriberId: profile.subscriberId,
  audienceId: 'desk',
  state: 'confirmed',
  preference: 'immediate',
  createdAt: 0,
  source: 'added',
};

/** A store with one subscriber on one audience that counts every write. */
function countingStore(): { store: SubscriberStore; writes: string[] } {
  const writes: string[] = [];
  let current = membership;
  const store = {
    profile: async (id: string) => (id === profile.subscriberId ? profile : undefined),
    memberships: async (id: string) => (id === profile.subscriberId ? [current] : []),
    membership: async (id: string, audienceId: string) =>
      id === profile.subscriberId && audienceId === 'desk' ? current : undefined,
    saveMembership: async (next: Membership) => {
      writes.push(`membership:${next.state}`);
      current = next;
      return true;
    },
  } as unknown as SubscriberStore;
  return { store, writes };
}

const audience: Audience = AudienceSchema.parse({
  audienceId: 'desk',
  name: 'Markets desk',
  topicArn: 'arn:aws:sns:us-east-1:123456789012:desk',
  locale: 'ko-KR',
});

function deps(store: SubscriberStore, now = NOW): PreferenceDeps {
  return {
    keys,
    linkDays: 180,
    store,
    audiences: { get: async (id) => (id === 'desk' ? audience : undefined) },
    links: createLinkMaker({ keys, baseUrl: 'https://prefs.example.com', now: () => now }),
    log: silentLog,
    now: () => now,
  };
}

const tokenOf = async (store: SubscriberStore) => {
  const url = await deps(store).links.manage(profile.subscriberId, 'desk');
  return url.slice(url.lastIndexOf('/') + 1);
};

describe('the preference endpoint', () => {
  it('never writes on GET, HEAD or another non-POST method, whatever the path, query and headers', async () => {
    const { store, writes } = countingStore();
    const token = await tokenOf(store);
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom('GET', 'HEAD', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'get'),
        fc.constantFrom('p', 'u', 'c', 'x', ''),
        fc.dictionary(
          fc.constantFrom('lang', 'done', 'problem', 'action', 'List-Unsubscribe'),
          fc.string({ maxLength: 30 }),
        ),
        fc.string({ maxLength: 200 }),
        fc.option(fc.string({ maxLength: 60 }), { nil: undefined }),
        async (method, kind, query, body, acceptLanguage) => {
          const response = await handlePreferenceRequest(
            {
              method,
              path: `/base/${kind}/${token}`,
              query,
              body,
              contentType: 'application/x-www-form-urlencoded',
              acceptLanguage,
            },
            deps(store),
          );
          expect(response.status).toBeLessThan(500);
          expect(writes).toEqual([]);
        },
      ),
      { numRuns: 200 },
    );
  });

  it('counts and logs a form action it does not know as `other`: no request makes a metric of its own, nor a 500', async () => {
    const known = ['unsubscribe-all', 'unsubscribe', 'pause', 'resume', 'preference'];
    const { store } = countingStore();
    const token = await tokenOf(store);
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(fc.constantFrom(...known), fc.string({ maxLength: 300 }), fc.constant('z'.repeat(300))),
        async (action) => {
          const counted: string[] = [];
          const logged: unknown[] = [];
          const log = { ...silentLog, info: (_message: string, fields?: unknown) => logged.push(fields) };
          const response = await handlePreferenceRequest(
            {
              method: 'POST',
              path: `/p/${token}`,
              query: {},
              body: `action=${encodeURIComponent(action)}&days=3&preference=digest`,
              contentType: 'application/x-www-form-urlencoded',
            },
            { ...deps(store), log, count: (outcome) => counted.push(outcome) },
          );
          expect(response.status).toBeLessThan(500);
          const expected = known.includes(action) ? action : 'other';
          expect(counted).toEqual([`form-${expected}`]);
          expect(logged).toContainEqual(expect.objectContaining({ action: expected }));
        },
      ),
      { numRuns: 100 },
    );
  });

  it('acts on the RFC 8058 body in either form encoding, and answers a replay the same way', async () => {
    for (const [contentType, body] of [
      ['application/x-www-form-urlencoded', 'List-Unsubscribe=One-Click'],
      [
        'multipart/form-data; boundary=xyz',
        '--xyz\r\nContent-Disposition: form-data; name="List-Unsubscribe"\r\n\r\nOne-Click\r\n--xyz--\r\n',
      ],
    ] as const) {
      const { store, writes } = countingStore();
      const path = `/u/${await tokenOf(store)}`;
      const first = await handlePreferenceRequest({ method: 'POST', path, query: {}, body, contentType }, deps(store));
      const second = await handlePreferenceRequest({ method: 'POST', path, query: {}, body, contentType }, deps(store));
      expect(first.status).toBe(200);
      expect(second).toEqual(first);
      expect(writes).toEqual(['membership:unsubscribed']);
    }
    expect(parseForm('a=1&b=two', undefined).get('b')).toBe('two');
  });

  it('speaks ?lang first, then the subscriber, the audience, Accept-Language', async () => {
    const { store } = countingStore();
    const path = `/p/${await tokenOf(store)}`;
    const languageOf = async (query: Record<string, string>, acceptLanguage?: string) =>
      (await handlePreferenceRequest({ method: 'GET', path, query, body: '', acceptLanguage }, deps(store))).headers[
        'Content-Language'
      ];
    expect(await languageOf({ lang: 'ko' })).toBe('ko');
    // The subscriber's own locale (ja-JP) wins over the audience's (ko-KR) and the header.
    expect(await languageOf({}, 'en-US,en;q=0.9')).toBe('ja');
    // Without a subscriber the error page follows the header.
    const invalid = await handlePreferenceRequest(
      { method: 'GET', path: '/p/v1.1.bm9uZQ.aaaa', query: {}, body: '', acceptLanguage: 'fr, ko;q=0.8' },
      deps(store),
    );
    expect(invalid.status).toBe(404);
    expect(invalid.headers['Content-Language']).toBe('ko');
    expect(invalid.body).toContain(emailWordsFor('ko').page.invalidTitle);
  });

  it('a confirmation link opened after unsubscribing says so at once instead of offering a Confirm that fails', async () => {
    const { store, writes } = countingStore();
    const url = await deps(store).links.confirm(profile.subscriberId, 'desk');
    const path = new URL(url).pathname;
    const offered = await handlePreferenceRequest({ method: 'GET', path, query: {}, body: '' }, deps(store));
    expect(offered.status).toBe(200);
    expect(offered.body).toContain('name="action" value="confirm"');
    await store.saveMembership({ ...membership, state: 'unsubscribed' });
    const opened = await handlePreferenceRequest({ method: 'GET', path, query: {}, body: '' }, deps(store));
    expect(opened.status).toBe(303);
    expect(opened.headers.Location).toMatch(/^\.\.\/p\/[^?]+\?problem=unsubscribed/);
    expect(writes).toEqual(['membership:unsubscribed']);
  });

  it('shows the notice a change redirected to only while it is still true: a refresh or bookmark later does not contradict the list', async () => {
    const { store } = countingStore();
    const path = `/p/${await tokenOf(store)}`;
    const page = async (done: string) =>
      (await handlePreferenceRequest({ method: 'GET', path, query: { done, lang: 'en' }, body: '' }, deps(store))).body;
    const words = emailWordsFor('en').page.notices;
    // Subscribed, immediate, not paused: "unsubscribed", "paused" and "digest" would all be false.
    expect(await page('unsubscribed')).not.toContain(words.unsubscribed('Markets desk'));
    expect(await page('unsubscribed-all')).not.toContain(words.unsubscribedAll);
    expect(await page('digest')).not.toContain(words.digest);
    expect(await page('immediate')).toContain(words.immediate);
    expect(await page('resumed')).toContain(words.resumed);
    expect(await page('confirmed')).toContain(words.confirmed('Markets desk'));
    // Once unsubscribed, the same link says so.
    await store.saveMembership({ ...membership, state: 'unsubscribed' });
    expect(await page('unsubscribed')).toContain(words.unsubscribed('Markets desk'));
    expect(await page('immediate')).not.toContain(words.immediate);
  });

  it('states the daily digest time the delivery keeps: past quiet hours, in the audience’s named zone', async () => {
    const { store } = countingStore();
    const tokyo = AudienceSchema.parse({
      ...audience,
      timeZone: 'Asia/Tokyo',
      digestTimes: ['07:30'],
      quietHours: { start: '22:00', end: '09:00' },
    });
    const response = await handlePreferenceRequest(
      { method: 'GET', path: `/p/${await tokenOf(store)}`, query: { lang: 'en' }, body: '' },
      { ...deps(store), audiences: { get: async (id) => (id === 'desk' ? tokyo : undefined) } },
    );
    expect(response.status).toBe(200);
    // 07:30 falls in the quiet hours, so the digest goes at their end, 09:00 Tokyo time.
    expect(response.body).toContain('One daily digest (around 09:00, Asia/Tokyo time)');
    expect(response.body).not.toContain('07:30');
  });

  it('refuses a frequency the form does not offer with words about the frequency, changing nothing', async () => {
    const { store, writes } = countingStore();
    const path = `/p/${await tokenOf(store)}`;
    for (const body of ['action=preference&preference=weekly', 'action=preference']) {
      const posted = await handlePreferenceRequest(
        { method: 'POST', path, query: {}, body, contentType: 'application/x-www-form-urlencoded' },
        deps(store),
      );
      expect(posted.status).toBe(303);
      const location = posted.headers.Location ?? '';
      expect(location).toContain('problem=bad-preference');
      const page = await handlePreferenceRequest(
        { method: 'GET', path, query: Object.fromEntries(new URL(location, 'https://x').searchParams), body: '' },
        deps(store),
      );
      expect(page.body).toContain(emailWordsFor('ja').page.refused.badPreference);
    }
    expect(writes).toEqual([]);
  });

  it('sends no referrer, no cache, no frame and no script with any page', async () => {
    const { store } = countingStore();
    const response = await handlePreferenceRequest(
      { method: 'GET', path: `/p/${await tokenOf(store)}`, query: {}, body: '' },
      deps(store),
    );
    expect(response.headers).toMatchObject({ 'Cache-Control': 'no-store', 'Referrer-Policy': 'no-referrer' });
    expect(response.headers['Content-Security-Policy']).toContain("default-src 'none'");
    expect(response.headers['Content-Security-Policy']).toContain("frame-ancestors 'none'");
    expect(response.body).not.toContain('<script');
  });

  it('refuses a body larger than a form ever is, changing nothing', async () => {
    const { store, writes } = countingStore();
    const response = await handlePreferenceRequest(
      {
        method: 'POST',
        path: `/u/${await tokenOf(store)}`,
        query: {},
        body: `List-Unsubscribe=One-Click&pad=${'x'.repeat(5000)}`,
      },
      deps(store),
    );
    expect(response.status).toBe(413);
    expect(writes).toEqual([]);
  });

  it('sends a page asked with a trailing slash to the page without it, so its forms post to the token', async () => {
    const { store, writes } = countingStore();
    const token = await tokenOf(store);
    for (const [method, kind, slashes] of [
      ['GET', 'p', '/'],
      ['POST', 'u', '/'],
      ['GET', 'p', '//'],
    ] as const) {
      const path = `/base/${kind}/${token}${slashes}`;
      const response = await handlePreferenceRequest(
        { method, path, query: { lang: 'ko' }, body: 'List-Unsubscribe=One-Click' },
        deps(store),
      );
      expect(response.status).toBe(308);
      // Relative to the path asked: /base/<kind>/<token>, with the query.
      expect(new URL(response.headers.Location ?? '', `https://x.example${path}`).pathname).toBe(
        `/base/${kind}/${token}`,
      );
      expect(response.headers.Location).toContain('?lang=ko');
    }
    expect(writes).toEqual([]);
  });

  it('takes a mailto unsubscribe only with a token that verifies', async () => {
    const { store, writes } = countingStore();
    const token = await tokenOf(store);
    expect(await handleMailtoUnsubscribe('please unsubscribe me', deps(store))).toBe(false);
    expect(await handleMailtoUnsubscribe(`unsubscribe ${token.slice(0, -2)}AA`, deps(store))).toBe(false);
    expect(await handleMailtoUnsubscribe(`unsubscribe ${token}`, deps(store, NOW + 181 * 86_400_000))).toBe(false);
    expect(writes).toEqual([]);
    expect(await handleMailtoUnsubscribe(`Re: unsubscribe ${token}`, deps(store))).toBe(true);
    expect(writes).toEqual(['membership:unsubscribed']);
    expect(dayOf(NOW)).toBeGreaterThan(0);
  });
});

describe('the SES sender', () => {
  const failingWith = (name: string) => {
    const client = {
      send: async (command: unknown) => {
        expect(command).toBeInstanceOf(SendEmailCommand);
        throw new SESv2ServiceException({ name, $fault: 'client', $metadata: {}, message: `${name}: kim@example.com` });
      },
    };
    return new SesEmailSender({ client: client as never, configurationSetName: 'set' });
  };
  const email = {
    from: 'alerts@alerts.example.com',
    to: 'kim@example.com',
    raw: new Uint8Array([1]),
    tags: { subscriber: 'abc' },
  };

  it.each([
    'TooManyRequestsException',
    'LimitExceededException',
    'SendingPausedException',
    'AccountSuspendedException',
  ])('%s: nothing sent, try again later', async (name) => {
    await expect(failingWith(name).send(email)).rejects.toBeInstanceOf(EmailThrottledError);
  });

  it.each(['MessageRejected', 'BadRequestException'])(
    '%s: refused for good, without the address in the message',
    async (name) => {
      const error = await failingWith(name)
        .send(email)
        .catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(EmailRejectedError);
      expect((error as Error).message).not.toContain('kim@example.com');
    },
  );
});

describe('email words', () => {
  it('every language has every entry, filled, in its own words', () => {
    const english = emailWordsFor('en');
    const keysOf = (value: unknown, prefix = ''): string[] =>
      typeof value === 'object' && value !== null
        ? Object.entries(value).flatMap(([key, inner]) => keysOf(inner, `${prefix}${key}.`))
        : [prefix];
    for (const words of allEmailWords) {
      expect(keysOf(words).sort()).toEqual(keysOf(english).sort());
      const render = (value: unknown): string =>
        typeof value === 'function' ? String((value as (...args: unknown[]) => unknown)('X', 2, 'Y')) : String(value);
      for (const section of ['mail', 'confirm', 'page'] as const) {
        for (const [key, value] of Object.entries(words[section])) {
          if (typeof value === 'object') continue;
          expect(render(value).trim().length, `${words.language}.${section}.${key}`).toBeGreaterThan(0);
          if (words.language !== 'en' && key !== 'manageLink')
            expect(render(value), `${words.language}.${section}.${key}`).not.toBe(
              render((english[section] as Record<string, unknown>)[key]),
            );
        }
      }
    }
  });
});

describe('the preference page of a membership not confirmed yet', () => {
  it.each(['en', 'ko', 'ja'] as const)(
    'says in %s what to do under its settings heading, and offers no settings',
    (language) => {
      const row = {
        audienceId: 'desk',
        label: 'Markets desk',
        state: 'pending' as const,
        preference: 'immediate' as const,
      };
      const html = renderPreferencePage(
        {
          language,
          maskedAddress: 'k**@example.com',
          suppressed: false,
          memberships: [{ ...row, current: true }],
          current: { ...row, current: true, digestTime: { time: '08:00', zone: 'UTC' } },
        },
        '/p/token',
      );
      const { page } = emailWordsFor(language);
      const heading = `<h2>${page.manageHeading('Markets desk')}</h2>`;
      expect(html).toContain(`${heading}\n<p>${page.pendingNote}</p>`);
      expect(html).not.toContain('name="days"');
      expect(html).not.toContain('name="preference"');
    },
  );
});
