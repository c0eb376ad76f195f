/**
 * `holds` plans what the next run releases with the run's own functions: in particular, when a
 * raised budget has room for some of the matches one run held (they share their instant), it
 * names the same ones the run releases (delivery-plan.ts `byHeldAt`: by article key in code units).
 */
import { describe, expect, it } from 'vitest';
import { AudienceSchema } from '#core/model';
import type { HeldNotification } from '#core/ports';
import { describeHolds } from '#core/workbench/holds';

const heldAt = Date.UTC(2026, 10, 23, 1, 0);
const now = Date.UTC(2026, 10, 23, 1, 10);

function held(articleKey: string): HeldNotification {
  return {
    key: { audienceId: 'desk', articleKey },
    heldAt,
    reason: 'budget',
    ruleIds: ['r'],
    match: {
      audienceId: 'desk',
      article: {
        key: articleKey,
        title: articleKey,
        summary: '',
        url: `https://news.example.com/${articleKey}`,
        publishedAt: heldAt - 60_000,
        categories: [],
        categoryNames: [],
      },
      rules: [{ ruleId: 'r', urgent: false, reasons: [{ kind: 'keyword', term: 'x' }] }],
    },
  };
}

describe('holds', () => {
  it('names the held match a raised budget releases first as the run orders them, not by locale', () => {
    // Budget 1 used; raised to 2: room for one of the two matches held in one run.
    const audience = AudienceSchema.parse({
      audienceId: 'desk',
      topicArn: 'arn:aws:sns:us-east-1:123456789012:desk',
      timeZone: 'UTC',
      dailyBudget: 2,
      digestTimes: ['18:00'],
    });
    const { held: views } = describeHolds(audience, [held('id:a2'), held('id:B1')], [], now, 1);
    // Code units put `B` (0x42) before `a` (0x61); localeCompare put `a2` first.
    expect(views.map((view) => [view.articleKey, view.when])).toEqual([
      ['id:B1', 'next-run'],
      ['id:a2', 'scheduled'],
    ]);
  });
});
