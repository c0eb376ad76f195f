/**
 * Probes of the message catalogs shared by the catalog tests (messages.test.ts) and the rendering
 * tests (messages-rendering.property.test.ts): every function of a catalog called with sample
 * arguments, and the English words those produce.
 */
import { type Messages, messagesFor } from '#core/messages/catalog';

/** Every leaf of a catalog by dotted path. */
export function leaves(value: unknown, path = ''): Map<string, unknown> {
  const out = new Map<string, unknown>();
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
    for (const [key, child] of Object.entries(value)) {
      for (const [leaf, leafValue] of leaves(child, path === '' ? key : `${path}.${key}`)) out.set(leaf, leafValue);
    }
  } else {
    out.set(path, value);
  }
  return out;
}

/**
 * Arguments each catalog function is called with (several sets where a branch depends on them).
 * Strings are data: they must come back in the wording as given.
 */
export const PROBES: Record<string, readonly (readonly unknown[])[]> = {
  count: [[1], [1000]],
  more: [[1], [3]],
  articles: [[1], [3]],
  status: [['PUBLISHED'], ['updated'], ['DELETED'], ['ESCALATED'], ['ÜBERARBEITET']],
  'reason.keyword': [['금리']],
  'reason.category': [['002*']],
  'reason.media': [['M001']],
  'reason.status': [['PUBLISHED']],
  'reason.other': [['sentiment', 'positive']],
  'email.rule': [
    ['rates-1', 'Interest rate decisions', false],
    ['rates-1', undefined, true],
  ],
  'email.matched': [['키워드 "x"']],
  'email.moreRules': [[1], [12]],
  'email.alertId': [['desk|id:42']],
  'digest.title': [
    ['경제팀', 1],
    ['경제팀', 12],
  ],
  'digest.partLine': [[2, 3, 41, 80, 120]],
  'digest.part': [[1, 2]],
  'digest.heldQuietHours': [
    [5, { start: '22:00', end: '07:00' }],
    [1, undefined],
  ],
  'digest.heldBudget': [
    [2, 20],
    [1, 1],
    [3, undefined],
  ],
  'digest.heldDigest': [[3, ['08:00', '18:00']]],
  'digest.groupHeading': [
    ['Economy (002000000)', 5, 5],
    ['Economy (002000000)', 5, 12],
  ],
  'digest.whyLine': [['rule x']],
  'digest.rule': [
    ['rates-1', true, 'keyword'],
    ['rates-1', false, ''],
  ],
  'digest.moreRules': [[1], [4]],
  'digest.digestId': [['desk|digest:2026-11-23T00:00:00.000Z']],
  'digest.smsIntro': [
    ['경제팀', 1, 1, 3],
    ['경제팀', 2, 3, 1],
  ],
  'digest.sms': [
    ['INTRO', ['첫 기사', '둘째 기사'], 2],
    ['INTRO', [], 0],
  ],
  'digest.chatTitle': [
    ['경제팀', 3, 1, 1],
    ['경제팀', 3, 1, 2],
  ],
  'digest.alsoIn': [
    [1, [], 1],
    [5, ['연합뉴스', '뉴시스', '共同通信'], 2],
    [2, ['연합뉴스', '共同通信'], 0],
  ],
  'update.statusChanged': [
    ['UPDATED', 'PUBLISHED'],
    [undefined, '게시됨'],
    ['수정됨', undefined],
  ],
  'digest.moreInDigest': [[7]],
  'reason.spike': [['custom-preset']],
  'spike.headline': [['반도체 보도']],
  'spike.expected': [[0.4], [1], [6.4], [1234.5]],
  'spike.observed': [
    [42, 'EXPECTED', '14:00'],
    [1, 'EXPECTED', '14:00'],
  ],
  'spike.lastBucket': [[30, 'EXPECTED', '15:00']],
  'spike.outlets': [[1], [18]],
  'spike.storyOutlets': [[1], [12]],
  'spike.outletStories': [
    ['Example Wire', 1],
    ['연합뉴스', 9],
  ],
  'spike.preset': [['custom-preset']],
  'spike.why': [['PRESET']],
  'spike.escalated': [[95, 'EXPECTED']],
  'spike.sms': [['반도체 보도', 42, 'EXPECTED', '14:00']],
  'digest.chatSummary': [['경제팀', '2026년 11월 23일', 3]],
};

/** Every text a catalog produces: its strings and each function called with every probe. */
export function wordings(messages: Messages): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const [path, value] of leaves(messages)) {
    if (typeof value === 'string') out.set(path, [value]);
    else if (typeof value === 'function') {
      const probes = PROBES[path] ?? [];
      out.set(
        path,
        probes.map((args) => String((value as (...args: unknown[]) => unknown)(...args))),
      );
    }
  }
  return out;
}

/**
 * Every word of two or more ASCII letters the English catalog produces (labels, sentences, default
 * templates), without template placeholders: what a Korean or Japanese rendering must not contain
 * outside its data.
 */
export function englishWords(): Set<string> {
  const words = new Set<string>();
  for (const texts of wordings(messagesFor('en')).values()) {
    for (const text of texts) {
      for (const word of text.replace(/\{[^{}]*\}/g, ' ').match(/[A-Za-z]{2,}/g) ?? []) words.add(word);
    }
  }
  return words;
}
