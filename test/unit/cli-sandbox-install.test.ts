/**
 * The first `sandbox up` (and `npm start`, `npm test`) on a fresh clone installs moto server into
 * ./.venv (sandbox/python-env.mjs): awaited with pip's progress for as long as pip works, and pip
 * never left running when the process that started it ends (Ctrl-C, SIGTERM). Run in a copy of
 * the module in a scratch project, with a stand-in `python` whose pip waits until the test lets
 * it finish, so nothing is downloaded and the real ./.venv is not touched.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import {
  chmodSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  watch,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

let project: string;
let children: ChildProcess[] = [];
let pipPids: number[] = [];

/**
 * A stand-in for python 3.11: `-m venv` makes a virtualenv of itself with a `moto_server`, and
 * `-m pip install` prints what pip prints, writes its pid, and finishes only once `go` exists.
 */
const fakePython = (dir: string) => `#!${process.execPath}
const fs = process.getBuiltinModule('node:fs');
const path = process.getBuiltinModule('node:path');
const [flag, module, target] = process.argv.slice(2);
if (flag === '-c') { console.log('3.11'); process.exit(0); }
if (module === 'venv') {
  fs.mkdirSync(path.join(target, 'bin'), { recursive: true });
  fs.copyFileSync(process.argv[1], path.join(target, 'bin', 'python'));
  fs.chmodSync(path.join(target, 'bin', 'python'), 0o755);
  fs.writeFileSync(path.join(target, 'bin', 'moto_server'), '');
  process.exit(0);
}
console.log('Collecting moto[server]==5.2.5');
console.log('  Downloading moto-5.2.5-py3-none-any.whl (4.1 MB)');
console.log('Collecting boto3==1.44.5');
// Written whole, then renamed: the test reads it as soon as the name appears.
fs.writeFileSync(${JSON.stringify(join(dir, 'pip.pid.partial'))}, String(process.pid));
fs.renameSync(${JSON.stringify(join(dir, 'pip.pid.partial'))}, ${JSON.stringify(join(dir, 'pip.pid'))});
setInterval(() => {
  if (!fs.existsSync(${JSON.stringify(join(dir, 'go'))})) return;
  console.log('Installing collected packages: boto3, moto');
  console.log('Successfully installed boto3-1.44.5 moto-5.2.5');
  process.exit(0);
}, 20);
`;

beforeEach(() => {
  project = mkdtempSync(join(tmpdir(), 'news-alerts-install-'));
  mkdirSync(join(project, 'sandbox'));
  copyFileSync(new URL('../../sandbox/python-env.mjs', import.meta.url), join(project, 'sandbox', 'python-env.mjs'));
  writeFileSync(
    join(project, 'sandbox', 'requirements.txt'),
    '# pinned\nmoto[server]==5.2.5\nboto3==1.44.5\ncfn-lint==1.58.0\n',
  );
  writeFileSync(join(project, 'python'), fakePython(project));
  chmodSync(join(project, 'python'), 0o755);
  // Only the stand-in on the PATH: a real python3 must never be found (it would download moto).
  copyFileSync(join(project, 'python'), join(project, 'python3'));
  chmodSync(join(project, 'python3'), 0o755);
});

afterEach(() => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  for (const pid of pipPids) if (pid > 1 && isAlive(pid)) process.kill(pid, 'SIGKILL');
  children = [];
  pipPids = [];
  rmSync(project, { recursive: true, force: true });
});

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Resolves once `name` exists in the project folder (a file event, no polling). */
function fileAppears(name: string): Promise<void> {
  return new Promise((resolve) => {
    const watcher = watch(project, () => {
      if (!existsSync(join(project, name))) return;
      watcher.close();
      resolve();
    });
    if (existsSync(join(project, name))) {
      watcher.close();
      resolve();
    }
  });
}

/** A process that installs as `sandbox up` does: ensurePythonEnv of the scratch project. */
function installer(): {
  child: ChildProcess;
  stderr: () => string;
  exited: Promise<{ code: number | null; signal: string | null }>;
  /** Also its stderr read to the end. */
  closed: Promise<void>;
} {
  const module = pathToFileURL(join(project, 'sandbox', 'python-env.mjs')).href;
  const child = spawn(
    process.execPath,
    ['--input-type=module', '-e', `const m = await import(${JSON.stringify(module)}); await m.ensurePythonEnv();`],
    { env: { ...process.env, PYTHON: join(project, 'python'), PATH: project }, stdio: ['ignore', 'ignore', 'pipe'] },
  );
  children.push(child);
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  // 'exit', not 'close': a pip left running would hold the stderr pipe open, and 'close' never come.
  const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  const closed = new Promise<void>((resolve) => child.once('close', () => resolve()));
  return { child, stderr: () => stderr, exited, closed };
}

/** The pid of the stand-in pip, once it runs; fails with the installer's stderr if it ends first. */
async function pipPid(install: ReturnType<typeof installer>): Promise<number> {
  await Promise.race([
    fileAppears('pip.pid'),
    install.exited.then((outcome) => {
      throw new Error(`the installer ended (${JSON.stringify(outcome)}) before pip ran:\n${install.stderr()}`);
    }),
  ]);
  const pid = Number(readFileSync(join(project, 'pip.pid'), 'utf8'));
  // Never 0 or 1: signalling those would reach this process group or init.
  expect(Number.isInteger(pid) && pid > 1, `pip's pid: ${pid}`).toBe(true);
  pipPids.push(pid);
  return pid;
}

describe('installing moto server on a fresh clone', () => {
  it('waits for pip as long as it works, showing each package it collects, and is installed after', async () => {
    const install = installer();
    const { stderr, exited } = install;
    await pipPid(install);
    writeFileSync(join(project, 'go'), '');
    expect(await exited).toEqual({ code: 0, signal: null });
    await install.closed;
    expect(stderr()).toContain('news-alerts: installing moto server into ./.venv');
    expect(stderr()).toContain('news-alerts: installing moto server: moto[server]==5.2.5 (1 of 3)');
    expect(stderr()).toContain('news-alerts: installing moto server: boto3==1.44.5 (2 of 3)');
    expect(stderr()).toContain('news-alerts: moto server installed');
    expect(existsSync(join(project, '.venv', '.requirements.sha256'))).toBe(true);
  });

  it.each(['SIGTERM', 'SIGINT'] as const)(
    '%s while pip works stops pip too: nothing is left running',
    async (signal) => {
      const install = installer();
      const { child, stderr, exited } = install;
      const pid = await pipPid(install);
      expect(isAlive(pid)).toBe(true);
      child.kill(signal);
      const { signal: endedBy } = await exited;
      expect(endedBy).toBe(signal);
      expect(isAlive(pid), `pip (pid ${pid}) still runs after the installer ended:\n${stderr()}`).toBe(false);
      // Not installed: the next start installs again.
      expect(existsSync(join(project, '.venv', '.requirements.sha256'))).toBe(false);
    },
  );
});
