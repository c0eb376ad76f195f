/**
 * Leaving an audience and coming back (SES email on moto server): an unsubscribe is final until
 * the person confirms again. A migration from SNS email never undoes it, ops adding the address
 * again sends a new confirmation even on the day of the first one, and what waited for a daily
 * digest before the unsubscribe is never sent to the new subscription.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { planDigest, toHeldNotification } from '#core/digest';
import { dailyDigestAt } from '#core/email/daily-digest';
import { ONE_CLICK_BODY } from '#core/email/mime';
import { type AudienceLabel, addSubscriber } from '#core/email/subscribe';
import { carriedBy } from '#core/email/subscriber';
import type { Audience } from '#core/model';
import { matchOf, PUBLISHED, testArticle } from '../support/email-fixtures.ts';
import { listUnsubscribeTargets, parseEmail } from '../support/email-mime.ts';
import { type EmailTestStack, startEmailTestStack } from '../support/email-stack.ts';

const stacks: EmailTestStack[] = [];
afterEach(async () => {
  for (const stack of stacks.splice(0)) await stack.stop();
});

const label: AudienceLabel = { audienceId: 'desk', label: 'Markets desk', locale: 'en-GB', language: 'en' };

async function setUp(): Promise<{ stack: EmailTestStack; audience: Audience; address: string }> {
  const stack = await startEmailTestStack();
  stacks.push(stack);
  const audience = await stack.addAudience({ audienceId: 'desk', name: 'Markets desk', timeZone: 'UTC' });
  return { stack, audience, address: `kim@${stack.prefix}example.com` };
}

/** Ops add the address (`email add`): pending, with a confirmation email. */
const opsAdd = (stack: EmailTestStack, address: string) =>
  addSubscriber({ address, audience: label }, stack.email.subscribe);

/** The subscriber presses Confirm on the page the confirmation email links to. */
async function confirm(stack: EmailTestStack, subscriberId: string): Promise<void> {
  const url = await stack.email.subscribe.links.confirm(subscriberId, 'desk');
  const response = await stack.request(url, {
    method: 'POST',
    body: 'action=confirm',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
  });
  expect(response.status).toBe(303);
  expect((await stack.email.delivery.store.membership(subscriberId, 'desk'))?.state).toBe('confirmed');
}

/** The subscriber's mail client posts the one-click unsubscribe of the last email it got. */
async function unsubscribe(stack: EmailTestStack, subscriberId: string): Promise<void> {
  const last = stack.email.sent.filter((email) => email.subscriberId === subscriberId).at(-1);
  if (last === undefined) throw new Error('nothing was sent to the subscriber');
  const [oneClick] = listUnsubscribeTargets((await parseEmail(last.raw)).header('List-Unsubscribe'));
  const response = await stack.request(oneClick as string, {
    method: 'POST',
    body: ONE_CLICK_BODY,
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
  });
  expect(response.status).toBe(200);
  expect((await stack.email.delivery.store.membership(subscriberId, 'desk'))?.state).toBe('unsubscribed');
}

/** A confirmed subscriber who got an alert and left with its one-click link, a minute ago. */
/** A member of desk who got one alert, then asked for the daily digest; and the store. */
async function digestMember(stack: EmailTestStack, audience: Audience, address: string) {
  const store = stack.email.delivery.store;
  const { subscriberId } = await stack.email.addSubscriber('desk', { address }, { name: 'Markets desk' });
  await stack.publishAlert(audience);
  await stack.email.deliver();
  const membership = await store.membership(subscriberId, 'desk');
  await store.saveMembership({ ...(membership as NonNullable<typeof membership>), preference: 'digest' });
  return { store, subscriberId };
}

async function subscribedThenLeft() {
  const { stack, audience, address } = await setUp();
  const { subscriberId } = await stack.email.addSubscriber('desk', { address }, { name: 'Markets desk' });
  await stack.publishAlert(audience);
  await stack.email.deliver();
  await unsubscribe(stack, subscriberId);
  stack.clock.now += 60_000;
  return { stack, audience, address, subscriberId };
}

describe('an address that unsubscribed', () => {
  it('stays unsubscribed when a migration meets its confirmed SNS subscription', async () => {
    const { stack, audience, address, subscriberId } = await subscribedThenLeft();
    const sentBefore = stack.email.sent.length;

    const migrated = await addSubscriber(
      { address, audience: label, migration: { confirmed: true } },
      stack.email.subscribe,
    );
    expect(migrated).toMatchObject({ state: 'unsubscribed', change: 'kept-unsubscribed', confirmationSent: false });
    expect((await stack.email.delivery.store.membership(subscriberId, 'desk'))?.state).toBe('unsubscribed');
    // A pending SNS subscription does not bring it back either, and sends no confirmation.
    const pending = await addSubscriber(
      { address, audience: label, migration: { confirmed: false } },
      stack.email.subscribe,
    );
    expect(pending).toMatchObject({ state: 'unsubscribed', change: 'kept-unsubscribed', confirmationSent: false });
    await stack.publishAlert(audience);
    await stack.email.deliver();
    expect(stack.email.sent.slice(sentBefore)).toEqual([]);
  });

  it('added again by ops, stays pending when a migration meets its old SNS subscription', async () => {
    const { stack, address, subscriberId } = await subscribedThenLeft();
    expect(await opsAdd(stack, address)).toMatchObject({ state: 'pending', change: 'reopened' });
    const migrated = await addSubscriber(
      { address, audience: label, migration: { confirmed: true } },
      stack.email.subscribe,
    );
    expect(migrated).toMatchObject({ state: 'pending', change: 'unchanged' });
    expect((await stack.email.delivery.store.membership(subscriberId, 'desk'))?.state).toBe('pending');
  });

  it('gets a new confirmation when ops add it again, on the same day as its first one', async () => {
    const { stack, audience, address } = await setUp();
    const first = await opsAdd(stack, address);
    expect(first).toMatchObject({ state: 'pending', confirmationSent: true });
    await confirm(stack, first.subscriberId);
    await stack.publishAlert(audience);
    await stack.email.deliver();
    await unsubscribe(stack, first.subscriberId);
    stack.clock.now += 60_000;

    const again = await opsAdd(stack, address);
    expect(again).toMatchObject({ state: 'pending', change: 'reopened', confirmationSent: true });
    const history = await stack.email.delivery.store.history(first.subscriberId);
    expect(history.filter((record) => record.kind === 'confirmation' && record.status === 'sent')).toHaveLength(2);
    // Adding it once more while it is pending stays within the one-a-day rule.
    expect(await opsAdd(stack, address)).toMatchObject({ change: 'unchanged', confirmationSent: false });
  });

  it('never gets, in its new subscription’s digest, what was held for it before it left', async () => {
    const { stack, audience, address } = await setUp();
    const { store, subscriberId } = await digestMember(stack, audience, address);
    const before = await stack.publishAlert(audience);
    await stack.email.deliver();
    expect(await store.heldEntries(subscriberId, 'desk')).toHaveLength(1);

    await unsubscribe(stack, subscriberId);
    stack.clock.now += 60_000;
    await opsAdd(stack, address);
    stack.clock.now += 60_000;
    await confirm(stack, subscriberId);
    const renewed = await store.membership(subscriberId, 'desk');
    await store.saveMembership({ ...(renewed as NonNullable<typeof renewed>), preference: 'digest' });
    stack.clock.now += 60_000;
    const after = await stack.publishAlert(audience);
    await stack.email.deliver();

    stack.clock.now = dailyDigestAt(stack.clock.now, audience) + 1;
    const sentBefore = stack.email.sent.length;
    expect(await stack.email.releaseDailyDigests()).toMatchObject({ due: 1, sent: 1 });
    const [digest] = stack.email.sent.slice(sentBefore);
    const text = (await parseEmail((digest as NonNullable<typeof digest>).raw)).text;
    expect(text).toContain(after.subject.replace(/^\[[^\]]*\] /, ''));
    expect(text).not.toContain(before.subject.replace(/^\[[^\]]*\] /, ''));
    const history = await store.history(subscriberId);
    expect(history.find((record) => record.status === 'unsubscribed')?.events[0]?.detail).toContain(
      '1 held alert(s) not sent',
    );
    expect(await store.heldEntries(subscriberId, 'desk')).toEqual([]);
  });

  it('an alert held while its digest went out is sent in the next digest, not cleared as part of a repeat', async () => {
    const { stack, audience, address } = await setUp();
    const { store, subscriberId } = await digestMember(stack, audience, address);
    const first = await stack.publishAlert(audience);
    await stack.email.deliver();

    // The digest goes out, and the release stops before it clears what it sent.
    stack.clock.now = dailyDigestAt(stack.clock.now, audience) + 1;
    const sentBefore = stack.email.sent.length;
    const clear = vi.spyOn(store, 'clearHeld').mockRejectedValueOnce(new Error('the release stopped'));
    expect(await stack.email.releaseDailyDigests()).toMatchObject({ due: 1, sent: 1, retry: 1 });
    clear.mockRestore();
    // An alert held after it went out, by a notification that started before (its entries carry
    // the time the notification started): it joins the uncleared entries, under the same due time.
    const releasedAt = stack.clock.now;
    stack.clock.now -= 30_000;
    const late = await stack.publishAlert(audience);
    await stack.email.deliver();
    stack.clock.now = releasedAt + 60_000;
    // The next release finds that digest sent: it clears what it held, and keeps the late alert.
    expect(await stack.email.releaseDailyDigests()).toMatchObject({ due: 1, sent: 0 });
    expect((await store.heldEntries(subscriberId, 'desk')).map((entry) => entry.entry.article.title)).toEqual([
      late.subject.replace(/^\[[^\]]*\] /, ''),
    ]);
    stack.clock.now = dailyDigestAt(stack.clock.now, audience) + 1;
    expect(await stack.email.releaseDailyDigests()).toMatchObject({ due: 1, sent: 1 });
    const digests = await Promise.all(
      stack.email.sent.slice(sentBefore).map(async (email) => (await parseEmail(email.raw)).text),
    );
    const title = (subject: string) => subject.replace(/^\[[^\]]*\] /, '');
    expect(digests).toHaveLength(2);
    expect(digests.filter((text) => text.includes(title(first.subject)))).toHaveLength(1);
    expect(digests.filter((text) => text.includes(title(late.subject)))).toHaveLength(1);
    // The history says which digest carried each held alert (email history shows it).
    const history = await store.history(subscriberId);
    const held = history.filter((record) => record.status === 'held');
    const carriers = held.map((record) => carriedBy(record, history)?.deliveryId);
    expect(carriers).toHaveLength(2);
    expect(carriers.every((carrier) => carrier?.includes('|daily:'))).toBe(true);
    expect(new Set(carriers).size).toBe(2);
  });

  it('an audience digest held for the daily digest names the daily digest that sent its entries', async () => {
    const { stack, audience, address } = await setUp();
    const { store, subscriberId } = await digestMember(stack, audience, address);
    // The audience's own digest (digest mode, quiet hours or a budget) reaches the email queue: its
    // entries are held under keys of their own, not the digest's.
    const held = ['a', 'b'].map((id) =>
      toHeldNotification(
        matchOf(audience, testArticle({ key: `id:${stack.prefix}${id}`, id: `${stack.prefix}${id}` })),
        'digest',
        PUBLISHED,
      ),
    );
    const [message] = planDigest(held, audience, PUBLISHED + 3_600_000).messages;
    if (message === undefined) throw new Error('no digest message');
    await stack.publish(message);
    await stack.email.deliver();
    expect(await store.heldEntries(subscriberId, 'desk')).toHaveLength(2);

    stack.clock.now = dailyDigestAt(stack.clock.now, audience) + 1;
    expect(await stack.email.releaseDailyDigests()).toMatchObject({ due: 1, sent: 1 });
    const history = await store.history(subscriberId);
    const heldRecord = history.find((record) => record.status === 'held' && record.kind === 'digest');
    if (heldRecord === undefined) throw new Error('the audience digest was not recorded as held');
    expect(carriedBy(heldRecord, history)).toMatchObject({ kind: 'daily-digest', status: 'sent' });
  });

  it('what waited for the daily digest of someone who unsubscribed is recorded as not sent and dropped at its time', async () => {
    const { stack, audience, address } = await setUp();
    const { store, subscriberId } = await digestMember(stack, audience, address);
    await stack.publishAlert(audience);
    await stack.email.deliver();
    expect(await store.heldEntries(subscriberId, 'desk')).toHaveLength(1);
    await unsubscribe(stack, subscriberId);

    stack.clock.now = dailyDigestAt(stack.clock.now, audience) + 1;
    const sentBefore = stack.email.sent.length;
    expect(await stack.email.releaseDailyDigests()).toMatchObject({ due: 1, sent: 0, notSent: 1 });
    expect(stack.email.sent.length).toBe(sentBefore);
    expect(await store.heldEntries(subscriberId, 'desk')).toEqual([]);
    const record = (await store.history(subscriberId)).find((entry) => entry.kind === 'daily-digest');
    expect(record).toMatchObject({ status: 'unsubscribed' });
    expect(record?.events[0]?.detail ?? '').toContain('1 held alert(s) not sent: unsubscribed');
  });

  it('a hold that lands while a release clears the last entries keeps its due time', async () => {
    const { stack, audience, address } = await setUp();
    const { store, subscriberId } = await digestMember(stack, audience, address);
    await stack.publishAlert(audience);
    await stack.email.deliver();
    const [first] = await store.heldEntries(subscriberId, 'desk');
    if (first === undefined) throw new Error('nothing was held');
    const dueAt = dailyDigestAt(stack.clock.now, audience);

    // Between the release's listing (nothing left) and its removal of the due time, another
    // notification holds an entry: the listing it acts on is stale.
    const list = store.heldEntries.bind(store);
    const spy = vi.spyOn(store, 'heldEntries').mockImplementationOnce(async (...args) => {
      const stale = await list(...args);
      await store.hold(subscriberId, 'desk', [{ ...first, key: 'late-entry', heldAt: stack.clock.now }], dueAt);
      return stale;
    });
    await store.clearHeld(subscriberId, 'desk', [first.key]);
    spy.mockRestore();
    expect((await store.heldEntries(subscriberId, 'desk')).map((entry) => entry.key)).toEqual(['late-entry']);
    expect((await store.dueDigests(dueAt + 1, 10)).map((due) => due.subscriberId)).toEqual([subscriberId]);
  });
});
