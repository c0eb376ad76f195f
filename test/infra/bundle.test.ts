/**
 * The function bundles exactly as `cdk synth` builds them (NodejsFunction with the local esbuild):
 * each one imports in a fresh Node process with the environment the stack sets, so a bundling
 * mistake (ESM/CommonJS interop, a missing dependency, a config crash at cold start) fails here and
 * not in Lambda. Bundle sizes are printed for the record.
 */
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { handlerEnvironment } from '../../bench/cold-start.ts';
import { bundleOf as bundleIn, importBundle } from './bundles.ts';
import { type Synthesized, synthesize } from './synth.ts';

let synth: Synthesized;
beforeAll(() => {
  synth = synthesize({}, { bundle: true });
});

const bundleOf = (descriptionPart: string) => bundleIn(synth, descriptionPart);
const kib = (bytes: number) => `${(bytes / 1024).toFixed(0)} KiB`;

describe.each([
  ['alert function', 'scheduled alert run'],
  ['Slack relay', 'Slack incoming webhooks'],
])('the %s bundle', (label, descriptionPart) => {
  it('is a minified ESM bundle with a source map, and imports with the stack’s environment', () => {
    const { directory, handler, environment } = bundleOf(descriptionPart);
    expect(handler).toBe('index.handler');
    const bundle = join(directory, 'index.mjs');
    expect(existsSync(bundle)).toBe(true);
    expect(existsSync(`${bundle}.map`)).toBe(true);
    const size = statSync(bundle).size;
    console.log(`${label} bundle: ${kib(size)} (source map ${kib(statSync(`${bundle}.map`).size)})`);
    expect(environment.NODE_OPTIONS).toBe('--enable-source-maps');
    const result = importBundle(bundle, environment);
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
  });
});

describe('the alert function bundle', () => {
  it('fails at import, naming the variable, when a required variable is missing', () => {
    const { directory, environment } = bundleOf('scheduled alert run');
    const { NEWS_API_BASE_URL: _dropped, ...rest } = environment;
    const result = importBundle(join(directory, 'index.mjs'), rest);
    expect(result.status).not.toBe(0);
    expect(result.stderr).toMatch(/ConfigError\]?: invalid alert function configuration: NEWS_API_BASE_URL/);
  });
});

describe("the cold-start benchmark's environment", () => {
  it('sets every variable the stack gives the alert function (the handler validates them all at import)', () => {
    const { environment } = bundleOf('scheduled alert run');
    // NODE_OPTIONS is the one the benchmark passes as a flag (`node --enable-source-maps`).
    const stackNames = Object.keys(environment).filter((name) => name !== 'NODE_OPTIONS');
    expect(stackNames.filter((name) => !(name in handlerEnvironment))).toEqual([]);
  });
});
