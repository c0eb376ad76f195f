/**
 * `publishMode: single` (the default) synthesizes exactly the template it did before sharded
 * publishing existed (issue 14): the golden files under `__golden__/` were synthesized from the
 * commit before the sharded stack was added, for the shipped configuration and for one that uses
 * every option, with bundling skipped. Asset object keys (`<sha256>.zip`) are compared as
 * "some asset": with bundling skipped CDK still hashes the source tree, so they change with every
 * file of the checkout (a clean clone gives other hashes than a work tree). Any other difference
 * in a resource, property, output or order-insensitive JSON value fails here.
 *
 * A change to the single-mode stack that is meant: review the diff, then accept it with
 * `npx vitest run test/infra/single-mode-template.test.ts --update` (and `npx biome check --write
 * test/infra/__golden__`).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { fullContext, synthesize } from './synth.ts';

const golden = (name: string) => new URL(`./__golden__/single-mode-${name}.template.json`, import.meta.url);

const cases: Record<string, Record<string, unknown>> = { shipped: {}, full: fullContext };

/** The template with every asset object key (`<sha256>.zip`) replaced by one placeholder. */
const withoutAssetHashes = (template: unknown): unknown =>
  JSON.parse(JSON.stringify(template).replace(/"[0-9a-f]{64}\.zip"/g, '"<asset>.zip"'));

const goldenTemplate = (name: string): unknown => withoutAssetHashes(JSON.parse(readFileSync(golden(name), 'utf8')));

describe.each(Object.keys(cases))('publishMode single, %s configuration', (name) => {
  const template = (overrides: Record<string, unknown> = {}) =>
    synthesize({ ...cases[name], ...overrides }).template.toJSON();

  it('synthesizes the template it did before sharded publishing', () => {
    const synthesized = template();
    if (expect.getState().snapshotState.snapshotUpdateState === 'all') {
      writeFileSync(golden(name), `${JSON.stringify(synthesized, null, 2)}\n`);
    }
    expect(withoutAssetHashes(synthesized)).toEqual(goldenTemplate(name));
  });

  it('ignores the publisher settings, which only sharded mode reads', () => {
    expect(
      withoutAssetHashes(template({ publishMode: 'single', publisherConcurrency: 1000, publisherBatchSize: 1 })),
    ).toEqual(goldenTemplate(name));
  });
});
