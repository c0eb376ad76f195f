// The project-local Python virtualenv that holds moto server (the local AWS emulator) and cfn-lint.
// Plain JavaScript on purpose: scripts/bootstrap.mjs imports it before node_modules exists.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const projectRoot = join(dirname(fileURLToPath(import.meta.url)), '..');
export const venvDir = join(projectRoot, '.venv');
const requirementsFile = join(projectRoot, 'sandbox', 'requirements.txt');
const stampFile = join(venvDir, '.requirements.sha256');

/** Path of an executable inside the project virtualenv. */
export const venvBin = (name) => join(venvDir, process.platform === 'win32' ? 'Scripts' : 'bin', name);

const sha256 = (path) => createHash('sha256').update(readFileSync(path)).digest('hex');

function findPython() {
  for (const candidate of [process.env.PYTHON, 'python3', 'python'].filter(Boolean)) {
    const probe = spawnSync(candidate, ['-c', 'import sys; print("%d.%d" % sys.version_info[:2])'], {
      encoding: 'utf8',
    });
    if (probe.status !== 0) continue;
    const [major, minor] = probe.stdout.trim().split('.').map(Number);
    if (major === 3 && minor >= 10) return candidate;
  }
  throw new Error(
    'news-alerts needs Python >= 3.10 for the local AWS emulator (moto server). Install python3 (with the venv module) or point PYTHON at one.',
  );
}

function run(command, args, log) {
  const result = spawnSync(command, args, { stdio: ['ignore', log, log] });
  if (result.status !== 0) {
    throw new Error(`'${command} ${args.join(' ')}' failed with exit code ${result.status ?? result.signal}`);
  }
}

/**
 * Creates ./.venv and installs the pinned requirements when the virtualenv is missing or the
 * requirements changed since the last install. Progress goes to stderr so stdout stays clean.
 */
export function ensurePythonEnv({ log = process.stderr } = {}) {
  const wanted = sha256(requirementsFile);
  if (existsSync(venvBin('moto_server')) && existsSync(stampFile) && readFileSync(stampFile, 'utf8') === wanted) {
    return;
  }
  log.write('news-alerts: installing moto server into ./.venv (first run only) ...\n');
  if (!existsSync(venvBin('python'))) run(findPython(), ['-m', 'venv', venvDir], log);
  run(
    venvBin('python'),
    ['-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', '-r', requirementsFile],
    log,
  );
  writeFileSync(stampFile, wanted);
}
