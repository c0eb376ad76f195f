/**
 * Fault tests of the email channel (issue 31), each breaking the world on purpose and checking
 * that nothing is lost, nothing is sent twice, and nothing goes to a suppressed address:
 * SES throttling, duplicate SQS delivery (in turn and at the same time), a bounce arriving while
 * a digest is held, a bounce arriving while a batch is being sent, a complaint, a replayed
 * one-click POST, a token for a deleted subscriber, forged, altered, expired and revoked tokens,
 * and a poison message.
 */

import { PutSecretValueCommand } from '@aws-sdk/client-secrets-manager';
import { GetQueueAttributesCommand, ReceiveMessageCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import { afterEach, describe, expect, it } from 'vitest';
import { SecretsManagerLinkKeys } from '#aws/email/link-keys';
import { planDigest, toHeldNotification } from '#core/digest';
import { dailyDigestAt } from '#core/email/daily-digest';
import { DIGEST_RELEASE_MARGIN_MS, deliverNotification, releaseDailyDigests } from '#core/email/delivery';
import { emailWordsFor } from '#core/email/messages/catalog';
import { ONE_CLICK_BODY } from '#core/email/mime';
import { parseQueuedNotification } from '#core/email/notification';
import { EmailThrottledError, messageKeyOf, type SubscriberStore } from '#core/email/ports';
import { handlePreferenceRequest } from '#core/email/preferences';
import { addSubscriber } from '#core/email/subscribe';
import { handleEmailEvents } from '../../functions/email-events/process.ts';
import { testArticle, testRules } from '../support/email-fixtures.ts';
import { listUnsubscribeTargets, parseEmail } from '../support/email-mime.ts';
import { type EmailTestStack, sesEvent, startEmailTestStack } from '../support/email-stack.ts';

const stacks: EmailTestStack[] = [];
afterEach(async () => {
  for (const stack of stacks.splice(0)) await stack.stop();
});

async function setUp(options: Parameters<typeof startEmailTestStack>[0] = {}, addresses = ['a', 'b', 'c']) {
  const stack = await startEmailTestStack(options);
  stacks.push(stack);
  const audience = await stack.addAudience({ audienceId: 'desk', name: 'Markets desk', timeZone: 'UTC' });
  const ids: Record<string, string> = {};
  for (const name of addresses) {
    const outcome = await stack.email.addSubscriber(
      'desk',
      { address: `${name}@${stack.prefix}example.com` },
      { name: 'Markets desk' },
    );
    ids[name] = outcome.subscriberId;
  }
  return { stack, audience, ids };
}

/**
 * The store with some of its methods replaced, as a fault test needs; the others are the store's
 * own, bound to it (they use private fields, which a proxy does not have).
 */
function storeWith(store: SubscriberStore, replaced: Partial<SubscriberStore>): SubscriberStore {
  return new Proxy(store, {
    get: (target, property) => {
      if (Object.hasOwn(replaced, property)) return replaced[property as keyof SubscriberStore];
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

/** How many emails each subscriber id got among `sent`. */
const perSubscriber = (stack: EmailTestStack, from = 0) => {
  const counts: Record<string, number> = {};
  for (const email of stack.email.sent.slice(from)) counts[email.subscriberId] = (counts[email.subscriberId] ?? 0) + 1;
  return counts;
};

const linksOf = async (raw: Uint8Array) => {
  const parsed = await parseEmail(raw);
  const [oneClick] = listUnsubscribeTargets(parsed.header('List-Unsubscribe'));
  const manage = /https:\/\/127\.0\.0\.1:\d+\/p\/\S+/.exec(parsed.text)?.[0];
  if (oneClick === undefined || manage === undefined) throw new Error('the email has no links');
  return { oneClick, manage };
};

describe('SES throttling', () => {
  it('loses nothing and sends nothing twice: the throttled emails go out on the retry', async () => {
    let throttle = 2;
    const { stack, audience, ids } = await setUp({
      wrapSender: (sender) => ({
        async send(email) {
          if (throttle > 0) {
            throttle -= 1;
            throw new EmailThrottledError('SES: TooManyRequestsException');
          }
          return await sender.send(email);
        },
      }),
    });
    await stack.publishAlert(audience);
    const first = await stack.email.deliver();
    expect(first).toEqual({ received: 1, failed: 1 });
    expect(stack.email.sent).toHaveLength(1);
    const second = await stack.email.deliver();
    expect(second).toEqual({ received: 1, failed: 0 });
    expect(perSubscriber(stack)).toEqual({ [ids.a as string]: 1, [ids.b as string]: 1, [ids.c as string]: 1 });
    // Nothing is left over in the queue either.
    expect(await stack.email.deliver()).toEqual({ received: 0, failed: 0 });
  });
});

/** The stack's store with `completeSend` failing the first `failures` times, as DynamoDB does under throttling. */
function failingCompletes(store: SubscriberStore, failures: number) {
  let left = failures;
  return storeWith(store, {
    completeSend: async (...args) => {
      if (left > 0) {
        left -= 1;
        throw Object.assign(new Error('Throughput exceeds the current capacity'), {
          name: 'ProvisionedThroughputExceededException',
        });
      }
      return await store.completeSend(...args);
    },
  });
}

describe('DynamoDB failing after SES accepted an email', () => {
  it('a failed write of "sent" is retried; the notification is done and sends nothing again', async () => {
    const { stack, audience, ids } = await setUp({}, ['a']);
    await stack.publishAlert(audience);
    const { Messages = [] } = await stack.aws.sqs.send(new ReceiveMessageCommand({ QueueUrl: stack.email.queueUrl }));
    const notification = parseQueuedNotification(Messages[0]?.Body ?? '');
    const store = stack.email.delivery.store;
    const outcome = await deliverNotification(notification, {
      ...stack.email.delivery,
      store: failingCompletes(store, 1),
    });
    expect(outcome.sent).toBe(1);
    expect((await store.history(ids.a as string))[0]?.status).toBe('sent');
    await deliverNotification(notification, stack.email.delivery);
    expect(perSubscriber(stack)).toEqual({ [ids.a as string]: 1 });
  });

  it('when "sent" can never be written, the claim stays: a repeat of the notification within its lease sends nothing', async () => {
    const { stack, audience, ids } = await setUp({}, ['a']);
    await stack.publishAlert(audience);
    const { Messages = [] } = await stack.aws.sqs.send(new ReceiveMessageCommand({ QueueUrl: stack.email.queueUrl }));
    const notification = parseQueuedNotification(Messages[0]?.Body ?? '');
    const store = stack.email.delivery.store;
    const broken = {
      ...stack.email.delivery,
      store: failingCompletes(store, Number.POSITIVE_INFINITY),
      sleep: async () => {},
    };
    // Done, not failed: failing would bring the notification back to send it again.
    expect((await deliverNotification(notification, broken)).sent).toBe(1);
    expect((await store.history(ids.a as string))[0]?.status).toBe('sending');
    // The repeat finds the claim (its lease holds) and sends nothing.
    await expect(deliverNotification(notification, stack.email.delivery)).rejects.toThrow(/not sent for now/);
    expect(perSubscriber(stack)).toEqual({ [ids.a as string]: 1 });
  });

  it('a confirmation email is not sent again either', async () => {
    const { stack } = await setUp({}, []);
    const subscribe = { ...stack.email.subscribe, store: failingCompletes(stack.email.subscribe.store, 1) };
    const audienceLabel = { audienceId: 'desk', label: 'Markets desk', locale: 'en-US', language: 'en' as const };
    const address = `p@${stack.prefix}example.com`;
    const first = await addSubscriber({ address, audience: audienceLabel }, subscribe);
    expect(first.confirmationSent).toBe(true);
    // Ops add it again the same day: the confirmation already went out, once.
    const again = await addSubscriber({ address, audience: audienceLabel }, stack.email.subscribe);
    expect(again.confirmationSent).toBe(false);
    expect(stack.email.sent.filter((email) => email.subscriberId === first.subscriberId)).toHaveLength(1);
  });
});

describe('duplicate SQS delivery', () => {
  it('sends each email once when the same notification arrives twice, one after the other', async () => {
    const { stack, audience, ids } = await setUp();
    await stack.publishAlert(audience);
    const { Messages = [] } = await stack.aws.sqs.send(
      new ReceiveMessageCommand({ QueueUrl: stack.email.queueUrl, VisibilityTimeout: 0 }),
    );
    expect(Messages).toHaveLength(1);
    expect(await stack.email.deliver()).toEqual({ received: 1, failed: 0 });
    // SQS delivers at least once: the same message comes again after it was handled.
    await stack.aws.sqs.send(
      new SendMessageCommand({ QueueUrl: stack.email.queueUrl, MessageBody: Messages[0]?.Body ?? '' }),
    );
    expect(await stack.email.deliver()).toEqual({ received: 1, failed: 0 });
    expect(perSubscriber(stack)).toEqual({ [ids.a as string]: 1, [ids.b as string]: 1, [ids.c as string]: 1 });
  });

  it('sends each email once when both copies arrive in one batch', async () => {
    const { stack, audience, ids } = await setUp();
    await stack.publishAlert(audience);
    const { Messages = [] } = await stack.aws.sqs.send(
      new ReceiveMessageCommand({ QueueUrl: stack.email.queueUrl, VisibilityTimeout: 0 }),
    );
    await stack.aws.sqs.send(
      new SendMessageCommand({ QueueUrl: stack.email.queueUrl, MessageBody: Messages[0]?.Body ?? '' }),
    );
    // The copy whose claims are in progress is told to come back; on its retry it finds them done.
    for (let pass = 0; pass < 3; pass++) await stack.email.deliver();
    expect(await stack.email.deliver()).toEqual({ received: 0, failed: 0 });
    expect(perSubscriber(stack)).toEqual({ [ids.a as string]: 1, [ids.b as string]: 1, [ids.c as string]: 1 });
  });

  it('sends each email once when two invocations handle the same notification at the same time', async () => {
    const { stack, audience, ids } = await setUp();
    await stack.publishAlert(audience);
    const { Messages = [] } = await stack.aws.sqs.send(new ReceiveMessageCommand({ QueueUrl: stack.email.queueUrl }));
    const notification = parseQueuedNotification(Messages[0]?.Body ?? '');
    const outcomes = await Promise.allSettled([
      deliverNotification(notification, stack.email.delivery),
      deliverNotification(notification, stack.email.delivery),
    ]);
    // One of them may be told to come back (a claim in progress): then the retry finds it done.
    for (const outcome of outcomes) {
      if (outcome.status === 'rejected') expect((outcome.reason as Error).name).toBe('EmailRetryError');
    }
    await deliverNotification(notification, stack.email.delivery);
    expect(perSubscriber(stack)).toEqual({ [ids.a as string]: 1, [ids.b as string]: 1, [ids.c as string]: 1 });
  });
});

describe('bounces and complaints', () => {
  it('a hard bounce while a daily digest is held: the digest is not sent to that address, and says so in its history', async () => {
    const { stack, audience, ids } = await setUp({}, ['a', 'b']);
    const store = stack.email.delivery.store;
    await stack.publishAlert(audience);
    await stack.email.deliver();
    const firstToA = stack.email.sent.find((email) => email.subscriberId === ids.a);
    if (firstToA === undefined) throw new Error('no first email to a');
    // a switches to the daily digest; the next alert is held for it.
    const membership = await store.membership(ids.a as string, 'desk');
    await store.saveMembership({ ...(membership as NonNullable<typeof membership>), preference: 'digest' });
    const before = stack.email.sent.length;
    await stack.publishAlert(audience);
    await stack.email.deliver();
    expect(perSubscriber(stack, before)).toEqual({ [ids.b as string]: 1 });
    expect(await store.heldEntries(ids.a as string, 'desk')).toHaveLength(1);
    // The earlier message to a bounces for good while the digest waits.
    await stack.sesEvents(sesEvent('Bounce', firstToA, { bounceType: 'Permanent' }));
    expect((await store.profile(ids.a as string))?.suppression?.reason).toBe('bounce');
    // An audience digest published now does not reach a either.
    const held = [
      toHeldNotification(
        { audienceId: 'desk', article: testArticle({ key: 'id:held-1' }), rules: testRules },
        'digest',
        stack.clock.now,
      ),
    ];
    const [digest] = planDigest(held, audience, stack.clock.now).messages;
    await stack.publish(digest as NonNullable<typeof digest>);
    await stack.email.deliver();
    // The digest is due: nothing goes to a, and its held entry is not silently gone.
    stack.clock.now = dailyDigestAt(stack.clock.now, audience) + 1;
    const release = await stack.email.releaseDailyDigests();
    expect(release).toMatchObject({ due: 1, sent: 0, notSent: 1 });
    expect(perSubscriber(stack, before)).toEqual({ [ids.b as string]: 2 });
    const history = await store.history(ids.a as string);
    const notSent = history.find((record) => record.kind === 'daily-digest');
    expect(notSent?.status).toBe('suppressed');
    expect(notSent?.events[0]?.detail).toContain('1 held alert(s) not sent');
    expect(history.find((record) => record.kind === 'digest')?.status).toBe('suppressed');
    expect(await store.heldEntries(ids.a as string, 'desk')).toEqual([]);
  });

  it('a bounce that arrives while a batch is being sent stops the sends that had not started', async () => {
    const { stack, audience, ids } = await setUp({}, ['a', 'b']);
    const store = stack.email.delivery.store;
    await stack.publishAlert(audience);
    await stack.email.deliver();
    const toB = stack.email.sent.find((email) => email.subscriberId === ids.b);
    // The function read the profiles before the bounce arrived.
    const stale = await store.profiles([ids.a as string, ids.b as string]);
    await stack.sesEvents(sesEvent('Bounce', toB as NonNullable<typeof toB>, { bounceType: 'Permanent' }));
    const before = stack.email.sent.length;
    const message = await stack.publishAlert(audience);
    const { Messages = [] } = await stack.aws.sqs.send(new ReceiveMessageCommand({ QueueUrl: stack.email.queueUrl }));
    await deliverNotification(parseQueuedNotification(Messages[0]?.Body ?? ''), {
      ...stack.email.delivery,
      store: storeWith(store, { profiles: async () => stale }),
    });
    expect(message.topicArn).toBe(audience.topicArn);
    expect(perSubscriber(stack, before)).toEqual({ [ids.a as string]: 1 });
  });

  it('a complaint suppresses the address at once: the next alert goes to everyone else', async () => {
    const { stack, audience, ids } = await setUp({}, ['a', 'b']);
    await stack.publishAlert(audience);
    await stack.email.deliver();
    const toA = stack.email.sent.find((email) => email.subscriberId === ids.a);
    await stack.sesEvents(sesEvent('Complaint', toA as NonNullable<typeof toA>));
    const before = stack.email.sent.length;
    await stack.publishAlert(audience);
    await stack.email.deliver();
    expect(perSubscriber(stack, before)).toEqual({ [ids.b as string]: 1 });
    const history = await stack.email.delivery.store.history(ids.a as string);
    expect(history.map((record) => record.status).sort()).toEqual(['complained', 'suppressed']);
  });

  it('a complaint and a delivery handled at the same time: the complaint stands, whichever writes last', async () => {
    const { stack, audience, ids } = await setUp({}, ['a']);
    await stack.publishAlert(audience);
    await stack.publishAlert(audience);
    await stack.email.deliver();
    const [first, second] = stack.email.sent as [(typeof stack.email.sent)[number], (typeof stack.email.sent)[number]];
    const store = stack.email.delivery.store;
    await stack.sesEvents(sesEvent('Bounce', first, { bounceType: 'Transient' }));
    // The delivery's invocation reads the address (not suppressed yet), then waits until the
    // complaint's invocation has written the suppression, then writes what it has.
    let complaintDone: () => void = () => {};
    const complaintWritten = new Promise<void>((resolve) => {
      complaintDone = resolve;
    });
    const slowReads = storeWith(store, {
      profile: async (id) => {
        const read = await store.profile(id);
        await complaintWritten;
        return read;
      },
    });
    const sns = (event: Record<string, unknown>) => ({
      Records: [{ Sns: { MessageId: 'event', Message: JSON.stringify(event) } }],
    });
    const delivery = handleEmailEvents(sns(sesEvent('Delivery', second)), {
      store: slowReads,
      sending: undefined,
      log: stack.email.delivery.log,
      now: () => stack.clock.now,
    });
    await stack.sesEvents(sesEvent('Complaint', first));
    complaintDone();
    await delivery;
    const profile = await store.profile(ids.a as string);
    expect(profile?.suppression?.reason).toBe('complaint');
    expect(profile?.softBounces).toBe(0);
  });

  it('soft bounces suppress only after the documented limit, and a delivery resets the count', async () => {
    const { stack, audience, ids } = await setUp({}, ['a']);
    for (let alert = 0; alert < 9; alert++) await stack.publishAlert(audience);
    await stack.email.deliver();
    const toA = stack.email.sent as NonNullable<(typeof stack.email.sent)[number]>[];
    expect(toA).toHaveLength(9);
    const store = stack.email.delivery.store;
    for (const email of toA.slice(0, 4)) await stack.sesEvents(sesEvent('Bounce', email, { bounceType: 'Transient' }));
    expect((await store.profile(ids.a as string))?.suppression).toBeUndefined();
    await stack.sesEvents(sesEvent('Delivery', toA[4] as (typeof toA)[number]));
    expect((await store.profile(ids.a as string))?.softBounces).toBe(0);
    for (const email of [...toA.slice(5, 9), toA[0] as (typeof toA)[number]]) {
      await stack.sesEvents(sesEvent('Bounce', email, { bounceType: 'Transient' }));
    }
    // The last was a repeat of a bounce counted before: four counted, not suppressed yet.
    expect((await store.profile(ids.a as string))?.softBounces).toBe(4);
    expect((await store.profile(ids.a as string))?.suppression).toBeUndefined();
    await stack.sesEvents(sesEvent('Bounce', toA[4] as (typeof toA)[number], { bounceType: 'Transient' }));
    expect((await store.profile(ids.a as string))?.suppression?.reason).toBe('soft-bounces');
  });

  it('a soft bounce delivered again (Lambda retrying an event whose history write failed) counts once', async () => {
    const { stack, audience, ids } = await setUp({}, ['a']);
    await stack.publishAlert(audience);
    await stack.email.deliver();
    const toA = stack.email.sent[0] as NonNullable<(typeof stack.email.sent)[number]>;
    const store = stack.email.delivery.store;
    let failures = 2;
    const flaky = storeWith(store, {
      recordEvent: async (...args) => {
        if (failures > 0) {
          failures -= 1;
          throw Object.assign(new Error('Rate exceeded'), { name: 'ThrottlingException' });
        }
        return await store.recordEvent(...args);
      },
    });
    const event = {
      Records: [
        { Sns: { MessageId: 'bounce', Message: JSON.stringify(sesEvent('Bounce', toA, { bounceType: 'Transient' })) } },
      ],
    };
    const deps = { store: flaky, sending: undefined, log: stack.email.delivery.log, now: () => stack.clock.now };
    // Lambda's first try and its two retries of the same event.
    await expect(handleEmailEvents(event, deps)).rejects.toThrow('Rate exceeded');
    await expect(handleEmailEvents(event, deps)).rejects.toThrow('Rate exceeded');
    await handleEmailEvents(event, deps);
    expect((await store.profile(ids.a as string))?.softBounces).toBe(1);
    expect((await store.history(ids.a as string))[0]?.status).toBe('soft-bounced');
  });
});

describe('a daily digest subscriber', () => {
  it('gets an alert in one digest only, when its notification comes back after the digest went out', async () => {
    let throttled: string | undefined;
    const { stack, audience, ids } = await setUp(
      {
        wrapSender: (sender) => ({
          async send(email) {
            if (email.tags.subscriber === throttled) throw new EmailThrottledError('SES: TooManyRequestsException');
            return await sender.send(email);
          },
        }),
      },
      ['a', 'b'],
    );
    const store = stack.email.delivery.store;
    const membership = await store.membership(ids.a as string, 'desk');
    await store.saveMembership({ ...(membership as NonNullable<typeof membership>), preference: 'digest' });
    // SES throttles b: the notification comes back later; a's entry is held.
    throttled = ids.b;
    await stack.publishAlert(audience);
    expect(await stack.email.deliver()).toEqual({ received: 1, failed: 1 });
    // a's digest goes out before the retry.
    stack.clock.now = dailyDigestAt(stack.clock.now, audience) + 1;
    expect(await stack.email.releaseDailyDigests()).toMatchObject({ due: 1, sent: 1 });
    throttled = undefined;
    expect(await stack.email.deliver()).toEqual({ received: 1, failed: 0 });
    expect(await store.heldEntries(ids.a as string, 'desk')).toEqual([]);
    // The next day's release has nothing for a.
    stack.clock.now = dailyDigestAt(stack.clock.now, audience) + 1;
    expect(await stack.email.releaseDailyDigests()).toMatchObject({ due: 0, sent: 0 });
    expect(perSubscriber(stack)).toEqual({ [ids.a as string]: 1, [ids.b as string]: 1 });
  });

  /** A digest subscriber with `alerts` alerts held, one a second apart (Story 1 the oldest). */
  async function heldDay(alerts: number) {
    const { stack, audience, ids } = await setUp({}, ['a']);
    const store = stack.email.delivery.store;
    const subscriberId = ids.a as string;
    const membership = await store.membership(subscriberId, 'desk');
    await store.saveMembership({ ...(membership as NonNullable<typeof membership>), preference: 'digest' });
    const hold = async (count: number) => {
      for (let alert = 0; alert < count; alert++) {
        await stack.publishAlert(audience);
        await stack.email.deliver();
        stack.clock.now += 1_000;
      }
    };
    await hold(alerts);
    /** The stories of each digest email sent since `from`, in the order they went out. */
    const digests = async (from = 0) => {
      const stories: string[][] = [];
      for (const email of stack.email.sent.slice(from)) {
        stories.push([...new Set((await parseEmail(email.raw)).text.match(/Story \d+/g) ?? [])].sort());
      }
      return stories;
    };
    return {
      stack,
      audience,
      store,
      subscriberId,
      hold,
      digests,
      capped: { ...stack.email.delivery, dailyDigestMaxEntries: 2 },
    };
  }

  it('gets a long day in digests of at most the cap, oldest first, each alert once, one after another', async () => {
    const { stack, audience, store, subscriberId, digests, capped } = await heldDay(5);
    stack.clock.now = dailyDigestAt(stack.clock.now, audience) + 1;
    expect(await releaseDailyDigests(capped)).toMatchObject({ sent: 3, retry: 0 });
    // 2 + 2 + 1, the oldest first (each digest shows its own newest first).
    expect(await digests()).toEqual([['Story 1', 'Story 2'], ['Story 3', 'Story 4'], ['Story 5']]);
    expect(await store.heldEntries(subscriberId, 'desk')).toEqual([]);
    stack.clock.now += 15 * 60_000;
    expect(await releaseDailyDigests(capped)).toMatchObject({ due: 0, sent: 0 });
  });

  /** The store, with `clearHeld` removing the first `removes` keys it is given, then failing. */
  const dyingAfter = (store: SubscriberStore, removes: number) =>
    storeWith(store, {
      clearHeld: async (subscriberId, audienceId, keys) => {
        await store.clearHeld(subscriberId, audienceId, keys.slice(0, removes));
        throw new Error('injected: the release died here');
      },
    });

  it.each([
    ['before it cleared anything', 0],
    ['half way through clearing', 2],
  ])(
    'does not send a digest again that went out before its entries were cleared (%s), alerts held since or not',
    async (_when, removes) => {
      const { stack, audience, store, subscriberId, hold, digests } = await heldDay(4);
      const uncapped = { ...stack.email.delivery, dailyDigestMaxEntries: 5 };
      stack.clock.now = dailyDigestAt(stack.clock.now, audience) + 1;
      expect(await releaseDailyDigests({ ...uncapped, store: dyingAfter(store, removes) })).toMatchObject({ retry: 1 });
      // Another alert comes in; the next release recognises the digest as sent and sends no part of it again.
      await hold(1);
      expect(await releaseDailyDigests(uncapped)).toMatchObject({ sent: 0, retry: 0 });
      // The alert held since goes in the next day's digest.
      stack.clock.now = dailyDigestAt(stack.clock.now, audience) + 1;
      expect(await releaseDailyDigests(uncapped)).toMatchObject({ sent: 1 });
      expect(await digests()).toEqual([['Story 1', 'Story 2', 'Story 3', 'Story 4'], ['Story 5']]);
      expect(await store.heldEntries(subscriberId, 'desk')).toEqual([]);
    },
  );

  it('moves a part a claim without entries blocks to the next day, instead of trying it for good', async () => {
    const { stack, audience, store, subscriberId, digests, capped } = await heldDay(3);
    stack.clock.now = dailyDigestAt(stack.clock.now, audience) + 1;
    // A release recorded the first part as not sent (the member paused between its read and its
    // claim) and died before it cleared anything: that record holds the part's id and no entries.
    const [due] = await store.dueDigests(stack.clock.now, 1);
    const [first] = [...(await store.heldEntries(subscriberId, 'desk'))].sort((a, b) => a.heldAt - b.heldAt);
    const partId = `desk|daily:${subscriberId}:${new Date(due?.dueAt ?? 0).toISOString()}+${first?.key.slice(0, 16)}`;
    await store.recordOutcome({
      subscriberId,
      messageKey: messageKeyOf(partId),
      deliveryId: partId,
      audienceId: 'desk',
      kind: 'daily-digest',
      status: 'paused',
      createdAt: stack.clock.now,
      detail: '2 held alert(s) not sent: paused',
    });
    expect(await releaseDailyDigests(capped)).toMatchObject({ sent: 0, retry: 0 });
    // Nothing was sent twice or lost: the next day's digest carries them.
    stack.clock.now = dailyDigestAt(stack.clock.now, audience) + 1;
    expect(await releaseDailyDigests(capped)).toMatchObject({ sent: 2 });
    expect(await digests()).toEqual([['Story 1', 'Story 2'], ['Story 3']]);
  });

  it('gets an alert held while its digest’s due time could not be written: the retry writes it', async () => {
    const { stack, audience, ids } = await setUp({}, ['a']);
    const store = stack.email.delivery.store;
    const membership = await store.membership(ids.a as string, 'desk');
    await store.saveMembership({ ...(membership as NonNullable<typeof membership>), preference: 'digest' });
    // The entry is held; the write of when its digest is due is throttled once.
    let failDue = true;
    stack.aws.documents.middlewareStack.add(
      (next, context) => async (args) => {
        const input = args.input as { UpdateExpression?: string };
        if (failDue && context.commandName?.startsWith('Update') && input.UpdateExpression?.includes('holdSeq')) {
          failDue = false;
          throw Object.assign(new Error('Throughput exceeds the current capacity (injected)'), {
            name: 'ProvisionedThroughputExceededException',
            $fault: 'client',
          });
        }
        return await next(args);
      },
      { step: 'initialize', name: 'failDueTimeOnce' },
    );
    await stack.publishAlert(audience);
    expect(await stack.email.deliver()).toEqual({ received: 1, failed: 1 });
    expect(failDue).toBe(false);
    expect(await stack.email.deliver()).toEqual({ received: 1, failed: 0 });
    stack.clock.now = dailyDigestAt(stack.clock.now, audience) + 1;
    expect(await stack.email.releaseDailyDigests()).toMatchObject({ due: 1, sent: 1 });
    expect(perSubscriber(stack)).toEqual({ [ids.a as string]: 1 });
  });
});

describe('many daily digests due at once', () => {
  const names = ['a', 'b', 'c', 'd', 'e', 'f', 'g'];
  async function sevenDue() {
    const setup = await setUp({}, names);
    const store = setup.stack.email.delivery.store;
    for (const id of Object.values(setup.ids)) {
      const membership = await store.membership(id, 'desk');
      await store.saveMembership({ ...(membership as NonNullable<typeof membership>), preference: 'digest' });
    }
    await setup.stack.publishAlert(setup.audience);
    await setup.stack.email.deliver();
    setup.stack.clock.now = dailyDigestAt(setup.stack.clock.now, setup.audience) + 1;
    return setup;
  }

  it('are released though one of them fails: the others go out, and the release fails at its end for the retry', async () => {
    const { stack, ids } = await sevenDue();
    const store = stack.email.delivery.store;
    // The first digest of the first page fails: the six after it must still go out.
    const [first] = await store.dueDigests(stack.clock.now, 1);
    const broken = storeWith(store, {
      heldEntries: async (subscriberId, audienceId) => {
        if (subscriberId === first?.subscriberId) throw new Error('injected: this digest cannot be read');
        return await store.heldEntries(subscriberId, audienceId);
      },
    });
    await expect(releaseDailyDigests({ ...stack.email.delivery, store: broken }, { limit: 3 })).rejects.toThrow(
      /injected: this digest cannot be read/,
    );
    const others = Object.values(ids).filter((id) => id !== first?.subscriberId);
    expect(others).toHaveLength(6);
    expect(perSubscriber(stack)).toEqual(Object.fromEntries(others.map((id) => [id, 1])));
    // The next release sends the one that failed.
    expect(await releaseDailyDigests(stack.email.delivery, { limit: 3 })).toMatchObject({ due: 1, sent: 1 });
  });

  it('are all released by one run, page after page, not only the first page', async () => {
    const { stack, ids } = await sevenDue();
    const outcome = await releaseDailyDigests(stack.email.delivery, { limit: 3 });
    expect(outcome).toEqual({ due: 7, sent: 7, notSent: 0, retry: 0 });
    expect(perSubscriber(stack)).toEqual(Object.fromEntries(Object.values(ids).map((id) => [id, 1])));
    expect(await releaseDailyDigests(stack.email.delivery, { limit: 3 })).toMatchObject({ due: 0 });
  });

  it('stop while the invocation still has time to spare, and the next run sends the rest', async () => {
    const { stack, ids } = await sevenDue();
    // Time enough to start two digests, then less than the margin.
    let checks = 0;
    const remainingMs = () => (++checks <= 2 ? 60_000 : DIGEST_RELEASE_MARGIN_MS - 1);
    expect(await releaseDailyDigests(stack.email.delivery, { limit: 3, remainingMs })).toMatchObject({
      due: 2,
      sent: 2,
    });
    expect(await releaseDailyDigests(stack.email.delivery)).toMatchObject({ due: 5, sent: 5 });
    expect(perSubscriber(stack)).toEqual(Object.fromEntries(Object.values(ids).map((id) => [id, 1])));
  });
});

describe('links', () => {
  it('a replayed one-click POST answers the same and changes nothing the second time', async () => {
    const { stack, audience, ids } = await setUp({}, ['a', 'b']);
    await stack.publishAlert(audience);
    await stack.email.deliver();
    const toA = stack.email.sent.find((email) => email.subscriberId === ids.a);
    const { oneClick } = await linksOf((toA as NonNullable<typeof toA>).raw);
    const post = () =>
      stack.request(oneClick, {
        method: 'POST',
        body: ONE_CLICK_BODY,
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      });
    const first = await post();
    expect(first.status).toBe(200);
    const afterFirst = await stack.tableSnapshot();
    stack.clock.now += 60_000;
    const second = await post();
    expect(second.status).toBe(200);
    expect(second.body).toBe(first.body);
    expect(await stack.tableSnapshot()).toBe(afterFirst);
    const before = stack.email.sent.length;
    await stack.publishAlert(audience);
    await stack.email.deliver();
    expect(perSubscriber(stack, before)).toEqual({ [ids.b as string]: 1 });
  });

  it('a preference change posted while a one-click unsubscribe lands does not undo the unsubscribe', async () => {
    const { stack, audience, ids } = await setUp({}, ['a']);
    await stack.publishAlert(audience);
    await stack.email.deliver();
    const { oneClick, manage } = await linksOf((stack.email.sent[0] as (typeof stack.email.sent)[number]).raw);
    const store = stack.email.preferences.store;
    // The page's POST reads the memberships (confirmed), then waits until the one-click POST has
    // unsubscribed, then writes its change.
    let unsubscribed: () => void = () => {};
    const oneClickDone = new Promise<void>((resolve) => {
      unsubscribed = resolve;
    });
    const slowReads = storeWith(store, {
      memberships: async (id) => {
        const read = await store.memberships(id);
        await oneClickDone;
        return read;
      },
    });
    const form = handlePreferenceRequest(
      {
        method: 'POST',
        path: new URL(manage).pathname,
        query: {},
        body: 'action=preference&preference=digest',
        contentType: 'application/x-www-form-urlencoded',
      },
      { ...stack.email.preferences, store: slowReads },
    );
    const oneClickResponse = await stack.request(oneClick, {
      method: 'POST',
      body: ONE_CLICK_BODY,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(oneClickResponse.status).toBe(200);
    unsubscribed();
    const formResponse = await form;
    expect(formResponse.headers.Location).toContain('problem=unsubscribed');
    expect((await store.membership(ids.a as string, 'desk'))?.state).toBe('unsubscribed');
    const before = stack.email.sent.length;
    await stack.publishAlert(audience);
    await stack.email.deliver();
    expect(stack.email.sent.length).toBe(before);
  });

  it('a one-click POST larger than a form ever is gets 413 and changes nothing, however it arrives', async () => {
    const { stack, audience, ids } = await setUp({}, ['a']);
    await stack.publishAlert(audience);
    await stack.email.deliver();
    const toA = stack.email.sent.find((email) => email.subscriberId === ids.a);
    const { oneClick } = await linksOf((toA as NonNullable<typeof toA>).raw);
    const before = await stack.tableSnapshot();
    // Over the limit in one piece, and in many (the sandbox's server kept only what fitted).
    for (const body of [`${ONE_CLICK_BODY}&pad=${'a'.repeat(5000)}`, `${ONE_CLICK_BODY}&pad=${'a'.repeat(200_000)}`]) {
      const response = await stack.request(oneClick, {
        method: 'POST',
        body,
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      });
      expect(response.status).toBe(413);
    }
    expect(await stack.tableSnapshot()).toBe(before);
  });

  it('a token for a deleted subscriber gets the plain error page and changes nothing', async () => {
    const { stack, audience, ids } = await setUp({}, ['a']);
    await stack.publishAlert(audience);
    await stack.email.deliver();
    const { oneClick, manage } = await linksOf(
      (stack.email.sent[0] as NonNullable<(typeof stack.email.sent)[number]>).raw,
    );
    await stack.email.delivery.store.deleteSubscriber(ids.a as string);
    const snapshot = await stack.tableSnapshot();
    const invalid = emailWordsFor('en').page.invalidTitle;
    for (const request of [
      { url: manage },
      { url: oneClick },
      {
        url: oneClick,
        method: 'POST',
        body: ONE_CLICK_BODY,
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      },
      {
        url: manage,
        method: 'POST',
        body: 'action=unsubscribe-all',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      },
    ]) {
      const response = await stack.request(request.url, request);
      expect(response.status).toBe(404);
      expect(response.body).toContain(invalid);
    }
    expect(await stack.tableSnapshot()).toBe(snapshot);
  });

  it('forged, altered, expired and revoked tokens get the plain error page and change nothing', async () => {
    const { stack, audience } = await setUp({}, ['a']);
    await stack.publishAlert(audience);
    await stack.email.deliver();
    const { oneClick, manage } = await linksOf(
      (stack.email.sent[0] as NonNullable<(typeof stack.email.sent)[number]>).raw,
    );
    const token = oneClick.slice(oneClick.lastIndexOf('/') + 1);
    const [format, version, payload, signature] = token.split('.') as [string, string, string, string];
    const base = oneClick.slice(0, oneClick.lastIndexOf('/') + 1);
    const flip = (text: string) => `${text.slice(0, 5)}${text[5] === 'A' ? 'B' : 'A'}${text.slice(6)}`;
    const snapshot = await stack.tableSnapshot();
    const postOneClick = (url: string) =>
      stack.request(url, {
        method: 'POST',
        body: ONE_CLICK_BODY,
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      });
    for (const forged of [
      `${format}.${version}.${flip(payload)}.${signature}`,
      `${format}.${version}.${payload}.${flip(signature)}`,
      `${format}.9.${payload}.${signature}`,
      `${format}.${version}.${Buffer.from(`m|${'0'.repeat(20)}|desk|${Math.floor(stack.clock.now / 86_400_000)}`).toString('base64url')}.${signature}`,
      'not-a-token',
    ]) {
      expect((await postOneClick(`${base}${forged}`)).status).toBe(404);
      expect((await stack.request(`${base.replace('/u/', '/p/')}${forged}`)).status).toBe(404);
    }
    // A confirmation token cannot manage, and a management token cannot confirm.
    expect((await stack.request(manage.replace('/p/', '/c/'))).status).toBe(404);
    // Expired: past the link lifetime (180 days by default).
    const expired = await handlePreferenceRequest(
      {
        method: 'POST',
        path: new URL(oneClick).pathname,
        query: {},
        body: ONE_CLICK_BODY,
        contentType: 'application/x-www-form-urlencoded',
      },
      { ...stack.email.preferences, now: () => stack.clock.now + 181 * 86_400_000 },
    );
    expect(expired.status).toBe(404);
    // Revoked: the key version the link was signed with is removed from the secret.
    await stack.aws.secrets.send(
      new PutSecretValueCommand({
        SecretId: stack.email.linkKeySecretId,
        SecretString: JSON.stringify({ current: '2', key2: 'k'.repeat(64) }),
      }),
    );
    const revoked = await handlePreferenceRequest(
      {
        method: 'POST',
        path: new URL(oneClick).pathname,
        query: {},
        body: ONE_CLICK_BODY,
        contentType: 'application/x-www-form-urlencoded',
      },
      {
        ...stack.email.preferences,
        keys: new SecretsManagerLinkKeys({
          client: stack.aws.secrets,
          secretId: stack.email.linkKeySecretId,
          maxAgeSeconds: 0,
        }),
      },
    );
    expect(revoked.status).toBe(404);
    expect(await stack.tableSnapshot()).toBe(snapshot);
  });
});

describe('a poison message', () => {
  it('fails on every receive and ends in the dead-letter queue; the notifications around it are sent', async () => {
    const { stack, audience, ids } = await setUp({}, ['a']);
    await stack.aws.sqs.send(
      new SendMessageCommand({ QueueUrl: stack.email.queueUrl, MessageBody: '{"not":"an SNS notification"}' }),
    );
    await stack.publishAlert(audience);
    for (let pass = 0; pass < 6; pass++) await stack.email.deliver();
    expect(perSubscriber(stack)).toEqual({ [ids.a as string]: 1 });
    const { Attributes } = await stack.aws.sqs.send(
      new GetQueueAttributesCommand({
        QueueUrl: stack.email.deadLetterQueueUrl,
        AttributeNames: ['ApproximateNumberOfMessages'],
      }),
    );
    expect(Attributes?.ApproximateNumberOfMessages).toBe('1');
  });
});
