/** The machine and code a benchmark ran on, for the report header. */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import os from 'node:os';

/** What the report says about where and when it was measured. */
export interface MachineInfo {
  readonly cpuModel: string;
  readonly cores: number;
  readonly memoryGiB: number;
  readonly node: string;
  readonly platform: string;
  /** ISO 8601, when the benchmark started. */
  readonly date: string;
  /** `git rev-parse HEAD`, plus ` (+ uncommitted changes)` when the work tree differs from it. */
  readonly commit: string;
  /** 1, 5 and 15-minute load averages at the start. */
  readonly loadStart: readonly number[];
}

/** Read-only git query; `GIT_OPTIONAL_LOCKS=0` keeps `git status` from refreshing the index. */
function git(args: readonly string[], cwd: string): string | undefined {
  const result = spawnSync('git', args, { cwd, encoding: 'utf8', env: { ...process.env, GIT_OPTIONAL_LOCKS: '0' } });
  return result.status === 0 ? result.stdout.trim() : undefined;
}

/** The checked-out commit, marked when tracked files have uncommitted changes. */
export function gitCommit(projectRoot: string): string {
  const head = git(['rev-parse', 'HEAD'], projectRoot);
  if (head === undefined) return 'unknown (not a git checkout)';
  const status = git(['status', '--porcelain', '--untracked-files=no'], projectRoot);
  return status === undefined || status === '' ? head : `${head} (+ uncommitted changes)`;
}

/** The CPU model from the kernel (os.cpus() truncates some model names). */
function cpuModel(): string {
  try {
    const match = /^model name\s*:\s*(.+)$/m.exec(readFileSync('/proc/cpuinfo', 'utf8'));
    if (match?.[1]) return match[1].trim();
  } catch {
    // not Linux
  }
  return os.cpus()[0]?.model ?? 'unknown';
}

/** Describes this machine now. */
export function describeMachine(projectRoot: string): MachineInfo {
  return {
    cpuModel: cpuModel(),
    cores: os.availableParallelism(),
    memoryGiB: os.totalmem() / 2 ** 30,
    node: process.version,
    platform: `${os.type()} ${os.release()} ${os.arch()}`,
    date: new Date().toISOString(),
    commit: gitCommit(projectRoot),
    loadStart: os.loadavg(),
  };
}

/** Load averages, formatted `0.52 0.81 1.10`. */
export const formatLoad = (load: readonly number[]): string => load.map((value) => value.toFixed(2)).join(' ');
