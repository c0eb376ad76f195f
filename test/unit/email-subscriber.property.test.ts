/**
 * The subscriber state machine (functions/core/email/subscriber.ts), over any sequence of changes
 * and SES feedback: only a confirmed, unpaused, unsuppressed member is sent to; suppression wins
 * over everything and never lifts by itself; every change is idempotent; an unsubscribed member
 * cannot be confirmed back by an old link; soft bounces suppress at exactly the limit.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { SendStatus } from '#core/email/ports';
import {
  afterHeld,
  applyChange,
  applyFeedback,
  deliveryDecision,
  type FeedbackKind,
  heldFate,
  type Membership,
  type PreferenceChange,
  SOFT_BOUNCE_LIMIT,
  type SubscriberProfile,
} from '#core/email/subscriber';

const start = (state: Membership['state'] = 'pending'): Membership => ({
  subscriberId: 'abcdef0123',
  audienceId: 'desk',
  state,
  preference: 'immediate',
  createdAt: 0,
  source: 'added',
});
const profile: SubscriberProfile = {
  subscriberId: 'abcdef0123',
  address: 'kim@example.com',
  createdAt: 0,
  softBounces: 0,
};

const change = fc.oneof(
  fc.constant<PreferenceChange>({ kind: 'confirm' }),
  fc.constant<PreferenceChange>({ kind: 'unsubscribe' }),
  fc.constant<PreferenceChange>({ kind: 'resume' }),
  fc.integer({ min: -5, max: 120 }).map<PreferenceChange>((days) => ({ kind: 'pause', days })),
  fc.constantFrom<PreferenceChange>(
    { kind: 'preference', preference: 'digest' },
    { kind: 'preference', preference: 'immediate' },
  ),
);
const feedback = fc.constantFrom<FeedbackKind>('delivery', 'hard-bounce', 'soft-bounce', 'complaint');

describe('memberships', () => {
  it('send only to confirmed, unpaused, unsuppressed members; hold only for those who chose the digest', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(change, fc.integer({ min: 0, max: 10 })), { maxLength: 20 }),
        fc.boolean(),
        (steps, suppressed) => {
          let membership = start();
          let now = 1_000;
          for (const [step, advanceDays] of steps) {
            now += advanceDays * 86_400_000;
            const outcome = applyChange(membership, step, now);
            if (outcome.ok) membership = outcome.membership;
          }
          const who = suppressed ? { ...profile, suppression: { reason: 'bounce' as const, at: 1 } } : profile;
          const decision = deliveryDecision(who, membership, now);
          const paused = membership.pausedUntil !== undefined && membership.pausedUntil > now;
          if (suppressed || membership.state !== 'confirmed' || paused) expect(decision.action).toBe('skip');
          else expect(decision.action).toBe(membership.preference === 'digest' ? 'hold' : 'send');
        },
      ),
    );
  });

  it('are idempotent: the same change twice does nothing the second time', () => {
    fc.assert(
      fc.property(fc.array(change, { maxLength: 10 }), change, (before, repeated) => {
        let membership = start();
        for (const step of before) {
          const outcome = applyChange(membership, step, 5_000);
          if (outcome.ok) membership = outcome.membership;
        }
        const first = applyChange(membership, repeated, 5_000);
        if (!first.ok) return;
        const second = applyChange(first.membership, repeated, 5_000);
        expect(second.ok).toBe(true);
        if (second.ok) expect(second.changed).toBe(false);
      }),
    );
  });

  it('cannot be confirmed back once unsubscribed (an old confirmation link changes nothing)', () => {
    const left = applyChange(start('confirmed'), { kind: 'unsubscribe' }, 1);
    expect(left.ok).toBe(true);
    if (!left.ok) return;
    expect(applyChange(left.membership, { kind: 'confirm' }, 2)).toEqual({ ok: false, reason: 'unsubscribed' });
  });

  it('refuse a pause outside 1 to 90 whole days', () => {
    for (const days of [0, -1, 91, 1.5, Number.NaN]) {
      expect(applyChange(start('confirmed'), { kind: 'pause', days }, 0)).toEqual({ ok: false, reason: 'bad-days' });
    }
  });
});

describe('SES feedback', () => {
  it('suppresses at once on a hard bounce or a complaint, at the limit on soft bounces in a row, and never lifts', () => {
    fc.assert(
      fc.property(fc.array(feedback, { maxLength: 30 }), (events) => {
        let current = profile;
        let inARow = 0;
        let expectSuppressed = false;
        for (const event of events) {
          current = applyFeedback(current, event, 1).profile;
          if (event === 'hard-bounce' || event === 'complaint') expectSuppressed = true;
          if (event === 'soft-bounce') inARow += 1;
          if (event === 'delivery') inARow = 0;
          if (inARow >= SOFT_BOUNCE_LIMIT) expectSuppressed = true;
          expect(current.suppression !== undefined).toBe(expectSuppressed);
        }
      }),
    );
  });
});

describe('an alert held for a daily digest', () => {
  it('is said not to go out exactly when the release would not send it', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(change, fc.integer({ min: 0, max: 10 })), { maxLength: 12 }),
        fc.integer({ min: 0, max: 200 }),
        fc.boolean(),
        (steps, heldDay, suppressed) => {
          let membership: Membership = { ...start(), preference: 'digest' };
          let now = 1_000;
          for (const [step, advanceDays] of steps) {
            now += advanceDays * 86_400_000;
            const outcome = applyChange(membership, step, now);
            if (outcome.ok) membership = outcome.membership;
          }
          const heldAt = 1_000 + heldDay * 86_400_000;
          const who = suppressed ? { ...profile, suppression: { reason: 'bounce' as const, at: 1 } } : profile;
          const fate = heldFate(heldAt, who, membership, now);
          // What releaseDailyDigests does: drop what was held before the last unsubscribe, then
          // send only to a member the digest decision sends to.
          const ended = membership.unsubscribedAt !== undefined && heldAt <= membership.unsubscribedAt;
          const decision = deliveryDecision(who, membership, now);
          const sent = !ended && (decision.action === 'send' || decision.action === 'hold');
          expect(fate === undefined).toBe(sent);
          if (suppressed) expect(fate).toBe('suppressed');
          else if (membership.state === 'unsubscribed') expect(fate).toBe('unsubscribed');
        },
      ),
    );
    expect(heldFate(5, profile, undefined, 10)).toBe('unsubscribed');
    // Ops added the address again after it left, and it confirmed (core/email/subscribe.ts keeps
    // unsubscribedAt): what was held before it left is not sent, what was held since is.
    const back: Membership = { ...start('confirmed'), preference: 'digest', unsubscribedAt: 500, confirmedAt: 700 };
    expect(heldFate(400, profile, back, 800)).toBe('held before the subscriber left');
    expect(heldFate(500, profile, back, 800)).toBe('held before the subscriber left');
    expect(heldFate(501, profile, back, 800)).toBeUndefined();
  });

  it('says which daily digest sent a held record, or that the one that carried it was refused', () => {
    const held = {
      subscriberId: 'abcdef0123',
      messageKey: 'digest-key',
      deliveryId: 'desk|digest:1',
      audienceId: 'desk',
      kind: 'digest',
      status: 'held',
      createdAt: 1,
      events: [],
      entryKeys: ['entry-a', 'entry-b'],
    } as const;
    const daily = (status: SendStatus, sentAt: number, entryKeys: string[]) => ({
      ...held,
      messageKey: `daily-${sentAt}`,
      deliveryId: `desk|daily:abcdef0123:${sentAt}`,
      kind: 'daily-digest' as const,
      status,
      sentAt,
      entryKeys,
    });
    const member: Membership = { ...start('confirmed'), preference: 'digest' };
    // An audience digest's entries went out under their own keys; the last digest carried the rest.
    const first = daily('sent', 10, ['entry-a', 'other']);
    const second = daily('sent', 20, ['entry-b']);
    expect(afterHeld(held, [second, first, held], profile, member, 30)).toEqual({ sentIn: second });
    expect(afterHeld(held, [daily('sent', 10, ['other']), held], profile, member, 30)).toEqual({});
    // A digest SES refused for good has a sentAt too, but nothing reached the subscriber.
    for (const status of ['rejected', 'bounced', 'soft-bounced'] as const) {
      expect(afterHeld(held, [daily(status, 10, ['entry-a']), held], profile, member, 30)).toEqual({
        willNotBeSent: `its daily digest was ${status}`,
      });
    }
    for (const status of ['delivered', 'delayed', 'complained'] as const) {
      expect(afterHeld(held, [daily(status, 10, ['entry-a']), held], profile, member, 30).sentIn?.status).toBe(status);
    }
    expect(afterHeld(held, [held], profile, undefined, 30)).toEqual({ willNotBeSent: 'unsubscribed' });
    expect(afterHeld({ ...held, status: 'sent' }, [first], profile, member, 30)).toEqual({});
  });
});
