/**
 * The preference page's language for an address on audiences of different languages (SES email
 * on moto server): without a language ops chose, each email's page speaks the language of the
 * audience that sent it (the email's own); `email add --locale` chooses one for the address on
 * every audience, also for an address that exists already.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AudienceLabel, addSubscriber } from '#core/email/subscribe';
import { type EmailTestStack, startEmailTestStack } from '../support/email-stack.ts';

let stack: EmailTestStack;
const desk: AudienceLabel = { audienceId: 'desk', label: 'Markets desk', locale: 'en-GB', language: 'en' };
const chips: AudienceLabel = { audienceId: 'chips', label: '반도체팀', locale: 'ko-KR', language: 'ko' };

beforeAll(async () => {
  stack = await startEmailTestStack();
  await stack.addAudience({ audienceId: 'desk', name: 'Markets desk', timeZone: 'Europe/London', locale: 'en-GB' });
  await stack.addAudience({ audienceId: 'chips', name: '반도체팀', timeZone: 'Asia/Seoul', locale: 'ko-KR' });
});
afterAll(async () => {
  await stack?.stop();
});

/** The `lang` of the page a manage link of `audienceId` opens. */
async function pageLanguage(subscriberId: string, audienceId: string): Promise<string | undefined> {
  const url = await stack.email.subscribe.links.manage(subscriberId, audienceId);
  const response = await stack.request(url, { headers: { 'accept-language': 'fr-FR' } });
  expect(response.status).toBe(200);
  return /<html lang="([^"]+)"/.exec(response.body)?.[1];
}

describe('the preference page of an address on an English and a Korean audience', () => {
  it('speaks the language of the audience whose email links to it', async () => {
    const address = `kim@${stack.prefix}example.com`;
    const { subscriberId } = await addSubscriber({ address, audience: desk }, stack.email.subscribe);
    await addSubscriber({ address, audience: chips }, stack.email.subscribe);
    expect(await pageLanguage(subscriberId, 'desk')).toBe('en');
    expect(await pageLanguage(subscriberId, 'chips')).toBe('ko');
  });

  it('speaks the language ops chose for the address on every audience, also when it existed already', async () => {
    const address = `tanaka@${stack.prefix}example.com`;
    const { subscriberId } = await addSubscriber({ address, audience: chips }, stack.email.subscribe);
    expect(await pageLanguage(subscriberId, 'chips')).toBe('ko');
    await addSubscriber({ address, audience: desk, locale: 'ja-JP' }, stack.email.subscribe);
    expect(await pageLanguage(subscriberId, 'desk')).toBe('ja');
    expect(await pageLanguage(subscriberId, 'chips')).toBe('ja');
    expect((await stack.email.delivery.store.profile(subscriberId))?.locale).toBe('ja-JP');
  });
});
