/**
 * The Slack relay renders digests from the structured body the alert function publishes: within
 * Slack's limits (50 blocks, 3,000 characters a section, 150 a header), every entry either shown
 * or counted in an "…and N more", markup from headlines escaped, emoji never split.
 */
import { describe, expect, it } from 'vitest';
import { planDigest, toHeldNotification } from '#core/digest';
import { type Article, AudienceSchema } from '#core/model';
import type { OutboundMessage } from '#core/ports';
import {
  type Block,
  HEADER_MAX,
  MAX_BLOCKS,
  renderSlackMessage,
  SECTION_MAX,
} from '../../functions/slack-relay/blocks.ts';
import { parseAlertMessage } from '../../functions/slack-relay/message.ts';

const audience = AudienceSchema.parse({
  audienceId: 'chips-team',
  name: 'Chips team 🇰🇷',
  topicArn: 'arn:aws:sns:us-east-1:123456789012:news-alerts-audience-chips-team',
  timeZone: 'Asia/Seoul',
  deliveryMode: 'digest',
});
const releaseAt = Date.parse('2026-11-23T00:00:00Z');

function digestOf(articles: Partial<Article>[]): OutboundMessage[] {
  const items = articles.map((fields, index) =>
    toHeldNotification(
      {
        audienceId: 'chips-team',
        article: {
          key: `id:${index}`,
          title: `Story ${index}`,
          summary: '',
          url: `https://news.example.com/${index}`,
          publishedAt: releaseAt - index * 60_000,
          categories: ['008001000'],
          categoryNames: ['Semiconductors'],
          mediaName: 'Example Tech Review',
          ...fields,
        },
        rules: [{ ruleId: 'chips', urgent: false, reasons: [{ kind: 'keyword', term: '반도체' }] }],
      },
      'digest',
      releaseAt - 3_600_000,
    ),
  );
  return [...planDigest(items, audience, releaseAt).messages];
}

/** What a Lambda subscriber receives: `default`, since a digest has no `lambda` key. */
const lambdaBody = (message: OutboundMessage) => (JSON.parse(message.body) as Record<string, string>).default ?? '';

const sectionTexts = (blocks: readonly Block[]) =>
  blocks.flatMap((block) => (block.type === 'section' ? [block.text.text] : []));

const wellFormed = (value: string) =>
  !/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(value);

describe('Slack digests', () => {
  it('parses the digest body of the real renderer and shows every entry with its link and rule', () => {
    const [message] = digestOf([
      { title: '삼성전자, 반도체 투자 확대 🚀👩🏽‍🚀' },
      { title: '<!channel> & <b>chips</b>', categories: ['008000000'], categoryNames: ['IT & Science'] },
    ]);
    const digest = parseAlertMessage(lambdaBody(message as OutboundMessage));
    expect(digest.kind).toBe('digest');
    expect(digest.deliveryId).toBe('chips-team|digest:2026-11-23T00:00:00.000Z');
    const slack = renderSlackMessage(digest);
    expect(slack.blocks[0]).toEqual({
      type: 'header',
      text: { type: 'plain_text', text: '📬 Chips team 🇰🇷: 2 articles', emoji: true },
    });
    const sections = sectionTexts(slack.blocks);
    // Groups of equal size come in category order: 008000000 before 008001000.
    expect(sections[1]).toBe(
      '*Semiconductors (008001000)* · 1\n• <https://news.example.com/0|삼성전자, 반도체 투자 확대 🚀👩🏽‍🚀>\n    Example Tech Review · <!date^1795392000^{date_short_pretty} {time}|2026-11-23T00:00:00.000Z> · _rule chips: keyword “반도체”_',
    );
    expect(sections[0]).toContain(
      '*IT &amp; Science (008000000)* · 1\n• <https://news.example.com/1|&lt;!channel&gt; &amp; &lt;b&gt;chips&lt;/b&gt;>',
    );
    expect(slack.text).toBe(
      '📬 Chips team 🇰🇷: 2 articles — &lt;!channel&gt; &amp; &lt;b&gt;chips&lt;/b&gt;; 삼성전자, 반도체 투자 확대 🚀👩🏽‍🚀',
    );
    expect(slack.blocks.at(-1)).toMatchObject({ type: 'context' });
  });

  it('stays within Slack limits for a huge digest and accounts for every entry', () => {
    const articles = Array.from({ length: 600 }, (_, index) => ({
      title: `${'반도체 '.repeat(30)}👨‍👩‍👧‍👦 ${index}`,
      categories: [`0${String(index % 70).padStart(2, '0')}000000`],
      categoryNames: [`Category ${index % 70}`],
    }));
    const messages = digestOf(articles);
    let accounted = 0;
    for (const message of messages) {
      const digest = parseAlertMessage(lambdaBody(message));
      const slack = renderSlackMessage(digest);
      expect(slack.blocks.length).toBeLessThanOrEqual(MAX_BLOCKS);
      expect(slack.text.length).toBeLessThanOrEqual(SECTION_MAX);
      for (const block of slack.blocks) {
        if (block.type === 'header') expect(block.text.text.length).toBeLessThanOrEqual(HEADER_MAX);
        if (block.type === 'section') expect(block.text.text.length).toBeLessThanOrEqual(SECTION_MAX);
        if (block.type === 'context') expect(block.elements.length).toBeLessThanOrEqual(10);
      }
      for (const text of [slack.text, ...sectionTexts(slack.blocks)]) expect(wellFormed(text)).toBe(true);
      const sections = sectionTexts(slack.blocks);
      const listed = sections.reduce((sum, text) => sum + (text.match(/^• /gm)?.length ?? 0), 0);
      const more = sections.reduce(
        (sum, text) =>
          sum +
          [...text.matchAll(/…and (\d+) more (?:in this category|articles?)/g)].reduce((n, m) => n + Number(m[1]), 0),
        0,
      );
      expect(listed + more).toBe(digest.kind === 'digest' ? digest.digest.count : 0);
      accounted += listed + more;
    }
    expect(accounted).toBe(600);
  });

  it('refuses a digest of another schema version', () => {
    const [message] = digestOf([{}]);
    const document = JSON.parse(lambdaBody(message as OutboundMessage)) as { newsAlerts: Record<string, unknown> };
    document.newsAlerts.schemaVersion = 2;
    expect(() => parseAlertMessage(JSON.stringify(document))).toThrow(/schemaVersion 2/);
    expect(() => parseAlertMessage('{"newsAlerts":{"schemaVersion":1,"kind":"digest"}}')).toThrow(
      /^the digest does not fit/,
    );
  });
});
