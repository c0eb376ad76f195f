/**
 * Work items (functions/core/work-items.ts), by example: grouping by audience, greedy filling to
 * the byte limit as the body is written, messages that alone do not fit, and the reader's refusals,
 * which say what is wrong without quoting the body.
 */
import { Buffer } from 'node:buffer';
import { describe, expect, it } from 'vitest';
import { PoisonWorkItemError } from '#core/errors';
import type { OutboundMessage, WorkItem } from '#core/ports';
import { workItemMaxBytes } from '#core/ports';
import { packWorkItems, parseWorkItem, workItemBody } from '#core/work-items';
import { legacyBody, refusedBySqs, splitBody } from './work-items.support.ts';

const t0 = Date.UTC(2025, 2, 14, 9, 0);
const topicArn = (audienceId: string) => `arn:aws:sns:ap-northeast-2:123456789012:news-${audienceId}`;

const message = (audienceId: string, n: number, bodyChars = 40): OutboundMessage => ({
  key: { audienceId, articleKey: `id:${n}` },
  topicArn: topicArn(audienceId),
  subject: `Article ${n}`,
  body: JSON.stringify({ default: `https://news.example.com/a/${n} ${'x'.repeat(bodyChars)}` }),
  ruleIds: ['rates'],
  facts: { status: '', titleHash: 'abc123', storyId: `s-${n}` },
});

const counter = () => {
  let next = 0;
  return () => `item-${++next}`;
};

const bytes = (item: WorkItem) => Buffer.byteLength(workItemBody(item), 'utf8');

describe('packWorkItems', () => {
  it('puts each audience in its own items, audiences and messages in the order they came', () => {
    const messages = [message('a', 1), message('b', 2), message('a', 3), message('b', 4), message('c', 5)];
    const { items, tooLarge } = packWorkItems('run-1', messages, { now: t0, newItemId: counter() });
    expect(tooLarge).toEqual([]);
    expect(items.map((item) => [item.audienceId, item.messages.map((m) => m.key.articleKey)])).toEqual([
      ['a', ['id:1', 'id:3']],
      ['b', ['id:2', 'id:4']],
      ['c', ['id:5']],
    ]);
    expect(items.map((item) => item.itemId)).toEqual(['item-1', 'item-2', 'item-3']);
    expect(items.every((item) => item.v === 2 && item.dispatchId === 'run-1' && item.queuedAt === t0)).toBe(true);
  });

  it('fills an item up to exactly maxBytes and starts the next one only when a message would not fit', () => {
    const messages = Array.from({ length: 7 }, (_, n) => message('a', n));
    const [whole] = packWorkItems('run-1', messages, { now: t0, newItemId: () => 'same-id' }).items;
    if (whole === undefined) throw new Error('no item');
    const exact = bytes(whole);

    const atLimit = packWorkItems('run-1', messages, { now: t0, newItemId: () => 'same-id', maxBytes: exact });
    expect(atLimit.items).toHaveLength(1);
    expect(bytes(atLimit.items[0] as WorkItem)).toBe(exact);

    const oneByteLess = packWorkItems('run-1', messages, { now: t0, newItemId: () => 'same-id', maxBytes: exact - 1 });
    expect(oneByteLess.items.map((item) => item.messages.length)).toEqual([6, 1]);
    expect(oneByteLess.items.every((item) => bytes(item) <= exact - 1)).toBe(true);
  });

  it('counts UTF-8 bytes of the body as written, not characters', () => {
    const korean = { ...message('a', 1), subject: '금리 인상 발표'.repeat(20) };
    const [item] = packWorkItems('run-1', [korean], { now: t0 }).items;
    if (item === undefined) throw new Error('no item');
    const body = workItemBody(item);
    expect(Buffer.byteLength(body, 'utf8')).toBeGreaterThan(body.length);
    const limit = Buffer.byteLength(body, 'utf8') - 1;
    const packed = packWorkItems('run-1', [korean], { now: t0, newItemId: () => item.itemId, maxBytes: limit });
    expect(packed.items).toEqual([]);
    expect(packed.tooLarge).toEqual([korean]);
  });

  it('reports a message that alone does not fit an item as too large, and packs the others', () => {
    const huge = message('a', 2, workItemMaxBytes);
    const messages = [message('a', 1), huge, message('a', 3)];
    const { items, tooLarge } = packWorkItems('run-1', messages, { now: t0 });
    expect(tooLarge).toEqual([huge]);
    expect(items.flatMap((item) => item.messages.map((m) => m.key.articleKey))).toEqual(['id:1', 'id:3']);
    expect(items).toHaveLength(1);
  });

  it('sets aside a message the reader would refuse, so it cannot make its whole item poison', () => {
    const overlong = { ...message('a', 2), subject: 's'.repeat(1_025) };
    const badArn = { ...message('a', 3), topicArn: 'https://example.com/not-a-topic' };
    const { items, tooLarge } = packWorkItems('run-1', [message('a', 1), overlong, badArn, message('a', 4)], {
      now: t0,
    });
    expect(tooLarge).toEqual([overlong, badArn]);
    expect(items.flatMap((item) => item.messages.map((m) => m.key.articleKey))).toEqual(['id:1', 'id:4']);
    expect(items.every((item) => parseWorkItem(workItemBody(item)))).toBe(true);
  });

  it('gives items random UUIDs by default', () => {
    const { items } = packWorkItems('run-1', [message('a', 1), message('b', 2)], { now: t0 });
    for (const item of items)
      expect(item.itemId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(new Set(items.map((item) => item.itemId)).size).toBe(2);
  });

  it('carries only the attributes a work item has, so an extra one never makes the item poison', () => {
    const extra = { ...message('a', 1), rendered: { locale: 'ko-KR' }, facts: { titleHash: 'h', other: 1 } };
    const [item] = packWorkItems('run-1', [extra as OutboundMessage], { now: t0 }).items;
    if (item === undefined) throw new Error('no item');
    expect(parseWorkItem(workItemBody(item))).toEqual(item);
    expect(item.messages[0]).toEqual({ ...message('a', 1), facts: { titleHash: 'h' } });
  });
});

describe('workItemBody', () => {
  it('escapes U+FFFE and U+FFFF, which SQS refuses raw, and reads them back unchanged', () => {
    const odd = { ...message('a', 1), subject: 'odd \uFFFF and \uFFFE, lone \uD800, bell \u0007' };
    const [item] = packWorkItems('run-1', [odd], { now: t0 }).items;
    if (item === undefined) throw new Error('no item');
    const body = workItemBody(item);
    expect(refusedBySqs(body)).toEqual([]);
    expect(body).toContain('\\uffff');
    expect(parseWorkItem(body).messages[0]?.subject).toBe(odd.subject);
  });
});

describe('parseWorkItem', () => {
  const secretUrl = 'https://hooks.example.com/services/T000/B000/SECRETSECRET';
  /** A packed item's head (parsed) and the bodies after it. */
  const valid = (): { head: Record<string, unknown>; tail: string } => {
    const [item] = packWorkItems('run-1', [message('a', 1)], { now: t0, newItemId: () => 'item-1' }).items;
    return splitBody(workItemBody(item as WorkItem));
  };
  const withHead = (head: Record<string, unknown>, tail = valid().tail) => `${JSON.stringify(head)}\n${tail}`;
  const refusal = (body: string): PoisonWorkItemError => {
    try {
      parseWorkItem(body);
    } catch (error) {
      expect(error).toBeInstanceOf(PoisonWorkItemError);
      expect((error as Error).message).not.toContain('SECRETSECRET');
      return error as PoisonWorkItemError;
    }
    throw new Error('parseWorkItem accepted the body');
  };

  it('refuses text that is not JSON without quoting it', () => {
    const error = refusal(`{"v":1, ${secretUrl}`);
    expect(error.message).toBe('the work item is not JSON');
    expect(error.cause).toBeUndefined();
  });

  it('refuses a version it does not know', () => {
    expect(refusal(withHead({ ...valid().head, v: 3 })).message).toContain('v must be 2');
    expect(refusal(JSON.stringify({ ...valid().head, v: 1 })).message).toContain('messages[0]');
  });

  it("refuses a message for another audience than the item's", () => {
    const item = valid().head;
    const messages = item.messages as { key: { audienceId: string } }[];
    (messages[0] as { key: { audienceId: string } }).key.audienceId = 'b';
    expect(refusal(withHead(item)).message).toContain("every message must be for the item's audience");
  });

  it('names the attribute that is wrong, and counts unknown attributes without naming them', () => {
    const item = valid().head;
    const messages = item.messages as Record<string, unknown>[];
    (messages[0] as Record<string, unknown>).topicArn = secretUrl;
    item[secretUrl] = true;
    const { message } = refusal(withHead(item));
    expect(message).toContain('messages[0].topicArn: topicArn must be an SNS topic ARN');
    expect(message).toContain('1 unknown attribute(s)');
  });

  it('refuses an empty item, and one larger than SQS allows', () => {
    expect(refusal(withHead({ ...valid().head, messages: [] }, '')).message).toContain(
      'messages must hold at least one message',
    );
    expect(refusal(`"${'x'.repeat(workItemMaxBytes)}"`).message).toContain('more than the 262144 SQS allows');
  });

  it('lists the first five problems of a badly broken item and counts the rest', () => {
    const item = valid().head;
    const one = (item.messages as unknown[])[0];
    item.messages = Array.from({ length: 9 }, () => ({ ...(one as object), subject: 7 }));
    expect(refusal(withHead(item)).message).toMatch(/messages\[4\]\.subject: .*; and 4 more$/);
  });

  it('refuses bodies that do not add up to the lengths the head gives, without quoting them', () => {
    const { head, tail } = valid();
    expect(refusal(withHead(head, tail.slice(0, -1))).message).toContain('messages[0]: its body is cut short');
    expect(refusal(withHead(head, `${tail}${secretUrl}`)).message).toContain(
      `holds ${secretUrl.length} characters after its last body`,
    );
    expect(refusal(JSON.stringify(head)).message).toContain('no bodies after its head');
    const json = structuredClone(head);
    (json.messages as Record<string, unknown>[])[0] = { ...(head.messages as object[])[0], bodyJson: true };
    expect(refusal(withHead(json)).message).toContain('messages[0]: its body is not a JSON string');
  });

  it('reads a version-1 item (the whole item one JSON document), queued before the update', () => {
    const [item] = packWorkItems('run-1', [message('a', 1), message('a', 2)], { now: t0 }).items;
    if (item === undefined) throw new Error('no item');
    expect(parseWorkItem(legacyBody(item))).toEqual({ ...item, v: 1 });
    const damaged = JSON.parse(legacyBody(item)) as { messages: { body: unknown }[] };
    (damaged.messages[1] as { body: unknown }).body = 7;
    expect(refusal(JSON.stringify(damaged)).message).toContain('messages[1].body');
  });

  it('carries a rendered body as it is, not escaped inside the head', () => {
    // An SNS message as the renderer writes it: JSON, with a JSON document for the HTTPS channel.
    const document = { title: 'Rates "held"', link: 'https://news.example.com/a/1', rules: ['rates'] };
    const rendered = {
      ...message('a', 1),
      body: JSON.stringify({
        default: 'Rates "held"',
        email: 'Rates "held"\n\nhttps://news.example.com/a/1',
        https: JSON.stringify(document),
      }),
    };
    const [item] = packWorkItems('run-1', [rendered], { now: t0 }).items;
    if (item === undefined) throw new Error('no item');
    const body = workItemBody(item);
    expect(body.endsWith(rendered.body)).toBe(true);
    expect(Buffer.byteLength(body)).toBeLessThan(Buffer.byteLength(legacyBody(item)));
  });
});
