/**
 * docs/samples is generated from the real renderers by scripts/render-samples.ts; this test
 * regenerates the samples in memory and fails when the committed files differ, are missing, or
 * are left over from a sample that no longer exists.
 */
import { describe, expect, it } from 'vitest';
import { compareSamples, renderSamples } from '../../scripts/render-samples.ts';

describe('docs/samples', () => {
  it('is what the renderers produce today (run `npx tsx scripts/render-samples.ts` after a change)', () => {
    expect(compareSamples()).toEqual({ stale: [], missing: [], extra: [] });
  });

  it('covers every channel of immediate alerts and digests, in several languages', () => {
    const paths = [...renderSamples().keys()];
    for (const sample of [
      'alert-ascii',
      'alert-korean',
      'alert-japanese',
      'alert-emoji',
      'alert-long',
      'digest-morning',
      'digest-korean',
      'digest-japanese',
    ]) {
      for (const file of ['email.txt', 'sms.txt', 'slack.json', 'webhook.json']) {
        expect(paths, `${sample}/${file}`).toContain(`${sample}/${file}`);
      }
    }
    expect(paths).toContain('README.md');
  });
});
