/**
 * The MIME bytes of one email, built by nodemailer's MailComposer (never by hand): a
 * `multipart/alternative` with a `text/plain` and a `text/html` part, both UTF-8 and
 * quoted-printable, and the headers bulk senders need:
 *
 * - `List-Unsubscribe` with the HTTPS one-click URL and (when configured) a `mailto:` address,
 *   and `List-Unsubscribe-Post: List-Unsubscribe=One-Click` (RFC 8058). SES signs the message
 *   with the domain's Easy DKIM key, which covers both headers, as RFC 8058 requires.
 * - `List-Id` (RFC 2919) naming the audience, so mail clients can sort and filter per list.
 * - `Content-Language` with the audience's locale.
 *
 * The recipient is exactly one validated address (subscriber.ts `normalizeAddress`); nothing of
 * any other subscriber goes into a message. Lines end in CRLF, as SMTP and SES expect.
 *
 * Pure apart from MailComposer's own work (no network, no files: URL and file access are off).
 */
import { createHash } from 'node:crypto';
import MailComposer from 'nodemailer/lib/mail-composer';
import type { RenderedEmail } from './compose.ts';
import { normalizeAddress } from './subscriber.ts';

/** Everything a message needs besides its rendered parts. */
export interface OutgoingEmail {
  readonly from: { readonly name: string; readonly address: string };
  readonly replyTo?: string | undefined;
  /** The one recipient. */
  readonly to: string;
  readonly rendered: RenderedEmail;
  /** BCP 47 locale of both parts. */
  readonly locale: string;
  /** `List-Id`: the audience's label and a dotted id (`markets-desk.alerts.example.com`). */
  readonly list?: { readonly label: string; readonly id: string } | undefined;
  /** Where to unsubscribe: the one-click HTTPS URL, and a mailbox that handles `mailto:` requests. */
  readonly unsubscribe?: { readonly https: string; readonly mailto?: string | undefined } | undefined;
  /** `Message-ID` without angle brackets (`<id>@<domain>`). */
  readonly messageId: string;
  readonly date: Date;
}

/**
 * The `List-Id` of an audience's emails (RFC 2919): `<label>.<domain>`, one per audience. Mail
 * clients compare list ids without regard to case, and the label may only hold letters, digits and
 * `-` here (a dot would read as one more level of the domain). An id made only of lower-case
 * letters, digits and `-` (`markets-desk`) is its own label; any other (`desk_1`, `Desk.1`,
 * `desk:1`) is lower-cased with `-` for the rest, and gets `=` and the first 8 hex digits of its
 * SHA-256. No audience id holds `=` (model.ts), so no id's own label is another's hashed one, and
 * two hashed ones differ unless their hashes do not: a filter set on one list never catches another.
 */
export function listIdOf(audienceId: string, domain: string): string {
  const plain = audienceId.toLowerCase().replace(/[^a-z0-9-]/g, '-');
  const label =
    plain === audienceId ? plain : `${plain}=${createHash('sha256').update(audienceId).digest('hex').slice(0, 8)}`;
  return `${label}.${domain}`;
}

/** The RFC 8058 body of a one-click unsubscribe POST, and the header value that announces it. */
export const ONE_CLICK_BODY = 'List-Unsubscribe=One-Click';

/** `<value>` as a header field's quoted list entry; angle brackets and whitespace may not appear inside. */
function bracketed(value: string): string {
  if (/[\s<>]/.test(value)) throw new RangeError('a List-Unsubscribe URI may not contain spaces or angle brackets');
  return `<${value}>`;
}

/**
 * A header phrase (a display name) in RFC 2047 form when it is not plain ASCII: `B` encoded-words
 * of at most 45 bytes of UTF-8 each (so each word stays under 75 characters), never splitting a
 * character; quoted as it is otherwise.
 */
export function encodePhrase(text: string): string {
  const clean = text.replace(/[\r\n"\\]/g, ' ').trim();
  if (/^[\x20-\x7e]*$/.test(clean)) return `"${clean}"`;
  const words: string[] = [];
  let chunk = '';
  for (const char of clean) {
    if (Buffer.byteLength(chunk + char, 'utf8') > 45) {
      words.push(chunk);
      chunk = '';
    }
    chunk += char;
  }
  if (chunk !== '') words.push(chunk);
  return words.map((word) => `=?UTF-8?B?${Buffer.from(word, 'utf8').toString('base64')}?=`).join(' ');
}

/** Builds the raw message (what SES v2 `SendEmail` takes as `Content.Raw.Data`). */
export async function buildMime(email: OutgoingEmail): Promise<Uint8Array> {
  const to = normalizeAddress(email.to);
  const headers: Record<string, string | { prepared: boolean; value: string }> = { 'Content-Language': email.locale };
  if (email.unsubscribe !== undefined) {
    const targets = [bracketed(email.unsubscribe.https)];
    if (email.unsubscribe.mailto !== undefined) targets.push(bracketed(email.unsubscribe.mailto));
    headers['List-Unsubscribe'] = targets.join(', ');
    headers['List-Unsubscribe-Post'] = ONE_CLICK_BODY;
  }
  if (email.list !== undefined) {
    // Prepared: the list id itself must stay readable (RFC 2919); only the phrase is encoded.
    headers['List-Id'] = { prepared: true, value: `${encodePhrase(email.list.label)} ${bracketed(email.list.id)}` };
  }
  const composer = new MailComposer({
    from: { name: email.from.name, address: normalizeAddress(email.from.address) },
    to: { name: '', address: to },
    ...(email.replyTo === undefined ? {} : { replyTo: normalizeAddress(email.replyTo) }),
    subject: email.rendered.subject,
    messageId: `<${email.messageId}>`,
    date: email.date,
    text: {
      content: email.rendered.text,
      contentType: 'text/plain; charset=utf-8',
      contentTransferEncoding: 'quoted-printable',
    },
    html: {
      content: email.rendered.html,
      contentType: 'text/html; charset=utf-8',
      contentTransferEncoding: 'quoted-printable',
    },
    headers,
    newline: 'win',
    disableFileAccess: true,
    disableUrlAccess: true,
    xMailer: false,
  });
  return new Uint8Array(await composer.compile().build());
}
