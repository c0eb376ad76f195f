/**
 * What is held follows the audience's current settings (issue 30, item 8), over random quiet-hour
 * windows, delivery modes, digest times, urgent categories, zones (with their DST changes),
 * settings changes and run times, with crashes between release steps:
 *
 * - a held notification goes out at a run at time t exactly when the settings of that run would
 *   not hold it: never inside the current quiet hours (read here from luxon's wall clock, not from
 *   the planner), unless it is urgent for an immediate audience; in digest mode only once its next
 *   digest time came;
 * - nothing is lost: a last run outside any quiet hours sends everything still held;
 * - nothing is sent twice, crashes included, and every ledger entry ends up saying it was sent.
 */
import fc from 'fast-check';
import { DateTime } from 'luxon';
import { describe, expect, it } from 'vitest';
import { nextDigestAt } from '#core/delivery-plan';
import { toHeldNotification } from '#core/digest';
import { emptyDigestCounts, releaseDueDigests } from '#core/digest-release';
import { type Audience, AudienceSchema } from '#core/model';
import type { HoldReason, OutboundMessage } from '#core/ports';
import { article, MemoryNotifier, matchOf, memoryLog } from '#test/fake-ports';
import { type HoldCrash, MemoryHoldingStateStore } from '#test/memory-holds';

const audienceId = 'desk';

const clock = fc
  .tuple(fc.integer({ min: 0, max: 23 }), fc.constantFrom(0, 15, 30, 59))
  .map(([hour, minute]) => `${String(hour).padStart(2, '0')}:${String(minute).padStart(2, '0')}`);

const settings = fc.record({
  quietHours: fc.option(fc.record({ start: clock, end: clock }), { nil: undefined }),
  deliveryMode: fc.constantFrom('immediate' as const, 'digest' as const),
  digestTimes: fc.array(clock, { minLength: 1, maxLength: 3 }),
  // The articles below are all in category 002000000: this makes every one of them urgent.
  urgent: fc.boolean(),
});
type Settings = typeof settings extends fc.Arbitrary<infer T> ? T : never;

const scenario = fc.record({
  timeZone: fc.constantFrom('Asia/Seoul', 'America/New_York', 'Europe/London'),
  // Near DST changes in New York (Mar 8, Nov 1) and London (Mar 29, Oct 25), and an ordinary day.
  start: fc.constantFrom(
    Date.UTC(2026, 2, 7, 12),
    Date.UTC(2026, 2, 28, 12),
    Date.UTC(2026, 9, 31, 12),
    Date.UTC(2026, 10, 22, 12),
  ),
  initial: settings,
  holds: fc.array(
    fc.record({
      minutes: fc.integer({ min: 0, max: 600 }),
      reason: fc.constantFrom<HoldReason>('quiet-hours', 'digest', 'budget'),
    }),
    { minLength: 1, maxLength: 4 },
  ),
  runs: fc.array(
    fc.record({
      minutes: fc.integer({ min: 1, max: 900 }),
      change: fc.option(settings, { nil: undefined }),
      crash: fc.constantFrom<HoldCrash | undefined>(undefined, undefined, 'claim', 'finish', 'finish-after-items'),
    }),
    { minLength: 1, maxLength: 8 },
  ),
});

function audienceOf(timeZone: string, chosen: Settings): Audience {
  return AudienceSchema.parse({
    audienceId,
    topicArn: 'arn:aws:sns:us-east-1:123456789012:desk',
    timeZone,
    deliveryMode: chosen.deliveryMode,
    digestTimes: chosen.digestTimes,
    ...(chosen.quietHours === undefined ? {} : { quietHours: chosen.quietHours }),
    ...(chosen.urgent ? { urgentCategories: ['002*'] } : {}),
  });
}

/** Whether `at` is inside the audience's quiet hours, from luxon's local wall clock. */
function quietByWallClock(at: number, timeZone: string, chosen: Settings): boolean {
  if (chosen.quietHours === undefined) return false;
  const minutes = (text: string) => Number(text.slice(0, 2)) * 60 + Number(text.slice(3));
  const start = minutes(chosen.quietHours.start);
  const end = minutes(chosen.quietHours.end);
  if (start === end) return false;
  const local = DateTime.fromMillis(at, { zone: timeZone });
  const minute = local.hour * 60 + local.minute;
  return start < end ? minute >= start && minute < end : minute >= start || minute < end;
}

/** The article keys a digest message lists. */
function digestKeys(message: OutboundMessage): string[] {
  const structured = JSON.parse((JSON.parse(message.body) as { default: string }).default) as {
    newsAlerts: { digest: { groups: { entries: { article: { key: string } }[] }[] } };
  };
  return structured.newsAlerts.digest.groups.flatMap((group) => group.entries.map((entry) => entry.article.key));
}

describe('held notifications follow the current settings', () => {
  it('go out at a run exactly when its settings would not hold them; never lost, never twice', async () => {
    await fc.assert(
      fc.asyncProperty(scenario, async ({ timeZone, start, initial, holds, runs }) => {
        const state = new MemoryHoldingStateStore();
        const notifier = new MemoryNotifier();
        const heldAt = new Map<string, number>();
        await state.holdNotifications(
          holds.map(({ minutes, reason }, index) => {
            const at = start + minutes * 60_000;
            heldAt.set(`id:h${index}`, at);
            return toHeldNotification(matchOf(audienceId, article(`h${index}`)), reason, at);
          }),
        );
        const sent = (): string[] => notifier.published.flatMap(digestKeys);
        const release = async (at: number, chosen: Settings) =>
          await releaseDueDigests({
            state,
            notifier,
            log: memoryLog(),
            now: () => at,
            audiences: new Map([[audienceId, audienceOf(timeZone, chosen)]]),
            publishSignal: new AbortController().signal,
            counts: { ...emptyDigestCounts(), notificationsFailed: 0, notificationsUnrenderable: 0 },
          });

        let current = initial;
        let now = start + 600 * 60_000;
        for (const run of runs) {
          now += run.minutes * 60_000;
          current = run.change ?? current;
          const before = new Set(sent());
          const pending = [...heldAt.keys()].filter((key) => !before.has(key));
          // Claimed by a run that crashed after claiming: that run already decided to send them.
          const claimed = new Set([...state.releases.values()].flatMap((claim) => claim.parts.flat()));
          state.crashAt = run.crash;
          const crashed = await release(now, current).then(
            () => false,
            () => true,
          );
          state.crashAt = undefined;
          if (crashed) continue;
          const after = new Set(sent());
          const audience = audienceOf(timeZone, current);
          const quiet = quietByWallClock(now, timeZone, current);
          for (const key of pending) {
            if (claimed.has(key)) continue;
            const at = heldAt.get(key) ?? 0;
            const expected =
              current.deliveryMode === 'digest'
                ? !quiet && nextDigestAt(at, audience) <= now
                : current.urgent || !quiet;
            expect(
              after.has(key),
              `${key} held at ${new Date(at).toISOString()}, run at ${new Date(now).toISOString()}`,
            ).toBe(expected);
          }
        }

        // Immediate, no quiet hours: whatever is still held goes out now, and nothing went twice.
        await release(now + 60_000, {
          deliveryMode: 'immediate',
          digestTimes: ['08:00'],
          urgent: false,
          quietHours: undefined,
        });
        expect(sent().sort()).toEqual([...heldAt.keys()].sort());
        expect(state.held.size).toBe(0);
        expect(state.releases.size).toBe(0);
        for (const key of heldAt.keys()) {
          expect(state.ledger.get(`${audienceId}|${key}`)).toMatchObject({ releaseOutcome: 'sent' });
        }
      }),
      { numRuns: 300 },
    );
  });
});
