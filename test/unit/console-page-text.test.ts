/**
 * The console shows data the way the CLI prints it (cli/console/context.ts visibleText): a bidi
 * override, isolate or other control in a text node becomes its visible escape, so provider text
 * cannot reorder or hide what ops read, while tags (attribute values) and textareas keep every
 * character, so a form posts back exactly what is stored.
 */
import fc from 'fast-check';
import { html } from 'hono/html';
import { describe, expect, it } from 'vitest';
import { visibleText } from '../../cli/console/context.ts';

const reordering = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/u;

/** Text with the characters that reorder or hide text mixed in. */
const hostileText = fc
  .array(
    fc.oneof(
      fc.string({ maxLength: 8 }),
      fc.constantFrom(
        '\u202e',
        '\u202d',
        '\u2066',
        '\u2067',
        '\u2068',
        '\u2069',
        '\u200f',
        '\u061c',
        '\u0007',
        '\ufeff',
      ),
      fc.constantFrom('<', '>', '&', '"', "'", '\u200d', '👩\u200d💻', '한국어', 'gnp.exe'),
    ),
    { maxLength: 12 },
  )
  .map((parts) => parts.join(''));

describe('the console page text', () => {
  it('shows U+202E as \\u202e in text, as the CLI prints it', async () => {
    const page = visibleText(String(await html`<p>Earthquake warning ${'\u202egnp.exe'} for markets</p>`));
    expect(page).toBe('<p>Earthquake warning \\u202egnp.exe for markets</p>');
  });

  it('leaves no character that reorders text in any text node, and changes no tag or textarea', async () => {
    await fc.assert(
      fc.asyncProperty(hostileText, hostileText, async (shown, kept) => {
        const markup = String(
          await html`<td>${shown}</td><input type="text" name="d" value="${kept}"><textarea name="n">${kept}</textarea>`,
        );
        const page = visibleText(markup);
        const textNodes = page.replace(/<textarea[^>]*>[^<]*<\/textarea>/g, '').split(/<[^>]*>/);
        for (const text of textNodes) expect(reordering.test(text)).toBe(false);
        const tags = (markup.match(/<[^>]*>/g) ?? []).join('');
        expect((page.match(/<[^>]*>/g) ?? []).join('')).toBe(tags);
        expect(/<textarea[^>]*>([^<]*)<\/textarea>/.exec(page)?.[1]).toBe(
          /<textarea[^>]*>([^<]*)<\/textarea>/.exec(markup)?.[1],
        );
      }),
    );
  });

  it('keeps emoji joiners and the text of every script as it is', async () => {
    const text = '👩\u200d💻 개발자 · プログラマー · مبرمج';
    expect(visibleText(String(await html`<p>${text}</p>`))).toBe(`<p>${text}</p>`);
  });
});
