/**
 * An update notice corrects an alert the subscriber has (docs/delivery.md, "Update notices"): the
 * email channel does not send it to a member whose record of the original alert says it did not
 * reach them (paused when it went out). Before, every confirmed member got "Updated: …" about an
 * alert some never had. A member with no record of the alert (it came in an audience digest, or
 * they joined since) gets the notice: a first version of this fix sent notices to nobody in
 * digest mode.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { planDigest, toHeldNotification } from '#core/digest';
import type { Audience } from '#core/model';
import { updateNoticeKey } from '#core/ports';
import { renderUpdateNotice } from '#core/render';
import { matchOf, PUBLISHED, testArticle } from '../support/email-fixtures.ts';
import { type EmailTestStack, sesEvent, startEmailTestStack } from '../support/email-stack.ts';

let stack: EmailTestStack;
let desk: Audience;
const ids: Record<string, string> = {};

beforeAll(async () => {
  stack = await startEmailTestStack();
  desk = await stack.addAudience({ audienceId: 'desk', name: 'Markets desk' });
  for (const name of ['always', 'paused', 'digest', 'bounced']) {
    const outcome = await stack.email.addSubscriber('desk', { address: `${name}@${stack.prefix}example.com` });
    ids[name] = outcome.subscriberId;
  }
});

afterAll(async () => {
  await stack?.stop();
});

/** Sets a member's pause and daily-digest choice, as the preference page does. */
async function setMember(
  name: string,
  change: { pausedUntil?: number | undefined; preference?: 'immediate' | 'digest' },
) {
  const store = stack.email.delivery.store;
  const membership = await store.membership(ids[name] as string, 'desk');
  if (membership === undefined) throw new Error(`no membership of ${name}`);
  await store.saveMembership({ ...membership, ...change });
}

describe('an update notice by email', () => {
  it('is not sent to a member who was paused when the alert went out, or whose alert bounced; the others get it', async () => {
    await setMember('paused', { pausedUntil: stack.clock.now + 86_400_000 });
    await setMember('digest', { preference: 'digest' });
    const sentBefore = stack.email.sent.length;
    const original = await stack.publishAlert(desk);
    expect(await stack.email.deliver()).toEqual({ received: 1, failed: 0 });
    // SES gave up on one address for now (a soft bounce): that alert did not reach them either.
    const toBounced = stack.email.sent.slice(sentBefore).find((email) => email.subscriberId === ids.bounced);
    if (toBounced === undefined) throw new Error('no alert to the bounced member');
    await stack.sesEvents(sesEvent('Bounce', toBounced, { bounceType: 'Transient', at: stack.clock.now + 1000 }));
    const articleKey = (JSON.parse(JSON.parse(original.body).default) as { newsAlerts: { article: { key: string } } })
      .newsAlerts.article.key;

    // Later: the paused member resumes, and someone joins.
    await setMember('paused', { pausedUntil: undefined });
    const late = await stack.email.addSubscriber('desk', { address: `late@${stack.prefix}example.com` });
    ids.late = late.subscriberId;
    const before = stack.email.sent.length;
    const article = testArticle({
      key: articleKey,
      id: articleKey.slice(3),
      status: 'CORRECTED',
      publishedAt: PUBLISHED,
    });
    await stack.publish(
      renderUpdateNotice(
        matchOf(desk, article),
        desk,
        { kind: 'status', status: 'CORRECTED', previousStatus: 'PUBLISHED' },
        updateNoticeKey('desk', articleKey, 'status'),
      ),
    );
    expect(await stack.email.deliver()).toEqual({ received: 1, failed: 0 });
    expect(
      stack.email.sent
        .slice(before)
        .map((email) => email.subscriberId)
        .sort(),
    ).toEqual([ids.always, ids.late].sort());
    // What each member's history holds of the notice: the daily-digest member has it held with
    // the alert; the member paused at the time and the one who joined since have nothing.
    const updates = async (name: string) =>
      (await stack.email.delivery.store.history(ids[name] as string))
        .filter((record) => record.kind === 'update')
        .map((record) => record.status);
    expect(await updates('always')).toEqual(['sent']);
    expect(await updates('digest')).toEqual(['held']);
    expect(await updates('paused')).toEqual([]);
    expect(await updates('bounced')).toEqual([]);
    expect(await updates('late')).toEqual(['sent']);
  });

  it('goes to the members of a digest-mode audience, who got the article in its digest', async () => {
    const weekly = await stack.addAudience({ audienceId: 'weekly', name: 'Weekly desk', deliveryMode: 'digest' });
    const reader = await stack.email.addSubscriber('weekly', { address: `reader@${stack.prefix}example.com` });
    const article = testArticle({
      key: `id:${stack.prefix}digest-1`,
      id: `${stack.prefix}digest-1`,
      publishedAt: PUBLISHED,
    });
    const held = [toHeldNotification(matchOf(weekly, article), 'digest', PUBLISHED)];
    const [digest] = planDigest(held, weekly, PUBLISHED + 3_600_000).messages;
    if (digest === undefined) throw new Error('no digest message');
    await stack.publish(digest);
    expect(await stack.email.deliver()).toEqual({ received: 1, failed: 0 });
    const before = stack.email.sent.length;
    await stack.publish(
      renderUpdateNotice(
        matchOf(weekly, { ...article, status: 'CORRECTED' }),
        weekly,
        { kind: 'status', status: 'CORRECTED', previousStatus: 'PUBLISHED' },
        updateNoticeKey('weekly', article.key, 'status'),
      ),
    );
    expect(await stack.email.deliver()).toEqual({ received: 1, failed: 0 });
    expect(stack.email.sent.slice(before).map((email) => email.subscriberId)).toEqual([reader.subscriberId]);
  });
});
