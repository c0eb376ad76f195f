/**
 * `npm start` as a person runs it, for its SES email (issue 31): it prints where the `.eml` files
 * are, and every file there is a real message (read with mailparser, as a mail client would):
 * `List-Unsubscribe-Post: List-Unsubscribe=One-Click` with an HTTPS one-click URL, a text and an
 * HTML part in UTF-8, the language of its audience, HTML that passes the validator, and no
 * address but its own recipient's.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { exampleAudiences } from '../../sandbox/examples.ts';
import { addressesIn, htmlProblems, listUnsubscribeTargets, parseEmail } from '../support/email-mime.ts';

const mailDir = mkdtempSync(join(tmpdir(), 'news-alerts-npm-start-mail-'));
afterAll(() => rmSync(mailDir, { recursive: true, force: true }));

function npmStart(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('npm', ['start', '--silent', '--', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** The audience's locale as the example says it, else the stack's default (cdk.json: en-US). */
const localeOf = (audienceId: string): string =>
  (exampleAudiences.find((audience) => audience.item.audienceId === audienceId)?.item.locale as string | undefined) ??
  'en-US';

describe('npm start with SES email', () => {
  it('prints where the .eml files are; each is a one-click-unsubscribable, two-part message in its audience language', async () => {
    const { code, stdout, stderr } = await npmStart([
      '--once',
      '--now',
      '2026-11-22T09:00:00+09:00',
      '--mail-dir',
      mailDir,
    ]);
    expect(code, stderr).toBe(0);
    expect(stdout).toContain(`written as a .eml file (the exact MIME bytes) in ${mailDir}/`);
    expect(stdout).toContain('List-Unsubscribe-Post: List-Unsubscribe=One-Click');
    const files = readdirSync(mailDir).filter((name) => name.endsWith('.eml'));
    const alerts = files.filter((name) => !name.includes('-confirm-'));
    // The three example audiences with SES subscribers, in English, Japanese and Korean.
    const audiences = new Set(alerts.map((name) => /^\d{4}-(.+)-[0-9a-f]{20}\.eml$/.exec(name)?.[1]));
    expect([...audiences].sort()).toEqual(['chips-team', 'markets-desk', 'quake-oncall']);
    for (const name of files) {
      const raw = readFileSync(join(mailDir, name));
      const parsed = await parseEmail(raw);
      expect(parsed.charsets, name).toEqual({ text: 'utf-8', html: 'utf-8' });
      expect(parsed.text.length, name).toBeGreaterThan(0);
      expect(parsed.to, name).toHaveLength(1);
      const recipient = parsed.to[0] as string;
      // Only its own recipient, the sender and the unsubscribe mailbox appear in it.
      expect(
        [...addressesIn(parsed, raw)].filter((found) => !found.endsWith('@alerts.example.com')),
        name,
      ).toEqual([recipient]);
      if (name.includes('-confirm-')) continue;
      const audienceId = /^\d{4}-(.+)-[0-9a-f]{20}\.eml$/.exec(name)?.[1] ?? '';
      expect(parsed.header('List-Unsubscribe-Post'), name).toBe('List-Unsubscribe=One-Click');
      expect(listUnsubscribeTargets(parsed.header('List-Unsubscribe'))[0], name).toMatch(
        /^https:\/\/127\.0\.0\.1:\d+\/u\//,
      );
      expect(parsed.header('Content-Language'), name).toBe(localeOf(audienceId));
      expect(parsed.html, name).toContain(`<html lang="${localeOf(audienceId)}">`);
    }
    // HTML validity of one message per audience (the renderer is the same for all of them).
    for (const audienceId of audiences) {
      const name = alerts.find((file) => file.includes(`-${audienceId}-`)) as string;
      expect(await htmlProblems((await parseEmail(readFileSync(join(mailDir, name)))).html), name).toEqual([]);
    }
  }, 240_000);
});
