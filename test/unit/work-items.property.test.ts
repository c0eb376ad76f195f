/**
 * Work items (functions/core/work-items.ts) under hostile text: subjects, bodies, article keys and
 * ledger facts made of any UTF-16 (CJK, emoji, controls, lone surrogates, U+FFFE/U+FFFF).
 *
 * - packing: every message lands in exactly one item or in `tooLarge`; items hold one audience,
 *   in order; every body is within the limit and holds only characters SQS accepts; no item could
 *   have taken the next item's first message (greedy); what went to `tooLarge` fits no item;
 * - reading back: parse(body(item)) equals the item;
 * - any other text is refused with PoisonWorkItemError, never another error, and the refusal
 *   never quotes a value from the body.
 */
import { Buffer } from 'node:buffer';
import { deflateRawSync, deflateSync } from 'node:zlib';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { PoisonWorkItemError } from '#core/errors';
import type { OutboundMessage, WorkItem } from '#core/ports';
import { packWorkItems, parseWorkItem, workItemBody, workItemMessageBody } from '#core/work-items';
import { legacyBody, refusedBySqs, splitBody } from './work-items.support.ts';

const t0 = Date.UTC(2025, 2, 14, 9, 0);

/** Text of every kind the provider or a template could put in a message. */
const hostileText = (maxLength: number) =>
  fc.oneof(
    fc.string({ unit: 'binary', maxLength }),
    fc.string({ unit: 'grapheme', maxLength }),
    fc.string({ maxLength }),
    fc.constantFrom(
      '금리 인상',
      '日本銀行の利上げ',
      '🚀📈👩‍👩‍👧',
      '\uD800',
      '\uDFFF x',
      '\uFFFF\uFFFE',
      '"\\\u0000\n',
      '',
    ),
  );

const audienceId = fc.constantFrom('a', 'b', 'team.markets', 'x'.repeat(128));

const outbound = fc.record({
  audienceId,
  articleKey: hostileText(60),
  // Now and then longer than the format allows (1,024 characters): it must not poison its item.
  subject: fc.oneof(
    { arbitrary: hostileText(60), weight: 9 },
    { arbitrary: fc.string({ minLength: 1_025, maxLength: 1_030 }), weight: 1 },
  ),
  body: hostileText(400),
  ruleIds: fc.array(fc.constantFrom('rates', 'fx:krw', 'r-1'), { maxLength: 3 }),
  facts: fc.option(
    fc.record(
      { storyId: hostileText(20), status: hostileText(20), titleHash: fc.string({ maxLength: 12 }) },
      {
        requiredKeys: [],
      },
    ),
    { nil: undefined },
  ),
});

/** Messages with unique article keys (`<n>:` + hostile text), so each can be told apart. */
const messageList = fc.array(outbound, { maxLength: 40 }).map((list) =>
  list.map(
    (m, n): OutboundMessage => ({
      key: { audienceId: m.audienceId, articleKey: `${n}:${m.articleKey}` },
      topicArn: `arn:aws:sns:us-east-1:123456789012:news-${m.audienceId.length}`,
      subject: m.subject,
      body: m.body,
      ruleIds: m.ruleIds,
      ...(m.facts === undefined ? {} : { facts: m.facts }),
    }),
  ),
);

const bytesOf = (item: WorkItem) => Buffer.byteLength(workItemBody(item), 'utf8');

describe('packWorkItems and parseWorkItem (property)', () => {
  it('place every message exactly once, within the limit, greedily, and read back as packed', () => {
    fc.assert(
      fc.property(messageList, fc.integer({ min: 300, max: 6_000 }), (messages, maxBytes) => {
        const { items, tooLarge } = packWorkItems('run-1', messages, { now: t0, maxBytes });

        const placed = [...items.flatMap((item) => item.messages), ...tooLarge].map((m) => m.key.articleKey);
        expect(placed.sort()).toEqual(messages.map((m) => m.key.articleKey).sort());

        for (const item of items) {
          const body = workItemBody(item);
          expect(Buffer.byteLength(body, 'utf8')).toBeLessThanOrEqual(maxBytes);
          expect(refusedBySqs(body)).toEqual([]);
          expect(item.messages.length).toBeGreaterThan(0);
          expect(item.messages.every((m) => m.key.audienceId === item.audienceId)).toBe(true);
          expect(parseWorkItem(body)).toEqual(item);
          // The body packing assembled is the one a copy of the item serializes to.
          expect(workItemBody(structuredClone(item))).toBe(body);
          // What SQS receives: never larger than the packed body, SQS-safe, read back the same.
          const sent = workItemMessageBody(item);
          expect(Buffer.byteLength(sent, 'utf8')).toBeLessThanOrEqual(Buffer.byteLength(body, 'utf8'));
          expect(refusedBySqs(sent)).toEqual([]);
          expect(parseWorkItem(sent)).toEqual(item);
          // Chosen the same way when the packed size must be counted again (an item not packed here).
          expect(workItemMessageBody(structuredClone(item))).toBe(sent);
        }

        // Order kept per audience, and each item as full as the next message allows.
        for (const audience of new Set(messages.map((m) => m.key.audienceId))) {
          const mine = items.filter((item) => item.audienceId === audience);
          const sent = mine.flatMap((item) => item.messages.map((m) => m.key.articleKey));
          const expected = messages.filter((m) => m.key.audienceId === audience && !tooLarge.includes(m));
          expect(sent).toEqual(expected.map((m) => m.key.articleKey));
          for (let i = 0; i + 1 < mine.length; i++) {
            const current = mine[i] as WorkItem;
            const next = (mine[i + 1] as WorkItem).messages[0] as OutboundMessage;
            expect(bytesOf({ ...current, messages: [...current.messages, next] })).toBeGreaterThan(maxBytes);
          }
        }
        for (const alone of tooLarge) {
          const single = {
            v: 1,
            dispatchId: 'run-1',
            itemId: '00000000-0000-4000-8000-000000000000', // as long as a random UUID
            audienceId: alone.key.audienceId,
            queuedAt: t0,
          } as const;
          const item: WorkItem = { ...single, messages: [alone] };
          const refused = (() => {
            try {
              parseWorkItem(workItemBody(item));
              return false;
            } catch (error) {
              return error instanceof PoisonWorkItemError;
            }
          })();
          expect(refused || bytesOf(item) > maxBytes).toBe(true);
        }
      }),
      { numRuns: 200 },
    );
  });
});

describe('parseWorkItem on hostile bodies (property)', () => {
  const secret = 'https://hooks.example.com/services/SECRETSECRET';

  /** Runs the reader; anything but an item or a PoisonWorkItemError fails the property. */
  const read = (body: string): WorkItem | PoisonWorkItemError => {
    try {
      return parseWorkItem(body);
    } catch (error) {
      if (!(error instanceof PoisonWorkItemError)) throw error;
      expect(error.message).not.toContain('SECRETSECRET');
      // A cause (zlib's, for a compressed body) is logged with it: it must not quote the body either.
      expect(String(error.cause ?? '')).not.toContain('SECRETSECRET');
      return error;
    }
  };

  /** The one item of audience `a` that messages with these bodies pack into (ids fixed). */
  const itemOf = (bodies: readonly string[], facts?: OutboundMessage['facts']): WorkItem => {
    const { items } = packWorkItems(
      'run-1',
      bodies.map((body, n) => ({
        key: { audienceId: 'a', articleKey: `id:${n + 1}` },
        topicArn: 'arn:aws:sns:us-east-1:123456789012:news-a',
        subject: 'Rates',
        body,
        ruleIds: ['rates'],
        ...(facts === undefined ? {} : { facts }),
      })),
      { now: t0, newItemId: () => 'item-1' },
    );
    expect(items).toHaveLength(1);
    return items[0] as WorkItem;
  };

  it('refuses arbitrary text and JSON with PoisonWorkItemError only', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string({ unit: 'binary', maxLength: 200 }),
          fc.json({ maxDepth: 4 }),
          fc.jsonValue({ maxDepth: 3 }).map((value) => JSON.stringify({ v: 1, [secret]: value })),
        ),
        (body) => {
          expect(read(body)).toBeInstanceOf(PoisonWorkItemError);
        },
      ),
      { numRuns: 500 },
    );
  });

  it('accepts a damaged item only if it is still a valid one, and never quotes what was damaged', () => {
    const item = itemOf([JSON.stringify({ default: secret })], { status: '', titleHash: 'h' });
    const { head: valid, tail } = splitBody(workItemBody(item));
    const paths = [
      ['v'],
      ['dispatchId'],
      ['itemId'],
      ['audienceId'],
      ['queuedAt'],
      ['messages'],
      ['messages', 0],
      ['messages', 0, 'key'],
      ['messages', 0, 'key', 'audienceId'],
      ['messages', 0, 'key', 'articleKey'],
      ['messages', 0, 'topicArn'],
      ['messages', 0, 'subject'],
      ['messages', 0, 'bodyChars'],
      ['messages', 0, 'bodyJson'],
      ['messages', 0, 'ruleIds'],
      ['messages', 0, 'facts'],
      ['messages', 0, 'facts', 'status'],
    ] as const;
    const damage = fc.oneof(
      fc.jsonValue({ maxDepth: 2 }),
      fc.constant(`${secret}/${'x'.repeat(300)}`),
      fc.constant(undefined),
      fc.string({ unit: 'binary', maxLength: 30 }).map((s) => `${s}SECRETSECRET`),
    );
    fc.assert(
      fc.property(fc.constantFrom(...paths), damage, (path, value) => {
        const copy = structuredClone(valid);
        let target: Record<string | number, unknown> = copy;
        for (const part of path.slice(0, -1)) target = target[part] as Record<string | number, unknown>;
        target[path[path.length - 1] as string | number] = value;
        const outcome = read(`${JSON.stringify(copy)}\n${tail}`);
        if (!(outcome instanceof PoisonWorkItemError)) {
          expect(outcome.messages.every((m) => m.key.audienceId === outcome.audienceId)).toBe(true);
          expect(outcome.v).toBe(2);
        }
      }),
      { numRuns: 500 },
    );
  });

  it('accepts damaged bodies after the head only if each still has its declared length, never quoting them', () => {
    const body = workItemBody(itemOf(['one', 'two'].map((n) => JSON.stringify({ default: `${secret} ${n}` }))));
    const start = body.indexOf('\n') + 1;
    fc.assert(
      fc.property(
        fc.integer({ min: start, max: body.length }),
        fc.integer({ min: 0, max: 40 }),
        fc.string({ unit: 'binary', maxLength: 40 }).map((s) => `${s}SECRETSECRET`),
        (at, cut, inserted) => {
          const damaged = `${body.slice(0, at)}${inserted}${body.slice(Math.min(body.length, at + cut))}`;
          const outcome = read(damaged);
          if (!(outcome instanceof PoisonWorkItemError)) {
            // Same lengths: the bodies read are the damaged text, cut where the head says.
            expect(damaged.length).toBe(body.length);
            expect(outcome.messages.map((m) => m.body).join('')).toBe(damaged.slice(start));
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it('refuses damaged compressed bodies with PoisonWorkItemError only: what it reads is the item as packed', () => {
    const item = itemOf(
      ['one', 'two', 'three'].map((n) => JSON.stringify({ default: `${secret} ${n} ${'rates rise '.repeat(20)}` })),
    );
    const sent = workItemMessageBody(item);
    expect(sent.startsWith('v2.deflate:')).toBe(true);
    const base64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
    const start = 'v2.deflate:'.length;
    // Characters changed for others of the alphabet keep the body base64: only the checksum can
    // tell. Cuts and insertions of any text test the layers before it.
    const substituted = fc
      .array(fc.tuple(fc.integer({ min: start, max: sent.length - 1 }), fc.constantFrom(...base64)), {
        minLength: 1,
        maxLength: 3,
      })
      .map((changes) => {
        const chars = [...sent];
        for (const [at, char] of changes) chars[at] = char;
        return chars.join('');
      });
    const spliced = fc
      .tuple(
        fc.integer({ min: 0, max: sent.length }),
        fc.integer({ min: 0, max: 8 }),
        fc.string({ unit: 'binary', maxLength: 8 }),
      )
      .map(([at, cut, inserted]) => `${sent.slice(0, at)}${inserted}${sent.slice(Math.min(sent.length, at + cut))}`);
    fc.assert(
      fc.property(fc.oneof(substituted, spliced), (damaged) => {
        const outcome = read(damaged);
        if (!(outcome instanceof PoisonWorkItemError)) expect(outcome).toEqual(item);
      }),
      { numRuns: 2_000 },
    );
  });

  it('refuses compressed bodies that are not base64, not zlib, damaged, not UTF-8, too large inflated or not version 2', () => {
    const deflated = (bytes: Buffer | string) => `v2.deflate:${deflateSync(bytes).toString('base64')}`;
    const valid = workItemBody(itemOf([JSON.stringify({ default: secret })]));
    const zlib = deflateSync(valid);
    const flipped = (at: number) => {
      const copy = Buffer.from(zlib);
      copy[at] = (copy[at] ?? 0) ^ 0x01;
      return `v2.deflate:${copy.toString('base64')}`;
    };
    const cases: [string, RegExp][] = [
      ['v2.deflate:SECRETSECRET!', /not base64/],
      ['v2.deflate:U0VDUkVUU0VDUkVU', /is damaged/],
      // A bomb: 2 MiB of one character inflates past the 256 KiB a body can be.
      [deflated(Buffer.alloc(2 * 1024 * 1024, 0x20)), /inflates past the 262144 bytes a work item can be/],
      // The last byte is the checksum's; cut short, the stream has no end.
      [flipped(zlib.length - 1), /is damaged/],
      [`v2.deflate:${zlib.subarray(0, zlib.length - 3).toString('base64')}`, /is damaged/],
      [deflated(Buffer.from([0x7b, 0xff, 0xfe, 0x7d])), /not inflate to UTF-8/],
      [deflated(`\uFEFF${valid}`), /version-2 item/],
      [deflated(JSON.stringify({ v: 1, SECRETSECRET: true })), /version-2 item/],
      [deflated(`v2.deflate:${Buffer.from(valid).toString('base64')}`), /version-2 item/],
      // DEFLATE without the zlib header and checksum, and a whole stream with bytes after it.
      [`v2.deflate:${deflateRawSync(valid).toString('base64')}`, /is damaged/],
      [
        `v2.deflate:${Buffer.concat([zlib, Buffer.from('SECRETSECRET')]).toString('base64')}`,
        /bytes after its compressed stream/,
      ],
    ];
    for (const [body, problem] of cases) {
      const outcome = read(body);
      expect(outcome).toBeInstanceOf(PoisonWorkItemError);
      expect((outcome as PoisonWorkItemError).message).toMatch(problem);
    }
    expect(read(deflated(valid))).not.toBeInstanceOf(PoisonWorkItemError);
  });

  it('reads every packed item again from its version-1 body (items queued before the update)', () => {
    fc.assert(
      fc.property(messageList, (messages) => {
        for (const item of packWorkItems('run-1', messages, { now: t0 }).items) {
          expect(parseWorkItem(legacyBody(item))).toEqual({ ...item, v: 1 });
        }
      }),
      { numRuns: 100 },
    );
  });
});
