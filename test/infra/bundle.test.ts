/**
 * The function bundles exactly as `cdk synth` builds them (NodejsFunction with the local esbuild):
 * each one imports in a fresh Node process with the environment the stack sets, so a bundling
 * mistake (ESM/CommonJS interop, a missing dependency, a config crash at cold start) fails here and
 * not in Lambda. Bundle sizes are printed for the record.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { type Synthesized, synthesize } from './synth.ts';

type FunctionResource = {
  Properties: {
    Description: string;
    Handler: string;
    Code: { S3Key: string };
    Environment: { Variables: Record<string, unknown> };
  };
};

let synth: Synthesized;
beforeAll(() => {
  synth = synthesize({}, { bundle: true });
});

function bundleOf(descriptionPart: string) {
  const functions = Object.values(synth.template.findResources('AWS::Lambda::Function')) as FunctionResource[];
  const fn = functions.find((candidate) => candidate.Properties.Description.includes(descriptionPart));
  if (fn === undefined) throw new Error(`no function described as ${descriptionPart}`);
  const directory = join(synth.assembly.directory, `asset.${fn.Properties.Code.S3Key.replace(/\.zip$/, '')}`);
  // Tokens (table names, ARNs) cannot resolve outside CloudFormation: any non-empty string will do.
  const environment = Object.fromEntries(
    Object.entries(fn.Properties.Environment.Variables).map(([name, value]) => [
      name,
      typeof value === 'string' ? value : `resolved-at-deploy-${name.toLowerCase()}`,
    ]),
  );
  return { directory, handler: fn.Properties.Handler, environment };
}

/** Imports the bundle in a fresh Node process (as Lambda's runtime does) and checks the handler export. */
function importBundle(file: string, environment: Record<string, string>) {
  const script = `const m = await import(${JSON.stringify(pathToFileURL(file).href)}); if (typeof m.handler !== 'function') { console.error('no handler export'); process.exit(3); }`;
  return spawnSync(process.execPath, ['--enable-source-maps', '--input-type=module', '-e', script], {
    encoding: 'utf8',
    env: {
      PATH: process.env.PATH,
      AWS_REGION: 'us-east-1',
      AWS_ACCESS_KEY_ID: 'test',
      AWS_SECRET_ACCESS_KEY: 'test',
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
      ...environment,
    },
  });
}

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
