/**
 * The `reading` line of `news-alerts run` (cli/run.ts): how the run read the provider, and what
 * counted reading did about late articles, or why it paused.
 */
import { describe, expect, it } from 'vitest';
import { describeReading } from '../../cli/run.ts';

const incremental = {
  mode: 'incremental',
  orderBefore: 'newest-first',
  orderAfter: 'newest-first',
  daysStoppedEarly: 1,
  daysResumed: 0,
  daysReadFully: 0,
};

describe('the reading line', () => {
  it('says how many late articles a recheck found, and in how many pages', () => {
    expect(describeReading({ ...incremental, counted: { days: 2, rechecks: 1, recheckPages: 9, found: 3 } })).toBe(
      'incremental; order newest-first; 1 day(s) stopped early; late articles: rechecked 1 day(s) in 9 page(s), 3 found',
    );
    expect(describeReading({ ...incremental, counted: { days: 2, rechecks: 0, recheckPages: 0, found: 0 } })).toBe(
      'incremental; order newest-first; 1 day(s) stopped early; late articles: 2 day(s) counted, nothing to recheck',
    );
  });

  it('says why counting paused, and says nothing of it for a provider that cannot be counted', () => {
    expect(
      describeReading({
        ...incremental,
        mode: 'sweep',
        reason: 'the previous run ended failed',
        counted: { days: 1, rechecks: 0, recheckPages: 0, found: 0, paused: 'articles were removed' },
      }),
    ).toBe('full sweep (the previous run ended failed); order newest-first; counting paused: articles were removed');
    expect(describeReading(incremental)).toBe('incremental; order newest-first; 1 day(s) stopped early');
  });
});
