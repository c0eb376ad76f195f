/**
 * Starts one moto server for the whole test run. It trusts the run's throw-away CA, so HTTPS
 * subscriptions to local receivers are verified like real ones. Tests isolate themselves by
 * creating resources under unique names (see test/support/aws.ts), so no reset is needed.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { startMoto } from '../../sandbox/moto.ts';
import { createCertificateAuthority, type PemPair } from '../../sandbox/tls.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    motoEndpoint: string;
    sandboxCa: PemPair;
  }
}

export default async function setup(project: TestProject) {
  const ca = await createCertificateAuthority();
  const dir = mkdtempSync(join(tmpdir(), 'news-alerts-test-'));
  const caBundlePath = join(dir, 'sandbox-ca.pem');
  writeFileSync(caBundlePath, ca.cert);
  const moto = await startMoto({ caBundlePath });
  project.provide('motoEndpoint', moto.endpoint);
  project.provide('sandboxCa', ca);
  return async () => {
    await moto.stop();
    rmSync(dir, { recursive: true, force: true });
  };
}
