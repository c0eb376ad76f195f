/**
 * The SES events function (functions/email-events/process.ts) with a recording store: a reputation
 * alarm going to ALARM pauses sending (and OK does not), a bounce is recorded without the address
 * SMTP diagnostics quote, an event without the subscriber tag changes nothing, and anything else
 * on the topic fails after the rest was recorded, so it reaches the events dead-letter queue
 * (a changed event shape must not drop bounces quietly).
 */
import { describe, expect, it } from 'vitest';
import type { SendEvent, SendStatus, SubscriberStore } from '#core/email/ports';
import type { SubscriberProfile } from '#core/email/subscriber';
import { silentLog } from '#core/ports';
import { handleEmailEvents } from '../../functions/email-events/process.ts';

const profile: SubscriberProfile = {
  subscriberId: 'abcdef012345',
  address: 'kim@example.com',
  createdAt: 0,
  softBounces: 0,
};

function recordingStore() {
  const saved: SubscriberProfile[] = [];
  const events: { event: SendEvent; status: SendStatus }[] = [];
  /** Every reset of the soft-bounce count asked for: each is a (conditional) write. */
  const resets: string[] = [];
  const current = () => saved.at(-1) ?? profile;
  const store = {
    profile: async (id: string) => (id === profile.subscriberId ? current() : undefined),
    suppress: async (id: string, suppression: NonNullable<SubscriberProfile['suppression']>) => {
      if (id !== profile.subscriberId || current().suppression !== undefined) return false;
      saved.push({ ...current(), suppression });
      return true;
    },
    countSoftBounce: async (id: string) => {
      if (id !== profile.subscriberId) return undefined;
      saved.push({ ...current(), softBounces: current().softBounces + 1 });
      return current().softBounces;
    },
    resetSoftBounces: async (id: string) => {
      resets.push(id);
      if (id === profile.subscriberId && current().softBounces !== 0) saved.push({ ...current(), softBounces: 0 });
    },
    recordEvent: async (_id: string, _key: string, event: SendEvent, status: SendStatus) => {
      events.push({ event, status });
      return true;
    },
  } as unknown as SubscriberStore;
  return { store, saved, events, resets };
}

const sns = (...messages: unknown[]) => ({
  Records: messages.map((message, index) => ({ Sns: { MessageId: `m${index}`, Message: JSON.stringify(message) } })),
});

const bounce = (tags: Record<string, string[]>) => ({
  eventType: 'Bounce',
  mail: { timestamp: '2026-11-22T00:00:00Z', messageId: 'ses-1', tags },
  bounce: {
    bounceType: 'Permanent',
    bounceSubType: 'General',
    timestamp: '2026-11-22T00:01:00Z',
    bouncedRecipients: [
      {
        emailAddress: 'kim@example.com',
        status: '5.1.1',
        diagnosticCode: 'smtp; 550 5.1.1 <kim@example.com>: no such user',
      },
    ],
  },
});

describe('the SES events function', () => {
  it('pauses sending when a reputation alarm goes to ALARM, not when it returns to OK', async () => {
    const { store } = recordingStore();
    let pauses = 0;
    const deps = {
      store,
      sending: {
        pause: async () => {
          pauses += 1;
        },
      },
      log: silentLog,
      now: () => 0,
    };
    await handleEmailEvents(sns({ AlarmName: 'news-alerts-email-bounce-rate', NewStateValue: 'OK' }), deps);
    expect(pauses).toBe(0);
    const outcome = await handleEmailEvents(
      sns({ AlarmName: 'news-alerts-email-bounce-rate', NewStateValue: 'ALARM' }),
      deps,
    );
    expect(outcome.paused).toBe(true);
    expect(pauses).toBe(1);
  });

  it('suppresses on a hard bounce and records it without the address the diagnostic quotes', async () => {
    const { store, saved, events } = recordingStore();
    const outcome = await handleEmailEvents(
      sns(bounce({ subscriber: [profile.subscriberId], message: ['0123456789abcdef0123456789abcdef'] })),
      { store, sending: undefined, log: silentLog, now: () => 0 },
    );
    expect(outcome).toMatchObject({ recorded: 1, suppressed: 1 });
    expect(saved.at(-1)?.suppression?.reason).toBe('bounce');
    expect(events[0]?.status).toBe('bounced');
    expect(events[0]?.event.detail).toBe('Permanent/General 5.1.1');
    expect(JSON.stringify(events)).not.toContain('@');
  });

  it('changes nothing for an event without the subscriber tag', async () => {
    const { store, saved, events } = recordingStore();
    const outcome = await handleEmailEvents(sns(bounce({})), {
      store,
      sending: undefined,
      log: silentLog,
      now: () => 0,
    });
    expect(outcome).toMatchObject({ recorded: 0, suppressed: 0 });
    expect(saved).toEqual([]);
    expect(events).toEqual([]);
  });

  it('fails a message that is no SES event, after recording the rest, naming fields and never values', async () => {
    const { store, saved } = recordingStore();
    const lines: string[] = [];
    const log = {
      ...silentLog,
      error: (message: string, fields?: object) => lines.push(`${message} ${JSON.stringify(fields)}`),
    };
    const changedShape = { eventType: 'Bounce', mail: { messageId: 'm-1', tags: { subscriber: 'kim@example.com' } } };
    const rejection = handleEmailEvents(
      sns({ hello: 'world' }, bounce({ subscriber: [profile.subscriberId] }), changedShape, 'a plain string'),
      { store, sending: undefined, log, now: () => 0 },
    );
    await expect(rejection).rejects.toThrow(
      /neither an SES event nor an alarm notification; wrong or missing: eventType, mail/,
    );
    expect(saved.at(-1)?.suppression?.reason).toBe('bounce');
    expect(lines).toHaveLength(3);
    expect(lines[1]).toContain('mail.tags.subscriber');
    expect(lines.join('\n')).not.toContain('@');
  });

  it("fails an event that fits the schema but not SES's shape (a type it does not publish, a bounce without its details)", async () => {
    const tags = { subscriber: [profile.subscriberId] };
    for (const [event, field] of [
      [{ eventType: 'complaint', mail: { tags } }, 'eventType'],
      [{ eventType: 'Bounce', mail: { tags }, details: { bounceType: 'Permanent' } }, 'bounce'],
      [{ eventType: 'Bounce', mail: { tags }, bounce: { bounceType: 'Hard' } }, 'bounce.bounceType'],
      [{ eventType: 'Complaint', mail: { tags } }, 'complaint'],
    ] as const) {
      const { store, saved } = recordingStore();
      await expect(
        handleEmailEvents(sns(event), { store, sending: undefined, log: silentLog, now: () => 0 }),
      ).rejects.toThrow(`wrong or missing: ${field}`);
      expect(saved).toEqual([]);
    }
    // What SES does publish and this function does not act on is recorded, not failed.
    for (const eventType of ['Open', 'Click', 'Rendering Failure', 'Subscription', 'Send']) {
      const { store } = recordingStore();
      await expect(
        handleEmailEvents(sns({ eventType, mail: { tags } }), {
          store,
          sending: undefined,
          log: silentLog,
          now: () => 0,
        }),
      ).resolves.toMatchObject({ suppressed: 0 });
    }
  });

  it('writes nothing for a delivery to an address with no soft bounce; resets the count of one that has some', async () => {
    const { store, saved, resets } = recordingStore();
    const delivery = {
      eventType: 'Delivery',
      mail: {
        timestamp: '2026-11-22T00:00:00Z',
        messageId: 'ses-2',
        tags: { subscriber: [profile.subscriberId], message: ['0123456789abcdef0123456789abcdef'] },
      },
      delivery: { timestamp: '2026-11-22T00:00:05Z', recipients: ['kim@example.com'] },
    };
    const deps = { store, sending: undefined, log: silentLog, now: () => 0 };
    await handleEmailEvents(sns(delivery), deps);
    expect(resets).toEqual([]);
    saved.push({ ...profile, softBounces: 2 });
    await handleEmailEvents(sns(delivery), deps);
    expect(resets).toEqual([profile.subscriberId]);
    expect(saved.at(-1)?.softBounces).toBe(0);
  });
});
