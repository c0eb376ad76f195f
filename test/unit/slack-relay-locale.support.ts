/**
 * What the Slack locale tests check a message with: Slack's limits, the English fixed words of
 * both catalogs a Korean or Japanese message must not contain, and the entries a digest accounts
 * for ("…and N more" in the message's own language).
 */
import { expect } from 'vitest';
import type { ShippedLocale } from '#core/locale';
import { messagesFor } from '#core/messages/catalog';
import {
  type Block,
  HEADER_MAX,
  MAX_BLOCKS,
  SECTION_MAX,
  type SlackMessage,
} from '../../functions/slack-relay/blocks.ts';
import { SLACK_CATALOGS } from '../../functions/slack-relay/slack-messages.ts';

/** Every text of the blocks, in order. */
export const slackTexts = (blocks: readonly Block[]): string[] =>
  blocks.flatMap((block) => {
    if (block.type === 'header' || block.type === 'section') return [block.text.text];
    if (block.type === 'context') return block.elements.map((element) => element.text);
    return [];
  });

/** True when `value` contains no lone surrogate (a cut through an emoji or astral character). */
const wellFormed = (value: string): boolean =>
  !/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(value);

/** Slack's limits: header 150, section 3,000, 50 blocks, 10 context elements, no split character. */
export function expectWithinSlackLimits(message: SlackMessage): void {
  expect(message.text.length).toBeGreaterThan(0);
  expect(message.text.length).toBeLessThanOrEqual(SECTION_MAX);
  expect(message.blocks.length).toBeLessThanOrEqual(MAX_BLOCKS);
  for (const block of message.blocks) {
    if (block.type === 'header') expect(block.text.text.length).toBeLessThanOrEqual(HEADER_MAX);
    if (block.type === 'section') expect(block.text.text.length).toBeLessThanOrEqual(SECTION_MAX);
    if (block.type === 'context') expect(block.elements.length).toBeLessThanOrEqual(10);
  }
  for (const text of [message.text, ...slackTexts(message.blocks)]) expect(wellFormed(text)).toBe(true);
}

const ASCII_WORD = /[A-Za-z]+/g;

/**
 * Calls every entry of a catalog with arguments of each shape its entries take, and collects the
 * text: a function that refuses one shape (a list where it wants a number) is tried with the next.
 */
function catalogTexts(value: unknown, out: string[]): void {
  if (typeof value === 'string') out.push(value);
  else if (typeof value === 'function') {
    const shapes: unknown[][] = [
      ['', '', ''],
      [2, 3, 4, 5, 6],
      [1, 1, 1, 1, 1],
      [2, { start: '', end: '' }],
      [2, ['']],
      ['', false, ''],
      ['', true, ''],
      ['', '', true],
      ['', [''], 2],
    ];
    for (const shape of shapes) {
      try {
        const result: unknown = (value as (...args: unknown[]) => unknown)(...shape);
        if (typeof result === 'string') out.push(result);
      } catch {
        // The entry takes another shape of arguments.
      }
    }
  } else if (typeof value === 'object' && value !== null) {
    for (const member of Object.values(value)) catalogTexts(member, out);
  }
}

/** The English words of both catalogs a Slack message draws from (`NaN` is a wrong-shape call). */
const ENGLISH_WORDS: ReadonlySet<string> = (() => {
  const texts: string[] = [];
  const { count, language: _language, ...words } = messagesFor('en');
  catalogTexts(words, texts);
  catalogTexts(SLACK_CATALOGS.en(count), texts);
  const found = new Set<string>();
  for (const text of texts) {
    for (const [word] of text.replace(/news-alerts/g, '').matchAll(ASCII_WORD)) found.add(word.toLowerCase());
  }
  found.delete('nan');
  return found;
})();

/**
 * The English fixed words in a message or text, after what is not wording is taken out: the
 * product name, link and date-token targets, bare links, mrkdwn entities and the data passed in `data`
 * (delivery ids hold provider keys such as `digest:` or `id:`).
 */
export function englishWordsIn(message: SlackMessage | string, data: readonly string[] = []): string[] {
  const texts = typeof message === 'string' ? [message] : [message.text, ...slackTexts(message.blocks)];
  const words = new Set<string>();
  for (let text of texts) {
    for (const value of data) text = text.split(value).join(' ');
    text = text
      .replace(/news-alerts/g, ' ')
      .replace(/<(?:!date\^|https?:)[^|>]*\|/g, '<')
      .replace(/https?:\/\/[^\s|>]+/g, ' ')
      .replace(/&(?:amp|lt|gt);/g, ' ');
    for (const [word] of text.matchAll(ASCII_WORD)) if (ENGLISH_WORDS.has(word.toLowerCase())) words.add(word);
  }
  return [...words];
}

const escapeRegExp = (value: string) => value.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * A pattern for a catalog sentence with numbers: `sample` rendered with the numbers in `probes`,
 * each formatted probe a capture group; the groups come back in the order of `probes`.
 */
function sentencePattern(sample: string, probes: readonly string[]): { pattern: RegExp; order: number[] } {
  const positions = probes.map((probe) => ({ probe, at: sample.indexOf(probe) })).sort((a, b) => a.at - b.at);
  let source = '';
  let from = 0;
  for (const { probe, at } of positions) {
    source += `${escapeRegExp(sample.slice(from, at))}([\\d.,\\s\\u00A0\\u202F]+?)`;
    from = at + probe.length;
  }
  source += escapeRegExp(sample.slice(from));
  return { pattern: new RegExp(source, 'g'), order: positions.map(({ probe }) => probes.indexOf(probe)) };
}

const digits = (value: string) => Number(value.replace(/\D/g, ''));

/**
 * The entries a digest message accounts for: each listed (`• `) plus each counted in a "…and N
 * more" line of the message's language (`language` words, counts formatted for `locale`).
 */
export function moreCountsIn(message: SlackMessage, language: ShippedLocale, locale: string): number {
  const { count } = messagesFor(language, locale);
  const words = SLACK_CATALOGS[language](count);
  const inCategory = sentencePattern(words.moreInCategory(111_111_111), [count(111_111_111)]);
  const inCategories = sentencePattern(words.moreInCategories(222_222_222, 333_333_333), [
    count(222_222_222),
    count(333_333_333),
  ]);
  let total = 0;
  for (const block of message.blocks) {
    if (block.type !== 'section') continue;
    const text = block.text.text;
    total += text.match(/^• /gm)?.length ?? 0;
    for (const match of text.matchAll(inCategory.pattern)) total += digits(match[1] ?? '');
    for (const match of text.matchAll(inCategories.pattern)) {
      // The articles are the first probe, wherever the language puts them.
      const articlesGroup = inCategories.order.indexOf(0) + 1;
      total += digits(match[articlesGroup] ?? '');
    }
  }
  return total;
}
