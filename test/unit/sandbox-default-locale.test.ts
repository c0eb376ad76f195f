/**
 * The local sandbox's default locale: cdk.json's `defaultLocale` (what a deploy from the same
 * checkout uses), `en-US` without a readable one.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { projectDefaultLocale } from '#sandbox/local-stack';

let dir: string | undefined;
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

describe('projectDefaultLocale', () => {
  it('is the shipped cdk.json value by default', () => {
    const shipped = JSON.parse(readFileSync(new URL('../../cdk.json', import.meta.url), 'utf8')) as {
      context: { defaultLocale: string };
    };
    expect(projectDefaultLocale()).toBe(shipped.context.defaultLocale);
  });

  it('reads defaultLocale from a cdk.json, and falls back to en-US without one or without the key', () => {
    dir = mkdtempSync(join(tmpdir(), 'news-alerts-cdk-'));
    const file = join(dir, 'cdk.json');
    writeFileSync(file, JSON.stringify({ context: { defaultLocale: 'ko-KR' } }));
    expect(projectDefaultLocale(file)).toBe('ko-KR');
    writeFileSync(file, JSON.stringify({ context: {} }));
    expect(projectDefaultLocale(file)).toBe('en-US');
    expect(projectDefaultLocale(join(dir, 'missing.json'))).toBe('en-US');
  });
});
