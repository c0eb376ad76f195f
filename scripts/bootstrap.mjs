#!/usr/bin/env node
// Entry point of `npm start`, `npm test`, `npm run test:quick` and `npm run bench` on a fresh clone:
// installs node modules (npm ci, whose prepare script builds the CLI into dist/), builds the CLI if
// dist/ is still missing, installs the moto virtualenv when it is missing or stale, then hands over
// to the real command. `test:quick` (the pure core) needs only the node modules. The tests print
// how long they took when they end. Plain JavaScript because it runs before node_modules exists.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ensurePythonEnv, projectRoot } from '../sandbox/python-env.mjs';
import { ensureChromium } from './ensure-chromium.mjs';

const commands = {
  start: ['tsx', 'scripts/start.ts'],
  test: ['vitest', 'run'],
  // Without isolation: a worker runs file after file with the modules it has loaded (half the
  // time); test/support/quick-setup.ts resets global state between files. npm test isolates.
  'test:quick': ['vitest', 'run', '--project', 'quick', '--no-isolate'],
  bench: ['tsx', 'bench/run.ts'],
};
/** Commands that need neither the built CLI nor moto. */
const nodeModulesOnly = new Set(['test:quick']);
/** Commands whose duration is printed when they end. */
const timed = new Set(['test', 'test:quick']);

/** `9m 05s`, `42.1s`. */
function duration(ms) {
  const seconds = ms / 1000;
  if (seconds < 60) return `${seconds.toFixed(1)}s`;
  const whole = Math.round(seconds);
  return `${Math.floor(whole / 60)}m ${String(whole % 60).padStart(2, '0')}s`;
}

/**
 * True when node_modules holds exactly what package-lock.json pins: every required package at
 * its locked version, per npm's own record of the installed tree. Optional packages (other
 * platforms' binaries) may be absent.
 */
function installedTreeMatchesLockfile(lockfile) {
  const installedRecord = join(projectRoot, 'node_modules', '.package-lock.json');
  if (!existsSync(installedRecord)) return false;
  try {
    const locked = JSON.parse(readFileSync(lockfile, 'utf8')).packages ?? {};
    const installed = JSON.parse(readFileSync(installedRecord, 'utf8')).packages ?? {};
    return Object.entries(locked).every(([path, entry]) => {
      if (path === '') return true;
      const present = installed[path];
      if (!present) return Boolean(entry.optional || entry.devOptional);
      return present.version === entry.version;
    });
  } catch {
    return false;
  }
}

function ensureNodeModules() {
  const lockfile = join(projectRoot, 'package-lock.json');
  if (installedTreeMatchesLockfile(lockfile)) return;
  process.stderr.write('news-alerts: installing node modules (npm ci) ...\n');
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  const result = spawnSync(npm, ['ci', '--no-audit', '--no-fund'], {
    cwd: projectRoot,
    stdio: ['ignore', process.stderr, process.stderr],
  });
  if (result.status !== 0) process.exit(result.status ?? 1);
}

/**
 * The built CLI (dist/, what `news-alerts` runs after `npm link`): `npm ci` builds it through
 * `prepare`, but a tree installed with --ignore-scripts, or a dist/ someone deleted, has none, and
 * `npm start` prints `news-alerts` commands to try next.
 */
function ensureCliBuilt() {
  if (existsSync(join(projectRoot, 'dist', 'news-alerts.js'))) return;
  process.stderr.write('news-alerts: building the CLI (npm run build) ...\n');
  const result = spawnSync(process.execPath, [join(projectRoot, 'scripts', 'build-cli.mjs')], {
    cwd: projectRoot,
    stdio: ['ignore', process.stderr, process.stderr],
  });
  if (result.status !== 0) process.exit(result.status ?? 1);
}

const [name, ...args] = process.argv.slice(2);
const command = commands[name];
if (!command) {
  process.stderr.write(`usage: node scripts/bootstrap.mjs <${Object.keys(commands).join('|')}> [args...]\n`);
  process.exit(2);
}
const startedAt = performance.now();
try {
  ensureNodeModules();
  if (!nodeModulesOnly.has(name)) {
    ensureCliBuilt();
    // Awaited with pip's progress for as long as it works; Ctrl-C stops pip too.
    await ensurePythonEnv();
    // The browser tests (the email preference page, the console) run Debian's Chromium.
    if (name === 'test') ensureChromium();
  }
} catch (error) {
  process.stderr.write(`news-alerts: ${error.message}\n`);
  process.exit(1);
}
const [bin, ...binArgs] = command;
const child = spawnSync(join(projectRoot, 'node_modules', '.bin', bin), [...binArgs, ...args], {
  cwd: projectRoot,
  stdio: 'inherit',
});
const status = child.status ?? (child.signal ? 1 : 0);
if (timed.has(name)) {
  const outcome = status === 0 ? 'passed' : `failed (exit ${status})`;
  process.stderr.write(
    `news-alerts: npm ${name === 'test' ? 'test' : `run ${name}`} ${outcome} in ${duration(performance.now() - startedAt)}\n`,
  );
}
process.exit(status);
