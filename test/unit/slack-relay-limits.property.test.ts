/**
 * Every Slack message the relay renders is one Slack accepts and a reader can use, whatever the
 * document holds: hostile digest entries and alerts (links up to and past the 2,048-character
 * publishing limit, links full of `|`, `<` and `>`, empty, blank and invisible strings, huge
 * headlines, many entries and categories).
 *
 * The limits are Slack's, written here from its Block Kit reference rather than taken from the
 * renderer: a text object holds 1 to 3,000 characters, a header's plain text at most 150, a
 * context block 1 to 10 elements, a message at most 50 blocks. An element whose text is empty,
 * blank or invisible makes Slack refuse the whole message (`invalid_blocks`). Besides: an address
 * is never shown cut (Slack would link the cut text to a broken page), and every listed digest
 * entry shows its headline.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type Block, linkTarget, renderSlackMessage, type SlackMessage } from '../../functions/slack-relay/blocks.ts';
import { parseAlertMessage } from '../../functions/slack-relay/message.ts';

const SLACK_TEXT_MAX = 3000;
const SLACK_HEADER_MAX = 150;
const SLACK_CONTEXT_ELEMENTS_MAX = 10;
const SLACK_BLOCKS_MAX = 50;

/** Something a reader sees: not whitespace, not a control, not a default-ignorable (zero-width) code point. */
const VISIBLE = /[^\s\p{Cc}\p{Default_Ignorable_Code_Point}]/u;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Every text object of the blocks, with where it is. */
function textObjects(blocks: readonly Block[]): { where: string; text: string; max: number }[] {
  return blocks.flatMap((block, index) => {
    if (block.type === 'header')
      return [{ where: `block ${index} (header)`, text: block.text.text, max: SLACK_HEADER_MAX }];
    if (block.type === 'section')
      return [{ where: `block ${index} (section)`, text: block.text.text, max: SLACK_TEXT_MAX }];
    if (block.type === 'context') {
      return block.elements.map((element, at) => ({
        where: `block ${index} (context element ${at})`,
        text: element.text,
        max: SLACK_TEXT_MAX,
      }));
    }
    return [];
  });
}

/**
 * Every way `message` breaks Slack's rules or the reader's: empty or invisible texts, texts over
 * their limit, context blocks without elements or with too many, too many blocks, split
 * characters, and any web address that is not one of `targets` whole (a cut link).
 */
function slackProblems(message: SlackMessage, targets: ReadonlySet<string>): string[] {
  const problems: string[] = [];
  if (message.blocks.length > SLACK_BLOCKS_MAX) problems.push(`${message.blocks.length} blocks`);
  for (const [index, block] of message.blocks.entries()) {
    if (block.type !== 'context') continue;
    if (block.elements.length === 0) problems.push(`block ${index}: a context block without elements`);
    if (block.elements.length > SLACK_CONTEXT_ELEMENTS_MAX) {
      problems.push(`block ${index}: ${block.elements.length} context elements`);
    }
  }
  const texts = [...textObjects(message.blocks), { where: 'fallback text', text: message.text, max: SLACK_TEXT_MAX }];
  for (const { where, text, max } of texts) {
    if (!VISIBLE.test(text)) problems.push(`${where}: no visible text (${JSON.stringify(text)})`);
    if (text.length > max) problems.push(`${where}: ${text.length} characters, over ${max}`);
    if (LONE_SURROGATE.test(text)) problems.push(`${where}: a character cut in half`);
    for (const found of text.matchAll(/https?:\/\/[^\s|>]*/g)) {
      if (!targets.has(found[0])) problems.push(`${where}: a cut or unknown address ${found[0].slice(0, 60)}…`);
    }
  }
  return problems;
}

// --- Hostile documents -----------------------------------------------------------------------------

/** Strings Slack refuses as an element's text, or that a renderer can turn into one. */
const blank = fc.constantFrom('', ' ', '  \n\t ', '\u200b', '\u2060\ufeff', '\u200b \u200b', '\u00ad');

/**
 * Text of a headline or name: words, Slack markup characters, Hangul, emoji, invisible characters
 * (which rendering drops). No `:` and no `/`, so no web address can appear in it.
 */
const words = (maxLength: number) =>
  fc.string({
    unit: fc.oneof(
      { weight: 8, arbitrary: fc.constantFrom(...'abcdefghijklmnopqrstuvwxyz ABCXYZ0123456789'.split('')) },
      { weight: 2, arbitrary: fc.constantFrom('<', '>', '&', '|', '*', '_', '~', '`', '!', '@', '.') },
      { weight: 2, arbitrary: fc.constantFrom('반', '도', '체', '半', '導', 'é', '👍🏽', '👨‍👩‍👧', '🇰🇷') },
      { weight: 1, arbitrary: fc.constantFrom('\u200b', '\u2060', '\ufeff', '\n', '\t', '\u202e') },
    ),
    maxLength,
  });

const text = (maxLength: number) =>
  fc.oneof({ weight: 1, arbitrary: blank }, { weight: 4, arbitrary: words(maxLength) });

/** Headlines: short, blank, or far longer than a section. */
const title = fc.oneof(
  { weight: 4, arbitrary: words(80) },
  { weight: 1, arbitrary: blank },
  { weight: 1, arbitrary: words(4000) },
);

/**
 * Article links: ordinary ones, long ones around the 2,048-character publishing limit, ones whose
 * Slack form grows (`|`, `<`, `>` are percent-encoded in a link), and ones that are withheld.
 */
const url = fc.oneof(
  { weight: 3, arbitrary: fc.nat({ max: 999 }).map((n) => `https://news.example.com/a/${n}`) },
  {
    weight: 3,
    arbitrary: fc.integer({ min: 400, max: 2100 }).map((n) => `https://news.example.com/${'a'.repeat(n)}`),
  },
  {
    weight: 1,
    arbitrary: fc
      .tuple(fc.integer({ min: 1, max: 1000 }), fc.constantFrom('|', '<', '>', '|<'))
      .map(([n, mark]) => `https://news.example.com/q?x=${mark.repeat(n)}`),
  },
  { weight: 1, arbitrary: fc.constantFrom('', ' ', '\u200b', 'javascript:alert(1)', 'https://127.0.0.1/admin') },
);

const timestamp = fc.oneof(
  fc.integer({ min: Date.UTC(2000, 0, 1), max: Date.UTC(2099, 11, 31) }).map((ms) => new Date(ms).toISOString()),
  blank,
  fc.constantFrom('yesterday', 'not a time <!channel>'),
);

const optional = (arbitrary: fc.Arbitrary<string>) => fc.option(arbitrary, { nil: null });

const match = fc.record({
  ruleId: text(40),
  description: optional(text(300)),
  urgent: fc.boolean(),
  reasons: fc.array(fc.record({ kind: fc.constantFrom('keyword', 'category', 'media'), term: text(60) }), {
    maxLength: 3,
  }),
  omittedReasons: fc.nat({ max: 20 }),
});

const digestEntry = fc.record({
  deliveryId: text(40),
  urgent: fc.boolean(),
  article: fc.record({
    title,
    url,
    publishedAt: timestamp,
    media: optional(text(40)),
    mediaName: optional(text(200)),
    status: optional(text(20)),
  }),
  matches: fc.array(match, { maxLength: 3 }),
  omittedMatches: fc.nat({ max: 5 }),
  alsoIn: fc.option(
    fc.record({ count: fc.integer({ min: 1, max: 40 }), outlets: fc.array(text(60), { maxLength: 5 }) }),
    { nil: undefined },
  ),
});

const digestDocument = fc
  .record({
    deliveryId: text(60).filter((value) => value !== ''),
    audienceId: text(30).filter((value) => value !== ''),
    audienceName: optional(text(200)),
    urgent: fc.boolean(),
    releaseAt: timestamp,
    holds: fc.array(text(400), { maxLength: 12 }),
    groups: fc.oneof(
      fc.array(fc.record({ label: text(200), entries: fc.array(digestEntry, { maxLength: 12 }) }), {
        minLength: 1,
        maxLength: 6,
      }),
      fc.array(fc.record({ label: text(60), entries: fc.array(digestEntry, { maxLength: 2 }) }), {
        minLength: 45,
        maxLength: 60,
      }),
    ),
  })
  .map((fields) => {
    const count = fields.groups.reduce((sum, group) => sum + group.entries.length, 0);
    return {
      schemaVersion: 1,
      kind: 'digest',
      deliveryId: fields.deliveryId,
      audienceId: fields.audienceId,
      audienceName: fields.audienceName,
      urgent: fields.urgent,
      digest: {
        releaseAt: fields.releaseAt,
        total: count,
        count,
        holds: fields.holds,
        groups: fields.groups.map((group) => ({ ...group, count: group.entries.length })),
      },
    };
  });

const alertDocument = fc.record({
  schemaVersion: fc.constant(1),
  deliveryId: text(60).filter((value) => value !== ''),
  audienceId: text(30).filter((value) => value !== ''),
  audienceName: optional(text(200)),
  urgent: fc.boolean(),
  article: fc.record({
    title,
    summary: fc.oneof(blank, words(5000)),
    url,
    publishedAt: timestamp,
    categories: fc.array(text(12), { maxLength: 4 }),
    categoryNames: fc.array(text(40), { maxLength: 4 }),
    media: optional(text(40)),
    mediaName: optional(text(200)),
    status: optional(text(20)),
  }),
  matches: fc.array(match, { maxLength: 12 }),
  omittedMatches: fc.nat({ max: 50 }),
  update: fc.option(
    fc.record({
      change: fc.constantFrom('status', 'title'),
      status: optional(text(20)),
      previousStatus: optional(text(20)),
    }),
    { nil: undefined },
  ),
});

const body = (newsAlerts: unknown) => JSON.stringify({ newsAlerts });

/** Slack's link form of each publishable address in the document: the only addresses a message may show. */
const targetsOf = (urls: readonly string[]) =>
  new Set(urls.map((value) => linkTarget(value)).filter((target): target is string => target !== undefined));

/** What rendering keeps of a headline: its visible characters, spaces collapsed. */
const visibleHeadline = (value: string) =>
  value
    .replace(/[\u200b\u2060\ufeff\u202e\u00ad]/g, '')
    .replace(/\s+/g, ' ')
    .trim();

const escapeMarkup = (value: string) => value.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** The first few characters of a headline as a listed entry must show them (escaped; `|` may be `∣` in a link label). */
function headlineStart(value: string): string {
  const visible = visibleHeadline(value);
  if (visible === '') return '(untitled article)';
  return escapeMarkup(
    [...new Intl.Segmenter('en', { granularity: 'grapheme' }).segment(visible)]
      .slice(0, 12)
      .map(({ segment }) => segment)
      .join('')
      .trimEnd(),
  );
}

/** The `• ` lines of each category section, in order (every section of a digest is a category's but the last "more" note). */
function listedHeadlines(message: SlackMessage): string[][] {
  return message.blocks
    .flatMap((block) => (block.type === 'section' ? [block.text.text] : []))
    .map((section) => section.split('\n').filter((line) => line.startsWith('• ')));
}

const settings = { numRuns: 150, interruptAfterTimeLimit: 60_000 };

describe('Slack messages under hostile documents', () => {
  it('a digest is always valid for Slack, never cuts a link, and every listed entry shows its headline', () => {
    fc.assert(
      fc.property(digestDocument, (document) => {
        const message = renderSlackMessage(parseAlertMessage(body(document)));
        const entries = document.digest.groups.flatMap((group) => group.entries);
        expect(slackProblems(message, targetsOf(entries.map((entry) => entry.article.url)))).toEqual([]);
        const listed = listedHeadlines(message);
        for (const [index, lines] of listed.entries()) {
          const group = document.digest.groups[index];
          if (group === undefined) break;
          for (const [at, line] of lines.entries()) {
            const entry = group.entries[at];
            expect(entry, `group ${index} lists more entries than it has`).toBeDefined();
            // Addresses in a link's label are shown defanged (`bank[.]example[.]com`): read back as written.
            const shown = line
              .replace(/\u2223/g, '|')
              .replaceAll('[.]', '.')
              .replaceAll('[:]', ':');
            expect(shown).toContain(headlineStart(entry?.article.title ?? ''));
          }
        }
      }),
      settings,
    );
  });

  it('an alert is always valid for Slack, never cuts a link, and shows its headline', () => {
    fc.assert(
      fc.property(alertDocument, (document) => {
        const message = renderSlackMessage(parseAlertMessage(body(document)));
        expect(slackProblems(message, targetsOf([document.article.url]))).toEqual([]);
        const header = message.blocks[0];
        expect(header?.type).toBe('header');
        if (header?.type === 'header') {
          const start = visibleHeadline(document.article.title).slice(0, 10).trimEnd();
          // The header is plain text: the headline unescaped (a lone surrogate half is never kept).
          expect(header.text.text).toContain(
            start === '' ? '(untitled article)' : start.replace(/[\uD800-\uDBFF]$/, ''),
          );
        }
      }),
      settings,
    );
  });
});

// --- The cases from issue 30, item 5 ------------------------------------------------------------------

const longLink = `https://news.example.com/${'a'.repeat(800)}`;

const digestWith = (entry: Record<string, unknown>, fields: { holds?: string[]; releaseAt?: string } = {}) =>
  parseAlertMessage(
    body({
      schemaVersion: 1,
      kind: 'digest',
      deliveryId: 'markets|digest:1',
      audienceId: 'markets',
      audienceName: 'Markets desk',
      digest: {
        releaseAt: fields.releaseAt ?? '2026-11-23T00:00:00.000Z',
        total: 1,
        count: 1,
        holds: fields.holds ?? [],
        groups: [{ label: 'Economy', count: 1, entries: [entry] }],
      },
    }),
  );

describe('Slack digest entries with long links and blank fields', () => {
  it('keeps the headline of an entry whose link is 825 characters, and links the whole address', () => {
    expect(longLink.length).toBe(825);
    const message = renderSlackMessage(
      digestWith({
        article: {
          title: 'Fed holds rates steady',
          url: longLink,
          publishedAt: '2026-11-22T23:00:00.000Z',
          mediaName: 'Wire',
        },
        matches: [{ ruleId: 'rates', reasons: [{ kind: 'keyword', term: 'rates' }] }],
      }),
    );
    const [line] = listedHeadlines(message).flat();
    expect(line).toBe(`• <${longLink}|Fed holds rates steady>`);
    expect(slackProblems(message, targetsOf([longLink]))).toEqual([]);
  });

  it('shows the headline without its link, with a note, when the whole link cannot fit; never a cut address', () => {
    const hugeLink = `https://news.example.com/q?x=${'|'.repeat(1000)}`;
    expect(linkTarget(hugeLink)?.length).toBeGreaterThan(3000);
    for (const link of [hugeLink, `https://news.example.com/${'b'.repeat(2000)}`]) {
      const message = renderSlackMessage(
        digestWith({
          article: { title: 'Fed holds rates steady', url: link, publishedAt: '2026-11-22T23:00:00.000Z' },
          matches: [{ ruleId: 'rates', reasons: [{ kind: 'keyword', term: 'rates' }] }],
        }),
      );
      const [line] = listedHeadlines(message).flat();
      expect(line).toBe('• Fed holds rates steady _(link too long to show in Slack)_');
      expect(slackProblems(message, targetsOf([link]))).toEqual([]);
    }
  });

  it('an alert whose whole link cannot fit keeps its headline and shows no cut address', () => {
    const hugeLink = `https://news.example.com/q?x=${'|'.repeat(1000)}`;
    const message = renderSlackMessage(
      parseAlertMessage(
        body({
          schemaVersion: 1,
          deliveryId: 'markets|id:1',
          audienceId: 'markets',
          article: { title: 'Fed holds rates steady', summary: 'Rates unchanged.', url: hugeLink, publishedAt: '' },
        }),
      ),
    );
    expect(slackProblems(message, targetsOf([hugeLink]))).toEqual([]);
    expect(message.blocks[0]).toMatchObject({ type: 'header', text: { text: '📰 Fed holds rates steady' } });
  });

  it('leaves out blank hold lines and an empty time instead of sending elements Slack refuses', () => {
    const message = renderSlackMessage(
      digestWith(
        { article: { title: 'Fed holds rates steady', url: 'https://news.example.com/fed', publishedAt: '' } },
        { holds: ['', ' ', '\u200b', 'Held for quiet hours'] },
      ),
    );
    expect(slackProblems(message, targetsOf(['https://news.example.com/fed']))).toEqual([]);
    const context = message.blocks[1];
    expect(context?.type === 'context' ? context.elements.map((element) => element.text) : []).toEqual([
      'Digest of <!date^1795392000^{date_short_pretty} {time}|2026-11-23T00:00:00.000Z>',
      'Held for quiet hours',
    ]);
    const blankRelease = renderSlackMessage(
      digestWith({ article: { title: 'x', url: '', publishedAt: '\u200b' } }, { holds: ['\u200b'], releaseAt: ' ' }),
    );
    expect(slackProblems(blankRelease, new Set())).toEqual([]);
  });

  it('an alert with an empty time and no outlet or category sends no empty context block', () => {
    const message = renderSlackMessage(
      parseAlertMessage(
        body({
          schemaVersion: 1,
          deliveryId: 'markets|id:1',
          audienceId: 'markets',
          article: { title: 'Fed holds rates steady', url: 'https://news.example.com/fed', publishedAt: '' },
        }),
      ),
    );
    expect(slackProblems(message, targetsOf(['https://news.example.com/fed']))).toEqual([]);
  });
});
