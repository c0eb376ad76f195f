/**
 * The publisher function's bundle carries what it runs and nothing of the alert function's
 * reading side: no provider client, no alert-run configuration (which imports the provider's).
 * Its cold start and size depend on it; a stray import (the shared variables once came from
 * functions/alert-run/config.ts) would pull the provider code back in silently.
 */
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';

describe('the publisher bundle', () => {
  it('holds no provider or alert-run code', async () => {
    const result = await build({
      entryPoints: ['functions/publisher/handler.ts'],
      bundle: true,
      platform: 'node',
      format: 'esm',
      write: false,
      metafile: true,
      logLevel: 'silent',
      outfile: 'publisher.mjs',
    });
    const sources = Object.keys(result.metafile.inputs).filter((path) => path.startsWith('functions/'));
    expect(sources).toContain('functions/publisher/process.ts');
    expect(sources.filter((path) => /^functions\/(provider|alert-run)\//.test(path))).toEqual([]);
  });
});
