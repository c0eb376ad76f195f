#!/usr/bin/env node
// Entry point of `npm start`, `npm test` and `npm run bench` on a fresh clone: installs node modules
// (npm ci) and the moto virtualenv when they are missing or stale, then hands over to the real
// command. Plain JavaScript because it runs before node_modules exists.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ensurePythonEnv, projectRoot } from './python-env.mjs';

const commands = {
  start: ['tsx', 'scripts/start.ts'],
  test: ['vitest', 'run'],
  bench: ['tsx', 'bench/run.ts'],
};

function ensureNodeModules() {
  const lockfile = join(projectRoot, 'package-lock.json');
  const stamp = join(projectRoot, 'node_modules', '.news-alerts-lock.sha256');
  const wanted = createHash('sha256').update(readFileSync(lockfile)).digest('hex');
  if (existsSync(stamp) && readFileSync(stamp, 'utf8') === wanted) return;
  process.stderr.write('news-alerts: installing node modules (npm ci) ...\n');
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  const result = spawnSync(npm, ['ci', '--no-audit', '--no-fund'], {
    cwd: projectRoot,
    stdio: ['ignore', process.stderr, process.stderr],
  });
  if (result.status !== 0) process.exit(result.status ?? 1);
  writeFileSync(stamp, wanted);
}

const [name, ...args] = process.argv.slice(2);
const command = commands[name];
if (!command) {
  process.stderr.write(`usage: node scripts/bootstrap.mjs <${Object.keys(commands).join('|')}> [args...]\n`);
  process.exit(2);
}
try {
  ensureNodeModules();
  ensurePythonEnv();
} catch (error) {
  process.stderr.write(`news-alerts: ${error.message}\n`);
  process.exit(1);
}
const [bin, ...binArgs] = command;
const child = spawnSync(join(projectRoot, 'node_modules', '.bin', bin), [...binArgs, ...args], {
  cwd: projectRoot,
  stdio: 'inherit',
});
process.exit(child.status ?? (child.signal ? 1 : 0));
