/**
 * Client logic that needs no network: paging decisions, backoff arithmetic and messages, with
 * undici's MockAgent as the dispatcher. The HTTPS behaviour is in
 * test/integration/provider-client.test.ts.
 */
import fc from 'fast-check';
import { Dispatcher, errors, MockAgent } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigError, PageCapError, ProviderError, ProviderResponseError, ProviderTimeZoneError } from '#core/errors';
import { type SecretSource, silentLog } from '#core/ports';
import { type ProviderConfigInput, parseProviderConfig } from '#provider/config';
import { NewsLookupClient } from '#provider/news-client';
import { sampleOf } from '#provider/response-mapping';
import { parseRetryAfter } from '#shared/retry';
import { clearRegisteredSecrets } from '#shared/secret-redaction';
import { collect, failure } from '#test/pages';

type Body = Record<string, unknown>;
interface Scripted {
  readonly status: number;
  readonly body?: unknown;
  readonly headers?: Record<string, string>;
}

const agents: MockAgent[] = [];
// The client registers every key it sends with the shared redaction (a process-wide list): a key
// left there from one test, such as the property's random "value", would redact another's message.
afterEach(() => clearRegisteredSecrets());
afterEach(async () => {
  await Promise.all(agents.splice(0).map((agent) => agent.close()));
});

const item = (id: string | number) => ({
  articleId: String(id),
  title: `Article ${id}`,
  url: `https://news.example.com/${id}`,
  publishedAt: '2026-11-22T09:15:00+09:00',
});

function provider(script: (body: Body, n: number) => Scripted) {
  const agent = new MockAgent();
  agent.disableNetConnect();
  agents.push(agent);
  const requests: Body[] = [];
  agent
    .get('https://api.test')
    .intercept({ path: '/v1/news', method: 'POST' })
    .reply((options) => {
      const body = JSON.parse(String(options.body)) as Body;
      requests.push(body);
      const reply = script(body, requests.length);
      const data = typeof reply.body === 'string' ? reply.body : JSON.stringify(reply.body ?? {});
      return { statusCode: reply.status, data, responseOptions: { headers: reply.headers ?? {} } };
    })
    .persist();
  return { agent, requests };
}

const secrets = (key = 'unit-key'): SecretSource => ({ apiKey: async () => key });

function client(
  dispatcher: MockAgent,
  overrides: Partial<ProviderConfigInput> = {},
  extra: { now?: () => number; key?: string } = {},
) {
  const sleeps: number[] = [];
  const { key, ...rest } = extra;
  const instance = new NewsLookupClient({
    config: parseProviderConfig({ baseUrl: 'https://api.test/v1', pageSize: 10, maxAttempts: 3, ...overrides }),
    secrets: secrets(key),
    dispatcher,
    sleep: async (ms) => {
      sleeps.push(ms);
    },
    random: () => 0.5,
    ...rest,
  });
  return { instance, sleeps };
}

const range = { from: '2026-11-22', to: '2026-11-22' };

describe('parseRetryAfter', () => {
  const now = Date.UTC(2026, 10, 22, 0, 0, 0);
  it.each([
    ['delta seconds', '7', 7000],
    ['zero', '0', 0],
    ['an HTTP date 30 s ahead', 'Sun, 22 Nov 2026 00:00:30 GMT', 30_000],
    ['an HTTP date in the past', 'Sat, 21 Nov 2026 23:00:00 GMT', 0],
    ['the first of repeated headers', ['3', '9'], 3000],
    ['garbage', 'soon', undefined],
    ['a negative number', '-5', undefined],
    ['nothing', undefined, undefined],
  ])('reads %s', (_label, header, expected) => {
    expect(parseRetryAfter(header, now)).toBe(expected);
  });
});

describe('NewsLookupClient paging decisions', () => {
  it('treats a provider that caps the page size as having that page size', async () => {
    const all = Array.from({ length: 25 }, (_, i) => item(i));
    // Asked for 10 per page, the provider silently serves 4.
    const { agent, requests } = provider((body) => {
      const page = Number(body.page);
      return { status: 200, body: { totalCount: 25, articles: all.slice((page - 1) * 4, page * 4) } };
    });
    const pages = await collect(client(agent).instance.pages(range));
    expect(pages.flatMap((p) => p.articles.map((a) => a.id))).toEqual(all.map((a) => a.articleId));
    expect(requests.map((r) => r.page)).toEqual([1, 2, 3, 4, 5, 6, 7]);
  });

  it('without a total, does not trust a short page: a provider that repeats its last page ends the read', async () => {
    const { agent, requests } = provider(() => ({ status: 200, body: { articles: [item(1), item(2)] } }));
    const pages = await collect(client(agent).instance.pages(range));
    expect(pages.flatMap((p) => p.articles)).toHaveLength(2);
    expect(requests).toHaveLength(2);
  });

  it.each([false, true])(
    'with a total, a short page the provider left an item out of is not the end (sequential: %s)',
    async (sequential) => {
      const all = Array.from({ length: 25 }, (_, i) => item(i));
      // Item 10 is counted in the total but left out of page 2 (filtered after paging).
      const { agent, requests } = provider((body) => {
        const page = Number(body.page);
        const articles = all.slice((page - 1) * 10, page * 10).filter((a) => a.articleId !== '10');
        return { status: 200, body: { totalCount: 25, articles } };
      });
      const pages = await collect(client(agent).instance.pages(range, { sequential }));
      expect(pages.flatMap((p) => p.articles)).toHaveLength(24);
      expect(requests.map((r) => r.page)).toEqual([1, 2, 3]);
    },
  );

  it.each([false, true])(
    'with a total, a provider that answers pages past the end with its last page ends the read (sequential: %s)',
    async (sequential) => {
      const all = Array.from({ length: 20 }, (_, i) => item(i));
      const { agent, requests } = provider((body) => {
        const page = Math.min(Number(body.page), 2);
        return { status: 200, body: { totalCount: 20, articles: all.slice((page - 1) * 10, page * 10) } };
      });
      const pages = await collect(client(agent).instance.pages(range, { sequential }));
      expect(pages.flatMap((p) => p.articles)).toHaveLength(20);
      expect(requests.length).toBeLessThanOrEqual(3);
    },
  );

  // The interface says nothing of pages past the end; many providers refuse the page number.
  describe.each([400, 404, 416, 422])('a provider that refuses a page past the end with HTTP %i', (status) => {
    const refusing = (count: number, withTotal: 'every page' | 'page 1' | 'none') => {
      const all = Array.from({ length: count }, (_, i) => item(i));
      return provider((body) => {
        const page = Number(body.page);
        const articles = all.slice((page - 1) * 10, page * 10);
        if (page > 1 && articles.length === 0) return { status, body: { message: 'page out of range' } };
        const total = withTotal === 'every page' || (withTotal === 'page 1' && page === 1) ? { totalCount: count } : {};
        return { status: 200, body: { ...total, articles } };
      });
    };

    it.each([
      [20, 'every page', false],
      [20, 'every page', true],
      [20, 'page 1', false],
      [30, 'page 1', true],
      [10, 'every page', true],
      [20, 'none', false],
      [19, 'none', false],
      [0, 'none', false],
    ] as const)(
      'reads all %i articles (total on %s, sequential: %s) and ends there',
      async (count, withTotal, sequential) => {
        const { agent } = refusing(count, withTotal);
        const pages = await collect(client(agent).instance.pages(range, { sequential }));
        expect(pages.flatMap((p) => p.articles.map((a) => a.id))).toEqual(
          Array.from({ length: count }, (_, i) => String(i)),
        );
      },
    );

    it('is still an error for the page a resumed read starts at (the run then reads from page 1)', async () => {
      const { agent, requests } = refusing(20, 'none');
      const error = await failure(client(agent).instance.pages(range, { resumeFrom: { page: 3 } }));
      expect((error as ProviderError).status).toBe(status);
      expect(requests.map((r) => r.page)).toEqual([3]);
      // A page after it is past the end as usual.
      const resumed = refusing(20, 'none');
      const pages = await collect(client(resumed.agent).instance.pages(range, { resumeFrom: { page: 2 } }));
      expect(pages.flatMap((p) => p.articles.map((a) => a.id))).toHaveLength(10);
    });

    it('is still an error for a page the total says exists', async () => {
      const all = Array.from({ length: 30 }, (_, i) => item(i));
      const { agent } = provider((body) => {
        const page = Number(body.page);
        if (page === 2) return { status, body: { message: 'no' } };
        return { status: 200, body: { totalCount: 30, articles: all.slice((page - 1) * 10, page * 10) } };
      });
      const error = await failure(client(agent).instance.pages(range, { sequential: true }));
      expect(error).toBeInstanceOf(ProviderError);
      expect((error as ProviderError).status).toBe(status);
    });
  });

  it.each([403, 500])('a page past the end answered with HTTP %i is still an error, not the end', async (status) => {
    const all = Array.from({ length: 10 }, (_, i) => item(i));
    const { agent } = provider((body) =>
      Number(body.page) === 1
        ? { status: 200, body: { totalCount: 10, articles: all } }
        : { status, body: { message: 'outside your scope, or down' } },
    );
    const error = await failure(client(agent).instance.pages(range, { sequential: true }));
    expect((error as ProviderError).status).toBe(status);
  });

  it('read in order, a page of articles already seen (pushed down by new ones) is not the end while the total says more', async () => {
    // Between page 1 and page 2, ten new articles arrive in front: page 2 repeats page 1.
    const old = Array.from({ length: 15 }, (_, i) => item(`old${i}`));
    const fresh = Array.from({ length: 10 }, (_, i) => item(`new${i}`));
    const { agent, requests } = provider((body) => {
      const page = Number(body.page);
      const listing = page === 1 ? old : [...fresh, ...old];
      return { status: 200, body: { totalCount: listing.length, articles: listing.slice((page - 1) * 10, page * 10) } };
    });
    const pages = await collect(client(agent).instance.pages(range, { sequential: true }));
    expect(new Set(pages.flatMap((p) => p.articles.map((a) => a.id)))).toEqual(new Set(old.map((a) => a.articleId)));
    expect(requests.map((r) => r.page)).toEqual([1, 2, 3]);
  });

  it('read in order, a page pushed down by new articles is not the end when only page 1 carries the total', async () => {
    const old = Array.from({ length: 20 }, (_, i) => item(`old${i}`));
    const fresh = Array.from({ length: 10 }, (_, i) => item(`new${i}`));
    const { agent, requests } = provider((body) => {
      const page = Number(body.page);
      const listing = page === 1 ? old : [...fresh, ...old];
      const articles = listing.slice((page - 1) * 10, page * 10);
      return { status: 200, body: page === 1 ? { totalCount: listing.length, articles } : { articles } };
    });
    const pages = await collect(client(agent).instance.pages(range, { sequential: true }));
    const read = new Set(pages.flatMap((p) => p.articles.map((a) => a.id)));
    expect(old.filter((a) => !read.has(a.articleId))).toEqual([]);
    expect(requests.map((r) => r.page)).toEqual([1, 2, 3, 4]);
  });

  it.each([false, true])(
    'with the total on page 1 only, a provider that repeats its full last page past the end is not read to the cap (sequential: %s)',
    async (sequential) => {
      const all = Array.from({ length: 30 }, (_, i) => item(i));
      const { agent, requests } = provider((body) => {
        const page = Math.min(Number(body.page), 3);
        const articles = all.slice((page - 1) * 10, page * 10);
        return { status: 200, body: Number(body.page) === 1 ? { totalCount: 30, articles } : { articles } };
      });
      const pages = await collect(client(agent, { maxPages: 50 }).instance.pages(range, { sequential }));
      expect(pages.flatMap((p) => p.articles)).toHaveLength(30);
      expect(requests.length).toBeLessThanOrEqual(5);
    },
  );

  it('read in order, a provider that ignores the page number and reports a placeholder total is not read to the cap', async () => {
    const { agent, requests } = provider(() => ({
      status: 200,
      body: { totalCount: 1e12, articles: Array.from({ length: 10 }, (_, i) => item(i)) },
    }));
    const pages = await collect(client(agent, { maxPages: 50 }).instance.pages(range, { sequential: true }));
    expect(pages.flatMap((p) => p.articles)).toHaveLength(10);
    expect(requests.length).toBeLessThanOrEqual(4);
  });

  it.each([false, true])(
    'with the total on page 1 only, a batch of new articles in front does not end the read at a page pushed down (sequential: %s)',
    async (sequential) => {
      const old = Array.from({ length: 30 }, (_, i) => item(`old${i}`));
      const fresh = Array.from({ length: 30 }, (_, i) => item(`new${i}`));
      const { agent } = provider((body) => {
        const page = Number(body.page);
        const listing = page === 1 ? old : [...fresh, ...old];
        const articles = listing.slice((page - 1) * 10, page * 10);
        return { status: 200, body: page === 1 ? { totalCount: 30, articles } : { articles } };
      });
      const pages = await collect(client(agent).instance.pages(range, { sequential }));
      const read = new Set(pages.flatMap((p) => p.articles.map((a) => a.id)));
      expect(old.filter((a) => !read.has(a.articleId))).toEqual([]);
    },
  );

  it('read in order with a placeholder total, withheld pages alike are not the end: the readable pages after them are read', async () => {
    const { agent } = provider((body) => {
      const page = Number(body.page);
      const articles =
        page === 2 || page === 3
          ? Array(10).fill(null)
          : page <= 5
            ? Array.from({ length: 10 }, (_, i) => item(`${page}-${i}`))
            : [];
      return { status: 200, body: { totalCount: 1e12, articles } };
    });
    const pages = await collect(client(agent).instance.pages(range, { sequential: true }));
    expect(pages.flatMap((p) => p.articles)).toHaveLength(30);
  });

  it('read in order, a count that is stale on every page does not end the read at a page pushed down by new articles', async () => {
    const old = Array.from({ length: 20 }, (_, i) => item(`old${i}`));
    const fresh = Array.from({ length: 10 }, (_, i) => item(`new${i}`));
    const { agent } = provider((body) => {
      const page = Number(body.page);
      const listing = page === 1 ? old : [...fresh, ...old];
      return { status: 200, body: { totalCount: 20, articles: listing.slice((page - 1) * 10, page * 10) } };
    });
    const pages = await collect(client(agent).instance.pages(range, { sequential: true }));
    const read = new Set(pages.flatMap((p) => p.articles.map((a) => a.id)));
    expect(old.filter((a) => !read.has(a.articleId))).toEqual([]);
  });

  it('read in order, two pushes of a page each, with a current count, lose nothing', async () => {
    const old = Array.from({ length: 30 }, (_, i) => item(`old${i}`));
    const first = Array.from({ length: 10 }, (_, i) => item(`b1-${i}`));
    const second = Array.from({ length: 10 }, (_, i) => item(`b2-${i}`));
    const { agent } = provider((body) => {
      const page = Number(body.page);
      const listing = page === 1 ? old : page === 2 ? [...first, ...old] : [...second, ...first, ...old];
      return { status: 200, body: { totalCount: listing.length, articles: listing.slice((page - 1) * 10, page * 10) } };
    });
    const pages = await collect(client(agent).instance.pages(range, { sequential: true }));
    const read = new Set(pages.flatMap((p) => p.articles.map((a) => a.id)));
    expect(old.filter((a) => !read.has(a.articleId))).toEqual([]);
  });

  it('pages fetched out of order are read again in order to the end, past the pages already read', async () => {
    // One late article is listed at 35; page 4 is answered from the new listing, page 5 from an older replica.
    const old = Array.from({ length: 50 }, (_, i) => item(`a${i}`));
    const now = [...old.slice(0, 35), item('late'), ...old.slice(35)];
    const { agent } = provider((body, n) => {
      const page = Number(body.page);
      const listing = n > 5 || page === 4 ? now : old;
      return { status: 200, body: { totalCount: listing.length, articles: listing.slice((page - 1) * 10, page * 10) } };
    });
    const pages = await collect(client(agent).instance.pages(range));
    const read = new Set(pages.flatMap((p) => p.articles.map((a) => a.id)));
    expect(now.filter((a) => !read.has(a.articleId))).toEqual([]);
  });

  it('an unreadable last page that the provider repeats past the end ends the read at the end its count gives', async () => {
    const { agent, requests } = provider((body) => {
      const page = Math.min(Number(body.page), 2);
      const articles = page === 1 ? Array.from({ length: 10 }, (_, i) => item(i)) : Array(10).fill(null);
      return { status: 200, body: { totalCount: 20, articles } };
    });
    await collect(client(agent, { maxPages: 40 }).instance.pages(range));
    expect(requests.length).toBeLessThanOrEqual(4);
  });

  it('without a total, unreadable pages that read alike are not the end: the readable pages after them are read', async () => {
    const { agent, requests } = provider((body) => {
      const page = Number(body.page);
      const articles =
        page >= 2 && page <= 4
          ? Array(10).fill(null)
          : page <= 5
            ? Array.from({ length: 10 }, (_, i) => item(`${page}-${i}`))
            : [];
      return { status: 200, body: { articles } };
    });
    const pages = await collect(client(agent).instance.pages(range));
    expect(pages.flatMap((p) => p.articles)).toHaveLength(20);
    expect(pages.filter((p) => p.unreadable !== undefined).map((p) => p.pageNumber)).toEqual([2, 3, 4]);
    expect(requests.map((r) => r.page)).toEqual([1, 2, 3, 4, 5, 6]);
  });

  it('without a total, a provider that ignores the page number and serves an unreadable page still ends the read', async () => {
    const { agent, requests } = provider((body) => ({
      status: 200,
      body: { articles: Number(body.page) === 1 ? [item(1)] : Array(10).fill(null) },
    }));
    const pages = await collect(client(agent).instance.pages(range));
    expect(pages.flatMap((p) => p.articles)).toHaveLength(1);
    expect(requests.length).toBeLessThanOrEqual(11);
  });

  it('without a total, reads until an empty page: one request past the last page', async () => {
    const all = Array.from({ length: 23 }, (_, i) => item(i));
    const { agent, requests } = provider((body) => {
      const page = Number(body.page);
      return { status: 200, body: { articles: all.slice((page - 1) * 10, page * 10) } };
    });
    const pages = await collect(client(agent).instance.pages(range));
    expect(pages.map((p) => p.pageNumber)).toEqual([1, 2, 3, 4]);
    expect(pages.flatMap((p) => p.articles)).toHaveLength(23);
    expect(requests).toHaveLength(4);
  });

  it('without a total, reads everything from a provider that silently caps the page size', async () => {
    // Asked for 10 a page, the provider sends 4: a short page 1 is not the end of the day.
    const all = Array.from({ length: 11 }, (_, i) => item(i));
    const { agent } = provider((body) => {
      const page = Number(body.page);
      return { status: 200, body: { articles: all.slice((page - 1) * 4, page * 4) } };
    });
    const pages = await collect(client(agent).instance.pages(range));
    expect(pages.flatMap((p) => p.articles)).toHaveLength(11);
  });

  it('reads one extra page when the last page is exactly full', async () => {
    const all = Array.from({ length: 20 }, (_, i) => item(i));
    const { agent, requests } = provider((body) => {
      const page = Number(body.page);
      return { status: 200, body: { totalCount: 20, articles: all.slice((page - 1) * 10, page * 10) } };
    });
    await collect(client(agent).instance.pages(range));
    expect(requests.map((r) => r.page)).toEqual([1, 2, 3]);
  });

  it('reads on once more when the total changed between pages, even after a short last page', async () => {
    let all = Array.from({ length: 25 }, (_, i) => item(`old${i}`));
    const { agent, requests } = provider((body) => {
      const page = Number(body.page);
      const reply = { status: 200, body: { totalCount: all.length, articles: all.slice((page - 1) * 10, page * 10) } };
      if (page === 1) all = [item('new0'), item('new1'), ...all];
      return reply;
    });
    const pages = await collect(client(agent).instance.pages(range));
    expect(requests.map((r) => r.page)).toEqual([1, 2, 3, 4]);
    const old = pages.flatMap((p) => p.articles.map((a) => a.id)).filter((id) => id?.startsWith('old'));
    expect(old).toHaveLength(25);
  });

  it('does not re-read page 1 when the reported total is zero beside a full first page', async () => {
    const { agent, requests } = provider((body) => ({
      status: 200,
      body: {
        totalCount: 0,
        articles: body.page === 1 ? Array.from({ length: 10 }, (_, i) => item(i)) : [item(10)],
      },
    }));
    const pages = await collect(client(agent).instance.pages(range));
    expect(requests.map((r) => r.page)).toEqual([1, 2]);
    expect(pages.flatMap((p) => p.articles)).toHaveLength(11);
  });

  it('hits the page cap without totals and says how to fix it', async () => {
    const { agent, requests } = provider((body) => ({
      status: 200,
      body: { articles: Array.from({ length: 10 }, (_, i) => item(`${body.page}-${i}`)) },
    }));
    const error = await failure(client(agent, { maxPages: 3 }).instance.pages(range));
    expect(error).toBeInstanceOf(PageCapError);
    expect(error.message).toContain('2026-11-22..2026-11-22');
    expect(error.message).toContain('raise NEWS_API_MAX_PAGES or shorten the schedule interval');
    expect(requests).toHaveLength(3);
  });

  it('refuses a cursor that comes back again instead of looping to the cap', async () => {
    const { agent, requests } = provider((_body, n) => ({
      status: 200,
      body: { articles: [item(n)], nextCursor: 'c1' },
    }));
    const error = await failure(client(agent, { pagination: { method: 'CURSOR' } }).instance.pages(range));
    expect(error).toBeInstanceOf(ProviderResponseError);
    expect(error.message).toContain('cursor that was already used');
    expect(requests).toHaveLength(2);
  });

  it('de-duplicates by key across pages and reports skipped items', async () => {
    const { agent } = provider((body) =>
      body.page === 1
        ? {
            status: 200,
            body: { totalCount: 13, articles: [...Array.from({ length: 9 }, (_, i) => item(i)), { title: 'x' }] },
          }
        : { status: 200, body: { totalCount: 13, articles: [item(7), item(8), item(10)] } },
    );
    const pages = await collect(client(agent).instance.pages(range));
    expect(pages[0]?.skipped).toEqual([expect.objectContaining({ index: 9 })]);
    expect(pages[1]?.articles.map((a) => a.id)).toEqual(['10']);
  });

  it('refuses a malformed range before any request', async () => {
    const { agent, requests } = provider(() => ({ status: 200, body: { articles: [] } }));
    const error = await failure(client(agent).instance.pages({ from: '2026-11-23', to: '2026-11-22' }));
    expect(error).toBeInstanceOf(RangeError);
    expect(requests).toHaveLength(0);
  });
});

describe('NewsLookupClient retries and messages', () => {
  it('backs off exponentially with full jitter under the cap', async () => {
    const { agent } = provider(() => ({ status: 503, body: { status: 'ERROR' } }));
    const { instance, sleeps } = client(agent, { maxAttempts: 6, baseDelayMs: 100, maxDelayMs: 1000 });
    const error = await failure(instance.pages(range));
    expect(error).toBeInstanceOf(ProviderError);
    // random() = 0.5: half of 100, 200, 400, 800, then the 1000 cap.
    expect(sleeps).toEqual([50, 100, 200, 400, 500]);
  });

  it('waits for an HTTP-date Retry-After measured against the injected clock', async () => {
    const now = Date.UTC(2026, 10, 22, 0, 0, 0);
    const { agent } = provider((_b, n) =>
      n === 1
        ? { status: 429, headers: { 'retry-after': 'Sun, 22 Nov 2026 00:00:12 GMT' } }
        : { status: 200, body: { articles: [] } },
    );
    const { instance, sleeps } = client(agent, {}, { now: () => now });
    await collect(instance.pages(range));
    expect(sleeps).toEqual([12_000]);
  });

  it('gives up with a retryable error when Retry-After exceeds the allowed wait', async () => {
    const { agent, requests } = provider(() => ({ status: 503, headers: { 'retry-after': '600' } }));
    const { instance, sleeps } = client(agent, { maxRetryAfterMs: 60_000 });
    const error = await failure(instance.pages(range));
    expect(error).toBeInstanceOf(ProviderError);
    expect((error as ProviderError).retryable).toBe(true);
    expect(error.message).toContain('asked to wait 600 s (Retry-After)');
    expect(error.message).toContain('NEWS_API_MAX_RETRY_AFTER_MS=60000');
    expect(sleeps).toEqual([]);
    expect(requests).toHaveLength(1);
  });

  it('points at the base URL on a 404', async () => {
    const { agent, requests } = provider(() => ({ status: 404, body: 'Not Found' }));
    const error = await failure(client(agent).instance.pages(range));
    expect(error).toBeInstanceOf(ProviderError);
    expect((error as ProviderError).retryable).toBe(false);
    expect(error.message).toContain('check NEWS_API_BASE_URL: the client posts to https://api.test/v1/news');
    expect(requests).toHaveLength(1);
  });

  it('does not follow a redirect and says where the provider moved', async () => {
    const { agent, requests } = provider(() => ({
      status: 308,
      headers: { location: 'https://api2.test/v1/news' },
    }));
    const error = await failure(client(agent).instance.pages(range));
    expect((error as ProviderError).retryable).toBe(false);
    expect(error.message).toContain('the provider redirects to https://api2.test/v1/news');
    expect(requests).toHaveLength(1);
  });

  it('refuses an empty key without calling the provider', async () => {
    const { agent, requests } = provider(() => ({ status: 200, body: { articles: [] } }));
    const instance = new NewsLookupClient({
      config: parseProviderConfig({ baseUrl: 'https://api.test/v1' }),
      secrets: secrets('  \n'),
      dispatcher: agent,
    });
    const error = await failure(instance.pages(range));
    expect(error).toBeInstanceOf(ConfigError);
    expect(requests).toHaveLength(0);
  });

  it('trims a key stored with a trailing newline', async () => {
    const agent = new MockAgent();
    agent.disableNetConnect();
    agents.push(agent);
    agent
      .get('https://api.test')
      .intercept({ path: '/v1/news', method: 'POST', headers: { 'x-api-key': 'clean-key' } })
      .reply(200, { articles: [] });
    const instance = new NewsLookupClient({
      config: parseProviderConfig({ baseUrl: 'https://api.test/v1' }),
      secrets: secrets('clean-key\n'),
      dispatcher: agent,
    });
    expect(await collect(instance.pages(range))).toHaveLength(1);
  });

  describe('prepare: the key read started while the run reads its own state', () => {
    /** A secret source answering from `answers` in turn (an Error is thrown), counting its reads. */
    function scriptedSecrets(...answers: (string | Error)[]) {
      const reads = { count: 0 };
      const source: SecretSource = {
        async apiKey() {
          const answer = answers[Math.min(reads.count, answers.length - 1)] as string | Error;
          reads.count += 1;
          if (answer instanceof Error) throw answer;
          return answer;
        },
      };
      return { source, reads };
    }

    /** A provider answering every request, noting the key each one carried. */
    function keyedProvider() {
      const agent = new MockAgent();
      agent.disableNetConnect();
      agents.push(agent);
      const keys: unknown[] = [];
      agent
        .get('https://api.test')
        .intercept({ path: '/v1/news', method: 'POST' })
        .reply((options) => {
          keys.push((options.headers as Record<string, string>)['X-API-KEY']);
          return { statusCode: 200, data: JSON.stringify({ articles: [] }) };
        })
        .persist();
      return { agent, keys };
    }

    const clientWith = (source: SecretSource, agent: MockAgent) =>
      new NewsLookupClient({
        config: parseProviderConfig({ baseUrl: 'https://api.test/v1', maxAttempts: 1 }),
        secrets: source,
        dispatcher: agent,
      });

    it('sends the key the early read got, without reading it again', async () => {
      const { source, reads } = scriptedSecrets('early-key', 'late-key');
      const { agent, keys } = keyedProvider();
      const instance = clientWith(source, agent);
      instance.prepare();
      expect(await collect(instance.pages(range))).toHaveLength(1);
      expect(keys).toEqual(['early-key']);
      expect(reads.count).toBe(1);
    });

    it('reads the key again at the first request when the early read failed, and reports that read', async () => {
      const { source, reads } = scriptedSecrets(new Error('throttled'), 'second-key');
      const { agent, keys } = keyedProvider();
      const instance = clientWith(source, agent);
      instance.prepare();
      expect(await collect(instance.pages(range))).toHaveLength(1);
      expect(keys).toEqual(['second-key']);
      expect(reads.count).toBe(2);

      const failing = scriptedSecrets(new ConfigError('secret "news" holds no API key'));
      const refusing = keyedProvider();
      const refused = clientWith(failing.source, refusing.agent);
      refused.prepare();
      const error = await failure(refused.pages(range));
      expect(error).toBeInstanceOf(ConfigError);
      expect(error.message).toContain('holds no API key');
      expect(failing.reads.count).toBe(2);
      expect(refusing.keys).toEqual([]);
    });

    it('takes the latest early read: a run never sends the key an earlier run read', async () => {
      const { source } = scriptedSecrets('old-key', 'rotated-key');
      const { agent, keys } = keyedProvider();
      const instance = clientWith(source, agent);
      instance.prepare();
      instance.prepare();
      expect(await collect(instance.pages(range))).toHaveLength(1);
      expect(keys).toEqual(['rotated-key']);
    });
  });

  it('refuses a key an HTTP header cannot carry, without calling the provider or showing the key', async () => {
    // U+FFFD is what `api-key set` once stored for bytes that are not UTF-8; undici refused each
    // such request and, with the pool's connection limit, leaked a slot per attempt until one hung.
    for (const key of [
      '\ufffd\ufffdSECRETBIN',
      'caf\u00e9-secret-key',
      'key\u0000with-nul',
      'zero\u200bwidth',
      'tab\tinside',
    ]) {
      const { agent, requests } = provider(() => ({ status: 200, body: { articles: [] } }));
      const error = await failure(client(agent, {}, { key }).instance.pages(range));
      expect(error).toBeInstanceOf(ConfigError);
      expect(error.message).toContain('a control or non-ASCII character');
      expect(error.message).not.toContain(key.trim());
      expect(requests).toHaveLength(0);
    }
  });

  it('sends any printable-ASCII key as it is and refuses every other one (property)', async () => {
    const sent: string[] = [];
    const agent = new MockAgent();
    agent.disableNetConnect();
    agents.push(agent);
    agent
      .get('https://api.test')
      .intercept({ path: '/v1/news', method: 'POST' })
      .reply((options) => {
        const headers = options.headers as Record<string, string>;
        sent.push(headers['X-API-KEY'] ?? headers['x-api-key'] ?? '');
        return { statusCode: 200, data: JSON.stringify({ articles: [] }) };
      })
      .persist();
    const keys = fc.oneof(
      fc.string({ unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)), minLength: 1 }),
      fc.string({ unit: 'binary', minLength: 1 }),
    );
    await fc.assert(
      fc.asyncProperty(keys, async (key) => {
        sent.length = 0;
        clearRegisteredSecrets();
        const { instance } = client(agent, {}, { key });
        const trimmed = key.trim();
        if (trimmed !== '' && /^[\x20-\x7e]+$/.test(trimmed)) {
          await collect(instance.pages(range));
          expect(sent).toEqual([trimmed]);
          return;
        }
        const error = await failure(instance.pages(range));
        expect(error).toBeInstanceOf(ConfigError);
        expect(sent).toEqual([]);
        if (trimmed.length >= 8) expect(error.message).not.toContain(trimmed);
      }),
      { numRuns: 200 },
    );
  });

  it('does not retry a request undici refuses to build: it fails once, not after every attempt', async () => {
    let dispatched = 0;
    class Refusing extends Dispatcher {
      override dispatch(): boolean {
        dispatched++;
        throw new errors.InvalidArgumentError('invalid x-something header');
      }
    }
    const { instance, sleeps } = client(new Refusing() as unknown as MockAgent, { maxAttempts: 5 });
    const error = await failure(instance.pages(range));
    expect(error).toBeInstanceOf(ProviderError);
    expect((error as ProviderError).retryable).toBe(false);
    expect(error.message).toContain('UND_ERR_INVALID_ARG');
    expect(dispatched).toBe(1);
    expect(sleeps).toEqual([]);
  });
});

describe('NewsLookupClient against hostile or odd providers (issue 10)', () => {
  const deepBrackets = `${'['.repeat(200_000)}${']'.repeat(200_000)}`;

  it('item 5a: 400 KB of nested brackets ends in a typed ProviderResponseError, not a stack overflow', async () => {
    for (const body of [deepBrackets, `{"status":"OK","articles":${deepBrackets}}`, `{"totalCount":${deepBrackets}}`]) {
      const { agent } = provider(() => ({ status: 200, body }));
      const error = await failure(client(agent).instance.pages(range));
      expect(error).toBeInstanceOf(ProviderResponseError);
      expect(error.message.length).toBeLessThan(2000);
    }
  });

  it('item 5a: samples of deeply nested values are bounded and never throw', () => {
    const deep = JSON.parse(deepBrackets) as unknown;
    const sample = sampleOf(deep, [], 300);
    expect(sample.length).toBeLessThanOrEqual(300);
    expect(sample.startsWith('[[[[')).toBe(true);
    expect(sampleOf({ a: 'x'.repeat(1_000_000) }, [], 100).length).toBeLessThanOrEqual(100);
  });

  it('item 5a: refuses a body larger than maxResponseBytes with a typed error naming the setting', async () => {
    const { agent } = provider(() => ({ status: 200, body: { articles: [{ title: 'x'.repeat(5000) }] } }));
    const error = await failure(client(agent, { maxResponseBytes: 2048 }).instance.pages(range));
    expect(error).toBeInstanceOf(ProviderResponseError);
    expect(error.message).toContain('NEWS_API_MAX_RESPONSE_BYTES=2048');
  });

  it('item 5c: an absurd totalCount (10^12) is read page by page instead of failing every run at the cap', async () => {
    const all = Array.from({ length: 23 }, (_, i) => item(i));
    const { agent, requests } = provider((body) => {
      const page = Number(body.page);
      return { status: 200, body: { totalCount: 1e12, articles: all.slice((page - 1) * 10, page * 10) } };
    });
    const pages = await collect(client(agent, { maxPages: 50 }).instance.pages(range));
    expect(pages.flatMap((p) => p.articles)).toHaveLength(23);
    expect(requests).toHaveLength(4);
  });

  it('item 5d: a page with no readable item is reported as unreadable once another page reads, and the read goes on', async () => {
    const broken = Array.from({ length: 10 }, (_, i) => ({ articleId: `b${i}`, headline_broken: true }));
    const { agent } = provider((body) => {
      const page = Number(body.page);
      const articles = page === 1 ? broken : page === 2 ? [item(1), item(2)] : [];
      return { status: 200, body: { articles } };
    });
    const pages = await collect(client(agent).instance.pages(range));
    expect(pages.map((p) => [p.pageNumber, p.articles.length, p.unreadable !== undefined])).toEqual([
      [1, 0, true],
      [2, 2, false],
      [3, 0, false],
    ]);
    expect(pages[0]?.unreadable).toContain('title missing');
    expect(pages[0]?.skipped).toHaveLength(10);
  });

  it('item 5d: pages with no readable item and no page that reads fail loudly: the mapping is wrong', async () => {
    const broken = Array.from({ length: 10 }, (_, i) => ({ articleId: `b${i}`, headline_broken: true }));
    const { agent } = provider((body) => ({ status: 200, body: { articles: Number(body.page) <= 2 ? broken : [] } }));
    const error = await failure(client(agent).instance.pages(range));
    expect(error).toBeInstanceOf(ProviderResponseError);
    expect(error.message).toContain('no item on pages 1, 2 of 2026-11-22..2026-11-22 could be read');
    expect(error.message).toContain('the response mapping does not fit this provider');
  });

  it('item 5d: a day of nothing but unreadable pages before today is poison, not a wrong mapping, when today reads (cold client)', async () => {
    const broken = Array.from({ length: 10 }, (_, i) => ({ articleId: `b${i}`, headline_broken: true }));
    const { agent, requests } = provider((body) => {
      const today = body.publishedAtStart === '2026-11-23';
      return { status: 200, body: { articles: Number(body.page) === 1 ? (today ? [item(1)] : broken) : [] } };
    });
    const now = () => Date.parse('2026-11-23T12:00:00Z');
    const pages = await collect(client(agent, {}, { now }).instance.pages(range));
    // Held while unproven, the unreadable page comes after the (empty) page that ended the day.
    expect(pages.map((p) => [p.pageNumber, p.unreadable !== undefined])).toEqual([
      [2, false],
      [1, true],
    ]);
    expect(requests.map((r) => `${r.publishedAtStart} p${r.page}`)).toEqual([
      '2026-11-22 p1',
      '2026-11-22 p2',
      '2026-11-23 p1',
    ]);
    // One page by number (counted reading) on a cold client, too.
    const cold = client(agent, {}, { now }).instance;
    expect((await cold.page(range, { page: 1, size: 10 })).unreadable).toContain('title missing');
  });

  it('item 5d: a cursor-paged provider proves the mapping on today too, so a day of poison before it is parked', async () => {
    const broken = Array.from({ length: 10 }, (_, i) => ({ articleId: `b${i}`, headline_broken: true }));
    const { agent, requests } = provider((body) => ({
      status: 200,
      body: { articles: body.publishedAtStart === '2026-11-23' ? [item(1)] : broken },
    }));
    const now = () => Date.parse('2026-11-23T12:00:00Z');
    const pages = await collect(client(agent, { pagination: { method: 'CURSOR' } }, { now }).instance.pages(range));
    expect(pages.map((p) => p.unreadable !== undefined)).toEqual([true]);
    expect(requests.map((r) => r.publishedAtStart)).toEqual(['2026-11-22', '2026-11-23']);
  });

  it('item 5d: several poison pages before today, on a cold client, are each handed on once once today proves the mapping', async () => {
    const broken = Array.from({ length: 10 }, (_, i) => ({ articleId: `b${i}`, headline_broken: true }));
    const { agent } = provider((body) => {
      const page = Number(body.page);
      if (body.publishedAtStart === '2026-11-23')
        return { status: 200, body: { articles: page === 1 ? [item(1)] : [] } };
      return {
        status: 200,
        body: { articles: page <= 4 ? broken.map((b) => ({ ...b, articleId: `${b.articleId}-${page}` })) : [] },
      };
    });
    const now = () => Date.parse('2026-11-23T12:00:00Z');
    const pages = await collect(client(agent, {}, { now }).instance.pages(range));
    expect(pages.filter((p) => p.unreadable !== undefined).map((p) => p.pageNumber)).toEqual([1, 2, 3, 4]);
  });

  it('item 5e: a status code whose success value is fixed reports the error body as a provider error', async () => {
    const mapping = { successStatusFields: ['code'], successStatusValues: ['0000'] };
    const ok = provider(() => ({ status: 200, body: { code: '0000', articles: [item(1)] } }));
    expect((await collect(client(ok.agent, { mapping }).instance.pages(range)))[0]?.articles).toHaveLength(1);

    const failing = provider(() => ({ status: 200, body: { code: 'E101', message: 'daily quota exceeded' } }));
    const error = await failure(client(failing.agent, { mapping }).instance.pages(range));
    expect(error).toBeInstanceOf(ProviderError);
    expect(error).not.toBeInstanceOf(ProviderResponseError);
    expect((error as ProviderError).retryable).toBe(true);
    expect(error.message).toContain('reporting an error in the body: code "E101" is not a success value (0000)');
    expect(error.message).toContain('daily quota exceeded');
    expect(error.message).not.toContain('no article list');
  });

  it('item 5e: the success form is validated: one half without the other is refused, naming the field', () => {
    expect(() =>
      parseProviderConfig({ baseUrl: 'https://api.test/v1', mapping: { successStatusValues: ['0000'] } }),
    ).toThrow(/NEWS_API_RESPONSE_MAPPING\.successStatusFields.*is required with successStatusValues/);
    expect(() =>
      parseProviderConfig({ baseUrl: 'https://api.test/v1', mapping: { successStatusFields: 'code' } }),
    ).toThrow(/successStatusValues.*is required with successStatusFields/);
    expect(parseProviderConfig({ baseUrl: 'https://api.test/v1' }).mapping.successStatusValues).toEqual([]);
  });

  it('item 13: zone-less timestamps with no provider time zone fail loudly, naming the setting and the value', async () => {
    const zoneless = { ...item(1), publishedAt: '2026-11-22 13:32:57' };
    const { agent } = provider(() => ({ status: 200, body: { articles: [zoneless] } }));
    const error = await failure(client(agent).instance.pages(range));
    expect(error).toBeInstanceOf(ProviderTimeZoneError);
    expect(error.message).toContain('NEWS_API_TIME_ZONE');
    expect(error.message).toContain('newsApiTimeZone');
    expect(error.message).toContain('"2026-11-22 13:32:57" at publishedAt');

    // With the zone set they are read in it, and the log says once that the zone decides.
    const seoul = provider(() => ({ status: 200, body: { articles: [zoneless] } }));
    const warnings: string[] = [];
    const instance = new NewsLookupClient({
      config: parseProviderConfig({ baseUrl: 'https://api.test/v1', timeZone: 'Asia/Seoul' }),
      secrets: secrets(),
      dispatcher: seoul.agent,
      log: { ...silentLog, warn: (message, extra) => warnings.push(`${message} ${JSON.stringify(extra)}`) },
    });
    const [page] = await collect(instance.pages(range));
    expect(page?.articles[0]?.publishedAt).toBe(Date.parse('2026-11-22T13:32:57+09:00'));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain('timestamps carry no time zone or offset');
    expect(warnings[0]).toContain('2026-11-22 13:32:57');
    expect(warnings[0]).toContain('NEWS_API_TIME_ZONE');
  });

  it('item 13: the 401 hint offers the portal test key as a possibility, not as a fact', async () => {
    const { agent } = provider(() => ({ status: 401, body: { error: { code: 'UNAUTHORIZED', message: 'bad key' } } }));
    const error = await failure(client(agent).instance.pages(range));
    expect(error.message).toContain('it may not be valid for API calls');
    expect(error.message).not.toContain('only works');
  });
});
