/**
 * Signed links (DESIGN section 11): every message links to the preference page, to the one-click
 * unsubscribe and (for a new address) to the confirmation by a token that only this deployment
 * can make. Owns these guarantees:
 *
 * - **Unforgeable and unalterable**: the token is an HMAC-SHA256 over its purpose, the subscriber,
 *   the audience, the key version and the day it was issued, with a key from Secrets Manager. A
 *   token whose any byte was changed, or one signed with another key, does not verify.
 * - **Long-lived enough**: a token verifies for {@link DEFAULT_LINK_DAYS} days after the message
 *   that carried it (at least {@link MIN_LINK_DAYS}, as the product promises); then it is expired.
 * - **Revocable**: a token names the key version it was signed with; removing that version from
 *   the secret revokes every token signed with it (docs/email.md, "Rotating the link key").
 * - **Scoped**: a confirmation token cannot act as a management token or the other way round.
 *
 * Verification compares MACs in constant time and says only *that* a token failed and the broad
 * reason (for logs and metrics); the page shows one plain error whatever the reason.
 *
 * Pure: the keys and the day come in; no I/O.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

/** What a link lets its holder do. */
export type LinkPurpose = 'manage' | 'confirm';

/** The signed content of a link. */
export interface LinkClaims {
  readonly purpose: LinkPurpose;
  readonly subscriberId: string;
  readonly audienceId: string;
  /** Days since 1970-01-01 (UTC) when the link was made. */
  readonly issuedDay: number;
}

/** A link key of one version. */
export interface LinkKey {
  readonly version: string;
  readonly key: Uint8Array;
}

/** Where link keys come from (Secrets Manager in production; functions/aws/email/link-keys.ts). */
export interface LinkKeys {
  /** The key new links are signed with. */
  current(): Promise<LinkKey>;
  /** A key by version, or undefined when that version was removed (its links are revoked). */
  byVersion(version: string): Promise<LinkKey | undefined>;
}

/** The shortest validity the product promises for a link, counted from its message. */
export const MIN_LINK_DAYS = 60;
/** How long links verify by default. */
export const DEFAULT_LINK_DAYS = 180;
/** A key shorter than this is refused (a typo or an empty secret, not a key). */
export const MIN_KEY_BYTES = 32;

const FORMAT = 'v1';
const PURPOSE_CODES: Record<LinkPurpose, string> = { manage: 'm', confirm: 'c' };
const VERSION = /^[0-9]{1,6}$/;
const SUBSCRIBER_ID = /^[0-9a-f]{8,64}$/;
const AUDIENCE_ID = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;
const MAX_TOKEN_LENGTH = 512;

/** Days since the epoch of an instant (UTC). */
export const dayOf = (epochMs: number): number => Math.floor(epochMs / 86_400_000);

const mac = (key: Uint8Array, signed: string): Buffer => createHmac('sha256', key).update(signed, 'utf8').digest();

/**
 * Makes a token for `claims` with `key`.
 * @throws RangeError when a claim could not be read back (an id with characters links may not hold)
 */
export function signLink(claims: LinkClaims, key: LinkKey): string {
  if (!VERSION.test(key.version)) throw new RangeError('the link key version must be 1 to 6 digits');
  if (key.key.byteLength < MIN_KEY_BYTES) throw new RangeError(`the link key must be at least ${MIN_KEY_BYTES} bytes`);
  if (!SUBSCRIBER_ID.test(claims.subscriberId)) throw new RangeError('the subscriber id must be lower-case hex');
  if (!AUDIENCE_ID.test(claims.audienceId)) throw new RangeError('the audience id cannot be put in a link');
  if (!Number.isSafeInteger(claims.issuedDay) || claims.issuedDay < 0) throw new RangeError('bad issue day');
  const payload = Buffer.from(
    [PURPOSE_CODES[claims.purpose], claims.subscriberId, claims.audienceId, String(claims.issuedDay)].join('|'),
    'utf8',
  ).toString('base64url');
  const signed = `${FORMAT}.${key.version}.${payload}`;
  return `${signed}.${mac(key.key, signed).toString('base64url')}`;
}

/** Why a token did not verify (for logs and metrics; people see one plain error page). */
export type LinkFailure = 'malformed' | 'unknown-key' | 'bad-signature' | 'expired' | 'wrong-purpose';

export type LinkVerification =
  | { readonly ok: true; readonly claims: LinkClaims; readonly keyVersion: string }
  | { readonly ok: false; readonly failure: LinkFailure };

/**
 * Checks a token: format, key version, MAC (constant time), age and purpose.
 *
 * @param today days since the epoch now ({@link dayOf})
 * @param validDays how many days a token verifies after the day it was issued
 */
export async function verifyLink(
  token: string,
  keys: LinkKeys,
  options: { readonly today: number; readonly validDays: number; readonly purpose: LinkPurpose },
): Promise<LinkVerification> {
  if (typeof token !== 'string' || token.length > MAX_TOKEN_LENGTH) return { ok: false, failure: 'malformed' };
  const parts = token.split('.');
  if (parts.length !== 4) return { ok: false, failure: 'malformed' };
  const [format, version, payload, signature] = parts as [string, string, string, string];
  if (format !== FORMAT || !VERSION.test(version) || !/^[A-Za-z0-9_-]+$/.test(payload)) {
    return { ok: false, failure: 'malformed' };
  }
  if (!/^[A-Za-z0-9_-]{43}$/.test(signature)) return { ok: false, failure: 'malformed' };
  const key = await keys.byVersion(version);
  if (key === undefined) return { ok: false, failure: 'unknown-key' };
  const expected = mac(key.key, `${format}.${version}.${payload}`);
  const given = Buffer.from(signature, 'base64url');
  // base64url decoding is lenient about the last character's spare bits: compare the canonical form too.
  if (
    given.length !== expected.length ||
    !timingSafeEqual(given, expected) ||
    given.toString('base64url') !== signature
  ) {
    return { ok: false, failure: 'bad-signature' };
  }
  const fields = Buffer.from(payload, 'base64url').toString('utf8').split('|');
  if (fields.length !== 4) return { ok: false, failure: 'malformed' };
  const [code, subscriberId, audienceId, day] = fields as [string, string, string, string];
  const purpose = (Object.keys(PURPOSE_CODES) as LinkPurpose[]).find((name) => PURPOSE_CODES[name] === code);
  if (
    purpose === undefined ||
    !SUBSCRIBER_ID.test(subscriberId) ||
    !AUDIENCE_ID.test(audienceId) ||
    !/^\d{1,9}$/.test(day)
  ) {
    return { ok: false, failure: 'malformed' };
  }
  const issuedDay = Number(day);
  if (issuedDay > options.today + 1 || options.today - issuedDay > options.validDays) {
    return { ok: false, failure: 'expired' };
  }
  if (purpose !== options.purpose) return { ok: false, failure: 'wrong-purpose' };
  return { ok: true, claims: { purpose, subscriberId, audienceId, issuedDay }, keyVersion: version };
}

/**
 * Reads the link-key secret: a JSON object with `current` (the version new links are signed with)
 * and one `key<version>` per version still accepted, each at least {@link MIN_KEY_BYTES} bytes of
 * text (the stack generates 64 random characters). Versions are 1 to 6 digits.
 *
 * @throws Error naming what is wrong, never a key
 */
export function parseLinkKeySecret(secretString: string): { current: LinkKey; all: ReadonlyMap<string, LinkKey> } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(secretString);
  } catch {
    throw new Error('the link-key secret is not JSON; it must be {"current": "1", "key1": "<64 random characters>"}');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new Error(
      'the link-key secret must be a JSON object such as {"current": "1", "key1": "<64 random characters>"}',
    );
  }
  const fields = parsed as Record<string, unknown>;
  const all = new Map<string, LinkKey>();
  for (const [name, value] of Object.entries(fields)) {
    const match = /^key([0-9]{1,6})$/.exec(name);
    if (!match) continue;
    const version = match[1] as string;
    if (typeof value !== 'string' || Buffer.byteLength(value, 'utf8') < MIN_KEY_BYTES) {
      throw new Error(`the link-key secret's "${name}" must be a string of at least ${MIN_KEY_BYTES} characters`);
    }
    all.set(version, { version, key: Buffer.from(value, 'utf8') });
  }
  const current =
    typeof fields.current === 'string' || typeof fields.current === 'number' ? String(fields.current) : '';
  const currentKey = all.get(current);
  if (currentKey === undefined) {
    throw new Error(
      `the link-key secret's "current" (${JSON.stringify(current).slice(0, 12)}) names no key; add "key${VERSION.test(current) ? current : '<n>'}" or point "current" at an existing version`,
    );
  }
  return { current: currentKey, all };
}
