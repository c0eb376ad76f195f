/**
 * The SES email channel end to end on moto server: a notification an audience topic publishes
 * reaches the email queue (SNS → SQS), the delivery function sends one email per confirmed
 * subscriber through SES v2 (moto keeps the raw bytes), every `.eml` the sandbox writes is
 * exactly what SES was given, each message's one-click URL accepts the RFC 8058 POST, and SES
 * events land in the subscriber's history.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ONE_CLICK_BODY } from '#core/email/mime';
import type { Audience } from '#core/model';
import { htmlProblems, listUnsubscribeTargets, parseEmail } from '../support/email-mime.ts';
import { type EmailTestStack, sesEvent, startEmailTestStack } from '../support/email-stack.ts';

let stack: EmailTestStack;
let desk: Audience;
let korean: Audience;

beforeAll(async () => {
  stack = await startEmailTestStack();
  desk = await stack.addAudience({ audienceId: 'desk', name: 'Markets desk', timeZone: 'Europe/London' });
  korean = await stack.addAudience({ audienceId: 'chips', name: '반도체팀', timeZone: 'Asia/Seoul', locale: 'ko-KR' });
  await stack.email.addSubscriber('desk', { address: `lee@${stack.prefix}example.com` }, { name: 'Markets desk' });
  await stack.email.addSubscriber('desk', { address: `park@${stack.prefix}example.com` }, { name: 'Markets desk' });
  await stack.email.addSubscriber(
    'desk',
    { address: `new@${stack.prefix}example.com`, state: 'pending' },
    { name: 'Markets desk' },
  );
  await stack.email.addSubscriber(
    'chips',
    { address: `kim@${stack.prefix}example.com` },
    { name: '반도체팀', locale: 'ko-KR' },
  );
});

afterAll(async () => {
  await stack?.stop();
});

describe('an alert published to an audience topic', () => {
  let sentBefore = 0;
  beforeAll(async () => {
    sentBefore = stack.email.sent.length;
    await stack.publishAlert(desk);
    await stack.publishAlert(korean);
    expect(await stack.email.deliver()).toEqual({ received: 2, failed: 0 });
  });

  it('is emailed once to each confirmed subscriber, and to nobody else', () => {
    const sent = stack.email.sent.slice(sentBefore);
    const recipients = sent.map((email) => /^To: (.+)$/m.exec(Buffer.from(email.raw).toString())?.[1]?.trim()).sort();
    expect(recipients).toEqual([
      `kim@${stack.prefix}example.com`,
      `lee@${stack.prefix}example.com`,
      `park@${stack.prefix}example.com`,
    ]);
  });

  it('writes each email as a .eml file holding exactly the bytes SES was given', async () => {
    const fromSes = new Map((await stack.sesRawMessages()).map((message) => [message.id, message.raw]));
    for (const email of stack.email.sent.slice(sentBefore)) {
      const file = readFileSync(email.path);
      expect(file.equals(Buffer.from(email.raw))).toBe(true);
      expect(fromSes.get(email.providerMessageId)).toBe(file.toString('utf8'));
    }
  });

  it('speaks the audience language, with both parts, valid HTML and the RFC 8058 headers', async () => {
    for (const email of stack.email.sent.slice(sentBefore)) {
      const parsed = await parseEmail(email.raw);
      const locale = email.audienceId === 'chips' ? 'ko-KR' : 'en-US';
      expect(parsed.header('Content-Language')).toBe(locale);
      expect(parsed.html).toContain(`<html lang="${locale}">`);
      expect(parsed.charsets).toEqual({ text: 'utf-8', html: 'utf-8' });
      expect(parsed.header('List-Unsubscribe-Post')).toBe(ONE_CLICK_BODY);
      expect(await htmlProblems(parsed.html)).toEqual([]);
      if (email.audienceId === 'chips') expect(parsed.text).toContain('구독 해지');
    }
  });

  it('has a one-click URL that accepts the POST and unsubscribes at once', async () => {
    const email = stack.email.sent.slice(sentBefore).find((sent) => sent.audienceId === 'chips');
    if (email === undefined) throw new Error('no email to the Korean audience');
    const parsed = await parseEmail(email.raw);
    const [oneClick] = listUnsubscribeTargets(parsed.header('List-Unsubscribe'));
    const response = await stack.request(oneClick ?? '', {
      method: 'POST',
      body: ONE_CLICK_BODY,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(response.status).toBe(200);
    expect(response.body).toContain('구독을 해지했습니다');
    const membership = await stack.email.delivery.store.membership(email.subscriberId, 'chips');
    expect(membership?.state).toBe('unsubscribed');
    // The next alert of that audience goes to nobody.
    const before = stack.email.sent.length;
    await stack.publishAlert(korean);
    await stack.email.deliver();
    expect(stack.email.sent.slice(before)).toEqual([]);
  });

  it('records SES events in the subscriber history, the status only moving forward', async () => {
    const email = stack.email.sent.slice(sentBefore).find((sent) => sent.audienceId === 'desk');
    if (email === undefined) throw new Error('no email to the desk');
    await stack.sesEvents(
      sesEvent('Delivery', email, { at: stack.clock.now + 2000 }),
      sesEvent('Send', email, { at: stack.clock.now + 1000 }),
    );
    const [record] = await stack.email.delivery.store.history(email.subscriberId, { limit: 1 });
    expect(record?.status).toBe('delivered');
    expect(record?.events.map((event) => event.type)).toEqual(['Delivery', 'Send']);
    expect(JSON.stringify(record)).not.toContain('@');
  });
});

describe('a pending address', () => {
  it('got the confirmation email and nothing else; confirming it starts the alerts', async () => {
    const pending = await stack.email.delivery.store.findByAddress(`new@${stack.prefix}example.com`);
    if (pending === undefined) throw new Error('no pending subscriber');
    const mails = stack.email.sent.filter((sent) => sent.subscriberId === pending.subscriberId);
    expect(mails).toHaveLength(1);
    const confirmation = await parseEmail(mails[0]?.raw ?? '');
    const confirmUrl = /https:\/\/127\.0\.0\.1:\d+\/c\/\S+/.exec(confirmation.text)?.[0] ?? '';
    // A GET (a scanner) confirms nothing.
    const snapshot = await stack.tableSnapshot();
    expect((await stack.request(confirmUrl)).status).toBe(200);
    expect(await stack.tableSnapshot()).toBe(snapshot);
    const posted = await stack.request(confirmUrl, {
      method: 'POST',
      body: 'action=confirm',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(posted.status).toBe(303);
    expect((await stack.email.delivery.store.membership(pending.subscriberId, 'desk'))?.state).toBe('confirmed');
    const before = stack.email.sent.length;
    await stack.publishAlert(desk);
    await stack.email.deliver();
    expect(stack.email.sent.slice(before).map((sent) => sent.subscriberId)).toContain(pending.subscriberId);
  });
});
