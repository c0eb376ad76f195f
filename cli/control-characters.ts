/**
 * Text attributes a person writes (an audience's name, a rule's description or keywords) must not
 * hold characters that act on a terminal or hide or reorder text (output.ts `hidesOrActs`, what a
 * web page shows escaped): controls but tab and line breaks, bidi embeddings, overrides and
 * isolates, zero-width spaces, lone surrogates. `audiences update --name` took
 * `Chips\x1b[31m team`, and every email subject of the audience then read `[Chips [31m team] …`.
 * Refused where a person writes them; a value already stored is kept (the run reads it as it
 * always did, and refusing it would stop every other edit of the item). The zero-width
 * (non-)joiners stay allowed: Persian and Indic text and emoji need them.
 */
import type { Item } from './items.ts';
import { hidesOrActs } from './output.ts';

/** One value that holds such a character: where it is in the item, and what to do. */
export interface ControlCharacterProblem {
  readonly path: readonly (string | number)[];
  readonly message: string;
}

/** `U+001B` for the first such character of `text`, with its place (1-based, in characters). */
function firstActing(text: string): string | undefined {
  const chars = Array.from(text);
  const at = chars.findIndex(hidesOrActs);
  if (at === -1) return undefined;
  const code = (chars[at] ?? '').codePointAt(0) ?? 0;
  return `U+${code.toString(16).toUpperCase().padStart(4, '0')} at character ${at + 1}`;
}

const stringsOf = (value: unknown): string[] =>
  typeof value === 'string'
    ? [value]
    : Array.isArray(value) || value instanceof Set
      ? [...value].filter((entry): entry is string => typeof entry === 'string')
      : [];

/**
 * The string values of `item` (top-level strings, and the strings of lists and sets) that hold a
 * control or bidi character and that `stored` does not hold already under the same attribute.
 */
export function newControlCharacterProblems(item: Item, stored: Item | undefined): ControlCharacterProblem[] {
  const problems: ControlCharacterProblem[] = [];
  for (const [name, value] of Object.entries(item)) {
    const kept = new Set(stringsOf(stored?.[name]));
    const listed = typeof value !== 'string';
    stringsOf(value).forEach((text, index) => {
      const found = firstActing(text);
      if (found === undefined || kept.has(text)) return;
      problems.push({
        path: listed ? [name, index] : [name],
        message: `${name}${listed ? `[${index}]` : ''} holds a control or text-direction character (${found}), which would reach subscribers' messages and ops' terminals; remove it`,
      });
    });
  }
  return problems;
}
