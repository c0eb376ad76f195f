#!/usr/bin/env node
// Debian's Chromium (and CJK fonts, so Korean and Japanese pages render in screenshots) for the
// browser tests (test/e2e/email-browser.test.ts): Playwright's own browser download cannot run
// here, so `npm test` (scripts/bootstrap.mjs) and .ci/run install the `chromium` and
// `fonts-noto-cjk` packages with apt-get when /usr/bin/chromium is missing (as root, else sudo).
// Plain JavaScript: it runs before node_modules may exist. Exported for bootstrap.mjs; runnable
// on its own: node scripts/ensure-chromium.mjs
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** Debian's packages the browser tests need. */
export const BROWSER_PACKAGES = ['chromium', 'fonts-noto-cjk'];
const CHROMIUM = '/usr/bin/chromium';

/** Installs the packages when Chromium is missing; throws with what to do when it cannot. */
export function ensureChromium() {
  if (process.env.CHROMIUM_PATH ? existsSync(process.env.CHROMIUM_PATH) : existsSync(CHROMIUM)) return;
  if (process.platform !== 'linux' || spawnSync('sh', ['-c', 'command -v apt-get'], { stdio: 'ignore' }).status !== 0) {
    throw new Error(
      `the browser tests need Chromium at ${CHROMIUM} (Debian's chromium package) or CHROMIUM_PATH; this machine has no apt-get to install it`,
    );
  }
  const root = typeof process.getuid === 'function' && process.getuid() === 0;
  const prefix = root ? [] : ['sudo', '-n'];
  process.stderr.write(
    `news-alerts: installing ${BROWSER_PACKAGES.join(' and ')} for the browser tests (apt-get) ...\n`,
  );
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  for (const args of [
    ['apt-get', 'update', '-qq'],
    ['apt-get', 'install', '-y', '-qq', ...BROWSER_PACKAGES],
  ]) {
    const [command, ...rest] = [...prefix, ...args];
    const result = spawnSync(command, rest, { stdio: ['ignore', process.stderr, process.stderr], env });
    if (result.status !== 0) {
      throw new Error(
        `${args.join(' ')} failed (exit ${result.status}); install ${BROWSER_PACKAGES.join(' ')} yourself, or set CHROMIUM_PATH`,
      );
    }
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  try {
    ensureChromium();
  } catch (error) {
    process.stderr.write(`news-alerts: ${error.message}\n`);
    process.exit(1);
  }
}
