import { describe, expect, it } from 'vitest';
import { AudienceSchema } from '#core/model';
import { renderNotification } from '#core/render';
import {
  type Block,
  clip,
  HEADER_MAX,
  linkTarget,
  renderSlackMessage,
  SECTION_MAX,
} from '../../functions/slack-relay/blocks.ts';
import { type Alert, AlertSchema, parseAlertMessage } from '../../functions/slack-relay/message.ts';

const alert = (overrides: { article?: Partial<Alert['article']> } & Partial<Omit<Alert, 'article'>> = {}): Alert =>
  AlertSchema.parse({
    schemaVersion: 1,
    deliveryId: 'markets|id:42',
    audienceId: 'markets',
    audienceName: 'Markets desk',
    urgent: false,
    matches: [{ ruleId: 'rates', description: 'Interest rates', reasons: [{ kind: 'keyword', term: 'rate' }] }],
    ...overrides,
    article: {
      title: 'Fed holds rates steady',
      summary: 'The Federal Reserve left its benchmark rate unchanged.',
      url: 'https://news.example.com/fed',
      publishedAt: '2025-03-14T00:30:00.000Z',
      categories: ['002000000'],
      categoryNames: ['Economy'],
      media: 'wire',
      mediaName: 'Example Wire',
      status: 'published',
      ...overrides.article,
    },
  });

const texts = (blocks: readonly Block[]): string[] =>
  blocks.flatMap((block) => {
    if (block.type === 'header' || block.type === 'section') return [block.text.text];
    if (block.type === 'context') return block.elements.map((element) => element.text);
    return [];
  });

/** True when `value` contains no lone surrogate (a cut through an emoji or astral character). */
const wellFormed = (value: string): boolean =>
  !/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(value);

function expectWithinSlackLimits(message: ReturnType<typeof renderSlackMessage>): void {
  expect(message.text.length).toBeGreaterThan(0);
  expect(message.text.length).toBeLessThanOrEqual(SECTION_MAX);
  expect(message.blocks.length).toBeLessThanOrEqual(50);
  for (const block of message.blocks) {
    if (block.type === 'header') expect(block.text.text.length).toBeLessThanOrEqual(HEADER_MAX);
    if (block.type === 'section') expect(block.text.text.length).toBeLessThanOrEqual(SECTION_MAX);
    if (block.type === 'context') expect(block.elements.length).toBeLessThanOrEqual(10);
  }
  for (const text of [message.text, ...texts(message.blocks)]) expect(wellFormed(text)).toBe(true);
}

describe('renderSlackMessage', () => {
  it('renders an ASCII alert: header, linked article, media, time, category and why you got this', () => {
    const message = renderSlackMessage(alert());
    const [header, section, context, why, footer] = message.blocks;
    expect(header).toEqual({
      type: 'header',
      text: { type: 'plain_text', text: '📰 Fed holds rates steady', emoji: true },
    });
    expect(section).toMatchObject({ type: 'section', text: { type: 'mrkdwn' } });
    expect(texts([section as Block])[0]).toBe(
      'The Federal Reserve left its benchmark rate unchanged.\n\n*<https://news.example.com/fed|Read the article on Example Wire>*',
    );
    expect(texts([context as Block])).toEqual([
      '*Example Wire*',
      '<!date^1741912200^{date_short_pretty} {time}|2025-03-14T00:30:00.000Z>',
      'Economy (002000000)',
      'published',
    ]);
    expect(texts([why as Block])[0]).toBe('*Why you got this*\n• rule rates — Interest rates: keyword “rate”');
    expect(texts([footer as Block])[0]).toContain('markets|id:42');
    expect(message.text).toBe('📰 Fed holds rates steady (Example Wire) https://news.example.com/fed');
    expect(message.unfurl_links).toBe(false);
    expectWithinSlackLimits(message);
  });

  it('marks urgent alerts', () => {
    const message = renderSlackMessage(alert({ urgent: true }));
    expect(texts(message.blocks)[0]).toMatch(/^🚨 /);
    expect(message.text).toMatch(/^🚨 /);
  });

  it('renders Korean text unchanged and within limits', () => {
    const message = renderSlackMessage(
      alert({
        article: {
          title: '한국은행, 기준금리 3.50% 동결… 물가 안정 우선',
          summary: '한국은행 금융통화위원회는 14일 기준금리를 연 3.50%로 유지했다.',
          mediaName: '연합뉴스',
          categoryNames: ['경제'],
        },
      }),
    );
    expect(texts(message.blocks)[0]).toBe('📰 한국은행, 기준금리 3.50% 동결… 물가 안정 우선');
    expect(texts(message.blocks)[1]).toContain('한국은행 금융통화위원회는 14일 기준금리를 연 3.50%로 유지했다.');
    expect(texts(message.blocks)).toContain('경제 (002000000)');
    expectWithinSlackLimits(message);
  });

  it('renders Japanese text and cuts a long Japanese headline between characters', () => {
    const title = '日本銀行が追加利上げを決定、'.repeat(20);
    const message = renderSlackMessage(alert({ article: { title, mediaName: '共同通信' } }));
    const header = texts(message.blocks)[0] ?? '';
    expect(header.length).toBeLessThanOrEqual(HEADER_MAX);
    expect(header.endsWith('…')).toBe(true);
    expect(title.startsWith(header.slice('📰 '.length, -1))).toBe(true);
    // The header was cut, so the section links the whole headline.
    expect(texts(message.blocks)[1]).toContain(title.slice(0, 200));
    expectWithinSlackLimits(message);
  });

  it('never cuts through an emoji (surrogate pairs, ZWJ sequences, skin tones)', () => {
    const family = '👨‍👩‍👧‍👦';
    const title = `${'📈🇰🇷👍🏽'.repeat(30)}${family.repeat(30)}`;
    const message = renderSlackMessage(alert({ article: { title, summary: '🚀'.repeat(3000) } }));
    const header = texts(message.blocks)[0] ?? '';
    expect(header.length).toBeLessThanOrEqual(HEADER_MAX);
    expect(wellFormed(header)).toBe(true);
    const graphemes = [
      ...new Intl.Segmenter(undefined, { granularity: 'grapheme' }).segment(header.slice('📰 '.length, -1)),
    ];
    for (const { segment } of graphemes) expect(title).toContain(segment);
    expectWithinSlackLimits(message);
  });

  it('keeps a very long headline and summary within the header (150) and section (3000) limits', () => {
    const title = 'Breaking: markets rally as central banks signal coordinated easing '.repeat(80);
    const summary = 'Analysts said the move was widely expected. '.repeat(200);
    const message = renderSlackMessage(alert({ article: { title, summary } }));
    expect(texts(message.blocks)[0]?.length).toBeLessThanOrEqual(HEADER_MAX);
    expect(texts(message.blocks)[1]?.length).toBeLessThanOrEqual(SECTION_MAX);
    expect(message.text.length).toBeLessThanOrEqual(SECTION_MAX);
    expect(message.text).toContain('https://news.example.com/fed');
    expectWithinSlackLimits(message);
  });

  it('escapes Slack markup so a headline cannot ping the channel or break a link', () => {
    const message = renderSlackMessage(
      alert({
        article: {
          title: '<!channel> Q&A: <b>rates</b>',
          summary: 'See <https://evil.example|here> & more',
          url: 'https://news.example.com/a?x=1|2&y=<3>',
          mediaName: 'A|B <Media>',
        },
      }),
    );
    const all = [message.text, ...texts(message.blocks.slice(1))].join('\n');
    expect(all).not.toContain('<!channel>');
    expect(all).not.toContain('<https://evil.example');
    expect(all).toContain('&lt;!channel&gt; Q&amp;A');
    expect(all).toContain('<https://news.example.com/a?x=1%7C2&y=%3C3%3E|Read the article on A∣B &lt;Media&gt;>');
    // The header is plain text: shown literally, never parsed as markup.
    expect(texts(message.blocks)[0]).toBe('📰 <!channel> Q&A: <b>rates</b>');
    expectWithinSlackLimits(message);
  });

  it('defangs an address written in a link label, so a headline cannot show one address and open another', () => {
    // The header cuts this headline, so the link below carries it as its label.
    const title = `https://bank.example.com/secure/login verify your account now ${'padding '.repeat(30)}`;
    const message = renderSlackMessage(alert({ article: { title, url: 'https://evil.example.net/phish' } }));
    const all = [message.text, ...texts(message.blocks.slice(1))].join('\n');
    expect(all).toContain('<https://evil.example.net/phish|https[:]//bank[.]example[.]com/secure/login verify');
    expect(all).not.toMatch(/\|https:\/\/bank/);
    const www = renderSlackMessage(alert({ article: { title: `See www.bank.example.com ${'x '.repeat(90)}` } }));
    expect(texts(www.blocks).join('\n')).toContain('|See www[.]bank[.]example[.]com');
    // A bare domain, and one behind a full-width colon, read as an address too (found by review of the fix).
    for (const written of ['bank.example.com/login', 'HTTPS\uFF1A//bank.example.com']) {
      const bare = renderSlackMessage(
        alert({
          article: { title: `${written} verify ${'padding '.repeat(30)}`, url: 'https://evil.example.net/phish' },
        }),
      );
      expect(texts(bare.blocks).join('\n'), written).toContain('bank[.]example[.]com');
    }
    // The link's own host, or a domain it is under, is its own name: kept as written.
    const own = renderSlackMessage(
      alert({ article: { url: 'https://news.example.com/fed', mediaName: 'example.com' } }),
    );
    expect(texts(own.blocks).join('\n')).toContain('|Read the article on example.com>');
    const other = renderSlackMessage(
      alert({ article: { url: 'https://news.example.com/fed', mediaName: 'bank.example.org' } }),
    );
    expect(texts(other.blocks).join('\n')).toContain('|Read the article on bank[.]example[.]org>');
  });

  it('shows a non-http URL as text instead of a link', () => {
    const message = renderSlackMessage(alert({ article: { url: 'javascript:alert(1)' } }));
    expect(texts(message.blocks)[1]).not.toContain('<javascript');
    expect(linkTarget('javascript:alert(1)')).toBeUndefined();
  });

  it('lists at most ten rules and counts the rest', () => {
    const matches = Array.from({ length: 14 }, (_, index) => ({
      ruleId: `rule-${index}`,
      description: 'x'.repeat(1000),
      urgent: false,
      reasons: [{ kind: 'category', term: '002*' }],
      omittedReasons: 0,
    }));
    const message = renderSlackMessage(alert({ matches, omittedMatches: 3 }));
    const why = texts(message.blocks).find((text) => text.startsWith('*Why you got this*')) ?? '';
    expect(why.split('\n').filter((line) => line.startsWith('• '))).toHaveLength(10);
    expect(why).toContain('…and 7 more rule(s)');
    expect(why.length).toBeLessThanOrEqual(SECTION_MAX);
  });

  it('shows the raw time when the timestamp is not parseable', () => {
    const message = renderSlackMessage(alert({ article: { publishedAt: 'yesterday' } }));
    expect(texts(message.blocks)).toContain('yesterday');
  });
});

describe('clip', () => {
  it('returns short text unchanged and cuts long text at a grapheme with an ellipsis', () => {
    expect(clip('abc', 3)).toBe('abc');
    expect(clip('abcdef', 4)).toBe('abc…');
    expect(clip('가나다라마', 3)).toBe('가나…');
    expect(clip('👍🏽👍🏽👍🏽', 5)).toBe('👍🏽…');
  });
});

describe('parseAlertMessage with the real renderer', () => {
  const audience = AudienceSchema.parse({
    audienceId: 'markets',
    name: 'Markets desk',
    topicArn: 'arn:aws:sns:us-east-1:123456789012:news-alerts-audience-markets',
    timeZone: 'Asia/Seoul',
  });

  it('reads the `lambda` body the alert function publishes (contract with functions/core/render.ts)', () => {
    const outbound = renderNotification(
      {
        audienceId: 'markets',
        article: {
          key: 'id:1',
          id: '1',
          title: '한국은행, 기준금리 동결',
          summary: '금통위는 기준금리를 동결했다.',
          url: 'https://news.example.com/a',
          publishedAt: Date.UTC(2025, 2, 14, 0, 30),
          categories: ['002000000'],
          categoryNames: ['경제'],
          media: 'yna',
          mediaName: '연합뉴스',
          status: 'published',
        },
        rules: [
          { ruleId: 'rates', description: 'Rates', urgent: true, reasons: [{ kind: 'keyword', term: '기준금리' }] },
        ],
      },
      audience,
    );
    const document = JSON.parse(outbound.body) as Record<string, string>;
    const parsed = parseAlertMessage(document.lambda ?? document.default ?? '');
    expect(parsed).toMatchObject({
      deliveryId: 'markets|id:1',
      audienceId: 'markets',
      urgent: true,
      article: { title: '한국은행, 기준금리 동결', url: 'https://news.example.com/a', mediaName: '연합뉴스' },
      matches: [{ ruleId: 'rates', reasons: [{ kind: 'keyword', term: '기준금리' }] }],
    });
    expectWithinSlackLimits(renderSlackMessage(parsed));
  });

  it('refuses bodies that are not news-alerts documents, naming the problem', () => {
    expect(() => parseAlertMessage('not json')).toThrow(/not JSON/);
    expect(() => parseAlertMessage('{"default":"x"}')).toThrow(/no `newsAlerts` part/);
    expect(() => parseAlertMessage('{"newsAlerts":{"schemaVersion":1}}')).toThrow(/deliveryId/);
    const future = { newsAlerts: { ...alert(), schemaVersion: 2 } };
    expect(() => parseAlertMessage(JSON.stringify(future))).toThrow(/schemaVersion 2/);
  });
});
