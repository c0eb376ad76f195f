/**
 * `publishMode: single` (the default) synthesizes exactly the template it did before sharded
 * publishing existed (issue 14): the golden files under `__golden__/` were synthesized from the
 * commit before the sharded stack was added, for the shipped configuration and for one that uses
 * every option, with bundling skipped (so function code edits do not change them). Any difference
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

describe.each(Object.keys(cases))('publishMode single, %s configuration', (name) => {
  const template = (overrides: Record<string, unknown> = {}) =>
    synthesize({ ...cases[name], ...overrides }).template.toJSON();

  it('synthesizes the template it did before sharded publishing', () => {
    const synthesized = template();
    if (expect.getState().snapshotState.snapshotUpdateState === 'all') {
      writeFileSync(golden(name), `${JSON.stringify(synthesized, null, 2)}\n`);
    }
    expect(synthesized).toEqual(JSON.parse(readFileSync(golden(name), 'utf8')));
  });

  it('ignores the publisher settings, which only sharded mode reads', () => {
    expect(template({ publishMode: 'single', publisherConcurrency: 1000, publisherBatchSize: 1 })).toEqual(
      JSON.parse(readFileSync(golden(name), 'utf8')),
    );
  });
});
