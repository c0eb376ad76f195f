/**
 * When a subscriber's daily digest goes out: the audience's first digest time (08:00 by default)
 * in its time zone, moved past its quiet hours. The delivery schedules the digest with this, and
 * the preference page states the same time, so the page never promises another hour.
 */
import { nextDigestAt } from '../delivery-plan.ts';
import type { Audience } from '../model.ts';

/** The next daily digest of `audience` at or after `now` (epoch ms). */
export const dailyDigestAt = (now: number, audience: Audience): number =>
  nextDigestAt(now, { ...audience, digestTimes: audience.digestTimes.slice(0, 1) });
