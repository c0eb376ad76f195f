/**
 * The sandbox's expectation check with stories: collapsed copies the ledger records count as
 * accounted for only for audiences that collapse, later versions may be delivered but need not be,
 * and the per-audience line npm start prints from a run's counts.
 */
import { describe, expect, it } from 'vitest';
import type { DeliveryKey, DeliveryRecord } from '#core/ports';
import { deliveryId } from '#core/ports';
import {
  checkUpdateNotices,
  collapseReport,
  collapsingAudiences,
  compareDeliveries,
  describeCollapse,
  isExact,
  readCollapsedCopies,
  simulatorSameStory,
} from '#sandbox/expectations';
import type { SimArticle } from '#sandbox/news-simulator';

const expected = new Map([
  ['chips-team', new Set(['id:1', 'id:2', 'id:3', 'id:4'])],
  ['partner-feed', new Set(['id:7', 'id:8'])],
]);

/** A ledger holding these entries; records which keys it was asked for. */
function ledger(entries: readonly DeliveryRecord[]) {
  const asked: DeliveryKey[] = [];
  return {
    asked,
    async readDeliveries(keys: readonly DeliveryKey[]) {
      asked.push(...keys);
      const wanted = new Set(keys.map(deliveryId));
      return new Map(
        entries.filter((entry) => wanted.has(deliveryId(entry))).map((entry) => [deliveryId(entry), entry]),
      );
    },
  };
}

describe('compareDeliveries with stories', () => {
  it('accounts for collapsed copies, and only for them', () => {
    const received = new Map([
      ['chips-team', ['id:1', 'id:4']],
      ['partner-feed', ['id:7']],
    ]);
    const collapsed = new Map([['chips-team', new Map([['id:2', 'story-a']])]]);
    const checks = compareDeliveries(expected, received, { collapsed });
    expect(checks.get('chips-team')).toMatchObject({ collapsed: ['id:2'], missing: ['id:3'], unexpected: [] });
    expect(checks.get('partner-feed')).toMatchObject({ collapsed: [], missing: ['id:8'] });
    expect(isExact(checks.get('chips-team') as never)).toBe(false);
  });

  it('accepts a later version that matches, without requiring it', () => {
    const received = new Map([['partner-feed', ['id:7', 'id:8', 'id:9']]]);
    const strict = compareDeliveries(expected, received).get('partner-feed');
    expect(strict?.unexpected).toEqual(['id:9']);
    const allowed = new Map([['partner-feed', new Set(['id:9', 'id:10'])]]);
    const lenient = compareDeliveries(expected, received, { allowed }).get('partner-feed');
    expect(lenient).toMatchObject({ unexpected: [], missing: [] });
  });
});

describe('readCollapsedCopies', () => {
  it('asks the ledger only for what collapsing audiences did not receive, and keeps collapsed entries', async () => {
    const store = ledger([
      { audienceId: 'chips-team', articleKey: 'id:2', deliveredAt: 1, ruleIds: ['r'], collapsedInto: 'story-a' },
      { audienceId: 'chips-team', articleKey: 'id:3', deliveredAt: 1, ruleIds: ['r'], heldFor: 'digest' },
      { audienceId: 'partner-feed', articleKey: 'id:8', deliveredAt: 1, ruleIds: ['r'], collapsedInto: 'story-b' },
    ]);
    const received = new Map([['chips-team', ['id:1', 'id:4']]]);
    const copies = await readCollapsedCopies(store, expected, received, new Set(['chips-team']));
    expect(copies).toEqual(new Map([['chips-team', new Map([['id:2', 'story-a']])]]));
    expect(store.asked.map(deliveryId).sort()).toEqual(['chips-team|id:2', 'chips-team|id:3']);
  });

  it('does not read the ledger when nothing is unaccounted for', async () => {
    const store = ledger([]);
    const received = new Map([['chips-team', ['id:1', 'id:2', 'id:3', 'id:4']]]);
    expect(await readCollapsedCopies(store, expected, received, new Set(['chips-team']))).toEqual(new Map());
    expect(store.asked).toEqual([]);
  });
});

describe("readCollapsedCopies against the simulator's truth", () => {
  const sim = (articleId: string, title: string, copyOf?: string) =>
    ({ articleId, title, ...(copyOf === undefined ? {} : { copyOf }) }) as unknown as SimArticle;
  const sameStory = simulatorSameStory([
    sim('1', 'Samsung to invest 10 trillion won'),
    sim('2', '[속보] Samsung to invest 10 trillion won', '1'),
    sim('3', 'Hynix to invest 10 trillion won'),
    sim('4', 'Samsung to invest 10 trillion won'),
    sim('5', 'To invest 10 trillion won, Samsung', '4'),
    sim('6', 'Samsung to invest 20 trillion won'),
  ]);

  it('tells copies, verbatim repeats and different stories apart', () => {
    expect(sameStory('id:2', 'id:1')).toBe(true);
    // A rewritten copy of a verbatim repeat: the originals read the same.
    expect(sameStory('id:5', 'id:2')).toBe(true);
    expect(sameStory('id:3', 'id:1')).toBe(false);
    expect(sameStory('id:6', 'id:1')).toBe(false);
    expect(sameStory('id:9', 'id:1')).toBe(false);
  });

  it('counts a collapse only when the copy really copies the lead its audience received: a wrong merge shows as missing', async () => {
    const store = ledger([
      { audienceId: 'chips-team', articleKey: 'id:2', deliveredAt: 1, ruleIds: ['r'], collapsedInto: 's' },
      { audienceId: 'chips-team', articleKey: 'id:3', deliveredAt: 1, ruleIds: ['r'], collapsedInto: 's' },
      { audienceId: 'chips-team', articleKey: 'story:s', deliveredAt: 1, ruleIds: [], leadArticleKey: 'id:1' },
    ]);
    const received = new Map([['chips-team', ['id:1', 'id:4']]]);
    const copies = await readCollapsedCopies(store, expected, received, new Set(['chips-team']), sameStory);
    expect(copies).toEqual(new Map([['chips-team', new Map([['id:2', 's']])]]));
    const checks = compareDeliveries(expected, received, { collapsed: copies });
    expect(checks.get('chips-team')?.missing).toEqual(['id:3']);
  });
});

describe('collapsingAudiences', () => {
  it('lists the audiences with collapse: story (absent means none)', () => {
    const topicArn = 'arn:aws:sns:us-east-1:123456789012:t';
    const items = [
      { audienceId: 'a', name: 'A', timeZone: 'UTC', topicArn, collapse: 'story' },
      { audienceId: 'b', name: 'B', timeZone: 'UTC', topicArn, collapse: 'none' },
      { audienceId: 'c', name: 'C', timeZone: 'UTC', topicArn },
    ];
    expect(collapsingAudiences(items)).toEqual(new Set(['a']));
  });
});

describe('the collapse line', () => {
  it('says how many copies collapsed into how many stories, and the largest as "1 alert for N copies"', () => {
    const copies = new Map([
      ['id:2', 'story-a'],
      ['id:3', 'story-a'],
      ['id:5', 'story-a'],
      ['id:6', 'story-b'],
      ['id:9', 'story-c'],
      ['id:10', 'story-c'],
      ['id:11', 'story-a'],
    ]);
    const report = collapseReport({ collapse: 'story', alerts: 12, copies });
    expect(report).toEqual({
      collapse: 'story',
      alerts: 12,
      copiesCollapsed: 7,
      stories: 3,
      largestStory: 5,
      updateNotices: 0,
    });
    expect(describeCollapse('chips-team', report)).toBe(
      'chips-team: 12 alerts (7 copies collapsed into 3 stories; the largest: 1 alert for 5 copies)',
    );
  });

  it('reads well for one copy, none, update notices and an audience that wants every copy', () => {
    const one = collapseReport({ collapse: 'story', alerts: 1, copies: new Map([['id:2', 's']]), updateNotices: 1 });
    expect(describeCollapse('quake-oncall', one)).toBe(
      'quake-oncall: 1 alert, 1 update notice (1 copy collapsed into 1 story; the largest: 1 alert for 2 copies)',
    );
    expect(describeCollapse('markets-desk', collapseReport({ collapse: 'story', alerts: 1_200 }))).toBe(
      'markets-desk: 1,200 alerts (no copies of a story to collapse)',
    );
    expect(describeCollapse('partner-feed', collapseReport({ collapse: 'none', alerts: 9 }))).toBe(
      'partner-feed: 9 alerts (collapse: none, every copy sent)',
    );
  });
});

describe('checkUpdateNotices', () => {
  const topicArn = 'arn:aws:sns:us-east-1:123456789012:t';
  const items = [
    { audienceId: 'markets-desk', name: 'M', timeZone: 'UTC', topicArn, updates: 'notify' },
    { audienceId: 'chips-team', name: 'C', timeZone: 'UTC', topicArn },
  ];
  const had = new Map([
    ['markets-desk', new Set(['id:1', 'id:2'])],
    ['chips-team', new Set(['id:1'])],
  ]);

  it('finds nothing wrong with one notice per change about an article the audience had', () => {
    const notices = new Map([
      [
        'markets-desk',
        [
          { deliveryId: 'markets-desk|update:s1#status:UPDATED', articleKey: 'id:1' },
          { deliveryId: 'markets-desk|update:s2#title', articleKey: 'id:2' },
        ],
      ],
    ]);
    expect(checkUpdateNotices(notices, items, had)).toEqual(new Map());
  });

  it('flags a notice to an audience that ignores updates, about an article it never had, or sent twice', () => {
    const twice = { deliveryId: 'markets-desk|update:s1#status:UPDATED', articleKey: 'id:1' };
    const notices = new Map([
      ['markets-desk', [twice, twice, { deliveryId: 'markets-desk|update:s9#title', articleKey: 'id:9' }]],
      ['chips-team', [{ deliveryId: 'chips-team|update:s1#title', articleKey: 'id:1' }]],
    ]);
    const problems = checkUpdateNotices(notices, items, had);
    expect(problems.get('markets-desk')).toEqual([
      'markets-desk|update:s1#status:UPDATED: sent twice',
      'markets-desk|update:s9#title: about id:9, which the audience never had',
    ]);
    expect(problems.get('chips-team')).toEqual(['chips-team|update:s1#title: the audience ignores updates']);
  });
});

describe('compareDeliveries with due times (npm start tells what is not due yet)', () => {
  const now = Date.parse('2026-11-28T15:13:42Z');
  const due = new Map([
    ['id:1', { at: now - 60_000 }],
    ['id:2', { at: now + 14 * 60_000, late: { listedAt: now - 60_000, minutesLate: 20 } }],
    ['id:3', { at: now }],
  ]);

  it('reports a late article whose recheck comes after the last run as not due yet, by name, and the rest as missing', () => {
    const checks = compareDeliveries(expected, new Map([['chips-team', ['id:4']]]), { due: { at: due, now } });
    const chips = checks.get('chips-team');
    expect(chips?.notYetDue).toEqual([
      { articleKey: 'id:2', dueAt: now + 14 * 60_000, listedAt: now - 60_000, minutesLate: 20 },
    ]);
    // Due by the last run (or with no due time at all): missing.
    expect(chips?.missing).toEqual(['id:1', 'id:3']);
    expect(isExact(chips as NonNullable<typeof chips>)).toBe(false);
  });

  it('is exact when everything due arrived and only what is not due yet is absent', () => {
    const checks = compareDeliveries(expected, new Map([['chips-team', ['id:1', 'id:3', 'id:4']]]), {
      due: { at: due, now },
    });
    expect(checks.get('chips-team')).toMatchObject({ missing: [], notYetDue: [{ articleKey: 'id:2' }] });
    expect(isExact(checks.get('chips-team') as NonNullable<ReturnType<typeof checks.get>>)).toBe(true);
  });
});
