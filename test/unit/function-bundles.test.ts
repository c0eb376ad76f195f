/**
 * What the Lambda functions' bundles hold. A stray import changes a function's cold start and size
 * silently, so these are checked on the bundles esbuild builds from each handler:
 *
 * - Every bundle reads its input with zod/mini, never zod's classic API. Classic zod is the whole
 *   library with its chainable methods: about 420 KiB more bundle and 15-30 ms more CPU at every
 *   cold start (docs/performance.md), which a subscriber opening the preference page, or a Slack
 *   post, waits for. The CLI, the stack and the simulator may use it.
 * - The publisher's bundle holds nothing of the alert function's reading side: no provider client,
 *   no alert-run configuration (which imports the provider's; the shared variables once came from
 *   functions/alert-run/config.ts and pulled the provider code in).
 */
import { existsSync, readdirSync } from 'node:fs';
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';

const entries = readdirSync('functions', { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .map((entry) => `functions/${entry.name}/handler.ts`)
  .filter((path) => existsSync(path));

/** The source files esbuild put in the bundle of `entry` (paths relative to the repository). */
async function bundleInputs(entry: string): Promise<string[]> {
  const result = await build({
    entryPoints: [entry],
    bundle: true,
    platform: 'node',
    format: 'esm',
    write: false,
    metafile: true,
    logLevel: 'silent',
    outfile: 'bundle.mjs',
  });
  return Object.keys(result.metafile.inputs);
}

describe('the Lambda bundles', () => {
  it('are found (one per function directory with a handler)', () => {
    expect(entries).toEqual(
      expect.arrayContaining([
        'functions/alert-run/handler.ts',
        'functions/email/handler.ts',
        'functions/email-events/handler.ts',
        'functions/preferences/handler.ts',
        'functions/publisher/handler.ts',
        'functions/slack-relay/handler.ts',
      ]),
    );
  });

  it.each(entries)('%s holds zod/mini and none of classic zod', async (entry) => {
    const zod = (await bundleInputs(entry)).filter((path) => path.includes('node_modules/zod/'));
    expect(zod.filter((path) => path.includes('/v4/classic/') || /node_modules\/zod\/index\.js$/.test(path))).toEqual(
      [],
    );
    expect(zod.some((path) => path.includes('/v4/mini/'))).toBe(true);
  });

  it('the publisher holds no provider or alert-run code', async () => {
    const sources = (await bundleInputs('functions/publisher/handler.ts')).filter((path) =>
      path.startsWith('functions/'),
    );
    expect(sources).toContain('functions/publisher/process.ts');
    expect(sources.filter((path) => /^functions\/(provider|alert-run)\//.test(path))).toEqual([]);
  });
});
