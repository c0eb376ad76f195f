/**
 * Every Lambda function's bundle reads its input with zod/mini, never zod's classic API. Classic
 * zod is the whole library with its chainable methods: about 440 KiB more bundle and some 20 ms
 * more CPU at every cold start (a bundle of one small schema each way: 31.6 against 10.7 ms),
 * which a subscriber opening the preference page, or a Slack post, waits for. One stray
 * `import { z } from 'zod'` anywhere under functions/ brings it back silently; the CLI, the stack
 * and the simulator may use it.
 */
import { existsSync, readdirSync } from 'node:fs';
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';

const entries = readdirSync('functions', { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .map((entry) => `functions/${entry.name}/handler.ts`)
  .filter((path) => existsSync(path));

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
    const zod = Object.keys(result.metafile.inputs).filter((path) => path.includes('node_modules/zod/'));
    expect(zod.filter((path) => path.includes('/v4/classic/') || /node_modules\/zod\/index\.js$/.test(path))).toEqual(
      [],
    );
    expect(zod.some((path) => path.includes('/v4/mini/'))).toBe(true);
  });
});
