/**
 * The preference endpoint: what a subscriber's links do. The Lambda handler
 * (functions/preferences/handler.ts) and the sandbox's loopback HTTPS server both call
 * {@link handlePreferenceRequest} with a plain request and write back the plain response. Owns
 * these guarantees (test/unit/email-preferences.test.ts, test/e2e/email-browser.test.ts):
 *
 * - **No GET changes anything.** Mail scanners and link previews follow links: a GET only reads
 *   and renders. Only a POST changes state: the page's forms, and the RFC 8058 one-click POST
 *   (`List-Unsubscribe=One-Click`), which unsubscribes from the link's audience at once.
 * - **A link that does not verify changes nothing** and gets one plain error page (404), whatever
 *   the reason: forged, altered, expired, revoked (its key version removed), meant for another
 *   purpose, or for a subscriber who no longer exists.
 * - **Repeats are harmless.** Every change is idempotent (subscriber.ts `applyChange`): a replayed
 *   one-click POST answers the same and writes nothing.
 * - **Nothing leaks.** Pages show the address masked; responses are `no-store`, never sent with a
 *   referrer (the token is in the URL), framed by nobody, and run no script.
 *
 * Routes (the last two path segments, so any base path works): `p/<token>` the preference page;
 * `u/<token>` the one-click unsubscribe (GET shows a button); `c/<token>` the confirmation.
 */
import { canonicalLocale, isShipped, languageOf, type ShippedLocale } from '../locale.ts';
import type { Audience } from '../model.ts';
import type { Log } from '../ports.ts';
import { formatInZone } from '../render.ts';
import { dailyDigestAt } from './daily-digest.ts';
import { emailWordsFor } from './messages/catalog.ts';
import {
  type MembershipRow,
  renderConfirmPage,
  renderInvalidLinkPage,
  renderOneClickPage,
  renderPreferencePage,
} from './page.ts';
import type { AudienceDirectory, LinkMaker, SubscriberStore } from './ports.ts';
import {
  applyChange,
  type ChangeOutcome,
  isPaused,
  MAX_PAUSE_DAYS,
  type Membership,
  maskAddress,
  type PreferenceChange,
  type SubscriberProfile,
} from './subscriber.ts';
import { dayOf, type LinkKeys, type LinkPurpose, verifyLink } from './tokens.ts';

/** A request as the endpoint sees it. */
export interface EndpointRequest {
  readonly method: string;
  /** The request path (any base path before the route is ignored). */
  readonly path: string;
  readonly query: Readonly<Record<string, string | undefined>>;
  /** The body as text (forms are small; larger bodies are refused). */
  readonly body: string;
  readonly contentType?: string | undefined;
  readonly acceptLanguage?: string | undefined;
}

/** A response: status, headers and an HTML or text body. */
export interface EndpointResponse {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

/** What the endpoint works with. */
export interface PreferenceDeps {
  readonly keys: LinkKeys;
  /** How many days a link verifies after the day it was made. */
  readonly linkDays: number;
  readonly store: SubscriberStore;
  readonly audiences: AudienceDirectory;
  readonly links: LinkMaker;
  readonly defaultLocale?: string | undefined;
  readonly log: Log;
  readonly now: () => number;
  /** Counts each outcome (`page`, `one-click`, `invalid-link`...) for metrics. */
  readonly count?: ((outcome: PreferenceOutcome) => void) | undefined;
}

/** The page form's actions. */
const FORM_ACTIONS = ['unsubscribe-all', 'unsubscribe', 'pause', 'resume', 'preference'] as const;
type FormAction = (typeof FORM_ACTIONS)[number];

/**
 * What the endpoint counts, each a metric of its own: a closed set, so that no request can make a
 * metric (each costs money; a name of more than 255 characters fails the request with a 500).
 */
export type PreferenceOutcome =
  | 'not-found'
  | 'too-large'
  | 'invalid-link'
  | 'confirm-page'
  | 'confirm'
  | 'one-click-page'
  | 'one-click'
  | 'unsubscribe'
  | 'mailto'
  | 'page'
  | `form-${FormAction | 'none' | 'other'}`;

/** The form's action as counted and logged: one of the page's own, `none`, or `other` for anything a caller made up. */
const formActionOf = (form: URLSearchParams): FormAction | 'none' | 'other' => {
  const action = form.get('action');
  if (action === null) return 'none';
  return FORM_ACTIONS.find((known) => known === action) ?? 'other';
};

/** Longest body a form may have; RFC 8058 bodies are 26 bytes. */
export const MAX_BODY_BYTES = 4096;
/** The RFC 8058 one-click body. */
const ONE_CLICK = { name: 'List-Unsubscribe', value: 'One-Click' } as const;

const SECURITY_HEADERS = {
  'Cache-Control': 'no-store',
  'Referrer-Policy': 'no-referrer',
  'X-Content-Type-Options': 'nosniff',
  'X-Robots-Tag': 'noindex',
  'Content-Security-Policy':
    "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
} as const;

const html = (status: number, body: string, language: ShippedLocale): EndpointResponse => ({
  status,
  headers: { 'Content-Type': 'text/html; charset=utf-8', 'Content-Language': language, ...SECURITY_HEADERS },
  body,
});
const plain = (status: number, body: string, language: ShippedLocale): EndpointResponse => ({
  status,
  headers: { 'Content-Type': 'text/plain; charset=utf-8', 'Content-Language': language, ...SECURITY_HEADERS },
  body: `${body}\n`,
});
const redirect = (location: string): EndpointResponse => ({
  status: 303,
  headers: { Location: location, 'Content-Type': 'text/plain; charset=utf-8', ...SECURITY_HEADERS },
  body: '',
});

/** Notices a redirect after a POST can ask the page to show (`?done=`). */
const NOTICES = [
  'unsubscribed',
  'unsubscribed-all',
  'paused',
  'resumed',
  'immediate',
  'digest',
  'confirmed',
  'unchanged',
] as const;
type Notice = (typeof NOTICES)[number];
const PROBLEMS = ['unsubscribed', 'not-confirmed', 'bad-days', 'bad-preference'] as const;
type Problem = (typeof PROBLEMS)[number];

/** Handles one request. Never throws for bad input; storage failures propagate (a 500 from the handler). */
export async function handlePreferenceRequest(
  request: EndpointRequest,
  deps: PreferenceDeps,
): Promise<EndpointResponse> {
  const count = deps.count ?? (() => {});
  const route = routeOf(request.path);
  const queryLanguage = shippedLanguage(request.query.lang);
  const fallbackLanguage =
    queryLanguage ?? languageFromHeader(request.acceptLanguage) ?? shippedLanguage(deps.defaultLocale) ?? 'en';
  if (route === undefined) {
    count('not-found');
    return html(404, renderInvalidLinkPage(fallbackLanguage), fallbackLanguage);
  }
  // `/p/<token>/` (a link rewriter's trailing slash): the page's forms post to the token relative
  // to the page, which would then be `/p/<token>/<token>`, an invalid link. The page without the
  // slash instead (308 keeps a POST a POST, with its body).
  if (request.path.endsWith('/')) {
    const query = new URLSearchParams(
      Object.entries(request.query).filter((entry): entry is [string, string] => entry[1] !== undefined),
    ).toString();
    // One `../` per trailing slash: `/p/<token>//` is two levels below the page.
    const up = '../'.repeat((/\/+$/.exec(request.path)?.[0] ?? '/').length);
    return {
      ...redirect(`${up}${encodeURIComponent(route.token)}${query === '' ? '' : `?${query}`}`),
      status: 308,
    };
  }
  const method = request.method.toUpperCase();
  if (method !== 'GET' && method !== 'HEAD' && method !== 'POST') {
    return {
      ...plain(405, 'Method not allowed', fallbackLanguage),
      headers: { ...plain(405, '', fallbackLanguage).headers, Allow: 'GET, POST' },
    };
  }
  if (Buffer.byteLength(request.body, 'utf8') > MAX_BODY_BYTES) {
    count('too-large');
    return plain(413, 'Request body too large', fallbackLanguage);
  }
  const purpose: LinkPurpose = route.kind === 'c' ? 'confirm' : 'manage';
  const verified = await verifyLink(route.token, deps.keys, {
    today: dayOf(deps.now()),
    validDays: deps.linkDays,
    purpose,
  });
  if (!verified.ok) {
    count('invalid-link');
    deps.log.info('a link did not verify; nothing changed', { route: route.kind, failure: verified.failure, method });
    return html(404, renderInvalidLinkPage(fallbackLanguage), fallbackLanguage);
  }
  const { subscriberId, audienceId } = verified.claims;
  const profile = await deps.store.profile(subscriberId);
  if (profile === undefined) {
    count('invalid-link');
    deps.log.info('a link names a subscriber that no longer exists; nothing changed', { route: route.kind, method });
    return html(404, renderInvalidLinkPage(fallbackLanguage), fallbackLanguage);
  }
  const memberships = await deps.store.memberships(subscriberId);
  const audience = await deps.audiences.get(audienceId);
  const language =
    queryLanguage ??
    shippedLanguage(profile.locale) ??
    shippedLanguage(audience?.locale) ??
    languageFromHeader(request.acceptLanguage) ??
    shippedLanguage(deps.defaultLocale) ??
    'en';
  const langQuery = queryLanguage === undefined ? '' : `lang=${queryLanguage}`;
  const withQuery = (base: string, extra: string) => {
    const parts = [extra, langQuery].filter((part) => part !== '');
    return parts.length === 0 ? base : `${base}?${parts.join('&')}`;
  };
  const self = withQuery(route.token, '');
  const context = { route: route.kind, subscriberId, audienceId, method };
  const current = memberships.find((membership) => membership.audienceId === audienceId);
  const label = audience?.name ?? audienceId;

  if (route.kind === 'c') {
    const managePage = async () => {
      const manage = await deps.links.manage(subscriberId, audienceId);
      return `../p/${manage.slice(manage.lastIndexOf('/') + 1)}`;
    };
    if (current === undefined) {
      count('invalid-link');
      return html(404, renderInvalidLinkPage(language), language);
    }
    if (method !== 'POST') {
      count('confirm-page');
      // Unsubscribed since the link was sent: confirming cannot start alerts, so the page says so
      // now instead of offering a button that fails (nothing is written on a GET).
      if (current.state === 'unsubscribed') return redirect(withQuery(await managePage(), 'problem=unsubscribed'));
      return html(200, renderConfirmPage(language, label, self), language);
    }
    const outcome = await change(deps, current, { kind: 'confirm' });
    count('confirm');
    deps.log.info('confirmation', { ...context, changed: outcome.ok && outcome.changed, ok: outcome.ok });
    return redirect(
      withQuery(
        await managePage(),
        outcome.ok ? (outcome.changed ? 'done=confirmed' : 'done=unchanged') : `problem=${problemOf(outcome)}`,
      ),
    );
  }

  if (route.kind === 'u') {
    if (method !== 'POST') {
      count('one-click-page');
      return html(200, renderOneClickPage(language, label, self, withQuery(`../p/${route.token}`, '')), language);
    }
    const form = parseForm(request.body, request.contentType);
    const oneClick = form.get(ONE_CLICK.name) === ONE_CLICK.value;
    const outcome = current === undefined ? undefined : await change(deps, current, { kind: 'unsubscribe' });
    count(oneClick ? 'one-click' : 'unsubscribe');
    deps.log.info('unsubscribe', { ...context, oneClick, changed: outcome?.ok === true && outcome.changed });
    if (oneClick) return plain(200, emailWordsFor(language).page.oneClickDone, language);
    return redirect(
      withQuery(`../p/${route.token}`, outcome?.ok && !outcome.changed ? 'done=unchanged' : 'done=unsubscribed'),
    );
  }

  // The preference page.
  if (method === 'POST') {
    const form = parseForm(request.body, request.contentType);
    if (form.get(ONE_CLICK.name) === ONE_CLICK.value) {
      // A one-click POST sent to the page URL (some clients use the last link): same effect.
      if (current !== undefined) await change(deps, current, { kind: 'unsubscribe' });
      count('one-click');
      return plain(200, emailWordsFor(language).page.oneClickDone, language);
    }
    const result = await applyForm(form, deps, memberships, current);
    const action = formActionOf(form);
    count(`form-${action}`);
    deps.log.info('preferences changed', {
      ...context,
      action,
      result: result.done ?? result.problem,
    });
    return redirect(
      withQuery(route.token, result.done !== undefined ? `done=${result.done}` : `problem=${result.problem}`),
    );
  }
  count('page');
  const notice = NOTICES.find((name) => name === request.query.done);
  const problem = PROBLEMS.find((name) => name === request.query.problem);
  return html(
    200,
    await preferencePage({ deps, profile, memberships, audienceId, language, notice, problem, action: self }),
    language,
  );
}

/** The membership kept changing under a change made on the page; nothing of it was written. */
export class MembershipChangedError extends Error {
  constructor(attempts: number) {
    super(`the membership changed ${attempts} times while a change to it was being saved; nothing was written`);
    this.name = 'MembershipChangedError';
  }
}

const CHANGE_ATTEMPTS = 5;

/**
 * Applies a change to a membership and saves it when it did something, only over the membership
 * it was decided on: when another request changed it meanwhile (a one-click unsubscribe while the
 * page's form was posted), the change is decided again on what is there now. An unsubscribe is
 * final: a later preference or pause change then finds it and is refused.
 */
async function change(deps: PreferenceDeps, membership: Membership, request: PreferenceChange): Promise<ChangeOutcome> {
  let read = membership;
  for (let attempt = 1; ; attempt += 1) {
    const outcome = applyChange(read, request, deps.now());
    if (!outcome.ok || !outcome.changed) return outcome;
    if (await deps.store.saveMembership(outcome.membership, { expected: read })) return outcome;
    const now = await deps.store.membership(read.subscriberId, read.audienceId);
    // The subscriber was deleted meanwhile: nothing left to change.
    if (now === undefined) return outcome;
    if (attempt >= CHANGE_ATTEMPTS) throw new MembershipChangedError(attempt);
    read = now;
  }
}

const problemOf = (outcome: ChangeOutcome): Problem =>
  outcome.ok
    ? 'unsubscribed'
    : outcome.reason === 'bad-days'
      ? 'bad-days'
      : outcome.reason === 'not-confirmed'
        ? 'not-confirmed'
        : 'unsubscribed';

async function applyForm(
  form: URLSearchParams,
  deps: PreferenceDeps,
  memberships: readonly Membership[],
  current: Membership | undefined,
): Promise<{ done?: Notice; problem?: Problem }> {
  const action = form.get('action');
  if (action === 'unsubscribe-all') {
    let changed = false;
    for (const membership of memberships) {
      const outcome = await change(deps, membership, { kind: 'unsubscribe' });
      changed ||= outcome.ok && outcome.changed;
    }
    return { done: changed ? 'unsubscribed-all' : 'unchanged' };
  }
  if (current === undefined) return { problem: 'unsubscribed' };
  let request: PreferenceChange;
  let done: Notice;
  switch (action) {
    case 'unsubscribe':
      request = { kind: 'unsubscribe' };
      done = 'unsubscribed';
      break;
    case 'pause': {
      const text = form.get('days') ?? '';
      const days = /^\d{1,3}$/.test(text.trim()) ? Number(text.trim()) : Number.NaN;
      request = { kind: 'pause', days };
      done = 'paused';
      break;
    }
    case 'resume':
      request = { kind: 'resume' };
      done = 'resumed';
      break;
    case 'preference': {
      const preference = form.get('preference');
      if (preference !== 'immediate' && preference !== 'digest') return { problem: 'bad-preference' };
      request = { kind: 'preference', preference };
      done = preference;
      break;
    }
    default:
      return { done: 'unchanged' };
  }
  const outcome = await change(deps, current, request);
  if (!outcome.ok) return { problem: problemOf(outcome) };
  return { done: outcome.changed || request.kind === 'pause' ? done : 'unchanged' };
}

async function preferencePage(input: {
  readonly deps: PreferenceDeps;
  readonly profile: SubscriberProfile;
  readonly memberships: readonly Membership[];
  readonly audienceId: string;
  readonly language: ShippedLocale;
  readonly notice: Notice | undefined;
  readonly problem: Problem | undefined;
  readonly action: string;
}): Promise<string> {
  const { deps, profile, language } = input;
  const words = emailWordsFor(language).page;
  const now = deps.now();
  const rows: (MembershipRow & { digestTime: { time: string; zone: string } })[] = [];
  for (const membership of input.memberships) {
    const audience = await deps.audiences.get(membership.audienceId);
    const timeZone = audience?.timeZone ?? 'UTC';
    rows.push({
      audienceId: membership.audienceId,
      label: audience?.name ?? membership.audienceId,
      state: membership.state,
      preference: membership.preference,
      pausedUntil:
        isPaused(membership, now) && membership.pausedUntil !== undefined
          ? formatInZone(membership.pausedUntil, timeZone, language, 'date').text
          : undefined,
      current: membership.audienceId === input.audienceId,
      digestTime: digestTimeText(audience, now, language),
    });
  }
  const current = rows.find((row) => row.current);
  const currentLabel = current?.label ?? input.audienceId;
  // The notice comes from the URL the change redirected to, which a refresh, the back button or a
  // bookmark opens again later: shown only while it still says what the list below shows.
  const stillTrue = (notice: Notice): boolean => {
    switch (notice) {
      case 'unsubscribed':
        return current?.state === 'unsubscribed';
      case 'unsubscribed-all':
        return rows.every((row) => row.state === 'unsubscribed');
      case 'paused':
        return current?.pausedUntil !== undefined;
      case 'resumed':
        return current !== undefined && current.state !== 'unsubscribed' && current.pausedUntil === undefined;
      case 'immediate':
      case 'digest':
        return current !== undefined && current.state !== 'unsubscribed' && current.preference === notice;
      case 'confirmed':
        return current?.state === 'confirmed';
      case 'unchanged':
        return true;
    }
  };
  const noticeText = (notice: Notice): string => {
    switch (notice) {
      case 'unsubscribed':
        return words.notices.unsubscribed(currentLabel);
      case 'unsubscribed-all':
        return words.notices.unsubscribedAll;
      case 'paused':
        return words.notices.paused(current?.pausedUntil ?? '');
      case 'resumed':
        return words.notices.resumed;
      case 'immediate':
        return words.notices.immediate;
      case 'digest':
        return words.notices.digest;
      case 'confirmed':
        return words.notices.confirmed(currentLabel);
      case 'unchanged':
        return words.notices.nothingChanged;
    }
  };
  const problemText = (problem: Problem): string =>
    problem === 'bad-days'
      ? words.refused.badDays(MAX_PAUSE_DAYS)
      : problem === 'bad-preference'
        ? words.refused.badPreference
        : problem === 'not-confirmed'
          ? words.refused.notConfirmed
          : words.refused.unsubscribed;
  return renderPreferencePage(
    {
      language,
      maskedAddress: maskAddress(profile.address),
      suppressed: profile.suppression !== undefined,
      memberships: rows,
      current,
      notice: input.notice === undefined || !stillTrue(input.notice) ? undefined : noticeText(input.notice),
      problem: input.problem === undefined ? undefined : problemText(input.problem),
    },
    input.action,
  );
}

/** `p`, `u` or `c` and the token, from the last two segments of the path. */
function routeOf(path: string): { kind: 'p' | 'u' | 'c'; token: string } | undefined {
  const segments = path.split('/').filter((segment) => segment !== '');
  const token = segments.at(-1);
  const kind = segments.at(-2);
  if (token === undefined || (kind !== 'p' && kind !== 'u' && kind !== 'c')) return undefined;
  let decoded: string;
  try {
    decoded = decodeURIComponent(token);
  } catch {
    return undefined;
  }
  return { kind, token: decoded };
}

/** The form fields of a POST body (`application/x-www-form-urlencoded` or `multipart/form-data`). */
export function parseForm(body: string, contentType: string | undefined): URLSearchParams {
  const type = (contentType ?? '').toLowerCase();
  const boundary = /boundary="?([^";]+)"?/i.exec(contentType ?? '')?.[1];
  if (type.startsWith('multipart/form-data') && boundary !== undefined) {
    const fields = new URLSearchParams();
    for (const part of body.split(`--${boundary}`)) {
      const name = /content-disposition:[^\r\n]*\bname="([^"]*)"/i.exec(part)?.[1];
      const value = /\r?\n\r?\n([\s\S]*?)\r?\n?$/.exec(part)?.[1];
      if (name !== undefined && value !== undefined) fields.append(name, value.replace(/\r?\n$/, ''));
    }
    return fields;
  }
  return new URLSearchParams(body.trim());
}

/**
 * The local time and zone of the audience's next daily digest, as the delivery schedules it (past
 * quiet hours); 08:00 UTC, the default, for an audience that no longer exists.
 */
function digestTimeText(
  audience: Audience | undefined,
  now: number,
  language: ShippedLocale,
): { readonly time: string; readonly zone: string } {
  if (audience === undefined) return { time: '08:00', zone: 'UTC' };
  return {
    time: formatInZone(dailyDigestAt(now, audience), audience.timeZone, language, 'time').text,
    zone: audience.timeZone,
  };
}

/** A shipped language from a tag (`ko-KR` → `ko`), or undefined. */
function shippedLanguage(tag: string | undefined): ShippedLocale | undefined {
  if (tag === undefined || tag.length > 100) return undefined;
  const canonical = canonicalLocale(tag);
  if (canonical === undefined) return undefined;
  const language = languageOf(canonical);
  return isShipped(language) ? language : undefined;
}

/** The first shipped language of an Accept-Language header, by its order of preference. */
function languageFromHeader(header: string | undefined): ShippedLocale | undefined {
  if (header === undefined) return undefined;
  const ranked = header
    .slice(0, 500)
    .split(',')
    .map((part, index) => {
      const [tag = '', ...params] = part.trim().split(';');
      const q = params.map((param) => /^\s*q=([0-9.]+)\s*$/.exec(param)?.[1]).find((value) => value !== undefined);
      return { tag: tag.trim(), q: q === undefined ? 1 : Number(q), index };
    })
    .filter((entry) => entry.tag !== '' && entry.q > 0)
    .sort((a, b) => b.q - a.q || a.index - b.index);
  for (const entry of ranked) {
    const language = shippedLanguage(entry.tag);
    if (language !== undefined) return language;
  }
  return undefined;
}

/**
 * A `mailto:` unsubscribe (List-Unsubscribe's second target): SES receives the mail and hands its
 * headers to the endpoint function; the subject is `unsubscribe <token>`. The token is checked as
 * for the one-click POST; anything else changes nothing.
 *
 * @returns whether a membership was unsubscribed now
 */
export async function handleMailtoUnsubscribe(subject: string, deps: PreferenceDeps): Promise<boolean> {
  const token = /\bunsubscribe\s+(v1\.[0-9]{1,6}\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{43})\b/i.exec(
    subject.slice(0, 1000),
  )?.[1];
  if (token === undefined) {
    deps.log.info('a mail to the unsubscribe address without a token; nothing changed', {});
    return false;
  }
  const verified = await verifyLink(token, deps.keys, {
    today: dayOf(deps.now()),
    validDays: deps.linkDays,
    purpose: 'manage',
  });
  if (!verified.ok) {
    deps.log.info('a mailto unsubscribe whose link did not verify; nothing changed', { failure: verified.failure });
    return false;
  }
  const { subscriberId, audienceId } = verified.claims;
  const membership = await deps.store.membership(subscriberId, audienceId);
  if (membership === undefined || (await deps.store.profile(subscriberId)) === undefined) return false;
  const outcome = await change(deps, membership, { kind: 'unsubscribe' });
  deps.count?.('mailto');
  deps.log.info('unsubscribe', { route: 'mailto', subscriberId, audienceId, changed: outcome.ok && outcome.changed });
  return outcome.ok && outcome.changed;
}
