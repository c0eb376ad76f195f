/**
 * A provider that reports an error in a 200 body the mapping does not know (no error codes
 * configured): the advice points at the mapping's error fields, where the fix is, not at the
 * article paths; a body that holds its list somewhere else still gets the article-path advice.
 */
import fc from 'fast-check';
import { MockAgent } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { ProviderResponseError } from '../../../functions/core/errors.ts';
import { parseProviderConfig } from '../../../functions/provider/config.ts';
import { NewsLookupClient } from '../../../functions/provider/news-client.ts';
import { defaultResponseMapping, mapPage } from '../../../functions/provider/response-mapping.ts';
import { clearRegisteredSecrets } from '../../../functions/shared/secret-redaction.ts';

afterEach(() => clearRegisteredSecrets());

const refusal = (body: unknown): ProviderResponseError => {
  try {
    mapPage(body, defaultResponseMapping, 'UTC');
  } catch (error) {
    if (error instanceof ProviderResponseError) return error;
    throw error;
  }
  throw new Error('the page was accepted');
};

describe('no article list in the body', () => {
  it.each([
    ['a code and a message', { code: 'E101', message: 'daily quota exceeded' }, 'code'],
    ['a nested result', { result: { code: 'E4011', msg: 'invalid API key' } }, 'result.code'],
    ['a numeric result and a reason', { result: -1, reason: 'contract expired' }, 'reason'],
    [
      'a fault',
      { fault: { faultstring: 'Invalid ApiKey', detail: 'keymanagement.service.InvalidAPIKey' } },
      'fault.detail',
    ],
  ])('an error report (%s) is pointed at errorFields / successStatusFields, with the field', (_label, body, path) => {
    const error = refusal(body);
    expect(error.message).toContain('reads like an error report');
    expect(error.message).toContain(`"errorFields": [${JSON.stringify(path)}]`);
    expect(error.message).toContain('"successStatusFields"');
    expect(error.message).not.toMatch(/^the response has no article list at any of/);
  });

  it.each([
    ['a list under another name', { payload: { entries: [{ id: '1', title: 'x' }] } }],
    ['an OK status and an echo of the request', { status: 'OK', request: { page: 1 } }],
    ['a success code', { code: '0000', message: 'success', news: [{ id: '1' }] }],
  ])('a body that is no error report (%s) still gets the article-path advice', (_label, body) => {
    const error = refusal(body);
    expect(error.message).toMatch(/^the response has no article list at any of articles, data, /);
    expect(error.message).toContain(`set the mapping's "articles" paths`);
  });

  it('through the client: the run fails with the error-field advice, the key redacted', async () => {
    const agent = new MockAgent();
    agent.disableNetConnect();
    const key = 'advice-test-key-7f3a';
    agent
      .get('https://api.test')
      .intercept({ path: '/v1/news', method: 'POST' })
      .reply(200, { resultCode: 'E401', resultMessage: `invalid key ${key}` })
      .persist();
    const client = new NewsLookupClient({
      config: parseProviderConfig({ baseUrl: 'https://api.test/v1', maxAttempts: 1 }),
      secrets: { apiKey: async () => key },
      dispatcher: agent,
      sleep: async () => {},
    });
    let failure: unknown;
    try {
      for await (const _page of client.pages({ from: '2026-11-22', to: '2026-11-22' })) {
        // reading until it fails
      }
    } catch (error) {
      failure = error;
    }
    await agent.close();
    expect(failure).toBeInstanceOf(ProviderResponseError);
    expect((failure as Error).message).toContain('"errorFields": ["resultCode"]');
    expect((failure as Error).message).not.toContain(key);
  });

  it('any body without a list gets one of the two pieces of advice, never a message with "undefined" (property)', () => {
    const scalar = fc.oneof(fc.string({ maxLength: 12 }), fc.integer(), fc.boolean(), fc.constant(null));
    const key = fc.constantFrom(
      'code',
      'message',
      'msg',
      'error',
      'status',
      'reason',
      'detail',
      'note',
      'page',
      'meta',
    );
    const body = fc.dictionary(key, fc.oneof(scalar, fc.dictionary(key, scalar, { maxKeys: 3 })), { maxKeys: 5 });
    fc.assert(
      fc.property(body, (value) => {
        // A body the default mapping itself reads as an error, or as an empty result, is not this case.
        let message: string;
        try {
          mapPage(value, defaultResponseMapping, 'UTC');
          return;
        } catch (error) {
          message = (error as Error).message;
        }
        if (!message.startsWith('the response has no article list')) return;
        expect(message).toMatch(/reads like an error report|set the mapping's "articles" paths/);
        expect(message).not.toMatch(/\bundefined\b|\[object Object\]/);
      }),
    );
  });
});
