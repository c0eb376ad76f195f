import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ProviderResponseError } from '#core/errors';
import {
  articleKey,
  canonicalUrl,
  defaultResponseMapping,
  findBodyError,
  mapPage,
  readPath,
  resolveMapping,
} from '#provider/response-mapping';

const at = Date.UTC(2026, 10, 22, 0, 15);
const urlKey = (url: string) => `url:${createHash('sha256').update(url).digest('base64url')}`;

function responseError(run: () => unknown): ProviderResponseError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(ProviderResponseError);
    return error as ProviderResponseError;
  }
  throw new Error('expected a ProviderResponseError');
}

describe('mapPage on known response shapes', () => {
  it("reads the simulator's default shape", () => {
    const body = {
      status: 'OK',
      totalCount: 1234,
      page: 1,
      size: 100,
      articles: [
        {
          articleId: '20261122-000123',
          title: 'Rates rise',
          summary: 'The central bank raised rates.',
          url: 'https://news.example.com/economy/1',
          publishedAt: '2026-11-22T09:15:00+09:00',
          categories: [
            { code: '002001000', name: 'Economy > Finance' },
            { code: '002004000', name: 'Economy > Markets' },
          ],
          media: { code: 'M001', name: 'Daily Example' },
          status: 'PUBLISHED',
        },
      ],
    };
    expect(mapPage(body, defaultResponseMapping, 'Asia/Seoul')).toEqual({
      articles: [
        {
          key: 'id:20261122-000123',
          id: '20261122-000123',
          title: 'Rates rise',
          summary: 'The central bank raised rates.',
          url: 'https://news.example.com/economy/1',
          publishedAt: at,
          categories: ['002001000', '002004000'],
          categoryNames: ['Economy > Finance', 'Economy > Markets'],
          media: 'M001',
          mediaName: 'Daily Example',
          status: 'PUBLISHED',
        },
      ],
      skipped: [],
      totalCount: 1234,
      nextCursor: undefined,
    });
  });

  it('reads the simulator cursor envelope', () => {
    const item = { articleId: 'a', title: 't', url: 'https://x.test/a', publishedAt: '2026-11-22T00:15:00Z' };
    expect(
      mapPage({ status: 'OK', articles: [item], nextCursor: 'opaque' }, defaultResponseMapping, 'UTC').nextCursor,
    ).toBe('opaque');
    expect(
      mapPage({ status: 'OK', articles: [item], nextCursor: null }, defaultResponseMapping, 'UTC').nextCursor,
    ).toBeUndefined();
  });

  it('reads a NewsAPI-like shape: no id (url key), source name as media', () => {
    const body = {
      status: 'ok',
      totalResults: 1,
      articles: [
        {
          source: { id: null, name: 'BBC News' },
          author: null,
          title: 'Chips & markets',
          description: null,
          url: 'https://www.bbc.co.uk/news/business-1?utm_source=newsapi#top',
          urlToImage: null,
          publishedAt: '2026-11-22T00:15:00Z',
          content: 'Markets moved [+1234 chars]',
        },
      ],
    };
    const page = mapPage(body, defaultResponseMapping, 'Asia/Seoul');
    expect(page.totalCount).toBe(1);
    expect(page.articles[0]).toMatchObject({
      key: urlKey('https://www.bbc.co.uk/news/business-1'),
      id: undefined,
      title: 'Chips & markets',
      summary: 'Markets moved [+1234 chars]',
      publishedAt: at,
      categories: [],
      media: 'BBC News',
      mediaName: 'BBC News',
    });
  });

  it('reads a Newscatcher-like shape: _id, link, zone-less published_date in the provider zone', () => {
    const body = {
      status: 'ok',
      total_hits: 2,
      page: 1,
      total_pages: 1,
      page_size: 100,
      articles: [
        {
          _id: 'f3a1',
          title: 'Exports grow',
          link: 'https://news.example.kr/1',
          published_date: '2026-11-22 09:15:00',
          domain_url: 'news.example.kr',
          excerpt: 'ignored',
        },
        {
          _id: 'f3a2',
          title: 'Imports fall',
          link: 'https://news.example.kr/2',
          published_date: '2026-11-22 09:15:00',
        },
      ],
      user_input: { q: '*' },
    };
    const page = mapPage(body, defaultResponseMapping, 'Asia/Seoul');
    expect(page.totalCount).toBe(2);
    expect(page.articles.map((a) => [a.key, a.url, a.publishedAt])).toEqual([
      ['id:f3a1', 'https://news.example.kr/1', at],
      ['id:f3a2', 'https://news.example.kr/2', at],
    ]);
  });

  it('reads an Event-Registry-like nesting with an overridden mapping', () => {
    const mapping = resolveMapping({
      media: ['source.uri'],
      mediaName: ['source.title'],
      categories: ['categories[].uri'],
      categoryNames: ['categories[].label'],
    });
    const body = {
      articles: {
        results: [
          {
            uri: '8123456789',
            url: 'https://www.example.com/story',
            title: 'Story',
            body: 'Full text of the story.',
            date: '2026-11-22',
            time: '00:15:00',
            dateTime: '2026-11-22T00:15:00Z',
            source: { uri: 'example.com', title: 'Example Times' },
            categories: [
              { uri: 'dmoz/Business', label: 'Business', wgt: 80 },
              { uri: 'news/Economy', label: 'Economy', wgt: 60 },
            ],
          },
        ],
        totalResults: 31,
        page: 1,
        count: 1,
        pages: 31,
      },
    };
    const page = mapPage(body, mapping, 'UTC');
    expect(page.totalCount).toBe(31);
    expect(page.articles[0]).toMatchObject({
      key: 'id:8123456789',
      summary: 'Full text of the story.',
      publishedAt: at,
      media: 'example.com',
      mediaName: 'Example Times',
      categories: ['dmoz/Business', 'news/Economy'],
      categoryNames: ['Business', 'Economy'],
    });
  });

  it('reads Naver-like items: RFC 822 pubDate, HTML highlights and entities removed', () => {
    const body = {
      lastBuildDate: 'Sun, 22 Nov 2026 09:20:00 +0900',
      total: 1,
      start: 1,
      display: 10,
      items: [
        {
          title: '<b>Samsung</b> &quot;chips&quot; &amp; more',
          originallink: 'https://media.example.kr/1',
          link: 'https://n.news.example.com/1',
          description: 'Shares<br/>rose &#8364;3 &#x2B;1%',
          pubDate: 'Sun, 22 Nov 2026 09:15:00 +0900',
        },
      ],
    };
    const [article] = mapPage(body, defaultResponseMapping, 'UTC').articles;
    expect(article).toMatchObject({
      title: 'Samsung "chips" & more',
      summary: 'Shares rose €3 +1%',
      url: 'https://n.news.example.com/1',
      publishedAt: at,
    });
  });

  it('reads GDELT compact seendate and DeepSearch data.docs', () => {
    const gdelt = {
      articles: [{ url: 'https://g.test/1', title: 'G', seendate: '20261122T001500Z', domain: 'g.test' }],
    };
    expect(mapPage(gdelt, defaultResponseMapping, 'Asia/Seoul').articles[0]?.publishedAt).toBe(at);
    const deepSearch = {
      found: true,
      data: {
        total_matches: 7,
        docs: [{ id: 'd1', title: 'D', url: 'https://d.test/1', publishedAt: at }],
      },
    };
    const page = mapPage(deepSearch, defaultResponseMapping, 'UTC');
    expect(page.totalCount).toBe(7);
    expect(page.articles[0]?.key).toBe('id:d1');
  });

  it('reads a bare array when the articles path is "$"', () => {
    const mapping = resolveMapping({ articles: ['$'] });
    const body = [{ id: 1, title: 'x', url: 'https://x.test', publishedAt: '2026-11-22T00:15:00Z' }];
    expect(mapPage(body, mapping, 'UTC').articles.map((a) => a.key)).toEqual(['id:1']);
  });

  it('passes unknown status and category values through unchanged', () => {
    const body = {
      articles: [
        {
          id: 'x',
          title: 't',
          url: 'https://x.test',
          publishedAt: at,
          status: 'EMBARGO_LIFTED_V2',
          categories: ['999999999', 'brand-new'],
        },
      ],
    };
    expect(mapPage(body, defaultResponseMapping, 'UTC').articles[0]).toMatchObject({
      status: 'EMBARGO_LIFTED_V2',
      categories: ['999999999', 'brand-new'],
    });
  });

  it('uses category names as categories when no codes are given', () => {
    const body = {
      articles: [{ id: 'x', title: 't', url: 'https://x.test', publishedAt: at, category: { name: 'Politics' } }],
    };
    expect(mapPage(body, defaultResponseMapping, 'UTC').articles[0]).toMatchObject({
      categories: ['Politics'],
      categoryNames: ['Politics'],
    });
  });

  it('caps very long summaries', () => {
    const body = {
      articles: [{ id: 'x', title: 't', url: 'https://x.test', publishedAt: at, body: 'word '.repeat(2000) }],
    };
    const summary = mapPage(body, defaultResponseMapping, 'UTC').articles[0]?.summary ?? '';
    expect(summary.length).toBeLessThanOrEqual(2000);
    expect(summary.endsWith('…')).toBe(true);
  });
});

describe('mapPage skipping and refusing', () => {
  const good = (id: string) => ({ id, title: `t${id}`, url: `https://x.test/${id}`, publishedAt: at });

  it('skips unreadable items with a reason naming the field and the paths tried', () => {
    const body = {
      articles: [
        good('1'),
        { id: '2', url: 'https://x.test/2', publishedAt: at },
        { id: '3', title: 't', url: 'mailto:someone@example.com', publishedAt: at },
        { id: '4', title: 't', url: 'https://x.test/4', publishedAt: 'last Tuesday' },
        { id: '5', title: 't' },
        'not an article',
        good('7'),
      ],
    };
    const page = mapPage(body, defaultResponseMapping, 'UTC');
    expect(page.articles.map((a) => a.id)).toEqual(['1', '7']);
    expect(page.skipped.map((s) => s.index)).toEqual([1, 2, 3, 4, 5]);
    expect(page.skipped[0]?.reason).toBe('title missing (tried title, headline)');
    expect(page.skipped[1]?.reason).toBe('url "mailto:someone@example.com" at url is not an absolute http(s) URL');
    expect(page.skipped[2]?.reason).toContain(
      'publishedAt "last Tuesday" at publishedAt is not a recognised timestamp',
    );
    expect(page.skipped[2]?.reason).toContain('tried publishedAt, published_at, pubDate');
    expect(page.skipped[3]?.reason).toContain('url missing (tried url, link, originallink, originalUrl)');
    expect(page.skipped[3]?.reason).toContain('publishedAt missing');
    expect(page.skipped[4]?.reason).toBe('the item is not an object (got string)');
  });

  it('falls through to the next timestamp candidate when the first does not parse', () => {
    const body = {
      articles: [{ id: '1', title: 't', url: 'https://x.test', publishedAt: 'soon', pubDate: at / 1000 }],
    };
    expect(mapPage(body, defaultResponseMapping, 'UTC').articles[0]?.publishedAt).toBe(at);
  });

  it('refuses a page on which every item fails: the mapping is wrong', () => {
    const body = { articles: [{ headline_text: 'a', href: 'https://x.test' }, { headline_text: 'b' }] };
    const error = responseError(() => mapPage(body, defaultResponseMapping, 'UTC'));
    expect(error.message).toContain('none of the 2 items on the page could be read');
    expect(error.message).toContain('item 0: title missing (tried title, headline)');
    expect(error.message).toContain('First item: {"headline_text":"a","href":"https://x.test"}');
    expect(error.retryable).toBe(false);
  });

  it('accepts an empty page', () => {
    expect(mapPage({ articles: [], totalCount: 0 }, defaultResponseMapping, 'UTC')).toMatchObject({
      articles: [],
      skipped: [],
      totalCount: 0,
    });
  });

  it('accepts a missing list when the total says nothing matched', () => {
    expect(
      mapPage({ status: 'No matches for your search.', total_hits: 0 }, defaultResponseMapping, 'UTC').articles,
    ).toEqual([]);
  });

  it('refuses an envelope without an article list, naming the paths tried with a trimmed, redacted sample', () => {
    const body = { payload: { entries: [good('1')] }, echo: { apiKey: 'SECRET-KEY-123' }, padding: 'x'.repeat(1000) };
    const error = responseError(() => mapPage(body, defaultResponseMapping, 'UTC', { secrets: ['SECRET-KEY-123'] }));
    expect(error.message).toContain(
      'no article list at any of articles, data, results, items, docs, data.docs, articles.results',
    );
    const sample = error.message.slice(error.message.indexOf('Response sample: ') + 'Response sample: '.length);
    expect(sample.length).toBeLessThanOrEqual(300);
    expect(sample.startsWith('{"payload":{"entries":[{"id":"1"')).toBe(true);
    expect(error.message).not.toContain('SECRET-KEY-123');
    expect(error.message).toContain('[REDACTED]');
  });

  it.each([
    ['a string', 'Service Unavailable'],
    ['a number', 42],
    ['null', null],
  ])('refuses a body that is %s', (_label, body) => {
    expect(responseError(() => mapPage(body, defaultResponseMapping, 'UTC')).message).toContain(
      'the response body is not a JSON object',
    );
  });
});

describe('body-level errors', () => {
  it.each([
    [
      'the simulator',
      { status: 'ERROR', error: { code: 'RATE_LIMITED', message: 'slow down' } },
      'RATE_LIMITED: slow down',
    ],
    ['NewsAPI', { status: 'error', code: 'apiKeyInvalid', message: 'Your API key is invalid' }, 'apiKeyInvalid'],
    ['NewsData', { status: 'error', message: 'Rate Limit Exceeded' }, 'Rate Limit Exceeded'],
    [
      'apitube',
      { status: 'not_ok', request_id: 'r', errors: [{ status: 400, code: 'E1', message: 'bad query' }] },
      'E1: bad query',
    ],
    ['a success flag', { success: false, message: 'quota' }, 'success false: quota'],
    ['a result field', { result: 'FAILED', articles: [] }, 'result "FAILED"'],
    ['an error message field', { errorMessage: 'backend down', articles: [] }, 'errorMessage: backend down'],
  ])('detects %s style', (_label, body, expected) => {
    expect(findBodyError(body, defaultResponseMapping)).toContain(expected);
    expect(responseError(() => mapPage(body, defaultResponseMapping, 'UTC')).message).toContain(
      'the provider reported an error in the response body',
    );
  });

  it.each([
    { status: 'OK', error: null, articles: [] },
    { status: 'ok', errors: [], articles: [] },
    { status: 'success', error: false, articles: [] },
    { result: 0, articles: [] },
    { success: true, errorMessage: '', articles: [] },
  ])('treats %j as no error', (body) => {
    expect(findBodyError(body, defaultResponseMapping)).toBeUndefined();
  });

  it('redacts the key from the reported error', () => {
    const body = { status: 'ERROR', error: { code: 'BAD_KEY', message: 'key SECRET-KEY-123 is not valid' } };
    const found = findBodyError(body, defaultResponseMapping, ['SECRET-KEY-123']);
    expect(found).toContain('key [REDACTED] is not valid');
    expect(found).not.toContain('SECRET-KEY-123');
  });
});

describe('paths and keys', () => {
  it('projects over lists and flattens nested projections', () => {
    const value = { groups: [{ tags: [{ v: 1 }, { v: 2 }] }, { tags: [{ v: 3 }] }, { other: true }] };
    expect(readPath(value, 'groups[].tags[].v')).toEqual([1, 2, 3]);
    expect(readPath(value, 'groups[].tags')).toEqual([[{ v: 1 }, { v: 2 }], [{ v: 3 }]]);
    expect(readPath(value, 'groups.tags')).toBeUndefined();
    expect(readPath(value, '$')).toBe(value);
  });

  it('never reads inherited properties', () => {
    expect(readPath({}, 'constructor')).toBeUndefined();
    expect(readPath({ a: {} }, 'a.toString')).toBeUndefined();
    expect(readPath(JSON.parse('{"__proto__":{"x":1}}'), '__proto__.x')).toBe(1);
  });

  it('canonicalizes urls for the fallback key', () => {
    expect(canonicalUrl('HTTPS://News.Example.COM/a?id=1&utm_source=x&UTM_Medium=y#frag')).toBe(
      'https://news.example.com/a?id=1',
    );
    expect(canonicalUrl('https://news.example.com/a?utm_campaign=z')).toBe('https://news.example.com/a');
    expect(articleKey(undefined, 'https://news.example.com/a?utm_campaign=z#x')).toBe(
      articleKey(undefined, 'https://NEWS.example.com/a'),
    );
    expect(articleKey('42', 'https://news.example.com/a')).toBe('id:42');
  });

  it('refuses an invalid path in an override', () => {
    expect(() => resolveMapping({ title: ['a[]b'] })).toThrow('not a mapping path');
  });
});
