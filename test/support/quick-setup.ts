/**
 * Runs around every file of the quick project (vitest.config.ts). `npm run test:quick` runs its
 * files without isolation (`--no-isolate`: one worker runs file after file with the modules it has
 * loaded, which halves the time), so global state one file leaves would reach the next: after each
 * file, the registered secrets, mocks, fake timers, stubbed globals and environment variables go
 * back to how the file found them, and so does the CLI's hint target (a file that runs a command
 * with --sandbox-file would otherwise put that path into the next file's hints).
 */
import { afterAll, vi } from 'vitest';
import { clearRegisteredSecrets } from '#shared/secret-redaction';
import { setHintTarget } from '../../cli/hints.ts';

const environment = { ...process.env };

afterAll(() => {
  clearRegisteredSecrets();
  setHintTarget({});
  vi.useRealTimers();
  vi.restoreAllMocks();
  vi.unstubAllGlobals();
  vi.unstubAllEnvs();
  for (const name of Object.keys(process.env)) if (!(name in environment)) delete process.env[name];
  Object.assign(process.env, environment);
});
