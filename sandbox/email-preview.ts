/**
 * What `npm start` says about the email it sent through moto's SES: where the `.eml` files are,
 * how many went to each audience, and one of them rendered as a mail client shows it (parsed
 * back with mailparser from the file itself: subject, language, the text part, and the HTML part
 * written beside it as `preview.html` for a browser).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import type { LocalEmail } from './local-email.ts';

/** The email part of `npm start`'s summary (its `--json` output carries the same). */
export interface EmailSummary {
  readonly mailDir: string;
  readonly messages: number;
  readonly byAudience: Readonly<Record<string, number>>;
  readonly files: readonly string[];
  readonly preview?:
    | {
        readonly file: string;
        readonly subject: string;
        readonly language: string;
        readonly listUnsubscribePost: string;
        readonly text: string;
        readonly htmlFile: string;
      }
    | undefined;
}

/** Reads back what the sandbox sent; the preview is the first alert of `preferAudience` if any, else the first alert. */
export async function emailSummary(email: LocalEmail, preferAudience?: string): Promise<EmailSummary> {
  const byAudience: Record<string, number> = {};
  for (const sent of email.sent) byAudience[sent.audienceId] = (byAudience[sent.audienceId] ?? 0) + 1;
  const alerts = email.sent.filter((sent) => sent.audienceId !== 'confirm');
  const chosen = alerts.find((sent) => sent.audienceId === preferAudience) ?? alerts[0] ?? email.sent[0];
  let preview: EmailSummary['preview'];
  if (chosen !== undefined) {
    const { simpleParser } = await import('mailparser');
    const mail = await simpleParser(readFileSync(chosen.path), { skipTextLinks: true, skipTextToHtml: true });
    const htmlFile = join(email.mailDir, 'preview.html');
    writeFileSync(htmlFile, typeof mail.html === 'string' ? mail.html : '');
    // The raw header lines: mailparser folds List-* headers into a structured `list` value.
    const header = (name: string) => {
      const line = mail.headerLines.find((entry) => entry.key === name);
      return line === undefined ? '' : line.line.slice(line.line.indexOf(':') + 1).trim();
    };
    preview = {
      file: chosen.path,
      subject: mail.subject ?? '',
      language: header('content-language'),
      listUnsubscribePost: header('list-unsubscribe-post'),
      text: mail.text ?? '',
      htmlFile,
    };
  }
  return {
    mailDir: email.mailDir,
    messages: email.sent.length,
    byAudience,
    files: email.sent.map((sent) => sent.path),
    preview,
  };
}

/** The lines `npm start` prints (paths relative to `cwd` when inside it). */
export function describeEmailSummary(summary: EmailSummary, cwd: string, maxTextLines = 18): string[] {
  const show = (path: string) => (path.startsWith(cwd) ? relative(cwd, path) : path);
  const lines = [
    `  ${summary.messages} email(s) sent through SES (moto), each written as a .eml file (the exact MIME bytes) in ${show(summary.mailDir)}/`,
  ];
  for (const [audienceId, count] of Object.entries(summary.byAudience)) {
    lines.push(`    ${audienceId === 'confirm' ? 'confirmation emails' : audienceId}: ${count}`);
  }
  if (summary.preview !== undefined) {
    const { preview } = summary;
    const text = preview.text.trimEnd().split('\n');
    lines.push(
      '',
      `  One of them, ${show(preview.file)}, as a mail client shows it (HTML part: ${show(preview.htmlFile)}):`,
      `    Subject: ${preview.subject}`,
      `    Content-Language: ${preview.language} · List-Unsubscribe-Post: ${preview.listUnsubscribePost}`,
      ...text.slice(0, maxTextLines).map((line) => `    │ ${line}`),
    );
    if (text.length > maxTextLines) lines.push(`    │ … ${text.length - maxTextLines} more line(s) in the file`);
  }
  lines.push(
    '',
    '  Open a .eml in any mail client. Its links go to the preference page this run served, which stopped',
    '  with it; news-alerts sandbox up serves the page for as long as it runs, and writes mail of its own',
    '  to .sandbox/mail (docs/email.md).',
  );
  return lines;
}
