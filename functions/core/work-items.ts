/**
 * Work items on the publisher's queue (sharded publishing): how the alert run packs rendered
 * notifications into SQS message bodies, and how the publisher reads them back.
 *
 * What this module guarantees:
 * - packing loses and duplicates nothing: every message lands in exactly one item, or in
 *   `tooLarge` when it cannot travel in one (alone too large, or outside the format's bounds,
 *   which would make its whole item poison); each item holds one audience's messages in the order
 *   they came, and items are filled greedily, so an audience needs as few items as its messages'
 *   sizes allow;
 * - each item's body, exactly as {@link workItemBody} writes it and SQS counts it (UTF-8 bytes),
 *   is at most `maxBytes`, and holds only characters SQS accepts in a message body (JSON escapes
 *   the rest: controls, lone surrogates, U+FFFE/U+FFFF);
 * - {@link parseWorkItem} gives back exactly the item that was packed, and refuses anything else
 *   with a PoisonWorkItemError that says what is wrong without quoting the body (it holds
 *   subscriber-facing links): never another kind of error, whatever the bytes.
 *
 * The format (version 2) is a JSON head, a newline, and the messages' bodies one after the other:
 *
 *   {"v":2,"dispatchId":…,"itemId":…,"audienceId":…,"queuedAt":…,"messages":[{…,"bodyChars":N},…]}\n<body 1><body 2>…
 *
 * A message's body is an SNS message (JSON itself, MessageStructure json): written inside the JSON
 * head it would be escaped (every quote doubled as \") and unescaped again, which was most of what
 * sharded publishing cost in CPU over single mode and a fifth more bytes on SQS (issue 33). The head
 * gives each body's length in UTF-16 code units, so the reader slices the bodies without scanning
 * them. A body holding a character SQS refuses raw (a control, a lone surrogate, U+FFFE/U+FFFF:
 * rendered bodies never do, being JSON.stringify's output) travels as a JSON string instead,
 * `"bodyJson":true`. No JSON text holds a raw newline, so the first newline ends the head.
 * Version 1 (the whole item as one JSON document, bodies inside) is still read: items queued by
 * the code before this one are published after an update.
 *
 * On SQS a version-2 body travels compressed ({@link workItemMessageBody}): `v2.deflate:` and the
 * body's UTF-8 deflated (zlib format, RFC 1950: DEFLATE at level 1 with an Adler-32 checksum, so a
 * damaged body is refused rather than read as other text) in base64. Rendered notifications are
 * repetitive text (each carries its article in every channel's form, the chat document being JSON
 * inside JSON), so an item is about a fifth of its size: the SDK escapes, hashes (MD5) and sends,
 * and the Lambda runtime parses, that much less, which was most of what sharded publishing still
 * cost in CPU over single mode; a batch over 64 KiB, billed as a request per 64 KiB, shrinks too
 * (issue 33). An item that would not shrink travels as it is, so a message body is never larger
 * than the packed item.
 */
import { Buffer, isUtf8 } from 'node:buffer';
import { randomUUID } from 'node:crypto';
import { deflateSync, inflateSync } from 'node:zlib';
import * as z from 'zod/mini';
import { PoisonWorkItemError } from './errors.ts';
import { maxStoredStatusBytes } from './ledger-facts.ts';
import { AudienceSchema, RuleSchema } from './model.ts';
import { type OutboundMessage, type WorkItem, workItemMaxBytes } from './ports.ts';

/** The work item format this code writes; it also reads {@link legacyVersion}. */
const workItemVersion = 2;

/** The format before bodies moved out of the JSON head (still read). */
const legacyVersion = 1;

/**
 * Bounds of the strings an item carries. They are generous (the renderer's own limits are far
 * tighter) because an item refused here is poison and goes to the dead-letter queue: the bounds
 * only stop a damaged or forged body from making the publisher hold huge values.
 */
const limits = {
  /** Dispatch ids are run ids; item ids are UUIDs. */
  id: 256,
  /** `id:<provider id>`, `url:<link>` (links are at most 2,048), `update:…`, `story:…`, `digest:…`. */
  articleKey: 8_192,
  /** Subjects are rendered under 100 characters; replays may carry older renderings. */
  subject: 1_024,
  /** One SNS message; a body alone never exceeds it. */
  body: 262_144,
  ruleIds: 1_000,
  storyId: 256,
  titleHash: 128,
} as const;

const boundedString = (what: string, max: number) =>
  z.string({ error: `${what} must be a string` }).check(z.maxLength(max, `${what} must be at most ${max} characters`));

const nonEmptyString = (what: string, max: number) =>
  boundedString(what, max).check(z.minLength(1, `${what} must not be empty`));

const LedgerFactsSchema = z.strictObject({
  storyId: z.optional(boundedString('storyId', limits.storyId)),
  status: z.optional(boundedString('status', maxStoredStatusBytes)),
  titleHash: z.optional(boundedString('titleHash', limits.titleHash)),
});

const OutboundMessageSchema = z.strictObject({
  key: z.strictObject({
    articleKey: boundedString('articleKey', limits.articleKey),
    audienceId: AudienceSchema.shape.audienceId,
  }),
  topicArn: AudienceSchema.shape.topicArn,
  subject: boundedString('subject', limits.subject),
  body: boundedString('body', limits.body),
  ruleIds: z
    .array(RuleSchema.shape.ruleId, { error: 'ruleIds must be a list of rule ids' })
    .check(z.maxLength(limits.ruleIds, `ruleIds must hold at most ${limits.ruleIds} rule ids`)),
  facts: z.optional(LedgerFactsSchema),
});

/** The attributes of a message a version-2 head carries: all but the body, and the body's length. */
const MessageHeadSchema = z.strictObject({
  key: OutboundMessageSchema.shape.key,
  topicArn: OutboundMessageSchema.shape.topicArn,
  subject: OutboundMessageSchema.shape.subject,
  ruleIds: OutboundMessageSchema.shape.ruleIds,
  facts: OutboundMessageSchema.shape.facts,
  bodyChars: z.number({ error: 'bodyChars must be a number' }).check(
    z.int('bodyChars must be a whole number'),
    z.nonnegative('bodyChars must not be negative'),
    // A body is at most limits.body characters; as a JSON string at most six characters each.
    z.lte(limits.body * 6, `bodyChars must be at most ${limits.body * 6}`),
  ),
  bodyJson: z.optional(z.literal(true, { error: 'bodyJson must be true or absent' })),
});

const itemFields = {
  dispatchId: nonEmptyString('dispatchId', limits.id),
  itemId: nonEmptyString('itemId', limits.id),
  audienceId: AudienceSchema.shape.audienceId,
  queuedAt: z
    .number({ error: 'queuedAt must be a number' })
    .check(
      z.int('queuedAt must be a whole number of epoch milliseconds'),
      z.nonnegative('queuedAt must not be negative'),
    ),
};

/** Whether every message of an item is for the item's audience. */
const forItsAudience = (item: { audienceId: string; messages: readonly { key: { audienceId: string } }[] }) =>
  item.messages.every((message) => message.key.audienceId === item.audienceId);
const sameAudience = { error: "every message must be for the item's audience" } as const;

const LegacyWorkItemSchema = z
  .strictObject({
    v: z.literal(legacyVersion),
    ...itemFields,
    messages: z
      .array(OutboundMessageSchema, { error: 'messages must be a list' })
      .check(z.minLength(1, 'messages must hold at least one message')),
  })
  .check(z.refine(forItsAudience, sameAudience));

const WorkItemHeadSchema = z
  .strictObject({
    v: z.literal(workItemVersion, {
      error: `v must be ${workItemVersion} (the work item format this publisher reads)`,
    }),
    ...itemFields,
    messages: z
      .array(MessageHeadSchema, { error: 'messages must be a list' })
      .check(z.minLength(1, 'messages must hold at least one message')),
  })
  .check(z.refine(forItsAudience, sameAudience));

/**
 * The body of a work item, uncompressed (SQS receives {@link workItemMessageBody}): JSON with a
 * fixed key order, so its size is known before it is written ({@link packWorkItems} measures with
 * the same serialization, and keeps the bodies it assembled, so an item it packed is not serialized
 * a second time).
 */
export function workItemBody(item: WorkItem): string {
  const packed = packedBodies.get(item);
  if (packed !== undefined) return packed.body;
  const heads: string[] = [];
  const bodies: string[] = [];
  for (const message of item.messages) {
    const body = bodyText(message.body);
    heads.push(serialize(messageHead(message, body)));
    bodies.push(body.text);
  }
  return `${headPrefix(item.dispatchId, item.itemId, item.audienceId, item.queuedAt)}${heads.join(',')}]}\n${bodies.join('')}`;
}

/** What starts a compressed version-2 body; base64 has no `:`, and JSON text starts with `{`. */
const deflatedPrefix = 'v2.deflate:';

/**
 * DEFLATE level 1: of zlib's levels, the least CPU for text like this, and an eighth larger than
 * the default level's output (a 65 KB item of the bench: 9.0 KB against 8.0 KB; level 1 takes
 * half the default's time).
 */
const deflateLevel = 1;

/**
 * The SQS message body of a work item: its body ({@link workItemBody}) compressed, or as it is
 * when compressing would not make it smaller. Never more UTF-8 bytes than `workItemBody` gives, so
 * the packing's bound holds for what SQS receives; only characters SQS accepts (base64, or the
 * body itself).
 */
export function workItemMessageBody(item: WorkItem): string {
  // A packed item's size is known; counting the UTF-8 of every body again cost a tenth of the compression.
  const packed = packedBodies.get(item);
  const body = packed?.body ?? workItemBody(item);
  const bytes = packed?.bytes ?? utf8(body);
  const deflated = deflateSync(body, { level: deflateLevel });
  // Base64 writes 4 characters for every 3 bytes begun.
  return deflatedPrefix.length + 4 * Math.ceil(deflated.length / 3) < bytes
    ? `${deflatedPrefix}${deflated.toString('base64')}`
    : body;
}

/** The version-2 body inside a compressed message body, or a PoisonWorkItemError saying why not. */
function inflated(body: string): string {
  const base64 = body.slice(deflatedPrefix.length);
  const deflated = Buffer.from(base64, 'base64');
  // Buffer.from skips what is not base64: only the canonical encoding of the bytes is one (a
  // damaged body must not pass). A native re-encoding is many times cheaper than a regex scan.
  if (deflated.toString('base64') !== base64) throw new PoisonWorkItemError('the compressed work item is not base64');
  let inflatedBytes: { buffer: Buffer; engine: { bytesWritten: number } };
  try {
    // A packed body is at most workItemMaxBytes: more is a damaged or forged one (or a bomb). The
    // Adler-32 checksum refuses a damaged stream; `info` says how much of the input it took.
    inflatedBytes = inflateSync(deflated, { maxOutputLength: workItemMaxBytes, info: true }) as unknown as {
      buffer: Buffer;
      engine: { bytesWritten: number };
    };
  } catch (error) {
    // zlib's messages name the fault (`incorrect data check`), never the input: kept as the cause.
    throw new PoisonWorkItemError(
      (error as { code?: unknown }).code === 'ERR_BUFFER_TOO_LARGE'
        ? `the compressed work item inflates past the ${workItemMaxBytes} bytes a work item can be`
        : 'the compressed work item is damaged: its compressed stream or checksum is wrong',
      { cause: error },
    );
  }
  // zlib stops at the stream's end and ignores what follows: nothing may follow.
  if (inflatedBytes.engine.bytesWritten !== deflated.length) {
    throw new PoisonWorkItemError('the compressed work item holds bytes after its compressed stream');
  }
  const bytes = inflatedBytes.buffer;
  // toString would replace malformed UTF-8, changing the text; isUtf8 refuses it (natively).
  if (!isUtf8(bytes)) throw new PoisonWorkItemError('the compressed work item does not inflate to UTF-8 text');
  const text = bytes.toString('utf8');
  if (!text.startsWith(`{"v":${workItemVersion},`)) {
    throw new PoisonWorkItemError(`the compressed work item does not hold a version-${workItemVersion} item`);
  }
  return text;
}

/**
 * Bodies of the items {@link packWorkItems} returned (items are read-only, so a body stays right
 * for as long as its item lives).
 */
const packedBodies = new WeakMap<WorkItem, { readonly body: string; readonly bytes: number }>();

/**
 * Reads a work item from an SQS message body: a version-1 or version-2 body, or a compressed
 * version-2 body ({@link workItemMessageBody}).
 *
 * @throws PoisonWorkItemError when the body is too large, not JSON, or not a work item of those
 *   forms whose messages are all for its audience; when a compressed body is not base64, does not
 *   inflate (its checksum fails, or it inflates past 256 KiB), holds bytes after its stream, or is
 *   not UTF-8. The message names the attributes that are wrong and why, never their values.
 */
export function parseWorkItem(messageBody: string): WorkItem {
  // Each UTF-16 code unit is one to three UTF-8 bytes: count them only when the length cannot tell.
  const bytes =
    messageBody.length * 3 <= workItemMaxBytes ? messageBody.length : Buffer.byteLength(messageBody, 'utf8');
  if (bytes > workItemMaxBytes) {
    throw new PoisonWorkItemError(`the work item is ${bytes} bytes, more than the ${workItemMaxBytes} SQS allows`);
  }
  const body = messageBody.startsWith(deflatedPrefix) ? inflated(messageBody) : messageBody;
  const newline = body.indexOf('\n');
  const head = readJson(newline < 0 ? body : body.slice(0, newline));
  if (newline < 0 && isLegacy(head)) return checked(LegacyWorkItemSchema.safeParse(head)) as WorkItem;
  const parsed = checked(WorkItemHeadSchema.safeParse(head));
  if (newline < 0) throw new PoisonWorkItemError('the work item has no bodies after its head');
  let at = newline + 1;
  const messages: OutboundMessage[] = [];
  for (const [index, { bodyChars, bodyJson, ...attributes }] of parsed.messages.entries()) {
    if (at + bodyChars > body.length) {
      throw new PoisonWorkItemError(`messages[${index}]: its body is cut short (the bodies end before its length)`);
    }
    const text = body.slice(at, at + bodyChars);
    at += bodyChars;
    const messageBody = bodyJson === true ? readJsonString(text, index) : text;
    if (messageBody.length > limits.body) {
      throw new PoisonWorkItemError(`messages[${index}]: body must be at most ${limits.body} characters`);
    }
    messages.push({ ...attributes, body: messageBody } as OutboundMessage);
  }
  if (at !== body.length) {
    throw new PoisonWorkItemError(`the work item holds ${body.length - at} characters after its last body`);
  }
  const { v, dispatchId, itemId, audienceId, queuedAt } = parsed;
  return { v, dispatchId, itemId, audienceId, queuedAt, messages };
}

const isLegacy = (document: unknown): boolean =>
  typeof document === 'object' && document !== null && (document as { v?: unknown }).v === legacyVersion;

function readJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    // The SyntaxError is not passed on as the cause: V8 quotes the text around the fault, which
    // would put subscriber-facing links in the logs.
    throw new PoisonWorkItemError('the work item is not JSON');
  }
}

function readJsonString(text: string, index: number): string {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    value = undefined;
  }
  if (typeof value !== 'string') throw new PoisonWorkItemError(`messages[${index}]: its body is not a JSON string`);
  return value;
}

function checked<T>(parsed: { success: true; data: T } | { success: false; error: z.core.$ZodError }): T {
  if (!parsed.success) {
    throw new PoisonWorkItemError(
      `the work item is not one this publisher can read: ${describeProblems(parsed.error)}`,
    );
  }
  return parsed.data;
}

/** What {@link packWorkItems} made of the messages. */
export interface PackedWorkItems {
  /** One audience per item, messages in their original order, each body at most `maxBytes`. */
  readonly items: WorkItem[];
  /**
   * Messages that cannot travel in a work item (the caller reports them `MessageTooLarge`): alone
   * too large for one, or with an attribute longer than the format allows (an article key over
   * 8,192 characters, a subject over 1,024...) or not of its shape, which would make the whole
   * item poison. Rendered messages never break the format; the check keeps one that does from
   * taking its item's other messages to the dead-letter queue.
   */
  readonly tooLarge: OutboundMessage[];
}

/** Options of {@link packWorkItems}. */
export interface PackOptions {
  /** `queuedAt` of every item (epoch ms). */
  readonly now: number;
  /** Item id source; a random UUID by default. Tests pass their own to get predictable ids. */
  readonly newItemId?: () => string;
  /** Largest body (UTF-8 bytes); {@link workItemMaxBytes} by default. */
  readonly maxBytes?: number;
}

/**
 * Packs rendered notifications into as few work items as their sizes allow: messages are grouped
 * by audience (audiences in the order they first appear, messages in their order), and each
 * item takes messages until the next would push its body past `maxBytes`.
 */
export function packWorkItems(
  dispatchId: string,
  messages: readonly OutboundMessage[],
  options: PackOptions,
): PackedWorkItems {
  const maxBytes = options.maxBytes ?? workItemMaxBytes;
  const newItemId = options.newItemId ?? randomUUID;
  const byAudience = new Map<string, OutboundMessage[]>();
  for (const message of messages) {
    const group = byAudience.get(message.key.audienceId);
    if (group) group.push(message);
    else byAudience.set(message.key.audienceId, [message]);
  }

  const items: OpenItem[] = [];
  const tooLarge: OutboundMessage[] = [];
  for (const [audienceId, group] of byAudience) {
    let open: OpenItem | undefined;
    for (const message of group) {
      const plain = plainMessage(message);
      const body = bodyText(plain.body);
      const head = messageHead(plain, body);
      if (!MessageHeadSchema.safeParse(head).success || plain.body.length > limits.body) {
        // It would make its whole item poison: the reader refuses what the schema refuses.
        tooLarge.push(message);
        continue;
      }
      const json = serialize(head);
      const size = utf8(json) + body.bytes;
      if (open !== undefined && open.bytes + 1 + size <= maxBytes) {
        // `,` before every head but the first.
        open.item.messages.push(plain);
        open.parts.push(json);
        open.bodies.push(body.text);
        open.bytes += 1 + size;
        continue;
      }
      const itemId = newItemId();
      const prefix = headPrefix(dispatchId, itemId, audienceId, options.now);
      // The head ends `]}` and a newline.
      const bytes = utf8(prefix) + 3 + size;
      if (bytes > maxBytes) {
        tooLarge.push(message);
        continue;
      }
      open = {
        item: { v: workItemVersion, dispatchId, itemId, audienceId, queuedAt: options.now, messages: [plain] },
        prefix,
        parts: [json],
        bodies: [body.text],
        bytes,
      };
      items.push(open);
    }
  }
  return {
    items: items.map(({ item, prefix, parts, bodies, bytes }) => {
      // workItemBody gives exactly these characters (JSON.stringify is compositional).
      packedBodies.set(item, { body: `${prefix}${parts.join(',')}]}\n${bodies.join('')}`, bytes });
      return item;
    }),
    tooLarge,
  };
}

/** An item being filled: the serialized head and messages of its body, and the body's size so far. */
interface OpenItem {
  readonly item: WorkItem & { readonly messages: OutboundMessage[] };
  /** The head up to the messages' `[`. */
  readonly prefix: string;
  /** The messages' heads, serialized. */
  readonly parts: string[];
  /** The messages' bodies as they follow the head. */
  readonly bodies: string[];
  bytes: number;
}

/** The head of an item up to its messages' `[` (`v` first, as every version has it). */
const headPrefix = (dispatchId: string, itemId: string, audienceId: string, queuedAt: number): string =>
  serialize({ v: workItemVersion, dispatchId, itemId, audienceId, queuedAt, messages: [] }).slice(0, -2);

/** A body as it follows the head: raw, or as a JSON string when SQS would refuse it raw. */
interface BodyText {
  readonly text: string;
  readonly json: boolean;
  /** UTF-8 bytes of `text`. */
  readonly bytes: number;
}

/** Characters SQS refuses in a message body, but for lone surrogates (`isWellFormed` finds those). */
const REFUSED_BY_SQS = /[^\t\n\r\u0020-\uFFFD\u{10000}-\u{10FFFF}]/u;

function bodyText(body: string): BodyText {
  // String.prototype.isWellFormed (ES2024, Node 20): no lone surrogate.
  const wellFormed = (body as unknown as { isWellFormed(): boolean }).isWellFormed();
  const text = wellFormed && !REFUSED_BY_SQS.test(body) ? body : undefined;
  if (text !== undefined) return { text, json: false, bytes: utf8(text) };
  const json = serialize(body);
  return { text: json, json: true, bytes: utf8(json) };
}

/** A message's head: its attributes but the body, then the body's length (and form). */
const messageHead = (message: OutboundMessage, body: BodyText) => {
  const { body: _body, ...attributes } = message;
  return { ...attributes, bodyChars: body.text.length, ...(body.json ? { bodyJson: true as const } : {}) };
};

/**
 * A message with exactly the attributes a work item carries, whatever else the object held:
 * the reader refuses unknown attributes, so an extra one would turn a whole item into poison.
 */
function plainMessage(message: OutboundMessage): OutboundMessage {
  const facts = message.facts;
  return {
    key: { articleKey: message.key.articleKey, audienceId: message.key.audienceId },
    topicArn: message.topicArn,
    subject: message.subject,
    body: message.body,
    ruleIds: [...message.ruleIds],
    ...(facts === undefined
      ? {}
      : {
          facts: {
            ...(facts.storyId === undefined ? {} : { storyId: facts.storyId }),
            ...(facts.status === undefined ? {} : { status: facts.status }),
            ...(facts.titleHash === undefined ? {} : { titleHash: facts.titleHash }),
          },
        }),
  };
}

/**
 * JSON as SQS takes it: JSON.stringify already escapes controls and lone surrogates, but leaves
 * U+FFFE and U+FFFF as they are, and SQS refuses a body holding them. They can only occur inside
 * JSON strings here, where the escape reads back as the same character.
 */
const serialize = (value: unknown): string => {
  const json = JSON.stringify(value);
  // `includes` first: it is many times faster than the regex scan, and the escape is rarely needed.
  return json.includes('\uFFFE') || json.includes('\uFFFF')
    ? json.replace(/[\uFFFE\uFFFF]/g, (char) => `\\u${char.charCodeAt(0).toString(16)}`)
    : json;
};

const utf8 = (text: string): number => Buffer.byteLength(text, 'utf8');

/**
 * One `path: problem` per issue. Zod's own messages here never quote the input, and unknown
 * attributes are counted, not named: a forged body could put anything in an attribute name.
 */
function describeProblems(error: z.core.$ZodError): string {
  const problems = error.issues.map((issue) => {
    const path = issue.path
      .map((part, index) => (typeof part === 'number' ? `[${part}]` : index === 0 ? String(part) : `.${String(part)}`))
      .join('');
    const message = issue.code === 'unrecognized_keys' ? `${issue.keys.length} unknown attribute(s)` : issue.message;
    return path === '' ? message : `${path}: ${message}`;
  });
  // A list of a thousand broken messages says no more than its first few.
  const shown = problems.slice(0, 5);
  return problems.length > shown.length
    ? `${shown.join('; ')}; and ${problems.length - shown.length} more`
    : shown.join('; ');
}
