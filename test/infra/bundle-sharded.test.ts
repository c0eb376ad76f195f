/**
 * Sharded mode's bundles as `cdk synth -c publishMode=sharded` builds them: the publisher and the
 * alert function (which then loads the SQS client at cold start) each import in a fresh Node
 * process with the environment the stack sets, so a bundling or configuration mistake of the
 * sharded path fails here and not in Lambda.
 */
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { bundleOf, importBundle } from './bundles.ts';
import { type Synthesized, synthesize } from './synth.ts';

let synth: Synthesized;
beforeAll(() => {
  synth = synthesize({ publishMode: 'sharded' }, { bundle: true });
});

// The work queue's URL is a Ref, which CloudFormation resolves to the queue's https URL.
const resolve = (name: string) =>
  name === 'WORK_QUEUE_URL'
    ? 'https://sqs.us-east-1.amazonaws.com/123456789012/news-alerts-work'
    : `resolved-at-deploy-${name.toLowerCase()}`;

describe.each([
  ['publisher', 'publishes queued work items'],
  ['alert function (sharded)', 'scheduled alert run'],
])('the %s bundle', (label, descriptionPart) => {
  it('is a minified ESM bundle with a source map, and imports with the stack’s environment', () => {
    const { directory, handler, environment } = bundleOf(synth, descriptionPart, resolve);
    expect(handler).toBe('index.handler');
    const bundle = join(directory, 'index.mjs');
    expect(existsSync(`${bundle}.map`)).toBe(true);
    console.log(`${label} bundle: ${(statSync(bundle).size / 1024).toFixed(0)} KiB`);
    const result = importBundle(bundle, environment);
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
  });
});

describe('the sharded bundles at cold start', () => {
  it('the alert function refuses sharded mode without its queue, naming the variable', () => {
    const { directory, environment } = bundleOf(synth, 'scheduled alert run', resolve);
    expect(environment.PUBLISH_MODE).toBe('sharded');
    const { WORK_QUEUE_URL: _dropped, ...rest } = environment;
    const result = importBundle(join(directory, 'index.mjs'), rest);
    expect(result.status).not.toBe(0);
    expect(result.stderr).toMatch(/ConfigError\]?: invalid alert function configuration: WORK_QUEUE_URL is required/);
  });

  it('the publisher refuses to start without its state table, naming the variable', () => {
    const { directory, environment } = bundleOf(synth, 'publishes queued work items', resolve);
    const { STATE_TABLE_NAME: _dropped, ...rest } = environment;
    const result = importBundle(join(directory, 'index.mjs'), rest);
    expect(result.status).not.toBe(0);
    expect(result.stderr).toMatch(/ConfigError\]?: invalid publisher function configuration: STATE_TABLE_NAME/);
  });
});
