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
 */
import { Buffer } from 'node:buffer';
import { randomUUID } from 'node:crypto';
import * as z from 'zod/mini';
import { PoisonWorkItemError } from './errors.ts';
import { maxStoredStatusBytes } from './ledger-facts.ts';
import { AudienceSchema, RuleSchema } from './model.ts';
import { type OutboundMessage, type WorkItem, workItemMaxBytes } from './ports.ts';

/** The only work item format this code writes and reads. */
const workItemVersion = 1;

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

const WorkItemSchema = z
  .strictObject({
    v: z.literal(workItemVersion, {
      error: `v must be ${workItemVersion} (the work item format this publisher reads)`,
    }),
    dispatchId: nonEmptyString('dispatchId', limits.id),
    itemId: nonEmptyString('itemId', limits.id),
    audienceId: AudienceSchema.shape.audienceId,
    queuedAt: z
      .number({ error: 'queuedAt must be a number' })
      .check(
        z.int('queuedAt must be a whole number of epoch milliseconds'),
        z.nonnegative('queuedAt must not be negative'),
      ),
    messages: z
      .array(OutboundMessageSchema, { error: 'messages must be a list' })
      .check(z.minLength(1, 'messages must hold at least one message')),
  })
  .check(
    z.refine((item) => item.messages.every((message) => message.key.audienceId === item.audienceId), {
      error: "every message must be for the item's audience",
    }),
  );

/**
 * The SQS message body of a work item: JSON with a fixed key order, so its size is known before
 * it is written ({@link packWorkItems} measures with the same serialization, and keeps the bodies
 * it assembled, so an item it packed is not serialized a second time).
 */
export function workItemBody(item: WorkItem): string {
  return (
    packedBodies.get(item) ??
    serialize({
      v: item.v,
      dispatchId: item.dispatchId,
      itemId: item.itemId,
      audienceId: item.audienceId,
      queuedAt: item.queuedAt,
      messages: item.messages.map(plainMessage),
    })
  );
}

/**
 * Bodies of the items {@link packWorkItems} returned (items are read-only, so a body stays right
 * for as long as its item lives).
 */
const packedBodies = new WeakMap<WorkItem, string>();

/**
 * Reads a work item from an SQS message body.
 *
 * @throws PoisonWorkItemError when the body is too large, not JSON, or not a version-1 work item
 *   whose messages are all for its audience. The message names the attributes that are wrong and
 *   why, never their values.
 */
export function parseWorkItem(body: string): WorkItem {
  const bytes = Buffer.byteLength(body, 'utf8');
  if (bytes > workItemMaxBytes) {
    throw new PoisonWorkItemError(`the work item is ${bytes} bytes, more than the ${workItemMaxBytes} SQS allows`);
  }
  let document: unknown;
  try {
    document = JSON.parse(body);
  } catch {
    // The SyntaxError is not passed on as the cause: V8 quotes the text around the fault, which
    // would put subscriber-facing links in the logs.
    throw new PoisonWorkItemError('the work item is not JSON');
  }
  const parsed = WorkItemSchema.safeParse(document);
  if (!parsed.success) {
    throw new PoisonWorkItemError(
      `the work item is not one this publisher can read: ${describeProblems(parsed.error)}`,
    );
  }
  return parsed.data as WorkItem;
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
      if (!OutboundMessageSchema.safeParse(plain).success) {
        // It would make its whole item poison: the reader refuses what the schema refuses.
        tooLarge.push(message);
        continue;
      }
      const json = serialize(plain);
      const size = utf8(json);
      if (open !== undefined && open.bytes + 1 + size <= maxBytes) {
        // `,` before every message but the first.
        open.item.messages.push(plain);
        open.parts.push(json);
        open.bytes += 1 + size;
        continue;
      }
      const head = { v: workItemVersion, dispatchId, itemId: newItemId(), audienceId, queuedAt: options.now } as const;
      // An empty item's body ends `"messages":[]}`: the messages go between the brackets.
      const prefix = serialize({ ...head, messages: [] }).slice(0, -2);
      const bytes = utf8(prefix) + 2 + size;
      if (bytes > maxBytes) {
        tooLarge.push(message);
        continue;
      }
      open = { item: { ...head, messages: [plain] }, prefix, parts: [json], bytes };
      items.push(open);
    }
  }
  return {
    items: items.map(({ item, prefix, parts }) => {
      // JSON.stringify of the whole item gives exactly these characters (it is compositional).
      packedBodies.set(item, `${prefix}${parts.join(',')}]}`);
      return item;
    }),
    tooLarge,
  };
}

/** An item being filled: the serialized head and messages of its body, and the body's size so far. */
interface OpenItem {
  readonly item: WorkItem & { readonly messages: OutboundMessage[] };
  /** The body up to the messages' `[`. */
  readonly prefix: string;
  readonly parts: string[];
  bytes: number;
}

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
