/**
 * Reads sent email the way a mail client does: mailparser (a real MIME parser) for the parts,
 * their charsets and the headers, and html-validate for the HTML part. The checks every email
 * test makes of a message live here, so each test asks the same questions of its messages.
 */

import { HtmlValidate } from 'html-validate';
import { type AddressObject, type ParsedMail, simpleParser } from 'mailparser';

/** html-validate's recommended rules. The one switched off says why. */
const validator = new HtmlValidate({
  extends: ['html-validate:recommended'],
  rules: {
    // Email clients drop <link> stylesheets; a <style> in the head is the portable way, and its
    // rules are not "inline styles" in the sense of this rule (which flags style attributes).
    'no-inline-style': 'error',
    // Long attribute values (links with signed tokens) are fine.
    'long-title': 'off',
  },
});

/** The validation messages of an HTML document (empty when valid). */
export async function htmlProblems(html: string): Promise<string[]> {
  const report = await validator.validateString(html);
  return report.results.flatMap((result) =>
    result.messages.map((message) => `${message.ruleId}: ${message.message} (line ${message.line})`),
  );
}

/** A parsed message and its two alternative parts with their MIME headers. */
export interface ParsedEmail {
  readonly mail: ParsedMail;
  readonly text: string;
  readonly html: string;
  /** The charset of the text/plain and text/html parts, from their own Content-Type. */
  readonly charsets: { readonly text: string | undefined; readonly html: string | undefined };
  readonly header: (name: string) => string | undefined;
  readonly to: readonly string[];
}

const addresses = (value: AddressObject | AddressObject[] | undefined): string[] =>
  (Array.isArray(value) ? value : value === undefined ? [] : [value]).flatMap((entry) =>
    entry.value.map((address) => address.address ?? ''),
  );

/** Parses a raw message and finds its text and HTML parts. */
export async function parseEmail(raw: Uint8Array | string): Promise<ParsedEmail> {
  const source = typeof raw === 'string' ? Buffer.from(raw, 'utf8') : Buffer.from(raw);
  const mail = await simpleParser(source, { skipImageLinks: true, skipTextToHtml: true, skipTextLinks: true });
  const charsetOf = (type: string) => {
    const match = new RegExp(`Content-Type: ${type}; charset=([^\\r\\n;]+)`, 'i').exec(source.toString('latin1'));
    return match?.[1]?.replace(/"/g, '').toLowerCase();
  };
  return {
    mail,
    text: mail.text ?? '',
    html: typeof mail.html === 'string' ? mail.html : '',
    charsets: { text: charsetOf('text/plain'), html: charsetOf('text/html') },
    header: (name) => {
      const line = mail.headerLines.find((entry) => entry.key === name.toLowerCase());
      return line === undefined
        ? undefined
        : line.line
            .slice(line.line.indexOf(':') + 1)
            .replace(/\r?\n[ \t]+/g, ' ')
            .trim();
    },
    to: addresses(mail.to),
  };
}

/** The URIs of a List-Unsubscribe header (`<https://…>, <mailto:…>`). */
export const listUnsubscribeTargets = (value: string | undefined): string[] =>
  [...(value ?? '').matchAll(/<([^>]+)>/g)].map((match) => match[1] ?? '');

/**
 * Every email address that appears anywhere in a raw message (headers and decoded parts), except
 * the Message-ID, which has the form of one without being one.
 */
export function addressesIn(parsed: ParsedEmail, raw: Uint8Array | string): Set<string> {
  const source = (typeof raw === 'string' ? raw : Buffer.from(raw).toString('utf8')).replace(/^Message-ID:.*$/im, '');
  const text = [source, parsed.text, parsed.html].join('\n');
  return new Set(
    [...text.matchAll(/[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}/g)].map((match) => match[0].toLowerCase()),
  );
}
