/**
 * The delivery planner and the release times it implies: quiet hours across midnight, urgent
 * matches by rule and by category, the daily budget per LOCAL day, daylight-saving transitions in
 * America/New_York and Europe/London, and a time-zone change between hold and release.
 */
import { Settings } from 'luxon';
import { describe, expect, it } from 'vitest';
import {
  earliestDueAt,
  isQuietAt,
  localDate,
  nextDigestAt,
  nextLocalTime,
  planDelivery,
  planHeldRelease,
  quietHoursEndAfter,
  releaseDueAt,
  urgencyOf,
} from '#core/delivery-plan';
import { type Article, type Audience, type AudienceMatch, AudienceSchema, type RuleMatch } from '#core/model';

const audienceFor = (overrides: Record<string, unknown> = {}): Audience =>
  AudienceSchema.parse({
    audienceId: 'desk',
    topicArn: 'arn:aws:sns:us-east-1:123456789012:desk',
    timeZone: 'Asia/Seoul',
    ...overrides,
  });

const article: Article = {
  key: 'id:1',
  title: 'Quake shakes the coast',
  summary: '',
  url: 'https://news.example.com/1',
  publishedAt: Date.parse('2026-11-22T00:00:00Z'),
  categories: ['003002000'],
  categoryNames: ['Society > Disasters'],
};

const plainRule: RuleMatch = { ruleId: 'news', urgent: false, reasons: [{ kind: 'keyword', term: 'quake' }] };
const urgentRule: RuleMatch = { ruleId: 'quakes', urgent: true, reasons: [{ kind: 'keyword', term: 'quake' }] };

const matchWith = (rules: RuleMatch[] = [plainRule], overrides: Partial<Article> = {}): AudienceMatch => ({
  audienceId: 'desk',
  article: { ...article, ...overrides },
  rules,
});

/** An instant given as local wall time in a zone, e.g. at('2026-11-22T23:30', 'Asia/Seoul'). */
const at = (local: string, zone: string): number => {
  const utc = Date.parse(`${local}:00Z`);
  // Seoul and Tokyo have no DST; for the other zones the tests pass ISO strings with offsets.
  const offsets: Record<string, number> = { 'Asia/Seoul': 9, 'Asia/Tokyo': 9, UTC: 0 };
  const hours = offsets[zone];
  if (hours === undefined) throw new Error(`no fixed offset for ${zone}`);
  return utc - hours * 3_600_000;
};
const iso = (epochMs: number) => new Date(epochMs).toISOString();

describe('quiet hours', () => {
  const overnight = audienceFor({ quietHours: { start: '22:00', end: '07:00' } });

  it('hold across midnight in the audience zone, and only there', () => {
    expect(isQuietAt(at('2026-11-22T21:59', 'Asia/Seoul'), overnight)).toBe(false);
    expect(isQuietAt(at('2026-11-22T22:00', 'Asia/Seoul'), overnight)).toBe(true);
    expect(isQuietAt(at('2026-11-22T23:59', 'Asia/Seoul'), overnight)).toBe(true);
    expect(isQuietAt(at('2026-11-23T00:00', 'Asia/Seoul'), overnight)).toBe(true);
    expect(isQuietAt(at('2026-11-23T06:59', 'Asia/Seoul'), overnight)).toBe(true);
    expect(isQuietAt(at('2026-11-23T07:00', 'Asia/Seoul'), overnight)).toBe(false);
  });

  it('a daytime window does not wrap, and equal start and end mean no quiet hours', () => {
    const lunch = audienceFor({ quietHours: { start: '12:00', end: '13:30' } });
    expect(isQuietAt(at('2026-11-22T11:59', 'Asia/Seoul'), lunch)).toBe(false);
    expect(isQuietAt(at('2026-11-22T13:29', 'Asia/Seoul'), lunch)).toBe(true);
    expect(isQuietAt(at('2026-11-22T23:00', 'Asia/Seoul'), lunch)).toBe(false);
    const none = audienceFor({ quietHours: { start: '08:00', end: '08:00' } });
    expect(isQuietAt(at('2026-11-22T08:00', 'Asia/Seoul'), none)).toBe(false);
    expect(quietHoursEndAfter(at('2026-11-22T08:00', 'Asia/Seoul'), none)).toBeUndefined();
  });

  it('hold a match and release it when they end, the next morning for an evening hold', () => {
    const evening = at('2026-11-22T23:30', 'Asia/Seoul');
    expect(planDelivery(matchWith(), overnight, evening, 0)).toEqual({
      action: 'hold',
      reason: 'quiet-hours',
      urgent: false,
    });
    expect(iso(releaseDueAt({ heldAt: evening, reason: 'quiet-hours' }, overnight))).toBe('2026-11-22T22:00:00.000Z');
    const small = at('2026-11-23T03:00', 'Asia/Seoul');
    expect(iso(releaseDueAt({ heldAt: small, reason: 'quiet-hours' }, overnight))).toBe('2026-11-22T22:00:00.000Z');
  });

  it('send at once outside them', () => {
    expect(planDelivery(matchWith(), overnight, at('2026-11-22T12:00', 'Asia/Seoul'), 0)).toEqual({
      action: 'send',
      urgent: false,
    });
  });
});

describe('urgent matches bypass quiet hours', () => {
  const night = at('2026-11-23T02:00', 'Asia/Seoul');

  it('when any matching rule is urgent', () => {
    const audience = audienceFor({ quietHours: { start: '22:00', end: '07:00' } });
    expect(planDelivery(matchWith([plainRule, urgentRule]), audience, night, 0)).toEqual({
      action: 'send',
      urgent: true,
    });
    expect(urgencyOf(matchWith([plainRule, urgentRule]), audience)).toBe('rule quakes');
  });

  it('when a category is urgent: exact code, name (case and width folded) or prefix', () => {
    for (const urgentCategories of [['003002000'], ['society > DISASTERS'], ['003*'], ['*'], ['ＳＯＣＩＥＴＹ*']]) {
      const audience = audienceFor({ quietHours: { start: '22:00', end: '07:00' }, urgentCategories });
      expect(planDelivery(matchWith(), audience, night, 0), urgentCategories.join()).toMatchObject({
        action: 'send',
        urgent: true,
      });
    }
    for (const urgentCategories of [['003001000'], ['004*'], ['Disasters']]) {
      const audience = audienceFor({ quietHours: { start: '22:00', end: '07:00' }, urgentCategories });
      expect(planDelivery(matchWith(), audience, night, 0), urgentCategories.join()).toMatchObject({
        action: 'hold',
        reason: 'quiet-hours',
      });
    }
  });

  it('but not digest mode: a digest audience gets everything in its digest', () => {
    const audience = audienceFor({ deliveryMode: 'digest', urgentCategories: ['003*'] });
    expect(planDelivery(matchWith([urgentRule]), audience, night, 0)).toEqual({
      action: 'hold',
      reason: 'digest',
      urgent: true,
    });
  });
});

describe('daily budget per local day', () => {
  const audience = audienceFor({ dailyBudget: 2, timeZone: 'America/Los_Angeles', digestTimes: ['08:00'] });

  it('sends while the budget lasts, then holds the overflow for the next digest', () => {
    const now = Date.parse('2026-11-22T20:00:00-08:00');
    expect(planDelivery(matchWith(), audience, now, 0)).toEqual({
      action: 'send',
      urgent: false,
      budgetDate: '2026-11-22',
    });
    expect(planDelivery(matchWith(), audience, now, 1)).toMatchObject({ action: 'send', budgetDate: '2026-11-22' });
    expect(planDelivery(matchWith(), audience, now, 2)).toEqual({ action: 'hold', reason: 'budget', urgent: false });
    expect(iso(releaseDueAt({ heldAt: now, reason: 'budget' }, audience))).toBe('2026-11-23T16:00:00.000Z');
  });

  it('counts by the date in the audience zone, not in UTC', () => {
    // 07:30 UTC on the 23rd is still the 22nd in Los Angeles, already the 23rd in Seoul.
    const instant = Date.parse('2026-11-23T07:30:00Z');
    expect(localDate(instant, 'America/Los_Angeles')).toBe('2026-11-22');
    expect(localDate(instant, 'Asia/Seoul')).toBe('2026-11-23');
    expect(planDelivery(matchWith(), audience, instant, 0)).toMatchObject({ budgetDate: '2026-11-22' });
    expect(planDelivery(matchWith(), audience, Date.parse('2026-11-23T08:00:00Z'), 0)).toMatchObject({
      budgetDate: '2026-11-23',
    });
  });

  it('urgent matches always go, and still count against the budget', () => {
    const now = Date.parse('2026-11-22T20:00:00-08:00');
    expect(planDelivery(matchWith([urgentRule]), audience, now, 5)).toEqual({
      action: 'send',
      urgent: true,
      budgetDate: '2026-11-22',
    });
  });

  it('quiet hours come first: a held match does not use the budget', () => {
    const quiet = audienceFor({ dailyBudget: 1, quietHours: { start: '22:00', end: '07:00' } });
    expect(planDelivery(matchWith(), quiet, at('2026-11-22T23:00', 'Asia/Seoul'), 0)).toMatchObject({
      action: 'hold',
      reason: 'quiet-hours',
    });
  });
});

describe('digest times', () => {
  it('pick the next of several local times, today or tomorrow', () => {
    const audience = audienceFor({ digestTimes: ['18:00', '08:00'] });
    expect(iso(nextDigestAt(at('2026-11-22T07:59', 'Asia/Seoul'), audience))).toBe('2026-11-21T23:00:00.000Z');
    expect(iso(nextDigestAt(at('2026-11-22T08:00', 'Asia/Seoul'), audience))).toBe('2026-11-21T23:00:00.000Z');
    expect(iso(nextDigestAt(at('2026-11-22T08:01', 'Asia/Seoul'), audience))).toBe('2026-11-22T09:00:00.000Z');
    expect(iso(nextDigestAt(at('2026-11-22T18:01', 'Asia/Seoul'), audience))).toBe('2026-11-22T23:00:00.000Z');
  });

  it('move to the end of quiet hours when a digest time falls inside them', () => {
    const audience = audienceFor({ digestTimes: ['06:00'], quietHours: { start: '22:00', end: '07:00' } });
    expect(iso(nextDigestAt(at('2026-11-22T12:00', 'Asia/Seoul'), audience))).toBe('2026-11-22T22:00:00.000Z');
  });

  it('the index lower bound never comes after any item it covers', () => {
    const audience = audienceFor({ digestTimes: ['08:00'], quietHours: { start: '22:00', end: '07:00' } });
    const oldest = at('2026-11-22T23:00', 'Asia/Seoul');
    const bound = earliestDueAt(
      { audienceId: 'desk', oldestHeldAt: oldest, reasons: ['quiet-hours', 'budget'] },
      audience,
    );
    for (const minutesLater of [0, 30, 400, 600]) {
      const heldAt = oldest + minutesLater * 60_000;
      for (const reason of ['quiet-hours', 'budget'] as const) {
        expect(releaseDueAt({ heldAt, reason }, audience)).toBeGreaterThanOrEqual(bound);
      }
    }
  });
});

describe('daylight-saving transitions', () => {
  const newYork = audienceFor({ timeZone: 'America/New_York', digestTimes: ['08:00'] });
  const london = audienceFor({ timeZone: 'Europe/London', digestTimes: ['01:30'] });

  it('New York, fall back (Nov 1 2026): the 08:00 digest moves from 12:00Z to 13:00Z', () => {
    expect(iso(nextDigestAt(Date.parse('2026-10-31T09:00:00-04:00'), newYork))).toBe('2026-11-01T13:00:00.000Z');
    expect(iso(nextDigestAt(Date.parse('2026-10-30T09:00:00-04:00'), newYork))).toBe('2026-10-31T12:00:00.000Z');
  });

  it('New York, spring forward (Mar 8 2026): a 02:30 digest time that does not exist is sent at 03:30 EDT', () => {
    expect(iso(nextLocalTime(Date.parse('2026-03-08T00:00:00-05:00'), '02:30', 'America/New_York'))).toBe(
      '2026-03-08T07:30:00.000Z',
    );
    expect(iso(nextDigestAt(Date.parse('2026-03-07T09:00:00-05:00'), newYork))).toBe('2026-03-08T12:00:00.000Z');
  });

  it('New York: quiet hours 22:00-07:00 last one hour longer on the fall-back night, one shorter in spring', () => {
    const quiet = audienceFor({ timeZone: 'America/New_York', quietHours: { start: '22:00', end: '07:00' } });
    const fallEnd = quietHoursEndAfter(Date.parse('2026-10-31T23:00:00-04:00'), quiet) ?? 0;
    expect(iso(fallEnd)).toBe('2026-11-01T12:00:00.000Z');
    expect((fallEnd - Date.parse('2026-10-31T22:00:00-04:00')) / 3_600_000).toBe(10);
    const springEnd = quietHoursEndAfter(Date.parse('2026-03-07T23:00:00-05:00'), quiet) ?? 0;
    expect((springEnd - Date.parse('2026-03-07T22:00:00-05:00')) / 3_600_000).toBe(8);
    // 01:30 on the fall-back night happens twice; both are quiet.
    expect(isQuietAt(Date.parse('2026-11-01T01:30:00-04:00'), quiet)).toBe(true);
    expect(isQuietAt(Date.parse('2026-11-01T01:30:00-05:00'), quiet)).toBe(true);
  });

  it('London, spring forward (Mar 29 2026): the skipped 01:30 digest goes out at 02:30 BST, once', () => {
    const first = nextDigestAt(Date.parse('2026-03-28T12:00:00Z'), london);
    expect(iso(first)).toBe('2026-03-29T01:30:00.000Z');
    expect(iso(nextDigestAt(first + 1, london))).toBe('2026-03-30T00:30:00.000Z');
  });

  it('London, fall back (Oct 25 2026): 01:30 occurs twice but the digest goes out once', () => {
    const first = nextDigestAt(Date.parse('2026-10-24T12:00:00Z'), london);
    expect(iso(first)).toBe('2026-10-25T01:30:00.000Z');
    expect(iso(nextDigestAt(first + 1, london))).toBe('2026-10-26T01:30:00.000Z');
  });

  it('London, spring forward: quiet hours ending at a skipped 01:30 end when the gap ends (02:00 BST)', () => {
    const quiet = audienceFor({ timeZone: 'Europe/London', quietHours: { start: '00:30', end: '01:30' } });
    const heldAt = Date.parse('2026-03-29T00:45:00Z');
    expect(isQuietAt(heldAt, quiet)).toBe(true);
    const end = quietHoursEndAfter(heldAt, quiet) ?? 0;
    expect(iso(end)).toBe('2026-03-29T01:00:00.000Z');
    // Consistent with the planner: the first instant that is no longer quiet.
    expect(isQuietAt(end, quiet)).toBe(false);
    expect(isQuietAt(end - 60_000, quiet)).toBe(true);
  });

  it('New York, fall back: quiet hours ending at the repeated 01:30 end at its first occurrence', () => {
    const quiet = audienceFor({ timeZone: 'America/New_York', quietHours: { start: '23:00', end: '01:30' } });
    const heldAt = Date.parse('2026-11-01T00:30:00-04:00');
    expect(iso(quietHoursEndAfter(heldAt, quiet) ?? 0)).toBe('2026-11-01T05:30:00.000Z');
    // 01:00-01:30 comes round again after the clocks go back: quiet again, ending at 01:30 EST.
    const again = Date.parse('2026-11-01T01:10:00-05:00');
    expect(isQuietAt(again, quiet)).toBe(true);
    expect(iso(quietHoursEndAfter(again, quiet) ?? 0)).toBe('2026-11-01T06:30:00.000Z');
  });

  // luxon settles a repeated local time with the offset in effect on the machine's clock
  // (Settings.now): the planner must not, or the answer depends on the real date, and a summer
  // clock sent a digest at both occurrences.
  for (const machineClock of ['2026-07-01T12:00:00Z', '2026-12-01T12:00:00Z']) {
    it(`a repeated local time is the same on a machine whose clock reads ${machineClock.slice(0, 10)}`, () => {
      const realNow = Settings.now;
      Settings.now = () => Date.parse(machineClock);
      try {
        const first = nextDigestAt(Date.parse('2026-10-24T12:00:00Z'), london);
        expect(iso(first)).toBe('2026-10-25T01:30:00.000Z');
        expect(iso(nextDigestAt(first + 1, london))).toBe('2026-10-26T01:30:00.000Z');
        // Held at 01:10 EDT, before the first 01:30: due at the later one only, then the next day.
        const newYork = audienceFor({ timeZone: 'America/New_York', digestTimes: ['01:30'] });
        const due = nextDigestAt(Date.parse('2026-11-01T01:10:00-04:00'), newYork);
        expect(iso(due)).toBe('2026-11-01T06:30:00.000Z');
        expect(iso(nextDigestAt(due + 1, newYork))).toBe('2026-11-02T06:30:00.000Z');
        const quiet = audienceFor({ timeZone: 'America/New_York', quietHours: { start: '22:00', end: '01:30' } });
        const again = Date.parse('2026-11-01T01:10:00-05:00');
        expect(iso(quietHoursEndAfter(again, quiet) ?? 0)).toBe('2026-11-01T06:30:00.000Z');
        expect(iso(quietHoursEndAfter(Date.parse('2026-11-01T00:30:00-04:00'), quiet) ?? 0)).toBe(
          '2026-11-01T05:30:00.000Z',
        );
      } finally {
        Settings.now = realNow;
      }
    });
  }

  it('the budget day follows the local calendar on a 25-hour day', () => {
    expect(localDate(Date.parse('2026-11-01T04:30:00Z'), 'America/New_York')).toBe('2026-11-01');
    expect(localDate(Date.parse('2026-11-02T04:59:00Z'), 'America/New_York')).toBe('2026-11-01');
    expect(localDate(Date.parse('2026-11-02T05:00:00Z'), 'America/New_York')).toBe('2026-11-02');
  });
});

describe('settings at release time', () => {
  it('a time-zone change between hold and release moves the release to the new zone', () => {
    const seoul = audienceFor({ timeZone: 'Asia/Seoul', quietHours: { start: '22:00', end: '07:00' } });
    const heldAt = at('2026-11-22T23:00', 'Asia/Seoul');
    expect(iso(releaseDueAt({ heldAt, reason: 'quiet-hours' }, seoul))).toBe('2026-11-22T22:00:00.000Z');
    const london = { ...seoul, timeZone: 'Europe/London' };
    // 14:00 UTC is 14:00 in London, outside its quiet hours: due at once.
    expect(releaseDueAt({ heldAt, reason: 'quiet-hours' }, london)).toBe(heldAt);
    // Held at 23:00 London time: due when 07:00 comes there.
    const londonNight = Date.parse('2026-11-22T23:00:00Z');
    expect(iso(releaseDueAt({ heldAt: londonNight, reason: 'quiet-hours' }, london))).toBe('2026-11-23T07:00:00.000Z');
  });

  it('removing quiet hours releases what they held at once; a new digest time applies to held items', () => {
    const heldAt = at('2026-11-22T23:00', 'Asia/Seoul');
    expect(releaseDueAt({ heldAt, reason: 'quiet-hours' }, audienceFor())).toBe(heldAt);
    const evening = audienceFor({ deliveryMode: 'digest', digestTimes: ['20:00'] });
    expect(iso(releaseDueAt({ heldAt, reason: 'digest' }, evening))).toBe('2026-11-23T11:00:00.000Z');
    // An audience that left digest mode holds nothing for digests.
    expect(releaseDueAt({ heldAt, reason: 'digest' }, audienceFor({ digestTimes: ['20:00'] }))).toBe(heldAt);
  });
});

/**
 * A review found quiet hours of 00:00-23:59 (the way to write "all day": equal times mean none)
 * holding every alert and digest until the retention deleted them: the one free minute is never
 * seen by runs every five minutes, and nothing was released inside quiet hours.
 */
describe('a free stretch no run sees', () => {
  const allDay = AudienceSchema.parse({
    audienceId: 'a',
    topicArn: 'arn:aws:sns:us-east-1:123456789012:a',
    timeZone: 'UTC',
    quietHours: { start: '00:00', end: '23:59' },
  });
  const digests = AudienceSchema.parse({ ...allDay, deliveryMode: 'digest', digestTimes: ['08:00'] });
  const heldAt = Date.parse('2026-12-01T10:00:00Z');
  const held = (reason: 'quiet-hours' | 'digest', at = heldAt) => ({
    heldAt: at,
    reason,
    match: {
      audienceId: 'a',
      article: {
        key: 'id:1',
        title: 't',
        summary: '',
        url: 'https://news.example.com/1',
        publishedAt: at,
        categories: [],
        categoryNames: [],
      },
      rules: [{ ruleId: 'r', urgent: false, reasons: [] }],
    },
  });
  /** The first run of a 5-minute schedule that releases it, within three days. */
  const firstRelease = (reason: 'quiet-hours' | 'digest', audience: Audience) => {
    for (let now = heldAt; now < heldAt + 3 * 86_400_000; now += 5 * 60_000) {
      const release = planHeldRelease(held(reason), audience, now, Number.POSITIVE_INFINITY);
      if (release !== undefined) return { now: new Date(now).toISOString(), release };
    }
    return undefined;
  };

  it('goes out at the first run after the free minute it fell due in, named by the time it was due', () => {
    expect(firstRelease('quiet-hours', allDay)).toEqual({
      now: '2026-12-02T00:00:00.000Z',
      release: { cause: 'due', dueAt: Date.parse('2026-12-01T23:59:00Z') },
    });
    // The 08:00 digest of 2 December waits for the end of quiet hours, 23:59.
    expect(firstRelease('digest', digests)).toEqual({
      now: '2026-12-03T00:00:00.000Z',
      release: { cause: 'due', dueAt: Date.parse('2026-12-02T23:59:00Z') },
    });
  });

  it('inside quiet hours still waits for what is not due, and for what other settings held', () => {
    const overnight = AudienceSchema.parse({ ...allDay, quietHours: { start: '22:00', end: '07:00' } });
    const heldLate = held('quiet-hours', Date.parse('2026-12-01T23:00:00Z'));
    const at = (iso: string) => planHeldRelease(heldLate, overnight, Date.parse(iso), Number.POSITIVE_INFINITY);
    expect(at('2026-12-02T06:55:00Z')).toBeUndefined();
    expect(at('2026-12-02T07:00:00Z')).toMatchObject({ cause: 'due' });
    // A review of my first version: a digest time added at night, or an audience enabled again at
    // night, sent inside quiet hours what runs in the long free day had seen and kept.
    const nightly = AudienceSchema.parse({ ...overnight, deliveryMode: 'digest', digestTimes: ['07:00'] });
    const heldDay = held('digest', Date.parse('2026-12-01T09:00:00Z'));
    expect(
      planHeldRelease(heldDay, nightly, Date.parse('2026-12-01T21:55:00Z'), Number.POSITIVE_INFINITY),
    ).toBeUndefined();
    const moreTimes = AudienceSchema.parse({ ...nightly, digestTimes: ['07:00', '12:00'] });
    expect(
      planHeldRelease(heldDay, moreTimes, Date.parse('2026-12-01T23:30:00Z'), Number.POSITIVE_INFINITY),
    ).toBeUndefined();
    const heldMorning = held('quiet-hours', Date.parse('2026-12-01T06:00:00Z'));
    expect(
      planHeldRelease(heldMorning, overnight, Date.parse('2026-12-01T23:30:00Z'), Number.POSITIVE_INFINITY),
    ).toBeUndefined();
    // Held at 23:00 by quiet hours that now run 12:00-13:00: released as settings changed, never inside them.
    const moved = AudienceSchema.parse({ ...allDay, quietHours: { start: '12:00', end: '13:00' } });
    expect(
      planHeldRelease(heldLate, moved, Date.parse('2026-12-02T12:30:00Z'), Number.POSITIVE_INFINITY),
    ).toBeUndefined();
  });
});
