import { describe, expect, it } from 'vitest';
import { ConfigError } from '#core/errors';
import { parseProviderConfig } from '#provider/config';
import { defaultResponseMapping } from '#provider/response-mapping';

const base = { baseUrl: 'https://api.example.com/v1' };

function configError(input: unknown): ConfigError {
  try {
    parseProviderConfig(input);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return error as ConfigError;
  }
  throw new Error('expected a ConfigError');
}

describe('parseProviderConfig', () => {
  it('applies every default', () => {
    const config = parseProviderConfig(base);
    expect(config).toEqual({
      baseUrl: 'https://api.example.com/v1',
      pageSize: 100,
      timeZone: 'UTC',
      timestampTimeZone: undefined,
      pagination: { method: 'PAGE' },
      maxPages: 1000,
      connectTimeoutMs: 5000,
      readTimeoutMs: 15_000,
      responseTimeoutMs: 30_000,
      maxResponseBytes: 32 * 1024 * 1024,
      maxAttempts: 5,
      baseDelayMs: 250,
      maxDelayMs: 20_000,
      maxRetryAfterMs: 60_000,
      pageConcurrency: 4,
      mapping: defaultResponseMapping,
    });
  });

  it('drops trailing slashes of the base URL', () => {
    expect(parseProviderConfig({ baseUrl: 'https://api.example.com/v1//' }).baseUrl).toBe('https://api.example.com/v1');
  });

  it('refuses http:// with a message that says why and shows the value', () => {
    const error = configError({ baseUrl: 'http://api.example.com' });
    expect(error.message).toContain(
      'NEWS_API_BASE_URL (baseUrl) must use https:// (the provider only allows HTTPS); got "http://api.example.com"',
    );
  });

  it('refuses a base URL with a query without repeating the query, where a key would be put by mistake', () => {
    const error = configError({ baseUrl: 'https://api.example.com/v1?apiKey=SECRETKEY123456' });
    expect(error.message).toContain('must not have a query or fragment');
    expect(error.message).toContain('"https://api.example.com/v1"');
    expect(JSON.stringify({ message: error.message, cause: String(error.cause) })).not.toContain('SECRETKEY');
    // Nor when another check refuses the URL first.
    for (const baseUrl of ['http://api.example.com/v1?apiKey=SECRETKEY123', 'api.example.com/v1?apiKey=SECRETKEY123']) {
      expect(configError({ baseUrl }).message, baseUrl).not.toContain('SECRETKEY');
    }
  });

  it.each([
    [{}, 'NEWS_API_BASE_URL (baseUrl) is required'],
    [{ baseUrl: 'api.example.com' }, 'NEWS_API_BASE_URL (baseUrl) is not a URL'],
    [{ baseUrl: 'https://user:pw@api.example.com' }, 'must not carry credentials'],
    [{ baseUrl: 'https://api.example.com/?key=1' }, 'must not have a query or fragment'],
    [{ ...base, pageSize: 0 }, 'NEWS_API_PAGE_SIZE (pageSize) must be at least 1'],
    [{ ...base, pageSize: 1001 }, 'NEWS_API_PAGE_SIZE (pageSize) must be at most 1000'],
    [{ ...base, pageSize: 2.5 }, 'NEWS_API_PAGE_SIZE (pageSize) must be a whole number'],
    [{ ...base, maxAttempts: '5' }, 'NEWS_API_MAX_ATTEMPTS (maxAttempts) must be a whole number from 1 to 20; got "5"'],
    [{ ...base, timeZone: 'Seoul' }, 'NEWS_API_TIME_ZONE (timeZone) must be an IANA time zone such as "Asia/Seoul"'],
    [{ ...base, pagination: { method: 'SCROLL' } }, 'NEWS_API_PAGINATION.method (pagination.method) must be'],
    [
      { ...base, pagination: { method: 'CURSOR', cursorField: 'next cursor' } },
      'NEWS_API_CURSOR_FIELD (pagination.cursorField) must be a plain JSON field name',
    ],
    [{ ...base, baseDelayMs: 1000, maxDelayMs: 10 }, 'NEWS_API_MAX_DELAY_MS (maxDelayMs) must be at least'],
    [{ ...base, caPem: 'not a pem' }, 'NEWS_API_CA_PEM (caPem) must be a PEM certificate'],
    [{ ...base, pageSise: 10 }, 'unknown setting(s) pageSise'],
    [{ ...base, mapping: { tittle: ['headline'] } }, 'NEWS_API_RESPONSE_MAPPING (mapping): unknown setting(s) tittle'],
    [
      { ...base, mapping: { articles: ['data..items'] } },
      'NEWS_API_RESPONSE_MAPPING.articles[0] (mapping.articles[0]) "data..items" is not a mapping path',
    ],
    ['https://api.example.com', 'the provider configuration must be an object'],
  ])('names the bad setting: %j', (input, expected) => {
    expect(configError(input).message).toContain(expected);
  });

  it('reports every problem at once', () => {
    const message = configError({ baseUrl: 'http://x', pageSize: 0, timeZone: 'nowhere' }).message;
    expect(message).toContain('NEWS_API_BASE_URL');
    expect(message).toContain('NEWS_API_PAGE_SIZE');
    expect(message).toContain('NEWS_API_TIME_ZONE');
  });

  it('fills cursor defaults', () => {
    expect(parseProviderConfig({ ...base, pagination: { method: 'CURSOR' } }).pagination).toEqual({
      method: 'CURSOR',
      methodValue: 'CURSOR',
      cursorField: 'cursor',
    });
  });

  it('merges a partial mapping over the defaults; a single path is a one-item list', () => {
    const { mapping } = parseProviderConfig({ ...base, mapping: { title: 'headline.main', media: ['source.uri'] } });
    expect(mapping.title).toEqual(['headline.main']);
    expect(mapping.media).toEqual(['source.uri']);
    expect(mapping.url).toEqual(defaultResponseMapping.url);
  });
});
