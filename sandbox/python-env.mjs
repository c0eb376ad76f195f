// The project-local Python virtualenv that holds moto server (the local AWS emulator) and cfn-lint.
// Plain JavaScript on purpose: scripts/bootstrap.mjs imports it before node_modules exists.
//
// The first install downloads some 60 packages: minutes on a slow network. It is awaited for as
// long as pip works, with its progress on stderr (no fixed time limit that gives up half-way),
// and pip never outlives the process that started it: Ctrl-C, SIGTERM, SIGHUP or an exit stop it
// first. An interrupted install leaves no stamp, so the next start installs again.
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
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

/** Signals that end this process; the child is stopped first, then the signal is raised again. */
const endingSignals = ['SIGINT', 'SIGTERM', 'SIGHUP'];

/**
 * Runs `command` to completion. Its stdout lines go to `onLine`; its stderr is passed to `log` and
 * the last lines kept for the error. While it runs, an exit of this process kills it, and an
 * ending signal stops it before this process ends the way the signal asks.
 */
function run(command, args, { log, onLine = () => {} }) {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    const tail = [];
    createInterface({ input: child.stdout }).on('line', onLine);
    createInterface({ input: child.stderr }).on('line', (line) => {
      tail.push(line);
      if (tail.length > 15) tail.shift();
      log.write(`  ${line}\n`);
    });
    const killOnExit = () => child.kill('SIGTERM');
    const onSignal = (signal) => {
      log.write(`news-alerts: ${signal}: stopping the install (the next start installs again)\n`);
      release();
      const raise = () => process.kill(process.pid, signal);
      if (child.exitCode !== null || child.signalCode !== null) raise();
      else {
        child.once('close', raise);
        child.kill('SIGTERM');
      }
    };
    const release = () => {
      process.off('exit', killOnExit);
      for (const signal of endingSignals) process.off(signal, onSignal);
    };
    process.on('exit', killOnExit);
    for (const signal of endingSignals) process.on(signal, onSignal);
    child.once('error', (error) => {
      release();
      reject(new Error(`'${command}' could not be started: ${error.message}`));
    });
    child.once('close', (code, signal) => {
      release();
      if (code === 0) resolve();
      else {
        reject(
          new Error(
            `'${command} ${args.join(' ')}' failed with exit code ${code ?? signal}${tail.length > 0 ? `:\n${tail.join('\n')}` : ''}`,
          ),
        );
      }
    });
  });
}

/** The requirements pip is asked for (one per line, comments and blanks aside). */
const requirementCount = () =>
  readFileSync(requirementsFile, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '' && !line.trim().startsWith('#')).length;

/**
 * pip's stdout as progress lines: each package as pip collects it (`12 of 58`), then the install
 * step, which takes a while without output of its own.
 */
function pipProgress(log, total) {
  let collected = 0;
  return (line) => {
    const collecting = /^Collecting (\S+)/.exec(line);
    if (collecting) {
      collected += 1;
      log.write(`news-alerts: installing moto server: ${collecting[1]} (${collected} of ${total})\n`);
    } else if (line.startsWith('Installing collected packages')) {
      log.write('news-alerts: installing moto server: unpacking the packages (about a minute) ...\n');
    }
  };
}

/**
 * Creates ./.venv and installs the pinned requirements when the virtualenv is missing or the
 * requirements changed since the last install. Progress goes to `log` (stderr) so stdout stays
 * clean. Resolves once pip has finished, however long that takes; rejects when it fails.
 */
export async function ensurePythonEnv({ log = process.stderr } = {}) {
  const wanted = sha256(requirementsFile);
  if (existsSync(venvBin('moto_server')) && existsSync(stampFile) && readFileSync(stampFile, 'utf8') === wanted) {
    return;
  }
  log.write('news-alerts: installing moto server into ./.venv (first run only; a few minutes on a slow network) ...\n');
  if (!existsSync(venvBin('python'))) await run(findPython(), ['-m', 'venv', venvDir], { log });
  await run(
    venvBin('python'),
    ['-m', 'pip', 'install', '--disable-pip-version-check', '--progress-bar', 'off', '-r', requirementsFile],
    { log, onLine: pipProgress(log, requirementCount()) },
  );
  writeFileSync(stampFile, wanted);
  log.write('news-alerts: moto server installed\n');
}
