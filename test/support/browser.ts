/**
 * Debian's Chromium driven by playwright-core, for tests of pages a person uses. Playwright's own
 * browser download cannot run here (no internet): the project installs Debian's `chromium`
 * (scripts/ensure-chromium.mjs, run by `npm test` and by .ci/run) and this launches it headless,
 * with the flags that keep it from reaching for the network, `--no-sandbox` only as root.
 * `CHROMIUM_PATH` points at another Chromium.
 */
import { createHash, X509Certificate } from 'node:crypto';
import { existsSync } from 'node:fs';
import { connect } from 'node:tls';
import axe from 'axe-core';
import { type Browser, chromium, type Page } from 'playwright-core';

/** Where Debian's package puts Chromium. */
export const DEBIAN_CHROMIUM = '/usr/bin/chromium';

/**
 * How every browser test starts Chromium: `CHROMIUM_PATH` or Debian's, headless, with the flags
 * that keep it off the network, `--no-sandbox` only as root.
 * @throws Error saying how to install it when there is no Chromium there
 */
export function chromiumLaunchOptions(): { executablePath: string; headless: true; args: string[] } {
  const executablePath = process.env.CHROMIUM_PATH ?? DEBIAN_CHROMIUM;
  if (!existsSync(executablePath)) {
    throw new Error(
      `no Chromium at ${executablePath}: npm test installs Debian's chromium package (node scripts/ensure-chromium.mjs); or set CHROMIUM_PATH`,
    );
  }
  const root = typeof process.getuid === 'function' && process.getuid() === 0;
  return {
    executablePath,
    headless: true,
    args: [
      ...(root ? ['--no-sandbox'] : []),
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  };
}

/**
 * Chromium with TLS verification on. A loopback server whose certificate the sandbox CA signed is
 * trusted by its key alone (`--ignore-certificate-errors-spki-list`: an error is ignored only for
 * a chain holding one of these keys), never by turning certificate checks off.
 */
export async function launchChromium(options: { readonly trustedKeys?: readonly string[] } = {}): Promise<Browser> {
  const launch = chromiumLaunchOptions();
  const keys = options.trustedKeys ?? [];
  return await chromium.launch({
    ...launch,
    args: [...launch.args, ...(keys.length > 0 ? [`--ignore-certificate-errors-spki-list=${keys.join(',')}`] : [])],
  });
}

/**
 * The SHA-256 of the public key (SubjectPublicKeyInfo, base64) of the certificate `url`'s server
 * presents, read over a TLS connection that verifies it against `caPem`: the key Chromium is
 * then told to trust ({@link launchChromium}).
 */
export async function verifiedServerKey(url: string, caPem: string): Promise<string> {
  const { hostname, port } = new URL(url);
  const der = await new Promise<Buffer>((resolve, reject) => {
    const socket = connect({ host: hostname, port: Number(port), ca: caPem, servername: undefined }, () => {
      const certificate = socket.getPeerCertificate();
      socket.end();
      resolve(certificate.raw);
    });
    socket.once('error', reject);
  });
  const spki = new X509Certificate(der).publicKey.export({ type: 'spki', format: 'der' });
  return createHash('sha256').update(spki).digest('base64');
}

/** axe-core's findings on the page at `impact` serious or critical (the rules WCAG 2.x A and AA). */
export async function seriousAccessibilityProblems(page: Page): Promise<string[]> {
  await page.addScriptTag({ content: axe.source });
  const results = (await page.evaluate(async () => {
    // Runs in the page: its globals, not Node's.
    const page = globalThis as unknown as {
      axe: { run: (context: unknown, options: unknown) => Promise<unknown> };
      document: unknown;
    };
    return await page.axe.run(page.document, {
      runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'] },
    });
  })) as { violations: { id: string; impact: string | null; help: string; nodes: { target: unknown }[] }[] };
  return results.violations
    .filter((violation) => violation.impact === 'serious' || violation.impact === 'critical')
    .map(
      (violation) =>
        `${violation.id} (${violation.impact}): ${violation.help} at ${JSON.stringify(violation.nodes.map((node) => node.target))}`,
    );
}
