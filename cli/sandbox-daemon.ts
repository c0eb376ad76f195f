/**
 * The background process behind `news-alerts sandbox up`: it starts moto server (the local AWS
 * emulator) and, through `startLocalStack`, the news API simulator, the local HTTPS receivers and
 * everything `npm start` provisions (tables, one topic per example audience with its
 * subscriptions, the API-key secret, the example rules). Then it writes the sandbox descriptor
 * and stays up until `news-alerts sandbox down` sends SIGTERM. Not a command: the CLI spawns it.
 *
 * Usage: node --import tsx cli/sandbox-daemon.ts <descriptor path> [seed]
 */
import { rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { silentLog } from '#core/ports';
import { startLocalStack } from '#sandbox/local-stack';
import { startMoto } from '#sandbox/moto';
import { createCertificateAuthority } from '#sandbox/tls';
import { describeLocalStack, writeDescriptor } from './sandbox-descriptor.ts';

/** Resource-name prefix of the CLI's sandbox (the same default as local-stack.ts). */
export const sandboxPrefix = 'news-alerts-local-';

/** A fresh sandbox has no watermark: the first run looks back a day, so there is something to see. */
export const sandboxEnvironment = { INITIAL_LOOKBACK_MINUTES: '1440' } as const;

async function main(): Promise<void> {
  const [descriptorPath, seedText] = process.argv.slice(2);
  if (!descriptorPath) throw new Error('usage: sandbox-daemon <descriptor path> [seed]');
  const dir = dirname(descriptorPath);
  const caPath = join(dir, 'sandbox-cli-ca.pem');
  const ca = await createCertificateAuthority();
  writeFileSync(caPath, ca.cert);
  // moto posts HTTPS subscriptions to the local receivers, whose certificates this CA signs.
  const moto = await startMoto({ caBundlePath: caPath });
  const stack = await startLocalStack({
    motoEndpoint: moto.endpoint,
    ca,
    prefix: sandboxPrefix,
    simulator: { seed: Number(seedText ?? 7), generate: { days: 2, perDay: 240, live: true } },
    environment: sandboxEnvironment,
    log: silentLog,
  });
  const descriptor = describeLocalStack(stack, {
    endpoint: moto.endpoint,
    prefix: sandboxPrefix,
    caPath,
    environment: sandboxEnvironment,
  });
  writeDescriptor(descriptorPath, {
    ...descriptor,
    daemon: { pid: process.pid, logPath: join(dir, 'sandbox.log'), startedAt: Date.now() },
  });
  process.stdout.write(
    `${new Date().toISOString()} sandbox ready: moto ${moto.endpoint}, simulator ${stack.simulator?.url ?? '-'}, ${stack.topics.size} audiences\n`,
  );

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    process.stdout.write(`${new Date().toISOString()} ${signal}: stopping the sandbox\n`);
    try {
      await stack.stop();
    } finally {
      await moto.stop();
      rmSync(descriptorPath, { force: true });
      process.exit(0);
    }
  };
  process.once('SIGTERM', () => void stop('SIGTERM'));
  process.once('SIGINT', () => void stop('SIGINT'));
}

main().catch((error: unknown) => {
  process.stderr.write(
    `sandbox failed to start: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  process.exit(1);
});
