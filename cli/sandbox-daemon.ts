/**
 * The background process behind `news-alerts sandbox up`: it starts moto server (the local AWS
 * emulator) and, through `startLocalStack`, the news API simulator (or, with a provider URL, no
 * simulator: a real provider), the local HTTPS receivers and everything `npm start` provisions
 * (tables, one topic per example audience with its subscriptions, the API-key secret, the example
 * rules). Then it writes the sandbox descriptor and stays up until `news-alerts sandbox down`
 * sends SIGTERM. Not a command: the CLI spawns it.
 *
 * The API key of a real provider comes from `NEWS_API_KEY` in its environment (never argv); without
 * it the secret is created empty, as the stack creates it, for `news-alerts --local api-key set`.
 * With `--publish-mode sharded` it also hosts the publisher function behind the emulated SQS event
 * source (sandbox/local-stack.ts), so `run --local` queues work items and this process sends them;
 * SIGTERM lets the publisher's batches in flight finish before moto stops.
 *
 * Usage: node --import tsx cli/sandbox-daemon.ts <descriptor path> <start options JSON>
 *        node dist/sandbox-daemon.js <descriptor path> <start options JSON>   (the bundle)
 */
import { copyFileSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, userInfo } from 'node:os';
import { dirname, join } from 'node:path';
import { silentLog } from '#core/ports';
import { exampleSimulator } from '#sandbox/examples';
import { MAIL_FOLDERS } from '#sandbox/local-email';
import { startLocalStack } from '#sandbox/local-stack';
import { startMoto } from '#sandbox/moto';
import { createCertificateAuthority } from '#sandbox/tls';
import { describeLocalStack, SandboxStartSchema, startEnvironment, writeDescriptor } from './sandbox-descriptor.ts';

/** Resource-name prefix of the CLI's sandbox (the same default as local-stack.ts). */
export const sandboxPrefix = 'news-alerts-local-';

function startedBy(): string {
  try {
    return `${userInfo().username}@${hostname()}`;
  } catch {
    return `${process.env.USER ?? 'unknown'}@${hostname()}`;
  }
}

async function main(): Promise<void> {
  const [descriptorPath, startText] = process.argv.slice(2);
  if (!descriptorPath) throw new Error('usage: sandbox-daemon <descriptor path> <start options JSON>');
  const start = SandboxStartSchema.parse(JSON.parse(startText ?? '{}'));
  const dir = dirname(descriptorPath);
  const sandboxCaPath = join(dir, 'sandbox-cli-ca.pem');
  const ca = await createCertificateAuthority();
  // Ending in a line break, so a receiver's certificate appended to it (docs/sandbox.md) is read too.
  writeFileSync(sandboxCaPath, ca.cert.endsWith('\n') ? ca.cert : `${ca.cert}\n`);
  // The provider's CA is copied beside the descriptor: the sandbox does not depend on where it was.
  let providerCaPath = sandboxCaPath;
  if (start.provider?.caPath !== undefined) {
    providerCaPath = join(dir, 'provider-ca.pem');
    copyFileSync(start.provider.caPath, providerCaPath);
  }
  const environment = startEnvironment(start);
  // moto posts HTTPS subscriptions to the local receivers, whose certificates this CA signs.
  // moto's warnings go to sandbox.log: an HTTPS subscriber it could not post to says why there.
  const moto = await startMoto({ caBundlePath: sandboxCaPath, onStderr: (text) => process.stderr.write(text) });
  const stack = await startLocalStack({
    motoEndpoint: moto.endpoint,
    ca,
    prefix: sandboxPrefix,
    // The feed npm start reads (syndicated copies and updates included), kept live.
    simulator: { seed: start.seed, ...exampleSimulator, generate: { ...exampleSimulator.generate, live: true } },
    provider:
      start.provider === undefined
        ? undefined
        : { url: start.provider.url, apiKey: process.env.NEWS_API_KEY?.trim() || undefined },
    environment,
    log: silentLog,
    // Sharded: the publisher runs in this process for as long as the sandbox is up.
    publishMode: start.publishMode,
    // SES email: the email function and the preference endpoint run here too; mail lands in mail/.
    email: { mailDir: join(dir, MAIL_FOLDERS.sandbox) },
  });
  // What `run --local` publishes reaches the email queue; this process sends it (as the email
  // function's event source would), and releases the subscribers' daily digests when due.
  let emailBusy = false;
  const emailTimer = setInterval(() => {
    if (emailBusy || stack.email === undefined) return;
    emailBusy = true;
    const email = stack.email;
    void email
      .deliver()
      .then(() => email.releaseDailyDigests())
      .catch((error: unknown) => process.stderr.write(`email delivery failed: ${(error as Error)?.name}\n`))
      .finally(() => {
        emailBusy = false;
      });
  }, 1000);
  const descriptor = describeLocalStack(stack, {
    endpoint: moto.endpoint,
    prefix: sandboxPrefix,
    caPath: providerCaPath,
    environment,
  });
  writeDescriptor(descriptorPath, {
    ...descriptor,
    daemon: { pid: process.pid, logPath: join(dir, 'sandbox.log'), startedAt: Date.now(), startedBy: startedBy() },
  });
  process.stdout.write(
    `${new Date().toISOString()} sandbox ready: moto ${moto.endpoint}, provider ${descriptor.provider.url}${
      stack.simulator ? ' (simulator)' : ''
    }, ${stack.topics.size} audiences\n`,
  );

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    process.stdout.write(`${new Date().toISOString()} ${signal}: stopping the sandbox\n`);
    try {
      clearInterval(emailTimer);
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
