/**
 * A spike alert held for an SES subscriber's daily digest shows its figures there, as the
 * audience digest's entry does: before, the entry was the bare headline ("Coverage spike:
 * Interest rate decisions"), with nothing to say how big the spike was (found by a reviewer).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dailyDigestAt } from '#core/email/daily-digest';
import { spikeAlertMatch } from '#core/spikes/alert';
import { renderSpikeAlert } from '#core/spikes/render';
import { PUBLISHED } from '../support/email-fixtures.ts';
import { parseEmail } from '../support/email-mime.ts';
import { type EmailTestStack, startEmailTestStack } from '../support/email-stack.ts';
import { ratesSpike } from '../support/spike-world.ts';

let stack: EmailTestStack;
beforeAll(async () => {
  stack = await startEmailTestStack();
});
afterAll(async () => {
  await stack?.stop();
});

describe('a spike alert in a daily digest', () => {
  it('is listed with its stories against expected, not by its headline alone', async () => {
    const audience = await stack.addAudience({ audienceId: 'desk', name: 'Markets desk' });
    const store = stack.email.delivery.store;
    const { subscriberId } = await stack.email.addSubscriber('desk', { address: `digest@${stack.prefix}example.com` });
    const membership = await store.membership(subscriberId, 'desk');
    await store.saveMembership({ ...(membership as NonNullable<typeof membership>), preference: 'digest' });

    const { rule, episode: alert } = ratesSpike('desk', PUBLISHED);
    await stack.publish(renderSpikeAlert(spikeAlertMatch({ rule, audience, alert, key: 'spike:rates:e1' }), audience));
    expect(await stack.email.deliver()).toEqual({ received: 1, failed: 0 });
    const figures = /^Coverage spike: Interest rate decisions: 57 new stories since \d\d:00 \(fewer than 1 expected\)$/;
    const [held] = await store.heldEntries(subscriberId, 'desk');
    expect(held?.entry.article.title).toMatch(figures);

    stack.clock.now = dailyDigestAt(stack.clock.now, audience) + 1;
    const sentBefore = stack.email.sent.length;
    expect(await stack.email.releaseDailyDigests()).toMatchObject({ due: 1, sent: 1 });
    const [digest] = stack.email.sent.slice(sentBefore);
    const text = (await parseEmail((digest as NonNullable<typeof digest>).raw)).text;
    expect(text.split('\n').some((line) => figures.test(line.replace(/^\d+\.\s+/, '').trim()))).toBe(true);
  });
});
