/**
 * Set-up of the `system` tests (vitest.config.ts), once per test run:
 *
 * - builds the CLI into dist/ from the sources (`npm run build`, about a third of a second), so
 *   the CLI tests, which run the built `news-alerts`, always run what the sources say, never a
 *   bundle left from an earlier build (in watch mode again before every rerun);
 * - starts one moto server that trusts the run's throw-away CA, so HTTPS subscriptions to local
 *   receivers are verified like real ones. Tests isolate themselves by creating resources under
 *   unique names (see test/support/aws.ts), so no reset is needed.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { TestProject } from 'vitest/node';
import { startMoto } from '../../sandbox/moto.ts';
import { projectRoot } from '../../sandbox/python-env.mjs';
import { createCertificateAuthority, type PemPair } from '../../sandbox/tls.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    motoEndpoint: string;
    sandboxCa: PemPair;
  }
}

/** `npm run build`: the CLI bundle in dist/, from the sources as they are now. */
async function buildCli(): Promise<void> {
  try {
    await promisify(execFile)(process.execPath, [join(projectRoot, 'scripts', 'build-cli.mjs')], {
      cwd: projectRoot,
      encoding: 'utf8',
    });
  } catch (error) {
    const stderr = (error as { stderr?: string }).stderr ?? '';
    throw new Error(`the CLI build (node scripts/build-cli.mjs) failed; the CLI tests need it:\n${stderr}`, {
      cause: error,
    });
  }
}

/**
 * Points the run's temporary files (`os.tmpdir()`: the test workers, moto, Chromium and the CLI
 * processes they start all inherit TMPDIR) at a directory of this run's own, removed when the run
 * ends. Without it every run left its synthesized CDK assemblies (`cdk.out*`, CDK's default when an
 * App is given no outdir), mail directories and browser profiles in /tmp: about 150 directories
 * and tens of megabytes a run.
 */
function useOwnTemporaryDirectory(): { remove(): void } {
  const before = process.env.TMPDIR;
  const directory = mkdtempSync(join(tmpdir(), 'news-alerts-test-run-'));
  process.env.TMPDIR = directory;
  return {
    remove() {
      if (before === undefined) delete process.env.TMPDIR;
      else process.env.TMPDIR = before;
      rmSync(directory, { recursive: true, force: true });
    },
  };
}

async function startAws() {
  const ca = await createCertificateAuthority();
  const dir = mkdtempSync(join(tmpdir(), 'news-alerts-test-'));
  const caBundlePath = join(dir, 'sandbox-ca.pem');
  writeFileSync(caBundlePath, ca.cert);
  try {
    const moto = await startMoto({ caBundlePath });
    return {
      ca,
      moto,
      async stop() {
        await moto.stop();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
}

export default async function setup(project: TestProject) {
  const temporary = useOwnTemporaryDirectory();
  project.onTestsRerun(buildCli);
  const [build, aws] = await Promise.allSettled([buildCli(), startAws()]);
  if (build.status === 'rejected' || aws.status === 'rejected') {
    if (aws.status === 'fulfilled') await aws.value.stop();
    temporary.remove();
    throw build.status === 'rejected' ? build.reason : (aws as PromiseRejectedResult).reason;
  }
  project.provide('motoEndpoint', aws.value.moto.endpoint);
  project.provide('sandboxCa', aws.value.ca);
  return async () => {
    try {
      await aws.value.stop();
    } finally {
      temporary.remove();
    }
  };
}
